/*
 * Scenario `checkpoint` (Sangwook Kim, Hwanju Kim, Joonwon Lee, Jinkyu
 * Jeong, "Enlightening the I/O Path: A Holistic Approach for Application
 * Performance", FAST 2017): a database's requests beside its background
 * checkpointing task. A static I/O priority fails because the high-priority
 * foreground waits for I/O that lower-priority contexts issued (the
 * journal's commit, buffers it is writing, the background's own writes);
 * their request-centric prioritization raises whatever a request waits on
 * and cut PostgreSQL's, MongoDB's and Redis's 99th-percentile request
 * latency from 3581 ms (Linux's default) to 84 ms.
 *
 * Two threads on one file system, under cfq, until the background has
 * written its checkpoints:
 *   - "db", the foreground at a high priority (fg_prio): every txn_period
 *     it appends a commit record of txn_kib to its log and fsyncs it (a
 *     transaction); its latency is the write and the fsync.
 *   - "ckpt", the background at a low priority (bg_prio): rewrites the
 *     database's data file of ckpt_mib in place through the page cache, in
 *     writes of ckpt_write_kib, and fsyncs it (PostgreSQL's checkpoint:
 *     dirty pages written into files that exist, then fsynced), ckpts
 *     times. In place, so that none of its pages is new: in the model's
 *     ext3 data=ordered a page a write allocates is ordered data that the
 *     next commit writes, which ext4's delayed allocation (the paper's)
 *     does not do (docs/lab.md).
 * Variants: the I/O priority of the journal's commit thread
 * (ujbd_opts.commit_ioprio): `be:4` and `rt:4` fixed, `inherit`
 * (UJBD_IOPRIO_INHERIT: ujbd's request-centric inheritance, which raises
 * the commit, shadowed and locked buffers' writes and queued requests to
 * the priority of the thread waiting on them). The threads' priorities
 * are the same in every variant.
 *
 * The one idea: the foreground's tail is taken apart by cause (the
 * journal's waits from its per-thread accumulator; the rest: its own data
 * writes, the write's throttling, CPU), over its slowest 1 %, so the
 * verdict says which wait decided it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/scen.h"

#define CK_KIB 1024u
#define CK_MIB (1024u * 1024u)

/* The priorities a thread of the scenario may be given (--checkpoint=
 * fg_prio=NAME): an index into ck_prio_names / ck_prio_vals. */
static const char *const ck_prio_names[] = { "rt:4", "be:0", "be:4", "be:7", "idle", NULL };
static const uint16_t ck_prio_vals[] = {
	RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4), RT_IOPRIO(RT_IOPRIO_CLASS_BE, 0),
	RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4), RT_IOPRIO(RT_IOPRIO_CLASS_BE, 7),
	RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0),
};
#define CK_NPRIO (sizeof(ck_prio_vals) / sizeof(ck_prio_vals[0]))

struct lab_ckpt_params {
	unsigned txn_kib;       /* the commit record a transaction appends */
	uint64_t txn_period_ns; /* a transaction every this often */
	unsigned ckpt_mib;      /* one checkpoint */
	unsigned ckpt_write_kib; /* the checkpointer's write size */
	unsigned ckpts;         /* checkpoints in the run */
	int fg_prio, bg_prio;   /* ck_prio_names indices */
};

#define CK_ROW(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct lab_ckpt_params, field, type, unit, scale, def, min, max, src, help)

static const struct rt_param ckpt_rows[] = {
	CK_ROW(txn_kib, RT_PARAM_UINT, "KiB", 0, 8, 1, 1024,
	       "PostgreSQL's WAL page (XLOG_BLCKSZ, 8 KiB): a small transaction's commit "
	       "record and what it flushes",
	       "bytes a transaction appends to the log before its fsync"),
	RT_PARAM_AS("txn_period_ms", struct lab_ckpt_params, txn_period_ns, RT_PARAM_U64, "ms", 1e6,
		    10, 1, 10000,
		    "assumption: one client's 100 transactions a second (the paper's clients "
		    "run closed loops; a late transaction starts at once, so overload closes "
		    "the loop)",
		    "a transaction starts every this often"),
	CK_ROW(ckpt_mib, RT_PARAM_UINT, "MiB", 0, 256, 1, 65536,
	       "assumption: a quarter of the model's 1 GiB of RAM, above its dirty limit "
	       "(20 %): the checkpointer is throttled and written back as it writes, as a "
	       "checkpoint of a database larger than the dirty limit is",
	       "the data file each checkpoint rewrites"),
	CK_ROW(ckpt_write_kib, RT_PARAM_UINT, "KiB", 0, 64, 4, 65536,
	       "assumption: a buffered writer's chunk (the rate is the disk's, not the "
	       "calls')",
	       "the checkpointer's write size"),
	CK_ROW(ckpts, RT_PARAM_UINT, "", 0, 4, 1, 100,
	       "assumption: back to back, enough for some 500 transactions, so the slowest "
	       "1 % are a handful (--quick: one of 32 MiB)",
	       "checkpoints in the run; the foreground runs until they are done"),
	RT_PARAM_ENUM_AS("fg_prio", struct lab_ckpt_params, fg_prio, ck_prio_names, CK_NPRIO, 1,
			 "the paper: request-handling tasks at a high priority; be:0 is the "
			 "best without privileges (ionice -c2 -n0, as atime's build)",
			 "the foreground's I/O priority"),
	RT_PARAM_ENUM_AS("bg_prio", struct lab_ckpt_params, bg_prio, ck_prio_names, CK_NPRIO, 3,
			 "the paper: background tasks (checkpointing) at a low priority; be:7 "
			 "is the lowest best-effort level (ionice -c2 -n7)",
			 "the checkpointer's I/O priority"),
};

const struct rt_param_table lab_ckpt_param_table =
	RT_PARAM_TABLE("checkpoint", "the checkpoint scenario's transactions and checkpoints",
		       ckpt_rows, struct lab_ckpt_params);

/* ---- the foreground: append a record, fsync ------------------------------ */

/* One transaction: its number, its time, its time in write() and its
 * journal waits. */
struct ck_op {
	size_t n;
	double ms, write_ms;
	double cause_ms[UJBD_LAT_NR];
};

struct ck_db {
	struct fs *fs;
	const struct lab_ckpt_params *p;
	atomic_bool *stop;
	/* out */
	struct rt_hist lat;
	struct lab_fg_causes causes;
	struct ck_op *ops;
	size_t nops, cap;
	double write_ms_total, write_ms_max;
	int rc;
};

static int ck_db_note(struct ck_db *d, const struct ck_op *op)
{
	if (d->nops == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct ck_op *n = realloc(d->ops, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->ops = n;
		d->cap = cap;
	}
	d->ops[d->nops] = *op;
	d->ops[d->nops].n = d->nops;
	d->nops++;
	return 0;
}

static void ck_db_thread(void *arg)
{
	struct ck_db *d = arg;
	uint32_t rec = d->p->txn_kib * CK_KIB;
	struct ujbd_lat_acct acc, before;
	uint64_t next = rt_now_ns(), off = 0;
	fs_ino_t ino;
	int rc;

	memset(&acc, 0, sizeof(acc));
	rt_ioprio_set(ck_prio_vals[d->p->fg_prio]);
	ujbd_lat_attach(&acc);
	rc = fs_lookup(d->fs, "/db/log", &ino);
	while (!rc && !atomic_load(d->stop)) {
		struct ck_op op = { 0 };
		uint64_t t0 = rt_now_ns(), t1;

		before = acc;
		rc = fs_write(d->fs, ino, off, rec, 0);
		t1 = rt_now_ns();
		rc = rc ? rc : fs_fsync(d->fs, ino);
		if (rc)
			break;
		off += rec;
		op.ms = (double)(rt_now_ns() - t0) / 1e6;
		op.write_ms = (double)(t1 - t0) / 1e6;
		for (int c = 0; c < UJBD_LAT_NR; c++)
			op.cause_ms[c] = (double)(acc.sum_ns[c] - before.sum_ns[c]) / 1e6;
		rt_hist_add(&d->lat, rt_now_ns() - t0);
		lab_fg_causes_add(&d->causes, &before, &acc, op.ms);
		d->write_ms_total += op.write_ms;
		if (op.write_ms > d->write_ms_max)
			d->write_ms_max = op.write_ms;
		rc = ck_db_note(d, &op);
		next += d->p->txn_period_ns;
		if (next > rt_now_ns())
			rt_sleep_until(next);
		else
			next = rt_now_ns(); /* late: the next one starts now */
	}
	ujbd_lat_attach(NULL);
	d->rc = rc;
}

/* ---- the background: rewrite the data file, fsync ----------------------- */

struct ck_bg {
	struct fs *fs;
	const struct lab_ckpt_params *p;
	atomic_bool *stop;   /* set when done (or failed) */
	/* out */
	uint64_t bytes, ns, done;
	double fsync_ms_max;
	int rc;
};

static int ck_one(struct ck_bg *b, fs_ino_t ino)
{
	uint64_t size = (uint64_t)b->p->ckpt_mib * CK_MIB, chunk = b->p->ckpt_write_kib * CK_KIB;
	int rc = 0;

	for (uint64_t off = 0; !rc && off < size; off += chunk)
		rc = fs_write(b->fs, ino, off, size - off < chunk ? size - off : chunk, 0);
	if (!rc) {
		uint64_t t0 = rt_now_ns();
		double ms;

		rc = fs_fsync(b->fs, ino);
		ms = (double)(rt_now_ns() - t0) / 1e6;
		if (ms > b->fsync_ms_max)
			b->fsync_ms_max = ms;
	}
	if (!rc) {
		b->bytes += size;
		b->done++;
	}
	return rc;
}

static void ck_bg_thread(void *arg)
{
	struct ck_bg *b = arg;
	uint64_t t0 = rt_now_ns();
	fs_ino_t ino;
	int rc;

	rt_ioprio_set(ck_prio_vals[b->p->bg_prio]);
	rc = fs_lookup(b->fs, "/ckpt/data", &ino);
	for (unsigned i = 0; i < b->p->ckpts && !rc; i++)
		rc = ck_one(b, ino);
	b->ns = rt_now_ns() - t0;
	b->rc = rc;
	atomic_store(b->stop, true);
}

/* ---- the run ------------------------------------------------------------- */

struct ck_run {
	struct lab_ckpt_params p;
	struct lab_result *out;
	struct lab_qwatch w;   /* the queue during the measurement: cache flushes */
};

static int ck_cmp_ms(const void *a, const void *b)
{
	const struct ck_op *x = a, *y = b;

	/* slowest first; ties in order, whatever the qsort */
	if (x->ms != y->ms)
		return x->ms < y->ms ? 1 : -1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/*
 * The slowest 1 % of the transactions (at least one), by cause: the
 * journal's waits, the time in write() (throttling, a handle's waits are
 * counted by cause too) and the rest (the fsync's own data writes, CPU).
 */
static int ck_tail_report(struct ck_db *d, struct lab_result *r)
{
	double sum[UJBD_LAT_NR] = { 0 }, total = 0, write = 0, waited = 0;
	size_t n = d->nops ? (d->nops + 99) / 100 : 0;
	char name[64];
	int rc;

	qsort(d->ops, d->nops, sizeof(*d->ops), ck_cmp_ms);
	for (size_t i = 0; i < n; i++) {
		total += d->ops[i].ms;
		write += d->ops[i].write_ms;
		for (int c = 0; c < UJBD_LAT_NR; c++)
			sum[c] += d->ops[i].cause_ms[c];
	}
	rc = lab_result_metric(r, "fg_tail_ops", (double)n);
	rc = rc ? rc : lab_result_metric(r, "fg_tail_ms_total", total);
	for (int c = 0; c < UJBD_LAT_NR && !rc; c++) {
		if (!lab_fg_cause_name(c))
			continue;
		waited += sum[c];
		snprintf(name, sizeof(name), "fg_tail_%s_ms", lab_fg_cause_name(c));
		rc = lab_result_metric(r, name, sum[c]);
	}
	rc = rc ? rc : lab_result_metric(r, "fg_tail_write_ms", write);
	return rc ? rc : lab_result_metric(r, "fg_tail_other_ms", total > waited ? total - waited : 0);
}

/* The commits' phases since base: ordered data, log writes; inherit's raises. */
static int ck_journal_report(struct ujbd *j, const struct ujbd_stats *a, struct lab_result *r)
{
	struct ujbd_stats b;
	double n;
	int rc = ujbd_stats(j, &b);

	if (rc)
		return rc;
	n = (double)(b.ts_tid - a->ts_tid);
	n = n > 0 ? n : 1;
	rc = lab_result_metric(r, "flushing_ms_avg", (double)(b.rs_flushing_ns - a->rs_flushing_ns) / n / 1e6);
	rc = rc ? rc : lab_result_metric(r, "logging_ms_avg",
					  (double)(b.rs_logging_ns - a->rs_logging_ns) / n / 1e6);
	rc = rc ? rc : lab_result_metric(r, "locked_ms_avg",
					  (double)(b.rs_locked_ns - a->rs_locked_ns) / n / 1e6);
	rc = rc ? rc : lab_result_metric(r, "inherit_boosts",
					  (double)(b.inherit_boosts - a->inherit_boosts));
	return rc ? rc : lab_result_metric(r, "boosted_rqs", (double)(b.boosted_rqs - a->boosted_rqs));
}

static int ck_pair(struct ck_db *d, struct ck_bg *b)
{
	rt_thread *td = NULL, *tb = NULL;
	int rc = rt_thread_create(&tb, "ckpt", ck_bg_thread, b);

	if (!rc)
		rc = rt_thread_create(&td, "db", ck_db_thread, d);
	if (rc)
		atomic_store(b->stop, true);
	if (tb)
		rt_thread_join(tb);
	if (td)
		rt_thread_join(td);
	return rc ? rc : b->rc ? b->rc : d->rc;
}

static int ck_fn(struct lab_rig *r, void *arg)
{
	struct ck_run *a = arg;
	atomic_bool stop;
	struct ck_db d = { .fs = r->r_fs, .p = &a->p, .stop = &stop };
	struct ck_bg b = { .fs = r->r_fs, .p = &a->p, .stop = &stop };
	struct ujbd_stats base;
	struct blk_queue_stats qbase;
	fs_ino_t ino;
	int rc;

	atomic_init(&stop, false);
	rt_hist_init(&d.lat);
	rc = fs_mkdir(r->r_fs, "/db");
	rc = rc ? rc : fs_mkdir(r->r_fs, "/ckpt");
	rc = rc ? rc : fs_create(r->r_fs, "/db/log", &ino);
	/* the database's data file, which each checkpoint rewrites in place */
	rc = rc ? rc : fs_create(r->r_fs, "/ckpt/data", &ino);
	for (uint64_t off = 0; !rc && off < (uint64_t)a->p.ckpt_mib * CK_MIB; off += CK_MIB)
		rc = fs_write(r->r_fs, ino, off, CK_MIB, 0);
	/* the measurement starts from a quiet disk, the data file cached */
	rc = rc ? rc : lab_rig_settle(r);
	rc = rc ? rc : ujbd_stats(r->r_j, &base);
	blk_queue_stats(r->r_q, &qbase);
	atomic_store(&a->w.on, true);
	rc = rc ? rc : ck_pair(&d, &b);
	atomic_store(&a->w.on, false);
	rc = rc ? rc : lab_fg_report(&d.lat, &d.causes, a->out);
	rc = rc ? rc : lab_result_metric(a->out, "fg_txn_s",
					 b.ns ? (double)d.lat.h_count / ((double)b.ns / 1e9) : 0);
	rc = rc ? rc : ck_tail_report(&d, a->out);
	rc = rc ? rc : lab_result_metric(a->out, "fg_write_ms_total", d.write_ms_total);
	rc = rc ? rc : lab_result_metric(a->out, "fg_write_ms_max", d.write_ms_max);
	rc = rc ? rc : lab_result_metric(a->out, "bg_mb_s",
					 b.ns ? (double)b.bytes / 1e6 / ((double)b.ns / 1e9) : 0);
	rc = rc ? rc : lab_result_metric(a->out, "bg_s", (double)b.ns / 1e9);
	rc = rc ? rc : lab_result_metric(a->out, "bg_fsync_ms_max", b.fsync_ms_max);
	rc = rc ? rc : lab_result_metric(a->out, "checkpoints", (double)b.done);
	rc = rc ? rc : lab_report_journal(r->r_j, &base, a->out);
	rc = rc ? rc : ck_journal_report(r->r_j, &base, a->out);
	rc = rc ? rc : lab_report_idle(r->r_q, &qbase, a->out);
	rc = rc ? rc : lab_result_metric(a->out, "flushes", (double)a->w.flushes);
	rc = rc ? rc : lab_result_metric(a->out, "flush_ms_avg",
					 a->w.flushes ? (double)a->w.flush_sum_ns / (double)a->w.flushes / 1e6 : 0);
	rc = rc ? rc : lab_result_metric(a->out, "flush_ms_max", (double)a->w.flush_max_ns / 1e6);
	free(d.ops);
	return rc;
}

/*
 * The era (the paper's Linux 3.13, ext4 data=ordered, cfq): jbd2 with
 * barriers (lab_rig_spec_init) and 3.11's waits (wait-io, the buffer lock,
 * the writeback: lab_era_today). 3.13's jbd2 wrote every journal block
 * WRITE_SYNC, the commit block WRITE_SYNC | WRITE_FLUSH_FUA, none of them
 * REQ_META (that came in 6.8: Zhang Yi, "jbd2: increase the journal IOs
 * priority"), and WRITE_SYNC carried REQ_NOIDLE (2.6.30 to 4.9), as did
 * fsync's data writes (WB_SYNC_ALL); dirty 20/10 (2.6.29 on), relatime
 * (2.6.30 on), today's mke2fs. The variant sets only the commit thread's
 * priority.
 */
static int ck_variant(const char *v, struct lab_rig_spec *rs)
{
	lab_era_today(rs);
	lab_era_2009(rs);
	rs->jopts.journal_sync = UJBD_SYNC_ALL;
	rs->jopts.journal_noidle = true;
	rs->fsp.fsync_noidle = true;
	rs->fsp.atime = FS_ATIME_RELATIME;
	return lab_variant_ioprio(v, &rs->jopts.commit_ioprio);
}

static const char *const ck_variants[] = { "be:4", "rt:4", "inherit", NULL };

static int ck_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct ck_run a = { .out = out };
	struct lab_rig_spec rs;
	char err[160];
	int rc;

	memset(&a.w, 0, sizeof(a.w));

	rt_param_defaults(&lab_ckpt_param_table, &a.p);
	if (lab_ctx_quick(c)) {
		a.p.ckpt_mib = 32;
		a.p.ckpts = 1;
	}
	rc = rt_param_parse(&lab_ckpt_param_table, &a.p, lab_ctx_params(c, "checkpoint"), err,
			    sizeof(err));
	if (rc)
		return rc;
	lab_rig_spec_init(&rs);
	rc = ck_variant(variant, &rs);
	if (rc)
		return rc;
	rs.trace_fn = lab_qwatch_fn;
	rs.trace_arg = &a.w;
	lab_progress(c, "checkpoint %s: %u KiB fsynced every %.0f ms beside %u checkpoints of %u MiB",
		     variant, a.p.txn_kib, (double)a.p.txn_period_ns / 1e6, a.p.ckpts, a.p.ckpt_mib);
	return lab_rig_run(c, &rs, ck_fn, &a);
}

/* The cause that took most of the tail's time in r, and its ms. */
static const char *ck_tail_cause(const struct lab_result *r, double *ms)
{
	static const char *const names[] = { "commit", "transaction", "log_space", "buffer",
					     "lock_writeback", "lock_checkpoint", "lock_read" };
	static const char *const words[] = {
		"commits", "a locked transaction", "log space", "buffers being logged",
		"buffers under writeback", "buffers being checkpointed", "buffers being read",
	};
	const char *best = "the rest (its own data writes, CPU, write()'s throttling)";
	char key[64];

	*ms = lab_result_get(r, "fg_tail_other_ms");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(key, sizeof(key), "fg_tail_%s_ms", names[i]);
		double v = lab_result_get(r, key);

		if (isfinite(v) && v > *ms) {
			*ms = v;
			best = words[i];
		}
	}
	return best;
}

/* "the slowest 1 % (N transactions, T ms) waited C ms on commits, ..." */
static void ck_why(const struct lab_result *r, const char *variant, char *buf, size_t n)
{
	double top;
	const char *cause = ck_tail_cause(r, &top);

	snprintf(buf, n, "%s's slowest 1 %% (%.0f transactions, %.0f ms) went most to %s (%.0f ms): "
		 "commits %.0f, a locked transaction %.0f, buffers %.0f, the rest %.0f (of it "
		 "write(), throttled behind the checkpoint's dirty pages, %.0f); a commit: ordered "
		 "data %.0f ms, logging %.0f ms, of which the drive's cache flush %.0f ms (averages)",
		 variant, lab_result_get(r, "fg_tail_ops"), lab_result_get(r, "fg_tail_ms_total"),
		 cause, top, lab_result_get(r, "fg_tail_commit_ms"),
		 lab_result_get(r, "fg_tail_transaction_ms"),
		 lab_result_get(r, "fg_tail_buffer_ms") + lab_result_get(r, "fg_tail_lock_writeback_ms") +
			 lab_result_get(r, "fg_tail_lock_checkpoint_ms") +
			 lab_result_get(r, "fg_tail_lock_read_ms"),
		 lab_result_get(r, "fg_tail_other_ms"), lab_result_get(r, "fg_tail_write_ms"),
		 lab_result_get(r, "flushing_ms_avg"), lab_result_get(r, "logging_ms_avg"),
		 lab_result_get(r, "flush_ms_avg"));
}

static void ck_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	char lab[224], why[512];

	if (r[0] && r[2]) {
		double be = lab_result_get(r[0], "fg_latency_ms_p99");
		double in = lab_result_get(r[2], "fg_latency_ms_p99");
		double ratio = lab_ratio(be, in);

		snprintf(lab, sizeof(lab), "p99 %.0f ms (be:4) vs %.0f ms (inherit); max %.0f vs %.0f ms",
			 be, in, lab_result_get(r[0], "fg_latency_ms_max"),
			 lab_result_get(r[2], "fg_latency_ms_max"));
		ck_why(r[0], "be:4", why, sizeof(why));
		lab_summary_row(out, "fg p99 be:4 / inherit",
				"3581 -> 84 ms (42x), Linux's default vs request-centric", lab, ratio,
				">= 2x", isfinite(ratio) && ratio >= 2, why);
	}
	if (r[0] && r[1] && r[2]) {
		double be = lab_result_get(r[0], "fg_latency_ms_p99");
		double rt = lab_result_get(r[1], "fg_latency_ms_p99");
		double in = lab_result_get(r[2], "fg_latency_ms_p99");
		bool rt_best = rt < be;
		double best = rt_best ? rt : be, ratio = lab_ratio(in, best);
		double bbe = lab_result_get(r[0], "bg_mb_s"), bin = lab_result_get(r[2], "bg_mb_s");
		double br = lab_ratio(bin, bbe);
		bool met = isfinite(ratio) && ratio <= 1.2 && isfinite(br) && fabs(br - 1) <= 0.1;
		size_t w;

		snprintf(lab, sizeof(lab), "p99 %.0f ms (inherit) vs %.0f (%s); max %.0f vs %.0f; "
			 "background %.1f vs %.1f MB/s (be:4), rt:4 %.1f",
			 in, best, rt_best ? "rt:4" : "be:4", lab_result_get(r[2], "fg_latency_ms_max"),
			 lab_result_get(r[rt_best ? 1 : 0], "fg_latency_ms_max"), bin, bbe,
			 lab_result_get(r[1], "bg_mb_s"));
		ck_why(r[2], "inherit", why, sizeof(why));
		w = strlen(why);
		snprintf(why + w, sizeof(why) - w, "; %.0f raises%s", lab_result_get(r[2], "inherit_boosts"),
			 lab_ratio(be, rt) < 1.05 && lab_ratio(be, rt) > 1 / 1.05
				 ? "; be:4 and rt:4 within 5 %: no inversion for a priority to cure"
				 : "");
		lab_summary_row(out, "fg p99 inherit / better fixed", "(the lab's proposal)", lab, ratio,
				"<= 1.2x, background within 10 % of be:4", met, why);
	}
}

const struct lab_scenario lab_scen_checkpoint = {
	.s_name = "checkpoint",
	.s_thread = &lab_thread_checkpoint,
	.s_help = "fsynced transactions beside a background checkpoint, under cfq: commit priority",
	.s_variants = ck_variants,
	.s_real = "the same threads in real time (--quick: one checkpoint of 32 MiB), each thread's "
		  "ioprio and the commit's on each request to the kernel",
	.s_run = ck_run,
	.s_summary = ck_summary,
};

/*
 * The lab's workload pieces: the scenarios' stack (lab_rig), trees of files,
 * the tree-copy loop and the foreground reader of the 2007 atime thread.
 *
 * The one idea: each workload is a thread body over a struct it owns, run
 * until a virtual stop time; the scenario starts threads, joins them and
 * turns their structs into metrics. Nothing here knows a variant.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/jtrace.h"
#include "lab/real.h"
#include "lab/rig.h"
#include "priv/rt.h"

/* ---- the rig ---------------------------------------------------------------- */

void lab_rig_spec_init(struct lab_rig_spec *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->elevator = "cfq";
	/* The era's journal: every fsync's commit by kjournald, ordered data
	 * home before the commit block, no async commit (ujbd's own defaults
	 * differ there: docs/runtime.md). */
	ujbd_opts_jbd2(&rs->jopts);
	fs_params_default(&rs->fsp);
	/* The buffer cache is the page cache of the era: metadata blocks stay
	 * cached up to the RAM (the fs model's ram_bytes), as in 2.6.2x where
	 * buffer heads live in the block device's page cache. */
	rs->jopts.cache_blocks = rs->fsp.ram_bytes / 4096;
	/* Every thread's kernel (2.6.23 and after) shared its CPUs by CFS
	 * with the default tunables: tasks, kjournald and pdflush wait for a
	 * CPU, j_state_lock spins (the "cpu" group's defaults) */
	rt_param_defaults(&lab_cpu_param_table, &rs->sched);
}

/* The scenario's list, then the user's (later values win). */
static int rig_group(struct stack_spec *sp, const struct lab_ctx *c, const char *group,
		     const char *own, char *err, size_t n)
{
	const char *user = lab_ctx_params(c, group);
	int rc = 0;

	if (own && *own)
		rc = stack_spec_set_group(sp, group, own, err, n);
	if (!rc && user && *user)
		rc = stack_spec_set_group(sp, group, user, err, n);
	return rc;
}

/* The disk's size in bytes: its model's default with the scenario's and
 * the user's lists applied; a real file's (lab_real_disk_bytes). */
static int rig_disk_bytes(const struct lab_ctx *c, const char *model, const char *own,
			  uint64_t *bytes, char *err, size_t n)
{
	const struct dev_model *m = dev_model_find(model);
	const char *user = lab_ctx_params(c, model);
	void *p;
	int rc;

	if (strncmp(model, "file:", 5) == 0) {
		rc = lab_real_disk_bytes(model + 5, bytes);
		if (rc)
			snprintf(err, n, "%s: %s", model, strerror(-rc));
		return rc;
	}
	*bytes = 256ull << 20;
	if (!m)
		return 0;
	p = calloc(1, m->m_params->t_size);
	if (!p)
		return -ENOMEM;
	m->m_defaults(p);
	rc = rt_param_parse(m->m_params, p, own ? own : "", err, n);
	if (!rc)
		rc = rt_param_parse(m->m_params, p, user ? user : "", err, n);
	if (!rc)
		memcpy(bytes, (const char *)p + m->m_size_offset, sizeof(*bytes));
	free(p);
	return rc;
}

/*
 * Where things lie on the one disk: the file system over all of it (or its
 * fs_blocks), and inside it the journal where mke2fs put it (ext3's
 * internal journal: its blocks are the file system's, skipping the groups'
 * metadata), on the same spindle, so the commit's writes seek against the
 * data's.
 */
static int rig_layout(const struct lab_ctx *c, const struct lab_rig_spec *rs, const char *model,
		      struct stack_spec *sp, char *err, size_t n)
{
	uint64_t bytes;
	size_t nmap = 0;
	int rc = rig_disk_bytes(c, model, rs->disk_params, &bytes, err, n);

	if (rc)
		return rc;
	rc = fs_journal_map(&rs->fsp, bytes / 4096, sp->journal_map, STACK_MAX_JEXT, &nmap);
	if (rc) {
		snprintf(err, n, "%s: %llu bytes: no room for the file system and its journal "
			 "(fs journal_blocks=%u)", model, (unsigned long long)bytes,
			 rs->fsp.journal_blocks);
		return -EINVAL;
	}
	sp->journal_nmap = (unsigned)nmap;
	if (strncmp(model, "file:", 5) == 0)
		sp->disks[0].size = bytes; /* a missing or empty file is created at it */
	return 0;
}

/* The queue's trace events to the timeline, then to the scenario's own trace_fn. */
struct rig_trace {
	struct lab_timeline *t_tl;
	blk_trace_fn t_fn;
	void *t_arg;
};

static void rig_trace_fn(void *arg, const struct blk_trace_event *ev)
{
	struct rig_trace *t = arg;

	lab_tl_blk(t->t_tl, ev);
	if (t->t_fn)
		t->t_fn(t->t_arg, ev);
}

static int rig_spec(const struct lab_ctx *c, const struct lab_rig_spec *rs,
		    struct rig_trace *tr, struct stack_spec *sp, char *err, size_t n)
{
	const char *model = rs->disk_model ? rs->disk_model : lab_ctx_disk(c);
	int rc;

	stack_spec_default(sp);
	sp->world = lab_ctx_world(c);
	sp->seed = lab_ctx_seed(c);
	sp->ncpus = rs->ncpus;
	sp->sched = rs->sched;
	sp->ndisks = 1;
	sp->disks[0].model = model;
	sp->queues[0].elevator = rs->elevator;
	sp->queues[0].trace = rs->trace;
	sp->queues[0].trace_fn = rs->trace_fn;
	sp->queues[0].trace_arg = rs->trace_arg;
	if (tr->t_tl) {
		tr->t_fn = rs->trace_fn;
		tr->t_arg = rs->trace_arg;
		sp->queues[0].trace_fn = rig_trace_fn;
		sp->queues[0].trace_arg = tr;
	}
	sp->journal = true;
	sp->jopts = rs->jopts;
	sp->jopts.format = true;
	rc = rig_layout(c, rs, model, sp, err, n);
	if (strncmp(model, "file:", 5) == 0)
		rc = rc ? rc : rig_group(sp, c, "file", LAB_REAL_FILE_PARAMS, err, n);
	else
		rc = rc ? rc : rig_group(sp, c, model, rs->disk_params, err, n);
	if (!rc)
		rc = rig_group(sp, c, rs->elevator, rs->elevator_params, err, n);
	if (!rc)
		rc = rig_group(sp, c, "queue", rs->queue_params, err, n);
	return rc;
}

/* Everything committed, written home and out of the drive's cache (as
 * mke2fs ends with an fsync of the device, and a benchmark starts from an
 * idle disk): with barrier=0 the journal itself never flushes, and a
 * full cache would otherwise still be destaging the setup's writes when
 * the measurement starts. */
static int rig_quiesce(struct lab_rig *r)
{
	int rc = ujbd_sync(r->r_j);

	rc = rc ? rc : ujbd_checkpoint(r->r_j);
	return rc ? rc : blk_flush(r->r_q);
}

static int rig_main(struct stack *s, void *arg)
{
	struct lab_rig *r = arg;
	int rc, urc;

	r->r_stack = s;
	r->r_j = stack_journal(s);
	r->r_q = stack_queue(s, 0);
	rc = fs_mkfs(r->r_j, r->r_q, &r->r_fsp);
	if (!rc) /* mkfs's bitmaps go home now, not during the measurement */
		rc = rig_quiesce(r);
	if (!rc)
		rc = fs_mount(r->r_j, r->r_q, &r->r_fsp, &r->r_fs);
	if (rc)
		return rc;
	if (r->r_tl) /* the commit's events only: handles keep their path */
		jbd_set_commit_hook(r->r_j, lab_tl_jbd, r->r_tl);
	rc = r->r_fn(r, r->r_arg);
	lab_tl_stop(r->r_tl);
	urc = r->r_fs ? fs_unmount(r->r_fs) : 0;
	r->r_fs = NULL;
	return rc ? rc : urc;
}

int lab_rig_run(const struct lab_ctx *c, struct lab_rig_spec *rs,
		int (*fn)(struct lab_rig *r, void *arg), void *arg)
{
	struct stack_spec sp;
	struct stack *s = NULL;
	struct lab_rig r = { .r_ctx = c, .r_fn = fn, .r_arg = arg, .r_fsp = rs->fsp };
	struct rig_trace tr = { NULL, NULL, NULL };
	char err[256];
	int rc;

	err[0] = '\0';
	if (rs->timeline && (rc = lab_tl_new(&r.r_tl)))
		return rc;
	tr.t_tl = r.r_tl;
	rc = rt_param_parse(&fs_param_table, &r.r_fsp, lab_ctx_params(c, "fs"), err,
			    sizeof(err));
	rs->fsp = r.r_fsp;
	if (!rc) /* the user's journal options over the scenario's */
		rc = rt_param_parse(&lab_jbd_param_table, &rs->jopts, lab_ctx_params(c, "jbd"), err,
				    sizeof(err));
	if (!rc) /* and the user's CPU model over the scenario's */
		rc = rt_param_parse(&lab_cpu_param_table, &rs->sched, lab_ctx_params(c, "cpu"), err,
				    sizeof(err));
	if (!rc)
		rc = rig_spec(c, rs, &tr, &sp, err, sizeof(err));
	if (!rc)
		rc = stack_new(&sp, &s, err, sizeof(err));
	if (!rc) {
		rc = stack_run(s, "lab", rig_main, &r);
		if (rc)
			snprintf(err, sizeof(err), "%s", stack_error(s));
	}
	if (rc && err[0])
		lab_fail_why("%s", err);
	stack_free(s);
	if (!rc && r.r_tl)
		rc = lab_tl_report(r.r_tl, rs->timeline);
	lab_tl_free(r.r_tl);
	return rc;
}

int lab_rig_remount(struct lab_rig *r)
{
	int rc = fs_unmount(r->r_fs);

	r->r_fs = NULL;
	if (!rc) /* the setup's metadata goes home before the measurement */
		rc = rig_quiesce(r);
	if (!rc)
		rc = fs_mount(r->r_j, r->r_q, &r->r_fsp, &r->r_fs);
	return rc;
}

int lab_rig_settle(struct lab_rig *r)
{
	return rig_quiesce(r);
}

/* ---- trees ------------------------------------------------------------------- */

int lab_tree_init(struct lab_tree *t, const char *root, unsigned files, unsigned per_dir,
		  unsigned min_kib, unsigned max_kib, uint64_t seed)
{
	struct rt_prng p;
	unsigned steps = (max_kib - min_kib) / 4 + 1;

	memset(t, 0, sizeof(*t));
	if (!files || !per_dir || min_kib < 4 || max_kib < min_kib ||
	    strlen(root) >= sizeof(t->t_root))
		return -EINVAL;
	t->t_size = calloc(files, sizeof(*t->t_size));
	if (!t->t_size)
		return -ENOMEM;
	snprintf(t->t_root, sizeof(t->t_root), "%s", root);
	t->t_files = files;
	t->t_per_dir = per_dir;
	rt_prng_init(&p, seed);
	for (unsigned i = 0; i < files; i++) {
		t->t_size[i] = (uint32_t)(min_kib + 4 * rt_prng_below(&p, steps)) * 1024u;
		t->t_bytes += t->t_size[i];
	}
	return 0;
}

void lab_tree_release(struct lab_tree *t)
{
	free(t->t_size);
	memset(t, 0, sizeof(*t));
}

void lab_tree_path(const struct lab_tree *t, const char *root, unsigned i, char *buf, size_t n)
{
	snprintf(buf, n, "%s/d%03u/f%04u", root ? root : t->t_root, i / t->t_per_dir, i);
}

static void tree_dir(const struct lab_tree *t, const char *root, unsigned d, char *buf, size_t n)
{
	snprintf(buf, n, "%s/d%03u", root ? root : t->t_root, d);
}

/* mkdir root and, when file i starts a directory, that directory. */
static int tree_mkdirs(struct fs *fs, const struct lab_tree *t, const char *root, unsigned i)
{
	char path[96];
	int rc = 0;

	if (i == 0)
		rc = fs_mkdir(fs, root);
	if (!rc && i % t->t_per_dir == 0) {
		tree_dir(t, root, i / t->t_per_dir, path, sizeof(path));
		rc = fs_mkdir(fs, path);
	}
	return rc == -EEXIST ? 0 : rc;
}

int lab_tree_make(struct fs *fs, const struct lab_tree *t)
{
	char path[96];
	fs_ino_t ino;
	int rc = 0;

	for (unsigned i = 0; i < t->t_files && !rc; i++) {
		rc = tree_mkdirs(fs, t, t->t_root, i);
		lab_tree_path(t, NULL, i, path, sizeof(path));
		if (!rc)
			rc = fs_create(fs, path, &ino);
		if (!rc)
			rc = fs_write(fs, ino, 0, t->t_size[i], 0);
	}
	return rc;
}

int lab_tree_read(struct fs *fs, const struct lab_tree *t, struct lab_timeline *tl, unsigned kind)
{
	char path[96];
	fs_ino_t ino;
	int rc = 0;

	for (unsigned i = 0; i < t->t_files && !rc; i++) {
		uint64_t t0 = rt_now_ns();

		lab_tree_path(t, NULL, i, path, sizeof(path));
		rc = fs_lookup(fs, path, &ino);
		for (uint64_t off = 0; !rc && off < t->t_size[i]; off += 64 * 1024) {
			int64_t n = fs_read(fs, ino, off, 64 * 1024, 0);

			rc = n < 0 ? (int)n : 0;
		}
		if (!rc)
			lab_tl_op(tl, kind, t0);
	}
	return rc;
}

int lab_tree_remove(struct fs *fs, const struct lab_tree *t, const char *root)
{
	unsigned dirs = (t->t_files + t->t_per_dir - 1) / t->t_per_dir;
	char path[96];
	int rc = 0;

	for (unsigned i = 0; i < t->t_files && !rc; i++) {
		lab_tree_path(t, root, i, path, sizeof(path));
		rc = fs_unlink(fs, path);
		rc = rc == -ENOENT ? 0 : rc;
	}
	for (unsigned d = 0; d < dirs && !rc; d++) {
		tree_dir(t, root, d, path, sizeof(path));
		rc = fs_unlink(fs, path);
		rc = rc == -ENOENT ? 0 : rc;
	}
	if (!rc)
		rc = fs_unlink(fs, root);
	return rc == -ENOENT ? 0 : rc;
}

/* ---- the copy loop ---------------------------------------------------------- */

/* cp's copy through its user buffer, 2 x memcpy per byte at ~2.5 GB/s:
 * STREAM "Copy" on a 2007 Core 2 desktop with DDR2-800 is 3-5 GB/s
 * (McCalpin's STREAM results table); 800 ps a byte. */
#define LAB_CP_PS_PER_BYTE 800ull
#define COPY_CHUNK (64u * 1024u) /* cp's buffer of the era: st_blksize-sized reads; 64 KiB files fit one */

static bool copier_done(const struct lab_copier *k)
{
	return rt_now_ns() >= k->until_ns || (k->stop && atomic_load(k->stop));
}

/* Copy file i of src to root; counts what it copied. */
static int copy_file(struct lab_copier *k, const char *root, unsigned i)
{
	char from[96], to[96];
	fs_ino_t si, di;
	uint64_t size = k->src->t_size[i];
	int rc;

	lab_tree_path(k->src, NULL, i, from, sizeof(from));
	lab_tree_path(k->src, root, i, to, sizeof(to));
	rc = fs_lookup(k->fs, from, &si);
	if (!rc)
		rc = fs_create(k->fs, to, &di);
	for (uint64_t off = 0; !rc && off < size; off += COPY_CHUNK) {
		uint64_t len = size - off < COPY_CHUNK ? size - off : COPY_CHUNK;
		int64_t got = fs_read(k->fs, si, off, len, 0);

		/* cp's own work: the bytes cross its buffer twice (read, write) */
		if (got > 0)
			rt_cpu((uint64_t)got * LAB_CP_PS_PER_BYTE / 1000);
		rc = got < 0 ? (int)got : fs_write(k->fs, di, off, (uint64_t)got, 0);
		if (!rc)
			k->bytes += (uint64_t)got;
	}
	if (!rc)
		k->files++;
	return rc;
}

void lab_copier_thread(void *arg)
{
	struct lab_copier *k = arg;
	char root[2][16] = { "/copy0", "/copy1" };
	unsigned cur = 0;
	int rc = 0;

	k->start_ns = rt_now_ns();
	while (!rc && !copier_done(k)) {
		for (unsigned i = 0; i < k->src->t_files && !rc && !copier_done(k); i++) {
			rc = tree_mkdirs(k->fs, k->src, root[cur], i);
			if (!rc)
				rc = copy_file(k, root[cur], i);
		}
		/* the previous copy goes once this one is complete (or stopped) */
		if (!rc)
			rc = lab_tree_remove(k->fs, k->src, root[cur ^ 1]);
		cur ^= 1;
		k->loops++;
	}
	k->end_ns = rt_now_ns();
	k->rc = rc;
}

/* ---- the foreground reader ---------------------------------------------------- */

/* One operation: stat, open, read the first read_bytes of file i. */
static int reader_op(struct lab_reader *rd, unsigned i)
{
	char path[96];
	struct fs_stat st;
	fs_ino_t ino;
	int64_t got;
	int rc;

	lab_tree_path(rd->tree, NULL, i, path, sizeof(path));
	rc = fs_stat(rd->fs, path, &st);
	if (!rc)
		rc = fs_lookup(rd->fs, path, &ino);
	if (rc)
		return rc;
	got = fs_read(rd->fs, ino, 0, rd->read_bytes, 0);
	return got < 0 ? (int)got : 0;
}

void lab_fg_causes_add(struct lab_fg_causes *fc, const struct ujbd_lat_acct *before,
		       const struct ujbd_lat_acct *after, double op_ms)
{
	double waited = 0, ms[UJBD_LAT_NR], total = op_ms;

	for (int c = 0; c < UJBD_LAT_NR; c++) {
		ms[c] = (double)(after->sum_ns[c] - before->sum_ns[c]) / 1e6;
		fc->count[c] += after->count[c] - before->count[c];
		fc->sum_ms[c] += ms[c];
		if (ms[c] > fc->max_ms[c])
			fc->max_ms[c] = ms[c];
		waited += ms[c];
	}
	op_ms = op_ms > waited ? op_ms - waited : 0;
	fc->other_sum_ms += op_ms;
	if (op_ms > fc->other_max_ms)
		fc->other_max_ms = op_ms;
	if (total > fc->worst_ms) {
		fc->worst_ms = total;
		memcpy(fc->worst_cause_ms, ms, sizeof(ms));
		fc->worst_other_ms = op_ms;
	}
}

void lab_reader_thread(void *arg)
{
	struct lab_reader *rd = arg;
	struct ujbd_lat_acct acc, before;
	uint64_t next = rt_now_ns();
	int rc = 0;

	memset(&acc, 0, sizeof(acc));
	if (rd->ioprio)
		rt_ioprio_set(rd->ioprio);
	ujbd_lat_attach(&acc);
	for (unsigned i = 0; !rc && rt_now_ns() < rd->until_ns; i = (i + 1) % rd->tree->t_files) {
		uint64_t t0 = rt_now_ns();

		before = acc;
		rc = reader_op(rd, i);
		double ms = (double)(rt_now_ns() - t0) / 1e6;
		if (!rc) {
			rt_hist_add(&rd->lat, rt_now_ns() - t0);
			lab_tl_op(rd->tl, 0, t0);
		}
		lab_fg_causes_add(&rd->causes, &before, &acc, ms);
		next += rd->period_ns;
		if (next > rt_now_ns())
			rt_sleep_until(next);
		else
			next = rt_now_ns(); /* late: the next one starts now */
	}
	ujbd_lat_attach(NULL);
	rd->rc = rc;
}

/* The per-cause names in the JSON document. */
static const char *const cause_name[UJBD_LAT_NR] = {
	[UJBD_LAT_WAIT_TRANSACTION] = "transaction",
	[UJBD_LAT_WAIT_COMMIT] = "commit",
	[UJBD_LAT_WAIT_LOG_SPACE] = "log_space",
	[UJBD_LAT_WAIT_FROZEN] = NULL, /* a copy made, not a wait */
	[UJBD_LAT_WAIT_SHADOW] = "buffer",
	[UJBD_LAT_LOCK_WRITEBACK] = "lock_writeback",
	[UJBD_LAT_LOCK_CHECKPOINT] = "lock_checkpoint",
	[UJBD_LAT_LOCK_READ] = "lock_read",
};

const char *lab_fg_cause_name(int cause)
{
	return cause >= 0 && cause < UJBD_LAT_NR ? cause_name[cause] : NULL;
}

int lab_fg_report(const struct rt_hist *lat, const struct lab_fg_causes *fc, struct lab_result *r)
{
	char name[64];
	int rc;

	rc = lab_result_metric(r, "fg_latency_ms_avg", (double)rt_hist_mean(lat) / 1e6);
	rc = rc ? rc : lab_result_metric(r, "fg_latency_ms_p99",
					  (double)rt_hist_percentile(lat, 99) / 1e6);
	rc = rc ? rc : lab_result_metric(r, "fg_latency_ms_max", (double)lat->h_max_ns / 1e6);
	rc = rc ? rc : lab_result_metric(r, "fg_ops", (double)lat->h_count);
	for (int c = 0; c < UJBD_LAT_NR && !rc; c++) {
		if (!cause_name[c])
			continue;
		snprintf(name, sizeof(name), "fg_wait_%s_count", cause_name[c]);
		rc = lab_result_metric(r, name, (double)fc->count[c]);
		snprintf(name, sizeof(name), "fg_wait_%s_ms_total", cause_name[c]);
		rc = rc ? rc : lab_result_metric(r, name, fc->sum_ms[c]);
		snprintf(name, sizeof(name), "fg_wait_%s_ms_max", cause_name[c]);
		rc = rc ? rc : lab_result_metric(r, name, fc->max_ms[c]);
	}
	rc = rc ? rc : lab_result_metric(r, "fg_other_ms_total", fc->other_sum_ms);
	rc = rc ? rc : lab_result_metric(r, "fg_other_ms_max", fc->other_max_ms);
	rc = rc ? rc : lab_result_metric(r, "fg_worst_ms", fc->worst_ms);
	for (int c = 0; c < UJBD_LAT_NR && !rc; c++) {
		if (!cause_name[c])
			continue;
		snprintf(name, sizeof(name), "fg_worst_%s_ms", cause_name[c]);
		rc = lab_result_metric(r, name, fc->worst_cause_ms[c]);
	}
	rc = rc ? rc : lab_result_metric(r, "fg_worst_other_ms", fc->worst_other_ms);
	if (!rc && lat->h_count)
		rc = lab_result_hist(r, "fg_latency_ms", lat);
	return rc;
}

int lab_reader_report(const struct lab_reader *rd, struct lab_result *r)
{
	return lab_fg_report(&rd->lat, &rd->causes, r);
}

/* ---- journal and queue figures ------------------------------------------------ */

int lab_report_journal(struct ujbd *j, const struct ujbd_stats *base, struct lab_result *r)
{
	struct ujbd_stats st, zero;
	double n, cn, csum;
	int rc = ujbd_stats(j, &st);

	if (rc)
		return rc;
	if (!base) {
		memset(&zero, 0, sizeof(zero));
		base = &zero;
	}
	n = (double)(st.ts_tid - base->ts_tid);
	cn = (double)(st.commit_time.count - base->commit_time.count);
	csum = (double)(st.commit_time.sum_ns - base->commit_time.sum_ns);
	rc = lab_result_metric(r, "commits", n);
	rc = rc ? rc : lab_result_metric(r, "commit_ms_avg", cn > 0 ? csum / cn / 1e6 : 0);
	rc = rc ? rc : lab_result_metric(r, "wakeups", (double)(st.wakeups - base->wakeups));
	rc = rc ? rc : lab_result_metric(r, "useless_wakeups",
					  (double)(st.useless_wakeups - base->useless_wakeups));
	return rc;
}

int lab_report_idle(struct blk_queue *q, const struct blk_queue_stats *base,
		    struct lab_result *r)
{
	struct blk_queue_stats st, zero = { 0 };
	int rc;

	blk_queue_stats(q, &st);
	if (!base)
		base = &zero;
	rc = lab_result_metric(r, "cfq_idles", (double)(st.idles - base->idles));
	rc = rc ? rc : lab_result_metric(r, "cfq_idles_expired",
					  (double)(st.idles_expired - base->idles_expired));
	return rc ? rc : lab_result_metric(r, "cfq_idle_ms_total",
					   (double)(st.idle_ns - base->idle_ns) / 1e6);
}

uint64_t lab_trace_seeks(struct blk_queue *q)
{
	struct blk_trace_event ev[256];
	size_t total = blk_trace_count(q), at = 0, got;
	uint64_t seeks = 0, end = UINT64_MAX;

	while (at < total && (got = blk_trace_events(q, at, ev, 256)) > 0) {
		for (size_t i = 0; i < got; i++) {
			if (ev[i].action != 'D' || !ev[i].nr_sectors)
				continue;
			if (ev[i].sector != end)
				seeks++;
			end = ev[i].sector + ev[i].nr_sectors;
		}
		at += got;
	}
	return seeks;
}

static void qwatch_flush(struct lab_qwatch *w, const struct blk_trace_event *ev)
{
	for (int i = 0; i < LAB_QWATCH_PENDING; i++) {
		if (ev->action == 'D' && !w->pend[i].busy) {
			w->pend[i].busy = true;
			w->pend[i].sector = ev->sector;
			w->pend[i].t_ns = ev->time_ns;
			return;
		}
		if (ev->action == 'C' && w->pend[i].busy && w->pend[i].sector == ev->sector) {
			uint64_t ns = ev->time_ns - w->pend[i].t_ns;

			w->pend[i].busy = false;
			w->flushes++;
			w->flush_sum_ns += ns;
			if (ns > w->flush_max_ns)
				w->flush_max_ns = ns;
			return;
		}
	}
}

void lab_qwatch_fn(void *arg, const struct blk_trace_event *ev)
{
	struct lab_qwatch *w = arg;

	if (!atomic_load(&w->on) || (ev->action != 'D' && ev->action != 'C'))
		return;
	if (ev->rwbs[0] == 'F')
		qwatch_flush(w, ev);
	if (ev->action != 'D' || !ev->nr_sectors)
		return;
	w->dispatched++;
	if (ev->sector != w->end)
		w->seeks++;
	w->end = ev->sector + ev->nr_sectors;
}

const char *lab_fmt(char *buf, size_t n, double v, const char *unit)
{
	snprintf(buf, n, "%.3g %s", v, unit);
	return buf;
}

double lab_ratio(double a, double b)
{
	if (!isfinite(a) || !isfinite(b) || a <= 0 || b <= 0)
		return NAN;
	return a / b;
}

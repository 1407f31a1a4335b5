/*
 * Scenario `smallfile` (Jeff Moyer, 1 Apr 2010, "jbd2: tag
 * journal writes as metadata I/O"): small-file writes with fsync come from
 * two contexts, the writer (its data, SYNC) and the journal thread (the
 * commit); cfq idles on the writer's queue after each of its sync requests
 * (slice_idle) before it serves the journal thread, which the writer is
 * waiting for. iozone gave 7 MB/s on cfq vs 35 on deadline, fs_mark a
 * similar 5x; tagging journal writes META removed it (cfq lets a META
 * request preempt the idle window).
 *
 * Workloads (as the thread ran them): iozone -i 0 -s 64k -r 4k -e -c (write a
 * 64 KiB file in 4 KiB records, fsync and close timed), repeated over
 * fresh files; fs_mark -s 65536 -n 1000 -t 1 -S 1 (create, write in
 * 16 KiB writes, fsync, close; 1000 files). Variants: the elevator, META
 * tagging, and the commit run on the fsyncing thread (one I/O context).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/scen.h"

#define SF_FILE_BYTES (64u * 1024u)
#define SF_IOZONE_RECORD 4096u    /* -r 4k */
#define SF_FSMARK_WRITE 16384u    /* fs_mark's default -w */

struct sf_run {
	unsigned iozone_files, fsmark_files;
	struct lab_result *out;
};

/* One file: create (O_TRUNC), write in records, fsync; close is free. */
static int sf_file(struct fs *fs, const char *path, unsigned record)
{
	fs_ino_t ino;
	int rc = fs_create(fs, path, &ino);

	for (unsigned off = 0; !rc && off < SF_FILE_BYTES; off += record)
		rc = fs_write(fs, ino, off, record, 0);
	return rc ? rc : fs_fsync(fs, ino);
}

struct sf_worker {
	struct fs *fs;
	const char *dir;
	unsigned files, record;
	bool reuse;          /* iozone rewrites one file; fs_mark makes new ones */
	struct lab_timeline *tl;
	unsigned tl_kind;    /* each file an operation of this kind */
	uint64_t ns;
	int rc;
};

static void sf_thread(void *arg)
{
	struct sf_worker *w = arg;
	uint64_t t0 = rt_now_ns();
	char path[64];

	for (unsigned i = 0; i < w->files && !w->rc; i++) {
		uint64_t t1 = rt_now_ns();

		snprintf(path, sizeof(path), "%s/f%05u", w->dir, w->reuse ? 0 : i);
		w->rc = sf_file(w->fs, path, w->record);
		if (!w->rc)
			lab_tl_op(w->tl, w->tl_kind, t1);
	}
	w->ns = rt_now_ns() - t0;
}

/* Run a worker on a thread of its own (its name is its I/O context). */
static int sf_phase(struct fs *fs, const char *name, struct sf_worker *w)
{
	rt_thread *t;
	int rc = fs_mkdir(fs, w->dir);

	rc = rc ? rc : rt_thread_create(&t, name, sf_thread, w);
	if (rc)
		return rc;
	rt_thread_join(t);
	return w->rc;
}

static int sf_fn(struct lab_rig *r, void *arg)
{
	struct sf_run *s = arg;
	struct sf_worker io = { .fs = r->r_fs, .dir = "/iozone", .files = s->iozone_files,
				.record = SF_IOZONE_RECORD, .reuse = true, .tl = r->r_tl };
	struct sf_worker fm = { .fs = r->r_fs, .dir = "/fsm", .files = s->fsmark_files,
				.record = SF_FSMARK_WRITE, .tl = r->r_tl, .tl_kind = 1 };
	int rc;

	lab_tl_kind(r->r_tl, 0, "iozone-file");
	lab_tl_kind(r->r_tl, 1, "fs_mark-file");
	lab_tl_start(r->r_tl);
	rc = sf_phase(r->r_fs, "iozone", &io);
	rc = rc ? rc : sf_phase(r->r_fs, "fs_mark", &fm);
	lab_tl_stop(r->r_tl);
	rc = rc ? rc : lab_result_metric(s->out, "iozone_mb_s",
					 (double)io.files * SF_FILE_BYTES / 1e6 / ((double)io.ns / 1e9));
	rc = rc ? rc : lab_result_metric(s->out, "fsmark_files_s",
					 (double)fm.files / ((double)fm.ns / 1e9));
	rc = rc ? rc : lab_report_journal(r->r_j, NULL, s->out);
	rc = rc ? rc : lab_report_idle(r->r_q, NULL, s->out);
	rc = rc ? rc : lab_result_metric(s->out, "files", (double)(io.files + fm.files));
	return rc;
}

/*
 * The era (2.6.33-34 ext4 on jbd2): the journal thread at the default
 * priority (be:4), log blocks plain WRITE even for an fsync's commit
 * (jbd2_journal_commit_transaction of 2.6.33-34 used WRITE_SYNC_PLUG only
 * for t_synchronous_commit, which only h_sync handles set: O_SYNC,
 * DIRSYNC; ext4_sync_file just started the commit and waited for it),
 * not META, jbd2's wait on buffers being logged until the commit's wait
 * loop reaches them (before 3.11), the buffer lock and pdflush's
 * writeback of metadata, dirty 20/10, fsync's data
 * WRITE_SYNC, mke2fs 1.41's journal in the middle group. No NOIDLE flag:
 * 2.6.33's cfq idled on any sync queue with an idle window (a short think
 * time) whatever the request's NOIDLE bit, which our per-queue cfq gives
 * by not setting it. No cache flush per commit: 35 MB/s of 64 KiB fsyncs
 * on deadline (one fsync every 1.8 ms) was not paying a disk cache flush,
 * so the thread's storage had a non-volatile cache or barriers off.
 */
static int sf_variant(const char *v, struct lab_rig_spec *rs)
{
	lab_era_2009(rs);        /* 2.6.33: cfq, no META, dirty 20/10, fsync's data WRITE_SYNC */
	rs->jopts.commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	rs->jopts.journal_sync = UJBD_SYNC_OFF;
	lab_era_jbd_waits(rs);
	lab_era_no_barrier(rs);
	if (strcmp(v, "deadline") == 0)
		rs->elevator = "deadline";
	else if (strcmp(v, "cfq+meta") == 0)
		rs->jopts.journal_meta = true;
	else if (strcmp(v, "cfq+caller") == 0)
		rs->jopts.caller_commit = true;
	else if (strcmp(v, "cfq") != 0)
		return -EINVAL;
	return 0;
}

static const char *const sf_variants[] = { "deadline", "cfq", "cfq+meta", "cfq+caller", NULL };

static const char *const sf_plot[] = {
	"iozone_mb_s iozone, 64 KiB files with fsync (MB/s)",
	"fsmark_files_s fs_mark, files with fsync per second",
	"cfq_idle_ms_total cfq's idle windows, in all (ms)",
	NULL,
};

static int sf_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct sf_run s = { .out = out };
	struct lab_rig_spec rs;
	int rc;

	lab_rig_spec_init(&rs);
	rc = sf_variant(variant, &rs);
	if (rc)
		return rc;
	rs.timeline = out;
	s.iozone_files = lab_ctx_quick(c) ? 20 : 200;
	s.fsmark_files = lab_ctx_quick(c) ? 50 : 1000; /* fs_mark -n 1000 */
	lab_progress(c, "smallfile %s: iozone %u x 64 KiB, fs_mark %u x 64 KiB", variant,
		     s.iozone_files, s.fsmark_files);
	return lab_rig_run(c, &rs, sf_fn, &s);
}

/* The share of variant r's idle windows that ended by their timer (the
 * request they waited for never came: I/O of another queue waited). */
static double sf_expired(const struct lab_result *r)
{
	double n = lab_result_get(r, "cfq_idles");

	return n > 0 ? 100 * lab_result_get(r, "cfq_idles_expired") / n : 0;
}

/* cfq's idle windows per file of variant r, and their ms. */
static void sf_idle(const struct lab_result *r, double *per_file, double *ms_per_file)
{
	double files = lab_result_get(r, "files");

	*per_file = files > 0 ? lab_result_get(r, "cfq_idles") / files : 0;
	*ms_per_file = files > 0 ? lab_result_get(r, "cfq_idle_ms_total") / files : 0;
}

static void sf_row(const struct lab_result *const *r, const char *metric, struct lab_summary *out)
{
	char what[96], lab[160], why[300];
	double dl = lab_result_get(r[0], metric), cfq = lab_result_get(r[1], metric);
	double ratio = lab_ratio(cfq, dl), n, ms;
	bool met = isfinite(ratio) && ratio <= 1.0 / 3;

	sf_idle(r[1], &n, &ms);
	snprintf(what, sizeof(what), "%s: cfq / deadline", metric);
	snprintf(lab, sizeof(lab), "%.3g (cfq) vs %.3g (deadline)", cfq, dl);
	snprintf(why, sizeof(why), "cfq idled %.1f windows a file (%.1f ms), %.0f %% of them ended "
		 "by their timer: a window on one context's queue (the writer's, the journal "
		 "thread's) while the other's I/O, which the first was waiting for, waited",
		 n, ms, sf_expired(r[1]));
	lab_summary_row(out, what, strcmp(metric, "iozone_mb_s") ? "fs_mark 5x" : "7 vs 35 MB/s",
			lab, ratio, "<= 1/3", met, why);
	for (int v = 2; v <= 3; v++) {
		const char *name = v == 2 ? "cfq+meta" : "cfq+caller";
		double x = r[v] ? lab_result_get(r[v], metric) : NAN, xr = lab_ratio(x, dl);

		if (!r[v])
			continue;
		sf_idle(r[v], &n, &ms);
		snprintf(what, sizeof(what), "%s: %s / deadline", metric, name);
		snprintf(lab, sizeof(lab), "%.3g (%s) vs %.3g (deadline)", x, name, dl);
		if (ratio > 0.95)
			snprintf(why, sizeof(why), "trivially: cfq alone was no slower than deadline");
		else if (ms < 0.5)
			snprintf(why, sizeof(why), "idling costs %.2f ms a file: %s", ms,
				 v == 2 ? "a META journal write ends the window it meets at once"
					: "the commit's I/O comes from the very thread cfq waits for");
		else
			snprintf(why, sizeof(why), "%.1f idle windows a file left (%.1f ms), %.0f %% "
				 "ended by their timer: %s", n, ms, sf_expired(r[v]),
				 v == 2 ? "a META write preempts the writer's window, but a window "
					  "that META does not reach is still waited out"
					: "one thread, but not one queue: its sync queue idles while "
					  "I/O it waits for sits in another (the shared async queue)");
		lab_summary_row(out, what, v == 2 ? "the difference went away" : "(the lab's proposal)",
				lab, xr, "within 20 %", isfinite(xr) && fabs(xr - 1) <= 0.2, why);
	}
}

static void sf_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	if (!r[0] || !r[1])
		return;
	sf_row(r, "iozone_mb_s", out);
	sf_row(r, "fsmark_files_s", out);
}

const struct lab_scenario lab_scen_smallfile = {
	.s_name = "smallfile",
	.s_thread = &lab_thread_003,
	.s_help = "iozone and fs_mark small-file fsyncs: cfq's idle window vs the journal thread",
	.s_variants = sf_variants,
	.s_real = "ujbd's deadline and cfq above the kernel's scheduler; cfq idles only when the "
		  "file's disk says it is rotational",
	.s_run = sf_run,
	.s_summary = sf_summary,
	.s_plot = sf_plot,
	.s_plot_title = "smallfile: small files with fsync per elevator, higher is faster (the thread: "
			"cfq 7 MB/s against deadline's 35)",
};

/*
 * Scenario `fsync-loop` (Ted Ts'o, 4 Apr 2009, "Re: [GIT PULL]
 * Ext3 latency fixes"): the regression test of Linux commit 78f707bf,
 * fopen / write 4 KiB / fsync / fclose, 1000 times, no background load.
 * Stock 2.6.29 took 1687 ms; with every journal write WRITE_SYNC 13722 ms,
 * because the queue was unplugged after each sync write, so kjournald's log
 * blocks went to the disk one at a time instead of as one merged request.
 * Variants: stock (journal writes async, the commit block sync),
 * sync-implicit (all SYNC, 2.6.29's unplug after each sync write),
 * sync-explicit (all SYNC, batched, then one explicit unplug).
 *
 * The one idea: the block trace says it; the scenario keeps an excerpt of
 * the loop's queue events in blkparse's format, like the thread's, with the
 * workload thread named as the thread's program (comm truncated to 15
 * characters: "sqlite-fsync-te") and the commit thread "kjournald".
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/scen.h"

#define FL_WRITE 4096u
#define FL_EXCERPT_LINES 24u  /* Q events shown, as many as the thread's excerpts */
#define FL_SERIES_MAX 20000u

struct fl_run {
	unsigned iterations;
	struct lab_result *out;
	uint64_t ns;
	int rc;
	struct fs *fs;
	struct lab_timeline *tl;
	struct fl_watch *w;
	struct blk_queue_stats q0;   /* the queue before the loop */
};

static void fl_thread(void *arg)
{
	struct fl_run *f = arg;
	uint64_t t0 = rt_now_ns();
	fs_ino_t ino;

	for (unsigned i = 0; i < f->iterations && !f->rc; i++) {
		uint64_t t1 = rt_now_ns();

		f->rc = fs_create(f->fs, "/fsync-test", &ino); /* fopen(path, "w") */
		f->rc = f->rc ? f->rc : fs_write(f->fs, ino, 0, FL_WRITE, 0);
		f->rc = f->rc ? f->rc : fs_fsync(f->fs, ino);   /* fclose: nothing more */
		if (!f->rc)
			lab_tl_op(f->tl, 0, t1);
	}
	f->ns = rt_now_ns() - t0;
}

/* What the loop's queue did, collected live by a trace_fn (the kept trace
 * may be full of the setup's events): the first Q events, and the
 * dispatches' sectors against time. */
struct fl_watch {
	atomic_bool on;
	struct blk_trace_event q[FL_EXCERPT_LINES];
	size_t nq;
	double *x, *y;
	size_t nd;
	uint64_t t0_ns;
	bool started;
};

static void fl_watch_fn(void *arg, const struct blk_trace_event *ev)
{
	struct fl_watch *w = arg;

	if (!atomic_load(&w->on))
		return;
	if (!w->started) {
		w->started = true;
		w->t0_ns = ev->time_ns;
	}
	if (ev->action == 'Q' && w->nq < FL_EXCERPT_LINES)
		w->q[w->nq++] = *ev;
	if (ev->action == 'D' && ev->nr_sectors && w->nd < FL_SERIES_MAX) {
		w->x[w->nd] = (double)(ev->time_ns - w->t0_ns) / 1e9;
		w->y[w->nd++] = (double)ev->sector;
	}
}

static int fl_excerpt(const struct fl_watch *w, struct lab_result *out)
{
	char text[FL_EXCERPT_LINES * 160 + 1], line[160];
	size_t len = 0;

	text[0] = '\0';
	for (size_t i = 0; i < w->nq; i++) {
		int n = blk_trace_format(&w->q[i], line, sizeof(line));

		if (n < 0 || len + (size_t)n + 2 > sizeof(text))
			break;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", line);
	}
	return lab_result_text(out, "blktrace", text);
}

static int fl_fn(struct lab_rig *r, void *arg)
{
	struct fl_run *f = arg;
	rt_thread *t;
	int rc;

	f->fs = r->r_fs;
	f->tl = r->r_tl;
	blk_queue_stats(r->r_q, &f->q0);
	atomic_store(&f->w->on, true);
	lab_tl_kind(r->r_tl, 0, "fopen+write+fsync");
	lab_tl_start(r->r_tl);
	rc = rt_thread_create(&t, "sqlite-fsync-test", fl_thread, f);
	if (rc)
		return rc;
	rt_thread_join(t);
	atomic_store(&f->w->on, false);
	lab_tl_stop(r->r_tl);
	if (f->rc)
		return f->rc;
	double ms = (double)f->ns / 1e6;
	rc = lab_result_metric(f->out, "total_ms", ms);
	rc = rc ? rc : lab_result_metric(f->out, "ms_per_iteration", ms / f->iterations);
	rc = rc ? rc : lab_report_journal(r->r_j, NULL, f->out);
	rc = rc ? rc : lab_report_idle(r->r_q, &f->q0, f->out);
	rc = rc ? rc : fl_excerpt(f->w, f->out);
	if (!rc && f->w->nd)
		rc = lab_result_series(f->out, "sector_vs_time", f->w->x, f->w->y, f->w->nd);
	return rc;
}

/*
 * The era (2.6.29 ext3 on jbd): kjournald at the default be:4, no META
 * tag, jbd's waits (a buffer being logged until the commit's wait loop
 * reaches it, the buffer lock, pdflush), cfq, 2.6.29's queue plugging,
 * dirty 20/10, no barriers, mke2fs 1.41's journal in the middle group.
 * The variants set the journal's sync policy, the plug policy (blk.h:
 * explicit / implicit-sync) and how fsync writes the data: stock as WRITE
 * (the thread's "Q W 199720 [sqlite-fsync-te]"), the others as WRITE_SYNC
 * (its "Q WS 199208"); sync-noidle as 2.6.30 shipped it (Jens Axboe,
 * April 2009: WRITE_SYNC carries NOIDLE, so CFQ does not idle after it).
 */
static int fl_variant(const char *v, struct lab_rig_spec *rs)
{
	bool stock = strcmp(v, "stock") == 0, noidle = strcmp(v, "sync-noidle") == 0;

	lab_era_2009(rs);
	rs->jopts.commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	lab_era_jbd_waits(rs);        /* 2.6.29-30's jbd */
	lab_era_no_barrier(rs);
	rs->fsp.fsync_sync = !stock;    /* stock: 2.6.29's, before the fix */
	rs->fsp.fsync_noidle = rs->jopts.journal_noidle = noidle;
	rs->jopts.journal_sync = stock ? UJBD_SYNC_OFF : UJBD_SYNC_ALL;
	if (stock || strcmp(v, "sync-implicit") == 0)
		rs->queue_params = "queue_plug=1,plug=implicit-sync";
	else if (strcmp(v, "sync-explicit") == 0 || noidle)
		rs->queue_params = "queue_plug=1,plug=explicit";
	else
		return -EINVAL;
	return 0;
}

static const char *const fl_variants[] = { "stock", "sync-implicit", "sync-explicit",
					   "sync-noidle", NULL };

static const char *const fl_plot[] = {
	"total_ms the whole loop (ms, lower is better)",
	"cfq_idle_ms_total cfq's idle windows, in all (ms)",
	NULL,
};

static int fl_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct fl_watch w = { 0 };
	struct fl_run f = { .out = out, .w = &w };
	struct lab_rig_spec rs;
	int rc;

	lab_rig_spec_init(&rs);
	rc = fl_variant(variant, &rs);
	if (rc)
		return rc;
	w.x = malloc(FL_SERIES_MAX * sizeof(*w.x));
	w.y = malloc(FL_SERIES_MAX * sizeof(*w.y));
	rs.trace_fn = fl_watch_fn;
	rs.trace_arg = &w;
	rs.timeline = out;
	f.iterations = lab_ctx_quick(c) ? 50 : 1000; /* the thread's test: 1000 */
	lab_progress(c, "fsync-loop %s: %u x (fopen, write 4 KiB, fsync, fclose)", variant,
		     f.iterations);
	rc = w.x && w.y ? lab_rig_run(c, &rs, fl_fn, &f) : -ENOMEM;
	free(w.x);
	free(w.y);
	return rc;
}

/* What cfq's idle windows cost a variant, per iteration, in ms. */
static double fl_idle_ms(const struct lab_result *r)
{
	double n = lab_result_get(r, "total_ms") / lab_result_get(r, "ms_per_iteration");

	return lab_result_get(r, "cfq_idle_ms_total") / n;
}

/* Why variant r is as slow as it is, from its own figures. */
static void fl_why(const struct lab_result *r, const char *name, char *why, size_t n)
{
	double it = lab_result_get(r, "ms_per_iteration"), idle = fl_idle_ms(r);

	if (idle > 0.5 * it)
		snprintf(why, n, "%s: %.1f of its %.1f ms an iteration are cfq idle windows: after "
			 "each sync request cfq waits for that thread's next one while the other "
			 "(writer or kjournald) waits for it", name, idle, it);
	else
		snprintf(why, n, "%s: %.2f ms an iteration, %.2f of them cfq idling; the rest "
			 "is the commit (%.2f ms avg)", name, it, idle,
			 lab_result_get(r, "commit_ms_avg"));
}

/* hypothesis: the row measures the thread's hypothesis (Ted's: the
 * implicit unplug is the cause, an explicit one the cure); its why says
 * whether the run bears it out. */
static void fl_row(struct lab_summary *out, const struct lab_result *st,
		   const struct lab_result *v, const char *name, const char *what,
		   const char *thread, const char *goal, bool at_least, double bound,
		   bool hypothesis)
{
	char lab[128], why[300], hwhy[420];
	double ms = lab_result_get(v, "total_ms"), base = lab_result_get(st, "total_ms");
	double ratio = lab_ratio(ms, base);
	bool met = isfinite(ratio) && (at_least ? ratio >= bound : ratio <= bound);

	snprintf(lab, sizeof(lab), "%.0f ms (%s) vs %.0f ms (stock)", ms, name, base);
	fl_why(v, name, why, sizeof(why));
	if (hypothesis) {
		snprintf(hwhy, sizeof(hwhy), "the thread's hypothesis, measured: it %s. %s",
			 met ? "holds" : "does not hold, the unplug was not the cause", why);
		lab_summary_row(out, what, thread, lab, ratio, goal, met, hwhy);
		return;
	}
	lab_summary_row(out, what, thread, lab, ratio, goal, met, why);
}

static void fl_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	if (!r[0])
		return;
	if (r[1])
		fl_row(out, r[0], r[1], "sync-implicit", "total sync-implicit / stock",
		       "13722 vs 1687 ms", ">= 3x", true, 3, false);
	if (r[2])
		fl_row(out, r[0], r[2], "sync-explicit", "total sync-explicit / stock",
		       "(Ted's hypothesis: an explicit unplug cures it)", "<= 1.2x", false, 1.2,
		       true);
	if (r[3])
		fl_row(out, r[0], r[3], "sync-noidle", "total sync-noidle / stock",
		       "(2.6.30: WRITE_SYNC with NOIDLE)", "<= 1.2x", false, 1.2, false);
}

const struct lab_scenario lab_scen_fsync_loop = {
	.s_name = "fsync-loop",
	.s_thread = &lab_thread_004,
	.s_help = "fopen/write/fsync/fclose x 1000: sync journal writes and implicit unplugging",
	.s_variants = fl_variants,
	.s_real = "ujbd's queue plugging above the kernel's scheduler (it plugs only when the "
		  "file's disk says it is rotational); the excerpt is ujbd's queue, not the disk's",
	.s_run = fl_run,
	.s_summary = fl_summary,
	.s_plot = fl_plot,
	.s_plot_title = "fsync-loop: the loop's time per variant, lower is better (the thread: stock "
			"1687 ms, every journal write SYNC 13722 ms)",
};

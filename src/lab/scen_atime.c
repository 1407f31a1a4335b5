/*
 * Scenario `atime` (Arjan van de Ven, "Give kjournald a IOPRIO_CLASS_RT io
 * priority", LKML, 15 Oct 2007): a background
 * thread copies a tree and deletes the old copy, in a loop; a foreground
 * "build" thread stats, opens and reads 4 KiB of the next file of another
 * tree every 5 ms, with strictatime, so every read dirties an inode in a
 * journal handle. Under cfq the commit thread's I/O competes with the copy
 * like any process's: the foreground's atime handle waits for the commit
 * (transaction locked, a buffer being logged), and the commit waits for the
 * disk the copy holds. Variants: the commit's priority.
 *
 * The one idea: the foreground's latency is taken apart by cause (the
 * journal's waits from its per-thread accumulator, the rest = its own read
 * I/O and CPU), so a result says where the time went.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/scen.h"

/* Sizes: the thread's "kernel build" and copy loop, scaled to about 2000
 * files of 4-64 KiB each (a source tree's small files); 50 files a
 * directory, as a source tree. */
#define ATIME_FILES 2000u
#define ATIME_PER_DIR 50u
#define ATIME_MIN_KIB 4u
#define ATIME_MAX_KIB 64u
#define ATIME_PERIOD_NS (5 * RT_NS_PER_MS) /* the build's pace: a file every 5 ms */
#define ATIME_READ_BYTES 4096u

void lab_atime_opts_init(struct lab_atime_opts *o, const struct lab_ctx *c)
{
	bool quick = lab_ctx_quick(c);

	o->copy_files = quick ? 80 : ATIME_FILES;
	o->build_files = quick ? 80 : ATIME_FILES;
	/* past the end of the first commit (the timer's at 5 s, about 2 s
	 * long); quick: before it. The
	 * sim pays for every byte the copy moves in memory: the run time
	 * budget (make run, 2 min) sets this */
	o->duration_ns = quick ? RT_NS_PER_S : 60 * RT_NS_PER_S;
	/* The build runs at be:0, the best a user gets without privileges
	 * (ionice -c2 -n0): what `inherit` passes on to the commit. The copy
	 * keeps the default (be:4 from nice 0). */
	o->fg_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 0);
}

struct atime_run {
	const struct lab_atime_opts *o;
	struct lab_result *out;   /* NULL: only sum */
	struct lab_atime_sum sum;
	uint64_t seed;
};

static int atime_threads(struct lab_rig *r, struct atime_run *a, struct lab_copier *k,
			 struct lab_reader *rd)
{
	rt_thread *tk = NULL, *tr = NULL;
	int rc;

	rc = rt_thread_create(&tk, "cp", lab_copier_thread, k);
	if (!rc)
		rc = rt_thread_create(&tr, "make", lab_reader_thread, rd);
	if (tk)
		rt_thread_join(tk);
	if (tr)
		rt_thread_join(tr);
	(void)r;
	(void)a;
	return rc ? rc : k->rc ? k->rc : rd->rc;
}

static int atime_fn(struct lab_rig *r, void *arg)
{
	struct atime_run *a = arg;
	struct lab_tree src, build;
	struct lab_copier k;
	struct lab_reader rd;
	struct ujbd_stats base;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&rd, 0, sizeof(rd));
	rt_hist_init(&rd.lat);
	rc = lab_tree_init(&src, "/src", a->o->copy_files, ATIME_PER_DIR, ATIME_MIN_KIB,
			   ATIME_MAX_KIB, a->seed);
	if (!rc)
		rc = lab_tree_init(&build, "/build", a->o->build_files, ATIME_PER_DIR,
				   ATIME_MIN_KIB, ATIME_MAX_KIB, a->seed + 1);
	if (rc)
		return rc;
	rc = lab_tree_make(r->r_fs, &src);
	rc = rc ? rc : lab_tree_make(r->r_fs, &build);
	/* The loop's steady state: both trees in the page cache (a kernel
	 * build's sources and a copied tree are, with 1 GiB of RAM: the
	 * thread's atime updates were "in memory"), the setup's metadata home. */
	rc = rc ? rc : lab_rig_settle(r);
	rc = rc ? rc : ujbd_stats(r->r_j, &base);
	if (!rc) {
		uint64_t end = rt_now_ns() + a->o->duration_ns;

		k = (struct lab_copier){ .fs = r->r_fs, .src = &src, .until_ns = end };
		rd.fs = r->r_fs;
		rd.tree = &build;
		rd.period_ns = ATIME_PERIOD_NS;
		rd.read_bytes = ATIME_READ_BYTES;
		rd.until_ns = end;
		rd.ioprio = a->o->fg_ioprio;
		rd.tl = r->r_tl;
		lab_tl_kind(r->r_tl, 0, "stat+open+read");
		lab_tl_start(r->r_tl);
		rc = atime_threads(r, a, &k, &rd);
		lab_tl_stop(r->r_tl);
	}
	a->sum.fg_max = (double)rd.lat.h_max_ns / 1e6;
	for (int cause = 0; cause < UJBD_LAT_NR; cause++)
		if (cause != UJBD_LAT_WAIT_FROZEN && rd.causes.max_ms[cause] > a->sum.fg_journal_max)
			a->sum.fg_journal_max = rd.causes.max_ms[cause];
	if (!rc && a->out)
		rc = lab_reader_report(&rd, a->out);
	if (!rc && a->out) {
		double s = (double)(k.end_ns - k.start_ns) / 1e9;

		rc = lab_result_metric(a->out, "copy_mb_s", s > 0 ? (double)k.bytes / 1e6 / s : 0);
		rc = rc ? rc : lab_report_journal(r->r_j, &base, a->out);
	}
	lab_tree_release(&src);
	lab_tree_release(&build);
	return rc;
}

int lab_atime_experiment(const struct lab_ctx *c, struct lab_rig_spec *rs,
			 const struct lab_atime_opts *o, struct lab_result *out,
			 struct lab_atime_sum *sum)
{
	struct atime_run a = { .o = o, .out = out, .seed = lab_ctx_seed(c) };
	int rc = lab_rig_run(c, rs, atime_fn, &a);

	if (sum)
		*sum = a.sum;
	return rc;
}

static const char *const atime_variants[] = { "be:4", "rt:4", "inherit", NULL };

static int atime_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct lab_rig_spec rs;
	struct lab_atime_opts o;
	int rc;

	rc = lab_rig_spec_2007(&rs, variant);
	if (rc)
		return rc;
	lab_atime_opts_init(&o, c);
	rs.timeline = out;
	lab_progress(c, "atime %s: copy %u files, build %u files, %.0f s", variant, o.copy_files,
		     o.build_files, (double)o.duration_ns / 1e9);
	return lab_atime_experiment(c, &rs, &o, out, NULL);
}

/* The journal cause that took most of the foreground's time in r. */
static const char *atime_top_cause(const struct lab_result *r, double *ms)
{
	static const char *const names[] = { "transaction", "commit", "log_space", "buffer" };
	static const char *const words[] = { "a locked transaction", "a commit",
					     "log space", "a buffer being logged" };
	char key[64];
	const char *best = "its own read I/O";

	*ms = lab_result_get(r, "fg_other_ms_total");
	if (!(lab_result_get(r, "fg_wait_transaction_ms_total") > 0) &&
	    !(lab_result_get(r, "fg_wait_buffer_ms_total") > 0) &&
	    !(lab_result_get(r, "fg_wait_log_space_ms_total") > 0) &&
	    !(lab_result_get(r, "fg_wait_commit_ms_total") > 0))
		return "its own read I/O and CPU, never the journal (no inversion to cure)";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(key, sizeof(key), "fg_wait_%s_ms_total", names[i]);
		double v = lab_result_get(r, key);

		if (isfinite(v) && v > *ms) {
			*ms = v;
			best = words[i];
		}
	}
	return best;
}

static void atime_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	char lab[128], why[256];
	double ms;

	if (r[0] && r[1]) {
		double be = lab_result_get(r[0], "fg_latency_ms_max");
		double rt = lab_result_get(r[1], "fg_latency_ms_max");
		double ratio = lab_ratio(be, rt);

		snprintf(lab, sizeof(lab), "max %.0f ms (be:4) vs %.0f ms (rt:4); copy %.1f vs %.1f MB/s",
			 be, rt, lab_result_get(r[0], "copy_mb_s"), lab_result_get(r[1], "copy_mb_s"));
		const char *cause = atime_top_cause(r[0], &ms);
		snprintf(why, sizeof(why), "be:4's foreground waited most on %s (%.0f ms in all)",
			 cause, ms);
		lab_summary_row(out, "max fg latency be:4 / rt:4", "600 ms, 3-4x better with RT",
				lab, ratio, ">= 3x", isfinite(ratio) && ratio >= 3, why);
	}
	if (r[0] && r[1] && r[2]) {
		double in = lab_result_get(r[2], "fg_latency_ms_max");
		double rt = lab_result_get(r[1], "fg_latency_ms_max");
		double ratio = lab_ratio(in, rt);
		double cbe = lab_result_get(r[0], "copy_mb_s"), cin = lab_result_get(r[2], "copy_mb_s");
		double cr = lab_ratio(cin, cbe);
		bool met = isfinite(ratio) && ratio <= 1.2 && isfinite(cr) && fabs(cr - 1) <= 0.05;

		snprintf(lab, sizeof(lab), "max %.0f ms (inherit) vs %.0f ms (rt:4); copy %.1f vs %.1f MB/s (be:4)",
			 in, rt, cin, cbe);
		const char *cause = atime_top_cause(r[2], &ms);
		double base = lab_ratio(lab_result_get(r[0], "fg_latency_ms_max"), rt);
		snprintf(why, sizeof(why), "inherit's foreground waited most on %s (%.0f ms in all)%s",
			 cause, ms, isfinite(base) && base < 1.05 ? "; trivially: be:4 was no worse" : "");
		lab_summary_row(out, "max fg latency inherit / rt:4", "(the lab's proposal)", lab,
				ratio, "<= 1.2x, copy within 5 % of be:4", met, why);
	}
}

const struct lab_scenario lab_scen_atime = {
	.s_name = "atime",
	.s_thread = &lab_thread_000,
	.s_help = "strictatime reads of a build beside a tree-copy loop, under cfq: commit priority",
	.s_variants = atime_variants,
	.s_real = "the same loop in real time (8 s; --quick 1 s), the commit's ioprio on each request "
		  "to the kernel; the model copies no bytes, so cp's memory copy (charged in the sim) "
		  "costs nothing here",
	.s_run = atime_run,
	.s_summary = atime_summary,
};

/*
 * Scenario `aim7` (linux-ext4, December 2012 to January 2013: "jbd2: fix
 * fsync() tid wraparound bug" made
 * fsync wake the commit thread even when that commit was already asked
 * for; AIM7 lost ~10 %; Eric Sandeen's "jbd2: don't wake kjournald
 * unnecessarily" skips the wakeup). Many tasks loop over small jobs drawn
 * from a weighted list (AIM7 style: create/write/close/stat/unlink, a CPU
 * job, and sync_disk jobs that fsync a file and then fsync it again, when
 * its transaction is already committing or committed), CPU-bound under the
 * sim world's CPU model. Jan Kara's point: the wakeup is paid with the
 * journal's state lock held, so every task that starts or stops a handle
 * meanwhile waits for it. Variants: wake `needed` and `always`.
 *
 * The one idea: the cost of a wakeup is a measured number, charged by the
 * journal itself (ujbd_opts.wakeup_cpu_ns, under j_state_lock); nothing else
 * differs between the variants.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lab/real.h"
#include "lab/scen.h"

struct lab_aim7_params {
	uint64_t wakeup_ns;   /* CPU cost of one wakeup of the commit thread */
	uint64_t cpu_job_ns;  /* the CPU-only job */
	unsigned tasks;       /* AIM7 tasks (one point of reaim's ramp) */
	unsigned ncpus;       /* virtual CPUs */
	unsigned w_meta, w_sync, w_cpu; /* job weights */
	unsigned dirs;        /* directories the tasks share (AIM7's config) */
};

#define AIM7_ROW(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct lab_aim7_params, field, type, unit, scale, def, min, max, src, help)

static const struct rt_param aim7_rows[] = {
	RT_PARAM_AS("wakeup_us", struct lab_aim7_params, wakeup_ns, RT_PARAM_U64, "us", 1000,
		    4, 0, 1000,
		    "B. Sigoure, 'How long does it take to make a context switch?', "
		    "blog.tsunanet.net, 14 Nov 2010: a futex wake and switch between two "
		    "threads measured at a few us on Intel Core/Nehalem with 2.6.2x kernels",
		    "CPU time of one commit-thread wakeup, charged under j_state_lock"),
	RT_PARAM_AS("cpu_job_us", struct lab_aim7_params, cpu_job_ns, RT_PARAM_U64, "us", 1000,
		    500, 0, 100000,
		    "assumption: AIM7's arithmetic and string jobs are sub-ms loops",
		    "CPU time of the CPU-only job"),
	AIM7_ROW(tasks, RT_PARAM_UINT, "", 0, 32, 1, 256,
		 "assumption: one point of reaim's task ramp, above the CPUs",
		 "tasks running jobs at once"),
	AIM7_ROW(ncpus, RT_PARAM_UINT, "", 0, 4, 1, 64,
		 "assumption: a 4-core server of 2009", "virtual CPUs"),
	AIM7_ROW(w_meta, RT_PARAM_UINT, "", 0, 30, 0, 1000,
		 "AIM7 fserver workfile: disk jobs weigh 30", "weight of create/write/close/stat/unlink"),
	AIM7_ROW(w_sync, RT_PARAM_UINT, "", 0, 5, 0, 1000,
		 "AIM7 fserver workfile: sync_disk jobs weigh 5", "weight of the sync_disk job"),
	AIM7_ROW(w_cpu, RT_PARAM_UINT, "", 0, 30, 0, 1000,
		 "assumption: as much CPU work as disk work", "weight of the CPU-only job"),
	AIM7_ROW(dirs, RT_PARAM_UINT, "", 0, 1, 1, 256,
		 "AIM7: the disk jobs run in the directories its config file lists, one "
		 "per file system, shared by every task (one file system here)",
		 "directories the tasks' files go to, task i in directory i mod dirs"),
};

const struct rt_param_table lab_aim7_param_table =
	RT_PARAM_TABLE("aim7", "the aim7 scenario's job mix and wakeup cost", aim7_rows,
		       struct lab_aim7_params);

struct aim7_task {
	struct fs *fs;
	const struct lab_aim7_params *p;
	unsigned id;
	uint64_t until_ns, seed;
	struct lab_timeline *tl;
	uint64_t jobs;
	uint64_t run_delay_ns, exec_ns; /* its CPU accounting, at its end */
	int rc;
};

/* The timeline's kinds of operation: the jobs that touch the file system. */
enum { AIM7_TL_META, AIM7_TL_SYNC };

/* create, write 4 KiB, close, stat, unlink */
static int job_meta(struct aim7_task *t, uint64_t n)
{
	char path[48];
	struct fs_stat st;
	fs_ino_t ino;
	int rc;

	snprintf(path, sizeof(path), "/d%03u/t%03um%llu", t->id % t->p->dirs, t->id,
		 (unsigned long long)n);
	rc = fs_create(t->fs, path, &ino);
	rc = rc ? rc : fs_write(t->fs, ino, 0, 4096, 0);
	rc = rc ? rc : fs_stat(t->fs, path, &st);
	rc = rc ? rc : fs_unlink(t->fs, path);
	return rc;
}

/* sync_disk: write the task's file, fsync it, and fsync it again at once:
 * its transaction is then committing or committed (the thread's case). */
static int job_sync(struct aim7_task *t, uint64_t n)
{
	char path[48];
	fs_ino_t ino;
	int rc;

	snprintf(path, sizeof(path), "/d%03u/t%03usync", t->id % t->p->dirs, t->id);
	rc = fs_lookup(t->fs, path, &ino);
	if (rc == -ENOENT)
		rc = fs_create(t->fs, path, &ino);
	rc = rc ? rc : fs_write(t->fs, ino, (n % 16) * 4096, 4096, 0);
	rc = rc ? rc : fs_fsync(t->fs, ino);
	rc = rc ? rc : fs_fsync(t->fs, ino);
	return rc;
}

static void aim7_thread(void *arg)
{
	struct aim7_task *t = arg;
	const struct lab_aim7_params *p = t->p;
	unsigned total = p->w_meta + p->w_sync + p->w_cpu;
	struct rt_prng g;

	rt_prng_init(&g, t->seed);
	rt_task(); /* a user task from its start (under --cpu=sched=cfs) */
	while (!t->rc && rt_now_ns() < t->until_ns) {
		uint64_t x = rt_prng_below(&g, total), t0 = rt_now_ns();

		if (x < p->w_meta) {
			t->rc = job_meta(t, t->jobs);
			if (!t->rc)
				lab_tl_op(t->tl, AIM7_TL_META, t0);
		} else if (x < p->w_meta + p->w_sync) {
			t->rc = job_sync(t, t->jobs);
			if (!t->rc)
				lab_tl_op(t->tl, AIM7_TL_SYNC, t0);
		} else {
			lab_cpu_work(p->cpu_job_ns);
		}
		t->jobs += !t->rc;
	}
	rt_self_cpu_stats(&t->run_delay_ns, &t->exec_ns);
}

struct aim7_run {
	struct lab_aim7_params p;
	uint64_t duration_ns, seed;
	struct lab_result *out;
};

/* The info file's fields, over the run (after minus before). */
static int aim7_info(struct lab_result *out, const struct ujbd_stats *a, const struct ujbd_stats *b)
{
	double n = (double)(b->ts_tid - a->ts_tid);
	double d = n > 0 ? n : 1;
	int rc;

	rc = lab_result_metric(out, "transactions", n);
	rc = rc ? rc : lab_result_metric(out, "handles_per_transaction",
					  (double)(b->rs_handle_count - a->rs_handle_count) / d);
	rc = rc ? rc : lab_result_metric(out, "blocks_per_transaction",
					  (double)(b->rs_blocks - a->rs_blocks) / d);
	rc = rc ? rc : lab_result_metric(out, "commit_us_avg",
					  (double)b->average_commit_time_ns / 1e3);
	rc = rc ? rc : lab_result_metric(out, "waiting_ms_avg",
					  (double)(b->rs_wait_ns - a->rs_wait_ns) / d / 1e6);
	rc = rc ? rc : lab_result_metric(out, "running_ms_avg",
					  (double)(b->rs_running_ns - a->rs_running_ns) / d / 1e6);
	rc = rc ? rc : lab_result_metric(out, "locked_ms_avg",
					  (double)(b->rs_locked_ns - a->rs_locked_ns) / d / 1e6);
	rc = rc ? rc : lab_result_metric(out, "flushing_ms_avg",
					  (double)(b->rs_flushing_ns - a->rs_flushing_ns) / d / 1e6);
	rc = rc ? rc : lab_result_metric(out, "logging_ms_avg",
					  (double)(b->rs_logging_ns - a->rs_logging_ns) / d / 1e6);
	rc = rc ? rc : lab_result_metric(out, "logged_blocks_per_transaction",
					  (double)(b->rs_blocks_logged - a->rs_blocks_logged) / d);
	rc = rc ? rc : lab_result_metric(out, "wakeups", (double)(b->wakeups - a->wakeups));
	rc = rc ? rc : lab_result_metric(out, "useless_wakeups",
					  (double)(b->useless_wakeups - a->useless_wakeups));
	return rc;
}

static int aim7_tasks(struct lab_rig *r, struct aim7_run *a, uint64_t *jobs,
		      uint64_t *run_delay_ns)
{
	struct aim7_task t[256];
	rt_thread *th[256] = { 0 };
	uint64_t end = rt_now_ns() + a->duration_ns;
	int rc = 0;

	*jobs = *run_delay_ns = 0;
	for (unsigned i = 0; i < a->p.tasks && !rc; i++) {
		t[i] = (struct aim7_task){ .fs = r->r_fs, .p = &a->p, .id = i, .until_ns = end,
					   .seed = a->seed * 1000003 + i, .tl = r->r_tl };
		rc = rt_thread_create(&th[i], "reaim", aim7_thread, &t[i]);
	}
	for (unsigned i = 0; i < a->p.tasks; i++) {
		if (!th[i])
			continue;
		rt_thread_join(th[i]);
		rc = rc ? rc : t[i].rc;
		*jobs += t[i].jobs;
		*run_delay_ns += t[i].run_delay_ns;
	}
	return rc;
}

static int aim7_fn(struct lab_rig *r, void *arg)
{
	struct aim7_run *a = arg;
	struct ujbd_stats before, after;
	struct rt_cpu_stats c0, c1;
	uint64_t jobs = 0, t0, delay = 0, kd0, kd1, ke;
	rt_world *w = rt_world_current();
	char dir[16];
	int rc = 0;

	for (unsigned i = 0; i < a->p.dirs && i < a->p.tasks && !rc; i++) {
		snprintf(dir, sizeof(dir), "/d%03u", i);
		rc = fs_mkdir(r->r_fs, dir);
	}
	rc = rc ? rc : ujbd_stats(r->r_j, &before);
	rt_world_cpu_stats(w, &c0);
	rt_world_thread_cpu_stats(w, "kjournald", &kd0, &ke);
	t0 = rt_now_ns();
	lab_tl_kind(r->r_tl, AIM7_TL_META, "create+write+stat+unlink");
	lab_tl_kind(r->r_tl, AIM7_TL_SYNC, "write+fsync+fsync");
	lab_tl_start(r->r_tl);
	rc = rc ? rc : aim7_tasks(r, a, &jobs, &delay);
	lab_tl_stop(r->r_tl);
	double ns = (double)(rt_now_ns() - t0), min = ns / 60e9;
	rc = rc ? rc : ujbd_stats(r->r_j, &after);
	rt_world_cpu_stats(w, &c1);
	rt_world_thread_cpu_stats(w, "kjournald", &kd1, &ke);
	double txns = (double)(after.ts_tid - before.ts_tid);
	rc = rc ? rc : lab_result_metric(a->out, "jobs_per_min", (double)jobs / min);
	rc = rc ? rc : aim7_info(a->out, &before, &after);
	/* where the CPUs went (the CPU model's accounting; cfs: run delays) */
	rc = rc ? rc : lab_result_metric(a->out, "cpu_busy_pct",
					  100.0 * (double)(c1.busy_ns - c0.busy_ns) /
						  (ns * a->p.ncpus));
	rc = rc ? rc : lab_result_metric(a->out, "cpu_spin_pct",
					  100.0 * (double)(c1.spin_ns - c0.spin_ns) /
						  (ns * a->p.ncpus));
	rc = rc ? rc : lab_result_metric(a->out, "task_run_delay_us_per_job",
					  jobs ? (double)delay / (double)jobs / 1e3 : 0);
	rc = rc ? rc : lab_result_metric(a->out, "kjournald_run_delay_ms_per_transaction",
					  txns > 0 ? (double)(kd1 - kd0) / txns / 1e6 : 0);
	return rc;
}

static const char *const aim7_variants[] = { "needed", "always", NULL };

static const char *const aim7_plot[] = {
	"jobs_per_min AIM7 jobs per minute",
	"useless_wakeups wakeups that found no work",
	NULL,
};

static int aim7_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct aim7_run a = { .out = out, .seed = lab_ctx_seed(c) };
	struct lab_rig_spec rs;
	char err[160];
	int rc;

	rt_param_defaults(&lab_aim7_param_table, &a.p);
	rc = rt_param_parse(&lab_aim7_param_table, &a.p, lab_ctx_params(c, "aim7"), err,
			    sizeof(err));
	if (rc)
		return rc;
	lab_rig_spec_init(&rs);
	if (strcmp(variant, "needed") == 0)
		rs.jopts.wake = UJBD_WAKE_NEEDED;
	else if (strcmp(variant, "always") == 0)
		rs.jopts.wake = UJBD_WAKE_ALWAYS;
	else
		return -EINVAL;
	/* 2.6.2x ext4 of the thread: jbd2 defaults, dirty 20/10 */
	rs.fsp.dirty_ratio = 20;
	rs.fsp.dirty_background_ratio = 10;
	rs.fsp.journal_place = FS_JOURNAL_MIDDLE;   /* mke2fs of 2013 */
	rs.fsp.fsync_sync = true;
	rs.jopts.wakeup_cpu_ns = a.p.wakeup_ns;
	rs.ncpus = a.p.ncpus;
	a.duration_ns = (lab_ctx_quick(c) ? 2 : 20) * RT_NS_PER_S;
	rs.timeline = out;
	lab_progress(c, "aim7 %s: %u tasks on %u CPUs, %.0f s", variant, a.p.tasks, a.p.ncpus,
		     (double)a.duration_ns / 1e9);
	return lab_rig_run(c, &rs, aim7_fn, &a);
}

static void aim7_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	static const char *const info[] = { "handles_per_transaction", "blocks_per_transaction",
					    "commit_us_avg", "locked_ms_avg" };
	char lab[200], why[256];
	size_t w = 0;

	if (!r[0] || !r[1])
		return;
	double nd = lab_result_get(r[0], "jobs_per_min"), al = lab_result_get(r[1], "jobs_per_min");
	double ratio = lab_ratio(al, nd);
	double useless = lab_result_get(r[0], "useless_wakeups");

	snprintf(lab, sizeof(lab), "%.0f (always) vs %.0f (needed) jobs/min; useless wakeups %.0f vs %.0f",
		 al, nd, lab_result_get(r[1], "useless_wakeups"), useless);
	w += (size_t)snprintf(why, sizeof(why), "%.0f useless wakeups x their CPU cost; always/needed:",
			      lab_result_get(r[1], "useless_wakeups"));
	for (size_t i = 0; i < 4 && w < sizeof(why); i++) {
		double va = lab_result_get(r[1], info[i]), vn = lab_result_get(r[0], info[i]);
		double q = lab_ratio(va, vn);

		/* a field that is 0 in both (no transaction ever locked long
		 * enough to count) has no ratio: say its values */
		if (isfinite(q))
			w += (size_t)snprintf(why + w, sizeof(why) - w, " %s %.2fx", info[i], q);
		else
			w += (size_t)snprintf(why + w, sizeof(why) - w, " %s %.3g vs %.3g",
					      info[i], va, vn);
	}
	lab_summary_row(out, "jobs/min always / needed", "~10 % slower with the needless wakeups",
			lab, ratio, "< 1 (measurably slower); needed: 0 useless",
			isfinite(ratio) && ratio < 0.99 && useless == 0, why);
}

/*
 * The info file's fields as the thread gives them (Eric Sandeen's mail of 11
 * Jan 2013, quoted in Jan Kara's reply: /proc/fs/jbd2/<dev>/info over a
 * whole AIM7 run, averaged over all devices): before "jbd2: fix fsync() tid
 * wraparound bug" (d9b0193), with it, and with the wake change.
 */
static const struct aim7_info_row {
	const char *label, *metric;
	double thread[3];
} aim7_info_rows[] = {
	{ "transactions", "transactions", { 3387.93, 2857.96, 3775.61 } },
	{ "waiting for transaction, ms", "waiting_ms_avg", { 102.661, 108.482, 92.9286 } },
	{ "running transaction, ms", "running_ms_avg", { 189, 266.286, 173.571 } },
	{ "transaction was being locked, ms", "locked_ms_avg", { 65.375, 71.625, 60.3036 } },
	{ "flushing data (ordered), ms", "flushing_ms_avg", { 17.8393, 2.76786, 16.6964 } },
	{ "logging transaction, ms", "logging_ms_avg", { 164.518, 252.625, 149.464 } },
	{ "average transaction commit time, us", "commit_us_avg", { 3694.29, 5932.82, 3849.07 } },
	{ "handles per transaction", "handles_per_transaction", { 2090.05, 2551.21, 1924.84 } },
	{ "blocks per transaction", "blocks_per_transaction", { 12.5893, 43.25, 13.3036 } },
	{ "logged blocks per transaction", "logged_blocks_per_transaction",
	  { 13.5893, 44.25, 14.3036 } },
};

/* The thread's three info blocks beside the lab's two, and needed / the
 * thread's first block per field (the regime: within 2x or not). */
static void aim7_table(const struct lab_result *const *r, FILE *f)
{
	fprintf(f, "\nthe info file, the thread's three blocks (whole AIM7 run, all devices) beside "
		   "the lab's (this run):\n%-36s %10s %10s %10s | %10s %10s %8s\n", "",
		"before", "d9b0193", "wake fix", "needed", "always", "needed/");
	fprintf(f, "%-36s %10s %10s %10s | %10s %10s %8s\n", "", "d9b0193", "(always)",
		"(needed)", "(lab)", "(lab)", "before");
	for (size_t i = 0; i < sizeof(aim7_info_rows) / sizeof(aim7_info_rows[0]); i++) {
		const struct aim7_info_row *w = &aim7_info_rows[i];
		double n = r[0] ? lab_result_get(r[0], w->metric) : NAN;
		double a = r[1] ? lab_result_get(r[1], w->metric) : NAN;
		double q = lab_ratio(n, w->thread[0]);

		fprintf(f, "%-36s %10.6g %10.6g %10.6g | %10.6g %10.6g %7.2fx%s\n", w->label,
			w->thread[0], w->thread[1], w->thread[2], n, a, q,
			isfinite(q) && q >= 0.5 && q <= 2 ? "" : " (beyond 2x)");
	}
	fputs("(the thread's commit time is jbd2's running average of the last commits, "
	      "not a mean over the run; its transactions count a whole run of unknown length)\n",
	      f);
}

const struct lab_scenario lab_scen_aim7 = {
	.s_name = "aim7",
	.s_thread = &lab_thread_002,
	.s_help = "AIM7-like small metadata jobs, CPU-bound: needless commit-thread wakeups",
	.s_variants = aim7_variants,
	.s_real = "real threads on this machine's CPUs (the CPU-only job spins): a wakeup costs "
		  "what it costs here, and the aim7 group's ncpus and wakeup_us are sim only",
	.s_run = aim7_run,
	.s_summary = aim7_summary,
	.s_plot = aim7_plot,
	.s_plot_title = "aim7: jobs per minute when fsync wakes the commit thread always or only "
			"when needed (the thread: about 10 % fewer with always)",
	.s_table = aim7_table,
};

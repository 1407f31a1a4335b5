/*
 * Scenario `flush` (today's kernel: ~0.6 s atime stalls once per commit,
 * not cured by priority): the `atime` workload on disks whose cache flush
 * costs from nothing to a lot, under `wait-io` (jbd2's wait on a buffer
 * whose journal copy is being written) and `copy` (ujbd's frozen copy).
 *
 * The one idea: the commit block goes with PREFLUSH|FUA, so the flush is
 * part of every commit; under wait-io an atime update that needs an inode
 * block being logged waits for that log write, and the log write waits
 * behind the flushes; under copy nobody waits for log I/O. The sweep is over
 * disk models whose flush cost is physics (the destage of the write cache),
 * not a number chosen here: no cache (the no-flush point), a large cache
 * (32 MiB, the top of the 16-32 MB that disks of 2007-2010 had), an SSD. (A 2 MiB point fits
 * between them; it is left out for the run-time budget.) flush_ms is what the flushes measured.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/real.h"
#include "lab/scen.h"

struct flush_point {
	const char *name;
	const char *model;
	const char *params;
};

/* cache sizes: disks of 2007-2010 had 16-32 MB of write cache; the SSD: the model's defaults (consumer, no power-loss
 * protection: a flush programs its cache). */
static const struct flush_point flush_points[] = {
	{ "hdd no cache", "hdd", "cache_mib=0" },
	{ "hdd 32 MiB cache", "hdd", "cache_mib=32" },
	{ "ssd", "ssd", NULL },
};
#define FLUSH_NPOINTS (sizeof(flush_points) / sizeof(flush_points[0]))

/* A real disk has one flush cost, its own: the sweep is its one point. */
static const struct flush_point flush_real_point = { "this disk", NULL, NULL };

/* Today's journal: jbd2's defaults (be:3, META, sync journal writes for
 * waited commits), the era's dirty limits 20/10 (2.6.29 on), cfq. */
static void flush_today(struct lab_rig_spec *rs)
{
	rs->elevator = "cfq";
	rs->fsp.atime = FS_ATIME_STRICT;
	rs->fsp.dirty_ratio = 20;
	rs->fsp.dirty_background_ratio = 10;
	rs->fsp.journal_place = FS_JOURNAL_MIDDLE;  /* today's mke2fs */
	rs->fsp.fsync_sync = true;
}

static int flush_point_run(const struct lab_ctx *c, const char *variant,
			   const struct flush_point *pt, struct lab_result *timeline,
			   double *flush_ms, struct lab_atime_sum *sum)
{
	struct lab_qwatch w;
	struct lab_rig_spec rs;
	struct lab_atime_opts o;
	int rc;

	memset(&w, 0, sizeof(w));
	lab_rig_spec_init(&rs);
	flush_today(&rs);
	rc = ujbd_under_commit_parse(variant, &rs.jopts.under_commit);
	if (rc)
		return rc;
	rs.disk_model = pt->model;
	rs.disk_params = pt->params;
	rs.trace_fn = lab_qwatch_fn;
	rs.trace_arg = &w;
	rs.timeline = timeline;
	atomic_store(&w.on, true);
	lab_atime_opts_init(&o, c);
	o.duration_ns = lab_ctx_quick(c) ? RT_NS_PER_S : 15 * RT_NS_PER_S / 2;
	rc = lab_atime_experiment(c, &rs, &o, NULL, sum);
	*flush_ms = w.flushes ? (double)w.flush_sum_ns / (double)w.flushes / 1e6 : 0;
	return rc;
}

static const char *const flush_variants[] = { "wait-io", "copy", NULL };

static int flush_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	double fms[FLUSH_NPOINTS], fg[FLUSH_NPOINTS], fj[FLUSH_NPOINTS];
	bool real = lab_real_path(c) != NULL;
	size_t n = real ? 1 : lab_ctx_quick(c) ? 2 : FLUSH_NPOINTS;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		const struct flush_point *pt = real ? &flush_real_point : &flush_points[i];
		struct lab_atime_sum sum = { 0 };

		lab_progress(c, "flush %s: %s", variant, pt->name);
		/* the timeline of the point whose flush costs most on the model (the
		   32 MiB cache), or of the one there is */
		rc = flush_point_run(c, variant, pt, i == (n > 1) ? out : NULL, &fms[i], &sum);
		fg[i] = sum.fg_max;
		fj[i] = sum.fg_journal_max;
	}
	rc = rc ? rc : lab_result_array(out, "flush_ms", fms, n);
	rc = rc ? rc : lab_result_array(out, "fg_latency_ms_max", fg, n);
	for (size_t i = 0; i < n && !rc; i++) {
		char key[64];

		snprintf(key, sizeof(key), "fg_latency_ms_max_%zu", i);
		rc = lab_result_metric(out, key, fg[i]);
		snprintf(key, sizeof(key), "flush_ms_%zu", i);
		rc = rc ? rc : lab_result_metric(out, key, fms[i]);
		snprintf(key, sizeof(key), "fg_journal_ms_max_%zu", i);
		rc = rc ? rc : lab_result_metric(out, key, fj[i]);
	}
	rc = rc ? rc : lab_result_array(out, "fg_journal_ms_max", fj, n);
	return rc;
}

/* The points' max latencies, their journal waits and flush costs, from
 * the per-point metrics, in the order of their measured flush cost. */
static size_t flush_fg(const struct lab_result *r, double *fg, double *fj, double *fms)
{
	size_t n = 0;
	char key[64];

	for (; n < FLUSH_NPOINTS; n++) {
		snprintf(key, sizeof(key), "fg_latency_ms_max_%zu", n);
		fg[n] = lab_result_get(r, key);
		snprintf(key, sizeof(key), "fg_journal_ms_max_%zu", n);
		fj[n] = lab_result_get(r, key);
		snprintf(key, sizeof(key), "flush_ms_%zu", n);
		fms[n] = lab_result_get(r, key);
		if (!isfinite(fg[n]) || !isfinite(fms[n]) || !isfinite(fj[n]))
			break;
	}
	for (size_t i = 1; i < n; i++) /* insertion sort by flush cost */
		for (size_t k = i; k > 0 && fms[k] < fms[k - 1]; k--) {
			double a = fms[k], b = fg[k], d = fj[k];

			fms[k] = fms[k - 1], fg[k] = fg[k - 1], fj[k] = fj[k - 1];
			fms[k - 1] = a, fg[k - 1] = b, fj[k - 1] = d;
		}
	return n;
}

/* Why the worst point is what it is: the journal, or the reader's own I/O. */
static void flush_why(const double *fg, const double *fj, size_t n, const char *variant,
		      char *why, size_t len)
{
	size_t w = 0;

	for (size_t i = 1; i < n; i++)
		w = fg[i] > fg[w] ? i : w;
	if (fj[w] >= 0.5 * fg[w])
		snprintf(why, len, "%s: the worst operation (%.0f ms) waited %.0f ms on the journal",
			 variant, fg[w], fj[w]);
	else
		snprintf(why, len, "%s: the worst operation (%.0f ms) waited %.0f ms on the journal; "
			 "the rest is its own read I/O behind the copy's writes", variant, fg[w],
			 fj[w]);
}

/* A real disk's one point: both variants beside each other, no verdict. */
static void flush_summary_real(const struct lab_result *const *r, struct lab_summary *out)
{
	double wi = lab_result_get(r[0], "fg_latency_ms_max_0");
	double cp = lab_result_get(r[1], "fg_latency_ms_max_0");
	char lab[160], why[200];

	snprintf(lab, sizeof(lab), "max %.0f ms (wait-io) vs %.0f ms (copy)", wi, cp);
	snprintf(why, sizeof(why), "one disk, one flush cost (%.3g ms a flush under wait-io), "
		 "%.0f / %.0f ms of it waits on the journal: the sweep is the sim's",
		 lab_result_get(r[0], "flush_ms_0"), lab_result_get(r[0], "fg_journal_ms_max_0"),
		 lab_result_get(r[1], "fg_journal_ms_max_0"));
	lab_summary_row(out, "max fg latency wait-io / copy, this disk",
			"~0.6 s stalls once per commit", lab, lab_ratio(wi, cp),
			"(needs a sweep of flush costs)", false, why);
}

static void flush_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	double fg[FLUSH_NPOINTS], fj[FLUSH_NPOINTS], fms[FLUSH_NPOINTS], worst = 0;
	char lab[160], why[200];
	size_t n;

	if (lab_real_path(lab_summary_ctx(out))) {
		if (r[0] && r[1])
			flush_summary_real(r, out);
		return;
	}
	if (r[0] && (n = flush_fg(r[0], fg, fj, fms)) >= 2) {
		bool grows = fg[n - 1] > fg[0];

		for (size_t i = 1; i < n; i++)
			grows = grows && fg[i] >= fg[i - 1];
		snprintf(lab, sizeof(lab), "max %.0f ms at %.2g ms flushes .. %.0f ms at %.3g ms",
			 fg[0], fms[0], fg[n - 1], fms[n - 1]);
		lab_summary_row(out, "wait-io: max fg latency, costliest / cheapest flush",
				"~0.6 s stalls once per commit", lab, lab_ratio(fg[n - 1], fg[0]),
				"grows with the flush cost", grows,
				(flush_why(fg, fj, n, "wait-io", why, sizeof(why)), why));
	}
	/* copy: against the no-flush point (sweep point 0, the HDD without a
	 * cache), over the points of the same disk and the rest */
	if (r[1] && isfinite(lab_result_get(r[1], "fg_latency_ms_max_0"))) {
		double ref = lab_result_get(r[1], "fg_latency_ms_max_0");

		n = flush_fg(r[1], fg, fj, fms);
		for (size_t i = 0; i < n; i++)
			worst = fg[i] > worst ? fg[i] : worst;
		double ratio = lab_ratio(worst, ref);

		snprintf(lab, sizeof(lab), "max %.0f ms (no-flush point), worst %.0f ms", ref, worst);
		lab_summary_row(out, "copy: worst max fg latency / no-flush point",
				"(not cured by priority)", lab, ratio, "<= 2x",
				isfinite(ratio) && ratio <= 2,
				(flush_why(fg, fj, n, "copy", why, sizeof(why)), why));
	}
}

const struct lab_scenario lab_scen_flush = {
	.s_name = "flush",
	.s_thread = NULL,
	.s_help = "the atime workload over a sweep of cache-flush costs: wait-io vs copy",
	.s_variants = flush_variants,
	.s_run = flush_run,
	.s_summary = flush_summary,
	.s_timeline = "the HDD with a 32 MiB write cache, the sweep's second disk",
	.s_real = "one point, this disk's own flush (the sweep's disks are sim models): the "
		  "goals need a sweep, so the summary gives the point and no verdict",
};

/*
 * The lab runner and report with a scenario of the test's own ("selftest",
 * never shipped): results keep insertion order and refuse bad input
 * without changing, selection by scenario and variant, a failing variant is
 * reported and the others run, the JSON document is a function of the seed
 * (byte for byte), the text report holds the tables and summaries, and
 * --out writes the files (PNGs when gnuplot is there).
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/rig.h"
#include "lab/runner.h"
#include "t.h"
#include "t_sim.h"

static const char *const self_variants[] = { "base", "fast:2", "broken", "mute", NULL };
static const char *const other_variants[] = { "one", NULL };

static int self_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	double k = (double)lab_ctx_seed(c) + (strcmp(variant, "base") ? 2 : 1);
	struct rt_hist lat;
	double t[20], sec[20], fx[3] = { 0, 10, 20 }, fy[3];
	int rc = 0;

	if (!strcmp(variant, "broken")) {
		lab_fail_why("the disk \"%s\" said no", "x");
		return -EIO;
	}
	if (!strcmp(variant, "mute"))
		return -ENOSPC; /* no why: the errno's text alone */
	rt_hist_init(&lat);
	for (size_t i = 0; i < 50; i++)
		rt_hist_add(&lat, (uint64_t)(k * (double)((i * 7) % 50 + 1) * 1e5));
	for (size_t i = 0; i < 20; i++)
		t[i] = (double)i / 10, sec[i] = (double)(i * 1000 % 7919) * k;
	for (size_t i = 0; i < 3; i++)
		fy[i] = k * (double)(i + 1);
	rc |= lab_result_metric(out, "total_ms", 100 * k);
	rc |= lab_result_metric(out, "copy_mb_s", 10 / k);
	rc |= lab_result_metric(out, "zero_count", 0);
	rc |= lab_result_array(out, "flush_ms", fx, 3);
	rc |= lab_result_array(out, "fg_latency_ms_max", fy, 3);
	rc |= lab_result_hist(out, "fg_latency_ms", &lat);
	rc |= lab_result_series(out, "sector_vs_time", t, sec, 20);
	rc |= lab_result_text(out, "blktrace", "  8,0    0        1     0.000000000  1  Q  WS 8 + 8 [kjournald]\n");
	/* latencytop's view of the worst operation, and a timeline as the rig records it */
	rc |= lab_result_metric(out, "fg_worst_ms", 10 * k);
	rc |= lab_result_metric(out, "fg_worst_commit_ms", 7 * k);
	rc |= lab_result_metric(out, "fg_worst_buffer_ms", 0);
	rc |= lab_result_metric(out, "fg_worst_other_ms", 3 * k);
	{
		double bx = 0.25, by = 8, qx[3] = { 0, 1, 2 }, qy[3] = { 2, 5, 5 };
		double px[2] = { 0.25, 0.5 }, py[2] = { 1, 0.5 }, ox[3] = { 0.1, 0.9, 1.7 };
		double oy[3] = { 1, 40 * k, 2 };

		rc |= lab_result_series(out, "tl_bins", &bx, &by, 1);
		rc |= lab_result_series(out, "tl_queue", qx, qy, 3);
		rc |= lab_result_series(out, "tl_commit_flushing", px, py, 2);
		rc |= lab_result_series(out, "tl_op:read", ox, oy, 3);
	}
	return rc;
}

static void self_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	double a = r[0] ? lab_result_get(r[0], "total_ms") : NAN;
	double b = r[1] ? lab_result_get(r[1], "total_ms") : NAN;

	lab_summary_row(out, "total base / fast", "2x", "lab <figure>", a / b, ">= 0.5x",
			a / b >= 0.5, "because \"fast\" is faster & cheaper");
	lab_summary_row(out, "no ratio", "-", "-", NAN, "-", false, "nothing to compare");
	lab_summary_row(out, "the disk", "-", lab_ctx_disk(lab_summary_ctx(out)), NAN, "-", false,
			"a summary sees the run's context");
}

static int other_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	return lab_result_metric(out, "x", (double)lab_ctx_quick(c));
}

static const struct lab_thread other_thread = {
	"000", "A test thread", "test-list", "1 Jan 2000", "A. Tester", "a claim, 2x",
};
static const char *const self_plot[] = { "total_ms the whole run (ms)", "nosuch no variant has it",
					 "copy_mb_s", NULL };
static const struct lab_scenario self_scen = {
	.s_name = "selftest", .s_help = "the runner's own test", .s_variants = self_variants,
	.s_run = self_run, .s_summary = self_summary, .s_real = "the same numbers, no disk touched",
	.s_plot = self_plot, .s_plot_title = "the test's \"finding\": a bar per variant",
};
static const struct lab_scenario other_scen = {
	.s_name = "other", .s_thread = &other_thread, .s_help = "a second scenario",
	.s_variants = other_variants, .s_run = other_run,
};
static const struct lab_scenario *const table[] = { &self_scen, &other_scen };

static void t_result(void)
{
	struct lab_result *r;
	double v[2] = { 1, NAN };

	T_EQ(lab_result_new(&r), 0);
	T_EQ(lab_result_metric(r, "a", 1), 0);
	T_EQ(lab_result_metric(r, "b", 2), 0);
	T_EQ(lab_result_metric(r, "a", 3), 0);      /* replaced in place */
	T_EQ(lab_result_count(r), 2);
	T_STREQ(lab_result_item(r, 0)->i_name, "a");
	T_CHECK(lab_result_get(r, "a") == 3);
	T_EQ(lab_result_metric(r, "c", NAN), -EINVAL);
	T_EQ(lab_result_metric(r, "c", INFINITY), -EINVAL);
	T_EQ(lab_result_metric(r, "bad name", 1), -EINVAL);
	T_EQ(lab_result_metric(r, "", 1), -EINVAL);
	T_EQ(lab_result_array(r, "d", v, 2), -EINVAL);
	T_EQ(lab_result_series(r, "e", v, NULL, 1), -EINVAL);
	T_EQ(lab_result_count(r), 2);               /* failures changed nothing */
	T_CHECK(isnan(lab_result_get(r, "c")));
	T_EQ(lab_result_array(r, "d", v, 1), 0);
	T_CHECK(isnan(lab_result_get(r, "d")));     /* an array is not a metric */
	lab_result_free(r);
}

static void t_ctx(void)
{
	struct lab_ctx *c;
	char err[128] = "";

	T_EQ(lab_ctx_new(&c), 0);
	T_EQ(lab_ctx_seed(c), 1);
	T_STREQ(lab_ctx_disk(c), "hdd");
	T_EQ(lab_ctx_world(c), RT_WORLD_SIM);
	T_EQ(lab_ctx_set_disk(c, "floppy"), -EINVAL);
	T_EQ(lab_ctx_set_disk(c, "file:"), -EINVAL);
	T_STREQ(lab_ctx_disk(c), "hdd");
	T_EQ(lab_ctx_set_disk(c, "file:/tmp/x"), 0);
	T_STREQ(lab_ctx_disk(c), "file:/tmp/x");
	T_STREQ(lab_ctx_params(c, "hdd"), "");
	T_EQ(lab_ctx_add_params(c, "hdd", "rpm=5400", err, sizeof(err)), 0);
	T_EQ(lab_ctx_add_params(c, "hdd", "seek_avg_ms=9.5", err, sizeof(err)), 0);
	T_STREQ(lab_ctx_params(c, "hdd"), "rpm=5400,seek_avg_ms=9.5");
	T_EQ(lab_ctx_add_params(c, "hdd", "seek_avg_ms=100", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "seek_avg_ms") != NULL);  /* the table's range */
	T_STREQ(lab_ctx_params(c, "hdd"), "rpm=5400,seek_avg_ms=9.5");
	T_EQ(lab_ctx_add_params(c, "nosuch", "a=1", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "nosuch") != NULL);
	T_EQ(lab_ctx_add_params(c, "cfq", "novalue", err, sizeof(err)), -EINVAL);
	T_STREQ(lab_ctx_params(c, "cfq"), "");
	/* a group with no parameters takes none, as devbench says: not a list
	 * recorded, printed in the banner, and never read */
	T_EQ(lab_ctx_add_params(c, "noop", "a=1", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --noop: 'a=1': no parameters (see --params)");
	T_STREQ(lab_ctx_params(c, "noop"), "");
	T_EQ(lab_ctx_ngroups(c), 1);
	lab_ctx_free(c);
}

static void t_select(void)
{
	struct lab_ctx *c;
	struct lab_run *run = NULL;
	char err[128] = "";

	T_EQ(lab_ctx_new(&c), 0);
	T_EQ(lab_run_new_from(table, 2, c, "nope", NULL, &run, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "'nope'") != NULL);
	T_EQ(lab_run_new_from(table, 2, c, "other", "base", &run, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "'base'") != NULL);
	T_EQ(lab_run_new_from(table, 2, c, "selftest,", NULL, &run, err, sizeof(err)), -EINVAL);
	T_EQ(lab_run_new_from(table, 2, c, NULL, "fast:2", &run, err, sizeof(err)), 0);
	T_EQ(run->r_n, 1);                          /* "other" has no fast:2 */
	T_EQ(run->r_scen[0].sr_rc[0], 1);           /* base not selected */
	T_EQ(lab_run_all(run), 0);
	T_CHECK(run->r_scen[0].sr_res[0] == NULL);
	T_CHECK(run->r_scen[0].sr_res[1] != NULL);
	lab_run_free(run);
	T_EQ(lab_run_new_from(table, 2, c, "", "", &run, err, sizeof(err)), 0);
	T_EQ(run->r_n, 2);
	lab_run_free(run);
	lab_ctx_free(c);
}

/* The JSON document (or the text) of a full run with seed into a string;
 * file: a real disk's PATH (the real world), NULL for the sim. */
static char *report_on(uint64_t seed, bool json, size_t *failed, const char *file)
{
	struct lab_ctx *c;
	struct lab_run *run = NULL;
	char *buf = NULL, disk[300];
	size_t len = 0;
	FILE *f;

	if (lab_ctx_new(&c))
		return NULL;
	lab_ctx_set_seed(c, seed);
	snprintf(disk, sizeof(disk), "file:%s", file ? file : "");
	if (file && (lab_ctx_set_disk(c, disk) || (lab_ctx_set_world(c, RT_WORLD_REAL), 0))) {
		lab_ctx_free(c);
		return NULL;
	}
	if (lab_run_new_from(table, 2, c, NULL, NULL, &run, NULL, 0)) {
		lab_ctx_free(c);
		return NULL;
	}
	*failed = lab_run_all(run);
	f = open_memstream(&buf, &len);
	if (f) {
		json ? lab_report_json(f, run) : lab_report_text(f, run, LAB_TEXT_TEXTS);
		fclose(f);
	}
	lab_run_free(run);
	lab_ctx_free(c);
	return buf;
}

static char *report_of(uint64_t seed, bool json, size_t *failed)
{
	return report_on(seed, json, failed, NULL);
}

static void t_json(void)
{
	size_t failed = 0;
	char *a = report_of(7, true, &failed), *b = report_of(7, true, &failed),
	     *d = report_of(8, true, &failed);

	T_CHECK(a && b && d);
	T_EQ(failed, 2);                            /* "broken", "mute" */
	T_STREQ(a, b);
	T_CHECK(strcmp(a, d) != 0);
	T_CHECK(!strncmp(a, "{\"seed\": 7, \"version\": \"", 24));
	T_CHECK(strstr(a, "\"params_changed\": {}, \"params\": {") != NULL);
	T_CHECK(strstr(a, "\"other\": {\"thread\": {\"id\": \"000\", \"subject\": \"A test thread\", "
			  "\"list\": \"test-list\", \"date\": \"1 Jan 2000\", \"author\": \"A. Tester\", "
			  "\"claim\": \"a claim, 2x\"}, ") != NULL);
	T_CHECK(strstr(a, "\"selftest\": {\"thread\": null, ") != NULL);
	/* the thread's figure under its name, and under the old one */
	T_CHECK(strstr(a, "\"thread_figure\": \"2x\", \"seed_figure\": \"2x\"") != NULL);
	T_CHECK(strstr(a, "\"met\": true, \"verdict\": \"met\"") != NULL);
	T_CHECK(strstr(a, "\"variants\": {\"base\": {\"total_ms\": 800, "
			  "\"copy_mb_s\": 1.25, \"zero_count\": 0, \"flush_ms\": [0, 10, 20], "
			  "\"fg_latency_ms_max\": [8, 16, 24], \"fg_worst_ms\": 80, "
			  "\"fg_worst_commit_ms\": 56, \"fg_worst_buffer_ms\": 0, "
			  "\"fg_worst_other_ms\": 24}") != NULL);
	T_CHECK(strstr(a, "\"failed\": {\"broken\": \"the disk \\\"x\\\" said no (Input/output error)\", "
			  "\"mute\": \"No space left on device\"}") != NULL);
	T_CHECK(strstr(a, "\"why\": \"because \\\"fast\\\" is faster & cheaper\"") != NULL);
	T_CHECK(strstr(a, "\"ratio\": null") != NULL);
	T_CHECK(strstr(a, "sector_vs_time") == NULL); /* series stay out of the document */
	T_CHECK(strstr(a, "\"variants\": {\"one\": {\"x\": 0}}") != NULL);
	T_CHECK(strstr(a, "\"lab_figure\": \"hdd\"") != NULL); /* the summary saw the ctx */
	T_CHECK(!strstr(a, "\"machine\"") && !strstr(a, "\"real_world\"")); /* sim: absent */
	free(a), free(b), free(d);
}

/* On a real disk the report says what is underneath and what each scenario
 * means there (its s_real), in JSON and in text. */
static void t_real(void)
{
	size_t failed = 0;
	char *j = report_on(1, true, &failed, "/nonexistent/lab.img");
	char *t = report_on(1, false, &failed, "/nonexistent/lab.img");

	T_CHECK(j && t);
	T_CHECK(strstr(j, "\"world\": \"real\", \"disk\": \"file:/nonexistent/lab.img\", "
			  "\"machine\": {\"device\": \"\", \"scheduler\": \"\", "
			  "\"rotational\": null, \"direct\": true, \"cpus\": ") != NULL);
	T_CHECK(strstr(j, "\"real_world\": \"the same numbers, no disk touched\"}") != NULL);
	T_CHECK(strstr(j, "\"lab_figure\": \"file:/nonexistent/lab.img\"") != NULL);
	T_CHECK(strstr(t, "\nreal disk: /nonexistent/lab.img on no block device (") != NULL);
	T_CHECK(strstr(t, "== selftest (no thread: the lab's own question): the runner's own test\n"
			  "on a real disk: the same numbers, no disk touched\n") != NULL);
	T_CHECK(strstr(t, "== other (thread 000, \"A test thread\", test-list, 1 Jan 2000, A. Tester): "
			  "a second scenario\nmetric") != NULL);
	free(j), free(t);
}

static void t_text(void)
{
	size_t failed = 0;
	char *s = report_of(1, false, &failed);

	T_CHECK(s != NULL);
	T_CHECK(strstr(s, "== selftest (no thread: the lab's own question): the runner's own test") != NULL);
	T_CHECK(strstr(s, "== other (thread 000, ") != NULL);
	T_CHECK(strstr(s, "seed") && !strstr(s, "(seed 000)")); /* "seed" is the random seed */
	T_CHECK(!strncmp(s, "ujbd lab ", 9) && strstr(s, ": seed 1, full run, sim world, disk hdd; "
						     "parameters changed from their defaults: none\n"));
	/* the summary last: after every scenario, then one closing line */
	T_CHECK(strstr(s, "== summary") > strstr(s, "== other ("));
	T_CHECK(strstr(s, "\nscenario | what ") != NULL);
	T_CHECK(strstr(s, "selftest | total base / fast | 2x ") != NULL);
	T_CHECK(strstr(s, ", seed 1: 1 of 3 goals met; 2 variants failed\n") != NULL);
	T_CHECK(s[strlen(s) - 1] == '\n' && strstr(s, "2 variants failed\n") + 18 == s + strlen(s));
	T_CHECK(strstr(s, "variant broken failed: the disk \"x\" said no (Input/output error)\n") != NULL);
	T_CHECK(strstr(s, "variant mute failed: No space left on device\n") != NULL);
	T_CHECK(strstr(s, "total_ms") && strstr(s, "fast:2"));
	T_CHECK(strstr(s, "| 0.667 |") != NULL); /* total base / fast: 200 / 300 */
	T_CHECK(strstr(s, "[kjournald]") != NULL);   /* LAB_TEXT_TEXTS: report.txt's */
	T_CHECK(strstr(s, "[kjournald]") < strstr(s, "== summary"));
	free(s);
}

/* The terminal's report has no texts (blktrace goes only to --out); a quick run says so
 * on its first line and in every verdict. */
static void t_text_terminal(void)
{
	struct lab_ctx *c;
	struct lab_run *run = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	T_EQ(lab_ctx_new(&c), 0);
	lab_ctx_set_quick(c, true);
	T_EQ(lab_ctx_add_params(c, "hdd", "rpm=5400", NULL, 0), 0);
	T_EQ(lab_run_new_from(table, 2, c, NULL, NULL, &run, NULL, 0), 0);
	lab_run_all(run);
	f = open_memstream(&buf, &len);
	T_CHECK(f != NULL);
	T_EQ(lab_report_text(f, run, 0), 0);
	fclose(f);
	T_CHECK(strstr(buf, "[kjournald]") == NULL);
	T_CHECK(strstr(buf, ": seed 1, QUICK run (") != NULL);
	T_CHECK(strstr(buf, "parameters changed from their defaults: --hdd=rpm=5400\n") != NULL);
	T_CHECK(strstr(buf, "| - (quick) |") != NULL);
	T_CHECK(strstr(buf, "| yes ") == NULL && strstr(buf, "| no  ") == NULL);
	T_CHECK(strstr(buf, ", seed 1: QUICK run, 3 rows, no verdicts") != NULL);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	T_CHECK(f != NULL);
	T_EQ(lab_report_json(f, run), 0);
	fclose(f);
	T_CHECK(strstr(buf, "\"quick\": true") != NULL);
	T_CHECK(strstr(buf, "\"params_changed\": {\"hdd\": \"rpm=5400\"}") != NULL);
	T_CHECK(strstr(buf, "\"verdict\": \"none (quick)\"") != NULL);
	free(buf);
	lab_run_free(run);
	lab_ctx_free(c);
}

static bool file_nonempty(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !stat(p, &st) && st.st_size > 0;
}

/* grep -q PATTERN dir/name: 0 when found. */
static int grep_in(const char *dir, const char *name, const char *pattern)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "grep -q -- '%s' '%s/%s'", pattern, dir, name);
	return system(cmd);
}

static void t_dir(void)
{
	char dir[] = "/tmp/test_lab.XXXXXX", err[256] = "", cmd[600];
	struct lab_ctx *c;
	struct lab_run *run = NULL;
	bool gnuplot = !system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1");

	T_CHECK(mkdtemp(dir) != NULL);
	T_EQ(lab_ctx_new(&c), 0);
	T_EQ(lab_run_new_from(table, 2, c, NULL, NULL, &run, NULL, 0), 0);
	lab_run_all(run);
	T_EQ(lab_report_dir(run, dir, err, sizeof(err)), 0);
	T_CHECK(file_nonempty(dir, "lab.json") && file_nonempty(dir, "report.txt"));
	T_CHECK(file_nonempty(dir, "report.html"));
	snprintf(cmd, sizeof(cmd), "grep -qF '<p>variant broken failed: the disk &quot;x&quot; said no "
		 "(Input/output error)</p>' '%s/report.html'", dir);
	T_EQ(system(cmd), 0);
	T_CHECK(file_nonempty(dir, "selftest_fast_2_metrics.csv"));
	T_CHECK(file_nonempty(dir, "selftest_base_data.csv"));
	T_CHECK(file_nonempty(dir, "selftest_base_blktrace.txt"));
	T_CHECK(file_nonempty(dir, "selftest_flush.gp"));
	T_CHECK(!file_nonempty(dir, "selftest_bars.gp"));   /* no chart relative to a variant */
	T_CHECK(file_nonempty(dir, "selftest_fg_latency_ms_ccdf.gp"));
	snprintf(cmd, sizeof(cmd), "grep -q 'set logscale xy' '%s/selftest_fg_latency_ms_ccdf.gp'", dir);
	T_EQ(system(cmd), 0);
	/* the flush sweep's points in flush-cost order */
	snprintf(cmd, sizeof(cmd), "sort -n -c '%s/selftest_base_flush.dat'", dir);
	T_EQ(system(cmd), 0);
	/* the answer first: the overview table before the first section */
	snprintf(cmd, sizeof(cmd), "awk '/<table class=ov>/ { t = NR } /<section id=/ && !h { h = NR } "
		 "END { exit !(t && t < h) }' '%s/report.html' && grep -q 'A test thread&rdquo;, "
		 "test-list, 1 Jan 2000, A. Tester' '%s/report.html'", dir, dir);
	T_EQ(system(cmd), 0);
	T_CHECK(file_nonempty(dir, "selftest_base_sector_vs_time.gp"));
	/* every plot has a title and labelled axes (units in brackets where they have one) */
	snprintf(cmd, sizeof(cmd), "cd '%s' && for f in *.gp; do grep -q '^set multiplot.* title \"' $f "
		 "|| grep -q '^set title \"' $f || exit 1; grep -q '^set xlabel \"..' $f || exit 1; "
		 "grep -q '^set ylabel \"..' $f || exit 1; done", dir);
	T_EQ(system(cmd), 0);
	/* the finding first: a bar per variant for each s_plot metric some variant has, titled
	   as the scenario says */
	T_CHECK(file_nonempty(dir, "selftest_finding.gp") && file_nonempty(dir, "selftest_finding.dat"));
	T_EQ(grep_in(dir, "selftest_finding.gp", "^set multiplot layout 1,2 title \"the test.s \\\\\"finding"), 0);
	T_EQ(grep_in(dir, "selftest_finding.gp", "^set ylabel \"the whole run (ms)\""), 0);
	T_EQ(grep_in(dir, "selftest_finding.dat", "^fast:2 300 3.33333333$"), 0);
	/* latencytop's view: a segment per cause that some variant has, stacked */
	T_EQ(grep_in(dir, "selftest_causes.gp", "^set style histogram rowstacked"), 0);
	T_EQ(grep_in(dir, "selftest_causes.dat", "^# variant commit other$"), 0);
	T_EQ(grep_in(dir, "selftest_causes.dat", "^base 14 6$"), 0);
	/* the timeline: three panels on one time axis, from the tl_* series, which get no plot
	   of their own */
	T_CHECK(file_nonempty(dir, "selftest_base_timeline.gp"));
	T_EQ(grep_in(dir, "selftest_base_timeline.gp", "^set ylabel \"operation (ms)\""), 0);
	T_EQ(grep_in(dir, "selftest_base_timeline.gp", "^set ylabel \"commit (share)\""), 0);
	T_EQ(grep_in(dir, "selftest_base_timeline.gp", "^set ylabel \"requests queued\""), 0);
	T_EQ(grep_in(dir, "selftest_base_timeline.gp", "^set xlabel \"time since the measurement"), 0);
	T_EQ(grep_in(dir, "selftest_base_timeline.dat", "^0.25 0 1 0$"), 0);
	T_CHECK(!file_nonempty(dir, "selftest_base_tl_queue.gp"));
	/* a caption with the numbers under every plot, the finding first in the section */
	snprintf(cmd, sizeof(cmd), "test $(grep -c '<figure>' '%s/report.html') -gt 5 && "
		 "test $(grep -c '<figure>' '%s/report.html') = $(grep -c '<figcaption>' '%s/report.html')",
		 dir, dir, dir);
	T_EQ(system(cmd), 0);
	T_EQ(grep_in(dir, "report.html", "<figcaption>A bar per variant. total_ms: base 200, fast:2 300;"), 0);
	T_EQ(grep_in(dir, "report.html", "base 20 ms = 14 commit + 6 other"), 0);
	T_EQ(grep_in(dir, "report.html", "the slowest read 80 ms at 0.9 s;"), 0);
	snprintf(cmd, sizeof(cmd), "awk '/<section id=\"selftest\">/ { s = 1 } s && /<img / { "
		 "exit !/selftest_finding.png/ }' '%s/report.html'", dir);
	if (gnuplot)
		T_EQ(system(cmd), 0);
	if (gnuplot) {
		T_CHECK(file_nonempty(dir, "selftest_flush.png"));
		T_CHECK(file_nonempty(dir, "selftest_fg_latency_ms_ccdf.png"));
		T_CHECK(file_nonempty(dir, "selftest_fast_2_sector_vs_time.png"));
		T_CHECK(file_nonempty(dir, "selftest_finding.png"));
		T_CHECK(file_nonempty(dir, "selftest_causes.png"));
		T_CHECK(file_nonempty(dir, "selftest_fast_2_timeline.png"));
		T_CHECK(!file_nonempty(dir, "gnuplot.log")); /* no warning either */
	} else {
		printf("  (gnuplot missing: PNGs not checked)\n");
	}
	T_EQ(lab_report_dir_check(dir, err, sizeof(err)), 0);
	T_CHECK(lab_report_dir_check("/proc/nonexistent/x", err, sizeof(err)) < 0);
	T_CHECK(strstr(err, "/proc/nonexistent/x") != NULL);
	T_CHECK(lab_report_dir(run, "/proc/nonexistent/x", err, sizeof(err)) < 0);
	T_CHECK(strstr(err, "/proc/nonexistent/x") != NULL);
	lab_run_free(run);
	lab_ctx_free(c);
	if (getenv("LAB_TEST_KEEP")) { /* to look at the report */
		printf("  kept %s\n", dir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	T_EQ(system(cmd), 0);
}

/* The same run written twice: every file the same, byte for byte (PNGs too). */
static void t_dir_same(void)
{
	char a[] = "/tmp/test_lab.XXXXXX", b[] = "/tmp/test_lab.XXXXXX", err[256] = "", cmd[300];
	struct lab_ctx *c;
	struct lab_run *run = NULL;

	T_CHECK(mkdtemp(a) != NULL && mkdtemp(b) != NULL);
	T_EQ(lab_ctx_new(&c), 0);
	T_EQ(lab_run_new_from(table, 2, c, NULL, NULL, &run, NULL, 0), 0);
	lab_run_all(run);
	T_EQ(lab_report_dir(run, a, err, sizeof(err)), 0);
	lab_run_free(run);
	T_EQ(lab_run_new_from(table, 2, c, NULL, NULL, &run, NULL, 0), 0);
	lab_run_all(run);
	T_EQ(lab_report_dir(run, b, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "diff -r '%s' '%s' >/dev/null", a, b);
	T_EQ(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", a, b);
	T_EQ(system(cmd), 0);
	lab_run_free(run);
	lab_ctx_free(c);
}

/* The timeline's bins, in a sim world: what came before the start or after the stop is
 * not binned (the queue's depth is still counted), a run longer than the bins merges them,
 * and each bin keeps the most requests queued, the commit's time per phase and each
 * kind's slowest operation. */
struct tl_test {
	struct lab_result *r;
	int rc;
};

static void tl_body(void *arg)
{
	struct tl_test *t = arg;
	struct lab_timeline *tl;
	struct blk_trace_event in = { .action = 'I' }, done = { .action = 'C' };
	struct ujbd_trace_event ev = { .kind = UJBD_TR_START_COMMIT };
	uint64_t t0;

	if ((t->rc = lab_tl_new(&tl)))
		return;
	lab_tl_kind(tl, 0, "op");
	lab_tl_blk(tl, &in);                     /* one request in before the start */
	lab_tl_op(tl, 0, rt_now_ns());           /* not recorded: not started */
	rt_sleep_ns(10 * RT_NS_PER_MS);
	lab_tl_start(tl);
	t0 = rt_now_ns();
	rt_sleep_ns(3 * RT_NS_PER_MS);
	lab_tl_op(tl, 0, t0);                    /* 3 ms at 0 */
	lab_tl_blk(tl, &in);
	lab_tl_blk(tl, &in);                     /* 3 in at 3 ms */
	lab_tl_jbd(tl, &ev);
	ev.kind = UJBD_TR_COMMIT_LOCKING;
	lab_tl_jbd(tl, &ev);                     /* locked from 3 ms */
	rt_sleep_ns(2 * RT_NS_PER_MS);
	ev.kind = UJBD_TR_COMMIT_FLUSHING;
	lab_tl_jbd(tl, &ev);                     /* flushing from 5 ms */
	for (int i = 0; i < 3; i++)
		lab_tl_blk(tl, &done);           /* none in from 5 ms */
	rt_sleep_ns(1000 * RT_NS_PER_MS);        /* past 512 bins of 1 ms: 4 ms bins */
	ev.kind = UJBD_TR_END_COMMIT;
	lab_tl_jbd(tl, &ev);                     /* done at 1005 ms */
	t0 = rt_now_ns();
	rt_sleep_ns(50 * RT_NS_PER_MS);
	lab_tl_op(tl, 0, t0);                    /* 50 ms at 1005 ms */
	lab_tl_stop(tl);                         /* at 1055 ms */
	lab_tl_op(tl, 0, t0);                    /* not recorded: stopped */
	t->rc = lab_tl_report(tl, t->r);
	lab_tl_free(tl);
}

static double series_sum(const struct lab_item *it)
{
	double sum = 0;

	for (size_t j = 0; it && j < it->i_n; j++)
		sum += it->i_y[j];
	return sum;
}

static void t_timeline(void)
{
	struct tl_test t = { NULL, 0 };
	const struct lab_item *it[6] = { NULL };
	static const char *const names[6] = { "tl_bins", "tl_queue", "tl_commit_locked",
					      "tl_commit_flushing", "tl_commit_logging", "tl_op:op" };

	T_EQ(lab_result_new(&t.r), 0);
	T_EQ(t_sim_run(1, tl_body, &t), 0);
	T_EQ(t.rc, 0);
	for (size_t i = 0; i < lab_result_count(t.r); i++)
		for (size_t n = 0; n < 6; n++)
			if (!strcmp(lab_result_item(t.r, i)->i_name, names[n]))
				it[n] = lab_result_item(t.r, i);
	T_CHECK(it[0] && it[1] && it[2] && it[3] && !it[4] && it[5]);
	if (!it[0] || !it[1] || !it[2] || !it[3] || !it[5])
		return;
	T_CHECK(fabs(it[0]->i_x[0] - 0.004) < 1e-12);       /* 1 ms bins, twice merged */
	T_CHECK(it[0]->i_y[0] == 264);                      /* up to 1055 ms */
	T_EQ(it[1]->i_n, 3);                                /* 3 in, then none, then the end */
	T_CHECK(it[1]->i_x[0] == 0 && it[1]->i_y[0] == 3);
	T_CHECK(fabs(it[1]->i_x[1] - 0.008) < 1e-12 && it[1]->i_y[1] == 0);
	T_CHECK(fabs(it[1]->i_x[2] - 1.055) < 1e-12);
	T_CHECK(fabs(series_sum(it[2]) * 0.004 - 0.002) < 1e-9);   /* locked 2 ms */
	T_CHECK(fabs(series_sum(it[3]) * 0.004 - 1.000) < 1e-9);   /* flushing 1 s */
	T_EQ(it[5]->i_n, 2);
	T_CHECK(it[5]->i_x[0] == 0 && fabs(it[5]->i_y[0] - 3) < 1e-9);
	T_CHECK(fabs(it[5]->i_x[1] - 1.005) < 1e-9 && fabs(it[5]->i_y[1] - 50) < 1e-9);
	lab_result_free(t.r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_result);
	T_RUN(t_ctx);
	T_RUN(t_select);
	T_RUN(t_json);
	T_RUN(t_text);
	T_RUN(t_text_terminal);
	T_RUN(t_real);
	T_RUN(t_dir);
	T_RUN(t_dir_same);
	T_RUN(t_timeline);
	return t_done(argv[0]);
}

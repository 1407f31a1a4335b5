/*
 * lab report files: `ujbd lab --out=DIR`.
 *
 * The one idea: every file is a plain function of the run (so the same seed
 * writes the same CSV, JSON, scripts and HTML), the plots are gnuplot
 * scripts beside their data, and report.html only links the PNGs gnuplot
 * made from them (relative links: open it from the directory, no server).
 * Without gnuplot the scripts and data are still written and the page says
 * the plots are missing.
 *
 * Files, with S the scenario and V the variant (file-name-safe: see
 * lab_file_name):
 *   lab.json, report.txt            the JSON document and the text report
 *   S_V_metrics.csv                 name,index,value (index: arrays only)
 *   S_V_data.csv                    kind,name,index,x,y (hist: bucket top ms, count)
 *   S_V_NAME.txt                    each text (blktrace excerpts, notes)
 *   S_NAME_ccdf.{gp,png}            latency tail of histogram NAME (complementary
 *                                   CDF, log axes), a line per variant
 *   S_flush.{gp,png}                arrays flush_ms against fg_latency_ms_max,
 *                                   sorted by flush_ms, a line per variant
 *   S_V_NAME.{gp,png}               series NAME (Y_vs_X: x against y), points
 *   report.html, gnuplot.log
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/real.h"
#include "lab/runner.h"
#include "ujbd/ujbd.h"

#define NUM_FMT "%.9g"
#define LAB_PATH_MAX 4096
#define LAB_NAME_BUF 1024
#define LAB_MAX_PLOTS 256

/* What --out wrote: the plots (by file name, without .gp/.png). */
struct out {
	const struct lab_run *o_run;
	const char *o_dir;
	char *o_err;
	size_t o_errlen;
	int o_rc;                       /* the first error */
	size_t o_nplots;
	char *o_plot[LAB_MAX_PLOTS];
	size_t o_plot_scen[LAB_MAX_PLOTS]; /* index into the run */
	bool o_gnuplot;                 /* gnuplot ran */
};

/* Open dir/name for writing; on failure record the first error. */
static FILE *out_open(struct out *o, const char *name)
{
	char path[LAB_PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o->o_dir, name);
	f = fopen(path, "w");
	if (!f && !o->o_rc) {
		o->o_rc = -errno;
		snprintf(o->o_err, o->o_errlen, "cannot write '%s': %s", path, strerror(errno));
	}
	return f;
}

static void out_close(struct out *o, FILE *f, const char *name)
{
	bool bad = ferror(f);

	if (fclose(f) || bad) {
		if (!o->o_rc) {
			o->o_rc = -EIO;
			snprintf(o->o_err, o->o_errlen, "cannot write '%s/%s'", o->o_dir, name);
		}
	}
}

/* "S_V" or "S" (v NULL), file-name-safe, with a suffix. */
static void base_name(char *buf, size_t len, const char *s, const char *v, const char *suffix)
{
	char a[128], b[128];

	lab_file_name(a, sizeof(a), s);
	lab_file_name(b, sizeof(b), v ? v : "");
	snprintf(buf, len, "%s%s%s%s", a, v ? "_" : "", v ? b : "", suffix);
}

static void plot_add(struct out *o, size_t scen, const char *name)
{
	if (o->o_nplots == LAB_MAX_PLOTS)
		return;
	o->o_plot[o->o_nplots] = strdup(name);
	if (o->o_plot[o->o_nplots])
		o->o_plot_scen[o->o_nplots++] = scen;
}

/* ---- CSV and texts ------------------------------------------------------- */

static void csv_metrics(FILE *f, const struct lab_result *r)
{
	fputs("name,index,value\n", f);
	for (size_t i = 0; i < lab_result_count(r); i++) {
		const struct lab_item *it = lab_result_item(r, i);

		if (it->i_kind == LAB_METRIC)
			fprintf(f, "%s,," NUM_FMT "\n", it->i_name, it->i_value);
		for (size_t j = 0; it->i_kind == LAB_ARRAY && j < it->i_n; j++)
			fprintf(f, "%s,%zu," NUM_FMT "\n", it->i_name, j, it->i_x[j]);
	}
}

static bool has_kind(const struct lab_result *r, enum lab_item_kind a, enum lab_item_kind b)
{
	for (size_t i = 0; i < lab_result_count(r); i++) {
		enum lab_item_kind k = lab_result_item(r, i)->i_kind;

		if (k == a || k == b)
			return true;
	}
	return false;
}

static void csv_data(FILE *f, const struct lab_result *r)
{
	fputs("kind,name,index,x,y\n", f);
	for (size_t i = 0; i < lab_result_count(r); i++) {
		const struct lab_item *it = lab_result_item(r, i);

		for (size_t j = 0; (it->i_kind == LAB_HIST || it->i_kind == LAB_SERIES) && j < it->i_n;
		     j++)
			fprintf(f, "%s,%s,%zu," NUM_FMT "," NUM_FMT "\n",
				it->i_kind == LAB_HIST ? "hist" : "series", it->i_name, j, it->i_x[j],
				it->i_y[j]);
	}
}

static void write_variant_files(struct out *o, const char *s, const char *v,
				const struct lab_result *r)
{
	char name[LAB_PATH_MAX], t[128];
	FILE *f;

	base_name(name, sizeof(name), s, v, "_metrics.csv");
	if ((f = out_open(o, name))) {
		csv_metrics(f, r);
		out_close(o, f, name);
	}
	base_name(name, sizeof(name), s, v, "_data.csv");
	if (has_kind(r, LAB_HIST, LAB_SERIES) && (f = out_open(o, name))) {
		csv_data(f, r);
		out_close(o, f, name);
	}
	for (size_t i = 0; i < lab_result_count(r); i++) {
		const struct lab_item *it = lab_result_item(r, i);

		if (it->i_kind != LAB_TEXT)
			continue;
		lab_file_name(t, sizeof(t), it->i_name);
		base_name(name, sizeof(name), s, v, "_");
		strncat(name, t, sizeof(name) - strlen(name) - 5);
		strcat(name, ".txt");
		if ((f = out_open(o, name))) {
			fputs(it->i_text, f);
			out_close(o, f, name);
		}
	}
}

/* ---- gnuplot scripts --------------------------------------------------- */

static void gp_head(FILE *f, const char *png, const char *title, const char *xl, const char *yl)
{
	fprintf(f, "set terminal pngcairo size 900,520 noenhanced font 'sans,10'\n"
		   "set output '%s.png'\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\n"
		   "set grid\nset key outside right top\n", png, title, xl, yl);
}

static const struct lab_item *item_of(const struct lab_result *r, const char *name,
				      enum lab_item_kind kind)
{
	for (size_t i = 0; r && i < lab_result_count(r); i++) {
		const struct lab_item *it = lab_result_item(r, i);

		if (it->i_kind == kind && !strcmp(it->i_name, name))
			return it;
	}
	return NULL;
}

/* One CDF data file: sorted values and the fraction at or below each. */
static bool cdf_data(struct out *o, const char *file, const struct lab_item *it)
{
	double total = 0, below = 0;
	FILE *f;

	for (size_t j = 0; j < it->i_n; j++)
		total += it->i_y[j];
	if (!(total > 0))
		return false;
	/* buckets come in increasing order: the fraction of operations slower than each
	   bucket's top, from 1 down to the slowest one's share (a log axis has no 0) */
	if ((f = out_open(o, file))) {
		fprintf(f, NUM_FMT " 1\n", it->i_x[0]);
		for (size_t j = 0; j < it->i_n; j++) {
			below += it->i_y[j];
			fprintf(f, NUM_FMT " " NUM_FMT "\n", it->i_x[j],
				below < total ? (total - below) / total : it->i_y[j] / total);
		}
		out_close(o, f, file);
	}
	return f != NULL;
}

static void plot_cdf(struct out *o, size_t si, const char *name)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], title[256], file[64];
	bool first = true;
	FILE *f;

	lab_file_name(file, sizeof(file), name);
	base_name(gp, sizeof(gp), s, NULL, "_");
	strncat(gp, file, sizeof(gp) - strlen(gp) - 8);
	strcat(gp, "_ccdf");
	snprintf(dat, sizeof(dat), "%s.gp", gp);
	if (!(f = out_open(o, dat)))
		return;
	snprintf(title, sizeof(title), "%s: %s, the tail (complementary CDF, log axes): "
		 "a line further right is a worse worst case", s, name);
	gp_head(f, gp, title, "latency (ms, log)", "fraction of operations slower (log)");
	fputs("set logscale xy\nset key inside right top\n", f);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_item *it = item_of(sr->sr_res[k], name, LAB_HIST);

		base_name(dat, sizeof(dat), s, sr->sr_scen->s_variants[k], "_");
		strncat(dat, file, sizeof(dat) - strlen(dat) - 8);
		strcat(dat, ".cdf");
		if (!it || !cdf_data(o, dat, it))
			continue;
		fprintf(f, "%s '%s' using 1:2 with steps lw 2 title '%s'", first ? "plot" : ",\\\n    ",
			dat, sr->sr_scen->s_variants[k]);
		first = false;
	}
	fputc('\n', f);
	out_close(o, f, gp);
	if (!first)
		plot_add(o, si, gp);
}

static void plot_cdfs(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];

	/* each distinct histogram name, in first-seen order */
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);
			bool seen = false;

			if (it->i_kind != LAB_HIST)
				continue;
			for (size_t e = 0; e < k && !seen; e++)
				seen = item_of(sr->sr_res[e], it->i_name, LAB_HIST) != NULL;
			if (!seen)
				plot_cdf(o, si, it->i_name);
		}
}

/* The flush sweep: arrays flush_ms against fg_latency_ms_max, a line per variant. */
static void plot_flush(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], title[256];
	bool first = true;
	FILE *f, *d;

	base_name(gp, sizeof(gp), s, NULL, "_flush");
	snprintf(dat, sizeof(dat), "%s.gp", gp);
	for (size_t k = 0; k < sr->sr_nvariants && first; k++)
		first = !item_of(sr->sr_res[k], "flush_ms", LAB_ARRAY) ||
			!item_of(sr->sr_res[k], "fg_latency_ms_max", LAB_ARRAY);
	if (first || !(f = out_open(o, dat)))
		return;
	first = true;
	snprintf(title, sizeof(title), "%s: the foreground worst operation against the "
		 "disk cache-flush cost (one line per variant)", s);
	gp_head(f, gp, title, "cache flush cost (ms)", "foreground max latency (ms)");
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_item *x = item_of(sr->sr_res[k], "flush_ms", LAB_ARRAY);
		const struct lab_item *y = item_of(sr->sr_res[k], "fg_latency_ms_max", LAB_ARRAY);

		base_name(dat, sizeof(dat), s, sr->sr_scen->s_variants[k], "_flush.dat");
		if (!x || !y || !(d = out_open(o, dat)))
			continue;
		/* one line per variant over a sorted x: the points in flush-cost order */
		for (size_t n = x->i_n < y->i_n ? x->i_n : y->i_n, done = 0; done < n; done++) {
			size_t best = n;

			for (size_t j = 0; j < n; j++) {
				size_t rank = 0;

				for (size_t m = 0; m < n; m++)
					rank += x->i_x[m] < x->i_x[j] || (x->i_x[m] == x->i_x[j] && m < j);
				if (rank == done)
					best = j;
			}
			if (best < n)
				fprintf(d, NUM_FMT " " NUM_FMT "\n", x->i_x[best], y->i_x[best]);
		}
		out_close(o, d, dat);
		fprintf(f, "%s '%s' using 1:2 with linespoints lw 2 pt 7 title '%s'",
			first ? "plot" : ",\\\n    ", dat, sr->sr_scen->s_variants[k]);
		first = false;
	}
	fputc('\n', f);
	out_close(o, f, gp);
	if (!first)
		plot_add(o, si, gp);
}

/* Axis labels from a series name "Y_vs_X" ("sector_vs_time": time, sector). */
static void series_labels(const char *name, char *xl, char *yl, size_t len)
{
	const char *vs = strstr(name, "_vs_");

	if (!vs) {
		snprintf(xl, len, "x");
		snprintf(yl, len, "%s", name);
		return;
	}
	snprintf(yl, len, "%.*s", (int)(vs - name), name);
	snprintf(xl, len, "%s", vs + 4);
	if (!strcmp(xl, "time"))
		snprintf(xl, len, "time (s)");
}

static void plot_series_one(struct out *o, size_t si, size_t k, const struct lab_item *it)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name, *v = sr->sr_scen->s_variants[k];
	char gp[LAB_NAME_BUF], file[LAB_PATH_MAX], t[64], title[256], xl[64], yl[64];
	FILE *f;

	lab_file_name(t, sizeof(t), it->i_name);
	base_name(gp, sizeof(gp), s, v, "_");
	strncat(gp, t, sizeof(gp) - strlen(gp) - 8);
	snprintf(file, sizeof(file), "%s.dat", gp);
	if (!(f = out_open(o, file)))
		return;
	for (size_t j = 0; j < it->i_n; j++)
		fprintf(f, NUM_FMT " " NUM_FMT "\n", it->i_x[j], it->i_y[j]);
	out_close(o, f, file);
	snprintf(file, sizeof(file), "%s.gp", gp);
	if (!(f = out_open(o, file)))
		return;
	series_labels(it->i_name, xl, yl, sizeof(xl));
	snprintf(title, sizeof(title), "%s %s: %s", s, v, it->i_name);
	gp_head(f, gp, title, xl, yl);
	fprintf(f, "set key off\nplot '%s.dat' using 1:2 with points pt 7 ps 0.4\n", gp);
	out_close(o, f, file);
	plot_add(o, si, gp);
}

static void plot_series(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];

	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);

			if (it->i_kind == LAB_SERIES && it->i_n)
				plot_series_one(o, si, k, it);
		}
}

/* ---- running gnuplot ------------------------------------------------------ */

/* gnuplot SCRIPT.gp in dir, its output appended to dir/gnuplot.log. The
 * exit status, 127 if gnuplot could not be run. */
static int gnuplot_run(const char *dir, const char *script)
{
	char gp[LAB_NAME_BUF];
	pid_t pid;
	int st;

	snprintf(gp, sizeof(gp), "%s.gp", script);
	pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		int fd;

		if (chdir(dir))
			_exit(127);
		fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("gnuplot", "gnuplot", gp, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 126;
}

static void gnuplot_all(struct out *o)
{
	for (size_t i = 0; i < o->o_nplots; i++) {
		int rc = gnuplot_run(o->o_dir, o->o_plot[i]);

		if (rc == 127)
			return; /* no gnuplot: the page says so */
		o->o_gnuplot = true;
	}
}

/* ---- report.html ----------------------------------------------------------- */

static void html_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char html_style[] =
	"body{font-family:sans-serif;max-width:1360px;margin:.5em auto;padding:0 1em}"
	"h1{font-size:130%;margin:.2em 0}table.ov{font-size:80%}table.ov td{padding:1px 5px}"
	"tr.q td.m{color:#777}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #bbb;padding:2px 8px}td.n{text-align:right;font-family:monospace}"
	"th{background:#eee}tr.no td.m{color:#b00}tr.yes td.m{color:#070}"
	"pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}"
	"img{max-width:100%;border:1px solid #ddd;margin:.3em 0}";

static void html_metrics(FILE *f, const struct lab_scen_run *sr)
{
	const char **names = NULL;
	size_t n = 0;

	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++)
			n += lab_result_item(sr->sr_res[k], i)->i_kind == LAB_METRIC;
	names = calloc(n + 1, sizeof(*names));
	if (!names)
		return;
	n = 0;
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);
			bool seen = false;

			for (size_t j = 0; j < n && !seen; j++)
				seen = !strcmp(names[j], it->i_name);
			if (it->i_kind == LAB_METRIC && !seen)
				names[n++] = it->i_name;
		}
	fputs("<table><tr><th>metric</th>", f);
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		if (sr->sr_res[k])
			fprintf(f, "<th>%s</th>", sr->sr_scen->s_variants[k]);
	fputs("</tr>\n", f);
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "<tr><td>%s</td>", names[j]);
		for (size_t k = 0; k < sr->sr_nvariants; k++) {
			double v = sr->sr_res[k] ? lab_result_get(sr->sr_res[k], names[j]) : NAN;

			if (!sr->sr_res[k])
				continue;
			if (isnan(v))
				fputs("<td class=n>-</td>", f);
			else
				fprintf(f, "<td class=n>%.6g</td>", v);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(names);
}

static void html_summary(FILE *f, const struct lab_summary *s)
{
	if (!lab_summary_count(s))
		return;
	fputs("<table><tr><th>what</th><th>thread's figure</th><th>lab</th><th>ratio</th>"
	      "<th>goal</th><th>met?</th><th>why</th></tr>\n", f);
	for (size_t i = 0; i < lab_summary_count(s); i++) {
		const struct lab_summary_rowv *w = lab_summary_at(s, i);
		const char *cells[] = { w->w_what, w->w_thread, w->w_lab };

		fprintf(f, "<tr class=%s>", w->w_met ? "yes" : "no");
		for (size_t c = 0; c < 3; c++) {
			fputs("<td>", f);
			html_esc(f, cells[c]);
			fputs("</td>", f);
		}
		if (isnan(w->w_ratio))
			fputs("<td class=n>-</td><td>", f);
		else
			fprintf(f, "<td class=n>%.3g</td><td>", w->w_ratio);
		html_esc(f, w->w_goal);
		fprintf(f, "</td><td class=m>%s</td><td>", w->w_met ? "yes" : "no");
		html_esc(f, w->w_why);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The scenario's own table (s_table), preformatted. */
static void html_table(FILE *f, const struct lab_scen_run *sr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!sr->sr_scen->s_table || !(m = open_memstream(&buf, &len)))
		return;
	sr->sr_scen->s_table((const struct lab_result *const *)sr->sr_res, m);
	if (fclose(m) == 0 && len) {
		fputs("<pre>", f);
		html_esc(f, buf);
		fputs("</pre>\n", f);
	}
	free(buf);
}

static void html_texts(FILE *f, const struct lab_scen_run *sr)
{
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);

			if (it->i_kind != LAB_TEXT)
				continue;
			fprintf(f, "<h4>%s: %s</h4>\n<pre>", sr->sr_scen->s_variants[k], it->i_name);
			html_esc(f, it->i_text);
			fputs("</pre>\n", f);
		}
}

static void html_plots(FILE *f, const struct out *o, size_t si)
{
	char path[LAB_PATH_MAX];

	for (size_t p = 0; p < o->o_nplots; p++) {
		if (o->o_plot_scen[p] != si)
			continue;
		snprintf(path, sizeof(path), "%s/%s.png", o->o_dir, o->o_plot[p]);
		if (access(path, R_OK))
			fprintf(f, "<p>(plot %s.png missing: see %s.gp)</p>\n", o->o_plot[p],
				o->o_plot[p]);
		else
			fprintf(f, "<p><img src=\"%s.png\" alt=\"%s\"></p>\n", o->o_plot[p],
				o->o_plot[p]);
	}
}

static void html_scenario(FILE *f, const struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const struct lab_scenario *sc = sr->sr_scen;
	char msg[320];

	fprintf(f, "<h2 id=\"%s\">%s</h2>\n<p>", sc->s_name, sc->s_name);
	if (sc->s_thread) {
		fprintf(f, "thread %s, &ldquo;", sc->s_thread->t_id);
		html_esc(f, sc->s_thread->t_subject);
		fputs("&rdquo;, ", f);
		html_esc(f, sc->s_thread->t_list);
		fputs(", ", f);
		html_esc(f, sc->s_thread->t_date);
		fputs(", ", f);
		html_esc(f, sc->s_thread->t_author);
		fputs(": ", f);
	}
	html_esc(f, sc->s_help ? sc->s_help : "");
	fputs("</p>\n", f);
	if (lab_real_path(o->o_run->r_ctx) && sc->s_real) {
		fputs("<p>on a real disk: ", f);
		html_esc(f, sc->s_real);
		fputs("</p>\n", f);
	}
	html_metrics(f, sr);
	html_table(f, sr);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (sr->sr_rc[k] >= 0)
			continue;
		fprintf(f, "<p>variant %s failed: ", sc->s_variants[k]);
		html_esc(f, lab_variant_error(sr, k, msg, sizeof(msg)));
		fputs("</p>\n", f);
	}
	html_summary(f, sr->sr_sum);
	html_plots(f, o, si);
	html_texts(f, sr);
}

/* The answer first: a row per claim of each thread (its subject, list, date and author),
   the thread's figure, the lab's, the verdict, a link to the scenario's section. */
static void html_overview(FILE *f, const struct lab_run *run)
{
	const struct lab_ctx *c = run->r_ctx;

	fputs("<table class=ov><tr><th>thread (subject, list, date, author)</th><th>claim</th>"
	      "<th>thread's figure</th><th>lab's figure</th><th>ratio</th><th>goal</th>"
	      "<th>verdict</th><th>section</th></tr>\n", f);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];
		const struct lab_thread *t = sr->sr_scen->s_thread;

		for (size_t j = 0; j < lab_summary_count(sr->sr_sum); j++) {
			const struct lab_summary_rowv *w = lab_summary_at(sr->sr_sum, j);
			const char *v = lab_verdict(c, w);

			fprintf(f, "<tr class=%s><td>", lab_ctx_quick(c) ? "q" : w->w_met ? "yes" : "no");
			if (t && !j) {
				fputs("&ldquo;", f);
				html_esc(f, t->t_subject);
				fputs("&rdquo;, ", f);
				html_esc(f, t->t_list);
				fputs(", ", f);
				html_esc(f, t->t_date);
				fputs(", ", f);
				html_esc(f, t->t_author);
			} else if (!j) {
				fputs("(the lab's own question)", f);
			}
			fputs("</td><td>", f);
			html_esc(f, w->w_what);
			fputs("</td><td>", f);
			html_esc(f, w->w_thread);
			fputs("</td><td>", f);
			html_esc(f, w->w_lab);
			if (isnan(w->w_ratio))
				fputs("</td><td class=n>-</td><td>", f);
			else
				fprintf(f, "</td><td class=n>%.3g</td><td>", w->w_ratio);
			html_esc(f, w->w_goal);
			fprintf(f, "</td><td class=m>%s</td><td><a href=\"#%s\">%s</a></td></tr>\n", v,
				sr->sr_scen->s_name, sr->sr_scen->s_name);
		}
	}
	fputs("</table>\n", f);
}

static void html_write(struct out *o)
{
	const struct lab_ctx *c = o->o_run->r_ctx;
	FILE *f = out_open(o, "report.html");

	if (!f)
		return;
	fprintf(f, "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
		   "<title>ujbd lab report</title>\n<style>%s</style></head><body>\n"
		   "<h1>ujbd lab %s: what reproduced</h1>\n<p><b>seed %llu, %s</b>, %s world, disk ",
		html_style, ujbd_version(), (unsigned long long)lab_ctx_seed(c),
		lab_ctx_quick(c) ? "QUICK run (a smoke run: no verdicts)" : "full run",
		lab_ctx_world(c) == RT_WORLD_SIM ? "sim" : "real");
	html_esc(f, lab_ctx_disk(c));
	fputs("; parameters changed from their defaults: ", f);
	if (!lab_ctx_ngroups(c))
		fputs("none", f);
	for (size_t i = 0; i < lab_ctx_ngroups(c); i++) {
		fprintf(f, "%s<code>--%s=", i ? " " : "", lab_ctx_group_at(c, i));
		html_esc(f, lab_ctx_params(c, lab_ctx_group_at(c, i)));
		fputs("</code>", f);
	}
	fputs(". Files: <a href=\"lab.json\">lab.json</a>, <a href=\"report.txt\">"
	      "report.txt</a>, CSV per variant beside this page.</p>\n", f);
	if (o->o_run->r_n)
		html_overview(f, o->o_run);
	if (!o->o_gnuplot && o->o_nplots)
		fputs("<p><b>gnuplot was not found: the plots' scripts (*.gp) and data are here, "
		      "the PNGs are not.</b></p>\n", f);
	if (!o->o_run->r_n)
		fputs("<p>No scenario ran.</p>\n", f);
	fputs("<ul>", f);
	for (size_t i = 0; i < o->o_run->r_n; i++)
		fprintf(f, "<li><a href=\"#%s\">%s</a></li>", o->o_run->r_scen[i].sr_scen->s_name,
			o->o_run->r_scen[i].sr_scen->s_name);
	fputs("</ul>\n", f);
	for (size_t i = 0; i < o->o_run->r_n; i++)
		html_scenario(f, o, i);
	fputs("</body></html>\n", f);
	out_close(o, f, "report.html");
}

/* ---- the directory ----------------------------------------------------------- */

static int out_mkdir(struct out *o)
{
	struct stat st;

	if (!mkdir(o->o_dir, 0755) || (errno == EEXIST && !stat(o->o_dir, &st) &&
					 S_ISDIR(st.st_mode)))
		return 0;
	o->o_rc = errno == EEXIST ? -ENOTDIR : -errno;
	snprintf(o->o_err, o->o_errlen, "cannot create '%s': %s", o->o_dir, strerror(-o->o_rc));
	return o->o_rc;
}

int lab_report_dir_check(const char *dir, char *err, size_t errlen)
{
	char dummy[8], path[LAB_PATH_MAX];
	struct out o = { .o_dir = dir, .o_err = err ? err : dummy,
			 .o_errlen = err ? errlen : sizeof(dummy) };
	int fd;

	if (out_mkdir(&o))
		return o.o_rc;
	snprintf(path, sizeof(path), "%s/.ujbd-lab-probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		int e = errno;

		snprintf(o.o_err, o.o_errlen, "cannot write in '%s': %s", dir, strerror(e));
		return -e;
	}
	close(fd);
	unlink(path);
	return 0;
}

static void out_documents(struct out *o)
{
	FILE *f;
	int rc;

	if ((f = out_open(o, "lab.json"))) {
		rc = lab_report_json(f, o->o_run);
		out_close(o, f, "lab.json");
		o->o_rc = o->o_rc ? o->o_rc : rc;
	}
	if ((f = out_open(o, "report.txt"))) {
		rc = lab_report_text(f, o->o_run, LAB_TEXT_TEXTS);
		out_close(o, f, "report.txt");
		o->o_rc = o->o_rc ? o->o_rc : rc;
	}
}

int lab_report_dir(const struct lab_run *run, const char *dir, char *err, size_t errlen)
{
	char dummy[8];
	struct out o = { .o_run = run, .o_dir = dir, .o_err = err ? err : dummy,
			 .o_errlen = err ? errlen : sizeof(dummy) };
	char log[LAB_PATH_MAX];

	if (out_mkdir(&o))
		return o.o_rc;
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	unlink(log);
	out_documents(&o);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];

		for (size_t k = 0; k < sr->sr_nvariants; k++)
			if (sr->sr_res[k])
				write_variant_files(&o, sr->sr_scen->s_name, sr->sr_scen->s_variants[k],
						    sr->sr_res[k]);
		plot_cdfs(&o, i);
		plot_flush(&o, i);
		plot_series(&o, i);
	}
	gnuplot_all(&o);
	html_write(&o);
	for (size_t i = 0; i < o.o_nplots; i++)
		free(o.o_plot[i]);
	return o.o_rc;
}

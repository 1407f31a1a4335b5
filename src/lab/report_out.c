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
 * Each plot has a title that says what to look at, labelled axes with units,
 * and in report.html a caption with the numbers behind it. A scenario's
 * section shows its claims, then the plot of its finding (its s_plot bars,
 * else its latency tail or its sweep), then the other large plots, then the
 * small ones (timelines, per-variant series) two to a row.
 *
 * Files, with S the scenario and V the variant (file-name-safe: see
 * lab_file_name):
 *   lab.json, report.txt            the JSON document and the text report
 *   S_V_metrics.csv                 name,index,value (index: arrays only)
 *   S_V_data.csv                    kind,name,index,x,y (hist: bucket top ms, count)
 *   S_V_NAME.txt                    each text (blktrace excerpts, notes)
 *   S_finding.{dat,gp,png}          the scenario's s_plot metrics, a bar per variant,
 *                                   a panel per metric
 *   S_NAME_ccdf.{gp,png}, S_V_NAME.cdf  latency tail of histogram NAME (complementary
 *                                   CDF, log axes), a line per variant
 *   S_flush.{gp,png}, S_V_flush.dat arrays flush_ms against fg_latency_ms_max,
 *                                   sorted by flush_ms, a line per variant
 *   S_causes.{dat,gp,png}           the worst foreground operation by cause (fg_worst_*),
 *                                   a stacked bar per variant
 *   S_V_timeline.{dat,gp,png}       the rig's tl_* series: the slowest operations, the
 *                                   commit's phases and the queue over time
 *   S_V_NAME.{dat,gp,png}           any other series NAME (Y_vs_X: x against y), points
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
	char *o_caption[LAB_MAX_PLOTS];  /* the numbers behind it (NULL: none) */
	bool o_small[LAB_MAX_PLOTS];     /* one of a grid (timelines, per-variant series) */
	int o_w[LAB_MAX_PLOTS], o_h[LAB_MAX_PLOTS]; /* the PNG's size */
	int o_next_w, o_next_h;          /* the last gp_term's */
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

/* s as a gnuplot double-quoted string ('\\' and '"' escaped; a newline breaks the line). */
static void gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The PNG's terminal and size (kept for report.html's img, see plot_add). */
static void gp_term(struct out *o, FILE *f, const char *png, int w, int h)
{
	o->o_next_w = w;
	o->o_next_h = h;
	fprintf(f, "set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n"
		   "set output '%s.png'\n", w, h, png);
}

/* The title and the axes' labels (the last line without its newline). */
static void gp_labels(FILE *f, const char *title, const char *xl, const char *yl)
{
	fputs("set title ", f);
	gp_str(f, title);
	fputs("\nset xlabel ", f);
	gp_str(f, xl);
	fputs("\nset ylabel ", f);
	gp_str(f, yl);
}

/* The terminal, the title, the axes' labels, a grid and the key. */
static void gp_head(struct out *o, FILE *f, const char *png, const char *title, const char *xl,
		    const char *yl)
{
	gp_term(o, f, png, 900, 520);
	gp_labels(f, title, xl, yl);
	fputs("\nset grid\nset key outside right top\n", f);
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

/* A caption under construction (open_memstream); plot_add takes it. */
struct cap {
	char *c_buf;
	size_t c_len;
	FILE *c_f;
};

static FILE *cap_open(struct cap *c)
{
	c->c_buf = NULL;
	c->c_len = 0;
	c->c_f = open_memstream(&c->c_buf, &c->c_len);
	return c->c_f;
}

/* Close c and hand its text over (NULL if it could not be made). */
static char *cap_take(struct cap *c)
{
	if (!c->c_f)
		return NULL;
	if (fclose(c->c_f)) {
		free(c->c_buf);
		return NULL;
	}
	return c->c_buf;
}

static void plot_add(struct out *o, size_t scen, const char *name, bool small, char *caption)
{
	if (o->o_nplots == LAB_MAX_PLOTS || !(o->o_plot[o->o_nplots] = strdup(name))) {
		free(caption);
		return;
	}
	o->o_caption[o->o_nplots] = caption;
	o->o_small[o->o_nplots] = small;
	o->o_w[o->o_nplots] = o->o_next_w;
	o->o_h[o->o_nplots] = o->o_next_h;
	o->o_plot_scen[o->o_nplots++] = scen;
}

/* v for a caption: "-" for NaN, whole from 100 on (no exponent), else "%.3g". */
static const char *num(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.3g", v);
	return buf;
}

/* The end of a plot of a line per variant: its script closed, its caption's full stop; it is
 * listed only if a variant had a line (any), else its caption is dropped. */
static void plot_lines_end(struct out *o, size_t si, FILE *f, const char *gp, struct cap *cap,
			   bool any)
{
	fputc('\n', f);
	out_close(o, f, gp);
	if (cap->c_f)
		fputc('.', cap->c_f);
	if (any)
		plot_add(o, si, gp, false, cap_take(cap));
	else
		free(cap_take(cap));
}

/* ---- the finding: a bar per variant for each of the scenario's s_plot metrics ---- */

static void plot_finding(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const struct lab_scenario *sc = sr->sr_scen;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], metric[LAB_PATH_MAX], b[32];
	const char *plot[16];
	size_t nm = 0, nv = 0;
	struct cap cap;
	FILE *f, *d, *c;

	/* the metrics some variant has (gnuplot gives up on a panel without a point) */
	for (size_t m = 0; sc->s_plot && sc->s_plot[m] && nm < 16; m++) {
		bool any = false;

		snprintf(metric, sizeof(metric), "%.*s", (int)strcspn(sc->s_plot[m], " "),
			 sc->s_plot[m]);
		for (size_t k = 0; k < sr->sr_nvariants && !any; k++)
			any = sr->sr_res[k] && !isnan(lab_result_get(sr->sr_res[k], metric));
		if (any)
			plot[nm++] = sc->s_plot[m];
	}
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		nv += sr->sr_res[k] != NULL;
	if (!nm || !nv)
		return;
	base_name(gp, sizeof(gp), sc->s_name, NULL, "_finding");
	snprintf(dat, sizeof(dat), "%s.dat", gp);
	if (!(d = out_open(o, dat)))
		return;
	fputs("# variant", d);
	for (size_t m = 0; m < nm; m++)
		fprintf(d, " %.*s", (int)strcspn(plot[m], " "), plot[m]);
	fputc('\n', d);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (!sr->sr_res[k])
			continue;
		fprintf(d, "%s", sc->s_variants[k]);
		for (size_t m = 0; m < nm; m++) {
			snprintf(metric, sizeof(metric), "%.*s", (int)strcspn(plot[m], " "),
				 plot[m]);
			double v = lab_result_get(sr->sr_res[k], metric);

			if (isnan(v))
				fputs(" NaN", d);
			else
				fprintf(d, " " NUM_FMT, v);
		}
		fputc('\n', d);
	}
	out_close(o, d, dat);
	snprintf(metric, sizeof(metric), "%s.gp", gp);
	if (!(f = out_open(o, metric)))
		return;
	gp_term(o, f, gp, nm < 3 ? 900 : 300 * (int)nm, 440);
	fprintf(f, "set multiplot layout 1,%zu title ", nm);
	gp_str(f, sc->s_plot_title ? sc->s_plot_title : sc->s_name);
	fputs("\nset style fill solid 0.8 border -1\nset boxwidth 0.6\nset grid ytics\n"
	      "set yrange [0:*]\nset offsets 0.5, 0.5, graph 0.12, 0\nset xlabel \"variant\"\n"
	      "set key off\nset xtics rotate by 25 right\n", f);
	c = cap_open(&cap);
	if (c)
		fputs("A bar per variant.", c);
	for (size_t m = 0; m < nm; m++) {
		const char *label = plot[m] + strcspn(plot[m], " ");

		snprintf(metric, sizeof(metric), "%.*s", (int)strcspn(plot[m], " "),
			 plot[m]);
		fputs("set title ", f);
		gp_str(f, metric);
		fputs("\nset ylabel ", f);
		gp_str(f, *label ? label + 1 : metric);
		fprintf(f, "\nplot '%s' using 0:%zu:xtic(1) with boxes lc rgb '#4a7ebb', \\\n"
			   "     '' using 0:%zu:(abs($%zu) >= 100 ? sprintf('%%.0f', $%zu) : "
			   "sprintf('%%.3g', $%zu)) with labels offset 0,0.8\n",
			dat, m + 2, m + 2, m + 2, m + 2, m + 2);
		if (!c)
			continue;
		fprintf(c, " %s:", metric);
		for (size_t k = 0, first = 1; k < sr->sr_nvariants; k++) {
			if (!sr->sr_res[k])
				continue;
			fprintf(c, "%s %s %s", first ? "" : ",", sc->s_variants[k],
				num(b, sizeof(b), lab_result_get(sr->sr_res[k], metric)));
			first = 0;
		}
		fputc(';', c);
	}
	fputs("unset multiplot\n", f);
	out_close(o, f, metric);
	/* the claims behind it: the thread's figure and the lab's */
	for (size_t j = 0; c && j < lab_summary_count(sr->sr_sum); j++) {
		const struct lab_summary_rowv *w = lab_summary_at(sr->sr_sum, j);

		fprintf(c, " %s: the thread %s, the lab %s.", w->w_what, w->w_thread, w->w_lab);
	}
	plot_add(o, si, gp, false, cap_take(&cap));
}

/* ---- latency tails ------------------------------------------------------------ */

/* One CCDF data file: each bucket's top and the fraction of operations slower. */
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

/* The top of the bucket where the fraction q of a histogram's operations is reached. */
static double hist_quantile(const struct lab_item *it, double q)
{
	double total = 0, acc = 0;

	for (size_t j = 0; j < it->i_n; j++)
		total += it->i_y[j];
	for (size_t j = 0; j < it->i_n; j++) {
		acc += it->i_y[j];
		if (acc >= q * total)
			return it->i_x[j];
	}
	return it->i_n ? it->i_x[it->i_n - 1] : NAN;
}

static void plot_cdf(struct out *o, size_t si, const char *name)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], title[320], file[64], mx[96], b[3][32];
	bool first = true;
	struct cap cap;
	FILE *f, *c;

	lab_file_name(file, sizeof(file), name);
	base_name(gp, sizeof(gp), s, NULL, "_");
	strncat(gp, file, sizeof(gp) - strlen(gp) - 8);
	strcat(gp, "_ccdf");
	snprintf(dat, sizeof(dat), "%s.gp", gp);
	if (!(f = out_open(o, dat)))
		return;
	snprintf(title, sizeof(title), "%s: %s, the tail (log axes)\nthe fraction of operations "
		 "slower than x: a line further right is a worse worst case", s, name);
	gp_head(o, f, gp, title, "latency (ms, log)", "fraction of operations slower (log)");
	fputs("set logscale xy\nset key inside right top\n", f);
	c = cap_open(&cap);
	if (c)
		fprintf(c, "%s, a line per variant (bucket tops of the latency histogram):", name);
	snprintf(mx, sizeof(mx), "%s_max", name); /* the exact worst, where the scenario has it */
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_item *it = item_of(sr->sr_res[k], name, LAB_HIST);
		double total = 0, worst;

		base_name(dat, sizeof(dat), s, sr->sr_scen->s_variants[k], "_");
		strncat(dat, file, sizeof(dat) - strlen(dat) - 8);
		strcat(dat, ".cdf");
		if (!it || !cdf_data(o, dat, it))
			continue;
		/* a dash type per variant: lines that coincide still show both */
		fprintf(f, "%s '%s' using 1:2 with steps lw 2 dt %zu title '%s'",
			first ? "plot" : ",\\\n    ", dat, k % 5 + 1, sr->sr_scen->s_variants[k]);
		for (size_t j = 0; j < it->i_n; j++)
			total += it->i_y[j];
		worst = lab_result_get(sr->sr_res[k], mx);
		if (c)
			fprintf(c, "%s %s %.0f operations, half within %s ms, 99 %% within %s ms, the "
				   "worst %s ms", first ? "" : ";", sr->sr_scen->s_variants[k], total,
				num(b[0], sizeof(b[0]), hist_quantile(it, 0.5)),
				num(b[1], sizeof(b[1]), hist_quantile(it, 0.99)),
				num(b[2], sizeof(b[2]), isnan(worst) ? it->i_x[it->i_n - 1] : worst));
		first = false;
	}
	plot_lines_end(o, si, f, gp, &cap, !first);
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

/* ---- the flush sweep: arrays flush_ms against fg_latency_ms_max, a line per variant ---- */

static void plot_flush(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], title[256], b[2][32];
	bool first = true;
	struct cap cap;
	FILE *f, *d, *c;

	base_name(gp, sizeof(gp), s, NULL, "_flush");
	snprintf(dat, sizeof(dat), "%s.gp", gp);
	for (size_t k = 0; k < sr->sr_nvariants && first; k++)
		first = !item_of(sr->sr_res[k], "flush_ms", LAB_ARRAY) ||
			!item_of(sr->sr_res[k], "fg_latency_ms_max", LAB_ARRAY);
	if (first || !(f = out_open(o, dat)))
		return;
	first = true;
	snprintf(title, sizeof(title), "%s: the foreground's worst operation against what a disk "
		 "cache flush costs,\none line per variant (a rising line: the foreground pays for "
		 "the flush)", s);
	gp_head(o, f, gp, title, "cache flush cost, measured (ms)", "foreground's worst operation (ms)");
	fputs("set xrange [0:*]\nset yrange [0:*]\n", f);
	c = cap_open(&cap);
	if (c)
		fputs("A point per disk of the sweep, in the order of its flush cost "
		      "(flush ms -> worst ms):", c);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_item *x = item_of(sr->sr_res[k], "flush_ms", LAB_ARRAY);
		const struct lab_item *y = item_of(sr->sr_res[k], "fg_latency_ms_max", LAB_ARRAY);

		base_name(dat, sizeof(dat), s, sr->sr_scen->s_variants[k], "_flush.dat");
		if (!x || !y || !(d = out_open(o, dat)))
			continue;
		if (c)
			fprintf(c, "%s %s", first ? "" : ";", sr->sr_scen->s_variants[k]);
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
			if (best == n)
				continue;
			fprintf(d, NUM_FMT " " NUM_FMT "\n", x->i_x[best], y->i_x[best]);
			if (c)
				fprintf(c, "%s %s -> %s", done ? "," : "",
					num(b[0], sizeof(b[0]), x->i_x[best]),
					num(b[1], sizeof(b[1]), y->i_x[best]));
		}
		out_close(o, d, dat);
		/* a dash and a point type per variant: lines that coincide still show both */
		fprintf(f, "%s '%s' using 1:2 with linespoints lw 2 dt %zu pt %zu ps 1.5 title '%s'",
			first ? "plot" : ",\\\n    ", dat, k % 5 + 1, 2 * (k % 4) + 5,
			sr->sr_scen->s_variants[k]);
		first = false;
	}
	plot_lines_end(o, si, f, gp, &cap, !first);
}

/* ---- latencytop's view: the worst operation by cause, stacked --------------------- */

static const char *const cause_key[] = {
	"transaction", "commit", "log_space", "buffer", "lock_writeback", "lock_checkpoint",
	"lock_read", "other",
};
static const char *const cause_label[] = {
	"waiting to start a handle (transaction locked or full)",
	"waiting for a commit",
	"waiting for log space",
	"waiting for a buffer being logged",
	"buffer lock: writeback's I/O",
	"buffer lock: a checkpoint's I/O",
	"buffer lock: a read",
	"its own I/O and CPU (no journal wait)",
};
static const char *const cause_color[] = {
	"#d62728", "#9467bd", "#8c564b", "#ff7f0e", "#e377c2", "#bcbd22", "#17becf", "#a0a0a0",
};
#define NCAUSES (sizeof(cause_key) / sizeof(cause_key[0]))

static double cause_ms(const struct lab_result *r, size_t c)
{
	char name[64];

	snprintf(name, sizeof(name), "fg_worst_%s_ms", cause_key[c]);
	return lab_result_get(r, name);
}

static void plot_causes(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name;
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], title[256], b[32], gpf[LAB_NAME_BUF + 4];
	bool used[NCAUSES] = { false }, any = false, first = true;
	struct cap cap;
	FILE *f, *d, *c;

	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (!sr->sr_res[k] || !(lab_result_get(sr->sr_res[k], "fg_worst_ms") > 0))
			continue;
		any = true;
		for (size_t n = 0; n < NCAUSES; n++)
			used[n] = used[n] || cause_ms(sr->sr_res[k], n) > 0;
	}
	if (!any)
		return;
	base_name(gp, sizeof(gp), s, NULL, "_causes");
	snprintf(dat, sizeof(dat), "%s.dat", gp);
	if (!(d = out_open(o, dat)))
		return;
	fputs("# variant", d);
	for (size_t n = 0; n < NCAUSES; n++)
		if (used[n])
			fprintf(d, " %s", cause_key[n]);
	fputc('\n', d);
	c = cap_open(&cap);
	if (c)
		fputs("The slowest operation of each variant, its time split by cause:", c);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		double worst;

		if (!sr->sr_res[k] || !(lab_result_get(sr->sr_res[k], "fg_worst_ms") > 0))
			continue;
		worst = lab_result_get(sr->sr_res[k], "fg_worst_ms");
		fprintf(d, "%s", sr->sr_scen->s_variants[k]);
		if (c)
			fprintf(c, "%s %s %s ms =", first ? "" : ";", sr->sr_scen->s_variants[k],
				num(b, sizeof(b), worst));
		for (size_t n = 0, plus = 0; n < NCAUSES; n++) {
			double v = cause_ms(sr->sr_res[k], n);

			if (!used[n])
				continue;
			fprintf(d, " " NUM_FMT, isnan(v) ? 0 : v);
			if (c && v > 0)
				fprintf(c, "%s %s %s", plus++ ? " +" : "", num(b, sizeof(b), v),
					cause_key[n]);
		}
		fputc('\n', d);
		first = false;
	}
	out_close(o, d, dat);
	snprintf(title, sizeof(title), "%s: where the worst foreground operation's time went "
		 "(latencytop's view),\na bar per variant, a segment per cause", s);
	snprintf(gpf, sizeof(gpf), "%s.gp", gp);
	if (!(f = out_open(o, gpf))) {
		free(cap_take(&cap));
		return;
	}
	gp_head(o, f, gp, title, "variant", "the worst operation's time (ms)");
	fputs("set style data histograms\nset style histogram rowstacked\n"
	      "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset grid noxtics ytics\n"
	      "set yrange [0:*]\nset key outside below left Left reverse\n", f);
	for (size_t n = 0, col = 2, nplot = 0; n < NCAUSES; n++) {
		if (!used[n])
			continue;
		fprintf(f, "%s '%s' using %zu%s lc rgb '%s' title ", nplot++ ? ",\\\n    " : "plot",
			dat, col, col == 2 ? ":xtic(1)" : "", cause_color[n]);
		gp_str(f, cause_label[n]);
		col++;
	}
	fputc('\n', f);
	out_close(o, f, gpf);
	if (c)
		fputc('.', c);
	plot_add(o, si, gp, false, cap_take(&cap));
}

/* ---- the timeline of a variant (rig's tl_* series) --------------------------------- */

#define TL_MAX_KINDS 8   /* kinds of operation a timeline plots, at most */

static const char *const phase_series[] = {
	"tl_commit_locked", "tl_commit_flushing", "tl_commit_logging",
};

/* The common axes of a scenario's timelines: the end (s; the shortest's too), the fastest and
 * slowest operation (ms), the most requests queued. */
struct tl_axes {
	double end, end_min, op_min, op_max, q_max;
};

/* Where a variant's timeline ends (s), NAN without one. */
static double tl_end(const struct lab_result *r)
{
	const struct lab_item *q = item_of(r, "tl_queue", LAB_SERIES);
	const struct lab_item *b = item_of(r, "tl_bins", LAB_SERIES);

	if (q && q->i_n)
		return q->i_x[q->i_n - 1];
	return b && b->i_n ? b->i_x[0] * b->i_y[0] : NAN;
}

static bool tl_is(const struct lab_item *it)
{
	return it->i_kind == LAB_SERIES && !strncmp(it->i_name, "tl_", 3);
}

static void tl_axes_of(const struct lab_scen_run *sr, struct tl_axes *a)
{
	*a = (struct tl_axes){ 0, INFINITY, INFINITY, 0, 0 };
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);

			if (!tl_is(it) || !it->i_n)
				continue;
			if (!strcmp(it->i_name, "tl_bins")) {
				a->end = fmax(a->end, tl_end(sr->sr_res[k]));
				a->end_min = fmin(a->end_min, tl_end(sr->sr_res[k]));
			} else if (!strcmp(it->i_name, "tl_queue")) {
				for (size_t j = 0; j < it->i_n; j++)
					a->q_max = fmax(a->q_max, it->i_y[j]);
			} else if (!strncmp(it->i_name, "tl_op:", 6)) {
				for (size_t j = 0; j < it->i_n; j++) {
					if (it->i_y[j] > 0)
						a->op_min = fmin(a->op_min, it->i_y[j]);
					a->op_max = fmax(a->op_max, it->i_y[j]);
				}
			}
		}
	if (!isfinite(a->op_min))
		a->op_min = 1e-3;
}

static void plot_timeline(struct out *o, size_t si, size_t k, const struct tl_axes *ax)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const struct lab_result *r = sr->sr_res[k];
	const char *s = sr->sr_scen->s_name, *v = sr->sr_scen->s_variants[k];
	const struct lab_item *bins = item_of(r, "tl_bins", LAB_SERIES);
	const struct lab_item *q = item_of(r, "tl_queue", LAB_SERIES), *ph[3], *op[TL_MAX_KINDS];
	char gp[LAB_NAME_BUF], dat[LAB_PATH_MAX], b[4][32];
	double bin_s, phase_s[3] = { 0, 0, 0 }, floor_ms = ax->op_min / 2, qmax = 0, qt = 0, end;
	size_t nop = 0, idx[3] = { 0, 0, 0 };
	struct cap cap;
	FILE *f, *d, *c;

	if (!bins || !bins->i_n || !q)
		return;
	bin_s = bins->i_x[0];
	for (int p = 0; p < 3; p++)
		ph[p] = item_of(r, phase_series[p], LAB_SERIES);
	for (size_t i = 0; i < lab_result_count(r) && nop < TL_MAX_KINDS; i++) {
		const struct lab_item *it = lab_result_item(r, i);

		if (it->i_kind == LAB_SERIES && !strncmp(it->i_name, "tl_op:", 6) && it->i_n)
			op[nop++] = it;
	}
	base_name(gp, sizeof(gp), s, v, "_timeline");
	snprintf(dat, sizeof(dat), "%s.dat", gp);
	if (!(d = out_open(o, dat)))
		return;
	/* index 0: the queue; 1: the commit's phases (bin start, locked, flushing, logging);
	   2..: each kind of operation (start, ms) */
	fputs("# requests queued or at the disk: time (s), the most in the bin from there\n", d);
	for (size_t j = 0; j < q->i_n; j++) {
		fprintf(d, NUM_FMT " " NUM_FMT "\n", q->i_x[j], q->i_y[j]);
		if (q->i_y[j] > qmax)
			qmax = q->i_y[j], qt = q->i_x[j];
	}
	fputs("\n\n# the commit's phases: bin start (s), share of the bin locked, flushing, "
	      "logging\n", d);
	for (;;) { /* the three series merged by bin */
		double x = INFINITY, y[3];

		for (int p = 0; p < 3; p++)
			if (ph[p] && idx[p] < ph[p]->i_n)
				x = fmin(x, ph[p]->i_x[idx[p]]);
		if (!isfinite(x))
			break;
		for (int p = 0; p < 3; p++) {
			y[p] = ph[p] && idx[p] < ph[p]->i_n && ph[p]->i_x[idx[p]] == x ?
				ph[p]->i_y[idx[p]++] : 0;
			phase_s[p] += y[p] * bin_s;
		}
		fprintf(d, NUM_FMT " " NUM_FMT " " NUM_FMT " " NUM_FMT "\n", x, y[0], y[1], y[2]);
	}
	if (!(phase_s[0] + phase_s[1] + phase_s[2] > 0))
		fputs("0 0 0 0\n", d); /* an empty block would end the file for gnuplot */
	for (size_t n = 0; n < nop; n++) {
		fprintf(d, "\n\n# %s: start (s), the slowest of its bin (ms)\n", op[n]->i_name + 6);
		for (size_t j = 0; j < op[n]->i_n; j++)
			fprintf(d, NUM_FMT " " NUM_FMT "\n", op[n]->i_x[j], op[n]->i_y[j]);
	}
	out_close(o, d, dat);

	snprintf(dat, sizeof(dat), "%s.gp", gp);
	if (!(f = out_open(o, dat)))
		return;
	snprintf(dat, sizeof(dat), "%s.dat", gp);
	gp_term(o, f, gp, 660, 560);
	fputs("set multiplot title ", f);
	{
		char title[256];

		snprintf(title, sizeof(title), "%s %s over time: the slowest operations, the commit's "
			 "phases, the queue", s, v);
		gp_str(f, title);
	}
	/* one time axis for all variants when their runs are alike in length (a fixed time),
	   each its own when one took over twice another's (a fixed amount of work) */
	end = ax->end_min > 0 && ax->end <= 2 * ax->end_min ? ax->end : tl_end(r);
	fprintf(f, "\nset lmargin at screen 0.13\nset rmargin at screen 0.75\n"
		   "set xrange [0:" NUM_FMT "]\nset grid\nset key outside right top font ',8' "
		   "samplen 1.5\n"
		   "set format x ''\nunset xlabel\n", end > 0 ? end : 1);
	/* the operations */
	fprintf(f, "set tmargin at screen 0.90\nset bmargin at screen 0.60\nset logscale y\n"
		   "set yrange [" NUM_FMT ":" NUM_FMT "]\nset ylabel \"operation (ms)\"\n",
		floor_ms, ax->op_max > floor_ms ? ax->op_max * 1.5 : floor_ms * 10);
	for (size_t n = 0; n < nop; n++) {
		fprintf(f, "%s '%s' index %zu using 1:($2 > " NUM_FMT " ? $2 : " NUM_FMT ") with "
			   "points pt 7 ps 0.4 title ", n ? ",\\\n    " : "plot", dat, n + 2, floor_ms,
			floor_ms);
		gp_str(f, op[n]->i_name + 6);
	}
	if (!nop)
		fputs("plot NaN notitle", f);
	/* the commit's phases, stacked */
	fprintf(f, "\nunset logscale y\nset tmargin at screen 0.57\nset bmargin at screen 0.39\n"
		   "set yrange [0:1.05]\nset ytics 0.5\nset ylabel \"commit (share)\"\n"
		   "set style fill solid 1.0 noborder\nset boxwidth " NUM_FMT " absolute\n"
		   "plot '%s' index 1 using ($1 + " NUM_FMT "):($2 + $3 + $4) with boxes "
		   "lc rgb '#d62728' title 'locked',\\\n"
		   "    '' index 1 using ($1 + " NUM_FMT "):($3 + $4) with boxes lc rgb '#ff7f0e' "
		   "title 'flushing',\\\n"
		   "    '' index 1 using ($1 + " NUM_FMT "):4 with boxes lc rgb '#1f77b4' "
		   "title 'logging'\n", bin_s, dat, bin_s / 2, bin_s / 2, bin_s / 2);
	/* the queue */
	fprintf(f, "set tmargin at screen 0.36\nset bmargin at screen 0.09\nset ytics autofreq\n"
		   "set yrange [0:" NUM_FMT "]\nset format x '%%g'\n"
		   "set xlabel \"time since the measurement started (s)\"\n"
		   "set ylabel \"requests queued\"\n"
		   "plot '%s' index 0 using 1:2 with steps lw 1.5 lc rgb '#404040' title 'most "
		   "queued'\nunset multiplot\n", ax->q_max + 1, dat);
	snprintf(dat, sizeof(dat), "%s.gp", gp);
	out_close(o, f, dat);

	c = cap_open(&cap);
	if (c) {
		fprintf(c, "%s %s, in %s s bins", s, v, num(b[0], sizeof(b[0]), bin_s));
		if (sr->sr_scen->s_timeline && !lab_real_path(o->o_run->r_ctx))
			fprintf(c, " (%s)", sr->sr_scen->s_timeline);
		fputs(":", c);
		for (size_t n = 0; n < nop; n++) {
			size_t w = 0;

			for (size_t j = 1; j < op[n]->i_n; j++)
				if (op[n]->i_y[j] > op[n]->i_y[w])
					w = j;
			fprintf(c, " the slowest %s %s ms at %s s;", op[n]->i_name + 6,
				num(b[0], sizeof(b[0]), op[n]->i_y[w]),
				num(b[1], sizeof(b[1]), op[n]->i_x[w]));
		}
		fprintf(c, " the commit locked %s s, flushing %s s, logging %s s in all;",
			num(b[0], sizeof(b[0]), phase_s[0]), num(b[1], sizeof(b[1]), phase_s[1]),
			num(b[2], sizeof(b[2]), phase_s[2]));
		fprintf(c, " at most %s requests in the queue (at %s s).", num(b[0], sizeof(b[0]), qmax),
			num(b[1], sizeof(b[1]), qt));
	}
	plot_add(o, si, gp, true, cap_take(&cap));
}

static void plot_timelines(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	struct tl_axes ax;

	tl_axes_of(sr, &ax);
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		if (sr->sr_res[k])
			plot_timeline(o, si, k, &ax);
}

/* ---- other series: points, one plot per variant ----------------------------------- */

/* What a series "Y_vs_X" shows; unknown names get their own words. */
static const struct series_words {
	const char *name, *what, *xl, *yl;
	double yscale;  /* y in the plot = y * yscale */
} series_words[] = {
	{ "sector_vs_time", "where the disk went: each dispatched request's place on the disk",
	  "time since the loop started (s)", "position on the disk (GiB: sector x 512 bytes)",
	  512.0 / (1024.0 * 1024.0 * 1024.0) },
};

static void plot_series_one(struct out *o, size_t si, size_t k, const struct lab_item *it)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const char *s = sr->sr_scen->s_name, *v = sr->sr_scen->s_variants[k];
	const struct series_words *w = NULL;
	char gp[LAB_NAME_BUF], file[LAB_PATH_MAX], t[64], title[256], xl[64], yl[64], b[4][32];
	double ylo = INFINITY, yhi = -INFINITY;
	struct cap cap;
	FILE *f, *c;

	for (size_t i = 0; i < sizeof(series_words) / sizeof(series_words[0]); i++)
		if (!strcmp(series_words[i].name, it->i_name))
			w = &series_words[i];
	lab_file_name(t, sizeof(t), it->i_name);
	base_name(gp, sizeof(gp), s, v, "_");
	strncat(gp, t, sizeof(gp) - strlen(gp) - 8);
	snprintf(file, sizeof(file), "%s.dat", gp);
	if (!(f = out_open(o, file)))
		return;
	for (size_t j = 0; j < it->i_n; j++) {
		fprintf(f, NUM_FMT " " NUM_FMT "\n", it->i_x[j], it->i_y[j]);
		ylo = fmin(ylo, it->i_y[j]);
		yhi = fmax(yhi, it->i_y[j]);
	}
	out_close(o, f, file);
	snprintf(file, sizeof(file), "%s.gp", gp);
	if (!(f = out_open(o, file)))
		return;
	if (w) {
		snprintf(xl, sizeof(xl), "%s", w->xl);
		snprintf(yl, sizeof(yl), "%s", w->yl);
		snprintf(title, sizeof(title), "%s %s: %s", s, v, w->what);
	} else {
		const char *vs = strstr(it->i_name, "_vs_");

		snprintf(yl, sizeof(yl), "%.*s", vs ? (int)(vs - it->i_name) : 60, it->i_name);
		snprintf(xl, sizeof(xl), "%s", vs ? vs + 4 : "x");
		if (!strcmp(xl, "time"))
			snprintf(xl, sizeof(xl), "time (s)");
		snprintf(title, sizeof(title), "%s %s: %s against %s", s, v, yl, xl);
	}
	gp_term(o, f, gp, 660, 440);
	gp_labels(f, title, xl, yl);
	fprintf(f, "\nset grid\nset key off\nset format y '%%.3g'\n"
		   "plot '%s.dat' using 1:($2 * " NUM_FMT ") with points pt 7 ps 0.4\n", gp,
		w ? w->yscale : 1.0);
	out_close(o, f, file);
	c = cap_open(&cap);
	if (c)
		fprintf(c, "%s %s: %zu points; %s from %s to %s, %s from %s to %s.", s, v, it->i_n,
			xl, num(b[0], sizeof(b[0]), it->i_x[0]),
			num(b[1], sizeof(b[1]), it->i_x[it->i_n - 1]), yl,
			num(b[2], sizeof(b[2]), ylo * (w ? w->yscale : 1)),
			num(b[3], sizeof(b[3]), yhi * (w ? w->yscale : 1)));
	plot_add(o, si, gp, true, cap_take(&cap));
}

static void plot_series(struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];

	for (size_t k = 0; k < sr->sr_nvariants; k++)
		for (size_t i = 0; sr->sr_res[k] && i < lab_result_count(sr->sr_res[k]); i++) {
			const struct lab_item *it = lab_result_item(sr->sr_res[k], i);

			if (it->i_kind == LAB_SERIES && it->i_n && !tl_is(it))
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
	"body{font-family:sans-serif;font-size:14px;max-width:1370px;margin:.4em auto;padding:0 .8em}"
	"h1{font-size:130%;margin:.1em 0}p.run{margin:.2em 0 .4em}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #bbb;padding:2px 8px}td.n{text-align:right;font-family:monospace}"
	"th{background:#eee}tr.no td.m{color:#b00}tr.yes td.m{color:#070}tr.q td.m{color:#777}"
	"table.ov{font-size:12px;line-height:1.2;margin:.2em 0;width:100%}"
	"table.ov td,table.ov th{padding:1px 4px}"
	"table.ov tr.th td{background:#f3f3f3;font-weight:bold}"
	"pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}"
	"figure{margin:.6em 0}figcaption{font-size:90%;color:#333;max-width:1000px}"
	"img{max-width:100%;height:auto;border:1px solid #ddd}"
	"div.grid{display:flex;flex-wrap:wrap;gap:0 12px}div.grid figure{width:662px}"
	"body:has(a.only:target)>:not(a.only:target+section){display:none}";

static void html_metric_row(FILE *f, const char *name, int width, bool head)
{
	fprintf(f, head ? "<tr><th>%s</th>" : "<tr><td>%s</td>", name);
}

static void html_metric_cell(FILE *f, const char *text, int width, bool head)
{
	fprintf(f, head ? "<th>%s</th>" : "<td class=n>%s</td>", text);
}

static void html_metric_end(FILE *f)
{
	fputs("</tr>\n", f);
}

static const struct lab_table_ops html_metric_ops = {
	.row = html_metric_row, .cell = html_metric_cell, .row_end = html_metric_end,
};

static void html_metrics(FILE *f, const struct lab_scen_run *sr)
{
	fputs("<table>", f);
	lab_report_metrics(f, sr, &html_metric_ops);
	fputs("</table>\n", f);
}

/* A summary row's cell col (lab_summary_cells), over span rows. */
static void html_sum_cell(FILE *f, const char *const cell[LAB_SUM_COLS], int col, size_t span)
{
	fputs("<td", f);
	if (span > 1)
		fprintf(f, " rowspan=%zu", span);
	if (col == LAB_SUM_RATIO)
		fputs(" class=n", f);
	else if (col == LAB_SUM_MET)
		fputs(" class=m", f);
	fputc('>', f);
	html_esc(f, cell[col]);
	fputs("</td>", f);
}

static void html_summary(FILE *f, const struct lab_summary *s)
{
	const char *cell[LAB_SUM_COLS];
	char ratio[32];

	if (!lab_summary_count(s))
		return;
	fputs("<table><tr><th>what</th><th>thread's figure</th><th>lab</th><th>ratio</th>"
	      "<th>goal</th><th>met?</th><th>why</th></tr>\n", f);
	for (size_t i = 0; i < lab_summary_count(s); i++) {
		const struct lab_summary_rowv *w = lab_summary_at(s, i);

		fprintf(f, "<tr class=%s>", lab_ctx_quick(lab_summary_ctx(s)) ? "q" :
			w->w_met ? "yes" : "no");
		lab_summary_cells(lab_summary_ctx(s), "", w, cell, ratio, sizeof(ratio));
		for (int c = LAB_SUM_WHAT; c < LAB_SUM_COLS; c++)
			html_sum_cell(f, cell, c, 1);
		fputs("</tr>\n", f);
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

/* One plot with its caption: an image (or where its script is) and the numbers behind it. */
static void html_plot(FILE *f, const struct out *o, size_t p)
{
	char path[LAB_PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.png", o->o_dir, o->o_plot[p]);
	fputs("<figure>", f);
	if (access(path, R_OK))
		fprintf(f, "<p>(plot %s.png missing: see %s.gp)</p>", o->o_plot[p], o->o_plot[p]);
	else
		fprintf(f, "<img src=\"%s.png\" alt=\"%s\" width=%d height=%d>", o->o_plot[p],
			o->o_plot[p], o->o_w[p], o->o_h[p]);
	if (o->o_caption[p]) {
		fputs("<figcaption>", f);
		html_esc(f, o->o_caption[p]);
		fputs("</figcaption>", f);
	}
	fputs("</figure>\n", f);
}

/* The scenario's plots: the large ones (the finding first) one under the other, or only the
 * first (first = true); then the small ones (timelines, per-variant series) in a grid. */
static void html_plots(FILE *f, const struct out *o, size_t si, bool first)
{
	size_t big = 0;
	bool grid = false;

	for (size_t p = 0; p < o->o_nplots; p++) {
		if (o->o_plot_scen[p] != si || o->o_small[p])
			continue;
		if (first == (big++ == 0))
			html_plot(f, o, p);
	}
	for (size_t p = 0; !first && p < o->o_nplots; p++) {
		if (o->o_plot_scen[p] != si || !o->o_small[p])
			continue;
		if (!grid)
			fputs("<div class=grid>\n", f);
		grid = true;
		html_plot(f, o, p);
	}
	if (grid)
		fputs("</div>\n", f);
}

/* A thread as report.html names it: "&ldquo;SUBJECT&rdquo;, LIST, DATE, AUTHOR". */
static void html_thread(FILE *f, const struct lab_thread *t)
{
	static const char *const before[LAB_THREAD_FIELDS] = {
		[LAB_THREAD_SUBJECT] = "&ldquo;", [LAB_THREAD_LIST] = "&rdquo;, ",
		[LAB_THREAD_DATE] = ", ", [LAB_THREAD_AUTHOR] = ", ",
	};
	const char *v[LAB_THREAD_FIELDS];

	lab_thread_fields(t, v);
	for (int i = LAB_THREAD_SUBJECT; i <= LAB_THREAD_AUTHOR; i++) {
		fputs(before[i], f);
		html_esc(f, v[i]);
	}
}

static void html_scenario(FILE *f, const struct out *o, size_t si)
{
	const struct lab_scen_run *sr = &o->o_run->r_scen[si];
	const struct lab_scenario *sc = sr->sr_scen;
	char msg[320];

	/* #S scrolls to the section; #only-S shows it alone, at the top (html_style) */
	fprintf(f, "<a class=only id=\"only-%s\"></a><section id=\"%s\">\n<h2>%s</h2>\n<p>",
		sc->s_name, sc->s_name, sc->s_name);
	if (sc->s_thread) {
		fprintf(f, "thread %s, ", sc->s_thread->t_id);
		html_thread(f, sc->s_thread);
		fputs(": ", f);
	}
	html_esc(f, sc->s_help ? sc->s_help : "");
	fputs("</p>\n", f);
	if (lab_real_path(o->o_run->r_ctx) && sc->s_real) {
		fputs("<p>on a real disk: ", f);
		html_esc(f, sc->s_real);
		fputs("</p>\n", f);
	}
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (sr->sr_rc[k] >= 0)
			continue;
		fprintf(f, "<p>variant %s failed: ", sc->s_variants[k]);
		html_esc(f, lab_variant_error(sr, k, msg, sizeof(msg)));
		fputs("</p>\n", f);
	}
	/* the claims, then the plot that shows the finding, then the rest */
	html_summary(f, sr->sr_sum);
	html_plots(f, o, si, true);
	html_plots(f, o, si, false);
	html_metrics(f, sr);
	html_table(f, sr);
	html_texts(f, sr);
	fputs("</section>\n", f);
}

/* The answer first: per thread a heading row (its subject, list, date and author, the link
   to the scenario's section), then a row per claim: the thread's figure (one cell for a run
   of equal ones), the lab's, the ratio, the goal, the verdict. */
static void html_overview(FILE *f, const struct lab_run *run)
{
	const struct lab_ctx *c = run->r_ctx;
	const char *cell[LAB_SUM_COLS];
	char ratio[32];

	fputs("<table class=ov><tr><th>claim</th><th>thread's figure</th><th>lab's figure</th>"
	      "<th>ratio</th><th>goal</th><th>verdict</th></tr>\n", f);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];
		const struct lab_thread *t = sr->sr_scen->s_thread;
		size_t n = lab_summary_count(sr->sr_sum);

		if (!n)
			continue;
		fprintf(f, "<tr class=th><td colspan=6><a href=\"#%s\">%s</a>: ", sr->sr_scen->s_name,
			sr->sr_scen->s_name);
		if (t)
			html_thread(f, t);
		else
			fputs("the lab's own question", f);
		fputs("</td></tr>\n", f);
		for (size_t j = 0; j < n; j++) {
			const struct lab_summary_rowv *w = lab_summary_at(sr->sr_sum, j);
			size_t span = 1;

			lab_summary_cells(c, sr->sr_scen->s_name, w, cell, ratio, sizeof(ratio));
			fprintf(f, "<tr class=%s>", lab_ctx_quick(c) ? "q" : w->w_met ? "yes" : "no");
			html_sum_cell(f, cell, LAB_SUM_WHAT, 1);
			/* a run of the same thread's figure is one cell */
			if (!j || strcmp(lab_summary_at(sr->sr_sum, j - 1)->w_thread, w->w_thread)) {
				while (j + span < n &&
				       !strcmp(lab_summary_at(sr->sr_sum, j + span)->w_thread, w->w_thread))
					span++;
				html_sum_cell(f, cell, LAB_SUM_THREAD, span);
			}
			for (int col = LAB_SUM_LAB; col <= LAB_SUM_MET; col++)
				html_sum_cell(f, cell, col, 1);
			fputs("</tr>\n", f);
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
		   "<h1>ujbd lab %s: what reproduced</h1>\n<p class=run><b>seed %llu, %s</b>, %s world, disk ",
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
	fputs("<p>Sections:", f);
	for (size_t i = 0; i < o->o_run->r_n; i++)
		fprintf(f, " <a href=\"#%s\">%s</a>", o->o_run->r_scen[i].sr_scen->s_name,
			o->o_run->r_scen[i].sr_scen->s_name);
	fputs(". Under each: its claims, the plot that shows the finding, the other plots with "
	      "the numbers behind them, every metric, the texts.</p>\n", f);
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
		/* the finding first: the scenario's bars, else its tail or its sweep */
		plot_finding(&o, i);
		plot_cdfs(&o, i);
		plot_flush(&o, i);
		plot_causes(&o, i);
		plot_timelines(&o, i);
		plot_series(&o, i);
	}
	gnuplot_all(&o);
	html_write(&o);
	for (size_t i = 0; i < o.o_nplots; i++) {
		free(o.o_plot[i]);
		free(o.o_caption[i]);
	}
	return o.o_rc;
}

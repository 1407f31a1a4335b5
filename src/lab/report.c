/*
 * lab report: the text tables and the JSON document of a run.
 *
 * The one idea: both are a walk over the run in one fixed order (scenarios
 * in registry order, variants in the scenario's order, items in insertion
 * order) that prints names and numbers only, numbers always as "%.9g". No
 * pointer, no wall-clock time, no locale-dependent format reaches the
 * output, so the same seed gives the same bytes.
 *
 * Text layout, per scenario: a heading, one table with a row per metric and
 * a column per variant, the failed variants, the summary rows (what | thread's
 * figure | lab | ratio | goal | met? | why) and the texts (blktrace
 * excerpts, notes). On a real disk (--disk=file:PATH) what is underneath
 * comes first, and each scenario's s_real under its heading (the JSON's
 * "machine" and "real_world"; absent in the sim, whose bytes do not move).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab/real.h"
#include "lab/runner.h"
#include "ujbd/ujbd.h"

#define NUM_FMT "%.9g"
#define COL_MIN 10

/* ---- shared walks -------------------------------------------------------- */

/* The distinct metric names of a scenario's results, in first-seen order
 * (variants in order). Returns the count; *names is malloc'd (may be NULL
 * when 0). */
static size_t metric_names(const struct lab_scen_run *sr, const char ***names)
{
	size_t n = 0, cap = 0;
	const char **v = NULL;

	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_result *r = sr->sr_res[k];

		for (size_t i = 0; r && i < lab_result_count(r); i++) {
			const struct lab_item *it = lab_result_item(r, i);
			bool seen = false;

			if (it->i_kind != LAB_METRIC)
				continue;
			for (size_t j = 0; j < n && !seen; j++)
				seen = !strcmp(v[j], it->i_name);
			if (seen)
				continue;
			if (n == cap) {
				const char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (!nv)
					break;
				v = nv;
			}
			v[n++] = it->i_name;
		}
	}
	*names = v;
	return n;
}

/* ---- text ------------------------------------------------------------------ */

/* The thread a scenario replays, in one line: 'thread 000, "SUBJECT", LIST, DATE, AUTHOR'. */
static void text_thread(FILE *f, const struct lab_thread *t)
{
	fprintf(f, "thread %s, \"%s\", %s, %s, %s", t->t_id, t->t_subject, t->t_list, t->t_date,
		t->t_author);
}

static void text_heading(FILE *f, const struct lab_scenario *sc, bool real)
{
	fprintf(f, "== %s", sc->s_name);
	if (sc->s_thread) {
		fputs(" (", f);
		text_thread(f, sc->s_thread);
		fputc(')', f);
	} else {
		fputs(" (no thread: the lab's own question)", f);
	}
	fprintf(f, ": %s\n", sc->s_help ? sc->s_help : "");
	if (real && sc->s_real)
		fprintf(f, "on a real disk: %s\n", sc->s_real);
}

/* The parameters the user changed from their defaults ("--hdd=rpm=5400
   --jbd=wake=always"), or "none". */
static void text_changed(FILE *f, const struct lab_ctx *c)
{
	if (!lab_ctx_ngroups(c))
		fputs("none", f);
	for (size_t i = 0; i < lab_ctx_ngroups(c); i++)
		fprintf(f, "%s--%s=%s", i ? " " : "", lab_ctx_group_at(c, i),
			lab_ctx_params(c, lab_ctx_group_at(c, i)));
}

/* The first line: what ran, so that every output says which version, which seed and
   whether it was a smoke run. */
static void text_banner(FILE *f, const struct lab_ctx *c)
{
	fprintf(f, "ujbd lab %s: seed %llu, %s, %s world, disk %s; parameters changed from their "
		"defaults: ", ujbd_version(), (unsigned long long)lab_ctx_seed(c),
		lab_ctx_quick(c) ? "QUICK run (--quick: a smoke run, no verdicts)" : "full run",
		lab_ctx_world(c) == RT_WORLD_SIM ? "sim" : "real", lab_ctx_disk(c));
	text_changed(f, c);
	fputc('\n', f);
}

/* What is underneath a real file, once, before the scenarios. */
static void text_machine(FILE *f, const struct lab_ctx *c)
{
	struct lab_real_disk d;

	lab_real_describe(c, &d);
	fprintf(f, "real disk: %s on %s (the kernel's scheduler: %s; %s), %ld CPUs;\n"
		"  ujbd's elevator above it, %s\n\n", lab_real_path(c),
		d.rd_dev[0] ? d.rd_dev : "no block device", d.rd_scheduler[0] ? d.rd_scheduler : "-",
		d.rd_rotational < 0 ? "seeks unknown" : d.rd_rotational ? "rotational" : "not rotational",
		d.rd_cpus, d.rd_direct ? "O_DIRECT: each request goes down with its ioprio"
				      : "through the page cache (--file=direct=0): the kernel sees writeback");
}

static int col_width(const struct lab_scen_run *sr, size_t k)
{
	size_t w = strlen(sr->sr_scen->s_variants[k]);

	return (int)(w < COL_MIN ? COL_MIN : w);
}

void lab_report_metrics(FILE *f, const struct lab_scen_run *sr, const struct lab_table_ops *ops)
{
	const char **names;
	size_t n = metric_names(sr, &names), w = 6;
	char buf[32];

	for (size_t j = 0; j < n; j++)
		w = strlen(names[j]) > w ? strlen(names[j]) : w;
	ops->row(f, "metric", (int)w, true);
	for (size_t k = 0; k < sr->sr_nvariants; k++)
		if (sr->sr_res[k])
			ops->cell(f, sr->sr_scen->s_variants[k], col_width(sr, k), true);
	ops->row_end(f);
	for (size_t j = 0; j < n; j++) {
		ops->row(f, names[j], (int)w, false);
		for (size_t k = 0; k < sr->sr_nvariants; k++) {
			double v;

			if (!sr->sr_res[k])
				continue;
			v = lab_result_get(sr->sr_res[k], names[j]);
			if (isnan(v))
				snprintf(buf, sizeof(buf), "-");
			else
				snprintf(buf, sizeof(buf), "%.6g", v);
			ops->cell(f, buf, col_width(sr, k), false);
		}
		ops->row_end(f);
	}
	free(names);
}

static void text_metric_row(FILE *f, const char *name, int width, bool head)
{
	fprintf(f, "%-*s", width, name);
}

static void text_metric_cell(FILE *f, const char *text, int width, bool head)
{
	fprintf(f, "  %*s", width, text);
}

static void text_metric_end(FILE *f)
{
	fputc('\n', f);
}

static const struct lab_table_ops text_metric_ops = {
	.row = text_metric_row, .cell = text_metric_cell, .row_end = text_metric_end,
};

static void text_failed(FILE *f, const struct lab_scen_run *sr)
{
	char msg[320];

	for (size_t k = 0; k < sr->sr_nvariants; k++)
		if (sr->sr_rc[k] < 0)
			fprintf(f, "variant %s failed: %s\n", sr->sr_scen->s_variants[k],
				lab_variant_error(sr, k, msg, sizeof(msg)));
}

const char *lab_verdict(const struct lab_ctx *c, const struct lab_summary_rowv *w)
{
	if (lab_ctx_quick(c))
		return "- (quick)";
	return w->w_met ? "yes" : "no";
}

void lab_thread_fields(const struct lab_thread *t, const char *v[LAB_THREAD_FIELDS])
{
	v[LAB_THREAD_ID] = t->t_id, v[LAB_THREAD_SUBJECT] = t->t_subject;
	v[LAB_THREAD_LIST] = t->t_list, v[LAB_THREAD_DATE] = t->t_date;
	v[LAB_THREAD_AUTHOR] = t->t_author, v[LAB_THREAD_CLAIM] = t->t_claim;
}

void lab_summary_cells(const struct lab_ctx *c, const char *scen,
		       const struct lab_summary_rowv *w, const char *cell[LAB_SUM_COLS], char *ratio,
		       size_t len)
{
	snprintf(ratio, len, "-");
	if (!isnan(w->w_ratio))
		snprintf(ratio, len, "%.3g", w->w_ratio);
	cell[LAB_SUM_SCEN] = scen, cell[LAB_SUM_WHAT] = w->w_what;
	cell[LAB_SUM_THREAD] = w->w_thread, cell[LAB_SUM_LAB] = w->w_lab;
	cell[LAB_SUM_RATIO] = ratio, cell[LAB_SUM_GOAL] = w->w_goal;
	cell[LAB_SUM_MET] = lab_verdict(c, w), cell[LAB_SUM_WHY] = w->w_why;
}

static void summary_line(FILE *f, const char *const cell[LAB_SUM_COLS],
			 const int width[LAB_SUM_COLS])
{
	for (int c = 0; c < LAB_SUM_COLS; c++) {
		if (c == LAB_SUM_COLS - 1)
			fprintf(f, "%s\n", cell[c]);
		else if (c == LAB_SUM_RATIO)
			fprintf(f, "%*s | ", width[c], cell[c]);
		else
			fprintf(f, "%-*s | ", width[c], cell[c]);
	}
}

/* Every scenario's summary rows in one table, last: where the eye lands. */
static void text_summary(FILE *f, const struct lab_run *run)
{
	static const char *const head[LAB_SUM_COLS] = { "scenario", "what", "thread's figure",
							"lab", "ratio", "goal", "met?", "why" };
	const struct lab_ctx *c = run->r_ctx;
	const char *cell[LAB_SUM_COLS];
	int width[LAB_SUM_COLS];
	char ratio[32];
	size_t rows = 0, met = 0;

	for (int k = 0; k < LAB_SUM_COLS; k++)
		width[k] = (int)strlen(head[k]);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];

		for (size_t j = 0; j < lab_summary_count(sr->sr_sum); j++) {
			lab_summary_cells(c, sr->sr_scen->s_name, lab_summary_at(sr->sr_sum, j),
					  cell, ratio, sizeof(ratio));
			for (int k = 0; k < LAB_SUM_COLS; k++)
				if ((int)strlen(cell[k]) > width[k])
					width[k] = (int)strlen(cell[k]);
			rows++;
			met += lab_summary_at(sr->sr_sum, j)->w_met;
		}
	}
	fprintf(f, "\n== summary: each thread's claim against the lab's figure%s\n",
		lab_ctx_quick(c) ? " (QUICK run: figures of a smoke run, no verdicts)" : "");
	if (rows)
		summary_line(f, head, width);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];

		for (size_t j = 0; j < lab_summary_count(sr->sr_sum); j++) {
			lab_summary_cells(c, sr->sr_scen->s_name, lab_summary_at(sr->sr_sum, j),
					  cell, ratio, sizeof(ratio));
			summary_line(f, cell, width);
		}
	}
	fprintf(f, "ujbd lab %s, seed %llu: ", ujbd_version(), (unsigned long long)lab_ctx_seed(c));
	if (lab_ctx_quick(c))
		fprintf(f, "QUICK run, %zu rows, no verdicts", rows);
	else
		fprintf(f, "%zu of %zu goals met", met, rows);
	if (run->r_failed)
		fprintf(f, "; %zu variant%s failed", run->r_failed, run->r_failed == 1 ? "" : "s");
	fputs("\n", f);
}

static void text_texts(FILE *f, const struct lab_scen_run *sr)
{
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		const struct lab_result *r = sr->sr_res[k];

		for (size_t i = 0; r && i < lab_result_count(r); i++) {
			const struct lab_item *it = lab_result_item(r, i);
			size_t len;

			if (it->i_kind != LAB_TEXT)
				continue;
			len = strlen(it->i_text);
			fprintf(f, "\n-- %s %s: %s\n%s%s", sr->sr_scen->s_name,
				sr->sr_scen->s_variants[k], it->i_name, it->i_text,
				len && it->i_text[len - 1] == '\n' ? "" : "\n");
		}
	}
}

int lab_report_text(FILE *f, const struct lab_run *run, unsigned flags)
{
	bool real = lab_real_path(run->r_ctx) != NULL;

	text_banner(f, run->r_ctx);
	if (!run->r_n)
		fprintf(f, "ujbd lab: no scenario to run\n");
	if (real)
		text_machine(f, run->r_ctx);
	for (size_t i = 0; i < run->r_n; i++) {
		const struct lab_scen_run *sr = &run->r_scen[i];

		fputc('\n', f);
		text_heading(f, sr->sr_scen, real);
		lab_report_metrics(f, sr, &text_metric_ops);
		if (sr->sr_scen->s_table)
			sr->sr_scen->s_table((const struct lab_result *const *)sr->sr_res, f);
		text_failed(f, sr);
		if (flags & LAB_TEXT_TEXTS)
			text_texts(f, sr);
	}
	if (run->r_n)
		text_summary(f, run);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------------ */

/* A JSON string literal (control characters as \u00XX). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, NUM_FMT, v);
	else
		fputs("null", f);
}

static void json_variant(FILE *f, const struct lab_result *r)
{
	bool first = true;

	fputc('{', f);
	for (size_t i = 0; i < lab_result_count(r); i++) {
		const struct lab_item *it = lab_result_item(r, i);

		if (it->i_kind != LAB_METRIC && it->i_kind != LAB_ARRAY)
			continue;
		fprintf(f, "%s\"%s\": ", first ? "" : ", ", it->i_name);
		first = false;
		if (it->i_kind == LAB_METRIC) {
			json_num(f, it->i_value);
			continue;
		}
		fputc('[', f);
		for (size_t j = 0; j < it->i_n; j++) {
			if (j)
				fputs(", ", f);
			json_num(f, it->i_x[j]);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

static void json_summary(FILE *f, const struct lab_summary *s, bool quick)
{
	fputs("\"summary\": [", f);
	for (size_t i = 0; i < lab_summary_count(s); i++) {
		const struct lab_summary_rowv *w = lab_summary_at(s, i);

		fputs(i ? ", {\"what\": " : "{\"what\": ", f);
		json_str(f, w->w_what);
		fputs(", \"thread_figure\": ", f);
		json_str(f, w->w_thread);
		fputs(", \"seed_figure\": ", f); /* the same: its name before 2026-12-06 */
		json_str(f, w->w_thread);
		fputs(", \"lab_figure\": ", f);
		json_str(f, w->w_lab);
		fputs(", \"ratio\": ", f);
		json_num(f, w->w_ratio);
		fputs(", \"goal\": ", f);
		json_str(f, w->w_goal);
		fprintf(f, ", \"met\": %s, \"verdict\": \"%s\", \"why\": ", w->w_met ? "true" : "false",
			quick ? "none (quick)" : w->w_met ? "met" : "not met");
		json_str(f, w->w_why);
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_thread(FILE *f, const struct lab_thread *t)
{
	static const char *const key[LAB_THREAD_FIELDS] = { "id", "subject", "list", "date",
							    "author", "claim" };
	const char *v[LAB_THREAD_FIELDS];

	if (!t) {
		fputs("null", f);
		return;
	}
	lab_thread_fields(t, v);
	for (int i = 0; i < LAB_THREAD_FIELDS; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "{", key[i]);
		json_str(f, v[i]);
	}
	fputc('}', f);
}

static void json_scenario(FILE *f, const struct lab_scen_run *sr, bool real)
{
	bool first = true;
	char msg[320];

	json_str(f, sr->sr_scen->s_name);
	fputs(": {\"thread\": ", f);
	json_thread(f, sr->sr_scen->s_thread);
	fputs(", \"variants\": {", f);
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (!sr->sr_res[k])
			continue;
		fprintf(f, "%s", first ? "" : ", ");
		first = false;
		json_str(f, sr->sr_scen->s_variants[k]);
		fputs(": ", f);
		json_variant(f, sr->sr_res[k]);
	}
	fputs("}, \"failed\": {", f);
	first = true;
	for (size_t k = 0; k < sr->sr_nvariants; k++) {
		if (sr->sr_rc[k] >= 0)
			continue;
		fprintf(f, "%s", first ? "" : ", ");
		first = false;
		json_str(f, sr->sr_scen->s_variants[k]);
		fputs(": ", f);
		json_str(f, lab_variant_error(sr, k, msg, sizeof(msg)));
	}
	fputs("}, ", f);
	json_summary(f, sr->sr_sum, lab_ctx_quick(lab_summary_ctx(sr->sr_sum)));
	if (real && sr->sr_scen->s_real) {
		fputs(", \"real_world\": ", f);
		json_str(f, sr->sr_scen->s_real);
	}
	fputc('}', f);
}

/* "machine": what is underneath a real file (real.h). */
static void json_machine(FILE *f, const struct lab_ctx *c)
{
	struct lab_real_disk d;

	lab_real_describe(c, &d);
	fputs(", \"machine\": {\"device\": ", f);
	json_str(f, d.rd_dev);
	fputs(", \"scheduler\": ", f);
	json_str(f, d.rd_scheduler);
	fprintf(f, ", \"rotational\": %s, \"direct\": %s, \"cpus\": %ld}",
		d.rd_rotational < 0 ? "null" : d.rd_rotational ? "true" : "false",
		d.rd_direct ? "true" : "false", d.rd_cpus);
}

int lab_report_json(FILE *f, const struct lab_run *run)
{
	const struct lab_ctx *c = run->r_ctx;
	bool real = lab_real_path(c) != NULL;
	int rc;

	fprintf(f, "{\"seed\": %llu, \"version\": ", (unsigned long long)lab_ctx_seed(c));
	json_str(f, ujbd_version());
	fprintf(f, ", \"quick\": %s, \"world\": \"%s\", \"disk\": ",
		lab_ctx_quick(c) ? "true" : "false", lab_ctx_world(c) == RT_WORLD_SIM ? "sim" : "real");
	json_str(f, lab_ctx_disk(c));
	if (real)
		json_machine(f, c);
	/* the user's lists, as given: every parameter changed from its default */
	fputs(", \"params_changed\": {", f);
	for (size_t i = 0; i < lab_ctx_ngroups(c); i++) {
		fputs(i ? ", " : "", f);
		json_str(f, lab_ctx_group_at(c, i));
		fputs(": ", f);
		json_str(f, lab_ctx_params(c, lab_ctx_group_at(c, i)));
	}
	fputs("}, \"params\": ", f);
	rc = lab_params_json(f, c);
	fputs(", \"scenarios\": {", f);
	for (size_t i = 0; i < run->r_n; i++) {
		if (i)
			fputs(", ", f);
		json_scenario(f, &run->r_scen[i], real);
	}
	fputs("}}\n", f);
	fflush(f);
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

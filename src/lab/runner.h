/*
 * lab runner: the context, the results and the report, as the `ujbd lab`
 * tool sees them (the scenarios see only lab.h).
 *
 * The one idea: a run is a list of scenario runs, each holding one
 * lab_result per variant (NULL where the variant was not selected) and the
 * scenario's summary rows. Everything in it is names and numbers in
 * insertion order, so the report (report.c) prints the same bytes for the
 * same seed. Nothing here prints except into a FILE the caller hands over.
 *
 * Errors: 0 or a negative errno; err (may be NULL) gets a one-line reason
 * ("no scenario 'bogus'"). A failing call changes nothing.
 */
#ifndef UJBD_LAB_RUNNER_H
#define UJBD_LAB_RUNNER_H

#include <stdio.h>

#include "lab/lab.h"

/* ---- the context ----------------------------------------------------- */

#define LAB_MAX_GROUPS 32

int lab_ctx_new(struct lab_ctx **out);
void lab_ctx_free(struct lab_ctx *c);
void lab_ctx_set_seed(struct lab_ctx *c, uint64_t seed);
void lab_ctx_set_quick(struct lab_ctx *c, bool quick);
/* "hdd", "ssd" or "file:PATH" (copied). -EINVAL for anything else. */
int lab_ctx_set_disk(struct lab_ctx *c, const char *disk);
void lab_ctx_set_world(struct lab_ctx *c, enum rt_world_kind w);
/* Variants run at once, each in a sim world of its own (1: one after the
 * other; the real world always runs them one after the other, so that they
 * do not time each other's I/O). The output is the same either way. */
#define LAB_MAX_JOBS 64
void lab_ctx_set_jobs(struct lab_ctx *c, unsigned jobs);
/* Progress lines go to f (NULL: none). */
void lab_ctx_set_progress(struct lab_ctx *c, FILE *f);
/*
 * Record the user's --GROUP=LIST. The list is checked against the group's
 * table (lab_params_check), joined to an earlier one for the same group
 * ("a=1" then "b=2" gives "a=1,b=2"; later values win when parsed). -EINVAL
 * with err for an unknown group or a bad list, -ENOMEM, -ENOSPC.
 */
int lab_ctx_add_params(struct lab_ctx *c, const char *group, const char *list, char *err,
		       size_t errlen);
/* The groups the user gave, in order (for the JSON document). */
size_t lab_ctx_ngroups(const struct lab_ctx *c);
const char *lab_ctx_group_at(const struct lab_ctx *c, size_t i);

/* ---- parameter groups (params.c) ------------------------------------- */

/* The groups, in print order (for the tool's --GROUP options). */
size_t lab_group_count(void);
const char *lab_group_at(size_t i);
/* Is group a parameter group the lab knows? */
bool lab_group_known(const char *group);
/* Check list against group's table. 0, or -EINVAL with err. */
int lab_params_check(const char *group, const char *list, char *err, size_t errlen);
/* Print every group's table (text: rt_param_print; json: one object
 * {GROUP: {NAME: {"value", "unit", ...}}} and a newline) with the user's
 * lists of c applied (c NULL: the defaults). 0 or -EIO. */
int lab_params_print(FILE *f, const struct lab_ctx *c, bool json);
/* The same object without the newline, for the JSON document. */
int lab_params_json(FILE *f, const struct lab_ctx *c);

/* ---- results ----------------------------------------------------------- */

enum lab_item_kind {
	LAB_METRIC = 0,
	LAB_ARRAY = 1,
	LAB_HIST = 2,       /* i_x bucket tops (ms), i_y counts */
	LAB_SERIES = 3,
	LAB_TEXT = 4,
};

/* One named item of a result, in insertion order. */
struct lab_item {
	enum lab_item_kind i_kind;
	char *i_name;
	double i_value;   /* LAB_METRIC */
	double *i_x;      /* LAB_ARRAY, LAB_HIST (bucket tops), LAB_SERIES (x) */
	double *i_y;      /* LAB_HIST (counts), LAB_SERIES */
	size_t i_n;
	char *i_text;     /* LAB_TEXT */
};

int lab_result_new(struct lab_result **out);
void lab_result_free(struct lab_result *r);
size_t lab_result_count(const struct lab_result *r);
const struct lab_item *lab_result_item(const struct lab_result *r, size_t i);

struct lab_summary_rowv {
	char *w_what, *w_thread, *w_lab, *w_goal, *w_why;
	double w_ratio;   /* NAN: none */
	bool w_met;
};

size_t lab_summary_count(const struct lab_summary *s);
const struct lab_summary_rowv *lab_summary_at(const struct lab_summary *s, size_t i);

/* ---- a run ------------------------------------------------------------- */

struct lab_scen_run {
	const struct lab_scenario *sr_scen;
	size_t sr_nvariants;          /* of the scenario */
	struct lab_result **sr_res;   /* [sr_nvariants]: NULL if not selected or failed */
	int *sr_rc;                   /* [sr_nvariants]: s_run's rc; 1 = not selected */
	char **sr_why;                /* [sr_nvariants]: lab_fail_why's text of a failure, or NULL */
	struct lab_summary *sr_sum;
};

/* What made variant k fail, for a report: "WHY (strerror)", or the errno's text
   alone when the scenario gave no why. Into buf; returns buf. */
const char *lab_variant_error(const struct lab_scen_run *sr, size_t k, char *buf, size_t n);

struct lab_run {
	const struct lab_ctx *r_ctx;
	size_t r_n;
	struct lab_scen_run *r_scen;
	size_t r_failed;              /* variants whose s_run failed */
	/* progress (lab_run_all): variants to run, started, done; its start (wall time) */
	size_t r_total, r_started, r_done;
	uint64_t r_t0_ns;
};

/*
 * Select scenarios (comma list, NULL or "" = all) and variants (comma
 * list of variant names, NULL or "" = all; a scenario keeps those it has;
 * a name no selected scenario has is an error) without running anything.
 * -EINVAL with err for an unknown name, -ENOMEM.
 */
int lab_run_new(const struct lab_ctx *c, const char *scenarios, const char *variants,
		struct lab_run **out, char *err, size_t errlen);
/* The same over a table of the caller's (the runner's tests). */
int lab_run_new_from(const struct lab_scenario *const *scen, size_t n, const struct lab_ctx *c,
		     const char *scenarios, const char *variants, struct lab_run **out, char *err,
		     size_t errlen);
/* Run every selected variant, then each scenario's summary. Returns the
 * number of failed variants (each recorded in sr_rc), never negative. */
size_t lab_run_all(struct lab_run *run);
void lab_run_free(struct lab_run *run);

/* ---- the report (report.c) -------------------------------------------- */

/* The text report: a first line naming the version, the seed, quick or full and the
 * changed parameters; per scenario its heading (the thread: id, subject, list, date,
 * author), its metrics and its failed variants (with LAB_TEXT_TEXTS its texts too:
 * blktrace excerpts, which the terminal does not get); then every scenario's summary
 * rows in one table, last, and a closing line with the version and the seed. 0 or -EIO. */
#define LAB_TEXT_TEXTS 1u
int lab_report_text(FILE *f, const struct lab_run *run, unsigned flags);
/* A summary row's verdict as the reports print it: "yes", "no", "- (quick)". */
const char *lab_verdict(const struct lab_ctx *c, const struct lab_summary_rowv *w);
/* A summary row's cells as every report prints them (the ratio "%.3g" or "-" into
 * ratio[len]; the others point into w, or scen). */
enum {
	LAB_SUM_SCEN, LAB_SUM_WHAT, LAB_SUM_THREAD, LAB_SUM_LAB, LAB_SUM_RATIO, LAB_SUM_GOAL,
	LAB_SUM_MET, LAB_SUM_WHY, LAB_SUM_COLS
};
void lab_summary_cells(const struct lab_ctx *c, const char *scen,
		       const struct lab_summary_rowv *w, const char *cell[LAB_SUM_COLS], char *ratio,
		       size_t len);
/* A thread's fields in the order the reports name them, into v. */
enum {
	LAB_THREAD_ID, LAB_THREAD_SUBJECT, LAB_THREAD_LIST, LAB_THREAD_DATE, LAB_THREAD_AUTHOR,
	LAB_THREAD_CLAIM, LAB_THREAD_FIELDS
};
void lab_thread_fields(const struct lab_thread *t, const char *v[LAB_THREAD_FIELDS]);
/* A scenario's metrics table, the same rows in every report: a heading row ("metric",
 * then a cell per variant that ran), then a row per metric (in first-seen order) with a
 * cell per variant that ran: "%.6g", or "-" where it has none. How a row starts, how a
 * cell looks and how a row ends is the report's; width is the text report's column width. */
struct lab_table_ops {
	void (*row)(FILE *f, const char *name, int width, bool head);
	void (*cell)(FILE *f, const char *text, int width, bool head);
	void (*row_end)(FILE *f);
};
void lab_report_metrics(FILE *f, const struct lab_scen_run *sr, const struct lab_table_ops *ops);
/* The JSON document and a newline. 0 or -EIO. */
int lab_report_json(FILE *f, const struct lab_run *run);
/*
 * Write dir/: lab.json, per scenario and variant NAME_VARIANT_metrics.csv
 * and NAME_VARIANT_data.csv (histograms, series), gnuplot scripts (*.gp) and,
 * if gnuplot is found, their PNGs, texts (*.txt) and report.html. The
 * directory is created if missing. 0, or -errno with err.
 */
int lab_report_dir(const struct lab_run *run, const char *dir, char *err, size_t errlen);

/* Before a run: can dir be written (created if missing, a file made and removed in it)?
 * 0, or -errno with err ("cannot write in 'DIR': Permission denied"). */
int lab_report_dir_check(const char *dir, char *err, size_t errlen);

/* A file-name-safe copy of s (letters, digits, '-', '.' kept; others '_'). */
void lab_file_name(char *buf, size_t len, const char *s);

#endif /* UJBD_LAB_RUNNER_H */

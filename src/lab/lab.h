/*
 * lab: the scenarios of the threads, run as experiments, and their report.
 *
 * The one idea: a scenario is a row of a registry (src/lab/scenarios.c)
 * with a name, the thread it reproduces, its variants and two functions. The
 * runner (tools/cmd_lab.c, src/lab/runner.c) loops scenarios x variants,
 * hands each variant a fresh lab_result to fill (named metrics, arrays,
 * latency histograms, (x, y) series, texts), then asks the scenario for its
 * summary rows (the thread's figure, the lab's, the ratio that matters, why).
 * The report (src/lab/report.c) prints what was filled: text tables, one
 * deterministic JSON document, and with --out CSV, gnuplot plots and one
 * report.html. A scenario never prints; it only fills its result.
 *
 * Determinism: results hold names and numbers only, kept in insertion
 * order, so the same seed gives the same document byte for byte.
 *
 * Errors: 0 or a negative errno (-EINVAL for a bad name or a non-finite
 * value, -ENOMEM); a failing call changes nothing.
 *
 * Thread-safety: a lab_result is filled by one thread at a time (the
 * scenario's; take your own lock if workers fill it).
 */
#ifndef UJBD_LAB_LAB_H
#define UJBD_LAB_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "priv/hist.h"
#include "priv/rt.h"

struct lab_ctx; /* opaque: seed, quick, disk, world, the user's --GROUP=LIST strings */
uint64_t lab_ctx_seed(const struct lab_ctx *c);
bool lab_ctx_quick(const struct lab_ctx *c);        /* --quick: a smoke run, seconds not minutes */
const char *lab_ctx_disk(const struct lab_ctx *c);  /* "hdd" (default), "ssd", or "file:PATH" */
enum rt_world_kind lab_ctx_world(const struct lab_ctx *c); /* sim (default) or real */
/* The user's list for a group ("" if none): "hdd", "ssd", "cfq", "deadline", "noop", "queue",
   "fs", "jbd" ... pass it on to stack_spec (disk/queue params) or rt_param_parse (fs). */
const char *lab_ctx_params(const struct lab_ctx *c, const char *group);
/* Progress (one line per scenario and variant, to stderr when it is a terminal or -v). */
void lab_progress(const struct lab_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Why the variant running on this thread fails (its s_run then returns -errno): the
   report prints "WHY (strerror)" instead of the errno's text alone. The last call wins. */
void lab_fail_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct lab_result; /* one variant's results, filled by the scenario */
int lab_result_metric(struct lab_result *r, const char *name, double v); /* a JSON number */
int lab_result_array(struct lab_result *r, const char *name, const double *v, size_t n); /* array */
/* A latency histogram (rt_hist, ns) for the distribution plots in --out, kept as its
   non-empty buckets (top in ms, count); not in the JSON document. */
int lab_result_hist(struct lab_result *r, const char *name, const struct rt_hist *h);
/* (x, y) series for plots in --out (e.g. "sector_vs_time": x seconds, y sector). */
int lab_result_series(struct lab_result *r, const char *name, const double *x, const double *y,
		      size_t n);
/* Text for the report (blktrace excerpt in blkparse format, notes); printed in text mode, saved
   in --out, not in the JSON document. */
int lab_result_text(struct lab_result *r, const char *name, const char *text);
/* Read back (for summaries): NAN if absent. */
double lab_result_get(const struct lab_result *r, const char *name);

struct lab_summary; /* rows: */
/* The run's context, for a summary whose words depend on it (a real disk: lab_real_path). */
const struct lab_ctx *lab_summary_ctx(const struct lab_summary *s);
void lab_summary_row(struct lab_summary *s, const char *what, const char *thread_figure,
		     const char *lab_figure, double ratio, const char *goal, bool met,
		     const char *why);

/* A mailing-list thread a scenario replays (threads.c): as the thread gives them. */
struct lab_thread {
	const char *t_id;       /* "000", "002", ... or a short name ("writeout") */
	const char *t_subject, *t_list, *t_date, *t_author;
	const char *t_claim;    /* the claim and its figure, one line */
};
extern const struct lab_thread lab_thread_000, lab_thread_000_morton, lab_thread_002,
	lab_thread_003, lab_thread_004, lab_thread_writeout, lab_thread_checkpoint;

struct lab_scenario {
	const char *s_name;            /* "atime", "morton", "flush", "aim7", "smallfile", "fsync-loop" */
	const struct lab_thread *s_thread; /* the thread it replays; NULL: the lab's own question */
	const char *s_help;            /* one line */
	const char *const *s_variants; /* NULL-terminated: { "be:4", "rt:4", "inherit", NULL } */
	/* Run one variant; fill out. 0 or -errno (the runner reports it and goes on). */
	int (*s_run)(const struct lab_ctx *c, const char *variant, struct lab_result *out);
	/* After all variants ran: fill the report's rows ("the thread's figure", "the lab's", the ratio
	   that matters, one line on why). r[i] is s_variants[i]'s result, NULL if not run. */
	void (*s_summary)(const struct lab_result *const *r, struct lab_summary *out);
	/* A table of its own across the variants (the thread's layout beside the lab's), printed
	   after the metrics in the text and report.html; r as for s_summary. NULL: none. */
	void (*s_table)(const struct lab_result *const *r, FILE *f);
	/* On a real disk (--world=real --disk=file:PATH): one line on what the scenario measures
	   there and which of its parameters are sim only; NULL: the same as in the sim. */
	const char *s_real;
	/* The finding as report.html's first plot of the scenario (--out): a bar per variant
	   for each metric, each "NAME AXIS LABEL (UNIT)" (the metric, a space, the y axis'
	   label), NULL-terminated; s_plot_title says what to look at. NULL: the first plot is
	   the latency tail (the complementary CDF) or the sweep. */
	const char *const *s_plot;
	const char *s_plot_title;
	/* What a variant's timeline (lab_rig_spec.timeline) covers when it is not the
	   variant's whole measurement ("the HDD with a 32 MiB cache"); NULL: the whole. */
	const char *s_timeline;
};

/* The registry: one row per scenario in src/lab/scenarios.c (adding a scenario = its file + a row). */
const struct lab_scenario *lab_scenario_find(const char *name);
size_t lab_scenario_count(void);
const struct lab_scenario *lab_scenario_at(size_t i);

#endif /* UJBD_LAB_LAB_H */

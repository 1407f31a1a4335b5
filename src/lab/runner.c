/*
 * lab runner: the context a scenario runs in, the results it fills, the
 * summary rows, and the loop over scenarios x variants.
 *
 * The one idea: a result is an append-only list of named items (metrics,
 * arrays, histograms, series, texts) kept in the order the scenario added
 * them; setting a name again replaces its value in place. Order and content
 * depend only on the scenario, never on pointers or the wall clock, which is
 * what makes the report's bytes a function of the seed.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lab/runner.h"
#include "ujbd/ujbd.h"

#define LAB_MAX_ITEMS 4096     /* per result */
#define LAB_MAX_VALUES (1u << 24) /* per array, histogram or series */
#define LAB_MAX_ROWS 64        /* summary rows per scenario */
#define LAB_MAX_NAME 64

struct lab_ctx {
	uint64_t c_seed;
	bool c_quick;
	char *c_disk;
	enum rt_world_kind c_world;
	unsigned c_jobs;
	FILE *c_progress;
	size_t c_ngroups;
	char *c_group[LAB_MAX_GROUPS];
	char *c_list[LAB_MAX_GROUPS];
};

struct lab_result {
	size_t r_n, r_cap;
	struct lab_item *r_items;
};

struct lab_summary {
	const struct lab_ctx *s_ctx;
	size_t s_n;
	struct lab_summary_rowv s_rows[LAB_MAX_ROWS];
};

/* ---- the context ----------------------------------------------------- */

int lab_ctx_new(struct lab_ctx **out)
{
	struct lab_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->c_seed = 1;
	c->c_world = RT_WORLD_SIM;
	c->c_disk = strdup("hdd");
	if (!c->c_disk) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void lab_ctx_free(struct lab_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->c_ngroups; i++) {
		free(c->c_group[i]);
		free(c->c_list[i]);
	}
	free(c->c_disk);
	free(c);
}

void lab_ctx_set_seed(struct lab_ctx *c, uint64_t seed) { c->c_seed = seed; }
void lab_ctx_set_quick(struct lab_ctx *c, bool quick) { c->c_quick = quick; }
void lab_ctx_set_world(struct lab_ctx *c, enum rt_world_kind w) { c->c_world = w; }
void lab_ctx_set_jobs(struct lab_ctx *c, unsigned jobs) { c->c_jobs = jobs; }
void lab_ctx_set_progress(struct lab_ctx *c, FILE *f) { c->c_progress = f; }

int lab_ctx_set_disk(struct lab_ctx *c, const char *disk)
{
	char *d;

	if (strcmp(disk, "hdd") && strcmp(disk, "ssd") &&
	    (strncmp(disk, "file:", 5) || !disk[5]))
		return -EINVAL;
	d = strdup(disk);
	if (!d)
		return -ENOMEM;
	free(c->c_disk);
	c->c_disk = d;
	return 0;
}

static ssize_t ctx_group_index(const struct lab_ctx *c, const char *group)
{
	for (size_t i = 0; i < c->c_ngroups; i++)
		if (!strcmp(c->c_group[i], group))
			return (ssize_t)i;
	return -1;
}

/* "old,list" or "list": a fresh string. */
static char *join_lists(const char *old, const char *list)
{
	size_t lo = old ? strlen(old) : 0, ll = strlen(list);
	char *s = malloc(lo + ll + 2);

	if (!s)
		return NULL;
	if (lo && ll)
		snprintf(s, lo + ll + 2, "%s,%s", old, list);
	else
		snprintf(s, lo + ll + 2, "%s", lo ? old : list);
	return s;
}

int lab_ctx_add_params(struct lab_ctx *c, const char *group, const char *list, char *err,
		       size_t errlen)
{
	ssize_t i = ctx_group_index(c, group);
	char *joined, *name = NULL;
	int rc;

	rc = lab_params_check(group, list, err, errlen);
	if (rc)
		return rc;
	if (i < 0 && c->c_ngroups == LAB_MAX_GROUPS)
		return -ENOSPC;
	joined = join_lists(i < 0 ? NULL : c->c_list[i], list);
	if (i < 0)
		name = strdup(group);
	if (!joined || (i < 0 && !name)) {
		free(joined);
		free(name);
		return -ENOMEM;
	}
	if (i >= 0) {
		free(c->c_list[i]);
		c->c_list[i] = joined;
		return 0;
	}
	c->c_group[c->c_ngroups] = name;
	c->c_list[c->c_ngroups++] = joined;
	return 0;
}

size_t lab_ctx_ngroups(const struct lab_ctx *c) { return c->c_ngroups; }
const char *lab_ctx_group_at(const struct lab_ctx *c, size_t i) { return c->c_group[i]; }

uint64_t lab_ctx_seed(const struct lab_ctx *c) { return c->c_seed; }
bool lab_ctx_quick(const struct lab_ctx *c) { return c->c_quick; }
const char *lab_ctx_disk(const struct lab_ctx *c) { return c->c_disk; }
enum rt_world_kind lab_ctx_world(const struct lab_ctx *c) { return c->c_world; }

const char *lab_ctx_params(const struct lab_ctx *c, const char *group)
{
	ssize_t i = ctx_group_index(c, group);

	return i < 0 ? "" : c->c_list[i];
}

void lab_progress(const struct lab_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->c_progress)
		return;
	va_start(ap, fmt);
	vfprintf(c->c_progress, fmt, ap);
	va_end(ap);
	fputc('\n', c->c_progress);
	fflush(c->c_progress);
}

/* ---- why a variant failed ----------------------------------------------- */

/* A variant runs on one thread from s_run's call to its return (jobs run
 * variants side by side, each on its own thread), so its reason is that
 * thread's. */
static _Thread_local char lab_why[256];

void lab_fail_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lab_why, sizeof(lab_why), fmt, ap);
	va_end(ap);
}

const char *lab_variant_error(const struct lab_scen_run *sr, size_t k, char *buf, size_t n)
{
	const char *why = sr->sr_why ? sr->sr_why[k] : NULL;
	int rc = sr->sr_rc[k];

	if (why)
		snprintf(buf, n, "%s (%s)", why, ujbd_strerror(rc));
	else
		snprintf(buf, n, "%s", ujbd_strerror(rc));
	return buf;
}

/* ---- results ----------------------------------------------------------- */

int lab_result_new(struct lab_result **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void item_release(struct lab_item *it)
{
	free(it->i_name);
	free(it->i_x);
	free(it->i_y);
	free(it->i_text);
}

void lab_result_free(struct lab_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->r_n; i++)
		item_release(&r->r_items[i]);
	free(r->r_items);
	free(r);
}

size_t lab_result_count(const struct lab_result *r) { return r->r_n; }

const struct lab_item *lab_result_item(const struct lab_result *r, size_t i)
{
	return i < r->r_n ? &r->r_items[i] : NULL;
}

/* Names go into JSON keys, CSV cells and file names unescaped. */
static bool name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > LAB_MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.:+-", name[i]))
			return false;
	return true;
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static double *dup_values(const double *v, size_t n)
{
	double *d = malloc((n ? n : 1) * sizeof(*d));

	if (d && n)
		memcpy(d, v, n * sizeof(*d));
	return d;
}

static struct lab_item *result_find(const struct lab_result *r, const char *name)
{
	for (size_t i = 0; i < r->r_n; i++)
		if (!strcmp(r->r_items[i].i_name, name))
			return &r->r_items[i];
	return NULL;
}

/*
 * Put a filled item (its buffers owned by it) under its name: replace an
 * item of that name in place, or append. On failure the item's buffers
 * are freed and r is unchanged.
 */
static int result_put(struct lab_result *r, struct lab_item *it)
{
	struct lab_item *old = result_find(r, it->i_name);

	if (old) {
		free(it->i_name);
		it->i_name = old->i_name;
		old->i_name = NULL;
		item_release(old);
		*old = *it;
		return 0;
	}
	if (r->r_n == r->r_cap) {
		size_t cap = r->r_cap ? 2 * r->r_cap : 16;
		struct lab_item *n = cap > LAB_MAX_ITEMS ? NULL :
			realloc(r->r_items, cap * sizeof(*n));

		if (!n) {
			item_release(it);
			return cap > LAB_MAX_ITEMS ? -ENOSPC : -ENOMEM;
		}
		r->r_items = n;
		r->r_cap = cap;
	}
	r->r_items[r->r_n++] = *it;
	return 0;
}

static int result_add(struct lab_result *r, enum lab_item_kind kind, const char *name,
		      const double *x, const double *y, size_t n)
{
	struct lab_item it = { .i_kind = kind, .i_n = n };

	if (!r || !name_ok(name) || n > LAB_MAX_VALUES || (n && !x) || (kind != LAB_ARRAY && n && !y))
		return -EINVAL;
	if (!all_finite(x, n) || (kind != LAB_ARRAY && !all_finite(y, n)))
		return -EINVAL;
	it.i_name = strdup(name);
	it.i_x = dup_values(x, n);
	if (kind != LAB_ARRAY)
		it.i_y = dup_values(y, n);
	if (!it.i_name || !it.i_x || (kind != LAB_ARRAY && !it.i_y)) {
		item_release(&it);
		return -ENOMEM;
	}
	return result_put(r, &it);
}

int lab_result_metric(struct lab_result *r, const char *name, double v)
{
	struct lab_item it = { .i_kind = LAB_METRIC, .i_value = v };

	if (!r || !name_ok(name) || !isfinite(v))
		return -EINVAL;
	it.i_name = strdup(name);
	if (!it.i_name)
		return -ENOMEM;
	return result_put(r, &it);
}

int lab_result_array(struct lab_result *r, const char *name, const double *v, size_t n)
{
	return result_add(r, LAB_ARRAY, name, v, NULL, n);
}

int lab_result_hist(struct lab_result *r, const char *name, const struct rt_hist *h)
{
	double x[RT_HIST_BUCKETS], y[RT_HIST_BUCKETS];
	size_t n = 0;

	if (!h)
		return -EINVAL;
	for (unsigned b = 0; b < RT_HIST_BUCKETS; b++) {
		uint64_t top;

		if (!h->h_bucket[b])
			continue;
		top = rt_hist_bucket_max(b);
		x[n] = (double)(top < h->h_max_ns ? top : h->h_max_ns) / 1e6;
		y[n++] = (double)h->h_bucket[b];
	}
	return result_add(r, LAB_HIST, name, x, y, n);
}

int lab_result_series(struct lab_result *r, const char *name, const double *x, const double *y,
		      size_t n)
{
	return result_add(r, LAB_SERIES, name, x, y, n);
}

int lab_result_text(struct lab_result *r, const char *name, const char *text)
{
	struct lab_item it = { .i_kind = LAB_TEXT };

	if (!r || !name_ok(name) || !text)
		return -EINVAL;
	it.i_name = strdup(name);
	it.i_text = strdup(text);
	if (!it.i_name || !it.i_text) {
		item_release(&it);
		return -ENOMEM;
	}
	return result_put(r, &it);
}

double lab_result_get(const struct lab_result *r, const char *name)
{
	const struct lab_item *it = r && name ? result_find(r, name) : NULL;

	return it && it->i_kind == LAB_METRIC ? it->i_value : NAN;
}

/* ---- the summary --------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

void lab_summary_row(struct lab_summary *s, const char *what, const char *thread_figure,
		     const char *lab_figure, double ratio, const char *goal, bool met,
		     const char *why)
{
	struct lab_summary_rowv w = { .w_ratio = isfinite(ratio) ? ratio : NAN, .w_met = met };

	if (!s || s->s_n == LAB_MAX_ROWS)
		return;
	w.w_what = dup_or_empty(what);
	w.w_thread = dup_or_empty(thread_figure);
	w.w_lab = dup_or_empty(lab_figure);
	w.w_goal = dup_or_empty(goal);
	w.w_why = dup_or_empty(why);
	if (!w.w_what || !w.w_thread || !w.w_lab || !w.w_goal || !w.w_why) {
		free(w.w_what), free(w.w_thread), free(w.w_lab), free(w.w_goal), free(w.w_why);
		return;
	}
	s->s_rows[s->s_n++] = w;
}

size_t lab_summary_count(const struct lab_summary *s) { return s ? s->s_n : 0; }
const struct lab_ctx *lab_summary_ctx(const struct lab_summary *s) { return s->s_ctx; }

const struct lab_summary_rowv *lab_summary_at(const struct lab_summary *s, size_t i)
{
	return s && i < s->s_n ? &s->s_rows[i] : NULL;
}

static void summary_free(struct lab_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->s_n; i++) {
		struct lab_summary_rowv *w = &s->s_rows[i];

		free(w->w_what), free(w->w_thread), free(w->w_lab), free(w->w_goal), free(w->w_why);
	}
	free(s);
}

/* ---- a run ------------------------------------------------------------- */

/* The comma-separated tokens of list, one at a time: 1 and *tok, or 0 at
 * the end. An empty token ("a,,b", "a,") is returned as "". */
static int list_next(const char **p, char *tok, size_t len)
{
	const char *s = *p, *e;
	size_t n;

	if (!s)
		return 0;
	e = strchr(s, ',');
	n = e ? (size_t)(e - s) : strlen(s);
	snprintf(tok, len, "%.*s", (int)(n < len ? n : len - 1), s);
	if (n >= len)
		tok[0] = '\0'; /* too long: no such name */
	*p = e ? e + 1 : NULL;
	return 1;
}

static bool list_has(const char *list, const char *name)
{
	char tok[LAB_MAX_NAME + 1];
	const char *p = list;

	while (list_next(&p, tok, sizeof(tok)))
		if (!strcmp(tok, name))
			return true;
	return false;
}

static size_t variant_count(const struct lab_scenario *sc)
{
	size_t n = 0;

	while (sc->s_variants && sc->s_variants[n])
		n++;
	return n;
}

static bool scen_has_variant(const struct lab_scenario *sc, const char *v)
{
	for (size_t i = 0; sc->s_variants && sc->s_variants[i]; i++)
		if (!strcmp(sc->s_variants[i], v))
			return true;
	return false;
}

/* A scenario table: the registry, or a test's own. */
struct scen_tab {
	const struct lab_scenario *const *t_rows;
	size_t t_n;
};

static const struct lab_scenario *tab_find(const struct scen_tab *t, const char *name)
{
	for (size_t i = 0; i < t->t_n; i++)
		if (!strcmp(t->t_rows[i]->s_name, name))
			return t->t_rows[i];
	return NULL;
}

/* Every scenario name exists, every variant name is in a selected scenario. */
static int run_check(const struct scen_tab *t, const char *scenarios, const char *variants,
		     char *err, size_t errlen)
{
	char tok[LAB_MAX_NAME + 1];
	const char *p = scenarios;
	bool found;

	while (p && *scenarios && list_next(&p, tok, sizeof(tok)))
		if (!tab_find(t, tok)) {
			snprintf(err, errlen, "no scenario '%s' (ujbd lab --list)", tok);
			return -EINVAL;
		}
	p = variants;
	while (p && *variants && list_next(&p, tok, sizeof(tok))) {
		found = false;
		for (size_t i = 0; i < t->t_n && !found; i++) {
			const struct lab_scenario *sc = t->t_rows[i];

			found = (!*scenarios || list_has(scenarios, sc->s_name)) &&
				scen_has_variant(sc, tok);
		}
		if (!found) {
			snprintf(err, errlen, "no variant '%s' in the selected scenarios", tok);
			return -EINVAL;
		}
	}
	return 0;
}

static int scen_run_init(struct lab_scen_run *sr, const struct lab_scenario *sc,
			 const char *variants)
{
	sr->sr_scen = sc;
	sr->sr_nvariants = variant_count(sc);
	sr->sr_res = calloc(sr->sr_nvariants + 1, sizeof(*sr->sr_res));
	sr->sr_rc = calloc(sr->sr_nvariants + 1, sizeof(*sr->sr_rc));
	sr->sr_why = calloc(sr->sr_nvariants + 1, sizeof(*sr->sr_why));
	sr->sr_sum = calloc(1, sizeof(*sr->sr_sum));
	if (!sr->sr_res || !sr->sr_rc || !sr->sr_why || !sr->sr_sum)
		return -ENOMEM;
	for (size_t v = 0; v < sr->sr_nvariants; v++)
		sr->sr_rc[v] = (!*variants || list_has(variants, sc->s_variants[v])) ? 0 : 1;
	return 0;
}

static bool scen_selected(const struct lab_scenario *sc, const char *scenarios,
			  const char *variants)
{
	bool any = !*variants;

	if (*scenarios && !list_has(scenarios, sc->s_name))
		return false;
	for (size_t v = 0; !any && sc->s_variants && sc->s_variants[v]; v++)
		any = list_has(variants, sc->s_variants[v]);
	return any;
}

static int run_new(const struct scen_tab *t, const struct lab_ctx *c, const char *scenarios,
		   const char *variants, struct lab_run **out, char *err, size_t errlen)
{
	char dummy[8];
	struct lab_run *run;
	int rc = 0;

	if (!err)
		err = dummy, errlen = sizeof(dummy);
	scenarios = scenarios ? scenarios : "";
	variants = variants ? variants : "";
	rc = run_check(t, scenarios, variants, err, errlen);
	if (rc)
		return rc;
	run = calloc(1, sizeof(*run));
	if (!run || !(run->r_scen = calloc(t->t_n + 1, sizeof(*run->r_scen)))) {
		free(run);
		return -ENOMEM;
	}
	run->r_ctx = c;
	for (size_t i = 0; i < t->t_n && !rc; i++) {
		const struct lab_scenario *sc = t->t_rows[i];

		if (scen_selected(sc, scenarios, variants))
			rc = scen_run_init(&run->r_scen[run->r_n++], sc, variants);
	}
	if (rc) {
		lab_run_free(run);
		return rc;
	}
	*out = run;
	return 0;
}

int lab_run_new(const struct lab_ctx *c, const char *scenarios, const char *variants,
		struct lab_run **out, char *err, size_t errlen)
{
	size_t n = lab_scenario_count();
	const struct lab_scenario **rows = calloc(n + 1, sizeof(*rows));
	struct scen_tab t = { rows, n };
	int rc;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		rows[i] = lab_scenario_at(i);
	rc = run_new(&t, c, scenarios, variants, out, err, errlen);
	free(rows);
	return rc;
}

int lab_run_new_from(const struct lab_scenario *const *scen, size_t n, const struct lab_ctx *c,
		     const char *scenarios, const char *variants, struct lab_run **out, char *err,
		     size_t errlen)
{
	struct scen_tab t = { scen, n };

	return run_new(&t, c, scenarios, variants, out, err, errlen);
}

/* "about 40 s left", from the variants done so far (wall time: rt_now_ns outside any sim
   world is the host's monotonic clock), or "" before the first is done. */
static void eta_text(struct lab_run *run, size_t done, char *buf, size_t n)
{
	uint64_t t0 = __atomic_load_n(&run->r_t0_ns, __ATOMIC_RELAXED);
	double el = (double)(rt_now_ns() - t0) / 1e9;
	size_t total = run->r_total;

	buf[0] = '\0';
	if (done && done < total)
		snprintf(buf, n, ", about %.0f s left", el / (double)done * (double)(total - done));
	else if (done == total)
		snprintf(buf, n, ", %.0f s in all", el);
}

/* Run variant v of scenario sr into its slot (sr_res, sr_rc). */
static void run_variant(struct lab_run *run, struct lab_scen_run *sr, size_t v)
{
	const struct lab_scenario *sc = sr->sr_scen;
	struct lab_result *r = NULL;
	char msg[320], eta[64];
	size_t k = __atomic_add_fetch(&run->r_started, 1, __ATOMIC_RELAXED), done;
	int rc;

	eta_text(run, __atomic_load_n(&run->r_done, __ATOMIC_RELAXED), eta, sizeof(eta));
	lab_progress(run->r_ctx, "lab: [%zu/%zu] %s %s: running%s%s", k, run->r_total, sc->s_name,
		     sc->s_variants[v], lab_ctx_quick(run->r_ctx) ? " (quick)" : "", eta);
	lab_why[0] = '\0';
	rc = lab_result_new(&r);
	if (!rc)
		rc = sc->s_run(run->r_ctx, sc->s_variants[v], r);
	if (rc > 0)
		rc = -EPROTO; /* a scenario must return 0 or -errno */
	sr->sr_rc[v] = rc;
	if (rc) {
		lab_result_free(r);
		/* without memory for the reason the errno's text stands alone */
		sr->sr_why[v] = lab_why[0] ? strdup(lab_why) : NULL;
		__atomic_fetch_add(&run->r_failed, 1, __ATOMIC_RELAXED);
		done = __atomic_add_fetch(&run->r_done, 1, __ATOMIC_RELAXED);
		eta_text(run, done, eta, sizeof(eta));
		lab_progress(run->r_ctx, "lab: [%zu/%zu done] %s %s failed: %s%s", done, run->r_total,
			     sc->s_name, sc->s_variants[v], lab_variant_error(sr, v, msg, sizeof(msg)),
			     eta);
		return;
	}
	sr->sr_res[v] = r;
	done = __atomic_add_fetch(&run->r_done, 1, __ATOMIC_RELAXED);
	eta_text(run, done, eta, sizeof(eta));
	lab_progress(run->r_ctx, "lab: [%zu/%zu done] %s %s%s", done, run->r_total, sc->s_name,
		     sc->s_variants[v], eta);
}

/*
 * The variants to run, in order, shared by the workers: each takes the
 * next one. Every variant is a world of its own (its own seed, threads and
 * virtual clock), so running several at once changes nothing in what any
 * of them computes, only the wall time.
 */
struct run_pool {
	struct lab_run *run;
	size_t *scen, *var, n;
	size_t next;               /* atomic */
};

static void pool_worker(void *arg)
{
	struct run_pool *p = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n)
		run_variant(p->run, &p->run->r_scen[p->scen[i]], p->var[i]);
}

/* Run the selected variants on `jobs` threads (at most one per variant). */
static int run_pool(struct lab_run *run, unsigned jobs)
{
	struct run_pool p = { .run = run };
	rt_thread *t[LAB_MAX_JOBS];
	unsigned nt = 0;
	size_t total = 0;
	int rc = 0;

	for (size_t i = 0; i < run->r_n; i++)
		total += run->r_scen[i].sr_nvariants;
	p.scen = calloc(total ? total : 1, sizeof(*p.scen));
	p.var = calloc(total ? total : 1, sizeof(*p.var));
	if (!p.scen || !p.var) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < run->r_n; i++)
		for (size_t v = 0; v < run->r_scen[i].sr_nvariants; v++)
			if (run->r_scen[i].sr_rc[v] != 1) {
				p.scen[p.n] = i;
				p.var[p.n++] = v;
			}
	if (jobs > p.n)
		jobs = (unsigned)p.n;
	for (; nt < jobs && nt < LAB_MAX_JOBS; nt++)
		if (rt_thread_create(&t[nt], "lab-job", pool_worker, &p))
			break;
	if (!nt) /* no thread: this one does it all */
		pool_worker(&p);
	for (unsigned i = 0; i < nt; i++)
		rt_thread_join(t[i]);
out:
	free(p.scen);
	free(p.var);
	return rc;
}

size_t lab_run_all(struct lab_run *run)
{
	unsigned jobs = run->r_ctx->c_world == RT_WORLD_SIM ? run->r_ctx->c_jobs : 1;

	run->r_total = 0;
	for (size_t i = 0; i < run->r_n; i++)
		for (size_t v = 0; v < run->r_scen[i].sr_nvariants; v++)
			run->r_total += run->r_scen[i].sr_rc[v] != 1;
	run->r_t0_ns = rt_now_ns();

	if (jobs <= 1 || run_pool(run, jobs)) { /* one after the other */
		for (size_t i = 0; i < run->r_n; i++)
			for (size_t v = 0; v < run->r_scen[i].sr_nvariants; v++)
				if (run->r_scen[i].sr_rc[v] != 1)
					run_variant(run, &run->r_scen[i], v);
	}
	for (size_t i = 0; i < run->r_n; i++) {
		struct lab_scen_run *sr = &run->r_scen[i];

		sr->sr_sum->s_ctx = run->r_ctx;
		if (sr->sr_scen->s_summary)
			sr->sr_scen->s_summary((const struct lab_result *const *)sr->sr_res,
					       sr->sr_sum);
	}
	return run->r_failed;
}

void lab_run_free(struct lab_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->r_n; i++) {
		struct lab_scen_run *sr = &run->r_scen[i];

		for (size_t v = 0; sr->sr_res && v < sr->sr_nvariants; v++)
			lab_result_free(sr->sr_res[v]);
		free(sr->sr_res);
		for (size_t v = 0; sr->sr_why && v < sr->sr_nvariants; v++)
			free(sr->sr_why[v]);
		free(sr->sr_why);
		free(sr->sr_rc);
		summary_free(sr->sr_sum);
	}
	free(run->r_scen);
	free(run);
}

void lab_file_name(char *buf, size_t len, const char *s)
{
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++) {
		char ch = s[i];

		buf[i] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-' || ch == '.') ? ch : '_';
	}
	if (len)
		buf[i] = '\0';
}

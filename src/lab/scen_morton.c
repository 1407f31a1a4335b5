/*
 * Scenario `morton` (the 2007 atime thread, Andrew Morton's test plan, 15 Oct 2007):
 * "copy-a-kernel-tree-in-a-loop running in the background and then see
 * what impact that has upon a large-linear-read, upon a
 * read-a-different-kernel-tree and upon some database-style multithreaded
 * O_DIRECT reader/overwriter", for each commit priority. His worry: a
 * higher-priority kjournald (its ordered-data writeout too) costs the
 * others, and more seeks would cost throughput.
 *
 * The one idea: the three foreground loads run one after the other beside
 * one copy loop that runs throughout, in one stack, so a variant's figures
 * share one history; the seeks are counted live from the queue's dispatches.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/scen.h"

/* Sizes: the copy tree as `atime`'s; the "different kernel tree" a quarter of it;
 * a 128 MiB file for the linear read (larger than the disk's 16 MiB cache
 * and its read-ahead); a 64 MiB database file, 4 threads doing 4 KiB
 * O_DIRECT reads and overwrites half and half. */
#define MORTON_PER_DIR 50u
#define MORTON_CHUNK (1024u * 1024u)   /* the linear reader's read size */
#define MORTON_DB_THREADS 4u
#define MORTON_IO 4096u

struct morton_sizes {
	unsigned copy_files, tree_files;
	uint64_t big_bytes, db_bytes;
	uint64_t odirect_ns;
};

static void morton_sizes(const struct lab_ctx *c, struct morton_sizes *z)
{
	bool q = lab_ctx_quick(c);

	/* quick: a smoke run (seconds of wall time), not a measurement */
	z->copy_files = q ? 60 : 2000;
	z->tree_files = q ? 40 : 500;
	z->big_bytes = (q ? 4ull : 128ull) << 20;
	z->db_bytes = (q ? 2ull : 64ull) << 20;
	z->odirect_ns = q ? RT_NS_PER_S / 2 : 3 * RT_NS_PER_S;
}

struct morton_run {
	struct morton_sizes z;
	struct lab_result *out;
	uint64_t seed;
	struct lab_qwatch *sc;
};

/* Write a file of bytes in 1 MiB buffered writes. */
static int make_file(struct fs *fs, const char *path, uint64_t bytes)
{
	fs_ino_t ino;
	int rc = fs_create(fs, path, &ino);

	for (uint64_t off = 0; !rc && off < bytes; off += MORTON_CHUNK)
		rc = fs_write(fs, ino, off, MORTON_CHUNK, 0);
	return rc;
}

/* The timeline's kinds of operation. */
enum { MORTON_TL_LINEAR, MORTON_TL_TREE, MORTON_TL_ODIRECT };

static int linear_read(struct fs *fs, uint64_t bytes, struct lab_timeline *tl, double *mb_s)
{
	uint64_t t0 = rt_now_ns(), got = 0;
	fs_ino_t ino;
	int rc = fs_lookup(fs, "/big", &ino);

	while (!rc && got < bytes) {
		uint64_t t1 = rt_now_ns();
		int64_t n = fs_read(fs, ino, got, MORTON_CHUNK, 0);

		if (n <= 0) {
			rc = n < 0 ? (int)n : -EIO;
		} else {
			got += (uint64_t)n;
			lab_tl_op(tl, MORTON_TL_LINEAR, t1);
		}
	}
	*mb_s = (double)got / 1e6 / ((double)(rt_now_ns() - t0) / 1e9);
	return rc;
}

struct db_worker {
	struct fs *fs;
	fs_ino_t ino;
	uint64_t blocks, until_ns, seed;
	struct lab_timeline *tl;
	uint64_t ops;
	int rc;
};

static void db_thread(void *arg)
{
	struct db_worker *w = arg;
	struct rt_prng p;

	rt_prng_init(&p, w->seed);
	while (!w->rc && rt_now_ns() < w->until_ns) {
		uint64_t off = rt_prng_below(&p, w->blocks) * MORTON_IO, t0 = rt_now_ns();

		if (rt_prng_below(&p, 2)) {
			int64_t n = fs_read(w->fs, w->ino, off, MORTON_IO, FS_IO_DIRECT);

			w->rc = n < 0 ? (int)n : 0;
		} else {
			w->rc = fs_write(w->fs, w->ino, off, MORTON_IO, FS_IO_DIRECT);
		}
		w->ops += !w->rc;
		if (!w->rc)
			lab_tl_op(w->tl, MORTON_TL_ODIRECT, t0);
	}
}

static int odirect(struct fs *fs, const struct morton_run *m, struct lab_timeline *tl,
		   double *ops_s)
{
	struct db_worker w[MORTON_DB_THREADS];
	rt_thread *t[MORTON_DB_THREADS] = { 0 };
	uint64_t t0 = rt_now_ns(), ops = 0;
	fs_ino_t ino;
	int rc = fs_lookup(fs, "/db", &ino);

	for (unsigned i = 0; i < MORTON_DB_THREADS && !rc; i++) {
		w[i] = (struct db_worker){ .fs = fs, .ino = ino, .blocks = m->z.db_bytes / MORTON_IO,
					   .until_ns = t0 + m->z.odirect_ns, .seed = m->seed * 31 + i,
					   .tl = tl };
		rc = rt_thread_create(&t[i], "dbio", db_thread, &w[i]);
	}
	for (unsigned i = 0; i < MORTON_DB_THREADS; i++) {
		if (!t[i])
			continue;
		rt_thread_join(t[i]);
		rc = rc ? rc : w[i].rc;
		ops += w[i].ops;
	}
	*ops_s = (double)ops / ((double)(rt_now_ns() - t0) / 1e9);
	return rc;
}

/* The three loads in turn, beside the copy loop (k, already running). */
static int morton_loads(struct lab_rig *r, struct morton_run *m, const struct lab_tree *other)
{
	double lin = 0, tree = 0, ops = 0;
	int rc = linear_read(r->r_fs, m->z.big_bytes, r->r_tl, &lin);

	if (!rc) {
		uint64_t t0 = rt_now_ns();

		rc = lab_tree_read(r->r_fs, other, r->r_tl, MORTON_TL_TREE);
		tree = (double)(rt_now_ns() - t0) / 1e9;
	}
	rc = rc ? rc : odirect(r->r_fs, m, r->r_tl, &ops);
	rc = rc ? rc : lab_result_metric(m->out, "linear_read_mb_s", lin);
	rc = rc ? rc : lab_result_metric(m->out, "tree_read_s", tree);
	rc = rc ? rc : lab_result_metric(m->out, "odirect_ops_s", ops);
	return rc;
}

static int morton_setup(struct lab_rig *r, struct morton_run *m, struct lab_tree *src,
			struct lab_tree *other)
{
	int rc = lab_tree_init(src, "/src", m->z.copy_files, MORTON_PER_DIR, 4, 64, m->seed);

	rc = rc ? rc : lab_tree_init(other, "/other", m->z.tree_files, MORTON_PER_DIR, 4, 64,
				     m->seed + 2);
	rc = rc ? rc : lab_tree_make(r->r_fs, src);
	rc = rc ? rc : lab_tree_make(r->r_fs, other);
	rc = rc ? rc : make_file(r->r_fs, "/big", m->z.big_bytes);
	rc = rc ? rc : make_file(r->r_fs, "/db", m->z.db_bytes);
	rc = rc ? rc : lab_rig_remount(r);  /* the big file and the other tree cold */
	rc = rc ? rc : lab_tree_read(r->r_fs, src, NULL, 0); /* the copy's source warm, as in a loop */
	return rc;
}

static int morton_fn(struct lab_rig *r, void *arg)
{
	struct morton_run *m = arg;
	struct lab_tree src = { 0 }, other = { 0 };
	atomic_bool stop = false;
	struct lab_copier k = { 0 };
	rt_thread *tk = NULL;
	uint64_t t0;
	int rc = morton_setup(r, m, &src, &other);

	if (!rc) {
		k = (struct lab_copier){ .fs = r->r_fs, .src = &src, .until_ns = UINT64_MAX,
					 .stop = &stop };
		rc = rt_thread_create(&tk, "cp", lab_copier_thread, &k);
	}
	t0 = rt_now_ns();
	atomic_store(&m->sc->on, true);
	lab_tl_kind(r->r_tl, MORTON_TL_LINEAR, "linear-read-1MB");
	lab_tl_kind(r->r_tl, MORTON_TL_TREE, "tree-read-file");
	lab_tl_kind(r->r_tl, MORTON_TL_ODIRECT, "O_DIRECT-4KiB");
	lab_tl_start(r->r_tl);
	if (!rc) {
		rt_sleep_ns(RT_NS_PER_S); /* the copy is under way */
		rc = morton_loads(r, m, &other);
	}
	atomic_store(&stop, true);
	if (tk)
		rt_thread_join(tk);
	atomic_store(&m->sc->on, false);
	lab_tl_stop(r->r_tl);
	double s = (double)(rt_now_ns() - t0) / 1e9;
	rc = rc ? rc : k.rc;
	rc = rc ? rc : lab_result_metric(m->out, "copy_mb_s", (double)k.bytes / 1e6 / s);
	rc = rc ? rc : lab_result_metric(m->out, "seeks_s", (double)m->sc->seeks / s);
	lab_tree_release(&src);
	lab_tree_release(&other);
	return rc;
}

static const char *const morton_variants[] = { "be:4", "rt:4", "inherit", NULL };

static const char *const morton_plot[] = {
	"linear_read_mb_s linear read of a cold file (MB/s)",
	"tree_read_s reading a cold tree (s, lower is better)",
	"odirect_ops_s O_DIRECT reads and overwrites (ops/s)",
	"copy_mb_s the copy loop beside them (MB/s)",
	NULL,
};

static int morton_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	struct lab_qwatch sc = { 0 };
	struct morton_run m = { .out = out, .seed = lab_ctx_seed(c), .sc = &sc };
	struct lab_rig_spec rs;
	int rc;

	rc = lab_rig_spec_2007(&rs, variant);
	if (rc)
		return rc;
	morton_sizes(c, &m.z);
	rs.trace_fn = lab_qwatch_fn;
	rs.trace_arg = &sc;
	rs.timeline = out;
	lab_progress(c, "morton %s: copy loop beside a linear read, a tree read, O_DIRECT", variant);
	return lab_rig_run(c, &rs, morton_fn, &m);
}

/* rt:4 or inherit against be:4, for one metric (higher is better unless
 * lower). */
static void morton_row(const struct lab_result *const *r, size_t v, const char *metric,
		       bool lower_better, struct lab_summary *out)
{
	char what[96], lab[128], why[160];
	double b = lab_result_get(r[0], metric), x = lab_result_get(r[v], metric);
	double ratio = lower_better ? lab_ratio(b, x) : lab_ratio(x, b);
	const char *name = v == 1 ? "rt:4" : "inherit";

	/* a time's ratio is taken the other way round, so that below 1 is a
	 * cost for every row, and the row says so */
	if (lower_better)
		snprintf(what, sizeof(what), "%s: be:4 / %s", metric, name);
	else
		snprintf(what, sizeof(what), "%s: %s / be:4", metric, name);
	snprintf(lab, sizeof(lab), "%.3g (%s) vs %.3g (be:4)", x, name, b);
	snprintf(why, sizeof(why), "seeks/s %.0f (%s) vs %.0f (be:4)",
		 lab_result_get(r[v], "seeks_s"), name, lab_result_get(r[0], "seeks_s"));
	lab_summary_row(out, what, "(Morton's question: what does it cost?)", lab, ratio,
			">= 0.9 (costs < 10 %)", isfinite(ratio) && ratio >= 0.9, why);
}

static void morton_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	static const char *const metric[] = { "linear_read_mb_s", "tree_read_s", "odirect_ops_s",
					      "copy_mb_s" };

	if (!r[0])
		return;
	for (size_t v = 1; v <= 2; v++) {
		if (!r[v])
			continue;
		for (size_t i = 0; i < 4; i++)
			morton_row(r, v, metric[i], i == 1, out);
	}
}

const struct lab_scenario lab_scen_morton = {
	.s_name = "morton",
	.s_thread = &lab_thread_000_morton,
	.s_help = "Andrew Morton's plan: linear read, tree read, O_DIRECT beside a copy loop",
	.s_variants = morton_variants,
	.s_real = "the same loads in real time beside the copy loop; seeks_s counts ujbd's "
		  "dispatches (non-contiguous in the file), not the disk's",
	.s_run = morton_run,
	.s_summary = morton_summary,
	.s_plot = morton_plot,
	.s_plot_title = "morton: what a higher-priority commit costs the others, a bar per commit "
			"priority (bars of one height: no cost)",
};

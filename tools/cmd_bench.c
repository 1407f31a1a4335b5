/*
 * ujbd bench: the journal runtime's three benchmarks, in the real world, on
 * files in a directory, and the plain-file baselines they are compared with.
 *
 *   fsync-loop    one thread: write a data block and an "inode" block in a
 *                 handle, then fsync (commit the tid and wait); 2000 times.
 *                 Baseline: pwrite + fdatasync of one block, 2000 times.
 *   group-commit  16 threads, each: start, dirty its own metadata block,
 *                 stop, fsync; the commit thread batches them. Baseline: 16
 *                 threads each pwrite + fdatasync on its own file.
 *   handles       the CPU path (the AIM7 analogue): start, dirty, stop, no
 *                 fsync, on 1 or 2 threads; commits happen on the timer or
 *                 when a transaction fills. No baseline.
 *
 * The one idea: a benchmark measures, it does not judge. Every run prints
 * ops/s and the latency of one iteration (p50/p99/max from a log-linear
 * histogram), plus the commit thread's wakeups; bench/run sets runs side by
 * side and computes the ratios.
 *
 * Files: a fresh directory ujbd-bench.XXXXXX under --dir (default $TMPDIR or
 * /tmp), removed at the end. Layouts (--layout):
 *   one-file   (default) one file "image": the journal as a region at its
 *              start (blocks [0, journal)), the data blocks after it, as an
 *              ext4 image's internal journal is: one device, one queue, so
 *              the commit block's PREFLUSH also covers the ordered data
 *              written before it. (At the start: ujbd formats only a
 *              journal whose superblock is device block 0.)
 *   two-files  a standalone journal file "journal" and a data file "data"
 *              (an external journal): two devices, each flushed on its own.
 * Every file is written out in full and synced before the timed loop (the
 * journal region too), so neither side pays for block allocation in the
 * host file system during it; the journal is then formatted by ujbd_open.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "jbd/jstats.h"
#include "ujbd/dev.h"
#include "ujbd/rt.h"
#include "ujbd/ujbd.h"

#define BENCH_MAX_THREADS 256
#define BENCH_BS 4096u
#define BENCH_SPAN 256u           /* data blocks cycled through per thread */
#define BENCH_HANDLE_BLOCKS 64u   /* metadata blocks per thread (handles) */
#define BENCH_HANDLE_SAMPLE 16u   /* handles: time 1 in 16 */
#define BENCH_MAX_ITER 100000000ull

enum bench_kind { BK_FSYNC_LOOP, BK_GROUP_COMMIT, BK_HANDLES };
static const char *const kind_names[] = { "fsync-loop", "group-commit",
					  "handles" };
static const char *const mode_names[] = { "ordered", "journal", "writeback" };
enum bench_layout { BL_ONE_FILE, BL_TWO_FILES };
static const char *const layout_names[] = { "one-file", "two-files" };

struct bench_cfg {
	enum bench_kind kind;
	const char *dir;
	uint64_t iterations;      /* per thread; 0 = the workload's default */
	unsigned threads;         /* 0 = the workload's default */
	bool json, stats, baseline, async_commit, sync_handles, caller_commit;
	bool use_fsync;           /* baseline: fsync(2), not fdatasync(2) */
	enum ujbd_data_mode data_mode;
	enum ujbd_wake_policy wake;
	enum ujbd_under_commit under_commit;
	enum bench_layout layout;
	uint64_t journal_mb;
	unsigned clean_fsyncs;    /* extra fsyncs of an already committed tid */
};

struct bench;

/* One worker thread and what it measured. */
struct bench_thr {
	struct bench *t_b;
	unsigned t_idx;
	int t_fd;                 /* baseline: its file */
	uint64_t t_ops;
	struct jbd_hist t_lat;    /* ns per iteration */
	int t_err;
	const char *t_err_what;
	uint8_t t_buf[BENCH_BS] __attribute__((aligned(64)));
};

struct bench {
	struct bench_cfg b_cfg;
	char b_dir[4096];          /* the run's own directory */
	struct dev *b_jdev, *b_ddev; /* the same device in the one-file layout */
	uint64_t b_base;           /* first data block (one-file: after the journal) */
	struct jbd_extent b_ident;
	struct jbd_loc b_loc;      /* outlives the journal: ujbd may keep it */
	struct ujbd *b_j;
	struct bench_thr *b_thr;   /* [threads] */
	rt_mutex b_lock;
	rt_cond b_go_cond;
	bool b_go;                 /* [b_lock] */
	unsigned b_ready;          /* [b_lock] */
	uint64_t b_elapsed_ns;
	struct ujbd_stats b_stats;
	int b_err;
	char b_err_msg[8600];
};

static void bench_fail(struct bench *b, int err, const char *fmt, const char *what)
{
	if (b->b_err)
		return;
	b->b_err = err;
	snprintf(b->b_err_msg, sizeof(b->b_err_msg), fmt, what, ujbd_strerror(err));
}

/* ---- files --------------------------------------------------------------- */

static uint64_t data_blocks(const struct bench *b)
{
	unsigned n = b->b_cfg.threads;

	if (b->b_cfg.kind == BK_HANDLES)
		return 1 + (uint64_t)n * BENCH_HANDLE_BLOCKS;
	return 1 + (uint64_t)n * (BENCH_SPAN + 1);
}

/* Create path with size bytes written out (zeros) and synced. */
static int file_fill(const char *path, uint64_t size, int *fdout)
{
	static const uint8_t zero[65536];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), err = 0;

	if (fd < 0)
		return -errno;
	for (uint64_t off = 0; off < size && !err; off += sizeof(zero)) {
		size_t n = size - off < sizeof(zero) ? size - off : sizeof(zero);
		if (pwrite(fd, zero, n, (off_t)off) != (ssize_t)n)
			err = -errno ? -errno : -EIO;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (err || !fdout)
		close(fd);
	else
		*fdout = fd;
	return err;
}

static void path_in(const struct bench *b, char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", b->b_dir, name);
}

static int bench_mkdir(struct bench *b)
{
	const char *base = b->b_cfg.dir;

	if (!base)
		base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(b->b_dir, sizeof(b->b_dir), "%s/ujbd-bench.XXXXXX", base);
	if (!mkdtemp(b->b_dir)) {
		int err = -errno;
		bench_fail(b, err, "cannot create a directory in '%s': %s", base);
		return err;
	}
	return 0;
}

/* Remove what the run created: its files, then its directory. */
static void bench_rmdir(struct bench *b)
{
	char p[4200];

	static const char *const names[] = { "journal", "data", "image" };

	for (unsigned i = 0; i < 3; i++) {
		path_in(b, p, sizeof(p), names[i]);
		unlink(p);
	}
	for (unsigned i = 0; i < b->b_cfg.threads; i++) {
		char name[32];
		snprintf(name, sizeof(name), "base.%u", i);
		path_in(b, p, sizeof(p), name);
		unlink(p);
	}
	rmdir(b->b_dir);
}

/* ---- the journal ---------------------------------------------------------- */

/* Create (written out, synced) and open the file `name` of nblocks blocks. */
static int bench_file(struct bench *b, const char *name, uint64_t nblocks,
		      struct dev **out)
{
	struct dev_file_opts fo = { .create = true };
	char p[4200];
	int err;

	path_in(b, p, sizeof(p), name);
	err = file_fill(p, nblocks * BENCH_BS, NULL);
	if (!err)
		err = dev_file_open(p, &fo, out);
	if (err)
		bench_fail(b, err, "cannot create '%s': %s", p);
	return err;
}

/* The devices and the journal's location in the chosen layout. */
static int bench_layout(struct bench *b, uint64_t jblocks)
{
	struct jbd_loc *loc = &b->b_loc;
	uint64_t nd = data_blocks(b);
	int err;

	memset(loc, 0, sizeof(*loc));
	if (b->b_cfg.layout == BL_ONE_FILE) {
		/* the journal in [0, jblocks), the data blocks after it */
		err = bench_file(b, "image", jblocks + nd, &b->b_jdev);
		b->b_ddev = b->b_jdev;
		b->b_base = jblocks;
	} else {
		err = bench_file(b, "data", nd, &b->b_ddev);
		if (!err)
			err = bench_file(b, "journal", jblocks, &b->b_jdev);
	}
	b->b_ident = (struct jbd_extent){ 0, 0, jblocks };
	if (err)
		return err;
	loc->j_dev = b->b_jdev;
	loc->j_blocksize = BENCH_BS;
	loc->j_map = &b->b_ident;
	loc->j_nmap = 1;
	loc->j_len = jblocks;
	loc->j_data = b->b_ddev;
	loc->j_data_blocks = b->b_base + nd;
	return 0;
}

static int bench_open_journal(struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	uint64_t jblocks = c->journal_mb * (1u << 20) / BENCH_BS;
	struct ujbd_opts o;
	struct jbd_err jerr = { 0 };
	int err;

	err = bench_layout(b, jblocks);
	if (err)
		return err;
	ujbd_opts_default(&o);
	o.data_mode = c->data_mode;
	o.wake = c->wake;
	o.under_commit = c->under_commit;
	o.async_commit = c->async_commit;
	o.caller_commit = c->caller_commit;
	o.format = true;
	o.format_opts.blocksize = BENCH_BS;
	o.format_opts.blocks = jblocks;
	o.format_opts.csum = JBD_CSUM_KIND_V3;
	o.format_opts.async_commit = c->async_commit;
	err = ujbd_open(&b->b_loc, &o, &b->b_j, &jerr);
	if (err)
		bench_fail(b, err, "cannot open the journal in '%s': %s",
			   jerr.msg[0] ? jerr.msg : b->b_dir);
	return err;
}

static void bench_close_journal(struct bench *b)
{
	int err;

	if (b->b_j) {
		err = ujbd_close(b->b_j);
		if (err)
			bench_fail(b, err, "closing the journal in '%s': %s", b->b_dir);
		b->b_j = NULL;
	}
	if (b->b_ddev && b->b_ddev != b->b_jdev)
		dev_close(b->b_ddev);
	if (b->b_jdev)
		dev_close(b->b_jdev);
	b->b_jdev = b->b_ddev = NULL;
}

/* ---- one iteration of each workload --------------------------------------- */

static void stamp(uint8_t *p, unsigned thr, uint64_t i)
{
	memcpy(p, &i, sizeof(i));
	memcpy(p + sizeof(i), &thr, sizeof(thr));
}

/* Dirty metadata block `block` in handle h with a stamp. */
static int dirty_block(struct ujbd_handle *h, uint64_t block, unsigned thr,
		       uint64_t i)
{
	struct ujbd_buf *buf;
	int err = ujbd_get_write_access(h, block, &buf);

	if (err)
		return err;
	stamp(ujbd_buf_data(buf), thr, i);
	err = ujbd_dirty_metadata(h, buf);
	ujbd_buf_put(buf);
	return err;
}

/* The fsync of an iteration: commit the handle's tid and wait (what ext4's
 * fsync does), or a sync handle whose stop waits (with batching). */
static int stop_and_fsync(struct bench *b, struct ujbd_handle *h)
{
	ujbd_tid_t tid = ujbd_handle_tid(h);
	int err;

	if (b->b_cfg.sync_handles) {
		ujbd_handle_set_sync(h, true);
		return ujbd_stop(h);
	}
	err = ujbd_stop(h);
	if (!err)
		err = ujbd_commit_tid(b->b_j, tid);
	if (!err)
		err = ujbd_wait_tid(b->b_j, tid);
	/* fsyncs of a file with nothing new: its tid is already committed
	 * (AIM7's sync jobs; seed 002: with wake=always each one wakes the
	 * commit thread for nothing) */
	for (unsigned k = 0; k < b->b_cfg.clean_fsyncs && !err; k++) {
		err = ujbd_commit_tid(b->b_j, tid);
		if (!err)
			err = ujbd_wait_tid(b->b_j, tid);
	}
	return err;
}

/* fsync-loop: a data block (ordered/writeback: home; journal: journaled)
 * and the thread's "inode" block, then fsync. group-commit: the inode
 * block only. */
static int iter_fsync(struct bench *b, struct bench_thr *t, uint64_t i)
{
	uint64_t inode = b->b_base + 1 + (uint64_t)t->t_idx * (BENCH_SPAN + 1);
	bool data = b->b_cfg.kind == BK_FSYNC_LOOP;
	struct ujbd_handle *h;
	int err = ujbd_start(b->b_j, data ? 2 : 1, &h);

	if (err)
		return err;
	if (data) {
		stamp(t->t_buf, t->t_idx, i);
		err = ujbd_write_data(h, inode + 1 + i % BENCH_SPAN, t->t_buf);
	}
	if (!err)
		err = dirty_block(h, inode, t->t_idx, i);
	if (err) {
		ujbd_stop(h);
		return err;
	}
	return stop_and_fsync(b, h);
}

static int iter_handle(struct bench *b, struct bench_thr *t, uint64_t i)
{
	uint64_t block = b->b_base + 1 + (uint64_t)t->t_idx * BENCH_HANDLE_BLOCKS +
			 i % BENCH_HANDLE_BLOCKS;
	struct ujbd_handle *h;
	int err = ujbd_start(b->b_j, 1, &h), err2;

	if (err)
		return err;
	err = dirty_block(h, block, t->t_idx, i);
	err2 = ujbd_stop(h);
	return err ? err : err2;
}

static int iter_baseline(struct bench *b, struct bench_thr *t, uint64_t i)
{
	off_t off = (off_t)(i % BENCH_SPAN) * BENCH_BS;

	stamp(t->t_buf, t->t_idx, i);
	if (pwrite(t->t_fd, t->t_buf, BENCH_BS, off) != BENCH_BS)
		return errno ? -errno : -EIO;
	if ((b->b_cfg.use_fsync ? fsync(t->t_fd) : fdatasync(t->t_fd)) < 0)
		return -errno;
	return 0;
}

/* ---- the threads ---------------------------------------------------------- */

static int bench_iter(struct bench *b, struct bench_thr *t, uint64_t i)
{
	if (b->b_cfg.baseline)
		return iter_baseline(b, t, i);
	if (b->b_cfg.kind == BK_HANDLES)
		return iter_handle(b, t, i);
	return iter_fsync(b, t, i);
}

static void bench_thread(void *arg)
{
	struct bench_thr *t = arg;
	struct bench *b = t->t_b;
	bool sampled = b->b_cfg.kind == BK_HANDLES;
	uint64_t n = b->b_cfg.iterations, t0 = 0;
	int err = 0;

	rt_mutex_lock(&b->b_lock);
	b->b_ready++;
	rt_cond_broadcast(&b->b_go_cond);
	while (!b->b_go)
		rt_cond_wait(&b->b_go_cond, &b->b_lock);
	rt_mutex_unlock(&b->b_lock);
	for (uint64_t i = 0; i < n && !err; i++) {
		bool timed = !sampled || i % BENCH_HANDLE_SAMPLE == 0;
		if (timed)
			t0 = rt_now_ns();
		err = bench_iter(b, t, i);
		if (timed)
			jbd_hist_add(&t->t_lat, rt_now_ns() - t0);
		t->t_ops += !err;
	}
	t->t_err = err;
}

/* Start every thread, release them together, time until the last ends. */
static int bench_drive(struct bench *b)
{
	rt_thread *th[BENCH_MAX_THREADS];
	unsigned n = b->b_cfg.threads, made = 0;
	uint64_t t0;
	int err = 0;

	for (; made < n && !err; made++)
		err = rt_thread_create(&th[made], "bench", bench_thread,
				       &b->b_thr[made]);
	if (err)
		made--;
	rt_mutex_lock(&b->b_lock);
	while (b->b_ready < made)
		rt_cond_wait(&b->b_go_cond, &b->b_lock);
	t0 = rt_now_ns();
	b->b_go = true;
	rt_cond_broadcast(&b->b_go_cond);
	rt_mutex_unlock(&b->b_lock);
	for (unsigned i = 0; i < made; i++)
		rt_thread_join(th[i]);
	b->b_elapsed_ns = rt_now_ns() - t0;
	if (err)
		return bench_fail(b, err, "cannot start thread %s: %s", "bench"), err;
	for (unsigned i = 0; i < n; i++)
		if (b->b_thr[i].t_err) {
			err = b->b_thr[i].t_err;
			bench_fail(b, err, "%s: %s", kind_names[b->b_cfg.kind]);
			break;
		}
	return err;
}

static int bench_open_baseline(struct bench *b)
{
	char p[4200], name[32];

	for (unsigned i = 0; i < b->b_cfg.threads; i++) {
		int err;

		snprintf(name, sizeof(name), "base.%u", i);
		path_in(b, p, sizeof(p), name);
		err = file_fill(p, (uint64_t)BENCH_SPAN * BENCH_BS, &b->b_thr[i].t_fd);
		if (err)
			return bench_fail(b, err, "cannot create '%s': %s", p), err;
	}
	return 0;
}

static void bench_main(void *arg)
{
	struct bench *b = arg;
	int err;

	err = b->b_cfg.baseline ? bench_open_baseline(b) : bench_open_journal(b);
	if (!err)
		err = bench_drive(b);
	if (!err && b->b_j) {
		err = ujbd_stats(b->b_j, &b->b_stats);
		if (err)
			bench_fail(b, err, "reading the statistics of '%s': %s", b->b_dir);
	}
	for (unsigned i = 0; i < b->b_cfg.threads; i++)
		if (b->b_thr[i].t_fd >= 0)
			close(b->b_thr[i].t_fd);
	bench_close_journal(b);
}

/* ---- report --------------------------------------------------------------- */

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static const char *const lat_causes[UJBD_LAT_NR] = {
	[UJBD_LAT_WAIT_TRANSACTION] = "Waiting for a journal transaction",
	[UJBD_LAT_WAIT_COMMIT] = "Waiting for a journal commit (fsync)",
	[UJBD_LAT_WAIT_LOG_SPACE] = "Waiting for journal space",
	[UJBD_LAT_WAIT_FROZEN] = "Waiting on a buffer under commit",
	[UJBD_LAT_WAIT_SHADOW] = "Waiting for a buffer's log write (wait-io)",
};

/* The info file, then latency per cause in latencytop's text output form:
 * "[max X msec] cause - average msec (share of all latency %)". */
static void report_stats(const struct ujbd_stats *s)
{
	char text[2048];
	uint64_t total = 0;

	ujbd_stats_format(s, text, sizeof(text));
	printf("\n%s\n", text);
	for (unsigned c = 0; c < UJBD_LAT_NR; c++)
		total += s->lat[c].sum_ns;
	printf("Latency per cause (latencytop style):\n");
	for (unsigned c = 0; c < UJBD_LAT_NR; c++) {
		const struct ujbd_lat *l = &s->lat[c];
		if (!l->count)
			continue;
		printf("[max %.1f msec] %s - %.3f msec (%.1f%%)\n",
		       (double)l->max_ns / 1e6, lat_causes[c],
		       (double)l->sum_ns / (double)l->count / 1e6,
		       total ? 100.0 * (double)l->sum_ns / (double)total : 0.0);
	}
	printf("fsync latency (us): p50 %.1f  p99 %.1f  max %.1f  (%" PRIu64
	       " waits)\n", us(s->fsync_latency.p50_ns),
	       us(s->fsync_latency.p99_ns), us(s->fsync_latency.max_ns),
	       s->fsync_latency.count);
	printf("commit time (us): p50 %.1f  p99 %.1f  max %.1f\n",
	       us(s->commit_time.p50_ns), us(s->commit_time.p99_ns),
	       us(s->commit_time.max_ns));
	printf("checkpoint: %" PRIu64 " written, %" PRIu64 " dropped; log space"
	       " waits %" PRIu64 " (longest %.1f ms)\n", s->checkpoint_written,
	       s->checkpoint_dropped, s->log_space_waits,
	       (double)s->log_space_stall_ns_max / 1e6);
	if (s->inherit_boosts || s->boosted_rqs)
		printf("inherit: %" PRIu64 " raises; %" PRIu64 " queued requests raised,"
		       " waited %.1f ms before (max %.1f), %.1f ms after (max %.1f)\n",
		       s->inherit_boosts, s->boosted_rqs,
		       (double)s->boost_wait_before_ns_sum / 1e6,
		       (double)s->boost_wait_before_ns_max / 1e6,
		       (double)s->boost_wait_after_ns_sum / 1e6,
		       (double)s->boost_wait_after_ns_max / 1e6);
}

static void report(struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	struct jbd_hist *all = calloc(1, sizeof(*all));
	struct ujbd_hist h = { 0 };
	uint64_t ops = 0;
	double secs = (double)b->b_elapsed_ns / 1e9, rate;

	for (unsigned i = 0; i < c->threads; i++) {
		ops += b->b_thr[i].t_ops;
		if (all)
			jbd_hist_merge(all, &b->b_thr[i].t_lat);
	}
	if (all)
		jbd_hist_summary(all, &h);
	free(all);
	rate = secs > 0 ? (double)ops / secs : 0;
	if (c->json) {
		printf("{\"workload\":\"%s\",\"system\":\"%s\",\"data_mode\":\"%s\","
		       "\"layout\":\"%s\",\"threads\":%u,\"iterations\":%" PRIu64 ",\"ops\":%" PRIu64
		       ",\"seconds\":%.6f,\"ops_per_s\":%.1f,\"latency_us\":{\"avg\":%.1f,"
		       "\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},\"wakeups\":%" PRIu64
		       ",\"useless_wakeups\":%" PRIu64, kind_names[c->kind],
		       c->baseline ? (c->use_fsync ? "baseline-fsync" : "baseline") : "ujbd", mode_names[c->data_mode],
		       c->baseline ? "-" : layout_names[c->layout], c->threads, c->iterations, ops, secs, rate,
		       h.count ? us(h.sum_ns) / (double)h.count : 0.0, us(h.p50_ns),
		       us(h.p99_ns), us(h.max_ns), b->b_stats.wakeups,
		       b->b_stats.useless_wakeups);
		if (c->stats && !c->baseline) {
			char s[4096];
			ujbd_stats_json(&b->b_stats, s, sizeof(s));
			printf(",\"stats\":%s", s);
		}
		printf("}\n");
		return;
	}
	printf("%s (%s%s%s%s): %" PRIu64 " ops by %u thread%s in %.3f s: %.1f ops/s\n",
	       kind_names[c->kind], c->baseline ? "baseline" : "ujbd, data=",
	       c->baseline ? "" : mode_names[c->data_mode],
	       c->baseline ? ", pwrite+fdatasync" : ", ",
	       c->baseline ? "" : layout_names[c->layout], ops, c->threads,
	       c->threads == 1 ? "" : "s", secs, rate);
	printf("latency per %s (us): avg %.1f  p50 %.1f  p99 %.1f  max %.1f%s\n",
	       c->kind == BK_HANDLES ? "handle" : "iteration",
	       h.count ? us(h.sum_ns) / (double)h.count : 0.0, us(h.p50_ns),
	       us(h.p99_ns), us(h.max_ns),
	       c->kind == BK_HANDLES ? "  (1 in 16 timed)" : "");
	if (!c->baseline)
		printf("commit thread wakeups %" PRIu64 ", useless %" PRIu64 "\n",
		       b->b_stats.wakeups, b->b_stats.useless_wakeups);
	if (c->stats && !c->baseline)
		report_stats(&b->b_stats);
}

/* ---- arguments ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: ujbd bench fsync-loop|group-commit|handles [options]\n"
"\n"
"Run a journal benchmark on files in a fresh directory (removed afterwards),\n"
"in the real world, and print ops/s and per-iteration latency.\n"
"\n"
"  fsync-loop     write a data block and a metadata block, fsync; 2000 times\n"
"  group-commit   16 threads: start, dirty, stop, fsync; 250 times each\n"
"  handles        start, dirty, stop, no fsync; 1000000 times (1 thread)\n"
"\n"
"options:\n"
"  --dir=DIR          where to create the run's directory ($TMPDIR or /tmp)\n"
"  --iterations=N     iterations per thread (defaults above)\n"
"  --threads=N        worker threads (fsync-loop 1, group-commit 16, handles 1)\n"
"  --data-mode=MODE   ordered (default), journal or writeback\n"
"  --layout=LAYOUT    one-file (default: the journal as a region at the start\n"
"                     of the data's file, as an ext4 image's internal\n"
"                     journal) or two-files (a journal file and a data file)\n"
"  --baseline         the plain-file baseline instead: pwrite+fdatasync of a\n"
"                     block (fsync-loop), per thread on its own file\n"
"                     (group-commit); handles has none\n"
"  --fsync            the baseline calls fsync(2) instead of fdatasync(2) (on\n"
"                     ext4 that commits the mtime change through jbd2)\n"
"  --wake=POLICY      commit-thread wakeups: needed (default) or always\n"
"  --under-commit=P   a buffer the commit is logging: copy (default: the\n"
"                     running transaction changes it at once) or wait-io\n"
"                     (jbd2's: wait for its log write to complete)\n"
"  --async-commit     commit block with the log blocks (checksummed, v3)\n"
"  --caller-commit    an fsync commits on its own thread when no commit runs\n"
"                     (ujbd_opts.caller_commit) instead of through kjournald\n"
"  --sync-handles     fsync through sync handles (with batching) instead of\n"
"                     commit tid + wait tid\n"
"  --clean-fsyncs=N   after each fsync, N more of the same, already committed\n"
"                     tid (a file with nothing new; seed 002's wakeups)\n"
"  --journal-mb=N     journal size in MiB (32)\n"
"  --json             one JSON object: ops_per_s, latency_us {avg, p50, p99,\n"
"                     max}, wakeups, useless_wakeups (+ stats with --stats)\n"
"  --stats            also print the journal's info file (ujbd_stats_format)\n"
"                     and latency per cause\n"
"  --help             this text\n"
"\n"
"exit status: 0 done, 1 the journal failed, 2 bad arguments, 3 I/O error\n");
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int pick(const char *s, const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* Parse into c. 1: --help; 0: run; -EINVAL: a message was printed. */
static int parse_opt(struct bench_cfg *c, int ch, const char *verb)
{
	static const char *const wakes[] = { "needed", "always" };
	uint64_t v;
	int k;

	switch (ch) {
	case 'd': c->dir = optarg; return 0;
	case 'n':
		if (parse_u64(optarg, 1, BENCH_MAX_ITER, &c->iterations) == 0)
			return 0;
		cli_err(verb, "bad --iterations '%s' (1..%llu)", optarg, BENCH_MAX_ITER);
		return -EINVAL;
	case 't':
		if (parse_u64(optarg, 1, BENCH_MAX_THREADS, &v) == 0)
			return c->threads = (unsigned)v, 0;
		cli_err(verb, "bad --threads '%s' (1..%d)", optarg, BENCH_MAX_THREADS);
		return -EINVAL;
	case 'J':
		if (parse_u64(optarg, 1, 65536, &c->journal_mb) == 0)
			return 0;
		cli_err(verb, "bad --journal-mb '%s' (1..65536)", optarg);
		return -EINVAL;
	case 'm':
		if ((k = pick(optarg, mode_names, 3)) >= 0)
			return c->data_mode = (enum ujbd_data_mode)k, 0;
		cli_err(verb, "unknown data mode '%s' (ordered, journal or writeback)", optarg);
		return -EINVAL;
	case 'w':
		if ((k = pick(optarg, wakes, 2)) >= 0)
			return c->wake = (enum ujbd_wake_policy)k, 0;
		cli_err(verb, "unknown wake policy '%s' (needed or always)", optarg);
		return -EINVAL;
	case 'U':
		if (ujbd_under_commit_parse(optarg, &c->under_commit) == 0)
			return 0;
		cli_err(verb, "unknown under-commit policy '%s' (copy or wait-io)", optarg);
		return -EINVAL;
	case 'L':
		if ((k = pick(optarg, layout_names, 2)) >= 0)
			return c->layout = (enum bench_layout)k, 0;
		cli_err(verb, "unknown layout '%s' (one-file or two-files)", optarg);
		return -EINVAL;
	case 'j': c->json = true; return 0;
	case 's': c->stats = true; return 0;
	case 'b': c->baseline = true; return 0;
	case 'a': c->async_commit = true; return 0;
	case 'S': c->sync_handles = true; return 0;
	case 'C': c->caller_commit = true; return 0;
	case 'f': c->use_fsync = true; return 0;
	case 'c':
		if (parse_u64(optarg, 0, 1000, &v) == 0)
			return c->clean_fsyncs = (unsigned)v, 0;
		cli_err(verb, "bad --clean-fsyncs '%s' (0..1000)", optarg);
		return -EINVAL;
	case 'h': return 1;
	case ':':
		cli_err(verb, "option '%s' needs a value", optarg ? optarg : "?");
		return -EINVAL;
	default:
		cli_err(verb, "unknown option (ujbd bench --help lists them)");
		return -EINVAL;
	}
}

static int parse_args(struct bench_cfg *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "data-mode", required_argument, NULL, 'm' },
		{ "wake", required_argument, NULL, 'w' },
		{ "under-commit", required_argument, NULL, 'U' },
		{ "layout", required_argument, NULL, 'L' },
		{ "journal-mb", required_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "baseline", no_argument, NULL, 'b' },
		{ "async-commit", no_argument, NULL, 'a' },
		{ "sync-handles", no_argument, NULL, 'S' },
		{ "caller-commit", no_argument, NULL, 'C' },
		{ "fsync", no_argument, NULL, 'f' },
		{ "clean-fsyncs", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const uint64_t iter_default[] = { 2000, 250, 1000000 };
	static const unsigned thr_default[] = { 1, 16, 1 };
	int ch, k, r;

	opterr = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == ':' || ch == '?')
			optarg = argv[optind - 1];
		r = parse_opt(c, ch, argv[0]);
		if (r)
			return r;
	}
	if (optind != argc - 1) {
		cli_err(argv[0], optind >= argc ? "which benchmark? (fsync-loop, "
			"group-commit or handles)" : "one benchmark at a time");
		return -EINVAL;
	}
	if ((k = pick(argv[optind], kind_names, 3)) < 0) {
		cli_err(argv[0], "unknown benchmark '%s' (fsync-loop, group-commit or handles)",
			argv[optind]);
		return -EINVAL;
	}
	c->kind = (enum bench_kind)k;
	if (c->kind == BK_HANDLES && c->baseline) {
		cli_err(argv[0], "handles has no baseline (it measures the CPU path only)");
		return -EINVAL;
	}
	if (c->clean_fsyncs && (c->baseline || c->sync_handles || c->kind == BK_HANDLES)) {
		cli_err(argv[0], "--clean-fsyncs applies to ujbd's fsync-loop and group-commit "
			"without --sync-handles");
		return -EINVAL;
	}
	if (c->use_fsync && !c->baseline) {
		cli_err(argv[0], "--fsync applies to --baseline only");
		return -EINVAL;
	}
	if (c->kind == BK_FSYNC_LOOP && c->threads > 1) {
		cli_err(argv[0], "fsync-loop runs one thread (group-commit runs several)");
		return -EINVAL;
	}
	if (!c->iterations)
		c->iterations = iter_default[k];
	if (!c->threads)
		c->threads = thr_default[k];
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_REAL, .seed = 1 };
	struct bench *b = calloc(1, sizeof(*b));
	rt_world *w = NULL;
	int r, status = EXIT_OK;

	if (!b) {
		cli_err(argv[0], "out of memory");
		return EXIT_IO;
	}
	b->b_cfg.journal_mb = 32;
	r = parse_args(&b->b_cfg, argc, argv);
	if (r) {
		if (r > 0)
			usage(stdout);
		free(b);
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	}
	b->b_thr = calloc(b->b_cfg.threads, sizeof(*b->b_thr));
	if (!b->b_thr || rt_world_new(&wo, &w) < 0) {
		cli_err(argv[0], "out of memory");
		status = EXIT_IO;
		goto out;
	}
	for (unsigned i = 0; i < b->b_cfg.threads; i++) {
		b->b_thr[i].t_b = b;
		b->b_thr[i].t_idx = i;
		b->b_thr[i].t_fd = -1;
		jbd_hist_init(&b->b_thr[i].t_lat);
	}
	rt_mutex_init(&b->b_lock, "bench_lock");
	rt_cond_init(&b->b_go_cond, "bench_go");
	if (bench_mkdir(b) == 0) {
		rt_world_run(w, "bench", bench_main, b);
		bench_rmdir(b);
	}
	if (b->b_err) {
		cli_err(argv[0], "%s", b->b_err_msg);
		status = b->b_err == -EIO ? EXIT_IO : EXIT_INVALID;
	} else {
		report(b);
	}
	rt_cond_release(&b->b_go_cond);
	rt_mutex_release(&b->b_lock);
out:
	if (w)
		rt_world_free(w);
	free(b->b_thr);
	free(b);
	return status;
}

/*
 * jbd.c: the journal workloads of `ujbd bench` and their plain-file
 * baselines, and bench's report.
 *
 *   fsync-loop    per thread: write a data block and an "inode" block in a
 *                 handle, then fsync (commit the tid and wait).
 *                 Baseline: pwrite + fdatasync of one block.
 *   group-commit  each thread: start, dirty its own metadata block, stop,
 *                 fsync; the commit thread batches them. Baseline: each
 *                 thread pwrite + fdatasync on its own file.
 *   handles       the CPU path (the AIM7 analogue): start, dirty, stop, no
 *                 fsync; commits happen on the timer or when a transaction
 *                 fills. No baseline.
 *
 * The one idea: a benchmark measures, it does not judge. Every thread times
 * its iterations into its own histogram (handles: 1 in 16, so the clock
 * does not dominate), all threads start together, and the run's histogram
 * is their merge. Block layout per thread t after opts->base: fsync kinds
 * use [1 + t*(SPAN+1)] as the inode block and the SPAN blocks after it as
 * data; handles use HANDLE_BLOCKS metadata blocks from 1 + t*HANDLE_BLOCKS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/load.h"

static const char *const kind_names[LOAD_JBD_KINDS] = {
	"fsync-loop", "group-commit", "handles",
};

const char *load_jbd_kind_name(enum load_jbd_kind k)
{
	return (unsigned)k < LOAD_JBD_KINDS ? kind_names[k] : "?";
}

uint64_t load_jbd_data_blocks(enum load_jbd_kind k, unsigned n)
{
	if (k == LOAD_JBD_HANDLES)
		return 1 + (uint64_t)n * LOAD_JBD_HANDLE_BLOCKS;
	return 1 + (uint64_t)n * (LOAD_JBD_SPAN + 1);
}

/* One worker thread's buffer and what it measured. */
struct jload_thr {
	uint8_t t_buf[LOAD_JBD_BS] __attribute__((aligned(64)));
	uint64_t t_ops;
	struct rt_hist t_lat;      /* ns per (timed) iteration */
};

struct jload {
	const struct load_jbd_opts *l_o;
	struct jload_thr *l_thr;   /* [threads] */
};

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
static int stop_and_fsync(const struct load_jbd_opts *o, struct ujbd_handle *h)
{
	ujbd_tid_t tid = ujbd_handle_tid(h);
	int err;

	if (o->sync_handles) {
		ujbd_handle_set_sync(h, true);
		return ujbd_stop(h);
	}
	err = ujbd_stop(h);
	if (!err)
		err = ujbd_commit_tid(o->j, tid);
	if (!err)
		err = ujbd_wait_tid(o->j, tid);
	/* fsyncs of a file with nothing new: its tid is already committed
	 * (AIM7's sync jobs; with wake=always each one wakes the commit
	 * thread for nothing: "jbd: don't wake kjournald unnecessarily",
	 * linux-ext4, December 2012) */
	for (unsigned k = 0; k < o->clean_fsyncs && !err; k++) {
		err = ujbd_commit_tid(o->j, tid);
		if (!err)
			err = ujbd_wait_tid(o->j, tid);
	}
	return err;
}

/* fsync-loop: a data block (ordered/writeback: home; journal: journaled)
 * and the thread's "inode" block, then fsync. group-commit: the inode
 * block only. */
static int iter_fsync(const struct load_jbd_opts *o, struct jload_thr *t,
		      unsigned idx, uint64_t i)
{
	uint64_t inode = o->base + 1 + (uint64_t)idx * (LOAD_JBD_SPAN + 1);
	bool data = o->kind == LOAD_JBD_FSYNC_LOOP;
	struct ujbd_handle *h;
	int err = ujbd_start(o->j, data ? 2 : 1, &h);

	if (err)
		return err;
	if (data) {
		stamp(t->t_buf, idx, i);
		err = ujbd_write_data(h, inode + 1 + i % LOAD_JBD_SPAN, t->t_buf);
	}
	if (!err)
		err = dirty_block(h, inode, idx, i);
	if (err) {
		ujbd_stop(h);
		return err;
	}
	return stop_and_fsync(o, h);
}

static int iter_handle(const struct load_jbd_opts *o, unsigned idx, uint64_t i)
{
	uint64_t block = o->base + 1 + (uint64_t)idx * LOAD_JBD_HANDLE_BLOCKS +
			 i % LOAD_JBD_HANDLE_BLOCKS;
	struct ujbd_handle *h;
	int err = ujbd_start(o->j, 1, &h), err2;

	if (err)
		return err;
	err = dirty_block(h, block, idx, i);
	err2 = ujbd_stop(h);
	return err ? err : err2;
}

static int iter_baseline(const struct load_jbd_opts *o, struct jload_thr *t,
			 unsigned idx, uint64_t i)
{
	off_t off = (off_t)(i % LOAD_JBD_SPAN) * LOAD_JBD_BS;
	int fd = o->fds[idx];

	stamp(t->t_buf, idx, i);
	if (pwrite(fd, t->t_buf, LOAD_JBD_BS, off) != LOAD_JBD_BS)
		return errno ? -errno : -EIO;
	if ((o->use_fsync ? fsync(fd) : fdatasync(fd)) < 0)
		return -errno;
	return 0;
}

/* ---- the threads ---------------------------------------------------------- */

static int jload_iter(const struct load_jbd_opts *o, struct jload_thr *t,
		      unsigned idx, uint64_t i)
{
	if (o->fds)
		return iter_baseline(o, t, idx, i);
	if (o->kind == LOAD_JBD_HANDLES)
		return iter_handle(o, idx, i);
	return iter_fsync(o, t, idx, i);
}

static int jload_body(void *arg, unsigned idx)
{
	struct jload *l = arg;
	const struct load_jbd_opts *o = l->l_o;
	struct jload_thr *t = &l->l_thr[idx];
	bool sampled = o->kind == LOAD_JBD_HANDLES;
	uint64_t t0 = 0;
	int err = 0;

	for (uint64_t i = 0; i < o->iterations && !err; i++) {
		bool timed = !sampled || i % LOAD_JBD_HANDLE_SAMPLE == 0;

		if (timed)
			t0 = rt_now_ns();
		err = jload_iter(o, t, idx, i);
		if (timed)
			rt_hist_add(&t->t_lat, rt_now_ns() - t0);
		t->t_ops += !err;
	}
	return err;
}

static int jload_check(const struct load_jbd_opts *o)
{
	if ((unsigned)o->kind >= LOAD_JBD_KINDS || o->threads == 0 ||
	    o->threads > LOAD_MAX_THREADS || (!o->j && !o->fds))
		return -EINVAL;
	if (o->fds && o->kind == LOAD_JBD_HANDLES)
		return -EINVAL; /* handles has no baseline */
	return 0;
}

int load_jbd_run(const struct load_jbd_opts *o, struct load_jbd *out)
{
	struct load_thread_info *info;
	struct jload l = { o, NULL };
	struct load_threads th = { .n = o->threads, .name = "bench",
				  .same_name = true, .together = true,
				  .body = jload_body, .arg = &l };
	int err = jload_check(o);

	memset(out, 0, sizeof(*out));
	rt_hist_init(&out->lat);
	out->nthreads = o->threads;
	if (err)
		return out->err = err;
	l.l_thr = aligned_alloc(64, o->threads * sizeof(*l.l_thr));
	info = calloc(o->threads, sizeof(*info));
	if (!l.l_thr || !info) {
		err = -ENOMEM;
		goto out;
	}
	memset(l.l_thr, 0, o->threads * sizeof(*l.l_thr));
	err = load_threads_run(&th, info, &out->elapsed_ns);
	out->start_failed = err != 0;
	if (!err)
		err = load_threads_err(info, o->threads);
	for (unsigned i = 0; i < o->threads; i++) {
		out->ops += l.l_thr[i].t_ops;
		rt_hist_merge(&out->lat, &l.l_thr[i].t_lat);
	}
out:
	free(l.l_thr);
	free(info);
	return out->err = err;
}

/* ---- the report ------------------------------------------------------------ */

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
	[UJBD_LAT_LOCK_WRITEBACK] = "Waiting for a buffer lock (writeback)",
	[UJBD_LAT_LOCK_CHECKPOINT] = "Waiting for a buffer lock (checkpoint)",
	[UJBD_LAT_LOCK_READ] = "Waiting for a buffer lock (read)",
};

/* The info file, then latency per cause in latencytop's text output form:
 * "[max X msec] cause - average msec (share of all latency %)". */
static void print_stats(FILE *f, const struct ujbd_stats *s)
{
	char text[2048];
	uint64_t total = 0;

	ujbd_stats_format(s, text, sizeof(text));
	fprintf(f, "\n%s\n", text);
	for (unsigned c = 0; c < UJBD_LAT_NR; c++)
		total += s->lat[c].sum_ns;
	fprintf(f, "Latency per cause (latencytop style):\n");
	for (unsigned c = 0; c < UJBD_LAT_NR; c++) {
		const struct ujbd_lat *l = &s->lat[c];

		if (!l->count)
			continue;
		fprintf(f, "[max %.1f msec] %s - %.3f msec (%.1f%%)\n",
			(double)l->max_ns / 1e6, lat_causes[c],
			(double)l->sum_ns / (double)l->count / 1e6,
			total ? 100.0 * (double)l->sum_ns / (double)total : 0.0);
	}
	fprintf(f, "fsync latency (us): p50 %.1f  p99 %.1f  max %.1f  (%" PRIu64
		" waits)\n", us(s->fsync_latency.p50_ns),
		us(s->fsync_latency.p99_ns), us(s->fsync_latency.max_ns),
		s->fsync_latency.count);
	fprintf(f, "commit time (us): p50 %.1f  p99 %.1f  max %.1f\n",
		us(s->commit_time.p50_ns), us(s->commit_time.p99_ns),
		us(s->commit_time.max_ns));
	fprintf(f, "checkpoint: %" PRIu64 " written, %" PRIu64 " dropped; log space"
		" waits %" PRIu64 " (longest %.1f ms)\n", s->checkpoint_written,
		s->checkpoint_dropped, s->log_space_waits,
		(double)s->log_space_stall_ns_max / 1e6);
	if (s->inherit_boosts || s->boosted_rqs)
		fprintf(f, "inherit: %" PRIu64 " raises; %" PRIu64 " queued requests raised,"
			" waited %.1f ms before (max %.1f), %.1f ms after (max %.1f)\n",
			s->inherit_boosts, s->boosted_rqs,
			(double)s->boost_wait_before_ns_sum / 1e6,
			(double)s->boost_wait_before_ns_max / 1e6,
			(double)s->boost_wait_after_ns_sum / 1e6,
			(double)s->boost_wait_after_ns_max / 1e6);
}

static const char *yes(bool b, const char *on, const char *off)
{
	return b ? on : off;
}

static void print_json(FILE *f, const struct load_jbd_report *rep,
		       const struct load_jbd *r, const struct load_lat *l,
		       double secs, double rate)
{
	fprintf(f, "{\"workload\":\"%s\",\"system\":\"%s\",\"data_mode\":\"%s\","
		"\"layout\":\"%s\",\"threads\":%u,\"iterations\":%" PRIu64 ",\"ops\":%" PRIu64
		",\"seconds\":%.6f,\"ops_per_s\":%.1f,", load_jbd_kind_name(rep->kind),
		rep->system, rep->data_mode, rep->layout, rep->threads,
		rep->iterations, r->ops, secs, rate);
	load_lat_json(f, l, 1);
	fprintf(f, ",\"wakeups\":%" PRIu64 ",\"useless_wakeups\":%" PRIu64,
		rep->stats->wakeups, rep->stats->useless_wakeups);
	if (!rep->baseline)
		fprintf(f, ",\"journal_mb\":%" PRIu64 ",\"wake\":\"%s\",\"under_commit\":\"%s\","
			"\"async_commit\":%s,\"caller_commit\":%s,\"sync_handles\":%s,"
			"\"clean_fsyncs\":%u", rep->journal_mb, rep->wake, rep->under_commit,
			yes(rep->async_commit, "true", "false"),
			yes(rep->caller_commit, "true", "false"),
			yes(rep->sync_handles, "true", "false"), rep->clean_fsyncs);
	if (rep->with_stats && !rep->baseline) {
		char s[4096];

		ujbd_stats_json(rep->stats, s, sizeof(s));
		fprintf(f, ",\"stats\":%s", s);
	}
	fprintf(f, "}\n");
}

int load_jbd_print(FILE *f, const struct load_jbd_report *rep,
		    const struct load_jbd *r)
{
	double secs = (double)r->elapsed_ns / 1e9;
	double rate = secs > 0 ? (double)r->ops / secs : 0;
	bool handles = rep->kind == LOAD_JBD_HANDLES;
	struct load_lat l;

	load_lat_of(&r->lat, &l);
	if (rep->json) {
		print_json(f, rep, r, &l, secs, rate);
		return ferror(f) ? -EIO : 0;
	}
	fprintf(f, "%s (%s%s%s%s): %" PRIu64 " ops by %u thread%s in %.3f s: %.1f ops/s\n",
		load_jbd_kind_name(rep->kind), rep->baseline ? "baseline" : "ujbd, data=",
		rep->baseline ? "" : rep->data_mode,
		rep->baseline ? ", pwrite+fdatasync" : ", ",
		rep->baseline ? "" : rep->layout, r->ops, rep->threads,
		rep->threads == 1 ? "" : "s", secs, rate);
	fprintf(f, "latency per %s (us): avg %.1f  p50 %.1f  p99 %.1f  max %.1f%s\n",
		handles ? "handle" : "iteration", l.avg_us, l.p50_us, l.p99_us,
		l.max_us, handles ? "  (1 in 16 timed)" : "");
	if (!rep->baseline) {
		fprintf(f, "journal %" PRIu64 " MiB, wake %s, under-commit %s, async commit %s, "
			"caller commit %s, sync handles %s, clean fsyncs %u\n", rep->journal_mb,
			rep->wake, rep->under_commit, yes(rep->async_commit, "on", "off"),
			yes(rep->caller_commit, "on", "off"), yes(rep->sync_handles, "on", "off"),
			rep->clean_fsyncs);
		fprintf(f, "commit thread wakeups %" PRIu64 ", useless %" PRIu64 "\n",
			rep->stats->wakeups, rep->stats->useless_wakeups);
	}
	if (rep->with_stats && !rep->baseline)
		print_stats(f, rep->stats);
	return ferror(f) ? -EIO : 0;
}

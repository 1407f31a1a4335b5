/*
 * blk.c: a load generator over a block queue: N rt threads, each with
 * its own I/O priority, keep iodepth bios in flight (random or sequential,
 * reads or writes) for a duration, and report IOPS, throughput and the
 * latency distribution of their own I/O. It shows a scheduler's fairness,
 * or its lack of it, thread by thread (tests/load/test_blkload.c).
 *
 * The one idea: latency is taken from the block layer's own time stamps
 * (bio queued -> its request completed, btt's Q2C), so the time a thread
 * needs to wake up after a completion is not charged to the disk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "rt/assert.h"

#define RING 256                 /* >= the largest iodepth */

void load_blk_opts_default(struct load_blk_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pattern = LOAD_BLK_RANDREAD;
	o->block_size = 4096;
	o->threads = 1;
	o->iodepth = 1;
	o->duration_ns = RT_NS_PER_S;
	o->seed = 1;
}

struct blkload_thread {
	const struct load_blk_opts *o;
	struct blk_queue *q;
	unsigned index;
	uint64_t region_off, region_len; /* this thread's bytes */
	/* completions, handed from end_io to the thread */
	rt_mutex lock;
	rt_cond cond;
	unsigned done_ring[RING];        /* [lock] indexes of completed bios */
	unsigned done_head, done_n;      /* [lock] */
	/* I/O */
	struct blk_bio *bios;
	char *buf;
	struct rt_prng prng;
	uint64_t next_seq_off;
	struct load_blk_result *res;
};

static int is_seq(enum load_blk_pattern p)
{
	return p == LOAD_BLK_READ || p == LOAD_BLK_WRITE;
}

static void blkload_end_io(struct blk_bio *b)
{
	struct blkload_thread *t = b->b_private;
	unsigned idx = (unsigned)(b - t->bios);

	rt_mutex_lock(&t->lock);
	ASSERT(t->done_n < RING);
	t->done_ring[(t->done_head + t->done_n) % RING] = idx;
	t->done_n++;
	rt_cond_signal(&t->cond);
	rt_mutex_unlock(&t->lock);
}

static uint64_t blkload_next_off(struct blkload_thread *t)
{
	uint64_t bs = t->o->block_size, nblocks = t->region_len / bs, blk;

	if (is_seq(t->o->pattern))
		blk = t->next_seq_off++ % nblocks;
	else
		blk = rt_prng_below(&t->prng, nblocks);
	return t->region_off + blk * bs;
}

static int blkload_submit(struct blkload_thread *t, unsigned idx)
{
	const struct load_blk_opts *o = t->o;
	struct blk_bio *b = &t->bios[idx];
	int write = o->pattern == LOAD_BLK_RANDWRITE ||
		    o->pattern == LOAD_BLK_WRITE;

	memset(b, 0, sizeof(*b));
	b->b_op = write ? BLK_OP_WRITE : BLK_OP_READ;
	b->b_flags = o->flags;
	b->b_sector = blkload_next_off(t) >> BLK_SECTOR_SHIFT;
	b->b_nr_sectors = o->block_size >> BLK_SECTOR_SHIFT;
	b->b_buf = t->buf + (size_t)idx * o->block_size;
	b->b_end_io = blkload_end_io;
	b->b_private = t;
	return blk_submit(t->q, b);
}

static void blkload_record(struct blkload_thread *t, const struct blk_bio *b)
{
	struct load_blk_result *r = t->res;

	if (b->b_error) {
		r->errors++;
		return;
	}
	rt_hist_add(&r->lat, b->b_c_ns - b->b_q_ns);
	r->ios++;
	r->bytes += (uint64_t)b->b_nr_sectors << BLK_SECTOR_SHIFT;
}

static unsigned blkload_reap(struct blkload_thread *t)
{
	unsigned idx;

	rt_mutex_lock(&t->lock);
	while (t->done_n == 0)
		rt_cond_wait(&t->cond, &t->lock);
	idx = t->done_ring[t->done_head];
	t->done_head = (t->done_head + 1) % RING;
	t->done_n--;
	rt_mutex_unlock(&t->lock);
	return idx;
}

/* Keep iodepth bios in flight until the time or count limit. */
static int blkload_loop(struct blkload_thread *t)
{
	const struct load_blk_opts *o = t->o;
	uint64_t start = rt_now_ns(), end = start + o->duration_ns, submitted = 0;
	unsigned inflight = 0;
	int stop = 0, rc = 0;

	for (unsigned i = 0; i < o->iodepth && rc == 0; i++) {
		rc = blkload_submit(t, i);
		inflight += rc == 0;
		submitted++;
	}
	while (inflight > 0) {
		unsigned idx = blkload_reap(t);

		inflight--;
		blkload_record(t, &t->bios[idx]);
		if (o->duration_ns && rt_now_ns() >= end)
			stop = 1;
		if (o->ios_per_thread && submitted >= o->ios_per_thread)
			stop = 1;
		if (!stop && rc == 0) {
			rc = blkload_submit(t, idx);
			inflight += rc == 0;
			submitted++;
		}
	}
	t->res->elapsed_ns = rt_now_ns() - start;
	return rc;
}

static void blkload_summarise(struct load_blk_result *r)
{
	struct load_lat l;

	if (r->elapsed_ns) {
		r->iops = (double)r->ios * 1e9 / (double)r->elapsed_ns;
		r->mb_s = (double)r->bytes * 1e3 / (double)r->elapsed_ns;
	}
	load_lat_of(&r->lat, &l);
	r->lat_us_avg = l.avg_us;
	r->lat_us_p50 = l.p50_us;
	r->lat_us_p99 = l.p99_us;
	r->lat_us_max = l.max_us;
}

static int blkload_body(void *arg, unsigned i)
{
	struct blkload_thread *t = (struct blkload_thread *)arg + i;
	int rc;

	rt_prng_init(&t->prng, t->o->seed + t->index);
	rc = blkload_loop(t);
	blkload_summarise(t->res);
	return rc;
}

static int blkload_check(const struct blk_queue *q, const struct load_blk_opts *o,
			 uint64_t *span)
{
	struct dev *d = blk_queue_dev(q);
	uint64_t size = dev_size(d);

	if (o->threads == 0 || o->threads > LOAD_BLK_MAX_THREADS)
		return -EINVAL;
	if (o->iodepth == 0 || o->iodepth > RING || o->block_size == 0 ||
	    o->block_size % dev_block_size(d) || o->block_size % 512)
		return -EINVAL;
	if (!o->duration_ns && !o->ios_per_thread)
		return -EINVAL;
	if (o->offset >= size || o->offset % o->block_size)
		return -EINVAL;
	*span = o->span ? o->span : size - o->offset;
	if (*span > size - o->offset)
		*span = size - o->offset;
	if (*span / o->threads < o->block_size)
		return -EINVAL;
	return 0;
}

static int blkload_thread_init(struct blkload_thread *t, struct blk_queue *q,
			       const struct load_blk_opts *o, unsigned i,
			       uint64_t span, struct load_blk_result *res)
{
	int seq = is_seq(o->pattern);
	/* Random threads share the region; sequential ones split it. */
	uint64_t per = seq ? span / o->threads / o->block_size * o->block_size : span;

	memset(t, 0, sizeof(*t));
	t->o = o;
	t->q = q;
	t->index = i;
	t->res = res;
	memset(res, 0, sizeof(*res));
	rt_hist_init(&res->lat);
	t->region_off = o->offset + (seq ? per * i : 0);
	t->region_len = seq ? per : span / o->block_size * o->block_size;
	t->bios = calloc(o->iodepth, sizeof(*t->bios));
	t->buf = calloc(o->iodepth, o->block_size);
	if (!t->bios || !t->buf) {
		free(t->bios);
		free(t->buf);
		return -ENOMEM;
	}
	rt_mutex_init(&t->lock, "bench");
	rt_cond_init(&t->cond, "bench_done");
	return 0;
}

static void blkload_thread_release(struct blkload_thread *t)
{
	rt_cond_release(&t->cond);
	rt_mutex_release(&t->lock);
	free(t->bios);
	free(t->buf);
}

int load_blk_run(struct blk_queue *q, const struct load_blk_opts *o,
		    struct load_blk_result *out)
{
	struct load_thread_info info[LOAD_BLK_MAX_THREADS];
	struct blkload_thread *t;
	unsigned ready = 0;
	uint64_t span;
	int rc = blkload_check(q, o, &span);

	if (rc < 0)
		return rc;
	t = calloc(o->threads, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (; ready < o->threads && rc == 0; ready += rc == 0)
		rc = blkload_thread_init(&t[ready], q, o, ready, span, &out[ready]);
	if (rc == 0) {
		struct load_threads th = { .n = o->threads, .name = "bench",
					  .ioprio = o->ioprio, .body = blkload_body,
					  .arg = t };

		rc = load_threads_run(&th, info, NULL);
		for (unsigned i = 0; i < o->threads; i++) {
			memcpy(out[i].name, info[i].name, sizeof(out[i].name));
			out[i].pid = info[i].pid;
			out[i].ioprio = info[i].ioprio;
		}
		if (rc == 0)
			rc = load_threads_err(info, o->threads);
	}
	for (unsigned i = 0; i < ready; i++)
		blkload_thread_release(&t[i]);
	free(t);
	return rc;
}

int load_blk_json(FILE *f, const struct load_blk_result *r, unsigned n)
{
	int rc = fprintf(f, "[");

	for (unsigned i = 0; i < n && rc >= 0; i++) {
		struct load_lat l = { r[i].lat_us_avg, r[i].lat_us_p50,
				     r[i].lat_us_p99, r[i].lat_us_max };
		char prio[16];

		rt_ioprio_str(r[i].ioprio, prio, sizeof(prio));
		rc = fprintf(f, "%s{\"name\":\"%s\",\"pid\":%d,\"ioprio\":\"%s\","
			     "\"ios\":%" PRIu64 ",\"errors\":%" PRIu64
			     ",\"iops\":%.1f,\"mb_s\":%.3f,", i ? "," : "",
			     r[i].name, r[i].pid, prio, r[i].ios, r[i].errors,
			     r[i].iops, r[i].mb_s);
		if (rc >= 0)
			rc = load_lat_json(f, &l, 1);
		if (rc >= 0)
			rc = fprintf(f, "}");
	}
	if (rc >= 0)
		rc = fprintf(f, "]");
	return rc < 0 ? -EIO : 0;
}

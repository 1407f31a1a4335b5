/*
 * A small load generator over a block queue: N rt threads, each with its
 * own I/O priority, keep iodepth bios in flight (random or sequential,
 * reads or writes) for a duration, and report IOPS, throughput and the
 * latency distribution of their own I/O. It is what `ujbd devbench
 * --threads --ioprio --elevator` runs, and what shows a scheduler's
 * fairness, or its lack of it, thread by thread.
 *
 * The one idea: latency is taken from the block layer's own time stamps
 * (bio queued -> its request completed, btt's Q2C), so the time a thread
 * needs to wake up after a completion is not charged to the disk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blk_int.h"

void blk_bench_opts_default(struct blk_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pattern = BLK_BENCH_RANDREAD;
	o->block_size = 4096;
	o->threads = 1;
	o->iodepth = 1;
	o->duration_ns = RT_NS_PER_S;
	o->seed = 1;
}

struct bench_thread {
	const struct blk_bench_opts *o;
	struct blk_queue *q;
	unsigned index;
	uint16_t ioprio;
	uint64_t region_off, region_len; /* this thread's bytes */
	/* completions, handed from end_io to the thread */
	rt_mutex lock;
	rt_cond cond;
	unsigned done_ring[256];         /* [lock] indexes of completed bios */
	unsigned done_head, done_n;
	/* I/O */
	struct blk_bio *bios;
	char *buf;
	struct rt_prng prng;
	uint64_t next_seq_off;
	uint64_t *lat_ns;                /* samples */
	size_t nlat, caplat;
	int rc;
	struct blk_bench_result *res;
};

static void bench_end_io(struct blk_bio *b)
{
	struct bench_thread *t = b->b_private;
	unsigned idx = (unsigned)(b - t->bios);
	rt_mutex_lock(&t->lock);
	ASSERT(t->done_n < 256);
	t->done_ring[(t->done_head + t->done_n) % 256] = idx;
	t->done_n++;
	rt_cond_signal(&t->cond);
	rt_mutex_unlock(&t->lock);
}

static uint64_t bench_next_off(struct bench_thread *t)
{
	uint64_t bs = t->o->block_size, nblocks = t->region_len / bs;
	int seq = t->o->pattern == BLK_BENCH_READ || t->o->pattern == BLK_BENCH_WRITE;
	uint64_t blk;
	if (seq) {
		blk = t->next_seq_off++ % nblocks;
	} else {
		blk = rt_prng_below(&t->prng, nblocks);
	}
	return t->region_off + blk * bs;
}

static int bench_submit(struct bench_thread *t, unsigned idx)
{
	const struct blk_bench_opts *o = t->o;
	struct blk_bio *b = &t->bios[idx];
	memset(b, 0, sizeof(*b));
	int write = o->pattern == BLK_BENCH_RANDWRITE || o->pattern == BLK_BENCH_WRITE;
	b->b_op = write ? BLK_OP_WRITE : BLK_OP_READ;
	b->b_flags = o->flags;
	b->b_sector = bench_next_off(t) >> BLK_SECTOR_SHIFT;
	b->b_nr_sectors = o->block_size >> BLK_SECTOR_SHIFT;
	b->b_buf = t->buf + (size_t)idx * o->block_size;
	b->b_end_io = bench_end_io;
	b->b_private = t;
	return blk_submit(t->q, b);
}

static int bench_record(struct bench_thread *t, const struct blk_bio *b)
{
	struct blk_bench_result *r = t->res;
	if (b->b_error) {
		r->errors++;
		return 0;
	}
	if (t->nlat == t->caplat) {
		size_t cap = t->caplat ? 2 * t->caplat : 1024;
		uint64_t *p = realloc(t->lat_ns, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->lat_ns = p;
		t->caplat = cap;
	}
	t->lat_ns[t->nlat++] = b->b_c_ns - b->b_q_ns;
	r->ios++;
	r->bytes += (uint64_t)b->b_nr_sectors << BLK_SECTOR_SHIFT;
	return 0;
}

/* Keep iodepth bios in flight until the time or count limit. */
static void bench_loop(struct bench_thread *t)
{
	const struct blk_bench_opts *o = t->o;
	uint64_t start = rt_now_ns(), end = start + o->duration_ns, submitted = 0;
	unsigned inflight = 0;
	int stop = 0;
	for (unsigned i = 0; i < o->iodepth && t->rc == 0; i++) {
		t->rc = bench_submit(t, i);
		inflight += t->rc == 0;
		submitted++;
	}
	while (inflight > 0) {
		rt_mutex_lock(&t->lock);
		while (t->done_n == 0)
			rt_cond_wait(&t->cond, &t->lock);
		unsigned idx = t->done_ring[t->done_head];
		t->done_head = (t->done_head + 1) % 256;
		t->done_n--;
		rt_mutex_unlock(&t->lock);
		inflight--;
		if (bench_record(t, &t->bios[idx]) < 0)
			t->rc = -ENOMEM;
		if (o->duration_ns && rt_now_ns() >= end)
			stop = 1;
		if (o->ios_per_thread && submitted >= o->ios_per_thread)
			stop = 1;
		if (!stop && t->rc == 0) {
			t->rc = bench_submit(t, idx);
			inflight += t->rc == 0;
			submitted++;
		}
	}
	t->res->elapsed_ns = rt_now_ns() - start;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void bench_summarise(struct bench_thread *t)
{
	struct blk_bench_result *r = t->res;
	if (r->elapsed_ns) {
		r->iops = (double)r->ios * 1e9 / (double)r->elapsed_ns;
		r->mb_s = (double)r->bytes * 1e3 / (double)r->elapsed_ns;
	}
	if (!t->nlat)
		return;
	qsort(t->lat_ns, t->nlat, sizeof(*t->lat_ns), cmp_u64);
	uint64_t sum = 0;
	for (size_t i = 0; i < t->nlat; i++)
		sum += t->lat_ns[i];
	r->lat_us_avg = (double)sum / (double)t->nlat / 1e3;
	r->lat_us_p50 = (double)t->lat_ns[(t->nlat - 1) / 2] / 1e3;
	r->lat_us_p99 = (double)t->lat_ns[(t->nlat - 1) * 99 / 100] / 1e3;
	r->lat_us_max = (double)t->lat_ns[t->nlat - 1] / 1e3;
}

static void bench_thread_fn(void *arg)
{
	struct bench_thread *t = arg;
	if (t->ioprio)
		rt_ioprio_set(t->ioprio); /* a kernel refusal is only reported by rt */
	t->res->ioprio = rt_ioprio_get();
	t->res->pid = rt_self_pid();
	snprintf(t->res->name, sizeof(t->res->name), "%s", rt_self_name());
	rt_prng_init(&t->prng, t->o->seed + t->index);
	bench_loop(t);
	bench_summarise(t);
}

static int bench_check(const struct blk_queue *q, const struct blk_bench_opts *o,
		       uint64_t *span)
{
	uint64_t size = dev_size(q->q_dev);
	if (o->threads == 0 || o->threads > BLK_BENCH_MAX_THREADS)
		return -EINVAL;
	if (o->iodepth == 0 || o->iodepth > 256 || o->block_size == 0 ||
	    o->block_size % q->q_block_size || o->block_size % 512)
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

static int bench_thread_init(struct bench_thread *t, struct blk_queue *q,
			     const struct blk_bench_opts *o, unsigned i, uint64_t span,
			     struct blk_bench_result *res)
{
	memset(t, 0, sizeof(*t));
	t->o = o;
	t->q = q;
	t->index = i;
	t->ioprio = o->ioprio ? o->ioprio[i] : 0;
	t->res = res;
	memset(res, 0, sizeof(*res));
	int seq = o->pattern == BLK_BENCH_READ || o->pattern == BLK_BENCH_WRITE;
	/* Random threads share the region; sequential ones split it. */
	uint64_t per = seq ? span / o->threads / o->block_size * o->block_size : span;
	t->region_off = o->offset + (seq ? per * i : 0);
	t->region_len = seq ? per : span / o->block_size * o->block_size;
	t->bios = calloc(o->iodepth, sizeof(*t->bios));
	t->buf = calloc(o->iodepth, o->block_size);
	if (!t->bios || !t->buf)
		return -ENOMEM;
	rt_mutex_init(&t->lock, "bench");
	rt_cond_init(&t->cond, "bench_done");
	return 0;
}

static void bench_thread_release(struct bench_thread *t)
{
	rt_cond_release(&t->cond);
	rt_mutex_release(&t->lock);
	free(t->bios);
	free(t->buf);
	free(t->lat_ns);
}

int blk_bench_run(struct blk_queue *q, const struct blk_bench_opts *o,
		  struct blk_bench_result *out)
{
	uint64_t span;
	int rc = bench_check(q, o, &span);
	if (rc < 0)
		return rc;
	struct bench_thread *t = calloc(o->threads, sizeof(*t));
	rt_thread **th = calloc(o->threads, sizeof(*th));
	unsigned started = 0;
	if (!t || !th) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < o->threads && rc == 0; i++) {
		rc = bench_thread_init(&t[i], q, o, i, span, &out[i]);
		if (rc < 0) {
			free(t[i].bios);
			free(t[i].buf);
			break;
		}
		char name[16];
		snprintf(name, sizeof(name), "bench%u", i);
		rc = rt_thread_create(&th[i], name, bench_thread_fn, &t[i]);
		if (rc < 0) {
			bench_thread_release(&t[i]);
			break;
		}
		started++;
	}
	for (unsigned i = 0; i < started; i++) {
		rt_thread_join(th[i]);
		if (t[i].rc && !rc)
			rc = t[i].rc;
		bench_thread_release(&t[i]);
	}
out:
	free(t);
	free(th);
	return rc;
}

int blk_bench_json(FILE *f, const struct blk_bench_result *r, unsigned n)
{
	int rc = fprintf(f, "[");
	for (unsigned i = 0; i < n && rc >= 0; i++) {
		char prio[16];
		rt_ioprio_str(r[i].ioprio, prio, sizeof(prio));
		rc = fprintf(f,
			     "%s{\"name\":\"%s\",\"pid\":%d,\"ioprio\":\"%s\",\"ios\":%" PRIu64
			     ",\"errors\":%" PRIu64 ",\"iops\":%.1f,\"mb_s\":%.3f,"
			     "\"latency_us\":{\"avg\":%.1f,\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}}",
			     i ? "," : "", r[i].name, r[i].pid, prio, r[i].ios, r[i].errors,
			     r[i].iops, r[i].mb_s, r[i].lat_us_avg, r[i].lat_us_p50,
			     r[i].lat_us_p99, r[i].lat_us_max);
	}
	if (rc >= 0)
		rc = fprintf(f, "]");
	return rc < 0 ? -EIO : 0;
}

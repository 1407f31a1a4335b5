/*
 * The buffer cache: one buffer per block, reads through the block layer
 * (once, even with concurrent readers), zero-fill without reading, peek,
 * LRU eviction of unreferenced buffers down to the limit, pinned buffers
 * never evicted. Real world on a RAM device, and a sim world with two
 * readers racing for the same block of a sim HDD.
 */
#include <errno.h>
#include <string.h>

#include "t.h"
#include "buf/buf.h"
#include "ujbd/dev.h"
#include "priv/stack.h"

#define BS 4096u
#define NB 64u

static void fill(uint8_t *p, uint64_t block)
{
	for (uint32_t i = 0; i < BS; i++)
		p[i] = (uint8_t)(block * 31 + i);
}

static int setup(struct dev **d, struct blk_queue **q)
{
	uint8_t b[BS];
	int rc = dev_mem_new((uint64_t)NB * BS, 512, d);

	for (uint64_t i = 0; !rc && i < NB; i++) {
		fill(b, i);
		rc = dev_pwrite(*d, b, BS, i * BS, 0);
	}
	return rc ? rc : blk_queue_new(*d, NULL, q);
}

static void t_read_zero_peek(void)
{
	struct dev *d;
	struct blk_queue *q;
	struct buf_cache *c;
	struct ujbd_buf *a, *b;
	struct buf_stats st;
	uint8_t want[BS], zero[BS] = { 0 };

	T_EQ(setup(&d, &q), 0);
	T_EQ(buf_cache_new(q, BS, NB, 8, &c), 0);
	T_EQ(buf_get(c, 3, BUF_GET_PEEK, &a), -ENOENT);
	T_EQ(buf_get(c, 3, BUF_GET_READ, &a), 0);
	fill(want, 3);
	T_CHECK(memcmp(a->b_data, want, BS) == 0);
	T_EQ(buf_get(c, 3, BUF_GET_PEEK, &b), 0);
	T_CHECK(a == b); /* one buffer per block */
	buf_put(b);
	T_EQ(buf_get(c, 4, BUF_GET_ZERO, &b), 0);
	T_CHECK(memcmp(b->b_data, zero, BS) == 0);
	buf_cache_stats(c, &st);
	T_EQ_U64(st.reads, 1); /* zero-fill read nothing */
	T_EQ(buf_get(c, NB, BUF_GET_READ, &b), -EINVAL);
	buf_put(a);
	buf_get(c, 4, BUF_GET_PEEK, &b);
	buf_put(b);
	buf_put(b);
	buf_cache_free(c);
	blk_queue_free(q);
	dev_close(d);
}

static void t_lru_and_pins(void)
{
	struct dev *d;
	struct blk_queue *q;
	struct buf_cache *c;
	struct ujbd_buf *b, *pin[6];
	struct buf_stats st;

	T_EQ(setup(&d, &q), 0);
	T_EQ(buf_cache_new(q, BS, NB, 4, &c), 0);
	for (uint64_t i = 0; i < 10; i++) {
		T_EQ(buf_get(c, i, BUF_GET_READ, &b), 0);
		buf_put(b);
	}
	buf_cache_stats(c, &st);
	T_CHECK(st.cached <= 4);
	T_EQ_U64(st.evictions, 10 - st.cached);
	/* The newest stay: block 9 is a hit, block 0 was evicted. */
	T_EQ(buf_get(c, 9, BUF_GET_PEEK, &b), 0);
	buf_put(b);
	T_EQ(buf_get(c, 0, BUF_GET_PEEK, &b), -ENOENT);
	/* Pinned buffers are never evicted: the cache grows past its limit. */
	for (int i = 0; i < 6; i++)
		T_EQ(buf_get(c, 20 + (uint64_t)i, BUF_GET_READ, &pin[i]), 0);
	buf_cache_stats(c, &st);
	T_EQ_U64(st.cached, 6);
	for (int i = 0; i < 6; i++) {
		uint8_t want[BS];
		fill(want, 20 + (uint64_t)i);
		T_CHECK(memcmp(pin[i]->b_data, want, BS) == 0);
		buf_put(pin[i]);
	}
	buf_cache_stats(c, &st);
	T_CHECK(st.cached <= 4);
	buf_cache_free(c);
	blk_queue_free(q);
	dev_close(d);
}

/* Two sim threads want the same block of a slow disk: one read. */
struct race {
	struct buf_cache *c;
	int rc[2];
	struct ujbd_buf *b[2];
};

struct racer_arg {
	struct race *r;
	int i;
};

static void racer(void *arg)
{
	struct racer_arg *a = arg;

	a->r->rc[a->i] = buf_get(a->r->c, 7, BUF_GET_READ, &a->r->b[a->i]);
}

static int race_main(struct stack *stk, void *arg)
{
	struct race *r = arg;
	struct buf_stats st;
	rt_thread *t[2];

	if (buf_cache_new(stack_queue(stk, 0), BS, (64ull << 20) / BS, 0, &r->c))
		return 0;
	struct racer_arg ra[2] = { { r, 0 }, { r, 1 } };
	r->rc[0] = r->rc[1] = 1;
	rt_thread_create(&t[0], "racer0", racer, &ra[0]);
	rt_thread_create(&t[1], "racer1", racer, &ra[1]);
	rt_thread_join(t[0]);
	rt_thread_join(t[1]);
	buf_cache_stats(r->c, &st);
	if (st.reads != 1 || r->b[0] != r->b[1])
		r->rc[0] = -1;
	buf_put(r->b[0]);
	buf_put(r->b[1]);
	buf_cache_free(r->c);
	return 0;
}

static void t_one_read_for_two(void)
{
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct stack_spec sp;
		struct stack *stk;
		struct race r = { 0 };

		stack_spec_default(&sp);
		sp.seed = seed;
		sp.disks[0] = (struct stack_disk_spec){ "hdd", NULL, 64ull << 20 };
		sp.queues[0].elevator = "noop";
		T_EQ(stack_new(&sp, &stk, NULL, 0), 0);
		T_EQ(stack_run(stk, "main", race_main, &r), 0);
		stack_free(stk);
		T_EQ(r.rc[0], 0);
		T_EQ(r.rc[1], 0);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_read_zero_peek);
	T_RUN(t_lru_and_pins);
	T_RUN(t_one_read_for_two);
	return t_done(argv[0]);
}

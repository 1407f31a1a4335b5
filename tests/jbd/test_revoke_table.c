/*
 * The runtime's revoke table (src/jbd/revoke.c) on its own: records kept
 * in order with an open-addressing index, duplicates ignored, the capacity
 * counting cancelled records too (the commit skips them), cancel removing a
 * block from the middle of a probe run without losing the blocks after it,
 * and clear. 64 blocks that all hash to 8 of the 128 slots make long probe
 * runs, across the end of the index.
 */
#include <errno.h>

#include "t.h"
#include "alloc_fault.h"
#include "jbd/runtime.h"

#define CAP 64u

/* The table's hash (revoke.c: Fibonacci hashing into 2 * CAP slots),
 * repeated here only to choose blocks that collide. */
static uint32_t slot_of(uint64_t block)
{
	return (uint32_t)((block * 0x9E3779B97F4A7C15ull) >> 32) & (2 * CAP - 1);
}

/* The i-th block whose home slot is one of the 8 around the index's end
 * (slots 124..127 and 0..3): long probe runs that wrap around. */
static uint64_t block_of(unsigned i)
{
	static uint64_t v[CAP + 1];
	static unsigned n;

	for (uint64_t b = n ? v[n - 1] + 1 : 1; n <= CAP; b++) {
		uint32_t s = slot_of(b);
		if (s >= 2 * CAP - 4 || s < 4)
			v[n++] = b;
	}
	return v[i];
}

static void t_add_has_cancel(void)
{
	struct jbd_revoke_table rt;

	T_EQ(jbd_revoke_table_init(&rt, CAP), 0);
	T_CHECK(!jbd_revoke_has(&rt, 1));              /* empty */
	T_CHECK(!jbd_revoke_cancel(&rt, 1));
	for (unsigned i = 0; i < CAP; i++)
		T_EQ(jbd_revoke_add(&rt, block_of(i)), 0);
	T_EQ(jbd_revoke_add(&rt, block_of(7)), 0);     /* already there */
	T_EQ(jbd_revoke_add(&rt, block_of(CAP)), -UJBD_ETOOBIG);
	for (unsigned i = 0; i < CAP; i++)
		T_CHECK(jbd_revoke_has(&rt, block_of(i)));
	T_CHECK(!jbd_revoke_has(&rt, block_of(CAP)));
	T_CHECK(!jbd_revoke_cancel(&rt, block_of(CAP))); /* not there */
	/* cancel every other one: the rest must still be found, whatever
	 * probe runs they were in */
	for (unsigned i = 0; i < CAP; i += 2)
		T_CHECK(jbd_revoke_cancel(&rt, block_of(i)));
	for (unsigned i = 0; i < CAP; i++)
		T_EQ(jbd_revoke_has(&rt, block_of(i)), i % 2 == 1);
	T_CHECK(!jbd_revoke_cancel(&rt, block_of(0)));  /* twice */
	T_EQ(rt.rt_live, CAP / 2);
	/* cancelled records still take their place until the table is cleared */
	T_EQ(jbd_revoke_add(&rt, block_of(0)), -UJBD_ETOOBIG);
	for (unsigned i = 0; i < CAP; i++)
		if (i % 2)
			T_EQ_U64(rt.rt_blocks[i], block_of(i));
		else
			T_EQ_U64(rt.rt_blocks[i], UINT64_MAX);
	jbd_revoke_table_clear(&rt);
	T_EQ(rt.rt_n, 0);
	T_CHECK(!jbd_revoke_has(&rt, block_of(1)));
	T_EQ(jbd_revoke_add(&rt, block_of(0)), 0);
	T_CHECK(jbd_revoke_has(&rt, block_of(0)));
	jbd_revoke_table_clear(&rt);
	jbd_revoke_table_clear(&rt);                    /* clearing an empty one */
	jbd_revoke_table_release(&rt);
	T_CHECK(!jbd_revoke_has(NULL, 1));
	T_CHECK(!jbd_revoke_cancel(NULL, 1));
}

/* Cancel in the order they were added, then in reverse: each cancel
 * re-inserts the rest of its run; the survivors are always found. */
static void t_cancel_orders(void)
{
	struct jbd_revoke_table rt;

	for (int rev = 0; rev < 2; rev++) {
		T_EQ(jbd_revoke_table_init(&rt, CAP), 0);
		for (unsigned i = 0; i < CAP; i++)
			T_EQ(jbd_revoke_add(&rt, block_of(i)), 0);
		for (unsigned k = 0; k < CAP; k++) {
			unsigned i = rev ? CAP - 1 - k : k;
			T_CHECK(jbd_revoke_cancel(&rt, block_of(i)));
			for (unsigned m = 0; m < CAP; m++) {
				bool gone = rev ? m >= i : m <= i;
				T_EQ(jbd_revoke_has(&rt, block_of(m)), !gone);
			}
		}
		T_EQ(rt.rt_live, 0);
		jbd_revoke_table_release(&rt);
	}
}

/* Either allocation failing: -ENOMEM and nothing held. */
static void t_init_nomem(void)
{
	struct jbd_revoke_table rt;

	if (!HAVE_ALLOC_FAULTS)
		T_SKIP("a sanitizer owns malloc: no allocation faults");
	for (long n = 1; n <= 2; n++) {
		alloc_fault_arm(n);
		int rc = jbd_revoke_table_init(&rt, CAP);
		T_EQ(alloc_fault_disarm(), 1);
		T_EQ(rc, -ENOMEM);
		T_CHECK(rt.rt_blocks == NULL && rt.rt_slot == NULL);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_add_has_cancel);
	T_RUN(t_cancel_orders);
	T_RUN(t_init_nomem);
	return t_done(argv[0]);
}

/*
 * revoke.c: the runtime revoke table of a transaction.
 *
 * A revoke record of transaction T for block B tells recovery: replay no
 * copy of B from a transaction with tid <= T. So a block freed in T (its
 * older journaled copies must not overwrite whatever it holds next) gets a
 * record, and a block journaled again later in the same T must lose its
 * record, or recovery would skip T's own copy as well: that is the cancel.
 *
 * Only the running and the committing transaction own a table, so two
 * tables allocated at open are swapped between transactions: nothing is
 * allocated while committing. The records keep their revoke order (the
 * commit writes them in that order); an open-addressing index finds a block
 * in O(1) for the cancel that every get_write_access performs.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

#define REVOKE_CANCELLED UINT64_MAX

int jbd_revoke_table_init(struct jbd_revoke_table *rt, uint32_t cap)
{
	uint32_t slots = jbd_table_slots(cap);

	memset(rt, 0, sizeof(*rt));
	rt->rt_blocks = malloc((size_t)cap * sizeof(*rt->rt_blocks));
	rt->rt_slot = malloc((size_t)slots * sizeof(*rt->rt_slot));
	if (!rt->rt_blocks || !rt->rt_slot) {
		jbd_revoke_table_release(rt);
		return -ENOMEM;
	}
	rt->rt_cap = cap;
	rt->rt_mask = slots - 1;
	ASSERT(rt->rt_mask + 1 >= 2 * cap); /* at most half full: probes end */
	memset(rt->rt_slot, 0xff, (size_t)slots * sizeof(*rt->rt_slot));
	return 0;
}

void jbd_revoke_table_release(struct jbd_revoke_table *rt)
{
	free(rt->rt_blocks);
	free(rt->rt_slot);
	memset(rt, 0, sizeof(*rt));
}

void jbd_revoke_table_clear(struct jbd_revoke_table *rt)
{
	ASSERT(rt->rt_live <= rt->rt_n && rt->rt_n <= rt->rt_cap);
	if (rt->rt_n)
		memset(rt->rt_slot, 0xff, ((size_t)rt->rt_mask + 1) * sizeof(*rt->rt_slot));
	rt->rt_n = rt->rt_live = 0;
	ASSERT(rt->rt_slot[0] < 0 && rt->rt_slot[rt->rt_mask] < 0); /* an empty index */
}

/* The slot of block's record, or of the empty slot where it would go. */
static uint32_t revoke_find(const struct jbd_revoke_table *rt, uint64_t block)
{
	uint32_t s = jbd_block_hash(block, rt->rt_mask);

	/* Bounded: the index is at most half full. */
	for (uint32_t i = 0; i <= rt->rt_mask; i++) {
		int32_t idx = rt->rt_slot[s];
		if (idx < 0)
			return s;
		/* Cancelled records are never in the index. */
		if (rt->rt_blocks[idx] == block)
			return s;
		s = (s + 1) & rt->rt_mask;
	}
	ASSERT(!"revoke index full");
	return 0;
}

int jbd_revoke_add(struct jbd_revoke_table *rt, uint64_t block)
{
	uint32_t s;

	ASSERT(block != REVOKE_CANCELLED);
	ASSERT(rt->rt_live <= rt->rt_n && rt->rt_n <= rt->rt_cap);
	s = revoke_find(rt, block);
	if (rt->rt_slot[s] >= 0)
		return 0; /* already revoked */
	if (rt->rt_n == rt->rt_cap)
		return -UJBD_ETOOBIG; /* more revokes than a transaction may log */
	rt->rt_blocks[rt->rt_n] = block;
	rt->rt_slot[s] = (int32_t)rt->rt_n;
	rt->rt_n++;
	rt->rt_live++;
	ASSERT(rt->rt_slot[revoke_find(rt, block)] == (int32_t)rt->rt_n - 1);
	return 0;
}

/*
 * Cancelling removes the block from the index by re-inserting the entries
 * of its probe run that follow it (linear probing deletion), and marks the
 * record so the commit skips it.
 */
bool jbd_revoke_cancel(struct jbd_revoke_table *rt, uint64_t block)
{
	uint32_t s, next;

	if (!rt || rt->rt_live == 0)
		return false;
	s = revoke_find(rt, block);
	if (rt->rt_slot[s] < 0)
		return false;
	ASSERT((uint32_t)rt->rt_slot[s] < rt->rt_n && rt->rt_blocks[rt->rt_slot[s]] == block);
	rt->rt_blocks[rt->rt_slot[s]] = REVOKE_CANCELLED;
	rt->rt_live--;
	rt->rt_slot[s] = -1;
	for (next = (s + 1) & rt->rt_mask; rt->rt_slot[next] >= 0;
	     next = (next + 1) & rt->rt_mask) {
		int32_t idx = rt->rt_slot[next];
		rt->rt_slot[next] = -1;
		rt->rt_slot[revoke_find(rt, rt->rt_blocks[idx])] = idx;
	}
	ASSERT(rt->rt_slot[revoke_find(rt, block)] < 0); /* gone from the index */
	return true;
}

bool jbd_revoke_has(const struct jbd_revoke_table *rt, uint64_t block)
{
	return rt && rt->rt_live && rt->rt_slot[revoke_find(rt, block)] >= 0;
}

struct jbd_revoke_table *__jbd_revoke_table_get(struct ujbd *j)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	for (int i = 0; i < 2; i++) {
		if (!j->j_revoke_used[i]) {
			j->j_revoke_used[i] = true;
			jbd_revoke_table_clear(&j->j_revoke_tables[i]);
			return &j->j_revoke_tables[i];
		}
	}
	ASSERT(!"more than two transactions own revoke tables");
	return NULL;
}

void __jbd_revoke_table_put(struct ujbd *j, struct jbd_revoke_table *rt)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	for (int i = 0; i < 2; i++) {
		if (rt == &j->j_revoke_tables[i]) {
			ASSERT(j->j_revoke_used[i]);
			j->j_revoke_used[i] = false;
			return;
		}
	}
	ASSERT(!"unknown revoke table");
}

/* Log blocks t's revoke records take. */
uint32_t jbd_txn_revoke_blocks(const struct ujbd *j, const struct jbd_txn *t)
{
	uint32_t n = t->t_revoke ? t->t_revoke->rt_live : 0;

	return (n + j->j_rcap - 1) / j->j_rcap;
}

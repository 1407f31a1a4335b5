/*
 * jdata.c: the index of blocks whose ordered data went through the log
 * (ordered_journal_bytes), so that a later write of such a block to its
 * home location is protected by a revoke record.
 *
 * The one idea: a data block journaled in transaction T1 and written home
 * (ordered, over the limit) by a later T2 would be overwritten at recovery
 * by T1's older copy if T1 is still in the on-disk log when T2 commits: its
 * checkpoint may have written the block home and freed its journal head
 * long before the tail moved past T1 (the tail waits for the oldest
 * transaction, not for this one). So every block the data path journals is
 * noted here with the newest tid that logs it, and a home write of a noted
 * block whose tid is not behind the durable tail (j_tail_sequence) revokes
 * it first. An entry is stale once the durable tail has passed its tid.
 *
 * Bounded: allocated at open with room for as many blocks as the log can
 * hold copies of (capped); stale entries are swept when it fills, at most
 * once per move of the tail. A block that finds no room is not journaled
 * (its data goes home, ordered, as jbd2 would), so an entry is never lost
 * while its copy may be replayed. Open addressing with linear probing, the
 * revoke table's deletion (re-insert the rest of the probe run). All calls
 * [j_state_lock].
 */
#include <stdlib.h>

#include "jbd/runtime.h"

#define JD_EMPTY UINT64_MAX

int jbd_jdata_init(struct jbd_jdata_index *ix, uint32_t cap)
{
	uint32_t slots = jbd_table_slots(cap);

	memset(ix, 0, sizeof(*ix));
	ix->ji_ent = malloc((size_t)slots * sizeof(*ix->ji_ent));
	if (!ix->ji_ent)
		return -ENOMEM;
	for (uint32_t i = 0; i < slots; i++)
		ix->ji_ent[i].e_block = JD_EMPTY;
	ix->ji_mask = slots - 1;
	ix->ji_cap = cap;
	ASSERT(ix->ji_mask + 1 >= 2 * cap); /* at most half full: probes end */
	return 0;
}

void jbd_jdata_release(struct jbd_jdata_index *ix)
{
	free(ix->ji_ent);
	memset(ix, 0, sizeof(*ix));
}

/* The slot of block's entry, or of the empty slot where it would go. */
static uint32_t jd_find(const struct jbd_jdata_index *ix, uint64_t block)
{
	uint32_t s = jbd_block_hash(block, ix->ji_mask);

	for (uint32_t i = 0; i <= ix->ji_mask; i++) {
		uint64_t b = ix->ji_ent[s].e_block;
		if (b == JD_EMPTY || b == block)
			return s;
		s = (s + 1) & ix->ji_mask;
	}
	ASSERT(!"jdata index full");
	return 0;
}

/* Empty slot s, then re-insert the rest of its probe run. */
static void jd_delete(struct jbd_jdata_index *ix, uint32_t s)
{
	ASSERT(ix->ji_ent[s].e_block != JD_EMPTY && ix->ji_n > 0);
	ix->ji_ent[s].e_block = JD_EMPTY;
	ix->ji_n--;
	for (uint32_t n = (s + 1) & ix->ji_mask; ix->ji_ent[n].e_block != JD_EMPTY;
	     n = (n + 1) & ix->ji_mask) {
		struct jbd_jdata_ent e = ix->ji_ent[n];
		ix->ji_ent[n].e_block = JD_EMPTY;
		ix->ji_ent[jd_find(ix, e.e_block)] = e;
	}
}

/* A copy logged by tid may be replayed while the durable tail is not past
 * it (tail: the oldest tid recovery would replay). */
static bool jd_live(ujbd_tid_t tid, ujbd_tid_t tail)
{
	return ujbd_tid_geq(tid, tail);
}

/* Drop every stale entry (a moved entry may escape until the next sweep:
 * kept stale, it only costs a revoke record). */
static void jd_sweep(struct jbd_jdata_index *ix, ujbd_tid_t tail)
{
	for (uint32_t s = 0; s <= ix->ji_mask; s++) {
		while (ix->ji_ent[s].e_block != JD_EMPTY && !jd_live(ix->ji_ent[s].e_tid, tail))
			jd_delete(ix, s);
	}
	ix->ji_swept = true;
	ix->ji_swept_tail = tail;
}

bool jbd_jdata_note(struct jbd_jdata_index *ix, uint64_t block, ujbd_tid_t tid, ujbd_tid_t tail)
{
	uint32_t s;

	ASSERT(block != JD_EMPTY && jd_live(tid, tail));
	if (!ix->ji_ent)
		return false;
	s = jd_find(ix, block);
	if (ix->ji_ent[s].e_block == block) {
		if (ujbd_tid_gt(tid, ix->ji_ent[s].e_tid))
			ix->ji_ent[s].e_tid = tid;
		return true;
	}
	if (ix->ji_n == ix->ji_cap && (!ix->ji_swept || ix->ji_swept_tail != tail)) {
		jd_sweep(ix, tail);
		s = jd_find(ix, block);
	}
	if (ix->ji_n == ix->ji_cap)
		return false;
	ix->ji_ent[s] = (struct jbd_jdata_ent){ block, tid };
	ix->ji_n++;
	ASSERT(ix->ji_n <= ix->ji_cap && ix->ji_ent[jd_find(ix, block)].e_tid == tid);
	return true;
}

bool jbd_jdata_replayable(struct jbd_jdata_index *ix, uint64_t block, ujbd_tid_t tail)
{
	uint32_t s;

	if (!ix->ji_ent || !ix->ji_n)
		return false;
	s = jd_find(ix, block);
	if (ix->ji_ent[s].e_block != block)
		return false;
	if (jd_live(ix->ji_ent[s].e_tid, tail))
		return true;
	jd_delete(ix, s);
	return false;
}

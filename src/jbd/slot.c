/*
 * slot.c: per-thread handle slots, the handle path that does not take
 * j_state_lock.
 *
 * The one idea: each thread that starts handles on a journal owns a slot
 * (a cache line nobody else writes while it works), and a handle that finds
 * the running transaction open (j_open) announces itself in its slot
 * (s_txn) instead of raising t_updates under the lock. The commit closes
 * the transaction (j_open = NULL) and then waits until no slot announces
 * it. Each side stores, then loads what the other stored (sequentially
 * consistent), so either the commit sees the announcement or the starter
 * sees the transaction closed and backs off: never both missed.
 *
 * What a slot handle may do without the lock (the end of this file):
 *   - start: announce, check j_open, take credits from the slot's pool
 *     (reserved in t_outstanding under the lock, s_pool_chunk at a time);
 *   - get write access to, and dirty, a buffer that one of its own earlier
 *     handles of the same transaction attached to it (the slot's memo):
 *     a buffer attached to the running transaction stays attached until
 *     that transaction is locked and drained (forget marks, it does not
 *     detach), so the memo's journal head is alive and its state is read
 *     with atomic loads;
 *   - stop: return unused credits to the pool, withdraw the announcement,
 *     and wake the commit if it waits for the drain (j_drain_waiting).
 * Anything else (a new buffer, a forgotten one, a sync handle, a waiting
 * start, a trace hook installed) takes the locked path, unchanged.
 *
 * Lifetime: a slot has two references, the journal's (dropped at close)
 * and its thread's (dropped when the thread exits, rt_at_thread_exit); the
 * last one frees it. A slot whose thread exited is reused by the next new
 * thread. A thread keeps at most SLOT_TLS slots (journals) at once; past
 * that it uses the locked path.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

#define SLOT_TLS 8

struct slot_ref {
	uint64_t r_jid;
	struct jbd_slot *r_slot;
};

static _Thread_local struct slot_ref slot_tls[SLOT_TLS];
static _Thread_local bool slot_tls_hooked;
static uint64_t slot_next_jid = 1; /* atomic */

uint64_t jbd_slot_new_jid(void)
{
	return __atomic_fetch_add(&slot_next_jid, 1, __ATOMIC_RELAXED);
}

static void slot_unref(struct jbd_slot *s)
{
	uint32_t left = __atomic_sub_fetch(&s->s_refs, 1, __ATOMIC_ACQ_REL);

	ASSERT(left < 2); /* two references at most: one just went */
	if (left == 0) {
		ASSERT(!s->s_busy && !__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED));
		free(s);
	}
}

/* The thread exits: drop its references. */
static void slot_thread_exit(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < SLOT_TLS; i++) {
		/* an entry names its journal iff it holds a slot (jids start at 1) */
		ASSERT(!slot_tls[i].r_slot == !slot_tls[i].r_jid);
		if (slot_tls[i].r_slot)
			slot_unref(slot_tls[i].r_slot);
		slot_tls[i] = (struct slot_ref){ 0, NULL };
	}
	slot_tls_hooked = false;
}

/* A slot of j for the calling thread: a free one (its thread exited) or a
 * new one. NULL on no memory. */
static struct jbd_slot *slot_claim(struct ujbd *j)
{
	struct jbd_slot *s, *fresh = aligned_alloc(64, sizeof(*fresh));
	uint32_t one;

	rt_mutex_lock(&j->j_state_lock);
	for (s = j->j_slots; s; s = s->s_next) {
		one = 1;
		if (__atomic_compare_exchange_n(&s->s_refs, &one, 2, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	if (!s && fresh) {
		s = fresh;
		fresh = NULL;
		memset(s, 0, sizeof(*s));
		s->s_refs = 2;
		s->s_id = ++j->j_nslots;
		s->s_next = j->j_slots;
		j->j_slots = s;
	}
	if (s) {
		/* what a previous owner left is tagged with t_seq, or unused */
		ASSERT(s->s_refs == 2 && !__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED));
		s->s_busy = false;
		memset(s->s_memo, 0, sizeof(s->s_memo));
	}
	rt_mutex_unlock(&j->j_state_lock);
	free(fresh);
	return s;
}

struct jbd_slot *jbd_slot_self(struct ujbd *j)
{
	struct slot_ref *free_ref = NULL;
	struct jbd_slot *s;

	for (unsigned i = 0; i < SLOT_TLS; i++) {
		struct slot_ref *r = &slot_tls[i];
		if (r->r_jid == j->j_id)
			return r->r_slot;
		if (r->r_slot && __atomic_load_n(&r->r_slot->s_closed, __ATOMIC_ACQUIRE)) {
			slot_unref(r->r_slot); /* its journal is closed */
			*r = (struct slot_ref){ 0, NULL };
		}
		if (!r->r_slot && !free_ref)
			free_ref = r;
	}
	if (!free_ref)
		return NULL;
	if (!slot_tls_hooked) {
		if (rt_at_thread_exit(slot_thread_exit, NULL))
			return NULL;
		slot_tls_hooked = true;
	}
	s = slot_claim(j);
	if (s)
		*free_ref = (struct slot_ref){ j->j_id, s };
	ASSERT(!s || (free_ref->r_slot == s && s->s_id > 0));
	return s;
}

/* ---- the commit's side (j_state_lock held) ------------------------------- */

bool __jbd_slots_hold(const struct ujbd *j, const struct jbd_txn *t)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* the drain: t is locked and closed to slot handles */
	ASSERT(t->t_state == T_LOCKED && __atomic_load_n(&j->j_open, __ATOMIC_RELAXED) != t);
	for (const struct jbd_slot *s = j->j_slots; s; s = s->s_next)
		if (__atomic_load_n(&s->s_txn, __ATOMIC_SEQ_CST) == t)
			return true;
	return false;
}

uint64_t __jbd_slots_handles(const struct ujbd *j, const struct jbd_txn *t)
{
	uint64_t n = 0;

	ASSERT(t->t_state >= T_LOCKED); /* closed to new handles */
	/* Drained, so the counts are final. Not asserted by looking at the
	 * slots again: a slot that read j_open just before the commit closed it
	 * may announce t after the drain looked, for the instant until its own
	 * check sees j_open closed and it withdraws (start_slot), having
	 * counted nothing. */
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(__atomic_load_n(&j->j_open, __ATOMIC_RELAXED) != t);
	for (const struct jbd_slot *s = j->j_slots; s; s = s->s_next)
		if (s->s_cnt_seq == t->t_seq)
			n += s->s_cnt;
	return n;
}

void jbd_slots_release(struct ujbd *j)
{
	struct jbd_slot *s, *next;
	uint32_t n = 0;

	for (s = j->j_slots; s; s = next) {
		next = s->s_next;
		n++;
		ASSERT(!__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED));
		ASSERT(!__atomic_load_n(&s->s_closed, __ATOMIC_RELAXED));
		__atomic_store_n(&s->s_closed, true, __ATOMIC_RELEASE);
		/* the closing thread's own reference goes now */
		for (unsigned i = 0; i < SLOT_TLS; i++)
			if (slot_tls[i].r_slot == s) {
				slot_tls[i] = (struct slot_ref){ 0, NULL };
				slot_unref(s);
			}
		slot_unref(s);
	}
	ASSERT(n == j->j_nslots); /* a slot leaves j_slots only here */
	j->j_slots = NULL;
}

/* ---- the memo ------------------------------------------------------------ */

static struct jbd_memo *memo_at(struct jbd_slot *s, uint64_t block)
{
	return &s->s_memo[(block * 0x9E3779B97F4A7C15ull >> 40) & (JBD_MEMO - 1)];
}

struct jbd_jh *jbd_memo_find(struct jbd_slot *s, uint64_t seq, uint64_t block)
{
	struct jbd_memo *m = memo_at(s, block);

	return m->m_jh && m->m_seq == seq && m->m_block == block ? m->m_jh : NULL;
}

void jbd_memo_put(struct jbd_slot *s, uint64_t seq, uint64_t block, struct jbd_jh *jh)
{
	ASSERT(jh && jh->jh_buf->b_blocknr == block && seq);
	ASSERT(s->s_busy && s->s_handle.h_transaction->t_seq == seq);
	*memo_at(s, block) = (struct jbd_memo){ block, jh, seq };
}

/* ---- the handle side: start, stop, access, dirty without the lock ------- */

bool jbd_hooked(const struct ujbd *j)
{
	return __atomic_load_n(&j->j_tracer.fn, __ATOMIC_RELAXED) != NULL &&
	       !__atomic_load_n(&j->j_tracer.commits_only, __ATOMIC_RELAXED);
}

static bool aborted(const struct ujbd *j)
{
	return __atomic_load_n(&j->j_aborted, __ATOMIC_ACQUIRE);
}

/* Withdraw slot s's announcement; wake a commit waiting for the drain. */
static void slot_leave(struct ujbd *j, struct jbd_slot *s)
{
	ASSERT(!s->s_busy && __atomic_load_n(&s->s_txn, __ATOMIC_RELAXED)); /* announced, no handle */
	__atomic_store_n(&s->s_txn, NULL, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&j->j_drain_waiting, __ATOMIC_SEQ_CST)) {
		rt_mutex_lock(&j->j_state_lock);
		rt_cond_broadcast(&j->j_wait_updates);
		rt_mutex_unlock(&j->j_state_lock);
	}
}

/* Reserve credits for slot s in t, which it holds: what its pool lacks
 * for nblocks plus a chunk for the handles to come, or just what it lacks. 0, or -EAGAIN when t is
 * locked, full or the log is short (the locked path waits for those). */
static int slot_refill(struct ujbd *j, struct jbd_slot *s, struct jbd_txn *t,
		       uint32_t nblocks)
{
	uint32_t need = nblocks - s->s_pool, want = need + j->j_pool_chunk;
	int rc = 0;

	ASSERT(s->s_pool < nblocks && s->s_pool_seq == t->t_seq);

	rt_mutex_lock(&j->j_state_lock);
	/* announced: t cannot be drained past this slot, so it still runs */
	ASSERT(__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED) == t);
	ASSERT(t == j->j_running && t->t_state <= T_LOCKED);
	if ((j->j_flags & JBD_F_ABORTED) || t->t_state != T_RUNNING)
		rc = -EAGAIN;
	if (!rc && (t->t_outstanding + want > j->j_max_txn || !__jbd_space_for(j, want)))
		want = need;
	if (!rc && (t->t_outstanding + want > j->j_max_txn || !__jbd_space_for(j, want)))
		rc = -EAGAIN;
	if (!rc) {
		t->t_outstanding += want;
		s->s_pool += want;
		ASSERT(t->t_outstanding <= j->j_max_txn && s->s_pool >= nblocks);
	}
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

/* Start the thread's slot handle in the open transaction: 0, or -EAGAIN
 * (take the locked path). */
int jbd_slot_start(struct ujbd *j, struct jbd_slot *s, uint32_t nblocks,
		   struct ujbd_handle **out)
{
	struct jbd_txn *t = __atomic_load_n(&j->j_open, __ATOMIC_ACQUIRE);
	struct ujbd_handle *h = &s->s_handle;

	ASSERT(nblocks <= j->j_max_txn); /* ujbd_start said -UJBD_ETOOBIG */
	if (!t || s->s_busy || jbd_hooked(j))
		return -EAGAIN;
	ASSERT(!__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED)); /* nothing announced yet */
	__atomic_store_n(&s->s_txn, t, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&j->j_open, __ATOMIC_SEQ_CST) != t || aborted(j)) {
		slot_leave(j, s);
		return -EAGAIN;
	}
	/* From here t cannot be drained past this slot until stop. */
	if (s->s_pool_seq != t->t_seq) {
		s->s_pool_seq = t->t_seq; /* the old pool went with its commit */
		s->s_pool = 0;
	}
	if (s->s_pool < nblocks && slot_refill(j, s, t, nblocks)) {
		slot_leave(j, s);
		return -EAGAIN;
	}
	ASSERT(s->s_pool >= nblocks);
	s->s_pool -= nblocks;
	if (s->s_cnt_seq != t->t_seq) {
		s->s_cnt_seq = t->t_seq;
		s->s_cnt = 0;
	}
	s->s_cnt++;
	s->s_busy = true;
	memset(h, 0, sizeof(*h));
	h->h_journal = j;
	h->h_transaction = t;
	h->h_buffer_credits = h->h_requested = nblocks;
	h->h_seq = (uint64_t)s->s_id << 40 | ++s->s_nseq;
	h->h_slot = s;
	ASSERT(__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED) == t);
	JBD_TRACE(&j->j_tracer, jbd2_handle_start, t->t_tid, 0, 0, nblocks, 0, 0, 0);
	*out = h;
	return 0;
}

/* Unused credits of a handle of slot s back to its pool; beyond the
 * chunk back to t (a big handle's: parked in the pool they would make t
 * look full). j_state_lock held. */
void __jbd_slot_pool_return(struct ujbd *j, struct jbd_slot *s, struct jbd_txn *t)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(s->s_pool > j->j_pool_chunk && s->s_pool_seq == t->t_seq);
	ASSERT(t->t_outstanding >= s->s_pool - j->j_pool_chunk);
	/* still announced: t has not been drained, its count is live */
	ASSERT(__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED) == t && t == j->j_running);
	t->t_outstanding -= s->s_pool - j->j_pool_chunk;
	s->s_pool = j->j_pool_chunk;
}

/* Stop a slot handle that is not sync: credits back to the pool, the
 * announcement withdrawn. */
int jbd_slot_stop(struct ujbd *j, struct ujbd_handle *h)
{
	struct jbd_slot *s = h->h_slot;
	struct jbd_txn *t = h->h_transaction;
	int rc = h->h_err;

	ASSERT(s && s->s_busy && h == &s->s_handle);
	ASSERT(__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED) == t);
	JBD_TRACE(&j->j_tracer, jbd2_handle_stats, t->t_tid, 0, 0, 0, 0, h->h_requested,
		  h->h_dirtied);
	s->s_pool += h->h_buffer_credits;
	if (s->s_pool > j->j_pool_chunk) { /* only big handles take the lock */
		rt_mutex_lock(&j->j_state_lock);
		__jbd_slot_pool_return(j, s, t); /* t is still ours: announced */
		rt_mutex_unlock(&j->j_state_lock);
	}
	s->s_busy = false;
	slot_leave(j, s);
	if (!rc && aborted(j))
		rc = jbd_abort_told(j, jbd_abort_errno(j));
	return rc;
}

/* Write access to a buffer this slot attached to the transaction earlier:
 * 0, or -EAGAIN (the locked path decides). */
int jbd_slot_access(struct ujbd_handle *h, uint64_t block, bool create,
		    struct ujbd_buf **out)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	struct jbd_jh *jh = jbd_memo_find(h->h_slot, t->t_seq, block);
	struct ujbd_buf *b;

	/* create access zeroes the block under the lock (ujbd_read copies
	 * under it): the locked path */
	if (create || !jh || JH_GET(jh->b_transaction) != t || JH_GET(jh->b_forget) ||
	    aborted(j) || jbd_hooked(j))
		return -EAGAIN;
	b = jh->jh_buf;
	ASSERT(b->b_blocknr == block && h->h_slot->s_busy);
	buf_hold(b);
	*out = b;
	return 0;
}

/* dirty_metadata of such a buffer: 0, or -EAGAIN. */
int jbd_slot_dirty(struct ujbd_handle *h, struct ujbd_buf *b)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	struct jbd_jh *jh = jbd_memo_find(h->h_slot, t->t_seq, b->b_blocknr);

	if (!jh || jh->jh_buf != b || JH_GET(jh->b_transaction) != t ||
	    JH_GET(jh->b_forget) || aborted(j) || jbd_hooked(j))
		return -EAGAIN;
	ASSERT(h->h_slot->s_busy && jh->jh_buf->b_jh == jh);
	if (!JH_GET(jh->b_dirty)) {
		JH_SET(jh->b_dirty, true);
		h->h_dirtied++;
	}
	return 0;
}

/*
 * transaction.c: handles and what they do to buffers.
 *
 * The one idea: a handle reserves credits in the running transaction when
 * it starts (waiting while that transaction is locked for commit, full, or
 * the log has no room for its worst case), and each buffer it touches joins
 * the transaction once, for one credit. A buffer the committing transaction
 * still has to log is frozen first (a copy of the committed bytes), so the
 * running transaction may change the live buffer at once: nobody waits for
 * the commit's I/O (the wait the kernel calls a frozen-buffer stall is the
 * time spent copying, reported as UJBD_LAT_WAIT_FROZEN). That is the
 * `copy` policy; under `wait-io` (jbd2's) a buffer whose journal copy is
 * in flight (b_shadow) is waited for instead, until its log write ends
 * (UJBD_LAT_WAIT_SHADOW); one not yet copied is still frozen. The slot
 * path never meets a shadowed buffer (it only reuses buffers of its own
 * running transaction), so it needs no wait of its own.
 *
 * Handles do not nest: a thread holding a handle must not start another
 * (it could wait for log space that only its own open handle keeps from
 * being committed). Each thread keeps a list of the handles it holds, one
 * per journal, so that a nested start, or an fsync or checkpoint that
 * would wait for the caller's own transaction, is refused with -EDEADLK
 * instead of hanging, and a handle stopped twice is caught.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

/* ---- the handles a thread holds ------------------------------------------ */

/* One list per thread, through h_held_next; at most one entry per journal,
 * so it is as long as the journals the thread works in at once. */
static _Thread_local struct ujbd_handle *held_handles;

static struct ujbd_handle *held_find(const struct ujbd *j)
{
	struct ujbd_handle *h = held_handles;

	while (h && h->h_journal != j)
		h = h->h_held_next;
	ASSERT(!h || h->h_transaction); /* a held handle has its transaction */
	return h;
}

bool jbd_thread_holds(const struct ujbd *j, ujbd_tid_t *tid)
{
	struct ujbd_handle *h = held_find(j);

	if (h && tid)
		*tid = h->h_transaction->t_tid;
	return h != NULL;
}

/* In any journal: an fsync of such a thread must not commit on it
 * (caller_commit), the commit could wait for its own handle. */
bool jbd_thread_holds_handle(void)
{
	return held_handles != NULL;
}

static void held_push(struct ujbd_handle *h)
{
	ASSERT(held_find(h->h_journal) == NULL); /* ujbd_start said -EDEADLK */
	h->h_held_next = held_handles;
	held_handles = h;
}

/* A handle leaves its thread's list. Misuse that cannot be reported as an
 * error is an assertion: a handle stopped twice, or by another thread. */
static void held_drop(struct ujbd_handle *h)
{
	struct ujbd_handle **pp = &held_handles;

	while (*pp && *pp != h)
		pp = &(*pp)->h_held_next;
	ASSERT(*pp == h && "handle stopped twice, or not by its thread");
	*pp = h->h_held_next;
	h->h_held_next = NULL;
}

/* ---- starting a handle ---------------------------------------------------- */

/* Stopped handles are kept for reuse (up to JBD_HANDLES_CACHED): the CPU
 * path should not pay malloc and free per handle. Lock held. */
static struct ujbd_handle *__handle_pop(struct ujbd *j)
{
	struct ujbd_handle *h = j->j_free_handles;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT((h == NULL) == (j->j_nfree_handles == 0));
	if (h) {
		j->j_free_handles = h->h_next_free;
		j->j_nfree_handles--;
	}
	return h;
}

static void __handle_push(struct ujbd *j, struct ujbd_handle *h)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(h->h_slot == NULL); /* a slot's handle lives in its slot */
	if (j->j_nfree_handles >= JBD_HANDLES_CACHED) {
		free(h);
		return;
	}
	h->h_next_free = j->j_free_handles;
	j->j_free_handles = h;
	j->j_nfree_handles++;
}

static void __txn_start(struct ujbd *j, struct jbd_txn *t)
{
	uint64_t now = rt_now_ns();

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(j->j_running == NULL && t != j->j_committing);
	/* j_open is the running transaction or NULL: nothing admits slots */
	ASSERT(__atomic_load_n(&j->j_open, __ATOMIC_RELAXED) == NULL);
	memset(t, 0, sizeof(*t));
	jbd_txn_lists_init(t);
	t->t_tid = j->j_transaction_sequence++;
	/* tids in commit order: the committing one, if any, is just before */
	ASSERT(!j->j_committing || (ujbd_tid_t)(j->j_committing->t_tid + 1) == t->t_tid);
	t->t_seq = ++j->j_txn_seq;
	t->t_state = T_RUNNING;
	t->t_start_ns = now;
	t->t_expires_ns = now + j->j_opts.commit_interval_ns;
	t->t_revoke = __jbd_revoke_table_get(j);
	ASSERT(t->t_revoke && t->t_revoke->rt_n == 0);
	j->j_running = t;
	__atomic_store_n(&j->j_open, t, __ATOMIC_SEQ_CST);
	/* kjournald sleeps without a deadline while nothing runs: give it
	 * this transaction's (a timer re-arm, not a counted wakeup). */
	if (j->j_kj_sleeping && !j->j_kj_timed) {
		j->j_kj_kicked = true;
		rt_cond_signal(&j->j_wait_commit);
	}
}

/* Wait for log space: checkpoint, or commit what holds the space. */
/*
 * inherit: raise the checkpoint pass in flight (its tag, j_ckpt_tag) to
 * prio in the data queue, with the lock dropped (the boost may complete
 * bios here, whose end_io takes j_state_lock). True: the lock was dropped
 * (always, once called).
 */
static bool __boost_ckpt(struct ujbd *j, uint16_t prio)
{
	uint64_t tag = j->j_ckpt_tag;

	ASSERT(rt_mutex_held(&j->j_state_lock) && tag);
	j->j_ckpt_tag_prio = prio;
	rt_mutex_unlock(&j->j_state_lock);
	int raised = blk_boost(j->j_dq, tag, prio);
	rt_mutex_lock(&j->j_state_lock);
	if (raised > 0)
		jbd_stats_inherit_boost(&j->j_stats);
	return true;
}

static void __wait_space(struct ujbd *j)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* the commit under way frees space (then its checkpoint); else the
	 * running transaction's, asked for below */
	if (__jbd_inherit(j, j->j_committing ? j->j_committing : j->j_running))
		return; /* the lock was dropped: the caller looks again */
	if (j->j_opts.commit_ioprio == UJBD_IOPRIO_INHERIT) {
		/* the checkpoint's writes go at our priority, the queued ones
		 * of a pass in flight raised */
		uint16_t prio = jbd_waiter_prio();

		if (!j->j_ckpt_prio || jbd_ioprio_higher(prio, j->j_ckpt_prio))
			__atomic_store_n(&j->j_ckpt_prio, prio, __ATOMIC_RELEASE);
		if (j->j_ckpt_tag &&
		    (!j->j_ckpt_tag_prio || jbd_ioprio_higher(prio, j->j_ckpt_tag_prio)) &&
		    __boost_ckpt(j, prio))
			return; /* the lock was dropped: the caller looks again */
	}
	j->j_space_waiters++;
	j->j_ckpt_want++;
	rt_cond_signal(&j->j_wait_checkpoint);
	/* With nothing to checkpoint, only a commit frees space. */
	if (rt_list_empty(&j->j_cp) && j->j_running && j->j_running->t_outstanding)
		__jbd_request_commit(j, j->j_running->t_tid);
	rt_cond_wait(&j->j_wait_space, &j->j_state_lock);
	ASSERT(j->j_space_waiters > 0);
	if (!--j->j_space_waiters)
		__atomic_store_n(&j->j_ckpt_prio, 0, __ATOMIC_RELEASE);
}

bool __jbd_space_for(const struct ujbd *j, uint32_t more)
{
	uint32_t used = __jbd_log_used(j);
	const struct jbd_txn *t = j->j_running;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!t || t->t_outstanding <= j->j_max_txn);
	if (t)
		used += jbd_log_res(j, t->t_outstanding + more) - jbd_log_res(j, t->t_outstanding);
	else
		used += jbd_log_res(j, more) + j->j_slack;
	return used <= jbd_log_size(j);
}

/* One admission attempt: 0 admitted, 1 waited (try again), <0 error. */
/*
 * A transaction's revoke table is fixed (its log space, j_slack revoke
 * blocks, is reserved at open). Past three quarters of it the transaction
 * counts as full: its commit is asked for and new handles wait for the
 * next one, so the quarter left is for the handles already running (a
 * handle that revokes more than that may get -UJBD_ETOOBIG).
 */
static bool __revokes_full(const struct ujbd *j, const struct jbd_txn *t)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t == j->j_running && t->t_revoke); /* only it takes revokes */
	return t->t_revoke->rt_n >= t->t_revoke->rt_cap - t->t_revoke->rt_cap / 4;
}

static int __start_try(struct ujbd *j, uint32_t nblocks, struct jbd_txn **pre,
		       uint64_t *space_ns, uint64_t *wait_ns)
{
	struct jbd_txn *t = j->j_running;
	uint64_t t0;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(nblocks <= j->j_max_txn); /* ujbd_start said -UJBD_ETOOBIG */
	if (j->j_flags & JBD_F_ABORTED)
		return -EROFS;
	/* The clock is read only on the slow paths: it is not free. */
	if (t && t->t_state == T_LOCKED) {
		if (__jbd_inherit(j, t))
			return 1; /* the lock was dropped: look again */
		t0 = rt_now_ns();
		rt_cond_wait(&j->j_wait_transaction_locked, &j->j_state_lock);
		*wait_ns += rt_now_ns() - t0;
		return 1;
	}
	if (t && (t->t_outstanding + nblocks > j->j_max_txn || __revokes_full(j, t))) {
		t0 = rt_now_ns();
		__jbd_request_commit(j, t->t_tid);
		(void)__jbd_inherit(j, t); /* not committing: lock kept */
		rt_cond_wait(&j->j_wait_transaction_locked, &j->j_state_lock);
		*wait_ns += rt_now_ns() - t0;
		return 1;
	}
	if (!__jbd_space_for(j, nblocks)) {
		t0 = rt_now_ns();
		__wait_space(j);
		*space_ns += rt_now_ns() - t0;
		return 1;
	}
	if (!t) {
		if (!*pre)
			return -ENOMEM; /* the caller allocates outside the lock */
		t = *pre;
		*pre = NULL;
		__txn_start(j, t);
	}
	ASSERT(t == j->j_running && t->t_state == T_RUNNING);
	t->t_updates++;
	t->t_outstanding += nblocks;
	t->t_handle_count++;
	ASSERT(t->t_outstanding <= j->j_max_txn);
	return 0;
}

static void start_account(struct ujbd *j, struct jbd_txn *t, uint64_t wait_ns,
			  uint64_t space_ns)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t == j->j_running && t->t_updates > 0); /* the handle just joined t */
	if (wait_ns) {
		if (wait_ns > t->t_max_wait_ns)
			t->t_max_wait_ns = wait_ns;
		jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_TRANSACTION, wait_ns);
	}
	if (space_ns) {
		jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_LOG_SPACE, space_ns);
		jbd_stats_log_space_wait(&j->j_stats, space_ns);
	}
}

/* ---- starting a handle, the locked path ------------------------------------ */

int ujbd_start(struct ujbd *j, unsigned nblocks, struct ujbd_handle **out)
{
	struct ujbd_handle *h;
	struct jbd_slot *s;
	struct jbd_txn *pre = NULL;
	uint64_t wait_ns = 0, space_ns = 0;
	int rc;

	*out = NULL;
	if (nblocks > j->j_max_txn)
		return -UJBD_ETOOBIG;
	if (held_find(j))
		return -EDEADLK; /* handles do not nest */
	s = jbd_slot_self(j);
	if (s && jbd_slot_start(j, s, nblocks, out) == 0) {
		held_push(*out);
		return 0;
	}
	rt_mutex_lock(&j->j_state_lock);
	h = __handle_pop(j);
	if (!h) {
		rt_mutex_unlock(&j->j_state_lock);
		h = malloc(sizeof(*h));
		if (!h)
			return -ENOMEM;
		rt_mutex_lock(&j->j_state_lock);
	}
	memset(h, 0, sizeof(*h));
	for (;;) {
		rc = __start_try(j, nblocks, &pre, &space_ns, &wait_ns);
		if (rc == -ENOMEM && !pre) {
			rt_mutex_unlock(&j->j_state_lock);
			pre = malloc(sizeof(*pre));
			rt_mutex_lock(&j->j_state_lock);
			if (pre)
				continue;
		}
		if (rc <= 0)
			break;
	}
	if (rc == 0) {
		ASSERT(j->j_running && j->j_running->t_updates > 0);
		h->h_journal = j;
		h->h_transaction = j->j_running;
		h->h_buffer_credits = h->h_requested = nblocks;
		h->h_seq = ++j->j_handle_seq;
		/* Only for jbd2_handle_stats' interval: the clock costs ~10% of
		 * the CPU path, so it is read only while a hook listens. */
		h->h_start_ns = jbd_hooked(j) ? rt_now_ns() : 0;
		start_account(j, j->j_running, wait_ns, space_ns);
		JBD_TRACE(&j->j_tracer, jbd2_handle_start, j->j_running->t_tid, 0, 0, nblocks,
			  0, 0, 0);
	} else {
		__handle_push(j, h);
		rc = __jbd_abort_told(j, rc);
	}
	/* pre, if unused, is nobody's transaction: it is freed below */
	ASSERT(!pre || (pre != j->j_running && pre != j->j_committing));
	rt_mutex_unlock(&j->j_state_lock);
	free(pre);
	if (rc)
		return rc;
	held_push(h);
	*out = h;
	return 0;
}

int ujbd_extend(struct ujbd_handle *h, unsigned nblocks)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	int rc = 0;

	if ((uint64_t)h->h_requested + nblocks > j->j_max_txn) /* no wrap */
		return -UJBD_ETOOBIG;
	rt_mutex_lock(&j->j_state_lock);
	if (j->j_flags & JBD_F_ABORTED)
		rc = -EROFS;
	else if (t->t_state != T_RUNNING || t->t_outstanding + nblocks > j->j_max_txn ||
		 !__jbd_space_for(j, nblocks))
		rc = -EAGAIN;
	if (!rc) {
		ASSERT(h->h_slot || t->t_updates > 0);
		t->t_outstanding += nblocks;
		h->h_buffer_credits += nblocks;
		h->h_requested += nblocks;
		ASSERT(t->t_outstanding <= j->j_max_txn);
	}
	JBD_TRACE(&j->j_tracer, jbd2_handle_extend, t->t_tid, 0, 0, h->h_buffer_credits,
		  nblocks, 0, 0);
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

void ujbd_handle_set_sync(struct ujbd_handle *h, bool sync)
{
	h->h_sync = sync;
}

ujbd_tid_t ujbd_handle_tid(const struct ujbd_handle *h)
{
	ASSERT(h->h_transaction); /* a handle is in its transaction until stopped */
	return h->h_transaction->t_tid;
}

/* ---- stopping a handle ------------------------------------------------- */

/*
 * Group commit, as jbd2 does it: a sync handle whose thread was not the
 * last sync writer sleeps, while still holding its handle (so the
 * transaction cannot be locked meanwhile), for about one average commit
 * time clamped to [min_batch_time, max_batch_time], if the transaction is
 * younger than that: other threads' handles join the same commit instead
 * of each paying for its own. One thread issuing a stream of sync writes
 * never waits: nobody else is going to join.
 */
static void stop_batch(struct ujbd *j, struct ujbd_handle *h)
{
	int pid = rt_self_pid();
	uint64_t commit_ns, trans_ns;
	bool last;

	ASSERT(!rt_mutex_held(&j->j_state_lock)); /* it may sleep */
	ASSERT(h->h_held_next == NULL);          /* off its thread's list */
	if (!h->h_sync || !j->j_opts.max_batch_time_ns)
		return;
	rt_mutex_lock(&j->j_state_lock);
	last = j->j_last_sync_writer == pid;
	j->j_last_sync_writer = pid;
	rt_mutex_unlock(&j->j_state_lock);
	if (last)
		return;
	commit_ns = jbd_stats_avg_commit_ns(&j->j_stats);
	if (commit_ns < j->j_opts.min_batch_time_ns)
		commit_ns = j->j_opts.min_batch_time_ns;
	if (commit_ns > j->j_opts.max_batch_time_ns)
		commit_ns = j->j_opts.max_batch_time_ns;
	trans_ns = rt_now_ns() - h->h_transaction->t_start_ns;
	if (trans_ns < commit_ns)
		rt_sleep_ns(commit_ns);
}

int ujbd_stop(struct ujbd_handle *h)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	struct jbd_slot *s = h->h_slot;
	ujbd_tid_t tid = t->t_tid;
	int rc = h->h_err, wrc;
	bool sync = h->h_sync;
	uint64_t t0 = sync ? rt_now_ns() : 0, now;

	held_drop(h);
	if (s && !sync && !jbd_hooked(j))
		return jbd_slot_stop(j, h);
	stop_batch(j, h);
	rt_mutex_lock(&j->j_state_lock);
	now = h->h_start_ns ? rt_now_ns() : 0;
	ASSERT(t->t_state == T_RUNNING || t->t_state == T_LOCKED);
	ASSERT(t == j->j_running); /* the commit waits for this handle */
	if (s) {
		ASSERT(s->s_busy && h == &s->s_handle);
		ASSERT(__atomic_load_n(&s->s_txn, __ATOMIC_RELAXED) == t); /* announced */
		s->s_pool += h->h_buffer_credits;
		if (s->s_pool > j->j_pool_chunk)
			__jbd_slot_pool_return(j, s, t);
		__atomic_store_n(&s->s_txn, NULL, __ATOMIC_SEQ_CST);
		rt_cond_broadcast(&j->j_wait_updates);
	} else {
		ASSERT(t->t_updates > 0 && t->t_outstanding >= h->h_buffer_credits);
		t->t_outstanding -= h->h_buffer_credits;
		if (--t->t_updates == 0)
			rt_cond_broadcast(&j->j_wait_updates);
	}
	if (h->h_sync)
		t->t_synchronous_commit = true;
	if (!rc && (j->j_flags & JBD_F_ABORTED))
		rc = jbd_abort_errno(j);
	JBD_TRACE(&j->j_tracer, jbd2_handle_stats, tid, 0, 0, now - h->h_start_ns, h->h_sync,
		  h->h_requested, h->h_dirtied);
	if (s)
		s->s_busy = false;
	else
		__handle_push(j, h);
	if (sync) {
		(void)__jbd_fsync_commit(j, tid);
		wrc = __jbd_wait_commit(j, tid);
		if (!rc)
			rc = wrc;
	}
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	if (sync) /* what the caller waited, batch window included */
		jbd_stats_fsync(&j->j_stats, rt_now_ns() - t0);
	return rc;
}

/* ---- buffers ------------------------------------------------------------ */

/* Is b journaled by t (its head on t, now or as the next transaction)? */
static bool __buf_in(const struct ujbd_buf *b, const struct jbd_txn *t)
{
	const struct jbd_jh *jh = b->b_jh;

	return jh && (jh->b_transaction == t || jh->b_next_transaction == t);
}

static int check_block(const struct ujbd *j, uint64_t block)
{
	if (block >= j->j_data_blocks)
		return -EINVAL;
	if (block > UINT32_MAX && !j->j_jnl.j_fmt.f_64bit)
		return -EINVAL;
	/* a block of the journal itself is never data: logged or written
	 * home, it would overwrite the log, and the next recovery would
	 * refuse the whole journal */
	if (block >= j->j_in_jnl_lo && block < j->j_in_jnl_hi &&
	    jbd_loc_on_journal(&j->j_jnl.j_loc, block))
		return -UJBD_EINJOURNAL;
	return 0;
}

/* Make a frozen copy of what the committing transaction will log. */
static int __freeze(struct ujbd *j, struct jbd_jh *jh)
{
	uint64_t t0 = rt_now_ns();

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!jh->b_frozen_data && jh->b_transaction == j->j_committing);
	ASSERT(jh->b_dirty && !jh->b_logged); /* what the commit will still log */
	jh->b_frozen_data = malloc(j->j_blocksize);
	if (!jh->b_frozen_data)
		return -ENOMEM;
	memcpy(jh->b_frozen_data, jh->jh_buf->b_data, j->j_blocksize);
	jh->jh_buf->b_jstate |= BUF_J_FROZEN;
	jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_FROZEN, rt_now_ns() - t0);
	return 0;
}

/*
 * wait-io: the journal copy of jh (b's head, of the committing
 * transaction) is in flight; wait until its log write ends (or the
 * journal stops), raising the commit's priority under inherit. Returns 1:
 * the caller starts over (jh may be gone, or another handle may have taken
 * the buffer for the running transaction meanwhile).
 */
static int __wait_shadow(struct ujbd *j, struct ujbd_buf *b, struct jbd_jh *jh)
{
	uint64_t t0 = rt_now_ns();

	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* only wait-io shadows: copy never waits for a log write */
	ASSERT(j->j_opts.under_commit != UJBD_UNDER_COMMIT_COPY && b->b_jh == jh);
	/* shadowed: the committing transaction copied it into the log */
	ASSERT(jh->b_shadow && jh->b_logged && jh->b_transaction == j->j_committing);
	if (__jbd_inherit(j, jh->b_transaction))
		return 1;
	while (b->b_jh == jh && jh->b_shadow && !(j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)))
		rt_cond_wait(&j->j_wait_shadow, &j->j_state_lock);
	jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_SHADOW, rt_now_ns() - t0);
	return 1;
}

/*
 * buffer_lock: a home write of b is in flight (jbd's lock_buffer at the
 * top of do_get_write_access); wait until it completes (or the journal
 * stops), counted by who wrote it. Under inherit the waiter first raises
 * that write to its own priority if it is still queued (blk_boost on its
 * tag, with the lock dropped: the boost may complete bios here, whose
 * end_io takes j_state_lock). Returns 1: the caller starts over.
 */
static int __wait_home_io(struct ujbd *j, struct ujbd_buf *b, struct jbd_jh *jh)
{
	enum ujbd_lat_cause cause = jh->b_home_io == JBD_HOME_WRITEBACK ? UJBD_LAT_LOCK_WRITEBACK
									: UJBD_LAT_LOCK_CHECKPOINT;
	uint64_t t0 = rt_now_ns(), waited;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(j->j_opts.buffer_lock && jh->b_home_io);
	if (j->j_opts.commit_ioprio == UJBD_IOPRIO_INHERIT && j->j_ckpt_tag) {
		uint16_t prio = jbd_waiter_prio();

		if (!j->j_ckpt_tag_prio || jbd_ioprio_higher(prio, j->j_ckpt_tag_prio))
			(void)__boost_ckpt(j, prio);
	}
	while (b->b_jh == jh && jh->b_home_io && !(j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)))
		rt_cond_wait(&j->j_wait_ckpt_io, &j->j_state_lock);
	waited = rt_now_ns() - t0;
	jbd_stats_lat(&j->j_stats, cause, waited);
	/* The kernel's report of a buffer locked for over HZ/10. */
	if (waited > 100 * RT_NS_PER_MS)
		JBD_TRACE(&j->j_tracer, jbd2_lock_buffer_stall,
			  j->j_running ? j->j_running->t_tid : 0, waited, 0, 0, 0, 0, 0);
	return 1;
}

/* 0, 1: waited (start over), or -errno. */
static int __write_access(struct ujbd *j, struct ujbd_handle *h, struct ujbd_buf *b)
{
	struct jbd_txn *t = h->h_transaction;
	struct jbd_jh *jh;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t == j->j_running || h->h_slot); /* handles hold it running */
	if (j->j_flags & JBD_F_ABORTED)
		return -EROFS;
	jh = __jbd_jh_get(j, b);
	if (!jh)
		return -ENOMEM;
	if (jh->b_home_io)
		return __wait_home_io(j, b, jh);
	if (jh->b_transaction == t || jh->b_next_transaction == t) {
		/* Forgotten (or revoked) earlier in this transaction: using it
		 * again takes a credit and cancels the revoke. */
		bool own = jh->b_transaction == t;
		bool *fg = own ? &jh->b_forget : &jh->b_next_forget;
		if (!*fg)
			return 0;
		if (h->h_buffer_credits == 0)
			return -UJBD_ENOCREDIT;
		/* not dirty until dirtied again (a slot's dirty may have
		 * landed beside the forget) */
		JH_SET(*(own ? &jh->b_dirty : &jh->b_next_dirty), false);
		JH_SET(*fg, false);
		jbd_revoke_cancel(t->t_revoke, b->b_blocknr);
		h->h_buffer_credits--;
		jh->b_join_seq = h->h_seq;
		return 0;
	}
	if (h->h_buffer_credits == 0)
		return -UJBD_ENOCREDIT;
	jbd_revoke_cancel(t->t_revoke, b->b_blocknr);
	if (!jh->b_transaction) {
		JH_SET(jh->b_dirty, false);
		JH_SET(jh->b_forget, false);
		JH_SET(jh->b_transaction, t);
		__jbd_list_add_t(t, jh);
	} else {
		ASSERT(jh->b_transaction == j->j_committing && !jh->b_next_transaction);
		if (jh->b_shadow)
			return __wait_shadow(j, b, jh);
		if (jh->b_dirty && !jh->b_logged && !jh->b_frozen_data) {
			rc = __freeze(j, jh);
			if (rc)
				return rc;
		}
		jh->b_next_transaction = t;
		jh->b_next_dirty = jh->b_next_forget = false;
	}
	b->b_jstate |= BUF_J_JOURNALED;
	h->h_buffer_credits--;
	jh->b_join_seq = h->h_seq;
	/* a head is on a t_buffers iff it has a transaction (hashed: not retired) */
	ASSERT(!jh->b_transaction == rt_list_empty(&jh->b_tlink));
	ASSERT(jh->b_transaction == t || jh->b_next_transaction == t);
	return 0;
}

/* What a write access does with the block's old contents. */
enum access_mode {
	ACC_READ,      /* get_write_access: read it if not cached */
	ACC_CREATE,    /* get_create_access: zero it */
	ACC_OVERWRITE, /* write_atomic: not read, left as cached (a block not
			* cached is zero-filled by the cache); the caller
			* overwrites all of it before dirtying */
};

static int get_access(struct ujbd_handle *h, uint64_t block, enum access_mode mode,
		      struct ujbd_buf **out)
{
	bool create = mode == ACC_CREATE;
	struct ujbd *j = h->h_journal;
	struct ujbd_buf *b, *put = NULL;
	struct jbd_jh *jh;
	uint64_t waited = 0;
	int rc;

	*out = NULL;
	if (h->h_slot && jbd_slot_access(h, block, create, out) == 0)
		return 0;
	rc = check_block(j, block);
	if (rc)
		return rc;
	/* A block the journal tracks: its head holds the (up to date)
	 * buffer, so one more reference needs no cache lookup. */
	rt_mutex_lock(&j->j_state_lock);
	jh = __jbd_jh_find(j, block);
	if (jh) {
		b = jh->jh_buf;
		buf_hold(b);
	} else {
		rt_mutex_unlock(&j->j_state_lock);
		rc = buf_get_waited(j->j_cache, block, mode == ACC_READ ? BUF_GET_READ : BUF_GET_ZERO,
				    &b, &waited);
		if (rc)
			return rc;
		rt_mutex_lock(&j->j_state_lock);
	}
	/* buffer_lock: the block's read (ours, or another thread's) held its
	 * lock while we waited */
	if (waited && j->j_opts.buffer_lock)
		jbd_stats_lat(&j->j_stats, UJBD_LAT_LOCK_READ, waited);
	while ((rc = __write_access(j, h, b)) == 1)
		;
	/* write access: b's head is on the handle's transaction, now or next */
	ASSERT(rc || __buf_in(b, h->h_transaction));
	if (!rc && create)
		memset(b->b_data, 0, j->j_blocksize);
	if (!rc && h->h_slot)
		jbd_memo_put(h->h_slot, h->h_transaction->t_seq, block, b->b_jh);
	/* The kernel's report of a write access stuck for over HZ/10 (here:
	 * waiting for the block's read, ours or another thread's). */
	if (waited > 100 * RT_NS_PER_MS)
		JBD_TRACE(&j->j_tracer, jbd2_lock_buffer_stall, h->h_transaction->t_tid, waited,
			  0, 0, 0, 0, 0);
	if (rc && b->b_jh)
		__jbd_jh_maybe_free(j, b->b_jh, &put);
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	buf_put(put);
	if (rc) {
		if (!h->h_err && rc != -EROFS)
			h->h_err = rc;
		buf_put(b);
		return rc;
	}
	*out = b;
	return 0;
}

int ujbd_get_write_access(struct ujbd_handle *h, uint64_t block, struct ujbd_buf **out)
{
	return get_access(h, block, ACC_READ, out);
}

int ujbd_get_create_access(struct ujbd_handle *h, uint64_t block, struct ujbd_buf **out)
{
	return get_access(h, block, ACC_CREATE, out);
}

int ujbd_dirty_metadata(struct ujbd_handle *h, struct ujbd_buf *b)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	struct jbd_jh *jh;
	int rc = 0;

	if (h->h_slot && jbd_slot_dirty(h, b) == 0)
		return 0;
	rt_mutex_lock(&j->j_state_lock);
	jh = b->b_jh;
	if (j->j_flags & JBD_F_ABORTED) {
		rc = -EROFS;
	} else if (jh && jh->b_transaction == t && !jh->b_forget) {
		/* a slot handle may set it meanwhile, without the lock */
		if (!JH_GET(jh->b_dirty))
			h->h_dirtied++;
		JH_SET(jh->b_dirty, true);
	} else if (jh && jh->b_next_transaction == t && !jh->b_next_forget) {
		if (!jh->b_next_dirty)
			h->h_dirtied++;
		jh->b_next_dirty = true;
	} else {
		rc = -EINVAL; /* no write access in this transaction */
	}
	ASSERT(rc || jh->jh_buf == b);
	ASSERT(rc || !rt_list_empty(&jh->b_tlink)); /* on its transaction's t_buffers */
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

/*
 * A buffer only t had, forgotten: it leaves t and the journal, and its
 * buffer goes back to the cache, but the head itself stays allocated, on
 * t_retired, until t's commit frees it: a slot's memo may still point at
 * it (slot.c), and finds it no longer on t.
 */
static void __retire(struct ujbd *j, struct jbd_txn *t, struct jbd_jh *jh)
{
	struct ujbd_buf *put = NULL;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(jh->b_transaction == t && t->t_nr_buffers > 0);
	ASSERT(!jh->b_cp_transaction && !jh->b_data_transaction && !jh->b_ckpt_busy);
	__jbd_list_del_t(t, jh);
	JH_SET(jh->b_transaction, NULL);
	__jbd_jh_unhash(j, jh, &put);
	rt_list_add_head(&t->t_retired, &jh->b_tlink);
	buf_put(put);
}

/*
 * The transaction frees the buffer: it must not be logged, and an older
 * committed copy must not be written back any more once this transaction
 * commits (until then it still may: the free may never happen). A buffer
 * only this transaction had gets its credit back and is retired (it
 * leaves the journal); one with a committed copy or data stays on the
 * transaction, marked, and the commit drops it.
 */
static void __forget(struct ujbd *j, struct ujbd_handle *h, struct jbd_jh *jh)
{
	struct jbd_txn *t = h->h_transaction;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(jh->jh_buf->b_jh == jh);
	ASSERT(!jh->b_next_transaction || jh->b_transaction == j->j_committing);
	if (jh->b_transaction == t) {
		if (!jh->b_cp_transaction && !jh->b_forget)
			h->h_buffer_credits++;
		JH_SET(jh->b_dirty, false);
		JH_SET(jh->b_forget, true);
		if (!jh->b_cp_transaction && !jh->b_data_transaction && !jh->b_data_next &&
		    !jh->b_ckpt_busy)
			__retire(j, t, jh);
	} else if (jh->b_next_transaction == t) {
		jh->b_next_dirty = false;
		jh->b_next_forget = true;
	} else if (!jh->b_transaction && jh->b_cp_transaction) {
		JH_SET(jh->b_dirty, false);
		JH_SET(jh->b_forget, true);
		JH_SET(jh->b_transaction, t);
		__jbd_list_add_t(t, jh);
	} else if (jh->b_transaction && jh->b_transaction == j->j_committing &&
		   !jh->b_next_transaction) {
		/* Its commit files it for checkpoint; this commit drops it. */
		jh->b_next_transaction = t;
		jh->b_next_dirty = false;
		jh->b_next_forget = true;
	}
	/* kept or retired: a head with a transaction is on its t_buffers */
	ASSERT(!jh->b_transaction || !rt_list_empty(&jh->b_tlink));
}

int ujbd_forget(struct ujbd_handle *h, struct ujbd_buf *b)
{
	struct ujbd *j = h->h_journal;
	int rc = 0;

	ASSERT(h->h_transaction && b);
	rt_mutex_lock(&j->j_state_lock);
	if (j->j_flags & JBD_F_ABORTED)
		rc = -EROFS;
	else if (b->b_jh)
		__forget(j, h, b->b_jh);
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

int ujbd_revoke(struct ujbd_handle *h, uint64_t block)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;
	struct ujbd_buf *b = NULL;
	struct jbd_jh *jh;
	int rc = check_block(j, block);

	if (rc)
		return rc;
	if (!jbd_sb_is_v2(&j->j_jnl.j_sb))
		return -EOPNOTSUPP; /* a v1 journal has no REVOKE feature */
	rt_mutex_lock(&j->j_state_lock);
	if (j->j_flags & JBD_F_ABORTED) {
		rc = -EROFS;
		goto out;
	}
	if (buf_get(j->j_cache, block, BUF_GET_PEEK, &b) == 0 && (jh = b->b_jh)) {
		bool here = jh->b_transaction == t ? !jh->b_forget
			    : jh->b_next_transaction == t && !jh->b_next_forget;
		/* This very handle journaled it: a caller bug (forget it
		 * instead). Another handle of the transaction did: the block
		 * is freed now, so its copy goes, as jbd2's revoke forgets. */
		if (here && jh->b_join_seq == h->h_seq) {
			rc = -EINVAL;
			goto out;
		}
		__forget(j, h, jh);
		/* forgotten: t no longer logs it (a retired head stays allocated) */
		ASSERT(jh->b_transaction != t || jh->b_forget);
	}
	rc = jbd_revoke_add(t->t_revoke, block);
	ASSERT(rc || jbd_revoke_has(t->t_revoke, block));
	if (!rc && __revokes_full(j, t)) {
		/* j_open is t or already closed: closing it closes only t */
		ASSERT(__atomic_load_n(&j->j_open, __ATOMIC_RELAXED) == t ||
		       __atomic_load_n(&j->j_open, __ATOMIC_RELAXED) == NULL);
		/* new handles, slot ones too, wait for the next transaction */
		__atomic_store_n(&j->j_open, NULL, __ATOMIC_SEQ_CST);
		__jbd_request_commit(j, t->t_tid);
	}
out:
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	buf_put(b);
	if (rc && rc != -EROFS && !h->h_err)
		h->h_err = rc;
	return rc;
}

/* ---- data blocks ------------------------------------------------------- */

/*
 * Where a data block goes (one flush per fsync: docs/runtime.md). jbd2 writes ordered data home before
 * the commit block, so the commit depends on blocks outside the journal and
 * needs a flush between them and the commit block: two flushes per fsync.
 * Under ordered_journal_bytes the first blocks of a transaction are
 * journaled instead (as ZFS's intent log copies writes below
 * zfs_immediate_write_sz into the log), so a small transaction depends on
 * nothing outside the journal, its blocks are checksummed there, and async
 * commit may write it with one flush. A transaction past the limit (or
 * short of a credit or log space) writes its data home, ordered, as jbd2
 * does; a block it writes home that has an older copy recovery could still
 * replay gets a revoke record first (jdata.c says why the index is needed
 * beside the journal heads).
 */
enum data_route {
	DR_LOGGED,   /* already on this transaction as a journaled buffer */
	DR_OURS,     /* already on this transaction's ordered data */
	DR_JOURNAL,  /* journal it (a new credit) */
	DR_HOME,     /* write it home, ordered (revoking older copies) */
};

static enum data_route __data_route(const struct ujbd *j, const struct jbd_txn *t,
				    const struct jbd_jh *jh)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t->t_state == T_RUNNING || t->t_state == T_LOCKED);
	if (!j->j_jdata_max)
		return DR_HOME; /* jbd2's way: no revoke either */
	if ((jh->b_transaction == t && !jh->b_forget) ||
	    (jh->b_next_transaction == t && !jh->b_next_forget))
		return DR_LOGGED;
	if (jh->b_data_transaction == t || jh->b_data_next == t)
		return DR_OURS;
	/* with a data hook the commit depends on the caller's data anyway:
	 * it cannot go async, journaling would only write twice */
	if (!t->t_data_home && t->t_nr_jdata < j->j_jdata_max && !j->j_data_fn)
		return DR_JOURNAL;
	return DR_HOME;
}

/* The committing transaction logs jh's current bytes and has not copied
 * them yet: keep them (a frozen copy) before they change. */
static int __data_keep_committed(struct ujbd *j, struct jbd_jh *jh)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!j->j_committing || jh->b_transaction != j->j_committing || !jh->b_dirty ||
	    jh->b_logged || jh->b_frozen_data)
		return 0;
	return __freeze(j, jh);
}

static int __data_join(struct ujbd *j, struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t == j->j_running);
	ASSERT(!jh->b_data_next || jh->b_data_transaction == j->j_committing);
	/* on a t_data iff its data transaction says so */
	ASSERT(!jh->b_data_transaction == rt_list_empty(&jh->b_dlink));
	if (jh->b_data_transaction == t || jh->b_data_next == t)
		return 0;
	if (!jh->b_data_transaction) {
		__jbd_list_add_d(t, jh);
		return 0;
	}
	/* The committing transaction still holds it: its commit writes the
	 * newest bytes anyway; this one joins after. */
	ASSERT(jh->b_data_transaction == j->j_committing);
	jh->b_data_next = t;
	return 0;
}

/* A journaled buffer of t (DR_LOGGED): the new bytes, dirty. */
static void __data_log(struct ujbd *j, struct ujbd_handle *h, struct jbd_jh *jh,
		       const void *data)
{
	struct jbd_txn *t = h->h_transaction;
	bool own = jh->b_transaction == t;

	ASSERT(rt_mutex_held(&j->j_state_lock)); /* buffer bytes change under it */
	ASSERT(own ? !jh->b_forget : jh->b_next_transaction == t && !jh->b_next_forget);
	memcpy(jh->jh_buf->b_data, data, j->j_blocksize);
	if (own) {
		if (!JH_GET(jh->b_dirty))
			h->h_dirtied++;
		JH_SET(jh->b_dirty, true); /* a slot handle may read it */
	} else {
		if (!jh->b_next_dirty)
			h->h_dirtied++;
		jh->b_next_dirty = true;
	}
	/* best effort: a buffer the caller journaled itself is its own */
	(void)jbd_jdata_note(&j->j_jdata, jh->jh_buf->b_blocknr, t->t_tid, j->j_tail_sequence);
}

/*
 * DR_JOURNAL: a credit of the transaction (not of the handle: its credits
 * are for what the caller journals), then write access as for metadata.
 * 0 done, 1 waited (again), -EAGAIN no room (the block goes home), -errno.
 * *credit: a credit this call added to the handle is still unused.
 */
static int __data_journal(struct ujbd *j, struct ujbd_handle *h, struct jbd_jh *jh,
			  const void *data, bool *credit)
{
	struct jbd_txn *t = h->h_transaction;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!*credit) {
		if (t->t_outstanding + 1 > j->j_max_txn || !__jbd_space_for(j, 1) ||
		    !jbd_jdata_note(&j->j_jdata, jh->jh_buf->b_blocknr, t->t_tid,
				    j->j_tail_sequence))
			return -EAGAIN;
		t->t_outstanding++;
		h->h_buffer_credits++;
		*credit = true;
	}
	rc = __write_access(j, h, jh->jh_buf);
	if (rc)
		return rc; /* 1: the lock was dropped, the route may change */
	*credit = false;
	/* the data path's join, not the caller's: ujbd_revoke of the block
	 * by this very handle forgets it, as it did with ordered data */
	jh->b_join_seq = 0;
	t->t_nr_jdata++;
	__data_log(j, h, jh, data);
	ASSERT(jh->b_transaction == t || jh->b_next_transaction == t);
	return 0;
}

/* May recovery replay an older copy of jh's block over its new home
 * contents? (jbd2's way does not ask: the caller revokes what it frees.) */
static bool __data_replayable(struct ujbd *j, const struct jbd_jh *jh)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!j->j_jdata_max)
		return false;
	return jh->b_transaction || jh->b_next_transaction || jh->b_cp_transaction ||
	       jbd_jdata_replayable(&j->j_jdata, jh->jh_buf->b_blocknr, j->j_tail_sequence);
}

/* DR_OURS, DR_HOME: written home by t's commit, ordered. */
static int __data_home(struct ujbd *j, struct ujbd_handle *h, struct jbd_jh *jh,
		       const void *data)
{
	struct jbd_txn *t = h->h_transaction;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* what may fail first, then what may not: a failed call changes
	 * nothing that matters (a frozen copy is the commit's anyway) */
	rc = __data_keep_committed(j, jh);
	if (rc)
		return rc;
	if (jh->b_data_transaction != t && jh->b_data_next != t && __data_replayable(j, jh)) {
		rc = jbd_revoke_add(t->t_revoke, jh->jh_buf->b_blocknr);
		if (rc)
			return rc;
		if (jh->b_transaction != t)
			__forget(j, h, jh); /* older copies need not go home */
	}
	memcpy(jh->jh_buf->b_data, data, j->j_blocksize);
	t->t_data_home = true;
	return __data_join(j, t, jh);
}

/* One attempt of ujbd_write_data: 0, 1 (waited: again), or -errno. */
static int __write_data(struct ujbd *j, struct ujbd_handle *h, struct ujbd_buf *b,
			const void *data, bool *credit)
{
	struct jbd_jh *jh;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(h->h_transaction == j->j_running || h->h_slot); /* handles hold it running */
	if (j->j_flags & JBD_F_ABORTED)
		return -EROFS;
	jh = __jbd_jh_get(j, b);
	if (!jh)
		return -ENOMEM;
	switch (__data_route(j, h->h_transaction, jh)) {
	case DR_LOGGED:
		__data_log(j, h, jh, data);
		return 0;
	case DR_JOURNAL:
		rc = __data_journal(j, h, jh, data, credit);
		if (rc != -EAGAIN)
			return rc;
		h->h_transaction->t_data_home = true; /* no room: home from now on */
		/* fall through */
	case DR_OURS:
	case DR_HOME:
		break;
	}
	return __data_home(j, h, jh, data);
}

static int write_data_journal(struct ujbd_handle *h, uint64_t block, const void *data)
{
	struct ujbd *j = h->h_journal;
	struct ujbd_buf *b;
	int rc = ujbd_get_create_access(h, block, &b); /* overwritten whole: no read */

	if (rc)
		return rc;
	rt_mutex_lock(&j->j_state_lock);
	memcpy(b->b_data, data, j->j_blocksize);
	rt_mutex_unlock(&j->j_state_lock);
	rc = ujbd_dirty_metadata(h, b);
	buf_put(b);
	return rc;
}

int ujbd_write_data(struct ujbd_handle *h, uint64_t block, const void *data)
{
	struct ujbd *j = h->h_journal;
	struct ujbd_buf *b, *put = NULL;
	bool credit = false;
	int rc;

	if (j->j_opts.data_mode == UJBD_DATA_JOURNAL)
		return write_data_journal(h, block, data);
	rc = check_block(j, block);
	if (!rc)
		rc = buf_get(j->j_cache, block, BUF_GET_ZERO, &b);
	if (rc)
		return rc;
	rt_mutex_lock(&j->j_state_lock);
	while ((rc = __write_data(j, h, b, data, &credit)) == 1)
		;
	ASSERT(rc || b->b_jh); /* written: the journal tracks the block */
	if (b->b_jh)
		__jbd_jh_maybe_free(j, b->b_jh, &put);
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	buf_put(put);
	buf_put(b);
	return rc;
}

int ujbd_read(struct ujbd *j, uint64_t block, void *out)
{
	struct ujbd_buf *b;
	int rc = check_block(j, block);

	if (!rc)
		rc = buf_get(j->j_cache, block, BUF_GET_READ, &b);
	if (rc)
		return rc;
	rt_mutex_lock(&j->j_state_lock);
	memcpy(out, b->b_data, j->j_blocksize);
	rt_mutex_unlock(&j->j_state_lock);
	buf_put(b);
	return 0;
}

/* ---- runs of blocks: past the cache where it holds nothing newer ----------- */

/* Blocks per bio of a run (1 MiB of 4 KiB blocks). */
#define RUN_MAX 256

static int run_check(const struct ujbd *j, uint64_t block, uint32_t n)
{
	int rc = 0;

	if (block >= j->j_data_blocks || n > j->j_data_blocks - block)
		return -EINVAL;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = check_block(j, block + i);
	return rc;
}

/* One bio of n blocks from or to the data device, waited for. */
static int run_io(struct ujbd *j, enum blk_op op, uint64_t block, uint32_t n, void *buf)
{
	uint32_t nsec = j->j_blocksize >> BLK_SECTOR_SHIFT;
	struct blk_bio bio;

	memset(&bio, 0, sizeof(bio));
	bio.b_op = op;
	bio.b_flags = BLK_SYNC | BLK_POLLED;
	bio.b_sector = block * nsec;
	bio.b_nr_sectors = n * nsec;
	bio.b_buf = buf;
	return blk_submit_wait(j->j_dq, &bio);
}

/*
 * May block go home now, past the cache, for t? Only where ujbd_write_data
 * would write it home (not journal it) and the journal knows nothing of
 * it: no buffer (every block the journal tracks, a transaction's, a
 * checkpoint's or ordered data, has one), no copy logged through the data
 * path that recovery could replay (that needs a revoke record).
 */
static bool __direct_ok(struct ujbd *j, const struct jbd_txn *t, uint64_t block)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (j->j_jdata_max) {
		if (!t->t_data_home && t->t_nr_jdata < j->j_jdata_max && !j->j_data_fn)
			return false; /* DR_JOURNAL */
		if (jbd_jdata_replayable(&j->j_jdata, block, j->j_tail_sequence))
			return false;
	}
	return !buf_cached(j->j_cache, block);
}

int ujbd_write_data_blocks(struct ujbd_handle *h, uint64_t block, uint32_t n,
			   const void *data)
{
	struct ujbd *j = h->h_journal;
	const uint8_t *p = data;
	uint32_t i = 0;
	int rc = run_check(j, block, n);

	if (rc)
		return rc;
	if (j->j_opts.data_mode == UJBD_DATA_JOURNAL) {
		for (; i < n && !rc; i++)
			rc = ujbd_write_data(h, block + i, p + (size_t)i * j->j_blocksize);
		return rc;
	}
	while (i < n && !rc) {
		struct jbd_txn *t;
		uint32_t k = 0;

		rt_mutex_lock(&j->j_state_lock);
		t = h->h_transaction;
		if (j->j_flags & JBD_F_ABORTED) {
			rc = __jbd_abort_told(j, -EROFS);
		} else {
			while (i + k < n && k < RUN_MAX && __direct_ok(j, t, block + i + k))
				k++;
			if (k) {
				/* the commit orders its commit block after
				 * these as after t_data (no async commit) */
				t->t_data_home = true;
				t->t_nr_direct += k;
			}
		}
		rt_mutex_unlock(&j->j_state_lock);
		if (rc)
			break;
		if (!k) { /* the journal has it: the one-block path */
			rc = ujbd_write_data(h, block + i, p + (size_t)i * j->j_blocksize);
			i++;
			continue;
		}
		rc = run_io(j, BLK_OP_WRITE, block + i, k, (void *)(p + (size_t)i * j->j_blocksize));
		if (rc) {
			/* as a failed ordered write in a commit: the metadata
			 * that would make these blocks reachable must not
			 * commit */
			rt_mutex_lock(&j->j_state_lock);
			__jbd_abort(j, rc);
			rt_mutex_unlock(&j->j_state_lock);
			jbd_abort_write_sb(j);
			return jbd_abort_told(j, rc);
		}
		i += k;
	}
	return rc;
}

int ujbd_read_blocks(struct ujbd *j, uint64_t block, uint32_t n, void *buf)
{
	uint8_t *p = buf;
	uint32_t i = 0;
	int rc = run_check(j, block, n);

	while (!rc && i < n) {
		uint32_t k = 0;

		while (i + k < n && k < RUN_MAX && !buf_cached(j->j_cache, block + i + k))
			k++;
		if (k) { /* the device holds the newest copy of these */
			rc = run_io(j, BLK_OP_READ, block + i, k, p + (size_t)i * j->j_blocksize);
			i += k;
		} else {
			rc = ujbd_read(j, block + i, p + (size_t)i * j->j_blocksize);
			i++;
		}
	}
	return rc;
}

void *ujbd_buf_data(struct ujbd_buf *b)
{
	return b->b_data;
}

uint64_t ujbd_buf_block(const struct ujbd_buf *b)
{
	return b->b_blocknr;
}

void ujbd_buf_put(struct ujbd_buf *b)
{
	buf_put(b);
}

/* ---- the simple entry point ------------------------------------------- */

/* Two entries naming one block? Small sets pairwise, larger ones sorted. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int atomic_dups(const struct ujbd_block *blocks, size_t n)
{
	uint64_t *v;
	int rc = 0;

	if (n <= 32) {
		for (size_t i = 1; i < n; i++)
			for (size_t k = 0; k < i; k++)
				if (blocks[i].block == blocks[k].block)
					return -EINVAL;
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = blocks[i].block;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 1; i < n && !rc; i++) {
		ASSERT(v[i - 1] <= v[i]); /* sorted */
		if (v[i] == v[i - 1])
			rc = -EINVAL;
	}
	free(v);
	return rc;
}

/* The whole set, checked before anything starts: a call that fails must
 * change nothing, so no block may be refused half way. */
static int atomic_check(struct ujbd *j, const struct ujbd_block *blocks, size_t n)
{
	int rc;

	if (n && !blocks)
		return -EINVAL;
	if (n > j->j_max_txn)
		return -UJBD_ETOOBIG;
	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].data)
			return -EINVAL;
		rc = check_block(j, blocks[i].block);
		if (rc)
			return rc;
	}
	return atomic_dups(blocks, n);
}

/*
 * The access phase failed (no memory; an abort): give back what this
 * handle took. A block it joined to the transaction, that nobody dirtied
 * and nobody else holds, leaves it again (its credit back), and a buffer
 * the cache had to zero-fill for it forgets those zeros, so the next read
 * sees the block as it is. Whatever else joined stays joined and clean:
 * a clean buffer is never logged.
 */
static void atomic_undo(struct ujbd_handle *h, struct ujbd_buf **bufs, size_t n)
{
	struct ujbd *j = h->h_journal;
	struct jbd_txn *t = h->h_transaction;

	ASSERT(held_find(j) == h); /* the caller's handle, still held */
	rt_mutex_lock(&j->j_state_lock);
	for (size_t i = 0; i < n; i++) {
		struct jbd_jh *jh = bufs[i]->b_jh;

		if (!jh || jh->b_transaction != t || jh->b_join_seq != h->h_seq ||
		    JH_GET(jh->b_dirty) || jh->b_forget || jh->b_cp_transaction ||
		    jh->b_data_transaction || jh->b_data_next || jh->b_ckpt_busy ||
		    __atomic_load_n(&bufs[i]->b_count, __ATOMIC_ACQUIRE) != 2)
			continue; /* 2: the head's reference and ours */
		__retire(j, t, jh);
		ASSERT(!bufs[i]->b_jh); /* left the journal before its bytes go */
		h->h_buffer_credits++;
		buf_invalidate(bufs[i]);
	}
	rt_mutex_unlock(&j->j_state_lock);
}

/* Copy the set into the buffers (every one the handle's now) and dirty
 * them: only an abort can fail here, and an aborted journal commits
 * nothing. */
static int atomic_fill(struct ujbd_handle *h, const struct ujbd_block *blocks,
		       struct ujbd_buf **bufs, size_t n)
{
	struct ujbd *j = h->h_journal;
	int rc = 0;

	rt_mutex_lock(&j->j_state_lock);
	for (size_t i = 0; i < n; i++) {
		/* write access given: the buffer is the handle's transaction's */
		ASSERT(__buf_in(bufs[i], h->h_transaction));
		memcpy(bufs[i]->b_data, blocks[i].data, j->j_blocksize);
	}
	rt_mutex_unlock(&j->j_state_lock);
	for (size_t i = 0; i < n && !rc; i++)
		rc = ujbd_dirty_metadata(h, bufs[i]);
	return rc;
}

int ujbd_write_atomic(struct ujbd *j, const struct ujbd_block *blocks, size_t n,
		      unsigned flags)
{
	struct ujbd_buf *few[16], **bufs = few;
	struct ujbd_handle *h;
	size_t got = 0;
	int rc = atomic_check(j, blocks, n), src;

	if (!rc && n > 16 && !(bufs = calloc(n, sizeof(*bufs))))
		rc = -ENOMEM;
	if (!rc)
		rc = ujbd_start(j, (unsigned)n, &h);
	if (rc)
		goto out;
	ujbd_handle_set_sync(h, flags & UJBD_DURABLE);
	/* every block the handle's first, then the bytes: an error on the
	 * way leaves the set out of the transaction */
	for (; got < n; got++) {
		rc = get_access(h, blocks[got].block, ACC_OVERWRITE, &bufs[got]);
		if (rc)
			break;
	}
	if (rc)
		atomic_undo(h, bufs, got);
	else
		rc = atomic_fill(h, blocks, bufs, n);
	for (size_t i = 0; i < got; i++)
		buf_put(bufs[i]);
	src = ujbd_stop(h);
	rc = rc ? rc : src;
out:
	if (bufs != few)
		free(bufs);
	return rc;
}

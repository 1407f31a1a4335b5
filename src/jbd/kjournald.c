/*
 * kjournald.c: the commit thread's loop and everyone who asks it for a
 * commit: commit requests and the wake policy, fsync (commit a tid and
 * wait), group commit's batch window, committing on the fsync's own
 * thread (caller_commit), and priority inheritance (inherit) for whoever
 * waits on a transaction.
 *
 * The one idea: one thread at a time commits (j_commit_busy), kjournald or
 * an fsync; a request only records the highest tid asked for and wakes
 * kjournald when the request is new (or always, under wake=always), and a
 * waiter sleeps on j_wait_done_commit until j_commit_sequence reaches its
 * tid. The commit itself, phase by phase, is commit.c's __jbd_commit.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

/* ---- requests and waits --------------------------------------------------- */

/*
 * With UJBD_WAKE_NEEDED the commit thread is woken only when the request
 * is new (no commit of that tid asked for, running or done), as Eric
 * Sandeen's "jbd2: don't wake kjournald unnecessarily" (linux-ext4, December
 * 2012) restored; UJBD_WAKE_ALWAYS wakes it on every request, as jbd2 did
 * after "jbd2: fix fsync() tid wraparound bug", and the thread then finds
 * nothing to do: a useless wakeup, counted by the thread.
 */
void __jbd_request_commit(struct ujbd *j, ujbd_tid_t tid)
{
	bool needed = false;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(ujbd_tid_gt(j->j_transaction_sequence, tid)); /* handed out */
	/* the running transaction is the newest tid handed out */
	ASSERT(!j->j_running || (ujbd_tid_t)(j->j_running->t_tid + 1) == j->j_transaction_sequence);
	if (!ujbd_tid_geq(j->j_commit_sequence, tid) && !ujbd_tid_geq(j->j_commit_request, tid)) {
		needed = true;
		j->j_commit_request = tid;
		if (j->j_running && j->j_running->t_tid == tid && !j->j_running->t_requested) {
			j->j_running->t_requested = true;
			j->j_running->t_requested_ns = rt_now_ns();
		}
	}
	ASSERT(ujbd_tid_geq(j->j_commit_request, tid) || ujbd_tid_geq(j->j_commit_sequence, tid));
	if ((needed || j->j_opts.wake == UJBD_WAKE_ALWAYS) && j->j_kj_sleeping) {
		j->j_kj_sleeping = false;
		j->j_kj_woken = true;
		rt_cond_signal(&j->j_wait_commit);
		if (j->j_opts.wakeup_cpu_ns)
			rt_cpu(j->j_opts.wakeup_cpu_ns); /* [j_state_lock] held: see ujbd_opts */
	}
}

/* An fsync joined t: end the committer's batch window once all it
 * expects are in (see __batch_wanted). */
static void __batch_note(struct ujbd *j, const struct jbd_txn *t)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!j->j_batching || j->j_commit_busy); /* only the committer batches */
	if (j->j_batching && t == j->j_running && jbd_txn_fsyncs(t) >= j->j_batch_target)
		rt_cond_signal(&j->j_wait_batch);
}

/* ---- priority inheritance (commit_ioprio = inherit) ----------------------- */

/* The calling thread's ioprio; class NONE is best effort at its level. */
uint16_t jbd_waiter_prio(void)
{
	uint16_t prio = rt_ioprio_get();

	if (RT_IOPRIO_CLASS(prio) == RT_IOPRIO_CLASS_NONE)
		prio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, RT_IOPRIO_LEVEL(prio));
	return prio;
}

/*
 * A raise of a transaction that is not committing yet is only recorded:
 * its commit takes it in __io_policy (a T_LOCKED transaction's waiters
 * are all in before that). One that commits has its later bios carry it
 * (j_commit_prio) and its queued ones raised, with the lock dropped:
 * blk_boost may run bio completions on this thread, the commit's among
 * them, which take j_state_lock.
 */
bool __jbd_inherit(struct ujbd *j, struct jbd_txn *t)
{
	struct blk_queue *jq = j->j_jq, *dq = j->j_dq;
	uint16_t prio = jbd_waiter_prio(), old;
	uint64_t tag;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!t)
		return false;
	/* a waiter raises a transaction the journal still holds */
	ASSERT(t == j->j_running || t == j->j_committing);
	old = jbd_inherit_prio(t->t_waiter_prio);
	if (!t->t_waiter_prio || jbd_ioprio_higher(prio, t->t_waiter_prio))
		t->t_waiter_prio = prio;
	if (j->j_opts.commit_ioprio != UJBD_IOPRIO_INHERIT || !jbd_ioprio_higher(prio, old))
		return false;
	jbd_stats_inherit_boost(&j->j_stats);
	ASSERT(!j->j_boost_tag || j->j_commit_busy); /* a tag while a commit runs */
	if (t != j->j_committing || !j->j_boost_tag)
		return false;
	ASSERT(t->t_state == T_FLUSH || t->t_state == T_COMMIT);
	__atomic_store_n(&j->j_commit_prio, prio, __ATOMIC_RELEASE);
	tag = j->j_boost_tag;
	rt_mutex_unlock(&j->j_state_lock);
	(void)blk_boost(jq, tag, prio);
	if (dq != jq)
		(void)blk_boost(dq, tag, prio);
	rt_mutex_lock(&j->j_state_lock);
	return true;
}

/* An fsync-like waiter of tid: the batch window counts it, its commit
 * becomes synchronous, and it raises the commit's priority (inherit). */
static void __note_waiter(struct ujbd *j, ujbd_tid_t tid)
{
	struct jbd_txn *t = NULL;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (j->j_running && j->j_running->t_tid == tid)
		t = j->j_running;
	else if (j->j_committing && j->j_committing->t_tid == tid)
		t = j->j_committing;
	if (!t)
		return;
	/* running: open or locked; committing: flushing or logging */
	ASSERT(t == j->j_running ? t->t_state <= T_LOCKED
				 : t->t_state == T_FLUSH || t->t_state == T_COMMIT);
	t->t_nr_fsync_waits++;
	__batch_note(j, t);
	t->t_synchronous_commit = true;
	(void)__jbd_inherit(j, t); /* the caller's loop re-checks after it */
}

static void __commit_excl(struct ujbd *j, bool caller);

/* caller_commit: commit tid here if it is the running transaction, no
 * commit runs and this thread holds no handle (the commit would wait for
 * it: kjournald commits once it stops, as without the option). True if it
 * did (the commit may have failed: see j_flags). Lock held. */
static bool __caller_commit(struct ujbd *j, ujbd_tid_t tid)
{
	struct jbd_txn *t = j->j_running;
	uint64_t t0;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!j->j_opts.caller_commit || j->j_commit_busy || !t || t->t_tid != tid ||
	    (j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)) || jbd_thread_holds_handle())
		return false;
	t0 = rt_now_ns();
	if (!ujbd_tid_geq(j->j_commit_request, tid))
		j->j_commit_request = tid;
	if (!t->t_requested) {
		t->t_requested = true;
		t->t_requested_ns = rt_now_ns();
	}
	/* no commit runs (none failed either): t is the next to commit */
	ASSERT(t->t_state == T_RUNNING && !j->j_committing);
	ASSERT((ujbd_tid_t)(j->j_commit_sequence + 1) == tid);
	__commit_excl(j, true);
	/* by tid: t may be freed by now (its checkpoint done while the
	 * commit's last write was waited for) and its memory be the running
	 * transaction's */
	ASSERT(!j->j_running || j->j_running->t_tid != tid ||
	       (j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)));
	/* the fsync's wait for its commit was spent running it: the same
	 * cause, for the journal and the thread's accumulator, as a wait
	 * for kjournald's */
	jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_COMMIT, rt_now_ns() - t0);
	return true;
}

bool __jbd_fsync_commit(struct ujbd *j, ujbd_tid_t tid)
{
	if (__caller_commit(j, tid))
		return true;
	__jbd_request_commit(j, tid);
	return false;
}

/* Wait until tid is committed; may_commit: by committing it here when
 * caller_commit allows. */
static int __wait_commit(struct ujbd *j, ujbd_tid_t tid, bool may_commit)
{
	uint64_t t0 = rt_now_ns();
	bool waited = false;
	int rc = 0;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* handed out: a later tid no commit reaches before it wraps */
	ASSERT(ujbd_tid_gt(j->j_transaction_sequence, tid));
	__note_waiter(j, tid);
	while (!ujbd_tid_geq(j->j_commit_sequence, tid)) {
		if (j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)) {
			rc = jbd_abort_errno(j);
			break;
		}
		if (may_commit && __caller_commit(j, tid)) {
			t0 = rt_now_ns(); /* counted by __caller_commit */
			continue;
		}
		waited = true;
		rt_cond_wait(&j->j_wait_done_commit, &j->j_state_lock);
	}
	ASSERT(rc || ujbd_tid_geq(j->j_commit_sequence, tid));
	if (waited)
		jbd_stats_lat(&j->j_stats, UJBD_LAT_WAIT_COMMIT, rt_now_ns() - t0);
	return rc;
}

int __jbd_wait_commit(struct ujbd *j, ujbd_tid_t tid)
{
	return __wait_commit(j, tid, false);
}

/* tid was handed out already (tids at or after the next one are unknown). */
static bool __tid_known(const struct ujbd *j, ujbd_tid_t tid)
{
	return ujbd_tid_gt(j->j_transaction_sequence, tid);
}

/* caller_commit: the last commit_tid of this thread that committed, for
 * the ujbd_wait_tid after it (one fsync, one latency sample). */
static _Thread_local struct {
	const struct ujbd *j;
	ujbd_tid_t tid;
} fsync_counted;

int ujbd_commit_tid(struct ujbd *j, ujbd_tid_t tid)
{
	uint64_t t0 = rt_now_ns();
	int rc = 0;

	rt_mutex_lock(&j->j_state_lock);
	if (!__tid_known(j, tid))
		rc = -UJBD_ENOTID;
	else if ((j->j_flags & JBD_F_ABORTED) && !ujbd_tid_geq(j->j_commit_sequence, tid))
		rc = jbd_abort_errno(j);
	/* An explicit request is an fsync about to wait: its commit's
	 * journal writes are SYNC under UJBD_SYNC_FSYNC_ONLY (the waiter may
	 * come only after the commit has chosen its flags). */
	if (!rc && j->j_running && j->j_running->t_tid == tid) {
		j->j_running->t_synchronous_commit = true;
		j->j_running->t_nr_fsync_requests++;
		__batch_note(j, j->j_running);
	}
	if (!rc && __jbd_fsync_commit(j, tid)) {
		/* the fsync's wait was here: its latency too (the wait_tid
		 * that follows on this thread records nothing) */
		jbd_stats_fsync(&j->j_stats, rt_now_ns() - t0);
		fsync_counted.j = j;
		fsync_counted.tid = tid;
		if ((j->j_flags & JBD_F_ABORTED) && !ujbd_tid_geq(j->j_commit_sequence, tid))
			rc = jbd_abort_errno(j);
	}
	/* committed here, or asked of kjournald */
	ASSERT(rc || ujbd_tid_geq(j->j_commit_request, tid) ||
	       ujbd_tid_geq(j->j_commit_sequence, tid));
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

int ujbd_wait_tid(struct ujbd *j, ujbd_tid_t tid)
{
	uint64_t t0 = rt_now_ns();
	/* this thread's commit_tid committed tid and counted the fsync */
	bool counted = fsync_counted.j == j && fsync_counted.tid == tid;
	ujbd_tid_t own;
	int rc;

	fsync_counted.j = NULL;
	/* its own transaction, or a later one, waits for the caller's handle */
	if (jbd_thread_holds(j, &own) && ujbd_tid_geq(tid, own))
		return -EDEADLK;
	rt_mutex_lock(&j->j_state_lock);
	rc = __tid_known(j, tid) ? __wait_commit(j, tid, true) : -UJBD_ENOTID;
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	if (rc != -UJBD_ENOTID && !counted)
		jbd_stats_fsync(&j->j_stats, rt_now_ns() - t0);
	return rc;
}

int ujbd_sync(struct ujbd *j)
{
	uint64_t t0 = rt_now_ns();
	ujbd_tid_t tid;
	int rc;

	if (jbd_thread_holds(j, NULL))
		return -EDEADLK; /* the running transaction holds the caller's handle */
	rt_mutex_lock(&j->j_state_lock);
	tid = j->j_running ? j->j_running->t_tid
	      : j->j_committing ? j->j_committing->t_tid : j->j_commit_sequence;
	/* the committing transaction follows the last one committed */
	ASSERT(!j->j_committing || (ujbd_tid_t)(j->j_committing->t_tid - 1) == j->j_commit_sequence);
	(void)__jbd_fsync_commit(j, tid);
	rc = __wait_commit(j, tid, true);
	if (!rc && (j->j_flags & JBD_F_ABORTED))
		rc = j->j_errno;
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	jbd_stats_fsync(&j->j_stats, rt_now_ns() - t0);
	return rc;
}

/* ---- kjournald ------------------------------------------------------------ */

static bool __commit_due(const struct ujbd *j)
{
	const struct jbd_txn *t = j->j_running;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* a transaction asked for is covered by the request */
	ASSERT(!t || !t->t_requested || ujbd_tid_geq(j->j_commit_request, t->t_tid));
	if (!t || (j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)))
		return false;
	return ujbd_tid_geq(j->j_commit_request, t->t_tid) || rt_now_ns() >= t->t_expires_ns;
}

/*
 * Group commit, the batch window. A commit wakes its fsync waiters; most
 * come straight back with the next fsync, but on few CPUs they come back
 * one by one, and a commit that starts at the first request leaves the
 * rest to the one after it (about half of 16 threads per commit here). So
 * a requested commit whose fsyncs are fewer than the last commit woke
 * plus those already waiting then waits for them, at most an average
 * commit time clamped to [min_batch_time, max_batch_time] from the end of
 * the last commit (jbd2's window for sync handles, and 0 disables both),
 * and starts as soon as they are in. One thread doing fsyncs never waits
 * (it expects itself, and is in), nor does a commit nobody fsyncs (the
 * timer's), one that log space or a full transaction waits for, or close.
 */
static bool __batch_wanted(const struct ujbd *j, uint64_t *deadline)
{
	const struct jbd_txn *t = j->j_running;
	uint64_t window = jbd_stats_avg_commit_ns(&j->j_stats);

	/* the committer's window: only it locks the running transaction */
	ASSERT(j->j_commit_busy && t);
	if (!j->j_opts.max_batch_time_ns ||
	    (j->j_flags & (JBD_F_STOPPING | JBD_F_ABORTED | JBD_F_HARD)) ||
	    j->j_space_waiters || !jbd_txn_fsyncs(t) || jbd_txn_fsyncs(t) >= j->j_batch_target ||
	    t->t_outstanding > j->j_max_txn / 2)
		return false;
	if (window < j->j_opts.min_batch_time_ns)
		window = j->j_opts.min_batch_time_ns;
	if (window > j->j_opts.max_batch_time_ns)
		window = j->j_opts.max_batch_time_ns;
	*deadline = j->j_batch_from_ns + window;
	return rt_now_ns() < *deadline;
}

/*
 * Commit, one thread at a time: kjournald, or an fsync (caller, see
 * caller_commit). The batch window first, whoever commits: the running
 * transaction stays this thread's to commit while it waits. Lock held.
 */
static void __commit_excl(struct ujbd *j, bool caller)
{
	uint64_t deadline;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!j->j_commit_busy && j->j_running);
	ASSERT(!j->j_boost_tag && !j->j_batching); /* left by the last commit */
	j->j_commit_busy = true;
	while (__batch_wanted(j, &deadline)) {
		j->j_batching = true;
		(void)rt_cond_timedwait(&j->j_wait_batch, &j->j_state_lock, deadline);
		j->j_batching = false;
	}
	if (!(j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)))
		__jbd_commit(j, caller);
	ASSERT(j->j_commit_busy && !j->j_batching);
	if (j->j_boost_tag) {
		/* inherit: the commit ended; kjournald drops back to the
		 * floor (an fsync's thread never left its own priority) */
		j->j_boost_tag = 0;
		if (!caller && rt_ioprio_get() != JBD_INHERIT_FLOOR)
			rt_ioprio_set(JBD_INHERIT_FLOOR);
	}
	j->j_commit_busy = false;
	if (j->j_kj_busy_wait)
		rt_cond_signal(&j->j_wait_commit);
}

/* Sleep until asked, or until the running transaction expires. */
static void __kj_sleep(struct ujbd *j)
{
	const struct jbd_txn *t = j->j_running;
	bool timed_out = false;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!j->j_kj_sleeping && !j->j_kj_busy_wait);
	ASSERT(!j->j_kj_kicked); /* a kick is taken by the sleep it ends */
	j->j_kj_sleeping = true;
	j->j_kj_timed = t != NULL && !(j->j_flags & JBD_F_ABORTED);
	if (j->j_kj_timed) {
		j->j_kj_armed = t->t_tid;
		timed_out = rt_cond_timedwait(&j->j_wait_commit, &j->j_state_lock,
					      t->t_expires_ns) == -ETIMEDOUT;
	} else {
		rt_cond_wait(&j->j_wait_commit, &j->j_state_lock);
	}
	j->j_kj_sleeping = false;
	/* A timer re-arm is not a counted wakeup: a kick (a transaction
	 * started while it slept without a deadline), or the deadline of a
	 * transaction an fsync has committed meanwhile (caller_commit; jbd2
	 * deletes the timer then). */
	if (timed_out && !j->j_kj_woken && (!j->j_running || j->j_running->t_tid != j->j_kj_armed))
		j->j_kj_kicked = true;
	if (j->j_kj_kicked) {
		j->j_kj_kicked = false;
		return;
	}
	if (j->j_kj_woken || timed_out) {
		j->j_kj_woken = false;
		jbd_stats_wakeup(&j->j_stats, !__commit_due(j) && !(j->j_flags & JBD_F_STOPPING));
	}
}

void jbd_kjournald(void *arg)
{
	struct ujbd *j = arg;

	if (j->j_opts.commit_ioprio != UJBD_IOPRIO_INHERIT)
		rt_ioprio_set(j->j_opts.commit_ioprio);
	rt_task(); /* a kernel thread: scheduled like any task (sim CFS) */
	rt_mutex_lock(&j->j_state_lock);
	for (;;) {
		if (j->j_flags & JBD_F_HARD)
			break;
		if (__commit_due(j)) {
			if (j->j_commit_busy) {
				/* an fsync commits (caller_commit): after it */
				j->j_kj_busy_wait = true;
				rt_cond_wait(&j->j_wait_commit, &j->j_state_lock);
				j->j_kj_busy_wait = false;
			} else {
				__commit_excl(j, false);
			}
			continue;
		}
		if (j->j_flags & JBD_F_STOPPING)
			break;
		__kj_sleep(j);
	}
	/* nobody is left to signal a thread that is gone */
	ASSERT(!j->j_kj_sleeping && !j->j_kj_busy_wait);
	rt_mutex_unlock(&j->j_state_lock);
}

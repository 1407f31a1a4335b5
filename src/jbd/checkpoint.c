/*
 * checkpoint.c: writing committed buffers home and freeing log space.
 *
 * The one idea: a committed transaction holds its log space until every
 * buffer it logged is either written to its home block (and that write is
 * durable: the data device is flushed) or logged again by a later committed
 * transaction (then the later copy is the one that matters: "dropped").
 * Then the tail may move past it; the superblock saying so is written by
 * jbd_update_tail, and only then is the space reused.
 *
 * A buffer that a running or committing transaction holds is not written
 * home: its bytes may be uncommitted. A forced pass (someone waits for
 * space) asks for that transaction's commit instead, after which the
 * buffer belongs to the newer checkpoint entry and the older one is
 * dropped, as jbd2's log_do_checkpoint does.
 *
 * A checkpoint write and any other home write of the same block are never
 * in flight together (runtime.h, "Home writes"): the block layer would be
 * free to reorder them. A block may be revoked and reused as data while
 * its old copy is being written here; the commit that writes the data
 * first waits for this batch to end (__jbd_wait_ckpt_io), as jbd2 waits
 * for the buffer's I/O before writing it again. Conversely a block whose
 * data the committing transaction writes is not collected.
 *
 * The checkpoint thread ("jbd2-ckpt") runs a pass when the log is more
 * than half full after a commit, when a handle waits for space (forced),
 * and every six commit intervals (the kernel's 30 s dirty expiry at the
 * default 5 s). Passes write at most j_ckpt_n buffers each and move the
 * tail after each, so a writer waiting for space is released as soon as
 * enough is free, not after the whole log has been written back.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

void __jbd_cp_append(struct ujbd *j, struct jbd_txn *t)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t->t_state == T_FINISHED && t->t_updates == 0);
	ASSERT(rt_list_empty(&t->t_buffers) && j->j_committing != t && j->j_running != t);
	ASSERT(rt_list_empty(&t->t_cplink)); /* on no checkpoint list yet */
	const struct jbd_txn *last = RT_LIST_LAST(&j->j_cp, struct jbd_txn, t_cplink);
	ASSERT(!last || ujbd_tid_gt(t->t_tid, last->t_tid));
	rt_list_add_tail(&j->j_cp, &t->t_cplink);
	ASSERT(RT_LIST_LAST(&j->j_cp, struct jbd_txn, t_cplink) == t);
	/* its buffers are dirty for the device now: the device inode's
	 * dirtied_when, if it was clean */
	if (t->t_nr_ckpt && !j->j_wb_dirty_ns)
		j->j_wb_dirty_ns = t->t_committed_ns ? t->t_committed_ns : rt_now_ns();
}

static void __cp_unlink(struct jbd_txn *t)
{
	ASSERT(!rt_list_empty(&t->t_cplink));
	ASSERT(t->t_cplink.prev->next == &t->t_cplink && t->t_cplink.next->prev == &t->t_cplink);
	rt_list_del(&t->t_cplink);
}

/* Free the committed transactions with nothing left to write home. Their
 * home writes were flushed before their last buffer left the list. */
void __jbd_cp_drop_empty(struct ujbd *j)
{
	struct jbd_txn *t, *next;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	RT_LIST_FOR_EACH_SAFE(t, next, &j->j_cp, struct jbd_txn, t_cplink) {
		if (t->t_nr_ckpt)
			continue;
		ASSERT(rt_list_empty(&t->t_ckpt) && t->t_state == T_FINISHED);
		__cp_unlink(t);
		jbd_stats_checkpoint(&j->j_stats, t->t_ckpt_written, t->t_ckpt_dropped);
		JBD_TRACE(&j->j_tracer, jbd2_checkpoint_stats, t->t_tid,
			  t->t_ckpt_first_ns ? rt_now_ns() - t->t_ckpt_first_ns : 0, 0,
			  t->t_ckpt_written, t->t_ckpt_dropped, 0, 0);
		JBD_TRACE(&j->j_tracer, jbd2_drop_transaction, t->t_tid, t->t_synchronous_commit,
			  0, 0, 0, 0, 0);
		free(t);
	}
}

void __jbd_wait_ckpt_io(struct ujbd *j, struct jbd_jh *jh)
{
	uint64_t t0, waited;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!rt_mutex_held(&j->j_checkpoint_mutex)); /* its holder ends the batch */
	if (!jh->b_ckpt_busy)
		return;
	t0 = rt_now_ns();
	while (jh->b_ckpt_busy)
		rt_cond_wait(&j->j_wait_ckpt_io, &j->j_state_lock);
	ASSERT(jh->jh_buf->b_jh == jh); /* its data list still holds it */
	/* The kernel's report of a buffer locked for I/O over HZ/10. */
	waited = rt_now_ns() - t0;
	if (waited > 100 * RT_NS_PER_MS)
		JBD_TRACE(&j->j_tracer, jbd2_lock_buffer_stall,
			  j->j_committing ? j->j_committing->t_tid : 0, waited, 0, 0, 0, 0, 0);
}

/* The transaction that keeps jh from being written home now: the one that
 * owns it (its bytes may be uncommitted), or the committing one while it
 * writes jh's block as data (one home write of a block at a time). */
static const struct jbd_txn *__cp_holder(const struct ujbd *j, const struct jbd_jh *jh)
{
	if (jh->b_transaction)
		return jh->b_transaction;
	if (j->j_committing && jh->b_data_transaction == j->j_committing)
		return j->j_committing;
	return NULL;
}

/* Whether a committed buffer is waiting to go home that no transaction
 * holds (dirty for the device). Lock held. */
static bool __cp_any_writable(const struct ujbd *j)
{
	const struct jbd_txn *t;
	const struct jbd_jh *jh;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	RT_LIST_FOR_EACH(t, &j->j_cp, struct jbd_txn, t_cplink)
		RT_LIST_FOR_EACH(jh, &t->t_ckpt, struct jbd_jh, b_cplink)
			if (!__cp_holder(j, jh))
				return true;
	return false;
}

/* Pick up to j_ckpt_n buffers from the oldest transactions and copy them
 * (kind: who writes them); *hold gets the tid of a transaction holding a
 * buffer (for a forced pass). Returns the count. Lock held. */
static uint32_t __cp_collect(struct ujbd *j, bool *held, ujbd_tid_t *hold, uint8_t kind)
{
	uint64_t now = rt_now_ns();
	uint32_t n = 0;
	struct jbd_txn *t;
	struct jbd_jh *jh;

	ASSERT(rt_mutex_held(&j->j_state_lock) && rt_mutex_held(&j->j_checkpoint_mutex));
	ASSERT(kind == JBD_HOME_WRITEBACK || kind == JBD_HOME_CHECKPOINT);
	RT_LIST_FOR_EACH(t, &j->j_cp, struct jbd_txn, t_cplink) {
		if (n >= j->j_ckpt_n)
			break;
		if (!t->t_ckpt_first_ns)
			t->t_ckpt_first_ns = now;
		RT_LIST_FOR_EACH(jh, &t->t_ckpt, struct jbd_jh, b_cplink) {
			if (n >= j->j_ckpt_n)
				break;
			const struct jbd_txn *ht = __cp_holder(j, jh);
			ASSERT(jh->b_cp_transaction == t);
			/* Passes are serialised and each ends its batch. */
			ASSERT(!jh->b_ckpt_busy);
			if (ht) {
				if (!*held || ujbd_tid_gt(ht->t_tid, *hold))
					*hold = ht->t_tid;
				*held = true;
				continue;
			}
			memcpy(j->j_ckpt_io[n].io_data, jh->jh_buf->b_data, j->j_blocksize);
			jh->b_ckpt_busy = true;
			ASSERT(!jh->b_home_io);
			if (j->j_opts.buffer_lock)
				jh->b_home_io = kind;
			j->j_ckpt_jh[n] = jh;
			j->j_ckpt_txn[n] = t;
			n++;
		}
		/* Only the oldest transaction frees space; go further only to
		 * fill the batch. */
	}
	return n;
}

/*
 * buffer_lock: a home write completed; its buffer is unlocked now, on the
 * completing thread, as end_buffer_write_sync unlocked it, and the
 * checkpoint thread is told.
 */
static void cp_end_io(struct blk_bio *b)
{
	struct ujbd *j = b->b_private;
	struct jbd_iobuf *io = (struct jbd_iobuf *)((char *)b - offsetof(struct jbd_iobuf, io_bio));
	uint32_t i = (uint32_t)(io - j->j_ckpt_io);

	rt_mutex_lock(&j->j_state_lock);
	ASSERT(i < j->j_ckpt_n && io->io_busy && j->j_ckpt_jh[i]->b_home_io);
	j->j_ckpt_jh[i]->b_home_io = 0;
	io->io_err = b->b_error;
	io->io_busy = false;
	rt_cond_broadcast(&j->j_wait_ckpt_io);
	rt_mutex_unlock(&j->j_state_lock);
}

/* Wait for the batch's write i; its result. */
static int cp_wait_one(struct ujbd *j, struct jbd_iobuf *io)
{
	return jbd_iobuf_wait(j, io, &j->j_wait_ckpt_io);
}

static int cp_write(struct ujbd *j, uint32_t n, uint64_t tag)
{
	uint32_t nsec = j->j_blocksize >> BLK_SECTOR_SHIFT;
	struct jbd_werr werr0 = jbd_write_errors(j);
	struct blk_plug plug;
	int rc = 0, r;

	blk_start_plug(&plug);
	for (uint32_t i = 0; i < n; i++) {
		struct jbd_iobuf *io = &j->j_ckpt_io[i];
		bool locked = j->j_ckpt_jh[i]->b_home_io != 0; /* ours until sent */
		memset(&io->io_bio, 0, sizeof(io->io_bio));
		io->io_bio.b_op = BLK_OP_WRITE;
		io->io_bio.b_sector = j->j_ckpt_jh[i]->jh_buf->b_blocknr * nsec;
		io->io_bio.b_nr_sectors = nsec;
		io->io_bio.b_buf = io->io_data;
		io->io_err = 0;
		if (tag) {
			uint16_t prio = __atomic_load_n(&j->j_ckpt_prio, __ATOMIC_ACQUIRE);

			io->io_bio.b_boost_tag = tag;
			/* a thread waits for log space: the pass goes at its priority */
			if (prio && jbd_ioprio_higher(prio, rt_ioprio_get()))
				io->io_bio.b_ioprio = prio;
		}
		if (locked) {
			io->io_bio.b_end_io = cp_end_io;
			io->io_bio.b_private = j;

			rt_mutex_lock(&j->j_state_lock);
			io->io_busy = true;
			rt_mutex_unlock(&j->j_state_lock);
		}
		r = blk_submit(j->j_dq, &io->io_bio);
		io->io_sent = r == 0;
		if (r) {
			rt_mutex_lock(&j->j_state_lock);
			io->io_busy = false;
			j->j_ckpt_jh[i]->b_home_io = 0; /* never sent: unlocked */
			rt_cond_broadcast(&j->j_wait_ckpt_io);
			rt_mutex_unlock(&j->j_state_lock);
		} else if (!locked) {
			io->io_busy = true;
		}
		if (r && !rc)
			rc = r;
	}
	blk_finish_plug(&plug);
	for (uint32_t i = 0; i < n; i++) {
		if (!j->j_ckpt_io[i].io_sent)
			continue;
		r = cp_wait_one(j, &j->j_ckpt_io[i]);
		if (r && !rc)
			rc = r;
	}
	/* Home writes durable before the tail moves past them. */
	if (!rc)
		rc = jbd_flush(j, j->j_dq);
	/*
	 * Our flush succeeding is not enough: another flush of the data
	 * device that failed meanwhile (a commit's, on another thread) may
	 * have dropped these writes from the cache before ours came, leaving
	 * it nothing to write (fsyncgate). Moving the tail would then lose
	 * the only durable copies, those in the log; abort instead, as the
	 * commit does (commit_still_sound). Found by test_crash_faults.
	 */
	if (!rc)
		rc = jbd_writes_sound(j, &werr0);
	return rc;
}

/* Take the written buffers off their lists. Lock held. */
static void __cp_done(struct ujbd *j, uint32_t n, int err)
{
	for (uint32_t i = 0; i < n; i++) {
		struct jbd_jh *jh = j->j_ckpt_jh[i];
		struct jbd_txn *t = j->j_ckpt_txn[i];
		struct ujbd_buf *put = NULL;

		ASSERT(rt_mutex_held(&j->j_state_lock));
		ASSERT(jh->b_ckpt_busy && t->t_state == T_FINISHED);
		jh->b_ckpt_busy = false;
		/* A later commit refiled it: that copy must go home too. */
		if (!err && jh->b_cp_transaction == t) {
			__jbd_list_del_cp(t, jh);
			t->t_ckpt_written++;
		}
		__jbd_jh_maybe_free(j, jh, &put);
		buf_put(put);
	}
	if (n)
		rt_cond_broadcast(&j->j_wait_ckpt_io);
}

/* A pass (see jbd_checkpoint_pass) writing kind's buffers. */
static int cp_pass(struct ujbd *j, bool force, uint8_t kind)
{
	uint64_t tag;
	ujbd_tid_t hold = 0;
	bool held = false;
	uint32_t n;
	int rc;

	ASSERT(rt_mutex_held(&j->j_checkpoint_mutex));
	rt_mutex_lock(&j->j_state_lock);
	if (j->j_flags & (JBD_F_ABORTED | JBD_F_HARD)) {
		rc = j->j_flags & JBD_F_ABORTED ? j->j_errno : 0;
		rt_mutex_unlock(&j->j_state_lock);
		return rc;
	}
	n = __cp_collect(j, &held, &hold, kind);
	ASSERT(n <= j->j_ckpt_n);
	JBD_TRACE(&j->j_tracer, jbd2_checkpoint, JBD_CP_FIRST(j) ? JBD_CP_FIRST(j)->t_tid : 0,
		  n ? (int64_t)n : held ? 0 : -1, 0, 0, 0, 0, 0);
	if (!n && held && force) {
		/* Only a commit can free these buffers. */
		__jbd_request_commit(j, hold);
		rc = __jbd_wait_commit(j, hold);
		rt_mutex_unlock(&j->j_state_lock);
		return rc ? rc : 1;
	}
	tag = 0;
	if (n && j->j_opts.commit_ioprio == UJBD_IOPRIO_INHERIT)
		tag = j->j_ckpt_tag = jbd_ckpt_tag(j->j_id, ++j->j_ckpt_seq);
	j->j_ckpt_tag_prio = 0;
	rt_mutex_unlock(&j->j_state_lock);
	if (!n) {
		rc = jbd_update_tail(j, false);
		return rc ? rc : 0;
	}
	rc = cp_write(j, n, tag);
	rt_mutex_lock(&j->j_state_lock);
	j->j_ckpt_tag = 0;
	__cp_done(j, n, rc);
	if (rc)
		__jbd_abort(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	if (rc) {
		jbd_abort_write_sb(j);
		return rc;
	}
	rc = jbd_update_tail(j, false);
	return rc ? rc : 1;
}

int jbd_checkpoint_pass(struct ujbd *j, bool force)
{
	return cp_pass(j, force, JBD_HOME_CHECKPOINT);
}

/*
 * The writeback pass (writeback_interval_ns), as kupdate wrote the block
 * device's dirty buffers: expiry belongs to the device's inode, not to a
 * buffer. Once committed buffers have been waiting to go home for
 * writeback_expire_ns without a moment with none (j_wb_dirty_ns, the
 * inode's dirtied_when, kept when buffers are added meanwhile), every one
 * of them goes home, batch after batch, whatever its own age; the device
 * is clean again only when a pass leaves none behind. 0 or -errno. The
 * checkpoint mutex held.
 */
static int cp_writeback(struct ujbd *j)
{
	uint64_t expire = j->j_opts.writeback_expire_ns ? j->j_opts.writeback_expire_ns
							 : 30 * RT_NS_PER_S;
	uint64_t since;
	int rc;

	ASSERT(rt_mutex_held(&j->j_checkpoint_mutex));
	ASSERT(j->j_opts.writeback_interval_ns);
	rt_mutex_lock(&j->j_state_lock);
	since = j->j_wb_dirty_ns;
	rt_mutex_unlock(&j->j_state_lock);
	if (!since || rt_now_ns() - since < expire)
		return 0;
	/* a pass writes a batch; stop at one that wrote nothing: what is
	 * left belongs to a transaction not yet committed (not dirty for
	 * the device: jbd's BH_JBDDirty) */
	while ((rc = cp_pass(j, false, JBD_HOME_WRITEBACK)) > 0)
		;
	if (rc == 0) {
		rt_mutex_lock(&j->j_state_lock);
		if (!__cp_any_writable(j))
			j->j_wb_dirty_ns = 0;
		rt_mutex_unlock(&j->j_state_lock);
	}
	return rc;
}

int ujbd_checkpoint(struct ujbd *j)
{
	ujbd_tid_t last;
	int rc;

	/* a forced pass may have to commit the caller's own transaction */
	if (jbd_thread_holds(j, NULL))
		return -EDEADLK;
	rt_mutex_lock(&j->j_state_lock);
	last = j->j_commit_sequence;
	rt_mutex_unlock(&j->j_state_lock);
	rt_mutex_lock(&j->j_checkpoint_mutex);
	for (;;) {
		rc = jbd_checkpoint_pass(j, true);
		if (rc <= 0)
			break;
		rt_mutex_lock(&j->j_state_lock);
		const struct jbd_txn *first = JBD_CP_FIRST(j);
		bool done = !first || ujbd_tid_gt(first->t_tid, last);
		rt_mutex_unlock(&j->j_state_lock);
		if (done)
			break;
	}
	rt_mutex_unlock(&j->j_checkpoint_mutex);
	return jbd_abort_told(j, rc < 0 ? rc : 0);
}

/* ---- the checkpoint thread ----------------------------------------------- */

static bool __cp_wanted(const struct ujbd *j)
{
	if (j->j_ckpt_want || j->j_space_waiters)
		return true;
	return !rt_list_empty(&j->j_cp) &&
	       jbd_log_distance(&j->j_jnl, j->j_tail, j->j_head) > jbd_log_size(j) / 2;
}

void jbd_checkpointd(void *arg)
{
	struct ujbd *j = arg;
	bool idle = false; /* the last pass found nothing: wait for a signal */
	uint64_t wb_next = rt_now_ns() + j->j_opts.writeback_interval_ns;

	rt_task(); /* a kernel thread: scheduled like any task (sim CFS) */
	rt_mutex_lock(&j->j_state_lock);
	for (;;) {
		if (j->j_flags & (JBD_F_STOP_CKPT | JBD_F_ABORTED | JBD_F_HARD))
			break;
		uint64_t wb = j->j_opts.writeback_interval_ns;
		if (wb && rt_now_ns() >= wb_next) {
			/* the writeback's turn: every interval from open */
			wb_next += wb * ((rt_now_ns() - wb_next) / wb + 1);
			rt_mutex_unlock(&j->j_state_lock);
			rt_mutex_lock(&j->j_checkpoint_mutex);
			(void)cp_writeback(j); /* an error aborted the journal */
			rt_mutex_unlock(&j->j_checkpoint_mutex);
			rt_mutex_lock(&j->j_state_lock);
			continue;
		}
		if (idle || !__cp_wanted(j)) {
			uint64_t deadline = rt_now_ns() + 6 * j->j_opts.commit_interval_ns;
			if (wb && wb_next < deadline)
				deadline = wb_next;
			int w = rt_cond_timedwait(&j->j_wait_checkpoint, &j->j_state_lock, deadline);
			if (j->j_flags & (JBD_F_STOP_CKPT | JBD_F_ABORTED | JBD_F_HARD))
				break;
			if (wb && rt_now_ns() >= wb_next)
				continue;
			if (w == -ETIMEDOUT && rt_list_empty(&j->j_cp))
				continue;
		}
		bool force = j->j_space_waiters > 0;
		j->j_ckpt_want = 0;
		rt_mutex_unlock(&j->j_state_lock);
		rt_mutex_lock(&j->j_checkpoint_mutex);
		int rc = jbd_checkpoint_pass(j, force);
		rt_mutex_unlock(&j->j_checkpoint_mutex);
		rt_mutex_lock(&j->j_state_lock);
		idle = rc <= 0;
	}
	rt_mutex_unlock(&j->j_state_lock);
}

/*
 * log.c: the runtime's bookkeeping of its log: how much of it is in use,
 * where the durable tail is (the superblock's s_start), and abort. Called
 * by transaction.c (space for a handle), commit.c (the tail of an empty
 * log, abort on a failed write), checkpoint.c (the tail after home writes)
 * and runtime.c (open and close).
 *
 * The one idea: the log is a ring [j_first, j_last) whose live part runs
 * from the durable tail (s_start on disk, j_tail in memory) to the head
 * (j_head, where the next commit writes). Space is "used" by that live
 * part plus what the committing transaction will write plus the worst case
 * of the running transaction, so a handle that is admitted can always be
 * committed: start() waits for space, never the commit. The tail only
 * moves once the superblock saying so is durable, and the superblock only
 * moves past a transaction once its home writes are durable (checkpoint.c
 * flushes the data device first).
 */
#include "jbd/runtime.h"

/* ---- space ------------------------------------------------------------- */

uint32_t jbd_log_size(const struct ujbd *j)
{
	return j->j_jnl.j_last - j->j_jnl.j_first;
}

uint32_t jbd_log_res(const struct ujbd *j, uint32_t credits)
{
	ASSERT(j->j_dcap > 0);
	ASSERT(j->j_dcap > 0);
	return credits + (credits + j->j_dcap - 1) / j->j_dcap + 1;
}

uint32_t __jbd_log_used(const struct ujbd *j)
{
	uint32_t used = jbd_log_distance(&j->j_jnl, j->j_tail, j->j_head) + 1;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(used <= jbd_log_size(j)); /* the head never laps the tail */
	if (j->j_committing)
		used += j->j_committing->t_log_need;
	if (j->j_running)
		used += jbd_log_res(j, j->j_running->t_outstanding) + j->j_slack;
	return used;
}

/* ---- superblock and tail ---------------------------------------------- */

/* Write j_sb_buf's superblock through the journal queue, durable: after
 * a flush of what came before (preflush), or FUA alone. */
static int sb_io_flags(struct ujbd *j, bool preflush);
static int sb_io(struct ujbd *j)
{
	return sb_io_flags(j, true);
}

static int sb_io_flags(struct ujbd *j, bool preflush)
{
	const struct jbd_loc *loc = &j->j_jnl.j_loc;
	struct blk_bio bio;
	uint64_t off;
	int rc = jbd_loc_offset(loc, loc->j_sb_block, &off);

	if (rc)
		return rc;
	memset(&bio, 0, sizeof(bio));
	bio.b_op = BLK_OP_WRITE;
	bio.b_flags = BLK_SYNC | jbd_barrier_flags(j, (preflush ? BLK_PREFLUSH : 0) | BLK_FUA) |
		      (j->j_opts.journal_meta ? BLK_META : 0);
	bio.b_sector = off >> BLK_SECTOR_SHIFT;
	bio.b_nr_sectors = j->j_blocksize >> BLK_SECTOR_SHIFT;
	bio.b_buf = j->j_sb_buf;
	JBD_TRACE(&j->j_tracer, jbd2_write_superblock,
		  jbd_get_be32(((struct jbd2_sb *)j->j_sb_buf)->s_sequence), bio.b_flags,
		  0, 0, 0, 0, 0);
	return blk_submit_wait(j->j_jq, &bio);
}

/* Fill j_sb_buf from j_sb with start/seq and the error; j_state_lock. */
static void __sb_fill(struct ujbd *j, uint32_t start, ujbd_tid_t seq)
{
	struct jbd2_sb *sb = &j->j_jnl.j_sb;
	struct jbd_err e;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock) && rt_mutex_held(&j->j_sb_mutex));
	jbd_put_be32(&sb->s_start, start);
	jbd_put_be32(&sb->s_sequence, seq);
	if (start == 0 && jbd_sb_is_v2(sb))
		jbd_put_be32(&sb->s_head, j->j_head);
	/* s_errno is for e2fsck and the kernel: an errno value (the journal's
	 * own codes are recorded as the I/O error they amount to) */
	if (j->j_errno)
		jbd_put_be32(&sb->s_errno, (uint32_t)(j->j_errno < -4095 ? -EIO : j->j_errno));
	jbd_sb_csum_set(sb);
	/* Pair check: what we write must pass what we demand on reading. */
	rc = jbd_sb_check(sb, j->j_jnl.j_loc.j_len, j->j_blocksize,
			  j->j_jnl.j_loc.j_sb_block, &e);
	ASSERT(rc == 0);
	(void)rc;
	memset(j->j_sb_buf, 0, j->j_blocksize);
	memcpy(j->j_sb_buf, sb, sizeof(*sb));
}

/* Where the tail must be now; j_state_lock held. */
static void __tail_target(const struct ujbd *j, uint32_t *start, ujbd_tid_t *seq)
{
	const struct jbd_txn *c = j->j_committing;
	const struct jbd_txn *first = JBD_CP_FIRST(j);

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(!first || first->t_state == T_FINISHED);
	if (first) {
		*start = first->t_log_start;
		*seq = first->t_tid;
	} else if (c && c->t_state >= T_COMMIT) {
		*start = c->t_log_start;
		*seq = c->t_tid;
	} else {
		*start = j->j_head;
		*seq = c ? c->t_tid : j->j_running ? j->j_running->t_tid
						   : j->j_transaction_sequence;
	}
	/* the tail only moves forward */
	ASSERT(ujbd_tid_geq(*seq, j->j_tail_sequence) || j->j_sb_empty);
}

int jbd_update_tail(struct ujbd *j, bool empty)
{
	uint32_t start, old_tail, freed;
	ujbd_tid_t seq;
	int rc = 0;

	rt_mutex_lock(&j->j_sb_mutex);
	rt_mutex_lock(&j->j_state_lock);
	__jbd_cp_drop_empty(j);
	__tail_target(j, &start, &seq);
	if (empty && rt_list_empty(&j->j_cp) && !j->j_committing && !j->j_running)
		start = 0;
	if (j->j_flags & JBD_F_ABORTED) {
		rc = j->j_errno;
		goto out;
	}
	if (j->j_flags & JBD_F_HARD)
		goto out; /* a hard close writes nothing more */
	ASSERT(start == 0 || (start >= j->j_jnl.j_first && start < j->j_jnl.j_last));
	bool same = j->j_sb_empty ? start == 0 : start == j->j_tail && seq == j->j_tail_sequence;
	if (same)
		goto out;
	__sb_fill(j, start, seq);
	rt_mutex_unlock(&j->j_state_lock);
	rc = sb_io(j);
	rt_mutex_lock(&j->j_state_lock);
	if (rc) {
		__jbd_abort(j, rc);
		rt_mutex_unlock(&j->j_state_lock);
		rt_mutex_unlock(&j->j_sb_mutex);
		jbd_abort_write_sb(j); /* s_errno, or the try */
		return rc;
	}
	old_tail = j->j_tail;
	ASSERT(!j->j_running || ujbd_tid_geq(j->j_running->t_tid, seq));
	j->j_sb_empty = start == 0;
	j->j_tail = start ? start : j->j_head;
	j->j_tail_sequence = seq;
	freed = jbd_log_distance(&j->j_jnl, old_tail, j->j_tail);
	JBD_TRACE(&j->j_tracer, jbd2_update_log_tail, seq, seq, j->j_tail, freed, 0, 0, 0);
	rt_cond_broadcast(&j->j_wait_space);
out:
	rt_mutex_unlock(&j->j_state_lock);
	rt_mutex_unlock(&j->j_sb_mutex);
	return rc;
}

/* ---- abort -------------------------------------------------------------- */

void __jbd_abort(struct ujbd *j, int err)
{
	ASSERT(err < 0);
	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (j->j_flags & JBD_F_ABORTED)
		return;
	/* as it is: a full host file system is ENOSPC, not an I/O error;
	 * first, so that whoever sees the flags unlocked sees it too */
	__atomic_store_n(&j->j_errno, err, __ATOMIC_RELEASE);
	__atomic_or_fetch(&j->j_flags, JBD_F_ABORTED, __ATOMIC_RELEASE); /* hard_stop reads it unlocked */
	__atomic_store_n(&j->j_aborted, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&j->j_open, NULL, __ATOMIC_SEQ_CST);
	rt_cond_broadcast(&j->j_wait_done_commit);
	rt_cond_broadcast(&j->j_wait_transaction_locked);
	rt_cond_broadcast(&j->j_wait_space);
	rt_cond_broadcast(&j->j_wait_updates);
	rt_cond_broadcast(&j->j_wait_commit);
	rt_cond_broadcast(&j->j_wait_batch);
	rt_cond_broadcast(&j->j_wait_checkpoint);
	rt_cond_broadcast(&j->j_wait_shadow);
	ASSERT(j->j_errno < 0 && __atomic_load_n(&j->j_open, __ATOMIC_RELAXED) == NULL);
}

void jbd_abort_write_sb(struct ujbd *j)
{
	ASSERT(j->j_flags & JBD_F_ABORTED);
	rt_mutex_lock(&j->j_sb_mutex);
	rt_mutex_lock(&j->j_state_lock);
	/* Keep the durable tail: recovery must still replay what committed. */
	__sb_fill(j, j->j_sb_empty ? 0 : j->j_tail, j->j_tail_sequence);
	rt_mutex_unlock(&j->j_state_lock);
	/* best effort: the device may be what failed. A device whose flushes
	 * fail would refuse the preflush and skip the write: then the record
	 * goes out with FUA alone, as jbd2's abort writes its s_errno, so the
	 * next open learns of the abort (docs/runtime.md) */
	if (sb_io(j))
		(void)sb_io_flags(j, false);
	rt_mutex_lock(&j->j_state_lock);
	j->j_abort_recorded = true;
	rt_cond_broadcast(&j->j_wait_done_commit); /* __jbd_abort_told */
	rt_mutex_unlock(&j->j_state_lock);
	rt_mutex_unlock(&j->j_sb_mutex);
}

int __jbd_abort_told(struct ujbd *j, int rc)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (!rc || !(j->j_flags & JBD_F_ABORTED))
		return rc;
	while (!j->j_abort_recorded && !(j->j_flags & JBD_F_HARD))
		rt_cond_wait(&j->j_wait_done_commit, &j->j_state_lock);
	return rc;
}

int jbd_abort_told(struct ujbd *j, int rc)
{
	if (!rc || !__atomic_load_n(&j->j_aborted, __ATOMIC_ACQUIRE))
		return rc;
	rt_mutex_lock(&j->j_state_lock);
	rc = __jbd_abort_told(j, rc);
	rt_mutex_unlock(&j->j_state_lock);
	return rc;
}

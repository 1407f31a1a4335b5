/*
 * commit.c: the commit of one transaction, phase by phase (the thread that
 * runs it, and those who ask for it, are kjournald.c's).
 *
 * The one idea: a transaction becomes durable the moment its commit block
 * is, so everything it depends on must be durable first: its ordered data
 * (written home and waited for; when the data device is not the journal's,
 * also flushed, that flush running beside the log writes) and its log
 * blocks (written under one plug, unplugged explicitly, waited for); then
 * the commit block goes out with PREFLUSH|FUA, which orders it after all of
 * them on the journal device. Writeback data is written with the commit
 * but not waited for before the commit block (only before the commit is
 * done, so one home write of a block is in flight at a time).
 * Only then are waiters told, and only then may its buffers be written
 * home by the checkpoint.
 *
 * The phases of one commit, each boundary timestamped for the statistics
 * and traced under the kernel's tracepoint name:
 *   0. start        jbd2_start_commit
 *   1. lock         T_LOCKED: no new handles; wait for t_updates to drain
 *                   (jbd2_commit_locking); then T_FLUSH, the transaction is
 *                   the committing one and a new one may start
 *   2. flush data   ordered data written home (jbd2_commit_flushing): on
 *                   the journal's own device left in flight with the log
 *                   blocks (the commit block's PREFLUSH covers them once
 *                   they complete); on another device waited for, then
 *                   that device's flush is started; writeback data left in
 *                   flight until the commit block is written
 *   3. log          T_COMMIT (jbd2_commit_logging): superblock if the log
 *                   was empty, revoke blocks, descriptors and the copies of
 *                   the buffers, under a blk_plug; their bytes built by
 *                   logblock.c (the builder the offline writer shares),
 *                   written through this file's sink: log_put of the
 *                   ring slot that holds the block
 *   4. unplug       explicit blk_finish_plug, wait for the log I/O (and
 *                   ordered data); with a data-device flush in flight, the
 *                   journal's flush is issued beside it and both waited for
 *   5. commit block PREFLUSH|FUA (FUA alone after the flushes of phase 4;
 *                   async commit: with the log blocks, then one flush, or
 *                   all of them one FUA write when they are one run);
 *                   then writeback data waited for
 *   6. done         sequence moved, waiters woken (jbd2_end_commit,
 *                   jbd2_run_stats); when the commit's last write is the
 *                   only one in flight, run by its completion, on the
 *                   thread that completes it, not after a hop to kjournald
 *   7. checkpoint   buffers refiled to the checkpoint list, earlier copies
 *                   dropped, the checkpoint thread told if space is short
 *
 * Nothing here allocates: the I/O ring and the revoke tables were
 * allocated at open. Copies of buffer bytes are taken under j_state_lock
 * (see runtime.h), so the running transaction never waits for this I/O.
 */
#include <stddef.h>
#include <stdlib.h>

#include "jbd/runtime.h"

/* ---- the I/O ring ----------------------------------------------------- */

struct commit_ctx {
	struct ujbd *j;
	struct jbd_txn *t;
	uint64_t start_ns, locked_ns, flush_ns, log_ns, end_ns;
	uint32_t blk;          /* next log block */
	uint32_t ring_used;
	uint32_t ring_base;    /* slots [0, ring_base): writeback data still in
				* flight, waited for only by ring_wait_all */
	uint32_t nbuf;         /* metadata buffers logged */
	uint32_t ndata;        /* data blocks written home */
	uint32_t logged;       /* log blocks written, commit block included */
	/* The log-block builder (logblock.c) writing through sink: log_put
	 * of the ring slot that holds the block. */
	struct jbd_lb lb;
	struct jbd_log_sink sink;
	ujbd_data_fn data_fn;  /* the caller's ordered data (ujbd_set_data_hook) */
	void *data_arg;
	uint32_t data_blocks;  /* what data_fn wrote */
	uint16_t prio;         /* b_ioprio of this commit's bios (0: thread's) */
	uint64_t tag;          /* inherit: its bios' b_boost_tag (j_boost_tag) */
	uint32_t jflags;       /* journal write flags */
	/* The log blocks not yet submitted: a run of ring slots that follow
	 * each other in memory and on the journal device, sent as one bio
	 * (run_submit); runs counts the runs this commit sent before. */
	uint32_t run_slot, run_n, runs;
	uint64_t run_off;      /* device byte offset of the run's first block */
	bool async;            /* async commit (phase_commit_block) */
	struct jbd_werr werr0; /* jbd_write_errors when the commit began */
	bool caller;           /* run by an fsync (caller_commit), not kjournald */
	/* The last write in flight, whose completion ends the commit
	 * (run_submit_last); last_err its result. [j_state_lock] */
	bool last_busy;
	int last_err;
	bool last_sent;        /* kjournald's: run_submit_last sent it */
	bool run_hold;         /* log_put keeps even a lone block pending */
	bool plugged;
	struct blk_plug plug;
	struct blk_bio dflush; /* the data device's flush (ordered data) */
	bool dflush_busy;
	struct jbd_tag *tags;  /* j_dcap of them (allocated at open) */
	struct jbd_iobuf **slots; /* j_dcap */
	uint64_t *revs;        /* j_rcap */
};

static bool hard_stop(struct ujbd *j)
{
	return __atomic_load_n(&j->j_flags, __ATOMIC_ACQUIRE) & JBD_F_HARD;
}

static struct jbd_iobuf *ring_slot(struct ujbd *j, struct commit_ctx *c)
{
	ASSERT(c->ring_used < j->j_ring_n);
	ASSERT(!j->j_ring[c->ring_used].io_jh);
	return &j->j_ring[c->ring_used++];
}

/* The priority of the commit's next bio: raised by waiters meanwhile
 * under inherit (j_commit_prio), else fixed. Called by the committing
 * thread only: kjournald follows the raise itself too, so its writes
 * without an explicit priority (the superblock's) do not pull its CFQ
 * queue back down. */
static uint16_t commit_prio(struct ujbd *j, const struct commit_ctx *c)
{
	uint16_t p;

	/* a tag exactly when the commit inherits its waiters' priority */
	ASSERT(c->j == j && !c->tag == (j->j_opts.commit_ioprio != UJBD_IOPRIO_INHERIT));
	if (!c->tag)
		return c->prio;
	p = __atomic_load_n(&j->j_commit_prio, __ATOMIC_ACQUIRE);
	if (!c->caller && rt_ioprio_get() != p)
		rt_ioprio_set(p);
	return p;
}

static void run_end_io(struct blk_bio *b);

static int io_submit(struct blk_queue *q, struct jbd_iobuf *io, uint64_t sector,
		     uint32_t nsec, uint32_t flags, uint16_t prio, uint64_t tag)
{
	ASSERT(!io->io_busy && nsec > 0); /* a slot is reused only once waited for */
	memset(&io->io_bio, 0, sizeof(io->io_bio));
	io->io_err = 0;
	io->io_bio.b_op = BLK_OP_WRITE;
	io->io_bio.b_flags = flags;
	io->io_bio.b_sector = sector;
	io->io_bio.b_nr_sectors = nsec;
	io->io_bio.b_buf = io->io_data;
	io->io_bio.b_ioprio = prio;
	io->io_bio.b_boost_tag = tag;
	int rc = blk_submit(q, &io->io_bio);
	io->io_busy = io->io_sent = rc == 0;
	ASSERT(rc <= 0);
	return rc;
}

/* Log blocks per bio at most: the block layer's default largest request. */
#define RUN_MAX_BYTES (512u << 10)

/* Send the pending run of log blocks as one bio with flags. */
static int run_submit(struct ujbd *j, struct commit_ctx *c, uint32_t flags)
{
	uint32_t nsec = j->j_blocksize >> BLK_SECTOR_SHIFT;
	int rc;

	if (!c->run_n)
		return 0;
	ASSERT(c->run_slot + c->run_n <= c->ring_used);
	struct jbd_iobuf *io = &j->j_ring[c->run_slot];
	if (j->j_opts.under_commit == UJBD_UNDER_COMMIT_WAIT_IO && !(flags & BLK_POLLED)) {
		/* wait-io: the run's completion releases its buffers */
		memset(&io->io_bio, 0, sizeof(io->io_bio));
		io->io_bio.b_end_io = run_end_io;
		io->io_bio.b_private = j;
		rt_mutex_lock(&j->j_state_lock);
		io->io_busy = true;
		rt_mutex_unlock(&j->j_state_lock);
		io->io_err = 0;
		io->io_bio.b_op = BLK_OP_WRITE;
		io->io_bio.b_flags = flags;
		io->io_bio.b_sector = c->run_off >> BLK_SECTOR_SHIFT;
		io->io_bio.b_nr_sectors = c->run_n * nsec;
		io->io_bio.b_buf = io->io_data;
		io->io_bio.b_ioprio = commit_prio(j, c);
		io->io_bio.b_boost_tag = c->tag;
		rc = blk_submit(j->j_jq, &io->io_bio);
		io->io_sent = rc == 0;
		if (rc) {
			rt_mutex_lock(&j->j_state_lock);
			io->io_busy = false;
			rt_mutex_unlock(&j->j_state_lock);
		}
	} else {
		rc = io_submit(j->j_jq, io, c->run_off >> BLK_SECTOR_SHIFT, c->run_n * nsec,
			       flags, commit_prio(j, c), c->tag);
	}
	c->run_n = 0;
	c->runs++;
	return rc;
}

static void commit_end_io(struct blk_bio *b);
static int ring_wait(struct ujbd *j, struct commit_ctx *c);

/*
 * Send the pending run as the commit's last write: every other write of
 * the commit has completed (or, async, there is none). Where the device
 * can poll, this thread runs it and then phase 6. Elsewhere its
 * completion runs phase 6 on the thread that completes it (commit_end_io),
 * so the fsync waiters wake straight from the I/O completion instead of
 * after a hand-off to the committing thread; that thread waits for it in
 * __commit.
 */
static int run_submit_last(struct ujbd *j, struct commit_ctx *c, uint32_t flags)
{
	struct jbd_iobuf *io = &j->j_ring[c->run_slot];
	struct blk_bio *b = &io->io_bio;
	int rc;

	ASSERT(c->run_n > 0 && c->run_slot + c->run_n == c->ring_used);
	if (dev_can_poll(blk_queue_dev(j->j_jq))) {
		/* Better still: this thread runs the write itself (polled
		 * I/O), then phase 6 (__commit), and no thread hop is left
		 * between the device and the waiters but the wakeup. */
		rc = run_submit(j, c, flags | BLK_POLLED);
		return rc ? rc : ring_wait(j, c);
	}
	memset(b, 0, sizeof(*b));
	b->b_op = BLK_OP_WRITE;
	b->b_flags = flags;
	b->b_sector = c->run_off >> BLK_SECTOR_SHIFT;
	b->b_nr_sectors = c->run_n * (j->j_blocksize >> BLK_SECTOR_SHIFT);
	b->b_buf = io->io_data;
	b->b_ioprio = commit_prio(j, c);
	b->b_boost_tag = c->tag;
	b->b_end_io = commit_end_io;
	b->b_private = c;
	io->io_busy = io->io_sent = false; /* not for blk_wait: see __commit */
	c->run_n = 0;
	c->runs++;
	rt_mutex_lock(&j->j_state_lock);
	c->last_busy = true;
	rt_mutex_unlock(&j->j_state_lock);
	if (c->plugged) {
		/* the unplug that sends it, beside what the plug holds */
		rc = blk_submit(j->j_jq, b);
		blk_finish_plug(&c->plug);
		c->plugged = false;
	} else {
		rc = blk_submit(j->j_jq, b);
	}
	if (rc) {
		rt_mutex_lock(&j->j_state_lock);
		c->last_busy = false;
		rt_mutex_unlock(&j->j_state_lock);
	}
	c->last_sent = rc == 0;
	return rc;
}

/* The log writes of slots [from, to) completed (or failed: the journal
 * aborts then): their buffers are no longer shadowed. Lock held. */
static void __ring_unshadow(struct ujbd *j, uint32_t from, uint32_t to)
{
	bool any = false;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(from <= to && to <= j->j_ring_n);
	for (uint32_t i = from; i < to; i++) {
		struct jbd_iobuf *io = &j->j_ring[i];
		if (!io->io_jh)
			continue;
		ASSERT(io->io_jh->b_shadow);
		io->io_jh->b_shadow = false;
		io->io_jh = NULL;
		any = true;
	}
	if (any)
		rt_cond_broadcast(&j->j_wait_shadow);
}

/* The slots a run bio at slot i carries. */
static uint32_t run_slots(const struct ujbd *j, const struct jbd_iobuf *io)
{
	return (uint32_t)(io->io_bio.b_nr_sectors / (j->j_blocksize >> BLK_SECTOR_SHIFT));
}

/* wait-io (jbd2 since 3.11): a run's completion releases the buffers it
 * logged at once, on the completing thread, and tells ring_wait. */
static void run_end_io(struct blk_bio *b)
{
	struct ujbd *j = b->b_private;
	struct jbd_iobuf *io = (struct jbd_iobuf *)((char *)b - offsetof(struct jbd_iobuf, io_bio));
	uint32_t i = (uint32_t)(io - j->j_ring);

	rt_mutex_lock(&j->j_state_lock);
	ASSERT(io->io_busy && i < j->j_ring_n);
	io->io_err = b->b_error;
	__ring_unshadow(j, i, i + run_slots(j, io));
	io->io_busy = false;
	rt_cond_broadcast(&j->j_wait_shadow);
	rt_mutex_unlock(&j->j_state_lock);
}

int jbd_iobuf_wait(struct ujbd *j, struct jbd_iobuf *io, rt_cond *done)
{
	int r;

	ASSERT(io->io_sent);
	io->io_sent = false;
	if (!io->io_bio.b_end_io) {
		r = blk_wait(&io->io_bio);
		io->io_busy = false;
		return r;
	}
	rt_mutex_lock(&j->j_state_lock);
	while (io->io_busy)
		rt_cond_wait(done, &j->j_state_lock);
	r = io->io_err;
	rt_mutex_unlock(&j->j_state_lock);
	return r;
}

/* Wait for the run at slot i; its result. */
static int run_wait(struct ujbd *j, struct jbd_iobuf *io)
{
	return jbd_iobuf_wait(j, io, &j->j_wait_shadow);
}

/*
 * Finish the plug (the explicit unplug), wait for the slots from ring_base
 * on, free them (writeback data below ring_base stays in flight), and
 * release the buffers they logged by the journal's rule: wait-io's run
 * completions released theirs already; wait-loop walks the runs newest
 * first, as jbd's wait loop walked t_iobuf_list from its tail, releasing
 * each run's buffers when its wait returns; wait-io with polled runs
 * (this thread completes them) releases them as it waits, oldest first.
 */
static int ring_wait(struct ujbd *j, struct commit_ctx *c)
{
	bool loop = j->j_opts.under_commit == UJBD_UNDER_COMMIT_WAIT_LOOP;
	bool shadows = j->j_opts.under_commit != UJBD_UNDER_COMMIT_COPY;
	int rc = run_submit(j, c, c->jflags), r;
	uint32_t n = c->ring_used - c->ring_base;

	if (c->plugged) {
		blk_finish_plug(&c->plug);
		c->plugged = false;
	}
	ASSERT(c->run_n == 0 && c->ring_base <= c->ring_used);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = loop ? c->ring_used - 1 - k : c->ring_base + k;
		struct jbd_iobuf *io = &j->j_ring[i];
		if (!io->io_sent)
			continue;
		uint32_t runs = run_slots(j, io);
		bool ended = io->io_bio.b_end_io != NULL;
		r = run_wait(j, io);
		if (r && !rc)
			rc = r;
		if (shadows && !ended) {
			rt_mutex_lock(&j->j_state_lock);
			__ring_unshadow(j, i, i + runs < c->ring_used ? i + runs : c->ring_used);
			rt_mutex_unlock(&j->j_state_lock);
		}
	}
	if (shadows) {
		/* slots of runs not sent (a submit error) */
		rt_mutex_lock(&j->j_state_lock);
		__ring_unshadow(j, c->ring_base, c->ring_used);
		rt_mutex_unlock(&j->j_state_lock);
	}
	c->ring_used = c->ring_base;
	return rc;
}

/* Wait for every slot, writeback data included. */
static int ring_wait_all(struct ujbd *j, struct commit_ctx *c)
{
	c->ring_base = 0;
	return ring_wait(j, c);
}

/* Wait for the data device's flush, if one is in flight. */
static int dflush_wait(struct commit_ctx *c)
{
	ASSERT(!c->dflush_busy || c->j->j_dq != c->j->j_jq); /* only another device's */
	if (!c->dflush_busy)
		return 0;
	c->dflush_busy = false;
	return blk_wait(&c->dflush);
}

/* Start a flush of q (no wait); 0 or the submit error. */
static int flush_submit(struct blk_queue *q, struct blk_bio *b)
{
	ASSERT(q && b);
	memset(b, 0, sizeof(*b));
	b->b_op = BLK_OP_FLUSH;
	b->b_flags = BLK_SYNC | BLK_PREFLUSH;
	return blk_submit(q, b);
}

static void ring_plug(struct commit_ctx *c)
{
	ASSERT(c->ring_used <= c->j->j_ring_n);
	if (!c->plugged) {
		blk_start_plug(&c->plug);
		c->plugged = true;
	}
}

/* Make room for n slots: wait for the ring if it is too full. */
static int ring_reserve(struct ujbd *j, struct commit_ctx *c, uint32_t n)
{
	int rc = 0;

	ASSERT(n <= j->j_ring_n);
	if (c->ring_used + n > j->j_ring_n)
		rc = ring_wait(j, c);
	if (!rc && c->ring_used + n > j->j_ring_n)
		rc = ring_wait_all(j, c); /* writeback data holds the room */
	ring_plug(c);
	ASSERT(rc || c->ring_used + n <= j->j_ring_n);
	return rc;
}

/*
 * Slot io is the next log block. Async commit: it joins the pending run
 * if it follows the run's last block both in the ring and on the device
 * (the log does not wrap there, the journal's extents are contiguous),
 * else the run is sent and io starts the next one. Otherwise each block is
 * its own bio at once (the plug merges them; the ring's slots being
 * consecutive in memory, the merged request needs no bounce copy).
 */
static int log_put(struct ujbd *j, struct commit_ctx *c, struct jbd_iobuf *io)
{
	uint32_t slot = (uint32_t)(io - j->j_ring), bs = j->j_blocksize;
	uint64_t off;
	int rc = jbd_loc_offset(&j->j_jnl.j_loc, c->blk, &off);

	ASSERT(slot < c->ring_used);
	c->blk = jbd_log_next(&j->j_jnl, c->blk);
	c->logged++;
	if (rc)
		return rc;
	if (c->async && c->run_n && slot == c->run_slot + c->run_n &&
	    off == c->run_off + (uint64_t)c->run_n * bs && (c->run_n + 1) * bs <= RUN_MAX_BYTES) {
		c->run_n++;
		return 0;
	}
	rc = run_submit(j, c, c->jflags);
	c->run_slot = slot;
	c->run_off = off;
	c->run_n = 1;
	if (!rc && !c->async && !c->run_hold)
		rc = run_submit(j, c, c->jflags);
	return rc;
}

/* The builder's sink: its blocks are ring slots' memory (the ring is one
 * allocation, slot i at j_ring_mem + i * blocksize). */
static int ring_sink_put(struct jbd_log_sink *s, uint32_t blk, void *block)
{
	struct commit_ctx *c = (struct commit_ctx *)((char *)s - offsetof(struct commit_ctx, sink));
	struct ujbd *j = c->j;
	size_t slot = (size_t)((uint8_t *)block - j->j_ring_mem) / j->j_blocksize;

	ASSERT(slot < j->j_ring_n && j->j_ring[slot].io_data == block);
	ASSERT(blk == c->blk);
	return log_put(j, c, &j->j_ring[slot]);
}

/* ---- phase 1: lock ---------------------------------------------------------- */

static uint32_t __count_dirty(const struct jbd_txn *t)
{
	uint32_t n = 0;

	const struct jbd_jh *jh;

	RT_LIST_FOR_EACH(jh, &t->t_buffers, const struct jbd_jh, b_tlink)
		n += jh->b_dirty && !jh->b_forget;
	ASSERT(n <= t->t_nr_buffers && n <= t->t_outstanding); /* a credit each */
	return n;
}

/* Wait for the handles; make t the committing transaction. Lock held. */
static int __phase_lock(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_txn *t = c->t;
	uint32_t nbuf;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(t == j->j_running && t->t_state == T_RUNNING && j->j_commit_busy);
	c->start_ns = rt_now_ns();
	JBD_TRACE(&j->j_tracer, jbd2_start_commit, t->t_tid, t->t_synchronous_commit, 0, 0, 0, 0, 0);
	t->t_state = T_LOCKED;
	/* Close t to slot handles, then wait for them and the locked path's
	 * (slot.c: each side stores, then loads the other's word). */
	__atomic_store_n(&j->j_open, NULL, __ATOMIC_SEQ_CST);
	__atomic_store_n(&j->j_drain_waiting, true, __ATOMIC_SEQ_CST);
	c->locked_ns = t->t_locked_ns = rt_now_ns();
	JBD_TRACE(&j->j_tracer, jbd2_commit_locking, t->t_tid, t->t_synchronous_commit, 0, 0, 0, 0, 0);
	while (t->t_updates > 0 || __jbd_slots_hold(j, t)) {
		if (j->j_flags & JBD_F_HARD) {
			__atomic_store_n(&j->j_drain_waiting, false, __ATOMIC_SEQ_CST);
			return -ESHUTDOWN;
		}
		rt_cond_wait(&j->j_wait_updates, &j->j_state_lock);
	}
	__atomic_store_n(&j->j_drain_waiting, false, __ATOMIC_SEQ_CST);
	ASSERT(t->t_updates == 0 && __atomic_load_n(&j->j_open, __ATOMIC_RELAXED) == NULL);
	t->t_handle_count += __jbd_slots_handles(j, t);
	ASSERT(j->j_committing == NULL && j->j_running == t);
	t->t_state = T_FLUSH;
	c->flush_ns = rt_now_ns();
	j->j_committing = t;
	j->j_running = NULL;
	if (!ujbd_tid_geq(j->j_commit_request, t->t_tid))
		j->j_commit_request = t->t_tid;
	nbuf = __count_dirty(t);
	t->t_log_need = jbd_txn_revoke_blocks(j, t) + nbuf + (nbuf + j->j_dcap - 1) / j->j_dcap + 1;
	ASSERT(t->t_log_need <= jbd_log_res(j, t->t_outstanding) + j->j_slack);
	c->nbuf = nbuf;
	c->ndata = t->t_nr_data; /* complete: the commit before refiled its own */
	rt_cond_broadcast(&j->j_wait_transaction_locked);
	rt_cond_broadcast(&j->j_wait_space);
	JBD_TRACE(&j->j_tracer, jbd2_commit_flushing, t->t_tid, t->t_synchronous_commit, 0, 0, 0, 0, 0);
	return 0;
}

/* The I/O flags and priority of this commit's journal writes: the knobs of
 * ujbd.h's commit_ioprio, journal_meta and journal_sync. Lock held. */
static void __io_policy(struct ujbd *j, struct commit_ctx *c)
{
	const struct ujbd_opts *o = &j->j_opts;
	bool sync = o->journal_sync == UJBD_SYNC_ALL ||
		    (o->journal_sync == UJBD_SYNC_FSYNC_ONLY && c->t->t_synchronous_commit);

	ASSERT(rt_mutex_held(&j->j_state_lock) && c->t == j->j_committing);
	ASSERT(!c->tag); /* set once per commit */

	/* The log is written once and read back only by recovery (which
	 * reads past the cache itself): past the host's page cache where the
	 * journal's device has a direct path (BLK_DIRECT). */
	c->jflags = (sync ? BLK_SYNC : 0) | (o->journal_meta ? BLK_META : 0) |
		    (sync && o->journal_noidle ? BLK_NOIDLE : 0) | BLK_DIRECT;
	if (o->commit_ioprio != UJBD_IOPRIO_INHERIT) {
		/* kjournald's own, set at start; an fsync's bios carry it */
		c->prio = c->caller ? o->commit_ioprio : 0;
		return;
	}
	c->prio = jbd_inherit_prio(c->t->t_waiter_prio);
	/* waiters from now on raise it, queued bios included (__jbd_inherit) */
	c->tag = 1ull << 63 | j->j_id << 32 | c->t->t_tid;
	j->j_boost_tag = c->tag;
	__atomic_store_n(&j->j_commit_prio, c->prio, __ATOMIC_RELEASE);
	/* the bios carry it; kjournald's own syscalls follow it too, but an
	 * fsync's thread keeps its priority */
	if (!c->caller && rt_ioprio_get() != c->prio)
		rt_ioprio_set(c->prio);
}

/* ---- phase 2: ordered data ------------------------------------------------ */

/*
 * The last batch of data writes is in flight. WRITEBACK gives up their
 * ordering: they stay in flight, below ring_base, until the commit block
 * is written. ORDERED on the journal's device: they go on with the log
 * blocks and are waited for with them; the commit block's PREFLUSH then
 * makes them durable (no flush of their own). ORDERED on another device:
 * waited for now, and that device's flush starts at once, running beside
 * the log writes; the commit block waits for it.
 */
static int data_last_batch(struct ujbd *j, struct commit_ctx *c)
{
	int rc;

	ASSERT(!c->dflush_busy); /* one data flush per commit */
	if (rt_list_empty(&c->t->t_data) && !c->data_blocks && !c->t->t_nr_direct)
		return 0;
	if (j->j_opts.data_mode == UJBD_DATA_WRITEBACK) {
		c->ring_base = c->ring_used;
		return 0;
	}
	if (j->j_dq == j->j_jq)
		return 0;
	rc = ring_wait(j, c);
	if (!rc) {
		if (!j->j_opts.barrier)
			return 0;
		rc = flush_submit(j->j_dq, &c->dflush);
		c->dflush_busy = rc == 0;
	}
	return rc;
}

/*
 * The caller's ordered data (ujbd_set_data_hook), written and waited for by
 * the hook before anything else of the commit, as jbd wrote a
 * transaction's ordered data before its log blocks.
 */
static int data_hook(struct ujbd *j, struct commit_ctx *c)
{
	struct ujbd_data_io io = { .tid = c->t->t_tid, .bio_flags = c->jflags & BLK_SYNC,
				   .ioprio = commit_prio(j, c), .boost_tag = c->tag };
	int n;

	ASSERT(c->data_blocks == 0 && !rt_mutex_held(&j->j_state_lock)); /* the hook does I/O */
	if (!c->data_fn || j->j_opts.data_mode != UJBD_DATA_ORDERED)
		return 0;
	n = c->data_fn(c->data_arg, &io);
	if (n < 0)
		return n;
	c->data_blocks = (uint32_t)n;
	return 0;
}

static int phase_data(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_txn *t = c->t;
	struct jbd_jh *jh = RT_LIST_FIRST(&t->t_data, struct jbd_jh, b_dlink);
	uint32_t nsec = j->j_blocksize >> BLK_SECTOR_SHIFT;
	uint32_t dflags = c->jflags & BLK_SYNC;
	int rc = data_hook(j, c);

	ASSERT(t->t_state == T_FLUSH && c->ring_used == 0); /* data goes first */
	/* t_data is stable: only this thread changes a committing list. A
	 * block still being written home by the checkpoint (its old copy:
	 * revoked and reused as data since) is written after that write
	 * ends; no new checkpoint write of a block in t_data starts while
	 * this transaction commits (checkpoint.c __cp_holder). */
	while (jh && !rc) {
		uint32_t n = 0;
		struct jbd_jh *first = jh;
		rt_mutex_lock(&j->j_state_lock);
		for (; jh && n < j->j_ring_n; jh = RT_LIST_NEXT(&t->t_data, jh, struct jbd_jh, b_dlink), n++) {
			__jbd_wait_ckpt_io(j, jh);
			memcpy(j->j_ring[n].io_data, jh->jh_buf->b_data, j->j_blocksize);
		}
		rt_mutex_unlock(&j->j_state_lock);
		ring_plug(c);
		jh = first;
		for (uint32_t i = 0; i < n && !rc; i++, jh = RT_LIST_NEXT(&t->t_data, jh, struct jbd_jh, b_dlink)) {
			struct jbd_iobuf *io = ring_slot(j, c);
			rc = io_submit(j->j_dq, io, jh->jh_buf->b_blocknr * nsec, nsec, dflags,
				       commit_prio(j, c), c->tag);
		}
		/* more to copy: the ring is reused, this batch must end */
		if (jh || rc) {
			int w = ring_wait(j, c);
			rc = rc ? rc : w;
		}
	}
	return rc ? rc : data_last_batch(j, c);
}

/* ---- phase 3: log blocks ---------------------------------------------------- */

static int log_revokes(struct ujbd *j, struct commit_ctx *c)
{
	const struct jbd_revoke_table *rt = c->t->t_revoke;
	uint32_t i = 0;
	int rc = 0;

	ASSERT(rt && c->t->t_state >= T_FLUSH);
	/* The committing table is stable: revokes go to the running one. */
	while (!rc) {
		size_t n = 0;
		struct jbd_iobuf *io;
		for (; i < rt->rt_n && n < j->j_rcap; i++)
			if (rt->rt_blocks[i] != UINT64_MAX)
				c->revs[n++] = rt->rt_blocks[i];
		if (!n)
			break;
		rc = ring_reserve(j, c, 1);
		if (rc)
			break;
		io = ring_slot(j, c);
		ASSERT(n <= j->j_rcap);
		rc = jbd_lb_revoke(&c->lb, io->io_data, c->revs, n);
	}
	return rc;
}

/* Copy the next up to j_dcap dirty buffers into slots; returns the count
 * and leaves *pos after the last one. Lock taken here. */
static uint32_t log_copy(struct ujbd *j, struct commit_ctx *c, struct jbd_jh **pos,
			 struct jbd_iobuf **slots)
{
	struct jbd_jh *jh = *pos;
	uint32_t n = 0;

	rt_mutex_lock(&j->j_state_lock);
	for (; jh && n < j->j_dcap; jh = RT_LIST_NEXT(&c->t->t_buffers, jh, struct jbd_jh, b_tlink)) {
		ASSERT(jh->b_transaction == c->t && !jh->b_logged);
		if (!jh->b_dirty || jh->b_forget)
			continue;
		const uint8_t *src = jh->b_frozen_data ? jh->b_frozen_data : jh->jh_buf->b_data;
		slots[n] = ring_slot(j, c);
		memcpy(slots[n]->io_data, src, j->j_blocksize);
		c->tags[n] = (struct jbd_tag){ jh->jh_buf->b_blocknr, 0, 0 };
		jh->b_logged = true;
		if (j->j_opts.under_commit != UJBD_UNDER_COMMIT_COPY) {
			/* its journal copy is in flight from now to ring_wait
			 * (or, sent as the commit's last write, to phase 6) */
			jh->b_shadow = true;
			slots[n]->io_jh = jh;
		}
		if (jh->b_frozen_data) {
			free(jh->b_frozen_data);
			jh->b_frozen_data = NULL;
			jh->jh_buf->b_jstate &= ~BUF_J_FROZEN;
		}
		n++;
	}
	ASSERT(c->t->t_state == T_COMMIT && c->ring_used <= j->j_ring_n);
	rt_mutex_unlock(&j->j_state_lock);
	*pos = jh;
	return n;
}

/* One descriptor and its n copies (escaped, checksummed). */
static int log_chunk(struct ujbd *j, struct commit_ctx *c, struct jbd_iobuf *desc,
		     struct jbd_iobuf **slots, uint32_t n)
{
	int rc;

	ASSERT(n >= 1 && n <= j->j_dcap && desc != slots[0]);
	for (uint32_t i = 0; i < n; i++)
		jbd_lb_data_prep(&c->lb, slots[i]->io_data, &c->tags[i]);
	rc = jbd_lb_desc(&c->lb, desc->io_data, c->tags, n);
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = jbd_lb_data(&c->lb, slots[i]->io_data);
	return rc;
}

static int log_buffers(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_jh *pos = RT_LIST_FIRST(&c->t->t_buffers, struct jbd_jh, b_tlink);
	struct jbd_iobuf **slots = c->slots;
	int rc = 0;

	for (uint32_t done = 0; done < c->nbuf && !rc;) {
		rc = ring_reserve(j, c, j->j_dcap + 1 < j->j_ring_n ? j->j_dcap + 1 : j->j_ring_n);
		if (rc)
			break;
		struct jbd_iobuf *desc = ring_slot(j, c);
		uint32_t n = log_copy(j, c, &pos, slots);
		ASSERT(n > 0);
		rc = log_chunk(j, c, desc, slots, n);
		done += n;
	}
	return rc;
}

static int phase_log(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_txn *t = c->t;
	bool empty, sync;
	int rc;

	rt_mutex_lock(&j->j_state_lock);
	ASSERT(t->t_state == T_FLUSH && j->j_committing == t);
	t->t_state = T_COMMIT;
	c->log_ns = rt_now_ns();
	t->t_log_start = c->blk = j->j_head;
	empty = j->j_sb_empty;
	/* a waiter may still mark the transaction synchronous [j_state_lock] */
	sync = t->t_synchronous_commit;
	rt_mutex_unlock(&j->j_state_lock);
	JBD_TRACE(&j->j_tracer, jbd2_commit_logging, t->t_tid, sync, 0, 0, 0, 0, 0);
	/* A commit block must never be durable in a log nobody will read. */
	if (empty) {
		/* data writes left in our plug go out first: no bio of ours
		 * waits in a plug while we wait for j_sb_mutex */
		if (c->plugged) {
			blk_finish_plug(&c->plug);
			c->plugged = false;
		}
		rc = jbd_update_tail(j, false);
		if (rc)
			return rc;
	}
	c->sink.ls_put = ring_sink_put;
	jbd_lb_begin(&c->lb, &j->j_jnl, &c->sink, t->t_tid, c->blk);
	ASSERT(c->logged == 0 && c->blk == t->t_log_start);
	rc = log_revokes(j, c);
	if (!rc)
		rc = log_buffers(j, c);
	ASSERT(rc || c->logged + 1 == t->t_log_need); /* the commit block is left */
	return rc;
}

/* ---- phase 5: the commit block ------------------------------------------ */

/* async: the transaction depends on no block outside the journal
 * (writeback data is not ordered against the commit), and the block
 * checksums let recovery find a log torn under its commit block. */
/* Async commit, unless ordered data (the journal's or the caller's, which
 * may be written any time) must be durable before the commit block. */
static bool commit_async(const struct ujbd *j, const struct commit_ctx *c)
{
	bool ordered = j->j_opts.data_mode == UJBD_DATA_ORDERED;

	ASSERT(c->t == j->j_committing);
	return j->j_async && j->j_jnl.j_fmt.f_csum_v23 &&
	       ((rt_list_empty(&c->t->t_data) && !c->t->t_nr_direct) ||
		j->j_opts.data_mode == UJBD_DATA_WRITEBACK) &&
	       !(ordered && c->data_fn);
}

/*
 * Async commit: the commit block goes with the log blocks, then one flush
 * makes them all durable. When the whole log of the transaction is one run
 * (the usual small fsync commit: nothing of it sent yet) and no data is in
 * flight beside it, the run goes as one FUA write instead: the same one
 * flush (FUA makes the whole bio durable before it completes), without a
 * round trip to the device and back to this thread in between. Otherwise
 * every log write is waited for, then the flush.
 */
static int commit_async_end(struct ujbd *j, struct commit_ctx *c)
{
	int rc, w;

	ASSERT(c->async && !c->last_busy);
	if (c->runs == 0 && rt_list_empty(&c->t->t_data))
		return run_submit_last(j, c, c->jflags | jbd_barrier_flags(j, BLK_FUA));
	rc = run_submit(j, c, c->jflags);
	w = ring_wait_all(j, c);       /* writeback data too */
	rc = rc ? rc : w;
	return rc ? rc : jbd_flush(j, j->j_jq);
}

struct jbd_werr jbd_write_errors(const struct ujbd *j)
{
	return (struct jbd_werr){
		.w_jq = blk_write_errors(j->j_jq),
		.w_dq = j->j_dq != j->j_jq ? blk_write_errors(j->j_dq) : 0,
	};
}

int jbd_writes_sound(const struct ujbd *j, const struct jbd_werr *werr0)
{
	struct jbd_werr now;
	int e;

	if (__atomic_load_n(&j->j_aborted, __ATOMIC_ACQUIRE))
		return jbd_abort_errno(j);
	now = jbd_write_errors(j);
	/* Not aborted yet: the failing write's owner has not got there (a
	 * checkpoint's, on its thread), or will not (another writer on the
	 * queue). Its errno, not an -EIO of our own, which, aborting first,
	 * would be what s_errno and every caller see. */
	if (now.w_jq != werr0->w_jq)
		e = blk_write_errno(j->j_jq);
	else if (now.w_dq != werr0->w_dq)
		e = blk_write_errno(j->j_dq);
	else
		return 0;
	ASSERT(now.w_jq >= werr0->w_jq && now.w_dq >= werr0->w_dq); /* counts only grow */
	return e < 0 ? e : -EIO;
}

/*
 * May this commit's block go out, and once it is durable, may it be
 * acknowledged? Not if, since the commit began, any write or flush on the
 * journal's devices failed or the journal aborted: a device (or a page
 * cache) that fails a flush may drop what it could not write, this
 * commit's data and log blocks with it, whatever their own completions
 * and a later flush say (fsyncgate).
 */
static int commit_still_sound(struct ujbd *j, const struct commit_ctx *c)
{
	return jbd_writes_sound(j, &c->werr0);
}

/* The files under the journal are still its own: a journal file unlinked
 * or replaced while open (renamed over) would take this commit and every
 * later one with it, acknowledged and lost, so the commit aborts instead.
 * Checked just before the commit block: two system calls per file. */
static int commit_check_files(struct ujbd *j)
{
	const struct jbd_loc *loc = &j->j_jnl.j_loc;

	if (dev_check(loc->j_dev) || (loc->j_data != loc->j_dev && dev_check(loc->j_data)))
		return -UJBD_EGONE;
	return 0;
}

static int phase_commit_block(struct ujbd *j, struct commit_ctx *c)
{
	bool async = c->async;
	uint32_t cflags = jbd_barrier_flags(j, BLK_PREFLUSH | BLK_FUA);
	uint64_t wall = rt_wall_ns(); /* the commit block's time: jbd2's is the time of day */
	struct jbd_iobuf *io;
	int rc = 0;

	if (!async) {
		rc = ring_wait(j, c);                    /* phase 4 */
		if (c->dflush_busy) {
			/* ordered data on another device: its flush has run
			 * beside the log writes; the journal's runs now, beside
			 * its end, and the commit block needs only FUA */
			struct blk_bio jflush;
			int r = rc ? rc : flush_submit(j->j_jq, &jflush);
			if (!rc && !r)
				r = blk_wait(&jflush);
			int d = dflush_wait(c);
			rc = rc ? rc : r ? r : d;
			cflags = jbd_barrier_flags(j, BLK_FUA);
		}
	}
	if (!rc)
		rc = commit_still_sound(j, c);
	if (!rc)
		rc = commit_check_files(j);
	if (rc || hard_stop(j))
		return rc ? rc : -ESHUTDOWN;
	rc = ring_reserve(j, c, 1);
	if (rc)
		return rc;
	io = ring_slot(j, c);
	/* After a failed log write no commit block may follow: a failure
	 * returns with the commit block's run unsent (__commit drops it). */
	if (async) {
		rc = jbd_lb_commit(&c->lb, io->io_data, wall / RT_NS_PER_S,
				   (uint32_t)(wall % RT_NS_PER_S));
		return rc ? rc : commit_async_end(j, c);
	}
	/* alone, after the log: its PREFLUSH covers what completed before */
	ASSERT(c->run_n == 0);
	c->jflags |= cflags;
	c->run_hold = c->ring_base == 0;   /* nothing else in flight */
	rc = jbd_lb_commit(&c->lb, io->io_data, wall / RT_NS_PER_S, (uint32_t)(wall % RT_NS_PER_S));
	if (rc)
		return rc;
	if (c->run_hold)
		return run_submit_last(j, c, c->jflags);
	return ring_wait_all(j, c);        /* writeback data too */
}

/* ---- phase 6 and 7: done, refile for the checkpoint ---------------------- */

static void __refile_one(struct ujbd *j, struct jbd_txn *t, struct jbd_jh *jh)
{
	struct ujbd_buf *put = NULL;
	struct jbd_txn *old = jh->b_cp_transaction;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(jh->b_transaction == t && !jh->b_frozen_data);
	ASSERT(!old || ujbd_tid_gt(t->t_tid, old->t_tid));
	ASSERT(!jh->b_next_transaction || jh->b_next_transaction == j->j_running);
	if ((jh->b_dirty && !jh->b_forget) || jh->b_forget) {
		/* Logged here: the older copy need not go home. Forgotten: it
		 * must not any more. */
		if (old) {
			__jbd_list_del_cp(old, jh);
			old->t_ckpt_dropped++;
		}
		if (!jh->b_forget)
			__jbd_list_add_cp(t, jh);
	}
	JH_SET(jh->b_transaction, NULL);
	jh->b_logged = false;
	jh->b_shadow = false; /* sent with the commit block: done now */
	JH_SET(jh->b_dirty, false);
	JH_SET(jh->b_forget, false);
	if (jh->b_next_transaction) {
		/* It joins the running transaction: its flags first, so that a
		 * slot handle that sees it there sees them (slot.c). */
		struct jbd_txn *nt = jh->b_next_transaction;
		jh->b_next_transaction = NULL;
		JH_SET(jh->b_dirty, jh->b_next_dirty);
		JH_SET(jh->b_forget, jh->b_next_forget);
		jh->b_next_dirty = jh->b_next_forget = false;
		JH_SET(jh->b_transaction, nt);
		__jbd_list_add_t(nt, jh);
		ASSERT(nt->t_state <= T_LOCKED && nt != t);
	} else {
		jh->jh_buf->b_jstate &= ~BUF_J_JOURNALED;
	}
	__jbd_jh_maybe_free(j, jh, &put);
	if (put)
		buf_put(put);
}

static void __refile(struct ujbd *j, struct jbd_txn *t)
{
	struct jbd_jh *jh;
	struct ujbd_buf *put;

	ASSERT(j->j_committing == t && t->t_state == T_COMMIT);
	while ((jh = RT_LIST_FIRST(&t->t_buffers, struct jbd_jh, b_tlink))) {
		__jbd_list_del_t(t, jh);
		__refile_one(j, t, jh);
	}
	__jbd_free_retired(t);
	while ((jh = RT_LIST_FIRST(&t->t_data, struct jbd_jh, b_dlink))) {
		struct jbd_txn *nt = jh->b_data_next;
		__jbd_list_del_d(t, jh);
		jh->b_data_next = NULL;
		if (nt)
			__jbd_list_add_d(nt, jh);
		put = NULL;
		__jbd_jh_maybe_free(j, jh, &put);
		if (put)
			buf_put(put);
	}
	ASSERT(rt_list_empty(&t->t_buffers) && rt_list_empty(&t->t_data));
	ASSERT(rt_list_empty(&t->t_retired) && t->t_nr_data == 0 && t->t_nr_buffers == 0);
}

static void __report(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_txn *t = c->t;
	struct jbd_run_sample r = {
		.tid = t->t_tid,
		.requested = t->t_requested,
		.wait_ns = t->t_max_wait_ns,
		.request_delay_ns = t->t_requested && c->locked_ns > t->t_requested_ns
					    ? c->locked_ns - t->t_requested_ns : 0,
		.running_ns = c->locked_ns - t->t_start_ns,
		.locked_ns = c->flush_ns - c->locked_ns,
		.flushing_ns = c->log_ns - c->flush_ns,
		.logging_ns = c->end_ns - c->log_ns,
		.commit_time_ns = c->end_ns - c->flush_ns,
		.handle_count = t->t_handle_count,
		.blocks = c->nbuf,
		.blocks_logged = c->logged,
		.data_journaled = t->t_nr_jdata,
		.data_home = c->ndata + t->t_nr_direct,
		.async = c->async,
		.caller = c->caller,
	};

	ASSERT(rt_mutex_held(&j->j_state_lock));
	/* the phases' stamps in order */
	ASSERT(t->t_start_ns <= c->locked_ns && c->locked_ns <= c->flush_ns &&
	       c->flush_ns <= c->log_ns && c->log_ns <= c->end_ns);

	jbd_stats_commit(&j->j_stats, &r);
	JBD_TRACE_RUN_STATS(&j->j_tracer, &r);
	JBD_TRACE(&j->j_tracer, jbd2_end_commit, t->t_tid, t->t_synchronous_commit,
		  j->j_tail_sequence, 0, 0, 0, 0);
}

/* Lock held. */
static void __phase_done(struct ujbd *j, struct commit_ctx *c)
{
	struct jbd_txn *t = c->t;

	c->end_ns = rt_now_ns();
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(c->logged == t->t_log_need);
	ASSERT(j->j_committing == t && t->t_updates == 0 && t->t_state == T_COMMIT);
	ASSERT(jbd_log_distance(&j->j_jnl, t->t_log_start, c->blk) == c->logged % jbd_log_size(j));
	t->t_log_end = c->blk;
	j->j_head = c->blk;
	j->j_commit_sequence = t->t_tid;
	__refile(j, t);
	__jbd_revoke_table_put(j, t->t_revoke);
	t->t_revoke = NULL;
	t->t_state = T_FINISHED;
	t->t_committed_ns = c->end_ns;
	j->j_committing = NULL;
	__jbd_cp_append(j, t);
	ASSERT(RT_LIST_LAST(&j->j_cp, struct jbd_txn, t_cplink) == t && ujbd_tid_geq(j->j_commit_sequence, t->t_tid));
	__report(j, c);
	/* the fsyncs woken now will likely be back: the next batch */
	j->j_batch_target = jbd_txn_fsyncs(t) + (j->j_running ? jbd_txn_fsyncs(j->j_running) : 0);
	j->j_batch_from_ns = c->end_ns;
	rt_cond_broadcast(&j->j_wait_done_commit);
	rt_cond_broadcast(&j->j_wait_space);
	if (j->j_opts.under_commit != UJBD_UNDER_COMMIT_COPY) {
		/* slots sent as the last write: __refile_one cleared them */
		for (uint32_t i = 0; i < c->ring_used; i++)
			j->j_ring[i].io_jh = NULL;
		rt_cond_broadcast(&j->j_wait_shadow);
	}
	if (j->j_space_waiters ||
	    jbd_log_distance(&j->j_jnl, j->j_tail, j->j_head) > jbd_log_size(j) / 2) {
		j->j_ckpt_want++;
		rt_cond_signal(&j->j_wait_checkpoint);
	}
}

/* The completion of the commit's last write (run_submit_last): phase 6
 * here, on the completing thread, then kjournald is told. */
static void commit_end_io(struct blk_bio *b)
{
	struct commit_ctx *c = b->b_private;
	struct ujbd *j = c->j;

	rt_mutex_lock(&j->j_state_lock);
	ASSERT(c->last_busy);
	c->last_err = b->b_error ? b->b_error : commit_still_sound(j, c);
	if (!c->last_err)
		__phase_done(j, c);
	c->last_busy = false;
	/* kjournald waits on it too; c is not touched after the unlock */
	rt_cond_broadcast(&j->j_wait_done_commit);
	rt_mutex_unlock(&j->j_state_lock);
}

void __jbd_commit(struct ujbd *j, bool caller)
{
	struct commit_ctx c;
	int rc;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(j->j_commit_busy && j->j_running && !j->j_committing);
	memset(&c, 0, sizeof(c));
	c.j = j;
	c.caller = caller;
	c.t = j->j_running;
	c.tags = j->j_commit_tags;
	c.slots = j->j_commit_slots;
	c.revs = j->j_commit_revs;
	rc = __phase_lock(j, &c);
	if (rc)
		return; /* close_hard */
	__io_policy(j, &c);
	c.data_fn = j->j_data_fn;
	c.data_arg = j->j_data_arg;
	c.async = commit_async(j, &c);
	c.werr0 = jbd_write_errors(j);
	ASSERT(j->j_committing == c.t && c.t->t_state == T_FLUSH);
	rt_mutex_unlock(&j->j_state_lock);
	rc = phase_data(j, &c);
	if (!rc)
		rc = hard_stop(j) ? -ESHUTDOWN : phase_log(j, &c);
	if (!rc)
		rc = phase_commit_block(j, &c);
	if (rc) {
		c.run_n = 0; /* never sent: nothing more is written */
		(void)ring_wait_all(j, &c);
		(void)dflush_wait(&c);
	}
	rt_mutex_lock(&j->j_state_lock);
	ASSERT(!c.plugged && (rc || !c.run_n)); /* nothing of ours waits in a plug */
	if (rc == -ESHUTDOWN)
		return;
	if (!rc && c.last_sent) {
		while (c.last_busy)
			rt_cond_wait(&j->j_wait_done_commit, &j->j_state_lock);
		if (!c.last_err)
			return; /* phase 6 ran in commit_end_io */
		rc = c.last_err;
	}
	if (!rc && !c.last_sent)
		rc = commit_still_sound(j, &c); /* durable: acknowledged? */
	if (rc) {
		/* No commit is acknowledged after a failed write or flush. */
		__jbd_abort(j, rc);
		rt_mutex_unlock(&j->j_state_lock);
		jbd_abort_write_sb(j);
		rt_mutex_lock(&j->j_state_lock);
		return;
	}
	__phase_done(j, &c);
}

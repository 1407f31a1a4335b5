/*
 * runtime.h: the journal runtime's private structures (struct ujbd,
 * transactions, journal heads, the commit ring), shared by runtime.c
 * (open, close, threads), log.c (log space, tail, superblock writes,
 * abort), transaction.c (handles), jhead.c (journal heads and their
 * lists), slot.c (the lock-free handle path), kjournald.c (the commit
 * thread, requests, waits, fsync, inheritance), commit.c (one commit's
 * phases), checkpoint.c and revoke.c.
 *
 * Two journal structs, one per side: struct jbd_journal (jbd_log.h) is
 * the log itself, offline: its location, superblock, format and log area,
 * used by superblock.c, scan.c, recovery.c and logwrite.c with no threads
 * and no locks. struct ujbd (below) is the running journal: it embeds one
 * struct jbd_journal (j_jnl) for its log and adds what runs over it
 * (transactions, handles, threads, locks, queues, the buffer cache).
 *
 * LOCK ORDER (take left before right; never the reverse):
 *
 *   j_checkpoint_mutex -> j_sb_mutex -> j_state_lock -> buf c_lock -> blk q_lock
 *                                                    -> stats s_lock (leaf)
 *
 *   j_state_lock   one mutex for all journal state: transactions, their
 *                  lists, journal heads, the revoke tables, log space, the
 *                  commit request and sequence numbers, and the copying of
 *                  buffer data into frozen copies and I/O buffers. The
 *                  exception is the slot path (slot.c): a handle of the
 *                  thread's slot starts, reuses a buffer it attached and
 *                  stops with atomics only (j_open, s_txn, JH_GET/JH_SET).
 *   j_checkpoint_mutex  serialises checkpoint passes (the checkpoint thread,
 *                  ujbd_checkpoint, close); held across checkpoint I/O,
 *                  never taken by the commit thread.
 *   j_sb_mutex     serialises superblock writes: the values written are
 *                  computed under it (from j_state_lock state) and
 *                  published after the write, so the on-disk tail only
 *                  moves forward and never past a commit it must cover.
 *
 * No lock is held across I/O except j_checkpoint_mutex. Conditions, all
 * waited on with j_state_lock:
 *   j_wait_commit        kjournald sleeps here (requests, timer kick, stop,
 *                        the end of an fsync's commit it waits for)
 *   j_wait_batch         the committer's batch window: the fsyncs it
 *                        expects joined
 *   j_wait_updates       the committing transaction's t_updates reached 0
 *   j_wait_transaction_locked  the running transaction left T_LOCKED, or
 *                        a full one was handed to the commit thread
 *   j_wait_done_commit   a commit finished (j_commit_sequence moved) or abort
 *   j_wait_space         log space was freed (tail moved or a commit ended)
 *   j_wait_checkpoint    the checkpoint thread sleeps here
 *   j_wait_ckpt_io       a checkpoint batch ended: its b_ckpt_busy flags
 *                        were cleared (see "Home writes" below); or,
 *                        under buffer_lock, one of its writes completed
 *                        (that buffer's b_home_io cleared)
 *   j_wait_shadow        wait-io, wait-loop: log writes of shadowed
 *                        buffers ended (their b_shadow cleared), a
 *                        wait-io run ended (its io_busy cleared), or
 *                        abort / hard stop
 *
 * Buffer data rule: a buffer's bytes are modified only by the holder of a
 * handle with write access (or by write_data under j_state_lock), and read
 * for I/O only by copying under j_state_lock; a handle of the running
 * transaction that gets write access to a buffer the committing transaction
 * has not yet copied first makes a frozen copy, so the commit logs exactly
 * what its own handles wrote.
 *
 * Home writes: at most one write of a block to its home location is in
 * flight at a time, so the device gets them in the order they were made
 * (the block layer may reorder concurrent writes: CFQ serves a SYNC one
 * before a queued async one). A checkpoint write is in flight from
 * __cp_collect (b_ckpt_busy set) to __cp_done (cleared, j_wait_ckpt_io
 * broadcast); checkpoint passes are serialised by j_checkpoint_mutex and
 * each ends its batch before the next starts. The commit's data writes
 * (phase_data, every data mode that writes home) wait while b_ckpt_busy
 * before copying a block (writeback data, left in flight past the log
 * writes, and ordered data on the journal's own queue, left in flight with
 * them, all end before the commit is done: phase 5 of commit.c); a
 * checkpoint pass does not collect a block whose data the committing
 * transaction writes (it is held, as a buffer of a running transaction
 * is). Metadata and journal-mode data go home only
 * through the checkpoint. This is what keeps a revoked block's old
 * checkpoint write from landing over the data it is reused for. No
 * deadlock: kjournald waits with only j_state_lock (released by the wait)
 * and no plug or I/O of its own outstanding, and a pass with a batch in
 * flight waits for nothing but its own I/O (it waits for a commit only
 * when it collected nothing).
 *
 * Checklist: a new field of struct ujbd that is allocated => free it in
 * jbd_free (runtime.c).
 */
#ifndef UJBD_JBD_RUNTIME_H
#define UJBD_JBD_RUNTIME_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "buf/buf.h"
#include "jbd/base.h"
#include "jbd/jstats.h"
#include "jbd/jtrace.h"
#include "priv/blk.h"
#include "priv/dev_req.h"
#include "priv/list.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

struct jbd_slot;

/* ---- limits ---------------------------------------------------------- */

/* Log blocks the commit copies into before it must wait for I/O. */
#define JBD_RING_MAX 512u
/* Revoke blocks one transaction may need (more: ujbd_revoke -UJBD_ETOOBIG). */
#define JBD_REVOKE_BLOCKS_MAX 8u
/* Stopped handles kept for reuse. */
#define JBD_HANDLES_CACHED 256u
/* Buffers written home per checkpoint batch. */
#define JBD_CKPT_BATCH 256u
/* Blocks the journaled-data index (jdata.c) tracks at most. */
#define JBD_JDATA_MAX 65536u

/* ---- journal heads ---------------------------------------------------- */

/* Fields of a journal head that a slot handle reads without the lock
 * (b_transaction, b_dirty, b_forget) are written with JH_SET wherever the
 * head may be attached to the running transaction, and read with JH_GET
 * outside the lock. */
#define JH_GET(f) __atomic_load_n(&(f), __ATOMIC_ACQUIRE)
#define JH_SET(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELEASE)

/* Who writes a buffer home (b_home_io). */
#define JBD_HOME_WRITEBACK  1 /* the writeback pass (pdflush's) */
#define JBD_HOME_CHECKPOINT 2 /* a checkpoint pass */

/* inherit: the boost tag of checkpoint (or writeback) pass `seq` of
 * journal `jid` (bit 62; commits' tags have bit 63). Every home write of
 * the pass carries it; a write access waiting on the buffer lock of one of
 * them, or a start waiting for log space, raises the pass in its queue
 * (blk_boost: requests merge adjacent blocks, so raising one block's
 * write raises its request's neighbours anyway). */
static inline uint64_t jbd_ckpt_tag(uint64_t jid, uint64_t seq)
{
	return 1ull << 62 | (jid & 0xfffffull) << 40 | (seq & ((1ull << 40) - 1));
}

/*
 * The journal's view of one buffer. Exists while any pointer below is set;
 * holds one buffer reference for that time. [j_state_lock] throughout.
 */

struct jbd_jh {
	struct ujbd_buf *jh_buf;
	struct jbd_txn *b_transaction;      /* running or committing owner */
	struct jbd_txn *b_next_transaction; /* running, while committing owns it */
	struct jbd_txn *b_cp_transaction;   /* newest committed copy not yet home */
	struct jbd_txn *b_data_transaction; /* ordered/writeback data of that txn */
	uint8_t *b_frozen_data;             /* committed bytes while running modifies */
	bool b_dirty;       /* dirty_metadata in b_transaction */
	bool b_next_dirty;  /* dirty_metadata in b_next_transaction */
	bool b_logged;      /* the commit copied it into the log ring */
	bool b_shadow;      /* wait-io: that copy's log write is in flight
			     * (jbd2's BJ_Shadow); write access waits */
	bool b_ckpt_busy;   /* a checkpoint write of it is in flight: from
			     * __cp_collect to __cp_done (no other home
			     * write of the block meanwhile) */
	/* buffer_lock: a home write of it is in flight, from __cp_collect to
	 * that write's completion (cp_end_io): the buffer is locked, a
	 * write access waits (JBD_HOME_*, 0 none) */
	uint8_t b_home_io;
	bool b_forget;      /* b_transaction frees it: drop its checkpoint copy
			     * at that commit, never log or write it back */
	bool b_next_forget; /* the same, for b_next_transaction */
	uint64_t b_join_seq; /* h_seq of the handle that journaled it last */
	struct jbd_txn *b_data_next; /* data of the running txn while the
				      * committing one holds it on t_data */
	struct jbd_jh *b_hnext;             /* j_jh_hash chain */
	/* Each link points at itself while off its list (__jbd_jh_get). */
	struct rt_link b_tlink;  /* b_transaction's t_buffers, or t_retired */
	struct rt_link b_cplink; /* b_cp_transaction's t_ckpt */
	struct rt_link b_dlink;  /* b_data_transaction's t_data */
};

/* ---- block-keyed hash tables ----------------------------------------- */

/* The bucket of block in a table of mask + 1 (a power of two) buckets:
 * Fibonacci hashing, the product's high half (the journal heads' hash,
 * revoke.c's and jdata.c's open addressing). */
static inline uint32_t jbd_block_hash(uint64_t block, uint32_t mask)
{
	return (uint32_t)((block * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* Slots of an open-addressing table that holds cap entries: a power of two,
 * at least 16, at most half full so that every probe run ends. */
static inline uint32_t jbd_table_slots(uint32_t cap)
{
	uint32_t slots = 16;

	while (slots < cap * 2)
		slots <<= 1;
	return slots;
}

/* ---- runtime revoke table (revoke.c) -------------------------------- */

/* Revoke records of one transaction: an array in revoke order plus an
 * open-addressing index; both sized at open (no allocation later). */
struct jbd_revoke_table {
	uint64_t *rt_blocks;   /* UINT64_MAX = cancelled */
	uint32_t rt_n, rt_cap; /* rt_cap records at most */
	int32_t *rt_slot;      /* index into rt_blocks, -1 empty */
	uint32_t rt_mask;      /* slots - 1 */
	uint32_t rt_live;      /* records not cancelled */
};

/* ---- the journaled-data index (jdata.c) ------------------------------- */

/* A block whose ordered data the log holds, and the newest tid logging it. */
struct jbd_jdata_ent {
	uint64_t e_block;      /* UINT64_MAX: empty */
	ujbd_tid_t e_tid;
};

/* Sized at open; every field [j_state_lock]. */
struct jbd_jdata_index {
	struct jbd_jdata_ent *ji_ent;  /* ji_mask + 1 slots, NULL: unused */
	uint32_t ji_mask, ji_n, ji_cap; /* ji_cap entries at most (half the slots) */
	bool ji_swept;                 /* a sweep ran, at ji_swept_tail */
	ujbd_tid_t ji_swept_tail;
};

int jbd_jdata_init(struct jbd_jdata_index *ix, uint32_t cap);
void jbd_jdata_release(struct jbd_jdata_index *ix);
/* Block's data is logged by tid (tid not behind the durable tail `tail`):
 * true, or false when there is no room (the block must not be logged). */
bool jbd_jdata_note(struct jbd_jdata_index *ix, uint64_t block, ujbd_tid_t tid, ujbd_tid_t tail);
/* May a copy of block logged through the data path still be replayed
 * (its tid not behind the durable tail)? Drops a stale entry. */
bool jbd_jdata_replayable(struct jbd_jdata_index *ix, uint64_t block, ujbd_tid_t tail);

/* ---- transactions ----------------------------------------------------- */

enum jbd_tstate {
	T_RUNNING = 0,
	T_LOCKED,   /* commit waiting for t_updates to drain */
	T_FLUSH,    /* committing: ordered data */
	T_COMMIT,   /* committing: log blocks and commit block */
	T_FINISHED, /* committed, on the checkpoint list */
};

struct jbd_txn {
	ujbd_tid_t t_tid;                 /* const */
	uint64_t t_seq;                   /* const: 1, 2, ... never wraps (slot.c) */
	enum jbd_tstate t_state;          /* [j_state_lock] */
	int t_updates;                    /* [j_state_lock] open handles */
	uint32_t t_outstanding;           /* [j_state_lock] credits reserved or used */
	uint32_t t_nr_buffers;            /* [j_state_lock] on t_buffers */
	struct rt_link t_buffers;         /* [j_state_lock] jh's b_tlink */
	struct rt_link t_retired;         /* [j_state_lock] forgotten heads kept
					   * until the commit (b_tlink) */
	struct rt_link t_data;            /* [j_state_lock] ordered/writeback data (b_dlink) */
	uint32_t t_nr_data;               /* [j_state_lock] */
	/* ordered_journal_bytes: data blocks the data path journaled into
	 * this transaction, and whether one went home (the rest go too) */
	uint32_t t_nr_jdata;              /* [j_state_lock] */
	bool t_data_home;                 /* [j_state_lock] */
	/* ujbd_write_data_blocks: data blocks written home at once, past the
	 * cache (their commit is ordered after them as after t_data) */
	uint32_t t_nr_direct;             /* [j_state_lock] */
	struct jbd_revoke_table *t_revoke;/* [j_state_lock] running/committing */
	uint64_t t_handle_count;          /* [j_state_lock] */
	bool t_synchronous_commit;        /* [j_state_lock] someone waits on it */
	bool t_requested;                 /* [j_state_lock] commit was asked for */
	uint16_t t_waiter_prio;           /* [j_state_lock] best ioprio of waiters, 0 none */
	uint64_t t_start_ns, t_expires_ns, t_requested_ns, t_locked_ns;
	uint64_t t_max_wait_ns;           /* [j_state_lock] longest start wait */
	/* log placement, set by the commit */
	uint32_t t_log_start, t_log_end;  /* [j_state_lock] */
	uint32_t t_log_need;              /* [j_state_lock] exact blocks, from T_FLUSH */
	/* checkpoint */
	struct rt_link t_ckpt;            /* [j_state_lock] jh's b_cplink */
	uint32_t t_nr_ckpt;               /* [j_state_lock] */
	uint64_t t_ckpt_written, t_ckpt_dropped; /* [j_state_lock] */
	uint64_t t_ckpt_first_ns;         /* [j_state_lock] first active pass */
	uint64_t t_committed_ns;          /* [j_state_lock] its commit ended */
	struct rt_link t_cplink;          /* [j_state_lock] on j_cp, tid order */

	/* kjournald's batch window (kjournald.c): the fsyncs of this
	 * transaction, counted as commit requests (ujbd_commit_tid) and as
	 * waits (__jbd_wait_commit); an fsync is one of each, or a wait
	 * alone (a sync handle), so the larger count is the fsyncs. */
	uint32_t t_nr_fsync_requests;     /* [j_state_lock] */
	uint32_t t_nr_fsync_waits;        /* [j_state_lock] */
};

/* ---- the commit's I/O ring --------------------------------------------- */

struct jbd_iobuf {
	struct blk_bio io_bio;
	uint8_t *io_data;
	/* in flight; [j_state_lock] when the bio has an end_io (wait-io's
	 * runs: run_end_io clears it), the committing thread's otherwise */
	bool io_busy;
	bool io_sent;         /* submitted, not yet waited for (the committing
			       * or checkpointing thread's own) */
	int io_err;           /* run_end_io: the bio's result [j_state_lock] */
	struct jbd_jh *io_jh; /* wait-io, wait-loop: the shadowed buffer it
			       * logs [j_state_lock] */
};

/* ---- the journal --------------------------------------------------------- */

#define JBD_F_ABORTED  (1u << 0)
#define JBD_F_STOPPING (1u << 1) /* threads asked to exit */
#define JBD_F_CLOSING  (1u << 2)
#define JBD_F_STOP_CKPT (1u << 3) /* checkpoint thread asked to exit */
#define JBD_F_HARD     (1u << 4) /* close_hard: stop writing at once */

struct ujbd {
	struct ujbd_opts j_opts;          /* const (queues cleared) */
	struct jbd_journal j_jnl;         /* loc, fmt, j_first/j_last; j_sb [j_state_lock] */
	uint32_t j_blocksize;             /* const */
	uint64_t j_data_blocks;           /* const */
	/* data blocks [lo, hi) span every journal block on the data device
	 * (lo == hi: none there): a block outside needs no map lookup */
	uint64_t j_in_jnl_lo, j_in_jnl_hi; /* const */
	struct blk_queue *j_jq, *j_dq;    /* const: journal and data queues */
	bool j_own_jq, j_own_dq;          /* const: created here */
	struct buf_cache *j_cache;        /* const */
	uint32_t j_max_txn;               /* const: credits per transaction */
	uint32_t j_dcap, j_rcap;          /* const: tags per descriptor, revoke recs */
	uint32_t j_slack;                 /* const: revoke blocks kept in reserve */
	bool j_async;                     /* const: async commit (AUTO resolved) */
	uint32_t j_jdata_max;             /* const: ordered data blocks a transaction
					   * journals (ordered_journal_bytes), 0 none */

	rt_mutex j_state_lock;
	rt_mutex j_checkpoint_mutex;
	rt_mutex j_sb_mutex;
	rt_cond j_wait_commit, j_wait_updates, j_wait_transaction_locked;
	rt_cond j_wait_done_commit, j_wait_space, j_wait_checkpoint;
	rt_cond j_wait_ckpt_io, j_wait_batch, j_wait_shadow;

	uint32_t j_flags;                 /* [j_state_lock] JBD_F_*; set atomically (hard_stop reads it unlocked) */
	int j_errno;                      /* [j_state_lock] first error (negative) */
	bool j_abort_recorded;            /* [j_state_lock] its s_errno write was tried */
	struct jbd_txn *j_running;        /* [j_state_lock] */
	struct jbd_txn *j_committing;     /* [j_state_lock] */
	struct rt_link j_cp;              /* [j_state_lock] checkpoint list (t_cplink) */
	ujbd_tid_t j_transaction_sequence;/* [j_state_lock] next tid to hand out */
	ujbd_tid_t j_commit_sequence;     /* [j_state_lock] last tid committed */
	ujbd_tid_t j_commit_request;      /* [j_state_lock] highest tid asked for */
	ujbd_tid_t j_tail_sequence;       /* [j_state_lock] tid at the durable tail */
	uint32_t j_head, j_tail;          /* [j_state_lock] log blocks */
	bool j_sb_empty;                  /* [j_state_lock] s_start is 0 on disk */
	int j_last_sync_writer;           /* [j_state_lock] pid */
	uint64_t j_handle_seq;            /* [j_state_lock] last h_seq */
	uint64_t j_txn_seq;               /* [j_state_lock] last t_seq */
	struct ujbd_handle *j_free_handles; /* [j_state_lock] for reuse */
	uint32_t j_nfree_handles;         /* [j_state_lock] */
	/* Journal heads by block number, so write access to a block the
	 * journal already tracks finds its buffer without the cache's lock
	 * (the head holds a reference). */
	struct jbd_jh **j_jh_hash;        /* [j_state_lock] */
	uint32_t j_jh_mask;               /* const: buckets - 1 */

	/* kjournald */
	rt_thread *j_task, *j_ckpt_task;
	bool j_kj_sleeping;               /* [j_state_lock] in its wait */
	bool j_kj_timed;                  /* [j_state_lock] ... with a deadline */
	bool j_kj_woken;                  /* [j_state_lock] a request woke it */
	bool j_kj_kicked;                 /* [j_state_lock] timer re-arm, not counted */
	ujbd_tid_t j_kj_armed;            /* [j_state_lock] whose deadline it sleeps to */
	bool j_kj_busy_wait;              /* [j_state_lock] waits for j_commit_busy */
	/* A thread is in __commit: kjournald, or an fsync (caller_commit).
	 * One commit at a time, whoever runs it. */
	bool j_commit_busy;               /* [j_state_lock] */
	/* the batch window (kjournald.c __batch_wanted): the fsyncs the next
	 * commit expects (those the last commit woke, plus those already on
	 * the running transaction then), counted from when */
	uint32_t j_batch_target;          /* [j_state_lock] */
	uint64_t j_batch_from_ns;         /* [j_state_lock] */
	bool j_batching;                  /* [j_state_lock] the committer is in it */
	uint32_t j_ckpt_want;             /* [j_state_lock] checkpoint thread asked */
	/* commit_ioprio = inherit: the committing transaction's bio tag
	 * (blk_boost; 0 while nothing commits) and its I/O priority now,
	 * raised by waiters; the commit reads it at each submission. */
	uint64_t j_boost_tag;             /* [j_state_lock] */
	uint16_t j_commit_prio;           /* [j_state_lock] writes; atomic loads */
	uint32_t j_space_waiters;         /* [j_state_lock] */
	/* inherit over home writes: the pass in flight's tag (0: none) and
	 * the passes counted; the highest priority of a thread waiting for
	 * log space, which the checkpoint's writes carry until none waits
	 * (0: none) [j_state_lock; j_ckpt_prio read atomically by cp_write] */
	uint64_t j_ckpt_tag, j_ckpt_seq;
	uint16_t j_ckpt_prio;
	uint16_t j_ckpt_tag_prio;         /* the pass in flight raised to (0: not) */
	/* writeback: when committed buffers waiting to go home last went from
	 * none to some (the block device inode's dirtied_when; 0: none) */
	uint64_t j_wb_dirty_ns;           /* [j_state_lock] */

	/* the committing thread's (j_commit_busy) */
	struct jbd_iobuf *j_ring;
	uint32_t j_ring_n;
	uint8_t *j_ring_mem;              /* the ring's blocks, one allocation:
					   * consecutive slots are consecutive in
					   * memory, so a run of them is one bio */
	struct jbd_tag *j_commit_tags;    /* j_dcap */
	struct jbd_iobuf **j_commit_slots;/* j_dcap */
	uint64_t *j_commit_revs;          /* j_rcap */
	struct jbd_jh **j_ckpt_jh;        /* checkpoint batch (j_checkpoint_mutex) */
	struct jbd_txn **j_ckpt_txn;      /* ... and the transaction each was for */
	struct jbd_iobuf *j_ckpt_io;      /* j_ckpt_n of them */
	uint32_t j_ckpt_n;                /* const: checkpoint batch */
	bool j_sync_init;                 /* locks and stats initialised */
	struct jbd_revoke_table j_revoke_tables[2]; /* [j_state_lock] */
	bool j_revoke_used[2];            /* [j_state_lock] */
	uint8_t *j_sb_buf;                /* [j_state_lock] superblock I/O block */
	struct jbd_jdata_index j_jdata;   /* [j_state_lock] jdata.c */

	struct jbd_stats j_stats;
	struct jbd_tracer j_tracer;
	/* ujbd_set_data_hook: the caller's ordered data, written by it at each
	 * ORDERED commit's flush-data phase [j_state_lock; read by the commit
	 * when it locks its transaction] */
	ujbd_data_fn j_data_fn;
	void *j_data_arg;

	/* ujbd_set_close_hook: the owner of what lies under the journal */
	ujbd_close_fn j_close_fn;         /* const after open */
	void *j_close_arg;

	/* The handle path without the lock (slot.c), on a line of its own:
	 * read by every slot handle, written once per transaction. */
	_Alignas(64) struct jbd_txn *j_open; /* atomic: the running transaction
					   * while it admits slot handles */
	bool j_drain_waiting;             /* atomic: the commit waits for slots */
	bool j_aborted;                   /* atomic: JBD_F_ABORTED, lock-free */
	uint32_t j_pool_chunk;            /* const: credits a slot reserves */
	uint64_t j_id;                    /* const: jbd_slot_new_jid */
	_Alignas(64) struct jbd_slot *j_slots; /* [j_state_lock] */
	uint32_t j_nslots;                /* [j_state_lock] */
};

struct ujbd_handle {
	struct ujbd *h_journal;
	uint64_t h_seq;                   /* unique per journal, from 1 */
	struct jbd_txn *h_transaction;
	uint32_t h_buffer_credits;        /* left */
	uint32_t h_requested;             /* asked for (start + extends) */
	uint32_t h_dirtied;
	bool h_sync;
	int h_err;
	uint64_t h_start_ns;
	struct ujbd_handle *h_next_free;  /* [j_state_lock] on j_free_handles */
	struct jbd_slot *h_slot;          /* the slot it is embedded in, or NULL */
	struct ujbd_handle *h_held_next;  /* owner: its thread's held handles */
};

/* ---- per-thread handle slots (slot.c) ---------------------------------- */

#define JBD_MEMO 128u /* memo entries per slot (a power of two) */

/* A buffer a handle of this slot attached to the transaction whose t_seq
 * is m_seq (tids wrap; t_seq does not, so an entry never outlives its
 * transaction by matching a later one). */
struct jbd_memo {
	uint64_t m_block;
	struct jbd_jh *m_jh;
	uint64_t m_seq;
};

struct jbd_slot {
	_Alignas(64) struct jbd_txn *s_txn; /* atomic: what its open handle holds */
	uint32_t s_refs;                  /* atomic: the journal's and the thread's */
	bool s_closed;                    /* atomic: the journal was closed */
	bool s_busy;                      /* owner: s_handle is open */
	uint32_t s_id;                    /* const: 1, 2, ... */
	uint64_t s_pool_seq;              /* owner: s_pool credits are part of */
	uint32_t s_pool;                  /*   that transaction's t_outstanding */
	uint64_t s_cnt_seq;               /* owner while admitted; the commit */
	uint64_t s_cnt;                   /*   after the drain: handles started */
	uint64_t s_nseq;                  /* owner: for h_seq */
	struct jbd_slot *s_next;          /* [j_state_lock] on j_slots */
	struct ujbd_handle s_handle;      /* owner */
	struct jbd_memo s_memo[JBD_MEMO]; /* owner */
};

/* A unique journal id (never reused in the process). */
uint64_t jbd_slot_new_jid(void);
/* The calling thread's slot of j (made on first use), or NULL: the thread
 * keeps too many journals' slots, or no memory. */
struct jbd_slot *jbd_slot_self(struct ujbd *j);
/* Does a slot hold a handle of t? j_state_lock held. */
bool __jbd_slots_hold(const struct ujbd *j, const struct jbd_txn *t);
/* Handles the slots started in t; j_state_lock held, t drained. */
uint64_t __jbd_slots_handles(const struct ujbd *j, const struct jbd_txn *t);
/* Close: drop the journal's references (no handle may be open). */
void jbd_slots_release(struct ujbd *j);
/* The journal head a handle of slot s attached to the transaction of
 * t_seq seq for block, or NULL. */
struct jbd_jh *jbd_memo_find(struct jbd_slot *s, uint64_t seq, uint64_t block);
void jbd_memo_put(struct jbd_slot *s, uint64_t seq, uint64_t block, struct jbd_jh *jh);
/* The handle side of the protocol, each 0 or -EAGAIN (take the locked
 * path): start the thread's slot handle in the open transaction; stop a
 * slot handle that is not sync (credits back to the pool, the
 * announcement withdrawn); write access to, and dirty, a buffer this
 * slot attached to the transaction earlier. */
int jbd_slot_start(struct ujbd *j, struct jbd_slot *s, uint32_t nblocks,
		   struct ujbd_handle **out);
int jbd_slot_stop(struct ujbd *j, struct ujbd_handle *h);
int jbd_slot_access(struct ujbd_handle *h, uint64_t block, bool create,
		    struct ujbd_buf **out);
int jbd_slot_dirty(struct ujbd_handle *h, struct ujbd_buf *b);
/* Unused credits of a handle of slot s back to its pool; beyond the chunk
 * back to t. j_state_lock held. */
void __jbd_slot_pool_return(struct ujbd *j, struct jbd_slot *s, struct jbd_txn *t);
/* A trace hook that wants handle events is installed (slot handles then
 * take the locked path, so every event fires under the lock; a commit-only
 * hook, jbd_set_commit_hook, does not count). */
bool jbd_hooked(const struct ujbd *j);

/* ---- log.c: log space, tail, abort ------------------------------------- */

/* Abort: record err (first only), wake everyone; j_state_lock held. The
 * thread that aborts then calls jbd_abort_write_sb, with no lock held:
 * until that write was tried, nobody is told of the abort. */
void __jbd_abort(struct ujbd *j, int err);
/* Write s_errno (or try: the device may be what failed), then mark the
 * abort recorded and wake those waiting to report it; no lock held. */
void jbd_abort_write_sb(struct ujbd *j);
/*
 * rc is about to be returned to a caller of the API: if the journal is
 * aborted, first wait until the abort is recorded (jbd_abort_write_sb
 * tried its write), so that a program that exits as soon as it learns of
 * the failure leaves s_errno on disk. rc unchanged. j_state_lock held
 * (dropped while waiting); the jbd_ form takes it.
 */
int __jbd_abort_told(struct ujbd *j, int rc);
int jbd_abort_told(struct ujbd *j, int rc);
/* What a commit or stop of an aborted journal (or one stopped hard)
 * returns: the error that aborted it (-EIO, a host's -ENOSPC,
 * -UJBD_EGONE, ...), -EIO if none. j_errno is written once, before
 * JBD_F_ABORTED (release), so it may be read without the lock. */
static inline int jbd_abort_errno(const struct ujbd *j)
{
	int e = __atomic_load_n(&j->j_errno, __ATOMIC_ACQUIRE);

	return e ? e : -EIO;
}
/*
 * Move the on-disk tail to the oldest transaction still needed (the oldest
 * on the checkpoint list, else the committing one once it logs, else the
 * head): write the superblock (PREFLUSH|FUA) if that changes s_start or
 * s_sequence, then publish j_tail and free the space. empty: write s_start
 * = 0 (close, with nothing left). No lock held on entry; callers must have
 * made every home write of a transaction it moves past durable.
 */
int jbd_update_tail(struct ujbd *j, bool empty);
/* Failed writes and flushes on the journal's queues so far, each queue's
 * count (commit.c): one that moved during a window of home or log writes
 * may have dropped them from a device's cache, whatever their own
 * completions said. w_dq stays 0 when journal and data share a queue. */
struct jbd_werr {
	uint64_t w_jq, w_dq;
};
struct jbd_werr jbd_write_errors(const struct ujbd *j);
/* Whether writes made since jbd_write_errors said werr0 may be trusted
 * durable once their own flush succeeded: 0; or, if the journal aborted,
 * its error; or, if a write or flush on the journal's queues failed
 * meanwhile (fsyncgate), what the device said of it (the host's -EPERM,
 * -ENOSPC, ...: blk_write_errno of the queue whose count moved, the
 * journal's first), so that whoever aborts first with it records what
 * the failing write's own thread would have. Lock-free, no system call. */
int jbd_writes_sound(const struct ujbd *j, const struct jbd_werr *werr0);
/* Wait for a sent jbd_iobuf and return its result: blk_wait, or with an
 * end_io (which clears io_busy under j_state_lock and broadcasts done)
 * wait on done. Not under j_state_lock. */
int jbd_iobuf_wait(struct ujbd *j, struct jbd_iobuf *io, rt_cond *done);
/* Worst-case log blocks for a transaction of `credits` buffers. */
uint32_t jbd_log_res(const struct ujbd *j, uint32_t credits);
/* Log blocks in use (tail to head) plus reservations; j_state_lock held. */
uint32_t __jbd_log_used(const struct ujbd *j);
uint32_t jbd_log_size(const struct ujbd *j);

/* ---- runtime.c: open, close ---------------------------------------------- */

/* Free lists, transactions and the journal; threads are stopped. */
void jbd_close_free(struct ujbd *j);
/* Compare I/O priorities: true if a is served before b. */
static inline bool jbd_ioprio_higher(uint16_t a, uint16_t b)
{
	unsigned ca = RT_IOPRIO_CLASS(a), cb = RT_IOPRIO_CLASS(b);

	/* NONE is best effort at its level; rank RT < BE < IDLE. */
	ca = ca == RT_IOPRIO_CLASS_NONE ? RT_IOPRIO_CLASS_BE : ca;
	cb = cb == RT_IOPRIO_CLASS_NONE ? RT_IOPRIO_CLASS_BE : cb;
	if (ca != cb)
		return ca < cb;
	return RT_IOPRIO_LEVEL(a) < RT_IOPRIO_LEVEL(b);
}
/* barrier=false (ext3's barrier=0): the cache-flush and FUA flags of a
 * journal write dropped, and jbd_flush a no-op; every flush of the journal
 * goes through these two. */
static inline uint32_t jbd_barrier_flags(const struct ujbd *j, uint32_t flags)
{
	return j->j_opts.barrier ? flags : flags & ~(uint32_t)(BLK_PREFLUSH | BLK_FUA);
}
static inline int jbd_flush(const struct ujbd *j, struct blk_queue *q)
{
	return j->j_opts.barrier ? blk_flush(q) : 0;
}

/* ---- jhead.c: journal heads and their lists ------------------------------ */

struct jbd_jh *__jbd_jh_get(struct ujbd *j, struct ujbd_buf *b);
/* The journal head of block, or NULL. */
struct jbd_jh *__jbd_jh_find(struct ujbd *j, uint64_t block);
/* Free jh if no list holds it any more (drops its buffer reference later:
 * the buffer goes back to the caller through *put). */
void __jbd_jh_maybe_free(struct ujbd *j, struct jbd_jh *jh, struct ujbd_buf **put);
/* Take jh out of the block index and its buffer (the buffer's reference
 * goes back to the caller through *put); jh itself is not freed. */
void __jbd_jh_unhash(struct ujbd *j, struct jbd_jh *jh, struct ujbd_buf **put);
/* Free t's retired heads (t drained or being freed). */
void __jbd_free_retired(struct jbd_txn *t);
void __jbd_list_del_t(struct jbd_txn *t, struct jbd_jh *jh);
void __jbd_list_add_t(struct jbd_txn *t, struct jbd_jh *jh);
void __jbd_list_del_cp(struct jbd_txn *t, struct jbd_jh *jh);
void __jbd_list_add_cp(struct jbd_txn *t, struct jbd_jh *jh);
void __jbd_list_del_d(struct jbd_txn *t, struct jbd_jh *jh);
void __jbd_list_add_d(struct jbd_txn *t, struct jbd_jh *jh);

/* A transaction's lists, empty (after its memset). */
static inline void jbd_txn_lists_init(struct jbd_txn *t)
{
	rt_list_init(&t->t_buffers);
	rt_list_init(&t->t_retired);
	rt_list_init(&t->t_data);
	rt_list_init(&t->t_ckpt);
	rt_list_init(&t->t_cplink);
}

/* The first transaction on the checkpoint list (the oldest), or NULL. */
#define JBD_CP_FIRST(j) RT_LIST_FIRST(&(j)->j_cp, struct jbd_txn, t_cplink)

/* ---- transaction.c ------------------------------------------------------ */

/* Would the log hold the running transaction with `more` credits?
 * j_state_lock held. */
bool __jbd_space_for(const struct ujbd *j, uint32_t more);
/* The tid of the handle the calling thread holds in j, if it holds one
 * (handles do not nest: waiting for that transaction would wait for the
 * caller itself). No lock needed: the list is the thread's own. */
bool jbd_thread_holds(const struct ujbd *j, ujbd_tid_t *tid);
/* Does the calling thread hold a handle (of any journal)? */
bool jbd_thread_holds_handle(void);

/* ---- commit.c ------------------------------------------------------------- */

/* Commit the running transaction, phase by phase; the caller holds
 * j_commit_busy (kjournald, or an fsync's caller_commit). j_state_lock held
 * on entry and on return (dropped for the I/O). */
void __jbd_commit(struct ujbd *j, bool caller);

/* ---- kjournald.c ---------------------------------------------------------- */

/* The fsyncs of t: see t_nr_fsync_requests. */
static inline uint32_t jbd_txn_fsyncs(const struct jbd_txn *t)
{
	return t->t_nr_fsync_requests > t->t_nr_fsync_waits ? t->t_nr_fsync_requests
							    : t->t_nr_fsync_waits;
}

/* inherit: no commit runs below be:4, kjournald's default. */
#define JBD_INHERIT_FLOOR RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4)

/* The commit's priority for the best waiter's p (0: none): the floor. */
static inline uint16_t jbd_inherit_prio(uint16_t p)
{
	return p && jbd_ioprio_higher(p, JBD_INHERIT_FLOOR) ? p : JBD_INHERIT_FLOOR;
}

void jbd_kjournald(void *arg);
/* Ask for tid's commit under the wake policy; j_state_lock held. */
void __jbd_request_commit(struct ujbd *j, ujbd_tid_t tid);
/* Wait for tid's commit; j_state_lock held (dropped while waiting). */
int __jbd_wait_commit(struct ujbd *j, ujbd_tid_t tid);
/* An fsync about to wait for tid: commit it here, on the calling thread
 * (caller_commit, when tid is the running transaction and no commit
 * runs), and return true (the commit may have failed: see j_flags); else
 * ask for it (__jbd_request_commit) and return false. Lock held. */
bool __jbd_fsync_commit(struct ujbd *j, ujbd_tid_t tid);
/*
 * commit_ioprio = inherit: the calling thread is about to wait on t (its
 * commit, its lock, a buffer it logs, the space it frees). Raise t's
 * priority to the thread's if higher (floor be:4); if t is committing,
 * its queued bios too (blk_boost), which is done with j_state_lock
 * dropped: returns true when the lock was dropped (the caller re-checks
 * what it was about to wait for), false when it was held throughout.
 * Nothing under any other commit_ioprio. j_state_lock held.
 */
bool __jbd_inherit(struct ujbd *j, struct jbd_txn *t);
/* The calling thread's ioprio as a waiter: class NONE is best effort at its
 * level. */
uint16_t jbd_waiter_prio(void);

/* ---- checkpoint.c -------------------------------------------------------- */

void jbd_checkpointd(void *arg);
/* One checkpoint pass: write home up to a batch of buffers of the oldest
 * transactions, then move the tail. force: commit transactions that hold
 * checkpoint buffers. Returns 1 if progress was made, 0 if nothing to do,
 * or -errno. j_checkpoint_mutex held. */
int jbd_checkpoint_pass(struct ujbd *j, bool force);
/* Committed transaction t joins the checkpoint list; j_state_lock held. */
void __jbd_cp_append(struct ujbd *j, struct jbd_txn *t);
/* Free checkpoint transactions with nothing left to write; j_state_lock. */
void __jbd_cp_drop_empty(struct ujbd *j);
/* Before another home write of jh's block: wait while a checkpoint write
 * of it is in flight. j_state_lock held (dropped while waiting). */
void __jbd_wait_ckpt_io(struct ujbd *j, struct jbd_jh *jh);

/* ---- revoke.c ------------------------------------------------------------- */

int jbd_revoke_table_init(struct jbd_revoke_table *rt, uint32_t cap);
void jbd_revoke_table_release(struct jbd_revoke_table *rt);
void jbd_revoke_table_clear(struct jbd_revoke_table *rt);
/* Add a record (0, or -UJBD_ETOOBIG when full); after a cancel, a new record. */
int jbd_revoke_add(struct jbd_revoke_table *rt, uint64_t block);
/* Cancel the record of block, if any (the block is journaled again). */
bool jbd_revoke_cancel(struct jbd_revoke_table *rt, uint64_t block);
bool jbd_revoke_has(const struct jbd_revoke_table *rt, uint64_t block);
/* The commit reads rt_blocks in order, skipping UINT64_MAX (cancelled). */
/* A table for a new transaction (one of the two at open); j_state_lock. */
struct jbd_revoke_table *__jbd_revoke_table_get(struct ujbd *j);
void __jbd_revoke_table_put(struct ujbd *j, struct jbd_revoke_table *rt);
/* Log blocks t's revoke records take (live records, j_rcap a block). */
uint32_t jbd_txn_revoke_blocks(const struct ujbd *j, const struct jbd_txn *t);

#endif

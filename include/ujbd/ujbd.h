/*
 * libujbd: atomic, crash-safe multi-block updates on a file or block device,
 * through a journal in the Linux jbd2 format.
 *
 * The one idea: a program groups the block updates that must happen
 * together into a handle; handles join the running compound transaction; a
 * commit thread ("kjournald") writes each transaction to the journal and
 * marks it committed with one commit block; later, checkpointing writes the
 * blocks to their home locations and frees the journal space. After a crash,
 * recovery replays every committed transaction, so each one happens entirely
 * or not at all.
 *
 *   ujbd_start(j, 3, &h);                          // up to 3 blocks
 *   ujbd_get_write_access(h, 100, &b);             // cached block 100
 *   memcpy(ujbd_buf_data(b), new, ujbd_block_size(j));
 *   ujbd_dirty_metadata(h, b);
 *   ujbd_buf_put(b);
 *   ujbd_stop(h);                                  // joins the transaction
 *   ujbd_commit_tid(j, tid); ujbd_wait_tid(j, tid);   // what fsync does
 *
 * Data modes, as jbd2's:
 *   - ORDERED (default): ujbd_write_data() blocks are written to their home
 *     location, not to the journal; the commit block of their transaction
 *     never becomes durable before they are. After a crash a block's data is
 *     either the new one or the old one; metadata is atomic. With async
 *     commit, the first ones of a transaction (ordered_journal_bytes) are
 *     journaled instead, so that its commit needs one flush.
 *   - JOURNAL: data blocks go through the journal like metadata: atomic too.
 *   - WRITEBACK: data blocks are written with no ordering against commits
 *     (gives up: after a crash, committed metadata may point at stale data).
 *
 * Threads: a program calls ujbd from any of its threads (pthreads or
 * not). Inside ujbd the same code also runs in the lab's simulated world
 * (simulated disks, virtual time), whose threads are ujbd's own; that
 * world, the block layer and the simulated disks are internal to ujbd
 * (docs/library.md).
 *
 * Thread-safety: a struct ujbd may be used by any number of threads at once.
 * A handle belongs to the thread that started it. A buffer reference may be
 * passed between threads but is used under the rules of the handle that got
 * it.
 *
 * Errors: 0 or a negative error: a system errno (EINVAL, EIO, ENOSPC of
 * the host, ...) meaning what it always means, or one of the journal's own
 * codes (enum ujbd_error, never equal to an errno value); ujbd_strerror()
 * names both. Nothing here prints or exits.
 *
 * Abort: after an I/O error on the journal (or on the data it orders), or
 * when a file under it was unlinked or replaced (-UJBD_EGONE, checked at
 * each commit), the journal is aborted: new handles get -EROFS, no commit
 * is acknowledged any more, and the error is recorded in the journal
 * superblock (s_errno, written with a cache flush) before any caller is
 * told of the abort: a call that returns the abort's error returns only
 * once that write was done or failed, so a program that exits at once
 * leaves the record on disk, and the next open refuses the journal until
 * it was checked.
 */
#ifndef UJBD_UJBD_H
#define UJBD_UJBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/jbd_log.h"
#include "ujbd/version.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ujbd;
struct ujbd_handle;
struct ujbd_buf;
struct blk_queue;
struct blk_queue_opts;

typedef uint32_t ujbd_tid_t;

/* Wrap-safe tid comparisons (tids are compared modulo 2^32). */
static inline bool ujbd_tid_gt(ujbd_tid_t a, ujbd_tid_t b)
{
	return (int32_t)(a - b) > 0;
}
static inline bool ujbd_tid_geq(ujbd_tid_t a, ujbd_tid_t b)
{
	return (int32_t)(a - b) >= 0;
}

/* ---- options ----------------------------------------------------------- */

enum ujbd_data_mode {
	UJBD_DATA_ORDERED = 0,
	UJBD_DATA_JOURNAL = 1,
	UJBD_DATA_WRITEBACK = 2,
};

/* When the commit thread is woken for a commit request (Eric Sandeen,
 * "jbd2: don't wake kjournald unnecessarily", linux-ext4, December 2012). */
enum ujbd_wake_policy {
	/* Only when no commit of that tid is already requested or running. */
	UJBD_WAKE_NEEDED = 0,
	/* On every request, as jbd2 did after "fix fsync() tid wraparound". */
	UJBD_WAKE_ALWAYS = 1,
};

/* Which journal writes carry the SYNC flag (the "Ext3 latency fixes"
 * discussion, LKML, April 2009). */
enum ujbd_sync_policy {
	UJBD_SYNC_FSYNC_ONLY = 0, /* only commits someone waits for */
	UJBD_SYNC_ALL = 1,
	UJBD_SYNC_OFF = 2,
};

/* Commit I/O priority (against the inversion of "Give kjournald a
 * IOPRIO_CLASS_RT io priority", LKML, October 2007): fixed, or inherit. */
#define UJBD_IOPRIO_INHERIT 0xffffu

/* What a handle does with a buffer the commit is logging. */
enum ujbd_under_commit {
	/* "copy": the running transaction modifies the live buffer at once;
	 * the commit logs a frozen copy (or its own I/O copy): nobody waits
	 * for log I/O. */
	UJBD_UNDER_COMMIT_COPY = 0,
	/* "wait-io": jbd's and jbd2's way. A buffer the commit has not yet
	 * started to write is still frozen-copied, but a handle that needs a
	 * buffer whose journal copy is in flight (BJ_Shadow) waits until that
	 * log write completes (UJBD_LAT_WAIT_SHADOW). Gives up: a foreground
	 * write access may wait for the disk (the atime stalls of today's
	 * kernels). The wait ends when that buffer's own log write
	 * completes: jbd2's rule since 3.11 ("jbd2: refine waiting for
	 * shadow buffers"). */
	UJBD_UNDER_COMMIT_WAIT_IO = 1,
	/* "wait-loop": as wait-io, with the rule of jbd in 2.6.2x and jbd2
	 * before 3.11: a shadowed buffer is released when the commit
	 * thread's wait loop, which walks the transaction's log writes
	 * newest first once it has submitted them all, reaches it, so the
	 * wait covers the commit thread's progress through its log writes,
	 * not one write. */
	UJBD_UNDER_COMMIT_WAIT_LOOP = 2,
};
/* "copy", "wait-io", "wait-loop" (NULL for an unknown value); parse: 0 or
 * -EINVAL. */
const char *ujbd_under_commit_name(enum ujbd_under_commit p);
int ujbd_under_commit_parse(const char *s, enum ujbd_under_commit *out);

/* Async commit: the commit block written with the log blocks, one flush
 * for all instead of one before the commit block and one for it. Used only for a transaction whose every block is in the journal and
 * checksummed (v2/v3 checksums, no ordered data written home: see
 * ordered_journal_bytes), and ujbd's recovery then ends the replay before
 * a transaction torn under its commit block. e2fsck and the kernel do not:
 * they replay the good blocks of a torn transaction. */
enum ujbd_async_commit {
	UJBD_ASYNC_COMMIT_OFF = 0,  /* jbd2's default */
	UJBD_ASYNC_COMMIT_ON = 1,   /* also where e2fsck or the kernel may
				     * replay the journal (gives up atomicity
				     * of a transaction torn by a crash, then) */
	/* ON where only ujbd replays the journal, OFF where e2fsck or the
	 * kernel may: ujbd_open of any location and ujbd_open_path of a
	 * standalone journal file are ON; ujbd_open_path of an ext4 image
	 * (internal or external journal) or of a journal device is OFF. */
	UJBD_ASYNC_COMMIT_AUTO = 2,
};
/* "off", "on", "auto" (NULL for an unknown value); parse: 0 or -EINVAL
 * (also takes "yes"/"no", "1"/"0"). */
const char *ujbd_async_commit_name(enum ujbd_async_commit a);
int ujbd_async_commit_parse(const char *s, enum ujbd_async_commit *out);

struct ujbd_opts {
	enum ujbd_data_mode data_mode;      /* ORDERED */
	uint64_t commit_interval_ns;        /* 5 s */
	uint64_t min_batch_time_ns;         /* 0 */
	uint64_t max_batch_time_ns;         /* 15 ms; 0 disables batching */
	/* Commit thread I/O priority in the kernel's ioprio_set(2) encoding,
	 * (class << 13) | level (class 1 realtime, 2 best-effort, 3 idle;
	 * level 0..7, 0 highest), or
	 * UJBD_IOPRIO_INHERIT: the highest priority among the threads waiting
	 * on the committing transaction, with be:4 as floor. Default be:3, the
	 * kernel's journal_ioprio default. Under inherit every wait on a
	 * transaction being committed (its commit: ujbd_wait_tid, ujbd_sync, a
	 * sync stop; a buffer it logs, under wait-io; a handle start while it
	 * is locked; log space while it commits) raises it at the moment of
	 * the wait: the commit's later bios carry the raised priority and
	 * those already queued are raised in the block layer (blk_boost, its
	 * bios tagged with a journal-unique tag); kjournald drops back to be:4
	 * when the commit ends. Counted in ujbd_stats (inherit_boosts ...). */
	uint16_t commit_ioprio;
	enum ujbd_under_commit under_commit; /* COPY */
	bool journal_meta;                  /* tag journal writes META: true */
	enum ujbd_sync_policy journal_sync; /* FSYNC_ONLY */
	/* SYNC journal writes also carry BLK_NOIDLE, so CFQ does not idle on
	 * the commit thread's queue after them (2.6.30's WRITE_SYNC): false */
	bool journal_noidle;
	enum ujbd_wake_policy wake;         /* NEEDED */
	/* Write the commit block together with the log blocks (one flush for
	 * all); used only when every block the transaction depends on is in
	 * the journal and checksummed (v2/v3, no ordered data written home).
	 * See enum ujbd_async_commit; `true` and `false` still mean ON and
	 * OFF. */
	enum ujbd_async_commit async_commit; /* AUTO */
	/* data=ordered with async commit (ON, or AUTO resolved to ON) on a
	 * v2/v3-checksummed journal: ujbd_write_data blocks of a transaction
	 * are journaled (logged with its metadata, written home later by the
	 * checkpoint) up to this many bytes per transaction, instead of
	 * written home before its commit block, so that the commit depends
	 * on no block outside the journal and goes async (one flush). A
	 * transaction that wrote a data block home (over the limit, or when
	 * the journal had no room for one more credit) writes the rest of its
	 * data home too, and commits with two flushes. Gives up: a journaled
	 * block reaches its home only at the checkpoint (ujbd_read sees it at
	 * once; a reader of the data device after ujbd_checkpoint or a clean
	 * close), and is written twice; it takes log space and a credit of
	 * the transaction (not of the handle). A block that goes home while
	 * an older copy of it may still be replayed gets a revoke record.
	 * 0, and every other configuration (a data hook set with
	 * ujbd_set_data_hook too: that data keeps the commit from going
	 * async), is jbd2's way: ordered data home before the commit block. */
	uint32_t ordered_journal_bytes;     /* 64 KiB */
	/* An fsync commits on its own thread: ujbd_commit_tid, ujbd_wait_tid,
	 * ujbd_sync and the stop of a sync handle (ujbd_write_atomic durable
	 * now), of the running transaction, when no commit is running, run
	 * the commit themselves (returning once it is done)
	 * instead of handing it to kjournald and waiting to be woken (not
	 * from a thread that still holds a handle, of any journal: that
	 * commit would wait for it, so kjournald commits once it stops). Two
	 * thread hops fewer per fsync; the commit's I/O is the caller's (its
	 * ioprio, its CFQ queue). kjournald still commits on the timer, for
	 * log space, when full, for asynchronous requests made while a commit
	 * runs, and at close. Not jbd2's way (its fsyncs always hand the
	 * commit to kjournald): ujbd_opts_jbd2 and the lab's era scenarios
	 * turn it off. ujbd_commit_tid then blocks until its commit is done:
	 * a program that only wants to start a commit turns it off too. */
	bool caller_commit;                 /* true */
	/* Ask the devices for cache flushes and FUA (true). false is ext3's
	 * barrier=0, its default until 2.6.38 (so in the lab's 2.6.2x): no
	 * PREFLUSH/FUA on the commit block or the superblock, no flush of
	 * ordered data, of checkpointed blocks or after an async commit.
	 * Gives up durability and ordering across a power cut on a device
	 * with a volatile write cache (what completed may still be in the
	 * cache, in any order); keeps atomicity and ordering across a process
	 * crash. For the lab's era experiments, and for devices without a
	 * volatile cache. */
	bool barrier;                       /* true */
	/* Simulated CPU time charged to the thread that wakes the commit
	 * thread, with j_state_lock held, as jbd2's wake_up of j_wait_commit
	 * runs under the journal's state lock: in the sim world's CPU model it
	 * makes the cost of a wakeup (Jan Kara's explanation of an AIM7
	 * slowdown, linux-ext4, January 2013) visible to every thread that
	 * needs the lock meanwhile. 0 (the default) charges nothing; the real
	 * world pays its real cost anyway. */
	uint64_t wakeup_cpu_ns;             /* 0 */
	/* The buffer lock of jbd and jbd2 (false): a write access to a
	 * block with I/O in flight on its buffer (its home write by the
	 * checkpoint or by the writeback below, or a read) waits for that
	 * I/O to end, as do_get_write_access begins with lock_buffer(), and
	 * the wait is counted under UJBD_LAT_LOCK_* by the I/O it was.
	 * false is ujbd's way: the home write goes from a copy and a write
	 * access never waits for it. */
	bool buffer_lock;
	/* Metadata writeback as pdflush and kupdate did it (0: off, ujbd's
	 * way: committed buffers go home only through the checkpoint).
	 * Every writeback_interval_ns, the checkpoint thread writes home,
	 * as asynchronous WRITEs from its own thread (its ioprio: the
	 * kernel's flusher threads ran at be:4), every committed buffer
	 * once committed buffers have waited to go home without a break
	 * for writeback_expire_ns (0: 30 s, dirty_expire_centisecs): the
	 * expiry of the block device's inode, whose dirty buffers pdflush
	 * wrote all together every 5 s (dirty_writeback_centisecs) once
	 * the inode was old, whatever each buffer's own age. The tail then
	 * moves past what was written. */
	uint64_t writeback_interval_ns;     /* 0 */
	uint64_t writeback_expire_ns;       /* 0: 30 s */
	/* Largest transaction in journal blocks; 0 = (journal length) / 4. */
	uint32_t max_transaction_blocks;
	/* Buffer cache limit in blocks (clean buffers are evicted LRU). */
	uint64_t cache_blocks;              /* 16384 */
	/* Block layer (internal to ujbd, for the lab and the tool: a program
	 * leaves these NULL): queues to use (the same queue when journal and
	 * data share a device), or NULL to have ujbd create them over the
	 * devices with blk_opts (NULL: the noop elevator and explicit
	 * plugging); ujbd frees only the queues it created. */
	struct blk_queue *journal_queue, *data_queue;
	const struct blk_queue_opts *blk_opts;
	/* Recover at open when the journal needs it (true); false: -EUCLEAN. */
	bool recover;
	/* Accept a journal whose superblock records an earlier abort
	 * (s_errno): clear it at open instead of failing with -EUCLEAN. Set it
	 * once the data has been checked (false). */
	bool clear_error;
	/* Format the journal at open (destroys its contents). */
	bool format;
	/* With format: size, checksums, ... (jbd_log.h; bad values: -EINVAL,
	 * nothing written). An all-zero uuid gets a random one (version 4):
	 * from getrandom in the real world, from the world's seeded PRNG in
	 * the sim world (a sim run stays a function of its seed). */
	struct jbd_format_opts format_opts;
};

/* Fill opts with the defaults above. */
void ujbd_opts_default(struct ujbd_opts *opts);
/* The defaults, with jbd2's own choices where ujbd's differ: async commit
 * OFF, ordered_journal_bytes 0 (ordered data home before the commit block),
 * caller_commit false (kjournald commits every transaction). Two flushes
 * per fsync, as ext4's. */
void ujbd_opts_jbd2(struct ujbd_opts *opts);

/* ---- open and close ---------------------------------------------------- */

/*
 * Open the journal at loc (format.h: journal device + map, data device).
 * Recovers it first when needed and allowed; starts the commit thread (named
 * "kjournald") and the checkpoint thread. Tids carry on from the
 * superblock: they only ever grow, across closes and opens.
 * Errors: -EUCLEAN (corrupt journal, or an earlier abort recorded in
 * s_errno: the journal must be recovered or checked first), -EOPNOTSUPP
 * (unknown features), -EIO, -ENOMEM, -EINVAL (bad options; or a data
 * device that is the journal's own with no block outside the journal,
 * checked before any format). err, if not NULL, gets a one-line
 * description.
 */
int ujbd_open(const struct jbd_loc *loc, const struct ujbd_opts *opts,
	      struct ujbd **out, struct jbd_err *err);
/*
 * Open by path, in the real world: TARGET is an ext4 image or device (its
 * internal journal; data device = itself; the ext4 needs_recovery flag is set
 * while open and cleared at close), or a standalone journal file with its data
 * device in data_path. journal_path, if not NULL, names an external journal
 * device for an ext4 TARGET. data_path may name the journal file itself:
 * the journal is then its first s_maxlen blocks (format_opts.blocks when
 * formatting) and the data the blocks after them; a journal that fills the
 * file is refused (-EINVAL). With clear_error, an ext4 TARGET whose journal
 * records an abort (s_errno) is first marked "with errors" in its ext4
 * superblock (the next e2fsck is a full check), as the kernel does at mount.
 * Every file opened is claimed until close (a block device O_EXCL, a
 * regular file an open-file-description write lock): -EBUSY, with err
 * naming the process that holds it, when the journal or its data file is
 * open elsewhere, in this process or another, and -EBUSY ("mounted on
 * ...") for a mounted file system, directly or through a loop device
 * backed by the image. Errors as ujbd_open, and
 * -EUCLEAN for a truncated ext4 image.
 */
int ujbd_open_path(const char *target, const char *data_path,
		   const char *journal_path, const struct ujbd_opts *opts,
		   struct ujbd **out, struct jbd_err *err);
/*
 * Commit the running transaction, checkpoint everything, mark the journal
 * empty (s_start = 0) and free. Returns the journal's error if it was
 * aborted (it is still freed). The devices passed in loc are not closed.
 */
int ujbd_close(struct ujbd *j);
/*
 * Stop at once, as a crash would: no commit, no checkpoint, no superblock
 * write; threads stopped and memory freed. For tests and recovery drills.
 */
void ujbd_close_hard(struct ujbd *j);
/*
 * For whoever owns what lies under a journal (its devices, a file system
 * flag): fn(arg, rc) is called once, by ujbd_close or ujbd_close_hard,
 * after the journal is freed, so it may close the devices. rc is
 * ujbd_close's result (0: a clean close, the log is empty on disk), or
 * -ESHUTDOWN for ujbd_close_hard. One hook per journal (a second call
 * replaces it; NULL removes it). Set it before the journal is shared.
 */
typedef void (*ujbd_close_fn)(void *arg, int rc);
void ujbd_set_close_hook(struct ujbd *j, ujbd_close_fn fn, void *arg);

uint32_t ujbd_block_size(const struct ujbd *j);
/* Blocks of the data device. */
uint64_t ujbd_data_blocks(const struct ujbd *j);

/* ---- handles ----------------------------------------------------------- */

/*
 * Start a handle that will modify at most nblocks journaled blocks. Waits
 * while the running transaction is locked or has no room, and for log space.
 * -UJBD_ETOOBIG if nblocks can never fit in one transaction; -EROFS if
 * aborted; -EDEADLK if the calling thread already holds a handle in j.
 * Handles do not nest: a thread holding a handle must not start another,
 * nor call ujbd_sync, ujbd_wait_tid of its own transaction (or a later
 * one) or ujbd_checkpoint (each would wait for the handle it holds: they
 * return -EDEADLK), nor ujbd_close (undefined). A failed start leaves
 * nothing to stop (*out is NULL).
 */
int ujbd_start(struct ujbd *j, unsigned nblocks, struct ujbd_handle **out);
/* Ask for more credits; -EAGAIN if the running transaction has no room
 * (stop and start a new handle), -UJBD_ETOOBIG if the handle would hold
 * more than any transaction. A failed extend changes nothing. */
int ujbd_extend(struct ujbd_handle *h, unsigned nblocks);
/* Make the commit of this handle's transaction synchronous: ujbd_stop
 * commits it and waits for it (with group-commit batching). */
void ujbd_handle_set_sync(struct ujbd_handle *h, bool sync);
ujbd_tid_t ujbd_handle_tid(const struct ujbd_handle *h);
/*
 * Stop the handle. A sync handle waits for its commit, first waiting up to
 * the adaptive batch window so other handles join (skipped when this thread
 * was also the last sync writer). Returns the handle's first error, or the
 * commit's error for a sync handle. The handle is gone either way.
 * Stopping a handle twice, or from another thread than the one that
 * started it, is a programming error no return value can report: it
 * aborts the program (an assertion), as does using a journal after
 * ujbd_close; every other misuse is an error return.
 */
int ujbd_stop(struct ujbd_handle *h);

/*
 * Get the cached buffer of data-device block `block` for modification by
 * this handle (reading it if not cached). If the block is being committed,
 * the committing transaction keeps a frozen copy and the handle modifies the
 * live buffer. Consumes one credit the first time a block joins the
 * transaction (-UJBD_ENOCREDIT when none is left). The reference is
 * released with ujbd_buf_put. -EINVAL for a block beyond the data device,
 * -UJBD_EINJOURNAL for a block inside the journal (when the data device is
 * the journal's: ext4's internal journal, a standalone journal that is its
 * own data file); a refused block leaves the handle as it was.
 */
int ujbd_get_write_access(struct ujbd_handle *h, uint64_t block,
			  struct ujbd_buf **out);
/* As above, for a block whose old contents do not matter: no read; the
 * buffer is zero-filled. The same errors. */
int ujbd_get_create_access(struct ujbd_handle *h, uint64_t block,
			   struct ujbd_buf **out);
/* The buffer changed: it goes to the journal with this transaction. */
int ujbd_dirty_metadata(struct ujbd_handle *h, struct ujbd_buf *b);
/*
 * The block is freed: older journaled copies must not be replayed (a revoke
 * record), and it is no longer written back. -EINVAL for a block this very
 * handle journaled (forget it instead), or beyond the data device;
 * -UJBD_EINJOURNAL for a block inside the journal. A transaction holds a
 * fixed number of revoke records (what its reserved revoke blocks hold);
 * once three quarters are used it is committed and new handles go to the
 * next one, so a handle may revoke up to a quarter of that (a few hundred
 * blocks with 1 KiB blocks, thousands with 4 KiB) before -UJBD_ETOOBIG.
 */
int ujbd_revoke(struct ujbd_handle *h, uint64_t block);
/* Drop this transaction's interest in a buffer it journaled (the block was
 * freed in the same transaction that changed it). */
int ujbd_forget(struct ujbd_handle *h, struct ujbd_buf *b);
/*
 * A data block: ORDERED and WRITEBACK write it to its home location (ORDERED:
 * durable before the transaction's commit block; or, under
 * ordered_journal_bytes, journaled with the transaction and written home by
 * the checkpoint, on a credit of the transaction, not of the handle);
 * JOURNAL journals it as metadata (consumes a credit). data: one block,
 * copied. The errors of ujbd_get_write_access (a block beyond the device or
 * inside the journal); -UJBD_ETOOBIG (ORDERED): the block goes home and an
 * older copy of it in the log needs a revoke record, but the transaction
 * has no room for one more (stop the handle, commit, write it again).
 */
int ujbd_write_data(struct ujbd_handle *h, uint64_t block, const void *data);
/*
 * n data blocks from block on, data n blocks long: what n calls of
 * ujbd_write_data do, but a run of blocks that would go home (ORDERED over
 * ordered_journal_bytes, WRITEBACK) and that the journal holds nothing of
 * (no cached buffer, no logged copy recovery could replay) is written home
 * now, up to 1 MiB per write, past the cache, before this returns; the
 * transaction's commit block is ordered after it as after ordered data.
 * The other blocks take ujbd_write_data's way. The caller keeps other
 * threads from reading or writing these blocks through j meanwhile (a file
 * system's lock on the file). The errors of ujbd_write_data (after
 * -UJBD_ETOOBIG some blocks may be written: write the range again under a
 * new handle); -EINVAL, or
 * -UJBD_EINJOURNAL when any block of the range is refused, before any is
 * written. A failed write home aborts the journal (as a failed ordered
 * write in a commit does): the metadata that points at the blocks never
 * commits.
 */
int ujbd_write_data_blocks(struct ujbd_handle *h, uint64_t block, uint32_t n,
			   const void *data);

/*
 * Ordered data kept by the caller (jbd2's ordered inodes, whose data the
 * file system writes from its own page cache at commit): with a hook set,
 * every commit in ORDERED mode calls fn in its flush-data phase, on the
 * committing thread (kjournald, or an fsync's thread under caller_commit),
 * with no journal lock held, and goes on to the log blocks only when fn
 * returns. fn writes, and waits for, every data block the transaction
 * io->tid depends on that is not durable yet, giving its bios io->bio_flags
 * (the commit's SYNC policy), io->ioprio (the commit's I/O priority; 0 is the
 * calling thread's) and io->boost_tag (what blk_boost raises under inherit).
 * It returns the number of blocks it wrote (>= 0), after which the journal
 * flushes a separate data device before the commit block (on the journal's
 * own device the commit block's PREFLUSH covers them), or a negative errno,
 * which aborts the journal. fn must not start handles, commit or wait for a
 * commit. Set it (NULL: none) before the first handle that depends on it.
 */
struct ujbd_data_io {
	ujbd_tid_t tid;
	uint32_t bio_flags;
	uint16_t ioprio;
	uint64_t boost_tag;
};
typedef int (*ujbd_data_fn)(void *arg, const struct ujbd_data_io *io);
void ujbd_set_data_hook(struct ujbd *j, ujbd_data_fn fn, void *arg);

void *ujbd_buf_data(struct ujbd_buf *b);
uint64_t ujbd_buf_block(const struct ujbd_buf *b);
void ujbd_buf_put(struct ujbd_buf *b);

/* Read block through the cache: the newest contents, committed or not.
 * -EINVAL beyond the data device, -UJBD_EINJOURNAL inside the journal. */
int ujbd_read(struct ujbd *j, uint64_t block, void *buf);
/* n blocks from block on into buf (n blocks long), the newest contents, as
 * n calls of ujbd_read give: blocks the cache holds from it, runs of the
 * others (whose newest copy is on the device: the journal caches every
 * block it has not written home) read with one read each, up to 1 MiB,
 * past the cache (nothing is added to it). A block written by another
 * thread during the call reads as before or after. -EINVAL or
 * -UJBD_EINJOURNAL for any block of the range, before anything is read;
 * -EIO. */
int ujbd_read_blocks(struct ujbd *j, uint64_t block, uint32_t n, void *buf);

/* ---- commits (what fsync uses) ---------------------------------------- */

/* The running transaction's tid, or the last committing one if none. */
ujbd_tid_t ujbd_running_tid(struct ujbd *j);
/* The newest tid whose commit is done (durable), without waiting; what a
 * file system asks before reusing a block freed in tid (ext3 never reuses a
 * block its bitmap freed in a transaction not yet committed). */
ujbd_tid_t ujbd_committed_tid(struct ujbd *j);
/* Ask for tid to be committed (no wait). 0, or -UJBD_ENOTID for a tid not
 * handed out yet (already committed tids are fine: 0). */
int ujbd_commit_tid(struct ujbd *j, ujbd_tid_t tid);
/* Wait until tid is committed (durable). If its commit failed or the
 * journal aborted before it was durable, returns the error that aborted
 * the journal: -EIO, -ENOSPC (the host file system under a journal file is
 * full), -UJBD_EGONE (a file under the journal was unlinked or replaced);
 * -UJBD_ENOTID for a tid not handed out; -EDEADLK when the calling thread
 * holds a handle of tid or of an earlier transaction. */
int ujbd_wait_tid(struct ujbd *j, ujbd_tid_t tid);
/* Commit everything so far and wait; -EDEADLK from a thread holding a
 * handle in j. */
int ujbd_sync(struct ujbd *j);
/* Checkpoint every committed transaction now and wait; -EDEADLK from a
 * thread holding a handle in j. */
int ujbd_checkpoint(struct ujbd *j);

/* ---- the simple entry point -------------------------------------------- */

struct ujbd_block {
	uint64_t block;
	const void *data; /* one block */
};
#define UJBD_DURABLE 1u /* return only once the update is durable */
/*
 * Write these blocks atomically (journaled as metadata), in one handle;
 * durable on return with UJBD_DURABLE, else at the next commit. n = 0 does
 * nothing.
 * Errors, each leaving every block as it was (nothing of the set is in the
 * log or at home, now or after a crash): -EINVAL for a NULL set, NULL data,
 * a block beyond the data device, or a block named twice (all checked
 * before anything starts); -UJBD_EINJOURNAL for a block inside the
 * journal; -UJBD_ETOOBIG for more blocks than a
 * transaction holds; -EDEADLK if the calling thread holds a handle in j;
 * -EROFS on an aborted journal; -ENOMEM. With UJBD_DURABLE, a failed
 * commit (-EIO, ...) means the set may or may not be durable: the journal
 * is aborted then, and recovery decides.
 */
int ujbd_write_atomic(struct ujbd *j, const struct ujbd_block *blocks,
		      size_t n, unsigned flags);

/* ---- statistics -------------------------------------------------------- */

/* A latency distribution's summary: the journal keeps a log-linear
 * histogram (no samples; a percentile is at most 1/16 above the exact
 * nearest-rank value, never above max_ns) and publishes these. */
struct ujbd_hist {
	uint64_t count, p50_ns, p99_ns, max_ns, sum_ns;
};

/* Latency causes, latencytop-style. */
enum ujbd_lat_cause {
	UJBD_LAT_WAIT_TRANSACTION = 0, /* handle start waited (locked/full) */
	UJBD_LAT_WAIT_COMMIT = 1,      /* ujbd_wait_tid / sync stop */
	UJBD_LAT_WAIT_LOG_SPACE = 2,   /* start waited for checkpointing */
	UJBD_LAT_WAIT_FROZEN = 3,      /* write access made a frozen copy */
	UJBD_LAT_WAIT_SHADOW = 4,      /* wait-io, wait-loop: write access waited
					* for the log write of the buffer's
					* journal copy */
	/* buffer_lock: write access waited for I/O in flight on the
	 * buffer: its home write by the writeback (pdflush), its home
	 * write by a checkpoint, or a read of the block */
	UJBD_LAT_LOCK_WRITEBACK = 5,
	UJBD_LAT_LOCK_CHECKPOINT = 6,
	UJBD_LAT_LOCK_READ = 7,
	UJBD_LAT_NR
};

struct ujbd_lat {
	uint64_t count, sum_ns, max_ns;
};

/*
 * The fields of /proc/fs/jbd2/<dev>/info (cumulative since open; the
 * per-phase values are sums, divided when formatted, as the kernel does),
 * plus histograms, wakeup counters and latency per cause.
 */
struct ujbd_stats {
	uint64_t ts_tid;                 /* transactions committed */
	uint64_t ts_requested;           /* ... whose commit was requested */
	uint32_t max_transaction_blocks; /* "each up to K blocks" */
	uint64_t rs_wait_ns, rs_request_delay_ns, rs_running_ns, rs_locked_ns,
		rs_flushing_ns, rs_logging_ns;  /* sums */
	uint64_t average_commit_time_ns; /* (sample + 3 * old) / 4 */
	uint64_t rs_handle_count, rs_blocks, rs_blocks_logged; /* sums */
	/* ujbd_write_data blocks of the committed transactions that the
	 * commit logged (data=ordered under ordered_journal_bytes) or wrote
	 * home (ordered over it, writeback); the commits whose commit
	 * block went with their log blocks (async commit: one flush); and
	 * the commits a waiting caller ran on its own thread (caller_commit:
	 * ujbd_commit_tid, ujbd_sync, a sync stop) rather than the commit
	 * thread */
	uint64_t data_journaled, data_home, async_commits, caller_commits;
	struct ujbd_hist commit_time;    /* T_FLUSH to done */
	struct ujbd_hist fsync_latency;  /* ujbd_wait_tid and sync stops */
	uint64_t wakeups;                /* commit thread woken */
	uint64_t useless_wakeups;        /* ... and found nothing to do */
	struct ujbd_lat lat[UJBD_LAT_NR];
	uint64_t checkpoint_written, checkpoint_dropped;
	uint64_t log_space_waits, log_space_stall_ns_max;
	/* commit_ioprio = inherit: raises of a commit's priority by a waiter
	 * with a higher one; then, for the requests the block layer raised
	 * while queued (blk_boost; the journal's and the data queue's
	 * counters, so another user's blk_boost on a shared queue counts
	 * too), how many and how long they had waited in the queue before
	 * the raise and from it to dispatch. */
	uint64_t inherit_boosts;
	uint64_t boosted_rqs;
	uint64_t boost_wait_before_ns_sum, boost_wait_before_ns_max;
	uint64_t boost_wait_after_ns_sum, boost_wait_after_ns_max;
};

int ujbd_stats(struct ujbd *j, struct ujbd_stats *out);

/*
 * Per-thread latency by cause: the journal adds every wait the calling
 * thread suffers in it (the UJBD_LAT_* causes, the same waits as the
 * journal-wide lat[]) to the accumulator attached to that thread, in every
 * journal it uses, as well. Thread-local; NULL detaches. The accumulator
 * is the caller's memory, written only by its thread while attached (read
 * it after detaching, or from that thread). Zero it before attaching.
 */
struct ujbd_lat_acct {
	uint64_t count[UJBD_LAT_NR], sum_ns[UJBD_LAT_NR], max_ns[UJBD_LAT_NR];
};
void ujbd_lat_attach(struct ujbd_lat_acct *acc);
/* The kernel's info file text, byte for byte in layout. Returns the
 * length, as snprintf (the text is cut, NUL-terminated, to len). */
int ujbd_stats_format(const struct ujbd_stats *s, char *buf, size_t len);
/* The same as one JSON object (plus histograms, wakeups, latencies). */
int ujbd_stats_json(const struct ujbd_stats *s, char *buf, size_t len);

/* ---- trace events (named after the kernel's jbd2 tracepoints) ---------- */

enum ujbd_trace_kind {
	UJBD_TR_START_COMMIT, UJBD_TR_COMMIT_LOCKING, UJBD_TR_COMMIT_FLUSHING,
	UJBD_TR_COMMIT_LOGGING, UJBD_TR_END_COMMIT, UJBD_TR_DROP_TRANSACTION,
	UJBD_TR_RUN_STATS, UJBD_TR_CHECKPOINT, UJBD_TR_CHECKPOINT_STATS,
	UJBD_TR_UPDATE_LOG_TAIL, UJBD_TR_WRITE_SUPERBLOCK, UJBD_TR_HANDLE_START,
	UJBD_TR_HANDLE_EXTEND, UJBD_TR_HANDLE_STATS, UJBD_TR_LOCK_BUFFER_STALL,
	UJBD_TR_NR
};

#define UJBD_TRACE_ARGS 9

struct ujbd_trace_event {
	enum ujbd_trace_kind kind;
	const char *name;       /* "jbd2_start_commit", ... */
	uint64_t time_ns;       /* CLOCK_MONOTONIC (the lab: virtual time) */
	ujbd_tid_t tid;
	/* kind-specific fields, documented per kind in docs/stats.md and
	 * ujbd_set_trace_hook(3); a[6..8] are used by jbd2_run_stats only */
	uint64_t a[UJBD_TRACE_ARGS];
};
typedef void (*ujbd_trace_fn)(void *arg, const struct ujbd_trace_event *ev);
/* Install an in-process hook (NULL to remove). Called on the thread that
 * fires the event, possibly with journal locks held: it must not call ujbd. */
void ujbd_set_trace_hook(struct ujbd *j, ujbd_trace_fn fn, void *arg);

/* ---- version ----------------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH": the UJBD_VERSION of the
 * headers it was built with (ujbd/version.h). A program compares it with
 * its own UJBD_VERSION to notice that it runs against another libujbd than
 * it was compiled for. Thread-safe; never fails. */
const char *ujbd_version(void);

/* ---- errors ------------------------------------------------------------ */

/*
 * The journal's own error codes, returned negated as errno values are.
 * They start above 4095, the largest errno value Linux uses, so an error
 * from the system (a missing file's ENOENT, a full host file system's
 * ENOSPC) is never taken for one of these, nor the other way round.
 */
enum ujbd_error {
	UJBD_ERROR_BASE = 4096,
	/* More blocks than one transaction can ever hold (ujbd_start,
	 * ujbd_extend, ujbd_write_atomic; revoke records past the limit). */
	UJBD_ETOOBIG = UJBD_ERROR_BASE + 1,
	/* The handle has used every credit it asked for: ujbd_extend it. */
	UJBD_ENOCREDIT = UJBD_ERROR_BASE + 2,
	/* No such transaction: the tid was never handed out. */
	UJBD_ENOTID = UJBD_ERROR_BASE + 3,
	/* The block lies inside the journal (its data device is the
	 * journal's): never data. */
	UJBD_EINJOURNAL = UJBD_ERROR_BASE + 4,
	/* A file under the journal (its journal file, its data file) was
	 * unlinked or replaced while open: the journal aborted (checked at
	 * every commit), since nothing written to it could be found again. */
	UJBD_EGONE = UJBD_ERROR_BASE + 5,
	UJBD_ERROR_LAST = UJBD_EGONE
};

/* A description of a negative error returned by ujbd: the system's text
 * (strerror) for an errno value, ujbd's words for enum ujbd_error. */
const char *ujbd_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_UJBD_H */

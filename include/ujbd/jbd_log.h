/*
 * ujbd offline journal API: load a journal, scan its log, recover it, append
 * a transaction, format a standalone journal.
 *
 * Everything here works on a struct jbd_loc (format.h): a device, the map of
 * journal blocks to device blocks, and the data device tags point into. The
 * journal runtime reuses these pieces (superblock I/O, the writer's block
 * builders, the recovery passes).
 *
 * The one rule recovery lives by: every transaction is read and validated
 * before the first byte goes to the data device, so a corrupt journal leaves
 * the data device untouched. The data device is flushed before the journal
 * is marked empty, so a crash in between only replays again.
 *
 * Thread-safety: a struct jbd_journal is used by one thread at a time.
 * Errors: 0 or a negative errno, and err->msg says what and where; nothing
 * prints.
 */
#ifndef UJBD_JBD_LOG_H
#define UJBD_JBD_LOG_H

#include "ujbd/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded journal: the log itself, offline (no threads, no locks). The
 * running journal (struct ujbd, ujbd.h) embeds one for its log and adds
 * what runs over it. */
struct jbd_journal {
	struct jbd_loc j_loc;      /* copy of the caller's (the map is borrowed) */
	struct jbd2_sb j_sb;       /* the superblock as read, or as last written */
	struct jbd_fmt j_fmt;
	uint32_t j_first, j_last;  /* the circular log area [j_first, j_last) */
};

/*
 * Read and validate the superblock at loc->j_sb_block (jbd_sb_check with the
 * loc's block size and length). -EUCLEAN/-EOPNOTSUPP corrupt or unsupported,
 * -EIO read error.
 */
int jbd_journal_load(const struct jbd_loc *loc, struct jbd_journal *j,
		     struct jbd_err *err);
/* Refresh the checksum of j->j_sb, write it, flush the journal device. */
int jbd_journal_write_sb(struct jbd_journal *j, struct jbd_err *err);
/* One journal block (j_blocksize bytes) by journal block number. */
int jbd_journal_read(const struct jbd_journal *j, uint64_t blk, void *buf);
int jbd_journal_write(const struct jbd_journal *j, uint64_t blk, const void *buf);
/* The next log block after blk, wrapping at j_last to j_first. */
uint32_t jbd_log_next(const struct jbd_journal *j, uint32_t blk);
/* Blocks from a to b going forward around the log (0 if equal). */
uint32_t jbd_log_distance(const struct jbd_journal *j, uint32_t a, uint32_t b);

/* ---- scan: what the log holds ------------------------------------------ */

enum jbd_csum_state {
	JBD_CSUM_NONE = 0, /* the journal has no such checksum */
	JBD_CSUM_GOOD = 1,
	JBD_CSUM_BAD = 2,
};

struct jbd_scan_tag {
	uint64_t target;        /* data device block */
	uint32_t journal_block; /* where the copy is in the log */
	uint32_t flags;
	uint32_t csum_stored;   /* the tag's checksum field (v2: 16 bits) */
	uint8_t csum;           /* enum jbd_csum_state */
};

/* A descriptor or revoke block of a transaction. */
struct jbd_scan_block {
	uint32_t journal_block;
	uint32_t type;          /* JBD2_DESCRIPTOR_BLOCK or JBD2_REVOKE_BLOCK */
	uint8_t csum;           /* tail checksum */
	uint32_t count;         /* tags, or revoke records */
	uint32_t r_count;       /* revoke: the stored r_count */
};

struct jbd_scan_trans {
	uint32_t tid;
	uint32_t start_block;
	struct jbd_scan_block *blocks;
	size_t nblocks;
	struct jbd_scan_tag *tags;
	size_t ntags;
	uint64_t *revoked;
	size_t nrevoked;
	bool has_commit;        /* a commit block with this tid was read */
	bool committed;         /* ... and it verified */
	bool replay;            /* tid < end_tid: recovery replays it */
	uint32_t commit_block;
	uint64_t commit_sec;
	uint32_t commit_nsec;
	uint8_t commit_csum;    /* enum jbd_csum_state */
	bool bad_revoke;        /* a revoke block with r_count beyond the block */
};

enum jbd_scan_stop {
	JBD_STOP_EMPTY = 0,     /* s_start == 0: nothing in the log */
	JBD_STOP_NO_MAGIC,      /* end of log: no magic */
	JBD_STOP_SEQUENCE,      /* end of log: another sequence number */
	JBD_STOP_BLOCKTYPE,     /* end of log: unknown block type */
	JBD_STOP_STALE,         /* end of log: bad checksum, older commit time */
	JBD_STOP_LOG_FULL,      /* the whole log was read */
	JBD_STOP_CORRUPT,       /* a committed transaction is corrupt */
	JBD_STOP_LOOP,          /* a transaction runs around the whole log */
	JBD_STOP_IO,            /* read error */
};

struct jbd_scan {
	struct jbd_scan_trans *sc_trans;
	size_t sc_ntrans, sc_cap;
	uint32_t sc_start_tid, sc_start_block;
	uint32_t sc_end_tid;    /* first tid not to replay (end_transaction) */
	uint32_t sc_end_block;  /* log block after the last replayable commit */
	enum jbd_scan_stop sc_stop;
	uint32_t sc_stop_block;
	char sc_stop_msg[160];  /* why the scan stopped, for ujbd dump */
	int sc_error;           /* 0, or what the scan returned */
};

const char *jbd_scan_stop_name(enum jbd_scan_stop s);

/*
 * Scan the log from s_start as recovery's PASS_SCAN does (jbd2's do_one_pass),
 * recording every transaction, block, tag (with its data checksum checked),
 * revoke record and commit. Bounded by the log length. Returns 0, or
 * -EUCLEAN for a corrupt committed transaction or a scan that would loop,
 * -EIO, -ENOMEM (err says which); sc holds what was found either way and
 * must be released.
 */
int jbd_scan_log(const struct jbd_journal *j, struct jbd_scan *sc,
		 struct jbd_err *err);
void jbd_scan_release(struct jbd_scan *sc);

/* ---- recovery ------------------------------------------------------------ */

struct jbd_recover_opts {
	bool dry_run;           /* validate and count; write nothing */
	/* Bytes of the log kept in memory from the scan for the home writes;
	 * 0 = the whole log (the journal's length), so it is read once. A copy
	 * past the budget is read again, and checked again, when written. */
	uint64_t hold_max;
	/* If set, called as the home writes go: blocks written so far and
	 * their total, last with done == total (a display of progress for a
	 * large replay; the scan before it reads the log sequentially). Not
	 * called for a dry run or an empty journal. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

struct jbd_recover_result {
	bool nothing_to_do;     /* s_start was 0 */
	uint32_t first_tid, end_tid; /* replayed [first_tid, end_tid) */
	uint32_t next_tid;      /* s_sequence written (end_tid + 1) */
	uint64_t replayed_transactions;
	uint64_t replayed_blocks;  /* copies replayed (every version of a block,
				    * as e2fsck counts them) */
	uint64_t revoked_blocks;   /* tags skipped because revoked */
	uint64_t revoke_records;   /* revoke records in replayed transactions */
	uint64_t bad_csum_blocks;  /* tags skipped for a bad data checksum */
	/* ASYNC_COMMIT journals: transactions not replayed because one of their
	 * blocks failed its checksum (a commit block that reached the disk before
	 * its log blocks did); replay ends before the first of them. */
	uint64_t torn_transactions;
	uint32_t head_block;       /* log end, saved in s_head */
	uint64_t written_blocks;   /* data blocks written: each block once, its
				    * last replayed copy */
	uint64_t held_bytes;       /* of the log kept in memory for the writes */
	uint64_t log_reads;        /* read requests of the log */
};

/*
 * Replay the log onto loc->j_data: scan, validate every transaction (tags
 * inside the data device and not on the journal, revoke blocks sane), then
 * write each block once, its last replayed copy (the bytes replaying every
 * copy in log order leaves), in block order, flush the data device, write
 * the superblock (s_start 0, s_sequence end_tid + 1, s_head = log end) and
 * flush the journal device. The log is read once, ahead of the scan, and
 * kept in memory for the writes: up to o->hold_max bytes, by default the
 * whole log, at most the journal's length (a 1 GiB journal full of
 * distinct blocks: 1 GiB, plus 56 bytes per logged block, 14 MiB). Refuses
 * FAST_COMMIT logs. -EBADMSG: some data blocks had bad checksums and were
 * skipped, the others replayed and the journal marked empty with s_errno =
 * -EIO (as e2fsck continues). Any other error before the home writes
 * (r->written_blocks 0) leaves everything as it was; one from the home
 * writes on (a data write or flush, the superblock's write: the host's
 * errno, -ENOSPC for a full file system) leaves r->written_blocks nonzero,
 * the blocks the replay set out to write, some of which may be on the data
 * device: the journal still needs recovery, and a jbd_recover once the
 * cause is fixed replays them all again.
 */
int jbd_recover(struct jbd_journal *j, const struct jbd_recover_opts *o,
		struct jbd_recover_result *r, struct jbd_err *err);

/* ---- writing one transaction ------------------------------------------ */

struct jbd_write_block {
	uint64_t target;        /* data device block */
	const void *data;       /* j_blocksize bytes (not modified) */
};

struct jbd_txn_desc {
	const struct jbd_write_block *blocks;
	size_t nblocks;
	const uint64_t *revokes;
	size_t nrevokes;
	uint64_t commit_sec;
	uint32_t commit_nsec;
	/* Called once everything is validated and placed, before the first
	 * journal write (ujbd write sets ext4 needs_recovery here). A negative
	 * return aborts with nothing written. May be NULL. */
	int (*before_write)(void *arg, struct jbd_err *err);
	void *before_write_arg;
};

struct jbd_write_result {
	uint32_t tid;
	uint32_t start_block;   /* first block of the transaction */
	uint32_t commit_block;
	uint32_t log_blocks;    /* blocks written to the log */
};

/*
 * Append one committed transaction after the last committed one (or at
 * s_head / s_first when the journal is empty), wrapping at the end of the
 * log: revoke blocks first, then descriptors and data (escaped, checksummed
 * in the journal's tag format), flush, then the commit block and a flush.
 * The superblock is updated (s_start, s_sequence, REVOKE feature) before the
 * commit block is written. -ENOSPC if it does not fit in the free log,
 * -EINVAL for a target beyond the data device or needing 64BIT,
 * -UJBD_EINJOURNAL (ujbd.h) for a target (or revoke) inside the journal,
 * -EUCLEAN if the log is corrupt. Nothing is written on any of these.
 */
int jbd_write_txn(struct jbd_journal *j, const struct jbd_txn_desc *t,
		  struct jbd_write_result *r, struct jbd_err *err);

/* ---- formatting a standalone journal ------------------------------------ */

enum jbd_csum_kind {
	JBD_CSUM_KIND_NONE = 0,
	JBD_CSUM_KIND_V1 = 1,   /* COMPAT_CHECKSUM */
	JBD_CSUM_KIND_V2 = 2,
	JBD_CSUM_KIND_V3 = 3,
};

struct jbd_format_opts {
	uint32_t blocksize;     /* 1024..65536, power of two */
	uint64_t blocks;        /* journal length, superblock included */
	enum jbd_csum_kind csum;
	bool is64;              /* INCOMPAT_64BIT */
	bool async_commit;      /* INCOMPAT_ASYNC_COMMIT */
	uint8_t uuid[16];
	uint32_t sequence;      /* initial s_sequence (0 means 1) */
	/* Called from the calling thread as the log is zeroed, with the blocks
	 * done and the total, last with done == total (a display of progress:
	 * zeroing a 2 GiB journal takes seconds). It must not fail or call into
	 * the journal. May be NULL. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

#define JBD_FORMAT_MIN_BLOCKS 16u

/*
 * Write a fresh v2 superblock at journal block 0 of d (REVOKE set, the
 * chosen checksum and 64BIT features, s_first 1, s_start 0), zero the log
 * area, flush. d must hold blocks * blocksize bytes. The uuid is used as
 * given (ujbd_open's format draws a random one for a zero uuid). -EINVAL,
 * with nothing written, for a bad block size or length, an unknown
 * checksum kind, or async commit without checksums.
 */
int jbd_format(struct dev *d, const struct jbd_format_opts *o, struct jbd_err *err);
/* The same for a journal that starts at device block `first` (in journal
 * blocks: an internal journal sharing its disk with the data); d must hold
 * (first + blocks) * blocksize bytes. jbd_format is first = 0. */
int jbd_format_at(struct dev *d, uint64_t first, const struct jbd_format_opts *o,
		  struct jbd_err *err);
/* Format the journal at loc (any map, the superblock at journal block 0):
 * a journal in pieces, as an internal journal that skips group metadata. */
int jbd_format_loc(const struct jbd_loc *loc, const struct jbd_format_opts *o,
		   struct jbd_err *err);

#ifdef __cplusplus
}
#endif
#endif

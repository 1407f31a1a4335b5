/*
 * base.h: private helpers shared by every file of src/jbd, offline side
 * (superblock.c, scan.c, recovery.c, logwrite.c) and runtime side (which
 * adds runtime.h) alike; the log-block builder (logblock.c) is declared
 * here because both sides write log blocks through it.
 */
#ifndef UJBD_JBD_BASE_H
#define UJBD_JBD_BASE_H

#include "rt/assert.h"
#include "priv/dev_req.h"
#include "ujbd/jbd_log.h"

/*
 * The second tier of checks (the first is ASSERT, src/rt/assert.h): for what
 * a disk, a file or a caller can get wrong. When cond is false, fill err
 * (may be NULL) with code and the printf-style message, and make the calling
 * function return code. One line per check, so a validator reads as the
 * list of its rules.
 */
#define EXPECT(cond, err, code, ...)                                  \
	do {                                                          \
		if (__builtin_expect(!(cond), 0))                     \
			return jbd_err_set((err), (code), __VA_ARGS__); \
	} while (0)

/* ---- logblock.c: the one builder of log blocks ------------------------- */

/* Where finished log blocks go. ls_put writes block (f_blocksize bytes) at
 * journal block blk and returns 0 or -errno; the builder does not touch
 * the block afterwards. The commit's sink queues a bio of its ring slot,
 * the offline writer's calls jbd_journal_write. */
struct jbd_log_sink {
	int (*ls_put)(struct jbd_log_sink *s, uint32_t blk, void *block);
};

/* One transaction being built, blocks in log order from lb_blk. */
struct jbd_lb {
	const struct jbd_journal *lb_jnl; /* format, uuid, log area */
	struct jbd_log_sink *lb_sink;
	uint32_t lb_tid;
	uint32_t lb_blk;                  /* the next log block */
	uint32_t lb_v1_crc;               /* COMPAT_CHECKSUM: crc32_be so far */
	uint32_t lb_nput;                 /* blocks handed to the sink */
};

/* Start building transaction tid at log block start. */
void jbd_lb_begin(struct jbd_lb *b, const struct jbd_journal *j, struct jbd_log_sink *sink,
		  uint32_t tid, uint32_t start);
/* A revoke block of n records (1..jbd_revoke_capacity) built in block, put. */
int jbd_lb_revoke(struct jbd_lb *b, void *block, const uint64_t *recs, size_t n);
/* Make data (a block's log copy, f_blocksize bytes) ready to log: escape it
 * in place, add ESCAPE to tag->t_flags and set tag->t_csum (t_target is the
 * caller's). Puts nothing; the same bytes always give the same tag. */
void jbd_lb_data_prep(const struct jbd_lb *b, void *data, struct jbd_tag *tag);
/* The descriptor of the next n (1..jbd_desc_capacity) data blocks, built in
 * desc from their prepared tags and put; the caller then puts those data
 * blocks, in tag order, with jbd_lb_data. */
int jbd_lb_desc(struct jbd_lb *b, void *desc, const struct jbd_tag *tags, size_t n);
/* Put a data block prepared by jbd_lb_data_prep. */
int jbd_lb_data(struct jbd_lb *b, void *data);
/* The commit block (commit time sec.nsec) built in block, put. */
int jbd_lb_commit(struct jbd_lb *b, void *block, uint64_t sec, uint32_t nsec);

/* ---- logread.c: the log, read ahead of the scan ------------------------- */

/* Reads in flight at most (the file device's queue depth); the first read
 * and the largest; the first window ahead of the scan, in bytes. Measured
 * on the 117 MiB log of bench/replay (2026-12-04): 32 x 2 MiB reads in
 * flight scanned it in 40 ms (median of 6) where 8 took 65-80; starting
 * the window at 64 KiB cost 25 ms more, at 16 MiB 8 ms. */
#define JBD_LR_AHEAD 32u
#define JBD_LR_FIRST_BYTES (64u << 10)
#define JBD_LR_WINDOW_FIRST_BYTES (16u << 20)
#define JBD_LR_CHUNK_BYTES (2u << 20)

/* One read: a run of journal blocks contiguous on the journal device. */
struct jbd_lr_chunk {
	uint32_t c_first;         /* journal block of c_buf's first block */
	uint32_t c_n;             /* blocks */
	uint32_t c_pos;           /* blocks of the log before it (from s_start) */
	uint8_t c_state;          /* LR_* (logread.c) */
	uint8_t *c_buf;           /* NULL once given back for another read */
};

/*
 * The log from s_start, handed to the scan one block at a time in log
 * order, read ahead in chunks. With a hold budget the chunks the scan has
 * gone through stay in memory (up to hold_max bytes), so recovery writes
 * from them without reading the log again.
 */
struct jbd_logread {
	const struct jbd_journal *lr_jnl;
	struct dev_group lr_group;
	struct dev_group_req lr_req[JBD_LR_AHEAD]; /* chunk i's is lr_req[i % AHEAD] */
	struct jbd_lr_chunk *lr_chunks; /* every chunk issued, in log order */
	size_t lr_nchunks, lr_cap;
	size_t lr_cur;            /* the chunk the scan is in; those before are done */
	uint32_t lr_off;          /* blocks of lr_cur handed out */
	uint32_t lr_next;         /* the next journal block to read */
	uint32_t lr_left;         /* blocks of the log length not yet read */
	uint32_t lr_chunk_blocks; /* blocks of the next chunk */
	uint32_t lr_chunk_max;    /* blocks of the largest */
	uint32_t lr_ahead;        /* blocks issued the scan has not gone through */
	uint32_t lr_window;       /* how many lr_ahead may reach */
	uint64_t lr_hold_max;     /* bytes */
	uint64_t lr_held;         /* bytes of chunks kept */
	uint64_t lr_reads;        /* chunk reads issued (statistics, tests) */
};

/* Start reading j's log at s_start (nothing when s_start is 0), keeping up
 * to hold_max bytes of what the scan goes through. 0 or -errno. */
int jbd_logread_init(struct jbd_logread *lr, const struct jbd_journal *j, uint64_t hold_max);
/* The log block blk, which must be the next one in log order: *out points
 * at its bytes, valid until the next call (held chunks: until release).
 * 0, or the -errno of reading that very block (chunks that failed are read
 * again block by block). */
int jbd_logread_next(struct jbd_logread *lr, uint32_t blk, const uint8_t **out);
/* The held bytes of a block the scan went through, or NULL when its chunk
 * was not kept. Writable: recovery unescapes in place. */
uint8_t *jbd_logread_held(const struct jbd_logread *lr, uint32_t blk);
/* Wait for the reads in flight, free everything. */
void jbd_logread_release(struct jbd_logread *lr);

/* ---- replay.c: recovery's home writes ------------------------------------ */

/* One block of the data device and the copy of it recovery writes: the
 * last one in the log that is neither revoked nor bad. */
struct jbd_home {
	uint64_t h_target;
	uint32_t h_tid;                  /* the copy's transaction */
	uint32_t h_order;                /* the copy's place in the log */
	const struct jbd_scan_tag *h_tag;
};

/* Requests in flight at most, and the largest write, in bytes. */
#define JBD_REPLAY_DEPTH 16u
#define JBD_REPLAY_WRITE_BYTES (1u << 20)

/*
 * Write homes[0..n) (sorted by target, each target once) to the data
 * device from the copies lr holds (the others read again and checked
 * again), then flush it, reporting progress through o (may be NULL).
 * Unescapes held copies in place. 0, or the -errno
 * of the first write or read that failed (err says which block).
 */
int jbd_replay_write(const struct jbd_journal *j, struct jbd_logread *lr,
		     const struct jbd_home *homes, size_t n,
		     const struct jbd_recover_opts *o, struct jbd_err *err);

/* ---- scan.c ------------------------------------------------------------- */

/* jbd_scan_log through a reader the caller set up (recovery holds what it
 * reads); the reader stays the caller's. */
int jbd_scan_log_from(const struct jbd_journal *j, struct jbd_logread *lr, struct jbd_scan *sc,
		      struct jbd_err *err);

/* The checks of jbd_format_loc and ujbd_open that need no device: the
 * format options (block size, checksum kind, async commit, length), and
 * the runtime's option values; 0 or -EINVAL with err set. ujbd_open_path
 * calls them before it creates a file. */
int jbd_format_opts_check(const struct jbd_format_opts *o, struct jbd_err *err);
struct ujbd_opts;
int jbd_opts_check(const struct ujbd_opts *o, struct jbd_err *err);
/* What ujbd_open checks of the options against the journal's geometry
 * (max_transaction_blocks: the log must hold two such transactions), for
 * the journal format f would make; 0 or -EINVAL with err set, as ujbd_open
 * would say it. f is checked (jbd_format_opts_check) first. */
int jbd_opts_check_format(const struct ujbd_opts *o, const struct jbd_format_opts *f,
			  struct jbd_err *err);
/* The superblock jbd_format writes for o (superblock.c). */
void jbd_format_fill_sb(struct jbd2_sb *sb, const struct jbd_format_opts *o);

#endif

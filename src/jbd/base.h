/*
 * base.h: private helpers shared by every file of src/jbd, offline side
 * (superblock.c, scan.c, recovery.c, logwrite.c) and runtime side (which
 * adds runtime.h) alike; the log-block builder (logblock.c) is declared
 * here because both sides write log blocks through it.
 */
#ifndef UJBD_JBD_BASE_H
#define UJBD_JBD_BASE_H

#include "rt/assert.h"
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

#endif

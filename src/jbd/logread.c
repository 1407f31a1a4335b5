/*
 * logread.c: the log, read ahead of the scan in large sequential reads.
 *
 * The scan (scan.c) wants the log one block at a time, in log order, from
 * s_start. Read alone, each block costs a request and a wait: 30,000 of
 * them for a 117 MiB log, most of recovery's time. The reader keeps reads
 * in flight ahead of the scan, each one a run of journal blocks contiguous
 * on the journal device (a chunk ends where the map's extent does and where
 * the log wraps), and hands the scan pointers into them. As the kernel's
 * read-ahead does, it starts small and grows while the scan keeps up: the
 * reads from 64 KiB to 2 MiB, the window ahead from 16 MiB to JBD_LR_AHEAD
 * full reads (64 MiB), four times larger for each read the scan finishes,
 * so a log that ends early (the writer looks for the end of the log, a
 * runtime recovers the few transactions of a crash) costs at most 16 MiB
 * more than itself. It never reads more than the log's length, which
 * bounds the scan too.
 *
 * Recovery asks it to hold what the scan went through, up to a budget: the
 * home writes then come from memory and the log is read once. Past the
 * budget a chunk's buffer goes to the next read, and recovery reads the
 * few blocks it needs from it again.
 *
 * The one idea for errors: a chunk that fails to read is read again block
 * by block as the scan reaches it, so an error is reported at the very
 * block the scan needed, as a block-at-a-time reader would; a bad block
 * read ahead past the end of the log is no error at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jbd/base.h"

enum {
	LR_ISSUED = 0, /* in flight */
	LR_READY,      /* read whole */
	LR_FAILED,     /* read again block by block as the scan reaches it */
};

/* A buffer for n blocks. */
static uint8_t *lr_buffer(const struct jbd_logread *lr, uint32_t n)
{
	size_t bytes = (size_t)n * lr->lr_jnl->j_loc.j_blocksize;
	bool huge = bytes == JBD_LR_CHUNK_BYTES;
	void *p = NULL;

	/*
	 * A full chunk is aligned to its size and asked to be one huge page:
	 * recovery holds up to the whole log, and faulting it in 4 KiB at a
	 * time (zeroing and mapping 30,000 pages for a 117 MiB log) cost as
	 * much as reading it. Where transparent huge pages are off, madvise
	 * is only a hint.
	 */
	if (posix_memalign(&p, huge ? bytes : 4096, bytes))
		return NULL;
	if (huge)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/* Append the next chunk of the log and send its read. -ENOMEM, or 0 (a
 * read that cannot be sent leaves the chunk LR_FAILED, for the scan to
 * meet its error at the block it needs). */
static int lr_issue(struct jbd_logread *lr)
{
	const struct jbd_journal *j = lr->lr_jnl;
	uint32_t bs = j->j_loc.j_blocksize, n = lr->lr_chunk_blocks;
	uint64_t off = 0, run = 1;
	struct jbd_lr_chunk *c;
	struct dev_group_req *r;

	ASSERT(lr->lr_left > 0 && lr->lr_nchunks - lr->lr_cur < JBD_LR_AHEAD);
	if (lr->lr_nchunks == lr->lr_cap) {
		size_t cap = lr->lr_cap ? 2 * lr->lr_cap : 64;
		void *p = realloc(lr->lr_chunks, cap * sizeof(*lr->lr_chunks));
		if (!p)
			return -ENOMEM;
		lr->lr_chunks = p;
		lr->lr_cap = cap;
	}
	/* an unmapped block: a chunk of one, whose own read reports it */
	bool mapped = jbd_loc_run(&j->j_loc, lr->lr_next, &off, &run) == 0;
	if (n > run)
		n = (uint32_t)run;
	if (n > j->j_last - lr->lr_next)
		n = j->j_last - lr->lr_next;
	if (n > lr->lr_left)
		n = lr->lr_left;
	uint8_t *buf = lr_buffer(lr, n);
	if (!buf)
		return -ENOMEM;
	c = &lr->lr_chunks[lr->lr_nchunks];
	*c = (struct jbd_lr_chunk){ .c_first = lr->lr_next, .c_n = n, .c_buf = buf,
				    .c_state = LR_FAILED,
				    .c_pos = lr->lr_nchunks ? c[-1].c_pos + c[-1].c_n : 0 };
	r = &lr->lr_req[lr->lr_nchunks % JBD_LR_AHEAD];
	*r = (struct dev_group_req){ .gr_req = { .r_op = DEV_OP_READ, .r_flags = DEV_REQ_DIRECT,
						 .r_off = off,
						 .r_len = n * bs, .r_buf = buf,
						 .r_ioprio = rt_ioprio_get() } };
	if (mapped && dev_group_submit(j->j_loc.j_dev, &lr->lr_group, r) == 0) {
		c->c_state = LR_ISSUED;
		lr->lr_reads++;
	}
	lr->lr_nchunks++;
	lr->lr_ahead += n;
	if (lr->lr_chunk_blocks < lr->lr_chunk_max)
		lr->lr_chunk_blocks *= 2;
	lr->lr_left -= n;
	lr->lr_next += n;
	if (lr->lr_next == j->j_last)
		lr->lr_next = j->j_first;
	return 0;
}

/* Fill the window ahead of the scan while the log lasts (at least one
 * chunk). Only an allocation failure with nothing at all ahead is an error. */
static int lr_fill(struct jbd_logread *lr)
{
	while (lr->lr_left > 0 && lr->lr_nchunks - lr->lr_cur < JBD_LR_AHEAD &&
	       (lr->lr_ahead < lr->lr_window || lr->lr_nchunks == lr->lr_cur)) {
		int rc = lr_issue(lr);
		if (rc)
			return lr->lr_nchunks > lr->lr_cur ? 0 : rc;
	}
	return 0;
}

/* The scan is done with chunk lr_cur: keep it within the budget, or free
 * it. */
static void lr_retire(struct jbd_logread *lr)
{
	struct jbd_lr_chunk *c = &lr->lr_chunks[lr->lr_cur];
	uint64_t bytes = (uint64_t)c->c_n * lr->lr_jnl->j_loc.j_blocksize;

	ASSERT(c->c_state != LR_ISSUED && c->c_buf && lr->lr_ahead >= c->c_n);
	lr->lr_ahead -= c->c_n;
	/* the scan kept up with this much: allow four times as much ahead */
	if (lr->lr_window < JBD_LR_AHEAD * lr->lr_chunk_max)
		lr->lr_window *= 4;
	if (lr->lr_held + bytes <= lr->lr_hold_max) {
		lr->lr_held += bytes;
	} else {
		free(c->c_buf);
		c->c_buf = NULL;
	}
	lr->lr_cur++;
	lr->lr_off = 0;
}

/* Wait for chunk i's read (issued ones only). */
static void lr_wait(struct jbd_logread *lr, size_t i)
{
	struct jbd_lr_chunk *c = &lr->lr_chunks[i];
	struct dev_group_req *r = &lr->lr_req[i % JBD_LR_AHEAD];

	if (c->c_state != LR_ISSUED)
		return;
	c->c_state = dev_group_wait(r) == (int64_t)r->gr_req.r_len ? LR_READY : LR_FAILED;
}

int jbd_logread_next(struct jbd_logread *lr, uint32_t blk, const uint8_t **out)
{
	uint32_t bs = lr->lr_jnl->j_loc.j_blocksize;
	struct jbd_lr_chunk *c;
	int rc;

	if (lr->lr_cur < lr->lr_nchunks && lr->lr_off == lr->lr_chunks[lr->lr_cur].c_n)
		lr_retire(lr);
	rc = lr_fill(lr);
	if (rc)
		return rc;
	ASSERT(lr->lr_cur < lr->lr_nchunks); /* the scan reads at most the log */
	c = &lr->lr_chunks[lr->lr_cur];
	ASSERT(blk == c->c_first + lr->lr_off);
	lr_wait(lr, lr->lr_cur);
	uint8_t *p = c->c_buf + (size_t)lr->lr_off * bs;
	if (c->c_state == LR_FAILED && (rc = jbd_journal_read(lr->lr_jnl, blk, p)))
		return rc;
	lr->lr_off++;
	*out = p;
	return 0;
}

uint8_t *jbd_logread_held(const struct jbd_logread *lr, uint32_t blk)
{
	const struct jbd_journal *j = lr->lr_jnl;
	uint32_t pos, start = jbd_get_be32(j->j_sb.s_start);
	size_t lo = 0, hi = lr->lr_cur; /* the chunks the scan finished... */

	if (!start)
		return NULL;
	pos = jbd_log_distance(j, start, blk);
	if (lr->lr_cur < lr->lr_nchunks && lr->lr_off)
		hi++;                   /* ...and the one it is in */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lr->lr_chunks[mid].c_pos <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct jbd_lr_chunk *c = &lr->lr_chunks[lo - 1];
	uint32_t k = pos - c->c_pos;
	bool seen = lo - 1 < lr->lr_cur || k < lr->lr_off;
	if (k >= c->c_n || !seen || !c->c_buf)
		return NULL;
	ASSERT(c->c_first + k == blk);
	return c->c_buf + (size_t)k * j->j_loc.j_blocksize;
}

int jbd_logread_init(struct jbd_logread *lr, const struct jbd_journal *j, uint64_t hold_max)
{
	uint32_t start = jbd_get_be32(j->j_sb.s_start);
	int rc;

	memset(lr, 0, sizeof(*lr));
	lr->lr_jnl = j;
	lr->lr_hold_max = hold_max;
	/* reads start small and double, as the kernel's read-ahead does:
	 * the writer and the runtime scan logs that end early */
	lr->lr_chunk_max = JBD_LR_CHUNK_BYTES / j->j_loc.j_blocksize;
	lr->lr_chunk_blocks = JBD_LR_FIRST_BYTES / j->j_loc.j_blocksize;
	if (lr->lr_chunk_blocks < 1)
		lr->lr_chunk_blocks = 1;
	lr->lr_window = JBD_LR_WINDOW_FIRST_BYTES / j->j_loc.j_blocksize;
	ASSERT(lr->lr_chunk_max >= lr->lr_chunk_blocks);
	rc = dev_group_init(&lr->lr_group);
	if (rc)
		return rc;
	if (!start)
		return 0;
	ASSERT(start >= j->j_first && start < j->j_last);
	lr->lr_next = start;
	lr->lr_left = j->j_last - j->j_first;
	rc = lr_fill(lr);
	if (rc)
		jbd_logread_release(lr);
	return rc;
}

void jbd_logread_release(struct jbd_logread *lr)
{
	for (size_t i = lr->lr_cur; i < lr->lr_nchunks; i++)
		lr_wait(lr, i);
	for (size_t i = 0; i < lr->lr_nchunks; i++)
		free(lr->lr_chunks[i].c_buf);
	free(lr->lr_chunks);
	dev_group_release(&lr->lr_group);
	memset(lr, 0, sizeof(*lr));
}

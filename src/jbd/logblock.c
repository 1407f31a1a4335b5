/*
 * logblock.c: the one builder of log blocks. The runtime's commit
 * (commit.c) and the offline writer (logwrite.c) both turn a transaction
 * into revoke blocks, descriptor blocks with their escaped and checksummed
 * data copies, and a commit block through this file, so the bytes of a
 * log do not depend on who wrote it.
 *
 * The one idea: the builder decides what every log block holds and in
 * which order the blocks go; the caller decides where the bytes live and
 * how they reach the disk. It hands the builder the memory of each block
 * and a sink (struct jbd_log_sink) that writes a finished block at a
 * journal block number: the commit's sink is its ring of bios, the
 * offline writer's is jbd_journal_write. The order is the jbd2 order:
 * revoke blocks, then each descriptor followed by its data blocks, then
 * the commit block; COMPAT_CHECKSUM's crc32 runs over the descriptors and
 * data blocks in that order.
 *
 * The blocks' own layouts (headers, tags, tails, commit checksums) are
 * format.c's encoders; this file only sequences them, and checks each
 * block as built (jbd_logblock_check, the pair of the scan's check).
 */
#include "jbd/base.h"

void jbd_lb_begin(struct jbd_lb *b, const struct jbd_journal *j, struct jbd_log_sink *sink,
		  uint32_t tid, uint32_t start)
{
	ASSERT(start >= j->j_first && start < j->j_last);
	*b = (struct jbd_lb){ .lb_jnl = j, .lb_sink = sink, .lb_tid = tid, .lb_blk = start,
			      .lb_v1_crc = 0xFFFFFFFFu };
}

/* Hand a finished block to the sink at the next log block. */
static int lb_put(struct jbd_lb *b, void *block)
{
	uint32_t blk = b->lb_blk;

	b->lb_blk = jbd_log_next(b->lb_jnl, blk);
	b->lb_nput++;
	return b->lb_sink->ls_put(b->lb_sink, blk, block);
}

int jbd_lb_revoke(struct jbd_lb *b, void *block, const uint64_t *recs, size_t n)
{
	const struct jbd_fmt *f = &b->lb_jnl->j_fmt;

	ASSERT(n > 0 && n <= jbd_revoke_capacity(f));
	jbd_revoke_encode(f, block, b->lb_tid, recs, n);
	ASSERT(jbd_logblock_check(f, block, b->lb_tid, JBD_LB_BUILT, NULL) == 0);
	return lb_put(b, block);
}

void jbd_lb_data_prep(const struct jbd_lb *b, void *data, struct jbd_tag *tag)
{
	const struct jbd_fmt *f = &b->lb_jnl->j_fmt;

	if (jbd_block_needs_escape(data)) {
		jbd_escape(data);
		tag->t_flags |= JBD2_FLAG_ESCAPE;
	}
	tag->t_csum = f->f_csum_v23 ? jbd_tag_csum(f, b->lb_tid, data) : 0;
	if (f->f_csum_v23 && !f->f_v3)
		tag->t_csum &= 0xFFFF;
}

int jbd_lb_desc(struct jbd_lb *b, void *desc, const struct jbd_tag *tags, size_t n)
{
	const struct jbd_fmt *f = &b->lb_jnl->j_fmt;

	ASSERT(n > 0 && n <= jbd_desc_capacity(f));
	jbd_desc_encode(f, desc, b->lb_tid, tags, n, b->lb_jnl->j_sb.s_uuid);
	ASSERT(jbd_logblock_check(f, desc, b->lb_tid, JBD_LB_BUILT, NULL) == 0);
	if (f->f_csum_v1)
		b->lb_v1_crc = jbd_crc32_be(b->lb_v1_crc, desc, f->f_blocksize);
	return lb_put(b, desc);
}

int jbd_lb_data(struct jbd_lb *b, void *data)
{
	const struct jbd_fmt *f = &b->lb_jnl->j_fmt;

	if (f->f_csum_v1)
		b->lb_v1_crc = jbd_crc32_be(b->lb_v1_crc, data, f->f_blocksize);
	return lb_put(b, data);
}

int jbd_lb_commit(struct jbd_lb *b, void *block, uint64_t sec, uint32_t nsec)
{
	const struct jbd_fmt *f = &b->lb_jnl->j_fmt;

	jbd_commit_encode(f, block, b->lb_tid, sec, nsec, b->lb_v1_crc);
	ASSERT(jbd_logblock_check(f, block, b->lb_tid, JBD_LB_BUILT, NULL) == 0);
	return lb_put(b, block);
}

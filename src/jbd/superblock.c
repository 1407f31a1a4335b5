/*
 * superblock.c: the offline journal (struct jbd_journal): its blocks read
 * and written by journal block number, its superblock loaded and written,
 * and formatting a standalone journal.
 *
 * A journal block number goes through the map of struct jbd_loc (base.c)
 * to a byte offset on the journal device; nothing else in src/jbd knows
 * whether the journal is a file, an external device or inode 8 of an ext4
 * image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/base.h"

/* the zeroing buffer: a direct write on a file wants 4 KiB alignment */
#define FORMAT_BUF_ALIGN 4096u

int jbd_journal_read(const struct jbd_journal *j, uint64_t blk, void *buf)
{
	uint64_t off;
	int rc = jbd_loc_offset(&j->j_loc, blk, &off);

	if (rc)
		return rc;
	return dev_pread(j->j_loc.j_dev, buf, j->j_loc.j_blocksize, off);
}

int jbd_journal_write(const struct jbd_journal *j, uint64_t blk, const void *buf)
{
	uint64_t off;
	int rc = jbd_loc_offset(&j->j_loc, blk, &off);

	if (rc)
		return rc;
	return dev_pwrite(j->j_loc.j_dev, buf, j->j_loc.j_blocksize, off, 0);
}

uint32_t jbd_log_next(const struct jbd_journal *j, uint32_t blk)
{
	ASSERT(blk >= j->j_first && blk < j->j_last);
	blk++;
	if (blk >= j->j_last)
		blk -= j->j_last - j->j_first;
	return blk;
}

uint32_t jbd_log_distance(const struct jbd_journal *j, uint32_t a, uint32_t b)
{
	uint32_t n = j->j_last - j->j_first;

	ASSERT(a >= j->j_first && a < j->j_last && b >= j->j_first && b < j->j_last);
	return b >= a ? b - a : n - (a - b);
}

/* The log end: s_maxlen, less the fast-commit area. */
static uint32_t sb_log_last(const struct jbd2_sb *sb)
{
	uint32_t last = jbd_get_be32(sb->s_maxlen);

	if (jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_FAST_COMMIT)) {
		uint32_t fc = jbd_get_be32(sb->s_num_fc_blks);
		last -= fc ? fc : JBD2_DEFAULT_FC_BLOCKS;
	}
	return last;
}

int jbd_journal_load(const struct jbd_loc *loc, struct jbd_journal *j,
		     struct jbd_err *err)
{
	uint8_t *buf;
	int rc;

	memset(j, 0, sizeof(*j));
	j->j_loc = *loc;
	if (loc->j_blocksize < JBD2_MIN_BLOCKSIZE || loc->j_blocksize > JBD2_MAX_BLOCKSIZE)
		return jbd_err_set(err, -EINVAL, "invalid journal block size %u",
				   loc->j_blocksize);
	buf = malloc(loc->j_blocksize);
	if (!buf)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	rc = jbd_journal_read(j, loc->j_sb_block, buf);
	if (rc) {
		jbd_err_set(err, rc, "cannot read the journal superblock (block %llu)",
			    (unsigned long long)loc->j_sb_block);
		goto out;
	}
	memcpy(&j->j_sb, buf, sizeof(j->j_sb));
	rc = jbd_sb_check(&j->j_sb, loc->j_len, loc->j_blocksize, loc->j_sb_block, err);
	if (rc)
		goto out;
	jbd_fmt_from_sb(&j->j_sb, &j->j_fmt);
	j->j_first = jbd_get_be32(j->j_sb.s_first);
	j->j_last = sb_log_last(&j->j_sb);
	ASSERT(j->j_first < j->j_last);
out:
	free(buf);
	return rc;
}

int jbd_journal_write_sb(struct jbd_journal *j, struct jbd_err *err)
{
	uint32_t bs = j->j_loc.j_blocksize;
	uint8_t *buf = calloc(1, bs);
	int rc;

	if (!buf)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	jbd_sb_csum_set(&j->j_sb);
	/* Pair check: what we write must pass what we demand on reading. */
	rc = jbd_sb_check(&j->j_sb, j->j_loc.j_len, bs, j->j_loc.j_sb_block, err);
	ASSERT(rc == 0);
	memcpy(buf, &j->j_sb, sizeof(j->j_sb));
	rc = jbd_journal_write(j, j->j_loc.j_sb_block, buf);
	if (!rc)
		rc = dev_flush(j->j_loc.j_dev);
	if (rc)
		jbd_err_set(err, rc, "cannot write the journal superblock: %s", strerror(-rc));
	free(buf);
	return rc;
}

/* ---- format ------------------------------------------------------------ */

void jbd_format_fill_sb(struct jbd2_sb *sb, const struct jbd_format_opts *o)
{
	uint32_t inc = JBD2_FEATURE_INCOMPAT_REVOKE;

	memset(sb, 0, sizeof(*sb));
	jbd_hdr_encode(sb, JBD2_SUPERBLOCK_V2, 0);
	jbd_put_be32(&sb->s_blocksize, o->blocksize);
	jbd_put_be32(&sb->s_maxlen, (uint32_t)o->blocks);
	jbd_put_be32(&sb->s_first, 1);
	jbd_put_be32(&sb->s_sequence, o->sequence ? o->sequence : 1);
	if (o->is64)
		inc |= JBD2_FEATURE_INCOMPAT_64BIT;
	if (o->async_commit)
		inc |= JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT;
	if (o->csum == JBD_CSUM_KIND_V2)
		inc |= JBD2_FEATURE_INCOMPAT_CSUM_V2;
	if (o->csum == JBD_CSUM_KIND_V3)
		inc |= JBD2_FEATURE_INCOMPAT_CSUM_V3;
	if (o->csum == JBD_CSUM_KIND_V1)
		jbd_put_be32(&sb->s_feature_compat, JBD2_FEATURE_COMPAT_CHECKSUM);
	jbd_put_be32(&sb->s_feature_incompat, inc);
	if (o->csum == JBD_CSUM_KIND_V2 || o->csum == JBD_CSUM_KIND_V3)
		sb->s_checksum_type = JBD2_CRC32C_CHKSUM;
	memcpy(sb->s_uuid, o->uuid, sizeof(sb->s_uuid));
	jbd_put_be32(&sb->s_nr_users, 1);
	jbd_sb_csum_set(sb);
}

int jbd_format(struct dev *d, const struct jbd_format_opts *o, struct jbd_err *err)
{
	return jbd_format_at(d, 0, o, err);
}

int jbd_format_at(struct dev *d, uint64_t first, const struct jbd_format_opts *o,
		  struct jbd_err *err)
{
	uint32_t bs = o->blocksize;
	struct jbd_extent e;
	struct jbd_loc loc;

	if (bs < JBD2_MIN_BLOCKSIZE || bs > JBD2_MAX_BLOCKSIZE || (bs & (bs - 1)))
		return jbd_err_set(err, -EINVAL, "invalid block size %u", bs);
	if (dev_size(d) / bs < first || dev_size(d) / bs - first < o->blocks)
		return jbd_err_set(err, -ENOSPC, "device too small for %llu blocks",
				   (unsigned long long)o->blocks);
	e = (struct jbd_extent){ 0, first, o->blocks };
	loc = (struct jbd_loc){ .j_dev = d, .j_blocksize = bs, .j_map = &e, .j_nmap = 1,
				.j_len = o->blocks };
	return jbd_format_loc(&loc, o, err);
}

/* Zero the log, journal blocks 1 to o->blocks - 1, one extent piece at a
 * time, telling o->progress after each write. */
static int format_zero(const struct jbd_loc *loc, const struct jbd_format_opts *o,
		       uint8_t *buf, uint32_t chunk_blocks)
{
	uint32_t bs = loc->j_blocksize;
	uint64_t lblk = 1, n = o->blocks - 1;
	int rc = 0;

	while (n && !rc) {
		uint64_t off, run = 1;

		rc = jbd_loc_offset(loc, lblk, &off);
		/* extend the run while the next block follows on the device */
		while (!rc && run < n && run < chunk_blocks) {
			uint64_t next;

			if (jbd_loc_offset(loc, lblk + run, &next) || next != off + run * bs)
				break;
			run++;
		}
		/* past the host's page cache where the device has a direct
		 * path (a file's O_DIRECT): the zeroes are never read back
		 * through it, and a large journal would fill it */
		if (!rc)
			rc = dev_pwrite(loc->j_dev, buf, (uint32_t)(run * bs), off, DEV_REQ_DIRECT);
		lblk += run;
		n -= run;
		if (!rc && o->progress)
			o->progress(o->progress_arg, lblk - 1, o->blocks - 1);
	}
	return rc;
}

int jbd_format_opts_check(const struct jbd_format_opts *o, struct jbd_err *err)
{
	uint32_t bs = o->blocksize;

	if (bs < JBD2_MIN_BLOCKSIZE || bs > JBD2_MAX_BLOCKSIZE || (bs & (bs - 1)))
		return jbd_err_set(err, -EINVAL, "invalid block size %u", bs);
	/* an unknown kind used to give a journal without checksums */
	if ((unsigned)o->csum > JBD_CSUM_KIND_V3)
		return jbd_err_set(err, -EINVAL, "unknown checksum kind %u", (unsigned)o->csum);
	/* only the checksums catch a log torn by an async commit */
	if (o->async_commit && o->csum == JBD_CSUM_KIND_NONE)
		return jbd_err_set(err, -EINVAL, "async commit needs a checksummed journal");
	if (o->blocks < JBD_FORMAT_MIN_BLOCKS || o->blocks > UINT32_MAX)
		return jbd_err_set(err, -EINVAL, "journal of %llu blocks: need %u to %u",
				   (unsigned long long)o->blocks, JBD_FORMAT_MIN_BLOCKS,
				   UINT32_MAX);
	return 0;
}

int jbd_format_loc(const struct jbd_loc *loc, const struct jbd_format_opts *o,
		   struct jbd_err *err)
{
	const uint32_t chunk_blocks = 256;
	uint32_t bs = o->blocksize;
	uint64_t sb_off;
	uint8_t *buf;
	int rc = jbd_format_opts_check(o, err);

	if (rc)
		return rc;
	if (bs != loc->j_blocksize)
		return jbd_err_set(err, -EINVAL, "invalid block size %u", bs);
	if (loc->j_sb_block != 0 || o->blocks > loc->j_len ||
	    jbd_loc_offset(loc, o->blocks - 1, &sb_off) || jbd_loc_offset(loc, 0, &sb_off))
		return jbd_err_set(err, -ENOSPC, "the journal's map does not hold %llu blocks",
				   (unsigned long long)o->blocks);
	if (posix_memalign((void **)&buf, FORMAT_BUF_ALIGN, (size_t)chunk_blocks * bs))
		return jbd_err_set(err, -ENOMEM, "out of memory");
	memset(buf, 0, (size_t)chunk_blocks * bs);
	/* Zero the log so no stale block of an earlier journal survives. */
	rc = format_zero(loc, o, buf, chunk_blocks);
	if (!rc)
		rc = dev_flush(loc->j_dev);
	if (!rc) {
		jbd_format_fill_sb((struct jbd2_sb *)buf, o);
		rc = dev_pwrite(loc->j_dev, buf, bs, sb_off, 0);
	}
	if (!rc)
		rc = dev_flush(loc->j_dev);
	if (rc)
		jbd_err_set(err, rc, "cannot write the journal: %s", strerror(-rc));
	free(buf);
	return rc;
}

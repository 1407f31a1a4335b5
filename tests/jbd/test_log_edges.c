/*
 * The corners of the log engine that the other tests did not reach (found
 * by `make coverage`): superblock and format arguments out of range, parse
 * limits, the writers' own block checks, every way a scan stops (a log
 * that loops, a log read whole, an unknown block type, stale and failed commits in v1, v3
 * and async journals, a bad revoke block after a descriptor), the same
 * block revoked in two transactions, a torn async transaction whose bad
 * block is revoked, and a recovery without a data device. In-memory
 * journals built by the writer, then patched block by block.
 */
#include <errno.h>

#include "t.h"
#include "ujbd/jbd_log.h"

#include "log_async.h"

#define BS 1024u
#define JBLOCKS 64u
#define DBLOCKS 32u

struct rig {
	struct dev *jdev, *ddev;
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct jbd_journal j;
};

static int rig_open(struct rig *r, enum jbd_csum_kind csum, bool async)
{
	bool async_by_hand = log_async_needs_hand(async, csum); /* log_async.h */
	struct jbd_format_opts o = { .blocksize = BS, .blocks = JBLOCKS, .csum = csum,
				     .async_commit = async && !async_by_hand,
				     .uuid = { 1, 2, 3 } };
	struct jbd_err err;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = dev_mem_new(JBLOCKS * BS, 512, &r->jdev);
	if (!rc)
		rc = dev_mem_new(DBLOCKS * BS, 512, &r->ddev);
	if (!rc)
		rc = jbd_format(r->jdev, &o, &err);
	r->ext = (struct jbd_extent){ 0, 0, JBLOCKS };
	r->loc = (struct jbd_loc){ .j_dev = r->jdev, .j_blocksize = BS, .j_map = &r->ext,
				   .j_nmap = 1, .j_len = JBLOCKS, .j_data = r->ddev,
				   .j_data_blocks = DBLOCKS };
	if (!rc)
		rc = jbd_journal_load(&r->loc, &r->j, &err);
	if (!rc && async_by_hand)
		rc = log_async_by_hand(&r->loc, &r->j, &err);
	return rc;
}

static void rig_close(struct rig *r)
{
	if (r->jdev)
		dev_close(r->jdev);
	if (r->ddev)
		dev_close(r->ddev);
}

/* Append {blocks[i]: fill[i]} with the revokes; its result in *res. */
static int txn(struct rig *r, const uint64_t *blocks, const char *fill, size_t n,
	       const uint64_t *revokes, size_t nrev, uint64_t sec, struct jbd_write_result *res)
{
	static uint8_t bufs[4][BS];
	struct jbd_write_block wb[4];
	struct jbd_write_result tmp;
	struct jbd_err err;
	struct jbd_txn_desc d = { .blocks = wb, .nblocks = n, .revokes = revokes,
				  .nrevokes = nrev, .commit_sec = sec };

	for (size_t i = 0; i < n; i++) {
		memset(bufs[i], fill[i], BS);
		wb[i] = (struct jbd_write_block){ blocks[i], bufs[i] };
	}
	int rc = jbd_write_txn(&r->j, &d, res ? res : &tmp, &err);
	if (rc)
		fprintf(stderr, "  txn: %s\n", err.msg);
	return rc;
}

/* Reload the superblock the writer left (the scan starts from it). */
static int reload(struct rig *r)
{
	struct jbd_err err;

	return jbd_journal_load(&r->loc, &r->j, &err);
}

static int scan(struct rig *r, struct jbd_scan *sc, struct jbd_err *err)
{
	int rc = reload(r);

	return rc ? rc : jbd_scan_log(&r->j, sc, err);
}

static int recover(struct rig *r, struct jbd_recover_result *res, struct jbd_err *err)
{
	int rc = reload(r);

	return rc ? rc : jbd_recover(&r->j, NULL, res, err);
}

/* First byte of data block b (the writer fills whole blocks). */
static int data_byte(struct rig *r, uint64_t b)
{
	uint8_t buf[BS];

	return dev_pread(r->ddev, buf, BS, b * BS) ? -1 : buf[0];
}

static uint8_t blk[BS];

static int jread(struct rig *r, uint32_t b)
{
	return jbd_journal_read(&r->j, b, blk);
}

static int jwrite(struct rig *r, uint32_t b)
{
	return jbd_journal_write(&r->j, b, blk);
}

/* ---- superblock, format, parse limits ------------------------------------- */

static void make_sb(struct jbd2_sb *sb, uint32_t bs, uint32_t maxlen, uint32_t incompat)
{
	memset(sb, 0, sizeof(*sb));
	jbd_hdr_encode(sb, JBD2_SUPERBLOCK_V2, 0);
	jbd_put_be32(&sb->s_blocksize, bs);
	jbd_put_be32(&sb->s_maxlen, maxlen);
	jbd_put_be32(&sb->s_first, 1);
	jbd_put_be32(&sb->s_sequence, 1);
	jbd_put_be32(&sb->s_feature_incompat, incompat);
	jbd_put_be32(&sb->s_nr_users, 1);
	jbd_sb_csum_set(sb);
}

static void t_sb_check(void)
{
	static const uint32_t bad_bs[] = { 512, 131072, 3072 };
	struct jbd2_sb sb;
	struct jbd_err err;

	for (size_t i = 0; i < 3; i++) {
		make_sb(&sb, bad_bs[i], 100, 0);
		T_EQ(jbd_sb_check(&sb, 100, 0, 0, &err), -EUCLEAN);
		T_CHECK(strstr(err.msg, "invalid block size"));
	}
	make_sb(&sb, 4096, 100, 0);
	T_EQ(jbd_sb_check(&sb, 100, 0, 0, &err), 0); /* 0: any block size */
	/* fast commit, s_num_fc_blks 0: the default 256 blocks */
	make_sb(&sb, 1024, 1279, JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	T_EQ(jbd_sb_check(&sb, 2000, 1024, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "fast-commit area of 256 blocks"));
	make_sb(&sb, 1024, 1000, JBD2_FEATURE_INCOMPAT_FAST_COMMIT); /* below 1024 */
	jbd_put_be32(&sb.s_num_fc_blks, 10);
	jbd_sb_csum_set(&sb);
	T_EQ(jbd_sb_check(&sb, 2000, 1024, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "fast-commit area of 10 blocks"));
	/* one log block only */
	make_sb(&sb, 1024, 100, 0);
	jbd_put_be32(&sb.s_first, 99);
	jbd_sb_csum_set(&sb);
	T_EQ(jbd_sb_check(&sb, 100, 1024, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "too small"));
	/* s_start before s_first */
	jbd_put_be32(&sb.s_first, 5);
	jbd_put_be32(&sb.s_start, 3);
	jbd_sb_csum_set(&sb);
	T_EQ(jbd_sb_check(&sb, 100, 1024, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "s_start 3 outside"));
}

/* A fast-commit journal loads with its log ending before the FC area. */
static void t_load_fast_commit(void)
{
	struct jbd_extent ext = { 0, 0, 1400 };
	struct jbd_journal j;
	struct jbd_err err;
	struct jbd2_sb sb;
	struct dev *d;
	uint8_t *b = calloc(1, BS);

	T_CHECK(b);
	T_EQ(dev_mem_new(1400 * BS, 512, &d), 0);
	make_sb(&sb, BS, 1400, JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	memcpy(b, &sb, sizeof(sb));
	T_EQ(dev_pwrite(d, b, BS, 0, 0), 0);
	struct jbd_loc loc = { .j_dev = d, .j_blocksize = BS, .j_map = &ext, .j_nmap = 1,
			       .j_len = 1400 };
	T_EQ(jbd_journal_load(&loc, &j, &err), 0);
	T_EQ(j.j_last, 1400 - 256);
	jbd_put_be32(&sb.s_num_fc_blks, 100);
	jbd_sb_csum_set(&sb);
	memcpy(b, &sb, sizeof(sb));
	T_EQ(dev_pwrite(d, b, BS, 0, 0), 0);
	T_EQ(jbd_journal_load(&loc, &j, &err), 0);
	T_EQ(j.j_last, 1400 - 100);
	loc.j_blocksize = 512;
	T_EQ(jbd_journal_load(&loc, &j, &err), -EINVAL);
	loc.j_blocksize = 131072;
	T_EQ(jbd_journal_load(&loc, &j, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "invalid journal block size"));
	dev_close(d);
	free(b);
}

static void t_format_args(void)
{
	struct jbd_format_opts o = { .blocksize = BS, .blocks = 64 };
	struct jbd_err err;
	struct dev *d;

	T_EQ(dev_mem_new(64 * BS, 512, &d), 0);
	o.blocksize = 512;
	T_EQ(jbd_format(d, &o, &err), -EINVAL);
	o.blocksize = 3072;
	T_EQ(jbd_format(d, &o, &err), -EINVAL);
	o.blocksize = 131072;
	T_EQ(jbd_format(d, &o, &err), -EINVAL);
	o.blocksize = BS;
	o.blocks = 8;
	T_EQ(jbd_format(d, &o, &err), -EINVAL);
	/* through a map: sizes past 2^32 blocks, another block size, a map
	 * that does not hold the journal */
	struct jbd_extent e = { 0, 0, (uint64_t)1 << 40 };
	struct jbd_loc l = { .j_dev = d, .j_blocksize = BS, .j_map = &e, .j_nmap = 1,
			     .j_len = (uint64_t)1 << 40 };
	o.blocks = (uint64_t)UINT32_MAX + 1;
	T_EQ(jbd_format_loc(&l, &o, &err), -EINVAL);
	o.blocks = 64;
	l.j_blocksize = 2048;
	T_EQ(jbd_format_loc(&l, &o, &err), -EINVAL);
	for (int i = 0; i < 3; i++) {
		o.blocksize = l.j_blocksize = (uint32_t[]){ 512, 131072, 3072 }[i];
		T_EQ(jbd_format_loc(&l, &o, &err), -EINVAL);
	}
	o.blocksize = l.j_blocksize = BS;
	e.len = 32;
	T_EQ(jbd_format_loc(&l, &o, &err), -ENOSPC);
	T_CHECK(strstr(err.msg, "does not hold 64 blocks"));
	e.len = 64;
	l.j_len = 32;                                  /* shorter than asked */
	T_EQ(jbd_format_loc(&l, &o, &err), -ENOSPC);
	l.j_len = 64;
	l.j_sb_block = 1;                              /* not in block 0 */
	T_EQ(jbd_format_loc(&l, &o, &err), -ENOSPC);
	l.j_sb_block = 0;
	e = (struct jbd_extent){ 1, 1, 63 };           /* block 0 unmapped */
	T_EQ(jbd_format_loc(&l, &o, &err), -ENOSPC);
	/* a hole inside the map: its ends check out, the zeroing meets it */
	struct jbd_extent holed[2] = { { 0, 0, 16 }, { 20, 20, 44 } };
	l.j_map = holed;
	l.j_nmap = 2;
	T_EQ(jbd_format_loc(&l, &o, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "cannot write the journal"));
	T_EQ(jbd_format_at(d, 65, &o, &err), -ENOSPC); /* starts past the device */
	T_EQ(jbd_format_at(d, 1, &o, &err), -ENOSPC);  /* does not fit after it */
	T_CHECK(strstr(err.msg, "device too small"));
	T_EQ(jbd_format(d, &o, &err), 0);
	dev_close(d);
	/* the log is zeroed 256 blocks at a time: the first write failing ends
	 * it (and nothing after it is written) */
	struct dev_fault_opts fo = { .fail_write_nth = 1 };
	struct dev *mem, *fd;
	T_EQ(dev_mem_new(600 * BS, 512, &mem), 0);
	T_EQ(dev_fault_new(mem, &fo, &fd), 0);
	o.blocks = 600;
	T_EQ(jbd_format(fd, &o, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot write the journal"));
	struct dev_fault_counts c;
	dev_fault_counts(fd, &c);
	T_EQ(c.writes, 1);
	dev_close(fd);
}

static void t_parse_limits(void)
{
	struct jbd_tag tags[3] = { { 10, 0, 0 }, { 11, 0, 0 }, { 12, 0, 0 } }, got[1];
	uint64_t recs[3] = { 7, 8, 9 }, out[1];
	uint8_t uuid[16] = { 1 };
	struct jbd2_sb sb;
	struct jbd_fmt f;

	make_sb(&sb, BS, 64, 0);
	jbd_fmt_from_sb(&sb, &f);
	jbd_desc_encode(&f, blk, 1, tags, 3, uuid);
	T_EQ(jbd_desc_parse(&f, blk, got, 1), 3); /* counts all, stores one */
	T_EQ_U64(got[0].t_target, 10);
	jbd_revoke_encode(&f, blk, 1, recs, 3);
	T_EQ(jbd_revoke_parse(&f, blk, out, 1), 3);
	T_EQ_U64(out[0], 7);
	/* the magic is four bytes: three of them do not need escaping */
	memset(blk, 0, sizeof(blk));
	blk[0] = 0xC0;
	T_CHECK(!jbd_block_needs_escape(blk));
	blk[1] = 0x3B;
	T_CHECK(!jbd_block_needs_escape(blk));
	blk[2] = 0x39;
	T_CHECK(!jbd_block_needs_escape(blk));
	blk[3] = 0x98;
	T_CHECK(jbd_block_needs_escape(blk));
}

/* The writers' own checks (JBD_LB_BUILT) refuse what they never build. */
static void t_logblock_built(void)
{
	struct jbd_tag tag = { 10, 0, 0 };
	uint8_t uuid[16] = { 1 };
	struct jbd_err err = { 0, "" };
	struct jbd2_sb sb;
	struct jbd_fmt f, f1;

	make_sb(&sb, BS, 64, 0);
	jbd_fmt_from_sb(&sb, &f);
	jbd_desc_encode(&f, blk, 1, &tag, 1, uuid);
	blk[12 + 7] |= 0x10; /* an unknown tag flag (tag 8 bytes: flags at 6..7) */
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "unknown flags"));
	/* no LAST_TAG: tags with SAME_UUID up to the end of the block */
	jbd_desc_encode(&f, blk, 1, &tag, 1, uuid);
	blk[12 + 7] &= (uint8_t)~JBD2_FLAG_LAST_TAG;
	for (size_t p = 12 + 8 + 16; p + 8 <= BS; p += 8)
		blk[p + 7] = JBD2_FLAG_SAME_UUID;
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "no LAST_TAG"));
	/* revoke r_count below its header, and beyond the block */
	jbd_revoke_encode(&f, blk, 1, NULL, 0);
	blk[12] = blk[13] = blk[14] = 0, blk[15] = 4;
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "r_count 4 outside"));
	blk[14] = 0x10, blk[15] = 0;
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	/* commit: no checksum type on a v1 journal, nanoseconds past a second */
	jbd_put_be32(&sb.s_feature_compat, JBD2_FEATURE_COMPAT_CHECKSUM);
	jbd_sb_csum_set(&sb);
	jbd_fmt_from_sb(&sb, &f1);
	jbd_commit_encode(&f, blk, 1, 5, 0, 0);
	T_EQ(jbd_logblock_check(&f1, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "checksum type 0 size 0"));
	/* both v1 and v3 (refused at load, yet a fmt can say so): v3 rules */
	jbd_put_be32(&sb.s_feature_incompat, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	sb.s_checksum_type = JBD2_CRC32C_CHKSUM;
	jbd_fmt_from_sb(&sb, &f1);
	jbd_commit_encode(&f1, blk, 1, 5, 0, 0);
	T_EQ(jbd_logblock_check(&f1, blk, 1, JBD_LB_BUILT, &err), 0);
	jbd_commit_encode(&f, blk, 1, 5, 1000000000u, 0);
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "nanoseconds"));
	memset(blk, 0, sizeof(blk));
	T_EQ(jbd_logblock_check(&f, blk, 1, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "no magic"));
}

/* ---- how a scan stops ------------------------------------------------------ */

static void t_stop_names(void)
{
	static const char *const want[] = { "empty", "no_magic", "sequence", "block_type",
					     "stale", "log_full", "corrupt", "loop", "io_error" };

	for (int s = JBD_STOP_EMPTY; s <= JBD_STOP_IO; s++)
		T_STREQ(jbd_scan_stop_name((enum jbd_scan_stop)s), want[s]);
	T_STREQ(jbd_scan_stop_name((enum jbd_scan_stop)99), "?");
}

/* Revoke blocks of one tid in every log block and no commit: the scan
 * reads the whole log inside one transaction and says it would loop. */
static void t_scan_loop(void)
{
	struct jbd_recover_result res;
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_NONE, false), 0);
	for (uint32_t b = r.j.j_first; b < r.j.j_last; b++) {
		jbd_revoke_encode(&r.j.j_fmt, blk, 1, NULL, 0);
		T_EQ(jwrite(&r, b), 0);
	}
	jbd_put_be32(&r.j.j_sb.s_start, r.j.j_first);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	T_EQ(scan(&r, &sc, &err), -EUCLEAN);
	T_EQ(sc.sc_stop, JBD_STOP_LOOP);
	T_CHECK(strstr(err.msg, "scan would loop"));
	jbd_scan_release(&sc);
	T_EQ(recover(&r, &res, &err), -EUCLEAN);
	rig_close(&r);
}

/* A log whose every block belongs to a committed transaction (21 of
 * descriptor, copy, commit in 63 blocks: a crafted log, as our writers
 * keep a block free): the scan reads it all and stops there; all of it is
 * replayed. */
static void t_scan_log_full(void)
{
	struct jbd_recover_result res;
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;
	uint32_t b, tid = 1;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_NONE, false), 0);
	T_EQ((r.j.j_last - r.j.j_first) % 3, 0);
	for (b = r.j.j_first; b < r.j.j_last; b += 3, tid++) {
		struct jbd_tag tag = { tid % DBLOCKS, 0, 0 };
		jbd_desc_encode(&r.j.j_fmt, blk, tid, &tag, 1, r.j.j_sb.s_uuid);
		T_EQ(jwrite(&r, b), 0);
		memset(blk, (int)tid, sizeof(blk));
		T_EQ(jwrite(&r, b + 1), 0);
		jbd_commit_encode(&r.j.j_fmt, blk, tid, 10 + tid, 0, 0);
		T_EQ(jwrite(&r, b + 2), 0);
	}
	jbd_put_be32(&r.j.j_sb.s_start, r.j.j_first);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	T_EQ(scan(&r, &sc, &err), 0);
	T_EQ(sc.sc_stop, JBD_STOP_LOG_FULL);
	T_EQ(sc.sc_ntrans, 21);
	jbd_scan_release(&sc);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 21);
	T_EQ(data_byte(&r, 21), 21);
	rig_close(&r);
}

/* A block with the magic and the sequence but an unknown type ends the
 * log; what came before is replayed. */
static void t_scan_block_type(void)
{
	static const uint64_t b1[] = { 3 };
	struct jbd_write_result w;
	struct jbd_recover_result res;
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, false), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, &w), 0);
	memset(blk, 0, sizeof(blk));
	jbd_hdr_encode(blk, 9, w.tid + 1);
	T_EQ(jwrite(&r, w.commit_block + 1), 0);
	T_EQ(scan(&r, &sc, &err), 0);
	T_EQ(sc.sc_stop, JBD_STOP_BLOCKTYPE);
	jbd_scan_release(&sc);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 3), 'A');
	rig_close(&r);
}

/* v1 (COMPAT_CHECKSUM): a commit block without a checksum (type, size and
 * crc all 0, as old kernels wrote) is accepted; a wrong crc is corrupt. */
static void t_v1_commit(void)
{
	static const uint64_t b1[] = { 3 }, b2[] = { 4 };
	struct jbd_write_result w1, w2;
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V1, false), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, &w1), 0);
	T_EQ(txn(&r, b2, "B", 1, NULL, 0, 11, &w2), 0);
	/* no checksum is only all three zero: a size, or a crc, alone is bad;
	 * so is the crc32 type with another size */
	for (int bad = 0; bad < 3; bad++) {
		T_EQ(jread(&r, w1.commit_block), 0);
		memset(blk + 12, 0, 8); /* c_type, c_size, padding, c_chksum0 */
		if (bad == 2)
			blk[12] = JBD2_CRC32_CHKSUM, blk[13] = 2;
		else
			blk[bad ? 19 : 13] = 4;
		T_EQ(jwrite(&r, w1.commit_block), 0);
		T_EQ(recover(&r, &res, &err), -EUCLEAN);
		T_CHECK(strstr(err.msg, "bad commit block checksum"));
	}
	T_EQ(jread(&r, w1.commit_block), 0);
	memset(blk + 12, 0, 8);
	T_EQ(jwrite(&r, w1.commit_block), 0);
	T_EQ(jread(&r, w2.commit_block), 0);
	blk[16 + 3] ^= 1; /* c_chksum0 */
	T_EQ(jwrite(&r, w2.commit_block), 0);
	T_EQ(recover(&r, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "bad commit block checksum"));
	T_EQ(data_byte(&r, 3), 0); /* nothing written */
	T_EQ(jread(&r, w2.commit_block), 0);
	blk[16 + 3] ^= 1;
	T_EQ(jwrite(&r, w2.commit_block), 0);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 2);
	T_EQ(data_byte(&r, 3), 'A');
	T_EQ(data_byte(&r, 4), 'B');
	rig_close(&r);
}

/* v1 with async commit: after a failed commit the scan goes on (async), but
 * another commit block after it is corrupt (only the last may be torn). */
static void t_v1_async_after_failed_commit(void)
{
	static const uint64_t b1[] = { 3 }, b2[] = { 4 };
	struct jbd_write_result w1;
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V1, true), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, &w1), 0);
	T_EQ(txn(&r, b2, "B", 1, NULL, 0, 11, NULL), 0);
	T_EQ(jread(&r, w1.commit_block), 0);
	blk[16 + 3] ^= 1;
	T_EQ(jwrite(&r, w1.commit_block), 0);
	T_EQ(scan(&r, &sc, &err), -EUCLEAN);
	T_EQ(sc.sc_stop, JBD_STOP_CORRUPT);
	T_CHECK(strstr(err.msg, "follows a failed commit"));
	jbd_scan_release(&sc);
	rig_close(&r);
}

/* v3: a bad commit checksum with an older commit time is a stale block of
 * an earlier use of the log: the end, not corruption. */
static void t_stale_commit(void)
{
	static const uint64_t b1[] = { 3 }, b2[] = { 4 };
	struct jbd_write_result w2;
	struct jbd_recover_result res;
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, false), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 100, NULL), 0);
	T_EQ(txn(&r, b2, "B", 1, NULL, 0, 50, &w2), 0);
	T_EQ(jread(&r, w2.commit_block), 0);
	blk[BS - 1] ^= 1;
	T_EQ(jwrite(&r, w2.commit_block), 0);
	T_EQ(scan(&r, &sc, &err), 0);
	T_EQ(sc.sc_stop, JBD_STOP_STALE);
	jbd_scan_release(&sc);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 4), 0);
	rig_close(&r);
}

/* Async v3: two bad commits in a row; the log ends at the first. */
static void t_async_two_bad_commits(void)
{
	static const uint64_t b1[] = { 3 }, b2[] = { 4 }, b3[] = { 5 };
	struct jbd_write_result w2, w3;
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, true), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, NULL), 0);
	T_EQ(txn(&r, b2, "B", 1, NULL, 0, 11, &w2), 0);
	T_EQ(txn(&r, b3, "C", 1, NULL, 0, 12, &w3), 0);
	for (int i = 0; i < 2; i++) {
		uint32_t b = i ? w3.commit_block : w2.commit_block;
		T_EQ(jread(&r, b), 0);
		blk[BS - 1] ^= 1;
		T_EQ(jwrite(&r, b), 0);
	}
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 3), 'A');
	T_EQ(data_byte(&r, 4), 0);
	T_EQ(data_byte(&r, 5), 0);
	rig_close(&r);
}

/* A committed transaction whose second revoke block (after its descriptor
 * and a good one) has an r_count beyond the block: corrupt, nothing
 * written. */
static void t_bad_revoke_after_descriptor(void)
{
	struct jbd_tag tag = { 3, 0, 0 };
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;
	uint32_t b;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_NONE, false), 0);
	b = r.j.j_first;
	jbd_desc_encode(&r.j.j_fmt, blk, 1, &tag, 1, r.j.j_sb.s_uuid);
	T_EQ(jwrite(&r, b++), 0);
	memset(blk, 'A', sizeof(blk));
	T_EQ(jwrite(&r, b++), 0);
	jbd_revoke_encode(&r.j.j_fmt, blk, 1, NULL, 0); /* a good one first */
	T_EQ(jwrite(&r, b++), 0);
	jbd_put_be32((jbd_be32 *)(blk + 12), BS + 8);
	T_EQ(jwrite(&r, b++), 0);
	jbd_commit_encode(&r.j.j_fmt, blk, 1, 10, 0, 0);
	T_EQ(jwrite(&r, b), 0);
	jbd_put_be32(&r.j.j_sb.s_start, r.j.j_first);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	T_EQ(recover(&r, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "beyond the block"));
	T_EQ(data_byte(&r, 3), 0);
	rig_close(&r);
}

/* A map that does not cover the log (a hole in it): reading or writing a
 * block there is refused by the map (-EINVAL), which the scan reports as
 * a corrupt journal and the writer as a failed append. */
static void t_map_hole(void)
{
	static const uint64_t b1[] = { 3, 4, 5, 6 };
	struct jbd_scan sc;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_NONE, false), 0);
	for (uint32_t b = r.j.j_first; b < 40; b++) {
		jbd_revoke_encode(&r.j.j_fmt, blk, 1, NULL, 0);
		T_EQ(jwrite(&r, b), 0);
	}
	jbd_put_be32(&r.j.j_sb.s_start, r.j.j_first);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	r.ext.len = 32; /* blocks 32.. have no place on the device now */
	T_EQ(scan(&r, &sc, &err), -EUCLEAN);
	T_EQ(sc.sc_stop, JBD_STOP_IO);
	T_CHECK(strstr(err.msg, "cannot read journal block 32"));
	jbd_scan_release(&sc);
	jbd_put_be32(&r.j.j_sb.s_start, 0);
	jbd_put_be32(&r.j.j_sb.s_head, 30);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	T_CHECK(txn(&r, b1, "ABCD", 4, NULL, 0, 10, NULL) < 0);
	rig_close(&r);
}

/* ---- recovery --------------------------------------------------------------- */

/* The same block revoked in T2 (twice) and T4: T3's copy, between them, is
 * revoked too (the newest revoke counts); without T4's, T3's copy is
 * replayed. */
static void t_revoked_twice(void)
{
	static const uint64_t x[] = { 6 }, xx[] = { 6, 6 }, y[] = { 7 };
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	for (int again = 0; again < 2; again++) {
		T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, false), 0);
		T_EQ(txn(&r, x, "A", 1, NULL, 0, 10, NULL), 0);
		T_EQ(txn(&r, y, "Y", 1, xx, 2, 11, NULL), 0); /* a record twice */
		T_EQ(txn(&r, x, "B", 1, NULL, 0, 12, NULL), 0);
		if (again)
			T_EQ(txn(&r, y, "Z", 1, x, 1, 13, NULL), 0);
		T_EQ(recover(&r, &res, &err), 0);
		T_EQ(data_byte(&r, 6), again ? 0 : 'B');
		T_EQ(res.revoke_records, again ? 3 : 2);
		rig_close(&r);
	}
}

/* Async v3: a block with a bad checksum that a later transaction revokes
 * does not tear its transaction (it would not be replayed anyway). */
static void t_async_bad_block_revoked(void)
{
	static const uint64_t b1[] = { 3, 4 }, rv[] = { 3 }, b2[] = { 5 };
	struct jbd_write_result w1;
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, true), 0);
	T_EQ(txn(&r, b1, "AB", 2, NULL, 0, 10, &w1), 0);
	T_EQ(txn(&r, b2, "C", 1, rv, 1, 11, NULL), 0);
	/* T1: descriptor, then the copies of 3 and 4; spoil the copy of 3 */
	T_EQ(jread(&r, w1.start_block + 1), 0);
	blk[100] ^= 1;
	T_EQ(jwrite(&r, w1.start_block + 1), 0);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.torn_transactions, 0);
	T_EQ(res.replayed_transactions, 2);
	T_EQ(data_byte(&r, 3), 0);
	T_EQ(data_byte(&r, 4), 'B');
	T_EQ(data_byte(&r, 5), 'C');
	rig_close(&r);
}

/* Async commit without v2/v3 checksums: nothing to cut, all replayed. */
static void t_async_without_csum(void)
{
	static const uint64_t b1[] = { 3 };
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_NONE, true), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, NULL), 0);
	T_EQ(recover(&r, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 3), 'A');
	rig_close(&r);
}

static void t_no_data_device(void)
{
	static const uint64_t b1[] = { 3 };
	struct jbd_recover_result res;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_open(&r, JBD_CSUM_KIND_V3, false), 0);
	T_EQ(txn(&r, b1, "A", 1, NULL, 0, 10, NULL), 0);
	T_EQ(reload(&r), 0);
	r.j.j_loc.j_data = NULL;
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "no data device"));
	rig_close(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_sb_check);
	T_RUN(t_load_fast_commit);
	T_RUN(t_format_args);
	T_RUN(t_parse_limits);
	T_RUN(t_logblock_built);
	T_RUN(t_stop_names);
	T_RUN(t_scan_loop);
	T_RUN(t_scan_log_full);
	T_RUN(t_scan_block_type);
	T_RUN(t_v1_commit);
	T_RUN(t_v1_async_after_failed_commit);
	T_RUN(t_stale_commit);
	T_RUN(t_async_two_bad_commits);
	T_RUN(t_bad_revoke_after_descriptor);
	T_RUN(t_map_hole);
	T_RUN(t_revoked_twice);
	T_RUN(t_async_bad_block_revoked);
	T_RUN(t_async_without_csum);
	T_RUN(t_no_data_device);
	return t_done(argv[0]);
}

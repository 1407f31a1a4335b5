/*
 * CRCs against the standard check values ("123456789") and libext2fs;
 * encode/decode round trips
 * of every block type and tag format; escaping; superblock validation.
 */
#include <errno.h>
#include <ext2fs/ext2fs.h>

#include "pagecache.h"
#include "t.h"
#include "ujbd/dev.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"

static const char check9[] = "123456789";
static const uint8_t uuid1[16] = { 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
				   0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 };

static uint32_t bitwise_crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
	}
	return crc;
}

static uint32_t bitwise_crc32_be(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= (uint32_t)*p++ << 24;
		for (int k = 0; k < 8; k++)
			crc = (crc << 1) ^ ((crc & 0x80000000u) ? 0x04C11DB7u : 0);
	}
	return crc;
}

static void test_crc_vectors(void)
{
	uint8_t seq16[16];

	for (int i = 0; i < 16; i++)
		seq16[i] = (uint8_t)i;
	T_EQ_U64(jbd_crc32c(0xFFFFFFFFu, check9, 9), 0x1CF96D7Cu);
	T_EQ_U64(jbd_crc32c_sw(0xFFFFFFFFu, check9, 9), 0x1CF96D7Cu);
	T_EQ_U64(jbd_crc32c(0, check9, 9), 0x58E3FA20u);
	T_EQ_U64(jbd_crc32_be(0xFFFFFFFFu, check9, 9), 0x0376E6E7u);
	T_EQ_U64(jbd_crc32c(0xFFFFFFFFu, seq16, 16), 0x2636F714u);
	T_EQ_U64(jbd_crc32c(0xFFFFFFFFu, uuid1, 16), 0x643DBF5Bu);
}

static void test_tag_csum_vectors(void)
{
	static uint8_t blk[4096];
	struct jbd_fmt f = { .f_blocksize = 4096, .f_seed = 0x643DBF5Bu, .f_csum_v23 = true,
			     .f_v3 = true };

	memset(blk, 'A', sizeof(blk));
	T_EQ_U64(jbd_tag_csum(&f, 1, blk), 0xA2E71278u);
	memset(blk, 0, sizeof(blk));
	f.f_seed = 0x2636F714u;
	T_EQ_U64(jbd_tag_csum(&f, 1, blk), 0x3E893F23u);
	/* v2 keeps the low 16 bits */
	f.f_v3 = false;
	struct jbd_tag t = { 5, 0, 0x3F23 };
	T_CHECK(jbd_tag_csum_verify(&f, 1, &t, blk));
	t.t_csum = 0x3F24;
	T_CHECK(!jbd_tag_csum_verify(&f, 1, &t, blk));
}

/* Random buffers, every length and alignment up to 300, then big ones: the
 * hardware path, the tables, a bitwise reference and libext2fs agree. */
static void test_crc_vs_libext2fs(void)
{
	static uint8_t buf[70000];
	uint64_t x = 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 300; len++) {
			uint32_t seed = (uint32_t)(len * 2654435761u);
			uint32_t ref = ext2fs_crc32c_le(seed, buf + off, (unsigned)len);
			T_EQ_U64(jbd_crc32c(seed, buf + off, len), ref);
			T_EQ_U64(jbd_crc32c_sw(seed, buf + off, len), ref);
			T_EQ_U64(bitwise_crc32c(seed, buf + off, len), ref);
			uint32_t rbe = ext2fs_crc32_be(seed, buf + off, (unsigned)len);
			T_EQ_U64(jbd_crc32_be(seed, buf + off, len), rbe);
			T_EQ_U64(bitwise_crc32_be(seed, buf + off, len), rbe);
		}
	/* around the hardware path's three-stream rounds (3 x 1360 bytes, and
	 * one of 3 x 1352 for what is left): one round short of a byte,
	 * exact, with a tail; two, three rounds; each followed by the short
	 * one; a 4 KiB commit block's checksum (4076 bytes from offset 20) */
	static const size_t bases[] = { 4056, 4080, 4080 + 4056, 2 * 4080, 2 * 4080 + 4056,
					3 * 4080, 3 * 4080 + 4056 };
	for (size_t off = 0; off < 9; off++)
		for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
			for (size_t len = bases[b] - 9; len < bases[b] + 20; len++) {
				uint32_t seed = (uint32_t)(len * 40503u + off);
				T_EQ_U64(jbd_crc32c(seed, buf + off, len),
					 ext2fs_crc32c_le(seed, buf + off, (unsigned)len));
			}
	T_EQ_U64(jbd_crc32c(7, buf + 20, 4076), ext2fs_crc32c_le(7, buf + 20, 4076));
	for (size_t len = 1024; len <= 65536; len *= 2) {
		T_EQ_U64(jbd_crc32c(~0u, buf + 3, len), ext2fs_crc32c_le(~0u, buf + 3, (unsigned)len));
		T_EQ_U64(jbd_crc32_be(~0u, buf + 1, len), ext2fs_crc32_be(~0u, buf + 1, (unsigned)len));
	}
	fprintf(stderr, "  crc32c uses %s\n", jbd_crc32c_hw() ? "the SSE4.2 instruction" : "tables");
}

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
	memcpy(sb->s_uuid, uuid1, 16);
	if (incompat & (JBD2_FEATURE_INCOMPAT_CSUM_V2 | JBD2_FEATURE_INCOMPAT_CSUM_V3))
		sb->s_checksum_type = JBD2_CRC32C_CHKSUM;
	jbd_sb_csum_set(sb);
}

static void test_tag_bytes(void)
{
	T_EQ(jbd_tag_bytes(0), 8);
	T_EQ(jbd_tag_bytes(JBD2_FEATURE_INCOMPAT_64BIT), 12);
	T_EQ(jbd_tag_bytes(JBD2_FEATURE_INCOMPAT_CSUM_V2), 10);
	T_EQ(jbd_tag_bytes(JBD2_FEATURE_INCOMPAT_CSUM_V2 | JBD2_FEATURE_INCOMPAT_64BIT), 14);
	T_EQ(jbd_tag_bytes(JBD2_FEATURE_INCOMPAT_CSUM_V3), 16);
	T_EQ(jbd_tag_bytes(JBD2_FEATURE_INCOMPAT_CSUM_V3 | JBD2_FEATURE_INCOMPAT_64BIT), 16);
	/* tags per descriptor block, by tag size and tail */
	struct jbd2_sb sb;
	struct jbd_fmt f;
	make_sb(&sb, 4096, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	T_EQ(jbd_desc_capacity(&f), 254);
	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	T_EQ(jbd_desc_capacity(&f), 62);
	make_sb(&sb, 4096, 1024, JBD2_FEATURE_INCOMPAT_64BIT);
	jbd_fmt_from_sb(&sb, &f);
	T_EQ(jbd_desc_capacity(&f), 339);
	make_sb(&sb, 4096, 1024, 0);
	jbd_fmt_from_sb(&sb, &f);
	T_EQ(jbd_desc_capacity(&f), 508);
}

/* Every tag format: encode a full descriptor, parse it back. */
static void test_descriptor_round_trip(void)
{
	static const uint32_t incs[] = {
		0, JBD2_FEATURE_INCOMPAT_64BIT, JBD2_FEATURE_INCOMPAT_CSUM_V2,
		JBD2_FEATURE_INCOMPAT_CSUM_V2 | JBD2_FEATURE_INCOMPAT_64BIT,
		JBD2_FEATURE_INCOMPAT_CSUM_V3,
		JBD2_FEATURE_INCOMPAT_CSUM_V3 | JBD2_FEATURE_INCOMPAT_64BIT,
	};
	static uint8_t blk[4096];
	static struct jbd_tag in[600], out[600];

	for (size_t c = 0; c < sizeof(incs) / sizeof(incs[0]); c++)
		for (uint32_t bs = 1024; bs <= 4096; bs *= 4) {
			struct jbd2_sb sb;
			struct jbd_fmt f;
			make_sb(&sb, bs, 1024, incs[c]);
			jbd_fmt_from_sb(&sb, &f);
			size_t n = jbd_desc_capacity(&f);
			bool wide = f.f_64bit;
			for (size_t i = 0; i < n; i++) {
				in[i].t_target = (wide ? (uint64_t)(i + 1) << 32 : 0) | (1000 + i);
				in[i].t_flags = (i % 3 == 0) ? JBD2_FLAG_ESCAPE : 0;
				in[i].t_csum = f.f_v3 ? 0xDEAD0000u + (uint32_t)i
						      : f.f_csum_v23 ? (uint32_t)(0xBE00 + i) : 0;
			}
			jbd_desc_encode(&f, blk, 42, in, n, uuid1);
			uint32_t type, seq;
			T_CHECK(jbd_hdr_decode(blk, &type, &seq));
			T_EQ(type, JBD2_DESCRIPTOR_BLOCK);
			T_EQ(seq, 42);
			T_CHECK(jbd_tail_csum_verify(&f, blk));
			T_EQ(jbd_desc_parse(&f, blk, out, 600), n);
			for (size_t i = 0; i < n; i++) {
				T_EQ_U64(out[i].t_target, in[i].t_target);
				T_EQ(out[i].t_csum, in[i].t_csum);
				T_EQ(out[i].t_flags & JBD2_FLAG_ESCAPE, in[i].t_flags);
				T_EQ(!!(out[i].t_flags & JBD2_FLAG_SAME_UUID), i > 0);
				T_EQ(!!(out[i].t_flags & JBD2_FLAG_LAST_TAG), i == n - 1);
			}
			if (f.f_csum_v23) {
				blk[100] ^= 1;
				T_CHECK(!jbd_tail_csum_verify(&f, blk));
			}
		}
}

/* v2+64BIT: the second tag starts at 12 + 14 + 16 = 42 (header, tag, the
 * first tag's UUID). */
static void test_tag_offsets(void)
{
	uint8_t blk[1024];
	struct jbd2_sb sb;
	struct jbd_fmt f;
	struct jbd_tag t[2] = { { 7, 0, 0x1111 }, { 0x100000009ull, 0, 0x2222 } };

	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V2 | JBD2_FEATURE_INCOMPAT_64BIT);
	jbd_fmt_from_sb(&sb, &f);
	jbd_desc_encode(&f, blk, 1, t, 2, uuid1);
	T_EQ(blk[12 + 3], 7);
	T_EQ(blk[12 + 4], 0x11);
	T_EQ(memcmp(blk + 26, uuid1, 16), 0);
	T_EQ(blk[42 + 3], 9);                   /* t_blocknr */
	T_EQ(blk[42 + 7], JBD2_FLAG_SAME_UUID | JBD2_FLAG_LAST_TAG);
	T_EQ(blk[42 + 11], 1);                  /* t_blocknr_high */
	/* tag3: flags are read from bytes 6-7 by every reader */
	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	jbd_desc_encode(&f, blk, 1, t, 1, uuid1);
	T_EQ(blk[12 + 7], JBD2_FLAG_LAST_TAG);
	T_EQ(blk[12 + 4] | blk[12 + 5] | blk[12 + 6], 0);
}

/* A descriptor without LAST_TAG ends where the next tag would not fit. */
static void test_desc_parse_bounded(void)
{
	uint8_t blk[1024];
	struct jbd2_sb sb;
	struct jbd_fmt f;
	struct jbd_tag out[200];

	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	memset(blk, 0, sizeof(blk));
	jbd_hdr_encode(blk, JBD2_DESCRIPTOR_BLOCK, 1);
	/* all-zero tags: no SAME_UUID, so each takes 16 + 16 bytes */
	T_EQ(jbd_desc_parse(&f, blk, out, 200), (1024 - 4 - 12) / 32 + 1);
	memset(blk + 12, 0xFF, sizeof(blk) - 12);
	for (size_t p = 12; p + 16 <= 1020; p += 16) /* SAME_UUID, no LAST_TAG */
		blk[p + 7] = JBD2_FLAG_SAME_UUID;
	T_EQ(jbd_desc_parse(&f, blk, out, 200), (1020 - 12) / 16);
}

static void test_escape(void)
{
	uint8_t b[8] = { 0xC0, 0x3B, 0x39, 0x98, 1, 2, 3, 4 };

	T_CHECK(jbd_block_needs_escape(b));
	jbd_escape(b);
	T_CHECK(!jbd_block_needs_escape(b));
	T_EQ(b[0] | b[1] | b[2] | b[3], 0);
	jbd_unescape(b);
	T_CHECK(jbd_block_needs_escape(b));
	T_EQ(b[4], 1);
}

static void test_revoke_round_trip(void)
{
	static uint8_t blk[4096];
	static uint64_t in[1100], out[1100];

	for (int wide = 0; wide < 2; wide++)
		for (int csum = 0; csum < 2; csum++) {
			struct jbd2_sb sb;
			struct jbd_fmt f;
			make_sb(&sb, 4096, 1024,
				(wide ? JBD2_FEATURE_INCOMPAT_64BIT : 0) |
					(csum ? JBD2_FEATURE_INCOMPAT_CSUM_V3 : 0));
			jbd_fmt_from_sb(&sb, &f);
			size_t cap = jbd_revoke_capacity(&f);
			T_EQ(cap, (4096 - 16 - (csum ? 4 : 0)) / (wide ? 8 : 4));
			for (size_t i = 0; i < cap; i++)
				in[i] = wide ? 0x123400000000ull + i : 77 + i;
			jbd_revoke_encode(&f, blk, 9, in, cap);
			T_CHECK(jbd_tail_csum_verify(&f, blk));
			T_EQ(jbd_revoke_parse(&f, blk, out, 1100), (int)cap);
			for (size_t i = 0; i < cap; i++)
				T_EQ_U64(out[i], in[i]);
			/* r_count beyond the block is an error */
			struct jbd2_revoke_header *rh = (void *)blk;
			jbd_put_be32(&rh->r_count, 4096 - (csum ? 4 : 0) + 1);
			T_EQ(jbd_revoke_parse(&f, blk, out, 1100), -EUCLEAN);
			/* small r_count: no records */
			jbd_put_be32(&rh->r_count, 10);
			T_EQ(jbd_revoke_parse(&f, blk, out, 1100), 0);
		}
}

static void test_commit_round_trip(void)
{
	static uint8_t blk[1024];
	struct jbd2_sb sb;
	struct jbd_fmt f;
	struct jbd_commit_info ci;

	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	jbd_commit_encode(&f, blk, 3, 1700000000ull, 123456789, 0);
	jbd_commit_decode(blk, &ci);
	T_EQ(ci.c_type, 0);
	T_EQ(ci.c_size, 0);
	T_EQ_U64(ci.c_sec, 1700000000ull);
	T_EQ(ci.c_nsec, 123456789);
	T_CHECK(jbd_commit_csum_verify(&f, blk));
	/* the checksum covers the whole block */
	blk[1000] = 1;
	T_CHECK(!jbd_commit_csum_verify(&f, blk));
	/* v1: type 1 size 4, the running crc */
	make_sb(&sb, 1024, 1024, 0);
	jbd_put_be32(&sb.s_feature_compat, JBD2_FEATURE_COMPAT_CHECKSUM);
	jbd_fmt_from_sb(&sb, &f);
	T_CHECK(f.f_csum_v1);
	jbd_commit_encode(&f, blk, 3, 5, 6, 0xCAFEBABEu);
	jbd_commit_decode(blk, &ci);
	T_EQ(ci.c_type, JBD2_CRC32_CHKSUM);
	T_EQ(ci.c_size, 4);
	T_EQ_U64(ci.c_chksum0, 0xCAFEBABEu);
	T_EQ(blk[48 + 7], 5); /* be64 seconds */
}

/* The pair at the disk boundary: what the encoders build passes both
 * checks; a flipped bit fails the read check; a layout only our writers
 * promise (LAST_TAG, a whole revoke record) fails only the built one. */
static void test_logblock_check(void)
{
	static uint8_t blk[1024];
	struct jbd_tag tags[2] = { { 10, 0, 0 }, { 11, JBD2_FLAG_ESCAPE, 0 } };
	uint64_t recs[3] = { 7, 8, 9 };
	struct jbd_err err = { 0, "" };
	struct jbd2_sb sb;
	struct jbd_fmt f;

	make_sb(&sb, 1024, 1024, JBD2_FEATURE_INCOMPAT_CSUM_V3);
	jbd_fmt_from_sb(&sb, &f);
	jbd_desc_encode(&f, blk, 4, tags, 2, uuid1);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_BUILT, &err), 0);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), 0);
	T_EQ(jbd_logblock_check(&f, blk, 5, JBD_LB_READ, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "sequence 4, expected 5") != NULL);
	blk[100] ^= 1;
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "descriptor block: bad tail checksum") != NULL);
	/* the second tag without LAST_TAG (byte 7 of tag3 at 12 + 16 + 16):
	 * readers accept it by the fit rule; our writers never build it */
	blk[100] ^= 1;
	blk[12 + 16 + 16 + 7] &= (uint8_t)~JBD2_FLAG_LAST_TAG;
	jbd_tail_csum_set(&f, blk);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), 0);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "descriptor: tag 2:") != NULL); /* parsed on */

	jbd_revoke_encode(&f, blk, 4, recs, 3);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_BUILT, &err), 0);
	blk[15] += 1; /* r_count: half a record more */
	jbd_tail_csum_set(&f, blk);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), 0);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_BUILT, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "whole number of records") != NULL);

	jbd_commit_encode(&f, blk, 4, 5, 6, 0);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_BUILT, &err), 0);
	blk[1000] ^= 1;
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "commit block: bad checksum") != NULL);
	jbd_hdr_encode(blk, 9, 4);
	T_EQ(jbd_logblock_check(&f, blk, 4, JBD_LB_READ, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "unexpected block type 9") != NULL);
}

static void test_sb_check(void)
{
	struct jbd2_sb sb;
	struct jbd_err err;
	uint32_t v3 = JBD2_FEATURE_INCOMPAT_CSUM_V3;

	make_sb(&sb, 4096, 1024, v3);
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), 0);
	T_EQ(jbd_sb_check(&sb, 1023, 4096, 0, &err), -EUCLEAN);   /* too short */
	T_CHECK(strstr(err.msg, "s_maxlen"));
	T_EQ(jbd_sb_check(&sb, 1024, 1024, 0, &err), -EUCLEAN);   /* other block size */
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 1, &err), -EUCLEAN);   /* s_first <= sb block */
	sb.s_uuid[0] ^= 1;                                        /* sb checksum */
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "checksum"));
	make_sb(&sb, 4096, 1024, v3 | 0x40);
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), -EOPNOTSUPP);
	make_sb(&sb, 4096, 1024, v3 | JBD2_FEATURE_INCOMPAT_CSUM_V2);
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), -EUCLEAN);
	make_sb(&sb, 4096, 1024, v3);
	sb.s_checksum_type = 1;
	jbd_sb_csum_set(&sb);
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), -EUCLEAN);
	make_sb(&sb, 4096, 1024, v3);
	jbd_put_be32(&sb.s_start, 1024);
	jbd_sb_csum_set(&sb);
	T_EQ(jbd_sb_check(&sb, 1024, 4096, 0, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "s_start"));
	/* v1: feature words are ignored, features read as zero */
	make_sb(&sb, 1024, 100, 0x40);
	jbd_put_be32(&sb.s_header.h_blocktype, JBD2_SUPERBLOCK_V1);
	T_EQ(jbd_sb_incompat(&sb), 0);
	T_CHECK(!jbd_sb_has_incompat(&sb, 0x40));
	T_EQ(jbd_sb_check(&sb, 100, 1024, 0, &err), 0);
	/* fast commit: the log must keep 1024 blocks */
	make_sb(&sb, 1024, 1100, JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	T_EQ(jbd_sb_check(&sb, 2000, 1024, 0, &err), -EUCLEAN);
	make_sb(&sb, 1024, 1300, JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
	T_EQ(jbd_sb_check(&sb, 2000, 1024, 0, &err), 0);
}

static void test_tid_compare(void)
{
	T_CHECK(jbd_tid_gt(1, 0xFFFFFFFEu));
	T_CHECK(jbd_tid_geq(0, 0xFFFFFFFFu));
	T_CHECK(!jbd_tid_gt(0xFFFFFFFEu, 2));
	T_CHECK(jbd_tid_geq(5, 5));
}

struct progress_log {
	unsigned calls;
	uint64_t last_done, total;
	bool monotonic;
};

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct progress_log *p = arg;

	p->monotonic &= done > p->last_done && done <= total;
	p->calls++;
	p->last_done = done;
	p->total = total;
}

/* jbd_format reports zeroing the log: rising, ending at the log's length. */
static void test_format_progress(void)
{
	struct progress_log p = { .monotonic = true };
	struct jbd_format_opts o = { .blocksize = 1024, .blocks = 1000, .csum = JBD_CSUM_KIND_V3,
				     .progress = on_progress, .progress_arg = &p };
	struct jbd_err err;
	struct dev *d;

	T_EQ(dev_mem_new(1000 * 1024, 1024, &d), 0);
	T_EQ(jbd_format(d, &o, &err), 0);
	T_CHECK(p.calls >= 4); /* 999 log blocks, 256 a chunk */
	T_CHECK(p.monotonic);
	T_EQ_U64(p.last_done, 999);
	T_EQ_U64(p.total, 999);
	o.progress = NULL; /* and none asked: fine */
	T_EQ(jbd_format(d, &o, &err), 0);
	dev_close(d);
}

/* Zeroing a journal file goes past the host's page cache (DEV_REQ_DIRECT):
 * a large journal would otherwise fill it with zeroes nobody reads. What was
 * there before is zero afterwards all the same (the cached copies dropped,
 * not read back stale), and the superblock is where it belongs. */
static void test_format_past_cache(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const unsigned n = 2048;
	struct jbd_format_opts o = { .blocksize = PC_BS, .blocks = n, .csum = JBD_CSUM_KIND_V3,
				     .uuid = { 1 } };
	struct dev_file_opts fo = { 0 };
	uint8_t *junk = malloc(PC_BS), *b = malloc(PC_BS);
	struct jbd_err err;
	char path[300];
	struct dev *d;
	int fd;

	T_CHECK(junk && b);
	snprintf(path, sizeof(path), "%s/ujbd-fmt-XXXXXX", base);
	T_CHECK((fd = mkstemp(path)) >= 0);
	memset(junk, 0x5a, PC_BS);
	for (unsigned i = 0; i < n; i++)
		T_EQ((int)pwrite(fd, junk, PC_BS, (off_t)i * PC_BS), (int)PC_BS);
	T_EQ(fsync(fd), 0);
	if (!pc_direct_bypasses_cache(path)) {
		close(fd);
		unlink(path);
		free(junk);
		free(b);
		T_SKIP("%s has no direct path past its page cache (tmpfs): a format zeroes through the cache there",
		       base);
	}
	T_CHECK(pc_cached_blocks(path, 1, n - 1) > 0); /* the junk, written buffered */
	T_EQ(dev_file_open(path, &fo, &d), 0);
	T_EQ(jbd_format(d, &o, &err), 0);
	dev_close(d);
	T_EQ(pc_cached_blocks(path, 1, n - 1), 0);
	for (unsigned i = 1; i < n; i++) {
		T_EQ((int)pread(fd, b, PC_BS, (off_t)i * PC_BS), (int)PC_BS);
		T_CHECK(b[0] == 0 && !memcmp(b, b + 1, PC_BS - 1));
	}
	T_EQ((int)pread(fd, b, PC_BS, 0), (int)PC_BS);
	T_EQ((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3], 0xC03B3998u);
	close(fd);
	unlink(path);
	free(junk);
	free(b);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_crc_vectors);
	T_RUN(test_tag_csum_vectors);
	T_RUN(test_crc_vs_libext2fs);
	T_RUN(test_tag_bytes);
	T_RUN(test_descriptor_round_trip);
	T_RUN(test_tag_offsets);
	T_RUN(test_desc_parse_bounded);
	T_RUN(test_escape);
	T_RUN(test_revoke_round_trip);
	T_RUN(test_commit_round_trip);
	T_RUN(test_logblock_check);
	T_RUN(test_sb_check);
	T_RUN(test_tid_compare);
	T_RUN(test_format_progress);
	T_RUN(test_format_past_cache);
	return t_done(argv[0]);
}

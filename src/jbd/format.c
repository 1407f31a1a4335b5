/*
 * format.c: encode, decode and checksum every jbd2 block type.
 *
 * Pure functions over byte buffers: no I/O, no allocation. The idea to keep
 * in mind: everything read from a disk is hostile. Parsers bound every loop
 * by the block size and report problems as values; ASSERT-style checks are
 * only for what our own callers promise (a tag count within capacity, say).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jbd/base.h"
#include "rt/assert.h"
#include "ujbd/format.h"

/* ---- superblock ------------------------------------------------------- */

bool jbd_sb_is_v2(const struct jbd2_sb *sb)
{
	return jbd_get_be32(sb->s_header.h_blocktype) == JBD2_SUPERBLOCK_V2;
}

uint32_t jbd_sb_compat(const struct jbd2_sb *sb)
{
	return jbd_sb_is_v2(sb) ? jbd_get_be32(sb->s_feature_compat) : 0;
}

uint32_t jbd_sb_incompat(const struct jbd2_sb *sb)
{
	return jbd_sb_is_v2(sb) ? jbd_get_be32(sb->s_feature_incompat) : 0;
}

uint32_t jbd_sb_ro_compat(const struct jbd2_sb *sb)
{
	return jbd_sb_is_v2(sb) ? jbd_get_be32(sb->s_feature_ro_compat) : 0;
}

bool jbd_sb_has_compat(const struct jbd2_sb *sb, uint32_t mask)
{
	return (jbd_sb_compat(sb) & mask) != 0;
}

bool jbd_sb_has_incompat(const struct jbd2_sb *sb, uint32_t mask)
{
	return (jbd_sb_incompat(sb) & mask) != 0;
}

bool jbd_sb_has_ro_compat(const struct jbd2_sb *sb, uint32_t mask)
{
	return (jbd_sb_ro_compat(sb) & mask) != 0;
}

uint32_t jbd_sb_csum(const struct jbd2_sb *sb)
{
	struct jbd2_sb copy;

	memcpy(&copy, sb, sizeof(copy));
	jbd_put_be32(&copy.s_checksum, 0);
	return jbd_crc32c(0xFFFFFFFFu, &copy, sizeof(copy));
}

static bool sb_has_csum_v23(const struct jbd2_sb *sb)
{
	return jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_CSUM_V2 |
					       JBD2_FEATURE_INCOMPAT_CSUM_V3);
}

void jbd_sb_csum_set(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_checksum, sb_has_csum_v23(sb) ? jbd_sb_csum(sb) : 0);
}

bool jbd_sb_csum_verify(const struct jbd2_sb *sb)
{
	if (!sb_has_csum_v23(sb))
		return true;
	return jbd_get_be32(sb->s_checksum) == jbd_sb_csum(sb);
}

/* The header, the block size and the feature words (format.h's superblock). */
static int sb_check_features(const struct jbd2_sb *sb, uint32_t blocksize,
			     struct jbd_err *err)
{
	uint32_t type = jbd_get_be32(sb->s_header.h_blocktype);
	uint32_t bs = jbd_get_be32(sb->s_blocksize);
	uint32_t inc = jbd_sb_incompat(sb);

	if (jbd_get_be32(sb->s_header.h_magic) != JBD2_MAGIC)
		return jbd_err_set(err, -EUCLEAN, "no jbd2 superblock (bad magic)");
	if (type != JBD2_SUPERBLOCK_V1 && type != JBD2_SUPERBLOCK_V2)
		return jbd_err_set(err, -EUCLEAN, "superblock: unknown block type %u", type);
	if (bs < JBD2_MIN_BLOCKSIZE || bs > JBD2_MAX_BLOCKSIZE || (bs & (bs - 1)))
		return jbd_err_set(err, -EUCLEAN, "superblock: invalid block size %u", bs);
	if (blocksize && bs != blocksize)
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: block size %u differs from the file system's %u",
			       bs, blocksize);
	if (inc & ~JBD2_KNOWN_INCOMPAT_FEATURES)
		return jbd_err_set(err, -EOPNOTSUPP,
			       "superblock: unknown incompatible features 0x%x",
			       inc & ~JBD2_KNOWN_INCOMPAT_FEATURES);
	if ((inc & JBD2_FEATURE_INCOMPAT_CSUM_V2) && (inc & JBD2_FEATURE_INCOMPAT_CSUM_V3))
		return jbd_err_set(err, -EUCLEAN, "superblock: both csum v2 and csum v3 set");
	if (sb_has_csum_v23(sb) && jbd_sb_has_compat(sb, JBD2_FEATURE_COMPAT_CHECKSUM))
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: checksum v1 set together with csum v2/v3");
	if (sb_has_csum_v23(sb) && sb->s_checksum_type != JBD2_CRC32C_CHKSUM)
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: checksum type %u with csum v2/v3 (need 4 = crc32c)",
			       sb->s_checksum_type);
	if (!jbd_sb_csum_verify(sb))
		return jbd_err_set(err, -EUCLEAN, "superblock: bad checksum 0x%08x (computed 0x%08x)",
			       jbd_get_be32(sb->s_checksum), jbd_sb_csum(sb));
	if (jbd_sb_is_v2(sb) && jbd_get_be32(sb->s_nr_users) > 1)
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: journal shared by %u file systems (s_nr_users > 1)",
			       jbd_get_be32(sb->s_nr_users));
	return 0;
}

int jbd_sb_check(const struct jbd2_sb *sb, uint64_t journal_len,
		 uint32_t blocksize, uint64_t sb_block, struct jbd_err *err)
{
	uint32_t maxlen = jbd_get_be32(sb->s_maxlen);
	uint32_t first = jbd_get_be32(sb->s_first);
	uint32_t start = jbd_get_be32(sb->s_start);
	uint64_t last = maxlen;
	int rc = sb_check_features(sb, blocksize, err);

	if (rc)
		return rc;
	if (maxlen > journal_len)
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: s_maxlen %u beyond the journal's %llu blocks (journal too short)",
			       maxlen, (unsigned long long)journal_len);
	if (jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_FAST_COMMIT)) {
		uint32_t fc = jbd_get_be32(sb->s_num_fc_blks);
		if (!fc)
			fc = JBD2_DEFAULT_FC_BLOCKS;
		if (maxlen < JBD2_MIN_JOURNAL_BLOCKS || maxlen - JBD2_MIN_JOURNAL_BLOCKS < fc)
			return jbd_err_set(err, -EUCLEAN,
				       "superblock: fast-commit area of %u blocks leaves too small a log (s_maxlen %u)",
				       fc, maxlen);
		last = maxlen - fc;
	}
	if (first == 0 || first <= sb_block || first >= last)
		return jbd_err_set(err, -EUCLEAN,
			       "superblock: s_first %u out of range (superblock at %llu, log end %llu)",
			       first, (unsigned long long)sb_block, (unsigned long long)last);
	if (last - first < 2)
		return jbd_err_set(err, -EUCLEAN, "superblock: log of %llu blocks is too small",
			       (unsigned long long)(last - first));
	if (start != 0 && (start < first || start >= last))
		return jbd_err_set(err, -EUCLEAN, "superblock: s_start %u outside the log [%u, %llu)",
			       start, first, (unsigned long long)last);
	return 0;
}

/* ---- what the features imply ------------------------------------------ */

unsigned jbd_tag_bytes(uint32_t incompat)
{
	if (incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3)
		return sizeof(struct jbd2_tag3);
	unsigned sz = 8;
	if (incompat & JBD2_FEATURE_INCOMPAT_64BIT)
		sz += 4;
	if (incompat & JBD2_FEATURE_INCOMPAT_CSUM_V2)
		sz += 2;
	return sz;
}

void jbd_fmt_from_sb(const struct jbd2_sb *sb, struct jbd_fmt *f)
{
	memset(f, 0, sizeof(*f));
	f->f_blocksize = jbd_get_be32(sb->s_blocksize);
	f->f_compat = jbd_sb_compat(sb);
	f->f_incompat = jbd_sb_incompat(sb);
	f->f_ro_compat = jbd_sb_ro_compat(sb);
	f->f_v3 = (f->f_incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3) != 0;
	f->f_csum_v23 = f->f_v3 || (f->f_incompat & JBD2_FEATURE_INCOMPAT_CSUM_V2);
	f->f_csum_v1 = !f->f_csum_v23 && (f->f_compat & JBD2_FEATURE_COMPAT_CHECKSUM);
	f->f_64bit = (f->f_incompat & JBD2_FEATURE_INCOMPAT_64BIT) != 0;
	f->f_async = (f->f_incompat & JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT) != 0;
	f->f_tag_bytes = jbd_tag_bytes(f->f_incompat);
	f->f_tail_bytes = f->f_csum_v23 ? sizeof(struct jbd2_block_tail) : 0;
	if (f->f_csum_v23)
		f->f_seed = jbd_crc32c(0xFFFFFFFFu, sb->s_uuid, sizeof(sb->s_uuid));
}

/* ---- headers ---------------------------------------------------------- */

bool jbd_hdr_decode(const void *block, uint32_t *type, uint32_t *seq)
{
	const struct jbd2_header *h = block;

	if (jbd_get_be32(h->h_magic) != JBD2_MAGIC)
		return false;
	*type = jbd_get_be32(h->h_blocktype);
	*seq = jbd_get_be32(h->h_sequence);
	return true;
}

void jbd_hdr_encode(void *block, uint32_t type, uint32_t seq)
{
	struct jbd2_header *h = block;

	jbd_put_be32(&h->h_magic, JBD2_MAGIC);
	jbd_put_be32(&h->h_blocktype, type);
	jbd_put_be32(&h->h_sequence, seq);
}

/* ---- tails and data checksums ------------------------------------------ */

uint32_t jbd_tail_csum(const struct jbd_fmt *f, const void *block)
{
	static const uint8_t zero[4];
	size_t body = f->f_blocksize - sizeof(struct jbd2_block_tail);
	uint32_t c = jbd_crc32c(f->f_seed, block, body);

	return jbd_crc32c(c, zero, sizeof(zero));
}

void jbd_tail_csum_set(const struct jbd_fmt *f, void *block)
{
	struct jbd2_block_tail *t;

	if (!f->f_csum_v23)
		return;
	t = (struct jbd2_block_tail *)((uint8_t *)block + f->f_blocksize - sizeof(*t));
	jbd_put_be32(&t->t_checksum, jbd_tail_csum(f, block));
}

bool jbd_tail_csum_verify(const struct jbd_fmt *f, const void *block)
{
	const struct jbd2_block_tail *t;

	if (!f->f_csum_v23)
		return true;
	t = (const struct jbd2_block_tail *)((const uint8_t *)block + f->f_blocksize -
					     sizeof(*t));
	return jbd_get_be32(t->t_checksum) == jbd_tail_csum(f, block);
}

uint32_t jbd_tag_csum(const struct jbd_fmt *f, uint32_t tid, const void *data)
{
	jbd_be32 seq;
	uint32_t c;

	jbd_put_be32(&seq, tid);
	c = jbd_crc32c(f->f_seed, &seq, sizeof(seq));
	return jbd_crc32c(c, data, f->f_blocksize);
}

bool jbd_tag_csum_verify(const struct jbd_fmt *f, uint32_t tid,
			 const struct jbd_tag *t, const void *data)
{
	uint32_t c;

	if (!f->f_csum_v23)
		return true;
	c = jbd_tag_csum(f, tid, data);
	if (!f->f_v3)
		c &= 0xFFFF;
	return c == t->t_csum;
}

/* ---- descriptors ------------------------------------------------------- */

static void tag_decode(const struct jbd_fmt *f, const uint8_t *p, struct jbd_tag *t)
{
	if (f->f_v3) {
		const struct jbd2_tag3 *t3 = (const struct jbd2_tag3 *)p;
		t->t_target = jbd_get_be32(t3->t_blocknr);
		if (f->f_64bit)
			t->t_target |= (uint64_t)jbd_get_be32(t3->t_blocknr_high) << 32;
		/* Both recovery implementations read bytes 6-7: the low 16 bits. */
		t->t_flags = jbd_get_be32(t3->t_flags) & 0xFFFF;
		t->t_csum = jbd_get_be32(t3->t_checksum);
		return;
	}
	const struct jbd2_tag *tc = (const struct jbd2_tag *)p;
	t->t_target = jbd_get_be32(tc->t_blocknr);
	if (f->f_64bit)
		t->t_target |= (uint64_t)jbd_get_be32(tc->t_blocknr_high) << 32;
	t->t_flags = jbd_get_be16(tc->t_flags);
	t->t_csum = f->f_csum_v23 ? jbd_get_be16(tc->t_checksum) : 0;
}

static void tag_encode(const struct jbd_fmt *f, uint8_t *p, const struct jbd_tag *t)
{
	memset(p, 0, f->f_tag_bytes);
	if (f->f_v3) {
		struct jbd2_tag3 *t3 = (struct jbd2_tag3 *)p;
		jbd_put_be32(&t3->t_blocknr, (uint32_t)t->t_target);
		jbd_put_be32(&t3->t_flags, t->t_flags & 0xFFFF);
		if (f->f_64bit)
			jbd_put_be32(&t3->t_blocknr_high, (uint32_t)(t->t_target >> 32));
		jbd_put_be32(&t3->t_checksum, t->t_csum);
		return;
	}
	struct jbd2_tag *tc = (struct jbd2_tag *)p;
	jbd_put_be32(&tc->t_blocknr, (uint32_t)t->t_target);
	jbd_put_be16(&tc->t_flags, (uint16_t)t->t_flags);
	if (f->f_csum_v23)
		jbd_put_be16(&tc->t_checksum, (uint16_t)t->t_csum);
	if (f->f_64bit)
		jbd_put_be32(&tc->t_blocknr_high, (uint32_t)(t->t_target >> 32));
}

size_t jbd_desc_parse(const struct jbd_fmt *f, const void *block,
		      struct jbd_tag *tags, size_t max)
{
	const uint8_t *b = block;
	size_t size = f->f_blocksize - f->f_tail_bytes;
	size_t p = sizeof(struct jbd2_header), n = 0;

	while (p + f->f_tag_bytes <= size) {
		struct jbd_tag t;
		tag_decode(f, b + p, &t);
		if (n < max)
			tags[n] = t;
		n++;
		p += f->f_tag_bytes;
		if (!(t.t_flags & JBD2_FLAG_SAME_UUID))
			p += JBD2_UUID_SIZE;
		if (t.t_flags & JBD2_FLAG_LAST_TAG)
			break;
	}
	return n;
}

size_t jbd_desc_capacity(const struct jbd_fmt *f)
{
	size_t room = f->f_blocksize - f->f_tail_bytes - sizeof(struct jbd2_header) -
		      JBD2_UUID_SIZE;

	return room / f->f_tag_bytes;
}

void jbd_desc_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		     const struct jbd_tag *tags, size_t n, const uint8_t uuid[16])
{
	uint8_t *b = block;
	size_t p = sizeof(struct jbd2_header);

	ASSERT(n >= 1 && n <= jbd_desc_capacity(f));
	memset(b, 0, f->f_blocksize);
	jbd_hdr_encode(b, JBD2_DESCRIPTOR_BLOCK, tid);
	for (size_t i = 0; i < n; i++) {
		struct jbd_tag t = tags[i];
		t.t_flags &= JBD2_FLAG_ESCAPE;
		if (i > 0)
			t.t_flags |= JBD2_FLAG_SAME_UUID;
		if (i == n - 1)
			t.t_flags |= JBD2_FLAG_LAST_TAG;
		tag_encode(f, b + p, &t);
		p += f->f_tag_bytes;
		if (i == 0) {
			memcpy(b + p, uuid, JBD2_UUID_SIZE);
			p += JBD2_UUID_SIZE;
		}
	}
	ASSERT(p <= f->f_blocksize - f->f_tail_bytes);
	jbd_tail_csum_set(f, b);
}

/* ---- escaping ---------------------------------------------------------- */

bool jbd_block_needs_escape(const void *data)
{
	const uint8_t *p = data;

	return p[0] == 0xC0 && p[1] == 0x3B && p[2] == 0x39 && p[3] == 0x98;
}

void jbd_escape(void *data)
{
	memset(data, 0, 4);
}

void jbd_unescape(void *data)
{
	jbd_be32 m;

	jbd_put_be32(&m, JBD2_MAGIC);
	memcpy(data, &m, 4);
}

/* ---- revoke blocks ------------------------------------------------------ */

static size_t revoke_rec_bytes(const struct jbd_fmt *f)
{
	return f->f_64bit ? 8 : 4;
}

size_t jbd_revoke_capacity(const struct jbd_fmt *f)
{
	return (f->f_blocksize - f->f_tail_bytes - sizeof(struct jbd2_revoke_header)) /
	       revoke_rec_bytes(f);
}

void jbd_revoke_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		       const uint64_t *recs, size_t n)
{
	uint8_t *b = block;
	struct jbd2_revoke_header *rh = block;
	size_t rl = revoke_rec_bytes(f), p = sizeof(*rh);

	ASSERT(n <= jbd_revoke_capacity(f));
	memset(b, 0, f->f_blocksize);
	jbd_hdr_encode(b, JBD2_REVOKE_BLOCK, tid);
	for (size_t i = 0; i < n; i++, p += rl) {
		if (rl == 8)
			jbd_put_be64((jbd_be64 *)(b + p), recs[i]);
		else
			jbd_put_be32((jbd_be32 *)(b + p), (uint32_t)recs[i]);
	}
	jbd_put_be32(&rh->r_count, (uint32_t)p);
	jbd_tail_csum_set(f, b);
}

int jbd_revoke_parse(const struct jbd_fmt *f, const void *block,
		     uint64_t *recs, size_t max)
{
	const uint8_t *b = block;
	const struct jbd2_revoke_header *rh = block;
	uint32_t count = jbd_get_be32(rh->r_count);
	size_t rl = revoke_rec_bytes(f), n = 0;

	if (count > f->f_blocksize - f->f_tail_bytes)
		return -EUCLEAN;
	for (size_t p = sizeof(*rh); p + rl <= count; p += rl, n++) {
		if (n >= max)
			continue;
		recs[n] = rl == 8 ? jbd_get_be64(*(const jbd_be64 *)(b + p))
				  : jbd_get_be32(*(const jbd_be32 *)(b + p));
	}
	return (int)n;
}

/* ---- commit blocks ------------------------------------------------------ */

void jbd_commit_decode(const void *block, struct jbd_commit_info *ci)
{
	const struct jbd2_commit *c = block;

	ci->c_type = c->h_chksum_type;
	ci->c_size = c->h_chksum_size;
	ci->c_chksum0 = jbd_get_be32(c->h_chksum[0]);
	ci->c_sec = jbd_get_be64(c->h_commit_sec);
	ci->c_nsec = jbd_get_be32(c->h_commit_nsec);
}

uint32_t jbd_commit_csum(const struct jbd_fmt *f, const void *block)
{
	static const uint8_t zero[4];
	const size_t off = offsetof(struct jbd2_commit, h_chksum);
	uint32_t c = jbd_crc32c(f->f_seed, block, off);

	c = jbd_crc32c(c, zero, sizeof(zero));
	return jbd_crc32c(c, (const uint8_t *)block + off + 4, f->f_blocksize - off - 4);
}

bool jbd_commit_csum_verify(const struct jbd_fmt *f, const void *block)
{
	const struct jbd2_commit *c = block;

	if (!f->f_csum_v23)
		return true;
	return jbd_get_be32(c->h_chksum[0]) == jbd_commit_csum(f, block);
}

void jbd_commit_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		       uint64_t sec, uint32_t nsec, uint32_t v1_crc)
{
	struct jbd2_commit *c = block;

	memset(block, 0, f->f_blocksize);
	jbd_hdr_encode(block, JBD2_COMMIT_BLOCK, tid);
	jbd_put_be64(&c->h_commit_sec, sec);
	jbd_put_be32(&c->h_commit_nsec, nsec);
	if (f->f_csum_v23) {
		jbd_put_be32(&c->h_chksum[0], jbd_commit_csum(f, block));
	} else if (f->f_csum_v1) {
		c->h_chksum_type = JBD2_CRC32_CHKSUM;
		c->h_chksum_size = JBD2_CRC32_CHKSUM_SIZE;
		jbd_put_be32(&c->h_chksum[0], v1_crc);
	}
}

/* ---- the check at the disk boundary -------------------------------------- */

/* A descriptor as our writers build it: 1..capacity tags, the UUID after the
 * first only, LAST_TAG on the last only, nothing past the tail. */
static int desc_check_built(const struct jbd_fmt *f, const uint8_t *b,
			    struct jbd_err *err)
{
	size_t size = f->f_blocksize - f->f_tail_bytes;
	size_t p = sizeof(struct jbd2_header), n = 0;
	struct jbd_tag t = { 0, 0, 0 };

	while (p + f->f_tag_bytes <= size && !(t.t_flags & JBD2_FLAG_LAST_TAG)) {
		tag_decode(f, b + p, &t);
		EXPECT(!(t.t_flags & ~(JBD2_FLAG_ESCAPE | JBD2_FLAG_SAME_UUID |
				       JBD2_FLAG_LAST_TAG)),
		       err, -EUCLEAN, "descriptor: tag %zu: unknown flags 0x%x", n,
		       t.t_flags);
		EXPECT(!(t.t_flags & JBD2_FLAG_SAME_UUID) == (n == 0), err, -EUCLEAN,
		       "descriptor: tag %zu: the UUID must follow the first tag only", n);
		p += f->f_tag_bytes + (n == 0 ? JBD2_UUID_SIZE : 0);
		n++;
	}
	EXPECT(t.t_flags & JBD2_FLAG_LAST_TAG, err, -EUCLEAN,
	       "descriptor: no LAST_TAG within the block (%zu tags)", n);
	EXPECT(p <= size && n <= jbd_desc_capacity(f), err, -EUCLEAN,
	       "descriptor: %zu tags run past the block", n);
	return 0;
}

static int revoke_check_built(const struct jbd_fmt *f, const uint8_t *b,
			      struct jbd_err *err)
{
	const struct jbd2_revoke_header *rh = (const void *)b;
	uint32_t count = jbd_get_be32(rh->r_count);
	size_t hdr = sizeof(*rh);

	EXPECT(count >= hdr && count <= f->f_blocksize - f->f_tail_bytes, err,
	       -EUCLEAN, "revoke block: r_count %u outside [%zu, %u]", count, hdr,
	       f->f_blocksize - f->f_tail_bytes);
	EXPECT((count - hdr) % revoke_rec_bytes(f) == 0, err, -EUCLEAN,
	       "revoke block: r_count %u is not a whole number of records", count);
	return 0;
}

static int commit_check_built(const struct jbd_fmt *f, const void *b,
			      struct jbd_err *err)
{
	struct jbd_commit_info ci;
	bool v1 = f->f_csum_v1 && !f->f_csum_v23;

	jbd_commit_decode(b, &ci);
	EXPECT(ci.c_type == (v1 ? JBD2_CRC32_CHKSUM : 0) &&
	       ci.c_size == (v1 ? JBD2_CRC32_CHKSUM_SIZE : 0), err, -EUCLEAN,
	       "commit block: checksum type %u size %u for this journal's features",
	       ci.c_type, ci.c_size);
	EXPECT(ci.c_nsec < 1000000000u, err, -EUCLEAN,
	       "commit block: commit time nanoseconds %u", ci.c_nsec);
	return 0;
}

int jbd_logblock_check(const struct jbd_fmt *f, const void *block, uint32_t tid,
		       enum jbd_lb_check how, struct jbd_err *err)
{
	uint32_t type, seq;
	bool built = how == JBD_LB_BUILT;

	EXPECT(jbd_hdr_decode(block, &type, &seq), err, -EUCLEAN,
	       "log block: no magic number");
	EXPECT(seq == tid, err, -EUCLEAN, "log block: sequence %u, expected %u", seq,
	       tid);
	if (type == JBD2_COMMIT_BLOCK) {
		EXPECT(jbd_commit_csum_verify(f, block), err, -EUCLEAN,
		       "transaction %u: commit block: bad checksum", tid);
		return built ? commit_check_built(f, block, err) : 0;
	}
	EXPECT(type == JBD2_DESCRIPTOR_BLOCK || type == JBD2_REVOKE_BLOCK, err,
	       -EUCLEAN, "log block: unexpected block type %u", type);
	EXPECT(jbd_tail_csum_verify(f, block), err, -EUCLEAN,
	       "transaction %u: %s block: bad tail checksum", tid,
	       type == JBD2_REVOKE_BLOCK ? "revoke" : "descriptor");
	if (!built)
		return 0;
	if (type == JBD2_REVOKE_BLOCK)
		return revoke_check_built(f, block, err);
	return desc_check_built(f, block, err);
}

/*
 * ujbd jbd2 on-disk format: where a journal lives, the layout of every
 * block type, typed accessors and the checksums (shared by src/jbd and
 * src/ext4).
 */
#ifndef UJBD_FORMAT_H
#define UJBD_FORMAT_H

#include <assert.h> /* static_assert: C11's macro, C++'s keyword */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- where a journal lives -------------------------------------------- */

/* A run of journal blocks [lblk, lblk+len) stored at device blocks
 * [pblk, pblk+len), in units of the journal block size. */
struct jbd_extent {
	uint64_t lblk, pblk, len;
};

/*
 * A journal = a device, a map from journal block numbers to device blocks,
 * and the data device its tags point into. Built by the caller: identity
 * (one extent) for a standalone journal file or an external journal device,
 * the extents of inode 8 for the internal journal of an ext4 image
 * (src/ext4). The jbd layer never parses ext4.
 */
struct jbd_loc {
	struct dev *j_dev;              /* holds the journal */
	uint32_t j_blocksize;           /* journal block size, bytes */
	const struct jbd_extent *j_map; /* sorted by lblk, covering [0, j_len) */
	size_t j_nmap;
	uint64_t j_len;                 /* blocks the map covers (inode size or device) */
	uint64_t j_sb_block;            /* journal block of the jbd2 superblock:
					 * 0, or 1/2 on an external journal device */
	struct dev *j_data;             /* data device (may equal j_dev), or NULL
					 * when only reading the journal */
	uint64_t j_data_blocks;         /* blocks (of j_blocksize) of the data device;
					 * tags beyond it are corruption */
};

/* Map journal block lblk to a byte offset on j_dev. -EINVAL if unmapped. */
int jbd_loc_offset(const struct jbd_loc *loc, uint64_t lblk, uint64_t *off);
/* The same, and in *run how many journal blocks from lblk on lie one after
 * the other on j_dev (to the end of lblk's extent): one read covers them. */
int jbd_loc_run(const struct jbd_loc *loc, uint64_t lblk, uint64_t *off, uint64_t *run);
/* Whether data-device block `block` lies on a block of the journal (only
 * when the data device is the journal's: an ext4 internal journal, a
 * standalone journal whose data is its own file). Such a block is never
 * data: writing it would overwrite the log, and recovery refuses a log
 * that names one. */
bool jbd_loc_on_journal(const struct jbd_loc *loc, uint64_t block);

/* A one-line description of what went wrong, for the tools to print. */
struct jbd_err {
	int code;        /* the negative errno also returned */
	char msg[256];   /* "transaction 7: descriptor block 12: bad tail checksum" */
};

/* Fill err (if not NULL) with code and a printf-style message; returns code,
 * so that `return jbd_err_set(err, -EUCLEAN, "...", ...);` reads as one step. */
int jbd_err_set(struct jbd_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));


/* ======================================================================== *
 * Below: owned by the jbd layer (src/jbd/format.c, src/jbd/crc32c.c;
 * the contract section above is implemented by src/jbd/base.c).
 * ======================================================================== */

/*
 * THE LAYOUT OF EVERY BLOCK TYPE
 *
 * Every multi-byte integer is big-endian. A journal is an array of blocks of
 * s_blocksize bytes, numbered from 0 ("journal blocks", mapped to the device
 * through struct jbd_loc). Block j_sb_block holds the superblock; the log is
 * the circular area [s_first, last), last = s_maxlen (minus the fast-commit
 * area when FAST_COMMIT is set).
 *
 * Superblock (1024 bytes, rest of the block zero): header (blocktype 3 = v1,
 * 4 = v2), s_blocksize, s_maxlen (journal length in blocks), s_first (first
 * log block), s_sequence (tid of the oldest live transaction), s_start (log
 * block where it starts; 0 = empty, nothing to recover), s_errno; v2 only:
 * the three feature words, s_uuid (seed of every v2/v3 checksum),
 * s_nr_users, s_checksum_type (4 = crc32c), s_num_fc_blks, s_head (the log
 * head saved while clean), s_checksum (crc32c(~0, the 1024 bytes with this
 * field zero)), s_users[48][16].
 *
 * Every log block except journaled data starts with the 12-byte header
 * {magic 0xC03B3998, blocktype, h_sequence = owning tid}. A transaction T is
 * a run of consecutive log blocks (wrapping at last back to s_first):
 *   {revoke blocks} {descriptor, one data block per tag}* commit
 *
 * Descriptor (type 1): header, then tags from byte 12. A tag is
 *   classic: t_blocknr(4) t_checksum(2) t_flags(2) [t_blocknr_high(4) if 64BIT]
 *            [2 unused bytes if CSUM_V2]           -> 8, 12, 10 or 14 bytes
 *   tag3 (CSUM_V3): t_blocknr(4) t_flags(4) t_blocknr_high(4) t_checksum(4)
 * A tag without SAME_UUID is followed by 16 UUID bytes (nobody checks them).
 * LAST_TAG ends the list; so does a tag that would not fit before the 4-byte
 * tail (v2/v3: crc32c(seed, block with the tail zeroed)). ESCAPE: the data
 * block began with the magic, which the log copy has zeroed.
 *
 * Commit (type 2): header, h_chksum_type(1), h_chksum_size(1), pad(2),
 * h_chksum[8] (be32), h_commit_sec (be64), h_commit_nsec (be32). COMPAT
 * CHECKSUM: type 1 size 4, h_chksum[0] = crc32_be(~0, descriptors and data
 * blocks of T in log order). v2/v3: type 0 size 0, h_chksum[0] =
 * crc32c(seed, whole block with h_chksum[0] zero).
 *
 * Revoke (type 5): header, r_count (bytes used, header included), then block
 * numbers of 4 bytes (8 with 64BIT) from byte 16; v2/v3 add the same 4-byte
 * tail as descriptors. A record of T for block B: replay no copy of B from a
 * transaction with tid <= T.
 *
 * Data tag checksum (v2/v3): crc32c(crc32c(seed, be32(T)), the log copy of
 * the block, escaped); v2 keeps the low 16 bits.
 *
 * Checklist: a format change here => update format.c (encode/decode), the
 * log-block builder (src/jbd/logblock.c: escaping, tag checksums, the v1
 * crc, the order of blocks; the runtime's commit and the offline writer
 * both build through it, neither builds a block itself), the scan
 * (scan.c), recovery (recovery.c) and ujbd dump (tools/cmd_dump.c).
 */

#define JBD2_MAGIC 0xC03B3998u

enum jbd2_blocktype {
	JBD2_DESCRIPTOR_BLOCK = 1,
	JBD2_COMMIT_BLOCK = 2,
	JBD2_SUPERBLOCK_V1 = 3,
	JBD2_SUPERBLOCK_V2 = 4,
	JBD2_REVOKE_BLOCK = 5,
	JBD2_FC_BLOCK = 6,
};

/* s_feature_compat */
#define JBD2_FEATURE_COMPAT_CHECKSUM 0x00000001u
/* s_feature_incompat */
#define JBD2_FEATURE_INCOMPAT_REVOKE 0x00000001u
#define JBD2_FEATURE_INCOMPAT_64BIT 0x00000002u
#define JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT 0x00000004u
#define JBD2_FEATURE_INCOMPAT_CSUM_V2 0x00000008u
#define JBD2_FEATURE_INCOMPAT_CSUM_V3 0x00000010u
#define JBD2_FEATURE_INCOMPAT_FAST_COMMIT 0x00000020u

#define JBD2_KNOWN_COMPAT_FEATURES JBD2_FEATURE_COMPAT_CHECKSUM
#define JBD2_KNOWN_INCOMPAT_FEATURES 0x0000003Fu
#define JBD2_KNOWN_ROCOMPAT_FEATURES 0x00000000u

/* tag flags */
#define JBD2_FLAG_ESCAPE 0x1u
#define JBD2_FLAG_SAME_UUID 0x2u
#define JBD2_FLAG_DELETED 0x4u
#define JBD2_FLAG_LAST_TAG 0x8u

/* s_checksum_type / h_chksum_type */
#define JBD2_CRC32_CHKSUM 1
#define JBD2_MD5_CHKSUM 2
#define JBD2_SHA1_CHKSUM 3
#define JBD2_CRC32C_CHKSUM 4
#define JBD2_CRC32_CHKSUM_SIZE 4

#define JBD2_SB_SIZE 1024u
#define JBD2_MIN_JOURNAL_BLOCKS 1024u
#define JBD2_DEFAULT_FC_BLOCKS 256u
#define JBD2_UUID_SIZE 16u
#define JBD2_MIN_BLOCKSIZE 1024u
#define JBD2_MAX_BLOCKSIZE 65536u

/* Big-endian fields are distinct types: they can only be read through
 * jbd_get_be*() and written through jbd_put_be*(). */
typedef struct { uint8_t b[2]; } jbd_be16;
typedef struct { uint8_t b[4]; } jbd_be32;
typedef struct { uint8_t b[8]; } jbd_be64;

static inline uint16_t jbd_get_be16(jbd_be16 v)
{
	return (uint16_t)(v.b[0] << 8 | v.b[1]);
}
static inline uint32_t jbd_get_be32(jbd_be32 v)
{
	return (uint32_t)v.b[0] << 24 | (uint32_t)v.b[1] << 16 |
	       (uint32_t)v.b[2] << 8 | v.b[3];
}
static inline uint64_t jbd_get_be64(jbd_be64 v)
{
	uint64_t x = 0;
	for (int i = 0; i < 8; i++)
		x = x << 8 | v.b[i];
	return x;
}
static inline void jbd_put_be16(jbd_be16 *p, uint16_t x)
{
	p->b[0] = (uint8_t)(x >> 8);
	p->b[1] = (uint8_t)x;
}
static inline void jbd_put_be32(jbd_be32 *p, uint32_t x)
{
	p->b[0] = (uint8_t)(x >> 24);
	p->b[1] = (uint8_t)(x >> 16);
	p->b[2] = (uint8_t)(x >> 8);
	p->b[3] = (uint8_t)x;
}
static inline void jbd_put_be64(jbd_be64 *p, uint64_t x)
{
	for (int i = 7; i >= 0; i--, x >>= 8)
		p->b[i] = (uint8_t)x;
}

/* Common 12-byte header of every metadata block. */
struct jbd2_header {
	jbd_be32 h_magic;
	jbd_be32 h_blocktype;
	jbd_be32 h_sequence;
} __attribute__((packed));

struct jbd2_sb {
	struct jbd2_header s_header;
	jbd_be32 s_blocksize;
	jbd_be32 s_maxlen;
	jbd_be32 s_first;
	jbd_be32 s_sequence;
	jbd_be32 s_start;
	jbd_be32 s_errno;
	/* v2 from here on */
	jbd_be32 s_feature_compat;
	jbd_be32 s_feature_incompat;
	jbd_be32 s_feature_ro_compat;
	uint8_t s_uuid[16];
	jbd_be32 s_nr_users;
	jbd_be32 s_dynsuper;
	jbd_be32 s_max_transaction;
	jbd_be32 s_max_trans_data;
	uint8_t s_checksum_type;
	uint8_t s_padding2[3];
	jbd_be32 s_num_fc_blks;
	jbd_be32 s_head;
	jbd_be32 s_padding[40];
	jbd_be32 s_checksum;
	uint8_t s_users[16 * 48];
} __attribute__((packed));

/* Classic tag; 8 bytes without 64BIT (t_blocknr_high absent). */
struct jbd2_tag {
	jbd_be32 t_blocknr;
	jbd_be16 t_checksum;
	jbd_be16 t_flags;
	jbd_be32 t_blocknr_high;
} __attribute__((packed));

struct jbd2_tag3 {
	jbd_be32 t_blocknr;
	jbd_be32 t_flags;
	jbd_be32 t_blocknr_high;
	jbd_be32 t_checksum;
} __attribute__((packed));

/* The last 4 bytes of a descriptor or revoke block (v2/v3). */
struct jbd2_block_tail {
	jbd_be32 t_checksum;
} __attribute__((packed));

struct jbd2_commit {
	struct jbd2_header c_header;
	uint8_t h_chksum_type;
	uint8_t h_chksum_size;
	uint8_t h_padding[2];
	jbd_be32 h_chksum[8];
	jbd_be64 h_commit_sec;
	jbd_be32 h_commit_nsec;
} __attribute__((packed));

struct jbd2_revoke_header {
	struct jbd2_header r_header;
	jbd_be32 r_count;
} __attribute__((packed));

static_assert(sizeof(struct jbd2_header) == 12, "header size");
static_assert(sizeof(struct jbd2_sb) == 1024, "superblock size");
static_assert(offsetof(struct jbd2_sb, s_blocksize) == 0x0C, "s_blocksize");
static_assert(offsetof(struct jbd2_sb, s_maxlen) == 0x10, "s_maxlen");
static_assert(offsetof(struct jbd2_sb, s_first) == 0x14, "s_first");
static_assert(offsetof(struct jbd2_sb, s_sequence) == 0x18, "s_sequence");
static_assert(offsetof(struct jbd2_sb, s_start) == 0x1C, "s_start");
static_assert(offsetof(struct jbd2_sb, s_errno) == 0x20, "s_errno");
static_assert(offsetof(struct jbd2_sb, s_feature_compat) == 0x24, "compat");
static_assert(offsetof(struct jbd2_sb, s_feature_incompat) == 0x28, "incompat");
static_assert(offsetof(struct jbd2_sb, s_feature_ro_compat) == 0x2C, "ro_compat");
static_assert(offsetof(struct jbd2_sb, s_uuid) == 0x30, "s_uuid");
static_assert(offsetof(struct jbd2_sb, s_nr_users) == 0x40, "s_nr_users");
static_assert(offsetof(struct jbd2_sb, s_checksum_type) == 0x50, "csum type");
static_assert(offsetof(struct jbd2_sb, s_num_fc_blks) == 0x54, "s_num_fc_blks");
static_assert(offsetof(struct jbd2_sb, s_head) == 0x58, "s_head");
static_assert(offsetof(struct jbd2_sb, s_checksum) == 0xFC, "s_checksum");
static_assert(offsetof(struct jbd2_sb, s_users) == 0x100, "s_users");
static_assert(sizeof(struct jbd2_tag) == 12, "classic tag size");
static_assert(offsetof(struct jbd2_tag, t_flags) == 6, "tag flags");
static_assert(offsetof(struct jbd2_tag, t_blocknr_high) == 8, "tag high");
static_assert(sizeof(struct jbd2_tag3) == 16, "tag3 size");
static_assert(offsetof(struct jbd2_tag3, t_flags) == 4, "tag3 flags");
static_assert(offsetof(struct jbd2_tag3, t_checksum) == 12, "tag3 csum");
static_assert(sizeof(struct jbd2_block_tail) == 4, "tail size");
static_assert(offsetof(struct jbd2_commit, h_chksum_type) == 12, "chksum type");
static_assert(offsetof(struct jbd2_commit, h_chksum) == 16, "h_chksum");
static_assert(offsetof(struct jbd2_commit, h_commit_sec) == 48, "commit sec");
static_assert(offsetof(struct jbd2_commit, h_commit_nsec) == 56, "commit nsec");
static_assert(sizeof(struct jbd2_commit) == 60, "commit size");
static_assert(sizeof(struct jbd2_revoke_header) == 16, "revoke header size");

/* ---- CRC primitives (crc32c.c) --------------------------------------- */

/* CRC-32C (Castagnoli, reflected), no inversion: the caller passes the
 * initial value, as jbd2_chksum()/ext2fs_crc32c_le(). SSE4.2 when the CPU
 * has it (checked once at runtime), slicing-by-8 tables otherwise. */
uint32_t jbd_crc32c(uint32_t crc, const void *buf, size_t len);
/* The table version, always (for tests and comparisons). */
uint32_t jbd_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* Whether jbd_crc32c uses the CPU instruction. */
bool jbd_crc32c_hw(void);
/* CRC-32 polynomial 0x04C11DB7, MSB-first, no inversion (COMPAT_CHECKSUM). */
uint32_t jbd_crc32_be(uint32_t crc, const void *buf, size_t len);

/* ---- superblock accessors -------------------------------------------- */

/* The feature words; always 0 for a v1 superblock. One accessor per word
 * so they cannot be mixed up. */
uint32_t jbd_sb_compat(const struct jbd2_sb *sb);
uint32_t jbd_sb_incompat(const struct jbd2_sb *sb);
uint32_t jbd_sb_ro_compat(const struct jbd2_sb *sb);
bool jbd_sb_has_compat(const struct jbd2_sb *sb, uint32_t mask);
bool jbd_sb_has_incompat(const struct jbd2_sb *sb, uint32_t mask);
bool jbd_sb_has_ro_compat(const struct jbd2_sb *sb, uint32_t mask);
bool jbd_sb_is_v2(const struct jbd2_sb *sb);

/* crc32c(~0, sb with s_checksum zeroed), over 1024 bytes. */
uint32_t jbd_sb_csum(const struct jbd2_sb *sb);
/* Store the checksum if CSUM_V2/V3 is set, else zero the field. */
void jbd_sb_csum_set(struct jbd2_sb *sb);
bool jbd_sb_csum_verify(const struct jbd2_sb *sb);

/*
 * Validate a superblock read from journal block sb_block of a journal of
 * journal_len blocks of blocksize bytes (blocksize 0: take s_blocksize).
 * Every rejection e2fsck or the kernel makes (magic, version, block size,
 * unknown incompat features, impossible feature sets, checksum, s_first,
 * s_maxlen and s_start out of range, s_nr_users > 1); the message in err
 * names the field.
 * 0 or -EUCLEAN (corrupt), -EOPNOTSUPP (unknown incompat features).
 */
int jbd_sb_check(const struct jbd2_sb *sb, uint64_t journal_len,
		 uint32_t blocksize, uint64_t sb_block, struct jbd_err *err);

/* ---- the format of one journal: what the features imply --------------- */

struct jbd_fmt {
	uint32_t f_blocksize;
	uint32_t f_compat, f_incompat, f_ro_compat; /* 0 for v1 */
	uint32_t f_seed;       /* crc32c(~0, s_uuid), v2/v3 */
	unsigned f_tag_bytes;  /* 8, 10, 12, 14 or 16 */
	unsigned f_tail_bytes; /* 4 with v2/v3, else 0 */
	bool f_csum_v1;        /* COMPAT_CHECKSUM */
	bool f_csum_v23;       /* CSUM_V2 or CSUM_V3 */
	bool f_v3;             /* CSUM_V3: tag3 */
	bool f_64bit;
	bool f_async;
};

void jbd_fmt_from_sb(const struct jbd2_sb *sb, struct jbd_fmt *f);
/* Tag size for an incompat word (the tag layouts at the top of this file). */
unsigned jbd_tag_bytes(uint32_t incompat);

/* ---- blocks: headers, tags, escaping, revoke, commit ------------------ */

/* Header of a log block: false if the magic is absent. */
bool jbd_hdr_decode(const void *block, uint32_t *type, uint32_t *seq);
void jbd_hdr_encode(void *block, uint32_t type, uint32_t seq);

/* A decoded tag. */
struct jbd_tag {
	uint64_t t_target;   /* fs block (t_blocknr | high << 32 with 64BIT) */
	uint32_t t_flags;    /* low 16 bits, as every reader takes them */
	uint32_t t_csum;     /* v3: 32 bits; v2: 16 bits; else 0 */
};

/*
 * Parse the tags of a descriptor block (header not checked here) by the
 * readers' fit rule: stop at LAST_TAG or when the next tag would not fit
 * before the tail. Fills up to max tags; returns the count (bounded by
 * (blocksize - 12) / 8).
 */
size_t jbd_desc_parse(const struct jbd_fmt *f, const void *block,
		      struct jbd_tag *tags, size_t max);
/* Tags a writer puts in one descriptor (one UUID after the first tag). */
size_t jbd_desc_capacity(const struct jbd_fmt *f);
/*
 * Build a descriptor of tid with n tags (n <= jbd_desc_capacity): the first
 * tag carries the uuid, the others SAME_UUID, the last LAST_TAG; the tail
 * checksum is set with v2/v3. Flags other than ESCAPE in tags[] are ignored.
 */
void jbd_desc_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		     const struct jbd_tag *tags, size_t n, const uint8_t uuid[16]);

/* The descriptor and revoke tail: crc32c(seed, block with the tail zero). */
uint32_t jbd_tail_csum(const struct jbd_fmt *f, const void *block);
void jbd_tail_csum_set(const struct jbd_fmt *f, void *block);
bool jbd_tail_csum_verify(const struct jbd_fmt *f, const void *block);

/* Data tag checksum: crc32c(crc32c(seed, be32(tid)), data, blocksize).
 * Full 32 bits; compare the low 16 bits for v2. */
uint32_t jbd_tag_csum(const struct jbd_fmt *f, uint32_t tid, const void *data);
/* Whether a tag's stored checksum matches data (always true without v2/v3). */
bool jbd_tag_csum_verify(const struct jbd_fmt *f, uint32_t tid,
			 const struct jbd_tag *t, const void *data);

/* Escaping: a block whose first 4 bytes are the magic is logged with them
 * zeroed and ESCAPE set on its tag. */
bool jbd_block_needs_escape(const void *data);
void jbd_escape(void *data);
void jbd_unescape(void *data);

/* Revoke records a writer puts in one revoke block. */
size_t jbd_revoke_capacity(const struct jbd_fmt *f);
/* Build a revoke block of tid with n records (n <= capacity), tail set. */
void jbd_revoke_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		       const uint64_t *recs, size_t n);
/*
 * Parse a revoke block: -EUCLEAN if r_count exceeds the block (minus the
 * tail), else the number of records (up to max stored in recs).
 */
int jbd_revoke_parse(const struct jbd_fmt *f, const void *block,
		     uint64_t *recs, size_t max);

struct jbd_commit_info {
	uint8_t c_type, c_size;
	uint32_t c_chksum0;
	uint64_t c_sec;
	uint32_t c_nsec;
};
void jbd_commit_decode(const void *block, struct jbd_commit_info *ci);
/*
 * Build a commit block of tid: COMPAT_CHECKSUM stores v1_crc (the running
 * crc32_be of the transaction) with type 1 size 4; v2/v3 the crc32c of the
 * block; otherwise no checksum.
 */
void jbd_commit_encode(const struct jbd_fmt *f, void *block, uint32_t tid,
		       uint64_t sec, uint32_t nsec, uint32_t v1_crc);
uint32_t jbd_commit_csum(const struct jbd_fmt *f, const void *block);
/* v2/v3 commit checksum check (true when the journal has none). */
bool jbd_commit_csum_verify(const struct jbd_fmt *f, const void *block);

/*
 * Check one log block of transaction tid — descriptor, revoke or commit —
 * at the disk boundary, in pairs: the writers check every block they build
 * (JBD_LB_BUILT, before it is written; a failure there is a bug, asserted)
 * and the scan checks every block it reads back (JBD_LB_READ).
 *
 * Both: the magic, a log block type, the sequence tid, and the checksum of
 * the kind (v2/v3 tail of a descriptor or revoke block, v2/v3 commit block
 * checksum). BUILT adds what only our writers promise, beyond what readers
 * require: a descriptor holds 1..capacity tags, only its first carries the
 * UUID, only its last LAST_TAG, no flag but ESCAPE besides; a revoke block's
 * r_count covers a whole number of records within the block; a commit block
 * carries the COMPAT_CHECKSUM type and size exactly when that feature is on.
 * Returns 0, or -EUCLEAN with err (may be NULL) saying which rule failed.
 * Pure: no I/O, no allocation.
 */
enum jbd_lb_check {
	JBD_LB_READ = 0,
	JBD_LB_BUILT = 1,
};
int jbd_logblock_check(const struct jbd_fmt *f, const void *block, uint32_t tid,
		       enum jbd_lb_check how, struct jbd_err *err);

/* Wrap-safe tid comparisons (modulo 2^32). */
static inline bool jbd_tid_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}
static inline bool jbd_tid_geq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

#ifdef __cplusplus
}
#endif
#endif

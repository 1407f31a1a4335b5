/*
 * ext4 images: find the journal of an ext2/3/4 file system and map it.
 *
 * The one idea: the journal layer addresses its blocks through a list of
 * extents (journal block -> device block). For an internal journal those
 * are the blocks of inode s_journal_inum, whatever its mapping (extent tree
 * or the old indirect blocks); libext2fs walks them for us and we coalesce
 * the walk into extents. For an external journal device the map is the
 * identity. When the journal inode is damaged we rebuild the map from the
 * copy of its i_block[] that mke2fs keeps in the superblock (s_jnl_blocks),
 * as e2fsck does.
 *
 * Everything here runs before the journal is touched, so it is read-only
 * except ext4_update_super() (needs_recovery, and the error state a journal
 * abort leaves), which rewrites the primary superblock and nothing else
 * (backups keep their old flag, as after e2fsck).
 * libext2fs error codes become negative errnos plus a one-line message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <et/com_err.h>

#include "priv/dev_file.h"
#include "ujbd/ext4.h"

#define EXT4_SB_OFFSET      1024u
#define EXT4_SB_SIZE        1024u
#define EXT4_MAGIC_OFFSET   (EXT4_SB_OFFSET + 0x38u)
#define EXT4_JBD2_MAGIC     0xC03B3998u

/* Flags for every open: 64-bit block numbers, no MMP dance, and ignore
 * metadata checksum errors (an image that needs recovery may carry stale
 * group descriptors until the journal is replayed, as e2fsck knows). */
#define EXT4_OPEN_FLAGS (EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP | \
			 EXT2_FLAG_IGNORE_CSUM_ERRORS | EXT2_FLAG_JOURNAL_DEV_OK)

/* ---- errors ------------------------------------------------------------ */

/* A libext2fs errcode_t as a negative errno. Small codes are system errnos
 * passed through; the ext2 table is sorted into the few classes callers act
 * on (I/O, memory, unsupported, corrupt). */
static int ext4_errno(errcode_t code)
{
	if (code > 0 && code < 4096)
		return -(int)code;
	switch (code) {
	case EXT2_ET_NO_MEMORY:
		return -ENOMEM;
	case EXT2_ET_SHORT_READ:
	case EXT2_ET_SHORT_WRITE:
	case EXT2_ET_LLSEEK_FAILED:
		return -EIO;
	case EXT2_ET_UNSUPP_FEATURE:
	case EXT2_ET_RO_UNSUPP_FEATURE:
	case EXT2_ET_UNIMPLEMENTED:
		return -EOPNOTSUPP;
	default:
		return -EUCLEAN;
	}
}

static const char *ext4_strerror(errcode_t code)
{
	initialize_ext2_error_table(); /* idempotent: registers the table once */
	return error_message(code);
}

/* ---- raw peek: is it ext at all? --------------------------------------- */

static uint32_t ext4_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t ext4_get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/*
 * An image shorter than its superblock says (a copy cut short, a partition
 * smaller than the file system) is invalid input, not an I/O error: say so
 * and where it ends before libext2fs trips over a short read somewhere
 * inside (as e2fsck compares the physical size with s_blocks_count). The
 * raw superblock fields, little-endian: s_blocks_count_lo at 0x04,
 * s_log_block_size at 0x18, s_feature_incompat at 0x60, s_blocks_count_hi
 * at 0x150 (only with INCOMPAT_64BIT). A block size libext2fs would refuse
 * anyway is left to it.
 */
static int ext4_check_size(int fd, const char *path, struct jbd_err *err)
{
	uint8_t sb[EXT4_SB_SIZE];
	uint64_t size, blocks, need;
	uint32_t log_bs, bs;
	int rc;

	memset(sb, 0, sizeof(sb));
	if (pread(fd, sb, sizeof(sb), EXT4_SB_OFFSET) < 0)
		return jbd_err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	rc = dev_file_bytes(fd, &size);
	if (rc)
		return jbd_err_set(err, rc, "cannot size '%s': %s", path, strerror(-rc));
	log_bs = ext4_get_le32(sb + 0x18);
	if (log_bs > EXT2_MAX_BLOCK_LOG_SIZE - EXT2_MIN_BLOCK_LOG_SIZE)
		return 0;
	bs = EXT2_MIN_BLOCK_SIZE << log_bs;
	blocks = ext4_get_le32(sb + 0x04);
	if (ext4_get_le32(sb + 0x60) & EXT4_FEATURE_INCOMPAT_64BIT)
		blocks |= (uint64_t)ext4_get_le32(sb + 0x150) << 32;
	need = blocks * bs;
	if (blocks && need / bs == blocks && size < need)
		return jbd_err_set(err, -EUCLEAN, "truncated image: '%s': it ends at byte %llu, "
				   "its superblock says %llu blocks of %u bytes (blocks %llu-%llu "
				   "missing)", path, (unsigned long long)size,
				   (unsigned long long)blocks, bs, (unsigned long long)(size / bs),
				   (unsigned long long)(blocks - 1));
	return 0;
}

/* *is_ext = the ext2 magic is there and byte 0 does not start a jbd2
 * superblock. A file too short to hold a superblock is simply not ext; one
 * shorter than its superblock says is -EUCLEAN (truncated). */
static int ext4_peek(const char *path, bool *is_ext, struct jbd_err *err)
{
	uint8_t head[8], magic[2];
	ssize_t n;
	int fd, rc = 0;

	*is_ext = false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jbd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0) {
		rc = jbd_err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (n < (ssize_t)sizeof(head))
		goto out;
	n = pread(fd, magic, sizeof(magic), EXT4_MAGIC_OFFSET);
	if (n < 0) {
		rc = jbd_err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (n < (ssize_t)sizeof(magic))
		goto out;
	if ((magic[0] | magic[1] << 8) != EXT2_SUPER_MAGIC)
		goto out;
	/* A standalone journal file starts with its jbd2 superblock (blocktype
	 * 3 or 4); a file system never does (byte 0 is the boot area, and a
	 * journal device keeps its jbd2 superblock after the ext2 one). */
	if (ext4_get_be32(head) == EXT4_JBD2_MAGIC &&
	    (ext4_get_be32(head + 4) == 3 || ext4_get_be32(head + 4) == 4))
		goto out;
	*is_ext = true;
	rc = ext4_check_size(fd, path, err);
out:
	close(fd);
	return rc;
}

static int ext4_open_fs(const char *path, int flags, ext2_filsys *fs,
			struct jbd_err *err)
{
	errcode_t code;

	*fs = NULL;
	code = ext2fs_open2(path, NULL, EXT4_OPEN_FLAGS | flags, 0, 0,
			    unix_io_manager, fs);
	if (code) {
		*fs = NULL;
		return jbd_err_set(err, ext4_errno(code), "cannot open file system '%s': %s",
				 path, ext4_strerror(code));
	}
	return 0;
}

/* ---- the map: a growing, coalescing extent list ------------------------ */

struct ext4_map {
	struct jbd_extent *v;
	size_t n, cap;
	int rc;
};

static int ext4_map_add(struct ext4_map *m, uint64_t lblk, uint64_t pblk)
{
	struct jbd_extent *last = m->n ? &m->v[m->n - 1] : NULL;
	struct jbd_extent *nv;

	if (last && last->lblk + last->len == lblk && last->pblk + last->len == pblk) {
		last->len++;
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 8;

		nv = realloc(m->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->v = nv;
		m->cap = cap;
	}
	m->v[m->n++] = (struct jbd_extent){ .lblk = lblk, .pblk = pblk, .len = 1 };
	return 0;
}

static void ext4_map_release(struct ext4_map *m)
{
	free(m->v);
	*m = (struct ext4_map){ 0 };
}

/* block_iterate3 callback: data blocks only, in logical order. */
static int ext4_map_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
			  blk64_t ref_blk, int ref_offset, void *priv)
{
	struct ext4_map *m = priv;

	(void)fs;
	(void)ref_blk;
	(void)ref_offset;
	if (blockcnt < 0)
		return 0;
	m->rc = ext4_map_add(m, (uint64_t)blockcnt, *blocknr);
	return m->rc ? BLOCK_ABORT : 0;
}

/* The map must cover [0, nblocks) without holes and stay inside the fs. */
static const char *ext4_map_check(const struct ext4_map *m, uint64_t nblocks,
				  uint64_t fs_blocks, uint64_t first_data)
{
	uint64_t next = 0;

	if (nblocks == 0)
		return "journal has size 0";
	for (size_t i = 0; i < m->n && next < nblocks; i++) {
		const struct jbd_extent *e = &m->v[i];

		if (e->lblk != next)
			return "journal has a hole";
		if (e->pblk <= first_data || e->pblk + e->len > fs_blocks ||
		    e->pblk + e->len < e->pblk)
			return "journal block outside the file system";
		next += e->len;
	}
	if (next < nblocks)
		return "journal blocks missing before its size";
	return NULL;
}

/* Drop extents past nblocks and shorten the last one (blocks beyond i_size
 * are not part of the journal). */
static void ext4_map_trim(struct ext4_map *m, uint64_t nblocks)
{
	size_t n = 0;

	while (n < m->n && m->v[n].lblk < nblocks) {
		if (m->v[n].lblk + m->v[n].len > nblocks)
			m->v[n].len = nblocks - m->v[n].lblk;
		n++;
	}
	m->n = n;
}

/* ---- the internal journal ---------------------------------------------- */

static const char *ext4_inode_problem(const struct ext2_inode *inode, uint32_t bs)
{
	if (!LINUX_S_ISREG(inode->i_mode))
		return "not a regular file";
	if (inode->i_links_count == 0)
		return "not linked (cleared?)";
	if (EXT2_I_SIZE(inode) / bs == 0)
		return "size 0";
	return NULL;
}

/* Map through the inode on disk; *why says what is wrong when it fails. */
static int ext4_map_inode(ext2_filsys fs, ext2_ino_t ino, struct ext4_map *m,
			  uint64_t *nblocks, const char **why)
{
	struct ext2_inode inode;
	errcode_t code;

	*why = NULL;
	if (ino < 1 || ino > fs->super->s_inodes_count) {
		*why = "journal inode number out of range";
		return -EUCLEAN;
	}
	code = ext2fs_read_inode(fs, ino, &inode);
	if (code) {
		*why = ext4_strerror(code);
		return ext4_errno(code);
	}
	*why = ext4_inode_problem(&inode, fs->blocksize);
	if (*why)
		return -EUCLEAN;
	*nblocks = EXT2_I_SIZE(&inode) / fs->blocksize;
	code = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_DATA_ONLY | BLOCK_FLAG_READ_ONLY,
				     NULL, ext4_map_block, m);
	if (m->rc) {
		*why = strerror(-m->rc);
		return m->rc;
	}
	if (code) {
		*why = ext4_strerror(code);
		return ext4_errno(code);
	}
	ext4_map_trim(m, *nblocks);
	*why = ext4_map_check(m, *nblocks, ext2fs_blocks_count(fs->super),
			      fs->super->s_first_data_block);
	return *why ? -EUCLEAN : 0;
}

/* Map through s_jnl_blocks: i_block[15], then i_size_high, i_size. bmap2
 * accepts an inode we give it, so the damaged inode on disk is never read. */
static int ext4_map_backup(ext2_filsys fs, ext2_ino_t ino, struct ext4_map *m,
			   uint64_t *nblocks, const char **why)
{
	struct ext2_super_block *sb = fs->super;
	struct ext2_inode inode;
	errcode_t code;
	blk64_t pblk;

	*why = NULL;
	if (sb->s_jnl_backup_type != EXT3_JNL_BACKUP_BLOCKS) {
		*why = "no s_jnl_blocks backup";
		return -EUCLEAN;
	}
	memset(&inode, 0, sizeof(inode));
	memcpy(inode.i_block, sb->s_jnl_blocks, sizeof(inode.i_block));
	inode.i_size_high = sb->s_jnl_blocks[15];
	inode.i_size = sb->s_jnl_blocks[16];
	inode.i_mode = LINUX_S_IFREG | 0600;
	inode.i_links_count = 1;
	if (ext2fs_has_feature_extents(sb) &&
	    (ext2fs_le32_to_cpu(inode.i_block[0]) & 0xFFFFu) == EXT3_EXT_MAGIC)
		inode.i_flags |= EXT4_EXTENTS_FL;
	*nblocks = EXT2_I_SIZE(&inode) / fs->blocksize;
	if (*nblocks == 0) {
		*why = "s_jnl_blocks backup has size 0";
		return -EUCLEAN;
	}
	for (uint64_t l = 0; l < *nblocks; l++) {
		pblk = 0;
		code = ext2fs_bmap2(fs, ino, &inode, NULL, 0, l, NULL, &pblk);
		if (code || pblk == 0) {
			*why = code ? ext4_strerror(code) : "s_jnl_blocks backup has a hole";
			return code ? ext4_errno(code) : -EUCLEAN;
		}
		if (ext4_map_add(m, l, pblk))
			return -ENOMEM;
	}
	*why = ext4_map_check(m, *nblocks, ext2fs_blocks_count(sb), sb->s_first_data_block);
	return *why ? -EUCLEAN : 0;
}

static int ext4_probe_internal(ext2_filsys fs, const char *path,
			       struct ext4_journal *out, struct jbd_err *err)
{
	struct ext4_map m = { 0 };
	const char *why = NULL, *why_backup = NULL;
	uint64_t nblocks = 0;
	int rc;

	out->kind = EXT4_INTERNAL;
	out->journal_inum = fs->super->s_journal_inum;
	rc = ext4_map_inode(fs, out->journal_inum, &m, &nblocks, &why);
	if (rc == -ENOMEM || rc == -EIO)
		goto fail;
	if (rc) {
		ext4_map_release(&m);
		rc = ext4_map_backup(fs, out->journal_inum, &m, &nblocks, &why_backup);
		if (rc)
			goto fail;
		out->used_backup = true;
	}
	out->map = m.v;
	out->nmap = m.n;
	out->journal_blocks = nblocks;
	out->sb_block = 0;
	return 0;
fail:
	ext4_map_release(&m);
	if (why_backup)
		return jbd_err_set(err, rc, "'%s': journal inode %u is damaged (%s) and so is "
				 "its backup in the superblock (%s)", path,
				 out->journal_inum, why, why_backup);
	return jbd_err_set(err, rc, "'%s': cannot map journal inode %u: %s", path,
			 out->journal_inum, why ? why : strerror(-rc));
}

/* ---- probe ------------------------------------------------------------- */

static int ext4_probe_journal_dev(ext2_filsys fs, struct ext4_journal *out)
{
	out->kind = EXT4_JOURNAL_DEV;
	out->map = malloc(sizeof(*out->map));
	if (!out->map)
		return -ENOMEM;
	out->map[0] = (struct jbd_extent){ .lblk = 0, .pblk = 0, .len = out->fs_blocks };
	out->nmap = 1;
	out->journal_blocks = out->fs_blocks;
	out->sb_block = (uint64_t)ext2fs_journal_sb_start((int)fs->blocksize);
	memcpy(out->journal_uuid, fs->super->s_uuid, 16);
	return 0;
}

static bool ext4_uuid_is_zero(const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return false;
	return true;
}

static int ext4_probe_fs(ext2_filsys fs, const char *path, struct ext4_journal *out,
			 struct jbd_err *err)
{
	struct ext2_super_block *sb = fs->super;

	out->blocksize = fs->blocksize;
	out->fs_blocks = ext2fs_blocks_count(sb);
	out->needs_recovery = ext2fs_has_feature_journal_needs_recovery(sb);
	memcpy(out->fs_uuid, sb->s_uuid, 16);
	if (ext2fs_has_feature_journal_dev(sb))
		return ext4_probe_journal_dev(fs, out) ? jbd_err_set(err, -ENOMEM,
			"'%s': out of memory", path) : 0;
	if (!ext2fs_has_feature_journal(sb)) {
		out->kind = EXT4_NO_JOURNAL;
		return 0;
	}
	memcpy(out->journal_uuid, sb->s_journal_uuid, 16);
	if (sb->s_journal_inum == 0) {
		if (ext4_uuid_is_zero(sb->s_journal_uuid))
			return jbd_err_set(err, -EUCLEAN, "'%s': has_journal set but neither "
					 "a journal inode nor a journal uuid", path);
		out->kind = EXT4_EXTERNAL;
		return 0;
	}
	return ext4_probe_internal(fs, path, out, err);
}

int ext4_probe(const char *path, struct ext4_journal *out, struct jbd_err *err)
{
	ext2_filsys fs;
	bool is_ext;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ext4_peek(path, &is_ext, err);
	if (rc || !is_ext)
		return rc;
	rc = ext4_open_fs(path, 0, &fs, err);
	if (rc)
		return rc;
	rc = ext4_probe_fs(fs, path, out, err);
	ext2fs_close_free(&fs);
	if (rc)
		ext4_journal_release(out);
	return rc;
}

void ext4_journal_release(struct ext4_journal *j)
{
	free(j->map);
	j->map = NULL;
	j->nmap = 0;
}

/* ---- needs_recovery and the error state -------------------------------- */

static int ext4_fsync_path(const char *path, struct jbd_err *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return jbd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fsync(fd) < 0) {
		int e = errno;

		close(fd);
		return jbd_err_set(err, -e, "cannot flush '%s': %s", path, strerror(e));
	}
	close(fd);
	return 0;
}

/* Apply flags to the superblock in memory; true if anything changed. */
static bool ext4_change_super(struct ext2_super_block *sb, unsigned flags)
{
	bool rec = ext2fs_has_feature_journal_needs_recovery(sb);
	uint16_t state = sb->s_state;

	if ((flags & EXT4_SET_RECOVER) && !rec)
		ext2fs_set_feature_journal_needs_recovery(sb);
	if ((flags & EXT4_CLEAR_RECOVER) && rec)
		ext2fs_clear_feature_journal_needs_recovery(sb);
	if (flags & EXT4_SET_ERROR_FS)
		sb->s_state |= EXT2_ERROR_FS;
	return rec != ext2fs_has_feature_journal_needs_recovery(sb) || state != sb->s_state;
}

int ext4_update_super(const char *path, unsigned flags, struct jbd_err *err)
{
	ext2_filsys fs;
	errcode_t code;
	bool is_ext;
	int rc;

	if ((flags & ~EXT4_SUPER_FLAGS) ||
	    (flags & (EXT4_SET_RECOVER | EXT4_CLEAR_RECOVER)) ==
	    (EXT4_SET_RECOVER | EXT4_CLEAR_RECOVER))
		return jbd_err_set(err, -EINVAL, "'%s': bad superblock flags 0x%x", path, flags);
	rc = ext4_peek(path, &is_ext, err);
	if (rc)
		return rc;
	if (!is_ext)
		return jbd_err_set(err, -EINVAL, "'%s': not an ext2/3/4 file system", path);
	/* SUPER_ONLY + MASTER_SB_ONLY: the flush writes the primary superblock
	 * (only the bytes that changed, checksum refreshed) and nothing else. */
	rc = ext4_open_fs(path, EXT2_FLAG_RW | EXT2_FLAG_MASTER_SB_ONLY | EXT2_FLAG_SUPER_ONLY,
			  &fs, err);
	if (rc)
		return rc;
	if (ext2fs_has_feature_journal_dev(fs->super)) {
		ext2fs_free(fs);
		return jbd_err_set(err, -EINVAL, "'%s': is a journal device, not a file system",
				 path);
	}
	if (!ext4_change_super(fs->super, flags)) {
		ext2fs_free(fs); /* nothing to write: do not even flush the sb */
		return ext4_fsync_path(path, err);
	}
	ext2fs_mark_super_dirty(fs);
	code = ext2fs_close_free(&fs);
	if (code)
		return jbd_err_set(err, ext4_errno(code), "cannot write the superblock of '%s': %s",
				 path, ext4_strerror(code));
	return ext4_fsync_path(path, err);
}

int ext4_set_needs_recovery(const char *path, bool on, struct jbd_err *err)
{
	return ext4_update_super(path, on ? EXT4_SET_RECOVER : EXT4_CLEAR_RECOVER, err);
}

/*
 * ujbd ext4 images: where the journal of an ext2/3/4 file system lives.
 *
 * The journal layer knows only "a device, a map from journal block numbers
 * to device blocks, and a data device" (struct jbd_loc in format.h). This
 * module builds that map for ext4 with libext2fs and flips the ext4 bits
 * the journal cares about: INCOMPAT_RECOVER (needs_recovery), and the
 * EXT2_ERROR_FS state a journal abort ends in. It never parses jbd2
 * structures and never prints.
 *
 * Kinds of path, as ext4_probe() sees them:
 *   EXT4_NOT_EXT4     no ext2/3/4 superblock magic (0xEF53 at byte 1080), or
 *                     a file whose byte 0 starts a jbd2 superblock (a
 *                     standalone journal whose log happens to hold a copy of
 *                     an ext4 superblock); not an error.
 *   EXT4_INTERNAL     a file system with an internal journal: map = extents
 *                     of inode s_journal_inum (normally 8).
 *   EXT4_JOURNAL_DEV  an external journal device (mke2fs -O journal_dev):
 *                     identity map over the device, jbd2 superblock at
 *                     journal block sb_block = ext2fs_journal_sb_start().
 *   EXT4_NO_JOURNAL   a file system without has_journal.
 *   EXT4_EXTERNAL     a file system whose journal is on an external device
 *                     (has_journal, s_journal_inum 0, s_journal_uuid set):
 *                     map empty; journal_uuid names the device to pass with
 *                     --journal=PATH.
 *
 * Thread safety: the functions share no state; do not run two of them on
 * the same path at the same time if one of them writes.
 */
#ifndef UJBD_EXT4_H
#define UJBD_EXT4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/format.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ext4_kind {
	EXT4_NOT_EXT4 = 0,
	EXT4_INTERNAL = 1,
	EXT4_JOURNAL_DEV = 2,
	EXT4_NO_JOURNAL = 3,
	EXT4_EXTERNAL = 4, /* addition to the contract: fs with an external journal */
};

struct ext4_journal {
	enum ext4_kind kind;
	uint32_t blocksize;          /* fs block size = journal block size */
	uint64_t fs_blocks;          /* blocks count of the fs (or the journal device) */
	struct jbd_extent *map;      /* malloc'd: journal lblk -> device block; internal: the
					extents of inode s_journal_inum, sorted, coalesced,
					covering [0, journal_blocks) without holes; journal
					dev: identity, one extent; NULL otherwise */
	size_t nmap;
	uint64_t journal_blocks;     /* internal: i_size / blocksize; journal dev: device blocks */
	uint64_t sb_block;           /* journal block of the jbd2 sb: 0 internal,
					ext2fs_journal_sb_start(blocksize) on a journal device */
	bool needs_recovery;         /* ext4 INCOMPAT_RECOVER */
	uint32_t journal_inum;       /* s_journal_inum (internal) */
	uint8_t fs_uuid[16], journal_uuid[16]; /* journal_uuid: s_journal_uuid of a fs
					(zero for internal), the device's own uuid
					(s_uuid) for EXT4_JOURNAL_DEV */
	bool used_backup;            /* internal: inode damaged, map from s_jnl_blocks */
};

/*
 * Look at path (read only). Sets out->kind = EXT4_NOT_EXT4 and returns 0 if
 * it holds no ext2/3/4 superblock; otherwise fills *out. Returns 0 or a
 * negative errno with err->msg naming the problem:
 *   -ENOENT/-EACCES/...  cannot open or read the file (the system errno),
 *   -EIO                 a short read or an I/O error,
 *   -EUCLEAN             a damaged superblock, a damaged journal inode
 *                        whose s_jnl_blocks backup is missing or bad too,
 *                        or a truncated image: the file or device is
 *                        shorter than s_blocks_count blocks (err->msg
 *                        starts "truncated image:" and says where it ends),
 *   -EOPNOTSUPP          features libext2fs cannot open,
 *   -ENOMEM.
 * On success with kind EXT4_INTERNAL or EXT4_JOURNAL_DEV, release with
 * ext4_journal_release(). err may be NULL.
 */
int ext4_probe(const char *path, struct ext4_journal *out, struct jbd_err *err);

/* Free out->map (safe on a zeroed or released struct). */
void ext4_journal_release(struct ext4_journal *j);

/*
 * Set or clear INCOMPAT_RECOVER in the primary superblock only (backups are
 * left alone, as e2fsck does), with the superblock checksum updated when
 * the fs has metadata_csum, then fsync'd. Nothing else of the image is
 * written. -EINVAL on a journal device or a path that is not ext2/3/4;
 * other errors as ext4_probe(). Setting a flag that is already set (or
 * clearing a clear one) writes nothing, but still fsyncs the file so that
 * the flag on disk is known durable when this returns 0.
 */
int ext4_set_needs_recovery(const char *path, bool on, struct jbd_err *err);

/*
 * Change the primary superblock only, in one write (as ext4_set_needs_recovery
 * does, and with the same errors). flags:
 *   EXT4_SET_RECOVER / EXT4_CLEAR_RECOVER   set / clear INCOMPAT_RECOVER
 *                                           (not both: -EINVAL);
 *   EXT4_SET_ERROR_FS                       s_state |= EXT2_ERROR_FS ("clean
 *                                           with errors"), so the next e2fsck
 *                                           is a full check: where e2fsck and
 *                                           the kernel move a journal's
 *                                           s_errno before clearing it.
 * Recovery passes EXT4_CLEAR_RECOVER | EXT4_SET_ERROR_FS when the journal
 * recorded an abort, so the flag never goes without the error. Nothing to
 * change writes nothing but still fsyncs.
 */
#define EXT4_SET_RECOVER    0x1u
#define EXT4_CLEAR_RECOVER  0x2u
#define EXT4_SET_ERROR_FS   0x4u
#define EXT4_SUPER_FLAGS    0x7u
int ext4_update_super(const char *path, unsigned flags, struct jbd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_EXT4_H */

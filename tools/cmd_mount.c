/*
 * ujbd mount [-f] [-o OPTS] IMAGE DIR
 *
 * An ext4 image mounted through FUSE (libfuse3, its high-level API), the
 * file system run by libext2fs, its metadata journaled by libujbd in the
 * image's own internal journal: the one the kernel and e2fsck replay.
 *
 * The one idea: every FUSE operation that changes the file system runs
 * under one lock (libext2fs is not thread-safe) inside one ujbd handle.
 * libext2fs reads and writes the image through our io_manager (mount_io.c),
 * which turns its writes into write access + dirty of that handle; what
 * libext2fs keeps in memory only (block and inode bitmaps, group
 * descriptors, the superblock) is compared with what was last journaled
 * and the blocks that changed join the handle before it stops. File data
 * goes to ujbd_write_data (ordered: home before the commit that makes it
 * reachable). fsync, fdatasync and fsyncdir commit the last transaction
 * that changed the file and wait, outside the lock, so FUSE's threads
 * share commits (group commit). Unmount stops the loop, then ujbd_close
 * checkpoints, marks the journal empty and clears needs_recovery.
 *
 * Exit status: 0 mounted (the daemon runs on), 1 refused (nothing
 * written), 2 usage, 3 I/O error. Documented in docs/mount.md and ujbd(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifndef UJBD_HAVE_FUSE3

static const char *no_fuse =
	"built without libfuse3: install libfuse3-dev (scripts/install-deps does) and rebuild";

int cmd_mount(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: ujbd mount [-f] [-o ro] IMAGE DIR\n(%s)\n", no_fuse);
		return EXIT_OK;
	}
	cli_err(argv[0], "%s", no_fuse);
	return EXIT_INVALID;
}

#else /* UJBD_HAVE_FUSE3 */

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext3_extents.h>

#include "priv/rt.h"
#include "ujbd/ext4.h"
#include "mount.h"
#include "target/target.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define TID_SLOTS 4096
/* Fewer allocatable blocks than this (free but for the busy ones) and an
 * operation first waits for the commits that free the busy ones. */
#define BUSY_LOW_WATER 256

#define OPEN_SLOTS 1024
/* The path cache: slots, and entries before it starts afresh. */
#define PATH_SLOTS 4096
#define PATH_MAX_ENTRIES 65536

/* A path the kernel named and the inode it led to: every operation names
 * its file by its whole path, and walking it from the root reads (and
 * checksums) each directory on the way. */
struct pentry {
	struct pentry *next;
	uint64_t hash;
	ext2_ino_t ino;
	char path[];
};

/* An inode with open files or directories: how many, and whether its last
 * name is gone (it is on the orphan list, freed at its last release). */
struct opened {
	ext2_ino_t ino;
	unsigned n;
	bool orphan;
	struct opened *next;
};

/* A name libfuse gave an open file it was told to unlink (.fuse_hiddenN,
 * unlinked in turn at the last release): only here, never on disk. */
struct hidden {
	ext2_ino_t dir, ino;
	char name[32];
	struct hidden *next;
};

/* Blocks a transaction not yet committed freed: [blk, blk + n) by tid. */
struct busy {
	blk64_t blk;
	blk_t n;
	ujbd_tid_t tid;
};

static struct mnt {
	ext2_filsys fs;
	struct ujbd *j;
	rt_mutex lock;             /* around libext2fs: every operation */
	bool ro;
	uint32_t bs;
	dgrp_t groups;
	size_t bb_bytes, ib_bytes;
	/* What the journal last got of what libext2fs keeps in memory. */
	unsigned char *bb_shadow, *ib_shadow, *gd_shadow;
	unsigned char *bb_init, *ib_init; /* the group's bitmap is on disk */
	/* Groups whose bitmaps may have changed since the last handle: set by
	 * libext2fs's block allocation callbacks and by our inode (de)allocs,
	 * so that an operation compares only those. */
	unsigned char *bb_dirty, *ib_dirty;
	struct ext2_super_block sb_shadow;
	unsigned char *tmp, *blk;  /* scratch: a bitmap's bytes, a block */
	/* The last transaction that changed an inode, for fsync. */
	struct { ext2_ino_t ino; ujbd_tid_t tid; } tids[TID_SLOTS];
	ujbd_tid_t last_tid;
	bool any_tid;
	/* Busy blocks (ext4's free-after-commit): freed by a transaction not
	 * yet committed. libext2fs clears them in its block map; our
	 * callbacks set them again there (no allocator hands them out: a
	 * crash before that commit would leave the freeing file holding the
	 * new owner's bytes) and in busy, whose bits sync_bitmaps clears in
	 * what it journals (the freeing transaction records the free, the
	 * counts in the descriptors and the superblock too). Queued in the
	 * order freed (tids never go down: operations run one at a time),
	 * released once ujbd_committed_tid has passed their tid. */
	ext2fs_block_bitmap busy;
	struct busy *bq;
	size_t bq_head, bq_n, bq_cap;
	blk64_t busy_count;        /* bits set in busy */
	unsigned char *tmp2;       /* scratch: a group's busy bits */
	unsigned char *dblk;       /* scratch: a partial block of file data */
	struct opened *open_tab[OPEN_SLOTS];
	struct hidden *hidden;
	/* libfuse's configuration, whose attr_timeout names_seen sets to 0
	 * once a file with two names is seen (op_init). */
	struct fuse_config *cfg;
	bool attrs_cached;
	/* Paths resolved since the last change of a name (lookup). */
	struct pentry *paths[PATH_SLOTS];
	size_t npaths;
} M;

/* ---- errors ------------------------------------------------------------ */

/* A libext2fs errcode as a negative errno. */
static int e2err(errcode_t e)
{
	if (!e)
		return 0;
	if (e > 0 && e < 4096)
		return -(int)e;
	switch (e) {
	case EXT2_ET_FILE_NOT_FOUND: return -ENOENT;
	case EXT2_ET_NO_DIRECTORY: return -ENOTDIR;
	case EXT2_ET_DIR_NO_SPACE:
	case EXT2_ET_BLOCK_ALLOC_FAIL:
	case EXT2_ET_INODE_ALLOC_FAIL:
	case EXT2_ET_EA_NO_SPACE:
	case EXT2_ET_INLINE_DATA_NO_SPACE: return -ENOSPC;
	case EXT2_ET_NO_MEMORY: return -ENOMEM;
	case EXT2_ET_RO_FILSYS: return -EROFS;
	case EXT2_ET_FILE_EXISTS:
	case EXT2_ET_DIR_EXISTS: return -EEXIST;
	case EXT2_ET_FILE_TOO_BIG: return -EFBIG;
	case EXT2_ET_TOO_MANY_REFS: return -EMLINK;
	case EXT2_ET_EA_KEY_NOT_FOUND: return -ENODATA;
	case EXT2_ET_EA_BAD_NAME_LEN: return -ERANGE;
	case EXT2_ET_EA_BAD_VALUE_SIZE: return -E2BIG;
	case EXT2_ET_UNSUPP_FEATURE:
	case EXT2_ET_RO_UNSUPP_FEATURE: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

/* ---- what libext2fs keeps in memory, into the handle ------------------- */

static blk64_t group_first_block(dgrp_t g)
{
	return M.fs->super->s_first_data_block + (blk64_t)g * EXT2_BLOCKS_PER_GROUP(M.fs->super);
}

/* A bitmap block: the group's bits, the rest of the block set (what the
 * kernel writes past the group's last bit), then its checksum. */
static errcode_t put_bitmap(dgrp_t g, bool inode)
{
	ext2_filsys fs = M.fs;
	size_t n = inode ? M.ib_bytes : M.bb_bytes;
	blk64_t loc = inode ? ext2fs_inode_bitmap_loc(fs, g) : ext2fs_block_bitmap_loc(fs, g);
	errcode_t e;

	memset(M.blk, 0xff, M.bs);
	memcpy(M.blk, M.tmp, n);
	if (!inode && g == M.groups - 1) {
		blk64_t left = (ext2fs_blocks_count(fs->super) - fs->super->s_first_data_block) %
			       EXT2_BLOCKS_PER_GROUP(fs->super);
		for (blk64_t b = left; left && b < (blk64_t)M.bs * 8; b++)
			M.blk[b / 8] |= (unsigned char)(1u << (b % 8));
	}
	e = inode ? ext2fs_inode_bitmap_csum_set(fs, g, (char *)M.blk, (int)n)
		  : ext2fs_block_bitmap_csum_set(fs, g, (char *)M.blk, (int)n);
	if (e)
		return e;
	ext2fs_group_desc_csum_set(fs, g);
	return io_channel_write_blk64(fs->io, loc, 1, M.blk);
}

static void block_dirty(blk64_t blk, blk_t n)
{
	blk64_t first = M.fs->super->s_first_data_block, bpg = EXT2_BLOCKS_PER_GROUP(M.fs->super);

	if (!n || blk < first)
		return;
	for (blk64_t g = (blk - first) / bpg; g <= (blk + n - 1 - first) / bpg && g < M.groups; g++)
		M.bb_dirty[g] = 1;
}

static void ino_dirty(ext2_ino_t ino)
{
	if (ino)
		M.ib_dirty[(ino - 1) / M.fs->super->s_inodes_per_group] = 1;
}

/* ---- busy blocks: freed, not reusable before the free commits ----------- */

/* [blk, blk + n) was freed by the calling thread's transaction. */
static void busy_add(blk64_t blk, blk_t n)
{
	struct ujbd_handle *h = mount_io_handle();
	ujbd_tid_t tid = h ? ujbd_handle_tid(h) : ujbd_running_tid(M.j);
	struct busy *t = M.bq_n > M.bq_head ? &M.bq[M.bq_n - 1] : NULL;

	ext2fs_mark_block_bitmap_range2(M.fs->block_map, blk, n);
	ext2fs_mark_block_bitmap_range2(M.busy, blk, n);
	M.busy_count += n;
	if (t && t->tid == tid && t->blk + t->n == blk && t->n + n > t->n) {
		t->n += n;
		return;
	}
	if (M.bq_n == M.bq_cap && M.bq_head) {
		memmove(M.bq, M.bq + M.bq_head, (M.bq_n - M.bq_head) * sizeof(*M.bq));
		M.bq_n -= M.bq_head;
		M.bq_head = 0;
	}
	if (M.bq_n == M.bq_cap) {
		size_t cap = M.bq_cap ? M.bq_cap * 2 : 256;
		struct busy *q = realloc(M.bq, cap * sizeof(*q));
		/* No memory: the blocks stay busy until the next mount (they
		 * are free on disk): lost space, never a reuse too early. */
		if (!q)
			return;
		M.bq = q;
		M.bq_cap = cap;
	}
	M.bq[M.bq_n++] = (struct busy){ blk, n, tid };
}

/* [blk, blk + n) was allocated: any of it busy is no longer (no allocator
 * picks a busy block; a caller naming one itself would). */
static void busy_drop(blk64_t blk, blk_t n)
{
	for (blk64_t b = blk; M.busy_count && b < blk + n; b++) {
		if (ext2fs_test_block_bitmap2(M.busy, b)) {
			ext2fs_unmark_block_bitmap2(M.busy, b);
			M.busy_count--;
		}
	}
}

/* Release the busy blocks whose freeing transaction has committed. */
static void busy_release(void)
{
	ujbd_tid_t done;

	if (M.bq_head == M.bq_n)
		return;
	done = ujbd_committed_tid(M.j);
	while (M.bq_head < M.bq_n && ujbd_tid_geq(done, M.bq[M.bq_head].tid)) {
		struct busy *q = &M.bq[M.bq_head++];

		for (blk64_t b = q->blk; b < q->blk + q->n; b++) {
			if (ext2fs_test_block_bitmap2(M.busy, b)) {
				ext2fs_unmark_block_bitmap2(M.busy, b);
				ext2fs_unmark_block_bitmap2(M.fs->block_map, b);
				M.busy_count--;
			}
		}
	}
	if (M.bq_head == M.bq_n)
		M.bq_head = M.bq_n = 0;
}

/* Few blocks left but busy ones? */
static bool busy_low(void)
{
	return M.busy_count &&
	       ext2fs_free_blocks_count(M.fs->super) < M.busy_count + BUSY_LOW_WATER;
}

/* Commit the transactions that freed the busy blocks, wait, release them:
 * for an allocation that found no other free block. The lock is held, and
 * no handle (its transaction could not commit). */
static int busy_drain(void)
{
	ujbd_tid_t tid;
	int rc;

	if (M.bq_head == M.bq_n)
		return 0;
	tid = M.bq[M.bq_n - 1].tid;
	rc = ujbd_commit_tid(M.j, tid);
	if (!rc)
		rc = ujbd_wait_tid(M.j, tid);
	if (rc)
		return rc == -EROFS ? -EROFS : -EIO;
	busy_release();
	return 0;
}

/* libext2fs's block accounting, after it changed its block map. */
static void cb_block(ext2_filsys fs, blk64_t blk, int inuse)
{
	block_dirty(blk, 1);
	if (inuse < 0) {
		mount_io_freed(blk, 1); /* an error fails the operation (mount_io_error) */
		busy_add(blk, 1);
	}
	else if (inuse > 0)
		busy_drop(blk, 1);
}

static void cb_range(ext2_filsys fs, blk64_t blk, blk_t num, int inuse)
{
	/* libext2fs before 1.47.1 passes the end of the range and 0 (its
	 * fallocate allocates so): which groups changed is unknown, each is
	 * compared. Its callers there only allocate (nothing to revoke, no
	 * busy block: no allocator takes one). */
	if (num == 0) {
		memset(M.bb_dirty, 1, M.groups);
		return;
	}
	block_dirty(blk, num);
	if (inuse < 0) {
		mount_io_freed(blk, num);
		busy_add(blk, num);
	}
	else if (inuse > 0)
		busy_drop(blk, num);
}

static errcode_t sync_bitmaps(void)
{
	ext2_filsys fs = M.fs;
	errcode_t e;

	for (dgrp_t g = 0; g < M.groups; g++) {
		unsigned char *sh;

		if (M.bb_dirty[g] && !ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT)) {
			M.bb_dirty[g] = 0;
			sh = M.bb_shadow + (size_t)g * M.bb_bytes;
			e = ext2fs_get_block_bitmap_range2(fs->block_map, group_first_block(g),
							   M.bb_bytes * 8, M.tmp);
			if (!e && M.busy_count) /* the journal gets busy blocks free */
				e = ext2fs_get_block_bitmap_range2(M.busy, group_first_block(g),
								   M.bb_bytes * 8, M.tmp2);
			if (e)
				return e;
			for (size_t k = 0; M.busy_count && k < M.bb_bytes; k++)
				M.tmp[k] &= (unsigned char)~M.tmp2[k];
			if (!M.bb_init[g] || memcmp(sh, M.tmp, M.bb_bytes)) {
				if ((e = put_bitmap(g, false)))
					return e;
				memcpy(sh, M.tmp, M.bb_bytes);
				M.bb_init[g] = 1;
			}
		}
		if (M.ib_dirty[g] && !ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT)) {
			M.ib_dirty[g] = 0;
			sh = M.ib_shadow + (size_t)g * M.ib_bytes;
			e = ext2fs_get_inode_bitmap_range2(fs->inode_map,
							   (ext2_ino_t)g * fs->super->s_inodes_per_group + 1,
							   (unsigned)M.ib_bytes * 8, M.tmp);
			if (e)
				return e;
			if (!M.ib_init[g] || memcmp(sh, M.tmp, M.ib_bytes)) {
				if ((e = put_bitmap(g, true)))
					return e;
				memcpy(sh, M.tmp, M.ib_bytes);
				M.ib_init[g] = 1;
			}
		}
	}
	return 0;
}

static errcode_t sync_descs(void)
{
	ext2_filsys fs = M.fs;
	size_t dsz = EXT2_DESC_SIZE(fs->super), per = M.bs / dsz;
	errcode_t e;

	for (unsigned long i = 0; i < fs->desc_blocks; i++) {
		unsigned char *mem = (unsigned char *)fs->group_desc + i * M.bs;
		unsigned char *sh = M.gd_shadow + i * M.bs;

		if (!memcmp(mem, sh, M.bs))
			continue;
		for (dgrp_t g = (dgrp_t)(i * per); g < M.groups && g < (i + 1) * per; g++)
			ext2fs_group_desc_csum_set(fs, g);
		e = io_channel_write_blk64(fs->io,
					   ext2fs_descriptor_block_loc2(fs, fs->super->s_first_data_block, i),
					   1, mem);
		if (e)
			return e;
		memcpy(sh, mem, M.bs);
	}
	return 0;
}

/* The superblock, with needs_recovery set: the journal holds transactions
 * for as long as we run (ujbd_close clears it once the log is empty). */
static errcode_t sync_super(void)
{
	ext2_filsys fs = M.fs;
	errcode_t e;

	ext2fs_set_feature_journal_needs_recovery(fs->super);
	if (!memcmp(&M.sb_shadow, fs->super, SUPERBLOCK_SIZE))
		return 0;
	ext2fs_superblock_csum_set(fs, fs->super);
	e = io_channel_write_byte(fs->io, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE, fs->super);
	if (!e)
		memcpy(&M.sb_shadow, fs->super, SUPERBLOCK_SIZE);
	return e;
}

static errcode_t sync_meta(void)
{
	errcode_t e = sync_bitmaps();

	if (!e)
		e = sync_descs();
	if (!e)
		e = sync_super();
	return e;
}

/* ---- one operation, one handle ----------------------------------------- */

static void tid_note(ext2_ino_t ino, ujbd_tid_t tid)
{
	if (!ino)
		return;
	M.tids[ino % TID_SLOTS].ino = ino;
	M.tids[ino % TID_SLOTS].tid = tid;
}

/* A handle for the calling thread, which holds the lock; busy blocks
 * whose free has committed are released first, and when the rest of the
 * free space runs low, the busy ones are waited for. */
static int op_start(void)
{
	struct ujbd_handle *h;
	int rc;

	busy_release();
	if (busy_low() && (rc = busy_drain()))
		return rc;
	rc = ujbd_start(M.j, MOUNT_CREDITS, &h);
	if (rc)
		return rc == -EROFS ? -EROFS : -EIO;
	mount_io_set_handle(h);
	return 0;
}

/* Lock, then a handle for the calling thread. */
static int op_begin(void)
{
	int rc;

	rt_mutex_lock(&M.lock);
	rc = op_start();
	if (rc)
		rt_mutex_unlock(&M.lock);
	return rc;
}

/* The metadata libext2fs keeps in memory joins the handle, which stops;
 * the inodes it changed remember its transaction. Returns rc, or the
 * journal's error when rc is 0. */
static int op_end(int rc, ext2_ino_t a, ext2_ino_t b, ext2_ino_t c, ext2_ino_t d)
{
	struct ujbd_handle *h = mount_io_handle();
	errcode_t e;
	int ioerr, src;
	ujbd_tid_t tid;

	if (!h) { /* op_cycle stopped it and could not start another */
		rt_mutex_unlock(&M.lock);
		return rc ? rc : -EIO;
	}
	e = sync_meta();
	ioerr = mount_io_error();
	tid = ujbd_handle_tid(h);
	src = ujbd_stop(h);

	mount_io_set_handle(NULL);
	tid_note(a, tid);
	tid_note(b, tid);
	tid_note(c, tid);
	tid_note(d, tid);
	M.last_tid = tid;
	M.any_tid = true;
	rt_mutex_unlock(&M.lock);
	if (!rc && e)
		rc = e2err(e);
	if (!rc && (ioerr || src))
		rc = (ioerr ? ioerr : src) == -EROFS ? -EROFS : -EIO;
	return rc;
}

/* A long operation (a large write) hands its handle over to a new one;
 * with drain, after the commits that free the busy blocks (an allocation
 * found no other free block). */
static int op_cycle(bool drain)
{
	struct ujbd_handle *h = mount_io_handle();
	errcode_t e = sync_meta();
	ujbd_tid_t tid = ujbd_handle_tid(h);
	int rc = ujbd_stop(h);

	mount_io_set_handle(NULL);
	M.last_tid = tid;
	M.any_tid = true;
	if (e)
		return e2err(e);
	if (rc)
		return -EIO;
	if (drain && (rc = busy_drain()))
		return rc;
	return op_start();
}

static void rd_begin(void)
{
	rt_mutex_lock(&M.lock);
}

static void rd_end(void)
{
	rt_mutex_unlock(&M.lock);
}

/* ---- inodes ------------------------------------------------------------ */

static int iget(ext2_ino_t ino, struct ext2_inode_large *in)
{
	memset(in, 0, sizeof(*in));
	return e2err(ext2fs_read_inode_full(M.fs, ino, (struct ext2_inode *)in, sizeof(*in)));
}

static int iput(ext2_ino_t ino, struct ext2_inode_large *in)
{
	return e2err(ext2fs_write_inode_full(M.fs, ino, (struct ext2_inode *)in, sizeof(*in)));
}

#define HAS_EXTRA(in, f)                                                                   \
	((in)->i_extra_isize >= offsetof(struct ext2_inode_large, f) + sizeof((in)->f) -    \
				       EXT2_GOOD_OLD_INODE_SIZE)
#define T_SET(in, f, ts)                                                                   \
	do {                                                                               \
		(in)->i_##f = (__u32)(ts).tv_sec;                                          \
		if (EXT2_INODE_SIZE(M.fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&             \
		    HAS_EXTRA(in, i_##f##_extra))                                          \
			(in)->i_##f##_extra = t_extra(ts);                                 \
	} while (0)
#define T_GET(in, f, ts)                                                                   \
	do {                                                                               \
		(ts).tv_sec = (int32_t)(in)->i_##f;                                        \
		(ts).tv_nsec = 0;                                                          \
		if (EXT2_INODE_SIZE(M.fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&             \
		    HAS_EXTRA(in, i_##f##_extra)) {                                        \
			(ts).tv_sec += (int64_t)((in)->i_##f##_extra & 3) << 32;            \
			(ts).tv_nsec = (in)->i_##f##_extra >> 2;                           \
		}                                                                          \
	} while (0)

/* The extra word of a timestamp: nanoseconds, and the epoch bits that
 * carry seconds past 2038. */
static __u32 t_extra(struct timespec ts)
{
	int64_t s = ts.tv_sec;
	return ((__u32)ts.tv_nsec << 2) | (__u32)(((s - (int32_t)s) >> 32) & 3);
}

static struct timespec now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts); /* a file's times are wall-clock times */
	return ts;
}

static void to_stat(ext2_ino_t ino, struct ext2_inode_large *in, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = in->i_mode;
	st->st_nlink = in->i_links_count;
	st->st_uid = inode_uid(*in);
	st->st_gid = inode_gid(*in);
	st->st_size = (off_t)EXT2_I_SIZE(in);
	st->st_blksize = M.bs;
	st->st_blocks = (blkcnt_t)ext2fs_get_stat_i_blocks(M.fs, (struct ext2_inode *)in);
	T_GET(in, atime, st->st_atim);
	T_GET(in, mtime, st->st_mtim);
	T_GET(in, ctime, st->st_ctim);
	if (LINUX_S_ISCHR(in->i_mode) || LINUX_S_ISBLK(in->i_mode)) {
		__u32 o = in->i_block[0], n = in->i_block[1];
		if (o)
			st->st_rdev = makedev((o >> 8) & 0xff, o & 0xff);
		else
			st->st_rdev = makedev((n & 0xfff00) >> 8, (n & 0xff) | ((n >> 12) & 0xfff00));
	}
}

static int ftype(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EXT2_FT_REG_FILE;
	case S_IFDIR: return EXT2_FT_DIR;
	case S_IFLNK: return EXT2_FT_SYMLINK;
	case S_IFCHR: return EXT2_FT_CHRDEV;
	case S_IFBLK: return EXT2_FT_BLKDEV;
	case S_IFIFO: return EXT2_FT_FIFO;
	case S_IFSOCK: return EXT2_FT_SOCK;
	}
	return EXT2_FT_UNKNOWN;
}

/* ---- paths ------------------------------------------------------------- */

static int split(const char *path, char *buf, size_t len, ext2_ino_t *parent, const char **name);

/* ---- open files, libfuse's hidden names, the orphan list ---------------- */

static struct opened *opened_find(ext2_ino_t ino)
{
	struct opened *o = M.open_tab[ino % OPEN_SLOTS];

	while (o && o->ino != ino)
		o = o->next;
	return o;
}

/* One more open file of ino; false when out of memory. */
static bool opened_add(ext2_ino_t ino)
{
	struct opened *o = opened_find(ino);

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return false;
		o->ino = ino;
		o->next = M.open_tab[ino % OPEN_SLOTS];
		M.open_tab[ino % OPEN_SLOTS] = o;
	}
	o->n++;
	return true;
}

static void opened_remove(struct opened *o)
{
	struct opened **pp = &M.open_tab[o->ino % OPEN_SLOTS];

	while (*pp != o)
		pp = &(*pp)->next;
	*pp = o->next;
	free(o);
}

/* libfuse's name for an unlinked open file: ".fuse_hidden" and 16 hex
 * digits (its node id, a counter). */
static bool hidden_name(const char *name)
{
	if (strncmp(name, ".fuse_hidden", 12) || strlen(name) != 28)
		return false;
	for (int i = 12; i < 28; i++)
		if (!strchr("0123456789abcdef", name[i]))
			return false;
	return true;
}

static struct hidden *hidden_find(ext2_ino_t dir, const char *name)
{
	struct hidden *h = M.hidden;

	while (h && (h->dir != dir || strcmp(h->name, name)))
		h = h->next;
	return h;
}

/* The hidden name path stands for, if any. */
static struct hidden *hidden_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir;

	if (!M.hidden || !base || !hidden_name(base + 1) ||
	    split(path, buf, sizeof(buf), &dir, &name))
		return NULL;
	return hidden_find(dir, name);
}

static void hidden_drop(struct hidden *h)
{
	struct hidden **pp = &M.hidden;

	while (*pp != h)
		pp = &(*pp)->next;
	*pp = h->next;
	free(h);
}

/* Every hidden name of ino goes (it is freed). */
static void hidden_forget(ext2_ino_t ino)
{
	for (struct hidden **pp = &M.hidden; *pp;) {
		struct hidden *h = *pp;
		if (h->ino == ino) {
			*pp = h->next;
			free(h);
		} else {
			pp = &h->next;
		}
	}
}

/* ---- the path cache -----------------------------------------------------
 *
 * A path names the same inode until a name on it goes or is pointed
 * elsewhere, which only unlink, rmdir and rename do (under M.lock, as every
 * lookup is). unlink and rmdir forget their own path: a file has no path
 * below it, and a directory rmdir removes is empty, every name once below
 * it forgotten as it went. rename forgets everything, after the change (a
 * renamed directory moves every path below it). New names (create, mkdir,
 * link, symlink, mknod) make no cached path wrong: only found names are
 * kept. */

static uint64_t path_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static struct pentry **path_slot(const char *s, size_t n, uint64_t h)
{
	struct pentry **pp = &M.paths[h % PATH_SLOTS];

	while (*pp && ((*pp)->hash != h || strncmp((*pp)->path, s, n) || (*pp)->path[n]))
		pp = &(*pp)->next;
	return pp;
}

static void paths_forget_all(void)
{
	for (size_t i = 0; i < PATH_SLOTS; i++) {
		while (M.paths[i]) {
			struct pentry *e = M.paths[i];

			M.paths[i] = e->next;
			free(e);
		}
	}
	M.npaths = 0;
}

static void path_forget(const char *path)
{
	size_t n = strlen(path);
	uint64_t h = path_hash(path, n);
	struct pentry **pp = path_slot(path, n, h), *e = *pp;

	if (e) {
		*pp = e->next;
		free(e);
		M.npaths--;
	}
}

static void path_keep(const char *s, size_t n, uint64_t h, ext2_ino_t ino)
{
	struct pentry *e;

	if (M.npaths >= PATH_MAX_ENTRIES)
		paths_forget_all();
	e = malloc(sizeof(*e) + n + 1);
	if (!e)
		return; /* a cache: the next lookup walks again */
	e->hash = h;
	e->ino = ino;
	memcpy(e->path, s, n);
	e->path[n] = 0;
	e->next = M.paths[h % PATH_SLOTS];
	M.paths[h % PATH_SLOTS] = e;
	M.npaths++;
}

/* The inode the first n bytes of path (absolute, no trailing slash) name:
 * the cache, or its parent's inode and one directory search. */
static int resolve(const char *s, size_t n, ext2_ino_t *ino)
{
	uint64_t h;
	struct pentry *e;
	size_t k;
	int rc;

	if (n == 0 || (n == 1 && s[0] == '/')) {
		*ino = EXT2_ROOT_INO;
		return 0;
	}
	h = path_hash(s, n);
	e = *path_slot(s, n, h);
	if (e) {
		*ino = e->ino;
		return 0;
	}
	k = n;
	while (k && s[k - 1] != '/')
		k--;
	if (!k)
		return -ENOENT; /* not absolute */
	if (n - k > EXT2_NAME_LEN)
		return -ENAMETOOLONG;
	if (n == k)
		return -ENOENT; /* an empty name: "//" or a trailing '/' */
	rc = resolve(s, k - 1, ino);
	if (rc)
		return rc;
	rc = e2err(ext2fs_lookup(M.fs, *ino, s + k, (int)(n - k), NULL, ino));
	if (!rc)
		path_keep(s, n, h, *ino);
	return rc;
}

static int lookup(const char *path, ext2_ino_t *ino)
{
	struct hidden *h = hidden_path(path);

	if (!path)
		return -ENOENT;
	if (h) {
		*ino = h->ino;
		return 0;
	}
	return resolve(path, strlen(path), ino);
}

/* path's parent directory and last name (in buf). */
static int split(const char *path, char *buf, size_t len, ext2_ino_t *parent, const char **name)
{
	char *slash;
	int rc;

	if (strlen(path) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	slash = strrchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*name = slash + 1;
	if (strlen(*name) > EXT2_NAME_LEN)
		return -ENAMETOOLONG;
	if (slash == buf) {
		*parent = EXT2_ROOT_INO;
		return 0;
	}
	*slash = 0;
	rc = lookup(buf, parent);
	return rc;
}

static int child(ext2_ino_t dir, const char *name, ext2_ino_t *ino)
{
	return e2err(ext2fs_lookup(M.fs, dir, name, (int)strlen(name), NULL, ino));
}

static ext2_ino_t fh_ino(const char *path, struct fuse_file_info *fi, int *rc)
{
	ext2_ino_t ino = 0;

	*rc = 0;
	if (fi && fi->fh)
		return (ext2_ino_t)fi->fh;
	*rc = lookup(path, &ino);
	return ino;
}

/* Link name -> ino in dir, growing the directory when it is full. */
static int link_name(ext2_ino_t dir, const char *name, ext2_ino_t ino, int type)
{
	errcode_t e = ext2fs_link(M.fs, dir, name, ino, type);

	if (e == EXT2_ET_DIR_NO_SPACE) {
		e = ext2fs_expand_dir(M.fs, dir);
		if (!e)
			e = ext2fs_link(M.fs, dir, name, ino, type);
	}
	return e2err(e);
}

/* Make sure dir has room for one more name, before a libext2fs call that
 * allocates first and links last (mkdir, symlink): link a placeholder and
 * take it away again, in the same handle. */
static int make_room(ext2_ino_t dir, const char *name)
{
	int rc = link_name(dir, name, dir, EXT2_FT_DIR);

	if (!rc)
		rc = e2err(ext2fs_unlink(M.fs, dir, name, dir, 0));
	return rc;
}

static int touch_dir(ext2_ino_t dir, int dlinks)
{
	struct ext2_inode_large in;
	struct timespec t = now();
	int rc = iget(dir, &in);

	if (rc)
		return rc;
	if (dlinks > 0 && in.i_links_count < EXT2_LINK_MAX && in.i_links_count != 1)
		in.i_links_count++;
	if (dlinks < 0 && in.i_links_count > 2)
		in.i_links_count--;
	T_SET(&in, mtime, t);
	T_SET(&in, ctime, t);
	return iput(dir, &in);
}

/* Free an inode whose last name went: its blocks, its xattr block, the
 * inode itself (dtime set, as the kernel leaves it). */
static int free_inode(ext2_ino_t ino)
{
	struct ext2_inode_large in;
	errcode_t e;
	int rc = iget(ino, &in);

	if (rc)
		return rc;
	if (ext2fs_inode_has_valid_blocks2(M.fs, (struct ext2_inode *)&in)) {
		e = ext2fs_punch(M.fs, ino, (struct ext2_inode *)&in, NULL, 0, ~0ULL);
		if (e)
			return e2err(e);
	}
	if (ext2fs_file_acl_block(M.fs, (struct ext2_inode *)&in)) {
		e = ext2fs_free_ext_attr(M.fs, ino, &in);
		if (e)
			return e2err(e);
		if ((rc = iget(ino, &in)))
			return rc;
	}
	in.i_links_count = 0;
	in.i_dtime = (__u32)now().tv_sec;
	if ((rc = iput(ino, &in)))
		return rc;
	ext2fs_inode_alloc_stats2(M.fs, ino, -1, LINUX_S_ISDIR(in.i_mode));
	ino_dirty(ino);
	return 0;
}

/*
 * ext4's orphan list: the superblock's s_last_orphan names the first inode,
 * each inode's i_dtime the next (0 ends it). An inode on it has lost its
 * last name while open (links 0): a crash leaves it there, and whoever
 * mounts next (the kernel, e2fsck, ujbd mount) frees it. Its last release
 * frees it and takes it off, in one handle.
 */
static bool orphan_ino_ok(ext2_ino_t ino)
{
	return ino >= EXT2_FIRST_INO(M.fs->super) && ino <= M.fs->super->s_inodes_count;
}

/* Take ino, whose i_dtime is next, off the list. */
static int orphan_del(ext2_ino_t ino, ext2_ino_t next)
{
	struct ext2_inode_large in;
	ext2_ino_t cur = M.fs->super->s_last_orphan;
	int rc;

	if (cur == ino) {
		M.fs->super->s_last_orphan = next;
		return 0;
	}
	for (ext2_ino_t k = 0; orphan_ino_ok(cur) && k < M.fs->super->s_inodes_count; k++) {
		if ((rc = iget(cur, &in)))
			return rc;
		if (in.i_dtime == ino) {
			in.i_dtime = next;
			return iput(cur, &in);
		}
		cur = in.i_dtime;
	}
	return 0; /* not on it (a broken list): nothing to undo */
}

/* The last name of ino went (in: its inode, links at 0; a directory's
 * entries gone but its own): freed, or while it is open, put on the orphan
 * list (freed at its last release), as ext4 keeps a removed directory
 * that a process still has open. */
static int drop_inode(ext2_ino_t ino, struct ext2_inode_large *in)
{
	struct opened *o = opened_find(ino);
	int rc;

	if (!o || !o->n)
		return free_inode(ino);
	in->i_links_count = 0;
	in->i_dtime = M.fs->super->s_last_orphan;
	T_SET(in, ctime, now());
	if ((rc = iput(ino, in)))
		return rc;
	M.fs->super->s_last_orphan = ino;
	o->orphan = true;
	return 0;
}

/* An orphan's last release: off the list and freed. */
static int orphan_free(ext2_ino_t ino)
{
	struct ext2_inode_large in;
	int rc = iget(ino, &in);

	if (!rc)
		rc = orphan_del(ino, in.i_dtime);
	if (!rc)
		rc = free_inode(ino);
	return rc;
}

/*
 * The orphan list an unclean stop left (or a daemon stopped with files
 * still open, or the kernel's): each inode freed (links 0) or cut to its
 * size (an ext4 truncate in progress), one handle each, as the kernel's
 * mount does. With say, one line on stderr tells how many.
 */
static int orphan_cleanup(const char *verb, const char *image, bool say)
{
	unsigned freed = 0, cut = 0;
	int rc = 0;

	while (!rc && M.fs->super->s_last_orphan) {
		ext2_ino_t ino = M.fs->super->s_last_orphan;
		struct ext2_inode_large in;

		if ((rc = op_begin()))
			break;
		if (!orphan_ino_ok(ino) || !ext2fs_test_inode_bitmap2(M.fs->inode_map, ino) ||
		    (rc = iget(ino, &in))) {
			/* not an inode in use: the list ends here (e2fsck -f
			 * finds what it may have held) */
			M.fs->super->s_last_orphan = 0;
			if (say)
				fprintf(stderr, "ujbd %s: '%s': orphan list: inode %u is not one: "
						"list dropped\n", verb, image, ino);
			op_end(rc, 0, 0, 0, 0);
			break;
		}
		M.fs->super->s_last_orphan = in.i_dtime;
		if (!in.i_links_count) {
			rc = free_inode(ino);
			freed++;
		} else {
			in.i_dtime = 0;
			if (LINUX_S_ISREG(in.i_mode) &&
			    ext2fs_inode_has_valid_blocks2(M.fs, (struct ext2_inode *)&in))
				rc = e2err(ext2fs_punch(M.fs, ino, (struct ext2_inode *)&in, NULL,
							(EXT2_I_SIZE(&in) + M.bs - 1) / M.bs, ~0ULL));
			if (!rc)
				rc = iput(ino, &in);
			cut++;
		}
		rc = op_end(rc, ino, 0, 0, 0);
		if (freed + cut > M.fs->super->s_inodes_count)
			break; /* a loop */
	}
	if (say && (freed || cut))
		fprintf(stderr, "ujbd %s: '%s': orphan list processed (files unlinked while open): "
				"%u freed, %u truncated\n", verb, image, freed, cut);
	if (rc && say)
		fprintf(stderr, "ujbd %s: '%s': orphan list: %s\n", verb, image, strerror(-rc));
	return rc;
}

/* A new inode of mode in dir under name: allocated, linked, written. */
static int new_node(ext2_ino_t dir, const char *name, mode_t mode, dev_t rdev, ext2_ino_t *out)
{
	ext2_filsys fs = M.fs;
	struct fuse_context *cx = fuse_get_context();
	struct ext2_inode_large pin, *in;
	size_t isz = EXT2_INODE_SIZE(fs->super);
	struct timespec t = now();
	ext2_ino_t ino, old;
	unsigned char *buf;
	int rc;

	if (child(dir, name, &old) == 0)
		return -EEXIST;
	if ((rc = iget(dir, &pin)))
		return rc;
	rc = e2err(ext2fs_new_inode(fs, dir, (int)mode, NULL, &ino));
	if (rc)
		return rc;
	if ((rc = link_name(dir, name, ino, ftype(mode))))
		return rc;
	ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	ino_dirty(ino);
	buf = calloc(1, isz > sizeof(*in) ? isz : sizeof(*in));
	if (!buf)
		return -ENOMEM;
	in = (struct ext2_inode_large *)buf;
	in->i_mode = (__u16)mode;
	in->i_links_count = 1;
	in->i_uid = (__u16)cx->uid;
	ext2fs_set_i_uid_high(*in, cx->uid >> 16);
	gid_t gid = cx->gid;
	if (pin.i_mode & LINUX_S_ISGID)
		gid = inode_gid(pin);
	in->i_gid = (__u16)gid;
	ext2fs_set_i_gid_high(*in, gid >> 16);
	if (isz > EXT2_GOOD_OLD_INODE_SIZE)
		in->i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	T_SET(in, atime, t);
	T_SET(in, mtime, t);
	T_SET(in, ctime, t);
	T_SET(in, crtime, t);
	in->i_generation = (__u32)random();
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		unsigned ma = major(rdev), mi = minor(rdev);
		if (ma < 256 && mi < 256)
			in->i_block[0] = (ma << 8) | mi;
		else
			in->i_block[1] = (mi & 0xff) | (ma << 8) | ((mi & ~0xffu) << 12);
	} else if (S_ISREG(mode) && ext2fs_has_feature_extents(fs->super)) {
		struct ext3_extent_header *eh = (struct ext3_extent_header *)in->i_block;
		in->i_flags |= EXT4_EXTENTS_FL;
		eh->eh_magic = EXT3_EXT_MAGIC;
		eh->eh_max = (sizeof(in->i_block) - sizeof(*eh)) / sizeof(struct ext3_extent);
	}
	rc = e2err(ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)in, (int)isz));
	free(buf);
	if (!rc)
		rc = touch_dir(dir, 0);
	*out = ino;
	return rc;
}

/* ---- FUSE operations ---------------------------------------------------- */

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	/* Operations on an open file or directory go by its handle (fh_ino):
	 * libfuse passes no path to them, so a directory removed while open
	 * (which libfuse does not hide as it hides a file) still reads as
	 * removed (ENOENT) where a path lookup would give ESTALE. */
	cfg->nullpath_ok = 1;
	/* The kernel keeps attributes for a second (libfuse's default, as
	 * fuse2fs has them), and always right while each inode has one node:
	 * an operation through a node refreshes or invalidates that node's
	 * attributes, and a directory's after a change of its entries. The
	 * high-level API gives each name of a file its own node, though: the
	 * other names of a hard-linked file would keep their nlink, size and
	 * times for that second. So the first time the kernel is told of a
	 * file with two names (names_seen), caching stops for the rest of
	 * the mount: replies carry timeout 0 from then on, and op_link
	 * invalidates the node of the name linked from (the kernel's own
	 * link refreshes it only in part). */
	cfg->attr_timeout = 1.0;
	M.cfg = cfg;
	M.attrs_cached = true;
	return NULL;
}

/* in is about to be described to the kernel (getattr, the replies libfuse
 * builds from it) or linked: a non-directory of more than one name ends
 * attribute caching (op_init). Under M.lock; libfuse reads the timeout
 * after the operation returns, on the same thread. */
static void names_seen(const struct ext2_inode_large *in, unsigned extra)
{
	static const double zero = 0;

	if (M.attrs_cached && !LINUX_S_ISDIR(in->i_mode) && in->i_links_count + extra > 1) {
		M.attrs_cached = false;
		__atomic_store(&M.cfg->attr_timeout, &zero, __ATOMIC_SEQ_CST);
	}
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	rd_begin();
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc) {
		names_seen(&in, 0);
		to_stat(ino, &in, st);
	}
	if (!rc && hidden_path(path))
		st->st_nlink++; /* libfuse takes one off for its hidden name */
	rd_end();
	return rc;
}

struct rd_ctx {
	void *buf;
	fuse_fill_dir_t fill;
};

static int rd_one(ext2_ino_t d, int entry, struct ext2_dir_entry *de, int offset, int blocksize,
		  char *b, void *arg)
{
	struct rd_ctx *c = arg;
	char name[EXT2_NAME_LEN + 1];
	int len = ext2fs_dirent_name_len(de);
	static const mode_t types[] = { 0, S_IFREG, S_IFDIR, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK,
					S_IFLNK };
	struct stat st = { 0 };
	int t = ext2fs_dirent_file_type(de);

	memcpy(name, de->name, (size_t)len);
	name[len] = 0;
	st.st_ino = de->inode;
	st.st_mode = t < 8 ? types[t] : 0;
	if (c->fill(c->buf, name, &st, 0, 0))
		return DIRENT_ABORT;
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct rd_ctx c = { buf, fill };
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	rd_begin();
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !in.i_links_count)
		rc = -ENOENT; /* removed while open: no entries, as the VFS says */
	if (!rc)
		rc = e2err(ext2fs_dir_iterate2(M.fs, ino, 0, NULL, rd_one, &c));
	rd_end();
	return rc;
}

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	rd_begin();
	rc = lookup(path, &ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !LINUX_S_ISDIR(in.i_mode))
		rc = -ENOTDIR;
	if (!rc && !opened_add(ino))
		rc = -ENOMEM;
	if (!rc)
		fi->fh = ino;
	rd_end();
	return rc;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	ext2_ino_t ino;
	int rc;

	rd_begin();
	rc = lookup(path, &ino);
	if (!rc && !opened_add(ino))
		rc = -ENOMEM;
	if (!rc)
		fi->fh = ino;
	rd_end();
	return rc;
}

/* The last release of an orphan frees it. */
static int op_release(const char *path, struct fuse_file_info *fi)
{
	ext2_ino_t ino = (ext2_ino_t)fi->fh;
	struct opened *o;
	int rc;

	rd_begin();
	o = opened_find(ino);
	if (o && o->n)
		o->n--;
	if (!o || o->n) {
		rd_end();
		return 0;
	}
	if (!o->orphan) {
		opened_remove(o);
		rd_end();
		return 0;
	}
	opened_remove(o);
	hidden_forget(ino);
	if ((rc = op_start())) { /* it stays on the list: the next mount frees it */
		rd_end();
		return rc;
	}
	return op_end(orphan_free(ino), ino, 0, 0, 0);
}

static int op_mknod(const char *path, mode_t mode, dev_t rdev)
{
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir, ino = 0;
	int rc;

	if (S_ISDIR(mode) || S_ISLNK(mode))
		return -EINVAL;
	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc)
		rc = new_node(dir, name, mode, rdev, &ino);
	return op_end(rc, dir, ino, 0, 0);
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0;
	int rc;

	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc)
		rc = new_node(dir, name, (mode & 07777) | S_IFREG, 0, &ino);
	if (!rc && !opened_add(ino))
		rc = -ENOMEM;
	if (!rc)
		fi->fh = ino;
	return op_end(rc, dir, ino, 0, 0);
}

static int op_mkdir(const char *path, mode_t mode)
{
	struct fuse_context *cx = fuse_get_context();
	struct ext2_inode_large in, pin;
	struct timespec t = now();
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0;
	int rc;

	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc && child(dir, name, &ino) == 0)
		rc = -EEXIST;
	if (!rc && (rc = iget(dir, &pin)) == 0 && pin.i_links_count >= EXT2_LINK_MAX &&
	    !ext2fs_has_feature_dir_nlink(M.fs->super))
		rc = -EMLINK;
	if (!rc)
		rc = make_room(dir, name);
	if (!rc)
		rc = e2err(ext2fs_mkdir(M.fs, dir, 0, name));
	if (!rc)
		rc = child(dir, name, &ino);
	ino_dirty(ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc) {
		gid_t gid = cx->gid;
		in.i_mode = (__u16)(LINUX_S_IFDIR | (mode & 07777));
		if (pin.i_mode & LINUX_S_ISGID) {
			gid = inode_gid(pin);
			in.i_mode |= LINUX_S_ISGID;
		}
		in.i_uid = (__u16)cx->uid;
		ext2fs_set_i_uid_high(in, cx->uid >> 16);
		in.i_gid = (__u16)gid;
		ext2fs_set_i_gid_high(in, gid >> 16);
		T_SET(&in, atime, t);
		T_SET(&in, mtime, t);
		T_SET(&in, ctime, t);
		T_SET(&in, crtime, t);
		rc = iput(ino, &in);
	}
	if (!rc)
		rc = touch_dir(dir, 0);
	return op_end(rc, dir, ino, 0, 0);
}

struct empty_ctx {
	int names;
};

static int count_one(ext2_ino_t d, int entry, struct ext2_dir_entry *de, int offset, int blocksize,
		  char *b, void *arg)
{
	struct empty_ctx *c = arg;
	int len = ext2fs_dirent_name_len(de);

	if (de->inode && !(len == 1 && de->name[0] == '.') &&
	    !(len == 2 && de->name[0] == '.' && de->name[1] == '.')) {
		c->names++;
		return DIRENT_ABORT;
	}
	return 0;
}

static int dir_empty(ext2_ino_t dir)
{
	struct empty_ctx c = { 0 };
	int rc = e2err(ext2fs_dir_iterate2(M.fs, dir, 0, NULL, count_one, &c));

	return rc ? rc : c.names ? -ENOTEMPTY : 0;
}

/* name (of ino, whose inode is in) goes from dir; the inode with its last
 * name (dropped: freed, or an orphan while open). */
static int remove_name(ext2_ino_t dir, const char *name, ext2_ino_t ino,
		       struct ext2_inode_large *in)
{
	int rc = e2err(ext2fs_unlink(M.fs, dir, name, ino, 0));

	if (rc)
		return rc;
	if (in->i_links_count > 0)
		in->i_links_count--;
	if (in->i_links_count == 0) {
		rc = drop_inode(ino, in);
	} else {
		T_SET(in, ctime, now());
		rc = iput(ino, in);
	}
	if (!rc)
		rc = touch_dir(dir, 0);
	return rc;
}

static int op_unlink(const char *path)
{
	struct ext2_inode_large in;
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0;
	int rc;

	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc && M.hidden && hidden_find(dir, name)) {
		/* libfuse's hidden name, unlinked at the last release (which
		 * freed the file) or by hand: only the name goes */
		hidden_drop(hidden_find(dir, name));
		return op_end(0, 0, 0, 0, 0);
	}
	if (!rc)
		rc = child(dir, name, &ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && LINUX_S_ISDIR(in.i_mode))
		rc = -EISDIR;
	if (!rc)
		rc = remove_name(dir, name, ino, &in);
	path_forget(path);
	return op_end(rc, dir, ino, 0, 0);
}

static int op_rmdir(const char *path)
{
	struct ext2_inode_large in;
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0;
	int rc;

	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc && (!strcmp(name, ".") || !*name))
		rc = -EINVAL;
	if (!rc && !strcmp(name, ".."))
		rc = -ENOTEMPTY;
	if (!rc)
		rc = child(dir, name, &ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !LINUX_S_ISDIR(in.i_mode))
		rc = -ENOTDIR;
	if (!rc && ino == EXT2_ROOT_INO)
		rc = -EBUSY;
	if (!rc)
		rc = dir_empty(ino);
	if (!rc)
		rc = e2err(ext2fs_unlink(M.fs, dir, name, ino, 0));
	if (!rc) {
		in.i_links_count = 0; /* its parent's entry and its own "." */
		rc = drop_inode(ino, &in);
	}
	if (!rc)
		rc = touch_dir(dir, -1);
	path_forget(path);
	return op_end(rc, dir, ino, 0, 0);
}

/* Point dir's entry name at ino (type) in place: no space needed. */
struct set_ctx {
	const char *name;
	size_t len;
	ext2_ino_t ino;
	int type;
	bool done;
};

static int set_one(ext2_ino_t d, int entry, struct ext2_dir_entry *de, int offset, int blocksize,
		  char *b, void *arg)
{
	struct set_ctx *c = arg;

	if (!de->inode || (size_t)ext2fs_dirent_name_len(de) != c->len ||
	    memcmp(de->name, c->name, c->len))
		return 0;
	de->inode = c->ino;
	ext2fs_dirent_set_file_type(de, c->type);
	c->done = true;
	return DIRENT_CHANGED | DIRENT_ABORT;
}

static int set_entry(ext2_ino_t dir, const char *name, ext2_ino_t ino, int type)
{
	struct set_ctx c = { name, strlen(name), ino, type, false };
	int rc = e2err(ext2fs_dir_iterate2(M.fs, dir, 0, NULL, set_one, &c));

	return rc ? rc : c.done ? 0 : -ENOENT;
}

/* Is dir a or one of its descendants an ancestor of b (or b itself)? */
static int is_ancestor(ext2_ino_t a, ext2_ino_t b, bool *out)
{
	*out = false;
	for (int depth = 0; depth < 4096; depth++) {
		ext2_ino_t up;
		int rc;

		if (b == a) {
			*out = true;
			return 0;
		}
		if (b == EXT2_ROOT_INO)
			return 0;
		if ((rc = child(b, "..", &up)))
			return rc;
		b = up;
	}
	return -ELOOP;
}

/*
 * libfuse (high-level API, hard_remove off) does not pass on the unlink of
 * an open file, nor a rename over one: it renames the file .fuse_hiddenN
 * and unlinks that name at the last release, so a crash would leave the
 * name on disk. (hard_remove would pass the unlink on, but leave the
 * file's node without a path: fstat, which reaches the daemon without a
 * file handle, would fail with ESTALE.) That rename is taken for what it
 * stands for: the name goes from disk as an unlink (the inode, with its
 * last name, on the orphan list) and the hidden name is kept in memory
 * only, for libfuse's later calls through it.
 */
static int hide(ext2_ino_t sdir, const char *sname, ext2_ino_t ino, struct ext2_inode_large *in,
		ext2_ino_t ddir, const char *dname)
{
	struct hidden *h = calloc(1, sizeof(*h));
	int rc;

	if (!h)
		return -ENOMEM;
	rc = remove_name(sdir, sname, ino, in);
	if (rc) {
		free(h);
		return rc;
	}
	h->dir = ddir;
	h->ino = ino;
	snprintf(h->name, sizeof(h->name), "%s", dname);
	h->next = M.hidden;
	M.hidden = h;
	return 0;
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
	struct ext2_inode_large sin, din;
	char b1[PATH_MAX], b2[PATH_MAX];
	const char *sname, *dname;
	ext2_ino_t sdir = 0, ddir = 0, sino = 0, dino = 0;
	struct timespec t = now();
	bool sdir_is, ddir_is = false, loop;
	int rc;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	if ((rc = op_begin()))
		return rc;
	rc = split(from, b1, sizeof(b1), &sdir, &sname);
	if (!rc)
		rc = split(to, b2, sizeof(b2), &ddir, &dname);
	if (!rc)
		rc = child(sdir, sname, &sino);
	if (!rc)
		rc = iget(sino, &sin);
	if (rc)
		return op_end(rc, 0, 0, 0, 0); /* nothing changed */
	sdir_is = LINUX_S_ISDIR(sin.i_mode);
	if (!flags && !sdir_is && hidden_name(dname) && opened_find(sino) &&
	    !hidden_find(ddir, dname) && child(ddir, dname, &dino) == -ENOENT) {
		rc = hide(sdir, sname, sino, &sin, ddir, dname);
		paths_forget_all();
		return op_end(rc, sdir, sino, 0, 0);
	}
	rc = child(ddir, dname, &dino);
	if (rc == -ENOENT) {
		dino = 0;
		rc = 0;
	}
	if (!rc && dino) {
		rc = iget(dino, &din);
		ddir_is = !rc && LINUX_S_ISDIR(din.i_mode);
	}
	if (rc)
		goto out;
	if (dino && (flags & RENAME_NOREPLACE)) {
		rc = -EEXIST;
		goto out;
	}
	if (!dino && (flags & RENAME_EXCHANGE)) {
		rc = -ENOENT;
		goto out;
	}
	if (sino == dino)
		goto out; /* two names of one inode: nothing to do */
	/* A directory may not move under itself. */
	if (sdir_is && (rc = is_ancestor(sino, ddir, &loop)) == 0 && loop)
		rc = -EINVAL;
	if (!rc && (flags & RENAME_EXCHANGE) && ddir_is &&
	    (rc = is_ancestor(dino, sdir, &loop)) == 0 && loop)
		rc = -EINVAL;
	if (rc)
		goto out;

	if (flags & RENAME_EXCHANGE) {
		rc = set_entry(ddir, dname, sino, ftype(sin.i_mode));
		if (!rc)
			rc = set_entry(sdir, sname, dino, ftype(din.i_mode));
		if (!rc && sdir != ddir) {
			if (sdir_is)
				rc = set_entry(sino, "..", ddir, EXT2_FT_DIR);
			if (!rc && ddir_is)
				rc = set_entry(dino, "..", sdir, EXT2_FT_DIR);
			if (!rc && sdir_is != ddir_is) {
				rc = touch_dir(sdir_is ? sdir : ddir, -1);
				if (!rc)
					rc = touch_dir(sdir_is ? ddir : sdir, +1);
			}
		}
		if (!rc && (rc = iget(dino, &din)) == 0) {
			T_SET(&din, ctime, t);
			rc = iput(dino, &din);
		}
	} else {
		if (dino) {
			if (sdir_is && !ddir_is)
				rc = -ENOTDIR;
			else if (!sdir_is && ddir_is)
				rc = -EISDIR;
			else if (ddir_is)
				rc = dir_empty(dino);
			if (rc)
				goto out;
			rc = set_entry(ddir, dname, sino, ftype(sin.i_mode));
			if (!rc) {
				if (ddir_is) {
					din.i_links_count = 0;
					rc = drop_inode(dino, &din);
					if (!rc)
						rc = touch_dir(ddir, -1);
				} else if (din.i_links_count <= 1) {
					din.i_links_count = 0;
					rc = drop_inode(dino, &din);
				} else {
					din.i_links_count--;
					T_SET(&din, ctime, t);
					rc = iput(dino, &din);
				}
			}
		} else {
			rc = link_name(ddir, dname, sino, ftype(sin.i_mode));
		}
		if (!rc)
			rc = e2err(ext2fs_unlink(M.fs, sdir, sname, sino, 0));
		if (!rc && sdir_is && sdir != ddir) {
			rc = set_entry(sino, "..", ddir, EXT2_FT_DIR);
			if (!rc)
				rc = touch_dir(sdir, -1);
			if (!rc)
				rc = touch_dir(ddir, +1);
		}
	}
	if (!rc && (rc = iget(sino, &sin)) == 0) {
		T_SET(&sin, ctime, t);
		rc = iput(sino, &sin);
	}
	if (!rc)
		rc = touch_dir(sdir, 0);
	if (!rc && ddir != sdir)
		rc = touch_dir(ddir, 0);
out:
	paths_forget_all();
	return op_end(rc, sdir, ddir, sino, dino);
}

static int op_link(const char *from, const char *to)
{
	struct ext2_inode_large in;
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0, old;
	int rc;

	if ((rc = op_begin()))
		return rc;
	rc = lookup(from, &ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && LINUX_S_ISDIR(in.i_mode))
		rc = -EPERM;
	if (!rc && in.i_links_count == 0)
		rc = -ENOENT; /* an orphan (through libfuse's hidden name) */
	if (!rc && in.i_links_count >= EXT2_LINK_MAX)
		rc = -EMLINK;
	if (!rc)
		rc = split(to, buf, sizeof(buf), &dir, &name);
	if (!rc && child(dir, name, &old) == 0)
		rc = -EEXIST;
	if (!rc)
		names_seen(&in, 1);
	if (!rc)
		rc = link_name(dir, name, ino, ftype(in.i_mode));
	if (!rc && (rc = iget(ino, &in)) == 0) {
		in.i_links_count++;
		T_SET(&in, ctime, now());
		rc = iput(ino, &in);
	}
	if (!rc)
		rc = touch_dir(dir, 0);
	rc = op_end(rc, dir, ino, 0, 0);
	/* The node of the name linked from may hold attributes cached from
	 * before (one name: its nlink, and later another name's writes); the
	 * kernel refreshes them only in part. Outside M.lock: the kernel may
	 * wait for that node's pages, whose reads other threads serve. */
	if (!rc)
		(void)fuse_invalidate_path(fuse_get_context()->fuse, from);
	return rc;
}

static int op_symlink(const char *target, const char *path)
{
	struct fuse_context *cx = fuse_get_context();
	struct ext2_inode_large in;
	char buf[PATH_MAX];
	const char *name;
	ext2_ino_t dir = 0, ino = 0;
	int rc;

	if (strlen(target) >= M.bs)
		return -ENAMETOOLONG;
	if ((rc = op_begin()))
		return rc;
	rc = split(path, buf, sizeof(buf), &dir, &name);
	if (!rc && child(dir, name, &ino) == 0)
		rc = -EEXIST;
	if (!rc)
		rc = make_room(dir, name);
	if (!rc)
		rc = e2err(ext2fs_symlink(M.fs, dir, 0, name, target));
	if (!rc)
		rc = child(dir, name, &ino);
	ino_dirty(ino);
	if (!rc && (rc = iget(ino, &in)) == 0) {
		struct timespec t = now();
		in.i_uid = (__u16)cx->uid;
		ext2fs_set_i_uid_high(in, cx->uid >> 16);
		in.i_gid = (__u16)cx->gid;
		ext2fs_set_i_gid_high(in, cx->gid >> 16);
		T_SET(&in, atime, t);
		T_SET(&in, mtime, t);
		T_SET(&in, ctime, t);
		rc = iput(ino, &in);
	}
	if (!rc)
		rc = touch_dir(dir, 0);
	return op_end(rc, dir, ino, 0, 0);
}

static int op_readlink(const char *path, char *out, size_t size)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	if (!size)
		return -EINVAL;
	rd_begin();
	rc = lookup(path, &ino);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !LINUX_S_ISLNK(in.i_mode))
		rc = -EINVAL;
	if (!rc) {
		size_t len = EXT2_I_SIZE(&in), n = len < size - 1 ? len : size - 1;
		if (ext2fs_is_fast_symlink((struct ext2_inode *)&in)) {
			memcpy(out, (char *)in.i_block, n);
		} else {
			ext2_file_t f;
			unsigned got = 0;
			rc = e2err(ext2fs_file_open2(M.fs, ino, (struct ext2_inode *)&in, 0, &f));
			if (!rc) {
				rc = e2err(ext2fs_file_read(f, out, (unsigned)n, &got));
				ext2fs_file_close(f);
				n = got;
			}
		}
		out[n] = 0;
	}
	rd_end();
	return rc;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc) {
		in.i_mode = (__u16)((in.i_mode & LINUX_S_IFMT) | (mode & 07777));
		T_SET(&in, ctime, now());
		rc = iput(ino, &in);
	}
	return op_end(rc, ino, 0, 0, 0);
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc) {
		if (uid != (uid_t)-1) {
			in.i_uid = (__u16)uid;
			ext2fs_set_i_uid_high(in, uid >> 16);
		}
		if (gid != (gid_t)-1) {
			in.i_gid = (__u16)gid;
			ext2fs_set_i_gid_high(in, gid >> 16);
		}
		T_SET(&in, ctime, now());
		rc = iput(ino, &in);
	}
	return op_end(rc, ino, 0, 0, 0);
}

/* The last block's bytes past a new end of file are zeroed (a later grow
 * must read zeros there). */
static int zero_tail(ext2_ino_t ino, struct ext2_inode_large *in, uint64_t size)
{
	blk64_t pblk = 0;
	int rf = 0;
	int rc;

	if (size % M.bs == 0)
		return 0;
	rc = e2err(ext2fs_bmap2(M.fs, ino, (struct ext2_inode *)in, NULL, 0, size / M.bs, &rf,
				&pblk));
	if (rc || !pblk || (rf & BMAP_RET_UNINIT))
		return rc;
	if ((rc = ujbd_read(M.j, pblk, M.blk)))
		return -EIO;
	memset(M.blk + size % M.bs, 0, M.bs - size % M.bs);
	return ujbd_write_data(mount_io_handle(), pblk, M.blk) ? -EIO : 0;
}

static int do_truncate(ext2_ino_t ino, uint64_t size)
{
	struct ext2_inode_large in;
	struct timespec t = now();
	int rc = iget(ino, &in);
	uint64_t old;

	if (rc)
		return rc;
	if (LINUX_S_ISDIR(in.i_mode))
		return -EISDIR;
	if (!LINUX_S_ISREG(in.i_mode))
		return -EINVAL;
	old = EXT2_I_SIZE(&in);
	if (size < old) {
		rc = zero_tail(ino, &in, size);
		if (!rc)
			rc = e2err(ext2fs_punch(M.fs, ino, (struct ext2_inode *)&in, NULL,
						(size + M.bs - 1) / M.bs, ~0ULL));
		if (rc)
			return rc;
	}
	rc = e2err(ext2fs_inode_size_set(M.fs, (struct ext2_inode *)&in, (ext2_off64_t)size));
	if (rc)
		return rc;
	T_SET(&in, mtime, t);
	T_SET(&in, ctime, t);
	return iput(ino, &in);
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	ext2_ino_t ino;
	int rc;

	if (size < 0)
		return -EINVAL;
	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = do_truncate(ino, (uint64_t)size);
	return op_end(rc, ino, 0, 0, 0);
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	struct timespec t = now();
	ext2_ino_t ino;
	int rc;

	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc) {
		if (tv[0].tv_nsec != UTIME_OMIT)
			T_SET(&in, atime, tv[0].tv_nsec == UTIME_NOW ? t : tv[0]);
		if (tv[1].tv_nsec != UTIME_OMIT)
			T_SET(&in, mtime, tv[1].tv_nsec == UTIME_NOW ? t : tv[1]);
		T_SET(&in, ctime, t);
		rc = iput(ino, &in);
	}
	return op_end(rc, ino, 0, 0, 0);
}

/* ---- file data: mapped a run at a time ------------------------------------ */

/* No extent of the file maps lblk or a block past it (the handle moves). */
static bool past_last(ext2_extent_handle_t eh, blk64_t lblk)
{
	struct ext2fs_extent ex;

	if (ext2fs_extent_get(eh, EXT2_EXTENT_LAST_LEAF, &ex) ||
	    ext2fs_extent_get(eh, EXT2_EXTENT_LAST_SIB, &ex))
		return false;
	return (ex.e_flags & EXT2_EXTENT_FLAGS_LEAF) && ex.e_lblk + (blk64_t)ex.e_len <= lblk;
}

/*
 * What lblk maps to, for up to max blocks from it: *pblk (0: a hole) and
 * *len blocks that follow it on disk (one extent's part, or a hole up to
 * the next extent), *uninit for an unwritten extent. eh NULL (a file of
 * block maps): one block, through ext2fs_bmap2.
 */
static int map_run(ext2_ino_t ino, struct ext2_inode_large *in, ext2_extent_handle_t eh,
		   blk64_t lblk, blk64_t max, blk64_t *pblk, blk64_t *len, bool *uninit)
{
	struct ext2fs_extent ex;
	errcode_t e;

	*pblk = 0;
	*len = 1;
	*uninit = false;
	if (!eh) {
		int rf = 0;
		e = ext2fs_bmap2(M.fs, ino, (struct ext2_inode *)in, NULL, 0, lblk, &rf, pblk);
		*uninit = *pblk && (rf & BMAP_RET_UNINIT);
		return e2err(e);
	}
	e = ext2fs_extent_goto2(eh, 0, lblk);
	if (!e) {
		if ((e = ext2fs_extent_get(eh, EXT2_EXTENT_CURRENT, &ex)))
			return e2err(e);
		if (lblk < ex.e_lblk || lblk - ex.e_lblk >= ex.e_len)
			return -EIO; /* not what goto found */
		*pblk = ex.e_pblk + (lblk - ex.e_lblk);
		*len = ex.e_len - (lblk - ex.e_lblk);
		*uninit = (ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT) != 0;
		if (*len > max)
			*len = max;
		return 0;
	}
	if (e != EXT2_ET_EXTENT_NOT_FOUND)
		return e2err(e);
	/* A hole: to the next extent. goto left the handle at the extent
	 * before lblk (or the first one, when lblk comes before all). */
	*len = max;
	if (ext2fs_extent_get(eh, EXT2_EXTENT_CURRENT, &ex))
		return 0; /* no extent at all */
	if (ex.e_lblk <= lblk) {
		e = ext2fs_extent_get(eh, EXT2_EXTENT_NEXT_LEAF, &ex);
		if (e == EXT2_ET_EXTENT_NO_NEXT)
			return 0;
		if (e || ex.e_lblk <= lblk) {
			/* Past the last leaf of a tree with index blocks (depth
			 * 1 and more), libext2fs 1.47's NEXT_LEAF comes round
			 * to the file's first extent instead of NO_NEXT: asked
			 * outright whether lblk is past the last extent. */
			if (!past_last(eh, lblk))
				*len = 1; /* unsure: one block, the next call looks again */
			return 0;
		}
	}
	if (ex.e_lblk - lblk < *len)
		*len = ex.e_lblk - lblk;
	return 0;
}

/* An extent handle over the inode (NULL for a file of block maps). */
static int map_open(ext2_ino_t ino, struct ext2_inode_large *in, ext2_extent_handle_t *eh)
{
	*eh = NULL;
	if (!(in->i_flags & EXT4_EXTENTS_FL))
		return 0;
	return e2err(ext2fs_extent_open2(M.fs, ino, (struct ext2_inode *)in, eh));
}

/* The old way, for what is not a regular file of extents or block maps. */
static int read_by_file(ext2_ino_t ino, char *buf, size_t size, off_t off, unsigned *got)
{
	ext2_file_t f;
	int rc = e2err(ext2fs_file_open2(M.fs, ino, NULL, 0, &f));

	if (rc)
		return rc;
	rc = e2err(ext2fs_file_llseek(f, (__u64)off, EXT2_SEEK_SET, NULL));
	while (!rc && *got < size) {
		unsigned n = 0;
		rc = e2err(ext2fs_file_read(f, buf + *got, (unsigned)(size - *got), &n));
		if (!n)
			break;
		*got += n;
	}
	ext2fs_file_close(f);
	return rc;
}

/*
 * Bytes [off, off + size) of the file, inside its size: each mapped run
 * read with ujbd_read_blocks (from the device in one read where the journal
 * holds no newer copy), holes and unwritten extents as zeros.
 */
static int read_runs(ext2_ino_t ino, struct ext2_inode_large *in, char *buf, size_t size,
		     uint64_t off)
{
	ext2_extent_handle_t eh;
	uint64_t pos = off, end = off + size;
	int rc = map_open(ino, in, &eh);

	while (!rc && pos < end) {
		blk64_t lblk = pos / M.bs, last = (end - 1) / M.bs, pblk, len;
		bool uninit;
		uint64_t run_end;
		char *out = buf + (pos - off);

		rc = map_run(ino, in, eh, lblk, last - lblk + 1, &pblk, &len, &uninit);
		if (rc)
			break;
		run_end = (lblk + len) * (uint64_t)M.bs;
		if (run_end > end)
			run_end = end;
		if (!pblk || uninit) {
			memset(out, 0, run_end - pos);
		} else if (pos % M.bs || run_end - pos < M.bs) {
			/* a part of one block */
			if ((rc = ujbd_read_blocks(M.j, pblk, 1, M.dblk)))
				break;
			run_end = pos - pos % M.bs + M.bs < run_end ? pos - pos % M.bs + M.bs : run_end;
			memcpy(out, M.dblk + pos % M.bs, run_end - pos);
		} else {
			/* whole blocks; a part of the last one comes next round */
			uint64_t whole = (run_end - pos) / M.bs;
			if ((rc = ujbd_read_blocks(M.j, pblk, (uint32_t)whole, out)))
				break;
			run_end = pos + whole * M.bs;
		}
		pos = run_end;
	}
	if (eh)
		ext2fs_extent_free(eh);
	return rc == -EINVAL || rc == -UJBD_EINJOURNAL ? -EIO : rc;
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	unsigned got = 0;
	ext2_ino_t ino;
	int rc;

	if (off < 0)
		return -EINVAL;
	rd_begin();
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && (!LINUX_S_ISREG(in.i_mode) || (in.i_flags & EXT4_INLINE_DATA_FL))) {
		rc = read_by_file(ino, buf, size, off, &got);
	} else if (!rc && (uint64_t)off < EXT2_I_SIZE(&in)) {
		if (size > EXT2_I_SIZE(&in) - (uint64_t)off)
			size = (size_t)(EXT2_I_SIZE(&in) - (uint64_t)off);
		rc = read_runs(ino, &in, buf, size, (uint64_t)off);
		got = rc ? 0 : (unsigned)size;
	}
	rd_end();
	return rc ? rc : (int)got;
}

/* [lblk, lblk + n) of a hole now maps to [pblk, pblk + n): the first block
 * through libext2fs's set_bmap (which finds the place, splits and merges),
 * the rest by lengthening that extent, as far as one extent goes. */
static int map_set(ext2_extent_handle_t eh, blk64_t lblk, blk64_t pblk, blk64_t n,
		   blk64_t *mapped)
{
	blk64_t done = 0;
	int rc = 0;

	while (done < n && !rc) {
		struct ext2fs_extent ex;
		blk64_t add;
		errcode_t e = ext2fs_extent_set_bmap(eh, lblk + done, pblk + done, 0);

		if (e) {
			rc = e2err(e);
			break;
		}
		if (++done == n)
			break;
		if (ext2fs_extent_goto2(eh, 0, lblk + done - 1) ||
		    ext2fs_extent_get(eh, EXT2_EXTENT_CURRENT, &ex) ||
		    (ex.e_flags & EXT2_EXTENT_FLAGS_UNINIT) || ex.e_lblk + ex.e_len != lblk + done ||
		    ex.e_pblk + ex.e_len != pblk + done || ex.e_len >= EXT_INIT_MAX_LEN)
			continue; /* one block at a time, then */
		add = n - done;
		if (add > EXT_INIT_MAX_LEN - ex.e_len)
			add = EXT_INIT_MAX_LEN - ex.e_len;
		ex.e_len += (__u32)add;
		e = ext2fs_extent_replace(eh, 0, &ex);
		if (!e)
			done += add; /* the leaf says so now */
		if (e || (e = ext2fs_extent_fix_parents(eh)))
			rc = e2err(e);
	}
	*mapped = done;
	return rc;
}

/*
 * A hole of len blocks at lblk gets blocks: as many as one free run near
 * the file's others gives (at most len), allocated and mapped. *pblk and
 * *len say what. Not through BMAP_ALLOC: libext2fs would zero each new
 * block through the channel, journaling it as metadata; it is data.
 */
static int alloc_run(ext2_ino_t ino, struct ext2_inode_large *in, ext2_extent_handle_t eh,
		     blk64_t lblk, blk64_t *pblk, blk64_t *len)
{
	blk64_t goal = ext2fs_find_inode_goal(M.fs, ino, (struct ext2_inode *)in, lblk);
	blk64_t plen = 0, mapped = 0;
	errcode_t e;
	int rc;

	if (!eh)
		*len = 1; /* block maps: one at a time */
	if (*len > EXT_INIT_MAX_LEN)
		*len = EXT_INIT_MAX_LEN;
	rc = e2err(ext2fs_new_range(M.fs, 0, goal, *len, NULL, pblk, &plen));
	if (rc) {
		*len = 0;
		return rc;
	}
	if (plen < *len)
		*len = plen;
	ext2fs_block_alloc_stats_range(M.fs, *pblk, (blk_t)*len, +1);
	/* libext2fs before 1.47.1 passes its range callback the end of the
	 * range and a length of 0: what cb_range does, done here */
	block_dirty(*pblk, (blk_t)*len);
	busy_drop(*pblk, (blk_t)*len);
	if (eh) {
		rc = map_set(eh, lblk, *pblk, *len, &mapped);
	} else {
		blk64_t p = *pblk;
		rc = e2err(ext2fs_bmap2(M.fs, ino, (struct ext2_inode *)in, NULL, BMAP_SET, lblk,
					NULL, &p));
		mapped = rc ? 0 : 1;
	}
	if (mapped < *len) { /* not mapped (no room for an extent block): free again */
		ext2fs_block_alloc_stats_range(M.fs, *pblk + mapped, (blk_t)(*len - mapped), -1);
		block_dirty(*pblk + mapped, (blk_t)(*len - mapped));
		*len = mapped;
	}
	if (mapped && (e = ext2fs_iblk_add_blocks(M.fs, (struct ext2_inode *)in, mapped)) && !rc)
		rc = e2err(e);
	return rc;
}

/* n blocks of data home in order with the handle's transaction (a new
 * transaction when this one has no room left for a revoke record). */
static int data_out(blk64_t pblk, blk64_t n, const void *data)
{
	int rc;

	for (int tries = 0;; tries++) {
		rc = ujbd_write_data_blocks(mount_io_handle(), pblk, (uint32_t)n, data);
		if (rc != -UJBD_ETOOBIG || tries)
			break;
		if ((rc = op_cycle(false)))
			return rc;
	}
	return rc ? (rc == -EROFS ? -EROFS : -EIO) : 0;
}

/*
 * Bytes [pos, end) of the file, as far as the run of len blocks at pblk
 * (its first block pos's) goes: whole blocks from src as they are, a part
 * of a block over what the block held, or over zeros when it is fresh
 * (just allocated, or unwritten): every block of the run is written, so
 * none of a fresh run is left holding what it held before. *done: bytes.
 */
static int write_run(blk64_t pblk, blk64_t len, bool fresh, uint64_t pos, uint64_t end,
		     const char *src, size_t *done)
{
	uint64_t run_end = (pos / M.bs + len) * (uint64_t)M.bs;
	int rc = 0;

	*done = 0;
	if (run_end > end)
		run_end = end;
	while (!rc && pos < run_end) {
		size_t at = pos % M.bs;

		if (at || run_end - pos < M.bs) { /* a part of one block */
			size_t n = M.bs - at < run_end - pos ? M.bs - at : (size_t)(run_end - pos);
			if (fresh)
				memset(M.dblk, 0, M.bs);
			else if (ujbd_read_blocks(M.j, pblk, 1, M.dblk))
				return -EIO;
			memcpy(M.dblk + at, src, n);
			rc = data_out(pblk, 1, M.dblk);
			if (rc)
				break;
			pblk++;
			pos += n;
			src += n;
			*done += n;
		} else { /* whole blocks */
			blk64_t n = (run_end - pos) / M.bs;
			rc = data_out(pblk, n, src);
			if (rc)
				break;
			pblk += n;
			pos += n * M.bs;
			src += n * M.bs;
			*done += n * M.bs;
		}
	}
	return rc;
}

/* Unwritten blocks [lblk, lblk + n) were written: initialized now. */
static int map_init(ext2_ino_t ino, struct ext2_inode_large *in, blk64_t lblk, blk64_t pblk,
		    blk64_t n)
{
	int rc = 0;

	for (blk64_t i = 0; i < n && !rc; i++) {
		blk64_t p = pblk + i;
		rc = e2err(ext2fs_bmap2(M.fs, ino, (struct ext2_inode *)in, NULL, BMAP_SET, lblk + i,
					NULL, &p));
	}
	return rc;
}

/*
 * One run of [pos, end): mapped (allocated when a hole, as much of it as
 * one free run gives), its data written home in order with the handle's
 * transaction, unwritten blocks converted after their data. *done: bytes.
 */
static int write_some(ext2_ino_t ino, struct ext2_inode_large *in, uint64_t pos, uint64_t end,
		      const char *src, size_t *done)
{
	ext2_extent_handle_t eh;
	blk64_t lblk = pos / M.bs, last = (end - 1) / M.bs, pblk, len;
	bool uninit, fresh = false;
	int arc = 0, rc = map_open(ino, in, &eh);

	*done = 0;
	if (!rc)
		rc = map_run(ino, in, eh, lblk, last - lblk + 1, &pblk, &len, &uninit);
	if (!rc && !pblk) {
		/* an error may leave some blocks mapped (len of them): those
		 * get their data all the same, then the error is returned */
		arc = alloc_run(ino, in, eh, lblk, &pblk, &len);
		fresh = true;
		if (arc && !len)
			rc = arc;
	}
	if (eh)
		ext2fs_extent_free(eh);
	if (rc)
		return rc;
	rc = write_run(pblk, len, fresh || uninit, pos, end, src, done);
	if (!rc)
		rc = arc;
	if (!rc && uninit && *done) {
		blk64_t n = (pos + *done + M.bs - 1) / M.bs - lblk;
		rc = map_init(ino, in, lblk, pblk, n);
	}
	return rc;
}

/* What a write did so far: the size past the bytes written, the times. */
static int write_note(ext2_ino_t ino, struct ext2_inode_large *in, off_t off, size_t done)
{
	struct timespec t = now();

	if (done) {
		if ((uint64_t)off + done > EXT2_I_SIZE(in))
			ext2fs_inode_size_set(M.fs, (struct ext2_inode *)in, (ext2_off64_t)off + done);
		T_SET(in, mtime, t);
		T_SET(in, ctime, t);
	}
	return iput(ino, in);
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	size_t done = 0;
	bool drained = false;
	int rc;

	if (off < 0)
		return -EINVAL;
	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !LINUX_S_ISREG(in.i_mode))
		rc = -EINVAL;
	while (!rc && done < size) {
		size_t n = 0;

		rc = write_some(ino, &in, (uint64_t)off + done, (uint64_t)off + size, buf + done, &n);
		done += n;
		if (rc == -ENOSPC && M.busy_count && !drained) {
			/* The free blocks left are busy: what was written so
			 * far is recorded, the frees committed, then again. */
			drained = true;
			rc = write_note(ino, &in, off, done);
			if (!rc)
				rc = op_cycle(true);
			if (!rc)
				rc = iget(ino, &in);
			continue;
		}
	}
	if (done) {
		int rc2 = write_note(ino, &in, off, done);
		if (rc2)
			rc = rc2;
		else if (rc && rc != -EIO && rc != -EROFS)
			rc = 0; /* a short write: the caller writes the rest again */
	}
	rc = op_end(rc, ino, 0, 0, 0);
	return rc ? rc : (int)done;
}

static int op_statfs(const char *path, struct statvfs *st)
{
	struct ext2_super_block *sb;
	uint64_t free_b, res;

	rd_begin();
	sb = M.fs->super;
	memset(st, 0, sizeof(*st));
	st->f_bsize = M.bs;
	st->f_frsize = M.bs;
	st->f_blocks = ext2fs_blocks_count(sb);
	free_b = ext2fs_free_blocks_count(sb);
	res = ext2fs_r_blocks_count(sb);
	st->f_bfree = free_b;
	st->f_bavail = free_b > res ? free_b - res : 0;
	st->f_files = sb->s_inodes_count;
	st->f_ffree = sb->s_free_inodes_count;
	st->f_favail = sb->s_free_inodes_count;
	st->f_namemax = EXT2_NAME_LEN;
	memcpy(&st->f_fsid, sb->s_uuid, sizeof(st->f_fsid));
	rd_end();
	return 0;
}

/* fsync, fdatasync, fsyncdir: the last transaction that changed the inode
 * (or, when that was forgotten, the last one of all), committed and
 * waited for, outside the lock: FUSE's threads share the commit. */
static int sync_ino(ext2_ino_t ino)
{
	ujbd_tid_t tid;
	bool need;
	int rc;

	rd_begin();
	need = M.any_tid;
	if (M.tids[ino % TID_SLOTS].ino == ino)
		tid = M.tids[ino % TID_SLOTS].tid;
	else if (M.tids[ino % TID_SLOTS].ino == 0)
		need = false; /* never changed since the mount */
	else
		tid = M.last_tid;
	rd_end();
	if (!need)
		return 0;
	rc = ujbd_commit_tid(M.j, tid);
	if (!rc)
		rc = ujbd_wait_tid(M.j, tid);
	return rc ? (rc == -EROFS ? -EROFS : -EIO) : 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	ext2_ino_t ino;
	int rc;

	rd_begin();
	ino = fh_ino(path, fi, &rc);
	rd_end();
	return rc ? rc : sync_ino(ino);
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	struct ext2_inode_large in;
	ext2_ino_t ino;
	int rc;

	if (mode & ~FALLOC_FL_KEEP_SIZE)
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if ((rc = op_begin()))
		return rc;
	ino = fh_ino(path, fi, &rc);
	if (!rc)
		rc = iget(ino, &in);
	if (!rc && !LINUX_S_ISREG(in.i_mode))
		rc = -ENODEV;
	if (!rc && !(in.i_flags & EXT4_EXTENTS_FL))
		rc = -EOPNOTSUPP;
	for (bool drained = false; !rc;) {
		blk64_t first = (uint64_t)off / M.bs;
		blk64_t last = ((uint64_t)off + (uint64_t)len - 1) / M.bs;
		rc = e2err(ext2fs_fallocate(M.fs, EXT2_FALLOCATE_FORCE_UNINIT, ino,
					    (struct ext2_inode *)&in, ~0ULL, first,
					    last - first + 1));
		if (rc != -ENOSPC || !M.busy_count || drained)
			break;
		/* The free blocks left are busy: what was allocated so far is
		 * recorded, the frees committed, then the rest. */
		drained = true;
		rc = iput(ino, &in);
		if (!rc)
			rc = op_cycle(true);
	}
	if (!rc) {
		struct timespec t = now();
		if (!(mode & FALLOC_FL_KEEP_SIZE) && (uint64_t)off + (uint64_t)len > EXT2_I_SIZE(&in)) {
			ext2fs_inode_size_set(M.fs, (struct ext2_inode *)&in,
					      (ext2_off64_t)off + (ext2_off64_t)len);
			T_SET(&in, mtime, t);
		}
		T_SET(&in, ctime, t);
		rc = iput(ino, &in);
	}
	return op_end(rc, ino, 0, 0, 0);
}

/* ---- xattrs ------------------------------------------------------------ */

static int xa_open(ext2_ino_t ino, struct ext2_xattr_handle **h)
{
	int rc = e2err(ext2fs_xattrs_open(M.fs, ino, h));

	if (!rc && (rc = e2err(ext2fs_xattrs_read(*h))))
		ext2fs_xattrs_close(h);
	return rc;
}

static int op_getxattr(const char *path, const char *name, char *value, size_t size)
{
	struct ext2_xattr_handle *h;
	void *v = NULL;
	size_t len = 0;
	ext2_ino_t ino;
	int rc;

	rd_begin();
	rc = lookup(path, &ino);
	if (!rc)
		rc = xa_open(ino, &h);
	if (!rc) {
		rc = e2err(ext2fs_xattr_get(h, name, &v, &len));
		ext2fs_xattrs_close(&h);
	}
	rd_end();
	if (rc)
		return rc;
	if (size && len > size)
		rc = -ERANGE;
	else if (size)
		memcpy(value, v, len);
	ext2fs_free_mem(&v);
	return rc ? rc : (int)len;
}

struct xl_ctx {
	char *buf;
	size_t size, len;
};

static int xl_one(char *name, char *value, size_t vlen, void *arg)
{
	struct xl_ctx *c = arg;
	size_t n = strlen(name) + 1;

	if (c->size && c->len + n <= c->size)
		memcpy(c->buf + c->len, name, n);
	c->len += n;
	return 0;
}

static int op_listxattr(const char *path, char *list, size_t size)
{
	struct ext2_xattr_handle *h;
	struct xl_ctx c = { list, size, 0 };
	ext2_ino_t ino;
	int rc;

	rd_begin();
	rc = lookup(path, &ino);
	if (!rc)
		rc = xa_open(ino, &h);
	if (!rc) {
		rc = e2err(ext2fs_xattrs_iterate(h, xl_one, &c));
		ext2fs_xattrs_close(&h);
	}
	rd_end();
	if (!rc && size && c.len > size)
		rc = -ERANGE;
	return rc ? rc : (int)c.len;
}

static int xa_change(const char *path, const char *name, const char *value, size_t size,
		     int flags, bool remove)
{
	struct ext2_xattr_handle *h;
	struct ext2_inode_large in;
	void *v = NULL;
	size_t len;
	ext2_ino_t ino = 0;
	int rc, have;

	if ((rc = op_begin()))
		return rc;
	rc = lookup(path, &ino);
	if (!rc)
		rc = xa_open(ino, &h);
	if (rc)
		return op_end(rc, ino, 0, 0, 0);
	have = ext2fs_xattr_get(h, name, &v, &len) == 0;
	if (have)
		ext2fs_free_mem(&v);
	if (remove)
		rc = have ? e2err(ext2fs_xattr_remove(h, name)) : -ENODATA;
	else if ((flags & XATTR_CREATE) && have)
		rc = -EEXIST;
	else if ((flags & XATTR_REPLACE) && !have)
		rc = -ENODATA;
	else
		rc = e2err(ext2fs_xattr_set(h, name, value, size));
	{
		int rc2 = e2err(ext2fs_xattrs_close(&h));
		if (!rc)
			rc = rc2;
	}
	if (!rc && (rc = iget(ino, &in)) == 0) {
		T_SET(&in, ctime, now());
		rc = iput(ino, &in);
	}
	return op_end(rc, ino, 0, 0, 0);
}

static int op_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	return xa_change(path, name, value, size, flags, false);
}

static int op_removexattr(const char *path, const char *name)
{
	return xa_change(path, name, NULL, 0, 0, true);
}

static const struct fuse_operations ops = {
	.init = op_init,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.chmod = op_chmod,
	.chown = op_chown,
	.truncate = op_truncate,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.statfs = op_statfs,
	.release = op_release,
	.releasedir = op_release, /* the same: a removed directory is freed there */
	.fsync = op_fsync,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.fsyncdir = op_fsync,
	.create = op_create,
	.utimens = op_utimens,
	.fallocate = op_fallocate,
};

/* ---- mount and unmount --------------------------------------------------- */

static void mount_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd mount [-f] [-o OPTS] IMAGE DIR\n"
		"Mount the ext4 IMAGE on DIR through FUSE, its metadata journaled in the image's\n"
		"own journal (crash-safe: the kernel, e2fsck and ujbd recover replay it).\n"
		"Runs as a daemon until `umount DIR` or `fusermount3 -u DIR`; the image is clean\n"
		"(journal empty, needs_recovery clear) once the daemon has exited.\n"
		"  -f, --foreground  stay in the foreground\n"
		"  -o ro             read-only (refused when the journal needs recovery)\n"
		"  -o record=TRACE   for testing: record every write and flush the daemon makes\n"
		"                    to IMAGE, in order, into TRACE (tests/mount/crashstates.sh)\n"
		"  -o OPT,...        other options go to FUSE (allow_other, ...)\n"
		"exit status: 0 mounted; 1 refused, nothing written (mounted elsewhere, held by\n"
		"another ujbd, unsupported features, a fast-commit or missing journal); 2 usage\n"
		"error; 3 I/O error\n");
}

struct mount_args {
	bool fg, ro;
	char fuse_opts[2048];
	const char *image, *dir;
	char *record;              /* -o record=TRACE */
};

static int mount_parse(int argc, char **argv, struct mount_args *a)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "foreground", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, "hfo:", opts)) != -1) {
		switch (c) {
		case 'h': mount_usage(stdout); return -1;
		case 'f': a->fg = true; break;
		case 'o': {
			char *s = strdup(optarg), *save = NULL;
			if (!s)
				return EXIT_IO;
			for (char *o = strtok_r(s, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
				if (!strcmp(o, "ro")) {
					a->ro = true;
				} else if (!strcmp(o, "rw")) {
					a->ro = false;
				} else if (!strncmp(o, "record=", 7) && o[7]) {
					free(a->record);
					if (!(a->record = strdup(o + 7))) {
						free(s);
						return EXIT_IO;
					}
				} else if (strlen(a->fuse_opts) + strlen(o) + 2 < sizeof(a->fuse_opts)) {
					strcat(a->fuse_opts, ",");
					strcat(a->fuse_opts, o);
				}
			}
			free(s);
			break;
		}
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_err(argv[0], argc - optind < 2 ? "missing IMAGE or DIR (ujbd mount --help)"
						   : "unexpected argument '%s'", argv[optind + 2]);
		return EXIT_USAGE;
	}
	if (a->record && a->ro) {
		cli_err(argv[0], "-o record is for read-write mounts (ro writes nothing)");
		return EXIT_USAGE;
	}
	a->image = argv[optind];
	a->dir = argv[optind + 1];
	return 0;
}

/* The features ujbd mount refuses, beyond what libext2fs cannot open. */
static const char *refused_feature(struct ext2_super_block *sb)
{
	if (ext2fs_has_feature_fast_commit(sb))
		return "fast_commit (fast-commit journals are not supported)";
	if (ext2fs_has_feature_inline_data(sb))
		return "inline_data";
	if (ext2fs_has_feature_bigalloc(sb))
		return "bigalloc";
	if (ext2fs_has_feature_encrypt(sb))
		return "encrypt";
	if (ext2fs_has_feature_casefold(sb))
		return "casefold";
	if (ext2fs_has_feature_verity(sb))
		return "verity";
	if (ext2fs_has_feature_quota(sb))
		return "quota (quota files are not kept up to date)";
	if (ext2fs_has_feature_ea_inode(sb))
		return "ea_inode";
	if (ext2fs_has_feature_mmp(sb))
		return "mmp";
	if (ext2fs_has_feature_journal_dev(sb))
		return "journal_dev (a journal device, not a file system)";
	return NULL;
}

/* Everything that can be refused without writing: the journal's kind and
 * the features, read with libext2fs's own io manager. */
static int mount_check(const char *verb, const struct mount_args *a, bool *recover)
{
	struct ext4_journal ej;
	struct jbd_err err = { 0 };
	ext2_filsys fs;
	const char *why;
	errcode_t e;
	int rc = ext4_probe(a->image, &ej, &err);

	if (rc) {
		cli_err(verb, "%s", err.msg);
		return target_exit_status(rc);
	}
	switch (ej.kind) {
	case EXT4_INTERNAL: break;
	case EXT4_NOT_EXT4: cli_err(verb, "'%s': not an ext2/3/4 image", a->image); return EXIT_INVALID;
	case EXT4_NO_JOURNAL:
		cli_err(verb, "'%s': the file system has no journal (tune2fs -O has_journal adds one)",
			a->image);
		return EXIT_INVALID;
	case EXT4_EXTERNAL:
		cli_err(verb, "'%s': the journal is on an external device: not supported", a->image);
		return EXIT_INVALID;
	case EXT4_JOURNAL_DEV:
		cli_err(verb, "'%s': a journal device, not a file system", a->image);
		return EXIT_INVALID;
	}
	*recover = ej.needs_recovery;
	ext4_journal_release(&ej);
	e = ext2fs_open2(a->image, NULL,
			 EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0,
			 unix_io_manager, &fs);
	if (e == EXT2_ET_UNSUPP_FEATURE || e == EXT2_ET_RO_UNSUPP_FEATURE) {
		cli_err(verb, "'%s': features libext2fs cannot %s: refused", a->image,
			e == EXT2_ET_UNSUPP_FEATURE ? "read" : "write");
		return EXIT_INVALID;
	}
	if (e) {
		cli_err(verb, "'%s': %s", a->image, error_message(e));
		return EXIT_INVALID;
	}
	why = refused_feature(fs->super);
	ext2fs_close_free(&fs);
	if (why) {
		cli_err(verb, "'%s': feature %s: not supported by ujbd mount", a->image, why);
		return EXIT_INVALID;
	}
	if (*recover && a->ro) {
		cli_err(verb, "'%s': the journal needs recovery: mount read-write once, or run "
			      "ujbd recover, then mount -o ro", a->image);
		return EXIT_INVALID;
	}
	return 0;
}

/* Is the libext2fs we run with one whose punch refuses a range that ends
 * at the file system's last block (1.46.6 to 1.47.3)? */
static bool punch_misses_last(void)
{
	const char *v = NULL;
	int a = 0, b = 0, c = 0;

	ext2fs_get_library_version(&v, NULL);
	if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2)
		return true;
	return a == 1 && (b < 47 || (b == 47 && c < 4));
}

/* libext2fs over the journal, its bitmaps read, the shadows taken. */
static int fs_open(const char *verb, const char *image, const char *dir)
{
	ext2_filsys fs;
	errcode_t e;
	size_t n;

	mount_io_set_journal(M.j);
	e = ext2fs_open2(image, NULL, EXT2_FLAG_RW | EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP, 0, 0,
			 mount_io_manager, &fs);
	if (!e)
		e = ext2fs_read_bitmaps(fs);
	if (e) {
		cli_err(verb, "'%s': %s", image, error_message(e));
		return EXIT_INVALID;
	}
	M.fs = fs;
	M.bs = fs->blocksize;
	M.groups = fs->group_desc_count;
	M.bb_bytes = EXT2_CLUSTERS_PER_GROUP(fs->super) / 8;
	M.ib_bytes = fs->super->s_inodes_per_group / 8;
	n = M.bb_bytes > M.ib_bytes ? M.bb_bytes : M.ib_bytes;
	M.tmp = malloc(n > M.bs ? n : M.bs);
	M.tmp2 = malloc(M.bb_bytes);
	M.blk = malloc(M.bs);
	M.dblk = malloc(M.bs);
	M.bb_shadow = calloc(M.groups, M.bb_bytes);
	M.ib_shadow = calloc(M.groups, M.ib_bytes);
	M.bb_init = calloc(M.groups, 1);
	M.ib_init = calloc(M.groups, 1);
	M.gd_shadow = malloc((size_t)fs->desc_blocks * M.bs);
	M.bb_dirty = calloc(M.groups, 1);
	M.ib_dirty = calloc(M.groups, 1);
	if (ext2fs_allocate_block_bitmap(fs, "busy blocks", &M.busy))
		M.busy = NULL;
	if (!M.tmp || !M.tmp2 || !M.busy || !M.blk || !M.dblk || !M.bb_shadow || !M.ib_shadow || !M.bb_init || !M.ib_init ||
	    !M.gd_shadow || !M.bb_dirty || !M.ib_dirty) {
		cli_err(verb, "out of memory");
		return EXIT_IO;
	}
	for (dgrp_t g = 0; g < M.groups; g++) {
		M.bb_init[g] = !ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT);
		M.ib_init[g] = !ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT);
		ext2fs_get_block_bitmap_range2(fs->block_map, group_first_block(g), M.bb_bytes * 8,
					       M.bb_shadow + (size_t)g * M.bb_bytes);
		ext2fs_get_inode_bitmap_range2(fs->inode_map, g * fs->super->s_inodes_per_group + 1,
					       (unsigned)M.ib_bytes * 8,
					       M.ib_shadow + (size_t)g * M.ib_bytes);
	}
	memcpy(M.gd_shadow, fs->group_desc, (size_t)fs->desc_blocks * M.bs);
	/* libext2fs 1.46.6 to 1.47.3 cannot punch a file whose blocks reach
	 * the file system's last block (EXT2_ET_BAD_BLOCK_NUM, an off-by-one
	 * fixed in 1.47.4): such a file could never be deleted. That block is
	 * kept busy for good (free on disk, never handed out). */
	if (punch_misses_last()) {
		blk64_t last = ext2fs_blocks_count(fs->super) - 1;
		if (!ext2fs_test_block_bitmap2(fs->block_map, last)) {
			ext2fs_mark_block_bitmap2(fs->block_map, last);
			ext2fs_mark_block_bitmap2(M.busy, last);
			M.busy_count++;
		}
	}
	memcpy(&M.sb_shadow, fs->super, SUPERBLOCK_SIZE);
	ext2fs_set_block_alloc_stats_callback(fs, cb_block, NULL);
	ext2fs_set_block_alloc_stats_range_callback(fs, cb_range, NULL);
	/* The mount itself: its time and count, as the kernel records them. */
	if (op_begin() == 0) {
		fs->super->s_mtime = (__u32)now().tv_sec;
		fs->super->s_mnt_count++;
		memset(fs->super->s_last_mounted, 0, sizeof(fs->super->s_last_mounted));
		strncpy((char *)fs->super->s_last_mounted, dir,
			sizeof(fs->super->s_last_mounted) - 1);
		if (op_end(0, 0, 0, 0, 0))
			return EXIT_IO;
	}
	if (fs->super->s_last_orphan && orphan_cleanup(verb, image, true))
		return EXIT_IO;
	return 0;
}

/* An option value for FUSE's -o list: commas and backslashes escaped. */
static void opt_escape(char *out, size_t len, const char *s)
{
	size_t k = 0;

	for (; *s && k + 3 < len; s++) {
		if (*s == ',' || *s == '\\')
			out[k++] = '\\';
		out[k++] = *s;
	}
	out[k] = 0;
}

int cmd_mount(int argc, char **argv)
{
	const char *verb = argv[0];
	struct mount_args a = { 0 };
	char image[PATH_MAX], dir[PATH_MAX], esc[PATH_MAX * 2], *optstr;
	struct fuse_args fa = FUSE_ARGS_INIT(0, NULL);
	struct fuse *f = NULL;
	struct fuse_loop_config *lc;
	struct jbd_err err = { 0 };
	int rc, st, pfd[2] = { -1, -1 };
	bool recover = false;
	pid_t pid;
	struct stat sb;

	rc = mount_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!realpath(a.image, image)) {
		cli_err(verb, "cannot open '%s': %s", a.image, strerror(errno));
		return EXIT_INVALID;
	}
	if (!realpath(a.dir, dir) || stat(dir, &sb) || !S_ISDIR(sb.st_mode)) {
		cli_err(verb, "'%s': not a directory", a.dir);
		return EXIT_INVALID;
	}
	a.image = image;
	a.dir = dir;
	if ((rc = mount_check(verb, &a, &recover)))
		return rc;

	/* The daemon forks before any thread starts (the journal's); the
	 * parent waits for the child's verdict and exits with it. */
	if (!a.fg) {
		if (pipe(pfd)) {
			cli_err(verb, "pipe: %s", strerror(errno));
			return EXIT_IO;
		}
		pid = fork();
		if (pid < 0) {
			cli_err(verb, "fork: %s", strerror(errno));
			return EXIT_IO;
		}
		if (pid > 0) {
			unsigned char status = EXIT_IO;
			close(pfd[1]);
			if (read(pfd[0], &status, 1) != 1)
				status = EXIT_IO;
			return status;
		}
		close(pfd[0]);
		setsid();
	}
	st = EXIT_OK;
	rt_mutex_init(&M.lock, "mount");
	M.ro = a.ro;
	if (a.ro) {
		errcode_t e = ext2fs_open2(image, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP, 0, 0,
					   unix_io_manager, &M.fs);
		if (e) {
			cli_err(verb, "'%s': %s", image, error_message(e));
			st = EXIT_INVALID;
			goto out;
		}
		M.bs = M.fs->blocksize;
	} else {
		struct ujbd_opts o;
		ujbd_opts_default(&o);
		if (a.record)
			mount_rec_start(a.record);
		rc = ujbd_open_path(image, NULL, NULL, &o, &M.j, &err);
		if (!rc && a.record && (rc = mount_rec_opened(image))) {
			cli_err(verb, "-o record=%s: %s", a.record, strerror(-rc));
			st = EXIT_IO;
			goto out;
		}
		if (rc) {
			cli_err(verb, "%s", err.msg);
			st = rc == -EBUSY || rc == -EUCLEAN || rc == -EOPNOTSUPP || rc == -EINVAL
				     ? EXIT_INVALID : EXIT_IO;
			goto out;
		}
		if (recover) /* ujbd_open_path replayed it */
			fprintf(stderr, "ujbd %s: '%s': the journal needed recovery: replayed\n", verb,
				image);
		if ((st = fs_open(verb, image, dir)))
			goto out;
	}
	opt_escape(esc, sizeof(esc), image);
	if (asprintf(&optstr, "fsname=%s,subtype=ujbd,default_permissions%s%s", esc,
		     a.ro ? ",ro" : "", a.fuse_opts) < 0) {
		st = EXIT_IO;
		goto out;
	}
	if (fuse_opt_add_arg(&fa, "ujbd") || fuse_opt_add_arg(&fa, "-o") ||
	    fuse_opt_add_arg(&fa, optstr)) {
		free(optstr);
		st = EXIT_IO;
		goto out;
	}
	free(optstr);
	f = fuse_new(&fa, &ops, sizeof(ops), NULL);
	if (!f) {
		cli_err(verb, "'%s': FUSE refused the options", dir);
		st = EXIT_USAGE;
		goto out;
	}
	if (fuse_mount(f, dir)) {
		cli_err(verb, "cannot mount on '%s' (is /dev/fuse there? fusermount3 in PATH?)", dir);
		fuse_destroy(f);
		f = NULL;
		st = EXIT_IO;
		goto out;
	}
	if (fuse_set_signal_handlers(fuse_get_session(f))) {
		st = EXIT_IO;
		goto out_unmount;
	}
	if (pfd[1] >= 0) {
		unsigned char ok = EXIT_OK;
		int null = open("/dev/null", O_RDWR);
		if (write(pfd[1], &ok, 1) != 1)
			st = EXIT_IO;
		close(pfd[1]);
		pfd[1] = -1;
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			close(null);
		}
		if (chdir("/"))
			st = EXIT_IO;
	}
	lc = fuse_loop_cfg_create();
	if (lc) {
		fuse_loop_cfg_set_clone_fd(lc, 0);
		fuse_loop_cfg_set_max_threads(lc, 64);
		fuse_loop_mt(f, lc);
		fuse_loop_cfg_destroy(lc);
	} else {
		fuse_loop(f);
	}
	fuse_remove_signal_handlers(fuse_get_session(f));
	/* files still open when the loop ended (a signal): their orphans */
	if (M.j && M.fs && M.fs->super->s_last_orphan)
		orphan_cleanup(verb, image, false);
out_unmount:
	fuse_unmount(f);
out:
	if (f)
		fuse_destroy(f);
	fuse_opt_free_args(&fa);
	paths_forget_all();
	if (M.fs)
		ext2fs_free(M.fs); /* nothing is written: every change went through a handle */
	rc = -1;
	if (M.j) {
		rc = ujbd_close(M.j); /* checkpoint, log empty, needs_recovery cleared */
		if (rc) {
			cli_err(verb, "'%s': closing the journal: %s", image, ujbd_strerror(rc));
			if (!st)
				st = EXIT_IO;
		}
	}
	if (a.record && (rc = mount_rec_end(image, rc == 0))) {
		cli_err(verb, "-o record=%s: %s", a.record, strerror(-rc));
		if (!st)
			st = EXIT_IO;
	}
	free(a.record);
	if (pfd[1] >= 0) {
		unsigned char s = (unsigned char)st;
		if (write(pfd[1], &s, 1) != 1)
			st = EXIT_IO;
		close(pfd[1]);
	}
	return st;
}

#endif /* UJBD_HAVE_FUSE3 */

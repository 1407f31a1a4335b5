/*
 * The file-system model: a small ext3 on the data device of a journal, the
 * load the lab's scenarios put on the journal and the block layer.
 *
 * The one idea: it is honest about which blocks each operation touches and
 * where they lie, because the I/O schedulers' behaviour depends on seeks and
 * on which thread issues each I/O. Layout and allocation follow ext3
 * (block groups of 32768 4 KiB blocks, each with a block bitmap, an inode
 * bitmap, an inode table of 128-byte inodes and data blocks; directories
 * spread over groups, a file's inode in its directory's group, its data
 * contiguous from a goal near the inode). Metadata changes go through
 * journal handles; file data goes through a page cache, written back by a
 * "pdflush" thread (async bios, its own ioprio) or by fsync (from the
 * caller), as ordered data (data=ordered) or through the journal
 * (data=journal).
 *
 * Thread-safety: every call may be made by many rt threads at once.
 * Errors: 0 or a negative errno; nothing prints.
 */
#ifndef UJBD_FS_H
#define UJBD_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/format.h"
#include "priv/param.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ujbd;
struct blk_queue;
struct dev;

enum fs_atime { FS_ATIME_STRICT = 0, FS_ATIME_RELATIME = 1, FS_ATIME_NOATIME = 2 };

/* The "fs" parameter group: every field is a row of fs_param_table. */
struct fs_params {
	uint32_t blocks_per_group;      /* 32768 */
	uint32_t inodes_per_group;      /* 16384 (inode_ratio 8192) */
	uint32_t inode_size;            /* 128 */
	unsigned atime;                 /* enum fs_atime, default strict (2007) */
	uint64_t ram_bytes;             /* 1 GiB: the base of the dirty ratios */
	unsigned dirty_ratio;           /* percent, 10 (2.6.23) */
	unsigned dirty_background_ratio; /* percent, 5 */
	uint64_t dirty_expire_ns;       /* 30 s (dirty_expire_centisecs 3000) */
	uint64_t writeback_interval_ns; /* 5 s (dirty_writeback_centisecs 500) */
	uint32_t readahead_kib;         /* 128 */
	uint16_t pdflush_ioprio;        /* be:4 */
	uint64_t cpu_op_ns;             /* CPU charged per operation (rt_cpu) */
	/* an inode's times are kept to this step (1 s: ext3's, whose
	 * 128-byte inode holds seconds); a read whose atime would not change
	 * in that step dirties nothing */
	uint64_t time_gran_ns;
	uint32_t writeback_chunk_blocks; /* pages pdflush writes per pass (1024: 4 MiB) */
	uint64_t throttle_wait_ns;      /* a throttled writer's wait between checks */
	unsigned data_mode;             /* enum ujbd_data_mode used by the fs (ordered) */
	/* mkfs: the file system's size in blocks, from block 0; 0 = the whole
	 * data device. What lies past it (an internal journal's region, when
	 * journal and data share a disk) the file system never touches. */
	uint64_t fs_blocks;
	/* fsync flushes the drive's cache when its data was not covered by a
	 * commit (true); false is ext3's barrier=0 (the journal's `barrier`
	 * option must match) */
	bool barrier;
	/* mkfs: the internal journal, inside the file system (ext3's inode 8):
	 * its size, and where mke2fs put it (enum fs_journal_place) */
	uint32_t journal_blocks;
	unsigned journal_place;
	/* fsync's writeback bios are SYNC (WB_SYNC_ALL writeback as
	 * WRITE_SYNC, from the ext3 latency fixes of April 2009); false: plain
	 * WRITE, as 2.6.29 and before wrote them */
	bool fsync_sync;
	/* ... and carry BLK_NOIDLE (2.6.30's WRITE_SYNC): CFQ does not idle on
	 * the writer's queue after them */
	bool fsync_noidle;
};

enum fs_journal_place {
	FS_JOURNAL_START = 0,   /* after group 0's metadata: e2fsprogs before 1.41.1 */
	FS_JOURNAL_MIDDLE = 1,  /* the middle group: e2fsprogs 1.41.1 (2008) on */
};

extern const struct rt_param_table fs_param_table; /* t_name "fs" */
void fs_params_default(struct fs_params *p);

struct fs;

/*
 * Where mkfs puts the journal on a device of dev_blocks blocks of 4 KiB
 * under p (journal_blocks, journal_place, the geometry): its pieces, as a
 * journal map for the stack (struct jbd_extent: journal block, device
 * block, length), into map[max]; *n their count. -ENOSPC when it does not
 * fit, -EINVAL for bad geometry.
 */
int fs_journal_map(const struct fs_params *p, uint64_t dev_blocks,
		       struct jbd_extent *map, size_t max, size_t *n);

/*
 * Write an empty file system (root directory = inode 2) on the data device of
 * j, through the journal (handles), so it is crash-safe; its size is the data
 * device's size in fs blocks (= the journal block size, 4096). Committed
 * (durable) on return.
 */
int fs_mkfs(struct ujbd *j, struct blk_queue *data_q, const struct fs_params *p);
/* Mount: read the group descriptors and bitmaps, start pdflush. */
int fs_mount(struct ujbd *j, struct blk_queue *data_q, const struct fs_params *p,
		 struct fs **out);
/* Write back everything, commit, stop pdflush, free. */
int fs_unmount(struct fs *fs);

typedef uint32_t fs_ino_t;

struct fs_stat {
	fs_ino_t ino;
	bool dir;
	uint64_t size;
	uint64_t blocks;     /* data blocks allocated (not indirect blocks) */
	uint64_t atime_ns, mtime_ns, ctime_ns;
	uint32_t nlink;
};

int fs_mkdir(struct fs *fs, const char *path);   /* "/a/b" absolute paths */
int fs_create(struct fs *fs, const char *path, fs_ino_t *ino); /* O_CREAT|O_TRUNC */
int fs_lookup(struct fs *fs, const char *path, fs_ino_t *ino); /* open: -ENOENT */
int fs_stat(struct fs *fs, const char *path, struct fs_stat *st);

#define FS_IO_DIRECT (1u << 0) /* O_DIRECT: no page cache, caller's thread, SYNC */

/*
 * Buffered write (allocates, dirties the page cache, attaches ordered data to
 * the running transaction), or O_DIRECT (off and len multiples of 4 KiB).
 * Returns 0 or -errno (-ENOSPC when full). Content: each block holds a
 * header (ino, file block, a per-write generation) and zeros; reads
 * through the cache verify the header of each block they read from disk.
 */
int fs_write(struct fs *fs, fs_ino_t ino, uint64_t off, uint64_t len, unsigned flags);
/* Read through the page cache (read-ahead on sequential access; atime per
 * the mount's policy), or O_DIRECT. Returns bytes read (short at EOF) or
 * -errno. */
int64_t fs_read(struct fs *fs, fs_ino_t ino, uint64_t off, uint64_t len, unsigned flags);
/* Write the file's dirty data from the caller (SYNC under fsync_sync) and commit. */
int fs_fsync(struct fs *fs, fs_ino_t ino);
int fs_unlink(struct fs *fs, const char *path); /* files, and empty dirs (rmdir) */
int fs_rename(struct fs *fs, const char *from, const char *to);

/* Counters the scenarios report. */
struct fs_stats {
	uint64_t reads, read_hits, readahead_blocks, writeback_blocks;
	uint64_t throttled, throttle_ns;
	uint64_t data_reads, data_writes;   /* data blocks read / written on disk */
	uint64_t verify_errors;             /* blocks read whose header named another block */
	uint64_t handles;                   /* journal handles started */
	uint64_t atime_updates;             /* inodes dirtied for atime */
	uint64_t fsync_blocks;              /* blocks written SYNC by fsync */
	uint64_t evictions;                 /* clean pages evicted */
	uint64_t dirty_pages, cached_pages; /* now */
	uint64_t pdflush_wakeups;
};
void fs_stats(struct fs *fs, struct fs_stats *out);

/*
 * The checker, on a device holding an unmounted or recovered image: bitmaps
 * agree with inodes, every directory entry names a used inode, no block is
 * owned twice, free counts match. 0 consistent, -EUCLEAN with the first
 * problem in msg (one line), -EIO.
 */
int fs_fsck(struct dev *data, uint32_t block_size, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_FS_H */

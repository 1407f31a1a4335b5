/*
 * The file-system model's insides, shared by fs_layout.c (on-disk format,
 * mkfs, fsck), fs.c (namespace operations), fs_alloc.c (ext3's allocation),
 * fs_cache.c (page cache, read, write, writeback, fsync).
 *
 * On-disk layout, in fs blocks of 4 KiB (ext3's shape, our own encoding):
 *   block 0              superblock (struct lfs_sb)
 *   blocks 1..gdt_blocks group descriptors (struct lfs_gd, 128 per block)
 *   group g starts at g * blocks_per_group; after group 0's superblock and
 *   descriptors: block bitmap (1 block), inode bitmap (1 block), inode
 *   table (inodes_per_group * 128 bytes), then data blocks.
 *   inode n (from 1) is in group (n-1) / ipg; inodes 1..10 are reserved
 *   (2 = the root directory), files start at 11, as ext3.
 *   A directory is blocks of 64-byte entries (struct lfs_dirent; ino 0 =
 *   free slot). A file maps 12 direct blocks, one indirect block (1024
 *   pointers) and one double-indirect block.
 *   A data block is a header (struct lfs_dhdr: ino, file block,
 *   generation) and zeros: what a read checks is the header, and a block
 *   that is mostly zeros is one the simulated disks keep as its header.
 * No field is trusted when read from a disk: fs_fsck checks all of them;
 * the mounted model checks what it follows (block numbers in range).
 *
 * Lock order: fs_lock, then pc_lock. fs_lock guards every metadata change and
 * every metadata read (buffers of the journal's cache are changed in place
 * under it); it is never held across ujbd_start or ujbd_stop, or a page
 * cache data I/O. pc_lock guards the page cache and the counters; it is
 * never held across any I/O or journal call.
 */
#ifndef UJBD_FS_INT_H
#define UJBD_FS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/fs.h"
#include "priv/dev_req.h"
#include "priv/list.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define LFS_MAGIC 0x4c414246u   /* "FBAL" */
#define LFS_DMAGIC 0x44415441u  /* data block header */
#define LFS_BS 4096u
#define LFS_ROOT_INO 2u
#define LFS_FIRST_INO 11u
#define LFS_JOURNAL_INO 8u     /* ext3's journal inode */
#define LFS_NDIR 12u
#define LFS_IND 12u             /* block[] slot of the indirect block */
#define LFS_DIND 13u            /* ... of the double-indirect block */
#define LFS_NBLOCK 15u
#define LFS_PTRS (LFS_BS / 4u)
#define LFS_DIRENT 64u
#define LFS_NAME_MAX 58u
#define LFS_DPB (LFS_BS / LFS_DIRENT)  /* entries per directory block */
#define LFS_GD_SIZE 32u
#define LFS_GPB (LFS_BS / LFS_GD_SIZE) /* descriptors per block */
#define LFS_MAX_FBLOCKS (LFS_NDIR + LFS_PTRS + (uint64_t)LFS_PTRS * LFS_PTRS)

enum lfs_mode { LFS_FREE = 0, LFS_FILE = 1, LFS_DIR = 2 };

struct lfs_sb {
	uint32_t s_magic, s_block_size, s_bpg, s_ipg, s_inode_size, s_ngroups;
	uint32_t s_gdt_blocks, s_first_ino;
	uint64_t s_blocks;
	/* the internal journal (inode 8): s_journal_blocks data blocks from
	 * s_journal_first on, skipping each group's metadata (lfs_journal_map) */
	uint64_t s_journal_first;
	uint32_t s_journal_blocks;
	uint32_t s_pad[3];
};
_Static_assert(sizeof(struct lfs_sb) == 64, "lfs_sb");

struct lfs_gd {
	uint32_t g_block_bitmap, g_inode_bitmap, g_inode_table;
	uint32_t g_free_blocks, g_free_inodes, g_used_dirs;
	uint32_t g_flags;  /* LFS_BG_*_UNINIT */
	uint32_t g_pad;
};

/* A group whose bitmaps mkfs did not write (ext4's uninit_bg): they are
 * what mkfs would have written (lfs_init_*_bitmap) until the allocator
 * first takes something from the group and writes them (lfs_group_init).
 * Only mkfs's cost changes: a 500 GB file system has 7452 bitmap blocks. */
#define LFS_BG_BLOCK_UNINIT 1u
#define LFS_BG_INODE_UNINIT 2u
_Static_assert(sizeof(struct lfs_gd) == LFS_GD_SIZE, "lfs_gd");

struct lfs_inode {
	uint16_t i_mode;       /* enum lfs_mode */
	uint16_t i_nlink;
	uint32_t i_gen;
	uint64_t i_size;
	uint64_t i_atime_ns, i_mtime_ns, i_ctime_ns;
	uint32_t i_blocks;     /* data blocks mapped (not indirect blocks) */
	uint32_t i_parent;     /* directories: the parent ("..") */
	uint32_t i_block[LFS_NBLOCK];
	uint32_t i_pad[5];
};
_Static_assert(sizeof(struct lfs_inode) == 128, "lfs_inode");

struct lfs_dirent {
	uint32_t d_ino;
	uint8_t d_len;
	char d_name[LFS_DIRENT - 5];
};
_Static_assert(sizeof(struct lfs_dirent) == LFS_DIRENT, "lfs_dirent");

struct lfs_dhdr {
	uint32_t h_magic, h_ino;
	uint64_t h_fblock;
	uint32_t h_gen, h_pad;
};

/* Geometry, from the superblock (shared by the model and fsck). */
struct lfs_geo {
	uint64_t blocks;
	uint32_t bpg, ipg, ngroups, gdt_blocks, itb; /* itb: inode table blocks */
};

uint64_t lfs_group_base(const struct lfs_geo *g, uint32_t grp);
/* First block of group grp's bitmaps (after the sb and gdt in group 0). */
uint64_t lfs_group_meta(const struct lfs_geo *g, uint32_t grp);
uint64_t lfs_group_data(const struct lfs_geo *g, uint32_t grp);
uint32_t lfs_group_blocks(const struct lfs_geo *g, uint32_t grp);
int lfs_geo_from_sb(const struct lfs_sb *sb, struct lfs_geo *g);
/* The journal's n blocks from block first on, skipping group metadata, as
 * extents into map[max]: their count, 0 when they do not fit. */
size_t lfs_journal_map(const struct lfs_geo *g, uint64_t first, uint64_t n,
		       struct jbd_extent *map, size_t max);
/* A group's bitmaps as mkfs makes them: metadata (and group 0's root
 * block, and the journal's pieces jmap[jn]) used, padding past the group's
 * end set; the reserved inodes in group 0. */
void lfs_init_block_bitmap(const struct lfs_geo *g, const struct jbd_extent *jmap, size_t jn,
			   uint32_t grp, uint8_t *bm);
void lfs_init_inode_bitmap(const struct lfs_geo *g, uint32_t grp, uint8_t *bm);
/* The journal's blocks in group grp. */
uint32_t lfs_journal_in_group(const struct lfs_geo *g, const struct jbd_extent *jmap,
			      size_t jn, uint32_t grp);
void lfs_fill_data(void *buf, fs_ino_t ino, uint64_t fblock, uint32_t gen);
/* The same block as a stamp (a stamped write, BLK_STAMPED). */
void lfs_stamp_data(struct dev_stamp *st, fs_ino_t ino, uint64_t fblock, uint32_t gen);

/* ---- the page cache ---- */

#define LFS_BIO_MAX 64u       /* blocks per bio */
#define LFS_POOL_CLASSES 7u   /* buffers of 1 << c blocks, up to LFS_BIO_MAX */
#define LFS_POOL_KEEP 32u     /* kept per class */

struct lfs_page {
	fs_ino_t pg_ino;
	uint32_t pg_gen;
	uint64_t pg_fblock, pg_pblock;
	uint64_t pg_dirty_ns;     /* when it became dirty */
	bool pg_dirty, pg_wb;     /* dirty; under writeback (on no list) */
	/* ordered data (data=ordered): the transaction that allocated the
	 * block, until the page's first write completes (0: none); such a page
	 * is dirty or under writeback, and on the pc_ord list */
	ujbd_tid_t pg_otid;
	struct rt_link pg_olink;  /* on pc_ord (pg_otid != 0) */
	struct lfs_page *pg_hnext;
	struct rt_link pg_link;   /* on pc_clean (LRU) or pc_dirty (FIFO) */
};

/* A page list (pg_link) and its length. */
struct lfs_list {
	struct rt_link head;
	uint64_t n;
};

struct fs {
	struct ujbd *fs_j;
	struct blk_queue *fs_q;
	struct fs_params fs_p;
	struct lfs_geo fs_geo;
	/* the internal journal's pieces (mkfs; nothing else writes there) */
	struct jbd_extent fs_jmap[8];
	size_t fs_jn;
	uint64_t fs_ninodes;
	rt_mutex fs_lock;
	uint32_t fs_gen;              /* [fs_lock] write generations */
	ujbd_tid_t *fs_itid;          /* [fs_lock] last tid that changed each inode */
	uint64_t *fs_ra_next;         /* [pc_lock] read-ahead: next expected block */
	uint32_t *fs_ino_pages;       /* [pc_lock] cached pages per inode */
	uint32_t *fs_ino_wb;          /* [pc_lock] ... of them under writeback */
	/* [fs_lock] blocks freed by a transaction not committed yet: not
	 * reused until it is (ext3 allocated only blocks free in the last
	 * committed bitmap too, b_committed_data), or a crash could leave a
	 * committed owner pointing at the new owner's ordered data. One bit per
	 * block, and the frees in tid order to clear them. */
	uint8_t *pf_bm;
	struct lfs_pfree { uint64_t block; ujbd_tid_t tid; } *pf;
	size_t pf_head, pf_n, pf_cap;
	rt_mutex pc_lock;
	rt_cond pc_done;              /* [pc_lock] writeback done, below limits */
	rt_cond pd_wake;              /* [pc_lock] wake pdflush */
	struct lfs_page **pc_hash;    /* [pc_lock] */
	size_t pc_nhash;
	struct lfs_list pc_clean, pc_dirty; /* [pc_lock] */
	uint64_t pc_pages, pc_max;    /* [pc_lock] */
	uint64_t pc_wb;               /* [pc_lock] pages under writeback */
	/* [pc_lock] Ordered data: the pages of newly allocated blocks not yet
	 * on disk, in allocation order (their pg_otid never decreases along
	 * the list), as an ext3 transaction's data list: whoever writes such a
	 * page first (fsync, pdflush) takes it off; the commit of pg_otid
	 * writes what is left (lfs_ordered_hook) before its log blocks. */
	struct rt_link pc_ord;        /* pg_olink */
	uint64_t pc_ord_n;
	bool pd_stop, pd_kick;        /* [pc_lock] */
	/* [pc_lock] inodes with O_DIRECT writes in flight (inode_dio_wait):
	 * their blocks are not freed until the writes are done */
	fs_ino_t dio_ino[64];
	unsigned dio_n;
	rt_thread *pd_thread;
	struct fs_stats fs_st;    /* [pc_lock] */
	/* [pool_lock] I/O buffers of 1, 2, 4 ... LFS_BIO_MAX blocks kept for
	 * reuse: a malloc of a run's buffer (up to 256 KiB, past malloc's mmap
	 * threshold) costs its page faults on every run otherwise */
	rt_mutex pool_lock;
	struct lfs_pool { uint8_t *buf[LFS_POOL_KEEP]; unsigned n; } pool[LFS_POOL_CLASSES];
};

/* Now, in the inodes' time step (fs_params.time_gran_ns). */
static inline uint64_t lfs_now(const struct fs *fs)
{
	uint64_t g = fs->fs_p.time_gran_ns ? fs->fs_p.time_gran_ns : 1, n = rt_now_ns();

	return n - n % g;
}

/* A handle with its credit accounting. */
struct lfs_tx {
	struct ujbd_handle *h;
	unsigned credits, used;
	uint64_t seen[64];   /* blocks this handle already holds */
	unsigned nseen;
	bool seen_full;      /* more than seen[] holds */
};

int lfs_tx_start(struct fs *fs, struct lfs_tx *tx, unsigned credits);
int lfs_tx_stop(struct fs *fs, struct lfs_tx *tx);
/* Buffer of block for change (create: a new block, zeroed). */
int lfs_tx_get(struct lfs_tx *tx, uint64_t block, bool create, struct ujbd_buf **out);
int lfs_tx_dirty(struct lfs_tx *tx, struct ujbd_buf *b);
/* The block is freed: revoke its journaled copies (forget one held here). */
int lfs_tx_revoke(struct lfs_tx *tx, uint64_t block);

/* Inodes and block maps [fs_lock]. */
int lfs_iget(struct fs *fs, fs_ino_t ino, struct lfs_inode *out);
int lfs_iput(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, const struct lfs_inode *in);
/* Physical block of file block fb (0: a hole). */
int lfs_bmap(struct fs *fs, const struct lfs_inode *in, uint64_t fb, uint64_t *pb);
/* Map fb, allocating it (and indirect blocks) near goal when a hole;
 * *fresh tells whether it was allocated. */
int lfs_bmap_alloc(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, struct lfs_inode *in,
		   uint64_t fb, uint64_t *pb, bool *fresh);
/* Free every block of the inode (data and indirect). */
int lfs_free_blocks(struct fs *fs, struct lfs_tx *tx, struct lfs_inode *in);

/* Allocation (fs_alloc.c) [fs_lock]. */
int lfs_gd_get(struct fs *fs, uint32_t grp, struct lfs_gd *out);
/* Write group grp's bitmaps if mkfs left them unwritten (LFS_BG_*_UNINIT),
 * in tx, before anything is taken from the group. */
int lfs_group_init(struct fs *fs, struct lfs_tx *tx, uint32_t grp);
int lfs_alloc_inode(struct fs *fs, struct lfs_tx *tx, fs_ino_t parent, bool dir,
		    fs_ino_t *out);
int lfs_free_inode(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, bool dir);
int lfs_alloc_block(struct fs *fs, struct lfs_tx *tx, uint64_t goal, uint64_t *out);
/* meta: the block held metadata (a directory or indirect block), or data
 * under data=journal: its journaled copies are revoked. */
int lfs_free_block(struct fs *fs, struct lfs_tx *tx, uint64_t block, bool meta);
uint64_t lfs_ino_goal(struct fs *fs, fs_ino_t ino);

/* Page cache (fs_cache.c). */
int lfs_pc_init(struct fs *fs);
void lfs_pc_release(struct fs *fs);
int lfs_pdflush_start(struct fs *fs);
void lfs_pdflush_stop(struct fs *fs);
/* Drop the inode's pages from file block `from` on (waits for writeback);
 * `to` (the size in blocks) bounds the fast lookup, pages past it are
 * found by a scan. */
/* Drop the pages [from, to) of ino, whose blocks the transaction tid frees
 * (waiting for writeback in flight, and for a committing transaction's
 * ordered data to be written first). */
void lfs_pc_truncate(struct fs *fs, fs_ino_t ino, uint64_t from, uint64_t to,
		     ujbd_tid_t tid);
/* ujbd_set_data_hook's hook: the ordered pages of transactions <= io->tid. */
int lfs_ordered_hook(void *arg, const struct ujbd_data_io *io);
/* Write every dirty page back and wait. */
int lfs_pc_sync(struct fs *fs);
void lfs_note_tid(struct fs *fs, fs_ino_t ino, struct lfs_tx *tx);

#endif /* UJBD_FS_INT_H */

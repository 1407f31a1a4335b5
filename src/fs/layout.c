/*
 * The file-system model's format: its parameters, geometry, mkfs.
 *
 * The one idea: the layout is ext3's (block groups, each with its bitmaps
 * and inode table at its start), so where a block lies is where ext3 put
 * it and a tree copy seeks the way ext3's did. mkfs writes only what must
 * be valid (superblock, descriptors, bitmaps, the root directory) and
 * writes it through the journal, so a crash during mkfs leaves either no
 * file system or a whole one; inode tables are not zeroed, because an inode
 * is trusted only when its bitmap bit is set and it is written whole when
 * allocated.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"
#include "priv/blk.h"

#define P(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct fs_params, field, type, unit, scale, def, min, max, src, help)

static const struct rt_param fs_rows[] = {
	P(blocks_per_group, RT_PARAM_U32, "blocks", 0, 32768, 64, 32768,
	  "mke2fs: 8 * block size (one bitmap block)", "blocks per block group"),
	/* whole inode-table blocks: 32 inodes of 128 bytes in a 4 KiB block */
	RT_PARAM_RULE(struct fs_params, inodes_per_group, RT_PARAM_U32, "inodes", 0, 16384,
		      32, 32768, 32, false,
		      "mke2fs.conf inode_ratio 8192: 32768 blocks * 4096 / 8192", "inodes per group"),
	P(inode_size, RT_PARAM_U32, "bytes", 0, 128, 128, 128,
	  "mke2fs: ext3's 128-byte inodes (before e2fsprogs 1.40.x's 256)", "inode size"),
	P(atime, RT_PARAM_UINT, "", 0, 0, 0, 2,
	  "2007 default mount: strictatime (relatime default only from 2.6.30)",
	  "0 strictatime, 1 relatime, 2 noatime"),
	P(ram_bytes, RT_PARAM_U64, "MiB", 1048576.0, 1024, 1, 1048576,
	  "a 2007 desktop: 1 GiB", "memory: page cache bound and base of the dirty ratios"),
	P(dirty_ratio, RT_PARAM_UINT, "%", 0, 10, 1, 100,
	  "2.6.23 vm_dirty_ratio 10 (was 40)", "writers throttled above this share of ram"),
	P(dirty_background_ratio, RT_PARAM_UINT, "%", 0, 5, 1, 100,
	  "2.6.23 dirty_background_ratio 5 (was 10)", "pdflush writes back above this share"),
	P(dirty_expire_ns, RT_PARAM_U64, "ms", 1e6, 30000, 1, 3600000,
	  "dirty_expire_centisecs 3000", "age at which pdflush writes a dirty page"),
	P(writeback_interval_ns, RT_PARAM_U64, "ms", 1e6, 5000, 1, 3600000,
	  "dirty_writeback_centisecs 500", "pdflush's period"),
	P(readahead_kib, RT_PARAM_U32, "KiB", 0, 128, 0, 65536,
	  "VM_MAX_READAHEAD 128 (2.6.2x)", "largest read-ahead window"),
	P(pdflush_ioprio, RT_PARAM_U32, "ioprio", 0, 16388, 0, 65535,
	  "pdflush runs at be:4 (nice 0), kernel encoding (2<<13|4)",
	  "pdflush's I/O priority, kernel encoding"),
	P(cpu_op_ns, RT_PARAM_U64, "us", 1e3, 5, 0, 100000,
	  "an estimate: a few us of system time per VFS call on a 2007 CPU",
	  "CPU charged per operation (rt_cpu)"),
	P(time_gran_ns, RT_PARAM_U64, "ms", 1e6, 1000, 1e-6, 1000,
	  "ext3: a 128-byte inode holds seconds, and the VFS kept its times to the super "
	  "block's s_time_gran, 1 s unless the file system sets it (2.6.2x alloc_super; "
	  "ext3 never did); touch_atime leaves an atime equal to the current one",
	  "step of the inodes' times (atime, mtime, ctime)"),
	P(writeback_chunk_blocks, RT_PARAM_U32, "blocks", 0, 1024, 1, 65536,
	  "MAX_WRITEBACK_PAGES 1024 (4 MiB per pass)", "pages pdflush writes per pass"),
	P(throttle_wait_ns, RT_PARAM_U64, "ms", 1e6, 100, 1, 10000,
	  "balance_dirty_pages: congestion_wait(HZ/10)", "a throttled writer's wait"),
	P(data_mode, RT_PARAM_UINT, "", 0, 0, 0, 2,
	  "ext3 default data=ordered; informational: the journal's mode rules",
	  "0 ordered, 1 journal, 2 writeback"),
	P(fs_blocks, RT_PARAM_U64, "blocks", 0, 0, 0, 1e15,
	  "0: the whole data device (mke2fs's default)",
	  "mkfs: file-system size; blocks past it (a journal's region) stay untouched"),
	P(barrier, RT_PARAM_BOOL, "", 0, 1, 0, 1,
	  "ext4 barrier=1; ext3 defaulted to barrier=0 until 2.6.38 (set with the journal's)",
	  "cache flushes on fsync"),
	P(journal_blocks, RT_PARAM_U32, "blocks", 0, 32768, 0, 262144,
	  "mke2fs: 32768 blocks (128 MiB) for a file system over 4 GiB (ext2fs_default_journal_size)",
	  "the internal journal's size; 0: none (the journal lies outside the file system)"),
	P(journal_place, RT_PARAM_UINT, "", 0, 0, 0, 1,
	  "e2fsprogs 1.41.1 (Sept 2008) release notes: mke2fs creates the journal in the "
	  "middle of the file system; before, after group 0's metadata",
	  "0 start (after group 0's metadata), 1 middle group"),
	P(fsync_sync, RT_PARAM_BOOL, "", 0, 0, 0, 1,
	  "2.6.29 and before: fsync's data went out as WRITE (Ts'o, 'Re: [GIT PULL] Ext3 latency "
	  "fixes', LKML 4 Apr 2009: 'Q W ... [sqlite-fsync-te]'); the latency fixes made it "
	  "WRITE_SYNC ('Q WS')",
	  "fsync's data writes are SYNC"),
	P(fsync_noidle, RT_PARAM_BOOL, "", 0, 0, 0, 1,
	  "2.6.30 (Jens Axboe, April 2009): WRITE_SYNC carries BIO_RW_NOIDLE, so CFQ does not "
	  "idle after a sync write; before, it did",
	  "fsync's SYNC data writes are NOIDLE"),
};

#undef P

const struct rt_param_table fs_param_table =
	RT_PARAM_TABLE("fs", "the ext3-like file-system model", fs_rows,
		       struct fs_params);

void fs_params_default(struct fs_params *p)
{
	memset(p, 0, sizeof(*p));
	rt_param_defaults(&fs_param_table, p);
}

/* ---- geometry ---- */

uint64_t lfs_group_base(const struct lfs_geo *g, uint32_t grp)
{
	return (uint64_t)grp * g->bpg;
}

uint64_t lfs_group_meta(const struct lfs_geo *g, uint32_t grp)
{
	return lfs_group_base(g, grp) + (grp == 0 ? 1 + g->gdt_blocks : 0);
}

uint64_t lfs_group_data(const struct lfs_geo *g, uint32_t grp)
{
	return lfs_group_meta(g, grp) + 2 + g->itb;
}

uint32_t lfs_group_blocks(const struct lfs_geo *g, uint32_t grp)
{
	uint64_t left = g->blocks - lfs_group_base(g, grp);

	return (uint32_t)(left < g->bpg ? left : g->bpg);
}

/* From a superblock read off a disk: every field checked. */
int lfs_geo_from_sb(const struct lfs_sb *sb, struct lfs_geo *g)
{
	if (sb->s_magic != LFS_MAGIC || sb->s_block_size != LFS_BS || sb->s_inode_size != 128)
		return -EUCLEAN;
	if (sb->s_bpg < 64 || sb->s_bpg > 8 * LFS_BS || sb->s_ipg < 32 ||
	    sb->s_ipg > 8 * LFS_BS || sb->s_ipg % (LFS_BS / 128) || sb->s_ngroups == 0)
		return -EUCLEAN;
	g->blocks = sb->s_blocks;
	g->bpg = sb->s_bpg;
	g->ipg = sb->s_ipg;
	g->ngroups = sb->s_ngroups;
	g->gdt_blocks = sb->s_gdt_blocks;
	g->itb = sb->s_ipg * 128 / LFS_BS;
	if (g->gdt_blocks != (g->ngroups + LFS_GPB - 1) / LFS_GPB ||
	    (uint64_t)(g->ngroups - 1) * g->bpg >= g->blocks ||
	    (uint64_t)g->ngroups * g->bpg < g->blocks)
		return -EUCLEAN;
	if (lfs_group_data(g, g->ngroups - 1) >= g->blocks ||
	    lfs_group_data(g, 0) - lfs_group_base(g, 0) >= g->bpg)
		return -EUCLEAN;
	return 0;
}

/* Geometry for a new file system of `blocks` blocks; the last group is
 * dropped when too small to hold its metadata and some data. */
static int geo_new(const struct fs_params *p, uint64_t blocks, struct lfs_geo *g)
{
	if (p->blocks_per_group < 64 || p->blocks_per_group > 8 * LFS_BS ||
	    p->inodes_per_group < 32 || p->inodes_per_group > 8 * LFS_BS ||
	    p->inodes_per_group % (LFS_BS / 128) || p->inode_size != 128)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->bpg = p->blocks_per_group;
	g->ipg = p->inodes_per_group;
	g->itb = g->ipg * 128 / LFS_BS;
	g->ngroups = (uint32_t)((blocks + g->bpg - 1) / g->bpg);
	g->gdt_blocks = (g->ngroups + LFS_GPB - 1) / LFS_GPB;
	g->blocks = blocks;
	if (g->ngroups > 1 && lfs_group_data(g, g->ngroups - 1) + 16 > blocks) {
		g->ngroups--;
		g->blocks = (uint64_t)g->ngroups * g->bpg;
	}
	if (g->ngroups == 0 || lfs_group_data(g, 0) + 16 > g->blocks ||
	    lfs_group_data(g, 0) - lfs_group_base(g, 0) + 16 > g->bpg)
		return -ENOSPC;
	return 0;
}

size_t lfs_journal_map(const struct lfs_geo *g, uint64_t first, uint64_t n,
		       struct jbd_extent *map, size_t max)
{
	uint64_t b = first, lblk = 0;
	size_t k = 0;

	while (lblk < n) {
		uint32_t grp = (uint32_t)(b / g->bpg);
		uint64_t end, len;

		if (grp >= g->ngroups || k == max)
			return 0;
		if (b < lfs_group_data(g, grp))
			b = lfs_group_data(g, grp);
		end = lfs_group_base(g, grp) + lfs_group_blocks(g, grp);
		len = end - b < n - lblk ? end - b : n - lblk;
		map[k++] = (struct jbd_extent){ lblk, b, len };
		lblk += len;
		b = end;
	}
	return k;
}

/* The journal's first block under p's journal_place. */
static uint64_t journal_first(const struct lfs_geo *g, const struct fs_params *p)
{
	if (p->journal_place == FS_JOURNAL_MIDDLE)
		return lfs_group_data(g, g->ngroups / 2);
	return lfs_group_data(g, 0) + 1; /* after the root directory's block */
}

void lfs_stamp_data(struct dev_stamp *st, fs_ino_t ino, uint64_t fblock, uint32_t gen)
{
	struct lfs_dhdr h = { LFS_DMAGIC, ino, fblock, gen, 0 };

	_Static_assert(sizeof(h) <= DEV_STAMP_BYTES && LFS_BS == DEV_STAMP_BLOCK, "stamp");
	memset(st, 0, sizeof(*st));
	memcpy(st->s_bytes, &h, sizeof(h));
}

void lfs_fill_data(void *buf, fs_ino_t ino, uint64_t fblock, uint32_t gen)
{
	struct dev_stamp st;

	lfs_stamp_data(&st, ino, fblock, gen);
	dev_stamp_fill(buf, &st);
}

/* ---- mkfs ---- */

/* The journal's blocks in group grp: marked in bm (when not NULL); their
 * count. */
static uint32_t journal_mark(const struct lfs_geo *g, const struct jbd_extent *jmap, size_t jn,
			     uint32_t grp, uint8_t *bm)
{
	uint64_t base = lfs_group_base(g, grp), end = base + g->bpg;
	uint32_t n = 0;

	for (size_t i = 0; i < jn; i++) {
		uint64_t lo = jmap[i].pblk > base ? jmap[i].pblk : base;
		uint64_t hi = jmap[i].pblk + jmap[i].len < end ? jmap[i].pblk + jmap[i].len : end;

		for (uint64_t b = lo; b < hi; b++) {
			if (bm)
				bm[(b - base) / 8] |= (uint8_t)(1u << ((b - base) % 8));
			n++;
		}
	}
	return n;
}

uint32_t lfs_journal_in_group(const struct lfs_geo *g, const struct jbd_extent *jmap,
			      size_t jn, uint32_t grp)
{
	return journal_mark(g, jmap, jn, grp, NULL);
}

void lfs_init_block_bitmap(const struct lfs_geo *g, const struct jbd_extent *jmap, size_t jn,
			   uint32_t grp, uint8_t *bm)
{
	uint32_t used = (uint32_t)(lfs_group_data(g, grp) - lfs_group_base(g, grp)) + (grp == 0);
	uint32_t n = lfs_group_blocks(g, grp);

	memset(bm, 0, LFS_BS);
	for (uint32_t i = 0; i < 8 * LFS_BS; i++)
		if (i < used || i >= n)
			bm[i / 8] |= (uint8_t)(1u << (i % 8));
	journal_mark(g, jmap, jn, grp, bm);
}

void lfs_init_inode_bitmap(const struct lfs_geo *g, uint32_t grp, uint8_t *bm)
{
	memset(bm, 0, LFS_BS);
	for (uint32_t i = 0; i < 8 * LFS_BS; i++)
		if (i >= g->ipg || (grp == 0 && i < LFS_FIRST_INO - 1))
			bm[i / 8] |= (uint8_t)(1u << (i % 8));
}

static int mk_block(struct lfs_tx *tx, uint64_t block, const void *data, size_t len)
{
	struct ujbd_buf *b;
	int rc = lfs_tx_get(tx, block, true, &b);

	if (rc)
		return rc;
	memcpy(ujbd_buf_data(b), data, len);
	return lfs_tx_dirty(tx, b);
}

/* A group whose bitmaps mkfs writes: group 0 (the root, the reserved
 * inodes) and the groups the journal lies in; the rest start uninit. */
static bool mk_eager(const struct fs *fs, uint32_t grp)
{
	return grp == 0 || lfs_journal_in_group(&fs->fs_geo, fs->fs_jmap, fs->fs_jn, grp) > 0;
}

/* The eager groups' bitmaps, in handles of at most 16 groups. */
static int mk_groups(struct fs *fs, uint8_t *tmp)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint32_t grp = 0;
	int rc = 0;

	while (grp < g->ngroups && !rc) {
		struct lfs_tx tx;
		unsigned k = 0;

		rc = lfs_tx_start(fs, &tx, 40);
		for (; grp < g->ngroups && k < 16 && !rc; grp++) {
			if (!mk_eager(fs, grp))
				continue;
			k++;
			lfs_init_block_bitmap(g, fs->fs_jmap, fs->fs_jn, grp, tmp);
			rc = mk_block(&tx, lfs_group_meta(g, grp), tmp, LFS_BS);
			lfs_init_inode_bitmap(g, grp, tmp);
			if (!rc)
				rc = mk_block(&tx, lfs_group_meta(g, grp) + 1, tmp, LFS_BS);
		}
		int s = tx.h ? lfs_tx_stop(fs, &tx) : 0;
		rc = rc ? rc : s;
	}
	return rc;
}

static int mk_gdt(struct fs *fs, struct lfs_tx *tx, uint8_t *tmp)
{
	const struct lfs_geo *g = &fs->fs_geo;
	int rc = 0;

	for (uint32_t b = 0; b < g->gdt_blocks && !rc; b++) {
		memset(tmp, 0, LFS_BS);
		for (uint32_t i = 0; i < LFS_GPB && b * LFS_GPB + i < g->ngroups; i++) {
			uint32_t grp = b * LFS_GPB + i;
			struct lfs_gd gd = { 0 };
			uint64_t meta = lfs_group_meta(g, grp);

			gd.g_block_bitmap = (uint32_t)meta;
			gd.g_inode_bitmap = (uint32_t)meta + 1;
			gd.g_inode_table = (uint32_t)meta + 2;
			gd.g_free_blocks = (uint32_t)(lfs_group_base(g, grp) +
				lfs_group_blocks(g, grp) - lfs_group_data(g, grp)) - (grp == 0) -
				lfs_journal_in_group(g, fs->fs_jmap, fs->fs_jn, grp);
			gd.g_flags = mk_eager(fs, grp) ? 0 : LFS_BG_BLOCK_UNINIT | LFS_BG_INODE_UNINIT;
			gd.g_free_inodes = g->ipg - (grp == 0 ? LFS_FIRST_INO - 1 : 0);
			gd.g_used_dirs = grp == 0;
			memcpy(tmp + i * LFS_GD_SIZE, &gd, sizeof(gd));
		}
		rc = mk_block(tx, 1 + b, tmp, LFS_BS);
	}
	return rc;
}

/* The root directory (one empty block, the first data block of group 0)
 * and the superblock, last: the file system exists once it commits. */
static int mk_root(struct fs *fs, uint8_t *tmp)
{
	const struct lfs_geo *g = &fs->fs_geo;
	struct lfs_inode root = { 0 };
	struct lfs_sb sb = { 0 };
	struct lfs_tx tx;
	int rc = lfs_tx_start(fs, &tx, 8 + g->gdt_blocks), s;

	if (rc)
		return rc;
	rc = mk_gdt(fs, &tx, tmp);
	memset(tmp, 0, LFS_BS);
	if (!rc)
		rc = mk_block(&tx, lfs_group_data(g, 0), tmp, LFS_BS);
	root.i_mode = LFS_DIR;
	root.i_nlink = 2;
	root.i_size = LFS_BS;
	root.i_blocks = 1;
	root.i_parent = LFS_ROOT_INO;
	root.i_block[0] = (uint32_t)lfs_group_data(g, 0);
	root.i_atime_ns = root.i_mtime_ns = root.i_ctime_ns = lfs_now(fs);
	if (!rc)
		rc = lfs_iput(fs, &tx, LFS_ROOT_INO, &root);
	sb = (struct lfs_sb){ .s_magic = LFS_MAGIC, .s_block_size = LFS_BS, .s_bpg = g->bpg,
			      .s_ipg = g->ipg, .s_inode_size = 128, .s_ngroups = g->ngroups,
			      .s_gdt_blocks = g->gdt_blocks, .s_first_ino = LFS_FIRST_INO,
			      .s_blocks = g->blocks,
			      .s_journal_first = fs->fs_jn ? fs->fs_jmap[0].pblk : 0,
			      .s_journal_blocks = fs->fs_jn ? fs->fs_p.journal_blocks : 0 };
	memcpy(tmp, &sb, sizeof(sb));
	if (!rc)
		rc = mk_block(&tx, 0, tmp, LFS_BS);
	ujbd_handle_set_sync(tx.h, true);
	s = lfs_tx_stop(fs, &tx);
	return rc ? rc : s;
}

/* The file system's size on a data device of dev_blocks blocks. */
static uint64_t fs_size(const struct fs_params *p, uint64_t dev_blocks)
{
	return p->fs_blocks && p->fs_blocks < dev_blocks ? p->fs_blocks : dev_blocks;
}

int fs_journal_map(const struct fs_params *p, uint64_t dev_blocks,
		       struct jbd_extent *map, size_t max, size_t *n)
{
	struct lfs_geo g;
	int rc = geo_new(p, fs_size(p, dev_blocks), &g);

	*n = 0;
	if (rc || !p->journal_blocks)
		return rc ? rc : -EINVAL;
	*n = lfs_journal_map(&g, journal_first(&g, p), p->journal_blocks, map, max);
	return *n ? 0 : -ENOSPC;
}

int fs_mkfs(struct ujbd *j, struct blk_queue *data_q, const struct fs_params *p)
{
	struct fs *fs;
	uint8_t *tmp = NULL;
	int rc;

	if (!j || !p || ujbd_block_size(j) != LFS_BS)
		return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	tmp = malloc(LFS_BS);
	rc = fs && tmp ? 0 : -ENOMEM;
	if (!rc)
		rc = geo_new(p, fs_size(p, ujbd_data_blocks(j)), &fs->fs_geo);
	if (!rc && p->journal_blocks) {
		fs->fs_jn = lfs_journal_map(&fs->fs_geo, journal_first(&fs->fs_geo, p),
					    p->journal_blocks, fs->fs_jmap, 8);
		rc = fs->fs_jn ? 0 : -ENOSPC;
	}
	if (rc)
		goto out;
	fs->fs_j = j;
	fs->fs_q = data_q;
	fs->fs_p = *p;
	rc = mk_groups(fs, tmp);
	if (!rc)
		rc = mk_root(fs, tmp);
out:
	free(tmp);
	free(fs);
	return rc;
}

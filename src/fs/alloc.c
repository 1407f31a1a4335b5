/*
 * The file-system model's allocator: where ext3 put new inodes and blocks.
 *
 * The one idea: placement is what makes the seeks. As ext3's Orlov
 * allocator: a directory made in the root goes to the group with the fewest
 * directories among those with at least the average of free inodes and free
 * blocks (top-level trees spread over the disk); a deeper directory and a
 * file stay in the parent's group while it has room (then the next group
 * with room). A file's first block is searched from the start of its
 * inode's group's data area, each later block from the previous one plus
 * one, so a file is contiguous and near its inode.
 *
 * Everything here runs under fs_lock, inside a handle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"

static uint64_t gd_block(uint32_t grp)
{
	return 1 + grp / LFS_GPB;
}

int lfs_gd_get(struct fs *fs, uint32_t grp, struct lfs_gd *out)
{
	uint8_t buf[LFS_BS];
	int rc = ujbd_read(fs->fs_j, gd_block(grp), buf);

	if (!rc)
		memcpy(out, buf + (grp % LFS_GPB) * LFS_GD_SIZE, sizeof(*out));
	return rc;
}

int lfs_group_init(struct fs *fs, struct lfs_tx *tx, uint32_t grp)
{
	const struct lfs_geo *g = &fs->fs_geo;
	struct ujbd_buf *b;
	struct lfs_gd gd;
	uint8_t *p;
	int rc = lfs_gd_get(fs, grp, &gd);

	if (rc || !gd.g_flags)
		return rc;
	if (gd.g_flags & LFS_BG_BLOCK_UNINIT) {
		rc = lfs_tx_get(tx, lfs_group_meta(g, grp), true, &b);
		if (!rc) {
			lfs_init_block_bitmap(g, fs->fs_jmap, fs->fs_jn, grp, ujbd_buf_data(b));
			rc = lfs_tx_dirty(tx, b);
		}
	}
	if (!rc && (gd.g_flags & LFS_BG_INODE_UNINIT)) {
		rc = lfs_tx_get(tx, lfs_group_meta(g, grp) + 1, true, &b);
		if (!rc) {
			lfs_init_inode_bitmap(g, grp, ujbd_buf_data(b));
			rc = lfs_tx_dirty(tx, b);
		}
	}
	if (!rc)
		rc = lfs_tx_get(tx, gd_block(grp), false, &b);
	if (rc)
		return rc;
	p = (uint8_t *)ujbd_buf_data(b) + (grp % LFS_GPB) * LFS_GD_SIZE;
	memcpy(&gd, p, sizeof(gd));
	gd.g_flags = 0;
	memcpy(p, &gd, sizeof(gd));
	return lfs_tx_dirty(tx, b);
}

/* Add dfree/dinodes/ddirs to group grp's counters. */
static int gd_add(struct fs *fs, struct lfs_tx *tx, uint32_t grp, int dfree, int dinodes,
		  int ddirs)
{
	struct ujbd_buf *b;
	struct lfs_gd gd;
	uint8_t *p;
	int rc = lfs_tx_get(tx, gd_block(grp), false, &b);

	if (rc)
		return rc;
	p = (uint8_t *)ujbd_buf_data(b) + (grp % LFS_GPB) * LFS_GD_SIZE;
	memcpy(&gd, p, sizeof(gd));
	gd.g_free_blocks = (uint32_t)((int64_t)gd.g_free_blocks + dfree);
	gd.g_free_inodes = (uint32_t)((int64_t)gd.g_free_inodes + dinodes);
	gd.g_used_dirs = (uint32_t)((int64_t)gd.g_used_dirs + ddirs);
	memcpy(p, &gd, sizeof(gd));
	return lfs_tx_dirty(tx, b);
}

static uint32_t ino_group(const struct fs *fs, fs_ino_t ino)
{
	return (ino - 1) / fs->fs_geo.ipg;
}

uint64_t lfs_ino_goal(struct fs *fs, fs_ino_t ino)
{
	return lfs_group_data(&fs->fs_geo, ino_group(fs, ino));
}

/* Orlov for a top-level directory: fewest directories among the groups with
 * at least average free inodes and blocks; ties to the lowest group after
 * the parent's. */
static int group_spread(struct fs *fs, uint32_t *out)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint64_t free_i = 0, free_b = 0;
	uint32_t best = UINT32_MAX, best_dirs = UINT32_MAX;
	struct lfs_gd gd;
	int rc = 0;

	for (uint32_t i = 0; i < g->ngroups && !rc; i++) {
		rc = lfs_gd_get(fs, i, &gd);
		free_i += gd.g_free_inodes;
		free_b += gd.g_free_blocks;
	}
	for (uint32_t i = 0; i < g->ngroups && !rc; i++) {
		rc = lfs_gd_get(fs, i, &gd);
		if (rc || !gd.g_free_inodes)
			continue;
		if ((uint64_t)gd.g_free_inodes * g->ngroups < free_i ||
		    (uint64_t)gd.g_free_blocks * g->ngroups < free_b)
			continue;
		if (gd.g_used_dirs < best_dirs) {
			best = i;
			best_dirs = gd.g_used_dirs;
		}
	}
	if (rc)
		return rc;
	*out = best;
	return best == UINT32_MAX ? -ENOSPC : 0;
}

/* The parent's group if it has a free inode and free blocks, else the next
 * that has (ext3's find_group_other, linear). */
static int group_near(struct fs *fs, uint32_t pgrp, uint32_t *out)
{
	const struct lfs_geo *g = &fs->fs_geo;
	struct lfs_gd gd;

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < g->ngroups; k++) {
			uint32_t i = (pgrp + k) % g->ngroups;
			int rc = lfs_gd_get(fs, i, &gd);

			if (rc)
				return rc;
			if (gd.g_free_inodes && (pass || gd.g_free_blocks)) {
				*out = i;
				return 0;
			}
		}
	}
	return -ENOSPC;
}

/* ---- blocks freed but not yet committed ---- */

static bool pf_test(const struct fs *fs, uint64_t b)
{
	return fs->pf_bm && (fs->pf_bm[b / 8] & (1u << (b % 8)));
}

/* Forget the frees whose transaction has committed. */
static void pf_prune(struct fs *fs)
{
	ujbd_tid_t done;

	if (!fs->pf_n)
		return;
	done = ujbd_committed_tid(fs->fs_j);
	while (fs->pf_head < fs->pf_n && ujbd_tid_geq(done, fs->pf[fs->pf_head].tid)) {
		uint64_t b = fs->pf[fs->pf_head++].block;

		fs->pf_bm[b / 8] &= (uint8_t)~(1u << (b % 8));
	}
	if (fs->pf_head == fs->pf_n)
		fs->pf_head = fs->pf_n = 0;
}

static int pf_add(struct fs *fs, uint64_t b, ujbd_tid_t tid)
{
	if (!fs->pf_bm)
		return 0;
	if (fs->pf_n == fs->pf_cap) {
		if (fs->pf_head) {
			memmove(fs->pf, fs->pf + fs->pf_head,
				(fs->pf_n - fs->pf_head) * sizeof(*fs->pf));
			fs->pf_n -= fs->pf_head;
			fs->pf_head = 0;
		}
		if (fs->pf_n == fs->pf_cap) {
			size_t cap = fs->pf_cap ? 2 * fs->pf_cap : 1024;
			struct lfs_pfree *n = realloc(fs->pf, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			fs->pf = n;
			fs->pf_cap = cap;
		}
	}
	fs->pf[fs->pf_n++] = (struct lfs_pfree){ b, tid };
	fs->pf_bm[b / 8] |= (uint8_t)(1u << (b % 8));
	return 0;
}

/* 64 bits of a bitmap from byte p on, bit i of the result = bit i of the
 * map (bit i % 8 of byte i / 8). */
static uint64_t bm_word(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* First clear bit in [from, n) of a bitmap block, else -1; for a block
 * bitmap (base: its group's first block, else UINT64_MAX) a block freed by
 * an uncommitted transaction is not free yet. Whole 64-bit words at a
 * time where they are aligned: a group's bitmap fills from its start, a
 * deleted tree leaves thousands of such frees pending, and the allocator
 * scans from its goal once per block it takes. */
static int64_t bit_find(const struct fs *fs, const uint8_t *bm, uint32_t from, uint32_t n,
			uint64_t base)
{
	bool pf = base != UINT64_MAX && fs->pf_bm;

	for (uint32_t i = from; i < n; i++) {
		if (!(i % 64) && n - i >= 64 && (!pf || !((base + i) % 64))) {
			uint64_t w = bm_word(bm + i / 8);

			if (pf)
				w |= bm_word(fs->pf_bm + (base + i) / 8);
			if (w == UINT64_MAX) {
				i += 63;
				continue;
			}
			return i + (uint32_t)__builtin_ctzll(~w);
		}
		if (!(bm[i / 8] & (1u << (i % 8))) && (!pf || !pf_test(fs, base + i)))
			return i;
	}
	return -1;
}

static int bitmap_take(struct fs *fs, struct lfs_tx *tx, uint64_t block, uint32_t from,
		       uint32_t n, uint64_t base, int64_t *bit)
{
	struct ujbd_buf *b;
	uint8_t tmp[LFS_BS];
	int rc = ujbd_read(fs->fs_j, block, tmp);

	*bit = -1;
	if (rc)
		return rc;
	*bit = bit_find(fs, tmp, from, n, base);
	if (*bit < 0)
		return 0;
	rc = lfs_tx_get(tx, block, false, &b);
	if (rc)
		return rc;
	((uint8_t *)ujbd_buf_data(b))[*bit / 8] |= (uint8_t)(1u << (*bit % 8));
	return lfs_tx_dirty(tx, b);
}

static int bitmap_clear(struct lfs_tx *tx, uint64_t block, uint32_t bit)
{
	struct ujbd_buf *b;
	uint8_t *p;
	int rc = lfs_tx_get(tx, block, false, &b);

	if (rc)
		return rc;
	p = ujbd_buf_data(b);
	if (!(p[bit / 8] & (1u << (bit % 8)))) {
		ujbd_buf_put(b);
		return -EUCLEAN; /* freeing a free block: a model bug or a bad disk */
	}
	p[bit / 8] &= (uint8_t)~(1u << (bit % 8));
	return lfs_tx_dirty(tx, b);
}

int lfs_alloc_inode(struct fs *fs, struct lfs_tx *tx, fs_ino_t parent, bool dir,
		    fs_ino_t *out)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint32_t grp = 0, start;
	int64_t bit = -1;
	int rc;

	rc = dir && parent == LFS_ROOT_INO ? group_spread(fs, &grp) : -ENOSPC;
	/* Orlov may find no group above average in both inodes and blocks (a
	 * small file system: one group richer in each); ext3 then falls back
	 * to the linear search, as for any other inode */
	if (rc == -ENOSPC)
		rc = group_near(fs, ino_group(fs, parent), &grp);
	start = grp;
	while (!rc) {
		rc = lfs_group_init(fs, tx, grp);
		if (!rc)
			rc = bitmap_take(fs, tx, lfs_group_meta(g, grp) + 1, 0, g->ipg, UINT64_MAX,
					 &bit);
		if (rc || bit >= 0)
			break;
		grp = (grp + 1) % g->ngroups;
		if (grp == start)
			rc = -ENOSPC;
	}
	if (!rc)
		rc = gd_add(fs, tx, grp, 0, -1, dir ? 1 : 0);
	if (!rc)
		*out = grp * g->ipg + (fs_ino_t)bit + 1;
	return rc;
}

int lfs_free_inode(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, bool dir)
{
	uint32_t grp = ino_group(fs, ino);
	int rc = bitmap_clear(tx, lfs_group_meta(&fs->fs_geo, grp) + 1, (ino - 1) % fs->fs_geo.ipg);

	return rc ? rc : gd_add(fs, tx, grp, 0, 1, dir ? -1 : 0);
}

int lfs_alloc_block(struct fs *fs, struct lfs_tx *tx, uint64_t goal, uint64_t *out)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint32_t grp = (uint32_t)(goal / g->bpg), start;
	uint32_t from;
	struct lfs_gd gd;
	int64_t bit = -1;
	int rc = 0;

	if (goal >= g->blocks)
		grp = 0;
	from = goal >= g->blocks ? 0 : (uint32_t)(goal % g->bpg);
	start = grp;
	pf_prune(fs);
	for (;;) {
		rc = lfs_gd_get(fs, grp, &gd);
		if (!rc && gd.g_free_blocks)
			rc = lfs_group_init(fs, tx, grp);
		if (!rc && gd.g_free_blocks)
			rc = bitmap_take(fs, tx, lfs_group_meta(g, grp), from,
					 lfs_group_blocks(g, grp), lfs_group_base(g, grp), &bit);
		if (rc || bit >= 0)
			break;
		if (from) {          /* the part of the goal's group before it */
			from = 0;
			if (!rc && gd.g_free_blocks)
				rc = bitmap_take(fs, tx, lfs_group_meta(g, grp), 0,
						 lfs_group_blocks(g, grp), lfs_group_base(g, grp),
						 &bit);
			if (rc || bit >= 0)
				break;
		}
		grp = (grp + 1) % g->ngroups;
		if (grp == start)
			return -ENOSPC;
	}
	if (!rc)
		rc = gd_add(fs, tx, grp, -1, 0, 0);
	if (!rc)
		*out = lfs_group_base(g, grp) + (uint64_t)bit;
	return rc;
}

int lfs_free_block(struct fs *fs, struct lfs_tx *tx, uint64_t block, bool meta)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint32_t grp = (uint32_t)(block / g->bpg);
	int rc = 0;

	if (block < lfs_group_data(g, grp) || block >= g->blocks)
		return -EUCLEAN;
	if (meta || fs->fs_p.data_mode == UJBD_DATA_JOURNAL)
		rc = lfs_tx_revoke(tx, block);
	if (!rc)
		rc = bitmap_clear(tx, lfs_group_meta(g, grp), (uint32_t)(block % g->bpg));
	if (!rc)
		rc = pf_add(fs, block, ujbd_handle_tid(tx->h));
	return rc ? rc : gd_add(fs, tx, grp, 1, 0, 0);
}

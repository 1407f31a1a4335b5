/*
 * fs_fsck: the file-system model's checker, on an unmounted or recovered
 * image (read straight from the device, no journal).
 *
 * The one idea: every rule is stated from both sides, so that a lost or a
 * doubled update of any one block shows: each block an inode maps is
 * marked in the block bitmap and mapped once, and each marked data block is
 * mapped; each inode marked used is a file or directory named by as many
 * entries as its link count (a directory by exactly one, with a link count
 * of 2 + its subdirectories and ".." naming that entry's directory), and
 * each entry names a used inode; the group descriptors' counts are the
 * bitmaps'. Nothing read is trusted: every number is range-checked before
 * it is followed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"
#include "ujbd/dev.h"

struct ck {
	struct dev *d;
	struct lfs_geo g;
	struct lfs_gd *gd;
	uint8_t *bbm, *ibm;      /* all groups' bitmaps, LFS_BS each */
	uint8_t *seen;           /* blocks mapped so far, 1 bit each */
	uint32_t *refs, *subdirs;
	uint8_t *mode;           /* per inode: 0 unused, else lfs_mode */
	uint64_t ninodes, nblocks_mapped, nentries;
	uint64_t jfirst, jblocks;  /* the internal journal (superblock) */
	struct jbd_extent jmap[8]; /* ... its pieces */
	size_t jn;
	char *msg;
	size_t msglen;
};

static int ck_fail(struct ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ck_fail(struct ck *c, const char *fmt, ...)
{
	va_list ap;

	if (c->msg && c->msglen) {
		va_start(ap, fmt);
		vsnprintf(c->msg, c->msglen, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

static int ck_read(struct ck *c, uint64_t block, void *buf)
{
	int rc = dev_pread(c->d, buf, LFS_BS, block * LFS_BS);

	return rc < 0 ? -EIO : 0;
}

static bool bit(const uint8_t *bm, uint64_t i)
{
	return bm[i / 8] & (1u << (i % 8));
}

static bool ino_used(const struct ck *c, fs_ino_t ino)
{
	uint32_t grp = (ino - 1) / c->g.ipg;

	return bit(c->ibm + (size_t)grp * LFS_BS, (ino - 1) % c->g.ipg);
}

static int ck_inode(struct ck *c, fs_ino_t ino, struct lfs_inode *in)
{
	uint8_t buf[LFS_BS];
	uint32_t grp = (ino - 1) / c->g.ipg, idx = (ino - 1) % c->g.ipg;
	int rc = ck_read(c, lfs_group_meta(&c->g, grp) + 2 + idx / (LFS_BS / 128), buf);

	if (!rc)
		memcpy(in, buf + (idx % (LFS_BS / 128)) * 128, sizeof(*in));
	return rc;
}

/* ---- superblock, descriptors, bitmaps ---- */

static int ck_load(struct ck *c)
{
	uint8_t buf[LFS_BS];
	struct lfs_sb sb;
	int rc;

	/* empty or short: no superblock to read. No byte count: the device
	 * holds whole sectors of the file (none of a 100-byte one) */
	if (dev_size(c->d) < LFS_BS)
		return ck_fail(c, "superblock: not a valid lab file system (shorter than one "
			       "%u-byte block)", LFS_BS);
	rc = ck_read(c, 0, buf);
	if (rc)
		return rc;
	memcpy(&sb, buf, sizeof(sb));
	if (lfs_geo_from_sb(&sb, &c->g))
		return ck_fail(c, "superblock: not a valid lab file system");
	if (c->g.blocks * LFS_BS > dev_size(c->d))
		return ck_fail(c, "superblock: %llu blocks, device smaller",
			       (unsigned long long)c->g.blocks);
	c->jfirst = sb.s_journal_first;
	c->jblocks = sb.s_journal_blocks;
	if (c->jblocks) {
		c->jn = lfs_journal_map(&c->g, c->jfirst, c->jblocks, c->jmap, 8);
		if (!c->jn)
			return ck_fail(c, "superblock: journal of %llu blocks at %llu does not fit",
				       (unsigned long long)c->jblocks,
				       (unsigned long long)c->jfirst);
	}
	c->ninodes = (uint64_t)c->g.ngroups * c->g.ipg;
	c->gd = calloc(c->g.ngroups, sizeof(*c->gd));
	c->bbm = malloc((size_t)c->g.ngroups * LFS_BS);
	c->ibm = malloc((size_t)c->g.ngroups * LFS_BS);
	c->seen = calloc((c->g.blocks + 7) / 8, 1);
	c->refs = calloc(c->ninodes + 1, sizeof(*c->refs));
	c->subdirs = calloc(c->ninodes + 1, sizeof(*c->subdirs));
	c->mode = calloc(c->ninodes + 1, 1);
	if (!c->gd || !c->bbm || !c->ibm || !c->seen || !c->refs || !c->subdirs || !c->mode)
		return -ENOMEM;
	for (uint32_t grp = 0; grp < c->g.ngroups && !rc; grp++) {
		if (grp % LFS_GPB == 0)
			rc = ck_read(c, 1 + grp / LFS_GPB, buf);
		if (rc)
			break;
		memcpy(&c->gd[grp], buf + (grp % LFS_GPB) * LFS_GD_SIZE, sizeof(c->gd[grp]));
		uint64_t meta = lfs_group_meta(&c->g, grp);
		if (c->gd[grp].g_block_bitmap != meta || c->gd[grp].g_inode_bitmap != meta + 1 ||
		    c->gd[grp].g_inode_table != meta + 2)
			return ck_fail(c, "group %u: descriptor locations wrong", grp);
		if (c->gd[grp].g_flags & ~(LFS_BG_BLOCK_UNINIT | LFS_BG_INODE_UNINIT))
			return ck_fail(c, "group %u: unknown flags %#x", grp, c->gd[grp].g_flags);
		/* an uninit bitmap is what mkfs would have written */
		if (c->gd[grp].g_flags & LFS_BG_BLOCK_UNINIT)
			lfs_init_block_bitmap(&c->g, c->jmap, c->jn, grp,
					      c->bbm + (size_t)grp * LFS_BS);
		else
			rc = ck_read(c, meta, c->bbm + (size_t)grp * LFS_BS);
		if (rc)
			break;
		if (c->gd[grp].g_flags & LFS_BG_INODE_UNINIT)
			lfs_init_inode_bitmap(&c->g, grp, c->ibm + (size_t)grp * LFS_BS);
		else
			rc = ck_read(c, meta + 1, c->ibm + (size_t)grp * LFS_BS);
	}
	return rc;
}

/* ---- block maps ---- */

static int claim(struct ck *c, fs_ino_t ino, uint64_t b)
{
	uint32_t grp;

	if (b >= c->g.blocks)
		return ck_fail(c, "inode %u: block %llu beyond the end", ino, (unsigned long long)b);
	grp = (uint32_t)(b / c->g.bpg);
	if (b < lfs_group_data(&c->g, grp))
		return ck_fail(c, "inode %u: block %llu is group %u's metadata", ino,
			       (unsigned long long)b, grp);
	if (bit(c->seen, b))
		return ck_fail(c, "block %llu owned twice (second: inode %u)",
			       (unsigned long long)b, ino);
	if (!bit(c->bbm + (size_t)grp * LFS_BS, b % c->g.bpg))
		return ck_fail(c, "inode %u: block %llu mapped but free in the bitmap", ino,
			       (unsigned long long)b);
	c->seen[b / 8] |= (uint8_t)(1u << (b % 8));
	c->nblocks_mapped++;
	return 0;
}

/* The internal journal's blocks belong to its inode, as a file's do. */
static int ck_journal(struct ck *c)
{
	int rc = 0;

	for (size_t i = 0; i < c->jn && !rc; i++)
		for (uint64_t b = c->jmap[i].pblk; b < c->jmap[i].pblk + c->jmap[i].len && !rc; b++)
			rc = claim(c, LFS_JOURNAL_INO, b);
	return rc;
}

/* Walk an indirect block (depth 1: pointers to data); fb counts the file
 * blocks covered; visit(fb, pb) for data blocks. */
struct walk {
	struct ck *c;
	fs_ino_t ino;
	uint64_t data, last_fb;    /* data blocks; highest mapped file block + 1 */
	int (*visit)(struct walk *w, uint64_t fb, uint64_t pb);
	bool again;                /* second walk: blocks already claimed */
};

static int walk_data(struct walk *w, uint64_t fb, uint64_t pb)
{
	int rc = w->again ? 0 : claim(w->c, w->ino, pb);

	w->data++;
	if (fb + 1 > w->last_fb)
		w->last_fb = fb + 1;
	return rc ? rc : (w->visit ? w->visit(w, fb, pb) : 0);
}

static int walk_ind(struct walk *w, uint64_t blk, int depth, uint64_t fb0)
{
	uint32_t ptrs[LFS_PTRS];
	uint64_t span = depth > 1 ? LFS_PTRS : 1;
	int rc = w->again ? 0 : claim(w->c, w->ino, blk);

	if (!rc)
		rc = ck_read(w->c, blk, ptrs);
	for (uint32_t i = 0; i < LFS_PTRS && !rc; i++) {
		if (!ptrs[i])
			continue;
		if (depth > 1)
			rc = walk_ind(w, ptrs[i], depth - 1, fb0 + i * span);
		else
			rc = walk_data(w, fb0 + i, ptrs[i]);
	}
	return rc;
}

static int walk_inode(struct walk *w, const struct lfs_inode *in)
{
	int rc = 0;

	for (unsigned i = 0; i < LFS_NDIR && !rc; i++)
		if (in->i_block[i])
			rc = walk_data(w, i, in->i_block[i]);
	if (!rc && in->i_block[LFS_IND])
		rc = walk_ind(w, in->i_block[LFS_IND], 1, LFS_NDIR);
	if (!rc && in->i_block[LFS_DIND])
		rc = walk_ind(w, in->i_block[LFS_DIND], 2, LFS_NDIR + LFS_PTRS);
	return rc;
}

/* ---- inodes ---- */

static int ck_one_inode(struct ck *c, fs_ino_t ino)
{
	struct lfs_inode in;
	struct walk w = { .c = c, .ino = ino };
	int rc = ck_inode(c, ino, &in);

	if (rc)
		return rc;
	if (in.i_mode != LFS_FILE && in.i_mode != LFS_DIR)
		return ck_fail(c, "inode %u: used in the bitmap but mode %u", ino, in.i_mode);
	if (ino == LFS_ROOT_INO && in.i_mode != LFS_DIR)
		return ck_fail(c, "root inode is not a directory");
	c->mode[ino] = (uint8_t)in.i_mode;
	rc = walk_inode(&w, &in);
	if (rc)
		return rc;
	if (w.data != in.i_blocks)
		return ck_fail(c, "inode %u: maps %llu blocks, records %u", ino,
			       (unsigned long long)w.data, in.i_blocks);
	if (w.last_fb * LFS_BS > in.i_size + LFS_BS - 1 && w.last_fb)
		return ck_fail(c, "inode %u: block %llu mapped beyond size %llu", ino,
			       (unsigned long long)(w.last_fb - 1), (unsigned long long)in.i_size);
	if (in.i_mode == LFS_DIR && in.i_size % LFS_BS)
		return ck_fail(c, "dir %u: size %llu not whole blocks", ino,
			       (unsigned long long)in.i_size);
	return 0;
}

static int ck_inodes(struct ck *c)
{
	int rc = 0;

	if (!ino_used(c, LFS_ROOT_INO))
		return ck_fail(c, "root inode free in the bitmap");
	for (fs_ino_t ino = 1; ino <= c->ninodes && !rc; ino++) {
		if (ino < LFS_FIRST_INO && ino != LFS_ROOT_INO) {
			if (!ino_used(c, ino))
				return ck_fail(c, "reserved inode %u free in the bitmap", ino);
			continue;
		}
		if (ino_used(c, ino))
			rc = ck_one_inode(c, ino);
	}
	return rc;
}

/* ---- directories ---- */

static int visit_dirblock(struct walk *w, uint64_t fb, uint64_t pb)
{
	struct lfs_dirent de[LFS_DPB];
	struct ck *c = w->c;
	int rc = ck_read(c, pb, de);

	for (uint32_t i = 0; i < LFS_DPB && !rc; i++) {
		fs_ino_t t = de[i].d_ino;
		struct lfs_inode in;

		if (!t)
			continue;
		c->nentries++;
		if (de[i].d_len == 0 || de[i].d_len > LFS_NAME_MAX)
			return ck_fail(c, "dir %u: entry %u has a bad name length", w->ino, i);
		if (t > c->ninodes || !c->mode[t] || (t < LFS_FIRST_INO))
			return ck_fail(c, "dir %u: entry '%.*s' names unused inode %u", w->ino,
				       de[i].d_len, de[i].d_name, t);
		c->refs[t]++;
		if (c->mode[t] != LFS_DIR)
			continue;
		c->subdirs[w->ino]++;
		rc = ck_inode(c, t, &in);
		if (!rc && in.i_parent != w->ino)
			return ck_fail(c, "dir %u: '..' is %u, but it is named in dir %u", t,
				       in.i_parent, w->ino);
	}
	return rc;
}

static int ck_dirs(struct ck *c)
{
	int rc = 0;

	for (fs_ino_t ino = 1; ino <= c->ninodes && !rc; ino++) {
		struct lfs_inode in;
		struct walk w = { .c = c, .ino = ino, .visit = visit_dirblock, .again = true };

		if (c->mode[ino] != LFS_DIR)
			continue;
		rc = ck_inode(c, ino, &in);
		if (!rc)
			rc = walk_inode(&w, &in);
	}
	return rc;
}

/* ---- links and counts ---- */

static int ck_links(struct ck *c)
{
	for (fs_ino_t ino = 1; ino <= c->ninodes; ino++) {
		struct lfs_inode in;
		int rc;

		if (!c->mode[ino])
			continue;
		rc = ck_inode(c, ino, &in);
		if (rc)
			return rc;
		if (ino == LFS_ROOT_INO) {
			if (c->refs[ino])
				return ck_fail(c, "root named in a directory");
		} else if (!c->refs[ino]) {
			return ck_fail(c, "inode %u: used but named in no directory", ino);
		}
		if (c->mode[ino] == LFS_FILE && in.i_nlink != c->refs[ino])
			return ck_fail(c, "inode %u: %u links, %u entries", ino, in.i_nlink,
				       c->refs[ino]);
		if (c->mode[ino] == LFS_DIR && ino != LFS_ROOT_INO && c->refs[ino] != 1)
			return ck_fail(c, "dir %u: named %u times", ino, c->refs[ino]);
		if (c->mode[ino] == LFS_DIR && in.i_nlink != 2 + c->subdirs[ino])
			return ck_fail(c, "dir %u: %u links, %u subdirectories", ino, in.i_nlink,
				       c->subdirs[ino]);
	}
	return 0;
}

static int ck_group_counts(struct ck *c, uint32_t grp)
{
	const uint8_t *bb = c->bbm + (size_t)grp * LFS_BS, *ib = c->ibm + (size_t)grp * LFS_BS;
	uint64_t base = lfs_group_base(&c->g, grp), data = lfs_group_data(&c->g, grp) - base;
	uint32_t n = lfs_group_blocks(&c->g, grp), fb = 0, fi = 0, dirs = 0;

	for (uint32_t i = 0; i < n; i++) {
		bool used = bit(bb, i);

		if (i < data && !used)
			return ck_fail(c, "group %u: metadata block %llu free in the bitmap", grp,
				       (unsigned long long)(base + i));
		if (i >= data && used != bit(c->seen, base + i))
			return ck_fail(c, "block %llu: %s in the bitmap but %s",
				       (unsigned long long)(base + i), used ? "used" : "free",
				       used ? "mapped by no inode" : "mapped");
		fb += !used;
	}
	for (uint32_t i = 0; i < c->g.ipg; i++) {
		fs_ino_t ino = grp * c->g.ipg + i + 1;

		fi += !bit(ib, i);
		dirs += c->mode[ino] == LFS_DIR;
	}
	if (fb != c->gd[grp].g_free_blocks || fi != c->gd[grp].g_free_inodes ||
	    dirs != c->gd[grp].g_used_dirs)
		return ck_fail(c, "group %u: descriptor counts %u/%u/%u, bitmaps %u/%u/%u", grp,
			       c->gd[grp].g_free_blocks, c->gd[grp].g_free_inodes,
			       c->gd[grp].g_used_dirs, fb, fi, dirs);
	return 0;
}

static void ck_release(struct ck *c)
{
	free(c->gd);
	free(c->bbm);
	free(c->ibm);
	free(c->seen);
	free(c->refs);
	free(c->subdirs);
	free(c->mode);
}

int fs_fsck(struct dev *data, uint32_t block_size, char *msg, size_t msglen)
{
	struct ck c = { .d = data, .msg = msg, .msglen = msglen };
	int rc;

	if (!data || block_size != LFS_BS)
		return -EINVAL;
	if (msg && msglen)
		msg[0] = 0;
	rc = ck_load(&c);
	if (!rc)
		rc = ck_journal(&c);
	if (!rc)
		rc = ck_inodes(&c);
	if (!rc)
		rc = ck_dirs(&c);
	if (!rc)
		rc = ck_links(&c);
	for (uint32_t grp = 0; !rc && grp < c.g.ngroups; grp++)
		rc = ck_group_counts(&c, grp);
	if (!rc && msg && msglen)
		snprintf(msg, msglen, "clean: %u groups, %llu blocks mapped, %llu entries",
			 c.g.ngroups, (unsigned long long)c.nblocks_mapped,
			 (unsigned long long)c.nentries);
	ck_release(&c);
	return rc;
}

/*
 * The file-system model's namespace: mount, inodes, block maps,
 * directories, and the operations on names (mkdir, create, lookup, stat,
 * unlink, rename).
 *
 * The one idea: each operation is one journal handle that touches exactly
 * the blocks ext3 touches for it (the inode table block of each inode it
 * changes, the bitmaps and group descriptors of what it allocates or frees,
 * the directory blocks it edits, the indirect blocks it maps through), so
 * its journal traffic and its seeks are ext3's. Steps that can fail for
 * lack of space come before the steps that would leave something
 * unreferenced, so every handle leaves a consistent file system.
 *
 * Handles are started before fs_lock is taken and stopped after it is
 * released: ujbd_start may wait for a commit, and a commit may wait for a
 * handle whose thread waits for fs_lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"
#include "priv/blk.h"

/* ---- handles ---- */

int lfs_tx_start(struct fs *fs, struct lfs_tx *tx, unsigned credits)
{
	memset(tx, 0, sizeof(*tx));
	tx->credits = credits;
	__atomic_fetch_add(&fs->fs_st.handles, 1, __ATOMIC_RELAXED);
	return ujbd_start(fs->fs_j, credits, &tx->h);
}

int lfs_tx_stop(struct fs *fs, struct lfs_tx *tx)
{
	int rc = ujbd_stop(tx->h);

	tx->h = NULL;
	return rc;
}

/* A credit for a block this handle does not hold yet; more when short. */
static int tx_credit(struct lfs_tx *tx, uint64_t block)
{
	int rc;

	for (unsigned i = 0; i < tx->nseen; i++)
		if (tx->seen[i] == block)
			return 0;
	if (tx->nseen < 64)
		tx->seen[tx->nseen++] = block;
	else
		tx->seen_full = true;
	if (tx->used >= tx->credits) {
		rc = ujbd_extend(tx->h, 16);
		if (rc)
			return rc;
		tx->credits += 16;
	}
	tx->used++;
	return 0;
}

int lfs_tx_get(struct lfs_tx *tx, uint64_t block, bool create, struct ujbd_buf **out)
{
	int rc = tx_credit(tx, block);

	if (rc)
		return rc;
	return create ? ujbd_get_create_access(tx->h, block, out)
		      : ujbd_get_write_access(tx->h, block, out);
}

int lfs_tx_dirty(struct lfs_tx *tx, struct ujbd_buf *b)
{
	int rc = ujbd_dirty_metadata(tx->h, b);

	ujbd_buf_put(b);
	return rc;
}

/*
 * A freed block's journaled copies must not be replayed over its next use
 * (ext3 revoked freed metadata). One this handle holds is forgotten
 * instead (ujbd_revoke refuses it); when the handle's list overflowed, the
 * block is left alone rather than risk the refusal (a lost revoke costs
 * stale replayed contents of a free block, never consistency).
 */
int lfs_tx_revoke(struct lfs_tx *tx, uint64_t block)
{
	struct ujbd_buf *b;
	int rc;

	for (unsigned i = 0; i < tx->nseen; i++) {
		if (tx->seen[i] != block)
			continue;
		rc = ujbd_get_write_access(tx->h, block, &b);
		if (rc)
			return rc;
		rc = ujbd_forget(tx->h, b);
		ujbd_buf_put(b);
		return rc;
	}
	return tx->seen_full ? 0 : ujbd_revoke(tx->h, block);
}

void lfs_note_tid(struct fs *fs, fs_ino_t ino, struct lfs_tx *tx)
{
	if (fs->fs_itid && ino && ino <= fs->fs_ninodes)
		fs->fs_itid[ino - 1] = ujbd_handle_tid(tx->h);
}

/* ---- inodes ---- */

static int ino_where(struct fs *fs, fs_ino_t ino, uint64_t *block, uint32_t *off)
{
	const struct lfs_geo *g = &fs->fs_geo;
	uint32_t grp, idx;

	if (ino == 0 || ino > (uint64_t)g->ngroups * g->ipg)
		return -EUCLEAN;
	grp = (ino - 1) / g->ipg;
	idx = (ino - 1) % g->ipg;
	*block = lfs_group_meta(g, grp) + 2 + idx / (LFS_BS / 128);
	*off = (idx % (LFS_BS / 128)) * 128;
	return 0;
}

int lfs_iget(struct fs *fs, fs_ino_t ino, struct lfs_inode *out)
{
	uint8_t buf[LFS_BS];
	uint64_t block;
	uint32_t off;
	int rc = ino_where(fs, ino, &block, &off);

	if (!rc)
		rc = ujbd_read(fs->fs_j, block, buf);
	if (!rc)
		memcpy(out, buf + off, sizeof(*out));
	return rc;
}

int lfs_iput(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, const struct lfs_inode *in)
{
	struct ujbd_buf *b;
	uint64_t block;
	uint32_t off;
	int rc = ino_where(fs, ino, &block, &off);

	if (!rc)
		rc = lfs_tx_get(tx, block, false, &b);
	if (rc)
		return rc;
	memcpy((uint8_t *)ujbd_buf_data(b) + off, in, sizeof(*in));
	lfs_note_tid(fs, ino, tx);
	return lfs_tx_dirty(tx, b);
}

/* ---- block maps ---- */

static int ptr_read(struct fs *fs, uint64_t blk, uint32_t idx, uint64_t *out)
{
	uint8_t buf[LFS_BS];
	uint32_t v;
	int rc;

	if (blk >= fs->fs_geo.blocks)
		return -EUCLEAN;
	rc = ujbd_read(fs->fs_j, blk, buf);
	if (rc)
		return rc;
	memcpy(&v, buf + 4 * idx, 4);
	*out = v;
	return v < fs->fs_geo.blocks ? 0 : -EUCLEAN;
}

int lfs_bmap(struct fs *fs, const struct lfs_inode *in, uint64_t fb, uint64_t *pb)
{
	uint64_t ind;
	int rc;

	*pb = 0;
	if (fb < LFS_NDIR) {
		*pb = in->i_block[fb];
		return *pb < fs->fs_geo.blocks ? 0 : -EUCLEAN;
	}
	fb -= LFS_NDIR;
	if (fb < LFS_PTRS)
		return in->i_block[LFS_IND] ? ptr_read(fs, in->i_block[LFS_IND], (uint32_t)fb, pb) : 0;
	fb -= LFS_PTRS;
	if (fb >= (uint64_t)LFS_PTRS * LFS_PTRS || !in->i_block[LFS_DIND])
		return fb >= (uint64_t)LFS_PTRS * LFS_PTRS ? -EFBIG : 0;
	rc = ptr_read(fs, in->i_block[LFS_DIND], (uint32_t)(fb / LFS_PTRS), &ind);
	if (rc || !ind)
		return rc;
	return ptr_read(fs, ind, (uint32_t)(fb % LFS_PTRS), pb);
}

/* A new zeroed indirect block near goal. */
static int new_ind(struct fs *fs, struct lfs_tx *tx, uint64_t goal, uint64_t *out)
{
	struct ujbd_buf *b;
	int rc = lfs_alloc_block(fs, tx, goal, out);

	if (!rc)
		rc = lfs_tx_get(tx, *out, true, &b);
	return rc ? rc : lfs_tx_dirty(tx, b);
}

/* Slot idx of indirect block blk: its value, allocated (data: next to
 * *goal; counted) when 0. */
static int ptr_alloc(struct fs *fs, struct lfs_tx *tx, uint64_t blk, uint32_t idx,
		     uint64_t *goal, bool is_ind, uint64_t *out, bool *fresh)
{
	struct ujbd_buf *b;
	uint64_t nb;
	uint32_t v;
	int rc = ptr_read(fs, blk, idx, out);

	if (rc || *out)
		return rc;
	rc = is_ind ? new_ind(fs, tx, *goal, &nb) : lfs_alloc_block(fs, tx, *goal, &nb);
	if (!rc)
		rc = lfs_tx_get(tx, blk, false, &b);
	if (rc)
		return rc;
	v = (uint32_t)nb;
	memcpy((uint8_t *)ujbd_buf_data(b) + 4 * idx, &v, 4);
	*out = nb;
	*goal = nb + 1;
	*fresh = !is_ind;
	return lfs_tx_dirty(tx, b);
}

/* The goal for file block fb: after the block before it, else the start of
 * the inode's group's data area. */
static uint64_t block_goal(struct fs *fs, fs_ino_t ino, const struct lfs_inode *in,
			   uint64_t fb)
{
	uint64_t prev = 0;

	if (fb > 0 && lfs_bmap(fs, in, fb - 1, &prev) == 0 && prev)
		return prev + 1;
	return lfs_ino_goal(fs, ino);
}

int lfs_bmap_alloc(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, struct lfs_inode *in,
		   uint64_t fb, uint64_t *pb, bool *fresh)
{
	uint64_t goal, top, ind, rel;
	int rc = lfs_bmap(fs, in, fb, pb);

	*fresh = false;
	if (rc || *pb)
		return rc;
	goal = block_goal(fs, ino, in, fb);
	if (fb < LFS_NDIR) {
		rc = lfs_alloc_block(fs, tx, goal, pb);
		if (!rc) {
			in->i_block[fb] = (uint32_t)*pb;
			*fresh = true;
		}
		goto out;
	}
	rel = fb - LFS_NDIR;
	unsigned slot = rel < LFS_PTRS ? LFS_IND : LFS_DIND;
	if (!in->i_block[slot]) {
		rc = new_ind(fs, tx, goal, &top);
		if (rc)
			return rc;
		in->i_block[slot] = (uint32_t)top;
		goal = top + 1;
	}
	top = in->i_block[slot];
	if (slot == LFS_IND) {
		rc = ptr_alloc(fs, tx, top, (uint32_t)rel, &goal, false, pb, fresh);
	} else {
		rel -= LFS_PTRS;
		rc = ptr_alloc(fs, tx, top, (uint32_t)(rel / LFS_PTRS), &goal, true, &ind, fresh);
		if (!rc)
			rc = ptr_alloc(fs, tx, ind, (uint32_t)(rel % LFS_PTRS), &goal, false, pb,
				       fresh);
	}
out:
	if (!rc && *fresh)
		in->i_blocks++;
	return rc;
}

/* Free the blocks an indirect block maps (depth 1: data; 2: indirect). */
static int free_ind(struct fs *fs, struct lfs_tx *tx, uint64_t blk, int depth, bool dir)
{
	uint32_t ptrs[LFS_PTRS];
	int rc = blk < fs->fs_geo.blocks ? ujbd_read(fs->fs_j, blk, ptrs) : -EUCLEAN;

	for (uint32_t i = 0; i < LFS_PTRS && !rc; i++) {
		if (!ptrs[i])
			continue;
		rc = depth > 1 ? free_ind(fs, tx, ptrs[i], depth - 1, dir) : 0;
		if (!rc)
			rc = lfs_free_block(fs, tx, ptrs[i], depth > 1 || dir);
	}
	return rc;
}

int lfs_free_blocks(struct fs *fs, struct lfs_tx *tx, struct lfs_inode *in)
{
	bool dir = in->i_mode == LFS_DIR;
	int rc = 0;

	for (unsigned i = 0; i < LFS_NBLOCK && !rc; i++) {
		bool ind = i == LFS_IND || i == LFS_DIND;

		if (!in->i_block[i])
			continue;
		if (ind)
			rc = free_ind(fs, tx, in->i_block[i], i == LFS_IND ? 1 : 2, dir);
		if (!rc)
			rc = lfs_free_block(fs, tx, in->i_block[i], ind || dir);
		in->i_block[i] = 0;
	}
	in->i_blocks = 0;
	in->i_size = 0;
	return rc;
}

/* ---- directories ---- */

struct dslot {
	uint64_t pblock;
	uint32_t idx;
	fs_ino_t ino;
};

/* Find name in dir (slot->ino = 0 when absent); free, if not NULL, gets the
 * first free slot (pblock 0 when none). */
static int dir_scan(struct fs *fs, const struct lfs_inode *dir, const char *name, size_t len,
		    struct dslot *slot, struct dslot *free_slot)
{
	struct lfs_dirent de[LFS_DPB];
	uint64_t nb = dir->i_size / LFS_BS, pb;
	int rc = 0;

	memset(slot, 0, sizeof(*slot));
	if (free_slot)
		memset(free_slot, 0, sizeof(*free_slot));
	for (uint64_t fb = 0; fb < nb && !rc; fb++) {
		rc = lfs_bmap(fs, dir, fb, &pb);
		if (rc || !pb)
			continue;
		rc = ujbd_read(fs->fs_j, pb, de);
		for (uint32_t i = 0; i < LFS_DPB && !rc; i++) {
			if (!de[i].d_ino) {
				if (free_slot && !free_slot->pblock)
					*free_slot = (struct dslot){ pb, i, 0 };
				continue;
			}
			if (name && de[i].d_len == len && !memcmp(de[i].d_name, name, len)) {
				*slot = (struct dslot){ pb, i, de[i].d_ino };
				return 0;
			}
		}
	}
	return rc;
}

static int dir_set(struct lfs_tx *tx, const struct dslot *s, fs_ino_t ino, const char *name,
		   size_t len)
{
	struct ujbd_buf *b;
	struct lfs_dirent *de;
	int rc = lfs_tx_get(tx, s->pblock, false, &b);

	if (rc)
		return rc;
	de = (struct lfs_dirent *)ujbd_buf_data(b) + s->idx;
	memset(de, 0, sizeof(*de));
	if (ino) {
		de->d_ino = ino;
		de->d_len = (uint8_t)len;
		memcpy(de->d_name, name, len);
	}
	return lfs_tx_dirty(tx, b);
}

/* A free slot in dir, adding a block at its end when it has none. */
static int dir_room(struct fs *fs, struct lfs_tx *tx, fs_ino_t dino, struct lfs_inode *dir,
		    struct dslot *fs_slot)
{
	struct ujbd_buf *b;
	struct dslot found;
	uint64_t pb;
	bool fresh;
	int rc = dir_scan(fs, dir, NULL, 0, &found, fs_slot);

	if (rc || fs_slot->pblock)
		return rc;
	rc = lfs_bmap_alloc(fs, tx, dino, dir, dir->i_size / LFS_BS, &pb, &fresh);
	if (!rc)
		rc = lfs_tx_get(tx, pb, true, &b);
	if (!rc)
		rc = lfs_tx_dirty(tx, b);
	if (rc)
		return rc;
	dir->i_size += LFS_BS;
	*fs_slot = (struct dslot){ pb, 0, 0 };
	return lfs_iput(fs, tx, dino, dir);
}

static bool dir_is_empty(struct fs *fs, const struct lfs_inode *dir)
{
	struct lfs_dirent de[LFS_DPB];
	uint64_t pb;

	for (uint64_t fb = 0; fb < dir->i_size / LFS_BS; fb++) {
		if (lfs_bmap(fs, dir, fb, &pb) || !pb || ujbd_read(fs->fs_j, pb, de))
			return false;
		for (uint32_t i = 0; i < LFS_DPB; i++)
			if (de[i].d_ino)
				return false;
	}
	return true;
}

/* ---- paths ---- */

/* Split path: the parent directory's inode and the last name. */
static int path_parent(struct fs *fs, const char *path, fs_ino_t *parent,
		       const char **name, size_t *len)
{
	fs_ino_t cur = LFS_ROOT_INO;
	const char *p = path;

	if (!path || path[0] != '/')
		return -EINVAL;
	for (;;) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *rest = p + n;

		while (*rest == '/')
			rest++;
		if (n > LFS_NAME_MAX)
			return -ENAMETOOLONG;
		if (!*rest) {
			*parent = cur;
			*name = p;
			*len = n;
			return 0;
		}
		struct lfs_inode d;
		struct dslot s;
		int rc = lfs_iget(fs, cur, &d);
		if (!rc && d.i_mode != LFS_DIR)
			rc = -ENOTDIR;
		if (!rc)
			rc = dir_scan(fs, &d, p, n, &s, NULL);
		if (rc)
			return rc;
		if (!s.ino)
			return -ENOENT;
		cur = s.ino;
		p = rest;
	}
}

/* Resolve a whole path (the root has an empty last name). */
static int path_resolve(struct fs *fs, const char *path, fs_ino_t *ino, fs_ino_t *parent,
			struct dslot *slot)
{
	struct lfs_inode d;
	const char *name;
	size_t len;
	int rc = path_parent(fs, path, parent, &name, &len);

	if (rc)
		return rc;
	if (!len) {
		*ino = *parent;
		memset(slot, 0, sizeof(*slot));
		return 0;
	}
	rc = lfs_iget(fs, *parent, &d);
	if (!rc && d.i_mode != LFS_DIR)
		rc = -ENOTDIR;
	if (!rc)
		rc = dir_scan(fs, &d, name, len, slot, NULL);
	if (!rc && !slot->ino)
		rc = -ENOENT;
	if (!rc)
		*ino = slot->ino;
	return rc;
}

/* ---- operations ---- */

/* The operation's CPU is spent inside its handle, as ext3's was (the
 * namei, allocation and directory work between journal_start and stop):
 * a task waiting for a CPU holds its handle meanwhile. */
static int op_begin(struct fs *fs, struct lfs_tx *tx, unsigned credits)
{
	int rc;

	rc = lfs_tx_start(fs, tx, credits);
	if (!rc) {
		rt_cpu(fs->fs_p.cpu_op_ns);
		rt_mutex_lock(&fs->fs_lock);
	}
	return rc;
}

static int op_end(struct fs *fs, struct lfs_tx *tx, int rc)
{
	int s;

	rt_mutex_unlock(&fs->fs_lock);
	s = lfs_tx_stop(fs, tx);
	return rc ? rc : s;
}

static unsigned free_credits(const struct fs *fs)
{
	uint32_t n = fs->fs_geo.ngroups < 16 ? fs->fs_geo.ngroups : 16;

	return 2 * n + fs->fs_geo.gdt_blocks;
}

/* A new inode named name in parent (a directory with its first block when
 * dir). Order: room in the parent first, then the inode, then the entry. */
static int make_node(struct fs *fs, struct lfs_tx *tx, fs_ino_t pino, const char *name,
		     size_t len, bool dir, fs_ino_t *out)
{
	struct lfs_inode parent, in = { 0 };
	struct dslot s, room;
	fs_ino_t ino = 0;
	uint64_t now = lfs_now(fs), pb;
	bool fresh;
	int rc = lfs_iget(fs, pino, &parent);

	if (!rc && parent.i_mode != LFS_DIR)
		rc = -ENOTDIR;
	if (!rc)
		rc = dir_scan(fs, &parent, name, len, &s, NULL);
	if (!rc && s.ino)
		rc = -EEXIST;
	if (!rc && !len)
		rc = -EEXIST;
	if (!rc)
		rc = dir_room(fs, tx, pino, &parent, &room);
	if (!rc)
		rc = lfs_alloc_inode(fs, tx, pino, dir, &ino);
	if (rc)
		return rc;
	in.i_mode = dir ? LFS_DIR : LFS_FILE;
	in.i_nlink = dir ? 2 : 1;
	in.i_gen = ++fs->fs_gen;
	in.i_parent = pino;
	in.i_atime_ns = in.i_mtime_ns = in.i_ctime_ns = now;
	if (dir) {
		struct ujbd_buf *b;

		rc = lfs_bmap_alloc(fs, tx, ino, &in, 0, &pb, &fresh);
		if (!rc)
			rc = lfs_tx_get(tx, pb, true, &b);
		if (!rc)
			rc = lfs_tx_dirty(tx, b);
		in.i_size = LFS_BS;
		parent.i_nlink++;
	}
	if (!rc)
		rc = lfs_iput(fs, tx, ino, &in);
	if (!rc)
		rc = dir_set(tx, &room, ino, name, len);
	parent.i_mtime_ns = parent.i_ctime_ns = now;
	if (!rc)
		rc = lfs_iput(fs, tx, pino, &parent);
	if (!rc && out)
		*out = ino;
	return rc;
}

int fs_mkdir(struct fs *fs, const char *path)
{
	struct lfs_tx tx;
	fs_ino_t pino;
	const char *name;
	size_t len;
	int rc = op_begin(fs, &tx, 24);

	if (rc)
		return rc;
	rc = path_parent(fs, path, &pino, &name, &len);
	if (!rc)
		rc = make_node(fs, &tx, pino, name, len, true, NULL);
	return op_end(fs, &tx, rc);
}

/* Truncate a file to 0 (O_TRUNC). */
static int truncate_node(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino)
{
	struct lfs_inode in;
	int rc = lfs_iget(fs, ino, &in);

	if (rc)
		return rc;
	if (in.i_mode != LFS_FILE)
		return -EISDIR;
	lfs_pc_truncate(fs, ino, 0, (in.i_size + LFS_BS - 1) / LFS_BS, ujbd_handle_tid(tx->h));
	if (!in.i_size && !in.i_blocks)
		return 0;
	rc = lfs_free_blocks(fs, tx, &in);
	in.i_mtime_ns = in.i_ctime_ns = lfs_now(fs);
	return rc ? rc : lfs_iput(fs, tx, ino, &in);
}

int fs_create(struct fs *fs, const char *path, fs_ino_t *ino)
{
	struct lfs_tx tx;
	struct dslot s;
	fs_ino_t pino, got = 0;
	int rc = op_begin(fs, &tx, 24 + free_credits(fs));

	if (rc)
		return rc;
	rc = path_resolve(fs, path, &got, &pino, &s);
	if (!rc) {
		rc = truncate_node(fs, &tx, got);
	} else if (rc == -ENOENT) {
		const char *name;
		size_t len;

		rc = path_parent(fs, path, &pino, &name, &len);
		if (!rc)
			rc = make_node(fs, &tx, pino, name, len, false, &got);
	}
	if (!rc && ino)
		*ino = got;
	return op_end(fs, &tx, rc);
}

int fs_lookup(struct fs *fs, const char *path, fs_ino_t *ino)
{
	struct dslot s;
	fs_ino_t pino, got = 0;
	int rc;

	rt_cpu(fs->fs_p.cpu_op_ns);
	rt_mutex_lock(&fs->fs_lock);
	rc = path_resolve(fs, path, &got, &pino, &s);
	rt_mutex_unlock(&fs->fs_lock);
	if (!rc && ino)
		*ino = got;
	return rc;
}

int fs_stat(struct fs *fs, const char *path, struct fs_stat *st)
{
	struct lfs_inode in;
	struct dslot s;
	fs_ino_t pino, ino = 0;
	int rc;

	rt_cpu(fs->fs_p.cpu_op_ns);
	rt_mutex_lock(&fs->fs_lock);
	rc = path_resolve(fs, path, &ino, &pino, &s);
	if (!rc)
		rc = lfs_iget(fs, ino, &in);
	rt_mutex_unlock(&fs->fs_lock);
	if (rc)
		return rc;
	*st = (struct fs_stat){ .ino = ino, .dir = in.i_mode == LFS_DIR, .size = in.i_size,
				 .blocks = in.i_blocks, .atime_ns = in.i_atime_ns,
				 .mtime_ns = in.i_mtime_ns, .ctime_ns = in.i_ctime_ns,
				 .nlink = in.i_nlink };
	return 0;
}

/* Drop one link to ino (the entry is already gone); free it at 0. */
static int drop_link(struct fs *fs, struct lfs_tx *tx, fs_ino_t pino, fs_ino_t ino)
{
	struct lfs_inode in, parent;
	bool dir;
	int rc = lfs_iget(fs, ino, &in);

	if (rc)
		return rc;
	dir = in.i_mode == LFS_DIR;
	if (dir || in.i_nlink <= 1) {
		lfs_pc_truncate(fs, ino, 0, (in.i_size + LFS_BS - 1) / LFS_BS, ujbd_handle_tid(tx->h));
		rc = lfs_free_blocks(fs, tx, &in);
		memset(&in, 0, sizeof(in));
		if (!rc)
			rc = lfs_iput(fs, tx, ino, &in);
		if (!rc)
			rc = lfs_free_inode(fs, tx, ino, dir);
	} else {
		in.i_nlink--;
		in.i_ctime_ns = lfs_now(fs);
		rc = lfs_iput(fs, tx, ino, &in);
	}
	if (rc || !dir)
		return rc;
	rc = lfs_iget(fs, pino, &parent);
	parent.i_nlink--;
	return rc ? rc : lfs_iput(fs, tx, pino, &parent);
}

int fs_unlink(struct fs *fs, const char *path)
{
	struct lfs_inode in, parent;
	struct lfs_tx tx;
	struct dslot s;
	fs_ino_t pino, ino;
	int rc = op_begin(fs, &tx, 12 + free_credits(fs));

	if (rc)
		return rc;
	rc = path_resolve(fs, path, &ino, &pino, &s);
	if (!rc && ino == LFS_ROOT_INO)
		rc = -EBUSY;
	if (!rc)
		rc = lfs_iget(fs, ino, &in);
	if (!rc && in.i_mode == LFS_DIR && !dir_is_empty(fs, &in))
		rc = -ENOTEMPTY;
	if (!rc)
		rc = dir_set(&tx, &s, 0, NULL, 0);
	if (!rc)
		rc = lfs_iget(fs, pino, &parent);
	if (!rc) {
		parent.i_mtime_ns = parent.i_ctime_ns = lfs_now(fs);
		rc = lfs_iput(fs, &tx, pino, &parent);
	}
	if (!rc)
		rc = drop_link(fs, &tx, pino, ino);
	return op_end(fs, &tx, rc);
}

/* Is dir `anc` an ancestor of (or equal to) dir ino? */
static int is_ancestor(struct fs *fs, fs_ino_t anc, fs_ino_t ino, bool *out)
{
	struct lfs_inode in;

	for (unsigned depth = 0; depth < 4096; depth++) {
		if (ino == anc) {
			*out = true;
			return 0;
		}
		if (ino == LFS_ROOT_INO)
			break;
		int rc = lfs_iget(fs, ino, &in);
		if (rc)
			return rc;
		ino = in.i_parent;
	}
	*out = false;
	return 0;
}

/* Checks before a rename changes anything. */
static int rename_check(struct fs *fs, fs_ino_t ino, fs_ino_t tpino, fs_ino_t tino)
{
	struct lfs_inode in, tin;
	bool loop = false;
	int rc = lfs_iget(fs, ino, &in);

	if (!rc && in.i_mode == LFS_DIR)
		rc = is_ancestor(fs, ino, tpino, &loop);
	if (!rc && loop)
		rc = -EINVAL;
	if (rc || !tino)
		return rc;
	rc = lfs_iget(fs, tino, &tin);
	if (!rc && (in.i_mode == LFS_DIR) != (tin.i_mode == LFS_DIR))
		rc = in.i_mode == LFS_DIR ? -ENOTDIR : -EISDIR;
	if (!rc && tin.i_mode == LFS_DIR && !dir_is_empty(fs, &tin))
		rc = -ENOTEMPTY;
	return rc;
}

/* The moved directory's ".." and its parents' link counts. */
static int rename_reparent(struct fs *fs, struct lfs_tx *tx, fs_ino_t ino, fs_ino_t from,
			   fs_ino_t to)
{
	struct lfs_inode in, p;
	int rc = lfs_iget(fs, ino, &in);

	if (rc || in.i_mode != LFS_DIR || from == to)
		return rc;
	in.i_parent = to;
	rc = lfs_iput(fs, tx, ino, &in);
	if (!rc)
		rc = lfs_iget(fs, from, &p);
	p.i_nlink--;
	if (!rc)
		rc = lfs_iput(fs, tx, from, &p);
	if (!rc)
		rc = lfs_iget(fs, to, &p);
	p.i_nlink++;
	return rc ? rc : lfs_iput(fs, tx, to, &p);
}

static int do_rename(struct fs *fs, struct lfs_tx *tx, const char *from, const char *to)
{
	struct lfs_inode tp;
	struct dslot s, ts, room;
	fs_ino_t pino, ino, tpino;
	const char *name;
	size_t len;
	int rc = path_resolve(fs, from, &ino, &pino, &s);

	if (!rc && ino == LFS_ROOT_INO)
		rc = -EBUSY;
	if (!rc)
		rc = path_parent(fs, to, &tpino, &name, &len);
	if (!rc && !len)
		rc = -EBUSY;
	if (!rc)
		rc = lfs_iget(fs, tpino, &tp);
	if (!rc && tp.i_mode != LFS_DIR)
		rc = -ENOTDIR;
	if (!rc)
		rc = dir_scan(fs, &tp, name, len, &ts, NULL);
	if (rc)
		return rc;
	if (ts.ino == ino)
		return 0;
	rc = rename_check(fs, ino, tpino, ts.ino);
	if (!rc && !ts.ino)
		rc = dir_room(fs, tx, tpino, &tp, &room);
	if (rc)
		return rc;
	rc = dir_set(tx, ts.ino ? &ts : &room, ino, name, len);
	if (!rc)
		rc = dir_set(tx, &s, 0, NULL, 0);
	if (!rc)
		rc = rename_reparent(fs, tx, ino, pino, tpino);
	if (!rc && ts.ino)
		rc = drop_link(fs, tx, tpino, ts.ino);
	return rc;
}

int fs_rename(struct fs *fs, const char *from, const char *to)
{
	struct lfs_tx tx;
	int rc = op_begin(fs, &tx, 24 + free_credits(fs));

	if (rc)
		return rc;
	rc = do_rename(fs, &tx, from, to);
	return op_end(fs, &tx, rc);
}

/* ---- mount ---- */

int fs_mount(struct ujbd *j, struct blk_queue *data_q, const struct fs_params *p,
		 struct fs **out)
{
	uint8_t buf[LFS_BS];
	struct lfs_sb sb;
	struct fs *fs;
	int rc;

	if (!j || !data_q || !p || !out || ujbd_block_size(j) != LFS_BS)
		return -EINVAL;
	rc = ujbd_read(j, 0, buf);
	if (rc)
		return rc;
	memcpy(&sb, buf, sizeof(sb));
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->fs_j = j;
	fs->fs_q = data_q;
	fs->fs_p = *p;
	rc = lfs_geo_from_sb(&sb, &fs->fs_geo);
	if (!rc && fs->fs_geo.blocks > ujbd_data_blocks(j))
		rc = -EUCLEAN;
	if (!rc && sb.s_journal_blocks) { /* an uninit group's bitmap marks it */
		fs->fs_jn = lfs_journal_map(&fs->fs_geo, sb.s_journal_first, sb.s_journal_blocks,
					    fs->fs_jmap, 8);
		rc = fs->fs_jn ? 0 : -EUCLEAN;
	}
	fs->fs_ninodes = (uint64_t)fs->fs_geo.ngroups * fs->fs_geo.ipg;
	if (!rc) {
		fs->fs_itid = calloc(fs->fs_ninodes, sizeof(*fs->fs_itid));
		fs->fs_ra_next = calloc(fs->fs_ninodes, sizeof(*fs->fs_ra_next));
		fs->fs_ino_pages = calloc(fs->fs_ninodes, sizeof(*fs->fs_ino_pages));
		fs->fs_ino_wb = calloc(fs->fs_ninodes, sizeof(*fs->fs_ino_wb));
		fs->pf_bm = calloc((fs->fs_geo.blocks + 7) / 8, 1);
		rc = fs->fs_itid && fs->fs_ra_next && fs->fs_ino_pages && fs->fs_ino_wb &&
		     fs->pf_bm ? 0 : -ENOMEM;
	}
	if (!rc)
		rc = rt_mutex_init(&fs->fs_lock, "fs_lock");
	if (!rc)
		rc = lfs_pc_init(fs);
	if (!rc)
		rc = lfs_pdflush_start(fs);
	if (!rc) /* ordered data: each commit writes what is left of it */
		ujbd_set_data_hook(j, lfs_ordered_hook, fs);
	if (rc) {
		free(fs->fs_itid);
		free(fs->fs_ra_next);
		free(fs->fs_ino_pages);
		free(fs->fs_ino_wb);
		free(fs->pf_bm);
		free(fs);
		return rc;
	}
	*out = fs;
	return 0;
}

int fs_unmount(struct fs *fs)
{
	int rc, s;

	if (!fs)
		return -EINVAL;
	rc = lfs_pc_sync(fs);
	lfs_pdflush_stop(fs);
	s = ujbd_sync(fs->fs_j);
	ujbd_set_data_hook(fs->fs_j, NULL, NULL);
	lfs_pc_release(fs);
	rt_mutex_release(&fs->fs_lock);
	free(fs->fs_itid);
	free(fs->fs_ra_next);
	free(fs->fs_ino_pages);
	free(fs->fs_ino_wb);
	free(fs->pf_bm);
	free(fs->pf);
	free(fs);
	return rc ? rc : s;
}

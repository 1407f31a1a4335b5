/*
 * open_path.c: ujbd_open_path, the journal runtime opened by file names.
 *
 * The one idea: the runtime only wants a struct jbd_loc (journal device +
 * map + data device); this file builds one from paths, as the tools' TARGET
 * resolution does, with src/ext4 for ext4 images:
 *   - an ext4 image with an internal journal: map = inode 8's extents,
 *     data device = the image; ext4's needs_recovery is set while the
 *     journal is open and cleared by a clean close (a crash leaves it set,
 *     so e2fsck and the kernel replay);
 *   - an ext4 image with an external journal: journal_path names the
 *     journal device (its uuid must match), identity map;
 *   - a journal device or a standalone journal file (jbd2 magic in block
 *     0, or any file when formatting): identity map, data device data_path.
 * Real world only (files).
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "jbd/runtime.h"
#include "ujbd/ext4.h"

struct jbd_path_ctx {
	struct dev *jdev, *ddev;
	struct ext4_journal ej, jd;
	struct jbd_extent ident;
	struct jbd_loc loc;
	const char *ext4_path;      /* set: an ext4 image whose flag we own */
	char *path_copy;
};

static int open_file(const char *path, uint64_t create_size, struct dev **out,
		     struct jbd_err *err)
{
	struct dev_file_opts o = { .create = create_size != 0, .size = create_size };
	int rc = dev_file_open(path, &o, out);

	if (rc)
		return jbd_err_set(err, rc, "cannot open '%s': %s", path, strerror(-rc));
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int path_internal(struct jbd_path_ctx *c, const char *target, struct jbd_err *err)
{
	int rc = open_file(target, 0, &c->jdev, err);

	if (rc)
		return rc;
	c->loc = (struct jbd_loc){ .j_dev = c->jdev, .j_blocksize = c->ej.blocksize,
				   .j_map = c->ej.map, .j_nmap = c->ej.nmap,
				   .j_len = c->ej.journal_blocks, .j_sb_block = 0,
				   .j_data = c->jdev, .j_data_blocks = c->ej.fs_blocks };
	c->ext4_path = target;
	return 0;
}

/* A journal device (identity map, superblock at jd->sb_block). */
static int path_identity(struct jbd_path_ctx *c, const char *path, uint32_t bs,
			 uint64_t sb_block, uint64_t create_size, struct jbd_err *err)
{
	int rc = open_file(path, create_size, &c->jdev, err);

	if (rc)
		return rc;
	c->ident = (struct jbd_extent){ 0, 0, dev_size(c->jdev) / bs };
	c->loc = (struct jbd_loc){ .j_dev = c->jdev, .j_blocksize = bs, .j_map = &c->ident,
				   .j_nmap = 1, .j_len = c->ident.len, .j_sb_block = sb_block };
	return 0;
}

static int path_data(struct jbd_path_ctx *c, const char *jpath, const char *data_path,
		     struct jbd_err *err)
{
	int rc;

	if (!data_path)
		return jbd_err_set(err, -EINVAL, "'%s' is a standalone journal: it needs a data device",
				   jpath);
	if (same_file(jpath, data_path)) {
		c->loc.j_data = c->jdev;
	} else {
		rc = open_file(data_path, 0, &c->ddev, err);
		if (rc)
			return rc;
		c->loc.j_data = c->ddev;
	}
	c->loc.j_data_blocks = dev_size(c->loc.j_data) / c->loc.j_blocksize;
	return 0;
}

static int path_external(struct jbd_path_ctx *c, const char *target, const char *jpath,
			 struct jbd_err *err)
{
	int rc;

	if (!jpath)
		return jbd_err_set(err, -EINVAL, "'%s' has an external journal: name its device",
				   target);
	rc = ext4_probe(jpath, &c->jd, err);
	if (rc)
		return rc;
	if (c->jd.kind != EXT4_JOURNAL_DEV || memcmp(c->jd.journal_uuid, c->ej.journal_uuid, 16))
		return jbd_err_set(err, -EINVAL, "'%s' is not the journal device of '%s'", jpath,
				   target);
	rc = path_identity(c, jpath, c->jd.blocksize, c->jd.sb_block, 0, err);
	if (!rc)
		rc = open_file(target, 0, &c->ddev, err);
	if (rc)
		return rc;
	c->loc.j_data = c->ddev;
	c->loc.j_data_blocks = c->ej.fs_blocks;
	c->ext4_path = target;
	return 0;
}

/* Block size of a standalone journal: its superblock's, or the format's. */
static int standalone_bs(const char *path, const struct ujbd_opts *o, uint32_t *bs,
			 uint64_t *create, struct jbd_err *err)
{
	struct jbd2_sb sb;
	struct dev *d;
	int rc;

	*create = 0;
	if (o->format) {
		*bs = o->format_opts.blocksize ? o->format_opts.blocksize : 4096;
		*create = o->format_opts.blocks * *bs;
		return 0;
	}
	rc = open_file(path, 0, &d, err);
	if (rc)
		return rc;
	rc = dev_pread(d, &sb, sizeof(sb), 0);
	dev_close(d);
	if (rc)
		return jbd_err_set(err, rc, "cannot read '%s': %s", path, strerror(-rc));
	if (jbd_get_be32(sb.s_header.h_magic) != JBD2_MAGIC)
		return jbd_err_set(err, -EINVAL, "'%s' is neither an ext4 image nor a jbd2 journal",
				   path);
	*bs = jbd_get_be32(sb.s_blocksize);
	if (*bs < JBD2_MIN_BLOCKSIZE || *bs > JBD2_MAX_BLOCKSIZE || (*bs & (*bs - 1)))
		return jbd_err_set(err, -EUCLEAN, "'%s': invalid journal block size", path);
	return 0;
}

static int path_resolve(struct jbd_path_ctx *c, const char *target, const char *data_path,
			const char *jpath, const struct ujbd_opts *o, struct jbd_err *err)
{
	uint64_t create = 0;
	uint32_t bs = 0;
	int rc;

	rc = ext4_probe(target, &c->ej, err);
	if (rc == -ENOENT && o->format) {
		c->ej.kind = EXT4_NOT_EXT4;
		rc = 0;
	}
	if (rc)
		return rc;
	switch (c->ej.kind) {
	case EXT4_INTERNAL:
		if (data_path || jpath)
			return jbd_err_set(err, -EINVAL, "'%s' has an internal journal", target);
		return path_internal(c, target, err);
	case EXT4_EXTERNAL:
		return path_external(c, target, jpath, err);
	case EXT4_NO_JOURNAL:
		return jbd_err_set(err, -EINVAL, "no journal in '%s'", target);
	case EXT4_JOURNAL_DEV:
		rc = path_identity(c, target, c->ej.blocksize, c->ej.sb_block, 0, err);
		break;
	default:
		rc = standalone_bs(target, o, &bs, &create, err);
		if (!rc)
			rc = path_identity(c, target, bs, 0, create, err);
		break;
	}
	return rc ? rc : path_data(c, target, data_path, err);
}

void jbd_path_close_clean(void *ctx)
{
	struct jbd_path_ctx *c = ctx;

	if (c->ext4_path)
		(void)ext4_set_needs_recovery(c->ext4_path, false, NULL);
}

void jbd_path_release(void *ctx)
{
	struct jbd_path_ctx *c = ctx;

	if (c->ddev)
		dev_close(c->ddev);
	if (c->jdev)
		dev_close(c->jdev);
	ext4_journal_release(&c->ej);
	ext4_journal_release(&c->jd);
	free(c->path_copy);
	free(c);
}

int ujbd_open_path(const char *target, const char *data_path, const char *journal_path,
		   const struct ujbd_opts *opts, struct ujbd **out, struct jbd_err *err)
{
	struct ujbd_opts def;
	struct jbd_err ebuf;
	struct jbd_path_ctx *c;
	int rc;

	if (!err)
		err = &ebuf;
	memset(err, 0, sizeof(*err));
	*out = NULL;
	if (!opts) {
		ujbd_opts_default(&def);
		opts = &def;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	rc = path_resolve(c, target, data_path, journal_path, opts, err);
	if (!rc && c->ext4_path) {
		c->path_copy = strdup(c->ext4_path);
		c->ext4_path = c->path_copy;
		if (!c->path_copy)
			rc = jbd_err_set(err, -ENOMEM, "out of memory");
	}
	if (!rc)
		rc = ujbd_open(&c->loc, opts, out, err);
	if (rc) {
		jbd_path_release(c);
		return rc;
	}
	(*out)->j_path_ctx = c; /* released with the journal from now on */
	if (c->ext4_path) {
		rc = ext4_set_needs_recovery(c->ext4_path, true, err);
		if (rc) {
			ujbd_close_hard(*out);
			*out = NULL;
		}
	}
	return rc;
}

/*
 * open_path.c: ujbd_open_path, the journal runtime opened by file names.
 *
 * The one idea: the runtime only wants a struct jbd_loc (journal device +
 * map + data device); the target layer (target.c) builds one from paths,
 * exactly as for the tool's verbs, and this file owns it for the life of
 * the journal through the journal's close hook, which knows nothing of
 * ext4 or paths itself:
 *   - an ext4 image with an internal or external journal: ext4's
 *     needs_recovery is set while the journal is open and cleared by a
 *     clean close (a crash, or ujbd_close_hard, leaves it set, so e2fsck
 *     and the kernel replay); a journal error (s_errno) that clear_error
 *     lets the runtime clear is first recorded in the ext4 superblock
 *     (EXT2_ERROR_FS), as the kernel does at mount;
 *   - whatever the target, its devices are closed after the journal is
 *     freed.
 * Real world only (files).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jbd/base.h"
#include "target/target.h"
#include "ujbd/ujbd.h"

/* What a path-opened journal's owner keeps: the target, and the path of
 * the ext4 image whose flag it owns (a copy: the caller's may not last). */
struct path_owner {
	struct target po_target;
	char *po_paths[3];          /* copies of target, data, journal paths */
	const char *po_ext4;        /* set: clear needs_recovery at a clean close */
};

static void owner_free(struct path_owner *o)
{
	target_close(&o->po_target);
	for (int i = 0; i < 3; i++)
		free(o->po_paths[i]);
	free(o);
}

/* The journal's close hook: rc 0 is a clean close (the log is empty). */
static void owner_close(void *arg, int rc)
{
	struct path_owner *o = arg;

	if (rc == 0 && o->po_ext4)
		(void)ext4_set_needs_recovery(o->po_ext4, false, NULL);
	owner_free(o);
}

static int owner_new(const char *target, const char *data_path, const char *journal_path,
		     struct path_owner **out)
{
	const char *in[3] = { target, data_path, journal_path };
	struct path_owner *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	for (int i = 0; i < 3; i++) {
		if (in[i] && !(o->po_paths[i] = strdup(in[i]))) {
			for (int k = 0; k < i; k++)
				free(o->po_paths[k]);
			free(o);
			return -ENOMEM;
		}
	}
	*out = o;
	return 0;
}

/*
 * async_commit AUTO: e2fsck and the kernel replay the journal of an ext4
 * image and of a journal device (an external ext4 journal), and replay the
 * good blocks of a transaction torn under an async commit block: there the
 * default stays what jbd2 writes safely (OFF). Only a standalone journal
 * file is ujbd's alone. Returns opts, or tmp holding the resolved copy.
 */
static const struct ujbd_opts *target_opts(const struct target *t, const struct ujbd_opts *opts,
					   struct ujbd_opts *tmp)
{
	if (opts->async_commit != UJBD_ASYNC_COMMIT_AUTO)
		return opts;
	*tmp = *opts;
	tmp->async_commit = t->kind == TARGET_STANDALONE ? UJBD_ASYNC_COMMIT_ON
							 : UJBD_ASYNC_COMMIT_OFF;
	return tmp;
}

/*
 * The kernel, mounting a file system whose journal records an abort
 * (s_errno), marks the file system "with errors" before it clears the
 * journal's error; the runtime clears s_errno at open when clear_error is
 * set, so an ext4 owner records the error in the ext4 superblock first.
 * A journal that does not load is left for ujbd_open to report.
 */
static int owner_keep_error(struct path_owner *o, const struct ujbd_opts *opts,
			    struct jbd_err *err)
{
	struct jbd_journal jj;
	struct jbd_err ignored;

	if (!target_is_ext4(&o->po_target) || !opts->clear_error || opts->format)
		return 0;
	if (jbd_journal_load(&o->po_target.loc, &jj, &ignored) || !jbd_get_be32(jj.j_sb.s_errno))
		return 0;
	return ext4_update_super(o->po_paths[0], EXT4_SET_ERROR_FS, err);
}

/* The directory of path, resolved (malloc'd), or NULL. */
static char *dir_real(const char *path)
{
	char *copy = strdup(path), *r = NULL;

	if (copy)
		r = realpath(dirname(copy), NULL);
	free(copy);
	return r;
}

/*
 * Is b the regular file a names, or the one a format would create under
 * that name? *size: a's size, 0 when it does not exist yet. A block
 * device is never (its size is its own; the runtime checks it).
 */
static bool same_regular_file(const char *a, const char *b, uint64_t *size)
{
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0, same;

	*size = ea ? (uint64_t)sa.st_size : 0;
	if (ea || eb)
		return ea && eb && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
		       sa.st_ino == sb.st_ino;
	char *da = dir_real(a), *db = dir_real(b);
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');

	same = da && db && !strcmp(da, db) && !strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b);
	free(da);
	free(db);
	return same;
}

/* What ujbd_open would refuse whatever the files hold: the option values,
 * and with format the format options (the block size ujbd_open_path
 * creates with, 4096 if none; a length of 0 takes the file's), what needs
 * the geometry of the journal it makes, and a journal that would fill its
 * own file as the data device (ujbd_open's "no data block outside the
 * journal"): each found only after the file was made, it stayed behind. */
static int opts_check_early(const struct ujbd_opts *opts, const char *target,
			    const char *data_path, struct jbd_err *err)
{
	int rc = jbd_opts_check(opts, err);

	if (rc || !opts->format)
		return rc;
	struct jbd_format_opts f = opts->format_opts;
	if (!f.blocksize)
		f.blocksize = 4096;
	if (!f.blocks)
		f.blocks = JBD_FORMAT_MIN_BLOCKS;
	/* and what needs the geometry of the journal f makes */
	rc = jbd_opts_check_format(opts, &f, err);
	uint64_t size, jbytes = f.blocks * f.blocksize;
	if (!rc && opts->format_opts.blocks && data_path && target &&
	    same_regular_file(target, data_path, &size) && size <= jbytes)
		rc = jbd_err_set(err, -EINVAL,
				 "no data block outside the journal: the data device is the journal's own and the journal covers all of its %llu blocks",
				 (unsigned long long)f.blocks);
	return rc;
}

int ujbd_open_path(const char *target, const char *data_path, const char *journal_path,
		   const struct ujbd_opts *opts, struct ujbd **out, struct jbd_err *err)
{
	struct ujbd_opts def, resolved;
	struct jbd_err ebuf;
	struct path_owner *o;
	int rc;

	if (!err)
		err = &ebuf;
	memset(err, 0, sizeof(*err));
	*out = NULL;
	if (!opts) {
		ujbd_opts_default(&def);
		opts = &def;
	}
	/* every option checked before a format creates or sizes a file */
	rc = opts_check_early(opts, target, data_path, err);
	if (rc)
		return rc;
	rc = owner_new(target, data_path, journal_path, &o);
	if (rc)
		return jbd_err_set(err, rc, "out of memory");
	struct target_req r = {
		.path = o->po_paths[0], .data = o->po_paths[1], .journal = o->po_paths[2],
		.writable = true, .need_data = true,
		.create_bs = !opts->format ? 0
			     : opts->format_opts.blocksize ? opts->format_opts.blocksize : 4096,
		.create_blocks = opts->format ? opts->format_opts.blocks : 0,
	};
	rc = target_open_req(&o->po_target, &r, err);
	if (!rc)
		rc = owner_keep_error(o, opts, err);
	if (!rc)
		rc = ujbd_open(&o->po_target.loc, target_opts(&o->po_target, opts, &resolved), out,
			       err);
	if (rc) {
		owner_free(o);
		return rc;
	}
	if (target_is_ext4(&o->po_target))
		o->po_ext4 = o->po_paths[0];
	ujbd_set_close_hook(*out, owner_close, o); /* o goes with the journal now */
	if (o->po_ext4) {
		rc = ext4_set_needs_recovery(o->po_ext4, true, err);
		if (rc) {
			ujbd_close_hard(*out);
			*out = NULL;
		}
	}
	return rc;
}

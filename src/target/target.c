/*
 * target.c: resolve TARGET / journal device / data device into an open
 * struct jbd_loc (target.h says what each kind of target becomes).
 *
 * The one idea: the journal layer only wants "journal device + map + data
 * device". ext4 images get their map from src/ext4 (inode 8, or a journal
 * device); anything whose block 0 starts with the jbd2 magic is a
 * standalone journal, mapped one to one. Every way this can fail is one
 * row of the table below, so the library (ujbd_open_path) and the tool
 * agree on the errno, the message and the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/assert.h"
#include "target/inuse.h"
#include "target/target.h"
#include "ujbd/ujbd.h"

/* ---- failures ------------------------------------------------------------- */

enum target_fail {
	TF_OPEN,             /* a file cannot be opened (errno of the call) */
	TF_READ,             /* the target cannot be read */
	TF_NO_DATA,          /* a standalone journal without a data device */
	TF_DATA_NOT_ALLOWED, /* a data device for an ext4 target */
	TF_JOURNAL_INTERNAL, /* a journal device for an internal journal */
	TF_JOURNAL_NOT_EXT4, /* a journal device for a non-ext4 target */
	TF_EXTERNAL_NO_JDEV, /* an external journal without its device */
	TF_NOT_JOURNAL_DEV,  /* the journal device is not one */
	TF_WRONG_JOURNAL_DEV,/* ... or not this file system's */
	TF_NO_JOURNAL,       /* ext4 without has_journal */
	TF_EXT4_KIND,        /* an ext4 kind this file does not know */
	TF_UNKNOWN,          /* neither ext4 nor a jbd2 journal */
	TF_BLOCKSIZE,        /* a jbd2 superblock with an invalid block size */
	TF_BUSY,             /* mounted, or open by another writer */
};

/* code 0: the errno of the failed call; exit -1: target_exit_status(code);
 * reason NULL: strerror of the code. Messages read "what: 'subject': reason". */
static const struct {
	int code;
	int exit;
	const char *what, *reason;
} fails[] = {
	[TF_OPEN] = { 0, -1, "cannot open", NULL },
	[TF_READ] = { -EIO, 3, "cannot read", NULL },
	[TF_NO_DATA] = { -EINVAL, 2, "no data device",
			 "a standalone journal needs --data=DEVICE" },
	[TF_DATA_NOT_ALLOWED] = { -EINVAL, 2, "--data not allowed",
				  "--data is only for standalone journals" },
	[TF_JOURNAL_INTERNAL] = { -EINVAL, 2, "--journal not allowed",
				  "the file system has an internal journal" },
	[TF_JOURNAL_NOT_EXT4] = { -EINVAL, 2, "--journal not allowed",
				  "--journal is only for ext4 images with an external journal" },
	[TF_EXTERNAL_NO_JDEV] = { -EINVAL, 2, "external journal",
				  "name its device with --journal=PATH" },
	[TF_NOT_JOURNAL_DEV] = { -EINVAL, 1, "not a journal device",
				 "expected mke2fs -O journal_dev" },
	[TF_WRONG_JOURNAL_DEV] = { -EINVAL, 1, "wrong journal device",
				   "its uuid differs from s_journal_uuid" },
	[TF_NO_JOURNAL] = { -EINVAL, 1, "no journal",
			    "the file system has no has_journal feature" },
	[TF_EXT4_KIND] = { -EINVAL, 1, "cannot use", "unexpected ext4 kind" },
	[TF_UNKNOWN] = { -EINVAL, 1, "cannot use", "neither an ext4 image nor a jbd2 journal" },
	[TF_BLOCKSIZE] = { -EUCLEAN, 1, "invalid journal", "superblock: invalid block size" },
	[TF_BUSY] = { -EBUSY, 1, "in use", "busy" },
};

/* why: the reason when it is known only now (else the table's, or the
 * strerror of the code). */
static int fail_why(struct target *t, struct jbd_err *err, enum target_fail f,
		    const char *subject, int sys, const char *why)
{
	int code = fails[f].code ? fails[f].code : sys;
	const char *reason = why ? why : fails[f].reason ? fails[f].reason : target_strerror(code);

	t->t_exit = fails[f].exit >= 0 ? fails[f].exit : target_exit_status(code);
	return jbd_err_set(err, code, "%s: '%s': %s", fails[f].what, subject, reason);
}

static int fail(struct target *t, struct jbd_err *err, enum target_fail f,
		const char *subject, int sys)
{
	return fail_why(t, err, f, subject, sys, NULL);
}

/*
 * The one mapping from an errno to the tool's exit status. 1 is anything
 * wrong with what the user named: missing, a directory, a character
 * device, not readable by this user, too short, not a journal, corrupt;
 * 3 is the system failing to do I/O. (2, usage, is decided by the
 * command line's parser and by the table above, never by an errno alone.)
 */
int target_exit_status(int rc)
{
	/* the journal's own codes (ujbd.h) are misuse, invalid input; but a
	 * file that vanished under the journal is the system's doing */
	if (-rc == UJBD_EGONE)
		return 3;
	if (-rc > UJBD_ERROR_BASE && -rc <= UJBD_ERROR_LAST)
		return 1;
	switch (-rc) {
	case 0: return 0;
	case ENOENT: case ENOTDIR: case EISDIR: case ENOTBLK: case ENXIO: case ENODEV:
	case ELOOP: case ENAMETOOLONG: case EACCES: case EPERM:
	case EUCLEAN: case EOPNOTSUPP: case EINVAL: case ENOSPC: case EBADMSG:
	case ERANGE: case EFBIG: case EBUSY:
		return 1;
	default: return 3;
	}
}

const char *target_strerror(int rc)
{
	if (rc == -ENOTBLK)
		return "not a regular file or a block device";
	return ujbd_strerror(rc); /* strerror's text, and the journal's own codes */
}

int target_status(const struct target *t, int rc)
{
	return rc && t->t_exit ? t->t_exit : target_exit_status(rc);
}

const char *target_kind_name(enum target_kind k)
{
	switch (k) {
	case TARGET_STANDALONE: return "standalone";
	case TARGET_EXT4_INTERNAL: return "ext4-internal";
	case TARGET_EXT4_EXTERNAL: return "ext4-external";
	case TARGET_JOURNAL_DEV: return "journal-device";
	}
	return "?";
}

bool target_is_ext4(const struct target *t)
{
	return t->kind == TARGET_EXT4_INTERNAL || t->kind == TARGET_EXT4_EXTERNAL;
}

/* ---- opening ---------------------------------------------------------------- */

static target_wrap_fn wrap_fn;
static void *wrap_arg;

void target_set_wrap(target_wrap_fn fn, void *arg)
{
	wrap_fn = fn;
	wrap_arg = arg;
}

/*
 * Every file of a target opens here. A writable open claims the file
 * (O_EXCL for a block device, an OFD write lock for a regular file:
 * dev_file_opts.exclusive) and refuses a mounted file system, as e2fsck
 * does (a mounted block device already fails O_EXCL; an image file is
 * looked up among the loop devices): a second writer, or one under a
 * mounted ext4, loses acknowledged data. A read-only open only notes who
 * else uses it (t_in_use).
 */
static int open_dev(struct target *t, const char *path, bool writable, uint64_t create_size,
		    struct dev **out, struct jbd_err *err)
{
	struct dev_file_opts o = { .read_only = !writable, .create = create_size != 0,
				   .size = create_size, .exclusive = writable };
	char why[TARGET_WHY_LEN];
	int rc = dev_file_open(path, &o, out);

	if (rc == -EBUSY) {
		inuse_holder(path, why, sizeof(why));
		return fail_why(t, err, TF_BUSY, path, 0, why);
	}
	if (rc)
		return fail(t, err, TF_OPEN, path, rc);
	if (writable && inuse_mounted(path, why, sizeof(why))) {
		dev_close(*out);
		*out = NULL;
		return fail_why(t, err, TF_BUSY, path, 0, why);
	}
	if (!writable && !t->t_in_use[0] &&
	    (inuse_mounted(path, why, sizeof(why)) || inuse_locked(path, why, sizeof(why))))
		snprintf(t->t_in_use, sizeof(t->t_in_use), "'%s' is in use: %s", path, why);
	if (writable && wrap_fn) {
		struct dev *inner = *out;

		*out = NULL;
		rc = wrap_fn(wrap_arg, path, inner, out);
		if (rc) /* the hook did not take the device: it is ours to close */
			dev_close(inner);
		if (rc)
			return fail(t, err, TF_OPEN, path, rc);
	}
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * A journal whose data device is its own file: the journal is its first
 * s_maxlen blocks (create_blocks when formatting), the blocks after it are
 * data. The map stops at the journal's end, so that the journal layer
 * refuses only the journal's own blocks as data (and a journal that fills
 * the file at open).
 */
static void same_file_map(struct target *t, const struct target_req *r)
{
	uint64_t len = r->create_bs ? r->create_blocks : 0;
	struct jbd2_sb sb;

	if (!len && t->loc.j_sb_block == 0 && dev_pread(t->jdev, &sb, sizeof(sb), 0) == 0 &&
	    jbd_get_be32(sb.s_header.h_magic) == JBD2_MAGIC)
		len = jbd_get_be32(sb.s_maxlen);
	if (len && len < t->ident.len)
		t->ident.len = t->loc.j_len = len;
}

/* Open the data device of a standalone journal or a journal device. */
static int open_data(struct target *t, const struct target_req *r, struct jbd_err *err)
{
	int rc;

	if (!t->data_path)
		return r->need_data ? fail(t, err, TF_NO_DATA, t->path, 0) : 0;
	if (same_file(t->data_path, t->journal_path)) {
		t->ddev = NULL;
		t->loc.j_data = t->jdev;
		same_file_map(t, r);
	} else {
		rc = open_dev(t, t->data_path, r->writable, 0, &t->ddev, err);
		if (rc)
			return rc;
		t->loc.j_data = t->ddev;
	}
	t->loc.j_data_blocks = dev_size(t->loc.j_data) / t->loc.j_blocksize;
	return 0;
}

/* Block size of a standalone journal: the s_blocksize of its superblock. */
static int standalone_probe(struct target *t, bool *is_jbd, uint32_t *bs, struct jbd_err *err)
{
	struct jbd2_sb sb;
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*is_jbd = false;
	if (fd < 0)
		return fail(t, err, TF_OPEN, t->path, -errno);
	n = pread(fd, &sb, sizeof(sb), 0);
	close(fd);
	if (n < 0)
		return fail(t, err, TF_READ, t->path, 0);
	if (n < (ssize_t)sizeof(sb) || jbd_get_be32(sb.s_header.h_magic) != JBD2_MAGIC)
		return 0;
	*is_jbd = true;
	*bs = jbd_get_be32(sb.s_blocksize);
	if (*bs < JBD2_MIN_BLOCKSIZE || *bs > JBD2_MAX_BLOCKSIZE || (*bs & (*bs - 1)))
		return fail(t, err, TF_BLOCKSIZE, t->path, 0);
	return 0;
}

/* A journal with an identity map: standalone file or journal device. */
static int open_identity(struct target *t, uint32_t bs, uint64_t sb_block, bool writable,
			 uint64_t create_size, struct jbd_err *err)
{
	int rc = open_dev(t, t->journal_path, writable, create_size, &t->jdev, err);

	if (rc)
		return rc;
	t->ident = (struct jbd_extent){ 0, 0, dev_size(t->jdev) / bs };
	t->loc = (struct jbd_loc){ .j_dev = t->jdev, .j_blocksize = bs, .j_map = &t->ident,
				   .j_nmap = 1, .j_len = t->ident.len, .j_sb_block = sb_block };
	return 0;
}

static int open_ext4_internal(struct target *t, bool writable, struct jbd_err *err)
{
	int rc;

	t->kind = TARGET_EXT4_INTERNAL;
	t->journal_path = t->path;
	rc = open_dev(t, t->path, writable, 0, &t->jdev, err);
	if (rc)
		return rc;
	t->loc = (struct jbd_loc){ .j_dev = t->jdev, .j_blocksize = t->ej.blocksize,
				   .j_map = t->ej.map, .j_nmap = t->ej.nmap,
				   .j_len = t->ej.journal_blocks, .j_sb_block = 0,
				   .j_data = t->jdev, .j_data_blocks = t->ej.fs_blocks };
	return 0;
}

static int open_ext4_external(struct target *t, bool writable, struct jbd_err *err)
{
	int rc;

	t->kind = TARGET_EXT4_EXTERNAL;
	if (!t->journal_path)
		return fail(t, err, TF_EXTERNAL_NO_JDEV, t->path, 0);
	rc = ext4_probe(t->journal_path, &t->jd, err);
	if (rc)
		return rc;
	if (t->jd.kind != EXT4_JOURNAL_DEV)
		return fail(t, err, TF_NOT_JOURNAL_DEV, t->journal_path, 0);
	if (memcmp(t->jd.journal_uuid, t->ej.journal_uuid, 16))
		return fail(t, err, TF_WRONG_JOURNAL_DEV, t->journal_path, 0);
	rc = open_identity(t, t->jd.blocksize, t->jd.sb_block, writable, 0, err);
	if (rc)
		return rc;
	rc = open_dev(t, t->path, writable, 0, &t->ddev, err);
	if (rc)
		return rc;
	t->loc.j_data = t->ddev;
	t->loc.j_data_blocks = t->ej.fs_blocks;
	return 0;
}

static int open_ext4(struct target *t, bool writable, struct jbd_err *err)
{
	t->ext4_needs_recovery = t->ej.needs_recovery;
	if (t->data_path)
		return fail(t, err, TF_DATA_NOT_ALLOWED, t->path, 0);
	switch (t->ej.kind) {
	case EXT4_INTERNAL:
		if (t->journal_path)
			return fail(t, err, TF_JOURNAL_INTERNAL, t->path, 0);
		return open_ext4_internal(t, writable, err);
	case EXT4_EXTERNAL:
		return open_ext4_external(t, writable, err);
	case EXT4_NO_JOURNAL:
		return fail(t, err, TF_NO_JOURNAL, t->path, 0);
	default:
		return fail(t, err, TF_EXT4_KIND, t->path, 0);
	}
}

/* A standalone journal file: probed, or created/resized to format it. */
static int open_standalone(struct target *t, const struct target_req *r, struct jbd_err *err)
{
	bool is_jbd = false;
	uint32_t bs = r->create_bs;
	int rc = 0;

	t->kind = TARGET_STANDALONE;
	if (r->create_bs && r->need_data && !t->data_path) /* before the file is made */
		return fail(t, err, TF_NO_DATA, t->path, 0);
	if (!r->create_bs) {
		rc = standalone_probe(t, &is_jbd, &bs, err);
		if (!rc && !is_jbd)
			return fail(t, err, TF_UNKNOWN, t->path, 0);
	}
	if (!rc)
		rc = open_identity(t, bs, 0, r->writable || r->create_bs,
				   (uint64_t)r->create_bs * r->create_blocks, err);
	return rc;
}

int target_open_req(struct target *t, const struct target_req *r, struct jbd_err *err)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->path = r->path;
	t->journal_path = r->journal ? r->journal : r->path;
	t->data_path = r->data;
	rc = r->standalone && r->create_bs ? -ENOENT : ext4_probe(r->path, &t->ej, err);
	if (rc == -ENOENT && r->create_bs) {
		t->ej.kind = EXT4_NOT_EXT4; /* the journal file is made below */
		rc = 0;
	}
	if (rc)
		return rc;
	if (t->ej.kind != EXT4_NOT_EXT4 && t->ej.kind != EXT4_JOURNAL_DEV) {
		t->journal_path = r->journal;
		return open_ext4(t, r->writable, err);
	}
	if (r->journal)
		return fail(t, err, TF_JOURNAL_NOT_EXT4, r->path, 0);
	if (t->ej.kind == EXT4_JOURNAL_DEV) {
		t->kind = TARGET_JOURNAL_DEV;
		rc = open_identity(t, t->ej.blocksize, t->ej.sb_block, r->writable, 0, err);
	} else {
		rc = open_standalone(t, r, err);
	}
	return rc ? rc : open_data(t, r, err);
}

int target_open(struct target *t, const char *path, const char *journal,
		const char *data, bool writable, bool need_data, struct jbd_err *err)
{
	struct target_req r = { .path = path, .journal = journal, .data = data,
				.writable = writable, .need_data = need_data };

	return target_open_req(t, &r, err);
}

void target_close(struct target *t)
{
	if (t->ddev)
		dev_close(t->ddev);
	if (t->jdev)
		dev_close(t->jdev);
	ext4_journal_release(&t->ej);
	ext4_journal_release(&t->jd);
	memset(t, 0, sizeof(*t));
}

/* ---- after recovery --------------------------------------------------------- */

/*
 * The order keeps the error through a crash at any point: the journal
 * superblock (s_start 0) was written by the replay with s_errno still set;
 * the ext4 superblock gets EXT2_ERROR_FS in the write that clears
 * needs_recovery; only then is s_errno cleared. A crash in between leaves
 * s_errno set with the flag clear, and the next recover (or e2fsck, which
 * does the same when the flag is clear) moves it again.
 */
int target_end_recovery(struct target *t, struct jbd_journal *j, struct target_end *out,
			struct jbd_err *err)
{
	int32_t e = (int32_t)jbd_get_be32(j->j_sb.s_errno);
	unsigned flags = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	/* only after a replay: needs_recovery must not go while the log is not
	 * empty (the kernel would then ignore it) */
	ASSERT(jbd_get_be32(j->j_sb.s_start) == 0);
	if (!target_is_ext4(t))
		return 0;
	if (t->ext4_needs_recovery)
		flags |= EXT4_CLEAR_RECOVER;
	if (e)
		flags |= EXT4_SET_ERROR_FS;
	if (!flags)
		return 0;
	rc = ext4_update_super(t->path, flags, err);
	if (rc)
		return rc;
	out->needs_recovery_cleared = t->ext4_needs_recovery;
	t->ext4_needs_recovery = false;
	if (!e)
		return 0;
	jbd_put_be32(&j->j_sb.s_errno, 0);
	rc = jbd_journal_write_sb(j, err);
	if (!rc)
		out->fs_error = e;
	return rc;
}

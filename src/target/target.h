/*
 * target.h: finding the journal of a path (the layer between src/ext4 and
 * the tool; see DESIGN.md, "Where the journal sits"). Turns "TARGET
 * [journal device] [data device]" into an open struct jbd_loc, the only
 * thing the journal layer (src/jbd) takes:
 *
 *   - an ext4 image or device with an internal journal: the journal is
 *     inode s_journal_inum mapped through libext2fs (src/ext4), the data
 *     device is the image itself;
 *   - an ext4 image with an external journal: the journal path names the
 *     journal device (mke2fs -O journal_dev, its uuid must match), the data
 *     device is the image;
 *   - a journal device given directly, or a standalone journal file (the
 *     jbd2 magic in its block 0; or any file, created, when formatting):
 *     identity map, the data device from the data path.
 *
 * Used by ujbd_open_path (open_path.c) and by every journal verb of the
 * tool. One table (target.c) maps each way resolution can fail to a
 * negative errno, a message and the tool's exit status. Real world only
 * (files). Not thread-safe: a struct target is one caller's.
 */
#ifndef UJBD_TARGET_TARGET_H
#define UJBD_TARGET_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "ujbd/ext4.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"

#define TARGET_WHY_LEN 4200 /* a reason: a mount point may be a long path */

enum target_kind {
	TARGET_STANDALONE = 0,   /* jbd2 journal file, sb in block 0 */
	TARGET_EXT4_INTERNAL = 1,
	TARGET_EXT4_EXTERNAL = 2, /* ext4 image + journal device */
	TARGET_JOURNAL_DEV = 3,   /* a journal device named as TARGET */
};

/* What to open. */
struct target_req {
	const char *path;          /* TARGET */
	const char *journal;       /* the external journal device, or NULL */
	const char *data;          /* the data device, or NULL */
	bool writable;
	bool need_data;            /* a standalone journal must have a data device */
	/* Formatting: a standalone journal file (missing, or not a journal) is
	 * opened read-write, created if missing, sized create_blocks of
	 * create_bs bytes. 0: the journal must exist. */
	uint32_t create_bs;
	uint64_t create_blocks;
	/* With create_bs: TARGET is made a standalone journal whatever it
	 * holds now, never probed as ext4 (ujbd format, whose caller has
	 * already refused, or been told with --force, to overwrite data). */
	bool standalone;
};

struct target {
	enum target_kind kind;
	const char *path;          /* TARGET */
	const char *journal_path;  /* the file that holds the journal */
	const char *data_path;     /* the data device, or NULL */
	struct ext4_journal ej;    /* ext4 image probe */
	struct ext4_journal jd;    /* journal device probe */
	struct dev *jdev, *ddev;
	struct jbd_extent ident;
	struct jbd_loc loc;
	bool ext4_needs_recovery;  /* ext4 targets: INCOMPAT_RECOVER at open */
	int t_exit;                /* the failed open's exit status (table), or 0 */
	/* A read-only open of a file someone else uses (mounted, or locked
	 * by a writer): "'PATH' is in use: mounted on '/mnt'", else empty.
	 * The verbs that read say so; a writable open refuses instead. */
	char t_in_use[TARGET_WHY_LEN + 64];
};

/*
 * Open r->path. Returns 0, or -errno with err set (the message says what
 * failed first, subject quoted); t must be closed with target_close either
 * way. The paths in r are borrowed for the life of t.
 */
int target_open_req(struct target *t, const struct target_req *r, struct jbd_err *err);
/* The tool's form: no formatting. */
int target_open(struct target *t, const char *path, const char *journal,
		const char *data, bool writable, bool need_data, struct jbd_err *err);
/*
 * For tests (`ujbd mount -o record=`): every device a writable open makes
 * from a path (target_open_req, so ujbd_open_path too) is handed to fn,
 * which returns 0 with *out the device to use in its place (a wrapper
 * that owns inner, as dev_rec_new's), or -errno and leaves inner alone.
 * fn NULL: none (the default). Process-wide and not thread-safe: set it
 * before the open, clear it after.
 */
typedef int (*target_wrap_fn)(void *arg, const char *path, struct dev *inner, struct dev **out);
void target_set_wrap(target_wrap_fn fn, void *arg);
/* Close the devices and free the probes (t may be half open). */
void target_close(struct target *t);
bool target_is_ext4(const struct target *t);
const char *target_kind_name(enum target_kind k);

/* The exit status for an error code that is not a target failure:
 * 0 ok, 1 invalid, missing or corrupt input, 2 usage, 3 I/O. */
int target_exit_status(int rc);
/* ujbd_strerror(rc) in the words a user of a path needs: ENOTBLK (what
 * opening /dev/null or a FIFO gives) is "not a regular file or a block
 * device", where strerror says "Block device required". The journal's own
 * codes (-UJBD_EGONE, ...) get its words, not "Unknown error 4101". */
const char *target_strerror(int rc);
/* The exit status of target_open's result rc: the table's for its
 * failure, else target_exit_status(rc). Call before target_close. */
int target_status(const struct target *t, int rc);

/*
 * What e2fsck does to an ext4 target once its journal is replayed (or had
 * nothing to replay), j being that journal as the replay left it: clear
 * needs_recovery, and when the journal records an abort (s_errno, written
 * by a kernel that aborted it, or by a replay that skipped bad blocks)
 * move it into the ext4 superblock's state (EXT2_ERROR_FS, in the same
 * write) and clear s_errno. Other targets: nothing (a standalone journal's
 * s_errno is the only record of the error, so it stays). 0 or -errno with
 * err set; out says what was done.
 */
struct target_end {
	bool needs_recovery_cleared;
	int32_t fs_error;          /* the s_errno moved into the ext4 superblock, or 0 */
};
int target_end_recovery(struct target *t, struct jbd_journal *j, struct target_end *out,
			struct jbd_err *err);

#endif

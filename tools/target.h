/*
 * TARGET resolution for the journal verbs: turn "TARGET [--journal=PATH]
 * [--data=DEVICE]" into an open struct jbd_loc.
 *
 *   - an ext4 image or device with an internal journal: the journal is inode
 *     s_journal_inum mapped through libext2fs (src/ext4), the data device is
 *     the image itself;
 *   - an ext4 image with an external journal: --journal names the journal
 *     device (mke2fs -O journal_dev), the data device is the image;
 *   - a journal device given directly, or a standalone journal file (the
 *     jbd2 magic in its block 0): identity map, the data device from --data.
 */
#ifndef UJBD_TOOLS_TARGET_H
#define UJBD_TOOLS_TARGET_H

#include <stdbool.h>
#include <stdio.h>

#include "ujbd/ext4.h"
#include "ujbd/jbd_log.h"

enum target_kind {
	TARGET_STANDALONE = 0,   /* jbd2 journal file, sb in block 0 */
	TARGET_EXT4_INTERNAL = 1,
	TARGET_EXT4_EXTERNAL = 2, /* ext4 image + --journal device */
	TARGET_JOURNAL_DEV = 3,   /* a journal device named as TARGET */
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
	bool ext4_needs_recovery;  /* ext4 targets: INCOMPAT_RECOVER */
};

/*
 * Open TARGET. journal (--journal) and data (--data) may be NULL. need_data:
 * a standalone journal must have --data. Returns 0 or -errno with err set.
 */
int target_open(struct target *t, const char *path, const char *journal,
		const char *data, bool writable, bool need_data, struct jbd_err *err);
void target_close(struct target *t);
bool target_is_ext4(const struct target *t);
const char *target_kind_name(enum target_kind k);

/* The exit status for an error code: 1 invalid/corrupt, 2 usage, 3 I/O. */
int target_exit_status(int rc);

/*
 * The shared front of the read-only verbs (info, dump): parse
 * "TARGET [--journal=PATH] [--data=DEVICE] [--json] [--help]", open TARGET
 * and load its journal. Returns -1 when the verb goes on (t open, j loaded:
 * the caller ends with target_close), or the exit status to return (the
 * error already printed, nothing left open).
 */
int target_cli_load(int argc, char **argv, void (*usage)(FILE *), bool *json,
		    struct target *t, struct jbd_journal *j);


#include <stdio.h>

/* Print s as a JSON string (quoted, escaped). */
void target_json_str(FILE *f, const char *s);
/* "11111111-2222-..." from 16 bytes; buf holds at least 37. */
const char *target_uuid_str(const uint8_t u[16], char *buf);
/* Parse a UUID in that form. 0 or -EINVAL. */
int target_uuid_parse(const char *s, uint8_t u[16]);
/* Name of feature bit `bit` (a single-bit mask) of word 0 compat, 1 incompat,
 * 2 ro_compat, or NULL if unknown. */
const char *target_feature_name(int word, uint32_t bit);
/* Print the names of the set features, separated by sep, each quoted when
 * json; unknown bits as 0x... */
void target_print_features(FILE *f, const struct jbd2_sb *sb, const char *sep, bool json);

#endif

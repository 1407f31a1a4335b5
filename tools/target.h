/*
 * The journal verbs' TARGET: "TARGET [--journal=PATH] [--data=DEVICE]" is
 * resolved by the library's target layer (src/target/target.h: the kinds
 * of target, target_open, target_status and the one table of failures);
 * this header adds the tool's shared front and printing helpers.
 */
#ifndef UJBD_TOOLS_TARGET_H
#define UJBD_TOOLS_TARGET_H

#include <stdbool.h>
#include <stdio.h>

#include "target/target.h"
#include "ujbd/jbd_log.h"

/*
 * The shared front of the read-only verbs (info, dump): parse
 * "TARGET [--journal=PATH] [--data=DEVICE] [--json] [--help]" and the
 * verb's own options, open TARGET and load its journal. --data is accepted
 * (the same command line as recover's) but never opened: these verbs do not
 * read the data device, so a missing one is no error.
 */
struct target_cli {
	void (*usage)(FILE *);
	const struct option *opts;  /* the verb's own options (up to 8), or NULL */
	/* one of them: 0, or the exit status (the message printed) */
	int (*opt)(void *arg, const char *verb, int c, const char *val);
	void *arg;
	bool json;                  /* out: --json was given */
};
/* Returns -1 when the verb goes on (t open, j loaded: the caller ends with
 * target_close), or the exit status to return (the error already printed,
 * nothing left open). */
int target_cli_load(int argc, char **argv, struct target_cli *cli, struct target *t,
		    struct jbd_journal *j);
/* A read-only verb on a target someone else uses (mounted, or open for
 * writing): one line on stderr saying so, the verb goes on. */
void target_cli_note(const char *verb, const struct target *t);

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

/*
 * mke2fs's rule, for a verb about to overwrite the first `bytes` bytes of
 * path: returns 0 when there is nothing to lose there (path missing, empty,
 * or all zeros, holes skipped) or force is set; else the exit status after
 * one line naming what path holds (a file system, a journal with or without
 * unreplayed transactions, data at an offset) and that --force overwrites
 * it.
 */
int target_may_overwrite(const char *verb, const char *path, uint64_t bytes, bool force);

#endif

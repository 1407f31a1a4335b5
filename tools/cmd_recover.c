/*
 * ujbd recover TARGET [--journal=PATH] [--data=DEVICE] [--dry-run] [--json]
 *
 * Replay the journal onto its data device, as e2fsck does: every
 * transaction validated before the first write, data flushed, the journal
 * superblock marked empty (s_start 0, s_sequence = end + 1, s_head = log
 * end) and flushed, and only then the ext4 needs_recovery flag cleared, in
 * the write that marks the file system "with errors" when the journal
 * recorded an abort (s_errno, then cleared).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "target.h"

static void recover_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd recover TARGET [--journal=PATH] [--data=DEVICE] [--dry-run] [--json]\n"
		"Replay the committed transactions of TARGET's journal onto its data device and\n"
		"mark the journal empty (and clear ext4 needs_recovery).\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   the data device of a standalone journal (required for one)\n"
		"  --dry-run       validate and count, write nothing\n"
		"  --json          print one JSON object\n"
		"exit status: 0 replayed, or nothing to do; 1 the journal is invalid or corrupt\n"
		"and nothing was written (or: some blocks had bad checksums and were skipped, the\n"
		"rest replayed, as e2fsck does); 2 usage error; 3 I/O error\n");
}

struct recover_args {
	const char *journal, *data;
	bool dry, json;
};

static void report(const struct recover_args *a, const struct jbd_recover_result *r,
		   const struct target_end *e)
{
	if (a->json) {
		printf("{\"replayed_transactions\":%llu,\"replayed_blocks\":%llu,"
		       "\"revoked_blocks\":%llu,\"revoke_records\":%llu,\"bad_checksum_blocks\":%llu,"
		       "\"first_sequence\":%u,\"end_sequence\":%u,\"next_sequence\":%u,"
		       "\"head_block\":%u,\"nothing_to_do\":%s,\"dry_run\":%s,"
		       "\"needs_recovery_cleared\":%s,\"fs_error_marked\":%d}\n",
		       (unsigned long long)r->replayed_transactions,
		       (unsigned long long)r->replayed_blocks, (unsigned long long)r->revoked_blocks,
		       (unsigned long long)r->revoke_records, (unsigned long long)r->bad_csum_blocks,
		       r->first_tid, r->end_tid, r->next_tid, r->head_block,
		       r->nothing_to_do ? "true" : "false", a->dry ? "true" : "false",
		       e->needs_recovery_cleared ? "true" : "false", e->fs_error);
		cli_json_done();
		return;
	}
	if (r->nothing_to_do)
		printf("nothing to recover: the journal is empty%s\n",
		       e->needs_recovery_cleared ? " (ext4 needs_recovery cleared)" : "");
	else
		printf("%s %llu transaction%s (%u-%u), %llu block%s, %llu revoked (%llu revoke record%s)%s\n",
		       a->dry ? "would replay" : "replayed",
		       (unsigned long long)r->replayed_transactions, cli_s(r->replayed_transactions),
		       r->first_tid, r->end_tid - 1,
		       (unsigned long long)r->replayed_blocks, cli_s(r->replayed_blocks),
		       (unsigned long long)r->revoked_blocks,
		       (unsigned long long)r->revoke_records, cli_s(r->revoke_records),
		       r->bad_csum_blocks ? ", some blocks skipped for bad checksums" : "");
	if (!r->nothing_to_do && !a->dry)
		printf("journal marked empty, next sequence %u%s\n", r->next_tid,
		       e->needs_recovery_cleared ? ", ext4 needs_recovery cleared" : "");
	if (e->fs_error)
		printf("the journal recorded an abort (s_errno %d): moved to the ext4 superblock "
		       "(state: errors, the next e2fsck checks everything)\n", e->fs_error);
}

static int recover_parse(int argc, char **argv, struct recover_args *a)
{
	static const struct option opts[] = {
		{ "journal", required_argument, NULL, 'j' }, { "data", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },      { "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j': a->journal = optarg; break;
		case 'd': a->data = optarg; break;
		case 'n': a->dry = true; break;
		case 'J': a->json = true; break;
		case 'h': recover_usage(stdout); return -1;
		default: return EXIT_USAGE;
		}
	}
	return cli_one_operand(argc, argv, "TARGET");
}

/* Replay, then do what e2fsck does to an ext4 target (target_end_recovery:
 * needs_recovery cleared, a recorded abort moved to the ext4 superblock). */
static int recover_run(const char *verb, struct target *t, const struct recover_args *a)
{
	struct jbd_journal j;
	struct jbd_recover_result r;
	struct jbd_recover_opts o = { .dry_run = a->dry };
	struct target_end e = { 0 };
	struct jbd_err err = { 0 };
	struct cli_progress progress;
	int rc = jbd_journal_load(&t->loc, &j, &err);

	cli_progress_init(&progress, verb, "replaying");
	o.progress = cli_progress;
	o.progress_arg = &progress;

	if (rc) {
		cli_err(verb, "invalid journal: '%s': %s", t->journal_path, err.msg);
		return target_exit_status(rc);
	}
	rc = jbd_recover(&j, &o, &r, &err);
	if (rc && rc != -EBADMSG && r.written_blocks) {
		/* the home writes had begun: the host failed us, whatever the
		 * errno (a full file system is no fault of the input) */
		cli_err(verb, "cannot recover: '%s': %s (the replay had begun: some of its %llu "
			"block%s may be on '%s'; the journal still needs recovery: run recover "
			"again once the cause is fixed)", t->journal_path, err.msg,
			(unsigned long long)r.written_blocks, r.written_blocks == 1 ? "" : "s",
			t->data_path ? t->data_path : t->path);
		return EXIT_IO;
	}
	if (rc && rc != -EBADMSG) {
		cli_err(verb, "cannot recover: '%s': %s%s", t->journal_path, err.msg,
			target_exit_status(rc) == 1 ? " (nothing written)" : "");
		return target_exit_status(rc);
	}
	if (!a->dry) {
		struct jbd_err e2 = { 0 };
		int rc2 = target_end_recovery(t, &j, &e, &e2);
		if (rc2) {
			cli_err(verb, "cannot finish recovery: '%s': %s", t->path, e2.msg);
			return target_exit_status(rc2) == 1 ? EXIT_IO : target_exit_status(rc2);
		}
	}
	report(a, &r, &e);
	if (rc)
		cli_err(verb, "corrupt journal: '%s': %s", t->journal_path, err.msg);
	return target_exit_status(rc);
}

int cmd_recover(int argc, char **argv)
{
	struct recover_args a = { 0 };
	struct target t;
	struct jbd_err err = { 0 };
	int rc = recover_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = target_open(&t, argv[optind], a.journal, a.data, !a.dry, true, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		rc = target_status(&t, rc);
		target_close(&t);
		return rc;
	}
	target_cli_note(argv[0], &t); /* --dry-run reads a target in use */
	rc = recover_run(argv[0], &t, &a);
	target_close(&t);
	return rc;
}

/*
 * ujbd write TARGET [--journal=PATH] [--data=DEVICE] --block=N:FILE ...
 *            [--revoke=N ...] [--json]
 *
 * Append one committed transaction and leave it unreplayed, with
 * needs_recovery set, as `debugfs journal_write` followed by a crash would:
 * for interop tests and recovery drills. On ext4 the needs_recovery flag is
 * set and flushed before any journal block is written (ext4 mount: a kernel
 * that finds the flag clear wipes the log without replaying it).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "target.h"

#define WRITE_MAX_ITEMS 4096

static void write_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd write TARGET [--journal=PATH] [--data=DEVICE] --block=N:FILE ...\n"
		"                  [--revoke=N ...] [--json]\n"
		"Append one committed transaction to TARGET's journal and leave it unreplayed\n"
		"(needs_recovery set on ext4): block N gets FILE's content, FILE being exactly\n"
		"one journal block long; --revoke=N adds a revoke record for block N. A block\n"
		"is named once per transaction (--block and --revoke together).\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   the data device of a standalone journal (bounds-checks N)\n"
		"  --json          print one JSON object\n"
		"exit status: 0 written, 1 invalid input or journal, or the transaction does not\n"
		"fit in the free log (nothing written), 2 usage error, 3 I/O error\n");
}

struct write_item {
	uint64_t block;
	const char *file;
};

struct write_args {
	const char *journal, *data;
	struct write_item *items;
	size_t nitems;
	uint64_t *revokes;
	size_t nrevokes;
	bool json;
};

static int parse_block_no(const char *s, uint64_t *out, char stop)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end != stop)
		return -EINVAL;
	return 0;
}

static int write_opt(const char *verb, int c, const char *arg, struct write_args *a)
{
	if (a->nitems + a->nrevokes >= WRITE_MAX_ITEMS) {
		cli_err(verb, "too many blocks: '%s': at most %d per transaction", arg,
			WRITE_MAX_ITEMS);
		return EXIT_USAGE;
	}
	if (c == 'b') {
		const char *colon = strchr(arg, ':');
		if (!colon || !colon[1] || parse_block_no(arg, &a->items[a->nitems].block, ':')) {
			cli_err(verb, "bad --block: '%s': expected N:FILE", arg);
			return EXIT_USAGE;
		}
		a->items[a->nitems++].file = colon + 1;
	} else {
		if (parse_block_no(arg, &a->revokes[a->nrevokes], '\0')) {
			cli_err(verb, "bad --revoke: '%s': expected a block number", arg);
			return EXIT_USAGE;
		}
		a->nrevokes++;
	}
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* A transaction logs or revokes a block once (jbd2 cancels a revoke when it
 * logs the block again, and logs each buffer once): a block named twice is
 * a usage error, not the last one winning. 0 or EXIT_USAGE. */
static int write_check_once(const char *verb, const struct write_args *a)
{
	size_t n = a->nitems + a->nrevokes;
	uint64_t *all = malloc(n * sizeof(*all));
	int rc = 0;

	if (!all) {
		cli_err(verb, "out of memory");
		return EXIT_IO;
	}
	for (size_t i = 0; i < a->nitems; i++)
		all[i] = a->items[i].block;
	memcpy(all + a->nitems, a->revokes, a->nrevokes * sizeof(*all));
	qsort(all, n, sizeof(*all), cmp_u64);
	for (size_t i = 1; i < n && !rc; i++)
		if (all[i] == all[i - 1]) {
			cli_err(verb, "block %llu given twice: one transaction logs or revokes a "
				"block once", (unsigned long long)all[i]);
			rc = EXIT_USAGE;
		}
	free(all);
	return rc;
}

static int write_parse(int argc, char **argv, struct write_args *a)
{
	static const struct option opts[] = {
		{ "journal", required_argument, NULL, 'j' }, { "data", required_argument, NULL, 'd' },
		{ "block", required_argument, NULL, 'b' },  { "revoke", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'J' },         { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j': a->journal = optarg; break;
		case 'd': a->data = optarg; break;
		case 'J': a->json = true; break;
		case 'b':
		case 'r':
			if ((rc = write_opt(argv[0], c, optarg, a)))
				return rc;
			break;
		case 'h': write_usage(stdout); return -1;
		default: return EXIT_USAGE;
		}
	}
	if (cli_one_operand(argc, argv, "TARGET"))
		return EXIT_USAGE;
	if (a->nitems + a->nrevokes == 0) {
		cli_err(argv[0], "nothing to write: '%s': give --block=N:FILE or --revoke=N",
			argv[optind]);
		return EXIT_USAGE;
	}
	return write_check_once(argv[0], a);
}

/* Read each FILE: exactly one block. */
static int load_blocks(const char *verb, const struct write_args *a, uint32_t bs,
		       uint8_t *bufs, struct jbd_write_block *wb)
{
	for (size_t i = 0; i < a->nitems; i++) {
		FILE *f = fopen(a->items[i].file, "rb");
		uint8_t *p = bufs + i * bs;
		size_t n;
		if (!f) {
			int e = -errno;

			cli_err(verb, "cannot open: '%s': %s", a->items[i].file, target_strerror(e));
			return target_exit_status(e);
		}
		n = fread(p, 1, bs, f);
		bool more = fgetc(f) != EOF;
		fclose(f);
		if (n != bs || more) {
			cli_err(verb, "bad block file: '%s': must be exactly one block (%u bytes)",
				a->items[i].file, bs);
			return EXIT_INVALID;
		}
		wb[i] = (struct jbd_write_block){ a->items[i].block, p };
	}
	return 0;
}

static int set_flag(void *arg, struct jbd_err *err)
{
	struct target *t = arg;

	if (!target_is_ext4(t) || t->ext4_needs_recovery)
		return 0;
	return ext4_set_needs_recovery(t->path, true, err);
}

static void write_report(const struct write_args *a, const struct jbd_write_result *r)
{
	if (a->json) {
		printf("{\"sequence\":%u,\"start_block\":%u,\"commit_block\":%u,\"log_blocks\":%u,"
		       "\"blocks\":%zu,\"revokes\":%zu}\n",
		       r->tid, r->start_block, r->commit_block, r->log_blocks, a->nitems,
		       a->nrevokes);
		cli_json_done();
		return;
	}
	printf("wrote transaction %u: %zu block%s, %zu revoke%s, log blocks %u-%u (%u block%s)\n",
	       r->tid, a->nitems, cli_s(a->nitems), a->nrevokes, cli_s(a->nrevokes),
	       r->start_block, r->commit_block, r->log_blocks, cli_s(r->log_blocks));
}

static int write_run(const char *verb, struct target *t, const struct write_args *a)
{
	struct jbd_journal j;
	struct jbd_write_result r;
	struct jbd_err err = { 0 };
	struct jbd_write_block *wb = NULL;
	uint8_t *bufs = NULL;
	int rc = jbd_journal_load(&t->loc, &j, &err);

	if (rc) {
		cli_err(verb, "invalid journal: '%s': %s", t->journal_path, err.msg);
		return target_exit_status(rc);
	}
	bufs = malloc((a->nitems ? a->nitems : 1) * (size_t)j.j_fmt.f_blocksize);
	wb = calloc(a->nitems ? a->nitems : 1, sizeof(*wb));
	if (!bufs || !wb) {
		cli_err(verb, "cannot write: '%s': out of memory", t->journal_path);
		rc = EXIT_IO;
		goto out;
	}
	rc = load_blocks(verb, a, j.j_fmt.f_blocksize, bufs, wb);
	if (rc)
		goto out;
	struct jbd_txn_desc d = { .blocks = wb, .nblocks = a->nitems, .revokes = a->revokes,
				  .nrevokes = a->nrevokes, .commit_sec = (uint64_t)time(NULL),
				  .before_write = set_flag, .before_write_arg = t };
	rc = jbd_write_txn(&j, &d, &r, &err);
	if (rc) {
		/* a block beyond the data device: the data device is the subject */
		bool beyond = rc == -EINVAL && t->data_path && strstr(err.msg, "beyond the data device");
		cli_err(verb, "cannot write: '%s': %s", beyond ? t->data_path : t->journal_path,
			err.msg);
		rc = target_exit_status(rc);
		goto out;
	}
	write_report(a, &r);
out:
	free(bufs);
	free(wb);
	return rc;
}

int cmd_write(int argc, char **argv)
{
	struct write_args a = { 0 };
	struct target t;
	struct jbd_err err = { 0 };
	int rc;

	a.items = calloc(WRITE_MAX_ITEMS, sizeof(*a.items));
	a.revokes = calloc(WRITE_MAX_ITEMS, sizeof(*a.revokes));
	if (!a.items || !a.revokes) {
		rc = EXIT_IO;
		goto out;
	}
	rc = write_parse(argc, argv, &a);
	if (rc) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto out;
	}
	rc = target_open(&t, argv[optind], a.journal, a.data, true, false, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		rc = target_status(&t, rc);
	} else {
		rc = write_run(argv[0], &t, &a);
	}
	target_close(&t);
out:
	free(a.items);
	free(a.revokes);
	return rc;
}

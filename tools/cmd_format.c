/*
 * ujbd format JOURNAL --size=SIZE [--block-size=N] [--csum=none|v1|v2|v3]
 *              [--64bit] [--uuid=UUID] [--force]
 *
 * Create a standalone jbd2 journal: superblock in block 0, log from block 1,
 * the log zeroed so nothing stale can be mistaken for a transaction. Like
 * mke2fs, it overwrites nothing that holds data (a journal, a file system,
 * any non-zero byte where the journal goes) unless given --force.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "target.h"
#include "priv/rt.h"

/* What jbd2 takes (JBD2_MIN_BLOCKSIZE..JBD2_MAX_BLOCKSIZE, a power of two):
 * the one set the help, the error and ujbd(1) name. */
#define BLOCK_SIZES "1024, 2048, 4096, 8192, 16384, 32768 or 65536 (or 1k ... 64k)"

static void format_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd format JOURNAL --size=SIZE [--block-size=N] [--csum=none|v1|v2|v3]\n"
		"                   [--64bit] [--uuid=UUID] [--force] [--json]\n"
		"Create a standalone jbd2 journal file (created if missing).\n"
		"  --size=SIZE        journal size, e.g. 4M (k/M/G binary units); at least 16 blocks\n"
		"  --block-size=N     journal block size, default 4096; one of\n"
		"                     " BLOCK_SIZES "\n"
		"  --csum=KIND        none, v1 (crc32 of commit blocks, COMPAT_CHECKSUM),\n"
		"                     v2 or v3 (crc32c of every block), default v3\n"
		"  --64bit            64-bit block numbers (INCOMPAT_64BIT)\n"
		"  --uuid=UUID        journal UUID (seed of the checksums), default random\n"
		"  --force            overwrite JOURNAL even if it holds data (a journal, with\n"
		"                     or without unreplayed transactions, a file system, any\n"
		"                     non-zero byte); without it such a JOURNAL is refused\n"
		"  --json             print one JSON object (keys: docs/tool.md)\n"
		"exit status: 0 ok, 1 invalid input or JOURNAL holds data, 2 usage error,\n"
		"3 I/O error\n");
}

static int parse_block_size(const char *s, uint32_t *bs)
{
	uint64_t v;

	if (dev_parse_size(s, &v) || v < JBD2_MIN_BLOCKSIZE || v > JBD2_MAX_BLOCKSIZE ||
	    (v & (v - 1)))
		return -EINVAL;
	*bs = (uint32_t)v;
	return 0;
}

static const char *const csum_names[] = { "none", "v1", "v2", "v3" };

static int parse_csum(const char *s, enum jbd_csum_kind *k)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, csum_names[i])) {
			*k = (enum jbd_csum_kind)i;
			return 0;
		}
	return -EINVAL;
}

struct format_args {
	const char *path;
	uint64_t size;
	const char *size_arg;   /* --size as given, the subject of its errors */
	struct jbd_format_opts o;
	bool have_uuid;
	bool force;
	bool json;
};

static int format_parse(int argc, char **argv, struct format_args *a)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' }, { "block-size", required_argument, NULL, 'b' },
		{ "csum", required_argument, NULL, 'c' }, { "64bit", no_argument, NULL, '6' },
		{ "uuid", required_argument, NULL, 'u' }, { "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'J' },       { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->o.blocksize = 4096;
	a->o.csum = JBD_CSUM_KIND_V3;
	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 's':
			if (dev_parse_size(optarg, &a->size) || !a->size) {
				cli_err(argv[0], "bad --size: '%s': expected e.g. 4M", optarg);
				return EXIT_USAGE;
			}
			a->size_arg = optarg;
			break;
		case 'b':
			if (parse_block_size(optarg, &a->o.blocksize)) {
				cli_err(argv[0], "bad block size: '%s': expected " BLOCK_SIZES, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			if (parse_csum(optarg, &a->o.csum)) {
				cli_err(argv[0], "bad checksum kind: '%s': expected none, v1, v2 or v3",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case '6': a->o.is64 = true; break;
		case 'f': a->force = true; break;
		case 'J': a->json = true; break;
		case 'u':
			if (target_uuid_parse(optarg, a->o.uuid)) {
				cli_err(argv[0], "bad uuid: '%s': expected 8-4-4-4-12 hex digits", optarg);
				return EXIT_USAGE;
			}
			a->have_uuid = true;
			break;
		case 'h': format_usage(stdout); return -1;
		default: return EXIT_USAGE;
		}
	}
	if (cli_one_operand(argc, argv, "JOURNAL"))
		return EXIT_USAGE;
	if (!a->size) {
		cli_err(argv[0], "missing --size: '%s': the journal size is required", argv[optind]);
		return EXIT_USAGE;
	}
	a->path = argv[optind];
	return 0;
}

/* --json: what was written, the features as the superblock now says them
 * (read back, so the names are info's). */
static int format_json(struct dev *d, const struct format_args *a)
{
	uint8_t *blk = malloc(a->o.blocksize);
	struct jbd2_sb sb;
	char u[40];
	int rc = blk ? dev_pread(d, blk, a->o.blocksize, 0) : -ENOMEM;

	if (rc) {
		free(blk);
		return rc;
	}
	memcpy(&sb, blk, sizeof(sb));
	free(blk);
	printf("{\"journal\":");
	cli_json_str(stdout, a->path);
	printf(",\"blocksize\":%u,\"maxlen\":%u,\"first\":%u,\"last\":%u,\"checksum\":\"%s\","
	       "\"uuid\":\"%s\",\"features\":[", jbd_get_be32(sb.s_blocksize),
	       jbd_get_be32(sb.s_maxlen), jbd_get_be32(sb.s_first), jbd_get_be32(sb.s_maxlen) - 1,
	       csum_names[a->o.csum], target_uuid_str(sb.s_uuid, u));
	target_print_features(stdout, &sb, ",", true);
	printf("]}\n");
	cli_json_done();
	return 0;
}

int cmd_format(int argc, char **argv)
{
	struct format_args a = { 0 };
	struct cli_progress progress;
	struct target_req r = { .writable = true, .standalone = true };
	struct target t;
	struct jbd_err err = { 0 };
	char u[40];
	int rc = format_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	/* The uuid seeds every checksum: two journals sharing one would take
	 * each other's stale blocks for their own, so no randomness is an
	 * error (the caller may name one with --uuid), never a fixed pattern. */
	if (!a.have_uuid && (rc = rt_uuid_v4(a.o.uuid))) {
		cli_err(argv[0], "cannot format: '%s': no random uuid for the journal (%s): name one with --uuid",
			a.path, strerror(-rc));
		return target_exit_status(rc);
	}
	a.o.blocks = a.size / a.o.blocksize;
	if (a.o.blocks < JBD_FORMAT_MIN_BLOCKS || a.o.blocks > UINT32_MAX) {
		bool small = a.o.blocks < JBD_FORMAT_MIN_BLOCKS;
		cli_err(argv[0], "bad --size: '%s': a journal of %u-byte blocks needs at %s %llu bytes (%u blocks)",
			a.size_arg, a.o.blocksize, small ? "least" : "most",
			(unsigned long long)(small ? JBD_FORMAT_MIN_BLOCKS : (uint64_t)UINT32_MAX) *
				a.o.blocksize,
			small ? JBD_FORMAT_MIN_BLOCKS : UINT32_MAX);
		return EXIT_USAGE;
	}
	rc = target_may_overwrite(argv[0], a.path, a.o.blocks * a.o.blocksize, a.force);
	if (rc)
		return rc;
	/* the target layer creates or sizes the file, claims it (a journal
	 * open elsewhere is refused) and refuses a mounted one, --force or not */
	r.path = a.path;
	r.create_bs = a.o.blocksize;
	r.create_blocks = a.o.blocks;
	rc = target_open_req(&t, &r, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		rc = target_status(&t, rc);
		target_close(&t);
		return rc;
	}
	cli_progress_init(&progress, argv[0], "zeroing the log");
	a.o.progress = cli_progress;
	a.o.progress_arg = &progress;
	rc = jbd_format(t.jdev, &a.o, &err);
	if (!rc && a.json)
		rc = format_json(t.jdev, &a);
	target_close(&t);
	if (rc) {
		cli_err(argv[0], "cannot format: '%s': %s", a.path, err.msg[0] ? err.msg :
			target_strerror(rc));
		return target_exit_status(rc);
	}
	if (!a.json)
		printf("formatted '%s': %llu blocks of %u bytes, csum %s%s, uuid %s\n", a.path,
		       (unsigned long long)a.o.blocks, a.o.blocksize, csum_names[a.o.csum],
		       a.o.is64 ? ", 64bit" : "", target_uuid_str(a.o.uuid, u));
	return EXIT_OK;
}

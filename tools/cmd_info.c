/*
 * ujbd info TARGET [--journal=PATH] [--data=DEVICE] [--json]
 *
 * The journal superblock, where the journal lives, and whether recovery is
 * needed (s_start != 0, or the ext4 needs_recovery flag). Read only. Works
 * on every kind of TARGET, an external journal device given alone too.
 *
 * One convention in text and JSON: a range of blocks names its first and
 * its last block (inclusive), "log 1-255" and "first":1,"last":255.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "target.h"

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd info TARGET [--journal=PATH] [--data=DEVICE] [--json]\n"
		"Show the jbd2 superblock of TARGET (an ext4 image or device, an external\n"
		"journal device, or a standalone journal file) and whether the journal needs\n"
		"recovery.\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   accepted for symmetry with recover (never read)\n"
		"  --json          print one JSON object (keys: docs/tool.md)\n"
		"exit status: 0 ok, 1 invalid, missing or corrupt journal, 2 usage error,\n"
		"3 I/O error\n");
}

/* The checksum kind by the name `ujbd format --csum` takes, and its
 * algorithm. */
static void csum_names(const struct jbd2_sb *sb, const char **kind, const char **alg)
{
	*kind = "none";
	*alg = "none";
	if (jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_CSUM_V3))
		*kind = "v3";
	else if (jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_CSUM_V2))
		*kind = "v2";
	else if (jbd_sb_has_compat(sb, JBD2_FEATURE_COMPAT_CHECKSUM))
		*kind = "v1";
	if (**kind == 'v')
		*alg = (*kind)[1] == '1' ? "crc32" : "crc32c";
}

/* The users' UUIDs (the file systems of a journal device), as JSON
 * strings or words; the all-zero UUID of an internal journal is skipped.
 * How many were printed. */
static unsigned print_users(const struct jbd2_sb *sb, bool json, const char *open,
			    const char *close)
{
	static const uint8_t zero[16];
	uint32_t n = jbd_get_be32(sb->s_nr_users);
	unsigned shown = 0;
	char u[40];

	for (uint32_t i = 0; i < n && i < 48; i++) {
		const uint8_t *id = sb->s_users + 16 * i;

		if (!memcmp(id, zero, 16))
			continue;
		printf(json ? "%s\"%s\"" : "%s%s", shown ? (json ? "," : " ") : open,
		       target_uuid_str(id, u));
		shown++;
	}
	if (shown)
		printf("%s", close);
	return shown;
}

/* "label:" padded so every value starts in the same column (the longest
 * label, "ext4 needs_recovery", and one space). */
static void label(const char *l)
{
	printf("%s:%*s", l, (int)(20 - strlen(l)), "");
}

static void field(const char *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void field(const char *l, const char *fmt, ...)
{
	va_list ap;

	label(l);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void info_text(const struct target *t, const struct jbd_journal *j)
{
	const struct jbd2_sb *sb = &j->j_sb;
	uint32_t start = jbd_get_be32(sb->s_start);
	const char *kind, *alg;
	char u[40];

	csum_names(sb, &kind, &alg);
	field("journal", "'%s' (%s)", t->journal_path, target_kind_name(t->kind));
	field("superblock", "v%d at journal block %llu", jbd_sb_is_v2(sb) ? 2 : 1,
	      (unsigned long long)t->loc.j_sb_block);
	field("block size", "%u", jbd_get_be32(sb->s_blocksize));
	field("length", "%u blocks", jbd_get_be32(sb->s_maxlen));
	field("log", "blocks %u-%u", j->j_first, j->j_last - 1);
	label("features");
	target_print_features(stdout, sb, " ", false);
	putchar('\n');
	field("checksum", "%s%s%s%s", kind, strcmp(alg, "none") ? " (" : "",
	      strcmp(alg, "none") ? alg : "", strcmp(alg, "none") ? ")" : "");
	field("uuid", "%s", target_uuid_str(sb->s_uuid, u));
	label("users");
	printf("%u", jbd_get_be32(sb->s_nr_users));
	print_users(sb, false, " (", ")");
	putchar('\n');
	field("sequence", "%u", jbd_get_be32(sb->s_sequence));
	field("start", "%u", start);
	field("head", "%u", jbd_get_be32(sb->s_head));
	field("errno", "%d", (int32_t)jbd_get_be32(sb->s_errno));
	if (target_is_ext4(t))
		field("ext4 needs_recovery", "%s", t->ext4_needs_recovery ? "yes" : "no");
	field("needs recovery", "%s", start ? "yes (the log is not empty)" :
	      t->ext4_needs_recovery ? "flag only (the log is empty)" : "no");
}

static void info_json(const struct target *t, const struct jbd_journal *j)
{
	const struct jbd2_sb *sb = &j->j_sb;
	const char *kind, *alg;
	char u[40];

	csum_names(sb, &kind, &alg);
	printf("{\"journal\":");
	cli_json_str(stdout, t->journal_path);
	printf(",\"kind\":\"%s\",\"version\":%d,\"sb_block\":%llu,\"blocksize\":%u,"
	       "\"maxlen\":%u,\"first\":%u,\"last\":%u,\"sequence\":%u,\"start\":%u,"
	       "\"head\":%u,\"errno\":%d,",
	       target_kind_name(t->kind), jbd_sb_is_v2(sb) ? 2 : 1,
	       (unsigned long long)t->loc.j_sb_block, jbd_get_be32(sb->s_blocksize),
	       jbd_get_be32(sb->s_maxlen), j->j_first, j->j_last - 1,
	       jbd_get_be32(sb->s_sequence), jbd_get_be32(sb->s_start), jbd_get_be32(sb->s_head),
	       (int32_t)jbd_get_be32(sb->s_errno));
	printf("\"feature_compat\":%u,\"feature_incompat\":%u,\"feature_ro_compat\":%u,"
	       "\"features\":[",
	       jbd_sb_compat(sb), jbd_sb_incompat(sb), jbd_sb_ro_compat(sb));
	target_print_features(stdout, sb, ",", true);
	printf("],\"checksum_type\":%u,\"checksum\":\"%s\",\"checksum_algorithm\":\"%s\","
	       "\"uuid\":\"%s\",\"nr_users\":%u,\"users\":[",
	       sb->s_checksum_type, kind, alg, target_uuid_str(sb->s_uuid, u),
	       jbd_get_be32(sb->s_nr_users));
	print_users(sb, true, "", "");
	printf("],\"tag_bytes\":%u,", j->j_fmt.f_tag_bytes);
	if (target_is_ext4(t))
		printf("\"ext4_needs_recovery\":%s,", t->ext4_needs_recovery ? "true" : "false");
	printf("\"needs_recovery\":%s}\n", jbd_get_be32(sb->s_start) ? "true" : "false");
}

int cmd_info(int argc, char **argv)
{
	struct target_cli cli = { .usage = info_usage };
	struct target t;
	struct jbd_journal j;
	int rc;

	rc = target_cli_load(argc, argv, &cli, &t, &j);
	if (rc >= 0)
		return rc;
	if (cli.json) {
		info_json(&t, &j);
		cli_json_done();
	} else {
		info_text(&t, &j);
	}
	target_close(&t);
	return EXIT_OK;
}

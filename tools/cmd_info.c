/*
 * ujbd info TARGET [--journal=PATH] [--data=DEVICE] [--json]
 *
 * The journal superblock, where the journal lives, and whether recovery is
 * needed (s_start != 0, or the ext4 needs_recovery flag). Read only.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "target.h"

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd info TARGET [--journal=PATH] [--data=DEVICE] [--json]\n"
		"Show the jbd2 superblock of TARGET (an ext4 image or device, or a standalone\n"
		"journal file) and whether the journal needs recovery.\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   the data device of a standalone journal (optional here)\n"
		"  --json          print one JSON object\n"
		"exit status: 0 ok, 1 invalid or corrupt journal, 2 usage error, 3 I/O error\n");
}

static void info_text(const struct target *t, const struct jbd_journal *j)
{
	const struct jbd2_sb *sb = &j->j_sb;
	uint32_t start = jbd_get_be32(sb->s_start);
	char u[40];

	printf("journal:          '%s' (%s)\n", t->journal_path, target_kind_name(t->kind));
	printf("superblock:       v%d at journal block %llu\n", jbd_sb_is_v2(sb) ? 2 : 1,
	       (unsigned long long)t->loc.j_sb_block);
	printf("block size:       %u\n", jbd_get_be32(sb->s_blocksize));
	printf("length:           %u blocks (log %u-%u)\n", jbd_get_be32(sb->s_maxlen),
	       j->j_first, j->j_last - 1);
	printf("features:         ");
	target_print_features(stdout, sb, " ", false);
	printf("\nchecksum type:    %u%s\n", sb->s_checksum_type,
	       sb->s_checksum_type == JBD2_CRC32C_CHKSUM ? " (crc32c)" : "");
	printf("uuid:             %s\n", target_uuid_str(sb->s_uuid, u));
	printf("users:            %u\n", jbd_get_be32(sb->s_nr_users));
	printf("sequence:         %u\n", jbd_get_be32(sb->s_sequence));
	printf("start:            %u\n", start);
	printf("head:             %u\n", jbd_get_be32(sb->s_head));
	printf("errno:            %d\n", (int32_t)jbd_get_be32(sb->s_errno));
	if (target_is_ext4(t))
		printf("ext4 needs_recovery: %s\n", t->ext4_needs_recovery ? "yes" : "no");
	printf("needs recovery:   %s\n", start ? "yes (the log is not empty)" :
				     t->ext4_needs_recovery ? "flag only (the log is empty)" : "no");
}

static void info_json(const struct target *t, const struct jbd_journal *j)
{
	const struct jbd2_sb *sb = &j->j_sb;
	char u[40];

	printf("{\"journal\":");
	cli_json_str(stdout, t->journal_path);
	printf(",\"kind\":\"%s\",\"version\":%d,\"sb_block\":%llu,\"blocksize\":%u,"
	       "\"maxlen\":%u,\"first\":%u,\"last\":%u,\"sequence\":%u,\"start\":%u,"
	       "\"head\":%u,\"errno\":%d,",
	       target_kind_name(t->kind), jbd_sb_is_v2(sb) ? 2 : 1,
	       (unsigned long long)t->loc.j_sb_block, jbd_get_be32(sb->s_blocksize),
	       jbd_get_be32(sb->s_maxlen), j->j_first, j->j_last, jbd_get_be32(sb->s_sequence),
	       jbd_get_be32(sb->s_start), jbd_get_be32(sb->s_head),
	       (int32_t)jbd_get_be32(sb->s_errno));
	printf("\"feature_compat\":%u,\"feature_incompat\":%u,\"feature_ro_compat\":%u,"
	       "\"features\":[",
	       jbd_sb_compat(sb), jbd_sb_incompat(sb), jbd_sb_ro_compat(sb));
	target_print_features(stdout, sb, ",", true);
	printf("],\"checksum_type\":%u,\"uuid\":\"%s\",\"nr_users\":%u,\"tag_bytes\":%u,",
	       sb->s_checksum_type, target_uuid_str(sb->s_uuid, u),
	       jbd_get_be32(sb->s_nr_users), j->j_fmt.f_tag_bytes);
	if (target_is_ext4(t))
		printf("\"ext4_needs_recovery\":%s,", t->ext4_needs_recovery ? "true" : "false");
	printf("\"needs_recovery\":%s}\n", jbd_get_be32(sb->s_start) ? "true" : "false");
}

int cmd_info(int argc, char **argv)
{
	struct target t;
	struct jbd_journal j;
	bool json;
	int rc;

	rc = target_cli_load(argc, argv, info_usage, &json, &t, &j);
	if (rc >= 0)
		return rc;
	if (json) {
		info_json(&t, &j);
		cli_json_done();
	}
	else
		info_text(&t, &j);
	target_close(&t);
	return EXIT_OK;
}

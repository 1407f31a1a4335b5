/*
 * ujbd dump TARGET [--journal=PATH] [--data=DEVICE] [--json]
 *
 * Every transaction in the log from s_start, as recovery's scan reads it:
 * descriptor blocks and tags (target, flags, data checksum good or bad),
 * revoke records, the commit block (time, checksum), and where and why the
 * scan stopped. Read only. Format change => update this file (format.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "target.h"

static void dump_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd dump TARGET [--journal=PATH] [--data=DEVICE] [--json]\n"
		"List every transaction in the log of TARGET from s_start: descriptor blocks\n"
		"and tags, revoke records, commit blocks, checksums, and where the scan stopped.\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   accepted for symmetry with recover (not needed)\n"
		"  --json          print one JSON object\n"
		"exit status: 0 ok, 1 invalid or corrupt journal (still dumped), 2 usage error,\n"
		"3 I/O error\n");
}

static const char *csum_name(uint8_t c)
{
	return c == JBD_CSUM_GOOD ? "good" : c == JBD_CSUM_BAD ? "bad" : "none";
}

static void dump_trans_text(const struct jbd_scan_trans *t)
{
	size_t tag = 0, rev = 0;

	printf("transaction %u at block %u: %s\n", t->tid, t->start_block,
	       t->replay ? "committed" : t->committed ? "committed, after the end of replay"
			 : t->has_commit ? "commit block bad" : "not committed");
	for (size_t b = 0; b < t->nblocks; b++) {
		const struct jbd_scan_block *sb = &t->blocks[b];
		if (sb->type == JBD2_DESCRIPTOR_BLOCK) {
			printf("  descriptor block %u: %u tags, tail checksum %s\n", sb->journal_block,
			       sb->count, csum_name(sb->csum));
			for (uint32_t i = 0; i < sb->count && tag < t->ntags; i++, tag++)
				printf("    block %llu logged at journal block %u (flags 0x%x, checksum %s)\n",
				       (unsigned long long)t->tags[tag].target,
				       t->tags[tag].journal_block, t->tags[tag].flags,
				       csum_name(t->tags[tag].csum));
		} else {
			printf("  revoke block %u: r_count %u, %u records, tail checksum %s\n",
			       sb->journal_block, sb->r_count, sb->count, csum_name(sb->csum));
			for (uint32_t i = 0; i < sb->count && rev < t->nrevoked; i++, rev++)
				printf("    revoke block %llu\n", (unsigned long long)t->revoked[rev]);
		}
	}
	if (t->has_commit)
		printf("  commit block %u: time %llu.%09u, checksum %s\n", t->commit_block,
		       (unsigned long long)t->commit_sec, t->commit_nsec, csum_name(t->commit_csum));
}

static void dump_text(const struct target *tg, const struct jbd_journal *j,
		      const struct jbd_scan *sc)
{
	printf("journal '%s' (%s): block size %u, log %u-%u, s_start %u, s_sequence %u\n",
	       tg->journal_path, target_kind_name(tg->kind), j->j_fmt.f_blocksize, j->j_first,
	       j->j_last - 1, jbd_get_be32(j->j_sb.s_start), jbd_get_be32(j->j_sb.s_sequence));
	for (size_t i = 0; i < sc->sc_ntrans; i++)
		dump_trans_text(&sc->sc_trans[i]);
	printf("scan stopped at block %u (%s): %s\n", sc->sc_stop_block,
	       jbd_scan_stop_name(sc->sc_stop), sc->sc_stop_msg);
	printf("replay would cover sequences %u to %u; the log ends at block %u\n",
	       sc->sc_start_tid, sc->sc_end_tid - 1, sc->sc_end_block);
}

static void dump_trans_json(const struct jbd_scan_trans *t)
{
	printf("{\"sequence\":%u,\"start_block\":%u,\"committed\":%s,\"replay\":%s,\"blocks\":[",
	       t->tid, t->start_block, t->committed ? "true" : "false",
	       t->replay ? "true" : "false");
	for (size_t k = 0; k < t->ntags; k++)
		printf("%s{\"target\":%llu,\"journal_block\":%u,\"flags\":%u,\"checksum\":\"%s\"}",
		       k ? "," : "", (unsigned long long)t->tags[k].target, t->tags[k].journal_block,
		       t->tags[k].flags, csum_name(t->tags[k].csum));
	printf("],\"revoked\":[");
	for (size_t k = 0; k < t->nrevoked; k++)
		printf("%s%llu", k ? "," : "", (unsigned long long)t->revoked[k]);
	printf("],\"log_blocks\":[");
	for (size_t b = 0; b < t->nblocks; b++)
		printf("%s{\"journal_block\":%u,\"type\":\"%s\",\"count\":%u,\"checksum\":\"%s\"}",
		       b ? "," : "", t->blocks[b].journal_block,
		       t->blocks[b].type == JBD2_DESCRIPTOR_BLOCK ? "descriptor" : "revoke",
		       t->blocks[b].count, csum_name(t->blocks[b].csum));
	printf("]");
	if (t->has_commit)
		printf(",\"commit\":{\"journal_block\":%u,\"sec\":%llu,\"nsec\":%u,\"checksum\":\"%s\"}",
		       t->commit_block, (unsigned long long)t->commit_sec, t->commit_nsec,
		       csum_name(t->commit_csum));
	printf("}");
}

/* Journaled blocks recovery would skip for a bad data checksum: the tags of
 * the transactions it replays whose checksum failed. */
static size_t bad_data_csums(const struct jbd_scan *sc)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->sc_ntrans; i++)
		for (size_t k = 0; sc->sc_trans[i].replay && k < sc->sc_trans[i].ntags; k++)
			n += sc->sc_trans[i].tags[k].csum == JBD_CSUM_BAD;
	return n;
}

static void dump_json(const struct target *tg, const struct jbd_journal *j,
		      const struct jbd_scan *sc, size_t nbad)
{
	printf("{\"journal\":");
	cli_json_str(stdout, tg->journal_path);
	printf(",\"kind\":\"%s\",\"blocksize\":%u,\"first\":%u,\"last\":%u,\"start\":%u,"
	       "\"sequence\":%u,\"transactions\":[",
	       target_kind_name(tg->kind), j->j_fmt.f_blocksize, j->j_first, j->j_last,
	       jbd_get_be32(j->j_sb.s_start), jbd_get_be32(j->j_sb.s_sequence));
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		if (i)
			printf(",");
		dump_trans_json(&sc->sc_trans[i]);
	}
	printf("],\"end\":{\"block\":%u,\"reason\":\"%s\",\"message\":", sc->sc_stop_block,
	       jbd_scan_stop_name(sc->sc_stop));
	cli_json_str(stdout, sc->sc_stop_msg);
	printf(",\"end_sequence\":%u,\"head_block\":%u,\"error\":%s,\"bad_data_checksums\":%zu}}\n",
	       sc->sc_end_tid, sc->sc_end_block, sc->sc_error ? "true" : "false", nbad);
}

int cmd_dump(int argc, char **argv)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_scan sc;
	struct jbd_err err = { 0 };
	bool json;
	size_t nbad;
	int rc;

	rc = target_cli_load(argc, argv, dump_usage, &json, &t, &j);
	if (rc >= 0)
		return rc;
	rc = jbd_scan_log(&j, &sc, &err);
	nbad = bad_data_csums(&sc);
	if (json) {
		dump_json(&t, &j, &sc, nbad);
		cli_json_done(); /* a corrupt log's error is in its "end" object */
	} else {
		dump_text(&t, &j, &sc);
	}
	if (rc) {
		cli_err(argv[0], "corrupt log: '%s': %s", t.journal_path, err.msg);
	} else if (nbad) {
		cli_err(argv[0], "corrupt log: '%s': %zu journaled block%s with a bad data checksum "
			"(recover would skip %s)", t.journal_path, nbad, nbad == 1 ? "" : "s",
			nbad == 1 ? "it" : "them");
		rc = -EBADMSG;
	}
	jbd_scan_release(&sc);
	target_close(&t);
	return target_exit_status(rc);
}

/*
 * ujbd dump TARGET [--journal=PATH] [--data=DEVICE] [--block=N] [--tid=N]
 *                  [--limit=N] [--hex] [--json]
 *
 * Every transaction in the log from s_start, as recovery's scan reads it:
 * descriptor blocks and tags (target, flags, data checksum good or bad),
 * revoke records, the commit block (time, checksum), and where and why the
 * scan stopped. Read only. Format change => update this file (format.h).
 *
 * The filters are debugfs logdump's: the transactions that log or revoke
 * one block (-b), one transaction, the first N, and the journaled contents
 * in hex (-c). They choose what is printed, never what is checked: the scan
 * and the exit status are those of the whole log.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "target.h"

static void dump_usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd dump TARGET [--journal=PATH] [--data=DEVICE] [--block=N] [--tid=N]\n"
		"                        [--limit=N] [--hex] [--json]\n"
		"List every transaction in the log of TARGET from s_start: descriptor blocks\n"
		"and tags, revoke records, commit blocks, checksums, and where the scan stopped.\n"
		"  --journal=PATH  the external journal device of an ext4 TARGET\n"
		"  --data=DEVICE   accepted for symmetry with recover (never read)\n"
		"  --block=N       only the transactions that log or revoke data block N, and\n"
		"                  of those only N's tags and revoke records (debugfs logdump -b)\n"
		"  --tid=N         only transaction N\n"
		"  --limit=N       at most the first N transactions (after --block and --tid)\n"
		"  --hex           the journaled contents of each tag shown, in hex, as recovery\n"
		"                  would write them (escaped blocks restored)\n"
		"  --json          print one JSON object (keys: docs/tool.md)\n"
		"The filters choose what is shown; the whole log is still checked.\n"
		"exit status: 0 ok, 1 invalid or corrupt journal (still dumped), 2 usage error,\n"
		"3 I/O error\n");
}

struct dump_filter {
	bool has_block, has_tid, hex;
	uint64_t block;
	uint32_t tid;
	uint64_t limit;          /* 0: no limit */
};

static int dump_opt(void *arg, const char *verb, int c, const char *val)
{
	struct dump_filter *f = arg;
	uint64_t v;

	switch (c) {
	case 'b':
		if (cli_number(verb, "block", val, 0, UINT64_MAX, &f->block))
			return EXIT_USAGE;
		f->has_block = true;
		return 0;
	case 't':
		if (cli_number(verb, "tid", val, 0, UINT32_MAX, &v))
			return EXIT_USAGE;
		f->tid = (uint32_t)v;
		f->has_tid = true;
		return 0;
	case 'l':
		if (cli_number(verb, "limit", val, 1, UINT64_MAX, &f->limit))
			return EXIT_USAGE;
		return 0;
	case 'x':
		f->hex = true;
		return 0;
	}
	return EXIT_USAGE;
}

static const char *csum_name(uint8_t c)
{
	return c == JBD_CSUM_GOOD ? "good" : c == JBD_CSUM_BAD ? "bad" : "none";
}

/* ---- what the filters keep ---------------------------------------------------- */

static bool tag_shown(const struct dump_filter *f, const struct jbd_scan_tag *tag)
{
	return !f->has_block || tag->target == f->block;
}

static bool revoke_shown(const struct dump_filter *f, uint64_t blk)
{
	return !f->has_block || blk == f->block;
}

static bool trans_matches(const struct dump_filter *f, const struct jbd_scan_trans *t)
{
	if (f->has_tid && t->tid != f->tid)
		return false;
	if (!f->has_block)
		return true;
	for (size_t k = 0; k < t->ntags; k++)
		if (t->tags[k].target == f->block)
			return true;
	for (size_t k = 0; k < t->nrevoked; k++)
		if (t->revoked[k] == f->block)
			return true;
	return false;
}

/* Which transactions are shown: shown[i], and how many. */
static size_t dump_select(const struct dump_filter *f, const struct jbd_scan *sc, bool *shown)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		shown[i] = (!f->limit || n < f->limit) && trans_matches(f, &sc->sc_trans[i]);
		n += shown[i];
	}
	return n;
}

/* The block recovery would write for a tag: the logged copy, unescaped. */
static int tag_contents(const struct jbd_journal *j, const struct jbd_scan_tag *tag, uint8_t *buf)
{
	int rc = jbd_journal_read(j, tag->journal_block, buf);

	if (!rc && (tag->flags & JBD2_FLAG_ESCAPE))
		jbd_unescape(buf);
	return rc;
}

/* ---- text ----------------------------------------------------------------------- */

/* hexdump -C's layout, runs of equal lines as one "*". */
static void hex_text(const uint8_t *p, size_t n)
{
	bool starred = false;

	for (size_t off = 0; off < n; off += 16) {
		if (off && off + 16 <= n && !memcmp(p + off, p + off - 16, 16)) {
			if (!starred)
				printf("      *\n");
			starred = true;
			continue;
		}
		starred = false;
		printf("      %08zx ", off);
		for (size_t i = 0; i < 16; i++)
			printf("%s%02x", i == 8 ? "  " : " ", p[off + i]);
		printf("  |");
		for (size_t i = 0; i < 16; i++)
			putchar(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.');
		printf("|\n");
	}
	printf("      %08zx\n", n);
}

static int dump_tag_text(const struct jbd_journal *j, const struct dump_filter *f,
			 const struct jbd_scan_tag *tag, uint8_t *buf)
{
	printf("    block %llu logged at journal block %u (flags 0x%x, checksum %s)\n",
	       (unsigned long long)tag->target, tag->journal_block, tag->flags,
	       csum_name(tag->csum));
	if (!f->hex)
		return 0;
	int rc = tag_contents(j, tag, buf);
	if (rc)
		return rc;
	hex_text(buf, j->j_fmt.f_blocksize);
	return 0;
}

/* One transaction; with --block only that block's tags and revoke records
 * (the descriptor and revoke blocks that hold them are not listed). */
static int dump_trans_text(const struct jbd_journal *j, const struct dump_filter *f,
			   const struct jbd_scan_trans *t, uint8_t *buf)
{
	size_t tag = 0, rev = 0;
	int rc = 0;

	printf("transaction %u at block %u: %s\n", t->tid, t->start_block,
	       t->replay ? "committed" : t->committed ? "committed, after the end of replay"
			 : t->has_commit ? "commit block bad" : "not committed");
	for (size_t b = 0; b < t->nblocks && !rc; b++) {
		const struct jbd_scan_block *sb = &t->blocks[b];
		bool desc = sb->type == JBD2_DESCRIPTOR_BLOCK;

		if (desc && !f->has_block)
			printf("  descriptor block %u: %u tag%s, tail checksum %s\n",
			       sb->journal_block, sb->count, cli_s(sb->count), csum_name(sb->csum));
		else if (!f->has_block)
			printf("  revoke block %u: r_count %u, %u record%s, tail checksum %s\n",
			       sb->journal_block, sb->r_count, sb->count, cli_s(sb->count),
			       csum_name(sb->csum));
		for (uint32_t i = 0; desc && i < sb->count && tag < t->ntags && !rc; i++, tag++)
			if (tag_shown(f, &t->tags[tag]))
				rc = dump_tag_text(j, f, &t->tags[tag], buf);
		for (uint32_t i = 0; !desc && i < sb->count && rev < t->nrevoked; i++, rev++)
			if (revoke_shown(f, t->revoked[rev]))
				printf("    revoke block %llu\n", (unsigned long long)t->revoked[rev]);
	}
	if (t->has_commit) {
		/* seconds since 1970 (jbd2 and the real world write the time
		 * of day; the lab's simulated world its virtual time) */
		char date[40] = "?";
		struct tm tm;
		time_t sec = (time_t)t->commit_sec;
		if ((uint64_t)sec == t->commit_sec && gmtime_r(&sec, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
		printf("  commit block %u: time %llu.%09u (%s), checksum %s\n", t->commit_block,
		       (unsigned long long)t->commit_sec, t->commit_nsec, date,
		       csum_name(t->commit_csum));
	}
	return rc;
}

static void dump_end_text(const struct jbd_journal *j, const struct jbd_scan *sc,
			  size_t nshown, bool filtered)
{
	printf("scan stopped at block %u (%s): %s\n", sc->sc_stop_block,
	       jbd_scan_stop_name(sc->sc_stop), sc->sc_stop_msg);
	if (!jbd_get_be32(j->j_sb.s_start))
		printf("nothing to replay: the journal is empty\n");
	else if (sc->sc_end_tid == sc->sc_start_tid)
		printf("nothing to replay: no committed transaction from sequence %u; the log "
		       "ends at block %u\n", sc->sc_start_tid, sc->sc_end_block);
	else if (sc->sc_end_tid - 1 == sc->sc_start_tid)
		printf("replay would cover sequence %u; the log ends at block %u\n",
		       sc->sc_start_tid, sc->sc_end_block);
	else
		printf("replay would cover sequences %u to %u; the log ends at block %u\n",
		       sc->sc_start_tid, sc->sc_end_tid - 1, sc->sc_end_block);
	if (filtered)
		printf("shown: %zu of %zu transaction%s\n", nshown, sc->sc_ntrans,
		       cli_s(sc->sc_ntrans));
}

static int dump_text(const struct target *tg, const struct jbd_journal *j,
		     const struct jbd_scan *sc, const struct dump_filter *f, const bool *shown,
		     uint8_t *buf)
{
	size_t n = 0;
	int rc = 0;

	printf("journal '%s' (%s): block size %u, log %u-%u, s_start %u, s_sequence %u\n",
	       tg->journal_path, target_kind_name(tg->kind), j->j_fmt.f_blocksize, j->j_first,
	       j->j_last - 1, jbd_get_be32(j->j_sb.s_start), jbd_get_be32(j->j_sb.s_sequence));
	for (size_t i = 0; i < sc->sc_ntrans && !rc; i++)
		if (shown[i]) {
			rc = dump_trans_text(j, f, &sc->sc_trans[i], buf);
			n++;
		}
	dump_end_text(j, sc, n, f->has_block || f->has_tid || f->limit);
	return rc;
}

/* ---- JSON ----------------------------------------------------------------------- */

static int dump_tag_json(const struct jbd_journal *j, const struct dump_filter *f,
			 const struct jbd_scan_tag *tag, bool first, uint8_t *buf)
{
	printf("%s{\"target\":%llu,\"journal_block\":%u,\"flags\":%u,\"checksum\":\"%s\"",
	       first ? "" : ",", (unsigned long long)tag->target, tag->journal_block, tag->flags,
	       csum_name(tag->csum));
	if (f->hex) {
		int rc = tag_contents(j, tag, buf);
		if (rc)
			return rc;
		printf(",\"data\":\"");
		for (uint32_t i = 0; i < j->j_fmt.f_blocksize; i++)
			printf("%02x", buf[i]);
		printf("\"");
	}
	printf("}");
	return 0;
}

static int dump_trans_json(const struct jbd_journal *j, const struct dump_filter *f,
			   const struct jbd_scan_trans *t, uint8_t *buf)
{
	bool first = true;
	int rc = 0;

	printf("{\"sequence\":%u,\"start_block\":%u,\"committed\":%s,\"replay\":%s,\"blocks\":[",
	       t->tid, t->start_block, t->committed ? "true" : "false",
	       t->replay ? "true" : "false");
	for (size_t k = 0; k < t->ntags && !rc; k++)
		if (tag_shown(f, &t->tags[k])) {
			rc = dump_tag_json(j, f, &t->tags[k], first, buf);
			first = false;
		}
	printf("],\"revoked\":[");
	first = true;
	for (size_t k = 0; k < t->nrevoked; k++)
		if (revoke_shown(f, t->revoked[k])) {
			printf("%s%llu", first ? "" : ",", (unsigned long long)t->revoked[k]);
			first = false;
		}
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
	return rc;
}

static int dump_json(const struct target *tg, const struct jbd_journal *j,
		     const struct jbd_scan *sc, const struct dump_filter *f, const bool *shown,
		     size_t nbad, uint8_t *buf)
{
	bool first = true;
	int rc = 0;

	printf("{\"journal\":");
	cli_json_str(stdout, tg->journal_path);
	printf(",\"kind\":\"%s\",\"blocksize\":%u,\"first\":%u,\"last\":%u,\"start\":%u,"
	       "\"sequence\":%u,\"transactions_total\":%zu,\"transactions\":[",
	       target_kind_name(tg->kind), j->j_fmt.f_blocksize, j->j_first, j->j_last - 1,
	       jbd_get_be32(j->j_sb.s_start), jbd_get_be32(j->j_sb.s_sequence), sc->sc_ntrans);
	for (size_t i = 0; i < sc->sc_ntrans && !rc; i++) {
		if (!shown[i])
			continue;
		printf("%s", first ? "" : ",");
		rc = dump_trans_json(j, f, &sc->sc_trans[i], buf);
		first = false;
	}
	printf("],\"end\":{\"block\":%u,\"reason\":\"%s\",\"message\":", sc->sc_stop_block,
	       jbd_scan_stop_name(sc->sc_stop));
	cli_json_str(stdout, sc->sc_stop_msg);
	printf(",\"end_sequence\":%u,\"head_block\":%u,\"nothing_to_replay\":%s,\"error\":%s,"
	       "\"bad_data_checksums\":%zu}}\n", sc->sc_end_tid, sc->sc_end_block,
	       sc->sc_end_tid == sc->sc_start_tid ? "true" : "false",
	       sc->sc_error ? "true" : "false", nbad);
	return rc;
}

/* ---- the verb ------------------------------------------------------------------- */

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

/* Print the scanned log; 0, or the error reading a journaled block (--hex). */
static int dump_print(const struct target *t, const struct jbd_journal *j,
		      const struct jbd_scan *sc, const struct dump_filter *f, size_t nbad,
		      bool json)
{
	bool *shown = calloc(sc->sc_ntrans ? sc->sc_ntrans : 1, sizeof(*shown));
	uint8_t *buf = malloc(j->j_fmt.f_blocksize);
	int rc = -ENOMEM;

	if (shown && buf) {
		dump_select(f, sc, shown);
		if (json) {
			rc = dump_json(t, j, sc, f, shown, nbad, buf);
			cli_json_done(); /* a corrupt log's error is in its "end" object */
		} else {
			rc = dump_text(t, j, sc, f, shown, buf);
		}
	}
	free(shown);
	free(buf);
	return rc;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "block", required_argument, NULL, 'b' }, { "tid", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'l' }, { "hex", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_filter f = { 0 };
	struct target_cli cli = { .usage = dump_usage, .opts = opts, .opt = dump_opt, .arg = &f };
	struct target t;
	struct jbd_journal j;
	struct jbd_scan sc;
	struct jbd_err err = { 0 };
	size_t nbad;
	int rc, prc;

	rc = target_cli_load(argc, argv, &cli, &t, &j);
	if (rc >= 0)
		return rc;
	rc = jbd_scan_log(&j, &sc, &err);
	nbad = bad_data_csums(&sc);
	prc = dump_print(&t, &j, &sc, &f, nbad, cli.json);
	if (prc) {
		cli_err(argv[0], "cannot read: '%s': %s", t.journal_path, target_strerror(prc));
		rc = prc;
	} else if (rc) {
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

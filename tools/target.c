/*
 * target.c: the tool's side of TARGET: the shared front of the read-only
 * verbs, and the printing helpers of the journal verbs (JSON strings,
 * UUIDs, feature names).
 *
 * The one idea: resolving TARGET / --journal / --data is not done here but
 * by the library's target layer (src/target/target.c), the same code
 * ujbd_open_path uses, so the tool and the library fail alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "target.h"

#define TARGET_CLI_COMMON 4
#define TARGET_CLI_MAX 8

/* The common options, then the verb's. */
static int cli_options(const struct target_cli *cli, struct option *o)
{
	static const struct option common[TARGET_CLI_COMMON] = {
		{ "journal", required_argument, NULL, 'j' }, { "data", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'J' },         { "help", no_argument, NULL, 'h' },
	};
	size_t n = 0;

	memcpy(o, common, sizeof(common));
	while (cli->opts && cli->opts[n].name) {
		if (n == TARGET_CLI_MAX)
			return -EINVAL;
		o[TARGET_CLI_COMMON + n] = cli->opts[n];
		n++;
	}
	o[TARGET_CLI_COMMON + n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

int target_cli_load(int argc, char **argv, struct target_cli *cli, struct target *t,
		    struct jbd_journal *j)
{
	struct option opts[TARGET_CLI_COMMON + TARGET_CLI_MAX + 1];
	const char *journal = NULL;
	struct jbd_err err = { 0 };
	int c, rc;

	if (cli_options(cli, opts)) { /* a verb with too many options: its tests fail here */
		cli_err(argv[0], "internal error: more than %d options of its own", TARGET_CLI_MAX);
		return EXIT_USAGE;
	}
	cli->json = false;
	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j': journal = optarg; break;
		case 'd': break; /* not read: see target.h */
		case 'J': cli->json = true; break;
		case 'h': cli->usage(stdout); return EXIT_OK;
		case '?': return EXIT_USAGE;
		default:
			rc = cli->opt(cli->arg, argv[0], c, optarg);
			if (rc)
				return rc;
		}
	}
	if (cli_one_operand(argc, argv, "TARGET"))
		return EXIT_USAGE;
	rc = target_open(t, argv[optind], journal, NULL, false, false, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		rc = target_status(t, rc);
		target_close(t);
		return rc;
	}
	target_cli_note(argv[0], t);
	rc = jbd_journal_load(&t->loc, j, &err);
	if (rc) {
		cli_err(argv[0], "invalid journal: '%s': %s", t->journal_path, err.msg);
		target_close(t);
		return target_exit_status(rc);
	}
	return -1;
}

void target_cli_note(const char *verb, const struct target *t)
{
	if (t->t_in_use[0])
		cli_err(verb, "note: %s; read anyway, it may change while read", t->t_in_use);
}

const char *target_uuid_str(const uint8_t u[16], char *buf)
{
	char *p = buf;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		p += sprintf(p, "%02x", u[i]);
	}
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int target_uuid_parse(const char *s, uint8_t u[16])
{
	int n = 0;

	for (size_t i = 0; s[i] && n < 32; i++) {
		if (s[i] == '-' && (n == 8 || n == 12 || n == 16 || n == 20))
			continue;
		int v = hexval(s[i]);
		if (v < 0)
			return -EINVAL;
		if (n % 2 == 0)
			u[n / 2] = (uint8_t)(v << 4);
		else
			u[n / 2] |= (uint8_t)v;
		n++;
	}
	if (n != 32 || strlen(s) != 36)
		return -EINVAL;
	return 0;
}

const char *target_feature_name(int word, uint32_t bit)
{
	if (word == 0 && bit == JBD2_FEATURE_COMPAT_CHECKSUM)
		return "checksum";
	if (word != 1)
		return NULL;
	switch (bit) {
	case JBD2_FEATURE_INCOMPAT_REVOKE: return "revoke";
	case JBD2_FEATURE_INCOMPAT_64BIT: return "64bit";
	case JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT: return "async_commit";
	case JBD2_FEATURE_INCOMPAT_CSUM_V2: return "csum_v2";
	case JBD2_FEATURE_INCOMPAT_CSUM_V3: return "csum_v3";
	case JBD2_FEATURE_INCOMPAT_FAST_COMMIT: return "fast_commit";
	}
	return NULL;
}

void target_print_features(FILE *f, const struct jbd2_sb *sb, const char *sep, bool json)
{
	uint32_t words[3] = { jbd_sb_compat(sb), jbd_sb_incompat(sb), jbd_sb_ro_compat(sb) };
	bool first = true;

	for (int w = 0; w < 3; w++)
		for (int b = 0; b < 32; b++) {
			uint32_t bit = 1u << b;
			if (!(words[w] & bit))
				continue;
			const char *name = target_feature_name(w, bit);
			char tmp[40];
			if (!name) {
				snprintf(tmp, sizeof(tmp), "%s_0x%x",
					 w == 0 ? "compat" : w == 1 ? "incompat" : "ro_compat", bit);
				name = tmp;
			}
			fprintf(f, "%s%s%s%s", first ? "" : sep, json ? "\"" : "", name,
				json ? "\"" : "");
			first = false;
		}
	if (first && !json)
		fprintf(f, "(none)");
}

/* ---- mke2fs's rule ------------------------------------------------------------ */

/* The offset of the first non-zero byte of fd in [0, end), or end. Holes
 * of a sparse file are skipped (SEEK_DATA), so a fresh `truncate -s 2G`
 * costs nothing. -errno on a read error. */
static int64_t first_nonzero(int fd, uint64_t end)
{
	static uint8_t buf[1 << 16];
	uint64_t off = 0;

	while (off < end) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA);
		ssize_t n;

		if (data < 0 && errno == ENXIO)
			return (int64_t)end; /* only holes from off on */
		if (data >= 0)
			off = (uint64_t)data; /* (no SEEK_DATA: read from off) */
		if (off >= end)
			break;
		n = pread(fd, buf, end - off < sizeof(buf) ? end - off : sizeof(buf), (off_t)off);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				return (int64_t)(off + (uint64_t)i);
		off += (uint64_t)n;
	}
	return (int64_t)end;
}

/* What a jbd2 superblock at byte 0 says about the log, or NULL. */
static const char *journal_holds(int fd)
{
	struct jbd2_sb sb;

	if (pread(fd, &sb, sizeof(sb), 0) != (ssize_t)sizeof(sb) ||
	    jbd_get_be32(sb.s_header.h_magic) != JBD2_MAGIC)
		return NULL;
	return jbd_get_be32(sb.s_start) ? "a jbd2 journal with unreplayed transactions "
					  "(ujbd recover replays them)" : "a jbd2 journal";
}

/* What path holds, in words, into what; 0 nothing to lose, 1 something,
 * -errno when it cannot be read. */
static int path_holds(const char *path, uint64_t bytes, char *what, size_t len)
{
	struct ext4_journal ej;
	const char *j;
	struct stat st;
	int64_t at;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		rc = -ENOTBLK;
		goto out;
	}
	if (ext4_probe(path, &ej, NULL) == 0 && ej.kind != EXT4_NOT_EXT4) {
		snprintf(what, len, "%s", ej.kind == EXT4_JOURNAL_DEV ?
			 "an ext4 external journal device" : "an ext2/3/4 file system");
		ext4_journal_release(&ej);
	} else if ((j = journal_holds(fd))) {
		snprintf(what, len, "%s", j);
	} else if ((at = first_nonzero(fd, bytes)) < 0) {
		rc = (int)at;
	} else if ((uint64_t)at < bytes) {
		snprintf(what, len, "data (a non-zero byte at offset %lld)", (long long)at);
	} else {
		rc = 0; /* empty, or zeros where the verb writes */
	}
out:
	close(fd);
	return rc;
}

int target_may_overwrite(const char *verb, const char *path, uint64_t bytes, bool force)
{
	char what[160];
	int rc;

	if (force)
		return 0;
	rc = path_holds(path, bytes, what, sizeof(what));
	if (rc < 0) {
		cli_err(verb, "cannot read: '%s': %s", path, target_strerror(rc));
		return target_exit_status(rc);
	}
	if (rc == 0)
		return 0;
	cli_err(verb, "refusing to overwrite '%s': it holds %s (--force overwrites it)", path, what);
	return EXIT_INVALID;
}

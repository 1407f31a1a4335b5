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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "target.h"

int target_cli_load(int argc, char **argv, void (*usage)(FILE *), bool *json,
		    struct target *t, struct jbd_journal *j)
{
	static const struct option opts[] = {
		{ "journal", required_argument, NULL, 'j' }, { "data", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'J' },         { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *journal = NULL, *data = NULL;
	struct jbd_err err = { 0 };
	int c, rc;

	*json = false;
	while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j': journal = optarg; break;
		case 'd': data = optarg; break;
		case 'J': *json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (cli_one_operand(argc, argv, "TARGET"))
		return EXIT_USAGE;
	rc = target_open(t, argv[optind], journal, data, false, false, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		rc = target_status(t, rc);
		target_close(t);
		return rc;
	}
	rc = jbd_journal_load(&t->loc, j, &err);
	if (rc) {
		cli_err(argv[0], "invalid journal: '%s': %s", t->journal_path, err.msg);
		target_close(t);
		return target_exit_status(rc);
	}
	return -1;
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

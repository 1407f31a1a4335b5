/*
 * target.c: resolve TARGET / --journal / --data into an open jbd_loc.
 *
 * The one idea: the journal layer only wants "journal device + map + data
 * device". ext4 images get their map from src/ext4 (inode 8, or a journal
 * device); anything whose block 0 starts with the jbd2 magic is a standalone
 * journal, mapped one to one.
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

static int fail(struct jbd_err *err, int code, const char *fmt, const char *subject,
		const char *reason)
{
	err->code = code;
	snprintf(err->msg, sizeof(err->msg), fmt, subject, reason);
	return code;
}

const char *target_kind_name(enum target_kind k)
{
	switch (k) {
	case TARGET_STANDALONE: return "standalone";
	case TARGET_EXT4_INTERNAL: return "ext4-internal";
	case TARGET_EXT4_EXTERNAL: return "ext4-external";
	case TARGET_JOURNAL_DEV: return "journal-device";
	}
	return "?";
}

bool target_is_ext4(const struct target *t)
{
	return t->kind == TARGET_EXT4_INTERNAL || t->kind == TARGET_EXT4_EXTERNAL;
}

int target_exit_status(int rc)
{
	switch (-rc) {
	case 0: return 0;
	case ENOENT: case ENOTBLK: return 2;
	case EUCLEAN: case EOPNOTSUPP: case EINVAL: case ENOSPC: case EBADMSG:
	case ERANGE: case EFBIG:
		return 1;
	default: return 3;
	}
}

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
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': journal = optarg; break;
		case 'd': data = optarg; break;
		case 'J': *json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	rc = target_open(t, argv[optind], journal, data, false, false, &err);
	if (rc) {
		cli_err(argv[0], "%s", err.msg);
		target_close(t);
		return target_exit_status(rc);
	}
	rc = jbd_journal_load(&t->loc, j, &err);
	if (rc) {
		cli_err(argv[0], "invalid journal: '%s': %s", t->journal_path, err.msg);
		target_close(t);
		return target_exit_status(rc);
	}
	return -1;
}

static int open_dev(const char *path, bool writable, struct dev **out, struct jbd_err *err)
{
	struct dev_file_opts o = { .read_only = !writable };
	int rc = dev_file_open(path, &o, out);

	if (rc)
		return fail(err, rc, "cannot open: '%s': %s", path, strerror(-rc));
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Open the data device of a standalone journal or a journal device. */
static int open_data(struct target *t, bool writable, bool need_data, struct jbd_err *err)
{
	uint32_t bs = t->loc.j_blocksize;
	int rc;

	if (!t->data_path) {
		if (need_data)
			return fail(err, -ENOENT, "no data device: '%s': %s", t->path,
				    "a standalone journal needs --data=DEVICE");
		return 0;
	}
	if (same_file(t->data_path, t->journal_path)) {
		t->ddev = NULL;
		t->loc.j_data = t->jdev;
	} else {
		rc = open_dev(t->data_path, writable, &t->ddev, err);
		if (rc)
			return rc;
		t->loc.j_data = t->ddev;
	}
	t->loc.j_data_blocks = dev_size(t->loc.j_data) / bs;
	return 0;
}

/* Block size of a standalone journal: the s_blocksize of its superblock. */
static int standalone_probe(struct target *t, bool *is_jbd, uint32_t *bs, struct jbd_err *err)
{
	struct jbd2_sb sb;
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*is_jbd = false;
	if (fd < 0)
		return fail(err, -errno, "cannot open: '%s': %s", t->path, strerror(errno));
	n = pread(fd, &sb, sizeof(sb), 0);
	close(fd);
	if (n < 0)
		return fail(err, -EIO, "cannot read: '%s': %s", t->path, strerror(EIO));
	if (n < (ssize_t)sizeof(sb) || jbd_get_be32(sb.s_header.h_magic) != JBD2_MAGIC)
		return 0;
	*is_jbd = true;
	*bs = jbd_get_be32(sb.s_blocksize);
	if (*bs < JBD2_MIN_BLOCKSIZE || *bs > JBD2_MAX_BLOCKSIZE || (*bs & (*bs - 1)))
		return fail(err, -EUCLEAN, "invalid journal: '%s': %s", t->path,
			    "superblock: invalid block size");
	return 0;
}

/* A journal with an identity map: standalone file or journal device. */
static int open_identity(struct target *t, uint32_t bs, uint64_t sb_block, bool writable,
			 struct jbd_err *err)
{
	int rc = open_dev(t->journal_path, writable, &t->jdev, err);

	if (rc)
		return rc;
	t->ident = (struct jbd_extent){ 0, 0, dev_size(t->jdev) / bs };
	t->loc = (struct jbd_loc){ .j_dev = t->jdev, .j_blocksize = bs, .j_map = &t->ident,
				   .j_nmap = 1, .j_len = t->ident.len, .j_sb_block = sb_block };
	return 0;
}

static int open_ext4_internal(struct target *t, bool writable, struct jbd_err *err)
{
	int rc;

	t->kind = TARGET_EXT4_INTERNAL;
	t->journal_path = t->path;
	rc = open_dev(t->path, writable, &t->jdev, err);
	if (rc)
		return rc;
	t->loc = (struct jbd_loc){ .j_dev = t->jdev, .j_blocksize = t->ej.blocksize,
				   .j_map = t->ej.map, .j_nmap = t->ej.nmap,
				   .j_len = t->ej.journal_blocks, .j_sb_block = 0,
				   .j_data = t->jdev, .j_data_blocks = t->ej.fs_blocks };
	return 0;
}

static int open_ext4_external(struct target *t, bool writable, struct jbd_err *err)
{
	int rc;

	t->kind = TARGET_EXT4_EXTERNAL;
	if (!t->journal_path)
		return fail(err, -ENOENT, "external journal: '%s': %s", t->path,
			    "name its device with --journal=PATH");
	rc = ext4_probe(t->journal_path, &t->jd, err);
	if (rc)
		return rc;
	if (t->jd.kind != EXT4_JOURNAL_DEV)
		return fail(err, -EINVAL, "not a journal device: '%s': %s",
			    t->journal_path, "expected mke2fs -O journal_dev");
	if (memcmp(t->jd.journal_uuid, t->ej.journal_uuid, 16))
		return fail(err, -EINVAL, "wrong journal device: '%s': %s",
			    t->journal_path, "its uuid differs from s_journal_uuid");
	rc = open_identity(t, t->jd.blocksize, t->jd.sb_block, writable, err);
	if (rc)
		return rc;
	rc = open_dev(t->path, writable, &t->ddev, err);
	if (rc)
		return rc;
	t->loc.j_data = t->ddev;
	t->loc.j_data_blocks = t->ej.fs_blocks;
	return 0;
}

static int open_ext4(struct target *t, bool writable, struct jbd_err *err)
{
	t->ext4_needs_recovery = t->ej.needs_recovery;
	if (t->data_path)
		return fail(err, -ENOENT, "--data not allowed: '%s': %s", t->path,
			    "--data is only for standalone journals");
	switch (t->ej.kind) {
	case EXT4_INTERNAL:
		if (t->journal_path)
			return fail(err, -ENOENT, "--journal not allowed: '%s': %s", t->path,
				    "the file system has an internal journal");
		return open_ext4_internal(t, writable, err);
	case EXT4_EXTERNAL:
		return open_ext4_external(t, writable, err);
	case EXT4_NO_JOURNAL:
		return fail(err, -EINVAL, "no journal: '%s': %s", t->path,
			    "the file system has no has_journal feature");
	default:
		return fail(err, -EINVAL, "cannot use: '%s': %s", t->path, "unexpected ext4 kind");
	}
}

int target_open(struct target *t, const char *path, const char *journal,
		const char *data, bool writable, bool need_data, struct jbd_err *err)
{
	bool is_jbd;
	uint32_t bs;
	int rc;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->journal_path = journal ? journal : path;
	t->data_path = data;
	rc = ext4_probe(path, &t->ej, err);
	if (rc)
		return rc;
	if (t->ej.kind != EXT4_NOT_EXT4 && t->ej.kind != EXT4_JOURNAL_DEV) {
		t->journal_path = journal;
		return open_ext4(t, writable, err);
	}
	if (journal)
		return fail(err, -ENOENT, "--journal not allowed: '%s': %s", path,
			    "--journal is only for ext4 images with an external journal");
	if (t->ej.kind == EXT4_JOURNAL_DEV) {
		t->kind = TARGET_JOURNAL_DEV;
		rc = open_identity(t, t->ej.blocksize, t->ej.sb_block, writable, err);
	} else {
		rc = standalone_probe(t, &is_jbd, &bs, err);
		if (!rc && !is_jbd)
			return fail(err, -EINVAL, "cannot use: '%s': %s", path,
				    "neither an ext4 image nor a jbd2 journal");
		t->kind = TARGET_STANDALONE;
		if (!rc)
			rc = open_identity(t, bs, 0, writable, err);
	}
	if (!rc)
		rc = open_data(t, writable, need_data, err);
	return rc;
}

void target_close(struct target *t)
{
	if (t->ddev)
		dev_close(t->ddev);
	if (t->jdev)
		dev_close(t->jdev);
	ext4_journal_release(&t->ej);
	ext4_journal_release(&t->jd);
	memset(t, 0, sizeof(*t));
}

void target_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
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

/*
 * Tests of src/ext4 against the e2fsprogs tools as oracles: images are made
 * with mke2fs in a temp dir, the journal map must match what
 * `debugfs -R "stat <8>"` lists, and the needs_recovery flag written by
 * ext4_set_needs_recovery must be what dumpe2fs reads, with a valid
 * superblock checksum and nothing but the primary superblock changed.
 * Every test SKIPs when mke2fs/debugfs/dumpe2fs are missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>

#include "t.h"
#include "ujbd/ext4.h"

static char tdir[64];
static bool have_tools;

/* ---- helpers ------------------------------------------------------------ */

/* Run a command and return its stdout (malloc'd, NUL-terminated) or NULL. */
__attribute__((format(printf, 1, 2)))
static char *sh_out(const char *fmt, ...)
{
	char cmd[1024];
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p || !buf) {
		free(buf);
		if (p)
			pclose(p);
		return NULL;
	}
	for (;;) {
		size_t r = fread(buf + n, 1, cap - n - 1, p);
		n += r;
		if (r == 0)
			break;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[n] = 0;
	pclose(p);
	return buf;
}

static const char *path(const char *name)
{
	static char bufs[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof(bufs[i]), "%s/%s", tdir, name);
	return bufs[i];
}

/* mke2fs quietly with fixed UUID and no lazy init (journal zeroed). */
static int mkfs(const char *name, const char *opts, const char *size)
{
	return t_sh("mke2fs -q -F %s -U 11111111-2222-3333-4444-555555555555 "
		  "-E lazy_itable_init=0,lazy_journal_init=0 %s %s >/dev/null 2>&1",
		  opts, path(name), size);
}

/* Parse the data ranges of `debugfs -R "stat <8>"`: "(a-b):c-d" and
 * "(a):c"; index blocks "(IND)", "(ETB0)"... are skipped. Coalesced into
 * extents the same way ext4.c does, so the two lists are comparable. */
static size_t parse_debugfs_map(const char *out, struct jbd_extent *v, size_t max)
{
	const char *p = strstr(out, "EXTENTS:");
	size_t n = 0;

	if (!p)
		p = strstr(out, "BLOCKS:");
	if (!p)
		return 0;
	while ((p = strchr(p, '(')) != NULL) {
		unsigned long long a, b, c, d;
		int used = 0;

		p++;
		if (sscanf(p, "%llu-%llu):%llu-%llu%n", &a, &b, &c, &d, &used) == 4 && used) {
		} else if (sscanf(p, "%llu):%llu%n", &a, &c, &used) == 2 && used) {
			b = a;
		} else {
			continue;
		}
		if (n && v[n - 1].lblk + v[n - 1].len == a && v[n - 1].pblk + v[n - 1].len == c) {
			v[n - 1].len += b - a + 1;
		} else if (n < max) {
			v[n++] = (struct jbd_extent){ .lblk = a, .pblk = c, .len = b - a + 1 };
		}
	}
	return n;
}

static int map_matches_debugfs(const char *img, const struct ext4_journal *j)
{
	struct jbd_extent want[256];
	char *out = sh_out("debugfs -R 'stat <8>' %s 2>/dev/null", path(img));
	size_t n;

	if (!out)
		return 0;
	n = parse_debugfs_map(out, want, 256);
	free(out);
	if (n == 0 || n != j->nmap) {
		fprintf(stderr, "    debugfs lists %zu extents, probe %zu\n", n, j->nmap);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (want[i].lblk != j->map[i].lblk || want[i].pblk != j->map[i].pblk ||
		    want[i].len != j->map[i].len) {
			fprintf(stderr, "    extent %zu: debugfs (%llu,%llu,%llu) probe (%llu,%llu,%llu)\n",
				i, (unsigned long long)want[i].lblk, (unsigned long long)want[i].pblk,
				(unsigned long long)want[i].len, (unsigned long long)j->map[i].lblk,
				(unsigned long long)j->map[i].pblk, (unsigned long long)j->map[i].len);
			return 0;
		}
	return 1;
}

static bool dumpe2fs_has(const char *img, const char *word)
{
	char *out = sh_out("dumpe2fs -h %s 2>/dev/null | grep '^Filesystem features:'", path(img));
	bool has = out && strstr(out, word) != NULL;

	free(out);
	return has;
}

/* Hash a byte range of a file, or everything but [skip_off, skip_off+skip_len). */
static char *sha_except(const char *img, long skip_off, long skip_len)
{
	return sh_out("(head -c %ld %s; tail -c +%ld %s) | sha256sum", skip_off, path(img),
		      skip_off + skip_len + 1, path(img));
}

static bool is_mke2fs_1470(void)
{
	char *out = sh_out("mke2fs -V 2>&1");
	bool yes = out && strstr(out, "1.47.0");

	free(out);
	return yes;
}

#define NEED_TOOLS() do { if (!have_tools) T_SKIP("mke2fs/debugfs/dumpe2fs not installed"); } while (0)

/* ---- tests --------------------------------------------------------------- */

static void test_map_4k_matches_debugfs(void)
{
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	T_EQ(mkfs("k4.img", "-t ext4 -b 4096 -O metadata_csum", "64M"), 0);
	T_EQ(ext4_probe(path("k4.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_INTERNAL);
	T_EQ(j.blocksize, 4096);
	T_EQ(j.fs_blocks, 16384);
	T_EQ(j.journal_blocks, 1024);
	T_EQ(j.journal_inum, 8);
	T_EQ(j.sb_block, 0);
	T_CHECK(!j.needs_recovery);
	T_CHECK(!j.used_backup);
	T_EQ(j.fs_uuid[0], 0x11);
	T_EQ(j.fs_uuid[15], 0x55);
	T_CHECK(map_matches_debugfs("k4.img", &j));
	if (is_mke2fs_1470()) { /* mke2fs 1.47.0's layout of this image */
		T_EQ(j.nmap, 3);
		T_EQ(j.map[0].pblk, 15);
		T_EQ(j.map[0].len, 10);
		T_EQ(j.map[1].lblk, 10);
		T_EQ(j.map[1].pblk, 26);
		T_EQ(j.map[2].lblk, 25);
		T_EQ(j.map[2].pblk, 1066);
		T_EQ(j.map[2].len, 999);
	}
	ext4_journal_release(&j);
	T_CHECK(j.map == NULL);
}

static void test_map_1k_matches_debugfs(void)
{
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	T_EQ(mkfs("k1.img", "-t ext4 -b 1024 -O metadata_csum", "64M"), 0);
	T_EQ(ext4_probe(path("k1.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_INTERNAL);
	T_EQ(j.blocksize, 1024);
	T_EQ(j.journal_blocks, 4096);
	T_CHECK(map_matches_debugfs("k1.img", &j));
	if (is_mke2fs_1470()) {
		T_EQ(j.nmap, 1);
		T_EQ(j.map[0].pblk, 16385);
		T_EQ(j.map[0].len, 4096);
	}
	ext4_journal_release(&j);
}

/* ext3: the journal inode is mapped by indirect blocks, which sit between
 * its data blocks, so the map has several extents. */
static void test_map_ext3_block_mapped(void)
{
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	T_EQ(mkfs("e3.img", "-t ext3 -b 1024", "32M"), 0);
	T_EQ(ext4_probe(path("e3.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_INTERNAL);
	T_CHECK(j.nmap >= 2);
	T_CHECK(map_matches_debugfs("e3.img", &j));
	ext4_journal_release(&j);
}

/* A cleared inode 8: the map comes from s_jnl_blocks and is the same;
 * without the backup, a clear error naming the journal inode. */
static void test_damaged_inode_uses_backup(void)
{
	struct ext4_journal good, j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	T_EQ(mkfs("dmg.img", "-t ext4 -b 4096", "64M"), 0);
	T_EQ(ext4_probe(path("dmg.img"), &good, &err), 0);
	T_EQ(t_sh("debugfs -w -R 'clri <8>' %s >/dev/null 2>&1", path("dmg.img")), 0);
	T_EQ(ext4_probe(path("dmg.img"), &j, &err), 0);
	T_CHECK(j.used_backup);
	T_EQ(j.journal_blocks, good.journal_blocks);
	T_EQ(j.nmap, good.nmap);
	for (size_t i = 0; i < j.nmap; i++) {
		T_EQ(j.map[i].lblk, good.map[i].lblk);
		T_EQ(j.map[i].pblk, good.map[i].pblk);
		T_EQ(j.map[i].len, good.map[i].len);
	}
	ext4_journal_release(&j);
	ext4_journal_release(&good);
	T_EQ(t_sh("debugfs -w -R 'ssv jnl_backup_type 0' %s >/dev/null 2>&1", path("dmg.img")), 0);
	T_EQ(ext4_probe(path("dmg.img"), &j, &err), -EUCLEAN);
	T_EQ(err.code, -EUCLEAN);
	T_CHECK(strstr(err.msg, "journal inode 8") != NULL);
	T_CHECK(strstr(err.msg, "dmg.img") != NULL);
	T_CHECK(j.map == NULL);
}

static void test_journal_dev(void)
{
	static const struct { int bs; const char *size; uint64_t sb, blocks; } c[] = {
		{ 4096, "16M", 1, 4096 },
		{ 1024, "16M", 2, 16384 },
	};
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	for (size_t i = 0; i < 2; i++) {
		char opts[64];

		snprintf(opts, sizeof(opts), "-O journal_dev -b %d", c[i].bs);
		T_EQ(mkfs("jdev.img", opts, c[i].size), 0);
		T_EQ(ext4_probe(path("jdev.img"), &j, &err), 0);
		T_EQ(j.kind, EXT4_JOURNAL_DEV);
		T_EQ(j.blocksize, c[i].bs);
		T_EQ(j.sb_block, c[i].sb);
		T_EQ(j.journal_blocks, c[i].blocks);
		T_EQ(j.fs_blocks, c[i].blocks);
		T_EQ(j.nmap, 1);
		T_EQ(j.map[0].lblk, 0);
		T_EQ(j.map[0].pblk, 0);
		T_EQ(j.map[0].len, c[i].blocks);
		T_CHECK(memcmp(j.journal_uuid, j.fs_uuid, 16) == 0);
		ext4_journal_release(&j);
		T_EQ(ext4_set_needs_recovery(path("jdev.img"), true, &err), -EINVAL);
		T_CHECK(strstr(err.msg, "journal device") != NULL);
	}
}

/* A fs using an external journal (has_journal, journal_inum 0, uuid set),
 * made with debugfs so no loop device is needed. */
static void test_external_and_no_journal(void)
{
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	T_EQ(mkfs("nj.img", "-t ext4 -b 4096 -O ^has_journal", "32M"), 0);
	T_EQ(ext4_probe(path("nj.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_NO_JOURNAL);
	T_CHECK(j.map == NULL);
	T_EQ(t_sh("debugfs -w -f - %s >/dev/null 2>&1 <<'EOF'\nfeature has_journal\n"
		"ssv journal_uuid 01020304-0506-0708-090a-0b0c0d0e0f10\nssv journal_inum 0\nEOF",
		path("nj.img")), 0);
	T_EQ(ext4_probe(path("nj.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_EXTERNAL);
	T_EQ(j.journal_uuid[0], 1);
	T_EQ(j.journal_uuid[15], 0x10);
	T_CHECK(j.map == NULL);
}

static void test_not_ext(void)
{
	struct ext4_journal j;
	struct jbd_err err = { 0 };
	uint8_t blk[4096] = { 0 };
	int fd;

	T_EQ(ext4_probe(path("missing.img"), &j, &err), -ENOENT);
	T_CHECK(strstr(err.msg, "missing.img") != NULL);
	fd = open(path("zero.img"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	T_EQ(write(fd, blk, sizeof(blk)), sizeof(blk));
	close(fd);
	T_EQ(ext4_probe(path("zero.img"), &j, &err), 0);
	T_EQ(j.kind, EXT4_NOT_EXT4);
	/* A standalone journal whose log holds an ext sb copy at byte 1024. */
	blk[0] = 0xC0, blk[1] = 0x3B, blk[2] = 0x39, blk[3] = 0x98, blk[7] = 4;
	blk[1080] = 0x53, blk[1081] = 0xEF;
	fd = open(path("sa.jnl"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	T_EQ(write(fd, blk, sizeof(blk)), sizeof(blk));
	close(fd);
	T_EQ(ext4_probe(path("sa.jnl"), &j, &err), 0);
	T_EQ(j.kind, EXT4_NOT_EXT4);
	T_EQ(ext4_set_needs_recovery(path("sa.jnl"), true, &err), -EINVAL);
	/* Magic present but the rest garbage: an error, not a crash. */
	memset(blk, 0xFF, sizeof(blk));
	blk[1080] = 0x53, blk[1081] = 0xEF;
	fd = open(path("bad.img"), O_CREAT | O_TRUNC | O_WRONLY, 0600);
	T_CHECK(fd >= 0);
	T_EQ(write(fd, blk, sizeof(blk)), sizeof(blk));
	close(fd);
	T_CHECK(ext4_probe(path("bad.img"), &j, &err) < 0);
	T_CHECK(strstr(err.msg, "bad.img") != NULL);
}

/* An image shorter than its superblock says is -EUCLEAN with where it
 * ends, found before libext2fs reads past the end (it said "short read",
 * -EIO, when the cut fell before the journal or the group descriptors);
 * cut to a partial block, to 16 blocks, to all but one block; 1 KiB and
 * 4 KiB blocks, 64bit or not, and a journal device; full size is fine. */
static void test_truncated(void)
{
	static const struct {
		const char *opts;
		long cut;
		const char *missing;
	} c[] = {
		{ "-t ext4 -b 4096", 4100, "8192 blocks of 4096 bytes (blocks 1-8191 missing)" },
		{ "-t ext4 -b 4096", 65536, "(blocks 16-8191 missing)" },
		{ "-t ext4 -b 4096 -O ^64bit", 31 << 20, "(blocks 7936-8191 missing)" },
		{ "-t ext4 -b 1024", 4096, "32768 blocks of 1024 bytes (blocks 4-32767 missing)" },
		{ "-O journal_dev -b 4096", 8192, "(blocks 2-8191 missing)" },
	};
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		T_EQ(mkfs("cut.img", c[i].opts, "32M"), 0);
		T_EQ(ext4_probe(path("cut.img"), &j, &err), 0);
		ext4_journal_release(&j);
		T_EQ(truncate(path("cut.img"), c[i].cut), 0);
		T_EQ(ext4_probe(path("cut.img"), &j, &err), -EUCLEAN);
		T_EQ(err.code, -EUCLEAN);
		T_CHECK(strncmp(err.msg, "truncated image: '", 18) == 0);
		T_CHECK(strstr(err.msg, c[i].missing) != NULL);
		T_EQ(ext4_set_needs_recovery(path("cut.img"), true, &err), -EUCLEAN);
	}
}

/* Set then clear, on 1 KiB and 4 KiB images with and without
 * metadata_csum: dumpe2fs sees the flag, the sb checksum verifies, only the
 * primary superblock (bytes 1024-2047) changed, e2fsck -fn is clean after. */
static void test_needs_recovery_round_trip(void)
{
	static const char *const opts[] = {
		"-t ext4 -b 4096 -O metadata_csum", "-t ext4 -b 1024 -O metadata_csum",
		"-t ext4 -b 4096 -O ^metadata_csum,^64bit",
	};
	struct ext4_journal j;
	struct jbd_err err = { 0 };

	NEED_TOOLS();
	for (size_t i = 0; i < 3; i++) {
		ext2_filsys fs = NULL;
		char *before, *after;

		T_EQ(mkfs("nr.img", opts[i], "32M"), 0);
		before = sha_except("nr.img", 1024, 1024);
		T_EQ(ext4_set_needs_recovery(path("nr.img"), true, &err), 0);
		after = sha_except("nr.img", 1024, 1024);
		T_CHECK(before && after && strcmp(before, after) == 0);
		free(before);
		free(after);
		T_CHECK(dumpe2fs_has("nr.img", "needs_recovery"));
		T_EQ(ext4_probe(path("nr.img"), &j, &err), 0);
		T_CHECK(j.needs_recovery);
		ext4_journal_release(&j);
		/* opening without IGNORE_CSUM_ERRORS verifies the sb checksum */
		T_EQ(ext2fs_open2(path("nr.img"), NULL, EXT2_FLAG_64BITS, 0, 0,
				  unix_io_manager, &fs), 0);
		T_CHECK(ext2fs_has_feature_journal_needs_recovery(fs->super));
		T_CHECK(ext2fs_superblock_csum_verify(fs, fs->super));
		ext2fs_close_free(&fs);
		T_EQ(ext4_set_needs_recovery(path("nr.img"), true, &err), 0); /* idempotent */
		T_EQ(ext4_set_needs_recovery(path("nr.img"), false, &err), 0);
		T_CHECK(!dumpe2fs_has("nr.img", "needs_recovery"));
		T_CHECK(dumpe2fs_has("nr.img", "has_journal"));
		T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", path("nr.img")), 0);
	}
}

/* EXT4_SET_ERROR_FS with EXT4_CLEAR_RECOVER: one write of the primary
 * superblock, which dumpe2fs reads as "clean with errors" with the flag
 * clear and a checksum that verifies; asking to set and clear is -EINVAL. */
static void test_error_state(void)
{
	struct jbd_err err = { 0 };
	ext2_filsys fs = NULL;
	char *before, *after, *state;

	NEED_TOOLS();
	T_EQ(mkfs("es.img", "-t ext4 -b 4096 -O metadata_csum", "32M"), 0);
	T_EQ(ext4_set_needs_recovery(path("es.img"), true, &err), 0);
	before = sha_except("es.img", 1024, 1024);
	T_EQ(ext4_update_super(path("es.img"), EXT4_SET_RECOVER | EXT4_CLEAR_RECOVER, &err),
	     -EINVAL);
	T_EQ(ext4_update_super(path("es.img"), 0x8, &err), -EINVAL);
	T_EQ(ext4_update_super(path("es.img"), EXT4_CLEAR_RECOVER | EXT4_SET_ERROR_FS, &err), 0);
	after = sha_except("es.img", 1024, 1024);
	T_CHECK(before && after && strcmp(before, after) == 0);
	free(before);
	free(after);
	state = sh_out("dumpe2fs -h %s 2>/dev/null | grep '^Filesystem state:'", path("es.img"));
	T_CHECK(state && strstr(state, "clean with errors"));
	free(state);
	T_CHECK(!dumpe2fs_has("es.img", "needs_recovery"));
	T_EQ(ext2fs_open2(path("es.img"), NULL, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	T_CHECK(fs->super->s_state & EXT2_ERROR_FS);
	T_CHECK(ext2fs_superblock_csum_verify(fs, fs->super));
	ext2fs_close_free(&fs);
}

int main(int argc, char **argv)
{
	(void)argc;
	have_tools = t_sh("command -v mke2fs >/dev/null && command -v debugfs >/dev/null && "
			"command -v dumpe2fs >/dev/null && command -v e2fsck >/dev/null") == 0;
	snprintf(tdir, sizeof(tdir), "/tmp/ujbd-ext4-XXXXXX");
	if (!mkdtemp(tdir)) {
		perror("mkdtemp");
		return 1;
	}
	T_RUN(test_map_4k_matches_debugfs);
	T_RUN(test_map_1k_matches_debugfs);
	T_RUN(test_map_ext3_block_mapped);
	T_RUN(test_damaged_inode_uses_backup);
	T_RUN(test_journal_dev);
	T_RUN(test_external_and_no_journal);
	T_RUN(test_not_ext);
	T_RUN(test_truncated);
	T_RUN(test_needs_recovery_round_trip);
	T_RUN(test_error_state);
	t_sh("rm -rf %s", tdir);
	return t_done(argv[0]);
}

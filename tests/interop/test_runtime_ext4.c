/*
 * Interop of the journal runtime with e2fsprogs: ujbd_open_path on an ext4
 * image made by mke2fs commits a sequence of transactions into the
 * internal journal, on the data blocks of a file written with debugfs, and
 * is stopped hard (ujbd_close_hard) after the commits, before any
 * checkpoint. Then `debugfs logdump -a` must list those transactions and
 * their blocks, `e2fsck -fy` must replay them so that the blocks hold what
 * ujbd committed, and `e2fsck -fn` must find the file system clean.
 *
 * Two ways to run:
 *   - as a test program (no environment): for 1 KiB and 4 KiB blocks with
 *     metadata_csum on and off, make the image itself with mke2fs/debugfs,
 *     commit, and check with the tools (SKIP if they are missing);
 *   - as the driver of tests/interop/runtime.sh: UJBD_RT_IMAGE=path and
 *     UJBD_RT_BLOCKS=b0,b1,...,b5 (the file's blocks): commit, stop hard,
 *     and print "tid T block B fill C" lines for the script to check.
 *
 * The transactions, on the file's blocks b0..b5 (fill bytes):
 *   T1 b0=A b1=B                     (metadata)
 *   T2 b2=c03b3998+C (escaped) b3=D
 *   T3 b4=E, revoke b1, b5=G as ordered data (written home before commit)
 *   T4 b1=F                          (journaled again after its revoke)
 * Expected after replay: b0=A b1=F b2=magic+C b3=D b4=E b5=G.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/ujbd.h"

#define NB 6

struct rt_expect {
	uint64_t blk[NB];
	char fill[NB];
	bool magic[NB];
	ujbd_tid_t tid[4];
};

static void fill_block(uint8_t *p, uint32_t bs, char c, bool magic)
{
	memset(p, c, bs);
	if (magic) {
		p[0] = 0xC0; p[1] = 0x3B; p[2] = 0x39; p[3] = 0x98;
	}
}

/* Journal (or overwrite) block blk with fill c in handle h. */
static int meta(struct ujbd_handle *h, uint32_t bs, uint64_t blk, char c, bool magic)
{
	struct ujbd_buf *b;
	int err = ujbd_get_write_access(h, blk, &b);

	if (err < 0)
		return err;
	fill_block(ujbd_buf_data(b), bs, c, magic);
	err = ujbd_dirty_metadata(h, b);
	ujbd_buf_put(b);
	return err;
}

/* The four transactions; each committed and waited for. */
static int commit_all(struct ujbd *j, struct rt_expect *e, char *msg, size_t len)
{
	uint32_t bs = ujbd_block_size(j);
	uint8_t *data = malloc(bs);
	struct ujbd_handle *h;
	int err = data ? 0 : -ENOMEM;

	for (int t = 0; t < 4 && err == 0; t++) {
		err = ujbd_start(j, 4, &h);
		if (err < 0)
			break;
		e->tid[t] = ujbd_handle_tid(h);
		switch (t) {
		case 0:
			err = meta(h, bs, e->blk[0], 'A', false);
			if (err == 0)
				err = meta(h, bs, e->blk[1], 'B', false);
			break;
		case 1:
			err = meta(h, bs, e->blk[2], 'C', true);
			if (err == 0)
				err = meta(h, bs, e->blk[3], 'D', false);
			break;
		case 2:
			err = meta(h, bs, e->blk[4], 'E', false);
			if (err == 0)
				err = ujbd_revoke(h, e->blk[1]);
			fill_block(data, bs, 'G', false);
			if (err == 0)
				err = ujbd_write_data(h, e->blk[5], data);
			break;
		case 3:
			err = meta(h, bs, e->blk[1], 'F', false);
			break;
		}
		int err2 = ujbd_stop(h);
		if (err == 0)
			err = err2;
		if (err == 0)
			err = ujbd_commit_tid(j, e->tid[t]);
		if (err == 0)
			err = ujbd_wait_tid(j, e->tid[t]);
		if (err < 0)
			snprintf(msg, len, "transaction %d: %s", t + 1, ujbd_strerror(err));
	}
	const char want[NB] = { 'A', 'F', 'C', 'D', 'E', 'G' };
	for (int i = 0; i < NB; i++) {
		e->fill[i] = want[i];
		e->magic[i] = i == 2;
	}
	free(data);
	return err;
}

/* Open the image, commit, stop hard. */
static int drive(const char *img, struct rt_expect *e, char *msg, size_t len)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err jerr = { 0 };
	int err;

	ujbd_opts_default(&o);
	o.data_mode = UJBD_DATA_ORDERED;
	err = ujbd_open_path(img, NULL, NULL, &o, &j, &jerr);
	if (err < 0) {
		snprintf(msg, len, "ujbd_open_path %s: %d %s", img, err, jerr.msg);
		return err;
	}
	err = commit_all(j, e, msg, len);
	ujbd_close_hard(j);   /* committed, never checkpointed */
	return err;
}

/* ---- driver mode, for runtime.sh --------------------------------------- */

static int driver(const char *img, const char *blocks)
{
	struct rt_expect e = { 0 };
	char msg[400] = "";
	const char *p = blocks;
	int err;

	for (int i = 0; i < NB; i++) {
		char *end;
		e.blk[i] = strtoull(p, &end, 10);
		if (end == p || (i < NB - 1 && *end != ',')) {
			fprintf(stderr, "UJBD_RT_BLOCKS: want %d block numbers\n", NB);
			return 2;
		}
		p = end + 1;
	}
	err = drive(img, &e, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
	for (int t = 0; t < 4; t++)
		printf("tid %" PRIu32 "\n", e.tid[t]);
	for (int i = 0; i < NB; i++)
		printf("block %" PRIu64 " fill %c%s\n", e.blk[i], e.fill[i],
		       e.magic[i] ? " magic" : "");
	return 0;
}

/* ---- test mode ----------------------------------------------------------- */

static char g_dir[64];

static bool have(const char *tool)
{
	return t_sh("command -v %s >/dev/null 2>&1", tool) == 0;
}

/* The file's data blocks, from debugfs "blocks f". */
static int file_blocks(const char *img, uint64_t *blk)
{
	char cmd[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "debugfs -R 'blocks f' %s 2>/dev/null", img);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (n < NB && fscanf(f, "%" SCNu64, &blk[n]) == 1)
		n++;
	pclose(f);
	return n;
}

/* Does `debugfs logdump -a` list block blk under transaction tid, on a line
 * of the form pattern ("FS block %llu logged at" or "Revoke FS block %llu")? */
static int logdump_lists(const char *img, const char *pattern, ujbd_tid_t tid, uint64_t blk)
{
	char cmd[512], line[512];
	FILE *f;
	long long cur = -1;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "debugfs -R 'logdump -a' %s 2>/dev/null", img);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, b;

		if (sscanf(line, "Found expected sequence %llu", &s) == 1)
			cur = (long long)s;
		else if (sscanf(line, pattern, &b) == 1 && cur == (long long)tid && b == blk)
			found = 1;
	}
	pclose(f);
	return found;
}

static int logdump_has(const char *img, ujbd_tid_t tid, uint64_t blk)
{
	return logdump_lists(img, " FS block %llu logged at", tid, blk);
}

static int logdump_revoke(const char *img, ujbd_tid_t tid, uint64_t blk)
{
	return logdump_lists(img, " Revoke FS block %llu", tid, blk);
}

static int block_is(const char *img, uint32_t bs, uint64_t blk, char c, bool magic)
{
	uint8_t *got = malloc(bs), *want = malloc(bs);
	FILE *f = fopen(img, "rb");
	int ok = 0;

	if (got && want && f && fseeko(f, (off_t)(blk * bs), SEEK_SET) == 0 &&
	    fread(got, 1, bs, f) == bs) {
		fill_block(want, bs, c, magic);
		ok = memcmp(got, want, bs) == 0;
	}
	if (f)
		fclose(f);
	free(got);
	free(want);
	return ok;
}

static void run_case(uint32_t bs, const char *features)
{
	char img[128];
	struct rt_expect e = { 0 };
	char msg[400] = "";
	int n;

	snprintf(img, sizeof(img), "%s/rt-%u.img", g_dir, bs);
	fprintf(stderr, "    case: -b %u -O %s\n", bs, features);
	T_EQ(t_sh("mke2fs -q -F -t ext4 -b %u -O %s -E lazy_itable_init=0,lazy_journal_init=0 "
		"%s 16M >/dev/null 2>&1", bs, features, img), 0);
	T_EQ(t_sh("head -c %u /dev/zero | tr '\\0' o > %s/orig && "
		"debugfs -w -R 'write %s/orig f' %s >/dev/null 2>&1", bs * NB, g_dir, g_dir, img), 0);
	n = file_blocks(img, e.blk);
	T_EQ(n, NB);
	if (drive(img, &e, msg, sizeof(msg)) < 0)
		T_FAILF("%s", msg);
	if (msg[0])
		return;
	/* stopped hard: needs_recovery set, the transactions in the log */
	T_EQ(t_sh("dumpe2fs -h %s 2>/dev/null | grep '^Filesystem features:' | "
		"grep -qw needs_recovery", img), 0);
	T_EQ(logdump_has(img, e.tid[0], e.blk[0]), 1);
	T_EQ(logdump_has(img, e.tid[0], e.blk[1]), 1);
	T_EQ(logdump_has(img, e.tid[1], e.blk[2]), 1);
	T_EQ(logdump_has(img, e.tid[1], e.blk[3]), 1);
	T_EQ(logdump_has(img, e.tid[2], e.blk[4]), 1);
	T_EQ(logdump_revoke(img, e.tid[2], e.blk[1]), 1);
	T_EQ(logdump_has(img, e.tid[3], e.blk[1]), 1);
	T_EQ(logdump_has(img, e.tid[2], e.blk[5]), 0);  /* ordered data: not logged */
	/* the ordered data block is home already; the metadata is not */
	T_CHECK(block_is(img, bs, e.blk[5], 'G', false));
	T_CHECK(block_is(img, bs, e.blk[0], 'o', false));
	/* e2fsck replays: 0 or 1 (file system modified) */
	n = t_sh("e2fsck -fy %s > %s/fsck.out 2>&1", img, g_dir);
	T_CHECK(n == 0 || n == 1);
	T_EQ(t_sh("grep -qi 'recovering journal' %s/fsck.out", g_dir), 0);
	for (int i = 0; i < NB; i++)
		if (!block_is(img, bs, e.blk[i], e.fill[i], e.magic[i]))
			T_FAILF("block %" PRIu64 " (b%d) does not hold %c after replay",
				e.blk[i], i, e.fill[i]);
	if (t_cur_failed)
		return;
	T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", img), 0);
	unlink(img);
}

static bool tools_ok(void)
{
	return have("mke2fs") && have("debugfs") && have("e2fsck") && have("dumpe2fs");
}

static void test_k1024_csum(void)
{
	if (!tools_ok())
		T_SKIP("mke2fs/debugfs/e2fsck/dumpe2fs not installed");
	run_case(1024, "metadata_csum");
}
static void test_k1024_nocsum(void)
{
	if (!tools_ok())
		T_SKIP("mke2fs/debugfs/e2fsck/dumpe2fs not installed");
	run_case(1024, "^metadata_csum");
}
static void test_k4096_csum(void)
{
	if (!tools_ok())
		T_SKIP("mke2fs/debugfs/e2fsck/dumpe2fs not installed");
	run_case(4096, "metadata_csum");
}
static void test_k4096_nocsum(void)
{
	if (!tools_ok())
		T_SKIP("mke2fs/debugfs/e2fsck/dumpe2fs not installed");
	run_case(4096, "^metadata_csum");
}

int main(int argc, char **argv)
{
	const char *img = getenv("UJBD_RT_IMAGE");

	(void)argc;
	if (img)
		return driver(img, getenv("UJBD_RT_BLOCKS") ? getenv("UJBD_RT_BLOCKS") : "");
	snprintf(g_dir, sizeof(g_dir), "/tmp/ujbd-rt.XXXXXX");
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	T_RUN(test_k1024_csum);
	T_RUN(test_k1024_nocsum);
	T_RUN(test_k4096_csum);
	T_RUN(test_k4096_nocsum);
	t_sh("rm -rf %s", g_dir);
	return t_done(argv[0]);
}

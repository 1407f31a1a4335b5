/*
 * ujbd_open_path: a standalone journal file (formatted at open) with a data
 * file, and the internal journal of an ext4 image made by mke2fs, whose
 * needs_recovery flag is set while open, left set by a hard close (a
 * crash) and cleared by a clean close; async commit AUTO is on for the
 * first, off for the second. Real world, files in a temporary directory.
 */
#include "jbd/rt_rig.h"
#include <fcntl.h>
#include <unistd.h>

#include "ujbd/ext4.h"

static char dir[64];

static int write_one(struct ujbd *j, uint64_t block, uint32_t gen)
{
	return rig_write(j, block, 1, gen, true, NULL);
}

static bool file_has(const char *path, uint32_t bs, uint64_t block, uint32_t gen)
{
	uint8_t *a = malloc(bs), *b = malloc(bs);
	int fd = open(path, O_RDONLY);
	bool ok = a && b && fd >= 0 && pread(fd, a, bs, (off_t)(block * bs)) == (ssize_t)bs;

	if (ok) {
		rig_fill(b, bs, block, gen);
		ok = memcmp(a, b, bs) == 0;
	}
	if (fd >= 0)
		close(fd);
	free(a);
	free(b);
	return ok;
}

/* A standalone journal's paths: jp = dir/JNAME, dp = dir/DNAME (made, 4 MiB). */
static void standalone(char jp[96], char dp[96], const char *jname, const char *dname)
{
	snprintf(jp, 96, "%s/%s", dir, jname);
	snprintf(dp, 96, "%s/%s", dir, dname);
	T_EQ(rig_mkfile(dp, 4 << 20), 0);
}

/* Its options: formatted at open, 256 blocks of 4 KiB. */
static void standalone_opts(struct ujbd_opts *o)
{
	rig_opts(o, true);
	o->format_opts.blocksize = 4096;
	o->format_opts.blocks = 256;
}

static void t_standalone(void)
{
	char jp[96], dp[96];
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;

	standalone(jp, dp, "journal", "data");
	standalone_opts(&o);
	o.async_commit = UJBD_ASYNC_COMMIT_AUTO;
	T_EQ(ujbd_open_path(jp, NULL, NULL, &o, &j, &err), -EINVAL); /* no data device */
	T_EQ(ujbd_open_path(jp, dp, NULL, &o, &j, &err), 0);
	T_EQ(ujbd_block_size(j), 4096);
	T_EQ(ujbd_data_blocks(j), 1024);
	T_EQ(write_one(j, 7, 3), 0);
	/* async commit AUTO: on, a standalone journal is ujbd's alone */
	struct ujbd_stats st;
	T_EQ(ujbd_stats(j, &st), 0);
	T_EQ_U64(st.async_commits, 1);
	T_EQ(ujbd_close(j), 0);
	T_CHECK(file_has(dp, 4096, 7, 3));
	o.format = false;
	T_EQ(ujbd_open_path(jp, dp, NULL, &o, &j, &err), 0);
	T_EQ(write_one(j, 8, 4), 0);
	ujbd_close_hard(j);
	T_EQ(ujbd_open_path(jp, dp, NULL, &o, &j, &err), 0); /* recovers */
	T_CHECK(file_has(dp, 4096, 8, 4));
	T_EQ(ujbd_close(j), 0);
}

/* A format at open with any invalid option, or without a data device,
 * refuses with -EINVAL before anything is created: no journal file left. */
static void t_format_refused_creates_nothing(void)
{
	char jp[96], dp[96];
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;

	standalone(jp, dp, "refused.jnl", "refused.data");
	for (int c = 0; c < 11; c++) {
		standalone_opts(&o);
		const char *d = dp;
		switch (c) {
		case 0: o.data_mode = 7; break;
		case 1: o.commit_interval_ns = 0; break;
		case 2: o.format_opts.blocksize = 3000; break;
		case 3: o.format_opts.blocks = 3; break;
		case 4: o.format_opts.csum = 9; break;
		case 5: o.format_opts.csum = JBD_CSUM_KIND_NONE; o.format_opts.async_commit = true; break;
		case 6: o.min_batch_time_ns = 2; o.max_batch_time_ns = 1; break;
		case 7: o.wake = 9; break;
		case 8: d = NULL; break;
		/* options that need the journal's geometry: a largest
		 * transaction the log cannot hold twice, and a journal that
		 * fills its own file as the data device */
		case 9: o.max_transaction_blocks = 200; break;
		case 10: d = jp; break;
		}
		unlink(jp);
		T_EQ(ujbd_open_path(jp, d, NULL, &o, &j, &err), -EINVAL);
		T_CHECK(j == NULL);
		if (access(jp, F_OK) == 0)
			T_FAILF("case %d (%s): left %s behind", c, err.msg, jp);
		T_CHECK(access(jp, F_OK) != 0);
	}
	unlink(dp);
}

static void t_ext4_internal(void)
{
	char img[96], cmd[256];
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	struct ext4_journal ej;

	snprintf(img, sizeof(img), "%s/fs.img", dir);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1", img);
	if (access("/usr/sbin/mke2fs", X_OK) && access("/sbin/mke2fs", X_OK))
		T_SKIP("mke2fs not installed");
	T_EQ(system(cmd), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open_path(img, NULL, NULL, &o, &j, &err), 0);
	uint64_t blk = ujbd_data_blocks(j) - 10;
	T_EQ(write_one(j, blk, 5), 0);
	T_EQ(ext4_probe(img, &ej, NULL), 0);
	T_CHECK(ej.needs_recovery);
	ext4_journal_release(&ej);
	ujbd_close_hard(j);
	T_EQ(ext4_probe(img, &ej, NULL), 0);
	T_CHECK(ej.needs_recovery); /* a crash leaves it for e2fsck */
	ext4_journal_release(&ej);
	T_EQ(ujbd_open_path(img, NULL, NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
	T_CHECK(file_has(img, 4096, blk, 5));
	T_EQ(ext4_probe(img, &ej, NULL), 0);
	T_CHECK(!ej.needs_recovery);
	ext4_journal_release(&ej);
}

/* Async commit AUTO on an ext4 image: off (e2fsck and the kernel may replay
 * its journal, and replay the good blocks of a torn async transaction);
 * asked for, on. debugfs gives the journal the v3 checksums async commit
 * needs (mke2fs leaves it without). */
static int ext4_commits(const char *img, enum ujbd_async_commit a, struct ujbd_stats *st)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	int rc;

	rig_opts(&o, false);
	o.async_commit = a;
	rc = ujbd_open_path(img, NULL, NULL, &o, &j, &err);
	if (rc)
		return rc;
	rc = write_one(j, ujbd_data_blocks(j) - 10, 6);
	if (!rc)
		rc = ujbd_stats(j, st);
	int c = ujbd_close(j);
	return rc ? rc : c;
}

static void t_ext4_async_auto(void)
{
	char img[96], cmd[256];
	struct ujbd_stats st;

	snprintf(img, sizeof(img), "%s/fs2.img", dir);
	if ((access("/usr/sbin/mke2fs", X_OK) && access("/sbin/mke2fs", X_OK)) ||
	    (access("/usr/sbin/debugfs", X_OK) && access("/sbin/debugfs", X_OK)))
		T_SKIP("mke2fs or debugfs not installed");
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1", img);
	T_EQ(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "printf 'journal_open -c\\njournal_close\\n' | debugfs -w -f - %s >/dev/null 2>&1",
		 img);
	T_EQ(system(cmd), 0);
	T_EQ(ext4_commits(img, UJBD_ASYNC_COMMIT_AUTO, &st), 0);
	T_EQ_U64(st.ts_tid, 1);
	T_EQ_U64(st.async_commits, 0);
	T_EQ(ext4_commits(img, UJBD_ASYNC_COMMIT_ON, &st), 0);
	T_EQ_U64(st.async_commits, 1);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (rig_tmpdir(dir, sizeof(dir), "ujbd-rt"))
		return 1;
	T_RUN(t_standalone);
	T_RUN(t_format_refused_creates_nothing);
	T_RUN(t_ext4_internal);
	T_RUN(t_ext4_async_auto);
	rig_rmtree(dir);
	return t_done(argv[0]);
}

/*
 * A journal the kernel aborted (s_errno = -EIO in its superblock, as jbd2
 * leaves it after errors=remount-ro and an I/O error) and what recovery
 * does with its error, e2fsck being the oracle: `e2fsck -E journal_only`
 * on one copy, target_end_recovery (ujbd recover) on another; both must
 * end with the data replayed, needs_recovery clear, the ext4 state "clean
 * with errors" (so the next e2fsck is a full check) and s_errno 0, every
 * byte outside the two superblocks alike, and `e2fsck -fn` must not abort
 * (before, it did, exit 12). The image is made by mke2fs, a transaction
 * appended with jbd_write_txn, s_errno patched into the journal superblock.
 * Also: the error alone (an empty journal); a standalone journal keeps its
 * s_errno (nothing else records it); ujbd_open_path with clear_error
 * records it in the ext4 superblock before the runtime clears it. SKIPs
 * without mke2fs/e2fsck.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>

#include "jbd/rt_rig.h"
#include "target/target.h"


static char dir[64];
static bool have_tools;

static const char *path(const char *name)
{
	return t_path(dir, name);
}

/* The two superblocks of an image, as its tools read them. */
struct state {
	uint16_t fs_state;
	bool needs_recovery;
	int32_t jerrno;
	uint32_t jstart;
	uint64_t jsb_byte;   /* where the journal superblock is in the image */
};

static int read_state(const char *img, struct state *s)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_err err;
	ext2_filsys fs;
	int rc;

	if (ext2fs_open2(img, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0,
			 unix_io_manager, &fs))
		return -EIO;
	s->fs_state = fs->super->s_state;
	s->needs_recovery = ext2fs_has_feature_journal_needs_recovery(fs->super);
	ext2fs_close_free(&fs);
	rc = target_open(&t, img, NULL, NULL, false, false, &err);
	if (!rc)
		rc = jbd_journal_load(&t.loc, &j, &err);
	if (!rc) {
		s->jerrno = (int32_t)jbd_get_be32(j.j_sb.s_errno);
		s->jstart = jbd_get_be32(j.j_sb.s_start);
		s->jsb_byte = t.loc.j_map[0].pblk * t.loc.j_blocksize;
	}
	target_close(&t);
	return rc;
}

/* Patch s_errno into the journal superblock (checksum refreshed). */
static int set_jerrno(const char *img, int32_t e)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_err err;
	int rc = target_open(&t, img, NULL, NULL, true, false, &err);

	if (!rc)
		rc = jbd_journal_load(&t.loc, &j, &err);
	if (!rc) {
		jbd_put_be32(&j.j_sb.s_errno, (uint32_t)e);
		rc = jbd_journal_write_sb(&j, &err);
	}
	target_close(&t);
	return rc;
}

static int flag_on(void *arg, struct jbd_err *err)
{
	return ext4_set_needs_recovery(arg, true, err);
}

/* Append one committed transaction writing 'A's to the block 100 before
 * the end of the file system (free in a fresh image), as `ujbd write`
 * does: needs_recovery set first. */
static int append_txn(const char *img)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_write_result wr;
	struct jbd_err err;
	static uint8_t blk[4096];
	int rc = target_open(&t, img, NULL, NULL, true, false, &err);

	memset(blk, 'A', sizeof(blk));
	if (!rc)
		rc = jbd_journal_load(&t.loc, &j, &err);
	if (!rc) {
		struct jbd_write_block wb = { t.ej.fs_blocks - 100, blk };
		struct jbd_txn_desc d = { .blocks = &wb, .nblocks = 1, .commit_sec = 1,
					  .before_write = flag_on, .before_write_arg = (void *)img };
		rc = jbd_write_txn(&j, &d, &wr, &err);
	}
	if (rc)
		fprintf(stderr, "    append_txn: %s\n", err.msg);
	target_close(&t);
	return rc;
}

/* What `ujbd recover` does, through the library. */
static int ujbd_recover(const char *img, struct target_end *e)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_recover_result r;
	struct jbd_err err;
	int rc = target_open(&t, img, NULL, NULL, true, true, &err);

	if (!rc)
		rc = jbd_journal_load(&t.loc, &j, &err);
	if (!rc)
		rc = jbd_recover(&j, NULL, &r, &err);
	if (!rc)
		rc = target_end_recovery(&t, &j, e, &err);
	if (rc)
		fprintf(stderr, "    recover: %s\n", err.msg);
	target_close(&t);
	return rc;
}

/* Every block but the primary superblock's and the journal superblock's
 * is the same in both images. */
static bool same_but_superblocks(const char *a, const char *b, uint32_t bs, uint64_t jsb_byte)
{
	uint8_t *x = malloc(bs), *y = malloc(bs);
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	bool same = x && y && fa >= 0 && fb >= 0;

	for (uint64_t off = 0; same; off += bs) {
		ssize_t na = pread(fa, x, bs, (off_t)off), nb = pread(fb, y, bs, (off_t)off);

		if (na != nb)
			same = false;
		if (na <= 0 || !same)
			break;
		if (off / bs == 1024 / bs || off == jsb_byte)
			continue;
		if (memcmp(x, y, (size_t)na)) {
			fprintf(stderr, "    %s and %s differ in block %llu\n", a, b,
				(unsigned long long)(off / bs));
			same = false;
		}
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	free(x);
	free(y);
	return same;
}

static void expect_moved(const char *img)
{
	struct state s;

	T_EQ(read_state(img, &s), 0);
	T_CHECK(s.fs_state & EXT2_ERROR_FS);
	T_CHECK(!s.needs_recovery);
	T_EQ(s.jerrno, 0);
	T_EQ(s.jstart, 0);
}

/* ujbd's recovery and e2fsck's, from the same image, end alike. */
static void against_e2fsck(const char *mkfs_opts, uint32_t bs, bool with_txn)
{
	struct target_end e;
	struct state s;

	T_EQ(t_sh("mke2fs -q -F %s -b %u %s 32M >/dev/null 2>&1", mkfs_opts, bs, path("a.img")), 0);
	if (with_txn)
		T_EQ(append_txn(path("a.img")), 0);
	T_EQ(set_jerrno(path("a.img"), -EIO), 0);
	T_EQ(read_state(path("a.img"), &s), 0);
	T_EQ(s.jerrno, -EIO);
	T_EQ(s.needs_recovery, with_txn);
	T_CHECK(!(s.fs_state & EXT2_ERROR_FS));
	T_EQ(t_sh("cp %s %s && cp %s %s", path("a.img"), path("e.img"), path("a.img"),
		path("u.img")), 0);
	T_EQ(t_sh("e2fsck -E journal_only -y %s >/dev/null 2>&1", path("e.img")), 0);
	expect_moved(path("e.img"));
	T_EQ(ujbd_recover(path("u.img"), &e), 0);
	T_EQ(e.fs_error, -EIO);
	T_EQ(e.needs_recovery_cleared, with_txn);
	expect_moved(path("u.img"));
	T_CHECK(same_but_superblocks(path("e.img"), path("u.img"), bs, s.jsb_byte));
	T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", path("e.img")), 0);
	T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", path("u.img")), 0);
	/* done once: a second recovery has nothing to move */
	T_EQ(ujbd_recover(path("u.img"), &e), 0);
	T_EQ(e.fs_error, 0);
	T_CHECK(!e.needs_recovery_cleared);
}

static void t_replayed_4k(void)
{
	if (!have_tools)
		T_SKIP("mke2fs/e2fsck not installed");
	against_e2fsck("-t ext4", 4096, true);
}

static void t_replayed_1k_no_csum(void)
{
	if (!have_tools)
		T_SKIP("mke2fs/e2fsck not installed");
	against_e2fsck("-t ext4 -O ^metadata_csum,^64bit", 1024, true);
}

/* needs_recovery clear, the log empty, s_errno set: e2fsck moves it too. */
static void t_error_only(void)
{
	if (!have_tools)
		T_SKIP("mke2fs/e2fsck not installed");
	against_e2fsck("-t ext4", 4096, false);
}

/* The tool: exit 0, says what it did, `e2fsck -fn` passes after. */
static void t_cli(void)
{
	const char *ujbd = getenv("UJBD");
	char out[512] = "";
	FILE *p;

	if (!have_tools)
		T_SKIP("mke2fs/e2fsck not installed");
	if (!ujbd || access(ujbd, X_OK))
		T_SKIP("UJBD not set (run through make check)");
	T_EQ(t_sh("mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1", path("c.img")), 0);
	T_EQ(append_txn(path("c.img")), 0);
	T_EQ(set_jerrno(path("c.img"), -EIO), 0);
	snprintf(out, sizeof(out), "%s recover %s 2>&1; echo \"exit $?\"", ujbd, path("c.img"));
	p = popen(out, "r");
	T_CHECK(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	pclose(p);
	T_CHECK(strstr(out, "the journal recorded an abort (s_errno -5): moved to the ext4 superblock"));
	T_CHECK(strstr(out, "exit 0\n"));
	expect_moved(path("c.img"));
	T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", path("c.img")), 0);
}

/* A standalone journal: the error has nowhere else to go, so it stays. */
static void t_standalone_keeps(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	struct target t;
	struct jbd_journal jj;
	struct target_end e;

	T_EQ(t_sh("truncate -s 4M %s", path("d.img")), 0);
	rig_opts(&o, true);
	o.format_opts.blocksize = 4096;
	o.format_opts.blocks = 64;
	T_EQ(ujbd_open_path(path("s.jnl"), path("d.img"), NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
	T_EQ(target_open(&t, path("s.jnl"), NULL, path("d.img"), true, true, &err), 0);
	T_EQ(jbd_journal_load(&t.loc, &jj, &err), 0);
	jbd_put_be32(&jj.j_sb.s_errno, (uint32_t)-EIO);
	T_EQ(jbd_journal_write_sb(&jj, &err), 0);
	T_EQ(target_end_recovery(&t, &jj, &e, &err), 0);
	T_EQ(e.fs_error, 0);
	target_close(&t);
	T_EQ(target_open(&t, path("s.jnl"), NULL, path("d.img"), false, true, &err), 0);
	T_EQ(jbd_journal_load(&t.loc, &jj, &err), 0);
	T_EQ((int32_t)jbd_get_be32(jj.j_sb.s_errno), -EIO);
	target_close(&t);
}

/* ujbd_open_path: refused without clear_error (nothing changed); with it,
 * the error lands in the ext4 superblock before the runtime clears it. */
static void t_open_path_clear_error(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	struct state s;

	if (!have_tools)
		T_SKIP("mke2fs/e2fsck not installed");
	T_EQ(t_sh("mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1", path("o.img")), 0);
	T_EQ(append_txn(path("o.img")), 0);
	T_EQ(set_jerrno(path("o.img"), -EIO), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open_path(path("o.img"), NULL, NULL, &o, &j, &err), -EUCLEAN);
	T_EQ(read_state(path("o.img"), &s), 0);
	T_CHECK(!(s.fs_state & EXT2_ERROR_FS));
	T_EQ(s.jerrno, -EIO);
	o.clear_error = true;
	T_EQ(ujbd_open_path(path("o.img"), NULL, NULL, &o, &j, &err), 0);
	T_EQ(read_state(path("o.img"), &s), 0);
	T_CHECK(s.fs_state & EXT2_ERROR_FS);
	T_EQ(ujbd_close(j), 0);
	expect_moved(path("o.img"));
	T_EQ(t_sh("e2fsck -fn %s >/dev/null 2>&1", path("o.img")), 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	have_tools = t_sh("command -v mke2fs >/dev/null && command -v e2fsck >/dev/null") == 0;
	if (rig_tmpdir(dir, sizeof(dir), "ujbd-er"))
		return 1;
	T_RUN(t_replayed_4k);
	T_RUN(t_replayed_1k_no_csum);
	T_RUN(t_error_only);
	T_RUN(t_cli);
	T_RUN(t_standalone_keeps);
	T_RUN(t_open_path_clear_error);
	rig_rmtree(dir);
	return t_done(argv[0]);
}

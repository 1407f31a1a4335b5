/*
 * Malformed journals against the real `ujbd recover` (path in env UJBD):
 * each case builds a valid standalone journal and data file with the
 * library, breaks one thing (fixing checksums up where needed so the break
 * itself is what gets noticed), runs the tool, and asserts: exit status 1,
 * exactly one line on stderr that names the problem, and both files
 * unchanged (hash before and after).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/jbd_log.h"

#define BS 1024u
#define JBLOCKS 64u
#define DBLOCKS 64u

static char dir[256], jpath[300], dpath[300], errpath[300];
static const char *ujbd;

/* Where the base journal's blocks are. */
struct base {
	struct jbd_write_result t1, t2;
};

static int open_file(const char *p, uint64_t size, struct dev **d)
{
	struct dev_file_opts o = { .create = true, .size = size };
	return dev_file_open(p, &o, d);
}

struct build_opts {
	enum jbd_csum_kind csum;
	uint32_t jblocks;
	bool no_bounds;      /* write tags without the data-device check */
	uint64_t t1_target;  /* default 1 */
};

/* T1: blocks t1_target, 2 ('a', 'b'); T2: revoke 1, block 3 ('c'). */
static int build(const struct build_opts *bo, struct base *b)
{
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = bo->jblocks ? bo->jblocks : JBLOCKS,
				      .csum = bo->csum, .sequence = 1 };
	struct dev *jd = NULL, *dd = NULL;
	struct jbd_extent ext = { 0, 0, fo.blocks };
	struct jbd_journal j;
	struct jbd_err err;
	static uint8_t a[BS], bb[BS], c[BS];
	int rc;

	unlink(jpath);
	unlink(dpath);
	memset(fo.uuid, 0x42, 16);
	memset(a, 'a', BS);
	memset(bb, 'b', BS);
	memset(c, 'c', BS);
	rc = open_file(jpath, fo.blocks * BS, &jd);
	if (!rc)
		rc = open_file(dpath, (uint64_t)DBLOCKS * BS, &dd);
	if (!rc)
		rc = jbd_format(jd, &fo, &err);
	struct jbd_loc loc = { .j_dev = jd, .j_blocksize = BS, .j_map = &ext, .j_nmap = 1,
			       .j_len = fo.blocks, .j_data = dd,
			       .j_data_blocks = bo->no_bounds ? 0 : DBLOCKS };
	if (!rc)
		rc = jbd_journal_load(&loc, &j, &err);
	struct jbd_write_block w1[] = { { bo->t1_target ? bo->t1_target : 1, a }, { 2, bb } };
	struct jbd_write_block w2[] = { { 3, c } };
	uint64_t rev[] = { 1 };
	struct jbd_txn_desc d1 = { .blocks = w1, .nblocks = 2, .commit_sec = 1000 };
	struct jbd_txn_desc d2 = { .blocks = w2, .nblocks = 1, .revokes = rev, .nrevokes = 1,
				   .commit_sec = 1001 };
	if (!rc)
		rc = jbd_write_txn(&j, &d1, &b->t1, &err);
	if (!rc)
		rc = jbd_write_txn(&j, &d2, &b->t2, &err);
	if (rc)
		fprintf(stderr, "build: %s\n", err.msg);
	if (jd)
		dev_close(jd);
	if (dd)
		dev_close(dd);
	return rc;
}

static int rw_block(bool wr, uint32_t n, void *buf)
{
	int fd = open(jpath, wr ? O_WRONLY : O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = wr ? pwrite(fd, buf, BS, (off_t)n * BS) : pread(fd, buf, BS, (off_t)n * BS);
	close(fd);
	return r == BS ? 0 : -EIO;
}

/* Edit the superblock; fix its checksum up unless raw. */
static int edit_sb(void (*fn)(struct jbd2_sb *), bool raw)
{
	static uint8_t buf[BS];
	int rc = rw_block(false, 0, buf);

	if (rc)
		return rc;
	fn((struct jbd2_sb *)buf);
	if (!raw)
		jbd_sb_csum_set((struct jbd2_sb *)buf);
	return rw_block(true, 0, buf);
}

/* The format of the journal on disk, for fixing tails up. */
static int fmt_of(struct jbd_fmt *f)
{
	static uint8_t buf[BS];
	int rc = rw_block(false, 0, buf);

	if (!rc)
		jbd_fmt_from_sb((struct jbd2_sb *)buf, f);
	return rc;
}

static uint64_t hash_file(const char *p)
{
	static uint8_t buf[65536];
	uint64_t h = 1469598103934665603ull;
	int fd = open(p, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	close(fd);
	return h;
}

/* Run `ujbd recover JOURNAL --data=DATA`; stderr goes to errpath. */
static int run_recover(const char *data)
{
	char darg[320];
	pid_t pid;
	int st;

	snprintf(darg, sizeof(darg), "--data=%s", data);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_WRONLY);
		dup2(e, 2);
		dup2(nul, 1);
		execl(ujbd, ujbd, "recover", jpath, darg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* stderr: exactly one line, from `ujbd recover`, containing want. */
static bool one_line_naming(const char *want, char *msg, size_t len)
{
	FILE *f = fopen(errpath, "r");
	size_t n = 0;
	int lines = 0;

	msg[0] = 0;
	if (!f)
		return false;
	n = fread(msg, 1, len - 1, f);
	fclose(f);
	msg[n] = 0;
	for (size_t i = 0; i < n; i++)
		lines += msg[i] == '\n';
	return lines == 1 && msg[n - 1] == '\n' && !strncmp(msg, "ujbd recover: ", 14) &&
	       strstr(msg, want) != NULL;
}

/* The common assertion of every case. */
static void expect_refused(const char *want, const char *data)
{
	char msg[1024];
	uint64_t hj = hash_file(jpath), hd = hash_file(dpath);
	int rc = run_recover(data ? data : dpath);

	if (!one_line_naming(want, msg, sizeof(msg)))
		T_FAILF("stderr does not name '%s': %s", want, msg);
	else if (rc != 1)
		T_FAILF("exit status %d, expected 1 (%s)", rc, msg);
	else if (hash_file(jpath) != hj || hash_file(dpath) != hd)
		T_FAILF("a file changed (%s)", msg);
	else
		fprintf(stderr, "    %s", msg);
}

#define NEED_UJBD()                                                   \
	do {                                                          \
		if (!ujbd)                                            \
			T_SKIP("env UJBD (path of the ujbd tool) not set"); \
	} while (0)

static const struct build_opts v3 = { .csum = JBD_CSUM_KIND_V3 };

/* ---- the base journal is good: the harness itself works ---------------- */

static void test_base_is_valid(void)
{
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(run_recover(dpath), 0);
	T_EQ(build(&v3, &b), 0);
}

/* ---- superblock ---------------------------------------------------------- */

static void sb_unknown_incompat(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_feature_incompat, jbd_sb_incompat(sb) | 0x100);
}
static void sb_v2_and_v3(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_feature_incompat,
		     jbd_sb_incompat(sb) | JBD2_FEATURE_INCOMPAT_CSUM_V2);
}
static void sb_v1_and_v3(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_feature_compat, JBD2_FEATURE_COMPAT_CHECKSUM);
}
static void sb_csum_type(struct jbd2_sb *sb)
{
	sb->s_checksum_type = JBD2_CRC32_CHKSUM;
}
static void sb_flip_unused(struct jbd2_sb *sb)
{
	sb->s_padding2[1] ^= 0x10;
}
static void sb_first_zero(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_first, 0);
}
static void sb_first_past(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_first, jbd_get_be32(sb->s_maxlen));
}
static void sb_maxlen_big(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_maxlen, JBLOCKS + 1);
}
static void sb_start_past(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_start, JBLOCKS);
}
static void sb_blocksize_odd(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_blocksize, 3072);
}
static void sb_blocksize_small(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_blocksize, 512);
}
static void sb_blocktype(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_header.h_blocktype, JBD2_REVOKE_BLOCK);
}
static void sb_users(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_nr_users, 2);
}
static void sb_fast_commit_small(struct jbd2_sb *sb)
{
	jbd_put_be32(&sb->s_feature_incompat,
		     jbd_sb_incompat(sb) | JBD2_FEATURE_INCOMPAT_FAST_COMMIT);
}

static void sb_case(void (*fn)(struct jbd2_sb *), bool raw, const char *want)
{
	struct base b;

	T_EQ(build(&v3, &b), 0);
	T_EQ(edit_sb(fn, raw), 0);
	expect_refused(want, NULL);
}

static void test_unknown_incompat(void) { NEED_UJBD(); sb_case(sb_unknown_incompat, false, "unknown incompatible features 0x100"); }
static void test_csum_v2_and_v3(void) { NEED_UJBD(); sb_case(sb_v2_and_v3, false, "both csum v2 and csum v3"); }
static void test_csum_v1_and_v3(void) { NEED_UJBD(); sb_case(sb_v1_and_v3, false, "checksum v1 set together with csum v2/v3"); }
static void test_csum_type(void) { NEED_UJBD(); sb_case(sb_csum_type, false, "checksum type 1"); }
static void test_sb_checksum(void) { NEED_UJBD(); sb_case(sb_flip_unused, true, "superblock: bad checksum"); }
static void test_first_zero(void) { NEED_UJBD(); sb_case(sb_first_zero, false, "s_first 0 out of range"); }
static void test_first_past_end(void) { NEED_UJBD(); sb_case(sb_first_past, false, "s_first 64 out of range"); }
static void test_maxlen_beyond(void) { NEED_UJBD(); sb_case(sb_maxlen_big, false, "s_maxlen 65 beyond the journal"); }
static void test_start_out_of_range(void) { NEED_UJBD(); sb_case(sb_start_past, false, "s_start 64 outside the log"); }
static void test_blocksize_odd(void) { NEED_UJBD(); sb_case(sb_blocksize_odd, false, "invalid block size"); }
static void test_blocksize_small(void) { NEED_UJBD(); sb_case(sb_blocksize_small, false, "invalid block size"); }
static void test_sb_blocktype(void) { NEED_UJBD(); sb_case(sb_blocktype, false, "unknown block type 5"); }
static void test_nr_users(void) { NEED_UJBD(); sb_case(sb_users, false, "s_nr_users > 1"); }
static void test_fast_commit_too_small(void) { NEED_UJBD(); sb_case(sb_fast_commit_small, false, "fast-commit area"); }

static void test_fast_commit_refused(void)
{
	struct build_opts o = { .csum = JBD_CSUM_KIND_V3, .jblocks = 1400 };
	struct base b;

	NEED_UJBD();
	T_EQ(build(&o, &b), 0);
	T_EQ(edit_sb(sb_fast_commit_small, false), 0);
	expect_refused("fast-commit journals are not supported", NULL);
}

static void sb_magic(struct jbd2_sb *sb)
{
	sb->s_header.h_magic.b[0] ^= 0xFF;
}
static void test_sb_magic(void) { NEED_UJBD(); sb_case(sb_magic, true, "neither an ext4 image nor a jbd2 journal"); }

/* ---- the log ---------------------------------------------------------- */

static void test_tag_beyond_device(void)
{
	struct build_opts o = { .csum = JBD_CSUM_KIND_V3, .no_bounds = true, .t1_target = 5000 };
	struct base b;

	NEED_UJBD();
	T_EQ(build(&o, &b), 0);
	expect_refused("names block 5000 beyond the data device", NULL);
}

/* --data names the journal file itself: a tag pointing into the journal. */
static void test_tag_inside_journal(void)
{
	struct build_opts o = { .csum = JBD_CSUM_KIND_V3, .t1_target = 0 };
	struct base b;

	NEED_UJBD();
	T_EQ(build(&o, &b), 0);
	expect_refused("inside the journal", jpath);
}

static void test_revoke_count(void)
{
	static uint8_t buf[BS];
	struct jbd_fmt f;
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(fmt_of(&f), 0);
	T_EQ(rw_block(false, b.t2.start_block, buf), 0); /* revoke blocks come first */
	jbd_put_be32(&((struct jbd2_revoke_header *)buf)->r_count, BS - 3);
	jbd_tail_csum_set(&f, buf);
	T_EQ(rw_block(true, b.t2.start_block, buf), 0);
	expect_refused("r_count 1021 beyond the block (at most 1020)", NULL);
}

static void test_descriptor_tail(void)
{
	static uint8_t buf[BS];
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(rw_block(false, b.t2.start_block + 1, buf), 0);
	buf[BS - 1] ^= 1;
	T_EQ(rw_block(true, b.t2.start_block + 1, buf), 0);
	expect_refused("transaction 2: bad descriptor or revoke block checksum", NULL);
}

static void test_revoke_tail(void)
{
	static uint8_t buf[BS];
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(rw_block(false, b.t2.start_block, buf), 0);
	buf[500] ^= 1;
	T_EQ(rw_block(true, b.t2.start_block, buf), 0);
	expect_refused("transaction 2: bad descriptor or revoke block checksum", NULL);
}

static void test_commit_checksum(void)
{
	static uint8_t buf[BS];
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(rw_block(false, b.t2.commit_block, buf), 0);
	buf[900] ^= 1;
	T_EQ(rw_block(true, b.t2.commit_block, buf), 0);
	expect_refused("transaction 2: bad commit block checksum", NULL);
}

static void test_v1_commit_crc(void)
{
	static uint8_t buf[BS];
	struct build_opts o = { .csum = JBD_CSUM_KIND_V1 };
	struct base b;

	NEED_UJBD();
	T_EQ(build(&o, &b), 0);
	T_EQ(rw_block(false, b.t1.start_block + 1, buf), 0); /* T1's first data block */
	buf[10] ^= 1;
	T_EQ(rw_block(true, b.t1.start_block + 1, buf), 0);
	expect_refused("transaction 1: bad commit block checksum", NULL);
}

/* The whole log: descriptor + data pairs of one sequence, no commit. */
static void test_scan_loop(void)
{
	static uint8_t buf[BS];
	struct jbd_fmt f;
	struct jbd_tag t = { 1, 0, 0 };
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(fmt_of(&f), 0);
	for (uint32_t blk = 1; blk + 1 < JBLOCKS; blk += 2) {
		memset(buf, 0, BS);
		T_EQ(rw_block(true, blk + 1, buf), 0);
		t.t_csum = jbd_tag_csum(&f, 1, buf);
		jbd_desc_encode(&f, buf, 1, &t, 1, (const uint8_t *)"0123456789abcdef");
		T_EQ(rw_block(true, blk, buf), 0);
	}
	/* 63 log blocks: the last one too, so no block ends the lap */
	jbd_desc_encode(&f, buf, 1, &t, 1, (const uint8_t *)"0123456789abcdef");
	T_EQ(rw_block(true, JBLOCKS - 1, buf), 0);
	expect_refused("scan would loop", NULL);
}

/* ---- not "nothing written", but still exit 1: a bad data checksum -------- */

static void test_bad_data_checksum(void)
{
	static uint8_t buf[BS];
	char msg[1024];
	struct base b;

	NEED_UJBD();
	T_EQ(build(&v3, &b), 0);
	T_EQ(rw_block(false, b.t1.start_block + 2, buf), 0); /* block 2's copy */
	buf[7] ^= 1;
	T_EQ(rw_block(true, b.t1.start_block + 2, buf), 0);
	T_EQ(run_recover(dpath), 1);
	T_CHECK(one_line_naming("1 journaled block had a bad checksum", msg, sizeof(msg)));
	int fd = open(dpath, O_RDONLY);
	T_CHECK(fd >= 0);
	T_EQ(pread(fd, buf, BS, 3 * BS), (ssize_t)BS);
	T_EQ(buf[0], 'c');               /* the others were replayed */
	T_EQ(pread(fd, buf, BS, 2 * BS), (ssize_t)BS);
	T_EQ(buf[0], 0);                 /* the bad one was not */
	close(fd);
}

int main(int argc, char **argv)
{
	(void)argc;
	ujbd = getenv("UJBD");
	snprintf(dir, sizeof(dir), "%s/ujbd-neg-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(jpath, sizeof(jpath), "%s/j.jnl", dir);
	snprintf(dpath, sizeof(dpath), "%s/data.img", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	T_RUN(test_base_is_valid);
	T_RUN(test_unknown_incompat);
	T_RUN(test_csum_v2_and_v3);
	T_RUN(test_csum_v1_and_v3);
	T_RUN(test_csum_type);
	T_RUN(test_sb_checksum);
	T_RUN(test_first_zero);
	T_RUN(test_first_past_end);
	T_RUN(test_maxlen_beyond);
	T_RUN(test_start_out_of_range);
	T_RUN(test_blocksize_odd);
	T_RUN(test_blocksize_small);
	T_RUN(test_sb_blocktype);
	T_RUN(test_nr_users);
	T_RUN(test_fast_commit_too_small);
	T_RUN(test_fast_commit_refused);
	T_RUN(test_sb_magic);
	T_RUN(test_tag_beyond_device);
	T_RUN(test_tag_inside_journal);
	T_RUN(test_revoke_count);
	T_RUN(test_descriptor_tail);
	T_RUN(test_revoke_tail);
	T_RUN(test_commit_checksum);
	T_RUN(test_v1_commit_crc);
	T_RUN(test_scan_loop);
	T_RUN(test_bad_data_checksum);
	unlink(jpath);
	unlink(dpath);
	unlink(errpath);
	rmdir(dir);
	return t_done(argv[0]);
}

/*
 * The target layer (src/target): one resolver for the tool and
 * ujbd_open_path, one table from a failure to its errno, message and exit
 * status; and the journal's close hook, through which a path-opened
 * journal's owner acts at close. Real world, files in a temporary
 * directory.
 */
#include "jbd/rt_rig.h"
#include <fcntl.h>
#include <unistd.h>

#include "target/target.h"

static char dir[64];

static int mkjournal(const char *path)
{
	struct dev_file_opts fo = { .create = true, .size = 64 * 4096 };
	struct jbd_format_opts o = { .blocksize = 4096, .blocks = 64, .csum = JBD_CSUM_KIND_V3 };
	struct jbd_err err;
	struct dev *d;
	int rc = dev_file_open(path, &fo, &d);

	if (rc)
		return rc;
	rc = jbd_format(d, &o, &err);
	dev_close(d);
	return rc;
}

/* target_open's rc, exit status and the start of its message. */
static void expect_fail(const char *path, const char *journal, const char *data, int code,
			int status, const char *msg_start)
{
	struct target t;
	struct jbd_err err = { 0 };
	int rc = target_open(&t, path, journal, data, false, true, &err);

	T_EQ(rc, code);
	T_EQ(err.code, code);
	T_EQ(target_status(&t, rc), status);
	T_CHECK(strncmp(err.msg, msg_start, strlen(msg_start)) == 0);
	target_close(&t);
}

static void t_table(void)
{
	char jp[96], dp[96], zp[96], mp[96];
	struct target t;
	struct jbd_err err;

	snprintf(jp, sizeof(jp), "%s/j.img", dir);
	snprintf(dp, sizeof(dp), "%s/d.img", dir);
	snprintf(zp, sizeof(zp), "%s/zero.img", dir);
	snprintf(mp, sizeof(mp), "%s/missing.img", dir);
	T_EQ(mkjournal(jp), 0);
	T_EQ(rig_mkfile(dp, 1 << 20), 0);
	T_EQ(rig_mkfile(zp, 1 << 16), 0);
	/* usage: the library's errno (-EINVAL), the tool's exit 2 */
	expect_fail(jp, NULL, NULL, -EINVAL, 2, "no data device: '");
	expect_fail(jp, dp, dp, -EINVAL, 2, "--journal not allowed: '");
	/* invalid input: exit 1 */
	expect_fail(zp, NULL, dp, -EINVAL, 1, "cannot use: '");
	/* a missing file: the system's errno, exit 1 (invalid input) */
	expect_fail(mp, NULL, dp, -ENOENT, 1, "cannot open");
	/* a missing data device, a directory, a character device */
	expect_fail(jp, NULL, mp, -ENOENT, 1, "cannot open: '");
	expect_fail(jp, NULL, dir, -ENOTBLK, 1, "cannot open: '");
	expect_fail(jp, NULL, "/dev/null", -ENOTBLK, 1,
		    "cannot open: '/dev/null': not a regular file or a block device");
	/* success: identity map, the data device's size */
	T_EQ(target_open(&t, jp, NULL, dp, false, true, &err), 0);
	T_EQ(t.kind, TARGET_STANDALONE);
	T_EQ(t.loc.j_blocksize, 4096);
	T_EQ_U64(t.loc.j_len, 64);
	T_EQ_U64(t.loc.j_data_blocks, 256);
	T_EQ(target_status(&t, 0), 0);
	target_close(&t);
}

struct hook_log {
	int calls;
	int rc;
};

static void hook(void *arg, int rc)
{
	struct hook_log *h = arg;

	h->calls++;
	h->rc = rc;
}

static void t_close_hook(void)
{
	struct hook_log h = { 0, 1 };
	struct ujbd_opts o;
	struct rig r;

	T_EQ(rig_devs(&r, 4096, 256, 1024, NULL, NULL), 0);
	rig_opts(&o, true);
	T_EQ(rig_open(&r, &o), 0);
	ujbd_set_close_hook(r.j, hook, &h);
	T_EQ(rig_write(r.j, 5, 1, 1, true, NULL), 0);
	T_EQ(h.calls, 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_EQ(h.calls, 1);
	T_EQ(h.rc, 0);                 /* a clean close */
	o.format = false;
	T_EQ(rig_open(&r, &o), 0);
	ujbd_set_close_hook(r.j, hook, &h);
	T_EQ(rig_write(r.j, 6, 1, 2, true, NULL), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(h.calls, 2);
	T_EQ(h.rc, -ESHUTDOWN);        /* a crash: the owner must not clean up */
	T_EQ(rig_open(&r, &o), 0);     /* no hook: nothing called */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_EQ(h.calls, 2);
	rig_free(&r);
}

/* The tool's messages name the journal's own codes in its words (strerror
 * said "Unknown error 4101" for -UJBD_EGONE), errno values as strerror. */
static void t_strerror(void)
{
	T_STREQ(target_strerror(-UJBD_EGONE), ujbd_strerror(-UJBD_EGONE));
	T_CHECK(strncmp(target_strerror(-UJBD_EINJOURNAL), "Unknown", 7) != 0);
	T_STREQ(target_strerror(-ENOENT), strerror(ENOENT));
	T_STREQ(target_strerror(-ENOTBLK), "not a regular file or a block device");
	T_EQ(target_exit_status(-UJBD_EGONE), 3);
	T_EQ(target_exit_status(-UJBD_EINJOURNAL), 1);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (rig_tmpdir(dir, sizeof(dir), "ujbd-tg"))
		return 1;
	T_RUN(t_table);
	T_RUN(t_close_hook);
	T_RUN(t_strerror);
	rig_rmtree(dir);
	return t_done(argv[0]);
}

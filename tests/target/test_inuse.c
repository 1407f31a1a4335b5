/*
 * One writer per journal: a second ujbd_open_path of a journal (or of its
 * data file) already open, from another process or from this one, is
 * refused with -EBUSY and a message naming the holder; so is every verb of
 * the tool that writes (write, recover, format), with exit 1, while `info`
 * and `dump` read on and say that it is in use. The lock goes with the
 * holder: at its close, and when it is killed. It is an open file
 * description lock, so libext2fs opening and closing an ext4 image under
 * an open journal does not drop it. Before, both opens succeeded and two
 * writers lost and tore acknowledged sets. Real world, files in a
 * temporary directory; the tool's part needs UJBD (set by make check).
 */
#include "jbd/rt_rig.h"
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static const char *path(const char *name)
{
	return t_path(dir, name);
}

static void data_file(const char *p)
{
	int fd = open(p, O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd >= 0) {
		if (ftruncate(fd, 4 << 20))
			perror("ftruncate");
		close(fd);
	}
}

static void opts(struct ujbd_opts *o, bool format)
{
	rig_opts(o, format);
	o->format_opts.blocksize = 4096;
	o->format_opts.blocks = 256;
}

/* A fresh standalone journal "j" with data file "d". */
static int make_journal(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	int rc;

	data_file(path("d"));
	opts(&o, true);
	rc = ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err);
	return rc ? rc : ujbd_close(j);
}

/* Run the tool; its exit status, and its stderr in err. */
__attribute__((format(printf, 3, 4)))
static int tool(char *err, size_t n, const char *fmt, ...)
{
	char args[512], cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1 >/dev/null", getenv("UJBD"), args);
	return t_capture(cmd, err, n);
}

/* ---- a holder in another process ------------------------------------------ */

struct holder {
	pid_t pid;
	int to_child, from_child;
};

/* The child opens the journal, writes block 9 (acknowledged), says "o",
 * and holds it until the parent closes its pipe (or kills it). Forked
 * before this process started any thread. */
static int holder_start(struct holder *h)
{
	int down[2], up[2];
	char c = 0;

	if (pipe(down) || pipe(up))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (h->pid == 0) {
		struct ujbd_opts o;
		struct ujbd *j;
		struct jbd_err err;

		close(down[1]);
		close(up[0]);
		opts(&o, false);
		if (ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err) ||
		    rig_write(j, 9, 1, 7, true, NULL))
			_exit(1);
		if (write(up[1], "o", 1) != 1)
			_exit(1);
		while (read(down[0], &c, 1) > 0)
			;
		_exit(ujbd_close(j) ? 1 : 0);
	}
	close(down[0]);
	close(up[1]);
	h->to_child = down[1];
	h->from_child = up[0];
	return read(h->from_child, &c, 1) == 1 && c == 'o' ? 0 : -EIO;
}

/* Let the child close and exit (or kill it); its exit status. */
static int holder_stop(struct holder *h, bool kill_it)
{
	int st = 0;

	if (kill_it)
		kill(h->pid, SIGKILL);
	close(h->to_child);
	close(h->from_child);
	if (waitpid(h->pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* The tool while another process holds the journal: the writers refused
 * with the holder's pid, the readers going on with a note. */
static void tool_while_held(pid_t pid)
{
	char err[1024], want[256];

	if (!getenv("UJBD") || access(getenv("UJBD"), X_OK)) {
		fprintf(stderr, "    (UJBD not set: the tool's part not run)\n");
		return;
	}
	int fd = open(path("b"), O_CREAT | O_TRUNC | O_WRONLY, 0644);

	T_CHECK(fd >= 0 && ftruncate(fd, 4096) == 0); /* a block file: write would go on */
	close(fd);
	snprintf(want, sizeof(want), "in use: '%s': locked by process %d (", path("j"), (int)pid);
	T_EQ(tool(err, sizeof(err), "write %s --data=%s --block=3:%s", path("j"), path("d"),
		  path("b")), 1);
	T_CHECK(strstr(err, "ujbd write: ") == err && strstr(err, want));
	T_EQ(tool(err, sizeof(err), "recover %s --data=%s", path("j"), path("d")), 1);
	T_CHECK(strstr(err, "ujbd recover: ") == err && strstr(err, want));
	/* --force overwrites data, never a journal someone has open */
	T_EQ(tool(err, sizeof(err), "format %s --size=1M --force", path("j")), 1);
	T_CHECK(strstr(err, "ujbd format: ") == err && strstr(err, want));
	snprintf(want, sizeof(want), "note: '%s' is in use: locked by process %d (", path("j"),
		 (int)pid);
	T_EQ(tool(err, sizeof(err), "info %s", path("j")), 0);
	T_CHECK(strstr(err, want));
	T_EQ(tool(err, sizeof(err), "dump %s --json", path("j")), 0);
	T_CHECK(strstr(err, want));
}

static void t_other_process(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	struct holder h;
	char want[160];

	T_EQ(make_journal(), 0);
	T_EQ(holder_start(&h), 0);
	opts(&o, false);
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err), -EBUSY);
	snprintf(want, sizeof(want), "in use: '%s': locked by process %d (test_inuse)",
		 path("j"), (int)h.pid);
	T_STREQ(err.msg, want);
	tool_while_held(h.pid);
	T_EQ(holder_stop(&h, false), 0);
	/* released at its close */
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
}

/* A holder killed mid-life: the kernel drops its lock, the next open
 * recovers what it acknowledged. */
static void t_killed_holder(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	struct holder h;
	uint8_t buf[4096], want[4096];
	int fd;

	T_EQ(make_journal(), 0);
	T_EQ(holder_start(&h), 0);
	T_EQ(holder_stop(&h, true), 128 + SIGKILL);
	opts(&o, false);
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
	fd = open(path("d"), O_RDONLY);
	T_CHECK(fd >= 0);
	T_EQ(pread(fd, buf, sizeof(buf), 9 * 4096), 4096);
	close(fd);
	rig_fill(want, 4096, 9, 7);
	T_CHECK(memcmp(buf, want, sizeof(buf)) == 0);
}

/* ---- in this process ---------------------------------------------------------- */

static void t_same_process(void)
{
	struct ujbd_opts o;
	struct ujbd *j, *j2;
	struct jbd_err err;
	char want[160];

	T_EQ(make_journal(), 0);
	opts(&o, false);
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err), 0);
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j2, &err), -EBUSY);
	T_CHECK(j2 == NULL);
	snprintf(want, sizeof(want), "in use: '%s': locked by this process (pid %d): it is "
		 "open already", path("j"), (int)getpid());
	T_STREQ(err.msg, want);
	/* another journal over the same data file: the data file is claimed */
	o.format = true;
	T_EQ(ujbd_open_path(path("j2"), path("d"), NULL, &o, &j2, &err), -EBUSY);
	snprintf(want, sizeof(want), "in use: '%s': locked by this process", path("d"));
	T_CHECK(strncmp(err.msg, want, strlen(want)) == 0);
	T_EQ(rig_write(j, 4, 1, 1, true, NULL), 0); /* the first one is unharmed */
	T_EQ(ujbd_close(j), 0);
	o.format = false;
	T_EQ(ujbd_open_path(path("j"), path("d"), NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
}

/* An ext4 image: open_path sets needs_recovery through libext2fs, which
 * opens and closes the image; the lock must outlive that close. */
static void t_ext4_lock_survives(void)
{
	struct ujbd_opts o;
	struct ujbd *j, *j2;
	struct jbd_err err;
	char cmd[256];

	if (access("/usr/sbin/mke2fs", X_OK) && access("/sbin/mke2fs", X_OK))
		T_SKIP("mke2fs not installed");
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1",
		 path("fs.img"));
	T_EQ(system(cmd), 0);
	opts(&o, false);
	T_EQ(ujbd_open_path(path("fs.img"), NULL, NULL, &o, &j, &err), 0);
	T_EQ(ujbd_open_path(path("fs.img"), NULL, NULL, &o, &j2, &err), -EBUSY);
	T_CHECK(strstr(err.msg, "locked by this process"));
	T_EQ(ujbd_close(j), 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (rig_tmpdir(dir, sizeof(dir), "ujbd-iu"))
		return 1;
	/* the forking tests first: every journal of this process is closed
	 * (its threads joined) before each fork */
	T_RUN(t_other_process);
	T_RUN(t_killed_holder);
	T_RUN(t_same_process);
	T_RUN(t_ext4_lock_survives);
	rig_rmtree(dir);
	return t_done(argv[0]);
}

/*
 * A mounted file system is refused as e2fsck refuses it: an ext4 image
 * mounted through a loop device (looked up by the loop device's backing
 * file and /proc/self/mountinfo), the loop device itself (O_EXCL fails
 * under a mount), and a mount in another mount namespace (not in our
 * mountinfo: the loop device's O_EXCL says so). ujbd_open_path gets
 * -EBUSY, `recover` and `write` exit 1 with "in use: 'IMG': mounted on
 * 'MNT' (through /dev/loopN)" and write nothing; `info` and `dump` read
 * on and say it is mounted. Unmounted, with the loop device still
 * attached, it is writable again (e2fsck's rule: mounted, not attached).
 * Before, every one of them acted on the live file system (recover
 * cleared needs_recovery under the kernel). Needs root, losetup and mount
 * (SKIP otherwise); the image is mounted read-only, so that the kernel
 * writes nothing to it and "nothing written" can be checked by hash.
 */
#include "jbd/rt_rig.h"
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], img[128], mnt[128], loop[64];

/* The first line a command prints (stdout), or "" . */
__attribute__((format(printf, 3, 4)))
static void sh_line(char *out, size_t n, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = 0;
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(out, (int)n, p))
		out[0] = 0;
	out[strcspn(out, "\n")] = 0;
	pclose(p);
}

/* Run `ujbd VERB TARGET ...`: exit status, stderr in err. */
static int tool(const char *verb, const char *target, const char *extra, char *err, size_t n)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s %s %s 2>&1 >%s/out", getenv("UJBD"), verb, target,
		 extra, dir);
	return t_capture(cmd, err, n);
}

static bool have_ujbd(void)
{
	return getenv("UJBD") && access(getenv("UJBD"), X_OK) == 0;
}

/* The writers refused with `why` in the message, nothing written; the
 * readers noted. */
static void refused(const char *target, const char *why)
{
	struct ujbd_opts o;
	struct ujbd *j = NULL;
	struct jbd_err err;
	char msg[1024], want[512], before[128], after[128];

	sh_line(before, sizeof(before), "sha256sum < %s", img);
	rig_opts(&o, false);
	T_EQ(ujbd_open_path(target, NULL, NULL, &o, &j, &err), -EBUSY);
	T_CHECK(j == NULL);
	snprintf(want, sizeof(want), "in use: '%s': %s", target, why);
	T_CHECK(strncmp(err.msg, want, strlen(want)) == 0);
	if (have_ujbd()) {
		char blk[160];

		snprintf(blk, sizeof(blk), "--block=8000:%s/a.blk", dir);
		T_EQ(tool("recover", target, "", msg, sizeof(msg)), 1);
		T_CHECK(strstr(msg, "ujbd recover: ") == msg && strstr(msg, want));
		T_EQ(tool("write", target, blk, msg, sizeof(msg)), 1);
		T_CHECK(strstr(msg, "ujbd write: ") == msg && strstr(msg, want));
		snprintf(want, sizeof(want), "note: '%s' is in use: %s", target, why);
		T_EQ(tool("info", target, "", msg, sizeof(msg)), 0);
		T_CHECK(strstr(msg, want));
		T_EQ(tool("dump", target, "--json", msg, sizeof(msg)), 0);
		T_CHECK(strstr(msg, want));
		T_EQ(t_sh("jq -e .transactions %s/out >/dev/null 2>&1 || ! command -v jq >/dev/null",
			dir), 0);
	}
	sh_line(after, sizeof(after), "sha256sum < %s", img);
	T_STREQ(before, after);
}

static void t_mounted_image(void)
{
	char why[256];

	snprintf(why, sizeof(why), "mounted on '%s' (through %s)", mnt, loop);
	refused(img, why);
}

static void t_mounted_device(void)
{
	char why[256];

	snprintf(why, sizeof(why), "mounted on '%s'", mnt);
	refused(loop, why);
}

/* After the unmount, the attached but idle loop device does not count. */
static void t_unmounted(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err;
	char msg[1024];

	T_EQ(t_sh("umount %s", mnt), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open_path(img, NULL, NULL, &o, &j, &err), 0);
	T_EQ(ujbd_close(j), 0);
	if (have_ujbd())
		T_EQ(tool("recover", img, "", msg, sizeof(msg)), 0);
}

/* A process that mounts the loop device in a mount namespace of its own
 * and keeps it (sleeps) until killed; "up" on its stdout once mounted. */
static pid_t mount_elsewhere(void)
{
	char cmd[300], up[8] = "";
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	snprintf(cmd, sizeof(cmd), "mount -o ro %s %s && echo up && exec sleep 60", loop, mnt);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("unshare", "unshare", "-m", "--propagation", "private", "sh", "-c", cmd,
		       (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid > 0 && (read(fds[0], up, 2) != 2 || strncmp(up, "up", 2))) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

/* Mounted in a private mount namespace: invisible in our mountinfo, but
 * the file system holds the loop device, and O_EXCL says so. */
static void t_other_namespace(void)
{
	char why[256];
	pid_t pid;

	if (t_sh("command -v unshare >/dev/null") != 0)
		T_SKIP("unshare not installed");
	pid = mount_elsewhere();
	if (pid < 0)
		T_SKIP("cannot mount in a new mount namespace (unshare -m failed)");
	if (t_sh("grep -q ' %s ' /proc/self/mountinfo", mnt) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		T_SKIP("the namespace's mount is visible here");
	}
	snprintf(why, sizeof(why), "claimed through %s (mounted in another mount namespace",
		 loop);
	refused(img, why);
	kill(pid, SIGKILL); /* its namespace, and the mount, go with it */
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (geteuid() != 0) {
		printf("SKIP: needs root to mount an image\n");
		return 77;
	}
	if (t_sh("command -v losetup >/dev/null && command -v mount >/dev/null && "
	       "command -v mke2fs >/dev/null") != 0) {
		printf("SKIP: losetup, mount or mke2fs not installed\n");
		return 77;
	}
	if (rig_tmpdir(dir, sizeof(dir), "ujbd-mnt"))
		return 1;
	snprintf(img, sizeof(img), "%s/fs.img", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	if (t_sh("mke2fs -q -F -t ext4 -b 4096 %s 32M >/dev/null 2>&1 && mkdir %s && "
	       "head -c 4096 /dev/zero > %s/a.blk", img, mnt, dir)) {
		fprintf(stderr, "cannot make the image\n");
		return 1;
	}
	sh_line(loop, sizeof(loop), "losetup -f --show %s 2>/dev/null", img);
	if (!loop[0] || t_sh("mount -o ro %s %s 2>/dev/null", loop, mnt)) {
		printf("SKIP: cannot attach and mount a loop device (%s)\n",
		       loop[0] ? "mount failed" : "losetup failed");
		if (loop[0])
			t_sh("losetup -d %s", loop);
		t_sh("rm -rf %s", dir);
		return 77;
	}
	T_RUN(t_mounted_image);
	T_RUN(t_mounted_device);
	T_RUN(t_unmounted);
	T_RUN(t_other_namespace);
	t_sh("umount %s 2>/dev/null; losetup -d %s; rm -rf %s", mnt, loop, dir);
	return t_done(argv[0]);
}

/*
 * inuse.c: who else uses a file or block device (inuse.h).
 *
 * The one idea: the kernel already knows, and says it in three places we
 * can read without privileges. A mounted block device is a line of
 * /proc/self/mountinfo with its major:minor; an image file mounted through
 * a loop device is that loop device's /sys/block/loopN/loop/backing_file;
 * a lock on a file shows in the fdinfo of the descriptor that holds it
 * (/proc/PID/fdinfo/FD, "lock:" lines; F_OFD_GETLK itself reports no pid
 * for an open-file-description lock). These are only consulted to decide
 * (mounted?) and to explain a refusal (who holds it?); the claim itself is
 * the kernel's (O_EXCL, F_OFD_SETLK in src/dev/file.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "target/inuse.h"
#include "priv/dev_file.h"

/* Bounds on what is scanned: mount lines, /sys/block entries, processes'
 * descriptors (the last only when explaining a refusal). */
#define INUSE_MAX_MOUNTS 100000
#define INUSE_MAX_FDS    1000000

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

/* Where the file system on device dev is mounted (its first mount). */
static bool mount_of(dev_t dev, char *mnt, size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[4096];
	unsigned maj, min;
	bool found = false;

	for (int i = 0; f && !found && i < INUSE_MAX_MOUNTS && fgets(line, sizeof(line), f); i++) {
		/* ID PARENT MAJ:MIN ROOT POINT ... */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, point) != 3)
			continue;
		if (makedev(maj, min) != dev)
			continue;
		unescape(point);
		snprintf(mnt, n, "%s", point);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* The device number in a sysfs "dev" file ("7:0"). */
static bool sys_dev(const char *path, dev_t *dev)
{
	char buf[32];
	unsigned maj, min;

	if (!dev_file_read_line(path, buf, sizeof(buf)) || sscanf(buf, "%u:%u", &maj, &min) != 2)
		return false;
	*dev = makedev(maj, min);
	return true;
}

/* Does loop device `name` (in /sys/block) have st's file as backing file? */
static bool loop_backs(const char *name, const struct stat *st)
{
	char path[300], file[4096];
	const char *del = " (deleted)";
	size_t len;
	struct stat bs;

	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	if (!dev_file_read_line(path, file, sizeof(file)))
		return false; /* not bound */
	len = strlen(file);
	if (len > strlen(del) && !strcmp(file + len - strlen(del), del))
		return false; /* its file is gone: not the one at our path */
	return stat(file, &bs) == 0 && bs.st_dev == st->st_dev && bs.st_ino == st->st_ino;
}

/* Is loop device `name`, or a partition of it, mounted here? */
static bool loop_mount(const char *name, char *why, size_t n)
{
	char path[600], mnt[4096];
	struct dirent *e;
	dev_t dev;
	DIR *d;
	bool found = false;

	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	if (sys_dev(path, &dev) && mount_of(dev, mnt, sizeof(mnt))) {
		snprintf(why, n, "mounted on '%s' (through /dev/%s)", mnt, name);
		return true;
	}
	snprintf(path, sizeof(path), "/sys/block/%s", name);
	d = opendir(path);
	while (d && !found && (e = readdir(d))) {
		if (strncmp(e->d_name, name, strlen(name)) || e->d_name[strlen(name)] != 'p')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/%s/dev", name, e->d_name);
		if (sys_dev(path, &dev) && mount_of(dev, mnt, sizeof(mnt))) {
			snprintf(why, n, "mounted on '%s' (through /dev/%s)", mnt, e->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* A loop device mounted in another mount namespace is not in our
 * mountinfo, but the file system still claims it: O_EXCL says so. */
static bool loop_claimed(const char *name, char *why, size_t n)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != EBUSY)
		return false;
	snprintf(why, n, "claimed through /dev/%s (mounted in another mount namespace, or "
		 "held by another program)", name);
	return true;
}

/* A regular file: mounted through a loop device backed by it? */
static bool file_mounted(const struct stat *st, char *why, size_t n)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		if (strncmp(e->d_name, "loop", 4) || !loop_backs(e->d_name, st))
			continue;
		found = loop_mount(e->d_name, why, n) || loop_claimed(e->d_name, why, n);
	}
	if (d)
		closedir(d);
	return found;
}

bool inuse_mounted(const char *path, char *why, size_t n)
{
	char mnt[4096];
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	if (S_ISBLK(st.st_mode) && mount_of(st.st_rdev, mnt, sizeof(mnt))) {
		snprintf(why, n, "mounted on '%s'", mnt);
		return true;
	}
	return S_ISREG(st.st_mode) && file_mounted(&st, why, n);
}

/* ---- lock holders ------------------------------------------------------- */

/* Does /proc/PID/fdinfo/FD list a POSIX or OFD lock (those conflict with
 * our F_OFD_SETLK; flock locks do not)? */
static bool fd_has_lock(const char *pid, const char *fd)
{
	char path[600], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "lock:", 5) &&
			(strstr(line, " OFDLCK ") || strstr(line, " POSIX "));
	if (f)
		fclose(f);
	return found;
}

/* Does process pid hold a lock on st's file? *budget bounds the scan. */
static bool pid_locks(const char *pid, const struct stat *st, long *budget)
{
	char path[600];
	struct dirent *e;
	struct stat fs;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	while (d && !found && --*budget > 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		if (stat(path, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino)
			found = fd_has_lock(pid, e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* The pid of a process holding a lock on st's file, or 0. */
static long lock_holder(const struct stat *st)
{
	long budget = INUSE_MAX_FDS, pid = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && !pid && budget > 0 && (e = readdir(d))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);

		if (p > 0 && !*end && pid_locks(e->d_name, st, &budget))
			pid = p;
	}
	if (d)
		closedir(d);
	return pid;
}

static void say_lock_holder(const struct stat *st, char *why, size_t n)
{
	long pid = lock_holder(st);
	char path[64], comm[64];

	if (!pid) {
		snprintf(why, n, "locked by another open of it (its holder is not visible "
			 "in /proc)");
		return;
	}
	if (pid == (long)getpid()) {
		snprintf(why, n, "locked by this process (pid %ld): it is open already", pid);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (!dev_file_read_line(path, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "?");
	snprintf(why, n, "locked by process %ld (%s)", pid, comm);
}

/* A block device claimed but not mounted here: a stacked driver (its
 * holders directory), or someone's O_EXCL open. */
static void say_claimed(const struct stat *st, char *why, size_t n)
{
	char path[96];
	struct dirent *e = NULL;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(st->st_rdev),
		 minor(st->st_rdev));
	d = opendir(path);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			break;
	if (d && e)
		snprintf(why, n, "held by %s", e->d_name);
	else
		snprintf(why, n, "claimed by another program (mounted in another mount "
			 "namespace, or held)");
	if (d)
		closedir(d);
}

void inuse_holder(const char *path, char *why, size_t n)
{
	struct stat st;

	if (inuse_mounted(path, why, n))
		return;
	if (stat(path, &st) < 0)
		snprintf(why, n, "busy");
	else if (S_ISBLK(st.st_mode))
		say_claimed(&st, why, n);
	else
		say_lock_holder(&st, why, n);
}

bool inuse_locked(const char *path, char *why, size_t n)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool locked;

	if (fd < 0)
		return false;
	locked = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		 fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	close(fd);
	if (locked)
		say_lock_holder(&st, why, n);
	return locked;
}

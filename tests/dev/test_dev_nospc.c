/*
 * A full host file system under a file device: a write that only partly
 * fits (the kernel writes what it can, then refuses the rest) reports what
 * the host said, -ENOSPC, on both engines, never an -EIO made up for the
 * short count; and the part that fitted is on the file. Needs root (a
 * 64 KiB tmpfs); skips otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/dev.h"

#define BS 4096u

static char mnt[256];
static int mounted;

/* An empty 64 KiB tmpfs holding a file that leaves `left` pages free. */
static int fill_to(unsigned left)
{
	char p[300];
	static uint8_t page[BS];
	int fd;

	snprintf(p, sizeof(p), "%s/filler", mnt);
	unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	memset(page, 0x5a, sizeof(page));
	while (write(fd, page, BS) == (ssize_t)BS)
		;
	/* full: give back `left` pages */
	off_t end = lseek(fd, 0, SEEK_END);
	int rc = ftruncate(fd, end - (off_t)left * BS) ? -errno : 0;
	close(fd);
	return rc;
}

static void nospc_case(enum dev_file_engine engine)
{
	static uint8_t buf[8 * BS];
	struct dev_file_opts o = { .create = true, .size = 1 << 20, .engine = engine };
	char p[300];
	struct dev *d;
	int rc;

	if (!mounted)
		T_SKIP("needs root to mount a tmpfs");
	snprintf(p, sizeof(p), "%s/dev.img", mnt);
	unlink(p);
	T_EQ(fill_to(3), 0);
	rc = dev_file_open(p, &o, &d);
	if (rc == -ENOSYS || (rc && engine == DEV_FILE_URING))
		T_SKIP("no io_uring here: %s", strerror(-rc));
	T_EQ(rc, 0);
	memset(buf, 'x', sizeof(buf));
	/* 8 pages into a hole, 3 free: the host writes some, then ENOSPC */
	rc = dev_pwrite(d, buf, sizeof(buf), 0, 0);
	dev_close(d);
	T_EQ(rc, -ENOSPC);
	struct stat st;
	T_EQ(stat(p, &st), 0);
	T_CHECK(st.st_blocks > 0); /* the part that fitted was written */
	unlink(p);
}

static void test_nospc_threads(void)
{
	nospc_case(DEV_FILE_THREADS);
}

static void test_nospc_uring(void)
{
	nospc_case(DEV_FILE_URING);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	(void)argc;
	snprintf(mnt, sizeof(mnt), "%s/ujbd-nospc-XXXXXX", base);
	if (!mkdtemp(mnt)) {
		perror("mkdtemp");
		return 1;
	}
	mounted = geteuid() == 0 && mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0;
	T_RUN(test_nospc_threads);
	T_RUN(test_nospc_uring);
	if (mounted)
		umount(mnt);
	rmdir(mnt);
	return t_done(argv[0]);
}

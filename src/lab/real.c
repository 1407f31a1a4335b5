/*
 * The lab in the real world: a real file's size, CPU work in real time, and
 * what is underneath the file (real.h).
 *
 * The one idea: everything here is a question about the machine asked once,
 * outside the scenarios' threads (a stat, an ioctl, a sysfs read), except
 * lab_cpu_work, which in the real world is a thread spinning on rt's clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/real.h"
#include "ujbd/dev.h"
#include "priv/dev_file.h"
#include "priv/param.h"
#include "priv/stack.h"

const char *lab_real_path(const struct lab_ctx *c)
{
	const char *disk = lab_ctx_disk(c);

	return strncmp(disk, "file:", 5) == 0 ? disk + 5 : NULL;
}

static int blockdev_bytes(const char *path, uint64_t *bytes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = dev_file_bytes(fd, bytes);
	close(fd);
	return rc;
}

int lab_real_disk_bytes(const char *path, uint64_t *bytes)
{
	struct stat st;

	*bytes = LAB_REAL_FILE_BYTES;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISBLK(st.st_mode))
		return blockdev_bytes(path, bytes);
	if (S_ISREG(st.st_mode) && st.st_size > 0)
		*bytes = (uint64_t)st.st_size;
	return 0;
}

void lab_cpu_work(uint64_t ns)
{
	uint64_t end;

	if (rt_world_kind(rt_world_current()) == RT_WORLD_SIM) {
		rt_cpu(ns);
		return;
	}
	end = rt_now_ns() + ns;
	while (rt_now_ns() < end)
		; /* the work itself: a CPU busy for ns */
}

/* The first line of dir/name, without its newline; "" if unreadable. */
static void read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[320];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	(void)dev_file_read_line(path, buf, len);
}

/* "none [mq-deadline] kyber" -> "mq-deadline"; a line without brackets is
 * the only choice. */
static void active_scheduler(const char *line, struct lab_real_disk *d)
{
	const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
	int n = open && close ? (int)(close - open - 1) : (int)strlen(line);
	int max = (int)sizeof(d->rd_scheduler) - 1;

	memcpy(d->rd_scheduler, open && close ? open + 1 : line, (size_t)(n < max ? n : max));
	d->rd_scheduler[n < max ? n : max] = '\0';
}

/* The file's options as the rig opens it: the lab's list, then the user's. */
static bool real_direct(const struct lab_ctx *c)
{
	struct dev_file_opts o;

	rt_param_defaults(stack_file_params(), &o);
	(void)rt_param_parse(stack_file_params(), &o, LAB_REAL_FILE_PARAMS, NULL, 0);
	(void)rt_param_parse(stack_file_params(), &o, lab_ctx_params(c, "file"), NULL, 0);
	return o.direct;
}

void lab_real_describe(const struct lab_ctx *c, struct lab_real_disk *d)
{
	char dir[256], up[300], real[PATH_MAX], line[256];
	const char *base, *path = lab_real_path(c);

	memset(d, 0, sizeof(*d));
	d->rd_rotational = -1;
	d->rd_direct = real_direct(c);
	d->rd_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (!path || dev_file_sysfs_queue(path, dir, sizeof(dir)) < 0)
		return;
	snprintf(up, sizeof(up), "%s/..", dir);
	if (realpath(up, real)) {
		base = strrchr(real, '/');
		snprintf(d->rd_dev, sizeof(d->rd_dev), "%.31s", base ? base + 1 : real);
	}
	read_attr(dir, "scheduler", line, sizeof(line));
	active_scheduler(line, d);
	read_attr(dir, "rotational", line, sizeof(line));
	if (line[0] == '0' || line[0] == '1')
		d->rd_rotational = line[0] == '1';
}

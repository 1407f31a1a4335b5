/*
 * ujbd devices, internal: what the host says about the disk under a file
 * device, for the lab's real world (its report names the kernel's scheduler
 * underneath) and the tests. Not installed.
 *
 * Why internal: it reads Linux's sysfs layout, which is the host's
 * description of itself, not a device's; a program that places a journal
 * needs none of it (dev_file_opts.rotational asks the same question for it).
 */
#ifndef UJBD_DEV_FILE_H
#define UJBD_DEV_FILE_H

#include <stddef.h>

#include "ujbd/dev.h"

/*
 * The sysfs queue directory ("/sys/dev/block/M:N/queue" or a partition's
 * ".../../queue") of the disk that holds path: the block device itself, or
 * for a regular file the one its file system is on. Read its attributes
 * ("scheduler", "rotational") to say what the kernel does underneath.
 * 0, -ENOENT (no such disk: tmpfs, overlay), or -errno of stat.
 */
int dev_file_sysfs_queue(const char *path, char *dir, size_t len);

#endif /* UJBD_DEV_FILE_H */

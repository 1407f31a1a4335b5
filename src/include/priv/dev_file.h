/*
 * ujbd devices, internal: what the host says about the disk under a file
 * device, for the lab's real world (its report names the kernel's scheduler
 * underneath), the target layer (who else uses a file), ext4's size check
 * and the tests. Not installed.
 *
 * Why internal: it reads Linux's sysfs layout, which is the host's
 * description of itself, not a device's; a program that places a journal
 * needs none of it (dev_file_opts.rotational asks the same question for it).
 */
#ifndef UJBD_DEV_FILE_H
#define UJBD_DEV_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/dev.h"

/*
 * The sysfs queue directory ("/sys/dev/block/M:N/queue" or a partition's
 * ".../../queue") of the disk that holds path: the block device itself, or
 * for a regular file the one its file system is on. Read its attributes
 * ("scheduler", "rotational") to say what the kernel does underneath.
 * 0, -ENOENT (no such disk: tmpfs, overlay), or -errno of stat.
 */
int dev_file_sysfs_queue(const char *path, char *dir, size_t len);

/* The first line of a small file (a sysfs attribute, a /proc entry) in
 * buf, without its newline. false, and buf "", when it cannot be read. */
bool dev_file_read_line(const char *path, char *buf, size_t len);

/* The bytes a regular file or a block device holds (a block device's
 * st_size is 0: BLKGETSIZE64). 0 or -errno. */
int dev_file_bytes(int fd, uint64_t *bytes);

#endif /* UJBD_DEV_FILE_H */

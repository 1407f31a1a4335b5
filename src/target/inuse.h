/*
 * inuse.h: who else uses a file or block device, so that the target layer
 * refuses to write under a mounted file system or a second writer and can
 * say who it is. Every answer is a short phrase for a message ("mounted on
 * '/mnt' (through /dev/loop0)", "locked by process 42 (ujbd)"), written to
 * why[n]. Real world only; reads /proc and /sys, never writes anything.
 */
#ifndef UJBD_TARGET_INUSE_H
#define UJBD_TARGET_INUSE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Is path a mounted file system, as e2fsck asks: a block device mounted
 * (/proc/self/mountinfo, by device number), or a file backing a loop
 * device that is mounted (or one of its partitions), or claimed by a
 * program in another mount namespace (the loop device refuses O_EXCL).
 */
bool inuse_mounted(const char *path, char *why, size_t n);

/*
 * Why an exclusive open of path failed with -EBUSY: the mount, the process
 * holding the lock on the file (its open files in /proc, with the lock
 * lines of their fdinfo), or what can be said when it cannot be named.
 */
void inuse_holder(const char *path, char *why, size_t n);

/* Does another open hold a write lock on the file path (F_OFD_GETLK)?
 * For read-only opens, which take none. */
bool inuse_locked(const char *path, char *why, size_t n);

#endif

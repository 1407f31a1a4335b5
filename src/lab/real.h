/*
 * The lab in the real world (`ujbd lab --world=real --disk=file:PATH`):
 * what a scenario's stack needs on a real file, CPU work in real time, and
 * what the report says about the machine underneath (docs/lab.md, "The
 * real machine").
 *
 * The one idea: the scenarios do not change. A real file needs a size, the
 * I/O must reach the kernel's scheduler (O_DIRECT: each request goes down
 * with its ioprio in its io_uring sqe, instead of into the page cache), and
 * ujbd's elevator above must know whether the disk seeks (the file's disk's
 * sysfs flag), so that it plugs and idles as it would on that disk. The rest
 * runs as in the sim, in real time.
 *
 * Errors: 0 or a negative errno; nothing prints.
 */
#ifndef UJBD_LAB_REAL_H
#define UJBD_LAB_REAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lab/lab.h"

/* The size of a file the lab creates (sparse): the file system over all
 * of it, its 128 MiB journal inside where mke2fs puts it, and room for the
 * largest scenario's files (morton: ~420 MB) several times over: blocks
 * freed by a transaction not yet committed are not reused, the copy loop
 * frees a tree per loop, and the fs model has no ext3-like retry after a
 * commit (ext3_should_retry_alloc), so 1 GiB ran out (ENOSPC) at real
 * speed. */
#define LAB_REAL_FILE_BYTES (4ull << 30)

/* The "file" group's list a scenario's file disk starts from; the user's
 * --file=LIST goes over it (--file=direct=0 puts the page cache back). */
#define LAB_REAL_FILE_PARAMS "direct=1,rotational=backing"

/* PATH of the context's disk when it is "file:PATH", else NULL. */
const char *lab_real_path(const struct lab_ctx *c);

/* The bytes the lab lays out on path: a block device's or a non-empty
 * regular file's size; LAB_REAL_FILE_BYTES for a file that is missing or
 * empty (the stack creates or extends it to that). 0 or -errno of stat or
 * of the size ioctl. */
int lab_real_disk_bytes(const char *path, uint64_t *bytes);

/*
 * Work that a workload stands for but does not do (AIM7's CPU-only job):
 * in the sim, CPU time charged to the calling thread (rt_cpu); in the real
 * world, ns of spinning on this machine's CPU, so that it competes for a
 * real CPU as the job did.
 */
void lab_cpu_work(uint64_t ns);

/* What is underneath the context's real file: its disk (the sysfs name),
 * the kernel's I/O scheduler on it, its seek flag (-1: unknown), whether
 * the lab opens it O_DIRECT (--file=direct=...), this machine's CPUs. */
struct lab_real_disk {
	char rd_dev[32];        /* "vda", "loop0"; "" when there is no disk */
	char rd_scheduler[32];  /* the bracketed one: "mq-deadline", "bfq", "none" */
	int rd_rotational;
	bool rd_direct;
	long rd_cpus;
};
void lab_real_describe(const struct lab_ctx *c, struct lab_real_disk *d);

#endif /* UJBD_LAB_REAL_H */

/*
 * scratch.h: a scratch directory for the examples, so that each one runs
 * from anywhere and leaves nothing behind. Not part of libujbd.
 *
 * scratch_open makes a fresh directory under $TMPDIR (or /tmp) and arranges
 * for it to be removed at exit, errors included; scratch_file creates a
 * file of a given size in it (a program's data file), scratch_path only
 * names one (the journal file, which ujbd creates when it formats it).
 */
#ifndef UJBD_EXAMPLES_SCRATCH_H
#define UJBD_EXAMPLES_SCRATCH_H

#include <err.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRATCH_FILES 4

static char scratch_dir[256];
static char scratch_paths[SCRATCH_FILES][320];
static int scratch_n;

static inline void scratch_remove(void)
{
	for (int i = 0; i < scratch_n; i++)
		unlink(scratch_paths[i]);
	if (scratch_dir[0])
		rmdir(scratch_dir);
}

static inline void scratch_open(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(scratch_dir, sizeof(scratch_dir), "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 name);
	if (!mkdtemp(scratch_dir))
		err(1, "mkdtemp '%s'", scratch_dir);
	atexit(scratch_remove);
}

static inline const char *scratch_path(const char *name)
{
	if (scratch_n == SCRATCH_FILES)
		errx(1, "scratch: more than %d files", SCRATCH_FILES);
	snprintf(scratch_paths[scratch_n], sizeof(scratch_paths[0]), "%s/%s", scratch_dir, name);
	return scratch_paths[scratch_n++];
}

static inline const char *scratch_file(const char *name, off_t size)
{
	const char *path = scratch_path(name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);

	if (fd < 0 || ftruncate(fd, size) < 0)
		err(1, "cannot create '%s'", path);
	close(fd);
	return path;
}

/* Block `block` (of bs bytes) of the file at path, as it is on disk now. */
static inline void scratch_read_block(const char *path, unsigned bs, uint64_t block, void *buf)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, buf, bs, (off_t)(block * bs)) != (ssize_t)bs)
		err(1, "cannot read block %llu of '%s'", (unsigned long long)block, path);
	close(fd);
}

#endif

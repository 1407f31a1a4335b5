/*
 * What a file left in the host's page cache (mincore), for the tests of
 * writes sent past it (DEV_REQ_DIRECT): test_rt_caller (a commit's log
 * writes) and test_format (zeroing a new journal).
 */
#ifndef UJBD_TEST_PAGECACHE_H
#define UJBD_TEST_PAGECACHE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PC_BS 4096u /* O_DIRECT wants 4 KiB alignment: whole blocks */

/* Pages of blocks [first, first + n) (PC_BS each) of path in the page
 * cache, or -1. */
static inline int pc_cached_blocks(const char *path, uint64_t first, unsigned n)
{
	int fd = open(path, O_RDONLY), c = 0;
	size_t len = (size_t)(first + n) * PC_BS;
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *v = calloc(len / (size_t)pg + 1, 1);
	void *m = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED || !v || mincore(m, len, v) < 0)
		c = -1;
	for (size_t i = first * PC_BS / (size_t)pg; c >= 0 && i < len / (size_t)pg; i++)
		c += v[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, len);
	if (fd >= 0)
		close(fd);
	free(v);
	return c;
}

/* Whether a direct write to path (its first block) leaves the page cache
 * out (not so on tmpfs, whose O_DIRECT is the cache, or where O_DIRECT is
 * refused). */
static inline bool pc_direct_bypasses_cache(const char *path)
{
	int fd = open(path, O_RDWR | O_DIRECT);
	void *buf = NULL;
	bool ok = fd >= 0 && posix_memalign(&buf, PC_BS, PC_BS) == 0;

	if (ok) {
		memset(buf, 0x5a, PC_BS);
		ok = pwrite(fd, buf, PC_BS, 0) == (ssize_t)PC_BS && pc_cached_blocks(path, 0, 1) == 0;
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return ok;
}

#endif

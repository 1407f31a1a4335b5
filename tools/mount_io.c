/*
 * mount_io.c: the io_manager that puts libext2fs on top of a libujbd
 * journal (for `ujbd mount`, cmd_mount.c).
 *
 * The one idea: libext2fs reads and writes the image only through an
 * io_channel. Ours reads every block through the journal's cache
 * (ujbd_read: the newest contents, those of the running handle included)
 * and turns every write into write access + dirty of the calling thread's
 * handle, so each FUSE operation's metadata changes become one handle of
 * the running transaction. A write with no handle is refused (EROFS): the
 * file system never writes outside an operation. File data does not come
 * through here: the write path hands it to ujbd_write_data (ordered).
 *
 * Built without libfuse3 too (it needs only libext2fs and libujbd).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mount.h"

static struct ujbd *io_j;                 /* the journal under the channel */
static __thread struct ujbd_handle *io_h; /* the calling thread's handle */
static __thread int io_err;               /* the first ujbd error of the handle */
/* Blocks journaled since the mount (the log was empty at open), one bit
 * each, grown as needed; and those the calling thread's handle journaled.
 * Written under the mount's lock (one operation at a time). */
static unsigned char *io_logged;
static size_t io_logged_len;
static __thread uint64_t *io_mine;
static __thread size_t io_mine_n, io_mine_cap;

void mount_io_set_journal(struct ujbd *j)
{
	io_j = j;
}

void mount_io_set_handle(struct ujbd_handle *h)
{
	io_h = h;
	io_err = 0;
	io_mine_n = 0;
	if (!h) { /* the handle ended: its list goes (FUSE's threads come and go) */
		free(io_mine);
		io_mine = NULL;
		io_mine_cap = 0;
	}
}

struct ujbd_handle *mount_io_handle(void)
{
	return io_h;
}

int mount_io_error(void)
{
	return io_err;
}

/* A ujbd error as a libext2fs errcode: errnos pass through (libext2fs
 * does the same with the system's), the journal's own become EIO. */
static errcode_t io_code(int rc)
{
	if (!io_err)
		io_err = rc;
	if (rc == -EROFS || rc == -ENOMEM || rc == -ENOSPC)
		return (errcode_t)-rc;
	return EIO;
}

static errcode_t io_open(const char *name, int flags, io_channel *out)
{
	io_channel ch;

	if (!io_j)
		return EXT2_ET_BAD_DEVICE_NAME;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return EXT2_ET_NO_MEMORY;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = mount_io_manager;
	ch->name = strdup(name);
	if (!ch->name) {
		free(ch);
		return EXT2_ET_NO_MEMORY;
	}
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->flags = flags;
	*out = ch;
	return 0;
}

static errcode_t io_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	free(ch->name);
	free(ch);
	return 0;
}

static errcode_t io_set_blksize(io_channel ch, int blksize)
{
	ch->block_size = blksize;
	return 0;
}

/* Bytes [off, off + len) of the image, through the journal's cache. */
static errcode_t io_read_bytes(uint64_t off, size_t len, void *data)
{
	uint32_t bs = ujbd_block_size(io_j);
	unsigned char *out = data;
	unsigned char *tmp = NULL;

	while (len) {
		uint64_t blk = off / bs;
		size_t in = off % bs, n = bs - in < len ? bs - in : len;
		int rc;

		if (in == 0 && n == bs) {
			rc = ujbd_read(io_j, blk, out);
		} else {
			if (!tmp && !(tmp = malloc(bs)))
				return EXT2_ET_NO_MEMORY;
			rc = ujbd_read(io_j, blk, tmp);
			if (!rc)
				memcpy(out, tmp + in, n);
		}
		if (rc) {
			free(tmp);
			return rc == -EINVAL ? EXT2_ET_SHORT_READ : io_code(rc);
		}
		out += n;
		off += n;
		len -= n;
	}
	free(tmp);
	return 0;
}

/* blk was journaled by the calling thread's handle. */
static int io_note_logged(uint64_t blk)
{
	if (blk / 8 >= io_logged_len) {
		size_t len = (size_t)(blk / 8 + 1) * 2;
		unsigned char *n = realloc(io_logged, len);

		if (!n)
			return -ENOMEM;
		memset(n + io_logged_len, 0, len - io_logged_len);
		io_logged = n;
		io_logged_len = len;
	}
	if (!(io_logged[blk / 8] & (1u << (blk % 8)))) {
		io_logged[blk / 8] |= (unsigned char)(1u << (blk % 8));
	} else {
		for (size_t i = 0; i < io_mine_n; i++)
			if (io_mine[i] == blk)
				return 0;
	}
	if (io_mine_n == io_mine_cap) {
		size_t cap = io_mine_cap ? io_mine_cap * 2 : 64;
		uint64_t *n = realloc(io_mine, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		io_mine = n;
		io_mine_cap = cap;
	}
	io_mine[io_mine_n++] = blk;
	return 0;
}

int mount_io_freed(uint64_t blk, uint64_t n)
{
	for (uint64_t b = blk; b < blk + n; b++) {
		struct ujbd_buf *buf;
		int rc = 0;

		if (b / 8 >= io_logged_len || !(io_logged[b / 8] & (1u << (b % 8))))
			continue; /* never journaled: no copy in the log to replay */
		if (!io_h)
			return io_code(-EROFS);
		for (size_t i = 0; i < io_mine_n; i++) {
			if (io_mine[i] != b)
				continue;
			/* this handle journaled it: its copy must not be logged
			 * (ujbd_revoke refuses a block of the very handle) */
			rc = ujbd_get_write_access(io_h, b, &buf);
			if (!rc) {
				rc = ujbd_forget(io_h, buf);
				ujbd_buf_put(buf);
			}
			io_mine[i] = io_mine[--io_mine_n];
			break;
		}
		if (!rc)
			rc = ujbd_revoke(io_h, b);
		if (rc)
			return io_code(rc);
		io_logged[b / 8] &= (unsigned char)~(1u << (b % 8));
	}
	return 0;
}

/* Bytes [off, off + len) into the calling thread's handle: a whole block
 * with create access (no read), a part with write access. */
static errcode_t io_write_bytes(uint64_t off, size_t len, const void *data)
{
	uint32_t bs = ujbd_block_size(io_j);
	const unsigned char *in_p = data;

	if (!io_h)
		return EROFS;
	while (len) {
		uint64_t blk = off / bs;
		size_t in = off % bs, n = bs - in < len ? bs - in : len;
		struct ujbd_buf *b;
		int rc;

		for (;;) {
			rc = (in == 0 && n == bs) ? ujbd_get_create_access(io_h, blk, &b)
						  : ujbd_get_write_access(io_h, blk, &b);
			if (rc != -UJBD_ENOCREDIT)
				break;
			rc = ujbd_extend(io_h, MOUNT_CREDITS);
			if (rc)
				return io_code(rc);
		}
		if (rc)
			return io_code(rc);
		memcpy((unsigned char *)ujbd_buf_data(b) + in, in_p, n);
		rc = ujbd_dirty_metadata(io_h, b);
		ujbd_buf_put(b);
		if (!rc)
			rc = io_note_logged(blk);
		if (rc)
			return io_code(rc);
		in_p += n;
		off += n;
		len -= n;
	}
	return 0;
}

static size_t io_len(io_channel ch, int count)
{
	return count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
}

static errcode_t io_read_blk64(io_channel ch, unsigned long long block, int count, void *data)
{
	return io_read_bytes(block * (uint64_t)ch->block_size, io_len(ch, count), data);
}

static errcode_t io_write_blk64(io_channel ch, unsigned long long block, int count,
				const void *data)
{
	return io_write_bytes(block * (uint64_t)ch->block_size, io_len(ch, count), data);
}

static errcode_t io_read_blk(io_channel ch, unsigned long block, int count, void *data)
{
	return io_read_blk64(ch, block, count, data);
}

static errcode_t io_write_blk(io_channel ch, unsigned long block, int count, const void *data)
{
	return io_write_blk64(ch, block, count, data);
}

static errcode_t io_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	if (count < 0)
		return EXT2_ET_INVALID_ARGUMENT;
	return io_write_bytes(offset, (size_t)count, data);
}

/* Durability is the journal's: a commit, not a flush of the channel. */
static errcode_t io_flush(io_channel ch)
{
	return 0;
}

static errcode_t io_set_option(io_channel ch, const char *opt, const char *arg)
{
	return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager mount_io = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "ujbd journal",
	.open = io_open,
	.close = io_close,
	.set_blksize = io_set_blksize,
	.read_blk = io_read_blk,
	.write_blk = io_write_blk,
	.flush = io_flush,
	.write_byte = io_write_byte,
	.set_option = io_set_option,
	.read_blk64 = io_read_blk64,
	.write_blk64 = io_write_blk64,
};

io_manager mount_io_manager = &mount_io;

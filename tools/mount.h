/*
 * mount.h: `ujbd mount`'s pieces (cmd_mount.c, mount_io.c).
 */
#ifndef UJBD_TOOLS_MOUNT_H
#define UJBD_TOOLS_MOUNT_H

#include <stdbool.h>

#include <ext2fs/ext2fs.h>

#include "ujbd/ujbd.h"

/* Credits a FUSE operation's handle starts with, and extends by when an
 * operation touches more blocks (a rename across directories, a truncate
 * of a large file). */
#define MOUNT_CREDITS 64

/* The io_manager over a journal: reads through ujbd_read, writes into the
 * calling thread's handle (mount_io.c). */
extern io_manager mount_io_manager;
void mount_io_set_journal(struct ujbd *j);
/* The calling thread's handle (NULL: none; writes fail with EROFS). */
void mount_io_set_handle(struct ujbd_handle *h);
struct ujbd_handle *mount_io_handle(void);
/* The first journal error a write of the current handle met (0: none). */
int mount_io_error(void);
/* [blk, blk + n) was freed by the calling thread's operation: a block
 * journaled since the mount gets a revoke record (and leaves this handle
 * if it journaled it), so that no older copy of it in the log is replayed
 * over what the block holds next (file data, which is never journaled):
 * ext4's revoke of freed metadata. 0 or a libext2fs errcode (io_err set). */
int mount_io_freed(uint64_t blk, uint64_t n);

/* -o record=TRACE (mount_rec.c): the recorder under the image, its log in
 * TRACE. start before ujbd_open_path; opened after it succeeds (0 or
 * -errno: the trace cannot be trusted); end once ujbd_close has returned
 * (clean: it returned 0, needs_recovery was cleared) or the open failed. */
void mount_rec_start(const char *trace);
int mount_rec_opened(const char *image);
int mount_rec_end(const char *image, bool clean);

#endif

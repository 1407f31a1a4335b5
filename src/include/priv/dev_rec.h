/*
 * ujbd devices, internal: the recorder's log out of the process and back
 * in (src/dev/rec.c, src/dev/rec_trace.c). Not installed.
 *
 * The one idea: a recorder (ujbd/dev.h, dev_rec_new) under a program that
 * may be killed cannot keep its log in memory only. A sink sees each entry
 * as it is logged, in log order, under the recorder's lock, before the
 * request completes to its caller: whatever the caller saw complete is in
 * the sink already. A trace file (dev_rec_trace_*) is such a sink; loading
 * it injects its entries, with the done_before they were logged with, into
 * a fresh recorder, so dev_rec_image builds the same crash images from the
 * file as the live recorder would have (the same arithmetic, rec.c's).
 *
 * Why internal: for the tests and `ujbd mount -o record=` only; the file
 * format may change with any commit (its header says which one it is).
 */
#ifndef UJBD_DEV_REC_H
#define UJBD_DEV_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/dev.h"

/* e as logged (e->data valid during the call only), done_before the
 * absolute index of entries completed when it was submitted. Called with
 * the recorder's lock held: no call back into the recorder. Called once
 * more with e NULL when the recorder closes (its inner device closed). */
typedef void (*dev_rec_sink_fn)(void *arg, const struct dev_rec_entry *e,
				uint64_t done_before);
/* Set (fn NULL: clear) the sink of recorder rec. keep_data false: the log
 * drops each write's data once the sink has seen it (a long recording in
 * little memory; dev_rec_image then fails with -ENODATA). */
void dev_rec_set_sink(struct dev *rec, dev_rec_sink_fn fn, void *arg, bool keep_data);

/* Log e (its data copied) as if it had been submitted when done_before
 * entries had completed and completed now; no I/O. DEV_REC_NOW: every
 * entry logged so far. e->complete_seq is ignored (the log index).
 * -EINVAL: bad entry, a write past the device, or done_before ahead of
 * the log. */
#define DEV_REC_NOW UINT64_MAX
int dev_rec_inject(struct dev *rec, const struct dev_rec_entry *e, uint64_t done_before);

/* ---- trace files ------------------------------------------------------ */

/*
 * A trace file: a 64-byte header ("UJBDTRC1", the device's size and block
 * size, little-endian), then one record per entry, in log order: a 48-byte
 * head (kind, flags, off, len, result, submit_seq, done_before, the record's
 * own index; little-endian) and, for a write, its len bytes of data. A
 * record is written with one write(2) as it is logged, so a process killed
 * at any moment leaves every completed request in the file; a torn last
 * record (the kill landed inside that write) is ignored by the loader.
 */
struct dev_rec_trace;

/* Create (truncate) path and write the header for a device of size bytes
 * and block_size. 0 or -errno. */
int dev_rec_trace_create(const char *path, uint64_t size, uint32_t block_size,
			 struct dev_rec_trace **out);
/* Make t the sink of recorder rec (which keeps no data from then on). */
void dev_rec_trace_attach(struct dev_rec_trace *t, struct dev *rec);
/* A write that reached the device by another path and was made durable
 * there (written, then fsync'd, with nothing of the recorder in flight):
 * logged as a write then a flush, after every entry so far. 0 or -errno. */
int dev_rec_trace_note(struct dev_rec_trace *t, uint64_t off, const void *data, uint32_t len);
/* The first error a record met (0: none): a trace that missed a record
 * must not be trusted. */
int dev_rec_trace_error(const struct dev_rec_trace *t);
/* Close the file (after the recorder it was attached to is closed). The
 * first error of the trace, or of the close. */
int dev_rec_trace_close(struct dev_rec_trace *t);

/* What a loaded trace says. */
struct dev_rec_trace_info {
	uint64_t size;          /* the recorded device's size, bytes */
	uint32_t block_size;
	size_t entries;         /* records loaded */
	uint64_t *end;          /* end[i]: file offset just past record i (malloc'd) */
	uint64_t file_bytes;    /* the file's size */
	bool torn_tail;         /* a partial last record was ignored */
};
/* Read path's header (rec NULL: only that, into info->size and
 * block_size), or inject every whole record into rec, which must be a
 * fresh recorder over a device at least info->size bytes. 0, -EINVAL
 * (not a trace, or a record out of order), -errno. Free info->end. */
int dev_rec_trace_load(const char *path, struct dev *rec, struct dev_rec_trace_info *info);
/* How many records ended at or before file offset bytes (a writer that
 * stat'ed the trace when its fsync returned: every crash point at or past
 * this index must hold what that fsync made durable). */
size_t dev_rec_trace_index(const struct dev_rec_trace_info *info, uint64_t bytes);

#endif /* UJBD_DEV_REC_H */

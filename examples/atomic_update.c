/*
 * atomic_update.c: a record that spans three blocks, updated in place 100
 * times, each update atomic; then a crash, and recovery.
 *
 * Each update is one handle: it asks for write access to the three blocks,
 * stamps each with the update's version, marks them dirty and stops; the
 * handle's transaction carries all three or none. Every tenth update is
 * made durable (ujbd_commit_tid + ujbd_wait_tid: what fsync does). Then the
 * journal is dropped as a crash would drop it (ujbd_close_hard: nothing
 * more is written) and opened again, which replays the committed
 * transactions: the record must show one version in all three blocks, no
 * older than the last durable one.
 *
 *   cc atomic_update.c $(pkg-config --cflags --libs ujbd) -o atomic_update
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ujbd/ujbd.h>

#include "scratch.h"

#define RECORD_FIRST 100 /* the record is blocks 100, 101, 102 */
#define RECORD_BLOCKS 3
#define UPDATES 100

/* One update: version v in every block of the record, in one handle. */
static void update(struct ujbd *j, uint64_t v, bool durable)
{
	struct ujbd_handle *h;
	int rc = ujbd_start(j, RECORD_BLOCKS, &h);

	if (rc < 0)
		errx(1, "start: %s", ujbd_strerror(rc));
	for (uint64_t i = 0; i < RECORD_BLOCKS && rc == 0; i++) {
		struct ujbd_buf *b;

		rc = ujbd_get_write_access(h, RECORD_FIRST + i, &b);
		if (rc < 0)
			break;
		memcpy(ujbd_buf_data(b), &v, sizeof(v));
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	ujbd_tid_t tid = ujbd_handle_tid(h);
	int rc2 = ujbd_stop(h);
	if (rc < 0 || rc2 < 0)
		errx(1, "update %" PRIu64 ": %s", v, ujbd_strerror(rc < 0 ? rc : rc2));
	if (durable && ((rc = ujbd_commit_tid(j, tid)) < 0 || (rc = ujbd_wait_tid(j, tid)) < 0))
		errx(1, "commit of update %" PRIu64 ": %s", v, ujbd_strerror(rc));
}

/* The record's version; every block must carry the same one. */
static uint64_t record_version(struct ujbd *j)
{
	static char buf[4096];
	uint64_t v[RECORD_BLOCKS];

	for (int i = 0; i < RECORD_BLOCKS; i++) {
		int rc = ujbd_read(j, RECORD_FIRST + i, buf);

		if (rc < 0)
			errx(1, "read: %s", ujbd_strerror(rc));
		memcpy(&v[i], buf, sizeof(v[i]));
		if (v[i] != v[0])
			errx(1, "torn record: block %d has version %" PRIu64 ", block %d %" PRIu64,
			     RECORD_FIRST, v[0], RECORD_FIRST + i, v[i]);
	}
	return v[0];
}

int main(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err e;
	uint64_t durable = 0;

	scratch_open("ujbd-atomic");
	const char *data = scratch_file("data.img", 8 << 20);
	const char *journal = scratch_path("journal.img");

	ujbd_opts_default(&o);
	o.format = true;
	o.format_opts.blocks = 1024;
	o.format_opts.blocksize = 4096;
	if (ujbd_open_path(journal, data, NULL, &o, &j, &e) < 0)
		errx(1, "%s", e.msg);
	for (uint64_t v = 1; v <= UPDATES; v++) {
		update(j, v, v % 10 == 0);
		if (v % 10 == 0)
			durable = v;
	}
	ujbd_close_hard(j);              /* a crash: the journal is as it is */

	o.format = false;                /* open again: recovery replays it */
	if (ujbd_open_path(journal, data, NULL, &o, &j, &e) < 0)
		errx(1, "after the crash: %s", e.msg);
	uint64_t v = record_version(j);
	if (v < durable || v > UPDATES)
		errx(1, "record at version %" PRIu64 " after recovery; %" PRIu64 " was durable",
		     v, durable);
	int rc = ujbd_close(j);
	if (rc < 0)
		errx(1, "close: %s", ujbd_strerror(rc));
	printf("atomic_update: %d updates, %" PRIu64 " durable; after the crash the record "
	       "is whole, at version %" PRIu64 "\n", UPDATES, durable, v);
	return 0;
}

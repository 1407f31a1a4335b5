/*
 * fsync_threads.c: eight threads, each writing its own file block and
 * "inode" block and then waiting for them to be durable, 50 times: an fsync
 * loop per thread over one shared journal.
 *
 * Each iteration is one handle: ujbd_write_data writes the file block to its
 * home location (data=ordered: on disk before the commit that carries the
 * inode), the inode block is journaled; then ujbd_commit_tid + ujbd_wait_tid,
 * what fsync does. The threads' fsyncs share commits (group commit): the
 * statistics show fewer commits than fsyncs when they overlap. Any thread
 * may use the journal; each handle belongs to the thread that started it.
 *
 *   cc fsync_threads.c $(pkg-config --cflags --libs ujbd) -o fsync_threads
 */
#include <err.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <ujbd/ujbd.h>

#include "scratch.h"

#define THREADS 8
#define FSYNCS 50
#define INODE_BLOCK(t) (10 + (t))       /* each thread's metadata block */
#define FILE_BLOCK(t) (1000 + (t))      /* each thread's data block */

struct writer {
	struct ujbd *j;
	unsigned id;
	int err;
};

static int fsync_once(struct ujbd *j, unsigned id, uint64_t n)
{
	char block[4096];
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	int rc = ujbd_start(j, 1, &h);

	if (rc < 0)
		return rc;
	memset(block, 'a' + (int)id, sizeof(block));
	memcpy(block, &n, sizeof(n));
	rc = ujbd_write_data(h, FILE_BLOCK(id), block);         /* the file's data */
	if (rc == 0 && (rc = ujbd_get_write_access(h, INODE_BLOCK(id), &b)) == 0) {
		memcpy(ujbd_buf_data(b), &n, sizeof(n));         /* its "inode" */
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	ujbd_tid_t tid = ujbd_handle_tid(h);
	int rc2 = ujbd_stop(h);
	if (rc == 0)
		rc = rc2;
	if (rc == 0)
		rc = ujbd_commit_tid(j, tid);
	if (rc == 0)
		rc = ujbd_wait_tid(j, tid);                      /* durable now */
	return rc;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (uint64_t n = 1; n <= FSYNCS && w->err == 0; n++)
		w->err = fsync_once(w->j, w->id, n);
	return NULL;
}

int main(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err e;
	struct writer w[THREADS];
	pthread_t t[THREADS];
	struct ujbd_stats s;

	scratch_open("ujbd-fsync");
	const char *data = scratch_file("data.img", 8 << 20);
	const char *journal = scratch_path("journal.img");

	ujbd_opts_default(&o);           /* data=ordered */
	o.format = true;
	o.format_opts.blocks = 1024;
	o.format_opts.blocksize = 4096;
	if (ujbd_open_path(journal, data, NULL, &o, &j, &e) < 0)
		errx(1, "%s", e.msg);
	for (unsigned i = 0; i < THREADS; i++) {
		w[i] = (struct writer){ .j = j, .id = i };
		if (pthread_create(&t[i], NULL, writer_main, &w[i]) != 0)
			errx(1, "pthread_create failed");
	}
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (w[i].err < 0)
			errx(1, "writer %u: %s", i, ujbd_strerror(w[i].err));
	}
	int rc = ujbd_stats(j, &s);
	if (rc < 0)
		errx(1, "stats: %s", ujbd_strerror(rc));
	if (s.fsync_latency.count < THREADS * FSYNCS || s.ts_tid == 0)
		errx(1, "stats count %" PRIu64 " fsyncs in %" PRIu64 " commits, want >= %d in >= 1",
		     s.fsync_latency.count, s.ts_tid, THREADS * FSYNCS);
	rc = ujbd_close(j);
	if (rc < 0)
		errx(1, "close: %s", ujbd_strerror(rc));

	for (unsigned i = 0; i < THREADS; i++) {
		uint64_t inode, file;
		char buf[4096];

		scratch_read_block(data, 4096, INODE_BLOCK(i), buf);
		memcpy(&inode, buf, sizeof(inode));
		scratch_read_block(data, 4096, FILE_BLOCK(i), buf);
		memcpy(&file, buf, sizeof(file));
		if (inode != FSYNCS || file != FSYNCS)
			errx(1, "writer %u: inode block at %" PRIu64 ", file block at %" PRIu64
			     ", want %d", i, inode, file, FSYNCS);
	}
	printf("fsync_threads: %d threads x %d fsyncs in %" PRIu64 " commits "
	       "(%.1f fsyncs a commit), fsync p50 %.0f us, p99 %.0f us\n",
	       THREADS, FSYNCS, s.ts_tid, (double)(THREADS * FSYNCS) / (double)s.ts_tid,
	       s.fsync_latency.p50_ns / 1e3, s.fsync_latency.p99_ns / 1e3);
	return 0;
}

/*
 * stats.c: the journal's statistics after some work: the kernel's
 * /proc/fs/jbd2/<dev>/info text, the JSON object, and the waits of one
 * thread by cause (latencytop's way).
 *
 * 200 handles of 4 blocks each, a durable commit every 20: then
 * ujbd_stats takes a snapshot (cumulative since open), ujbd_stats_format
 * prints it as the kernel's info file, ujbd_stats_json as JSON, and the
 * accumulator attached with ujbd_lat_attach holds this thread's own waits.
 *
 *   cc stats.c $(pkg-config --cflags --libs ujbd) -o stats
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ujbd/ujbd.h>

#include "scratch.h"

static const char *const cause[UJBD_LAT_NR] = {
	"waiting for a transaction", "waiting for a commit", "waiting for log space",
	"copying a frozen buffer", "waiting for a shadowed buffer",
};

/* Some work: n handles of 4 blocks, every 20th made durable. */
static void work(struct ujbd *j, unsigned n)
{
	static char block[4096];

	for (unsigned i = 0; i < n; i++) {
		struct ujbd_block set[4];

		memset(block, (int)i, sizeof(block));
		for (unsigned k = 0; k < 4; k++)
			set[k] = (struct ujbd_block){ 64 + (i * 4 + k) % 256, block };
		int rc = ujbd_write_atomic(j, set, 4, i % 20 == 19 ? UJBD_DURABLE : 0);
		if (rc < 0)
			errx(1, "write %u: %s", i, ujbd_strerror(rc));
	}
}

int main(void)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err e;
	struct ujbd_stats s;
	struct ujbd_lat_acct mine = { 0 };
	char text[2048], json[4096], want[64];

	scratch_open("ujbd-stats");
	const char *data = scratch_file("data.img", 8 << 20);
	const char *journal = scratch_path("journal.img");

	ujbd_opts_default(&o);
	o.format = true;
	o.format_opts.blocks = 1024;
	o.format_opts.blocksize = 4096;
	if (ujbd_open_path(journal, data, NULL, &o, &j, &e) < 0)
		errx(1, "%s", e.msg);
	ujbd_lat_attach(&mine);          /* this thread's waits, by cause */
	work(j, 200);
	ujbd_lat_attach(NULL);

	int rc = ujbd_stats(j, &s);
	if (rc < 0)
		errx(1, "stats: %s", ujbd_strerror(rc));
	if (ujbd_stats_format(&s, text, sizeof(text)) >= (int)sizeof(text) ||
	    ujbd_stats_json(&s, json, sizeof(json)) >= (int)sizeof(json))
		errx(1, "statistics longer than the buffers");
	printf("%s\n%s\n", text, json);
	for (int c = 0; c < UJBD_LAT_NR; c++)
		if (mine.count[c])
			printf("this thread, %s: %" PRIu64 " times, %.3f ms at most\n",
			       cause[c], mine.count[c], mine.max_ns[c] / 1e6);

	/* what the text and the JSON must say */
	snprintf(want, sizeof(want), "%" PRIu64 " transactions (", s.ts_tid);
	if (s.ts_tid < 10 || strncmp(text, want, strlen(want)) != 0)
		errx(1, "info text does not start with '%s' (10 durable commits at least)", want);
	snprintf(want, sizeof(want), "{\"transactions\":%" PRIu64 ",", s.ts_tid);
	if (strncmp(json, want, strlen(want)) != 0)
		errx(1, "JSON does not start with '%s'", want);
	if (mine.count[UJBD_LAT_WAIT_COMMIT] < 10)
		errx(1, "this thread waited for %" PRIu64 " commits, want 10 at least",
		     mine.count[UJBD_LAT_WAIT_COMMIT]);
	rc = ujbd_close(j);
	if (rc < 0)
		errx(1, "close: %s", ujbd_strerror(rc));
	return 0;
}

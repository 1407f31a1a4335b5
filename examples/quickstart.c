/*
 * quickstart.c: two blocks written atomically and durably through a jbd2
 * journal, then found in the data file.
 *
 * The program's data lives in a file or a block device (data.img, 8 MiB);
 * the journal is a file of its own (journal.img, 4 MiB, created by the
 * first open). ujbd_write_atomic puts both blocks in one transaction: after
 * a crash at any moment, both are new or both are old.
 *
 *   cc quickstart.c $(pkg-config --cflags --libs ujbd) -o quickstart
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include <ujbd/ujbd.h>

#include "scratch.h"

static char a[4096], b[4096], back[4096];

int main(void)
{
	scratch_open("ujbd-quickstart");
	const char *data = scratch_file("data.img", 8 << 20);
	const char *journal = scratch_path("journal.img");

	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err e;

	ujbd_opts_default(&o);
	o.format = true;                 /* the first open only: a fresh journal */
	o.format_opts.blocks = 1024;     /* 1024 blocks of 4 KiB */
	o.format_opts.blocksize = 4096;
	if (ujbd_open_path(journal, data, NULL, &o, &j, &e) < 0)
		errx(1, "%s", e.msg);

	memset(a, 'A', sizeof(a));
	memset(b, 'B', sizeof(b));
	struct ujbd_block set[2] = { { 7, a }, { 9, b } };
	int rc = ujbd_write_atomic(j, set, 2, UJBD_DURABLE); /* both or neither */
	if (rc < 0)
		errx(1, "write: %s", ujbd_strerror(rc));

	rc = ujbd_close(j);              /* checkpoint: the blocks go home */
	if (rc < 0)
		errx(1, "close: %s", ujbd_strerror(rc));

	scratch_read_block(data, 4096, 7, back);
	if (memcmp(back, a, sizeof(a)) != 0)
		errx(1, "block 7 of '%s' does not hold what was written", data);
	scratch_read_block(data, 4096, 9, back);
	if (memcmp(back, b, sizeof(b)) != 0)
		errx(1, "block 9 of '%s' does not hold what was written", data);
	printf("quickstart: blocks 7 and 9 written in one transaction, found in the data file\n");
	return 0;
}

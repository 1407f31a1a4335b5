/*
 * bench/replay_open.c: recovery at open, for bench/replay. Opens IMAGE (an
 * ext4 image: its internal journal) with ujbd_open_path, which recovers
 * the journal as mount does (the same engine as `ujbd recover`), then
 * closes it cleanly. Built by bench/replay against build/libujbd.a.
 * Exit status: 0 opened and closed, 1 failed (one line on stderr), 2 usage.
 */
#include <stdio.h>

#include "ujbd/ujbd.h"

int main(int argc, char **argv)
{
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err err = { 0 };
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: replay_open IMAGE\n");
		return 2;
	}
	ujbd_opts_default(&o);
	rc = ujbd_open_path(argv[1], NULL, NULL, &o, &j, &err);
	if (rc) {
		fprintf(stderr, "replay_open: cannot open '%s': %s\n", argv[1], err.msg);
		return 1;
	}
	rc = ujbd_close(j);
	if (rc) {
		fprintf(stderr, "replay_open: cannot close '%s': error %d\n", argv[1], rc);
		return 1;
	}
	return 0;
}

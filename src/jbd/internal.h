/*
 * Private helpers shared by the files of src/jbd.
 */
#ifndef UJBD_JBD_INTERNAL_H
#define UJBD_JBD_INTERNAL_H

#include <assert.h>

#include "ujbd/jbd_log.h"

/* Invariants of our own code; never for bytes read from a disk. */
#define ASSERT(x) assert(x)

/* Fill err (if not NULL) and return code. */
int jbd_err_set(struct jbd_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif

/*
 * Private helpers shared by the files of src/jbd.
 */
#ifndef UJBD_JBD_BASE_H
#define UJBD_JBD_BASE_H

#include <assert.h>

#include "ujbd/jbd_log.h"

/* Invariants of our own code; never for bytes read from a disk. */
#define ASSERT(x) assert(x)

#endif

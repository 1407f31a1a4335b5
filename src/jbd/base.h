/*
 * base.h: private helpers shared by every file of src/jbd, offline side
 * (superblock.c, scan.c, recovery.c, logwrite.c) and runtime side (which
 * adds runtime.h) alike; the log-block builder (logblock.c) is declared
 * here because both sides write log blocks through it.
 */
#ifndef UJBD_JBD_BASE_H
#define UJBD_JBD_BASE_H

#include <assert.h>

#include "ujbd/jbd_log.h"

/* Invariants of our own code; never for bytes read from a disk. */
#define ASSERT(x) assert(x)

#endif

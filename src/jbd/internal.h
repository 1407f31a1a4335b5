/*
 * Private helpers shared by the files of src/jbd.
 */
#ifndef UJBD_JBD_INTERNAL_H
#define UJBD_JBD_INTERNAL_H

#include "rt/assert.h"
#include "ujbd/jbd_log.h"

#endif

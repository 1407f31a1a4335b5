/*
 * Private helpers shared by the files of src/jbd.
 */
#ifndef UJBD_JBD_INTERNAL_H
#define UJBD_JBD_INTERNAL_H

#include "rt/assert.h"
#include "ujbd/jbd_log.h"

/*
 * The second tier of checks (the first is ASSERT, src/rt/assert.h): for what
 * a disk, a file or a caller can get wrong. When cond is false, fill err
 * (may be NULL) with code and the printf-style message, and make the calling
 * function return code. One line per check, so a validator reads as the
 * list of its rules.
 */
#define EXPECT(cond, err, code, ...)                                  \
	do {                                                          \
		if (__builtin_expect(!(cond), 0))                     \
			return jbd_err_set((err), (code), __VA_ARGS__); \
	} while (0)

#endif

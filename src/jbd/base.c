/*
 * base.c: what every other file of src/jbd and the layers above it lean
 * on, and nothing more: the one-line error (struct jbd_err) and the map
 * from a journal block number to a byte offset on the journal device
 * (struct jbd_loc). Both are declared in the contract section of
 * include/ujbd/format.h.
 *
 * The one idea: this file depends on nothing else in src/jbd, so the
 * format code, the superblock code and src/ext4 can all use it without
 * depending on one another.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "rt/assert.h"
#include "ujbd/format.h"

int jbd_err_set(struct jbd_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	ASSERT(code < 0 && fmt); /* an error is a negative errno */
	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

int jbd_loc_offset(const struct jbd_loc *loc, uint64_t lblk, uint64_t *off)
{
	uint64_t run;

	return jbd_loc_run(loc, lblk, off, &run);
}

int jbd_loc_run(const struct jbd_loc *loc, uint64_t lblk, uint64_t *off, uint64_t *run)
{
	size_t lo = 0, hi = loc->j_nmap;

	ASSERT(loc->j_blocksize && (loc->j_map || !loc->j_nmap));
	if (lblk >= loc->j_len)
		return -EINVAL;
	/* Binary search for the last extent starting at or before lblk. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (loc->j_map[mid].lblk <= lblk)
			lo = mid + 1;
		else
			hi = mid;
	}
	ASSERT(lo == hi && lo <= loc->j_nmap);
	if (lo == 0)
		return -EINVAL;
	const struct jbd_extent *e = &loc->j_map[lo - 1];
	ASSERT(e->lblk <= lblk);
	if (lblk - e->lblk >= e->len)
		return -EINVAL;
	*off = (e->pblk + (lblk - e->lblk)) * (uint64_t)loc->j_blocksize;
	*run = e->len - (lblk - e->lblk);
	if (*run > loc->j_len - lblk)
		*run = loc->j_len - lblk;
	ASSERT(*run >= 1 && *run <= e->len);
	return 0;
}

bool jbd_loc_on_journal(const struct jbd_loc *loc, uint64_t block)
{
	uint64_t lo = block * loc->j_blocksize, hi = lo + loc->j_blocksize;

	ASSERT(loc->j_map || !loc->j_nmap);
	if (loc->j_data != loc->j_dev)
		return false;
	for (size_t i = 0; i < loc->j_nmap; i++) {
		uint64_t a = loc->j_map[i].pblk * loc->j_blocksize;
		uint64_t b = a + loc->j_map[i].len * loc->j_blocksize;
		if (lo < b && a < hi)
			return true;
	}
	return false;
}

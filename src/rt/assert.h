/*
 * The one assertion of ujbd, shared by every layer (rt, dev, blk, buf, jbd,
 * ext4). Private: nothing outside src/ includes it.
 *
 * Two tiers, and this is the first one. ASSERT(cond) states an invariant of
 * our own code — what a function relies on and what it leaves — and is
 * compiled in whatever NDEBUG says: a broken invariant in a journal means the
 * next block written may be wrong, so stopping is the only safe answer. It
 * reports expression, file and line through the hook an embedding program
 * set with rt_set_assert_hook() (ujbd/rt.h), then aborts.
 *
 * The second tier is not here: whatever a disk, a file or a caller can get
 * wrong is checked with the layer's EXPECT-style macro, which returns an
 * errno instead of aborting. Never ASSERT on bytes read from a disk.
 *
 * Cost: one predictable branch per ASSERT; keep the condition cheap (no
 * loops over lists in a hot path).
 */
#ifndef UJBD_RT_ASSERT_H
#define UJBD_RT_ASSERT_H

#define ASSERT(cond)                                                  \
	do {                                                          \
		if (__builtin_expect(!(cond), 0))                     \
			rt_assert_fail(#cond, __FILE__, __LINE__);    \
	} while (0)

/* Report through the hook (or the default one-line report) and abort(). */
_Noreturn void rt_assert_fail(const char *expr, const char *file, int line);

#endif

/*
 * assert.c: the fatal report of a broken invariant (src/rt/assert.h).
 *
 * This is the one place where the library prints on its own: an assertion
 * that fails means our own code is wrong, nothing can be returned, and the
 * process is about to abort. An embedding program that wants the report in
 * its own log sets a hook; the hook runs first, abort() follows either way.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rt/assert.h"
#include "priv/rt.h"

/* Written by rt_set_assert_hook (before threads start, by contract), read
 * by a failing thread: relaxed atomics keep both cheap and race-free. */
static rt_assert_fn rt_hook_fn;
static void *rt_hook_arg;

/* An assertion that fails inside the hook must not recurse. */
static _Thread_local int rt_in_assert;

void rt_set_assert_hook(rt_assert_fn fn, void *arg)
{
	__atomic_store_n(&rt_hook_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&rt_hook_fn, fn, __ATOMIC_RELEASE);
}

_Noreturn void rt_assert_fail(const char *expr, const char *file, int line)
{
	rt_assert_fn fn = __atomic_load_n(&rt_hook_fn, __ATOMIC_ACQUIRE);

	if (rt_in_assert++ == 0) {
		if (fn) {
			fn(file, line, expr, __atomic_load_n(&rt_hook_arg,
							     __ATOMIC_RELAXED));
		} else {
			fprintf(stderr, "ujbd: assertion failed: %s (%s:%d)\n",
				expr, file, line);
			fflush(stderr);
		}
	}
	abort();
}

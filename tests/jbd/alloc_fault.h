/*
 * alloc_fault.h: fail the Nth allocation of the calling thread, for the
 * tests that check what a function does when memory runs out. Included by
 * one file of a test program: it replaces malloc, calloc, realloc,
 * aligned_alloc and posix_memalign (free stays glibc's, as is theirs
 * underneath). ASan and TSan own the allocator,
 * so under them nothing is replaced and HAVE_ALLOC_FAULTS is 0: the tests
 * skip that part and say so.
 */
#ifndef UJBD_TESTS_ALLOC_FAULT_H
#define UJBD_TESTS_ALLOC_FAULT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HAVE_ALLOC_FAULTS 0
static inline void alloc_fault_arm(long nth)
{
	(void)nth;
}

static inline void alloc_fault_arm_from(long nth, bool sticky, size_t min_bytes)
{
	(void)nth;
	(void)sticky;
	(void)min_bytes;
}

static inline long alloc_fault_disarm(void)
{
	return 0;
}
#else
#define HAVE_ALLOC_FAULTS 1
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

/* Armed on the calling thread only (devices' threads allocate too): the
 * allocation that takes the countdown to 0 fails. */
static __thread long alloc_countdown;
static __thread long alloc_failures;
static __thread bool alloc_sticky, alloc_failing;
static __thread size_t alloc_min_bytes;

static bool alloc_fails(size_t n)
{
	if (n < alloc_min_bytes)
		return false;
	if (alloc_failing || (alloc_countdown > 0 && --alloc_countdown == 0)) {
		alloc_failures++;
		alloc_failing = alloc_sticky;
		return true;
	}
	return false;
}

void *malloc(size_t n)
{
	return alloc_fails(n) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails(n * size) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return alloc_fails(n) ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return alloc_fails(n) ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = alloc_fails(n) ? NULL : __libc_memalign(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* Fail the nth allocation of at least min_bytes from now on this thread
 * (0: none), and with sticky every later one of that size too. */
static inline void alloc_fault_arm_from(long nth, bool sticky, size_t min_bytes)
{
	alloc_failures = 0;
	alloc_min_bytes = min_bytes;
	alloc_countdown = nth;
	alloc_sticky = sticky;
	alloc_failing = false;
}

static inline void alloc_fault_arm(long nth)
{
	alloc_fault_arm_from(nth, false, 0);
}

/* Stop; how many allocations failed since arming. */
static inline long alloc_fault_disarm(void)
{
	alloc_countdown = 0;
	alloc_failing = false;
	alloc_min_bytes = 0;
	return alloc_failures;
}
#endif

#endif

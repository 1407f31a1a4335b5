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

static bool alloc_fails(void)
{
	if (alloc_countdown > 0 && --alloc_countdown == 0) {
		alloc_failures++;
		return true;
	}
	return false;
}

void *malloc(size_t n)
{
	return alloc_fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return alloc_fails() ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = alloc_fails() ? NULL : __libc_memalign(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* Fail the nth allocation from now on this thread (0: none). */
static inline void alloc_fault_arm(long nth)
{
	alloc_failures = 0;
	alloc_countdown = nth;
}

/* Stop; how many allocations failed since arming. */
static inline long alloc_fault_disarm(void)
{
	alloc_countdown = 0;
	return alloc_failures;
}
#endif

#endif

/*
 * A small unit-test harness: each test is a void function; T_CHECK and its
 * typed variants report the first failed check of a test (file, line,
 * expression, values) and leave the test, also from a helper it called
 * (T_RUN's setjmp; on a thread other than the one that runs the tests, a
 * check can only return from its function). t_done() prints
 * "<prog>: N passed, N failed, N skipped" and gives the exit status the
 * runner (tests/run) expects: 0 all passed, 1 a failure or no test run at
 * all, 77 all skipped.
 */
#ifndef UJBD_TESTS_T_H
#define UJBD_TESTS_T_H

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static int t_passed, t_failed, t_skipped, t_cur_failed, t_cur_skipped;
static const char *t_cur_name;
static jmp_buf t_cur_jmp;
static pthread_t t_cur_thread;
static int t_cur_running; /* inside T_RUN: t_cur_jmp is set */

/* Leave the current test: back to its T_RUN when on the tests' thread,
 * else the caller returns from its own function. */
#define T_LEAVE()                                                            \
	do {                                                                 \
		if (t_cur_running && pthread_equal(pthread_self(), t_cur_thread)) \
			longjmp(t_cur_jmp, 1);                               \
		return;                                                      \
	} while (0)

#define T_FAILF(...)                                                         \
	do {                                                                 \
		fprintf(stderr, "  FAIL %s (%s:%d): ", t_cur_name, __FILE__, \
			__LINE__);                                           \
		fprintf(stderr, __VA_ARGS__);                                \
		fputc('\n', stderr);                                         \
		t_cur_failed = 1;                                            \
	} while (0)

#define T_CHECK(cond)                                  \
	do {                                           \
		if (!(cond)) {                         \
			T_FAILF("%s", #cond);          \
			T_LEAVE();                 \
		}                                      \
	} while (0)

#define T_EQ(a, b)                                                           \
	do {                                                                 \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);      \
		if (t_a_ != t_b_) {                                          \
			T_FAILF("%s == %s (%lld != %lld)", #a, #b, t_a_, t_b_); \
			T_LEAVE();                                       \
		}                                                            \
	} while (0)

#define T_EQ_U64(a, b)                                                       \
	do {                                                                 \
		uint64_t t_a_ = (uint64_t)(a), t_b_ = (uint64_t)(b);         \
		if (t_a_ != t_b_) {                                          \
			T_FAILF("%s == %s (0x%" PRIx64 " != 0x%" PRIx64 ")", \
				#a, #b, t_a_, t_b_);                         \
			T_LEAVE();                                       \
		}                                                            \
	} while (0)

#define T_STREQ(a, b)                                                        \
	do {                                                                 \
		const char *t_a_ = (a), *t_b_ = (b);                         \
		if (strcmp(t_a_, t_b_) != 0) {                               \
			T_FAILF("%s == %s (\"%s\" != \"%s\")", #a, #b, t_a_, t_b_); \
			T_LEAVE();                                       \
		}                                                            \
	} while (0)

/* Mark the current test skipped, with the reason, and leave it. */
#define T_SKIP(...)                                                         \
	do {                                                                \
		fprintf(stderr, "  SKIP %s: ", t_cur_name);                 \
		fprintf(stderr, __VA_ARGS__);                               \
		fputc('\n', stderr);                                        \
		t_cur_skipped = 1;                                          \
		T_LEAVE();                                                  \
	} while (0)

#define T_RUN(fn)                                                       \
	do {                                                            \
		t_cur_name = #fn;                                       \
		t_cur_failed = t_cur_skipped = 0;                       \
		t_cur_thread = pthread_self();                          \
		t_cur_running = 1;                                      \
		if (!setjmp(t_cur_jmp))                                 \
			fn();                                           \
		t_cur_running = 0;                                      \
		if (t_cur_failed)                                       \
			t_failed++;                                     \
		else if (t_cur_skipped)                                 \
			t_skipped++;                                    \
		else {                                                  \
			t_passed++;                                     \
			fprintf(stderr, "  ok   %s\n", #fn);            \
		}                                                       \
	} while (0)

/* Run a shell command (printf-style): its exit status, or -1 if it could
 * not run or did not exit normally. For tests that drive e2fsprogs, mount
 * or losetup. */
__attribute__((format(printf, 1, 2)))
static inline int t_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

/* Run a shell command and read what it prints into out (at most n - 1
 * bytes, NUL-terminated): its exit status, or -1 if it could not run or
 * did not exit normally. */
static inline int t_capture(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	size_t got;
	int rc;

	if (!p)
		return -1;
	got = fread(out, 1, n - 1, p);
	out[got] = 0;
	rc = pclose(p);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

/* dir/name in one of four rotating buffers: up to four live at once, as
 * in one call's arguments. */
static inline const char *t_path(const char *dir, const char *name)
{
	static char bufs[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(bufs[i], sizeof(bufs[i]), "%s/%s", dir, name);
	return bufs[i];
}

static inline int t_done(const char *prog)
{
	const char *base = strrchr(prog, '/');
	printf("%s: %d passed, %d failed, %d skipped\n", base ? base + 1 : prog,
	       t_passed, t_failed, t_skipped);
	if (t_failed)
		return 1;
	if (t_passed == 0 && t_skipped == 0) {
		fprintf(stderr, "%s: no test ran\n", base ? base + 1 : prog);
		return 1;
	}
	if (t_passed == 0 && t_skipped > 0)
		return 77;
	return 0;
}

#endif

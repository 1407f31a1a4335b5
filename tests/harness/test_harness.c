/*
 * The harness itself (tests/t.h): a check that fails inside a helper stops
 * the test that called the helper, and a program that ran no test fails.
 * Each case runs in a child process, whose counters are its own.
 */
#include <unistd.h>

#include "../t.h"

static int reached; /* the child's: did the test go on after its helper failed? */

static void helper_that_fails(void)
{
	T_CHECK(1 == 2);
}

static void test_inner_helper_fails(void)
{
	helper_that_fails();
	reached = 1;
}

/* Run body in a child; its exit status, or -1. */
static int in_child(void (*body)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		t_passed = t_failed = t_skipped = 0; /* the child counts its own */
		body();
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void child_helper_fails(void)
{
	T_RUN(test_inner_helper_fails);
	_exit(reached ? 10 : t_failed == 1 ? 11 : 12);
}

static void child_no_test(void)
{
	_exit(t_done("no-test"));
}

static void test_failed_helper_stops_the_test(void)
{
	T_EQ(in_child(child_helper_fails), 11);
}

static void test_no_test_run_fails(void)
{
	T_EQ(in_child(child_no_test), 1);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_failed_helper_stops_the_test);
	T_RUN(test_no_test_run_fails);
	return t_done(argv[0]);
}

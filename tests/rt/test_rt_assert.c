/*
 * The one assertion (src/rt/assert.h) and its hook: a failed ASSERT calls
 * the hook an embedding program set with file, line and expression, then
 * aborts; without a hook it prints one line to stderr and aborts. Each case
 * trips the assertion in a forked child (core dumps off) and checks, in the
 * parent, what came through a pipe and that the child died of SIGABRT.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/assert.h"
#include "t.h"
#include "priv/rt.h"

#define REPORT_MAX 512

static int report_fd = -1;

/* The hook writes "file|line|expr|arg" to the pipe and returns: the
 * library must still abort. */
static void pipe_hook(const char *file, int line, const char *expr, void *arg)
{
	char buf[REPORT_MAX];
	int n = snprintf(buf, sizeof(buf), "%s|%d|%s|%s", file, line, expr,
			 (const char *)arg);

	if (n > 0 && write(report_fd, buf, (size_t)n) < 0)
		_exit(3);
}

/* The ASSERT below sits on the line after this declaration's. */
static const int trip_line = __LINE__ + 1;
static void trip_macro(void) { volatile int two = 2; ASSERT(two + two == 5); }
/* A documented misuse: unlocking a mutex the caller does not hold. */
static void trip_unlock(void)
{
	rt_mutex m;

	if (rt_mutex_init(&m, "t") != 0)
		_exit(4);
	rt_mutex_unlock(&m);
}

static void trip_unlock_sim(void *arg)
{
	trip_unlock();
}

static void trip_unlock_in_sim(void)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = 1 };
	rt_world *w;

	if (rt_world_new(&o, &w) != 0)
		_exit(6);
	rt_world_run(w, "tripper", trip_unlock_sim, NULL);
}

/* Fork; in the child, optionally install the hook (else send stderr into
 * the pipe), run fn, and exit 0 if it returned. The parent reads what came
 * through the pipe into out and returns the wait status. */
static int run_child(void (*fn)(void), bool hook, char *out, size_t cap)
{
	struct rlimit no_core = { 0, 0 };
	int p[2], status = -1;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		setrlimit(RLIMIT_CORE, &no_core);
		report_fd = p[1];
		if (hook)
			rt_set_assert_hook(pipe_hook, "cookie");
		else if (dup2(p[1], STDERR_FILENO) < 0)
			_exit(5);
		fn();
		_exit(0);
	}
	close(p[1]);
	while (pid > 0 && len + 1 < cap &&
	       (n = read(p[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static bool aborted(int status)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void test_hook_gets_file_line_expr(void)
{
	char out[REPORT_MAX], want[REPORT_MAX];
	int status = run_child(trip_macro, true, out, sizeof(out));

	T_CHECK(aborted(status));
	snprintf(want, sizeof(want), "%s|%d|two + two == 5|cookie", __FILE__,
		 trip_line);
	T_STREQ(out, want);
}

static void test_default_report(void)
{
	char out[REPORT_MAX], want[REPORT_MAX];
	int status = run_child(trip_macro, false, out, sizeof(out));

	T_CHECK(aborted(status));
	snprintf(want, sizeof(want), "ujbd: assertion failed: two + two == 5 (%s:%d)\n",
		 __FILE__, trip_line);
	T_STREQ(out, want);
}

/* A misuse of the library reaches the same hook, from the library's file. */
static void check_unlock_report(void (*fn)(void))
{
	char out[REPORT_MAX];
	const char *file_end = "src/rt/thread.c|";
	char *bar;
	int status = run_child(fn, true, out, sizeof(out));

	T_CHECK(aborted(status));
	bar = strchr(out, '|');
	T_CHECK(bar != NULL);
	T_CHECK((size_t)(bar + 1 - out) >= strlen(file_end));
	T_CHECK(strncmp(bar + 1 - strlen(file_end), file_end, strlen(file_end)) == 0);
	T_CHECK(atoi(bar + 1) > 0);
	T_CHECK(strstr(out, "|rt_mutex_held(m)|cookie") != NULL);
}

static void test_misuse_real(void)
{
	check_unlock_report(trip_unlock);
}

static void test_misuse_sim(void)
{
	check_unlock_report(trip_unlock_in_sim);
}

/* rt_mutex_held answers for the caller only, through a condition wait too. */
static void test_mutex_held(void)
{
	rt_mutex m;
	rt_cond c;

	T_EQ(rt_mutex_init(&m, "m"), 0);
	T_EQ(rt_cond_init(&c, "c"), 0);
	T_CHECK(!rt_mutex_held(&m));
	rt_mutex_lock(&m);
	T_CHECK(rt_mutex_held(&m));
	T_EQ(rt_cond_timedwait(&c, &m, rt_now_ns() + RT_NS_PER_MS), -ETIMEDOUT);
	T_CHECK(rt_mutex_held(&m));
	rt_mutex_unlock(&m);
	T_CHECK(!rt_mutex_held(&m));
	T_EQ(rt_mutex_trylock(&m), 0);
	T_CHECK(rt_mutex_held(&m));
	rt_mutex_unlock(&m);
	rt_cond_release(&c);
	rt_mutex_release(&m);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_hook_gets_file_line_expr);
	T_RUN(test_default_report);
	T_RUN(test_misuse_real);
	T_RUN(test_misuse_sim);
	T_RUN(test_mutex_held);
	return t_done(argv[0]);
}

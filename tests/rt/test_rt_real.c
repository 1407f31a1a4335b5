/*
 * The runtime's real world: threads, names and pids, mutexes, condition
 * variables with timed waits, I/O priority (through to the kernel), parsing,
 * the PRNG and rt_world_run on a real world.
 */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>

#include "t.h"
#include "priv/rt.h"

uint64_t rt_splitmix64(uint64_t *x); /* src/rt/prng.c, not public */

/* ---- threads and mutexes ---------------------------------------------- */

struct counter {
	rt_mutex m;
	long n;
};

static void count_fn(void *arg)
{
	struct counter *c = arg;

	for (int i = 0; i < 20000; i++) {
		rt_mutex_lock(&c->m);
		c->n++;
		rt_mutex_unlock(&c->m);
	}
}

static void test_threads_mutex(void)
{
	struct counter c = { .n = 0 };
	rt_thread *t[4];

	T_EQ(rt_mutex_init(&c.m, "counter"), 0);
	for (int i = 0; i < 4; i++)
		T_EQ(rt_thread_create(&t[i], "counter", count_fn, &c), 0);
	for (int i = 0; i < 4; i++)
		T_EQ(rt_thread_join(t[i]), 0);
	T_EQ(c.n, 80000);
	T_EQ(rt_mutex_trylock(&c.m), 0);
	rt_mutex_unlock(&c.m);
	rt_mutex_release(&c.m);
}

struct held {
	rt_mutex *m;
	int rc;
};

static void trylock_fn(void *arg)
{
	struct held *h = arg;

	h->rc = rt_mutex_trylock(h->m);
}

static void test_trylock_busy(void)
{
	rt_mutex m;
	rt_thread *t;
	struct held h = { .m = &m, .rc = 1 };

	T_EQ(rt_mutex_init(&m, "busy"), 0);
	rt_mutex_lock(&m);
	T_EQ(rt_thread_create(&t, "try", trylock_fn, &h), 0);
	T_EQ(rt_thread_join(t), 0);
	rt_mutex_unlock(&m);
	T_EQ(h.rc, -EBUSY);
	rt_mutex_release(&m);
}

/* ---- names and pids --------------------------------------------------- */

struct ident {
	char name[32];
	char comm[32];
	int pid;
	int tid;
	rt_thread *self;
};

static void ident_fn(void *arg)
{
	struct ident *id = arg;

	snprintf(id->name, sizeof(id->name), "%s", rt_self_name());
	pthread_getname_np(pthread_self(), id->comm, sizeof(id->comm));
	id->pid = rt_self_pid();
	id->tid = (int)gettid();
	id->self = rt_self();
}

static void test_names_pids(void)
{
	struct ident id;
	rt_thread *t;

	memset(&id, 0, sizeof(id));
	T_CHECK(rt_self() == NULL);
	T_STREQ(rt_self_name(), "main");
	T_EQ(rt_self_pid(), gettid());
	T_EQ(rt_thread_create(&t, "a-very-long-thread-name", ident_fn, &id), 0);
	T_STREQ(rt_thread_name(t), "a-very-long-thr");
	int pid = rt_thread_pid(t);
	T_EQ(rt_thread_join(t), 0);
	T_STREQ(id.name, "a-very-long-thr");
	T_STREQ(id.comm, "a-very-long-thr");
	T_EQ(id.pid, id.tid);
	T_EQ(pid, id.tid);
	T_CHECK(id.pid != gettid());
	T_CHECK(id.self == t);
}

/* ---- condition variables ---------------------------------------------- */

struct mailbox {
	rt_mutex m;
	rt_cond c;
	int full;
};

static void post_fn(void *arg)
{
	struct mailbox *mb = arg;

	rt_sleep_ns(20 * RT_NS_PER_MS);
	rt_mutex_lock(&mb->m);
	mb->full = 1;
	rt_cond_signal(&mb->c);
	rt_mutex_unlock(&mb->m);
}

static void test_timedwait_timeout(void)
{
	struct mailbox mb = { .full = 0 };
	uint64_t start, end;
	int rc;

	T_EQ(rt_mutex_init(&mb.m, "mb"), 0);
	T_EQ(rt_cond_init(&mb.c, "mb"), 0);
	rt_mutex_lock(&mb.m);
	start = rt_now_ns();
	do
		rc = rt_cond_timedwait(&mb.c, &mb.m, start + 30 * RT_NS_PER_MS);
	while (rc == 0);
	end = rt_now_ns();
	rt_mutex_unlock(&mb.m);
	T_EQ(rc, -ETIMEDOUT);
	T_CHECK(end - start >= 30 * RT_NS_PER_MS);
	T_CHECK(end - start < 2 * RT_NS_PER_S);
	rt_cond_release(&mb.c);
	rt_mutex_release(&mb.m);
}

static void test_timedwait_signal(void)
{
	struct mailbox mb = { .full = 0 };
	uint64_t start, end;
	rt_thread *t;
	int rc = 0;

	T_EQ(rt_mutex_init(&mb.m, "mb"), 0);
	T_EQ(rt_cond_init(&mb.c, "mb"), 0);
	start = rt_now_ns();
	T_EQ(rt_thread_create(&t, "poster", post_fn, &mb), 0);
	rt_mutex_lock(&mb.m);
	while (!mb.full && rc == 0)
		rc = rt_cond_timedwait(&mb.c, &mb.m, start + 10 * RT_NS_PER_S);
	end = rt_now_ns();
	rt_mutex_unlock(&mb.m);
	T_EQ(rt_thread_join(t), 0);
	T_EQ(rc, 0);
	T_EQ(mb.full, 1);
	T_CHECK(end - start >= 20 * RT_NS_PER_MS);
	T_CHECK(end - start < 5 * RT_NS_PER_S);
	rt_cond_release(&mb.c);
	rt_mutex_release(&mb.m);
}

static void test_sleep(void)
{
	uint64_t start = rt_now_ns();

	rt_sleep_ns(15 * RT_NS_PER_MS);
	T_CHECK(rt_now_ns() - start >= 15 * RT_NS_PER_MS);
	start = rt_now_ns();
	rt_sleep_until(start + 5 * RT_NS_PER_MS);
	T_CHECK(rt_now_ns() >= start + 5 * RT_NS_PER_MS);
	rt_cpu(RT_NS_PER_S); /* a no-op in the real world */
	T_CHECK(rt_now_ns() - start < RT_NS_PER_S);
}

/* ---- I/O priority ----------------------------------------------------- */

static long kernel_ioprio(void)
{
	return syscall(SYS_ioprio_get, 1, (int)gettid());
}

struct prio_out {
	uint16_t inherited;
	long kernel;
};

static void prio_fn(void *arg)
{
	struct prio_out *o = arg;

	o->inherited = rt_ioprio_get();
	o->kernel = kernel_ioprio();
}

static void prio_thread_fn(void *arg)
{
	int *rcs = arg;
	char buf[16];

	(void)buf;
	rcs[0] = rt_ioprio_get() == RT_IOPRIO_DEFAULT;
	rcs[1] = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3));
	rcs[2] = rt_ioprio_get();
	rcs[3] = (int)kernel_ioprio();
	rcs[4] = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2));
	rcs[5] = rt_ioprio_get();
	rcs[6] = (int)kernel_ioprio();
	rcs[7] = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 8));
	rcs[8] = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_NONE, 3));
	rcs[9] = rt_ioprio_get();
	rcs[10] = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0));
	struct prio_out o = { 0, 0 };
	rt_thread *t;
	if (rt_thread_create(&t, "child", prio_fn, &o) == 0 && rt_thread_join(t) == 0) {
		rcs[11] = o.inherited;
		rcs[12] = (int)o.kernel;
	}
}

static void test_ioprio(void)
{
	int r[13];
	rt_thread *t;

	memset(r, 0, sizeof(r));
	T_EQ(rt_thread_create(&t, "prio", prio_thread_fn, r), 0);
	T_EQ(rt_thread_join(t), 0);
	T_EQ(r[0], 1);
	if (r[1] == -ENOSYS || r[1] == -EPERM)
		T_SKIP("the kernel refuses ioprio_set even for be:3 (%d)", r[1]);
	T_EQ(r[1], 0);
	T_EQ(r[2], RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3));
	T_EQ(r[3], RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3));
	/* RT needs CAP_SYS_NICE: either it worked or EPERM is reported, and
	 * the value is recorded either way. */
	T_CHECK(r[4] == 0 || r[4] == -EPERM);
	T_EQ(r[5], RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2));
	if (r[4] == 0)
		T_EQ(r[6], RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2));
	else
		T_EQ(r[6], RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3));
	T_EQ(r[7], -EINVAL);
	T_EQ(r[8], -EINVAL);
	T_EQ(r[9], RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2));
	T_EQ(r[10], 0);
	T_EQ(r[11], RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0));
	T_EQ(r[12], RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0));
	fprintf(stderr, "    rt:2 by ioprio_set: %s\n", r[4] ? strerror(-r[4]) : "accepted");
}

/*
 * Without CAP_SYS_NICE (and CAP_SYS_ADMIN) the kernel refuses the RT class:
 * rt_ioprio_set reports -EPERM and still records the value. Dropped in a
 * forked child so the rest of the tests keep their capabilities.
 */
static int eperm_child(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	uint16_t rt2 = RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2);

	if (syscall(SYS_capget, &hdr, data))
		return 10;
	/* Both are below 32, so they live in data[0]; effective is what the
	 * kernel's capable() looks at. */
	data[0].effective &= ~((1u << CAP_SYS_NICE) | (1u << CAP_SYS_ADMIN));
	if (syscall(SYS_capset, &hdr, data))
		return 10;
	if (rt_ioprio_set(rt2) != -EPERM)
		return 1;
	if (rt_ioprio_get() != rt2)
		return 2;
	if (kernel_ioprio() == rt2)
		return 3;
	return 0;
}

static void test_ioprio_eperm(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	T_CHECK(pid >= 0);
	if (pid == 0)
		_exit(eperm_child());
	T_EQ(waitpid(pid, &status, 0), pid);
	T_CHECK(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10)
		T_SKIP("cannot drop CAP_SYS_NICE here (capget/capset refused)");
	T_EQ(WEXITSTATUS(status), 0);
}

static void test_ioprio_parse_str(void)
{
	static const struct {
		const char *in;
		int rc;
		uint16_t prio;
		const char *out;
	} cases[] = {
		{ "rt:4", 0, RT_IOPRIO(1, 4), "rt:4" },
		{ "be:0", 0, RT_IOPRIO(2, 0), "be:0" },
		{ "be:7", 0, RT_IOPRIO(2, 7), "be:7" },
		{ "idle", 0, RT_IOPRIO(3, 0), "idle" },
		{ "idle:7", 0, RT_IOPRIO(3, 7), "idle:7" },
		{ "none", 0, RT_IOPRIO_DEFAULT, "none" },
		{ "BE:3", 0, RT_IOPRIO(2, 3), "be:3" },
		{ "be", 0, RT_IOPRIO(2, 4), "be:4" },
		{ "be:8", -EINVAL, 0, NULL },
		{ "be:", -EINVAL, 0, NULL },
		{ "be:12", -EINVAL, 0, NULL },
		{ "rt4", -EINVAL, 0, NULL },
		{ "", -EINVAL, 0, NULL },
		{ "none:3", -EINVAL, 0, NULL },
		{ "fast:1", -EINVAL, 0, NULL },
	};
	char buf[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint16_t p = 0xffff;

		T_EQ(rt_ioprio_parse(cases[i].in, &p), cases[i].rc);
		if (cases[i].rc)
			continue;
		T_EQ(p, cases[i].prio);
		T_STREQ(rt_ioprio_str(p, buf, 8), cases[i].out);
	}
	T_EQ(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4), 0x4004);
	T_EQ(RT_IOPRIO_CLASS(0x2003), RT_IOPRIO_CLASS_RT);
	T_EQ(RT_IOPRIO_LEVEL(0x2003), 3);
}

/* ---- PRNG ------------------------------------------------------------- */

static void test_prng(void)
{
	struct rt_prng p, q;
	uint64_t x = 0;
	unsigned hist[10] = { 0 };

	/* The published first output of splitmix64 from state 0. */
	T_EQ_U64(rt_splitmix64(&x), 0xe220a8397b1dcdafull);
	/* xoshiro256** over splitmix64(0): pins the stream across releases. */
	rt_prng_init(&p, 0);
	T_EQ_U64(rt_prng_next(&p), 0x99ec5f36cb75f2b4ull);
	T_EQ_U64(rt_prng_next(&p), 0xbf6e1f784956452aull);
	rt_prng_init(&p, 12345);
	T_EQ_U64(rt_prng_next(&p), 0xbe6a36374160d49bull);
	rt_prng_init(&p, 7);
	rt_prng_init(&q, 7);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rt_prng_below(&p, 10);

		T_CHECK(v < 10);
		T_EQ_U64(v, rt_prng_below(&q, 10));
		hist[v]++;
	}
	for (int i = 0; i < 10; i++)
		T_CHECK(hist[i] > 9000 && hist[i] < 11000);
	T_EQ_U64(rt_prng_below(&p, 1), 0);
	T_CHECK(rt_rand_below(5) < 5);
}

/* ---- rt_world_run on a real world ------------------------------------- */

struct runstate {
	rt_world *w;
	int ok_world;
	struct counter c;
};

static void leaf_fn(void *arg)
{
	struct runstate *rs = arg;

	rt_sleep_ns(RT_NS_PER_MS);
	count_fn(&rs->c);
}

static void root_fn(void *arg)
{
	struct runstate *rs = arg;
	rt_thread *t;

	rs->ok_world = rt_world_current() == rs->w;
	/* Never joined: rt_world_run waits for them and reaps them. */
	for (int i = 0; i < 3; i++)
		if (rt_thread_create(&t, "leaf", leaf_fn, rs))
			rs->ok_world = 0;
	rt_event("root done");
}

static void test_world_run_real(void)
{
	struct rt_world_opts o = { .kind = RT_WORLD_REAL, .seed = 1 };
	struct runstate rs;
	uint64_t h0;

	memset(&rs, 0, sizeof(rs));
	T_EQ(rt_world_new(&o, &rs.w), 0);
	T_EQ(rt_world_kind(rs.w), RT_WORLD_REAL);
	T_EQ(rt_mutex_init(&rs.c.m, "c"), 0);
	h0 = rt_world_hash(rs.w);
	T_EQ(rt_world_run(rs.w, "root", root_fn, &rs), 0);
	T_EQ(rs.ok_world, 1);
	T_EQ(rs.c.n, 60000);
	T_CHECK(rt_world_hash(rs.w) != h0);
	T_EQ_U64(rt_world_switches(rs.w), 0);
	T_EQ(rt_world_run(rs.w, "again", leaf_fn, &rs), 0);
	T_EQ(rs.c.n, 80000);
	rt_world_free(rs.w);
	rt_mutex_release(&rs.c.m);
	T_CHECK(rt_world_current() != NULL);
	T_EQ(rt_world_kind(rt_world_current()), RT_WORLD_REAL);
	struct rt_world_opts bad = { .kind = 7 };
	rt_world *w2;
	T_EQ(rt_world_new(&bad, &w2), -EINVAL);
}

/* ---- thread exit callbacks ------------------------------------------------ */

static void leaf_fn_noop(void *arg)
{
	(void)arg;
}

struct exits {
	int order[4];    /* which callback ran, in order */
	int n;
	int seen[2];     /* per thread */
};

static struct exits *exits_of;

static void exit_a(void *arg)
{
	exits_of->seen[(int)(intptr_t)arg]++;
	exits_of->order[exits_of->n++] = 1;
}

static void exit_b(void *arg)
{
	exits_of->seen[(int)(intptr_t)arg]++;
	exits_of->order[exits_of->n++] = 2;
}

static void exit_registrar(void *arg)
{
	rt_at_thread_exit(exit_a, arg);
	rt_at_thread_exit(exit_b, arg);
}

static void exit_world(void *arg)
{
	rt_thread *t;

	(void)arg;
	if (rt_thread_create(&t, "exiter", exit_registrar, (void *)(intptr_t)1) == 0)
		rt_thread_join(t);
}

/* Callbacks run when the thread ends, newest first, in either world; a
 * thread that registers none runs none. */
static void test_at_thread_exit(void)
{
	struct exits e = { { 0 }, 0, { 0 } };
	rt_thread *t;
	rt_world *w;
	struct rt_world_opts so = { .kind = RT_WORLD_SIM, .seed = 3 };

	exits_of = &e;
	T_EQ(rt_thread_create(&t, "exiter", exit_registrar, (void *)(intptr_t)0), 0);
	T_EQ(rt_thread_join(t), 0);
	T_EQ(e.n, 2);
	T_EQ(e.order[0], 2);
	T_EQ(e.order[1], 1);
	T_EQ(e.seen[0], 2);
	T_EQ(rt_world_new(&so, &w), 0);
	T_EQ(rt_world_run(w, "main", exit_world, NULL), 0);
	rt_world_free(w);
	T_EQ(e.n, 4);
	T_EQ(e.seen[1], 2);
	T_EQ(rt_thread_create(&t, "quiet", leaf_fn_noop, NULL), 0);
	T_EQ(rt_thread_join(t), 0);
	T_EQ(e.n, 4);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_at_thread_exit);
	T_RUN(test_threads_mutex);
	T_RUN(test_trylock_busy);
	T_RUN(test_names_pids);
	T_RUN(test_timedwait_timeout);
	T_RUN(test_timedwait_signal);
	T_RUN(test_sleep);
	T_RUN(test_ioprio);
	T_RUN(test_ioprio_eperm);
	T_RUN(test_ioprio_parse_str);
	T_RUN(test_prng);
	T_RUN(test_world_run_real);
	return t_done(argv[0]);
}

/*
 * The runtime's sim world: virtual time, timed waits that expire exactly at
 * their deadline, mutex and condition variable semantics under the baton,
 * the CPU model, determinism (the event-log hash as a function of the seed)
 * and the deadlock report (in a forked child that must die by SIGABRT).
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "priv/rt.h"

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static rt_world *sim_world(uint64_t seed, unsigned ncpus)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = seed, .ncpus = ncpus };
	rt_world *w = NULL;

	if (rt_world_new(&o, &w))
		return NULL;
	return w;
}

/* ---- virtual time ------------------------------------------------------ */

struct sleeper {
	uint64_t t0, t1, t2;
	int kind_sim;
	int pid;
	char name[RT_NAME_MAX];
};

static void sleeper_fn(void *arg)
{
	struct sleeper *s = arg;

	s->kind_sim = rt_world_kind(rt_world_current()) == RT_WORLD_SIM;
	s->pid = rt_self_pid();
	snprintf(s->name, sizeof(s->name), "%s", rt_self_name());
	s->t0 = rt_now_ns();
	rt_sleep_ns(3 * RT_NS_PER_S);
	s->t1 = rt_now_ns();
	rt_sleep_until(s->t1 + 1234);
	rt_sleep_until(0); /* in the past: returns at once */
	rt_sleep_ns(0);
	s->t2 = rt_now_ns();
}

static void test_sleep_jumps_exactly(void)
{
	rt_world *w = sim_world(1, 0);
	struct sleeper s;
	uint64_t start = wall_ns();

	memset(&s, 0, sizeof(s));
	T_CHECK(w != NULL);
	T_EQ(rt_world_kind(w), RT_WORLD_SIM);
	T_EQ(rt_world_run(w, "a-sleeper-with-a-long-name", sleeper_fn, &s), 0);
	T_EQ(s.kind_sim, 1);
	T_EQ(s.pid, 1000);
	T_STREQ(s.name, "a-sleeper-with-");
	T_EQ_U64(s.t0, 0);
	T_EQ_U64(s.t1, 3 * RT_NS_PER_S);
	T_EQ_U64(s.t2, 3 * RT_NS_PER_S + 1234);
	T_CHECK(wall_ns() - start < RT_NS_PER_S / 2);
	/* A second run carries on from the same virtual time; pids go on. */
	T_EQ(rt_world_run(w, "again", sleeper_fn, &s), 0);
	T_EQ_U64(s.t0, 3 * RT_NS_PER_S + 1234);
	T_EQ_U64(s.t2, 6 * RT_NS_PER_S + 2468);
	T_EQ(s.pid, 1001);
	rt_world_free(w);
}

/* ---- timed waits ------------------------------------------------------- */

struct tw {
	rt_mutex m;
	rt_cond c;
	int flag;
	int rc_timeout, rc_signal, rc_past;
	uint64_t t_timeout, t_signal;
};

static void tw_signaller(void *arg)
{
	struct tw *s = arg;

	rt_sleep_ns(3 * RT_NS_PER_MS);
	rt_mutex_lock(&s->m);
	s->flag = 1;
	rt_cond_signal(&s->c);
	rt_mutex_unlock(&s->m);
}

static void tw_main(void *arg)
{
	struct tw *s = arg;
	rt_thread *t;

	rt_mutex_lock(&s->m);
	s->rc_timeout = rt_cond_timedwait(&s->c, &s->m, 5 * RT_NS_PER_MS);
	s->t_timeout = rt_now_ns();
	s->rc_past = rt_cond_timedwait(&s->c, &s->m, 1);
	rt_mutex_unlock(&s->m);

	if (rt_thread_create(&t, "signaller", tw_signaller, s))
		return;
	rt_mutex_lock(&s->m);
	s->rc_signal = 0;
	while (!s->flag && s->rc_signal == 0)
		s->rc_signal = rt_cond_timedwait(&s->c, &s->m, rt_now_ns() + 10 * RT_NS_PER_MS);
	s->t_signal = rt_now_ns();
	rt_mutex_unlock(&s->m);
	rt_thread_join(t);
}

static void test_timedwait_exact(void)
{
	rt_world *w = sim_world(2, 0);
	struct tw s;

	memset(&s, 0, sizeof(s));
	T_CHECK(w != NULL);
	/* Initialised by main (a foreign thread), used inside the sim run. */
	T_EQ(rt_mutex_init(&s.m, "tw"), 0);
	T_EQ(rt_cond_init(&s.c, "tw"), 0);
	T_EQ(rt_world_run(w, "waiter", tw_main, &s), 0);
	T_EQ(s.rc_timeout, -ETIMEDOUT);
	T_EQ_U64(s.t_timeout, 5 * RT_NS_PER_MS);
	T_EQ(s.rc_past, -ETIMEDOUT);
	T_EQ(s.rc_signal, 0);
	T_EQ(s.flag, 1);
	T_EQ_U64(s.t_signal, 8 * RT_NS_PER_MS);
	rt_cond_release(&s.c);
	rt_mutex_release(&s.m);
	rt_world_free(w);
}

/* ---- producer / consumer ---------------------------------------------- */

#define PC_SLOTS 4
#define PC_ITEMS 500

struct pc {
	rt_mutex m;
	rt_cond not_full, not_empty;
	int buf[PC_SLOTS];
	unsigned head, count;
	int producers_left;
	long sum, consumed;
	int max_count;
};

static void producer(void *arg)
{
	struct pc *p = arg;

	for (int i = 1; i <= PC_ITEMS; i++) {
		if (rt_rand_below(4) == 0)
			rt_sleep_ns(rt_rand_below(1000));
		rt_mutex_lock(&p->m);
		while (p->count == PC_SLOTS)
			rt_cond_wait(&p->not_full, &p->m);
		p->buf[(p->head + p->count++) % PC_SLOTS] = i;
		if ((int)p->count > p->max_count)
			p->max_count = (int)p->count;
		rt_cond_signal(&p->not_empty);
		rt_mutex_unlock(&p->m);
	}
	rt_mutex_lock(&p->m);
	p->producers_left--;
	rt_cond_broadcast(&p->not_empty);
	rt_mutex_unlock(&p->m);
}

static void consumer(void *arg)
{
	struct pc *p = arg;

	for (;;) {
		rt_mutex_lock(&p->m);
		while (p->count == 0 && p->producers_left > 0)
			rt_cond_wait(&p->not_empty, &p->m);
		if (p->count == 0) {
			rt_mutex_unlock(&p->m);
			return;
		}
		p->sum += p->buf[p->head];
		p->head = (p->head + 1) % PC_SLOTS;
		p->count--;
		p->consumed++;
		rt_cond_signal(&p->not_full);
		rt_mutex_unlock(&p->m);
		rt_cpu(rt_rand_below(500) + 1);
	}
}

static void pc_main(void *arg)
{
	struct pc *p = arg;
	rt_thread *t[5];

	p->producers_left = 2;
	rt_thread_create(&t[0], "prod0", producer, p);
	rt_thread_create(&t[1], "prod1", producer, p);
	rt_thread_create(&t[2], "cons0", consumer, p);
	rt_thread_create(&t[3], "cons1", consumer, p);
	rt_thread_create(&t[4], "cons2", consumer, p);
	for (int i = 0; i < 5; i++)
		rt_thread_join(t[i]);
}

static void test_producer_consumer(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		rt_world *w = sim_world(seed, 2);
		struct pc p;

		memset(&p, 0, sizeof(p));
		T_CHECK(w != NULL);
		T_EQ(rt_mutex_init(&p.m, "pc"), 0);
		T_EQ(rt_cond_init(&p.not_full, "not_full"), 0);
		T_EQ(rt_cond_init(&p.not_empty, "not_empty"), 0);
		T_EQ(rt_world_run(w, "pc", pc_main, &p), 0);
		T_EQ(p.consumed, 2 * PC_ITEMS);
		T_EQ(p.sum, 2L * PC_ITEMS * (PC_ITEMS + 1) / 2);
		T_EQ(p.count, 0);
		T_CHECK(p.max_count <= PC_SLOTS && p.max_count > 0);
		T_CHECK(rt_world_switches(w) > 100);
		rt_cond_release(&p.not_full);
		rt_cond_release(&p.not_empty);
		rt_mutex_release(&p.m);
		rt_world_free(w);
	}
}

/* ---- the CPU model ----------------------------------------------------- */

struct cpu_run {
	uint64_t done[3];
};

struct cpu_arg {
	struct cpu_run *r;
	int i;
};

static void cpu_fn(void *arg)
{
	struct cpu_arg *a = arg;

	rt_cpu(10 * RT_NS_PER_MS);
	a->r->done[a->i] = rt_now_ns();
}

static void cpu_main(void *arg)
{
	struct cpu_run *r = arg;
	struct cpu_arg a[3];
	rt_thread *t[3];

	for (int i = 0; i < 3; i++) {
		a[i] = (struct cpu_arg){ r, i };
		rt_thread_create(&t[i], "cpu", cpu_fn, &a[i]);
	}
	for (int i = 0; i < 3; i++)
		rt_thread_join(t[i]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_cpu_model(void)
{
	for (unsigned ncpus = 1; ncpus <= 3; ncpus++) {
		static const uint64_t want[4][3] = {
			{ 0 }, { 10, 20, 30 }, { 10, 10, 20 }, { 10, 10, 10 },
		};
		rt_world *w = sim_world(9, ncpus);
		struct cpu_run r;

		memset(&r, 0, sizeof(r));
		T_CHECK(w != NULL);
		T_EQ(rt_world_run(w, "cpu-main", cpu_main, &r), 0);
		qsort(r.done, 3, sizeof(r.done[0]), cmp_u64);
		for (int i = 0; i < 3; i++)
			T_EQ_U64(r.done[i], want[ncpus][i] * RT_NS_PER_MS);
		rt_world_free(w);
	}
}

/* ---- the CFS model (struct rt_sched) ----------------------------------- */

static rt_world *cfs_world(uint64_t seed, unsigned ncpus, uint64_t wakeup_gran_ns)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = seed, .ncpus = ncpus };
	rt_world *w = NULL;

	o.sched.kind = RT_SCHED_CFS;
	o.sched.wakeup_gran_ns = wakeup_gran_ns;
	if (rt_world_new(&o, &w))
		return NULL;
	return w;
}

/* Two hogs of 100 ms on one CPU share it in slices: both end near 200 ms
 * (FIFO would end one at 100), the last exactly at 200. */
static void hog_fn(void *arg)
{
	uint64_t *done = arg;

	rt_cpu(100 * RT_NS_PER_MS);
	*done = rt_now_ns();
}

static void hogs_main(void *arg)
{
	uint64_t *done = arg;
	rt_thread *t[2];

	for (int i = 0; i < 2; i++)
		T_EQ(rt_thread_create(&t[i], "hog", hog_fn, &done[i]), 0);
	for (int i = 0; i < 2; i++)
		rt_thread_join(t[i]);
}

static void test_cfs_time_sharing(void)
{
	uint64_t done[2] = { 0, 0 };
	struct rt_cpu_stats st;
	rt_world *w = cfs_world(3, 1, 0);

	T_CHECK(w != NULL);
	T_EQ(rt_world_run(w, "main", hogs_main, done), 0);
	qsort(done, 2, sizeof(done[0]), cmp_u64);
	/* slices of latency / 2 = 3 ms: the first ends within the latency and a
	 * slice of the last (the second started a slice behind: START_DEBIT) */
	T_CHECK(done[0] >= 190 * RT_NS_PER_MS);
	T_EQ_U64(done[1], 200 * RT_NS_PER_MS);
	rt_world_cpu_stats(w, &st);
	T_EQ_U64(st.busy_ns, 200 * RT_NS_PER_MS);
	T_CHECK(st.preemptions >= 30); /* about 200 / 3 slice ends */
	T_CHECK(st.run_delay_ns > 0);
	rt_world_free(w);
}

/* A sleeper beside a 1-s hog on one CPU: woken every 10 ms it preempts the
 * hog at once (placed latency / 2 behind it), unless the wakeup granularity
 * forbids it: then it waits for the hog's slice to end. */
struct sleepy {
	uint64_t max_delay, total_delay, hog_done;
	int wakes;
};

static void sleepy_hog(void *arg)
{
	struct sleepy *s = arg;

	rt_cpu(RT_NS_PER_S);
	s->hog_done = rt_now_ns();
}

static void sleepy_fn(void *arg)
{
	struct sleepy *s = arg;

	rt_task();
	for (int i = 0; i < 50; i++) {
		uint64_t due = rt_now_ns() + 10 * RT_NS_PER_MS, d;

		rt_sleep_until(due);
		d = rt_now_ns() - due; /* how long it waited for the CPU */
		s->total_delay += d;
		if (d > s->max_delay)
			s->max_delay = d;
		s->wakes++;
		rt_cpu(100 * RT_NS_PER_US);
	}
}

static void sleepy_main(void *arg)
{
	rt_thread *h, *z;

	T_EQ(rt_thread_create(&h, "hog", sleepy_hog, arg), 0);
	T_EQ(rt_thread_create(&z, "sleepy", sleepy_fn, arg), 0);
	rt_thread_join(z);
	rt_thread_join(h);
}

static void test_cfs_wakeup_preemption(void)
{
	for (int strict = 0; strict < 2; strict++) {
		struct sleepy s;
		struct rt_cpu_stats st;
		uint64_t rd, ex;
		rt_world *w = cfs_world(5, 1, strict ? 100 * RT_NS_PER_MS : 0); /* 1 CPU: x1 */

		memset(&s, 0, sizeof(s));
		T_CHECK(w != NULL);
		T_EQ(rt_world_run(w, "main", sleepy_main, &s), 0);
		T_EQ(s.wakes, 50);
		rt_world_cpu_stats(w, &st);
		/* the CPU never idles while the hog runs: it ends after its
		 * own second plus the sleeper's 50 x 100 us */
		T_EQ_U64(s.hog_done, RT_NS_PER_S + 50 * 100 * RT_NS_PER_US);
		T_EQ_U64(st.busy_ns, RT_NS_PER_S + 50 * 100 * RT_NS_PER_US);
		rt_world_thread_cpu_stats(w, "sleepy", &rd, &ex);
		(void)rd;
		(void)ex; /* joined: no longer counted */
		if (!strict) {
			T_EQ_U64(s.max_delay, 0);
			T_CHECK(st.wakeup_preemptions >= 50);
		} else {
			/* it waits for the end of the hog's slice (6 ms
			 * with two tasks on one CPU, 3 each) */
			T_CHECK(s.total_delay > 0);
			T_CHECK(s.max_delay <= 3 * RT_NS_PER_MS);
			T_EQ_U64(st.wakeup_preemptions, 0);
		}
		rt_world_free(w);
	}
}

/* A spin lock: its holder keeps the CPU and its waiter spins on its own,
 * so a third task finds no CPU until the holder lets go. */
struct spin_run {
	rt_mutex m;
	uint64_t b_got, c_done;
};

static void spin_a(void *arg)
{
	struct spin_run *r = arg;

	rt_task();
	rt_mutex_lock(&r->m);
	rt_cpu(10 * RT_NS_PER_MS);
	rt_mutex_unlock(&r->m);
}

static void spin_b(void *arg)
{
	struct spin_run *r = arg;

	rt_task();
	rt_sleep_ns(RT_NS_PER_MS);
	rt_mutex_lock(&r->m);
	r->b_got = rt_now_ns();
	rt_mutex_unlock(&r->m);
}

static void spin_c(void *arg)
{
	struct spin_run *r = arg;

	rt_task();
	rt_sleep_ns(2 * RT_NS_PER_MS);
	rt_cpu(RT_NS_PER_MS);
	r->c_done = rt_now_ns();
}

static void spin_main(void *arg)
{
	static void (*const fns[3])(void *) = { spin_a, spin_b, spin_c };
	rt_thread *t[3];

	for (int i = 0; i < 3; i++)
		T_EQ(rt_thread_create(&t[i], "spin", fns[i], arg), 0);
	for (int i = 0; i < 3; i++)
		rt_thread_join(t[i]);
}

static void test_cfs_spin_lock(void)
{
	struct spin_run r;
	struct rt_cpu_stats st;
	rt_world *w = cfs_world(7, 2, 0);

	memset(&r, 0, sizeof(r));
	T_CHECK(w != NULL);
	T_EQ(rt_mutex_init(&r.m, "spin"), 0);
	rt_mutex_spin(&r.m);
	T_EQ(rt_world_run(w, "main", spin_main, &r), 0);
	T_EQ_U64(r.b_got, 10 * RT_NS_PER_MS);
	T_EQ_U64(r.c_done, 11 * RT_NS_PER_MS); /* no CPU before 10 ms */
	rt_world_cpu_stats(w, &st);
	T_EQ_U64(st.spin_ns, 9 * RT_NS_PER_MS);
	T_EQ_U64(st.busy_ns, 20 * RT_NS_PER_MS);
	rt_mutex_release(&r.m);
	rt_world_free(w);

	/* the same mutex not marked spin: B sleeps, C gets B's CPU at 2 ms */
	memset(&r, 0, sizeof(r));
	w = cfs_world(7, 2, 0);
	T_CHECK(w != NULL);
	T_EQ(rt_mutex_init(&r.m, "sleep"), 0);
	T_EQ(rt_world_run(w, "main", spin_main, &r), 0);
	T_EQ_U64(r.c_done, 3 * RT_NS_PER_MS);
	rt_world_cpu_stats(w, &st);
	T_EQ_U64(st.spin_ns, 0);
	rt_mutex_release(&r.m);
	rt_world_free(w);
}

/* A spin-lock holder that sleeps gives its CPU up, and a locker then sleeps
 * rather than spins: on one CPU, a third task runs meanwhile. */
static void hsleep_a(void *arg)
{
	struct spin_run *r = arg;

	rt_task();
	rt_mutex_lock(&r->m);
	rt_sleep_ns(10 * RT_NS_PER_MS);
	rt_mutex_unlock(&r->m);
}

static void hsleep_main(void *arg)
{
	static void (*const fns[3])(void *) = { hsleep_a, spin_b, spin_c };
	rt_thread *t[3];

	for (int i = 0; i < 3; i++)
		T_EQ(rt_thread_create(&t[i], "hsleep", fns[i], arg), 0);
	for (int i = 0; i < 3; i++)
		rt_thread_join(t[i]);
}

static void test_cfs_spin_holder_sleeps(void)
{
	struct spin_run r;
	struct rt_cpu_stats st;
	rt_world *w = cfs_world(13, 1, 0);

	memset(&r, 0, sizeof(r));
	T_CHECK(w != NULL);
	T_EQ(rt_mutex_init(&r.m, "spin"), 0);
	rt_mutex_spin(&r.m);
	T_EQ(rt_world_run(w, "main", hsleep_main, &r), 0);
	T_EQ_U64(r.b_got, 10 * RT_NS_PER_MS);
	T_EQ_U64(r.c_done, 3 * RT_NS_PER_MS);
	rt_world_cpu_stats(w, &st);
	T_EQ_U64(st.spin_ns, 0);
	T_EQ_U64(st.busy_ns, RT_NS_PER_MS);
	rt_mutex_release(&r.m);
	rt_world_free(w);
}

/* Same seed, same run under CFS; a bad scheduler kind is refused. */
static void test_cfs_determinism(void)
{
	uint64_t h[2], sw[2];
	struct rt_world_opts bad = { .kind = RT_WORLD_SIM };
	rt_world *w;

	for (int k = 0; k < 2; k++) {
		struct sleepy s;

		memset(&s, 0, sizeof(s));
		w = cfs_world(11, 1, 0);
		T_CHECK(w != NULL);
		T_EQ(rt_world_run(w, "main", sleepy_main, &s), 0);
		h[k] = rt_world_hash(w);
		sw[k] = rt_world_switches(w);
		rt_world_free(w);
	}
	T_EQ_U64(h[0], h[1]);
	T_EQ_U64(sw[0], sw[1]);
	bad.sched.kind = (enum rt_sched_kind)7;
	T_EQ(rt_world_new(&bad, &w), -EINVAL);
}

/* The scaled defaults: 1 + ilog2(min(ncpus, 8)). */
static void test_cfs_tunables(void)
{
	static const struct { unsigned n; uint64_t factor; } cases[] = {
		{ 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 3 }, { 8, 4 }, { 64, 4 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_sched s = { .kind = RT_SCHED_CFS };

		rt_sched_resolve(&s, cases[i].n);
		T_EQ_U64(s.latency_ns, 6 * RT_NS_PER_MS * cases[i].factor);
		T_EQ_U64(s.min_gran_ns, 750 * RT_NS_PER_US * cases[i].factor);
		T_EQ_U64(s.wakeup_gran_ns, RT_NS_PER_MS * cases[i].factor);
	}
	struct rt_sched keep = { .kind = RT_SCHED_CFS, .latency_ns = 5 };

	rt_sched_resolve(&keep, 4); /* a given value is normalized too */
	T_EQ_U64(keep.latency_ns, 15);
}

/* ---- determinism ------------------------------------------------------- */

#define DET_THREADS 5

struct det {
	rt_mutex m[2];
	rt_cond c;
	long shared;
	char order[2048];
	size_t norder;
	uint64_t events;
};

static void det_worker(void *arg)
{
	struct det *d = arg;
	const char *me = rt_self_name();

	for (int i = 0; i < 40; i++) {
		rt_mutex *m = &d->m[rt_rand_below(2)];

		switch (rt_rand_below(4)) {
		case 0:
			rt_sleep_ns(rt_rand_below(5000));
			break;
		case 1:
			rt_cpu(rt_rand_below(3000) + 1);
			break;
		case 2:
			rt_yield();
			break;
		default:
			break;
		}
		rt_mutex_lock(m);
		d->shared++;
		if (d->norder < sizeof(d->order) - 1)
			d->order[d->norder++] = me[1];
		if (rt_rand_below(3) == 0)
			rt_cond_timedwait(&d->c, m, rt_now_ns() + rt_rand_below(2000) + 1);
		else
			rt_cond_broadcast(&d->c);
		rt_mutex_unlock(m);
	}
	rt_event(me);
}

static void det_main(void *arg)
{
	struct det *d = arg;
	static const char *names[DET_THREADS] = { "w0", "w1", "w2", "w3", "w4" };
	rt_thread *t[DET_THREADS];

	for (int i = 0; i < DET_THREADS; i++)
		rt_thread_create(&t[i], names[i], det_worker, d);
	for (int i = 0; i < DET_THREADS; i++)
		rt_thread_join(t[i]);
}

static void count_event(void *arg, uint64_t now, const char *thread, const char *what)
{
	struct det *d = arg;

	(void)now;
	(void)thread;
	(void)what;
	d->events++;
}

static int det_run(uint64_t seed, uint64_t *hash, char *order, uint64_t *events)
{
	struct rt_world_opts o = {
		.kind = RT_WORLD_SIM, .seed = seed, .on_event = count_event,
	};
	rt_world *w;
	struct det d;
	int rc;

	memset(&d, 0, sizeof(d));
	o.on_event_arg = &d;
	rc = rt_world_new(&o, &w);
	if (rc)
		return rc;
	rt_mutex_init(&d.m[0], "m0");
	rt_mutex_init(&d.m[1], "m1");
	rt_cond_init(&d.c, "c");
	rc = rt_world_run(w, "det", det_main, &d);
	*hash = rt_world_hash(w);
	*events = d.events;
	memcpy(order, d.order, sizeof(d.order));
	if (d.shared != DET_THREADS * 40 || d.events < rt_world_switches(w))
		rc = -EPROTO;
	rt_world_free(w);
	return rc;
}

static void test_determinism(void)
{
	static const uint64_t seeds[2] = { 42, 4242 };
	uint64_t h[2][2], ev[2][2];
	static char order[2][2][2048];

	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 2; k++)
			T_EQ(det_run(seeds[s], &h[s][k], order[s][k], &ev[s][k]), 0);
	for (int s = 0; s < 2; s++) {
		T_EQ_U64(h[s][0], h[s][1]);
		T_EQ_U64(ev[s][0], ev[s][1]);
		T_CHECK(memcmp(order[s][0], order[s][1], sizeof(order[s][0])) == 0);
	}
	T_CHECK(h[0][0] != h[1][0]);
	/* Different seeds interleave differently, not just hash differently. */
	T_CHECK(memcmp(order[0][0], order[1][0], sizeof(order[0][0])) != 0);
	fprintf(stderr, "    seed %llu: hash %016llx, seed %llu: hash %016llx\n",
		(unsigned long long)seeds[0], (unsigned long long)h[0][0],
		(unsigned long long)seeds[1], (unsigned long long)h[1][0]);
}

/* The same seed in another process (other addresses, other pthread ids)
 * gives the same hash: nothing depends on pointers or on the host. */
static void test_determinism_across_processes(void)
{
	uint64_t mine, theirs = 0, ev;
	static char order[2048];
	int pipefd[2], status;
	pid_t pid;

	T_EQ(pipe(pipefd), 0);
	fflush(NULL);
	pid = fork();
	T_CHECK(pid >= 0);
	if (pid == 0) {
		uint64_t h = 0;
		void *junk = malloc(12345); /* shift the child's heap layout */

		close(pipefd[0]);
		if (det_run(42, &h, order, &ev) || write(pipefd[1], &h, sizeof(h)) != sizeof(h))
			_exit(1);
		free(junk);
		_exit(0);
	}
	close(pipefd[1]);
	T_EQ(read(pipefd[0], &theirs, sizeof(theirs)), (long)sizeof(theirs));
	close(pipefd[0]);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_EQ(det_run(42, &mine, order, &ev), 0);
	T_EQ_U64(mine, theirs);
}

/* ---- FIFO hand-off, signal and broadcast ------------------------------ */

struct fifo {
	rt_mutex m;
	rt_cond c;
	int arrived[3], acquired[3];
	int narrived, nacquired;
	int woken;
	int go;
};

static void fifo_fn(void *arg)
{
	struct fifo *f = arg;
	int me = rt_self_name()[1] - '0';

	f->arrived[f->narrived++] = me;
	rt_mutex_lock(&f->m);
	f->acquired[f->nacquired++] = me;
	while (!f->go)
		rt_cond_wait(&f->c, &f->m);
	f->woken++;
	f->go--;
	rt_mutex_unlock(&f->m);
}

static void fifo_main(void *arg)
{
	struct fifo *f = arg;
	static const char *names[3] = { "f0", "f1", "f2" };
	rt_thread *t[3];

	rt_mutex_lock(&f->m);
	for (int i = 0; i < 3; i++)
		rt_thread_create(&t[i], names[i], fifo_fn, f);
	rt_sleep_ns(RT_NS_PER_MS); /* all three queue up on m */
	rt_mutex_unlock(&f->m);
	rt_sleep_ns(RT_NS_PER_MS); /* all three wait on c */
	rt_mutex_lock(&f->m);
	f->go = 3;
	rt_cond_signal(&f->c); /* exactly one wakes */
	rt_mutex_unlock(&f->m);
	rt_sleep_ns(RT_NS_PER_MS);
	if (f->woken != 1)
		f->woken = -100;
	rt_mutex_lock(&f->m);
	rt_cond_broadcast(&f->c);
	rt_mutex_unlock(&f->m);
	for (int i = 0; i < 3; i++)
		rt_thread_join(t[i]);
}

static void test_fifo_signal_broadcast(void)
{
	for (uint64_t seed = 10; seed < 16; seed++) {
		rt_world *w = sim_world(seed, 0);
		struct fifo f;

		memset(&f, 0, sizeof(f));
		T_CHECK(w != NULL);
		T_EQ(rt_mutex_init(&f.m, "fifo"), 0);
		T_EQ(rt_cond_init(&f.c, "fifo"), 0);
		T_EQ(rt_world_run(w, "fifo", fifo_main, &f), 0);
		T_EQ(f.nacquired, 3);
		T_EQ(f.woken, 3);
		for (int i = 0; i < 3; i++)
			T_EQ(f.acquired[i], f.arrived[i]);
		rt_world_free(w);
	}
}

/* ---- the event log ----------------------------------------------------- */

struct evlog {
	int switches, times, user;
	uint64_t last_time;
	char user_thread[RT_NAME_MAX];
};

static void evlog_cb(void *arg, uint64_t now, const char *thread, const char *what)
{
	struct evlog *e = arg;

	if (!strcmp(what, "switch")) {
		e->switches++;
	} else if (!strcmp(what, "time")) {
		e->times++;
		e->last_time = now;
	} else if (!strcmp(what, "hello")) {
		e->user++;
		snprintf(e->user_thread, sizeof(e->user_thread), "%s", thread);
	}
}

static void evlog_fn(void *arg)
{
	(void)arg;
	rt_sleep_ns(100);
	rt_sleep_ns(200);
	rt_event("hello");
}

static void test_event_log(void)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = 1, .on_event = evlog_cb };
	struct evlog e;
	rt_world *w;
	uint64_t h0, h1;

	memset(&e, 0, sizeof(e));
	o.on_event_arg = &e;
	T_EQ(rt_world_new(&o, &w), 0);
	h0 = rt_world_hash(w);
	T_EQ(rt_world_run(w, "logger", evlog_fn, NULL), 0);
	h1 = rt_world_hash(w);
	T_CHECK(h1 != h0);
	T_EQ(e.switches, 1); /* one thread: the baton only changes hands once */
	T_EQ_U64(rt_world_switches(w), 1);
	T_EQ(e.times, 2);
	T_EQ_U64(e.last_time, 300);
	T_EQ(e.user, 1);
	T_STREQ(e.user_thread, "logger");
	rt_world_free(w);
}

/* ---- threads: yield, trylock, join, ioprio, unjoined threads ----------- */

struct misc {
	rt_mutex m;
	int trylock_other, trylock_self;
	int log[8];
	int nlog;
	uint16_t child_prio;
	int set_rc;
	int child_pid;
	int join_self;
};

static void misc_child(void *arg)
{
	struct misc *x = arg;

	x->child_prio = rt_ioprio_get();
	x->trylock_other = rt_mutex_trylock(&x->m);
	x->log[x->nlog++] = 2;
}

static void misc_orphan(void *arg)
{
	rt_sleep_ns(RT_NS_PER_S);
	(void)arg;
}

static void misc_main(void *arg)
{
	struct misc *x = arg;
	rt_thread *t, *orphan;

	x->set_rc = rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_RT, 1));
	x->trylock_self = rt_mutex_trylock(&x->m);
	x->join_self = rt_thread_join(rt_self());
	rt_thread_create(&t, "child", misc_child, x);
	x->child_pid = rt_thread_pid(t);
	x->log[x->nlog++] = 1; /* the creator keeps the baton */
	rt_thread_join(t);
	x->log[x->nlog++] = 3;
	rt_mutex_unlock(&x->m);
	rt_thread_create(&orphan, "orphan", misc_orphan, NULL);
}

static void test_threads_misc(void)
{
	rt_world *w = sim_world(5, 0);
	struct misc x;

	memset(&x, 0, sizeof(x));
	T_CHECK(w != NULL);
	T_EQ(rt_mutex_init(&x.m, "misc"), 0);
	T_EQ(rt_world_run(w, "main", misc_main, &x), 0);
	T_EQ(x.set_rc, 0); /* sim: recorded only, the kernel is not asked */
	T_EQ(x.child_prio, RT_IOPRIO(RT_IOPRIO_CLASS_RT, 1));
	T_EQ(x.trylock_self, 0);
	T_EQ(x.trylock_other, -EBUSY);
	T_EQ(x.join_self, -EDEADLK);
	T_EQ(x.child_pid, 1001);
	T_EQ(x.nlog, 3);
	T_EQ(x.log[0], 1);
	T_EQ(x.log[1], 2);
	T_EQ(x.log[2], 3);
	T_EQ(rt_ioprio_get(), RT_IOPRIO_DEFAULT); /* main's own is untouched */
	rt_mutex_release(&x.m);
	rt_world_free(w);
}

/* ---- cost of a context switch (measured, not asserted) ---------------- */

static void pingpong(void *arg)
{
	for (int i = 0; i < 10000; i++)
		rt_yield();
	(void)arg;
}

static void pp_main(void *arg)
{
	rt_thread *a, *b;

	rt_thread_create(&a, "ping", pingpong, arg);
	rt_thread_create(&b, "pong", pingpong, arg);
	rt_thread_join(a);
	rt_thread_join(b);
}

static void test_switch_cost(void)
{
	rt_world *w = sim_world(3, 0);
	uint64_t start, ns, n;

	T_CHECK(w != NULL);
	start = wall_ns();
	T_EQ(rt_world_run(w, "pp", pp_main, NULL), 0);
	ns = wall_ns() - start;
	n = rt_world_switches(w);
	T_CHECK(n > 5000);
	fprintf(stderr, "    %llu switches in %.1f ms: %.2f us per switch\n",
		(unsigned long long)n, ns / 1e6, ns / 1e3 / (double)n);
	rt_world_free(w);
}

/* ---- the deadlock report ---------------------------------------------- */

struct dl {
	rt_mutex m;
	rt_cond never;
	rt_thread *b;
};

static void dl_b(void *arg)
{
	struct dl *d = arg;

	rt_sleep_ns(RT_NS_PER_MS);
	rt_mutex_lock(&d->m); /* held by A, who waits to join B */
}

static void dl_c(void *arg)
{
	struct dl *d = arg;
	rt_mutex m2;

	rt_mutex_init(&m2, "m2");
	rt_mutex_lock(&m2);
	rt_cond_wait(&d->never, &m2);
}

static void dl_a(void *arg)
{
	struct dl *d = arg;
	rt_thread *c;

	rt_mutex_lock(&d->m);
	rt_thread_create(&d->b, "B", dl_b, d);
	rt_thread_create(&c, "C", dl_c, d);
	rt_thread_join(d->b);
}

static void deadlock_child(void)
{
	rt_world *w = sim_world(77, 0);
	struct dl d;

	if (!w)
		_exit(3);
	rt_mutex_init(&d.m, "the-lock");
	rt_cond_init(&d.never, "never");
	rt_world_run(w, "A", dl_a, &d);
	_exit(0); /* must not get here */
}

/* Run fn in a forked child with its stderr captured into out. */
static int run_child(void (*fn)(void), char *out, size_t cap, int *status)
{
	size_t len = 0;
	ssize_t n;
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], 2);
		fn();
		_exit(0);
	}
	close(pipefd[1]);
	while (len < cap - 1 && (n = read(pipefd[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	return waitpid(pid, status, 0) == pid ? 0 : -1;
}

static void test_deadlock_report(void)
{
	char out[4096];
	int status;

	T_EQ(run_child(deadlock_child, out, sizeof(out), &status), 0);
	fprintf(stderr, "%s", out);
	T_CHECK(WIFSIGNALED(status));
	T_EQ(WTERMSIG(status), SIGABRT);
	T_CHECK(strstr(out, "sim deadlock at 1000000 ns") != NULL);
	T_CHECK(strstr(out, "thread 'A' (pid 1000) waits on join of 'B' (pid 1001)") != NULL);
	T_CHECK(strstr(out, "thread 'B' (pid 1001) waits on mutex 'the-lock' held by 'A' (pid 1000)") != NULL);
	T_CHECK(strstr(out, "thread 'C' (pid 1002) waits on cond 'never'") != NULL);
}

/* ---- an object shared across worlds is caught, not a silent hang ------ */

static rt_mutex shared_m;

static void misuse_sim(void *arg)
{
	(void)arg;
	rt_mutex_init(&shared_m, "shared");
	rt_mutex_lock(&shared_m);
	rt_mutex_unlock(&shared_m);
}

static void misuse_real(void *arg)
{
	(void)arg;
	rt_mutex_lock(&shared_m);
}

static void misuse_child(void)
{
	rt_world *w = sim_world(1, 0);
	rt_thread *t;

	if (!w || rt_world_run(w, "simside", misuse_sim, NULL))
		_exit(3);
	rt_mutex_lock(&shared_m); /* main, after the run: allowed */
	rt_mutex_unlock(&shared_m);
	if (rt_thread_create(&t, "realside", misuse_real, NULL))
		_exit(4);
	rt_thread_join(t);
	_exit(0); /* must not get here */
}

static void test_cross_world_misuse(void)
{
	char out[1024];
	int status;

	T_EQ(run_child(misuse_child, out, sizeof(out), &status), 0);
	T_CHECK(WIFSIGNALED(status));
	T_EQ(WTERMSIG(status), SIGABRT);
	T_CHECK(strstr(out, "mutex 'shared' belongs to a sim world but real thread 'realside'") != NULL);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_sleep_jumps_exactly);
	T_RUN(test_timedwait_exact);
	T_RUN(test_producer_consumer);
	T_RUN(test_cpu_model);
	T_RUN(test_cfs_time_sharing);
	T_RUN(test_cfs_wakeup_preemption);
	T_RUN(test_cfs_spin_lock);
	T_RUN(test_cfs_spin_holder_sleeps);
	T_RUN(test_cfs_determinism);
	T_RUN(test_cfs_tunables);
	T_RUN(test_determinism);
	T_RUN(test_determinism_across_processes);
	T_RUN(test_fifo_signal_broadcast);
	T_RUN(test_event_log);
	T_RUN(test_threads_misc);
	T_RUN(test_switch_cost);
	T_RUN(test_deadlock_report);
	T_RUN(test_cross_world_misuse);
	return t_done(argv[0]);
}

/*
 * rt threads: the public thread, mutex, condition variable and time calls.
 * Each one looks at the calling thread's world and goes to the real
 * implementation (real.c, plain pthreads) or the sim one (sim.c, the baton
 * scheduler).
 *
 * Objects are dispatched on the CALLER's world, not on the world that
 * initialised them: every rt_mutex and rt_cond carries both a pthread object
 * and the sim queues, so one set up by main (a foreign thread) before a sim
 * run works inside that run. What must not happen is the same object used by
 * two worlds at once.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt/rt_int.h"

/*
 * A real rt thread touching an object a sim world has taken over would wait
 * on the pthread half while the sim threads use the sim half: neither side
 * would ever wake the other. Say so and stop instead of hanging. (Foreign
 * threads may: main reading results after a run is the normal case.)
 */
static void rt_real_use(const struct rt_world *ow, const char *kind, const char *name)
{
	if (rt_cur && ow && ow->w_kind == RT_WORLD_SIM) {
		fprintf(stderr, "ujbd rt: %s '%s' belongs to a sim world but real thread "
			"'%s' uses it (create the threads that share it inside "
			"rt_world_run)\n", kind, name ? name : "?", rt_cur->t_name);
		abort();
	}
}

int rt_thread_create(rt_thread **out, const char *name, void (*fn)(void *),
		     void *arg)
{
	struct rt_world *w = rt_cur_world();
	struct rt_thread *t;
	int rc;

	*out = NULL;
	if (!fn)
		return -EINVAL;
	t = rt_thread_alloc(w, name, fn, arg);
	if (!t)
		return -ENOMEM;
	rc = w->w_kind == RT_WORLD_SIM ? rt_sim_create(w, t) : rt_real_create(w, t);
	if (rc) {
		rt_thread_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}

int rt_thread_join(rt_thread *t)
{
	if (!t)
		return -EINVAL;
	if (t == rt_cur)
		return -EDEADLK;
	if (t->t_world->w_kind == RT_WORLD_SIM)
		return rt_sim_join(t);
	return rt_real_join(t);
}

rt_thread *rt_self(void)
{
	return rt_cur;
}

const char *rt_thread_name(const rt_thread *t)
{
	return t->t_name;
}

const char *rt_self_name(void)
{
	return rt_cur ? rt_cur->t_name : "main";
}

int rt_thread_pid(const rt_thread *t)
{
	struct rt_world *w = t->t_world;
	int pid;

	/* A real thread learns its tid only once it runs: wait for that. */
	rt_world_lock(w);
	while (t->t_pid == 0)
		pthread_cond_wait(&w->w_cond, &w->w_lock);
	pid = t->t_pid;
	rt_world_unlock(w);
	return pid;
}

int rt_self_pid(void)
{
	if (rt_cur)
		return rt_thread_pid(rt_cur);
	return (int)gettid();
}

void rt_yield(void)
{
	if (rt_in_sim())
		rt_sim_yield();
	else
		sched_yield();
}

/* ---- thread exit callbacks ------------------------------------------------ */

/* The list of the calling thread is the value of one pthread key: an rt
 * thread runs it when its function returns (in the sim world while it
 * still holds the baton, so what the callbacks do is part of the
 * deterministic run); the key's destructor runs it for foreign threads. */
struct rt_exit_cb {
	void (*fn)(void *);
	void *arg;
	struct rt_exit_cb *next;
};

static pthread_key_t rt_exit_key;
static pthread_once_t rt_exit_once = PTHREAD_ONCE_INIT;
static int rt_exit_key_err;
static bool rt_exit_used; /* atomic: the key exists */

static void rt_exit_run(void *head)
{
	struct rt_exit_cb *cb = head, *next;

	for (; cb; cb = next) {
		next = cb->next;
		cb->fn(cb->arg);
		free(cb);
	}
}

void __rt_exit_callbacks(void)
{
	if (!__atomic_load_n(&rt_exit_used, __ATOMIC_ACQUIRE))
		return;
	void *head = pthread_getspecific(rt_exit_key);
	pthread_setspecific(rt_exit_key, NULL);
	rt_exit_run(head);
}

static void rt_exit_key_make(void)
{
	rt_exit_key_err = pthread_key_create(&rt_exit_key, rt_exit_run);
	__atomic_store_n(&rt_exit_used, !rt_exit_key_err, __ATOMIC_RELEASE);
}

int rt_at_thread_exit(void (*fn)(void *), void *arg)
{
	struct rt_exit_cb *cb;

	pthread_once(&rt_exit_once, rt_exit_key_make);
	if (rt_exit_key_err)
		return -rt_exit_key_err;
	cb = malloc(sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->fn = fn;
	cb->arg = arg;
	cb->next = pthread_getspecific(rt_exit_key);
	if (pthread_setspecific(rt_exit_key, cb)) {
		free(cb);
		return -ENOMEM;
	}
	return 0;
}

/* ---- mutexes and condition variables ---------------------------------- */

/*
 * Who holds a mutex, for rt_mutex_held: the address of a thread-local byte is
 * a token unique to each live thread, rt or foreign. The holder stores its
 * token right after taking the lock and clears it right before giving it up
 * (a condition wait gives it up too), so the only thread that can ever load
 * its own token from m_holder is the one that holds m; relaxed atomics are
 * enough because no other thread's answer depends on the value it reads.
 */
static _Thread_local char rt_holder_token;

static void rt_holder_set(rt_mutex *m)
{
	__atomic_store_n(&m->m_holder, (const void *)&rt_holder_token,
			 __ATOMIC_RELAXED);
}

static void rt_holder_clear(rt_mutex *m)
{
	ASSERT(rt_mutex_held(m)); /* unlocking a mutex one does not hold */
	__atomic_store_n(&m->m_holder, (const void *)NULL, __ATOMIC_RELAXED);
}

bool rt_mutex_held(const rt_mutex *m)
{
	return __atomic_load_n(&m->m_holder, __ATOMIC_RELAXED) == &rt_holder_token;
}

int rt_mutex_init(rt_mutex *m, const char *name)
{
	int rc;

	memset(m, 0, sizeof(*m));
	rc = pthread_mutex_init(&m->m_real, NULL);
	if (rc)
		return -rc;
	m->m_world = rt_cur_world();
	m->m_name = name;
	return 0;
}

void rt_mutex_spin(rt_mutex *m)
{
	m->m_spin = true;
}

void rt_mutex_release(rt_mutex *m)
{
	ASSERT(m->m_owner == NULL && rt_waitq_idle(&m->m_waiters));
	ASSERT(__atomic_load_n(&m->m_holder, __ATOMIC_RELAXED) == NULL);
	pthread_mutex_destroy(&m->m_real);
}

void rt_mutex_lock(rt_mutex *m)
{
	ASSERT(!rt_mutex_held(m)); /* recursive locking is a bug */
	if (rt_in_sim()) {
		rt_sim_mutex_lock(m);
	} else {
		rt_real_use(m->m_world, "mutex", m->m_name);
		int rc = pthread_mutex_lock(&m->m_real);

		ASSERT(rc == 0);
	}
	rt_holder_set(m);
}

int rt_mutex_trylock(rt_mutex *m)
{
	int rc;

	ASSERT(!rt_mutex_held(m));
	if (rt_in_sim()) {
		rc = rt_sim_mutex_trylock(m);
	} else {
		rt_real_use(m->m_world, "mutex", m->m_name);
		rc = pthread_mutex_trylock(&m->m_real) ? -EBUSY : 0;
	}
	if (rc == 0)
		rt_holder_set(m);
	return rc;
}

void rt_mutex_unlock(rt_mutex *m)
{
	rt_holder_clear(m);
	if (rt_in_sim()) {
		rt_sim_mutex_unlock(m);
		return;
	}
	int rc = pthread_mutex_unlock(&m->m_real);

	ASSERT(rc == 0);
}

int rt_cond_init(rt_cond *c, const char *name)
{
	pthread_condattr_t ca;
	int rc;

	memset(c, 0, sizeof(*c));
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&c->c_real, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return -rc;
	c->c_world = rt_cur_world();
	c->c_name = name;
	return 0;
}

void rt_cond_release(rt_cond *c)
{
	ASSERT(rt_waitq_idle(&c->c_waiters));
	pthread_cond_destroy(&c->c_real);
}

void rt_cond_wait(rt_cond *c, rt_mutex *m)
{
	rt_holder_clear(m);
	if (rt_in_sim()) {
		rt_sim_cond_wait(c, m, UINT64_MAX);
	} else {
		rt_real_use(c->c_world, "cond", c->c_name);
		int rc = pthread_cond_wait(&c->c_real, &m->m_real);

		ASSERT(rc == 0);
	}
	rt_holder_set(m);
}

int rt_cond_timedwait(rt_cond *c, rt_mutex *m, uint64_t deadline_ns)
{
	struct timespec ts;
	int rc;

	rt_holder_clear(m);
	if (rt_in_sim()) {
		rc = -rt_sim_cond_wait(c, m, deadline_ns);
	} else {
		rt_real_use(c->c_world, "cond", c->c_name);
		ts.tv_sec = (time_t)(deadline_ns / RT_NS_PER_S);
		ts.tv_nsec = (long)(deadline_ns % RT_NS_PER_S);
		rc = pthread_cond_timedwait(&c->c_real, &m->m_real, &ts);
		ASSERT(rc == 0 || rc == ETIMEDOUT);
	}
	rt_holder_set(m);
	return -rc;
}

void rt_cond_signal(rt_cond *c)
{
	if (rt_in_sim()) {
		rt_sim_cond_wake(c, false);
		return;
	}
	rt_real_use(c->c_world, "cond", c->c_name);
	pthread_cond_signal(&c->c_real);
}

void rt_cond_broadcast(rt_cond *c)
{
	if (rt_in_sim()) {
		rt_sim_cond_wake(c, true);
		return;
	}
	rt_real_use(c->c_world, "cond", c->c_name);
	pthread_cond_broadcast(&c->c_real);
}

/* ---- time ------------------------------------------------------------- */

uint64_t rt_now_ns(void)
{
	/* Only the baton holder moves virtual time, and the baton was handed
	 * over under w_lock, so reading it here needs no lock. */
	if (rt_in_sim())
		return rt_cur->t_world->w_now;
	return rt_real_now_ns();
}

uint64_t rt_wall_ns(void)
{
	struct timespec ts;

	if (rt_in_sim())
		return rt_cur->t_world->w_now;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * RT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void rt_sleep_ns(uint64_t ns)
{
	uint64_t now = rt_now_ns();

	rt_sleep_until(ns > UINT64_MAX - now ? UINT64_MAX : now + ns);
}

void rt_sleep_until(uint64_t deadline_ns)
{
	if (rt_in_sim())
		rt_sim_sleep_until(deadline_ns);
	else
		rt_real_sleep_until(deadline_ns);
}

void rt_cpu(uint64_t ns)
{
	if (rt_in_sim() && ns > 0)
		rt_sim_cpu(ns);
}

void rt_task(void)
{
	if (rt_in_sim())
		rt_sim_task();
}

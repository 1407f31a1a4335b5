/*
 * The real world: rt threads are plain pthreads, time is CLOCK_MONOTONIC.
 *
 * The only bookkeeping is per world: a list of threads not yet freed and a
 * count of those still running, so that rt_world_run() can return once the
 * last one has exited and reap the ones nobody joined.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "rt/rt_int.h"

uint64_t rt_real_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * RT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void rt_real_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / RT_NS_PER_S),
		.tv_nsec = (long)(deadline_ns % RT_NS_PER_S),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *rt_real_trampoline(void *arg)
{
	struct rt_thread *t = arg;
	struct rt_world *w = t->t_world;

	rt_cur = t;
	pthread_setname_np(pthread_self(), t->t_name);
	rt_world_lock(w);
	t->t_pid = (int)gettid();
	pthread_cond_broadcast(&w->w_cond);
	rt_world_unlock(w);
	/* The kernel copies the creator's ioprio on clone, but say it again:
	 * the creator may have recorded one the kernel refused. */
	if (t->t_ioprio != RT_IOPRIO_DEFAULT)
		(void)rt_ioprio_set(t->t_ioprio);

	t->t_fn(t->t_arg);
	__rt_exit_callbacks();

	rt_world_lock(w);
	t->t_exited = true;
	ASSERT(w->w_live > 0);
	if (--w->w_live == 0)
		pthread_cond_broadcast(&w->w_cond);
	rt_world_unlock(w);
	return NULL;
}

int rt_real_create(struct rt_world *w, struct rt_thread *t)
{
	int rc;

	rt_world_lock(w);
	t->t_index = w->w_created;
	rc = pthread_create(&t->t_pthread, NULL, rt_real_trampoline, t);
	if (rc == 0) {
		w->w_created++;
		w->w_live++;
		__rt_link_thread(w, t);
	}
	rt_world_unlock(w);
	return -rc;
}

int rt_real_join(struct rt_thread *t)
{
	struct rt_world *w = t->t_world;
	int rc = pthread_join(t->t_pthread, NULL);

	if (rc)
		return -rc;
	rt_world_lock(w);
	__rt_unlink_thread(w, t);
	rt_world_unlock(w);
	rt_thread_destroy(t);
	return 0;
}

int rt_real_run(struct rt_world *w, struct rt_thread *t)
{
	int rc = rt_real_create(w, t);

	if (rc) {
		rt_thread_destroy(t);
		return rc;
	}
	rt_world_lock(w);
	while (w->w_live > 0)
		pthread_cond_wait(&w->w_cond, &w->w_lock);
	if (w->w_static) {
		/* Foreign threads of the default world may still hold handles
		 * of threads they mean to join: reap only our own. */
		rt_world_unlock(w);
		return rt_real_join(t);
	}
	/* Every thread has exited, so nobody can be joining any more: reap
	 * the ones that were never joined (the first thread among them). */
	__rt_reap_all(w);
	rt_world_unlock(w);
	return 0;
}

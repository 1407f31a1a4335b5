/*
 * The sim world: a deterministic baton scheduler over real pthreads.
 *
 * Every sim thread is a pthread, but only the holder of the baton runs user
 * code. A thread keeps the baton until it blocks (a contended mutex, a
 * condition wait, a sleep, a join, charged CPU time, a yield, its exit); it
 * then runs the scheduler itself, under w_lock:
 *
 *   1. if threads are runnable, one is chosen by the world's scheduler PRNG
 *      (the run queue is ordered by creation index, never by pointer);
 *   2. otherwise virtual time jumps to the earliest timer, and every timer
 *      due then fires, in (deadline, insertion) order, making its thread
 *      runnable; back to 1;
 *   3. with no runnable thread and no timer, either every thread has exited
 *      (rt_world_run returns) or the run is deadlocked: the report goes to
 *      stderr and the process aborts.
 *
 * The chosen thread's t_go semaphore is posted; the old holder then waits
 * on its own. Scheduling decisions depend only on
 * the seed and on what the threads did before, so a run is a pure function
 * of seed, binary and inputs. Waking a thread (unlock, signal, a timer) never
 * yields: the waker keeps the baton until it blocks.
 *
 * Device completions need nothing special: a completion thread sleeps with
 * rt_cond_timedwait or rt_sleep_until, which is a timer like any other.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "rt/rt_int.h"

/* ---- run queue (ordered by creation index) ------------------------------ */

static void __sim_runq_insert(struct rt_world *w, struct rt_thread *t)
{
	size_t lo = 0, hi = w->w_nrunq;

	ASSERT(w->w_nrunq < w->w_cap);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->w_runq[mid]->t_index < t->t_index)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&w->w_runq[lo + 1], &w->w_runq[lo],
		(w->w_nrunq - lo) * sizeof(w->w_runq[0]));
	w->w_runq[lo] = t;
	w->w_nrunq++;
}

static struct rt_thread *__sim_runq_take(struct rt_world *w, size_t k)
{
	struct rt_thread *t = w->w_runq[k];

	ASSERT(k < w->w_nrunq);
	memmove(&w->w_runq[k], &w->w_runq[k + 1],
		(w->w_nrunq - k - 1) * sizeof(w->w_runq[0]));
	w->w_nrunq--;
	return t;
}

/* ---- timers: a min-heap keyed by (deadline, insertion sequence) --------- */

static bool __sim_timer_before(const struct rt_thread *a, const struct rt_thread *b)
{
	if (a->t_wait_until != b->t_wait_until)
		return a->t_wait_until < b->t_wait_until;
	return a->t_timer_seq < b->t_timer_seq;
}

static void __sim_heap_set(struct rt_world *w, size_t i, struct rt_thread *t)
{
	w->w_timers[i] = t;
	t->t_heap_idx = i;
}

static void __sim_heap_up(struct rt_world *w, size_t i)
{
	struct rt_thread *t = w->w_timers[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!__sim_timer_before(t, w->w_timers[parent]))
			break;
		__sim_heap_set(w, i, w->w_timers[parent]);
		i = parent;
	}
	__sim_heap_set(w, i, t);
}

static void __sim_heap_down(struct rt_world *w, size_t i)
{
	struct rt_thread *t = w->w_timers[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->w_ntimers)
			break;
		if (c + 1 < w->w_ntimers &&
		    __sim_timer_before(w->w_timers[c + 1], w->w_timers[c]))
			c++;
		if (!__sim_timer_before(w->w_timers[c], t))
			break;
		__sim_heap_set(w, i, w->w_timers[c]);
		i = c;
	}
	__sim_heap_set(w, i, t);
}

static void __sim_timer_add(struct rt_world *w, struct rt_thread *t, uint64_t deadline)
{
	ASSERT(t->t_heap_idx == SIZE_MAX);
	ASSERT(w->w_ntimers < w->w_cap);
	t->t_wait_until = deadline;
	t->t_timer_seq = w->w_timer_seq++;
	w->w_timers[w->w_ntimers++] = t;
	__sim_heap_up(w, w->w_ntimers - 1);
}

static void __sim_timer_del(struct rt_world *w, struct rt_thread *t)
{
	size_t i = t->t_heap_idx;
	struct rt_thread *last;

	ASSERT(i < w->w_ntimers && w->w_timers[i] == t);
	t->t_heap_idx = SIZE_MAX;
	last = w->w_timers[--w->w_ntimers];
	if (last == t)
		return;
	__sim_heap_set(w, i, last);
	__sim_heap_up(w, i);
	__sim_heap_down(w, last->t_heap_idx);
}

/* ---- wait queues of sim mutexes and conds (FIFO) ----------------------- */

static void waitq_push(rt_waitq *q, struct rt_thread *t)
{
	ASSERT(rt_list_empty(&t->t_qlink));
	if (!q->q_head.next)
		rt_list_init(&q->q_head); /* all zeroes: first use */
	rt_list_add_tail(&q->q_head, &t->t_qlink);
}

static struct rt_thread *waitq_pop(rt_waitq *q)
{
	if (rt_waitq_idle(q))
		return NULL;
	return RT_LIST_POP(&q->q_head, struct rt_thread, t_qlink);
}

/* t, on q, leaves it (a timed wait timed out). */
static void waitq_remove(rt_waitq *q, struct rt_thread *t)
{
	ASSERT(!rt_waitq_idle(q) && !rt_list_empty(&t->t_qlink));
	rt_list_del(&t->t_qlink);
}

/* ---- waking, blocking, switching --------------------------------------- */

static void __sim_make_runnable(struct rt_world *w, struct rt_thread *t)
{
	ASSERT(t->t_state == RT_T_BLOCKED && t->t_heap_idx == SIZE_MAX);
	t->t_state = RT_T_RUNNABLE;
	t->t_wait = RT_WAIT_NONE;
	t->t_wait_obj = NULL;
	__sim_runq_insert(w, t);
}

/* ---- the CFS model of the CPUs (struct rt_sched) ------------------------- */
/*
 * One run queue for all CPUs (an ideal balancer): the tasks waiting for a
 * CPU, by virtual runtime then creation index. A task holding a CPU is in
 * one of four states: running a burst segment (blocked on RT_WAIT_CPU with
 * its timer at the segment's end), running code that costs nothing (in the
 * baton's run queue), or spinning on a spin mutex (a sleeper gives its CPU
 * up, a spin-lock holder too: see __cfs_holder_sleeps).
 * A queued task is blocked on
 * RT_WAIT_CPU without a timer, with the rest of its burst in t_burst_left
 * (0: it was woken and runs its code when it gets the CPU).
 */

static bool cfs(const struct rt_world *w)
{
	return w->w_sched.kind == RT_SCHED_CFS;
}

/* t's virtual runtime now (a running segment or spin counts as run). */
static uint64_t __cfs_vr(const struct rt_world *w, const struct rt_thread *t)
{
	uint64_t v = t->t_vruntime;

	if (t->t_in_seg || t->t_spinning)
		v += w->w_now - t->t_seg_start;
	return v;
}

static bool __cfs_before(const struct rt_thread *a, const struct rt_thread *b)
{
	if (a->t_vruntime != b->t_vruntime)
		return a->t_vruntime < b->t_vruntime;
	return a->t_index < b->t_index;
}

static void __cfs_enqueue(struct rt_world *w, struct rt_thread *t)
{
	size_t lo = 0, hi = w->w_ncfsq;

	ASSERT(!t->t_queued && t->t_cpu < 0 && w->w_ncfsq < w->w_cap);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (__cfs_before(w->w_cfsq[mid], t))
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&w->w_cfsq[lo + 1], &w->w_cfsq[lo], (w->w_ncfsq - lo) * sizeof(w->w_cfsq[0]));
	w->w_cfsq[lo] = t;
	w->w_ncfsq++;
	t->t_queued = true;
	t->t_queued_at = w->w_now;
}

/* min_vruntime: never back, else the least of the running and the queued. */
static void __cfs_update_min(struct rt_world *w)
{
	uint64_t m = UINT64_MAX;

	for (unsigned c = 0; c < w->w_ncpus; c++)
		if (w->w_cpu_curr[c] && __cfs_vr(w, w->w_cpu_curr[c]) < m)
			m = __cfs_vr(w, w->w_cpu_curr[c]);
	if (w->w_ncfsq && w->w_cfsq[0]->t_vruntime < m)
		m = w->w_cfsq[0]->t_vruntime;
	if (m != UINT64_MAX && m > w->w_min_vruntime)
		w->w_min_vruntime = m;
}

/* sched_slice of equal weights: the period (latency, or min_gran per task
 * past latency / min_gran tasks) shared by a CPU's runnable tasks. */
static uint64_t __cfs_slice(const struct rt_world *w)
{
	uint64_t busy = 0, per, nr_latency, period;

	for (unsigned c = 0; c < w->w_ncpus; c++)
		busy += w->w_cpu_curr[c] != NULL;
	per = (busy + w->w_ncfsq + w->w_ncpus - 1) / w->w_ncpus;
	if (per == 0)
		per = 1;
	nr_latency = w->w_sched.latency_ns / w->w_sched.min_gran_ns;
	period = per > nr_latency ? per * w->w_sched.min_gran_ns : w->w_sched.latency_ns;
	return period / per;
}

/* t holds its CPU with t_burst_left to run: run it to the burst's end or
 * the slice's, whichever comes first (a spin-lock holder to the end). */
static void __cfs_seg_start(struct rt_world *w, struct rt_thread *t)
{
	uint64_t seg = t->t_burst_left;

	ASSERT(t->t_cpu >= 0 && t->t_burst_left > 0 && !t->t_in_seg);
	ASSERT(t->t_state == RT_T_BLOCKED && t->t_wait == RT_WAIT_CPU);
	if (!t->t_spin_held) {
		uint64_t slice = __cfs_slice(w);
		uint64_t left = slice > t->t_slice_exec ? slice - t->t_slice_exec : 0;

		if (seg > left)
			seg = left;
	}
	t->t_in_seg = true;
	t->t_seg_start = w->w_now;
	__sim_timer_add(w, t, w->w_now + seg);
}

/* End t's running segment (its timer already gone): charge what it ran. */
static void __cfs_account(struct rt_world *w, struct rt_thread *t)
{
	uint64_t ran = w->w_now - t->t_seg_start;

	ASSERT(t->t_in_seg && ran <= t->t_burst_left);
	t->t_in_seg = false;
	t->t_vruntime += ran;
	t->t_slice_exec += ran;
	t->t_exec += ran;
	t->t_burst_left -= ran;
	w->w_cpu_stats.busy_ns += ran;
}

/* Give CPU c to the first queued task, if any. */
static void __cfs_dispatch(struct rt_world *w, unsigned c)
{
	struct rt_thread *t;

	ASSERT(!w->w_cpu_curr[c]);
	if (!w->w_ncfsq)
		return;
	t = w->w_cfsq[0];
	memmove(&w->w_cfsq[0], &w->w_cfsq[1], (w->w_ncfsq - 1) * sizeof(w->w_cfsq[0]));
	w->w_ncfsq--;
	t->t_queued = false;
	t->t_cpu = (int)c;
	w->w_cpu_curr[c] = t;
	t->t_slice_exec = 0;
	t->t_run_delay += w->w_now - t->t_queued_at;
	w->w_cpu_stats.run_delay_ns += w->w_now - t->t_queued_at;
	ASSERT(t->t_state == RT_T_BLOCKED && t->t_wait == RT_WAIT_CPU);
	if (t->t_burst_left)
		__cfs_seg_start(w, t);
	else
		__sim_make_runnable(w, t);
}

/* t (blocked on RT_WAIT_CPU, not in a segment) gives its CPU up and queues. */
static void __cfs_give_up(struct rt_world *w, struct rt_thread *t)
{
	unsigned c = (unsigned)t->t_cpu;

	ASSERT(t->t_cpu >= 0 && !t->t_in_seg && !t->t_spin_held);
	w->w_cpu_curr[c] = NULL;
	t->t_cpu = -1;
	t->t_resched = false;
	w->w_cpu_stats.preemptions++;
	__cfs_enqueue(w, t);
	__cfs_dispatch(w, c);
}

/* t holds a CPU it no longer needs (it blocks or exits). */
static void __cfs_release(struct rt_world *w, struct rt_thread *t)
{
	unsigned c = (unsigned)t->t_cpu;

	ASSERT(t->t_cpu >= 0 && !t->t_in_seg);
	w->w_cpu_curr[c] = NULL;
	t->t_cpu = -1;
	t->t_resched = false;
	__cfs_dispatch(w, c);
}

/* t was just queued: an idle CPU takes it, else it may preempt the running
 * task furthest ahead (check_preempt_wakeup, against every CPU's). */
static void __cfs_claim(struct rt_world *w, struct rt_thread *t)
{
	unsigned victim = UINT_MAX;
	uint64_t vv = 0;
	struct rt_thread *cur;

	for (unsigned c = 0; c < w->w_ncpus; c++) {
		if (!w->w_cpu_curr[c]) {
			__cfs_dispatch(w, c);
			return;
		}
	}
	for (unsigned c = 0; c < w->w_ncpus; c++) {
		uint64_t v;

		cur = w->w_cpu_curr[c];
		if (cur->t_spin_held || cur->t_spinning)
			continue;
		v = __cfs_vr(w, cur);
		if (victim == UINT_MAX || v > vv) {
			victim = c;
			vv = v;
		}
	}
	if (victim == UINT_MAX || vv <= t->t_vruntime ||
	    vv - t->t_vruntime <= w->w_sched.wakeup_gran_ns)
		return;
	cur = w->w_cpu_curr[victim];
	w->w_cpu_stats.wakeup_preemptions++;
	if (cur->t_in_seg) {
		__sim_timer_del(w, cur);
		__cfs_account(w, cur);
		__cfs_give_up(w, cur);
	} else {
		cur->t_resched = true;
	}
}

/* t stops spinning: the spin was CPU time. */
static void __cfs_spin_end(struct rt_world *w, struct rt_thread *t)
{
	uint64_t s = w->w_now - t->t_seg_start;

	ASSERT(t->t_spinning);
	t->t_spinning = false;
	t->t_vruntime += s;
	t->t_slice_exec += s;
	t->t_exec += s;
	w->w_cpu_stats.spin_ns += s;
	w->w_cpu_stats.busy_ns += s;
}

/*
 * self, holding spin mutexes, sleeps (which the kernel's spin-lock holders
 * never do, but a model's lock may cover a sleep): it gives its CPU up like
 * any sleeper, and the tasks spinning on a lock it holds stop spinning and
 * sleep too (as an adaptive mutex's spinners do once the owner is off its
 * CPU), so that no CPU spins on a holder that needs one.
 */
static void __cfs_holder_sleeps(struct rt_world *w, struct rt_thread *self)
{
	for (unsigned c = 0; c < w->w_ncpus; c++) {
		struct rt_thread *t = w->w_cpu_curr[c];

		if (t && t->t_spinning && ((const rt_mutex *)t->t_wait_obj)->m_owner == self) {
			__cfs_spin_end(w, t);
			__cfs_release(w, t);
		}
	}
}

/* A task without a CPU wakes (its timer already gone): place it, queue it. */
static void __cfs_wakeup(struct rt_world *w, struct rt_thread *t)
{
	uint64_t thresh = w->w_sched.latency_ns / 2; /* GENTLE_FAIR_SLEEPERS */
	uint64_t floor;

	__cfs_update_min(w);
	floor = w->w_min_vruntime > thresh ? w->w_min_vruntime - thresh : 0;
	if (t->t_vruntime < floor)
		t->t_vruntime = floor;
	t->t_wait = RT_WAIT_CPU;
	t->t_wait_obj = NULL;
	t->t_burst_left = 0;
	__cfs_enqueue(w, t);
	__cfs_claim(w, t);
}

/* The running self stops to wait for a CPU with burst ns to run there. */
static void __cfs_wait_cpu(struct rt_thread *self, uint64_t burst)
{
	self->t_state = RT_T_BLOCKED;
	self->t_wait = RT_WAIT_CPU;
	self->t_wait_obj = NULL;
	self->t_burst_left = burst;
}

/* The running self becomes a task: placed a slice after min_vruntime
 * (START_DEBIT), queued with burst ns to run; the caller switches. */
static void __cfs_become_task(struct rt_world *w, struct rt_thread *self, uint64_t ns)
{
	self->t_task = true;
	__cfs_update_min(w);
	self->t_vruntime = w->w_min_vruntime + __cfs_slice(w);
	__cfs_wait_cpu(self, ns);
	__cfs_enqueue(w, self);
	__cfs_claim(w, self);
}

/* A segment's timer fired: the burst is done (the task runs on), or its
 * slice is: the first queued task, if behind it, takes the CPU. */
static void __cfs_seg_end(struct rt_world *w, struct rt_thread *t)
{
	uint64_t slice;

	__cfs_account(w, t);
	if (t->t_burst_left == 0) {
		__sim_make_runnable(w, t);
		return;
	}
	slice = __cfs_slice(w);
	if (t->t_slice_exec >= slice && !t->t_spin_held) {
		__cfs_update_min(w);
		if (w->w_ncfsq && __cfs_before(w->w_cfsq[0], t)) {
			__cfs_give_up(w, t);
			return;
		}
		t->t_slice_exec = 0;
	}
	__cfs_seg_start(w, t);
}

static void __sim_wake(struct rt_world *w, struct rt_thread *t)
{
	ASSERT(t->t_state == RT_T_BLOCKED);
	if (t->t_heap_idx != SIZE_MAX)
		__sim_timer_del(w, t);
	if (t->t_task && t->t_cpu < 0)
		__cfs_wakeup(w, t);
	else
		__sim_make_runnable(w, t);
}

/* A timer is due: the thread stops waiting for whatever it waited on. */
static void __sim_timer_fire(struct rt_world *w, struct rt_thread *t)
{
	if (t->t_in_seg) {
		__sim_timer_del(w, t);
		__cfs_seg_end(w, t);
		return;
	}
	if (t->t_wait == RT_WAIT_COND) {
		rt_cond *c = (rt_cond *)t->t_wait_obj;

		waitq_remove(&c->c_waiters, t);
		t->t_timed_out = true;
	}
	__sim_wake(w, t);
}

/* No thread is runnable: jump to the earliest deadline and fire its timers. */
static void __sim_advance(struct rt_world *w)
{
	uint64_t deadline = w->w_timers[0]->t_wait_until;

	ASSERT(deadline >= w->w_now);
	if (deadline > w->w_now) {
		w->w_now = deadline;
		__rt_log(w, 'T', "", "time", &deadline, sizeof(deadline));
	}
	while (w->w_ntimers && w->w_timers[0]->t_wait_until == deadline)
		__sim_timer_fire(w, w->w_timers[0]);
}

static _Noreturn void __sim_deadlock(struct rt_world *w);

static struct rt_thread *__sim_pick(struct rt_world *w)
{
	for (;;) {
		if (w->w_nrunq == 1)
			return __sim_runq_take(w, 0);
		if (w->w_nrunq > 1)
			return __sim_runq_take(w, rt_prng_below(&w->w_sched_prng, w->w_nrunq));
		if (w->w_ntimers) {
			__sim_advance(w);
			continue;
		}
		if (w->w_live == 0)
			return NULL;
		__sim_deadlock(w);
	}
}

/*
 * Choose the next baton holder and do the bookkeeping of the switch; NULL
 * once every thread has exited (rt_world_run is then woken). w_lock held.
 */
static struct rt_thread *__sim_next(struct rt_world *w)
{
	struct rt_thread *next = __sim_pick(w);

	w->w_running = next;
	if (!next) {
		w->w_last = NULL; /* a later run must not compare with a freed thread */
		pthread_cond_broadcast(&w->w_cond);
		return NULL;
	}
	if (next != w->w_last) {
		w->w_switches++;
		w->w_last = next;
		__rt_log(w, 'S', next->t_name, "switch", next->t_name, strlen(next->t_name));
	}
	next->t_state = RT_T_RUNNING;
	return next;
}

static void sim_wait_baton(struct rt_thread *self)
{
	while (sem_wait(&self->t_go) != 0)
		ASSERT(errno == EINTR);
}

/*
 * self (blocked or runnable, not exited) gives up the baton and waits until
 * it is handed back. w_lock is held on entry and on return, and dropped
 * while waiting: the post/wait pair is the whole hand-off, so a switch costs
 * one futex wake and one futex wait.
 */
static void __sim_switch(struct rt_world *w, struct rt_thread *self)
{
	struct rt_thread *next = __sim_next(w);

	ASSERT(next != NULL); /* self is alive, so w_live > 0 */
	if (next == self)
		return;
	rt_world_unlock(w);
	sem_post(&next->t_go);
	sim_wait_baton(self);
	rt_world_lock(w);
	ASSERT(w->w_running == self && self->t_state == RT_T_RUNNING);
}

/*
 * Hand the baton on for good: the caller has exited (and may be freed by its
 * joiner the moment the next thread runs) or is the rt_world_run caller
 * starting the world. w_lock held on entry, released on return.
 */
static void __sim_let_go(struct rt_world *w)
{
	struct rt_thread *next = __sim_next(w);

	rt_world_unlock(w);
	if (next)
		sem_post(&next->t_go);
}

static void __sim_block(struct rt_world *w, struct rt_thread *self,
			enum rt_wait why, const void *obj, uint64_t deadline)
{
	ASSERT(self->t_state == RT_T_RUNNING && w->w_running == self);
	/* a task gives its CPU up when it sleeps, unless it spins */
	if (self->t_cpu >= 0 && why != RT_WAIT_CPU && !self->t_spinning) {
		if (self->t_spin_held)
			__cfs_holder_sleeps(w, self);
		__cfs_release(w, self);
	}
	self->t_state = RT_T_BLOCKED;
	self->t_wait = why;
	self->t_wait_obj = obj;
	if (deadline != UINT64_MAX)
		__sim_timer_add(w, self, deadline);
	__sim_switch(w, self);
}

/* The calling thread, which must be a thread of a sim world; w_lock taken. */
static struct rt_thread *sim_enter(void)
{
	struct rt_thread *self = rt_cur;

	ASSERT(self && self->t_world->w_kind == RT_WORLD_SIM);
	rt_world_lock(self->t_world);
	ASSERT(self->t_world->w_running == self);
	return self;
}

static void sim_leave(struct rt_thread *self)
{
	rt_world_unlock(self->t_world);
}

/*
 * An object set up outside this world (by main before the run, or in an
 * earlier run of another world) is taken over on first use, provided no one
 * holds or waits on it; one in use by another sim world is a bug.
 */
static void __sim_adopt(struct rt_world *w, struct rt_world **owner, bool idle,
			const char *kind, const char *name)
{
	if (*owner == w)
		return;
	if (!idle) {
		fprintf(stderr, "ujbd rt: %s '%s' is in use by another world\n", kind,
			name ? name : "?");
		abort();
	}
	*owner = w;
}

static void __sim_adopt_mutex(struct rt_world *w, rt_mutex *m)
{
	__sim_adopt(w, &m->m_world, !m->m_owner && rt_waitq_idle(&m->m_waiters), "mutex",
		    m->m_name);
}

static void __sim_adopt_cond(struct rt_world *w, rt_cond *c)
{
	__sim_adopt(w, &c->c_world, rt_waitq_idle(&c->c_waiters), "cond", c->c_name);
}

/* ---- world, threads ---------------------------------------------------- */

void rt_sched_resolve(struct rt_sched *s, unsigned ncpus)
{
	unsigned n = ncpus < 8 ? ncpus : 8, factor = 1;

	while (n > 1) { /* 1 + ilog2 */
		factor++;
		n /= 2;
	}
	if (!s->latency_ns)
		s->latency_ns = 6 * RT_NS_PER_MS;
	if (!s->min_gran_ns)
		s->min_gran_ns = 750 * RT_NS_PER_US;
	if (!s->wakeup_gran_ns)
		s->wakeup_gran_ns = 1 * RT_NS_PER_MS;
	s->latency_ns *= factor;
	s->min_gran_ns *= factor;
	s->wakeup_gran_ns *= factor;
}

int rt_sim_init(struct rt_world *w)
{
	w->w_ncpus = w->w_opts.ncpus ? w->w_opts.ncpus : 2;
	w->w_sched = w->w_opts.sched;
	rt_sched_resolve(&w->w_sched, w->w_ncpus);
	w->w_cpu_free = calloc(w->w_ncpus, sizeof(w->w_cpu_free[0]));
	w->w_cpu_curr = calloc(w->w_ncpus, sizeof(w->w_cpu_curr[0]));
	if (!w->w_cpu_free || !w->w_cpu_curr) {
		free(w->w_cpu_free);
		free(w->w_cpu_curr);
		return -ENOMEM;
	}
	return 0;
}

void rt_sim_release(struct rt_world *w)
{
	free(w->w_runq);
	free(w->w_timers);
	free(w->w_cfsq);
	free(w->w_cpu_free);
	free(w->w_cpu_curr);
}

void rt_world_cpu_stats(const rt_world *w, struct rt_cpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (w->w_kind != RT_WORLD_SIM)
		return;
	rt_world_lock(w);
	*out = w->w_cpu_stats;
	rt_world_unlock(w);
}

void rt_world_thread_cpu_stats(const rt_world *w, const char *name, uint64_t *run_delay_ns,
			       uint64_t *exec_ns)
{
	const struct rt_thread *t;

	*run_delay_ns = *exec_ns = 0;
	if (w->w_kind != RT_WORLD_SIM)
		return;
	rt_world_lock(w);
	RT_LIST_FOR_EACH(t, &w->w_all, const struct rt_thread, t_all) {
		if (strcmp(t->t_name, name) == 0) {
			*run_delay_ns += t->t_run_delay;
			*exec_ns += t->t_exec;
		}
	}
	rt_world_unlock(w);
}

void rt_self_cpu_stats(uint64_t *run_delay_ns, uint64_t *exec_ns)
{
	struct rt_thread *self;

	*run_delay_ns = *exec_ns = 0;
	if (!rt_in_sim())
		return;
	self = sim_enter();
	*run_delay_ns = self->t_run_delay;
	*exec_ns = self->t_exec;
	sim_leave(self);
}

/* Room in the run queue and the timer heap for n live threads. */
static int __sim_reserve(struct rt_world *w, size_t n)
{
	size_t cap = w->w_cap ? w->w_cap : 16;
	struct rt_thread **q;

	if (n <= w->w_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	q = realloc(w->w_runq, cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	w->w_runq = q;
	q = realloc(w->w_timers, cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	w->w_timers = q;
	q = realloc(w->w_cfsq, cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	w->w_cfsq = q;
	w->w_cap = cap;
	return 0;
}

static void __sim_exit(struct rt_world *w, struct rt_thread *t)
{
	if (t->t_cpu >= 0)
		__cfs_release(w, t);
	t->t_exited = true;
	t->t_state = RT_T_EXITED;
	ASSERT(w->w_live > 0);
	w->w_live--;
	if (t->t_joiner)
		__sim_wake(w, t->t_joiner);
	__sim_let_go(w);
}

static void *rt_sim_trampoline(void *arg)
{
	struct rt_thread *t = arg;
	struct rt_world *w = t->t_world;

	rt_cur = t;
	pthread_setname_np(pthread_self(), t->t_name);
	sim_wait_baton(t);

	t->t_fn(t->t_arg);
	__rt_exit_callbacks(); /* still holding the baton: deterministic */

	/* Once the baton is passed on, a joiner may free t: hands off. */
	rt_world_lock(w);
	__sim_exit(w, t);
	return NULL;
}

static int __sim_start(struct rt_world *w, struct rt_thread *t)
{
	int rc = __sim_reserve(w, (size_t)w->w_live + 1);

	if (rc)
		return rc;
	t->t_index = w->w_created;
	t->t_pid = 1000 + (int)t->t_index;
	t->t_cpu = -1;
	t->t_state = RT_T_RUNNABLE;
	rc = pthread_create(&t->t_pthread, NULL, rt_sim_trampoline, t);
	if (rc)
		return -rc;
	w->w_created++;
	w->w_live++;
	__rt_link_thread(w, t);
	__sim_runq_insert(w, t);
	return 0;
}

int rt_sim_create(struct rt_world *w, struct rt_thread *t)
{
	struct rt_thread *self = sim_enter();
	int rc;

	ASSERT(self->t_world == w);
	rc = __sim_start(w, t);
	sim_leave(self);
	return rc;
}

int rt_sim_join(struct rt_thread *t)
{
	struct rt_world *w = t->t_world;
	struct rt_thread *self;

	if (!rt_cur || rt_cur->t_world != w)
		return -EINVAL;
	self = sim_enter();
	if (t->t_joiner) {
		sim_leave(self);
		return -EINVAL;
	}
	if (!t->t_exited) {
		t->t_joiner = self;
		__sim_block(w, self, RT_WAIT_JOIN, t, UINT64_MAX);
	}
	ASSERT(t->t_exited);
	__rt_unlink_thread(w, t);
	sim_leave(self);
	/* t only has to return from its trampoline: a short real wait. */
	pthread_join(t->t_pthread, NULL);
	rt_thread_destroy(t);
	return 0;
}

int rt_sim_run(struct rt_world *w, struct rt_thread *t)
{
	int rc;

	ASSERT(!rt_cur || rt_cur->t_world != w);
	rt_world_lock(w);
	ASSERT(w->w_live == 0 && w->w_running == NULL);
	rc = __sim_start(w, t);
	if (rc) {
		rt_world_unlock(w);
		rt_thread_destroy(t);
		return rc;
	}
	__sim_let_go(w);
	rt_world_lock(w);
	while (w->w_live > 0)
		pthread_cond_wait(&w->w_cond, &w->w_lock);
	__rt_reap_all(w);
	rt_world_unlock(w);
	return 0;
}

void rt_sim_yield(void)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;

	self->t_state = RT_T_RUNNABLE;
	__sim_runq_insert(w, self);
	__sim_switch(w, self);
	sim_leave(self);
}

/* ---- time ------------------------------------------------------------- */

void rt_sim_sleep_until(uint64_t deadline_ns)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;

	/* UINT64_MAX sets no timer: a sleep forever, which only a deadlock
	 * report can end. */
	if (deadline_ns > w->w_now)
		__sim_block(w, self, RT_WAIT_SLEEP, NULL, deadline_ns);
	sim_leave(self);
}

/*
 * N virtual CPUs, each remembered by the time it becomes free. The thread
 * takes the one that frees earliest (the lowest index on a tie), holds it
 * for ns from then, and is blocked until the slice ends: so threads that
 * charge CPU at once are served N at a time.
 */
void rt_sim_cpu(uint64_t ns)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;
	unsigned best = 0;
	uint64_t start, end;

	if (cfs(w)) {
		if (!self->t_task && self->t_spin_held) {
			/* not a task yet, in atomic context: it cannot queue
			 * for a CPU now; the burst runs, a task it becomes at
			 * its next rt_cpu */
			w->w_cpu_stats.busy_ns += ns;
			__sim_block(w, self, RT_WAIT_SLEEP, NULL, w->w_now + ns);
		} else if (!self->t_task) {
			__cfs_become_task(w, self, ns);
			__sim_switch(w, self);
		} else {
			ASSERT(self->t_cpu >= 0);
			__cfs_wait_cpu(self, ns);
			if (self->t_resched && !self->t_spin_held)
				__cfs_give_up(w, self);
			else
				__cfs_seg_start(w, self);
			__sim_switch(w, self);
		}
		sim_leave(self);
		return;
	}
	w->w_cpu_stats.busy_ns += ns;

	for (unsigned i = 1; i < w->w_ncpus; i++)
		if (w->w_cpu_free[i] < w->w_cpu_free[best])
			best = i;
	start = w->w_cpu_free[best] > w->w_now ? w->w_cpu_free[best] : w->w_now;
	end = ns > UINT64_MAX - 1 - start ? UINT64_MAX - 1 : start + ns;
	w->w_cpu_free[best] = end;
	__sim_block(w, self, RT_WAIT_CPU, &w->w_cpu_free[best], end);
	sim_leave(self);
}

void rt_sim_task(void)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;

	if (cfs(w) && !self->t_task && !self->t_spin_held) {
		__cfs_become_task(w, self, 0);
		__sim_switch(w, self);
	}
	sim_leave(self);
}

/* ---- mutexes and condition variables ---------------------------------- */

static void __sim_mutex_lock(struct rt_world *w, rt_mutex *m, struct rt_thread *self)
{
	bool spin = cfs(w) && m->m_spin;

	if (!m->m_owner) {
		m->m_owner = self;
		self->t_spin_held += spin;
		return;
	}
	ASSERT(m->m_owner != self); /* recursive locking is a bug */
	waitq_push(&m->m_waiters, self);
	/* spins on its CPU (CPU time, not preemptible) while the owner runs
	 * on one; sleeps otherwise */
	if (spin && self->t_cpu >= 0 && m->m_owner->t_cpu >= 0) {
		self->t_spinning = true;
		self->t_seg_start = w->w_now;
	}
	__sim_block(w, self, RT_WAIT_MUTEX, m, UINT64_MAX);
	if (self->t_spinning)
		__cfs_spin_end(w, self);
	ASSERT(m->m_owner == self);
	self->t_spin_held += spin;
}

/* Ownership passes straight to the first waiter, so no barging: FIFO. */
static void __sim_mutex_unlock(struct rt_world *w, rt_mutex *m, struct rt_thread *self)
{
	struct rt_thread *next;

	if (cfs(w) && m->m_spin) {
		ASSERT(self->t_spin_held > 0);
		self->t_spin_held--;
	}
	ASSERT(m->m_owner == self);
	next = waitq_pop(&m->m_waiters);
	m->m_owner = next;
	if (next)
		__sim_wake(w, next);
}

void rt_sim_mutex_lock(rt_mutex *m)
{
	struct rt_thread *self = sim_enter();

	__sim_adopt_mutex(self->t_world, m);
	__sim_mutex_lock(self->t_world, m, self);
	sim_leave(self);
}

int rt_sim_mutex_trylock(rt_mutex *m)
{
	struct rt_thread *self = sim_enter();
	int rc = -EBUSY;

	__sim_adopt_mutex(self->t_world, m);
	if (!m->m_owner) {
		m->m_owner = self;
		rc = 0;
	}
	sim_leave(self);
	return rc;
}

void rt_sim_mutex_unlock(rt_mutex *m)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;

	__sim_mutex_unlock(w, m, self);
	/* preempt_enable: a preemption asked for meanwhile happens now */
	if (self->t_resched && self->t_cpu >= 0 && !self->t_spin_held) {
		__cfs_wait_cpu(self, 0);
		__cfs_give_up(w, self);
		__sim_switch(w, self);
	}
	sim_leave(self);
}

int rt_sim_cond_wait(rt_cond *c, rt_mutex *m, uint64_t deadline_ns)
{
	struct rt_thread *self = sim_enter();
	struct rt_world *w = self->t_world;
	int rc;

	ASSERT(m->m_owner == self);
	__sim_adopt_cond(w, c);
	if (deadline_ns <= w->w_now) {
		sim_leave(self);
		return -ETIMEDOUT;
	}
	self->t_timed_out = false;
	waitq_push(&c->c_waiters, self);
	__sim_mutex_unlock(w, m, self);
	__sim_block(w, self, RT_WAIT_COND, c, deadline_ns);
	rc = self->t_timed_out ? -ETIMEDOUT : 0;
	__sim_mutex_lock(w, m, self);
	sim_leave(self);
	return rc;
}

void rt_sim_cond_wake(rt_cond *c, bool all)
{
	struct rt_thread *self = sim_enter();
	struct rt_thread *t;

	__sim_adopt_cond(self->t_world, c);
	while ((t = waitq_pop(&c->c_waiters)) != NULL) {
		__sim_wake(self->t_world, t);
		if (!all)
			break;
	}
	sim_leave(self);
}

/* ---- the deadlock report ----------------------------------------------- */

static void sim_describe_wait(const struct rt_world *w, const struct rt_thread *t)
{
	const rt_mutex *m;
	const struct rt_thread *o;

	switch (t->t_wait) {
	case RT_WAIT_MUTEX:
		m = t->t_wait_obj;
		fprintf(stderr, "mutex '%s' held by '%s' (pid %d)",
			m->m_name ? m->m_name : "?",
			m->m_owner ? m->m_owner->t_name : "nobody",
			m->m_owner ? m->m_owner->t_pid : 0);
		break;
	case RT_WAIT_COND:
		fprintf(stderr, "cond '%s'",
			((const rt_cond *)t->t_wait_obj)->c_name ?
				((const rt_cond *)t->t_wait_obj)->c_name : "?");
		break;
	case RT_WAIT_JOIN:
		o = t->t_wait_obj;
		fprintf(stderr, "join of '%s' (pid %d)", o->t_name, o->t_pid);
		break;
	case RT_WAIT_SLEEP:
		fprintf(stderr, "sleep forever");
		break;
	case RT_WAIT_CPU:
		fprintf(stderr, "a CPU (%s)", t->t_queued ? "queued" : "running a burst");
		break;
	default:
		fprintf(stderr, "state %d, wait %d", (int)t->t_state, (int)t->t_wait);
		break;
	}
	(void)w;
}

static _Noreturn void __sim_deadlock(struct rt_world *w)
{
	fprintf(stderr,
		"ujbd rt: sim deadlock at %llu ns (seed %llu): %u thread(s) "
		"blocked, none runnable, no timer pending\n",
		(unsigned long long)w->w_now, (unsigned long long)w->w_opts.seed,
		w->w_live);
	const struct rt_thread *t;

	RT_LIST_FOR_EACH(t, &w->w_all, const struct rt_thread, t_all) {
		if (t->t_exited)
			continue;
		fprintf(stderr, "  thread '%s' (pid %d) waits on ", t->t_name, t->t_pid);
		sim_describe_wait(w, t);
		fputc('\n', stderr);
	}
	fflush(stderr);
	abort();
}

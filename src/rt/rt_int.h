/*
 * rt internals: the world and thread structures shared by the files of
 * src/rt/. Nothing outside src/rt/ includes this.
 *
 * One idea to hold on to: every world has one internal lock, w_lock. In the
 * real world it guards only the world's bookkeeping (thread list, live count,
 * PRNG, hash). In the sim world it is also the baton: a sim thread touches
 * scheduler state (run queue, timers, sim mutex and cond queues, virtual
 * time) only with w_lock held, and hands the baton over by posting the next
 * thread's t_go semaphore before it waits on its own. Because every hand-off
 * is a post/wait pair (and scheduler state is only touched under w_lock),
 * user data touched by consecutive baton holders is ordered for the memory
 * model (and for TSan) without any further locking.
 *
 * Lock order: w_lock is a leaf; it is never held across a call into user code
 * (on_event callbacks are the documented exception: they must not call rt_*).
 */
#ifndef UJBD_RT_INT_H
#define UJBD_RT_INT_H

#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt/assert.h"
#include "priv/list.h"
#include "priv/rt.h"

/* What a sim thread is blocked on (for the deadlock report and timeouts). */
enum rt_wait {
	RT_WAIT_NONE = 0,
	RT_WAIT_MUTEX,
	RT_WAIT_COND,
	RT_WAIT_SLEEP,
	RT_WAIT_JOIN,
	RT_WAIT_CPU,
	RT_WAIT_START,
};

enum rt_tstate {
	RT_T_RUNNABLE = 0,
	RT_T_RUNNING,
	RT_T_BLOCKED,
	RT_T_EXITED,
};

#define RT_MAX_CPUS 256

struct rt_thread {
	struct rt_world *t_world;
	char t_name[RT_NAME_MAX];
	void (*t_fn)(void *);
	void *t_arg;
	pthread_t t_pthread;
	int t_pid;           /* [w_lock] real: 0 until the thread has started */
	unsigned t_index;    /* creation index within the world */
	uint16_t t_ioprio;   /* [owner thread] */
	bool t_exited;       /* [w_lock] */
	struct rt_link t_all;  /* [w_lock] on the world's w_all */

	/* sim only, all [w_lock] */
	enum rt_tstate t_state;
	enum rt_wait t_wait;
	const void *t_wait_obj;    /* mutex, cond or thread waited on */
	uint64_t t_wait_until;     /* sleep, cpu or timed wait deadline */
	struct rt_link t_qlink;    /* on a mutex's or cond's wait queue */
	struct rt_thread *t_joiner;
	sem_t t_go;                /* posted when the baton is handed over */
	bool t_timed_out;
	size_t t_heap_idx;         /* position in w_timers, SIZE_MAX if none */
	uint64_t t_timer_seq;

	/* sim CFS (struct rt_sched), all [w_lock] */
	bool t_task;               /* competes for the CPUs */
	int t_cpu;                 /* the CPU it holds, -1 none */
	bool t_queued;             /* on w_cfsq, waiting for a CPU */
	bool t_in_seg;             /* a burst segment runs (its timer is set) */
	bool t_resched;            /* give up the CPU at the next chance */
	bool t_spinning;           /* waits for a spin mutex on its CPU */
	unsigned t_spin_held;      /* spin mutexes held */
	uint64_t t_vruntime;
	uint64_t t_burst_left;     /* of the rt_cpu burst under way */
	uint64_t t_seg_start;      /* the segment's or the spin's start */
	uint64_t t_slice_exec;     /* CPU time since it took its CPU */
	uint64_t t_queued_at;
	uint64_t t_run_delay, t_exec;
};

struct rt_world {
	enum rt_world_kind w_kind;
	struct rt_world_opts w_opts;
	pthread_mutex_t w_lock;
	pthread_cond_t w_cond;  /* [w_lock] live count reaches 0, a pid is set */
	struct rt_prng w_prng;  /* [w_lock] rt_rand() */
	uint64_t w_hash;        /* [w_lock] FNV-1a of the event log */
	unsigned w_live;        /* [w_lock] threads started, not yet exited */
	unsigned w_created;     /* [w_lock] threads ever created */
	struct rt_link w_all;   /* [w_lock] threads not yet freed (t_all) */
	bool w_static;          /* the default real world: never freed */

	/* sim only, all [w_lock] */
	struct rt_prng w_sched_prng;
	uint64_t w_now;
	uint64_t w_switches;
	struct rt_thread *w_running; /* baton holder, NULL when none */
	struct rt_thread *w_last;    /* the last thread that held the baton */
	struct rt_thread **w_runq;   /* runnable, by creation index */
	size_t w_nrunq;
	struct rt_thread **w_timers; /* min-heap by (t_wait_until, t_timer_seq) */
	size_t w_ntimers;
	size_t w_cap;                /* capacity of w_runq and w_timers */
	uint64_t w_timer_seq;
	unsigned w_ncpus;
	uint64_t *w_cpu_free;        /* FIFO: when each virtual CPU becomes free */
	struct rt_sched w_sched;     /* resolved */
	struct rt_thread **w_cpu_curr; /* CFS: the task holding each CPU */
	struct rt_thread **w_cfsq;   /* CFS: tasks waiting, by (vruntime, index) */
	size_t w_ncfsq;
	uint64_t w_min_vruntime;
	struct rt_cpu_stats w_cpu_stats;
};

/* No thread waits on q (all zeroes: never waited on). */
static inline bool rt_waitq_idle(const rt_waitq *q)
{
	return !q->q_head.next || rt_list_empty(&q->q_head);
}

/* The calling thread's rt thread (NULL for a foreign thread). */
extern _Thread_local struct rt_thread *rt_cur;
/* The process's default real world. */
struct rt_world *rt_default_world(void);

static inline struct rt_world *rt_cur_world(void)
{
	return rt_cur ? rt_cur->t_world : rt_default_world();
}

static inline bool rt_in_sim(void)
{
	return rt_cur && rt_cur->t_world->w_kind == RT_WORLD_SIM;
}

/* world.c */
void rt_world_lock(const struct rt_world *w);
void rt_world_unlock(const struct rt_world *w);
/* Fold an event into the hash and call on_event; w_lock held. */
void __rt_log(struct rt_world *w, char tag, const char *thread,
	      const char *what, const void *data, size_t len);
void __rt_link_thread(struct rt_world *w, struct rt_thread *t);
void __rt_unlink_thread(struct rt_world *w, struct rt_thread *t);
/* Join and free every thread still linked to w, once all have exited (no one
 * can be joining any more). Called and returns with w_lock held; drops it
 * around each pthread_join. */
void __rt_reap_all(struct rt_world *w);
struct rt_thread *rt_thread_alloc(struct rt_world *w, const char *name,
				  void (*fn)(void *), void *arg);
void rt_thread_destroy(struct rt_thread *t);

/* real.c */
int rt_real_create(struct rt_world *w, struct rt_thread *t);
int rt_real_join(struct rt_thread *t);
int rt_real_run(struct rt_world *w, struct rt_thread *t);
uint64_t rt_real_now_ns(void);
void rt_real_sleep_until(uint64_t deadline_ns);

/* sim.c: the baton scheduler */
int rt_sim_init(struct rt_world *w);
void rt_sim_release(struct rt_world *w);
int rt_sim_create(struct rt_world *w, struct rt_thread *t);
int rt_sim_join(struct rt_thread *t);
int rt_sim_run(struct rt_world *w, struct rt_thread *t);
void rt_sim_yield(void);
void rt_sim_sleep_until(uint64_t deadline_ns);
void rt_sim_cpu(uint64_t ns);
void rt_sim_task(void);
void rt_sim_mutex_lock(rt_mutex *m);
int rt_sim_mutex_trylock(rt_mutex *m);
void rt_sim_mutex_unlock(rt_mutex *m);
int rt_sim_cond_wait(rt_cond *c, rt_mutex *m, uint64_t deadline_ns);
void rt_sim_cond_wake(rt_cond *c, bool all);

/* thread.c: run the calling thread's rt_at_thread_exit callbacks now (an
 * rt thread whose function returned). */
void __rt_exit_callbacks(void);

/* prng.c */
uint64_t rt_splitmix64(uint64_t *x);
/* len bytes from the kernel's getrandom: 0 or -errno. */
int rt_getrandom(void *buf, size_t len);

#endif

/*
 * ujbd runtime: threads, locks, condition variables, time, I/O priority and
 * randomness, in two worlds.
 *
 * Everything above this layer blocks, waits, reads the clock and draws random
 * numbers only through rt_*. That one rule lets the same journal, block layer
 * and workloads run in
 *
 *   - the REAL world: pthreads, CLOCK_MONOTONIC, ioprio_set(2) on the thread;
 *   - the SIM world: every rt thread is still a pthread, but a baton lets
 *     exactly one of them run at a time. A thread runs until it blocks (a
 *     mutex held by another thread, a condition wait, a sleep, a join, charged
 *     CPU time); the scheduler then hands the baton to a runnable thread chosen
 *     by the world's seeded PRNG. When none is runnable, virtual time jumps to
 *     the earliest pending timer (sleeps, timed waits, CPU slices; ties in
 *     insertion order). A sim run is a pure function of seed, binary and
 *     inputs.
 *
 * Worlds. Each rt thread belongs to one world, inherited from the thread that
 * created it. A thread that rt did not create (main, say) belongs to the
 * process's default real world. rt_world_run() starts a first thread in a
 * given world and returns when every thread of that world has exited.
 *
 * Objects (rt_mutex, rt_cond) belong to the world of the thread that
 * initialised them and may be used only by threads of that world. (Each
 * call is dispatched on the CALLER's world, and every object carries both a
 * pthread object and the sim queues, so an object initialised by main before
 * a sim run may be used inside that run; never by two worlds at once.)
 *
 * Lock order: the runtime's own locks are internal and never held across a
 * call back into user code.
 *
 * Errors: functions return 0 or a negative errno. They never print, except
 * the sim deadlock report, which prints every thread and what it waits on to
 * stderr and then aborts: a deadlocked deterministic run can only be a bug;
 * and the report of a failed assertion (below), for the same reason.
 *
 * Internal to ujbd, not installed: the lab's simulated world and the
 * library's own threads; a program calls ujbd from its own threads and never
 * needs rt (docs/library.md).
 */
#ifndef UJBD_RT_H
#define UJBD_RT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "priv/list.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_world rt_world;
typedef struct rt_thread rt_thread;

enum rt_world_kind {
	RT_WORLD_REAL = 0,
	RT_WORLD_SIM = 1,
};

/*
 * How a sim world's virtual CPUs are shared (real worlds have real CPUs).
 *
 * FIFO (the default): rt_cpu bursts are served first come, first served on
 * the CPU that frees earliest, never preempted; everything else a thread
 * does costs no time and needs no CPU.
 *
 * CFS: the CPUs are shared the way Linux's CFS (2.6.23-4.x, equal weights)
 * shares them among the threads that compete for them, the "tasks": a
 * thread becomes one by calling rt_cpu or rt_task. A task runs its code only
 * while it holds a CPU; woken from any wait it queues for one (by virtual
 * runtime, a sleeper placed at most latency/2 behind the queue's minimum,
 * a new task a slice after it) and takes an idle CPU or preempts the
 * running task furthest ahead when it is more than wakeup_gran behind it
 * (at that task's next rt_cpu, block or spin-lock release when it is not in
 * a burst). A burst runs for its slice (latency shared by the CPU's tasks,
 * at least min_gran) and yields at its end to a task further behind. A
 * task spinning on or holding a spin mutex (rt_mutex_spin) keeps its CPU and
 * cannot be preempted; spinning is CPU time. Threads that never become
 * tasks (devices, timers) need no CPU, as in FIFO.
 */
enum rt_sched_kind {
	RT_SCHED_FIFO = 0,
	RT_SCHED_CFS = 1,
};

struct rt_sched {
	enum rt_sched_kind kind;
	/* CFS tunables, normalized (the kernel's normalized_sysctl_sched_*:
	 * 0 = its defaults, 6 ms, 0.75 ms, 1 ms); the world runs them times
	 * 1 + ilog2(min(ncpus, 8)), as sched_tunable_scaling=1 (the
	 * default) scales them */
	uint64_t latency_ns, min_gran_ns, wakeup_gran_ns;
};

/* The tunables a world of ncpus CPUs runs: defaults for 0 fields, then
 * each times the scaling factor. */
void rt_sched_resolve(struct rt_sched *s, unsigned ncpus);

/* A sim world's CPU accounting (zeros in the real world): CPU time run by
 * tasks and bursts, time tasks waited runnable for a CPU (run delay), time
 * spent spinning, preemptions. */
struct rt_cpu_stats {
	uint64_t busy_ns, run_delay_ns, spin_ns;
	uint64_t preemptions, wakeup_preemptions;
};
void rt_world_cpu_stats(const rt_world *w, struct rt_cpu_stats *out);
/* The calling thread's run delay and CPU time so far (sim CFS; zeros otherwise). */
void rt_self_cpu_stats(uint64_t *run_delay_ns, uint64_t *exec_ns);
/* The same summed over the world's live threads named name (sim; zeros
 * otherwise): how long a kind of thread waited for a CPU. */
void rt_world_thread_cpu_stats(const rt_world *w, const char *name, uint64_t *run_delay_ns,
			       uint64_t *exec_ns);

struct rt_world_opts {
	enum rt_world_kind kind;
	/* Seeds the world's PRNG (and the sim scheduler): a sim world is a
	 * function of it. A real world given 0 (and the default world, always)
	 * is seeded from getrandom instead, so two programs never draw the
	 * same numbers. */
	uint64_t seed;
	unsigned ncpus;    /* sim: virtual CPUs for rt_cpu(); 0 means 2 */
	struct rt_sched sched; /* sim: how the CPUs are shared (FIFO) */
	/* sim: called for each scheduling event (context switch, time jump,
	 * rt_event()); may be NULL. Must not call rt_* functions. what is
	 * "switch" (thread: the new baton holder), "time" (thread: "") or the
	 * rt_event() string (thread: the caller). Real world: rt_event() only. */
	void (*on_event)(void *arg, uint64_t now_ns, const char *thread,
			 const char *what);
	void *on_event_arg;
};

/* Create a world. Returns 0 or -ENOMEM/-EINVAL. */
int rt_world_new(const struct rt_world_opts *opts, rt_world **out);
/* Free a world whose threads have all exited. */
void rt_world_free(rt_world *w);
/*
 * Run fn(arg) as the first thread of world w, named name, and return when it
 * and every thread it (transitively) created have exited. May be called
 * again on the same world afterwards; virtual time and the PRNG carry on.
 * In the sim world a deadlock (no runnable thread, no pending timer, threads
 * still blocked) prints the deadlock report and aborts. Threads nobody joined
 * are reaped before it returns (their handles are then invalid); on the
 * default real world only the first thread is. Must not be called by a
 * thread of w itself.
 */
int rt_world_run(rt_world *w, const char *name, void (*fn)(void *), void *arg);
/* The world of the calling thread (the default real world for foreign threads). */
rt_world *rt_world_current(void);
enum rt_world_kind rt_world_kind(const rt_world *w);
/*
 * A 64-bit FNV-1a hash over the world's event log: every context switch
 * (thread name), time jump (new time) and rt_event() string, in order. Two
 * sim runs with the same seed, binary and inputs have the same hash. In the
 * real world it hashes only rt_event() strings.
 */
uint64_t rt_world_hash(const rt_world *w);
/* Number of context switches in a sim world so far (0 in the real world). */
uint64_t rt_world_switches(const rt_world *w);

/* Mix a caller-defined event into the world's log and hash. */
void rt_event(const char *what);

/* ---- threads ---------------------------------------------------------- */

#define RT_NAME_MAX 16 /* including the NUL, as Linux's comm */

/*
 * Start a thread running fn(arg), named name (truncated to 15 characters),
 * in the caller's world, with the caller's I/O priority. In the sim world
 * the new thread is runnable but the caller keeps the baton.
 */
int rt_thread_create(rt_thread **out, const char *name, void (*fn)(void *),
		     void *arg);
/* Wait for t to exit and free it. Blocks (a scheduling point in sim). */
int rt_thread_join(rt_thread *t);
/* The calling rt thread (NULL for a foreign thread outside any run). */
rt_thread *rt_self(void);
/* Name of a thread; rt_self_name() works for foreign threads too ("main"). */
const char *rt_thread_name(const rt_thread *t);
const char *rt_self_name(void);
/* A pid for traces: the kernel tid in the real world, a deterministic
 * number (1000 + creation index) in the sim world. */
int rt_thread_pid(const rt_thread *t);
int rt_self_pid(void);
/* Give up the baton (sim: the scheduler picks again, maybe the caller);
 * sched_yield in real. A yield never advances virtual time: to poll in sim,
 * sleep (rt_sleep_ns) rather than spin on rt_yield. */
void rt_yield(void);
/*
 * Run fn(arg) when the calling thread exits, newest first: an rt thread
 * runs them when its function returns (in the sim world while it still
 * holds the baton, so they are part of the deterministic run; they must
 * not block); a foreign thread when it ends through its start routine or
 * pthread_exit (not the process's main thread at exit). 0 or -ENOMEM.
 */
int rt_at_thread_exit(void (*fn)(void *), void *arg);

/* ---- mutexes and condition variables ---------------------------------- */

/* A sim wait queue: threads (their t_qlink), FIFO. All zeroes (a mutex or
 * cond just initialised, or never waited on) is an empty queue too. */
typedef struct rt_waitq {
	struct rt_link q_head;
} rt_waitq;

typedef struct rt_mutex {
	pthread_mutex_t m_real;    /* real world */
	struct rt_world *m_world;
	struct rt_thread *m_owner; /* sim: holder, NULL if free */
	rt_waitq m_waiters;        /* sim: blocked lockers, FIFO */
	const char *m_name;        /* for the deadlock report */
	const void *m_holder;      /* both worlds: the holder's token, for
				    * rt_mutex_held; atomic, relaxed */
	bool m_spin;               /* sim CFS: a spin lock (rt_mutex_spin) */
} rt_mutex;

typedef struct rt_cond {
	pthread_cond_t c_real;     /* real world, CLOCK_MONOTONIC */
	struct rt_world *c_world;
	rt_waitq c_waiters;        /* sim */
	const char *c_name;
} rt_cond;

/* name must outlive the object (a string literal, typically). In sim, lock
 * blocks (a scheduling point) only when the mutex is held; unlock hands it
 * straight to the first waiter (FIFO); unlock, signal and broadcast never
 * give up the baton. Misuse fails an assertion (see rt_set_assert_hook) in
 * both worlds: locking a mutex the caller already holds, unlocking or
 * waiting on one it does not hold, releasing one that is held. */
int rt_mutex_init(rt_mutex *m, const char *name);
void rt_mutex_release(rt_mutex *m);
void rt_mutex_lock(rt_mutex *m);
/* 0 if taken, -EBUSY if held by someone else. */
int rt_mutex_trylock(rt_mutex *m);
void rt_mutex_unlock(rt_mutex *m);
/* True when the calling thread holds m (any thread, rt or foreign, in
 * either world). Cheap (one relaxed load), meant for assertions such as
 * ASSERT(rt_mutex_held(&j->j_state_lock)) in the __-prefixed functions.
 * False does not mean that another thread holds it. */
bool rt_mutex_held(const rt_mutex *m);
/* Mark m a spin lock, as the kernel's lock it stands for is: under the sim
 * CFS model its waiters spin on their CPUs and its holder is not preempted
 * (see struct rt_sched). Nothing elsewhere. Call before first use. */
void rt_mutex_spin(rt_mutex *m);

int rt_cond_init(rt_cond *c, const char *name);
void rt_cond_release(rt_cond *c);
/* Wait with m held; m is held again on return. Spurious wakeups allowed. */
void rt_cond_wait(rt_cond *c, rt_mutex *m);
/* As rt_cond_wait, until the absolute time deadline_ns (rt_now_ns scale).
 * Returns 0 when signalled, -ETIMEDOUT when the deadline passed. In sim a
 * deadline not after now returns -ETIMEDOUT at once (m stays held); a later
 * one times out at exactly deadline_ns of virtual time. Sim wakeups are
 * FIFO and never spurious; a signalled waiter re-takes m like any locker. */
int rt_cond_timedwait(rt_cond *c, rt_mutex *m, uint64_t deadline_ns);
void rt_cond_signal(rt_cond *c);
void rt_cond_broadcast(rt_cond *c);

/* ---- assertions ------------------------------------------------------- */

/*
 * Every layer of ujbd checks the invariants of its own code with one
 * assertion, compiled in regardless of NDEBUG. When one fails, the library
 * calls the hook with the source file, the line and the text of the failed
 * expression, then abort()s. Without a hook it prints one line to stderr,
 * "ujbd: assertion failed: EXPR (file:line)" — the only output the library
 * makes on its own besides the sim deadlock report.
 *
 * A failed assertion is a bug in ujbd, or a documented misuse (stopping a
 * handle twice, unlocking a mutex one does not hold); bad bytes on a disk or
 * bad arguments that can be checked are reported as errno values, never
 * through this hook.
 *
 * The hook runs on the failing thread, possibly with library locks held: it
 * may log and flush, it must not call back into ujbd. If it returns, abort()
 * follows; it may also end the process itself (_exit). An assertion failing
 * inside the hook goes straight to abort(). Set it before starting threads;
 * fn NULL restores the default report.
 */
typedef void (*rt_assert_fn)(const char *file, int line, const char *expr,
			     void *arg);
void rt_set_assert_hook(rt_assert_fn fn, void *arg);

/* ---- time ------------------------------------------------------------- */

#define RT_NS_PER_US 1000ull
#define RT_NS_PER_MS 1000000ull
#define RT_NS_PER_S 1000000000ull

/* Monotonic time in ns: CLOCK_MONOTONIC (real) or virtual time (sim, from 0). */
uint64_t rt_now_ns(void);
/* The time of day in ns since 1970 for what goes on disk (a commit
 * block's time): CLOCK_REALTIME (real) or virtual time (sim, from 0, so a
 * simulated run stays a function of its seed). Never for intervals. */
uint64_t rt_wall_ns(void);
/* Sleep ns (a timer event in sim). rt_sleep_until takes an absolute time. */
void rt_sleep_ns(uint64_t ns);
void rt_sleep_until(uint64_t deadline_ns);
/*
 * Charge ns of CPU time to the calling thread. Sim: the thread waits for one
 * of the world's virtual CPUs, then holds it for ns of virtual time (so
 * threads contend for N CPUs). Real: nothing (the CPU is real).
 */
void rt_cpu(uint64_t ns);
/* The calling thread competes for the virtual CPUs from now on (sim CFS: it
 * may wait for one now); nothing elsewhere. rt_cpu makes a thread a task
 * too; rt_task is for threads whose CPU time is not charged (a kernel
 * thread woken to do work that costs nothing here) but who must still be
 * scheduled. */
void rt_task(void);

/* ---- I/O priority ----------------------------------------------------- */

/* The kernel's encoding: class in bits 13-15, level in bits 0-12. */
enum rt_ioprio_class {
	RT_IOPRIO_CLASS_NONE = 0,
	RT_IOPRIO_CLASS_RT = 1,
	RT_IOPRIO_CLASS_BE = 2,
	RT_IOPRIO_CLASS_IDLE = 3,
};
#define RT_IOPRIO_CLASS_SHIFT 13
#define RT_IOPRIO_LEVELS 8
#define RT_IOPRIO(cls, level) \
	((uint16_t)(((unsigned)(cls) << RT_IOPRIO_CLASS_SHIFT) | (unsigned)(level)))
#define RT_IOPRIO_CLASS(prio) ((unsigned)(prio) >> RT_IOPRIO_CLASS_SHIFT)
#define RT_IOPRIO_LEVEL(prio) ((unsigned)(prio) & ((1u << RT_IOPRIO_CLASS_SHIFT) - 1))
/* What a thread that never set a priority reads back: NONE/4. */
#define RT_IOPRIO_DEFAULT RT_IOPRIO(RT_IOPRIO_CLASS_NONE, 4)

/*
 * Set the calling thread's I/O priority. Always recorded for rt (the block
 * layer reads it with rt_ioprio_get). Real world: also ioprio_set(2) on the
 * thread's tid so the kernel's bfq and mq-deadline see it; if the kernel
 * refuses (EPERM for RT without CAP_SYS_NICE, say), the priority is still
 * recorded and the kernel's errno is returned negated, so the caller can
 * report it and carry on. -EINVAL for a malformed value (level > 7, NONE
 * with a level other than 0 or 4, unknown class). NONE is passed to the
 * kernel as 0. Sim world: recorded only, returns 0.
 */
int rt_ioprio_set(uint16_t ioprio);
uint16_t rt_ioprio_get(void);
/* Parse "rt:4", "be:0", "idle", "none" (and "idle:7"). 0 or -EINVAL. */
int rt_ioprio_parse(const char *s, uint16_t *out);
/* Format as "rt:4", "be:3", "idle", "none" into buf (at least 8 bytes). */
const char *rt_ioprio_str(uint16_t ioprio, char *buf, size_t len);

/* ---- randomness ------------------------------------------------------- */

/* The calling thread's world's PRNG (xoshiro256**, seeded by the world
 * seed through splitmix64). Thread-safe; deterministic in the sim world. */
uint64_t rt_rand(void);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t rt_rand_below(uint64_t n);
/* len random bytes for identifiers (UUIDs): from the kernel (getrandom) in
 * the real world, unpredictable; from the world's PRNG in the sim world,
 * so that a sim run stays a function of its seed. 0, or -errno when the
 * kernel has none to give (nothing else is used in its place). */
int rt_random_bytes(void *buf, size_t len);
/* A random RFC 4122 version 4 UUID in u (rt_random_bytes, then its
 * version and variant bits): 0, or rt_random_bytes' -errno. */
int rt_uuid_v4(uint8_t u[16]);

/* A standalone PRNG for code that wants its own stream (fault injection,
 * workloads): same generator, caller-owned state, no locking. */
struct rt_prng {
	uint64_t s[4];
};
void rt_prng_init(struct rt_prng *p, uint64_t seed);
uint64_t rt_prng_next(struct rt_prng *p);
uint64_t rt_prng_below(struct rt_prng *p, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_RT_H */

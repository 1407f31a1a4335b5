/*
 * rt worlds: creation, the default real world, the event log and its hash,
 * and the thread bookkeeping both worlds share.
 *
 * A world is the unit of determinism: it owns a PRNG, (in sim) a virtual
 * clock and a scheduler, and the list of its threads. Threads never migrate
 * between worlds; a thread rt did not create belongs to the default real
 * world, which lives for the whole process.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt/rt_int.h"

_Thread_local struct rt_thread *rt_cur;

static struct rt_world rt_default;
static pthread_once_t rt_default_once = PTHREAD_ONCE_INIT;

#define RT_FNV_OFFSET 0xcbf29ce484222325ull
#define RT_FNV_PRIME 0x100000001b3ull

void rt_world_lock(const struct rt_world *w)
{
	int rc = pthread_mutex_lock((pthread_mutex_t *)&w->w_lock);

	ASSERT(rc == 0);
}

void rt_world_unlock(const struct rt_world *w)
{
	int rc = pthread_mutex_unlock((pthread_mutex_t *)&w->w_lock);

	ASSERT(rc == 0);
}

static int rt_world_setup(struct rt_world *w, const struct rt_world_opts *opts)
{
	pthread_condattr_t ca;
	uint64_t x;
	int rc;

	memset(w, 0, sizeof(*w));
	rt_list_init(&w->w_all);
	w->w_opts = *opts;
	w->w_kind = opts->kind;
	w->w_hash = RT_FNV_OFFSET;
	/* A real world nobody gave a seed draws one: with a fixed one, every
	 * program would draw the same numbers (and make the same "random"
	 * identifiers). Without the kernel's randomness, the clock. */
	if (w->w_kind == RT_WORLD_REAL && w->w_opts.seed == 0 &&
	    rt_getrandom(&w->w_opts.seed, sizeof(w->w_opts.seed)) < 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		w->w_opts.seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid();
	}
	rt_prng_init(&w->w_prng, w->w_opts.seed);
	/* The scheduler draws from its own stream so that the values rt_rand()
	 * returns do not depend on how many scheduling decisions came first. */
	x = w->w_opts.seed ^ 0x5ced5ced5ced5cedull;
	rt_prng_init(&w->w_sched_prng, rt_splitmix64(&x));
	rc = pthread_mutex_init(&w->w_lock, NULL);
	if (rc)
		return -rc;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&w->w_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc) {
		pthread_mutex_destroy(&w->w_lock);
		return -rc;
	}
	return 0;
}

/* fork: the child would go on drawing the parent's numbers (two children,
 * the same "random" values): it takes a seed of its own. The world's lock
 * is held across the fork so that the child's copy is not locked by a
 * thread it does not have. */
static void rt_default_prefork(void)
{
	rt_world_lock(&rt_default);
}

static void rt_default_postfork_parent(void)
{
	rt_world_unlock(&rt_default);
}

static void rt_default_postfork_child(void)
{
	uint64_t seed;

	if (rt_getrandom(&seed, sizeof(seed)) == 0) {
		rt_default.w_opts.seed = seed;
		rt_prng_init(&rt_default.w_prng, seed);
	} else {
		rt_prng_next(&rt_default.w_prng); /* at least not the parent's next */
		rt_default.w_prng.s[0] ^= (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
	}
	rt_world_unlock(&rt_default);
}

static void rt_default_init(void)
{
	struct rt_world_opts o = { .kind = RT_WORLD_REAL, .seed = 0 };
	int rc = rt_world_setup(&rt_default, &o);

	ASSERT(rc == 0);
	rt_default.w_static = true;
	rc = pthread_atfork(rt_default_prefork, rt_default_postfork_parent,
			    rt_default_postfork_child);
	ASSERT(rc == 0);
}

struct rt_world *rt_default_world(void)
{
	pthread_once(&rt_default_once, rt_default_init);
	return &rt_default;
}

int rt_world_new(const struct rt_world_opts *opts, rt_world **out)
{
	struct rt_world *w;
	int rc;

	*out = NULL;
	if (!opts || (opts->kind != RT_WORLD_REAL && opts->kind != RT_WORLD_SIM))
		return -EINVAL;
	if (opts->ncpus > RT_MAX_CPUS)
		return -EINVAL;
	if (opts->sched.kind != RT_SCHED_FIFO && opts->sched.kind != RT_SCHED_CFS)
		return -EINVAL;
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	rc = rt_world_setup(w, opts);
	if (rc)
		goto out_free;
	if (w->w_kind == RT_WORLD_SIM) {
		rc = rt_sim_init(w);
		if (rc)
			goto out_destroy;
	}
	*out = w;
	return 0;
out_destroy:
	pthread_cond_destroy(&w->w_cond);
	pthread_mutex_destroy(&w->w_lock);
out_free:
	free(w);
	return rc;
}

void rt_world_free(rt_world *w)
{
	if (!w || w->w_static)
		return;
	ASSERT(w->w_live == 0);
	while (!rt_list_empty(&w->w_all)) {
		struct rt_thread *t = RT_LIST_FIRST(&w->w_all, struct rt_thread, t_all);

		__rt_unlink_thread(w, t);
		rt_thread_destroy(t);
	}
	if (w->w_kind == RT_WORLD_SIM)
		rt_sim_release(w);
	pthread_cond_destroy(&w->w_cond);
	pthread_mutex_destroy(&w->w_lock);
	free(w);
}

int rt_world_run(rt_world *w, const char *name, void (*fn)(void *), void *arg)
{
	struct rt_thread *t;

	if (!w || !fn)
		return -EINVAL;
	t = rt_thread_alloc(w, name, fn, arg);
	if (!t)
		return -ENOMEM;
	if (w->w_kind == RT_WORLD_SIM)
		return rt_sim_run(w, t);
	return rt_real_run(w, t);
}

rt_world *rt_world_current(void)
{
	return rt_cur_world();
}

enum rt_world_kind rt_world_kind(const rt_world *w)
{
	return w->w_kind;
}

uint64_t rt_world_hash(const rt_world *w)
{
	uint64_t h;

	rt_world_lock(w);
	h = w->w_hash;
	rt_world_unlock(w);
	return h;
}

uint64_t rt_world_switches(const rt_world *w)
{
	uint64_t n;

	rt_world_lock(w);
	n = w->w_switches;
	rt_world_unlock(w);
	return n;
}

static uint64_t rt_fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= RT_FNV_PRIME;
	}
	return h;
}

/*
 * Every log record is a tag byte, its payload and a NUL, so that "ab"+"c"
 * and "a"+"bc" hash differently.
 */
void __rt_log(struct rt_world *w, char tag, const char *thread,
	      const char *what, const void *data, size_t len)
{
	static const char nul;
	uint64_t now = w->w_kind == RT_WORLD_SIM ? w->w_now : rt_real_now_ns();

	w->w_hash = rt_fnv(w->w_hash, &tag, 1);
	w->w_hash = rt_fnv(w->w_hash, data, len);
	w->w_hash = rt_fnv(w->w_hash, &nul, 1);
	if (w->w_opts.on_event)
		w->w_opts.on_event(w->w_opts.on_event_arg, now, thread, what);
}

void rt_event(const char *what)
{
	struct rt_world *w = rt_cur_world();

	rt_world_lock(w);
	__rt_log(w, 'E', rt_self_name(), what, what, strlen(what));
	rt_world_unlock(w);
}

/* ---- thread bookkeeping ------------------------------------------------ */

void __rt_link_thread(struct rt_world *w, struct rt_thread *t)
{
	ASSERT(t->t_world == w && rt_list_empty(&t->t_all));
	rt_list_add_tail(&w->w_all, &t->t_all);
}

void __rt_unlink_thread(struct rt_world *w, struct rt_thread *t)
{
	ASSERT(t->t_world == w && !rt_list_empty(&t->t_all));
	rt_list_del(&t->t_all);
}

void __rt_reap_all(struct rt_world *w)
{
	struct rt_thread *z;

	while ((z = RT_LIST_FIRST(&w->w_all, struct rt_thread, t_all))) {
		__rt_unlink_thread(w, z);
		rt_world_unlock(w);
		pthread_join(z->t_pthread, NULL);
		rt_thread_destroy(z);
		rt_world_lock(w);
	}
}

struct rt_thread *rt_thread_alloc(struct rt_world *w, const char *name,
				  void (*fn)(void *), void *arg)
{
	struct rt_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (sem_init(&t->t_go, 0, 0)) {
		free(t);
		return NULL;
	}
	t->t_world = w;
	snprintf(t->t_name, sizeof(t->t_name), "%s", name ? name : "rt");
	t->t_fn = fn;
	t->t_arg = arg;
	t->t_ioprio = rt_ioprio_get();
	t->t_heap_idx = SIZE_MAX;
	rt_list_init(&t->t_all);
	rt_list_init(&t->t_qlink);
	return t;
}

void rt_thread_destroy(struct rt_thread *t)
{
	ASSERT(rt_list_empty(&t->t_all)); /* unlinked, or never linked */
	ASSERT(rt_list_empty(&t->t_qlink));
	sem_destroy(&t->t_go);
	free(t);
}

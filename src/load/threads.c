/*
 * threads.c: run one workload body on N rt threads of the caller's world.
 *
 * The one idea: everything a workload thread is besides its loop (its name,
 * its I/O priority, the common start, the join, the first error) is the
 * same for every workload, so it is written once here; a body only loops
 * and measures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

/* The common start: threads count themselves ready, the runner releases. */
struct lab_start {
	rt_mutex s_lock;
	rt_cond s_cond;
	unsigned s_ready;          /* [s_lock] */
	bool s_go;                 /* [s_lock] */
};

struct lab_tctx {
	const struct load_threads *c_t;
	struct lab_start *c_start;
	struct load_thread_info *c_info;
	unsigned c_idx;
};

static void lab_wait_start(struct lab_start *s)
{
	rt_mutex_lock(&s->s_lock);
	s->s_ready++;
	rt_cond_broadcast(&s->s_cond);
	while (!s->s_go)
		rt_cond_wait(&s->s_cond, &s->s_lock);
	rt_mutex_unlock(&s->s_lock);
}

static void lab_thread_main(void *arg)
{
	struct lab_tctx *c = arg;
	const struct load_threads *t = c->c_t;
	uint16_t prio = t->ioprio ? t->ioprio[c->c_idx] : 0;

	if (prio)
		(void)rt_ioprio_set(prio); /* a kernel refusal: rt still records it */
	c->c_info->ioprio = rt_ioprio_get();
	c->c_info->pid = rt_self_pid();
	snprintf(c->c_info->name, sizeof(c->c_info->name), "%s", rt_self_name());
	if (t->together)
		lab_wait_start(c->c_start);
	c->c_info->err = t->body(t->arg, c->c_idx);
}

/* Wait until `made` threads are ready, then let them all go. */
static uint64_t lab_release(struct lab_start *s, unsigned made)
{
	uint64_t t0;

	rt_mutex_lock(&s->s_lock);
	while (s->s_ready < made)
		rt_cond_wait(&s->s_cond, &s->s_lock);
	t0 = rt_now_ns();
	s->s_go = true;
	rt_cond_broadcast(&s->s_cond);
	rt_mutex_unlock(&s->s_lock);
	return t0;
}

static int lab_spawn(const struct load_threads *t, struct lab_tctx *ctx,
		     rt_thread **th, unsigned *made)
{
	int err = 0;

	for (*made = 0; *made < t->n && !err; ) {
		char name[16];

		if (t->same_name)
			snprintf(name, sizeof(name), "%s", t->name);
		else
			snprintf(name, sizeof(name), "%s%u", t->name, *made);
		err = rt_thread_create(&th[*made], name, lab_thread_main, &ctx[*made]);
		*made += err == 0;
	}
	return err;
}

int load_threads_run(const struct load_threads *t, struct load_thread_info *info,
		    uint64_t *elapsed_ns)
{
	struct lab_start start;
	struct lab_tctx *ctx;
	rt_thread **th;
	unsigned made = 0;
	uint64_t t0;
	int err;

	if (t->n == 0 || t->n > LOAD_MAX_THREADS || !t->body || !t->name)
		return -EINVAL;
	ctx = calloc(t->n, sizeof(*ctx));
	th = calloc(t->n, sizeof(*th));
	if (!ctx || !th) {
		free(ctx);
		free(th);
		return -ENOMEM;
	}
	memset(&start, 0, sizeof(start));
	rt_mutex_init(&start.s_lock, "lab_start");
	rt_cond_init(&start.s_cond, "lab_go");
	for (unsigned i = 0; i < t->n; i++) {
		memset(&info[i], 0, sizeof(info[i]));
		info[i].err = -ECANCELED;
		ctx[i] = (struct lab_tctx){ t, &start, &info[i], i };
	}
	t0 = rt_now_ns();
	err = lab_spawn(t, ctx, th, &made);
	if (t->together)
		t0 = lab_release(&start, made);
	for (unsigned i = 0; i < made; i++)
		rt_thread_join(th[i]);
	if (elapsed_ns)
		*elapsed_ns = rt_now_ns() - t0;
	rt_cond_release(&start.s_cond);
	rt_mutex_release(&start.s_lock);
	free(ctx);
	free(th);
	return err;
}

int load_threads_err(const struct load_thread_info *info, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (info[i].err)
			return info[i].err;
	return 0;
}

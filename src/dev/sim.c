/*
 * The simulated disks' worker: one thread per sim device that queues
 * requests, lets the timing model start them, waits for the modelled time
 * and passes finished requests to the completion thread. See sim_int.h for
 * the idea; the models are sim_hdd.c and sim_ssd.c.
 *
 * The worker runs unchanged in both worlds: all its waiting is
 * rt_cond_timedwait, which is virtual time in the sim world.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/sim_int.h"
#include "priv/param.h"

/* ---- the queues ------------------------------------------------------- */

void dev_sim_start(struct dev_sim *s, struct dev_req *r, uint64_t end)
{
	struct rt_link *l;

	ASSERT(s->s_q_len > 0);
	rt_list_del(&r->r_link); /* off the wait queue */
	s->s_q_len--;
	/* into service, ordered by (end, arrival) so completions are
	 * deterministic when two end at the same nanosecond */
	SIM_END(r) = end;
	for (l = s->s_svc.next; l != &s->s_svc; l = l->next) {
		const struct dev_req *o = RT_LIST_ENTRY(l, struct dev_req, r_link);

		if (SIM_END(o) > end || (SIM_END(o) == end && o->r_dev_seq > r->r_dev_seq))
			break;
	}
	rt_list_insert_before(l, &r->r_link);
	s->s_svc_len++;
}

/* The request in service that ends first, or NULL. [s_lock] */
static struct dev_req *sim_next_end(struct dev_sim *s)
{
	return RT_LIST_FIRST(&s->s_svc, struct dev_req, r_link);
}

/* Hand every request whose time has come to the completion thread. [s_lock] */
static void sim_complete_due(struct dev_sim *s, uint64_t now)
{
	struct dev_req *r;

	while ((r = sim_next_end(s)) && SIM_END(r) <= now) {
		rt_list_del(&r->r_link);
		s->s_svc_len--;
		dev_core_complete(&s->s_dev, r);
	}
}

static void sim_worker(void *arg)
{
	struct dev_sim *s = arg;

	rt_mutex_lock(&s->s_lock);
	for (;;) {
		uint64_t now = rt_now_ns(), wake;
		struct dev_req *first;

		sim_complete_due(s, now);
		if (s->s_stop)
			break;
		wake = s->s_model->m_step(s, now);
		first = sim_next_end(s);
		if (first && SIM_END(first) < wake)
			wake = SIM_END(first);
		if (wake <= now)
			continue;
		if (wake == UINT64_MAX)
			rt_cond_wait(&s->s_cond, &s->s_lock);
		else
			rt_cond_timedwait(&s->s_cond, &s->s_lock, wake);
	}
	rt_mutex_unlock(&s->s_lock);
}

/* ---- data ------------------------------------------------------------- */

int64_t dev_sim_read(struct dev_sim *s, struct dev_req *r)
{
	dev_sparse_read(s->s_media, r->r_off, r->r_buf, r->r_len);
	dev_cache_overlay_read(&s->s_cache, r->r_off, r->r_buf, r->r_len);
	return r->r_len;
}

int64_t dev_sim_write(struct dev_sim *s, struct dev_req *r, bool through,
		      uint64_t ready_ns)
{
	bool stamped = r->r_flags & DEV_REQ_STAMPED;
	int rc;

	if (through) {
		/* older cached copies must not undo this when destaged */
		rc = dev_cache_overlay_write(&s->s_cache, r->r_off, r->r_buf, r->r_len, stamped);
		if (rc < 0)
			;
		else if (stamped)
			rc = dev_sparse_write_stamps(s->s_media, r->r_off, r->r_buf,
						     r->r_len / DEV_STAMP_BLOCK);
		else
			rc = dev_sparse_write(s->s_media, r->r_off, r->r_buf, r->r_len);
	} else {
		rc = dev_cache_add(&s->s_cache, r->r_off, r->r_buf, r->r_len, stamped, ready_ns);
	}
	return rc < 0 ? rc : (int64_t)r->r_len;
}

/* ---- the device ------------------------------------------------------- */

static int sim_submit(struct dev *d, struct dev_req *r)
{
	struct dev_sim *s = (struct dev_sim *)d;

	rt_mutex_lock(&s->s_lock);
	r->r_dev_seq = s->s_seq++;
	SIM_ARRIVAL(r) = rt_now_ns();
	SIM_END(r) = 0;
	rt_list_add_tail(&s->s_queue, &r->r_link);
	s->s_q_len++;
	rt_cond_signal(&s->s_cond);
	rt_mutex_unlock(&s->s_lock);
	return 0;
}

static int sim_power_cut(struct dev *d)
{
	struct dev_sim *s = (struct dev_sim *)d;

	rt_mutex_lock(&s->s_lock);
	s->s_model->m_power_cut(s, rt_now_ns());
	rt_cond_signal(&s->s_cond);
	rt_mutex_unlock(&s->s_lock);
	return 0;
}

static void sim_free(struct dev_sim *s)
{
	dev_cache_release(&s->s_cache);
	dev_sparse_free(s->s_media);
	if (s->s_model->m_free)
		s->s_model->m_free(s);
	free(s->s_priv);
	free(s);
}

static void sim_close(struct dev *d)
{
	struct dev_sim *s = (struct dev_sim *)d;

	/* drained: nothing queued or in service; dirty cache data is simply
	 * dropped with the device */
	rt_mutex_lock(&s->s_lock);
	ASSERT(rt_list_empty(&s->s_queue) && rt_list_empty(&s->s_svc));
	s->s_stop = true;
	rt_cond_signal(&s->s_cond);
	rt_mutex_unlock(&s->s_lock);
	rt_thread_join(s->s_thread);
	rt_cond_release(&s->s_cond);
	rt_mutex_release(&s->s_lock);
	sim_free(s);
}

static const struct dev_ops dev_sim_ops = {
	.o_submit = sim_submit,
	.o_close = sim_close,
	.o_power_cut = sim_power_cut,
};

/* The checks every model makes of its geometry, then a device of model
 * with it and the model's state zeroed. */
static int sim_alloc(const struct dev_sim_model *model, const struct dev_sim_geometry *g,
		     struct dev_sim **out)
{
	uint32_t bs = g->block_size;
	struct dev_sim *s;

	if (bs < 512 || (bs & (bs - 1)) || bs > 65536 || g->size < bs)
		return -EINVAL;
	if (g->queue_depth < 1 || g->queue_depth > g->max_queue_depth)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->s_priv = calloc(1, model->m_state_size);
	if (!s->s_priv) {
		free(s);
		return -ENOMEM;
	}
	s->s_model = model;
	s->s_dev.d_size = g->size - g->size % bs;
	s->s_dev.d_block_size = bs;
	s->s_dev.d_queue_depth = g->queue_depth;
	s->s_dev.d_rotational = g->rotational;
	s->s_dev.d_volatile_cache = g->volatile_cache;
	snprintf(s->s_dev.d_name, sizeof(s->s_dev.d_name), "%s", g->name);
	*out = s;
	return 0;
}

/* Start s: its cache, media, worker and completion threads; on failure
 * everything is freed. */
static int sim_start(struct dev_sim *s, const struct dev_sim_geometry *g)
{
	char worker[32], done[32];
	int rc;

	snprintf(worker, sizeof(worker), "%.24s-sim", s->s_dev.d_name);
	snprintf(done, sizeof(done), "%.24s-done", s->s_dev.d_name);
	s->s_dev.d_ops = &dev_sim_ops;
	s->s_dev.d_stamps = true;
	rt_list_init(&s->s_queue);
	rt_list_init(&s->s_svc);
	dev_cache_init(&s->s_cache, g->cache_bytes);
	s->s_cache.c_merge_max = g->cache_merge_bytes;
	rc = dev_sparse_new(s->s_dev.d_size, &s->s_media);
	if (rc < 0)
		goto out_free;
	rc = rt_mutex_init(&s->s_lock, "dev_sim");
	if (rc < 0)
		goto out_free;
	rc = rt_cond_init(&s->s_cond, "dev_sim");
	if (rc < 0)
		goto out_lock;
	rc = rt_thread_create(&s->s_thread, worker, sim_worker, s);
	if (rc < 0)
		goto out_cond;
	rc = dev_core_init(&s->s_dev, done);
	if (rc < 0)
		goto out_thread;
	return 0;
out_thread:
	rt_mutex_lock(&s->s_lock);
	s->s_stop = true;
	rt_cond_signal(&s->s_cond);
	rt_mutex_unlock(&s->s_lock);
	rt_thread_join(s->s_thread);
out_cond:
	rt_cond_release(&s->s_cond);
out_lock:
	rt_mutex_release(&s->s_lock);
out_free:
	sim_free(s);
	return rc;
}

int dev_sim_new(const struct dev_sim_model *model, const void *params, struct dev **out)
{
	struct dev_sim_geometry g = { 0 };
	struct dev_sim *s = NULL;
	void *dflt = NULL;
	int rc = 0;

	if (!params) {
		dflt = calloc(1, model->m_params->t_size);
		if (!dflt)
			return -ENOMEM;
		rt_param_defaults(model->m_params, dflt);
		params = dflt;
	}
	if (model->m_check)
		rc = model->m_check(params);
	if (rc == 0) {
		model->m_geometry(params, &g);
		rc = sim_alloc(model, &g, &s);
	}
	if (rc == 0) {
		model->m_setup(s, params);
		rc = sim_start(s, &g);
	}
	free(dflt);
	if (rc == 0)
		*out = &s->s_dev;
	return rc;
}

/*
 * A device over another (dev_int.h): the forwarding the wrappers (fault,
 * rec) share. A wrapper decides what happens to a request (fault: whether
 * it fails; rec: what it logs); passing it on to the inner device as a
 * request of its own, finishing the caller's when that one completes, and
 * the geometry, name, power cuts and checks that come from the inner
 * device are the same for every wrapper, and are here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dev/dev_int.h"

int dev_wrap_init(struct dev_wrap *w, const struct dev_ops *ops, struct dev *inner,
		  const char *kind, rt_mutex *lock, const char *lock_name)
{
	char tname[32];

	ASSERT(ops && inner && kind);
	w->w_inner = inner;
	w->w_dev.d_ops = ops;
	w->w_dev.d_size = dev_size(inner);
	w->w_dev.d_block_size = dev_block_size(inner);
	w->w_dev.d_queue_depth = dev_queue_depth(inner);
	w->w_dev.d_rotational = dev_rotational(inner);
	w->w_dev.d_volatile_cache = dev_volatile_cache(inner);
	snprintf(w->w_dev.d_name, sizeof(w->w_dev.d_name), "%s:%s", kind, dev_name(inner));
	snprintf(tname, sizeof(tname), "%s-done", kind);
	return dev_core_init_locked(&w->w_dev, lock, lock_name, tname);
}

int dev_wrap_submit(struct dev_wrap *w, struct dev_wrap_req *wr, struct dev_req *r,
		    uint32_t len, void (*done)(struct dev_req *ir))
{
	ASSERT(len <= r->r_len);
	wr->wr_outer = r;
	wr->wr_wrap = w;
	wr->wr_inner = (struct dev_req){ .r_op = r->r_op, .r_flags = r->r_flags,
		.r_off = r->r_off, .r_len = len, .r_buf = r->r_buf, .r_ioprio = r->r_ioprio,
		.r_done = done ? done : dev_wrap_done, .r_priv = wr };
	return dev_submit(w->w_inner, &wr->wr_inner);
}

void dev_wrap_complete(struct dev_wrap *w, struct dev_req *outer, int64_t result)
{
	outer->r_result = result;
	dev_core_complete(&w->w_dev, outer);
}

void dev_wrap_done(struct dev_req *ir)
{
	struct dev_wrap_req *wr = ir->r_priv;
	struct dev_wrap *w = wr->wr_wrap;
	struct dev_req *o = wr->wr_outer;
	int64_t result = ir->r_result;

	free(wr);
	dev_wrap_complete(w, o, result);
}

int dev_wrap_power_cut(struct dev *d)
{
	return dev_sim_power_cut(((struct dev_wrap *)d)->w_inner);
}

int dev_wrap_check(struct dev *d)
{
	return dev_check(((struct dev_wrap *)d)->w_inner);
}

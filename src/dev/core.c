/*
 * The device core: validation, the per-device completion thread, draining
 * close, and the synchronous helpers every caller without a callback uses.
 *
 * Every request a backend accepts ends on the completion thread: the
 * backend queues it with dev_core_complete(), the thread calls r_done, and
 * only after r_done returns does the request stop counting as in flight.
 * dev_close() therefore knows that once d_inflight is zero no callback is
 * running or will run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev_int.h"

/* ---- validation ------------------------------------------------------- */

int dev_core_validate(const struct dev *d, const struct dev_req *r)
{
	uint64_t bs = d->d_block_size;

	if (!r->r_done)
		return -EINVAL;
	if ((r->r_flags & DEV_REQ_POLLED) && !d->d_ops->o_exec)
		return -EINVAL;
	if (r->r_op == DEV_OP_FLUSH)
		return 0;
	if (r->r_op != DEV_OP_READ && r->r_op != DEV_OP_WRITE)
		return -EINVAL;
	if (r->r_flags & ~(DEV_REQ_FUA | DEV_REQ_PREFLUSH | DEV_REQ_POLLED | DEV_REQ_DIRECT |
			   DEV_REQ_STAMPED))
		return -EINVAL;
	if (r->r_op == DEV_OP_READ && (r->r_flags & ~(DEV_REQ_POLLED | DEV_REQ_DIRECT)))
		return -EINVAL;
	if (!r->r_buf || r->r_len == 0)
		return -EINVAL;
	if (r->r_off % bs || r->r_len % bs)
		return -EINVAL;
	if ((r->r_flags & DEV_REQ_STAMPED) &&
	    (r->r_off % DEV_STAMP_BLOCK || r->r_len % DEV_STAMP_BLOCK))
		return -EINVAL;
	if (r->r_off > d->d_size || r->r_len > d->d_size - r->r_off)
		return -EINVAL;
	return 0;
}

/* ---- the completion thread -------------------------------------------- */

/* A request is no longer in flight (its r_done ran, or its submission
 * failed); d_lock held. */
static void __dev_inflight_put(struct dev *d)
{
	ASSERT(d->d_inflight > 0);
	if (--d->d_inflight == 0)
		rt_cond_broadcast(&d->d_idle);
}

static void dev_core_thread(void *arg)
{
	struct dev *d = arg;

	rt_mutex_lock(&d->d_lock);
	for (;;) {
		struct dev_req *r = RT_LIST_POP(&d->d_done, struct dev_req, r_link);

		if (!r) {
			if (d->d_stop)
				break;
			rt_cond_wait(&d->d_work, &d->d_lock);
			continue;
		}
		rt_mutex_unlock(&d->d_lock);
		r->r_done(r);
		rt_mutex_lock(&d->d_lock);
		__dev_inflight_put(d);
	}
	rt_mutex_unlock(&d->d_lock);
}

void dev_core_complete(struct dev *d, struct dev_req *r)
{
	rt_mutex_lock(&d->d_lock);
	rt_list_add_tail(&d->d_done, &r->r_link);
	rt_cond_signal(&d->d_work);
	rt_mutex_unlock(&d->d_lock);
}

void dev_core_complete_direct(struct dev *d, struct dev_req *r)
{
	r->r_done(r);
	rt_mutex_lock(&d->d_lock);
	__dev_inflight_put(d);
	rt_mutex_unlock(&d->d_lock);
}

int dev_core_init(struct dev *d, const char *tname)
{
	int rc;

	ASSERT(d->d_ops && d->d_block_size > 0);
	rt_list_init(&d->d_done);
	rt_list_init(&d->d_polled);
	d->d_poll_gen = 0;
	d->d_inflight = 0;
	d->d_closing = d->d_stop = false;
	rc = rt_mutex_init(&d->d_lock, "dev_lock");
	if (rc < 0)
		return rc;
	rc = rt_cond_init(&d->d_work, "dev_work");
	if (rc < 0)
		goto out_mutex;
	rc = rt_cond_init(&d->d_idle, "dev_idle");
	if (rc < 0)
		goto out_work;
	rc = rt_cond_init(&d->d_poll, "dev_poll");
	if (rc < 0)
		goto out_idle;
	d->d_thread = NULL;
	if (!tname)
		return 0;
	rc = rt_thread_create(&d->d_thread, tname, dev_core_thread, d);
	if (rc < 0)
		goto out_poll;
	return 0;
out_poll:
	rt_cond_release(&d->d_poll);
out_idle:
	rt_cond_release(&d->d_idle);
out_work:
	rt_cond_release(&d->d_work);
out_mutex:
	rt_mutex_release(&d->d_lock);
	return rc;
}

int dev_core_init_locked(struct dev *d, rt_mutex *lock, const char *lock_name,
			 const char *tname)
{
	int rc = rt_mutex_init(lock, lock_name);

	if (rc < 0)
		return rc;
	rc = dev_core_init(d, tname);
	if (rc < 0)
		rt_mutex_release(lock);
	return rc;
}

/* ---- bounce buffers ------------------------------------------------------- */

/*
 * A backend that needs aligned memory (O_DIRECT) gets a misaligned request
 * as a copy in an aligned buffer of its own: the bounce is what the
 * backend and the in-flight count see, and its r_done finishes the
 * caller's request (a read copied back first) on the same thread. Callers
 * that allocate with malloc (a superblock, a merged request, the lab's
 * file-system model) then work on such a device unchanged.
 */
struct dev_bounce {
	struct dev_req b_req;
	struct dev_req *b_orig;
};

static void dev_bounce_done(struct dev_req *br)
{
	struct dev_bounce *b = br->r_priv;
	struct dev_req *r = b->b_orig;

	if (r->r_op == DEV_OP_READ && br->r_result > 0)
		memcpy(r->r_buf, br->r_buf, (size_t)br->r_result);
	r->r_result = br->r_result;
	free(br->r_buf);
	free(b);
	r->r_done(r);
}

static bool dev_needs_bounce(const struct dev *d, const struct dev_req *r)
{
	if ((r->r_flags & DEV_REQ_STAMPED) && !d->d_stamps)
		return true;   /* the bytes the stamps stand for */
	return d->d_mem_align && r->r_op != DEV_OP_FLUSH &&
	       (uintptr_t)r->r_buf % d->d_mem_align != 0;
}

/* Submit a validated r through a bounce: misaligned, or stamped for a
 * device that takes bytes. */
static int dev_submit_bounced(struct dev *d, struct dev_req *r)
{
	struct dev_bounce *b = calloc(1, sizeof(*b));
	size_t align = d->d_mem_align > sizeof(void *) ? d->d_mem_align : sizeof(void *);
	void *buf = NULL;
	int rc;

	if (!b || posix_memalign(&buf, align, r->r_len)) {
		free(b);
		return -ENOMEM;
	}
	if (r->r_op == DEV_OP_WRITE && (r->r_flags & DEV_REQ_STAMPED))
		dev_stamps_fill(buf, r->r_buf, r->r_len / DEV_STAMP_BLOCK);
	else if (r->r_op == DEV_OP_WRITE)
		memcpy(buf, r->r_buf, r->r_len);
	b->b_orig = r;
	b->b_req = (struct dev_req){ .r_op = r->r_op, .r_flags = r->r_flags & ~DEV_REQ_STAMPED,
				     .r_off = r->r_off,
				     .r_len = r->r_len, .r_buf = buf, .r_ioprio = r->r_ioprio,
				     .r_done = dev_bounce_done, .r_priv = b };
	r->r_result = 0;
	rc = dev_submit(d, &b->b_req);
	if (rc < 0) {
		free(buf);
		free(b);
	}
	return rc;
}

/* ---- the public interface --------------------------------------------- */

bool dev_takes_stamps(const struct dev *d)
{
	return d->d_stamps;
}

int dev_submit(struct dev *d, struct dev_req *r)
{
	int rc = dev_core_validate(d, r);

	if (rc < 0)
		return rc;
	if (dev_needs_bounce(d, r))
		return dev_submit_bounced(d, r);
	r->r_result = 0;
	rt_list_init(&r->r_link);
	rt_mutex_lock(&d->d_lock);
	if (d->d_closing) {
		rt_mutex_unlock(&d->d_lock);
		return -ESHUTDOWN;
	}
	d->d_inflight++;
	if (r->r_flags & DEV_REQ_POLLED) {
		/* for a poller (dev_poll), never run here */
		rt_list_add_tail(&d->d_polled, &r->r_link);
		rt_cond_broadcast(&d->d_poll);
		rt_mutex_unlock(&d->d_lock);
		return 0;
	}
	rt_mutex_unlock(&d->d_lock);

	rc = d->d_ops->o_submit(d, r);
	if (rc < 0) {
		rt_mutex_lock(&d->d_lock);
		__dev_inflight_put(d);
		rt_mutex_unlock(&d->d_lock);
	}
	return rc;
}

void dev_close(struct dev *d)
{
	if (!d)
		return;
	rt_mutex_lock(&d->d_lock);
	d->d_closing = true;
	while (d->d_inflight > 0)
		rt_cond_wait(&d->d_idle, &d->d_lock);
	d->d_stop = true;
	rt_cond_signal(&d->d_work);
	rt_mutex_unlock(&d->d_lock);
	if (d->d_thread)
		rt_thread_join(d->d_thread);
	ASSERT(rt_list_empty(&d->d_done) && rt_list_empty(&d->d_polled));
	rt_cond_release(&d->d_poll);
	rt_cond_release(&d->d_idle);
	rt_cond_release(&d->d_work);
	rt_mutex_release(&d->d_lock);
	d->d_ops->o_close(d);
}

/* ---- polled I/O --------------------------------------------------------- */

bool dev_can_poll(const struct dev *d)
{
	return d->d_ops->o_exec != NULL;
}

uint64_t dev_poll_gen(struct dev *d)
{
	uint64_t gen;

	rt_mutex_lock(&d->d_lock);
	gen = d->d_poll_gen;
	rt_mutex_unlock(&d->d_lock);
	return gen;
}

bool dev_poll(struct dev *d, uint64_t gen)
{
	struct dev_req *r;

	rt_mutex_lock(&d->d_lock);
	while (rt_list_empty(&d->d_polled) && d->d_poll_gen == gen)
		rt_cond_wait(&d->d_poll, &d->d_lock);
	r = RT_LIST_POP(&d->d_polled, struct dev_req, r_link);
	rt_mutex_unlock(&d->d_lock);
	if (!r)
		return false;
	r->r_result = d->d_ops->o_exec(d, r);
	r->r_done(r);
	rt_mutex_lock(&d->d_lock);
	d->d_poll_gen++;
	rt_cond_broadcast(&d->d_poll);
	__dev_inflight_put(d);
	rt_mutex_unlock(&d->d_lock);
	return true;
}

uint64_t dev_size(const struct dev *d) { return d->d_size; }
uint32_t dev_block_size(const struct dev *d) { return d->d_block_size; }
unsigned dev_queue_depth(const struct dev *d) { return d->d_queue_depth; }
bool dev_rotational(const struct dev *d) { return d->d_rotational; }
bool dev_volatile_cache(const struct dev *d) { return d->d_volatile_cache; }
const char *dev_name(const struct dev *d) { return d->d_name; }

int dev_check(struct dev *d)
{
	return d->d_ops->o_check ? d->d_ops->o_check(d) : 0;
}

int dev_sim_power_cut(struct dev *d)
{
	if (!d->d_ops->o_power_cut)
		return -EINVAL;
	return d->d_ops->o_power_cut(d);
}

/* ---- groups of requests in flight -------------------------------------- */

int dev_group_init(struct dev_group *g)
{
	int rc = rt_mutex_init(&g->g_lock, "dev_group");

	if (rc < 0)
		return rc;
	rc = rt_cond_init(&g->g_cond, "dev_group");
	if (rc < 0)
		rt_mutex_release(&g->g_lock);
	return rc;
}

void dev_group_release(struct dev_group *g)
{
	rt_cond_release(&g->g_cond);
	rt_mutex_release(&g->g_lock);
}

static void dev_group_done(struct dev_req *r)
{
	struct dev_group_req *gr = r->r_priv;
	struct dev_group *g = gr->gr_group;

	rt_mutex_lock(&g->g_lock);
	gr->gr_done = true;
	/* one waiter, for one of the group's requests: it rechecks its own */
	rt_cond_broadcast(&g->g_cond);
	rt_mutex_unlock(&g->g_lock);
}

int dev_group_submit(struct dev *d, struct dev_group *g, struct dev_group_req *r)
{
	r->gr_group = g;
	r->gr_done = false;
	r->gr_req.r_done = dev_group_done;
	r->gr_req.r_priv = r;
	return dev_submit(d, &r->gr_req);
}

int64_t dev_group_wait(struct dev_group_req *r)
{
	struct dev_group *g = r->gr_group;

	ASSERT(g && r->gr_req.r_done == dev_group_done);
	rt_mutex_lock(&g->g_lock);
	while (!r->gr_done)
		rt_cond_wait(&g->g_cond, &g->g_lock);
	rt_mutex_unlock(&g->g_lock);
	return r->gr_req.r_result;
}

/* ---- synchronous helpers ---------------------------------------------- */

/* Submit one request and wait for it; its r_result, or -errno. */
static int64_t dev_sync_io(struct dev *d, enum dev_op op, uint32_t flags,
			   void *buf, uint32_t len, uint64_t off)
{
	struct dev_group g;
	struct dev_group_req r = { .gr_req = {
		.r_op = op, .r_flags = flags, .r_off = off, .r_len = len,
		.r_buf = buf, .r_ioprio = rt_ioprio_get(),
	} };
	int64_t rc = dev_group_init(&g);

	if (rc < 0)
		return rc;
	rc = dev_group_submit(d, &g, &r);
	if (rc == 0)
		rc = dev_group_wait(&r);
	dev_group_release(&g);
	return rc;
}

int dev_pread(struct dev *d, void *buf, uint32_t len, uint64_t off)
{
	int64_t rc = dev_sync_io(d, DEV_OP_READ, 0, buf, len, off);

	if (rc < 0)
		return (int)rc;
	return rc == (int64_t)len ? 0 : -EIO;
}

int dev_pwrite(struct dev *d, const void *buf, uint32_t len, uint64_t off,
	       uint32_t flags)
{
	int64_t rc;

	/* A polled write would wait for a poller that never comes: the
	 * synchronous path takes only the durability flags. */
	if (flags & ~(DEV_REQ_FUA | DEV_REQ_PREFLUSH | DEV_REQ_DIRECT))
		return -EINVAL;
	rc = dev_sync_io(d, DEV_OP_WRITE, flags, (void *)buf, len, off);
	if (rc < 0)
		return (int)rc;
	return rc == (int64_t)len ? 0 : -EIO;
}

int dev_flush(struct dev *d)
{
	int64_t rc = dev_sync_io(d, DEV_OP_FLUSH, 0, NULL, 0, 0);

	return rc < 0 ? (int)rc : 0;
}

/* ---- parsing ---------------------------------------------------------- */

int dev_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;
	int saved = errno, bad;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	bad = errno || end == s;
	errno = saved; /* the library leaves errno alone */
	if (bad)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

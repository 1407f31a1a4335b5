/*
 * Block layer core: queues, bio submission, merging, request allocation,
 * dispatch to the device, completion, and the per-queue kblockd thread.
 *
 * The one idea: the device never sees a bio. A bio becomes a request (or
 * grows one by a back or front merge) when it reaches the elevator; the
 * elevator decides which request the device gets next, whenever the device
 * has a free slot (q_depth) and the queue is not plugged. Everything is done
 * under one mutex per queue; the only calls made without it are the bios'
 * end_io callbacks, which may do anything but block on this queue.
 *
 * Where time passes without any caller (CFQ's idle timer, the 2.6.29
 * unplug timer), the queue's kblockd thread sleeps until the earliest
 * deadline with rt_cond_timedwait, so both worlds work: the sim world simply
 * jumps to that virtual time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blk_int.h"

/* ---- options -------------------------------------------------------- */

static const char *const blk_plug_names[] = { "explicit", "implicit-sync", NULL };
_Static_assert(sizeof(enum blk_plug_policy) == sizeof(int), "plug is an RT_PARAM_ENUM row");

/* The "queue" group: the generic queue's own tunables. */
#define Q_P(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct blk_queue_opts, field, type, unit, scale, def, min, max, src, help)
static const struct rt_param blk_queue_rows[] = {
	Q_P(nr_requests, RT_PARAM_UINT, "rq", 0, 128, 1, 65536, "2.6.29 BLKDEV_MAX_RQ",
	    "request pool of the queue"),
	Q_P(max_sectors, RT_PARAM_U32, "sectors", 0, 1024, 1, 1 << 22,
	    "2.6.29 SAFE_MAX_SECTORS-era default (512 KiB)", "largest merged request"),
	Q_P(queue_depth, RT_PARAM_UINT, "rq", 0, 0, 0, 4096, "the device's (dev_queue_depth)",
	    "requests in the device at once, 0 = the device's"),
	Q_P(queue_plug, RT_PARAM_BOOL, "", 0, 0, 0, 1, "off: per-thread plugging of 2.6.39+",
	    "2.6.29 queue-level plugging"),
	Q_P(unplug_thresh, RT_PARAM_UINT, "rq", 0, 4, 1, 65536, "2.6.29 blk-settings.c unplug_thresh",
	    "queued requests that unplug the queue"),
	RT_PARAM_AS("unplug_delay_ms", struct blk_queue_opts, unplug_delay_ns, RT_PARAM_U64, "ms",
		    1e6, 3, 0, 10000, "2.6.29 blk-settings.c unplug_delay", "the unplug timer"),
	RT_PARAM_ENUM_AS("plug", struct blk_queue_opts, plug_policy, blk_plug_names, 2, 0,
			 "2.6.30+ (2.6.29 WRITE_SYNC: implicit-sync)",
			 "explicit unplug, or every sync bio unplugs"),
};
static const struct rt_param_table blk_queue_table =
	RT_PARAM_TABLE("queue", "block queue (2.6.29 defaults)", blk_queue_rows,
		       struct blk_queue_opts);

const struct rt_param_table *blk_queue_params(void)
{
	return &blk_queue_table;
}

void blk_queue_opts_default(struct blk_queue_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->elevator = blk_elevator_noop.e_name;
	o->plug_policy = BLK_PLUG_EXPLICIT;
	rt_param_defaults(&blk_queue_table, o);
	o->trace_max_events = 65536;
	o->trace_major = 254;
	o->trace_minor = 0;
	/* the table's defaults pass blk_queue_check_opts */
	ASSERT(o->nr_requests > 0 && o->max_sectors > 0 && o->unplug_thresh > 0);
}

int blk_plug_policy_parse(const char *s, enum blk_plug_policy *out)
{
	for (unsigned i = 0; i < 2; i++) {
		if (strcmp(s, blk_plug_names[i]) == 0) {
			*out = (enum blk_plug_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *blk_plug_policy_name(enum blk_plug_policy p)
{
	return (unsigned)p < 2 ? blk_plug_names[p] : "?";
}

struct dev *blk_queue_dev(const struct blk_queue *q)
{
	return q->q_dev;
}

/* ---- locking helpers ------------------------------------------------- */

/*
 * Completions collect the bios that have an end_io callback on q_end; they
 * are called here, after the lock is dropped, so that a callback may take
 * its own locks or submit to another queue.
 */
void blk_unlock(struct blk_queue *q)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	while (!rt_list_empty(&q->q_end)) {
		struct rt_link end;
		struct blk_bio *b;
		unsigned n = 0;
		rt_list_init(&end);
		rt_list_splice_tail(&end, &q->q_end);
		rt_mutex_unlock(&q->q_lock);
		while ((b = RT_LIST_POP(&end, struct blk_bio, b_link))) {
			b->b_end_io(b); /* may free b */
			n++;
		}
		rt_mutex_lock(&q->q_lock);
		ASSERT(q->q_end_pending >= n);
		q->q_end_pending -= n;
		if (q->q_end_pending == 0)
			rt_cond_broadcast(&q->q_done);
	}
	ASSERT(rt_list_empty(&q->q_end)); /* every end_io queued under the lock was called */
	rt_mutex_unlock(&q->q_lock);
}

void __blk_timers_changed(struct blk_queue *q)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	rt_cond_signal(&q->q_kick);
}

/* ---- the 2.6.29 queue-level plug ------------------------------------- */

/* why: 'U' (by I/O or a waiter), 'T' (timer), 0 (silently, already traced). */
void __blk_unplug(struct blk_queue *q, char why)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(q->q_plugged || !q->q_unplug_at);
	if (q->q_plugged) {
		q->q_plugged = 0;
		q->q_unplug_at = 0;
		if (why) {
			__blk_trace_plug(q, why, q->q_nr_queued);
			if (why == 'T')
				q->q_stats.unplugs_timer++;
			else
				q->q_stats.unplugs_io++;
		}
	}
	__blk_run_queue(q);
	ASSERT(!q->q_plugged);
}

static void __blk_maybe_plug(struct blk_queue *q, int was_empty)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	if (!q->q_opts.queue_plug || !q->q_rotational)
		return;
	if (!q->q_plugged && was_empty) {
		q->q_plugged = 1;
		q->q_unplug_at = rt_now_ns() + q->q_opts.unplug_delay_ns;
		q->q_stats.plugs++;
		__blk_trace_plug(q, 'P', 0);
		__blk_timers_changed(q);
	}
	if (q->q_plugged && q->q_nr_queued >= q->q_opts.unplug_thresh)
		__blk_unplug(q, 'U');
	ASSERT(!q->q_plugged || q->q_unplug_at); /* the timer lifts it */
}

/* ---- requests -------------------------------------------------------- */

static struct blk_request *__blk_rq_alloc(struct blk_queue *q, struct blk_bio *b)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(q->q_nr_free > 0 && !rt_list_empty(&q->q_free));
	struct blk_request *rq = RT_LIST_POP(&q->q_free, struct blk_request, rq_qlink);
	q->q_nr_free--;
	ASSERT(rq->rq_state == BLK_RQ_FREE);

	struct blk_queue *keep_q = rq->rq_q;
	memset(rq, 0, sizeof(*rq));
	rq->rq_q = keep_q;
	rt_list_init(&rq->rq_qlink);
	rt_list_init(&rq->rq_slink);
	rt_list_init(&rq->rq_flink);
	rq->rq_state = BLK_RQ_QUEUED;
	rq->rq_seq = ++q->q_rq_seq;
	rq->rq_op = b->b_op;
	rq->rq_flags = b->b_flags;
	rq->rq_sector = b->b_sector;
	rq->rq_nr_sectors = b->b_nr_sectors;
	rq->rq_ioprio = b->b_prio;
	rq->rq_pid = b->b_pid;
	memcpy(rq->rq_comm, b->b_comm, sizeof(rq->rq_comm));
	rt_list_init(&rq->rq_bios);
	rt_list_add_tail(&rq->rq_bios, &b->b_link);
	rq->rq_nr_bios = 1;
	rq->rq_start_ns = rt_now_ns();
	rq->rq_slot = -1;
	ASSERT(rq->rq_q == q && (rq->rq_nr_sectors > 0 || rq->rq_op == BLK_OP_FLUSH));
	ASSERT(q->q_nr_free + q->q_nr_queued + q->q_in_flight < q->q_opts.nr_requests + 1);
	return rq;
}

static void __blk_rq_free(struct blk_queue *q, struct blk_request *rq)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_state != BLK_RQ_FREE && rq->rq_q == q);
	ASSERT(rt_list_empty(&rq->rq_bios) && rq->rq_slot < 0 && rt_list_empty(&rq->rq_qlink));
	rq->rq_state = BLK_RQ_FREE;
	rt_list_add_tail(&q->q_free, &rq->rq_qlink);
	q->q_nr_free++;
	ASSERT(q->q_nr_free <= q->q_opts.nr_requests);
	rt_cond_broadcast(&q->q_rq_wait);
}

/* ioprio_best: the higher class wins (RT < BE < IDLE numerically), then
 * the lower level. NONE counts as BE. */
static uint16_t blk_ioprio_best(uint16_t a, uint16_t b)
{
	unsigned ca = blk_ioprio_class(a), cb = blk_ioprio_class(b);
	if (ca != cb)
		return ca < cb ? a : b;
	return RT_IOPRIO_LEVEL(a) <= RT_IOPRIO_LEVEL(b) ? a : b;
}

#define BLK_MERGE_FLAGS (BLK_SYNC | BLK_META | BLK_PRIO)
#define BLK_NOMERGE_FLAGS (BLK_FUA | BLK_PREFLUSH | BLK_POLLED)

/* 1 back, 2 front, 0 no. */
static int __blk_merge_kind(struct blk_queue *q, struct blk_request *rq,
			    const struct blk_bio *b)
{
	/* a merge candidate: queued in the elevator, with its bios */
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && rq->rq_nr_bios > 0 &&
	       !rt_list_empty(&rq->rq_bios));
	if (rq->rq_op != b->b_op || (rq->rq_flags & BLK_NOMERGE_FLAGS))
		return 0;
	if ((rq->rq_flags ^ b->b_flags) & BLK_MERGE_FLAGS)
		return 0;
	if ((uint64_t)rq->rq_nr_sectors + b->b_nr_sectors > q->q_opts.max_sectors)
		return 0;
	int kind = 0;
	if (blk_rq_end(rq) == b->b_sector)
		kind = 1;
	else if (b->b_sector + b->b_nr_sectors == rq->rq_sector)
		kind = 2;
	if (kind && q->q_elv->allow_merge && !q->q_elv->allow_merge(q, rq, b, kind == 2))
		return 0;
	return kind;
}

/* Newest request first, as the kernel's last_merge hint favours it. */
static int __blk_try_merge(struct blk_queue *q, struct blk_bio *b)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	if (b->b_op == BLK_OP_FLUSH || (b->b_flags & BLK_NOMERGE_FLAGS))
		return 0;
	struct blk_request *rq;
	RT_LIST_FOR_EACH_BACK(rq, &q->q_queued, struct blk_request, rq_qlink) {
		int kind = __blk_merge_kind(q, rq, b);
		if (!kind)
			continue;
		ASSERT(rq->rq_state == BLK_RQ_QUEUED && rq->rq_op != BLK_OP_FLUSH);
		if (kind == 1) {
			rt_list_add_tail(&rq->rq_bios, &b->b_link);
		} else {
			rt_list_add_head(&rq->rq_bios, &b->b_link);
			rq->rq_sector = b->b_sector;
		}
		rq->rq_nr_sectors += b->b_nr_sectors;
		rq->rq_nr_bios++;
		if (!(b->b_flags & BLK_DIRECT))
			rq->rq_flags &= ~BLK_DIRECT;
		ASSERT(rq->rq_nr_sectors <= q->q_opts.max_sectors && rq->rq_nr_bios > 1);
		/* the bios still span the request, first sector to end */
		const struct blk_bio *fb = RT_LIST_FIRST(&rq->rq_bios, struct blk_bio, b_link);
		const struct blk_bio *lb = RT_LIST_LAST(&rq->rq_bios, struct blk_bio, b_link);
		ASSERT(fb->b_sector == rq->rq_sector &&
		       lb->b_sector + lb->b_nr_sectors == blk_rq_end(rq));
		rq->rq_ioprio = blk_ioprio_best(rq->rq_ioprio, b->b_prio);
		__blk_trace_bio(q, kind == 1 ? 'M' : 'F', b);
		__blk_account_merge(q, b);
		q->q_stats.merges++;
		if (q->q_elv->merged)
			q->q_elv->merged(q, rq, kind == 2);
		return 1;
	}
	return 0;
}

/* ---- priority inheritance (blk_boost) ------------------------------- */

/* Is a served before b (effective class, then level)? */
static int blk_ioprio_above(uint16_t a, uint16_t b)
{
	unsigned ca = blk_ioprio_class(a), cb = blk_ioprio_class(b);
	if (ca != cb)
		return ca < cb;
	return blk_ioprio_level(a) < blk_ioprio_level(b);
}

/* A bio of a boosted tag reaching the elevator late takes the boost. */
static void __blk_boost_bio(struct blk_queue *q, struct blk_bio *b)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	if (!b->b_boost_tag)
		return;
	for (unsigned i = 0; i < BLK_BOOST_TAGS; i++)
		if (q->q_boost_tag[i] == b->b_boost_tag &&
		    blk_ioprio_above(q->q_boost_prio[i], b->b_prio))
			b->b_prio = q->q_boost_prio[i];
}

static void __blk_boost_remember(struct blk_queue *q, uint64_t tag, uint16_t ioprio)
{
	ASSERT(rt_mutex_held(&q->q_lock) && tag); /* tag 0: "none" */
	for (unsigned i = 0; i < BLK_BOOST_TAGS; i++) {
		if (q->q_boost_tag[i] == tag) {
			if (blk_ioprio_above(ioprio, q->q_boost_prio[i]))
				q->q_boost_prio[i] = ioprio;
			return;
		}
	}
	q->q_boost_tag[q->q_boost_next] = tag;
	q->q_boost_prio[q->q_boost_next] = ioprio;
	q->q_boost_next = (q->q_boost_next + 1) % BLK_BOOST_TAGS;
	ASSERT(q->q_boost_tag[(q->q_boost_next + BLK_BOOST_TAGS - 1) % BLK_BOOST_TAGS] == tag);
}

static int blk_rq_has_tag(const struct blk_request *rq, uint64_t tag)
{
	const struct blk_bio *b;
	BLK_RQ_FOR_EACH_BIO(b, rq)
		if (b->b_boost_tag == tag)
			return 1;
	return 0;
}

/* Raise one queued request; 1 if it was raised. */
static int __blk_boost_rq(struct blk_queue *q, struct blk_request *rq, uint16_t ioprio,
			  uint64_t now)
{
	uint16_t old = rq->rq_ioprio;
	struct blk_bio *b;

	ASSERT(rq->rq_state == BLK_RQ_QUEUED);
	if (!blk_ioprio_above(ioprio, old))
		return 0;
	rq->rq_ioprio = ioprio;
	BLK_RQ_FOR_EACH_BIO(b, rq)
		b->b_prio = ioprio;
	if (!rq->rq_boost_ns) {
		uint64_t before = now - rq->rq_i_ns;
		rq->rq_boost_ns = now ? now : 1;
		q->q_stats.boosted_rqs++;
		q->q_stats.boost_wait_before_ns_sum += before;
		if (before > q->q_stats.boost_wait_before_ns_max)
			q->q_stats.boost_wait_before_ns_max = before;
	}
	ASSERT(rq->rq_ioprio == ioprio && rq->rq_boost_ns);
	if (q->q_elv->boost)
		q->q_elv->boost(q, rq, old);
	return 1;
}

int blk_boost(struct blk_queue *q, uint64_t tag, uint16_t ioprio)
{
	struct blk_request *rq;
	int n = 0;

	if (!q || !tag)
		return -EINVAL;
	rt_mutex_lock(&q->q_lock);
	uint64_t now = rt_now_ns();
	__blk_boost_remember(q, tag, ioprio);
	RT_LIST_FOR_EACH(rq, &q->q_queued, struct blk_request, rq_qlink)
		if (blk_rq_has_tag(rq, tag))
			n += __blk_boost_rq(q, rq, ioprio, now);
	ASSERT((unsigned)n <= q->q_nr_queued); /* each raised one is queued */
	if (n) {
		q->q_stats.boosts++;
		__blk_run_queue(q); /* a class that now preempts may go first */
	}
	blk_unlock(q);
	return n;
}

/* Dispatch of a raised request: how long it waited after the raise. */
static void __blk_boost_dispatched(struct blk_queue *q, const struct blk_request *rq)
{
	uint64_t after;

	if (!rq->rq_boost_ns)
		return;
	/* dispatched after it was queued (and raised) */
	ASSERT(rq->rq_state == BLK_RQ_INFLIGHT && rq->rq_d_ns >= rq->rq_i_ns);
	after = rq->rq_d_ns - rq->rq_boost_ns;
	q->q_stats.boost_wait_after_ns_sum += after;
	if (after > q->q_stats.boost_wait_after_ns_max)
		q->q_stats.boost_wait_after_ns_max = after;
}

/*
 * Hand one bio to the elevator: merge it, or make it a request. When the
 * request pool is empty the thread sleeps (event S), after unplugging so
 * that requests can complete and come back.
 */
void __blk_insert_bio(struct blk_queue *q, struct blk_bio *b)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(b->b_nr_sectors > 0 || b->b_op == BLK_OP_FLUSH);
	ASSERT(b->b_queue == q && rt_list_empty(&b->b_link)); /* in no plug, no request */
	__blk_boost_bio(q, b);
	for (;;) {
		if (__blk_try_merge(q, b))
			return;
		if (q->q_nr_free > 0)
			break;
		__blk_trace_bio(q, 'S', b);
		__blk_unplug(q, 'U');
		rt_cond_wait(&q->q_rq_wait, &q->q_lock);
	}
	struct blk_request *rq = __blk_rq_alloc(q, b);
	ASSERT(rt_list_empty(&rq->rq_qlink) && rq->rq_nr_bios == 1); /* on no list yet */
	__blk_trace_rq(q, 'G', rq);
	rq->rq_i_ns = rt_now_ns();
	if (b->b_op == BLK_OP_FLUSH) {
		/* A bare flush bypasses the elevator (as 2.6.37+ flush
		 * machinery does; 2.6.29 drained the queue instead). */
		rt_list_add_tail(&q->q_dispatch, &rq->rq_qlink);
		__blk_trace_rq(q, 'I', rq);
		return;
	}
	int was_empty = q->q_nr_queued == 0;
	rt_list_add_tail(&q->q_queued, &rq->rq_qlink);
	q->q_nr_queued++;
	q->q_elv->add(q, rq);
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && q->q_nr_queued > 0);
	__blk_trace_rq(q, 'I', rq);
	__blk_maybe_plug(q, was_empty);
}

/* ---- dispatch and completion ----------------------------------------- */

static void blk_rq_done(struct dev_req *r);

/* A request of several bios whose buffers are not back to back in memory
 * needs one contiguous buffer for the device. */
/* The bytes of b_buf a bio of this many sectors uses (stamped: stamps). */
static size_t blk_bio_buf_bytes(const struct blk_bio *b)
{
	size_t n = (size_t)b->b_nr_sectors << BLK_SECTOR_SHIFT;

	return b->b_flags & BLK_STAMPED ? n / DEV_STAMP_BLOCK * sizeof(struct dev_stamp) : n;
}

/* Stamped bios in the request: 0, some, or every one. */
static unsigned blk_rq_stamped(const struct blk_request *rq)
{
	const struct blk_bio *b;
	unsigned n = 0;

	BLK_RQ_FOR_EACH_BIO(b, rq)
		n += !!(b->b_flags & BLK_STAMPED);
	ASSERT(n <= rq->rq_nr_bios);
	return n;
}

static int blk_rq_needs_bounce(const struct blk_request *rq, unsigned stamped)
{
	ASSERT(rq->rq_op != BLK_OP_FLUSH && stamped <= rq->rq_nr_bios);
	if (rq->rq_nr_bios < 2)
		return 0;
	if (stamped && stamped != rq->rq_nr_bios)
		return 1;    /* mixed: the device gets bytes */
	const struct blk_bio *b, *next;
	BLK_RQ_FOR_EACH_BIO(b, rq) {
		const char *end = (const char *)b->b_buf + blk_bio_buf_bytes(b);
		next = RT_LIST_NEXT(&rq->rq_bios, b, struct blk_bio, b_link);
		if (next && end != (const char *)next->b_buf)
			return 1;
	}
	return 0;
}

static void *__blk_bounce_get(struct blk_queue *q, struct blk_request *rq)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_slot < 0 && q->q_in_flight <= q->q_depth);
	for (unsigned i = 0; i < q->q_depth; i++) {
		if (q->q_bounce_busy[i])
			continue;
		if (!q->q_bounce[i]) {
			q->q_bounce[i] = malloc(q->q_bounce_bytes);
			if (!q->q_bounce[i])
				return NULL;
		}
		q->q_bounce_busy[i] = 1;
		rq->rq_slot = (int)i;
		return q->q_bounce[i];
	}
	/* each request in flight holds at most one slot, this one none yet */
	ASSERT(!"a bounce slot for every request in flight");
	return NULL;
}

static void __blk_complete_rq(struct blk_queue *q, struct blk_request *rq,
			      int64_t result);

static void __blk_start_rq(struct blk_queue *q, struct blk_request *rq)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && rt_list_empty(&rq->rq_qlink));
	/* the elevator let it go; it carries its bios */
	ASSERT(rt_list_empty(&rq->rq_slink) && rt_list_empty(&rq->rq_flink) &&
	       !rt_list_empty(&rq->rq_bios));
	ASSERT(q->q_in_flight < q->q_depth);
	rq->rq_state = BLK_RQ_INFLIGHT;
	rq->rq_d_ns = rt_now_ns();
	q->q_in_flight++;
	if (q->q_in_flight > q->q_stats.in_flight_max)
		q->q_stats.in_flight_max = q->q_in_flight;
	q->q_stats.dispatched++;
	__blk_boost_dispatched(q, rq);
	__blk_trace_rq(q, 'D', rq);

	struct dev_req *r = &rq->rq_dev;
	memset(r, 0, sizeof(*r));
	r->r_op = rq->rq_op == BLK_OP_READ ? DEV_OP_READ :
		  rq->rq_op == BLK_OP_WRITE ? DEV_OP_WRITE : DEV_OP_FLUSH;
	if (rq->rq_op == BLK_OP_WRITE && dev_volatile_cache(q->q_dev)) {
		if (rq->rq_flags & BLK_FUA)
			r->r_flags |= DEV_REQ_FUA;
		if (rq->rq_flags & BLK_PREFLUSH)
			r->r_flags |= DEV_REQ_PREFLUSH;
	}
	if (rq->rq_op != BLK_OP_FLUSH && (rq->rq_flags & BLK_DIRECT))
		r->r_flags |= DEV_REQ_DIRECT;
	if ((rq->rq_flags & BLK_POLLED) && dev_can_poll(q->q_dev)) {
		struct blk_bio *b;
		r->r_flags |= DEV_REQ_POLLED;
		BLK_RQ_FOR_EACH_BIO(b, rq)
			b->b_polling = true;
		rt_cond_broadcast(&q->q_done); /* blk_wait: poll now */
	}
	r->r_ioprio = rq->rq_ioprio;
	r->r_done = blk_rq_done;
	r->r_priv = rq;
	if (rq->rq_op != BLK_OP_FLUSH) {
		unsigned stamped = blk_rq_stamped(rq);
		/* all stamped: stamps to the device; mixed: bytes */
		bool as_stamps = stamped && stamped == rq->rq_nr_bios;

		r->r_off = rq->rq_sector << BLK_SECTOR_SHIFT;
		r->r_len = rq->rq_nr_sectors << BLK_SECTOR_SHIFT;
		r->r_buf = RT_LIST_FIRST(&rq->rq_bios, struct blk_bio, b_link)->b_buf;
		if (as_stamps)
			r->r_flags |= DEV_REQ_STAMPED;
		if (blk_rq_needs_bounce(rq, stamped)) {
			char *bb = __blk_bounce_get(q, rq);
			if (!bb) {
				__blk_complete_rq(q, rq, -ENOMEM);
				return;
			}
			if (rq->rq_op == BLK_OP_WRITE) {
				const struct blk_bio *b;
				size_t off = 0;
				BLK_RQ_FOR_EACH_BIO(b, rq) {
					size_t n = (size_t)b->b_nr_sectors << BLK_SECTOR_SHIFT;
					if (as_stamps || !(b->b_flags & BLK_STAMPED)) {
						n = blk_bio_buf_bytes(b);
						memcpy(bb + off, b->b_buf, n);
					} else {
						dev_stamps_fill(bb + off, b->b_buf, n / DEV_STAMP_BLOCK);
					}
					off += n;
				}
				ASSERT(off <= q->q_bounce_bytes);
			}
			r->r_buf = bb;
		}
	}
	int rc = dev_submit(q->q_dev, r);
	if (rc < 0)
		__blk_complete_rq(q, rq, rc);
}

/* Give the device what the elevator releases, up to the queue depth. */
void __blk_run_queue(struct blk_queue *q)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT((q->q_nr_queued == 0) == rt_list_empty(&q->q_queued));
	if (q->q_plugged)
		return;
	while (q->q_in_flight < q->q_depth) {
		struct blk_request *rq = NULL;
		if (!rt_list_empty(&q->q_dispatch)) {
			rq = RT_LIST_POP(&q->q_dispatch, struct blk_request, rq_qlink);
			ASSERT(rq->rq_op == BLK_OP_FLUSH); /* only flushes skip the elevator */
		} else {
			if (q->q_nr_queued == 0)
				break;
			rq = q->q_elv->dispatch(q);
			if (!rq)
				break;
			ASSERT(rq->rq_state == BLK_RQ_QUEUED && q->q_nr_queued > 0 &&
			       rq->rq_op != BLK_OP_FLUSH);
			/* the elevator let go of it; q_queued still holds it */
			ASSERT(rq->rq_q == q && !rt_list_empty(&rq->rq_qlink));
			rt_list_del(&rq->rq_qlink);
			q->q_nr_queued--;
		}
		__blk_start_rq(q, rq);
	}
	ASSERT(q->q_in_flight <= q->q_depth);
	/* a flush waits in q_dispatch only while the device is full */
	ASSERT(q->q_in_flight == q->q_depth || rt_list_empty(&q->q_dispatch));
}

static void __blk_bounce_copy_out(struct blk_queue *q, struct blk_request *rq)
{
	ASSERT(rq->rq_op == BLK_OP_READ && rq->rq_slot >= 0 && q->q_bounce_busy[rq->rq_slot]);
	const char *bb = q->q_bounce[rq->rq_slot];
	const struct blk_bio *b;
	size_t off = 0;
	BLK_RQ_FOR_EACH_BIO(b, rq) {
		size_t n = (size_t)b->b_nr_sectors << BLK_SECTOR_SHIFT;
		memcpy(b->b_buf, bb + off, n);
		off += n;
	}
	ASSERT(off == (size_t)rq->rq_nr_sectors << BLK_SECTOR_SHIFT && off <= q->q_bounce_bytes);
}

static void __blk_complete_rq(struct blk_queue *q, struct blk_request *rq,
			      int64_t result)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_state == BLK_RQ_INFLIGHT && rt_list_empty(&rq->rq_qlink));
	ASSERT(q->q_in_flight > 0);
	uint64_t now = rt_now_ns();
	int error = 0;
	if (result < 0)
		error = (int)result;
	else if (rq->rq_op != BLK_OP_FLUSH &&
		 (uint64_t)result != ((uint64_t)rq->rq_nr_sectors << BLK_SECTOR_SHIFT))
		error = -EIO; /* a short transfer */
	if (rq->rq_slot >= 0) {
		if (!error && rq->rq_op == BLK_OP_READ)
			__blk_bounce_copy_out(q, rq);
		q->q_bounce_busy[rq->rq_slot] = 0;
		rq->rq_slot = -1;
	}
	q->q_in_flight--;
	q->q_stats.completed++;
	if (error)
		q->q_stats.errors++;
	if (error && rq->rq_op != BLK_OP_READ) { /* before any waiter hears of it */
		__atomic_store_n(&q->q_write_errno, error, __ATOMIC_RELAXED);
		__atomic_add_fetch(&q->q_write_errors, 1, __ATOMIC_RELEASE);
	}
	__blk_trace_c(q, rq, error);
	if (rq->rq_op != BLK_OP_FLUSH)
		q->q_elv->completed(q, rq);

	struct blk_bio *b;
	unsigned nb = 0;
	uint64_t ns = 0;
	while ((b = RT_LIST_POP(&rq->rq_bios, struct blk_bio, b_link))) {
		ASSERT(b->b_queue == q && !b->b_done);
		nb++;
		ns += b->b_nr_sectors;
		b->b_error = error;
		b->b_d_ns = rq->rq_d_ns;
		b->b_c_ns = now;
		__blk_account_bio(q, b, rq, now);
		if (b->b_end_io) {
			q->q_end_pending++;
			rt_list_add_tail(&q->q_end, &b->b_link);
		} else {
			b->b_done = true;
		}
	}
	/* merges kept the counts of what the request carried */
	ASSERT(nb == rq->rq_nr_bios);
	ASSERT(ns == rq->rq_nr_sectors);
	__blk_rq_free(q, rq);
	/* each request is in at most one place: free, queued, in flight */
	ASSERT(q->q_nr_free + q->q_nr_queued + q->q_in_flight <= q->q_opts.nr_requests);
	rt_cond_broadcast(&q->q_done);
}

/* The device's completion thread. As 2.6.29's SCSI completion path runs
 * the queue, a completion also lifts the queue-level plug. */
static void blk_rq_done(struct dev_req *r)
{
	struct blk_request *rq = r->r_priv;
	struct blk_queue *q = rq->rq_q;
	ASSERT(r == &rq->rq_dev && q && rq >= q->q_pool &&
	       rq < q->q_pool + q->q_opts.nr_requests);
	rt_mutex_lock(&q->q_lock);
	__blk_complete_rq(q, rq, r->r_result);
	__blk_unplug(q, 0);
	blk_unlock(q);
}

/* ---- kblockd: the queue's timers ------------------------------------- */

static uint64_t blk_earliest(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

static void blk_kblockd(void *arg)
{
	struct blk_queue *q = arg;
	rt_mutex_lock(&q->q_lock);
	while (!q->q_stop) {
		uint64_t now = rt_now_ns();
		ASSERT(!q->q_plugged || q->q_unplug_at); /* a plug has its timer */
		if (q->q_plugged && q->q_unplug_at && now >= q->q_unplug_at)
			__blk_unplug(q, 'T');
		uint64_t elv_at = q->q_elv->timer_at ? q->q_elv->timer_at(q) : 0;
		if (elv_at && now >= elv_at) {
			q->q_elv->timer(q);
			__blk_run_queue(q);
			continue;
		}
		if (!rt_list_empty(&q->q_end)) {
			blk_unlock(q);
			rt_mutex_lock(&q->q_lock);
			continue;
		}
		uint64_t next = blk_earliest(q->q_plugged ? q->q_unplug_at : 0, elv_at);
		if (next)
			rt_cond_timedwait(&q->q_kick, &q->q_lock, next);
		else
			rt_cond_wait(&q->q_kick, &q->q_lock);
	}
	ASSERT(q->q_dying); /* stopped by blk_queue_free, after its drain */
	blk_unlock(q);
}

/* ---- queue lifecycle ------------------------------------------------- */

/* The registry row opts names (NULL: noop), or NULL when none is called so. */
static const struct blk_elevator_type *blk_elevator_of(const struct blk_queue_opts *o)
{
	return o->elevator ? blk_elevator_find(o->elevator) : &blk_elevator_noop;
}

/* q's elevator reads its tunables from its own copy of
 * opts->elevator_tunables (or of its table's defaults). */
static int blk_elv_tunables_setup(struct blk_queue *q, const struct blk_elevator_type *t)
{
	if (!t->e_tunables)
		return 0;
	ASSERT(!q->q_elv_tunables && t->e_tunables->t_size > 0); /* set up once */
	q->q_elv_tunables = calloc(1, t->e_tunables->t_size);
	if (!q->q_elv_tunables)
		return -ENOMEM;
	if (q->q_opts.elevator_tunables)
		memcpy(q->q_elv_tunables, q->q_opts.elevator_tunables, t->e_tunables->t_size);
	else
		rt_param_defaults(t->e_tunables, q->q_elv_tunables);
	q->q_opts.elevator_tunables = q->q_elv_tunables; /* nor the caller's struct */
	return 0;
}

static int blk_queue_check_opts(const struct blk_queue_opts *o)
{
	if (!blk_elevator_of(o))
		return -EINVAL;
	if ((unsigned)o->plug_policy > BLK_PLUG_IMPLICIT_SYNC)
		return -EINVAL;
	if (o->max_sectors == 0 || o->max_sectors > (1u << 22))
		return -EINVAL;
	if (o->nr_requests == 0 || o->nr_requests > 65536)
		return -EINVAL;
	if (o->queue_depth > 4096 || o->unplug_thresh == 0)
		return -EINVAL;
	return 0;
}

static int blk_queue_alloc(struct blk_queue *q)
{
	ASSERT(q->q_depth > 0 && rt_list_empty(&q->q_free) && !q->q_nr_free);
	q->q_pool = calloc(q->q_opts.nr_requests, sizeof(*q->q_pool));
	q->q_bounce = calloc(q->q_depth, sizeof(*q->q_bounce));
	q->q_bounce_busy = calloc(q->q_depth, 1);
	if (!q->q_pool || !q->q_bounce || !q->q_bounce_busy)
		return -ENOMEM;
	for (unsigned i = 0; i < q->q_opts.nr_requests; i++) {
		struct blk_request *rq = &q->q_pool[i];
		rq->rq_q = q;
		rq->rq_state = BLK_RQ_FREE;
		rt_list_add_tail(&q->q_free, &rq->rq_qlink);
	}
	q->q_nr_free = q->q_opts.nr_requests;
	return blk_trace_alloc(q);
}

static void blk_queue_dealloc(struct blk_queue *q)
{
	/* nothing in the elevator, at the device or waiting to be issued */
	ASSERT(!q->q_in_flight && !q->q_nr_queued && rt_list_empty(&q->q_dispatch) &&
	       rt_list_empty(&q->q_end));
	if (q->q_bounce)
		for (unsigned i = 0; i < q->q_depth; i++)
			free(q->q_bounce[i]);
	free(q->q_bounce);
	free(q->q_bounce_busy);
	free(q->q_pool);
	free(q->q_elv_tunables);
	blk_trace_free(q);
	free(q);
}

int blk_queue_new(struct dev *dev, const struct blk_queue_opts *opts,
		  struct blk_queue **out)
{
	struct blk_queue_opts def;
	if (!opts) {
		blk_queue_opts_default(&def);
		opts = &def;
	}
	if (!dev || !out || blk_queue_check_opts(opts) < 0)
		return -EINVAL;
	const struct blk_elevator_type *elv = blk_elevator_of(opts);
	struct blk_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->q_opts = *opts;
	q->q_opts.elevator = elv->e_name; /* the caller's string need not outlive q */
	q->q_dev = dev;
	q->q_block_size = dev_block_size(dev);
	q->q_nr_sectors = dev_size(dev) >> BLK_SECTOR_SHIFT;
	q->q_rotational = dev_rotational(dev);
	q->q_depth = opts->queue_depth ? opts->queue_depth : dev_queue_depth(dev);
	if (q->q_depth == 0)
		q->q_depth = 1;
	q->q_bounce_bytes = opts->max_sectors << BLK_SECTOR_SHIFT;
	q->q_elv = elv->e_ops;
	q->q_t0 = rt_now_ns();
	rt_list_init(&q->q_free);
	rt_list_init(&q->q_queued);
	rt_list_init(&q->q_dispatch);
	rt_list_init(&q->q_end);
	int rc = blk_queue_alloc(q);
	if (rc == 0)
		rc = blk_elv_tunables_setup(q, elv);
	if (rc < 0)
		goto fail;
	rc = q->q_elv->init(q);
	if (rc < 0)
		goto fail;
	rt_mutex_init(&q->q_lock, "blk_queue");
	rt_cond_init(&q->q_kick, "blk_kick");
	rt_cond_init(&q->q_done, "blk_done");
	rt_cond_init(&q->q_rq_wait, "blk_rq_wait");
	rc = rt_thread_create(&q->q_kblockd, "kblockd", blk_kblockd, q);
	if (rc < 0) {
		q->q_elv->exit(q);
		rt_cond_release(&q->q_rq_wait);
		rt_cond_release(&q->q_done);
		rt_cond_release(&q->q_kick);
		rt_mutex_release(&q->q_lock);
		goto fail;
	}
	ASSERT(q->q_nr_free == q->q_opts.nr_requests && q->q_elv_data);
	*out = q;
	return 0;
fail:
	blk_queue_dealloc(q);
	return rc;
}

void blk_drain(struct blk_queue *q)
{
	blk_plug_flush_current();
	rt_mutex_lock(&q->q_lock);
	__blk_unplug(q, 'U');
	for (;;) {
		if (!rt_list_empty(&q->q_end)) {
			/* Our own completions (a failed dev_submit): call them. */
			blk_unlock(q);
			rt_mutex_lock(&q->q_lock);
			continue;
		}
		/* Also wait for end_io callbacks running on other threads:
		 * after a drain the caller may free what they use. */
		if (!q->q_nr_queued && !q->q_in_flight && rt_list_empty(&q->q_dispatch) &&
		    !q->q_end_pending) {
			/* nothing queued, dispatched or in flight: all free */
			ASSERT(q->q_nr_free == q->q_opts.nr_requests);
			break;
		}
		__blk_run_queue(q);
		if (rt_list_empty(&q->q_end))
			rt_cond_wait(&q->q_done, &q->q_lock);
	}
	ASSERT(rt_list_empty(&q->q_end) && !q->q_plugged);
	blk_unlock(q);
}

void blk_queue_free(struct blk_queue *q)
{
	if (!q)
		return;
	rt_mutex_lock(&q->q_lock);
	q->q_dying = 1;
	rt_mutex_unlock(&q->q_lock);
	blk_drain(q);
	rt_mutex_lock(&q->q_lock);
	q->q_stop = 1;
	rt_cond_signal(&q->q_kick);
	rt_mutex_unlock(&q->q_lock);
	rt_thread_join(q->q_kblockd);
	ASSERT(q->q_nr_free == q->q_opts.nr_requests); /* every request came back */
	ASSERT(!q->q_end_pending); /* every end_io returned: its bios may go */
	q->q_elv->exit(q);
	rt_cond_release(&q->q_rq_wait);
	rt_cond_release(&q->q_done);
	rt_cond_release(&q->q_kick);
	rt_mutex_release(&q->q_lock);
	blk_queue_dealloc(q);
}

/* ---- submission and waiting ------------------------------------------ */

static int blk_bio_check(const struct blk_queue *q, const struct blk_bio *b)
{
	if ((b->b_flags & BLK_POLLED) && b->b_end_io)
		return -EINVAL;
	if (b->b_op == BLK_OP_FLUSH)
		return 0;
	if (b->b_op != BLK_OP_READ && b->b_op != BLK_OP_WRITE)
		return -EINVAL;
	if (b->b_nr_sectors == 0 || !b->b_buf)
		return -EINVAL;
	if (b->b_op == BLK_OP_READ && (b->b_flags & (BLK_FUA | BLK_PREFLUSH | BLK_STAMPED)))
		return -EINVAL;
	if ((b->b_flags & BLK_STAMPED) &&
	    ((b->b_sector << BLK_SECTOR_SHIFT) % DEV_STAMP_BLOCK ||
	     ((uint64_t)b->b_nr_sectors << BLK_SECTOR_SHIFT) % DEV_STAMP_BLOCK))
		return -EINVAL;
	uint32_t spb = q->q_block_size >> BLK_SECTOR_SHIFT;
	if (spb > 1 && (b->b_sector % spb || b->b_nr_sectors % spb))
		return -EINVAL;
	if (b->b_sector >= q->q_nr_sectors ||
	    b->b_nr_sectors > q->q_nr_sectors - b->b_sector)
		return -EINVAL;
	return 0;
}

/* Does this bio unplug at once? A flush always does (a 2.6.29 barrier
 * did); a SYNC bio does under implicit-sync (WRITE_SYNC had UNPLUG). */
static int blk_bio_unplugs(const struct blk_queue *q, const struct blk_bio *b)
{
	if (b->b_op == BLK_OP_FLUSH)
		return 1;
	return q->q_opts.plug_policy == BLK_PLUG_IMPLICIT_SYNC && (b->b_flags & BLK_SYNC);
}

int blk_submit(struct blk_queue *q, struct blk_bio *b)
{
	if (!q || !b)
		return -EINVAL;
	int rc = blk_bio_check(q, b);
	if (rc < 0)
		return rc;
	b->b_queue = q;
	rt_list_init(&b->b_link);
	b->b_error = 0;
	b->b_done = false;
	b->b_polling = false;
	/* where the device cannot poll, an ordinary bio: it merges too (the
	 * sim's disks, under a caller that polls where it can) */
	if ((b->b_flags & BLK_POLLED) && !dev_can_poll(q->q_dev))
		b->b_flags &= ~BLK_POLLED;
	b->b_d_ns = b->b_c_ns = 0;
	b->b_prio = b->b_ioprio ? b->b_ioprio : rt_ioprio_get();
	b->b_pid = rt_self_pid();
	snprintf(b->b_comm, sizeof(b->b_comm), "%s", rt_self_name());
	int unplugs = blk_bio_unplugs(q, b);

	rt_mutex_lock(&q->q_lock);
	if (q->q_dying) {
		rt_mutex_unlock(&q->q_lock);
		return -ESHUTDOWN;
	}
	b->b_q_ns = rt_now_ns();
	q->q_stats.queued++;
	__blk_trace_bio(q, 'Q', b);
	if (blk_plug_take(q, b)) {
		rt_mutex_unlock(&q->q_lock);
		if (unplugs)
			blk_plug_flush_current();
		return 0;
	}
	__blk_insert_bio(q, b);
	if (unplugs)
		__blk_unplug(q, 'U');
	__blk_run_queue(q);
	blk_unlock(q);
	return 0;
}

int blk_wait(struct blk_bio *b)
{
	struct blk_queue *q = b->b_queue;
	if (!q || b->b_end_io)
		return -EINVAL;
	blk_plug_flush_current();
	rt_mutex_lock(&q->q_lock);
	if (!b->b_done)
		__blk_unplug(q, 'U');
	while (!b->b_done) {
		if (!b->b_polling) {
			/* not at the device yet, or not polled */
			rt_cond_wait(&q->q_done, &q->q_lock);
			continue;
		}
		/* the device holds it for a poller: run it here. The count
		 * is read before letting go: a completion on another poller
		 * after this makes dev_poll return */
		uint64_t gen = dev_poll_gen(q->q_dev);
		blk_unlock(q);
		(void)dev_poll(q->q_dev, gen);
		rt_mutex_lock(&q->q_lock);
	}
	ASSERT(b->b_done && rt_list_empty(&b->b_link));
	int err = b->b_error;
	blk_unlock(q);
	return err;
}

int blk_submit_wait(struct blk_queue *q, struct blk_bio *b)
{
	if (b->b_end_io)
		return -EINVAL;
	int rc = blk_submit(q, b);
	if (rc < 0)
		return rc;
	return blk_wait(b);
}

int blk_flush(struct blk_queue *q)
{
	struct blk_bio b;
	memset(&b, 0, sizeof(b));
	b.b_op = BLK_OP_FLUSH;
	b.b_flags = BLK_SYNC | BLK_PREFLUSH;
	return blk_submit_wait(q, &b);
}

void blk_unplug(struct blk_queue *q)
{
	rt_mutex_lock(&q->q_lock);
	__blk_unplug(q, 'U');
	blk_unlock(q);
}

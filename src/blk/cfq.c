/*
 * cfq: Completely Fair Queueing as in Linux 2.6.29 cfq-iosched.c, with the
 * 2.6.33 corrections of that file (banked slice time moves a queue
 * forward, one request per dispatch call with cfq_may_dispatch's checks,
 * idling decided per queue in flight).
 *
 * The one idea: the disk is lent to one queue at a time for a time slice.
 * Sync requests (reads, SYNC writes) go to a queue private to the issuing
 * thread; async writes share one queue per (class, level). Busy queues wait
 * on one service list ordered RT first, IDLE last, then by a key that is
 * "now + a priority offset - banked time". The active queue keeps the disk
 * for its slice; when its sync queue runs empty CFQ *idles* slice_idle for
 * the same thread's next request rather than seek elsewhere - the
 * behaviour behind the kjournald latencies of "Give kjournald a
 * IOPRIO_CLASS_RT io priority" (LKML, 2007) and "jbd2: tag journal writes
 * as metadata I/O" (linux-ext4, 2010) - unless a request that may
 * preempt arrives (RT over BE, sync over async, META over non-META).
 *
 * Timers: only the idle timer, run by the queue's kblockd thread
 * (timer_at/timer hooks). Everything is under q_lock.
 *
 * blk_boost (priority inheritance of queued requests, the journal's
 * `inherit`): CFQ schedules queues, not requests, and a thread's sync
 * queue has one class and level, as a process's io context has one
 * ioprio. So a raised sync request moves its owner's whole sync queue to
 * the new class and level (what CFQ does when it notices a task's ioprio
 * changed: cfq_requeue_prio): the owner is the thread whose I/O is being
 * waited for (kjournald, or the fsync that commits), and its other queued
 * requests are that same commit's in practice. When the owner next
 * submits at its base priority, its queue drops back the same way. A
 * raised async request (or a sync one that shares an async queue because
 * the sync table was full) leaves its queue for the async queue of the new
 * class and level, keeping its FIFO deadline. Either way the raised queue
 * may preempt the active one by the usual rules (RT over BE ...).
 *
 * Differences from the kernel are listed in docs/blk.md ("Differences from the kernel of that era").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blk_int.h"

#define CFQ_MAX_SYNC_QUEUES 128    /* a limit on threads with sync I/O */
/* The kernel's fixed constants are tunables here too (the lab moves every
 * one): slice_scale, idle_delay_ns, min_tt_ns, hw_queue_min, seeky_sectors,
 * sample_valid, front_backoff_ns; see cfq_rows below. */
#define CFQ_SAMPLE_VALID(cd, n) ((n) > (cd)->cd_t.sample_valid)

/* Its tunables (2.6.29 cfq-iosched.c defaults, its sysfs iosched/ files;
 * cfq_table below). */
struct cfq_tunables {
	unsigned quantum;            /* 4: in-flight cap of one queue when others are busy */
	uint64_t fifo_expire_sync_ns;  /* 125 ms */
	uint64_t fifo_expire_async_ns; /* 250 ms */
	uint32_t back_seek_max_kib;  /* 16384 */
	unsigned back_seek_penalty;  /* 2 */
	uint64_t slice_sync_ns;      /* 100 ms */
	uint64_t slice_async_ns;     /* 40 ms */
	unsigned slice_async_rq;     /* 2 */
	uint64_t slice_idle_ns;      /* 8 ms (HZ=250); 0 disables idling */
	/* Does the device queue commands (CFQ's hw_tag)? -1 = from the
	 * device's queue depth (>= hw_queue_min: yes), 0 = no, 1 = yes. */
	int hw_tag;
	/* The 2.6.29 code's fixed constants, tunable here. */
	unsigned slice_scale;        /* 5: slice = base + base/scale * (4 - level) */
	uint64_t idle_delay_ns;      /* 200 ms: an idle-class queue's service-tree offset */
	uint64_t min_tt_ns;          /* 2 ms: idle wait for a seeky thread */
	unsigned hw_queue_min;       /* 5: queue depth from which hw_tag is assumed */
	uint64_t seeky_sectors;      /* 8192: mean seek above this = seeky */
	unsigned sample_valid;       /* 80: samples before a mean counts */
	uint64_t front_backoff_ns;   /* 1 s: a front insertion's key offset */
};

struct cfqq {
	bool cq_used;
	int cq_pid;                 /* sync: owning thread; async: -1 */
	bool cq_sync;
	unsigned cq_class;          /* RT_IOPRIO_CLASS_RT / BE / IDLE */
	unsigned cq_level;
	uint16_t cq_ioprio;         /* as submitted, to notice changes */
	struct rt_link cq_sort;    /* requests by sector (rq_slink) */
	struct rt_link cq_fifo;    /* requests by arrival (rq_flink) */
	struct blk_request *cq_next_rq;
	unsigned cq_queued, cq_meta_pending, cq_dispatched;
	/* service list */
	bool cq_on_rr;
	int64_t cq_rb_key;
	struct rt_link cq_rr;
	/* slice */
	uint64_t cq_slice_end_ns;
	int64_t cq_slice_resid;
	unsigned cq_slice_dispatch;
	bool cq_slice_new, cq_wait_request, cq_must_dispatch, cq_fifo_checked;
	bool cq_idle_window;
	/* the io context's detectors (sync queues) */
	uint64_t cq_last_end_request;
	uint64_t cq_ttime_samples, cq_ttime_total, cq_ttime_mean;
	uint64_t cq_last_request_pos;
	uint64_t cq_seek_samples, cq_seek_total, cq_seek_mean;
	uint64_t cq_last_used;      /* for recycling the table */
};

struct cfq_data {
	struct cfq_tunables cd_t;
	struct cfqq cd_sync[CFQ_MAX_SYNC_QUEUES];
	struct cfqq cd_async_rt[RT_IOPRIO_LEVELS], cd_async_be[RT_IOPRIO_LEVELS];
	struct cfqq cd_async_idle;
	struct rt_link cd_rr;      /* the service list (cq_rr) */
	struct cfqq *cd_active;
	unsigned cd_busy_queues, cd_busy_rt_queues;
	unsigned cd_rq_in_driver[2];/* [async, sync] */
	unsigned cd_sync_flight;
	uint64_t cd_last_position;  /* head: end of the last dispatched request */
	uint64_t cd_idle_timer_at;  /* 0 = not armed */
	uint64_t cd_idle_start_ns;     /* when the armed idle window began */
	struct blk_queue_stats *cd_stats; /* the queue's: idle windows counted there */
	bool cd_hw_tag, cd_nonrot;
	uint64_t cd_use_seq;
};

static struct cfq_data *cfqd_of(struct blk_queue *q)
{
	struct cfq_data *cd = q->q_elv_data;
	ASSERT(cd); /* between cfq_init and cfq_exit */
	return cd;
}

static bool cfq_class_rt(const struct cfqq *cq)
{
	return cq->cq_class == RT_IOPRIO_CLASS_RT;
}

static bool cfq_class_idle(const struct cfqq *cq)
{
	return cq->cq_class == RT_IOPRIO_CLASS_IDLE;
}

/* slice = base + base/5 * (4 - level): 180..40 ms sync, 72..16 ms async. */
static uint64_t cfq_prio_slice(const struct cfq_data *cd, bool sync, unsigned level)
{
	ASSERT(level < RT_IOPRIO_LEVELS);
	int64_t base = (int64_t)(sync ? cd->cd_t.slice_sync_ns : cd->cd_t.slice_async_ns);
	int64_t s = base + base / cd->cd_t.slice_scale * (4 - (int64_t)level);
	return s > 0 ? (uint64_t)s : 1;
}

/* Async request cap per slice: 2 * (rq + rq * (7 - level)). */
static unsigned cfq_prio_to_maxrq(const struct cfq_data *cd, const struct cfqq *cq)
{
	unsigned base = cd->cd_t.slice_async_rq;
	ASSERT(!cq->cq_sync && cq->cq_level < RT_IOPRIO_LEVELS); /* the async cap */
	return 2 * (base + base * (RT_IOPRIO_LEVELS - 1 - cq->cq_level));
}

static bool cfq_slice_used(const struct cfqq *cq, uint64_t now)
{
	/* a new slice has no end until its first completion */
	ASSERT(!cq->cq_slice_new || cq->cq_slice_end_ns == 0);
	if (cq->cq_slice_new)
		return false;
	return now >= cq->cq_slice_end_ns;
}

static void cfq_init_queue_struct(struct cfqq *cq, int pid, bool sync, uint16_t ioprio)
{
	ASSERT(!cq->cq_on_rr && cq->cq_queued == 0 && cq->cq_dispatched == 0); /* idle */
	memset(cq, 0, sizeof(*cq));
	cq->cq_used = true;
	cq->cq_pid = pid;
	cq->cq_sync = sync;
	cq->cq_ioprio = ioprio;
	cq->cq_class = blk_ioprio_class(ioprio);
	cq->cq_level = blk_ioprio_level(ioprio);
	rt_list_init(&cq->cq_sort);
	rt_list_init(&cq->cq_fifo);
	rt_list_init(&cq->cq_rr);
}

static int cfq_init(struct blk_queue *q)
{
	const struct cfq_tunables *t = q->q_elv_tunables;
	ASSERT(t);
	if (t->quantum == 0 || t->slice_sync_ns == 0 || t->slice_async_ns == 0)
		return -EINVAL;
	struct cfq_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	cd->cd_t = *t;
	cd->cd_stats = &q->q_stats;
	rt_list_init(&cd->cd_rr);
	for (unsigned l = 0; l < RT_IOPRIO_LEVELS; l++) {
		cfq_init_queue_struct(&cd->cd_async_rt[l], -1, 0,
				      RT_IOPRIO(RT_IOPRIO_CLASS_RT, l));
		cfq_init_queue_struct(&cd->cd_async_be[l], -1, 0,
				      RT_IOPRIO(RT_IOPRIO_CLASS_BE, l));
	}
	cfq_init_queue_struct(&cd->cd_async_idle, -1, 0, RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 7));
	cd->cd_nonrot = !q->q_rotational;
	cd->cd_hw_tag = cd->cd_t.hw_tag >= 0 ? cd->cd_t.hw_tag != 0
					      : q->q_depth >= cd->cd_t.hw_queue_min;
	ASSERT(!q->q_elv_data);
	q->q_elv_data = cd;
	return 0;
}

static void cfq_exit(struct blk_queue *q)
{
	const struct cfq_data *cd = cfqd_of(q);
	/* the queue was drained: nothing waits for service or is in flight */
	ASSERT(!cd->cd_busy_queues && rt_list_empty(&cd->cd_rr) && !cd->cd_sync_flight &&
	       !cd->cd_rq_in_driver[0] && !cd->cd_rq_in_driver[1]);
	free(q->q_elv_data);
	q->q_elv_data = NULL;
}

/* ---- the service list ---------------------------------------------- */

static unsigned cfq_class_rank(const struct cfqq *cq)
{
	return cfq_class_rt(cq) ? 0 : cfq_class_idle(cq) ? 2 : 1;
}

static struct cfqq *cfq_rr_entry(struct rt_link *l)
{
	struct cfqq *cq = RT_LIST_ENTRY(l, struct cfqq, cq_rr);
	ASSERT(cq->cq_on_rr && cq->cq_used); /* the service list holds busy queues */
	return cq;
}

/* Busy queues, 1 less: lower levels start further back. */
static int64_t cfq_slice_offset(const struct cfq_data *cd, const struct cfqq *cq)
{
	int64_t d = (int64_t)cfq_prio_slice(cd, 1, 0) -
		    (int64_t)cfq_prio_slice(cd, cq->cq_sync, cq->cq_level);
	ASSERT(cd->cd_busy_queues > 0); /* cq itself is busy */
	return (int64_t)(cd->cd_busy_queues - 1) * d;
}

/*
 * (Re)insert cq on the service list: RT first, IDLE last, then by key; a
 * queue goes after others of equal rank and key (arrival order).
 */
static void cfq_service_tree_add(struct cfq_data *cd, struct cfqq *cq, bool add_front)
{
	int64_t now = (int64_t)rt_now_ns(), key;
	ASSERT(cq->cq_on_rr && cq->cq_used);
	if (cfq_class_idle(cq)) {
		struct rt_link *last = cd->cd_rr.prev;
		if (last == &cq->cq_rr)
			last = last->prev;
		key = (int64_t)cd->cd_t.idle_delay_ns +
		      (last != &cd->cd_rr ? cfq_rr_entry(last)->cq_rb_key : now);
	} else if (!add_front) {
		/* 2.6.33: time left in the slice moves the queue forward. */
		key = now + cfq_slice_offset(cd, cq) - cq->cq_slice_resid;
		cq->cq_slice_resid = 0;
	} else {
		struct rt_link *first = cd->cd_rr.next;
		if (first == &cq->cq_rr)
			first = first->next;
		key = (first != &cd->cd_rr ? cfq_rr_entry(first)->cq_rb_key : now) -
		      (int64_t)cd->cd_t.front_backoff_ns;
	}
	if (!rt_list_empty(&cq->cq_rr)) {
		if (key == cq->cq_rb_key)
			return;
		rt_list_del(&cq->cq_rr);
	}
	cq->cq_rb_key = key;
	unsigned rank = cfq_class_rank(cq);
	struct rt_link *l;
	for (l = cd->cd_rr.next; l != &cd->cd_rr; l = l->next) {
		struct cfqq *o = cfq_rr_entry(l);
		unsigned orank = cfq_class_rank(o);
		if (orank > rank || (orank == rank && o->cq_rb_key > key))
			break;
	}
	rt_list_insert_before(l, &cq->cq_rr);
	/* the list stays ordered: rank, then key */
	ASSERT(cq->cq_rr.prev == &cd->cd_rr ||
	       cfq_class_rank(cfq_rr_entry(cq->cq_rr.prev)) < rank ||
	       cfq_rr_entry(cq->cq_rr.prev)->cq_rb_key <= key);
	ASSERT(cq->cq_rr.next == &cd->cd_rr ||
	       cfq_class_rank(cfq_rr_entry(cq->cq_rr.next)) > rank ||
	       cfq_rr_entry(cq->cq_rr.next)->cq_rb_key > key);
}

static void cfq_add_cfqq_rr(struct cfq_data *cd, struct cfqq *cq)
{
	ASSERT(!cq->cq_on_rr && rt_list_empty(&cq->cq_rr));
	ASSERT(cq->cq_queued > 0); /* only busy queues wait for service */
	cq->cq_on_rr = true;
	cd->cd_busy_queues++;
	if (cfq_class_rt(cq))
		cd->cd_busy_rt_queues++;
	cfq_service_tree_add(cd, cq, false);
	ASSERT(!rt_list_empty(&cq->cq_rr) && cd->cd_busy_rt_queues <= cd->cd_busy_queues);
}

static void cfq_del_cfqq_rr(struct cfq_data *cd, struct cfqq *cq)
{
	ASSERT(cq->cq_on_rr && cd->cd_busy_queues > 0);
	ASSERT(!cfq_class_rt(cq) || cd->cd_busy_rt_queues > 0);
	cq->cq_on_rr = false;
	if (!rt_list_empty(&cq->cq_rr))
		rt_list_del(&cq->cq_rr);
	cd->cd_busy_queues--;
	if (cfq_class_rt(cq))
		cd->cd_busy_rt_queues--;
	ASSERT(rt_list_empty(&cq->cq_rr) && cd->cd_busy_rt_queues <= cd->cd_busy_queues);
}

/* ---- finding a request's queue ------------------------------------- */

static struct cfqq *cfq_async_queue(struct cfq_data *cd, uint16_t ioprio)
{
	unsigned c = blk_ioprio_class(ioprio), l = blk_ioprio_level(ioprio);
	struct cfqq *cq = c == RT_IOPRIO_CLASS_RT     ? &cd->cd_async_rt[l]
			  : c == RT_IOPRIO_CLASS_IDLE ? &cd->cd_async_idle
						      : &cd->cd_async_be[l];
	/* async queues keep the class and level they were set up with */
	ASSERT(cq->cq_used && !cq->cq_sync && cq->cq_class == c && cq->cq_level == l);
	return cq;
}

static bool cfq_queue_recyclable(const struct cfq_data *cd, const struct cfqq *cq)
{
	return !cq->cq_on_rr && cq != cd->cd_active && cq->cq_queued == 0 &&
	       cq->cq_dispatched == 0;
}

/* A new sync queue: a free slot, else the least recently used idle one. */
static struct cfqq *cfq_new_sync_queue(struct cfq_data *cd, int pid, uint16_t ioprio)
{
	struct cfqq *victim = NULL;
	for (unsigned i = 0; i < CFQ_MAX_SYNC_QUEUES; i++) {
		struct cfqq *cq = &cd->cd_sync[i];
		if (!cq->cq_used) {
			victim = cq;
			break;
		}
		if (cfq_queue_recyclable(cd, cq) &&
		    (!victim || cq->cq_last_used < victim->cq_last_used))
			victim = cq;
	}
	if (!victim)
		return NULL;
	ASSERT(!victim->cq_used || cfq_queue_recyclable(cd, victim));
	cfq_init_queue_struct(victim, pid, 1, ioprio);
	victim->cq_idle_window = !cfq_class_idle(victim) && cd->cd_t.slice_idle_ns > 0;
	victim->cq_last_end_request = rt_now_ns();
	ASSERT(victim->cq_used && victim->cq_queued == 0 && !victim->cq_on_rr);
	return victim;
}

/* The thread's priority changed since its queue was set up. */
static void cfq_requeue_prio(struct cfq_data *cd, struct cfqq *cq, uint16_t ioprio)
{
	int on_rr = cq->cq_on_rr;
	ASSERT(cq->cq_sync && cq->cq_ioprio != ioprio);
	if (on_rr)
		cfq_del_cfqq_rr(cd, cq);
	cq->cq_ioprio = ioprio;
	cq->cq_class = blk_ioprio_class(ioprio);
	cq->cq_level = blk_ioprio_level(ioprio);
	if (cfq_class_idle(cq))
		cq->cq_idle_window = false;
	if (on_rr)
		cfq_add_cfqq_rr(cd, cq);
	ASSERT(cq->cq_on_rr == on_rr && cq->cq_class == blk_ioprio_class(ioprio));
}

static struct cfqq *cfq_find_queue(struct cfq_data *cd, int pid, bool sync, uint16_t ioprio)
{
	struct cfqq *cq = NULL;
	if (!sync)
		return cfq_async_queue(cd, ioprio);
	for (unsigned i = 0; i < CFQ_MAX_SYNC_QUEUES && !cq; i++)
		if (cd->cd_sync[i].cq_used && cd->cd_sync[i].cq_pid == pid)
			cq = &cd->cd_sync[i];
	if (!cq)
		cq = cfq_new_sync_queue(cd, pid, ioprio);
	if (!cq) /* table full of busy queues: share the async one */
		return cfq_async_queue(cd, ioprio);
	if (cq->cq_ioprio != ioprio)
		cfq_requeue_prio(cd, cq, ioprio);
	cq->cq_last_used = ++cd->cd_use_seq;
	ASSERT(cq->cq_sync && cq->cq_pid == pid && cq->cq_ioprio == ioprio);
	return cq;
}

static bool cfq_bio_sync(const struct blk_bio *b)
{
	return b->b_op == BLK_OP_READ || (b->b_flags & BLK_SYNC);
}

/* A bio may join a request only if it would go to the same queue. */
static int cfq_allow_merge(struct blk_queue *q, struct blk_request *rq,
			   const struct blk_bio *b, int front)
{
	struct cfq_data *cd = cfqd_of(q);
	const struct cfqq *cq = rq->rq_elv;
	bool sync = cfq_bio_sync(b);
	ASSERT(cq && cq->cq_used && rq->rq_state == BLK_RQ_QUEUED);
	if (sync != blk_rq_is_sync(rq))
		return 0;
	if (!cq->cq_sync)
		return cq == cfq_async_queue(cd, b->b_prio);
	return cq->cq_pid == b->b_pid && cq->cq_ioprio == b->b_prio;
}

/* ---- choosing among a queue's requests ------------------------------ */

/*
 * Which of two requests to serve next from the head position: sync beats
 * async, META beats non-META, then the nearer one, where a request behind
 * the head (within back_seek_max) costs back_seek_penalty times its
 * distance and one further behind "wraps".
 */
static struct blk_request *cfq_choose_req(const struct cfq_data *cd,
					  struct blk_request *r1, struct blk_request *r2)
{
	if (!r1 || r1 == r2)
		return r2;
	if (!r2)
		return r1;
	ASSERT(r1->rq_elv == r2->rq_elv); /* two requests of one queue */
	if (blk_rq_is_sync(r1) != blk_rq_is_sync(r2))
		return blk_rq_is_sync(r1) ? r1 : r2;
	if (blk_rq_is_meta(r1) != blk_rq_is_meta(r2))
		return blk_rq_is_meta(r1) ? r1 : r2;
	uint64_t last = cd->cd_last_position;
	uint64_t back_max = (uint64_t)cd->cd_t.back_seek_max_kib * 2;
	uint64_t s1 = r1->rq_sector, s2 = r2->rq_sector, d1 = 0, d2 = 0;
	int wrap1 = 0, wrap2 = 0;
	if (s1 >= last)
		d1 = s1 - last;
	else if (s1 + back_max >= last)
		d1 = (last - s1) * cd->cd_t.back_seek_penalty;
	else
		wrap1 = 1;
	if (s2 >= last)
		d2 = s2 - last;
	else if (s2 + back_max >= last)
		d2 = (last - s2) * cd->cd_t.back_seek_penalty;
	else
		wrap2 = 1;
	if (!wrap1 && !wrap2) {
		if (d1 != d2)
			return d1 < d2 ? r1 : r2;
		return s1 >= s2 ? r1 : r2;
	}
	if (!wrap1)
		return r1;
	if (!wrap2)
		return r2;
	return s1 <= s2 ? r1 : r2; /* both wrap: one long seek back */
}

static struct blk_request *cfq_sort_entry(struct cfqq *cq, struct rt_link *l)
{
	struct blk_request *rq =
		l == &cq->cq_sort ? NULL : RT_LIST_ENTRY(l, struct blk_request, rq_slink);
	ASSERT(!rq || rq->rq_elv == cq);
	return rq;
}

/* After `last` leaves: the better of its neighbours, wrapping to the first. */
static struct blk_request *cfq_find_next_rq(const struct cfq_data *cd, struct cfqq *cq,
					    struct blk_request *last)
{
	ASSERT(last->rq_elv == cq && !rt_list_empty(&last->rq_slink)); /* still sorted */
	struct blk_request *prev = cfq_sort_entry(cq, last->rq_slink.prev);
	struct blk_request *next = cfq_sort_entry(cq, last->rq_slink.next);
	if (!next) {
		next = cfq_sort_entry(cq, cq->cq_sort.next);
		if (next == last)
			next = NULL;
	}
	return cfq_choose_req(cd, next, prev);
}

static void cfq_sort_insert(struct cfqq *cq, struct blk_request *rq)
{
	struct rt_link *l;
	ASSERT(rq->rq_elv == cq && rt_list_empty(&rq->rq_slink));
	for (l = cq->cq_sort.next; l != &cq->cq_sort; l = l->next)
		if (RT_LIST_ENTRY(l, struct blk_request, rq_slink)->rq_sector > rq->rq_sector)
			break;
	rt_list_insert_before(l, &rq->rq_slink);
	ASSERT(rq->rq_slink.prev == &cq->cq_sort ||
	       RT_LIST_ENTRY(rq->rq_slink.prev, struct blk_request, rq_slink)->rq_sector <=
		       rq->rq_sector);
}

/* ---- slices ---------------------------------------------------------- */

static void cfq_set_active_queue(struct cfq_data *cd, struct cfqq *cq)
{
	ASSERT(!cd->cd_active); /* the last slice ended */
	ASSERT(!cd->cd_idle_timer_at); /* and its idle window with it */
	ASSERT(!cq || (cq->cq_on_rr && cq->cq_queued > 0));
	if (cq) {
		cq->cq_slice_end_ns = 0;
		cq->cq_slice_dispatch = 0;
		cq->cq_fifo_checked = false;
		cq->cq_wait_request = false;
		cq->cq_must_dispatch = false;
		cq->cq_slice_new = true;
	}
	cd->cd_active = cq;
}

/* The armed idle window ends: its time counted, and whether the thread it
 * waited for never came (expired). */
static void cfq_idle_end(struct cfq_data *cd, bool expired)
{
	if (!cd->cd_idle_timer_at)
		return;
	/* armed only while the active queue waits for its thread */
	ASSERT(cd->cd_active && cd->cd_active->cq_wait_request &&
	       cd->cd_idle_start_ns <= rt_now_ns());
	cd->cd_stats->idle_ns += rt_now_ns() - cd->cd_idle_start_ns;
	cd->cd_stats->idles_expired += expired;
	cd->cd_idle_timer_at = 0;
}

/* End the active queue's slice; timed_out banks what is left of it. */
static void cfq_slice_expired(struct cfq_data *cd, bool timed_out)
{
	struct cfqq *cq = cd->cd_active;
	if (!cq)
		return;
	uint64_t now = rt_now_ns();
	if (cq->cq_wait_request)
		cfq_idle_end(cd, false);
	ASSERT(!cd->cd_idle_timer_at);
	cq->cq_wait_request = false;
	cq->cq_must_dispatch = false;
	if (timed_out && !cq->cq_slice_new)
		cq->cq_slice_resid = (int64_t)cq->cq_slice_end_ns - (int64_t)now;
	if (cq->cq_on_rr)
		cfq_service_tree_add(cd, cq, false);
	ASSERT(cq->cq_on_rr == !rt_list_empty(&cq->cq_rr));
	cd->cd_active = NULL;
}

static struct cfqq *cfq_get_next_queue(struct cfq_data *cd)
{
	if (rt_list_empty(&cd->cd_rr))
		return NULL;
	struct cfqq *cq = cfq_rr_entry(cd->cd_rr.next);
	ASSERT(cq->cq_queued > 0);
	return cq;
}

static bool cfq_should_idle(const struct cfq_data *cd, const struct cfqq *cq)
{
	if (cd->cd_nonrot && cd->cd_hw_tag)
		return false;
	return cq->cq_sync && cq->cq_idle_window && cd->cd_t.slice_idle_ns > 0;
}

/*
 * Pick the queue to serve: keep the active one while its slice lasts and it
 * has requests (or while it idles for its thread's next one); RT queues
 * waiting end a non-RT slice; otherwise the first queue on the service list.
 */
static struct cfqq *cfq_select_queue(struct cfq_data *cd)
{
	struct cfqq *cq = cd->cd_active;
	uint64_t now = rt_now_ns();
	if (!cq)
		goto new_queue;
	if (cfq_slice_used(cq, now) && !cq->cq_must_dispatch)
		goto expire;
	if (!cfq_class_rt(cq) && cd->cd_busy_rt_queues) {
		cfq_slice_expired(cd, true);
		goto new_queue;
	}
	if (cq->cq_queued)
		return cq;
	if (cd->cd_idle_timer_at || (cq->cq_dispatched && cfq_should_idle(cd, cq))) {
		ASSERT(!cd->cd_idle_timer_at || cq->cq_wait_request);
		return NULL;
	}
expire:
	cfq_slice_expired(cd, false);
new_queue:
	cfq_set_active_queue(cd, cfq_get_next_queue(cd));
	return cd->cd_active;
}

/* 2.6.33 cfq_may_dispatch, without cgroups and low_latency. */
static bool cfq_may_dispatch(const struct cfq_data *cd, const struct cfqq *cq)
{
	ASSERT(cd->cd_sync_flight == cd->cd_rq_in_driver[1]); /* counted together */
	if (cfq_should_idle(cd, cq) && cd->cd_rq_in_driver[0])
		return false; /* async drains before a sync queue that idles */
	if (cd->cd_sync_flight && !cq->cq_sync)
		return false; /* async waits for sync to drain */
	unsigned max = cfq_class_idle(cq) ? 1 : cd->cd_t.quantum;
	if (cq->cq_dispatched >= max) {
		if (cd->cd_busy_queues > 1 || cfq_class_idle(cq))
			return false;
		if (cq->cq_dispatched >= 4 * max)
			return false;
	}
	return true;
}

/* Once per slice: the FIFO head if its deadline passed. */
static struct blk_request *cfq_check_fifo(struct cfqq *cq)
{
	if (cq->cq_fifo_checked)
		return NULL;
	cq->cq_fifo_checked = true;
	if (rt_list_empty(&cq->cq_fifo))
		return NULL;
	struct blk_request *rq =
		RT_LIST_ENTRY(cq->cq_fifo.next, struct blk_request, rq_flink);
	ASSERT(rq->rq_elv == cq && rq->rq_state == BLK_RQ_QUEUED);
	return rt_now_ns() >= rq->rq_fifo_expire_ns ? rq : NULL;
}

static void cfq_remove_request(struct cfq_data *cd, struct blk_request *rq)
{
	struct cfqq *cq = rq->rq_elv;
	ASSERT(cq && !rt_list_empty(&rq->rq_slink) && !rt_list_empty(&rq->rq_flink));
	if (cq->cq_next_rq == rq)
		cq->cq_next_rq = cfq_find_next_rq(cd, cq, rq);
	rt_list_del(&rq->rq_slink);
	rt_list_del(&rq->rq_flink);
	ASSERT(cq->cq_queued > 0);
	cq->cq_queued--;
	if (blk_rq_is_meta(rq)) {
		ASSERT(cq->cq_meta_pending > 0);
		cq->cq_meta_pending--;
	}
	if (cq->cq_on_rr && cq->cq_queued == 0)
		cfq_del_cfqq_rr(cd, cq);
	ASSERT((cq->cq_queued == 0) == rt_list_empty(&cq->cq_sort));
	ASSERT(cq->cq_next_rq != rq && (cq->cq_queued == 0) == !cq->cq_next_rq);
}

static struct blk_request *cfq_dispatch(struct blk_queue *q)
{
	struct cfq_data *cd = cfqd_of(q);
	ASSERT(rt_mutex_held(&q->q_lock));
	struct cfqq *cq = cfq_select_queue(cd);
	ASSERT(!cq || cq == cd->cd_active);
	if (!cq || !cfq_may_dispatch(cd, cq))
		return NULL;
	ASSERT(cq->cq_queued > 0);
	struct blk_request *rq = cfq_check_fifo(cq);
	if (!rq)
		rq = cq->cq_next_rq;
	ASSERT(rq && rq->rq_elv == cq);
	cq->cq_wait_request = false;
	cq->cq_must_dispatch = false;
	cfq_remove_request(cd, rq);
	cq->cq_dispatched++;
	cq->cq_slice_dispatch++;
	bool sync = blk_rq_is_sync(rq);
	cd->cd_rq_in_driver[sync]++;
	if (sync)
		cd->cd_sync_flight++;
	cd->cd_last_position = blk_rq_end(rq);
	/* off the elevator's lists; in the driver at most those the queue
	 * has in flight, and this one */
	ASSERT(rt_list_empty(&rq->rq_slink) && rt_list_empty(&rq->rq_flink));
	ASSERT(cd->cd_rq_in_driver[0] + cd->cd_rq_in_driver[1] <= q->q_in_flight + 1);

	/* An async queue that used its request cap, or an IDLE queue, gives
	 * way at once when others wait. */
	if (cd->cd_active == cq && cd->cd_busy_queues > 1 &&
	    ((!cq->cq_sync && cq->cq_slice_dispatch >= cfq_prio_to_maxrq(cd, cq)) ||
	     cfq_class_idle(cq))) {
		cq->cq_slice_end_ns = rt_now_ns() + 1;
		cfq_slice_expired(cd, false);
	}
	return rq;
}

/* ---- arrival: detectors, idle window, preemption -------------------- */

static void cfq_update_thinktime(const struct cfq_data *cd, struct cfqq *cq, uint64_t now)
{
	ASSERT(cq->cq_sync && now >= cq->cq_last_end_request);
	uint64_t elapsed = now - cq->cq_last_end_request;
	uint64_t cap = 2 * cd->cd_t.slice_idle_ns;
	uint64_t ttime = elapsed < cap ? elapsed : cap;
	cq->cq_ttime_samples = (7 * cq->cq_ttime_samples + 256) / 8;
	cq->cq_ttime_total = (7 * cq->cq_ttime_total + 256 * ttime) / 8;
	cq->cq_ttime_mean = (cq->cq_ttime_total + 128) / cq->cq_ttime_samples;
}

static void cfq_update_seektime(struct cfqq *cq, const struct blk_request *rq)
{
	uint64_t sdist = 0, pos = rq->rq_sector, last = cq->cq_last_request_pos;
	ASSERT(cq->cq_sync && rq->rq_elv == cq);
	if (last)
		sdist = last < pos ? pos - last : last - pos;
	/* Damp outliers: 1 GiB during the first samples, 64 MiB later. */
	uint64_t lim = cq->cq_seek_samples <= 60 ? 4 * cq->cq_seek_mean + 2 * 1024 * 1024
						  : 4 * cq->cq_seek_mean + 2 * 1024 * 64;
	if (sdist > lim)
		sdist = lim;
	cq->cq_seek_samples = (7 * cq->cq_seek_samples + 256) / 8;
	cq->cq_seek_total = (7 * cq->cq_seek_total + 256 * sdist) / 8;
	cq->cq_seek_mean = (cq->cq_seek_total + cq->cq_seek_samples / 2) / cq->cq_seek_samples;
}

static bool cfq_seeky(const struct cfq_data *cd, const struct cfqq *cq)
{
	return CFQ_SAMPLE_VALID(cd, cq->cq_seek_samples) &&
	       cq->cq_seek_mean > cd->cd_t.seeky_sectors;
}

static void cfq_update_idle_window(const struct cfq_data *cd, struct cfqq *cq)
{
	/* an IDLE-class queue never idles, nor any queue without slice_idle */
	ASSERT(!cq->cq_idle_window || (!cfq_class_idle(cq) && cd->cd_t.slice_idle_ns > 0));
	if (!cq->cq_sync || cfq_class_idle(cq))
		return;
	bool enable = cq->cq_idle_window;
	if (!cd->cd_t.slice_idle_ns || (cd->cd_hw_tag && cfq_seeky(cd, cq)))
		enable = false;
	else if (CFQ_SAMPLE_VALID(cd, cq->cq_ttime_samples))
		enable = cq->cq_ttime_mean <= cd->cd_t.slice_idle_ns;
	cq->cq_idle_window = enable;
}

/* 2.6.29 cfq_should_preempt: its rules, in its order. */
static bool cfq_should_preempt(const struct cfq_data *cd, const struct cfqq *newq,
			      const struct blk_request *rq)
{
	const struct cfqq *cq = cd->cd_active;
	if (!cq)
		return false;
	ASSERT(newq != cq && newq->cq_on_rr);
	if (cfq_slice_used(cq, rt_now_ns()))
		return true;
	if (cfq_class_idle(newq))
		return false;
	if (cfq_class_idle(cq))
		return true;
	if (blk_rq_is_sync(rq) && !cq->cq_sync)
		return true;
	if (blk_rq_is_meta(rq) && !cq->cq_meta_pending)
		return true;
	if (cfq_class_rt(newq) && !cfq_class_rt(cq))
		return true;
	if (!cq->cq_wait_request)
		return false;
	/* Close to where the active thread's I/O is going: serve it now. */
	if (cq->cq_sync && CFQ_SAMPLE_VALID(cd, cq->cq_seek_samples)) {
		uint64_t pos = rq->rq_sector, head = cd->cd_last_position;
		uint64_t dist = pos >= head ? pos - head : head - pos;
		if (dist <= cq->cq_seek_mean)
			return true;
	}
	return false;
}

/* Expire the active queue and put newq first, with a fresh slice. */
static void cfq_preempt_queue(struct cfq_data *cd, struct cfqq *newq)
{
	ASSERT(newq != cd->cd_active);
	cfq_slice_expired(cd, true);
	ASSERT(newq->cq_on_rr && !cd->cd_active);
	cfq_service_tree_add(cd, newq, true);
	newq->cq_slice_end_ns = 0;
	newq->cq_slice_new = true;
	newq->cq_must_dispatch = true;
}

static void cfq_add(struct blk_queue *q, struct blk_request *rq)
{
	struct cfq_data *cd = cfqd_of(q);
	bool sync = blk_rq_is_sync(rq);
	struct cfqq *cq = cfq_find_queue(cd, rq->rq_pid, sync, rq->rq_ioprio);
	uint64_t now = rt_now_ns();
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(cq && cq->cq_used && rq->rq_state == BLK_RQ_QUEUED);
	/* a new request: in no cfq queue, on none of its lists */
	ASSERT(!rq->rq_elv && rt_list_empty(&rq->rq_slink) && rt_list_empty(&rq->rq_flink));
	rq->rq_elv = cq;
	rq->rq_fifo_expire_ns = now + (sync ? cd->cd_t.fifo_expire_sync_ns
				       : cd->cd_t.fifo_expire_async_ns);
	cfq_sort_insert(cq, rq);
	rt_list_add_tail(&cq->cq_fifo, &rq->rq_flink);
	cq->cq_queued++;
	if (!cq->cq_on_rr)
		cfq_add_cfqq_rr(cd, cq);
	cq->cq_next_rq = cfq_choose_req(cd, cq->cq_next_rq, rq);
	ASSERT(cq->cq_on_rr && cq->cq_next_rq);

	if (blk_rq_is_meta(rq))
		cq->cq_meta_pending++;
	if (cq->cq_sync) {
		cfq_update_thinktime(cd, cq, now);
		cfq_update_seektime(cq, rq);
		cfq_update_idle_window(cd, cq);
		cq->cq_last_request_pos = blk_rq_end(rq);
	}
	if (cq == cd->cd_active) {
		/* The request the active queue idled for: let it rip. */
		if (cq->cq_wait_request) {
			cq->cq_must_dispatch = true;
			cfq_idle_end(cd, false);
		}
	} else if (cfq_should_preempt(cd, cq, rq)) {
		cfq_preempt_queue(cd, cq);
	}
}

/* A front merge moved rq's start: keep the sort order and next_rq sound. */
static void cfq_merged(struct blk_queue *q, struct blk_request *rq, int front)
{
	struct cfq_data *cd = cfqd_of(q);
	struct cfqq *cq = rq->rq_elv;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(cq && cq->cq_queued > 0 && rq->rq_state == BLK_RQ_QUEUED);
	if (!front)
		return;
	rt_list_del(&rq->rq_slink);
	cfq_sort_insert(cq, rq);
	cq->cq_next_rq = cfq_choose_req(cd, cq->cq_next_rq, rq);
	ASSERT(cq->cq_next_rq && cq->cq_on_rr);
}

/* ---- completion and the idle timer ---------------------------------- */

static void cfq_arm_slice_timer(struct blk_queue *q, struct cfq_data *cd, struct cfqq *cq)
{
	uint64_t now = rt_now_ns();
	ASSERT(cq == cd->cd_active && cq->cq_queued == 0);
	if (!cfq_should_idle(cd, cq) || cq->cq_dispatched)
		return;
	uint64_t sl = cd->cd_t.slice_idle_ns;
	/* 2.6.33: no point waiting longer than the slice has left. */
	if (CFQ_SAMPLE_VALID(cd, cq->cq_ttime_samples) && cq->cq_slice_end_ns > now &&
	    cq->cq_slice_end_ns - now < cq->cq_ttime_mean)
		return;
	/* 2.6.29: a seeky thread gets only a short wait. */
	if (cfq_seeky(cd, cq) && sl > cd->cd_t.min_tt_ns)
		sl = cd->cd_t.min_tt_ns;
	if (!sl) /* min_tt_ms=0: a seeky thread is not waited for at all */
		return;
	cq->cq_wait_request = true;
	cd->cd_idle_timer_at = now + sl;
	cd->cd_idle_start_ns = now;
	cd->cd_stats->idles++;
	ASSERT(cd->cd_idle_timer_at > now);
	__blk_timers_changed(q);
}

static void cfq_completed(struct blk_queue *q, struct blk_request *rq)
{
	struct cfq_data *cd = cfqd_of(q);
	struct cfqq *cq = rq->rq_elv;
	bool sync = blk_rq_is_sync(rq);
	uint64_t now = rt_now_ns();
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(cq && cq->cq_dispatched > 0 && cd->cd_rq_in_driver[sync] > 0);
	/* dispatched: in flight, off the elevator's lists */
	ASSERT(rq->rq_state == BLK_RQ_INFLIGHT && rt_list_empty(&rq->rq_slink) &&
	       rt_list_empty(&rq->rq_flink));
	cd->cd_rq_in_driver[sync]--;
	cq->cq_dispatched--;
	if (sync) {
		ASSERT(cd->cd_sync_flight > 0);
		cd->cd_sync_flight--;
		cq->cq_last_end_request = now;
	}
	ASSERT(cd->cd_sync_flight == cd->cd_rq_in_driver[1]);
	if (cq != cd->cd_active)
		return;
	if (cq->cq_slice_new) {
		/* The slice starts with its first completion. */
		cq->cq_slice_end_ns = now + cfq_prio_slice(cd, cq->cq_sync, cq->cq_level);
		cq->cq_slice_new = false;
	}
	if (cfq_slice_used(cq, now) || cfq_class_idle(cq))
		cfq_slice_expired(cd, true);
	else if (sync && cq->cq_queued == 0 && !(rq->rq_flags & BLK_NOIDLE))
		cfq_arm_slice_timer(q, cd, cq);
}

static uint64_t cfq_timer_at(struct blk_queue *q)
{
	ASSERT(rt_mutex_held(&q->q_lock));
	return cfqd_of(q)->cd_idle_timer_at;
}

/* The active queue idled slice_idle and its thread sent nothing. */
static void cfq_idle_timer(struct blk_queue *q)
{
	struct cfq_data *cd = cfqd_of(q);
	struct cfqq *cq = cd->cd_active;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(!cd->cd_idle_timer_at || (cq && cq->cq_wait_request));
	cfq_idle_end(cd, true);
	if (!cq)
		return;
	if (!cfq_slice_used(cq, rt_now_ns())) {
		if (!cd->cd_busy_queues)
			return; /* nobody else wants the disk: keep it */
		if (cq->cq_queued) {
			cq->cq_must_dispatch = true;
			return;
		}
	}
	cfq_slice_expired(cd, true);
}

/* ---- blk_boost ---------------------------------------------------------- */

/* rq is queued in cq: link it into cq's structures (as cfq_add, without
 * the arrival detectors and with its FIFO deadline kept). */
static void cfq_link_request(struct cfq_data *cd, struct cfqq *cq, struct blk_request *rq)
{
	/* only async queues take a request over, one off every list */
	ASSERT(!cq->cq_sync && rq->rq_state == BLK_RQ_QUEUED && rt_list_empty(&rq->rq_flink));
	rq->rq_elv = cq;
	cfq_sort_insert(cq, rq);
	struct rt_link *l;
	for (l = cq->cq_fifo.next; l != &cq->cq_fifo; l = l->next)
		if (RT_LIST_ENTRY(l, struct blk_request, rq_flink)->rq_fifo_expire_ns >
		    rq->rq_fifo_expire_ns)
			break;
	rt_list_insert_before(l, &rq->rq_flink);
	ASSERT(rq->rq_flink.prev == &cq->cq_fifo ||
	       RT_LIST_ENTRY(rq->rq_flink.prev, struct blk_request, rq_flink)->rq_fifo_expire_ns <=
		       rq->rq_fifo_expire_ns);
	cq->cq_queued++;
	if (blk_rq_is_meta(rq))
		cq->cq_meta_pending++;
	if (!cq->cq_on_rr)
		cfq_add_cfqq_rr(cd, cq);
	cq->cq_next_rq = cfq_choose_req(cd, cq->cq_next_rq, rq);
}

static void cfq_boost(struct blk_queue *q, struct blk_request *rq, uint16_t old)
{
	struct cfq_data *cd = cfqd_of(q);
	struct cfqq *cq = rq->rq_elv, *newq = cq;
	(void)old;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(cq && cq->cq_queued > 0);
	if (cq->cq_sync) {
		if (cq->cq_ioprio != rq->rq_ioprio)
			cfq_requeue_prio(cd, cq, rq->rq_ioprio);
	} else {
		newq = cfq_async_queue(cd, rq->rq_ioprio);
		if (newq == cq)
			return;
		cfq_remove_request(cd, rq);
		cfq_link_request(cd, newq, rq);
	}
	ASSERT(rq->rq_elv == newq && newq->cq_on_rr && newq->cq_queued > 0);
	if (newq != cd->cd_active && newq->cq_on_rr && cfq_should_preempt(cd, newq, rq))
		cfq_preempt_queue(cd, newq);
}

static const struct blk_elv_ops blk_elv_cfq = {
	.name = "cfq",
	.init = cfq_init,
	.exit = cfq_exit,
	.allow_merge = cfq_allow_merge,
	.add = cfq_add,
	.merged = cfq_merged,
	.dispatch = cfq_dispatch,
	.completed = cfq_completed,
	.boost = cfq_boost,
	.timer_at = cfq_timer_at,
	.timer = cfq_idle_timer,
};

/* ---- tunables ----------------------------------------------------------- */

/* Sources: the 2.6.29 cfq-iosched.c defaults (HZ = 250) and its sysfs
 * iosched/ tunables; the fixed constants of that file are rows too. */
#define CFQ_P(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct cfq_tunables, field, type, unit, scale, def, min, max, src, help)
#define CFQ_PA(name, field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM_AS(name, struct cfq_tunables, field, type, unit, scale, def, min, max, \
		    src, help)
#define CFQ_SRC "2.6.29 cfq-iosched.c"
static const struct rt_param cfq_rows[] = {
	CFQ_P(quantum, RT_PARAM_UINT, "rq", 0, 4, 1, 1024, CFQ_SRC " cfq_quantum",
	      "in-flight cap of one queue when others are busy"),
	CFQ_PA("fifo_expire_sync_ms", fifo_expire_sync_ns, RT_PARAM_U64, "ms", 1e6, 125, 1, 60000,
	       CFQ_SRC " cfq_fifo_expire[1]", "deadline of a sync request"),
	CFQ_PA("fifo_expire_async_ms", fifo_expire_async_ns, RT_PARAM_U64, "ms", 1e6, 250, 1,
	       60000, CFQ_SRC " cfq_fifo_expire[0]", "deadline of an async request"),
	CFQ_P(back_seek_max_kib, RT_PARAM_U32, "KiB", 0, 16384, 0, 1 << 30,
	      CFQ_SRC " cfq_back_max", "longest backward seek taken as forward"),
	CFQ_P(back_seek_penalty, RT_PARAM_UINT, "", 0, 2, 1, 1024, CFQ_SRC " cfq_back_penalty",
	      "cost factor of a backward seek"),
	CFQ_PA("slice_sync_ms", slice_sync_ns, RT_PARAM_U64, "ms", 1e6, 100, 1, 60000,
	       CFQ_SRC " cfq_slice_sync", "time slice of a sync queue"),
	CFQ_PA("slice_async_ms", slice_async_ns, RT_PARAM_U64, "ms", 1e6, 40, 1, 60000,
	       CFQ_SRC " cfq_slice_async", "time slice of an async queue"),
	CFQ_P(slice_async_rq, RT_PARAM_UINT, "rq", 0, 2, 1, 1024, CFQ_SRC " cfq_slice_async_rq",
	      "async requests per slice (scaled by priority)"),
	CFQ_PA("slice_idle_ms", slice_idle_ns, RT_PARAM_U64, "ms", 1e6, 8, 0, 1000,
	       CFQ_SRC " cfq_slice_idle (HZ/125)", "idle wait after a sync request, 0 = none"),
	CFQ_P(hw_tag, RT_PARAM_INT, "", 0, -1, -1, 1, CFQ_SRC " hw_tag detection",
	      "device queues commands: -1 = from its depth, 0 no, 1 yes"),
	CFQ_P(slice_scale, RT_PARAM_UINT, "", 0, 5, 1, 1000, CFQ_SRC " CFQ_SLICE_SCALE",
	      "slice = base + base/scale * (4 - level)"),
	CFQ_PA("idle_delay_ms", idle_delay_ns, RT_PARAM_U64, "ms", 1e6, 200, 0, 60000,
	       CFQ_SRC " CFQ_IDLE_DELAY", "service-tree offset of an idle-class queue"),
	CFQ_PA("min_tt_ms", min_tt_ns, RT_PARAM_U64, "ms", 1e6, 2, 0, 1000,
	       CFQ_SRC " CFQ_MIN_TT", "idle wait for a seeky thread"),
	CFQ_P(hw_queue_min, RT_PARAM_UINT, "rq", 0, 5, 1, 4096, CFQ_SRC " CFQ_HW_QUEUE_MIN",
	      "device depth from which hw_tag is assumed"),
	CFQ_P(seeky_sectors, RT_PARAM_U64, "sectors", 0, 8192, 0, 1ull << 40,
	      CFQ_SRC " CFQQ_SEEKY (mean seek > 4 MiB)", "a mean seek above this is seeky"),
	CFQ_P(sample_valid, RT_PARAM_UINT, "", 0, 80, 0, 256, CFQ_SRC " sample_valid()",
	      "decayed samples before a mean counts"),
	CFQ_PA("front_backoff_ms", front_backoff_ns, RT_PARAM_U64, "ms", 1e6, 1000, 0, 60000,
	       CFQ_SRC " front insertion (HZ)", "key offset of a queue added at the front"),
};
static const struct rt_param_table cfq_table =
	RT_PARAM_TABLE("cfq", "CFQ tunables (2.6.29 defaults)", cfq_rows, struct cfq_tunables);

const struct blk_elevator_type blk_elevator_cfq = {
	.e_name = "cfq",
	.e_help = "complete fair queueing: per-thread queues, classes, time slices, idling",
	.e_ops = &blk_elv_cfq,
	.e_tunables = &cfq_table,
};

/*
 * Block layer internals shared by core.c, plug.c, trace.c and the three
 * elevators. Not installed.
 *
 * Everything in struct blk_queue, its requests and its elevator data is
 * protected by q_lock ([q_lock] below), taken by every entry point; the
 * elevator hooks are always called with it held. Functions named __blk_*
 * expect it held.
 *
 * Request life: FREE -> QUEUED (in the elevator, on q_queued: merge
 * candidates) -> INFLIGHT (at the device) -> FREE. Flush-only requests skip
 * the elevator: they wait on q_dispatch and are issued before elevator
 * requests.
 */
#ifndef UJBD_BLK_INT_H
#define UJBD_BLK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "priv/blk.h"
#include "priv/param.h"
#include "priv/dev_req.h"
#include "priv/rt.h"

#include "rt/assert.h"

/* ---- requests ----------------------------------------------------------- */

enum blk_rq_state { BLK_RQ_FREE = 0, BLK_RQ_QUEUED, BLK_RQ_INFLIGHT };

struct blk_request {
	struct blk_queue *rq_q;
	enum blk_rq_state rq_state;
	uint64_t rq_seq;          /* allocation order: breaks every tie */
	enum blk_op rq_op;
	uint32_t rq_flags;
	uint64_t rq_sector;
	uint32_t rq_nr_sectors;
	uint16_t rq_ioprio;       /* best of its bios */
	int rq_pid;               /* first bio's thread */
	char rq_comm[16];
	struct rt_link rq_bios;   /* its bios (b_link), in sector order */
	unsigned rq_nr_bios;
	uint64_t rq_start_ns;     /* G: request allocated */
	uint64_t rq_i_ns, rq_d_ns;
	uint64_t rq_fifo_expire_ns;    /* elevator deadline (deadline, cfq) */
	uint64_t rq_boost_ns;     /* first blk_boost that raised it, 0 none */
	struct rt_link rq_qlink; /* q_queued / q_dispatch / free list */
	struct rt_link rq_slink; /* elevator: sorted by sector */
	struct rt_link rq_flink; /* elevator: FIFO */
	void *rq_elv;             /* cfq: its cfq queue */
	int rq_slot;              /* bounce slot while in flight, or -1 */
	struct dev_req rq_dev;
};

/* b over every bio of rq, in sector order. */
#define BLK_RQ_FOR_EACH_BIO(b, rq) RT_LIST_FOR_EACH(b, &(rq)->rq_bios, struct blk_bio, b_link)

static inline uint64_t blk_rq_end(const struct blk_request *rq)
{
	return rq->rq_sector + rq->rq_nr_sectors;
}
/* CFQ's notion: reads and SYNC writes are sync. */
static inline int blk_rq_is_sync(const struct blk_request *rq)
{
	return rq->rq_op == BLK_OP_READ || (rq->rq_flags & BLK_SYNC);
}
static inline int blk_rq_is_meta(const struct blk_request *rq)
{
	return (rq->rq_flags & (BLK_META | BLK_PRIO)) != 0;
}
/* An ioprio as the elevators use it: class NONE is BE, IDLE is level 7. */
static inline unsigned blk_ioprio_class(uint16_t prio)
{
	unsigned c = RT_IOPRIO_CLASS(prio);
	return c == RT_IOPRIO_CLASS_NONE ? RT_IOPRIO_CLASS_BE : c;
}
static inline unsigned blk_ioprio_level(uint16_t prio)
{
	unsigned l = RT_IOPRIO_LEVEL(prio);
	if (blk_ioprio_class(prio) == RT_IOPRIO_CLASS_IDLE)
		return RT_IOPRIO_LEVELS - 1;
	return l < RT_IOPRIO_LEVELS ? l : RT_IOPRIO_LEVELS - 1;
}

/* ---- elevators ---------------------------------------------------------- */

/*
 * Every hook runs with q_lock held. The generic layer owns q_queued (merge
 * lookup); the elevator owns rq_slink, rq_flink, rq_elv, rq_fifo_expire_ns.
 * dispatch() removes the request it returns from its own structures.
 * After add, completed and timer the generic layer runs the queue, so an
 * elevator "kicks" simply by returning.
 */
struct blk_elv_ops {
	const char *name;
	int (*init)(struct blk_queue *q);
	void (*exit)(struct blk_queue *q);
	/* May bio b join rq, at its end or (front) before its start? (the
	 * same CFQ queue; deadline's front_merges). NULL = yes. */
	int (*allow_merge)(struct blk_queue *q, struct blk_request *rq,
			   const struct blk_bio *b, int front);
	void (*add)(struct blk_queue *q, struct blk_request *rq);
	/* rq grew by a bio; front = its start sector moved. */
	void (*merged)(struct blk_queue *q, struct blk_request *rq, int front);
	struct blk_request *(*dispatch)(struct blk_queue *q);
	void (*completed)(struct blk_queue *q, struct blk_request *rq);
	/* blk_boost raised rq's rq_ioprio from old (queued, in the
	 * elevator): move it where its new priority belongs. NULL = the
	 * order does not depend on priority. */
	void (*boost)(struct blk_queue *q, struct blk_request *rq, uint16_t old);
	/* Earliest pending timer (rt_now_ns scale), 0 = none; fire it. */
	uint64_t (*timer_at)(struct blk_queue *q);
	void (*timer)(struct blk_queue *q);
};

/* The default elevator (blk_queue_opts_default). The registry's rows are
 * declared in src/blk/elevators.c, every elevator's hooks are its own. */
extern const struct blk_elevator_type blk_elevator_noop;

/* ---- the queue ---------------------------------------------------------- */

#define BLK_NCLASSES 3 /* RT, BE, IDLE */

struct blk_queue {
	rt_mutex q_lock;
	rt_cond q_kick;           /* kblockd: timers changed, or stop */
	rt_cond q_done;           /* a bio waited on completed; drain */
	rt_cond q_rq_wait;        /* a request became free */

	struct dev *q_dev;
	uint64_t q_write_errors;  /* atomic: blk_write_errors (written under q_lock) */
	int q_write_errno;        /* atomic: blk_write_errno, stored before the count moves */
	struct blk_queue_opts q_opts;
	uint32_t q_block_size;
	uint64_t q_nr_sectors;    /* device size */
	int q_rotational;
	unsigned q_depth;
	const struct blk_elv_ops *q_elv;
	/* The elevator's tunables (a struct its table describes, a copy
	 * made at creation; NULL without a table). Set before init,
	 * constant after. */
	void *q_elv_tunables;
	void *q_elv_data;         /* [q_lock] */

	struct blk_request *q_pool;  /* nr_requests, allocated at creation */
	struct rt_link q_free;      /* [q_lock] */
	unsigned q_nr_free;
	struct rt_link q_queued;    /* [q_lock] elevator requests, insertion order */
	unsigned q_nr_queued;
	struct rt_link q_dispatch;  /* [q_lock] flushes waiting to be issued */
	unsigned q_in_flight;
	uint64_t q_rq_seq;

	int q_plugged;               /* [q_lock] 2.6.29 queue-level plug */
	uint64_t q_unplug_at;

	void **q_bounce;             /* q_depth slots, allocated on first need */
	uint32_t q_bounce_bytes;
	unsigned char *q_bounce_busy;

	rt_thread *q_kblockd;
	int q_stop, q_dying;
	uint64_t q_t0;

	struct rt_link q_end;        /* [q_lock] bios whose end_io to call (b_link) */
	unsigned q_end_pending;      /* [q_lock] end_io queued or running */

	/* trace and statistics [q_lock] */
	struct blk_trace_event *q_tr;
	size_t q_tr_n;
	uint64_t q_tr_dropped, q_tr_seq;
	struct blk_stat q_procs[BLK_STAT_MAX_PROCS];
	size_t q_nprocs;
	struct blk_stat q_classes[BLK_NCLASSES];
	struct blk_queue_stats q_stats;
	/* blk_boost's tags, for bios that reach the elevator later: a ring
	 * of the last BLK_BOOST_TAGS [q_lock] */
	uint64_t q_boost_tag[BLK_BOOST_TAGS];
	uint16_t q_boost_prio[BLK_BOOST_TAGS];
	unsigned q_boost_next;
};

/* core.c */
void __blk_insert_bio(struct blk_queue *q, struct blk_bio *b);
void __blk_run_queue(struct blk_queue *q);
void __blk_unplug(struct blk_queue *q, char why);
/* Unlock q, first calling the pending end_io callbacks without the lock. */
void blk_unlock(struct blk_queue *q);
void __blk_timers_changed(struct blk_queue *q);

/* trace.c */
#define BLK_RWBS_NONE (-1) /* P, U, T lines: "N" */
void blk_rwbs(int op, uint32_t flags, char out[8]);
void __blk_trace_rq(struct blk_queue *q, char action, const struct blk_request *rq);
void __blk_trace_bio(struct blk_queue *q, char action, const struct blk_bio *b);
void __blk_trace_plug(struct blk_queue *q, char action, unsigned nr);
void __blk_trace_c(struct blk_queue *q, const struct blk_request *rq, int error);
void __blk_account_bio(struct blk_queue *q, const struct blk_bio *b,
		       const struct blk_request *rq, uint64_t now);
void __blk_account_merge(struct blk_queue *q, const struct blk_bio *b);
int blk_trace_alloc(struct blk_queue *q);
void blk_trace_free(struct blk_queue *q);

/* plug.c */
/* Flush the calling thread's plug if it holds bios (any queue). */
void blk_plug_flush_current(void);
/* Append b to the calling thread's plug if one is started: 1 if taken. */
int blk_plug_take(struct blk_queue *q, struct blk_bio *b);

#endif /* UJBD_BLK_INT_H */

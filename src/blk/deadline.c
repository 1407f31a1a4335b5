/*
 * deadline: 2.6.29's deadline-iosched.c. Two directions, each with a list
 * sorted by sector and a FIFO by expiry time. Requests leave in batches of
 * up to fifo_batch in ascending sector order; between batches the scheduler
 * picks a direction (reads, unless writes have been passed over
 * writes_starved times) and starts at the FIFO head if that request has
 * expired, else where the last batch left off. Deadlines are therefore
 * soft: looked at only between batches. SYNC, META and ioprio are ignored.
 */
#include <errno.h>
#include <stdlib.h>

#include "blk/blk_int.h"

enum { DD_READ = 0, DD_WRITE = 1 };

/* Its tunables (2.6.29 deadline-iosched.c defaults; deadline_table below). */
struct deadline_tunables {
	uint64_t read_expire_ns;  /* 500 ms */
	uint64_t write_expire_ns; /* 5 s */
	unsigned fifo_batch;      /* 16 requests */
	unsigned writes_starved;  /* 2 read batches */
	bool front_merges;        /* true */
};

struct deadline_data {
	const struct deadline_tunables *dd_t; /* the queue's copy */
	struct rt_link dd_sort[2];        /* [q_lock] by sector */
	struct rt_link dd_fifo[2];        /* [q_lock] by expiry */
	struct blk_request *dd_next_rq[2]; /* continue the batch here */
	unsigned dd_batching;
	unsigned dd_starved;
};

static int dd_dir(const struct blk_request *rq)
{
	return rq->rq_op == BLK_OP_READ ? DD_READ : DD_WRITE;
}

static int deadline_init(struct blk_queue *q)
{
	const struct deadline_tunables *t = q->q_elv_tunables;
	ASSERT(t);
	if (t->fifo_batch == 0)
		return -EINVAL;
	struct deadline_data *dd = calloc(1, sizeof(*dd));
	if (!dd)
		return -ENOMEM;
	dd->dd_t = t;
	for (int i = 0; i < 2; i++) {
		rt_list_init(&dd->dd_sort[i]);
		rt_list_init(&dd->dd_fifo[i]);
	}
	q->q_elv_data = dd;
	return 0;
}

static void deadline_exit(struct blk_queue *q)
{
	free(q->q_elv_data);
	q->q_elv_data = NULL;
}

/* Equal sectors keep arrival order (the rbtree's "go right"). */
static void dd_sort_insert(struct deadline_data *dd, struct blk_request *rq)
{
	struct rt_link *h = &dd->dd_sort[dd_dir(rq)], *l;
	ASSERT(rt_list_empty(&rq->rq_slink) && rq->rq_state == BLK_RQ_QUEUED);
	for (l = h->next; l != h; l = l->next) {
		struct blk_request *o = RT_LIST_ENTRY(l, struct blk_request, rq_slink);
		if (o->rq_sector > rq->rq_sector)
			break;
	}
	rt_list_insert_before(l, &rq->rq_slink);
	ASSERT(rq->rq_slink.prev == h ||
	       RT_LIST_ENTRY(rq->rq_slink.prev, struct blk_request, rq_slink)->rq_sector <=
		       rq->rq_sector);
}

static void deadline_add(struct blk_queue *q, struct blk_request *rq)
{
	struct deadline_data *dd = q->q_elv_data;
	const struct deadline_tunables *t = dd->dd_t;
	int dir = dd_dir(rq);
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rt_list_empty(&rq->rq_flink) && rq->rq_op != BLK_OP_FLUSH);
	rq->rq_fifo_expire_ns = rt_now_ns() +
		(dir == DD_READ ? t->read_expire_ns : t->write_expire_ns);
	dd_sort_insert(dd, rq);
	rt_list_add_tail(&dd->dd_fifo[dir], &rq->rq_flink);
}

/* Front merges only when front_merges is on (2.6.29 deadline_merge). */
static int deadline_allow_merge(struct blk_queue *q, struct blk_request *rq,
				const struct blk_bio *b, int front)
{
	const struct deadline_data *dd = q->q_elv_data;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && rq->rq_op == b->b_op);
	return !front || dd->dd_t->front_merges;
}

static void deadline_merged(struct blk_queue *q, struct blk_request *rq, int front)
{
	struct deadline_data *dd = q->q_elv_data;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && !rt_list_empty(&rq->rq_flink));
	if (!front)
		return;
	rt_list_del(&rq->rq_slink);
	dd_sort_insert(dd, rq);
}

static struct blk_request *dd_successor(struct deadline_data *dd, struct blk_request *rq)
{
	struct rt_link *n = rq->rq_slink.next;
	if (n == &dd->dd_sort[dd_dir(rq)])
		return NULL;
	return RT_LIST_ENTRY(n, struct blk_request, rq_slink);
}

static void dd_move_request(struct deadline_data *dd, struct blk_request *rq)
{
	int dir = dd_dir(rq);
	ASSERT(!rt_list_empty(&rq->rq_slink) && !rt_list_empty(&rq->rq_flink));
	dd->dd_next_rq[DD_READ] = dd->dd_next_rq[DD_WRITE] = NULL;
	dd->dd_next_rq[dir] = dd_successor(dd, rq);
	rt_list_del(&rq->rq_slink);
	rt_list_del(&rq->rq_flink);
	ASSERT(dd->dd_next_rq[dir] != rq && rt_list_empty(&dd->dd_sort[dir]) ==
						    rt_list_empty(&dd->dd_fifo[dir]));
}

static int dd_fifo_expired(struct deadline_data *dd, int dir)
{
	if (rt_list_empty(&dd->dd_fifo[dir]))
		return 0;
	struct blk_request *rq =
		RT_LIST_ENTRY(dd->dd_fifo[dir].next, struct blk_request, rq_flink);
	return rt_now_ns() > rq->rq_fifo_expire_ns;
}

static struct blk_request *deadline_dispatch(struct blk_queue *q)
{
	struct deadline_data *dd = q->q_elv_data;
	const struct deadline_tunables *t = dd->dd_t;
	int reads = !rt_list_empty(&dd->dd_fifo[DD_READ]);
	int writes = !rt_list_empty(&dd->dd_fifo[DD_WRITE]);
	struct blk_request *rq = dd->dd_next_rq[DD_WRITE] ? dd->dd_next_rq[DD_WRITE]
							  : dd->dd_next_rq[DD_READ];
	int dir;

	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(!rq || rq->rq_state == BLK_RQ_QUEUED);
	if (rq && dd->dd_batching < t->fifo_batch)
		goto dispatch;
	if (reads && !(writes && dd->dd_starved++ >= t->writes_starved)) {
		dir = DD_READ;
	} else if (writes) {
		dd->dd_starved = 0;
		dir = DD_WRITE;
	} else {
		return NULL;
	}
	if (dd_fifo_expired(dd, dir) || !dd->dd_next_rq[dir])
		rq = RT_LIST_ENTRY(dd->dd_fifo[dir].next, struct blk_request, rq_flink);
	else
		rq = dd->dd_next_rq[dir];
	dd->dd_batching = 0;
dispatch:
	ASSERT(rq && rq->rq_state == BLK_RQ_QUEUED);
	dd->dd_batching++;
	dd_move_request(dd, rq);
	return rq;
}

static void deadline_completed(struct blk_queue *q, struct blk_request *rq)
{
	(void)q;
	(void)rq;
}

static const struct blk_elv_ops blk_elv_deadline = {
	.name = "deadline",
	.init = deadline_init,
	.exit = deadline_exit,
	.allow_merge = deadline_allow_merge,
	.add = deadline_add,
	.merged = deadline_merged,
	.dispatch = deadline_dispatch,
	.completed = deadline_completed,
};

/* ---- tunables ----------------------------------------------------------- */

#define DL_SRC "2.6.29 deadline-iosched.c"
static const struct rt_param deadline_rows[] = {
	RT_PARAM_AS("read_expire_ms", struct deadline_tunables, read_expire_ns, RT_PARAM_U64,
		    "ms", 1e6, 500, 1, 60000, DL_SRC " read_expire (HZ/2)", "deadline of a read"),
	RT_PARAM_AS("write_expire_ms", struct deadline_tunables, write_expire_ns,
		    RT_PARAM_U64, "ms", 1e6, 5000, 1, 600000, DL_SRC " write_expire (5*HZ)",
		    "deadline of a write"),
	RT_PARAM(struct deadline_tunables, fifo_batch, RT_PARAM_UINT, "rq", 0, 16, 1, 1024,
		 DL_SRC " fifo_batch", "requests per sorted batch"),
	RT_PARAM(struct deadline_tunables, writes_starved, RT_PARAM_UINT, "", 0, 2, 0, 1024,
		 DL_SRC " writes_starved", "read batches before writes are served"),
	RT_PARAM(struct deadline_tunables, front_merges, RT_PARAM_BOOL, "", 0, 1, 0, 1,
		 DL_SRC " front_merges", "try front merges"),
};
static const struct rt_param_table deadline_table =
	RT_PARAM_TABLE("deadline", "deadline tunables (2.6.29 defaults)", deadline_rows,
		       struct deadline_tunables);

const struct blk_elevator_type blk_elevator_deadline = {
	.e_name = "deadline",
	.e_help = "deadline: sorted batches, read and write FIFOs with expiry",
	.e_ops = &blk_elv_deadline,
	.e_tunables = &deadline_table,
};

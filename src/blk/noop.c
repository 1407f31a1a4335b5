/*
 * noop: requests leave in the order they were inserted. Merging (back and
 * front, see core.c) is all it does, as 2.6.29's noop-iosched.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "blk/blk_int.h"

struct noop_data {
	struct rt_link nd_fifo; /* [q_lock] */
};


static int noop_init(struct blk_queue *q)
{
	struct noop_data *nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	rt_list_init(&nd->nd_fifo);
	q->q_elv_data = nd;
	return 0;
}

static void noop_exit(struct blk_queue *q)
{
	free(q->q_elv_data);
	q->q_elv_data = NULL;
}

static void noop_add(struct blk_queue *q, struct blk_request *rq)
{
	struct noop_data *nd = q->q_elv_data;
	ASSERT(rt_mutex_held(&q->q_lock));
	ASSERT(rt_list_empty(&rq->rq_flink) && rq->rq_state == BLK_RQ_QUEUED);
	rt_list_add_tail(&nd->nd_fifo, &rq->rq_flink);
}

static struct blk_request *noop_dispatch(struct blk_queue *q)
{
	struct noop_data *nd = q->q_elv_data;
	ASSERT(rt_mutex_held(&q->q_lock));
	struct blk_request *rq = RT_LIST_FIRST(&nd->nd_fifo, struct blk_request, rq_flink);
	if (!rq)
		return NULL;
	ASSERT(rq->rq_state == BLK_RQ_QUEUED && rq->rq_q == q);
	rt_list_del(&rq->rq_flink);
	return rq;
}

static void noop_completed(struct blk_queue *q, struct blk_request *rq)
{
	(void)q;
	(void)rq;
}

static const struct blk_elv_ops blk_elv_noop = {
	.name = "noop",
	.init = noop_init,
	.exit = noop_exit,
	.add = noop_add,
	.dispatch = noop_dispatch,
	.completed = noop_completed,
};

const struct blk_elevator_type blk_elevator_noop = {
	.e_name = "noop",
	.e_help = "noop: insertion order, merging only",
	.e_ops = &blk_elv_noop,
	.e_tunables = NULL,
};

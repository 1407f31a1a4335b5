/*
 * Per-thread plugging: a thread that knows it is about to submit a batch
 * (a journal commit writing its log blocks, say) starts a plug; its bios
 * then wait in the plug instead of reaching the elevator one by one, and all
 * go at once when the plug is finished or the thread blocks in a blk wait.
 * Arriving together, contiguous bios merge into one request before the
 * device has a chance to take the first one alone: the difference between
 * one explicit unplug and 2.6.29's unplug-per-WRITE_SYNC that the "Ext3
 * latency fixes" discussion measured (LKML, April 2009).
 *
 * The plug lives in caller memory; a thread-local pointer says which plug
 * (if any) the calling thread has started. Thread-local storage is neither
 * time nor waiting, so it is allowed outside rt.
 */
#include <string.h>

#include "blk/blk_int.h"

static _Thread_local struct blk_plug *blk_cur_plug;

void blk_start_plug(struct blk_plug *plug)
{
	if (blk_cur_plug) {
		/* Nested: the outer plug keeps gathering. */
		blk_cur_plug->p_depth++;
		return;
	}
	memset(plug, 0, sizeof(*plug));
	rt_list_init(&plug->p_bios);
	plug->p_depth = 1;
	blk_cur_plug = plug;
	ASSERT(rt_list_empty(&plug->p_bios) && plug->p_count == 0);
}

void blk_finish_plug(struct blk_plug *plug)
{
	struct blk_plug *cur = blk_cur_plug;
	if (!cur)
		return;
	if (cur != plug || cur->p_depth > 1) {
		cur->p_depth--;
		return;
	}
	ASSERT(cur->p_depth == 1);
	blk_plug_flush_current();
	ASSERT(rt_list_empty(&cur->p_bios) && cur->p_count == 0); /* every bio went out */
	cur->p_depth = 0;
	blk_cur_plug = NULL;
}

void blk_flush_plug(void)
{
	blk_plug_flush_current();
}

/* Called with q_lock held. */
int blk_plug_take(struct blk_queue *q, struct blk_bio *b)
{
	struct blk_plug *plug = blk_cur_plug;
	if (!plug)
		return 0;
	ASSERT(rt_mutex_held(&q->q_lock) && plug->p_depth > 0);
	ASSERT(b->b_queue == q && rt_list_empty(&plug->p_bios) == !plug->p_count);
	const struct blk_bio *p;
	int seen = 0;
	RT_LIST_FOR_EACH(p, &plug->p_bios, struct blk_bio, b_link) {
		if (p->b_queue == q) {
			seen = 1;
			break;
		}
	}
	if (!seen) {
		q->q_stats.plugs++;
		__blk_trace_plug(q, 'P', 0);
	}
	rt_list_add_tail(&plug->p_bios, &b->b_link);
	plug->p_count++;
	ASSERT(plug->p_bios.prev == &b->b_link);
	return 1;
}

/* Bios of b's queue from the first of list bios on, up to another queue's. */
static unsigned blk_plug_count_run(const struct rt_link *bios)
{
	const struct blk_bio *b = RT_LIST_FIRST(bios, struct blk_bio, b_link), *p;
	unsigned n = 0;
	for (p = b; p && p->b_queue == b->b_queue; p = RT_LIST_NEXT(bios, p, struct blk_bio, b_link))
		n++;
	return n;
}

/*
 * Hand the plugged bios to their queues, in submission order, one queue
 * lock at a time: each run of bios for one queue is inserted under one lock
 * hold, so they merge among themselves before any dispatch; then the queue
 * is unplugged (also lifting a 2.6.29 queue-level plug) and run.
 */
void blk_plug_flush_current(void)
{
	struct blk_plug *plug = blk_cur_plug;
	if (!plug || rt_list_empty(&plug->p_bios))
		return;
	struct rt_link bios;
	rt_list_init(&bios);
	rt_list_splice_tail(&bios, &plug->p_bios);
	plug->p_count = 0;
	while (!rt_list_empty(&bios)) {
		struct blk_queue *q = RT_LIST_FIRST(&bios, struct blk_bio, b_link)->b_queue;
		unsigned n = blk_plug_count_run(&bios);
		ASSERT(n > 0 && !rt_mutex_held(&q->q_lock));
		rt_mutex_lock(&q->q_lock);
		__blk_trace_plug(q, 'U', n);
		q->q_stats.unplugs_io++;
		for (unsigned i = 0; i < n; i++)
			__blk_insert_bio(q, RT_LIST_POP(&bios, struct blk_bio, b_link));
		__blk_unplug(q, 0);
		blk_unlock(q);
	}
}

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
	plug->p_depth = 1;
	blk_cur_plug = plug;
	ASSERT(!plug->p_head && plug->p_count == 0);
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
	ASSERT(!cur->p_head && cur->p_count == 0); /* every bio went out */
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
	ASSERT(b->b_queue == q && !plug->p_tail == !plug->p_head);
	int seen = 0;
	for (struct blk_bio *p = plug->p_head; p && !seen; p = p->b_next)
		seen = p->b_queue == q;
	if (!seen) {
		q->q_stats.plugs++;
		__blk_trace_plug(q, 'P', 0);
	}
	b->b_next = NULL;
	if (plug->p_tail)
		plug->p_tail->b_next = b;
	else
		plug->p_head = b;
	plug->p_tail = b;
	plug->p_count++;
	ASSERT(plug->p_head && !plug->p_tail->b_next);
	return 1;
}

static unsigned blk_plug_count_run(const struct blk_bio *b)
{
	unsigned n = 0;
	for (const struct blk_bio *p = b; p && p->b_queue == b->b_queue; p = p->b_next)
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
	if (!plug || !plug->p_head)
		return;
	struct blk_bio *b = plug->p_head;
	plug->p_head = plug->p_tail = NULL;
	plug->p_count = 0;
	while (b) {
		struct blk_queue *q = b->b_queue;
		unsigned n = blk_plug_count_run(b);
		ASSERT(n > 0 && !rt_mutex_held(&q->q_lock));
		rt_mutex_lock(&q->q_lock);
		__blk_trace_plug(q, 'U', n);
		q->q_stats.unplugs_io++;
		while (b && b->b_queue == q) {
			struct blk_bio *next = b->b_next;
			b->b_next = NULL;
			__blk_insert_bio(q, b);
			b = next;
		}
		__blk_unplug(q, 0);
		blk_unlock(q);
	}
}

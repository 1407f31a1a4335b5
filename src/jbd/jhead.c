/*
 * jhead.c: journal heads, the journal's record of a buffer it manages,
 * and the lists that hold them.
 *
 * The one idea: a journal head lives as long as some list holds it (a
 * transaction's buffers, forget or retired lists, a checkpoint list, the
 * ordered-data list) and is found by block number through one hash; when
 * the last list lets it go it leaves the hash and its buffer reference goes
 * back to the caller, to be dropped once j_state_lock is released. Every
 * function here runs under j_state_lock.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

static struct jbd_jh **__jh_bucket(struct ujbd *j, uint64_t block)
{
	return &j->j_jh_hash[jbd_block_hash(block, j->j_jh_mask)];
}

struct jbd_jh *__jbd_jh_find(struct ujbd *j, uint64_t block)
{
	struct jbd_jh *jh = *__jh_bucket(j, block);

	ASSERT(rt_mutex_held(&j->j_state_lock));
	while (jh && jh->jh_buf->b_blocknr != block)
		jh = jh->b_hnext;
	ASSERT(!jh || jh->jh_buf->b_jh == jh);
	return jh;
}

struct jbd_jh *__jbd_jh_get(struct ujbd *j, struct ujbd_buf *b)
{
	struct jbd_jh *jh = b->b_jh, **head;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	if (jh) {
		ASSERT(jh->jh_buf == b);
		return jh;
	}
	ASSERT(__jbd_jh_find(j, b->b_blocknr) == NULL); /* one head per block */
	jh = calloc(1, sizeof(*jh));
	if (!jh)
		return NULL;
	jh->jh_buf = b;
	rt_list_init(&jh->b_tlink);
	rt_list_init(&jh->b_cplink);
	rt_list_init(&jh->b_dlink);
	b->b_jh = jh;
	buf_hold(b);
	head = __jh_bucket(j, b->b_blocknr);
	jh->b_hnext = *head;
	*head = jh;
	ASSERT(__jbd_jh_find(j, b->b_blocknr) == jh);
	return jh;
}

static void jh_free(struct jbd_jh *jh)
{
	free(jh->b_frozen_data);
	free(jh);
}

void __jbd_jh_maybe_free(struct ujbd *j, struct jbd_jh *jh, struct ujbd_buf **put)
{
	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(jh->jh_buf->b_jh == jh);
	if (jh->b_transaction || jh->b_next_transaction || jh->b_cp_transaction ||
	    jh->b_data_transaction || jh->b_data_next || jh->b_ckpt_busy)
		return;
	ASSERT(rt_list_empty(&jh->b_tlink) && rt_list_empty(&jh->b_cplink));
	ASSERT(rt_list_empty(&jh->b_dlink));
	__jbd_jh_unhash(j, jh, put);
	jh_free(jh);
}

void __jbd_jh_unhash(struct ujbd *j, struct jbd_jh *jh, struct ujbd_buf **put)
{
	struct ujbd_buf *b = jh->jh_buf;
	struct jbd_jh **pp;

	ASSERT(rt_mutex_held(&j->j_state_lock));
	ASSERT(b->b_jh == jh);
	for (pp = __jh_bucket(j, b->b_blocknr); *pp != jh; pp = &(*pp)->b_hnext)
		ASSERT(*pp);
	*pp = jh->b_hnext;
	jh->b_hnext = NULL;
	b->b_jh = NULL;
	b->b_jstate = 0;
	*put = b;
	ASSERT(__jbd_jh_find(j, b->b_blocknr) == NULL);
}

void __jbd_free_retired(struct jbd_txn *t)
{
	struct jbd_jh *jh;

	ASSERT(t->t_updates == 0);
	while ((jh = RT_LIST_POP(&t->t_retired, struct jbd_jh, b_tlink))) {
		ASSERT(!jh->b_transaction && !jh->b_hnext);
		ASSERT(rt_list_empty(&jh->b_cplink) && rt_list_empty(&jh->b_dlink));
		jh_free(jh);
	}
}

/* Link l (a head's) onto the front of list head, counted in *nr. */
static void __jh_list_add(struct rt_link *head, uint32_t *nr, struct rt_link *l)
{
	ASSERT(rt_list_empty(l) && l != head); /* on no list yet */
	ASSERT(rt_list_empty(head) == (*nr == 0));
	rt_list_add_head(head, l);
	(*nr)++;
}

/* Link l off list head, counted in *nr; l points at itself again. */
static void __jh_list_del(struct rt_link *head, uint32_t *nr, struct rt_link *l)
{
	ASSERT(!rt_list_empty(l) && *nr > 0);
	ASSERT(l->prev->next == l && l->next->prev == l);
	rt_list_del(l);
	(*nr)--;
	ASSERT(rt_list_empty(head) == (*nr == 0));
}

void __jbd_list_add_t(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(jh->b_transaction == t);
	__jh_list_add(&t->t_buffers, &t->t_nr_buffers, &jh->b_tlink);
}

void __jbd_list_del_t(struct jbd_txn *t, struct jbd_jh *jh)
{
	__jh_list_del(&t->t_buffers, &t->t_nr_buffers, &jh->b_tlink);
}

void __jbd_list_add_cp(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(!jh->b_cp_transaction);
	__jh_list_add(&t->t_ckpt, &t->t_nr_ckpt, &jh->b_cplink);
	jh->b_cp_transaction = t;
	jh->jh_buf->b_jstate |= BUF_J_DIRTY;
}

void __jbd_list_del_cp(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(jh->b_cp_transaction == t);
	__jh_list_del(&t->t_ckpt, &t->t_nr_ckpt, &jh->b_cplink);
	jh->b_cp_transaction = NULL;
	jh->jh_buf->b_jstate &= ~BUF_J_DIRTY;
}

void __jbd_list_add_d(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(!jh->b_data_transaction);
	__jh_list_add(&t->t_data, &t->t_nr_data, &jh->b_dlink);
	jh->b_data_transaction = t;
	jh->jh_buf->b_jstate |= BUF_J_DATA;
}

void __jbd_list_del_d(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(jh->b_data_transaction == t);
	__jh_list_del(&t->t_data, &t->t_nr_data, &jh->b_dlink);
	jh->b_data_transaction = NULL;
	jh->jh_buf->b_jstate &= ~BUF_J_DATA;
}

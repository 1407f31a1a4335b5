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
	ASSERT(!jh->b_tnext && !jh->b_cpnext && !jh->b_dnext);
	ASSERT(!jh->b_tprev && !jh->b_cpprev && !jh->b_dprev);
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
	while ((jh = t->t_retired)) {
		ASSERT(!jh->b_transaction && !jh->b_hnext);
		t->t_retired = jh->b_tnext;
		jh_free(jh);
	}
}

void __jbd_list_add_t(struct jbd_jh **head, struct jbd_jh *jh)
{
	ASSERT(!jh->b_tnext && !jh->b_tprev && *head != jh);
	ASSERT(!*head || !(*head)->b_tprev);
	jh->b_tprev = NULL;
	jh->b_tnext = *head;
	if (*head)
		(*head)->b_tprev = jh;
	*head = jh;
}

void __jbd_list_del_t(struct jbd_jh **head, struct jbd_jh *jh)
{
	ASSERT(jh->b_tprev ? jh->b_tprev->b_tnext == jh : *head == jh);
	ASSERT(!jh->b_tnext || jh->b_tnext->b_tprev == jh);
	if (jh->b_tprev)
		jh->b_tprev->b_tnext = jh->b_tnext;
	else
		*head = jh->b_tnext;
	if (jh->b_tnext)
		jh->b_tnext->b_tprev = jh->b_tprev;
	jh->b_tnext = jh->b_tprev = NULL;
}

void __jbd_list_add_cp(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(!jh->b_cp_transaction && !jh->b_cpnext && !jh->b_cpprev);
	ASSERT((t->t_ckpt == NULL) == (t->t_nr_ckpt == 0));
	jh->b_cp_transaction = t;
	jh->b_cpprev = NULL;
	jh->b_cpnext = t->t_ckpt;
	if (t->t_ckpt)
		t->t_ckpt->b_cpprev = jh;
	t->t_ckpt = jh;
	t->t_nr_ckpt++;
	jh->jh_buf->b_jstate |= BUF_J_DIRTY;
}

void __jbd_list_del_cp(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(jh->b_cp_transaction == t && t->t_nr_ckpt > 0);
	ASSERT(jh->b_cpprev ? jh->b_cpprev->b_cpnext == jh : t->t_ckpt == jh);
	if (jh->b_cpprev)
		jh->b_cpprev->b_cpnext = jh->b_cpnext;
	else
		t->t_ckpt = jh->b_cpnext;
	if (jh->b_cpnext)
		jh->b_cpnext->b_cpprev = jh->b_cpprev;
	jh->b_cpnext = jh->b_cpprev = NULL;
	jh->b_cp_transaction = NULL;
	t->t_nr_ckpt--;
	jh->jh_buf->b_jstate &= ~BUF_J_DIRTY;
	ASSERT((t->t_ckpt == NULL) == (t->t_nr_ckpt == 0));
}

void __jbd_list_add_d(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(!jh->b_data_transaction && !jh->b_dnext && !jh->b_dprev);
	ASSERT((t->t_data == NULL) == (t->t_nr_data == 0));
	jh->b_data_transaction = t;
	jh->b_dprev = NULL;
	jh->b_dnext = t->t_data;
	if (t->t_data)
		t->t_data->b_dprev = jh;
	t->t_data = jh;
	t->t_nr_data++;
	jh->jh_buf->b_jstate |= BUF_J_DATA;
}

void __jbd_list_del_d(struct jbd_txn *t, struct jbd_jh *jh)
{
	ASSERT(jh->b_data_transaction == t && t->t_nr_data > 0);
	ASSERT(jh->b_dprev ? jh->b_dprev->b_dnext == jh : t->t_data == jh);
	if (jh->b_dprev)
		jh->b_dprev->b_dnext = jh->b_dnext;
	else
		t->t_data = jh->b_dnext;
	if (jh->b_dnext)
		jh->b_dnext->b_dprev = jh->b_dprev;
	jh->b_dnext = jh->b_dprev = NULL;
	jh->b_data_transaction = NULL;
	t->t_nr_data--;
	jh->jh_buf->b_jstate &= ~BUF_J_DATA;
	ASSERT((t->t_data == NULL) == (t->t_nr_data == 0));
}

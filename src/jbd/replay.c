/*
 * replay.c: recovery's home writes, at the speed of the disk.
 *
 * recovery.c decides which copy of each block to write, the last one in
 * the log that is neither revoked nor bad (writing every copy in log order,
 * as e2fsck and the kernel do, ends in the same bytes), and hands over the
 * list sorted by block, each block once. This file writes it: a run of
 * consecutive blocks whose copies lie one after the other in the held log
 * (a descriptor's worth, typically) goes out as one write straight from
 * the log's memory; shorter pieces are gathered into staging buffers, one
 * write per run of consecutive blocks. Up to JBD_REPLAY_DEPTH writes are in
 * flight, in block order, and one flush ends it.
 *
 * A copy the reader did not keep (past its budget) is read again here and
 * its checksum checked again: the pair of the scan's check, since the log
 * may have changed in between. A held copy is the very memory the scan
 * checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/base.h"

/* A piece this long goes out from the log's memory, shorter ones are
 * copied: about where one more request costs what copying does. */
#define RP_DIRECT_MIN_BLOCKS 16u

struct rp_slot {
	struct dev_group_req s_req;
	uint8_t *s_stage;          /* JBD_REPLAY_WRITE_BYTES, at first use */
	bool s_busy;               /* sent, not yet waited for */
};

struct rp_state {
	const struct jbd_journal *j;
	struct jbd_err *err;
	struct dev_group group;
	struct rp_slot slots[JBD_REPLAY_DEPTH];
	unsigned next;             /* slots are used round robin */
	struct rp_slot *gather;    /* the staging buffer being filled, or NULL */
	uint64_t g_target;         /* its first block */
	uint32_t g_n;              /* its blocks */
	uint32_t max_blocks;       /* per write */
	const struct jbd_recover_opts *o; /* its progress callback, or NULL */
	int rc;                    /* the first error */
};

/* Wait for slot s's write; the first failure is the one reported. */
static void rp_reap(struct rp_state *st, struct rp_slot *s)
{
	int64_t res;

	if (!s->s_busy)
		return;
	res = dev_group_wait(&s->s_req);
	s->s_busy = false;
	if (res == (int64_t)s->s_req.gr_req.r_len || st->rc)
		return;
	st->rc = jbd_err_set(st->err, res < 0 ? (int)res : -EIO,
			     "cannot write data block %llu: %s",
			     (unsigned long long)(s->s_req.gr_req.r_off / st->j->j_loc.j_blocksize),
			     strerror(res < 0 ? (int)-res : EIO));
}

/* The next slot, once its previous write is done. */
static struct rp_slot *rp_take(struct rp_state *st)
{
	struct rp_slot *s = &st->slots[st->next++ % JBD_REPLAY_DEPTH];

	rp_reap(st, s);
	return s;
}

static void rp_send(struct rp_state *st, struct rp_slot *s, uint64_t target, void *buf,
		    uint32_t n)
{
	uint32_t bs = st->j->j_loc.j_blocksize;
	int rc;

	ASSERT(!s->s_busy && n >= 1 && n <= st->max_blocks);
	s->s_req = (struct dev_group_req){ .gr_req = { .r_op = DEV_OP_WRITE,
						       .r_flags = DEV_REQ_DIRECT,
						       .r_off = target * bs, .r_len = n * bs,
						       .r_buf = buf,
						       .r_ioprio = rt_ioprio_get() } };
	rc = dev_group_submit(st->j->j_loc.j_data, &st->group, &s->s_req);
	if (rc == 0)
		s->s_busy = true;
	else if (!st->rc)
		st->rc = jbd_err_set(st->err, rc, "cannot write data block %llu: %s",
				     (unsigned long long)target, strerror(-rc));
}

static void rp_gather_flush(struct rp_state *st)
{
	if (!st->gather)
		return;
	rp_send(st, st->gather, st->g_target, st->gather->s_stage, st->g_n);
	st->gather = NULL;
}

/* Read a copy that was not held, check it again, unescape it. */
static int rp_read_again(struct rp_state *st, const struct jbd_home *h, uint8_t *dst)
{
	const struct jbd_scan_tag *tag = h->h_tag;
	struct jbd_tag dt = { tag->target, tag->flags, tag->csum_stored };
	int rc = jbd_journal_read(st->j, tag->journal_block, dst);

	if (rc)
		return jbd_err_set(st->err, rc, "cannot read journal block %u: %s",
				   tag->journal_block, strerror(-rc));
	if (!jbd_tag_csum_verify(&st->j->j_fmt, h->h_tid, &dt, dst))
		return jbd_err_set(st->err, -EIO, "journal block %u changed since it was checked",
				   tag->journal_block);
	if (tag->flags & JBD2_FLAG_ESCAPE)
		jbd_unescape(dst);
	return 0;
}

/* Copy homes[0..n) (consecutive blocks) into the staging buffer. */
static void rp_gather(struct rp_state *st, const struct jbd_home *h, uint8_t *const *data,
		      uint32_t n)
{
	uint32_t bs = st->j->j_loc.j_blocksize;

	if (st->gather && (st->g_target + st->g_n != h[0].h_target ||
			   st->g_n + n > st->max_blocks))
		rp_gather_flush(st);
	if (st->rc)
		return;
	if (!st->gather) {
		struct rp_slot *s = rp_take(st);
		if (!s->s_stage && posix_memalign((void **)&s->s_stage, 4096,
						  JBD_REPLAY_WRITE_BYTES)) {
			s->s_stage = NULL;
			st->rc = jbd_err_set(st->err, -ENOMEM, "out of memory");
			return;
		}
		st->gather = s;
		st->g_target = h[0].h_target;
		st->g_n = 0;
	}
	for (uint32_t i = 0; i < n && !st->rc; i++, st->g_n++) {
		uint8_t *dst = st->gather->s_stage + (size_t)st->g_n * bs;
		if (data[i])
			memcpy(dst, data[i], bs);
		else if ((st->rc = rp_read_again(st, &h[i], dst)))
			st->gather = NULL;
	}
}

/* How many homes from h on are consecutive blocks whose held copies lie
 * one after the other in memory (at least 1; at most left and a write). */
static uint32_t rp_piece(const struct rp_state *st, const struct jbd_home *h,
			 uint8_t *const *data, size_t left)
{
	uint32_t bs = st->j->j_loc.j_blocksize, n = 1;

	while (n < left && n < st->max_blocks && h[n].h_target == h[0].h_target + n &&
	       data[0] && data[n] == data[0] + (size_t)n * bs)
		n++;
	return n;
}

/* The held copy of every home (NULL: read again), unescaped in place. */
static uint8_t **rp_held(struct jbd_logread *lr, const struct jbd_home *homes, size_t n)
{
	uint8_t **data = malloc((n ? n : 1) * sizeof(*data));

	if (!data)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		data[i] = jbd_logread_held(lr, homes[i].h_tag->journal_block);
		if (data[i] && (homes[i].h_tag->flags & JBD2_FLAG_ESCAPE))
			jbd_unescape(data[i]);
	}
	return data;
}

static void rp_write_all(struct rp_state *st, const struct jbd_home *homes,
			 uint8_t *const *data, size_t n)
{
	uint32_t len;

	for (size_t i = 0; i < n && !st->rc; i += len) {
		ASSERT(i == 0 || homes[i].h_target > homes[i - 1].h_target);
		if (st->o && st->o->progress)
			st->o->progress(st->o->progress_arg, i, n);
		len = rp_piece(st, &homes[i], &data[i], n - i);
		if (data[i] && len >= RP_DIRECT_MIN_BLOCKS) {
			rp_gather_flush(st);
			if (!st->rc)
				rp_send(st, rp_take(st), homes[i].h_target, data[i], len);
		} else {
			rp_gather(st, &homes[i], &data[i], len);
		}
	}
	if (!st->rc)
		rp_gather_flush(st);
	for (unsigned k = 0; k < JBD_REPLAY_DEPTH; k++)
		rp_reap(st, &st->slots[k]);
	if (!st->rc && st->o && st->o->progress)
		st->o->progress(st->o->progress_arg, n, n);
}

int jbd_replay_write(const struct jbd_journal *j, struct jbd_logread *lr,
		     const struct jbd_home *homes, size_t n,
		     const struct jbd_recover_opts *o, struct jbd_err *err)
{
	struct rp_state st = { .j = j, .err = err, .o = o };
	uint8_t **data;
	int rc;

	ASSERT(j->j_loc.j_data && JBD_REPLAY_WRITE_BYTES >= j->j_loc.j_blocksize);
	st.max_blocks = JBD_REPLAY_WRITE_BYTES / j->j_loc.j_blocksize;
	data = rp_held(lr, homes, n);
	if (!data)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	rc = dev_group_init(&st.group);
	if (rc) {
		free(data);
		return jbd_err_set(err, rc, "cannot start the home writes: %s", strerror(-rc));
	}
	rp_write_all(&st, homes, data, n);
	for (unsigned k = 0; k < JBD_REPLAY_DEPTH; k++)
		free(st.slots[k].s_stage);
	dev_group_release(&st.group);
	free(data);
	if (st.rc)
		return st.rc;
	rc = dev_flush(j->j_loc.j_data);
	if (rc)
		return jbd_err_set(err, rc, "cannot flush the data device: %s", strerror(-rc));
	return 0;
}

/*
 * logwrite.c: append one committed transaction to a journal's log.
 *
 * The order of writes is what makes the transaction atomic: every block of
 * the transaction but the commit block, then a flush, then the commit block
 * and another flush. Until the commit block is durable the transaction does
 * not exist for recovery; after, it is complete. The superblock, when it
 * must change (an empty journal gets s_start), is written before the commit
 * block for the same reason ext4 sets needs_recovery first: a commit block
 * must never be durable in a log nobody will read.
 *
 * What the blocks hold is logblock.c's (the builder the runtime's commit
 * uses too); this file places the transaction, checks it fits, and
 * provides the builder's sink: jbd_journal_write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/base.h"
#include "ujbd/ujbd.h"

/* Where the transaction goes and how big it is. */
struct wplan {
	uint32_t start;      /* first block */
	uint32_t tid;
	uint32_t used;       /* live log blocks before it (from s_start) */
	size_t nrev_blocks, ndesc, total;
	bool empty;          /* s_start was 0 */
};

static int check_targets(const struct jbd_journal *j, const struct jbd_txn_desc *t,
			 struct jbd_err *err)
{
	uint64_t limit = j->j_loc.j_data_blocks;

	for (size_t i = 0; i < t->nblocks + t->nrevokes; i++) {
		uint64_t b = i < t->nblocks ? t->blocks[i].target : t->revokes[i - t->nblocks];
		const char *what = i < t->nblocks ? "block" : "revoked block";
		if (limit && b >= limit)
			return jbd_err_set(err, -EINVAL, "%s %llu is beyond the data device (%llu blocks)",
					   what, (unsigned long long)b, (unsigned long long)limit);
		if (b > UINT32_MAX && !j->j_fmt.f_64bit)
			return jbd_err_set(err, -EINVAL,
					   "%s %llu needs the 64bit journal feature", what,
					   (unsigned long long)b);
		/* the log would replay it over itself; recovery refuses it */
		if (jbd_loc_on_journal(&j->j_loc, b))
			return jbd_err_set(err, -UJBD_EINJOURNAL, "%s %llu is inside the journal",
					   what, (unsigned long long)b);
	}
	return 0;
}

/* Find the append point: after the last committed transaction, or at
 * s_head / s_first when the journal is empty. */
static int place(const struct jbd_journal *j, struct wplan *p, struct jbd_err *err)
{
	const struct jbd2_sb *sb = &j->j_sb;
	uint32_t start = jbd_get_be32(sb->s_start);
	struct jbd_scan sc;
	int rc;

	if (start == 0) {
		uint32_t head = jbd_sb_is_v2(sb) ? jbd_get_be32(sb->s_head) : 0;
		p->empty = true;
		p->start = head >= j->j_first && head < j->j_last ? head : j->j_first;
		p->tid = jbd_get_be32(sb->s_sequence);
		p->used = 0;
		return 0;
	}
	rc = jbd_scan_log(j, &sc, err);
	if (rc) {
		jbd_scan_release(&sc);
		return rc;
	}
	p->empty = false;
	p->start = sc.sc_end_block;
	p->tid = sc.sc_end_tid;
	p->used = jbd_log_distance(j, start, sc.sc_end_block);
	/* A full log ends back at s_start: everything is in use. */
	if (p->used == 0 && sc.sc_stop == JBD_STOP_LOG_FULL)
		p->used = j->j_last - j->j_first;
	jbd_scan_release(&sc);
	return 0;
}

static int size_plan(const struct jbd_journal *j, const struct jbd_txn_desc *t,
		     struct wplan *p, struct jbd_err *err)
{
	size_t dcap = jbd_desc_capacity(&j->j_fmt), rcap = jbd_revoke_capacity(&j->j_fmt);
	uint32_t logsz = j->j_last - j->j_first;

	p->nrev_blocks = (t->nrevokes + rcap - 1) / rcap;
	p->ndesc = (t->nblocks + dcap - 1) / dcap;
	p->total = p->nrev_blocks + p->ndesc + t->nblocks + 1;
	/* One block stays free so the head never reaches the tail. */
	if (p->used >= logsz || p->total > (size_t)(logsz - p->used - 1))
		return jbd_err_set(err, -ENOSPC,
				   "a transaction of %zu log blocks does not fit: %u of %u log blocks free",
				   p->total, p->used < logsz ? logsz - p->used - 1 : 0, logsz);
	return 0;
}

/* The offline writer's sink: the builder's blocks go straight to the
 * journal device (durable at the flushes of jbd_write_txn). */
struct wsink {
	struct jbd_log_sink ws_sink;
	const struct jbd_journal *ws_jnl;
	struct jbd_err *ws_err;
};

static int wsink_put(struct jbd_log_sink *s, uint32_t blk, void *block)
{
	struct wsink *w = (struct wsink *)s;
	int rc = jbd_journal_write(w->ws_jnl, blk, block);

	if (rc)
		return jbd_err_set(w->ws_err, rc, "cannot write journal block %u: %s", blk,
				   strerror(-rc));
	return 0;
}

static int write_revokes(struct jbd_lb *lb, const struct jbd_txn_desc *t, uint8_t *buf)
{
	size_t cap = jbd_revoke_capacity(&lb->lb_jnl->j_fmt);
	int rc = 0;

	for (size_t i = 0; i < t->nrevokes && !rc; i += cap) {
		size_t n = t->nrevokes - i < cap ? t->nrevokes - i : cap;
		rc = jbd_lb_revoke(lb, buf, t->revokes + i, n);
	}
	return rc;
}

/* One descriptor and its n data blocks. The caller's blocks are const and
 * one scratch block is all there is: each is copied and prepared once for
 * its tag (the descriptor goes first) and again to be written. */
static int write_chunk(struct jbd_lb *lb, const struct jbd_write_block *wb, size_t n,
		       uint8_t *desc, uint8_t *data, struct jbd_tag *tags)
{
	size_t bs = lb->lb_jnl->j_fmt.f_blocksize;
	struct jbd_tag again;
	int rc;

	for (size_t i = 0; i < n; i++) {
		memcpy(data, wb[i].data, bs);
		tags[i] = (struct jbd_tag){ wb[i].target, 0, 0 };
		jbd_lb_data_prep(lb, data, &tags[i]);
	}
	rc = jbd_lb_desc(lb, desc, tags, n);
	for (size_t i = 0; i < n && !rc; i++) {
		memcpy(data, wb[i].data, bs);
		again = (struct jbd_tag){ wb[i].target, 0, 0 };
		jbd_lb_data_prep(lb, data, &again);
		ASSERT(again.t_flags == tags[i].t_flags && again.t_csum == tags[i].t_csum);
		rc = jbd_lb_data(lb, data);
	}
	return rc;
}

static int write_body(struct jbd_lb *lb, const struct jbd_txn_desc *t, struct jbd_err *err)
{
	size_t cap = jbd_desc_capacity(&lb->lb_jnl->j_fmt), bs = lb->lb_jnl->j_fmt.f_blocksize;
	uint8_t *desc = malloc(bs), *data = malloc(bs);
	struct jbd_tag *tags = malloc(cap * sizeof(*tags));
	int rc = -ENOMEM;

	if (!desc || !data || !tags) {
		jbd_err_set(err, rc, "out of memory");
		goto out;
	}
	rc = write_revokes(lb, t, desc);
	for (size_t i = 0; i < t->nblocks && !rc; i += cap) {
		size_t n = t->nblocks - i < cap ? t->nblocks - i : cap;
		rc = write_chunk(lb, t->blocks + i, n, desc, data, tags);
	}
out:
	free(desc);
	free(data);
	free(tags);
	return rc;
}

static int flush_journal(const struct jbd_journal *j, struct jbd_err *err)
{
	int rc = dev_flush(j->j_loc.j_dev);

	if (rc)
		jbd_err_set(err, rc, "cannot flush the journal device: %s", strerror(-rc));
	return rc;
}

static int write_commit(const struct jbd_journal *j, struct jbd_lb *lb,
			const struct jbd_txn_desc *t, struct jbd_err *err)
{
	uint8_t *buf = malloc(j->j_fmt.f_blocksize);
	int rc;

	if (!buf)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	rc = jbd_lb_commit(lb, buf, t->commit_sec, t->commit_nsec);
	if (!rc)
		rc = flush_journal(j, err);
	free(buf);
	return rc;
}

/* The superblock changes the transaction needs: s_start and s_sequence
 * for an empty journal, the REVOKE feature for revokes. */
static int update_sb(struct jbd_journal *j, const struct jbd_txn_desc *t,
		     const struct wplan *p, struct jbd_err *err)
{
	struct jbd2_sb *sb = &j->j_sb;
	bool need_revoke = t->nrevokes && !jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_REVOKE);

	if (!p->empty && !need_revoke)
		return 0;
	if (need_revoke)
		jbd_put_be32(&sb->s_feature_incompat,
			     jbd_sb_incompat(sb) | JBD2_FEATURE_INCOMPAT_REVOKE);
	if (p->empty) {
		jbd_put_be32(&sb->s_start, p->start);
		jbd_put_be32(&sb->s_sequence, p->tid);
	}
	return jbd_journal_write_sb(j, err);
}

static int check_writable(const struct jbd_journal *j, const struct jbd_txn_desc *t,
			  struct jbd_err *err)
{
	const struct jbd2_sb *sb = &j->j_sb;

	if (jbd_sb_has_incompat(sb, JBD2_FEATURE_INCOMPAT_FAST_COMMIT))
		return jbd_err_set(err, -EOPNOTSUPP, "fast-commit journals are not supported");
	if (jbd_sb_ro_compat(sb) & ~JBD2_KNOWN_ROCOMPAT_FEATURES)
		return jbd_err_set(err, -EOPNOTSUPP,
				   "unknown read-only compatible features 0x%x",
				   jbd_sb_ro_compat(sb));
	if (!jbd_sb_is_v2(sb) && t->nrevokes)
		return jbd_err_set(err, -EOPNOTSUPP,
				   "a v1 superblock cannot carry the revoke feature");
	if (t->nblocks + t->nrevokes == 0)
		return jbd_err_set(err, -EINVAL, "an empty transaction");
	return check_targets(j, t, err);
}

int jbd_write_txn(struct jbd_journal *j, const struct jbd_txn_desc *t,
		  struct jbd_write_result *r, struct jbd_err *err)
{
	struct wsink sink = { { wsink_put }, j, err };
	struct jbd_lb lb;
	struct wplan p;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	rc = check_writable(j, t, err);
	if (!rc)
		rc = place(j, &p, err);
	if (!rc)
		rc = size_plan(j, t, &p, err);
	if (!rc && t->before_write)
		rc = t->before_write(t->before_write_arg, err);
	if (!rc)
		rc = update_sb(j, t, &p, err);
	if (rc)
		return rc;
	jbd_lb_begin(&lb, j, &sink.ws_sink, p.tid, p.start);
	rc = write_body(&lb, t, err);
	if (!rc)
		rc = flush_journal(j, err);
	r->commit_block = lb.lb_blk;
	if (!rc)
		rc = write_commit(j, &lb, t, err);
	if (rc)
		return rc;
	r->tid = p.tid;
	r->start_block = p.start;
	r->log_blocks = (uint32_t)p.total;
	ASSERT(lb.lb_nput == p.total);
	ASSERT(jbd_log_distance(j, p.start, lb.lb_blk) == p.total % (j->j_last - j->j_first));
	return 0;
}

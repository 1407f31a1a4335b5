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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

/* Write the next log block at *blk and advance it. */
static int put(const struct jbd_journal *j, uint32_t *blk, const void *buf,
	       struct jbd_err *err)
{
	int rc = jbd_journal_write(j, *blk, buf);

	if (rc)
		return jbd_err_set(err, rc, "cannot write journal block %u: %s", *blk,
				   strerror(-rc));
	*blk = jbd_log_next(j, *blk);
	return 0;
}

static int write_revokes(const struct jbd_journal *j, const struct jbd_txn_desc *t,
			 uint32_t tid, uint32_t *blk, uint8_t *buf, struct jbd_err *err)
{
	size_t cap = jbd_revoke_capacity(&j->j_fmt);

	for (size_t i = 0; i < t->nrevokes; i += cap) {
		size_t n = t->nrevokes - i < cap ? t->nrevokes - i : cap;
		jbd_revoke_encode(&j->j_fmt, buf, tid, t->revokes + i, n);
		ASSERT(jbd_logblock_check(&j->j_fmt, buf, tid, JBD_LB_BUILT, NULL) == 0);
		int rc = put(j, blk, buf, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* One descriptor and its n data blocks (escaped copies); folds them into
 * the COMPAT_CHECKSUM crc. */
static int write_chunk(const struct jbd_journal *j, const struct jbd_write_block *wb,
		       size_t n, uint32_t tid, uint32_t *blk, uint8_t *desc, uint8_t *data,
		       struct jbd_tag *tags, uint32_t *v1_crc, struct jbd_err *err)
{
	const struct jbd_fmt *f = &j->j_fmt;
	uint32_t at = *blk;
	int rc;

	/* Data first (after the descriptor's slot), so tag checksums are known. */
	*blk = jbd_log_next(j, *blk);
	for (size_t i = 0; i < n; i++) {
		memcpy(data, wb[i].data, f->f_blocksize);
		tags[i] = (struct jbd_tag){ wb[i].target, 0, 0 };
		if (jbd_block_needs_escape(data)) {
			jbd_escape(data);
			tags[i].t_flags = JBD2_FLAG_ESCAPE;
		}
		tags[i].t_csum = f->f_csum_v23 ? jbd_tag_csum(f, tid, data) : 0;
		if (f->f_csum_v23 && !f->f_v3)
			tags[i].t_csum &= 0xFFFF;
		rc = put(j, blk, data, err);
		if (rc)
			return rc;
	}
	jbd_desc_encode(f, desc, tid, tags, n, j->j_sb.s_uuid);
	ASSERT(jbd_logblock_check(f, desc, tid, JBD_LB_BUILT, NULL) == 0);
	if (f->f_csum_v1) {
		/* Log order: the descriptor, then its data blocks. */
		*v1_crc = jbd_crc32_be(*v1_crc, desc, f->f_blocksize);
		for (size_t i = 0; i < n; i++) {
			memcpy(data, wb[i].data, f->f_blocksize);
			if (tags[i].t_flags & JBD2_FLAG_ESCAPE)
				jbd_escape(data);
			*v1_crc = jbd_crc32_be(*v1_crc, data, f->f_blocksize);
		}
	}
	return put(j, &at, desc, err);
}

static int write_body(const struct jbd_journal *j, const struct jbd_txn_desc *t,
		      const struct wplan *p, uint32_t *blk, uint32_t *v1_crc,
		      struct jbd_err *err)
{
	size_t cap = jbd_desc_capacity(&j->j_fmt), bs = j->j_fmt.f_blocksize;
	uint8_t *desc = malloc(bs), *data = malloc(bs);
	struct jbd_tag *tags = malloc(cap * sizeof(*tags));
	int rc = -ENOMEM;

	if (!desc || !data || !tags) {
		jbd_err_set(err, rc, "out of memory");
		goto out;
	}
	rc = write_revokes(j, t, p->tid, blk, desc, err);
	for (size_t i = 0; i < t->nblocks && !rc; i += cap) {
		size_t n = t->nblocks - i < cap ? t->nblocks - i : cap;
		rc = write_chunk(j, t->blocks + i, n, p->tid, blk, desc, data, tags, v1_crc, err);
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

static int write_commit(const struct jbd_journal *j, const struct jbd_txn_desc *t,
			uint32_t tid, uint32_t *blk, uint32_t v1_crc, struct jbd_err *err)
{
	uint8_t *buf = malloc(j->j_fmt.f_blocksize);
	int rc;

	if (!buf)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	jbd_commit_encode(&j->j_fmt, buf, tid, t->commit_sec, t->commit_nsec, v1_crc);
	ASSERT(jbd_logblock_check(&j->j_fmt, buf, tid, JBD_LB_BUILT, NULL) == 0);
	rc = put(j, blk, buf, err);
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
	struct wplan p;
	uint32_t blk, v1_crc = 0xFFFFFFFFu;
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
	blk = p.start;
	rc = write_body(j, t, &p, &blk, &v1_crc, err);
	if (!rc)
		rc = flush_journal(j, err);
	r->commit_block = blk;
	if (!rc)
		rc = write_commit(j, t, p.tid, &blk, v1_crc, err);
	if (rc)
		return rc;
	r->tid = p.tid;
	r->start_block = p.start;
	r->log_blocks = (uint32_t)p.total;
	ASSERT(jbd_log_distance(j, p.start, blk) == p.total % (j->j_last - j->j_first));
	return 0;
}

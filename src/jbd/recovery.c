/*
 * recovery.c: replay a journal onto its data device.
 *
 * The kernel's three passes (scan, revoke, replay) run here as: one scan
 * (scan.c) that reads and checks every block of the log; a revoke table
 * built from the transactions the scan found committed; a validation of
 * every tag that would be replayed; and only then the replay. The point of
 * this order is that a corrupt journal is refused before the data device is
 * touched: a bad transaction 2 never leaves transaction 1 half replayed.
 *
 * The I/O order that makes a crash at any point safe: replayed blocks, flush
 * of the data device, then the superblock (s_start = 0), flush. Replay is
 * idempotent, so a crash before the superblock write just replays again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/base.h"

/* One revoke record: do not replay block from tids <= tid. */
struct revoke_ent {
	uint64_t block;
	uint32_t tid;
};

struct revoke_table {
	struct revoke_ent *e;
	size_t n;
};

static int revoke_cmp(const void *a, const void *b)
{
	const struct revoke_ent *x = a, *y = b;

	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return 0;
}

/* Gather the records of the replayed transactions; keep the newest tid
 * (wrap-safe) per block. */
static int revoke_build(const struct jbd_scan *sc, struct revoke_table *rt,
			uint64_t *nrecords)
{
	size_t total = 0, k = 0;

	*nrecords = 0;
	for (size_t i = 0; i < sc->sc_ntrans; i++)
		if (sc->sc_trans[i].replay)
			total += sc->sc_trans[i].nrevoked;
	rt->n = 0;
	rt->e = malloc((total ? total : 1) * sizeof(*rt->e));
	if (!rt->e)
		return -ENOMEM;
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		if (!t->replay)
			continue;
		for (size_t r = 0; r < t->nrevoked; r++)
			rt->e[k++] = (struct revoke_ent){ t->revoked[r], t->tid };
	}
	*nrecords = total;
	qsort(rt->e, k, sizeof(*rt->e), revoke_cmp);
	for (size_t i = 0; i < k; i++) {
		if (rt->n && rt->e[rt->n - 1].block == rt->e[i].block) {
			if (jbd_tid_gt(rt->e[i].tid, rt->e[rt->n - 1].tid))
				rt->e[rt->n - 1].tid = rt->e[i].tid;
			continue;
		}
		rt->e[rt->n++] = rt->e[i];
	}
	return 0;
}

/* Whether the copy of block in transaction tid is revoked. */
static bool revoked(const struct revoke_table *rt, uint64_t block, uint32_t tid)
{
	struct revoke_ent key = { block, 0 };
	const struct revoke_ent *e = bsearch(&key, rt->e, rt->n, sizeof(*rt->e), revoke_cmp);

	return e && jbd_tid_geq(e->tid, tid);
}

/* Whether data block target (of the data device) lies on a journal block. */
static bool on_journal(const struct jbd_loc *loc, uint64_t target)
{
	uint64_t lo = target * loc->j_blocksize, hi = lo + loc->j_blocksize;

	if (loc->j_data != loc->j_dev)
		return false;
	for (size_t i = 0; i < loc->j_nmap; i++) {
		uint64_t a = loc->j_map[i].pblk * loc->j_blocksize;
		uint64_t b = a + loc->j_map[i].len * loc->j_blocksize;
		if (lo < b && a < hi)
			return true;
	}
	return false;
}

/* Every tag of every replayed transaction must name a block of the data
 * device that is not part of the journal. */
static int validate_tags(const struct jbd_journal *j, const struct jbd_scan *sc,
			 struct jbd_err *err)
{
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		if (!t->replay)
			continue;
		for (size_t k = 0; k < t->ntags; k++) {
			uint64_t b = t->tags[k].target;
			if (b >= j->j_loc.j_data_blocks)
				return jbd_err_set(err, -EUCLEAN,
						   "transaction %u: tag at journal block %u names block %llu beyond the data device (%llu blocks)",
						   t->tid, t->tags[k].journal_block,
						   (unsigned long long)b,
						   (unsigned long long)j->j_loc.j_data_blocks);
			if (on_journal(&j->j_loc, b))
				return jbd_err_set(err, -EUCLEAN,
						   "transaction %u: tag at journal block %u names block %llu inside the journal",
						   t->tid, t->tags[k].journal_block,
						   (unsigned long long)b);
		}
	}
	return 0;
}

/*
 * With ASYNC_COMMIT a commit block is written together with its log blocks
 * and one flush covers them all, so after a crash a transaction can have a
 * valid commit block while some of its blocks never reached the disk; only
 * their checksums tell. Replaying the good blocks of such a transaction (as
 * e2fsck does for a bad checksum in an ordinary journal) would break its
 * atomicity, so the replay ends before the first transaction that has a
 * non-revoked block with a bad checksum: that transaction and the ones after
 * it were never acknowledged (a commit is acknowledged only after its flush).
 * Returns how many transactions were cut (0: nothing to do).
 */
static size_t cut_torn_async(const struct jbd_journal *j, struct jbd_scan *sc,
			     const struct revoke_table *rt)
{
	size_t cut = 0;

	if (!j->j_fmt.f_async || !j->j_fmt.f_csum_v23)
		return 0;
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		struct jbd_scan_trans *t = &sc->sc_trans[i];
		bool torn = false;

		if (!t->replay)
			continue;
		for (size_t k = 0; k < t->ntags && !torn && !cut; k++)
			torn = t->tags[k].csum == JBD_CSUM_BAD &&
			       !revoked(rt, t->tags[k].target, t->tid);
		if (torn && !cut) {
			sc->sc_end_tid = t->tid;
			sc->sc_end_block = t->start_block;
		}
		if (torn || cut) {
			t->replay = false;
			cut++;
		}
	}
	return cut;
}

/* Decide, for every tag, replay / revoked / bad checksum; count. */
static void plan(const struct jbd_scan *sc, const struct revoke_table *rt,
		 struct jbd_recover_result *r)
{
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		if (!t->replay)
			continue;
		if (!r->replayed_transactions)
			r->first_tid = t->tid;
		r->replayed_transactions++;
		for (size_t k = 0; k < t->ntags; k++) {
			if (revoked(rt, t->tags[k].target, t->tid))
				r->revoked_blocks++;
			else if (t->tags[k].csum == JBD_CSUM_BAD)
				r->bad_csum_blocks++;
			else
				r->replayed_blocks++;
		}
	}
}

/* Copy one logged block to its home, checking it again after the read. */
static int replay_one(const struct jbd_journal *j, const struct jbd_scan_trans *t,
		      const struct jbd_scan_tag *tag, uint8_t *buf, struct jbd_err *err)
{
	struct jbd_tag dt = { tag->target, tag->flags, tag->csum_stored };
	uint32_t bs = j->j_loc.j_blocksize;
	int rc = jbd_journal_read(j, tag->journal_block, buf);

	if (rc)
		return jbd_err_set(err, rc, "cannot read journal block %u: %s",
				   tag->journal_block, strerror(-rc));
	/* Pair check: the block verified during the scan; it must still. */
	if (!jbd_tag_csum_verify(&j->j_fmt, t->tid, &dt, buf))
		return jbd_err_set(err, -EIO, "journal block %u changed since it was checked",
				   tag->journal_block);
	if (tag->flags & JBD2_FLAG_ESCAPE)
		jbd_unescape(buf);
	rc = dev_pwrite(j->j_loc.j_data, buf, bs, tag->target * bs, 0);
	if (rc)
		return jbd_err_set(err, rc, "cannot write data block %llu: %s",
				   (unsigned long long)tag->target, strerror(-rc));
	return 0;
}

static int replay(const struct jbd_journal *j, const struct jbd_scan *sc,
		  const struct revoke_table *rt, struct jbd_err *err)
{
	uint8_t *buf = malloc(j->j_loc.j_blocksize);
	int rc = 0;

	if (!buf)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < sc->sc_ntrans && !rc; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		if (!t->replay)
			continue;
		for (size_t k = 0; k < t->ntags && !rc; k++) {
			const struct jbd_scan_tag *tag = &t->tags[k];
			if (revoked(rt, tag->target, t->tid) || tag->csum == JBD_CSUM_BAD)
				continue;
			rc = replay_one(j, t, tag, buf, err);
		}
	}
	if (!rc) {
		rc = dev_flush(j->j_loc.j_data);
		if (rc)
			jbd_err_set(err, rc, "cannot flush the data device: %s", strerror(-rc));
	}
	free(buf);
	return rc;
}

/* Mark the journal empty, as e2fsck does: next tid = end + 1. */
static int mark_empty(struct jbd_journal *j, const struct jbd_recover_result *r,
		      struct jbd_err *err)
{
	struct jbd2_sb *sb = &j->j_sb;

	jbd_put_be32(&sb->s_start, 0);
	jbd_put_be32(&sb->s_sequence, r->next_tid);
	if (jbd_sb_is_v2(sb))
		jbd_put_be32(&sb->s_head, r->head_block);
	if (r->bad_csum_blocks)
		jbd_put_be32(&sb->s_errno, (uint32_t)-EIO);
	return jbd_journal_write_sb(j, err);
}

static int check_replayable(const struct jbd_journal *j, struct jbd_err *err)
{
	if (jbd_sb_has_incompat(&j->j_sb, JBD2_FEATURE_INCOMPAT_FAST_COMMIT))
		return jbd_err_set(err, -EOPNOTSUPP,
				   "fast-commit journals are not supported (replaying them needs the file system)");
	if (!j->j_loc.j_data)
		return jbd_err_set(err, -EINVAL, "no data device to replay onto");
	return 0;
}

int jbd_recover(struct jbd_journal *j, const struct jbd_recover_opts *o,
		struct jbd_recover_result *r, struct jbd_err *err)
{
	struct revoke_table rt = { 0 };
	struct jbd_scan sc;
	int rc;

	memset(r, 0, sizeof(*r));
	if (jbd_get_be32(j->j_sb.s_start) == 0) {
		r->nothing_to_do = true;
		r->next_tid = jbd_get_be32(j->j_sb.s_sequence);
		return 0;
	}
	rc = check_replayable(j, err);
	if (rc)
		return rc;
	rc = jbd_scan_log(j, &sc, err);
	if (!rc)
		rc = validate_tags(j, &sc, err);
	if (!rc && (rc = revoke_build(&sc, &rt, &r->revoke_records)))
		jbd_err_set(err, rc, "out of memory");
	/* each cut shrinks the replayed set, whose revokes may have hidden a
	 * bad block of an earlier transaction: repeat until nothing is cut */
	while (!rc) {
		size_t cut = cut_torn_async(j, &sc, &rt);

		if (!cut)
			break;
		r->torn_transactions += cut;
		free(rt.e);
		rt.e = NULL;
		if ((rc = revoke_build(&sc, &rt, &r->revoke_records)))
			jbd_err_set(err, rc, "out of memory");
	}
	if (rc)
		goto out;
	plan(&sc, &rt, r);
	r->end_tid = sc.sc_end_tid;
	r->next_tid = sc.sc_end_tid + 1;
	r->head_block = sc.sc_end_block;
	if (!r->replayed_transactions)
		r->first_tid = sc.sc_end_tid;
	if (!(o && o->dry_run)) {
		rc = replay(j, &sc, &rt, err);
		if (!rc)
			rc = mark_empty(j, r, err);
	}
	if (!rc && r->bad_csum_blocks)
		rc = jbd_err_set(err, -EBADMSG,
				 "%llu journaled blocks had bad checksums and were not replayed (%llu others were)",
				 (unsigned long long)r->bad_csum_blocks,
				 (unsigned long long)r->replayed_blocks);
out:
	free(rt.e);
	jbd_scan_release(&sc);
	return rc;
}

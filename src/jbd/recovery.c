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
 * The replay writes each block once: its last copy that is neither revoked
 * nor bad, which is what writing every copy in log order (e2fsck, the
 * kernel) leaves behind. The scan read the log once, ahead of itself, and
 * kept it in memory (logread.c); replay.c writes from there in block order,
 * many writes in flight. A journal rewriting the same 2000 blocks 15 times
 * costs 2000 writes, not 30,000.
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
	ASSERT(k == total);
	*nrecords = total;
	qsort(rt->e, k, sizeof(*rt->e), revoke_cmp);
	for (size_t i = 0; i < k; i++) {
		ASSERT(!rt->n || rt->e[rt->n - 1].block <= rt->e[i].block); /* sorted */
		if (rt->n && rt->e[rt->n - 1].block == rt->e[i].block) {
			if (jbd_tid_gt(rt->e[i].tid, rt->e[rt->n - 1].tid))
				rt->e[rt->n - 1].tid = rt->e[i].tid;
			continue;
		}
		rt->e[rt->n++] = rt->e[i];
	}
	ASSERT(rt->n <= k);
	return 0;
}

/* Whether the copy of block in transaction tid is revoked. */
static bool revoked(const struct revoke_table *rt, uint64_t block, uint32_t tid)
{
	struct revoke_ent key = { block, 0 };
	const struct revoke_ent *e;

	ASSERT(rt->e || rt->n == 0);
	e = bsearch(&key, rt->e, rt->n, sizeof(*rt->e), revoke_cmp);

	return e && jbd_tid_geq(e->tid, tid);
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
			if (jbd_loc_on_journal(&j->j_loc, b))
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
	ASSERT(cut <= sc->sc_ntrans);
	/* a cut is a suffix: nothing after the first cut replays */
	ASSERT(!cut || !sc->sc_trans[sc->sc_ntrans - 1].replay);
	return cut;
}

/* Decide, for every tag, replay / revoked / bad checksum; count. */
static void plan(const struct jbd_scan *sc, const struct revoke_table *rt,
		 struct jbd_recover_result *r)
{
	uint64_t tags = 0;

	ASSERT(!r->replayed_transactions && !r->replayed_blocks && !r->revoked_blocks);
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		if (!t->replay)
			continue;
		if (!r->replayed_transactions)
			r->first_tid = t->tid;
		r->replayed_transactions++;
		tags += t->ntags;
		for (size_t k = 0; k < t->ntags; k++) {
			if (revoked(rt, t->tags[k].target, t->tid))
				r->revoked_blocks++;
			else if (t->tags[k].csum == JBD_CSUM_BAD)
				r->bad_csum_blocks++;
			else
				r->replayed_blocks++;
		}
	}
	/* every tag of a replayed transaction is counted once */
	ASSERT(r->replayed_blocks + r->revoked_blocks + r->bad_csum_blocks == tags);
}

static int home_cmp(const void *a, const void *b)
{
	const struct jbd_home *x = a, *y = b;

	if (x->h_target != y->h_target)
		return x->h_target < y->h_target ? -1 : 1;
	return x->h_order < y->h_order ? -1 : x->h_order > y->h_order;
}

/*
 * The copy of each block that replaying every transaction in order would
 * leave last: of the tags plan() counts as replayed, the last one in the
 * log per target. Sorted by target, each target once. *out NULL when none.
 */
static int homes_build(const struct jbd_scan *sc, const struct revoke_table *rt,
		       struct jbd_home **out, size_t *nout)
{
	struct jbd_home *h;
	size_t n = 0, k = 0;
	uint32_t order = 0;

	for (size_t i = 0; i < sc->sc_ntrans; i++)
		if (sc->sc_trans[i].replay)
			n += sc->sc_trans[i].ntags;
	*out = NULL;
	*nout = 0;
	if (!n)
		return 0;
	h = malloc(n * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		const struct jbd_scan_trans *t = &sc->sc_trans[i];
		for (size_t g = 0; t->replay && g < t->ntags; g++) {
			const struct jbd_scan_tag *tag = &t->tags[g];
			if (revoked(rt, tag->target, t->tid) || tag->csum == JBD_CSUM_BAD)
				continue;
			h[k++] = (struct jbd_home){ tag->target, t->tid, order++, tag };
		}
	}
	ASSERT(k <= n);
	qsort(h, k, sizeof(*h), home_cmp);
	n = 0;
	for (size_t i = 0; i < k; i++) {
		ASSERT(!n || h[n - 1].h_target <= h[i].h_target); /* sorted */
		if (n && h[n - 1].h_target == h[i].h_target)
			n--; /* a later copy of the same block wins */
		h[n++] = h[i];
	}
	ASSERT(n <= k);
	*out = h;
	*nout = n;
	return 0;
}

/* Write each block's last copy home, then flush the data device. */
static int replay(const struct jbd_journal *j, const struct jbd_scan *sc,
		  const struct revoke_table *rt, struct jbd_logread *lr,
		  const struct jbd_recover_opts *o, struct jbd_recover_result *r,
		  struct jbd_err *err)
{
	struct jbd_home *homes;
	size_t n;
	int rc = homes_build(sc, rt, &homes, &n);

	if (rc)
		return jbd_err_set(err, rc, "out of memory");
	/* one write per block plan() counted replayed, at most */
	ASSERT(n <= r->replayed_blocks && (homes || !n));
	r->written_blocks = n;
	rc = jbd_replay_write(j, lr, homes, n, o, err);
	free(homes);
	return rc;
}

/* Mark the journal empty, as e2fsck does: next tid = end + 1. */
static int mark_empty(struct jbd_journal *j, const struct jbd_recover_result *r,
		      struct jbd_err *err)
{
	struct jbd2_sb *sb = &j->j_sb;

	ASSERT(jbd_get_be32(sb->s_start) != 0); /* jbd_recover returned early */
	ASSERT(r->next_tid == r->end_tid + 1);
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

/* The log's bytes recovery keeps in memory for its home writes. */
static uint64_t hold_budget(const struct jbd_journal *j, const struct jbd_recover_opts *o)
{
	if (o && o->dry_run)
		return 0;
	if (o && o->hold_max)
		return o->hold_max;
	ASSERT(j->j_last > j->j_first);
	return (uint64_t)(j->j_last - j->j_first) * j->j_loc.j_blocksize;
}

/* Scan, build the revoke table, cut torn async transactions: everything
 * decided, nothing written. */
static int recover_decide(struct jbd_journal *j, struct jbd_logread *lr, struct jbd_scan *sc,
			  struct revoke_table *rt, struct jbd_recover_result *r,
			  struct jbd_err *err)
{
	int rc = jbd_scan_log_from(j, lr, sc, err);

	if (!rc)
		rc = validate_tags(j, sc, err);
	if (!rc && (rc = revoke_build(sc, rt, &r->revoke_records)))
		jbd_err_set(err, rc, "out of memory");
	/* each cut shrinks the replayed set, whose revokes may have hidden a
	 * bad block of an earlier transaction: repeat until nothing is cut */
	while (!rc) {
		size_t cut = cut_torn_async(j, sc, rt);

		if (!cut)
			break;
		r->torn_transactions += cut;
		free(rt->e);
		rt->e = NULL;
		if ((rc = revoke_build(sc, rt, &r->revoke_records)))
			jbd_err_set(err, rc, "out of memory");
	}
	if (rc)
		return rc;
	ASSERT(r->torn_transactions <= sc->sc_ntrans);
	plan(sc, rt, r);
	ASSERT(r->replayed_transactions + r->torn_transactions <= sc->sc_ntrans);
	r->end_tid = sc->sc_end_tid;
	r->next_tid = sc->sc_end_tid + 1;
	r->head_block = sc->sc_end_block;
	if (!r->replayed_transactions)
		r->first_tid = sc->sc_end_tid;
	r->held_bytes = lr->lr_held;
	r->log_reads = lr->lr_reads;
	return 0;
}

int jbd_recover(struct jbd_journal *j, const struct jbd_recover_opts *o,
		struct jbd_recover_result *r, struct jbd_err *err)
{
	struct revoke_table rt = { 0 };
	struct jbd_logread lr;
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
	rc = jbd_logread_init(&lr, j, hold_budget(j, o));
	if (rc)
		return jbd_err_set(err, rc, "cannot read the log: %s", strerror(-rc));
	rc = recover_decide(j, &lr, &sc, &rt, r, err);
	if (!rc && !(o && o->dry_run)) {
		rc = replay(j, &sc, &rt, &lr, o, r, err);
		if (!rc)
			rc = mark_empty(j, r, err);
	}
	if (!rc && r->bad_csum_blocks)
		rc = jbd_err_set(err, -EBADMSG,
				 "%llu journaled block%s had a bad checksum and %s not replayed (%llu other%s %s)",
				 (unsigned long long)r->bad_csum_blocks, r->bad_csum_blocks == 1 ? "" : "s",
				 r->bad_csum_blocks == 1 ? "was" : "were",
				 (unsigned long long)r->replayed_blocks, r->replayed_blocks == 1 ? "" : "s",
				 r->replayed_blocks == 1 ? "was" : "were");
	free(rt.e);
	jbd_scan_release(&sc);
	jbd_logread_release(&lr);
	return rc;
}

/*
 * scan.c: walk the log from s_start and record what it holds.
 *
 * This is recovery's PASS_SCAN (jbd2's do_one_pass) made to remember everything, so
 * that `ujbd dump`, the writer (to find the end of the log) and recovery
 * (to validate before writing) share one reading of the log. The idea: the
 * log ends at the first block that is not the next expected one; a bad
 * checksum is corruption only when the commit time says the block is not a
 * stale leftover. Every step counts against the log length, so a corrupt
 * log can never make the scan go round forever.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/base.h"

const char *jbd_scan_stop_name(enum jbd_scan_stop s)
{
	switch (s) {
	case JBD_STOP_EMPTY: return "empty";
	case JBD_STOP_NO_MAGIC: return "no_magic";
	case JBD_STOP_SEQUENCE: return "sequence";
	case JBD_STOP_BLOCKTYPE: return "block_type";
	case JBD_STOP_STALE: return "stale";
	case JBD_STOP_LOG_FULL: return "log_full";
	case JBD_STOP_CORRUPT: return "corrupt";
	case JBD_STOP_LOOP: return "loop";
	case JBD_STOP_IO: return "io_error";
	}
	return "?";
}

/* Capacities of the current transaction's arrays, only while scanning. */
struct trans_caps {
	size_t blocks, tags, revoked;
};

/* The scan's running state: PASS_SCAN's variables. */
struct scan_state {
	struct trans_caps caps;
	const struct jbd_journal *j;
	struct jbd_scan *sc;
	struct jbd_err *err;
	struct jbd_logread *lr;
	const uint8_t *buf, *data; /* the last header block, data block read */
	struct jbd_tag *tags;     /* one descriptor's worth */
	uint64_t *recs;           /* one revoke block's worth */
	uint32_t blk;             /* next block to read */
	uint32_t expect;          /* next tid */
	uint32_t visited, limit;  /* blocks read so far, log length */
	bool need_check_time;     /* a bad tail was seen in this transaction */
	bool end_set;             /* end_tid decided by a failed commit */
	uint64_t last_commit_time;
	uint32_t v1_crc;          /* COMPAT_CHECKSUM running crc32_be */
	struct jbd_scan_trans *cur;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 8;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int stop(struct scan_state *s, enum jbd_scan_stop why, uint32_t blk,
		int rc, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int stop(struct scan_state *s, enum jbd_scan_stop why, uint32_t blk,
		int rc, const char *fmt, ...)
{
	va_list ap;

	s->sc->sc_stop = why;
	s->sc->sc_stop_block = blk;
	va_start(ap, fmt);
	vsnprintf(s->sc->sc_stop_msg, sizeof(s->sc->sc_stop_msg), fmt, ap);
	va_end(ap);
	s->sc->sc_error = rc;
	if (rc)
		jbd_err_set(s->err, rc, "%s", s->sc->sc_stop_msg);
	return 1;
}

/* The transaction being read (created at its first block). */
static int cur_trans(struct scan_state *s, uint32_t blk)
{
	struct jbd_scan *sc = s->sc;

	if (s->cur)
		return 0;
	if (grow((void **)&sc->sc_trans, &sc->sc_cap, sc->sc_ntrans + 1, sizeof(*sc->sc_trans)))
		return -ENOMEM;
	s->cur = &sc->sc_trans[sc->sc_ntrans++];
	memset(s->cur, 0, sizeof(*s->cur));
	memset(&s->caps, 0, sizeof(s->caps));
	s->cur->tid = s->expect;
	s->cur->start_block = blk;
	return 0;
}

static int add_block(struct scan_state *s, uint32_t blk, uint32_t type, uint8_t csum,
		     uint32_t count, uint32_t r_count)
{
	struct jbd_scan_trans *t = s->cur;

	if (grow((void **)&t->blocks, &s->caps.blocks, t->nblocks + 1, sizeof(*t->blocks)))
		return -ENOMEM;
	t->blocks[t->nblocks++] = (struct jbd_scan_block){ blk, type, csum, count, r_count };
	return 0;
}

/* Point *buf at the next log block (valid until the next call); 1 = the
 * scan must stop. */
static int next_block(struct scan_state *s, const uint8_t **buf, uint32_t *where)
{
	int rc;

	if (s->visited >= s->limit) {
		if (s->cur)
			return stop(s, JBD_STOP_LOOP, s->blk, -EUCLEAN,
				    "scan would loop: transaction %u runs past the whole log (%u blocks) without a commit block",
				    s->cur->tid, s->limit);
		return stop(s, JBD_STOP_LOG_FULL, s->blk, 0, "the whole log (%u blocks) was read",
			    s->limit);
	}
	*where = s->blk;
	rc = jbd_logread_next(s->lr, s->blk, buf);
	if (rc)
		return stop(s, JBD_STOP_IO, s->blk, rc == -EINVAL ? -EUCLEAN : rc,
			    "cannot read journal block %u: %s", s->blk, strerror(-rc));
	s->blk = jbd_log_next(s->j, s->blk);
	s->visited++;
	return 0;
}

static int scan_descriptor(struct scan_state *s, uint32_t where)
{
	const struct jbd_fmt *f = &s->j->j_fmt;
	/* The read half of the pair jbd_logblock_check makes with the writers;
	 * a failure here may be a stale block, so it is judged at the commit. */
	bool tail_ok = jbd_logblock_check(f, s->buf, s->expect, JBD_LB_READ, NULL) == 0;
	size_t n = jbd_desc_parse(f, s->buf, s->tags, f->f_blocksize / 8);
	struct jbd_scan_trans *t = s->cur;
	int rc;

	if (!tail_ok)
		s->need_check_time = true;
	if (f->f_csum_v1 && !s->need_check_time && !s->end_set)
		s->v1_crc = jbd_crc32_be(s->v1_crc, s->buf, f->f_blocksize);
	rc = add_block(s, where, JBD2_DESCRIPTOR_BLOCK,
		       f->f_csum_v23 ? (tail_ok ? JBD_CSUM_GOOD : JBD_CSUM_BAD) : JBD_CSUM_NONE,
		       (uint32_t)n, 0);
	if (rc)
		return stop(s, JBD_STOP_IO, where, rc, "out of memory");
	for (size_t i = 0; i < n; i++) {
		uint32_t dblk;
		if (next_block(s, &s->data, &dblk))
			return 1;
		if (f->f_csum_v1 && !s->need_check_time && !s->end_set)
			s->v1_crc = jbd_crc32_be(s->v1_crc, s->data, f->f_blocksize);
		if (grow((void **)&t->tags, &s->caps.tags, t->ntags + 1, sizeof(*t->tags)))
			return stop(s, JBD_STOP_IO, where, -ENOMEM, "out of memory");
		uint8_t cs = JBD_CSUM_NONE;
		if (f->f_csum_v23)
			cs = jbd_tag_csum_verify(f, t->tid, &s->tags[i], s->data) ? JBD_CSUM_GOOD
										  : JBD_CSUM_BAD;
		t->tags[t->ntags++] = (struct jbd_scan_tag){ s->tags[i].t_target, dblk,
							     s->tags[i].t_flags, s->tags[i].t_csum,
							     cs };
	}
	return 0;
}

static int scan_revoke(struct scan_state *s, uint32_t where)
{
	const struct jbd_fmt *f = &s->j->j_fmt;
	const struct jbd2_revoke_header *rh = (const void *)s->buf;
	struct jbd_scan_trans *t = s->cur;
	bool tail_ok = jbd_logblock_check(f, s->buf, s->expect, JBD_LB_READ, NULL) == 0;
	int n = jbd_revoke_parse(f, s->buf, s->recs, f->f_blocksize / 4);

	if (!tail_ok)
		s->need_check_time = true;
	if (n < 0) {
		/* Only fatal if the transaction turns out to be committed. */
		t->bad_revoke = true;
		n = 0;
	}
	if (add_block(s, where, JBD2_REVOKE_BLOCK,
		      f->f_csum_v23 ? (tail_ok ? JBD_CSUM_GOOD : JBD_CSUM_BAD) : JBD_CSUM_NONE,
		      (uint32_t)n, jbd_get_be32(rh->r_count)) ||
	    grow((void **)&t->revoked, &s->caps.revoked, t->nrevoked + (size_t)n + 1,
		 sizeof(*t->revoked)))
		return stop(s, JBD_STOP_IO, where, -ENOMEM, "out of memory");
	memcpy(t->revoked + t->nrevoked, s->recs, (size_t)n * sizeof(*s->recs));
	t->nrevoked += (size_t)n;
	return 0;
}

/* Whether the commit block checksum is acceptable; 1 = stop (v1 rule). */
static int commit_csum_ok(struct scan_state *s, uint32_t where, bool *ok, uint8_t *state)
{
	const struct jbd_fmt *f = &s->j->j_fmt;
	struct jbd_commit_info ci;

	jbd_commit_decode(s->buf, &ci);
	*ok = true;
	*state = JBD_CSUM_NONE;
	if (f->f_csum_v1) {
		if (s->end_set)
			return stop(s, JBD_STOP_CORRUPT, where, -EUCLEAN,
				    "transaction %u: commit block %u follows a failed commit (async commit)",
				    s->expect, where);
		bool with = ci.c_type == JBD2_CRC32_CHKSUM &&
			    ci.c_size == JBD2_CRC32_CHKSUM_SIZE && ci.c_chksum0 == s->v1_crc;
		bool without = ci.c_type == 0 && ci.c_size == 0 && ci.c_chksum0 == 0;
		*ok = with || without;
		*state = with ? JBD_CSUM_GOOD : without ? JBD_CSUM_NONE : JBD_CSUM_BAD;
		s->v1_crc = 0xFFFFFFFFu;
	} else if (f->f_csum_v23) {
		*ok = jbd_logblock_check(f, s->buf, s->expect, JBD_LB_READ, NULL) == 0;
		*state = *ok ? JBD_CSUM_GOOD : JBD_CSUM_BAD;
	}
	return 0;
}

/* A committed transaction holds a revoke block whose r_count overruns it. */
static int bad_revoke(struct scan_state *s, const struct jbd_scan_trans *t)
{
	uint32_t room = s->j->j_fmt.f_blocksize - s->j->j_fmt.f_tail_bytes;

	for (size_t i = 0; i < t->nblocks; i++) {
		const struct jbd_scan_block *b = &t->blocks[i];
		if (b->type == JBD2_REVOKE_BLOCK && b->r_count > room)
			return stop(s, JBD_STOP_CORRUPT, b->journal_block, -EUCLEAN,
				    "transaction %u: revoke block %u: r_count %u beyond the block (at most %u)",
				    t->tid, b->journal_block, b->r_count, room);
	}
	ASSERT(!"bad_revoke set without a bad revoke block");
	return stop(s, JBD_STOP_CORRUPT, t->start_block, -EUCLEAN, "transaction %u: bad revoke block",
		    t->tid);
}

static int scan_commit(struct scan_state *s, uint32_t where)
{
	struct jbd_scan_trans *t = s->cur;
	struct jbd_commit_info ci;
	bool ok;

	jbd_commit_decode(s->buf, &ci);
	t->has_commit = true;
	t->commit_block = where;
	t->commit_sec = ci.c_sec;
	t->commit_nsec = ci.c_nsec;
	if (s->need_check_time) {
		t->commit_csum = JBD_CSUM_NONE;
		if (ci.c_sec >= s->last_commit_time)
			return stop(s, JBD_STOP_CORRUPT, where, -EUCLEAN,
				    "transaction %u: bad descriptor or revoke block checksum in a committed transaction",
				    t->tid);
		return stop(s, JBD_STOP_STALE, where, 0,
			    "transaction %u: bad block checksum and an older commit time: stale blocks",
			    t->tid);
	}
	if (commit_csum_ok(s, where, &ok, &t->commit_csum))
		return 1;
	if (!ok) {
		if (ci.c_sec < s->last_commit_time)
			return stop(s, JBD_STOP_STALE, where, 0,
				    "transaction %u: bad commit checksum and an older commit time: stale block",
				    t->tid);
		if (!s->end_set)
			s->sc->sc_end_tid = s->expect;
		s->end_set = true;
		if (!s->j->j_fmt.f_async)
			return stop(s, JBD_STOP_CORRUPT, where, -EUCLEAN,
				    "transaction %u: bad commit block checksum (block %u)", t->tid, where);
	} else {
		t->committed = true;
		if (t->bad_revoke)
			return bad_revoke(s, t);
		if (!s->end_set)
			s->sc->sc_end_block = s->blk;
	}
	s->last_commit_time = ci.c_sec;
	s->expect++;
	s->cur = NULL;
	return 0;
}

/* One block of the log; nonzero = stop. */
static int scan_step(struct scan_state *s)
{
	uint32_t where, type, seq;

	if (next_block(s, &s->buf, &where))
		return 1;
	if (!jbd_hdr_decode(s->buf, &type, &seq))
		return stop(s, JBD_STOP_NO_MAGIC, where, 0, "no magic number at block %u: end of log",
			    where);
	if (seq != s->expect)
		return stop(s, JBD_STOP_SEQUENCE, where, 0,
			    "sequence %u (expected %u) at block %u: end of log", seq, s->expect, where);
	if (type != JBD2_DESCRIPTOR_BLOCK && type != JBD2_REVOKE_BLOCK &&
	    type != JBD2_COMMIT_BLOCK)
		return stop(s, JBD_STOP_BLOCKTYPE, where, 0,
			    "unexpected block type %u at block %u: end of log", type, where);
	if (cur_trans(s, where))
		return stop(s, JBD_STOP_IO, where, -ENOMEM, "out of memory");
	if (type == JBD2_DESCRIPTOR_BLOCK)
		return scan_descriptor(s, where);
	if (type == JBD2_REVOKE_BLOCK)
		return scan_revoke(s, where);
	return scan_commit(s, where);
}

static void scan_init(struct scan_state *s, const struct jbd_journal *j,
		      struct jbd_logread *lr, struct jbd_scan *sc, struct jbd_err *err)
{
	memset(sc, 0, sizeof(*sc));
	memset(s, 0, sizeof(*s));
	s->j = j;
	s->lr = lr;
	s->sc = sc;
	s->err = err;
	s->blk = jbd_get_be32(j->j_sb.s_start);
	s->expect = jbd_get_be32(j->j_sb.s_sequence);
	s->limit = j->j_last - j->j_first;
	s->v1_crc = 0xFFFFFFFFu;
	sc->sc_start_block = s->blk;
	sc->sc_start_tid = s->expect;
	sc->sc_end_block = s->blk;
}

int jbd_scan_log_from(const struct jbd_journal *j, struct jbd_logread *lr, struct jbd_scan *sc,
		      struct jbd_err *err)
{
	struct scan_state s;
	uint32_t bs = j->j_fmt.f_blocksize;

	scan_init(&s, j, lr, sc, err);
	if (s.blk == 0) {
		sc->sc_end_tid = s.expect;
		stop(&s, JBD_STOP_EMPTY, 0, 0, "the journal is empty (s_start = 0)");
		return 0;
	}
	s.tags = malloc(sizeof(*s.tags) * (bs / 8));
	s.recs = malloc(sizeof(*s.recs) * (bs / 4));
	if (!s.tags || !s.recs) {
		stop(&s, JBD_STOP_IO, s.blk, -ENOMEM, "out of memory");
		goto out;
	}
	while (!scan_step(&s))
		;
	if (!s.end_set)
		sc->sc_end_tid = s.expect;
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		struct jbd_scan_trans *t = &sc->sc_trans[i];
		t->replay = t->committed && jbd_tid_gt(sc->sc_end_tid, t->tid);
	}
out:
	free(s.tags);
	free(s.recs);
	return sc->sc_error;
}

int jbd_scan_log(const struct jbd_journal *j, struct jbd_scan *sc, struct jbd_err *err)
{
	struct jbd_logread lr;
	int rc = jbd_logread_init(&lr, j, 0);

	if (rc) {
		memset(sc, 0, sizeof(*sc));
		sc->sc_stop = JBD_STOP_IO;
		sc->sc_error = rc;
		snprintf(sc->sc_stop_msg, sizeof(sc->sc_stop_msg), "cannot read the log: %s",
			 strerror(-rc));
		return jbd_err_set(err, rc, "%s", sc->sc_stop_msg);
	}
	rc = jbd_scan_log_from(j, &lr, sc, err);
	jbd_logread_release(&lr);
	return rc;
}

void jbd_scan_release(struct jbd_scan *sc)
{
	for (size_t i = 0; i < sc->sc_ntrans; i++) {
		free(sc->sc_trans[i].blocks);
		free(sc->sc_trans[i].tags);
		free(sc->sc_trans[i].revoked);
	}
	free(sc->sc_trans);
	memset(sc, 0, sizeof(*sc));
}

/*
 * For the offline log tests (test_log_edges, test_replay): a journal with
 * async commit but no checksums. jbd_format refuses to make one (nothing
 * would catch a torn transaction), but such a journal, another tool's, is
 * still replayed: the feature is set by hand after the format.
 */
#ifndef UJBD_TEST_LOG_ASYNC_H
#define UJBD_TEST_LOG_ASYNC_H

#include "ujbd/jbd_log.h"

/* Whether a format with these options must leave async commit to
 * log_async_by_hand. */
static inline bool log_async_needs_hand(bool async, enum jbd_csum_kind csum)
{
	return async && csum == JBD_CSUM_KIND_NONE;
}

/* Set INCOMPAT_ASYNC_COMMIT in the loaded journal j at loc, write its
 * superblock and load it again. 0 or -errno (err says why). */
static inline int log_async_by_hand(const struct jbd_loc *loc, struct jbd_journal *j,
				    struct jbd_err *err)
{
	int rc;

	jbd_put_be32(&j->j_sb.s_feature_incompat,
		     jbd_sb_incompat(&j->j_sb) | JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT);
	rc = jbd_journal_write_sb(j, err);
	return rc ? rc : jbd_journal_load(loc, j, err);
}

#endif

/*
 * Crash safety in data=ordered (crash_common.h says how): every flush point
 * of a seeded three-thread workload's log, all subsets of the pending
 * writes up to 12 (seeded samples beyond), torn commit blocks; each image,
 * recovered, must be the state after transactions 1..k with k at least the
 * last acknowledged, and the ordered data of those transactions in place.
 */
#include "crash_common.h"

/* checksummed journal (v3) on a RAM disk */
CR_TEST(ordered_csum_v3, .seed = 1, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .ops = 12)
/* no checksums, tids crossing 2^32 */
CR_TEST(ordered_nocsum_tidwrap, .seed = 2, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_NONE, .first_tid = 0xfffffff8u, .ops = 12)
/* a simulated SSD under the recorder: completions out of submission order */
CR_TEST(ordered_v2_ssd, .seed = 3, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 12)
/* fsyncs commit on their own threads (caller_commit), two of them */
CR_TEST(ordered_v3_caller, .seed = 4, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .caller_commit = true, .threads = 2, .ops = 12)

/* ujbd's defaults as they stand (issue 14): small ordered data journaled,
 * async commit, fsyncs committing on their own threads */
CR_TEST(ordered_defaults, .seed = 5, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .defaults = true, .ops = 12)
/* the same with room for only 2 journaled data blocks per transaction:
 * most go over it, write home and revoke blocks an earlier transaction
 * journaled */
CR_TEST(ordered_defaults_2k, .seed = 6, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .defaults = true, .ordered_kib = 2, .ops = 16)
/* jbd2's way (ujbd_opts_jbd2): every ordered block home before the
 * commit block, kjournald commits */
CR_TEST(ordered_jbd2, .seed = 7, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .jbd2 = true, .ops = 12)

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(ordered_csum_v3);
	T_RUN(ordered_nocsum_tidwrap);
	T_RUN(ordered_v2_ssd);
	T_RUN(ordered_v3_caller);
	T_RUN(ordered_defaults);
	T_RUN(ordered_defaults_2k);
	T_RUN(ordered_jbd2);
	return t_done(argv[0]);
}

/*
 * Crash safety in data=journal (crash_common.h says how): data blocks go
 * through the journal, so after any crash they are atomic with the
 * metadata: the recovered image is exactly the state after transactions
 * 1..k, k at least the last acknowledged. With async_commit (commit block
 * written with the log blocks, one flush for all), a torn transaction must
 * be caught by the checksums, never replayed silently.
 */
#include "crash_common.h"

/* v3 checksums and async commit */
CR_TEST(journal_v3_async, .seed = 11, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V3, .async_commit = true, .ops = 48)
/* COMPAT_CHECKSUM (v1) journal, synchronous commits */
CR_TEST(journal_v1, .seed = 12, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V1, .ops = 48)
/* no checksums, a simulated SSD under the recorder, four threads */
CR_TEST(journal_nocsum_ssd, .seed = 13, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_NONE, .sim_ssd = true, .threads = 4, .ops = 32)
/* the fsyncs commit on their own threads (caller_commit), four of them
 * on a simulated SSD, async commit */
CR_TEST(journal_v3_async_caller, .seed = 15, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V3, .async_commit = true, .caller_commit = true,
	.sim_ssd = true, .threads = 3, .ops = 12)

/* Same seed, same run: what makes a (seed, crash point) a reproducer. */
static void journal_deterministic(void)
{
	struct cr_cfg cfg = { .name = "journal_deterministic", .seed = 14,
			      .mode = UJBD_DATA_JOURNAL, .csum = JBD_CSUM_KIND_V3, .ops = 12 };
	struct cr_result r1, r2;
	char msg[256];

	cr_defaults(&cfg);
	T_EQ(cr_run(&cfg, &r1, msg, sizeof(msg)), 0);
	T_EQ(cr_run(&cfg, &r2, msg, sizeof(msg)), 0);
	cr_print(&cfg, &r1);
	T_EQ(r1.failures + r2.failures, 0);
	T_EQ(r1.log_entries, r2.log_entries);
	T_EQ(r1.last_rtid, r2.last_rtid);
	T_EQ(r1.commits_acked, r2.commits_acked);
	T_EQ(r1.points, r2.points);
	T_EQ(r1.images, r2.images);
	T_EQ(r1.unique, r2.unique);
	T_CHECK(r1.images > 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(journal_v3_async);
	T_RUN(journal_v1);
	T_RUN(journal_nocsum_ssd);
	T_RUN(journal_v3_async_caller);
	T_RUN(journal_deterministic);
	return t_done(argv[0]);
}

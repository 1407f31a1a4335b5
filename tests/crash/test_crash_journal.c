/*
 * Crash safety in data=journal (crash_common.h says how): data blocks go
 * through the journal, so after any crash they are atomic with the
 * metadata: the recovered image is exactly the state after transactions
 * 1..k, k at least the last acknowledged. With async_commit (commit block
 * written with the log blocks, one flush for all), a torn transaction must
 * be caught by the checksums, never replayed silently.
 */
#include "crash_common.h"
#include "crash_configs.h"

CR_WORKLOADS_JOURNAL(CR_TEST)

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
	CR_WORKLOADS_JOURNAL(CR_T_RUN)
	T_RUN(journal_deterministic);
	return t_done(argv[0]);
}

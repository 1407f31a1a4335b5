/*
 * Crash safety under the runtime's harder paths (crash_common.h says how
 * the images are built and checked):
 *   - a 64-block journal: handles wait for log space, checkpoints are
 *     forced, the log wraps many times;
 *   - a 24-block buffer cache: clean buffers are evicted and read back;
 *   - the deadline and CFQ elevators reorder writes between flushes;
 *   - async_commit asked for in data=ordered (used only for transactions
 *     whose data all went to the log), wake policy "always", SYNC on every
 *     journal write;
 *   - ujbd's defaults in the 64-block journal.
 */
#include "crash_common.h"

CR_TEST(stress_small_log_ordered, .seed = 41, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .jlen = 64, .ops = 16)
CR_TEST(stress_small_cache_deadline_journal, .seed = 42, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V2, .cache_blocks = 24, .elevator = BLK_ELV_DEADLINE,
	.ops = 32)
CR_TEST(stress_cfq_async_ordered, .seed = 43, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .async_commit = true, .elevator = BLK_ELV_CFQ,
	.wake_always = true, .sync_all = true, .ops = 10)
CR_TEST(stress_small_log_writeback_ssd, .seed = 44, .mode = UJBD_DATA_WRITEBACK,
	.csum = JBD_CSUM_KIND_NONE, .jlen = 64, .cache_blocks = 24, .sim_ssd = true,
	.threads = 4, .ops = 12)
/* ujbd's defaults (issue 14) in the 64-block journal: journaled data takes
 * the transaction's credits and log space, which run short */
CR_TEST(stress_small_log_defaults, .seed = 45, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .jlen = 64, .defaults = true, .ops = 16)

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(stress_small_log_ordered);
	T_RUN(stress_small_cache_deadline_journal);
	T_RUN(stress_cfq_async_ordered);
	T_RUN(stress_small_log_writeback_ssd);
	T_RUN(stress_small_log_defaults);
	return t_done(argv[0]);
}

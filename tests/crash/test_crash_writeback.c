/*
 * Crash safety in data=writeback (crash_common.h says how): metadata is
 * atomic and at least as new as the last acknowledged transaction; data
 * blocks may hold any version written (writeback gives up their ordering),
 * but never garbage, and a revoked block's stale journaled copy is never
 * replayed over metadata journaled after it.
 */
#include "crash_common.h"

CR_TEST(writeback_v2, .seed = 21, .mode = UJBD_DATA_WRITEBACK,
	.csum = JBD_CSUM_KIND_V2, .ops = 14)
CR_TEST(writeback_v3_ssd, .seed = 22, .mode = UJBD_DATA_WRITEBACK,
	.csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 18)

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(writeback_v2);
	T_RUN(writeback_v3_ssd);
	return t_done(argv[0]);
}

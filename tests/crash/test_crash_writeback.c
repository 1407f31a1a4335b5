/*
 * Crash safety in data=writeback (crash_common.h says how): metadata is
 * atomic and at least as new as the last acknowledged transaction; data
 * blocks may hold any version written (writeback gives up their ordering),
 * but never garbage, and a revoked block's stale journaled copy is never
 * replayed over metadata journaled after it.
 */
#include "crash_common.h"
#include "crash_configs.h"

CR_WORKLOADS_WRITEBACK(CR_TEST)

int main(int argc, char **argv)
{
	(void)argc;
	CR_WORKLOADS_WRITEBACK(CR_T_RUN)
	return t_done(argv[0]);
}

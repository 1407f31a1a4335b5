/*
 * Crash safety in data=ordered (crash_common.h says how): every flush point
 * of a seeded three-thread workload's log, all subsets of the pending
 * writes up to 12 (seeded samples beyond), torn commit blocks; each image,
 * recovered, must be the state after transactions 1..k with k at least the
 * last acknowledged, and the ordered data of those transactions in place.
 */
#include "crash_common.h"
#include "crash_configs.h"

CR_WORKLOADS_ORDERED(CR_TEST)

int main(int argc, char **argv)
{
	(void)argc;
	CR_WORKLOADS_ORDERED(CR_T_RUN)
	return t_done(argv[0]);
}

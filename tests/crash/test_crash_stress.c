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
#include "crash_configs.h"

CR_WORKLOADS_STRESS(CR_TEST)

int main(int argc, char **argv)
{
	(void)argc;
	CR_WORKLOADS_STRESS(CR_T_RUN)
	return t_done(argv[0]);
}

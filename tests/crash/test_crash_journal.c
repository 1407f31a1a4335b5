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

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(journal_v3_async);
	T_RUN(journal_v1);
	T_RUN(journal_nocsum_ssd);
	return t_done(argv[0]);
}

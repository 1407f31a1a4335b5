/*
 * The crash suite's workloads (crash_common.h), one list per program: each
 * entry is X(name, the struct cr_cfg fields) (the two-device list adds the
 * data SSD's page program time: X(name, program_us, fields)). Each program
 * runs its list; test_crash_faults runs every list again under injected
 * I/O errors.
 * Checklist: a new workload goes into a list here, so the sweep runs it too.
 */
#ifndef UJBD_TESTS_CRASH_CONFIGS_H
#define UJBD_TESTS_CRASH_CONFIGS_H

/* test_crash_ordered: data=ordered */
#define CR_WORKLOADS_ORDERED(X)                                                  \
	/* checksummed journal (v3) on a RAM disk */                              \
	X(ordered_csum_v3, .seed = 1, .mode = UJBD_DATA_ORDERED,                 \
	  .csum = JBD_CSUM_KIND_V3, .ops = 12)                                   \
	/* no checksums, tids crossing 2^32 */                                    \
	X(ordered_nocsum_tidwrap, .seed = 2, .mode = UJBD_DATA_ORDERED,          \
	  .csum = JBD_CSUM_KIND_NONE, .first_tid = 0xfffffff8u, .ops = 12)       \
	/* a simulated SSD under the recorder: completions out of submission     \
	 * order */                                                               \
	X(ordered_v2_ssd, .seed = 3, .mode = UJBD_DATA_ORDERED,                  \
	  .csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 12)                  \
	/* fsyncs commit on their own threads (caller_commit), two of them */    \
	X(ordered_v3_caller, .seed = 4, .mode = UJBD_DATA_ORDERED,               \
	  .csum = JBD_CSUM_KIND_V3, .caller_commit = true, .threads = 2, .ops = 12) \
	/* ujbd's defaults as they stand (issue 14): small ordered data          \
	 * journaled, async commit, fsyncs committing on their own threads */   \
	X(ordered_defaults, .seed = 5, .mode = UJBD_DATA_ORDERED,                \
	  .csum = JBD_CSUM_KIND_V3, .defaults = true, .ops = 12)                 \
	/* the same with room for only 2 journaled data blocks per transaction: \
	 * most go over it, write home and revoke blocks an earlier transaction \
	 * journaled */                                                           \
	X(ordered_defaults_2k, .seed = 6, .mode = UJBD_DATA_ORDERED,             \
	  .csum = JBD_CSUM_KIND_V3, .defaults = true, .ordered_kib = 2, .ops = 16) \
	/* jbd2's way (ujbd_opts_jbd2): every ordered block home before the     \
	 * commit block, kjournald commits */                                     \
	X(ordered_jbd2, .seed = 7, .mode = UJBD_DATA_ORDERED,                    \
	  .csum = JBD_CSUM_KIND_V3, .jbd2 = true, .ops = 12)

/* test_crash_journal: data=journal */
#define CR_WORKLOADS_JOURNAL(X)                                                  \
	/* v3 checksums and async commit */                                       \
	X(journal_v3_async, .seed = 11, .mode = UJBD_DATA_JOURNAL,               \
	  .csum = JBD_CSUM_KIND_V3, .async_commit = true, .ops = 48)             \
	/* COMPAT_CHECKSUM (v1) journal, synchronous commits */                   \
	X(journal_v1, .seed = 12, .mode = UJBD_DATA_JOURNAL,                     \
	  .csum = JBD_CSUM_KIND_V1, .ops = 48)                                   \
	/* no checksums, a simulated SSD under the recorder, four threads */      \
	X(journal_nocsum_ssd, .seed = 13, .mode = UJBD_DATA_JOURNAL,             \
	  .csum = JBD_CSUM_KIND_NONE, .sim_ssd = true, .threads = 4, .ops = 32)  \
	/* the fsyncs commit on their own threads (caller_commit), three of     \
	 * them on a simulated SSD, async commit */                               \
	X(journal_v3_async_caller, .seed = 15, .mode = UJBD_DATA_JOURNAL,        \
	  .csum = JBD_CSUM_KIND_V3, .async_commit = true, .caller_commit = true, \
	  .sim_ssd = true, .threads = 3, .ops = 12)

/* test_crash_writeback: data=writeback */
#define CR_WORKLOADS_WRITEBACK(X)                                                \
	X(writeback_v2, .seed = 21, .mode = UJBD_DATA_WRITEBACK,                 \
	  .csum = JBD_CSUM_KIND_V2, .ops = 14)                                   \
	X(writeback_v3_ssd, .seed = 22, .mode = UJBD_DATA_WRITEBACK,             \
	  .csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 18)

/* test_crash_stress: the runtime's harder paths */
#define CR_WORKLOADS_STRESS(X)                                                   \
	X(stress_small_log_ordered, .seed = 41, .mode = UJBD_DATA_ORDERED,       \
	  .csum = JBD_CSUM_KIND_V3, .jlen = 64, .ops = 16)                       \
	X(stress_small_cache_deadline_journal, .seed = 42,                       \
	  .mode = UJBD_DATA_JOURNAL, .csum = JBD_CSUM_KIND_V2,                   \
	  .cache_blocks = 24, .elevator = "deadline", .ops = 32)                 \
	X(stress_cfq_async_ordered, .seed = 43, .mode = UJBD_DATA_ORDERED,       \
	  .csum = JBD_CSUM_KIND_V3, .async_commit = true,                        \
	  .elevator = "cfq", .wake_always = true, .sync_all = true,              \
	  .ops = 10)                                                             \
	X(stress_small_log_writeback_ssd, .seed = 44,                            \
	  .mode = UJBD_DATA_WRITEBACK, .csum = JBD_CSUM_KIND_NONE, .jlen = 64,   \
	  .cache_blocks = 24, .sim_ssd = true, .threads = 4, .ops = 12) \
	/* ujbd's defaults (issue 14) in the 64-block journal: journaled data   \
	 * takes the transaction's credits and log space, which run short */     \
	X(stress_small_log_defaults, .seed = 45, .mode = UJBD_DATA_ORDERED,      \
	  .csum = JBD_CSUM_KIND_V3, .jlen = 64, .defaults = true, .ops = 16)

/* A slow data SSD's page program in the ordered two-device workloads (the
 * default: 200 us): test_crash_twodev says why. */
#define TW_SLOW_US 2000

/* test_crash_twodev: journal and data on two devices */
#define CR_WORKLOADS_TWODEV(X)                                                   \
	/* ordered data on its own (slow) device: the commit flushes it first */ \
	X(twodev_ordered_v3, TW_SLOW_US, .seed = 31, .mode = UJBD_DATA_ORDERED,  \
	  .csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32)                  \
	/* no checksums, four threads */                                          \
	X(twodev_ordered_nocsum, TW_SLOW_US, .seed = 32,                         \
	  .mode = UJBD_DATA_ORDERED, .csum = JBD_CSUM_KIND_NONE, .sim_ssd = true, \
	  .threads = 4, .ops = 32)                                               \
	/* data journaled: the checkpoint flushes the data device before the    \
	 * tail moves */                                                          \
	X(twodev_journal_v2, 0, .seed = 33, .mode = UJBD_DATA_JOURNAL,           \
	  .csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 32)                  \
	/* writeback: metadata still atomic across the two devices */            \
	X(twodev_writeback_v3_ssd, 0, .seed = 34, .mode = UJBD_DATA_WRITEBACK,   \
	  .csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32)                  \
	/* the 45th journal write fails: abort mid-run (after a checkpoint      \
	 * moved the tail); nothing acknowledged after it, and every crash      \
	 * image still recovers to an acknowledged state */                      \
	X(twodev_abort_ordered, TW_SLOW_US, .seed = 35, .mode = UJBD_DATA_ORDERED, \
	  .csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32,                  \
	  .fault_write_nth = 45)                                                 \
	X(twodev_abort_journal, 0, .seed = 36, .mode = UJBD_DATA_JOURNAL,        \
	  .csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 32,                  \
	  .fault_write_nth = 45) \
	/* ujbd's defaults (issue 14), room for 2 journaled data blocks a       \
	 * transaction: small ones commit async without touching the data       \
	 * device, larger ones flush it first; and the defaults with the 20th   \
	 * journal write failing (async commits write the journal less often:   \
	 * 33 writes in all) */                                                   \
	X(twodev_ordered_defaults_2k, TW_SLOW_US, .seed = 37,                    \
	  .mode = UJBD_DATA_ORDERED, .csum = JBD_CSUM_KIND_V3, .sim_ssd = true,  \
	  .ops = 32, .defaults = true, .ordered_kib = 2)                         \
	X(twodev_abort_defaults, TW_SLOW_US, .seed = 38, .mode = UJBD_DATA_ORDERED, \
	  .csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32, .defaults = true, \
	  .fault_write_nth = 20)

#endif

/*
 * The lab's "jbd" parameter group: the journal options that shape a
 * scenario's figures, as a table over struct ujbd_opts (--jbd=LIST,
 * --params), so that they are described once, with their sources, and a
 * robustness sweep can move them as it moves the disks' and schedulers'.
 *
 * The one idea: a scenario sets its era's journal (lab_era_2007, the
 * variants' policies) and the user's --jbd list is applied on top, as for
 * every other group; the defaults printed are jbd2's (ujbd_opts_jbd2),
 * the lab's starting point, with ujbd's own default named in the source
 * where it differs.
 */
#include <stddef.h>

#include "lab/rig.h"
#include "priv/param.h"
#include "ujbd/ujbd.h"

_Static_assert(sizeof(enum ujbd_sync_policy) == sizeof(int), "enum as int");
_Static_assert(sizeof(enum ujbd_wake_policy) == sizeof(int), "enum as int");
_Static_assert(sizeof(enum ujbd_under_commit) == sizeof(int), "enum as int");
_Static_assert(sizeof(enum ujbd_async_commit) == sizeof(int), "enum as int");

static const char *const sync_names[] = { "fsync-only", "all", "off", NULL };
static const char *const wake_names[] = { "needed", "always", NULL };
static const char *const under_names[] = { "copy", "wait-io", "wait-loop", NULL };
/* in enum order: UJBD_ASYNC_COMMIT_OFF, _ON, _AUTO */
static const char *const async_names[] = { "off", "on", "auto", NULL };

#define P(name, field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM_AS(name, struct ujbd_opts, field, type, unit, scale, def, min, max, src, help)

static const struct rt_param jbd_rows[] = {
	P("commit_interval_ms", commit_interval_ns, RT_PARAM_U64, "ms", 1e6, 5000, 1, 3600000,
	  "jbd/jbd2 JBD_DEFAULT_MAX_COMMIT_AGE: 5 s", "the running transaction's age at commit"),
	P("min_batch_time_us", min_batch_time_ns, RT_PARAM_U64, "us", 1e3, 0, 0, 1000000,
	  "ext4 min_batch_time default 0", "shortest wait for more fsyncs before a commit"),
	P("max_batch_time_us", max_batch_time_ns, RT_PARAM_U64, "us", 1e3, 15000, 0, 1000000,
	  "ext4 max_batch_time default 15000 us", "longest wait for more fsyncs"),
	RT_PARAM_ENUM_AS("under_commit", struct ujbd_opts, under_commit, under_names, 3, 0,
			 "ujbd: copy; jbd/jbd2 waited for a buffer being logged (BJ_Shadow): "
			 "until the commit's wait loop reached it (wait-loop, to 3.10), until "
			 "its own write ended (wait-io, jbd2 since 3.11)",
			 "a handle and a buffer the commit is writing: copy, wait-io, wait-loop"),
	P("buffer_lock", buffer_lock, RT_PARAM_BOOL, "", 0, 0, 0, 1,
	  "jbd/jbd2 do_get_write_access begins with lock_buffer (ujbd: off)",
	  "a write access waits for I/O in flight on the buffer"),
	P("writeback_interval_ms", writeback_interval_ns, RT_PARAM_U64, "ms", 1e6, 0, 0, 3600000,
	  "pdflush: dirty_writeback_centisecs 500 (ujbd: 0, checkpoint only)",
	  "committed buffers go home by writeback every this often (0: off)"),
	P("writeback_expire_ms", writeback_expire_ns, RT_PARAM_U64, "ms", 1e6, 0, 0, 3600000,
	  "dirty_expire_centisecs 3000 (0: 30 s)", "age of a committed buffer the writeback takes"),
	P("journal_meta", journal_meta, RT_PARAM_BOOL, "", 0, 1, 0, 1,
	  "jbd2 tags journal writes META since Moyer's patch (2.6.35)", "journal writes META"),
	RT_PARAM_ENUM_AS("journal_sync", struct ujbd_opts, journal_sync, sync_names, 3, 0,
			 "jbd2 since 2.6.29: WRITE_SYNC for commits someone waits for",
			 "which journal writes are SYNC"),
	P("journal_noidle", journal_noidle, RT_PARAM_BOOL, "", 0, 0, 0, 1,
	  "2.6.30 WRITE_SYNC carried NOIDLE", "SYNC journal writes carry NOIDLE"),
	RT_PARAM_ENUM_AS("wake", struct ujbd_opts, wake, wake_names, 2, 0,
			 "Sandeen, 'jbd2: don't wake kjournald unnecessarily' (2012)",
			 "commit-thread wakeups: needed, or always"),
	P("barrier", barrier, RT_PARAM_BOOL, "", 0, 1, 0, 1,
	  "ext4 barrier=1; ext3 barrier=0 until 2.6.38", "cache flush and FUA on commit"),
	RT_PARAM_ENUM_AS("async_commit", struct ujbd_opts, async_commit, async_names, 3, 0,
			 "ext4 journal_async_commit off by default (ujbd's own default: auto)",
			 "commit block with the log blocks: off, on, auto"),
	P("ordered_journal_kib", ordered_journal_bytes, RT_PARAM_U32, "KiB", 1024, 0, 0, 1u << 20,
	  "jbd2: 0, ordered data home before the commit (ujbd's default: 64 KiB)",
	  "ordered data journaled per transaction under async commit"),
	P("caller_commit", caller_commit, RT_PARAM_BOOL, "", 0, 0, 0, 1,
	  "jbd2 commits on its own thread (ujbd's default: on)", "an fsync commits on its own thread"),
	P("wakeup_cpu_us", wakeup_cpu_ns, RT_PARAM_U64, "us", 1e3, 0, 0, 10000,
	  "0: the lab's aim7 sets its own (--aim7)", "CPU a commit-thread wakeup costs the waker"),
	P("max_transaction_blocks", max_transaction_blocks, RT_PARAM_U32, "blocks", 0, 0, 0,
	  1u << 30, "jbd2: a quarter of the journal (0)", "largest transaction"),
	P("cache_blocks", cache_blocks, RT_PARAM_U64, "blocks", 0, 16384, 16, 1ull << 32,
	  "the lab sets it from the fs group's ram_bytes", "buffer cache size"),
};

#undef P

const struct rt_param_table lab_jbd_param_table =
	RT_PARAM_TABLE("jbd", "the journal's options (struct ujbd_opts)", jbd_rows,
		       struct ujbd_opts);

void lab_jbd_params_default(void *opts)
{
	ujbd_opts_jbd2(opts);
}

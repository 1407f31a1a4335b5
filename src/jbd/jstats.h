/*
 * jstats.h: the journal's statistics, as the kernel keeps them for
 * /proc/fs/jbd2/<dev>/info, plus what the kernel does not keep (histograms,
 * wakeup counters, latency per cause).
 *
 * The one idea: the commit thread hands over one jbd_run_sample per finished
 * commit (the per-phase times of jbd2_run_stats); everything else is summed
 * here, and divided only when formatted, exactly as the kernel divides its
 * cumulative sums by the number of commits. All times are kept in ns; the
 * kernel keeps jiffies (4 ms at HZ=250), we do not round to jiffies.
 *
 * Locking: every function takes s_lock, the stats' own rt_mutex. It is a
 * leaf lock: taken last (under any journal lock), never held while calling
 * out. No allocation after jbd_stats_init: the histograms are rt_hist
 * (ujbd/hist.h), fixed arrays of log-linear buckets.
 *
 * Which call records what (each function touches only its own fields, so
 * a wait that is both an fsync and a commit wait is reported to both):
 *   jbd_stats_commit          ts_tid, ts_requested, rs_* sums, the average
 *                             commit time, the commit-time histogram,
 *                             data_journaled, data_home, async_commits
 *   jbd_stats_fsync           the fsync-latency histogram only
 *   jbd_stats_lat             lat[cause] (latencytop-style count/sum/max)
 *   jbd_stats_wakeup          wakeups, useless_wakeups
 *   jbd_stats_checkpoint      checkpoint_written, checkpoint_dropped
 *   jbd_stats_log_space_wait  log_space_waits, log_space_stall_ns_max
 *   jbd_stats_inherit_boost   inherit_boosts (the block layer's boost
 *                             counters are added by ujbd_stats)
 *
 * jbd_stats_lat also adds the wait to the calling thread's accumulator
 * (ujbd_lat_attach): it is always called on the thread that waited.
 */
#ifndef UJBD_JBD_JSTATS_H
#define UJBD_JBD_JSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "priv/hist.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

/* One commit, as the kernel's jbd2_run_stats (times in ns, not jiffies). */
struct jbd_run_sample {
	uint32_t tid;
	bool requested;             /* someone asked for this commit */
	uint64_t wait_ns;           /* longest wait of a handle to join */
	uint64_t request_delay_ns;  /* commit request to T_LOCKED */
	uint64_t running_ns;        /* transaction start to T_LOCKED */
	uint64_t locked_ns;         /* T_LOCKED to T_FLUSH */
	uint64_t flushing_ns;       /* T_FLUSH to T_COMMIT */
	uint64_t logging_ns;        /* T_COMMIT to commit done */
	uint64_t commit_time_ns;    /* T_FLUSH to commit done */
	uint64_t handle_count, blocks, blocks_logged;
	/* not the kernel's: ordered data logged and written home, async,
	 * run by a caller rather than the commit thread */
	uint64_t data_journaled, data_home;
	bool async, caller;
};

struct jbd_stats {
	rt_mutex s_lock;
	struct ujbd_stats s_sum;           /* [s_lock] counters and sums */
	struct rt_hist s_commit_time;     /* [s_lock] */
	struct rt_hist s_fsync;           /* [s_lock] */
	/* The average commit time, also readable without s_lock (atomic
	 * loads) by the batching of sync handles: jbd_stats_avg_commit_ns. */
	uint64_t s_avg_commit_ns;          /* [s_lock] writes; atomic */
};

/* Fill s (zeroed counters); max_transaction_blocks is "each up to K". */
void jbd_stats_init(struct jbd_stats *s, uint32_t max_transaction_blocks);
void jbd_stats_release(struct jbd_stats *s);
/* One finished commit: sums, counts, EWMA (sample + 3*old)/4, histogram. */
void jbd_stats_commit(struct jbd_stats *s, const struct jbd_run_sample *r);
/* One fsync-like wait (ujbd_wait_tid, a sync stop, ujbd_sync), in ns. */
void jbd_stats_fsync(struct jbd_stats *s, uint64_t ns);
/* The commit thread woke up; useless: it found nothing to do. */
void jbd_stats_wakeup(struct jbd_stats *s, bool useless);
/* A wait of ns for cause c (latencytop-style). */
void jbd_stats_lat(struct jbd_stats *s, enum ujbd_lat_cause c, uint64_t ns);
/* A waiter raised a commit's priority (commit_ioprio = inherit). */
void jbd_stats_inherit_boost(struct jbd_stats *s);
/* A checkpointed transaction left the list: buffers written, dropped. */
void jbd_stats_checkpoint(struct jbd_stats *s, uint64_t written,
			  uint64_t dropped);
/* A handle start waited ns for log space (forced checkpoint). */
void jbd_stats_log_space_wait(struct jbd_stats *s, uint64_t ns);
/* Copy everything into out, with histogram percentiles computed. */
void jbd_stats_snapshot(struct jbd_stats *s, struct ujbd_stats *out);
/* The public summary of a histogram (ujbd.h's struct ujbd_hist): count,
 * sum, max, p50 and p99. */
void jbd_hist_summary(const struct rt_hist *h, struct ujbd_hist *out);
/* The kernel's j_average_commit_time, lock-free (0 before any commit). */
uint64_t jbd_stats_avg_commit_ns(const struct jbd_stats *s);

#endif

/*
 * The lab's rig, shared by the scenarios: the stack every scenario stands
 * on and its eras, trees of files (made, copied in a loop, read), the timed
 * foreground reader of the 2007 atime thread, the journal's and the
 * queue's figures.
 *
 * The one idea: a workload is a thread with a stop time, not a count, so a
 * scenario's virtual duration is what it chooses and --quick only shortens
 * it; every thread records what it did in its own struct, read by the
 * scenario after the join.
 *
 * Determinism: file sizes come from an rt_prng seeded by the run's seed;
 * every wait is rt_*.
 *
 * Errors: 0 or a negative errno; nothing prints.
 */
#ifndef UJBD_LAB_RIG_H
#define UJBD_LAB_RIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/fs.h"
#include "lab/lab.h"
#include "priv/stack.h"
#include "ujbd/ujbd.h"

/* ---- the stack a scenario runs on ----------------------------------------- */

/*
 * What a scenario asks of its stack. The disk is the context's (--disk) unless
 * disk_model is set; the user's --GROUP=LIST lists apply over the scenario's
 * own (disk_params first, then the user's).
 */
struct lab_rig_spec {
	const char *elevator;        /* "cfq", "deadline", "noop" */
	const char *elevator_params; /* the scenario's tunables, NULL = none */
	const char *queue_params;    /* the scenario's queue list, NULL = none */
	const char *disk_model;      /* NULL = lab_ctx_disk */
	const char *disk_params;     /* the scenario's disk list, NULL = none */
	bool trace;                  /* keep blktrace events */
	blk_trace_fn trace_fn;       /* passed every event (q_lock held), NULL = none */
	void *trace_arg;
	unsigned ncpus;              /* 0 = rt's default */
	struct rt_sched sched;       /* how the CPUs are shared (FIFO) */
	/* Record a timeline of the run (timeline.c) into this result, as the
	 * series tl_* that --out plots; NULL = none. */
	struct lab_result *timeline;
	struct ujbd_opts jopts;      /* from lab_rig_spec_init, then the scenario's */
	struct fs_params fsp;    /* the era's: from lab_rig_spec_init, then the scenario's */
};

/* The "jbd" group: the journal options a scenario's figures depend on
 * (jbd_params.c); the user's --jbd list applies over the scenario's. */
extern const struct rt_param_table lab_jbd_param_table;
/* The "cpu" group (cpu_params.c): struct rt_sched, the user's --cpu list
 * over the scenario's lab_rig_spec.sched. */
extern const struct rt_param_table lab_cpu_param_table;
void lab_jbd_params_default(void *opts);

/* Defaults: cfq, journal options of ujbd, fs params of fs_params_default. */
void lab_rig_spec_init(struct lab_rig_spec *rs);

struct lab_rig {
	const struct lab_ctx *r_ctx;
	struct stack *r_stack;
	struct ujbd *r_j;
	struct blk_queue *r_q;
	struct fs *r_fs;
	struct fs_params r_fsp;
	struct lab_timeline *r_tl;   /* lab_rig_spec.timeline's recorder, or NULL */
	int (*r_fn)(struct lab_rig *r, void *arg);
	void *r_arg;
};

/*
 * Build the stack (sim world seeded by the context), mkfs + mount the fs
 * model, run fn(rig, arg) as the first thread, unmount, close. Returns fn's
 * result or the first error.
 */
int lab_rig_run(const struct lab_ctx *c, struct lab_rig_spec *rs,
		int (*fn)(struct lab_rig *r, void *arg), void *arg);
/* Inside fn: unmount and mount again (a cold page cache). */
int lab_rig_remount(struct lab_rig *r);
/* Inside fn: commit and checkpoint what the setup wrote, keeping the
 * caches (the measurement starts from a quiet disk and a warm cache). */
int lab_rig_settle(struct lab_rig *r);

/* ---- the timeline (timeline.c) ------------------------------------------ */

/*
 * What the run did over virtual time, for a seekwatcher-like plot: per time
 * bin the most requests queued or at the disk (from the queue's I and C
 * events), the time the commit spent locked (waiting for handles), flushing
 * (ordered data) and logging (from the journal's trace hook), and each kind
 * of foreground operation's slowest one (lab_tl_op). At most LAB_TL_BINS
 * bins: a longer run merges them pairwise (twice as wide), so its size is
 * bounded. The rig makes one when lab_rig_spec.timeline is set, hooks it to
 * the queue and the journal, stops it when the scenario's fn returns and
 * puts it into the result as series:
 *   tl_bins                       one point: the bins' width (s), their count
 *   tl_queue                      (s, requests) where the most in a bin changes
 *   tl_commit_{locked,flushing,logging}  (bin start s, share of the bin 0..1)
 *   tl_op:LABEL                   (start s, ms): a kind's slowest operation of a bin
 * Every call is a no-op on a NULL timeline; lab_tl_op before lab_tl_start
 * (or after lab_tl_stop) records nothing.
 */
#define LAB_TL_BINS 512
#define LAB_TL_KINDS 4
#define LAB_TL_LABEL 40
struct lab_timeline;
int lab_tl_new(struct lab_timeline **out);
void lab_tl_free(struct lab_timeline *tl);
/* Times count from now (the measurement's start); before, nothing is binned. */
void lab_tl_start(struct lab_timeline *tl);
void lab_tl_stop(struct lab_timeline *tl);
/* Kind k's label in the plot's legend (the series' name: letters, digits, _ . : + -). */
void lab_tl_kind(struct lab_timeline *tl, unsigned kind, const char *label);
/* One foreground operation of kind k, from t0_ns (rt_now_ns) to now. */
void lab_tl_op(struct lab_timeline *tl, unsigned kind, uint64_t t0_ns);
/* The hooks: a queue's trace event, a journal's trace event (ujbd_trace_fn). */
void lab_tl_blk(struct lab_timeline *tl, const struct blk_trace_event *ev);
void lab_tl_jbd(void *arg, const struct ujbd_trace_event *ev);
/* The series above into out. 0 or -errno. */
int lab_tl_report(const struct lab_timeline *tl, struct lab_result *out);

/* ---- eras (era.c) -------------------------------------------------------- */

/* The era of the 2007 kjournald-priority thread (Arjan van de Ven, LKML,
 * October 2007; 2.6.23-rc9, ext3 data=ordered): jbd wrote log
 * blocks as plain WRITE (the commit block by sync_dirty_buffer), no META
 * tag, commit thread at the default be:4, jbd's wait on a buffer being
 * logged until the commit's wait loop reaches it (wait-loop), the buffer
 * lock and pdflush (lab_era_buffers), cfq, dirty 10/5 (the fs model's
 * defaults). */
void lab_era_2007(struct lab_rig_spec *rs);
/* Today's jbd2 (3.11 on): wait-io, the buffer lock and the flusher. */
void lab_era_today(struct lab_rig_spec *rs);
/* Every era's metadata buffers: the buffer lock, and writeback every 5 s
 * of every committed buffer once the device has had dirty ones for 30 s. */
void lab_era_buffers(struct lab_rig_spec *rs);
/* The waits of jbd, and of jbd2 before 3.11: a buffer being logged is
 * waited for until the commit's wait loop reaches it (wait-loop), and
 * lab_era_buffers. */
void lab_era_jbd_waits(struct lab_rig_spec *rs);
/* The kernels from 2.6.30 on: cfq, no META tag, dirty 20/10, fsync's data
 * WRITE_SYNC, the journal in the middle group; `fsync-loop`, `writeout`,
 * `smallfile` and `checkpoint` start from it. */
void lab_era_2009(struct lab_rig_spec *rs);
/* ext3's barrier=0 (its default before 2.6.38): journal and fsync without
 * cache flushes. */
void lab_era_no_barrier(struct lab_rig_spec *rs);

/* Parse a commit priority variant ("be:4", "rt:4", "inherit"). */
int lab_variant_ioprio(const char *v, uint16_t *out);

/* lab_rig_spec_init, lab_era_2007, then the commit priority of variant
 * (lab_variant_ioprio): 0 or -EINVAL. */
int lab_rig_spec_2007(struct lab_rig_spec *rs, const char *variant);

/* ---- trees of files ----------------------------------------------------- */

/* A tree: root/dNNN/fNNNN, files_per_dir files per directory, sizes drawn
 * uniformly from [min_kib, max_kib] in 4 KiB steps. */
struct lab_tree {
	char t_root[32];
	unsigned t_files, t_per_dir;
	uint32_t *t_size;   /* bytes, t_files of them */
	uint64_t t_bytes;   /* sum */
};
int lab_tree_init(struct lab_tree *t, const char *root, unsigned files, unsigned per_dir,
		  unsigned min_kib, unsigned max_kib, uint64_t seed);
void lab_tree_release(struct lab_tree *t);
/* Path of file i of t with another root (root NULL = t's). */
void lab_tree_path(const struct lab_tree *t, const char *root, unsigned i, char *buf, size_t n);
/* Create t on fs (directories and files, written buffered). */
int lab_tree_make(struct fs *fs, const struct lab_tree *t);
/* Read every file of t whole (cat > /dev/null: warms the page cache); each
 * file an operation of kind on tl (NULL: none). */
int lab_tree_read(struct fs *fs, const struct lab_tree *t, struct lab_timeline *tl, unsigned kind);
/* rm -rf of a copy of t at root. Missing files are fine (-ENOENT ignored). */
int lab_tree_remove(struct fs *fs, const struct lab_tree *t, const char *root);

/* ---- the tree-copy loop (the 2007 atime thread's background) ------------- */

struct lab_copier {
	struct fs *fs;
	const struct lab_tree *src;
	uint64_t until_ns;        /* stop at this virtual time */
	atomic_bool *stop;        /* or when set (may be NULL) */
	/* out */
	uint64_t bytes;           /* copied */
	uint64_t files, loops;
	uint64_t start_ns, end_ns;
	int rc;
};
/* Thread body: cp -r src /copyN, rm -rf the previous copy, again. */
void lab_copier_thread(void *arg);

/* ---- the foreground reader (the 2007 atime thread's build) --------------- */

/* Per-cause time of the foreground: the journal's causes (ujbd_lat_acct)
 * and what is left of each operation (read I/O and CPU). */
struct lab_fg_causes {
	double sum_ms[UJBD_LAT_NR], max_ms[UJBD_LAT_NR];
	uint64_t count[UJBD_LAT_NR];
	double other_sum_ms, other_max_ms;
	/* latencytop's view of the worst operation: its time by cause */
	double worst_ms, worst_cause_ms[UJBD_LAT_NR], worst_other_ms;
};

struct lab_reader {
	struct fs *fs;
	const struct lab_tree *tree;
	uint64_t period_ns;       /* 5 ms */
	uint64_t read_bytes;      /* 4 KiB */
	uint64_t until_ns;
	uint16_t ioprio;          /* 0 = leave the thread's */
	struct lab_timeline *tl;  /* each operation as kind 0, or NULL */
	/* out */
	struct rt_hist lat;       /* per operation (stat + open + read), ns */
	struct lab_fg_causes causes;
	int rc;
};
/* Thread body: every period, stat, open and read the next file of tree. */
void lab_reader_thread(void *arg);
/* Fold one operation of a foreground thread into fc: its journal waits
 * (after - before, the thread's ujbd_lat_attach accumulator) and the rest
 * of op_ms (its own I/O and CPU). */
void lab_fg_causes_add(struct lab_fg_causes *fc, const struct ujbd_lat_acct *before,
		       const struct ujbd_lat_acct *after, double op_ms);
/* The name a cause has in the metrics ("commit", "buffer", ...), NULL for
 * one that is not a wait (UJBD_LAT_WAIT_FROZEN) or out of range. */
const char *lab_fg_cause_name(int cause);
/* A foreground's metrics from its latencies and causes: those of
 * lab_reader_report below, for any foreground thread. */
int lab_fg_report(const struct rt_hist *lat, const struct lab_fg_causes *fc, struct lab_result *r);
/* Put the reader's metrics in r: fg_latency_ms_{avg,p99,max}, fg_ops, the
 * per-cause fields fg_wait_<cause>_count, fg_wait_<cause>_ms_{total,max},
 * fg_other_ms_{total,max}, and the worst operation's time by cause,
 * fg_worst_ms, fg_worst_<cause>_ms and fg_worst_other_ms (latencytop's
 * view; <cause>: transaction, commit, log_space, buffer (a shadowed
 * buffer), lock_writeback, lock_checkpoint, lock_read (the buffer lock, by
 * whose I/O held it)). */
int lab_reader_report(const struct lab_reader *rd, struct lab_result *r);

/* ---- journal and queue figures -------------------------------------------- */

/* commits, commit_ms_avg, wakeups, useless_wakeups of the journal since
 * base (a ujbd_stats snapshot; NULL = since open). */
int lab_report_journal(struct ujbd *j, const struct ujbd_stats *base, struct lab_result *r);
/* The queue's CFQ idle windows since base (NULL: since it was made):
 * cfq_idles, cfq_idles_expired, cfq_idle_ms_total. */
int lab_report_idle(struct blk_queue *q, const struct blk_queue_stats *base,
		    struct lab_result *r);

/* Seeks: dispatched requests that did not start where the previous one
 * ended, from the queue's kept trace (the stack must trace). */
uint64_t lab_trace_seeks(struct blk_queue *q);
/*
 * The queue watched live, as a trace_fn (for runs longer than the kept
 * trace), while on is set: seeks among dispatches, and the service time
 * (dispatch to completion) of requests that flush the disk's cache (a
 * PREFLUSH write or a bare flush: RWBS starting with F).
 */
#define LAB_QWATCH_PENDING 16
struct lab_qwatch {
	atomic_bool on;
	uint64_t seeks, dispatched, end;
	uint64_t flushes, flush_sum_ns, flush_max_ns;
	struct { uint64_t sector, t_ns; bool busy; } pend[LAB_QWATCH_PENDING];
};
void lab_qwatch_fn(void *arg, const struct blk_trace_event *ev);

/* Format for summaries: "%.3g" of v with unit. */
const char *lab_fmt(char *buf, size_t n, double v, const char *unit);
/* a / b, NAN when either is not a positive finite number. */
double lab_ratio(double a, double b);

#endif /* UJBD_LAB_RIG_H */

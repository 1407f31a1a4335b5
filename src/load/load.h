/*
 * The load library: the load generators and the measurement that `ujbd
 * bench`, `ujbd devbench` and the lab share. Private to libujbd and its
 * tools (include "load/load.h").
 *
 * The one idea: a workload is a body run by N rt threads of one world
 * (load_threads_run: names, I/O priority per thread, an optional common
 * start), each thread counts its own latencies in an rt_hist (ujbd/hist.h)
 * and the report merges the histograms; nothing keeps samples, so every
 * percentile printed anywhere is the same computation (nearest rank, read
 * from the buckets: within 1/2^RT_HIST_SUB_BITS above the exact value).
 *
 * Contents, one file each:
 *   threads.c   load_threads_run: run a body on N rt threads
 *   lat.c       load_lat (avg/p50/p99/max in us from an rt_hist) and its JSON
 *   blk.c       load_blk_*: iodepth bios in flight per thread over a
 *               block queue (Q2C latency), per-thread results
 *   dev.c       load_dev_*: devbench's loops: one I/O at a time per
 *               thread, on a device or through a queue, its report
 *   jbd.c       load_jbd_*: the journal workloads of `ujbd bench`
 *               (fsync loop, group commit, handles, the plain-file
 *               baselines), their report
 *
 * Callers open the world, the devices, the queue and the journal
 * themselves (tools/cmd_*.c) and hand them in: this layer only drives load
 * and measures. Every load_*_run is called from an rt thread of the world the
 * devices belong to; all waiting and time go through rt_*, so a sim world
 * run is a pure function of its seed. Functions return 0 or a negative
 * errno; the report functions print to the FILE they are given and return
 * -EIO if it fails.
 */
#ifndef UJBD_LOAD_H
#define UJBD_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "priv/hist.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

/* ---- threads --------------------------------------------------------- */

#define LOAD_MAX_THREADS 256

/* What one workload thread was and what its body returned. */
struct load_thread_info {
	char name[16];
	int pid;
	uint16_t ioprio;           /* what the thread ran with */
	int err;                   /* the body's return: 0 or -errno */
};

struct load_threads {
	unsigned n;                /* 1 .. LOAD_MAX_THREADS */
	const char *name;          /* threads are name0, name1, ... */
	bool same_name;            /* ... or all exactly name */
	/* [n], NULL = all 0; 0 leaves a thread's priority alone (it inherits
	 * the caller's). A kernel refusal (EPERM for rt) is not an error: rt
	 * records the priority and ujbd's block layer honours it. */
	const uint16_t *ioprio;
	/* Hold every thread until all have started, then release them at
	 * once; the elapsed time runs from the release. Without it, from
	 * before the first thread is created. */
	bool together;
	int (*body)(void *arg, unsigned i);
	void *arg;
};

/*
 * Run t->body(t->arg, i) on n rt threads and join them all; fill info[i]
 * (n entries) and *elapsed_ns (to the last join; may be NULL). Returns 0,
 * -EINVAL, -ENOMEM, or rt_thread_create's error: then the threads already
 * started still ran (and were joined) and the rest have err -ECANCELED.
 * The bodies' errors are in info[].err (load_threads_err).
 */
int load_threads_run(const struct load_threads *t, struct load_thread_info *info,
		    uint64_t *elapsed_ns);
/* The first non-zero info[i].err, or 0. */
int load_threads_err(const struct load_thread_info *info, unsigned n);

/* ---- latency report -------------------------------------------------- */

/* A latency summary in microseconds (what the JSON's "latency_us" holds). */
struct load_lat {
	double avg_us, p50_us, p99_us, max_us;
};

/* Of h (all 0 if empty). */
void load_lat_of(const struct rt_hist *h, struct load_lat *out);
/* "latency_us":{"avg":..,"p50":..,"p99":..,"max":..} with prec decimals. */
int load_lat_json(FILE *f, const struct load_lat *l, int prec);

/* ---- a block-layer load: iodepth bios in flight per thread ------------ */

enum load_blk_pattern {
	LOAD_BLK_RANDREAD = 0,
	LOAD_BLK_RANDWRITE = 1,
	LOAD_BLK_READ = 2,      /* sequential; each thread its own stretch */
	LOAD_BLK_WRITE = 3,
};

#define LOAD_BLK_MAX_THREADS 64

struct load_blk_opts {
	enum load_blk_pattern pattern; /* RANDREAD */
	uint32_t block_size;     /* bytes per I/O, 4096 */
	uint64_t offset;         /* region start, bytes, 0 */
	uint64_t span;           /* region length, bytes, 0 = to the device end */
	unsigned threads;        /* 1 */
	/* Per thread (threads entries), 0 = leave the thread's priority alone
	 * (it inherits the caller's). NULL = all 0. */
	const uint16_t *ioprio;
	unsigned iodepth;        /* bios in flight per thread, 1 */
	uint64_t duration_ns;    /* stop submitting after this long, 1 s */
	uint64_t ios_per_thread; /* or after this many I/Os; 0 = no limit */
	uint32_t flags;          /* added to every bio (BLK_SYNC, ...) */
	uint64_t seed;           /* offsets: thread i draws from seed + i */
};
void load_blk_opts_default(struct load_blk_opts *o);

struct load_blk_result {
	char name[16];           /* "bench0", ... */
	int pid;
	uint16_t ioprio;         /* what the thread ran with */
	uint64_t ios, bytes, errors;
	uint64_t elapsed_ns;     /* first submission to last completion */
	double iops, mb_s;       /* MB = 1e6 bytes */
	/* Per-I/O latency, queued to completed (btt's Q2C), microseconds,
	 * from the thread's histogram. */
	double lat_us_avg, lat_us_p50, lat_us_p99, lat_us_max;
	struct rt_hist lat;      /* the same latencies, ns */
};

/*
 * Run opts->threads rt threads (bench0, ...) against q and fill
 * out[0 .. threads-1]. Call from an rt thread of the queue's world. Buffers
 * are allocated here. 0 or -EINVAL/-ENOMEM; I/O errors are counted, not
 * fatal.
 */
int load_blk_run(struct blk_queue *q, const struct load_blk_opts *opts,
		    struct load_blk_result *out);
/* The JSON array [{"name":..,"pid":..,"ioprio":"rt:4","ios":..,"errors":..,
 * "iops":..,"mb_s":..,"latency_us":{"avg":..,"p50":..,"p99":..,"max":..}},
 * ...]. */
int load_blk_json(FILE *f, const struct load_blk_result *r, unsigned n);

/* ---- devbench's load: one I/O at a time per thread -------------------- */

enum load_dev_pattern {
	LOAD_DEV_SEQ = 0,         /* sequential reads from the start */
	LOAD_DEV_RAND = 1,        /* uniform random reads */
	LOAD_DEV_WRITE_FLUSH = 2, /* sequential write, then a cache flush */
};
#define LOAD_DEV_PATTERNS 3
#define LOAD_DEV_MAX_THREADS 64

/* "seq", "rand", "write-flush"; parse: 0 or -EINVAL. */
const char *load_dev_pattern_name(enum load_dev_pattern p);
int load_dev_pattern_parse(const char *s, enum load_dev_pattern *out);

struct load_dev_opts {
	enum load_dev_pattern pattern;
	uint32_t bs;               /* bytes per I/O: a multiple of the disk's block */
	uint64_t ops;              /* I/Os in all, shared by the threads */
	uint64_t seed;             /* random offsets */
	unsigned threads;          /* 1 without a queue */
	const uint16_t *ioprio;    /* [threads] or NULL: see struct load_threads */
};

struct load_dev_thread {
	char name[16];
	uint16_t ioprio;           /* as the thread ran */
	uint64_t ops, bytes;
	struct rt_hist lat;        /* ns per I/O (a write+flush is one) */
};

struct load_dev {
	unsigned nthreads;
	uint64_t elapsed_ns;       /* first thread created to last joined */
	struct load_dev_thread thr[LOAD_DEV_MAX_THREADS];
};

/* One thread's, or all threads' (first 0, n nthreads), merged figures. */
struct load_dev_stats {
	uint64_t n, bytes;
	double iops, mb_s;         /* over the run's elapsed time */
	struct load_lat lat;
};

/*
 * Issue o->ops I/Os on d, as bios through q when q is not NULL (then
 * o->threads threads named bench0.. share the count), else one thread
 * straight to the device. Fills *out (allocate it: it is large). Call from
 * an rt thread of d's world. 0, -EINVAL, -ENOMEM or the first I/O error.
 */
int load_dev_run(struct dev *d, struct blk_queue *q,
		    const struct load_dev_opts *o, struct load_dev *out);
void load_dev_stats(const struct load_dev *r, unsigned first, unsigned n,
		       struct load_dev_stats *s);

/* What the report names (the disk, the world, the elevator). */
struct load_dev_report {
	const char *disk;          /* the disk's name */
	const char *engine;        /* file disks: the I/O engine, else NULL */
	const char *pattern;
	uint32_t bs;
	const char *world;         /* "sim" or "real" */
	uint64_t seed;
	const char *elevator;      /* through a queue, else NULL */
	bool json;
};
/* devbench's report: text, or one JSON line (keys: disk, pattern, bs, ops,
 * world, seed, time ("virtual" in the sim world, else "real"), elapsed_s,
 * iops, mb_s, latency_us, and with an elevator
 * "elevator" and a "threads" list of name, ioprio, ops, iops, mb_s,
 * latency_us). */
int load_dev_print(FILE *f, const struct load_dev_report *rep,
		      const struct load_dev *r);

/* ---- the journal workloads of `ujbd bench` ---------------------------- */

enum load_jbd_kind { LOAD_JBD_FSYNC_LOOP, LOAD_JBD_GROUP_COMMIT, LOAD_JBD_HANDLES };
#define LOAD_JBD_KINDS 3
#define LOAD_JBD_BS 4096u
#define LOAD_JBD_SPAN 256u          /* data blocks cycled through per thread */
#define LOAD_JBD_HANDLE_BLOCKS 64u  /* metadata blocks per thread (handles) */
#define LOAD_JBD_HANDLE_SAMPLE 16u  /* handles: time 1 in 16 */

/* "fsync-loop", "group-commit", "handles". */
const char *load_jbd_kind_name(enum load_jbd_kind k);
/* Data blocks the workload addresses for n threads (after base). */
uint64_t load_jbd_data_blocks(enum load_jbd_kind k, unsigned n);

struct load_jbd_opts {
	enum load_jbd_kind kind;
	uint64_t iterations;       /* per thread */
	unsigned threads;
	bool sync_handles;         /* fsync through a sync handle's stop */
	unsigned clean_fsyncs;     /* more fsyncs of an already committed tid */
	/* The journal, and its first data block ... */
	struct ujbd *j;
	uint64_t base;
	/* ... or the plain-file baseline: fds[threads], pwrite + fdatasync
	 * (fsync with use_fsync) of LOAD_JBD_SPAN blocks per file. */
	const int *fds;
	bool use_fsync;
};

struct load_jbd {
	unsigned nthreads;
	uint64_t elapsed_ns;       /* from the common start to the last join */
	uint64_t ops;              /* iterations done, all threads */
	struct rt_hist lat;        /* ns per iteration, all threads merged */
	int err;                   /* the first thread error */
	bool start_failed;         /* err is rt_thread_create's */
};

/* Run the workload: threads named "bench", released together. 0 or the
 * first error (also in out->err). */
int load_jbd_run(const struct load_jbd_opts *o, struct load_jbd *out);

/* What the report names. */
struct load_jbd_report {
	enum load_jbd_kind kind;
	const char *system;        /* "ujbd", "baseline", "baseline-fsync" */
	const char *data_mode;
	const char *layout;        /* "-" for the baseline */
	unsigned threads;
	uint64_t iterations;
	bool baseline, json;
	/* the journal's statistics (all 0 for the baseline: its wakeups
	 * print as 0); with_stats also prints them in full */
	const struct ujbd_stats *stats;
	bool with_stats;
	/* the rest of the journal's configuration (ignored for the baseline),
	 * printed so that a result says everything that produced it */
	uint64_t journal_mb;
	const char *wake, *under_commit;   /* "needed"/"always", "copy"/"wait-io" */
	bool async_commit, caller_commit, sync_handles;
	unsigned clean_fsyncs;
};
/* bench's report: text, or one JSON line (keys: workload, system,
 * data_mode, layout, threads, iterations, ops, seconds, ops_per_s,
 * latency_us, wakeups, useless_wakeups; not for the baseline: journal_mb,
 * wake, under_commit, async_commit, caller_commit, sync_handles,
 * clean_fsyncs; and with_stats: stats). */
int load_jbd_print(FILE *f, const struct load_jbd_report *rep,
		    const struct load_jbd *r);

#endif /* UJBD_LOAD_H */

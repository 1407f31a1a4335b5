/*
 * ujbd block layer: bios, requests, plugging, I/O priority, the noop,
 * deadline and CFQ elevators, and blktrace-style events, over one device.
 *
 * The one idea: a bio is what a caller wants written or read; a request is
 * what the device is asked to do. Between the two sits the elevator, which
 * merges contiguous bios into requests, holds them back (plugging, CFQ slice
 * idling) and chooses their order (deadline's sorted batches, CFQ's classes
 * and time slices). The rules and defaults are those of Linux 2.6.29, with
 * CFQ's 2.6.33 corrections; docs/blk.md ("Differences from the kernel of that era") lists every difference.
 *
 *   caller --blk_submit--> [per-thread plug] --> elevator --dispatch--> device
 *      ^                                                                  |
 *      +---- end_io / blk_wait <---- completion (device's thread) <-------+
 *
 * One queue per device (blk_queue_new). Any rt thread of the world that
 * created the queue may submit. Each queue owns one "kblockd" rt thread for
 * its timers (CFQ idle timer, the 2.6.29 unplug timer); blk_queue_free stops
 * it, so in the sim world free the queue before the world's threads end.
 *
 * Lock order: q_lock (one mutex per queue) -> the device's internal locks.
 * Bio end_io callbacks and trace callbacks: see below.
 *
 * Errors: 0 or a negative errno; nothing here prints unless handed a FILE.
 *
 * Internal to ujbd, not installed: the elevators and their tunables are the
 * lab's experiments; a program's journal uses the noop queue ujbd makes
 * itself (docs/library.md).
 */
#ifndef UJBD_BLK_H
#define UJBD_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "priv/list.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dev;
struct blk_queue;

#define BLK_SECTOR_SHIFT 9 /* sectors are 512 bytes, whatever the device */

/* ---- bios ------------------------------------------------------------- */

enum blk_op {
	BLK_OP_READ = 0,
	BLK_OP_WRITE = 1,
	BLK_OP_FLUSH = 2, /* an empty cache flush; sector, size, buf ignored */
};

/* b_flags */
/* Sync: CFQ puts the bio in the thread's own queue and idles after it;
 * under the implicit-sync plug policy it also unplugs at once. Reads are
 * always sync for CFQ, whether flagged or not. */
#define BLK_SYNC     (1u << 0)
/* Metadata: CFQ serves it first within a queue and lets it preempt a queue
 * that has no META request pending (2.6.29 preemption rule 6). */
#define BLK_META     (1u << 1)
/* Priority boost as in Linux 3.1+ REQ_PRIO: treated exactly as META by
 * CFQ here (2.6.29 had only META); never printed in RWBS. */
#define BLK_PRIO     (1u << 2)
/* Force unit access: the write completes only once durable (dev.h). */
#define BLK_FUA      (1u << 3)
/* Flush the device cache before this write (dev.h). Never merged. */
#define BLK_PREFLUSH (1u << 4)
/* 2.6.33 REQ_NOIDLE: CFQ does not idle after this sync request. */
#define BLK_NOIDLE   (1u << 5)
/* Polled I/O (REQ_POLLED): blk_wait runs the request on the waiting thread
 * (dev_poll) instead of sleeping until the device's thread completes it;
 * it saves two thread hops per I/O. Needs b_end_io NULL; never merged;
 * where the device cannot poll (dev_can_poll) it is an ordinary bio. Wait
 * for a polled bio with blk_wait before waiting for anything else that
 * may need it done (blk_drain, a bio submitted after it). */
#define BLK_POLLED   (1u << 6)
/* Past the host's page cache where the device has a direct path
 * (DEV_REQ_DIRECT: a file's O_DIRECT descriptor); elsewhere, and for a
 * request not aligned for it, an ordinary transfer. For writes nobody
 * reads back through the cache soon, such as the journal's log: the copy
 * into the cache and its write-back are saved. Not a merge barrier: a
 * request is direct only while all its bios are. No kernel flag, not in
 * RWBS. */
#define BLK_DIRECT   (1u << 7)
/* Stamped write (dev_req.h, DEV_REQ_STAMPED): b_buf holds one struct
 * dev_stamp per 4 KiB block, not the bytes; sector and length multiples
 * of 4 KiB. For bulk data whose bytes nobody needs but a check of a
 * header (the file-system model's). It merges as the same write of bytes
 * would: a request of stamped bios only goes to the device stamped, one
 * that mixes them with plain bios goes as bytes. No kernel flag, not in
 * RWBS. */
#define BLK_STAMPED  (1u << 8)

struct blk_bio;
typedef void (*blk_end_io_fn)(struct blk_bio *b);

/*
 * A bio. The caller fills the public fields, keeps the struct alive until
 * it completes, and must not touch it while it is in flight.
 */
struct blk_bio {
	enum blk_op b_op;
	uint32_t b_flags;        /* BLK_SYNC | BLK_META | ... */
	uint64_t b_sector;       /* 512-byte sectors */
	uint32_t b_nr_sectors;   /* > 0 for reads and writes */
	void *b_buf;             /* b_nr_sectors * 512 bytes */
	/* Kernel encoding (rt.h). 0 = the submitting thread's rt_ioprio_get()
	 * at each submission (the field itself is left 0, so a reused bio
	 * follows the thread); class NONE means BE at the given level. */
	uint16_t b_ioprio;
	/*
	 * Called once on completion, on whatever thread completes the
	 * request (usually the device's completion thread), without any blk
	 * lock held. After it returns the block layer never touches the bio
	 * again, so it may free it. It must not block for long and must not
	 * submit to a queue whose request pool may be exhausted. NULL: the
	 * bio is waited for with blk_wait().
	 */
	blk_end_io_fn b_end_io;
	void *b_private;
	/* Who may raise this bio's priority while it waits in the queue
	 * (blk_boost): a tag its owner chose, 0 = nobody. */
	uint64_t b_boost_tag;
	int b_error;             /* out: 0 or a negative errno */

	/* ---- owned by the block layer from blk_submit to completion ---- */
	struct blk_queue *b_queue;
	struct rt_link b_link;   /* plug list, request's bio list, end_io queue */
	uint64_t b_q_ns;         /* Q time (rt_now_ns) */
	uint64_t b_d_ns, b_c_ns; /* D and C of its request */
	uint16_t b_prio;         /* effective: b_ioprio or the thread's */
	int b_pid;               /* submitting thread */
	char b_comm[16];
	bool b_done;             /* [q_lock] for blk_wait */
	bool b_polling;          /* [q_lock] at the device, for blk_wait to run */
};

/*
 * Queue a bio. With a plug started on this thread the bio waits in the plug
 * (see below); otherwise it goes to the elevator at once. Returns 0 (the bio
 * will complete exactly once) or -EINVAL (misaligned for the device, out of
 * range, empty, b_buf NULL), -ESHUTDOWN (queue being freed), in which case
 * nothing is called back. May sleep when the request pool is exhausted
 * (trace event S).
 */
int blk_submit(struct blk_queue *q, struct blk_bio *b);
/*
 * Wait for a bio submitted without end_io. Flushes the calling thread's
 * plug first and unplugs the queue ("the thread blocking unplugs", 2.6.29
 * sync_buffer()). Returns the bio's b_error.
 */
int blk_wait(struct blk_bio *b);
/* blk_submit + blk_wait (b_end_io must be NULL). */
int blk_submit_wait(struct blk_queue *q, struct blk_bio *b);
/* A synchronous cache flush through the queue (RWBS "FN"). */
int blk_flush(struct blk_queue *q);
/* Run the queue-level unplug now (the 2.6.29 blk_unplug): dispatch what the
 * queue holds back. Does not touch per-thread plugs. */
void blk_unplug(struct blk_queue *q);
/*
 * Priority inheritance for queued I/O: every request still waiting in the
 * elevator (not yet dispatched) that holds a bio with b_boost_tag == tag
 * and a lower priority than ioprio takes ioprio (its bios' recorded prio
 * too, so blktrace events and the class statistics show it). The elevator
 * may move it: CFQ re-queues it in the queue of the higher class and level
 * (see cfq.c); noop and deadline only record it. Bios with that tag
 * submitted later (a plug still holds some) are raised as they reach the
 * elevator; the queue remembers the last BLK_BOOST_TAGS tags. tag 0 and
 * priorities that are not higher do nothing. Returns the number of
 * requests raised, or -EINVAL (tag 0, q NULL). Any rt thread of the world.
 */
#define BLK_BOOST_TAGS 4
int blk_boost(struct blk_queue *q, uint64_t tag, uint16_t ioprio);

/* ---- per-thread plugging ---------------------------------------------- */

/*
 * A plug gathers the calling thread's bios (for any queue) and hands them to
 * the elevators when it is finished, or when the thread blocks in a blk wait
 * (blk_wait, blk_submit_wait, blk_flush, request allocation). Only blk's own
 * waits flush the plug: an rt_cond_wait elsewhere does not, so do not hold a
 * plug across an unrelated wait for this I/O. Nested start/finish pairs are
 * allowed; only the outermost pair counts (as in Linux).
 *
 * Under the implicit-sync policy of a queue, a SYNC bio flushes the plug at
 * once (2.6.29's WRITE_SYNC carried UNPLUG): nothing batches.
 *
 * The plug is caller-owned memory registered in a thread-local pointer; it
 * must stay alive until blk_finish_plug.
 */
struct blk_plug {
	struct rt_link p_bios;           /* in submission order (b_link) */
	unsigned p_count;
	unsigned p_depth;                /* nesting */
};
void blk_start_plug(struct blk_plug *plug);
void blk_finish_plug(struct blk_plug *plug);
/* Flush the calling thread's plug, if any, keeping it started. */
void blk_flush_plug(void);

/* ---- queues and elevators --------------------------------------------- */

enum blk_plug_policy {
	/* Only finishing the plug or blocking unplugs (2.6.30 WRITE_SYNC_PLUG
	 * plus one explicit unplug; per-task plugging of 2.6.39+). */
	BLK_PLUG_EXPLICIT = 0,
	/* Every SYNC bio unplugs at once, as 2.6.29's WRITE_SYNC did. */
	BLK_PLUG_IMPLICIT_SYNC = 1,
};

struct blk_trace_event;
typedef void (*blk_trace_fn)(void *arg, const struct blk_trace_event *ev);

struct blk_queue_opts {
	/* The elevator: a registry name (below); NULL is "noop". */
	const char *elevator;            /* "noop" */
	enum blk_plug_policy plug_policy;/* BLK_PLUG_EXPLICIT */
	uint32_t max_sectors;            /* largest merged request, 1024 (512 KiB) */
	unsigned queue_depth;            /* requests in the device, 0 = dev_queue_depth() */
	unsigned nr_requests;            /* request pool, 128 (per queue) */
	/* 2.6.29 queue-level plugging: a request added to an empty queue of a
	 * rotational device plugs it until unplug_thresh requests wait, the
	 * unplug timer fires, a sync bio (implicit-sync) or a waiter unplugs. */
	bool queue_plug;                 /* false */
	unsigned unplug_thresh;          /* 4 */
	uint64_t unplug_delay_ns;        /* 3 ms */
	/* Tracing: events are kept in memory (up to trace_max_events; later
	 * ones are counted as dropped) and/or passed to trace_fn, which runs
	 * with q_lock held and must not call blk_*. */
	bool trace;                      /* false */
	size_t trace_max_events;         /* 65536 */
	blk_trace_fn trace_fn;
	void *trace_arg;
	unsigned trace_major, trace_minor; /* 254, 0 */
	/* The elevator's tunables: a struct its table (e_tunables below)
	 * describes, filled through that table (rt_param_defaults, then
	 * rt_param_parse); copied at blk_queue_new. NULL = the table's
	 * defaults. */
	const void *elevator_tunables;
};

/* Fill opts with the defaults above. */
void blk_queue_opts_default(struct blk_queue_opts *opts);
/* Create a queue over dev (which the caller still owns and closes after
 * blk_queue_free). opts NULL = defaults. 0, -EINVAL or -ENOMEM. */
int blk_queue_new(struct dev *dev, const struct blk_queue_opts *opts,
		  struct blk_queue **out);
/* Wait for every queued and in-flight request, stop kblockd, free. */
void blk_queue_free(struct blk_queue *q);
/* Wait until nothing is plugged, queued or in flight (flushes the caller's
 * plug first). */
void blk_drain(struct blk_queue *q);
struct dev *blk_queue_dev(const struct blk_queue *q);

/*
 * The elevator registry. Every elevator is a row: name, help, its hooks
 * (private to src/blk) and its tunables' table (param.h). An elevator is
 * named by its row's name (blk_queue_opts.elevator, a stack spec) and
 * reads its tunables as a struct of its own that its table describes
 * (blk_queue_opts.elevator_tunables, NULL = the table's defaults): noop,
 * deadline and cfq as any elevator added later. Adding an elevator = its
 * file (src/blk/NAME.c, with its `const struct blk_elevator_type
 * blk_elevator_NAME`) and one row in src/blk/elevators.c.
 */
struct blk_elv_ops;      /* src/blk/blk_int.h */
struct rt_param_table;
struct blk_elevator_type {
	const char *e_name;                       /* "cfq": also its group name */
	const char *e_help;                       /* one line */
	const struct blk_elv_ops *e_ops;
	const struct rt_param_table *e_tunables;  /* NULL: no tunables */
};
size_t blk_elevator_count(void);
/* Row i, or NULL past the end. */
const struct blk_elevator_type *blk_elevator_at(size_t i);
/* The row called name, or NULL. */
const struct blk_elevator_type *blk_elevator_find(const char *name);
/* The "queue" group: a table over struct blk_queue_opts (nr_requests,
 * max_sectors, queue_depth, queue_plug, unplug_thresh, unplug_delay_ms). */
const struct rt_param_table *blk_queue_params(void);

/* Names for tools: "explicit", "implicit-sync". */
int blk_plug_policy_parse(const char *s, enum blk_plug_policy *out);
const char *blk_plug_policy_name(enum blk_plug_policy p);

/* ---- blktrace --------------------------------------------------------- */

/*
 * One event, as blktrace records it. Actions: Q G I D C M F P U T S.
 * pid/comm are the thread that was running when the event fired (on D and
 * C lines often not the submitter); owner_pid is the thread that issued the
 * request's first bio, for tests and summaries.
 */
struct blk_trace_event {
	uint64_t seq;            /* 1, 2, ... per queue */
	uint64_t time_ns;        /* since the queue was created */
	unsigned cpu;            /* 0: rt has no notion of the current CPU */
	int pid;
	char comm[16];
	char action;             /* 'Q', 'G', ... */
	char rwbs[8];            /* "WS", "FWFSM", "N" ... */
	uint64_t sector;
	uint32_t nr_sectors;
	int error;               /* C: 0 or negative errno */
	unsigned nr;             /* U, T: requests queued */
	int owner_pid;
	uint16_t ioprio;         /* the request's (Q: the bio's) */
	unsigned major, minor;
};

/*
 * Format ev as blkparse's default line (no newline):
 *   "254,0    0        1     0.000000000  1001  Q  WS 2048 + 8 [writer]"
 * Returns the length, as snprintf.
 */
int blk_trace_format(const struct blk_trace_event *ev, char *buf, size_t len);
/* Copy events [start, start + n) of the in-memory trace into out; returns
 * how many were copied. blk_trace_count: events kept; dropped: not kept. */
size_t blk_trace_events(struct blk_queue *q, size_t start,
			struct blk_trace_event *out, size_t n);
size_t blk_trace_count(struct blk_queue *q);
uint64_t blk_trace_dropped(struct blk_queue *q);
/* Write every kept event, one blkparse line each, to f. */
int blk_trace_write(struct blk_queue *q, FILE *f);

/* ---- statistics: per process and per class ---------------------------- */

/* Completed bios of one process (pid) or one class, with btt's Q2C (bio
 * queued -> its request completed) and D2C (issued -> completed). */
struct blk_stat {
	int pid;                 /* -1 in class entries */
	char comm[16];           /* process name, or "rt", "be", "idle" */
	uint16_t ioprio;         /* last seen */
	uint64_t reads, writes, flushes; /* bios */
	uint64_t sectors;
	uint64_t merges;         /* bios merged into an existing request */
	uint64_t q2c_ns_sum, q2c_ns_max;
	uint64_t d2c_ns_sum, d2c_ns_max;
	uint64_t i2d_ns_sum, i2d_ns_max; /* time in the elevator */
};
#define BLK_STAT_MAX_PROCS 64 /* further processes are counted under pid 0 "other" */

/* Per-process entries in first-seen order; returns the count (<= n). */
size_t blk_stats_procs(struct blk_queue *q, struct blk_stat *out, size_t n);
/* Per effective class: out[0] RT, out[1] BE, out[2] IDLE. */
void blk_stats_classes(struct blk_queue *q, struct blk_stat out[3]);
/* Queue-wide counters. */
struct blk_queue_stats {
	uint64_t queued, merges, dispatched, completed, errors;
	uint64_t plugs, unplugs_io, unplugs_timer;
	unsigned in_flight_max;
	/* CFQ's idle windows: armed, ended by their timer (the thread never
	 * sent the request it was waited for), and their total time */
	uint64_t idles, idles_expired, idle_ns;
	/* blk_boost: calls that raised something, requests raised while
	 * queued (each counted once, at its first raise), and for those the
	 * time from insertion to that raise and from it to dispatch. */
	uint64_t boosts, boosted_rqs;
	uint64_t boost_wait_before_ns_sum, boost_wait_before_ns_max;
	uint64_t boost_wait_after_ns_sum, boost_wait_after_ns_max;
};
void blk_queue_stats(struct blk_queue *q, struct blk_queue_stats *out);
/* Writes and flushes that failed on q so far (as Linux's errseq): a
 * caller that notes it before its writes and finds it moved after them
 * knows that something failed meanwhile, and that a device (or a page
 * cache) that drops what it could not write may have dropped its writes
 * too, whatever their own completions said. Lock-free. */
uint64_t blk_write_errors(const struct blk_queue *q);
/* What the latest of those failures said (a negative errno: the host's
 * -ENOSPC, -EPERM, ..., as the device reported it), 0 if none yet. Read
 * after blk_write_errors, it is that failure's or a later one's. */
int blk_write_errno(const struct blk_queue *q);
/* A btt-like summary table (per process, per class: counts, Q2C and D2C
 * avg/max in ms) written to f. */
int blk_stats_print(struct blk_queue *q, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_BLK_H */

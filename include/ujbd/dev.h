/*
 * ujbd devices: one interface over files, RAM, simulated disks, a write
 * recorder and fault injection.
 *
 * A device takes requests (read, write, flush; writes may carry FUA and
 * PREFLUSH) asynchronously and completes each one exactly once by calling
 * its r_done callback on the device's own completion thread (a polled
 * request: on the thread that polls, see dev_poll), never inside
 * dev_submit(). That keeps the callers' locking simple (the block layer may
 * hold its queue lock while submitting, and take it again in r_done) and it
 * is what the sim world needs: an event handler never blocks, a completion
 * thread may.
 *
 * Durability model, the same for every backend that has a volatile cache:
 *   - a write completes when the device has it (possibly only in its cache);
 *   - a FLUSH completes when every write that completed before the flush was
 *     submitted is on stable media;
 *   - PREFLUSH on a write = a flush, then the write;
 *   - FUA on a write: it completes only once its own data is on stable media.
 *
 * Offsets and lengths are in bytes and must be multiples of the logical block
 * size (dev_block_size()), within dev_size(); a read or write of length 0,
 * and flags on a read other than POLLED and DIRECT, are -EINVAL (a pure
 * flush is DEV_OP_FLUSH). All
 * waiting goes through rt_*, so every backend works in both worlds.
 *
 * Ownership: a wrapper (rec, fault) takes ownership of the device it wraps
 * and closes it in dev_close().
 *
 * Errors: 0 or a negative errno; nothing here prints or exits.
 */
#ifndef UJBD_DEV_H
#define UJBD_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/rt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dev;

enum dev_op {
	DEV_OP_READ = 0,
	DEV_OP_WRITE = 1,
	DEV_OP_FLUSH = 2, /* r_off, r_len, r_buf ignored */
};

/* r_flags */
#define DEV_REQ_FUA      (1u << 0) /* write: durable before completion */
#define DEV_REQ_PREFLUSH (1u << 1) /* write: flush the cache first */
/* Polled: not run by the device's threads but by a thread that calls
 * dev_poll() (polled I/O, the kernel's REQ_POLLED), and r_done runs on
 * that thread. Any op; only where dev_can_poll() is true. Whoever submits
 * a polled request must make sure some thread polls until it completes. */
#define DEV_REQ_POLLED   (1u << 2)
/* A hint for large streaming transfers (recovery's reads of the log and its
 * home writes), read or write: move the data between the device and r_buf
 * without keeping it in a cache of the host, where the backend has one and
 * the request is aligned for it (file: an O_DIRECT descriptor of the same
 * file, for 4 KiB-aligned offsets, lengths and buffers; the page cache only
 * cost a copy and memory). Ignored elsewhere. Durability does not change:
 * a write so sent still needs a FLUSH (or FUA). */
#define DEV_REQ_DIRECT   (1u << 3)

struct dev_req {
	enum dev_op r_op;
	uint32_t r_flags;
	uint64_t r_off;    /* bytes */
	uint32_t r_len;    /* bytes */
	void *r_buf;
	uint16_t r_ioprio; /* kernel ioprio encoding (rt.h); io_uring passes it on */
	/* Called once, on the device's completion thread, after r_result is set.
	 * May take locks and submit more requests; must not free the device. */
	void (*r_done)(struct dev_req *r);
	void *r_priv;      /* caller's */
	/* Bytes transferred (r_len on success; less for a short write), 0 for a
	 * flush, or a negative errno. */
	int64_t r_result;
	/* Owned by the device while the request is in flight. */
	struct dev_req *r_next;
	uint64_t r_dev_time[2];
	uint64_t r_dev_seq;
};

/*
 * Submit r. Returns 0 (r_done will be called exactly once) or a negative
 * errno (-EINVAL for a misaligned or out-of-range request, -ESHUTDOWN after
 * dev_close started), in which case r_done is not called.
 */
int dev_submit(struct dev *d, struct dev_req *r);

/*
 * Polled I/O. A thread that waits for a polled request of its own runs it
 * instead of waiting for the device's threads to run it, and a waiter
 * that is woken by a thread hop (a completion thread, then the waiter)
 * saves both: on a virtual machine each hop costs tens of microseconds,
 * as much as a small durable write.
 *
 * dev_poll_gen() reads the count of polled completions; dev_poll(d, gen)
 * then runs one submitted polled request (any thread's) to completion,
 * r_done included, on the calling thread and returns true; or, when none
 * is waiting, sleeps until one is submitted or the count moves past gen
 * (a request completed on another poller) and returns false. The caller
 * checks its own request's state, reads the count, and polls again.
 */
bool dev_can_poll(const struct dev *d);
uint64_t dev_poll_gen(struct dev *d);
bool dev_poll(struct dev *d, uint64_t gen);

/* Synchronous helpers built on dev_submit (one dev_group request each). A
 * short transfer is -EIO. */
int dev_pread(struct dev *d, void *buf, uint32_t len, uint64_t off);
int dev_pwrite(struct dev *d, const void *buf, uint32_t len, uint64_t off,
	       uint32_t flags);
int dev_flush(struct dev *d);

/*
 * Requests in flight together, each waited for by the thread that sent it.
 * A synchronous helper costs one wait per request; a caller that streams
 * (recovery's read-ahead of the log and its home writes) keeps many
 * requests in flight and waits only when it needs one back. A group is one
 * lock and one condition that any number of requests share: the device's
 * completion thread only marks a request done and wakes the group.
 *
 * The caller fills gr_req's r_op, r_flags, r_off, r_len, r_buf and
 * r_ioprio; dev_group_submit sets the rest. A request stays where it is
 * until dev_group_wait has returned for it, and every request submitted is
 * waited for before dev_group_release. One thread submits and waits.
 */
struct dev_group {
	rt_mutex g_lock;
	rt_cond g_cond;            /* a request of the group completed */
};

struct dev_group_req {
	struct dev_req gr_req;
	struct dev_group *gr_group;
	bool gr_done;              /* [g_lock] */
};

int dev_group_init(struct dev_group *g);
void dev_group_release(struct dev_group *g);
/* Send r. 0, or a negative errno (as dev_submit; nothing to wait for). */
int dev_group_submit(struct dev *d, struct dev_group *g, struct dev_group_req *r);
/* Wait until r completed; its r_result (bytes, 0 for a flush, or -errno). */
int64_t dev_group_wait(struct dev_group_req *r);

uint64_t dev_size(const struct dev *d);          /* bytes */
uint32_t dev_block_size(const struct dev *d);    /* logical block size */
unsigned dev_queue_depth(const struct dev *d);   /* requests it takes at once */
bool dev_rotational(const struct dev *d);
bool dev_volatile_cache(const struct dev *d);
const char *dev_name(const struct dev *d);       /* "file:PATH", "hdd", ... */
/* Drain in-flight requests, stop the device's threads, free it. */
void dev_close(struct dev *d);

/* ---- file: a regular file or block device ----------------------------- */

enum dev_file_engine {
	DEV_FILE_AUTO = 0,   /* io_uring if the kernel allows it, else threads */
	DEV_FILE_URING = 1,  /* io_uring or fail with its errno */
	DEV_FILE_THREADS = 2 /* pread/pwrite/fdatasync on worker threads */
};

struct dev_file_opts {
	bool read_only;
	bool direct;          /* O_DIRECT (buffers must then be aligned) */
	bool create;          /* create the file if missing (with size) */
	uint64_t size;        /* create/extend a regular file to this size */
	enum dev_file_engine engine;
	unsigned workers;     /* thread engine: worker threads, 0 = 4 */
	unsigned queue_depth; /* 0 = 32 */
	uint32_t block_size;  /* 0 = 512, or the block device's logical size */
};
int dev_file_open(const char *path, const struct dev_file_opts *opts,
		  struct dev **out);
/* Which engine a file device ended up with: "io_uring" or "threads". */
const char *dev_file_engine_name(const struct dev *d);

/* ---- mem: RAM --------------------------------------------------------- */

/* A RAM device without a volatile cache (every write is durable). */
int dev_mem_new(uint64_t size, uint32_t block_size, struct dev **out);

/* ---- sim: simulated HDD and SSD --------------------------------------- */

/*
 * Data is kept in memory, sparse. Timing is modelled (docs/devices.md: the
 * models and their sources) and realised as a wait on the device's
 * completion thread: a virtual timer in the sim world, a real sleep in the
 * real world. Every field is a
 * row of the model's parameter table (dev_model_hdd.m_params,
 * dev_model_ssd.m_params in src/dev/sim_*.c: unit, default, range and
 * source); `ujbd devbench --params` prints them. The defaults are listed
 * here for the reader.
 */
struct dev_hdd_params {
	uint64_t size;            /* bytes, default 500 GB */
	uint32_t block_size;      /* 512 */
	double rpm;               /* 7200 */
	uint64_t cylinders;       /* 150000 */
	double seek_t1_ms;        /* track-to-track, 1.0 */
	double seek_a_ms, seek_b_ms;  /* short seeks a + b*sqrt(d): 1.0, 0.03375 */
	double seek_c_ms, seek_e_ms;  /* long seeks c + e*d: 4.066, 9.29e-5 */
	uint64_t seek_dc;         /* short/long boundary in cylinders, 33000 */
	double write_settle_ms;   /* 0.75 */
	double rate_outer_mb_s;   /* 120 (MB = 1e6 bytes) */
	double rate_inner_mb_s;   /* 60 */
	double overhead_ms;       /* per command, 0.2 */
	double interface_mb_s;    /* 300 (SATA 3 Gb/s) */
	uint64_t cache_bytes;     /* volatile write cache, 16 MiB; 0 = none */
	uint64_t readahead_bytes; /* segment buffer for sequential reads, 2 MiB */
	unsigned queue_depth;     /* 1; 32 = NCQ (shortest positioning first) */
	/* per command served from the drive's buffer without the head (a
	 * read-ahead hit, a cached write), 0.02; overhead_ms is for the rest */
	double hit_overhead_ms;
	/* The data sheet's average seek, 8.5: the whole seek curve (t1, a..e)
	 * is scaled by seek_avg_ms / seek_fit_avg_ms, the average of the
	 * fitted curve (8.5), so the defaults give exactly the fit. */
	double seek_avg_ms, seek_fit_avg_ms;
	/* A FLUSH (or PREFLUSH) costs this beyond the command overhead and
	 * the destage of the dirty cache, 0 */
	double flush_ms;
	/* The drive reorders its destage among this many dirty extents, 128 */
	unsigned destage_window;
	/* A write over dirty cached sectors replaces them in the cache, and a
	 * write that continues the newest dirty run joins it, up to this many
	 * bytes (1 MiB); 0 = every write is its own extent */
	uint64_t cache_merge_bytes;
};
struct dev_ssd_params {
	uint64_t size;            /* 80 GB */
	uint32_t block_size;      /* 512 */
	unsigned channels;        /* 10 */
	uint32_t page_bytes;      /* 4096 */
	double cmd_us;            /* 20 */
	double page_read_us;      /* 50 */
	double bus_us_per_page;   /* 100 (4 KiB over one channel's flash bus) */
	double program_us;        /* 200 */
	double interface_mb_s;    /* 300 */
	uint64_t cache_bytes;     /* 16 MiB; 0 = none */
	bool power_loss_protection; /* flush costs only the command */
	unsigned queue_depth;     /* 32 */
	double flush_us;          /* a FLUSH costs this beyond the command and
				   * the programs it waits for, 0 */
};
/* The table's defaults (rt_param_defaults of the model's table). */
void dev_hdd_defaults(struct dev_hdd_params *p);
void dev_ssd_defaults(struct dev_ssd_params *p);
int dev_sim_hdd_new(const struct dev_hdd_params *p, struct dev **out);
int dev_sim_ssd_new(const struct dev_ssd_params *p, struct dev **out);
/* Simulate a power cut: dirty data in the volatile cache is lost. The
 * device stays usable (as after power comes back). -EINVAL if not a sim. */
int dev_sim_power_cut(struct dev *d);

/* ---- the disk-model registry ------------------------------------------ */

/*
 * Every simulated disk model is a row: its name, its parameter table (the
 * struct its constructor reads, every field that shapes a result described
 * with unit, default, range and source: param.h) and its constructor.
 * Tools and the stack resolve model names only through here, so adding a
 * model is its file (src/dev/sim_NAME.c, with its `const struct dev_model
 * dev_model_NAME`) and one row in src/dev/models.c; nothing else names it.
 */
struct rt_param_table;
struct dev_model {
	const char *m_name;                     /* "hdd": also its group name */
	const char *m_help;                     /* one line */
	const struct rt_param_table *m_params;  /* t_size = sizeof its params */
	/* Fill a params struct (m_params->t_size bytes): the table's defaults
	 * and any field outside the table. */
	void (*m_defaults)(void *params);
	/* Create the device from a filled params struct. */
	int (*m_new)(const void *params, struct dev **out);
	size_t m_size_offset;                   /* offsetof the uint64_t size (bytes) */
};
extern const struct dev_model dev_model_hdd;
extern const struct dev_model dev_model_ssd;
size_t dev_model_count(void);
/* Row i (registry order), or NULL past the end. */
const struct dev_model *dev_model_at(size_t i);
/* The row called name, or NULL. */
const struct dev_model *dev_model_find(const char *name);

/* ---- rec: record every write and flush, build crash images ------------ */

/*
 * dev_rec_new wraps inner and records, in completion order, every write
 * (with its data and flags) and every flush, as dm-log-writes does. Each
 * entry also notes which entries had completed when it was submitted, so the
 * durable image can be computed exactly.
 */
enum dev_rec_kind { DEV_REC_WRITE = 1, DEV_REC_FLUSH = 2 };

struct dev_rec_entry {
	enum dev_rec_kind kind;
	uint32_t flags;       /* DEV_REQ_FUA / DEV_REQ_PREFLUSH */
	uint64_t off;         /* writes */
	uint32_t len;
	const void *data;     /* owned by the recorder */
	uint64_t submit_seq;  /* order of submission */
	uint64_t complete_seq;/* order of completion (= index in the log) */
	int64_t result;       /* as r_result; failed entries are never durable */
};

enum dev_crash_mode {
	/* Only what a completed flush (or FUA, or PREFLUSH) made durable. */
	DEV_CRASH_FLUSHED = 0,
	/* That, plus the chosen subset of later non-durable writes. */
	DEV_CRASH_SUBSET = 1,
	/* As SUBSET, and each chosen write may be torn: only some of its
	 * 512-byte sectors reach the media (chosen by seed). */
	DEV_CRASH_TORN = 2,
};

struct dev_crash_policy {
	enum dev_crash_mode mode;
	/* SUBSET/TORN: bit i set = the i-th non-durable write (in log order,
	 * counting only writes not covered by a flush) is applied. */
	const uint64_t *subset_bits;
	size_t subset_nbits;
	uint64_t seed;        /* TORN: which sectors survive */
};

int dev_rec_new(struct dev *inner, struct dev **out);
/* Entries recorded so far (completed requests). */
size_t dev_rec_count(const struct dev *rec);
int dev_rec_entry(const struct dev *rec, size_t i, struct dev_rec_entry *out);
/* Indexes of the completed flushes (and FUA/PREFLUSH writes): the points
 * where a crash test is most interesting. Returns the count, fills up to n.
 * idx[k] is the entry's log index: the image right after that entry is
 * dev_rec_image(rec, idx[k] + 1, ...). */
size_t dev_rec_flush_points(const struct dev *rec, size_t *idx, size_t n);
/* Writes among the first `point` entries that no completed flush covers. */
size_t dev_rec_pending_writes(const struct dev *rec, size_t point);
/*
 * The durable image after a crash right after the first `point` entries,
 * under policy, written onto dst (a device at least as large, holding the
 * initial contents the recording started from). Returns 0 or -errno.
 */
int dev_rec_image(const struct dev *rec, size_t point,
		  const struct dev_crash_policy *policy, struct dev *dst);
/* Forget the log (the recorder keeps recording from here on). */
void dev_rec_reset(struct dev *rec);

/* ---- fault injection, for any backend --------------------------------- */

struct dev_fault_opts {
	uint64_t seed;
	/* Fail the Nth request of that kind (1-based; 0 = never) with -EIO,
	 * and every later one if `sticky`. */
	uint64_t fail_read_nth, fail_write_nth, fail_flush_nth;
	bool sticky;
	/* Each request of that kind fails with this probability (0..1). */
	double read_error_rate, write_error_rate, flush_error_rate;
	/* The Nth write transfers only a seeded prefix (whole blocks). */
	uint64_t short_write_nth;
	/* The Nth flush reports success but the inner device's cache is lost
	 * (dev_sim_power_cut on a sim device; a no-op on others). */
	uint64_t lose_cache_flush_nth;
};
int dev_fault_new(struct dev *inner, const struct dev_fault_opts *opts,
		  struct dev **out);
/* Counts of injected faults so far. */
struct dev_fault_counts {
	uint64_t reads, writes, flushes;           /* requests seen */
	uint64_t read_errors, write_errors, flush_errors, short_writes, lost_caches;
};
void dev_fault_counts(const struct dev *d, struct dev_fault_counts *out);

/* ---- parsing for the tools -------------------------------------------- */

/* Parse a size such as "4096", "64k", "16M", "2G" (binary units). */
int dev_parse_size(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_DEV_H */

/*
 * ujbd devices: one interface over files, RAM, a write recorder and fault
 * injection: what a struct jbd_loc (format.h) is made of.
 *
 * A program that opens a journal by path (ujbd_open_path) never sees a
 * device; one that places a journal itself (ujbd_open, the offline API of
 * jbd_log.h) opens its devices here, builds the location, and closes them
 * after the journal. The recorder and fault injection wrap any device, so a
 * program can test its own crash recovery: record every write and flush,
 * then build the image a power cut at any point would leave.
 *
 * Durability model, the same for every backend that has a volatile cache:
 *   - a write completes when the device has it (possibly only in its cache);
 *   - a FLUSH completes when every write that completed before the flush was
 *     submitted is on stable media;
 *   - PREFLUSH on a write = a flush, then the write;
 *   - FUA on a write: it completes only once its own data is on stable media.
 *
 * Offsets and lengths are in bytes and must be multiples of the logical block
 * size (dev_block_size()), within dev_size(); a read or write of length 0 is
 * -EINVAL.
 *
 * Ownership: a wrapper (rec, fault) takes ownership of the device it wraps
 * and closes it in dev_close().
 *
 * Thread-safety: a device may be used by any number of threads at once;
 * dev_close() only once nobody else uses it. Internally each device has its
 * own threads (a completion thread, workers or io_uring); the asynchronous
 * request interface the block layer uses (ujbd/dev_req.h) and the simulated
 * disks of the lab (ujbd/dev_sim.h) are internal to ujbd.
 *
 * Errors: 0 or a negative errno; nothing here prints or exits.
 */
#ifndef UJBD_DEV_H
#define UJBD_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dev;

/* Write flags (dev_pwrite; recorded in struct dev_rec_entry). */
#define DEV_REQ_FUA      (1u << 0) /* write: durable before completion */
#define DEV_REQ_PREFLUSH (1u << 1) /* write: flush the cache first */
/* A hint for transfers nobody reads back through a cache of the host soon
 * (recovery's reads of the log and its home writes, a commit's log writes,
 * zeroing a new journal), read or write: move the data between the device
 * and the buffer without keeping it in a cache of the host, where the
 * backend has one and the request is aligned for it (file: an O_DIRECT
 * descriptor of the same file, for 4 KiB-aligned offsets, lengths and
 * buffers; the page cache only cost a copy and memory). Ignored elsewhere.
 * Durability does not change: a write so sent still needs a flush (or
 * FUA). (1u << 2) is internal (dev_req.h). */
#define DEV_REQ_DIRECT   (1u << 3)

/* Synchronous I/O: returns once the device completed it. A short transfer
 * is -EIO; flags other than DEV_REQ_FUA/PREFLUSH/DIRECT are -EINVAL. */
int dev_pread(struct dev *d, void *buf, uint32_t len, uint64_t off);
int dev_pwrite(struct dev *d, const void *buf, uint32_t len, uint64_t off,
	       uint32_t flags);
int dev_flush(struct dev *d);

uint64_t dev_size(const struct dev *d);          /* bytes */
uint32_t dev_block_size(const struct dev *d);    /* logical block size */
unsigned dev_queue_depth(const struct dev *d);   /* requests it takes at once */
bool dev_rotational(const struct dev *d);
bool dev_volatile_cache(const struct dev *d);
const char *dev_name(const struct dev *d);       /* "file:PATH", "hdd", ... */
/* Is the device still what was opened? A regular file must not have been
 * unlinked nor renamed over (its link count, every time), nor
 * replaced while it lives on under another name (its path names another
 * inode, or nothing: looked up at most once a second): -ESTALE then, else
 * 0. 0 at once for everything else (block devices, RAM, sim; wrappers ask
 * the device they wrap). */
int dev_check(struct dev *d);
/* Drain in-flight requests, stop the device's threads, free it. */
void dev_close(struct dev *d);

/* ---- file: a regular file or block device ----------------------------- */

enum dev_file_engine {
	DEV_FILE_AUTO = 0,   /* io_uring if the kernel allows it, else threads */
	DEV_FILE_URING = 1,  /* io_uring or fail with its errno */
	DEV_FILE_THREADS = 2 /* pread/pwrite/fdatasync on worker threads */
};

/* What dev_rotational() says of a regular file (whether a seek costs, for
 * a scheduler above that plugs and idles). A block device says its own. */
enum dev_file_rot {
	DEV_FILE_ROT_AUTO = 0,    /* a regular file: not rotational (its seeks are unknown) */
	DEV_FILE_ROT_BACKING = 1, /* a regular file: what its file system's disk says (none: not) */
};

struct dev_file_opts {
	bool read_only;
	bool direct;          /* O_DIRECT (a misaligned buffer goes through an aligned copy) */
	bool create;          /* create the file if missing (with size) */
	uint64_t size;        /* create/extend a regular file to this size */
	enum dev_file_engine engine;
	unsigned workers;     /* thread engine: worker threads, 0 = 4 */
	unsigned queue_depth; /* 0 = 32 */
	uint32_t block_size;  /* 0 = 512, or the block device's logical size */
	/* Claim the file while it is open (writable opens only): a block
	 * device is opened O_EXCL (-EBUSY if mounted or claimed), a regular
	 * file gets a write lock over all of it on its open file description
	 * (F_OFD_SETLK; -EBUSY if another open holds one, in this process or
	 * another). Advisory for files: it only stops those who ask. */
	bool exclusive;
	enum dev_file_rot rotational; /* a regular file: DEV_FILE_ROT_AUTO = not */
};
int dev_file_open(const char *path, const struct dev_file_opts *opts,
		  struct dev **out);
/* Which engine a file device ended up with: "io_uring" or "threads". */
const char *dev_file_engine_name(const struct dev *d);

/* ---- mem: RAM --------------------------------------------------------- */

/* A RAM device without a volatile cache (every write is durable). */
int dev_mem_new(uint64_t size, uint32_t block_size, struct dev **out);

/* ---- rec: record every write and flush, build crash images ------------ */

/*
 * dev_rec_new wraps inner and records, in completion order, every write
 * (with its data and flags) and every flush, as dm-log-writes does. Each
 * entry also notes which entries had completed when it was submitted, so the
 * durable image can be computed exactly. Failed requests are recorded too
 * (never durable); after a failed flush, the writes it would have made
 * durable stay non-durable for good (a cache that dropped them).
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
	/* Fail the Nth request of that kind (1-based; 0 = never) with
	 * fail_errno, and every later one if `sticky`. */
	uint64_t fail_read_nth, fail_write_nth, fail_flush_nth;
	bool sticky;
	/* The negative errno failed requests complete with; 0 = -EIO (-ENOSPC:
	 * the host file system under a file is full). */
	int fail_errno;
	/* Each request of that kind fails with this probability (0..1). */
	double read_error_rate, write_error_rate, flush_error_rate;
	/* The Nth write transfers only a seeded prefix (whole blocks). */
	uint64_t short_write_nth;
	/* The Nth flush reports success but the inner device's cache is lost
	 * (dev_sim_power_cut on a sim device; a no-op on others). */
	uint64_t lose_cache_flush_nth;
	/* A write with PREFLUSH counts as a flush too, first (its preflush):
	 * a flush fault may hit it, and then the write fails with it, nothing
	 * written. Off: it counts as a write only. */
	bool count_preflush;
	/* A FAILED flush also loses the inner device's cache (as a disk, or a
	 * page cache, that drops what it could not write back). */
	bool failed_flush_drops_cache;
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

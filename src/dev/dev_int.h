/*
 * Private to src/dev: the common device core every backend builds on.
 *
 * The one idea: a backend never calls r_done itself. It hands a finished
 * request to dev_core_complete(), which queues it for the device's
 * completion thread; that thread calls r_done and then drops the in-flight
 * count that dev_close() drains. So r_done never runs inside dev_submit(),
 * never under a backend lock, and a backend may finish requests from any of
 * its own threads. (A backend with a single completion thread of its own
 * may instead call dev_core_complete_direct() from it: the same rules, one
 * thread hop less.) A polled request (DEV_REQ_POLLED) is the exception:
 * the core keeps it for dev_poll(), which runs it with o_exec and calls
 * r_done on the polling thread, beside the completion thread.
 *
 * A backend embeds `struct dev` as its first member, fills d_ops and the
 * geometry, and calls dev_core_init() (which starts the completion thread).
 *
 * Lock order: a backend's own lock, then d_lock. d_lock is never held while
 * calling a backend or r_done.
 */
#ifndef UJBD_DEV_INT_H
#define UJBD_DEV_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "priv/dev_req.h"
#include "priv/dev_sim.h"
#include "priv/rt.h"

#include "rt/assert.h"

#define DEV_NAME_MAX 160

struct dev_ops {
	/* Take a request that passed validation. Return 0 (the backend will
	 * pass it to dev_core_complete exactly once) or a negative errno (it
	 * will not). Must not call r_done. */
	int (*o_submit)(struct dev *d, struct dev_req *r);
	/* Called after the device drained and its completion thread ended:
	 * stop the backend's threads, close what it wraps, free everything
	 * including d itself. */
	void (*o_close)(struct dev *d);
	/* Optional: drop the volatile cache (sim devices; wrappers forward). */
	int (*o_power_cut)(struct dev *d);
	/* Optional: dev_check (files; wrappers forward). */
	int (*o_check)(struct dev *d);
	/* Optional: run r now on the calling thread (a polled request) and
	 * return its r_result. A backend that has it can poll. */
	int64_t (*o_exec)(struct dev *d, struct dev_req *r);
};

struct dev {
	const struct dev_ops *d_ops;
	char d_name[DEV_NAME_MAX];
	uint64_t d_size;             /* bytes, a multiple of d_block_size */
	uint32_t d_block_size;
	unsigned d_queue_depth;
	bool d_rotational;
	bool d_volatile_cache;
	/* Memory alignment the backend needs of r_buf (O_DIRECT), 0 = none:
	 * dev_submit passes a misaligned request through an aligned copy. */
	uint32_t d_mem_align;
	/* Keeps stamped writes as stamps (DEV_REQ_STAMPED): the sim disks.
	 * Without it dev_submit passes them on as bytes. */
	bool d_stamps;

	rt_mutex d_lock;
	rt_cond d_work;              /* completion thread: something to do */
	rt_cond d_idle;              /* dev_close: d_inflight reached 0 */
	struct rt_link d_done;       /* [d_lock] finished, r_done not yet called */
	uint64_t d_inflight;         /* [d_lock] accepted, r_done not returned */
	bool d_closing;              /* [d_lock] dev_close started */
	bool d_stop;                 /* [d_lock] completion thread must exit */
	rt_thread *d_thread;         /* the completion thread, or NULL */
	struct rt_link d_polled;     /* [d_lock] polled, not yet taken */
	uint64_t d_poll_gen;         /* [d_lock] polled completions */
	rt_cond d_poll;              /* pollers: a request or a completion */
};

/* Fill the core part of d (ops, name and geometry already set) and start
 * its completion thread, named tname; NULL: no such thread, the backend
 * finishes every request with dev_core_complete_direct. 0 or -errno
 * (nothing to undo then but the backend's own state). */
int dev_core_init(struct dev *d, const char *tname);
/* Queue a finished request (r_result set) for its r_done. Any thread. */
void dev_core_complete(struct dev *d, struct dev_req *r);
/*
 * Call r_done here and now, on the calling backend thread, then drop the
 * in-flight count: for a backend that already finishes requests on a
 * thread of its own (the io_uring reaper), handing each one to the core's
 * completion thread would be one more thread hop per request, paid by
 * every waiter. The caller holds no backend lock, is not inside
 * dev_submit, and is the only thread finishing this device's requests, so
 * r_done still runs one at a time, in completion order.
 */
void dev_core_complete_direct(struct dev *d, struct dev_req *r);
/* Check r against d's geometry: 0 or -EINVAL. */
int dev_core_validate(const struct dev *d, const struct dev_req *r);
/* dev_core_init for a backend with one lock of its own (mem, the
 * wrappers): lock is initialised first, named lock_name, and released
 * again when the core cannot start. */
int dev_core_init_locked(struct dev *d, rt_mutex *lock, const char *lock_name,
			 const char *tname);

/* ---- a device over another (fault, rec) ------------------------------- */

/*
 * A wrapper embeds struct dev_wrap first. Its geometry is the inner
 * device's; it passes each request on as a request of its own (a struct
 * dev_wrap_req, first in the wrapper's per-request state) and finishes
 * the caller's when that one completes; power cuts and checks go to the
 * inner device (dev_wrap_power_cut, dev_wrap_check as its dev_ops); its
 * o_close closes the inner device (dev_close(w_inner)), then frees its own.
 */
struct dev_wrap {
	struct dev w_dev;
	struct dev *w_inner;
};

struct dev_wrap_req {
	struct dev_req wr_inner;  /* what the inner device is given */
	struct dev_req *wr_outer; /* the caller's */
	struct dev_wrap *wr_wrap;
};

/* Set w up over inner with ops: the inner device's geometry, the name
 * "KIND:INNER", lock (the wrapper's own, named lock_name) and the
 * completion thread "KIND-done". 0 or -errno (nothing to undo then). */
int dev_wrap_init(struct dev_wrap *w, const struct dev_ops *ops, struct dev *inner,
		  const char *kind, rt_mutex *lock, const char *lock_name);
/* Pass len bytes of r (r_len: all of it) on to the inner device as wr,
 * whose done (NULL: dev_wrap_done) runs when it completes. 0, or
 * dev_submit's -errno (wr is the caller's to free then). */
int dev_wrap_submit(struct dev_wrap *w, struct dev_wrap_req *wr, struct dev_req *r,
		    uint32_t len, void (*done)(struct dev_req *ir));
/* Finish the caller's request outer of w with result. */
void dev_wrap_complete(struct dev_wrap *w, struct dev_req *outer, int64_t result);
/* The plain done of a passed-on request (wr allocated alone, with
 * malloc): free wr, finish the caller's request with the inner result. */
void dev_wrap_done(struct dev_req *ir);
/* dev_ops hooks that go to the inner device. */
int dev_wrap_power_cut(struct dev *d);
int dev_wrap_check(struct dev *d);

/* ---- a sparse byte store: zeros until written ------------------------- */

struct dev_sparse;
int dev_sparse_new(uint64_t size, struct dev_sparse **out);
void dev_sparse_free(struct dev_sparse *s);
void dev_sparse_read(const struct dev_sparse *s, uint64_t off, void *buf,
		     uint32_t len);
int dev_sparse_write(struct dev_sparse *s, uint64_t off, const void *buf,
		     uint32_t len);
/* Write n stamped blocks from off (a multiple of DEV_STAMP_BLOCK). */
int dev_sparse_write_stamps(struct dev_sparse *s, uint64_t off, const struct dev_stamp *st,
			    size_t n);

/* ---- the volatile write cache shared by the sim models ---------------- */

/*
 * Dirty extents in arrival order, each holding its data. A newer write
 * also overwrites the overlapping part of older extents, so the extents can
 * be destaged in any order without an older one undoing a newer one.
 */
struct dev_cache_ext {
	uint64_t c_off;
	uint32_t c_len;
	bool c_stamped;       /* c_data: c_len / DEV_STAMP_BLOCK stamps, not bytes */
	uint8_t *c_data;
	uint64_t c_ready_ns;  /* SSD: on media from this time on */
	uint64_t c_seq;       /* arrival order */
};

struct dev_cache {
	struct dev_cache_ext *c_ext;
	size_t c_n, c_cap;
	uint64_t c_bytes;        /* dirty bytes */
	uint64_t c_limit;        /* capacity */
	uint64_t c_seq;
	/* Coalescing (0: off, each write its own extent): a write inside one
	 * dirty extent is absorbed by it (a write hit), one that starts where
	 * the newest extent ends extends it, up to c_merge_max bytes. The
	 * extent whose seq is c_pin (being destaged) takes neither. */
	uint64_t c_merge_max;
	uint64_t c_pin;
};

void dev_cache_init(struct dev_cache *c, uint64_t limit);
void dev_cache_release(struct dev_cache *c);
/* Add a dirty extent (overwriting older overlaps); stamped: buf holds
 * len / DEV_STAMP_BLOCK stamps. 0 or -ENOMEM. Whether the write starts an
 * extent or joins one does not depend on stamped: the timing is the
 * same either way. */
int dev_cache_add(struct dev_cache *c, uint64_t off, const void *buf,
		  uint32_t len, bool stamped, uint64_t ready_ns);
/* Overwrite the overlapping parts of cached extents with buf (a write
 * that bypasses the cache; stamped as above). 0 or -ENOMEM. */
int dev_cache_overlay_write(struct dev_cache *c, uint64_t off,
			    const void *buf, uint32_t len, bool stamped);
/* Copy the cached parts of [off, off+len) over buf (newest wins). */
void dev_cache_overlay_read(const struct dev_cache *c, uint64_t off,
			    void *buf, uint32_t len);
/* Move extent i to the media store and drop it. 0 or -ENOMEM. */
int dev_cache_destage(struct dev_cache *c, size_t i, struct dev_sparse *media);
/* Drop everything (power cut). */
void dev_cache_drop(struct dev_cache *c);

#endif

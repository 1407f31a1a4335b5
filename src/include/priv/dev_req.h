/*
 * ujbd devices, internal: asynchronous requests and polled I/O, the
 * interface the block layer (src/blk) drives the devices through. Not
 * installed: a program uses the synchronous calls of ujbd/dev.h.
 *
 * A device takes requests (read, write, flush; writes may carry FUA and
 * PREFLUSH) asynchronously and completes each one exactly once by calling
 * its r_done callback on the device's own completion thread (a polled
 * request: on the thread that polls, see dev_poll), never inside
 * dev_submit(). That keeps the callers' locking simple (the block layer may
 * hold its queue lock while submitting, and take it again in r_done) and it
 * is what the sim world needs: an event handler never blocks, a completion
 * thread may. Flags on a read other than POLLED and DIRECT are -EINVAL (a
 * pure flush is DEV_OP_FLUSH).
 * All waiting goes through rt_*, so every backend works in both worlds.
 *
 * Why internal: struct dev_req carries the devices' own bookkeeping
 * (r_link, r_dev_time, r_dev_seq), which changes whenever a backend does;
 * installed, every such change would break the ABI (docs/library.md).
 */
#ifndef UJBD_DEV_REQ_H
#define UJBD_DEV_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "ujbd/dev.h"
#include "priv/list.h"
#include "priv/rt.h"

enum dev_op {
	DEV_OP_READ = 0,
	DEV_OP_WRITE = 1,
	DEV_OP_FLUSH = 2, /* r_off, r_len, r_buf ignored */
};

/* r_flags: DEV_REQ_FUA, DEV_REQ_PREFLUSH and DEV_REQ_DIRECT (dev.h), and: */
/* Polled: not run by the device's threads but by a thread that calls
 * dev_poll() (polled I/O, the kernel's REQ_POLLED), and r_done runs on
 * that thread. Any op; only where dev_can_poll() is true. Whoever submits
 * a polled request must make sure some thread polls until it completes. */
#define DEV_REQ_POLLED   (1u << 2)
/* DEV_REQ_DIRECT (dev.h): past the host's cache; blk's BLK_DIRECT. */
/*
 * Stamped write: r_buf is not r_len bytes but r_len / DEV_STAMP_BLOCK
 * struct dev_stamp, one per 4 KiB block, each standing for the block that
 * dev_stamp_fill makes of it (its DEV_STAMP_BYTES, then zeros). r_off and
 * r_len are multiples of DEV_STAMP_BLOCK; writes only. A device that keeps
 * stamps (dev_takes_stamps: the simulated disks) stores them as they are,
 * so bulk file data costs the simulator 32 bytes a block, not 4096; any
 * other gets the bytes, made by dev_submit in a buffer of its own. Either
 * way a read returns exactly the bytes dev_stamp_fill makes.
 */
#define DEV_REQ_STAMPED  (1u << 4)
#define DEV_STAMP_BLOCK  4096u
#define DEV_STAMP_BYTES  32u

struct dev_stamp {
	uint8_t s_bytes[DEV_STAMP_BYTES];
};

/* The block a stamp stands for, into block[DEV_STAMP_BLOCK]. */
void dev_stamp_fill(void *block, const struct dev_stamp *st);
/* n blocks of n stamps, into buf[n * DEV_STAMP_BLOCK]. */
void dev_stamps_fill(void *buf, const struct dev_stamp *st, size_t n);
/* Does d keep stamped writes as stamps (or take them as bytes)? */
bool dev_takes_stamps(const struct dev *d);

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
	/* Owned by the device while the request is in flight: r_link is in
	 * one of its lists at a time (waiting, in service, completed). */
	struct rt_link r_link;
	uint64_t r_dev_time[2];
	uint64_t r_dev_seq;
};

/*
 * Submit r. Returns 0 (r_done will be called exactly once) or a negative
 * errno (-EINVAL for a misaligned or out-of-range request, -ESHUTDOWN after
 * dev_close started, -ENOMEM), in which case r_done is not called. r_buf
 * needs no alignment: a device that needs aligned memory (a file opened
 * O_DIRECT) copies a misaligned buffer through an aligned one of its own.
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

/*
 * Requests in flight together, each waited for by the thread that sent it.
 * A synchronous helper (dev.h: one dev_group request each) costs one wait
 * per request; a caller that streams (recovery's read-ahead of the log and
 * its home writes) keeps many requests in flight and waits only when it
 * needs one back. A group is one lock and one condition that any number of
 * requests share: the device's completion thread only marks a request done
 * and wakes the group.
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

#endif /* UJBD_DEV_REQ_H */

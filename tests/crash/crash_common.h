/*
 * The crash-safety harness shared by tests/crash/test_crash_*.c.
 *
 * The one idea: run a seeded multi-threaded workload on a device wrapped in
 * the `rec` recorder, remember what the workload was promised (which
 * transactions were acknowledged durable, and at which point of the log),
 * then rebuild every durable image a power cut could have left, recover it,
 * and check that the data area equals "the state after transactions 1..k"
 * for some k no older than the last acknowledged transaction.
 *
 * Layout: ONE device, journal as a region, so a single log orders every
 * journal and data write and a crash point is one index into it.
 *
 *   blocks [0, CR_NDATA)            data area
 *     [0, CR_NMETA)                 M: metadata, shared by every thread
 *     D (per thread)                ordered data (ujbd_write_data)
 *     R (per thread)                recycled: metadata, revoked, reused as
 *                                   data (after the revoke is committed, as
 *                                   ext4 does), metadata again...
 *   blocks [CR_JSTART, +CR_JLEN)    the journal (small: the log wraps and
 *                                   checkpointing runs under log pressure)
 *
 * Every block written holds an encoding of (block, tid, gseq) and a fill
 * pattern derived from them, so any state can be decoded and a torn or
 * misplaced block is seen as garbage. gseq orders all writes globally (under
 * the model lock); the initial contents are gseq 0. Some writes start with
 * the jbd2 magic so that escaping is exercised.
 *
 * Checking an image after recovery, for a candidate k (relative tids):
 *   lastC = the last event on the block with tid <= k.
 *   - no lastC:  initial contents (ORDERED/WRITEBACK: or any data write,
 *                which may reach its home before its transaction commits)
 *   - META:      exactly lastC (journaled: atomic)
 *   - REVOKE:    any valid contents of that block (the block is free)
 *   - DATA:      JOURNAL: exactly lastC; ORDERED: lastC or a later data write
 *                (never older: ordered data of a committed transaction is
 *                durable); WRITEBACK: any valid contents.
 * A stale journaled copy replayed over a revoked-then-reused block, or a
 * checkpoint of a revoked buffer over reused data, shows up as META where
 * DATA is expected.
 *
 * Images: for each flush point of the log (just before it completes, just
 * after, and the end of the log), the writes no completed flush covers are
 * the "pending" ones; all 2^n subsets are applied when n <= 12, seeded
 * samples beyond. Images are built in memory from the recorded entries (the
 * pending writes are the last n non-FUA writes before the point, which is
 * what dev_rec_pending_writes counts) and cross-checked against
 * dev_rec_image on a sample of points. Torn commit blocks: a pending write
 * holding a commit block is torn with DEV_CRASH_TORN; a FUA commit block is
 * torn sector by sector (the power cut during the FUA write itself).
 * Each distinct image is recovered with jbd_recover; a sample also through
 * ujbd_open (recover), whose result must be the same.
 */
#ifndef UJBD_TESTS_CRASH_COMMON_H
#define UJBD_TESTS_CRASH_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define CR_FN static __attribute__((unused))

#define CR_BS 1024u
#define CR_SECTOR 512u
#define CR_NTHR_MAX 4
#define CR_NMETA 24u
#define CR_ND_PER 6u      /* ordered data blocks per thread */
#define CR_NR_PER 3u      /* recycled blocks per thread */
#define CR_DBASE CR_NMETA
#define CR_RBASE (CR_DBASE + CR_NTHR_MAX * CR_ND_PER)
#define CR_NDATA (CR_RBASE + CR_NTHR_MAX * CR_NR_PER)
#define CR_JSTART 64u
#define CR_JLEN_DEFAULT 160u
#define CR_JLEN_MAX 512u
#define CR_NBLK_MAX (CR_JSTART + CR_JLEN_MAX)
#define CR_MAX_EVENTS 8192
#define CR_MAX_ACKS 4096
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* Under a sanitizer a recovery costs some ten times more (fresh mappings
 * for each journal's buffers): the memory checks need the code paths, not
 * every image, so fewer subsets of the pending writes, and the crash
 * points at both ends and every CR_SAN_STRIDE-th between. The plain build
 * (make check) checks them all. */
#define CR_ALL_SUBSETS_MAX 6
#define CR_SAMPLES 12
#define CR_SAN_EDGE 3u
#define CR_SAN_STRIDE 4u
#else
#define CR_ALL_SUBSETS_MAX 12   /* all subsets up to this many pending writes */
#define CR_SAMPLES 48           /* seeded subsets beyond */
#endif

_Static_assert(CR_NDATA <= CR_JSTART, "data area overlaps the journal");

enum cr_kind { CR_EV_META = 1, CR_EV_DATA = 2, CR_EV_REVOKE = 3 };

struct cr_event {
	uint32_t block;
	uint32_t rtid;   /* 1 + tid - the first tid of the run (0: before it) */
	uint64_t gseq;
	enum cr_kind kind;
};

struct cr_ack {
	uint32_t rtid;   /* every tid <= rtid is durable ... */
	size_t count;    /* ... at any crash point >= count */
	size_t dcount;   /* two-device runs: the data recorder's count then */
};

/* One run's configuration. */
struct cr_cfg {
	const char *name;
	uint64_t seed;
	enum ujbd_data_mode mode;
	enum jbd_csum_kind csum;
	bool async_commit;
	uint32_t first_tid;   /* initial s_sequence (near 2^32: tid wrap) */
	uint32_t jlen;        /* journal blocks */
	unsigned threads;
	unsigned ops;         /* per thread */
	bool sim_ssd;         /* the recorder wraps a sim SSD instead of mem */
	const char *elevator;       /* of the shared queue (NULL: noop) */
	uint64_t cache_blocks;      /* buffer cache limit (0: 256, all blocks fit) */
	bool wake_always, sync_all; /* UJBD_WAKE_ALWAYS, UJBD_SYNC_ALL */
	bool caller_commit;   /* fsyncs commit on their own threads */
	/* ujbd's defaults as they are (async commit, caller commit, journaled
	 * ordered data): async_commit and caller_commit above are not applied */
	bool defaults;
	bool jbd2;            /* start from ujbd_opts_jbd2 instead */
	uint32_t ordered_kib; /* ordered_journal_bytes in KiB (0: as started) */
	/* test_crash_twodev: fail the Nth write of the journal device (once);
	 * the journal aborts and the workload ends early; -EROFS/-EIO are
	 * then expected answers, and nothing may be acknowledged after */
	uint64_t fault_write_nth;
	bool flushed_only;    /* CRASH_FLUSHED_ONLY: no subsets, no torn images */
	/* check one crash point only (a reproducer); 0 = all, SIZE_MAX = the
	 * end of the log */
	size_t only_point;
};

/* What one run found. */
struct cr_result {
	uint64_t points, images, unique, torn, fua_torn, opened, xchecks;
	uint64_t pending_max, sampled_points, torn_refused, double_images;
	uint32_t last_rtid, commits_acked;
	size_t log_entries;
	int failures;
	char first_failure[512];
};

/* Everything the workload and the checker share. */
struct cr {
	const struct cr_cfg *cfg;
	struct cr_result *res;
	uint32_t nblk;
	struct dev *rec;
	struct ujbd *j;
	uint32_t tid0;
	rt_mutex lock;                   /* the model lock: gseq, events, acks */
	uint64_t gseq;                   /* [lock] */
	struct cr_event *ev;             /* [lock] */
	size_t nev;                      /* [lock] */
	struct cr_ack acks[CR_MAX_ACKS]; /* [lock] */
	size_t nacks;                    /* [lock] */
	uint32_t max_rtid;               /* [lock] */
	int wl_err;                      /* [lock] first workload error */
	char wl_msg[300];                /* [lock] */
	uint8_t *snap;                   /* the device at the start of the log */
	/* two-device runs (test_crash_twodev): the data device's recorder; the
	 * journal is then all of c->rec (identity map) */
	struct dev *drec;
	uint32_t acked_max;              /* [lock] newest rtid acknowledged, 0 none */
	bool aborted;                    /* [lock] a handle saw the abort */
	/* two-device runs: the options of the two queues ujbd makes (a
	 * trace_fn sees every completion); NULL: the defaults */
	const struct blk_queue_opts *blk_opts;
	/* the I/O-error sweep (test_crash_faults): every error the workload
	 * meets is handed here instead of failing the run (it is called on the
	 * thread that met it, without the model lock) */
	void (*on_error)(struct cr *c, const char *what, int err);
	void *on_error_arg;
	/* per-block event index for the checker */
	size_t *bev_start, *bev_n;
	size_t *bev;
};

/* ---- block contents ------------------------------------------------------ */

static inline void cr_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}
static inline uint32_t cr_get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Contents of block b written by gseq in rtid. */
CR_FN void cr_fill(uint8_t *p, uint32_t b, uint32_t rtid, uint64_t gseq)
{
	uint32_t x = (uint32_t)(gseq * 2654435761u) ^ (b * 40503u);

	for (uint32_t i = 32; i < CR_BS; i += 4) {
		x = x * 1664525u + 1013904223u;
		cr_put32(p + i, x);
	}
	if (gseq % 5 == 3) {               /* escaped in the log */
		p[0] = 0xC0; p[1] = 0x3B; p[2] = 0x39; p[3] = 0x98;
	} else {
		memcpy(p, "UJCR", 4);
	}
	cr_put32(p + 4, b);
	cr_put32(p + 8, rtid);
	cr_put32(p + 12, (uint32_t)gseq);
	cr_put32(p + 16, (uint32_t)(gseq >> 32));
	cr_put32(p + 20, ~b);
	cr_put32(p + 24, 0);
	cr_put32(p + 28, 0);
}

/* Decode: 0 and *gseq if the block is a valid write of block b, else -1. */
CR_FN int cr_decode(const uint8_t *p, uint32_t b, uint64_t *gseq)
{
	static uint8_t want[CR_BS];
	uint64_t g = cr_get32(p + 12) | (uint64_t)cr_get32(p + 16) << 32;

	if (cr_get32(p + 4) != b || cr_get32(p + 20) != ~b)
		return -1;
	cr_fill(want, b, cr_get32(p + 8), g);
	if (memcmp(want, p, CR_BS) != 0)
		return -1;
	*gseq = g;
	return 0;
}

/* ---- the model ------------------------------------------------------------ */

/* Record an event. [lock] held by the caller. */
static inline int cr_event_add(struct cr *c, uint32_t b, uint32_t rtid,
			       uint64_t gseq, enum cr_kind kind)
{
	if (c->nev == CR_MAX_EVENTS)
		return -ENOSPC;
	c->ev[c->nev++] = (struct cr_event){ b, rtid, gseq, kind };
	if (rtid > c->max_rtid && rtid < 0x80000000u)
		c->max_rtid = rtid;
	return 0;
}

CR_FN void cr_fail_wl(struct cr *c, const char *what, int err, uint32_t b)
{
	if (c->on_error) {
		c->on_error(c, what, err);
		return;
	}
	rt_mutex_lock(&c->lock);
	if (c->cfg->fault_write_nth && (err == -EROFS || err == -EIO)) {
		c->aborted = true;   /* the injected fault: expected */
	} else if (!c->wl_err) {
		c->wl_err = err ? err : -EINVAL;
		snprintf(c->wl_msg, sizeof(c->wl_msg), "%s (block %u): %d %s", what,
			 b, err, strerror(err < 0 ? -err : err));
	}
	rt_mutex_unlock(&c->lock);
}

/* tid acknowledged durable now. */
CR_FN void cr_ack(struct cr *c, ujbd_tid_t tid)
{
	size_t n = dev_rec_count(c->rec), dn = c->drec ? dev_rec_count(c->drec) : 0;

	rt_mutex_lock(&c->lock);
	if (c->nacks < CR_MAX_ACKS)
		c->acks[c->nacks++] = (struct cr_ack){ tid - c->tid0 + 1, n, dn };
	if (tid - c->tid0 + 1 > c->acked_max && tid - c->tid0 + 1 < 0x80000000u)
		c->acked_max = tid - c->tid0 + 1;
	c->res->commits_acked++;
	rt_mutex_unlock(&c->lock);
}

/* The newest rtid acknowledged at crash point p (UINT32_MAX: none). */
CR_FN uint32_t cr_bound(const struct cr *c, size_t p)
{
	uint32_t best = UINT32_MAX;

	for (size_t i = 0; i < c->nacks; i++)
		if (c->acks[i].count <= p &&
		    (best == UINT32_MAX || c->acks[i].rtid > best))
			best = c->acks[i].rtid;
	return best;
}

/* ---- the workload ---------------------------------------------------------- */

enum cr_rstate { CR_R_FREE = 0, CR_R_META, CR_R_FREED, CR_R_DATA };

struct cr_thr {
	struct cr *c;
	unsigned id;
	struct rt_prng prng;
	enum cr_rstate rstate[CR_NR_PER];
	ujbd_tid_t last_tid;
	rt_thread *t;
};

static inline uint32_t cr_dblock(unsigned thr, unsigned i)
{
	return CR_DBASE + thr * CR_ND_PER + i;
}
static inline uint32_t cr_rblock(unsigned thr, unsigned i)
{
	return CR_RBASE + thr * CR_NR_PER + i;
}

/* Journal block b as metadata in handle h: fill under the model lock. */
static inline int cr_meta(struct cr *c, struct ujbd_handle *h, uint32_t b)
{
	struct ujbd_buf *buf;
	uint32_t rtid = ujbd_handle_tid(h) - c->tid0 + 1;
	int err = ujbd_get_write_access(h, b, &buf);

	if (err < 0)
		return err;
	rt_mutex_lock(&c->lock);
	c->gseq++;
	cr_fill(ujbd_buf_data(buf), b, rtid, c->gseq);
	err = cr_event_add(c, b, rtid, c->gseq, CR_EV_META);
	rt_mutex_unlock(&c->lock);
	if (err == 0)
		err = ujbd_dirty_metadata(h, buf);
	ujbd_buf_put(buf);
	return err;
}

/* A data block of this thread (no other thread writes it). */
static inline int cr_data(struct cr *c, struct ujbd_handle *h, uint32_t b)
{
	static _Thread_local uint8_t buf[CR_BS];
	uint32_t rtid = ujbd_handle_tid(h) - c->tid0 + 1;
	enum cr_kind k = c->cfg->mode == UJBD_DATA_JOURNAL ? CR_EV_META : CR_EV_DATA;
	int err;

	rt_mutex_lock(&c->lock);
	c->gseq++;
	cr_fill(buf, b, rtid, c->gseq);
	err = cr_event_add(c, b, rtid, c->gseq, k);
	rt_mutex_unlock(&c->lock);
	return err < 0 ? err : ujbd_write_data(h, b, buf);
}

/* One handle: some shared metadata, some of this thread's data. */
CR_FN int cr_op_handle(struct cr_thr *t)
{
	struct cr *c = t->c;
	unsigned nm = 1 + (unsigned)rt_prng_below(&t->prng, 3);
	unsigned nd = (unsigned)rt_prng_below(&t->prng, 3);
	bool sync = rt_prng_below(&t->prng, 4) == 0;
	struct ujbd_handle *h;
	uint32_t b = 0;
	int err = ujbd_start(c->j, nm + nd + 1, &h), err2;

	if (err < 0) {
		cr_fail_wl(c, "ujbd_start", err, 0);
		return err;
	}
	t->last_tid = ujbd_handle_tid(h);
	ujbd_handle_set_sync(h, sync);
	for (unsigned i = 0; i < nm && err == 0; i++) {
		b = (uint32_t)rt_prng_below(&t->prng, CR_NMETA);
		err = cr_meta(c, h, b);
	}
	for (unsigned i = 0; i < nd && err == 0; i++) {
		b = cr_dblock(t->id, (unsigned)rt_prng_below(&t->prng, CR_ND_PER));
		err = cr_data(c, h, b);
	}
	err2 = ujbd_stop(h);
	if (err == 0)
		err = err2;
	if (err < 0) {
		cr_fail_wl(c, "handle", err, b);
		return err;
	}
	if (sync)
		cr_ack(c, t->last_tid);
	return 0;
}

/* The end of a revoking handle: record the revoke in the model (if err is
 * still 0), stop, commit and wait, and note the acknowledgement. */
static inline int cr_revoke_commit(struct cr *c, struct ujbd_handle *h, ujbd_tid_t tid,
				   uint32_t b, int err)
{
	int err2;

	rt_mutex_lock(&c->lock);
	c->gseq++;
	if (err == 0)
		err = cr_event_add(c, b, tid - c->tid0 + 1, c->gseq, CR_EV_REVOKE);
	rt_mutex_unlock(&c->lock);
	err2 = ujbd_stop(h);
	if (err == 0)
		err = err2;
	if (err == 0)
		err = ujbd_commit_tid(c->j, tid);
	if (err == 0)
		err = ujbd_wait_tid(c->j, tid);
	if (err == 0)
		cr_ack(c, tid);
	return err;
}

/* Revoke r in its own handle, then wait for that commit (the block may be
 * reused only once its freeing is durable, as ext4's allocator does). */
static inline int cr_revoke(struct cr_thr *t, uint32_t b)
{
	struct cr *c = t->c;
	struct ujbd_handle *h;
	ujbd_tid_t tid;
	int err = ujbd_start(c->j, 1, &h);

	if (err < 0)
		return err;
	tid = ujbd_handle_tid(h);
	/* Another handle of this same transaction may have journaled b: that
	 * must work (ujbd.h; jbd2 forgets and revokes). The runtime once
	 * refused it with -EINVAL: test_crash_revoke keeps that reproducer. */
	err = ujbd_revoke(h, b);
	return cr_revoke_commit(c, h, tid, b, err);
}

/*
 * ext4's way of freeing a block it changed in the same handle: journal it,
 * forget it, revoke it (the forgotten copy is never logged), then wait for
 * that commit before the block may be reused.
 */
static inline int cr_forget_revoke(struct cr_thr *t, uint32_t b)
{
	struct cr *c = t->c;
	struct ujbd_handle *h;
	struct ujbd_buf *buf;
	ujbd_tid_t tid;
	int err = ujbd_start(c->j, 2, &h);

	if (err < 0)
		return err;
	tid = ujbd_handle_tid(h);
	err = cr_meta(c, h, b);
	if (err == 0)
		err = ujbd_get_write_access(h, b, &buf);
	if (err == 0) {
		err = ujbd_forget(h, buf);
		ujbd_buf_put(buf);
	}
	if (err == 0)
		err = ujbd_revoke(h, b);
	return cr_revoke_commit(c, h, tid, b, err);
}

/* One step of a recycled block's life: meta -> revoked -> data -> meta
 * (or, one time in four, journal + forget + revoke in one handle). */
CR_FN int cr_op_recycle(struct cr_thr *t)
{
	struct cr *c = t->c;
	unsigned i = (unsigned)rt_prng_below(&t->prng, CR_NR_PER);
	uint32_t b = cr_rblock(t->id, i);
	struct ujbd_handle *h;
	int err = 0, err2;

	const char *what = "recycle: revoke";

	if (t->rstate[i] == CR_R_META) {
		err = cr_revoke(t, b);
		if (err == 0)
			t->rstate[i] = CR_R_FREED;
		goto out;
	}
	if (t->rstate[i] != CR_R_FREED && rt_prng_below(&t->prng, 4) == 0) {
		what = "recycle: journal, forget and revoke in one handle";
		err = cr_forget_revoke(t, b);
		if (err == 0)
			t->rstate[i] = CR_R_FREED;
		goto out;
	}
	what = "recycle: start";
	err = ujbd_start(c->j, 2, &h);
	if (err < 0)
		goto out;
	if (t->rstate[i] == CR_R_FREED) {
		what = "recycle: write_data after the revoke";
		err = cr_data(c, h, b);
		t->rstate[i] = CR_R_DATA;
	} else {
		what = t->rstate[i] == CR_R_DATA ? "recycle: journal a reused data block"
						 : "recycle: journal";
		err = cr_meta(c, h, b);
		t->rstate[i] = CR_R_META;
	}
	err2 = ujbd_stop(h);
	if (err == 0)
		err = err2;
out:
	if (err < 0)
		cr_fail_wl(c, what, err, b);
	return err;
}

/* fsync-like: commit the last tid this thread used and wait. */
CR_FN int cr_op_fsync(struct cr_thr *t)
{
	struct cr *c = t->c;
	int err;

	if (!t->last_tid)
		return 0;
	err = ujbd_commit_tid(c->j, t->last_tid);
	if (err == 0)
		err = ujbd_wait_tid(c->j, t->last_tid);
	if (err < 0) {
		cr_fail_wl(c, "commit_tid/wait_tid", err, 0);
		return err;
	}
	cr_ack(c, t->last_tid);
	return 0;
}

CR_FN void cr_worker(void *arg)
{
	struct cr_thr *t = arg;
	struct cr *c = t->c;

	for (unsigned op = 0; op < c->cfg->ops; op++) {
		uint64_t r = rt_prng_below(&t->prng, 100);
		int err;

		if (r < 65)
			err = cr_op_handle(t);
		else if (r < 90)
			err = cr_op_recycle(t);
		else
			err = cr_op_fsync(t);
		if (err < 0)
			return;
		rt_sleep_ns(rt_prng_below(&t->prng, 4 * RT_NS_PER_MS));
	}
}

/* ---- setting up the device ------------------------------------------------- */

CR_FN void cr_loc(struct jbd_loc *loc, struct jbd_extent *ext, struct dev *d,
		  uint32_t jlen, uint32_t nblk)
{
	*ext = (struct jbd_extent){ .lblk = 0, .pblk = CR_JSTART, .len = jlen };
	*loc = (struct jbd_loc){ .j_dev = d, .j_blocksize = CR_BS, .j_map = ext,
		.j_nmap = 1, .j_len = jlen, .j_sb_block = 0, .j_data = d,
		.j_data_blocks = nblk };
}

/* Does the run's journal use async commit (ujbd_open: AUTO is on)? */
CR_FN bool cr_async(const struct cr_cfg *cfg)
{
	return cfg->defaults && !cfg->jbd2 ? true : cfg->async_commit;
}

/* Initial data contents and a formatted journal, flushed; snapshot taken. */
CR_FN int cr_prepare(struct cr *c)
{
	const struct cr_cfg *cfg = c->cfg;
	struct jbd_format_opts fo = { .blocksize = CR_BS, .blocks = cfg->jlen,
		.csum = cfg->csum, .async_commit = cr_async(cfg),
		.sequence = cfg->first_tid };
	struct dev *jd;
	uint8_t *buf = calloc(cfg->jlen, CR_BS);
	int err;

	if (!buf)
		return -ENOMEM;
	for (unsigned i = 0; i < 16; i++)
		fo.uuid[i] = (uint8_t)(cfg->seed * 31 + i * 7 + 1);
	for (uint32_t b = 0; b < CR_NDATA; b++)
		cr_fill(c->snap + (size_t)b * CR_BS, b, 0, 0);
	err = dev_mem_new((uint64_t)cfg->jlen * CR_BS, 512, &jd);
	if (err < 0)
		goto out;
	err = jbd_format(jd, &fo, NULL);
	if (err == 0)
		err = dev_pread(jd, buf, cfg->jlen * CR_BS, 0);
	dev_close(jd);
	if (err < 0)
		goto out;
	memcpy(c->snap + (size_t)CR_JSTART * CR_BS, buf, (size_t)cfg->jlen * CR_BS);
	err = dev_pwrite(c->rec, c->snap, c->nblk * CR_BS, 0, 0);
	if (err == 0)
		err = dev_flush(c->rec);
	if (err == 0)
		dev_rec_reset(c->rec);
out:
	free(buf);
	return err;
}

CR_FN int cr_new_inner(const struct cr_cfg *cfg, uint32_t nblk, struct dev **out)
{
	if (cfg->sim_ssd) {
		struct dev_ssd_params p;

		dev_ssd_defaults(&p);
		p.size = (uint64_t)nblk * CR_BS;
		p.block_size = 512;
		p.cache_bytes = 64 * 1024;
		return dev_sim_ssd_new(&p, out);
	}
	return dev_mem_new((uint64_t)nblk * CR_BS, 512, out);
}

/* Two-device runs: the data device, the journal's kind of disk, or an SSD
 * whose pages take program_us to program (0: as the journal's). */
CR_FN int cr_new_data(const struct cr_cfg *cfg, unsigned program_us, struct dev **out)
{
	struct dev_ssd_params p;

	if (!program_us)
		return cr_new_inner(cfg, CR_NDATA, out);
	dev_ssd_defaults(&p);
	p.size = (uint64_t)CR_NDATA * CR_BS;
	p.block_size = 512;
	p.cache_bytes = 64 * 1024;
	p.program_us = program_us;
	return dev_sim_ssd_new(&p, out);
}

/* Two-device runs: the journal formatted on jdev (all of it; before any
 * fault wrapper, so that it counts only the runtime's I/O), the initial
 * data written to ddev and flushed; both snapshotted. */
CR_FN int cr_prepare_two(const struct cr_cfg *cfg, struct dev *jdev, struct dev *ddev,
			 uint8_t *snap_j, uint8_t *snap_d)
{
	struct jbd_format_opts fo = { .blocksize = CR_BS, .blocks = cfg->jlen,
		.csum = cfg->csum, .async_commit = cr_async(cfg),
		.sequence = cfg->first_tid };
	int err;

	for (unsigned i = 0; i < 16; i++)
		fo.uuid[i] = (uint8_t)(cfg->seed * 17 + i + 3);
	for (uint32_t b = 0; b < CR_NDATA; b++)
		cr_fill(snap_d + (size_t)b * CR_BS, b, 0, 0);
	err = jbd_format(jdev, &fo, NULL);
	if (err == 0)
		err = dev_pread(jdev, snap_j, cfg->jlen * CR_BS, 0);
	if (err == 0)
		err = dev_pwrite(ddev, snap_d, CR_NDATA * CR_BS, 0, 0);
	if (err == 0)
		err = dev_flush(ddev);
	return err;
}

CR_FN void cr_opts(const struct cr_cfg *cfg, struct ujbd_opts *o)
{
	if (cfg->jbd2)
		ujbd_opts_jbd2(o);
	else
		ujbd_opts_default(o);
	o->data_mode = cfg->mode;
	o->commit_interval_ns = 20 * RT_NS_PER_MS;
	if (!cfg->defaults) {
		o->async_commit = cfg->async_commit;
		o->caller_commit = cfg->caller_commit;
	}
	if (cfg->ordered_kib)
		o->ordered_journal_bytes = cfg->ordered_kib * 1024;
	o->cache_blocks = cfg->cache_blocks ? cfg->cache_blocks : 256;
	o->wake = cfg->wake_always ? UJBD_WAKE_ALWAYS : UJBD_WAKE_NEEDED;
	o->journal_sync = cfg->sync_all ? UJBD_SYNC_ALL : UJBD_SYNC_FSYNC_ONLY;
	o->recover = true;
}

/* Run the workload; leaves c->rec holding the log. */
CR_FN int cr_workload(struct cr *c)
{
	struct cr_thr thr[CR_NTHR_MAX];
	struct jbd_loc loc;
	struct jbd_extent ext;
	struct ujbd_opts o;
	struct blk_queue *q;
	struct jbd_err jerr = { 0 };
	unsigned n = c->cfg->threads;
	int err;

	cr_loc(&loc, &ext, c->rec, c->cfg->jlen, c->nblk);
	if (c->drec) {
		/* journal: the whole of c->rec; data: c->drec (own queues) */
		ext = (struct jbd_extent){ 0, 0, c->cfg->jlen };
		loc.j_data = c->drec;
		loc.j_data_blocks = CR_NDATA;
		q = NULL;
	} else {
		struct blk_queue_opts qo;

		blk_queue_opts_default(&qo);
		qo.elevator = c->cfg->elevator;
		err = blk_queue_new(c->rec, &qo, &q);
		if (err < 0)
			return err;
	}
	cr_opts(c->cfg, &o);
	o.journal_queue = o.data_queue = q;
	o.blk_opts = c->blk_opts;   /* used only for the queues ujbd makes */
	err = ujbd_open(&loc, &o, &c->j, &jerr);
	if (err < 0) {
		snprintf(c->wl_msg, sizeof(c->wl_msg), "ujbd_open: %d %.200s", err, jerr.msg);
		if (q)
			blk_queue_free(q);
		return err;
	}
	c->tid0 = ujbd_running_tid(c->j);
	for (unsigned i = 0; i < n; i++) {
		thr[i] = (struct cr_thr){ .c = c, .id = i };
		rt_prng_init(&thr[i].prng, c->cfg->seed * 1000003u + i);
		char name[16];
		snprintf(name, sizeof(name), "crash-w%u", i & 7u);
		err = rt_thread_create(&thr[i].t, name, cr_worker, &thr[i]);
		if (err < 0)
			n = i;
	}
	for (unsigned i = 0; i < n; i++)
		rt_thread_join(thr[i].t);
	rt_mutex_lock(&c->lock);
	uint32_t last = c->max_rtid;
	rt_mutex_unlock(&c->lock);
	int cerr = ujbd_close(c->j);
	c->j = NULL;
	if (cerr == 0) {
		struct jbd_journal jj;

		cr_ack(c, c->tid0 + last - 1); /* a clean close made all durable */
		/* ... and left the journal empty, the next tid after the last */
		cerr = jbd_journal_load(&loc, &jj, NULL);
		if (cerr == 0 && jbd_get_be32(jj.j_sb.s_start) != 0)
			cerr = -EUCLEAN;
		if (cerr == 0 && !ujbd_tid_gt(jbd_get_be32(jj.j_sb.s_sequence),
					      c->tid0 + last - 1))
			cerr = -ERANGE;
		if (cerr < 0)
			cr_fail_wl(c, "after ujbd_close: s_start 0 and s_sequence past the last tid",
				   cerr, 0);
	} else {
		cr_fail_wl(c, "ujbd_close", cerr, 0);
	}
	if (q)
		blk_queue_free(q);
	return err < 0 ? err : 0;
}

/* ---- images -------------------------------------------------------------- */

struct cr_log {
	struct dev_rec_entry *e;
	size_t n;
};

/* A copy of rec's entries (their data stays the recorder's). 0 or -ENOMEM. */
CR_FN int cr_log_load(struct cr_log *lg, const struct dev *rec)
{
	lg->n = dev_rec_count(rec);
	lg->e = calloc(lg->n + 1, sizeof(*lg->e));
	for (size_t i = 0; lg->e && i < lg->n; i++)
		dev_rec_entry(rec, i, &lg->e[i]);
	return lg->e ? 0 : -ENOMEM;
}

CR_FN bool cr_written(const struct dev_rec_entry *e)
{
	return e->kind == DEV_REC_WRITE && e->result > 0;
}

static inline uint32_t cr_wlen(const struct dev_rec_entry *e)
{
	return e->result < (int64_t)e->len ? (uint32_t)e->result : e->len;
}

/* Whether a journal-region write holds a commit block. */
CR_FN bool cr_has_commit(const struct dev_rec_entry *e)
{
	uint64_t jbase = (uint64_t)CR_JSTART * CR_BS;

	if (!cr_written(e) || e->off < jbase)
		return false;
	for (uint32_t o = 0; o + CR_BS <= cr_wlen(e); o += CR_BS) {
		uint32_t type, seq;

		if ((e->off + o) % CR_BS == 0 &&
		    jbd_hdr_decode((const uint8_t *)e->data + o, &type, &seq) &&
		    type == JBD2_COMMIT_BLOCK)
			return true;
	}
	return false;
}

/* Build into img: base (entries [0, f) applied, all durable), then entries
 * [f, p) that are FUA or chosen pending writes. pend[i] = log index of the
 * i-th pending write. torn_idx (SIZE_MAX: none) is applied only for the
 * sectors in torn_mask. */
CR_FN void cr_build(const struct cr_log *lg, const uint8_t *base, size_t bytes,
		    size_t f, size_t p, const size_t *pend, size_t npend,
		    const uint64_t *mask, uint8_t *img, size_t torn_idx,
		    uint64_t torn_mask)
{
	size_t k = 0;

	memcpy(img, base, bytes);
	for (size_t i = f; i < p; i++) {
		const struct dev_rec_entry *e = &lg->e[i];
		bool apply;

		if (!cr_written(e))
			continue;
		if (k < npend && pend[k] == i)
			apply = (mask[k / 64] >> (k % 64)) & 1, k++;
		else
			apply = true;   /* FUA: durable */
		if (!apply)
			continue;
		if (i == torn_idx) {
			for (uint32_t s = 0; s < cr_wlen(e); s += CR_SECTOR)
				if ((torn_mask >> (s / CR_SECTOR)) & 1)
					memcpy(img + e->off + s,
					       (const uint8_t *)e->data + s, CR_SECTOR);
		} else {
			memcpy(img + e->off, e->data, cr_wlen(e));
		}
	}
}

/* ---- checking -------------------------------------------------------------- */

CR_FN void cr_index_events(struct cr *c)
{
	size_t pos = 0;

	c->bev_start = calloc(CR_NDATA, sizeof(size_t));
	c->bev_n = calloc(CR_NDATA, sizeof(size_t));
	c->bev = calloc(c->nev + 1, sizeof(size_t));
	for (size_t i = 0; i < c->nev; i++)
		c->bev_n[c->ev[i].block]++;
	for (uint32_t b = 0; b < CR_NDATA; b++) {
		c->bev_start[b] = pos;
		pos += c->bev_n[b];
		c->bev_n[b] = 0;
	}
	for (size_t i = 0; i < c->nev; i++) {
		uint32_t b = c->ev[i].block;
		c->bev[c->bev_start[b] + c->bev_n[b]++] = i;
	}
}

/* Is contents g (gseq, 0 initial) of block b allowed in state k? */
CR_FN bool cr_allowed(const struct cr *c, uint32_t b, uint64_t g, uint32_t k,
		      const char **why)
{
	enum ujbd_data_mode mode = c->cfg->mode;
	const struct cr_event *last = NULL, *found = NULL;

	for (size_t i = 0; i < c->bev_n[b]; i++) {
		const struct cr_event *e = &c->ev[c->bev[c->bev_start[b] + i]];

		if (e->rtid <= k && (!last || e->gseq > last->gseq))
			last = e;
		if (e->gseq == g && e->kind != CR_EV_REVOKE)
			found = e;
	}
	if (g != 0 && !found) {
		*why = "contents never written by the workload";
		return false;
	}
	if (!last) {
		if (g == 0 || (mode != UJBD_DATA_JOURNAL && found->kind == CR_EV_DATA))
			return true;
		*why = "uncommitted metadata reached its home";
		return false;
	}
	switch (last->kind) {
	case CR_EV_REVOKE:
		return true;
	case CR_EV_META:
		*why = "journaled block differs from the committed state";
		return g == last->gseq;
	case CR_EV_DATA:
		if (mode == UJBD_DATA_WRITEBACK)
			return true;
		if (g == last->gseq ||
		    (found && found->kind == CR_EV_DATA && g > last->gseq))
			return true;
		*why = found && found->kind == CR_EV_META
			? "stale metadata over reused data (revoke not honoured?)"
			: "ordered data of a committed transaction lost";
		return false;
	}
	return false;
}

/* The smallest k >= bound the data area matches, or -1 (msg filled). */
CR_FN int64_t cr_match(const struct cr *c, const uint8_t *data, uint32_t bound,
		       char *msg, size_t len)
{
	uint64_t g[CR_NDATA];
	uint32_t lo = bound == UINT32_MAX ? 0 : bound;
	const char *why = "";

	for (uint32_t b = 0; b < CR_NDATA; b++)
		if (cr_decode(data + (size_t)b * CR_BS, b, &g[b]) < 0) {
			snprintf(msg, len, "block %u holds garbage (torn or misplaced)", b);
			return -1;
		}
	for (uint32_t k = lo; k <= c->max_rtid; k++) {
		uint32_t b;

		for (b = 0; b < CR_NDATA; b++)
			if (!cr_allowed(c, b, g[b], k, &why))
				break;
		if (b == CR_NDATA)
			return k;
	}
	/* explain with the closest state: the k with the fewest bad blocks */
	uint32_t best_k = lo, best_bad = UINT32_MAX, nbad;
	for (uint32_t k = lo; k <= c->max_rtid; k++) {
		nbad = 0;
		for (uint32_t b = 0; b < CR_NDATA; b++)
			nbad += !cr_allowed(c, b, g[b], k, &why);
		if (nbad < best_bad) {
			best_bad = nbad;
			best_k = k;
		}
	}
	for (uint32_t b = 0; b < CR_NDATA; b++)
		if (!cr_allowed(c, b, g[b], best_k, &why)) {
			snprintf(msg, len,
				 "no state k >= %u matches; closest k=%u (%u bad blocks): block %u"
				 " holds gseq %" PRIu64 " (rtid %u): %s", lo, best_k, best_bad,
				 b, g[b], cr_get32(data + (size_t)b * CR_BS + 8), why);
			return -1;
		}
	snprintf(msg, len, "no state k in [%u, %u] matches", lo, c->max_rtid);
	return -1;
}

/* ---- recovering and checking one image ------------------------------------ */

struct cr_ck {
	struct cr *c;
	const struct cr_log *lg;
	struct dev *imgdev, *xdev;      /* recovery target, cross-check target */
	uint8_t *img, *base, *data, *data2;
	size_t bytes;
	struct rt_prng prng;
	uint64_t *seen;                 /* image hashes of this point */
	bool torn;                      /* the image has a torn commit block */
	unsigned torn_budget;           /* DEV_CRASH_TORN images left (each costs
					 * a replay of the log prefix) */
	size_t seen_cap;
};

CR_FN void cr_failure(struct cr_ck *k, size_t p, const char *what, const char *msg)
{
	struct cr_result *r = k->c->res;

	if (r->failures++ == 0)
		snprintf(r->first_failure, sizeof(r->first_failure),
			 "%s seed %" PRIu64 " crash point %zu of %zu (%s): %s",
			 k->c->cfg->name, k->c->cfg->seed, p, k->lg->n, what, msg);
	if (r->failures <= 3)
		fprintf(stderr, "  crash: %s seed %" PRIu64 " point %zu (%s): %s\n",
			k->c->cfg->name, k->c->cfg->seed, p, what, msg);
}

/* Recover k->img on imgdev, into `out` (the data area). via_open: through
 * ujbd_open instead of jbd_recover; *tid gets the tid of a handle started
 * right after. */
CR_FN int cr_recover(struct cr_ck *k, uint8_t *out, bool via_open, uint32_t *tid,
		     char *msg, size_t len)
{
	struct cr *c = k->c;
	struct jbd_loc loc;
	struct jbd_extent ext;
	struct jbd_err jerr = { 0 };
	int err = dev_pwrite(k->imgdev, k->img, (uint32_t)k->bytes, 0, 0);

	if (err < 0)
		return err;
	cr_loc(&loc, &ext, k->imgdev, c->cfg->jlen, c->nblk);
	if (via_open) {
		struct ujbd_opts o;
		struct ujbd *j;

		cr_opts(c->cfg, &o);
		err = ujbd_open(&loc, &o, &j, &jerr);
		if (err == 0) {
			/* the tid a new handle gets: tids only grow */
			struct ujbd_handle *h;

			err = ujbd_start(j, 1, &h);
			if (err == 0) {
				*tid = ujbd_handle_tid(h);
				err = ujbd_stop(h);
			}
			ujbd_close_hard(j);
		}
	} else {
		struct jbd_journal jj;
		struct jbd_recover_opts ro = { 0 };
		struct jbd_recover_result rr;

		err = jbd_journal_load(&loc, &jj, &jerr);
		if (err == 0)
			err = jbd_recover(&jj, &ro, &rr, &jerr);
		if (err == 0)
			*tid = rr.nothing_to_do ? 0 : rr.next_tid;
	}
	if (err < 0) {
		snprintf(msg, len, "%s: %d (%s)", via_open ? "ujbd_open" : "jbd_recover",
			 err, jerr.msg);
		if (err != -EBADMSG)
			return err;
	}
	int rerr = dev_pread(k->imgdev, out, CR_NDATA * CR_BS, 0);
	return rerr < 0 ? rerr : err;
}

/* Recover the journal on d (jbd_recover) and read the data area into out. */
CR_FN int cr_recover_on(struct cr_ck *k, struct dev *d, uint8_t *out)
{
	struct jbd_loc loc;
	struct jbd_extent ext;
	struct jbd_journal jj;
	struct jbd_recover_opts ro = { 0 };
	struct jbd_recover_result rr;
	int err;

	cr_loc(&loc, &ext, d, k->c->cfg->jlen, k->c->nblk);
	err = jbd_journal_load(&loc, &jj, NULL);
	if (err == 0)
		err = jbd_recover(&jj, &ro, &rr, NULL);
	if (err == 0)
		err = dev_pread(d, out, CR_NDATA * CR_BS, 0);
	return err;
}

/*
 * A crash during recovery: ujbd_open recovers k->img on a recorder; every
 * durable image of that recovery's own log (at each flush point, flushed
 * writes only or all of them) is recovered again and must give what the
 * first recovery gave (k->data): replay is idempotent, and the journal is
 * never marked empty before the replayed blocks are durable.
 */
CR_FN void cr_double(struct cr_ck *k, size_t p, const char *what)
{
	struct cr *c = k->c;
	struct dev *m = NULL, *r = NULL;
	struct jbd_loc loc;
	struct jbd_extent ext;
	struct ujbd_opts o;
	struct ujbd *j;
	uint8_t *out = malloc(CR_NDATA * CR_BS);
	size_t nfp, *fp = NULL;
	char msg[160];
	int err = out ? dev_mem_new(k->bytes, 512, &m) : -ENOMEM;

	if (err == 0 && (err = dev_rec_new(m, &r)) < 0)
		dev_close(m);
	if (err == 0)
		err = dev_pwrite(r, k->img, (uint32_t)k->bytes, 0, 0);
	if (err == 0)
		err = dev_flush(r);
	if (err < 0)
		goto out;
	dev_rec_reset(r);
	cr_loc(&loc, &ext, r, c->cfg->jlen, c->nblk);
	cr_opts(c->cfg, &o);
	err = ujbd_open(&loc, &o, &j, NULL);
	if (err < 0)
		goto out;
	ujbd_close_hard(j);
	nfp = dev_rec_flush_points(r, NULL, 0);
	fp = calloc(2 * nfp + 1, sizeof(size_t));
	if (!fp) {
		err = -ENOMEM;
		goto out;
	}
	dev_rec_flush_points(r, fp, nfp);
	for (size_t i = nfp; i-- > 0;)
		fp[2 * i] = fp[i], fp[2 * i + 1] = fp[i] + 1;
	fp[2 * nfp] = dev_rec_count(r);
	for (size_t i = 0; i <= 2 * nfp && err == 0; i++) {
		for (int all = 0; all < 2 && err == 0; all++) {
			uint64_t bits[4] = { ~0ull, ~0ull, ~0ull, ~0ull };
			struct dev_crash_policy pol = { .mode = all ? DEV_CRASH_SUBSET
								    : DEV_CRASH_FLUSHED,
				.subset_bits = bits, .subset_nbits = 256 };

			err = dev_pwrite(k->xdev, k->img, (uint32_t)k->bytes, 0, 0);
			if (err == 0)
				err = dev_rec_image(r, fp[i], &pol, k->xdev);
			if (err == 0)
				err = cr_recover_on(k, k->xdev, out);
			c->res->double_images++;
			if (err == 0 && memcmp(out, k->data, CR_NDATA * CR_BS) != 0) {
				snprintf(msg, sizeof(msg), "a crash at point %zu of the recovery's own"
					 " log (%s) changes what recovery gives", fp[i],
					 all ? "all writes" : "flushed writes");
				cr_failure(k, p, what, msg);
				goto out;
			}
		}
	}
out:
	if (err < 0) {
		snprintf(msg, sizeof(msg), "crash during recovery: %d", err);
		cr_failure(k, p, what, msg);
	}
	if (r)
		dev_close(r);
	free(fp);
	free(out);
}

/* Recover the image in k->img and check it against the model. */
CR_FN void cr_one(struct cr_ck *k, size_t p, uint32_t bound, const char *what,
		  bool via_open)
{
	struct cr *c = k->c;
	char msg[320] = "";
	uint32_t tid = 0, tid2 = 0;
	int err = cr_recover(k, k->data, false, &tid, msg, sizeof(msg));

	c->res->images++;
	if (err == -EBADMSG && cr_async(c->cfg)) {
		/* async commit on v2/v3: a torn transaction is reported, not hidden */
		c->res->torn_refused++;
		return;
	}
	if (err == -EUCLEAN && k->torn) {
		/* a torn commit block fails its checksum: with v2/v3 recovery
		 * refuses the journal as corrupt, as the kernel and e2fsck do
		 * (nothing is written); detected, not silently wrong */
		c->res->torn_refused++;
		return;
	}
	if (err < 0) {
		cr_failure(k, p, what, msg[0] ? msg : "recovery I/O error");
		return;
	}
	if (cr_match(c, k->data, bound, msg, sizeof(msg)) < 0) {
		cr_failure(k, p, what, msg);
		return;
	}
	if (c->res->unique % 211 == 7)
		cr_double(k, p, what);
	if (!via_open)
		return;
	c->res->opened++;
	err = cr_recover(k, k->data2, true, &tid2, msg, sizeof(msg));
	if (err < 0) {
		cr_failure(k, p, what, msg);
		return;
	}
	if (memcmp(k->data, k->data2, CR_NDATA * CR_BS) != 0)
		cr_failure(k, p, what, "ujbd_open recovered another state than jbd_recover");
	else if (bound != UINT32_MAX && !ujbd_tid_gt(tid2, c->tid0 + bound - 1))
		cr_failure(k, p, what, "ujbd_open: a new handle got a tid not after the acknowledged one");
}

/* A 64-bit hash of an image (never 0). */
CR_FN uint64_t cr_hash(const uint8_t *img, size_t bytes)
{
	uint64_t h = jbd_crc32c(~0u, img, bytes);

	h = h << 32 | jbd_crc32c(0x1234567u, img + bytes / 2, bytes / 2);
	return h | 1;
}

/* 1 if this image of `bytes` was already checked (its hash is in the open
 * table seen of cap slots, cleared by the caller), else remember it. */
CR_FN int cr_seen(uint64_t *seen, size_t cap, const uint8_t *img, size_t bytes)
{
	uint64_t h = cr_hash(img, bytes);

	for (size_t i = h % cap, n = 0; n < cap; i = (i + 1) % cap, n++) {
		if (seen[i] == h)
			return 1;
		if (seen[i] == 0) {
			seen[i] = h;
			return 0;
		}
	}
	return 0;
}

/* The pending writes at point p of rec's log lg: the last n non-FUA
 * writes before it. */
CR_FN size_t cr_pending(const struct dev *rec, const struct cr_log *lg, size_t p,
			size_t *pend, size_t max)
{
	size_t n = dev_rec_pending_writes(rec, p), got = 0;

	if (n > max)
		n = max;
	for (size_t i = p; i-- > 0 && got < n;) {
		const struct dev_rec_entry *e = &lg->e[i];

		if (cr_written(e) && !(e->flags & DEV_REQ_FUA))
			pend[n - 1 - got++] = i;
	}
	return got;
}

/* Compare an image of dev_rec_image with ours. */
CR_FN void cr_xcheck(struct cr_ck *k, size_t p, const struct dev_crash_policy *pol,
		     const uint8_t *ours)
{
	uint8_t *theirs = malloc(k->bytes);
	int err = theirs ? 0 : -ENOMEM;

	if (err == 0)
		err = dev_pwrite(k->xdev, k->c->snap, (uint32_t)k->bytes, 0, 0);
	if (err == 0)
		err = dev_rec_image(k->c->rec, p, pol, k->xdev);
	if (err == 0)
		err = dev_pread(k->xdev, theirs, (uint32_t)k->bytes, 0);
	k->c->res->xchecks++;
	if (err < 0)
		cr_failure(k, p, "cross-check", "dev_rec_image failed");
	else if (memcmp(theirs, ours, k->bytes) != 0)
		cr_failure(k, p, "cross-check", "our image differs from dev_rec_image");
	free(theirs);
}

/* Torn commit blocks at point p. */
CR_FN void cr_torn(struct cr_ck *k, size_t p, size_t f, const size_t *pend,
		   size_t n, uint32_t bound, uint64_t *mask)
{
	const struct cr_log *lg = k->lg;

	/* a pending write holding a commit block (async commit), torn by rec */
	for (size_t i = 0; i < n && i < 64; i++) {
		if (!cr_has_commit(&lg->e[pend[i]]))
			continue;
		for (uint64_t s = 1; s <= 2 && k->torn_budget; s++, k->torn_budget--) {
			uint64_t bits = 1ull << i;
			struct dev_crash_policy pol = { .mode = DEV_CRASH_TORN,
				.subset_bits = &bits, .subset_nbits = n, .seed = s };
			int err = dev_pwrite(k->xdev, k->c->snap, (uint32_t)k->bytes, 0, 0);

			if (err == 0)
				err = dev_rec_image(k->c->rec, p, &pol, k->xdev);
			if (err == 0)
				err = dev_pread(k->xdev, k->img, (uint32_t)k->bytes, 0);
			if (err < 0) {
				cr_failure(k, p, "torn", "dev_rec_image(TORN) failed");
				return;
			}
			k->c->res->torn++;
			k->torn = true;
			cr_one(k, p, bound, "torn pending commit block", false);
			k->torn = false;
		}
	}
	/* the FUA commit write completing at p-1, torn sector by sector */
	const struct dev_rec_entry *e = p ? &lg->e[p - 1] : NULL;
	if (!e || !(e->flags & DEV_REQ_FUA) || !cr_has_commit(e))
		return;
	uint32_t sectors = cr_wlen(e) / CR_SECTOR;
	bound = cr_bound(k->c, p - 1);  /* the FUA never completed */
	for (uint64_t tm = 1; tm + 1 < (1ull << (sectors < 6 ? sectors : 6)); tm++)
		for (int all = 0; all < 2; all++) {
			memset(mask, all ? 0xff : 0, 8 * ((n + 63) / 64 + 1));
			cr_build(lg, k->base, k->bytes, f, p, pend, n, mask, k->img,
				 p - 1, tm);
			k->c->res->fua_torn++;
			k->torn = true;
			cr_one(k, p, bound, "torn FUA commit block", false);
			k->torn = false;
		}
}

/* Check every image of point p. */
CR_FN void cr_point(struct cr_ck *k, size_t p, size_t *f_cur, size_t *pend,
		    size_t pend_max, uint64_t *mask, bool xcheck)
{
	struct cr *c = k->c;
	const struct cr_log *lg = k->lg;
	size_t n = cr_pending(c->rec, lg, p, pend, pend_max);
	size_t f = n ? pend[0] : p, words = (n + 63) / 64 + 1;
	uint32_t bound = cr_bound(c, p);
	uint64_t nmask = n <= CR_ALL_SUBSETS_MAX ? 1ull << n : CR_SAMPLES + 2;

	if (c->cfg->flushed_only)
		nmask = 1;   /* a quick sweep: only what the flushes made durable */

	/* the base only grows: every write before the first pending one is durable */
	for (; *f_cur < f; ++*f_cur)
		if (cr_written(&lg->e[*f_cur]))
			memcpy(k->base + lg->e[*f_cur].off, lg->e[*f_cur].data,
			       cr_wlen(&lg->e[*f_cur]));
	c->res->points++;
	if (n > c->res->pending_max)
		c->res->pending_max = n;
	if (n > CR_ALL_SUBSETS_MAX)
		c->res->sampled_points++;
	memset(k->seen, 0, k->seen_cap * sizeof(uint64_t));
	for (uint64_t m = 0; m < nmask; m++) {
		memset(mask, 0, words * 8);
		if (n <= CR_ALL_SUBSETS_MAX)
			mask[0] = m;
		else if (m == 1)
			memset(mask, 0xff, words * 8);
		else if (m > 1)
			for (size_t w = 0; w < words; w++)
				mask[w] = rt_prng_next(&k->prng);
		cr_build(lg, k->base, k->bytes, f, p, pend, n, mask, k->img, SIZE_MAX, 0);
		if (xcheck && (m == 0 || m == nmask - 1)) {
			struct dev_crash_policy pol = { .mode = m ? DEV_CRASH_SUBSET
								  : DEV_CRASH_FLUSHED,
				.subset_bits = mask, .subset_nbits = n };
			cr_xcheck(k, p, &pol, k->img);
		}
		if (cr_seen(k->seen, k->seen_cap, k->img, k->bytes))
			continue;
		c->res->unique++;
		char what[64];
		snprintf(what, sizeof(what), "%zu pending, subset %#" PRIx64 "%s", n,
			 mask[0], n > 64 ? "..." : "");
		cr_one(k, p, bound, what, c->res->unique % 61 == 1);
	}
	if (!c->cfg->flushed_only)
		cr_torn(k, p, f, pend, n, bound, mask);
}

/* The crash points of a log of n entries whose flushes are at fp[0..nfp):
 * just before and just after each flush, then the end; ascending, each once.
 * pt and fpi have room for 2 * nfp + 1; fpi[i] is the flush pt[i] belongs
 * to (nfp: the end). Returns how many. */
CR_FN size_t cr_points(const size_t *fp, size_t nfp, size_t n, size_t *pt, size_t *fpi)
{
	size_t np = 0;

	for (size_t i = 0; i <= nfp; i++) {
		size_t at = i < nfp ? fp[i] : n;

		for (size_t p = at; p <= at + (i < nfp) && p <= n; p++)
			if (np == 0 || p > pt[np - 1]) {
				pt[np] = p;
				fpi[np++] = i;
			}
	}
	return np;
}

/* CRASH_POINT (cfg->only_point) must name one of pt[0..np): a reproducer
 * for another seed or program would otherwise check nothing. Prints the
 * valid points when it does not. */
CR_FN int cr_only_point_check(const struct cr_cfg *cfg, const size_t *pt, size_t np)
{
	if (!cfg->only_point || cfg->only_point == SIZE_MAX)
		return 0;
	for (size_t i = 0; i < np; i++)
		if (pt[i] == cfg->only_point)
			return 0;
	fprintf(stderr, "  crash: CRASH_POINT=%zu is not a crash point of %s seed %" PRIu64
		"; its %zu points are:", cfg->only_point, cfg->name, cfg->seed, np);
	for (size_t i = 0; i < np; i++)
		fprintf(stderr, " %zu", pt[i]);
	fprintf(stderr, " (the last one is also CRASH_POINT=end)\n");
	return -EINVAL;
}

/* Check every image of every crash point (or of CRASH_POINT's only). */
CR_FN int cr_check_all(struct cr *c, const struct cr_log *lg, char *msg, size_t len)
{
	struct cr_ck k = { .c = c, .lg = lg, .bytes = (size_t)c->nblk * CR_BS,
			   .seen_cap = 16384, .torn_budget = 64 };
	size_t nfp = dev_rec_flush_points(c->rec, NULL, 0);
	size_t *fp = calloc(nfp + 1, sizeof(size_t));
	size_t *pt = calloc(2 * nfp + 1, sizeof(size_t));
	size_t *fpi = calloc(2 * nfp + 1, sizeof(size_t));
	size_t *pend = calloc(lg->n + 1, sizeof(size_t));
	uint64_t *mask = calloc(lg->n / 64 + 2, sizeof(uint64_t));
	size_t f_cur = 0, np, stride = nfp / 16 + 1;
	int err;

	k.img = malloc(k.bytes);
	k.base = malloc(k.bytes);
	k.data = malloc(CR_NDATA * CR_BS);
	k.data2 = malloc(CR_NDATA * CR_BS);
	k.seen = calloc(k.seen_cap, sizeof(uint64_t));
	err = (!fp || !pt || !fpi || !pend || !mask || !k.img || !k.base || !k.data ||
	       !k.data2 || !k.seen) ? -ENOMEM : 0;
	if (err == 0)
		err = dev_mem_new(k.bytes, 512, &k.imgdev);
	if (err == 0 && dev_mem_new(k.bytes, 512, &k.xdev) < 0)
		err = -ENOMEM;
	if (err < 0)
		goto out;
	dev_rec_flush_points(c->rec, fp, nfp);
	np = cr_points(fp, nfp, lg->n, pt, fpi);
	err = cr_only_point_check(c->cfg, pt, np);
	if (err < 0) {
		snprintf(msg, len, "CRASH_POINT=%zu: no such crash point (the valid ones "
			 "are listed above)", c->cfg->only_point);
		goto out;
	}
	memcpy(k.base, c->snap, k.bytes);
	rt_prng_init(&k.prng, c->cfg->seed ^ 0xc4a5u);
	for (size_t i = 0; i < np; i++) {
		if (c->cfg->only_point &&
		    pt[i] != (c->cfg->only_point == SIZE_MAX ? lg->n : c->cfg->only_point))
			continue;
#ifdef CR_SAN_STRIDE
		/* a sanitizer's sample of the points (every one otherwise) */
		if (!c->cfg->only_point && i >= CR_SAN_EDGE && i + CR_SAN_EDGE < np &&
		    i % CR_SAN_STRIDE != 0)
			continue;
#endif
		cr_point(&k, pt[i], &f_cur, pend, lg->n + 1, mask, fpi[i] % stride == 0);
	}
out:
	if (k.imgdev)
		dev_close(k.imgdev);
	if (k.xdev)
		dev_close(k.xdev);
	free(k.img); free(k.base); free(k.data); free(k.data2); free(k.seen);
	free(fp); free(pt); free(fpi); free(pend); free(mask);
	return err;
}

/* ---- one run, in a sim world ------------------------------------------------ */

struct cr_run_arg {
	const struct cr_cfg *cfg;
	struct cr_result *res;
	int err;
	char msg[400];
};

CR_FN void cr_main(void *arg)
{
	struct cr_run_arg *a = arg;
	struct cr c = { .cfg = a->cfg, .res = a->res };
	struct cr_log lg = { 0 };
	struct dev *inner = NULL;
	int err;

	c.nblk = CR_JSTART + a->cfg->jlen;
	c.snap = calloc(c.nblk, CR_BS);
	c.ev = calloc(CR_MAX_EVENTS, sizeof(*c.ev));
	if (!c.snap || !c.ev || rt_mutex_init(&c.lock, "crash-model") < 0) {
		a->err = -ENOMEM;
		goto out_free;
	}
	err = cr_new_inner(a->cfg, c.nblk, &inner);
	if (err == 0 && (err = dev_rec_new(inner, &c.rec)) < 0)
		dev_close(inner);
	if (err == 0)
		err = cr_prepare(&c);
	if (err == 0)
		err = cr_workload(&c);
	if (err < 0 || c.wl_err) {
		a->err = err < 0 ? err : c.wl_err;
		snprintf(a->msg, sizeof(a->msg), "workload: %.300s", c.wl_msg);
		goto out;
	}
	a->res->last_rtid = c.max_rtid;
	a->err = cr_log_load(&lg, c.rec);
	a->res->log_entries = lg.n;
	cr_index_events(&c);
	if (a->err < 0 || !c.bev || !c.bev_start || !c.bev_n)
		a->err = -ENOMEM;
	else
		a->err = cr_check_all(&c, &lg, a->msg, sizeof(a->msg));
	if (a->err < 0 && !a->msg[0])
		snprintf(a->msg, sizeof(a->msg), "checking: %d", a->err);
out:
	if (c.rec)
		dev_close(c.rec);
	rt_mutex_release(&c.lock);
out_free:
	free(lg.e); free(c.snap); free(c.ev);
	free(c.bev); free(c.bev_start); free(c.bev_n);
}

/* Run cfg; 0 when the run itself worked (res says what the checks found). */
CR_FN int cr_run(const struct cr_cfg *cfg, struct cr_result *res, char *msg, size_t len)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = cfg->seed, .ncpus = 2 };
	struct cr_run_arg a = { .cfg = cfg, .res = res };
	rt_world *w;
	int err;

	memset(res, 0, sizeof(*res));
	err = rt_world_new(&wo, &w);
	if (err < 0)
		return err;
	err = rt_world_run(w, "crash-main", cr_main, &a);
	rt_world_free(w);
	if (err == 0)
		err = a.err;
	snprintf(msg, len, "%.200s", a.msg);
	return err;
}

CR_FN void cr_print(const struct cr_cfg *cfg, const struct cr_result *r)
{
	printf("%s seed %" PRIu64 ": %u tids (%u acked waits), %zu log entries, "
	       "%" PRIu64 " crash points (%" PRIu64 " sampled, max %" PRIu64
	       " pending), %" PRIu64 " images checked (%" PRIu64 " distinct, %" PRIu64
	       " torn pending, %" PRIu64 " torn FUA, %" PRIu64 " torn refused as corrupt, %"
	       PRIu64 " via ujbd_open, %" PRIu64 " cross-checked, %" PRIu64
	       " crashed during recovery), %d failures\n",
	       cfg->name, cfg->seed, r->last_rtid, r->commits_acked, r->log_entries,
	       r->points, r->sampled_points, r->pending_max, r->images, r->unique,
	       r->torn, r->fua_torn, r->torn_refused, r->opened, r->xchecks,
	       r->double_images, r->failures);
	fflush(stdout);
}

/* Fields a CR_TEST left zero. */
CR_FN void cr_defaults(struct cr_cfg *cfg)
{
	if (!cfg->jlen)
		cfg->jlen = CR_JLEN_DEFAULT;
	if (!cfg->threads)
		cfg->threads = 3;
	if (!cfg->ops)
		cfg->ops = 24;
}

/* Environment overrides for running one seed by hand:
 * CRASH_TEST=name (that configuration only; CR_TEST and TW_TEST read it),
 * CRASH_SEED=N, CRASH_OPS=N, CRASH_THREADS=N, CRASH_POINT=N (a point a
 * failure named; a wrong one lists the valid ones; or "end": the final
 * state only, for quick seed sweeps), and
 * CRASH_FAULT=N (which journal write fails, in the configurations that
 * inject one), CRASH_FLUSHED_ONLY=1 (every point, flushed writes only: a
 * quicker sweep). */
CR_FN void cr_env(struct cr_cfg *cfg)
{
	const char *s;

	if ((s = getenv("CRASH_SEED")))
		cfg->seed = strtoull(s, NULL, 0);
	if ((s = getenv("CRASH_OPS")))
		cfg->ops = (unsigned)strtoul(s, NULL, 0);
	if ((s = getenv("CRASH_THREADS")) && strtoul(s, NULL, 0) >= 1 &&
	    strtoul(s, NULL, 0) <= CR_NTHR_MAX)
		cfg->threads = (unsigned)strtoul(s, NULL, 0);
	if ((s = getenv("CRASH_POINT")))
		cfg->only_point = strcmp(s, "end") ? strtoull(s, NULL, 0) : SIZE_MAX;
	if ((s = getenv("CRASH_FLUSHED_ONLY")))
		cfg->flushed_only = atoi(s) != 0;
	if ((s = getenv("CRASH_FAULT")) && cfg->fault_write_nth)
		cfg->fault_write_nth = strtoull(s, NULL, 0);
}

/* Run the test of an entry of a CR_WORKLOADS_ list (crash_configs.h). */
#define CR_T_RUN(fn, ...) T_RUN(fn);

/* A T_RUN body for one configuration. */
#define CR_TEST(fn, ...)                                                         \
	static void fn(void)                                                     \
	{                                                                        \
		struct cr_cfg cfg = { .name = #fn, __VA_ARGS__ };                \
		struct cr_result res;                                            \
		char msg[256] = "";                                              \
		const char *only = getenv("CRASH_TEST");                         \
		int err;                                                         \
		if (only && strcmp(only, #fn) != 0)                              \
			T_SKIP("CRASH_TEST=%s", only);                           \
		cr_defaults(&cfg);                                               \
		cr_env(&cfg);                                                    \
		err = cr_run(&cfg, &res, msg, sizeof(msg));                      \
		cr_print(&cfg, &res);                                            \
		if (err < 0)                                                     \
			T_FAILF("run failed: %d %s", err, msg);                  \
		if (err < 0)                                                     \
			return;                                                  \
		if (res.failures)                                                \
			T_FAILF("%d bad images; first: %s", res.failures,        \
				res.first_failure);                              \
		T_CHECK(res.failures == 0);                                      \
		T_CHECK(res.images > 0);                                         \
	}

#endif

/*
 * rec: a recorder in the manner of dm-log-writes. It wraps any device,
 * passes every request through, and logs each write (with a copy of its
 * data) and each flush in the order they COMPLETE, so that crash tests can
 * rebuild what a disk with a volatile cache could hold after a power cut at
 * any point of the log.
 *
 * The one idea: each entry remembers how many entries had completed when it
 * was SUBMITTED (done_before). The durability rules of dev.h then become
 * arithmetic on log indexes:
 *   - a completed FLUSH, or the preflush of a completed PREFLUSH write,
 *     makes durable every write at log index < its done_before (the writes
 *     that had completed before it was issued; never the ones in flight);
 *   - a completed FUA write is durable itself;
 *   - nothing else is guaranteed; failed requests never count;
 *   - a FAILED flush (or PREFLUSH write) leaves what was in the cache
 *     undefined, as a disk or a page cache that drops what it could not
 *     write back does: the writes it would have covered are never durable
 *     by a later flush, only possibly there (chosen like pending writes).
 * So "durable at point p" is the prefix [0, P) with P the largest
 * done_before of a flush-like entry among the first p, plus the FUA writes.
 * Images apply writes in log order, so a later write over the same blocks
 * wins as it would on the media.
 *
 * The recorder treats the device as having a volatile cache whatever the
 * inner device says (dev_volatile_cache() is true), so that callers keep
 * sending the flushes and FUAs whose placement the crash tests check.
 * Reads pass through unrecorded. Indexes in the log count from the last
 * dev_rec_reset().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev_int.h"
#include "priv/dev_rec.h"

#define REC_SECTOR 512u

struct rec_entry {
	struct dev_rec_entry e; /* data owned by the log */
	uint64_t done_before;   /* entries completed at submission (absolute) */
	bool unsure;            /* pending when a flush failed: never durable */
};

struct dev_rec {
	struct dev_wrap r_w;     /* first: the device over the inner one */
	rt_mutex r_lock;
	struct rec_entry *r_log; /* [r_lock] in completion order */
	size_t r_n, r_cap;       /* [r_lock] */
	uint64_t r_base;         /* [r_lock] absolute index of r_log[0] */
	uint64_t r_submit_seq;   /* [r_lock] */
	dev_rec_sink_fn r_sink;  /* [r_lock] each entry as it is logged */
	void *r_sink_arg;
	bool r_no_data;          /* [r_lock] the sink has the data: keep none */
};

/* One request in flight through the recorder. */
struct rec_req {
	struct dev_wrap_req rr_w; /* first: the request passed on */
	uint8_t *rr_data;        /* writes: the data as submitted */
	uint64_t rr_submit_seq;
	uint64_t rr_done_before;
};

/* ---- recording -------------------------------------------------------- */

static size_t rec_durable_prefix(const struct dev_rec *rc, size_t point);
static bool rec_written(const struct rec_entry *e);

/* Flush f failed: the writes it was to cover that no earlier flush did
 * (completed before it was submitted, not FUA) may never reach the media,
 * whatever flushes come later. [r_lock] */
static void rec_flush_failed(struct dev_rec *rc, const struct rec_entry *f)
{
	size_t prefix = rec_durable_prefix(rc, rc->r_n - 1);
	size_t cover = f->done_before > rc->r_base ? (size_t)(f->done_before - rc->r_base) : 0;

	for (size_t i = prefix; i < cover && i < rc->r_n; i++) {
		struct rec_entry *e = &rc->r_log[i];

		if (rec_written(e) && !(e->e.flags & DEV_REQ_FUA))
			e->unsure = true;
	}
}

/* Log e (its data now the log's) with done_before. [r_lock] */
static int rec_log(struct dev_rec *rc, const struct dev_rec_entry *in, uint64_t done_before)
{
	struct rec_entry *e;

	if (rc->r_n == rc->r_cap) {
		size_t cap = rc->r_cap ? rc->r_cap * 2 : 256;
		struct rec_entry *n = realloc(rc->r_log, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rc->r_log = n;
		rc->r_cap = cap;
	}
	e = &rc->r_log[rc->r_n];
	*e = (struct rec_entry){ .e = *in, .done_before = done_before };
	e->e.complete_seq = rc->r_base + rc->r_n;
	rc->r_n++;
	if (e->e.result < 0 && (e->e.kind == DEV_REC_FLUSH || (e->e.flags & DEV_REQ_PREFLUSH)))
		rec_flush_failed(rc, e);
	if (rc->r_sink) {
		rc->r_sink(rc->r_sink_arg, &e->e, done_before);
		if (rc->r_no_data) {
			free((void *)e->e.data);
			e->e.data = NULL;
		}
	}
	return 0;
}

static int rec_append(struct dev_rec *rc, const struct rec_req *rr, int64_t result)
{
	const struct dev_req *o = rr->rr_w.wr_outer;
	bool flush = o->r_op == DEV_OP_FLUSH;
	struct dev_rec_entry e = {
		.kind = flush ? DEV_REC_FLUSH : DEV_REC_WRITE,
		.flags = flush ? 0 : o->r_flags, .off = flush ? 0 : o->r_off,
		.len = flush ? 0 : o->r_len, .data = rr->rr_data,
		.submit_seq = rr->rr_submit_seq, .result = result,
	};

	return rec_log(rc, &e, rr->rr_done_before);
}

/* On the inner device's completion thread. */
static void rec_inner_done(struct dev_req *ir)
{
	struct rec_req *rr = ir->r_priv;
	struct dev_rec *rc = (struct dev_rec *)rr->rr_w.wr_wrap;
	struct dev_req *o = rr->rr_w.wr_outer;
	int64_t result = ir->r_result;

	if (o->r_op != DEV_OP_READ) {
		rt_mutex_lock(&rc->r_lock);
		if (rec_append(rc, rr, result) < 0) {
			/* an entry we cannot log would make every later image
			 * wrong: fail the request instead */
			free(rr->rr_data);
			result = -ENOMEM;
		}
		rt_mutex_unlock(&rc->r_lock);
	}
	free(rr);
	dev_wrap_complete(&rc->r_w, o, result);
}

static int rec_submit(struct dev *d, struct dev_req *r)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	struct rec_req *rr = calloc(1, sizeof(*rr));
	int err;

	if (!rr)
		return -ENOMEM;
	if (r->r_op == DEV_OP_WRITE) {
		rr->rr_data = malloc(r->r_len);
		if (!rr->rr_data) {
			free(rr);
			return -ENOMEM;
		}
		memcpy(rr->rr_data, r->r_buf, r->r_len);
	}
	rt_mutex_lock(&rc->r_lock);
	rr->rr_submit_seq = rc->r_submit_seq++;
	rr->rr_done_before = rc->r_base + rc->r_n;
	rt_mutex_unlock(&rc->r_lock);
	err = dev_wrap_submit(&rc->r_w, &rr->rr_w, r, r->r_len, rec_inner_done);
	if (err < 0) {
		free(rr->rr_data);
		free(rr);
	}
	return err;
}

static void rec_forget(struct dev_rec *rc)
{
	for (size_t i = 0; i < rc->r_n; i++)
		free((void *)rc->r_log[i].e.data);
	rc->r_base += rc->r_n;
	rc->r_n = 0;
}

static void rec_close(struct dev *d)
{
	struct dev_rec *rc = (struct dev_rec *)d;

	dev_close(rc->r_w.w_inner);
	if (rc->r_sink)
		rc->r_sink(rc->r_sink_arg, NULL, 0); /* the last call: closing */
	rec_forget(rc);
	free(rc->r_log);
	rt_mutex_release(&rc->r_lock);
	free(rc);
}

static const struct dev_ops dev_rec_ops = {
	.o_submit = rec_submit,
	.o_close = rec_close,
	.o_power_cut = dev_wrap_power_cut,
	.o_check = dev_wrap_check,
};

int dev_rec_new(struct dev *inner, struct dev **out)
{
	struct dev_rec *rc;
	int err;

	if (!inner)
		return -EINVAL;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	err = dev_wrap_init(&rc->r_w, &dev_rec_ops, inner, "rec", &rc->r_lock, "dev_rec");
	if (err < 0) {
		free(rc);
		return err;
	}
	rc->r_w.w_dev.d_volatile_cache = true; /* whatever the inner device says */
	*out = &rc->r_w.w_dev;
	return 0;
}

/* ---- reading the log -------------------------------------------------- */

static bool rec_is_dev_rec(const struct dev *d)
{
	return d && d->d_ops == &dev_rec_ops;
}

size_t dev_rec_count(const struct dev *d)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	size_t n;

	if (!rec_is_dev_rec(d))
		return 0;
	rt_mutex_lock(&rc->r_lock);
	n = rc->r_n;
	rt_mutex_unlock(&rc->r_lock);
	return n;
}

int dev_rec_entry(const struct dev *d, size_t i, struct dev_rec_entry *out)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	int err = 0;

	if (!rec_is_dev_rec(d))
		return -EINVAL;
	rt_mutex_lock(&rc->r_lock);
	if (i < rc->r_n)
		*out = rc->r_log[i].e;
	else
		err = -ERANGE;
	rt_mutex_unlock(&rc->r_lock);
	return err;
}

static bool rec_flush_like(const struct rec_entry *e)
{
	if (e->e.result < 0)
		return false;
	return e->e.kind == DEV_REC_FLUSH || (e->e.flags & DEV_REQ_PREFLUSH);
}

size_t dev_rec_flush_points(const struct dev *d, size_t *idx, size_t n)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	size_t k = 0;

	if (!rec_is_dev_rec(d))
		return 0;
	rt_mutex_lock(&rc->r_lock);
	for (size_t i = 0; i < rc->r_n; i++) {
		const struct rec_entry *e = &rc->r_log[i];

		if (rec_flush_like(e) || (e->e.kind == DEV_REC_WRITE && e->e.result > 0 &&
					  (e->e.flags & DEV_REQ_FUA))) {
			if (k < n)
				idx[k] = i;
			k++;
		}
	}
	rt_mutex_unlock(&rc->r_lock);
	return k;
}

/* Log index below which every write is durable at point. [r_lock] */
static size_t rec_durable_prefix(const struct dev_rec *rc, size_t point)
{
	size_t p = 0;

	for (size_t i = 0; i < point; i++) {
		const struct rec_entry *e = &rc->r_log[i];

		if (rec_flush_like(e) && e->done_before > rc->r_base) {
			size_t cover = (size_t)(e->done_before - rc->r_base);

			if (cover > p)
				p = cover;
		}
	}
	return p;
}

static bool rec_written(const struct rec_entry *e)
{
	return e->e.kind == DEV_REC_WRITE && e->e.result > 0;
}

static bool rec_durable(const struct rec_entry *e, size_t i, size_t prefix)
{
	return rec_written(e) && !e->unsure && (i < prefix || (e->e.flags & DEV_REQ_FUA));
}

size_t dev_rec_pending_writes(const struct dev *d, size_t point)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	size_t k = 0, prefix;

	if (!rec_is_dev_rec(d))
		return 0;
	rt_mutex_lock(&rc->r_lock);
	if (point > rc->r_n)
		point = rc->r_n;
	prefix = rec_durable_prefix(rc, point);
	for (size_t i = 0; i < point; i++)
		if (rec_written(&rc->r_log[i]) && !rec_durable(&rc->r_log[i], i, prefix))
			k++;
	rt_mutex_unlock(&rc->r_lock);
	return k;
}

/* ---- building images -------------------------------------------------- */

/* Write [off, off+len) of data onto dst, whatever dst's block size (a
 * partial block is read, patched and written back). */
static int rec_apply(struct dev *dst, uint64_t off, const uint8_t *data, uint32_t len)
{
	uint32_t bs = dev_block_size(dst);
	uint8_t *blk;
	int err = 0;

	if (off % bs == 0 && len % bs == 0)
		return dev_pwrite(dst, data, len, off, 0);
	blk = malloc(bs);
	if (!blk)
		return -ENOMEM;
	while (len > 0 && err == 0) {
		uint64_t base = off - off % bs;
		uint32_t in = (uint32_t)(off - base), n = bs - in < len ? bs - in : len;

		err = dev_pread(dst, blk, bs, base);
		if (err == 0) {
			memcpy(blk + in, data, n);
			err = dev_pwrite(dst, blk, bs, base, 0);
		}
		off += n;
		data += n;
		len -= n;
	}
	free(blk);
	return err;
}

/* A chosen write, torn: each 512-byte sector survives on a coin flip. */
static int rec_apply_torn(struct dev *dst, const struct rec_entry *e, uint32_t len,
			  uint64_t seed, size_t i)
{
	struct rt_prng prng;
	int err = 0;

	rt_prng_init(&prng, seed ^ (0x9e3779b97f4a7c15ull * (i + 1)));
	for (uint32_t s = 0; s < len && err == 0; s += REC_SECTOR) {
		uint32_t n = len - s < REC_SECTOR ? len - s : REC_SECTOR;

		if (rt_prng_next(&prng) & 1)
			err = rec_apply(dst, e->e.off + s, (const uint8_t *)e->e.data + s, n);
	}
	return err;
}

static bool rec_chosen(const struct dev_crash_policy *pol, size_t k)
{
	if (!pol || pol->mode == DEV_CRASH_FLUSHED || !pol->subset_bits ||
	    k >= pol->subset_nbits)
		return false;
	return (pol->subset_bits[k / 64] >> (k % 64)) & 1;
}

int dev_rec_image(const struct dev *d, size_t point,
		  const struct dev_crash_policy *pol, struct dev *dst)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	size_t prefix, k = 0;
	int err = 0;

	if (!rec_is_dev_rec(d) || !dst || dev_size(dst) < dev_size(d) ||
	    (pol && pol->mode > DEV_CRASH_TORN))
		return -EINVAL;
	rt_mutex_lock(&rc->r_lock);
	if (point > rc->r_n || rc->r_no_data) {
		rt_mutex_unlock(&rc->r_lock);
		return rc->r_no_data ? -ENODATA : -ERANGE;
	}
	prefix = rec_durable_prefix(rc, point);
	for (size_t i = 0; i < point && err == 0; i++) {
		const struct rec_entry *e = &rc->r_log[i];
		/* a short write reached the media for its first result bytes */
		uint32_t len = (uint32_t)(e->e.result < (int64_t)e->e.len ? e->e.result : e->e.len);

		if (!rec_written(e))
			continue;
		if (rec_durable(e, i, prefix))
			err = rec_apply(dst, e->e.off, e->e.data, len);
		else if (rec_chosen(pol, k++))
			err = pol->mode == DEV_CRASH_TORN
				? rec_apply_torn(dst, e, len, pol->seed, i)
				: rec_apply(dst, e->e.off, e->e.data, len);
	}
	rt_mutex_unlock(&rc->r_lock);
	return err;
}

void dev_rec_reset(struct dev *d)
{
	struct dev_rec *rc = (struct dev_rec *)d;

	if (!rec_is_dev_rec(d))
		return;
	rt_mutex_lock(&rc->r_lock);
	rec_forget(rc);
	rt_mutex_unlock(&rc->r_lock);
}

/* ---- the private side (priv/dev_rec.h) -------------------------------- */

void dev_rec_set_sink(struct dev *d, dev_rec_sink_fn fn, void *arg, bool keep_data)
{
	struct dev_rec *rc = (struct dev_rec *)d;

	if (!rec_is_dev_rec(d))
		return;
	rt_mutex_lock(&rc->r_lock);
	rc->r_sink = fn;
	rc->r_sink_arg = arg;
	rc->r_no_data = fn && !keep_data;
	rt_mutex_unlock(&rc->r_lock);
}

int dev_rec_inject(struct dev *d, const struct dev_rec_entry *e, uint64_t done_before)
{
	struct dev_rec *rc = (struct dev_rec *)d;
	struct dev_rec_entry c;
	void *data = NULL;
	int err;

	if (!rec_is_dev_rec(d) || !e || (e->kind != DEV_REC_WRITE && e->kind != DEV_REC_FLUSH) ||
	    (e->kind == DEV_REC_WRITE && (!e->len || !e->data ||
					  e->off + e->len > dev_size(d))))
		return -EINVAL;
	c = *e;
	if (e->kind == DEV_REC_WRITE) {
		if (!(data = malloc(e->len)))
			return -ENOMEM;
		memcpy(data, e->data, e->len);
	} else {
		c.flags = 0;
		c.off = 0;
		c.len = 0;
	}
	c.data = data;
	rt_mutex_lock(&rc->r_lock);
	if (done_before == DEV_REC_NOW)
		done_before = rc->r_base + rc->r_n;
	if (done_before > rc->r_base + rc->r_n) {
		err = -EINVAL; /* an entry cannot wait for ones logged after it */
	} else {
		err = rec_log(rc, &c, done_before);
	}
	rt_mutex_unlock(&rc->r_lock);
	if (err)
		free(data);
	return err;
}

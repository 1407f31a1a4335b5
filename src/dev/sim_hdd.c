/*
 * The simulated HDD: a 7200 rpm desktop drive of about 2008 (docs/devices.md
 * has the sources of every figure).
 *
 * Service time = command overhead + seek + rotational wait + media transfer,
 * with the platter angle tracked from time, so that whether the next sector
 * is just ahead of the head or just behind it comes out of the model rather
 * than a random draw. The trick that makes this cheap: with constant linear
 * density, the time to stream from LBA 0 to byte x at the media rate has a
 * closed form, t_media(x); the angle of x is t_media(x) mod T_rev, a
 * transfer of [a, b) takes t_media(b) - t_media(a), and after it the angle
 * under the head is exactly the angle of b. Track and head switches are
 * taken as hidden by track skew, as in sequential transfers they are.
 *
 * Zoned rate: R(f) = R_out * sqrt(1 - beta*f) at LBA fraction f, beta =
 * 1 - (R_in/R_out)^2 (for the defaults 120/60 MB/s, beta = 0.75: an inner
 * radius half the outer one). Then
 *     t_media(x) = K * (1 - sqrt(1 - beta*x/S)),  K = 2S / (beta * R_out)
 * and the cylinder of x is linear in radius:
 *     cyl(x) = (1 - sqrt(1 - beta*x/S)) / (1 - R_in/R_out) * (D - 1).
 *
 * Seek (Ruemmler and Wilkes, IEEE Computer 1994; DiskSim's HPL model): 0
 * for d = 0, t1 for d = 1, a + b*sqrt(d) below d_c cylinders, c + e*d above;
 * writes add a settle time. About the numbers: rounder figures are often
 * quoted ("about 0.8 ms track-to-track, 8.5 ms average, 17 ms full
 * stroke"); the curve fitted to 2007-2010 data sheets gives 1.0 ms, 8.50 ms
 * and 18.0 ms. We use the fit (the average, which dominates random I/O, is
 * the same 8.5 ms; the two ends differ by 0.2 and 1 ms and every one of
 * them is a parameter).
 *
 * The volatile write cache: a write that fits completes after the buffer
 * command overhead (hit_overhead_ms) + interface transfer; the drive
 * destages dirty extents in the background whenever it has no command to serve, one extent at a time in shortest-
 * positioning order (from the first destage_window extents, the drive's
 * reordering window), and a FLUSH destages everything. The cache coalesces
 * (cache_merge_kib): a write over dirty cached sectors replaces them, and a
 * write that continues the newest dirty run joins it, so a rewritten block
 * or a stream of log blocks is destaged once, as one access, not once per
 * write (each of which would wait for its sector to come round again). A FUA write (or any
 * write with the cache off, or larger than it) is a full mechanical access.
 * The read-ahead segment: after a read miss the drive keeps streaming the
 * following sectors into its buffer at the media rate until another command
 * needs the head or readahead_bytes are buffered; a later read inside the
 * segment costs overhead + interface transfer once the stream has reached
 * its end, so sequential reads stream at the media rate.
 *
 * Queueing: one command at a time. qd 1 serves in arrival order; qd > 1
 * (NCQ) picks, among the first qd waiting requests, the one with the
 * shortest positioning time (cache hits and cached writes cost 0; ties go
 * to the earliest arrival). Cached writes are accepted while a background
 * destage step holds the head; anything that needs the head waits for it.
 *
 * Simplifications: reads of data still dirty in the cache are served from
 * the media position (the data is right, the timing pessimistic); one
 * read-ahead segment.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "dev/sim_int.h"
#include "priv/param.h"

#define HDD_MAX_QD 32

struct sim_hdd {
	struct dev_hdd_params p;
	double t_rev;       /* ns per revolution */
	double beta, rho;   /* zoning: 1 - rho^2, rho = R_in/R_out */
	double k_media;     /* ns, see the banner */
	double seek_scale;  /* seek_avg_ms / seek_fit_avg_ms: 1.0 by default */
	uint64_t cmd_free;  /* the last command ended */
	uint64_t mech_free; /* the head is free from */
	double head_cyl;
	/* read-ahead segment [ra_lo, ra_hi), streaming from ra_p0 at ra_t0 */
	bool ra_on, ra_run;
	uint64_t ra_lo, ra_hi, ra_p0, ra_t0;
	/* background destage step in progress */
	bool ds_on;
	uint64_t ds_end, ds_seq, ds_gen;
	uint64_t gen;       /* bumped by a power cut */
};

/* ---- geometry and mechanics ------------------------------------------- */

static double hdd_tmedia(const struct sim_hdd *h, uint64_t x)
{
	double f = (double)x / (double)h->p.size;

	if (h->beta <= 0)
		return f * h->k_media;
	return h->k_media * (1.0 - sqrt(1.0 - h->beta * f));
}

/* The byte offset the stream reaches at media time t (inverse of tmedia). */
static uint64_t hdd_pos_at(const struct sim_hdd *h, double t)
{
	double f, q;

	if (h->beta <= 0)
		f = t / h->k_media;
	else {
		q = 1.0 - t / h->k_media;
		f = (1.0 - q * q) / h->beta;
	}
	if (f >= 1.0)
		return h->p.size;
	return f <= 0 ? 0 : (uint64_t)(f * (double)h->p.size);
}

static double hdd_cyl(const struct sim_hdd *h, uint64_t x)
{
	double f = (double)x / (double)h->p.size, u;

	if (x >= h->p.size)
		f = 1.0;
	if (h->rho >= 1.0)
		u = f;
	else
		u = (1.0 - sqrt(1.0 - h->beta * f)) / (1.0 - h->rho);
	return floor(u * (double)(h->p.cylinders - 1));
}

static uint64_t hdd_seek_ns(const struct sim_hdd *h, double d)
{
	const struct dev_hdd_params *p = &h->p;

	if (d < 0.5)
		return 0;
	if (d < 1.5)
		return sim_ms(h->seek_scale * p->seek_t1_ms);
	if (d < (double)p->seek_dc)
		return sim_ms(h->seek_scale * (p->seek_a_ms + p->seek_b_ms * sqrt(d)));
	return sim_ms(h->seek_scale * (p->seek_c_ms + p->seek_e_ms * d));
}

static double frac(double x) { return x - floor(x); }

/* ns from t until the sector at x is under the head. */
static uint64_t hdd_rot_wait(const struct sim_hdd *h, uint64_t t, uint64_t x)
{
	double want = frac(hdd_tmedia(h, x) / h->t_rev);
	double at = frac((double)t / h->t_rev);

	return (uint64_t)(frac(want - at + 1.0) * h->t_rev);
}

/* Seek + settle + rotation to reach x starting at t. */
static uint64_t hdd_position_ns(const struct sim_hdd *h, uint64_t t, uint64_t x,
				bool write)
{
	double d = fabs(hdd_cyl(h, x) - h->head_cyl);
	uint64_t seek = hdd_seek_ns(h, d);

	if (write && seek)
		seek += sim_ms(h->p.write_settle_ms);
	return seek + hdd_rot_wait(h, t + seek, x);
}

static uint64_t hdd_xfer_media_ns(const struct sim_hdd *h, uint64_t off, uint32_t len)
{
	return (uint64_t)(hdd_tmedia(h, off + len) - hdd_tmedia(h, off));
}

/* ---- read-ahead ------------------------------------------------------- */

static uint64_t hdd_ra_pos(const struct sim_hdd *h, uint64_t t)
{
	uint64_t pos;

	if (t <= h->ra_t0)
		return h->ra_p0;
	pos = hdd_pos_at(h, hdd_tmedia(h, h->ra_p0) + (double)(t - h->ra_t0));
	return pos < h->ra_hi ? pos : h->ra_hi;
}

/* Another command takes the head at t: the stream stops where it is. */
static void hdd_ra_stop(struct sim_hdd *h, uint64_t t)
{
	uint64_t pos;

	if (!h->ra_on || !h->ra_run)
		return;
	pos = hdd_ra_pos(h, t);
	h->ra_hi = pos;
	h->head_cyl = hdd_cyl(h, pos);
	h->ra_run = false;
}

static bool hdd_ra_hit(const struct sim_hdd *h, uint64_t off, uint32_t len)
{
	return h->ra_on && off >= h->ra_lo && off + len <= h->ra_hi;
}

static void hdd_ra_begin(struct sim_hdd *h, uint64_t off, uint32_t len, uint64_t end)
{
	uint64_t hi = off + len + h->p.readahead_bytes;

	if (!h->p.readahead_bytes) {
		h->ra_on = false;
		return;
	}
	h->ra_on = h->ra_run = true;
	h->ra_lo = off;
	h->ra_p0 = off + len;
	h->ra_t0 = end;
	h->ra_hi = hi < h->p.size ? hi : h->p.size;
}

/* A read served from the segment at t; the stream keeps ahead of it. */
static uint64_t hdd_ra_serve(struct sim_hdd *h, uint64_t t, uint64_t off, uint32_t len)
{
	uint64_t ready = 0, hi = off + len + h->p.readahead_bytes, t_hi;

	if (off + len > h->ra_p0)
		ready = h->ra_t0 + (uint64_t)(hdd_tmedia(h, off + len) -
					      hdd_tmedia(h, h->ra_p0));
	if (hi > h->p.size)
		hi = h->p.size;
	if (h->ra_run && hi > h->ra_hi) {
		t_hi = h->ra_t0 + (uint64_t)(hdd_tmedia(h, h->ra_hi) -
					     hdd_tmedia(h, h->ra_p0));
		if (t_hi < t) {
			/* the stream stalled at ra_hi: it resumes when that
			 * sector next comes round */
			h->ra_p0 = h->ra_hi;
			h->ra_t0 = t + hdd_rot_wait(h, t, h->ra_hi);
		}
		h->ra_hi = hi;
	}
	h->ra_lo = off;
	return sim_max(t, ready) + sim_xfer_ns(len, h->p.interface_mb_s);
}

static void hdd_ra_invalidate(struct sim_hdd *h, uint64_t t, uint64_t off, uint32_t len)
{
	if (h->ra_on && off < h->ra_hi && off + len > h->ra_lo) {
		hdd_ra_stop(h, t);
		h->ra_on = false;
	}
}

/* ---- mechanical work -------------------------------------------------- */

/* The head is needed from t on: when it is really free. */
static uint64_t hdd_mech_take(struct sim_hdd *h, uint64_t t)
{
	t = sim_max(t, h->mech_free);
	hdd_ra_stop(h, t);
	return t;
}

/* One full access of [off, off+len) from t; the end time. */
static uint64_t hdd_access(struct sim_hdd *h, uint64_t t, uint64_t off,
			   uint32_t len, bool write)
{
	t += hdd_position_ns(h, t, off, write);
	t += hdd_xfer_media_ns(h, off, len);
	h->head_cyl = hdd_cyl(h, off + len - 1);
	h->mech_free = t;
	return t;
}

/* The cache extent, among the first destage_window, reached soonest. */
static size_t hdd_destage_pick(const struct sim_hdd *h, const struct dev_cache *c,
			       uint64_t t)
{
	size_t win = h->p.destage_window;
	size_t best = 0, n = c->c_n < win ? c->c_n : win;
	uint64_t best_ns = UINT64_MAX;

	ASSERT(n > 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = hdd_position_ns(h, t, c->c_ext[i].c_off, true);

		if (ns < best_ns) {
			best_ns = ns;
			best = i;
		}
	}
	return best;
}

/* Destage until at most keep bytes stay dirty; the time it ends. */
static uint64_t hdd_destage(struct dev_sim *s, uint64_t t, uint64_t keep)
{
	struct sim_hdd *h = s->s_priv;
	struct dev_cache *c = &s->s_cache;

	if (c->c_bytes <= keep)
		return t;
	t = hdd_mech_take(h, t);
	while (c->c_n > 0 && c->c_bytes > keep) {
		size_t i = hdd_destage_pick(h, c, t);

		t = hdd_access(h, t, c->c_ext[i].c_off, c->c_ext[i].c_len, true);
		/* the extent's data was allocated when it was cached; moving it
		 * to the media can only fail for lack of memory */
		if (dev_cache_destage(c, i, s->s_media) < 0)
			break;
	}
	return t;
}

/* ---- requests --------------------------------------------------------- */

static bool hdd_write_through(const struct sim_hdd *h, const struct dev_req *r)
{
	return (r->r_flags & DEV_REQ_FUA) || h->p.cache_bytes == 0 ||
	       r->r_len > h->p.cache_bytes;
}

static bool hdd_needs_head(const struct dev_sim *s, const struct dev_req *r)
{
	const struct sim_hdd *h = s->s_priv;
	const struct dev_cache *c = &s->s_cache;

	switch (r->r_op) {
	case DEV_OP_READ:
		return !hdd_ra_hit(h, r->r_off, r->r_len);
	case DEV_OP_WRITE:
		return hdd_write_through(h, r) ||
		       ((r->r_flags & DEV_REQ_PREFLUSH) && c->c_n) ||
		       c->c_bytes + r->r_len > c->c_limit;
	default:
		return c->c_n > 0;
	}
}

static uint64_t hdd_serve_write(struct dev_sim *s, struct dev_req *r, uint64_t start)
{
	struct sim_hdd *h = s->s_priv;
	bool head = hdd_needs_head(s, r);
	uint64_t end, t = start + sim_ms(head ? h->p.overhead_ms : h->p.hit_overhead_ms);

	if (r->r_flags & DEV_REQ_PREFLUSH)
		t = hdd_destage(s, t + sim_ms(h->p.flush_ms), 0);
	if (hdd_write_through(h, r)) {
		t = hdd_mech_take(h, t);
		end = hdd_access(h, t, r->r_off, r->r_len, true);
		hdd_ra_invalidate(h, t, r->r_off, r->r_len);
		r->r_result = dev_sim_write(s, r, true, end);
		return end;
	}
	t = hdd_destage(s, t, h->p.cache_bytes - r->r_len);
	end = t + sim_xfer_ns(r->r_len, h->p.interface_mb_s);
	hdd_ra_invalidate(h, t, r->r_off, r->r_len);
	r->r_result = dev_sim_write(s, r, false, end);
	return end;
}

/* Serve r from start; the time it completes (r_result set). */
static uint64_t hdd_serve(struct dev_sim *s, struct dev_req *r, uint64_t start)
{
	struct sim_hdd *h = s->s_priv;
	uint64_t t = start + sim_ms(h->p.overhead_ms), end;

	switch (r->r_op) {
	case DEV_OP_READ:
		if (hdd_ra_hit(h, r->r_off, r->r_len)) {
			t = start + sim_ms(h->p.hit_overhead_ms);
			end = hdd_ra_serve(h, t, r->r_off, r->r_len);
		} else {
			t = hdd_mech_take(h, t);
			end = hdd_access(h, t, r->r_off, r->r_len, false);
			hdd_ra_begin(h, r->r_off, r->r_len, end);
		}
		r->r_result = dev_sim_read(s, r);
		return end;
	case DEV_OP_WRITE:
		return hdd_serve_write(s, r, start);
	default:
		r->r_result = 0;
		return hdd_destage(s, t + sim_ms(h->p.flush_ms), 0);
	}
}

/* The next request to serve, or NULL when the head is busy destaging and
 * every candidate needs it. */
static struct dev_req *hdd_pick(struct dev_sim *s, uint64_t t)
{
	struct sim_hdd *h = s->s_priv;
	struct dev_req *r, *best = NULL;
	uint64_t best_ns = UINT64_MAX;
	unsigned n = 0;

	RT_LIST_FOR_EACH(r, &s->s_queue, struct dev_req, r_link) {
		bool head;
		uint64_t ns = 0;

		if (n++ == h->p.queue_depth)
			break;
		head = hdd_needs_head(s, r);
		if (head && h->ds_on)
			continue;
		if (head && r->r_op != DEV_OP_FLUSH)
			ns = hdd_position_ns(h, t, r->r_off, r->r_op == DEV_OP_WRITE);
		if (ns < best_ns) {
			best_ns = ns;
			best = r;
		}
		if (h->p.queue_depth == 1)
			break;
	}
	return best;
}

/* A background destage step: one extent, from when the drive went idle. */
static void hdd_destage_step(struct dev_sim *s)
{
	struct sim_hdd *h = s->s_priv;
	struct dev_cache *c = &s->s_cache;
	uint64_t t = hdd_mech_take(h, sim_max(h->cmd_free, h->mech_free));
	size_t i = hdd_destage_pick(h, c, t);

	h->ds_on = true;
	h->ds_seq = c->c_ext[i].c_seq;
	c->c_pin = h->ds_seq; /* new writes go elsewhere until it is on the media */
	h->ds_gen = h->gen;
	h->ds_end = hdd_access(h, t, c->c_ext[i].c_off, c->c_ext[i].c_len, true);
}

static void hdd_destage_step_done(struct dev_sim *s)
{
	struct sim_hdd *h = s->s_priv;
	struct dev_cache *c = &s->s_cache;

	h->ds_on = false;
	c->c_pin = UINT64_MAX;
	if (h->ds_gen != h->gen)
		return; /* a power cut took the data */
	for (size_t i = 0; i < c->c_n; i++) {
		if (c->c_ext[i].c_seq == h->ds_seq) {
			dev_cache_destage(c, i, s->s_media);
			return;
		}
	}
}

static uint64_t hdd_step(struct dev_sim *s, uint64_t now)
{
	struct sim_hdd *h = s->s_priv;
	struct dev_req *r;

	if (h->ds_on && h->ds_end <= now)
		hdd_destage_step_done(s);
	if (s->s_svc_len) /* one command at a time */
		return h->ds_on ? h->ds_end : UINT64_MAX;
	r = hdd_pick(s, sim_max(now, h->cmd_free));
	if (r) {
		uint64_t start = sim_max(h->cmd_free, SIM_ARRIVAL(r));
		uint64_t end = hdd_serve(s, r, start);

		h->cmd_free = end;
		dev_sim_start(s, r, end);
	} else if (!s->s_q_len && s->s_cache.c_n > 0 && !h->ds_on) {
		hdd_destage_step(s);
	}
	return h->ds_on ? h->ds_end : UINT64_MAX;
}

static void hdd_power_cut(struct dev_sim *s, uint64_t now)
{
	struct sim_hdd *h = s->s_priv;

	dev_cache_drop(&s->s_cache);
	h->gen++;
}

/* ---- parameters ------------------------------------------------------- */

/*
 * Sources: each row names its own (docs/devices.md lists them). Notes on
 * the assumptions: 512-byte sectors (desktop drives of 2008, before 4K
 * sectors); the often quoted "about 100 / 55 MB/s" are the same drive
 * class measured through a file system, we keep the data sheets' media
 * rates; hit_overhead_ms is separate from overhead_ms because with 0.2 ms
 * on every 4 KiB buffer hit a sequential 4 KiB reader could not exceed
 * 19 MB/s, where a real drive streams at the media rate (ATTO-style
 * small-block runs on such drives reach tens of thousands of buffer hits a
 * second).
 */
#define HDD_P(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct dev_hdd_params, field, type, unit, scale, def, min, max, src, help)
#define HDD_PA(name, field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM_AS(name, struct dev_hdd_params, field, type, unit, scale, def, min, max, \
		    src, help)
static const struct rt_param hdd_rows[] = {
	HDD_P(size, RT_PARAM_U64, "B", 0, 500e9, 1 << 20, 1e15,
	      "500 GB desktop drive of 2008", "capacity"),
	RT_PARAM_RULE(struct dev_hdd_params, block_size, RT_PARAM_U32, "B", 0, 512, 512, 65536,
		      0, true, "pre-4K-sector drives of 2008", "logical sector size"),
	HDD_P(rpm, RT_PARAM_DOUBLE, "rpm", 0, 7200, 3600, 15000, "7200 rpm desktop drives of 2007-2010 data sheets", "spindle speed"),
	HDD_P(cylinders, RT_PARAM_U64, "", 0, 150000, 2, 1e7, "model choice: a 500 GB 2008 drive at ~150k cylinders", "cylinders (seek distance unit)"),
	HDD_P(seek_avg_ms, RT_PARAM_DOUBLE, "ms", 0, 8.5, 0.5, 40,
	      "7200 rpm desktop data sheets 2007-2010: 8.5 ms average read seek", "average seek: scales the whole seek curve"),
	HDD_P(seek_fit_avg_ms, RT_PARAM_DOUBLE, "ms", 0, 8.5, 0.5, 40,
	      "Ruemmler & Wilkes 1994 seek curve fitted to 2007-2010 data sheets (8.5 ms avg, 18-20 ms full stroke)", "average seek of the fitted curve below (scale = avg / fit_avg)"),
	HDD_P(seek_t1_ms, RT_PARAM_DOUBLE, "ms", 0, 1.0, 0, 10,
	      "data sheets 2007-2010: single-track seek 1.0 ms", "track-to-track seek"),
	HDD_P(seek_a_ms, RT_PARAM_DOUBLE, "ms", 0, 1.0, 0, 20, "Ruemmler & Wilkes 1994 seek curve fitted to 2007-2010 data sheets (8.5 ms avg, 18-20 ms full stroke)", "short seeks a + b*sqrt(d): a"),
	HDD_P(seek_b_ms, RT_PARAM_DOUBLE, "ms", 0, 0.03375, 0, 1, "Ruemmler & Wilkes 1994 seek curve fitted to 2007-2010 data sheets (8.5 ms avg, 18-20 ms full stroke)", "short seeks: b"),
	HDD_P(seek_c_ms, RT_PARAM_DOUBLE, "ms", 0, 4.066, 0, 40, "Ruemmler & Wilkes 1994 seek curve fitted to 2007-2010 data sheets (8.5 ms avg, 18-20 ms full stroke)", "long seeks c + e*d: c"),
	HDD_P(seek_e_ms, RT_PARAM_DOUBLE, "ms", 0, 9.29e-5, 0, 0.01, "Ruemmler & Wilkes 1994 seek curve fitted to 2007-2010 data sheets (8.5 ms avg, 18-20 ms full stroke)", "long seeks: e"),
	HDD_P(seek_dc, RT_PARAM_U64, "cyl", 0, 33000, 2, 1e7,
	      "Ruemmler & Wilkes 1994 curve: joint at 0.22 of the stroke, fitted", "short/long seek boundary"),
	HDD_P(write_settle_ms, RT_PARAM_DOUBLE, "ms", 0, 0.75, 0, 5,
	      "data sheets 2007-2010: write seeks +0.5-1.0 ms", "extra settle time of a write seek"),
	HDD_P(rate_outer_mb_s, RT_PARAM_DOUBLE, "MB/s", 0, 120, 1, 2000, "zoned recording, 2008 desktop drives: ~120 MB/s outer, ~60 MB/s inner",
	      "media rate at the outer edge (MB = 1e6 B)"),
	HDD_P(rate_inner_mb_s, RT_PARAM_DOUBLE, "MB/s", 0, 60, 1, 2000, "zoned recording, 2008 desktop drives: ~120 MB/s outer, ~60 MB/s inner",
	      "media rate at the inner edge"),
	HDD_P(overhead_ms, RT_PARAM_DOUBLE, "ms", 0, 0.2, 0, 10,
	      "assumption (controller command overhead)", "command overhead of a media access"),
	HDD_P(hit_overhead_ms, RT_PARAM_DOUBLE, "ms", 0, 0.02, 0, 10,
	      "assumption (docs/devices.md)", "command overhead of a buffer hit or cached write"),
	HDD_P(interface_mb_s, RT_PARAM_DOUBLE, "MB/s", 0, 300, 1, 24000,
	      "SATA 3 Gb/s interface", "host interface rate"),
	HDD_PA("cache_mib", cache_bytes, RT_PARAM_U64, "MiB", 1048576, 16, 0, 4096,
	       "data sheets 2007-2010: 16-32 MB write cache", "volatile write cache, 0 = none"),
	HDD_PA("readahead_kib", readahead_bytes, RT_PARAM_U64, "KiB", 1024, 2048, 0, 1048576,
	       "assumption: one segment of the buffer", "read-ahead segment, 0 = none"),
	HDD_P(queue_depth, RT_PARAM_UINT, "", 0, 1, 1, HDD_MAX_QD,
	      "NCQ off, as CFQ of 2.6.29 saw such drives (hw_tag 0)", "commands queued in the drive (>1: NCQ)"),
	HDD_P(flush_ms, RT_PARAM_DOUBLE, "ms", 0, 0, 0, 1000,
	      "assumption: the destage is the cost", "a cache flush's cost beyond overhead and destage"),
	HDD_P(destage_window, RT_PARAM_UINT, "", 0, 128, 1, 65536,
	      "assumption: the drive's reordering window", "dirty extents the destage chooses from"),
	HDD_PA("cache_merge_kib", cache_merge_bytes, RT_PARAM_U64, "KiB", 1024, 1024, 0, 1048576,
	       "assumption: a write-back cache coalesces rewrites of dirty sectors and "
	       "sequential writes into one segment before it destages them",
	       "largest run of sequential writes joined in the cache, 0 = none"),
};
static const struct rt_param_table hdd_table =
	RT_PARAM_TABLE("hdd", "simulated 7200 rpm desktop HDD of 2008 (src/dev/sim_hdd.c)",
		       hdd_rows, struct dev_hdd_params);

void dev_hdd_defaults(struct dev_hdd_params *p)
{
	memset(p, 0, sizeof(*p));
	rt_param_defaults(&hdd_table, p);
}

/* ---- construction ------------------------------------------------------ */

static void hdd_model_defaults(void *p)
{
	dev_hdd_defaults(p);
}

/* What only this model checks (dev_sim_new checks the geometry). */
static int hdd_check(const void *params)
{
	const struct dev_hdd_params *p = params;

	if (!(p->rpm > 0) || p->cylinders < 2 || !(p->rate_outer_mb_s > 0) ||
	    !(p->rate_inner_mb_s > 0) || p->rate_inner_mb_s > p->rate_outer_mb_s ||
	    !(p->interface_mb_s > 0) || p->seek_dc < 2)
		return -EINVAL;
	if (p->seek_t1_ms < 0 || p->seek_a_ms < 0 || p->seek_b_ms < 0 ||
	    p->seek_c_ms < 0 || p->seek_e_ms < 0 || p->write_settle_ms < 0 ||
	    p->overhead_ms < 0 || p->hit_overhead_ms < 0 || p->flush_ms < 0)
		return -EINVAL;
	if (!(p->seek_avg_ms > 0) || !(p->seek_fit_avg_ms > 0) || p->destage_window < 1)
		return -EINVAL;
	return 0;
}

static void hdd_geometry(const void *params, struct dev_sim_geometry *g)
{
	const struct dev_hdd_params *p = params;

	*g = (struct dev_sim_geometry){ .name = "hdd", .size = p->size,
		.block_size = p->block_size, .queue_depth = p->queue_depth,
		.max_queue_depth = HDD_MAX_QD, .rotational = true,
		.volatile_cache = p->cache_bytes > 0, .cache_bytes = p->cache_bytes,
		.cache_merge_bytes = p->cache_merge_bytes };
}

static void hdd_setup(struct dev_sim *s, const void *params)
{
	struct sim_hdd *h = s->s_priv;
	const struct dev_hdd_params *p = &h->p;

	h->p = *(const struct dev_hdd_params *)params;
	h->p.size = s->s_dev.d_size;
	h->t_rev = 60e9 / p->rpm;
	h->seek_scale = p->seek_avg_ms / p->seek_fit_avg_ms;
	h->rho = p->rate_inner_mb_s / p->rate_outer_mb_s;
	h->beta = 1.0 - h->rho * h->rho;
	/* ns to stream the whole disk: S / R_out for flat zoning, else the
	 * closed form's constant K = 2S / (beta R_out) */
	h->k_media = (double)p->size * 1e3 / p->rate_outer_mb_s;
	if (h->beta > 0)
		h->k_media *= 2.0 / h->beta;
}

static const struct dev_sim_model hdd_model = {
	.m_step = hdd_step,
	.m_power_cut = hdd_power_cut,
	.m_params = &hdd_table,
	.m_check = hdd_check,
	.m_geometry = hdd_geometry,
	.m_state_size = sizeof(struct sim_hdd),
	.m_setup = hdd_setup,
};

int dev_sim_hdd_new(const struct dev_hdd_params *p, struct dev **out)
{
	return dev_sim_new(&hdd_model, p, out);
}

const struct dev_model dev_model_hdd = {
	.m_name = "hdd",
	.m_help = "simulated 7200 rpm desktop HDD of 2008: seek, rotation, zoned rate, write cache",
	.m_params = &hdd_table,
	.m_defaults = hdd_model_defaults,
	.m_sim = &hdd_model,
	.m_size_offset = offsetof(struct dev_hdd_params, size),
};

/*
 * rec (the write recorder and its crash images) and fault injection.
 * Most tests run on mem devices in the real world (sync I/O completes in
 * submission order, so the log is known exactly); the in-flight and
 * lost-cache cases use a sim HDD in a sim world.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/dev.h"
#include "priv/dev_rec.h"
#include "priv/dev_req.h"
#include "priv/dev_sim.h"
#include "priv/rt.h"

#define BS 4096u
#define DEVSZ (1u << 20)

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 37 + i * 11 + (i >> 9) + 1);
}

static int wr(struct dev *d, unsigned blk, unsigned seed, uint32_t flags)
{
	static uint8_t buf[BS];

	fill(buf, BS, seed);
	return dev_pwrite(d, buf, BS, (uint64_t)blk * BS, flags);
}

/* 1 if block blk of d holds pattern seed (0 = zeros), 0 if not, <0 error. */
static int holds(struct dev *d, unsigned blk, unsigned seed)
{
	static uint8_t want[BS], got[BS];
	int err;

	if (seed)
		fill(want, BS, seed);
	else
		memset(want, 0, BS);
	err = dev_pread(d, got, BS, (uint64_t)blk * BS);
	if (err < 0)
		return err;
	return memcmp(want, got, BS) == 0;
}

static struct dev *image(struct dev *rec, size_t point, const struct dev_crash_policy *pol)
{
	struct dev *dst;

	if (dev_mem_new(DEVSZ, 512, &dst) < 0)
		return NULL;
	if (dev_rec_image(rec, point, pol, dst) < 0) {
		dev_close(dst);
		return NULL;
	}
	return dst;
}

/*
 * The log [W1 W2 F1 W3 W4(FUA) W5 F2 W6], indexes 0..7:
 *   W1 blk0=1, W2 blk1=2, F1, W3 blk2=3, W4 FUA blk3=4, W5 blk0=5, F2, W6 blk1=6
 */
static struct dev *scripted(void)
{
	struct dev *mem, *rec;

	if (dev_mem_new(DEVSZ, 512, &mem) < 0 || dev_rec_new(mem, &rec) < 0)
		return NULL;
	if (wr(rec, 0, 1, 0) || wr(rec, 1, 2, 0) || dev_flush(rec) ||
	    wr(rec, 2, 3, 0) || wr(rec, 3, 4, DEV_REQ_FUA) || wr(rec, 0, 5, 0) ||
	    dev_flush(rec) || wr(rec, 1, 6, 0)) {
		dev_close(rec);
		return NULL;
	}
	return rec;
}

static void test_rec_log(void)
{
	struct dev *rec = scripted();
	struct dev_rec_entry e;
	size_t pts[8];

	T_CHECK(rec);
	T_CHECK(dev_volatile_cache(rec));
	T_STREQ(dev_name(rec), "rec:mem");
	T_EQ(dev_rec_count(rec), 8);
	T_EQ(dev_rec_entry(rec, 2, &e), 0);
	T_EQ(e.kind, DEV_REC_FLUSH);
	T_EQ(dev_rec_entry(rec, 4, &e), 0);
	T_EQ(e.kind, DEV_REC_WRITE);
	T_EQ(e.flags, DEV_REQ_FUA);
	T_EQ_U64(e.off, 3 * BS);
	T_EQ(e.len, BS);
	T_EQ(e.result, BS);
	T_EQ_U64(e.complete_seq, 4);
	T_EQ_U64(e.submit_seq, 4);
	T_EQ(((const uint8_t *)e.data)[0], (uint8_t)(4 * 37 + 1));
	T_EQ(dev_rec_entry(rec, 8, &e), -ERANGE);
	T_EQ(dev_rec_flush_points(rec, pts, 8), 3);
	T_EQ(pts[0], 2);
	T_EQ(pts[1], 4);
	T_EQ(pts[2], 6);
	T_EQ(dev_rec_pending_writes(rec, 2), 2);
	T_EQ(dev_rec_pending_writes(rec, 3), 0);
	T_EQ(dev_rec_pending_writes(rec, 5), 1);
	T_EQ(dev_rec_pending_writes(rec, 6), 2);
	T_EQ(dev_rec_pending_writes(rec, 7), 0);
	T_EQ(dev_rec_pending_writes(rec, 8), 1);
	dev_rec_reset(rec);
	T_EQ(dev_rec_count(rec), 0);
	T_EQ(wr(rec, 5, 9, 0), 0);
	T_EQ(dev_flush(rec), 0);
	T_EQ(dev_rec_pending_writes(rec, 2), 0);
	T_EQ(dev_rec_entry(rec, 1, &e), 0);
	T_EQ_U64(e.complete_seq, 9);
	dev_close(rec);
}

static void check_image(struct dev *rec, size_t point, const struct dev_crash_policy *pol,
			const unsigned want[4])
{
	struct dev *img = image(rec, point, pol);

	T_CHECK(img);
	for (unsigned b = 0; b < 4; b++) {
		if (holds(img, b, want[b]) != 1) {
			T_FAILF("point %zu: block %u is not pattern %u", point, b, want[b]);
			break;
		}
	}
	dev_close(img);
}

static void test_rec_images(void)
{
	struct dev *rec = scripted();
	uint64_t bits;
	struct dev_crash_policy sub = { .mode = DEV_CRASH_SUBSET, .subset_bits = &bits,
					.subset_nbits = 64 };

	T_CHECK(rec);
	check_image(rec, 0, NULL, (unsigned[4]){ 0, 0, 0, 0 });
	check_image(rec, 2, NULL, (unsigned[4]){ 0, 0, 0, 0 }); /* nothing flushed */
	check_image(rec, 3, NULL, (unsigned[4]){ 1, 2, 0, 0 }); /* after F1 */
	check_image(rec, 5, NULL, (unsigned[4]){ 1, 2, 0, 4 }); /* + FUA W4, not W3 */
	check_image(rec, 7, NULL, (unsigned[4]){ 5, 2, 3, 4 }); /* after F2 */
	check_image(rec, 8, NULL, (unsigned[4]){ 5, 2, 3, 4 }); /* W6 not durable */
	/* subsets of the writes no flush covers */
	bits = 1; /* at point 5 the only pending write is W3 */
	check_image(rec, 5, &sub, (unsigned[4]){ 1, 2, 3, 4 });
	bits = 2; /* at point 6: W3, W5; choose W5 only */
	check_image(rec, 6, &sub, (unsigned[4]){ 5, 2, 0, 4 });
	bits = 3;
	check_image(rec, 6, &sub, (unsigned[4]){ 5, 2, 3, 4 });
	bits = 1; /* at point 8 the pending write is W6 */
	check_image(rec, 8, &sub, (unsigned[4]){ 5, 6, 3, 4 });
	sub.mode = DEV_CRASH_FLUSHED; /* the bits do not matter then */
	check_image(rec, 8, &sub, (unsigned[4]){ 5, 2, 3, 4 });
	T_EQ(dev_rec_image(rec, 9, NULL, rec), -ERANGE);
	dev_close(rec);
}

/* A random workload; the image right after each flush equals what had been
 * written by then (sync writes: all completed before the flush). */
static void test_rec_every_flush_point(void)
{
	struct dev *mem, *rec, *img;
	static uint8_t shadow[16][DEVSZ / 4]; /* snapshots at flushes */
	static uint8_t cur[DEVSZ / 4], got[DEVSZ / 4], buf[BS];
	size_t pts[16], nflush = 0;
	struct rt_prng prng;

	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &rec), 0);
	rt_prng_init(&prng, 11);
	memset(cur, 0, sizeof(cur));
	for (int op = 0; op < 200 && nflush < 16; op++) {
		if (rt_prng_below(&prng, 8) == 0) {
			T_EQ(dev_flush(rec), 0);
			memcpy(shadow[nflush++], cur, sizeof(cur));
			continue;
		}
		unsigned blk = (unsigned)rt_prng_below(&prng, sizeof(cur) / BS);

		fill(buf, BS, (unsigned)op + 7);
		T_EQ(dev_pwrite(rec, buf, BS, (uint64_t)blk * BS, 0), 0);
		memcpy(cur + (size_t)blk * BS, buf, BS);
	}
	T_CHECK(nflush >= 5);
	T_EQ(dev_rec_flush_points(rec, pts, 16), nflush);
	for (size_t i = 0; i < nflush; i++) {
		img = image(rec, pts[i] + 1, NULL);
		T_CHECK(img);
		T_EQ(dev_pread(img, got, sizeof(got), 0), 0);
		dev_close(img);
		if (memcmp(got, shadow[i], sizeof(got)) != 0) {
			T_FAILF("image after flush %zu differs", i);
			break;
		}
	}
	dev_close(rec);
}

/* Torn writes: each 512-byte sector is all old or all new; some seeds tear. */
static void test_rec_torn(void)
{
	struct dev *mem, *rec, *img;
	static uint8_t oldb[8 * 512], newb[8 * 512], got[8 * 512];
	uint64_t bits = 1;
	struct dev_crash_policy pol = { .mode = DEV_CRASH_TORN, .subset_bits = &bits,
					.subset_nbits = 1 };
	int mixed = 0;

	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &rec), 0);
	fill(oldb, sizeof(oldb), 1);
	fill(newb, sizeof(newb), 2);
	T_EQ(dev_pwrite(rec, oldb, sizeof(oldb), 0, 0), 0);
	T_EQ(dev_flush(rec), 0);
	T_EQ(dev_pwrite(rec, newb, sizeof(newb), 0, 0), 0);
	T_EQ(dev_rec_pending_writes(rec, 3), 1);
	for (pol.seed = 1; pol.seed <= 20; pol.seed++) {
		int nnew = 0;

		img = image(rec, 3, &pol);
		T_CHECK(img);
		T_EQ(dev_pread(img, got, sizeof(got), 0), 0);
		dev_close(img);
		for (int s = 0; s < 8; s++) {
			if (!memcmp(got + s * 512, newb + s * 512, 512))
				nnew++;
			else
				T_CHECK(!memcmp(got + s * 512, oldb + s * 512, 512));
		}
		mixed += nnew > 0 && nnew < 8;
	}
	T_CHECK(mixed > 10);
	dev_close(rec);
}

/* ---- in flight: a flush does not cover a write still in flight ---------- */

struct inflight {
	size_t pending;
	int rc;
};

static void noop_done(struct dev_req *r)
{
	(void)r;
}

static void inflight_body(void *arg)
{
	struct inflight *x = arg;
	struct dev_hdd_params p;
	struct dev *hdd, *rec;
	static uint8_t buf[BS];
	struct dev_req w = { .r_op = DEV_OP_WRITE, .r_len = BS, .r_off = 1 << 30,
			     .r_buf = buf, .r_done = noop_done };

	x->rc = -1;
	dev_hdd_defaults(&p);
	p.cache_bytes = 0; /* every write mechanical: slow enough to overlap */
	if (dev_sim_hdd_new(&p, &hdd) < 0 || dev_rec_new(hdd, &rec) < 0)
		return;
	x->rc = dev_submit(rec, &w);
	if (x->rc == 0)
		x->rc = dev_flush(rec); /* submitted while w is in flight */
	x->pending = dev_rec_pending_writes(rec, dev_rec_count(rec));
	dev_close(rec);
}

static void test_rec_inflight(void)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = 1 };
	struct inflight x = { 0 };
	rt_world *w;

	T_EQ(rt_world_new(&o, &w), 0);
	rt_world_run(w, "test", inflight_body, &x);
	rt_world_free(w);
	T_EQ(x.rc, 0);
	/* log: [W, F] (the drive serves in order); F was issued before W
	 * completed, so W is still only pending */
	T_EQ(x.pending, 1);
}

/* ---- trace files -------------------------------------------------------- */

/* The scripted log through a trace file, then a note after the recorder
 * closed, then an entry whose flush was issued while it was in flight:
 * the loaded log builds the same images, the note durable at the end. */
static void test_rec_trace_roundtrip(void)
{
	char dir[] = "/tmp/ujbd-trace.XXXXXX", path[64];
	struct dev_rec_trace *t;
	struct dev_rec_trace_info info;
	struct dev *mem, *rec, *loaded;
	struct dev_rec_entry e;
	uint8_t blk[BS];
	uint64_t bits = 3;
	struct dev_crash_policy sub = { .mode = DEV_CRASH_SUBSET, .subset_bits = &bits,
					.subset_nbits = 64 };

	T_CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace", dir);
	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &rec), 0);
	T_EQ(dev_rec_trace_create(path, DEVSZ, 512, &t), 0);
	dev_rec_trace_attach(t, rec);
	T_CHECK(!(wr(rec, 0, 1, 0) || wr(rec, 1, 2, 0) || dev_flush(rec) ||
		  wr(rec, 2, 3, 0) || wr(rec, 3, 4, DEV_REQ_FUA) || wr(rec, 0, 5, 0) ||
		  dev_flush(rec) || wr(rec, 1, 6, 0)));
	/* the sink took the data: the live log builds no image any more */
	T_EQ(dev_rec_image(rec, 8, NULL, mem), -ENODATA);
	dev_close(rec);
	fill(blk, BS, 7);
	T_EQ(dev_rec_trace_note(t, 2 * BS, blk, BS), 0); /* entries 8 (write), 9 (flush) */
	T_EQ(dev_rec_trace_error(t), 0);
	T_EQ(dev_rec_trace_close(t), 0);

	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &loaded), 0);
	T_EQ(dev_rec_trace_load(path, loaded, &info), 0);
	T_EQ(info.entries, 10);
	T_EQ_U64(info.size, DEVSZ);
	T_CHECK(!info.torn_tail);
	T_EQ_U64(info.end[info.entries - 1], info.file_bytes);
	T_EQ(dev_rec_entry(loaded, 4, &e), 0);
	T_EQ(e.flags, DEV_REQ_FUA);
	T_EQ(((const uint8_t *)e.data)[0], (uint8_t)(4 * 37 + 1));
	check_image(loaded, 3, NULL, (unsigned[4]){ 1, 2, 0, 0 });
	check_image(loaded, 5, NULL, (unsigned[4]){ 1, 2, 0, 4 });
	check_image(loaded, 6, &sub, (unsigned[4]){ 5, 2, 3, 4 });
	check_image(loaded, 8, NULL, (unsigned[4]){ 5, 2, 3, 4 });
	/* the note's flush covers W6 and the note */
	check_image(loaded, 10, NULL, (unsigned[4]){ 5, 6, 7, 4 });
	T_EQ(dev_rec_pending_writes(loaded, 9), 2);
	T_EQ(dev_rec_trace_index(&info, 0), 0);
	T_EQ(dev_rec_trace_index(&info, info.end[3]), 4);
	T_EQ(dev_rec_trace_index(&info, info.end[3] + 1), 4);
	T_EQ(dev_rec_trace_index(&info, info.file_bytes), 10);
	free(info.end);
	dev_close(loaded);

	/* a kill inside the last record's write: that record is not there */
	T_EQ(truncate(path, (off_t)info.file_bytes - 1), 0);
	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &loaded), 0);
	T_EQ(dev_rec_trace_load(path, loaded, &info), 0);
	T_EQ(info.entries, 9);
	T_CHECK(info.torn_tail);
	free(info.end);
	dev_close(loaded);

	/* done_before survives: a flush issued while W was in flight covers
	 * nothing, in the file as in the log */
	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &rec), 0);
	T_EQ(dev_rec_trace_create(path, DEVSZ, 512, &t), 0);
	dev_rec_trace_attach(t, rec);
	T_EQ(dev_rec_inject(rec, &(struct dev_rec_entry){ .kind = DEV_REC_WRITE, .len = BS,
							 .data = blk, .result = BS }, 0), 0);
	T_EQ(dev_rec_inject(rec, &(struct dev_rec_entry){ .kind = DEV_REC_FLUSH }, 0), 0);
	T_EQ(dev_rec_inject(rec, &(struct dev_rec_entry){ .kind = DEV_REC_FLUSH }, 3), -EINVAL);
	dev_close(rec);
	T_EQ(dev_rec_trace_close(t), 0);
	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &loaded), 0);
	T_EQ(dev_rec_trace_load(path, loaded, &info), 0);
	T_EQ(info.entries, 2);
	T_EQ(dev_rec_pending_writes(loaded, 2), 1);
	check_image(loaded, 2, NULL, (unsigned[4]){ 0, 0, 0, 0 });
	free(info.end);
	/* not a trace; a trace into a recorder that already logged */
	T_EQ(dev_rec_trace_load(path, loaded, &info), -EINVAL);
	dev_close(loaded);
	T_EQ(dev_rec_trace_load("/dev/null", NULL, &info), -EINVAL);
	unlink(path);
	rmdir(dir);
}

/* ---- fault injection ---------------------------------------------------- */

static struct dev *faulty(const struct dev_fault_opts *o)
{
	struct dev *mem, *f;

	if (dev_mem_new(DEVSZ, 512, &mem) < 0)
		return NULL;
	if (dev_fault_new(mem, o, &f) < 0) {
		dev_close(mem);
		return NULL;
	}
	return f;
}

static void test_fault_nth(void)
{
	struct dev_fault_opts o = { .fail_read_nth = 3, .fail_write_nth = 2,
				    .fail_flush_nth = 1 };
	struct dev *f = faulty(&o);
	struct dev_fault_counts c;
	static uint8_t buf[BS];

	T_CHECK(f);
	T_STREQ(dev_name(f), "fault:mem");
	T_EQ(wr(f, 0, 1, 0), 0);
	T_EQ(wr(f, 0, 2, 0), -EIO);  /* the 2nd write: never reaches mem */
	T_EQ(wr(f, 1, 3, 0), 0);     /* not sticky */
	T_EQ(dev_flush(f), -EIO);
	T_EQ(dev_flush(f), 0);
	T_EQ(dev_pread(f, buf, BS, 0), 0);
	T_EQ(holds(f, 0, 1), 1);     /* read 2: still the first write's data */
	T_EQ(dev_pread(f, buf, BS, 0), -EIO);
	T_EQ(dev_pread(f, buf, BS, 0), 0);
	dev_fault_counts(f, &c);
	T_EQ(c.reads, 4);
	T_EQ(c.writes, 3);
	T_EQ(c.flushes, 2);
	T_EQ(c.read_errors, 1);
	T_EQ(c.write_errors, 1);
	T_EQ(c.flush_errors, 1);
	dev_close(f);

	o = (struct dev_fault_opts){ .fail_write_nth = 2, .sticky = true };
	f = faulty(&o);
	T_CHECK(f);
	T_EQ(wr(f, 0, 1, 0), 0);
	for (int i = 0; i < 5; i++)
		T_EQ(wr(f, 0, 2, 0), -EIO);
	T_EQ(dev_flush(f), 0);
	dev_fault_counts(f, &c);
	T_EQ(c.write_errors, 5);
	dev_close(f);
}

/* Error rates: about the rate, and the same seed gives the same faults. */
static uint64_t rate_pattern(uint64_t seed, int *fails)
{
	struct dev_fault_opts o = { .seed = seed, .read_error_rate = 0.25 };
	struct dev *f = faulty(&o);
	static uint8_t buf[512];
	uint64_t pattern = 0;

	*fails = 0;
	if (!f)
		return 0;
	for (int i = 0; i < 400; i++) {
		int bad = dev_pread(f, buf, 512, 0) == -EIO;

		*fails += bad;
		if (i < 64)
			pattern |= (uint64_t)bad << i;
	}
	dev_close(f);
	return pattern;
}

static void test_fault_rates(void)
{
	int fa, fb, fc;
	uint64_t a = rate_pattern(5, &fa), b = rate_pattern(5, &fb), c = rate_pattern(6, &fc);

	T_EQ_U64(a, b);
	T_EQ(fa, fb);
	T_CHECK(a != c);
	T_CHECK(fa > 60 && fa < 140); /* 100 expected */
}

struct short_wait {
	rt_mutex lock;
	rt_cond cond;
	bool done;
};

static void short_done(struct dev_req *r)
{
	struct short_wait *s = r->r_priv;

	rt_mutex_lock(&s->lock);
	s->done = true;
	rt_cond_signal(&s->cond);
	rt_mutex_unlock(&s->lock);
}

static void test_fault_short_write(void)
{
	struct dev_fault_opts o = { .seed = 3, .short_write_nth = 2 };
	struct dev *f = faulty(&o);
	static uint8_t buf[16 * 512];
	struct short_wait s = { .done = false };
	struct dev_req r = { .r_op = DEV_OP_WRITE, .r_len = sizeof(buf), .r_buf = buf,
			     .r_done = short_done, .r_priv = &s };
	struct dev_fault_counts c;

	T_CHECK(f);
	rt_mutex_init(&s.lock, "t");
	rt_cond_init(&s.cond, "t");
	memset(buf, 0xaa, sizeof(buf));
	T_EQ(dev_pwrite(f, buf, sizeof(buf), 0, 0), 0);
	memset(buf, 0xbb, sizeof(buf));
	T_EQ(dev_submit(f, &r), 0);
	rt_mutex_lock(&s.lock);
	while (!s.done)
		rt_cond_wait(&s.cond, &s.lock);
	rt_mutex_unlock(&s.lock);
	T_CHECK(r.r_result >= 0 && r.r_result < (int64_t)sizeof(buf));
	T_EQ(r.r_result % 512, 0);
	/* the prefix is new, the rest old */
	T_EQ(dev_pread(f, buf, sizeof(buf), 0), 0);
	for (int64_t i = 0; i < (int64_t)sizeof(buf); i++) {
		if (buf[i] != (i < r.r_result ? 0xbb : 0xaa)) {
			T_FAILF("byte %lld", (long long)i);
			break;
		}
	}
	dev_fault_counts(f, &c);
	T_EQ(c.short_writes, 1);
	dev_close(f);
	rt_cond_release(&s.cond);
	rt_mutex_release(&s.lock);
}

/* rec over fault: a failed write is in the log and never durable. */
static void test_rec_over_fault(void)
{
	struct dev_fault_opts o = { .fail_write_nth = 2 };
	struct dev *f = faulty(&o), *rec;
	struct dev_rec_entry e;

	T_CHECK(f);
	T_EQ(dev_rec_new(f, &rec), 0);
	T_EQ(wr(rec, 0, 1, 0), 0);
	T_EQ(wr(rec, 1, 2, DEV_REQ_FUA), -EIO);
	T_EQ(dev_flush(rec), 0);
	T_EQ(dev_rec_entry(rec, 1, &e), 0);
	T_EQ(e.result, -EIO);
	check_image(rec, 3, NULL, (unsigned[4]){ 1, 0, 0, 0 });
	T_EQ(dev_rec_pending_writes(rec, 3), 0);
	dev_close(rec);
}

/*
 * A failed flush: what it was to cover is never durable after it, not even
 * under a later flush that succeeds (a cache that dropped those writes);
 * only possibly there. With count_preflush a PREFLUSH write is a flush
 * too, and its failure fails the write.
 */
static void test_rec_failed_flush(void)
{
	struct dev_fault_opts o = { .fail_flush_nth = 1, .count_preflush = true };
	struct dev *f = faulty(&o), *rec;
	struct dev_fault_counts c;
	uint64_t all = ~0ull;
	struct dev_crash_policy every = { .mode = DEV_CRASH_SUBSET, .subset_bits = &all,
					  .subset_nbits = 64 };

	T_CHECK(f);
	T_EQ(dev_rec_new(f, &rec), 0);
	T_EQ(wr(rec, 0, 1, 0), 0);
	T_EQ(dev_flush(rec), -EIO);              /* the 1st flush fails */
	T_EQ(wr(rec, 1, 2, 0), 0);
	T_EQ(dev_flush(rec), 0);                 /* covers block 1 only */
	check_image(rec, 4, NULL, (unsigned[4]){ 0, 2, 0, 0 });
	T_EQ(dev_rec_pending_writes(rec, 4), 1); /* block 0: possibly */
	check_image(rec, 4, &every, (unsigned[4]){ 1, 2, 0, 0 });
	dev_close(rec);

	o.fail_flush_nth = 2;
	f = faulty(&o);
	T_CHECK(f);
	T_EQ(dev_rec_new(f, &rec), 0);
	T_EQ(wr(rec, 0, 1, DEV_REQ_PREFLUSH), 0);   /* flush 1 */
	T_EQ(wr(rec, 1, 2, 0), 0);
	T_EQ(wr(rec, 2, 3, DEV_REQ_PREFLUSH), -EIO); /* flush 2 fails: not written */
	T_EQ(dev_flush(rec), 0);
	check_image(rec, 4, NULL, (unsigned[4]){ 0, 0, 0, 0 });
	check_image(rec, 4, &every, (unsigned[4]){ 1, 2, 0, 0 });
	dev_fault_counts(f, &c);
	T_EQ(c.flushes, 3);
	T_EQ(c.flush_errors, 1);
	T_EQ(c.writes, 2);
	dev_close(rec);
}

/* failed_flush_drops_cache: the sim disk loses what it had not written. */
static void drop_body(void *arg)
{
	int *after = arg;
	struct dev_fault_opts o = { .fail_flush_nth = 2, .failed_flush_drops_cache = true };
	struct dev *hdd, *f;

	*after = -1;
	if (dev_sim_hdd_new(NULL, &hdd) < 0 || dev_fault_new(hdd, &o, &f) < 0)
		return;
	wr(f, 10, 1, 0);
	dev_flush(f);
	wr(f, 20, 2, 0);
	if (dev_flush(f) == -EIO)
		*after = holds(f, 20, 2) * 2 + holds(f, 10, 1);
	dev_close(f);
}

static void test_fault_failed_flush_drops_cache(void)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = 1 };
	int after = 0;
	rt_world *w;

	T_EQ(rt_world_new(&wo, &w), 0);
	rt_world_run(w, "test", drop_body, &after);
	rt_world_free(w);
	T_EQ(after, 1); /* block 20 lost, block 10 kept */
}

/* The Nth flush "succeeds" but the sim disk's cache is gone. */
struct lose {
	int rc_flush, after;
	struct dev_fault_counts c;
};

static void lose_body(void *arg)
{
	struct lose *x = arg;
	struct dev_fault_opts o = { .lose_cache_flush_nth = 2 };
	struct dev *hdd, *f;

	x->rc_flush = -1;
	if (dev_sim_hdd_new(NULL, &hdd) < 0 || dev_fault_new(hdd, &o, &f) < 0)
		return;
	wr(f, 10, 1, 0);
	dev_flush(f);              /* a real flush: block 10 durable */
	wr(f, 20, 2, 0);
	/* no read in between: it would wait for the drive's background
	 * destage of block 20 and find it on the media */
	x->rc_flush = dev_flush(f); /* the lying one */
	x->after = holds(f, 20, 2) * 2 + holds(f, 10, 1);
	dev_fault_counts(f, &x->c);
	dev_close(f);
}

static void test_fault_lose_cache(void)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = 1 };
	struct lose x = { 0 };
	rt_world *w;

	T_EQ(rt_world_new(&wo, &w), 0);
	rt_world_run(w, "test", lose_body, &x);
	rt_world_free(w);
	T_EQ(x.rc_flush, 0);
	T_EQ(x.after, 1); /* block 20 lost, block 10 kept */
	T_EQ(x.c.lost_caches, 1);
	T_EQ(x.c.flushes, 2);
}

static void test_bad_args(void)
{
	struct dev_fault_opts o = { .read_error_rate = 2 };
	struct dev *mem, *f;

	T_EQ(dev_mem_new(DEVSZ, 512, &mem), 0);
	T_EQ(dev_fault_new(mem, &o, &f), -EINVAL);
	T_EQ(dev_rec_new(NULL, &f), -EINVAL);
	T_EQ(dev_rec_count(mem), 0);
	T_EQ(dev_rec_image(mem, 0, NULL, mem), -EINVAL);
	dev_close(mem);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_rec_log);
	T_RUN(test_rec_images);
	T_RUN(test_rec_every_flush_point);
	T_RUN(test_rec_torn);
	T_RUN(test_rec_inflight);
	T_RUN(test_rec_trace_roundtrip);
	T_RUN(test_fault_nth);
	T_RUN(test_fault_rates);
	T_RUN(test_fault_short_write);
	T_RUN(test_rec_over_fault);
	T_RUN(test_fault_lose_cache);
	T_RUN(test_rec_failed_flush);
	T_RUN(test_fault_failed_flush_drops_cache);
	T_RUN(test_bad_args);
	return t_done(argv[0]);
}

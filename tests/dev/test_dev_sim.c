/*
 * The simulated HDD and SSD: data round trips, timing (sequential against
 * random, seek distance, cache, FUA, flush), the volatile cache across a
 * power cut, NCQ, determinism, and the real world's real sleeps.
 * Each test body runs as the first thread of a fresh sim world (seed 1)
 * unless it says otherwise; time is virtual, so the runs are fast.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "ujbd/dev.h"
#include "priv/dev_req.h"
#include "priv/dev_sim.h"
#include "priv/param.h"
#include "priv/rt.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

/*
 * Devices a test opened, closed by the world's first thread after the body
 * returns (also when a check failed and returned early): a sim device left
 * open would keep its threads waiting and the world would report a deadlock.
 */
static struct dev *tracked[8];
static int ntracked;

static struct dev *track(struct dev *d)
{
	if (d && ntracked < 8)
		tracked[ntracked++] = d;
	return d;
}

static void close_tracked(struct dev *d)
{
	for (int i = 0; i < ntracked; i++) {
		if (tracked[i] == d) {
			tracked[i] = tracked[--ntracked];
			break;
		}
	}
	dev_close(d);
}

struct sim_run {
	void (*body)(void *);
	void *arg;
};

static void sim_main(void *arg)
{
	struct sim_run *sr = arg;

	sr->body(sr->arg);
	while (ntracked > 0)
		close_tracked(tracked[ntracked - 1]);
}

/* Run body as the first thread of a fresh sim world. */
static void in_sim(void (*body)(void *), void *arg, uint64_t seed)
{
	struct rt_world_opts o = { .kind = RT_WORLD_SIM, .seed = seed };
	struct sim_run sr = { body, arg };
	rt_world *w;

	if (rt_world_new(&o, &w) < 0) {
		T_FAILF("rt_world_new(sim) failed");
		return;
	}
	rt_world_run(w, "test", sim_main, &sr);
	rt_world_free(w);
}

#define SIM_TEST(name)                                   \
	static void name##_body(void *arg);              \
	static void name(void) { in_sim(name##_body, NULL, 1); } \
	static void name##_body(void *arg)

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9) + 1);
}

static struct dev *hdd(unsigned qd, uint64_t cache)
{
	struct dev_hdd_params p;
	struct dev *d = NULL;

	dev_hdd_defaults(&p);
	p.queue_depth = qd;
	p.cache_bytes = cache;
	if (dev_sim_hdd_new(&p, &d) < 0)
		return NULL;
	return track(d);
}

/* Time one synchronous op, in ns of (virtual) time. */
static uint64_t timed_read(struct dev *d, void *buf, uint32_t len, uint64_t off)
{
	uint64_t t0 = rt_now_ns();

	if (dev_pread(d, buf, len, off) < 0)
		return UINT64_MAX;
	return rt_now_ns() - t0;
}

static uint64_t timed_write(struct dev *d, const void *buf, uint32_t len,
			    uint64_t off, uint32_t flags)
{
	uint64_t t0 = rt_now_ns();

	if (dev_pwrite(d, buf, len, off, flags) < 0)
		return UINT64_MAX;
	return rt_now_ns() - t0;
}

static uint64_t timed_flush(struct dev *d)
{
	uint64_t t0 = rt_now_ns();

	if (dev_flush(d) < 0)
		return UINT64_MAX;
	return rt_now_ns() - t0;
}

/* ---- data ---------------------------------------------------------------- */

static void roundtrip(struct dev *d)
{
	static uint8_t a[64 * KiB], b[64 * KiB];
	uint64_t far = dev_size(d) - sizeof(a);

	T_CHECK(d);
	memset(b, 0xee, sizeof(b));
	T_EQ(dev_pread(d, b, sizeof(b), 12345 * 512), 0);
	for (size_t i = 0; i < sizeof(b); i++)
		T_EQ(b[i], 0); /* never written: zeros */
	fill(a, sizeof(a), 1);
	T_EQ(dev_pwrite(d, a, sizeof(a), 0, 0), 0);
	T_EQ(dev_pwrite(d, a, sizeof(a), far, DEV_REQ_FUA), 0);
	T_EQ(dev_pwrite(d, a + 512, 4096, 1 << 20, DEV_REQ_PREFLUSH), 0);
	T_EQ(dev_pread(d, b, sizeof(b), 0), 0);
	T_CHECK(memcmp(a, b, sizeof(a)) == 0);
	T_EQ(dev_pread(d, b, sizeof(b), far), 0);
	T_CHECK(memcmp(a, b, sizeof(a)) == 0);
	/* overwrite part of a cached extent, then flush: the newer data wins */
	fill(a, 4096, 2);
	T_EQ(dev_pwrite(d, a, 4096, 8192, 0), 0);
	T_EQ(dev_flush(d), 0);
	T_EQ(dev_pread(d, b, 4096, 8192), 0);
	T_CHECK(memcmp(a, b, 4096) == 0);
	T_EQ(dev_pread(d, b, 4096, 1 << 20), 0);
	fill(a, sizeof(a), 1);
	T_CHECK(memcmp(a + 512, b, 4096) == 0);
}

SIM_TEST(test_hdd_roundtrip)
{
	struct dev *d = hdd(1, 16 * MiB);

	roundtrip(d);
	T_CHECK(dev_rotational(d));
	T_CHECK(dev_volatile_cache(d));
	T_EQ(dev_queue_depth(d), 1);
	T_STREQ(dev_name(d), "hdd");
	T_EQ_U64(dev_size(d), 500000000000ull);
	close_tracked(d);
	d = hdd(32, 0); /* NCQ, no cache */
	roundtrip(d);
	T_CHECK(!dev_volatile_cache(d));
	close_tracked(d);
}

SIM_TEST(test_ssd_roundtrip)
{
	struct dev *d;

	T_EQ(dev_sim_ssd_new(NULL, &d), 0);
	track(d);
	roundtrip(d);
	T_CHECK(!dev_rotational(d));
	T_EQ(dev_queue_depth(d), 32);
	T_STREQ(dev_name(d), "ssd");
	close_tracked(d);
}

/* ---- stamped writes --------------------------------------------------------- */

/* One request, waited for: its r_result, or dev_submit's refusal. */
static int64_t req_sync(struct dev *d, enum dev_op op, uint32_t flags, uint64_t off,
			uint32_t len, void *buf)
{
	struct dev_group g;
	struct dev_group_req r = { .gr_req = { .r_op = op, .r_flags = flags, .r_off = off,
					       .r_len = len, .r_buf = buf } };
	int64_t rc = dev_group_init(&g);

	if (rc == 0) {
		rc = dev_group_submit(d, &g, &r);
		if (rc == 0)
			rc = dev_group_wait(&r);
		dev_group_release(&g);
	}
	return rc;
}

#define STAMP_SPAN (512 * KiB)   /* the region the model covers */

/*
 * Stamped writes, byte writes over and under them (whole blocks, parts of
 * blocks, across block ends), flushes, against a model that holds the
 * bytes (a stamp's bytes by dev_stamp_fill): every read returns the
 * model's bytes, on the cache's paths (new extent, a write absorbed by an
 * extent, appended to one, written through, destaged) and on a device
 * that takes bytes only (the core makes them).
 */
static void stamp_model(struct dev *d)
{
	static uint8_t model[STAMP_SPAN], got[STAMP_SPAN], bytes[64 * KiB];
	static struct dev_stamp st[16];
	uint64_t base = 3 * MiB, x = 12345;

	T_CHECK(d);
	if (!d)
		return;
	memset(model, 0, sizeof(model));
	for (unsigned op = 0; op < 600; op++) {
		unsigned kind;
		uint64_t off;
		uint32_t len;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		kind = (unsigned)(x >> 60) % 8;
		if (kind < 4) {            /* stamped: 1..16 blocks */
			uint32_t n = 1 + (uint32_t)(x >> 20) % 16;

			off = ((x >> 33) % (STAMP_SPAN / 4096 - n)) * 4096;
			if (kind == 0 && op > 0) /* right after the last one: an append */
				off = (off / 4096 / 4) * 4096;
			for (uint32_t i = 0; i < n; i++) {
				memset(&st[i], 0, sizeof(st[i]));
				for (unsigned k = 0; k < DEV_STAMP_BYTES; k++)
					st[i].s_bytes[k] = (uint8_t)(op * 7 + i * 3 + k + 1);
				dev_stamp_fill(model + off + i * 4096, &st[i]);
			}
			T_EQ(req_sync(d, DEV_OP_WRITE, DEV_REQ_STAMPED | (kind == 1 ? DEV_REQ_FUA : 0),
				      base + off, n * 4096, st), (int64_t)n * 4096);
		} else if (kind < 7) {     /* bytes: 512-aligned, any length */
			len = 512 * (1 + (uint32_t)(x >> 24) % 24);
			off = ((x >> 36) % ((STAMP_SPAN - len) / 512)) * 512;
			fill(bytes, len, op);
			memcpy(model + off, bytes, len);
			T_EQ(req_sync(d, DEV_OP_WRITE, kind == 4 ? DEV_REQ_FUA : 0, base + off, len,
				      bytes), (int64_t)len);
		} else {
			T_EQ(dev_flush(d), 0);
		}
		if (op % 50 == 49 || kind == 6) {
			T_EQ(dev_pread(d, got, STAMP_SPAN, base), 0);
			if (memcmp(got, model, STAMP_SPAN) != 0) {
				size_t at = 0;

				while (got[at] == model[at])
					at++;
				T_FAILF("op %u (%s): the device's bytes differ from the model's at %zu "
					"(%u, not %u)", op, dev_name(d), at, got[at], model[at]);
				return;
			}
		}
	}
	T_EQ(dev_flush(d), 0);
	/* a read of part of a stamped block: its stamp's bytes, then zeros */
	T_EQ(dev_pread(d, got, 1024, base + 4096), 0);
	T_CHECK(memcmp(got, model + 4096, 1024) == 0);
	T_EQ(dev_pread(d, got, STAMP_SPAN, base), 0);
	T_CHECK(memcmp(got, model, STAMP_SPAN) == 0);
}

SIM_TEST(test_stamped_writes)
{
	struct dev_hdd_params p;
	struct dev *d = NULL;

	d = hdd(1, 16 * MiB);      /* cache, every write its own extent */
	T_CHECK(dev_takes_stamps(d));
	stamp_model(d);
	close_tracked(d);
	dev_hdd_defaults(&p);      /* cache that absorbs and appends */
	p.cache_merge_bytes = 1 * MiB;
	T_EQ(dev_sim_hdd_new(&p, &d), 0);
	stamp_model(track(d));
	close_tracked(d);
	stamp_model(d = hdd(32, 0)); /* no cache: written through */
	close_tracked(d);
	T_EQ(dev_sim_ssd_new(NULL, &d), 0);
	stamp_model(track(d));
	close_tracked(d);
	T_EQ(dev_mem_new(64 * MiB, 512, &d), 0); /* bytes only: the core makes them */
	T_CHECK(!dev_takes_stamps(d));
	stamp_model(track(d));
	close_tracked(d);
}

/* What a stamped request may not be: a read, or not whole 4 KiB blocks. */
SIM_TEST(test_stamped_refused)
{
	static struct dev_stamp st[4];
	static uint8_t buf[16 * KiB];
	struct dev *d = hdd(1, 16 * MiB);

	T_CHECK(d);
	if (!d)
		return;
	T_EQ(req_sync(d, DEV_OP_READ, DEV_REQ_STAMPED, 0, 4096, buf), -EINVAL);
	T_EQ(req_sync(d, DEV_OP_WRITE, DEV_REQ_STAMPED, 512, 4096, st), -EINVAL);
	T_EQ(req_sync(d, DEV_OP_WRITE, DEV_REQ_STAMPED, 4096, 4096 + 512, st), -EINVAL);
	T_EQ(req_sync(d, DEV_OP_WRITE, DEV_REQ_STAMPED, 4096, 2048, st), -EINVAL);
	T_EQ(req_sync(d, DEV_OP_WRITE, DEV_REQ_STAMPED, 8192, 4096, st), 4096);
}

/* ---- HDD timing ------------------------------------------------------------ */

SIM_TEST(test_hdd_random_vs_sequential)
{
	struct dev *d = hdd(1, 16 * MiB);
	static uint8_t buf[4096];
	struct rt_prng prng;
	uint64_t t0, ns, blocks = dev_size(d) / 4096;
	double iops, mb_s;
	const int n = 300, nseq = 4000;

	rt_prng_init(&prng, 42);
	t0 = rt_now_ns();
	for (int i = 0; i < n; i++)
		T_EQ(dev_pread(d, buf, 4096, rt_prng_below(&prng, blocks) * 4096), 0);
	ns = rt_now_ns() - t0;
	iops = n * 1e9 / (double)ns;
	fprintf(stderr, "    hdd random 4k read: %.1f IOPS\n", iops);
	T_CHECK(iops >= 75 && iops <= 120);

	/* sequential at the outer edge: near the 120 MB/s media rate */
	t0 = rt_now_ns();
	for (int i = 0; i < nseq; i++)
		T_EQ(dev_pread(d, buf, 4096, (uint64_t)i * 4096), 0);
	ns = rt_now_ns() - t0;
	mb_s = nseq * 4096.0 * 1e3 / (double)ns;
	fprintf(stderr, "    hdd sequential 4k read: %.1f MB/s\n", mb_s);
	T_CHECK(mb_s >= 100 && mb_s <= 121);

	/* and at the inner edge, near 60 MB/s */
	t0 = rt_now_ns();
	for (int i = 0; i < nseq; i++)
		T_EQ(dev_pread(d, buf, 4096, dev_size(d) - (uint64_t)(nseq - i) * 4096), 0);
	mb_s = nseq * 4096.0 * 1e3 / (double)(rt_now_ns() - t0);
	fprintf(stderr, "    hdd sequential 4k read, inner zone: %.1f MB/s\n", mb_s);
	T_CHECK(mb_s >= 50 && mb_s <= 61);
	close_tracked(d);
}

/* Short seeks cost less than long ones; a full stroke about 18 ms. */
SIM_TEST(test_hdd_seek_distance)
{
	struct dev *d = hdd(1, 0);
	static uint8_t buf[512];
	uint64_t near_ns = 0, far_ns = 0, size = dev_size(d);
	const int n = 40;

	for (int i = 0; i < n; i++) {
		/* alternate between two nearby places (about 1,000 cylinders)... */
		near_ns += timed_read(d, buf, 512, (i & 1) ? 0 : (size / 300) & ~4095ull);
	}
	for (int i = 0; i < n; i++) /* ...and between the two edges */
		far_ns += timed_read(d, buf, 512, (i & 1) ? 0 : size - 512);
	near_ns /= n;
	far_ns /= n;
	fprintf(stderr, "    near %.2f ms, full stroke %.2f ms (with rotation)\n",
		near_ns / 1e6, far_ns / 1e6);
	/* near: 0.2 overhead + ~2.1 seek + ~4.2 rotation on average */
	T_CHECK(near_ns > 2 * RT_NS_PER_MS && near_ns < 8 * RT_NS_PER_MS);
	/* far: + 18 ms seek */
	T_CHECK(far_ns > 18 * RT_NS_PER_MS && far_ns < 27 * RT_NS_PER_MS);
	T_CHECK(far_ns > near_ns + 10 * RT_NS_PER_MS);
	close_tracked(d);
}

/* Rotation is tracked, not drawn: a read of the sector just behind the head
 * costs nearly a revolution, one just ahead costs nearly nothing. */
SIM_TEST(test_hdd_rotation)
{
	struct dev_hdd_params p;
	struct dev *d;
	static uint8_t buf[4096];
	uint64_t ns;

	dev_hdd_defaults(&p);
	p.readahead_bytes = 0;
	p.cache_bytes = 0;
	T_EQ(dev_sim_hdd_new(&p, &d), 0);
	track(d);
	T_EQ(dev_pread(d, buf, 4096, 1 << 20), 0);
	/* the same sector again: it passed under the head, wait a revolution */
	ns = timed_read(d, buf, 4096, 1 << 20);
	T_CHECK(ns > 8 * RT_NS_PER_MS && ns < 9 * RT_NS_PER_MS);
	/* the next sectors after 0.2 ms overhead: the head is past them too */
	ns = timed_read(d, buf, 4096, (1 << 20) + 4096);
	T_CHECK(ns > 7 * RT_NS_PER_MS && ns < 9 * RT_NS_PER_MS);
	/* 100 KB further on (~0.85 ms at 120 MB/s): just ahead, no revolution */
	ns = timed_read(d, buf, 4096, (1 << 20) + 8192 + 100 * 1024);
	T_CHECK(ns < 2 * RT_NS_PER_MS);
	close_tracked(d);
}

SIM_TEST(test_hdd_cache_fua_flush)
{
	struct dev *d = hdd(1, 16 * MiB);
	static uint8_t buf[4096];
	struct rt_prng prng;
	uint64_t ns, blocks = dev_size(d) / 4096;

	rt_prng_init(&prng, 7);
	fill(buf, sizeof(buf), 3);
	/* an empty flush costs the command only */
	ns = timed_flush(d);
	T_EQ_U64(ns, 200 * RT_NS_PER_US);
	/* a cached write: overhead + 4 KiB over SATA */
	ns = timed_write(d, buf, 4096, 4096 * 1000, 0);
	T_CHECK(ns < 300 * RT_NS_PER_US);
	/* FUA: a mechanical access */
	ns = timed_write(d, buf, 4096, 4096 * (blocks / 2), DEV_REQ_FUA);
	T_CHECK(ns > 2 * RT_NS_PER_MS);
	/* ten scattered cached writes, then a flush that destages them */
	for (int i = 0; i < 10; i++) {
		ns = timed_write(d, buf, 4096, rt_prng_below(&prng, blocks) * 4096, 0);
		T_CHECK(ns < 300 * RT_NS_PER_US);
	}
	ns = timed_flush(d);
	fprintf(stderr, "    flush of 10 scattered blocks: %.1f ms\n", ns / 1e6);
	T_CHECK(ns > 30 * RT_NS_PER_MS && ns < 200 * RT_NS_PER_MS);
	T_EQ_U64(timed_flush(d), 200 * RT_NS_PER_US);
	close_tracked(d);
}

/* The cache coalesces (cache_merge_kib): a rewrite of a dirty block is
 * absorbed by it, so a block rewritten every millisecond (a log's last
 * block, a file rewritten in place) is destaged once per access, not once
 * per write, each waiting a revolution for the same sector. */
static uint64_t rewrites(uint64_t merge, uint8_t *buf, uint8_t *got)
{
	struct dev_hdd_params p;
	struct dev *d = NULL;
	uint64_t t0;

	dev_hdd_defaults(&p);
	p.cache_merge_bytes = merge;
	if (dev_sim_hdd_new(&p, &d) < 0)
		return UINT64_MAX;
	track(d);
	t0 = rt_now_ns();
	for (unsigned i = 0; i < 32; i++) { /* one a ms: the drive idles between them */
		fill(buf, 4096, 100 + i);
		if (dev_pwrite(d, buf, 4096, 50 * MiB, 0) < 0)
			return UINT64_MAX;
		rt_sleep_ns(RT_NS_PER_MS);
	}
	if (dev_flush(d) < 0 || dev_pread(d, got, 4096, 50 * MiB) < 0)
		return UINT64_MAX;
	t0 = rt_now_ns() - t0;
	close_tracked(d);
	return t0;
}

SIM_TEST(test_hdd_cache_coalesce)
{
	static uint8_t buf[4096], got[4096];
	uint64_t on = rewrites(1 * MiB, buf, got), off;

	T_CHECK(memcmp(got, buf, 4096) == 0); /* the last write is what lands */
	off = rewrites(0, buf, got);
	T_CHECK(memcmp(got, buf, 4096) == 0);
	fprintf(stderr, "    32 rewrites of a block, 1 ms apart, + flush: %.1f ms coalesced, "
		"%.1f ms not\n", on / 1e6, off / 1e6);
	T_CHECK(on < 60 * RT_NS_PER_MS); /* about the 32 ms of the stream itself */
	T_CHECK(off > 2 * on);
}

/* With the cache full, sequential writes stream at the media rate. */
SIM_TEST(test_hdd_sequential_write)
{
	struct dev *d = hdd(1, 4 * MiB);
	static uint8_t buf[64 * KiB];
	uint64_t t0 = rt_now_ns();
	double mb_s;

	for (int i = 0; i < 512; i++) /* 32 MiB */
		T_EQ(dev_pwrite(d, buf, sizeof(buf), (uint64_t)i * sizeof(buf), 0), 0);
	T_EQ(dev_flush(d), 0);
	mb_s = 512.0 * sizeof(buf) * 1e3 / (double)(rt_now_ns() - t0);
	fprintf(stderr, "    hdd sequential write + flush: %.1f MB/s\n", mb_s);
	T_CHECK(mb_s > 90 && mb_s < 125);
	close_tracked(d);
}

/* ---- the volatile cache across a power cut -------------------------------- */

static int block_is(struct dev *d, uint64_t off, unsigned seed)
{
	static uint8_t want[4096], got[4096];

	fill(want, sizeof(want), seed);
	if (dev_pread(d, got, sizeof(got), off) < 0)
		return -1;
	return memcmp(want, got, sizeof(got)) == 0;
}

/* Writes covered by a completed flush and FUA writes survive; of the rest,
 * in this run, some are lost. Returns how many of the unflushed were lost. */
static int power_cut_run(struct dev *d, int *lost)
{
	static uint8_t buf[4096];
	const int n = 32;

	*lost = 0;
	for (int i = 0; i < n; i++) { /* A: written, then flushed */
		fill(buf, sizeof(buf), 100 + i);
		if (dev_pwrite(d, buf, 4096, (uint64_t)i * 40960, 0) < 0)
			return -1;
	}
	if (dev_flush(d) < 0)
		return -1;
	/* FUA writes (odd i), then plain ones (even i) right before the cut:
	 * a drive destages whenever it is idle, so a plain write followed by
	 * a command that needs the head would be on the media by the cut */
	for (int k = 0; k < 2; k++) {
		for (int i = 1 - k; i < n; i += 2) {
			fill(buf, sizeof(buf), 200 + i);
			if (dev_pwrite(d, buf, 4096, (uint64_t)(n + i) * 40960,
				       (i & 1) ? DEV_REQ_FUA : 0) < 0)
				return -1;
		}
	}
	if (dev_sim_power_cut(d) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (block_is(d, (uint64_t)i * 40960, 100 + i) != 1)
			return -2; /* a flushed write was lost */
		int ok = block_is(d, (uint64_t)(n + i) * 40960, 200 + i);

		if ((i & 1) && ok != 1)
			return -3; /* a FUA write was lost */
		if (!(i & 1) && ok == 0)
			(*lost)++;
	}
	return 0;
}

SIM_TEST(test_hdd_power_cut)
{
	struct dev *d = hdd(1, 16 * MiB);
	static uint8_t buf[4096];
	int lost;

	T_EQ(power_cut_run(d, &lost), 0);
	fprintf(stderr, "    hdd: %d of 16 unflushed writes lost\n", lost);
	T_CHECK(lost > 0);
	/* the device works on after the cut */
	fill(buf, sizeof(buf), 9);
	T_EQ(dev_pwrite(d, buf, 4096, 0, 0), 0);
	T_EQ(dev_flush(d), 0);
	T_EQ(block_is(d, 0, 9), 1);
	close_tracked(d);
}

SIM_TEST(test_ssd_power_cut)
{
	struct dev_ssd_params p;
	struct dev *d;
	int lost;

	dev_ssd_defaults(&p);
	T_EQ(dev_sim_ssd_new(&p, &d), 0);
	track(d);
	T_CHECK(dev_volatile_cache(d));
	T_EQ(power_cut_run(d, &lost), 0);
	fprintf(stderr, "    ssd: %d of 16 unflushed writes lost\n", lost);
	T_CHECK(lost > 0);
	close_tracked(d);

	/* with power-loss protection nothing is lost */
	p.power_loss_protection = true;
	T_EQ(dev_sim_ssd_new(&p, &d), 0);
	track(d);
	T_CHECK(!dev_volatile_cache(d));
	T_EQ(power_cut_run(d, &lost), 0);
	T_EQ(lost, 0);
	close_tracked(d);
}

/* ---- SSD timing ---------------------------------------------------------- */

SIM_TEST(test_ssd_timing)
{
	struct dev *d;
	static uint8_t buf[128 * KiB];
	uint64_t ns, t0;
	double mb_s;

	T_EQ(dev_sim_ssd_new(NULL, &d), 0);
	track(d);
	/* read 4 KiB: 20 cmd + 50 page read + 100 bus */
	ns = timed_read(d, buf, 4096, 1 << 20);
	T_EQ_U64(ns, 170 * RT_NS_PER_US);
	/* cached write 4 KiB: 20 + 100 bus */
	ns = timed_write(d, buf, 4096, 8 << 20, 0);
	T_EQ_U64(ns, 120 * RT_NS_PER_US);
	/* flush waits for that page's program */
	ns = timed_flush(d);
	T_CHECK(ns > 20 * RT_NS_PER_US && ns <= 220 * RT_NS_PER_US);
	/* FUA: 20 + 100 + 200 program */
	ns = timed_write(d, buf, 4096, 9 << 20, DEV_REQ_FUA);
	T_EQ_U64(ns, 320 * RT_NS_PER_US);
	/* large sequential reads use the channels in parallel */
	t0 = rt_now_ns();
	for (int i = 0; i < 64; i++)
		T_EQ(dev_pread(d, buf, sizeof(buf), (uint64_t)i * sizeof(buf)), 0);
	mb_s = 64.0 * sizeof(buf) * 1e3 / (double)(rt_now_ns() - t0);
	fprintf(stderr, "    ssd sequential 128k read: %.1f MB/s\n", mb_s);
	T_CHECK(mb_s > 150 && mb_s <= 300);
	close_tracked(d);
}

/* ---- queueing ------------------------------------------------------------ */

struct batch {
	rt_mutex lock;
	rt_cond cond;
	int done;          /* [lock] */
	uint64_t hash;     /* [lock] completion order and times */
};

static void batch_done(struct dev_req *r)
{
	struct batch *b = r->r_priv;

	rt_mutex_lock(&b->lock);
	b->done++;
	b->hash = (b->hash ^ r->r_off ^ rt_now_ns()) * 0x100000001b3ull;
	rt_cond_signal(&b->cond);
	rt_mutex_unlock(&b->lock);
}

/* n random 4 KiB reads submitted at once; the virtual time they took. */
static uint64_t random_batch(struct dev *d, int n, uint64_t seed, uint64_t *hash)
{
	static struct dev_req rq[64];
	static uint8_t buf[64][4096];
	struct batch b = { .done = 0, .hash = 0xcbf29ce484222325ull };
	struct rt_prng prng;
	uint64_t t0 = rt_now_ns(), blocks = dev_size(d) / 4096;

	rt_mutex_init(&b.lock, "batch");
	rt_cond_init(&b.cond, "batch");
	rt_prng_init(&prng, seed);
	for (int i = 0; i < n; i++) {
		rq[i] = (struct dev_req){ .r_op = DEV_OP_READ, .r_len = 4096,
			.r_off = rt_prng_below(&prng, blocks) * 4096,
			.r_buf = buf[i], .r_done = batch_done, .r_priv = &b };
		if (dev_submit(d, &rq[i]) < 0)
			return 0;
	}
	rt_mutex_lock(&b.lock);
	while (b.done < n)
		rt_cond_wait(&b.cond, &b.lock);
	rt_mutex_unlock(&b.lock);
	rt_cond_release(&b.cond);
	rt_mutex_release(&b.lock);
	if (hash)
		*hash = b.hash;
	return rt_now_ns() - t0;
}

SIM_TEST(test_hdd_ncq)
{
	struct dev *d1 = hdd(1, 16 * MiB), *d32 = hdd(32, 16 * MiB);
	uint64_t t1 = random_batch(d1, 32, 5, NULL), t32 = random_batch(d32, 32, 5, NULL);

	fprintf(stderr, "    32 random reads: qd1 %.1f ms, NCQ %.1f ms\n", t1 / 1e6,
		t32 / 1e6);
	T_CHECK(t1 > 0 && t32 > 0);
	T_CHECK(t32 * 10 < t1 * 7); /* shortest positioning first wins >30% */
	close_tracked(d1);
	close_tracked(d32);
}

/* ---- determinism --------------------------------------------------------- */

struct det {
	uint64_t hash, elapsed;
};

static void det_body(void *arg)
{
	struct det *x = arg;
	struct dev *d = hdd(32, 16 * MiB);
	static uint8_t buf[4096];

	/* mix in the world's PRNG and a cached write so the run has history */
	if (dev_pwrite(d, buf, 4096, rt_rand_below(1000) * 4096, 0) < 0)
		return;
	x->elapsed = random_batch(d, 48, rt_rand(), &x->hash);
	close_tracked(d);
}

static void test_determinism(void)
{
	struct det a = { 0 }, b = { 0 }, c = { 0 };

	in_sim(det_body, &a, 77);
	in_sim(det_body, &b, 77);
	in_sim(det_body, &c, 78);
	T_CHECK(a.elapsed > 0);
	T_EQ_U64(a.hash, b.hash);
	T_EQ_U64(a.elapsed, b.elapsed);
	T_CHECK(a.hash != c.hash);
}

/* ---- the real world: the modelled time is really slept ------------------- */

static void test_real_world_sleeps(void)
{
	struct dev *d = hdd(1, 16 * MiB);
	static uint8_t buf[4096];
	uint64_t t0, ns;

	T_CHECK(d);
	t0 = rt_now_ns();
	/* edge to edge and back: two full strokes, ≥ 36 ms */
	T_EQ(dev_pread(d, buf, 4096, dev_size(d) - 4096), 0);
	T_EQ(dev_pread(d, buf, 4096, 0), 0);
	T_EQ(dev_pread(d, buf, 4096, dev_size(d) - 4096), 0);
	ns = rt_now_ns() - t0;
	fprintf(stderr, "    real world: 3 long reads took %.1f ms\n", ns / 1e6);
	T_CHECK(ns >= 36 * RT_NS_PER_MS && ns < 2 * RT_NS_PER_S);
	close_tracked(d);
}

static void test_params(void)
{
	struct dev_hdd_params h;
	struct dev_ssd_params s;
	struct dev *d;

	dev_hdd_defaults(&h);
	h.queue_depth = 0;
	T_EQ(dev_sim_hdd_new(&h, &d), -EINVAL);
	dev_hdd_defaults(&h);
	h.rate_inner_mb_s = 200;
	T_EQ(dev_sim_hdd_new(&h, &d), -EINVAL);
	dev_hdd_defaults(&h);
	h.block_size = 1000;
	T_EQ(dev_sim_hdd_new(&h, &d), -EINVAL);
	dev_ssd_defaults(&s);
	s.channels = 0;
	T_EQ(dev_sim_ssd_new(&s, &d), -EINVAL);
}

/* The registry: every model is found by name, its table fills the same
 * defaults as its defaults function, and a name=value list reaches it. */
static void test_model_registry(void)
{
	struct dev_hdd_params h, def;
	const struct dev_model *m = dev_model_find("hdd");
	char err[128] = "";

	T_CHECK(m && m == &dev_model_hdd && dev_model_find("ssd") == &dev_model_ssd);
	T_CHECK(dev_model_find("floppy") == NULL && dev_model_find(NULL) == NULL);
	T_EQ(dev_model_count(), 2);
	T_CHECK(dev_model_at(0) == &dev_model_hdd && dev_model_at(2) == NULL);
	T_EQ(m->m_params->t_size, sizeof(h));
	T_EQ(m->m_size_offset, offsetof(struct dev_hdd_params, size));
	dev_hdd_defaults(&def);
	memset(&h, 0xa5, sizeof(h));
	m->m_defaults(&h);
	T_CHECK(memcmp(&h, &def, sizeof(h)) == 0);
	T_CHECK(h.seek_avg_ms == 8.5 && h.seek_fit_avg_ms == 8.5 && h.destage_window == 128);
	T_EQ(h.cache_bytes, 16ull << 20);
	T_EQ(rt_param_parse(m->m_params, &h, "seek_avg_ms=9.5,rpm=5400,cache_mib=8", err,
			    sizeof(err)), 0);
	T_CHECK(h.seek_avg_ms == 9.5 && h.rpm == 5400 && h.cache_bytes == 8ull << 20);
	T_EQ(rt_param_parse(m->m_params, &h, "seek_avg_ms=100", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --hdd=seek_avg_ms: '100': out of range (0.5 to 40 ms)");
	T_CHECK(h.seek_avg_ms == 9.5);
}

static uint64_t long_seek_read(double seek_avg_ms)
{
	struct dev_hdd_params p;
	struct dev *d = NULL;
	uint8_t buf[4096];
	uint64_t ns;

	dev_hdd_defaults(&p);
	p.seek_avg_ms = seek_avg_ms;
	if (dev_sim_hdd_new(&p, &d) < 0)
		return 0;
	track(d);
	(void)timed_read(d, buf, 4096, 0);
	ns = timed_read(d, buf, 4096, p.size / 2);
	close_tracked(d);
	return ns;
}

/* seek_avg_ms scales the seek curve: a slower average seek makes a long
 * seek slower by about the ratio (rotation and transfer are not scaled). */
SIM_TEST(test_hdd_seek_avg)
{
	uint64_t a = long_seek_read(8.5), b = long_seek_read(17.0);

	fprintf(stderr, "    half-stroke read: %.3f ms at 8.5, %.3f ms at 17\n", a / 1e6,
		b / 1e6);
	T_CHECK(a > 0 && b > a + 5 * RT_NS_PER_MS);
}

/* flush_ms: an empty flush costs the command overhead plus flush_ms. */
SIM_TEST(test_hdd_flush_cost)
{
	struct dev_hdd_params p;
	struct dev *d = NULL;
	uint64_t base, slow;

	dev_hdd_defaults(&p);
	T_EQ(dev_sim_hdd_new(&p, &d), 0);
	track(d);
	base = timed_flush(d);
	close_tracked(d);
	p.flush_ms = 5;
	T_EQ(dev_sim_hdd_new(&p, &d), 0);
	track(d);
	slow = timed_flush(d);
	close_tracked(d);
	T_EQ(slow, base + 5 * RT_NS_PER_MS);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_params);
	T_RUN(test_model_registry);
	T_RUN(test_hdd_seek_avg);
	T_RUN(test_hdd_flush_cost);
	T_RUN(test_hdd_roundtrip);
	T_RUN(test_ssd_roundtrip);
	T_RUN(test_stamped_writes);
	T_RUN(test_stamped_refused);
	T_RUN(test_hdd_random_vs_sequential);
	T_RUN(test_hdd_seek_distance);
	T_RUN(test_hdd_rotation);
	T_RUN(test_hdd_cache_fua_flush);
	T_RUN(test_hdd_sequential_write);
	T_RUN(test_hdd_cache_coalesce);
	T_RUN(test_hdd_power_cut);
	T_RUN(test_ssd_power_cut);
	T_RUN(test_ssd_timing);
	T_RUN(test_hdd_ncq);
	T_RUN(test_determinism);
	T_RUN(test_real_world_sleeps);
	return t_done(argv[0]);
}

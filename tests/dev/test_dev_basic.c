/*
 * The device core, mem and file: validation, completion on the device's
 * own thread, draining close, data round trips through both file engines.
 * Runs in the real world (the file engines do real I/O).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/dev.h"
#include "priv/dev_file.h"
#include "priv/dev_req.h"
#include "priv/dev_sim.h"
#include "priv/rt.h"

static char tmpdir[256];

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

/* ---- async plumbing ---------------------------------------------------- */

struct waiter {
	rt_mutex lock;
	rt_cond cond;
	int done;            /* [lock] */
	int on_wrong_thread; /* [lock] r_done on a thread that is not the device's */
	const char *thread;  /* expected completion thread name */
};

static void waiter_init(struct waiter *w, const char *thread)
{
	memset(w, 0, sizeof(*w));
	rt_mutex_init(&w->lock, "t");
	rt_cond_init(&w->cond, "t");
	w->thread = thread;
}

static void waiter_done(struct dev_req *r)
{
	struct waiter *w = r->r_priv;

	rt_mutex_lock(&w->lock);
	if (strcmp(rt_self_name(), w->thread) != 0)
		w->on_wrong_thread++;
	w->done++;
	rt_cond_broadcast(&w->cond);
	rt_mutex_unlock(&w->lock);
}

static void waiter_wait(struct waiter *w, int n)
{
	rt_mutex_lock(&w->lock);
	while (w->done < n)
		rt_cond_wait(&w->cond, &w->lock);
	rt_mutex_unlock(&w->lock);
}

static void waiter_release(struct waiter *w)
{
	rt_cond_release(&w->cond);
	rt_mutex_release(&w->lock);
}

/* ---- tests ------------------------------------------------------------- */

static void test_parse_size(void)
{
	uint64_t v = 0;

	T_EQ(dev_parse_size("4096", &v), 0);
	T_EQ_U64(v, 4096);
	T_EQ(dev_parse_size("4k", &v), 0);
	T_EQ_U64(v, 4096);
	T_EQ(dev_parse_size("16M", &v), 0);
	T_EQ_U64(v, 16ull << 20);
	T_EQ(dev_parse_size("2G", &v), 0);
	T_EQ_U64(v, 2ull << 30);
	T_EQ(dev_parse_size("1GiB", &v), 0);
	T_EQ_U64(v, 1ull << 30);
	T_EQ(dev_parse_size("", &v), -EINVAL);
	T_EQ(dev_parse_size("-1", &v), -EINVAL);
	T_EQ(dev_parse_size("4x", &v), -EINVAL);
	T_EQ(dev_parse_size("k", &v), -EINVAL);
	T_EQ(dev_parse_size("99999999999999T", &v), -ERANGE);
}

static void test_validation(void)
{
	struct dev *d;
	uint8_t buf[1024];
	struct waiter w;
	struct dev_req r = { .r_op = DEV_OP_READ, .r_buf = buf, .r_done = waiter_done,
			     .r_priv = &w };

	waiter_init(&w, "mem-done");
	T_EQ(dev_mem_new(1 << 20, 512, &d), 0);
	T_EQ_U64(dev_size(d), 1 << 20);
	T_EQ(dev_block_size(d), 512);
	T_CHECK(!dev_volatile_cache(d));
	T_STREQ(dev_name(d), "mem");
	r.r_off = 100, r.r_len = 512;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* misaligned offset */
	r.r_off = 0, r.r_len = 100;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* misaligned length */
	r.r_off = (1 << 20) - 512, r.r_len = 1024;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* past the end */
	r.r_off = 0, r.r_len = 512, r.r_flags = DEV_REQ_FUA;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* FUA on a read */
	r.r_flags = 1u << 7;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* an unknown flag */
	r.r_flags = 0, r.r_len = 0;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* empty */
	r.r_len = 512, r.r_done = NULL;
	T_EQ(dev_submit(d, &r), -EINVAL);               /* no callback */
	r.r_done = waiter_done;
	T_EQ(dev_submit(d, &r), 0);
	waiter_wait(&w, 1);
	T_EQ(r.r_result, 512);
	T_EQ(w.on_wrong_thread, 0);
	T_EQ(dev_sim_power_cut(d), -EINVAL);
	T_EQ(dev_mem_new(1000, 512, &d), -EINVAL);
	dev_close(d);
	waiter_release(&w);
}

/* Many async writes then reads; every r_done on the completion thread. */
static void check_async_roundtrip(struct dev *d, const char *thread, unsigned n,
				  uint32_t bs)
{
	struct dev_req *rq = calloc(n, sizeof(*rq));
	uint8_t *out = malloc((size_t)n * bs), *in = calloc(n, bs);
	struct waiter w;

	waiter_init(&w, thread);
	fill(out, (size_t)n * bs, n);
	for (unsigned i = 0; i < n; i++) {
		rq[i] = (struct dev_req){ .r_op = DEV_OP_WRITE, .r_off = (uint64_t)i * bs,
			.r_len = bs, .r_buf = out + (size_t)i * bs,
			.r_done = waiter_done, .r_priv = &w };
		if (i % 7 == 3)
			rq[i].r_flags = DEV_REQ_FUA;
		if (i % 11 == 5)
			rq[i].r_flags |= DEV_REQ_PREFLUSH;
		T_EQ(dev_submit(d, &rq[i]), 0);
	}
	waiter_wait(&w, (int)n);
	for (unsigned i = 0; i < n; i++)
		T_EQ(rq[i].r_result, bs);
	T_EQ(dev_flush(d), 0);
	for (unsigned i = 0; i < n; i++) {
		rq[i] = (struct dev_req){ .r_op = DEV_OP_READ, .r_off = (uint64_t)i * bs,
			.r_len = bs, .r_buf = in + (size_t)i * bs,
			.r_done = waiter_done, .r_priv = &w };
		T_EQ(dev_submit(d, &rq[i]), 0);
	}
	waiter_wait(&w, 2 * (int)n);
	T_EQ(w.on_wrong_thread, 0);
	T_CHECK(memcmp(in, out, (size_t)n * bs) == 0);
	waiter_release(&w);
	free(rq);
	free(out);
	free(in);
}

static void test_mem_roundtrip(void)
{
	struct dev *d;
	uint8_t a[4096], b[4096];

	T_EQ(dev_mem_new(8 << 20, 4096, &d), 0);
	check_async_roundtrip(d, "mem-done", 200, 4096);
	fill(a, sizeof(a), 9);
	T_EQ(dev_pwrite(d, a, 4096, (8 << 20) - 4096, DEV_REQ_FUA), 0);
	T_EQ(dev_pread(d, b, 4096, (8 << 20) - 4096), 0);
	T_CHECK(memcmp(a, b, 4096) == 0);
	T_EQ(dev_pread(d, b, 4096, 1), -EINVAL);
	dev_close(d);
}

/* ---- close drains, and refuses new work once it started ---------------- */

struct closer {
	struct dev *d;
	struct dev_req second[64];
	int accepted, refused_rc;
	uint8_t buf[512];
	int second_done; /* only touched on the completion thread */
};

static void closer_second_done(struct dev_req *r)
{
	struct closer *c = r->r_priv;

	c->second_done++;
}

/* Runs on the completion thread while main sits in dev_close(). */
static void closer_first_done(struct dev_req *r)
{
	struct closer *c = r->r_priv;

	for (int i = 0; i < 5000; i++) {
		struct dev_req *s = &c->second[c->accepted % 64];
		int rc;

		*s = (struct dev_req){ .r_op = DEV_OP_READ, .r_len = 512, .r_buf = c->buf,
			.r_done = closer_second_done, .r_priv = c };
		rc = dev_submit(c->d, s);
		if (rc < 0) {
			c->refused_rc = rc;
			return;
		}
		if (++c->accepted >= 64)
			return;
		rt_sleep_ns(RT_NS_PER_MS);
	}
}

static void test_close_drains(void)
{
	struct closer c = { .refused_rc = 0 };
	struct dev_req first = { .r_op = DEV_OP_READ, .r_len = 512, .r_buf = c.buf,
				 .r_done = closer_first_done, .r_priv = &c };

	T_EQ(dev_mem_new(1 << 20, 512, &c.d), 0);
	T_EQ(dev_submit(c.d, &first), 0);
	dev_close(c.d);
	/* dev_close returned: every accepted request has had its r_done */
	T_EQ(c.refused_rc, -ESHUTDOWN);
	T_EQ(c.second_done, c.accepted);
	T_CHECK(c.accepted < 64);
}

/* ---- file ---------------------------------------------------------------- */

static void check_file_engine(enum dev_file_engine engine, const char *name)
{
	char path[300];
	struct dev *d;
	struct dev_file_opts o = { .create = true, .size = 4 << 20, .engine = engine };
	uint8_t a[8192], b[8192];
	struct stat st;

	snprintf(path, sizeof(path), "%s/f-%s", tmpdir, name);
	T_EQ(dev_file_open(path, &o, &d), 0);
	T_STREQ(dev_file_engine_name(d), name);
	T_EQ_U64(dev_size(d), 4 << 20);
	T_EQ(dev_block_size(d), 512);
	T_CHECK(dev_volatile_cache(d));
	T_CHECK(strncmp(dev_name(d), "file:", 5) == 0);
	check_async_roundtrip(d, "file-done", 300, 4096);
	fill(a, sizeof(a), 3);
	T_EQ(dev_pwrite(d, a, 8192, 1 << 20, DEV_REQ_PREFLUSH | DEV_REQ_FUA), 0);
	T_EQ(dev_flush(d), 0);
	dev_close(d);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_size, 4 << 20);

	/* reopen read-only: the data is there, writes are refused */
	o = (struct dev_file_opts){ .read_only = true, .engine = engine };
	T_EQ(dev_file_open(path, &o, &d), 0);
	T_EQ(dev_pread(d, b, 8192, 1 << 20), 0);
	T_CHECK(memcmp(a, b, 8192) == 0);
	T_EQ(dev_pwrite(d, a, 512, 0, 0), -EROFS);
	dev_close(d);
	unlink(path);
}

static void test_file_threads(void)
{
	check_file_engine(DEV_FILE_THREADS, "threads");
}

static void test_file_uring(void)
{
	struct dev *d;
	char path[300];
	struct dev_file_opts o = { .create = true, .size = 1 << 20,
				   .engine = DEV_FILE_URING };
	int rc;

	snprintf(path, sizeof(path), "%s/probe", tmpdir);
	rc = dev_file_open(path, &o, &d);
	unlink(path);
	if (rc < 0)
		T_SKIP("io_uring unavailable here: %s", strerror(-rc));
	dev_close(d);
	check_file_engine(DEV_FILE_URING, "io_uring");
}

/* Per-request ioprio reaches io_uring; RT without privilege falls back to BE. */
static void test_file_uring_ioprio(void)
{
	struct dev *d;
	char path[300];
	struct dev_file_opts o = { .create = true, .size = 1 << 20,
				   .engine = DEV_FILE_URING };
	uint8_t buf[4096] = { 1 };
	struct waiter w;
	uint16_t prios[3] = { RT_IOPRIO(RT_IOPRIO_CLASS_RT, 0),
			      RT_IOPRIO(RT_IOPRIO_CLASS_BE, 7),
			      RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0) };

	snprintf(path, sizeof(path), "%s/prio", tmpdir);
	if (dev_file_open(path, &o, &d) < 0)
		T_SKIP("io_uring unavailable here");
	waiter_init(&w, "file-done");
	for (int i = 0; i < 3; i++) {
		struct dev_req r = { .r_op = DEV_OP_WRITE, .r_len = 4096, .r_buf = buf,
				     .r_ioprio = prios[i], .r_done = waiter_done,
				     .r_priv = &w };

		T_EQ(dev_submit(d, &r), 0);
		waiter_wait(&w, i + 1);
		T_EQ(r.r_result, 4096);
	}
	dev_close(d);
	waiter_release(&w);
	unlink(path);
}

static void test_file_errors(void)
{
	struct dev *d;
	char path[300];
	struct dev_file_opts o = { 0 };

	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	T_EQ(dev_file_open(path, &o, &d), -ENOENT);
	T_EQ(dev_file_open(tmpdir, &o, &d) < 0, 1);
	o.workers = 1000;
	T_EQ(dev_file_open(path, &o, &d), -EINVAL);
}

/* O_DIRECT: aligned buffers go straight down; misaligned ones (a malloc'd
 * superblock, a merged request) through the core's bounce, either engine. */
static void check_file_direct(enum dev_file_engine engine)
{
	struct dev *d;
	char path[300];
	struct dev_file_opts o = { .create = true, .size = 1 << 20, .direct = true,
				   .block_size = 4096, .engine = engine };
	uint8_t *a, *b;
	int rc;

	snprintf(path, sizeof(path), "%s/direct", tmpdir);
	rc = dev_file_open(path, &o, &d);
	if (rc == -EINVAL) {
		unlink(path);
		T_SKIP("O_DIRECT not supported by this file system");
	}
	if (rc < 0 && engine == DEV_FILE_URING) {
		unlink(path);
		T_SKIP("io_uring unavailable here: %s", strerror(-rc));
	}
	T_EQ(rc, 0);
	T_EQ(posix_memalign((void **)&a, 4096, 3 * 4096), 0);
	T_EQ(posix_memalign((void **)&b, 4096, 3 * 4096), 0);
	fill(a, 8192, 5);
	T_EQ(dev_pwrite(d, a, 8192, 4096, DEV_REQ_FUA), 0);
	T_EQ(dev_pread(d, b, 8192, 4096), 0);
	T_CHECK(memcmp(a, b, 8192) == 0);
	T_EQ(dev_pread(d, b, 512, 0), -EINVAL); /* below the block size */
	fill(a + 16, 8192, 6);                   /* misaligned both ways */
	T_EQ(dev_pwrite(d, a + 16, 8192, 3 * 4096, 0), 0);
	memset(b, 0, 3 * 4096);
	T_EQ(dev_pread(d, b + 48, 8192, 3 * 4096), 0);
	T_CHECK(memcmp(a + 16, b + 48, 8192) == 0);
	T_EQ(dev_pread(d, b, 8192, 4096), 0);   /* the aligned write is still there */
	fill(a, 8192, 5);
	T_CHECK(memcmp(a, b, 8192) == 0);
	dev_close(d);
	free(a);
	free(b);
	unlink(path);
}

static void test_file_direct(void)
{
	check_file_direct(DEV_FILE_THREADS);
}

static void test_file_direct_uring(void)
{
	check_file_direct(DEV_FILE_URING);
}

/* One request through a group: its r_result. */
static int64_t group_io(struct dev *d, enum dev_op op, uint32_t flags, void *buf, uint32_t len,
			uint64_t off)
{
	struct dev_group g;
	struct dev_group_req r = { .gr_req = { .r_op = op, .r_flags = flags, .r_off = off,
					       .r_len = len, .r_buf = buf } };
	int64_t rc = dev_group_init(&g);

	if (rc == 0)
		rc = dev_group_submit(d, &g, &r);
	if (rc == 0)
		rc = dev_group_wait(&r);
	dev_group_release(&g);
	return rc;
}

/* DEV_REQ_DIRECT (a hint: the file's O_DIRECT descriptor when aligned) on a
 * device opened through the page cache: the two stay coherent both ways,
 * an unaligned request just goes the buffered way, and a memory device
 * takes the flag and ignores it. */
static void check_direct_hint(enum dev_file_engine engine, const char *name)
{
	char path[300];
	struct dev *d;
	struct dev_file_opts o = { .create = true, .size = 1 << 20, .engine = engine };
	uint8_t *a, *b, *c;

	snprintf(path, sizeof(path), "%s/hint-%s", tmpdir, name);
	if (dev_file_open(path, &o, &d) < 0)
		T_SKIP("%s engine unavailable here", name);
	T_EQ(posix_memalign((void **)&a, 4096, 3 * 16384), 0);
	b = a + 16384;
	c = b + 16384;
	fill(a, 16384, 21);
	T_EQ(dev_pwrite(d, a, 16384, 65536, 0), 0);       /* dirty in the page cache */
	memset(b, 0, 16384);
	T_EQ(group_io(d, DEV_OP_READ, DEV_REQ_DIRECT, b, 16384, 65536), 16384);
	T_CHECK(memcmp(a, b, 16384) == 0);                /* written back first */
	fill(c, 16384, 22);
	T_EQ(group_io(d, DEV_OP_WRITE, DEV_REQ_DIRECT, c, 16384, 65536), 16384);
	T_EQ(dev_pread(d, b, 16384, 65536), 0);
	T_CHECK(memcmp(c, b, 16384) == 0);                /* no stale cached copy */
	T_EQ(group_io(d, DEV_OP_WRITE, DEV_REQ_DIRECT, a + 512, 4096, 512), 4096);
	T_EQ(group_io(d, DEV_OP_READ, DEV_REQ_DIRECT, b + 512, 4096, 512), 4096);
	T_CHECK(memcmp(a + 512, b + 512, 4096) == 0);     /* unaligned: buffered */
	T_EQ(dev_flush(d), 0);
	dev_close(d);
	unlink(path);
	T_EQ(dev_mem_new(1 << 20, 512, &d), 0);
	T_EQ(group_io(d, DEV_OP_WRITE, DEV_REQ_DIRECT, a, 4096, 0), 4096);
	T_EQ(group_io(d, DEV_OP_READ, DEV_REQ_DIRECT, b, 4096, 0), 4096);
	T_CHECK(memcmp(a, b, 4096) == 0);
	dev_close(d);
	free(a);
}

static void test_direct_hint_threads(void)
{
	check_direct_hint(DEV_FILE_THREADS, "threads");
}

static void test_direct_hint_uring(void)
{
	check_direct_hint(DEV_FILE_URING, "io_uring");
}

/* ---- polled I/O --------------------------------------------------------- */

struct poller {
	struct dev *d;
	uint64_t gen;
	bool ran;
};

static void poller_fn(void *arg)
{
	struct poller *p = arg;

	p->ran = dev_poll(p->d, p->gen);
}

/* A polled request is run by the thread that polls (r_done there too),
 * never by dev_submit or the device's threads; another thread's poll can
 * run it; a completion elsewhere ends a poll that found nothing. */
static void check_poll(enum dev_file_engine engine, const char *name)
{
	char path[300];
	struct dev *d;
	struct dev_file_opts o = { .create = true, .size = 1 << 20, .engine = engine };
	uint8_t a[4096], b[4096];
	struct waiter w;
	struct dev_req wr = { .r_op = DEV_OP_WRITE, .r_flags = DEV_REQ_POLLED | DEV_REQ_FUA,
			      .r_off = 8192, .r_len = 4096, .r_buf = a, .r_done = waiter_done,
			      .r_priv = &w };
	struct dev_req rd = { .r_op = DEV_OP_READ, .r_flags = DEV_REQ_POLLED, .r_off = 8192,
			      .r_len = 4096, .r_buf = b, .r_done = waiter_done, .r_priv = &w };
	struct poller p;
	rt_thread *th;
	uint64_t gen;

	snprintf(path, sizeof(path), "%s/poll-%s", tmpdir, name);
	if (dev_file_open(path, &o, &d) < 0)
		T_SKIP("%s engine unavailable here", name);
	T_CHECK(dev_can_poll(d));
	waiter_init(&w, rt_self_name());
	fill(a, sizeof(a), 9);
	gen = dev_poll_gen(d);
	T_EQ(dev_submit(d, &wr), 0);
	rt_sleep_ns(20 * 1000 * 1000);
	T_EQ(w.done, 0);                       /* nobody but a poller runs it */
	T_CHECK(dev_poll(d, gen));
	T_EQ(w.done, 1);
	T_EQ(w.on_wrong_thread, 0);            /* r_done on this thread */
	T_EQ(wr.r_result, 4096);
	T_CHECK(dev_poll_gen(d) != gen);
	T_CHECK(!dev_poll(d, gen));            /* the count moved: no wait */
	T_EQ(dev_pread(d, b, 4096, 8192), 0);  /* through the device's threads */
	T_CHECK(memcmp(a, b, 4096) == 0);

	/* another thread polls first and runs this thread's request */
	memset(b, 0, sizeof(b));
	w.thread = "poller";
	p = (struct poller){ .d = d, .gen = dev_poll_gen(d) };
	T_EQ(rt_thread_create(&th, "poller", poller_fn, &p), 0);
	rt_sleep_ns(10 * 1000 * 1000);
	T_EQ(dev_submit(d, &rd), 0);
	rt_thread_join(th);
	T_CHECK(p.ran);
	T_EQ(w.done, 2);
	T_EQ(w.on_wrong_thread, 0);
	T_EQ(rd.r_result, 4096);
	T_CHECK(memcmp(a, b, 4096) == 0);
	dev_close(d);

	/* read-only: a polled write fails in the poller, not at submit */
	o = (struct dev_file_opts){ .read_only = true, .engine = engine };
	T_EQ(dev_file_open(path, &o, &d), 0);
	w.thread = rt_self_name();
	gen = dev_poll_gen(d);
	T_EQ(dev_submit(d, &wr), 0);
	T_CHECK(dev_poll(d, gen));
	T_EQ(wr.r_result, -EROFS);
	dev_close(d);
	waiter_release(&w);
	unlink(path);
}

static void test_poll_threads(void)
{
	check_poll(DEV_FILE_THREADS, "threads");
}

static void test_poll_uring(void)
{
	check_poll(DEV_FILE_URING, "io_uring");
}

/* A device that cannot poll refuses polled requests. */
static void test_poll_refused(void)
{
	struct dev *d;
	uint8_t buf[512];
	struct waiter w;
	struct dev_req r = { .r_op = DEV_OP_READ, .r_flags = DEV_REQ_POLLED, .r_len = 512,
			     .r_buf = buf, .r_done = waiter_done, .r_priv = &w };

	waiter_init(&w, "mem-done");
	T_EQ(dev_mem_new(1 << 20, 512, &d), 0);
	T_CHECK(!dev_can_poll(d));
	T_EQ(dev_submit(d, &r), -EINVAL);
	r.r_op = DEV_OP_FLUSH;
	T_EQ(dev_submit(d, &r), -EINVAL);
	dev_close(d);
	waiter_release(&w);
	T_EQ(w.done, 0);
}

/* The synchronous calls take only FUA and PREFLUSH: a polled flag there
 * would wait for a poller that never comes (it hung a file device). */
static void test_sync_flags(void)
{
	char path[300];
	struct dev *d;
	struct dev_file_opts o = { .create = true, .size = 1 << 20 };
	uint8_t a[4096] = { 1 }, b[4096];

	snprintf(path, sizeof(path), "%s/sync-flags", tmpdir);
	T_EQ(dev_file_open(path, &o, &d), 0);
	T_CHECK(dev_can_poll(d));
	T_EQ(dev_pwrite(d, a, 4096, 0, DEV_REQ_POLLED), -EINVAL);
	T_EQ(dev_pwrite(d, a, 4096, 0, DEV_REQ_FUA | DEV_REQ_POLLED), -EINVAL);
	T_EQ(dev_pwrite(d, a, 4096, 0, 1u << 7), -EINVAL);
	T_EQ(dev_pread(d, b, 4096, 0), 0);
	T_EQ(b[0], 0);                         /* nothing was written */
	T_EQ(dev_pwrite(d, a, 4096, 0, DEV_REQ_FUA | DEV_REQ_PREFLUSH), 0);
	T_EQ(dev_pread(d, b, 4096, 0), 0);
	T_EQ(b[0], 1);
	a[0] = 2; /* a hint, taken (this buffer is not aligned for O_DIRECT: cached) */
	T_EQ(dev_pwrite(d, a, 4096, 0, DEV_REQ_DIRECT | DEV_REQ_FUA), 0);
	T_EQ(dev_pread(d, b, 4096, 0), 0);
	T_EQ(b[0], 2);
	dev_close(d);
	unlink(path);
}

/* exclusive on a regular file: an OFD write lock, so a second exclusive
 * open (this process too) is -EBUSY, a read-only or plain one is not, and
 * closing another descriptor of the file keeps it; it goes at close. */
static void test_file_exclusive(void)
{
	struct dev_file_opts o = { .create = true, .size = 1 << 20, .exclusive = true };
	struct dev *d, *d2;
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/excl", tmpdir);
	T_EQ(dev_file_open(path, &o, &d), 0);
	fd = open(path, O_RDWR);
	T_CHECK(fd >= 0);
	close(fd); /* a POSIX lock would be gone now */
	T_EQ(dev_file_open(path, &o, &d2), -EBUSY);
	o.read_only = true;
	T_EQ(dev_file_open(path, &o, &d2), 0);
	dev_close(d2);
	o.read_only = false;
	o.exclusive = false;
	T_EQ(dev_file_open(path, &o, &d2), 0);
	dev_close(d2);
	dev_close(d);
	o.exclusive = true;
	T_EQ(dev_file_open(path, &o, &d), 0);
	dev_close(d);
	unlink(path);
}

/* A regular file is not rotational unless asked to take its file system's
 * disk's word (DEV_FILE_ROT_BACKING), which is sysfs's for that disk. */
static void test_file_rotational(void)
{
	char path[300], dir[128], attr[160];
	struct dev_file_opts o = { .create = true, .size = 1 << 20 };
	struct dev *d;
	int want = 0, c;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rot", tmpdir);
	T_EQ(dev_file_open(path, &o, &d), 0);
	T_CHECK(!dev_rotational(d));
	dev_close(d);
	if (dev_file_sysfs_queue(path, dir, sizeof(dir)) == 0) {
		snprintf(attr, sizeof(attr), "%s/rotational", dir);
		f = fopen(attr, "r");
		T_CHECK(f != NULL);
		c = fgetc(f);
		fclose(f);
		want = c == '1';
	} /* else tmpfs or the like: no disk, not rotational */
	o.rotational = DEV_FILE_ROT_BACKING;
	T_EQ(dev_file_open(path, &o, &d), 0);
	T_EQ(dev_rotational(d), want);
	dev_close(d);
	unlink(path);
	T_EQ(dev_file_sysfs_queue(path, dir, sizeof(dir)), -ENOENT);
}

/* A block device: size from BLKGETSIZE64, logical block size from
 * BLKSSZGET. Needs root and a free loop device, else SKIP. */
static void test_file_blockdev(void)
{
	char path[300], cmd[700], loop[64] = "";
	struct dev *d;
	struct dev_file_opts o = { .create = true, .size = 8 << 20 };
	uint8_t a[4096], b[4096];
	FILE *p;
	int rc;

	if (geteuid() != 0)
		T_SKIP("needs root for losetup");
	snprintf(path, sizeof(path), "%s/backing", tmpdir);
	T_EQ(dev_file_open(path, &o, &d), 0);
	dev_close(d);
	snprintf(cmd, sizeof(cmd), "losetup -f --show --sector-size 4096 '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (p) {
		if (!fgets(loop, sizeof(loop), p))
			loop[0] = 0;
		pclose(p);
	}
	loop[strcspn(loop, "\n")] = 0;
	if (!loop[0]) {
		unlink(path);
		T_SKIP("no loop device available (losetup failed)");
	}
	o = (struct dev_file_opts){ .engine = DEV_FILE_THREADS };
	rc = dev_file_open(loop, &o, &d);
	if (rc == 0) {
		T_EQ_U64(dev_size(d), 8 << 20);
		T_EQ(dev_block_size(d), 4096);
		fill(a, sizeof(a), 4);
		T_EQ(dev_pwrite(d, a, 4096, 4096, DEV_REQ_FUA), 0);
		T_EQ(dev_pread(d, b, 4096, 4096), 0);
		T_CHECK(memcmp(a, b, 4096) == 0);
		T_EQ(dev_pread(d, b, 512, 0), -EINVAL); /* below its block size */
		dev_close(d);
		o.block_size = 512; /* smaller than the device's: refused */
		T_EQ(dev_file_open(loop, &o, &d), -EINVAL);
		/* exclusive: O_EXCL, a second claim is -EBUSY */
		struct dev *d2 = NULL;
		o = (struct dev_file_opts){ .engine = DEV_FILE_THREADS, .exclusive = true };
		T_EQ(dev_file_open(loop, &o, &d), 0);
		T_EQ(dev_file_open(loop, &o, &d2), -EBUSY);
		o.exclusive = false;
		T_EQ(dev_file_open(loop, &o, &d2), 0); /* a plain open still works */
		dev_close(d2);
		dev_close(d);
	}
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", loop);
	if (system(cmd) != 0)
		fprintf(stderr, "    could not detach %s\n", loop);
	unlink(path);
	T_EQ(rc, 0);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	(void)argc;
	snprintf(tmpdir, sizeof(tmpdir), "%s/ujbd-dev-XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	T_RUN(test_parse_size);
	T_RUN(test_validation);
	T_RUN(test_mem_roundtrip);
	T_RUN(test_close_drains);
	T_RUN(test_file_threads);
	T_RUN(test_file_uring);
	T_RUN(test_file_uring_ioprio);
	T_RUN(test_file_errors);
	T_RUN(test_file_direct);
	T_RUN(test_file_direct_uring);
	T_RUN(test_direct_hint_threads);
	T_RUN(test_direct_hint_uring);
	T_RUN(test_file_exclusive);
	T_RUN(test_file_rotational);
	T_RUN(test_file_blockdev);
	T_RUN(test_poll_threads);
	T_RUN(test_poll_uring);
	T_RUN(test_poll_refused);
	T_RUN(test_sync_flags);
	rmdir(tmpdir);
	return t_done(argv[0]);
}

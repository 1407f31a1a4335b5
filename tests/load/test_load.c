/*
 * The lab's shared pieces in the sim world: load_threads_run (names, I/O
 * priority per thread, errors, the elapsed time) and load_dev (the
 * threads share the I/O count, the merge is the sum of the threads, the
 * same seed gives the same figures, the report keeps devbench's keys).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "t.h"
#include "t_sim.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "priv/rt.h"

/* ---- load_threads_run -------------------------------------------------- */

struct thr_arg {
	bool together, same_name;
	struct load_thread_info info[3];
	uint64_t elapsed_ns;
	int rc;
};

/* Each body sleeps 5 ms; thread 1 fails with -EIO, thread 2 with -ENOSPC
 * (the first error in thread order is -EIO). */
static int thr_body(void *arg, unsigned i)
{
	(void)arg;
	rt_sleep_ns(5 * RT_NS_PER_MS);
	return i == 1 ? -EIO : i == 2 ? -ENOSPC : 0;
}

static void thr_main(void *arg)
{
	struct thr_arg *a = arg;
	uint16_t prio[3] = { RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2), 0,
			     RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0) };
	struct load_threads t = { .n = 3, .name = "w", .same_name = a->same_name,
				 .ioprio = prio, .together = a->together,
				 .body = thr_body, .arg = a };

	a->rc = load_threads_run(&t, a->info, &a->elapsed_ns);
}

static void test_threads(void)
{
	struct thr_arg a = { .together = true };

	T_EQ(t_sim_run(3, thr_main, &a), 0);
	T_EQ(a.rc, 0);
	T_STREQ(a.info[0].name, "w0");
	T_STREQ(a.info[2].name, "w2");
	T_EQ(RT_IOPRIO_CLASS(a.info[0].ioprio), RT_IOPRIO_CLASS_RT);
	T_EQ(RT_IOPRIO_CLASS(a.info[2].ioprio), RT_IOPRIO_CLASS_IDLE);
	T_CHECK(a.info[0].pid != a.info[1].pid);
	T_EQ(a.info[0].err, 0);
	T_EQ(a.info[1].err, -EIO);
	T_EQ(load_threads_err(a.info, 3), -EIO);
	T_EQ(load_threads_err(a.info, 1), 0);
	T_EQ(a.info[2].err, -ENOSPC);
	/* virtual time: the bodies sleep 5 ms, all at once */
	T_EQ_U64(a.elapsed_ns, 5 * RT_NS_PER_MS);

	memset(&a, 0, sizeof(a));
	a.same_name = true;
	T_EQ(t_sim_run(3, thr_main, &a), 0);
	T_STREQ(a.info[1].name, "w");
	T_EQ(load_threads_err(a.info, 3), -EIO);
	T_EQ_U64(a.elapsed_ns, 5 * RT_NS_PER_MS);
}

static void test_threads_bad(void)
{
	struct load_thread_info info[1];
	struct load_threads t = { .n = 0, .name = "x", .body = thr_body };

	T_EQ(load_threads_run(&t, info, NULL), -EINVAL);
	t.n = LOAD_MAX_THREADS + 1;
	T_EQ(load_threads_run(&t, info, NULL), -EINVAL);
}

/* ---- load_dev -------------------------------------------------------- */

struct dev_arg {
	bool queue;
	unsigned threads;
	struct load_dev *r;
	int rc;
};

static void dev_main(void *arg)
{
	struct dev_arg *a = arg;
	struct dev_ssd_params p;
	struct load_dev_opts o = { .pattern = LOAD_DEV_RAND, .bs = 4096, .ops = 300,
				      .seed = 7, .threads = a->threads };
	struct blk_queue_opts qo;
	struct blk_queue *q = NULL;
	struct dev *d;

	dev_ssd_defaults(&p);
	if ((a->rc = dev_sim_ssd_new(&p, &d)) < 0)
		return;
	blk_queue_opts_default(&qo);
	qo.elevator = "noop";
	if (a->queue && (a->rc = blk_queue_new(d, &qo, &q)) < 0)
		goto out;
	a->rc = load_dev_run(d, q, &o, a->r);
	blk_queue_free(q);
out:
	dev_close(d);
}

static void test_devload(void)
{
	struct dev_arg a = { .queue = true, .threads = 3 };
	struct load_dev_stats all, s;
	uint64_t sum = 0, count = 0;
	double p50;

	a.r = calloc(1, sizeof(*a.r));
	T_CHECK(a.r);
	T_EQ(t_sim_run(5, dev_main, &a), 0);
	T_EQ(a.rc, 0);
	T_EQ(a.r->nthreads, 3);
	T_STREQ(a.r->thr[1].name, "bench1");
	load_dev_stats(a.r, 0, 3, &all);
	T_EQ_U64(all.n, 300); /* --ops is shared: 300 in all */
	T_EQ_U64(all.bytes, 300 * 4096);
	for (unsigned i = 0; i < 3; i++) {
		load_dev_stats(a.r, i, 1, &s);
		T_CHECK(s.n > 0);
		sum += s.n;
		count += a.r->thr[i].lat.h_count;
	}
	T_EQ_U64(sum, 300);
	T_EQ_U64(count, 300);
	T_CHECK(all.lat.p50_us > 0 && all.lat.p50_us <= all.lat.p99_us);
	T_CHECK(all.lat.p99_us <= all.lat.max_us);
	T_CHECK(all.iops > 0);
	p50 = all.lat.p50_us;
	/* the same seed, the same figures */
	T_EQ(t_sim_run(5, dev_main, &a), 0);
	load_dev_stats(a.r, 0, 3, &all);
	T_CHECK(all.lat.p50_us == p50);
	/* no queue: one thread, straight to the device; more is refused */
	a.queue = false;
	a.threads = 1;
	T_EQ(t_sim_run(5, dev_main, &a), 0);
	T_EQ(a.rc, 0);
	load_dev_stats(a.r, 0, 1, &all);
	T_EQ_U64(all.n, 300);
	a.threads = 2;
	T_EQ(t_sim_run(5, dev_main, &a), 0);
	T_EQ(a.rc, -EINVAL);
	free(a.r);
}

static void test_devload_report(void)
{
	struct load_dev *r = calloc(1, sizeof(*r));
	struct load_dev_report rep = { .disk = "hdd", .pattern = "rand", .bs = 4096,
					  .world = "sim", .seed = 1, .elevator = "cfq",
					  .json = true };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	T_CHECK(r);
	r->nthreads = 2;
	r->elapsed_ns = RT_NS_PER_S;
	for (unsigned i = 0; i < 2; i++) {
		snprintf(r->thr[i].name, sizeof(r->thr[i].name), "bench%u", i);
		rt_hist_init(&r->thr[i].lat);
		rt_hist_add(&r->thr[i].lat, 1000 * (i + 1)); /* 1 us, 2 us: p50 is 1000's bucket top */
		r->thr[i].ops = 1;
		r->thr[i].bytes = 4096;
	}
	f = open_memstream(&buf, &len);
	T_CHECK(f);
	T_EQ(load_dev_print(f, &rep, r), 0);
	fclose(f);
	T_CHECK(strstr(buf, "{\"disk\":\"hdd\",\"pattern\":\"rand\",\"bs\":4096,\"ops\":2,"
		       "\"world\":\"sim\",\"seed\":1,\"time\":\"virtual\",\"elapsed_s\":1.000000,\"iops\":2.000,"
		       "\"mb_s\":0.008,\"latency_us\":{\"avg\":1.500,\"p50\":1.023,"
		       "\"p99\":2.000,\"max\":2.000},\"elevator\":\"cfq\",\"threads\":"
		       "[{\"name\":\"bench0\",\"ioprio\":\"none\",\"ops\":1,") == buf);
	T_CHECK(buf[len - 1] == '\n');
	free(buf);
	free(r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_threads);
	T_RUN(test_threads_bad);
	T_RUN(test_devload);
	T_RUN(test_devload_report);
	return t_done(argv[0]);
}

/*
 * The block-layer load generator (load_blk) in the sim world: two random
 * readers on the simulated HDD, one rt:4 and one be:4. Under cfq the RT one
 * is served first and the BE one waits; noop ignores priorities and the two
 * share the disk. (Moved from tests/blk/test_blk.c with src/blk/bench.c.)
 */
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

/* ---- the load generator: RT vs BE random readers (devbench --threads) -- */

struct bench_arg {
	const char *e;
	struct load_blk_result r[2];
	int rc;
};

static void bench_main(void *arg)
{
	struct bench_arg *ba = arg;
	struct dev_hdd_params hp;
	dev_hdd_defaults(&hp);
	struct dev *d;
	struct blk_queue *q;
	struct blk_queue_opts o;
	blk_queue_opts_default(&o);
	o.elevator = ba->e;
	if ((ba->rc = dev_sim_hdd_new(&hp, &d)) < 0)
		return;
	if ((ba->rc = blk_queue_new(d, &o, &q)) < 0) {
		dev_close(d);
		return;
	}
	struct load_blk_opts bo;
	load_blk_opts_default(&bo);
	uint16_t prio[2] = { RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4), RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4) };
	bo.threads = 2;
	bo.ioprio = prio;
	bo.duration_ns = 3 * RT_NS_PER_S;
	ba->rc = load_blk_run(q, &bo, ba->r);
	blk_queue_free(q);
	dev_close(d);
}

static void test_bench_rt_vs_be(void)
{
	struct bench_arg *ba = calloc(1, sizeof(*ba));
	ba->e = "cfq";
	T_EQ(t_sim_run(12, bench_main, ba), 0);
	T_EQ(ba->rc, 0);
	const struct load_blk_result *rt = &ba->r[0], *be = &ba->r[1];
	fprintf(stderr, "    cfq: rt %.1f iops p50 %.0f us, be %.1f iops p50 %.0f us max %.0f us\n",
		rt->iops, rt->lat_us_p50, be->iops, be->lat_us_p50, be->lat_us_max);
	T_EQ(RT_IOPRIO_CLASS(rt->ioprio), RT_IOPRIO_CLASS_RT);
	T_CHECK(rt->ios > 100 && be->ios > 0);
	T_CHECK(rt->iops > 4 * be->iops);
	T_CHECK(rt->lat_us_p50 * 4 < be->lat_us_p50);
	free(ba);

	/* noop ignores priorities: the two readers share the disk. */
	ba = calloc(1, sizeof(*ba));
	ba->e = "noop";
	T_EQ(t_sim_run(12, bench_main, ba), 0);
	T_EQ(ba->rc, 0);
	fprintf(stderr, "    noop: rt %.1f iops, be %.1f iops\n", ba->r[0].iops, ba->r[1].iops);
	T_CHECK(ba->r[0].iops < 1.3 * ba->r[1].iops && ba->r[1].iops < 1.3 * ba->r[0].iops);
	free(ba);
}

/* The JSON array carries one entry per thread, with its name and ioprio. */
static void test_blkload_json(void)
{
	struct load_blk_result r[2];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_CHECK(f != NULL);
	memset(r, 0, sizeof(r));
	snprintf(r[0].name, sizeof(r[0].name), "bench0");
	snprintf(r[1].name, sizeof(r[1].name), "bench1");
	r[0].ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4);
	r[1].ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	r[0].ios = 7;
	r[1].lat_us_p50 = 13.5;
	T_EQ(load_blk_json(f, r, 2), 0);
	fclose(f);
	T_CHECK(strstr(buf, "[{\"name\":\"bench0\",\"pid\":0,\"ioprio\":\"rt:4\",\"ios\":7,") == buf);
	T_CHECK(strstr(buf, "{\"name\":\"bench1\",\"pid\":0,\"ioprio\":\"be:4\"") != NULL);
	T_CHECK(strstr(buf, "\"latency_us\":{\"avg\":0.0,\"p50\":13.5,\"p99\":0.0,\"max\":0.0}}]") != NULL);
	free(buf);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_bench_rt_vs_be);
	T_RUN(test_blkload_json);
	return t_done(argv[0]);
}

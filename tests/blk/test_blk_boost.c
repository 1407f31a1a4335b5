/*
 * blk_boost in the sim world: a be:4 reader keeps the simulated HDD busy
 * while a be:7 writer's tagged writes wait in the queue; a third thread
 * raises that tag to rt:4. Under CFQ the raised requests move to the RT
 * class and go before the reader's remaining reads; under noop their
 * recorded priority changes but the order does not. The D events carry
 * the raised priority, the queue counts the raise and the waits around it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "priv/rt.h"

#define NR 8
#define NW 6
#define TAG 0x5eed0001ull
#define MAXEV 4096

struct boost_scen {
	const char *elv;
	uint32_t wflags;      /* the writer's bio flags (BLK_SYNC or 0) */
	bool boost;           /* the booster raises the tag */
	uint16_t boost_prio;
	/* out */
	struct blk_queue *q;
	int rc, boost_rc, bad_tag_rc, zero_tag_rc, lower_rc;
	int rpid, wpid;
	struct blk_trace_event ev[MAXEV];
	size_t nev;
	struct blk_queue_stats qs;
};

static void reader_fn(void *arg)
{
	struct boost_scen *s = arg;
	char *buf = calloc(1, 4096);
	struct blk_bio b;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	s->rpid = rt_self_pid();
	for (unsigned i = 0; i < NR && buf; i++) {
		memset(&b, 0, sizeof(b));
		b.b_op = BLK_OP_READ;
		b.b_sector = (uint64_t)(i + 1) * 50000000ull;
		b.b_nr_sectors = 8;
		b.b_buf = buf;
		if (blk_submit_wait(s->q, &b) && !s->rc)
			s->rc = -EIO;
	}
	free(buf);
}

static void writer_fn(void *arg)
{
	struct boost_scen *s = arg;
	static char buf[NW][4096];
	struct blk_bio b[NW];

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 7));
	s->wpid = rt_self_pid();
	rt_sleep_ns(2 * RT_NS_PER_MS);
	for (unsigned i = 0; i < NW; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].b_op = BLK_OP_WRITE;
		b[i].b_flags = s->wflags;
		/* far apart: no merging, one request each */
		b[i].b_sector = 700000000ull + (uint64_t)i * 1000000ull;
		b[i].b_nr_sectors = 8;
		b[i].b_buf = buf[i];
		b[i].b_boost_tag = TAG;
		if (blk_submit(s->q, &b[i]) && !s->rc)
			s->rc = -EIO;
	}
	for (unsigned i = 0; i < NW; i++)
		if (blk_wait(&b[i]) && !s->rc)
			s->rc = -EIO;
}

static void booster_fn(void *arg)
{
	struct boost_scen *s = arg;

	rt_sleep_ns(5 * RT_NS_PER_MS); /* the writes are queued by then */
	s->zero_tag_rc = blk_boost(s->q, 0, s->boost_prio);
	s->bad_tag_rc = blk_boost(s->q, TAG + 1, s->boost_prio);
	s->lower_rc = blk_boost(s->q, TAG, RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 7));
	if (s->boost)
		s->boost_rc = blk_boost(s->q, TAG, s->boost_prio);
}

static void boost_main(void *arg)
{
	struct boost_scen *s = arg;
	struct dev_hdd_params hp;
	struct blk_queue_opts o;
	struct dev *d = NULL;
	rt_thread *t[3];

	dev_hdd_defaults(&hp);
	hp.queue_depth = 1;
	s->rc = dev_sim_hdd_new(&hp, &d);
	if (s->rc)
		return;
	blk_queue_opts_default(&o);
	o.elevator = s->elv;
	o.trace = true;
	o.trace_max_events = MAXEV;
	s->rc = blk_queue_new(d, &o, &s->q);
	if (s->rc) {
		dev_close(d);
		return;
	}
	rt_thread_create(&t[0], "reader", reader_fn, s);
	rt_thread_create(&t[1], "writer", writer_fn, s);
	rt_thread_create(&t[2], "booster", booster_fn, s);
	for (unsigned i = 0; i < 3; i++)
		rt_thread_join(t[i]);
	blk_drain(s->q);
	s->nev = blk_trace_events(s->q, 0, s->ev, MAXEV);
	blk_queue_stats(s->q, &s->qs);
	blk_queue_free(s->q);
	dev_close(d);
}

static struct boost_scen *run(const char *e, uint32_t wflags, bool boost)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = 7 };
	struct boost_scen *s = calloc(1, sizeof(*s));
	rt_world *w;

	s->elv = e;
	s->wflags = wflags;
	s->boost = boost;
	s->boost_prio = RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4);
	if (rt_world_new(&wo, &w) == 0) {
		if (rt_world_run(w, "main", boost_main, s) < 0 && !s->rc)
			s->rc = -EIO;
		rt_world_free(w);
	} else {
		s->rc = -ENOMEM;
	}
	return s;
}

/* The D events in order: 'r' reader, 'w' writer; and the writer's D
 * events' classes. */
static void d_order(const struct boost_scen *s, char *out, size_t len, unsigned *w_rt)
{
	size_t k = 0;

	*w_rt = 0;
	for (size_t i = 0; i < s->nev && k + 1 < len; i++) {
		const struct blk_trace_event *ev = &s->ev[i];
		if (ev->action != 'D')
			continue;
		out[k++] = ev->owner_pid == s->wpid ? 'w' : ev->owner_pid == s->rpid ? 'r' : '?';
		if (ev->owner_pid == s->wpid && RT_IOPRIO_CLASS(ev->ioprio) == RT_IOPRIO_CLASS_RT)
			(*w_rt)++;
	}
	out[k] = '\0';
}

/* Index of the writer's last D in order. */
static size_t last_w(const char *order)
{
	const char *p = strrchr(order, 'w');
	return p ? (size_t)(p - order) : 0;
}

static void check_common(struct boost_scen *s)
{
	T_EQ(s->rc, 0);
	T_EQ(s->zero_tag_rc, -EINVAL);
	T_EQ(s->bad_tag_rc, 0);   /* nobody carries that tag */
	T_EQ(s->lower_rc, 0);     /* idle is no raise */
}

static void test_cfq_async_moves(void)
{
	struct boost_scen *s = run("cfq", 0, false), *b;
	char base[64], order[64];
	unsigned w_rt;

	check_common(s);
	d_order(s, base, sizeof(base), &w_rt);
	T_EQ(w_rt, 0);
	T_EQ(s->qs.boosts, 0);
	b = run("cfq", 0, true);
	check_common(b);
	/* all six were still queued (the disk was busy with the reads) */
	T_EQ(b->boost_rc, NW);
	d_order(b, order, sizeof(order), &w_rt);
	T_EQ(w_rt, NW);
	T_EQ(b->qs.boosts, 1);
	T_EQ(b->qs.boosted_rqs, NW);
	T_CHECK(b->qs.boost_wait_before_ns_sum > 0 && b->qs.boost_wait_before_ns_max > 0);
	T_CHECK(b->qs.boost_wait_after_ns_max >= b->qs.boost_wait_after_ns_sum / NW);
	/* raised to RT, the writes go before the reads still to come */
	T_CHECK(last_w(order) < last_w(base));
	/* seed 7, exactly: the reads keep the disk until the raise */
	T_STREQ(base, "rrrrrrrrwwwwww");
	T_STREQ(order, "rrwwwwwwrrrrrr");
	free(s);
	free(b);
}

static void test_cfq_sync_queue_moves(void)
{
	struct boost_scen *s = run("cfq", BLK_SYNC, false), *b;
	char base[64], order[64];
	unsigned w_rt;

	check_common(s);
	d_order(s, base, sizeof(base), &w_rt);
	b = run("cfq", BLK_SYNC, true);
	check_common(b);
	T_CHECK(b->boost_rc >= 1);
	d_order(b, order, sizeof(order), &w_rt);
	T_EQ(w_rt, (unsigned)b->boost_rc);
	T_EQ(b->qs.boosted_rqs, (uint64_t)b->boost_rc);
	/* the writer's whole sync queue went RT: it finishes first */
	T_CHECK(last_w(order) < last_w(base));
	free(s);
	free(b);
}

static void test_noop_records_only(void)
{
	struct boost_scen *s = run("noop", 0, false), *b;
	char base[64], order[64];
	unsigned w_rt;

	check_common(s);
	d_order(s, base, sizeof(base), &w_rt);
	b = run("noop", 0, true);
	check_common(b);
	T_CHECK(b->boost_rc >= 1);
	d_order(b, order, sizeof(order), &w_rt);
	T_EQ(w_rt, (unsigned)b->boost_rc);
	T_STREQ(order, base); /* noop: same order */
	T_EQ(b->qs.boosts, 1);
	free(s);
	free(b);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_cfq_async_moves);
	T_RUN(test_cfq_sync_queue_moves);
	T_RUN(test_noop_records_only);
	return t_done(argv[0]);
}

/*
 * Block layer scenarios in the sim world: each one runs a few rt threads
 * against a queue over the simulated HDD, in virtual time, and asserts the
 * order (and, where the rule is about time, the timing) of the D events the
 * trace recorded: CFQ's classes, idling and META preemption, deadline's
 * FIFO expiry, the two plugging policies, merging, and the blkparse format.
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_req.h"
#include "priv/param.h"
#include "priv/rt.h"
#include "priv/stack.h"

#define MAXB 64
#define MAXW 4
#define MAXEV 8192

/* ---- a scenario: workers on one queue -------------------------------- */

struct worker {
	const char *name;
	const char *prio;          /* "rt:4", ... or NULL */
	enum blk_op op;
	uint32_t flags;
	uint64_t sector[MAXB];
	unsigned n;
	uint32_t nr_sectors;
	int batch;                 /* 1: submit all, then wait; 0: one by one */
	int plug;                  /* batch inside blk_start_plug/finish */
	int nowait;                /* end_io instead of waiting, then sleep 20 ms */
	uint64_t delay_ns;
	/* out */
	int pid;
	int rc;
	struct blk_queue *q;
	struct blk_bio bio[MAXB];
	char *buf;
};

struct scen {
	struct blk_queue_opts o;
	char params[96];           /* the elevator's tunables: "name=value,..." */
	unsigned hdd_qd;
	uint64_t hdd_cache;        /* bytes, (uint64_t)-1 = default */
	struct worker w[MAXW];
	unsigned nw;
	/* out */
	int rc;
	struct blk_trace_event ev[MAXEV];
	size_t nev;
	struct blk_stat cls[3];
	struct blk_queue_stats qs;
};

static void nop_end_io(struct blk_bio *b)
{
	(void)b;
}

static void worker_fn(void *arg)
{
	struct worker *w = arg;
	uint16_t prio;
	if (w->prio && rt_ioprio_parse(w->prio, &prio) == 0)
		rt_ioprio_set(prio);
	w->pid = rt_self_pid();
	if (w->delay_ns)
		rt_sleep_ns(w->delay_ns);
	size_t len = (size_t)w->nr_sectors << BLK_SECTOR_SHIFT;
	w->buf = calloc(w->n ? w->n : 1, len);
	struct blk_plug plug;
	if (w->plug)
		blk_start_plug(&plug);
	for (unsigned i = 0; i < w->n && w->rc == 0; i++) {
		struct blk_bio *b = &w->bio[i];
		memset(b, 0, sizeof(*b));
		b->b_op = w->op;
		b->b_flags = w->flags;
		b->b_sector = w->sector[i];
		b->b_nr_sectors = w->nr_sectors;
		b->b_buf = w->buf + i * len;
		if (w->nowait) {
			b->b_end_io = nop_end_io;
			w->rc = blk_submit(w->q, b);
			continue;
		}
		w->rc = w->batch ? blk_submit(w->q, b) : blk_submit_wait(w->q, b);
	}
	if (w->plug)
		blk_finish_plug(&plug);
	if (w->nowait)
		rt_sleep_ns(20 * RT_NS_PER_MS);
	for (unsigned i = 0; !w->nowait && w->batch && i < w->n && w->rc == 0; i++)
		w->rc = blk_wait(&w->bio[i]);
	free(w->buf);
}

static int scen_main(struct stack *st, void *arg)
{
	struct scen *s = arg;
	struct blk_queue *q = stack_queue(st, 0);
	rt_thread *t[MAXW];

	for (unsigned i = 0; i < s->nw; i++) {
		s->w[i].q = q;
		rt_thread_create(&t[i], s->w[i].name, worker_fn, &s->w[i]);
	}
	for (unsigned i = 0; i < s->nw; i++)
		rt_thread_join(t[i]);
	blk_drain(q);
	s->nev = blk_trace_events(q, 0, s->ev, MAXEV);
	blk_stats_classes(q, s->cls);
	blk_queue_stats(q, &s->qs);
	for (unsigned i = 0; i < s->nw; i++)
		if (s->w[i].rc && !s->rc)
			s->rc = s->w[i].rc;
	return 0;
}

static struct scen *scen_new(const char *e)
{
	struct scen *s = calloc(1, sizeof(*s));
	blk_queue_opts_default(&s->o);
	s->o.elevator = e;
	s->hdd_cache = (uint64_t)-1;
	return s;
}

/* One sim HDD (queue depth hdd_qd, cache hdd_cache unless -1) under a
 * traced queue of options s->o. */
static int scen_run(struct scen *s, uint64_t seed)
{
	struct stack_spec sp;
	struct stack *st;
	char hp[64];
	int n = snprintf(hp, sizeof(hp), "queue_depth=%u", s->hdd_qd ? s->hdd_qd : 1);
	int rc;

	if (s->hdd_cache != (uint64_t)-1)
		snprintf(hp + n, sizeof(hp) - (size_t)n, ",cache_mib=%.17g",
			 (double)s->hdd_cache / 1048576);
	s->o.trace = true;
	s->o.trace_max_events = MAXEV;
	stack_spec_default(&sp);
	sp.seed = seed;
	sp.disks[0] = (struct stack_disk_spec){ "hdd", hp, 0 };
	sp.queues[0].base = &s->o;
	sp.queues[0].params = s->params;
	rc = stack_new(&sp, &st, NULL, 0);
	if (rc < 0)
		return rc;
	rc = stack_run(st, "main", scen_main, s);
	stack_free(st);
	return rc < 0 ? rc : s->rc;
}

static struct worker *scen_worker(struct scen *s, const char *name, const char *prio,
				  enum blk_op op, uint32_t flags)
{
	struct worker *w = &s->w[s->nw++];
	w->name = name;
	w->prio = prio;
	w->op = op;
	w->flags = flags;
	w->nr_sectors = 8;
	w->batch = 1;
	return w;
}

/* n far-apart sectors (a fixed pseudo-random spread over ~400 GB). */
static void spread(struct worker *w, unsigned n, uint64_t salt)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t x = (i + 1) * 2654435761ull + salt * 40503ull;
		w->sector[i] = (x % 800000000ull) & ~7ull;
	}
	w->n = n;
}

/* The D events as a string, one letter per event: the first letter of the
 * owning worker's name. */
static void d_order(const struct scen *s, char *out, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < s->nev && k + 1 < len; i++) {
		if (s->ev[i].action != 'D')
			continue;
		char c = '?';
		for (unsigned j = 0; j < s->nw; j++)
			if (s->ev[i].owner_pid == s->w[j].pid)
				c = s->w[j].name[0];
		out[k++] = c;
	}
	out[k] = '\0';
}

static size_t count_action(const struct scen *s, char action)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nev; i++)
		n += s->ev[i].action == action;
	return n;
}

/* Time of the k-th (0-based) event of action by worker w, or UINT64_MAX. */
static uint64_t ev_time(const struct scen *s, char action, const struct worker *w, unsigned k)
{
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].action == action && s->ev[i].owner_pid == w->pid && k-- == 0)
			return s->ev[i].time_ns;
	return UINT64_MAX;
}

/* ---- CFQ: classes ----------------------------------------------------- */

static void rt_be_scenario(struct scen *s)
{
	struct worker *b = scen_worker(s, "bereader", "be:4", BLK_OP_READ, 0);
	spread(b, 8, 1);
	struct worker *r = scen_worker(s, "rtreader", "rt:4", BLK_OP_READ, 0);
	spread(r, 8, 2);
	r->delay_ns = 1 * RT_NS_PER_MS;
}

static void test_cfq_rt_before_be(void)
{
	struct scen *s = scen_new("cfq");
	rt_be_scenario(s);
	T_EQ(scen_run(s, 1), 0);
	char order[64];
	d_order(s, order, sizeof(order));
	/* The BE reader's first request was already at the disk; then the RT
	 * reader preempts and keeps the disk until it has nothing left. */
	T_STREQ(order, "brrrrrrrrbbbbbbb");
	/* b_ioprio 0 stays 0: a reused bio follows its thread's priority. */
	T_EQ(s->w[1].bio[0].b_ioprio, 0);
	T_EQ(RT_IOPRIO_CLASS(s->w[1].bio[0].b_prio), RT_IOPRIO_CLASS_RT);
	/* btt-style summary: the RT class waited far less. */
	T_EQ(s->cls[0].reads, 8);
	T_EQ(s->cls[1].reads, 8);
	T_CHECK(s->cls[0].q2c_ns_sum * 2 < s->cls[1].q2c_ns_sum);
	free(s);

	/* Control: noop serves in arrival order. */
	s = scen_new("noop");
	rt_be_scenario(s);
	T_EQ(scen_run(s, 1), 0);
	d_order(s, order, sizeof(order));
	T_STREQ(order, "bbbbbbbbrrrrrrrr");
	free(s);
}

static void test_cfq_idle_class_last(void)
{
	struct scen *s = scen_new("cfq");
	struct worker *b = scen_worker(s, "bereader", "be:4", BLK_OP_READ, 0);
	spread(b, 12, 3);
	struct worker *i = scen_worker(s, "idlereader", "idle", BLK_OP_READ, 0);
	spread(i, 1, 4);
	i->delay_ns = 1 * RT_NS_PER_MS;
	T_EQ(scen_run(s, 2), 0);
	char order[64];
	d_order(s, order, sizeof(order));
	/* Twelve BE reads take longer than a 100 ms slice; the BE queue is
	 * re-served after its slice expires, the IDLE request waits for an
	 * empty BE queue. */
	T_STREQ(order, "bbbbbbbbbbbbi");
	T_CHECK(ev_time(s, 'D', &s->w[1], 0) > 100 * RT_NS_PER_MS); /* slice_sync */
	free(s);

	/* Alone, the IDLE reader is served at once. */
	s = scen_new("cfq");
	i = scen_worker(s, "idlereader", "idle", BLK_OP_READ, 0);
	spread(i, 3, 4);
	i->batch = 0;
	T_EQ(scen_run(s, 2), 0);
	T_EQ(count_action(s, 'D'), 3);
	T_EQ(ev_time(s, 'D', i, 0), ev_time(s, 'Q', i, 0));
	free(s);
}

/* ---- CFQ: slice idling and META preemption ---------------------------- */

/* A reads once; C's single request arrives while A's is at the disk. */
static struct scen *idle_scenario(const char *e, enum blk_op cop, uint32_t cflags,
				  unsigned slice_idle_ms)
{
	struct scen *s = scen_new(e);
	if (!strcmp(e, "cfq"))
		snprintf(s->params, sizeof(s->params), "slice_idle_ms=%u", slice_idle_ms);
	struct worker *a = scen_worker(s, "areader", "be:4", BLK_OP_READ, 0);
	spread(a, 1, 5);
	struct worker *c = scen_worker(s, "cthread", "be:4", cop, cflags);
	spread(c, 1, 6);
	c->delay_ns = 1 * RT_NS_PER_MS;
	return s;
}

static void test_cfq_slice_idle(void)
{
	struct scen *s = idle_scenario("cfq", BLK_OP_READ, 0, 8);
	T_EQ(scen_run(s, 3), 0);
	uint64_t a_c = ev_time(s, 'C', &s->w[0], 0), c_d = ev_time(s, 'D', &s->w[1], 0);
	T_CHECK(a_c != UINT64_MAX && c_d != UINT64_MAX);
	/* The disk sat idle slice_idle waiting for A's next request. */
	T_EQ_U64(c_d - a_c, 8 * RT_NS_PER_MS);
	/* ... counted: that window expired (A sent nothing), and its time */
	T_CHECK(s->qs.idles >= 1);
	T_CHECK(s->qs.idles_expired >= 1);
	T_CHECK(s->qs.idle_ns >= 8 * RT_NS_PER_MS);
	free(s);

	/* slice_idle = 0: no idling. */
	s = idle_scenario("cfq", BLK_OP_READ, 0, 0);
	T_EQ(scen_run(s, 3), 0);
	T_EQ_U64(ev_time(s, 'D', &s->w[1], 0), ev_time(s, 'C', &s->w[0], 0));
	free(s);

	/* deadline never idles. */
	s = idle_scenario("deadline", BLK_OP_READ, 0, 8);
	T_EQ(scen_run(s, 3), 0);
	T_EQ_U64(ev_time(s, 'D', &s->w[1], 0), ev_time(s, 'C', &s->w[0], 0));
	T_EQ_U64(s->qs.idles, 0);
	free(s);
}

/* A journal write tagged META preempts the idling reader (Jeff Moyer, "jbd2:
 * tag journal writes as metadata I/O", linux-ext4, April 2010). */
static void test_cfq_meta_preempts(void)
{
	struct scen *s = idle_scenario("cfq", BLK_OP_WRITE, BLK_SYNC, 8);
	T_EQ(scen_run(s, 4), 0);
	T_EQ_U64(ev_time(s, 'D', &s->w[1], 0) - ev_time(s, 'C', &s->w[0], 0),
		 8 * RT_NS_PER_MS);
	free(s);

	s = idle_scenario("cfq", BLK_OP_WRITE, BLK_SYNC | BLK_META, 8);
	T_EQ(scen_run(s, 4), 0);
	T_EQ_U64(ev_time(s, 'D', &s->w[1], 0), ev_time(s, 'C', &s->w[0], 0));
	/* The trace says WSM, as jbd2's log writes do. */
	int seen = 0;
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].action == 'D' && s->ev[i].owner_pid == s->w[1].pid)
			seen = strcmp(s->ev[i].rwbs, "WSM") == 0;
	T_CHECK(seen);
	free(s);
}

/* ---- deadline: FIFO expiry -------------------------------------------- */

static struct scen *expiry_scenario(unsigned write_expire_ms)
{
	struct scen *s = scen_new("deadline");
	snprintf(s->params, sizeof(s->params), "write_expire_ms=%u", write_expire_ms);
	s->hdd_cache = 0; /* every write is a mechanical access */
	/* One thread: a read to occupy the disk, then writes queued behind
	 * it: A1 (the oldest), "old" far behind A1, then A2..An ascending
	 * after A1. The first write batch starts at A1 and sweeps upward. */
	struct worker *w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
	w->n = 0;
	return s;
}

static void test_deadline_expiry(void)
{
	/* The writes: 0 = A1 at 2,000,000; 1 = old at 1000; 2.. = ascending. */
	for (int variant = 0; variant < 2; variant++) {
		struct scen *s = expiry_scenario(variant ? 50 : 5000);
		struct worker *r = &s->w[0];
		/* reuse slot 0 as the reader, add the writer as slot 1 */
		r->name = "reader";
		r->op = BLK_OP_READ;
		r->sector[0] = 500000000;
		r->n = 1;
		r->batch = 1;
		struct worker *w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
		w->sector[0] = 2000000;
		w->sector[1] = 1000;
		for (unsigned i = 2; i < 60; i++)
			w->sector[i] = 2000000 + 20000 * i; /* ~5 ms each */
		w->n = 60;
		w->delay_ns = RT_NS_PER_MS / 10;
		T_EQ(scen_run(s, 5), 0);
		/* Position of the old write among the write D events. */
		int pos = -1, k = 0;
		for (size_t i = 0; i < s->nev; i++) {
			if (s->ev[i].action != 'D' || s->ev[i].owner_pid != w->pid)
				continue;
			if (s->ev[i].sector == 1000)
				pos = k;
			k++;
		}
		T_EQ(k, 60);
		if (!variant) {
			T_EQ(pos, 59); /* not expired: reached after the sweep */
		} else {
			/* Expired after 50 ms: taken at the next batch
			 * boundary (batches of fifo_batch = 16). */
			T_CHECK(pos > 0 && pos < 59);
			T_EQ(pos % 16, 0);
			uint64_t t_old = 0;
			for (size_t i = 0; i < s->nev; i++)
				if (s->ev[i].action == 'D' && s->ev[i].sector == 1000)
					t_old = s->ev[i].time_ns;
			T_CHECK(t_old >= 50 * RT_NS_PER_MS);
		}
		free(s);
	}
}

/* writes_starved: reads are preferred, but after 2 read batches (of
 * fifo_batch 16) waiting writes get a batch. */
static void test_deadline_writes_starved(void)
{
	struct scen *s = scen_new("deadline");
	struct worker *r = scen_worker(s, "reader", NULL, BLK_OP_READ, 0);
	for (unsigned i = 0; i < 40; i++)
		r->sector[i] = 4000000 + 2000 * i;
	r->n = 40;
	struct worker *w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
	for (unsigned i = 0; i < 5; i++)
		w->sector[i] = 9000000 + 2000 * i;
	w->n = 5;
	w->delay_ns = RT_NS_PER_MS / 10;
	T_EQ(scen_run(s, 18), 0);
	char order[64];
	d_order(s, order, sizeof(order));
	/* the lone first read, two read batches, the write batch, the rest */
	T_STREQ(order, "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrwwwwwrrrrrrr");
	free(s);
}

/* ---- plugging policies ("Ext3 latency fixes", LKML, April 2009) ------- */

static struct scen *plug_scenario(enum blk_plug_policy p, int thread_plug, int queue_plug)
{
	struct scen *s = scen_new("noop");
	s->o.plug_policy = p;
	s->o.queue_plug = queue_plug;
	s->hdd_qd = 32; /* NCQ: the device takes each request as it comes */
	struct worker *w = scen_worker(s, "kjournald", "be:3", BLK_OP_WRITE, BLK_SYNC);
	for (unsigned i = 0; i < 8; i++)
		w->sector[i] = 10277200 + 8 * i;
	w->n = 8;
	w->plug = thread_plug;
	return s;
}

static void test_plug_policies(void)
{
	for (int queue_plug = 0; queue_plug < 2; queue_plug++) {
		int thread_plug = !queue_plug;
		/* explicit: the batch merges into one request, one D. */
		struct scen *s = plug_scenario(BLK_PLUG_EXPLICIT, thread_plug, queue_plug);
		T_EQ(scen_run(s, 6), 0);
		T_EQ(count_action(s, 'D'), 1);
		T_EQ(count_action(s, 'M'), 7);
		for (size_t i = 0; i < s->nev; i++)
			if (s->ev[i].action == 'D') {
				T_EQ_U64(s->ev[i].sector, 10277200);
				T_EQ(s->ev[i].nr_sectors, 64);
				T_STREQ(s->ev[i].rwbs, "WS");
			}
		T_CHECK(count_action(s, 'P') >= 1 && count_action(s, 'U') >= 1);
		free(s);

		/* implicit-sync: each sync write unplugs and goes alone. */
		s = plug_scenario(BLK_PLUG_IMPLICIT_SYNC, thread_plug, queue_plug);
		T_EQ(scen_run(s, 6), 0);
		T_EQ(count_action(s, 'D'), 8);
		T_EQ(count_action(s, 'M'), 0);
		for (size_t i = 0; i < s->nev; i++)
			if (s->ev[i].action == 'D')
				T_EQ(s->ev[i].nr_sectors, 8);
		free(s);
	}
}

/* 2.6.29 queue plug: the 4th queued request unplugs (unplug_thresh). */
static void test_queue_plug_threshold(void)
{
	struct scen *s = scen_new("noop");
	s->o.queue_plug = true;
	struct worker *w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
	spread(w, 6, 9);
	T_EQ(scen_run(s, 7), 0);
	/* P at the first, U with 4 queued at the fourth. */
	int saw_u4 = 0;
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].action == 'U' && s->ev[i].nr == 4)
			saw_u4 = 1;
	T_CHECK(saw_u4);
	T_EQ(s->ev[0].action, 'Q');
	T_EQ(count_action(s, 'D'), 6);
	free(s);

	/* The timer: a lone async write nobody waits for is held for
	 * unplug_delay (3 ms), then the timer unplugs (T). */
	s = scen_new("noop");
	s->o.queue_plug = true;
	w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
	spread(w, 1, 9);
	w->nowait = 1;
	T_EQ(scen_run(s, 7), 0);
	T_EQ(count_action(s, 'T'), 1);
	T_EQ_U64(ev_time(s, 'D', w, 0) - ev_time(s, 'Q', w, 0), 3 * RT_NS_PER_MS);
	free(s);

	/* Without the queue plug it goes at once. */
	s = scen_new("noop");
	w = scen_worker(s, "writer", NULL, BLK_OP_WRITE, 0);
	spread(w, 1, 9);
	w->nowait = 1;
	T_EQ(scen_run(s, 7), 0);
	T_EQ(count_action(s, 'T'), 0);
	T_EQ_U64(ev_time(s, 'D', w, 0), ev_time(s, 'Q', w, 0));
	free(s);
}

/* ---- merging ---------------------------------------------------------- */

struct merge_arg {
	int rc;
	int ok_data;
	struct blk_trace_event ev[256];
	size_t nev;
};

static void fill(char *p, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(seed * 31 + i * 7);
}

static int merge_main(struct stack *st, void *arg)
{
	struct merge_arg *m = arg;
	struct blk_queue *q = stack_queue(st, 0);
	enum { N = 6, L = 4096 };
	static char wbuf[N][L], rbuf[3][L], big[3 * L];
	struct blk_bio b[N];
	/* 100, 108 (back), 92 (front), 200 (apart), 116 FUA (never merged),
	 * read 300 (other direction). */
	const uint64_t sec[N] = { 100, 108, 92, 200, 116, 300 };
	memset(b, 0, sizeof(b));
	struct blk_plug plug;
	blk_start_plug(&plug);
	for (int i = 0; i < N; i++) {
		fill(wbuf[i], L, i + 1);
		b[i].b_op = i == 5 ? BLK_OP_READ : BLK_OP_WRITE;
		b[i].b_flags = i == 4 ? BLK_FUA : 0;
		b[i].b_sector = sec[i];
		b[i].b_nr_sectors = 8;
		b[i].b_buf = wbuf[i];
		if (blk_submit(q, &b[i]) < 0)
			m->rc = -EIO;
	}
	blk_finish_plug(&plug);
	for (int i = 0; i < N; i++)
		if (blk_wait(&b[i]) < 0)
			m->rc = -EIO;
	/* Read 92..116 back as three plugged bios in separate buffers (merged
	 * and bounced), and as one. */
	struct blk_bio r[3], one;
	memset(r, 0, sizeof(r));
	blk_start_plug(&plug);
	for (int i = 0; i < 3; i++) {
		r[i].b_op = BLK_OP_READ;
		r[i].b_sector = 92 + 8 * i;
		r[i].b_nr_sectors = 8;
		r[i].b_buf = rbuf[2 - i]; /* deliberately not in address order */
		blk_submit(q, &r[i]);
	}
	blk_finish_plug(&plug);
	for (int i = 0; i < 3; i++)
		blk_wait(&r[i]);
	memset(&one, 0, sizeof(one));
	one.b_op = BLK_OP_READ;
	one.b_sector = 92;
	one.b_nr_sectors = 24;
	one.b_buf = big;
	blk_submit_wait(q, &one);
	m->ok_data = memcmp(rbuf[2], wbuf[2], L) == 0 && memcmp(rbuf[1], wbuf[0], L) == 0 &&
		     memcmp(rbuf[0], wbuf[1], L) == 0 && memcmp(big, wbuf[2], L) == 0 &&
		     memcmp(big + L, wbuf[0], L) == 0 && memcmp(big + 2 * L, wbuf[1], L) == 0;
	m->nev = blk_trace_events(q, 0, m->ev, 256);
	return 0;
}

/* fn on a sim HDD (the model's defaults; wrapped by wrap if set) under
 * the queue qs. */
static int hdd_run_queue(int (*fn)(struct stack *, void *), void *arg, uint64_t seed,
			 const struct stack_queue_spec *qs,
			 int (*wrap)(void *, unsigned, struct dev *, struct dev **))
{
	struct stack_spec sp;
	struct stack *st;
	int rc;

	stack_spec_default(&sp);
	sp.seed = seed;
	sp.disks[0] = (struct stack_disk_spec){ "hdd", NULL, 0 };
	sp.queues[0] = *qs;
	sp.wrap = wrap;
	rc = stack_new(&sp, &st, NULL, 0);
	if (rc < 0)
		return rc;
	rc = stack_run(st, "main", fn, arg);
	stack_free(st);
	return rc;
}

/* The same under a traced noop queue with queue_params. */
static int hdd_run(int (*fn)(struct stack *, void *), void *arg, uint64_t seed,
		   const char *queue_params,
		   int (*wrap)(void *, unsigned, struct dev *, struct dev **))
{
	struct stack_queue_spec qs = { .elevator = "noop", .queue_params = queue_params,
				       .trace = true };

	return hdd_run_queue(fn, arg, seed, &qs, wrap);
}

static int has_event(const struct merge_arg *m, char action, uint64_t sector, uint32_t nr)
{
	for (size_t i = 0; i < m->nev; i++)
		if (m->ev[i].action == action && m->ev[i].sector == sector &&
		    m->ev[i].nr_sectors == nr)
			return 1;
	return 0;
}

/* BLK_DIRECT reaches the device as DEV_REQ_DIRECT; a request is direct
 * only while all its bios are, and the flag is no merge barrier. */
struct direct_arg {
	int rc;
	uint32_t flags[4];
	uint64_t off[4];
	size_t n;
};

static int wrap_rec(void *arg, unsigned disk, struct dev *inner, struct dev **out)
{
	(void)arg;
	(void)disk;
	return dev_rec_new(inner, out);
}

static int direct_main(struct stack *st, void *arg)
{
	struct direct_arg *a = arg;
	struct blk_queue *q = stack_queue(st, 0);
	struct dev *d = stack_dev(st, 0);
	static char buf[4][4096];
	/* 0+8 both direct: one direct request; 100 direct + 108 not: one
	 * request, not direct */
	const uint64_t sec[4] = { 0, 8, 100, 108 };
	const uint32_t fl[4] = { BLK_DIRECT, BLK_DIRECT, BLK_DIRECT, 0 };
	struct blk_bio b[4];
	struct blk_plug plug;
	size_t first = dev_rec_count(d);

	memset(b, 0, sizeof(b));
	blk_start_plug(&plug);
	for (int i = 0; i < 4; i++) {
		b[i].b_op = BLK_OP_WRITE;
		b[i].b_flags = fl[i];
		b[i].b_sector = sec[i];
		b[i].b_nr_sectors = 8;
		b[i].b_buf = buf[i];
		if (blk_submit(q, &b[i]) < 0)
			a->rc = -EIO;
	}
	blk_finish_plug(&plug);
	for (int i = 0; i < 4; i++)
		if (blk_wait(&b[i]) < 0)
			a->rc = -EIO;
	for (size_t i = first; i < dev_rec_count(d) && a->n < 4; i++) {
		struct dev_rec_entry e;

		if (dev_rec_entry(d, i, &e) == 0 && e.kind == DEV_REC_WRITE) {
			a->flags[a->n] = e.flags;
			a->off[a->n++] = e.off;
		}
	}
	return 0;
}

static void test_direct_flag(void)
{
	struct direct_arg a = { 0 };

	T_EQ(hdd_run(direct_main, &a, 3, NULL, wrap_rec), 0);
	T_EQ(a.rc, 0);
	T_EQ(a.n, 2);
	for (size_t i = 0; i < a.n; i++) {
		if (a.off[i] == 0)
			T_CHECK(a.flags[i] & DEV_REQ_DIRECT);
		else
			T_CHECK(a.off[i] == 100 * 512 && !(a.flags[i] & DEV_REQ_DIRECT));
	}
}

/*
 * Stamped bios (BLK_STAMPED) merge as the same writes of bytes would: a
 * request of stamped bios only goes to the device as stamps (their arrays
 * joined when apart), one that mixes stamped and plain bios as bytes; the
 * bytes read back are the stamps' (dev_stamp_fill) and the plain bio's.
 * A stamped read, or a stamped bio not of whole 4 KiB blocks, is refused.
 */
struct stamp_arg {
	int rc, ok_data, refused;
	struct blk_trace_event ev[64];
	size_t nev;
};

static int stamped_main(struct stack *st, void *arg)
{
	struct stamp_arg *a = arg;
	struct blk_queue *q = stack_queue(st, 0);
	static struct dev_stamp s0[1], s1[2], s23[2];
	static char plain[4096], want[6][4096], got[6][4096];
	/* 0 (1 block), 8 (2 blocks, stamps elsewhere), 24 plain: one mixed
	 * request; 96 and 104 from one stamp array: one stamped request */
	struct blk_bio b[5] = {
		{ .b_op = BLK_OP_WRITE, .b_sector = 0, .b_nr_sectors = 8, .b_buf = s0 },
		{ .b_op = BLK_OP_WRITE, .b_sector = 8, .b_nr_sectors = 16, .b_buf = s1 },
		{ .b_op = BLK_OP_WRITE, .b_sector = 24, .b_nr_sectors = 8, .b_buf = plain },
		{ .b_op = BLK_OP_WRITE, .b_sector = 96, .b_nr_sectors = 8, .b_buf = &s23[0] },
		{ .b_op = BLK_OP_WRITE, .b_sector = 104, .b_nr_sectors = 8, .b_buf = &s23[1] },
	};
	struct dev_stamp *all[5] = { &s0[0], &s1[0], &s1[1], &s23[0], &s23[1] };
	struct blk_plug plug;

	for (int i = 0; i < 5; i++) {
		memset(all[i], 0, sizeof(*all[i]));
		memset(all[i]->s_bytes, 'a' + i, DEV_STAMP_BYTES - i);
	}
	fill(plain, sizeof(plain), 9);
	dev_stamp_fill(want[0], all[0]);
	dev_stamp_fill(want[1], all[1]);
	dev_stamp_fill(want[2], all[2]);
	memcpy(want[3], plain, 4096);
	dev_stamp_fill(want[4], all[3]);
	dev_stamp_fill(want[5], all[4]);
	blk_start_plug(&plug);
	for (int i = 0; i < 5; i++) {
		if (i != 2)
			b[i].b_flags = BLK_STAMPED;
		if (blk_submit(q, &b[i]) < 0)
			a->rc = -EIO;
	}
	blk_finish_plug(&plug);
	for (int i = 0; i < 5; i++)
		if (blk_wait(&b[i]) < 0)
			a->rc = -EIO;
	struct blk_bio r = { .b_op = BLK_OP_READ, .b_sector = 0, .b_nr_sectors = 32,
			     .b_buf = got[0] };
	if (blk_submit_wait(q, &r) < 0)
		a->rc = -EIO;
	r = (struct blk_bio){ .b_op = BLK_OP_READ, .b_sector = 96, .b_nr_sectors = 16,
			      .b_buf = got[4] };
	if (blk_submit_wait(q, &r) < 0)
		a->rc = -EIO;
	a->ok_data = memcmp(got, want, sizeof(want)) == 0;
	/* refusals: a read, a sector or a length not of whole 4 KiB blocks */
	struct blk_bio bad[3] = {
		{ .b_op = BLK_OP_READ, .b_sector = 0, .b_nr_sectors = 8, .b_buf = got[0] },
		{ .b_op = BLK_OP_WRITE, .b_sector = 4, .b_nr_sectors = 8, .b_buf = s0 },
		{ .b_op = BLK_OP_WRITE, .b_sector = 8, .b_nr_sectors = 4, .b_buf = s0 },
	};
	for (int i = 0; i < 3; i++) {
		bad[i].b_flags = BLK_STAMPED;
		a->refused += blk_submit(q, &bad[i]) == -EINVAL;
	}
	a->nev = blk_trace_events(q, 0, a->ev, 64);
	return 0;
}

static void test_stamped(void)
{
	struct stamp_arg *a = calloc(1, sizeof(*a));
	int d0 = 0, d96 = 0;

	T_EQ(hdd_run(stamped_main, a, 5, "max_sectors=1024", NULL), 0);
	T_EQ(a->rc, 0);
	T_CHECK(a->ok_data);
	T_EQ(a->refused, 3);
	for (size_t i = 0; i < a->nev; i++) {
		if (a->ev[i].action != 'D' || a->ev[i].rwbs[0] != 'W')
			continue;
		d0 += a->ev[i].sector == 0 && a->ev[i].nr_sectors == 32;
		d96 += a->ev[i].sector == 96 && a->ev[i].nr_sectors == 16;
	}
	T_EQ(d0, 1);   /* stamped and plain: one request */
	T_EQ(d96, 1);
	free(a);
}

static void test_merging(void)
{
	struct merge_arg *m = calloc(1, sizeof(*m));
	T_EQ(hdd_run(merge_main, m, 8, "max_sectors=1024", NULL), 0);
	T_EQ(m->rc, 0);
	T_CHECK(m->ok_data);
	T_CHECK(has_event(m, 'M', 108, 8));  /* back merge */
	T_CHECK(has_event(m, 'F', 92, 8));   /* front merge */
	T_CHECK(has_event(m, 'D', 92, 24));  /* one request 92..116 */
	T_CHECK(has_event(m, 'D', 200, 8));
	T_CHECK(has_event(m, 'D', 116, 8));  /* FUA write stays alone */
	T_CHECK(!has_event(m, 'M', 116, 8));
	T_CHECK(has_event(m, 'D', 300, 8));  /* the read is not merged into writes */
	free(m);

	/* max_sectors 16: 100+108 merge, 92 cannot join them. */
	m = calloc(1, sizeof(*m));
	T_EQ(hdd_run(merge_main, m, 8, "max_sectors=16", NULL), 0);
	T_CHECK(has_event(m, 'D', 100, 16));
	T_CHECK(has_event(m, 'D', 92, 8));
	T_CHECK(!has_event(m, 'F', 92, 8));
	free(m);
}

/* ---- blkparse format --------------------------------------------------- */

static void test_trace_format(void)
{
	/* A line of Theodore Ts'o's blktrace in "Re: [GIT PULL] Ext3 latency
	 * fixes" (LKML, April 2009), field for field. */
	struct blk_trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.major = 254;
	ev.minor = 2;
	ev.cpu = 1;
	ev.seq = 16;
	ev.time_ns = 5691576;
	ev.pid = 6947;
	ev.action = 'Q';
	strcpy(ev.rwbs, "W");
	ev.sector = 10277208;
	ev.nr_sectors = 8;
	strcpy(ev.comm, "kjournald");
	char line[256];
	blk_trace_format(&ev, line, sizeof(line));
	T_STREQ(line, "254,2    1       16     0.005691576  6947  Q   W 10277208 + 8 [kjournald]");
	ev.action = 'C';
	ev.error = 0;
	blk_trace_format(&ev, line, sizeof(line));
	T_STREQ(line, "254,2    1       16     0.005691576  6947  C   W 10277208 + 8 [0]");
	ev.action = 'U';
	ev.nr = 3;
	strcpy(ev.rwbs, "N");
	blk_trace_format(&ev, line, sizeof(line));
	T_STREQ(line, "254,2    1       16     0.005691576  6947  U   N [kjournald] 3");

	/* Every line of a real run matches the default format. */
	struct scen *s = plug_scenario(BLK_PLUG_EXPLICIT, 1, 0);
	T_EQ(scen_run(s, 9), 0);
	regex_t re;
	T_EQ(regcomp(&re,
		     "^[ 0-9]{3},[0-9][ 0-9]{2} [ 0-9]{2} [ 0-9]{7}[0-9] [ 0-9]{4}[0-9]\\.[0-9]{9} "
		     "[ 0-9]{4}[0-9] [ A-Z][A-Z] [ A-Z]{0,2}[A-Z]+ "
		     "(([0-9]+ \\+ [0-9]+ )?\\[[^]]+\\]( [0-9]+)?)$",
		     REG_EXTENDED | REG_NOSUB), 0);
	T_CHECK(s->nev > 10);
	for (size_t i = 0; i < s->nev; i++) {
		blk_trace_format(&s->ev[i], line, sizeof(line));
		if (regexec(&re, line, 0, NULL, 0) != 0) {
			regfree(&re);
			T_FAILF("line does not match: '%s'", line);
			free(s);
			return;
		}
		T_EQ(s->ev[i].seq, i + 1);
	}
	regfree(&re);
	/* The RWBS letters. */
	T_CHECK(count_action(s, 'Q') == 8);
	T_STREQ(s->ev[0].rwbs, "WS");
	T_STREQ(s->ev[0].comm, "kjournald");
	free(s);
}

/* deadline's front_merges off, given as a string (a stack spec's params)
 * or as a struct its table fills (blk_queue_opts.elevator_tunables): the
 * bio just before a queued request stays a request of its own; a back
 * merge still happens. On (the default), as under noop. */
static void test_deadline_front_merges(void)
{
	const struct blk_elevator_type *dl = blk_elevator_find("deadline");
	_Alignas(max_align_t) unsigned char tun[256];
	struct blk_queue_opts qo;

	T_CHECK(dl->e_tunables->t_size <= sizeof(tun));
	rt_param_defaults(dl->e_tunables, tun);
	T_EQ(rt_param_parse(dl->e_tunables, tun, "front_merges=0", NULL, 0), 0);
	for (int k = 0; k < 3; k++) {
		struct merge_arg *m = calloc(1, sizeof(*m));
		struct stack_queue_spec qs = { .base = &qo, .params = k == 1 ? "front_merges=0" : NULL };

		blk_queue_opts_default(&qo);
		qo.elevator = "deadline";
		qo.trace = true;
		qo.elevator_tunables = k == 2 ? tun : NULL;
		T_EQ(hdd_run_queue(merge_main, m, 8, &qs, NULL), 0);
		T_EQ(m->rc, 0);
		T_CHECK(m->ok_data);
		T_CHECK(has_event(m, 'M', 108, 8));
		T_EQ(has_event(m, 'F', 92, 8), k == 0);
		/* the writes 92 and 100..116 apart (the reads are 92 + 24) */
		T_EQ(has_event(m, 'D', 92, 8), k != 0);
		T_EQ(has_event(m, 'D', 100, 16), k != 0);
		free(m);
	}
}

/* ---- determinism and the real world ----------------------------------- */

static void test_deterministic(void)
{
	struct scen *a = scen_new("cfq"), *b = scen_new("cfq");
	rt_be_scenario(a);
	rt_be_scenario(b);
	T_EQ(scen_run(a, 11), 0);
	T_EQ(scen_run(b, 11), 0);
	T_EQ(a->nev, b->nev);
	for (size_t i = 0; i < a->nev; i++) {
		T_EQ_U64(a->ev[i].time_ns, b->ev[i].time_ns);
		T_EQ(a->ev[i].action, b->ev[i].action);
		T_EQ_U64(a->ev[i].sector, b->ev[i].sector);
	}
	free(a);
	free(b);
}

/* n 4 KiB writes at sectors 0, 8, 16 ...; block i filled with c + i. */
static void write_bios(struct blk_bio *b, char (*buf)[4096], int n, char c)
{
	memset(b, 0, (size_t)n * sizeof(*b));
	for (int i = 0; i < n; i++) {
		memset(buf[i], c + i, 4096);
		b[i].b_op = BLK_OP_WRITE;
		b[i].b_sector = (uint64_t)i * 8;
		b[i].b_nr_sectors = 8;
		b[i].b_buf = buf[i];
	}
}

struct real_arg {
	int rc;
	int ok;
};

static void real_end_io(struct blk_bio *b)
{
	int *count = b->b_private;
	__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
}

static void real_main(void *arg)
{
	struct real_arg *ra = arg;
	struct dev *d;
	struct blk_queue *q;
	if ((ra->rc = dev_mem_new(1 << 20, 512, &d)) < 0)
		return;
	for (int e = 0; e < 3; e++) {
		struct blk_queue_opts o;
		blk_queue_opts_default(&o);
		o.elevator = blk_elevator_at((size_t)e)->e_name;
		if ((ra->rc = blk_queue_new(d, &o, &q)) < 0)
			break;
		static char buf[16][4096];
		struct blk_bio b[16];
		int count = 0;
		write_bios(b, buf, 16, 'a');
		for (int i = 0; i < 16; i++) {
			b[i].b_end_io = real_end_io;
			b[i].b_private = &count;
			blk_submit(q, &b[i]);
		}
		blk_drain(q);
		ra->ok += __atomic_load_n(&count, __ATOMIC_SEQ_CST) == 16;
		char rb[16 * 4096];
		struct blk_bio r;
		memset(&r, 0, sizeof(r));
		r.b_op = BLK_OP_READ;
		r.b_nr_sectors = 128;
		r.b_buf = rb;
		ra->rc = blk_submit_wait(q, &r);
		ra->ok += ra->rc == 0 && rb[0] == 'a' && rb[15 * 4096] == 'a' + 15;
		ra->ok += blk_flush(q) == 0;
		r.b_sector = 2048; /* past the end of 1 MiB */
		r.b_nr_sectors = 8;
		ra->ok += blk_submit(q, &r) == -EINVAL;
		r.b_sector = 0;
		r.b_nr_sectors = 0;
		ra->ok += blk_submit(q, &r) == -EINVAL;
		blk_queue_free(q);
	}
	dev_close(d);
}

static void test_real_world(void)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_REAL, .seed = 1 };
	rt_world *w;
	T_EQ(rt_world_new(&wo, &w), 0);
	struct real_arg ra = { 0, 0 };
	T_EQ(rt_world_run(w, "main", real_main, &ra), 0);
	rt_world_free(w);
	T_EQ(ra.rc, 0);
	T_EQ(ra.ok, 15);
}

/* ---- polled bios ------------------------------------------------------ */

struct poll_arg {
	const char *path;
	int rc, ok, checks;
	int pid;                        /* the submitting thread */
	unsigned n;
	struct blk_trace_event ev[64];  /* D and C only */
};

static void poll_trace(void *arg, const struct blk_trace_event *ev)
{
	struct poll_arg *pa = arg;

	if ((ev->action == 'D' || ev->action == 'C') && pa->n < 64)
		pa->ev[pa->n++] = *ev;
}

/* pid of the k-th event `action` at sector, or -1 */
static int poll_ev_pid(const struct poll_arg *pa, char action, uint64_t sector, unsigned *count)
{
	int pid = -1;

	*count = 0;
	for (unsigned i = 0; i < pa->n; i++) {
		if (pa->ev[i].action == action && pa->ev[i].sector == sector) {
			pid = pa->ev[i].pid;
			(*count)++;
		}
	}
	return pid;
}

#define PCHECK(pa, cond) ((pa)->checks++, (pa)->ok += !!(cond))

static void poll_main(void *arg)
{
	struct poll_arg *pa = arg;
	struct dev_file_opts fo = { .create = true, .size = 1 << 20 };
	static char buf[4][4096], rb[4096];
	struct blk_queue_opts o;
	struct blk_queue *q;
	struct blk_bio b[4];
	struct blk_plug plug;
	struct dev *d;
	unsigned nd, nc;

	pa->pid = rt_self_pid();
	if ((pa->rc = dev_file_open(pa->path, &fo, &d)) < 0)
		return;
	blk_queue_opts_default(&o);
	o.elevator = "cfq";
	o.trace_fn = poll_trace;
	o.trace_arg = pa;
	if ((pa->rc = blk_queue_new(d, &o, &q)) < 0) {
		dev_close(d);
		return;
	}
	write_bios(b, buf, 4, 'p');
	/* a polled bio with a callback is refused */
	b[0].b_flags = BLK_POLLED;
	b[0].b_end_io = nop_end_io;
	PCHECK(pa, blk_submit(q, &b[0]) == -EINVAL);
	b[0].b_end_io = NULL;
	/* polled: dispatched and completed on this thread */
	b[0].b_flags = BLK_POLLED | BLK_SYNC | BLK_FUA;
	PCHECK(pa, blk_submit_wait(q, &b[0]) == 0);
	PCHECK(pa, poll_ev_pid(pa, 'D', 0, &nd) == pa->pid && nd == 1);
	PCHECK(pa, poll_ev_pid(pa, 'C', 0, &nc) == pa->pid && nc == 1);
	/* not polled: completed on the device's thread */
	b[1].b_flags = BLK_SYNC;
	PCHECK(pa, blk_submit_wait(q, &b[1]) == 0);
	PCHECK(pa, poll_ev_pid(pa, 'C', 8, &nc) != pa->pid && nc == 1);
	/* two adjacent polled bios in a plug are not merged */
	b[2].b_flags = b[3].b_flags = BLK_POLLED;
	blk_start_plug(&plug);
	PCHECK(pa, blk_submit(q, &b[2]) == 0 && blk_submit(q, &b[3]) == 0);
	blk_finish_plug(&plug);
	PCHECK(pa, blk_wait(&b[3]) == 0 && blk_wait(&b[2]) == 0);
	PCHECK(pa, poll_ev_pid(pa, 'D', 16, &nd) == pa->pid && nd == 1);
	PCHECK(pa, poll_ev_pid(pa, 'D', 24, &nd) == pa->pid && nd == 1);
	/* a polled read sees it all */
	struct blk_bio r = { .b_op = BLK_OP_READ, .b_flags = BLK_POLLED, .b_sector = 24,
			     .b_nr_sectors = 8, .b_buf = rb };
	PCHECK(pa, blk_submit_wait(q, &r) == 0 && rb[0] == 's' && rb[4095] == 's');
	blk_queue_free(q);
	dev_close(d);

	/* on a device that cannot poll, an ordinary bio */
	if ((pa->rc = dev_mem_new(1 << 20, 512, &d)) < 0)
		return;
	pa->n = 0;
	if ((pa->rc = blk_queue_new(d, &o, &q)) < 0) {
		dev_close(d);
		return;
	}
	b[0].b_flags = BLK_POLLED;
	PCHECK(pa, blk_submit_wait(q, &b[0]) == 0);
	PCHECK(pa, poll_ev_pid(pa, 'C', 0, &nc) != pa->pid && nc == 1);
	/* ... which merges: two adjacent ones in a plug are one request */
	b[2].b_flags = b[3].b_flags = BLK_POLLED;
	blk_start_plug(&plug);
	PCHECK(pa, blk_submit(q, &b[2]) == 0 && blk_submit(q, &b[3]) == 0);
	blk_finish_plug(&plug);
	PCHECK(pa, blk_wait(&b[3]) == 0 && blk_wait(&b[2]) == 0);
	PCHECK(pa, poll_ev_pid(pa, 'D', 16, &nd) != -1 && nd == 1);
	PCHECK(pa, poll_ev_pid(pa, 'D', 24, &nd) == -1 && nd == 0);
	blk_queue_free(q);
	dev_close(d);
}

static void test_polled(void)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_REAL, .seed = 1 };
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[300];
	rt_world *w;

	snprintf(path, sizeof(path), "%s/ujbd-blk-poll-%d", base, (int)getpid());
	struct poll_arg *pa = calloc(1, sizeof(*pa));
	T_CHECK(pa);
	pa->path = path;
	T_EQ(rt_world_new(&wo, &w), 0);
	T_EQ(rt_world_run(w, "poller", poll_main, pa), 0);
	rt_world_free(w);
	unlink(path);
	int rc = pa->rc, ok = pa->ok, checks = pa->checks;
	free(pa);
	T_EQ(rc, 0);
	T_EQ(checks, 17);
	T_EQ(ok, checks);
}

static void test_names_and_defaults(void)
{
	struct blk_queue_opts o;
	blk_queue_opts_default(&o);
	T_STREQ(o.elevator, "noop");
	T_CHECK(o.elevator_tunables == NULL);
	enum blk_plug_policy p;
	T_EQ(blk_plug_policy_parse("implicit-sync", &p), 0);
	T_EQ(p, BLK_PLUG_IMPLICIT_SYNC);
	T_EQ(o.max_sectors, 1024);
}

/* Row name of t's table in obj, in its given unit. */
static double tun(const struct blk_elevator_type *t, const void *obj, const char *name)
{
	const struct rt_param *p = rt_param_find(t->e_tunables, name);

	return p ? rt_param_get(p, obj) : -1;
}

/* The elevator registry: every row found by name and index, each
 * elevator's table fills the 2.6.29 defaults and parses tunables. */
static void test_elevator_registry(void)
{
	struct blk_queue_opts o;
	const struct blk_elevator_type *cfq = blk_elevator_find("cfq");
	const struct blk_elevator_type *dl = blk_elevator_find("deadline");
	_Alignas(max_align_t) unsigned char c[256], d[256];
	char err[128] = "";

	T_EQ(blk_elevator_count(), 3);
	T_CHECK(cfq && dl && !blk_elevator_find("as") && !blk_elevator_find(NULL));
	T_CHECK(blk_elevator_at(3) == NULL);
	for (size_t i = 0; i < blk_elevator_count(); i++)
		T_CHECK(blk_elevator_find(blk_elevator_at(i)->e_name) == blk_elevator_at(i));
	T_CHECK(blk_elevator_find("noop")->e_tunables == NULL);
	T_CHECK(cfq->e_tunables->t_size <= sizeof(c) && dl->e_tunables->t_size <= sizeof(d));
	rt_param_defaults(dl->e_tunables, d);
	T_CHECK(tun(dl, d, "read_expire_ms") == 500 && tun(dl, d, "write_expire_ms") == 5000);
	T_CHECK(tun(dl, d, "fifo_batch") == 16 && tun(dl, d, "writes_starved") == 2 &&
		tun(dl, d, "front_merges") == 1);
	rt_param_defaults(cfq->e_tunables, c);
	T_CHECK(tun(cfq, c, "quantum") == 4 && tun(cfq, c, "back_seek_max_kib") == 16384 &&
		tun(cfq, c, "back_seek_penalty") == 2 && tun(cfq, c, "slice_async_rq") == 2 &&
		tun(cfq, c, "hw_tag") == -1);
	T_CHECK(tun(cfq, c, "fifo_expire_sync_ms") == 125 &&
		tun(cfq, c, "fifo_expire_async_ms") == 250);
	T_CHECK(tun(cfq, c, "slice_sync_ms") == 100 && tun(cfq, c, "slice_async_ms") == 40 &&
		tun(cfq, c, "slice_idle_ms") == 8);
	T_CHECK(tun(cfq, c, "slice_scale") == 5 && tun(cfq, c, "hw_queue_min") == 5 &&
		tun(cfq, c, "sample_valid") == 80);
	T_CHECK(tun(cfq, c, "idle_delay_ms") == 200 && tun(cfq, c, "min_tt_ms") == 2 &&
		tun(cfq, c, "front_backoff_ms") == 1000 && tun(cfq, c, "seeky_sectors") == 8192);
	blk_queue_opts_default(&o);
	T_CHECK(o.nr_requests == 128 && o.unplug_thresh == 4 && !o.queue_plug);
	T_EQ_U64(o.unplug_delay_ns, 3 * RT_NS_PER_MS);
	T_EQ(o.trace_max_events, 65536);
	T_EQ(rt_param_parse(cfq->e_tunables, c, "slice_idle_ms=4", err, sizeof(err)), 0);
	T_CHECK(tun(cfq, c, "slice_idle_ms") == 4);
	T_EQ(rt_param_parse(dl->e_tunables, d, "front_merges=0", err, sizeof(err)), 0);
	T_EQ(rt_param_parse(blk_queue_params(), &o, "nr_requests=0", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --queue=nr_requests: '0': out of range (1 to 65536 rq)");
}

/* Preemption rule 5: a sync request ends an async queue's slice. */
static void test_cfq_sync_preempts_async(void)
{
	struct scen *s = scen_new("cfq");
	s->hdd_cache = 0;
	struct worker *w = scen_worker(s, "writeback", "be:4", BLK_OP_WRITE, 0);
	spread(w, 12, 7);
	struct worker *r = scen_worker(s, "reader", "be:4", BLK_OP_READ, 0);
	spread(r, 3, 8);
	r->delay_ns = 1 * RT_NS_PER_MS;
	T_EQ(scen_run(s, 13), 0);
	char order[64];
	d_order(s, order, sizeof(order));
	T_STREQ(order, "wrrrwwwwwwwwwww");
	free(s);

	/* Control: noop serves in arrival order. */
	s = scen_new("noop");
	s->hdd_cache = 0;
	w = scen_worker(s, "writeback", "be:4", BLK_OP_WRITE, 0);
	spread(w, 12, 7);
	r = scen_worker(s, "reader", "be:4", BLK_OP_READ, 0);
	spread(r, 3, 8);
	r->delay_ns = 1 * RT_NS_PER_MS;
	T_EQ(scen_run(s, 13), 0);
	d_order(s, order, sizeof(order));
	T_STREQ(order, "wwwwwwwwwwwwrrr");
	free(s);
}

/* next_rq: a request behind the head costs back_seek_penalty x distance. */
static void test_cfq_back_seek(void)
{
	for (unsigned penalty = 2; penalty <= 3; penalty++) {
		struct scen *s = scen_new("cfq");
		snprintf(s->params, sizeof(s->params), "back_seek_penalty=%u", penalty);
		struct worker *w = scen_worker(s, "reader", "be:4", BLK_OP_READ, 0);
		w->sector[0] = 1000000;  /* issued at once: head = 1000008 */
		w->sector[1] = 1000128;  /* 120 ahead */
		w->sector[2] = 999950;   /* 58 behind: costs 116 or 174 */
		w->n = 3;
		T_EQ(scen_run(s, 14), 0);
		uint64_t d[3];
		int k = 0;
		for (size_t i = 0; i < s->nev && k < 3; i++)
			if (s->ev[i].action == 'D')
				d[k++] = s->ev[i].sector;
		T_EQ(k, 3);
		T_EQ_U64(d[0], 1000000);
		T_EQ_U64(d[1], penalty == 2 ? 999950 : 1000128);
		T_EQ_U64(d[2], penalty == 2 ? 1000128 : 999950);
		free(s);
	}
}

/* ---- request pool exhaustion and I/O errors ---------------------------- */

static void test_request_pool_sleep(void)
{
	struct scen *s = scen_new("deadline");
	s->o.nr_requests = 4;
	struct worker *w = scen_worker(s, "reader", NULL, BLK_OP_READ, 0);
	spread(w, 20, 10);
	T_EQ(scen_run(s, 15), 0);
	T_EQ(count_action(s, 'D'), 20);
	T_EQ(count_action(s, 'C'), 20);
	T_CHECK(count_action(s, 'S') > 0);
	free(s);
}

struct err_arg {
	int rc, e1, e2, e3;
	struct blk_trace_event ev[64];
	size_t nev;
};

/* The wrap hook: the second read fails. */
static int fail_2nd_read(void *arg, unsigned disk, struct dev *inner, struct dev **out)
{
	struct dev_fault_opts fo = { .fail_read_nth = 2 };

	return dev_fault_new(inner, &fo, out);
}

static int err_main(struct stack *st, void *arg)
{
	struct err_arg *ea = arg;
	struct blk_queue *q = stack_queue(st, 0);
	static char buf[4096];
	struct blk_bio b;
	int *res[3] = { &ea->e1, &ea->e2, &ea->e3 };
	for (int i = 0; i < 3; i++) {
		memset(&b, 0, sizeof(b));
		b.b_op = BLK_OP_READ;
		b.b_sector = 800 + 64 * (uint64_t)i;
		b.b_nr_sectors = 8;
		b.b_buf = buf;
		*res[i] = blk_submit_wait(q, &b);
	}
	ea->nev = blk_trace_events(q, 0, ea->ev, 64);
	return 0;
}

static void test_io_error(void)
{
	struct err_arg *ea = calloc(1, sizeof(*ea));
	T_EQ(hdd_run(err_main, ea, 16, NULL, fail_2nd_read), 0);
	T_EQ(ea->rc, 0);
	T_EQ(ea->e1, 0);
	T_EQ(ea->e2, -EIO);
	T_EQ(ea->e3, 0);
	char line[256];
	int found = 0;
	for (size_t i = 0; i < ea->nev; i++) {
		if (ea->ev[i].action != 'C' || ea->ev[i].sector != 864)
			continue;
		blk_trace_format(&ea->ev[i], line, sizeof(line));
		found = strstr(line, " C   R 864 + 8 [-5]") != NULL;
	}
	T_CHECK(found);
	free(ea);
}

/* FIFO expiry, checked once per slice: an old request that the sort order
 * would leave for last (it "wraps": far behind the head) is taken at the
 * start of the next slice once fifo_expire_sync has passed. */
static void test_cfq_fifo_expire(void)
{
	for (int variant = 0; variant < 2; variant++) {
		struct scen *s = scen_new("cfq");
		if (variant)
			snprintf(s->params, sizeof(s->params), "fifo_expire_sync_ms=50");
		struct worker *w = scen_worker(s, "reader", "be:4", BLK_OP_READ, 0);
		w->sector[0] = 1000000;        /* issued at once */
		w->sector[1] = 100;            /* far behind: wraps */
		for (unsigned i = 2; i < 40; i++)
			w->sector[i] = 1000000 + 200000 * i; /* ~6 ms each */
		w->n = 40;
		T_EQ(scen_run(s, 17), 0);
		int pos = -1, k = 0;
		uint64_t t = 0;
		for (size_t i = 0; i < s->nev; i++) {
			if (s->ev[i].action != 'D')
				continue;
			if (s->ev[i].sector == 100) {
				pos = k;
				t = s->ev[i].time_ns;
			}
			k++;
		}
		T_EQ(k, 40);
		if (!variant) {
			T_EQ(pos, 39);
		} else {
			/* first slice: 100 ms from the first completion */
			T_CHECK(pos > 1 && pos < 39);
			T_CHECK(t >= 100 * RT_NS_PER_MS);
		}
		free(s);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_names_and_defaults);
	T_RUN(test_elevator_registry);
	T_RUN(test_trace_format);
	T_RUN(test_merging);
	T_RUN(test_stamped);
	T_RUN(test_direct_flag);
	T_RUN(test_plug_policies);
	T_RUN(test_queue_plug_threshold);
	T_RUN(test_cfq_rt_before_be);
	T_RUN(test_cfq_idle_class_last);
	T_RUN(test_cfq_slice_idle);
	T_RUN(test_cfq_meta_preempts);
	T_RUN(test_cfq_sync_preempts_async);
	T_RUN(test_cfq_back_seek);
	T_RUN(test_cfq_fifo_expire);
	T_RUN(test_deadline_expiry);
	T_RUN(test_deadline_writes_starved);
	T_RUN(test_deadline_front_merges);
	T_RUN(test_request_pool_sleep);
	T_RUN(test_io_error);
	T_RUN(test_deterministic);
	T_RUN(test_real_world);
	T_RUN(test_polled);
	return t_done(argv[0]);
}

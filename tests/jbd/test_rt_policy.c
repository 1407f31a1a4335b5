/*
 * The journal policies under_commit and commit_ioprio = inherit (ujbd.h),
 * in the sim world (deterministic):
 *   - under_commit: under wait-io a handle that needs a buffer whose
 *     journal copy is being written waits until that log write completes
 *     (in virtual time: at least until the request's C event), under copy
 *     it does not wait at all; after a crash both recover the same blocks;
 *   - inherit: an rt:4 fsync arriving while a commit's log writes wait in
 *     CFQ behind a be:4 reader raises them (blk_boost: the D events of the
 *     commit's writes are RT, the counters say so), and the next commit,
 *     with nobody waiting at rt, runs at the floor again;
 *   - the per-thread accumulator (ujbd_lat_attach) sees its thread's waits;
 *   - wait-loop (jbd before 3.11) against wait-io (3.11 on): with a
 *     transaction logged in two runs, a buffer of the first run is released
 *     at that run's completion under wait-io, only once the newest run has
 *     completed under wait-loop;
 *   - buffer_lock and writeback: committed buffers go home by the
 *     writeback pass once older than its expiry, never before; a write
 *     access to a buffer whose home write is in flight waits for that
 *     write's completion under buffer_lock (UJBD_LAT_LOCK_WRITEBACK), not
 *     at all without it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jbd/rt_rig.h"

#define BS 4096u
#define JBLOCKS 1024u
#define DBLOCKS 4096u
#define MAXEV 65536

static bool log_write(const struct blk_trace_event *ev)
{
	return ev->rwbs[0] == 'W' && ev->sector > 0 && ev->sector < (uint64_t)JBLOCKS * BS / 512;
}

/* ---- under_commit: copy and wait-io ------------------------------------- */

struct uc {
	enum ujbd_under_commit policy;
	unsigned nblocks;             /* the logged transaction's (4: one run) */
	/* out */
	int rc;
	uint64_t t_access, t_done;    /* the second handle's write access */
	uint64_t c_first;             /* first log write C after t_access */
	uint64_t d_first;             /* ... and its request's D */
	uint64_t c_second;            /* the next log write C after c_first */
	struct ujbd_lat_acct acc;     /* the accessing thread's */
	struct ujbd_stats st;
	uint8_t data[4][BS];          /* blocks 10..13 recovered */
	struct ujbd *j;
};

/* The block the second handle asks for: the first one the commit logs.
 * A transaction's buffers are logged newest first, so with more than the
 * four blocks of one run that is the last block written, 10 + nblocks - 1
 * (in the first run, whose completion wait-io waits for). */
static uint64_t uc_block(const struct uc *u)
{
	return u->nblocks > 4 ? 10 + u->nblocks - 1 : 10;
}

/* The second handle: write access to a block while the commit of the
 * first is logging it. */
static void uc_access(void *arg)
{
	struct uc *u = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	int rc;

	rt_sleep_ns(300 * RT_NS_PER_US); /* the log write is in flight then */
	ujbd_lat_attach(&u->acc);
	rc = ujbd_start(u->j, 4, &h);
	if (rc) {
		u->rc = rc;
		return;
	}
	ujbd_handle_set_sync(h, true);
	u->t_access = rt_now_ns();
	rc = ujbd_get_write_access(h, uc_block(u), &b);
	u->t_done = rt_now_ns();
	if (!rc) {
		rig_fill(ujbd_buf_data(b), BS, uc_block(u), 3);
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	int s = ujbd_stop(h);
	ujbd_lat_attach(NULL);
	u->rc = rc ? rc : s;
}

static int uc_main(struct stack *st, void *arg)
{
	struct uc *u = arg;
	struct blk_queue *jq = stack_queue(st, 0);
	struct rig r;
	rt_thread *t;
	ujbd_tid_t tid;

	rig_of_stack(&r, st);
	u->j = r.j;
	/* a first commit: the log is not empty (no superblock write) */
	if ((u->rc = rig_write(r.j, 10, 4, 1, true, NULL)))
		return 0;
	if ((u->rc = rig_write(r.j, 10, u->nblocks, 2, false, &tid)) ||
	    (u->rc = ujbd_commit_tid(r.j, tid)))
		return 0;
	rt_thread_create(&t, "access", uc_access, u);
	rt_thread_join(t);
	if (u->rc)
		return 0;
	ujbd_stats(r.j, &u->st);
	stack_journal_close(st, true); /* a crash: recovery replays the log */
	size_t n = blk_trace_count(jq);
	struct blk_trace_event *ev = calloc(n, sizeof(*ev));
	n = blk_trace_events(jq, 0, ev, n);
	for (size_t i = 0; i < n && !u->c_second; i++) {
		if (ev[i].action != 'C' || !log_write(&ev[i]) || ev[i].time_ns <= u->t_access)
			continue;
		if (u->c_first) {
			u->c_second = ev[i].time_ns;
			break;
		}
		u->c_first = ev[i].time_ns;
		for (size_t k = 0; k < i; k++)
			if (ev[k].action == 'D' && ev[k].sector == ev[i].sector)
				u->d_first = ev[k].time_ns;
	}
	free(ev);
	if ((u->rc = rig_recover(&r)))
		return 0;
	for (unsigned i = 0; i < 4 && !u->rc; i++)
		u->rc = rig_data(&r, 10 + i, u->data[i]);
	return 0;
}

static struct uc *uc_run_n(enum ujbd_under_commit p, unsigned nblocks)
{
	struct uc *u = calloc(1, sizeof(*u));

	struct blk_queue_opts qo;
	struct stack_spec sp;

	u->policy = p;
	u->nblocks = nblocks;
	/* the journal on an HDD without a cache (a log write takes the
	 * media's time), the data on RAM, a traced queue over each */
	rig_stack_spec(&sp, 5, "hdd", 1ull << 30, BS, JBLOCKS);
	sp.disks[0].params = "cache_mib=0";
	sp.ndisks = 2;
	sp.disks[1] = (struct stack_disk_spec){ "mem", NULL, (uint64_t)DBLOCKS * BS };
	sp.data_disk = 1;
	blk_queue_opts_default(&qo);
	qo.trace = true;
	qo.trace_max_events = MAXEV;
	sp.queues[0].base = &qo;
	rig_opts_jbd2(&sp.jopts, true); /* the commit runs beside the access */
	sp.jopts.under_commit = p;
	int rc = rig_stack_run(&sp, uc_main, u);
	if (rc && !u->rc)
		u->rc = rc;
	return u;
}

static struct uc *uc_run(enum ujbd_under_commit p)
{
	return uc_run_n(p, 4);
}

/* 200 blocks: the log writes go as two runs (512 KiB each at most); the
 * accessed block (uc_block) is in the first. */
static void t_wait_loop(void)
{
	struct uc *w = uc_run_n(UJBD_UNDER_COMMIT_WAIT_IO, 200);
	struct uc *l = uc_run_n(UJBD_UNDER_COMMIT_WAIT_LOOP, 200);

	T_EQ(w->rc, 0);
	T_EQ(l->rc, 0);
	T_EQ_U64(w->t_access, l->t_access);
	/* two log writes completed after the access: the runs */
	T_CHECK(w->c_first > w->t_access && w->c_second > w->c_first);
	T_CHECK(l->c_first > l->t_access && l->c_second > l->c_first);
	/* wait-io: released by its own run's completion, before the next */
	T_EQ_U64(w->t_done, w->c_first);
	T_CHECK(w->t_done < w->c_second);
	/* wait-loop: only once the newest run completed */
	T_CHECK(l->t_done >= l->c_second);
	T_EQ_U64(l->acc.count[UJBD_LAT_WAIT_SHADOW], 1);
	T_EQ_U64(l->acc.sum_ns[UJBD_LAT_WAIT_SHADOW], l->t_done - l->t_access);
	/* recovered contents: the same either way */
	T_CHECK(memcmp(w->data, l->data, sizeof(w->data)) == 0);
	free(w);
	free(l);
}

/* ---- buffer_lock and writeback ------------------------------------------- */

#define BL_BLOCK 10u

struct bl {
	bool lock;
	/* a be:4 reader keeps the data disk busy under cfq; the access comes
	 * from an rt:4 thread as soon as the home write is queued; inherit:
	 * commit_ioprio = inherit (else be:4) */
	bool contend, inherit;
	bool stop;
	/* out */
	int rc;
	uint64_t t_committed;         /* the sync write's commit returned */
	uint64_t t_access, t_done;
	uint64_t q_home, d_home, c_home; /* the home write of BL_BLOCK: Q, D, C */
	struct ujbd_lat_acct acc;
	struct ujbd_stats st;
	unsigned home;                /* blocks of the four at home, gen 1 */
	struct blk_queue *dq;
	struct ujbd *j;
};

/* The home write of BL_BLOCK: its Q, D and C times in the data queue's
 * trace (0: not seen). */
static void bl_home(struct bl *b, uint64_t *q, uint64_t *d, uint64_t *c)
{
	size_t n = blk_trace_count(b->dq);
	struct blk_trace_event *ev = calloc(n ? n : 1, sizeof(*ev));
	uint64_t sec = (uint64_t)BL_BLOCK * BS / 512;

	*q = *d = *c = 0;
	n = blk_trace_events(b->dq, 0, ev, n);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].rwbs[0] != 'W' || ev[i].sector > sec ||
		    ev[i].sector + ev[i].nr_sectors <= sec)
			continue;
		if (ev[i].action == 'Q' && !*q)
			*q = ev[i].time_ns;
		if (ev[i].action == 'D' && !*d)
			*d = ev[i].time_ns;
		if (ev[i].action == 'C' && *d && !*c)
			*c = ev[i].time_ns;
	}
	free(ev);
}

/* Wait for the home write of BL_BLOCK to be at the disk (contend: in
 * the queue), then ask for write access to it. */
static void bl_access(void *arg)
{
	struct bl *b = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *buf;
	uint64_t q = 0, d = 0, c = 0;
	int rc;

	if (b->contend)
		rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4));
	for (int i = 0; i < 100000 && !(b->contend ? q : d); i++) {
		rt_sleep_ns(100 * RT_NS_PER_US);
		bl_home(b, &q, &d, &c);
	}
	if (!(b->contend ? q : d) || c || (b->contend && d)) {
		b->rc = -ETIMEDOUT; /* never saw it queued (in flight) */
		return;
	}
	ujbd_lat_attach(&b->acc);
	rc = ujbd_start(b->j, 1, &h);
	if (!rc) {
		b->t_access = rt_now_ns();
		rc = ujbd_get_write_access(h, BL_BLOCK, &buf);
		b->t_done = rt_now_ns();
		if (!rc) {
			rc = ujbd_dirty_metadata(h, buf);
			ujbd_buf_put(buf);
		}
		int s = ujbd_stop(h);
		rc = rc ? rc : s;
	}
	ujbd_lat_attach(NULL);
	b->rc = rc;
}

/* The home-write tests' stack: the journal (jblocks) on RAM, the data on
 * an HDD without a cache (a home write takes the media's time), its queue
 * traced from qo (which must outlive the stack). */
static void home_stack_spec(struct stack_spec *sp, struct blk_queue_opts *qo, uint64_t seed,
			    uint32_t jblocks)
{
	rig_stack_spec(sp, seed, "mem", (uint64_t)jblocks * BS, BS, jblocks);
	sp->ndisks = 2;
	sp->disks[1] = (struct stack_disk_spec){ "hdd", "cache_mib=0", 1ull << 30 };
	sp->data_disk = 1;
	blk_queue_opts_default(qo);
	qo->trace = true;
	qo->trace_max_events = MAXEV;
	sp->queues[1].base = qo;
}

/* A be:4 reader keeping q's disk busy with far-apart sync reads from
 * 64 MiB on (away from the blocks the tests write), until *stop. */
static void busy_reader(struct blk_queue *q, const bool *stop)
{
	uint8_t *buf = malloc(BS);
	struct blk_bio bio;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	for (unsigned i = 0; !__atomic_load_n(stop, __ATOMIC_ACQUIRE) && i < 100000; i++) {
		memset(&bio, 0, sizeof(bio));
		bio.b_op = BLK_OP_READ;
		bio.b_sector = (64ull << 20) / 512 + (uint64_t)((i * 2654435761u) % 200000u) * 8;
		bio.b_nr_sectors = BS / 512;
		bio.b_buf = buf;
		if (blk_submit_wait(q, &bio))
			break;
	}
	free(buf);
}

/* contend: the busy reader on the data disk */
static void bl_reader(void *arg)
{
	struct bl *b = arg;

	busy_reader(b->dq, &b->stop);
}

static int bl_main(struct stack *st, void *arg)
{
	struct bl *b = arg;
	struct rig r;
	rt_thread *t, *rd = NULL;

	rig_of_stack(&r, st);
	b->j = r.j;
	b->dq = stack_queue(st, 1);
	if ((b->rc = rig_write(r.j, BL_BLOCK, 4, 1, true, NULL)))
		return 0;
	b->t_committed = rt_now_ns();
	if (b->contend)
		rt_thread_create(&rd, "reader", bl_reader, b);
	rt_thread_create(&t, "access", bl_access, b);
	rt_thread_join(t);
	if (b->contend) {
		__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
		rt_thread_join(rd);
	}
	if (!b->rc) {
		bl_home(b, &b->q_home, &b->d_home, &b->c_home);
		b->rc = ujbd_stats(r.j, &b->st);
	}
	/* the writeback's pass over the four has completed by then */
	rt_sleep_ns(2 * RT_NS_PER_S);
	for (unsigned i = 0; i < 4; i++)
		b->home += rig_has(&r, BL_BLOCK + i, 1);
	return 0;
}

static struct bl *bl_run_as(bool lock, bool contend, bool inherit)
{
	struct bl *b = calloc(1, sizeof(*b));
	struct blk_queue_opts qo;
	struct stack_spec sp;

	b->lock = lock;
	b->contend = contend;
	b->inherit = inherit;
	home_stack_spec(&sp, &qo, 7, JBLOCKS);
	if (contend)
		sp.queues[1].elevator = "cfq";
	rig_opts_jbd2(&sp.jopts, true);
	sp.jopts.buffer_lock = lock;
	sp.jopts.commit_ioprio = inherit ? UJBD_IOPRIO_INHERIT : RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	sp.jopts.writeback_interval_ns = 1 * RT_NS_PER_S;
	sp.jopts.writeback_expire_ns = 1 * RT_NS_PER_S;
	int rc = rig_stack_run(&sp, bl_main, b);
	if (rc && !b->rc)
		b->rc = rc;
	return b;
}

static struct bl *bl_run(bool lock)
{
	return bl_run_as(lock, false, false);
}

static void t_buffer_lock(void)
{
	struct bl *l = bl_run(true), *n = bl_run(false);

	T_EQ(l->rc, 0);
	T_EQ(n->rc, 0);
	/* the same timeline up to the access: a home write by the
	 * writeback, not before the buffer was a second (the expiry) old */
	T_EQ_U64(l->t_access, n->t_access);
	T_EQ_U64(l->d_home, n->d_home);
	T_CHECK(l->d_home >= l->t_committed + RT_NS_PER_S);
	T_CHECK(l->d_home <= l->t_access && l->c_home > l->t_access);
	/* buffer_lock: the access waited until that write completed,
	 * counted as a writeback's lock by the thread and the journal */
	T_EQ_U64(l->t_done, l->c_home);
	T_EQ_U64(l->acc.count[UJBD_LAT_LOCK_WRITEBACK], 1);
	T_EQ_U64(l->acc.sum_ns[UJBD_LAT_LOCK_WRITEBACK], l->t_done - l->t_access);
	T_EQ_U64(l->st.lat[UJBD_LAT_LOCK_WRITEBACK].count, 1);
	T_EQ_U64(l->st.lat[UJBD_LAT_LOCK_CHECKPOINT].count, 0);
	/* without it: no wait at all */
	T_EQ_U64(n->t_done, n->t_access);
	T_EQ_U64(n->acc.count[UJBD_LAT_LOCK_WRITEBACK], 0);
	T_EQ_U64(n->st.lat[UJBD_LAT_LOCK_WRITEBACK].count, 0);
	/* both wrote the four blocks home by writeback */
	T_EQ(l->home, 4);
	T_EQ(n->home, 4);
	free(l);
	free(n);
}

/* inherit over a locked buffer: an rt:4 write access waiting on a home
 * write still queued behind a be:4 reader raises that write in its queue;
 * with a fixed priority it waits its turn. */
static void t_inherit_buffer_lock(void)
{
	struct bl *i = bl_run_as(true, true, true), *f = bl_run_as(true, true, false);

	T_EQ(i->rc, 0);
	T_EQ(f->rc, 0);
	/* the same timeline up to the access, made while the write was queued */
	T_EQ_U64(i->t_access, f->t_access);
	T_EQ_U64(i->q_home, f->q_home);
	T_CHECK(i->q_home <= i->t_access && i->d_home > i->t_access);
	/* both waited for the write's completion, on the writeback's lock */
	T_EQ_U64(i->t_done, i->c_home);
	T_EQ_U64(f->t_done, f->c_home);
	T_EQ_U64(i->acc.count[UJBD_LAT_LOCK_WRITEBACK], 1);
	T_EQ_U64(f->acc.count[UJBD_LAT_LOCK_WRITEBACK], 1);
	/* inherit raised it (one request, one boost), fixed raised nothing ... */
	T_EQ_U64(i->st.boosted_rqs, 1);
	T_EQ_U64(i->st.inherit_boosts, 1);
	T_EQ_U64(f->st.boosted_rqs, 0);
	T_EQ_U64(f->st.inherit_boosts, 0);
	/* ... and the raised write went to the disk sooner */
	T_CHECK(i->d_home < f->d_home);
	T_CHECK(i->t_done - i->t_access < f->t_done - f->t_access);
	T_EQ(i->home, 4);
	T_EQ(f->home, 4);
	free(i);
	free(f);
}

/* ---- writeback expiry: the device's, not a buffer's -------------------- */

/* The first dispatch (D) of a write covering block in dq's trace, 0: none. */
static uint64_t home_dispatch(struct blk_queue *dq, uint64_t block)
{
	size_t n = blk_trace_count(dq);
	struct blk_trace_event *ev = calloc(n ? n : 1, sizeof(*ev));
	uint64_t sec = block * BS / 512, d = 0;

	n = blk_trace_events(dq, 0, ev, n);
	for (size_t i = 0; i < n && !d; i++)
		if (ev[i].rwbs[0] == 'W' && ev[i].action == 'D' && ev[i].sector <= sec &&
		    ev[i].sector + ev[i].nr_sectors > sec)
			d = ev[i].time_ns;
	free(ev);
	return d;
}

struct wbx {
	int rc;
	uint64_t open, c[3], d[3]; /* blocks WBX_BLOCK + 10 i: committed, home write dispatched */
};

#define WBX_BLOCK 10u

static int wbx_main(struct stack *st, void *arg)
{
	static const uint64_t at_ms[3] = { 0, 1500, 2500 };
	struct wbx *x = arg;
	struct rig r;

	rig_of_stack(&r, st);
	x->open = rt_now_ns();
	for (unsigned i = 0; i < 3 && !x->rc; i++) {
		rt_sleep_until(x->open + at_ms[i] * RT_NS_PER_MS);
		x->rc = rig_write(r.j, WBX_BLOCK + 10 * i, 1, 1, true, NULL);
		x->c[i] = rt_now_ns();
	}
	rt_sleep_until(x->open + 4500 * RT_NS_PER_MS);
	for (unsigned i = 0; i < 3; i++)
		x->d[i] = home_dispatch(stack_queue(st, 1), WBX_BLOCK + 10 * i);
	return 0;
}

/*
 * Writeback every second, expiry 1 s, blocks committed at 0, 1.5 and 2.5
 * s. The pass of 1 s finds the device dirty for under a second; the pass of
 * 2 s takes the first two, the second only 0.5 s old (kupdate expired the
 * block device's inode, dirty since 0 s, not each buffer); that pass leaves
 * the device clean, so the third waits a whole expiry of its own: not at 3
 * s, at 4 s.
 */
static void t_writeback_expiry(void)
{
	struct blk_queue_opts qo;
	struct stack_spec sp;
	struct wbx x = { 0 };

	home_stack_spec(&sp, &qo, 11, JBLOCKS);
	rig_opts_jbd2(&sp.jopts, true);
	sp.jopts.writeback_interval_ns = RT_NS_PER_S;
	sp.jopts.writeback_expire_ns = RT_NS_PER_S;
	T_EQ(rig_stack_run(&sp, wbx_main, &x), 0);
	T_EQ(x.rc, 0);
	for (unsigned i = 0; i < 3; i++)
		T_CHECK(x.d[i] > x.c[i]);
	/* the pass of 2 s took the first two */
	T_CHECK(x.d[0] >= x.c[0] + RT_NS_PER_S && x.d[0] < x.open + 2500 * RT_NS_PER_MS);
	T_CHECK(x.d[1] < x.c[1] + RT_NS_PER_S);
	/* the device clean after it: the third waited a whole expiry */
	T_CHECK(x.d[2] >= x.c[2] + RT_NS_PER_S && x.d[2] < x.open + 4500 * RT_NS_PER_MS);
}

/* ---- inherit over log space -------------------------------------------- */

#define LS_JBLOCKS 512u
#define LS_TXNS 40u
#define LS_BLOCKS 32u

struct ls {
	bool inherit;
	bool stop;
	/* out */
	int rc;
	uint64_t t_writes;            /* the rt writer's LS_TXNS sync writes took */
	unsigned q_rt, q_other;       /* data-queue write Qs: RT class, the rest */
	struct ujbd_lat_acct acc;
	struct ujbd_stats st;
	struct blk_queue *dq;
	struct ujbd *j;
	struct rig r;
};

static void ls_reader(void *arg)
{
	struct ls *l = arg;

	busy_reader(l->dq, &l->stop);
}

/* An rt:4 writer committing 32-block transactions one after the other
 * into a 512-block log: it soon waits for log space, which only the
 * checkpoint's home writes (behind the be:4 reader) free. */
static void ls_writer(void *arg)
{
	struct ls *l = arg;
	uint64_t t0 = rt_now_ns();

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4));
	ujbd_lat_attach(&l->acc);
	for (unsigned i = 0; i < LS_TXNS && !l->rc; i++)
		l->rc = rig_write(l->j, 16 + (uint64_t)(i % 20) * LS_BLOCKS, LS_BLOCKS, i + 1, true,
				  NULL);
	ujbd_lat_attach(NULL);
	l->t_writes = rt_now_ns() - t0;
}

static int ls_main(struct stack *st, void *arg)
{
	struct ls *l = arg;
	rt_thread *w, *rd;

	rig_of_stack(&l->r, st);
	l->j = l->r.j;
	l->dq = stack_queue(st, 1);
	rt_thread_create(&rd, "reader", ls_reader, l);
	rt_sleep_ns(20 * RT_NS_PER_MS); /* the reader owns the disk */
	rt_thread_create(&w, "writer", ls_writer, l);
	rt_thread_join(w);
	__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
	rt_thread_join(rd);
	if (!l->rc)
		l->rc = ujbd_stats(l->j, &l->st);
	size_t n = blk_trace_count(l->dq);
	struct blk_trace_event *ev = calloc(n ? n : 1, sizeof(*ev));
	n = blk_trace_events(l->dq, 0, ev, n);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].action != 'Q' || ev[i].rwbs[0] != 'W')
			continue;
		if (RT_IOPRIO_CLASS(ev[i].ioprio) == RT_IOPRIO_CLASS_RT)
			l->q_rt++;
		else
			l->q_other++;
	}
	free(ev);
	return 0;
}

static struct ls *ls_run(bool inherit)
{
	struct ls *l = calloc(1, sizeof(*l));
	struct blk_queue_opts qo;
	struct stack_spec sp;

	l->inherit = inherit;
	home_stack_spec(&sp, &qo, 9, LS_JBLOCKS);
	sp.queues[1].elevator = "cfq";
	rig_opts_jbd2(&sp.jopts, true);
	sp.jopts.commit_ioprio = inherit ? UJBD_IOPRIO_INHERIT : RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	int rc = rig_stack_run(&sp, ls_main, l);
	if (rc && !l->rc)
		l->rc = rc;
	return l;
}

/* inherit over log space: the rt:4 writer's waits for log space make the
 * checkpoint's home writes go at rt:4 (and raise those queued), so it
 * waits less for space than under a fixed be:4, where every home write
 * queues behind the reader. */
static void t_inherit_log_space(void)
{
	struct ls *i = ls_run(true), *f = ls_run(false);

	T_EQ(i->rc, 0);
	T_EQ(f->rc, 0);
	/* both waited for log space */
	T_CHECK(i->acc.count[UJBD_LAT_WAIT_LOG_SPACE] > 0);
	T_CHECK(f->acc.count[UJBD_LAT_WAIT_LOG_SPACE] > 0);
	/* home writes at RT only under inherit */
	T_CHECK(i->q_rt > 0);
	T_EQ(f->q_rt, 0);
	T_CHECK(f->q_other > 0);
	/* and the rt writer waited less for space, and was done sooner */
	T_CHECK(i->acc.sum_ns[UJBD_LAT_WAIT_LOG_SPACE] < f->acc.sum_ns[UJBD_LAT_WAIT_LOG_SPACE]);
	T_CHECK(i->t_writes < f->t_writes);
	free(i);
	free(f);
}

static void t_under_commit(void)
{
	struct uc *c = uc_run(UJBD_UNDER_COMMIT_COPY), *w = uc_run(UJBD_UNDER_COMMIT_WAIT_IO);
	uint8_t *want = malloc(BS);

	T_EQ(c->rc, 0);
	T_EQ(w->rc, 0);
	/* the same timeline up to the access: the log write was in flight */
	T_EQ_U64(c->t_access, w->t_access);
	T_CHECK(c->c_first > c->t_access);
	T_CHECK(c->d_first > 0 && c->d_first <= c->t_access);
	/* copy: no wait at all (virtual time does not move) */
	T_EQ_U64(c->t_done, c->t_access);
	T_EQ_U64(c->acc.count[UJBD_LAT_WAIT_SHADOW], 0);
	T_EQ_U64(c->st.lat[UJBD_LAT_WAIT_SHADOW].count, 0);
	/* wait-io: until the log write completed, accounted by cause, in the
	 * journal and in the thread's accumulator */
	T_CHECK(w->t_done >= w->c_first);
	T_CHECK(w->t_done - w->t_access >= w->c_first - w->t_access);
	/* it came 300 us after the write was issued: it waited the rest of
	 * that write's latency (D to C), a few ms on this disk */
	T_CHECK(w->t_done - w->t_access + 300 * RT_NS_PER_US >= w->c_first - w->d_first);
	T_CHECK(w->c_first - w->d_first > 1 * RT_NS_PER_MS);
	T_EQ_U64(w->st.lat[UJBD_LAT_WAIT_SHADOW].count, 1);
	T_EQ_U64(w->acc.count[UJBD_LAT_WAIT_SHADOW], 1);
	T_EQ_U64(w->acc.sum_ns[UJBD_LAT_WAIT_SHADOW], w->t_done - w->t_access);
	T_EQ_U64(w->acc.max_ns[UJBD_LAT_WAIT_SHADOW], w->st.lat[UJBD_LAT_WAIT_SHADOW].max_ns);
	/* both: the sync stop waited for its commit, seen by the thread */
	T_EQ_U64(c->acc.count[UJBD_LAT_WAIT_COMMIT], 1);
	T_EQ_U64(w->acc.count[UJBD_LAT_WAIT_COMMIT], 1);
	/* recovered contents: identical, the last committed generation */
	T_CHECK(memcmp(c->data, w->data, sizeof(c->data)) == 0);
	rig_fill(want, BS, 10, 3);
	T_CHECK(memcmp(w->data[0], want, BS) == 0);
	rig_fill(want, BS, 11, 2);
	T_CHECK(memcmp(w->data[1], want, BS) == 0);
	free(want);
	free(c);
	free(w);
}

static void t_names(void)
{
	enum ujbd_under_commit p;

	T_STREQ(ujbd_under_commit_name(UJBD_UNDER_COMMIT_COPY), "copy");
	T_STREQ(ujbd_under_commit_name(UJBD_UNDER_COMMIT_WAIT_IO), "wait-io");
	T_STREQ(ujbd_under_commit_name(UJBD_UNDER_COMMIT_WAIT_LOOP), "wait-loop");
	T_EQ(ujbd_under_commit_parse("wait-loop", &p), 0);
	T_EQ(p, UJBD_UNDER_COMMIT_WAIT_LOOP);
	T_CHECK(ujbd_under_commit_name((enum ujbd_under_commit)7) == NULL);
	T_EQ(ujbd_under_commit_parse("wait-io", &p), 0);
	T_EQ(p, UJBD_UNDER_COMMIT_WAIT_IO);
	T_EQ(ujbd_under_commit_parse("copy", &p), 0);
	T_EQ(p, UJBD_UNDER_COMMIT_COPY);
	T_EQ(ujbd_under_commit_parse("shadow", &p), -EINVAL);
	T_EQ(ujbd_under_commit_parse(NULL, &p), -EINVAL);
	struct ujbd_opts o;
	ujbd_opts_default(&o);
	T_EQ(o.under_commit, UJBD_UNDER_COMMIT_COPY);
}

/* ---- inherit ------------------------------------------------------------- */

/* How the rt thread waits on the commit. */
enum inh_mode {
	INH_FSYNC,   /* ujbd_wait_tid, once the log writes are queued */
	INH_SHADOW,  /* wait-io: write access to a buffer being logged */
	INH_LOCKED,  /* a handle start while the transaction is locked */
};

struct inh {
	bool inherit;
	enum inh_mode mode;
	uint16_t q_prio_first;        /* the first commit's first log write's Q prio */
	/* out */
	int rc, rpid;
	bool stop;
	struct blk_queue *jq;
	struct ujbd *j;
	ujbd_tid_t tid;
	uint64_t t_wait, t_waited;    /* the rt waiter's fsync */
	struct ujbd_lat_acct acc;
	struct ujbd_stats st;
	unsigned kj_d, kj_d_rt;       /* kjournald's log-write D events, RT ones */
	uint64_t rt_before, rt_after; /* ... of the first commit: before/after the wait */
	uint16_t last_prio;           /* the last commit's log writes' Q prio */
	uint64_t first_end_ns;
	uint64_t t0_ns;               /* the first commit was asked for */
};

/* A be:4 reader keeping the disk busy with far-apart sync reads. */
static void inh_reader(void *arg)
{
	struct inh *s = arg;
	uint8_t *buf = malloc(BS);
	struct blk_bio b;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	s->rpid = rt_self_pid();
	for (unsigned i = 0; !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && i < 4000; i++) {
		memset(&b, 0, sizeof(b));
		b.b_op = BLK_OP_READ;
		b.b_sector = (16ull << 20) / 512 + (uint64_t)((i * 2654435761u) % 1500000u) * 8;
		b.b_nr_sectors = BS / 512;
		b.b_buf = buf;
		if (blk_submit_wait(s->jq, &b)) {
			s->rc = -EIO;
			break;
		}
	}
	free(buf);
}

/* wait-io: write access to block 100, which the commit is logging. */
static int inh_access(struct inh *s)
{
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	int rc = ujbd_start(s->j, 1, &h);

	if (rc)
		return rc;
	rc = ujbd_get_write_access(h, 100, &b);
	if (!rc) {
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	int st = ujbd_stop(h);
	return rc ? rc : st;
}

/* A handle start while the transaction is locked (its commit waits for
 * the main thread's open handle). */
static int inh_start(struct inh *s)
{
	struct ujbd_handle *h;
	int rc = ujbd_start(s->j, 1, &h);

	return rc ? rc : ujbd_stop(h);
}

/* The rt:4 thread, arriving once the commit's log writes are queued (or,
 * INH_LOCKED, while it is locked). */
static void inh_waiter(void *arg)
{
	struct inh *s = arg;
	int rc;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4));
	rt_sleep_ns(3 * RT_NS_PER_MS);
	ujbd_lat_attach(&s->acc);
	s->t_wait = rt_now_ns();
	rc = s->mode == INH_SHADOW ? inh_access(s)
	     : s->mode == INH_LOCKED ? inh_start(s) : ujbd_wait_tid(s->j, s->tid);
	s->t_waited = rt_now_ns() - s->t_wait;
	ujbd_lat_attach(NULL);
	if (rc && !s->rc)
		s->rc = rc;
}

/* The first commit of INH_LOCKED: its transaction is held locked by an
 * open handle of this (be:7) thread while the rt thread starts. */
static int inh_locked_commit(struct inh *s, rt_thread **wt)
{
	struct ujbd_handle *h;
	int rc = rig_write(s->j, 100, 32, 2, false, &s->tid);

	if (!rc)
		rc = ujbd_start(s->j, 1, &h);
	if (rc)
		return rc;
	rc = ujbd_commit_tid(s->j, s->tid);
	rt_thread_create(wt, "rtsync", inh_waiter, s);
	rt_sleep_ns(6 * RT_NS_PER_MS); /* the rt start waits meanwhile */
	int st = ujbd_stop(h);
	return rc ? rc : st;
}

static void inh_trace(struct inh *s)
{
	size_t n = blk_trace_count(s->jq);
	struct blk_trace_event *ev = calloc(n, sizeof(*ev));

	n = blk_trace_events(s->jq, 0, ev, n);
	for (size_t i = 0; i < n; i++) {
		if (!log_write(&ev[i])) /* only commits write the log area */
			continue;
		bool rt = RT_IOPRIO_CLASS(ev[i].ioprio) == RT_IOPRIO_CLASS_RT;
		if (ev[i].action == 'D' && ev[i].time_ns < s->first_end_ns) {
			s->kj_d++;
			s->kj_d_rt += rt;
			if (rt && ev[i].time_ns < s->t_wait)
				s->rt_before++;
			if (rt && ev[i].time_ns >= s->t_wait)
				s->rt_after++;
		}
		if (ev[i].action == 'Q' && ev[i].time_ns >= s->first_end_ns)
			s->last_prio = ev[i].ioprio;
		if (ev[i].action == 'Q' && ev[i].time_ns > s->t0_ns && !s->q_prio_first)
			s->q_prio_first = ev[i].ioprio;
	}
	free(ev);
}

static void inh_main(void *arg)
{
	struct inh *s = arg;
	struct dev_hdd_params hp;
	struct blk_queue_opts qo;
	struct blk_queue *dq = NULL;
	struct ujbd_opts o;
	struct dev *d;
	struct rig r;
	rt_thread *rd, *wt;
	ujbd_tid_t tid2;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, 7));
	dev_hdd_defaults(&hp);
	hp.size = 8ull << 30;
	hp.cache_bytes = 0;
	if ((s->rc = dev_sim_hdd_new(&hp, &d)) ||
	    (s->rc = rig_devs(&r, BS, JBLOCKS, DBLOCKS, d, NULL)))
		return;
	blk_queue_opts_default(&qo);
	qo.elevator = "cfq";
	qo.trace = true;
	qo.trace_max_events = MAXEV;
	if ((s->rc = blk_queue_new(r.jd, &qo, &s->jq)) || (s->rc = blk_queue_new(r.dd, NULL, &dq)))
		goto out;
	rig_opts_jbd2(&o, true); /* kjournald commits while the rt thread waits */
	o.journal_queue = s->jq;
	o.data_queue = dq;
	o.commit_ioprio = s->inherit ? UJBD_IOPRIO_INHERIT : RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	o.journal_meta = false; /* META would preempt the reader by itself */
	o.under_commit = s->mode == INH_SHADOW ? UJBD_UNDER_COMMIT_WAIT_IO : UJBD_UNDER_COMMIT_COPY;
	if ((s->rc = rig_open(&r, &o)))
		goto out;
	s->j = r.j;
	if ((s->rc = rig_write(r.j, 100, 8, 1, true, NULL))) /* log not empty */
		goto out;
	rt_thread_create(&rd, "reader", inh_reader, s);
	rt_sleep_ns(20 * RT_NS_PER_MS); /* the reader owns the disk */
	s->t0_ns = rt_now_ns();
	if (s->mode == INH_LOCKED) {
		s->rc = inh_locked_commit(s, &wt);
		rt_thread_join(wt);
		if (!s->rc)
			s->rc = ujbd_wait_tid(r.j, s->tid);
	} else {
		if ((s->rc = rig_write(r.j, 100, 32, 2, false, &s->tid)) ||
		    (s->rc = ujbd_commit_tid(r.j, s->tid)))
			goto stop;
		rt_thread_create(&wt, "rtsync", inh_waiter, s);
		rt_thread_join(wt);
		if (!s->rc && s->mode == INH_SHADOW)
			s->rc = ujbd_wait_tid(r.j, s->tid);
	}
	s->first_end_ns = rt_now_ns();
	/* the next commit: only this be:7 thread waits for it */
	if (!s->rc && !(s->rc = rig_write(r.j, 200, 8, 3, false, &tid2)) &&
	    !(s->rc = ujbd_commit_tid(r.j, tid2)))
		s->rc = ujbd_wait_tid(r.j, tid2);
	ujbd_stats(r.j, &s->st);
stop:
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	rt_thread_join(rd);
	ujbd_close_hard(r.j);
	r.j = NULL;
	inh_trace(s);
out:
	if (r.j)
		ujbd_close_hard(r.j);
	r.j = NULL;
	if (s->jq)
		blk_queue_free(s->jq);
	if (dq)
		blk_queue_free(dq);
	rig_free(&r);
}

static struct inh *inh_run_mode(bool inherit, enum inh_mode mode)
{
	struct inh *s = calloc(1, sizeof(*s));

	s->inherit = inherit;
	s->mode = mode;
	int rc = rig_sim_run(3, inh_main, s);
	if (rc && !s->rc)
		s->rc = rc;
	return s;
}

static struct inh *inh_run(bool inherit)
{
	return inh_run_mode(inherit, INH_FSYNC);
}

static void t_inherit(void)
{
	struct inh *f = inh_run(false), *s = inh_run(true);
	const uint16_t be4 = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);

	T_EQ(f->rc, 0);
	T_EQ(s->rc, 0);
	/* fixed be:4: nothing raised, the fsync waits out the reader */
	T_EQ_U64(f->st.inherit_boosts, 0);
	T_EQ_U64(f->st.boosted_rqs, 0);
	T_EQ(f->kj_d_rt, 0);
	/* inherit: the rt waiter raised the commit once; the log writes
	 * already queued moved to RT (their D events say rt), none of them
	 * had gone out as RT before the wait */
	T_EQ_U64(s->st.inherit_boosts, 1);
	T_CHECK(s->st.boosted_rqs >= 1);
	T_CHECK(s->st.boost_wait_before_ns_sum > 0);
	T_CHECK(s->st.boost_wait_after_ns_max > 0 || s->st.boost_wait_after_ns_sum == 0);
	T_EQ(s->rt_before, 0);
	T_CHECK(s->rt_after >= 1);
	T_CHECK(s->kj_d_rt >= s->st.boosted_rqs);
	/* ... and its fsync ended sooner than behind the be:4 reader */
	T_CHECK(s->t_waited < f->t_waited);
	/* the waiter's own accumulator: one commit wait, the one it timed */
	T_EQ_U64(s->acc.count[UJBD_LAT_WAIT_COMMIT], 1);
	T_EQ_U64(s->acc.sum_ns[UJBD_LAT_WAIT_COMMIT], s->t_waited);
	T_EQ_U64(s->acc.count[UJBD_LAT_WAIT_TRANSACTION], 0);
	/* the next commit, nobody at rt waiting: back at the floor */
	T_EQ(s->last_prio, be4);
	free(f);
	free(s);
}

/* wait-io and inherit: the write access to a buffer being logged raises
 * the commit as an fsync does. */
static void t_inherit_shadow(void)
{
	struct inh *f = inh_run_mode(false, INH_SHADOW), *s = inh_run_mode(true, INH_SHADOW);

	T_EQ(f->rc, 0);
	T_EQ(s->rc, 0);
	T_EQ_U64(f->acc.count[UJBD_LAT_WAIT_SHADOW], 1);
	T_EQ_U64(f->st.inherit_boosts, 0);
	T_EQ_U64(s->acc.count[UJBD_LAT_WAIT_SHADOW], 1);
	T_EQ_U64(s->acc.count[UJBD_LAT_WAIT_COMMIT], 0);
	T_EQ_U64(s->st.inherit_boosts, 1);
	T_CHECK(s->st.boosted_rqs >= 1);
	T_EQ(s->rt_before, 0);
	T_CHECK(s->rt_after >= 1);
	T_CHECK(s->t_waited < f->t_waited);
	free(f);
	free(s);
}

/* inherit: a handle start blocked by the locked transaction raises the
 * commit before its first log write (nothing queued to move yet). */
static void t_inherit_locked(void)
{
	struct inh *f = inh_run_mode(false, INH_LOCKED), *s = inh_run_mode(true, INH_LOCKED);
	const uint16_t rt4 = RT_IOPRIO(RT_IOPRIO_CLASS_RT, 4);

	T_EQ(f->rc, 0);
	T_EQ(s->rc, 0);
	T_EQ_U64(f->acc.count[UJBD_LAT_WAIT_TRANSACTION], 1);
	T_EQ_U64(s->acc.count[UJBD_LAT_WAIT_TRANSACTION], 1);
	T_EQ_U64(f->st.inherit_boosts, 0);
	T_EQ_U64(s->st.inherit_boosts, 1);
	T_EQ_U64(s->st.boosted_rqs, 0);
	T_EQ(f->q_prio_first, RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	T_EQ(s->q_prio_first, rt4);
	T_EQ(s->last_prio, RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	free(f);
	free(s);
}

static void t_deterministic(void)
{
	struct inh *a = inh_run(true), *b = inh_run(true);

	T_EQ(a->rc, 0);
	T_EQ(b->rc, 0);
	T_EQ_U64(a->t_waited, b->t_waited);
	T_EQ_U64(a->st.boosted_rqs, b->st.boosted_rqs);
	T_EQ_U64(a->st.boost_wait_after_ns_sum, b->st.boost_wait_after_ns_sum);
	free(a);
	free(b);
}

/* ---- the real world: wait-io and inherit under contention ---------------- */

struct rw {
	struct ujbd *j;
	rt_mutex *shared_lock;        /* writers of block 50 take turns (the
				       * caller serialises a buffer's bytes) */
	unsigned id;
	uint32_t gen[8];
	int rc;
	struct ujbd_lat_acct acc;
};

/* Each thread rewrites its own 8 blocks and a block all share (50): the
 * shared one is often being logged when another thread wants it. */
static void rw_worker(void *arg)
{
	struct rw *w = arg;

	rt_ioprio_set(RT_IOPRIO(RT_IOPRIO_CLASS_BE, w->id % 2 ? 7 : 0));
	ujbd_lat_attach(&w->acc);
	for (uint32_t k = 1; k <= 300 && !w->rc; k++) {
		uint64_t blk = 200 + w->id * 8 + k % 8;
		w->rc = rig_write(w->j, blk, 1, k, k % 3 == 0, NULL);
		w->gen[k % 8] = k;
		if (w->rc)
			break;
		rt_mutex_lock(w->shared_lock);
		w->rc = rig_write(w->j, 50, 1, k, k % 5 == 0, NULL);
		rt_mutex_unlock(w->shared_lock);
	}
	ujbd_lat_attach(NULL);
}

static void t_real_contention(void)
{
	struct blk_queue_opts qo;
	struct ujbd_stats st;
	struct ujbd_opts o;
	struct rw w[4];
	rt_thread *t[4];
	struct rig r;
	uint64_t mine = 0;
	rt_mutex lock;

	rig_opts(&o, true);
	blk_queue_opts_default(&qo);
	qo.elevator = "cfq";
	o.blk_opts = &qo;
	o.under_commit = UJBD_UNDER_COMMIT_WAIT_IO;
	o.commit_ioprio = UJBD_IOPRIO_INHERIT;
	o.commit_interval_ns = 2 * RT_NS_PER_MS;
	T_EQ(rig_devs(&r, BS, 128, DBLOCKS, NULL, NULL), 0); /* small: log space waits */
	T_EQ(rig_open(&r, &o), 0);
	rt_mutex_init(&lock, "shared");
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct rw){ .j = r.j, .id = i, .shared_lock = &lock };
		T_EQ(rt_thread_create(&t[i], "rw", rw_worker, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		rt_thread_join(t[i]);
		T_EQ(w[i].rc, 0);
		mine += w[i].acc.count[UJBD_LAT_WAIT_SHADOW];
	}
	rt_mutex_release(&lock);
	T_EQ(ujbd_stats(r.j, &st), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	for (unsigned i = 0; i < 4; i++)
		for (unsigned b = 0; b < 8; b++)
			T_CHECK(rig_has(&r, 200 + i * 8 + b, w[i].gen[b]));
	/* the threads' accumulators hold exactly the journal's shadow waits */
	T_EQ_U64(mine, st.lat[UJBD_LAT_WAIT_SHADOW].count);
	T_CHECK(st.ts_tid > 0);
	rig_free(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_names);
	T_RUN(t_under_commit);
	T_RUN(t_wait_loop);
	T_RUN(t_buffer_lock);
	T_RUN(t_inherit_buffer_lock);
	T_RUN(t_writeback_expiry);
	T_RUN(t_inherit_log_space);
	T_RUN(t_inherit);
	T_RUN(t_inherit_shadow);
	T_RUN(t_inherit_locked);
	T_RUN(t_deterministic);
	T_RUN(t_real_contention);
	return t_done(argv[0]);
}

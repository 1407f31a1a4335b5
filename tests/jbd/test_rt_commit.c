/*
 * What a commit guarantees and how it issues its I/O:
 *   - revoke: a revoked block is not replayed after a hard close; a revoke
 *     cancelled by journaling the block again in the same transaction is;
 *   - frozen buffers: a handle of the next transaction modifying a buffer
 *     while it is being committed does not change what is committed;
 *   - ordered data: at every flush point of a recorded run, a recovered
 *     image that holds a transaction's metadata holds its data too;
 *   - the wake policies: `always` wakes the commit thread for nothing when
 *     a committed tid is asked for again, `needed` does not;
 *   - journal write flags and priority: META, SYNC only for waited commits
 *     (fsync-only policy), fixed ioprio, and inherit (highest waiter, floor
 *     be:4), read off the block layer's trace.
 */
#include "rt_rig.h"
#include <inttypes.h>

#include "ujbd/jbd_log.h"

#define BS 1024u

static void t_revoke(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 512, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 20, 3, 1, true, NULL), 0);   /* 20, 21, 22 */
	/* T2 frees 20; 21 is revoked and journaled again (cancel). */
	T_EQ(ujbd_start(r.j, 2, &h), 0);
	T_EQ(ujbd_revoke(h, 20), 0);
	T_EQ(ujbd_revoke(h, 21), 0);
	T_EQ(ujbd_get_write_access(h, 21, &b), 0);
	rig_fill(ujbd_buf_data(b), BS, 21, 2);
	T_EQ(ujbd_dirty_metadata(h, b), 0);
	ujbd_buf_put(b);
	/* A block this transaction journals: forget it, not revoke. */
	T_EQ(ujbd_revoke(h, 21), -EINVAL);
	ujbd_handle_set_sync(h, true);
	T_EQ(ujbd_stop(h), -EINVAL); /* the handle remembers its error */
	T_EQ(ujbd_sync(r.j), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	T_CHECK(rig_is_zero(&r, 20));       /* revoked: T1's copy not replayed */
	T_CHECK(rig_has(&r, 21, 2));    /* re-journaled after its revoke */
	T_CHECK(rig_has(&r, 22, 1));
	rig_free(&r);
}

/* A block another handle of the same transaction journaled is freed by a
 * revoke (as jbd2's revoke forgets it): neither copy is replayed. */
static void t_revoke_other_handle(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	ujbd_tid_t t1 = 0;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 512, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 50, 2, 1, true, NULL), 0);     /* 50, 51 committed */
	T_EQ(rig_write(r.j, 50, 2, 2, false, &t1), 0);    /* running: 50, 51 */
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_handle_tid(h), t1);
	T_EQ(ujbd_revoke(h, 50), 0);
	ujbd_handle_set_sync(h, true);
	T_EQ(ujbd_stop(h), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	T_CHECK(rig_is_zero(&r, 50));
	T_CHECK(rig_has(&r, 51, 2));
	rig_free(&r);
}

static void t_forget(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 512, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_get_write_access(h, 30, &b), 0);
	rig_fill(ujbd_buf_data(b), BS, 30, 5);
	T_EQ(ujbd_dirty_metadata(h, b), 0);
	T_EQ(ujbd_forget(h, b), 0);
	ujbd_buf_put(b);
	/* The credit came back. */
	T_EQ(ujbd_get_write_access(h, 31, &b), 0);
	rig_fill(ujbd_buf_data(b), BS, 31, 5);
	T_EQ(ujbd_dirty_metadata(h, b), 0);
	ujbd_buf_put(b);
	ujbd_handle_set_sync(h, true);
	T_EQ(ujbd_stop(h), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	T_CHECK(rig_is_zero(&r, 30));
	T_CHECK(rig_has(&r, 31, 5));
	rig_free(&r);
}

/* ---- frozen buffers (sim) ------------------------------------------------ */

struct frz {
	struct ujbd *j;
	ujbd_tid_t t1;
	volatile int flushing;
	int rc_a, rc_b;
	struct ujbd_stats st;
	bool live_is_new;
};

static void frz_hook(void *arg, const struct ujbd_trace_event *ev)
{
	struct frz *f = arg;

	if (ev->kind == UJBD_TR_COMMIT_FLUSHING && ev->tid == f->t1)
		f->flushing = 1;
}

static void frz_a(void *arg)
{
	struct frz *f = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	uint8_t d[BS];
	int rc = ujbd_start(f->j, 1, &h);

	if (rc) {
		f->rc_a = rc;
		return;
	}
	f->t1 = ujbd_handle_tid(h);
	rc = ujbd_get_write_access(h, 600, &b);
	if (!rc) {
		rig_fill(ujbd_buf_data(b), BS, 600, 1);
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	rig_fill(d, BS, 601, 1);
	if (!rc)
		rc = ujbd_write_data(h, 601, d); /* a data phase to wait in */
	ujbd_handle_set_sync(h, true);
	int s = ujbd_stop(h);
	f->rc_a = rc ? rc : s;
}

static void frz_b(void *arg)
{
	struct frz *f = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	uint8_t now[BS], want[BS];

	while (!f->flushing)
		rt_sleep_ns(RT_NS_PER_US);
	int rc = ujbd_start(f->j, 1, &h);
	if (!rc && (rc = ujbd_get_write_access(h, 600, &b)) == 0) {
		rig_fill(ujbd_buf_data(b), BS, 600, 2);
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	int s = rc == -EROFS ? 0 : ujbd_stop(h);
	f->rc_b = rc ? rc : s;
	rig_fill(want, BS, 600, 2);
	f->live_is_new = ujbd_read(f->j, 600, now) == 0 && memcmp(now, want, BS) == 0;
}

static int frz_main(struct stack *st, void *arg)
{
	int *code = arg;
	struct frz f = { 0 };
	struct rig r;
	rt_thread *ta, *tb;

	rig_of_stack(&r, st);
	f.j = r.j;
	ujbd_set_trace_hook(r.j, frz_hook, &f);
	rt_thread_create(&ta, "writer-a", frz_a, &f);
	rt_thread_create(&tb, "writer-b", frz_b, &f);
	rt_thread_join(ta);
	rt_thread_join(tb);
	ujbd_stats(r.j, &f.st);
	ujbd_set_trace_hook(r.j, NULL, NULL);
	/* Crash: T1 committed, T2 (B's change) not. */
	stack_journal_close(st, true);
	*code = f.rc_a || f.rc_b || !f.live_is_new || f.st.lat[UJBD_LAT_WAIT_FROZEN].count != 1
			? -1 : 0;
	if (*code)
		fprintf(stderr, "  a %d b %d live_new %d frozen %" PRIu64 "\n", f.rc_a, f.rc_b,
			f.live_is_new, f.st.lat[UJBD_LAT_WAIT_FROZEN].count);
	if (!*code && rig_recover(&r))
		*code = -2;
	if (!*code && !(rig_has(&r, 600, 1) && rig_has(&r, 601, 1)))
		*code = -3;
	return 0;
}

static void t_frozen(void)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct stack_spec sp;
		int code = -99;

		rig_stack_spec(&sp, seed, "hdd", 64ull << 20, BS, 512);
		T_EQ(rig_stack_run(&sp, frz_main, &code), 0);
		T_EQ(code, 0);
	}
}

/* ---- ordered data on a recorded device ----------------------------------- */

#define OJ 256u   /* journal blocks, at the start of the device */
#define ON 12u    /* transactions */

static void t_ordered_flush_points(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct dev *mem, *rec;
	size_t points[512], np;
	uint64_t devblocks = OJ + 64;
	uint8_t d[BS];

	T_EQ(dev_mem_new(devblocks * BS, 512, &mem), 0);
	T_EQ(dev_rec_new(mem, &rec), 0);
	T_EQ(rig_devs(&r, BS, OJ, devblocks, rec, rec), 0);
	rig_opts(&o, true);
	o.data_mode = UJBD_DATA_ORDERED;
	T_EQ(rig_open(&r, &o), 0);
	for (unsigned k = 1; k <= ON; k++) {
		struct ujbd_handle *h;
		struct ujbd_buf *b;
		T_EQ(ujbd_start(r.j, 1, &h), 0);
		rig_fill(d, BS, OJ + 32 + k, k);
		T_EQ(ujbd_write_data(h, OJ + 32 + k, d), 0);
		T_EQ(ujbd_get_write_access(h, OJ + k, &b), 0);
		rig_fill(ujbd_buf_data(b), BS, OJ + k, k);
		T_EQ(ujbd_dirty_metadata(h, b), 0);
		ujbd_buf_put(b);
		ujbd_handle_set_sync(h, k % 2 == 0);
		T_EQ(ujbd_stop(h), 0);
	}
	T_EQ(ujbd_sync(r.j), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	np = dev_rec_flush_points(rec, points, 512);
	T_CHECK(np > ON / 2);
	unsigned committed_max = 0;
	for (size_t i = 0; i < np; i++) {
		struct rig img;
		struct dev *m2;
		struct dev_crash_policy pol = { .mode = DEV_CRASH_FLUSHED };
		T_EQ(dev_mem_new(devblocks * BS, 512, &m2), 0);
		T_EQ(dev_rec_image(rec, points[i] + 1, &pol, m2), 0);
		T_EQ(rig_devs(&img, BS, OJ, devblocks, m2, m2), 0);
		int rc = rig_recover(&img);
		/* Before the format's superblock is durable there is no journal. */
		if (rc == 0) {
			for (unsigned k = 1; k <= ON; k++) {
				if (!rig_has(&img, OJ + k, k))
					continue;
				if (k > committed_max)
					committed_max = k;
				if (!rig_has(&img, OJ + 32 + k, k)) {
					rig_free(&img);
					T_FAILF("flush point %zu: transaction %u without its data", i, k);
					return;
				}
			}
		}
		rig_free(&img);
	}
	T_EQ(committed_max, ON);
	rig_free(&r);
}

/* ---- wake policy (sim) ------------------------------------------------------ */

struct wk {
	enum ujbd_wake_policy wake;
	uint64_t wakeup_cpu_ns;   /* option */
	struct ujbd_stats st;
	uint64_t loop_ns;         /* virtual time of the 5 fsyncs */
	int rc;
};

static int wk_main(struct stack *st, void *arg)
{
	struct wk *k = arg;
	struct ujbd *j = stack_journal(st);
	ujbd_tid_t tid = 0;

	k->rc = rig_write(j, 600, 1, 1, true, &tid);
	k->loop_ns = rt_now_ns();
	/* fsync of a file whose transaction is already committed, 5 times. */
	for (int i = 0; i < 5 && !k->rc; i++) {
		rt_sleep_ns(RT_NS_PER_MS);
		k->rc = ujbd_commit_tid(j, tid);
		if (!k->rc)
			k->rc = ujbd_wait_tid(j, tid);
		rt_sleep_ns(RT_NS_PER_MS);
	}
	k->loop_ns = rt_now_ns() - k->loop_ns;
	ujbd_stats(j, &k->st);
	int rc = stack_journal_close(st, false);
	if (!k->rc)
		k->rc = rc;
	return 0;
}

static int wk_run(struct wk *k)
{
	struct stack_spec sp;

	rig_stack_spec(&sp, 3, "ssd", 16ull << 20, BS, 512);
	sp.jopts.wake = k->wake;
	sp.jopts.wakeup_cpu_ns = k->wakeup_cpu_ns;
	return rig_stack_run(&sp, wk_main, k);
}

static void t_wake_policy(void)
{
	struct wk n = { .wake = UJBD_WAKE_NEEDED }, a = { .wake = UJBD_WAKE_ALWAYS };

	T_EQ(wk_run(&n), 0);
	T_EQ(n.rc, 0);
	T_EQ(wk_run(&a), 0);
	T_EQ(a.rc, 0);
	T_EQ_U64(n.st.useless_wakeups, 0);
	T_EQ_U64(a.st.useless_wakeups, 5);
	T_EQ_U64(a.st.wakeups, n.st.wakeups + 5);
}

/* wakeup_cpu_ns: each of the 5 useless wakeups charges its CPU time to the
 * fsyncing thread (under j_state_lock), so the loop takes 5 x longer. */
static void t_wakeup_cost(void)
{
	struct wk a = { .wake = UJBD_WAKE_ALWAYS };
	struct wk c = { .wake = UJBD_WAKE_ALWAYS, .wakeup_cpu_ns = 2 * RT_NS_PER_MS };

	T_EQ(wk_run(&a), 0);
	T_EQ(a.rc, 0);
	T_EQ(wk_run(&c), 0);
	T_EQ(c.rc, 0);
	T_EQ_U64(c.st.useless_wakeups, 5);
	T_EQ(c.loop_ns >= a.loop_ns + 5 * 2 * RT_NS_PER_MS, true);
}

/* ---- journal I/O flags and priority (sim, traced) ------------------------- */

struct iop {
	uint16_t commit_prio;     /* option */
	uint16_t waiter_prio;     /* the fsync thread's, 0 = none set */
	bool meta;
	bool sync_commit;         /* waited for (else: committed by the timer) */
	enum ujbd_sync_policy sync_policy;
	/* out: over kjournald's journal writes */
	bool no_barrier;          /* option: barrier = false */
	unsigned writes, meta_writes, sync_writes, prio_ok;
	unsigned flushes;         /* requests of any thread with PREFLUSH, FUA or FLUSH */
	uint16_t seen_prio;
	int rc;
};

struct iop_box {
	struct iop p;
	struct ujbd *j;
};

static void iop_writer(void *arg)
{
	struct iop_box *box = arg;
	struct iop *p = &box->p;
	struct ujbd *j = box->j;

	if (p->waiter_prio)
		rt_ioprio_set(p->waiter_prio);
	p->rc = rig_write(j, 700, 4, 1, p->sync_commit, NULL);
	if (!p->rc && !p->sync_commit)
		rt_sleep_ns(6 * RT_NS_PER_S); /* let the commit timer fire */
}

static int iop_main(struct stack *st, void *arg)
{
	struct iop_box *box = arg;
	struct iop *p = &box->p;
	struct blk_queue *q = stack_queue(st, 0);
	rt_thread *t;

	box->j = stack_journal(st);
	rt_thread_create(&t, "fsyncer", iop_writer, box);
	rt_thread_join(t);
	stack_journal_close(st, true);
	size_t n = blk_trace_count(q);
	struct blk_trace_event *ev = calloc(n, sizeof(*ev));
	n = blk_trace_events(q, 0, ev, n);
	for (size_t i = 0; i < n; i++) {
		p->flushes += ev[i].action == 'Q' && strchr(ev[i].rwbs, 'F') != NULL;
		/* Queue events of log writes (journal area, past the superblock). */
		if (ev[i].action != 'Q' || strcmp(ev[i].comm, "kjournald") || ev[i].rwbs[0] != 'W' ||
		    ev[i].sector == 0 || ev[i].sector >= 512ull * BS / 512)
			continue;
		p->writes++;
		p->meta_writes += strchr(ev[i].rwbs, 'M') != NULL;
		p->sync_writes += strchr(ev[i].rwbs, 'S') != NULL;
		p->seen_prio = ev[i].ioprio;
	}
	free(ev);
	return 0;
}

static int iop_run(struct iop *p)
{
	struct iop_box box = { .p = *p };
	struct stack_spec sp;

	rig_stack_spec(&sp, 11, "ssd", 16ull << 20, BS, 512);
	rig_opts_jbd2(&sp.jopts, true); /* kjournald's log writes, several */
	sp.queues[0] = (struct stack_queue_spec){ .elevator = "noop", .trace = true };
	sp.jopts.commit_ioprio = p->commit_prio;
	sp.jopts.journal_meta = p->meta;
	sp.jopts.journal_sync = p->sync_policy;
	sp.jopts.barrier = !p->no_barrier;
	int rc = rig_stack_run(&sp, iop_main, &box);

	*p = box.p;
	return rc ? rc : p->rc;
}

/* barrier=false (ext3's barrier=0): a waited commit's log goes out, and no
 * request of anyone asks the device for a flush or FUA; with barriers the
 * same commit does. */
static void t_barrier(void)
{
	struct iop p = { .commit_prio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3), .meta = true,
			 .sync_commit = true };

	T_EQ(iop_run(&p), 0);
	T_CHECK(p.writes >= 2);
	T_CHECK(p.flushes >= 1);
	p = (struct iop){ .commit_prio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3), .meta = true,
			  .sync_commit = true, .no_barrier = true };
	T_EQ(iop_run(&p), 0);
	T_CHECK(p.writes >= 2);
	T_EQ(p.flushes, 0);
}

static void t_io_policy(void)
{
	const uint16_t be3 = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3), be4 = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	const uint16_t rt2 = RT_IOPRIO(RT_IOPRIO_CLASS_RT, 2), idle = RT_IOPRIO(RT_IOPRIO_CLASS_IDLE, 0);
	struct iop p;

	/* Default: META, SYNC for a waited commit, be:3. */
	p = (struct iop){ .commit_prio = be3, .meta = true, .sync_commit = true };
	T_EQ(iop_run(&p), 0);
	T_CHECK(p.writes >= 2);
	T_EQ(p.meta_writes, p.writes);
	T_EQ(p.sync_writes, p.writes);
	T_EQ(p.seen_prio, be3);
	/* No META; a timer commit nobody waits for is not SYNC. */
	p = (struct iop){ .commit_prio = be3, .meta = false, .sync_commit = false };
	T_EQ(iop_run(&p), 0);
	T_CHECK(p.writes >= 2);
	T_EQ(p.meta_writes, 0);
	T_EQ(p.sync_writes, 0);
	/* SYNC always, even for the timer's commit; or never. */
	p = (struct iop){ .commit_prio = be3, .meta = true, .sync_policy = UJBD_SYNC_ALL };
	T_EQ(iop_run(&p), 0);
	T_EQ(p.sync_writes, p.writes);
	p = (struct iop){ .commit_prio = be3, .meta = true, .sync_commit = true,
			  .sync_policy = UJBD_SYNC_OFF };
	T_EQ(iop_run(&p), 0);
	T_CHECK(p.writes >= 2);
	T_EQ(p.sync_writes, 0);
	/* Inherit: an rt:2 waiter lifts the commit to rt:2 ... */
	p = (struct iop){ .commit_prio = UJBD_IOPRIO_INHERIT, .waiter_prio = rt2, .meta = true,
			  .sync_commit = true };
	T_EQ(iop_run(&p), 0);
	T_EQ(p.seen_prio, rt2);
	/* ... an idle waiter gets the floor, be:4. */
	p = (struct iop){ .commit_prio = UJBD_IOPRIO_INHERIT, .waiter_prio = idle, .meta = true,
			  .sync_commit = true };
	T_EQ(iop_run(&p), 0);
	T_EQ(p.seen_prio, be4);
}

/* ---- the commit timer, and full transactions (sim) ------------------------ */

struct tmr {
	int rc;
	uint64_t waited_ns;
	struct ujbd_stats after_timer, after_full;
	int extend_rc;
};

static int tmr_main(struct stack *st, void *arg)
{
	struct tmr *k = arg;
	struct rig r;
	struct ujbd_handle *h;
	ujbd_tid_t tid = 0;

	rig_of_stack(&r, st);
	/* Nobody asks: the timer commits it. */
	k->rc = rig_write(r.j, 600, 1, 1, false, &tid);
	uint64_t t0 = rt_now_ns();
	if (!k->rc)
		k->rc = ujbd_wait_tid(r.j, tid);
	k->waited_ns = rt_now_ns() - t0;
	ujbd_stats(r.j, &k->after_timer);
	/* Full transactions are committed at once (as requested commits). */
	for (unsigned i = 0; i < 5 && !k->rc; i++)
		k->rc = rig_write(r.j, 700 + i * 4, 4, 1, false, NULL);
	rt_sleep_ns(10 * RT_NS_PER_MS);
	ujbd_stats(r.j, &k->after_full);
	/* A handle cannot extend past the transaction's room. */
	if (!k->rc && !(k->rc = ujbd_start(r.j, 4, &h))) {
		k->extend_rc = ujbd_extend(h, 3);
		k->rc = ujbd_stop(h);
	}
	int crc = stack_journal_close(st, k->rc != 0);

	if (!k->rc)
		k->rc = crc;
	if (!k->rc && !(rig_has(&r, 600, 1) && rig_has(&r, 719, 1)))
		k->rc = -1;
	return 0;
}

static void t_timer_and_full(void)
{
	struct tmr k = { 0 };

	struct stack_spec sp;

	rig_stack_spec(&sp, 4, "ssd", 16ull << 20, BS, 512);
	rig_opts_jbd2(&sp.jopts, true); /* the wait leaves the commit to the timer */
	sp.jopts.commit_interval_ns = 100 * RT_NS_PER_MS;
	sp.jopts.max_transaction_blocks = 8;
	T_EQ(rig_stack_run(&sp, tmr_main, &k), 0);
	T_EQ(k.rc, 0);
	T_CHECK(k.waited_ns <= 100 * RT_NS_PER_MS + 10 * RT_NS_PER_MS);
	T_CHECK(k.waited_ns >= 90 * RT_NS_PER_MS);
	T_EQ_U64(k.after_timer.ts_tid, 1);
	T_EQ_U64(k.after_timer.ts_requested, 0);
	T_CHECK(k.after_full.ts_tid >= 3); /* 20 blocks in 8-block transactions */
	T_CHECK(k.after_full.ts_requested >= 2);
	T_EQ(k.extend_rc, -EAGAIN);
}

/* ---- trace events and the info-file numbers of one commit -------------- */

struct trc {
	enum ujbd_trace_kind k[64];
	ujbd_tid_t tid[64];
	unsigned n;
};

static void trc_hook(void *arg, const struct ujbd_trace_event *ev)
{
	struct trc *t = arg;

	if (t->n < 64) {
		t->k[t->n] = ev->kind;
		t->tid[t->n++] = ev->tid;
	}
}

static void t_trace_and_stats(void)
{
	static const enum ujbd_trace_kind want[] = {
		UJBD_TR_HANDLE_START, UJBD_TR_HANDLE_STATS, UJBD_TR_START_COMMIT,
		UJBD_TR_COMMIT_LOCKING, UJBD_TR_COMMIT_FLUSHING, UJBD_TR_COMMIT_LOGGING,
		UJBD_TR_RUN_STATS, UJBD_TR_END_COMMIT,
	};
	struct rig r;
	struct ujbd_opts o;
	struct trc t = { .n = 0 };
	struct ujbd_stats st;
	ujbd_tid_t tid = 0;
	unsigned w = 0;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 512, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	ujbd_set_trace_hook(r.j, trc_hook, &t);
	T_EQ(rig_write(r.j, 60, 3, 1, true, &tid), 0);
	ujbd_set_trace_hook(r.j, NULL, NULL);
	/* The phases in order (other events may come between). */
	for (unsigned i = 0; i < t.n && w < sizeof(want) / sizeof(want[0]); i++)
		if (t.k[i] == want[w]) {
			T_EQ(t.tid[i], tid);
			w++;
		}
	T_EQ(w, sizeof(want) / sizeof(want[0]));
	T_EQ(ujbd_stats(r.j, &st), 0);
	T_EQ_U64(st.ts_tid, 1);
	T_EQ_U64(st.ts_requested, 1);
	T_EQ_U64(st.rs_handle_count, 1);
	T_EQ_U64(st.rs_blocks, 3);
	T_EQ_U64(st.rs_blocks_logged, 5); /* + descriptor + commit block */
	T_EQ_U64(st.fsync_latency.count, 1);
	T_CHECK(st.average_commit_time_ns > 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_revoke);
	T_RUN(t_revoke_other_handle);
	T_RUN(t_forget);
	T_RUN(t_frozen);
	T_RUN(t_ordered_flush_points);
	T_RUN(t_wake_policy);
	T_RUN(t_wakeup_cost);
	T_RUN(t_io_policy);
	T_RUN(t_barrier);
	T_RUN(t_trace_and_stats);
	T_RUN(t_timer_and_full);
	return t_done(argv[0]);
}

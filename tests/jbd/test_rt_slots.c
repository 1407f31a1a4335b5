/*
 * The handle path without the journal lock (src/jbd/slot.c): per-thread
 * slots, their credit pools and their memo of buffers.
 *   - real threads hammer handles on blocks of their own and on shared
 *     blocks while another thread forces commits and the small log wraps
 *     (checkpoints): every block ends with its last value, and every
 *     handle is counted in exactly one commit (rs_handle_count);
 *   - a buffer a slot handle attached, forgotten by a later handle of the
 *     same transaction, is not logged; used again, it is;
 *   - a buffer that joins the running transaction while the previous one
 *     commits (frozen, next in line) and is then dirtied by a later slot
 *     handle is logged with that handle's bytes (sim, across the phases
 *     of the commit);
 *   - many threads, more than a thread's slot table, and threads that exit
 *     and are replaced: slots are reused, and a thread with a slot per
 *     journal works on several journals.
 * Run under `make tsan` for the races.
 */
#include "rt_rig.h"
#include <inttypes.h>

#include "buf/buf.h"     /* t_forgotten_not_pinned looks at the cache */
#include "jbd/runtime.h"

#define BS 1024u
#define DBLOCKS 4096u

/* ---- real threads against forced commits ------------------------------- */

#define RW 3         /* writer threads */
#define OWN 8u       /* blocks of each writer */
#define SHARED 4u    /* blocks all writers touch */
#define ITERS 20000u

struct race {
	struct ujbd *j;
	rt_mutex lock;           /* the callers' lock of each shared block: */
	uint32_t shared_last[SHARED]; /* [lock] the last value written */
	bool done;               /* [lock] */
};

struct rwr {
	struct race *r;
	unsigned id;
	uint32_t own_last[OWN];
	uint64_t handles;
	int rc;
};

static uint64_t own_block(unsigned id, unsigned i)
{
	return 1000 + id * 100 + i;
}

static int touch(struct ujbd_handle *h, uint64_t block, uint32_t gen)
{
	struct ujbd_buf *b;
	int rc = ujbd_get_write_access(h, block, &b);

	if (rc)
		return rc;
	rig_fill(ujbd_buf_data(b), BS, block, gen);
	rc = ujbd_dirty_metadata(h, b);
	ujbd_buf_put(b);
	return rc;
}

static void race_writer(void *arg)
{
	struct rwr *w = arg;
	struct race *r = w->r;

	for (uint32_t k = 1; k <= ITERS && !w->rc; k++) {
		struct ujbd_handle *h;
		unsigned i = k % OWN, s = (k + w->id) % SHARED;
		int rc = ujbd_start(r->j, 2, &h);
		if (rc) {
			w->rc = rc;
			break;
		}
		w->handles++;
		rc = touch(h, own_block(w->id, i), k);
		if (!rc) {
			uint32_t gen = (uint32_t)(w->id + 1) << 24 | k;
			rt_mutex_lock(&r->lock);
			rc = touch(h, 10 + s, gen);
			if (!rc)
				r->shared_last[s] = gen;
			rt_mutex_unlock(&r->lock);
		}
		if (!rc)
			w->own_last[i] = k;
		int src = ujbd_stop(h);
		w->rc = rc ? rc : src;
	}
}

/* Has a checkpoint pass written buffers home yet? */
static bool race_checkpointed(struct ujbd *j)
{
	struct ujbd_stats st;

	return ujbd_stats(j, &st) == 0 && st.checkpoint_written > 0;
}

/* Commits asked for and waited, back to back, while the writers run, and
 * after them until the log has wrapped far enough for a checkpoint pass
 * to write buffers home (fast commits of few blocks, one FUA write each,
 * may leave it short of half full when the writers end). */
static void race_committer(void *arg)
{
	struct rwr *w = arg;
	struct race *r = w->r;

	for (uint32_t k = 1; !w->rc; k++) {
		ujbd_tid_t tid;
		rt_mutex_lock(&r->lock);
		bool done = r->done;
		rt_mutex_unlock(&r->lock);
		/* enough commits even if the writers were quick */
		if (done && k > 20 && (race_checkpointed(r->j) || k > 100000))
			break;
		w->rc = rig_write(r->j, 20, 1, k, false, &tid);
		w->handles++;
		if (!w->rc)
			w->rc = ujbd_commit_tid(r->j, tid);
		if (!w->rc)
			w->rc = ujbd_wait_tid(r->j, tid);
	}
}

static void t_real_race(void)
{
	struct rig rg;
	struct ujbd_opts o;
	struct race r = { 0 };
	struct rwr w[RW + 1];
	rt_thread *t[RW + 1];
	struct ujbd_stats st;
	uint64_t handles = 1;

	rig_opts(&o, true);
	/* 256 blocks of 1 KiB: the log wraps many times, so checkpoints run */
	T_EQ(rig_devs(&rg, BS, 256, DBLOCKS, NULL, NULL), 0);
	o.commit_interval_ns = RT_NS_PER_MS;
	T_EQ(rig_open(&rg, &o), 0);
	T_EQ(rt_mutex_init(&r.lock, "race"), 0);
	r.j = rg.j;
	for (unsigned i = 0; i <= RW; i++) {
		w[i] = (struct rwr){ .r = &r, .id = i };
		T_EQ(rt_thread_create(&t[i], i < RW ? "writer" : "committer",
				      i < RW ? race_writer : race_committer, &w[i]), 0);
	}
	for (unsigned i = 0; i < RW; i++)
		T_EQ(rt_thread_join(t[i]), 0);
	rt_mutex_lock(&r.lock);
	r.done = true;
	rt_mutex_unlock(&r.lock);
	T_EQ(rt_thread_join(t[RW]), 0);
	for (unsigned i = 0; i <= RW; i++) {
		T_EQ(w[i].rc, 0);
		handles += w[i].handles;
	}
	/* the last handle commits everything: each handle in one commit */
	T_EQ(rig_write(rg.j, 21, 1, 1, true, NULL), 0);
	T_EQ(ujbd_stats(rg.j, &st), 0);
	T_EQ(st.rs_handle_count, handles);
	T_CHECK(st.ts_tid > 10);
	T_CHECK(st.checkpoint_written > 0);
	T_EQ(ujbd_close(rg.j), 0);
	rg.j = NULL;
	for (unsigned i = 0; i < RW; i++)
		for (unsigned b = 0; b < OWN; b++)
			T_CHECK(rig_has(&rg, own_block(i, b), w[i].own_last[b]));
	for (unsigned s = 0; s < SHARED; s++)
		T_CHECK(rig_has(&rg, 10 + s, r.shared_last[s]));
	rt_mutex_release(&r.lock);
	rig_free(&rg);
}

/* ---- forget and use again ------------------------------------------------ */

static void t_forget_then_reuse(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 512, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	/* a slot handle attaches 40 and 41 (and its memo remembers them) */
	T_EQ(rig_write(r.j, 40, 2, 1, false, NULL), 0);
	/* a second handle of the same transaction: 40 through the memo, then
	 * forgotten along with 41 */
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_get_write_access(h, 40, &b), 0);
	T_EQ(ujbd_forget(h, b), 0);
	/* forgotten: dirtying it needs write access again */
	T_EQ(ujbd_dirty_metadata(h, b), -EINVAL);
	ujbd_buf_put(b);
	T_EQ(ujbd_get_write_access(h, 41, &b), 0);
	T_EQ(ujbd_forget(h, b), 0);
	ujbd_buf_put(b);
	T_EQ(ujbd_stop(h), 0);
	/* a third uses 40 again: a credit, logged with its bytes */
	T_EQ(rig_write(r.j, 40, 1, 3, true, NULL), 0);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	T_CHECK(rig_has(&r, 40, 3));
	T_CHECK(rig_is_zero(&r, 41));
	rig_free(&r);
}

/* ---- a buffer next in line while its transaction commits (sim) ----------- */

struct nxt {
	uint64_t delay_ns;  /* after asking for T1's commit */
	int rc;
	uint64_t frozen;    /* frozen copies made (the buffer was logged by T1) */
	bool overlap;       /* T2 ran during T1's commit, T3 in T2 */
};

static void nxt_main(void *arg)
{
	struct nxt *n = arg;
	struct rig r;
	struct ujbd_opts o;
	struct dev *d;
	struct dev_ssd_params p;
	struct ujbd_stats st;
	ujbd_tid_t t1, t2;
	int rc;

	dev_ssd_defaults(&p);
	p.size = 16ull << 20;
	n->rc = dev_sim_ssd_new(&p, &d);
	if (!n->rc)
		n->rc = rig_devs(&r, BS, 512, (16ull << 20) / BS, d, d);
	rig_opts_jbd2(&o, true); /* T1's commit runs beside this thread */
	if (!n->rc)
		n->rc = rig_open(&r, &o);
	if (n->rc)
		return;
	/* T1: 600 and 601 (601 keeps T1 logging a little longer) */
	rc = rig_write(r.j, 600, 2, 1, false, &t1);
	if (!rc)
		rc = ujbd_commit_tid(r.j, t1);
	if (!rc && n->delay_ns)
		rt_sleep_ns(n->delay_ns);
	/* T2: 600 again, while T1 is in some phase of its commit */
	if (!rc)
		rc = rig_write(r.j, 600, 1, 2, false, &t2);
	if (!rc)
		rc = ujbd_wait_tid(r.j, t1);
	/* still T2: the buffer now belongs to it alone; a later handle's
	 * bytes are what T2 logs */
	ujbd_tid_t t3 = 0;
	if (!rc)
		rc = rig_write(r.j, 600, 1, 3, false, &t3);
	/* T2 began during T1's commit and T3 joined it: the case in point
	 * (with no delay T2 joins T1; with a long one T1 is done first) */
	n->overlap = !rc && t2 == t1 + 1 && t3 == t2;
	if (!rc)
		rc = ujbd_commit_tid(r.j, t3);
	if (!rc)
		rc = ujbd_wait_tid(r.j, t3);
	if (!rc)
		rc = ujbd_stats(r.j, &st);
	n->frozen = rc ? 0 : st.lat[UJBD_LAT_WAIT_FROZEN].count;
	ujbd_close_hard(r.j);
	r.j = NULL;
	if (!rc)
		rc = rig_recover(&r);
	if (!rc && !(rig_has(&r, 600, 3) && rig_has(&r, 601, 1)))
		rc = -EBADMSG;
	n->rc = rc;
	rig_free(&r);
}

static void t_next_in_line(void)
{
	uint64_t frozen = 0;
	unsigned overlaps = 0;

	/* from "T1 not locked yet" through its log writes to "T1 done" */
	for (uint64_t us = 0; us <= 400; us += 20) {
		struct nxt n = { .delay_ns = us * RT_NS_PER_US, .rc = -99 };
		struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = 7 + us };
		rt_world *w;
		T_EQ(rt_world_new(&wo, &w), 0);
		T_EQ(rt_world_run(w, "main", nxt_main, &n), 0);
		rt_world_free(w);
		if (n.rc)
			fprintf(stderr, "  delay %" PRIu64 " us: %d\n", us, n.rc);
		T_EQ(n.rc, 0);
		frozen += n.frozen;
		overlaps += n.overlap;
	}
	/* some delays did land inside T1's commit */
	T_CHECK(overlaps > 0);
	T_CHECK(frozen > 0);
}

/* ---- many threads, thread exits, several journals ------------------------- */

#define MJ 10   /* journals: more than a thread's slot table (8) */

struct many {
	struct ujbd **js;
	unsigned id;
	int rc;
};

static void many_worker(void *arg)
{
	struct many *m = arg;

	for (unsigned k = 1; k <= 50 && !m->rc; k++)
		for (unsigned i = 0; i < MJ && !m->rc; i++)
			m->rc = rig_write(m->js[i], 100 + m->id, 1, k, false, NULL);
}

static void t_many_threads(void)
{
	struct rig r[MJ];
	struct ujbd *js[MJ];
	struct ujbd_opts o;

	rig_opts(&o, true);
	for (unsigned i = 0; i < MJ; i++) {
		T_EQ(rig_devs(&r[i], BS, 256, 512, NULL, NULL), 0);
		T_EQ(rig_open(&r[i], &o), 0);
		js[i] = r[i].j;
	}
	/* three generations of four threads: exited threads' slots are reused */
	for (unsigned g = 0; g < 3; g++) {
		struct many m[4];
		rt_thread *t[4];
		for (unsigned i = 0; i < 4; i++) {
			m[i] = (struct many){ .js = js, .id = g * 4 + i };
			T_EQ(rt_thread_create(&t[i], "many", many_worker, &m[i]), 0);
		}
		for (unsigned i = 0; i < 4; i++) {
			T_EQ(rt_thread_join(t[i]), 0);
			T_EQ(m[i].rc, 0);
		}
	}
	for (unsigned i = 0; i < MJ; i++) {
		T_EQ(ujbd_close(r[i].j), 0);
		r[i].j = NULL;
		for (unsigned id = 0; id < 12; id++)
			T_CHECK(rig_has(&r[i], 100 + id, 50));
		rig_free(&r[i]);
	}
}

/* ---- credits a stopped handle did not use (review) ---------------------- */

/*
 * A handle that reserved more than it used gives the rest back: the next
 * handle, of this thread or another, joins the same transaction if the
 * transaction has room for it. (slot.c parks them in the slot's pool for
 * good; slot_refill then reserves a whole new nblocks + chunk on top of the
 * pool, so the running transaction looks full and is committed early.)
 */
struct unused {
	struct ujbd *j;
	unsigned nblocks;
	ujbd_tid_t tid;
	int rc;
};

static void unused_other(void *arg)
{
	struct unused *u = arg;
	struct ujbd_handle *h;

	u->rc = ujbd_start(u->j, u->nblocks, &h);
	if (u->rc)
		return;
	u->tid = ujbd_handle_tid(h);
	u->rc = touch(h, 61, 1);
	int s = ujbd_stop(h);
	u->rc = u->rc ? u->rc : s;
}

/* One handle of nblocks credits that dirties one block; its tid. */
static int big_handle(struct ujbd *j, unsigned nblocks, uint64_t block, ujbd_tid_t *tid)
{
	struct ujbd_handle *h;
	int rc = ujbd_start(j, nblocks, &h);

	if (rc)
		return rc;
	*tid = ujbd_handle_tid(h);
	rc = touch(h, block, 1);
	int s = ujbd_stop(h);
	return rc ? rc : s;
}

static void t_unused_credits(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_stats st;
	struct unused u;
	rt_thread *t;
	ujbd_tid_t t0, t1, t2, t3, t4;

	rig_opts(&o, true);
	o.max_transaction_blocks = 1000; /* a slot's chunk is then 15 */
	T_EQ(rig_devs(&r, BS, 4096, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	/* The same thread: 600 reserved and 1 used, then 700: both fit in
	 * one transaction of 1000 (the first handle of a transaction takes
	 * the locked path, so one goes first). */
	T_EQ(rig_write(r.j, 59, 1, 1, false, &t0), 0);
	T_EQ(big_handle(r.j, 600, 60, &t1), 0);
	T_EQ(big_handle(r.j, 700, 61, &t2), 0);
	/* Another thread: 600 here, then 500 there. */
	T_EQ(ujbd_commit_tid(r.j, t2), 0);
	T_EQ(ujbd_wait_tid(r.j, t2), 0);
	T_EQ(rig_write(r.j, 59, 1, 2, false, &t3), 0);
	T_EQ(big_handle(r.j, 600, 62, &t4), 0);
	u = (struct unused){ .j = r.j, .nblocks = 500 };
	T_EQ(rt_thread_create(&t, "other", unused_other, &u), 0);
	T_EQ(rt_thread_join(t), 0);
	T_EQ(u.rc, 0);
	T_EQ(ujbd_stats(r.j, &st), 0);
	fprintf(stderr, "  same thread: tids %u %u %u; other thread: %u %u %u; %" PRIu64
		" commits (1 asked for)\n", (unsigned)t0, (unsigned)t1, (unsigned)t2, (unsigned)t3,
		(unsigned)t4, (unsigned)u.tid, st.ts_tid);
	/* closed first: a failed check must not leave the journal running */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	bool data = rig_has(&r, 59, 2) && rig_has(&r, 60, 1) && rig_has(&r, 61, 1) &&
		    rig_has(&r, 62, 1);
	rig_free(&r);
	T_CHECK(data);
	T_EQ(t1, t0);
	T_EQ(t2, t0);
	T_EQ(t4, t3);
	T_EQ(u.tid, t3);
	T_EQ_U64(st.ts_tid, 1);
}

/* ---- one block, a thread with a slot and one without (tsan) -------------- */

/*
 * Two handles of one transaction hold one block at once, each writing a
 * half of it: one through its slot (dirty_slot sets b_dirty without the
 * lock), the other on the locked path (its thread's slot table is full of
 * other journals, so it has no slot for this one: ujbd_dirty_metadata reads
 * b_dirty under the lock). The threads take turns through a relaxed flag,
 * which orders them in time without ordering their memory (as two threads
 * that share nothing but the journal):
 *   slot: write access, fill    locked: write access, fill
 *   slot: dirty, stop           locked: dirty, stop
 * Under tsan the two accesses of b_dirty must not race (on the current
 * code they do: the plain read in ujbd_dirty_metadata against the atomic
 * store in dirty_slot, nothing ordering them). Each half ends with its
 * writer's last value.
 */
#define DROUNDS 20u
#define DBLOCK 30u

struct dturn {
	struct ujbd *j;
	struct ujbd **others; /* journals the locked-path thread uses first */
	unsigned turn;        /* relaxed: whose step, 0..3 */
	uint32_t last[2];
	int rc[2];
};

static void half_fill(uint8_t *blk, unsigned id, uint32_t gen)
{
	uint8_t tmp[BS];

	rig_fill(tmp, BS, DBLOCK, gen);
	memcpy(blk + id * (BS / 2), tmp + id * (BS / 2), BS / 2);
}

static void dturn_wait(struct dturn *d, unsigned step)
{
	while (__atomic_load_n(&d->turn, __ATOMIC_RELAXED) != step)
		rt_sleep_ns(20 * RT_NS_PER_US);
}

static void dturn_next(struct dturn *d)
{
	__atomic_store_n(&d->turn, (__atomic_load_n(&d->turn, __ATOMIC_RELAXED) + 1) % 4,
			 __ATOMIC_RELAXED);
}

/* Both threads: one handle in two steps (id 0 the slot thread). */
static void dturn_round(struct dturn *d, unsigned id, uint32_t k, int *rc)
{
	struct ujbd_handle *h = NULL;
	struct ujbd_buf *b = NULL;

	dturn_wait(d, id);
	if (!*rc && id == 0) {
		/* the last transaction committed, a new one begun (its first
		 * handle takes the locked path); then the slot handle */
		*rc = rig_write(d->j, 20, 1, k, true, NULL);
		if (!*rc)
			*rc = rig_write(d->j, 21, 1, k, false, NULL);
	}
	if (!*rc)
		*rc = ujbd_start(d->j, 1, &h);
	if (!*rc && (*rc = ujbd_get_write_access(h, DBLOCK, &b)) == 0)
		half_fill(ujbd_buf_data(b), id, k);
	dturn_next(d);
	dturn_wait(d, 2 + id);
	if (b) {
		if (!*rc)
			*rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	if (h) {
		int s = ujbd_stop(h);
		*rc = *rc ? *rc : s;
	}
	if (!*rc)
		d->last[id] = k;
	dturn_next(d);
}

static void dturn_slot(void *arg)
{
	struct dturn *d = arg;
	int rc = 0;

	for (uint32_t k = 1; k <= DROUNDS; k++)
		dturn_round(d, 0, k, &rc);
	d->rc[0] = rc;
}

static void dturn_locked(void *arg)
{
	struct dturn *d = arg;
	int rc = 0;

	for (unsigned i = 0; i < 8 && !rc; i++)
		rc = rig_write(d->others[i], 50, 1, 1, false, NULL);
	for (uint32_t k = 1; k <= DROUNDS; k++)
		dturn_round(d, 1, k, &rc);
	d->rc[1] = rc;
}

static void t_dirty_with_and_without_slot(void)
{
	struct rig r, ro[8];
	struct ujbd *others[8];
	struct ujbd_opts o;
	struct dturn d = { 0 };
	rt_thread *ts, *tl;
	uint8_t want[BS], got[BS];

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 1024, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	for (unsigned i = 0; i < 8; i++) {
		T_EQ(rig_devs(&ro[i], BS, 128, 64, NULL, NULL), 0);
		T_EQ(rig_open(&ro[i], &o), 0);
		others[i] = ro[i].j;
	}
	d.j = r.j;
	d.others = others;
	T_EQ(rt_thread_create(&ts, "slot", dturn_slot, &d), 0);
	T_EQ(rt_thread_create(&tl, "locked", dturn_locked, &d), 0);
	T_EQ(rt_thread_join(ts), 0);
	T_EQ(rt_thread_join(tl), 0);
	T_EQ(d.rc[0], 0);
	T_EQ(d.rc[1], 0);
	T_EQ(d.last[0], DROUNDS);
	T_EQ(d.last[1], DROUNDS);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	half_fill(want, 0, DROUNDS);
	half_fill(want, 1, DROUNDS);
	T_EQ(rig_data(&r, DBLOCK, got), 0);
	T_CHECK(memcmp(want, got, BS) == 0);
	for (unsigned i = 0; i < 8; i++) {
		T_EQ(ujbd_close(ro[i].j), 0);
		ro[i].j = NULL;
		rig_free(&ro[i]);
	}
	rig_free(&r);
}

/* ---- write_atomic against ujbd_read of its block (tsan) ------------------ */

/*
 * ujbd_write_atomic copies the caller's bytes under the journal lock and
 * ujbd_read copies the block out under it, so a reader never races the
 * library's own writes of a block: it reads the block whole, as one write
 * left it. The zeroing of get_create_access is one of those writes (a
 * reader may see the zeroed block between it and the copy: counted, not
 * checked); on the slot path (a block this thread already put in the
 * transaction) access_slot zeroes it outside the lock, so a reader gets a
 * block half zeroed and half old ("bad": fails on the current code in
 * most runs, normal build) and tsan reports memset against memcpy.
 */
#define AITERS 4000u
#define ABLOCK 31u

struct aw {
	struct ujbd *j;
	bool done;            /* [lock] */
	rt_mutex lock;
	uint32_t last;
	uint64_t reads, zeros, bad;
	int rc_w, rc_r, rc_c;
};

static void aw_writer(void *arg)
{
	struct aw *a = arg;
	uint8_t data[BS];

	/* AITERS writes, and on until the reader has read as many times */
	for (uint32_t k = 1; !a->rc_w && (k <= AITERS ||
		(k < 100 * AITERS && __atomic_load_n(&a->reads, __ATOMIC_RELAXED) < AITERS)); k++) {
		struct ujbd_block blk = { ABLOCK, data };
		rig_fill(data, BS, ABLOCK, k);
		a->rc_w = ujbd_write_atomic(a->j, &blk, 1, 0);
		if (!a->rc_w)
			a->last = k;
	}
	rt_mutex_lock(&a->lock);
	a->done = true;
	rt_mutex_unlock(&a->lock);
}

static bool aw_done(struct aw *a)
{
	rt_mutex_lock(&a->lock);
	bool done = a->done;
	rt_mutex_unlock(&a->lock);
	return done;
}

static void aw_reader(void *arg)
{
	struct aw *a = arg;
	uint8_t got[BS], want[BS], zero[BS] = { 0 };

	while (!a->rc_r && !aw_done(a)) {
		a->rc_r = ujbd_read(a->j, ABLOCK, got);
		if (a->rc_r)
			break;
		__atomic_add_fetch(&a->reads, 1, __ATOMIC_RELAXED);
		uint32_t gen = *(uint32_t *)got ^ (uint32_t)(ABLOCK * 2654435761u);
		rig_fill(want, BS, ABLOCK, gen);
		if (!memcmp(got, zero, BS))
			a->zeros++; /* create access zeroed it: torn, before and after the slots */
		else if (memcmp(got, want, BS))
			a->bad++;
	}
}

static void aw_committer(void *arg)
{
	struct aw *a = arg;

	for (uint32_t k = 1; !a->rc_c && !aw_done(a); k++)
		a->rc_c = rig_write(a->j, 20, 1, k, true, NULL);
}

static void t_create_against_read(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct aw a = { 0 };
	rt_thread *t[3];
	void (*fn[3])(void *) = { aw_writer, aw_reader, aw_committer };

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 1024, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	a.j = r.j;
	T_EQ(rt_mutex_init(&a.lock, "aw"), 0);
	for (unsigned i = 0; i < 3; i++)
		T_EQ(rt_thread_create(&t[i], "aw", fn[i], &a), 0);
	for (unsigned i = 0; i < 3; i++)
		T_EQ(rt_thread_join(t[i]), 0);
	fprintf(stderr, "  %" PRIu64 " reads, %" PRIu64 " of a zeroed block\n", a.reads, a.zeros);
	/* closed first: a failed check must not leave the journal running */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	bool data = rig_has(&r, ABLOCK, a.last);
	rt_mutex_release(&a.lock);
	rig_free(&r);
	T_EQ(a.rc_w, 0);
	T_EQ(a.rc_r, 0);
	T_EQ(a.rc_c, 0);
	T_CHECK(a.last >= AITERS);
	T_CHECK(data);
	T_EQ_U64(a.bad, 0);
}

/* ---- extend, revoke, forget and ordered data from slot handles ----------- */

static void t_slot_extend_revoke_data(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_stats st;
	uint8_t data[BS];

	rig_opts(&o, true);
	o.data_mode = UJBD_DATA_ORDERED;
	T_EQ(rig_devs(&r, BS, 1024, 256, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	/* T0: 70 logged (not checkpointed before the crash below) */
	T_EQ(rig_write(r.j, 70, 1, 1, true, NULL), 0);
	/* T1: its first handle takes the locked path; the rest are slot
	 * handles of this thread */
	T_EQ(rig_write(r.j, 80, 1, 1, false, NULL), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(touch(h, 71, 1), 0);                /* 71 in the memo */
	T_EQ(ujbd_stop(h), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(touch(h, 71, 2), 0);                /* through the memo */
	T_EQ(ujbd_extend(h, 3), 0);
	T_EQ(touch(h, 72, 2), 0);
	T_EQ(touch(h, 73, 2), 0);
	T_EQ(touch(h, 75, 2), 0);                /* 1 + 3 credits used */
	T_EQ(ujbd_revoke(h, 70), 0);                  /* T0's copy must not replay */
	rig_fill(data, BS, 74, 2);
	T_EQ(ujbd_write_data(h, 74, data), 0);        /* ordered data */
	T_EQ(ujbd_stop(h), 0);
	/* another handle frees 75 (journaled by the one before): forgotten */
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_revoke(h, 75), 0);
	T_EQ(touch(h, 71, 3), 0);
	T_EQ(ujbd_stop(h), 0);
	/* and the next one uses 75 again: the memo has it, forgotten, so the
	 * locked path takes a credit and cancels the revoke */
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(touch(h, 75, 4), 0);
	T_EQ(ujbd_stop(h), 0);
	T_EQ(rig_write(r.j, 81, 1, 1, true, NULL), 0);
	T_EQ(ujbd_stats(r.j, &st), 0);
	T_EQ_U64(st.ts_tid, 2);
	T_EQ_U64(st.rs_handle_count, 7);
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	T_CHECK(rig_has(&r, 71, 3));
	T_CHECK(rig_has(&r, 72, 2));
	T_CHECK(rig_has(&r, 73, 2));
	T_CHECK(rig_has(&r, 74, 2));
	T_CHECK(rig_has(&r, 75, 4));
	T_CHECK(rig_is_zero(&r, 70));
	rig_free(&r);
}

/* ---- abort while slot handles run ------------------------------------------ */

#define AB_W 3

struct abw {
	struct ujbd *j;
	unsigned id;
	uint64_t ok, eio_stops;       /* ok: atomic (the committer reads it) */
	int rc;
	bool committer;
	struct abw *all;              /* the AB_W writers */
};

/* The committer starts once every writer has run a handle: its commits
 * reach the failing write fast (one write each under async commit), and
 * a writer started late on a loaded machine could otherwise meet the
 * abort before its first handle. */
static void ab_wait_writers(const struct abw *w)
{
	for (unsigned i = 0; i < AB_W; i++)
		for (int k = 0; k < 100000 && !__atomic_load_n(&w->all[i].ok, __ATOMIC_ACQUIRE) &&
				!__atomic_load_n(&w->all[i].rc, __ATOMIC_ACQUIRE); k++)
			rt_sleep_ns(100 * RT_NS_PER_US);
}

static void ab_worker(void *arg)
{
	struct abw *w = arg;
	/* until the abort reaches this thread: a fixed count could end first
	 * when the sync writer is starved on a loaded machine */
	uint64_t end = rt_now_ns() + 30 * RT_NS_PER_S;

	if (w->committer)
		ab_wait_writers(w);
	for (uint32_t k = 1; !w->rc && rt_now_ns() < end; k++) {
		struct ujbd_handle *h;
		int rc = ujbd_start(w->j, 1, &h);
		if (rc) {
			w->rc = rc;
			break;
		}
		ujbd_handle_set_sync(h, w->committer);
		rc = touch(h, 100 + w->id, k);
		int s = ujbd_stop(h);
		if (s == -EIO)
			w->eio_stops++;
		__atomic_store_n(&w->rc, rc ? rc : s, __ATOMIC_RELEASE);
		if (!w->rc)
			__atomic_add_fetch(&w->ok, 1, __ATOMIC_RELEASE);
	}
}

static void t_abort_during_slots(void)
{
	struct jbd_format_opts f = { .blocksize = BS, .blocks = 1024, .csum = JBD_CSUM_KIND_V3 };
	struct dev_fault_opts fo = { .seed = 1, .fail_write_nth = 40, .sticky = true };
	struct jbd_err err;
	struct dev *mem, *fd;
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct abw w[AB_W + 1];
	rt_thread *t[AB_W + 1];

	T_EQ(dev_mem_new(1024ull * BS, 512, &mem), 0);
	T_EQ(jbd_format(mem, &f, &err), 0);
	T_EQ(dev_fault_new(mem, &fo, &fd), 0);
	T_EQ(rig_devs(&r, BS, 1024, 256, fd, NULL), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	/* writers of non-sync slot handles, and one of sync handles: the
	 * 40th journal write fails while they run */
	for (unsigned i = 0; i <= AB_W; i++) {
		w[i] = (struct abw){ .j = r.j, .id = i, .committer = i == AB_W, .all = w };
		T_EQ(rt_thread_create(&t[i], "ab", ab_worker, &w[i]), 0);
	}
	for (unsigned i = 0; i <= AB_W; i++)
		T_EQ(rt_thread_join(t[i]), 0);
	for (unsigned i = 0; i <= AB_W; i++) {
		/* each ran until the abort, and saw it as one */
		T_CHECK(w[i].ok > 0);
		if (w[i].rc != -EIO && w[i].rc != -EROFS)
			fprintf(stderr, "  worker %u: rc %d after %" PRIu64 " handles\n", i, w[i].rc, w[i].ok);
		T_CHECK(w[i].rc == -EIO || w[i].rc == -EROFS);
	}
	fprintf(stderr, "  handles before the abort: %" PRIu64 " %" PRIu64 " %" PRIu64
		" (sync %" PRIu64 ")\n", w[0].ok, w[1].ok, w[2].ok, w[AB_W].ok);
	T_EQ(ujbd_start(r.j, 1, &h), -EROFS);
	T_EQ(ujbd_close(r.j), -EIO);
	r.j = NULL;
	rig_free(&r); /* the fault device closes mem */
}

/* ---- a crash after slot handles: what was acknowledged is there ---------- */

#define CH_W 3
#define CH_N 1500u

struct chw {
	struct ujbd *j;
	unsigned id;
	uint32_t acked, last;
	int rc;
};

static void ch_worker(void *arg)
{
	struct chw *w = arg;

	for (uint32_t k = 1; k <= CH_N && !w->rc; k++) {
		bool sync = k % 100 == 0;
		w->rc = rig_write(w->j, 110 + w->id, 1, k, sync, NULL);
		if (!w->rc) {
			w->last = k;
			if (sync)
				w->acked = k;
		}
	}
}

static void t_close_hard_after_slots(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct chw w[CH_W];
	rt_thread *t[CH_W];

	rig_opts(&o, true);
	/* a small log: it wraps, so checkpoints run too */
	T_EQ(rig_devs(&r, BS, 256, 256, NULL, NULL), 0);
	o.commit_interval_ns = 2 * RT_NS_PER_MS;
	T_EQ(rig_open(&r, &o), 0);
	for (unsigned i = 0; i < CH_W; i++) {
		w[i] = (struct chw){ .j = r.j, .id = i };
		T_EQ(rt_thread_create(&t[i], "ch", ch_worker, &w[i]), 0);
	}
	for (unsigned i = 0; i < CH_W; i++) {
		T_EQ(rt_thread_join(t[i]), 0);
		T_EQ(w[i].rc, 0);
	}
	ujbd_close_hard(r.j);
	r.j = NULL;
	T_EQ(rig_recover(&r), 0);
	/* each block holds a value its writer wrote, no older than the last
	 * one a sync handle acknowledged */
	for (unsigned i = 0; i < CH_W; i++) {
		uint32_t g = w[i].last;
		while (g >= w[i].acked && g > 0 && !rig_has(&r, 110 + i, g))
			g--;
		T_CHECK(g >= w[i].acked && g > 0 && rig_has(&r, 110 + i, g));
	}
	rig_free(&r);
}

/* ---- a trace hook installed and removed while slot handles run ------------ */

#define HK_MAX (1u << 18)

struct hk_rec {
	rt_mutex lock;
	uint32_t n;
	uint8_t kind[HK_MAX];
	uint32_t tid[HK_MAX];
};

static void hk_hook(void *arg, const struct ujbd_trace_event *ev)
{
	struct hk_rec *k = arg;

	if (ev->kind != UJBD_TR_HANDLE_START && ev->kind != UJBD_TR_HANDLE_STATS &&
	    ev->kind != UJBD_TR_COMMIT_FLUSHING)
		return;
	rt_mutex_lock(&k->lock);
	if (k->n < HK_MAX) {
		k->kind[k->n] = (uint8_t)ev->kind;
		k->tid[k->n] = ev->tid;
		k->n++;
	}
	rt_mutex_unlock(&k->lock);
}

struct hk_tog {
	struct ujbd *j;
	struct hk_rec *k;
	rt_mutex lock;
	bool stop;        /* [lock] */
	unsigned toggles;
};

static void hk_toggler(void *arg)
{
	struct hk_tog *g = arg;

	for (;;) {
		rt_mutex_lock(&g->lock);
		bool stop = g->stop;
		rt_mutex_unlock(&g->lock);
		if (stop)
			break;
		ujbd_set_trace_hook(g->j, g->toggles % 2 ? NULL : hk_hook, g->k);
		g->toggles++;
		rt_sleep_ns(100 * RT_NS_PER_US);
	}
	ujbd_set_trace_hook(g->j, NULL, NULL);
}

static void t_hook_mid_run(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct race rc = { 0 };
	struct rwr w[RW + 1];
	rt_thread *t[RW + 1];
	struct ujbd_stats st;
	struct hk_rec *k = calloc(1, sizeof(*k));
	uint8_t *flushed = calloc(1u << 16, 1);
	uint64_t handles = 1, starts = 0, late = 0;
	unsigned toggles = 0;
	struct hk_tog tg;
	rt_thread *tt;

	T_CHECK(k && flushed);
	if (!k || !flushed)
		return;
	T_EQ(rt_mutex_init(&k->lock, "hk"), 0);
	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 1024, DBLOCKS, NULL, NULL), 0);
	o.commit_interval_ns = RT_NS_PER_MS;
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rt_mutex_init(&rc.lock, "race"), 0);
	rc.j = r.j;
	for (unsigned i = 0; i <= RW; i++) {
		w[i] = (struct rwr){ .r = &rc, .id = i };
		T_EQ(rt_thread_create(&t[i], i < RW ? "writer" : "committer",
				      i < RW ? race_writer : race_committer, &w[i]), 0);
	}
	/* on and off, every 100 us, until the writers are done */
	tg = (struct hk_tog){ .j = r.j, .k = k };
	T_EQ(rt_mutex_init(&tg.lock, "tog"), 0);
	T_EQ(rt_thread_create(&tt, "toggler", hk_toggler, &tg), 0);
	for (unsigned i = 0; i < RW; i++)
		T_EQ(rt_thread_join(t[i]), 0);
	rt_mutex_lock(&tg.lock);
	tg.stop = true;
	rt_mutex_unlock(&tg.lock);
	T_EQ(rt_thread_join(tt), 0);
	toggles = tg.toggles;
	rt_mutex_release(&tg.lock);
	rt_mutex_lock(&rc.lock);
	rc.done = true;
	rt_mutex_unlock(&rc.lock);
	T_EQ(rt_thread_join(t[RW]), 0);
	for (unsigned i = 0; i <= RW; i++) {
		T_EQ(w[i].rc, 0);
		handles += w[i].handles;
	}
	T_EQ(rig_write(r.j, 21, 1, 1, true, NULL), 0);
	T_EQ(ujbd_stats(r.j, &st), 0);
	T_EQ_U64(st.rs_handle_count, handles);
	/* what the hook saw: no handle of a transaction after its commit
	 * stopped waiting for handles (jbd2_commit_flushing) */
	rt_mutex_lock(&k->lock);
	for (uint32_t i = 0; i < k->n; i++) {
		uint32_t tid = k->tid[i] & 0xFFFF;
		if (k->kind[i] == UJBD_TR_COMMIT_FLUSHING) {
			flushed[tid] = 1;
			continue;
		}
		starts += k->kind[i] == UJBD_TR_HANDLE_START;
		late += flushed[tid];
	}
	rt_mutex_unlock(&k->lock);
	fprintf(stderr, "  %u toggles, %u events, %" PRIu64 " handle starts seen, %" PRIu64
		" commits\n", toggles, k->n, starts, st.ts_tid);
	T_CHECK(toggles > 2);
	T_CHECK(starts > 0);
	T_EQ_U64(late, 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	for (unsigned i = 0; i < RW; i++)
		for (unsigned b = 0; b < OWN; b++)
			T_CHECK(rig_has(&r, own_block(i, b), w[i].own_last[b]));
	for (unsigned s2 = 0; s2 < SHARED; s2++)
		T_CHECK(rig_has(&r, 10 + s2, rc.shared_last[s2]));
	rt_mutex_release(&rc.lock);
	rt_mutex_release(&k->lock);
	free(k);
	free(flushed);
	rig_free(&r);
}

/* ---- the sim world stays deterministic with slots and thread exits -------- */

struct simd {
	uint64_t seed;
	int rc;
	uint64_t hash, end_ns, commits, handles;
};

struct simw {
	struct ujbd *j;
	unsigned id;
	int rc;
};

static void simd_worker(void *arg)
{
	struct simw *w = arg;

	for (uint32_t k = 1; k <= 40 && !w->rc; k++) {
		w->rc = rig_write(w->j, 620 + w->id % 4, 1, k, k % 8 == 0, NULL); /* past the journal */
		rt_cpu(2 * RT_NS_PER_US);
	}
}

static void simd_main(void *arg)
{
	struct simd *d = arg;
	struct rig r;
	struct ujbd_opts o;
	struct dev *dv;
	struct dev_ssd_params p;
	struct ujbd_stats st;

	dev_ssd_defaults(&p);
	p.size = 16ull << 20;
	d->rc = dev_sim_ssd_new(&p, &dv);
	if (!d->rc)
		d->rc = rig_devs(&r, BS, 512, (16ull << 20) / BS, dv, dv);
	rig_opts(&o, true);
	if (!d->rc)
		d->rc = rig_open(&r, &o);
	if (d->rc)
		return;
	/* three generations of three threads: the later ones reuse the
	 * slots of the exited ones */
	for (unsigned g = 0; g < 3 && !d->rc; g++) {
		struct simw w[3];
		rt_thread *t[3];
		for (unsigned i = 0; i < 3; i++) {
			w[i] = (struct simw){ .j = r.j, .id = g * 3 + i };
			d->rc = d->rc ? d->rc : rt_thread_create(&t[i], "simw", simd_worker, &w[i]);
		}
		for (unsigned i = 0; i < 3; i++) {
			rt_thread_join(t[i]);
			d->rc = d->rc ? d->rc : w[i].rc;
		}
	}
	if (!d->rc)
		d->rc = rig_write(r.j, 630, 1, 1, true, NULL);
	if (!d->rc)
		d->rc = ujbd_stats(r.j, &st);
	d->commits = st.ts_tid;
	d->handles = st.rs_handle_count;
	d->end_ns = rt_now_ns();
	if (!d->rc)
		d->rc = ujbd_close(r.j);
	r.j = NULL;
	rig_free(&r);
}

static int simd_run(struct simd *d)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = d->seed };
	rt_world *w;
	int rc = rt_world_new(&wo, &w);

	if (rc)
		return rc;
	rc = rt_world_run(w, "main", simd_main, d);
	d->hash = rt_world_hash(w);
	rt_world_free(w);
	return rc ? rc : d->rc;
}

static void t_sim_slots_deterministic(void)
{
	struct simd a = { .seed = 11 }, b = { .seed = 11 }, c = { .seed = 12 };

	T_EQ(simd_run(&a), 0);
	T_EQ(simd_run(&b), 0);
	T_EQ(simd_run(&c), 0);
	T_EQ_U64(a.handles, 9 * 40 + 1);
	T_EQ_U64(a.hash, b.hash);
	T_EQ_U64(a.end_ns, b.end_ns);
	T_EQ_U64(a.commits, b.commits);
	T_CHECK(a.hash != c.hash);
}

/* ---- forgotten buffers are not kept (white box: the buffer cache) -------- */

/*
 * A handle that journals a block and forgets it in the same transaction
 * (a block allocated and freed again) gets its credit back, so one handle
 * of one credit can do it for any number of blocks. Such a buffer used to
 * leave the transaction at once; forget now only marks it, so it stays on
 * the transaction with its journal head and a buffer reference until the
 * commit, and the buffer cache cannot evict it: its size is no longer
 * bounded by the cache limit (nor the transaction's list by its credits).
 */
#define FG_N 3000u

static void t_forgotten_not_pinned(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	struct buf_stats bs;
	int rc = 0;

	rig_opts(&o, true);
	o.cache_blocks = 64;
	T_EQ(rig_devs(&r, BS, 1024, DBLOCKS, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 20, 1, 1, false, NULL), 0); /* T open: slot handles */
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	for (uint32_t i = 0; i < FG_N && !rc; i++) {
		rc = ujbd_get_create_access(h, 1000 + i, &b);
		if (rc)
			break;
		rc = ujbd_forget(h, b);
		ujbd_buf_put(b);
	}
	int s = ujbd_stop(h);
	buf_cache_stats(r.j->j_cache, &bs);
	fprintf(stderr, "  %u blocks journaled and forgotten: %" PRIu64
		" buffers cached (limit %" PRIu64 ")\n", FG_N, bs.cached, bs.limit);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
	T_EQ(rc, 0);
	T_EQ(s, 0);
	T_CHECK(bs.cached <= bs.limit + 8);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_real_race);
	T_RUN(t_forget_then_reuse);
	T_RUN(t_next_in_line);
	T_RUN(t_many_threads);
	T_RUN(t_unused_credits);
	T_RUN(t_dirty_with_and_without_slot);
	T_RUN(t_create_against_read);
	T_RUN(t_slot_extend_revoke_data);
	T_RUN(t_abort_during_slots);
	T_RUN(t_close_hard_after_slots);
	T_RUN(t_hook_mid_run);
	T_RUN(t_sim_slots_deterministic);
	T_RUN(t_forgotten_not_pinned);
	return t_done(argv[0]);
}

/*
 * The journal runtime's handles on RAM devices, in the real world: credits,
 * -UJBD_ETOOBIG for impossible handles, extend, commit and checkpoint, close
 * leaving s_start 0, tids that grow across opens, recovery after a hard
 * close, write_atomic, ujbd_read, option checks.
 */
#include "rt_rig.h"

#define BS 1024u
#define JBLOCKS 1024u
#define DBLOCKS 512u

static void t_commit_then_checkpoint(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct jbd2_sb sb;
	uint8_t buf[BS], want[BS];
	ujbd_tid_t tid;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 10, 3, 1, true, &tid), 0);
	/* Committed, not yet home: the log holds it, the cache shows it. */
	T_CHECK(!rig_has(&r, 10, 1));
	T_EQ(ujbd_read(r.j, 11, buf), 0);
	rig_fill(want, BS, 11, 1);
	T_CHECK(memcmp(buf, want, BS) == 0);
	T_EQ(rig_sb(&r, &sb), 0);
	T_CHECK(jbd_get_be32(sb.s_start) != 0);
	T_EQ(jbd_get_be32(sb.s_sequence), tid);
	T_EQ(ujbd_checkpoint(r.j), 0);
	for (int i = 0; i < 3; i++)
		T_CHECK(rig_has(&r, 10 + i, 1));
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_EQ(rig_sb(&r, &sb), 0);
	T_EQ(jbd_get_be32(sb.s_start), 0);
	T_EQ(jbd_get_be32(sb.s_sequence), tid + 1);
	rig_free(&r);
}

static void t_credits(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b[4];

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(ujbd_start(r.j, 2, &h), 0);
	T_EQ(ujbd_get_write_access(h, 1, &b[0]), 0);
	T_EQ(ujbd_get_write_access(h, 1, &b[1]), 0); /* same block: no credit */
	T_CHECK(b[0] == b[1]);
	T_EQ(ujbd_get_write_access(h, 2, &b[2]), 0);
	T_EQ(ujbd_get_write_access(h, 3, &b[3]), -UJBD_ENOCREDIT);
	T_EQ(ujbd_extend(h, 1), 0);
	T_EQ(ujbd_get_write_access(h, 3, &b[3]), 0);
	T_EQ(ujbd_dirty_metadata(h, b[0]), 0);
	T_EQ(ujbd_dirty_metadata(h, b[3]), 0);
	for (int i = 0; i < 4; i++)
		ujbd_buf_put(b[i]);
	/* The handle recorded its -UJBD_ENOCREDIT: stop reports it. */
	T_EQ(ujbd_stop(h), -UJBD_ENOCREDIT);
	/* Beyond any transaction: at once, no hang. */
	T_EQ(ujbd_start(r.j, JBLOCKS, &h), -UJBD_ETOOBIG);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_extend(h, JBLOCKS), -UJBD_ETOOBIG);
	T_EQ(ujbd_get_write_access(h, DBLOCKS, &b[0]), -EINVAL);
	T_EQ(ujbd_stop(h), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

/* A transaction's revoke table is fixed: past three quarters of it the
 * transaction counts as full, so handles that revoke many more blocks than
 * one table holds all succeed, over several transactions, where the last
 * ones used to get -ENOSPC (the lab's tree removals found it). */
static void t_revokes_roll_over(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_handle *h;
	ujbd_tid_t first = 0, last = 0;
	const unsigned n = 3 * 8192;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 4096, 65536, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	for (unsigned i = 0; i < n; i++) {
		T_EQ(ujbd_start(r.j, 1, &h), 0);
		if (i == 0)
			first = ujbd_handle_tid(h);
		last = ujbd_handle_tid(h);
		T_EQ(ujbd_revoke(h, 1 + i % 65000), 0);
		T_EQ(ujbd_stop(h), 0);
	}
	T_CHECK(ujbd_tid_gt(last, first + 1)); /* the revokes took several transactions */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

static void t_tids_grow(void)
{
	struct rig r;
	struct ujbd_opts o;
	ujbd_tid_t a = 0, b = 0, c = 0;

	rig_opts(&o, true);
	o.format_opts.sequence = 0xfffffff0u; /* across the wrap too */
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	for (int i = 0; i < 20; i++)
		T_EQ(rig_write(r.j, 5, 1, (uint32_t)i, true, &a), 0);
	T_EQ(ujbd_close(r.j), 0);
	o.format = false;
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 5, 1, 100, true, &b), 0);
	T_CHECK(ujbd_tid_gt(b, a));
	/* A hard close leaves the commit in the log; the next open replays
	 * it and carries on after it. */
	ujbd_close_hard(r.j);
	T_EQ(rig_open(&r, &o), 0);
	T_CHECK(rig_has(&r, 5, 100));
	T_EQ(rig_write(r.j, 6, 1, 101, true, &c), 0);
	T_CHECK(ujbd_tid_gt(c, b));
	T_CHECK(ujbd_tid_gt(ujbd_running_tid(r.j) + 1, c));
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_CHECK(rig_has(&r, 6, 101));
	rig_free(&r);
}

static void t_write_atomic(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct ujbd_block blk[3];
	uint8_t d[3][BS];

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	T_EQ(rig_open(&r, &o), 0);
	for (int i = 0; i < 3; i++) {
		rig_fill(d[i], BS, 40 + (uint64_t)i * 7, 9);
		blk[i] = (struct ujbd_block){ 40 + (uint64_t)i * 7, d[i] };
	}
	T_EQ(ujbd_write_atomic(r.j, blk, 3, UJBD_DURABLE), 0);
	ujbd_close_hard(r.j);
	o.format = false;
	T_EQ(rig_open(&r, &o), 0); /* recovery puts them home */
	for (int i = 0; i < 3; i++)
		T_CHECK(rig_has(&r, 40 + (uint64_t)i * 7, 9));
	blk[0].block = DBLOCKS + 1;
	T_EQ(ujbd_write_atomic(r.j, blk, 3, 0), -EINVAL);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

static void t_bad_options(void)
{
	struct rig r;
	struct ujbd_opts o;

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	o.max_transaction_blocks = JBLOCKS; /* two can never fit */
	T_EQ(ujbd_open(&r.loc, &o, &r.j, &r.err), -EINVAL);
	rig_opts(&o, true);
	o.commit_interval_ns = 0;
	T_EQ(ujbd_open(&r.loc, &o, &r.j, &r.err), -EINVAL);
	rig_free(&r);
	/* An unformatted device is no journal. */
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open(&r.loc, &o, &r.j, &r.err), -EUCLEAN);
	T_CHECK(r.j == NULL);
	rig_free(&r);
}

/* Real threads, a small journal (forced checkpoints), sync and async
 * handles, ordered data: everything lands, nothing deadlocks. */
struct rw {
	struct ujbd *j;
	unsigned id;
	uint32_t gen[16];
	int rc;
};

static void real_worker(void *arg)
{
	struct rw *w = arg;
	uint8_t d[BS];

	for (uint32_t k = 1; k <= 300 && !w->rc; k++) {
		uint64_t blk = 100 + w->id * 40 + k % 16;
		w->rc = rig_write(w->j, blk, 1, k, k % 7 == 0, NULL);
		w->gen[k % 16] = k;
		if (!w->rc && k % 5 == 0) {
			struct ujbd_handle *h;
			w->rc = ujbd_start(w->j, 0, &h);
			rig_fill(d, BS, 100 + w->id * 40 + 20 + k % 8, k);
			if (!w->rc)
				w->rc = ujbd_write_data(h, 100 + w->id * 40 + 20 + k % 8, d);
			if (!w->rc)
				w->rc = ujbd_stop(h);
		}
	}
}

static void t_real_threads(void)
{
	struct rig r;
	struct ujbd_opts o;
	struct rw w[4];
	rt_thread *t[4];

	rig_opts(&o, true);
	T_EQ(rig_devs(&r, BS, 128, DBLOCKS, NULL, NULL), 0);
	o.commit_interval_ns = 2 * RT_NS_PER_MS;
	T_EQ(rig_open(&r, &o), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct rw){ .j = r.j, .id = i };
		T_EQ(rt_thread_create(&t[i], "rw", real_worker, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		rt_thread_join(t[i]);
		T_EQ(w[i].rc, 0);
	}
	struct ujbd_stats st;
	T_EQ(ujbd_stats(r.j, &st), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	for (unsigned i = 0; i < 4; i++)
		for (unsigned s = 0; s < 16; s++)
			T_CHECK(rig_has(&r, 100 + i * 40 + s, w[i].gen[s]));
	T_CHECK(st.ts_tid > 0);
	rig_free(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_commit_then_checkpoint);
	T_RUN(t_credits);
	T_RUN(t_revokes_roll_over);
	T_RUN(t_tids_grow);
	T_RUN(t_write_atomic);
	T_RUN(t_bad_options);
	T_RUN(t_real_threads);
	return t_done(argv[0]);
}

/*
 * Reproducer found by review, then confirmed here: a block freed (revoked)
 * while the checkpoint is writing its old metadata home, then reused as
 * ordered data once the revoke is committed (as ext4 does), must end up
 * holding the data - also when the checkpoint write is still queued behind
 * the commit's synchronous writes.
 *
 * What happened (runtime of 4a9b5bc..): the checkpoint collects B (T0's
 * copy, b_ckpt_busy) and submits an async write W1; the revoke's commit
 * drops B from T0's checkpoint list (commit.c __refile_one) without
 * waiting for W1; the reuse's commit writes the data W2 (phase_data), also
 * without waiting; CFQ dispatches the synchronous W2 before the queued
 * asynchronous W1, so W1 lands last and the freed metadata overwrites the
 * new data on disk - no crash needed. jbd2/ext4 wait for I/O in flight on
 * the old buffer before the block is written again.
 *
 * Fixed since (runtime, runtime.h "Home writes"): at most one home write
 * of a block is in flight; phase_data waits while b_ckpt_busy (until the
 * checkpoint batch ends, j_wait_ckpt_io) and the checkpoint does not
 * collect a block the committing transaction writes as data. The device
 * now gets B as 0x4d then 0xda; this test passes and guards it.
 *
 * Sim world, CFQ over a simulated HDD behind a recorder (journal as a
 * region); ujbd_checkpoint runs on a second thread while the main thread
 * revokes, commits, reuses and commits. Each seed shifts the start of the
 * revoke by 100 us of virtual time. The recorder's log shows the order the
 * device got the writes of B.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define BS 1024u
#define JLEN 256u
#define JSTART 64u
#define BLK 5u
#define META 0x4d
#define DATA 0xda

struct reuse {
	uint64_t delay_us;
	int line, ckpt_err;
	uint8_t got;          /* first byte of B after a clean close */
	char order[128];      /* the device's writes of B, in order */
	struct ujbd *j;
};

static void ckpt_thread(void *arg)
{
	struct reuse *r = arg;

	r->ckpt_err = ujbd_checkpoint(r->j);
}

/* One handle on B: journal `fill`, or write it as ordered data. */
static int step(struct ujbd *j, bool data, bool revoke, ujbd_tid_t *tid)
{
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	uint8_t buf[BS];
	int err = ujbd_start(j, 2, &h), err2;

	if (err < 0)
		return err;
	*tid = ujbd_handle_tid(h);
	if (revoke) {
		err = ujbd_revoke(h, BLK);
	} else if (data) {
		memset(buf, DATA, BS);
		err = ujbd_write_data(h, BLK, buf);
	} else if ((err = ujbd_get_write_access(h, BLK, &b)) == 0) {
		memset(ujbd_buf_data(b), META, BS);
		err = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	err2 = ujbd_stop(h);
	err = err < 0 ? err : err2;
	if (err == 0)
		err = ujbd_commit_tid(j, *tid);
	return err < 0 ? err : ujbd_wait_tid(j, *tid);
}

/* The journal region: formatted on RAM, copied in, flushed. */
static int prepare(struct dev *d)
{
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = JLEN,
				      .csum = JBD_CSUM_KIND_V3, .uuid = { 7 } };
	uint8_t *img = calloc(JLEN, BS);
	struct dev *jm = NULL;
	int err = img ? dev_mem_new((uint64_t)JLEN * BS, 512, &jm) : -ENOMEM;

	if (err == 0)
		err = jbd_format(jm, &fo, NULL);
	if (err == 0)
		err = dev_pread(jm, img, JLEN * BS, 0);
	if (err == 0)
		err = dev_pwrite(d, img, JLEN * BS, (uint64_t)JSTART * BS, 0);
	if (err == 0)
		err = dev_flush(d);
	if (jm)
		dev_close(jm);
	free(img);
	return err;
}

static void write_order(struct reuse *r, struct dev *d)
{
	size_t n = 0;

	for (size_t i = 0; i < dev_rec_count(d) && n + 8 < sizeof(r->order); i++) {
		struct dev_rec_entry e;
		uint64_t off = (uint64_t)BLK * BS;

		if (dev_rec_entry(d, i, &e) == 0 && e.kind == DEV_REC_WRITE &&
		    e.off <= off && e.off + e.len > off)
			n += (size_t)snprintf(r->order + n, sizeof(r->order) - n, "%s%#x",
					      n ? " " : "",
					      ((const uint8_t *)e.data)[off - e.off]);
	}
}

static void reuse_main(void *arg)
{
	struct reuse *r = arg;
	struct dev_hdd_params hp;
	struct dev *hdd = NULL, *d = NULL;
	struct jbd_extent ext = { 0, JSTART, JLEN };
	struct blk_queue_opts qo;
	struct blk_queue *q = NULL;
	struct ujbd_opts o;
	rt_thread *ct = NULL;
	ujbd_tid_t tid;
	uint8_t buf[BS];

	dev_hdd_defaults(&hp);
	hp.size = (uint64_t)(JSTART + JLEN) * BS;
	blk_queue_opts_default(&qo);
	qo.elevator = "cfq";
	if (dev_sim_hdd_new(&hp, &hdd) < 0 || dev_rec_new(hdd, &d) < 0 || prepare(d) < 0 ||
	    blk_queue_new(d, &qo, &q) < 0) {
		r->line = __LINE__;
		goto out;
	}
	struct jbd_loc loc = { .j_dev = d, .j_blocksize = BS, .j_map = &ext, .j_nmap = 1,
			       .j_len = JLEN, .j_data = d, .j_data_blocks = JSTART };
	ujbd_opts_default(&o);
	o.journal_queue = o.data_queue = q;
	if (ujbd_open(&loc, &o, &r->j, NULL) < 0) {
		r->line = __LINE__;
		goto out;
	}
	/* T0: B is metadata; its checkpoint starts on another thread */
	if (step(r->j, false, false, &tid) < 0 ||
	    rt_thread_create(&ct, "ckpt", ckpt_thread, r) < 0) {
		r->line = __LINE__;
		goto out_close;
	}
	rt_sleep_ns(r->delay_us * RT_NS_PER_US);
	/* T1: B freed (revoked), committed; T2: B reused as ordered data */
	if (step(r->j, false, true, &tid) < 0 || step(r->j, true, false, &tid) < 0)
		r->line = __LINE__;
	rt_thread_join(ct);
out_close:
	if (ujbd_close(r->j) < 0 && !r->line)
		r->line = __LINE__;
	if (!r->line && dev_pread(d, buf, BS, (uint64_t)BLK * BS) < 0)
		r->line = __LINE__;
	r->got = buf[0];
	write_order(r, d);
out:
	if (q)
		blk_queue_free(q);
	if (d)
		dev_close(d);
	else if (hdd)
		dev_close(hdd);
}

static void test_reused_block_keeps_its_data(void)
{
	int bad = 0;

	for (uint64_t s = 0; s < 12; s++) {
		struct reuse r = { .delay_us = s * 100 };
		struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = s + 1 };
		rt_world *w;

		T_EQ(rt_world_new(&wo, &w), 0);
		rt_world_run(w, "reuse", reuse_main, &r);
		rt_world_free(w);
		T_EQ(r.line, 0);
		T_EQ(r.ckpt_err, 0);
		if (r.got != DATA) {
			if (bad++ == 0)
				fprintf(stderr, "    seed %llu (revoke after %llu us): block %u holds"
					" %#x after close, want %#x; the device got B as: %s\n",
					(unsigned long long)s + 1, (unsigned long long)r.delay_us,
					BLK, r.got, DATA, r.order);
		}
	}
	if (bad)
		T_FAILF("%d of 12 seeds: the freed metadata's checkpoint write landed after the"
			" reused block's ordered data", bad);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_reused_block_keeps_its_data);
	return t_done(argv[0]);
}

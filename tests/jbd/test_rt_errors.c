/*
 * Error returns of the runtime that no other test reached (found by `make
 * coverage`). ujbd_open: every option out of range, a location without
 * devices, a format that cannot fit its location, a transaction size the
 * log cannot hold twice, a journal that needs recovery when recovery is
 * off, a replay that skipped a block with a bad checksum, and every
 * allocation of an open failing in turn: each returns its errno with a
 * message and leaves the journal device as it was (the replay excepted:
 * it is recovery's own write); after an allocation failure the next open
 * works. Handles: a revoke in a v1 journal, a commit asked for a tid that
 * never was, every allocation of a handle's life failing in turn on a
 * fresh thread, on the slot path and on the locked one (an error, never a
 * crash, and the journal goes on), a
 * forgotten block taken again without a credit, a data block past the
 * data device, and every call of a
 * handle that was open when the journal aborted. Real world, RAM devices.
 */
#include "rt_rig.h"
#include "alloc_fault.h"

#define BS 4096u
#define JBLOCKS 256u
#define DBLOCKS 1024u

static uint64_t hash_dev(struct dev *d)
{
	static uint8_t buf[BS];
	uint64_t h = 1469598103934665603ull;

	for (uint64_t off = 0; off < dev_size(d); off += BS) {
		if (dev_pread(d, buf, BS, off))
			return 0;
		for (uint32_t i = 0; i < BS; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	}
	return h;
}

/* A formatted, cleanly closed journal on RAM devices. */
static int fresh_from(struct rig *r, bool jbd2)
{
	struct ujbd_opts o;
	int rc = rig_devs(r, BS, JBLOCKS, DBLOCKS, NULL, NULL);

	rig_opts_from(&o, true, jbd2);
	if (!rc)
		rc = rig_open(r, &o);
	if (!rc) {
		rc = ujbd_close(r->j);
		r->j = NULL;
	}
	return rc;
}

static int fresh(struct rig *r)
{
	return fresh_from(r, false);
}

/* Open must fail with code and a message containing msg, and write nothing. */
static void refused(struct rig *r, const struct ujbd_opts *o, int code, const char *msg)
{
	uint64_t before = hash_dev(r->jd);
	struct jbd_err err = { 0, "" };
	struct ujbd *j = (struct ujbd *)1;

	T_EQ(ujbd_open(&r->loc, o, &j, &err), code);
	T_CHECK(j == NULL);
	if (!strstr(err.msg, msg))
		T_FAILF("message '%s' lacks '%s'", err.msg, msg);
	T_EQ_U64(hash_dev(r->jd), before);
}

static void t_bad_options(void)
{
	struct ujbd_opts o;
	struct rig r;

	T_EQ(fresh(&r), 0);
	for (int i = 0; i < 10; i++) {
		rig_opts(&o, false);
		switch (i) {
		case 0: o.data_mode = (enum ujbd_data_mode)9; break;
		case 1: o.wake = (enum ujbd_wake_policy)9; break;
		case 2: o.journal_sync = (enum ujbd_sync_policy)9; break;
		case 3: o.under_commit = (enum ujbd_under_commit)9; break;
		case 4: o.commit_interval_ns = 0; break;
		case 5: o.wakeup_cpu_ns = 2 * RT_NS_PER_S; break;
		case 6: o.min_batch_time_ns = o.max_batch_time_ns + 1; break;
		case 7: o.commit_ioprio = RT_IOPRIO(7, 0); break;
		case 8: o.commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 8); break;
		case 9: o.max_transaction_blocks = JBLOCKS; break;
		}
		static const char *const msg[] = {
			"invalid option value", "invalid option value", "invalid option value",
			"invalid option value", "commit_interval", "wakeup_cpu_ns",
			"min_batch_time", "invalid commit ioprio", "invalid commit ioprio",
			"cannot hold two transactions",
		};
		refused(&r, &o, -EINVAL, msg[i]);
		if (t_cur_failed) {
			T_FAILF("case %d", i);
			break;
		}
	}
	rig_free(&r);
}

static void t_bad_location(void)
{
	struct ujbd_opts o;
	struct jbd_err err;
	struct ujbd *j;
	struct rig r;
	struct jbd_extent two[1];

	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open(NULL, &o, &j, &err), -EINVAL);
	struct jbd_loc l = r.loc;
	l.j_data = NULL;
	T_EQ(ujbd_open(&l, &o, &j, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "a journal device and a data device"));
	/* format: the superblock first, sizes that fit */
	rig_opts(&o, true);
	l = r.loc;
	two[0] = (struct jbd_extent){ 0, 0, JBLOCKS };
	l.j_map = two;
	l.j_sb_block = 1;
	T_EQ(ujbd_open(&l, &o, &j, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "superblock at journal block 0"));
	o.format_opts.blocksize = 1024;
	refused(&r, &o, -EINVAL, "do not match the journal location");
	o.format_opts.blocksize = 0;
	o.format_opts.blocks = JBLOCKS + 1;
	refused(&r, &o, -EINVAL, "do not match the journal location");
	rig_free(&r);
}

/* One committed transaction appended offline (block 5), unreplayed. */
static int append(struct rig *r, struct jbd_write_result *w)
{
	static uint8_t data[BS];
	struct jbd_write_block wb = { 5, data };
	struct jbd_txn_desc d = { .blocks = &wb, .nblocks = 1, .commit_sec = 1 };
	struct jbd_journal jj;
	struct jbd_err err;
	int rc = jbd_journal_load(&r->loc, &jj, &err);

	memset(data, 'A', sizeof(data));
	return rc ? rc : jbd_write_txn(&jj, &d, w, &err);
}

static void t_needs_recovery(void)
{
	struct jbd_write_result w;
	struct ujbd_opts o;
	struct rig r;

	T_EQ(fresh(&r), 0);
	T_EQ(append(&r, &w), 0);
	rig_opts(&o, false);
	o.recover = false;
	refused(&r, &o, -EUCLEAN, "the journal needs recovery");
	rig_free(&r);
}

/* A journaled copy with a bad checksum: recovery skips it (as e2fsck) and
 * the open refuses, saying so. The journal is formatted jbd2's way: with
 * ASYNC_COMMIT (the default's AUTO here) such a transaction is a torn one,
 * never acknowledged, and the replay ends before it instead. */
static void t_skipped_block(void)
{
	struct jbd_write_result w;
	struct ujbd_opts o;
	struct jbd_err err;
	struct ujbd *j;
	struct rig r;
	static uint8_t b[BS];

	T_EQ(fresh_from(&r, true), 0);
	T_EQ(append(&r, &w), 0);
	T_EQ(dev_pread(r.jd, b, BS, (uint64_t)(w.start_block + 1) * BS), 0);
	b[7] ^= 1;
	T_EQ(dev_pwrite(r.jd, b, BS, (uint64_t)(w.start_block + 1) * BS, 0), 0);
	rig_opts(&o, false);
	T_EQ(ujbd_open(&r.loc, &o, &j, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "recovery skipped blocks with bad checksums"));
	rig_free(&r);
}

/* Every allocation of an open, failed in turn: an error (-ENOMEM, or what
 * the failed call became) with a message and nothing left open; the next
 * open, without faults, works. */
static void t_open_nomem(void)
{
	struct ujbd_opts o;
	struct jbd_err err;
	struct ujbd *j;
	struct rig r;
	long n, failed;

	if (!HAVE_ALLOC_FAULTS)
		T_SKIP("a sanitizer owns malloc: no allocation faults");
	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	for (n = 1; n < 10000; n++) {
		j = NULL;
		alloc_fault_arm(n);
		int rc = ujbd_open(&r.loc, &o, &j, &err);
		failed = alloc_fault_disarm();
		if (!failed) {
			T_EQ(rc, 0);
			T_EQ(ujbd_close(j), 0);
			break;
		}
		if (rc >= 0 || j || !err.msg[0]) {
			T_FAILF("allocation %ld: rc %d, journal %p, message '%s'", n, rc, (void *)j,
				err.msg);
			if (j)
				ujbd_close_hard(j);
			break;
		}
	}
	fprintf(stderr, "    %ld allocations of an open failed in turn\n", n - 1);
	T_CHECK(n > 10);
	T_EQ(ujbd_open(&r.loc, &o, &j, &err), 0);
	T_EQ(rig_write(j, 9, 1, 3, true, NULL), 0);
	T_EQ(ujbd_close(j), 0);
	T_CHECK(rig_has(&r, 9, 3));
	rig_free(&r);
}

/* A v1 superblock has no feature words, so no REVOKE: -EOPNOTSUPP. */
static void t_revoke_v1(void)
{
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct jbd_journal jj;
	struct jbd_err err;
	struct rig r;

	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, NULL), 0);
	struct jbd_format_opts f = { .blocksize = BS, .blocks = JBLOCKS };
	T_EQ(jbd_format(r.jd, &f, &err), 0);
	T_EQ(jbd_journal_load(&r.loc, &jj, &err), 0);
	jbd_put_be32(&jj.j_sb.s_header.h_blocktype, JBD2_SUPERBLOCK_V1);
	T_EQ(jbd_journal_write_sb(&jj, &err), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_revoke(h, 7), -EOPNOTSUPP);
	T_EQ(ujbd_stop(h), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

/* Asking for (or waiting on) a tid that was never started: -UJBD_ENOTID. */
static void t_unknown_tid(void)
{
	struct ujbd_opts o;
	struct rig r;

	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	ujbd_tid_t far = ujbd_running_tid(r.j) + 1000;
	T_EQ(ujbd_commit_tid(r.j, far), -UJBD_ENOTID);
	T_EQ(ujbd_wait_tid(r.j, far), -UJBD_ENOTID);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

/* A block with a committed copy, forgotten in a later transaction, stays
 * on it without giving its credit back; taken again it needs one more: a
 * handle that has none left gets -UJBD_ENOCREDIT. */
static void t_forget_no_credit(void)
{
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b, *b2;
	struct rig r;

	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 12, 1, 1, true, NULL), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_get_write_access(h, 12, &b), 0);
	T_EQ(ujbd_dirty_metadata(h, b), 0);
	T_EQ(ujbd_forget(h, b), 0);
	T_EQ(ujbd_get_write_access(h, 12, &b2), -UJBD_ENOCREDIT);
	ujbd_buf_put(b);
	T_EQ(ujbd_stop(h), -UJBD_ENOCREDIT); /* the handle's first error */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

/* A data block past the data device: -EINVAL, nothing taken. */
static void t_write_data_bounds(void)
{
	static uint8_t data[BS];
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct rig r;

	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(ujbd_start(r.j, 1, &h), 0);
	T_EQ(ujbd_write_data(h, DBLOCKS, data), -EINVAL);
	T_EQ(ujbd_stop(h), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	rig_free(&r);
}

static void checkpoint_thread(void *arg)
{
	int *rc = arg;

	*rc = ujbd_checkpoint(*(struct ujbd **)(rc + 2));
}

/* The journal aborts while a handle is open (a checkpoint write of an
 * earlier transaction fails on another thread): every call of that handle
 * then fails (-EROFS), its stop says -EIO, and nothing of it commits. */
static void t_abort_with_handle_open(void)
{
	struct dev_fault_opts fo = { .fail_write_nth = 1 };
	static uint8_t data[BS];
	struct ujbd_opts o;
	struct ujbd_handle *h;
	struct ujbd_buf *b = NULL;
	struct dev *dmem, *dd;
	struct rig r;
	rt_thread *t;
	struct { int rc, pad; struct ujbd *j; } cp;

	T_EQ(dev_mem_new((uint64_t)DBLOCKS * BS, 512, &dmem), 0);
	T_EQ(dev_fault_new(dmem, &fo, &dd), 0);
	T_EQ(rig_devs(&r, BS, JBLOCKS, DBLOCKS, NULL, dd), 0);
	rig_opts(&o, true);
	T_EQ(rig_open(&r, &o), 0);
	T_EQ(rig_write(r.j, 10, 2, 1, true, NULL), 0); /* durable, not yet home */
	T_EQ(ujbd_start(r.j, 4, &h), 0);
	T_EQ(ujbd_get_write_access(h, 20, &b), 0);
	cp.j = r.j;
	T_EQ(rt_thread_create(&t, "ckpt", checkpoint_thread, &cp), 0);
	T_EQ(rt_thread_join(t), 0);
	T_CHECK(cp.rc < 0);                          /* its home write failed */
	T_EQ(ujbd_extend(h, 1), -EROFS);
	T_EQ(ujbd_dirty_metadata(h, b), -EROFS);
	T_EQ(ujbd_forget(h, b), -EROFS);
	T_EQ(ujbd_revoke(h, 21), -EROFS);
	memset(data, 'D', sizeof(data));
	T_EQ(ujbd_write_data(h, 22, data), -EROFS);
	ujbd_buf_put(b);
	T_EQ(ujbd_get_write_access(h, 23, &b), -EROFS);
	T_EQ(ujbd_stop(h), -EIO);
	T_EQ(ujbd_close(r.j), -EIO);
	r.j = NULL;
	rig_free(&r);
}

struct life {
	struct ujbd *j;
	long nth, failed;
	int rc;
	uint32_t gen;
};

/* One handle's life (start, two blocks, stop) with allocation nth failing;
 * a thread of its own, so the handle and its slot are allocated anew. */
static void life_thread(void *arg)
{
	struct life *l = arg;

	alloc_fault_arm(l->nth);
	l->rc = rig_write(l->j, 40, 2, l->gen, false, NULL);
	l->failed = alloc_fault_disarm();
}

static void t_handle_nomem(void)
{
	struct ujbd_opts o;
	struct rig r;
	long n;

	if (!HAVE_ALLOC_FAULTS)
		T_SKIP("a sanitizer owns malloc: no allocation faults");
	T_EQ(fresh(&r), 0);
	rig_opts(&o, false);
	T_EQ(rig_open(&r, &o), 0);
	for (n = 1; n < 1000; n++) {
		struct life l = { r.j, n, 0, 0, (uint32_t)n };
		rt_thread *t;

		T_EQ(rt_thread_create(&t, "life", life_thread, &l), 0);
		T_EQ(rt_thread_join(t), 0);
		if (!l.failed) {
			T_EQ(l.rc, 0);
			break;
		}
		if (l.rc != 0 && l.rc != -ENOMEM)
			T_FAILF("allocation %ld: rc %d", n, l.rc);
	}
	fprintf(stderr, "    %ld allocations of a handle's life failed in turn\n", n - 1);
	T_CHECK(n > 1);
	T_EQ(rig_write(r.j, 50, 1, 9, true, NULL), 0); /* the journal goes on */
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_CHECK(rig_has(&r, 50, 9));
	T_CHECK(rig_has(&r, 40, (uint32_t)n));
	rig_free(&r);
}

static void no_trace(void *arg, const struct ujbd_trace_event *ev)
{
	(void)arg;
	(void)ev;
}

/* A handle's life on the locked path (a trace hook keeps handles off the
 * per-thread slots): start, a write access, a data block, stop. */
static void locked_life_thread(void *arg)
{
	static uint8_t data[BS];
	struct life *l = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *b;

	alloc_fault_arm(l->nth);
	l->rc = ujbd_start(l->j, 2, &h);
	if (!l->rc) {
		int rc = ujbd_get_write_access(h, 40, &b);
		if (!rc) {
			rc = ujbd_dirty_metadata(h, b);
			ujbd_buf_put(b);
		}
		int rc2 = ujbd_write_data(h, 45, data);
		int rc3 = ujbd_stop(h);
		l->rc = rc ? rc : rc2 ? rc2 : rc3;
	}
	l->failed = alloc_fault_disarm();
}

/* Each allocation of that life failing in turn, on a fresh journal each
 * time (the handle and buffer-head caches start empty): the handle, the
 * buffer head of a write access and of a data block. */
static void t_handle_nomem_locked(void)
{
	struct ujbd_opts o;
	struct rig r;
	long n;

	if (!HAVE_ALLOC_FAULTS)
		T_SKIP("a sanitizer owns malloc: no allocation faults");
	rig_opts(&o, false);
	for (n = 1; n < 1000; n++) {
		struct life l = { NULL, n, 0, 0, 0 };
		rt_thread *t;

		T_EQ(fresh(&r), 0);
		T_EQ(rig_open(&r, &o), 0);
		ujbd_set_trace_hook(r.j, no_trace, NULL);
		l.j = r.j;
		T_EQ(rt_thread_create(&t, "life", locked_life_thread, &l), 0);
		T_EQ(rt_thread_join(t), 0);
		if (l.rc != 0 && l.rc != -ENOMEM)
			T_FAILF("allocation %ld: rc %d", n, l.rc);
		T_EQ(rig_write(r.j, 50, 1, 9, true, NULL), 0); /* the journal goes on */
		T_EQ(ujbd_close(r.j), 0);
		r.j = NULL;
		rig_free(&r);
		if (!l.failed) {
			T_EQ(l.rc, 0);
			break;
		}
	}
	fprintf(stderr, "    %ld allocations of a locked handle's life failed in turn\n", n - 1);
	T_CHECK(n > 3);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_bad_options);
	T_RUN(t_bad_location);
	T_RUN(t_needs_recovery);
	T_RUN(t_skipped_block);
	T_RUN(t_open_nomem);
	T_RUN(t_revoke_v1);
	T_RUN(t_unknown_tid);
	T_RUN(t_handle_nomem);
	T_RUN(t_handle_nomem_locked);
	T_RUN(t_forget_no_credit);
	T_RUN(t_write_data_bounds);
	T_RUN(t_abort_with_handle_open);
	return t_done(argv[0]);
}

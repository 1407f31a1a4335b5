/*
 * Abort semantics under injected I/O errors (dev_fault_new on the journal
 * device, and on the data device for ordered data):
 *   - a failed journal write or flush aborts the journal: the transaction's
 *     wait_tid returns -EIO (also when a later flush succeeds: the failure
 *     is not forgiven), no commit is acknowledged after it, new handles get
 *     -EROFS, ujbd_close returns the error;
 *   - s_errno is recorded in the superblock before anyone is told of the
 *     abort (checked the moment the failure is returned), and the next
 *     ujbd_open reports the earlier error;
 *   - a handle larger than any transaction fails at start with -UJBD_ETOOBIG
 *     instead of hanging (an alarm turns a hang into a failure).
 * Every case runs in a sim world (deterministic: the Nth write is the same
 * write on every run), for every write and flush the commit path issues.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "ujbd/dev.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define BS 1024u
#define JLEN 256u
#define NDATA 128u

/* One scenario's devices and journal. */
struct abcase;

struct ab {
	struct dev_fault_opts jfo, dfo; /* faults: journal and data device */
	enum ujbd_data_mode mode;
	bool async_commit;
	bool jbd2;                      /* ujbd_opts_jbd2: ordered data goes home */
	bool record;                    /* a rec device under the journal's fault */
	struct dev *jrec;
	struct dev *jdev, *ddev;        /* fault wrappers */
	struct jbd_loc loc;
	struct jbd_extent ext;
	struct ujbd *j;
	/* outcome */
	int line;
	char msg[300];
	struct dev_fault_counts jc, dc;
	const struct abcase *kase;
};

#define A_CHECK(a, cond)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			ab_fail(a, __LINE__, #cond);                       \
			goto out;                                          \
		}                                                          \
	} while (0)

static void ab_fail(struct ab *a, int line, const char *what)
{
	if (!a->line) {
		a->line = line;
		snprintf(a->msg, sizeof(a->msg), "%s", what);
	}
}

/* Devices: a formatted journal behind a fault device, a data device. */
static int ab_devices(struct ab *a)
{
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = JLEN,
				      .csum = JBD_CSUM_KIND_V3, .uuid = { 1, 2, 3 },
				      .async_commit = a->async_commit };
	struct dev *jm, *dm;
	int err = dev_mem_new((uint64_t)JLEN * BS, 512, &jm);

	if (err < 0)
		return err;
	err = jbd_format(jm, &fo, NULL);
	if (err == 0 && a->record) {
		err = dev_rec_new(jm, &a->jrec);
		if (err == 0)
			jm = a->jrec;
	}
	if (err == 0)
		err = dev_fault_new(jm, &a->jfo, &a->jdev);
	if (err < 0) {
		dev_close(jm);
		return err;
	}
	err = dev_mem_new((uint64_t)NDATA * BS, 512, &dm);
	if (err == 0 && (err = dev_fault_new(dm, &a->dfo, &a->ddev)) < 0)
		dev_close(dm);
	if (err < 0)
		return err;
	a->ext = (struct jbd_extent){ 0, 0, JLEN };
	a->loc = (struct jbd_loc){ .j_dev = a->jdev, .j_blocksize = BS,
		.j_map = &a->ext, .j_nmap = 1, .j_len = JLEN, .j_sb_block = 0,
		.j_data = a->ddev, .j_data_blocks = NDATA };
	return 0;
}

static int ab_open(struct ab *a, struct jbd_err *jerr, bool clear_error)
{
	struct ujbd_opts o;

	if (a->jbd2)
		ujbd_opts_jbd2(&o);
	else
		ujbd_opts_default(&o);
	o.clear_error = clear_error;
	o.data_mode = a->mode;
	o.async_commit = a->async_commit;
	o.commit_interval_ns = 50 * RT_NS_PER_MS;
	return ujbd_open(&a->loc, &o, &a->j, jerr);
}

/* One handle writing blocks [first, first+n) (and one ordered data block
 * when data != 0); returns its tid through *tid. */
static int ab_handle(struct ujbd *j, uint64_t first, unsigned n, uint64_t data,
		     ujbd_tid_t *tid)
{
	struct ujbd_handle *h;
	uint8_t buf[BS];
	int err = ujbd_start(j, n + 1, &h), err2;

	if (err < 0)
		return err;
	*tid = ujbd_handle_tid(h);
	for (unsigned i = 0; i < n && err == 0; i++) {
		struct ujbd_buf *b;

		err = ujbd_get_write_access(h, first + i, &b);
		if (err < 0)
			break;
		memset(ujbd_buf_data(b), (int)(0x40 + i), BS);
		err = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	if (err == 0 && data) {
		memset(buf, 0xda, BS);
		err = ujbd_write_data(h, data, buf);
	}
	err2 = ujbd_stop(h);
	return err < 0 ? err : err2;
}

/* s_errno as on the journal device now. */
static int32_t ab_sb_errno(struct ab *a)
{
	struct jbd2_sb sb;

	if (dev_pread(a->jdev, &sb, sizeof(sb), 0) < 0)
		return INT32_MIN;
	return (int32_t)jbd_get_be32(sb.s_errno);
}

static void ab_close_devices(struct ab *a)
{
	if (a->jdev) {
		dev_fault_counts(a->jdev, &a->jc);
		dev_close(a->jdev);
	}
	if (a->ddev) {
		dev_fault_counts(a->ddev, &a->dc);
		dev_close(a->ddev);
	}
	a->jdev = a->ddev = NULL;
}

/* ---- the probe: which journal writes and flushes T2's commit issues ---- */

#define MAXW 64

/* What abort_main's sequence does to the journal device, fault-free. */
struct probe {
	enum ujbd_data_mode mode;
	bool async_commit;
	uint64_t w0;              /* writes seen after open */
	uint64_t w1, f1;          /* writes/flushes seen when T1 was acked */
	uint64_t w2, f2;          /* ... when T2 was acked */
	bool sb[MAXW];            /* the (w1+i+1)-th write is the superblock */
	int err;
};

static void probe_main(void *arg)
{
	struct probe *p = arg;
	struct ab a = { .mode = p->mode, .async_commit = p->async_commit, .record = true };
	struct dev_fault_counts c;
	struct jbd_err jerr;
	size_t n1, nw = 0;
	ujbd_tid_t t1 = 0, t2 = 0;

	p->err = ab_devices(&a);
	if (p->err == 0)
		p->err = ab_open(&a, &jerr, false);
	if (p->err < 0)
		goto out;
	dev_fault_counts(a.jdev, &c);
	p->w0 = c.writes;
	p->err = ab_handle(a.j, 10, 3, 0, &t1);
	if (p->err == 0)
		p->err = ujbd_sync(a.j);
	dev_fault_counts(a.jdev, &c);
	p->w1 = c.writes;
	p->f1 = c.flushes;
	n1 = dev_rec_count(a.jrec);
	if (p->err == 0)
		p->err = ab_handle(a.j, 20, 3, 101, &t2);
	if (p->err == 0)
		p->err = ujbd_commit_tid(a.j, t2);
	if (p->err == 0)
		p->err = ujbd_wait_tid(a.j, t2);
	dev_fault_counts(a.jdev, &c);
	p->w2 = c.writes;
	p->f2 = c.flushes;
	/* completion order may differ from submission order: classify by the
	 * recorder's entries, which is what the fault device counted too */
	for (size_t i = n1; i < dev_rec_count(a.jrec) && nw < MAXW; i++) {
		struct dev_rec_entry e;

		if (dev_rec_entry(a.jrec, i, &e) == 0 && e.kind == DEV_REC_WRITE)
			p->sb[nw++] = e.off == 0;
	}
	if (p->err == 0)
		p->err = ujbd_close(a.j);
	else
		ujbd_close_hard(a.j);
out:
	ab_close_devices(&a);
}

static int run_sim(uint64_t seed, void (*fn)(void *), void *arg)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = seed };
	rt_world *w;
	int err = rt_world_new(&wo, &w);

	if (err < 0)
		return err;
	err = rt_world_run(w, "abort-test", fn, arg);
	rt_world_free(w);
	return err;
}

static struct probe g_probe = { .mode = UJBD_DATA_ORDERED };
/* writeback with data: the async commit takes its write-then-flush path
 * (a commit whose log is one run with nothing in flight is one FUA write,
 * no separate flush) */
static struct probe g_probe_async = { .mode = UJBD_DATA_WRITEBACK, .async_commit = true };

static void test_probe(void)
{
	T_EQ(run_sim(1, probe_main, &g_probe), 0);
	T_EQ(g_probe.err, 0);
	T_EQ(run_sim(1, probe_main, &g_probe_async), 0);
	T_EQ(g_probe_async.err, 0);
	fprintf(stderr, "    T2's commit: %llu journal writes, %llu flushes (ordered); "
		"%llu writes, %llu flushes (writeback with data, async commit)\n",
		(unsigned long long)(g_probe.w2 - g_probe.w1),
		(unsigned long long)(g_probe.f2 - g_probe.f1),
		(unsigned long long)(g_probe_async.w2 - g_probe_async.w1),
		(unsigned long long)(g_probe_async.f2 - g_probe_async.f1));
	T_CHECK(g_probe.w2 > g_probe.w1);   /* the commit wrote the journal */
}

/* ---- a journal I/O error during a commit -------------------------------- */

/*
 * T1 commits cleanly and is acknowledged; T2's commit meets the injected
 * error (the n-th journal write or flush after T1's ack). Then: T2's wait is
 * -EIO when a log write or flush of T2 failed (twice: the answer does not
 * change, even though later I/O succeeds); a failed superblock write may
 * come after T2 was durable. Either way the journal is aborted: new handles
 * get -EROFS, sync fails, close reports the error; unless every later write
 * fails too (sticky), s_errno is on disk, the next open refuses with
 * -EUCLEAN, and clear_error opens it and a clean close forgets it.
 */
struct abcase {
	const struct probe *pr;
	uint64_t n;
	bool flush, sticky;
};

static void abort_main(void *arg)
{
	struct ab *a = arg;
	const struct abcase *k = a->kase;
	struct jbd_err jerr = { 0 };
	struct ujbd_handle *h;
	struct jbd_journal jj;
	ujbd_tid_t t1 = 0, t2 = 0;
	bool sb = !k->flush && k->n <= MAXW && k->pr->sb[k->n - 1];
	int err;

	A_CHECK(a, ab_devices(a) == 0);
	A_CHECK(a, ab_open(a, &jerr, false) == 0);
	A_CHECK(a, ab_handle(a->j, 10, 3, 0, &t1) == 0);
	A_CHECK(a, ujbd_sync(a->j) == 0);
	A_CHECK(a, ujbd_wait_tid(a->j, t1) == 0);
	/* the second transaction's commit meets the fault */
	err = ab_handle(a->j, 20, 3, 101, &t2);
	A_CHECK(a, err == 0);
	A_CHECK(a, ujbd_tid_gt(t2, t1));
	err = ujbd_commit_tid(a->j, t2);
	A_CHECK(a, err == 0 || err == -EIO || err == -EROFS);
	/* told of the abort: it is on disk already (unless every write fails) */
	A_CHECK(a, err == 0 || k->sticky || ab_sb_errno(a) != 0);
	err = ujbd_wait_tid(a->j, t2);
	if (sb)
		A_CHECK(a, err == 0 || err == -EIO);
	else
		A_CHECK(a, err == -EIO);
	A_CHECK(a, err == 0 || k->sticky || ab_sb_errno(a) != 0);
	A_CHECK(a, ujbd_wait_tid(a->j, t2) == err);
	A_CHECK(a, ujbd_wait_tid(a->j, t1) == 0);   /* T1 stays acknowledged */
	/* aborted: nothing new, nothing acknowledged */
	A_CHECK(a, ujbd_start(a->j, 1, &h) == -EROFS);
	A_CHECK(a, ujbd_sync(a->j) < 0);
	A_CHECK(a, ujbd_close(a->j) < 0);
	a->j = NULL;
	if (k->sticky)
		goto out;   /* the superblock cannot be written either */
	/* s_errno on disk, and the next open refuses with the earlier error */
	A_CHECK(a, jbd_journal_load(&a->loc, &jj, &jerr) == 0);
	A_CHECK(a, (int32_t)jbd_get_be32(jj.j_sb.s_errno) != 0);
	memset(&jerr, 0, sizeof(jerr));
	err = ab_open(a, &jerr, false);
	if (err == 0)
		ujbd_close_hard(a->j);
	a->j = NULL;
	A_CHECK(a, err == -EUCLEAN);
	A_CHECK(a, jerr.msg[0] != '\0');
	/* once checked, clear_error opens it (recovering what committed), and
	 * a clean close forgets it */
	A_CHECK(a, ab_open(a, &jerr, true) == 0);
	A_CHECK(a, ujbd_close(a->j) == 0);
	a->j = NULL;
	A_CHECK(a, jbd_journal_load(&a->loc, &jj, &jerr) == 0);
	A_CHECK(a, jbd_get_be32(jj.j_sb.s_errno) == 0);
	/* T1 (acknowledged) is home; T2 (failed) entirely or not at all */
	{
		uint8_t blk[BS];
		int t2_new = 0;

		for (unsigned i = 0; i < 3; i++) {
			A_CHECK(a, dev_pread(a->ddev, blk, BS, (uint64_t)(10 + i) * BS) == 0);
			A_CHECK(a, blk[0] == 0x40 + i && blk[BS - 1] == 0x40 + i);
			A_CHECK(a, dev_pread(a->ddev, blk, BS, (uint64_t)(20 + i) * BS) == 0);
			A_CHECK(a, blk[0] == 0 || blk[0] == 0x40 + i);
			t2_new += blk[0] == 0x40 + i;
		}
		if (t2_new != 0 && t2_new != 3)
			ab_fail(a, __LINE__, "T2 (never acknowledged) partly replayed after the abort");
		A_CHECK(a, t2_new == 0 || t2_new == 3);
	}
out:
	if (a->j)
		ujbd_close_hard(a->j);
	ab_close_devices(a);
}

/* abort_main for every write (or flush) between T1's and T2's acks. */
static void sweep(const struct probe *pr, bool flush, bool sticky)
{
	uint64_t count = flush ? pr->f2 - pr->f1 : pr->w2 - pr->w1;

	if (count == 0)
		T_SKIP("T2's commit issued no %s", flush ? "separate flush" : "write");
	for (uint64_t n = 1; n <= count; n++) {
		struct abcase k = { pr, n, flush, sticky };
		struct ab a = { .mode = pr->mode, .async_commit = pr->async_commit,
				.kase = &k };

		if (flush)
			a.jfo.fail_flush_nth = pr->f1 + n;
		else
			a.jfo.fail_write_nth = pr->w1 + n;
		a.jfo.sticky = sticky;
		T_EQ(run_sim(7 + n, abort_main, &a), 0);
		if (a.line) {
			T_FAILF("%s %s #%llu of %llu%s: line %d: %s", sticky ? "sticky" : "single",
				flush ? "flush" : "write", (unsigned long long)n,
				(unsigned long long)count,
				!flush && n <= MAXW && pr->sb[n - 1] ? " (superblock)" : "",
				a.line, a.msg);
			return;
		}
		if ((flush ? a.jc.flush_errors : a.jc.write_errors) == 0) {
			T_FAILF("fault #%llu never fired", (unsigned long long)n);
			return;
		}
	}
	fprintf(stderr, "    %llu %s %s failures: each aborted as specified\n",
		(unsigned long long)count, sticky ? "sticky" : "single",
		flush ? "flush" : "write");
}

static void test_abort_on_write_error(void)
{
	sweep(&g_probe, false, false);
}

static void test_abort_on_sticky_write_error(void)
{
	sweep(&g_probe, false, true);
}

static void test_abort_on_write_error_async(void)
{
	sweep(&g_probe_async, false, false);
}

static void test_abort_on_flush_error_async(void)
{
	sweep(&g_probe_async, true, false);
}

/* ---- ordered data that fails to reach the data device ------------------- */

struct odata {
	bool flush;      /* fail the data device's flush instead of the write */
	int wait_err, line;
};

static void odata_main(void *arg)
{
	struct odata *o = arg;
	/* jbd2's way: the ordered data written home before the commit block
	 * (ujbd's default journals a transaction's first data blocks) */
	struct ab a = { .mode = UJBD_DATA_ORDERED, .jbd2 = true };
	struct jbd_err jerr;
	ujbd_tid_t t = 0;

	if (o->flush)
		a.dfo.fail_flush_nth = 1;  /* the flush making the data durable */
	else
		a.dfo.fail_write_nth = 1;  /* the ordered data write */
	if (ab_devices(&a) < 0 || ab_open(&a, &jerr, false) < 0) {
		o->line = __LINE__;
		goto out;
	}
	if (ab_handle(a.j, 10, 2, 100, &t) < 0) {
		o->line = __LINE__;
		goto out;
	}
	ujbd_commit_tid(a.j, t);
	o->wait_err = ujbd_wait_tid(a.j, t);
out:
	if (a.j)
		ujbd_close_hard(a.j);
	ab_close_devices(&a);
	if (!o->line && (o->flush ? a.dc.flush_errors : a.dc.write_errors) != 1)
		o->line = __LINE__;   /* the fault never fired */
}

/* "No fsync returns success after a failed write of its blocks". */
static void test_ordered_data_error_fails_wait(void)
{
	struct odata o = { 0 };

	T_EQ(run_sim(3, odata_main, &o), 0);
	T_EQ(o.line, 0);
	T_EQ(o.wait_err, -EIO);
}

/*
 * The data device is not the journal device: the commit block's PREFLUSH
 * flushes only the journal's cache, so the commit must flush the data
 * device before it (a commit that never does leaves this fault unfired),
 * and a failure of that flush fails the transaction's wait.
 */
static void test_ordered_data_flush_error_fails_wait(void)
{
	struct odata o = { .flush = true };

	T_EQ(run_sim(3, odata_main, &o), 0);
	T_EQ(o.line, 0);
	T_EQ(o.wait_err, -EIO);
}

/* ---- a sync handle whose commit fails ----------------------------------- */

struct syncfail {
	int stop_err, line;
};

static void syncfail_main(void *arg)
{
	struct syncfail *s = arg;
	struct ab a = { .mode = UJBD_DATA_ORDERED };
	struct jbd_err jerr;
	struct ujbd_handle *h;
	struct ujbd_buf *b;

	a.jfo.fail_write_nth = g_probe.w0 + 1;  /* first write of the first commit */
	a.jfo.sticky = true;
	if (ab_devices(&a) < 0 || ab_open(&a, &jerr, false) < 0 || ujbd_start(a.j, 2, &h) < 0) {
		s->line = __LINE__;
		goto out;
	}
	ujbd_handle_set_sync(h, true);
	if (ujbd_get_write_access(h, 5, &b) == 0) {
		memset(ujbd_buf_data(b), 0x55, BS);
		ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	s->stop_err = ujbd_stop(h);
out:
	if (a.j)
		ujbd_close_hard(a.j);
	ab_close_devices(&a);
}

static void test_sync_handle_reports_commit_error(void)
{
	struct syncfail s = { 0 };

	T_EQ(run_sim(4, syncfail_main, &s), 0);
	T_EQ(s.line, 0);
	T_EQ(s.stop_err, -EIO);
}

/* ---- a handle that can never fit ---------------------------------------- */

struct big {
	int err_huge, err_max_plus, err_max, err_extend, line;
};

static void big_main(void *arg)
{
	struct big *g = arg;
	struct ab a = { .mode = UJBD_DATA_ORDERED };
	struct ujbd_opts o;
	struct jbd_err jerr;
	struct ujbd_handle *h;

	ujbd_opts_default(&o);
	o.max_transaction_blocks = 40;
	if (ab_devices(&a) < 0 || ujbd_open(&a.loc, &o, &a.j, &jerr) < 0) {
		g->line = __LINE__;
		goto out;
	}
	g->err_huge = ujbd_start(a.j, JLEN * 4, &h);
	if (g->err_huge == 0)
		ujbd_stop(h);
	g->err_max_plus = ujbd_start(a.j, 41, &h);
	if (g->err_max_plus == 0)
		ujbd_stop(h);
	g->err_max = ujbd_start(a.j, 8, &h);
	if (g->err_max == 0) {
		g->err_extend = ujbd_extend(h, JLEN * 4);
		ujbd_stop(h);
	}
out:
	if (a.j)
		ujbd_close(a.j);
	ab_close_devices(&a);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "test_abort: a start hung (alarm)\n";
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(2);
	_exit(1);
}

static void test_too_big_handle_enospc(void)
{
	struct big g = { 0 };

	signal(SIGALRM, on_alarm);
	alarm(20);
	T_EQ(run_sim(5, big_main, &g), 0);
	alarm(0);
	T_EQ(g.line, 0);
	T_EQ(g.err_huge, -UJBD_ETOOBIG);
	T_EQ(g.err_max_plus, -UJBD_ETOOBIG);
	T_EQ(g.err_max, 0);
	T_EQ(g.err_extend, -UJBD_ETOOBIG);
}

int main(int argc, char **argv)
{
	(void)argc;
	signal(SIGALRM, on_alarm);
	alarm(50);  /* no single case may hang the suite */
	T_RUN(test_probe);
	T_RUN(test_abort_on_write_error);
	T_RUN(test_abort_on_sticky_write_error);
	T_RUN(test_abort_on_write_error_async);
	T_RUN(test_abort_on_flush_error_async);
	T_RUN(test_ordered_data_error_fails_wait);
	T_RUN(test_ordered_data_flush_error_fails_wait);
	T_RUN(test_sync_handle_reports_commit_error);
	T_RUN(test_too_big_handle_enospc);
	return t_done(argv[0]);
}

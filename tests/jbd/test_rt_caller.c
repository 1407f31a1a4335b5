/*
 * caller_commit and polled commit I/O: an fsync that commits on its own
 * thread, one commit at a time whoever runs it, kjournald's timer left
 * alone, the fsync counted once; on file devices the commit's last write
 * is run by the committing thread itself (polled), so the commit ends
 * there, not on the device's completion thread.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "pagecache.h"
#include "rt_rig.h"

#define BS 1024u
#define DB 4000u  /* data blocks from here (the journal is 0..1023) */

/* ---- what the trace hook saw ------------------------------------------- */

#define TRMAX 512

struct seen {
	unsigned n;
	enum ujbd_trace_kind k[TRMAX];
	ujbd_tid_t tid[TRMAX];
	char thread[TRMAX][16];
};

static void seen_hook(void *arg, const struct ujbd_trace_event *ev)
{
	struct seen *s = arg;

	if ((ev->kind != UJBD_TR_START_COMMIT && ev->kind != UJBD_TR_END_COMMIT) ||
	    s->n >= TRMAX)
		return;
	s->k[s->n] = ev->kind;
	s->tid[s->n] = ev->tid;
	snprintf(s->thread[s->n], sizeof(s->thread[0]), "%s", rt_self_name());
	s->n++;
}

/* Commits never overlap: start, end, start, end ... each pair one tid,
 * tids growing. Returns the number of commits, or -1. */
static int seen_commits(const struct seen *s)
{
	for (unsigned i = 0; i + 1 < s->n; i += 2) {
		if (s->k[i] != UJBD_TR_START_COMMIT || s->k[i + 1] != UJBD_TR_END_COMMIT ||
		    s->tid[i] != s->tid[i + 1] || (i && !ujbd_tid_gt(s->tid[i], s->tid[i - 1])))
			return -1;
	}
	return s->n % 2 ? -1 : (int)(s->n / 2);
}

/* How many commit events ran on a thread named name. */
static unsigned seen_on(const struct seen *s, enum ujbd_trace_kind k, const char *name)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n; i++)
		n += s->k[i] == k && strcmp(s->thread[i], name) == 0;
	return n;
}

static int sim_ssd_rig(struct rig *r)
{
	struct dev_ssd_params p;
	struct dev *d;
	int rc;

	dev_ssd_defaults(&p);
	p.size = 16ull << 20;
	rc = dev_sim_ssd_new(&p, &d);
	return rc ? rc : rig_devs(r, BS, 1024, 15360, d, d);
}

/* The sim stack of these runs: sim_ssd_rig's disk and journal, opened with
 * caller_commit as asked; fn runs as thread "main". */
static int caller_run(uint64_t seed, bool caller, int (*fn)(struct stack *, void *), void *arg)
{
	struct stack_spec sp;

	rig_stack_spec(&sp, seed, "ssd", 16ull << 20, BS, 1024);
	sp.jopts.caller_commit = caller;
	return rig_stack_run(&sp, fn, arg);
}

/* ---- one thread's fsync loop (sim) ---------------------------------------- */

#define FL_N 30

struct fl {
	bool caller;
	struct seen seen;
	struct ujbd_stats st;
	uint64_t end_ns;
	int rc, recovered;
};

static int fl_main(struct stack *st, void *arg)
{
	struct fl *f = arg;
	struct rig r;
	ujbd_tid_t tid = 0;

	rig_of_stack(&r, st);
	ujbd_set_trace_hook(r.j, seen_hook, &f->seen);
	/* 30 fsyncs 400 ms apart: 12 s, past two commit intervals */
	for (int i = 0; i < FL_N && !f->rc; i++) {
		f->rc = rig_write(r.j, DB + (uint64_t)i, 1, (uint32_t)i + 1, false, &tid);
		if (!f->rc)
			f->rc = ujbd_commit_tid(r.j, tid);
		if (!f->rc)
			f->rc = ujbd_wait_tid(r.j, tid);
		rt_sleep_ns(400 * RT_NS_PER_MS);
	}
	ujbd_set_trace_hook(r.j, NULL, NULL);
	ujbd_stats(r.j, &f->st);
	f->end_ns = rt_now_ns();
	/* stopped hard: every fsynced block must come back from the log */
	stack_journal_close(st, true);
	f->recovered = rig_recover(&r) == 0;
	for (int i = 0; i < FL_N && f->recovered; i++)
		f->recovered = rig_has(&r, DB + (uint64_t)i, (uint32_t)i + 1);
	return 0;
}

static void t_fsync_loop(void)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct fl *c = calloc(1, sizeof(*c)), *k = calloc(1, sizeof(*k)),
			  *again = calloc(1, sizeof(*again));
		T_CHECK(c && k && again);
		c->caller = again->caller = true;
		T_EQ(caller_run(seed, true, fl_main, c), 0);
		T_EQ(caller_run(seed, false, fl_main, k), 0);
		T_EQ(caller_run(seed, true, fl_main, again), 0);
		T_EQ(c->rc, 0);
		T_EQ(k->rc, 0);
		T_CHECK(c->recovered && k->recovered);
		/* every commit ran on the fsync's thread, none on kjournald */
		T_EQ(seen_commits(&c->seen), FL_N);
		T_EQ(seen_on(&c->seen, UJBD_TR_START_COMMIT, "main"), FL_N);
		/* a sim SSD cannot poll: the last write's completion ends it */
		T_EQ(seen_on(&c->seen, UJBD_TR_END_COMMIT, "ssd-done"), FL_N);
		/* kjournald's default: all on it */
		T_EQ(seen_commits(&k->seen), FL_N);
		T_EQ(seen_on(&k->seen, UJBD_TR_START_COMMIT, "kjournald"), FL_N);
		/* the statistics say the same */
		T_EQ_U64(c->st.ts_tid, FL_N);
		T_EQ_U64(c->st.caller_commits, FL_N);
		T_EQ_U64(k->st.ts_tid, FL_N);
		T_EQ_U64(k->st.caller_commits, 0);
		/* one latency sample per fsync, either way */
		T_EQ_U64(c->st.fsync_latency.count, FL_N);
		T_EQ_U64(k->st.fsync_latency.count, FL_N);
		/* the stale deadlines of transactions the fsyncs committed are
		 * timer re-arms, not useless wakeups; nothing else woke it */
		T_EQ_U64(c->st.useless_wakeups, 0);
		T_EQ_U64(c->st.wakeups, 0);
		T_EQ_U64(k->st.useless_wakeups, 0);
		/* the sim world stays deterministic */
		T_EQ_U64(again->end_ns, c->end_ns);
		T_CHECK(memcmp(&again->seen, &c->seen, sizeof(c->seen)) == 0);
		free(c);
		free(k);
		free(again);
	}
}

/* ---- sync handles and ujbd_write_atomic (sim) ------------------------------ */

struct sh {
	struct seen seen;
	struct ujbd_stats st;
	int rc, recovered;
};

static int sh_main(struct stack *st, void *arg)
{
	struct sh *f = arg;
	struct rig r;
	uint8_t *blk = malloc(BS);

	if (!blk)
		return -ENOMEM;
	rig_of_stack(&r, st);
	ujbd_set_trace_hook(r.j, seen_hook, &f->seen);
	for (int i = 0; i < 10 && !f->rc; i++) {
		if (i % 2) {
			f->rc = rig_write(r.j, DB + (uint64_t)i, 1, (uint32_t)i + 1, true, NULL);
		} else {
			struct ujbd_block b = { DB + (uint64_t)i, blk };
			rig_fill(blk, BS, DB + (uint64_t)i, (uint32_t)i + 1);
			f->rc = ujbd_write_atomic(r.j, &b, 1, UJBD_DURABLE);
		}
		rt_sleep_ns(RT_NS_PER_MS);
	}
	ujbd_set_trace_hook(r.j, NULL, NULL);
	ujbd_stats(r.j, &f->st);
	stack_journal_close(st, true);
	f->recovered = rig_recover(&r) == 0;
	for (int i = 0; i < 10 && f->recovered; i++)
		f->recovered = rig_has(&r, DB + (uint64_t)i, (uint32_t)i + 1);
	free(blk);
	return 0;
}

static void t_sync_handles(void)
{
	struct sh *f = calloc(1, sizeof(*f));

	T_CHECK(f);
	T_EQ(caller_run(7, true, sh_main, f), 0);
	T_EQ(f->rc, 0);
	T_CHECK(f->recovered);
	/* every durable write committed on its own thread */
	T_EQ(seen_commits(&f->seen), 10);
	T_EQ(seen_on(&f->seen, UJBD_TR_START_COMMIT, "main"), 10);
	T_EQ_U64(f->st.caller_commits, 10);
	T_EQ_U64(f->st.wakeups, 0);
	T_EQ_U64(f->st.fsync_latency.count, 10);
	free(f);
}

/* ---- many threads (sim): one commit at a time, and group commit ---------- */

#define GT 6    /* threads */
#define GN 20   /* fsyncs each */

struct gc {
	struct seen seen;
	struct ujbd_stats st;
	struct ujbd *j;
	int rc[GT];
	int recovered;
	unsigned next;
};

static void gc_worker(void *arg)
{
	struct gc *g = arg;
	unsigned me = g->next++; /* sim: one thread runs at a time */
	ujbd_tid_t tid = 0;
	int rc = 0;

	for (unsigned i = 0; i < GN && !rc; i++) {
		rc = rig_write(g->j, DB + me * GN + i, 1, i + 1, false, &tid);
		if (!rc)
			rc = ujbd_commit_tid(g->j, tid);
		if (!rc)
			rc = ujbd_wait_tid(g->j, tid);
	}
	g->rc[me] = rc;
}

static int gc_main(struct stack *st, void *arg)
{
	struct gc *g = arg;
	struct rig r;
	rt_thread *th[GT];

	rig_of_stack(&r, st);
	g->j = r.j;
	ujbd_set_trace_hook(r.j, seen_hook, &g->seen);
	for (int i = 0; i < GT; i++)
		if (rt_thread_create(&th[i], "fsyncer", gc_worker, g))
			th[i] = NULL;
	for (int i = 0; i < GT; i++)
		if (th[i])
			rt_thread_join(th[i]);
	ujbd_set_trace_hook(r.j, NULL, NULL);
	ujbd_stats(r.j, &g->st);
	stack_journal_close(st, true);
	g->recovered = rig_recover(&r) == 0;
	for (unsigned t = 0; t < GT && g->recovered; t++)
		for (unsigned i = 0; i < GN && g->recovered; i++)
			g->recovered = rig_has(&r, DB + t * GN + i, i + 1);
	return 0;
}

static void t_many_threads(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct gc *g = calloc(1, sizeof(*g));
		T_CHECK(g);
		T_EQ(caller_run(seed, true, gc_main, g), 0);
		for (int i = 0; i < GT; i++)
			T_EQ(g->rc[i], 0);
		T_CHECK(g->recovered);
		int n = seen_commits(&g->seen);
		T_CHECK(n > 0);                  /* never two at once */
		T_CHECK(n < GT * GN);            /* fsyncs shared commits */
		T_EQ(seen_on(&g->seen, UJBD_TR_START_COMMIT, "fsyncer") +
		     seen_on(&g->seen, UJBD_TR_START_COMMIT, "kjournald"), (unsigned)n);
		T_CHECK(seen_on(&g->seen, UJBD_TR_START_COMMIT, "fsyncer") > 0);
		T_EQ_U64(g->st.fsync_latency.count, GT * GN);
		free(g);
	}
}

/* ---- an fsync from a thread that holds a handle (sim) --------------------- */

/*
 * ujbd_commit_tid of the running transaction by a thread that still holds
 * a handle of it: committing on that thread would wait for its own handle
 * (a sim deadlock, before the fix). It is handed to kjournald instead,
 * which commits once the handle stops.
 */
struct hh {
	struct seen seen;
	int rc, commit_rc, wait_rc, recovered;
	bool done;
};

/* A stuck main thread does not stop the sim world (the checkpoint thread's
 * timer runs on): fail loudly after a minute of virtual time instead. */
static void hh_watchdog(void *arg)
{
	struct hh *f = arg;

	rt_sleep_ns(60 * RT_NS_PER_S);
	if (__atomic_load_n(&f->done, __ATOMIC_ACQUIRE))
		return;
	fprintf(stderr, "  FAIL t_commit_holding_handle: the fsync never returned\n");
	_exit(1);
}

static int hh_main(struct stack *st, void *arg)
{
	struct hh *f = arg;
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	struct rig r;
	rt_thread *wd;
	ujbd_tid_t tid;

	if (rt_thread_create(&wd, "watchdog", hh_watchdog, f))
		return -EAGAIN;
	rig_of_stack(&r, st);
	ujbd_set_trace_hook(r.j, seen_hook, &f->seen);
	if ((f->rc = ujbd_start(r.j, 1, &h)))
		goto out;
	tid = ujbd_handle_tid(h);
	f->rc = ujbd_get_write_access(h, DB, &b);
	if (!f->rc) {
		rig_fill(ujbd_buf_data(b), BS, DB, 1);
		f->rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	f->commit_rc = ujbd_commit_tid(r.j, tid);
	rt_sleep_ns(RT_NS_PER_MS);
	int s = ujbd_stop(h);
	f->rc = f->rc ? f->rc : s;
	f->wait_rc = ujbd_wait_tid(r.j, tid);
	ujbd_set_trace_hook(r.j, NULL, NULL);
	stack_journal_close(st, true);
	f->recovered = rig_recover(&r) == 0 && rig_has(&r, DB, 1);
out:
	__atomic_store_n(&f->done, true, __ATOMIC_RELEASE);
	rt_thread_join(wd);
	return 0;
}

static void t_commit_holding_handle(void)
{
	struct hh *f = calloc(1, sizeof(*f));

	T_CHECK(f);
	T_EQ(caller_run(9, true, hh_main, f), 0);
	T_EQ(f->rc, 0);
	T_EQ(f->commit_rc, 0);
	T_EQ(f->wait_rc, 0);
	T_CHECK(f->recovered);
	T_EQ(seen_commits(&f->seen), 1);
	T_EQ(seen_on(&f->seen, UJBD_TR_START_COMMIT, "kjournald"), 1);
	free(f);
}

/* ---- an I/O error under a caller's commit (sim) -------------------------- */

struct ab {
	int open_rc, commit_rc, wait_rc, start_rc;
	unsigned fsyncs;
};

static void ab_main(void *arg)
{
	struct ab *a = arg;
	struct dev_fault_opts fo = { .sticky = true };
	struct dev_fault_counts fc;
	struct ujbd_handle *h;
	struct dev *fd;
	struct rig r;
	struct ujbd_opts o;
	ujbd_tid_t tid = 0;
	int rc;

	/* count the writes the open makes, then fail the 4th after them */
	for (int pass = 0; pass < 2; pass++) {
		if ((rc = sim_ssd_rig(&r)) || (rc = dev_fault_new(r.jd, &fo, &fd))) {
			a->open_rc = rc;
			return;
		}
		r.jd = r.dd = fd;
		r.loc.j_dev = r.loc.j_data = fd;
		rig_opts(&o, true);
		o.caller_commit = true;
		if ((a->open_rc = rig_open(&r, &o))) {
			rig_free(&r);
			return;
		}
		if (pass == 0) {
			dev_fault_counts(fd, &fc);
			fo.fail_write_nth = fc.writes + 4;
			rig_free(&r);
		}
	}
	for (a->fsyncs = 0; a->fsyncs < 8 && !a->commit_rc; a->fsyncs++) {
		a->commit_rc = rig_write(r.j, DB + a->fsyncs, 1, 1, false, &tid);
		if (!a->commit_rc)
			a->commit_rc = ujbd_commit_tid(r.j, tid);
	}
	a->wait_rc = ujbd_wait_tid(r.j, tid);
	a->start_rc = ujbd_start(r.j, 1, &h);
	if (!a->start_rc)
		ujbd_stop(h);
	rig_free(&r);
}

static void t_abort(void)
{
	struct ab a = { 0 };

	T_EQ(rig_sim_run(5, ab_main, &a), 0);
	T_EQ(a.open_rc, 0);
	T_EQ(a.commit_rc, -EIO);   /* the fsync that committed learns at once */
	T_CHECK(a.fsyncs >= 2 && a.fsyncs <= 4);
	T_EQ(a.wait_rc, -EIO);
	T_EQ(a.start_rc, -EROFS);
}

/* ---- files: the commit's last write is polled ------------------------------ */

struct fr {
	bool caller;
	char dir[256];
	struct seen seen;
	int rc, recovered;
	char me[16];
};

static void fr_main(void *arg)
{
	struct fr *f = arg;
	struct dev_file_opts fo = { .create = true, .size = 16ull << 20 };
	char path[300];
	struct rig r;
	struct ujbd_opts o;
	struct dev *d;
	ujbd_tid_t tid = 0;

	snprintf(f->me, sizeof(f->me), "%s", rt_self_name());
	snprintf(path, sizeof(path), "%s/dev", f->dir);
	if ((f->rc = dev_file_open(path, &fo, &d)) || (f->rc = rig_devs(&r, BS, 1024, 15360, d, d)))
		return;
	rig_opts(&o, true);
	o.caller_commit = f->caller;
	o.async_commit = true;
	o.data_mode = UJBD_DATA_JOURNAL;
	if ((f->rc = rig_open(&r, &o)))
		return;
	ujbd_set_trace_hook(r.j, seen_hook, &f->seen);
	for (int i = 0; i < 20 && !f->rc; i++) {
		f->rc = rig_write(r.j, DB + (uint64_t)i, 2, (uint32_t)i + 1, false, &tid);
		if (!f->rc)
			f->rc = ujbd_commit_tid(r.j, tid);
		if (!f->rc)
			f->rc = ujbd_wait_tid(r.j, tid);
	}
	ujbd_set_trace_hook(r.j, NULL, NULL);
	ujbd_close_hard(r.j);
	r.j = NULL;
	f->recovered = rig_recover(&r) == 0;
	/* each fsync wrote blocks i and i+1: the next overwrote i+1 */
	for (int i = 0; i < 20 && f->recovered; i++)
		f->recovered = rig_has(&r, DB + (uint64_t)i, (uint32_t)i + 1);
	f->recovered = f->recovered && rig_has(&r, DB + 20, 20);
	rig_free(&r);
	unlink(path);
}

static void t_files_polled(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	for (int caller = 0; caller < 2; caller++) {
		struct fr *f = calloc(1, sizeof(*f));
		struct rt_world_opts wo = { .kind = RT_WORLD_REAL, .seed = 1 };
		rt_world *w;

		T_CHECK(f);
		f->caller = caller;
		snprintf(f->dir, sizeof(f->dir), "%s/ujbd-caller-XXXXXX", base);
		T_CHECK(mkdtemp(f->dir) != NULL);
		T_EQ(rt_world_new(&wo, &w), 0);
		T_EQ(rt_world_run(w, "fsyncer", fr_main, f), 0);
		rt_world_free(w);
		rmdir(f->dir);
		T_EQ(f->rc, 0);
		T_CHECK(f->recovered);
		T_EQ(seen_commits(&f->seen), 20);
		/* the thread that started each commit also ended it: the
		 * last write's completion ran there (polled), not on the
		 * device's completion thread */
		const char *who = caller ? f->me : "kjournald";
		T_EQ(seen_on(&f->seen, UJBD_TR_START_COMMIT, who), 20);
		T_EQ(seen_on(&f->seen, UJBD_TR_END_COMMIT, who), 20);
		free(f);
	}
}

/* ---- files: the log is written past the host's page cache ----------------- */

#define LBS PC_BS

struct lc {
	char path[300];
	bool jbd2;
	int rc;
	int log_cached, sb_cached; /* pages in the page cache afterwards */
};

static void lc_main(void *arg)
{
	struct lc *f = arg;
	struct dev_file_opts fo = { .create = true, .size = 8ull << 20 };
	struct rig r;
	struct ujbd_opts o;
	struct dev *d;
	ujbd_tid_t tid = 0;

	if ((f->rc = dev_file_open(f->path, &fo, &d)) || (f->rc = rig_devs(&r, LBS, 256, 2048, d, d)))
		return;
	rig_opts_from(&o, true, f->jbd2);
	o.data_mode = UJBD_DATA_JOURNAL;
	if ((f->rc = rig_open(&r, &o)))
		return;
	for (int i = 0; i < 10 && !f->rc; i++) {
		f->rc = rig_write(r.j, 1000 + (uint64_t)i, 2, (uint32_t)i + 1, false, &tid);
		if (!f->rc)
			f->rc = ujbd_commit_tid(r.j, tid);
		if (!f->rc)
			f->rc = ujbd_wait_tid(r.j, tid);
	}
	/* 10 commits of a descriptor, 2 blocks and a commit block: log
	 * blocks 1..40 */
	f->log_cached = pc_cached_blocks(f->path, 1, 40);
	f->sb_cached = pc_cached_blocks(f->path, 0, 1);
	rig_free(&r);
}

static void t_log_past_cache(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	for (int jbd2 = 0; jbd2 < 2; jbd2++) {
		struct lc *f = calloc(1, sizeof(*f));
		struct rt_world_opts wo = { .kind = RT_WORLD_REAL, .seed = 1 };
		rt_world *w;
		int fd;

		T_CHECK(f);
		f->jbd2 = jbd2;
		snprintf(f->path, sizeof(f->path), "%s/ujbd-lc-XXXXXX", base);
		T_CHECK((fd = mkstemp(f->path)) >= 0);
		close(fd);
		if (!pc_direct_bypasses_cache(f->path)) {
			unlink(f->path);
			free(f);
			T_SKIP("%s has no direct path past its page cache (tmpfs): the log goes through the cache there",
			       base);
		}
		T_EQ(rt_world_new(&wo, &w), 0);
		T_EQ(rt_world_run(w, "fsyncer", lc_main, f), 0);
		rt_world_free(w);
		unlink(f->path);
		T_EQ(f->rc, 0);
		/* the superblock went through the cache, the log did not */
		T_EQ(f->sb_cached, 1);
		T_EQ(f->log_cached, 0);
		free(f);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_fsync_loop);
	T_RUN(t_sync_handles);
	T_RUN(t_many_threads);
	T_RUN(t_commit_holding_handle);
	T_RUN(t_abort);
	T_RUN(t_files_polled);
	T_RUN(t_log_past_cache);
	return t_done(argv[0]);
}

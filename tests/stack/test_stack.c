/*
 * Stacks from specs (stack.h): groups and their errors, open/close order,
 * a journal on one or two disks, parameters reaching the models, the wrap
 * hook, determinism, and --params listing every row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "priv/dev_req.h"
#include "priv/param.h"
#include "priv/stack.h"

static char err[256];

static int ret_42(struct stack *s, void *arg)
{
	int *seen = arg;

	*seen = stack_dev(s, 0) != NULL && stack_queue(s, 0) == NULL && !stack_journal(s);
	return 42;
}

/* The default spec: one mem disk, no queue, no journal; fn's result. */
static void test_default(void)
{
	struct stack_spec sp;
	struct stack *s;
	int seen = 0;

	stack_spec_default(&sp);
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), 0);
	T_EQ(stack_run(s, "main", ret_42, &seen), 42);
	T_EQ(seen, 1);
	/* a second run opens everything again */
	seen = 0;
	T_EQ(stack_run(s, "main", ret_42, &seen), 42);
	T_EQ(seen, 1);
	stack_free(s);
}

/* Group options: checked at once, one-line errors naming the parameter. */
static void test_groups(void)
{
	struct stack_spec sp, cp;

	stack_spec_default(&sp);
	sp.disks[0].model = "hdd";
	sp.queues[0].elevator = "cfq";
	T_EQ(stack_spec_set_group(&sp, "hdd", "seek_avg_ms=100", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --hdd=seek_avg_ms: '100': out of range (0.5 to 40 ms)");
	T_CHECK(sp.disks[0].params == NULL);
	T_EQ(stack_spec_set_group(&sp, "hdd", "seek_avg_ms=9.5,rpm=5400", err, sizeof(err)), 0);
	T_EQ(stack_spec_set_group(&sp, "hdd", "rpm=7200", err, sizeof(err)), 0);
	T_STREQ(sp.disks[0].params, "seek_avg_ms=9.5,rpm=5400,rpm=7200");
	T_EQ(stack_spec_set_group(&sp, "cfq", "slice_idle_ms=4", err, sizeof(err)), 0);
	T_STREQ(sp.queues[0].params, "slice_idle_ms=4");
	T_EQ(stack_spec_set_group(&sp, "queue", "plug=implicit-sync,nr_requests=64", err,
				  sizeof(err)), 0);
	T_EQ(stack_spec_set_group(&sp, "queue", "plug=sometimes", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --queue=plug: 'sometimes': unknown value (explicit or implicit-sync)");
	T_EQ(stack_spec_set_group(&sp, "ssd", "channels=4", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "--ssd: no disk or queue of this stack uses it");
	T_EQ(stack_spec_set_group(&sp, "floppy", "x=1", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "unknown parameter group 'floppy' (see --params)");
	T_EQ(stack_spec_set_group(&sp, "noop", "x=1", err, sizeof(err)), -EINVAL);
	T_EQ(stack_spec_set_group(&sp, "deadline", "fifo_batch=0", err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --deadline=fifo_batch: '0': out of range (1 to 1024 rq)");
	T_CHECK(stack_group_known("queue") && stack_group_known("mem") && !stack_group_known("x"));
	/* a copy carries its own strings */
	stack_spec_copy(&cp, &sp);
	memset(sp.s_store, 0, sizeof(sp.s_store));
	T_STREQ(cp.queues[0].params, "slice_idle_ms=4");
}

/* stack_new refuses what cannot be built, and says why. */
static void test_bad_specs(void)
{
	struct stack_spec sp;
	struct stack *s = NULL;

	stack_spec_default(&sp);
	sp.disks[0].model = "floppy";
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), -EINVAL);
	T_STREQ(err, "unknown disk model 'floppy' (see --params)");
	stack_spec_default(&sp);
	sp.queues[0].elevator = "as";
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), -EINVAL);
	T_STREQ(err, "unknown elevator 'as' (see --params)");
	stack_spec_default(&sp);
	sp.disks[0].model = "ssd";
	sp.disks[0].params = "channels=0";
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), -EINVAL);
	T_STREQ(err, "bad --ssd=channels: '0': out of range (1 to 64)");
	stack_spec_default(&sp);
	sp.journal = true;
	sp.data_disk = 1;
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), -EINVAL);
	T_STREQ(err, "journal: disk index out of range");
	T_CHECK(s == NULL);
}

struct jrun {
	uint64_t elapsed_ns;
	uint64_t hash;
	int ok;
};

/* Ten synchronous one-block transactions; time and checks into arg. */
static int journal_writes(struct stack *s, void *arg)
{
	struct jrun *r = arg;
	struct ujbd *j = stack_journal(s);
	uint64_t t0 = rt_now_ns();

	r->ok = j && stack_queue(s, 0) && ujbd_block_size(j) == 4096;
	for (int i = 0; r->ok && i < 10; i++) {
		struct ujbd_handle *h;
		struct ujbd_buf *b;
		int rc = ujbd_start(j, 1, &h);

		if (rc)
			return rc;
		ujbd_handle_set_sync(h, true);
		/* past the journal's 1024 blocks at the start of the disk */
		rc = ujbd_get_write_access(h, 2000 + (uint64_t)i * 1000, &b);
		if (!rc) {
			memset(ujbd_buf_data(b), i + 1, 4096);
			rc = ujbd_dirty_metadata(h, b);
			ujbd_buf_put(b);
		}
		int s2 = ujbd_stop(h);
		if (rc || s2)
			return rc ? rc : s2;
	}
	r->elapsed_ns = rt_now_ns() - t0;
	return 0;
}

static int run_journal(const char *model, const char *params, const char *elv, uint64_t seed,
		       struct jrun *r)
{
	struct stack_spec sp;
	struct stack *s;
	int rc;

	stack_spec_default(&sp);
	sp.seed = seed;
	sp.disks[0] = (struct stack_disk_spec){ model, params, 256ull << 20 };
	sp.queues[0].elevator = elv;
	sp.journal = true;
	sp.journal_blocks = 1024;
	memset(r, 0, sizeof(*r));
	rc = stack_new(&sp, &s, err, sizeof(err));
	if (rc)
		return rc;
	rc = stack_run(s, "main", journal_writes, r);
	if (rc)
		fprintf(stderr, "  run: %d %s\n", rc, stack_error(s));
	r->hash = rt_world_hash(stack_world(s));
	stack_free(s);
	return rc;
}

/* A journal on a sim HDD through cfq; a parameter reaches the model (a
 * slower disk takes longer), the same seed gives the same run. */
static void test_journal_on_hdd(void)
{
	struct jrun a, b, c;

	T_EQ(run_journal("hdd", NULL, "cfq", 1, &a), 0);
	T_EQ(a.ok, 1);
	T_EQ(run_journal("hdd", NULL, "cfq", 1, &b), 0);
	T_EQ_U64(a.hash, b.hash);
	T_EQ_U64(a.elapsed_ns, b.elapsed_ns);
	T_EQ(run_journal("hdd", "rpm=5400,seek_avg_ms=12", "cfq", 1, &c), 0);
	fprintf(stderr, "    10 fsyncs: %.2f ms at 7200 rpm, %.2f ms at 5400 rpm\n",
		a.elapsed_ns / 1e6, c.elapsed_ns / 1e6);
	T_CHECK(c.elapsed_ns > a.elapsed_ns);
	/* no elevator named: the journal's disk gets noop */
	T_EQ(run_journal("ssd", NULL, NULL, 1, &c), 0);
	T_EQ(c.ok, 1);
}

struct two {
	int ok;
	uint64_t jbytes_nonzero, dbytes_nonzero;
};

static int count_nonzero(struct dev *d, uint64_t blocks, uint64_t *out)
{
	uint8_t buf[4096];

	*out = 0;
	for (uint64_t b = 0; b < blocks; b++) {
		int rc = dev_pread(d, buf, sizeof(buf), b * sizeof(buf));

		if (rc)
			return rc;
		for (size_t i = 0; i < sizeof(buf); i++)
			if (buf[i]) {
				(*out)++;
				break;
			}
	}
	return 0;
}

/* Journal on disk 1 (ssd), data on disk 0 (hdd): the data lands on disk 0
 * after the close's checkpoint, the log on disk 1. */
static int two_disks(struct stack *s, void *arg)
{
	struct two *t = arg;
	struct jrun r;
	int rc = journal_writes(s, &r);

	if (rc)
		return rc;
	t->ok = r.ok && stack_queue(s, 1) && stack_queue(s, 0) != stack_queue(s, 1) &&
		stack_loc(s)->j_dev == stack_dev(s, 1) && stack_loc(s)->j_data == stack_dev(s, 0);
	rc = stack_journal_close(s, false);
	if (!rc)
		rc = count_nonzero(stack_dev(s, 0), 12000, &t->dbytes_nonzero);
	if (!rc)
		rc = count_nonzero(stack_dev(s, 1), 64, &t->jbytes_nonzero);
	if (!rc)
		rc = stack_journal_open(s, NULL, NULL); /* reopen: no format */
	return rc;
}

static void test_two_disks(void)
{
	struct stack_spec sp;
	struct stack *s;
	struct two t = { 0 };

	stack_spec_default(&sp);
	sp.ndisks = 2;
	sp.disks[0] = (struct stack_disk_spec){ "hdd", NULL, 1ull << 30 };
	sp.disks[1] = (struct stack_disk_spec){ "ssd", "channels=4", 64ull << 20 };
	sp.queues[0].elevator = "deadline";
	sp.queues[0].params = "fifo_batch=8";
	sp.journal = true;
	sp.journal_disk = 1;
	sp.data_disk = 0;
	sp.journal_blocks = 2048;
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), 0);
	T_EQ(stack_run(s, "main", two_disks, &t), 0);
	stack_free(s);
	T_EQ(t.ok, 1);
	T_EQ(t.dbytes_nonzero, 10);
	T_CHECK(t.jbytes_nonzero >= 2); /* superblock and log blocks */
}

static unsigned wrapped;

static int wrap_rec(void *arg, unsigned disk, struct dev *inner, struct dev **out)
{
	wrapped |= 1u << disk;
	return dev_rec_new(inner, out);
}

struct recorded {
	size_t n;                       /* writes and flushes */
	size_t log, log_direct;         /* the commits' writes inside the journal,
					 * its superblock's left out */
	size_t home, home_direct;       /* writes past it (the checkpoint's) */
};

static int count_recorded(struct stack *s, void *arg)
{
	struct recorded *c = arg;
	struct dev *d = stack_dev(s, 0);
	struct jrun r;
	size_t first = dev_rec_count(d); /* after the format's zeroing */
	int rc = journal_writes(s, &r);

	if (!rc)
		rc = ujbd_checkpoint(stack_journal(s));
	c->n = dev_rec_count(d);
	for (size_t i = first; i < c->n; i++) {
		struct dev_rec_entry e;

		if (dev_rec_entry(d, i, &e) < 0 || e.kind != DEV_REC_WRITE || e.off == 0)
			continue;
		bool direct = (e.flags & DEV_REQ_DIRECT) != 0;

		if (e.off < 1024 * 4096) {
			c->log++;
			c->log_direct += direct;
		} else {
			c->home++;
			c->home_direct += direct;
		}
	}
	return rc;
}

/* The wrap hook: every device passes through it; the stack uses the wrapper. */
static void test_wrap(void)
{
	struct stack_spec sp;
	struct stack *s;
	struct recorded c = { 0 };

	stack_spec_default(&sp);
	sp.journal = true;
	sp.journal_blocks = 1024;
	sp.wrap = wrap_rec;
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), 0);
	T_EQ(stack_run(s, "main", count_recorded, &c), 0);
	stack_free(s);
	T_EQ(wrapped, 1);
	/* each sync transaction: at least one write (its log blocks and its
	 * commit block, one FUA write under async commit) */
	T_CHECK(c.n >= 10);
	T_CHECK(c.log >= 10);
	/* the log goes past a host's page cache, the checkpoint's home
	 * writes (10 blocks) do not */
	T_EQ_U64(c.log_direct, c.log);
	T_CHECK(c.home >= 1);
	T_EQ_U64(c.home_direct, 0);
}

/* --params: every row of every group, text and JSON. */
static void test_params_print(void)
{
	char *buf = NULL;
	size_t len = 0, rows = 0;
	FILE *f = open_memstream(&buf, &len);

	T_CHECK(f);
	T_EQ(stack_params_print(f, false), 0);
	fclose(f);
	for (size_t i = 0; i < dev_model_count(); i++) {
		const struct rt_param_table *t = dev_model_at(i)->m_params;

		rows += t->t_nparams;
		for (size_t k = 0; k < t->t_nparams; k++)
			T_CHECK(strstr(buf, t->t_params[k].p_name));
	}
	for (size_t i = 0; i < blk_elevator_count(); i++) {
		const struct blk_elevator_type *e = blk_elevator_at(i);
		char head[64];

		snprintf(head, sizeof(head), "[%s]", e->e_name);
		T_CHECK(strstr(buf, head));
		for (size_t k = 0; e->e_tunables && k < e->e_tunables->t_nparams; k++)
			T_CHECK(strstr(buf, e->e_tunables->t_params[k].p_name));
	}
	T_CHECK(strstr(buf, "seek_avg_ms") && strstr(buf, "8.5 ms average read seek"));
	T_CHECK(strstr(buf, "slice_idle_ms") && strstr(buf, "[queue]"));
	T_CHECK(rows > 30);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	T_CHECK(f);
	T_EQ(stack_params_print(f, true), 0);
	fclose(f);
	T_CHECK(buf[0] == '{' && strstr(buf, "\"hdd\": {\"size\": {\"value\": 500000000000"));
	T_CHECK(strstr(buf, "\"plug\": {\"value\": \"explicit\""));
	free(buf);
}

/* ---- a base blk_queue_opts ---------------------------------------------- */

static void count_ev(void *arg, const struct blk_trace_event *ev)
{
	(void)ev;
	(*(unsigned *)arg)++;
}

static int flush_queue(struct stack *s, void *arg)
{
	struct blk_queue *q = stack_queue(s, 0);

	*(int *)arg = q ? blk_flush(q) : -ENODEV;
	return 0;
}

/* A queue from base: it exists without an elevator name, takes base's
 * elevator (its tunables parse: CFQ's, not noop's none), trace and
 * trace_fn; the caller's struct may change after stack_new. */
static void test_queue_base(void)
{
	struct blk_queue_opts qo;
	struct stack_spec sp;
	struct stack *s;
	unsigned events = 0;
	int frc = 1;

	blk_queue_opts_default(&qo);
	qo.elevator = "cfq";
	qo.trace = true;
	qo.trace_fn = count_ev;
	qo.trace_arg = &events;
	stack_spec_default(&sp);
	sp.queues[0].base = &qo;
	sp.queues[0].params = "slice_idle_ms=0";
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), 0);
	qo.trace_fn = NULL;
	T_EQ(stack_run(s, "main", flush_queue, &frc), 0);
	T_EQ(frc, 0);
	T_CHECK(events > 0);
	stack_free(s);
	qo.elevator = "noop";
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "noop") != NULL);
	sp.queues[0].params = NULL;
	T_EQ(stack_new(&sp, &s, err, sizeof(err)), 0);
	frc = 1;
	T_EQ(stack_run(s, "main", flush_queue, &frc), 0);
	T_EQ(frc, 0);
	stack_free(s);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_default);
	T_RUN(test_groups);
	T_RUN(test_bad_specs);
	T_RUN(test_journal_on_hdd);
	T_RUN(test_two_disks);
	T_RUN(test_wrap);
	T_RUN(test_queue_base);
	T_RUN(test_params_print);
	return t_done(argv[0]);
}

/*
 * ujbd devbench: run N I/Os against a simulated disk or a real file and
 * report IOPS, MB/s and latency.
 *
 * The run happens inside an rt world: a sim world seeded by --seed (virtual
 * time, so the same seed prints the same numbers byte for byte and nothing
 * from the wall clock reaches the output), or the real world (real sleeps
 * for a sim disk, real I/O for a file).
 *
 * Shape, for those who extend it (threads, elevators, ioprio, traces):
 * bench_run() opens the disk and drives every bench_thread; a thread's loop
 * (bench_thread_run) asks bench_next() what to do and bench_issue() does
 * exactly one I/O and records its latency in that thread's own stats;
 * bench_report() merges the threads' stats at the end.
 *
 * The disk, its queue and the world come from a stack spec (stack.h):
 * --disk names a disk model of the registry (or file:PATH), --MODEL=LIST,
 * --ELEVATOR=LIST and --queue=LIST set their parameters through the same
 * tables `--params` prints, so no model or elevator is named here.
 *
 * Through the block layer (--elevator, --threads, --ioprio, --trace): the
 * I/O goes as bios through one blk queue over the disk, each thread is an rt
 * thread with its own I/O priority, --ops is shared by all threads (the run
 * ends after that many I/Os in all, so every thread is measured over the
 * same window), and the report adds one entry per thread.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ujbd/blk.h"
#include "ujbd/dev.h"
#include "ujbd/rt.h"
#include "ujbd/stack.h"

#define BENCH_MAX_OPS 10000000ull
#define BENCH_MAX_BS (16u << 20)
#define BENCH_FILE_SIZE (256ull << 20) /* default size of a file: disk */
#define BENCH_MAX_GROUPS 64            /* --GROUP=LIST options */

enum bench_pattern { PAT_SEQ, PAT_RAND, PAT_WRITE_FLUSH };
static const char *const pattern_names[] = { "seq", "rand", "write-flush" };

struct bench_cfg {
	const char *disk;         /* a disk model ("hdd", "ssd"), "mem" or "file:PATH" */
	enum bench_pattern pattern;
	uint32_t bs;
	uint64_t ops;
	uint64_t seed;
	uint64_t size;            /* 0 = the disk's default */
	bool sim_world;
	bool json;
	bool direct;
	/* the block layer: used when any of these is given */
	bool use_blk;
	enum blk_elevator elevator;   /* cfq, the default of 2.6.18-2.6.32 */
	unsigned threads;             /* 1 */
	uint16_t ioprio[BLK_BENCH_MAX_THREADS];
	unsigned nioprio;             /* 0 = threads keep the caller's */
	const char *trace_path;
	bool elevator_set;            /* --elevator given */
	bool params;                  /* --params: print the tables */
	/* --GROUP=LIST options, applied to the spec once all are parsed */
	const char *grp_name[BENCH_MAX_GROUPS];
	const char *grp_list[BENCH_MAX_GROUPS];
	unsigned ngrp;
};

/* One issuing thread and what it measured. */
struct bench_thread {
	unsigned bt_index;
	struct rt_prng bt_prng;
	uint8_t *bt_buf;
	uint64_t bt_ops;          /* I/Os to issue */
	uint64_t *bt_lat_ns;      /* [bt_cap] */
	uint64_t bt_cap;
	uint64_t bt_done;
	uint64_t bt_bytes;
	struct bench *bt_bench;   /* for the rt thread */
	uint16_t bt_ioprio;       /* as the thread ran */
	int bt_err;
};

struct bench {
	struct bench_cfg b_cfg;
	struct stack *b_stack;    /* the world, the disk and its queue */
	struct dev *b_dev;
	uint64_t b_span;          /* bytes addressed: the disk, in whole bs */
	unsigned b_nthreads;
	struct bench_thread b_thr[BLK_BENCH_MAX_THREADS];
	struct blk_queue *b_q;    /* through the block layer, or NULL */
	FILE *b_trace;
	uint64_t b_claimed;       /* I/Os claimed by the threads (atomic) */
	uint64_t b_elapsed_ns;
	int b_err;                /* first error, negative errno */
	const char *b_err_what;
	char b_err_msg[256];      /* b_err_what from the stack */
	bool b_err_usage;         /* the error is the arguments' fault */
	char b_name[64];          /* the disk's name for the report */
	const char *b_engine;     /* file disks: the engine */
};

/* ---- the disk ------------------------------------------------------------ */

/* The stack opened the disk (bench_spec says which): take it. */
static int bench_open(struct bench *b)
{
	b->b_dev = stack_dev(b->b_stack, 0);
	if (!b->b_dev)
		return -ENODEV;
	if (!strncmp(b->b_cfg.disk, "file:", 5))
		b->b_engine = dev_file_engine_name(b->b_dev);
	return 0;
}

/* ---- one I/O --------------------------------------------------------------- */

enum bench_op { BOP_READ, BOP_WRITE_FLUSH };

/* What the thread's i-th I/O is. */
static void bench_next(const struct bench *b, struct bench_thread *t, uint64_t i,
		       enum bench_op *op, uint64_t *off)
{
	uint64_t blocks = b->b_span / b->b_cfg.bs;

	switch (b->b_cfg.pattern) {
	case PAT_RAND:
		*op = BOP_READ;
		*off = rt_prng_below(&t->bt_prng, blocks) * b->b_cfg.bs;
		break;
	case PAT_SEQ:
		*op = BOP_READ;
		*off = (i % blocks) * b->b_cfg.bs;
		break;
	default:
		*op = BOP_WRITE_FLUSH;
		*off = (i % blocks) * b->b_cfg.bs;
		break;
	}
}

/* One I/O as bios through the queue: a read, or a SYNC write then a flush. */
static int bench_issue_blk(struct bench *b, struct bench_thread *t, enum bench_op op,
			   uint64_t off)
{
	struct blk_bio bio;
	int err;

	memset(&bio, 0, sizeof(bio));
	bio.b_op = op == BOP_READ ? BLK_OP_READ : BLK_OP_WRITE;
	bio.b_flags = op == BOP_READ ? 0 : BLK_SYNC;
	bio.b_sector = off >> BLK_SECTOR_SHIFT;
	bio.b_nr_sectors = b->b_cfg.bs >> BLK_SECTOR_SHIFT;
	bio.b_buf = t->bt_buf;
	err = blk_submit_wait(b->b_q, &bio);
	if (err == 0 && op != BOP_READ)
		err = blk_flush(b->b_q);
	return err;
}

/* Issue exactly one I/O (a write+flush counts as one) and record it. */
static int bench_issue(struct bench *b, struct bench_thread *t, enum bench_op op,
		       uint64_t off)
{
	uint64_t t0 = rt_now_ns();
	int err;

	if (b->b_q) {
		err = bench_issue_blk(b, t, op, off);
	} else if (op == BOP_READ) {
		err = dev_pread(b->b_dev, t->bt_buf, b->b_cfg.bs, off);
	} else {
		err = dev_pwrite(b->b_dev, t->bt_buf, b->b_cfg.bs, off, 0);
		if (err == 0)
			err = dev_flush(b->b_dev);
	}
	if (err < 0)
		return err;
	if (t->bt_done == t->bt_cap) {
		uint64_t cap = 2 * t->bt_cap;
		uint64_t *p = realloc(t->bt_lat_ns, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->bt_lat_ns = p;
		t->bt_cap = cap;
	}
	t->bt_lat_ns[t->bt_done++] = rt_now_ns() - t0;
	t->bt_bytes += b->b_cfg.bs;
	return 0;
}

static int bench_thread_run(struct bench *b, struct bench_thread *t)
{
	for (uint64_t i = 0; i < t->bt_ops; i++) {
		/* Threads share --ops: claim one before issuing it. */
		if (b->b_nthreads > 1 &&
		    __atomic_fetch_add(&b->b_claimed, 1, __ATOMIC_RELAXED) >= b->b_cfg.ops)
			break;
		enum bench_op op;
		uint64_t off;
		int err;

		bench_next(b, t, i, &op, &off);
		err = bench_issue(b, t, op, off);
		if (err < 0)
			return err;
	}
	return 0;
}

static int bench_thread_init(struct bench *b, struct bench_thread *t, unsigned idx,
			     uint64_t ops)
{
	void *buf;

	t->bt_index = idx;
	t->bt_ops = ops;
	rt_prng_init(&t->bt_prng, b->b_cfg.seed * 0x9e3779b97f4a7c15ull + idx + 1);
	if (posix_memalign(&buf, 4096, b->b_cfg.bs))
		return -ENOMEM;
	t->bt_buf = buf;
	/* written blocks carry a recognisable pattern, not zeros */
	for (uint32_t i = 0; i < b->b_cfg.bs; i++)
		t->bt_buf[i] = (uint8_t)(i * 7 + idx);
	t->bt_cap = ops < 1024 ? (ops ? ops : 1) : 1024;
	t->bt_lat_ns = calloc(t->bt_cap, sizeof(uint64_t));
	return t->bt_lat_ns ? 0 : -ENOMEM;
}

/* ---- through the block layer ---------------------------------------------- */

/* The queue's trace hook (runs with q_lock held): one blkparse line. */
static void bench_trace_line(void *arg, const struct blk_trace_event *ev)
{
	struct bench *b = arg;
	char line[256];

	if (!b->b_trace)
		return;
	blk_trace_format(ev, line, sizeof(line));
	fprintf(b->b_trace, "%s\n", line);
}

/* The stack made the queue (bench_spec: its elevator, its trace hook);
 * take it and open the trace file before any I/O. */
static int bench_queue_open(struct bench *b)
{
	b->b_q = stack_queue(b->b_stack, 0);
	if (!b->b_q)
		return -ENODEV;
	if (b->b_cfg.trace_path) {
		b->b_trace = fopen(b->b_cfg.trace_path, "w");
		if (!b->b_trace)
			return -errno;
	}
	return 0;
}

/* Done with the queue (the stack frees it); the trace file ends with the
 * btt-style summary. */
static int bench_queue_close(struct bench *b)
{
	int err = 0;

	if (b->b_q && b->b_trace)
		err = blk_stats_print(b->b_q, b->b_trace);
	b->b_q = NULL;
	if (b->b_trace && fclose(b->b_trace) && !err)
		err = -EIO;
	b->b_trace = NULL;
	return err;
}

static void bench_thread_main(void *arg)
{
	struct bench_thread *t = arg;
	struct bench *b = t->bt_bench;

	if (b->b_cfg.nioprio) {
		uint16_t prio = b->b_cfg.ioprio[b->b_cfg.nioprio == 1 ? 0 : t->bt_index];

		/* The kernel may refuse RT (EPERM); rt still records it and
		 * our block layer honours it, which is what is measured. */
		(void)rt_ioprio_set(prio);
	}
	t->bt_ioprio = rt_ioprio_get();
	t->bt_err = bench_thread_run(b, t);
}

/* Run every thread as an rt thread named benchN; first error wins. */
static int bench_threads_run(struct bench *b)
{
	rt_thread *th[BLK_BENCH_MAX_THREADS];
	unsigned started = 0;
	int err = 0;

	for (unsigned i = 0; i < b->b_nthreads && !err; i++) {
		char name[16];

		snprintf(name, sizeof(name), "bench%u", i);
		b->b_thr[i].bt_bench = b;
		err = rt_thread_create(&th[i], name, bench_thread_main, &b->b_thr[i]);
		started += err == 0;
	}
	for (unsigned i = 0; i < started; i++) {
		rt_thread_join(th[i]);
		if (!err)
			err = b->b_thr[i].bt_err;
	}
	return err;
}

/* The body of the run, as the first thread of the world. */
static void bench_run(void *arg)
{
	struct bench *b = arg;
	uint64_t t0;
	int err;

	err = bench_open(b);
	if (err < 0) {
		b->b_err = err;
		b->b_err_what = "cannot open the disk";
		return;
	}
	snprintf(b->b_name, sizeof(b->b_name), "%s", dev_name(b->b_dev));
	b->b_span = dev_size(b->b_dev) - dev_size(b->b_dev) % b->b_cfg.bs;
	if (b->b_cfg.bs % dev_block_size(b->b_dev) || b->b_span == 0) {
		b->b_err = -EINVAL;
		b->b_err_usage = true;
		b->b_err_what = "--bs must be a multiple of the disk's block size and fit in it";
		goto out;
	}
	b->b_nthreads = b->b_cfg.use_blk ? b->b_cfg.threads : 1;
	for (unsigned i = 0; i < b->b_nthreads && !b->b_err; i++)
		b->b_err = bench_thread_init(b, &b->b_thr[i], i, b->b_cfg.ops);
	if (b->b_err) {
		b->b_err_what = "out of memory";
		goto out;
	}
	if (b->b_cfg.use_blk) {
		b->b_err = bench_queue_open(b);
		if (b->b_err) {
			b->b_err_what = b->b_trace || !b->b_cfg.trace_path ?
				"cannot set up the block queue" : "cannot write the trace";
			goto out;
		}
	}
	t0 = rt_now_ns();
	if (b->b_q)
		err = bench_threads_run(b);
	else /* one thread, no block layer: run it here */
		err = bench_thread_run(b, &b->b_thr[0]);
	b->b_elapsed_ns = rt_now_ns() - t0;
	if (b->b_q) {
		int cerr = bench_queue_close(b);

		if (!err && cerr) {
			b->b_err = cerr;
			b->b_err_what = "cannot write the trace";
		}
	}
	if (err < 0) {
		b->b_err = err;
		b->b_err_what = "I/O error";
	}
out:
	if (b->b_q || b->b_trace)
		bench_queue_close(b);
	b->b_dev = NULL; /* the stack closes it */
}

static int bench_stack_main(struct stack *s, void *arg)
{
	struct bench *b = arg;

	b->b_stack = s;
	bench_run(b);
	b->b_stack = NULL;
	return 0;
}

/* ---- the report ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct bench_stats {
	uint64_t n, bytes;
	double iops, mb_s, avg_us, p50_us, p99_us, max_us;
};

/* Nearest-rank percentile of sorted v[n]. */
static uint64_t pct(const uint64_t *v, uint64_t n, unsigned p)
{
	uint64_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* The stats of threads [first, first + n). */
static int bench_merge_range(const struct bench *b, unsigned first, unsigned n,
			     struct bench_stats *s)
{
	uint64_t *all, k = 0;
	double sum = 0;

	memset(s, 0, sizeof(*s));
	for (unsigned i = first; i < first + n; i++) {
		s->n += b->b_thr[i].bt_done;
		s->bytes += b->b_thr[i].bt_bytes;
	}
	if (s->n == 0)
		return 0;
	all = malloc(s->n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (unsigned i = first; i < first + n; i++)
		for (uint64_t j = 0; j < b->b_thr[i].bt_done; j++)
			all[k++] = b->b_thr[i].bt_lat_ns[j];
	qsort(all, s->n, sizeof(*all), cmp_u64);
	for (uint64_t j = 0; j < s->n; j++)
		sum += (double)all[j];
	s->avg_us = sum / (double)s->n / 1e3;
	s->p50_us = (double)pct(all, s->n, 50) / 1e3;
	s->p99_us = (double)pct(all, s->n, 99) / 1e3;
	s->max_us = (double)all[s->n - 1] / 1e3;
	if (b->b_elapsed_ns) {
		s->iops = (double)s->n * 1e9 / (double)b->b_elapsed_ns;
		s->mb_s = (double)s->bytes * 1e3 / (double)b->b_elapsed_ns;
	}
	free(all);
	return 0;
}

static int bench_merge(const struct bench *b, struct bench_stats *s)
{
	return bench_merge_range(b, 0, b->b_nthreads, s);
}

/* Through the block layer: the elevator and one entry per thread. */
static void bench_report_threads(const struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;

	if (c->json)
		printf(",\"elevator\":\"%s\",\"threads\":[", blk_elevator_name(c->elevator));
	else
		printf("  elevator  %s\n", blk_elevator_name(c->elevator));
	for (unsigned i = 0; i < b->b_nthreads; i++) {
		struct bench_stats s;
		char prio[16];

		if (bench_merge_range(b, i, 1, &s) < 0)
			memset(&s, 0, sizeof(s));
		rt_ioprio_str(b->b_thr[i].bt_ioprio, prio, sizeof(prio));
		if (c->json)
			printf("%s{\"name\":\"bench%u\",\"ioprio\":\"%s\",\"ops\":%" PRIu64
			       ",\"iops\":%.3f,\"mb_s\":%.3f,\"latency_us\":{\"avg\":%.3f,"
			       "\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}}",
			       i ? "," : "", i, prio, s.n, s.iops, s.mb_s, s.avg_us, s.p50_us,
			       s.p99_us, s.max_us);
		else
			printf("  bench%-3u  %-6s ops %" PRIu64 ", iops %.1f, latency avg %.1f us, "
			       "p50 %.1f us, p99 %.1f us, max %.1f us\n",
			       i, prio, s.n, s.iops, s.avg_us, s.p50_us, s.p99_us, s.max_us);
	}
	if (c->json)
		printf("]");
}

static void bench_report(const struct bench *b, const struct bench_stats *s)
{
	const struct bench_cfg *c = &b->b_cfg;
	const char *world = c->sim_world ? "sim" : "real";

	if (c->json) {
		printf("{\"disk\":\"%s\",\"pattern\":\"%s\",\"bs\":%" PRIu32
		       ",\"ops\":%" PRIu64 ",\"world\":\"%s\",\"seed\":%" PRIu64
		       ",\"elapsed_s\":%.6f,\"iops\":%.3f,\"mb_s\":%.3f,"
		       "\"latency_us\":{\"avg\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}",
		       b->b_name, pattern_names[c->pattern], c->bs, s->n, world, c->seed,
		       (double)b->b_elapsed_ns / 1e9, s->iops, s->mb_s, s->avg_us,
		       s->p50_us, s->p99_us, s->max_us);
		if (c->use_blk)
			bench_report_threads(b);
		printf("}\n");
		return;
	}
	printf("devbench: disk %s%s%s, pattern %s, bs %" PRIu32 ", %s world, seed %" PRIu64 "\n",
	       b->b_name, b->b_engine ? " engine " : "", b->b_engine ? b->b_engine : "",
	       pattern_names[c->pattern], c->bs, world, c->seed);
	printf("  ops       %" PRIu64 " in %.3f s\n", s->n, (double)b->b_elapsed_ns / 1e9);
	printf("  iops      %.1f\n", s->iops);
	printf("  MB/s      %.2f\n", s->mb_s);
	printf("  latency   avg %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n",
	       s->avg_us, s->p50_us, s->p99_us, s->max_us);
	if (c->use_blk)
		bench_report_threads(b);
}

/* ---- the command line ---------------------------------------------------- */

/* "a|b|c" of the registered disk models or elevators, into buf. */
static const char *names_of(char *buf, size_t len, bool models)
{
	size_t n = models ? dev_model_count() : blk_elevator_count(), at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "|" : "",
				       models ? dev_model_at(i)->m_name : blk_elevator_at(i)->e_name);
	return buf;
}

static void usage(FILE *f)
{
	char models[256], elvs[256];

	names_of(models, sizeof(models), true);
	names_of(elvs, sizeof(elvs), false);
	fprintf(f,
		"usage: ujbd devbench [--disk=%s|mem|file:PATH] [--pattern=seq|rand|write-flush]\n"
		"                     [--bs=SIZE] [--ops=N] [--seed=S] [--world=sim|real]\n"
		"                     [--size=SIZE] [--direct] [--json]\n"
		"                     [--elevator=%s] [--threads=N]\n"
		"                     [--ioprio=CLASS:LEVEL[,CLASS:LEVEL...]] [--trace=FILE]\n"
		"                     [--GROUP=NAME=VALUE[,NAME=VALUE...]] [--params [--json]]\n"
		"\n"
		"Run N I/Os, one at a time, and report IOPS, MB/s and latency.\n"
		"  --disk     a simulated disk model, mem (RAM), or file:PATH (a regular\n"
		"             file, created and sized if missing, or a block device);\n"
		"             default hdd. Models:\n", models, elvs);
	for (size_t i = 0; i < dev_model_count(); i++)
		fprintf(f, "               %-8s %s\n", dev_model_at(i)->m_name, dev_model_at(i)->m_help);
	fprintf(f,
		"  --pattern  seq: sequential reads from the start; rand: uniform random\n"
		"             reads over the disk; write-flush: a sequential write then a\n"
		"             cache flush, timed as one operation; default rand\n"
		"  --bs       bytes per I/O (k/M suffixes); default 4k\n"
		"  --ops      number of I/Os; default 1000\n"
		"  --seed     seed of the sim world and of the random offsets; default 1\n"
		"  --world    sim (virtual time: same seed, same output) or real (real\n"
		"             sleeps for a simulated disk); default sim, real for file:\n"
		"  --size     disk size; default the model's (see --params), 256M for\n"
		"             a file that must be created or is smaller\n"
		"  --direct   file: open with O_DIRECT (4 KiB blocks)\n"
		"  --json     one JSON object: iops, mb_s, latency_us {avg, p50, p99, max}\n"
		"\n"
		"Through ujbd's block layer (any of the options below): bios go\n"
		"through one queue over the disk; --ops is shared by all threads (the run\n"
		"ends after that many I/Os in all); the report adds the elevator and a\n"
		"'threads' list (name, ioprio, ops, iops, mb_s, latency_us per thread).\n"
		"  --elevator default cfq (2.6.29-2.6.33 rules). Elevators:\n");
	for (size_t i = 0; i < blk_elevator_count(); i++)
		fprintf(f, "               %-8s %s\n", blk_elevator_at(i)->e_name,
			blk_elevator_at(i)->e_help);
	fprintf(f,
		"  --threads  issuing threads, 1 to 64; default 1, or the number of --ioprio\n"
		"             entries\n"
		"  --ioprio   one I/O priority per thread (or one for all): rt:0-7,\n"
		"             be:0-7, idle; default: the threads keep devbench's (none = be:4)\n"
		"  --trace    write a blktrace of the queue to FILE, in blkparse's format,\n"
		"             ending with a per-process and per-class summary\n"
		"\n"
		"Parameters (every one with its unit, default, range and source: --params):\n"
		"  --GROUP=LIST  set parameters of a group: the disk's model (--%s=...),\n"
		"             mem, file, the elevator (--cfq=slice_idle_ms=4; given without\n"
		"             --elevator it selects that elevator) or queue (--queue=...;\n"
		"             an elevator or queue group uses the block layer). Groups:\n"
		"            ", dev_model_count() ? dev_model_at(0)->m_name : "hdd");
	for (size_t i = 0; i < stack_group_count(); i++)
		fprintf(f, " %s", stack_group_at(i));
	fprintf(f,
		"\n"
		"  --params   print every group's table (with --json: one JSON object)\n"
		"\n"
		"exit status: 0 ok, 2 bad arguments, 3 I/O error\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* "rt:4,be:4,idle" into c->ioprio[]. */
static int bench_parse_ioprio(const char *arg, struct bench_cfg *c)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	c->nioprio = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint16_t prio;

		if (c->nioprio == BLK_BENCH_MAX_THREADS || rt_ioprio_parse(tok, &prio) ||
		    RT_IOPRIO_CLASS(prio) == RT_IOPRIO_CLASS_NONE)
			return -EINVAL;
		c->ioprio[c->nioprio++] = prio;
	}
	return c->nioprio ? 0 : -EINVAL;
}

#define OPT_GROUP 0x1000 /* + the group's index (stack_group_at) */
#define OPT_PARAMS 'P'

/* The fixed options, then one --GROUP per parameter group. */
static struct option *bench_options(void)
{
	static const struct option fixed[] = {
		{ "disk", required_argument, NULL, 'd' },
		{ "pattern", required_argument, NULL, 'p' },
		{ "bs", required_argument, NULL, 'b' },
		{ "ops", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "world", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 'z' },
		{ "direct", no_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "elevator", required_argument, NULL, 'e' },
		{ "threads", required_argument, NULL, 't' },
		{ "ioprio", required_argument, NULL, 'i' },
		{ "trace", required_argument, NULL, 'T' },
		{ "params", no_argument, NULL, OPT_PARAMS },
		{ "help", no_argument, NULL, 'h' },
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), ng = stack_group_count();
	struct option *o = calloc(nf + ng + 1, sizeof(*o));

	if (!o)
		return NULL;
	memcpy(o, fixed, sizeof(fixed));
	for (size_t i = 0; i < ng; i++)
		o[nf + i] = (struct option){ stack_group_at(i), required_argument, NULL,
					     OPT_GROUP + (int)i };
	return o;
}

/* A --GROUP=LIST option: kept for bench_spec. An elevator group implies
 * the block layer and, without --elevator, selects that elevator. */
static int bench_group_opt(const char *verb, struct bench_cfg *c, const char *group,
			   const char *list)
{
	enum blk_elevator e;

	if (c->ngrp == BENCH_MAX_GROUPS) {
		cli_err(verb, "too many parameter options");
		return -EINVAL;
	}
	if (!blk_elevator_parse(group, &e)) {
		if (!c->elevator_set)
			c->elevator = e;
		c->use_blk = true;
	} else if (!strcmp(group, "queue")) {
		c->use_blk = true;
	}
	c->grp_name[c->ngrp] = group;
	c->grp_list[c->ngrp++] = list;
	return 0;
}

/* One option of bench_args; 0, 1 for --help, or -EINVAL (message printed). */
static int bench_opt(const char *verb, int ch, const char *arg, struct bench_cfg *c,
		     bool *world_set);

/* Parse argv into c; 0, 1 for --help, or -EINVAL (message printed). */
static int bench_args(int argc, char **argv, struct bench_cfg *c, bool *world_set)
{
	struct option *opts = bench_options();
	int ch, rc = 0;

	if (!opts) {
		cli_err(argv[0], "out of memory");
		return -ENOMEM;
	}
	opterr = 0;
	optind = 0;
	while (!rc && (ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == ':') {
			cli_err(argv[0], "option '%s' needs a value", argv[optind - 1]);
			rc = -EINVAL;
		} else if (ch == '?') {
			cli_err(argv[0], "unknown option '%s' (ujbd devbench --help)",
				argv[optind - 1]);
			rc = -EINVAL;
		} else if (ch >= OPT_GROUP) {
			rc = bench_group_opt(argv[0], c, stack_group_at((size_t)(ch - OPT_GROUP)),
					     optarg);
		} else {
			rc = bench_opt(argv[0], ch, optarg, c, world_set);
		}
	}
	free(opts);
	if (!rc && optind < argc) {
		cli_err(argv[0], "unexpected argument '%s'", argv[optind]);
		rc = -EINVAL;
	}
	return rc;
}

static int bench_opt(const char *verb, int ch, const char *arg, struct bench_cfg *c,
		     bool *world_set)
{
	uint64_t v;

	switch (ch) {
	case 'h':
		return 1;
	case OPT_PARAMS:
		c->params = true;
		break;
	case 'd':
		if (!stack_disk_known(arg)) {
			char models[256];

			cli_err(verb, "unknown disk '%s' (%s, mem or file:PATH)", arg,
				names_of(models, sizeof(models), true));
			return -EINVAL;
		}
		c->disk = arg;
		break;
	case 'p': {
		int k = -1;

		for (int i = 0; i < 3; i++)
			if (!strcmp(arg, pattern_names[i]))
				k = i;
		if (k < 0) {
			cli_err(verb, "unknown pattern '%s' (seq, rand or write-flush)", arg);
			return -EINVAL;
		}
		c->pattern = (enum bench_pattern)k;
		break;
	}
	case 'b':
		if (dev_parse_size(arg, &v) || v < 512 || v > BENCH_MAX_BS || v % 512) {
			cli_err(verb, "bad --bs '%s' (a multiple of 512 up to 16M)", arg);
			return -EINVAL;
		}
		c->bs = (uint32_t)v;
		break;
	case 'n':
		if (parse_u64(arg, &v) || v == 0 || v > BENCH_MAX_OPS) {
			cli_err(verb, "bad --ops '%s' (1 to %llu)", arg, BENCH_MAX_OPS);
			return -EINVAL;
		}
		c->ops = v;
		break;
	case 's':
		if (parse_u64(arg, &c->seed)) {
			cli_err(verb, "bad --seed '%s' (an unsigned integer)", arg);
			return -EINVAL;
		}
		break;
	case 'w':
		if (strcmp(arg, "sim") && strcmp(arg, "real")) {
			cli_err(verb, "unknown world '%s' (sim or real)", arg);
			return -EINVAL;
		}
		c->sim_world = !strcmp(arg, "sim");
		*world_set = true;
		break;
	case 'z':
		if (dev_parse_size(arg, &c->size) || c->size == 0) {
			cli_err(verb, "bad --size '%s'", arg);
			return -EINVAL;
		}
		break;
	case 'D':
		c->direct = true;
		break;
	case 'j':
		c->json = true;
		break;
	case 'e':
		if (blk_elevator_parse(arg, &c->elevator)) {
			char elvs[256];

			cli_err(verb, "unknown elevator '%s' (%s)", arg,
				names_of(elvs, sizeof(elvs), false));
			return -EINVAL;
		}
		c->elevator_set = true;
		c->use_blk = true;
		break;
	case 't':
		if (parse_u64(arg, &v) || v == 0 || v > BLK_BENCH_MAX_THREADS) {
			cli_err(verb, "bad --threads '%s' (1 to %d)", arg,
				BLK_BENCH_MAX_THREADS);
			return -EINVAL;
		}
		c->threads = (unsigned)v;
		c->use_blk = true;
		break;
	case 'i':
		if (bench_parse_ioprio(arg, c) < 0) {
			cli_err(verb, "bad --ioprio '%s' (CLASS:LEVEL[,...]: rt:0-7, be:0-7, idle)",
				arg);
			return -EINVAL;
		}
		c->use_blk = true;
		break;
	case 'T':
		c->trace_path = arg;
		c->use_blk = true;
		break;
	default:
		cli_err(verb, "unknown option (ujbd devbench --help)");
		return -EINVAL;
	}
	return 0;
}

/* Check the combination; 0 or -EINVAL (message printed). */
static int bench_check(const char *verb, struct bench_cfg *c, bool world_set)
{
	bool file = !strncmp(c->disk, "file:", 5);

	if (!world_set)
		c->sim_world = !file;
	if (file && c->sim_world) {
		cli_err(verb, "a file disk does real I/O: use --world=real");
		return -EINVAL;
	}
	if (c->direct && !file) {
		cli_err(verb, "--direct applies to file: disks only");
		return -EINVAL;
	}
	if (c->direct && c->bs % 4096) {
		cli_err(verb, "--direct needs --bs to be a multiple of 4k");
		return -EINVAL;
	}
	if (!c->threads)
		c->threads = c->nioprio > 1 ? c->nioprio : 1;
	if (c->nioprio > 1 && c->nioprio != c->threads) {
		cli_err(verb, "--ioprio has %u entries for %u threads (give one, or one per thread)",
			c->nioprio, c->threads);
		return -EINVAL;
	}
	return 0;
}

/* The stack: the world, disk 0 and (through the block layer) its queue,
 * with every --GROUP option applied; 0 or -EINVAL (message printed). */
static int bench_spec(const char *verb, struct bench *b, struct stack_spec *sp)
{
	const struct bench_cfg *c = &b->b_cfg;
	bool file = !strncmp(c->disk, "file:", 5);
	char err[256];

	stack_spec_default(sp);
	sp->world = c->sim_world ? RT_WORLD_SIM : RT_WORLD_REAL;
	sp->seed = c->seed;
	sp->disks[0].model = c->disk;
	sp->disks[0].size = c->size ? c->size : file ? BENCH_FILE_SIZE : 0;
	if (c->use_blk) {
		sp->queues[0].elevator = blk_elevator_name(c->elevator);
		if (c->trace_path) {
			sp->queues[0].trace_fn = bench_trace_line;
			sp->queues[0].trace_arg = b;
		}
	}
	if (c->direct && stack_spec_set_group(sp, "file", "direct=1", err, sizeof(err)))
		goto fail;
	for (unsigned i = 0; i < c->ngrp; i++)
		if (stack_spec_set_group(sp, c->grp_name[i], c->grp_list[i], err, sizeof(err)))
			goto fail;
	return 0;
fail:
	cli_err(verb, "%s", err);
	return -EINVAL;
}

static int bench_world(struct bench *b, const struct stack_spec *sp)
{
	char err[256];
	int rc = stack_new(sp, &b->b_stack, err, sizeof(err));
	struct stack *s = b->b_stack;

	if (rc < 0) {
		b->b_err = rc;
		b->b_err_usage = rc == -EINVAL;
		snprintf(b->b_err_msg, sizeof(b->b_err_msg), "%s", err);
		b->b_err_what = b->b_err_msg;
		return rc;
	}
	rc = stack_run(s, "devbench", bench_stack_main, b);
	if (rc < 0 && !b->b_err)
		b->b_err_what = "cannot open the disk"; /* the stack's only part before the run */
	stack_free(s);
	b->b_stack = NULL;
	return rc;
}

int cmd_devbench(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	struct stack_spec spec;
	struct bench_stats s;
	bool world_set = false;
	int rc, status = EXIT_OK;

	if (!b) {
		cli_err(argv[0], "out of memory");
		return EXIT_IO;
	}
	b->b_cfg = (struct bench_cfg){ .disk = "hdd", .pattern = PAT_RAND, .bs = 4096,
				       .ops = 1000, .seed = 1, .sim_world = true,
				       .elevator = BLK_ELV_CFQ };
	rc = bench_args(argc, argv, &b->b_cfg, &world_set);
	if (rc == 1) {
		usage(stdout);
		goto out;
	}
	if (rc < 0 || bench_check(argv[0], &b->b_cfg, world_set) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (b->b_cfg.params) {
		if (stack_params_print(stdout, b->b_cfg.json) < 0)
			status = EXIT_IO;
		goto out;
	}
	if (bench_spec(argv[0], b, &spec) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	rc = bench_world(b, &spec);
	if (rc < 0 || b->b_err) {
		int err = rc < 0 ? rc : b->b_err;

		if (b->b_err_usage) {
			cli_err(argv[0], "%s", b->b_err_what);
			status = EXIT_USAGE;
		} else {
			cli_err(argv[0], "%s '%s': %s", b->b_err_what ? b->b_err_what : "cannot run",
				b->b_cfg.disk, strerror(-err));
			status = EXIT_IO;
		}
		goto out;
	}
	if (bench_merge(b, &s) < 0) {
		cli_err(argv[0], "out of memory");
		status = EXIT_IO;
		goto out;
	}
	bench_report(b, &s);
out:
	for (unsigned i = 0; i < b->b_nthreads; i++) {
		free(b->b_thr[i].bt_buf);
		free(b->b_thr[i].bt_lat_ns);
	}
	free(b);
	return status;
}

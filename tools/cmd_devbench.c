/*
 * ujbd devbench: run N I/Os against a simulated disk or a real file and
 * report IOPS, MB/s and latency.
 *
 * The run happens inside an rt world: a sim world seeded by --seed (virtual
 * time, so the same seed prints the same numbers byte for byte and nothing
 * from the wall clock reaches the output), or the real world (real sleeps
 * for a sim disk, real I/O for a file).
 *
 * Shape: this file parses the options and opens the world, the disk and the
 * queue (bench_world, bench_open, bench_queue_open); the load itself (the
 * per-thread issue loop, the merge of the threads' latency histograms and
 * the report) is the lab's devload (src/load/dev.c, load/load.h).
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
#include <sys/stat.h>

#include "cli.h"
#include "target.h"
#include "load/load.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/rt.h"
#include "priv/stack.h"

#define BENCH_MAX_OPS 10000000ull
#define BENCH_MAX_BS (16u << 20)
#define BENCH_FILE_SIZE (256ull << 20) /* default size of a file: disk */
#define BENCH_MAX_GROUPS 64            /* --GROUP=LIST options */

struct bench_cfg {
	const char *disk;         /* a disk model ("hdd", "ssd"), "mem" or "file:PATH" */
	enum load_dev_pattern pattern;
	uint32_t bs;
	uint64_t ops;
	uint64_t seed;
	uint64_t size;            /* 0 = the disk's default */
	bool sim_world;
	bool json;
	bool direct;
	bool force;               /* write-flush may overwrite a file that holds data */
	/* the block layer: used when any of these is given */
	bool use_blk;
	const char *elevator;         /* a registry name: cfq, the default of 2.6.18-2.6.32 */
	unsigned threads;             /* 1 */
	uint16_t ioprio[LOAD_DEV_MAX_THREADS];
	unsigned nioprio;             /* 0 = threads keep the caller's */
	const char *trace_path;
	bool elevator_set;            /* --elevator given */
	bool params;                  /* --params: print the tables */
	/* --GROUP=LIST options, applied to the spec once all are parsed */
	const char *grp_name[BENCH_MAX_GROUPS];
	const char *grp_list[BENCH_MAX_GROUPS];
	unsigned ngrp;
};

struct bench {
	struct bench_cfg b_cfg;
	struct stack *b_stack;    /* the world, the disk and its queue */
	struct dev *b_dev;
	struct blk_queue *b_q;    /* through the block layer, or NULL */
	FILE *b_trace;
	struct load_dev b_load; /* what the threads measured */
	int b_err;                /* first error, negative errno */
	const char *b_err_what;
	const char *b_err_subject; /* what b_err_what is about; NULL: the disk */
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

/* The body of the run, as the first thread of the world. */
static void bench_run(void *arg)
{
	struct bench *b = arg;
	const struct bench_cfg *c = &b->b_cfg;
	uint16_t prio[LOAD_DEV_MAX_THREADS];
	struct load_dev_opts lo = { .pattern = c->pattern, .bs = c->bs, .ops = c->ops,
				       .seed = c->seed, .threads = c->use_blk ? c->threads : 1,
				       .ioprio = c->nioprio ? prio : NULL };
	uint64_t span;
	int err;

	err = bench_open(b);
	if (err < 0) {
		b->b_err = err;
		b->b_err_what = "cannot open the disk";
		return;
	}
	snprintf(b->b_name, sizeof(b->b_name), "%s", dev_name(b->b_dev));
	span = dev_size(b->b_dev) - dev_size(b->b_dev) % c->bs;
	if (c->bs % dev_block_size(b->b_dev) || span == 0) {
		b->b_err = -EINVAL;
		b->b_err_usage = true;
		b->b_err_what = "--bs must be a multiple of the disk's block size and fit in it";
		goto out;
	}
	/* one --ioprio for all threads, or one each */
	for (unsigned i = 0; i < lo.threads && c->nioprio; i++)
		prio[i] = c->ioprio[c->nioprio == 1 ? 0 : i];
	if (c->use_blk) {
		b->b_err = bench_queue_open(b);
		if (b->b_err) {
			bool trace = !b->b_trace && c->trace_path;

			b->b_err_what = trace ? "cannot write the trace" : "cannot set up the block queue";
			b->b_err_subject = trace ? c->trace_path : NULL;
			goto out;
		}
	}
	err = load_dev_run(b->b_dev, b->b_q, &lo, &b->b_load);
	if (b->b_q) {
		int cerr = bench_queue_close(b);

		if (!err && cerr) {
			b->b_err = cerr;
			b->b_err_what = "cannot write the trace";
			b->b_err_subject = c->trace_path;
		}
	}
	if (err < 0) {
		b->b_err = err;
		b->b_err_what = err == -ENOMEM ? "out of memory" : "I/O error";
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

/* The lab's devbench report, with the names this run had. */
static int bench_report(const struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	struct load_dev_report rep = {
		.disk = b->b_name, .engine = b->b_engine,
		.pattern = load_dev_pattern_name(c->pattern), .bs = c->bs,
		.world = c->sim_world ? "sim" : "real", .seed = c->seed,
		.elevator = c->use_blk ? c->elevator : NULL,
		.json = c->json,
	};

	return load_dev_print(stdout, &rep, &b->b_load);
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
		"                     [--size=SIZE] [--direct] [--force] [--json]\n"
		"                     [--elevator=%s] [--threads=N]\n"
		"                     [--ioprio=CLASS:LEVEL[,CLASS:LEVEL...]] [--trace=FILE]\n"
		"                     [--GROUP=NAME=VALUE[,NAME=VALUE...]] [--params [--json]]\n"
		"\n"
		"Run N I/Os, one at a time, and report IOPS, MB/s and latency.\n"
		"  --disk     a simulated disk model, mem (RAM), or file:PATH (a regular\n"
		"             file, created and sized if missing for write-flush, or a\n"
		"             block device); default hdd. Models:\n", models, elvs);
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
		"  --size     disk size; default the model's (see --params); write-flush:\n"
		"             256M for a file that must be created or is smaller\n"
		"  --direct   file: open with O_DIRECT (4 KiB blocks)\n"
		"  --force    write-flush on a file that holds data (any non-zero byte\n"
		"             where it writes, a journal, a file system): without it,\n"
		"             refused. seq and rand never create, grow or write a file\n"
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
		fprintf(f, " --%s", stack_group_at(i));
	fprintf(f,
		"\n"
		"  --params   print every group's table (with --json: one JSON object)\n"
		"\n"
		"exit status: 0 ok, 1 the file is missing or holds data, 2 bad arguments,\n"
		"3 I/O error\n");
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

		if (c->nioprio == LOAD_DEV_MAX_THREADS || rt_ioprio_parse(tok, &prio) ||
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
		{ "force", no_argument, NULL, 'F' },
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
	const struct blk_elevator_type *e = blk_elevator_find(group);

	if (c->ngrp == BENCH_MAX_GROUPS) {
		cli_err(verb, "too many parameter options");
		return -EINVAL;
	}
	if (e) {
		if (!c->elevator_set)
			c->elevator = e->e_name;
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
	optind = 0;
	while (!rc && (ch = cli_getopt(argc, argv, "h", opts)) != -1) {
		if (ch == '?') {
			rc = -EINVAL; /* cli_getopt said why */
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
	case 'p':
		if (load_dev_pattern_parse(arg, &c->pattern)) {
			cli_err(verb, "unknown pattern '%s' (seq, rand or write-flush)", arg);
			return -EINVAL;
		}
		break;
	case 'b':
		if (cli_size(verb, "bs", arg, 512, BENCH_MAX_BS, 512, &v))
			return -EINVAL;
		c->bs = (uint32_t)v;
		break;
	case 'n':
		if (cli_number(verb, "ops", arg, 1, BENCH_MAX_OPS, &v))
			return -EINVAL;
		c->ops = v;
		break;
	case 's':
		if (cli_number(verb, "seed", arg, 0, UINT64_MAX, &c->seed))
			return -EINVAL;
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
		if (cli_size(verb, "size", arg, 1, UINT64_MAX, 0, &c->size))
			return -EINVAL;
		break;
	case 'D':
		c->direct = true;
		break;
	case 'F':
		c->force = true;
		break;
	case 'j':
		c->json = true;
		break;
	case 'e':
		if (!blk_elevator_find(arg)) {
			char elvs[256];

			cli_err(verb, "unknown elevator '%s' (%s)", arg,
				names_of(elvs, sizeof(elvs), false));
			return -EINVAL;
		}
		c->elevator = arg;
		c->elevator_set = true;
		c->use_blk = true;
		break;
	case 't':
		if (cli_number(verb, "threads", arg, 1, LOAD_DEV_MAX_THREADS, &v))
			return -EINVAL;
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
	if (file && c->pattern != LOAD_DEV_WRITE_FLUSH && c->size) {
		cli_err(verb, "--size: a read pattern reads '%s' as it is (it never creates, "
			"grows or writes a file)", c->disk + 5);
		return -EINVAL;
	}
	if (!c->threads)
		c->threads = c->nioprio > 1 ? c->nioprio : 1;
	if (c->nioprio > 1 && c->nioprio != c->threads) {
		cli_err(verb, "--ioprio has %u entries for %u thread%s (give one, or one per thread)",
			c->nioprio, c->threads, cli_s(c->threads));
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

	bool writes = c->pattern == LOAD_DEV_WRITE_FLUSH;

	stack_spec_default(sp);
	sp->world = c->sim_world ? RT_WORLD_SIM : RT_WORLD_REAL;
	sp->seed = c->seed;
	sp->disks[0].model = c->disk;
	sp->disks[0].size = c->size ? c->size : file && writes ? BENCH_FILE_SIZE : 0;
	if (c->use_blk) {
		sp->queues[0].elevator = c->elevator;
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
	/* last, so no --file=... undoes it: a read pattern never writes a file */
	if (file && !writes &&
	    stack_spec_set_group(sp, "file", "read_only=1,create=0", err, sizeof(err)))
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
	bool world_set = false;
	int rc, status = EXIT_OK;

	if (!b) {
		cli_err(argv[0], "out of memory");
		return EXIT_IO;
	}
	b->b_cfg = (struct bench_cfg){ .disk = "hdd", .pattern = LOAD_DEV_RAND, .bs = 4096,
				       .ops = 1000, .seed = 1, .sim_world = true,
				       .elevator = "cfq" };
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
		cli_json_done();
		if (stack_params_print(stdout, b->b_cfg.json) < 0)
			status = EXIT_IO;
		goto out;
	}
	if (bench_spec(argv[0], b, &spec) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	/* write-flush writes ops blocks from the start of a file (mke2fs's rule) */
	if (!strncmp(b->b_cfg.disk, "file:", 5) && b->b_cfg.pattern == LOAD_DEV_WRITE_FLUSH) {
		status = target_may_overwrite(argv[0], b->b_cfg.disk + 5,
					      b->b_cfg.ops * b->b_cfg.bs, b->b_cfg.force);
		if (status)
			goto out;
		struct stat st; /* the default size grows a smaller file: say so */
		if (!b->b_cfg.size && stat(b->b_cfg.disk + 5, &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size < BENCH_FILE_SIZE)
			cli_err(argv[0], "note: growing '%s' from %llu to %llu bytes (--size sets "
				"the size)", b->b_cfg.disk + 5, (unsigned long long)st.st_size,
				BENCH_FILE_SIZE);
	}
	rc = bench_world(b, &spec);
	if (rc < 0 || b->b_err) {
		int err = rc < 0 ? rc : b->b_err;

		if (b->b_err_usage) {
			cli_err(argv[0], "%s", b->b_err_what);
			status = EXIT_USAGE;
		} else {
			cli_err(argv[0], "%s '%s': %s", b->b_err_what ? b->b_err_what : "cannot run",
				b->b_err_subject ? b->b_err_subject : b->b_cfg.disk,
				target_strerror(err));
			status = target_exit_status(err);
		}
		goto out;
	}
	cli_json_done();
	if (bench_report(b) < 0)
		status = EXIT_IO;
out:
	free(b);
	return status;
}

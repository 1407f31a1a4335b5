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
 * the report) is the lab's devload (src/lab/devload.c, lab/workload.h).
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
#include "lab/workload.h"
#include "ujbd/blk.h"
#include "ujbd/dev.h"
#include "ujbd/rt.h"

#define BENCH_MAX_OPS 10000000ull
#define BENCH_MAX_BS (16u << 20)
#define BENCH_FILE_SIZE (256ull << 20) /* default size of a file: disk */

struct bench_cfg {
	const char *disk;         /* "hdd", "ssd" or "file:PATH" */
	enum lab_devload_pattern pattern;
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
	uint16_t ioprio[LAB_DEVLOAD_MAX_THREADS];
	unsigned nioprio;             /* 0 = threads keep the caller's */
	const char *trace_path;
};

struct bench {
	struct bench_cfg b_cfg;
	struct dev *b_dev;
	struct blk_queue *b_q;    /* through the block layer, or NULL */
	FILE *b_trace;
	struct lab_devload b_load; /* what the threads measured */
	int b_err;                /* first error, negative errno */
	const char *b_err_what;
	bool b_err_usage;         /* the error is the arguments' fault */
	char b_name[64];          /* the disk's name for the report */
	const char *b_engine;     /* file disks: the engine */
};

/* ---- the disk ------------------------------------------------------------ */

static int bench_open(struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;

	if (!strcmp(c->disk, "hdd")) {
		struct dev_hdd_params p;

		dev_hdd_defaults(&p);
		if (c->size)
			p.size = c->size;
		return dev_sim_hdd_new(&p, &b->b_dev);
	}
	if (!strcmp(c->disk, "ssd")) {
		struct dev_ssd_params p;

		dev_ssd_defaults(&p);
		if (c->size)
			p.size = c->size;
		return dev_sim_ssd_new(&p, &b->b_dev);
	}
	struct dev_file_opts o = { .create = true, .direct = c->direct,
				   .size = c->size ? c->size : BENCH_FILE_SIZE,
				   .block_size = c->direct ? 4096 : 0 };
	int err = dev_file_open(c->disk + 5, &o, &b->b_dev);

	if (err == 0)
		b->b_engine = dev_file_engine_name(b->b_dev);
	return err;
}

/* ---- through the block layer ---------------------------------------------- */

static void bench_trace_line(void *arg, const struct blk_trace_event *ev)
{
	char line[256];

	blk_trace_format(ev, line, sizeof(line));
	fprintf(arg, "%s\n", line);
}

static int bench_queue_open(struct bench *b)
{
	struct blk_queue_opts o;

	blk_queue_opts_default(&o);
	o.elevator = b->b_cfg.elevator;
	if (b->b_cfg.trace_path) {
		b->b_trace = fopen(b->b_cfg.trace_path, "w");
		if (!b->b_trace)
			return -errno;
		o.trace_fn = bench_trace_line;
		o.trace_arg = b->b_trace;
		o.trace_major = 254;
		o.trace_minor = 0;
	}
	return blk_queue_new(b->b_dev, &o, &b->b_q);
}

/* Free the queue; the trace file ends with the btt-style summary. */
static int bench_queue_close(struct bench *b)
{
	int err = 0;

	if (b->b_q && b->b_trace)
		err = blk_stats_print(b->b_q, b->b_trace);
	blk_queue_free(b->b_q);
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
	uint16_t prio[LAB_DEVLOAD_MAX_THREADS];
	struct lab_devload_opts lo = { .pattern = c->pattern, .bs = c->bs, .ops = c->ops,
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
			b->b_err_what = b->b_trace || !c->trace_path ?
				"cannot set up the block queue" : "cannot write the trace";
			goto out;
		}
	}
	err = lab_devload_run(b->b_dev, b->b_q, &lo, &b->b_load);
	if (b->b_q) {
		int cerr = bench_queue_close(b);

		if (!err && cerr) {
			b->b_err = cerr;
			b->b_err_what = "cannot write the trace";
		}
	}
	if (err < 0) {
		b->b_err = err;
		b->b_err_what = err == -ENOMEM ? "out of memory" : "I/O error";
	}
out:
	if (b->b_q || b->b_trace)
		bench_queue_close(b);
	dev_close(b->b_dev);
	b->b_dev = NULL;
}

/* The lab's devbench report, with the names this run had. */
static int bench_report(const struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	struct lab_devload_report rep = {
		.disk = b->b_name, .engine = b->b_engine,
		.pattern = lab_devload_pattern_name(c->pattern), .bs = c->bs,
		.world = c->sim_world ? "sim" : "real", .seed = c->seed,
		.elevator = c->use_blk ? blk_elevator_name(c->elevator) : NULL,
		.json = c->json,
	};

	return lab_devload_print(stdout, &rep, &b->b_load);
}

/* ---- the command line ---------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd devbench [--disk=hdd|ssd|file:PATH] [--pattern=seq|rand|write-flush]\n"
		"                     [--bs=SIZE] [--ops=N] [--seed=S] [--world=sim|real]\n"
		"                     [--size=SIZE] [--direct] [--json]\n"
		"                     [--elevator=noop|deadline|cfq] [--threads=N]\n"
		"                     [--ioprio=CLASS:LEVEL[,CLASS:LEVEL...]] [--trace=FILE]\n"
		"\n"
		"Run N I/Os, one at a time, and report IOPS, MB/s and latency.\n"
		"  --disk     hdd (simulated 7200 rpm drive), ssd (simulated), or file:PATH\n"
		"             (a regular file, created and sized if missing, or a block\n"
		"             device); default hdd\n"
		"  --pattern  seq: sequential reads from the start; rand: uniform random\n"
		"             reads over the disk; write-flush: a sequential write then a\n"
		"             cache flush, timed as one operation; default rand\n"
		"  --bs       bytes per I/O (k/M suffixes); default 4k\n"
		"  --ops      number of I/Os; default 1000\n"
		"  --seed     seed of the sim world and of the random offsets; default 1\n"
		"  --world    sim (virtual time: same seed, same output) or real (real\n"
		"             sleeps for a simulated disk); default sim, real for file:\n"
		"  --size     disk size; default the model's (500G hdd, 80G ssd), 256M for\n"
		"             a file that must be created or is smaller\n"
		"  --direct   file: open with O_DIRECT (4 KiB blocks)\n"
		"  --json     one JSON object: iops, mb_s, latency_us {avg, p50, p99, max}\n"
		"\n"
		"Through ujbd's block layer (any of the four options below): bios go\n"
		"through one queue over the disk; --ops is shared by all threads (the run\n"
		"ends after that many I/Os in all); the report adds the elevator and a\n"
		"'threads' list (name, ioprio, ops, iops, mb_s, latency_us per thread).\n"
		"  --elevator noop, deadline or cfq (2.6.29-2.6.33 rules); default cfq\n"
		"  --threads  issuing threads, 1 to 64; default 1, or the number of --ioprio\n"
		"             entries\n"
		"  --ioprio   one I/O priority per thread (or one for all): rt:0-7,\n"
		"             be:0-7, idle; default: the threads keep devbench's (none = be:4)\n"
		"  --trace    write a blktrace of the queue to FILE, in blkparse's format,\n"
		"             ending with a per-process and per-class summary\n"
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

		if (c->nioprio == LAB_DEVLOAD_MAX_THREADS || rt_ioprio_parse(tok, &prio) ||
		    RT_IOPRIO_CLASS(prio) == RT_IOPRIO_CLASS_NONE)
			return -EINVAL;
		c->ioprio[c->nioprio++] = prio;
	}
	return c->nioprio ? 0 : -EINVAL;
}

/* Parse argv into c; 0, 1 for --help, or -EINVAL (message printed). */
static int bench_args(int argc, char **argv, struct bench_cfg *c, bool *world_set)
{
	static const struct option opts[] = {
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int ch;

	opterr = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			return 1;
		case 'd':
			if (strcmp(optarg, "hdd") && strcmp(optarg, "ssd") &&
			    (strncmp(optarg, "file:", 5) || !optarg[5])) {
				cli_err(argv[0], "unknown disk '%s' (hdd, ssd or file:PATH)", optarg);
				return -EINVAL;
			}
			c->disk = optarg;
			break;
		case 'p':
			if (lab_devload_pattern_parse(optarg, &c->pattern)) {
				cli_err(argv[0], "unknown pattern '%s' (seq, rand or write-flush)", optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			if (dev_parse_size(optarg, &v) || v < 512 || v > BENCH_MAX_BS || v % 512) {
				cli_err(argv[0], "bad --bs '%s' (a multiple of 512 up to 16M)", optarg);
				return -EINVAL;
			}
			c->bs = (uint32_t)v;
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v == 0 || v > BENCH_MAX_OPS) {
				cli_err(argv[0], "bad --ops '%s' (1 to %llu)", optarg, BENCH_MAX_OPS);
				return -EINVAL;
			}
			c->ops = v;
			break;
		case 's':
			if (parse_u64(optarg, &c->seed)) {
				cli_err(argv[0], "bad --seed '%s' (an unsigned integer)", optarg);
				return -EINVAL;
			}
			break;
		case 'w':
			if (strcmp(optarg, "sim") && strcmp(optarg, "real")) {
				cli_err(argv[0], "unknown world '%s' (sim or real)", optarg);
				return -EINVAL;
			}
			c->sim_world = !strcmp(optarg, "sim");
			*world_set = true;
			break;
		case 'z':
			if (dev_parse_size(optarg, &c->size) || c->size == 0) {
				cli_err(argv[0], "bad --size '%s'", optarg);
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
			if (blk_elevator_parse(optarg, &c->elevator)) {
				cli_err(argv[0], "unknown elevator '%s' (noop, deadline or cfq)", optarg);
				return -EINVAL;
			}
			c->use_blk = true;
			break;
		case 't':
			if (parse_u64(optarg, &v) || v == 0 || v > LAB_DEVLOAD_MAX_THREADS) {
				cli_err(argv[0], "bad --threads '%s' (1 to %d)", optarg,
					LAB_DEVLOAD_MAX_THREADS);
				return -EINVAL;
			}
			c->threads = (unsigned)v;
			c->use_blk = true;
			break;
		case 'i':
			if (bench_parse_ioprio(optarg, c) < 0) {
				cli_err(argv[0], "bad --ioprio '%s' (CLASS:LEVEL[,...]: rt:0-7, be:0-7, idle)",
					optarg);
				return -EINVAL;
			}
			c->use_blk = true;
			break;
		case 'T':
			c->trace_path = optarg;
			c->use_blk = true;
			break;
		case ':':
			cli_err(argv[0], "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			cli_err(argv[0], "unknown option '%s' (ujbd devbench --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		cli_err(argv[0], "unexpected argument '%s'", argv[optind]);
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

static int bench_world(struct bench *b)
{
	struct rt_world_opts o = {
		.kind = b->b_cfg.sim_world ? RT_WORLD_SIM : RT_WORLD_REAL,
		.seed = b->b_cfg.seed,
	};
	rt_world *w;
	int err = rt_world_new(&o, &w);

	if (err < 0)
		return err;
	err = rt_world_run(w, "devbench", bench_run, b);
	rt_world_free(w);
	return err;
}

int cmd_devbench(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	bool world_set = false;
	int rc, status = EXIT_OK;

	if (!b) {
		cli_err(argv[0], "out of memory");
		return EXIT_IO;
	}
	b->b_cfg = (struct bench_cfg){ .disk = "hdd", .pattern = LAB_DEVLOAD_RAND, .bs = 4096,
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
	rc = bench_world(b);
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
	if (bench_report(b) < 0)
		status = EXIT_IO;
out:
	free(b);
	return status;
}

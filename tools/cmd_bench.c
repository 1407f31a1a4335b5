/*
 * ujbd bench: the journal runtime's three benchmarks, in the real world, on
 * files in a directory, and the plain-file baselines they are compared with:
 * fsync-loop, group-commit and handles (the workloads, their threads and
 * their report are the lab's jload: src/load/jbd.c, load/load.h). This
 * file parses the options and creates and opens the files and the journal.
 *
 * The one idea: a benchmark measures, it does not judge. Every run prints
 * ops/s and the latency of one iteration (p50/p99/max from a log-linear
 * histogram), plus the commit thread's wakeups; bench/run sets runs side by
 * side and computes the ratios.
 *
 * Files: a fresh directory ujbd-bench.XXXXXX under --dir (default $TMPDIR or
 * /tmp), removed at the end, and on SIGINT, SIGTERM or SIGHUP (the
 * handler below). Layouts (--layout):
 *   one-file   (default) one file "image": the journal as a region at its
 *              start (blocks [0, journal)), the data blocks after it, as an
 *              ext4 image's internal journal is: one device, one queue, so
 *              the commit block's PREFLUSH also covers the ordered data
 *              written before it. (At the start: ujbd formats only a
 *              journal whose superblock is device block 0.)
 *   two-files  a standalone journal file "journal" and a data file "data"
 *              (an external journal): two devices, each flushed on its own.
 * Every file is written out in full and synced before the timed loop (the
 * journal region too), so neither side pays for block allocation in the
 * host file system during it; the journal is then formatted by ujbd_open.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "target/target.h"
#include "load/load.h"
#include "ujbd/dev.h"
#include "priv/rt.h"
#include "priv/stack.h"
#include "ujbd/ujbd.h"

#define BENCH_MAX_THREADS LOAD_MAX_THREADS
#define BENCH_BS LOAD_JBD_BS
#define BENCH_SPAN LOAD_JBD_SPAN
#define BENCH_MAX_ITER 100000000ull

static const char *const kind_names[] = { "fsync-loop", "group-commit",
					  "handles" };
static const char *const mode_names[] = { "ordered", "journal", "writeback" };
static const char *const wake_names[] = { "needed", "always" };
enum bench_layout { BL_ONE_FILE, BL_TWO_FILES };
static const char *const layout_names[] = { "one-file", "two-files" };

struct bench_cfg {
	enum load_jbd_kind kind;
	const char *dir;
	uint64_t iterations;      /* per thread; 0 = the workload's default */
	unsigned threads;         /* 0 = the workload's default */
	bool json, stats, baseline, sync_handles;
	bool use_fsync;           /* baseline: fsync(2), not fdatasync(2) */
	/* the journal's options: ujbd_opts_default, or ujbd_opts_jbd2 with
	 * --jbd2, then what was given (unset: -1) */
	bool jbd2;
	int async_commit;         /* enum ujbd_async_commit */
	int caller_commit;        /* bool */
	int64_t ordered_kib;      /* ordered_journal_bytes / 1024 */
	enum ujbd_data_mode data_mode;
	enum ujbd_wake_policy wake;
	enum ujbd_under_commit under_commit;
	enum bench_layout layout;
	uint64_t journal_mb;
	unsigned clean_fsyncs;    /* extra fsyncs of an already committed tid */
	/* for refusing what means nothing: the first option given that sets up
	 * the journal (the baseline has none), and the first about fsync
	 * (handles does none) */
	const char *journal_opt, *fsync_opt;
};

struct bench {
	struct bench_cfg b_cfg;
	char b_dir[4096];          /* the run's own directory */
	char b_model[2][4300];     /* the stack's disks: "file:PATH" */
	uint64_t b_base;           /* first data block (one-file: after the journal) */
	struct ujbd *b_j;          /* the stack's journal, during the run */
	int *b_fds;                /* [threads] baseline: each thread's file */
	struct load_jbd b_load;   /* what the threads measured */
	struct ujbd_stats b_stats;
	bool b_async, b_caller;    /* the journal's async and caller commit, as opened */
	int b_err;
	bool b_err_sys;            /* b_err is a system call's (files), not the journal's */
	char b_err_msg[8600];
};

static void bench_fail_as(struct bench *b, int err, bool sys, const char *fmt,
			  const char *what)
{
	if (b->b_err)
		return;
	b->b_err = err;
	b->b_err_sys = sys;
	snprintf(b->b_err_msg, sizeof(b->b_err_msg), fmt, what,
		 sys ? target_strerror(err) : ujbd_strerror(err));
}

/* The journal's error (ujbd_strerror's words). */
static void bench_fail(struct bench *b, int err, const char *fmt, const char *what)
{
	bench_fail_as(b, err, false, fmt, what);
}

/* A file's error: the system's words, and its exit status. */
static void bench_fail_sys(struct bench *b, int err, const char *fmt, const char *what)
{
	bench_fail_as(b, err, true, fmt, what);
}

/* ---- files --------------------------------------------------------------- */

static uint64_t data_blocks(const struct bench *b)
{
	return load_jbd_data_blocks(b->b_cfg.kind, b->b_cfg.threads);
}

/* Create path with size bytes written out (zeros) and synced. */
static int file_fill(const char *path, uint64_t size, int *fdout)
{
	static const uint8_t zero[65536];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), err = 0;

	if (fd < 0)
		return -errno;
	for (uint64_t off = 0; off < size && !err; off += sizeof(zero)) {
		size_t n = size - off < sizeof(zero) ? size - off : sizeof(zero);
		if (pwrite(fd, zero, n, (off_t)off) != (ssize_t)n)
			err = -errno ? -errno : -EIO;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (err || !fdout)
		close(fd);
	else
		*fdout = fd;
	return err;
}

static void path_in(const struct bench *b, char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", b->b_dir, name);
}

/*
 * What a run may create, one list for the normal end and for a signal: a
 * run stopped by ^C or kill(1) must not leave its files (32 MiB and more)
 * behind. The handler removes them with async-signal-safe calls only
 * (unlinkat, rmdir), then dies of the signal as it would have. A signal
 * the caller ignores (a background job of a script) stays ignored.
 */
static const int bench_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct {
	int dirfd;                        /* the run's directory */
	char dir[4096];
	char names[3 + BENCH_MAX_THREADS][16];
	unsigned n;
	struct sigaction old[3];
	bool installed[3];
} bench_files = { .dirfd = -1 };

static void bench_remove_files(void)
{
	for (unsigned i = 0; i < bench_files.n; i++)
		unlinkat(bench_files.dirfd, bench_files.names[i], 0);
	rmdir(bench_files.dir);
}

static void bench_on_signal(int sig)
{
	bench_remove_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* List the run's files (before any exists) and take the signals. */
static void bench_files_init(const struct bench *b)
{
	static const char *const names[] = { "journal", "data", "image" };
	struct sigaction sa = { .sa_handler = bench_on_signal };

	snprintf(bench_files.dir, sizeof(bench_files.dir), "%s", b->b_dir);
	bench_files.dirfd = open(b->b_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 0; i < 3; i++)
		snprintf(bench_files.names[bench_files.n++], 16, "%s", names[i]);
	for (unsigned i = 0; i < b->b_cfg.threads; i++)
		snprintf(bench_files.names[bench_files.n++], 16, "base.%u", i);
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < 3; i++) {
		struct sigaction cur;

		if (sigaction(bench_sigs[i], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
			bench_files.installed[i] = sigaction(bench_sigs[i], &sa,
							     &bench_files.old[i]) == 0;
	}
}

static int bench_mkdir(struct bench *b)
{
	const char *base = b->b_cfg.dir;

	if (!base)
		base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(b->b_dir, sizeof(b->b_dir), "%s/ujbd-bench.XXXXXX", base);
	if (!mkdtemp(b->b_dir)) {
		int err = -errno;
		bench_fail_sys(b, err, "cannot create a directory in '%s': %s", base);
		return err;
	}
	bench_files_init(b);
	return 0;
}

/* Remove what the run created: its files, then its directory; give the
 * signals back. */
static void bench_rmdir(void)
{
	bench_remove_files();
	for (unsigned i = 0; i < 3; i++)
		if (bench_files.installed[i])
			sigaction(bench_sigs[i], &bench_files.old[i], NULL);
	if (bench_files.dirfd >= 0)
		close(bench_files.dirfd);
	bench_files.dirfd = -1;
}

/* ---- the journal ---------------------------------------------------------- */

/* Create the file `name` of nblocks blocks (written out, synced) as the
 * stack's disk i. */
static int bench_file(struct bench *b, const char *name, uint64_t nblocks, unsigned i,
		      struct stack_spec *sp)
{
	char p[4200];
	int err;

	path_in(b, p, sizeof(p), name);
	err = file_fill(p, nblocks * BENCH_BS, NULL);
	if (err)
		bench_fail_sys(b, err, "cannot create '%s': %s", p);
	snprintf(b->b_model[i], sizeof(b->b_model[i]), "file:%s", p);
	sp->disks[i] = (struct stack_disk_spec){ b->b_model[i], NULL, 0 };
	return err;
}

/*
 * The stack of the run: the real world; for the journal, its files in the
 * chosen layout (the journal in [0, jblocks) of disk 0 in one-file, disk 1
 * in two-files; the data device is disk 0), each with ujbd's default noop
 * queue; the baseline needs only the world.
 */
static int bench_spec(struct bench *b, struct stack_spec *sp)
{
	const struct bench_cfg *c = &b->b_cfg;
	uint64_t jblocks = c->journal_mb * (1u << 20) / BENCH_BS, nd = data_blocks(b);
	struct ujbd_opts *o = &sp->jopts;
	int err;

	stack_spec_default(sp);
	sp->world = RT_WORLD_REAL;
	sp->seed = 1;
	sp->ndisks = 0;
	if (c->baseline)
		return 0;
	if (c->layout == BL_ONE_FILE) {
		sp->ndisks = 1;
		err = bench_file(b, "image", jblocks + nd, 0, sp);
		b->b_base = jblocks;
	} else {
		sp->ndisks = 2;
		sp->journal_disk = 1;
		err = bench_file(b, "data", nd, 0, sp);
		if (!err)
			err = bench_file(b, "journal", jblocks, 1, sp);
	}
	sp->journal = true;
	sp->journal_blocks = jblocks;
	sp->block_size = BENCH_BS;
	if (c->jbd2)
		ujbd_opts_jbd2(o);
	o->data_mode = c->data_mode;
	o->wake = c->wake;
	o->under_commit = c->under_commit;
	if (c->async_commit >= 0)
		o->async_commit = (enum ujbd_async_commit)c->async_commit;
	if (c->caller_commit >= 0)
		o->caller_commit = c->caller_commit;
	if (c->ordered_kib >= 0)
		o->ordered_journal_bytes = (uint32_t)c->ordered_kib * 1024;
	o->format = true;
	o->format_opts.blocksize = BENCH_BS;
	o->format_opts.blocks = jblocks;
	o->format_opts.csum = JBD_CSUM_KIND_V3;
	/* a standalone journal: AUTO is ON (ujbd_open) */
	o->format_opts.async_commit = o->async_commit != UJBD_ASYNC_COMMIT_OFF;
	b->b_async = o->format_opts.async_commit;
	b->b_caller = o->caller_commit;
	return err;
}

/* ---- the run -------------------------------------------------------------- */

/* The lab's workload on the journal or the baseline's files. */
static int bench_drive(struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	struct load_jbd_opts o = {
		.kind = c->kind, .iterations = c->iterations, .threads = c->threads,
		.sync_handles = c->sync_handles, .clean_fsyncs = c->clean_fsyncs,
		.j = b->b_j, .base = b->b_base,
		.fds = c->baseline ? b->b_fds : NULL, .use_fsync = c->use_fsync,
	};
	int err = load_jbd_run(&o, &b->b_load);

	if (err && b->b_load.start_failed)
		bench_fail(b, err, "cannot start thread %s: %s", "bench");
	else if (err)
		bench_fail(b, err, "%s: %s", kind_names[c->kind]);
	return err;
}

static int bench_open_baseline(struct bench *b)
{
	char p[4200], name[32];

	for (unsigned i = 0; i < b->b_cfg.threads; i++) {
		int err;

		snprintf(name, sizeof(name), "base.%u", i);
		path_in(b, p, sizeof(p), name);
		err = file_fill(p, (uint64_t)BENCH_SPAN * BENCH_BS, &b->b_fds[i]);
		if (err)
			return bench_fail_sys(b, err, "cannot create '%s': %s", p), err;
	}
	return 0;
}

/* The run, on the stack's first thread: its journal is open (formatted). */
static int bench_main(struct stack *s, void *arg)
{
	struct bench *b = arg;
	int err = 0;

	b->b_j = stack_journal(s);
	if (b->b_cfg.baseline)
		err = bench_open_baseline(b);
	if (!err)
		err = bench_drive(b);
	if (!err && b->b_j) {
		err = ujbd_stats(b->b_j, &b->b_stats);
		if (err)
			bench_fail(b, err, "reading the statistics of '%s': %s", b->b_dir);
	}
	for (unsigned i = 0; i < b->b_cfg.threads; i++)
		if (b->b_fds[i] >= 0)
			close(b->b_fds[i]);
	b->b_j = NULL; /* the stack closes it */
	return 0;
}

/* Build the stack and run; an error the stack reports (opening or closing
 * the files or the journal) becomes the run's. */
static void bench_world(struct bench *b)
{
	struct stack_spec sp;
	struct stack *s = NULL;
	char err[256];
	int rc = bench_spec(b, &sp);

	if (rc)
		return;
	rc = stack_new(&sp, &s, err, sizeof(err));
	if (rc) {
		bench_fail(b, rc, "%s: %s", err);
		return;
	}
	rc = stack_run(s, "bench", bench_main, b);
	if (rc && !b->b_err) {
		b->b_err = rc;
		snprintf(b->b_err_msg, sizeof(b->b_err_msg), "%s (in '%s')", stack_error(s),
			 b->b_dir);
	}
	stack_free(s);
}

/* ---- report --------------------------------------------------------------- */

static void report(const struct bench *b)
{
	const struct bench_cfg *c = &b->b_cfg;
	struct load_jbd_report rep = {
		.kind = c->kind,
		.system = c->baseline ? (c->use_fsync ? "baseline-fsync" : "baseline") : "ujbd",
		.data_mode = mode_names[c->data_mode],
		.layout = c->baseline ? "-" : layout_names[c->layout],
		.threads = c->threads, .iterations = c->iterations,
		.baseline = c->baseline, .json = c->json,
		.stats = &b->b_stats, .with_stats = c->stats,
		.journal_mb = c->journal_mb, .wake = wake_names[c->wake],
		.under_commit = ujbd_under_commit_name(c->under_commit),
		.async_commit = b->b_async, .caller_commit = b->b_caller,
		.sync_handles = c->sync_handles, .clean_fsyncs = c->clean_fsyncs,
	};

	load_jbd_print(stdout, &rep, &b->b_load);
}

/* ---- arguments ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: ujbd bench fsync-loop|group-commit|handles [options]\n"
"\n"
"Run a journal benchmark on files in a fresh directory (removed afterwards),\n"
"in the real world, and print ops/s and per-iteration latency.\n"
"\n"
"  fsync-loop     write a data block and a metadata block, fsync; 2000 times\n"
"  group-commit   16 threads: start, dirty, stop, fsync; 250 times each\n"
"  handles        start, dirty, stop, no fsync; 1000000 times (1 thread)\n"
"\n"
"options:\n"
"  --dir=DIR          where to create the run's directory ($TMPDIR or /tmp)\n"
"  --iterations=N     iterations per thread (defaults above)\n"
"  --threads=N        worker threads (fsync-loop 1, group-commit 16, handles 1)\n"
"  --data-mode=MODE   ordered (default), journal or writeback\n"
"  --layout=LAYOUT    one-file (default: the journal as a region at the start\n"
"                     of the data's file, as an ext4 image's internal\n"
"                     journal) or two-files (a journal file and a data file)\n"
"  --baseline         the plain-file baseline instead: pwrite+fdatasync of a\n"
"                     block (fsync-loop), per thread on its own file\n"
"                     (group-commit); handles has none. The options below\n"
"                     (but --fsync) set up the journal: refused with it\n"
"  --fsync            the baseline calls fsync(2) instead of fdatasync(2) (on\n"
"                     ext4 that commits the mtime change through jbd2)\n"
"  --wake=POLICY      commit-thread wakeups: needed (default) or always\n"
"  --under-commit=P   a buffer the commit is logging: copy (default: the\n"
"                     running transaction changes it at once), wait-io\n"
"                     (jbd2's: wait for its log write to complete) or\n"
"                     wait-loop (jbd's before 3.11: until the commit's wait\n"
"                     loop reaches it)\n"
"  --jbd2             start from jbd2's choices (ujbd_opts_jbd2: no async\n"
"                     commit, ordered data home, kjournald commits: two\n"
"                     flushes per fsync) instead of ujbd_opts_default; the\n"
"                     three options below override either\n"
"  --async-commit[=W] the commit block with the log blocks, one flush (the\n"
"                     journal is v3): on (no W), off, or auto (on here: the\n"
"                     journal is standalone)\n"
"  --caller-commit[=yes|no]  an fsync commits on its own thread when no\n"
"                     commit runs (no W: yes), or through kjournald\n"
"  --ordered-journal-kib=N  data=ordered with async commit: journal up to N\n"
"                     KiB of a transaction's data instead of writing it home\n"
"                     (0: all home, jbd2's way)\n"
"  --sync-handles     fsync through sync handles (with batching) instead of\n"
"                     commit tid + wait tid. Neither this nor\n"
"                     --caller-commit applies to handles (no fsync)\n"
"  --clean-fsyncs=N   after each fsync, N more of the same, already committed\n"
"                     tid (a file with nothing new: needless wakeups)\n"
"  --journal-mb=N     journal size in MiB (32)\n"
"  --json             one JSON object: ops_per_s, latency_us {avg, p50, p99,\n"
"                     max}, wakeups, useless_wakeups, the configuration\n"
"                     (+ stats with --stats; keys: docs/tool.md)\n"
"  --stats            also print the journal's info file (ujbd_stats_format)\n"
"                     and latency per cause\n"
"  --help             this text\n"
"\n"
"The report names the whole configuration (text and JSON).\n"
"exit status: 0 done, 1 the journal failed or --dir is missing, 2 bad\n"
"arguments, 3 I/O error\n");
}

static int pick(const char *s, const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* Parse into c. 1: --help; 0: run; -EINVAL: a message was printed. */
static int parse_opt(struct bench_cfg *c, int ch, const char *verb)
{
	uint64_t v;
	int k;

	switch (ch) {
	case 'd': c->dir = optarg; return 0;
	case 'n':
		if (cli_number(verb, "iterations", optarg, 1, BENCH_MAX_ITER, &c->iterations) == 0)
			return 0;
		return -EINVAL;
	case 't':
		if (cli_number(verb, "threads", optarg, 1, BENCH_MAX_THREADS, &v) == 0)
			return c->threads = (unsigned)v, 0;
		return -EINVAL;
	case 'J':
		if (cli_number(verb, "journal-mb", optarg, 1, 65536, &c->journal_mb) == 0)
			return 0;
		return -EINVAL;
	case 'm':
		if ((k = pick(optarg, mode_names, 3)) >= 0)
			return c->data_mode = (enum ujbd_data_mode)k, 0;
		cli_err(verb, "unknown data mode '%s' (ordered, journal or writeback)", optarg);
		return -EINVAL;
	case 'w':
		if ((k = pick(optarg, wake_names, 2)) >= 0)
			return c->wake = (enum ujbd_wake_policy)k, 0;
		cli_err(verb, "unknown wake policy '%s' (needed or always)", optarg);
		return -EINVAL;
	case 'U':
		if (ujbd_under_commit_parse(optarg, &c->under_commit) == 0)
			return 0;
		cli_err(verb, "unknown under-commit policy '%s' (copy or wait-io)", optarg);
		return -EINVAL;
	case 'L':
		if ((k = pick(optarg, layout_names, 2)) >= 0)
			return c->layout = (enum bench_layout)k, 0;
		cli_err(verb, "unknown layout '%s' (one-file or two-files)", optarg);
		return -EINVAL;
	case 'j': c->json = true; return 0;
	case 's': c->stats = true; return 0;
	case 'b': c->baseline = true; return 0;
	case 'a': {
		enum ujbd_async_commit a = UJBD_ASYNC_COMMIT_ON;
		if (!optarg || ujbd_async_commit_parse(optarg, &a) == 0)
			return c->async_commit = (int)a, 0;
		cli_err(verb, "bad --async-commit '%s' (on, off or auto)", optarg);
		return -EINVAL;
	}
	case 'C':
		if (!optarg || !strcmp(optarg, "yes"))
			return c->caller_commit = 1, 0;
		if (!strcmp(optarg, "no"))
			return c->caller_commit = 0, 0;
		cli_err(verb, "bad --caller-commit '%s' (yes or no)", optarg);
		return -EINVAL;
	case 'O':
		if (cli_number(verb, "ordered-journal-kib", optarg, 0, 1u << 20, &v) == 0)
			return c->ordered_kib = (int64_t)v, 0;
		return -EINVAL;
	case '2': c->jbd2 = true; return 0;
	case 'S': c->sync_handles = true; return 0;
	case 'f': c->use_fsync = true; return 0;
	case 'c':
		if (cli_number(verb, "clean-fsyncs", optarg, 0, 1000, &v) == 0)
			return c->clean_fsyncs = (unsigned)v, 0;
		return -EINVAL;
	case 'h': return 1;
	default:
		cli_err(verb, "unknown option (ujbd bench --help lists them)");
		return -EINVAL;
	}
}

/* Note the options that mean nothing without a journal, or without fsync. */
static void note_opt(struct bench_cfg *c, int ch, const struct option *opts)
{
	const char *name = NULL;

	for (; opts->name && !name; opts++)
		if (opts->val == ch)
			name = opts->name;
	if (strchr("mwULJsaSCcO2", ch) && !c->journal_opt)
		c->journal_opt = name;
	if (strchr("SC", ch) && !c->fsync_opt)
		c->fsync_opt = name;
}

/* Refuse combinations that mean nothing; 0 or -EINVAL (message printed). */
static int check_args(struct bench_cfg *c, const char *verb)
{
	if (c->kind == LOAD_JBD_HANDLES && c->baseline) {
		cli_err(verb, "handles has no baseline (it measures the CPU path only)");
		return -EINVAL;
	}
	if (c->baseline && c->journal_opt) {
		cli_err(verb, "--%s means nothing with --baseline (plain files, no journal)",
			c->journal_opt);
		return -EINVAL;
	}
	if (c->kind == LOAD_JBD_HANDLES && c->fsync_opt) {
		cli_err(verb, "--%s means nothing for handles (it never fsyncs)", c->fsync_opt);
		return -EINVAL;
	}
	if (c->clean_fsyncs && (c->sync_handles || c->kind == LOAD_JBD_HANDLES)) {
		cli_err(verb, "--clean-fsyncs applies to ujbd's fsync-loop and group-commit "
			"without --sync-handles");
		return -EINVAL;
	}
	if (c->use_fsync && !c->baseline) {
		cli_err(verb, "--fsync applies to --baseline only");
		return -EINVAL;
	}
	if (c->kind == LOAD_JBD_FSYNC_LOOP && c->threads > 1) {
		cli_err(verb, "fsync-loop runs one thread (group-commit runs several)");
		return -EINVAL;
	}
	return 0;
}

static int parse_args(struct bench_cfg *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "data-mode", required_argument, NULL, 'm' },
		{ "wake", required_argument, NULL, 'w' },
		{ "under-commit", required_argument, NULL, 'U' },
		{ "layout", required_argument, NULL, 'L' },
		{ "journal-mb", required_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "baseline", no_argument, NULL, 'b' },
		{ "async-commit", optional_argument, NULL, 'a' },
		{ "sync-handles", no_argument, NULL, 'S' },
		{ "caller-commit", optional_argument, NULL, 'C' },
		{ "ordered-journal-kib", required_argument, NULL, 'O' },
		{ "jbd2", no_argument, NULL, '2' },
		{ "fsync", no_argument, NULL, 'f' },
		{ "clean-fsyncs", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const uint64_t iter_default[] = { 2000, 250, 1000000 };
	static const unsigned thr_default[] = { 1, 16, 1 };
	int ch, k, r;

	optind = 0;
	while ((ch = cli_getopt(argc, argv, "h", opts)) != -1) {
		if (ch == '?')
			return -EINVAL; /* cli_getopt said why */
		r = parse_opt(c, ch, argv[0]);
		if (r)
			return r;
		note_opt(c, ch, opts);
	}
	if (optind != argc - 1) {
		cli_err(argv[0], optind >= argc ? "which benchmark? (fsync-loop, "
			"group-commit or handles)" : "one benchmark at a time");
		return -EINVAL;
	}
	if ((k = pick(argv[optind], kind_names, 3)) < 0) {
		cli_err(argv[0], "unknown benchmark '%s' (fsync-loop, group-commit or handles)",
			argv[optind]);
		return -EINVAL;
	}
	c->kind = (enum load_jbd_kind)k;
	if (check_args(c, argv[0]))
		return -EINVAL;
	if (!c->iterations)
		c->iterations = iter_default[k];
	if (!c->threads)
		c->threads = thr_default[k];
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	int r, status = EXIT_OK;

	if (!b) {
		cli_err(argv[0], "out of memory");
		return EXIT_IO;
	}
	b->b_cfg.journal_mb = 32;
	b->b_cfg.async_commit = b->b_cfg.caller_commit = -1;
	b->b_cfg.ordered_kib = -1;
	r = parse_args(&b->b_cfg, argc, argv);
	if (r) {
		if (r > 0)
			usage(stdout);
		free(b);
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	}
	b->b_fds = calloc(b->b_cfg.threads, sizeof(*b->b_fds));
	if (!b->b_fds) {
		cli_err(argv[0], "out of memory");
		status = EXIT_IO;
		goto out;
	}
	for (unsigned i = 0; i < b->b_cfg.threads; i++)
		b->b_fds[i] = -1;
	if (bench_mkdir(b) == 0) {
		bench_world(b);
		bench_rmdir();
	}
	if (b->b_err) {
		cli_err(argv[0], "%s", b->b_err_msg);
		status = b->b_err_sys ? target_exit_status(b->b_err) :
			 b->b_err == -EIO ? EXIT_IO : EXIT_INVALID;
	} else {
		report(b);
		cli_json_done();
	}
out:
	free(b->b_fds);
	free(b);
	return status;
}

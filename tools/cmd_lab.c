/*
 * ujbd lab: run the threads' scenarios and report them (docs/lab.md).
 *
 * The one idea: this file only turns options into a lab_ctx and a
 * selection, and picks the outputs; the runner (src/lab/runner.c) runs the
 * scenarios and the report (src/lab/report*.c) prints them. Every
 * parameter group is an option `--GROUP=LIST`, built from the lab's group
 * list, so a new disk model, elevator or table needs no edit here.
 *
 * Exit statuses: 0 every selected variant ran; 1 a variant failed (the
 * report says which), or `lab fsck` found the image inconsistent or
 * missing; 2 usage; 3 the report files could not be written (or fsck's
 * image read).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "target/target.h"
#include "fs/fs.h"
#include "lab/runner.h"
#include "ujbd/dev.h"

#define LAB_ERR 256

enum {
	OPT_SCENARIO = 1000, OPT_VARIANT, OPT_SEED, OPT_DISK, OPT_WORLD, OPT_QUICK, OPT_JSON,
	OPT_OUT, OPT_PARAMS, OPT_LIST, OPT_HELP, OPT_JOBS, OPT_GROUP /* + group index */
};

struct lab_args {
	const char *scenarios, *variants, *out;
	bool json, params, list, verbose, help;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ujbd lab [--scenario=NAME[,NAME]] [--variant=NAME[,NAME]] [--seed=S]\n"
		"                [--disk=hdd|ssd|file:PATH] [--world=sim|real] [--quick]\n"
		"                [--json] [--out=DIR] [--jobs=N] [-v] [--GROUP=NAME=V[,NAME=V]]...\n"
		"       ujbd lab --list | --params [--json] [--GROUP=LIST]...\n"
		"       ujbd lab fsck IMAGE\n"
		"\n"
		"Run the threads' scenarios, every variant, and print a table per scenario\n"
		"with the thread's figure, the lab's and the ratio that matters.\n"
		"  --scenario  only these scenarios (ujbd lab --list); default all\n"
		"  --variant   only these variants (of any selected scenario)\n"
		"  --seed      seed of the sim world; default 1 (same seed, same output)\n"
		"  --disk      hdd (default), ssd, or file:PATH (needs --world=real)\n"
		"  --world     sim (virtual time, default) or real\n"
		"  --quick     a smoke run: seconds, not minutes (the tests use it)\n"
		"  --json      one JSON document instead of the tables (docs/lab.md)\n"
		"  --out       also write DIR: CSV, JSON, gnuplot plots, report.html\n"
		"  --jobs      variants run at once, each its own sim world (the output\n"
		"              is the same); default the CPUs; the real world runs one\n"
		"  -v, --verbose  progress lines on stderr (default: when it is a terminal)\n"
		"  --list      the scenarios and their variants\n"
		"  --params    every parameter group's table (with the given lists applied)\n"
		"  --GROUP     set parameters of a group, e.g. --hdd=seek_avg_ms=9.5,rpm=5400;\n"
		"              groups:");
	for (size_t i = 0; i < lab_group_count(); i++)
		fprintf(f, " --%s", lab_group_at(i));
	fprintf(f, "\n"
		"\n"
		"Exit status: 0 every variant ran, 1 a variant failed, 2 usage, 3 the\n"
		"report files could not be written.\n");
}

/* The fixed options, then one per parameter group. NULL on no memory. */
static struct option *long_options(void)
{
	static const struct option fixed[] = {
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "variant", required_argument, NULL, OPT_VARIANT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "disk", required_argument, NULL, OPT_DISK },
		{ "world", required_argument, NULL, OPT_WORLD },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "params", no_argument, NULL, OPT_PARAMS },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "verbose", no_argument, NULL, 'v' },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), ng = lab_group_count();
	struct option *o = calloc(nf + ng + 1, sizeof(*o));

	if (!o)
		return NULL;
	memcpy(o, fixed, sizeof(fixed));
	for (size_t i = 0; i < ng; i++)
		o[nf + i] = (struct option){ lab_group_at(i), required_argument, NULL,
					     OPT_GROUP + (int)i };
	return o;
}

/* One option into c and a. 0, or -EINVAL with msg. */
static int apply_option(int opt, const char *arg, struct lab_ctx *c, struct lab_args *a,
			char *msg, size_t len)
{
	uint64_t n;

	switch (opt) {
	case OPT_SCENARIO: a->scenarios = arg; return 0;
	case OPT_VARIANT: a->variants = arg; return 0;
	case OPT_QUICK: lab_ctx_set_quick(c, true); return 0;
	case OPT_JSON: a->json = true; return 0;
	case OPT_OUT: a->out = arg; return *arg ? 0 : (snprintf(msg, len, "--out: empty"), -EINVAL);
	case OPT_PARAMS: a->params = true; return 0;
	case OPT_LIST: a->list = true; return 0;
	case OPT_HELP: a->help = true; return 0;
	case 'v': a->verbose = true; return 0;
	case OPT_SEED:
		if (cli_number_msg("seed", arg, 0, UINT64_MAX, &n, msg, len))
			return -EINVAL;
		lab_ctx_set_seed(c, n);
		return 0;
	case OPT_DISK:
		if (!lab_ctx_set_disk(c, arg))
			return 0;
		snprintf(msg, len, "--disk: '%s': want hdd, ssd or file:PATH", arg);
		return -EINVAL;
	case OPT_JOBS:
		if (cli_number_msg("jobs", arg, 1, LAB_MAX_JOBS, &n, msg, len))
			return -EINVAL;
		lab_ctx_set_jobs(c, (unsigned)n);
		return 0;
	case OPT_WORLD:
		if (strcmp(arg, "sim") && strcmp(arg, "real")) {
			snprintf(msg, len, "--world: '%s': want sim or real", arg);
			return -EINVAL;
		}
		lab_ctx_set_world(c, strcmp(arg, "sim") ? RT_WORLD_REAL : RT_WORLD_SIM);
		return 0;
	}
	if (opt >= OPT_GROUP && (size_t)(opt - OPT_GROUP) < lab_group_count())
		return lab_ctx_add_params(c, lab_group_at((size_t)(opt - OPT_GROUP)), arg, msg, len);
	snprintf(msg, len, "unknown option (ujbd lab --help)");
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct lab_ctx *c, struct lab_args *a, char *msg,
		      size_t len)
{
	struct option *opts = long_options();
	int opt, rc = 0;

	if (!opts) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	optind = 1;
	while (!rc && (opt = cli_getopt(argc, argv, "vh", opts)) != -1) {
		if (opt == '?') {
			rc = -EINVAL; /* cli_getopt said why; msg stays empty */
		} else {
			rc = apply_option(opt == 'h' ? OPT_HELP : opt, optarg, c, a, msg, len);
		}
	}
	free(opts);
	if (!rc && optind < argc) {
		snprintf(msg, len, "unexpected argument '%s'", argv[optind]);
		rc = -EINVAL;
	}
	if (!rc && !strncmp(lab_ctx_disk(c), "file:", 5) && lab_ctx_world(c) == RT_WORLD_SIM) {
		snprintf(msg, len, "--disk=file: needs --world=real (a real file has no virtual time)");
		rc = -EINVAL;
	}
	return rc;
}

static void list_scenarios(FILE *f)
{
	for (size_t i = 0; i < lab_scenario_count(); i++) {
		const struct lab_scenario *sc = lab_scenario_at(i);

		fprintf(f, "%s", sc->s_name);
		if (sc->s_thread)
			fprintf(f, " (thread %s, \"%s\", %s, %s, %s)", sc->s_thread->t_id,
				sc->s_thread->t_subject, sc->s_thread->t_list, sc->s_thread->t_date,
				sc->s_thread->t_author);
		fprintf(f, ": %s\n  variants:", sc->s_help ? sc->s_help : "");
		for (size_t v = 0; sc->s_variants && sc->s_variants[v]; v++)
			fprintf(f, " %s", sc->s_variants[v]);
		fputc('\n', f);
	}
}

/* Run the selection and print it. The exit status. */
static int run_lab(struct lab_ctx *c, const struct lab_args *a)
{
	char err[LAB_ERR] = "";
	struct lab_run *run = NULL;
	size_t failed;
	int rc;

	rc = lab_run_new(c, a->scenarios, a->variants, &run, err, sizeof(err));
	if (rc) {
		cli_err("lab", "%s", rc == -ENOMEM ? "out of memory" : err);
		return rc == -EINVAL ? EXIT_USAGE : EXIT_IO;
	}
	/* an unwritable --out is said before the run, not after it */
	if (a->out && (rc = lab_report_dir_check(a->out, err, sizeof(err)))) {
		cli_err("lab", "--out: %s", err);
		lab_run_free(run);
		return EXIT_IO;
	}
	if (!run->r_n)
		lab_progress(c, "lab: no scenario registered");
	failed = lab_run_all(run);
	rc = a->json ? lab_report_json(stdout, run) : lab_report_text(stdout, run, 0);
	if (a->json)
		cli_json_done(); /* a failed variant is in the report */
	if (!rc && a->out) {
		rc = lab_report_dir(run, a->out, err, sizeof(err));
		if (rc)
			cli_err("lab", "%s", err);
	}
	lab_run_free(run);
	if (rc)
		return EXIT_IO;
	if (failed)
		cli_err("lab", "%zu variant%s failed (see the report)", failed, failed == 1 ? "" : "s");
	return failed ? EXIT_INVALID : EXIT_OK;
}

/*
 * `ujbd lab fsck IMAGE`: check a file-system model image (an unmounted or
 * recovered one, e.g. a crash test's) with fs_fsck. 0 clean, 1
 * inconsistent or not a file (the first problem on stderr), 2 usage, 3 I/O.
 */
static int lab_fsck_cmd(int argc, char **argv)
{
	struct dev_file_opts o = { .read_only = true, .engine = DEV_FILE_THREADS };
	char msg[LAB_ERR] = "";
	struct dev *d = NULL;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: ujbd lab fsck IMAGE\n\nCheck a lab file-system image (4 KiB "
		       "blocks): bitmaps, inodes, directories,\nlink and free counts. Exit "
		       "status: 0 clean, 1 inconsistent or missing, 2 usage, 3 I/O.\n");
		return EXIT_OK;
	}
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_err("lab", "fsck: unknown option '%s' (see ujbd lab fsck --help)", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (argc != 2) {
		cli_err("lab", "fsck: want one IMAGE (ujbd lab fsck --help)");
		return EXIT_USAGE;
	}
	rc = dev_file_open(argv[1], &o, &d);
	if (rc) {
		cli_err("lab", "fsck: cannot open '%s': %s", argv[1], target_strerror(rc));
		return target_exit_status(rc);
	}
	rc = fs_fsck(d, 4096, msg, sizeof(msg));
	dev_close(d);
	if (!rc) {
		printf("%s: %s\n", argv[1], msg);
		return EXIT_OK;
	}
	cli_err("lab", "fsck: '%s': %s", argv[1], msg[0] ? msg : strerror(-rc));
	return rc == -EUCLEAN ? EXIT_INVALID : EXIT_IO;
}

int cmd_lab(int argc, char **argv)
{
	char msg[LAB_ERR] = "";
	struct lab_args a = { 0 };
	struct lab_ctx *c = NULL;
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "fsck"))
		return lab_fsck_cmd(argc - 1, argv + 1);
	if (lab_ctx_new(&c)) {
		cli_err("lab", "out of memory");
		return EXIT_IO;
	}
	{ /* --jobs' default: the CPUs this process may use */
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		lab_ctx_set_jobs(c, n < 1 ? 1 : n > LAB_MAX_JOBS ? LAB_MAX_JOBS : (unsigned)n);
	}
	if (parse_args(argc, argv, c, &a, msg, sizeof(msg))) {
		if (msg[0])
			cli_err("lab", "%s", msg);
		lab_ctx_free(c);
		return EXIT_USAGE;
	}
	if (a.help) {
		usage(stdout);
		rc = EXIT_OK;
	} else if (a.list) {
		list_scenarios(stdout);
		rc = EXIT_OK;
	} else if (a.params) {
		rc = lab_params_print(stdout, c, a.json) ? EXIT_IO : EXIT_OK;
		cli_json_done();
	} else {
		lab_ctx_set_progress(c, (a.verbose || isatty(2)) ? stderr : NULL);
		rc = run_lab(c, &a);
	}
	lab_ctx_free(c);
	return rc;
}

/*
 * ujbd: the command-line tool. This file only dispatches to the verbs; each
 * verb lives in its own cmd_*.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct verb {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} verbs[] = {
	{ "format", cmd_format, "create a standalone jbd2 journal" },
	{ "info", cmd_info, "show a journal's superblock and whether it needs recovery" },
	{ "dump", cmd_dump, "list every transaction in the log" },
	{ "recover", cmd_recover, "replay the journal onto its data device" },
	{ "write", cmd_write, "append one committed, unreplayed transaction" },
	{ "devbench", cmd_devbench, "benchmark a simulated or real device" },
	{ "bench", cmd_bench, "benchmark the journal runtime (fsync loop, group commit, handles)" },
	{ "lab", cmd_lab, "run the seeds' scenarios and report them (tables, JSON, plots)" },
};

void cli_err(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ujbd %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ujbd <verb> [options] ARGS   (ujbd <verb> --help)\n\nverbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
	fprintf(f, "\nexit status: 0 ok, 1 invalid or corrupt input (nothing written),\n"
		   "2 usage error, 3 I/O error\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ujbd: unknown verb '%s' (ujbd --help lists them)\n", argv[1]);
	return EXIT_USAGE;
}

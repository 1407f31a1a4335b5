/*
 * ujbd: the command-line tool. This file only dispatches to the verbs (each
 * lives in its own cmd_*.c) and answers `ujbd help [VERB]`.
 */
#include <stdio.h>
#include <string.h>

#include "ujbd/ujbd.h"
#include "ujbd/version.h"

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
	{ "mount", cmd_mount, "mount an ext4 image through FUSE, journaled (crash-safe)" },
	{ "devbench", cmd_devbench, "benchmark a simulated or real device" },
	{ "bench", cmd_bench, "benchmark the journal runtime (fsync loop, group commit, handles)" },
	{ "lab", cmd_lab, "run the seeds' scenarios and report them (tables, JSON, plots)" },
};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: ujbd <verb> [options] ARGS   (ujbd help VERB, or ujbd VERB --help)\n"
		   "       ujbd --version\n\nverbs:\n");
	for (size_t i = 0; i < NVERBS; i++)
		fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
	fprintf(f, "\nexit status: 0 ok, 1 invalid, missing or corrupt input (nothing written),\n"
		   "2 usage error, 3 I/O error\n");
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < NVERBS; i++)
		if (!strcmp(name, verbs[i].name))
			return &verbs[i];
	return NULL;
}

/* `ujbd help [VERB]`: the verb's own --help. */
static int help(int argc, char **argv)
{
	const struct verb *v;
	char h[] = "--help";

	if (argc < 3) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 3) {
		fprintf(stderr, "ujbd help: one verb at a time (ujbd help lists them)\n");
		return EXIT_USAGE;
	}
	v = find_verb(argv[2]);
	if (!v) {
		fprintf(stderr, "ujbd help: unknown verb '%s' (ujbd help lists them)\n", argv[2]);
		return EXIT_USAGE;
	}
	return v->fn(2, (char *[]){ argv[2], h, NULL });
}

/* The verb's arguments ask for JSON (up to a "--" that ends the options). */
static bool wants_json(int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const struct verb *v;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout), EXIT_OK;
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		/* The library's version: the tool is that library's front end
		 * (the one it runs with; the one it was built with beside it) */
		if (wants_json(argc, argv))
			printf("{\"version\":\"%s\",\"library_version\":\"%s\"}\n", UJBD_VERSION,
			       ujbd_version());
		else
			printf("ujbd %s\n", ujbd_version());
		return EXIT_OK;
	}
	v = find_verb(argv[1]);
	if (!v) {
		fprintf(stderr, "ujbd: unknown verb '%s' (ujbd help lists them)\n", argv[1]);
		return EXIT_USAGE;
	}
	cli_json_set(wants_json(argc, argv));
	return cli_finish(v->name, v->fn(argc - 1, argv + 1));
}

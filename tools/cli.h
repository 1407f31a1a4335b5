/*
 * Shared pieces of the ujbd command: exit statuses, the error printer and
 * the subcommand entry points. Every subcommand is `int cmd_x(argc, argv)`
 * (argv[0] is the verb), parses with getopt_long, answers --help, and
 * returns one of the exit statuses below.
 */
#ifndef UJBD_TOOLS_CLI_H
#define UJBD_TOOLS_CLI_H

/* Exit statuses, the same for every verb (documented in ujbd(1)). */
enum {
	EXIT_OK = 0,      /* done, or nothing to do */
	EXIT_INVALID = 1, /* the input is invalid or corrupt; nothing written */
	EXIT_USAGE = 2,   /* bad arguments */
	EXIT_IO = 3,      /* an I/O error */
};

/* Print "ujbd VERB: message" on one line to stderr. */
void cli_err(const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_devbench(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_write(int argc, char **argv);
int cmd_lab(int argc, char **argv);

#endif

/*
 * Shared pieces of the ujbd command: exit statuses, the error printer, the
 * option parser's error path, the JSON error object, progress lines and the
 * subcommand entry points. Every subcommand is `int cmd_x(argc, argv)`
 * (argv[0] is the verb), parses with cli_getopt, answers --help, and
 * returns one of the exit statuses below.
 *
 * The one idea: a verb says what went wrong once, through cli_err, and
 * returns a status; how that reaches the user (one stderr line, and with
 * --json also one JSON object on stdout) is decided here, the same for
 * every verb.
 */
#ifndef UJBD_TOOLS_CLI_H
#define UJBD_TOOLS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, the same for every verb (documented in ujbd(1)). An errno
 * becomes one through target_exit_status (src/target/target.h): the one
 * mapping. */
enum {
	EXIT_OK = 0,      /* done, or nothing to do */
	EXIT_INVALID = 1, /* the input is missing, invalid or corrupt; nothing written */
	EXIT_USAGE = 2,   /* bad arguments */
	EXIT_IO = 3,      /* an I/O error */
};

/* Print "ujbd VERB: message" on one line to stderr (and keep the message
 * for the JSON error object). */
void cli_err(const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * getopt_long with the verb's own one-line messages instead of getopt's:
 * returns the option, -1 at the end, or '?' after printing "ujbd VERB:
 * unknown option '--x'" (or "option '--x' needs a value", "... takes no
 * value"): the caller returns EXIT_USAGE. argv[0] is the verb.
 */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts);

/* A decimal number in [lo, hi] (no sign, no suffix): 0, -EINVAL (not a
 * number) or -ERANGE (a number outside [lo, hi]). */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* "s" for a count other than 1: printf("%llu block%s", n, cli_s(n)). */
static inline const char *cli_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}
/* cli_parse_u64 for option --opt of verb, with the one message for a bad
 * number (rt_bad_value's shape, as every parameter group's): "bad --opt:
 * 'S': out of range (LO to HI)" or "...: not a number (LO to HI)". 0, or
 * EXIT_USAGE after the message. */
int cli_number(const char *verb, const char *opt, const char *s, uint64_t lo, uint64_t hi,
	       uint64_t *out);
/* The same into msg, for a verb that says it later (lab): 0, or -EINVAL /
 * -ERANGE with msg set. */
int cli_number_msg(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out,
		   char *msg, size_t len);
/* A size (dev_parse_size: 4096, 64k, 16M) for --opt in [lo, hi] bytes
 * (hi UINT64_MAX: no bound), a multiple of mult (0 or 1: any), in the same
 * shape: "bad --bs: '3': not a multiple of 512 (512 to 16777216 bytes)",
 * "...: not a size (...)", "...: out of range (at least 1 byte)". 0, or
 * EXIT_USAGE after the message. */
int cli_size(const char *verb, const char *opt, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t mult, uint64_t *out);

/* The verb takes exactly one operand after its options, named `what`
 * ("TARGET"): 0, or EXIT_USAGE after saying "missing TARGET" or
 * "unexpected argument 'x'". */
int cli_one_operand(int argc, char **argv, const char *what);

/*
 * --json. main() turns it on when the verb's arguments hold "--json";
 * a verb that printed its JSON document calls cli_json_done(). A verb that
 * fails without one gets, on stdout, {"verb":..,"error":..,"exit_status":N}
 * with the message of its last cli_err (cli_finish).
 */
void cli_json_set(bool on);
bool cli_json(void);
void cli_json_done(void);
/* The end of a verb: the JSON error object if one is due. Returns status. */
int cli_finish(const char *verb, int status);

/* Print s as a JSON string (quoted, escaped). */
void cli_json_str(FILE *f, const char *s);

/*
 * Progress of a long operation, on stderr when it is a terminal (never in a
 * pipe or a log): "\rujbd VERB: WHAT 42%", redrawn at each whole percent,
 * and a newline at done == total.
 */
struct cli_progress {
	const char *verb, *what;
	bool on;
	int pct;             /* last percent drawn, -1 none */
};
void cli_progress_init(struct cli_progress *p, const char *verb, const char *what);
/* The shape of the library's progress callbacks (arg: a cli_progress). */
void cli_progress(void *arg, uint64_t done, uint64_t total);

int cmd_devbench(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_write(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_mount(int argc, char **argv);

#endif

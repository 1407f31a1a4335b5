/*
 * cli.c: what every verb of the ujbd command shares: the one-line error
 * printer, getopt's errors in the same form, and --json's error object.
 *
 * The one idea: every error reaches the user the same way whichever verb
 * and whichever stage (getopt, opening the target, the run) it comes from:
 * one line "ujbd VERB: what: 'subject': reason" on stderr, and with --json
 * also one JSON object on stdout carrying the same message and the exit
 * status, so a script reading stdout never has to parse stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "priv/param.h"
#include "ujbd/dev.h"

static struct {
	bool json;       /* the verb was given --json */
	bool json_done;  /* ... and printed its JSON document */
	char msg[1024];  /* the last cli_err message, without the prefix */
} cli;

void cli_err(const char *verb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cli.msg, sizeof(cli.msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ujbd %s: %s\n", verb, cli.msg);
}

/* ---- getopt's errors ------------------------------------------------------ */

/* How many options start with the name in "--name[=value]"; *exact set
 * to the one whose name is the whole name, if any. */
static int long_matches(const struct option *opts, const char *tok, const struct option **exact)
{
	size_t len = strcspn(tok, "=");
	int n = 0;

	*exact = NULL;
	for (; opts && opts->name; opts++) {
		if (strncmp(opts->name, tok, len))
			continue;
		n++;
		if (strlen(opts->name) == len)
			*exact = opts;
	}
	return n;
}

static void getopt_error(char **argv, int c, const struct option *opts)
{
	const char *verb = argv[0], *tok = optind > 0 ? argv[optind - 1] : "";
	const struct option *exact;
	int n;

	if (strncmp(tok, "--", 2)) { /* a short option: getopt says which in optopt */
		if (c == ':')
			cli_err(verb, "option '-%c' needs a value", optopt);
		else
			cli_err(verb, "unknown option '-%c' (see ujbd %s --help)", optopt, verb);
		return;
	}
	n = long_matches(opts, tok + 2, &exact);
	if (c == ':')
		cli_err(verb, "option '%s' needs a value", tok);
	else if (exact && strchr(tok, '='))
		cli_err(verb, "option '--%s' takes no value: '%s'", exact->name, tok);
	else if (n > 1)
		cli_err(verb, "ambiguous option '%s' (see ujbd %s --help)", tok, verb);
	else
		cli_err(verb, "unknown option '%s' (see ujbd %s --help)", tok, verb);
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts)
{
	char spec[64];
	int c;

	/* the leading ':' makes a missing value ':' rather than '?' */
	snprintf(spec, sizeof(spec), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, spec, opts, NULL);
	if (c != '?' && c != ':')
		return c;
	getopt_error(argv, c, opts);
	return '?';
}

int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_number_msg(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out,
		   char *msg, size_t len)
{
	int rc = cli_parse_u64(s, lo, hi, out);
	char range[64];

	if (!rc)
		return 0;
	snprintf(range, sizeof(range), "%llu to %llu", (unsigned long long)lo,
		 (unsigned long long)hi);
	rt_bad_value(msg, len, opt, s, rc == -ERANGE ? "out of range" : "not a number", range);
	return rc;
}

int cli_number(const char *verb, const char *opt, const char *s, uint64_t lo, uint64_t hi,
	       uint64_t *out)
{
	char msg[512];

	if (!cli_number_msg(opt, s, lo, hi, out, msg, sizeof(msg)))
		return 0;
	cli_err(verb, "%s", msg);
	return EXIT_USAGE;
}

int cli_size(const char *verb, const char *opt, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t mult, uint64_t *out)
{
	char why[64], range[96], msg[512];
	bool rule = mult > 1;   /* say the multiple in the range */
	uint64_t v;
	int at;

	if (dev_parse_size(s, &v)) {
		snprintf(why, sizeof(why), "not a size");
	} else if (v < lo || v > hi) {
		snprintf(why, sizeof(why), "out of range");
	} else if (mult > 1 && v % mult) {
		snprintf(why, sizeof(why), "not a multiple of %llu", (unsigned long long)mult);
		rule = false; /* said already */
	} else {
		*out = v;
		return 0;
	}
	if (hi == UINT64_MAX)
		at = snprintf(range, sizeof(range), "at least %llu byte%s", (unsigned long long)lo,
			      cli_s(lo));
	else
		at = snprintf(range, sizeof(range), "%llu to %llu bytes", (unsigned long long)lo,
			      (unsigned long long)hi);
	if (rule && at > 0 && (size_t)at < sizeof(range))
		snprintf(range + at, sizeof(range) - (size_t)at, ", a multiple of %llu",
			 (unsigned long long)mult);
	rt_bad_value(msg, sizeof(msg), opt, s, why, range);
	cli_err(verb, "%s", msg);
	return EXIT_USAGE;
}

int cli_one_operand(int argc, char **argv, const char *what)
{
	if (optind >= argc) {
		cli_err(argv[0], "missing %s (see ujbd %s --help)", what, argv[0]);
		return EXIT_USAGE;
	}
	if (optind < argc - 1) {
		cli_err(argv[0], "unexpected argument '%s' (one %s only)", argv[optind + 1], what);
		return EXIT_USAGE;
	}
	return 0;
}

/* ---- progress ------------------------------------------------------------------ */

void cli_progress_init(struct cli_progress *p, const char *verb, const char *what)
{
	*p = (struct cli_progress){ .verb = verb, .what = what, .on = isatty(2), .pct = -1 };
}

void cli_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cli_progress *p = arg;
	int pct = total ? (int)(done * 100 / total) : 100;

	if (!p->on || pct == p->pct)
		return;
	p->pct = pct;
	fprintf(stderr, "\rujbd %s: %s %3d%%%s", p->verb, p->what, pct, done >= total ? "\n" : "");
	fflush(stderr);
}

/* ---- JSON ------------------------------------------------------------------- */

void cli_json_set(bool on)
{
	cli.json = on;
}

bool cli_json(void)
{
	return cli.json;
}

void cli_json_done(void)
{
	cli.json_done = true;
}

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int cli_finish(const char *verb, int status)
{
	if (!cli.json || status == EXIT_OK || cli.json_done)
		return status;
	printf("{\"verb\":");
	cli_json_str(stdout, verb);
	printf(",\"error\":");
	cli_json_str(stdout, cli.msg[0] ? cli.msg : "failed");
	printf(",\"exit_status\":%d}\n", status);
	return status;
}

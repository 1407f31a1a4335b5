/*
 * Parameter tables (ujbd/param.h): defaults, parsing, ranges and
 * printing for every tunable that shapes a result, from one row each.
 *
 * The one idea: the struct a model reads is plain C; only this file knows
 * how a row maps a given value (in the row's unit) onto a field (in the
 * stored unit), so models never parse and tools never hard-code a name.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "priv/param.h"

/* v in as few digits as read back exactly (10 at least, as before: a
 * range such as 1099511627776 must not print as 1.099511628e+12, which is
 * past it). buf holds RT_NUM_LEN bytes. */
#define RT_NUM_LEN 32
static const char *num(char *buf, double v)
{
	for (int prec = 10; prec < 17; prec++) {
		snprintf(buf, RT_NUM_LEN, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, RT_NUM_LEN, "%.17g", v);
	return buf;
}

static double scale_of(const struct rt_param *p)
{
	return p->p_scale > 0 ? p->p_scale : 1.0;
}

static void *field(const struct rt_param *p, void *obj)
{
	return (char *)obj + p->p_offset;
}

static const void *cfield(const struct rt_param *p, const void *obj)
{
	return (const char *)obj + p->p_offset;
}

double rt_param_get(const struct rt_param *p, const void *obj)
{
	const void *f = cfield(p, obj);
	double v = 0;

	switch (p->p_type) {
	case RT_PARAM_BOOL: v = *(const bool *)f; break;
	case RT_PARAM_UINT: v = *(const unsigned *)f; break;
	case RT_PARAM_U32: v = *(const uint32_t *)f; break;
	case RT_PARAM_U64: v = (double)*(const uint64_t *)f; break;
	case RT_PARAM_INT: v = *(const int *)f; break;
	case RT_PARAM_DOUBLE: v = *(const double *)f; break;
	case RT_PARAM_ENUM: v = *(const int *)f; break;
	}
	return p->p_type == RT_PARAM_BOOL ? v : v / scale_of(p);
}

/* Store without a range check (the defaults may sit at a range's edge,
 * and the check is the callers'). */
static void store(const struct rt_param *p, void *obj, double given)
{
	void *f = field(p, obj);
	double s = p->p_type == RT_PARAM_BOOL ? given : given * scale_of(p);

	switch (p->p_type) {
	case RT_PARAM_BOOL: *(bool *)f = s != 0; break;
	case RT_PARAM_UINT: *(unsigned *)f = (unsigned)llround(s); break;
	case RT_PARAM_U32: *(uint32_t *)f = (uint32_t)llround(s); break;
	case RT_PARAM_U64: *(uint64_t *)f = (uint64_t)llround(s); break;
	case RT_PARAM_INT: *(int *)f = (int)llround(s); break;
	case RT_PARAM_DOUBLE: *(double *)f = s; break;
	case RT_PARAM_ENUM: *(int *)f = (int)llround(s); break;
	}
}

void rt_param_defaults(const struct rt_param_table *t, void *obj)
{
	for (size_t i = 0; i < t->t_nparams; i++)
		store(&t->t_params[i], obj, t->t_params[i].p_default);
}

const struct rt_param *rt_param_find(const struct rt_param_table *t, const char *name)
{
	for (size_t i = 0; i < t->t_nparams; i++)
		if (!strcmp(t->t_params[i].p_name, name))
			return &t->t_params[i];
	return NULL;
}

static bool in_range(const struct rt_param *p, double given)
{
	if (!isfinite(given) || given < p->p_min || given > p->p_max)
		return false;
	if (p->p_step > 0 && fmod(given, p->p_step) != 0)
		return false;
	if (p->p_pow2 && (given < 1 || exp2(floor(log2(given))) != given))
		return false;
	return true;
}

/* The nearest value the row's rule allows (for a scaled value). */
static double to_rule(const struct rt_param *p, double v)
{
	if (p->p_step > 0)
		v = round(v / p->p_step) * p->p_step;
	if (p->p_pow2 && v >= 1)
		v = exp2(round(log2(v)));
	return v;
}

int rt_param_put(const struct rt_param *p, void *obj, double given)
{
	if (p->p_type != RT_PARAM_BOOL && !in_range(p, given))
		return -EINVAL;
	store(p, obj, given);
	return 0;
}

static int parse_bool(const char *s, double *out)
{
	static const char *const yes[] = { "1", "true", "on", "yes" };
	static const char *const no[] = { "0", "false", "off", "no" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_number(const struct rt_param *p, const char *s, double *out)
{
	char *end;

	if (p->p_type == RT_PARAM_BOOL)
		return parse_bool(s, out);
	if (p->p_type == RT_PARAM_ENUM) {
		for (size_t i = 0; p->p_names && p->p_names[i]; i++) {
			if (!strcmp(s, p->p_names[i])) {
				*out = (double)i;
				return 0;
			}
		}
		return -EINVAL;
	}
	if (!*s)
		return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || errno || !isfinite(*out))
		return -EINVAL;
	/* an integer field stores an integer: 2.5 requests in a queue is a typo */
	if (p->p_type != RT_PARAM_DOUBLE && scale_of(p) == 1.0 && *out != floor(*out))
		return -EINVAL;
	return 0;
}

/* A row's range as --params prints it: "0.5..40", "true|false". */
static void range_text(const struct rt_param *p, char *buf, size_t len)
{
	char lo[RT_NUM_LEN], hi[RT_NUM_LEN], st[RT_NUM_LEN];

	if (p->p_type == RT_PARAM_BOOL) {
		snprintf(buf, len, "true|false");
	} else if (p->p_type == RT_PARAM_ENUM) {
		size_t at = 0;

		buf[0] = '\0';
		for (size_t i = 0; p->p_names && p->p_names[i] && at < len; i++)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "|" : "",
					       p->p_names[i]);
	} else if (p->p_step > 0) {
		snprintf(buf, len, "%s..%s in steps of %s", num(lo, p->p_min), num(hi, p->p_max),
			 num(st, p->p_step));
	} else if (p->p_pow2) {
		snprintf(buf, len, "%s..%s, a power of two", num(lo, p->p_min), num(hi, p->p_max));
	} else {
		snprintf(buf, len, "%s..%s", num(lo, p->p_min), num(hi, p->p_max));
	}
}

int rt_bad_value(char *buf, size_t len, const char *opt, const char *value, const char *reason,
		 const char *range)
{
	bool r = range && *range;

	return snprintf(buf, len, "bad --%s: '%s': %s%s%s%s", opt, value, reason, r ? " (" : "",
			r ? range : "", r ? ")" : "");
}

/* "a, b or c" */
static void names_text(const struct rt_param *p, char *buf, size_t len)
{
	size_t at = 0, n = 0;

	buf[0] = '\0';
	while (p->p_names && p->p_names[n])
		n++;
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i == 0 ? "" : i + 1 == n ? " or " : ", ", p->p_names[i]);
}

/* What a row takes, for a message: "0.5 to 40 ms", "512 to 4096, a power
 * of two", "explicit or implicit-sync". rule: say the row's rule too. */
static void msg_range(const struct rt_param *p, bool rule, char *buf, size_t len)
{
	const char *sp = *p->p_unit ? " " : "";
	char lo[RT_NUM_LEN], hi[RT_NUM_LEN], st[RT_NUM_LEN];

	if (p->p_type == RT_PARAM_BOOL) {
		snprintf(buf, len, "true or false");
	} else if (p->p_type == RT_PARAM_ENUM) {
		names_text(p, buf, len);
	} else if (rule && p->p_step > 0) {
		snprintf(buf, len, "%s to %s%s%s, a multiple of %s", num(lo, p->p_min),
			 num(hi, p->p_max), sp, p->p_unit, num(st, p->p_step));
	} else if (rule && p->p_pow2) {
		snprintf(buf, len, "%s to %s%s%s, a power of two", num(lo, p->p_min),
			 num(hi, p->p_max), sp, p->p_unit);
	} else {
		snprintf(buf, len, "%s to %s%s%s", num(lo, p->p_min), num(hi, p->p_max), sp,
			 p->p_unit);
	}
}

/* Why parse_number refused value. */
static const char *why_not(const struct rt_param *p, const char *value)
{
	char *end;
	double d;

	if (p->p_type == RT_PARAM_BOOL)
		return "not a boolean";
	if (p->p_type == RT_PARAM_ENUM)
		return "unknown value";
	errno = 0;
	d = strtod(value, &end);
	if (*value && !*end && !errno && isfinite(d)) /* a number, with a fraction */
		return "not an integer";
	return "not a number";
}

int rt_param_set(const struct rt_param_table *t, void *obj, const char *name,
		 const char *value, char *err, size_t errlen)
{
	const struct rt_param *p = rt_param_find(t, name);
	char opt[96], range[96], why[64];
	double v;

	if (!p) {
		if (err)
			rt_bad_value(err, errlen, t->t_name, name, "unknown parameter", "see --params");
		return -EINVAL;
	}
	snprintf(opt, sizeof(opt), "%s=%s", t->t_name, name);
	if (parse_number(p, value, &v)) {
		msg_range(p, true, range, sizeof(range));
		if (err)
			rt_bad_value(err, errlen, opt, value, why_not(p, value), range);
		return -EINVAL;
	}
	if (rt_param_put(p, obj, v)) {
		bool inside = v >= p->p_min && v <= p->p_max;

		msg_range(p, !inside, range, sizeof(range));
		if (inside && p->p_pow2)
			snprintf(why, sizeof(why), "not a power of two");
		else if (inside && p->p_step > 0)
			snprintf(why, sizeof(why), "not a multiple of %.10g", p->p_step);
		else
			snprintf(why, sizeof(why), "out of range");
		if (err)
			rt_bad_value(err, errlen, opt, value, why, range);
		return -EINVAL;
	}
	return 0;
}

/* name*=factor: the value in force times factor (integers rounded, a row
 * with a rule to its nearest allowed value), for
 * moving a parameter by a share whatever set it before (a robustness sweep:
 * seek_avg_ms*=1.2). Numbers only. */
static int param_scale(const struct rt_param_table *t, void *obj, const char *name,
		       const char *factor, char *err, size_t errlen)
{
	const struct rt_param *p = rt_param_find(t, name);
	char opt[96], range[96], why[64];
	char *end;
	double f = strtod(factor, &end), v;

	if (!p)
		return rt_param_set(t, obj, name, factor, err, errlen); /* its message */
	snprintf(opt, sizeof(opt), "%s=%s*", t->t_name, name);
	if (p->p_type == RT_PARAM_BOOL || p->p_type == RT_PARAM_ENUM || end == factor || *end ||
	    !isfinite(f) || f < 0) {
		if (err)
			rt_bad_value(err, errlen, opt, factor,
				     "only a number parameter can be scaled, by a factor >= 0", "");
		return -EINVAL;
	}
	v = rt_param_get(p, obj) * f;
	if (p->p_type != RT_PARAM_DOUBLE && scale_of(p) == 1.0)
		v = round(v);
	v = to_rule(p, v);
	if (rt_param_put(p, obj, v)) {
		msg_range(p, true, range, sizeof(range));
		snprintf(why, sizeof(why), "gives %.10g, out of range", v);
		if (err)
			rt_bad_value(err, errlen, opt, factor, why, range);
		return -EINVAL;
	}
	return 0;
}

int rt_param_parse(const struct rt_param_table *t, void *obj, const char *list,
		   char *err, size_t errlen)
{
	void *tmp;
	char *copy, *save = NULL;
	int rc = 0;

	if (!list || !*list)
		return 0;
	tmp = malloc(t->t_size);
	copy = strdup(list);
	if (!tmp || !copy) {
		rc = -ENOMEM;
		if (err)
			snprintf(err, errlen, "%s: out of memory", t->t_name);
		goto out;
	}
	memcpy(tmp, obj, t->t_size);
	for (char *kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			if (err)
				rt_bad_value(err, errlen, t->t_name, kv, "expected name=value", "");
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		if (eq - kv > 1 && eq[-1] == '*') {
			eq[-1] = '\0';
			rc = param_scale(t, tmp, kv, eq + 1, err, errlen);
		} else {
			rc = rt_param_set(t, tmp, kv, eq + 1, err, errlen);
		}
	}
	if (!rc)
		memcpy(obj, tmp, t->t_size);
out:
	free(tmp);
	free(copy);
	return rc;
}

int rt_param_format(const struct rt_param *p, const void *obj, char *buf, size_t len)
{
	double v = rt_param_get(p, obj);
	char n[RT_NUM_LEN];

	if (p->p_type == RT_PARAM_BOOL)
		return snprintf(buf, len, "%s", v != 0 ? "true" : "false");
	if (p->p_type == RT_PARAM_ENUM && v >= 0 && v <= p->p_max && p->p_names)
		return snprintf(buf, len, "%s", p->p_names[(size_t)v]);
	if (p->p_type != RT_PARAM_DOUBLE && scale_of(p) == 1.0)
		return snprintf(buf, len, "%.0f", v);
	return snprintf(buf, len, "%s", num(n, v));
}

bool rt_param_changed(const struct rt_param_table *t, const void *obj)
{
	void *def = calloc(1, t->t_size);
	bool changed = false;

	if (!def)
		return true;
	memcpy(def, obj, t->t_size);
	rt_param_defaults(t, def);
	changed = memcmp(def, obj, t->t_size) != 0;
	free(def);
	return changed;
}

/* The defaults as a struct of their own, for printing; NULL on ENOMEM. */
static void *defaults_copy(const struct rt_param_table *t)
{
	void *d = calloc(1, t->t_size);

	if (d)
		rt_param_defaults(t, d);
	return d;
}

int rt_param_print(FILE *f, const struct rt_param_table *t, const void *obj)
{
	void *def = defaults_copy(t);

	if (!def)
		return -ENOMEM;
	if (!obj)
		obj = def;
	fprintf(f, "[%s] %s\n", t->t_name, t->t_help ? t->t_help : "");
	fprintf(f, "  %-22s %12s %-6s %12s %-17s %s\n", "name", "value", "unit", "default",
		"range", "source");
	for (size_t i = 0; i < t->t_nparams; i++) {
		const struct rt_param *p = &t->t_params[i];
		char v[32], d[32], r[64];

		rt_param_format(p, obj, v, sizeof(v));
		rt_param_format(p, def, d, sizeof(d));
		range_text(p, r, sizeof(r));
		fprintf(f, "  %-22s %12s %-6s %12s %-17s %s\n", p->p_name, v, p->p_unit, d, r,
			p->p_source ? p->p_source : "");
	}
	free(def);
	return ferror(f) ? -EIO : 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* A formatted value: a JSON string for an enum, else as it is. */
static void json_val(FILE *f, const struct rt_param *p, const char *v)
{
	if (p->p_type == RT_PARAM_ENUM)
		json_str(f, v);
	else
		fputs(v, f);
}

int rt_param_json(FILE *f, const struct rt_param_table *t, const void *obj)
{
	void *def = defaults_copy(t);

	if (!def)
		return -ENOMEM;
	if (!obj)
		obj = def;
	fputc('{', f);
	for (size_t i = 0; i < t->t_nparams; i++) {
		const struct rt_param *p = &t->t_params[i];
		char v[32], d[32], lo[RT_NUM_LEN], hi[RT_NUM_LEN];

		rt_param_format(p, obj, v, sizeof(v));
		rt_param_format(p, def, d, sizeof(d));
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, p->p_name);
		fputs(": {\"value\": ", f);
		json_val(f, p, v);
		fputs(", \"unit\": ", f);
		json_str(f, p->p_unit);
		fputs(", \"default\": ", f);
		json_val(f, p, d);
		fputs(", ", f);
		if (p->p_type == RT_PARAM_BOOL)
			fprintf(f, "\"min\": false, \"max\": true");
		else
			fprintf(f, "\"min\": %s, \"max\": %s", num(lo, p->p_min), num(hi, p->p_max));
		fprintf(f, ", \"source\": ");
		json_str(f, p->p_source);
		fputc('}', f);
	}
	fputc('}', f);
	free(def);
	return ferror(f) ? -EIO : 0;
}

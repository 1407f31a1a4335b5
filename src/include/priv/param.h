/*
 * ujbd parameters: every tunable of a model or a policy described once.
 *
 * The one idea: a parameter struct (a disk model's, an elevator's, the
 * file-system model's) comes with a table that says, for each field that
 * shapes a result, its name, type, unit, default, valid range and where the
 * default comes from (a data sheet, a kernel default). The same table fills
 * the defaults, parses "name=value,name=value" from a command line,
 * validates ranges, moves a value by a factor (the lab's robustness sweeps)
 * and prints the table as text or JSON. So a constant that shapes a result
 * is a row here, never a literal in the model's code, and nothing about a
 * parameter is written twice.
 *
 * Values are given and printed in the row's unit; p_scale converts a given
 * value to the stored one (a time given in ms and stored in ns has p_scale
 * 1e6). Ranges apply to the given value.
 *
 * Errors: 0 or a negative errno (-EINVAL for an unknown name, a malformed
 * value or one out of range, with a one-line reason in err that names the
 * parameter); nothing prints unless handed a FILE.
 *
 * Internal to ujbd, not installed: parameter tables describe the lab's
 * models (docs/library.md).
 */
#ifndef UJBD_PARAM_H
#define UJBD_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rt_param_type {
	RT_PARAM_BOOL = 0,   /* bool: 0/1, true/false, on/off, yes/no */
	RT_PARAM_UINT = 1,   /* unsigned */
	RT_PARAM_U32 = 2,    /* uint32_t */
	RT_PARAM_U64 = 3,    /* uint64_t */
	RT_PARAM_INT = 4,    /* int */
	RT_PARAM_DOUBLE = 5, /* double */
	/* An enum stored as int (static-assert sizeof == sizeof(int)):
	 * given and printed by name from p_names, stored as its index. */
	RT_PARAM_ENUM = 6,
};

/* One row. */
struct rt_param {
	const char *p_name;        /* "seek_avg_ms": units last, as STYLE.md says */
	enum rt_param_type p_type;
	size_t p_offset;           /* offsetof in the parameter struct */
	const char *p_unit;        /* "ms", "MB/s", "KiB", "rpm", "" */
	double p_scale;            /* stored = given * p_scale; 0 means 1 */
	double p_default;          /* given units */
	double p_min, p_max;       /* valid given values, inclusive */
	const char *p_source;      /* where the default comes from */
	const char *p_help;        /* one line: what it is */
	const char *const *p_names; /* RT_PARAM_ENUM: the names, NULL-terminated */
	/* Numbers the model cannot take although they lie in the range: a
	 * value must be a multiple of p_step (0: any), a power of two if
	 * p_pow2. Set with RT_PARAM_STEP / RT_PARAM_POW2 around a row. */
	double p_step;
	bool p_pow2;
};

/* A group of rows over one struct: a disk model, an elevator, "fs". */
struct rt_param_table {
	const char *t_name;        /* the group: "hdd", "cfq", "fs" */
	const char *t_help;        /* one line */
	const struct rt_param *t_params;
	size_t t_nparams;
	size_t t_size;             /* sizeof the parameter struct */
};

/* A row with a rule beyond its range (RT_PARAM's arguments, then the
 * rule): step > 0 takes multiples of step only, pow2 powers of two. */
#define RT_PARAM_RULE(st, field, type, unit, scale, def, min, max, step, pow2, source, help) \
	{ #field, (type), offsetof(st, field), (unit), (scale), (def), (min), (max), \
	  (source), (help), NULL, (step), (pow2) }
/* A row, for tables written as arrays of RT_PARAM(...). */
#define RT_PARAM(st, field, type, unit, scale, def, min, max, source, help) \
	{ #field, (type), offsetof(st, field), (unit), (scale), (def), (min), (max), \
	  (source), (help), NULL, 0, false }
/* A row whose given name differs from the field's (the unit is not the
 * stored one: "cache_mib" over cache_bytes, "slice_idle_ms" over
 * slice_idle_ns). */
#define RT_PARAM_AS(name, st, field, type, unit, scale, def, min, max, source, help) \
	{ (name), (type), offsetof(st, field), (unit), (scale), (def), (min), (max), \
	  (source), (help), NULL, 0, false }
/* An enum row: names[i] is value i; def the default's index; nnames the count. */
#define RT_PARAM_ENUM_AS(name, st, field, names, nnames, def, source, help) \
	{ (name), RT_PARAM_ENUM, offsetof(st, field), "", 0, (def), 0, (nnames) - 1, \
	  (source), (help), (names), 0, false }
#define RT_PARAM_TABLE(name, help, rows, st) \
	{ (name), (help), (rows), sizeof(rows) / sizeof((rows)[0]), sizeof(st) }

/* The one message for a bad value of a command-line option, every verb's
 * and every parameter group's: "bad --OPT: 'VALUE': REASON (RANGE)", the
 * parenthesis left out when range is NULL or empty; RANGE says what is
 * taken, with its unit ("1 to 64", "0.5 to 40 ms"). snprintf's result. */
int rt_bad_value(char *buf, size_t len, const char *opt, const char *value, const char *reason,
		 const char *range);
/* Set every row of obj to its default (other fields are left alone). */
void rt_param_defaults(const struct rt_param_table *t, void *obj);
/* The row called name, or NULL. */
const struct rt_param *rt_param_find(const struct rt_param_table *t, const char *name);
/* Set one parameter from text, in the row's unit, range-checked. obj is
 * changed only on success. err (may be NULL) gets one line in the shape
 * of rt_bad_value, the table's name as the option: "bad --hdd=seek_avg_ms:
 * '100': out of range (0.5 to 40 ms)" (or "not a number", "not an
 * integer", "not a power of two", "unknown value (a or b)", ...). */
int rt_param_set(const struct rt_param_table *t, void *obj, const char *name,
		 const char *value, char *err, size_t errlen);
/* Parse "name=value[,name=value...]" (an empty list is fine); "name*=f"
 * multiplies the number in force by f (integers rounded), for moving a
 * parameter by a share whatever set it before. All or nothing: on an error
 * obj is unchanged. */
int rt_param_parse(const struct rt_param_table *t, void *obj, const char *list,
		   char *err, size_t errlen);
/* A row's value in its given unit. */
double rt_param_get(const struct rt_param *p, const void *obj);
/* Store a value given in the row's unit, range-checked (integers are
 * rounded to the nearest). 0 or -EINVAL (out of range, obj unchanged). */
int rt_param_put(const struct rt_param *p, void *obj, double given);
/* Format a row's value as it would be given ("9.5", "7200", "true"). */
int rt_param_format(const struct rt_param *p, const void *obj, char *buf, size_t len);
/* Does obj differ from the defaults in any row? */
bool rt_param_changed(const struct rt_param_table *t, const void *obj);
/*
 * Print the table as text: a header line "[name] help", then one line per
 * row: name, value, unit, default, range, source. obj NULL prints the
 * defaults.
 */
int rt_param_print(FILE *f, const struct rt_param_table *t, const void *obj);
/* Print {"NAME": {"value": V, "unit": "U", "default": D, "min": A,
 * "max": B, "source": "S"}, ...} (no trailing newline). obj NULL: the
 * defaults. */
int rt_param_json(FILE *f, const struct rt_param_table *t, const void *obj);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_PARAM_H */

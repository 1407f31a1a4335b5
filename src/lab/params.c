/*
 * lab parameters: every group a `--GROUP=LIST` option may name, with its
 * table (include/ujbd/param.h).
 *
 * The one idea: the lab owns no parameter of its own here; it enumerates
 * the registries (every disk model, every elevator, "queue"), the file
 * system's "fs" group and any table a scenario declares (the rows of
 * scenario_tables below), in that order, and applies the user's lists to a
 * defaults-filled copy of each table's struct to check, print and record
 * them. So a parameter is described once, where it lives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lab/runner.h"
#include "ujbd/param.h"

/* One group: its name and its table (NULL: not described yet). */
struct lab_group {
	const char *g_name;
	const struct rt_param_table *g_table;
};

/*
 * The groups, in print order. Until the registries of the stack module
 * land, the names the lab accepts are listed here without tables; a list
 * for a group without a table is recorded unchecked.
 */
static const struct lab_group groups[] = {
	{ "hdd", NULL },
	{ "ssd", NULL },
	{ "noop", NULL },
	{ "deadline", NULL },
	{ "cfq", NULL },
	{ "queue", NULL },
	{ "fs", NULL },
	{ "jbd", NULL },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static const struct lab_group *group_find(const char *name)
{
	for (size_t i = 0; name && i < NGROUPS; i++)
		if (!strcmp(groups[i].g_name, name))
			return &groups[i];
	return NULL;
}

size_t lab_group_count(void)
{
	return NGROUPS;
}

const char *lab_group_at(size_t i)
{
	return i < NGROUPS ? groups[i].g_name : NULL;
}

bool lab_group_known(const char *group)
{
	return group_find(group) != NULL;
}

/* A defaults-filled struct of t's, with list applied. NULL and err. */
static void *group_values(const struct rt_param_table *t, const char *list, char *err,
			  size_t errlen, int *rc)
{
	void *obj = calloc(1, t->t_size ? t->t_size : 1);

	*rc = -ENOMEM;
	if (!obj)
		return NULL;
	rt_param_defaults(t, obj);
	*rc = rt_param_parse(t, obj, list ? list : "", err, errlen);
	if (*rc) {
		free(obj);
		return NULL;
	}
	return obj;
}

/* A table-less group still wants "name=value" items. */
static int list_shape_ok(const char *group, const char *list, char *err, size_t errlen)
{
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *eq = memchr(p, '=', n);

		if (!eq || eq == p) {
			snprintf(err, errlen, "%s: '%.*s': want name=value", group, (int)n, p);
			return -EINVAL;
		}
		p += n + (e ? 1 : 0);
	}
	return 0;
}

int lab_params_check(const char *group, const char *list, char *err, size_t errlen)
{
	const struct lab_group *g = group_find(group);
	char dummy[8];
	void *obj;
	int rc;

	if (!err)
		err = dummy, errlen = sizeof(dummy);
	if (!g) {
		snprintf(err, errlen, "no parameter group '%s' (ujbd lab --params)", group);
		return -EINVAL;
	}
	if (!g->g_table)
		return list_shape_ok(group, list, err, errlen);
	obj = group_values(g->g_table, list, err, errlen, &rc);
	free(obj);
	return rc;
}

static int group_print(FILE *f, const struct lab_group *g, const struct lab_ctx *c, bool json)
{
	const char *list = c ? lab_ctx_params(c, g->g_name) : "";
	void *obj;
	int rc;

	if (!g->g_table) {
		if (json)
			return fprintf(f, "{}") < 0 ? -EIO : 0;
		return fprintf(f, "[%s] (no table yet)%s%s\n", g->g_name, *list ? " given: " : "",
			       list) < 0 ? -EIO : 0;
	}
	obj = group_values(g->g_table, list, NULL, 0, &rc);
	if (!obj)
		return rc;
	rc = json ? rt_param_json(f, g->g_table, obj) : rt_param_print(f, g->g_table, obj);
	free(obj);
	return rc;
}

int lab_params_json(FILE *f, const struct lab_ctx *c)
{
	int rc = 0;

	fputc('{', f);
	for (size_t i = 0; i < NGROUPS && !rc; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", groups[i].g_name);
		rc = group_print(f, &groups[i], c, true);
	}
	fputc('}', f);
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

int lab_params_print(FILE *f, const struct lab_ctx *c, bool json)
{
	int rc = 0;

	if (json) {
		rc = lab_params_json(f, c);
		fputc('\n', f);
		return rc ? rc : (ferror(f) ? -EIO : 0);
	}
	for (size_t i = 0; i < NGROUPS && !rc; i++) {
		if (i)
			fputc('\n', f);
		rc = group_print(f, &groups[i], c, false);
	}
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

/*
 * lab parameters: every group a `--GROUP=LIST` option may name, with its
 * table (ujbd/param.h).
 *
 * The one idea: the lab owns no parameter of its own here; it enumerates
 * the registries (every disk model, every elevator, "queue"), the file
 * system's "fs" group and any table a scenario declares (the rows of
 * extra_groups below), in that order, and applies the user's lists to a
 * defaults-filled copy of each table's struct to check, print and record
 * them. So a parameter is described once, where it lives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "lab/real.h"
#include "lab/runner.h"
#include "lab/scen.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "priv/param.h"
#include "priv/stack.h"

/* One group: its name, its table (NULL: none yet, or no parameters) and
 * what fills its defaults (NULL: the table's). */
struct lab_group {
	const char *g_name;
	const struct rt_param_table *g_table;
	void (*g_defaults)(void *params);
	const char *g_none;       /* printed when there is no table */
};

static void fs_defaults(void *p)
{
	fs_params_default(p);
}

/* A real file's, as the lab opens it (real.h): O_DIRECT, its disk's flag. */
static void file_defaults(void *p)
{
	rt_param_defaults(stack_file_params(), p);
	(void)rt_param_parse(stack_file_params(), p, LAB_REAL_FILE_PARAMS, NULL, 0);
}

/*
 * Groups that are not in a registry: "fs" (src/fs/fs.h), "jbd" (the
 * journal's options, src/lab/jbd_params.c), then the tables scenarios declare
 * (one row each: name, table, defaults or NULL, ""). A group without a
 * table (an elevator with no tunables) refuses any list: nothing would
 * read it.
 */
static const struct lab_group extra_groups[] = {
	{ "fs", &fs_param_table, fs_defaults, "" },
	{ "jbd", &lab_jbd_param_table, lab_jbd_params_default, "" },
	{ "cpu", &lab_cpu_param_table, NULL, "" },
	{ "aim7", &lab_aim7_param_table, NULL, "" },
	{ "checkpoint", &lab_ckpt_param_table, NULL, "" },
};

#define NEXTRA (sizeof(extra_groups) / sizeof(extra_groups[0]))

/* Every disk model, every elevator, "queue", "file", then the extra groups. */
static size_t group_count(void)
{
	return dev_model_count() + blk_elevator_count() + 2 + NEXTRA;
}

static bool group_at(size_t i, struct lab_group *g)
{
	size_t nm = dev_model_count(), ne = blk_elevator_count();

	memset(g, 0, sizeof(*g));
	if (i < nm) {
		const struct dev_model *m = dev_model_at(i);

		*g = (struct lab_group){ m->m_name, m->m_params, m->m_defaults, "no parameters" };
	} else if (i < nm + ne) {
		const struct blk_elevator_type *e = blk_elevator_at(i - nm);

		*g = (struct lab_group){ e->e_name, e->e_tunables, NULL, "no tunables" };
	} else if (i == nm + ne) {
		*g = (struct lab_group){ "queue", blk_queue_params(), NULL, "no parameters" };
	} else if (i == nm + ne + 1) { /* --disk=file:PATH */
		*g = (struct lab_group){ "file", stack_file_params(), file_defaults, "" };
	} else if (i - nm - ne - 2 < NEXTRA) {
		*g = extra_groups[i - nm - ne - 2];
	} else {
		return false;
	}
	return true;
}

static bool group_find(const char *name, struct lab_group *g)
{
	for (size_t i = 0; name && group_at(i, g); i++)
		if (!strcmp(g->g_name, name))
			return true;
	return false;
}

size_t lab_group_count(void)
{
	return group_count();
}

const char *lab_group_at(size_t i)
{
	struct lab_group g;

	return group_at(i, &g) ? g.g_name : NULL;
}

bool lab_group_known(const char *group)
{
	struct lab_group g;

	return group_find(group, &g);
}

/* A defaults-filled struct of t's, with list applied. NULL and err. */
static void *group_values(const struct lab_group *g, const char *list, char *err,
			  size_t errlen, int *rc)
{
	const struct rt_param_table *t = g->g_table;
	void *obj = calloc(1, t->t_size ? t->t_size : 1);

	*rc = -ENOMEM;
	if (!obj)
		return NULL;
	if (g->g_defaults)
		g->g_defaults(obj);
	else
		rt_param_defaults(t, obj);
	*rc = rt_param_parse(t, obj, list ? list : "", err, errlen);
	if (*rc) {
		free(obj);
		return NULL;
	}
	return obj;
}

int lab_params_check(const char *group, const char *list, char *err, size_t errlen)
{
	struct lab_group gs, *g = &gs;
	char dummy[8];
	void *obj;
	int rc;

	if (!err)
		err = dummy, errlen = sizeof(dummy);
	if (!group_find(group, g)) {
		snprintf(err, errlen, "no parameter group '%s' (ujbd lab --params)", group);
		return -EINVAL;
	}
	if (!g->g_table) { /* noop: no parameters, so none is taken (as devbench says) */
		if (!list || !*list)
			return 0;
		rt_bad_value(err, errlen, group, list, "no parameters", "see --params");
		return -EINVAL;
	}
	obj = group_values(g, list, err, errlen, &rc);
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
		return fprintf(f, "[%s] (%s)%s%s\n", g->g_name, g->g_none,
			       *list ? " given: " : "", list) < 0 ? -EIO : 0;
	}
	obj = group_values(g, list, NULL, 0, &rc);
	if (!obj)
		return rc;
	rc = json ? rt_param_json(f, g->g_table, obj) : rt_param_print(f, g->g_table, obj);
	free(obj);
	return rc;
}

int lab_params_json(FILE *f, const struct lab_ctx *c)
{
	struct lab_group g;
	int rc = 0;

	fputc('{', f);
	for (size_t i = 0; !rc && group_at(i, &g); i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", g.g_name);
		rc = group_print(f, &g, c, true);
	}
	fputc('}', f);
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

int lab_params_print(FILE *f, const struct lab_ctx *c, bool json)
{
	struct lab_group g;
	int rc = 0;

	if (json) {
		rc = lab_params_json(f, c);
		fputc('\n', f);
		return rc ? rc : (ferror(f) ? -EIO : 0);
	}
	for (size_t i = 0; !rc && group_at(i, &g); i++) {
		if (i)
			fputc('\n', f);
		rc = group_print(f, &g, c, false);
	}
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

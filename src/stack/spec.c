/*
 * Stack specs (stack.h): the defaults, the parameter groups, and applying
 * "--GROUP=LIST" options to a spec.
 *
 * The one idea: a group name resolves through the registries (a disk model,
 * an elevator) or is one of the stack's own ("mem", "file", "queue"), and
 * every list is checked against its group's table the moment it is given,
 * so a bad value fails at the option that carries it, not at run time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack_int.h"

/* ---- the stack's own groups ---------------------------------------------- */

static const struct rt_param mem_rows[] = {
	RT_PARAM(struct stack_mem_params, block_size, RT_PARAM_U32, "B", 0, 512, 512, 65536,
		 "dev_mem_new's default", "logical block size (a power of two)"),
};
const struct rt_param_table stack_mem_table =
	RT_PARAM_TABLE("mem", "RAM disk: no volatile cache, no timing (size default 64 MiB)",
		       mem_rows, struct stack_mem_params);

_Static_assert(sizeof(enum dev_file_rot) == sizeof(int), "rotational is an RT_PARAM_ENUM row");
static const char *const file_rot_names[] = { "auto", "backing", NULL };

#define FILE_P(field, type, unit, def, min, max, src, help) \
	RT_PARAM(struct dev_file_opts, field, type, unit, 0, def, min, max, src, help)
static const struct rt_param file_rows[] = {
	FILE_P(read_only, RT_PARAM_BOOL, "", 0, 0, 1, "dev_file_open", "open read-only"),
	FILE_P(direct, RT_PARAM_BOOL, "", 0, 0, 1, "dev_file_open", "O_DIRECT (block_size 4096)"),
	FILE_P(create, RT_PARAM_BOOL, "", 1, 0, 1, "devbench's habit",
	       "create the file if missing (size default 256 MiB)"),
	FILE_P(workers, RT_PARAM_UINT, "", 0, 0, 256, "dev_file_open: 0 = 4",
	       "thread engine: worker threads"),
	FILE_P(queue_depth, RT_PARAM_UINT, "rq", 0, 0, 4096, "dev_file_open: 0 = 32",
	       "requests in flight"),
	FILE_P(block_size, RT_PARAM_U32, "B", 0, 0, 65536,
	       "dev_file_open: 0 = 512 or the device's", "logical block size"),
	FILE_P(exclusive, RT_PARAM_BOOL, "", 1, 0, 1, "mount's O_EXCL claim",
	       "claim the file while open (O_EXCL, or a lock): busy if in use"),
	RT_PARAM_ENUM_AS("rotational", struct dev_file_opts, rotational, file_rot_names, 2, 0,
			 "dev_file_open (backing: as the kernel's loop driver)",
			 "a regular file's seek flag: auto (not rotational) or its disk's"),
};
const struct rt_param_table stack_file_table =
	RT_PARAM_TABLE("file", "a regular file or block device (model file:PATH)", file_rows,
		       struct dev_file_opts);

const struct rt_param_table *stack_file_params(void)
{
	return &stack_file_table;
}

void stack_spec_default(struct stack_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->world = RT_WORLD_SIM;
	s->seed = 1;
	s->ndisks = 1;
	s->disks[0].model = "mem";
	s->block_size = 4096;
	ujbd_opts_default(&s->jopts);
	s->jopts.format = true;
}

/* Rebase params pointers that point into src's storage onto dst's. */
static const char *rebase(const struct stack_spec *src, struct stack_spec *dst, const char *p)
{
	if (p >= src->s_store && p < src->s_store + sizeof(src->s_store))
		return dst->s_store + (p - src->s_store);
	return p;
}

void stack_spec_copy(struct stack_spec *dst, const struct stack_spec *src)
{
	if (dst == src)
		return;
	*dst = *src;
	for (unsigned i = 0; i < STACK_MAX_DISKS; i++) {
		dst->disks[i].params = rebase(src, dst, src->disks[i].params);
		dst->queues[i].params = rebase(src, dst, src->queues[i].params);
		dst->queues[i].queue_params = rebase(src, dst, src->queues[i].queue_params);
	}
}

/* ---- groups ------------------------------------------------------------------ */

enum stack_disk_kind stack_disk_kind_of(const char *model)
{
	if (!model || !strcmp(model, "mem"))
		return STACK_DISK_MEM;
	if (!strncmp(model, "file:", 5))
		return STACK_DISK_FILE;
	return STACK_DISK_MODEL;
}

/* Does disk spec d belong to group g? */
static bool disk_in_group(const struct stack_disk_spec *d, const char *g)
{
	switch (stack_disk_kind_of(d->model)) {
	case STACK_DISK_MEM: return !strcmp(g, "mem");
	case STACK_DISK_FILE: return !strcmp(g, "file");
	default: return !strcmp(d->model, g);
	}
}

bool stack_group_known(const char *g)
{
	return g && (dev_model_find(g) || blk_elevator_find(g) || !strcmp(g, "queue") ||
		     !strcmp(g, "mem") || !strcmp(g, "file"));
}

size_t stack_group_count(void)
{
	return dev_model_count() + 2 + blk_elevator_count() + 1;
}

const char *stack_group_at(size_t i)
{
	size_t nm = dev_model_count(), ne = blk_elevator_count();

	if (i < nm)
		return dev_model_at(i)->m_name;
	if (i == nm)
		return "mem";
	if (i == nm + 1)
		return "file";
	if (i < nm + 2 + ne)
		return blk_elevator_at(i - nm - 2)->e_name;
	return i == nm + 2 + ne ? "queue" : NULL;
}

bool stack_disk_known(const char *model)
{
	if (!model)
		return false;
	if (!strncmp(model, "file:", 5))
		return model[5] != '\0';
	return !strcmp(model, "mem") || dev_model_find(model);
}

/* The table of a disk group, NULL if none. */
static const struct rt_param_table *disk_group_table(const char *g)
{
	const struct dev_model *m = dev_model_find(g);

	if (m)
		return m->m_params;
	if (!strcmp(g, "mem"))
		return &stack_mem_table;
	if (!strcmp(g, "file"))
		return &stack_file_table;
	return NULL;
}

/* Parse list into a scratch struct of table t's defaults: a check only. */
static int check_list(const struct rt_param_table *t, const char *list, char *err, size_t n)
{
	void *tmp = calloc(1, t->t_size);
	int rc;

	if (!tmp)
		return -ENOMEM;
	rt_param_defaults(t, tmp);
	rc = rt_param_parse(t, tmp, list, err, n);
	free(tmp);
	return rc;
}

/* Check list against group g's table (the queue group takes plug= too). */
static int check_group_list(const char *g, const char *list, char *err, size_t n)
{
	const struct blk_elevator_type *e = blk_elevator_find(g);
	const struct rt_param_table *t = disk_group_table(g);
	struct blk_queue_opts qo;

	if (!strcmp(g, "queue")) {
		blk_queue_opts_default(&qo);
		return rt_param_parse(blk_queue_params(), &qo, list, err, n);
	}
	if (e && !e->e_tunables) {
		if (!list || !*list)
			return 0;
		rt_bad_value(err, n, g, list, "no parameters", "see --params");
		return -EINVAL;
	}
	return check_list(e ? e->e_tunables : t, list, err, n);
}

/* old + "," + add, in s's storage; the new string, or NULL when full. */
static const char *join(struct stack_spec *s, const char *old, const char *add)
{
	size_t need = (old && *old ? strlen(old) + 1 : 0) + strlen(add) + 1;
	char *p = s->s_store + s->s_used;

	if (s->s_used + need > sizeof(s->s_store))
		return NULL;
	snprintf(p, need, "%s%s%s", old && *old ? old : "", old && *old ? "," : "", add);
	s->s_used += need;
	return p;
}

/* Which params slots group g touches: out[] gets pointers; the count. */
static unsigned group_slots(struct stack_spec *s, const char *g, const char ***out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->ndisks && i < STACK_MAX_DISKS; i++) {
		if (!strcmp(g, "queue"))
			out[n++] = &s->queues[i].queue_params;
		else if (blk_elevator_find(g) && s->queues[i].elevator &&
			 !strcmp(s->queues[i].elevator, g))
			out[n++] = &s->queues[i].params;
		else if (!blk_elevator_find(g) && disk_in_group(&s->disks[i], g))
			out[n++] = &s->disks[i].params;
	}
	return n;
}

int stack_spec_set_group(struct stack_spec *s, const char *group, const char *list,
			 char *err, size_t errlen)
{
	char e[256] = "";
	const char **slot[STACK_MAX_DISKS];
	const char *val[STACK_MAX_DISKS];
	size_t used = s->s_used;
	unsigned n;
	int rc = -EINVAL;

	if (!group || !list || !stack_group_known(group)) {
		snprintf(e, sizeof(e), "unknown parameter group '%s' (see --params)",
			 group ? group : "");
		goto out;
	}
	rc = check_group_list(group, list, e, sizeof(e));
	if (rc)
		goto out;
	n = group_slots(s, group, slot);
	if (!n) {
		snprintf(e, sizeof(e), "--%s: no disk or queue of this stack uses it", group);
		rc = -EINVAL;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		val[i] = join(s, *slot[i], list);
		if (!val[i]) {
			s->s_used = used;
			snprintf(e, sizeof(e), "%s: too many parameters", group);
			rc = -ENOSPC;
			goto out;
		}
	}
	for (unsigned i = 0; i < n; i++)
		*slot[i] = val[i];
out:
	if (rc && err)
		snprintf(err, errlen, "%s", e);
	return rc;
}

/* ---- printing ------------------------------------------------------------------ */

/* Call fn for every group: models, mem, file, elevators, queue. */
static int each_group(int (*fn)(void *arg, const char *name, const char *help,
				const struct rt_param_table *t), void *arg)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < dev_model_count(); i++) {
		const struct dev_model *m = dev_model_at(i);

		rc = fn(arg, m->m_name, m->m_help, m->m_params);
	}
	if (!rc)
		rc = fn(arg, "mem", stack_mem_table.t_help, &stack_mem_table);
	if (!rc)
		rc = fn(arg, "file", stack_file_table.t_help, &stack_file_table);
	for (size_t i = 0; !rc && i < blk_elevator_count(); i++) {
		const struct blk_elevator_type *e = blk_elevator_at(i);

		rc = fn(arg, e->e_name, e->e_help, e->e_tunables);
	}
	if (!rc)
		rc = fn(arg, "queue", blk_queue_params()->t_help, blk_queue_params());
	return rc;
}

struct print_ctx {
	FILE *f;
	bool json;
	unsigned n;
};

static int print_group(void *arg, const char *name, const char *help,
		       const struct rt_param_table *t)
{
	struct print_ctx *c = arg;
	int rc = 0;

	if (c->json) {
		fprintf(c->f, "%s\"%s\": ", c->n++ ? ", " : "", name);
		if (t)
			rc = rt_param_json(c->f, t, NULL);
		else
			fputs("{}", c->f);
		return rc;
	}
	if (c->n++)
		fputc('\n', c->f);
	if (t)
		rc = rt_param_print(c->f, t, NULL);
	else
		fprintf(c->f, "[%s] %s (no parameters)\n", name, help ? help : "");
	return rc;
}

int stack_params_print(FILE *f, bool json)
{
	struct print_ctx c = { f, json, 0 };
	int rc;

	if (json)
		fputc('{', f);
	rc = each_group(print_group, &c);
	if (json)
		fputs("}\n", f);
	if (!rc && ferror(f))
		rc = -EIO;
	return rc;
}

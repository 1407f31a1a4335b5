/*
 * Stacks (stack.h): a world, disks, queues and a journal from one spec.
 *
 * The one idea: stack_new resolves and checks everything a spec names
 * (models, elevators, every parameter list) into ready-made parameter
 * structs, so that stack_run only opens, in order, on the world's first
 * thread: devices (then the wrap hook), queues, the journal; runs the
 * caller; and closes in the reverse order. Everything with a thread is
 * opened and closed inside the run, which is what lets a sim run return.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stack/stack_int.h"

static int seterr(char *err, size_t n, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int seterr(char *err, size_t n, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && n) {
		va_start(ap, fmt);
		vsnprintf(err, n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ---- resolving a spec ---------------------------------------------------- */

static int resolve_model(struct stack_disk *d, const struct stack_disk_spec *ds,
			 char *err, size_t n)
{
	const struct dev_model *m = dev_model_find(ds->model);
	int rc;

	if (!m)
		return seterr(err, n, -EINVAL, "unknown disk model '%s' (see --params)",
			      ds->model);
	d->d_model = m;
	d->d_params = calloc(1, m->m_params->t_size);
	if (!d->d_params)
		return seterr(err, n, -ENOMEM, "%s: out of memory", m->m_name);
	m->m_defaults(d->d_params);
	rc = rt_param_parse(m->m_params, d->d_params, ds->params, err, n);
	if (!rc && ds->size)
		*(uint64_t *)((char *)d->d_params + m->m_size_offset) = ds->size;
	return rc;
}

static int resolve_disk(struct stack_disk *d, const struct stack_disk_spec *ds,
			char *err, size_t n)
{
	d->d_kind = stack_disk_kind_of(ds->model);
	switch (d->d_kind) {
	case STACK_DISK_MEM:
		rt_param_defaults(&stack_mem_table, &d->d_mem);
		d->d_size = ds->size ? ds->size : STACK_MEM_SIZE;
		return rt_param_parse(&stack_mem_table, &d->d_mem, ds->params, err, n);
	case STACK_DISK_FILE:
		memset(&d->d_file, 0, sizeof(d->d_file));
		rt_param_defaults(&stack_file_table, &d->d_file);
		d->d_path = ds->model + 5;
		if (!*d->d_path)
			return seterr(err, n, -EINVAL, "file: no path in '%s'", ds->model);
		d->d_file.size = ds->size;
		return rt_param_parse(&stack_file_table, &d->d_file, ds->params, err, n);
	default:
		return resolve_model(d, ds, err, n);
	}
}

/* The queue of disk i: wanted when it names an elevator or the journal uses
 * the disk. */
static int resolve_queue(struct stack_queue *q, const struct stack_spec *sp, unsigned i,
			 char *err, size_t n)
{
	const struct stack_queue_spec *qs = &sp->queues[i];
	const char *name = qs->elevator;
	const struct blk_elevator_type *t;
	const void *base_tun = NULL;
	int rc;

	q->q_on = name || qs->base ||
		  (sp->journal && (i == sp->journal_disk || i == sp->data_disk));
	if (!q->q_on)
		return 0;
	if (!name)
		name = qs->base && qs->base->elevator ? qs->base->elevator : "noop";
	t = blk_elevator_find(name);
	if (!t)
		return seterr(err, n, -EINVAL, "unknown elevator '%s' (see --params)", name);
	if (qs->base) {
		q->q_opts = *qs->base;
		/* base's tunables are its elevator's: another one starts from its defaults */
		if (blk_elevator_find(qs->base->elevator ? qs->base->elevator : "noop") == t)
			base_tun = qs->base->elevator_tunables;
	} else {
		blk_queue_opts_default(&q->q_opts);
	}
	q->q_opts.elevator = t->e_name;
	q->q_opts.elevator_tunables = base_tun;
	q->q_opts.trace = q->q_opts.trace || qs->trace;
	if (qs->trace_fn || !qs->base) {
		q->q_opts.trace_fn = qs->trace_fn;
		q->q_opts.trace_arg = qs->trace_arg;
	}
	rc = rt_param_parse(blk_queue_params(), &q->q_opts, qs->queue_params, err, n);
	if (rc || !qs->params || !*qs->params)
		return rc;
	if (!t->e_tunables)
		return seterr(err, n, -EINVAL, "bad --%s: '%s': no parameters (see --params)", name,
			      qs->params);
	q->q_tunables = calloc(1, t->e_tunables->t_size);
	if (!q->q_tunables)
		return seterr(err, n, -ENOMEM, "%s: out of memory", name);
	if (base_tun)
		memcpy(q->q_tunables, base_tun, t->e_tunables->t_size);
	else
		rt_param_defaults(t->e_tunables, q->q_tunables);
	q->q_opts.elevator_tunables = q->q_tunables;
	return rt_param_parse(t->e_tunables, q->q_tunables, qs->params, err, n);
}

static int check_spec(const struct stack_spec *sp, char *err, size_t n)
{
	uint32_t bs = sp->block_size;

	if (sp->ndisks > STACK_MAX_DISKS)
		return seterr(err, n, -EINVAL, "stack: %u disks (0..%u)", sp->ndisks,
			      STACK_MAX_DISKS);
	if (!sp->journal)
		return 0;
	if (sp->journal_disk >= sp->ndisks || sp->data_disk >= sp->ndisks)
		return seterr(err, n, -EINVAL, "journal: disk index out of range");
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		return seterr(err, n, -EINVAL, "journal: block_size=%u: not a power of two 512..65536",
			      bs);
	return 0;
}

static void stack_release_parts(struct stack *s)
{
	for (unsigned i = 0; i < STACK_MAX_DISKS; i++) {
		free(s->s_disk[i].d_params);
		free(s->s_queue[i].q_tunables);
	}
}

int stack_new(const struct stack_spec *spec, struct stack **out, char *err, size_t errlen)
{
	struct rt_world_opts wo = { 0 };
	struct stack *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return seterr(err, errlen, -ENOMEM, "stack: out of memory");
	stack_spec_copy(&s->s_spec, spec);
	rc = check_spec(&s->s_spec, s->s_err, sizeof(s->s_err));
	for (unsigned i = 0; !rc && i < s->s_spec.ndisks; i++)
		rc = resolve_disk(&s->s_disk[i], &s->s_spec.disks[i], s->s_err, sizeof(s->s_err));
	for (unsigned i = 0; !rc && i < s->s_spec.ndisks; i++)
		rc = resolve_queue(&s->s_queue[i], &s->s_spec, i, s->s_err, sizeof(s->s_err));
	if (!rc) {
		wo.kind = s->s_spec.world;
		wo.seed = s->s_spec.seed;
		wo.ncpus = s->s_spec.ncpus;
		wo.sched = s->s_spec.sched;
		rc = rt_world_new(&wo, &s->s_world);
		if (rc)
			seterr(s->s_err, sizeof(s->s_err), rc, "stack: cannot create the world");
	}
	if (rc) {
		seterr(err, errlen, rc, "%s", s->s_err);
		stack_release_parts(s);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ---- opening and closing, on the world's first thread ---------------------- */

static int open_file(struct stack_disk *d, struct dev **out)
{
	struct dev_file_opts o = d->d_file;
	struct stat st;

	if (!o.size && o.create && stat(d->d_path, &st) < 0)
		o.size = STACK_FILE_SIZE;
	if (o.direct && !o.block_size)
		o.block_size = 4096;
	return dev_file_open(d->d_path, &o, out);
}

static int open_disk(struct stack *s, unsigned i)
{
	struct stack_disk *d = &s->s_disk[i];
	struct dev *dev = NULL, *w = NULL;
	int rc;

	switch (d->d_kind) {
	case STACK_DISK_MEM: rc = dev_mem_new(d->d_size, d->d_mem.block_size, &dev); break;
	case STACK_DISK_FILE: rc = open_file(d, &dev); break;
	default: rc = dev_model_new(d->d_model, d->d_params, &dev); break;
	}
	if (rc)
		return seterr(s->s_err, sizeof(s->s_err), rc, "cannot open disk %u '%s': %s", i,
			      s->s_spec.disks[i].model, strerror(-rc));
	if (s->s_spec.wrap) {
		rc = s->s_spec.wrap(s->s_spec.wrap_arg, i, dev, &w);
		if (rc) {
			dev_close(dev);
			return seterr(s->s_err, sizeof(s->s_err), rc, "disk %u: wrap: %s", i,
				      strerror(-rc));
		}
		dev = w;
	}
	d->d_dev = dev;
	return 0;
}

static int open_queue(struct stack *s, unsigned i)
{
	struct stack_queue *q = &s->s_queue[i];
	int rc;

	if (!q->q_on)
		return 0;
	rc = blk_queue_new(s->s_disk[i].d_dev, &q->q_opts, &q->q_q);
	if (rc)
		seterr(s->s_err, sizeof(s->s_err), rc, "disk %u: cannot create its queue: %s", i,
		       strerror(-rc));
	return rc;
}

/* The journal's map: journal_map, or [journal_start, +journal_blocks). */
static int build_map(struct stack *s, uint64_t avail, uint64_t *jlen)
{
	const struct stack_spec *sp = &s->s_spec;
	uint64_t len = 0;

	if (sp->journal_nmap > STACK_MAX_JEXT)
		return -EINVAL;
	for (unsigned i = 0; i < sp->journal_nmap; i++) {
		const struct jbd_extent *e = &sp->journal_map[i];

		if (e->lblk != len || !e->len || e->pblk >= avail || e->len > avail - e->pblk)
			return seterr(s->s_err, sizeof(s->s_err), -EINVAL,
				      "journal: piece %u (%llu+%llu at %llu) is not next or not on disk %u",
				      i, (unsigned long long)e->pblk, (unsigned long long)e->len,
				      (unsigned long long)e->lblk, sp->journal_disk);
		s->s_ext[i] = *e;
		len += e->len;
	}
	if (sp->journal_nmap) {
		*jlen = len;
		return 0;
	}
	if (sp->journal_start >= avail)
		return seterr(s->s_err, sizeof(s->s_err), -EINVAL,
			      "journal: starts past the end of disk %u", sp->journal_disk);
	len = sp->journal_blocks ? sp->journal_blocks : avail - sp->journal_start;
	if (len > avail - sp->journal_start)
		return seterr(s->s_err, sizeof(s->s_err), -EINVAL,
			      "journal: %llu blocks do not fit disk %u (%llu blocks)",
			      (unsigned long long)len, sp->journal_disk, (unsigned long long)avail);
	s->s_ext[0] = (struct jbd_extent){ 0, sp->journal_start, len };
	*jlen = len;
	return 0;
}

/* The journal's location on the open devices. */
static int build_loc(struct stack *s)
{
	const struct stack_spec *sp = &s->s_spec;
	struct dev *jd = s->s_disk[sp->journal_disk].d_dev;
	struct dev *dd = s->s_disk[sp->data_disk].d_dev;
	uint64_t jlen = 0, avail = dev_size(jd) / sp->block_size;
	int rc = build_map(s, avail, &jlen);

	if (rc)
		return rc;
	if (jlen < JBD_FORMAT_MIN_BLOCKS)
		return seterr(s->s_err, sizeof(s->s_err), -EINVAL,
			      "journal: %llu blocks, fewer than %u", (unsigned long long)jlen,
			      (unsigned)JBD_FORMAT_MIN_BLOCKS);
	s->s_loc = (struct jbd_loc){ .j_dev = jd, .j_blocksize = sp->block_size,
				     .j_map = s->s_ext,
				     .j_nmap = sp->journal_nmap ? sp->journal_nmap : 1,
				     .j_len = jlen, .j_sb_block = 0, .j_data = dd,
				     .j_data_blocks = dev_size(dd) / sp->block_size };
	return 0;
}

int stack_journal_open(struct stack *s, const struct ujbd_opts *opts, struct jbd_err *jerr)
{
	struct ujbd_opts o = opts ? *opts : s->s_spec.jopts;
	struct jbd_err e = { 0 };
	int rc;

	if (s->s_j || !s->s_loc.j_dev)
		return -EINVAL;
	if (!opts && s->s_jonce)
		o.format = false; /* a reopen in the run: keep what is there */
	o.journal_queue = s->s_queue[s->s_spec.journal_disk].q_q;
	o.data_queue = s->s_queue[s->s_spec.data_disk].q_q;
	if (o.format && !o.format_opts.blocks)
		o.format_opts.blocks = s->s_loc.j_len;
	if (o.format && !o.format_opts.blocksize)
		o.format_opts.blocksize = s->s_spec.block_size;
	rc = ujbd_open(&s->s_loc, &o, &s->s_j, &e);
	if (!rc)
		s->s_jonce = true;
	if (rc)
		seterr(s->s_err, sizeof(s->s_err), rc, "cannot open the journal: %s",
		       e.msg[0] ? e.msg : ujbd_strerror(rc));
	if (jerr)
		*jerr = e;
	return rc;
}

int stack_journal_close(struct stack *s, bool hard)
{
	int rc = 0;

	if (!s->s_j)
		return 0;
	if (hard)
		ujbd_close_hard(s->s_j);
	else
		rc = ujbd_close(s->s_j);
	s->s_j = NULL;
	if (rc)
		seterr(s->s_err, sizeof(s->s_err), rc, "closing the journal: %s",
		       ujbd_strerror(rc));
	return rc;
}

static int open_all(struct stack *s)
{
	int rc = 0;

	for (unsigned i = 0; !rc && i < s->s_spec.ndisks; i++)
		rc = open_disk(s, i);
	for (unsigned i = 0; !rc && i < s->s_spec.ndisks; i++)
		rc = open_queue(s, i);
	if (!rc && s->s_spec.journal)
		rc = build_loc(s);
	s->s_jonce = false;
	if (!rc && s->s_spec.journal)
		rc = stack_journal_open(s, NULL, NULL);
	return rc;
}

/* Close everything open, journal first; the first error (or 0). */
static int close_all(struct stack *s)
{
	int rc = stack_journal_close(s, false);

	for (unsigned i = STACK_MAX_DISKS; i-- > 0;) {
		blk_queue_free(s->s_queue[i].q_q);
		s->s_queue[i].q_q = NULL;
	}
	for (unsigned i = STACK_MAX_DISKS; i-- > 0;) {
		if (s->s_disk[i].d_dev)
			dev_close(s->s_disk[i].d_dev);
		s->s_disk[i].d_dev = NULL;
	}
	memset(&s->s_loc, 0, sizeof(s->s_loc));
	return rc;
}

static void stack_main(void *arg)
{
	struct stack *s = arg;
	char open_err[sizeof(s->s_err)];
	int rc = open_all(s), crc;

	if (!rc)
		rc = s->s_fn(s, s->s_arg);
	memcpy(open_err, s->s_err, sizeof(open_err));
	crc = close_all(s);
	if (rc)
		memcpy(s->s_err, open_err, sizeof(open_err));
	s->s_rc = rc ? rc : crc;
}

int stack_run(struct stack *s, const char *name, int (*fn)(struct stack *s, void *arg),
	      void *arg)
{
	int rc;

	if (!s || !fn || s->s_running)
		return -EINVAL;
	s->s_err[0] = '\0';
	s->s_fn = fn;
	s->s_arg = arg;
	s->s_running = true;
	rc = rt_world_run(s->s_world, name ? name : "stack", stack_main, s);
	s->s_running = false;
	return rc ? rc : s->s_rc;
}

/* ---- accessors ------------------------------------------------------------- */

const char *stack_error(const struct stack *s)
{
	return s->s_err;
}

struct ujbd *stack_journal(struct stack *s)
{
	return s->s_j;
}

struct blk_queue *stack_queue(struct stack *s, unsigned disk)
{
	return disk < STACK_MAX_DISKS ? s->s_queue[disk].q_q : NULL;
}

struct dev *stack_dev(struct stack *s, unsigned disk)
{
	return disk < STACK_MAX_DISKS ? s->s_disk[disk].d_dev : NULL;
}

const struct jbd_loc *stack_loc(struct stack *s)
{
	return &s->s_loc;
}

rt_world *stack_world(struct stack *s)
{
	return s->s_world;
}

const struct stack_spec *stack_spec(const struct stack *s)
{
	return &s->s_spec;
}

void stack_free(struct stack *s)
{
	if (!s)
		return;
	ASSERT(!s->s_running);
	if (s->s_world)
		rt_world_free(s->s_world);
	stack_release_parts(s);
	free(s);
}

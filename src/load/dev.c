/*
 * dev.c: devbench's load: N I/Os, one at a time per thread, on a
 * device or as bios through a block queue, and devbench's report.
 *
 * The one idea: a thread's loop asks devload_next() what its i-th I/O is
 * and devload_issue() does exactly one (a write+flush counts as one) and
 * counts its latency, issue to completion as the thread sees it, in the
 * thread's own histogram; the report merges the histograms. Threads share
 * the I/O count (each claims one before issuing it), so every thread is
 * measured over the same window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

static const char *const pattern_names[LOAD_DEV_PATTERNS] = {
	"seq", "rand", "write-flush",
};

const char *load_dev_pattern_name(enum load_dev_pattern p)
{
	return (unsigned)p < LOAD_DEV_PATTERNS ? pattern_names[p] : "?";
}

int load_dev_pattern_parse(const char *s, enum load_dev_pattern *out)
{
	for (unsigned i = 0; i < LOAD_DEV_PATTERNS; i++)
		if (!strcmp(s, pattern_names[i])) {
			*out = (enum load_dev_pattern)i;
			return 0;
		}
	return -EINVAL;
}

/* One issuing thread's private state. */
struct devload_thread {
	struct rt_prng dt_prng;
	uint8_t *dt_buf;
};

struct devload {
	struct dev *d_dev;
	struct blk_queue *d_q;     /* or NULL: straight to the device */
	const struct load_dev_opts *d_o;
	uint64_t d_span;           /* bytes addressed: the disk, in whole bs */
	uint64_t d_claimed;        /* I/Os claimed by the threads (atomic) */
	struct load_dev *d_out;
	struct devload_thread d_thr[LOAD_DEV_MAX_THREADS];
};

enum devload_op { DOP_READ, DOP_WRITE_FLUSH };

/* What the thread's i-th I/O is. */
static void devload_next(const struct devload *l, struct devload_thread *t,
			 uint64_t i, enum devload_op *op, uint64_t *off)
{
	uint32_t bs = l->d_o->bs;
	uint64_t blocks = l->d_span / bs;

	switch (l->d_o->pattern) {
	case LOAD_DEV_RAND:
		*op = DOP_READ;
		*off = rt_prng_below(&t->dt_prng, blocks) * bs;
		break;
	case LOAD_DEV_SEQ:
		*op = DOP_READ;
		*off = (i % blocks) * bs;
		break;
	default:
		*op = DOP_WRITE_FLUSH;
		*off = (i % blocks) * bs;
		break;
	}
}

/* One I/O as bios through the queue: a read, or a SYNC write then a flush. */
static int devload_issue_blk(struct devload *l, struct devload_thread *t,
			     enum devload_op op, uint64_t off)
{
	struct blk_bio bio;
	int err;

	memset(&bio, 0, sizeof(bio));
	bio.b_op = op == DOP_READ ? BLK_OP_READ : BLK_OP_WRITE;
	bio.b_flags = op == DOP_READ ? 0 : BLK_SYNC;
	bio.b_sector = off >> BLK_SECTOR_SHIFT;
	bio.b_nr_sectors = l->d_o->bs >> BLK_SECTOR_SHIFT;
	bio.b_buf = t->dt_buf;
	err = blk_submit_wait(l->d_q, &bio);
	if (err == 0 && op != DOP_READ)
		err = blk_flush(l->d_q);
	return err;
}

/* Issue exactly one I/O (a write+flush counts as one) and record it. */
static int devload_issue(struct devload *l, unsigned idx, enum devload_op op,
			 uint64_t off)
{
	struct devload_thread *t = &l->d_thr[idx];
	struct load_dev_thread *r = &l->d_out->thr[idx];
	uint32_t bs = l->d_o->bs;
	uint64_t t0 = rt_now_ns();
	int err;

	if (l->d_q) {
		err = devload_issue_blk(l, t, op, off);
	} else if (op == DOP_READ) {
		err = dev_pread(l->d_dev, t->dt_buf, bs, off);
	} else {
		err = dev_pwrite(l->d_dev, t->dt_buf, bs, off, 0);
		if (err == 0)
			err = dev_flush(l->d_dev);
	}
	if (err < 0)
		return err;
	rt_hist_add(&r->lat, rt_now_ns() - t0);
	r->ops++;
	r->bytes += bs;
	return 0;
}

static int devload_body(void *arg, unsigned idx)
{
	struct devload *l = arg;
	uint64_t ops = l->d_o->ops;

	for (uint64_t i = 0; i < ops; i++) {
		enum devload_op op;
		uint64_t off;
		int err;

		/* Threads share the count: claim one before issuing it. */
		if (l->d_out->nthreads > 1 &&
		    __atomic_fetch_add(&l->d_claimed, 1, __ATOMIC_RELAXED) >= ops)
			break;
		devload_next(l, &l->d_thr[idx], i, &op, &off);
		err = devload_issue(l, idx, op, off);
		if (err < 0)
			return err;
	}
	return 0;
}

static int devload_thread_init(struct devload *l, unsigned idx)
{
	struct devload_thread *t = &l->d_thr[idx];
	uint32_t bs = l->d_o->bs;
	void *buf;

	rt_prng_init(&t->dt_prng, l->d_o->seed * 0x9e3779b97f4a7c15ull + idx + 1);
	if (posix_memalign(&buf, 4096, bs))
		return -ENOMEM;
	t->dt_buf = buf;
	/* written blocks carry a recognisable pattern, not zeros */
	for (uint32_t i = 0; i < bs; i++)
		t->dt_buf[i] = (uint8_t)(i * 7 + idx);
	rt_hist_init(&l->d_out->thr[idx].lat);
	return 0;
}

static int devload_check(struct dev *d, struct blk_queue *q,
			 const struct load_dev_opts *o, uint64_t *span)
{
	if ((unsigned)o->pattern >= LOAD_DEV_PATTERNS || o->bs == 0 ||
	    o->bs % 512 || o->bs % dev_block_size(d))
		return -EINVAL;
	if (o->threads == 0 || o->threads > LOAD_DEV_MAX_THREADS ||
	    (!q && o->threads != 1))
		return -EINVAL;
	*span = dev_size(d) - dev_size(d) % o->bs;
	return *span ? 0 : -EINVAL;
}

/* Threads named bench0.. through the queue; without one, on this thread. */
static int devload_drive(struct devload *l)
{
	const struct load_dev_opts *o = l->d_o;
	struct load_dev *out = l->d_out;
	struct load_thread_info info[LOAD_DEV_MAX_THREADS];
	struct load_threads th = { .n = o->threads, .name = "bench",
				  .ioprio = o->ioprio, .body = devload_body,
				  .arg = l };
	uint64_t t0;
	int err;

	if (!l->d_q) {
		t0 = rt_now_ns();
		err = devload_body(l, 0);
		out->elapsed_ns = rt_now_ns() - t0;
		snprintf(out->thr[0].name, sizeof(out->thr[0].name), "%s", rt_self_name());
		out->thr[0].ioprio = rt_ioprio_get();
		return err;
	}
	err = load_threads_run(&th, info, &out->elapsed_ns);
	for (unsigned i = 0; i < o->threads; i++) {
		memcpy(out->thr[i].name, info[i].name, sizeof(out->thr[i].name));
		out->thr[i].ioprio = info[i].ioprio;
	}
	return err ? err : load_threads_err(info, o->threads);
}

int load_dev_run(struct dev *d, struct blk_queue *q,
		    const struct load_dev_opts *o, struct load_dev *out)
{
	struct devload *l;
	uint64_t span;
	unsigned ready = 0;
	int err = devload_check(d, q, o, &span);

	if (err)
		return err;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	*l = (struct devload){ .d_dev = d, .d_q = q, .d_o = o, .d_span = span,
			       .d_out = out };
	memset(out, 0, sizeof(*out));
	out->nthreads = o->threads;
	for (; ready < o->threads && !err; ready += err == 0)
		err = devload_thread_init(l, ready);
	if (!err)
		err = devload_drive(l);
	for (unsigned i = 0; i < ready; i++)
		free(l->d_thr[i].dt_buf);
	free(l);
	return err;
}

/* ---- the report ---------------------------------------------------------- */

void load_dev_stats(const struct load_dev *r, unsigned first, unsigned n,
		       struct load_dev_stats *s)
{
	struct rt_hist *all = malloc(sizeof(*all));

	memset(s, 0, sizeof(*s));
	if (all)
		rt_hist_init(all);
	for (unsigned i = first; i < first + n && i < r->nthreads; i++) {
		s->n += r->thr[i].ops;
		s->bytes += r->thr[i].bytes;
		if (all)
			rt_hist_merge(all, &r->thr[i].lat);
	}
	if (all)
		load_lat_of(all, &s->lat);
	free(all);
	if (s->n && r->elapsed_ns) {
		s->iops = (double)s->n * 1e9 / (double)r->elapsed_ns;
		s->mb_s = (double)s->bytes * 1e3 / (double)r->elapsed_ns;
	}
}

/* The sim world's clock is virtual: every time and rate it prints says so,
 * so a reader never takes a simulated disk's figures for a measurement. */
static bool devload_virtual(const struct load_dev_report *rep)
{
	return !strcmp(rep->world, "sim");
}

/* Through the block layer: the elevator and one entry per thread. */
static int devload_print_threads(FILE *f, const struct load_dev_report *rep,
				 const struct load_dev *r)
{
	int rc;

	if (rep->json)
		rc = fprintf(f, ",\"elevator\":\"%s\",\"threads\":[", rep->elevator);
	else
		rc = fprintf(f, "  elevator  %s\n", rep->elevator);
	for (unsigned i = 0; i < r->nthreads && rc >= 0; i++) {
		struct load_dev_stats s;
		char prio[16];

		load_dev_stats(r, i, 1, &s);
		rt_ioprio_str(r->thr[i].ioprio, prio, sizeof(prio));
		if (!rep->json) {
			rc = fprintf(f, "  %-8s  %-6s ops %" PRIu64 ", iops %.1f, latency avg %.1f us, "
				     "p50 %.1f us, p99 %.1f us, max %.1f us%s\n",
				     r->thr[i].name, prio, s.n, s.iops, s.lat.avg_us,
				     s.lat.p50_us, s.lat.p99_us, s.lat.max_us,
				     devload_virtual(rep) ? " (virtual)" : "");
			continue;
		}
		rc = fprintf(f, "%s{\"name\":\"%s\",\"ioprio\":\"%s\",\"ops\":%" PRIu64
			     ",\"iops\":%.3f,\"mb_s\":%.3f,", i ? "," : "",
			     r->thr[i].name, prio, s.n, s.iops, s.mb_s);
		if (rc >= 0)
			rc = load_lat_json(f, &s.lat, 3);
		if (rc >= 0)
			rc = fprintf(f, "}");
	}
	if (rc >= 0 && rep->json)
		rc = fprintf(f, "]");
	return rc < 0 ? -EIO : 0;
}

static int devload_print_json(FILE *f, const struct load_dev_report *rep,
			      const struct load_dev *r,
			      const struct load_dev_stats *s)
{
	char iops[32] = "null", mb_s[32] = "null"; /* no time passed: no rate */
	if (r->elapsed_ns) {
		snprintf(iops, sizeof(iops), "%.3f", s->iops);
		snprintf(mb_s, sizeof(mb_s), "%.3f", s->mb_s);
	}
	int rc = fprintf(f, "{\"disk\":\"%s\",\"pattern\":\"%s\",\"bs\":%" PRIu32
			 ",\"ops\":%" PRIu64 ",\"world\":\"%s\",\"seed\":%" PRIu64
			 ",\"time\":\"%s\",\"elapsed_s\":%.6f,\"iops\":%s,\"mb_s\":%s,",
			 rep->disk, rep->pattern, rep->bs, s->n, rep->world, rep->seed,
			 devload_virtual(rep) ? "virtual" : "real",
			 (double)r->elapsed_ns / 1e9, iops, mb_s);

	if (rc >= 0)
		rc = load_lat_json(f, &s->lat, 3);
	if (rc >= 0 && rep->elevator)
		rc = devload_print_threads(f, rep, r);
	if (rc >= 0)
		rc = fprintf(f, "}\n");
	return rc < 0 ? -EIO : 0;
}

int load_dev_print(FILE *f, const struct load_dev_report *rep,
		      const struct load_dev *r)
{
	struct load_dev_stats s;
	bool virt = devload_virtual(rep);
	int rc;

	load_dev_stats(r, 0, r->nthreads, &s);
	if (rep->json)
		return devload_print_json(f, rep, r, &s);
	rc = fprintf(f, "devbench: disk %s%s%s, pattern %s, bs %" PRIu32 ", %s world%s, seed %"
		     PRIu64 "\n", rep->disk, rep->engine ? " engine " : "",
		     rep->engine ? rep->engine : "", rep->pattern, rep->bs,
		     rep->world, virt ? " (every time below is virtual)" : "", rep->seed);
	if (rc >= 0 && !r->elapsed_ns) /* a disk that takes no time (mem): no rate */
		rc = fprintf(f, "  ops       %" PRIu64 " in 0 s%s\n  iops      n/a (no time passed)\n"
			     "  MB/s      n/a\n", s.n, virt ? " of virtual time" : "");
	else if (rc >= 0)
		rc = fprintf(f, "  ops       %" PRIu64 " in %.3f s%s\n  iops      %.1f\n"
			     "  MB/s      %.2f\n", s.n, (double)r->elapsed_ns / 1e9,
			     virt ? " of virtual time" : "", s.iops, s.mb_s);
	if (rc >= 0)
		rc = fprintf(f, "  latency   avg %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us%s\n",
			     s.lat.avg_us, s.lat.p50_us, s.lat.p99_us, s.lat.max_us,
			     virt ? " (virtual)" : "");
	if (rc >= 0 && rep->elevator)
		return devload_print_threads(f, rep, r);
	return rc < 0 ? -EIO : 0;
}

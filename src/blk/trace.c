/*
 * blktrace-style events and btt-style statistics.
 *
 * Events are what `blktrace` records (Q G I D C M F P U T S) and print as
 * `blkparse` prints them by default, so a reader of the traces posted to
 * the kernel lists (Theodore Ts'o's, "Re: [GIT PULL] Ext3 latency fixes",
 * LKML, April 2009, shown here) reads ours:
 *
 *   254,2    1       16     0.005691576  6947  Q   W 10277208 + 8 [kjournald]
 *
 * i.e. "%3d,%-3d %2d %8d %5d.%09d %5d %2s %3s " and then, by action:
 * "sector + count [comm]" (Q G I D M F S), "sector + count [error]" (C),
 * "[comm]" (P), "[comm] nr" (U T). RWBS uses today's letters: F (preflush),
 * then R/W (N for none, "FN" for a bare flush), then F (FUA), S, M.
 *
 * Statistics are kept per completed bio, per process and per effective
 * class: counts, and Q2C, D2C, I2D sums and maxima (btt's names).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blk_int.h"

void blk_rwbs(int op, uint32_t flags, char out[8])
{
	int i = 0;
	if (op == BLK_OP_FLUSH) {
		strcpy(out, "FN");
		return;
	}
	if (op == BLK_RWBS_NONE) {
		strcpy(out, "N");
		return;
	}
	if (flags & BLK_PREFLUSH)
		out[i++] = 'F';
	out[i++] = op == BLK_OP_READ ? 'R' : 'W';
	if (flags & BLK_FUA)
		out[i++] = 'F';
	if (flags & BLK_SYNC)
		out[i++] = 'S';
	if (flags & BLK_META)
		out[i++] = 'M';
	out[i] = '\0';
}

int blk_trace_alloc(struct blk_queue *q)
{
	if (!q->q_opts.trace || q->q_opts.trace_max_events == 0)
		return 0;
	q->q_tr = calloc(q->q_opts.trace_max_events, sizeof(*q->q_tr));
	return q->q_tr ? 0 : -ENOMEM;
}

void blk_trace_free(struct blk_queue *q)
{
	free(q->q_tr);
	q->q_tr = NULL;
}

static void __blk_trace_emit(struct blk_queue *q, struct blk_trace_event *ev)
{
	ev->seq = ++q->q_tr_seq;
	ev->time_ns = rt_now_ns() - q->q_t0;
	ev->cpu = 0;
	ev->pid = rt_self_pid();
	snprintf(ev->comm, sizeof(ev->comm), "%s", rt_self_name());
	ev->major = q->q_opts.trace_major;
	ev->minor = q->q_opts.trace_minor;
	if (q->q_tr && q->q_tr_n < q->q_opts.trace_max_events)
		q->q_tr[q->q_tr_n++] = *ev;
	else
		q->q_tr_dropped++;
	if (q->q_opts.trace_fn)
		q->q_opts.trace_fn(q->q_opts.trace_arg, ev);
}

static int blk_tracing(const struct blk_queue *q)
{
	return q->q_opts.trace || q->q_opts.trace_fn;
}

/* One I/O event (of a bio or a request): RWBS, range, owner, priority. */
static void __blk_trace_io(struct blk_queue *q, char action, enum blk_op op,
			   uint32_t flags, uint64_t sector, uint32_t nr_sectors,
			   int owner_pid, uint16_t ioprio)
{
	struct blk_trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.action = action;
	blk_rwbs(op, flags, ev.rwbs);
	if (op != BLK_OP_FLUSH) {
		ev.sector = sector;
		ev.nr_sectors = nr_sectors;
	}
	ev.owner_pid = owner_pid;
	ev.ioprio = ioprio;
	__blk_trace_emit(q, &ev);
}

void __blk_trace_rq(struct blk_queue *q, char action, const struct blk_request *rq)
{
	if (blk_tracing(q))
		__blk_trace_io(q, action, rq->rq_op, rq->rq_flags, rq->rq_sector,
			       rq->rq_nr_sectors, rq->rq_pid, rq->rq_ioprio);
}

void __blk_trace_bio(struct blk_queue *q, char action, const struct blk_bio *b)
{
	if (blk_tracing(q))
		__blk_trace_io(q, action, b->b_op, b->b_flags, b->b_sector,
			       b->b_nr_sectors, b->b_pid, b->b_prio);
}

void __blk_trace_plug(struct blk_queue *q, char action, unsigned nr)
{
	if (!blk_tracing(q))
		return;
	struct blk_trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.action = action;
	blk_rwbs(BLK_RWBS_NONE, 0, ev.rwbs);
	ev.nr = nr;
	ev.owner_pid = rt_self_pid();
	__blk_trace_emit(q, &ev);
}

void __blk_trace_c(struct blk_queue *q, const struct blk_request *rq, int error)
{
	if (!blk_tracing(q))
		return;
	struct blk_trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.action = 'C';
	blk_rwbs(rq->rq_op, rq->rq_flags, ev.rwbs);
	if (rq->rq_op != BLK_OP_FLUSH) {
		ev.sector = rq->rq_sector;
		ev.nr_sectors = rq->rq_nr_sectors;
	}
	ev.error = error;
	ev.owner_pid = rq->rq_pid;
	ev.ioprio = rq->rq_ioprio;
	__blk_trace_emit(q, &ev);
}

int blk_trace_format(const struct blk_trace_event *ev, char *buf, size_t len)
{
	char act[3] = { ev->action, '\0', '\0' };
	int n = snprintf(buf, len, "%3u,%-3u %2u %8" PRIu64 " %5" PRIu64 ".%09" PRIu64
			 " %5d %2s %3s ",
			 ev->major, ev->minor, ev->cpu, ev->seq,
			 (uint64_t)(ev->time_ns / RT_NS_PER_S), (uint64_t)(ev->time_ns % RT_NS_PER_S),
			 ev->pid, act, ev->rwbs);
	if (n < 0)
		return n;
	size_t used = (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
	char *p = buf + used;
	size_t left = len - used;
	int m;
	switch (ev->action) {
	case 'P':
		m = snprintf(p, left, "[%s]", ev->comm);
		break;
	case 'U':
	case 'T':
		m = snprintf(p, left, "[%s] %u", ev->comm, ev->nr);
		break;
	case 'C':
		if (ev->nr_sectors)
			m = snprintf(p, left, "%" PRIu64 " + %u [%d]", ev->sector,
				     ev->nr_sectors, ev->error);
		else
			m = snprintf(p, left, "[%d]", ev->error);
		break;
	default:
		if (ev->nr_sectors)
			m = snprintf(p, left, "%" PRIu64 " + %u [%s]", ev->sector,
				     ev->nr_sectors, ev->comm);
		else
			m = snprintf(p, left, "[%s]", ev->comm);
		break;
	}
	return m < 0 ? m : n + m;
}

size_t blk_trace_events(struct blk_queue *q, size_t start,
			struct blk_trace_event *out, size_t n)
{
	rt_mutex_lock(&q->q_lock);
	size_t got = 0;
	while (got < n && start + got < q->q_tr_n) {
		out[got] = q->q_tr[start + got];
		got++;
	}
	rt_mutex_unlock(&q->q_lock);
	return got;
}

size_t blk_trace_count(struct blk_queue *q)
{
	rt_mutex_lock(&q->q_lock);
	size_t n = q->q_tr_n;
	rt_mutex_unlock(&q->q_lock);
	return n;
}

uint64_t blk_trace_dropped(struct blk_queue *q)
{
	rt_mutex_lock(&q->q_lock);
	uint64_t n = q->q_tr_dropped;
	rt_mutex_unlock(&q->q_lock);
	return n;
}

int blk_trace_write(struct blk_queue *q, FILE *f)
{
	char line[256];
	int rc = 0;
	rt_mutex_lock(&q->q_lock);
	for (size_t i = 0; i < q->q_tr_n && rc == 0; i++) {
		blk_trace_format(&q->q_tr[i], line, sizeof(line));
		if (fprintf(f, "%s\n", line) < 0)
			rc = -EIO;
	}
	rt_mutex_unlock(&q->q_lock);
	return rc;
}

/* ---- statistics ------------------------------------------------------ */

static struct blk_stat *__blk_proc_stat(struct blk_queue *q, int pid, const char *comm)
{
	for (size_t i = 0; i < q->q_nprocs; i++)
		if (q->q_procs[i].pid == pid)
			return &q->q_procs[i];
	if (q->q_nprocs < BLK_STAT_MAX_PROCS - 1 ||
	    (q->q_nprocs == BLK_STAT_MAX_PROCS - 1 && pid == 0)) {
		struct blk_stat *s = &q->q_procs[q->q_nprocs++];
		memset(s, 0, sizeof(*s));
		s->pid = pid;
		snprintf(s->comm, sizeof(s->comm), "%s", comm);
		return s;
	}
	/* The last slot collects every further process. */
	return __blk_proc_stat(q, 0, "other");
}

static void blk_stat_add(struct blk_stat *s, const struct blk_bio *b,
			 const struct blk_request *rq, uint64_t now)
{
	uint64_t q2c = now - b->b_q_ns, d2c = now - rq->rq_d_ns;
	uint64_t i2d = rq->rq_d_ns - rq->rq_i_ns;
	if (b->b_op == BLK_OP_READ)
		s->reads++;
	else if (b->b_op == BLK_OP_WRITE)
		s->writes++;
	else
		s->flushes++;
	s->sectors += b->b_op == BLK_OP_FLUSH ? 0 : b->b_nr_sectors;
	s->ioprio = b->b_prio;
	s->q2c_ns_sum += q2c;
	s->d2c_ns_sum += d2c;
	s->i2d_ns_sum += i2d;
	if (q2c > s->q2c_ns_max)
		s->q2c_ns_max = q2c;
	if (d2c > s->d2c_ns_max)
		s->d2c_ns_max = d2c;
	if (i2d > s->i2d_ns_max)
		s->i2d_ns_max = i2d;
}

static struct blk_stat *__blk_class_stat(struct blk_queue *q, uint16_t ioprio)
{
	unsigned c = blk_ioprio_class(ioprio);
	ASSERT(c >= 1 && c <= BLK_NCLASSES);
	return &q->q_classes[c - 1];
}

void __blk_account_bio(struct blk_queue *q, const struct blk_bio *b,
		       const struct blk_request *rq, uint64_t now)
{
	blk_stat_add(__blk_proc_stat(q, b->b_pid, b->b_comm), b, rq, now);
	blk_stat_add(__blk_class_stat(q, b->b_prio), b, rq, now);
}

void __blk_account_merge(struct blk_queue *q, const struct blk_bio *b)
{
	__blk_proc_stat(q, b->b_pid, b->b_comm)->merges++;
	__blk_class_stat(q, b->b_prio)->merges++;
}

size_t blk_stats_procs(struct blk_queue *q, struct blk_stat *out, size_t n)
{
	rt_mutex_lock(&q->q_lock);
	size_t k = q->q_nprocs < n ? q->q_nprocs : n;
	memcpy(out, q->q_procs, k * sizeof(*out));
	rt_mutex_unlock(&q->q_lock);
	return k;
}

void blk_stats_classes(struct blk_queue *q, struct blk_stat out[3])
{
	static const char *const names[BLK_NCLASSES] = { "rt", "be", "idle" };
	rt_mutex_lock(&q->q_lock);
	for (unsigned i = 0; i < BLK_NCLASSES; i++) {
		out[i] = q->q_classes[i];
		out[i].pid = -1;
		snprintf(out[i].comm, sizeof(out[i].comm), "%s", names[i]);
	}
	rt_mutex_unlock(&q->q_lock);
}

uint64_t blk_write_errors(const struct blk_queue *q)
{
	return __atomic_load_n(&q->q_write_errors, __ATOMIC_ACQUIRE);
}

int blk_write_errno(const struct blk_queue *q)
{
	return __atomic_load_n(&q->q_write_errno, __ATOMIC_RELAXED);
}

void blk_queue_stats(struct blk_queue *q, struct blk_queue_stats *out)
{
	rt_mutex_lock(&q->q_lock);
	*out = q->q_stats;
	rt_mutex_unlock(&q->q_lock);
}

static double blk_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static int blk_stat_print_row(FILE *f, const struct blk_stat *s)
{
	uint64_t n = s->reads + s->writes + s->flushes;
	char prio[16];
	if (n == 0 && s->merges == 0)
		return 0;
	char pid[16];
	if (s->pid < 0) { /* a class row: no process, no single priority */
		pid[0] = prio[0] = '\0';
	} else {
		snprintf(pid, sizeof(pid), "%d", s->pid);
		rt_ioprio_str(s->ioprio, prio, sizeof(prio));
	}
	return fprintf(f, "%-16s %6s %-6s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7" PRIu64
		       " %10.3f %10.3f %10.3f %10.3f\n",
		       s->comm, pid, prio, s->reads, s->writes, s->flushes, s->merges,
		       n ? blk_ms(s->q2c_ns_sum / n) : 0.0, blk_ms(s->q2c_ns_max),
		       n ? blk_ms(s->d2c_ns_sum / n) : 0.0, blk_ms(s->d2c_ns_max));
}

int blk_stats_print(struct blk_queue *q, FILE *f)
{
	struct blk_stat procs[BLK_STAT_MAX_PROCS], cls[BLK_NCLASSES];
	size_t n = blk_stats_procs(q, procs, BLK_STAT_MAX_PROCS);
	blk_stats_classes(q, cls);
	const char *hdr = "%-16s %6s %-6s %8s %8s %8s %7s %10s %10s %10s %10s\n";
	int rc = fprintf(f, hdr, "process", "pid", "ioprio", "reads", "writes", "flushes",
			 "merges", "Q2C avg ms", "Q2C max ms", "D2C avg ms", "D2C max ms");
	for (size_t i = 0; i < n && rc >= 0; i++)
		rc = blk_stat_print_row(f, &procs[i]);
	if (rc >= 0)
		rc = fprintf(f, hdr, "class", "", "", "reads", "writes", "flushes", "merges",
			     "Q2C avg ms", "Q2C max ms", "D2C avg ms", "D2C max ms");
	for (unsigned i = 0; i < BLK_NCLASSES && rc >= 0; i++)
		rc = blk_stat_print_row(f, &cls[i]);
	return rc < 0 ? -EIO : 0;
}

/*
 * The lab's timeline of a run, in the spirit of seekwatcher: over virtual
 * time, the commits and their phases, the foreground's operations and
 * their latency, and the requests in the queue.
 *
 * The one idea: everything goes into a fixed number of time bins (at most
 * LAB_TL_BINS; a run longer than they cover merges them pairwise and
 * doubles their width), so a timeline's size does not grow with the run:
 * per bin the most requests queued or at the disk, the time the journal's
 * commit spent in each phase, and each kind of operation's slowest one
 * (when it started, how long it took). The sources are the queue's trace
 * events (I and C: requests in, requests done), the journal's trace hook
 * (jbd2_commit_locking, _flushing, _logging, jbd2_end_commit) and the
 * workload's own lab_tl_op calls.
 *
 * Determinism: the sim world runs one thread at a time and every time is
 * rt_now_ns, so the bins are a function of the run. The lock only matters
 * in the real world, where the hooks fire on several threads at once; it
 * is a leaf (taken under the queue's lock and the journal's).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lab/rig.h"
#include "priv/rt.h"

enum { TL_LOCKED, TL_FLUSHING, TL_LOGGING, TL_NPHASES };

static const char *const tl_phase_name[TL_NPHASES] = {
	"tl_commit_locked", "tl_commit_flushing", "tl_commit_logging",
};

struct tl_bin {
	uint32_t q_max;                  /* requests queued or at the disk, at most */
	uint64_t phase_ns[TL_NPHASES];   /* the commit's time in each phase */
	double op_ms[LAB_TL_KINDS];      /* the slowest operation of each kind that started here */
	uint64_t op_t[LAB_TL_KINDS];     /* ... its start + 1 (ns since the timeline's
					  * start; 0: none) */
};

struct lab_timeline {
	pthread_mutex_t tl_lock;
	bool tl_on;
	uint64_t tl_t0;                  /* rt_now_ns at lab_tl_start */
	uint64_t tl_bin_ns;              /* the bins' width */
	uint64_t tl_end;                 /* the last time binned (ns since t0) */
	unsigned tl_n;                   /* bins in use */
	int tl_depth;                    /* requests in now (I - C, from the first event on) */
	int tl_phase;                    /* the commit's phase now, -1: none */
	uint64_t tl_phase_t;             /* ... since (rt_now_ns) */
	char tl_kind[LAB_TL_KINDS][LAB_TL_LABEL];
	struct tl_bin tl_bin[LAB_TL_BINS];
};

int lab_tl_new(struct lab_timeline **out)
{
	struct lab_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return -ENOMEM;
	pthread_mutex_init(&tl->tl_lock, NULL);
	tl->tl_bin_ns = RT_NS_PER_MS;
	tl->tl_phase = -1;
	*out = tl;
	return 0;
}

void lab_tl_free(struct lab_timeline *tl)
{
	if (!tl)
		return;
	pthread_mutex_destroy(&tl->tl_lock);
	free(tl);
}

/* Merge the bins pairwise: half as many, twice as wide. */
static void tl_halve(struct lab_timeline *tl)
{
	for (unsigned i = 0; i < LAB_TL_BINS / 2; i++) {
		struct tl_bin *a = &tl->tl_bin[2 * i], *b = &tl->tl_bin[2 * i + 1], m = *a;

		if (b->q_max > m.q_max)
			m.q_max = b->q_max;
		for (int p = 0; p < TL_NPHASES; p++)
			m.phase_ns[p] += b->phase_ns[p];
		for (int k = 0; k < LAB_TL_KINDS; k++)
			if (b->op_t[k] && (!m.op_t[k] || b->op_ms[k] > m.op_ms[k]))
				m.op_ms[k] = b->op_ms[k], m.op_t[k] = b->op_t[k];
		tl->tl_bin[i] = m;
	}
	memset(&tl->tl_bin[LAB_TL_BINS / 2], 0, sizeof(tl->tl_bin) / 2);
	tl->tl_n = (tl->tl_n + 1) / 2;
	tl->tl_bin_ns *= 2;
}

/* Bins up to time t (ns since t0) exist; the new ones start at the depth of now. */
static unsigned tl_touch(struct lab_timeline *tl, uint64_t t)
{
	unsigned i;

	while (t / tl->tl_bin_ns >= LAB_TL_BINS)
		tl_halve(tl);
	i = (unsigned)(t / tl->tl_bin_ns);
	for (; tl->tl_n <= i; tl->tl_n++)
		tl->tl_bin[tl->tl_n].q_max = tl->tl_depth > 0 ? (uint32_t)tl->tl_depth : 0;
	if (t > tl->tl_end)
		tl->tl_end = t;
	return i;
}

/* The commit's current phase gets its time up to now (rt_now_ns). */
static void tl_phase_to(struct lab_timeline *tl, uint64_t now)
{
	uint64_t from, to;

	if (!tl->tl_on || tl->tl_phase < 0 || now <= tl->tl_t0)
		return;
	from = tl->tl_phase_t > tl->tl_t0 ? tl->tl_phase_t - tl->tl_t0 : 0;
	to = now - tl->tl_t0;
	tl_touch(tl, to);
	while (from < to) {
		uint64_t i = from / tl->tl_bin_ns, end = (i + 1) * tl->tl_bin_ns;

		if (end > to)
			end = to;
		tl->tl_bin[i].phase_ns[tl->tl_phase] += end - from;
		from = end;
	}
}

void lab_tl_start(struct lab_timeline *tl)
{
	if (!tl)
		return;
	pthread_mutex_lock(&tl->tl_lock);
	tl->tl_t0 = rt_now_ns();
	tl->tl_on = true;
	tl_touch(tl, 0);
	pthread_mutex_unlock(&tl->tl_lock);
}

void lab_tl_stop(struct lab_timeline *tl)
{
	uint64_t now;

	if (!tl)
		return;
	pthread_mutex_lock(&tl->tl_lock);
	now = rt_now_ns();
	if (tl->tl_on && now > tl->tl_t0) {
		tl_phase_to(tl, now);
		tl_touch(tl, now - tl->tl_t0);
	}
	tl->tl_on = false;
	pthread_mutex_unlock(&tl->tl_lock);
}

void lab_tl_kind(struct lab_timeline *tl, unsigned kind, const char *label)
{
	if (!tl || kind >= LAB_TL_KINDS)
		return;
	pthread_mutex_lock(&tl->tl_lock);
	snprintf(tl->tl_kind[kind], sizeof(tl->tl_kind[kind]), "%s", label);
	pthread_mutex_unlock(&tl->tl_lock);
}

void lab_tl_op(struct lab_timeline *tl, unsigned kind, uint64_t t0_ns)
{
	uint64_t now;

	if (!tl || kind >= LAB_TL_KINDS)
		return;
	pthread_mutex_lock(&tl->tl_lock);
	now = rt_now_ns();
	if (tl->tl_on && t0_ns >= tl->tl_t0 && now >= t0_ns) {
		uint64_t t = t0_ns - tl->tl_t0;
		double ms = (double)(now - t0_ns) / 1e6;
		unsigned i;

		tl_touch(tl, now - tl->tl_t0);
		i = (unsigned)(t / tl->tl_bin_ns);
		if (!tl->tl_bin[i].op_t[kind] || ms > tl->tl_bin[i].op_ms[kind])
			tl->tl_bin[i].op_ms[kind] = ms, tl->tl_bin[i].op_t[kind] = t + 1;
	}
	pthread_mutex_unlock(&tl->tl_lock);
}

void lab_tl_blk(struct lab_timeline *tl, const struct blk_trace_event *ev)
{
	if (!tl || (ev->action != 'I' && ev->action != 'C'))
		return;
	pthread_mutex_lock(&tl->tl_lock);
	if (tl->tl_on) { /* the bins up to now at the depth before this event */
		uint64_t now = rt_now_ns();
		unsigned i = tl_touch(tl, now > tl->tl_t0 ? now - tl->tl_t0 : 0);

		tl->tl_depth += ev->action == 'I' ? 1 : -1;
		if (tl->tl_depth > 0 && (uint32_t)tl->tl_depth > tl->tl_bin[i].q_max)
			tl->tl_bin[i].q_max = (uint32_t)tl->tl_depth;
	} else {
		tl->tl_depth += ev->action == 'I' ? 1 : -1;
	}
	pthread_mutex_unlock(&tl->tl_lock);
}

void lab_tl_jbd(void *arg, const struct ujbd_trace_event *ev)
{
	struct lab_timeline *tl = arg;
	int phase;

	switch (ev->kind) {
	case UJBD_TR_COMMIT_LOCKING: phase = TL_LOCKED; break;
	case UJBD_TR_COMMIT_FLUSHING: phase = TL_FLUSHING; break;
	case UJBD_TR_COMMIT_LOGGING: phase = TL_LOGGING; break;
	case UJBD_TR_END_COMMIT: case UJBD_TR_DROP_TRANSACTION: phase = -1; break;
	default: return;
	}
	pthread_mutex_lock(&tl->tl_lock);
	{
		uint64_t now = rt_now_ns();

		tl_phase_to(tl, now);
		tl->tl_phase = phase;
		tl->tl_phase_t = now;
	}
	pthread_mutex_unlock(&tl->tl_lock);
}

/* ---- into a result --------------------------------------------------------- */

int lab_tl_report(const struct lab_timeline *tl, struct lab_result *out)
{
	size_t nb = tl->tl_n, n;
	double *x = calloc(nb + 1, sizeof(*x)), *y = calloc(nb + 1, sizeof(*y));
	double bin_s = (double)tl->tl_bin_ns / 1e9, nbins = (double)nb;
	char name[64];
	int rc = x && y ? 0 : -ENOMEM;

	/* one point: the bins' width (s) and how many */
	if (!rc && nb)
		rc = lab_result_series(out, "tl_bins", &bin_s, &nbins, 1);
	/* the queue: a point where the most requests in changes, and the end */
	n = 0;
	for (size_t i = 0; !rc && i < nb; i++)
		if (!n || tl->tl_bin[i].q_max != y[n - 1])
			x[n] = (double)i * bin_s, y[n++] = tl->tl_bin[i].q_max;
	if (!rc && n) {
		x[n] = (double)tl->tl_end / 1e9, y[n] = y[n - 1];
		rc = lab_result_series(out, "tl_queue", x, y, n + 1);
	}
	/* the commit's phases: each bin's share of them (bins without any left out) */
	for (int p = 0; p < TL_NPHASES && !rc; p++) {
		n = 0;
		for (size_t i = 0; i < nb; i++)
			if (tl->tl_bin[i].phase_ns[p])
				x[n] = (double)i * bin_s,
				y[n++] = (double)tl->tl_bin[i].phase_ns[p] / (double)tl->tl_bin_ns;
		if (n)
			rc = lab_result_series(out, tl_phase_name[p], x, y, n);
	}
	/* each kind's slowest operation per bin: when it started (s), how long (ms) */
	for (int k = 0; k < LAB_TL_KINDS && !rc; k++) {
		n = 0;
		for (size_t i = 0; i < nb; i++)
			if (tl->tl_bin[i].op_t[k])
				x[n] = (double)(tl->tl_bin[i].op_t[k] - 1) / 1e9,
				y[n++] = tl->tl_bin[i].op_ms[k];
		snprintf(name, sizeof(name), "tl_op:%s", tl->tl_kind[k][0] ? tl->tl_kind[k] : "op");
		if (n)
			rc = lab_result_series(out, name, x, y, n);
	}
	free(x);
	free(y);
	return rc;
}

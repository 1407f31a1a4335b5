/*
 * stats.c: the journal's statistics: the sums behind the kernel's
 * /proc/fs/jbd2/<dev>/info, log-linear histograms of commit time and fsync
 * latency, commit-thread wakeups and latency per cause; and their two
 * printed forms, the info file's text and JSON.
 *
 * The one idea: keep cumulative sums and divide only when printing, as the
 * kernel does, so a snapshot is a plain copy under one leaf lock. The kernel
 * sums jiffies and divides before converting to ms (so its fields are
 * multiples of 4 ms at HZ=250); we sum ns and divide ns, then truncate to ms:
 * same formula, finer clock, no rounding to jiffies.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jbd/base.h"
#include "jstats.h"

/* ---- recording -------------------------------------------------------- */

void jbd_stats_init(struct jbd_stats *s, uint32_t max_transaction_blocks)
{
	memset(s, 0, sizeof(*s));
	rt_mutex_init(&s->s_lock, "j_stats_lock");
	s->s_sum.max_transaction_blocks = max_transaction_blocks;
	rt_hist_init(&s->s_commit_time);
	rt_hist_init(&s->s_fsync);
}

void jbd_stats_release(struct jbd_stats *s)
{
	rt_mutex_release(&s->s_lock);
}

void jbd_stats_commit(struct jbd_stats *s, const struct jbd_run_sample *r)
{
	struct ujbd_stats *t = &s->s_sum;
	uint64_t avg;

	rt_mutex_lock(&s->s_lock);
	t->ts_tid++;
	if (r->requested)
		t->ts_requested++;
	t->rs_wait_ns += r->wait_ns;
	/* As the kernel: the request delay is summed for requested commits
	 * only, and divided by ts_requested when printed. */
	if (r->requested)
		t->rs_request_delay_ns += r->request_delay_ns;
	t->rs_running_ns += r->running_ns;
	t->rs_locked_ns += r->locked_ns;
	t->rs_flushing_ns += r->flushing_ns;
	t->rs_logging_ns += r->logging_ns;
	t->rs_handle_count += r->handle_count;
	t->rs_blocks += r->blocks;
	t->rs_blocks_logged += r->blocks_logged;
	t->data_journaled += r->data_journaled;
	t->data_home += r->data_home;
	t->async_commits += r->async;
	t->caller_commits += r->caller;
	/* jbd2's j_average_commit_time: not a mean but (sample + 3*old)/4,
	 * seeded by the first sample (the kernel reseeds whenever it is 0). */
	avg = s->s_avg_commit_ns;
	avg = avg ? (r->commit_time_ns + 3 * avg) / 4 : r->commit_time_ns;
	__atomic_store_n(&s->s_avg_commit_ns, avg, __ATOMIC_RELAXED);
	t->average_commit_time_ns = avg;
	rt_hist_add(&s->s_commit_time, r->commit_time_ns);
	rt_mutex_unlock(&s->s_lock);
}

uint64_t jbd_stats_avg_commit_ns(const struct jbd_stats *s)
{
	return __atomic_load_n(&s->s_avg_commit_ns, __ATOMIC_RELAXED);
}

void jbd_stats_fsync(struct jbd_stats *s, uint64_t ns)
{
	rt_mutex_lock(&s->s_lock);
	rt_hist_add(&s->s_fsync, ns);
	rt_mutex_unlock(&s->s_lock);
}

void jbd_stats_wakeup(struct jbd_stats *s, bool useless)
{
	rt_mutex_lock(&s->s_lock);
	s->s_sum.wakeups++;
	if (useless)
		s->s_sum.useless_wakeups++;
	rt_mutex_unlock(&s->s_lock);
}

/* The calling thread's accumulator (ujbd_lat_attach), or NULL. Every
 * jbd_stats_lat is made on the thread that waited. */
static _Thread_local struct ujbd_lat_acct *lat_acct;

void ujbd_lat_attach(struct ujbd_lat_acct *acc)
{
	lat_acct = acc;
}

static void lat_acct_add(enum ujbd_lat_cause c, uint64_t ns)
{
	struct ujbd_lat_acct *a = lat_acct;

	if (!a)
		return;
	a->count[c]++;
	a->sum_ns[c] += ns;
	if (ns > a->max_ns[c])
		a->max_ns[c] = ns;
}

void jbd_stats_inherit_boost(struct jbd_stats *s)
{
	rt_mutex_lock(&s->s_lock);
	s->s_sum.inherit_boosts++;
	rt_mutex_unlock(&s->s_lock);
}

void jbd_stats_lat(struct jbd_stats *s, enum ujbd_lat_cause c, uint64_t ns)
{
	struct ujbd_lat *l;

	ASSERT((unsigned)c < UJBD_LAT_NR);
	lat_acct_add(c, ns);
	rt_mutex_lock(&s->s_lock);
	l = &s->s_sum.lat[c];
	l->count++;
	l->sum_ns += ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	rt_mutex_unlock(&s->s_lock);
}

void jbd_stats_checkpoint(struct jbd_stats *s, uint64_t written,
			  uint64_t dropped)
{
	rt_mutex_lock(&s->s_lock);
	s->s_sum.checkpoint_written += written;
	s->s_sum.checkpoint_dropped += dropped;
	rt_mutex_unlock(&s->s_lock);
}

void jbd_stats_log_space_wait(struct jbd_stats *s, uint64_t ns)
{
	rt_mutex_lock(&s->s_lock);
	s->s_sum.log_space_waits++;
	if (ns > s->s_sum.log_space_stall_ns_max)
		s->s_sum.log_space_stall_ns_max = ns;
	rt_mutex_unlock(&s->s_lock);
}

void jbd_hist_summary(const struct rt_hist *h, struct ujbd_hist *out)
{
	out->count = h->h_count;
	out->sum_ns = h->h_sum_ns;
	out->max_ns = h->h_max_ns;
	out->p50_ns = rt_hist_percentile(h, 50);
	out->p99_ns = rt_hist_percentile(h, 99);
}

void jbd_stats_snapshot(struct jbd_stats *s, struct ujbd_stats *out)
{
	rt_mutex_lock(&s->s_lock);
	*out = s->s_sum;
	jbd_hist_summary(&s->s_commit_time, &out->commit_time);
	jbd_hist_summary(&s->s_fsync, &out->fsync_latency);
	rt_mutex_unlock(&s->s_lock);
}

/* ---- printing --------------------------------------------------------- */

/* An snprintf that appends at *pos and keeps counting past the end, so the
 * caller gets snprintf's "length it would have had". */
struct jbd_out {
	char *buf;
	size_t len, pos;
};

static void __attribute__((format(printf, 2, 3)))
jout(struct jbd_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
		      o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static uint64_t div0(uint64_t a, uint64_t b)
{
	return b ? a / b : 0;
}

static uint64_t to_ms(uint64_t ns)
{
	return ns / RT_NS_PER_MS;
}

static uint64_t to_us(uint64_t ns)
{
	return ns / RT_NS_PER_US;
}

/*
 * The info file: the header line always; the "average: " block (trailing
 * space, two-space indents, no blank line) only once a commit finished.
 * Each per-phase mean is sum / count in ns, then truncated to ms; the
 * request delay is divided by the requested count; the commit time is the
 * EWMA in us.
 */
int ujbd_stats_format(const struct ujbd_stats *s, char *buf, size_t len)
{
	struct jbd_out o = { buf, len, 0 };
	uint64_t n = s->ts_tid;

	if (buf && len)
		buf[0] = '\0';
	jout(&o, "%" PRIu64 " transactions (%" PRIu64 " requested), "
	     "each up to %" PRIu32 " blocks\n", n, s->ts_requested,
	     s->max_transaction_blocks);
	if (n == 0)
		return (int)o.pos;
	jout(&o, "average: \n");
	jout(&o, "  %" PRIu64 "ms waiting for transaction\n",
	     to_ms(div0(s->rs_wait_ns, n)));
	jout(&o, "  %" PRIu64 "ms request delay\n",
	     to_ms(div0(s->rs_request_delay_ns, s->ts_requested)));
	jout(&o, "  %" PRIu64 "ms running transaction\n",
	     to_ms(div0(s->rs_running_ns, n)));
	jout(&o, "  %" PRIu64 "ms transaction was being locked\n",
	     to_ms(div0(s->rs_locked_ns, n)));
	jout(&o, "  %" PRIu64 "ms flushing data (in ordered mode)\n",
	     to_ms(div0(s->rs_flushing_ns, n)));
	jout(&o, "  %" PRIu64 "ms logging transaction\n",
	     to_ms(div0(s->rs_logging_ns, n)));
	jout(&o, "  %" PRIu64 "us average transaction commit time\n",
	     to_us(s->average_commit_time_ns));
	jout(&o, "  %" PRIu64 " handles per transaction\n",
	     div0(s->rs_handle_count, n));
	jout(&o, "  %" PRIu64 " blocks per transaction\n", div0(s->rs_blocks, n));
	jout(&o, "  %" PRIu64 " logged blocks per transaction\n",
	     div0(s->rs_blocks_logged, n));
	return (int)o.pos;
}

static const char *const lat_names[UJBD_LAT_NR] = {
	[UJBD_LAT_WAIT_TRANSACTION] = "wait_transaction",
	[UJBD_LAT_WAIT_COMMIT] = "wait_commit",
	[UJBD_LAT_WAIT_LOG_SPACE] = "wait_log_space",
	[UJBD_LAT_WAIT_FROZEN] = "wait_frozen",
	[UJBD_LAT_WAIT_SHADOW] = "wait_shadow",
	[UJBD_LAT_LOCK_WRITEBACK] = "lock_writeback",
	[UJBD_LAT_LOCK_CHECKPOINT] = "lock_checkpoint",
	[UJBD_LAT_LOCK_READ] = "lock_read",
};

static void json_hist(struct jbd_out *o, const char *name,
		      const struct ujbd_hist *h)
{
	jout(o, "\"%s\":{\"count\":%" PRIu64 ",\"avg_ns\":%" PRIu64
	     ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
	     "}", name, h->count, div0(h->sum_ns, h->count), h->p50_ns,
	     h->p99_ns, h->max_ns);
}

/* The info file's fields under their printed meaning and unit (values
 * identical to the text), then the exact ns means. */
static void json_average(struct jbd_out *o, const struct ujbd_stats *s)
{
	uint64_t n = s->ts_tid;

	jout(o, "\"average\":{\"wait_ms\":%" PRIu64 ",\"request_delay_ms\":%"
	     PRIu64 ",\"running_ms\":%" PRIu64 ",\"locked_ms\":%" PRIu64
	     ",\"flushing_ms\":%" PRIu64 ",\"logging_ms\":%" PRIu64
	     ",\"commit_time_us\":%" PRIu64 ",\"handles\":%" PRIu64
	     ",\"blocks\":%" PRIu64 ",\"logged_blocks\":%" PRIu64 "},",
	     to_ms(div0(s->rs_wait_ns, n)),
	     to_ms(div0(s->rs_request_delay_ns, s->ts_requested)),
	     to_ms(div0(s->rs_running_ns, n)),
	     to_ms(div0(s->rs_locked_ns, n)),
	     to_ms(div0(s->rs_flushing_ns, n)),
	     to_ms(div0(s->rs_logging_ns, n)),
	     to_us(s->average_commit_time_ns),
	     div0(s->rs_handle_count, n), div0(s->rs_blocks, n),
	     div0(s->rs_blocks_logged, n));
	jout(o, "\"average_ns\":{\"wait\":%" PRIu64 ",\"request_delay\":%"
	     PRIu64 ",\"running\":%" PRIu64 ",\"locked\":%" PRIu64
	     ",\"flushing\":%" PRIu64 ",\"logging\":%" PRIu64
	     ",\"commit_time\":%" PRIu64 "},",
	     div0(s->rs_wait_ns, n), div0(s->rs_request_delay_ns, s->ts_requested),
	     div0(s->rs_running_ns, n), div0(s->rs_locked_ns, n),
	     div0(s->rs_flushing_ns, n), div0(s->rs_logging_ns, n),
	     s->average_commit_time_ns);
}

int ujbd_stats_json(const struct ujbd_stats *s, char *buf, size_t len)
{
	struct jbd_out o = { buf, len, 0 };

	if (buf && len)
		buf[0] = '\0';
	jout(&o, "{\"transactions\":%" PRIu64 ",\"requested\":%" PRIu64
	     ",\"max_transaction_blocks\":%" PRIu32 ",", s->ts_tid,
	     s->ts_requested, s->max_transaction_blocks);
	json_average(&o, s);
	json_hist(&o, "commit_time", &s->commit_time);
	jout(&o, ",");
	json_hist(&o, "fsync_latency", &s->fsync_latency);
	jout(&o, ",\"wakeups\":%" PRIu64 ",\"useless_wakeups\":%" PRIu64
	     ",\"latency\":{", s->wakeups, s->useless_wakeups);
	for (unsigned c = 0; c < UJBD_LAT_NR; c++)
		jout(&o, "%s\"%s\":{\"count\":%" PRIu64 ",\"avg_ns\":%" PRIu64
		     ",\"max_ns\":%" PRIu64 "}", c ? "," : "", lat_names[c],
		     s->lat[c].count, div0(s->lat[c].sum_ns, s->lat[c].count),
		     s->lat[c].max_ns);
	jout(&o, "},\"data\":{\"journaled\":%" PRIu64 ",\"home\":%" PRIu64
	     "},\"async_commits\":%" PRIu64 ",\"caller_commits\":%" PRIu64,
	     s->data_journaled, s->data_home, s->async_commits,
	     s->caller_commits);
	jout(&o, ",\"checkpoint\":{\"written\":%" PRIu64 ",\"dropped\":%"
	     PRIu64 "},\"log_space\":{\"waits\":%" PRIu64
	     ",\"stall_max_ns\":%" PRIu64 "},", s->checkpoint_written,
	     s->checkpoint_dropped, s->log_space_waits,
	     s->log_space_stall_ns_max);
	jout(&o, "\"inherit\":{\"boosts\":%" PRIu64 ",\"boosted_rqs\":%" PRIu64
	     ",\"wait_before_boost_ns_sum\":%" PRIu64 ",\"wait_before_boost_ns_max\":%"
	     PRIu64 ",\"wait_after_boost_ns_sum\":%" PRIu64
	     ",\"wait_after_boost_ns_max\":%" PRIu64 "}}", s->inherit_boosts,
	     s->boosted_rqs, s->boost_wait_before_ns_sum, s->boost_wait_before_ns_max,
	     s->boost_wait_after_ns_sum, s->boost_wait_after_ns_max);
	return (int)o.pos;
}

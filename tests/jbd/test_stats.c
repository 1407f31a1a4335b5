/*
 * Statistics and trace events: the info file's text byte for byte against
 * a capture of /proc/fs/jbd2/loop0-8/info (Linux 6.18, 50 dd conv=fsync
 * files on a fresh 256 MiB ext4), the
 * integer division and request-delay rules, the (sample + 3*old)/4 average
 * commit time, the log-linear histogram and its percentiles, the JSON
 * (parsed by a strict validator here), the counters under threads, and the
 * trace hook receiving each event with its fields. Every JBD_TRACE below
 * also leaves a stapsdt note in this binary, which tests/jbd/stats_probes.sh
 * reads with readelf -n.
 */
#include <ctype.h>
#include <stdbool.h>

#include "jbd/jstats.h"
#include "jbd/jtrace.h"
#include "t.h"
#include "ujbd/dev.h"
#include "priv/rt.h"
#include "priv/stack.h"

static struct jbd_stats st;

static void sample(struct jbd_run_sample *r, uint32_t tid)
{
	memset(r, 0, sizeof(*r));
	r->tid = tid;
}

/* ---- the info file ------------------------------------------------------ */

static void test_format_before_commit(void)
{
	struct ujbd_stats s;
	char buf[512];
	int n;

	jbd_stats_init(&st, 2730);
	jbd_stats_snapshot(&st, &s);
	n = ujbd_stats_format(&s, buf, sizeof(buf));
	T_STREQ(buf, "0 transactions (0 requested), each up to 2730 blocks\n");
	T_EQ(n, (int)strlen(buf));
	jbd_stats_release(&st);
}

/* That capture after 50 dd conv=fsync files, byte for byte. */
static const char spec_info[] =
	"50 transactions (50 requested), each up to 2730 blocks\n"
	"average: \n"
	"  0ms waiting for transaction\n"
	"  0ms request delay\n"
	"  0ms running transaction\n"
	"  0ms transaction was being locked\n"
	"  0ms flushing data (in ordered mode)\n"
	"  0ms logging transaction\n"
	"  1773us average transaction commit time\n"
	"  3 handles per transaction\n"
	"  6 blocks per transaction\n"
	"  8 logged blocks per transaction\n";

static void test_format_spec_example(void)
{
	struct jbd_run_sample r;
	struct ujbd_stats s;
	char buf[1024];

	jbd_stats_init(&st, 2730);
	for (uint32_t i = 0; i < 50; i++) {
		sample(&r, 100 + i);
		r.requested = true;
		r.request_delay_ns = 300 * RT_NS_PER_US;
		r.running_ns = 900 * RT_NS_PER_US;
		r.locked_ns = 10 * RT_NS_PER_US;
		r.flushing_ns = 20 * RT_NS_PER_US;
		r.logging_ns = 999 * RT_NS_PER_US;
		r.commit_time_ns = 1773 * RT_NS_PER_US + 999; /* -> 1773us */
		r.handle_count = 3;
		r.blocks = 6;
		r.blocks_logged = 8;
		jbd_stats_commit(&st, &r);
	}
	jbd_stats_snapshot(&st, &s);
	T_EQ(ujbd_stats_format(&s, buf, sizeof(buf)), (int)strlen(spec_info));
	T_STREQ(buf, spec_info);
	jbd_stats_release(&st);
}

/* Means are sum/count in ns truncated to ms (no jiffies): 5.46 ms -> 5ms,
 * where HZ=250 jiffies would give 4ms. The request delay is divided by the
 * requested count, not by the number of commits. Counts truncate too. */
static void test_format_division(void)
{
	struct jbd_run_sample r;
	struct ujbd_stats s;
	char buf[1024];

	jbd_stats_init(&st, 1365);
	sample(&r, 1);
	r.logging_ns = 5460 * RT_NS_PER_US;
	r.running_ns = 5 * RT_NS_PER_S;
	r.handle_count = 3;
	r.blocks = 1;
	r.request_delay_ns = 777 * RT_NS_PER_MS; /* not requested: ignored */
	r.commit_time_ns = 2 * RT_NS_PER_MS;
	jbd_stats_commit(&st, &r);
	sample(&r, 2);
	r.requested = true;
	r.request_delay_ns = 3 * RT_NS_PER_MS + 999999;
	r.logging_ns = 5460 * RT_NS_PER_US;
	r.wait_ns = 4 * RT_NS_PER_MS;
	r.handle_count = 2;
	r.blocks = 2;
	r.blocks_logged = 5;
	r.commit_time_ns = 6 * RT_NS_PER_MS;
	jbd_stats_commit(&st, &r);
	jbd_stats_snapshot(&st, &s);
	ujbd_stats_format(&s, buf, sizeof(buf));
	T_STREQ(buf, "2 transactions (1 requested), each up to 1365 blocks\n"
		     "average: \n"
		     "  2ms waiting for transaction\n"
		     "  3ms request delay\n"
		     "  2500ms running transaction\n"
		     "  0ms transaction was being locked\n"
		     "  0ms flushing data (in ordered mode)\n"
		     "  5ms logging transaction\n"
		     "  3000us average transaction commit time\n"
		     "  2 handles per transaction\n"
		     "  1 blocks per transaction\n"
		     "  2 logged blocks per transaction\n");
	jbd_stats_release(&st);
}

/* snprintf's contract: the full length is returned, the text truncated and
 * NUL-terminated; a NULL buffer of length 0 just measures. */
static void test_format_short_buffer(void)
{
	struct ujbd_stats s;
	char buf[10];
	int full;

	memset(&s, 0, sizeof(s));
	s.max_transaction_blocks = 2730;
	full = ujbd_stats_format(&s, NULL, 0);
	T_EQ(full, (int)strlen("0 transactions (0 requested), each up to 2730 blocks\n"));
	memset(buf, 'x', sizeof(buf));
	T_EQ(ujbd_stats_format(&s, buf, sizeof(buf)), full);
	T_STREQ(buf, "0 transac");
	T_EQ(ujbd_stats_json(&s, NULL, 0) > 100, 1);
	T_EQ(ujbd_stats_json(&s, buf, sizeof(buf)), ujbd_stats_json(&s, NULL, 0));
	T_EQ(buf[9], '\0');
}

/* ---- the average commit time ------------------------------------------- */

static void test_ewma(void)
{
	static const uint64_t in[] = { 1000, 2000, 0, 4000, 4000 };
	/* seed 1000; (2000+3000)/4 = 1250; (0+3750)/4 = 937;
	 * (4000+2811)/4 = 1702; (4000+5106)/4 = 2276 */
	static const uint64_t want[] = { 1000, 1250, 937, 1702, 2276 };
	struct jbd_run_sample r;
	struct ujbd_stats s;

	jbd_stats_init(&st, 100);
	T_EQ_U64(jbd_stats_avg_commit_ns(&st), 0);
	for (unsigned i = 0; i < 5; i++) {
		sample(&r, i + 1);
		r.commit_time_ns = in[i];
		jbd_stats_commit(&st, &r);
		T_EQ_U64(jbd_stats_avg_commit_ns(&st), want[i]);
		jbd_stats_snapshot(&st, &s);
		T_EQ_U64(s.average_commit_time_ns, want[i]);
	}
	T_EQ_U64(s.ts_tid, 5);
	T_EQ_U64(s.commit_time.count, 5);
	T_EQ_U64(s.commit_time.max_ns, 4000);
	T_EQ_U64(s.commit_time.sum_ns, 11000);
	jbd_stats_release(&st);
}

/* ---- histograms ---------------------------------------------------------- */

static void test_hist_buckets(void)
{
	uint64_t v, prev_max = 0;

	/* Buckets tile the range: each starts right after the previous. */
	for (unsigned b = 0; b < RT_HIST_BUCKETS; b++) {
		uint64_t mx = rt_hist_bucket_max(b);
		if (b > 0)
			T_CHECK(mx > prev_max);
		T_EQ(rt_hist_bucket(mx), b);
		if (b > 0)
			T_EQ(rt_hist_bucket(prev_max + 1), b);
		prev_max = mx;
	}
	T_EQ_U64(prev_max, UINT64_MAX);
	/* Small values are exact; large ones within 1/16. */
	for (v = 0; v < RT_HIST_SUB; v++)
		T_EQ_U64(rt_hist_bucket_max(rt_hist_bucket(v)), v);
	for (v = 17; v < (1ull << 40); v = v * 3 + 1) {
		uint64_t mx = rt_hist_bucket_max(rt_hist_bucket(v));
		T_CHECK(mx >= v);
		T_CHECK(mx - v <= v / RT_HIST_SUB);
	}
}

static void test_hist_percentiles(void)
{
	struct rt_hist h;
	struct ujbd_hist s;

	rt_hist_init(&h);
	T_EQ_U64(rt_hist_percentile(&h, 50), 0);
	/* 1..1000 us: p50 is the 500th value, p99 the 990th. */
	for (uint64_t i = 1000; i >= 1; i--)
		rt_hist_add(&h, i * RT_NS_PER_US);
	jbd_hist_summary(&h, &s);
	T_EQ_U64(s.count, 1000);
	T_EQ_U64(s.max_ns, 1000 * RT_NS_PER_US);
	T_EQ_U64(s.sum_ns, 500500 * RT_NS_PER_US);
	T_CHECK(s.p50_ns >= 500 * RT_NS_PER_US);
	T_CHECK(s.p50_ns <= 500 * RT_NS_PER_US + 500 * RT_NS_PER_US / 16);
	T_CHECK(s.p99_ns >= 990 * RT_NS_PER_US);
	T_CHECK(s.p99_ns <= 1000 * RT_NS_PER_US); /* clamped to max */
	T_EQ_U64(rt_hist_percentile(&h, 100), 1000 * RT_NS_PER_US);
	/* A long tail: 98 fast, 2 slow: p50 fast, p99 slow. */
	rt_hist_init(&h);
	for (int i = 0; i < 98; i++)
		rt_hist_add(&h, 10);
	rt_hist_add(&h, 5 * RT_NS_PER_MS);
	rt_hist_add(&h, 7 * RT_NS_PER_MS);
	T_EQ_U64(rt_hist_percentile(&h, 50), 10);
	T_EQ_U64(rt_hist_percentile(&h, 98), 10);
	T_CHECK(rt_hist_percentile(&h, 99) >= 5 * RT_NS_PER_MS);
	T_CHECK(rt_hist_percentile(&h, 99) < 7 * RT_NS_PER_MS);
	T_EQ_U64(rt_hist_percentile(&h, 100), 7 * RT_NS_PER_MS);
	/* Merging two histograms is the histogram of both. */
	{
		struct rt_hist a, c;

		rt_hist_init(&a);
		rt_hist_init(&c);
		rt_hist_add(&a, 3);
		rt_hist_add(&a, 9 * RT_NS_PER_MS);
		rt_hist_merge(&c, &h);
		rt_hist_merge(&c, &a);
		T_EQ_U64(c.h_count, 102);
		T_EQ_U64(c.h_max_ns, 9 * RT_NS_PER_MS);
		T_EQ_U64(c.h_sum_ns, h.h_sum_ns + a.h_sum_ns);
		T_EQ_U64(rt_hist_percentile(&c, 0.5), 3); /* rank 1 */
		T_EQ_U64(rt_hist_percentile(&c, 0), 3); /* p 0 reads as rank 1 */
		T_EQ_U64(rt_hist_percentile(&c, 1), 10); /* rank 2 */
		T_EQ_U64(rt_hist_percentile(&c, 100), 9 * RT_NS_PER_MS);
	}
	/* One sample: every percentile is it. */
	rt_hist_init(&h);
	rt_hist_add(&h, 123456789);
	T_EQ_U64(rt_hist_percentile(&h, 50), 123456789);
	T_EQ_U64(rt_hist_percentile(&h, 1), 123456789);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A strict JSON validator: objects, arrays, strings without escapes we do
 * not emit, integers and numbers, true/false/null. */
static const char *js_value(const char *p);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20)
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

static const char *js_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	if (*p == '0' && isdigit((unsigned char)p[1]))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p > s ? p : NULL;
}

static const char *js_members(const char *p, char close, bool keys)
{
	p = js_ws(p);
	if (*p == close)
		return p + 1;
	for (;;) {
		p = js_ws(p);
		if (keys) {
			p = js_string(p);
			if (!p)
				return NULL;
			p = js_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = js_value(js_ws(p));
		if (!p)
			return NULL;
		p = js_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *js_value(const char *p)
{
	if (*p == '{')
		return js_members(p + 1, '}', true);
	if (*p == '[')
		return js_members(p + 1, ']', false);
	if (*p == '"')
		return js_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return js_number(p);
}

static bool js_valid(const char *s)
{
	const char *end = js_value(js_ws(s));

	return end && *js_ws(end) == '\0';
}

static void test_json(void)
{
	struct jbd_run_sample r;
	struct ujbd_stats s;
	char buf[4096];
	int n;

	T_CHECK(js_valid("{\"a\":[1,2,{\"b\":null}],\"c\":-0.5}"));
	T_CHECK(!js_valid("{\"a\":1,}"));
	T_CHECK(!js_valid("{\"a\":01}"));

	jbd_stats_init(&st, 2730);
	jbd_stats_snapshot(&st, &s);
	n = ujbd_stats_json(&s, buf, sizeof(buf));
	T_EQ(n, (int)strlen(buf));
	T_CHECK(js_valid(buf));

	sample(&r, 9);
	r.requested = true;
	r.logging_ns = 5460 * RT_NS_PER_US;
	r.commit_time_ns = 1773 * RT_NS_PER_US;
	r.handle_count = 3;
	jbd_stats_commit(&st, &r);
	jbd_stats_fsync(&st, 2 * RT_NS_PER_MS);
	jbd_stats_wakeup(&st, false);
	jbd_stats_wakeup(&st, true);
	jbd_stats_lat(&st, UJBD_LAT_WAIT_FROZEN, 40);
	jbd_stats_lat(&st, UJBD_LAT_WAIT_FROZEN, 20);
	jbd_stats_checkpoint(&st, 7, 2);
	jbd_stats_log_space_wait(&st, 900);
	jbd_stats_snapshot(&st, &s);
	n = ujbd_stats_json(&s, buf, sizeof(buf));
	T_EQ(n, (int)strlen(buf));
	T_CHECK(js_valid(buf));
	T_CHECK(strstr(buf, "\"transactions\":1,\"requested\":1,"
			    "\"max_transaction_blocks\":2730"));
	T_CHECK(strstr(buf, "\"logging_ms\":5,"));
	T_CHECK(strstr(buf, "\"commit_time_us\":1773,\"handles\":3,"));
	T_CHECK(strstr(buf, "\"logging\":5460000,"));
	T_CHECK(strstr(buf, "\"fsync_latency\":{\"count\":1,\"avg_ns\":2000000,"
			    "\"p50_ns\":2000000,\"p99_ns\":2000000,"
			    "\"max_ns\":2000000}"));
	T_CHECK(strstr(buf, "\"wakeups\":2,\"useless_wakeups\":1"));
	T_CHECK(strstr(buf, "\"wait_frozen\":{\"count\":2,\"avg_ns\":30,"
			    "\"max_ns\":40}"));
	T_CHECK(strstr(buf, "\"checkpoint\":{\"written\":7,\"dropped\":2}"));
	T_CHECK(strstr(buf, "\"log_space\":{\"waits\":1,\"stall_max_ns\":900}"));
	jbd_stats_release(&st);
}

/* ---- counters under threads ------------------------------------------ */

#define NTHREADS 4
#define PER_THREAD 2000

static void counter_thread(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	for (unsigned i = 0; i < PER_THREAD; i++) {
		jbd_stats_fsync(&st, 1000 + id);
		jbd_stats_wakeup(&st, i % 2 == 0);
		jbd_stats_lat(&st, (enum ujbd_lat_cause)(i % UJBD_LAT_NR),
			      i + 1);
		(void)jbd_stats_avg_commit_ns(&st);
	}
}

static void counters_main(void *arg)
{
	rt_thread *t[NTHREADS];
	struct jbd_run_sample r;

	(void)arg;
	for (unsigned i = 0; i < NTHREADS; i++)
		rt_thread_create(&t[i], "counter", counter_thread,
				 (void *)(uintptr_t)i);
	for (unsigned i = 0; i < 100; i++) {
		sample(&r, i);
		r.commit_time_ns = 5000;
		jbd_stats_commit(&st, &r);
	}
	for (unsigned i = 0; i < NTHREADS; i++)
		rt_thread_join(t[i]);
}

static void run_counters(enum rt_world_kind kind)
{
	struct rt_world_opts wo = { .kind = kind, .seed = 42 };
	struct ujbd_stats s;
	rt_world *w;

	T_EQ(rt_world_new(&wo, &w), 0);
	jbd_stats_init(&st, 10);
	T_EQ(rt_world_run(w, "main", counters_main, NULL), 0);
	jbd_stats_snapshot(&st, &s);
	T_EQ_U64(s.fsync_latency.count, NTHREADS * PER_THREAD);
	T_EQ_U64(s.fsync_latency.max_ns, 1000 + NTHREADS - 1);
	T_EQ_U64(s.wakeups, NTHREADS * PER_THREAD);
	T_EQ_U64(s.useless_wakeups, NTHREADS * PER_THREAD / 2);
	T_EQ_U64(s.ts_tid, 100);
	T_EQ_U64(s.average_commit_time_ns, 5000);
	for (unsigned c = 0; c < UJBD_LAT_NR; c++) {
		T_EQ_U64(s.lat[c].count, NTHREADS * PER_THREAD / UJBD_LAT_NR);
		T_EQ_U64(s.lat[c].max_ns, PER_THREAD - UJBD_LAT_NR + 1 + c);
	}
	jbd_stats_release(&st);
	rt_world_free(w);
}

static void test_counters_real(void)
{
	run_counters(RT_WORLD_REAL);
}

static void test_counters_sim(void)
{
	run_counters(RT_WORLD_SIM);
}

/* ---- trace events -------------------------------------------------------- */

static struct ujbd_trace_event seen[32];
static unsigned nseen;

static void hook(void *arg, const struct ujbd_trace_event *ev)
{
	(*(unsigned *)arg)++;
	if (nseen < 32)
		seen[nseen++] = *ev;
}

static void fire_all(struct jbd_tracer *tr)
{
	struct jbd_run_sample r;

	JBD_TRACE(tr, jbd2_start_commit, 7, 1, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_commit_locking, 7, 1, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_commit_flushing, 7, 1, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_commit_logging, 7, 1, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_end_commit, 7, 1, 5, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_drop_transaction, 7, 1, 0, 0, 0, 0, 0);
	sample(&r, 7);
	r.wait_ns = 1;
	r.request_delay_ns = 2;
	r.running_ns = 3;
	r.locked_ns = 4;
	r.flushing_ns = 5;
	r.logging_ns = 6;
	r.handle_count = 7;
	r.blocks = 8;
	r.blocks_logged = 9;
	JBD_TRACE_RUN_STATS(tr, &r);
	JBD_TRACE(tr, jbd2_checkpoint, 5, (int64_t)-1, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_checkpoint_stats, 5, 100, 0, 3, 2, 0, 0);
	JBD_TRACE(tr, jbd2_update_log_tail, 6, 6, 1234, 17, 0, 0, 0);
	JBD_TRACE(tr, jbd2_write_superblock, 6, 0x30, 0, 0, 0, 0, 0);
	JBD_TRACE(tr, jbd2_handle_start, 8, 0, __LINE__, 4, 0, 0, 0);
	JBD_TRACE(tr, jbd2_handle_extend, 8, 0, __LINE__, 4, 2, 0, 0);
	JBD_TRACE(tr, jbd2_handle_stats, 8, 0, __LINE__, 999, 1, 6, 3);
	JBD_TRACE(tr, jbd2_lock_buffer_stall, 8, 150 * RT_NS_PER_MS, 0, 0, 0,
		  0, 0);
}

static void test_trace_hook(void)
{
	struct jbd_tracer tr;
	unsigned calls = 0;
	uint64_t t0 = rt_now_ns();

	jbd_tracer_init(&tr);
	nseen = 0;
	fire_all(&tr); /* no hook: nothing delivered */
	T_EQ(nseen, 0);
	jbd_tracer_set(&tr, hook, &calls, false);
	fire_all(&tr);
	T_EQ(calls, UJBD_TR_NR);
	T_EQ(nseen, UJBD_TR_NR);
	for (unsigned i = 0; i < UJBD_TR_NR; i++) {
		T_EQ(seen[i].kind, i);
		T_STREQ(seen[i].name, jbd_trace_name((enum ujbd_trace_kind)i));
		T_CHECK(!strncmp(seen[i].name, "jbd2_", 5));
		T_CHECK(seen[i].time_ns >= t0);
	}
	T_STREQ(seen[UJBD_TR_START_COMMIT].name, "jbd2_start_commit");
	T_STREQ(seen[UJBD_TR_LOCK_BUFFER_STALL].name, "jbd2_lock_buffer_stall");
	T_EQ(seen[UJBD_TR_START_COMMIT].tid, 7);
	T_EQ_U64(seen[UJBD_TR_START_COMMIT].a[0], 1);
	T_EQ_U64(seen[UJBD_TR_END_COMMIT].a[1], 5);
	T_EQ_U64(seen[UJBD_TR_CHECKPOINT].a[0], (uint64_t)-1);
	T_EQ_U64(seen[UJBD_TR_UPDATE_LOG_TAIL].a[1], 1234);
	T_EQ_U64(seen[UJBD_TR_HANDLE_STATS].a[5], 3);
	T_EQ_U64(seen[UJBD_TR_HANDLE_STATS].a[6], 0);
	for (unsigned i = 0; i < 9; i++)
		T_EQ_U64(seen[UJBD_TR_RUN_STATS].a[i], i + 1);
	T_EQ(jbd_trace_name(UJBD_TR_NR) == NULL, 1);
	/* someone listens: the hook, or a USDT consumer's semaphore */
	T_CHECK(JBD_TRACE_ON(&tr, jbd2_handle_stats));
	jbd_tracer_set(&tr, NULL, NULL, false);
	T_CHECK(!JBD_TRACE_ON(&tr, jbd2_handle_stats));
	ujbd_jbd2_handle_stats_semaphore++; /* what perf does on attach */
	T_CHECK(JBD_TRACE_ON(&tr, jbd2_handle_stats));
	T_CHECK(!JBD_TRACE_ON(&tr, jbd2_handle_start));
	ujbd_jbd2_handle_stats_semaphore--;
	T_CHECK(!JBD_TRACE_ON(&tr, jbd2_handle_stats));
	jbd_tracer_set(&tr, NULL, NULL, false);
	fire_all(&tr);
	T_EQ(calls, UJBD_TR_NR);
	/* a commit-only hook (jbd_set_commit_hook's): all but the three handle events */
	jbd_tracer_set(&tr, hook, &calls, true);
	fire_all(&tr);
	T_EQ(calls, 2 * UJBD_TR_NR - 3);
	jbd_tracer_set(&tr, NULL, NULL, false);
}

/* ---- end to end: the runtime's events and its statistics agree --------- */

#define EV_MAX 256
static struct {
	rt_mutex lock;
	unsigned n;
	struct ujbd_trace_event ev[EV_MAX];
} rec;

static void rec_hook(void *arg, const struct ujbd_trace_event *ev)
{
	(void)arg;
	rt_mutex_lock(&rec.lock);
	if (rec.n < EV_MAX)
		rec.ev[rec.n++] = *ev;
	rt_mutex_unlock(&rec.lock);
}

static int commits_in_log(struct ujbd_stats *s, uint64_t *handles, uint64_t *blocks)
{
	static const enum ujbd_trace_kind order[] = {
		UJBD_TR_START_COMMIT, UJBD_TR_COMMIT_LOCKING,
		UJBD_TR_COMMIT_FLUSHING, UJBD_TR_COMMIT_LOGGING,
		UJBD_TR_RUN_STATS, UJBD_TR_END_COMMIT };
	int commits = 0;

	(void)s;
	*handles = *blocks = 0;
	for (unsigned i = 0; i < rec.n; i++) {
		unsigned k = 0, p = i;
		if (rec.ev[i].kind != UJBD_TR_START_COMMIT)
			continue;
		/* the phases of this tid follow, in order (other events may
		 * interleave) */
		for (; p < rec.n && k < 6; p++)
			if (rec.ev[p].tid == rec.ev[i].tid && rec.ev[p].kind == order[k]) {
				if (order[k] == UJBD_TR_RUN_STATS) {
					*handles += rec.ev[p].a[6];
					*blocks += rec.ev[p].a[7];
				}
				k++;
			}
		if (k != 6)
			return -1;
		commits++;
	}
	return commits;
}

/* The test body, on the stack's first thread: the journal is open on two
 * RAM disks (journal 1024 blocks on disk 1, data 64 blocks on disk 0). */
static void runtime_events_body(struct stack *stk)
{
	struct ujbd_stats s;
	struct ujbd *j = stack_journal(stk);
	uint64_t handles, blocks;
	char text[1024], want[128];
	unsigned starts = 0, stops = 0;

	T_CHECK(j);
	rt_mutex_init(&rec.lock, "rec_lock");
	rec.n = 0;
	ujbd_set_trace_hook(j, rec_hook, NULL);
	for (uint64_t i = 0; i < 5; i++) {
		struct ujbd_handle *h;
		struct ujbd_buf *b;

		T_EQ(ujbd_start(j, 2, &h), 0);
		T_EQ(ujbd_get_write_access(h, 10 + i, &b), 0);
		memset(ujbd_buf_data(b), (int)i + 1, 4096);
		T_EQ(ujbd_dirty_metadata(h, b), 0);
		ujbd_buf_put(b);
		T_EQ(ujbd_stop(h), 0);
		T_EQ(ujbd_sync(j), 0);
	}
	T_EQ(ujbd_stats(j, &s), 0);
	ujbd_set_trace_hook(j, NULL, NULL);
	rt_mutex_lock(&rec.lock);
	for (unsigned i = 0; i < rec.n; i++) {
		starts += rec.ev[i].kind == UJBD_TR_HANDLE_START;
		stops += rec.ev[i].kind == UJBD_TR_HANDLE_STATS;
	}
	T_EQ(starts, 5);
	T_EQ(stops, 5);
	/* every commit fired its phases in order, and the info file counts
	 * exactly those commits and sums what run_stats carried */
	T_EQ(commits_in_log(&s, &handles, &blocks), (int)s.ts_tid);
	rt_mutex_unlock(&rec.lock);
	T_EQ_U64(s.ts_tid, 5);
	T_EQ_U64(s.ts_requested, 5);
	T_EQ_U64(handles, s.rs_handle_count);
	T_EQ_U64(blocks, s.rs_blocks);
	T_EQ_U64(s.rs_handle_count, 5);
	T_EQ_U64(s.rs_blocks, 5);
	T_CHECK(s.rs_blocks_logged >= 5 + 5 * 2); /* + descriptor + commit */
	T_EQ_U64(s.commit_time.count, 5);
	T_CHECK(s.fsync_latency.count >= 5);
	T_CHECK(s.average_commit_time_ns > 0);
	ujbd_stats_format(&s, text, sizeof(text));
	snprintf(want, sizeof(want), "5 transactions (5 requested), each up to %u blocks\naverage: \n",
		 s.max_transaction_blocks);
	T_CHECK(!strncmp(text, want, strlen(want)));
	T_CHECK(strstr(text, "  1 handles per transaction\n  1 blocks per transaction\n"));
	/* the lab's commit-only hook: every commit's phases, no handle event */
	rt_mutex_lock(&rec.lock);
	rec.n = 0;
	rt_mutex_unlock(&rec.lock);
	jbd_set_commit_hook(j, rec_hook, NULL);
	for (uint64_t i = 0; i < 2; i++) {
		struct ujbd_handle *h;
		struct ujbd_buf *b;

		T_EQ(ujbd_start(j, 2, &h), 0);
		T_EQ(ujbd_get_write_access(h, 20 + i, &b), 0);
		T_EQ(ujbd_dirty_metadata(h, b), 0);
		ujbd_buf_put(b);
		T_EQ(ujbd_stop(h), 0);
		T_EQ(ujbd_sync(j), 0);
	}
	ujbd_set_trace_hook(j, NULL, NULL);
	rt_mutex_lock(&rec.lock);
	starts = 0;
	for (unsigned i = 0; i < rec.n; i++)
		starts += rec.ev[i].kind == UJBD_TR_HANDLE_START ||
			  rec.ev[i].kind == UJBD_TR_HANDLE_STATS;
	T_EQ(starts, 0);
	T_EQ(commits_in_log(&s, &handles, &blocks), 2);
	T_EQ_U64(handles, 2);
	rt_mutex_unlock(&rec.lock);
	T_EQ(stack_journal_close(stk, false), 0);
	rt_mutex_release(&rec.lock);
}

static int runtime_events_main(struct stack *stk, void *arg)
{
	runtime_events_body(stk);
	return 0;
}

static void test_runtime_events(void)
{
	struct stack_spec sp;
	struct stack *stk;

	stack_spec_default(&sp);
	sp.world = RT_WORLD_REAL;
	sp.ndisks = 2;
	sp.disks[0] = (struct stack_disk_spec){ "mem", "block_size=4096", 64 * 4096 };
	sp.disks[1] = (struct stack_disk_spec){ "mem", "block_size=4096", 1024 * 4096 };
	sp.journal = true;
	sp.journal_disk = 1;
	T_EQ(stack_new(&sp, &stk, NULL, 0), 0);
	T_EQ(stack_run(stk, "main", runtime_events_main, NULL), 0);
	stack_free(stk);
}


int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_format_before_commit);
	T_RUN(test_format_spec_example);
	T_RUN(test_format_division);
	T_RUN(test_format_short_buffer);
	T_RUN(test_ewma);
	T_RUN(test_hist_buckets);
	T_RUN(test_hist_percentiles);
	T_RUN(test_json);
	T_RUN(test_counters_real);
	T_RUN(test_counters_sim);
	T_RUN(test_trace_hook);
	T_RUN(test_runtime_events);
	return t_done(argv[0]);
}

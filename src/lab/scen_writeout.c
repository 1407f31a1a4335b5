/*
 * Scenario `writeout` (Jan Kara, "jbd: Refine commit writeout logic",
 * 2009): after the 2.6.29 latency fixes every journal write went to the
 * disk as WRITE_SYNC; the patch sends them SYNC only when someone waits on
 * the commit (an fsync, a sync handle) and as plain WRITE otherwise. His
 * test: a 1 MB read after a sleep, beside a streaming writer, took 619 ms
 * on average and 2.13 s at worst with every journal write SYNC, 82 ms and
 * 0.70 s with the patch; an fs_mark fsync rate beside a streaming reader
 * stayed where it was (about 6 fsyncs/s).
 *
 * Two phases on one file system, each its own load for a fixed virtual
 * time:
 *   1. "dd" writes one file sequentially in 1 MB buffered writes; "reader"
 *      sleeps, then reads a cold 1 MB file whole, again and again.
 *   2. "dd-read" reads a large cold file sequentially in 1 MB O_DIRECT reads
 *      (so the reader keeps the disk busy whether or not the file fits the
 *      model's page cache); "fs_mark" creates a file, writes 64 KiB in
 *      16 KiB writes, fsyncs and closes it, again and again.
 * Variants: the journal's write class (ujbd_opts.journal_sync): `sync-all`
 * (UJBD_SYNC_ALL, 2.6.29 with the latency fixes) and `sync-waited`
 * (UJBD_SYNC_FSYNC_ONLY, the patch; ujbd's default).
 *
 * The one idea: both variants run the same loads on the same era; only the
 * flag on the commit's writes changes, and the report takes the read's
 * latency and the fsync rate from what the loads measured.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab/scen.h"

#define WO_MB (1024u * 1024u)
#define WO_READ_BYTES WO_MB          /* the test's 1 MB read */
#define WO_WRITE_CHUNK WO_MB          /* dd bs=1M */
#define WO_FSM_FILE (64u * 1024u)     /* fs_mark -s 65536, as `smallfile` */
#define WO_FSM_WRITE (16u * 1024u)    /* fs_mark's default write size */

struct wo_opts {
	unsigned read_files;        /* cold 1 MB files, read one per period */
	uint64_t sleep_ns;          /* the reader's sleep between reads */
	uint64_t phase_ns;          /* each phase's length */
	uint64_t stream_bytes;      /* phase 2's file, read in a loop */
};

/* ---- phase 1: a streaming writer and a reader that sleeps ---------------- */

struct wo_writer {
	struct fs *fs;
	uint64_t until_ns;
	uint64_t bytes, ns;
	int rc;
};

static void wo_writer_thread(void *arg)
{
	struct wo_writer *w = arg;
	uint64_t t0 = rt_now_ns();
	fs_ino_t ino;

	w->rc = fs_create(w->fs, "/stream-w", &ino);
	while (!w->rc && rt_now_ns() < w->until_ns) {
		w->rc = fs_write(w->fs, ino, w->bytes, WO_WRITE_CHUNK, 0);
		if (!w->rc)
			w->bytes += WO_WRITE_CHUNK;
	}
	w->ns = rt_now_ns() - t0;
}

struct wo_reader {
	struct fs *fs;
	unsigned files;
	uint64_t sleep_ns, until_ns;
	struct lab_timeline *tl;
	struct rt_hist lat;
	int pid;                      /* its thread's, for the queue's per-process stats */
	int rc;
};

/* The timeline's kinds of operation. */
enum { WO_TL_READ, WO_TL_FSYNC };

static void wo_reader_thread(void *arg)
{
	struct wo_reader *rd = arg;
	char path[64];

	rd->pid = rt_self_pid();
	for (unsigned i = 0; !rd->rc; i = (i + 1) % rd->files) {
		fs_ino_t ino;
		uint64_t t0;
		int64_t n;

		rt_sleep_ns(rd->sleep_ns);
		if (rt_now_ns() >= rd->until_ns)
			break;
		snprintf(path, sizeof(path), "/r/f%03u", i);
		t0 = rt_now_ns();
		rd->rc = fs_lookup(rd->fs, path, &ino);
		n = rd->rc ? 0 : fs_read(rd->fs, ino, 0, WO_READ_BYTES, 0);
		if (n < 0)
			rd->rc = (int)n;
		else if (!rd->rc) {
			rt_hist_add(&rd->lat, rt_now_ns() - t0);
			lab_tl_op(rd->tl, WO_TL_READ, t0);
		}
	}
}

/* ---- phase 2: a streaming reader and fs_mark ---------------------------- */

struct wo_sreader {
	struct fs *fs;
	uint64_t file_bytes, until_ns;
	uint64_t bytes, ns;
	int rc;
};

static void wo_sreader_thread(void *arg)
{
	struct wo_sreader *s = arg;
	uint64_t t0 = rt_now_ns(), off = 0;
	fs_ino_t ino;

	s->rc = fs_lookup(s->fs, "/stream-r", &ino);
	while (!s->rc && rt_now_ns() < s->until_ns) {
		int64_t n = fs_read(s->fs, ino, off, WO_MB, FS_IO_DIRECT);

		if (n < 0) {
			s->rc = (int)n;
			break;
		}
		s->bytes += (uint64_t)n;
		off = off + WO_MB >= s->file_bytes ? 0 : off + WO_MB;
	}
	s->ns = rt_now_ns() - t0;
}

struct wo_fsmark {
	struct fs *fs;
	uint64_t until_ns;
	uint64_t files, ns;
	struct lab_timeline *tl;
	struct rt_hist lat;   /* per fsync */
	int rc;
};

static void wo_fsmark_thread(void *arg)
{
	struct wo_fsmark *m = arg;
	uint64_t t0 = rt_now_ns();
	char path[64];

	while (!m->rc && rt_now_ns() < m->until_ns) {
		fs_ino_t ino;
		uint64_t f0;

		snprintf(path, sizeof(path), "/fsm/f%06llu", (unsigned long long)m->files);
		m->rc = fs_create(m->fs, path, &ino);
		for (unsigned off = 0; !m->rc && off < WO_FSM_FILE; off += WO_FSM_WRITE)
			m->rc = fs_write(m->fs, ino, off, WO_FSM_WRITE, 0);
		f0 = rt_now_ns();
		m->rc = m->rc ? m->rc : fs_fsync(m->fs, ino);
		if (!m->rc) {
			rt_hist_add(&m->lat, rt_now_ns() - f0);
			lab_tl_op(m->tl, WO_TL_FSYNC, f0);
			m->files++;
		}
	}
	m->ns = rt_now_ns() - t0;
}

/* ---- the run ------------------------------------------------------------- */

/* Phase 1's queue, watched live: what the commit thread queued, by class. */
struct wo_watch {
	atomic_bool on;
	uint64_t j_sync_sectors, j_async_sectors;
};

static void wo_watch_fn(void *arg, const struct blk_trace_event *ev)
{
	struct wo_watch *w = arg;

	if (!atomic_load(&w->on) || ev->action != 'Q' || strcmp(ev->comm, "kjournald"))
		return;
	if (strchr(ev->rwbs, 'S'))
		w->j_sync_sectors += ev->nr_sectors;
	else
		w->j_async_sectors += ev->nr_sectors;
}

struct wo_run {
	const struct wo_opts *o;
	struct lab_result *out;
	struct wo_watch *w;
};

/* Two threads, joined; the first error. */
static int wo_pair(const char *n1, void (*f1)(void *), void *a1, const char *n2,
		   void (*f2)(void *), void *a2)
{
	rt_thread *t1 = NULL, *t2 = NULL;
	int rc = rt_thread_create(&t1, n1, f1, a1);

	if (!rc)
		rc = rt_thread_create(&t2, n2, f2, a2);
	if (t1)
		rt_thread_join(t1);
	if (t2)
		rt_thread_join(t2);
	return rc;
}

static int wo_setup(struct lab_rig *r, const struct wo_opts *o)
{
	char path[64];
	fs_ino_t ino;
	int rc = fs_mkdir(r->r_fs, "/r");

	rc = rc ? rc : fs_mkdir(r->r_fs, "/fsm");
	for (unsigned i = 0; !rc && i < o->read_files; i++) {
		snprintf(path, sizeof(path), "/r/f%03u", i);
		rc = fs_create(r->r_fs, path, &ino);
		rc = rc ? rc : fs_write(r->r_fs, ino, 0, WO_READ_BYTES, 0);
	}
	rc = rc ? rc : fs_create(r->r_fs, "/stream-r", &ino);
	for (uint64_t off = 0; !rc && off < o->stream_bytes; off += WO_MB)
		rc = fs_write(r->r_fs, ino, off, WO_MB, 0);
	/* every file cold, the setup's metadata home */
	return rc ? rc : lab_rig_remount(r);
}

/*
 * Where the 1 MB reads' requests spent their time (blktrace's I2D and D2C
 * over the reader's own bios): queued in the elevator, or at the disk. What
 * decides the read's latency is the first: whose requests CFQ served
 * before them.
 */
static int wo_reader_queue(struct lab_rig *r, const struct wo_reader *rd, struct lab_result *out)
{
	struct blk_stat st[BLK_STAT_MAX_PROCS + 1];
	size_t n = blk_stats_procs(r->r_q, st, BLK_STAT_MAX_PROCS + 1);
	double q = 0, d = 0, reads = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (st[i].pid != rd->pid)
			continue;
		q = (double)st[i].i2d_ns_sum / 1e6;
		d = (double)st[i].d2c_ns_sum / 1e6;
		reads = (double)st[i].reads;
	}
	rc = lab_result_metric(out, "read_bios", reads);
	rc = rc ? rc : lab_result_metric(out, "read_queued_ms_total", q);
	return rc ? rc : lab_result_metric(out, "read_at_disk_ms_total", d);
}

static int wo_fn(struct lab_rig *r, void *arg)
{
	struct wo_run *a = arg;
	const struct wo_opts *o = a->o;
	struct wo_writer w = { .fs = NULL };
	struct wo_reader rd = { .fs = NULL };
	struct wo_sreader sr = { .fs = NULL };
	struct wo_fsmark fm = { .fs = NULL };
	struct ujbd_stats base;
	int rc = wo_setup(r, o);

	rt_hist_init(&rd.lat);
	rt_hist_init(&fm.lat);
	rc = rc ? rc : ujbd_stats(r->r_j, &base);
	if (!rc) {
		uint64_t end = rt_now_ns() + o->phase_ns;

		w = (struct wo_writer){ .fs = r->r_fs, .until_ns = end };
		rd.fs = r->r_fs;
		rd.files = o->read_files;
		rd.sleep_ns = o->sleep_ns;
		rd.until_ns = end;
		rd.tl = r->r_tl;
		lab_tl_kind(r->r_tl, WO_TL_READ, "1MB-read");
		lab_tl_kind(r->r_tl, WO_TL_FSYNC, "fs_mark-fsync");
		lab_tl_start(r->r_tl);
		atomic_store(&a->w->on, true);
		rc = wo_pair("dd", wo_writer_thread, &w, "reader", wo_reader_thread, &rd);
		atomic_store(&a->w->on, false);
		rc = rc ? rc : w.rc ? w.rc : rd.rc;
	}
	/* phase 2 starts from a quiet disk: phase 1's dirty data home */
	rc = rc ? rc : lab_rig_settle(r);
	if (!rc) {
		uint64_t end = rt_now_ns() + o->phase_ns;

		sr = (struct wo_sreader){ .fs = r->r_fs, .file_bytes = o->stream_bytes,
					  .until_ns = end };
		fm.fs = r->r_fs;
		fm.until_ns = end;
		fm.tl = r->r_tl;
		rc = wo_pair("dd-read", wo_sreader_thread, &sr, "fs_mark", wo_fsmark_thread, &fm);
		rc = rc ? rc : sr.rc ? sr.rc : fm.rc;
	}
	lab_tl_stop(r->r_tl);
	if (rc)
		return rc;
	rc = lab_result_metric(a->out, "read_latency_ms_avg", (double)rt_hist_mean(&rd.lat) / 1e6);
	rc = rc ? rc : lab_result_metric(a->out, "read_latency_ms_max", (double)rd.lat.h_max_ns / 1e6);
	rc = rc ? rc : lab_result_metric(a->out, "reads", (double)rd.lat.h_count);
	rc = rc ? rc : lab_result_metric(a->out, "writer_mb_s",
					 w.ns ? (double)w.bytes / 1e6 / ((double)w.ns / 1e9) : 0);
	rc = rc ? rc : lab_result_metric(a->out, "journal_sync_mb_phase1",
					 (double)a->w->j_sync_sectors * 512 / 1e6);
	rc = rc ? rc : lab_result_metric(a->out, "journal_async_mb_phase1",
					 (double)a->w->j_async_sectors * 512 / 1e6);
	rc = rc ? rc : lab_result_metric(a->out, "fsyncs_s",
					 fm.ns ? (double)fm.files / ((double)fm.ns / 1e9) : 0);
	rc = rc ? rc : lab_result_metric(a->out, "fsync_ms_max", (double)fm.lat.h_max_ns / 1e6);
	rc = rc ? rc : lab_result_metric(a->out, "stream_read_mb_s",
					 sr.ns ? (double)sr.bytes / 1e6 / ((double)sr.ns / 1e9) : 0);
	rc = rc ? rc : wo_reader_queue(r, &rd, a->out);
	rc = rc ? rc : lab_report_journal(r->r_j, &base, a->out);
	if (!rc && rd.lat.h_count)
		rc = lab_result_hist(a->out, "read_latency_ms", &rd.lat);
	if (!rc && fm.lat.h_count)
		rc = lab_result_hist(a->out, "fsync_latency_ms", &fm.lat);
	return rc;
}

/*
 * The era (2.6.29 ext3 on jbd, with the latency fixes): kjournald at the
 * default be:4, no META tag, jbd's waits (a buffer being logged until the
 * commit's wait loop reaches it, the buffer lock, pdflush), cfq,
 * dirty 20/10, fsync's data WRITE_SYNC, no barriers, mke2fs 1.41's journal
 * in the middle group (as `fsync-loop`'s sync variants). The variant sets
 * only the journal's write class.
 */
static int wo_variant(const char *v, struct lab_rig_spec *rs)
{
	lab_era_2009(rs);
	rs->jopts.commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4);
	lab_era_jbd_waits(rs);        /* 2.6.29's jbd */
	lab_era_no_barrier(rs);
	if (strcmp(v, "sync-all") == 0)
		rs->jopts.journal_sync = UJBD_SYNC_ALL;
	else if (strcmp(v, "sync-waited") == 0)
		rs->jopts.journal_sync = UJBD_SYNC_FSYNC_ONLY;
	else
		return -EINVAL;
	return 0;
}

static const char *const wo_variants[] = { "sync-all", "sync-waited", NULL };

static const char *const wo_plot[] = {
	"read_latency_ms_avg 1 MB read beside dd, average (ms)",
	"read_latency_ms_max 1 MB read beside dd, worst (ms)",
	"fsyncs_s fs_mark beside a reader (fsyncs/s)",
	NULL,
};

static int wo_run(const struct lab_ctx *c, const char *variant, struct lab_result *out)
{
	bool quick = lab_ctx_quick(c);
	/* 20 cold files, one read a second: the test's "read after a sleep";
	 * 10 s a phase, two commit intervals; phase 2's file 512 MB */
	struct wo_opts o = { .read_files = quick ? 4 : 20, .sleep_ns = quick ? RT_NS_PER_S / 4 : RT_NS_PER_S,
			     .phase_ns = (quick ? 2 : 10) * RT_NS_PER_S,
			     .stream_bytes = (uint64_t)(quick ? 32 : 512) * WO_MB };
	struct wo_watch w = { 0 };
	struct wo_run a = { .o = &o, .out = out, .w = &w };
	struct lab_rig_spec rs;
	int rc;

	lab_rig_spec_init(&rs);
	rc = wo_variant(variant, &rs);
	if (rc)
		return rc;
	rs.trace_fn = wo_watch_fn;
	rs.trace_arg = &w;
	rs.timeline = out;
	lab_progress(c, "writeout %s: 1 MB reads beside dd, then fs_mark beside a reader, %.0f s each",
		     variant, (double)o.phase_ns / 1e9);
	return lab_rig_run(c, &rs, wo_fn, &a);
}

static void wo_summary(const struct lab_result *const *r, struct lab_summary *out)
{
	char lab[192], why[400];

	if (!r[0] || !r[1])
		return;
	double aa = lab_result_get(r[0], "read_latency_ms_avg"), aw = lab_result_get(r[1], "read_latency_ms_avg");
	double ma = lab_result_get(r[0], "read_latency_ms_max"), mw = lab_result_get(r[1], "read_latency_ms_max");
	double fa = lab_result_get(r[0], "fsyncs_s"), fw = lab_result_get(r[1], "fsyncs_s");
	double ra = lab_ratio(aa, aw), rm = lab_ratio(ma, mw), rf = lab_ratio(fw, fa);

	snprintf(lab, sizeof(lab), "avg %.0f ms (sync-all) vs %.0f ms (sync-waited)", aa, aw);
	snprintf(why, sizeof(why), "beside dd the commit thread queued %.0f MB SYNC, %.0f MB not "
		 "(sync-all) vs %.0f and %.0f (sync-waited); dd wrote %.0f vs %.0f MB/s; the reads' "
		 "requests spent %.0f ms queued and %.0f ms at the disk (sync-all) vs %.0f and %.0f",
		 lab_result_get(r[0], "journal_sync_mb_phase1"),
		 lab_result_get(r[0], "journal_async_mb_phase1"),
		 lab_result_get(r[1], "journal_sync_mb_phase1"),
		 lab_result_get(r[1], "journal_async_mb_phase1"),
		 lab_result_get(r[0], "writer_mb_s"), lab_result_get(r[1], "writer_mb_s"),
		 lab_result_get(r[0], "read_queued_ms_total"),
		 lab_result_get(r[0], "read_at_disk_ms_total"),
		 lab_result_get(r[1], "read_queued_ms_total"),
		 lab_result_get(r[1], "read_at_disk_ms_total"));
	lab_summary_row(out, "1 MB read avg, sync-all / sync-waited", "619 -> 82 ms (7.5x)", lab, ra,
			">= 2x", isfinite(ra) && ra >= 2, why);
	snprintf(lab, sizeof(lab), "max %.0f ms (sync-all) vs %.0f ms (sync-waited)", ma, mw);
	lab_summary_row(out, "1 MB read max, sync-all / sync-waited", "2.13 -> 0.70 s (3.0x)", lab, rm,
			">= 2x", isfinite(rm) && rm >= 2, why);
	snprintf(lab, sizeof(lab), "%.1f (sync-waited) vs %.1f fsyncs/s (sync-all)", fw, fa);
	snprintf(why, sizeof(why), "fs_mark waits on every commit: SYNC in both variants; "
		 "worst fsync %.0f vs %.0f ms", lab_result_get(r[1], "fsync_ms_max"),
		 lab_result_get(r[0], "fsync_ms_max"));
	lab_summary_row(out, "fsync rate, sync-waited / sync-all", "about 6 fsyncs/s, unchanged",
			lab, rf, "within 20 %", isfinite(rf) && fabs(rf - 1) <= 0.2, why);
}

const struct lab_scenario lab_scen_writeout = {
	.s_name = "writeout",
	.s_thread = &lab_thread_writeout,
	.s_help = "1 MB reads beside a streaming writer, fsyncs beside a streaming reader: "
		  "journal writes SYNC always or only when waited on",
	.s_variants = wo_variants,
	.s_real = "the same loads in real time (10 s a phase; --quick 2 s)",
	.s_run = wo_run,
	.s_summary = wo_summary,
	.s_plot = wo_plot,
	.s_plot_title = "writeout: journal writes SYNC always or only when waited on (the thread: "
			"reads 619 -> 82 ms on average, fsyncs/s unchanged)",
};

/*
 * I/O errors everywhere (issue 12, the sweep): every workload of the crash
 * suite (crash_configs.h) is run again with its Nth write failing (EIO),
 * its Nth write short (a seeded prefix of whole blocks reaches the disk),
 * its Nth flush failing and dropping the device's cache, and its Nth read
 * failing, for every N up to that run's count of that kind of I/O (a
 * probe run counts them; the run is the same up to the fault). Two-device
 * workloads take the fault on the journal device, then on the data device.
 *
 * Each run is checked for:
 *   - the journal aborted when a write or flush failed: someone was told
 *     (a handle, a wait or the close got an error);
 *   - s_errno on disk before anyone was told: at every error the workload
 *     meets, the journal's recorder must already hold a superblock write
 *     carrying s_errno that completed or failed (the try counts);
 *   - no acknowledgement after a failed write or flush of its blocks: at
 *     each acknowledgement, the image of what was durable then (flushed
 *     writes only; a failed flush leaves what it was to cover undefined:
 *     rec never counts it durable) must recover to a state at least as
 *     new (crash_common.h's oracle);
 *   - recovery afterwards: the durable image at the end, and the device
 *     as the run left it (sim SSDs also after a power cut), recover to a
 *     state at least as new as the last acknowledgement; the next
 *     ujbd_open refuses an aborted journal (-EUCLEAN) and opens one that
 *     was not (a failed read aborts nothing).
 *
 * The default runs every kind on every workload at spread values of N (the
 * first writes, flushes and reads, the last ones, and a stride between:
 * about 12 per kind); FAULT_SWEEP=full runs every N. FAULT_WORKLOAD=name
 * runs one workload. It prints the counts per workload.
 */
#include <stdarg.h>

#include "crash_common.h"
#include "crash_configs.h"

enum fs_kind { FS_WRITE, FS_SHORT, FS_FLUSH, FS_READ, FS_NKINDS };
static const char *const fs_kind_name[FS_NKINDS] = { "write EIO", "short write",
						      "flush EIO+cache lost", "read EIO" };

/* One workload of the crash suite. */
struct fw {
	struct cr_cfg cfg;
	unsigned program_us;
	bool twodev;
};

#define FW_ONE(fn, ...) { .cfg = { .name = #fn, __VA_ARGS__ } },
#define FW_TWO(fn, prog, ...) { .cfg = { .name = #fn, __VA_ARGS__ }, .program_us = (prog), \
				.twodev = true },
static struct fw works[] = {
	CR_WORKLOADS_ORDERED(FW_ONE)
	CR_WORKLOADS_JOURNAL(FW_ONE)
	CR_WORKLOADS_WRITEBACK(FW_ONE)
	CR_WORKLOADS_STRESS(FW_ONE)
	CR_WORKLOADS_TWODEV(FW_TWO)
};
#define NWORKS (sizeof(works) / sizeof(works[0]))

/* One run: a workload, the device (0: the journal's; 1: the data's) and
 * the fault (nth 0: none, the probe). */
struct fs_run {
	const struct fw *w;
	unsigned dev;
	enum fs_kind kind;
	uint64_t nth;
	/* outcome */
	struct dev_fault_counts fc[2];  /* journal (or the one device), data */
	unsigned errors;                /* errors the workload met */
	bool open_failed;
	uint64_t images, acks, torn_refused;
	int failures;
	char first[400];
};

/* What the checker keeps while a run goes. */
struct fs_ctx {
	struct cr c;
	struct fs_run *r;
	struct dev *inner[2];           /* under the faults */
	struct dev *fault[2];
	uint8_t *snap[2];               /* journal (or the device), data */
	uint64_t jsb_off;               /* the journal superblock's byte offset */
};

static void fs_fail(struct fs_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fs_fail(struct fs_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failures++)
		return;
	va_start(ap, fmt);
	vsnprintf(r->first, sizeof(r->first), fmt, ap);
	va_end(ap);
}

/* ---- s_errno before anyone is told ------------------------------------ */

/* Does the journal's recorder hold a superblock write with s_errno set
 * (completed, or failed: it was tried)? */
static bool fs_errno_written(struct fs_ctx *x)
{
	for (size_t i = dev_rec_count(x->c.rec); i-- > 0;) {
		struct dev_rec_entry e;
		const struct jbd2_sb *sb;

		if (dev_rec_entry(x->c.rec, i, &e) < 0 || e.kind != DEV_REC_WRITE ||
		    x->jsb_off < e.off || x->jsb_off + sizeof(*sb) > e.off + e.len)
			continue;
		sb = (const struct jbd2_sb *)((const uint8_t *)e.data + (x->jsb_off - e.off));
		if (jbd_get_be32(sb->s_errno) != 0)
			return true;
	}
	return false;
}

static void fs_on_error(struct cr *c, const char *what, int err)
{
	struct fs_ctx *x = c->on_error_arg;
	struct fs_run *r = x->r;

	rt_mutex_lock(&c->lock);
	r->errors++;
	/* a failed write or flush aborts; a failed read is only that read's */
	if (r->kind != FS_READ && !fs_errno_written(x))
		fs_fail(r, "%s returned %d (%s) before s_errno was written", what, err,
			ujbd_strerror(err));
	else if (r->kind == FS_READ && err != -EIO)
		fs_fail(r, "%s returned %d (%s) after a failed read", what, err,
			ujbd_strerror(err));
	rt_mutex_unlock(&c->lock);
}

/* ---- images --------------------------------------------------------------- */

/*
 * A home write that failed (or was short) leaves its blocks undefined on a
 * real disk: old, new or torn between. A block recovery leaves torn (not
 * a valid write of the model) is taken as what that write held, for the
 * model to judge: ordered and writeback data promise nothing more (the
 * journal aborted, its transaction never committed; a block freed and
 * reused as data takes any valid contents, even metadata the same
 * transaction journals in it), and a failed checkpoint write aborted the
 * journal before its tail moved, so recovery replays the log copy over it
 * (had it not, the block would hold what the model allows only if that
 * copy was the committed one).
 */
static void fs_torn_data(struct fs_ctx *x, uint8_t *out)
{
	const struct dev *rec = x->c.drec ? x->c.drec : x->c.rec;

	for (uint32_t b = 0; b < CR_NDATA; b++) {
		uint64_t g, off = (uint64_t)b * CR_BS;

		if (cr_decode(out + off, b, &g) == 0)
			continue;
		for (size_t i = dev_rec_count(rec); i-- > 0;) {
			struct dev_rec_entry e;
			const uint8_t *p;

			if (dev_rec_entry(rec, i, &e) < 0 || e.kind != DEV_REC_WRITE ||
			    e.result == (int64_t)e.len || off < e.off || off + CR_BS > e.off + e.len)
				continue;
			p = (const uint8_t *)e.data + (off - e.off);
			if (cr_decode(p, b, &g) == 0)
				memcpy(out + off, p, CR_BS);
			break; /* the last write of the block that failed */
		}
	}
}

/* Recover the journal of images j (and d: the data device of a two-device
 * run) and match the data area with the model, at least state bound. */
static void fs_check(struct fs_ctx *x, const uint8_t *jimg, const uint8_t *dimg,
		     uint32_t bound, const char *what)
{
	const struct cr_cfg *cfg = &x->r->w->cfg;
	bool two = x->r->w->twodev;
	size_t jbytes = (size_t)x->c.nblk * CR_BS, dbytes = (size_t)CR_NDATA * CR_BS;
	struct dev *jd = NULL, *dd = NULL;
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct jbd_journal jj;
	struct jbd_recover_result rr;
	struct jbd_err jerr = { 0 };
	static uint8_t out[CR_NDATA * CR_BS];
	char msg[320];
	int err = dev_mem_new(jbytes, 512, &jd);

	x->r->images++;
	if (!err)
		err = dev_pwrite(jd, jimg, (uint32_t)jbytes, 0, 0);
	if (!err && two && !(err = dev_mem_new(dbytes, 512, &dd)))
		err = dev_pwrite(dd, dimg, (uint32_t)dbytes, 0, 0);
	if (err)
		goto out;
	cr_loc(&loc, &ext, jd, cfg->jlen, x->c.nblk);
	if (two) {
		ext = (struct jbd_extent){ 0, 0, cfg->jlen };
		loc.j_data = dd;
		loc.j_data_blocks = CR_NDATA;
	}
	err = jbd_journal_load(&loc, &jj, &jerr);
	if (!err)
		err = jbd_recover(&jj, &(struct jbd_recover_opts){ 0 }, &rr, &jerr);
	/* a short write may tear the commit block itself: with v2/v3 checksums
	 * recovery refuses the journal as corrupt, as the kernel and e2fsck
	 * do, nothing written (the crash suite's "torn refused") */
	if (err == -EUCLEAN && x->r->kind == FS_SHORT && strstr(jerr.msg, "bad commit block checksum")) {
		x->r->torn_refused++;
		goto out;
	}
	/* a torn async-commit transaction is cut, the rest replayed: check it */
	if (!err || err == -EBADMSG)
		err = dev_pread(two ? dd : jd, out, (uint32_t)dbytes, 0);
	if (err) {
		fs_fail(x->r, "%s: recovery: %d %s", what, err, jerr.msg);
		goto out;
	}
	fs_torn_data(x, out);
	if (cr_match(&x->c, out, bound, msg, sizeof(msg)) < 0)
		fs_fail(x->r, "%s: %s", what, msg);
out:
	if (err == -ENOMEM)
		fs_fail(x->r, "%s: out of memory", what);
	if (jd)
		dev_close(jd);
	if (dd)
		dev_close(dd);
}

/* The durable image of recorder rec after its first n entries. */
static int fs_image(const struct dev *rec, size_t n, const uint8_t *snap, size_t bytes,
		    uint8_t *img)
{
	struct dev *m;
	int err = dev_mem_new(bytes, 512, &m);

	if (!err)
		err = dev_pwrite(m, snap, (uint32_t)bytes, 0, 0);
	if (!err)
		err = dev_rec_image(rec, n, NULL, m);
	if (!err)
		err = dev_pread(m, img, (uint32_t)bytes, 0);
	if (m)
		dev_close(m);
	return err;
}

/* At every acknowledgement: what was durable then holds it. */
static void fs_check_acks(struct fs_ctx *x, uint8_t *jimg, uint8_t *dimg)
{
	size_t jbytes = (size_t)x->c.nblk * CR_BS, dbytes = (size_t)CR_NDATA * CR_BS;
	uint32_t bound = 0;
	char what[64];

	for (size_t i = 0; i < x->c.nacks && !x->r->failures; i++) {
		const struct cr_ack *a = &x->c.acks[i];
		int err;

		bound = a->rtid > bound && a->rtid < 0x80000000u ? a->rtid : bound;
		if (i + 1 < x->c.nacks && a[1].count == a->count && a[1].dcount == a->dcount)
			continue; /* the same instant: its last ack says more */
		err = fs_image(x->c.rec, a->count, x->snap[0], jbytes, jimg);
		if (!err && x->c.drec)
			err = fs_image(x->c.drec, a->dcount, x->snap[1], dbytes, dimg);
		if (err) {
			fs_fail(x->r, "ack %zu: image: %d", i, err);
			return;
		}
		snprintf(what, sizeof(what), "acknowledgement %zu (tid %u)", i, a->rtid);
		fs_check(x, jimg, dimg, bound, what);
		x->r->acks++;
	}
}

/* The end: the durable image, and the devices as the run left them (and,
 * for sim disks, after a power cut). */
static void fs_check_end(struct fs_ctx *x, uint8_t *jimg, uint8_t *dimg)
{
	size_t bytes[2] = { (size_t)x->c.nblk * CR_BS, (size_t)CR_NDATA * CR_BS };
	uint8_t *img[2] = { jimg, dimg };
	struct dev *rec[2] = { x->c.rec, x->c.drec };
	uint32_t bound = x->c.acked_max ? x->c.acked_max : UINT32_MAX;
	unsigned n = x->c.drec ? 2 : 1;
	int err = 0;

	for (unsigned i = 0; i < n && !err; i++)
		err = fs_image(rec[i], dev_rec_count(rec[i]), x->snap[i], bytes[i], img[i]);
	if (!err)
		fs_check(x, jimg, dimg, bound, "the end, flushed writes");
	for (int cut = 0; cut < 2 && !err; cut++) {
		for (unsigned i = 0; i < n && !err; i++) {
			if (cut)
				(void)dev_sim_power_cut(x->inner[i]); /* RAM: nothing to lose */
			err = dev_pread(x->inner[i], img[i], (uint32_t)bytes[i], 0);
		}
		if (!err)
			fs_check(x, jimg, dimg, bound, cut ? "the end, power cut" : "the end, as left");
	}
	if (err)
		fs_fail(x->r, "the end: image: %d", err);
}

/* The next open: -EUCLEAN for an aborted journal, 0 for one that was not. */
static void fs_check_reopen(struct fs_ctx *x, const uint8_t *jimg, bool aborted)
{
	const struct cr_cfg *cfg = &x->r->w->cfg;
	size_t bytes = (size_t)x->c.nblk * CR_BS;
	struct dev *m, *dm = NULL;
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct ujbd_opts o;
	struct ujbd *j;
	struct jbd_err jerr = { 0 };
	int err = dev_mem_new(bytes, 512, &m);

	if (!err)
		err = dev_pwrite(m, jimg, (uint32_t)bytes, 0, 0);
	if (!err && x->c.drec)
		err = dev_mem_new((uint64_t)CR_NDATA * CR_BS, 512, &dm);
	if (err) {
		fs_fail(x->r, "reopen: %d", err);
		goto out;
	}
	cr_loc(&loc, &ext, m, cfg->jlen, x->c.nblk);
	if (dm) {
		ext = (struct jbd_extent){ 0, 0, cfg->jlen };
		loc.j_data = dm;
		loc.j_data_blocks = CR_NDATA;
	}
	cr_opts(cfg, &o);
	err = ujbd_open(&loc, &o, &j, &jerr);
	if (!err)
		ujbd_close_hard(j);
	if (aborted && err != -EUCLEAN)
		fs_fail(x->r, "the next open of an aborted journal: %d, not -EUCLEAN", err);
	if (!aborted && err)
		fs_fail(x->r, "the next open: %d %s", err, jerr.msg);
out:
	if (m)
		dev_close(m);
	if (dm)
		dev_close(dm);
}

/* ---- one run ----------------------------------------------------------- */

static struct dev_fault_opts fs_fault_opts(const struct fs_run *r, unsigned dev)
{
	struct dev_fault_opts o = { .seed = r->w->cfg.seed, .count_preflush = true,
				    .failed_flush_drops_cache = true };

	if (dev != r->dev || !r->nth)
		return o;
	switch (r->kind) {
	case FS_WRITE: o.fail_write_nth = r->nth; break;
	case FS_SHORT: o.short_write_nth = r->nth; break;
	case FS_FLUSH: o.fail_flush_nth = r->nth; break;
	default: o.fail_read_nth = r->nth; break;
	}
	return o;
}

/* Devices: inner disks prepared, then a fault device and a recorder over
 * each (the recorder above the fault sees failed requests as failed). */
static int fs_devices(struct fs_ctx *x)
{
	const struct fw *w = x->r->w;
	struct dev **top[2] = { &x->c.rec, &x->c.drec };
	int err;

	if (w->twodev) {
		err = cr_new_inner(&w->cfg, w->cfg.jlen, &x->inner[0]);
		if (!err)
			err = cr_new_data(&w->cfg, w->program_us, &x->inner[1]);
		if (!err)
			err = cr_prepare_two(&w->cfg, x->inner[0], x->inner[1], x->snap[0],
					     x->snap[1]);
	} else {
		err = cr_new_inner(&w->cfg, x->c.nblk, &x->inner[0]);
		x->c.rec = x->inner[0]; /* cr_prepare writes straight to the disk */
		if (!err)
			err = cr_prepare(&x->c);
		x->c.rec = NULL;
	}
	for (unsigned i = 0; i < 2 && !err && x->inner[i]; i++) {
		struct dev_fault_opts fo = fs_fault_opts(x->r, i);

		err = dev_fault_new(x->inner[i], &fo, &x->fault[i]);
		if (!err)
			err = dev_rec_new(x->fault[i], top[i]);
	}
	return err;
}

static void fs_close_devices(struct fs_ctx *x)
{
	struct dev *top[2] = { x->c.rec, x->c.drec };

	for (unsigned i = 0; i < 2; i++) {
		if (top[i])
			dev_close(top[i]);
		else if (x->fault[i])
			dev_close(x->fault[i]);
		else if (x->inner[i])
			dev_close(x->inner[i]);
	}
}

static bool fs_fired(const struct fs_run *r)
{
	const struct dev_fault_counts *c = &r->fc[r->dev];

	return c->write_errors + c->short_writes + c->flush_errors + c->read_errors > 0;
}

static void fs_checks(struct fs_ctx *x)
{
	struct fs_run *r = x->r;
	size_t jbytes = (size_t)x->c.nblk * CR_BS;
	uint8_t *jimg = malloc(jbytes), *dimg = malloc((size_t)CR_NDATA * CR_BS);
	bool aborted;

	if (!jimg || !dimg) {
		fs_fail(r, "out of memory");
		goto out;
	}
	if (r->nth && !fs_fired(r)) {
		fs_fail(r, "the fault never fired");
		goto out;
	}
	/* a failed write or flush aborts, and somebody hears of it */
	aborted = r->nth && r->kind != FS_READ && !r->open_failed;
	if (aborted && !r->errors)
		fs_fail(r, "a %s, yet no handle, wait or close was told", fs_kind_name[r->kind]);
	if (!aborted && r->errors && !(r->kind == FS_READ && r->nth))
		fs_fail(r, "errors without a failed write or flush");
	cr_index_events(&x->c);
	if (!x->c.bev || !x->c.bev_start || !x->c.bev_n) {
		fs_fail(r, "out of memory");
		goto out;
	}
	fs_check_acks(x, jimg, dimg);
	if (!r->failures)
		fs_check_end(x, jimg, dimg); /* leaves the power-cut image in jimg */
	if (!r->failures && !r->open_failed)
		fs_check_reopen(x, jimg, aborted);
out:
	free(jimg);
	free(dimg);
}

static void fs_main(void *arg)
{
	struct fs_run *r = arg;
	const struct cr_cfg *cfg = &r->w->cfg;
	struct cr_result res = { 0 };
	struct fs_ctx x = { .r = r };
	int err;

	x.c = (struct cr){ .cfg = cfg, .res = &res,
			   .nblk = r->w->twodev ? cfg->jlen : CR_JSTART + cfg->jlen,
			   .on_error = fs_on_error, .on_error_arg = &x };
	x.jsb_off = r->w->twodev ? 0 : (uint64_t)CR_JSTART * CR_BS;
	x.snap[0] = calloc(x.c.nblk, CR_BS);
	x.snap[1] = calloc(CR_NDATA, CR_BS);
	x.c.snap = x.snap[0];
	x.c.ev = calloc(CR_MAX_EVENTS, sizeof(*x.c.ev));
	if (!x.snap[0] || !x.snap[1] || !x.c.ev || rt_mutex_init(&x.c.lock, "crash-model") < 0) {
		fs_fail(r, "out of memory");
		goto out_free;
	}
	err = fs_devices(&x);
	if (!err) {
		err = cr_workload(&x.c);
		for (unsigned i = 0; i < 2; i++)
			if (x.fault[i])
				dev_fault_counts(x.fault[i], &r->fc[i]);
		/* a failed read (or write) may keep the journal from opening */
		r->open_failed = err < 0 && r->nth && fs_fired(r);
		if (r->open_failed)
			err = 0;
	}
	if (err < 0)
		fs_fail(r, "workload: %d %s", err, x.c.wl_msg);
	else
		fs_checks(&x);
	fs_close_devices(&x);
	rt_mutex_release(&x.c.lock);
out_free:
	free(x.snap[0]); free(x.snap[1]); free(x.c.ev);
	free(x.c.bev); free(x.c.bev_start); free(x.c.bev_n);
}

static int fs_run(struct fs_run *r)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = r->w->cfg.seed, .ncpus = 2 };
	rt_world *w;
	int err = rt_world_new(&wo, &w);

	if (err < 0)
		return err;
	err = rt_world_run(w, "crash-faults", fs_main, r);
	rt_world_free(w);
	return err;
}

/* ---- the sweep ---------------------------------------------------------- */

/* The count of this kind of I/O on dev in the probe run. */
static uint64_t fs_count(const struct dev_fault_counts *c, enum fs_kind k)
{
	return k == FS_FLUSH ? c->flushes : k == FS_READ ? c->reads : c->writes;
}

/* Whether to run N of count: all of them with full, else the first few,
 * the last few and a stride between (about 12). */
/* Under ThreadSanitizer (make tsan: 10x slower, and what it checks is the
 * threads, which every run exercises alike) a coarser spread: the first,
 * the last and two between, so the suite's 900 s per test holds. Under
 * AddressSanitizer (make asan: it took 776-900 s beside a loaded machine's
 * other tests) the first and last two and four between: every workload and
 * every kind of failure still runs, in about half the runs; make check runs
 * the whole spread. */
#ifdef __SANITIZE_THREAD__
#define FS_EDGE 1u
#define FS_STRIDES 2u
#elif defined(__SANITIZE_ADDRESS__)
#define FS_EDGE 2u
#define FS_STRIDES 4u
#else
#define FS_EDGE 3u
#define FS_STRIDES 8u
#endif

static bool fs_pick(uint64_t n, uint64_t count, bool full)
{
	uint64_t stride = count / FS_STRIDES + 1;

	return full || n <= FS_EDGE || n + FS_EDGE - 1 >= count || n % stride == 0;
}

/* FAULT_KIND=write|short|flush|read, FAULT_N=n, FAULT_DEV=journal|data:
 * only those runs (a reproducer). */
static bool fs_wanted(unsigned dev, int kind, uint64_t n)
{
	static const char *const names[FS_NKINDS] = { "write", "short", "flush", "read" };
	const char *k = getenv("FAULT_KIND"), *nn = getenv("FAULT_N"), *d = getenv("FAULT_DEV");

	return (!k || !strcmp(k, names[kind])) && (!nn || strtoull(nn, NULL, 0) == n) &&
	       (!d || !strcmp(d, dev ? "data" : "journal"));
}

struct fs_totals {
	uint64_t runs[FS_NKINDS], aborted, images, acks, torn;
	int failures;
};

static void fs_workload(const struct fw *w, bool full, struct fs_totals *t)
{
	struct fs_run probe = { .w = w };
	unsigned ndev = w->twodev ? 2 : 1;
	uint64_t runs[FS_NKINDS] = { 0 }, images = 0, acks = 0, aborted = 0, torn = 0;
	int failures = 0;

	if (fs_run(&probe) < 0 || probe.failures) {
		T_FAILF("%s: the probe run: %s", w->cfg.name, probe.first);
		t->failures++;
		return;
	}
	for (unsigned dev = 0; dev < ndev; dev++) {
		for (int k = 0; k < FS_NKINDS; k++) {
			uint64_t count = fs_count(&probe.fc[dev], (enum fs_kind)k);

			for (uint64_t n = 1; n <= count; n++) {
				struct fs_run r = { .w = w, .dev = dev, .kind = (enum fs_kind)k,
						    .nth = n };

				if (!fs_pick(n, count, full) || !fs_wanted(dev, k, n))
					continue;
				if (fs_run(&r) < 0)
					fs_fail(&r, "the sim world failed");
				runs[k]++;
				images += r.images;
				acks += r.acks;
				torn += r.torn_refused;
				aborted += r.errors > 0 && k != FS_READ;
				if (r.failures && failures++ < 3)
					T_FAILF("%s: %s %s #%" PRIu64 ": %s", w->cfg.name,
						dev ? "data" : "journal", fs_kind_name[k], n,
						r.first);
			}
		}
	}
	printf("%s: I/O %" PRIu64 " writes, %" PRIu64 " flushes, %" PRIu64 " reads",
	       w->cfg.name, probe.fc[0].writes, probe.fc[0].flushes, probe.fc[0].reads);
	if (w->twodev)
		printf(" (journal) + %" PRIu64 ", %" PRIu64 ", %" PRIu64 " (data)",
		       probe.fc[1].writes, probe.fc[1].flushes, probe.fc[1].reads);
	printf("; runs: %" PRIu64 " write EIO, %" PRIu64 " short, %" PRIu64 " flush, %" PRIu64
	       " read; %" PRIu64 " aborted; %" PRIu64 " acknowledgements and %" PRIu64
	       " images checked (%" PRIu64 " torn commit blocks refused); %d failing\n",
	       runs[FS_WRITE], runs[FS_SHORT], runs[FS_FLUSH], runs[FS_READ], aborted, acks,
	       images, torn, failures);
	fflush(stdout);
	for (int k = 0; k < FS_NKINDS; k++)
		t->runs[k] += runs[k];
	t->aborted += aborted;
	t->images += images;
	t->acks += acks;
	t->torn += torn;
	t->failures += failures;
}

static void test_io_errors_everywhere(void)
{
	const char *mode = getenv("FAULT_SWEEP"), *only = getenv("FAULT_WORKLOAD");
	bool full = mode && !strcmp(mode, "full");
	struct fs_totals t = { 0 };
	unsigned nw = 0;

	for (size_t i = 0; i < NWORKS; i++) {
		if (only && strcmp(only, works[i].cfg.name))
			continue;
		fs_workload(&works[i], full, &t);
		nw++;
	}
	printf("%u workloads, %s: %" PRIu64 " runs (%" PRIu64 " write EIO, %" PRIu64
	       " short writes, %" PRIu64 " flush EIO, %" PRIu64 " read EIO), %" PRIu64
	       " aborted, %" PRIu64 " acknowledgements and %" PRIu64 " images checked (%" PRIu64
	       " torn commit blocks refused), %d failing\n",
	       nw, full ? "every N" : "spread N (FAULT_SWEEP=full: every N)",
	       t.runs[0] + t.runs[1] + t.runs[2] + t.runs[3], t.runs[0], t.runs[1], t.runs[2],
	       t.runs[3], t.aborted, t.acks, t.images, t.torn, t.failures);
	T_CHECK(nw > 0);
	T_EQ(t.failures, 0);
	for (int k = 0; k < FS_NKINDS && !getenv("FAULT_KIND"); k++)
		T_CHECK(t.runs[k] > 0); /* every kind of failure ran */
}

/*
 * Kept reproducers: runs the sweep failed before a fix (seeded, so each is
 * the same run every time), run whatever the sweep's spread picks.
 */
static const struct fs_kept {
	const char *workload;
	unsigned dev;
	enum fs_kind kind;
	uint64_t nth;
	const char *was;
} kept[] = {
	/* a commit's flush of the data device succeeded after the
	 * checkpoint's had failed and dropped the cache: its commit block
	 * went out, its ordered data was lost */
	{ "twodev_ordered_nocsum", 1, FS_FLUSH, 12, "ordered data of a committed transaction lost" },
	/* the reverse: a commit's flush of the data device failed and
	 * dropped the checkpoint's home writes, the checkpoint's own flush
	 * then succeeded and the tail moved past their only copies, in the
	 * log (journaled ordered data, ujbd's defaults) */
	{ "twodev_ordered_defaults_2k", 1, FS_FLUSH, 8, "journaled block differs from the committed state" },
};

static void test_kept_reproducers(void)
{
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		const struct fw *w = NULL;
		struct fs_run r;

		for (size_t i = 0; i < NWORKS && !w; i++)
			if (!strcmp(works[i].cfg.name, kept[k].workload))
				w = &works[i];
		T_CHECK(w != NULL);
		if (!w)
			continue;
		r = (struct fs_run){ .w = w, .dev = kept[k].dev, .kind = kept[k].kind,
				     .nth = kept[k].nth };
		if (fs_run(&r) < 0)
			fs_fail(&r, "the sim world failed");
		if (r.failures)
			T_FAILF("%s: %s %s #%" PRIu64 " (was: %s): %s", w->cfg.name,
				r.dev ? "data" : "journal", fs_kind_name[r.kind], r.nth,
				kept[k].was, r.first);
		T_CHECK(r.failures == 0);
		T_CHECK(fs_fired(&r) && r.errors > 0); /* it still aborts */
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	for (size_t i = 0; i < NWORKS; i++) {
		works[i].cfg.fault_write_nth = 0; /* the sweep's faults only */
		cr_defaults(&works[i].cfg);
	}
	T_RUN(test_kept_reproducers);
	T_RUN(test_io_errors_everywhere);
	return t_done(argv[0]);
}

/*
 * Crash safety with the journal and the data on TWO devices, each behind
 * its own `rec` recorder (each with its own volatile cache): a flush of the
 * journal device says nothing about the data device, so this is where the
 * commit must flush the data device before its commit block (ordered data)
 * and the checkpoint before moving the tail.
 *
 * Both devices are simulated SSDs (their I/O takes virtual time, so a
 * crash can fall in the middle of a commit). In the ordered configurations
 * the data SSD programs its pages ten times slower (TW_SLOW_US), so that
 * its flush, though issued before the log writes, ends after the journal's
 * flush and commit block would: with two equal SSDs it always ended first,
 * and a commit block that did not wait for it was still always late enough.
 *
 * A crash is a moment of the run, seen as a joint point: both recorders'
 * entry counts read at one instant, with the newest transaction
 * acknowledged while the counts stayed so. A blktrace hook takes one at
 * every request completion of either queue (the C event: after the
 * recorder logged the request, before anyone waiting for it can act), so
 * every joint point the run stays at is checked, the short windows a
 * missing flush or wait opens included; one more at the end, after a
 * clean close acknowledged everything. (Samples at seeded instants, which
 * this test took before, could step over any window shorter than their
 * spacing, about 200 us of virtual time.)
 *
 * For each joint point, the durable image of each device (only flushed
 * writes, all pending writes, each device's all with the other's none, and
 * seeded mixes of both) is built in memory from the two logs (cross-checked
 * against dev_rec_image every TW_XCHECK_EVERY points) and the data device
 * after recovery must be the state after transactions 1..k for some k at
 * least the acknowledged one (crash_common.h has the model). Recovery reads
 * only the journal, so each distinct journal image is recovered once, with
 * a rec under the data device catching what recovery writes; that is laid
 * over each data image paired with it (and a full recovery of the real
 * pair is compared now and then).
 *
 * Two configurations also fail one journal write mid-run (dev_fault_new
 * between the journal's device and its recorder): the journal must abort
 * (someone is told -EROFS or -EIO), and since the failed write is never
 * durable, any acknowledgement given after it is caught by the images.
 *
 * Mutations this test is known to catch (each run by hand on src/jbd, each
 * failing deterministically for these seeds; none is caught by the
 * writeback or data=journal configurations, which have no ordered data):
 *   - commit.c data_last_batch: no flush of the data device after the
 *     ordered data (ordered_v3, ordered_nocsum, abort_ordered);
 *   - commit.c phase_commit_block: the data device's flush waited for only
 *     after the commit block instead of before it (same three; with two
 *     equal SSDs no commit ever opened the window, and it passed);
 *   - commit.c phase_commit_block: no journal flush beside the data
 *     device's, so the commit block goes out with FUA alone (same three);
 *   - checkpoint.c cp_write: no flush of the data device before the tail
 *     moves (all six).
 * By hand: CRASH_TEST=name runs that configuration only (the others say
 * SKIP); CRASH_SEED, CRASH_OPS, CRASH_THREADS and CRASH_FAULT apply as in
 * crash_common.h.
 */
#include "crash_common.h"
#include "crash_configs.h"

#define TW_MAX_SAMPLES 4096
#define TW_MIXES 6   /* seeded mixes per joint point, besides none/all */

struct tw_sample {
	size_t a, b;       /* journal and data recorder counts */
	uint32_t bound;    /* newest rtid acknowledged then (0: none) */
};

struct tw {
	struct cr c;
	struct tw_sample s[TW_MAX_SAMPLES];  /* [c.lock] */
	size_t ns;         /* [c.lock] */
	size_t dropped;    /* [c.lock] joint points beyond TW_MAX_SAMPLES */
	struct rt_prng prng;
	uint8_t *snap_j, *snap_d;
	struct dev *jinner;   /* the journal's device under fault and rec */
	struct dev *jfault;   /* NULL without fault_write_nth */
	struct dev_fault_counts fc;
	struct blk_queue_opts qo;  /* of both queues: tw_trace sees completions */
};

/* Note the joint point of this instant, if it is a new one. [c.lock] */
static void __tw_sample(struct tw *w)
{
	struct cr *c = &w->c;
	size_t a1 = dev_rec_count(c->rec), b = dev_rec_count(c->drec);
	size_t a2 = dev_rec_count(c->rec);

	/* a count read blocks nobody in the sim world, but should it ever
	 * let another thread run, the pair would be of no single instant */
	if (a1 != a2)
		return;
	if (w->ns && w->s[w->ns - 1].a == a1 && w->s[w->ns - 1].b == b) {
		/* the same point later: what was acknowledged since holds too */
		w->s[w->ns - 1].bound = c->acked_max;
		return;
	}
	if (w->ns == TW_MAX_SAMPLES) {
		w->dropped++;
		return;
	}
	w->s[w->ns++] = (struct tw_sample){ a1, b, c->acked_max };
}

/* A joint point at every request completion of either queue (the banner
 * says why). Lock order: the queue's lock (held by the caller), the model
 * lock, a recorder's lock; none of them is held while taking an earlier
 * one. */
static void tw_trace(void *arg, const struct blk_trace_event *ev)
{
	struct tw *w = arg;

	if (ev->action != 'C')
		return;
	rt_mutex_lock(&w->c.lock);
	__tw_sample(w);
	rt_mutex_unlock(&w->c.lock);
}

/* A formatted journal on the journal device, initial data on the data
 * recorder; both flushed, snapshotted, logs reset. */
static int tw_prepare(struct tw *w)
{
	int err = cr_prepare_two(w->c.cfg, w->jinner, w->c.drec, w->snap_j, w->snap_d);

	dev_rec_reset(w->c.rec);
	dev_rec_reset(w->c.drec);
	return err;
}

/* ---- checking: images built in memory from the two logs ------------------ */

/* One device's side of the check. */
struct tw_side {
	const struct dev *rec;
	struct cr_log lg;
	const uint8_t *snap;   /* the device when its log starts */
	size_t bytes;
	size_t *pend, npend;   /* pending writes at the current point */
	uint64_t *mask;        /* which of them the image applies */
	uint8_t *img;          /* in tw_ck.img */
};

/*
 * What recovering one journal image does to the data device: the sectors
 * it wrote (seen by a rec under the data device), or its error. Recovery
 * reads the journal only, so this depends on the journal image alone and
 * one recovery serves every data image paired with it; tw_point checks
 * that now and then against a recovery of the real pair.
 */
struct tw_replay {
	uint64_t key;          /* cr_hash of the journal image; 0: empty slot */
	int err;
	char msg[sizeof(((struct jbd_err *)0)->msg)];
	uint8_t bytes[CR_NDATA * CR_BS];
	uint8_t sect[CR_NDATA * CR_BS / CR_SECTOR];   /* 1: written */
};

#define TW_REPLAYS 64          /* direct-mapped cache of replays */
#define TW_SEEN_CAP 16384
#define TW_XCHECK_EVERY 8      /* points between cross-checks */

struct tw_ck {
	struct tw *w;
	struct tw_side j, d;
	uint8_t *img;          /* the journal image, then the data image: one hash */
	uint8_t *data, *data2; /* the data device after recovery */
	struct dev *jdev;      /* the journal image, for recovery */
	struct dev *drec;      /* a rec over the data image: what recovery writes */
	struct dev *ddev;      /* the data image of a full recovery */
	struct dev *xdev;      /* dev_rec_image's copy, for the cross-check */
	struct tw_replay *replays;
	uint64_t *seen;        /* hashes of image pairs checked with seen_bound */
	size_t seen_cap;
	uint32_t seen_bound;
	uint64_t recoveries, full;
};

static int tw_side_init(struct tw_side *sd, const struct dev *rec, const uint8_t *snap,
			size_t bytes, uint8_t *img)
{
	int err = cr_log_load(&sd->lg, rec);

	sd->rec = rec;
	sd->snap = snap;
	sd->bytes = bytes;
	sd->img = img;
	sd->pend = calloc(sd->lg.n + 1, sizeof(size_t));
	sd->mask = calloc(sd->lg.n / 64 + 2, sizeof(uint64_t));
	return err == 0 && (!sd->pend || !sd->mask) ? -ENOMEM : err;
}

static void tw_side_release(struct tw_side *sd)
{
	free(sd->lg.e);
	free(sd->pend);
	free(sd->mask);
}

/* The image of this side at point p with `which` of its pending writes
 * (0 none, 1 all, 2 a seeded mix); sd->npend set by the caller. */
static void tw_side_build(struct tw_side *sd, size_t p, int which, struct rt_prng *prng)
{
	size_t words = sd->npend / 64 + 1;

	for (size_t i = 0; i < words; i++)
		sd->mask[i] = which == 0 ? 0 : which == 1 ? ~0ull : rt_prng_next(prng);
	cr_build(&sd->lg, sd->snap, sd->bytes, 0, p, sd->pend, sd->npend, sd->mask,
		 sd->img, SIZE_MAX, 0);
}

static void tw_fail(struct tw *w, const struct tw_sample *s, const char *what,
		    const char *msg)
{
	struct cr_result *r = w->c.res;

	if (r->failures++ == 0)
		snprintf(r->first_failure, sizeof(r->first_failure),
			 "%s seed %" PRIu64 " joint point (journal %zu, data %zu), %s: %.300s",
			 w->c.cfg->name, w->c.cfg->seed, s->a, s->b, what, msg);
	if (r->failures <= 3)
		fprintf(stderr, "  crash: %s\n", r->first_failure);
}

/* Our image of one side against dev_rec_image's, same point and subset. */
static int tw_xcheck(struct tw_ck *k, struct tw_side *sd, const struct tw_sample *s,
		     size_t p)
{
	struct dev_crash_policy pol = { .mode = DEV_CRASH_SUBSET, .subset_bits = sd->mask,
					.subset_nbits = sd->npend };
	int err = dev_pwrite(k->xdev, sd->snap, (uint32_t)sd->bytes, 0, 0);

	if (err == 0)
		err = dev_rec_image(sd->rec, p, &pol, k->xdev);
	if (err == 0)
		err = dev_pread(k->xdev, k->data2, (uint32_t)sd->bytes, 0);
	k->w->c.res->xchecks++;
	if (err == 0 && memcmp(k->data2, sd->img, sd->bytes) != 0)
		tw_fail(k->w, s, "cross-check", sd == &k->j
			? "our journal image differs from dev_rec_image"
			: "our data image differs from dev_rec_image");
	return err;
}

/* jbd_recover of the journal image on k->jdev, replaying onto the data
 * device dd; 0 or its error (jerr says why). */
static int tw_recover(struct tw_ck *k, struct dev *dd, struct jbd_err *jerr)
{
	const struct cr_cfg *cfg = k->w->c.cfg;
	struct jbd_extent ext = { 0, 0, cfg->jlen };
	struct jbd_loc loc = { .j_dev = k->jdev, .j_blocksize = CR_BS, .j_map = &ext,
		.j_nmap = 1, .j_len = cfg->jlen, .j_data = dd, .j_data_blocks = CR_NDATA };
	struct jbd_journal jj;
	struct jbd_recover_opts ro = { 0 };
	struct jbd_recover_result rr;
	int err = jbd_journal_load(&loc, &jj, jerr);

	k->recoveries++;
	return err == 0 ? jbd_recover(&jj, &ro, &rr, jerr) : err;
}

/* The replay of the current journal image (cached). NULL: our own devices
 * failed (*err). */
static struct tw_replay *tw_replay(struct tw_ck *k, int *err)
{
	uint64_t key = cr_hash(k->j.img, k->j.bytes);
	struct tw_replay *r = &k->replays[key % TW_REPLAYS];
	struct jbd_err jerr = { 0 };
	struct dev_rec_entry e;

	if (r->key == key)
		return r;
	*err = dev_pwrite(k->jdev, k->j.img, (uint32_t)k->j.bytes, 0, 0);
	if (*err < 0)
		return NULL;
	dev_rec_reset(k->drec);
	r->key = key;
	r->err = tw_recover(k, k->drec, &jerr);
	memcpy(r->msg, jerr.msg, sizeof(r->msg));
	memset(r->sect, 0, sizeof(r->sect));
	for (size_t i = 0; dev_rec_entry(k->drec, i, &e) == 0; i++) {
		if (!cr_written(&e))
			continue;
		memcpy(r->bytes + e.off, e.data, cr_wlen(&e));
		memset(r->sect + e.off / CR_SECTOR, 1, cr_wlen(&e) / CR_SECTOR);
	}
	return r;
}

/* A full recovery of the pair must give what the replay laid over the data
 * image gave (k->data): recovery does not read the data device. */
static int tw_full(struct tw_ck *k, const struct tw_sample *s, const char *what)
{
	struct jbd_err jerr = { 0 };
	char msg[320];
	int err = dev_pwrite(k->jdev, k->j.img, (uint32_t)k->j.bytes, 0, 0);

	if (err == 0)
		err = dev_pwrite(k->ddev, k->d.img, (uint32_t)k->d.bytes, 0, 0);
	if (err < 0)
		return err;
	k->full++;
	err = tw_recover(k, k->ddev, &jerr);
	if (err < 0) {
		snprintf(msg, sizeof(msg), "a full recovery failed where the journal's "
			 "replay did not: %d %.200s", err, jerr.msg);
		tw_fail(k->w, s, what, msg);
		return 0;
	}
	err = dev_pread(k->ddev, k->data2, (uint32_t)k->d.bytes, 0);
	if (err == 0 && memcmp(k->data, k->data2, k->d.bytes) != 0)
		tw_fail(k->w, s, what, "a full recovery differs from the journal's replay "
			"laid over the data image");
	return err;
}

/* Recover the pair k->img (via its journal image's replay) and check the
 * data device against the model. */
static int tw_check(struct tw_ck *k, const struct tw_sample *s, const char *what,
		    bool full)
{
	struct cr *c = &k->w->c;
	char msg[400];
	int err = 0;
	struct tw_replay *r = tw_replay(k, &err);

	if (!r)
		return err;
	c->res->unique++;
	if (r->err < 0) {
		snprintf(msg, sizeof(msg), "recovery: %d %.200s", r->err, r->msg);
		tw_fail(k->w, s, what, msg);
		return 0;
	}
	memcpy(k->data, k->d.img, k->d.bytes);
	for (size_t i = 0; i < sizeof(r->sect); i++)
		if (r->sect[i])
			memcpy(k->data + i * CR_SECTOR, r->bytes + i * CR_SECTOR, CR_SECTOR);
	if (cr_match(c, k->data, s->bound ? s->bound : UINT32_MAX, msg, sizeof(msg)) < 0)
		tw_fail(k->w, s, what, msg);
	return full ? tw_full(k, s, what) : 0;
}

/* Every image of joint point i: none and all of the pending writes of both
 * devices, each device's all with the other's none, seeded mixes. */
static int tw_point(struct tw_ck *k, size_t i)
{
	struct tw *w = k->w;
	const struct tw_sample *s = &w->s[i];
	size_t na, nb;
	int combos[4 + TW_MIXES][2] = { { 0, 0 }, { 1, 1 } }, ncombo, err = 0;

	na = k->j.npend = cr_pending(k->j.rec, &k->j.lg, s->a, k->j.pend, k->j.lg.n + 1);
	nb = k->d.npend = cr_pending(k->d.rec, &k->d.lg, s->b, k->d.pend, k->d.lg.n + 1);
	ncombo = na || nb ? 2 : 1;
	w->c.res->points++;
	if (na + nb > w->c.res->pending_max)
		w->c.res->pending_max = na + nb;
	if (na && nb) {
		combos[ncombo][0] = 1, combos[ncombo++][1] = 0;
		combos[ncombo][0] = 0, combos[ncombo++][1] = 1;
	}
	for (int m = 0; m < TW_MIXES && na + nb > 1; m++)
		combos[ncombo][0] = 2, combos[ncombo++][1] = 2;
	if (s->bound != k->seen_bound) {
		/* the same images must now recover to a newer state */
		memset(k->seen, 0, k->seen_cap * sizeof(uint64_t));
		k->seen_bound = s->bound;
	}
	for (int m = 0; m < ncombo && err == 0; m++) {
		bool sampled = i % TW_XCHECK_EVERY == 0 && m < 2;
		char what[64];

		tw_side_build(&k->j, s->a, combos[m][0], &w->prng);
		tw_side_build(&k->d, s->b, combos[m][1], &w->prng);
		w->c.res->images++;
		if (sampled) {
			err = tw_xcheck(k, &k->j, s, s->a);
			if (err == 0)
				err = tw_xcheck(k, &k->d, s, s->b);
		}
		if (err < 0 || cr_seen(k->seen, k->seen_cap, k->img, k->j.bytes + k->d.bytes))
			continue;
		snprintf(what, sizeof(what), "pending %zu+%zu, journal %s, data %s", na, nb,
			 combos[m][0] == 0 ? "none" : combos[m][0] == 1 ? "all" : "mix",
			 combos[m][1] == 0 ? "none" : combos[m][1] == 1 ? "all" : "mix");
		err = tw_check(k, s, what, sampled);
	}
	return err;
}

static int tw_check_all(struct tw *w, uint64_t *recoveries, uint64_t *full)
{
	struct cr *c = &w->c;
	size_t jbytes = (size_t)c->cfg->jlen * CR_BS, dbytes = (size_t)CR_NDATA * CR_BS;
	struct tw_ck k = { .w = w, .seen_cap = TW_SEEN_CAP };
	struct dev *m = NULL;
	int err;

	k.img = malloc(jbytes + dbytes);
	k.data = malloc(dbytes);
	k.data2 = malloc(jbytes > dbytes ? jbytes : dbytes);
	k.replays = calloc(TW_REPLAYS, sizeof(*k.replays));
	k.seen = calloc(k.seen_cap, sizeof(uint64_t));
	err = k.img && k.data && k.data2 && k.replays && k.seen ? 0 : -ENOMEM;
	if (err == 0)
		err = tw_side_init(&k.j, c->rec, w->snap_j, jbytes, k.img);
	if (err == 0)
		err = tw_side_init(&k.d, c->drec, w->snap_d, dbytes, k.img + jbytes);
	if (err == 0)
		err = dev_mem_new(jbytes, 512, &k.jdev);
	if (err == 0)
		err = dev_mem_new(dbytes, 512, &k.ddev);
	if (err == 0)
		err = dev_mem_new(jbytes > dbytes ? jbytes : dbytes, 512, &k.xdev);
	if (err == 0 && (err = dev_mem_new(dbytes, 512, &m)) == 0 &&
	    (err = dev_rec_new(m, &k.drec)) < 0)
		dev_close(m);
	for (size_t i = 0; i < w->ns && err == 0; i++)
		err = tw_point(&k, i);
	*recoveries = k.recoveries;
	*full = k.full;
	tw_side_release(&k.j);
	tw_side_release(&k.d);
	if (k.jdev)
		dev_close(k.jdev);
	if (k.ddev)
		dev_close(k.ddev);
	if (k.xdev)
		dev_close(k.xdev);
	if (k.drec)
		dev_close(k.drec);
	free(k.img); free(k.data); free(k.data2); free(k.replays); free(k.seen);
	return err;
}

struct tw_arg {
	const struct cr_cfg *cfg;
	unsigned data_program_us;  /* the data SSD's page program (0: as the journal's) */
	struct cr_result *res;
	uint64_t recoveries, full;  /* jbd_recover runs; full ones cross-checked */
	int err;
	char msg[400];
};

static void tw_main(void *arg)
{
	struct tw_arg *a = arg;
	struct tw *w = calloc(1, sizeof(*w));
	struct dev *ji = NULL, *di = NULL;
	int err = w ? 0 : -ENOMEM;

	if (err < 0)
		goto out;
	w->c = (struct cr){ .cfg = a->cfg, .res = a->res, .nblk = a->cfg->jlen,
			    .blk_opts = &w->qo };
	blk_queue_opts_default(&w->qo);
	w->qo.trace_fn = tw_trace;
	w->qo.trace_arg = w;
	rt_prng_init(&w->prng, a->cfg->seed ^ 0x7770u);
	w->snap_j = calloc(a->cfg->jlen, CR_BS);
	w->snap_d = calloc(CR_NDATA, CR_BS);
	w->c.ev = calloc(CR_MAX_EVENTS, sizeof(*w->c.ev));
	if (!w->snap_j || !w->snap_d || !w->c.ev || rt_mutex_init(&w->c.lock, "crash-model") < 0) {
		err = -ENOMEM;
		goto out;
	}
	err = cr_new_inner(a->cfg, a->cfg->jlen, &ji);
	if (err == 0 && (err = cr_new_data(a->cfg, a->data_program_us, &di)) == 0 &&
	    (err = dev_rec_new(di, &w->c.drec)) < 0)
		dev_close(di);
	w->jinner = ji;
	if (err == 0)
		err = tw_prepare(w);
	if (err == 0 && a->cfg->fault_write_nth) {
		struct dev_fault_opts fo = { .seed = a->cfg->seed,
					     .fail_write_nth = a->cfg->fault_write_nth };
		err = dev_fault_new(ji, &fo, &w->jfault);
		if (err == 0)
			ji = w->jfault;
	}
	if (err == 0 && (err = dev_rec_new(ji, &w->c.rec)) < 0)
		dev_close(ji);
	else if (err < 0 && ji)
		dev_close(ji);
	if (err == 0)
		err = cr_workload(&w->c);
	if (err < 0 || w->c.wl_err) {
		err = err < 0 ? err : w->c.wl_err;
		snprintf(a->msg, sizeof(a->msg), "workload: %.300s", w->c.wl_msg);
		goto out_dev;
	}
	if (w->jfault) {
		dev_fault_counts(w->jfault, &w->fc);
		if (w->fc.write_errors == 1 && !w->c.aborted) {
			err = -EPROTO;
			snprintf(a->msg, sizeof(a->msg), "a journal write failed, yet no "
				 "handle, wait or close reported -EROFS/-EIO");
			goto out_dev;
		}
		if (w->fc.write_errors != 1) {
			err = -ENODATA;
			snprintf(a->msg, sizeof(a->msg), "the injected journal write error "
				 "never fired (%" PRIu64 " journal writes)", w->fc.writes);
			goto out_dev;
		}
	}
	/* the end (after a clean close, every transaction is acknowledged) */
	rt_mutex_lock(&w->c.lock);
	__tw_sample(w);
	rt_mutex_unlock(&w->c.lock);
	if (w->dropped) {
		err = -E2BIG;
		snprintf(a->msg, sizeof(a->msg), "%zu joint points beyond the %d kept "
			 "(raise TW_MAX_SAMPLES)", w->dropped, TW_MAX_SAMPLES);
		goto out_dev;
	}
	a->res->last_rtid = w->c.max_rtid;
	a->res->log_entries = dev_rec_count(w->c.rec) + dev_rec_count(w->c.drec);
	cr_index_events(&w->c);
	err = w->c.bev && w->c.bev_start && w->c.bev_n ? tw_check_all(w, &a->recoveries, &a->full)
						    : -ENOMEM;
out_dev:
	if (w->c.rec)
		dev_close(w->c.rec);
	if (w->c.drec)
		dev_close(w->c.drec);
	rt_mutex_release(&w->c.lock);
out:
	a->err = err;
	if (w) {
		free(w->snap_j); free(w->snap_d); free(w->c.ev);
		free(w->c.bev); free(w->c.bev_start); free(w->c.bev_n);
		free(w);
	}
}

#define TW_TEST(fn, prog_us, ...)                                             \
	static void fn(void)                                                  \
	{                                                                     \
		struct cr_cfg cfg = { .name = #fn, __VA_ARGS__ };             \
		struct cr_result res = { 0 };                                 \
		struct rt_world_opts wo = { .kind = RT_WORLD_SIM };           \
		struct tw_arg a = { .cfg = &cfg, .res = &res,                 \
				    .data_program_us = (prog_us) };           \
		const char *only = getenv("CRASH_TEST");                      \
		rt_world *w;                                                  \
		if (only && strcmp(only, #fn) != 0)                           \
			T_SKIP("CRASH_TEST=%s", only);                        \
		cr_defaults(&cfg);                                            \
		cr_env(&cfg);                                                 \
		wo.seed = cfg.seed;                                           \
		T_EQ(rt_world_new(&wo, &w), 0);                               \
		rt_world_run(w, "crash-twodev", tw_main, &a);                 \
		rt_world_free(w);                                             \
		cr_print(&cfg, &res);                                         \
		printf("  %" PRIu64 " journal images recovered, %" PRIu64     \
		       " pairs recovered in full to cross-check\n",           \
		       a.recoveries - a.full, a.full);                        \
		if (a.err < 0)                                                \
			T_FAILF("run failed: %d %s", a.err, a.msg);           \
		T_CHECK(a.err == 0);                                          \
		if (res.failures)                                             \
			T_FAILF("%d bad images; first: %s", res.failures,     \
				res.first_failure);                           \
		T_CHECK(res.failures == 0);                                   \
		T_CHECK(res.points > 10);                                     \
	}

CR_WORKLOADS_TWODEV(TW_TEST)

int main(int argc, char **argv)
{
	(void)argc;
	CR_WORKLOADS_TWODEV(CR_T_RUN)
	return t_done(argv[0]);
}

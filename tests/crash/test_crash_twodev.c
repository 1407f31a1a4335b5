/*
 * Crash safety with the journal and the data on TWO devices, each behind
 * its own `rec` recorder (each with its own volatile cache): a flush of the
 * journal device says nothing about the data device, so this is where the
 * commit must flush the data device before its commit block (ordered data)
 * and the checkpoint before moving the tail.
 *
 * Both devices are simulated SSDs (their I/O takes virtual time, so a
 * crash can fall in the middle of a commit). A crash is a moment of the
 * run: a sampler thread wakes at seeded virtual times (and between single
 * steps of the other threads) and reads both recorders' entry counts at one
 * instant (the sim
 * world runs one thread at a time; the read is retried until the journal's
 * count did not move), together with the newest transaction acknowledged by
 * then. For each such joint point, the durable image of each device (only
 * flushed writes, all pending writes, and seeded mixes of the two devices'
 * pending writes) is built with dev_rec_image, recovered with jbd_recover,
 * and the data device must be the state after transactions 1..k for some k
 * at least the acknowledged one (crash_common.h has the model).
 *
 * Two configurations also fail one journal write mid-run (dev_fault_new
 * between the journal's device and its recorder): the journal must abort
 * (someone is told -EROFS or -EIO), and since the failed write is never
 * durable, any acknowledgement given after it is caught by the images.
 */
#include "crash_common.h"

#define TW_MAX_SAMPLES 400
#define TW_MIXES 6   /* seeded mixes per joint point, besides none/all */

struct tw_sample {
	size_t a, b;       /* journal and data recorder counts */
	uint32_t bound;    /* newest rtid acknowledged then (0: none) */
};

struct tw {
	struct cr c;       /* first: the sampler gets a struct cr * */
	struct tw_sample s[TW_MAX_SAMPLES];
	size_t ns;
	struct rt_prng prng;
	uint8_t *snap_j, *snap_d;
	struct dev *jinner;   /* the journal's device under fault and rec */
	struct dev *jfault;   /* NULL without fault_write_nth */
	struct dev_fault_counts fc;
};

static void tw_sampler(void *arg)
{
	struct tw *w = arg;
	struct cr *c = &w->c;

	for (unsigned step = 0;; step++) {
		/* mostly yields: the seeded scheduler runs another thread a
		 * step, so samples fall between single completions even on RAM
		 * devices, whose I/O takes no virtual time; now and then a
		 * sleep, so time (commit timers, device latency) moves on */
		if (step % 8 == 7)
			rt_sleep_ns(rt_prng_below(&w->prng, 400 * RT_NS_PER_US));
		else
			rt_yield();
		rt_mutex_lock(&c->lock);
		if (c->done) {
			rt_mutex_unlock(&c->lock);
			break;
		}
		size_t a1 = dev_rec_count(c->rec), b = dev_rec_count(c->drec);
		size_t a2 = dev_rec_count(c->rec);
		if (a1 == a2 && w->ns < TW_MAX_SAMPLES &&
		    (!w->ns || w->s[w->ns - 1].a != a1 || w->s[w->ns - 1].b != b))
			w->s[w->ns++] = (struct tw_sample){ a1, b, c->acked_max };
		rt_mutex_unlock(&c->lock);
	}
}

/* A formatted journal on the journal recorder, initial data on the data
 * recorder; both flushed, snapshotted, logs reset. */
static int tw_prepare(struct tw *w)
{
	const struct cr_cfg *cfg = w->c.cfg;
	struct jbd_format_opts fo = { .blocksize = CR_BS, .blocks = cfg->jlen,
		.csum = cfg->csum, .async_commit = cfg->async_commit,
		.sequence = cfg->first_tid };
	int err;

	for (unsigned i = 0; i < 16; i++)
		fo.uuid[i] = (uint8_t)(cfg->seed * 17 + i + 3);
	for (uint32_t b = 0; b < CR_NDATA; b++)
		cr_fill(w->snap_d + (size_t)b * CR_BS, b, 0, 0);
	/* the journal device is formatted before its fault wrapper and
	 * recorder exist (so the fault counts only the runtime's writes) */
	err = jbd_format(w->jinner, &fo, NULL);
	if (err == 0)
		err = dev_pread(w->jinner, w->snap_j, cfg->jlen * CR_BS, 0);
	if (err == 0)
		err = dev_pwrite(w->c.drec, w->snap_d, CR_NDATA * CR_BS, 0, 0);
	if (err == 0)
		err = dev_flush(w->c.drec);
	dev_rec_reset(w->c.rec);
	dev_rec_reset(w->c.drec);
	return err;
}

/* The image of one device at point p with `which` of its n pending writes
 * (0 none, 1 all, else a seeded mix), onto dst. */
static int tw_image(struct tw *w, struct dev *rec, size_t p, int which,
		    const uint8_t *snap, uint32_t bytes, struct dev *dst)
{
	size_t n = dev_rec_pending_writes(rec, p);
	uint64_t bits[8] = { 0 };
	struct dev_crash_policy pol = { .mode = DEV_CRASH_SUBSET, .subset_bits = bits,
					.subset_nbits = n < 512 ? n : 512 };
	int err = dev_pwrite(dst, snap, bytes, 0, 0);

	for (size_t i = 0; i < 8; i++)
		bits[i] = which == 0 ? 0 : which == 1 ? ~0ull : rt_prng_next(&w->prng);
	if (err == 0)
		err = dev_rec_image(rec, p, &pol, dst);
	return err;
}

/* Recover the two images and check the data device. */
static void tw_check(struct tw *w, const struct tw_sample *s, struct dev *jimg,
		     struct dev *dimg, uint8_t *data, const char *what)
{
	struct cr *c = &w->c;
	struct jbd_extent ext = { 0, 0, c->cfg->jlen };
	struct jbd_loc loc = { .j_dev = jimg, .j_blocksize = CR_BS, .j_map = &ext,
		.j_nmap = 1, .j_len = c->cfg->jlen, .j_data = dimg,
		.j_data_blocks = CR_NDATA };
	struct jbd_journal jj;
	struct jbd_recover_opts ro = { 0 };
	struct jbd_recover_result rr;
	struct jbd_err jerr = { 0 };
	char msg[400];
	int err = jbd_journal_load(&loc, &jj, &jerr);

	if (err == 0)
		err = jbd_recover(&jj, &ro, &rr, &jerr);
	if (err == 0)
		err = dev_pread(dimg, data, CR_NDATA * CR_BS, 0);
	c->res->images++;
	if (err < 0)
		snprintf(msg, sizeof(msg), "recovery: %d %.200s", err, jerr.msg);
	else if (cr_match(c, data, s->bound ? s->bound : UINT32_MAX, msg, sizeof(msg)) >= 0)
		return;
	if (c->res->failures++ == 0)
		snprintf(c->res->first_failure, sizeof(c->res->first_failure),
			 "%s seed %" PRIu64 " joint point (journal %zu, data %zu), %s: %.300s",
			 c->cfg->name, c->cfg->seed, s->a, s->b, what, msg);
	if (c->res->failures <= 3)
		fprintf(stderr, "  crash: %s\n", c->res->first_failure);
}

static int tw_check_all(struct tw *w)
{
	struct cr *c = &w->c;
	struct dev *jimg = NULL, *dimg = NULL;
	uint8_t *data = malloc(CR_NDATA * CR_BS);
	uint32_t jbytes = c->cfg->jlen * CR_BS;
	int err = data ? 0 : -ENOMEM;

	if (err == 0)
		err = dev_mem_new(jbytes, 512, &jimg);
	if (err == 0)
		err = dev_mem_new(CR_NDATA * CR_BS, 512, &dimg);
	for (size_t i = 0; i < w->ns && err == 0; i++) {
		const struct tw_sample *s = &w->s[i];
		size_t na = dev_rec_pending_writes(c->rec, s->a);
		size_t nb = dev_rec_pending_writes(c->drec, s->b);
		int combos[4 + TW_MIXES][2] = { { 0, 0 }, { 1, 1 } };
		int ncombo = na || nb ? 2 : 1;

		c->res->points++;
		if (na + nb > c->res->pending_max)
			c->res->pending_max = na + nb;
		if (na && nb) {
			combos[ncombo][0] = 1, combos[ncombo++][1] = 0;
			combos[ncombo][0] = 0, combos[ncombo++][1] = 1;
		}
		for (int m = 0; m < TW_MIXES && na + nb > 1; m++)
			combos[ncombo][0] = 2, combos[ncombo++][1] = 2;
		for (int k = 0; k < ncombo && err == 0; k++) {
			char what[64];

			err = tw_image(w, c->rec, s->a, combos[k][0], w->snap_j, jbytes, jimg);
			if (err == 0)
				err = tw_image(w, c->drec, s->b, combos[k][1], w->snap_d,
					       CR_NDATA * CR_BS, dimg);
			snprintf(what, sizeof(what), "pending %zu+%zu, journal %s, data %s", na, nb,
				 combos[k][0] == 0 ? "none" : combos[k][0] == 1 ? "all" : "mix",
				 combos[k][1] == 0 ? "none" : combos[k][1] == 1 ? "all" : "mix");
			if (err == 0)
				tw_check(w, s, jimg, dimg, data, what);
		}
	}
	if (jimg)
		dev_close(jimg);
	if (dimg)
		dev_close(dimg);
	free(data);
	return err;
}

struct tw_arg {
	const struct cr_cfg *cfg;
	struct cr_result *res;
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
			    .side_fn = tw_sampler };
	rt_prng_init(&w->prng, a->cfg->seed ^ 0x7770u);
	w->snap_j = calloc(a->cfg->jlen, CR_BS);
	w->snap_d = calloc(CR_NDATA, CR_BS);
	w->c.ev = calloc(CR_MAX_EVENTS, sizeof(*w->c.ev));
	if (!w->snap_j || !w->snap_d || !w->c.ev || rt_mutex_init(&w->c.lock, "crash-model") < 0) {
		err = -ENOMEM;
		goto out;
	}
	err = cr_new_inner(a->cfg, a->cfg->jlen, &ji);
	if (err == 0 && (err = cr_new_inner(a->cfg, CR_NDATA, &di)) == 0 &&
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
	a->res->last_rtid = w->c.max_rtid;
	a->res->log_entries = dev_rec_count(w->c.rec) + dev_rec_count(w->c.drec);
	cr_index_events(&w->c);
	err = w->c.bev && w->c.bev_start && w->c.bev_n ? tw_check_all(w) : -ENOMEM;
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

#define TW_TEST(fn, ...)                                                      \
	static void fn(void)                                                  \
	{                                                                     \
		struct cr_cfg cfg = { .name = #fn, __VA_ARGS__ };             \
		struct cr_result res = { 0 };                                 \
		struct rt_world_opts wo = { .kind = RT_WORLD_SIM };           \
		struct tw_arg a = { .cfg = &cfg, .res = &res };               \
		rt_world *w;                                                  \
		cr_defaults(&cfg);                                            \
		cr_env(&cfg);                                                 \
		wo.seed = cfg.seed;                                           \
		T_EQ(rt_world_new(&wo, &w), 0);                               \
		rt_world_run(w, "crash-twodev", tw_main, &a);                 \
		rt_world_free(w);                                             \
		cr_print(&cfg, &res);                                         \
		if (a.err < 0)                                                \
			T_FAILF("run failed: %d %s", a.err, a.msg);           \
		T_CHECK(a.err == 0);                                          \
		if (res.failures)                                             \
			T_FAILF("%d bad images; first: %s", res.failures,     \
				res.first_failure);                           \
		T_CHECK(res.failures == 0);                                   \
		T_CHECK(res.points > 10);                                     \
	}

/* ordered data on its own device: the commit flushes it first */
TW_TEST(twodev_ordered_v3, .seed = 31, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32)
/* writeback: metadata still atomic across the two devices */
TW_TEST(twodev_writeback_v3_ssd, .seed = 34, .mode = UJBD_DATA_WRITEBACK,
	.csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32)
/* no checksums, four threads */
TW_TEST(twodev_ordered_nocsum, .seed = 32, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_NONE, .sim_ssd = true, .threads = 4, .ops = 32)
/* data journaled: the checkpoint flushes the data device before the tail moves */
TW_TEST(twodev_journal_v2, .seed = 33, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 32)

/* the 30th journal write fails: abort mid-run; nothing acknowledged after
 * it, and every crash image still recovers to an acknowledged state */
TW_TEST(twodev_abort_ordered, .seed = 35, .mode = UJBD_DATA_ORDERED,
	.csum = JBD_CSUM_KIND_V3, .sim_ssd = true, .ops = 32, .fault_write_nth = 30)
TW_TEST(twodev_abort_journal, .seed = 36, .mode = UJBD_DATA_JOURNAL,
	.csum = JBD_CSUM_KIND_V2, .sim_ssd = true, .ops = 32, .fault_write_nth = 45)

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(twodev_ordered_v3);
	T_RUN(twodev_ordered_nocsum);
	T_RUN(twodev_journal_v2);
	T_RUN(twodev_writeback_v3_ssd);
	T_RUN(twodev_abort_ordered);
	T_RUN(twodev_abort_journal);
	return t_done(argv[0]);
}

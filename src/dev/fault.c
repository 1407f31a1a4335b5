/*
 * fault: fault injection in front of any device. Decisions are made at
 * submission, in submission order, from counters and a PRNG seeded by the
 * options, so the same sequence of requests meets the same faults.
 *
 *   - fail the Nth read, write or flush (1-based) with -EIO (or the
 *     errno asked for), and with `sticky` every later one of that kind too;
 *   - fail each read, write or flush with a given probability;
 *   - the Nth write transfers only a seeded prefix of whole blocks (the
 *     request completes with r_result = the bytes written, which dev_pwrite
 *     turns into -EIO);
 *   - the Nth flush reports success while the inner device's cache is lost
 *     (dev_sim_power_cut on a sim device; nothing on the others);
 *   - with count_preflush a write's PREFLUSH counts as a flush (a flush
 *     fault then fails the whole write), and with failed_flush_drops_cache
 *     a failed flush also loses the inner device's cache.
 *
 * A failed request never reaches the inner device. A write with PREFLUSH
 * counts as a write. Injected failures still complete on the completion
 * thread, never inside dev_submit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev_int.h"

struct dev_fault {
	struct dev_wrap f_w;            /* first: the device over the inner one */
	struct dev_fault_opts f_opts;
	rt_mutex f_lock;
	struct rt_prng f_prng;          /* [f_lock] */
	struct dev_fault_counts f_cnt;  /* [f_lock] */
};

enum fault_action { FA_PASS, FA_FAIL, FA_FAIL_FLUSH, FA_SHORT, FA_LOSE_CACHE };

static bool fault_nth(uint64_t nth, uint64_t count, bool sticky)
{
	return nth && (count == nth || (sticky && count > nth));
}

static bool fault_draw(struct dev_fault *f, double rate)
{
	if (!(rate > 0))
		return false;
	return (double)(rt_prng_next(&f->f_prng) >> 11) * 0x1p-53 < rate;
}

/* A flush (or a write's preflush, with count_preflush): counted, failed? */
static bool __fault_flush(struct dev_fault *f)
{
	const struct dev_fault_opts *o = &f->f_opts;
	struct dev_fault_counts *c = &f->f_cnt;

	c->flushes++;
	if (fault_nth(o->fail_flush_nth, c->flushes, o->sticky) ||
	    fault_draw(f, o->flush_error_rate))
		return c->flush_errors++, true;
	return false;
}

/* Count r and decide what happens to it. [f_lock] */
static enum fault_action __fault_decide(struct dev_fault *f, const struct dev_req *r)
{
	const struct dev_fault_opts *o = &f->f_opts;
	struct dev_fault_counts *c = &f->f_cnt;

	if (r->r_op == DEV_OP_WRITE && o->count_preflush && (r->r_flags & DEV_REQ_PREFLUSH) &&
	    __fault_flush(f))
		return FA_FAIL_FLUSH;
	switch (r->r_op) {
	case DEV_OP_READ:
		c->reads++;
		if (fault_nth(o->fail_read_nth, c->reads, o->sticky) ||
		    fault_draw(f, o->read_error_rate))
			return c->read_errors++, FA_FAIL;
		return FA_PASS;
	case DEV_OP_WRITE:
		c->writes++;
		if (fault_nth(o->fail_write_nth, c->writes, o->sticky) ||
		    fault_draw(f, o->write_error_rate))
			return c->write_errors++, FA_FAIL;
		if (o->short_write_nth && c->writes == o->short_write_nth)
			return c->short_writes++, FA_SHORT;
		return FA_PASS;
	default:
		if (__fault_flush(f))
			return FA_FAIL_FLUSH;
		if (o->lose_cache_flush_nth && c->flushes == o->lose_cache_flush_nth)
			return c->lost_caches++, FA_LOSE_CACHE;
		return FA_PASS;
	}
}

static int fault_submit(struct dev *d, struct dev_req *r)
{
	struct dev_fault *f = (struct dev_fault *)d;
	struct dev_wrap_req *wr;
	uint32_t len = r->r_len, bs = d->d_block_size;
	enum fault_action act;
	int err;

	rt_mutex_lock(&f->f_lock);
	act = __fault_decide(f, r);
	if (act == FA_SHORT) /* 0 .. len/bs - 1 whole blocks */
		len = (uint32_t)rt_prng_below(&f->f_prng, r->r_len / bs) * bs;
	rt_mutex_unlock(&f->f_lock);

	if (act == FA_FAIL || act == FA_FAIL_FLUSH || act == FA_LOSE_CACHE ||
	    (act == FA_SHORT && len == 0)) {
		bool failed = act == FA_FAIL || act == FA_FAIL_FLUSH;
		int fail = f->f_opts.fail_errno ? f->f_opts.fail_errno : -EIO;

		if (act == FA_LOSE_CACHE ||
		    (act == FA_FAIL_FLUSH && f->f_opts.failed_flush_drops_cache))
			dev_sim_power_cut(f->f_w.w_inner); /* -EINVAL off a sim: nothing to lose */
		dev_wrap_complete(&f->f_w, r, failed ? fail : 0);
		return 0;
	}
	wr = calloc(1, sizeof(*wr));
	if (!wr)
		return -ENOMEM;
	err = dev_wrap_submit(&f->f_w, wr, r, len, NULL);
	if (err < 0)
		free(wr);
	return err;
}

static void fault_close(struct dev *d)
{
	struct dev_fault *f = (struct dev_fault *)d;

	dev_close(f->f_w.w_inner);
	rt_mutex_release(&f->f_lock);
	free(f);
}

static const struct dev_ops dev_fault_ops = {
	.o_submit = fault_submit,
	.o_close = fault_close,
	.o_power_cut = dev_wrap_power_cut,
	.o_check = dev_wrap_check,
};

int dev_fault_new(struct dev *inner, const struct dev_fault_opts *opts,
		  struct dev **out)
{
	struct dev_fault *f;
	int err;

	if (!inner || !opts)
		return -EINVAL;
	if (!(opts->read_error_rate >= 0 && opts->read_error_rate <= 1) ||
	    !(opts->write_error_rate >= 0 && opts->write_error_rate <= 1) ||
	    !(opts->flush_error_rate >= 0 && opts->flush_error_rate <= 1) ||
	    opts->fail_errno > 0 || opts->fail_errno < -4095)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->f_opts = *opts;
	rt_prng_init(&f->f_prng, opts->seed);
	err = dev_wrap_init(&f->f_w, &dev_fault_ops, inner, "fault", &f->f_lock, "dev_fault");
	if (err < 0) {
		free(f);
		return err;
	}
	*out = &f->f_w.w_dev;
	return 0;
}

void dev_fault_counts(const struct dev *d, struct dev_fault_counts *out)
{
	struct dev_fault *f = (struct dev_fault *)d;

	memset(out, 0, sizeof(*out));
	if (!d || d->d_ops != &dev_fault_ops)
		return;
	rt_mutex_lock(&f->f_lock);
	*out = f->f_cnt;
	rt_mutex_unlock(&f->f_lock);
}

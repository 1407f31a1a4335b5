/*
 * The simulated SSD: an Intel X25-M class drive of 2008 (docs/devices.md
 * has the sources of every figure).
 *
 *   read  = command + per page (striped over the channels): page read to the
 *           register + its transfer over that channel's flash bus
 *   write = command + flash bus transfer into the drive's buffer; the page
 *           program runs in the background on that channel
 *
 * Each channel is busy until its last page read, transfer or program ends,
 * so reads queue behind background programs on the same channel, which is
 * where an SSD's write interference comes from. The host interface (300
 * MB/s) caps any request's rate.
 *
 * The write cache holds each written extent until its program ends
 * (c_ready_ns); until then a power cut loses it. FLUSH waits for every
 * program in flight (ceil(dirty_pages / channels) * T_program falls out of
 * the per-channel schedule). FUA completes when its own pages
 * are programmed. With power_loss_protection the cache is safe: a flush
 * costs only the command and a power cut loses nothing.
 *
 * Requests run concurrently, up to queue_depth; no seek, no rotation, no
 * garbage collection (no GC stalls).
 */
#include <errno.h>
#include <string.h>

#include "dev/sim_int.h"
#include "priv/param.h"

#define SSD_MAX_CHANNELS 64
#define SSD_MAX_QD 256

struct sim_ssd {
	struct dev_ssd_params p;
	uint64_t chan_free[SSD_MAX_CHANNELS]; /* each channel is free from */
	uint64_t last_end;                    /* the latest completion handed out */
};

static unsigned ssd_chan(const struct sim_ssd *d, uint64_t page)
{
	return (unsigned)(page % d->p.channels);
}

/* Bytes of [off, off+len) that fall in page pg. */
static uint64_t ssd_page_bytes(const struct sim_ssd *d, uint64_t pg, uint64_t off,
			       uint32_t len)
{
	uint64_t lo = pg * d->p.page_bytes, hi = lo + d->p.page_bytes;

	if (lo < off)
		lo = off;
	if (hi > off + len)
		hi = off + len;
	return hi - lo;
}

static uint64_t ssd_bus_ns(const struct sim_ssd *d, uint64_t bytes)
{
	return (uint64_t)(d->p.bus_us_per_page * 1e3 * (double)bytes /
			  (double)d->p.page_bytes + 0.5);
}

/* Program extents whose time has come onto the media. */
static void ssd_retire(struct dev_sim *s, uint64_t t)
{
	struct dev_cache *c = &s->s_cache;

	for (size_t i = 0; i < c->c_n;) {
		if (c->c_ext[i].c_ready_ns <= t && dev_cache_destage(c, i, s->s_media) == 0)
			continue;
		i++;
	}
}

static uint64_t ssd_read(struct dev_sim *s, struct dev_req *r, uint64_t t)
{
	struct sim_ssd *d = s->s_priv;
	uint64_t end = t + sim_xfer_ns(r->r_len, d->p.interface_mb_s);
	uint64_t first = r->r_off / d->p.page_bytes;
	uint64_t last = (r->r_off + r->r_len - 1) / d->p.page_bytes;

	for (uint64_t pg = first; pg <= last; pg++) {
		unsigned c = ssd_chan(d, pg);
		uint64_t st = sim_max(t, d->chan_free[c]);

		d->chan_free[c] = st + (uint64_t)(d->p.page_read_us * 1e3) +
				  ssd_bus_ns(d, ssd_page_bytes(d, pg, r->r_off, r->r_len));
		end = sim_max(end, d->chan_free[c]);
	}
	r->r_result = dev_sim_read(s, r);
	return end;
}

/* Wait (in model time) until len more bytes fit in the cache. */
static uint64_t ssd_make_room(struct dev_sim *s, uint64_t t, uint32_t len)
{
	struct dev_cache *c = &s->s_cache;

	ssd_retire(s, t);
	while (c->c_n > 0 && c->c_bytes + len > c->c_limit) {
		uint64_t next = UINT64_MAX;

		for (size_t i = 0; i < c->c_n; i++)
			if (c->c_ext[i].c_ready_ns < next)
				next = c->c_ext[i].c_ready_ns;
		t = sim_max(t, next);
		ssd_retire(s, t);
	}
	return t;
}

/* The latest program end of the cache (the time a flush completes). */
static uint64_t ssd_drain_time(const struct dev_sim *s, uint64_t t)
{
	const struct dev_cache *c = &s->s_cache;

	for (size_t i = 0; i < c->c_n; i++)
		t = sim_max(t, c->c_ext[i].c_ready_ns);
	return t;
}

static uint64_t ssd_flush(struct dev_sim *s, uint64_t t)
{
	struct sim_ssd *d = s->s_priv;

	t += (uint64_t)(d->p.flush_us * 1e3);
	if (d->p.power_loss_protection)
		return t;
	t = ssd_drain_time(s, t);
	ssd_retire(s, t);
	return t;
}

static uint64_t ssd_write(struct dev_sim *s, struct dev_req *r, uint64_t t)
{
	struct sim_ssd *d = s->s_priv;
	bool through = (r->r_flags & DEV_REQ_FUA) || d->p.cache_bytes == 0 ||
		       r->r_len > d->p.cache_bytes;
	uint64_t acked = t + sim_xfer_ns(r->r_len, d->p.interface_mb_s), ready = t;
	uint64_t first = r->r_off / d->p.page_bytes;
	uint64_t last = (r->r_off + r->r_len - 1) / d->p.page_bytes;

	if (r->r_flags & DEV_REQ_PREFLUSH)
		t = ssd_flush(s, t);
	if (!through)
		t = ssd_make_room(s, t, r->r_len);
	for (uint64_t pg = first; pg <= last; pg++) {
		unsigned c = ssd_chan(d, pg);
		uint64_t st = sim_max(t, d->chan_free[c]);
		uint64_t bus_end = st + ssd_bus_ns(d, ssd_page_bytes(d, pg, r->r_off, r->r_len));

		d->chan_free[c] = bus_end + (uint64_t)(d->p.program_us * 1e3);
		acked = sim_max(acked, bus_end);
		ready = sim_max(ready, d->chan_free[c]);
	}
	r->r_result = dev_sim_write(s, r, through, ready);
	return through ? ready : acked;
}

static uint64_t ssd_serve(struct dev_sim *s, struct dev_req *r, uint64_t start)
{
	struct sim_ssd *d = s->s_priv;
	uint64_t t = start + (uint64_t)(d->p.cmd_us * 1e3);

	switch (r->r_op) {
	case DEV_OP_READ:
		return ssd_read(s, r, t);
	case DEV_OP_WRITE:
		return ssd_write(s, r, t);
	default:
		r->r_result = 0;
		return ssd_flush(s, t);
	}
}

static uint64_t ssd_step(struct dev_sim *s, uint64_t now)
{
	struct sim_ssd *d = s->s_priv;

	ssd_retire(s, now);
	struct dev_req *r;

	while ((r = dev_sim_oldest(s)) && s->s_svc_len < d->p.queue_depth) {
		/* in the sim world the worker runs exactly at arrival (or at the
		 * completion that freed a slot); in the real world it may wake
		 * late, and the model time should not drift with it */
		uint64_t start = sim_max(SIM_ARRIVAL(r),
					 d->last_end < now ? d->last_end : now);
		uint64_t end = ssd_serve(s, r, start);

		d->last_end = sim_max(d->last_end, end);
		dev_sim_start(s, r, end);
	}
	return UINT64_MAX;
}

static void ssd_power_cut(struct dev_sim *s, uint64_t now)
{
	struct sim_ssd *d = s->s_priv;

	ssd_retire(s, d->p.power_loss_protection ? UINT64_MAX : now);
	dev_cache_drop(&s->s_cache);
}

/* ---- parameters ------------------------------------------------------- */

/*
 * Sources: the Intel X25-M of 2008 and Agrawal et al., "Design Tradeoffs
 * for SSD Performance" (USENIX ATC 2008), unless a row says otherwise.
 * Page programs take 200 us on SLC and 600-900 us on MLC; we keep the
 * header's 200 us.
 */
#define SSD_P(field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM(struct dev_ssd_params, field, type, unit, scale, def, min, max, src, help)
static const struct rt_param ssd_rows[] = {
	SSD_P(size, RT_PARAM_U64, "B", 0, 80e9, 1 << 20, 1e15, "Intel X25-M (2008)", "capacity"),
	RT_PARAM_RULE(struct dev_ssd_params, block_size, RT_PARAM_U32, "B", 0, 512, 512, 65536,
		      0, true, "Intel X25-M (2008)", "logical sector size"),
	SSD_P(channels, RT_PARAM_UINT, "", 0, 10, 1, SSD_MAX_CHANNELS, "Intel X25-M (2008): 10 flash channels",
	      "flash channels pages are striped over"),
	SSD_P(page_bytes, RT_PARAM_U32, "B", 0, 4096, 512, 65536, "MLC NAND of 2008: 4 KiB pages", "flash page"),
	SSD_P(cmd_us, RT_PARAM_DOUBLE, "us", 0, 20, 0, 10000, "assumption (controller command overhead)", "per command"),
	SSD_P(page_read_us, RT_PARAM_DOUBLE, "us", 0, 50, 0, 10000, "MLC NAND data sheets of 2008: ~50 us read (25 us SLC)",
	      "page read into the register"),
	SSD_P(bus_us_per_page, RT_PARAM_DOUBLE, "us", 0, 100, 0, 10000,
	      "Agrawal et al., USENIX ATC 2008, Design Tradeoffs for SSD Performance", "one page over a channel's flash bus"),
	SSD_P(program_us, RT_PARAM_DOUBLE, "us", 0, 200, 0, 100000,
	      "NAND data sheets of 2008: SLC 200 us program (MLC 600-900 us)", "page program"),
	SSD_P(interface_mb_s, RT_PARAM_DOUBLE, "MB/s", 0, 300, 1, 24000, "SATA 3 Gb/s",
	      "host interface rate (MB = 1e6 B)"),
	RT_PARAM_AS("cache_mib", struct dev_ssd_params, cache_bytes, RT_PARAM_U64, "MiB",
		    1048576, 16, 0, 4096, "X25-M, 16 MB DRAM", "write buffer, 0 = none"),
	SSD_P(power_loss_protection, RT_PARAM_BOOL, "", 0, 0, 0, 1, "consumer drive",
	      "the buffer survives a power cut; a flush costs only the command"),
	SSD_P(queue_depth, RT_PARAM_UINT, "", 0, 32, 1, SSD_MAX_QD, "NCQ", "commands at once"),
	SSD_P(flush_us, RT_PARAM_DOUBLE, "us", 0, 0, 0, 1e6,
	      "assumption: the programs waited for are the cost", "a flush's cost beyond them"),
};
static const struct rt_param_table ssd_table =
	RT_PARAM_TABLE("ssd", "simulated SSD of 2008, Intel X25-M class (src/dev/sim_ssd.c)",
		       ssd_rows, struct dev_ssd_params);

void dev_ssd_defaults(struct dev_ssd_params *p)
{
	memset(p, 0, sizeof(*p));
	rt_param_defaults(&ssd_table, p);
}

/* ---- construction ------------------------------------------------------ */

static void ssd_model_defaults(void *p)
{
	dev_ssd_defaults(p);
}

/* What only this model checks (dev_sim_new checks the geometry). */
static int ssd_check(const void *params)
{
	const struct dev_ssd_params *p = params;

	if (p->channels < 1 || p->channels > SSD_MAX_CHANNELS || p->page_bytes < 512 ||
	    !(p->interface_mb_s > 0) || p->cmd_us < 0 || p->page_read_us < 0 ||
	    p->bus_us_per_page < 0 || p->program_us < 0 || p->flush_us < 0)
		return -EINVAL;
	return 0;
}

static void ssd_geometry(const void *params, struct dev_sim_geometry *g)
{
	const struct dev_ssd_params *p = params;

	*g = (struct dev_sim_geometry){ .name = "ssd", .size = p->size,
		.block_size = p->block_size, .queue_depth = p->queue_depth,
		.max_queue_depth = SSD_MAX_QD, .rotational = false,
		.volatile_cache = p->cache_bytes > 0 && !p->power_loss_protection,
		.cache_bytes = p->cache_bytes };
}

static void ssd_setup(struct dev_sim *s, const void *params)
{
	struct sim_ssd *d = s->s_priv;

	d->p = *(const struct dev_ssd_params *)params;
	d->p.size = s->s_dev.d_size;
}

static const struct dev_sim_model ssd_model = {
	.m_step = ssd_step,
	.m_power_cut = ssd_power_cut,
	.m_params = &ssd_table,
	.m_check = ssd_check,
	.m_geometry = ssd_geometry,
	.m_state_size = sizeof(struct sim_ssd),
	.m_setup = ssd_setup,
};

int dev_sim_ssd_new(const struct dev_ssd_params *p, struct dev **out)
{
	return dev_sim_new(&ssd_model, p, out);
}

const struct dev_model dev_model_ssd = {
	.m_name = "ssd",
	.m_help = "simulated SSD of 2008 (Intel X25-M class): channels, page program, write buffer",
	.m_params = &ssd_table,
	.m_defaults = ssd_model_defaults,
	.m_sim = &ssd_model,
	.m_size_offset = offsetof(struct dev_ssd_params, size),
};

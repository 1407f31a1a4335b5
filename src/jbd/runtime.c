/*
 * runtime.c: the journal runtime's lifecycle: options, open (format,
 * recovery, geometry, queues, threads), close, and the small accessors of
 * ujbd.h. The log's bookkeeping while it runs (space, tail, abort) is in
 * log.c.
 *
 * The one idea: ujbd_open takes a location (struct jbd_loc: journal device
 * + map + data device) and nothing else; finding the location of a path
 * is the business of src/target, above this layer.
 */
#include <stdlib.h>

#include "jbd/runtime.h"

/* ---- version ------------------------------------------------------------ */

/* The version the library was built as (the Makefile's VERSION, through
 * the generated ujbd/version.h), not the one a caller was compiled with. */
const char *ujbd_version(void)
{
	return UJBD_VERSION;
}

/* ---- options ------------------------------------------------------------ */

void ujbd_opts_default(struct ujbd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->data_mode = UJBD_DATA_ORDERED;
	o->commit_interval_ns = 5 * RT_NS_PER_S;   /* JBD2_DEFAULT_MAX_COMMIT_AGE */
	o->min_batch_time_ns = 0;                  /* JBD2_DEFAULT_MIN_BATCH_TIME */
	o->max_batch_time_ns = 15 * RT_NS_PER_MS;  /* JBD2_DEFAULT_MAX_BATCH_TIME */
	o->commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 3); /* ext4 journal_ioprio */
	o->journal_meta = true;
	o->journal_sync = UJBD_SYNC_FSYNC_ONLY;
	o->wake = UJBD_WAKE_NEEDED;
	/* one flush per fsync where only ujbd replays the log (a data block is
	 * journaled, not written home before the commit: transaction.c), the
	 * commit on the fsync's thread */
	o->async_commit = UJBD_ASYNC_COMMIT_AUTO;
	o->ordered_journal_bytes = 64u << 10;      /* measured: docs/bench.md */
	o->caller_commit = true;
	o->barrier = true;
	o->cache_blocks = 16384;
	o->recover = true;
	o->format_opts.csum = JBD_CSUM_KIND_V3;
}

void ujbd_opts_jbd2(struct ujbd_opts *o)
{
	ujbd_opts_default(o);
	o->async_commit = UJBD_ASYNC_COMMIT_OFF;
	o->ordered_journal_bytes = 0;
	o->caller_commit = false;
}

static const char *const under_commit_names[] = {
	[UJBD_UNDER_COMMIT_COPY] = "copy",
	[UJBD_UNDER_COMMIT_WAIT_IO] = "wait-io",
	[UJBD_UNDER_COMMIT_WAIT_LOOP] = "wait-loop",
};

const char *ujbd_under_commit_name(enum ujbd_under_commit p)
{
	return (unsigned)p <= UJBD_UNDER_COMMIT_WAIT_LOOP ? under_commit_names[p] : NULL;
}

int ujbd_under_commit_parse(const char *s, enum ujbd_under_commit *out)
{
	for (unsigned i = 0; s && i <= UJBD_UNDER_COMMIT_WAIT_LOOP; i++) {
		if (!strcmp(s, under_commit_names[i])) {
			*out = (enum ujbd_under_commit)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const async_names[] = {
	[UJBD_ASYNC_COMMIT_OFF] = "off",
	[UJBD_ASYNC_COMMIT_ON] = "on",
	[UJBD_ASYNC_COMMIT_AUTO] = "auto",
};

const char *ujbd_async_commit_name(enum ujbd_async_commit a)
{
	return (unsigned)a <= UJBD_ASYNC_COMMIT_AUTO ? async_names[a] : NULL;
}

int ujbd_async_commit_parse(const char *s, enum ujbd_async_commit *out)
{
	static const struct {
		const char *name;
		enum ujbd_async_commit v;
	} words[] = {
		{ "off", UJBD_ASYNC_COMMIT_OFF }, { "no", UJBD_ASYNC_COMMIT_OFF },
		{ "0", UJBD_ASYNC_COMMIT_OFF },   { "on", UJBD_ASYNC_COMMIT_ON },
		{ "yes", UJBD_ASYNC_COMMIT_ON },  { "1", UJBD_ASYNC_COMMIT_ON },
		{ "auto", UJBD_ASYNC_COMMIT_AUTO },
	};

	for (size_t i = 0; s && i < sizeof(words) / sizeof(words[0]); i++) {
		if (!strcmp(s, words[i].name)) {
			*out = words[i].v;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ujbd_strerror(int err)
{
	/* errno values keep the system's words: the same EROFS, ENOSPC or
	 * ENOENT may come from the host as well as from the journal */
	switch (-err) {
	case 0: return "success";
	case UJBD_ETOOBIG: return "larger than any transaction can hold";
	case UJBD_ENOCREDIT: return "the handle has used all its credits (extend it)";
	case UJBD_ENOTID: return "no such transaction (tid not handed out yet)";
	case UJBD_EINJOURNAL: return "the block lies inside the journal";
	case UJBD_EGONE: return "a file under the journal was unlinked or replaced while open";
	default: return strerror(err < 0 ? -err : err);
	}
}

int jbd_opts_check(const struct ujbd_opts *o, struct jbd_err *err)
{
	if ((unsigned)o->data_mode > UJBD_DATA_WRITEBACK || (unsigned)o->wake > UJBD_WAKE_ALWAYS ||
	    (unsigned)o->journal_sync > UJBD_SYNC_OFF ||
	    (unsigned)o->under_commit > UJBD_UNDER_COMMIT_WAIT_LOOP ||
	    (unsigned)o->async_commit > UJBD_ASYNC_COMMIT_AUTO)
		return jbd_err_set(err, -EINVAL, "invalid option value");
	if (o->commit_interval_ns == 0)
		return jbd_err_set(err, -EINVAL, "commit_interval must be positive");
	if (o->wakeup_cpu_ns > RT_NS_PER_S)
		return jbd_err_set(err, -EINVAL, "wakeup_cpu_ns above 1 s");
	if (o->writeback_interval_ns > 3600 * RT_NS_PER_S ||
	    o->writeback_expire_ns > 3600 * RT_NS_PER_S)
		return jbd_err_set(err, -EINVAL, "writeback interval or expiry above 1 h");
	if (o->min_batch_time_ns > o->max_batch_time_ns && o->max_batch_time_ns)
		return jbd_err_set(err, -EINVAL, "min_batch_time above max_batch_time");
	if (o->commit_ioprio != UJBD_IOPRIO_INHERIT &&
	    (RT_IOPRIO_CLASS(o->commit_ioprio) > RT_IOPRIO_CLASS_IDLE ||
	     RT_IOPRIO_LEVEL(o->commit_ioprio) >= RT_IOPRIO_LEVELS))
		return jbd_err_set(err, -EINVAL, "invalid commit ioprio 0x%x", o->commit_ioprio);
	return 0;
}

static int opts_check(const struct jbd_loc *loc, const struct ujbd_opts *o,
		      struct jbd_err *err)
{
	if (!loc || !loc->j_dev || !loc->j_data)
		return jbd_err_set(err, -EINVAL, "a journal device and a data device are needed");
	return jbd_opts_check(o, err);
}

/* ---- open --------------------------------------------------------------- */

static int open_format(const struct jbd_loc *loc, const struct ujbd_opts *o,
		       struct jbd_err *err)
{
	struct jbd_format_opts f = o->format_opts;
	static const uint8_t zero[16];

	if (loc->j_sb_block != 0)
		return jbd_err_set(err, -EINVAL, "format needs the superblock at journal block 0");
	if (!f.blocksize)
		f.blocksize = loc->j_blocksize;
	if (!f.blocks)
		f.blocks = loc->j_len;
	if (f.blocksize != loc->j_blocksize || f.blocks > loc->j_len)
		return jbd_err_set(err, -EINVAL, "format options do not match the journal location");
	if (!memcmp(f.uuid, zero, 16)) {
		/* The uuid seeds every checksum: two journals sharing one
		 * would take each other's stale blocks for their own. */
		int rc = rt_uuid_v4(f.uuid);
		if (rc)
			return jbd_err_set(err, rc, "no random uuid for the journal: %s", strerror(-rc));
	}
	return jbd_format_loc(loc, &f, err);
}

/* s_errno, recovery: what an earlier life of the journal left. */
static int open_check_sb(struct ujbd *j, struct jbd_err *err)
{
	struct jbd2_sb *sb = &j->j_jnl.j_sb;
	int32_t e = (int32_t)jbd_get_be32(sb->s_errno);
	struct jbd_recover_result r;
	int rc;

	if (e && !j->j_opts.clear_error)
		return jbd_err_set(err, -EUCLEAN,
				   "the journal was aborted earlier (s_errno %d: %s): check the data, then open with clear_error",
				   e, strerror(e < 0 ? -e : e));
	if (jbd_get_be32(sb->s_start) != 0) {
		if (!j->j_opts.recover)
			return jbd_err_set(err, -EUCLEAN, "the journal needs recovery");
		rc = jbd_recover(&j->j_jnl, NULL, &r, err);
		if (rc == -EBADMSG)
			return jbd_err_set(err, -EUCLEAN, "recovery skipped blocks with bad checksums: %s",
					   err->msg);
		if (rc)
			return rc;
	}
	jbd_put_be32(&sb->s_errno, 0);
	if (jbd_sb_is_v2(sb)) {
		uint32_t inc = jbd_get_be32(sb->s_feature_incompat) | JBD2_FEATURE_INCOMPAT_REVOKE;
		/* Async commit relies on the checksums to catch a torn log:
		 * recovery must treat a bad commit block as the end. */
		if (j->j_async && (inc & (JBD2_FEATURE_INCOMPAT_CSUM_V2 |
					  JBD2_FEATURE_INCOMPAT_CSUM_V3)))
			inc |= JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT;
		jbd_put_be32(&sb->s_feature_incompat, inc);
		jbd_fmt_from_sb(sb, &j->j_jnl.j_fmt);
	}
	return 0;
}

/*
 * Where the journal lies on the data device, when it is the journal's
 * own: the span of data blocks that may be journal blocks (check_block
 * looks no further for the others), and a refusal when no block of the
 * device is left for data (a standalone journal given its own file as
 * data device, and filling it).
 */
static int open_data_span(struct ujbd *j, const struct jbd_loc *loc, struct jbd_err *err)
{
	uint64_t lo = UINT64_MAX, hi = 0, inside = 0;

	if (loc->j_data != loc->j_dev || !loc->j_nmap)
		return 0;
	for (size_t i = 0; i < loc->j_nmap; i++) {
		uint64_t a = loc->j_map[i].pblk, b = a + loc->j_map[i].len;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		if (a < j->j_data_blocks)
			inside += (b < j->j_data_blocks ? b : j->j_data_blocks) - a;
	}
	j->j_in_jnl_lo = lo;
	j->j_in_jnl_hi = hi;
	if (inside >= j->j_data_blocks)
		return jbd_err_set(err, -EINVAL,
				   "no data block outside the journal: the data device is the journal's own and the journal covers all of its %llu blocks",
				   (unsigned long long)j->j_data_blocks);
	return 0;
}

/* The sizes a journal's geometry gives the runtime: its ring of log
 * writes, descriptor and revoke capacities, the log space kept back and
 * the largest transaction. */
struct geom {
	uint32_t ring, dcap, rcap, slack, max_txn;
};

/* Log blocks for `credits` buffers with descriptors of dcap tags
 * (jbd_log_res's rule, before there is a journal). */
static uint32_t geom_log_res(const struct geom *g, uint32_t credits)
{
	return credits + (credits + g->dcap - 1) / g->dcap + 1;
}

/* g for a log of L blocks of bs bytes in format fmt, the largest
 * transaction max_opt (0: a quarter of the log, or less so that two fit);
 * -EINVAL with err when the log cannot hold two of them. No journal, no
 * device: ujbd_open_path checks a format's options with it before it
 * creates a file (jbd_opts_check_format). */
static int geom_compute(const struct jbd_fmt *fmt, uint32_t L, uint32_t bs, uint32_t max_opt,
			struct geom *g, struct jbd_err *err)
{
	uint32_t ring = JBD_RING_MAX, cap = (8u << 20) / bs;

	if (ring > cap)
		ring = cap;
	if (ring > L)
		ring = L;
	if (ring < 4)
		ring = 4;
	g->ring = ring;
	g->dcap = (uint32_t)jbd_desc_capacity(fmt);
	if (g->dcap > ring - 1)
		g->dcap = ring - 1;
	g->rcap = (uint32_t)jbd_revoke_capacity(fmt);
	g->slack = L / 16 < 1 ? 1 : L / 16 > JBD_REVOKE_BLOCKS_MAX ? JBD_REVOKE_BLOCKS_MAX : L / 16;
	g->max_txn = max_opt;
	if (!g->max_txn) {
		g->max_txn = L / 4;
		while (g->max_txn && 2 * (geom_log_res(g, g->max_txn) + g->slack) + 1 > L)
			g->max_txn--;
	}
	if (!g->max_txn || 2 * (geom_log_res(g, g->max_txn) + g->slack) + 1 > L)
		return jbd_err_set(err, -EINVAL,
				   "the log (%u blocks) cannot hold two transactions of %u blocks",
				   L, max_opt);
	/* a descriptor and its tags fit the ring; two transactions fit the log */
	ASSERT(g->ring >= 4 && g->dcap >= 1 && g->dcap < g->ring);
	ASSERT(g->slack >= 1 && 2 * (geom_log_res(g, g->max_txn) + g->slack) < L);
	return 0;
}

int jbd_opts_check_format(const struct ujbd_opts *o, const struct jbd_format_opts *f,
			  struct jbd_err *err)
{
	struct jbd2_sb sb;
	struct jbd_fmt fmt;
	struct geom g;
	int rc = jbd_format_opts_check(f, err);

	if (rc)
		return rc;
	jbd_format_fill_sb(&sb, f);
	jbd_fmt_from_sb(&sb, &fmt);
	return geom_compute(&fmt, jbd_get_be32(sb.s_maxlen) - jbd_get_be32(sb.s_first), f->blocksize,
			    o->max_transaction_blocks, &g, err);
}

/* Sizes of everything, from the journal's geometry. */
static int open_geometry(struct ujbd *j, struct jbd_err *err)
{
	uint32_t L = jbd_log_size(j), bs = j->j_blocksize;
	const struct jbd2_sb *sb = &j->j_jnl.j_sb;
	struct geom g;
	int rc = geom_compute(&j->j_jnl.j_fmt, L, bs, j->j_opts.max_transaction_blocks, &g, err);

	if (rc)
		return rc;
	j->j_ring_n = g.ring;
	j->j_dcap = g.dcap;
	j->j_rcap = g.rcap;
	j->j_slack = g.slack;
	j->j_max_txn = g.max_txn;
	/* Ordered data is journaled only where that lets the commit be async
	 * (its one purpose: elsewhere it would only write the data twice);
	 * a home write of a block journaled before needs a revoke record
	 * (v2), and a transaction never journals more than a quarter of
	 * itself as data. */
	if (j->j_opts.data_mode == UJBD_DATA_ORDERED && j->j_async && jbd_sb_is_v2(sb) &&
	    j->j_jnl.j_fmt.f_csum_v23) {
		j->j_jdata_max = j->j_opts.ordered_journal_bytes / bs;
		if (j->j_jdata_max > j->j_max_txn / 4)
			j->j_jdata_max = j->j_max_txn / 4;
	}
	/* A slot's credit reserve: small against a transaction, so that
	 * credits parked in idle slots do not commit it early. */
	j->j_pool_chunk = j->j_max_txn / 64 > 16 ? 16 : j->j_max_txn / 64;
	j->j_transaction_sequence = jbd_get_be32(sb->s_sequence);
	j->j_commit_sequence = j->j_transaction_sequence - 1;
	j->j_commit_request = j->j_commit_sequence;
	j->j_tail_sequence = j->j_transaction_sequence;
	uint32_t head = jbd_sb_is_v2(sb) ? jbd_get_be32(sb->s_head) : 0;
	j->j_head = head >= j->j_jnl.j_first && head < j->j_jnl.j_last ? head : j->j_jnl.j_first;
	j->j_tail = j->j_head;
	j->j_sb_empty = true;
	ASSERT(j->j_head >= j->j_jnl.j_first && j->j_head < j->j_jnl.j_last);
	ASSERT(j->j_pool_chunk <= j->j_max_txn && j->j_jdata_max <= j->j_max_txn / 4);
	return 0;
}

static int open_queues(struct ujbd *j, const struct ujbd_opts *o)
{
	const struct jbd_loc *loc = &j->j_jnl.j_loc;
	int rc;

	j->j_jq = o->journal_queue;
	j->j_dq = o->data_queue;
	if (!j->j_jq) {
		if (loc->j_data == loc->j_dev && j->j_dq) {
			j->j_jq = j->j_dq;
		} else {
			rc = blk_queue_new(loc->j_dev, o->blk_opts, &j->j_jq);
			if (rc)
				return rc;
			j->j_own_jq = true;
		}
	}
	if (!j->j_dq) {
		if (loc->j_data == loc->j_dev) {
			j->j_dq = j->j_jq;
		} else {
			rc = blk_queue_new(loc->j_data, o->blk_opts, &j->j_dq);
			if (rc)
				return rc;
			j->j_own_dq = true;
		}
	}
	ASSERT(j->j_jq && j->j_dq);
	ASSERT(!(j->j_own_jq && j->j_own_dq && j->j_jq == j->j_dq)); /* freed once */
	return 0;
}

static int open_alloc(struct ujbd *j)
{
	uint32_t bs = j->j_blocksize, nckpt = JBD_CKPT_BATCH;
	int rc;

	if (nckpt > (8u << 20) / bs)
		nckpt = (8u << 20) / bs;
	j->j_ckpt_n = nckpt;
	rc = buf_cache_new(j->j_dq, bs, j->j_data_blocks, j->j_opts.cache_blocks, &j->j_cache);
	if (rc)
		return rc;
	j->j_ring = calloc(j->j_ring_n, sizeof(*j->j_ring));
	j->j_ckpt_io = calloc(nckpt, sizeof(*j->j_ckpt_io));
	j->j_ckpt_jh = calloc(nckpt, sizeof(*j->j_ckpt_jh));
	j->j_ckpt_txn = calloc(nckpt, sizeof(*j->j_ckpt_txn));
	j->j_commit_tags = calloc(j->j_dcap, sizeof(*j->j_commit_tags));
	j->j_commit_slots = calloc(j->j_dcap, sizeof(*j->j_commit_slots));
	j->j_commit_revs = calloc(j->j_rcap, sizeof(*j->j_commit_revs));
	/* about one bucket per cached block, 1 Ki to 1 Mi buckets */
	j->j_jh_mask = 1023;
	while (j->j_jh_mask + 1 < j->j_opts.cache_blocks && j->j_jh_mask < (1u << 20) - 1)
		j->j_jh_mask = j->j_jh_mask * 2 + 1;
	j->j_jh_hash = calloc((size_t)j->j_jh_mask + 1, sizeof(*j->j_jh_hash));
	if (!j->j_jh_hash || !j->j_ring || !j->j_ckpt_io || !j->j_ckpt_jh || !j->j_ckpt_txn || !j->j_commit_tags ||
	    !j->j_commit_slots || !j->j_commit_revs ||
	    posix_memalign((void **)&j->j_sb_buf, 4096, bs))
		return -ENOMEM;
	/* One run of memory, slot after slot: log blocks that follow each
	 * other in the ring and in the log go out as one bio (commit.c). */
	if (posix_memalign((void **)&j->j_ring_mem, 4096, (size_t)j->j_ring_n * bs))
		return -ENOMEM;
	ASSERT(((j->j_jh_mask + 1) & j->j_jh_mask) == 0); /* a power of two */
	ASSERT(j->j_ring_n > j->j_dcap && j->j_ckpt_n >= 1);
	for (uint32_t i = 0; i < j->j_ring_n; i++)
		j->j_ring[i].io_data = j->j_ring_mem + (size_t)i * bs;
	for (uint32_t i = 0; i < nckpt; i++)
		if (posix_memalign((void **)&j->j_ckpt_io[i].io_data, 4096, bs))
			return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		rc = jbd_revoke_table_init(&j->j_revoke_tables[i], j->j_slack * j->j_rcap);
		if (rc)
			return rc;
	}
	/* room for a block per log block, the running and committing
	 * transactions' on top, capped (then data stays ordered) */
	if (j->j_jdata_max) {
		uint64_t cap = (uint64_t)jbd_log_size(j) + 2ull * j->j_jdata_max;
		rc = jbd_jdata_init(&j->j_jdata, cap > JBD_JDATA_MAX ? JBD_JDATA_MAX : (uint32_t)cap);
		if (rc)
			return rc;
	}
	return 0;
}

static void open_sync_init(struct ujbd *j)
{
	ASSERT(!j->j_sync_init && j->j_max_txn);
	rt_mutex_init(&j->j_state_lock, "j_state_lock");
	rt_mutex_spin(&j->j_state_lock); /* the kernel's is a spin lock */
	rt_list_init(&j->j_cp);
	rt_mutex_init(&j->j_checkpoint_mutex, "j_checkpoint_mutex");
	rt_mutex_init(&j->j_sb_mutex, "j_sb_mutex");
	rt_cond_init(&j->j_wait_commit, "j_wait_commit");
	rt_cond_init(&j->j_wait_updates, "j_wait_updates");
	rt_cond_init(&j->j_wait_transaction_locked, "j_wait_transaction_locked");
	rt_cond_init(&j->j_wait_done_commit, "j_wait_done_commit");
	rt_cond_init(&j->j_wait_space, "j_wait_space");
	rt_cond_init(&j->j_wait_checkpoint, "j_wait_checkpoint");
	rt_cond_init(&j->j_wait_ckpt_io, "j_wait_ckpt_io");
	rt_cond_init(&j->j_wait_batch, "j_wait_batch");
	rt_cond_init(&j->j_wait_shadow, "j_wait_shadow");
	jbd_stats_init(&j->j_stats, j->j_max_txn);
	jbd_tracer_init(&j->j_tracer);
	j->j_sync_init = true;
}

static void jbd_free(struct ujbd *j)
{
	ASSERT(!j->j_task && !j->j_ckpt_task); /* the threads are gone */
	if (j->j_cache)
		buf_cache_free(j->j_cache);
	if (j->j_own_dq && j->j_dq)
		blk_queue_free(j->j_dq);
	if (j->j_own_jq && j->j_jq)
		blk_queue_free(j->j_jq);
	free(j->j_ring_mem);
	for (uint32_t i = 0; j->j_ckpt_io && i < j->j_ckpt_n; i++)
		free(j->j_ckpt_io[i].io_data);
	free(j->j_ring);
	free(j->j_ckpt_io);
	free(j->j_ckpt_jh);
	free(j->j_ckpt_txn);
	free(j->j_commit_tags);
	free(j->j_commit_slots);
	free(j->j_commit_revs);
	free(j->j_jh_hash);
	free(j->j_sb_buf);
	for (int i = 0; i < 2; i++)
		jbd_revoke_table_release(&j->j_revoke_tables[i]);
	jbd_jdata_release(&j->j_jdata);
	if (j->j_sync_init) {
		jbd_stats_release(&j->j_stats);
		rt_cond_release(&j->j_wait_shadow);
		rt_cond_release(&j->j_wait_batch);
		rt_cond_release(&j->j_wait_ckpt_io);
		rt_cond_release(&j->j_wait_checkpoint);
		rt_cond_release(&j->j_wait_space);
		rt_cond_release(&j->j_wait_done_commit);
		rt_cond_release(&j->j_wait_transaction_locked);
		rt_cond_release(&j->j_wait_updates);
		rt_cond_release(&j->j_wait_commit);
		rt_mutex_release(&j->j_sb_mutex);
		rt_mutex_release(&j->j_checkpoint_mutex);
		rt_mutex_release(&j->j_state_lock);
	}
	while (j->j_free_handles) {
		struct ujbd_handle *h = j->j_free_handles;
		j->j_free_handles = h->h_next_free;
		free(h);
	}
	jbd_slots_release(j);
	free(j);
}

static int open_threads(struct ujbd *j)
{
	int rc = rt_thread_create(&j->j_task, "kjournald", jbd_kjournald, j);

	if (rc)
		return rc;
	return rt_thread_create(&j->j_ckpt_task, "jbd2-ckpt", jbd_checkpointd, j);
}

static void stop_threads(struct ujbd *j, uint32_t flags)
{
	ASSERT(flags & (JBD_F_STOPPING | JBD_F_STOP_CKPT));
	ASSERT(!(flags & JBD_F_HARD) || (flags & JBD_F_STOPPING)); /* a hard stop stops both */
	rt_mutex_lock(&j->j_state_lock);
	__atomic_or_fetch(&j->j_flags, flags, __ATOMIC_RELEASE); /* hard_stop reads it unlocked */
	/* Everyone re-checks the flags: a forced checkpoint waiting for a
	 * commit that a hard stop will never make, say. */
	rt_cond_broadcast(&j->j_wait_commit);
	rt_cond_broadcast(&j->j_wait_batch);
	rt_cond_broadcast(&j->j_wait_checkpoint);
	if (flags & JBD_F_HARD) {
		rt_cond_broadcast(&j->j_wait_done_commit);
		rt_cond_broadcast(&j->j_wait_updates);
		rt_cond_broadcast(&j->j_wait_space);
		rt_cond_broadcast(&j->j_wait_transaction_locked);
		rt_cond_broadcast(&j->j_wait_shadow);
	}
	rt_mutex_unlock(&j->j_state_lock);
	if (j->j_ckpt_task && (flags & JBD_F_STOP_CKPT)) {
		rt_thread_join(j->j_ckpt_task);
		j->j_ckpt_task = NULL;
	}
	if (j->j_task && (flags & JBD_F_STOPPING)) {
		rt_thread_join(j->j_task);
		j->j_task = NULL;
	}
	ASSERT(!(flags & JBD_F_STOP_CKPT) || !j->j_ckpt_task);
	ASSERT(!(flags & JBD_F_STOPPING) || !j->j_task);
}

int ujbd_open(const struct jbd_loc *loc, const struct ujbd_opts *opts,
	      struct ujbd **out, struct jbd_err *err)
{
	struct jbd_err ebuf;
	struct ujbd *j;
	int rc;

	if (!err)
		err = &ebuf;
	memset(err, 0, sizeof(*err));
	*out = NULL;
	j = aligned_alloc(64, sizeof(*j)); /* slot.c's fields have lines of their own */
	if (!j)
		return jbd_err_set(err, -ENOMEM, "out of memory");
	memset(j, 0, sizeof(*j));
	j->j_id = jbd_slot_new_jid();
	if (opts)
		j->j_opts = *opts;
	else
		ujbd_opts_default(&j->j_opts);
	/* ujbd_open cannot tell who else replays a location: AUTO is ON
	 * (ujbd_open_path turns it off for ext4's journals) */
	j->j_async = j->j_opts.async_commit != UJBD_ASYNC_COMMIT_OFF;
	rc = opts_check(loc, &j->j_opts, err);
	if (rc)
		goto fail;
	j->j_blocksize = loc->j_blocksize;
	j->j_data_blocks = loc->j_data_blocks;
	rc = open_data_span(j, loc, err); /* before a format destroys anything */
	if (!rc && j->j_opts.format)
		rc = open_format(loc, &j->j_opts, err);
	if (!rc)
		rc = jbd_journal_load(loc, &j->j_jnl, err);
	if (!rc)
		rc = open_check_sb(j, err);
	if (!rc)
		rc = open_geometry(j, err);
	if (rc)
		goto fail;
	rc = open_queues(j, &j->j_opts);
	if (!rc)
		rc = open_alloc(j);
	if (rc) {
		jbd_err_set(err, rc, "cannot set up the journal: %s", strerror(-rc));
		goto fail;
	}
	j->j_opts.journal_queue = j->j_opts.data_queue = NULL;
	open_sync_init(j);
	rc = open_threads(j);
	if (rc) {
		jbd_err_set(err, rc, "cannot start the journal threads: %s", strerror(-rc));
		stop_threads(j, JBD_F_STOPPING | JBD_F_STOP_CKPT);
		goto fail;
	}
	ASSERT(j->j_jq && j->j_dq && j->j_cache && j->j_task && j->j_ckpt_task);
	ASSERT(j->j_running == NULL && rt_list_empty(&j->j_cp));
	*out = j;
	return 0;
fail:
	jbd_free(j);
	return rc;
}

/* ---- close -------------------------------------------------------------- */

/* Free the journal, then tell its owner (the hook may close the devices
 * the journal used until jbd_close_free). */
static void close_end(struct ujbd *j, int rc)
{
	ujbd_close_fn fn = j->j_close_fn;
	void *arg = j->j_close_arg;

	jbd_close_free(j);
	if (fn)
		fn(arg, rc);
}

int ujbd_close(struct ujbd *j)
{
	int rc = 0, r;

	if (!j)
		return 0;
	stop_threads(j, JBD_F_STOP_CKPT);
	rc = ujbd_sync(j);
	rt_mutex_lock(&j->j_checkpoint_mutex);
	while ((r = jbd_checkpoint_pass(j, true)) > 0)
		;
	if (r < 0 && !rc)
		rc = r;
	stop_threads(j, JBD_F_STOPPING | JBD_F_CLOSING);
	ASSERT(!j->j_task && !j->j_ckpt_task);
	r = jbd_update_tail(j, true);
	rt_mutex_unlock(&j->j_checkpoint_mutex);
	if (r && !rc)
		rc = r;
	rt_mutex_lock(&j->j_state_lock);
	if (j->j_flags & JBD_F_ABORTED)
		rc = j->j_errno;
	rt_mutex_unlock(&j->j_state_lock);
	if (rc && (j->j_flags & JBD_F_ABORTED))
		jbd_abort_write_sb(j);
	close_end(j, rc);
	return rc;
}

void ujbd_close_hard(struct ujbd *j)
{
	if (!j)
		return;
	stop_threads(j, JBD_F_STOPPING | JBD_F_STOP_CKPT | JBD_F_HARD);
	close_end(j, -ESHUTDOWN);
}

void ujbd_set_close_hook(struct ujbd *j, ujbd_close_fn fn, void *arg)
{
	j->j_close_fn = fn;
	j->j_close_arg = arg;
}

/* Free what handles and transactions left; threads are stopped. */
void jbd_close_free(struct ujbd *j)
{
	struct ujbd_buf *put;
	struct jbd_txn *t;

	ASSERT(!j->j_task && !j->j_ckpt_task); /* nothing else runs */
	rt_mutex_lock(&j->j_state_lock);
	struct jbd_txn *all[2] = { j->j_committing, j->j_running };
	for (int i = 0; i < 2; i++) {
		t = all[i];
		if (!t)
			continue;
		__jbd_free_retired(t);
		struct jbd_jh *jh;
		while ((jh = RT_LIST_FIRST(&t->t_buffers, struct jbd_jh, b_tlink))) {
			__jbd_list_del_t(t, jh);
			jh->b_transaction = jh->b_next_transaction = NULL;
			put = NULL;
			__jbd_jh_maybe_free(j, jh, &put);
			buf_put(put);
		}
		while ((jh = RT_LIST_FIRST(&t->t_data, struct jbd_jh, b_dlink))) {
			__jbd_list_del_d(t, jh);
			jh->b_data_next = NULL;
			put = NULL;
			__jbd_jh_maybe_free(j, jh, &put);
			buf_put(put);
		}
		ASSERT(t->t_nr_buffers == 0 && t->t_nr_data == 0);
	}
	while ((t = RT_LIST_POP(&j->j_cp, struct jbd_txn, t_cplink))) {
		struct jbd_jh *jh;
		while ((jh = RT_LIST_FIRST(&t->t_ckpt, struct jbd_jh, b_cplink))) {
			__jbd_list_del_cp(t, jh);
			put = NULL;
			__jbd_jh_maybe_free(j, jh, &put);
			buf_put(put);
		}
		ASSERT(t->t_nr_ckpt == 0 && t != all[0] && t != all[1]);
		free(t);
	}
	/* Buffers of a running transaction may still be joined to both. */
	for (int i = 0; i < 2; i++)
		free(all[i]);
	j->j_running = j->j_committing = NULL;
	__atomic_store_n(&j->j_open, NULL, __ATOMIC_SEQ_CST);
	rt_mutex_unlock(&j->j_state_lock);
	jbd_free(j);
}

/* ---- accessors ----------------------------------------------------------- */

uint32_t ujbd_block_size(const struct ujbd *j)
{
	return j->j_blocksize;
}

uint64_t ujbd_data_blocks(const struct ujbd *j)
{
	return j->j_data_blocks;
}

static void stats_add_boosts(struct ujbd_stats *out, struct blk_queue *q)
{
	struct blk_queue_stats qs;

	blk_queue_stats(q, &qs);
	out->boosted_rqs += qs.boosted_rqs;
	out->boost_wait_before_ns_sum += qs.boost_wait_before_ns_sum;
	out->boost_wait_after_ns_sum += qs.boost_wait_after_ns_sum;
	if (qs.boost_wait_before_ns_max > out->boost_wait_before_ns_max)
		out->boost_wait_before_ns_max = qs.boost_wait_before_ns_max;
	if (qs.boost_wait_after_ns_max > out->boost_wait_after_ns_max)
		out->boost_wait_after_ns_max = qs.boost_wait_after_ns_max;
}

int ujbd_stats(struct ujbd *j, struct ujbd_stats *out)
{
	jbd_stats_snapshot(&j->j_stats, out);
	stats_add_boosts(out, j->j_jq);
	if (j->j_dq != j->j_jq)
		stats_add_boosts(out, j->j_dq);
	return 0;
}

void ujbd_set_trace_hook(struct ujbd *j, ujbd_trace_fn fn, void *arg)
{
	jbd_tracer_set(&j->j_tracer, fn, arg, false);
}

void jbd_set_commit_hook(struct ujbd *j, ujbd_trace_fn fn, void *arg)
{
	jbd_tracer_set(&j->j_tracer, fn, arg, true);
}

void ujbd_set_data_hook(struct ujbd *j, ujbd_data_fn fn, void *arg)
{
	rt_mutex_lock(&j->j_state_lock);
	j->j_data_fn = fn;
	j->j_data_arg = arg;
	rt_mutex_unlock(&j->j_state_lock);
}

ujbd_tid_t ujbd_committed_tid(struct ujbd *j)
{
	ujbd_tid_t tid;

	rt_mutex_lock(&j->j_state_lock);
	tid = j->j_commit_sequence;
	ASSERT(ujbd_tid_gt(j->j_transaction_sequence, tid)); /* nothing committed ahead */
	rt_mutex_unlock(&j->j_state_lock);
	return tid;
}

ujbd_tid_t ujbd_running_tid(struct ujbd *j)
{
	ujbd_tid_t tid;

	rt_mutex_lock(&j->j_state_lock);
	ASSERT(!j->j_running || !j->j_committing ||
	       ujbd_tid_gt(j->j_running->t_tid, j->j_committing->t_tid));
	if (j->j_running)
		tid = j->j_running->t_tid;
	else if (j->j_committing)
		tid = j->j_committing->t_tid;
	else
		tid = j->j_transaction_sequence - 1;
	rt_mutex_unlock(&j->j_state_lock);
	return tid;
}

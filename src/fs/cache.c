/*
 * The file-system model's data path: the page cache, buffered and direct
 * read and write, fsync, and the pdflush writeback thread.
 *
 * The one idea: who issues each data I/O, and when, is what the 2.6.2x
 * kernel did, because that is what CFQ sees.
 *   - A read that misses goes SYNC from the reader's thread; a sequential
 *     read brings in a read-ahead window (up to readahead_kib) with it.
 *   - A buffered write dirties the page. Under data=ordered a page whose
 *     block the write allocated is also ordered data of the running
 *     transaction (ext3's t_sync_datalist; jbd2's ordered inodes): whoever
 *     writes it first takes it off that list (fsync from the caller,
 *     pdflush), and the transaction's commit writes what is left before its
 *     log blocks, on the committing thread (kjournald: its ioprio, its CFQ
 *     queue), through the journal's data hook (lfs_ordered_hook): Andrew
 *     Morton's "ordered-mode data writeback at the start of commit". Under
 *     data=journal the new block's data goes through the journal
 *     (ujbd_write_data) and the page is clean.
 *   - Dirty pages are written by pdflush, as async bios from its own thread
 *     (its ioprio: CFQ's shared async queue of that class and level), after
 *     dirty_expire or while above dirty_background_ratio; a writer above
 *     dirty_ratio is throttled (it sleeps and kicks pdflush).
 *   - fsync writes the file's dirty pages from the caller (SYNC with
 *     fsync_sync), then
 *     commits the transaction that last changed the inode.
 * Pages hold no data: a page is (inode, file block, generation), and a
 * block's contents are derived from that (lfs_fill_data), so 1 GiB of
 * "RAM" costs a few MiB; a page goes to disk as a stamp of 32 bytes
 * (BLK_STAMPED), which the simulated disks keep as it is. Clean pages are evicted LRU at ram_bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"
#include "rt/assert.h"
#include "priv/blk.h"

/* ---- lists and hash [pc_lock] ---- */

static void list_del(struct lfs_list *l, struct lfs_page *pg)
{
	ASSERT(l->n > 0 && !rt_list_empty(&pg->pg_link));
	rt_list_del(&pg->pg_link);
	l->n--;
}

static void list_add(struct lfs_list *l, struct lfs_page *pg)
{
	rt_list_add_tail(&l->head, &pg->pg_link);
	l->n++;
}

static struct lfs_page *list_first(struct lfs_list *l)
{
	return RT_LIST_FIRST(&l->head, struct lfs_page, pg_link);
}

static size_t pc_slot(const struct fs *fs, fs_ino_t ino, uint64_t fb)
{
	uint64_t h = (ino * 0x9E3779B97F4A7C15ull) ^ (fb * 0xC2B2AE3D27D4EB4Full);

	return (size_t)((h ^ (h >> 29)) % fs->pc_nhash);
}

static struct lfs_page *pc_find(struct fs *fs, fs_ino_t ino, uint64_t fb)
{
	for (struct lfs_page *p = fs->pc_hash[pc_slot(fs, ino, fb)]; p; p = p->pg_hnext)
		if (p->pg_ino == ino && p->pg_fblock == fb)
			return p;
	return NULL;
}

static void pc_unhash(struct fs *fs, struct lfs_page *pg)
{
	struct lfs_page **pp = &fs->pc_hash[pc_slot(fs, pg->pg_ino, pg->pg_fblock)];

	while (*pp != pg)
		pp = &(*pp)->pg_hnext;
	*pp = pg->pg_hnext;
	fs->pc_pages--;
	fs->fs_ino_pages[pg->pg_ino - 1]--;
}

/* Unlink a page from its list (not under writeback). */
static void pc_unlist(struct fs *fs, struct lfs_page *pg)
{
	list_del(pg->pg_dirty ? &fs->pc_dirty : &fs->pc_clean, pg);
}

/* Make room for one page: evict the least recently used clean page. */
static void pc_evict(struct fs *fs)
{
	struct lfs_page *pg;

	while (fs->pc_pages >= fs->pc_max && (pg = list_first(&fs->pc_clean))) {
		list_del(&fs->pc_clean, pg);
		pc_unhash(fs, pg);
		free(pg);
		fs->fs_st.evictions++;
	}
}

/* The page of (ino, fb), created clean when absent (NULL: no memory). */
static struct lfs_page *pc_get(struct fs *fs, fs_ino_t ino, uint64_t fb, uint64_t pb)
{
	struct lfs_page *pg = pc_find(fs, ino, fb);
	size_t s;

	if (pg)
		return pg;
	pc_evict(fs);
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return NULL;
	pg->pg_ino = ino;
	pg->pg_fblock = fb;
	pg->pg_pblock = pb;
	s = pc_slot(fs, ino, fb);
	pg->pg_hnext = fs->pc_hash[s];
	fs->pc_hash[s] = pg;
	fs->pc_pages++;
	fs->fs_ino_pages[ino - 1]++;
	list_add(&fs->pc_clean, pg);
	return pg;
}

/* A page is used: to the LRU's young end (dirty pages stay in dirty order). */
static void pc_touch(struct fs *fs, struct lfs_page *pg)
{
	if (!pg->pg_dirty && !pg->pg_wb) {
		list_del(&fs->pc_clean, pg);
		list_add(&fs->pc_clean, pg);
	}
}

static void pc_set_dirty(struct fs *fs, struct lfs_page *pg, uint32_t gen)
{
	pg->pg_gen = gen;
	if (pg->pg_dirty)
		return;
	if (!pg->pg_wb)
		list_del(&fs->pc_clean, pg);
	pg->pg_dirty = true;
	pg->pg_dirty_ns = rt_now_ns();
	if (!pg->pg_wb)
		list_add(&fs->pc_dirty, pg);
}

static void pc_set_clean(struct fs *fs, struct lfs_page *pg, uint32_t gen)
{
	pg->pg_gen = gen;
	if (!pg->pg_dirty)
		return;
	if (!pg->pg_wb)
		list_del(&fs->pc_dirty, pg);
	pg->pg_dirty = false;
	if (!pg->pg_wb)
		list_add(&fs->pc_clean, pg);
}

/* pg becomes ordered data of transaction tid [pc_lock]. */
static void ord_add(struct fs *fs, struct lfs_page *pg, ujbd_tid_t tid)
{
	const struct lfs_page *last;

	ASSERT(!pg->pg_otid && tid && (pg->pg_dirty || pg->pg_wb));
	last = RT_LIST_LAST(&fs->pc_ord, struct lfs_page, pg_olink);
	ASSERT(!last || ujbd_tid_geq(tid, last->pg_otid));
	pg->pg_otid = tid;
	rt_list_add_tail(&fs->pc_ord, &pg->pg_olink);
	fs->pc_ord_n++;
}

/* pg is on disk, or dropped: no longer ordered data [pc_lock]. */
static void ord_del(struct fs *fs, struct lfs_page *pg)
{
	if (!pg->pg_otid)
		return;
	ASSERT(fs->pc_ord_n > 0);
	rt_list_del(&pg->pg_olink);
	pg->pg_otid = 0;
	fs->pc_ord_n--;
}

int lfs_pc_init(struct fs *fs)
{
	int rc;

	fs->pc_max = fs->fs_p.ram_bytes / LFS_BS;
	if (fs->pc_max < 16)
		fs->pc_max = 16;
	fs->pc_nhash = 4096;
	while (fs->pc_nhash < fs->pc_max / 4 && fs->pc_nhash < (1u << 22))
		fs->pc_nhash *= 2;
	fs->pc_hash = calloc(fs->pc_nhash, sizeof(*fs->pc_hash));
	if (!fs->pc_hash)
		return -ENOMEM;
	rt_list_init(&fs->pc_clean.head);
	rt_list_init(&fs->pc_dirty.head);
	rt_list_init(&fs->pc_ord);
	rc = rt_mutex_init(&fs->pc_lock, "pc_lock");
	if (!rc)
		rc = rt_mutex_init(&fs->pool_lock, "pool_lock");
	if (!rc)
		rc = rt_cond_init(&fs->pc_done, "pc_done");
	if (!rc)
		rc = rt_cond_init(&fs->pd_wake, "pd_wake");
	return rc;
}

void lfs_pc_release(struct fs *fs)
{
	for (size_t i = 0; i < fs->pc_nhash; i++) {
		struct lfs_page *p = fs->pc_hash[i];

		while (p) {
			struct lfs_page *n = p->pg_hnext;
			free(p);
			p = n;
		}
	}
	free(fs->pc_hash);
	for (unsigned c = 0; c < LFS_POOL_CLASSES; c++)
		while (fs->pool[c].n)
			free(fs->pool[c].buf[--fs->pool[c].n]);
	rt_mutex_release(&fs->pool_lock);
	rt_cond_release(&fs->pd_wake);
	rt_cond_release(&fs->pc_done);
	rt_mutex_release(&fs->pc_lock);
}

static bool dio_busy(const struct fs *fs, fs_ino_t ino)
{
	for (unsigned i = 0; i < fs->dio_n; i++)
		if (fs->dio_ino[i] == ino)
			return true;
	return false;
}

/*
 * Drop page p of the inode truncated by transaction tid, or note it busy
 * [pc_lock]: under writeback, or ordered data of an earlier transaction,
 * which is committing (its metadata names the block) and must write it
 * first. Ordered data of tid itself is dropped: that commit frees the
 * block it allocated.
 */
static void trunc_page(struct fs *fs, struct lfs_page *p, ujbd_tid_t tid, bool *busy)
{
	if (p->pg_wb || (p->pg_otid && p->pg_otid != tid)) {
		*busy = true;
		return;
	}
	ord_del(fs, p);
	pc_unlist(fs, p);
	pc_unhash(fs, p);
	free(p);
}

void lfs_pc_truncate(struct fs *fs, fs_ino_t ino, uint64_t from, uint64_t to,
		     ujbd_tid_t tid)
{
	rt_mutex_lock(&fs->pc_lock);
	for (;;) {
		bool busy = dio_busy(fs, ino);

		/* the file's own pages by lookup, O(file); a whole-cache scan
		 * only for pages that lie outside [from, to) (none, normally) */
		for (uint64_t fb = from; fb < to && fs->fs_ino_pages[ino - 1]; fb++) {
			struct lfs_page *p = pc_find(fs, ino, fb);

			if (p)
				trunc_page(fs, p, tid, &busy);
		}
		if (!fs->fs_ino_pages[ino - 1] && !busy)
			break;
		for (size_t i = 0; i < fs->pc_nhash && fs->fs_ino_pages[ino - 1]; i++) {
			struct lfs_page *p = fs->pc_hash[i], *n;

			for (; p; p = n) {
				n = p->pg_hnext;
				if (p->pg_ino != ino || p->pg_fblock < from)
					continue;
				trunc_page(fs, p, tid, &busy);
			}
		}
		if (!busy)
			break;
		rt_cond_wait(&fs->pc_done, &fs->pc_lock);
	}
	rt_mutex_unlock(&fs->pc_lock);
}

/* ---- data I/O ---- */

struct lfs_run {
	struct blk_bio bio;
	uint8_t *buf;      /* a read's bytes (from the pool) */
	struct dev_stamp *st; /* a write's stamps (BLK_STAMPED) */
	uint32_t n;
};

/* A page taken for writeback, with what it held when taken. */
struct lfs_wb {
	struct lfs_page *pg;
	fs_ino_t ino;
	uint32_t gen;
	uint64_t fb, pb;
};

/* Submit runs[0..n) (flags: SYNC or 0) under one plug, then wait for all. */
static int runs_io(struct fs *fs, struct lfs_run *runs, size_t n)
{
	struct blk_plug plug;
	int rc = 0;
	size_t sub = 0;

	blk_start_plug(&plug);
	for (; sub < n && !rc; sub++)
		rc = blk_submit(fs->fs_q, &runs[sub].bio);
	if (rc)
		sub--;
	blk_finish_plug(&plug);
	for (size_t i = 0; i < sub; i++) {
		int e = blk_wait(&runs[i].bio);
		rc = rc ? rc : e;
	}
	return rc;
}

/* The pool class of a run of n blocks (1 <= n <= LFS_BIO_MAX). */
static unsigned pool_class(uint32_t n)
{
	unsigned c = 0;

	while ((1u << c) < n)
		c++;
	return c;
}

/* A buffer for n blocks, from the pool when it has one (NULL: no memory). */
static uint8_t *buf_get(struct fs *fs, uint32_t n)
{
	unsigned c = pool_class(n);
	uint8_t *b = NULL;

	ASSERT(n >= 1 && n <= LFS_BIO_MAX);
	rt_mutex_lock(&fs->pool_lock);
	if (fs->pool[c].n)
		b = fs->pool[c].buf[--fs->pool[c].n];
	rt_mutex_unlock(&fs->pool_lock);
	return b ? b : malloc((size_t)LFS_BS << c);
}

static void buf_put(struct fs *fs, uint8_t *b, uint32_t n)
{
	unsigned c = pool_class(n);

	if (!b)
		return;
	rt_mutex_lock(&fs->pool_lock);
	if (fs->pool[c].n < LFS_POOL_KEEP) {
		fs->pool[c].buf[fs->pool[c].n++] = b;
		b = NULL;
	}
	rt_mutex_unlock(&fs->pool_lock);
	free(b);
}

/* A run of n blocks from pb: a read into a buffer, or a write of a stamp
 * a block (the data is a header and zeros, lfs_fill_data; the simulated
 * disks keep the stamp, 32 bytes, and any other disk gets the bytes). */
static int run_init(struct fs *fs, struct lfs_run *r, enum blk_op op, uint32_t flags,
		    uint64_t pb, uint32_t n)
{
	memset(r, 0, sizeof(*r));
	if (op == BLK_OP_WRITE)
		r->st = malloc(n * sizeof(*r->st));
	else
		r->buf = buf_get(fs, n);
	if (!r->buf && !r->st)
		return -ENOMEM;
	r->n = n;
	r->bio.b_op = op;
	r->bio.b_flags = flags | (op == BLK_OP_WRITE ? BLK_STAMPED : 0);
	r->bio.b_sector = pb * (LFS_BS >> BLK_SECTOR_SHIFT);
	r->bio.b_nr_sectors = n * (LFS_BS >> BLK_SECTOR_SHIFT);
	r->bio.b_buf = r->buf ? (void *)r->buf : (void *)r->st;
	return 0;
}

static void run_free(struct fs *fs, struct lfs_run *r)
{
	buf_put(fs, r->buf, r->n);
	free(r->st);
}

static void runs_free(struct fs *fs, struct lfs_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_free(fs, &runs[i]);
	free(runs);
}

static int wb_cmp(const void *a, const void *b)
{
	const struct lfs_wb *x = a, *y = b;

	return x->pb < y->pb ? -1 : x->pb > y->pb;
}

/* Take a dirty page for writeback [pc_lock]: its generation now. */
static void take_wb(struct fs *fs, struct lfs_page *pg, struct lfs_wb *wb, size_t *n)
{
	list_del(&fs->pc_dirty, pg);
	pg->pg_dirty = false;
	pg->pg_wb = true;
	fs->pc_wb++;
	fs->fs_ino_wb[pg->pg_ino - 1]++;
	wb[*n] = (struct lfs_wb){ pg, pg->pg_ino, pg->pg_gen, pg->pg_fblock, pg->pg_pblock };
	(*n)++;
}

/* How a batch of page writes goes out: the bios' flags (BLK_SYNC for fsync,
 * 0 for pdflush, the commit's for ordered data), ioprio (0: the thread's)
 * and blk_boost tag. */
struct lfs_io {
	uint32_t flags;
	uint16_t ioprio;
	uint64_t tag;
};

/*
 * Write pages taken for writeback (take_wb), in physical order, in
 * contiguous runs; then clear pg_wb, and a page's ordered state: its
 * block holds data now.
 */
static int write_pages(struct fs *fs, struct lfs_wb *wb, size_t n, const struct lfs_io *io)
{
	struct lfs_run *runs = calloc(n ? n : 1, sizeof(*runs));
	size_t nr = 0;
	int rc = runs ? 0 : -ENOMEM;

	qsort(wb, n, sizeof(*wb), wb_cmp);
	for (size_t i = 0; i < n && !rc;) {
		size_t k = 1;

		while (i + k < n && k < LFS_BIO_MAX && wb[i + k].pb == wb[i].pb + k)
			k++;
		rc = run_init(fs, &runs[nr], BLK_OP_WRITE, io->flags, wb[i].pb, (uint32_t)k);
		if (!rc) {
			runs[nr].bio.b_ioprio = io->ioprio;
			runs[nr].bio.b_boost_tag = io->tag;
		}
		for (size_t m = 0; m < k && !rc; m++)
			lfs_stamp_data(&runs[nr].st[m], wb[i + m].ino, wb[i + m].fb, wb[i + m].gen);
		nr += !rc;
		i += k;
	}
	if (!rc)
		rc = runs_io(fs, runs, nr);
	rt_mutex_lock(&fs->pc_lock);
	for (size_t i = 0; i < n; i++) {
		struct lfs_page *pg = wb[i].pg;

		pg->pg_wb = false;
		fs->pc_wb--;
		fs->fs_ino_wb[pg->pg_ino - 1]--;
		if (rc && !pg->pg_dirty) {        /* failed: dirty again */
			pg->pg_dirty = true;
			pg->pg_dirty_ns = rt_now_ns();
		}
		if (!rc)
			ord_del(fs, pg);
		list_add(pg->pg_dirty ? &fs->pc_dirty : &fs->pc_clean, pg);
	}
	if (!rc)
		fs->fs_st.data_writes += n;
	rt_cond_broadcast(&fs->pc_done);
	rt_mutex_unlock(&fs->pc_lock);
	if (runs)
		runs_free(fs, runs, nr);
	return rc;
}

/* ---- pdflush ---- */

static uint64_t dirty_limit(const struct fs *fs, unsigned ratio)
{
	return fs->fs_p.ram_bytes / LFS_BS * ratio / 100;
}

/* One pass: expired pages, and the oldest while above the background
 * threshold, up to a chunk. Returns the pages written. */
static size_t pdflush_pass(struct fs *fs, struct lfs_wb *wb)
{
	uint64_t now = rt_now_ns(), bg = dirty_limit(fs, fs->fs_p.dirty_background_ratio);
	struct lfs_page *pg;
	size_t n = 0;

	rt_mutex_lock(&fs->pc_lock);
	while (n < fs->fs_p.writeback_chunk_blocks && (pg = list_first(&fs->pc_dirty))) {
		bool expired = pg->pg_dirty_ns + fs->fs_p.dirty_expire_ns <= now;

		if (!expired && fs->pc_dirty.n + fs->pc_wb <= bg && !fs->pd_stop)
			break;
		take_wb(fs, pg, wb, &n);
	}
	fs->fs_st.writeback_blocks += n;
	rt_mutex_unlock(&fs->pc_lock);
	if (n)
		write_pages(fs, wb, n, &(struct lfs_io){ 0 });
	return n;
}

static void pdflush_main(void *arg)
{
	struct fs *fs = arg;
	size_t cap = fs->fs_p.writeback_chunk_blocks;
	struct lfs_wb *wb = calloc(cap, sizeof(*wb));

	rt_ioprio_set(fs->fs_p.pdflush_ioprio);
	rt_task(); /* a kernel thread: scheduled like any task (sim CFS) */
	rt_mutex_lock(&fs->pc_lock);
	while (!fs->pd_stop) {
		if (!fs->pd_kick)
			rt_cond_timedwait(&fs->pd_wake, &fs->pc_lock,
					  rt_now_ns() + fs->fs_p.writeback_interval_ns);
		fs->pd_kick = false;
		if (fs->pd_stop || !wb)
			continue;
		fs->fs_st.pdflush_wakeups++;
		rt_mutex_unlock(&fs->pc_lock);
		while (pdflush_pass(fs, wb) == cap)
			;
		rt_mutex_lock(&fs->pc_lock);
	}
	rt_mutex_unlock(&fs->pc_lock);
	free(wb);
}

int lfs_pdflush_start(struct fs *fs)
{
	return rt_thread_create(&fs->pd_thread, "pdflush", pdflush_main, fs);
}

void lfs_pdflush_stop(struct fs *fs)
{
	rt_mutex_lock(&fs->pc_lock);
	fs->pd_stop = true;
	rt_cond_signal(&fs->pd_wake);
	rt_mutex_unlock(&fs->pc_lock);
	rt_thread_join(fs->pd_thread);
	fs->pd_thread = NULL;
}

/* Write back dirty pages of ino (every inode: 0) from the calling thread,
 * waiting for writeback in flight. */
static int flush_pages(struct fs *fs, fs_ino_t ino, uint32_t flags, uint64_t *written)
{
	size_t cap = 256, n;
	struct lfs_wb *wb = malloc(cap * sizeof(*wb));
	int rc = wb ? 0 : -ENOMEM;

	*written = 0;
	while (!rc) {
		struct lfs_page *p, *nx;

		n = 0;
		rt_mutex_lock(&fs->pc_lock);
		RT_LIST_FOR_EACH_SAFE(p, nx, &fs->pc_dirty.head, struct lfs_page, pg_link) {
			if (n == cap)
				break;
			if (!ino || p->pg_ino == ino)
				take_wb(fs, p, wb, &n);
		}
		bool busy = !n && (ino ? fs->fs_ino_wb[ino - 1] > 0 : fs->pc_wb > 0);
		if (!n && busy)
			rt_cond_wait(&fs->pc_done, &fs->pc_lock);
		rt_mutex_unlock(&fs->pc_lock);
		if (!n && !busy)
			break;
		if (!n)
			continue;
		rc = write_pages(fs, wb, n, &(struct lfs_io){ .flags = flags });
		*written += n;
	}
	free(wb);
	return rc;
}

int lfs_pc_sync(struct fs *fs)
{
	uint64_t n;

	return flush_pages(fs, 0, 0, &n);
}

int fs_fsync(struct fs *fs, fs_ino_t ino)
{
	ujbd_tid_t tid;
	uint64_t n = 0;
	int rc;

	if (!ino || ino > fs->fs_ninodes)
		return -EINVAL;
	rt_cpu(fs->fs_p.cpu_op_ns);
	rc = flush_pages(fs, ino,
			 fs->fs_p.fsync_sync ? BLK_SYNC | (fs->fs_p.fsync_noidle ? BLK_NOIDLE : 0) : 0,
			 &n);
	rt_mutex_lock(&fs->pc_lock);
	fs->fs_st.fsync_blocks += n;
	rt_mutex_unlock(&fs->pc_lock);
	rt_mutex_lock(&fs->fs_lock);
	tid = fs->fs_itid[ino - 1];
	rt_mutex_unlock(&fs->fs_lock);
	if (rc)
		return rc;
	if (tid) {
		bool running = tid == ujbd_running_tid(fs->fs_j);

		rc = ujbd_commit_tid(fs->fs_j, tid);
		if (!rc)
			rc = ujbd_wait_tid(fs->fs_j, tid);
		if (running)
			return rc;   /* the commit block's flush covered the data */
	}
	return !rc && n && fs->fs_p.barrier ? blk_flush(fs->fs_q) : rc;
}

/* ---- throttling ---- */

/* Dirty memory as balance_dirty_pages saw it: dirty pages and pages under
 * writeback [pc_lock]. */
static uint64_t dirty_now(const struct fs *fs)
{
	return fs->pc_dirty.n + fs->pc_wb;
}

/*
 * balance_dirty_pages: above dirty_ratio the writer waits (congestion_wait
 * steps of throttle_wait) for pdflush to bring dirty memory down; above the
 * background ratio pdflush is woken. No lock held.
 */
static void throttle(struct fs *fs)
{
	uint64_t lim = dirty_limit(fs, fs->fs_p.dirty_ratio);
	uint64_t bg = dirty_limit(fs, fs->fs_p.dirty_background_ratio), t0 = 0;

	rt_mutex_lock(&fs->pc_lock);
	while (dirty_now(fs) > lim && !fs->pd_stop) {
		if (!t0) {
			t0 = rt_now_ns();
			fs->fs_st.throttled++;
		}
		fs->pd_kick = true;
		rt_cond_signal(&fs->pd_wake);
		rt_cond_timedwait(&fs->pc_done, &fs->pc_lock, rt_now_ns() + fs->fs_p.throttle_wait_ns);
	}
	if (t0)
		fs->fs_st.throttle_ns += rt_now_ns() - t0;
	if (dirty_now(fs) > bg && !fs->pd_kick) {
		fs->pd_kick = true;
		rt_cond_signal(&fs->pd_wake);
	}
	rt_mutex_unlock(&fs->pc_lock);
}

/* ---- ordered data at commit ---- */

/*
 * The journal's data hook (ujbd_set_data_hook): write the ordered pages of
 * transactions up to io->tid that nobody has written yet, from the
 * committing thread with the commit's flags and priority, and wait for
 * those another thread is writing. Returns the pages this call wrote.
 */
int lfs_ordered_hook(void *arg, const struct ujbd_data_io *io)
{
	struct fs *fs = arg;
	const struct lfs_io how = { io->bio_flags, io->ioprio, io->boost_tag };
	size_t cap = 256, n;
	struct lfs_wb *wb = malloc(cap * sizeof(*wb));
	int rc = wb ? 0 : -ENOMEM, total = 0;

	while (!rc) {
		struct lfs_page *p, *nx;
		bool busy = false;

		n = 0;
		rt_mutex_lock(&fs->pc_lock);
		RT_LIST_FOR_EACH_SAFE(p, nx, &fs->pc_ord, struct lfs_page, pg_olink) {
			if (n == cap)
				break;
			if (!ujbd_tid_geq(io->tid, p->pg_otid))
				break;
			ASSERT(p->pg_dirty || p->pg_wb);
			if (p->pg_wb)
				busy = true;
			else
				take_wb(fs, p, wb, &n);
		}
		if (!n && busy)
			rt_cond_wait(&fs->pc_done, &fs->pc_lock);
		rt_mutex_unlock(&fs->pc_lock);
		if (!n && !busy)
			break;
		if (n) {
			rc = write_pages(fs, wb, n, &how);
			total += (int)n;
		}
	}
	free(wb);
	return rc ? rc : total;
}

/* ---- write ---- */

#define LFS_CHUNK 16u /* blocks per handle */

struct wchunk {
	fs_ino_t ino;
	uint64_t fb0;
	uint32_t n;
	uint64_t end;      /* byte end of the write within the chunk */
	bool direct;
	uint64_t pb[LFS_CHUNK];
	uint32_t gen[LFS_CHUNK];
	uint32_t done;     /* blocks mapped */
	bool dio;          /* registered in dio_ino */
};

/* Map (allocating) and attach one chunk [fs_lock]. */
static int chunk_map(struct fs *fs, struct lfs_tx *tx, struct wchunk *c, uint8_t *tmp)
{
	struct lfs_inode in;
	int rc = lfs_iget(fs, c->ino, &in);

	if (!rc && in.i_mode != LFS_FILE)
		rc = in.i_mode == LFS_DIR ? -EISDIR : -ENOENT;
	for (uint32_t i = 0; i < c->n && !rc; i++) {
		bool fresh, journaled;

		rc = lfs_bmap_alloc(fs, tx, c->ino, &in, c->fb0 + i, &c->pb[i], &fresh);
		if (rc)
			break;
		c->gen[i] = ++fs->fs_gen;
		journaled = fresh && !c->direct && fs->fs_p.data_mode == UJBD_DATA_JOURNAL;
		if (journaled) {
			lfs_fill_data(tmp, c->ino, c->fb0 + i, c->gen[i]);
			rc = ujbd_write_data(tx->h, c->pb[i], tmp);
			if (rc)
				break;
		}
		c->done = i + 1;
		rt_mutex_lock(&fs->pc_lock);
		struct lfs_page *pg = c->direct ? pc_find(fs, c->ino, c->fb0 + i)
						: pc_get(fs, c->ino, c->fb0 + i, c->pb[i]);
		if (pg)
			pg->pg_pblock = c->pb[i];   /* a page cached before a truncate */
		if (pg && (journaled || c->direct)) {
			ord_del(fs, pg); /* a direct write over it gives it data */
			pc_set_clean(fs, pg, c->gen[i]);
		} else if (pg) {
			pc_set_dirty(fs, pg, c->gen[i]);
			if (fresh && !pg->pg_otid && fs->fs_p.data_mode == UJBD_DATA_ORDERED)
				ord_add(fs, pg, ujbd_handle_tid(tx->h));
		}
		if (pg)
			pc_touch(fs, pg);
		rt_mutex_unlock(&fs->pc_lock);
	}
	if (in.i_mode != LFS_FILE)
		return rc;
	if (c->direct && c->done) {
		rt_mutex_lock(&fs->pc_lock);
		while (fs->dio_n == 64)
			rt_cond_wait(&fs->pc_done, &fs->pc_lock);
		fs->dio_ino[fs->dio_n++] = c->ino;
		c->dio = true;
		rt_mutex_unlock(&fs->pc_lock);
	}
	uint64_t end = c->done == c->n ? c->end : (c->fb0 + c->done) * LFS_BS;
	if (end > in.i_size)
		in.i_size = end;
	in.i_mtime_ns = in.i_ctime_ns = lfs_now(fs);
	int s = lfs_iput(fs, tx, c->ino, &in);
	return rc ? rc : s;
}

/* The direct write's data, SYNC from the caller, contiguous runs. */
static int chunk_direct_io(struct fs *fs, struct wchunk *c)
{
	struct lfs_run runs[LFS_CHUNK];
	size_t nr = 0;
	int rc = 0;

	for (uint32_t i = 0; i < c->done && !rc;) {
		uint32_t k = 1;

		while (i + k < c->done && c->pb[i + k] == c->pb[i] + k)
			k++;
		rc = run_init(fs, &runs[nr], BLK_OP_WRITE, BLK_SYNC, c->pb[i], k);
		for (uint32_t m = 0; m < k && !rc; m++)
			lfs_stamp_data(&runs[nr].st[m], c->ino, c->fb0 + i + m, c->gen[i + m]);
		nr += !rc;
		i += k;
	}
	if (!rc)
		rc = runs_io(fs, runs, nr);
	for (size_t i = 0; i < nr; i++)
		run_free(fs, &runs[i]);
	rt_mutex_lock(&fs->pc_lock);
	if (!rc)
		fs->fs_st.data_writes += c->done;
	for (unsigned i = 0; i < fs->dio_n; i++) {
		if (fs->dio_ino[i] == c->ino) {
			fs->dio_ino[i] = fs->dio_ino[--fs->dio_n];
			break;
		}
	}
	c->dio = false;
	rt_cond_broadcast(&fs->pc_done);
	rt_mutex_unlock(&fs->pc_lock);
	return rc;
}

static int write_chunk(struct fs *fs, struct wchunk *c, uint8_t *tmp)
{
	struct lfs_tx tx;
	int rc, s;

	if (!c->direct)
		throttle(fs);
	rc = lfs_tx_start(fs, &tx, 12 + 2 * c->n);
	if (rc)
		return rc;
	rt_cpu(fs->fs_p.cpu_op_ns); /* inside the handle (op_begin) */
	rt_mutex_lock(&fs->fs_lock);
	rc = chunk_map(fs, &tx, c, tmp);
	rt_mutex_unlock(&fs->fs_lock);
	s = lfs_tx_stop(fs, &tx);
	rc = rc ? rc : s;
	if (c->dio) {
		s = chunk_direct_io(fs, c);
		rc = rc ? rc : s;
	}
	return rc;
}

int fs_write(struct fs *fs, fs_ino_t ino, uint64_t off, uint64_t len, unsigned flags)
{
	bool direct = flags & FS_IO_DIRECT;
	uint8_t *tmp;
	int rc = 0;

	if (!fs || !ino || ino > fs->fs_ninodes || (flags & ~FS_IO_DIRECT))
		return -EINVAL;
	if (direct && (off % LFS_BS || len % LFS_BS))
		return -EINVAL;
	if (!len)
		return 0;
	if ((off + len + LFS_BS - 1) / LFS_BS > LFS_MAX_FBLOCKS)
		return -EFBIG;
	tmp = malloc(LFS_BS);
	if (!tmp)
		return -ENOMEM;
	uint64_t fb = off / LFS_BS, last = (off + len - 1) / LFS_BS;
	while (!rc && fb <= last) {
		struct wchunk c = { .ino = ino, .fb0 = fb, .direct = direct };

		c.n = (uint32_t)(last - fb + 1 < LFS_CHUNK ? last - fb + 1 : LFS_CHUNK);
		c.end = fb + c.n > last ? off + len : (fb + c.n) * LFS_BS;
		rc = write_chunk(fs, &c, tmp);
		fb += c.n;
	}
	free(tmp);
	return rc;
}

/* ---- read ---- */

struct rplan {
	fs_ino_t ino;
	uint64_t fb0, nreq, nmap;   /* requested blocks, mapped (with read-ahead) */
	uint64_t *pb;
	bool *miss;
	struct lfs_inode in;
};

/* Inode and block map of the range and its read-ahead [fs_lock]. */
static int read_map(struct fs *fs, struct rplan *rp, uint64_t off, uint64_t *len)
{
	int rc = lfs_iget(fs, rp->ino, &rp->in);

	if (!rc && rp->in.i_mode != LFS_FILE)
		rc = rp->in.i_mode == LFS_DIR ? -EISDIR : -ENOENT;
	if (rc)
		return rc;
	if (off >= rp->in.i_size) {
		*len = 0;
		return 0;
	}
	if (*len > rp->in.i_size - off)
		*len = rp->in.i_size - off;
	uint64_t fblocks = (rp->in.i_size + LFS_BS - 1) / LFS_BS;
	rp->fb0 = off / LFS_BS;
	rp->nreq = (off + *len - 1) / LFS_BS - rp->fb0 + 1;
	rp->nmap = rp->nreq;
	rt_mutex_lock(&fs->pc_lock);
	bool seq = rp->fb0 == 0 || fs->fs_ra_next[rp->ino - 1] == rp->fb0;
	fs->fs_ra_next[rp->ino - 1] = rp->fb0 + rp->nreq;
	rt_mutex_unlock(&fs->pc_lock);
	uint64_t ra = fs->fs_p.readahead_kib / (LFS_BS / 1024);
	if (seq && rp->nmap < ra)
		rp->nmap = ra;
	if (rp->fb0 + rp->nmap > fblocks)
		rp->nmap = fblocks - rp->fb0;
	rp->pb = calloc(rp->nmap, sizeof(*rp->pb));
	rp->miss = calloc(rp->nmap, sizeof(*rp->miss));
	if (!rp->pb || !rp->miss)
		return -ENOMEM;
	for (uint64_t i = 0; i < rp->nmap && !rc; i++)
		rc = lfs_bmap(fs, &rp->in, rp->fb0 + i, &rp->pb[i]);
	return rc;
}

/* Which blocks miss; read-ahead only along with a miss. Returns misses. */
static uint64_t read_lookup(struct fs *fs, struct rplan *rp)
{
	uint64_t misses = 0, hits = 0;

	rt_mutex_lock(&fs->pc_lock);
	for (uint64_t i = 0; i < rp->nmap; i++) {
		struct lfs_page *pg = pc_find(fs, rp->ino, rp->fb0 + i);

		if (pg) {
			if (i < rp->nreq) {
				hits++;
				pc_touch(fs, pg);
			}
		} else if (rp->pb[i]) {
			rp->miss[i] = true;
			misses += i < rp->nreq;
		}
	}
	if (!misses)
		for (uint64_t i = rp->nreq; i < rp->nmap; i++)
			rp->miss[i] = false;
	fs->fs_st.reads++;
	fs->fs_st.read_hits += hits;
	rt_mutex_unlock(&fs->pc_lock);
	return misses;
}

/* Read the missing blocks SYNC from this thread and cache them. */
static int read_fill(struct fs *fs, struct rplan *rp, bool cache)
{
	struct lfs_run *runs = calloc(rp->nmap, sizeof(*runs));
	uint64_t *first = calloc(rp->nmap, sizeof(*first));
	size_t nr = 0;
	int rc = runs && first ? 0 : -ENOMEM;

	for (uint64_t i = 0; i < rp->nmap && !rc;) {
		uint32_t k = 1;

		if (!rp->miss[i]) {
			i++;
			continue;
		}
		while (i + k < rp->nmap && k < LFS_BIO_MAX && rp->miss[i + k] &&
		       rp->pb[i + k] == rp->pb[i] + k)
			k++;
		rc = run_init(fs, &runs[nr], BLK_OP_READ, BLK_SYNC, rp->pb[i], k);
		first[nr] = i;
		nr += !rc;
		i += k;
	}
	if (!rc)
		rc = runs_io(fs, runs, nr);
	rt_mutex_lock(&fs->pc_lock);
	for (size_t r = 0; r < nr && !rc; r++) {
		for (uint32_t m = 0; m < runs[r].n; m++) {
			uint64_t i = first[r] + m;
			struct lfs_dhdr h;
			struct lfs_page *pg;

			memcpy(&h, runs[r].buf + (size_t)m * LFS_BS, sizeof(h));
			if (h.h_magic != LFS_DMAGIC || h.h_ino != rp->ino ||
			    h.h_fblock != rp->fb0 + i)
				fs->fs_st.verify_errors++;
			fs->fs_st.data_reads++;
			if (i >= rp->nreq)
				fs->fs_st.readahead_blocks++;
			if (cache && !pc_find(fs, rp->ino, rp->fb0 + i) &&
			    (pg = pc_get(fs, rp->ino, rp->fb0 + i, rp->pb[i])))
				pg->pg_gen = h.h_gen;
		}
	}
	rt_mutex_unlock(&fs->pc_lock);
	if (runs)
		runs_free(fs, runs, nr);
	free(first);
	return rc;
}

/* The read's atime, per the mount's policy. */
static int read_atime(struct fs *fs, struct rplan *rp)
{
	uint64_t now = lfs_now(fs), a = rp->in.i_atime_ns;
	struct lfs_inode in;
	struct lfs_tx tx;
	int rc, s;

	if (fs->fs_p.atime == FS_ATIME_NOATIME)
		return 0;
	if (fs->fs_p.atime == FS_ATIME_RELATIME && a > rp->in.i_mtime_ns &&
	    a > rp->in.i_ctime_ns && now - a < 24 * 3600 * RT_NS_PER_S)
		return 0;
	if (a == now) /* touch_atime: the same time in the inodes' step */
		return 0;
	rc = lfs_tx_start(fs, &tx, 2);
	if (rc)
		return rc;
	rt_mutex_lock(&fs->fs_lock);
	rc = lfs_iget(fs, rp->ino, &in);
	if (!rc && in.i_mode == LFS_FILE) {
		in.i_atime_ns = now;
		rc = lfs_iput(fs, &tx, rp->ino, &in);
	}
	rt_mutex_unlock(&fs->fs_lock);
	s = lfs_tx_stop(fs, &tx);
	rt_mutex_lock(&fs->pc_lock);
	fs->fs_st.atime_updates++;
	rt_mutex_unlock(&fs->pc_lock);
	return rc ? rc : s;
}

int64_t fs_read(struct fs *fs, fs_ino_t ino, uint64_t off, uint64_t len, unsigned flags)
{
	bool direct = flags & FS_IO_DIRECT;
	struct rplan rp = { .ino = ino };
	int rc;

	if (!fs || !ino || ino > fs->fs_ninodes || (flags & ~FS_IO_DIRECT))
		return -EINVAL;
	if (direct && (off % LFS_BS || len % LFS_BS))
		return -EINVAL;
	if (!len)
		return 0;
	rt_cpu(fs->fs_p.cpu_op_ns);
	rt_mutex_lock(&fs->fs_lock);
	rc = read_map(fs, &rp, off, &len);
	rt_mutex_unlock(&fs->fs_lock);
	if (!rc && len && direct) {
		rp.nmap = rp.nreq;        /* no cache, no read-ahead */
		for (uint64_t i = 0; i < rp.nmap; i++)
			rp.miss[i] = rp.pb[i] != 0;
		rt_mutex_lock(&fs->pc_lock);
		fs->fs_st.reads++;
		rt_mutex_unlock(&fs->pc_lock);
		rc = read_fill(fs, &rp, false);
	} else if (!rc && len && read_lookup(fs, &rp)) {
		rc = read_fill(fs, &rp, true);
	}
	if (!rc && len)
		rc = read_atime(fs, &rp);
	free(rp.pb);
	free(rp.miss);
	return rc ? rc : (int64_t)len;
}

void fs_stats(struct fs *fs, struct fs_stats *out)
{
	rt_mutex_lock(&fs->pc_lock);
	*out = fs->fs_st;
	out->handles = __atomic_load_n(&fs->fs_st.handles, __ATOMIC_RELAXED);
	out->dirty_pages = fs->pc_dirty.n + fs->pc_wb;
	out->cached_pages = fs->pc_pages;
	rt_mutex_unlock(&fs->pc_lock);
}

/*
 * buf.c: the buffer cache of the data device (see buf.h for the model).
 *
 * Lookups hash the block number (Fibonacci hashing into a power-of-two
 * table sized at creation: no resizing, no allocation but the buffers).
 * A buffer with no reference sits on the LRU list, oldest first; when a new
 * buffer would take the cache past its limit, unreferenced buffers are
 * freed from the old end. Reads drop c_lock: the reader marks the buffer
 * BUF_READING and others wait on c_cond, so a block is read at most once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf/buf.h"
#include "rt/assert.h"

struct buf_cache {
	rt_mutex c_lock;
	rt_cond c_cond;                 /* a read finished */
	struct blk_queue *c_queue;      /* const */
	uint32_t c_block_size;          /* const */
	uint64_t c_nblocks;             /* const */
	uint64_t c_limit;               /* const */
	struct ujbd_buf **c_hash;       /* [c_lock] */
	unsigned c_hash_shift;          /* const */
	struct rt_link c_lru;           /* [c_lock] oldest first (b_lru) */
	struct buf_stats c_stats;       /* [c_lock] */
};

static size_t buf_hash(const struct buf_cache *c, uint64_t block)
{
	return (size_t)((block * 0x9E3779B97F4A7C15ull) >> (64 - c->c_hash_shift));
}

int buf_cache_new(struct blk_queue *q, uint32_t block_size, uint64_t nblocks,
		  uint64_t limit, struct buf_cache **out)
{
	struct buf_cache *c;
	unsigned shift = 8;

	if (!q || block_size < 512 || (block_size & (block_size - 1)))
		return -EINVAL;
	if (!limit)
		limit = 16384;
	while (shift < 24 && (1ull << shift) < limit * 2)
		shift++;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->c_hash = calloc((size_t)1 << shift, sizeof(*c->c_hash));
	if (!c->c_hash) {
		free(c);
		return -ENOMEM;
	}
	c->c_queue = q;
	c->c_block_size = block_size;
	c->c_nblocks = nblocks;
	c->c_limit = limit;
	c->c_hash_shift = shift;
	c->c_stats.limit = limit;
	rt_list_init(&c->c_lru);
	rt_mutex_init(&c->c_lock, "buf.c_lock");
	rt_cond_init(&c->c_cond, "buf.c_cond");
	*out = c;
	return 0;
}

static void buf_free_one(struct ujbd_buf *b)
{
	free(b->b_data);
	free(b);
}

void buf_cache_free(struct buf_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < ((size_t)1 << c->c_hash_shift); i++) {
		struct ujbd_buf *b = c->c_hash[i], *next;
		for (; b; b = next) {
			next = b->b_hnext;
			ASSERT(b->b_count == 0);
			buf_free_one(b);
		}
	}
	free(c->c_hash);
	rt_cond_release(&c->c_cond);
	rt_mutex_release(&c->c_lock);
	free(c);
}

/* ---- LRU -------------------------------------------------------------- */

static bool __on_lru(const struct ujbd_buf *b);

static void __lru_del(struct buf_cache *c, struct ujbd_buf *b)
{
	ASSERT(rt_mutex_held(&c->c_lock));
	ASSERT(__on_lru(b) && b->b_lru.next->prev == &b->b_lru &&
	       b->b_lru.prev->next == &b->b_lru);
	rt_list_del(&b->b_lru);
}

static void __lru_add(struct buf_cache *c, struct ujbd_buf *b)
{
	ASSERT(rt_mutex_held(&c->c_lock));
	ASSERT(!__on_lru(b) && __atomic_load_n(&b->b_count, __ATOMIC_RELAXED) == 0);
	rt_list_add_tail(&c->c_lru, &b->b_lru);
}

static void __hash_del(struct buf_cache *c, struct ujbd_buf *b)
{
	struct ujbd_buf **pp = &c->c_hash[buf_hash(c, b->b_blocknr)];

	ASSERT(rt_mutex_held(&c->c_lock));
	ASSERT(c->c_stats.cached > 0);
	while (*pp != b) {
		ASSERT(*pp);
		pp = &(*pp)->b_hnext;
	}
	*pp = b->b_hnext;
}

/* Evict unreferenced buffers, oldest first, until under the limit. */
static void __evict(struct buf_cache *c)
{
	ASSERT(rt_mutex_held(&c->c_lock));
	struct ujbd_buf *b;

	while (c->c_stats.cached >= c->c_limit &&
	       (b = RT_LIST_FIRST(&c->c_lru, struct ujbd_buf, b_lru))) {
		ASSERT(__atomic_load_n(&b->b_count, __ATOMIC_RELAXED) == 0 &&
		       !(b->b_state & BUF_READING));
		__lru_del(c, b);
		__hash_del(c, b);
		c->c_stats.cached--;
		c->c_stats.evictions++;
		ASSERT(!b->b_jh); /* the journal's head holds a reference */
		buf_free_one(b);
	}
	ASSERT(c->c_stats.cached < c->c_limit || rt_list_empty(&c->c_lru));
}

/* ---- lookup ------------------------------------------------------------ */

static struct ujbd_buf *__lookup(struct buf_cache *c, uint64_t block)
{
	struct ujbd_buf *b = c->c_hash[buf_hash(c, block)];

	ASSERT(rt_mutex_held(&c->c_lock));
	while (b && b->b_blocknr != block)
		b = b->b_hnext;
	ASSERT(!b || b->b_cache == c);
	return b;
}

/* A new buffer is on no list; an unreferenced cached one is on the LRU. */
static bool __on_lru(const struct ujbd_buf *b)
{
	return !rt_list_empty(&b->b_lru);
}

/* c_lock held: the 0 -> 1 step takes the buffer off the LRU. */
static void __grab(struct buf_cache *c, struct ujbd_buf *b)
{
	ASSERT(rt_mutex_held(&c->c_lock) && b->b_cache == c);
	if (__atomic_fetch_add(&b->b_count, 1, __ATOMIC_ACQ_REL) == 0 && __on_lru(b))
		__lru_del(c, b);
	ASSERT(!__on_lru(b));
}

/* c_lock held: the 1 -> 0 step puts it back on the LRU. */
static void __drop(struct buf_cache *c, struct ujbd_buf *b)
{
	ASSERT(rt_mutex_held(&c->c_lock));
	ASSERT(__atomic_load_n(&b->b_count, __ATOMIC_RELAXED) > 0 && !__on_lru(b));
	if (__atomic_sub_fetch(&b->b_count, 1, __ATOMIC_ACQ_REL) == 0) {
		__lru_add(c, b);
		/* Keep the cache near its limit even without new lookups. */
		if (c->c_stats.cached > c->c_limit)
			__evict(c);
	}
}

static struct ujbd_buf *buf_alloc(struct buf_cache *c, uint64_t block)
{
	struct ujbd_buf *b;

	/* A cache line of its own: threads working on different blocks
	 * update b_count (buf_hold, buf_put) without false sharing. */
	if (posix_memalign((void **)&b, 64, sizeof(*b)))
		return NULL;
	memset(b, 0, sizeof(*b));
	if (posix_memalign((void **)&b->b_data, 4096, c->c_block_size)) {
		free(b);
		return NULL;
	}
	b->b_blocknr = block;
	b->b_cache = c;
	rt_list_init(&b->b_lru);
	return b;
}

/* Read b from the device; b is BUF_READING and referenced by the caller. */
static int buf_read(struct buf_cache *c, struct ujbd_buf *b)
{
	struct blk_bio bio;

	memset(&bio, 0, sizeof(bio));
	bio.b_op = BLK_OP_READ;
	bio.b_flags = BLK_SYNC | BLK_META | BLK_POLLED;
	bio.b_sector = b->b_blocknr * (c->c_block_size >> BLK_SECTOR_SHIFT);
	bio.b_nr_sectors = c->c_block_size >> BLK_SECTOR_SHIFT;
	bio.b_buf = b->b_data;
	return blk_submit_wait(c->c_queue, &bio);
}

/* Make b up to date (mode READ or ZERO); c_lock held, dropped for I/O. */
static int __fill(struct buf_cache *c, struct ujbd_buf *b, enum buf_mode mode,
		  uint64_t *waited_ns)
{
	uint64_t t0 = 0;
	int rc;

	ASSERT(rt_mutex_held(&c->c_lock));
	ASSERT(__atomic_load_n(&b->b_count, __ATOMIC_RELAXED) > 0); /* ours */
	if (b->b_state & BUF_UPTODATE)
		return 0;
	t0 = rt_now_ns();
	while (b->b_state & BUF_READING)
		rt_cond_wait(&c->c_cond, &c->c_lock);
	if (b->b_state & BUF_UPTODATE) {
		*waited_ns = rt_now_ns() - t0;
		return 0;
	}
	if (mode == BUF_GET_ZERO) {
		memset(b->b_data, 0, c->c_block_size);
		b->b_state |= BUF_UPTODATE;
		return 0;
	}
	b->b_state |= BUF_READING;
	c->c_stats.reads++;
	rt_mutex_unlock(&c->c_lock);
	rc = buf_read(c, b);
	rt_mutex_lock(&c->c_lock);
	ASSERT(b->b_state & BUF_READING); /* only this reader clears it */
	b->b_state &= ~BUF_READING;
	if (rc == 0)
		b->b_state |= BUF_UPTODATE;
	else
		c->c_stats.read_errors++;
	rt_cond_broadcast(&c->c_cond);
	*waited_ns = rt_now_ns() - t0;
	return rc < 0 ? rc : 0;
}

int buf_get(struct buf_cache *c, uint64_t block, enum buf_mode mode,
	    struct ujbd_buf **out)
{
	uint64_t waited;

	return buf_get_waited(c, block, mode, out, &waited);
}

int buf_get_waited(struct buf_cache *c, uint64_t block, enum buf_mode mode,
		   struct ujbd_buf **out, uint64_t *waited_ns)
{
	struct ujbd_buf *b, *fresh = NULL;
	int rc = 0;

	*waited_ns = 0;
	if (block >= c->c_nblocks)
		return -EINVAL;
	rt_mutex_lock(&c->c_lock);
	b = __lookup(c, block);
	if (!b && mode == BUF_GET_PEEK) {
		rt_mutex_unlock(&c->c_lock);
		return -ENOENT;
	}
	if (!b) {
		/* Allocate without the lock, then look again: another thread
		 * may have added the block meanwhile. */
		rt_mutex_unlock(&c->c_lock);
		fresh = buf_alloc(c, block);
		if (!fresh)
			return -ENOMEM;
		rt_mutex_lock(&c->c_lock);
		b = __lookup(c, block);
		if (!b) {
			__evict(c);
			b = fresh;
			fresh = NULL;
			size_t h = buf_hash(c, block);
			b->b_hnext = c->c_hash[h];
			c->c_hash[h] = b;
			c->c_stats.cached++;
			c->c_stats.misses++;
		} else {
			c->c_stats.hits++;
		}
	} else {
		c->c_stats.hits++;
	}
	__grab(c, b);
	if (mode != BUF_GET_PEEK)
		rc = __fill(c, b, mode, waited_ns);
	if (rc) {
		if (__atomic_sub_fetch(&b->b_count, 1, __ATOMIC_ACQ_REL) == 0)
			__lru_add(c, b);
		b = NULL;
	}
	ASSERT(rc || (b->b_blocknr == block && (mode == BUF_GET_PEEK ||
						  (b->b_state & BUF_UPTODATE))));
	rt_mutex_unlock(&c->c_lock);
	if (fresh)
		buf_free_one(fresh);
	*out = b;
	return rc;
}

bool buf_cached(struct buf_cache *c, uint64_t block)
{
	bool found;

	rt_mutex_lock(&c->c_lock);
	found = __lookup(c, block) != NULL;
	rt_mutex_unlock(&c->c_lock);
	return found;
}

void buf_hold(struct ujbd_buf *b)
{
	uint32_t n = __atomic_fetch_add(&b->b_count, 1, __ATOMIC_ACQ_REL);

	ASSERT(n > 0);
	(void)n;
}

void buf_put(struct ujbd_buf *b)
{
	struct buf_cache *c;
	uint32_t n;

	if (!b)
		return;
	/* Not the last reference: no lock (the handle path's put). */
	n = __atomic_load_n(&b->b_count, __ATOMIC_RELAXED);
	while (n > 1)
		if (__atomic_compare_exchange_n(&b->b_count, &n, n - 1, true,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return;
	c = b->b_cache;
	ASSERT(n == 1);
	rt_mutex_lock(&c->c_lock);
	__drop(c, b);
	rt_mutex_unlock(&c->c_lock);
}

void buf_invalidate(struct ujbd_buf *b)
{
	struct buf_cache *c = b->b_cache;

	rt_mutex_lock(&c->c_lock);
	ASSERT(__atomic_load_n(&b->b_count, __ATOMIC_RELAXED) > 0); /* the caller's */
	if (__atomic_load_n(&b->b_count, __ATOMIC_ACQUIRE) == 1 && !(b->b_state & BUF_READING))
		b->b_state &= ~BUF_UPTODATE;
	rt_mutex_unlock(&c->c_lock);
}

void buf_set_uptodate(struct ujbd_buf *b)
{
	struct buf_cache *c = b->b_cache;

	rt_mutex_lock(&c->c_lock);
	ASSERT(__atomic_load_n(&b->b_count, __ATOMIC_RELAXED) > 0);
	ASSERT(!(b->b_state & BUF_READING)); /* a read would overwrite it */
	b->b_state |= BUF_UPTODATE;
	rt_mutex_unlock(&c->c_lock);
}

uint32_t buf_block_size(const struct buf_cache *c)
{
	return c->c_block_size;
}

void buf_cache_stats(struct buf_cache *c, struct buf_stats *out)
{
	rt_mutex_lock(&c->c_lock);
	*out = c->c_stats;
	rt_mutex_unlock(&c->c_lock);
}

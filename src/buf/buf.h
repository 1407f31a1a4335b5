/*
 * buf: the buffer cache of the data device.
 *
 * The one idea: there is exactly one in-memory buffer per cached data-device
 * block, found by block number through a hash table (never ordered by
 * pointer), so every part of the journal that talks about block B talks
 * about the same bytes. A buffer is pinned while anyone holds a reference
 * (b_count > 0); the journal keeps one reference for as long as the buffer
 * is part of a transaction, a checkpoint list or an ordered-data list, so
 * only clean, unreferenced buffers are ever evicted, oldest first (LRU),
 * once more than the limit are cached. A pinned cache may grow beyond its
 * limit: correctness first, the limit is for clean buffers.
 *
 * States: BUF_UPTODATE (b_data holds the block) and BUF_READING (a read is
 * in flight; others wait for it) belong to the cache, under c_lock. The
 * journal's states (journaled, dirty, frozen copy) live in the journal head
 * b_jh and b_jstate, under the journal's j_state_lock (src/jbd/runtime.h).
 *
 * Lock order: the journal's j_state_lock -> c_lock -> the block layer. c_lock
 * is never held across I/O.
 */
#ifndef UJBD_BUF_BUF_H
#define UJBD_BUF_BUF_H

#include <stdbool.h>
#include <stdint.h>

#include "priv/blk.h"
#include "priv/list.h"
#include "priv/rt.h"

struct buf_cache;

/* b_state [c_lock] */
#define BUF_UPTODATE (1u << 0)
#define BUF_READING  (1u << 1)

/* b_jstate [j_state_lock], set by the journal, shown by tests and tools */
#define BUF_J_JOURNALED (1u << 0) /* part of a running or committing transaction */
#define BUF_J_DIRTY     (1u << 1) /* committed, not yet written home (checkpoint) */
#define BUF_J_FROZEN    (1u << 2) /* a frozen copy exists for the committing one */
#define BUF_J_DATA      (1u << 3) /* ordered/writeback data waiting for its commit */

struct ujbd_buf {
	uint64_t b_blocknr;            /* const */
	uint8_t *b_data;               /* block_size bytes; see the journal's rules */
	struct buf_cache *b_cache;     /* const */
	/* References, atomic: 0 -> 1 and 1 -> 0 happen only under c_lock
	 * (the LRU follows them); a holder may add or drop one that is not
	 * the last without it (buf_hold, buf_put). */
	uint32_t b_count;
	uint32_t b_state;              /* [c_lock] BUF_* */
	uint32_t b_jstate;             /* [j_state_lock] BUF_J_* */
	void *b_jh;                    /* [j_state_lock] the journal head, or NULL */
	struct ujbd_buf *b_hnext;      /* [c_lock] hash chain */
	struct rt_link b_lru;          /* [c_lock] on c_lru (b_count == 0 only) */
};

struct buf_stats {
	uint64_t hits, misses, reads, read_errors, evictions;
	uint64_t cached;               /* buffers in the cache now */
	uint64_t limit;
};

/* buf_get modes */
enum buf_mode {
	BUF_GET_READ = 0,   /* read the block if not up to date */
	BUF_GET_ZERO = 1,   /* not up to date: zero-fill instead of reading */
	BUF_GET_PEEK = 2,   /* only a cached buffer; -ENOENT if none */
};

/*
 * A cache over queue q (the data device), blocks of block_size bytes,
 * nblocks of them, keeping at most limit clean buffers (0 = 16384).
 * 0, -EINVAL or -ENOMEM.
 */
int buf_cache_new(struct blk_queue *q, uint32_t block_size, uint64_t nblocks,
		  uint64_t limit, struct buf_cache **out);
/* Free every buffer; none may be referenced any more. */
void buf_cache_free(struct buf_cache *c);

/*
 * The buffer of block, with a reference. Reads it through the block layer
 * when mode is BUF_GET_READ and it is not up to date (one reader; others
 * wait). -EINVAL beyond the device, -EIO read error, -ENOMEM,
 * -ENOENT (PEEK, not cached).
 */
int buf_get(struct buf_cache *c, uint64_t block, enum buf_mode mode,
	    struct ujbd_buf **out);
/* As buf_get; *waited_ns gets the time spent reading the block or waiting
 * for another thread's read of it (0 on a hit: the clock is read only on
 * that slow path). */
int buf_get_waited(struct buf_cache *c, uint64_t block, enum buf_mode mode,
		   struct ujbd_buf **out, uint64_t *waited_ns);
/* Is block in the cache (a buffer for it, up to date or not)? No
 * reference taken: a caller that must know it stays so keeps others from
 * adding it (the journal: a block it tracks is always cached). */
bool buf_cached(struct buf_cache *c, uint64_t block);
/* Another reference to a buffer the caller holds (or that someone is
 * known to hold, such as a journal head): no lock taken. */
void buf_hold(struct ujbd_buf *b);
/* Drop a reference; takes c_lock only for the last one. */
void buf_put(struct ujbd_buf *b);
/* The buffer's data is now the block's newest contents (written by a
 * caller that had it zero-filled or filled it itself). */
void buf_set_uptodate(struct ujbd_buf *b);
/* Forget the buffer's data if the caller holds its only reference (and
 * no read is in flight): the next buf_get reads the block again. For a
 * buffer zero-filled (BUF_GET_ZERO) for a write that did not happen. */
void buf_invalidate(struct ujbd_buf *b);
uint32_t buf_block_size(const struct buf_cache *c);
void buf_cache_stats(struct buf_cache *c, struct buf_stats *out);

#endif

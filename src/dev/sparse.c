/*
 * Sparse byte store and the volatile write cache of the simulated disks.
 *
 * The store keeps 64 KiB chunks in an open-addressing hash table keyed by
 * chunk number; a chunk never written reads as zeros, so a 500 GB simulated
 * disk costs only what was written to it.
 *
 * The cache is a list of dirty extents in arrival order. The invariant that
 * makes destaging order free: whenever data for a range arrives (through the
 * cache or around it), every older cached extent overlapping that range is
 * updated to the new bytes. So all cached copies of a byte agree, and the
 * drive may destage extents in whatever (positioning) order it likes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev_int.h"

#define SPARSE_CHUNK_SHIFT 16
#define SPARSE_CHUNK (1u << SPARSE_CHUNK_SHIFT)

struct dev_sparse_slot {
	uint64_t key;   /* chunk number + 1; 0 = empty */
	uint8_t *data;
};

struct dev_sparse {
	uint64_t s_size;
	struct dev_sparse_slot *s_slots;
	size_t s_cap;   /* a power of two */
	size_t s_used;
};

/* ---- the hash table --------------------------------------------------- */

static size_t sparse_hash(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static struct dev_sparse_slot *sparse_slot(const struct dev_sparse *s, uint64_t chunk)
{
	size_t i = sparse_hash(chunk + 1, s->s_cap);

	for (;;) {
		struct dev_sparse_slot *sl = &s->s_slots[i];

		if (sl->key == chunk + 1 || sl->key == 0)
			return sl;
		i = (i + 1) & (s->s_cap - 1);
	}
}

static int sparse_grow(struct dev_sparse *s)
{
	struct dev_sparse_slot *old = s->s_slots;
	size_t ocap = s->s_cap;

	s->s_slots = calloc(ocap * 2, sizeof(*old));
	if (!s->s_slots) {
		s->s_slots = old;
		return -ENOMEM;
	}
	s->s_cap = ocap * 2;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].key)
			*sparse_slot(s, old[i].key - 1) = old[i];
	}
	free(old);
	return 0;
}

/* The chunk's data, allocated (zeroed) if missing and alloc is set. */
static uint8_t *sparse_chunk(struct dev_sparse *s, uint64_t chunk, bool alloc,
			     int *err)
{
	struct dev_sparse_slot *sl = sparse_slot(s, chunk);

	if (sl->key || !alloc)
		return sl->data;
	if ((s->s_used + 1) * 4 > s->s_cap * 3) {
		*err = sparse_grow(s);
		if (*err < 0)
			return NULL;
		sl = sparse_slot(s, chunk);
	}
	sl->data = calloc(1, SPARSE_CHUNK);
	if (!sl->data) {
		*err = -ENOMEM;
		return NULL;
	}
	sl->key = chunk + 1;
	s->s_used++;
	return sl->data;
}

int dev_sparse_new(uint64_t size, struct dev_sparse **out)
{
	struct dev_sparse *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->s_size = size;
	s->s_cap = 64;
	s->s_slots = calloc(s->s_cap, sizeof(*s->s_slots));
	if (!s->s_slots) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void dev_sparse_free(struct dev_sparse *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->s_cap; i++)
		free(s->s_slots[i].data);
	free(s->s_slots);
	free(s);
}

void dev_sparse_read(const struct dev_sparse *s, uint64_t off, void *buf,
		     uint32_t len)
{
	uint8_t *p = buf;

	ASSERT(off + len <= s->s_size);
	while (len > 0) {
		uint64_t chunk = off >> SPARSE_CHUNK_SHIFT;
		uint32_t in = (uint32_t)(off & (SPARSE_CHUNK - 1));
		uint32_t n = SPARSE_CHUNK - in < len ? SPARSE_CHUNK - in : len;
		const uint8_t *data = sparse_slot(s, chunk)->data;

		if (data)
			memcpy(p, data + in, n);
		else
			memset(p, 0, n);
		p += n;
		off += n;
		len -= n;
	}
}

int dev_sparse_write(struct dev_sparse *s, uint64_t off, const void *buf,
		     uint32_t len)
{
	const uint8_t *p = buf;
	int err = 0;

	ASSERT(off + len <= s->s_size);
	while (len > 0) {
		uint64_t chunk = off >> SPARSE_CHUNK_SHIFT;
		uint32_t in = (uint32_t)(off & (SPARSE_CHUNK - 1));
		uint32_t n = SPARSE_CHUNK - in < len ? SPARSE_CHUNK - in : len;
		uint8_t *data = sparse_chunk(s, chunk, true, &err);

		if (!data)
			return err;
		memcpy(data + in, p, n);
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* ---- the volatile write cache ----------------------------------------- */

void dev_cache_init(struct dev_cache *c, uint64_t limit)
{
	memset(c, 0, sizeof(*c));
	c->c_limit = limit;
	c->c_pin = UINT64_MAX;
}

void dev_cache_drop(struct dev_cache *c)
{
	for (size_t i = 0; i < c->c_n; i++)
		free(c->c_ext[i].c_data);
	c->c_n = 0;
	c->c_bytes = 0;
}

void dev_cache_release(struct dev_cache *c)
{
	dev_cache_drop(c);
	free(c->c_ext);
	c->c_ext = NULL;
	c->c_cap = 0;
}

/* Copy between [off, off+len) and the overlapping part of extent e. */
static void cache_overlap(struct dev_cache_ext *e, uint64_t off, uint8_t *buf,
			  uint32_t len, bool into_ext)
{
	uint64_t lo = off > e->c_off ? off : e->c_off;
	uint64_t hi_a = off + len, hi_b = e->c_off + e->c_len;
	uint64_t hi = hi_a < hi_b ? hi_a : hi_b;

	if (lo >= hi)
		return;
	if (into_ext)
		memcpy(e->c_data + (lo - e->c_off), buf + (lo - off), hi - lo);
	else
		memcpy(buf + (lo - off), e->c_data + (lo - e->c_off), hi - lo);
}

void dev_cache_overlay_write(struct dev_cache *c, uint64_t off,
			     const void *buf, uint32_t len)
{
	for (size_t i = 0; i < c->c_n; i++)
		cache_overlap(&c->c_ext[i], off, (uint8_t *)buf, len, true);
}

void dev_cache_overlay_read(const struct dev_cache *c, uint64_t off,
			    void *buf, uint32_t len)
{
	for (size_t i = 0; i < c->c_n; i++)
		cache_overlap(&c->c_ext[i], off, buf, len, false);
}

/* A write the cache takes without a new extent (c_merge_max): absorbed by
 * the dirty extent that holds it, or appended to the newest extent. */
static int cache_merge(struct dev_cache *c, uint64_t off, const void *buf, uint32_t len)
{
	struct dev_cache_ext *e = c->c_n ? &c->c_ext[c->c_n - 1] : NULL;
	uint8_t *d;

	for (size_t i = 0; i < c->c_n; i++) {
		struct dev_cache_ext *x = &c->c_ext[i];

		if (x->c_seq != c->c_pin && off >= x->c_off && off + len <= x->c_off + x->c_len) {
			dev_cache_overlay_write(c, off, buf, len);
			return 1;
		}
	}
	if (!e || e->c_seq == c->c_pin || off != e->c_off + e->c_len ||
	    e->c_len + len > c->c_merge_max)
		return 0;
	d = realloc(e->c_data, e->c_len + len);
	if (!d)
		return -ENOMEM;
	dev_cache_overlay_write(c, off, buf, len);
	e->c_data = d;
	memcpy(d + e->c_len, buf, len);
	e->c_len += len;
	c->c_bytes += len;
	return 1;
}

int dev_cache_add(struct dev_cache *c, uint64_t off, const void *buf,
		  uint32_t len, uint64_t ready_ns)
{
	struct dev_cache_ext *e;
	int m = c->c_merge_max ? cache_merge(c, off, buf, len) : 0;

	if (m)
		return m < 0 ? m : 0;

	if (c->c_n == c->c_cap) {
		size_t cap = c->c_cap ? c->c_cap * 2 : 64;
		struct dev_cache_ext *n = realloc(c->c_ext, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->c_ext = n;
		c->c_cap = cap;
	}
	e = &c->c_ext[c->c_n];
	e->c_data = malloc(len);
	if (!e->c_data)
		return -ENOMEM;
	dev_cache_overlay_write(c, off, buf, len);
	memcpy(e->c_data, buf, len);
	e->c_off = off;
	e->c_len = len;
	e->c_ready_ns = ready_ns;
	e->c_seq = c->c_seq++;
	c->c_n++;
	c->c_bytes += len;
	return 0;
}

int dev_cache_destage(struct dev_cache *c, size_t i, struct dev_sparse *media)
{
	struct dev_cache_ext *e = &c->c_ext[i];
	int rc;

	ASSERT(i < c->c_n);
	rc = dev_sparse_write(media, e->c_off, e->c_data, e->c_len);
	if (rc < 0)
		return rc;
	free(e->c_data);
	c->c_bytes -= e->c_len;
	/* keep arrival order: the rest shift down */
	memmove(e, e + 1, (c->c_n - i - 1) * sizeof(*e));
	c->c_n--;
	return 0;
}

/*
 * Sparse byte store and the volatile write cache of the simulated disks.
 *
 * The store keeps 64 KiB chunks in an open-addressing hash table keyed by
 * chunk number; a chunk never written reads as zeros, so a 500 GB simulated
 * disk costs only what was written to it. A chunk's 4 KiB blocks are each
 * bytes or a stamp (DEV_REQ_STAMPED): a stamped block is its 32-byte stamp
 * until a write of bytes covers part of it, when it becomes bytes again;
 * a read makes the bytes of each stamp it meets (dev_stamp_fill).
 *
 * A cache extent is bytes or stamps as a whole: stamps while every write
 * into it was stamped, bytes once one was not (its stamps made bytes
 * then). Whether a write joins an extent or starts one is decided as for
 * bytes, so stamps never change what the drive's model sees.
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

#define SPARSE_BLOCKS (SPARSE_CHUNK / DEV_STAMP_BLOCK)

struct dev_sparse_slot {
	uint64_t key;   /* chunk number + 1; 0 = empty */
	uint8_t *data;  /* NULL: the blocks not stamped are zeros */
	struct dev_stamp *st; /* SPARSE_BLOCKS stamps, or NULL */
	uint16_t mask;  /* which blocks are their stamp */
};
_Static_assert(SPARSE_BLOCKS <= 16, "mask");

/* ---- stamps ------------------------------------------------------------ */

/* Bytes [from, from + n) of the block st stands for, into dst. */
static void stamp_copy(uint8_t *dst, const struct dev_stamp *st, uint32_t from, uint32_t n)
{
	uint32_t h = from < DEV_STAMP_BYTES ? DEV_STAMP_BYTES - from : 0;

	if (h > n)
		h = n;
	if (h)
		memcpy(dst, st->s_bytes + from, h);
	memset(dst + h, 0, n - h);
}

void dev_stamp_fill(void *block, const struct dev_stamp *st)
{
	stamp_copy(block, st, 0, DEV_STAMP_BLOCK);
}

void dev_stamps_fill(void *buf, const struct dev_stamp *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dev_stamp_fill((uint8_t *)buf + i * DEV_STAMP_BLOCK, &st[i]);
}

/* The part of [off, off + len) that stamps st[] (from byte st_off on, n of
 * them) cover, as bytes into buf (buf is [off, off + len)). */
static void stamps_read(const struct dev_stamp *st, uint64_t st_off, size_t n, uint64_t off,
			uint8_t *buf, uint64_t len)
{
	uint64_t lo = off > st_off ? off : st_off;
	uint64_t hi_a = off + len, hi_b = st_off + (uint64_t)n * DEV_STAMP_BLOCK;
	uint64_t hi = hi_a < hi_b ? hi_a : hi_b;

	while (lo < hi) {
		uint64_t b = (lo - st_off) / DEV_STAMP_BLOCK;
		uint32_t in = (uint32_t)((lo - st_off) % DEV_STAMP_BLOCK);
		uint64_t k = DEV_STAMP_BLOCK - in < hi - lo ? DEV_STAMP_BLOCK - in : hi - lo;

		stamp_copy(buf + (lo - off), &st[b], in, (uint32_t)k);
		lo += k;
	}
}

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

/* The chunk's slot, added if missing (NULL: no memory). */
static struct dev_sparse_slot *sparse_add(struct dev_sparse *s, uint64_t chunk, int *err)
{
	struct dev_sparse_slot *sl = sparse_slot(s, chunk);

	if (sl->key)
		return sl;
	if ((s->s_used + 1) * 4 > s->s_cap * 3) {
		*err = sparse_grow(s);
		if (*err < 0)
			return NULL;
		sl = sparse_slot(s, chunk);
	}
	sl->key = chunk + 1;
	s->s_used++;
	return sl;
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
	for (size_t i = 0; i < s->s_cap; i++) {
		free(s->s_slots[i].data);
		free(s->s_slots[i].st);
	}
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
		const struct dev_sparse_slot *sl = sparse_slot(s, chunk);

		if (sl->data)
			memcpy(p, sl->data + in, n);
		else
			memset(p, 0, n);
		for (uint32_t b = in / DEV_STAMP_BLOCK; sl->mask && b * DEV_STAMP_BLOCK < in + n; b++)
			if (sl->mask & (1u << b))
				stamps_read(&sl->st[b], (uint64_t)b * DEV_STAMP_BLOCK, 1, in, p, n);
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
		struct dev_sparse_slot *sl = sparse_add(s, chunk, &err);

		if (!sl)
			return err;
		if (!sl->data && !(sl->data = calloc(1, SPARSE_CHUNK)))
			return -ENOMEM;
		/* stamped blocks this write covers become bytes: made from
		 * their stamp first where it covers them only in part */
		for (uint32_t b = in / DEV_STAMP_BLOCK; sl->mask && b * DEV_STAMP_BLOCK < in + n; b++) {
			if (!(sl->mask & (1u << b)))
				continue;
			if (b * DEV_STAMP_BLOCK < in || (b + 1) * DEV_STAMP_BLOCK > in + n)
				dev_stamp_fill(sl->data + (size_t)b * DEV_STAMP_BLOCK, &sl->st[b]);
			sl->mask &= (uint16_t)~(1u << b);
		}
		memcpy(sl->data + in, p, n);
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

int dev_sparse_write_stamps(struct dev_sparse *s, uint64_t off, const struct dev_stamp *st,
			    size_t n)
{
	int err = 0;

	ASSERT(off % DEV_STAMP_BLOCK == 0 && off + n * DEV_STAMP_BLOCK <= s->s_size);
	for (size_t i = 0; i < n; i++, off += DEV_STAMP_BLOCK) {
		struct dev_sparse_slot *sl = sparse_add(s, off >> SPARSE_CHUNK_SHIFT, &err);
		uint32_t b = (uint32_t)((off & (SPARSE_CHUNK - 1)) / DEV_STAMP_BLOCK);

		if (!sl)
			return err;
		if (!sl->st && !(sl->st = malloc(SPARSE_BLOCKS * sizeof(*sl->st))))
			return -ENOMEM;
		sl->st[b] = st[i];
		sl->mask |= (uint16_t)(1u << b);
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

/* Bytes in extent e's data for len bytes of it (stamped: its stamps). */
static size_t ext_bytes(bool stamped, uint64_t len)
{
	return stamped ? (size_t)(len / DEV_STAMP_BLOCK) * sizeof(struct dev_stamp) : (size_t)len;
}

/* Make a stamped extent bytes (its stamps made). 0 or -ENOMEM, e as it was. */
static int ext_to_bytes(struct dev_cache_ext *e)
{
	uint8_t *d;

	if (!e->c_stamped)
		return 0;
	d = malloc(e->c_len);
	if (!d)
		return -ENOMEM;
	dev_stamps_fill(d, (const struct dev_stamp *)e->c_data, e->c_len / DEV_STAMP_BLOCK);
	free(e->c_data);
	e->c_data = d;
	e->c_stamped = false;
	return 0;
}

/* The overlap of [off, off+len) and extent e: [*lo, *hi), or false. */
static bool ext_overlap(const struct dev_cache_ext *e, uint64_t off, uint64_t len,
			uint64_t *lo, uint64_t *hi)
{
	uint64_t hi_a = off + len, hi_b = e->c_off + e->c_len;

	*lo = off > e->c_off ? off : e->c_off;
	*hi = hi_a < hi_b ? hi_a : hi_b;
	return *lo < *hi;
}

/* Write buf ([off, off+len); stamped: stamps) over its overlap with e; a
 * stamped e takes only stamps (dev_cache_overlay_write made it bytes). */
static void cache_overlap_write(struct dev_cache_ext *e, uint64_t off, const uint8_t *buf,
				uint32_t len, bool stamped)
{
	const struct dev_stamp *st = (const struct dev_stamp *)buf;
	uint64_t lo, hi;

	if (!ext_overlap(e, off, len, &lo, &hi))
		return;
	if (!stamped) {
		ASSERT(!e->c_stamped);
		memcpy(e->c_data + (lo - e->c_off), buf + (lo - off), hi - lo);
	} else if (e->c_stamped) {
		memcpy(e->c_data + ext_bytes(true, lo - e->c_off), st + (lo - off) / DEV_STAMP_BLOCK,
		       ext_bytes(true, hi - lo));
	} else {   /* e's bytes may start or end inside a stamped block */
		stamps_read(st, off, len / DEV_STAMP_BLOCK, e->c_off, e->c_data, e->c_len);
	}
}

int dev_cache_overlay_write(struct dev_cache *c, uint64_t off,
			    const void *buf, uint32_t len, bool stamped)
{
	uint64_t lo, hi;

	/* bytes into a stamped extent: the extent becomes bytes first, all
	 * of them before anything is written, so a failure changes nothing */
	for (size_t i = 0; i < c->c_n && !stamped; i++) {
		struct dev_cache_ext *e = &c->c_ext[i];

		if (e->c_stamped && ext_overlap(e, off, len, &lo, &hi)) {
			int rc = ext_to_bytes(e);

			if (rc)
				return rc;
		}
	}
	for (size_t i = 0; i < c->c_n; i++)
		cache_overlap_write(&c->c_ext[i], off, buf, len, stamped);
	return 0;
}

void dev_cache_overlay_read(const struct dev_cache *c, uint64_t off,
			    void *buf, uint32_t len)
{
	for (size_t i = 0; i < c->c_n; i++) {
		const struct dev_cache_ext *e = &c->c_ext[i];
		uint64_t lo, hi;

		if (!ext_overlap(e, off, len, &lo, &hi))
			continue;
		if (e->c_stamped)
			stamps_read((const struct dev_stamp *)e->c_data, e->c_off,
				    e->c_len / DEV_STAMP_BLOCK, off, buf, len);
		else
			memcpy((uint8_t *)buf + (lo - off), e->c_data + (lo - e->c_off), hi - lo);
	}
}

/* A write the cache takes without a new extent (c_merge_max): absorbed by
 * the dirty extent that holds it, or appended to the newest extent (which
 * becomes bytes when either is). */
static int cache_merge(struct dev_cache *c, uint64_t off, const void *buf, uint32_t len,
		       bool stamped)
{
	struct dev_cache_ext *e = c->c_n ? &c->c_ext[c->c_n - 1] : NULL;
	uint8_t *d;
	int rc;

	for (size_t i = 0; i < c->c_n; i++) {
		struct dev_cache_ext *x = &c->c_ext[i];

		if (x->c_seq != c->c_pin && off >= x->c_off && off + len <= x->c_off + x->c_len) {
			rc = dev_cache_overlay_write(c, off, buf, len, stamped);
			return rc < 0 ? rc : 1;
		}
	}
	if (!e || e->c_seq == c->c_pin || off != e->c_off + e->c_len ||
	    e->c_len + len > c->c_merge_max)
		return 0;
	if (!stamped && (rc = ext_to_bytes(e)) < 0)
		return rc;
	d = realloc(e->c_data, ext_bytes(e->c_stamped, (uint64_t)e->c_len + len));
	if (!d)
		return -ENOMEM;
	e->c_data = d;
	rc = dev_cache_overlay_write(c, off, buf, len, stamped);
	if (rc < 0)
		return rc;
	if (e->c_stamped == stamped)
		memcpy(d + ext_bytes(stamped, e->c_len), buf, ext_bytes(stamped, len));
	else
		dev_stamps_fill(d + e->c_len, buf, len / DEV_STAMP_BLOCK);
	e->c_len += len;
	c->c_bytes += len;
	return 1;
}

int dev_cache_add(struct dev_cache *c, uint64_t off, const void *buf,
		  uint32_t len, bool stamped, uint64_t ready_ns)
{
	struct dev_cache_ext *e;
	int m = c->c_merge_max ? cache_merge(c, off, buf, len, stamped) : 0;
	int rc;

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
	e->c_data = malloc(ext_bytes(stamped, len));
	if (!e->c_data)
		return -ENOMEM;
	rc = dev_cache_overlay_write(c, off, buf, len, stamped);
	if (rc < 0) {
		free(e->c_data);
		return rc;
	}
	memcpy(e->c_data, buf, ext_bytes(stamped, len));
	e->c_stamped = stamped;
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
	rc = e->c_stamped ? dev_sparse_write_stamps(media, e->c_off,
						     (const struct dev_stamp *)e->c_data,
						     e->c_len / DEV_STAMP_BLOCK)
			  : dev_sparse_write(media, e->c_off, e->c_data, e->c_len);
	if (rc < 0)
		return rc;
	free(e->c_data);
	c->c_bytes -= e->c_len;
	/* keep arrival order: the rest shift down */
	memmove(e, e + 1, (c->c_n - i - 1) * sizeof(*e));
	c->c_n--;
	return 0;
}

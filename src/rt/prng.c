/*
 * Randomness: xoshiro256** (Blackman and Vigna), seeded through splitmix64
 * so that any 64-bit seed, 0 included, gives a well-mixed non-zero state.
 *
 * Each world owns one generator (rt_rand) and, in sim, a second one for the
 * scheduler. Code that wants a private stream uses struct rt_prng directly.
 * A real world is seeded from the kernel (getrandom) unless its creator
 * chose a seed; identifiers (rt_random_bytes) come from the kernel there.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "rt/rt_int.h"

uint64_t rt_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rt_prng_init(struct rt_prng *p, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		p->s[i] = rt_splitmix64(&x);
}

static inline uint64_t rt_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rt_prng_next(struct rt_prng *p)
{
	uint64_t *s = p->s;
	uint64_t result = rt_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rt_rotl(s[3], 45);
	return result;
}

/*
 * Rejection sampling: values below 2^64 mod n would make the low residues
 * more likely, so they are drawn again (at most half the range, so the
 * expected number of draws is below 2).
 */
uint64_t rt_prng_below(struct rt_prng *p, uint64_t n)
{
	uint64_t threshold, r;

	ASSERT(n > 0);
	threshold = (0 - n) % n;
	do {
		r = rt_prng_next(p);
	} while (r < threshold);
	return r % n;
}

uint64_t rt_rand(void)
{
	struct rt_world *w = rt_cur_world();
	uint64_t r;

	rt_world_lock(w);
	r = rt_prng_next(&w->w_prng);
	rt_world_unlock(w);
	return r;
}

/* The kernel's randomness: 0 or -errno. */
int rt_getrandom(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rt_random_bytes(void *buf, size_t len)
{
	struct rt_world *w = rt_cur_world();
	uint8_t *p = buf;

	if (w->w_kind == RT_WORLD_REAL)
		return rt_getrandom(buf, len);
	rt_world_lock(w);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t r = rt_prng_next(&w->w_prng);
		memcpy(p + i, &r, len - i < 8 ? len - i : 8);
	}
	rt_world_unlock(w);
	return 0;
}

int rt_uuid_v4(uint8_t u[16])
{
	int rc = rt_random_bytes(u, 16);

	if (rc)
		return rc;
	u[6] = (uint8_t)((u[6] & 0x0F) | 0x40); /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3F) | 0x80); /* RFC 4122 variant */
	return 0;
}

uint64_t rt_rand_below(uint64_t n)
{
	struct rt_world *w = rt_cur_world();
	uint64_t r;

	rt_world_lock(w);
	r = rt_prng_below(&w->w_prng, n);
	rt_world_unlock(w);
	return r;
}

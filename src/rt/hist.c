/*
 * hist.c: the log-linear latency histogram (ujbd/hist.h).
 *
 * The one idea: a value's bucket is its power of two (the exponent) and the
 * next RT_HIST_SUB_BITS bits below its leading one (the mantissa), so the
 * bucket width grows with the value and the relative error stays bounded.
 * Lives in rt, the lowest layer, so that the journal's statistics and the
 * lab's workloads count latencies the same way.
 */
#include <string.h>

#include "rt/rt_int.h"
#include "priv/hist.h"

unsigned rt_hist_bucket(uint64_t ns)
{
	unsigned e, b;

	if (ns < RT_HIST_SUB)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns); /* e >= RT_HIST_SUB_BITS */
	b = (e - RT_HIST_SUB_BITS + 1) * RT_HIST_SUB +
	    (unsigned)((ns >> (e - RT_HIST_SUB_BITS)) & (RT_HIST_SUB - 1));
	ASSERT(b < RT_HIST_BUCKETS);
	return b;
}

uint64_t rt_hist_bucket_max(unsigned b)
{
	unsigned g = b / RT_HIST_SUB, m = b % RT_HIST_SUB, shift;
	uint64_t lo;

	ASSERT(b < RT_HIST_BUCKETS);
	if (g == 0)
		return b;
	shift = g - 1; /* e - RT_HIST_SUB_BITS */
	lo = (uint64_t)(RT_HIST_SUB + m) << shift;
	return lo + ((1ull << shift) - 1);
}

void rt_hist_init(struct rt_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void rt_hist_add(struct rt_hist *h, uint64_t ns)
{
	h->h_bucket[rt_hist_bucket(ns)]++;
	h->h_count++;
	h->h_sum_ns += ns;
	if (ns > h->h_max_ns)
		h->h_max_ns = ns;
}

void rt_hist_merge(struct rt_hist *dst, const struct rt_hist *src)
{
	for (unsigned b = 0; b < RT_HIST_BUCKETS; b++)
		dst->h_bucket[b] += src->h_bucket[b];
	dst->h_count += src->h_count;
	dst->h_sum_ns += src->h_sum_ns;
	if (src->h_max_ns > dst->h_max_ns)
		dst->h_max_ns = src->h_max_ns;
}

uint64_t rt_hist_percentile(const struct rt_hist *h, double p)
{
	uint64_t rank, seen = 0, v;
	double r;

	ASSERT(p >= 0 && p <= 100);
	if (h->h_count == 0)
		return 0;
	/* The rank of the sample at p: ceil(count * p / 100), >= 1. */
	r = (double)h->h_count * p / 100.0;
	rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < RT_HIST_BUCKETS; b++) {
		seen += h->h_bucket[b];
		if (seen >= rank) {
			v = rt_hist_bucket_max(b);
			return v < h->h_max_ns ? v : h->h_max_ns;
		}
	}
	ASSERT(0); /* the buckets sum to h_count */
	return h->h_max_ns;
}

uint64_t rt_hist_mean(const struct rt_hist *h)
{
	return h->h_count ? h->h_sum_ns / h->h_count : 0;
}

/*
 * rt_hist: the one latency histogram. What its header promises: a
 * percentile is never below the nearest-rank value of the samples and at
 * most 1/2^RT_HIST_SUB_BITS above it, never above the maximum; merging is
 * the histogram of both; p 0 and p 100 are the smallest and largest ranks.
 */
#include <stdlib.h>

#include "t.h"
#include "priv/hist.h"
#include "priv/rt.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank of sorted v[n]: the ceil(n * p / 100)-th value, at least the 1st. */
static uint64_t nearest_rank(const uint64_t *v, size_t n, double p)
{
	double r = (double)n * p / 100.0;
	size_t k = (size_t)r;

	if ((double)k < r)
		k++;
	return v[k ? k - 1 : 0];
}

static void check_against_samples(uint64_t seed, size_t n, uint64_t range)
{
	static const double ps[] = { 0, 1, 10, 50, 90, 99, 99.9, 100 };
	uint64_t *v = malloc(n * sizeof(*v));
	struct rt_hist *h = malloc(sizeof(*h));
	struct rt_prng prng;

	T_CHECK(v && h);
	rt_prng_init(&prng, seed);
	rt_hist_init(h);
	for (size_t i = 0; i < n; i++) {
		/* a long tail: most values small, a few up to range */
		v[i] = rt_prng_below(&prng, i % 10 ? range / 100 : range);
		rt_hist_add(h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (unsigned k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		uint64_t want = nearest_rank(v, n, ps[k]);
		uint64_t got = rt_hist_percentile(h, ps[k]);

		T_CHECK(got >= want);
		T_CHECK(got - want <= want / RT_HIST_SUB);
		T_CHECK(got <= v[n - 1]);
	}
	T_EQ_U64(rt_hist_percentile(h, 100), v[n - 1]);
	T_EQ_U64(h->h_max_ns, v[n - 1]);
	free(v);
	free(h);
}

static void test_hist_relative_error(void)
{
	check_against_samples(1, 1, 1000);
	check_against_samples(2, 7, 1000);
	check_against_samples(3, 1000, 10 * RT_NS_PER_MS);
	check_against_samples(4, 100000, 2 * RT_NS_PER_S);
}

static void test_hist_merge_and_mean(void)
{
	struct rt_hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct rt_hist *both = calloc(1, sizeof(*both));

	T_CHECK(a && b && both);
	T_EQ_U64(rt_hist_mean(a), 0);
	T_EQ_U64(rt_hist_percentile(a, 99), 0);
	for (uint64_t i = 1; i <= 100; i++) {
		rt_hist_add(i % 2 ? a : b, i * 1000);
		rt_hist_add(both, i * 1000);
	}
	rt_hist_merge(a, b);
	T_CHECK(memcmp(a, both, sizeof(*a)) == 0);
	T_EQ_U64(rt_hist_mean(a), 50500);
	T_EQ_U64(a->h_count, 100);
	T_EQ_U64(a->h_sum_ns, 5050000);
	T_EQ_U64(a->h_max_ns, 100000);
	T_CHECK(rt_hist_percentile(a, 50) >= 50000 &&
		rt_hist_percentile(a, 50) <= 50000 + 50000 / RT_HIST_SUB);
	T_CHECK(rt_hist_percentile(a, 99) >= 99000 && rt_hist_percentile(a, 99) <= 100000);
	free(a);
	free(b);
	free(both);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_hist_relative_error);
	T_RUN(test_hist_merge_and_mean);
	return t_done(argv[0]);
}

/*
 * ujbd latency histogram: one log-linear histogram and one percentile
 * computation for every layer that measures (the journal's statistics, the
 * lab's workloads, devbench, bench).
 *
 * The one idea: a fixed array of buckets, no samples kept, so adding is O(1),
 * never allocates, and two histograms merge by adding their buckets. Values
 * below 2^RT_HIST_SUB_BITS ns have a bucket each (exact); above, every power
 * of two is split into 2^RT_HIST_SUB_BITS equal buckets, so a percentile read
 * from the buckets (the top of the bucket that holds the sample of that rank)
 * is at least the nearest-rank value and at most 1/2^RT_HIST_SUB_BITS (1/16,
 * 6.25 %) above it; it never exceeds the largest value seen. Covers all of
 * uint64_t. The sum and the maximum are exact.
 *
 * Thread-safety: none; the owner locks (or keeps one per thread and merges).
 *
 * Internal to ujbd, not installed: the journal publishes only the summary,
 * struct ujbd_hist in ujbd.h (docs/library.md).
 */
#ifndef UJBD_HIST_H
#define UJBD_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_HIST_SUB_BITS 4
#define RT_HIST_SUB (1u << RT_HIST_SUB_BITS)
#define RT_HIST_BUCKETS ((64 - RT_HIST_SUB_BITS + 1) * RT_HIST_SUB)

struct rt_hist {
	uint64_t h_count, h_sum_ns, h_max_ns;
	uint64_t h_bucket[RT_HIST_BUCKETS];
};

/* Empty h (all zero). */
void rt_hist_init(struct rt_hist *h);
/* Count one value of ns. */
void rt_hist_add(struct rt_hist *h, uint64_t ns);
/* Add src's samples to dst (dst becomes the histogram of both). */
void rt_hist_merge(struct rt_hist *dst, const struct rt_hist *src);
/* The value at percentile p (0 <= p <= 100; 0 reads as the smallest rank):
 * the top of the bucket holding the sample of rank ceil(count * p / 100)
 * (at least 1), clamped to the largest value seen; 0 if h is empty. Within
 * 1/2^RT_HIST_SUB_BITS above the nearest-rank percentile of the samples. */
uint64_t rt_hist_percentile(const struct rt_hist *h, double p);
/* The mean in ns (0 if empty). */
uint64_t rt_hist_mean(const struct rt_hist *h);
/* Bucket index of a value, and the largest value bucket b holds. */
unsigned rt_hist_bucket(uint64_t ns);
uint64_t rt_hist_bucket_max(unsigned b);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_HIST_H */

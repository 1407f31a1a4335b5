/*
 * lat.c: the latency figures every workload prints, from its histogram.
 *
 * The one idea: one summary (avg, p50, p99, max in microseconds) read from
 * an rt_hist, so bench, devbench and the load generators report the same
 * percentile computation under the same JSON keys.
 */
#include <errno.h>

#include "load/load.h"

void load_lat_of(const struct rt_hist *h, struct load_lat *out)
{
	out->avg_us = h->h_count ?
		(double)h->h_sum_ns / (double)h->h_count / 1e3 : 0.0;
	out->p50_us = (double)rt_hist_percentile(h, 50) / 1e3;
	out->p99_us = (double)rt_hist_percentile(h, 99) / 1e3;
	out->max_us = (double)h->h_max_ns / 1e3;
}

int load_lat_json(FILE *f, const struct load_lat *l, int prec)
{
	int rc = fprintf(f, "\"latency_us\":{\"avg\":%.*f,\"p50\":%.*f,"
			 "\"p99\":%.*f,\"max\":%.*f}", prec, l->avg_us, prec,
			 l->p50_us, prec, l->p99_us, prec, l->max_us);

	return rc < 0 ? -EIO : 0;
}

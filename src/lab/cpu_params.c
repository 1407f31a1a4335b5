/*
 * The lab's "cpu" parameter group: how a sim world's virtual CPUs are
 * shared (struct rt_sched), as a table (--cpu=LIST): FIFO bursts, or the
 * kernel's CFS with its three tunables. Every scenario's kernel had CFS
 * (lab_rig_spec_init); the user's list applies over it, as for every
 * other group.
 */
#include <stddef.h>

#include "lab/rig.h"
#include "priv/param.h"
#include "priv/rt.h"

_Static_assert(sizeof(enum rt_sched_kind) == sizeof(int), "enum as int");

static const char *const sched_names[] = { "fifo", "cfs", NULL };

#define P(name, field, type, unit, scale, def, min, max, src, help) \
	RT_PARAM_AS(name, struct rt_sched, field, type, unit, scale, def, min, max, src, help)

static const struct rt_param cpu_rows[] = {
	RT_PARAM_ENUM_AS("sched", struct rt_sched, kind, sched_names, 2, 1,
			 "CFS, Linux's scheduler from 2.6.23 to 6.5, every thread's kernel's "
			 "(fifo: rt_cpu bursts first come, first served, never preempted, woken "
			 "threads run at once: the lab's model before 2026-12-07)",
			 "how the virtual CPUs are shared: fifo, cfs"),
	P("latency_us", latency_ns, RT_PARAM_U64, "us", 1e3, 6000, 1, 1000000,
	  "Linux 3.x-6.5 normalized_sysctl_sched_latency 6 ms",
	  "cfs: the period a CPU's runnable tasks share, x (1 + ilog2(min(CPUs, 8)))"),
	P("min_gran_us", min_gran_ns, RT_PARAM_U64, "us", 1e3, 750, 1, 1000000,
	  "Linux 3.x-6.5 normalized_sysctl_sched_min_granularity 0.75 ms",
	  "cfs: the shortest slice, x the same factor"),
	P("wakeup_gran_us", wakeup_gran_ns, RT_PARAM_U64, "us", 1e3, 1000, 1, 1000000,
	  "Linux 3.x-6.5 normalized_sysctl_sched_wakeup_granularity 1 ms",
	  "cfs: how far behind a woken task must be to preempt, x the same factor"),
};

const struct rt_param_table lab_cpu_param_table =
	RT_PARAM_TABLE("cpu", "how the sim's virtual CPUs are shared (rt_sched)", cpu_rows,
		       struct rt_sched);

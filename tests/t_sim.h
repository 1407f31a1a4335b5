/*
 * t_sim.h: run a test body as the first thread of a fresh sim world, for
 * the tests that need a world but no journal rig (the rig's own runner,
 * rig_sim_run, is this).
 */
#ifndef UJBD_TESTS_T_SIM_H
#define UJBD_TESTS_T_SIM_H

#include <stdint.h>

#include "priv/rt.h"

/* Run fn(arg) as thread "main" of a new sim world with this seed; the
 * world is freed after. 0 or rt_world_new/rt_world_run's error. */
static inline int t_sim_run(uint64_t seed, void (*fn)(void *), void *arg)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = seed };
	rt_world *w = NULL;
	int rc = rt_world_new(&wo, &w);

	if (!rc)
		rc = rt_world_run(w, "main", fn, arg);
	if (w)
		rt_world_free(w);
	return rc;
}

#endif

/*
 * The sim world's baton scheduler. Placeholder until the scheduler lands:
 * creating a sim world fails with -EOPNOTSUPP, so none of the entry points
 * below can be reached.
 */
#include <errno.h>

#include "rt/rt_int.h"

int rt_sim_init(struct rt_world *w) { return -EOPNOTSUPP; }
void rt_sim_release(struct rt_world *w) { }
int rt_sim_create(struct rt_world *w, struct rt_thread *t) { return -EOPNOTSUPP; }
int rt_sim_join(struct rt_thread *t) { return -EOPNOTSUPP; }
int rt_sim_run(struct rt_world *w, struct rt_thread *t) { rt_thread_destroy(t); return -EOPNOTSUPP; }
void rt_sim_yield(void) { RT_ASSERT(0); }
void rt_sim_sleep_until(uint64_t deadline_ns) { RT_ASSERT(0); }
void rt_sim_cpu(uint64_t ns) { RT_ASSERT(0); }
void rt_sim_mutex_lock(rt_mutex *m) { RT_ASSERT(0); }
int rt_sim_mutex_trylock(rt_mutex *m) { RT_ASSERT(0); }
void rt_sim_mutex_unlock(rt_mutex *m) { RT_ASSERT(0); }
int rt_sim_cond_wait(rt_cond *c, rt_mutex *m, uint64_t deadline_ns) { RT_ASSERT(0); }
void rt_sim_cond_wake(rt_cond *c, bool all) { RT_ASSERT(0); }

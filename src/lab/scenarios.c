/*
 * lab scenarios: the registry, one row per scenario.
 *
 * The one idea: adding a scenario is its own file (src/lab/scen_NAME.c,
 * which defines `const struct lab_scenario lab_scen_NAME`) and one row in
 * the table below; nothing else names it. The order of the rows is the
 * order of the report. The table may be empty: the runner then has nothing
 * to run and says so.
 */
#include "lab/lab.h"
#include "lab/scen.h"
#include "priv/reg.h"

static const struct lab_scenario *const scenarios[] = {
	/* &lab_scen_NAME, rows go here, in report order */
	&lab_scen_atime,
	&lab_scen_morton,
	&lab_scen_flush,
	&lab_scen_aim7,
	&lab_scen_smallfile,
	&lab_scen_fsync_loop,
	&lab_scen_writeout,
	&lab_scen_checkpoint,
	NULL, /* ends the table (and keeps an empty one legal C) */
};

/* The rows before the NULL that ends the table. */
static const struct rt_reg reg = RT_REG_NULL_ENDED(scenarios, struct lab_scenario, s_name);

size_t lab_scenario_count(void)
{
	return rt_reg_count(&reg);
}

const struct lab_scenario *lab_scenario_at(size_t i)
{
	return rt_reg_at(&reg, i);
}

const struct lab_scenario *lab_scenario_find(const char *name)
{
	return rt_reg_find(&reg, name);
}

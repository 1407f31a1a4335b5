/*
 * lab scenarios: the registry, one row per scenario.
 *
 * The one idea: adding a scenario is its own file (src/lab/scen_NAME.c,
 * which defines `const struct lab_scenario lab_scen_NAME`) and one row in
 * the table below; nothing else names it. The order of the rows is the
 * order of the report. The table may be empty: the runner then has nothing
 * to run and says so.
 */
#include <string.h>

#include "lab/lab.h"
#include "lab/scen.h"

static const struct lab_scenario *const scenarios[] = {
	/* &lab_scen_NAME, rows go here, in report order */
	&lab_scen_atime,
	&lab_scen_morton,
	&lab_scen_flush,
	&lab_scen_aim7,
	&lab_scen_smallfile,
	&lab_scen_fsync_loop,
	&lab_scen_writeout,
	NULL, /* ends the table (and keeps an empty one legal C) */
};

/* The rows before the NULL that ends the table. */
size_t lab_scenario_count(void)
{
	size_t n = 0;

	while (scenarios[n])
		n++;
	return n;
}

const struct lab_scenario *lab_scenario_at(size_t i)
{
	return i < lab_scenario_count() ? scenarios[i] : NULL;
}

const struct lab_scenario *lab_scenario_find(const char *name)
{
	for (size_t i = 0; name && scenarios[i]; i++)
		if (!strcmp(scenarios[i]->s_name, name))
			return scenarios[i];
	return NULL;
}

/*
 * The elevator registry (blk.h): one row per elevator.
 *
 * The one idea: an elevator is known by this table alone. blk_queue_new,
 * the tools, the stack and the lab find every elevator by its name, and
 * its hooks and its tunables' table, through these rows. Adding an
 * elevator is its own file (src/blk/NAME.c defining its blk_elv_ops and
 * `const struct blk_elevator_type blk_elevator_NAME`) and one row below,
 * with its extern beside the others. The order is the one --help and
 * --params list.
 */
#include "blk/blk_int.h"
#include "priv/reg.h"

extern const struct blk_elevator_type blk_elevator_deadline;
extern const struct blk_elevator_type blk_elevator_cfq;

static const struct blk_elevator_type *const blk_elevators[] = {
	&blk_elevator_noop, /* the default */
	&blk_elevator_deadline,
	&blk_elevator_cfq,
};

static const struct rt_reg reg = RT_REG(blk_elevators, struct blk_elevator_type, e_name);

size_t blk_elevator_count(void)
{
	return rt_reg_count(&reg);
}

const struct blk_elevator_type *blk_elevator_at(size_t i)
{
	return rt_reg_at(&reg, i);
}

const struct blk_elevator_type *blk_elevator_find(const char *name)
{
	return rt_reg_find(&reg, name);
}

/*
 * The elevator registry (blk.h): one row per elevator.
 *
 * The one idea: an elevator is known by this table alone. A value of enum
 * blk_elevator is an index here, so blk_elevator_parse, the tools, the
 * stack and the lab find every elevator, its hooks and its tunables'
 * table through these rows. Adding an elevator is its own file
 * (src/blk/NAME.c defining its blk_elv_ops and `const struct
 * blk_elevator_type blk_elevator_NAME`) and one row below, with its extern
 * beside the others. The first three rows must stay in the order of enum
 * blk_elevator's named constants.
 */
#include "blk/blk_int.h"
#include "priv/reg.h"

static const struct blk_elevator_type *const blk_elevators[] = {
	&blk_elevator_noop,     /* BLK_ELV_NOOP */
	&blk_elevator_deadline, /* BLK_ELV_DEADLINE */
	&blk_elevator_cfq,      /* BLK_ELV_CFQ */
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

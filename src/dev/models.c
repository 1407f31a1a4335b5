/*
 * The disk-model registry (dev.h): one row per simulated disk model.
 *
 * The one idea: a model is known by this table alone. Tools, the stack and
 * the lab find models, their parameter tables and their constructors here,
 * so adding a model is its own file (defining `const struct dev_model
 * dev_model_NAME`) and one row below, with its extern beside the others
 * (the built-in rows are also declared in dev.h, for tests).
 */
#include "dev/dev_int.h"
#include "dev/sim_int.h"
#include "priv/reg.h"

extern const struct dev_model dev_model_hdd;
extern const struct dev_model dev_model_ssd;

static const struct dev_model *const dev_models[] = {
	&dev_model_hdd,
	&dev_model_ssd,
};

static const struct rt_reg reg = RT_REG(dev_models, struct dev_model, m_name);

size_t dev_model_count(void)
{
	return rt_reg_count(&reg);
}

const struct dev_model *dev_model_at(size_t i)
{
	return rt_reg_at(&reg, i);
}

const struct dev_model *dev_model_find(const char *name)
{
	return rt_reg_find(&reg, name);
}

int dev_model_new(const struct dev_model *m, const void *params, struct dev **out)
{
	return dev_sim_new(m->m_sim, params, out);
}

/*
 * The disk-model registry (dev.h): one row per simulated disk model.
 *
 * The one idea: a model is known by this table alone. Tools, the stack and
 * the lab find models, their parameter tables and their constructors here,
 * so adding a model is its own file (defining `const struct dev_model
 * dev_model_NAME`, its declaration in dev.h) and one row below.
 */
#include <string.h>

#include "dev/dev_int.h"

static const struct dev_model *const dev_models[] = {
	&dev_model_hdd,
	&dev_model_ssd,
};

size_t dev_model_count(void)
{
	return sizeof(dev_models) / sizeof(dev_models[0]);
}

const struct dev_model *dev_model_at(size_t i)
{
	return i < dev_model_count() ? dev_models[i] : NULL;
}

const struct dev_model *dev_model_find(const char *name)
{
	for (size_t i = 0; name && i < dev_model_count(); i++)
		if (!strcmp(dev_models[i]->m_name, name))
			return dev_models[i];
	return NULL;
}

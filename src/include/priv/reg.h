/*
 * A registry: a table of pointers to rows, each row with its name at a fixed
 * offset (the elevators, the disk models, the lab's scenarios and parameter
 * groups). One count, one at and one find for all of them, where each
 * registry had its own.
 *
 * A registry is declared beside its table:
 *
 *	static const struct dev_model *const rows[] = { &dev_model_hdd, ... };
 *	static const struct rt_reg reg = RT_REG(rows, struct dev_model, m_name);
 *
 * rt_reg_find compares names with strcmp; a NULL name finds nothing.
 */
#ifndef UJBD_PRIV_REG_H
#define UJBD_PRIV_REG_H

#include <stddef.h>
#include <string.h>

struct rt_reg {
	const void *const *r_rows; /* r_n rows, none NULL */
	size_t r_n;
	size_t r_name_off; /* offsetof(row type, its const char * name) */
};

/* A registry of the whole of array rows (of pointers to TYPE, named by FIELD). */
#define RT_REG(rows, type, field)                                                          \
	{ (const void *const *)(rows), sizeof(rows) / sizeof((rows)[0]), offsetof(type, field) }

/* The same, but for a table whose last row is a NULL that ends it (an empty table stays legal C). */
#define RT_REG_NULL_ENDED(rows, type, field)                                               \
	{ (const void *const *)(rows), sizeof(rows) / sizeof((rows)[0]) - 1, offsetof(type, field) }

static inline size_t rt_reg_count(const struct rt_reg *r)
{
	return r->r_n;
}

/* Row i, or NULL past the end. */
static inline const void *rt_reg_at(const struct rt_reg *r, size_t i)
{
	return i < r->r_n ? r->r_rows[i] : NULL;
}

/* The name of row p. */
static inline const char *rt_reg_name(const struct rt_reg *r, const void *p)
{
	return *(const char *const *)(const void *)((const char *)p + r->r_name_off);
}

/* The row named name, or NULL. */
static inline const void *rt_reg_find(const struct rt_reg *r, const char *name)
{
	for (size_t i = 0; name && i < r->r_n; i++)
		if (!strcmp(rt_reg_name(r, r->r_rows[i]), name))
			return r->r_rows[i];
	return NULL;
}

#endif /* UJBD_PRIV_REG_H */

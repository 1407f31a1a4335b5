/*
 * mem: a RAM device for tests. No volatile cache: a write is durable the
 * moment it completes, so FUA and PREFLUSH cost nothing and a flush is a
 * no-op. Requests are served inside dev_submit (a memcpy) and finished on
 * the completion thread like every other device's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev_int.h"

#define DEV_MEM_MAX_SIZE (1ull << 40) /* a limit on everything: 1 TiB */

struct dev_mem {
	struct dev m_dev;
	rt_mutex m_lock;  /* serialises copies, so a read never sees half a write */
	uint8_t *m_data;  /* [m_lock] */
};

static int dev_mem_submit(struct dev *d, struct dev_req *r)
{
	struct dev_mem *m = (struct dev_mem *)d;

	rt_mutex_lock(&m->m_lock);
	if (r->r_op == DEV_OP_READ)
		memcpy(r->r_buf, m->m_data + r->r_off, r->r_len);
	else if (r->r_op == DEV_OP_WRITE)
		memcpy(m->m_data + r->r_off, r->r_buf, r->r_len);
	rt_mutex_unlock(&m->m_lock);
	r->r_result = r->r_op == DEV_OP_FLUSH ? 0 : (int64_t)r->r_len;
	dev_core_complete(d, r);
	return 0;
}

static void dev_mem_close(struct dev *d)
{
	struct dev_mem *m = (struct dev_mem *)d;

	rt_mutex_release(&m->m_lock);
	free(m->m_data);
	free(m);
}

static const struct dev_ops dev_mem_ops = {
	.o_submit = dev_mem_submit,
	.o_close = dev_mem_close,
};

int dev_mem_new(uint64_t size, uint32_t block_size, struct dev **out)
{
	struct dev_mem *m;
	int rc;

	if (block_size == 0)
		block_size = 512;
	if (block_size & (block_size - 1) || block_size > 65536 || size == 0 ||
	    size % block_size || size > DEV_MEM_MAX_SIZE)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* calloc of a large size maps zero pages lazily: untouched RAM is free */
	m->m_data = calloc(1, (size_t)size);
	if (!m->m_data) {
		free(m);
		return -ENOMEM;
	}
	m->m_dev.d_ops = &dev_mem_ops;
	snprintf(m->m_dev.d_name, sizeof(m->m_dev.d_name), "mem");
	m->m_dev.d_size = size;
	m->m_dev.d_block_size = block_size;
	m->m_dev.d_queue_depth = 64;
	m->m_dev.d_rotational = false;
	m->m_dev.d_volatile_cache = false;
	rc = dev_core_init_locked(&m->m_dev, &m->m_lock, "dev_mem", "mem-done");
	if (rc < 0) {
		free(m->m_data);
		free(m);
		return rc;
	}
	*out = &m->m_dev;
	return 0;
}

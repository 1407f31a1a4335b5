/*
 * stack_int.h: the stack module's private parts (src/stack/).
 */
#ifndef UJBD_STACK_INT_H
#define UJBD_STACK_INT_H

#include "rt/assert.h"
#include "priv/param.h"
#include "priv/stack.h"

enum stack_disk_kind { STACK_DISK_MODEL, STACK_DISK_MEM, STACK_DISK_FILE };

struct stack_mem_params {
	uint32_t block_size;
};

#define STACK_MEM_SIZE (64ull << 20)   /* a mem disk without a size */
#define STACK_FILE_SIZE (256ull << 20) /* a file created without a size */

extern const struct rt_param_table stack_mem_table;
extern const struct rt_param_table stack_file_table;

enum stack_disk_kind stack_disk_kind_of(const char *model);

/* A disk resolved from its spec at stack_new. */
struct stack_disk {
	enum stack_disk_kind d_kind;
	const struct dev_model *d_model;   /* MODEL */
	void *d_params;                    /* MODEL: the model's params struct */
	struct stack_mem_params d_mem;     /* MEM */
	struct dev_file_opts d_file;       /* FILE */
	const char *d_path;                /* FILE */
	uint64_t d_size;                   /* MEM: bytes */
	struct dev *d_dev;                 /* open: after the wrap hook */
};

struct stack_queue {
	bool q_on;
	struct blk_queue_opts q_opts;
	void *q_tunables;                  /* an elevator's own blob, or NULL */
	struct blk_queue *q_q;             /* open */
};

struct stack {
	struct stack_spec s_spec;
	rt_world *s_world;
	struct stack_disk s_disk[STACK_MAX_DISKS];
	struct stack_queue s_queue[STACK_MAX_DISKS];
	struct ujbd *s_j;
	struct jbd_extent s_ext[STACK_MAX_JEXT];
	struct jbd_loc s_loc;
	bool s_running;
	bool s_jonce;                      /* the journal was opened in this run */
	/* the run: fn, its argument and result */
	int (*s_fn)(struct stack *s, void *arg);
	void *s_arg;
	int s_rc;
	char s_err[256];
};

#endif

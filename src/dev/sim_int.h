/*
 * Private to src/dev: the simulated disks' shared machinery (sim.c) and
 * the two timing models (sim_hdd.c, sim_ssd.c).
 *
 * One idea: a model never sleeps. Each sim device has one worker thread
 * that owns the drive's state; whenever something may have changed (a new
 * request, a timer) it calls the model's m_step(), which starts whatever
 * the drive would start at that time, computing when each started request
 * completes. The worker then waits (rt_cond_timedwait: virtual time in the
 * sim world, a real sleep in the real one) until the earliest completion or
 * internal event, and hands finished requests to the completion thread.
 *
 * Times are "logical": a request starts at max(when the drive was free,
 * when it arrived), not at the moment the worker happened to wake up, so a
 * late wakeup in the real world does not cost a lost revolution.
 *
 * Data moves when a request starts (the drive's state is then exactly what
 * a request that completed earlier left behind).
 */
#ifndef UJBD_DEV_SIM_INT_H
#define UJBD_DEV_SIM_INT_H

#include "dev/dev_int.h"

struct dev_sim;

/* A sim disk's geometry, as its model's parameters ask for it. */
struct dev_sim_geometry {
	const char *name;          /* the model's: the device's name; its threads
				    * are "NAME-sim" and "NAME-done" */
	uint64_t size;             /* bytes, at least one block (rounded down to blocks) */
	uint32_t block_size;       /* a power of two, 512..65536 */
	unsigned queue_depth;      /* 1..max_queue_depth */
	unsigned max_queue_depth;
	bool rotational;
	bool volatile_cache;
	uint64_t cache_bytes;      /* the volatile cache, 0 = none */
	uint64_t cache_merge_bytes; /* its coalescing (dev_cache.c_merge_max) */
};

struct dev_sim_model {
	/* Start what can start at now (sim_start); return the time of the
	 * next internal event (UINT64_MAX: none). [s_lock] */
	uint64_t (*m_step)(struct dev_sim *s, uint64_t now);
	/* Drop the volatile cache; now = the time of the cut. [s_lock] */
	void (*m_power_cut)(struct dev_sim *s, uint64_t now);
	/* Optional: free what the model's state holds; the state itself
	 * (s_priv) is freed with the device. */
	void (*m_free)(struct dev_sim *s);

	/* Construction (dev_sim_new): the parameters' table (their struct's
	 * size, the defaults), the checks only this model makes of them
	 * (NULL: none; 0 or -EINVAL), the geometry they ask for, and the
	 * model's state (m_state_size zeroed bytes at s_priv) filled from
	 * them before the device starts; s_dev.d_size is then the size in
	 * whole blocks. */
	const struct rt_param_table *m_params;
	int (*m_check)(const void *params);
	void (*m_geometry)(const void *params, struct dev_sim_geometry *g);
	size_t m_state_size;
	void (*m_setup)(struct dev_sim *s, const void *params);
};

struct dev_sim {
	struct dev s_dev;
	const struct dev_sim_model *s_model;
	void *s_priv;                 /* the model's state [s_lock] */
	rt_mutex s_lock;
	rt_cond s_cond;               /* the worker: something changed */
	struct rt_link s_queue;       /* [s_lock] waiting, arrival order (r_link) */
	unsigned s_q_len;             /* [s_lock] */
	struct rt_link s_svc;         /* [s_lock] started, by (end, seq) (r_link) */
	unsigned s_svc_len;           /* [s_lock] */
	uint64_t s_seq;               /* [s_lock] arrival numbering */
	bool s_stop;                  /* [s_lock] */
	rt_thread *s_thread;
	struct dev_sparse *s_media;   /* [s_lock] what survives a power cut */
	struct dev_cache s_cache;     /* [s_lock] volatile, dirty data */
};

/* Request bookkeeping in the dev_req fields owned by the device. */
#define SIM_END(r) ((r)->r_dev_time[0])
#define SIM_ARRIVAL(r) ((r)->r_dev_time[1])

/*
 * Every model's constructor: a sim disk of model from params (NULL: its
 * table's defaults). The model's own checks, then those every model makes of its
 * geometry (block size a power of two 512..65536, at least one block,
 * queue depth 1..max_queue_depth), then the device with the model's state
 * set up, started. 0, -EINVAL or -ENOMEM (nothing left to free).
 */
int dev_sim_new(const struct dev_sim_model *model, const void *params, struct dev **out);
/* The oldest waiting request, or NULL; the waiting ones in arrival order:
 * RT_LIST_FOR_EACH(r, &s->s_queue, struct dev_req, r_link). [s_lock] */
static inline struct dev_req *dev_sim_oldest(struct dev_sim *s)
{
	return RT_LIST_FIRST(&s->s_queue, struct dev_req, r_link);
}
/* Take r off the wait queue and put it in service, completing at end.
 * [s_lock] */
void dev_sim_start(struct dev_sim *s, struct dev_req *r, uint64_t end);
/* Data movement for a started request: reads see the cache over the media,
 * writes go to the cache or (through = true) to the media. [s_lock] */
int64_t dev_sim_read(struct dev_sim *s, struct dev_req *r);
int64_t dev_sim_write(struct dev_sim *s, struct dev_req *r, bool through,
		      uint64_t ready_ns);

static inline uint64_t sim_max(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t sim_ms(double ms) { return (uint64_t)(ms * 1e6 + 0.5); }
/* ns to move len bytes at mb_s (MB = 1e6 bytes) */
static inline uint64_t sim_xfer_ns(uint64_t len, double mb_s)
{
	return (uint64_t)((double)len * 1e3 / mb_s + 0.5);
}

#endif

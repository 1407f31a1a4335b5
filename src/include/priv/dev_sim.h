/*
 * ujbd devices, internal: the simulated disks (HDD and SSD timing models
 * with a volatile write cache) and the disk-model registry, for the lab,
 * devbench and the tests. Not installed.
 *
 * Why internal: the models' parameter structs grow with every effect the
 * lab learns to model (flush_ms, destage_window, ...); installed, each new
 * field would break the ABI. Their tables (param.h) are internal as well
 * (docs/library.md).
 */
#ifndef UJBD_DEV_SIM_H
#define UJBD_DEV_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ujbd/dev.h"

/* ---- sim: simulated HDD and SSD --------------------------------------- */

/*
 * Data is kept in memory, sparse. Timing is modelled (docs/devices.md: the
 * models and their sources) and realised as a wait on the device's
 * completion thread: a virtual timer in the sim world, a real sleep in the
 * real world. Every field is a
 * row of the model's parameter table (dev_model_hdd.m_params,
 * dev_model_ssd.m_params in src/dev/sim_*.c: unit, default, range and
 * source); `ujbd devbench --params` prints them. The defaults are listed
 * here for the reader.
 */
struct dev_hdd_params {
	uint64_t size;            /* bytes, default 500 GB */
	uint32_t block_size;      /* 512 */
	double rpm;               /* 7200 */
	uint64_t cylinders;       /* 150000 */
	double seek_t1_ms;        /* track-to-track, 1.0 */
	double seek_a_ms, seek_b_ms;  /* short seeks a + b*sqrt(d): 1.0, 0.03375 */
	double seek_c_ms, seek_e_ms;  /* long seeks c + e*d: 4.066, 9.29e-5 */
	uint64_t seek_dc;         /* short/long boundary in cylinders, 33000 */
	double write_settle_ms;   /* 0.75 */
	double rate_outer_mb_s;   /* 120 (MB = 1e6 bytes) */
	double rate_inner_mb_s;   /* 60 */
	double overhead_ms;       /* per command, 0.2 */
	double interface_mb_s;    /* 300 (SATA 3 Gb/s) */
	uint64_t cache_bytes;     /* volatile write cache, 16 MiB; 0 = none */
	uint64_t readahead_bytes; /* segment buffer for sequential reads, 2 MiB */
	unsigned queue_depth;     /* 1; 32 = NCQ (shortest positioning first) */
	/* per command served from the drive's buffer without the head (a
	 * read-ahead hit, a cached write), 0.02; overhead_ms is for the rest */
	double hit_overhead_ms;
	/* The data sheet's average seek, 8.5: the whole seek curve (t1, a..e)
	 * is scaled by seek_avg_ms / seek_fit_avg_ms, the average of the
	 * fitted curve (8.5), so the defaults give exactly the fit. */
	double seek_avg_ms, seek_fit_avg_ms;
	/* A FLUSH (or PREFLUSH) costs this beyond the command overhead and
	 * the destage of the dirty cache, 0 */
	double flush_ms;
	/* The drive reorders its destage among this many dirty extents, 128 */
	unsigned destage_window;
	/* A write over dirty cached sectors replaces them in the cache, and a
	 * write that continues the newest dirty run joins it, up to this many
	 * bytes (1 MiB); 0 = every write is its own extent */
	uint64_t cache_merge_bytes;
};
struct dev_ssd_params {
	uint64_t size;            /* 80 GB */
	uint32_t block_size;      /* 512 */
	unsigned channels;        /* 10 */
	uint32_t page_bytes;      /* 4096 */
	double cmd_us;            /* 20 */
	double page_read_us;      /* 50 */
	double bus_us_per_page;   /* 100 (4 KiB over one channel's flash bus) */
	double program_us;        /* 200 */
	double interface_mb_s;    /* 300 */
	uint64_t cache_bytes;     /* 16 MiB; 0 = none */
	bool power_loss_protection; /* flush costs only the command */
	unsigned queue_depth;     /* 32 */
	double flush_us;          /* a FLUSH costs this beyond the command and
				   * the programs it waits for, 0 */
};
/* The table's defaults (rt_param_defaults of the model's table). */
void dev_hdd_defaults(struct dev_hdd_params *p);
void dev_ssd_defaults(struct dev_ssd_params *p);
int dev_sim_hdd_new(const struct dev_hdd_params *p, struct dev **out);
int dev_sim_ssd_new(const struct dev_ssd_params *p, struct dev **out);
/* Simulate a power cut: dirty data in the volatile cache is lost. The
 * device stays usable (as after power comes back). -EINVAL if not a sim. */
int dev_sim_power_cut(struct dev *d);

/* ---- the disk-model registry ------------------------------------------ */

/*
 * Every simulated disk model is a row: its name, its parameter table (the
 * struct its constructor reads, every field that shapes a result described
 * with unit, default, range and source: param.h) and its constructor.
 * Tools and the stack resolve model names only through here, so adding a
 * model is its file (src/dev/sim_NAME.c, with its `const struct dev_model
 * dev_model_NAME`) and one row in src/dev/models.c; nothing else names it.
 */
struct rt_param_table;
struct dev_sim_model; /* src/dev/sim_int.h */

struct dev_model {
	const char *m_name;                     /* "hdd": also its group name */
	const char *m_help;                     /* one line */
	const struct rt_param_table *m_params;  /* t_size = sizeof its params */
	/* Fill a params struct (m_params->t_size bytes): the table's defaults
	 * and any field outside the table. */
	void (*m_defaults)(void *params);
	/* The simulator's model behind it (src/dev/sim_int.h): dev_model_new
	 * makes the device from a filled params struct. */
	const struct dev_sim_model *m_sim;
	size_t m_size_offset;                   /* offsetof the uint64_t size (bytes) */
};
/* A device of model m from a filled params struct: 0 or -errno. */
int dev_model_new(const struct dev_model *m, const void *params, struct dev **out);
extern const struct dev_model dev_model_hdd;
extern const struct dev_model dev_model_ssd;
size_t dev_model_count(void);
/* Row i (registry order), or NULL past the end. */
const struct dev_model *dev_model_at(size_t i);
/* The row called name, or NULL. */
const struct dev_model *dev_model_find(const char *name);

#endif /* UJBD_DEV_SIM_H */

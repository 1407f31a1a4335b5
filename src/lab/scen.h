/*
 * The seeds' scenarios (issue 11): one file each (scen_<name>.c), one row
 * each in scenarios.c. This header declares the rows and the pieces two
 * scenarios share: the atime experiment (seed 000), which `flush` runs on a
 * sweep of disks, and the era's settings.
 *
 * The one idea: a scenario maps a variant name to stack settings, runs a
 * workload of src/lab/workloads.c on it, and reports figures; it never
 * tunes a model. Every constant below is a workload's size or the era's
 * setting, each with where it comes from.
 */
#ifndef UJBD_LAB_SCEN_H
#define UJBD_LAB_SCEN_H

#include "lab/lab.h"
#include "lab/workloads.h"

extern const struct lab_scenario lab_scen_atime;
extern const struct lab_scenario lab_scen_morton;
extern const struct lab_scenario lab_scen_flush;
extern const struct lab_scenario lab_scen_aim7;
extern const struct lab_scenario lab_scen_smallfile;
extern const struct lab_scenario lab_scen_fsync_loop;

/* The parameter groups the scenarios add (--aim7=LIST): for the runner's
 * --params and --GROUP options. */
extern const struct rt_param_table lab_aim7_param_table;

/* Seed 000's era (2.6.23-rc9, ext3 data=ordered): jbd wrote log blocks as
 * plain WRITE (the commit block by sync_dirty_buffer), no META tag, commit
 * thread at the default be:4, jbd's wait on a buffer being logged
 * (wait-io), cfq, dirty 10/5 (the fs model's defaults). */
void lab_era_2007(struct lab_rig_spec *rs);
/* ext3's barrier=0 (its default before 2.6.38): journal and fsync without
 * cache flushes. */
void lab_era_no_barrier(struct lab_rig_spec *rs);

/* The atime experiment: a background tree-copy loop and the foreground
 * "build" reader, for duration_ns of virtual time after setup. Fills the
 * reader's and the journal's metrics and copy_mb_s into out (NULL: none).
 * sum, if not NULL, gets the foreground's worst operations (ms). */
struct lab_atime_sum {
	double fg_max;          /* the slowest operation */
	double fg_journal_max;  /* the most one operation waited on the journal */
};
struct lab_atime_opts {
	unsigned copy_files, build_files;  /* trees: 2000 files of 4-64 KiB each */
	uint64_t duration_ns;
	uint16_t fg_ioprio;                /* the build thread's */
};
void lab_atime_opts_init(struct lab_atime_opts *o, const struct lab_ctx *c);
int lab_atime_experiment(const struct lab_ctx *c, struct lab_rig_spec *rs,
			 const struct lab_atime_opts *o, struct lab_result *out,
			 struct lab_atime_sum *sum);

/* Parse a commit priority variant ("be:4", "rt:4", "inherit"). */
int lab_variant_ioprio(const char *v, uint16_t *out);

#endif /* UJBD_LAB_SCEN_H */

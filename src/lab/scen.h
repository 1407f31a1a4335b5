/*
 * The threads' scenarios: one file each (scen_<name>.c), one row each in
 * scenarios.c. This header declares the rows and the piece two scenarios
 * share: the atime experiment (the 2007 thread), which `flush` runs on a
 * sweep of disks.
 *
 * The one idea: a scenario maps a variant name to stack settings, runs a
 * workload of src/lab/rig.c on it (its era from src/lab/era.c), and
 * reports figures; it never tunes a model. Every constant below is a
 * workload's size, with where it comes from.
 */
#ifndef UJBD_LAB_SCEN_H
#define UJBD_LAB_SCEN_H

#include "lab/lab.h"
#include "lab/rig.h"

extern const struct lab_scenario lab_scen_atime;
extern const struct lab_scenario lab_scen_morton;
extern const struct lab_scenario lab_scen_flush;
extern const struct lab_scenario lab_scen_aim7;
extern const struct lab_scenario lab_scen_smallfile;
extern const struct lab_scenario lab_scen_fsync_loop;
extern const struct lab_scenario lab_scen_writeout;
extern const struct lab_scenario lab_scen_checkpoint;


/* The parameter groups the scenarios add (--aim7=LIST, --checkpoint=LIST): for the runner's
 * --params and --GROUP options. */
extern const struct rt_param_table lab_aim7_param_table;
extern const struct rt_param_table lab_ckpt_param_table;

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

#endif /* UJBD_LAB_SCEN_H */

/*
 * ujbd stacks: a world, its disks, their queues and a journal, built from a
 * spec of names and parameters.
 *
 * The one idea: a stack is described, not wired. A spec names the world
 * (real or sim, seed, virtual CPUs), each disk by model ("hdd", "ssd", any
 * row of the disk-model registry, "mem" or "file:PATH") with a parameter
 * list ("seek_avg_ms=9.5,rpm=5400"), each queue by elevator (a row of the
 * elevator registry) with its tunables and the queue's own ("queue" group),
 * and the journal: its options, which disk holds it and where. stack_new
 * checks the whole spec (every name, every value, every range) and creates
 * the world; stack_run opens devices, queues and the journal on the world's
 * first thread, runs the caller's function, and closes them again in the
 * reverse order (journal, queues, devices), so every thread exits and a
 * sim run returns. The same spec, the same seed: the same run.
 *
 * Layer: above jbd and ext4, below src/lab and tools/ (DESIGN.md).
 *
 * Parameter groups: every disk model's table, every elevator's tunables
 * and "queue" (struct blk_queue_opts) are groups; stack_spec_set_group
 * applies a "--GROUP=LIST" option to a spec, stack_params_print prints
 * every group (what `ujbd devbench --params` shows).
 *
 * Thread-safety: a stack is used by one thread at a time; the objects it
 * hands out (journal, queues, devices) follow their own rules.
 *
 * Errors: 0 or a negative errno; err (may be NULL) gets a one-line reason
 * that names the group and the parameter ("hdd: seek_avg_ms=100: out of
 * range 0.5..40 ms"). Nothing here prints unless handed a FILE.
 *
 * Internal to ujbd, not installed: stacks are how the tool, the lab and the
 * tests assemble simulated runs (docs/library.md).
 */
#ifndef UJBD_STACK_H
#define UJBD_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "ujbd/format.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct stack;

#define STACK_MAX_DISKS 2

/*
 * One disk. model: a disk-model registry name ("hdd", "ssd"), "mem" (RAM,
 * no volatile cache; params "block_size=512") or "file:PATH" (a regular
 * file or block device; params from the "file" group: direct, create,
 * workers, queue_depth, block_size). params: "name=value,..." of that
 * model's table, NULL or "" for the defaults. size: bytes, 0 = the model's
 * default (file: the file's size, or 256 MiB when it is created).
 */
struct stack_disk_spec {
	const char *model;
	const char *params;
	uint64_t size;
};

/*
 * The queue over one disk. elevator: a registry name ("noop", "deadline",
 * "cfq"); NULL = no queue (the disk is used directly), except for a disk
 * the journal uses, which then gets "noop". params: that elevator's
 * tunables, "name=value,..."; queue_params: the "queue" group
 * (nr_requests, max_sectors, queue_depth, queue_plug, unplug_thresh,
 * unplug_delay_ms, plug=explicit|implicit-sync). trace: keep blktrace events in memory; trace_fn,
 * if set, is passed every event (blk.h: runs with q_lock held).
 * base: the queue's options to start from instead of blk_queue_opts_default
 * (copied by stack_new; pointers in it must outlive the stack): a queue
 * then exists, elevator NULL means base's, base's elevator_tunables
 * count when the elevator is base's, and the lists, trace (when set) and
 * trace_fn (when set) apply on top. NULL = the defaults.
 */
struct stack_queue_spec {
	const char *elevator;
	const char *params;
	const char *queue_params;
	bool trace;
	blk_trace_fn trace_fn;
	void *trace_arg;
	const struct blk_queue_opts *base;
};

#define STACK_MAX_JEXT 8 /* pieces of a journal region (journal_map) */

struct stack_spec {
	enum rt_world_kind world;     /* RT_WORLD_SIM */
	uint64_t seed;                /* 1 */
	unsigned ncpus;               /* sim: virtual CPUs, 0 = rt's default */
	struct rt_sched sched;        /* sim: how the CPUs are shared (FIFO) */
	unsigned ndisks;              /* 0 (a world only), 1 or 2 (1: one "mem" disk) */
	struct stack_disk_spec disks[STACK_MAX_DISKS];
	struct stack_queue_spec queues[STACK_MAX_DISKS];
	bool journal;                 /* open a journal (false) */
	unsigned journal_disk, data_disk;   /* indexes into disks (0, 0) */
	/* The journal region on journal_disk, in journal blocks: it starts at
	 * journal_start; journal_blocks 0 = to the end of the disk. The data
	 * device's blocks are all of data_disk (when they share a disk, the
	 * journal refuses a data block in its region: UJBD_EINJOURNAL). */
	uint64_t journal_start, journal_blocks;
	/* Or a journal in pieces (an internal journal that skips the block
	 * groups' metadata): journal_nmap > 0 uses journal_map[0..nmap), its
	 * lblk from 0 without gaps, instead of journal_start/_blocks. */
	struct jbd_extent journal_map[STACK_MAX_JEXT];
	unsigned journal_nmap;
	uint32_t block_size;          /* journal block size, 4096 */
	/* Journal options (ujbd_opts_default, format on). The stack sets
	 * journal_queue/data_queue to its own queues; format_opts.blocks 0 =
	 * journal_blocks, format_opts.blocksize 0 = block_size. Formatting
	 * needs journal_start 0 (ujbd_open formats an identity map only). */
	struct ujbd_opts jopts;
	/*
	 * A hook to wrap each device once it is open (a recorder, fault
	 * injection): return 0 and set *out (which then owns inner, as dev.h's
	 * wrappers do; *out = inner to leave it alone), or a negative errno.
	 * Runs on the stack's first thread. NULL = none.
	 */
	int (*wrap)(void *arg, unsigned disk, struct dev *inner, struct dev **out);
	void *wrap_arg;
	/* ---- private: storage for lists joined by stack_spec_set_group ---- */
	char s_store[1024];
	size_t s_used;
};

/* Fill s with the defaults above (jopts: ujbd_opts_default with format on,
 * as every run starts from fresh disks). */
void stack_spec_default(struct stack_spec *s);
/* Copy a spec (a plain struct copy would leave params strings joined by
 * stack_spec_set_group pointing into src). */
void stack_spec_copy(struct stack_spec *dst, const struct stack_spec *src);

/*
 * Apply one "--GROUP=LIST" option: group is a disk model ("hdd"; applies
 * to every disk of that model), an elevator ("cfq"; every queue with that
 * elevator) or "queue" (every queue). The list is checked against the
 * group's table at once (a one-line error naming the parameter) and joined
 * to what the spec already has (later values win). -EINVAL for an unknown
 * group, a group no disk or queue of the spec uses, a bad list; -ENOSPC
 * when the spec's storage is full. s is unchanged on an error. list is
 * copied.
 */
int stack_spec_set_group(struct stack_spec *s, const char *group, const char *list,
			 char *err, size_t errlen);
/* Is name a group stack_spec_set_group knows (a model, an elevator, "queue")? */
bool stack_group_known(const char *group);
/* Every group, in --params order (models, "mem", "file", elevators,
 * "queue"): for tools that make one --GROUP option each. NULL past the end. */
size_t stack_group_count(void);
const char *stack_group_at(size_t i);
/* The "file" group's table (struct dev_file_opts: direct, rotational, ...),
 * for tools that keep their own list of groups. */
const struct rt_param_table *stack_file_params(void);
/* Is model a disk a spec may name ("hdd", "mem", "file:PATH")? */
bool stack_disk_known(const char *model);

/*
 * Print every parameter group: each disk model's table, "file", "mem",
 * each elevator's tunables, "queue". json: one object {"GROUP": {...}, ...}
 * with rt_param_json's rows, and a newline. 0 or -EIO.
 */
int stack_params_print(FILE *f, bool json);

/*
 * Check spec (models, elevators, every parameter, disk indexes) and create
 * its world. Nothing is opened yet: that is stack_run's. spec is copied
 * (its strings must outlive the stack). 0, -EINVAL (err says why), -ENOMEM.
 */
int stack_new(const struct stack_spec *spec, struct stack **out, char *err, size_t errlen);

/*
 * Run fn as the first thread (named name) of the stack's world: devices,
 * queues and the journal are opened on that thread before fn and closed
 * (journal, then queues, then devices) after it, so every thread exits and
 * a sim run returns. Returns fn's result, or the first error opening or
 * closing (err of stack_new's kind describes it: stack_error()). May be
 * called again: every run opens everything afresh (devices too: a sim or
 * mem disk starts empty; a file keeps its contents).
 */
int stack_run(struct stack *s, const char *name, int (*fn)(struct stack *s, void *arg),
	      void *arg);
/* The last error's one-line reason ("" if none). */
const char *stack_error(const struct stack *s);

/* Inside fn. The journal (NULL when the spec has none or it is closed),
 * disk i's queue (NULL: none), disk i's device (after the wrap hook). */
struct ujbd *stack_journal(struct stack *s);
struct blk_queue *stack_queue(struct stack *s, unsigned disk);
struct dev *stack_dev(struct stack *s, unsigned disk);
/* The journal's location (devices, map, data blocks) for recovery tools. */
const struct jbd_loc *stack_loc(struct stack *s);
/*
 * Inside fn: close the journal (hard = ujbd_close_hard, as a crash) and
 * open it again with opts (NULL = the spec's jopts with format off), e.g.
 * to recover after a simulated crash. 0 or the error of ujbd_close /
 * ujbd_open (jerr, if not NULL, gets ujbd_open's message).
 */
int stack_journal_close(struct stack *s, bool hard);
int stack_journal_open(struct stack *s, const struct ujbd_opts *opts, struct jbd_err *jerr);

rt_world *stack_world(struct stack *s);
const struct stack_spec *stack_spec(const struct stack *s);
/* Free the stack and its world (not inside stack_run). NULL is fine. */
void stack_free(struct stack *s);

#ifdef __cplusplus
}
#endif
#endif /* UJBD_STACK_H */

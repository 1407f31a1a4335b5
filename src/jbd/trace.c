/*
 * trace.c: the in-process half of the journal's trace events (the USDT
 * half is inline in jtrace.h's macros, at each call site, so every probe
 * site carries its own stapsdt note).
 *
 * The one idea: the hook costs one atomic load when none is installed, and
 * the event it receives is built on the caller's stack: no allocation, no
 * lock, so it may fire under any journal lock.
 */
#include <string.h>

#include "jbd/base.h"
#include "jtrace.h"
#include "priv/rt.h"

/* Checklist: a new kind => ujbd.h's enum, this table, the JBD_TRK_ map in
 * jtrace.h, the field table in jtrace.h and docs/stats.md. */
static const char *const trace_names[UJBD_TR_NR] = {
	[UJBD_TR_START_COMMIT] = "jbd2_start_commit",
	[UJBD_TR_COMMIT_LOCKING] = "jbd2_commit_locking",
	[UJBD_TR_COMMIT_FLUSHING] = "jbd2_commit_flushing",
	[UJBD_TR_COMMIT_LOGGING] = "jbd2_commit_logging",
	[UJBD_TR_END_COMMIT] = "jbd2_end_commit",
	[UJBD_TR_DROP_TRANSACTION] = "jbd2_drop_transaction",
	[UJBD_TR_RUN_STATS] = "jbd2_run_stats",
	[UJBD_TR_CHECKPOINT] = "jbd2_checkpoint",
	[UJBD_TR_CHECKPOINT_STATS] = "jbd2_checkpoint_stats",
	[UJBD_TR_UPDATE_LOG_TAIL] = "jbd2_update_log_tail",
	[UJBD_TR_WRITE_SUPERBLOCK] = "jbd2_write_superblock",
	[UJBD_TR_HANDLE_START] = "jbd2_handle_start",
	[UJBD_TR_HANDLE_EXTEND] = "jbd2_handle_extend",
	[UJBD_TR_HANDLE_STATS] = "jbd2_handle_stats",
	[UJBD_TR_LOCK_BUFFER_STALL] = "jbd2_lock_buffer_stall",
};

/* One semaphore per probe, in the section where sys/sdt.h's notes point:
 * a USDT consumer increments it while attached (JBD_TRACE_ON reads it). */
#define JBD_TRACE_SEM_DEF(n) \
	volatile unsigned short ujbd_##n##_semaphore __attribute__((section(".probes"))) = 0;
JBD_TRACE_EVENTS(JBD_TRACE_SEM_DEF)

void jbd_tracer_init(struct jbd_tracer *t)
{
	t->fn = NULL;
	t->arg = NULL;
	t->commits_only = false;
}

void jbd_tracer_set(struct jbd_tracer *t, ujbd_trace_fn fn, void *arg, bool commits_only)
{
	/* arg first, fn last with release: a reader that sees fn sees arg. */
	__atomic_store_n(&t->fn, (ujbd_trace_fn)NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&t->arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&t->commits_only, commits_only, __ATOMIC_RELEASE);
	__atomic_store_n(&t->fn, fn, __ATOMIC_RELEASE);
}

const char *jbd_trace_name(enum ujbd_trace_kind kind)
{
	if ((unsigned)kind >= UJBD_TR_NR)
		return NULL;
	return trace_names[kind];
}

void jbd_trace_emit(const struct jbd_tracer *t, enum ujbd_trace_kind kind,
		    ujbd_tid_t tid, const uint64_t *a)
{
	struct ujbd_trace_event ev;
	ujbd_trace_fn fn = __atomic_load_n(&t->fn, __ATOMIC_ACQUIRE);
	void *arg = __atomic_load_n(&t->arg, __ATOMIC_ACQUIRE);

	ASSERT((unsigned)kind < UJBD_TR_NR);
	if (!fn)
		return;
	if ((kind == UJBD_TR_HANDLE_START || kind == UJBD_TR_HANDLE_EXTEND ||
	     kind == UJBD_TR_HANDLE_STATS) && __atomic_load_n(&t->commits_only, __ATOMIC_ACQUIRE))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.name = trace_names[kind];
	ev.time_ns = rt_now_ns();
	ev.tid = tid;
	memcpy(ev.a, a, sizeof(ev.a));
	fn(arg, &ev);
}

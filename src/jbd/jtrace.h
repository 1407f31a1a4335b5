/*
 * jtrace.h: the journal's trace events, named after the kernel's jbd2
 * tracepoints, delivered two ways at once:
 *   - a USDT probe ujbd:<name> (sys/sdt.h), which costs one nop when nobody
 *     is attached, so perf and bpftrace can watch a live process:
 *       bpftrace -e 'usdt:./ujbd:ujbd:jbd2_run_stats { printf("%d\n", arg0); }'
 *   - the in-process hook of ujbd_set_trace_hook, as a struct
 *     ujbd_trace_event (kind, name, time, tid, a[]).
 *
 * The probe's arguments are arg0 = tid, then arg1..arg6 = a0..a5 (and for
 * jbd2_run_stats arg7..arg9 = a6..a8). The fields per event, after the
 * kernel's tracepoints (include/trace/events/jbd2.h); times are ns
 * here where the kernel has jiffies; the kernel's `dev` field is dropped:
 *
 *   event                   tid          a0            a1          a2 ..
 *   jbd2_start_commit       transaction  sync_commit
 *   jbd2_commit_locking     transaction  sync_commit
 *   jbd2_commit_flushing    transaction  sync_commit
 *   jbd2_commit_logging     transaction  sync_commit
 *   jbd2_end_commit         transaction  sync_commit   head (j_tail_sequence)
 *   jbd2_drop_transaction   transaction  sync_commit
 *   jbd2_run_stats          tid          wait_ns       request_delay_ns,
 *                           a2 running_ns, a3 locked_ns, a4 flushing_ns,
 *                           a5 logging_ns, a6 handle_count, a7 blocks,
 *                           a8 blocks_logged     (JBD_TRACE_RUN_STATS)
 *   jbd2_checkpoint         oldest tid   result (int64: <= 0 nothing to write)
 *                           on the checkpoint list (0 if none)
 *   jbd2_checkpoint_stats   tid          chp_time_ns   forced_to_close (0)
 *                           a2 written, a3 dropped
 *   jbd2_update_log_tail    tail_sequence first_tid    block_nr    a2 freed
 *   jbd2_write_superblock   s_sequence   write_flags (blk.h bio flags)
 *   jbd2_handle_start       tid          type (0)      line_no     a2
 *                           requested_blocks
 *   jbd2_handle_extend      tid          type (0)      line_no     a2
 *                           buffer_credits, a3 requested_blocks
 *   jbd2_handle_stats       tid          type (0)      line_no     a2
 *                           interval_ns, a3 sync, a4 requested_blocks,
 *                           a5 dirtied_blocks
 *   jbd2_lock_buffer_stall  tid (or 0)   stall_ns (the kernel fires it past
 *                           100 ms, HZ/10, and prints ms)
 *
 * ujbd has no handle types: type is 0 and line_no is the caller's __LINE__
 * (or 0). Unused a[] slots are 0.
 */
#ifndef UJBD_JBD_JTRACE_H
#define UJBD_JBD_JTRACE_H

#include <stdbool.h>
#include <stdint.h>

/* Every probe gets a semaphore (a counter perf and bpftrace raise while they
 * are attached), so JBD_TRACE_ON can tell when someone listens. Without
 * sys/sdt.h (the Makefile then defines UJBD_NO_SDT and says so once) there
 * are no probes: the semaphores stay 0 and only the hook sees events. */
#ifdef UJBD_NO_SDT
#define STAP_PROBE7(...) ((void)0)
#define STAP_PROBE10(...) ((void)0)
#else
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#endif

#include "ujbd/ujbd.h"

/* The events, for the semaphores' declarations (definitions: trace.c). */
#define JBD_TRACE_EVENTS(X)                                                  \
	X(jbd2_start_commit) X(jbd2_commit_locking) X(jbd2_commit_flushing)  \
	X(jbd2_commit_logging) X(jbd2_end_commit) X(jbd2_drop_transaction)   \
	X(jbd2_run_stats) X(jbd2_checkpoint) X(jbd2_checkpoint_stats)        \
	X(jbd2_update_log_tail) X(jbd2_write_superblock) X(jbd2_handle_start) \
	X(jbd2_handle_extend) X(jbd2_handle_stats) X(jbd2_lock_buffer_stall)
#define JBD_TRACE_SEM_DECL(n) extern volatile unsigned short ujbd_##n##_semaphore;
JBD_TRACE_EVENTS(JBD_TRACE_SEM_DECL)

/* The in-process hook (embedded in struct ujbd). fn and arg are read with
 * atomic loads, so jbd_tracer_set may run while events fire; switching from
 * one non-NULL hook to another may pair the old fn with the new arg for an
 * event in flight: remove (NULL) first, then install. */
struct jbd_tracer {
	ujbd_trace_fn fn;
	void *arg;
	/* jbd_set_commit_hook's: the hook gets no handle events (jbd2_handle_*),
	 * and handles keep their lock-free path (jbd_hooked is false) */
	bool commits_only;
};

void jbd_tracer_init(struct jbd_tracer *t);
void jbd_tracer_set(struct jbd_tracer *t, ujbd_trace_fn fn, void *arg, bool commits_only);
/*
 * For an observer that must not change what it watches (the lab's
 * timeline): a hook as ujbd_set_trace_hook's, without the handle events, so
 * that installing it leaves handles on their lock-free path (a full hook
 * takes them through j_state_lock, which moves a sim run's numbers).
 * Replaces any hook; NULL removes it. Not exported (no ujbd_ name).
 */
void jbd_set_commit_hook(struct ujbd *j, ujbd_trace_fn fn, void *arg);
/* The event's name ("jbd2_start_commit", ...), or NULL if out of range. */
const char *jbd_trace_name(enum ujbd_trace_kind kind);
/* Call the hook (if any) with one event; time_ns is taken here. a has
 * UJBD_TRACE_ARGS values. Use the macros below rather than this. */
void jbd_trace_emit(const struct jbd_tracer *t, enum ujbd_trace_kind kind,
		    ujbd_tid_t tid, const uint64_t *a);

/*
 * Does anybody listen to event `name`: an in-process hook, or a USDT
 * consumer attached to its probe (its semaphore is non-zero)? For work done
 * only for an event, such as reading the clock for jbd2_handle_stats'
 * interval: JBD_TRACE itself needs no such guard.
 */
#define JBD_TRACE_ON(tracer, name)                                    \
	(__atomic_load_n(&(tracer)->fn, __ATOMIC_RELAXED) != NULL ||  \
	 ujbd_##name##_semaphore != 0)

/* name -> kind, for JBD_TRACE's token pasting. */
#define JBD_TRK_jbd2_start_commit UJBD_TR_START_COMMIT
#define JBD_TRK_jbd2_commit_locking UJBD_TR_COMMIT_LOCKING
#define JBD_TRK_jbd2_commit_flushing UJBD_TR_COMMIT_FLUSHING
#define JBD_TRK_jbd2_commit_logging UJBD_TR_COMMIT_LOGGING
#define JBD_TRK_jbd2_end_commit UJBD_TR_END_COMMIT
#define JBD_TRK_jbd2_drop_transaction UJBD_TR_DROP_TRANSACTION
#define JBD_TRK_jbd2_run_stats UJBD_TR_RUN_STATS
#define JBD_TRK_jbd2_checkpoint UJBD_TR_CHECKPOINT
#define JBD_TRK_jbd2_checkpoint_stats UJBD_TR_CHECKPOINT_STATS
#define JBD_TRK_jbd2_update_log_tail UJBD_TR_UPDATE_LOG_TAIL
#define JBD_TRK_jbd2_write_superblock UJBD_TR_WRITE_SUPERBLOCK
#define JBD_TRK_jbd2_handle_start UJBD_TR_HANDLE_START
#define JBD_TRK_jbd2_handle_extend UJBD_TR_HANDLE_EXTEND
#define JBD_TRK_jbd2_handle_stats UJBD_TR_HANDLE_STATS
#define JBD_TRK_jbd2_lock_buffer_stall UJBD_TR_LOCK_BUFFER_STALL

/*
 * Fire event `name` (an unquoted tracepoint name from the list above):
 * USDT probe ujbd:name(tid, a0..a5), then the hook if one is installed.
 * Each argument is evaluated once; the hook is skipped (one atomic load)
 * when none is installed.
 */
#define JBD_TRACE(tracer, name, tid, a0, a1, a2, a3, a4, a5)                  \
	do {                                                                  \
		uint64_t jt_a_[UJBD_TRACE_ARGS] = {                           \
			(uint64_t)(a0), (uint64_t)(a1), (uint64_t)(a2),       \
			(uint64_t)(a3), (uint64_t)(a4), (uint64_t)(a5) };     \
		ujbd_tid_t jt_tid_ = (ujbd_tid_t)(tid);                       \
		STAP_PROBE7(ujbd, name, jt_tid_, jt_a_[0], jt_a_[1], jt_a_[2], \
			    jt_a_[3], jt_a_[4], jt_a_[5]);                    \
		if (__atomic_load_n(&(tracer)->fn, __ATOMIC_ACQUIRE))         \
			jbd_trace_emit((tracer), JBD_TRK_##name, jt_tid_,     \
				       jt_a_);                                \
	} while (0)

/* jbd2_run_stats has nine fields: fire it from a struct jbd_run_sample
 * (jstats.h) with USDT probe ujbd:jbd2_run_stats(tid, a0..a8). */
#define JBD_TRACE_RUN_STATS(tracer, r)                                        \
	do {                                                                  \
		const struct jbd_run_sample *jt_r_ = (r);                     \
		uint64_t jt_a_[UJBD_TRACE_ARGS] = {                           \
			jt_r_->wait_ns, jt_r_->request_delay_ns,              \
			jt_r_->running_ns, jt_r_->locked_ns,                  \
			jt_r_->flushing_ns, jt_r_->logging_ns,                \
			jt_r_->handle_count, jt_r_->blocks,                   \
			jt_r_->blocks_logged };                               \
		ujbd_tid_t jt_tid_ = jt_r_->tid;                              \
		STAP_PROBE10(ujbd, jbd2_run_stats, jt_tid_, jt_a_[0],         \
			     jt_a_[1], jt_a_[2], jt_a_[3], jt_a_[4], jt_a_[5], \
			     jt_a_[6], jt_a_[7], jt_a_[8]);                   \
		if (__atomic_load_n(&(tracer)->fn, __ATOMIC_ACQUIRE))         \
			jbd_trace_emit((tracer), UJBD_TR_RUN_STATS, jt_tid_,  \
				       jt_a_);                                \
	} while (0)

#endif

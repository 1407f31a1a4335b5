/*
 * The lab's eras: the settings of the kernels the threads ran on, applied
 * to a scenario's stack spec before its variant and the user's lists.
 *
 * The one idea: an era is what the kernel of a thread did by default
 * (scheduler, journal write flags, the waits of its journal, the file
 * system's mount options), each setting with where it comes from, so a
 * scenario names its era and changes only what its variants compare.
 */
#include <string.h>

#include "lab/rig.h"

void lab_era_2007(struct lab_rig_spec *rs)
{
	rs->elevator = "cfq";
	rs->jopts.commit_ioprio = RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4); /* kjournald: default */
	/* META tagging came in 2.6.35 (Jeff Moyer, "jbd2: tag journal writes as
	 * metadata I/O", linux-ext4, April 2010) */
	rs->jopts.journal_meta = false;
	rs->jopts.journal_sync = UJBD_SYNC_OFF;   /* jbd: log blocks WRITE, commit block waited */
	lab_era_jbd_waits(rs);
	rs->jopts.data_mode = UJBD_DATA_ORDERED;
	rs->fsp.atime = FS_ATIME_STRICT;         /* relatime became default in 2.6.30 */
	lab_era_no_barrier(rs);
}

/* jbd's wait (and jbd2's until 3.11, "jbd2: refine waiting for shadow
 * buffers"): a handle that needs a buffer being logged sleeps until the
 * commit's wait loop reaches it (fs/jbd/commit.c of 2.6.2x), beside the
 * buffer lock and writeback every kernel had. */
void lab_era_jbd_waits(struct lab_rig_spec *rs)
{
	rs->jopts.under_commit = UJBD_UNDER_COMMIT_WAIT_LOOP;
	lab_era_buffers(rs);
}

/* Today's jbd2 (since 3.11): the buffer lock and writeback as ever; a
 * shadowed buffer is released by its own log write's completion. */
void lab_era_today(struct lab_rig_spec *rs)
{
	rs->jopts.under_commit = UJBD_UNDER_COMMIT_WAIT_IO;
	lab_era_buffers(rs);
}

/* What every kernel did with metadata buffers: do_get_write_access
 * begins with lock_buffer (a write access waits for I/O in flight on the
 * buffer), and committed buffers, dirty in the block device's cache, go
 * home by the flusher (pdflush to 2.6.31, the per-bdi flusher since)
 * every dirty_writeback_centisecs (500) once older than
 * dirty_expire_centisecs (3000), or by a checkpoint when the log runs
 * short. */
void lab_era_buffers(struct lab_rig_spec *rs)
{
	rs->jopts.buffer_lock = true;
	rs->jopts.writeback_interval_ns = 5 * RT_NS_PER_S;
	rs->jopts.writeback_expire_ns = 30 * RT_NS_PER_S;
}

/* What the kernels from 2.6.30 (2009) on did by default, the latency fixes
 * in: cfq, journal writes without REQ_META (until 6.8), dirty 20/10
 * (2.6.29 on), fsync's data writes WRITE_SYNC, mke2fs's journal in the
 * middle group (1.41 on). */
void lab_era_2009(struct lab_rig_spec *rs)
{
	rs->elevator = "cfq";
	rs->jopts.journal_meta = false;
	rs->fsp.fsync_sync = true;
	rs->fsp.dirty_ratio = 20;
	rs->fsp.dirty_background_ratio = 10;
	rs->fsp.journal_place = FS_JOURNAL_MIDDLE;
}

/* ext3 ran with barrier=0 by default until 2.6.38 (ext4 with barrier=1):
 * the era's journal and fsync asked the drive for no cache flush. */
void lab_era_no_barrier(struct lab_rig_spec *rs)
{
	rs->jopts.barrier = false;
	rs->fsp.barrier = false;
}

int lab_variant_ioprio(const char *v, uint16_t *out)
{
	if (strcmp(v, "inherit") == 0) {
		*out = UJBD_IOPRIO_INHERIT;
		return 0;
	}
	return rt_ioprio_parse(v, out);
}

int lab_rig_spec_2007(struct lab_rig_spec *rs, const char *variant)
{
	lab_rig_spec_init(rs);
	lab_era_2007(rs);
	return lab_variant_ioprio(variant, &rs->jopts.commit_ioprio);
}

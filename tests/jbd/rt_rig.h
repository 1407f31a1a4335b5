/*
 * rt_rig.h: a journal runtime on RAM (or any) devices for the tests of
 * the runtime (tests/jbd/test_rt_*.c): a journal device, a data device,
 * the identity map, open with options, read back raw blocks.
 */
#ifndef UJBD_TESTS_RT_RIG_H
#define UJBD_TESTS_RT_RIG_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_sim.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "priv/stack.h"
#include "ujbd/ujbd.h"

struct rig {
	struct dev *jd, *dd;       /* journal and data devices (owned) */
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct ujbd *j;
	uint32_t bs;
	uint64_t jblocks, dblocks;
	struct jbd_err err;
};

/* Devices: RAM unless jd/dd are given (then owned by the rig). */
static inline int rig_devs(struct rig *r, uint32_t bs, uint64_t jblocks, uint64_t dblocks,
			   struct dev *jd, struct dev *dd)
{
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->bs = bs;
	r->jblocks = jblocks;
	r->dblocks = dblocks;
	r->jd = jd;
	r->dd = dd;
	if (!r->jd)
		rc = dev_mem_new(jblocks * bs, 512, &r->jd);
	if (!rc && !r->dd)
		rc = dev_mem_new(dblocks * bs, 512, &r->dd);
	r->ext = (struct jbd_extent){ 0, 0, jblocks };
	r->loc = (struct jbd_loc){ .j_dev = r->jd, .j_blocksize = bs, .j_map = &r->ext,
				   .j_nmap = 1, .j_len = jblocks, .j_sb_block = 0,
				   .j_data = r->dd, .j_data_blocks = dblocks };
	return rc;
}

static inline void rig_opts_from(struct ujbd_opts *o, bool format, bool jbd2)
{
	if (jbd2)
		ujbd_opts_jbd2(o);
	else
		ujbd_opts_default(o);
	o->format = format;
	o->format_opts.csum = JBD_CSUM_KIND_V3;
	for (int i = 0; i < 16; i++)
		o->format_opts.uuid[i] = (uint8_t)(0x21 + i);
}

static inline void rig_opts(struct ujbd_opts *o, bool format)
{
	rig_opts_from(o, format, false);
}

/* jbd2's way (ujbd_opts_jbd2): kjournald commits every transaction, so
 * ujbd_commit_tid returns at once and the commit runs beside the caller;
 * ordered data goes home, no async commit. For the tests of those paths. */
static inline void rig_opts_jbd2(struct ujbd_opts *o, bool format)
{
	rig_opts_from(o, format, true);
}

static inline int rig_open(struct rig *r, const struct ujbd_opts *o)
{
	int rc = ujbd_open(&r->loc, o, &r->j, &r->err);

	if (rc)
		fprintf(stderr, "  rig_open: %d %s\n", rc, r->err.msg);
	return rc;
}

static inline void rig_free(struct rig *r)
{
	if (r->j)
		ujbd_close_hard(r->j);
	r->j = NULL;
	if (r->dd && r->dd != r->jd)
		dev_close(r->dd);
	if (r->jd)
		dev_close(r->jd);
	r->jd = r->dd = NULL;
}

/* Run fn(arg) as thread "main" of a new sim world with this seed. */
static inline int rig_sim_run(uint64_t seed, void (*fn)(void *), void *arg)
{
	return t_sim_run(seed, fn, arg);
}

/*
 * A sim stack as the rig's tests use it: one disk of model ("ssd", "hdd",
 * "mem") of size bytes, the journal (jblocks of bs at block 0, rig_opts,
 * format on) and the data on it. Adjust *sp, then rig_stack_run.
 */
static inline void rig_stack_spec(struct stack_spec *sp, uint64_t seed, const char *model,
				  uint64_t size, uint32_t bs, uint64_t jblocks)
{
	stack_spec_default(sp);
	sp->seed = seed;
	sp->disks[0] = (struct stack_disk_spec){ model, NULL, size };
	sp->journal = true;
	sp->journal_blocks = jblocks;
	sp->block_size = bs;
	rig_opts(&sp->jopts, true);
}

/* Build sp's stack, run fn as its thread "main", free it: fn's result or
 * the stack's error (printed). */
static inline int rig_stack_run(const struct stack_spec *sp, int (*fn)(struct stack *, void *),
				void *arg)
{
	struct stack *st = NULL;
	char err[256] = "";
	int rc = stack_new(sp, &st, err, sizeof(err));

	if (!rc)
		rc = stack_run(st, "main", fn, arg);
	if (rc)
		fprintf(stderr, "  rig_stack_run: %d %s\n", rc, st ? stack_error(st) : err);
	stack_free(st);
	return rc;
}

/* Inside a stack run: a rig over the stack's devices and journal, for
 * rig_has, rig_data, rig_recover (the stack owns them: no rig_free). */
static inline void rig_of_stack(struct rig *r, struct stack *st)
{
	const struct jbd_loc *l = stack_loc(st);

	memset(r, 0, sizeof(*r));
	r->loc = *l;
	r->jd = l->j_dev;
	r->dd = l->j_data;
	r->j = stack_journal(st);
	r->bs = l->j_blocksize;
	r->jblocks = l->j_len;
	r->dblocks = l->j_data_blocks;
}

/* The journal superblock as on the device. */
static inline int rig_sb(struct rig *r, struct jbd2_sb *sb)
{
	return dev_pread(r->jd, sb, sizeof(*sb), 0);
}

/* One data block as on the data device. */
static inline int rig_data(struct rig *r, uint64_t block, void *buf)
{
	return dev_pread(r->dd, buf, r->bs, block * r->bs);
}

/* Fill a block with a pattern from (block, gen). */
static inline void rig_fill(void *buf, uint32_t bs, uint64_t block, uint32_t gen)
{
	uint32_t *p = buf;

	for (uint32_t i = 0; i < bs / 4; i++)
		p[i] = (uint32_t)(block * 2654435761u) ^ gen ^ (i * 40503u);
}

/* One handle writing blocks [first, first+n) with generation gen. */
static inline int rig_write(struct ujbd *j, uint64_t first, unsigned n, uint32_t gen, bool sync,
			    ujbd_tid_t *tid)
{
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	int rc = ujbd_start(j, n, &h);

	if (rc)
		return rc;
	if (tid)
		*tid = ujbd_handle_tid(h);
	ujbd_handle_set_sync(h, sync);
	for (unsigned i = 0; i < n && !rc; i++) {
		rc = ujbd_get_write_access(h, first + i, &b);
		if (rc)
			break;
		rig_fill(ujbd_buf_data(b), ujbd_block_size(j), first + i, gen);
		rc = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	int s = ujbd_stop(h);
	return rc ? rc : s;
}

/* Does data-device block `block` hold generation gen? */
static inline bool rig_has(struct rig *r, uint64_t block, uint32_t gen)
{
	uint8_t *a = malloc(r->bs), *b = malloc(r->bs);
	bool ok = a && b && rig_data(r, block, a) == 0;

	if (ok) {
		rig_fill(b, r->bs, block, gen);
		ok = memcmp(a, b, r->bs) == 0;
	}
	free(a);
	free(b);
	return ok;
}

/* Is data-device block `block` all zeros? */
static inline bool rig_is_zero(struct rig *r, uint64_t block)
{
	uint8_t *a = malloc(r->bs), *z = calloc(1, r->bs);
	bool ok = a && z && rig_data(r, block, a) == 0 && memcmp(a, z, r->bs) == 0;

	free(a);
	free(z);
	return ok;
}

/* Replay the journal of r with the offline recovery, as after a crash. */
static inline int rig_recover(struct rig *r)
{
	struct jbd_journal jj;
	struct jbd_recover_result res;
	struct jbd_err err;
	int rc = jbd_journal_load(&r->loc, &jj, &err);

	if (!rc)
		rc = jbd_recover(&jj, NULL, &res, &err);
	if (rc)
		fprintf(stderr, "  recover: %s\n", err.msg);
	return rc;
}

/* A fresh directory /tmp/NAME-XXXXXX into dir[n] for a test program's files: 0, or -1
 * having said why (main returns 1). */
static inline int rig_tmpdir(char *dir, size_t n, const char *name)
{
	snprintf(dir, n, "/tmp/%s-XXXXXX", name);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

/* Remove dir and everything in it, at the end of a test program (saying so if not). */
static inline void rig_rmtree(const char *dir)
{
	if (t_sh("rm -rf %s", dir))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* A file of size bytes (sparse), created or truncated: 0 or -1. */
static inline int rig_mkfile(const char *path, off_t size)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	int rc = fd < 0 || ftruncate(fd, size) ? -1 : 0;

	if (fd >= 0)
		close(fd);
	return rc;
}

#endif

/*
 * fs_rig.h: a journal and the lab's file-system model on one device (for
 * the tests of src/fs/): data blocks [0, dblocks), the journal as a
 * region after them, one queue for both, in a sim world.
 */
#ifndef UJBD_TESTS_FS_RIG_H
#define UJBD_TESTS_FS_RIG_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "fs/fs.h"
#include "fs/fs_int.h"
#include "priv/blk.h"
#include "ujbd/dev.h"
#include "priv/dev_sim.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define FR_BS 4096u

struct frig {
	struct dev *mem, *dev;     /* dev: mem, or a recorder over it */
	struct blk_queue *q;
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct ujbd *j;
	struct fs *fs;
	struct fs_params p;
	uint64_t dblocks, jblocks;
	enum ujbd_data_mode mode;
	uint8_t *snap;             /* rec: the device when the log starts */
	bool ssd;                  /* a sim SSD (time passes) instead of RAM */
	uint64_t commit_ns;        /* the journal's commit interval (0: default) */
};

/* A small fs: groups of 1024 blocks, 256 inodes, 64 MiB of "RAM". */
static inline void frig_params(struct fs_params *p)
{
	fs_params_default(p);
	p->blocks_per_group = 1024;
	p->inodes_per_group = 256;
	p->ram_bytes = 64ull << 20;
	p->cpu_op_ns = 0;
	p->journal_blocks = 0;   /* the journal lies past the file system */
}

static inline void frig_loc(struct frig *r)
{
	r->ext = (struct jbd_extent){ 0, r->dblocks, r->jblocks };
	r->loc = (struct jbd_loc){ .j_dev = r->dev, .j_blocksize = FR_BS, .j_map = &r->ext,
				   .j_nmap = 1, .j_len = r->jblocks, .j_sb_block = 0,
				   .j_data = r->dev, .j_data_blocks = r->dblocks };
}

/* A formatted journal written into the region after the data blocks. */
static inline int frig_format(struct frig *r)
{
	struct jbd_format_opts fo = { .blocksize = FR_BS, .blocks = r->jblocks,
				      .csum = JBD_CSUM_KIND_V3 };
	size_t len = (size_t)r->jblocks * FR_BS;
	uint8_t *buf = malloc(len);
	struct dev *jd = NULL;
	int rc = buf ? dev_mem_new(len, 512, &jd) : -ENOMEM;

	for (int i = 0; i < 16; i++)
		fo.uuid[i] = (uint8_t)(0x31 + i);
	if (!rc)
		rc = jbd_format(jd, &fo, NULL);
	if (!rc)
		rc = dev_pread(jd, buf, (uint32_t)len, 0) < 0 ? -EIO : 0;
	if (!rc)
		rc = dev_pwrite(r->mem, buf, (uint32_t)len, r->dblocks * FR_BS, 0) < 0 ? -EIO : 0;
	if (jd)
		dev_close(jd);
	free(buf);
	return rc;
}

static inline int frig_open_journal(struct frig *r, bool format)
{
	struct ujbd_opts o;
	struct jbd_err err = { 0 };
	int rc;

	/* the model's journal is the era's (jbd2's choices): it reads data
	 * blocks back from the device, home since their commit */
	ujbd_opts_jbd2(&o);
	(void)format;
	o.data_mode = r->mode;
	o.journal_queue = o.data_queue = r->q;
	o.recover = true;
	o.cache_blocks = 4096;
	if (r->commit_ns)
		o.commit_interval_ns = r->commit_ns;
	frig_loc(r);
	rc = ujbd_open(&r->loc, &o, &r->j, &err);
	if (rc)
		fprintf(stderr, "  frig: ujbd_open %d %s\n", rc, err.msg);
	return rc;
}

/* Devices, queue, journal, mkfs, mount. rec: wrap the device in a recorder
 * (after mkfs, the log is reset: it starts at the empty file system). */
static inline int frig_up(struct frig *r, uint64_t dblocks, uint64_t jblocks, bool rec)
{
	int rc;

	r->dblocks = dblocks;
	r->jblocks = jblocks;
	r->p.data_mode = r->mode;
	if (r->ssd) {
		struct dev_ssd_params sp;

		dev_ssd_defaults(&sp);
		sp.size = (dblocks + jblocks) * FR_BS;
		rc = dev_sim_ssd_new(&sp, &r->mem);
	} else {
		rc = dev_mem_new((dblocks + jblocks) * FR_BS, 512, &r->mem);
	}
	r->dev = r->mem;
	if (!rc)
		rc = frig_format(r);
	if (!rc && rec)
		rc = dev_rec_new(r->mem, &r->dev);
	if (!rc)
		rc = blk_queue_new(r->dev, NULL, &r->q);
	if (!rc)
		rc = frig_open_journal(r, true);
	if (!rc)
		rc = fs_mkfs(r->j, r->q, &r->p);
	if (!rc && rec) {
		rc = ujbd_checkpoint(r->j);
		blk_drain(r->q);
		dev_rec_reset(r->dev);
		r->snap = malloc((dblocks + jblocks) * FR_BS);
		if (!r->snap || dev_pread(r->mem, r->snap, (uint32_t)((dblocks + jblocks) * FR_BS), 0) < 0)
			rc = -ENOMEM;
	}
	if (!rc)
		rc = fs_mount(r->j, r->q, &r->p, &r->fs);
	if (rc)
		fprintf(stderr, "  frig_up: %d\n", rc);
	return rc;
}

/* Unmount (when mounted), close the journal, free the queue. */
static inline int frig_down(struct frig *r)
{
	int rc = 0, s;

	if (r->fs)
		rc = fs_unmount(r->fs);
	r->fs = NULL;
	if (r->j) {
		s = ujbd_close(r->j);
		rc = rc ? rc : s;
	}
	r->j = NULL;
	if (r->q)
		blk_queue_free(r->q);
	r->q = NULL;
	return rc;
}

static inline void frig_free(struct frig *r)
{
	if (r->dev)
		dev_close(r->dev);       /* a recorder closes the device it wraps */
	else if (r->mem)
		dev_close(r->mem);
	r->dev = r->mem = NULL;
	free(r->snap);
	r->snap = NULL;
}

/* The image a crash right after the first `point` entries of the log
 * leaves (policy NULL: what completed flushes made durable), recovered
 * through ujbd_open, on a new RAM device. */
static inline int frig_crash(struct frig *r, size_t point, const struct dev_crash_policy *pol,
			     struct dev **out)
{
	struct dev_crash_policy flushed = { .mode = DEV_CRASH_FLUSHED };
	struct frig c = *r;
	uint64_t size = (r->dblocks + r->jblocks) * FR_BS;
	int rc = dev_mem_new(size, 512, &c.mem);

	if (rc)
		return rc;
	c.dev = c.mem;
	c.j = NULL;
	c.fs = NULL;
	c.snap = NULL;
	rc = dev_pwrite(c.mem, r->snap, (uint32_t)size, 0, 0) < 0 ? -EIO : 0;
	if (!rc)
		rc = dev_rec_image(r->dev, point, pol ? pol : &flushed, c.mem);
	if (!rc)
		rc = blk_queue_new(c.mem, NULL, &c.q);
	if (!rc)
		rc = frig_open_journal(&c, false);
	if (!rc)
		rc = ujbd_close(c.j);
	c.j = NULL;
	if (c.q)
		blk_queue_free(c.q);
	if (rc) {
		dev_close(c.mem);
		return rc;
	}
	*out = c.mem;
	return 0;
}

static inline int frig_fsck(struct frig *r, char *msg, size_t len)
{
	return fs_fsck(r->mem, FR_BS, msg, len);
}

/* Run fn(arg) as thread "main" of a new sim world. */
static inline int frig_sim(uint64_t seed, void (*fn)(void *), void *arg)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = seed };
	rt_world *w = NULL;
	int rc = rt_world_new(&wo, &w);

	if (!rc)
		rc = rt_world_run(w, "main", fn, arg);
	if (w)
		rt_world_free(w);
	return rc;
}

/* The on-disk inode, read raw from the device (after unmount). */
static inline int frig_inode(struct frig *r, fs_ino_t ino, struct lfs_inode *in)
{
	uint8_t buf[FR_BS];
	uint32_t ipg = r->p.inodes_per_group, grp = (ino - 1) / ipg, idx = (ino - 1) % ipg;
	uint64_t base = (uint64_t)grp * r->p.blocks_per_group + (grp == 0 ? 2 : 0);
	int rc = dev_pread(r->mem, buf, FR_BS, (base + 2 + idx / 32) * FR_BS);

	if (rc >= 0)
		memcpy(in, buf + (idx % 32) * 128, sizeof(*in));
	return rc < 0 ? rc : 0;
}

#endif

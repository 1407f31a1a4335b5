/*
 * The lab's file-system model (src/fs/): operations, ext3's
 * allocation, atime policies, the page cache, writeback and throttling,
 * fsync durability. Every test runs in the sim world (virtual time) on a
 * small file system (groups of 1024 blocks) and ends with fs_fsck.
 */
#include "fs_rig.h"

struct tcase {
	void (*body)(struct frig *r);
	void (*tweak)(struct fs_params *p);
	uint64_t dblocks, jblocks;
	bool rec, ssd;
};

static void sim_main(void *arg)
{
	struct tcase *tc = arg;
	struct frig r = { 0 };
	char msg[200];

	frig_params(&r.p);
	r.ssd = tc->ssd;
	if (tc->tweak)
		tc->tweak(&r.p);
	if (frig_up(&r, tc->dblocks ? tc->dblocks : 4096, tc->jblocks ? tc->jblocks : 4096,
		    tc->rec)) {
		T_FAILF("frig_up");
	} else {
		tc->body(&r);
	}
	if (frig_down(&r) && !t_cur_failed)
		T_FAILF("frig_down failed");
	if (!t_cur_failed && r.mem && frig_fsck(&r, msg, sizeof(msg)))
		T_FAILF("fsck after the test: %s", msg);
	frig_free(&r);
}

#define FS_TEST(name, tweak_fn, dbl, jbl)                                     \
	static void name(void)                                                \
	{                                                                     \
		struct tcase tc = { name##_body, tweak_fn, dbl, jbl, false, false }; \
		T_CHECK(frig_sim(7, sim_main, &tc) == 0);                     \
	}

static struct fs_stats st(struct frig *r)
{
	struct fs_stats s;

	fs_stats(r->fs, &s);
	return s;
}

static uint32_t ino_grp(struct frig *r, fs_ino_t ino)
{
	return (ino - 1) / r->p.inodes_per_group;
}

/* ---- operations ---- */

static void t_ops_body(struct frig *r)
{
	struct fs_stat s;
	fs_ino_t f, g;
	char msg[200];

	T_EQ(fs_mkdir(r->fs, "/a"), 0);
	T_EQ(fs_mkdir(r->fs, "/a"), -EEXIST);
	T_EQ(fs_mkdir(r->fs, "/x/y"), -ENOENT);
	T_EQ(fs_create(r->fs, "/a/f", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 100000, 0), 0);
	T_EQ(fs_stat(r->fs, "/a/f", &s), 0);
	T_EQ(s.ino, f);
	T_CHECK(!s.dir);
	T_EQ(s.size, 100000);
	T_EQ(s.blocks, 25);
	T_EQ(s.nlink, 1);
	T_EQ(fs_read(r->fs, f, 0, 4096, 0), 4096);
	T_EQ(fs_read(r->fs, f, 99000, 4096, 0), 1000);  /* short at EOF */
	T_EQ(fs_read(r->fs, f, 200000, 4096, 0), 0);
	T_EQ(fs_stat(r->fs, "/a", &s), 0);
	T_CHECK(s.dir);
	T_EQ(s.nlink, 2);
	T_EQ(fs_stat(r->fs, "/", &s), 0);
	T_EQ(s.nlink, 3);
	T_EQ(fs_rename(r->fs, "/a/f", "/a/g"), 0);
	T_EQ(fs_lookup(r->fs, "/a/f", &g), -ENOENT);
	T_EQ(fs_lookup(r->fs, "/a/g", &g), 0);
	T_EQ(g, f);
	T_EQ(fs_mkdir(r->fs, "/b"), 0);
	T_EQ(fs_rename(r->fs, "/a", "/b/a"), 0);     /* a directory moves */
	T_EQ(fs_rename(r->fs, "/b", "/b/a/b"), -EINVAL); /* into itself */
	T_EQ(fs_lookup(r->fs, "/b/a/g", &g), 0);
	T_EQ(fs_unlink(r->fs, "/b"), -ENOTEMPTY);
	T_EQ(fs_create(r->fs, "/b/h", &g), 0);
	T_EQ(fs_rename(r->fs, "/b/h", "/b/a/g"), 0); /* replaces g: frees it */
	T_EQ(fs_lookup(r->fs, "/b/h", &f), -ENOENT);
	T_EQ(fs_stat(r->fs, "/b/a/g", &s), 0);
	T_EQ(s.ino, g);
	T_EQ(s.size, 0);
	T_EQ(fs_create(r->fs, "/b/a/g", &f), 0);     /* O_TRUNC of an existing file */
	T_EQ(f, g);
	T_EQ(fs_unlink(r->fs, "/b/a/g"), 0);
	T_EQ(fs_unlink(r->fs, "/b/a/g"), -ENOENT);
	T_EQ(fs_unlink(r->fs, "/b/a"), 0);           /* rmdir */
	T_EQ(fs_unlink(r->fs, "/b"), 0);
	T_EQ(fs_stat(r->fs, "/", &s), 0);
	T_EQ(s.nlink, 2);
	T_EQ(frig_down(r), 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), 0);
}
FS_TEST(t_ops, NULL, 0, 0)

static void t_many_names_body(struct frig *r)
{
	struct fs_stat s;
	char path[64];
	fs_ino_t ino;

	T_EQ(fs_mkdir(r->fs, "/d"), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%03d", i);
		T_EQ(fs_create(r->fs, path, &ino), 0);
	}
	T_EQ(fs_stat(r->fs, "/d", &s), 0);
	T_EQ(s.size, 4 * 4096);                          /* 64 entries a block */
	for (int i = 0; i < 200; i += 2) {
		snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%03d", i);
		T_EQ(fs_unlink(r->fs, path), 0);
	}
	for (int i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%03d", i);
		T_EQ(fs_lookup(r->fs, path, &ino), i % 2 ? 0 : -ENOENT);
	}
	T_EQ(fs_create(r->fs, "/d/new", &ino), 0);   /* reuses a freed slot */
	T_EQ(fs_stat(r->fs, "/d", &s), 0);
	T_EQ(s.size, 4 * 4096);
}
FS_TEST(t_many_names, NULL, 0, 0)

static void t_indirect_body(struct frig *r)
{
	struct fs_stats s;
	struct fs_stat ls;
	fs_ino_t f;
	char msg[200];

	/* 1100 blocks: 12 direct, 1024 through the indirect block, the rest
	 * through the double-indirect one */
	T_EQ(fs_create(r->fs, "/big", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 1100ull * 4096, 0), 0);
	T_EQ(fs_stat(r->fs, "/big", &ls), 0);
	T_EQ(ls.blocks, 1100);
	T_EQ(ujbd_sync(r->j), 0);                         /* ordered data on disk */
	T_EQ(frig_down(r), 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), 0);
	/* remount: the reads come from the disk and name their blocks */
	T_EQ(blk_queue_new(r->dev, NULL, &r->q), 0);
	T_EQ(frig_open_journal(r, false), 0);
	T_EQ(fs_mount(r->j, r->q, &r->p, &r->fs), 0);
	T_EQ(fs_read(r->fs, f, 0, 1100ull * 4096, 0), 1100 * 4096);
	s = st(r);
	T_EQ(s.data_reads, 1100);
	T_EQ(s.verify_errors, 0);
	T_EQ(fs_unlink(r->fs, "/big"), 0);
}
FS_TEST(t_indirect, NULL, 0, 0)

/* ---- allocation ---- */

static void t_alloc_body(struct frig *r)
{
	fs_ino_t a, b, c, f, g;
	struct lfs_inode in;
	uint32_t ga, gb, gc;

	T_EQ(fs_mkdir(r->fs, "/a"), 0);
	T_EQ(fs_mkdir(r->fs, "/b"), 0);
	T_EQ(fs_mkdir(r->fs, "/c"), 0);
	T_EQ(fs_lookup(r->fs, "/a", &a), 0);
	T_EQ(fs_lookup(r->fs, "/b", &b), 0);
	T_EQ(fs_lookup(r->fs, "/c", &c), 0);
	ga = ino_grp(r, a);
	gb = ino_grp(r, b);
	gc = ino_grp(r, c);
	T_CHECK(ga != gb && gb != gc && ga != gc);        /* top-level dirs spread */
	T_EQ(fs_mkdir(r->fs, "/b/sub"), 0);
	T_EQ(fs_lookup(r->fs, "/b/sub", &g), 0);
	T_EQ(ino_grp(r, g), gb);                          /* a deeper dir stays */
	T_EQ(fs_create(r->fs, "/b/f", &f), 0);
	T_EQ(ino_grp(r, f), gb);                          /* a file in its dir's group */
	T_EQ(fs_write(r->fs, f, 0, 10 * 4096, 0), 0);
	T_EQ(frig_down(r), 0);
	T_EQ(frig_inode(r, f, &in), 0);
	uint64_t gstart = (uint64_t)gb * r->p.blocks_per_group;
	T_CHECK(in.i_block[0] >= gstart && in.i_block[0] < gstart + r->p.blocks_per_group);
	/* near the inode: within the group's first data blocks (after the
	 * bitmaps, the inode table and the directories' blocks) */
	T_CHECK(in.i_block[0] < gstart + 2 + 8 + 16);
	for (int i = 1; i < 10; i++)
		T_EQ(in.i_block[i], in.i_block[0] + i);   /* contiguous */
}
FS_TEST(t_alloc, NULL, 0, 0)

/* More top-level directories than groups on a small file system: once a
 * group is richer in free inodes and another in free blocks, Orlov finds
 * no group above average in both and falls back to a linear search (it
 * failed with ENOSPC: the real world's 1 GiB file, aim7's 32 mkdirs). */
static void t_alloc_orlov_fallback_body(struct frig *r)
{
	char path[16];

	for (int i = 0; i < 32; i++) {
		snprintf(path, sizeof(path), "/t%03d", i);
		T_EQ(fs_mkdir(r->fs, path), 0);
	}
}
FS_TEST(t_alloc_orlov_fallback, NULL, 0, 0)

/* ---- atime ---- */

/* Times to the nanosecond (an ext4 inode's extra fields). */
static void tw_ns_times(struct fs_params *p)
{
	p->time_gran_ns = 1;
}

static int atime_run(struct frig *r, unsigned n, uint64_t *handles, uint64_t *updates)
{
	struct fs_stats s0, s1;
	fs_ino_t f;
	int rc = fs_create(r->fs, "/f", &f);

	if (!rc)
		rc = fs_write(r->fs, f, 0, 4096, 0);
	rt_sleep_ns(RT_NS_PER_S);
	fs_stats(r->fs, &s0);
	for (unsigned i = 0; i < n && !rc; i++) {
		rt_sleep_ns(RT_NS_PER_US); /* a read a microsecond (the rig charges no CPU) */
		int64_t got = fs_read(r->fs, f, 0, 4096, 0);
		rc = got == 4096 ? 0 : -EIO;
	}
	fs_stats(r->fs, &s1);
	*handles = s1.handles - s0.handles;
	*updates = s1.atime_updates - s0.atime_updates;
	return rc;
}

static void t_atime_strict_body(struct frig *r)
{
	struct ujbd_stats j0, j1;
	uint64_t h, u;

	T_EQ(ujbd_stats(r->j, &j0), 0);
	T_EQ(atime_run(r, 5, &h, &u), 0);
	T_EQ(ujbd_stats(r->j, &j1), 0);
	T_EQ(h, 5);                              /* every read dirties the inode */
	T_EQ(u, 5);
	T_EQ(ujbd_sync(r->j), 0);
	T_EQ(ujbd_stats(r->j, &j1), 0);
	T_CHECK(j1.rs_handle_count >= j0.rs_handle_count + 5 + 2);
}
FS_TEST(t_atime_strict, tw_ns_times, 0, 0)

/* The default step, ext3's second: the reads within one second dirty the
 * inode once, the next second's read again; every time kept whole. */
static void t_atime_second_body(struct frig *r)
{
	struct fs_stat st;
	uint64_t h, u;

	T_EQ_U64(r->fs->fs_p.time_gran_ns, RT_NS_PER_S);
	rt_sleep_ns(RT_NS_PER_S / 3); /* off the second's edge */
	T_EQ(atime_run(r, 5, &h, &u), 0);
	T_EQ(u, 1);
	T_EQ(h, 1);
	T_EQ(fs_stat(r->fs, "/f", &st), 0);
	T_EQ_U64(st.atime_ns % RT_NS_PER_S, 0);
	T_EQ_U64(st.mtime_ns % RT_NS_PER_S, 0);
	T_EQ_U64(st.ctime_ns % RT_NS_PER_S, 0);
	T_CHECK(st.atime_ns > st.mtime_ns);
	uint64_t a = st.atime_ns;
	rt_sleep_ns(RT_NS_PER_S);
	T_EQ(fs_read(r->fs, st.ino, 0, 4096, 0), 4096);
	T_EQ(fs_stat(r->fs, "/f", &st), 0);
	T_EQ_U64(st.atime_ns, a + RT_NS_PER_S);
}
FS_TEST(t_atime_second, NULL, 0, 0)

static void tw_relatime(struct fs_params *p)
{
	p->atime = FS_ATIME_RELATIME;
}
static void t_atime_relatime_body(struct frig *r)
{
	uint64_t h, u;

	T_EQ(atime_run(r, 5, &h, &u), 0);
	T_EQ(u, 1);                              /* once after the write */
	T_EQ(h, 1);
}
FS_TEST(t_atime_relatime, tw_relatime, 0, 0)

static void tw_noatime(struct fs_params *p)
{
	p->atime = FS_ATIME_NOATIME;
}
static void t_atime_noatime_body(struct frig *r)
{
	uint64_t h, u;

	T_EQ(atime_run(r, 5, &h, &u), 0);
	T_EQ(u, 0);
	T_EQ(h, 0);
}
FS_TEST(t_atime_noatime, tw_noatime, 0, 0)

/* ---- the page cache ---- */

/* A file of n blocks, on disk and out of the cache (remounted). */
static int cold_file(struct frig *r, const char *path, uint64_t n, fs_ino_t *f)
{
	int rc = fs_create(r->fs, path, f);

	if (!rc)
		rc = fs_write(r->fs, *f, 0, n * 4096, 0);
	if (!rc)
		rc = fs_unmount(r->fs);
	r->fs = NULL;
	if (!rc)
		rc = fs_mount(r->j, r->q, &r->p, &r->fs);
	return rc;
}

static void t_cache_hit_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	T_EQ(cold_file(r, "/f", 4, &f), 0);
	T_EQ(fs_read(r->fs, f, 0, 4 * 4096, 0), 4 * 4096);
	s = st(r);
	T_EQ(s.read_hits, 0);
	T_EQ(s.data_reads, 4);
	T_EQ(fs_read(r->fs, f, 0, 4 * 4096, 0), 4 * 4096);
	s = st(r);
	T_EQ(s.read_hits, 4);                    /* the second read hits */
	T_EQ(s.data_reads, 4);
	T_EQ(s.verify_errors, 0);
	T_EQ(fs_read(r->fs, f, 0, 4 * 4096, FS_IO_DIRECT), 4 * 4096);
	T_EQ(st(r).data_reads, 8);               /* O_DIRECT bypasses the cache */
}
FS_TEST(t_cache_hit, NULL, 0, 0)

static void t_readahead_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	T_EQ(cold_file(r, "/f", 100, &f), 0);
	T_EQ(fs_read(r->fs, f, 0, 4096, 0), 4096);
	s = st(r);
	T_EQ(s.readahead_blocks, 31);            /* 128 KiB window */
	T_EQ(s.data_reads, 32);
	for (int i = 1; i < 32; i++)
		T_EQ(fs_read(r->fs, f, (uint64_t)i * 4096, 4096, 0), 4096);
	s = st(r);
	T_EQ(s.data_reads, 32);                  /* all hits */
	T_EQ(s.read_hits, 31);
	T_EQ(fs_read(r->fs, f, 32 * 4096, 4096, 0), 4096);
	T_EQ(st(r).data_reads, 64);              /* sequential: the next window */
	/* a random read brings no read-ahead */
	T_EQ(fs_read(r->fs, f, 80 * 4096, 4096, 0), 4096);
	T_EQ(st(r).data_reads, 65);
}
FS_TEST(t_readahead, NULL, 0, 0)

static void tw_small_ram(struct fs_params *p)
{
	p->ram_bytes = 1ull << 20;               /* 256 pages */
}
static void t_eviction_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	T_EQ(cold_file(r, "/f", 1000, &f), 0);
	T_EQ(fs_read(r->fs, f, 0, 1000 * 4096, 0), 1000 * 4096);
	s = st(r);
	T_CHECK(s.cached_pages <= 256);
	T_CHECK(s.evictions >= 1000 - 256);
	T_EQ(fs_read(r->fs, f, 0, 4096, 0), 4096);   /* evicted: read again */
	T_CHECK(st(r).data_reads > s.data_reads);
}
FS_TEST(t_eviction, tw_small_ram, 0, 0)

/* ---- writeback ---- */

/* n allocated blocks, committed (their ordered data no longer counts as
 * dirty), then overwritten: dirty in the page cache. */
static int dirty_file(struct frig *r, uint64_t n, fs_ino_t *f)
{
	int rc = fs_create(r->fs, "/w", f);

	if (!rc)
		rc = fs_write(r->fs, *f, 0, n * 4096, 0);
	if (!rc)
		rc = ujbd_sync(r->j);
	if (!rc)
		rc = fs_write(r->fs, *f, 0, n * 4096, 0);
	return rc;
}

static void t_writeback_expire_body(struct frig *r)
{
	uint64_t t0 = rt_now_ns();
	fs_ino_t f;

	T_EQ(dirty_file(r, 8, &f), 0);
	T_EQ(st(r).dirty_pages, 8);
	rt_sleep_until(t0 + 25 * RT_NS_PER_S);
	T_EQ(st(r).dirty_pages, 8);              /* younger than dirty_expire */
	T_EQ(st(r).writeback_blocks, 0);
	rt_sleep_until(t0 + 40 * RT_NS_PER_S);
	T_EQ(st(r).dirty_pages, 0);              /* pdflush wrote them */
	T_EQ(st(r).writeback_blocks, 8);
}
FS_TEST(t_writeback_expire, NULL, 0, 0)

static void t_writeback_background_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	/* 256 pages of RAM: background at 12 pages, throttling at 25 */
	T_EQ(dirty_file(r, 20, &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 4096, 0), 0); /* a write sees it, wakes pdflush */
	rt_sleep_ns(RT_NS_PER_S);
	s = st(r);
	T_CHECK(s.writeback_blocks > 0);
	T_CHECK(s.dirty_pages <= 12);
	T_EQ(s.throttled, 0);
}
FS_TEST(t_writeback_background, tw_small_ram, 0, 0)

static void t_throttle_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	T_EQ(fs_create(r->fs, "/w", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 200 * 4096, 0), 0);
	T_EQ(fs_write(r->fs, f, 0, 200 * 4096, 0), 0);
	s = st(r);
	T_CHECK(s.throttled > 0);
	T_CHECK(s.throttle_ns > 0);
	T_CHECK(s.dirty_pages <= 25 + 16);       /* the limit plus one chunk */
	T_CHECK(s.writeback_blocks >= 200 - 25 - 16);
}

/* On a sim SSD, so that writeback takes virtual time. */
static void t_throttle(void)
{
	struct tcase tc = { t_throttle_body, tw_small_ram, 0, 0, false, true };

	T_CHECK(frig_sim(7, sim_main, &tc) == 0);
}

/* New blocks are dirty pages (and ordered data) until written: a writer
 * of fresh blocks is throttled like any other, pdflush writes them, so a
 * copy cannot outrun the disk in memory; a commit then finds nothing
 * ordered left to write. */
static void t_throttle_ordered_body(struct frig *r)
{
	struct fs_stats s;
	fs_ino_t f;

	T_EQ(fs_create(r->fs, "/w", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 200 * 4096, 0), 0);
	s = st(r);
	T_CHECK(s.throttled > 0);
	T_CHECK(s.throttle_ns > 0);
	T_CHECK(s.dirty_pages <= 25 + 16);       /* the limit plus one chunk */
	T_CHECK(s.writeback_blocks >= 200 - 25 - 16); /* pdflush wrote the fresh blocks */
}

static void t_throttle_ordered(void)
{
	struct tcase tc = { t_throttle_ordered_body, tw_small_ram, 0, 0, false, true };

	T_CHECK(frig_sim(7, sim_main, &tc) == 0);
}

/* ---- fsync ---- */

/* Crash r now: the recovered image passes fsck and holds /d/f of nblocks
 * blocks, each naming itself. */
static void check_crash_holds(struct frig *r, fs_ino_t f, unsigned nblocks)
{
	struct fs_stats s;
	struct frig c = *r;
	struct fs_stat ls;
	fs_ino_t g;
	char msg[200];
	int rc;

	T_EQ(frig_crash(r, dev_rec_count(r->dev), NULL, &c.mem), 0);
	rc = fs_fsck(c.mem, FR_BS, msg, sizeof(msg));
	if (rc)
		T_FAILF("fsck of the crash image: %s", msg);
	c.dev = c.mem;
	c.snap = NULL;
	c.fs = NULL;
	c.j = NULL;
	rc = blk_queue_new(c.dev, NULL, &c.q);
	if (!rc)
		rc = frig_open_journal(&c, false);
	if (!rc)
		rc = fs_mount(c.j, c.q, &c.p, &c.fs);
	if (!rc)
		rc = fs_stat(c.fs, "/d/f", &ls);
	if (!rc)
		rc = fs_lookup(c.fs, "/d/f", &g);
	if (!rc && (ls.size != nblocks * 4096ull || g != f))
		rc = -EUCLEAN;
	if (!rc)
		rc = fs_read(c.fs, g, 0, nblocks * 4096ull, 0) == nblocks * 4096 ? 0 : -EIO;
	if (!rc) {
		fs_stats(c.fs, &s);
		rc = s.verify_errors || s.data_reads != nblocks ? -EUCLEAN : 0;
	}
	frig_down(&c);
	c.snap = NULL;
	frig_free(&c);
	T_EQ(rc, 0);
}

/* A crash right after fsync returns: the recovered image passes fsck and
 * has the file, its size and its data (each block names itself). */
static void t_fsync_durable_body(struct frig *r)
{
	fs_ino_t f;

	T_EQ(fs_mkdir(r->fs, "/d"), 0);
	T_EQ(fs_create(r->fs, "/d/f", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 6 * 4096, 0), 0);
	T_EQ(fs_write(r->fs, f, 0, 2 * 4096, 0), 0);    /* overwritten before written */
	T_EQ(fs_fsync(r->fs, f), 0);
	T_EQ(st(r).fsync_blocks, 6);                        /* fsync wrote all six itself */
	check_crash_holds(r, f, 6);
}

static void t_fsync_durable(void)
{
	struct tcase tc = { t_fsync_durable_body, NULL, 0, 0, true, false };

	T_CHECK(frig_sim(7, sim_main, &tc) == 0);
}

/* data=ordered without fsync: the commit itself writes the new blocks no
 * one wrote yet (the journal's data hook), before its commit block, so a
 * crash right after the commit finds the data the metadata names. */
static void t_commit_writes_ordered_body(struct frig *r)
{
	fs_ino_t f;

	T_EQ(fs_mkdir(r->fs, "/d"), 0);
	T_EQ(fs_create(r->fs, "/d/f", &f), 0);
	T_EQ(fs_write(r->fs, f, 0, 5 * 4096, 0), 0);
	T_EQ(ujbd_sync(r->j), 0);
	T_EQ(st(r).fsync_blocks, 0);
	T_EQ(st(r).writeback_blocks, 0);                    /* pdflush did not either */
	T_EQ(st(r).dirty_pages, 0);                         /* the commit wrote them */
	check_crash_holds(r, f, 5);
}

static void t_commit_writes_ordered(void)
{
	struct tcase tc = { t_commit_writes_ordered_body, NULL, 0, 0, true, false };

	T_CHECK(frig_sim(7, sim_main, &tc) == 0);
}

static void t_params(void)
{
	struct fs_params p;
	char err[200];

	fs_params_default(&p);
	T_STREQ(fs_param_table.t_name, "fs");
	T_EQ(p.blocks_per_group, 32768);
	T_EQ(p.inodes_per_group, 16384);
	T_EQ(p.inode_size, 128);
	T_EQ(p.atime, FS_ATIME_STRICT);
	T_EQ_U64(p.ram_bytes, 1ull << 30);
	T_EQ(p.dirty_ratio, 10);
	T_EQ(p.dirty_background_ratio, 5);
	T_EQ_U64(p.dirty_expire_ns, 30 * RT_NS_PER_S);
	T_EQ_U64(p.writeback_interval_ns, 5 * RT_NS_PER_S);
	T_EQ(p.readahead_kib, 128);
	T_EQ_U64(p.time_gran_ns, RT_NS_PER_S);
	T_EQ(p.pdflush_ioprio, RT_IOPRIO(RT_IOPRIO_CLASS_BE, 4));
	T_EQ(rt_param_parse(&fs_param_table, &p, "dirty_expire_ns=1000,atime=2", err,
			    sizeof(err)), 0);
	T_EQ_U64(p.dirty_expire_ns, RT_NS_PER_S);
	T_EQ(p.atime, FS_ATIME_NOATIME);
	T_CHECK(rt_param_parse(&fs_param_table, &p, "atime=3", err, sizeof(err)) < 0);
	for (size_t i = 0; i < fs_param_table.t_nparams; i++)
		T_CHECK(fs_param_table.t_params[i].p_source[0] != 0);
}

static void t_fsck_finds(void);

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_params);
	T_RUN(t_ops);
	T_RUN(t_many_names);
	T_RUN(t_indirect);
	T_RUN(t_alloc);
	T_RUN(t_alloc_orlov_fallback);
	T_RUN(t_atime_strict);
	T_RUN(t_atime_second);
	T_RUN(t_atime_relatime);
	T_RUN(t_atime_noatime);
	T_RUN(t_cache_hit);
	T_RUN(t_readahead);
	T_RUN(t_eviction);
	T_RUN(t_writeback_expire);
	T_RUN(t_writeback_background);
	T_RUN(t_throttle);
	T_RUN(t_throttle_ordered);
	T_RUN(t_fsync_durable);
	T_RUN(t_commit_writes_ordered);
	T_RUN(t_fsck_finds);
	return t_done(argv[0]);
}

/* ---- the checker finds what it must ---- */

/* Break one thing on an unmounted image; fsck must say so. */
static void t_fsck_finds_body(struct frig *r)
{
	struct lfs_inode in;
	uint8_t buf[FR_BS];
	fs_ino_t f, g;
	char msg[200];
	uint64_t blk, off;

	T_EQ(fs_create(r->fs, "/f", &f), 0);
	T_EQ(fs_create(r->fs, "/g", &g), 0);
	T_EQ(fs_write(r->fs, f, 0, 3 * 4096, 0), 0);
	T_EQ(fs_write(r->fs, g, 0, 4096, 0), 0);
	T_EQ(frig_down(r), 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), 0);
	/* g's block made f's too: owned twice */
	T_EQ(frig_inode(r, g, &in), 0);
	uint32_t gb = in.i_block[0];
	T_EQ(frig_inode(r, f, &in), 0);
	uint32_t fb = in.i_block[0];
	blk = 2 + 2 + (f - 1) / 32;
	off = ((f - 1) % 32) * 128;
	T_CHECK(dev_pread(r->mem, buf, FR_BS, blk * FR_BS) >= 0);
	memcpy(&in, buf + off, sizeof(in));
	in.i_block[0] = gb;
	memcpy(buf + off, &in, sizeof(in));
	T_CHECK(dev_pwrite(r->mem, buf, FR_BS, blk * FR_BS, 0) >= 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), -EUCLEAN);
	T_CHECK(strstr(msg, "twice") != NULL || strstr(msg, "mapped by no inode") != NULL);
	/* restored, then a free bit under a mapped block */
	in.i_block[0] = fb;
	memcpy(buf + off, &in, sizeof(in));
	T_CHECK(dev_pwrite(r->mem, buf, FR_BS, blk * FR_BS, 0) >= 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), 0);
	T_CHECK(dev_pread(r->mem, buf, FR_BS, 2 * FR_BS) >= 0);   /* group 0's block bitmap */
	buf[(fb % 1024) / 8] &= (uint8_t)~(1u << (fb % 8));
	T_CHECK(dev_pwrite(r->mem, buf, FR_BS, 2 * FR_BS, 0) >= 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), -EUCLEAN);
	T_CHECK(strstr(msg, "free in the bitmap") != NULL);
	buf[(fb % 1024) / 8] |= (uint8_t)(1u << (fb % 8));
	T_CHECK(dev_pwrite(r->mem, buf, FR_BS, 2 * FR_BS, 0) >= 0);
	T_EQ(frig_fsck(r, msg, sizeof(msg)), 0);
}

static void t_fsck_finds(void)
{
	struct tcase tc = { t_fsck_finds_body, NULL, 0, 0, false, false };

	T_CHECK(frig_sim(7, sim_main, &tc) == 0);
}

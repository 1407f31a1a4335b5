/*
 * Crash safety of the file-system model through the journal: seeded
 * multi-threaded workloads (mkdir, create, buffered and O_DIRECT writes,
 * overwrites, fsync, unlink, rmdir, rename, reads) on a `rec` device; then,
 * at every flush point of the log (just before and just after it) and at
 * its end, the image a power cut leaves (flushed writes only, and seeded
 * subsets of the unflushed ones) is recovered through ujbd_open and must
 * pass fs_fsck.
 */
#include "fs_rig.h"

#define NDIRS 4
#define NFILES 6
#define OPS 150
#define NTHR 3

struct wl {
	struct frig *r;
	unsigned id;
	uint64_t seed;
	int err;
	unsigned ok;
	char msg[160];
};

/* O_DIRECT writes in the workload: their data is written after their
 * allocation's handle, so they are left out of the runs that check data. */
static bool direct_ops = true;

static void path_file(char *p, size_t n, struct rt_prng *g)
{
	snprintf(p, n, "/d%u/f%u", (unsigned)rt_prng_below(g, NDIRS),
		 (unsigned)rt_prng_below(g, NFILES));
}

/* Answers a racing workload may get. */
static bool expected(int rc)
{
	return rc >= 0 || rc == -ENOENT || rc == -EEXIST || rc == -ENOTEMPTY || rc == -EISDIR ||
	       rc == -ENOTDIR || rc == -EINVAL || rc == -EBUSY;
}

static int one_op(struct frig *r, struct rt_prng *g)
{
	char a[64], b[64];
	fs_ino_t ino;
	unsigned op = (unsigned)rt_prng_below(g, 12);
	int rc;

	path_file(a, sizeof(a), g);
	switch (op) {
	case 0:
	case 1:
	case 11:
		return fs_create(r->fs, a, &ino);
	case 2:
	case 3: {
		struct fs_stat st;
		rc = fs_stat(r->fs, a, &st);
		if (!rc && !st.dir)
			rc = fs_write(r->fs, st.ino, st.size, 1 + rt_prng_below(g, 30 * 4096), 0);
		return rc;
	}
	case 4:
		rc = fs_lookup(r->fs, a, &ino);
		return rc ? rc : fs_write(r->fs, ino, 0, 3 * 4096, 0);   /* overwrite */
	case 5:
		rc = fs_lookup(r->fs, a, &ino);
		return rc ? rc : fs_fsync(r->fs, ino);
	case 6:
		return fs_unlink(r->fs, a);
	case 7:
		path_file(b, sizeof(b), g);
		return fs_rename(r->fs, a, b);
	case 8:
		snprintf(b, sizeof(b), "/d%u/s%u", (unsigned)rt_prng_below(g, NDIRS),
			 (unsigned)rt_prng_below(g, 3));
		return rt_prng_below(g, 2) ? fs_mkdir(r->fs, b) : fs_unlink(r->fs, b);
	case 9:
		if (!direct_ops)
			return fs_lookup(r->fs, a, &ino);
		rc = fs_lookup(r->fs, a, &ino);
		return rc ? rc : (int)(fs_write(r->fs, ino, 4096 * rt_prng_below(g, 20),
						    4096 * (1 + rt_prng_below(g, 4)),
						    FS_IO_DIRECT));
	default:
		rc = fs_lookup(r->fs, a, &ino);
		return rc ? rc : (fs_read(r->fs, ino, 0, 64 * 4096, 0) < 0 ? -EIO : 0);
	}
}

static void worker(void *arg)
{
	struct wl *w = arg;
	struct rt_prng g;

	rt_prng_init(&g, w->seed * 7919 + w->id);
	for (unsigned i = 0; i < OPS && !w->err; i++) {
		int rc = one_op(w->r, &g);

		w->ok += rc >= 0;
		if (!expected(rc)) {
			w->err = rc;
			snprintf(w->msg, sizeof(w->msg), "thread %u op %u: %d", w->id, i, rc);
		}
		if (rt_prng_below(&g, 4) == 0)
			rt_sleep_ns(rt_prng_below(&g, 80) * RT_NS_PER_MS);
	}
}

struct crun {
	uint64_t seed;
	enum ujbd_data_mode mode;
	bool check_data;
	uint64_t images, points, log, ok;
	int rc;
	char msg[240];
};

/* Every data block of every file names itself (inode, file block): data
 * written by a committed transaction is on disk (ordered), and no stale
 * journaled copy was replayed over a reused block (revoke). */
static int check_data(struct dev *img, const struct frig *r, char *msg, size_t len)
{
	uint32_t bpg = r->p.blocks_per_group, ipg = r->p.inodes_per_group;
	uint32_t ngroups = (uint32_t)(r->dblocks / bpg);
	uint8_t ib[FR_BS], it[FR_BS], blk[FR_BS];
	uint32_t ind[FR_BS / 4];

	for (uint32_t g = 0; g < ngroups; g++) {
		uint64_t meta = (uint64_t)g * bpg + (g == 0 ? 2 : 0);
		if (dev_pread(img, ib, FR_BS, (meta + 1) * FR_BS) < 0)
			return -EIO;
		for (uint32_t i = 0; i < ipg; i++) {
			fs_ino_t ino = g * ipg + i + 1;
			struct lfs_inode in;

			if (ino < LFS_FIRST_INO || !(ib[i / 8] & (1u << (i % 8))))
				continue;
			if (dev_pread(img, it, FR_BS, (meta + 2 + i / 32) * FR_BS) < 0)
				return -EIO;
			memcpy(&in, it + (i % 32) * 128, sizeof(in));
			if (in.i_mode != LFS_FILE)
				continue;
			for (uint64_t fb = 0; fb < LFS_NDIR + LFS_PTRS; fb++) {
				uint64_t pb;
				if (fb < LFS_NDIR) {
					pb = in.i_block[fb];
				} else {
					if (!in.i_block[LFS_IND])
						break;
					if (fb == LFS_NDIR && dev_pread(img, ind, FR_BS,
							in.i_block[LFS_IND] * (uint64_t)FR_BS) < 0)
						return -EIO;
					pb = ind[fb - LFS_NDIR];
				}
				if (!pb)
					continue;
				struct lfs_dhdr h;
				if (dev_pread(img, blk, FR_BS, pb * FR_BS) < 0)
					return -EIO;
				memcpy(&h, blk, sizeof(h));
				if (h.h_magic != LFS_DMAGIC || h.h_ino != ino || h.h_fblock != fb) {
					snprintf(msg, len, "inode %u block %llu (at %llu) holds "
						 "inode %u block %llu", ino, (unsigned long long)fb,
						 (unsigned long long)pb, h.h_ino,
						 (unsigned long long)h.h_fblock);
					return -EUCLEAN;
				}
			}
		}
	}
	return 0;
}

/* Recover one image and check it. */
static int check_image(struct frig *r, size_t point, const struct dev_crash_policy *pol,
		       struct crun *cr)
{
	struct dev *img = NULL;
	char msg[200];
	int rc = frig_crash(r, point, pol, &img);

	if (rc) {
		snprintf(cr->msg, sizeof(cr->msg), "point %zu: recovery %d", point, rc);
		return rc;
	}
	rc = fs_fsck(img, FR_BS, msg, sizeof(msg));
	if (!rc && cr->check_data)
		rc = check_data(img, r, msg, sizeof(msg));
	if (rc && getenv("FS_CRASH_DEBUG")) {
		uint64_t blk = strtoull(getenv("FS_CRASH_DEBUG"), NULL, 0);
		for (size_t i = 0; i < dev_rec_count(r->dev); i++) {
			struct dev_rec_entry e;
			dev_rec_entry(r->dev, i, &e);
			if (e.kind == DEV_REC_FLUSH || (e.flags & 3)) {
				fprintf(stderr, "  %zu: %s flags %x off %llu\n", i,
					e.kind == DEV_REC_FLUSH ? "flush" : "write", e.flags,
					(unsigned long long)e.off / FR_BS);
			}
			if (e.kind != DEV_REC_WRITE)
				continue;
			for (uint64_t o = 0; o < e.len; o += FR_BS) {
				if (e.off + o != blk * FR_BS)
					continue;
				struct lfs_dhdr h;
				memcpy(&h, (const uint8_t *)e.data + o, sizeof(h));
				fprintf(stderr, "  %zu: write %llu+%u (sub %llu) magic %x ino %u fb %llu gen %u submit %llu\n",
					i, (unsigned long long)e.off / FR_BS, e.len / FR_BS,
					(unsigned long long)o / FR_BS, h.h_magic, h.h_ino,
					(unsigned long long)h.h_fblock, h.h_gen,
					(unsigned long long)e.submit_seq);
			}
		}
		fprintf(stderr, "  point %zu pending %zu\n", point, dev_rec_pending_writes(r->dev, point));
	}
	if (rc)
		snprintf(cr->msg, sizeof(cr->msg), "point %zu (%s): %s", point,
			 pol && pol->mode ? "subset" : "flushed", msg);
	dev_close(img);
	cr->images++;
	return rc;
}

static int check_points(struct frig *r, struct crun *cr)
{
	size_t n = dev_rec_flush_points(r->dev, NULL, 0), *idx = calloc(n + 1, sizeof(*idx));
	struct rt_prng g;
	int rc = idx ? 0 : -ENOMEM;

	rt_prng_init(&g, cr->seed);
	if (idx)
		dev_rec_flush_points(r->dev, idx, n);
	if (idx)
		idx[n] = dev_rec_count(r->dev) - 1;  /* the end of the log */
	for (size_t k = 0; k <= n && !rc; k++) {
		size_t pts[2] = { idx[k], idx[k] + 1 };

		for (int s = 0; s < 2 && !rc; s++) {
			cr->points++;
			rc = check_image(r, pts[s], NULL, cr);
			size_t pend = dev_rec_pending_writes(r->dev, pts[s]);
			if (rc || !pend || k % 3)
				continue;
			uint64_t bits = rt_prng_next(&g);
			struct dev_crash_policy pol = { .mode = DEV_CRASH_SUBSET,
				.subset_bits = &bits, .subset_nbits = pend < 64 ? pend : 64 };
			rc = check_image(r, pts[s], &pol, cr);
		}
	}
	free(idx);
	return rc;
}

static void run_main(void *arg)
{
	struct crun *cr = arg;
	struct frig r = { 0 };
	struct wl w[NTHR];
	rt_thread *t[NTHR];
	char p[16];
	int rc;

	frig_params(&r.p);
	r.p.blocks_per_group = 512;
	r.p.inodes_per_group = 128;
	r.p.ram_bytes = 2ull << 20;                 /* writeback and throttling happen */
	r.p.dirty_expire_ns = 2 * RT_NS_PER_S;
	r.p.writeback_interval_ns = RT_NS_PER_S / 2;
	r.mode = cr->mode;
	r.commit_ns = 100 * RT_NS_PER_MS;
	rc = frig_up(&r, 2048, 512, true);
	for (unsigned i = 0; i < NDIRS && !rc; i++) {
		snprintf(p, sizeof(p), "/d%u", i);
		rc = fs_mkdir(r.fs, p);
	}
	for (unsigned i = 0; i < NTHR && !rc; i++) {
		w[i] = (struct wl){ .r = &r, .id = i, .seed = cr->seed };
		rc = rt_thread_create(&t[i], "worker", worker, &w[i]);
	}
	for (unsigned i = 0; i < NTHR && !rc; i++) {
		rt_thread_join(t[i]);
		cr->ok += w[i].ok;
		if (w[i].err && !rc) {
			rc = w[i].err;
			snprintf(cr->msg, sizeof(cr->msg), "%s", w[i].msg);
		}
	}
	int d = frig_down(&r);               /* the log ends with the unmount */
	rc = rc ? rc : d;
	if (!rc && frig_fsck(&r, cr->msg, sizeof(cr->msg)))
		rc = -EUCLEAN;
	cr->log = r.dev ? dev_rec_count(r.dev) : 0;
	if (!rc)
		rc = check_points(&r, cr);
	frig_free(&r);
	cr->rc = rc;
}

static void run(uint64_t seed, enum ujbd_data_mode mode, bool data)
{
	struct crun cr = { .seed = seed, .mode = mode, .check_data = data };

	direct_ops = !data;
	T_CHECK(frig_sim(seed, run_main, &cr) == 0);
	if (cr.rc) {
		T_FAILF("seed %llu: %d: %s", (unsigned long long)seed, cr.rc, cr.msg);
		return;
	}
	T_CHECK(cr.points > 10);
	T_CHECK(cr.ok > NTHR * OPS / 3);
	fprintf(stderr, "    seed %llu: %llu ops done, %zu log entries, %llu crash points, %llu images "
		"recovered and clean\n", (unsigned long long)seed, (unsigned long long)cr.ok, (size_t)cr.log,
		(unsigned long long)cr.points, (unsigned long long)cr.images);
}

static void t_crash_ordered_1(void) { run(1, UJBD_DATA_ORDERED, false); }
static void t_crash_ordered_2(void) { run(2, UJBD_DATA_ORDERED, false); }
static void t_crash_ordered_data(void) { run(3, UJBD_DATA_ORDERED, true); }
static void t_crash_journal(void) { run(4, UJBD_DATA_JOURNAL, false); }
static void t_crash_journal_data(void) { run(5, UJBD_DATA_JOURNAL, true); }

/* The workload alone, for its world's event hash. */
static void wl_main(void *arg)
{
	struct crun *cr = arg;
	struct frig r = { 0 };
	struct wl w[NTHR];
	rt_thread *t[NTHR];
	int rc;

	frig_params(&r.p);
	r.p.blocks_per_group = 512;
	r.p.inodes_per_group = 128;
	r.p.ram_bytes = 2ull << 20;
	r.commit_ns = 100 * RT_NS_PER_MS;
	rc = frig_up(&r, 2048, 512, true);
	for (unsigned i = 0; i < NDIRS && !rc; i++) {
		char p[16];
		snprintf(p, sizeof(p), "/d%u", i);
		rc = fs_mkdir(r.fs, p);
	}
	for (unsigned i = 0; i < NTHR && !rc; i++) {
		w[i] = (struct wl){ .r = &r, .id = i, .seed = cr->seed };
		rc = rt_thread_create(&t[i], "worker", worker, &w[i]);
	}
	for (unsigned i = 0; i < NTHR && !rc; i++) {
		rt_thread_join(t[i]);
		cr->ok += w[i].ok;
	}
	int d = frig_down(&r);
	cr->rc = rc ? rc : d;
	cr->log = r.dev ? dev_rec_count(r.dev) : 0;
	frig_free(&r);
}

static int hashed_run(uint64_t seed, struct crun *cr, uint64_t *hash)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = seed };
	rt_world *w = NULL;
	int rc = rt_world_new(&wo, &w);

	cr->seed = seed;
	if (!rc)
		rc = rt_world_run(w, "main", wl_main, cr);
	if (!rc)
		*hash = rt_world_hash(w);
	if (w)
		rt_world_free(w);
	return rc;
}

/* Same seed, same run: event for event. */
static void t_deterministic(void)
{
	struct crun a = { 0 }, b = { 0 }, c = { 0 };
	uint64_t ha = 0, hb = 0, hc = 0;

	T_EQ(hashed_run(5, &a, &ha), 0);
	T_EQ(hashed_run(5, &b, &hb), 0);
	T_EQ(hashed_run(6, &c, &hc), 0);
	T_EQ(a.rc, 0);
	T_EQ(b.rc, 0);
	T_EQ_U64(ha, hb);
	T_EQ(a.ok, b.ok);
	T_EQ(a.log, b.log);
	T_CHECK(ha != hc);                        /* and the seed matters */
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_deterministic);
	T_RUN(t_crash_ordered_1);
	T_RUN(t_crash_ordered_2);
	T_RUN(t_crash_ordered_data);
	T_RUN(t_crash_journal);
	T_RUN(t_crash_journal_data);
	return t_done(argv[0]);
}

/*
 * crashcheck: the crash states of a `ujbd mount -o record=TRACE` run,
 * rebuilt from the trace and checked (tests/mount/crashstates.sh runs it;
 * docs/mount.md has the figures).
 *
 *   crashcheck --base=IMG --trace=TRACE --fsyncs=LIST --work=DIR
 *              [--final=IMG] [--states=N] [--seed=S] [--fsck-every=K]
 *              [--torn-every=K] [--keep=N]
 *
 * BASE is the image as it was before the mount; TRACE the daemon's record
 * of every write and flush to it (priv/dev_rec.h); LIST the writer's
 * record of its fsyncs, one per line, "PATH LEN COPY BYTES": once the fsync
 * returned, the file's first LEN bytes were those of the file COPY, and the
 * trace was BYTES long. FINAL, the image the daemon left at its clean
 * unmount, must be exactly the trace's last state (the recorder saw every
 * write the daemon made).
 *
 * The one idea: the trace loads into a fresh recorder (dev_rec_trace_load),
 * so every image comes from rec.c's durability arithmetic (dev_rec_image),
 * the one the library's own crash tests use. Crash points: just before and
 * just after each flush (a FLUSH, a PREFLUSH or FUA write), and the end.
 * At each point: the durable image (only what the completed flushes and
 * FUAs made durable), then subsets of the pending writes (those no flush
 * covers): all of them when there are few, else the all-pending subset and
 * seeded random ones, enough for about N states in all; every K-th subset
 * also torn (each chosen write keeps a random subset of its 512-byte
 * sectors). Each state, built in DIR/state.img, is:
 *   1. replayed as `ujbd recover` does (target_open, jbd_journal_load,
 *      jbd_recover, target_end_recovery): the replay must succeed, with no
 *      block skipped for a bad checksum; and before it, a journal holding
 *      transactions (s_start != 0) must come with ext4's needs_recovery set
 *      (the kernel wipes the journal of a file system without the flag);
 *   2. opened with libext2fs with checksums verified (superblock, group
 *      descriptors, bitmaps, and every inode and directory block read
 *      below), and every fsync that returned at or before the crash point
 *      read back through its path: its LEN bytes must be COPY's;
 *   3. every K-th state, and the last state of the trace: e2fsck -fn must
 *      exit 0.
 * Exit 0 when every check passed, 1 when one failed (the first --keep
 * failing images are kept in DIR, before the replay), 2 usage, 3 I/O.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>

#include "priv/dev_rec.h"
#include "priv/rt.h"
#include "target/target.h"
#include "ujbd/dev.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"

#define SUBSETS_ALL_MAX 6 /* all 2^n subsets up to this many pending writes */

struct fsync_rec {
	char path[512];
	uint64_t len;
	unsigned char *bytes; /* what the fsync made durable */
	size_t idx;           /* the first crash point that must hold it */
};

static struct {
	const char *base, *trace, *fsyncs, *work, *final;
	uint64_t states, seed;
	unsigned fsck_every, torn_every, keep, jobs;
} A = { .states = 300, .seed = 1, .fsck_every = 10, .torn_every = 4, .keep = 3, .jobs = 1 };
static unsigned worker; /* this process checks the states numbered worker mod jobs */

static struct {
	uint64_t states, points, flush_points, durable_states, subset_states, torn_states;
	uint64_t replays, replayed_tx, replayed_blocks, nothing_to_do, flag_checks;
	uint64_t ext2fs_opens, fsync_checks, fsck_runs, failures, kept, pending_max;
} R;

static struct fsync_rec *F;
static size_t nF;
static char state_path[4096];
/* the state being checked, to rebuild it if a check fails */
static struct dev *cur_rec;
static const struct dev_crash_policy *cur_pol;
static unsigned char *base_img;
static uint64_t img_bytes;

static void usage(void)
{
	fprintf(stderr, "usage: crashcheck --base=IMG --trace=TRACE --fsyncs=LIST --work=DIR "
			"[--final=IMG] [--states=N] [--seed=S] [--fsck-every=K] [--torn-every=K] "
			"[--keep=N]\n");
	exit(2);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "crashcheck: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(3);
}

static unsigned char *slurp(const char *path, uint64_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *b;
	uint64_t got = 0;

	if (fd < 0 || fstat(fd, &st))
		die(path, errno);
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		die(path, ENOMEM);
	while (got < (uint64_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
		if (n <= 0)
			die(path, n < 0 ? errno : EIO);
		got += (uint64_t)n;
	}
	close(fd);
	*len = got;
	return b;
}

static void load_fsyncs(const struct dev_rec_trace_info *info)
{
	FILE *f = fopen(A.fsyncs, "r");
	char line[2048], copy[1024];
	unsigned long long len, bytes;

	if (!f)
		die(A.fsyncs, errno);
	while (fgets(line, sizeof(line), f)) {
		struct fsync_rec *r;
		uint64_t clen;

		if (!(F = realloc(F, (nF + 1) * sizeof(*F))))
			die("fsyncs", ENOMEM);
		r = &F[nF];
		if (sscanf(line, "%511s %llu %1023s %llu", r->path, &len, copy, &bytes) != 4) {
			fprintf(stderr, "crashcheck: %s: bad line: %s", A.fsyncs, line);
			exit(2);
		}
		r->len = len;
		r->bytes = slurp(copy, &clen);
		if (clen < len) {
			fprintf(stderr, "crashcheck: %s: %s holds %" PRIu64 " bytes, not %llu\n",
				A.fsyncs, copy, clen, len);
			exit(2);
		}
		r->idx = dev_rec_trace_index(info, bytes);
		nF++;
	}
	fclose(f);
}

/* ---- one state ----------------------------------------------------------- */

static void failed(size_t p, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static char state_desc[256];

static void failed(size_t p, const char *what, const char *fmt, ...)
{
	va_list ap;

	R.failures++;
	if (R.failures > 20)
		return;
	fprintf(stderr, "FAIL point %zu (%s): %s: ", p, state_desc, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (R.kept < A.keep) {
		/* the state again, before its replay, for a reproducer */
		char dst[4300];
		struct dev_file_opts fo = { .create = true, .size = img_bytes };
		struct dev *d;
		int rc;

		snprintf(dst, sizeof(dst), "%s/failed-%u-%" PRIu64 ".img", A.work, worker, R.kept++);
		rc = dev_file_open(dst, &fo, &d);
		if (!rc) {
			rc = dev_pwrite(d, base_img, img_bytes, 0, 0);
			if (!rc)
				rc = dev_rec_image(cur_rec, p, cur_pol, d);
			dev_close(d);
		}
		if (!rc)
			fprintf(stderr, "  the image before the replay: %s\n", dst);
	}
}

static int run_fsck(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("e2fsck", "e2fsck", "-fn", state_path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid", errno);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Replay state.img as `ujbd recover` does. false: a check failed. */
static bool replay(size_t p)
{
	struct target t;
	struct jbd_journal j;
	struct jbd_recover_result r;
	struct jbd_recover_opts o = { 0 };
	struct target_end e = { 0 };
	struct jbd_err err = { 0 };
	bool ok = false;
	int rc = target_open(&t, state_path, NULL, NULL, true, true, &err);

	if (rc) {
		failed(p, "open", "%s", err.msg);
		target_close(&t);
		return false;
	}
	rc = jbd_journal_load(&t.loc, &j, &err);
	if (rc) {
		failed(p, "journal", "%s", err.msg);
		goto out;
	}
	R.flag_checks++;
	if (jbd_get_be32(j.j_sb.s_start) && !t.ext4_needs_recovery) {
		failed(p, "needs_recovery", "the journal holds transactions (s_start %u) but "
		       "ext4 needs_recovery is clear: the kernel would wipe them",
		       jbd_get_be32(j.j_sb.s_start));
		goto out;
	}
	rc = jbd_recover(&j, &o, &r, &err);
	R.replays++;
	if (rc) {
		failed(p, "replay", "%s (rc %d)", err.msg, rc);
		goto out;
	}
	if (r.bad_csum_blocks) {
		failed(p, "replay", "%" PRIu64 " blocks skipped for bad checksums",
		       (uint64_t)r.bad_csum_blocks);
		goto out;
	}
	if (r.nothing_to_do)
		R.nothing_to_do++;
	R.replayed_tx += r.replayed_transactions;
	R.replayed_blocks += r.replayed_blocks;
	rc = target_end_recovery(&t, &j, &e, &err);
	if (rc) {
		failed(p, "end of recovery", "%s", err.msg);
		goto out;
	}
	ok = true;
out:
	target_close(&t);
	return ok;
}

/* Every fsync due at point p, read back through libext2fs. */
static bool check_fs(size_t p)
{
	ext2_filsys fs;
	errcode_t ec = ext2fs_open2(state_path, NULL, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs);
	unsigned char *buf = NULL;
	bool ok = true;

	R.ext2fs_opens++;
	if (ec) {
		failed(p, "ext2fs_open", "%s", error_message(ec));
		return false;
	}
	ec = ext2fs_read_bitmaps(fs);
	if (ec) {
		failed(p, "bitmaps", "%s", error_message(ec));
		ok = false;
	}
	for (size_t i = 0; ok && i < nF; i++) {
		struct fsync_rec *r = &F[i];
		ext2_ino_t ino;
		ext2_file_t file;
		unsigned int got = 0;

		if (r->idx > p)
			continue;
		R.fsync_checks++;
		ec = ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, r->path, &ino);
		if (ec) {
			failed(p, "fsync lost", "%s (fsync returned at record %zu): %s", r->path,
			       r->idx, error_message(ec));
			ok = false;
			break;
		}
		buf = realloc(buf, r->len + 1);
		ec = ext2fs_file_open(fs, ino, 0, &file);
		if (!ec) {
			__u64 size = 0;

			ec = ext2fs_file_get_lsize(file, &size);
			if (!ec && size < r->len) {
				failed(p, "fsync lost", "%s: %" PRIu64 " bytes, %" PRIu64
				       " were fsynced (record %zu)", r->path, (uint64_t)size, r->len,
				       r->idx);
				ok = false;
			} else if (!ec && r->len) {
				ec = ext2fs_file_read(file, buf, (unsigned)r->len, &got);
			}
			ext2fs_file_close(file);
		}
		if (ok && ec) {
			failed(p, "read", "%s: %s", r->path, error_message(ec));
			ok = false;
		}
		if (ok && (got != r->len || memcmp(buf, r->bytes, r->len))) {
			failed(p, "fsync lost", "%s: the %" PRIu64 " bytes fsynced at record %zu "
			       "differ", r->path, r->len, r->idx);
			ok = false;
		}
	}
	free(buf);
	ext2fs_close_free(&fs);
	return ok;
}

static uint64_t state_no;

/* Build the state of point p under pol (NULL: durable only), check it
 * (if it is this worker's). */
static void one_state(struct dev *rec, struct dev *sdev, size_t p,
		      const struct dev_crash_policy *pol, bool force_fsck)
{
	int rc;
	bool ok;

	R.states++;
	if (state_no++ % A.jobs != worker)
		return;
	cur_rec = rec;
	cur_pol = pol;
	/* the page cache is the file's: target_open's reads see these writes */
	rc = dev_pwrite(sdev, base_img, img_bytes, 0, 0);
	if (!rc)
		rc = dev_rec_image(rec, p, pol, sdev);
	if (rc)
		die("building a state", rc);
	ok = replay(p);
	if (ok)
		ok = check_fs(p);
	if (ok && (force_fsck || (A.fsck_every && (state_no - 1) % A.fsck_every == 0))) {
		R.fsck_runs++;
		rc = run_fsck();
		if (rc)
			failed(p, "e2fsck -fn", "exit %d", rc);
	}
}

/* ---- the crash points ------------------------------------------------------ */

static uint64_t prng_next(uint64_t *s)
{
	/* splitmix64: the subsets only need to be spread and repeatable */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The state of point p with the pending writes bits chooses, then every
 * torn_every-th time the same writes torn. */
static void subset_state(struct dev *rec, struct dev *sdev, size_t p, size_t pend,
			 uint64_t *bits, uint64_t *prng)
{
	struct dev_crash_policy pol = { .mode = DEV_CRASH_SUBSET, .subset_bits = bits,
					.subset_nbits = pend };

	if (pend % 64)
		bits[pend / 64] &= (1ull << (pend % 64)) - 1;
	R.subset_states++;
	snprintf(state_desc, sizeof(state_desc), "%zu pending, subset %#" PRIx64 "%s", pend,
		 bits[0], pend > 64 ? "..." : "");
	one_state(rec, sdev, p, &pol, false);
	if (A.torn_every && R.subset_states % A.torn_every == 0) {
		pol.mode = DEV_CRASH_TORN;
		pol.seed = prng_next(prng);
		R.torn_states++;
		snprintf(state_desc, sizeof(state_desc),
			 "%zu pending, subset %#" PRIx64 "%s, torn seed %#" PRIx64, pend, bits[0],
			 pend > 64 ? "..." : "", pol.seed);
		one_state(rec, sdev, p, &pol, false);
	}
}

int main(int argc, char **argv)
{
	struct dev_rec_trace_info info;
	struct dev *inner, *rec, *sdev;
	struct dev_file_opts fo = { 0 };
	size_t n, nfp, *fp, *pt, np = 0, with_pending = 0;
	uint64_t per_point, prng, *bits;
	int pipes[17][2];
	struct { size_t p, pend; } *sampled;
	size_t nsampled = 0;
	pid_t pids[17];
	struct timespec t0, t1;
	int rc;

	for (int i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		if (!v || strncmp(argv[i], "--", 2))
			usage();
		*v++ = 0;
		if (!strcmp(argv[i], "--base")) A.base = v;
		else if (!strcmp(argv[i], "--trace")) A.trace = v;
		else if (!strcmp(argv[i], "--fsyncs")) A.fsyncs = v;
		else if (!strcmp(argv[i], "--work")) A.work = v;
		else if (!strcmp(argv[i], "--final")) A.final = v;
		else if (!strcmp(argv[i], "--states")) A.states = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--seed")) A.seed = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--fsck-every")) A.fsck_every = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--torn-every")) A.torn_every = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--keep")) A.keep = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--jobs")) A.jobs = (unsigned)strtoul(v, NULL, 0);
		else usage();
	}
	if (!A.base || !A.trace || !A.fsyncs || !A.work || !A.states || !A.jobs || A.jobs > 16)
		usage();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	base_img = slurp(A.base, &img_bytes);

	/* the trace, into a recorder over a device of the image's size */
	rc = dev_rec_trace_load(A.trace, NULL, &info);
	if (rc)
		die(A.trace, rc);
	if (info.size != img_bytes) {
		fprintf(stderr, "crashcheck: the trace is of a %" PRIu64 "-byte device, the base "
			"image %" PRIu64 " bytes\n", info.size, img_bytes);
		return 2;
	}
	if ((rc = dev_mem_new(img_bytes, 512, &inner)) || (rc = dev_rec_new(inner, &rec)))
		die("recorder", rc);
	rc = dev_rec_trace_load(A.trace, rec, &info);
	if (rc)
		die(A.trace, rc);
	n = info.entries;
	load_fsyncs(&info);

	/* the workers: each checks every jobs-th state, over a file of its own */
	for (unsigned w = 1; w < A.jobs; w++) {
		if (pipe(pipes[w]))
			die("pipe", errno);
		pids[w] = fork();
		if (pids[w] < 0)
			die("fork", errno);
		if (pids[w] == 0) {
			worker = w;
			close(pipes[w][0]);
			break;
		}
		close(pipes[w][1]);
	}
	snprintf(state_path, sizeof(state_path), "%s/state%u.img", A.work, worker);
	fo.create = true;
	fo.size = img_bytes;
	if ((rc = dev_file_open(state_path, &fo, &sdev)))
		die(state_path, rc);

	/* the trace saw every write: its end is the image the daemon left */
	if (A.final && worker == 0) {
		uint64_t flen;
		unsigned char *fin = slurp(A.final, &flen), *b = malloc(img_bytes);

		if (!b || (rc = dev_pwrite(sdev, base_img, img_bytes, 0, 0)) ||
		    (rc = dev_rec_image(rec, n, NULL, sdev)) ||
		    (rc = dev_pread(sdev, b, img_bytes, 0)))
			die("final image", rc ? rc : ENOMEM);
		if (flen != img_bytes || memcmp(fin, b, img_bytes)) {
			uint64_t at = 0;
			while (at < img_bytes && at < flen && fin[at] == b[at])
				at++;
			fprintf(stderr, "FAIL: the trace's last state is not the image the daemon "
				"left (first difference at byte %" PRIu64 "): the recorder missed "
				"a write\n", at);
			R.failures++;
		}
		free(fin);
		free(b);
	}

	nfp = dev_rec_flush_points(rec, NULL, 0);
	fp = calloc(nfp + 1, sizeof(*fp));
	pt = calloc(2 * nfp + 1, sizeof(*pt));
	bits = calloc(n / 64 + 2, sizeof(*bits));
	sampled = calloc(2 * nfp + 1, sizeof(*sampled));
	if (!fp || !pt || !bits || !sampled)
		die("points", ENOMEM);
	dev_rec_flush_points(rec, fp, nfp);
	R.flush_points = nfp;
	for (size_t i = 0; i <= nfp; i++) {
		size_t at = i < nfp ? fp[i] : n;
		for (size_t p = at; p <= at + (i < nfp) && p <= n; p++)
			if (np == 0 || p > pt[np - 1])
				pt[np++] = p;
	}
	for (size_t i = 0; i < np; i++)
		if (dev_rec_pending_writes(rec, pt[i]))
			with_pending++;
	/* the states beyond one durable image per point, spread over the
	 * points that have pending writes */
	R.points = np;
	prng = A.seed;
	per_point = with_pending && A.states > np ? (A.states - np + with_pending - 1) / with_pending
						  : 0;
	if (worker == 0)
		printf("crashcheck: %zu trace records, %zu flush points, %zu crash points (%zu "
		       "with pending writes), %zu fsyncs, about %" PRIu64 " subsets a point\n",
		       n, nfp, np, with_pending, nF, per_point);
	fflush(stdout);

	for (size_t i = 0, left_pending = with_pending; i < np; i++) {
		size_t p = pt[i], pend = dev_rec_pending_writes(rec, p);
		uint64_t nsub, want;

		if (pend > R.pending_max)
			R.pending_max = pend;
		snprintf(state_desc, sizeof(state_desc), "durable only");
		R.durable_states++;
		one_state(rec, sdev, p, NULL, p == n);
		if (!pend)
			continue;
		/* what is left of the budget, over the points left with pending
		 * writes (a point with few has fewer subsets than its share) */
		want = A.states > np - i - 1 ? A.states - (np - i - 1) : 0;
		per_point = want > R.states ? (want - R.states + left_pending - 1) / left_pending : 0;
		left_pending--;
		if (!per_point)
			continue;
		/* all nonempty subsets when few, else all-pending + random */
		bool all = pend <= SUBSETS_ALL_MAX && (1ull << pend) - 1 <= per_point;
		size_t words = (pend + 63) / 64;

		nsub = all ? (1ull << pend) - 1 : per_point;
		if (!all) {
			sampled[nsampled].p = p;
			sampled[nsampled++].pend = pend;
		}
		for (uint64_t s = 0; s < nsub; s++) {
			memset(bits, 0, words * 8);
			if (all)
				bits[0] = s + 1;
			else if (s == 0)
				for (size_t k = 0; k < pend; k++)
					bits[k / 64] |= 1ull << (k % 64);
			else
				for (size_t w = 0; w < words; w++)
					bits[w] = prng_next(&prng);
			subset_state(rec, sdev, p, pend, bits, &prng);
		}
	}
	/* short of N (points whose every subset was taken had fewer than their
	 * share): more seeded subsets at the sampled points, in turn */
	for (size_t i = 0; nsampled && R.states < A.states; i = (i + 1) % nsampled) {
		size_t words = (sampled[i].pend + 63) / 64;

		for (size_t w = 0; w < words; w++)
			bits[w] = prng_next(&prng);
		subset_state(rec, sdev, sampled[i].p, sampled[i].pend, bits, &prng);
	}
	if (worker) {
		/* the counts of the checks this worker ran, to worker 0 */
		ssize_t wn = write(pipes[worker][1], &R, sizeof(R));
		_exit(wn == (ssize_t)sizeof(R) ? (R.failures ? 1 : 0) : 3);
	}
	for (unsigned w = 1; w < A.jobs; w++) {
		__typeof__(R) r;
		int st;

		if (read(pipes[w][0], &r, sizeof(r)) != (ssize_t)sizeof(r) ||
		    waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) > 1) {
			fprintf(stderr, "crashcheck: worker %u died\n", w);
			R.failures++;
			continue;
		}
		R.replays += r.replays;
		R.replayed_tx += r.replayed_tx;
		R.replayed_blocks += r.replayed_blocks;
		R.nothing_to_do += r.nothing_to_do;
		R.flag_checks += r.flag_checks;
		R.ext2fs_opens += r.ext2fs_opens;
		R.fsync_checks += r.fsync_checks;
		R.fsck_runs += r.fsck_runs;
		R.failures += r.failures;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("crashcheck: %" PRIu64 " states (%" PRIu64 " durable-only, %" PRIu64 " subsets of "
	       "pending writes, %" PRIu64 " torn; up to %" PRIu64 " pending at a point) at %" PRIu64
	       " crash points of %zu records; %" PRIu64 " replays (%" PRIu64 " transactions, %"
	       PRIu64 " blocks; %" PRIu64 " with nothing to replay), %" PRIu64
	       " needs_recovery checks, %" PRIu64 " libext2fs opens, %" PRIu64
	       " fsync checks (%zu fsyncs), %" PRIu64 " e2fsck -fn runs; %" PRIu64
	       " failures; %.1f s, %u jobs\n",
	       R.states, R.durable_states, R.subset_states, R.torn_states, R.pending_max, R.points,
	       n, R.replays, R.replayed_tx, R.replayed_blocks, R.nothing_to_do, R.flag_checks,
	       R.ext2fs_opens, R.fsync_checks, nF, R.fsck_runs, R.failures,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, A.jobs);
	dev_close(sdev);
	dev_close(rec);
	unlink(state_path);
	for (size_t i = 0; i < nF; i++)
		free(F[i].bytes);
	free(F);
	free(info.end);
	free(fp);
	free(pt);
	free(bits);
	free(sampled);
	free(base_img);
	return R.failures ? 1 : 0;
}

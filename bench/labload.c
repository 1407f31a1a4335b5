/*
 * labload: the loads of the lab's era scenarios, as plain programs on a
 * real file system, for bench/lab-real.sh ("now" beside the lab's "then").
 *
 *   labload tree DIR FILES SEED          make DIR/dNNN/fNNNN, 50 files a
 *                                        directory, 4-64 KiB each (seeded)
 *   labload copy SRC DST SECONDS         cp -r SRC DST0, rm -rf DST1, cp -r SRC
 *                                        DST1, rm -rf DST0, ... until SECONDS
 *   labload read DIR FILES SECONDS MS    every MS: stat, open and read 4 KiB
 *                                        of the next file (a build under
 *                                        strictatime), until SECONDS
 *   labload smallfile DIR IOZONE FSMARK  iozone -i 0 -s 64k -r 4k -e -c over
 *                                        one file IOZONE times, then fs_mark
 *                                        -s 65536 -n FSMARK -S 1 (16 KiB writes)
 *   labload fsync-loop DIR N             fopen("w"), write 4 KiB, fsync,
 *                                        fclose, N times (seed 004's test)
 *
 * The one idea: each load is what the lab's scenario does through its
 * file-system model, done through the kernel's, and prints one JSON object
 * whose names are the lab's metric names, so the script puts them side by
 * side without translation. Exit status: 0 done, 1 an I/O error (one line
 * on stderr naming the file), 2 usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PER_DIR 50u
#define IO_CHUNK (64u * 1024u)    /* cp's buffer of the era */
#define READ_BYTES 4096u          /* the build's read */
#define SF_FILE (64u * 1024u)     /* iozone -s 64k, fs_mark -s 65536 */
#define SF_IOZONE_RECORD 4096u    /* iozone -r 4k */
#define SF_FSMARK_WRITE 16384u    /* fs_mark's default write size */
#define FL_WRITE 4096u
#define MAX_FILES 1000000u

static char io_buf[IO_CHUNK];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "labload: %s '%s': %s\n", what, path, strerror(errno));
	return 1;
}

/* ---- trees ------------------------------------------------------------------ */

/* xorshift64*: sizes from the seed, the same on every run. */
static uint64_t prng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static void tree_path(char *buf, size_t n, const char *root, unsigned i)
{
	snprintf(buf, n, "%s/d%03u/f%04u", root, i / PER_DIR, i);
}

/* mkdir root and, when file i starts a directory, its directory. */
static int tree_mkdirs(const char *root, unsigned i)
{
	char path[4200];

	if (i == 0 && mkdir(root, 0755) < 0 && errno != EEXIST)
		return fail("cannot mkdir", root);
	if (i % PER_DIR)
		return 0;
	snprintf(path, sizeof(path), "%s/d%03u", root, i / PER_DIR);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return fail("cannot mkdir", path);
	return 0;
}

/* Write len bytes to a new file at path in chunks of chunk. */
static int write_file(const char *path, size_t len, size_t chunk, bool do_fsync)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = 0;

	if (fd < 0)
		return fail("cannot create", path);
	for (size_t off = 0; off < len && !rc; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		if (write(fd, io_buf, n) != (ssize_t)n)
			rc = fail("cannot write", path);
	}
	if (!rc && do_fsync && fsync(fd) < 0)
		rc = fail("cannot fsync", path);
	if (close(fd) < 0 && !rc)
		rc = fail("cannot close", path);
	return rc;
}

static int cmd_tree(const char *root, unsigned files, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1, bytes = 0;
	char path[4200];
	int rc = 0;

	for (unsigned i = 0; i < files && !rc; i++) {
		size_t len = (4 + 4 * (size_t)(prng_next(&s) % 16)) * 1024; /* 4..64 KiB */

		rc = tree_mkdirs(root, i);
		tree_path(path, sizeof(path), root, i);
		rc = rc ? rc : write_file(path, len, IO_CHUNK, false);
		bytes += len;
	}
	if (!rc)
		printf("{\"files\": %u, \"bytes\": %llu}\n", files, (unsigned long long)bytes);
	return rc;
}

/* ---- the copy loop ------------------------------------------------------------- */

static int copy_file(const char *from, const char *to, uint64_t *bytes)
{
	int in = open(from, O_RDONLY), out, rc = 0;
	ssize_t n;

	if (in < 0)
		return fail("cannot open", from);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return fail("cannot create", to);
	}
	while (!rc && (n = read(in, io_buf, sizeof(io_buf))) > 0) {
		if (write(out, io_buf, (size_t)n) != n)
			rc = fail("cannot write", to);
		*bytes += (uint64_t)n;
	}
	if (!rc && n < 0)
		rc = fail("cannot read", from);
	close(in);
	if (close(out) < 0 && !rc)
		rc = fail("cannot close", to);
	return rc;
}

/* rm -rf of a tree made by tree_mkdirs (two levels); a missing one is fine. */
static int remove_tree(const char *root)
{
	char path[4200];
	DIR *d = opendir(root);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : fail("cannot open", root);
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		if (e->d_type == DT_DIR)
			rc = remove_tree(path);
		else if (unlink(path) < 0)
			rc = fail("cannot unlink", path);
	}
	closedir(d);
	if (!rc && rmdir(root) < 0)
		rc = fail("cannot rmdir", root);
	return rc;
}

/* Files of a tree made by cmd_tree: as many as there are, in order. */
static int copy_tree(const char *src, const char *dst, uint64_t until, uint64_t *bytes)
{
	char from[4200], to[4200];
	struct stat st;
	int rc = 0;

	for (unsigned i = 0; i < MAX_FILES && !rc && now_ns() < until; i++) {
		tree_path(from, sizeof(from), src, i);
		if (stat(from, &st) < 0)
			break; /* the end of the tree */
		rc = tree_mkdirs(dst, i);
		tree_path(to, sizeof(to), dst, i);
		rc = rc ? rc : copy_file(from, to, bytes);
	}
	return rc;
}

static int cmd_copy(const char *src, const char *dst, double seconds)
{
	char root[2][4200];
	uint64_t t0 = now_ns(), until = t0 + (uint64_t)(seconds * 1e9), bytes = 0, loops = 0;
	unsigned cur = 0;
	int rc = 0;

	snprintf(root[0], sizeof(root[0]), "%s0", dst);
	snprintf(root[1], sizeof(root[1]), "%s1", dst);
	while (!rc && now_ns() < until) {
		rc = copy_tree(src, root[cur], until, &bytes);
		rc = rc ? rc : remove_tree(root[cur ^ 1]);
		cur ^= 1;
		loops++;
	}
	double s = (double)(now_ns() - t0) / 1e9;
	if (!rc)
		printf("{\"copy_mb_s\": %.6g, \"loops\": %llu}\n", (double)bytes / 1e6 / s,
		       (unsigned long long)loops);
	return rc;
}

/* ---- the foreground reader ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, as the lab's lab_samples_pct; v sorted. */
static double pct(const double *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	return n ? v[k ? k - 1 : 0] : 0;
}

static int read_op(const char *root, unsigned i)
{
	char path[4200];
	struct stat st;
	int fd;

	tree_path(path, sizeof(path), root, i);
	if (stat(path, &st) < 0)
		return fail("cannot stat", path);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("cannot open", path);
	if (read(fd, io_buf, READ_BYTES) < 0) {
		close(fd);
		return fail("cannot read", path);
	}
	close(fd);
	return 0;
}

static void print_latency(const double *lat, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += lat[i];
	printf("{\"fg_ops\": %zu, \"fg_latency_ms_avg\": %.6g, \"fg_latency_ms_p50\": %.6g, "
	       "\"fg_latency_ms_p99\": %.6g, \"fg_latency_ms_max\": %.6g}\n", n,
	       n ? sum / (double)n : 0, pct(lat, n, 50), pct(lat, n, 99), n ? lat[n - 1] : 0);
}

static int cmd_read(const char *root, unsigned files, double seconds, double period_ms)
{
	uint64_t period = (uint64_t)(period_ms * 1e6), next = now_ns();
	uint64_t until = next + (uint64_t)(seconds * 1e9);
	size_t cap = (size_t)(seconds * 1e3 / period_ms) + 16, n = 0;
	double *lat = calloc(cap, sizeof(*lat));
	int rc = lat ? 0 : (errno = ENOMEM, fail("out of memory for", "latencies"));

	for (unsigned i = 0; !rc && n < cap && now_ns() < until; i = (i + 1) % files) {
		uint64_t t0 = now_ns();

		rc = read_op(root, i);
		lat[n++] = (double)(now_ns() - t0) / 1e6;
		next += period;
		if (next > now_ns()) {
			struct timespec ts = { (time_t)(next / 1000000000ull),
					       (long)(next % 1000000000ull) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		} else {
			next = now_ns(); /* late: the next one starts now */
		}
	}
	if (!rc) {
		qsort(lat, n, sizeof(*lat), cmp_double);
		print_latency(lat, n);
	}
	free(lat);
	return rc;
}

/* ---- small files with fsync ------------------------------------------------------ */

static int cmd_smallfile(const char *dir, unsigned iozone, unsigned fsmark)
{
	char path[4200];
	uint64_t t0, io_ns, fm_ns;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/iozone.tmp", dir);
	t0 = now_ns();
	for (unsigned i = 0; i < iozone && !rc; i++)
		rc = write_file(path, SF_FILE, SF_IOZONE_RECORD, true);
	io_ns = now_ns() - t0;
	t0 = now_ns();
	for (unsigned i = 0; i < fsmark && !rc; i++) {
		snprintf(path, sizeof(path), "%s/fsm%05u", dir, i);
		rc = write_file(path, SF_FILE, SF_FSMARK_WRITE, true);
	}
	fm_ns = now_ns() - t0;
	if (!rc)
		printf("{\"iozone_mb_s\": %.6g, \"fsmark_files_s\": %.6g}\n",
		       (double)iozone * SF_FILE / 1e6 / ((double)io_ns / 1e9),
		       (double)fsmark / ((double)fm_ns / 1e9));
	return rc;
}

/* ---- the fsync loop --------------------------------------------------------------- */

static int fsync_once(const char *path)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f)
		return fail("cannot fopen", path);
	if (fwrite(io_buf, 1, FL_WRITE, f) != FL_WRITE || fflush(f) != 0)
		rc = fail("cannot write", path);
	if (!rc && fsync(fileno(f)) < 0)
		rc = fail("cannot fsync", path);
	if (fclose(f) != 0 && !rc)
		rc = fail("cannot fclose", path);
	return rc;
}

static int cmd_fsync_loop(const char *dir, unsigned n)
{
	char path[4200];
	uint64_t t0 = now_ns();
	int rc = 0;

	snprintf(path, sizeof(path), "%s/fsync-test", dir);
	for (unsigned i = 0; i < n && !rc; i++)
		rc = fsync_once(path);
	double ms = (double)(now_ns() - t0) / 1e6;
	if (!rc)
		printf("{\"total_ms\": %.6g, \"ms_per_iteration\": %.6g}\n", ms, ms / n);
	return rc;
}

/* ---- main ---------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: labload tree DIR FILES SEED | copy SRC DST SECONDS |\n"
			"       read DIR FILES SECONDS PERIOD_MS | smallfile DIR IOZONE FSMARK |\n"
			"       fsync-loop DIR N\n");
	return 2;
}

/* A positive number, or 0 for anything else. */
static double num(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return *s && !*end && v > 0 && v < 1e9 ? v : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	memset(io_buf, 'x', sizeof(io_buf));
	if (!strcmp(cmd, "tree") && argc == 5 && num(argv[3]) && num(argv[4]) >= 0)
		return cmd_tree(argv[2], (unsigned)num(argv[3]), (uint64_t)strtoull(argv[4], NULL, 0));
	if (!strcmp(cmd, "copy") && argc == 5 && num(argv[4]))
		return cmd_copy(argv[2], argv[3], num(argv[4]));
	if (!strcmp(cmd, "read") && argc == 6 && num(argv[3]) && num(argv[4]) && num(argv[5]))
		return cmd_read(argv[2], (unsigned)num(argv[3]), num(argv[4]), num(argv[5]));
	if (!strcmp(cmd, "smallfile") && argc == 5 && num(argv[3]) && num(argv[4]))
		return cmd_smallfile(argv[2], (unsigned)num(argv[3]), (unsigned)num(argv[4]));
	if (!strcmp(cmd, "fsync-loop") && argc == 4 && num(argv[3]))
		return cmd_fsync_loop(argv[2], (unsigned)num(argv[3]));
	return usage();
}

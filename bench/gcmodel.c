/*
 * bench/gcmodel.c: group commit with no journal at all, the ceiling of
 * "16 threads of fsyncs against 1" on a machine. bench/run builds and runs
 * it beside `ujbd bench group-commit`.
 *
 * Each of N threads does I "fsyncs": it joins the open batch; if it may
 * lead (the batch is still open and fewer than P batch writes are in
 * flight) it seals the batch and writes it as one journal commit would:
 * n + 2 blocks of 4 KiB (n threads' blocks, a descriptor and a commit
 * block), one O_DIRECT write with RWF_DSYNC at the next place of a 32 MiB
 * ring, written once before the clock starts (as a journal is formatted:
 * no write allocates); a batch is acknowledged only after every earlier one (in order).
 * Otherwise the thread waits for its batch to be acknowledged, or for
 * room to lead it. No checksums, no copies, no handles: what is left is the
 * device's flush-bearing writes and the threads' wakeups, which is all a
 * group commit cannot avoid.
 *
 *   gcmodel --file=PATH --threads=N --inflight=P --iterations=I
 *
 * Prints one JSON line: threads, inflight, ops_per_s, fsyncs_per_write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BLK 4096L
#define RING (32L << 20) /* ujbd bench's journal size */
#define MAX_THREADS 256

static int fd;
static long threads = 16, inflight = 1, iterations = 250;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long open_seq = 1, open_n, done_seq, busy, writes;
static long ring_off;
static char *buf;

static void die(const char *what, int err)
{
	fprintf(stderr, "gcmodel: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Seal the open batch seq of n fsyncs and write it. Lock held on entry and
 * on return (dropped for the write). */
static void lead(long seq, long n)
{
	struct iovec v = { buf, (size_t)((n + 2) * BLK) };
	long off = ring_off;

	ring_off = (ring_off + (n + 2) * BLK) % (RING - (MAX_THREADS + 2) * BLK);
	busy++;
	writes++;
	open_seq = seq + 1;
	open_n = 0;
	pthread_mutex_unlock(&mu);
	if (pwritev2(fd, &v, 1, off, RWF_DSYNC) != (ssize_t)v.iov_len)
		die("write", errno ? errno : EIO);
	pthread_mutex_lock(&mu);
	while (done_seq != seq - 1) /* acknowledged in order */
		pthread_cond_wait(&cv, &mu);
	done_seq = seq;
	busy--;
	pthread_cond_broadcast(&cv);
}

static void *fsyncer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (long i = 0; i < iterations; i++) {
		long mine = open_seq;

		open_n++;
		while (done_seq < mine) {
			if (open_seq == mine && busy < inflight) {
				lead(mine, open_n);
				break;
			}
			pthread_cond_wait(&cv, &mu);
		}
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static long opt(const char *arg, const char *name)
{
	size_t n = strlen(name);
	char *end;
	long v;

	if (strncmp(arg, name, n) || arg[n] != '=')
		return -1;
	v = strtol(arg + n + 1, &end, 10);
	if (*end || v <= 0) {
		fprintf(stderr, "gcmodel: bad value: '%s'\n", arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	pthread_t t[MAX_THREADS];
	struct timespec a, b;
	double s;
	int rc;

	for (int i = 1; i < argc; i++) {
		long v;
		if (!strncmp(argv[i], "--file=", 7))
			path = argv[i] + 7;
		else if ((v = opt(argv[i], "--threads")) > 0)
			threads = v;
		else if ((v = opt(argv[i], "--inflight")) > 0)
			inflight = v;
		else if ((v = opt(argv[i], "--iterations")) > 0)
			iterations = v;
		else {
			fprintf(stderr, "gcmodel: unknown argument: '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!path || threads > MAX_THREADS) {
		fprintf(stderr, "gcmodel: usage: gcmodel --file=PATH [--threads=N<=%d] "
			"[--inflight=P] [--iterations=I]\n", MAX_THREADS);
		return 2;
	}
	fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL) /* no O_DIRECT here (tmpfs) */
		fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		die(path, errno);
	if ((rc = posix_memalign((void **)&buf, BLK, (MAX_THREADS + 2) * BLK)))
		die("memory", rc);
	memset(buf, 0x5a, (MAX_THREADS + 2) * BLK);
	for (long off = 0; off < RING; off += (MAX_THREADS + 2) * BLK) {
		size_t len = (size_t)(RING - off < (MAX_THREADS + 2) * BLK ? RING - off
									     : (MAX_THREADS + 2) * BLK);
		if (pwrite(fd, buf, len, off) != (ssize_t)len)
			die("fill", errno ? errno : EIO);
	}
	if (fdatasync(fd))
		die("fill", errno);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < threads; i++)
		if ((rc = pthread_create(&t[i], NULL, fsyncer, NULL)))
			die("thread", rc);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("{\"threads\":%ld,\"inflight\":%ld,\"ops_per_s\":%.1f,\"fsyncs_per_write\":%.2f}\n",
	       threads, inflight, (double)(threads * iterations) / s,
	       (double)(threads * iterations) / (double)writes);
	close(fd);
	return 0;
}

/*
 * file: a regular file or a block device, through one of two engines.
 *
 *   threads   worker threads run pread/pwrite/fdatasync; the kernel sees the
 *             worker's own I/O priority, not the request's.
 *   io_uring  dev_submit fills an sqe (with the request's ioprio, so bfq and
 *             mq-deadline see each request's class) and submits it; a reaper
 *             thread ("file-done") waits for cqes and calls r_done itself:
 *             it is the device's completion thread (one thread hop per
 *             request less than handing each to the core's).
 *
 * Durability maps onto the kernel's: a FLUSH is fdatasync, PREFLUSH is an
 * fdatasync before the write (a linked fsync sqe under io_uring), FUA is a
 * write with RWF_DSYNC. The page cache (or the disk's cache with O_DIRECT)
 * is the volatile cache, so dev_volatile_cache() is true.
 *
 * A request flagged DEV_REQ_DIRECT goes through a second descriptor of the
 * same file opened with O_DIRECT (when the file system allows it and the
 * request is aligned to f_dio_align), past the page cache: the kernel keeps
 * the two coherent (a direct read writes dirty cached pages back first, a
 * direct write drops the cached copies), and one fdatasync covers both.
 *
 * Both engines block in system calls, which is fine in the real world. In
 * the sim world DEV_FILE_AUTO picks the threads engine: its workers wait
 * for work through rt, so the sim scheduler sees them.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dev/dev_int.h"
#include "priv/dev_file.h"

#define DEV_FILE_MAX_WORKERS 64
#define DEV_FILE_MAX_QD 1024

struct dev_file {
	struct dev f_dev;
	int f_fd;
	int f_dfd;                   /* O_DIRECT, for DEV_REQ_DIRECT; or -1 */
	uint32_t f_dio_align;        /* offsets, lengths and buffers of f_dfd */
	bool f_dio_off;              /* a direct request failed EINVAL: no more */
	/* a regular file: its absolute path and identity at open (dev_check) */
	bool f_regular;
	char *f_path;
	dev_t f_st_dev;
	ino_t f_st_ino;
	uint64_t f_path_checked_ns;  /* atomic: the last lookup of f_path */
	bool f_read_only;
	bool f_uring;                /* which engine */
	unsigned f_qd;

	/* threads engine */
	rt_mutex f_lock;
	rt_cond f_cond;
	struct rt_link f_waiting;    /* [f_lock] queued requests (r_link) */
	bool f_stop;                 /* [f_lock] */
	unsigned f_nworkers;
	rt_thread *f_workers[DEV_FILE_MAX_WORKERS];

	/* io_uring engine */
	struct io_uring f_ring;      /* sq side [f_lock]; cq side: reaper only */
	unsigned f_ring_inflight;    /* [f_lock] requests in the ring */
	bool f_rt_denied;            /* [f_lock] kernel refused class RT: send BE */
	rt_thread *f_reaper;
};

/* ---- system call helpers (whole transfers, retried on EINTR) ----------- */

static int dev_file_sync(int fd)
{
	while (fdatasync(fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static int64_t dev_file_rw(int fd, bool write, void *buf, uint32_t len,
			   uint64_t off, bool dsync)
{
	uint32_t done = 0;

	while (done < len) {
		struct iovec iov = { (char *)buf + done, len - done };
		ssize_t n;

		if (write)
			n = pwritev2(fd, &iov, 1, (off_t)(off + done),
				     dsync ? RWF_DSYNC : 0);
		else
			n = pread(fd, iov.iov_base, iov.iov_len, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			if (write)
				return done ? (int64_t)done : -EIO;
			/* past the end of a file we sized: zeros */
			memset((char *)buf + done, 0, len - done);
			return len;
		}
		done += (uint32_t)n;
	}
	return done;
}

/* The descriptor a read or write goes through: the O_DIRECT one when asked
 * for and aligned for it. f_dio_off is read unlocked: a stale false only
 * costs one more EINVAL, which is retried through f_fd. */
static int dev_file_fd(const struct dev_file *f, const struct dev_req *r)
{
	uint64_t a = f->f_dio_align;

	if (!(r->r_flags & DEV_REQ_DIRECT) || f->f_dfd < 0 ||
	    __atomic_load_n(&f->f_dio_off, __ATOMIC_RELAXED))
		return f->f_fd;
	if (r->r_off % a || r->r_len % a || (uintptr_t)r->r_buf % a)
		return f->f_fd;
	return f->f_dfd;
}

/* A direct transfer the file system refused after all: never again. */
static bool dev_file_dio_refused(struct dev_file *f, int fd, int64_t res)
{
	if (fd != f->f_dfd || res != -EINVAL)
		return false;
	__atomic_store_n(&f->f_dio_off, true, __ATOMIC_RELAXED);
	return true;
}

/* Run one request synchronously; its r_result. */
static int64_t dev_file_do(struct dev_file *f, struct dev_req *r)
{
	int fd = dev_file_fd(f, r);
	int64_t res;
	int rc;

	if (r->r_op == DEV_OP_FLUSH)
		return dev_file_sync(f->f_fd);
	if (r->r_op == DEV_OP_WRITE && (r->r_flags & DEV_REQ_PREFLUSH)) {
		rc = dev_file_sync(f->f_fd);
		if (rc < 0)
			return rc;
	}
	res = dev_file_rw(fd, r->r_op == DEV_OP_WRITE, r->r_buf, r->r_len, r->r_off,
			  r->r_flags & DEV_REQ_FUA);
	if (dev_file_dio_refused(f, fd, res))
		res = dev_file_rw(f->f_fd, r->r_op == DEV_OP_WRITE, r->r_buf, r->r_len,
				  r->r_off, r->r_flags & DEV_REQ_FUA);
	return res;
}

/* ---- threads engine --------------------------------------------------- */

static void dev_file_worker(void *arg)
{
	struct dev_file *f = arg;

	rt_mutex_lock(&f->f_lock);
	for (;;) {
		struct dev_req *r = RT_LIST_POP(&f->f_waiting, struct dev_req, r_link);

		if (!r) {
			if (f->f_stop)
				break;
			rt_cond_wait(&f->f_cond, &f->f_lock);
			continue;
		}
		rt_mutex_unlock(&f->f_lock);
		r->r_result = dev_file_do(f, r);
		dev_core_complete(&f->f_dev, r);
		rt_mutex_lock(&f->f_lock);
	}
	rt_mutex_unlock(&f->f_lock);
}

/* Append r to the waiting FIFO (the worker threads' queue, or the requests
 * past io_uring's depth); f_lock held. */
static void __dev_file_enqueue(struct dev_file *f, struct dev_req *r)
{
	rt_list_add_tail(&f->f_waiting, &r->r_link);
}

static int dev_file_threads_submit(struct dev_file *f, struct dev_req *r)
{
	rt_mutex_lock(&f->f_lock);
	__dev_file_enqueue(f, r);
	rt_cond_signal(&f->f_cond);
	rt_mutex_unlock(&f->f_lock);
	return 0;
}

static int dev_file_threads_start(struct dev_file *f, unsigned workers)
{
	int rc;

	f->f_nworkers = 0;
	for (unsigned i = 0; i < workers; i++) {
		rc = rt_thread_create(&f->f_workers[i], "file-io", dev_file_worker, f);
		if (rc < 0)
			return rc;
		f->f_nworkers++;
	}
	return 0;
}

static void dev_file_threads_stop(struct dev_file *f)
{
	rt_mutex_lock(&f->f_lock);
	f->f_stop = true;
	rt_cond_broadcast(&f->f_cond);
	rt_mutex_unlock(&f->f_lock);
	for (unsigned i = 0; i < f->f_nworkers; i++)
		rt_thread_join(f->f_workers[i]);
	f->f_nworkers = 0;
}

/* ---- io_uring engine -------------------------------------------------- */

/*
 * user_data: the request's address, with bit 0 set on the fsync sqe that
 * carries a PREFLUSH (requests are at least 2-aligned), and 0 on the NOP
 * that tells the reaper to exit. A PREFLUSH that fails leaves its error in
 * r_dev_seq; the linked write then comes back -ECANCELED and the request
 * reports the flush's error.
 */
#define DEV_URING_PREFLUSH_TAG 1ull

static uint16_t dev_file_ioprio(struct dev_file *f, uint16_t prio)
{
	/* NONE/4 is what a thread reads back before it set anything; the
	 * kernel takes class NONE only with level 0 (EINVAL otherwise) */
	if (RT_IOPRIO_CLASS(prio) == RT_IOPRIO_CLASS_NONE)
		return 0;
	if (f->f_rt_denied && RT_IOPRIO_CLASS(prio) == RT_IOPRIO_CLASS_RT)
		return RT_IOPRIO(RT_IOPRIO_CLASS_BE, RT_IOPRIO_LEVEL(prio));
	return prio;
}

/* Fill the sqes for r. [f_lock] */
static int __dev_file_uring_queue(struct dev_file *f, struct dev_req *r)
{
	struct io_uring_sqe *sqe;
	uint16_t prio = dev_file_ioprio(f, r->r_ioprio);

	if (io_uring_sq_space_left(&f->f_ring) < 2)
		return -EBUSY;
	r->r_dev_seq = 0;
	if (r->r_op == DEV_OP_WRITE && (r->r_flags & DEV_REQ_PREFLUSH)) {
		sqe = io_uring_get_sqe(&f->f_ring);
		io_uring_prep_fsync(sqe, f->f_fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r | DEV_URING_PREFLUSH_TAG);
	}
	sqe = io_uring_get_sqe(&f->f_ring);
	/* which descriptor, for the reaper to retry a refused direct one */
	int fd = r->r_op == DEV_OP_FLUSH ? f->f_fd : dev_file_fd(f, r);
	r->r_dev_time[0] = (uint64_t)fd;
	/* only reads and writes carry an ioprio: fsync rejects a nonzero one */
	if (r->r_op == DEV_OP_FLUSH)
		io_uring_prep_fsync(sqe, f->f_fd, IORING_FSYNC_DATASYNC);
	else if (r->r_op == DEV_OP_READ)
		io_uring_prep_read(sqe, fd, r->r_buf, r->r_len, r->r_off);
	else {
		io_uring_prep_write(sqe, fd, r->r_buf, r->r_len, r->r_off);
		if (r->r_flags & DEV_REQ_FUA)
			sqe->rw_flags = RWF_DSYNC;
	}
	if (r->r_op != DEV_OP_FLUSH)
		sqe->ioprio = prio;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r);
	return 0;
}

static int dev_file_uring_submit(struct dev_file *f, struct dev_req *r)
{
	int rc;

	rt_mutex_lock(&f->f_lock);
	/* past the queue depth, requests wait in f_waiting for the reaper */
	if (f->f_ring_inflight >= f->f_qd || !rt_list_empty(&f->f_waiting)) {
		__dev_file_enqueue(f, r);
		rt_mutex_unlock(&f->f_lock);
		return 0;
	}
	rc = __dev_file_uring_queue(f, r);
	if (rc == 0) {
		f->f_ring_inflight++;
		rc = io_uring_submit(&f->f_ring);
		rc = rc < 0 ? rc : 0;
		if (rc < 0)
			f->f_ring_inflight--;
	}
	rt_mutex_unlock(&f->f_lock);
	return rc;
}

/* Move waiting requests into the ring while there is room. [f_lock] */
static void __dev_file_uring_refill(struct dev_file *f)
{
	bool any = false;

	struct dev_req *r;

	while ((r = RT_LIST_FIRST(&f->f_waiting, struct dev_req, r_link)) &&
	       f->f_ring_inflight < f->f_qd) {
		if (__dev_file_uring_queue(f, r) < 0)
			break;
		rt_list_del(&r->r_link);
		f->f_ring_inflight++;
		any = true;
	}
	if (any)
		io_uring_submit(&f->f_ring);
}

/* Resend r after the kernel refused its RT class (EPERM), or its direct
 * transfer (EINVAL: then through the page cache). [f_lock] */
static bool __dev_file_uring_retry(struct dev_file *f, struct dev_req *r, int res)
{
	bool dio = r->r_op != DEV_OP_FLUSH && !r->r_dev_seq &&
		   dev_file_dio_refused(f, (int)r->r_dev_time[0], res);

	if (!dio && (res != -EPERM || RT_IOPRIO_CLASS(r->r_ioprio) != RT_IOPRIO_CLASS_RT ||
		     f->f_rt_denied))
		return false;
	if (!dio)
		f->f_rt_denied = true;
	if (__dev_file_uring_queue(f, r) < 0)
		return false;
	io_uring_submit(&f->f_ring);
	return true;
}

/* Handle one cqe; false when it was the exit NOP. */
static bool dev_file_uring_cqe(struct dev_file *f, uint64_t data, int res)
{
	struct dev_req *r = (struct dev_req *)(uintptr_t)(data & ~DEV_URING_PREFLUSH_TAG);

	if (data == 0)
		return false;
	if (data & DEV_URING_PREFLUSH_TAG) {
		if (res < 0)
			r->r_dev_seq = (uint64_t)(int64_t)res;
		return true;
	}
	rt_mutex_lock(&f->f_lock);
	if (__dev_file_uring_retry(f, r, res)) {
		rt_mutex_unlock(&f->f_lock);
		return true;
	}
	f->f_ring_inflight--;
	__dev_file_uring_refill(f);
	rt_mutex_unlock(&f->f_lock);
	if (r->r_dev_seq)
		r->r_result = (int64_t)r->r_dev_seq;
	else if (r->r_op == DEV_OP_FLUSH)
		r->r_result = res < 0 ? res : 0;
	else
		r->r_result = res;
	/* a short write: the host wrote what it could (a file system filling
	 * up, a signal); write the rest here, as the threads engine does, so
	 * that the request reports what the host says of it (-ENOSPC, ...)
	 * and not a short count the layers above could only call -EIO */
	if (r->r_op == DEV_OP_WRITE && !r->r_dev_seq && res >= 0 && (uint32_t)res < r->r_len) {
		int64_t rest = dev_file_rw(f->f_fd, true, (char *)r->r_buf + res,
					   r->r_len - (uint32_t)res, r->r_off + (uint32_t)res,
					   r->r_flags & DEV_REQ_FUA);
		r->r_result = rest < 0 ? rest : res + rest;
	}
	/* a short read of a file we sized means zeros past its end */
	if (r->r_op == DEV_OP_READ && res >= 0 && (uint32_t)res < r->r_len) {
		memset((char *)r->r_buf + res, 0, r->r_len - (uint32_t)res);
		r->r_result = r->r_len;
	}
	/* the reaper is this device's only finisher: r_done runs here */
	dev_core_complete_direct(&f->f_dev, r);
	return true;
}

static void dev_file_reaper(void *arg)
{
	struct dev_file *f = arg;

	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t data;
		int res, rc;

		rc = io_uring_wait_cqe(&f->f_ring, &cqe);
		if (rc == -EINTR)
			continue;
		ASSERT(rc == 0);
		data = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&f->f_ring, cqe);
		if (!dev_file_uring_cqe(f, data, res))
			break;
	}
}

static int dev_file_uring_start(struct dev_file *f)
{
	int rc = io_uring_queue_init(2 * f->f_qd + 2, &f->f_ring, 0);

	if (rc < 0)
		return rc;
	/* the reaper is the device's completion thread: it has the name */
	rc = rt_thread_create(&f->f_reaper, "file-done", dev_file_reaper, f);
	if (rc < 0) {
		io_uring_queue_exit(&f->f_ring);
		return rc;
	}
	f->f_uring = true;
	return 0;
}

static void dev_file_uring_stop(struct dev_file *f)
{
	struct io_uring_sqe *sqe;

	rt_mutex_lock(&f->f_lock);
	sqe = io_uring_get_sqe(&f->f_ring);
	ASSERT(sqe); /* drained: the ring is empty */
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 0);
	io_uring_submit(&f->f_ring);
	rt_mutex_unlock(&f->f_lock);
	rt_thread_join(f->f_reaper);
	io_uring_queue_exit(&f->f_ring);
}

/* ---- the device ------------------------------------------------------- */

static int dev_file_submit(struct dev *d, struct dev_req *r)
{
	struct dev_file *f = (struct dev_file *)d;

	if (f->f_read_only && r->r_op == DEV_OP_WRITE)
		return -EROFS;
	if (f->f_uring)
		return dev_file_uring_submit(f, r);
	return dev_file_threads_submit(f, r);
}

/* A polled request, on the poller's thread (with that thread's own I/O
 * priority, as a synchronous system call has). */
static int64_t dev_file_exec(struct dev *d, struct dev_req *r)
{
	struct dev_file *f = (struct dev_file *)d;

	if (f->f_read_only && r->r_op == DEV_OP_WRITE)
		return -EROFS;
	return dev_file_do(f, r);
}

static void dev_file_close(struct dev *d)
{
	struct dev_file *f = (struct dev_file *)d;

	if (f->f_uring)
		dev_file_uring_stop(f);
	else
		dev_file_threads_stop(f);
	rt_cond_release(&f->f_cond);
	rt_mutex_release(&f->f_lock);
	if (f->f_dfd >= 0)
		close(f->f_dfd);
	close(f->f_fd);
	free(f->f_path);
	free(f);
}

/* How often dev_check looks the path up (the link count it asks every time). */
#define DEV_FILE_PATH_CHECK_NS RT_NS_PER_S

/*
 * A file unlinked, or another one renamed over its path, takes every write
 * that follows with it (nobody will ever find them): the journal asks at
 * each commit. Both leave the file without a link, which one statx of the
 * link count alone sees (about a microsecond); a path that names another
 * file while this one lives on under another name (moved away, then
 * replaced) takes a lookup of the path, several microseconds, done at most
 * once a second. Never a full fstat: asking for the timestamps makes
 * Linux (6.13's multigrain timestamps) give the next write a fine-grained
 * ctime, so on ext4 each commit's RWF_DSYNC write then commits the host's
 * journal too: +45 us an fsync on this VM (bench/ab, 2026-12-04).
 */
static int dev_file_check(struct dev *d)
{
	struct dev_file *f = (struct dev_file *)d;
	uint64_t now, last;
	struct statx sx;

	if (!f->f_path)
		return 0; /* a block device */
	if (statx(f->f_fd, "", AT_EMPTY_PATH, STATX_NLINK, &sx) == 0 &&
	    (sx.stx_mask & STATX_NLINK) && sx.stx_nlink == 0)
		return -ESTALE;
	now = rt_now_ns();
	last = __atomic_load_n(&f->f_path_checked_ns, __ATOMIC_RELAXED);
	if (last && now - last < DEV_FILE_PATH_CHECK_NS)
		return 0;
	__atomic_store_n(&f->f_path_checked_ns, now, __ATOMIC_RELAXED);
	if (statx(AT_FDCWD, f->f_path, 0, STATX_INO, &sx) < 0 ||
	    makedev(sx.stx_dev_major, sx.stx_dev_minor) != f->f_st_dev || sx.stx_ino != f->f_st_ino)
		return -ESTALE;
	return 0;
}

static const struct dev_ops dev_file_ops = {
	.o_submit = dev_file_submit,
	.o_exec = dev_file_exec,
	.o_close = dev_file_close,
	.o_check = dev_file_check,
};

const char *dev_file_engine_name(const struct dev *d)
{
	if (d->d_ops != &dev_file_ops)
		return NULL;
	return ((const struct dev_file *)d)->f_uring ? "io_uring" : "threads";
}

/* The sysfs queue directory of block device rdev: its own, or a
 * partition's disk's (a partition has no queue of its own). */
static int dev_file_queue_dir(dev_t rdev, char *dir, size_t len)
{
	static const char *const fmt[] = { "/sys/dev/block/%u:%u/queue",
					   "/sys/dev/block/%u:%u/../queue" };

	for (int i = 0; i < 2; i++) {
		snprintf(dir, len, fmt[i], major(rdev), minor(rdev));
		if (access(dir, F_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

int dev_file_sysfs_queue(const char *path, char *dir, size_t len)
{
	struct stat st;

	if (!path || !dir || !len)
		return -EINVAL;
	if (stat(path, &st) < 0)
		return -errno;
	return dev_file_queue_dir(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev, dir, len);
}

bool dev_file_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(buf, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

int dev_file_bytes(int fd, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, bytes) < 0 ? -errno : 0;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

/* Whether block device rdev says it is rotational (sysfs): 1, 0, or
 * -ENOENT when it says nothing. */
static int dev_file_rotational(dev_t rdev)
{
	char dir[96], path[128], line[8];

	if (dev_file_queue_dir(rdev, dir, sizeof(dir)) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/rotational", dir);
	if (!dev_file_read_line(path, line, sizeof(line)))
		return -ENOENT;
	return line[0] == '0' || line[0] == '1' ? line[0] == '1' : -ENOENT;
}

/* Size and logical block size of what fd refers to; sizes a regular file. */
static int dev_file_geometry(struct dev_file *f, const struct dev_file_opts *o)
{
	struct stat st;
	uint64_t size;
	uint32_t bs = o->block_size ? o->block_size : 512;

	if (fstat(f->f_fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		int lbs = 512;

		if (ioctl(f->f_fd, BLKGETSIZE64, &size) < 0 ||
		    ioctl(f->f_fd, BLKSSZGET, &lbs) < 0)
			return -errno;
		if (!o->block_size)
			bs = (uint32_t)lbs;
		else if (bs < (uint32_t)lbs)
			return -EINVAL;
	} else if (S_ISREG(st.st_mode)) {
		f->f_regular = true;
		f->f_st_dev = st.st_dev;
		f->f_st_ino = st.st_ino;
		size = (uint64_t)st.st_size;
		if (o->size > size) {
			if (o->read_only)
				return -EROFS;
			if (ftruncate(f->f_fd, (off_t)o->size) < 0)
				return -errno;
			size = o->size;
		}
	} else {
		return -ENOTBLK;
	}
	if (bs < 512 || (bs & (bs - 1)) || bs > 65536)
		return -EINVAL;
	f->f_dev.d_size = size - size % bs;
	f->f_dev.d_block_size = bs;
	/* a regular file's seeks are unknown: by default say not rotational,
	 * so a block layer above does not idle for a seek it cannot see;
	 * DEV_FILE_ROT_BACKING takes its file system's disk's word for it, as
	 * the kernel's loop driver does */
	if (S_ISBLK(st.st_mode)) /* unknown: assume a disk */
		f->f_dev.d_rotational = dev_file_rotational(st.st_rdev) != 0;
	else
		f->f_dev.d_rotational = o->rotational == DEV_FILE_ROT_BACKING &&
					dev_file_rotational(st.st_dev) == 1;
	return 0;
}

/* The O_DIRECT descriptor for DEV_REQ_DIRECT, where the file system has
 * direct I/O (tmpfs refuses it) and the device is not direct already; its
 * alignment: 4 KiB, or the logical block size of a device with larger
 * ones. -1 when there is none. */
static int dev_file_open_direct(struct dev_file *f, const char *path, const struct dev_file_opts *o)
{
	int fd;

	f->f_dio_align = f->f_dev.d_block_size > 4096 ? f->f_dev.d_block_size : 4096;
	if (o->direct)
		return -1;
	fd = open(path, (o->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_DIRECT);
	return fd < 0 ? -1 : fd;
}

static int dev_file_open_fd(const char *path, const struct dev_file_opts *o)
{
	int flags = (o->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	int fd;

	if (o->create && !o->read_only)
		flags |= O_CREAT;
	if (o->direct)
		flags |= O_DIRECT;
	/* O_EXCL on a block device (not with O_CREAT: that is "must not
	 * exist") is the kernel's claim: EBUSY if mounted or claimed. */
	if (o->exclusive && !o->read_only && stat(path, &st) == 0 && S_ISBLK(st.st_mode))
		flags = (flags & ~O_CREAT) | O_EXCL;
	fd = open(path, flags, 0644);
	return fd < 0 ? -errno : fd;
}

/*
 * A writable exclusive open of a regular file takes a write lock over the
 * whole file on its open file description (F_OFD_SETLK): it conflicts with
 * any other open that asks, in this process or another, and it goes when
 * the last descriptor of this open is closed, whatever else the process
 * opens and closes on the file (a classic POSIX lock would go with the
 * first close of any descriptor of the file, libext2fs's included).
 */
static int dev_file_claim(struct dev_file *f, const struct dev_file_opts *o)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;

	if (!o->exclusive || o->read_only)
		return 0;
	if (fstat(f->f_fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (fcntl(f->f_fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	return errno == EAGAIN || errno == EACCES ? -EBUSY : -errno;
}

/* Start the engine the options ask for. */
static int dev_file_engine_start(struct dev_file *f, const struct dev_file_opts *o)
{
	int rc;
	bool sim = rt_world_kind(rt_world_current()) == RT_WORLD_SIM;

	if (o->engine == DEV_FILE_URING ||
	    (o->engine == DEV_FILE_AUTO && !sim)) {
		rc = dev_file_uring_start(f);
		if (rc == 0 || o->engine == DEV_FILE_URING)
			return rc;
	}
	rc = dev_file_threads_start(f, o->workers ? o->workers : 4);
	if (rc < 0)
		dev_file_threads_stop(f);
	return rc;
}

int dev_file_open(const char *path, const struct dev_file_opts *opts,
		  struct dev **out)
{
	static const struct dev_file_opts dflt;
	const struct dev_file_opts *o = opts ? opts : &dflt;
	struct dev_file *f;
	int rc;

	if (!path || o->workers > DEV_FILE_MAX_WORKERS || o->queue_depth > DEV_FILE_MAX_QD ||
	    o->engine > DEV_FILE_THREADS)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rt_list_init(&f->f_waiting);
	f->f_dfd = -1;
	f->f_fd = dev_file_open_fd(path, o);
	if (f->f_fd < 0) {
		rc = f->f_fd;
		free(f);
		return rc;
	}
	f->f_read_only = o->read_only;
	f->f_qd = o->queue_depth ? o->queue_depth : 32;
	f->f_dev.d_ops = &dev_file_ops;
	f->f_dev.d_queue_depth = f->f_qd;
	f->f_dev.d_volatile_cache = true;
	f->f_dev.d_mem_align = o->direct ? 4096 : 0; /* O_DIRECT: the page size covers any disk */
	snprintf(f->f_dev.d_name, sizeof(f->f_dev.d_name), "file:%s", path);
	rc = dev_file_claim(f, o);
	if (rc < 0)
		goto out_fd;
	rc = dev_file_geometry(f, o);
	if (rc < 0)
		goto out_fd;
	f->f_dfd = dev_file_open_direct(f, path, o);
	/* the absolute path: a chdir must not make the file look replaced */
	if (f->f_regular && !(f->f_path = realpath(path, NULL))) {
		rc = errno == ENOMEM ? -ENOMEM : -errno;
		goto out_fd;
	}
	rc = rt_mutex_init(&f->f_lock, "dev_file");
	if (rc < 0)
		goto out_fd;
	rc = rt_cond_init(&f->f_cond, "dev_file");
	if (rc < 0)
		goto out_lock;
	rc = dev_file_engine_start(f, o);
	if (rc < 0)
		goto out_cond;
	rc = dev_core_init(&f->f_dev, f->f_uring ? NULL : "file-done");
	if (rc < 0)
		goto out_engine;
	*out = &f->f_dev;
	return 0;
out_engine:
	if (f->f_uring)
		dev_file_uring_stop(f);
	else
		dev_file_threads_stop(f);
out_cond:
	rt_cond_release(&f->f_cond);
out_lock:
	rt_mutex_release(&f->f_lock);
out_fd:
	if (f->f_dfd >= 0)
		close(f->f_dfd);
	close(f->f_fd);
	free(f->f_path);
	free(f);
	return rc;
}

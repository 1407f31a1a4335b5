/*
 * rec_trace: a recorder's log in a file, written as it is logged, and read
 * back into a fresh recorder (priv/dev_rec.h has the format and the why).
 *
 * The one idea: the file's record i is the recorder's log entry i, with the
 * done_before it was logged with, so loading it back (dev_rec_inject)
 * rebuilds the very log, and every crash image comes from rec.c's own
 * arithmetic. A record goes out in one write(2) from the sink, before the
 * request it records completes to its caller: what a caller saw complete is
 * in the file, even if the process is killed a moment later.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/dev_int.h"
#include "priv/dev_rec.h"

#define TR_MAGIC "UJBDTRC1"
#define TR_HEAD 64u
#define TR_REC 48u

struct dev_rec_trace {
	rt_mutex t_lock;
	int t_fd;
	struct dev *t_rec;   /* [t_lock] attached and open, or NULL */
	uint64_t t_n;        /* [t_lock] records written */
	int t_err;           /* [t_lock] the first error */
};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* All of buf at the file's end, or -errno. */
static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Record e as record t_n. [t_lock] */
static void tr_put(struct dev_rec_trace *t, const struct dev_rec_entry *e, uint64_t done_before)
{
	uint32_t dlen = e->kind == DEV_REC_WRITE ? e->len : 0;
	uint8_t *buf;
	int err;

	if (t->t_err)
		return; /* a trace with a hole is worth nothing: stop at the first */
	buf = malloc(TR_REC + dlen);
	if (!buf) {
		t->t_err = -ENOMEM;
		return;
	}
	put64(buf, (uint64_t)e->kind | (uint64_t)e->flags << 32);
	put64(buf + 8, e->off);
	put64(buf + 16, dlen);
	put64(buf + 24, (uint64_t)e->result);
	put64(buf + 32, e->submit_seq);
	put64(buf + 40, done_before);
	if (dlen)
		memcpy(buf + TR_REC, e->data, dlen);
	err = write_all(t->t_fd, buf, TR_REC + dlen);
	free(buf);
	if (err)
		t->t_err = err;
	else
		t->t_n++;
}

static void tr_sink(void *arg, const struct dev_rec_entry *e, uint64_t done_before)
{
	struct dev_rec_trace *t = arg;

	rt_mutex_lock(&t->t_lock);
	if (e)
		tr_put(t, e, done_before);
	else
		t->t_rec = NULL; /* the recorder is closing */
	rt_mutex_unlock(&t->t_lock);
}

int dev_rec_trace_create(const char *path, uint64_t size, uint32_t block_size,
			 struct dev_rec_trace **out)
{
	struct dev_rec_trace *t = calloc(1, sizeof(*t));
	uint8_t head[TR_HEAD] = { 0 };
	int err;

	if (!t)
		return -ENOMEM;
	t->t_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (t->t_fd < 0) {
		err = -errno;
		free(t);
		return err;
	}
	memcpy(head, TR_MAGIC, 8);
	put64(head + 8, size);
	put64(head + 16, block_size);
	err = write_all(t->t_fd, head, sizeof(head));
	if (!err)
		err = rt_mutex_init(&t->t_lock, "rec_trace");
	if (err) {
		close(t->t_fd);
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

void dev_rec_trace_attach(struct dev_rec_trace *t, struct dev *rec)
{
	rt_mutex_lock(&t->t_lock);
	t->t_rec = rec;
	rt_mutex_unlock(&t->t_lock);
	dev_rec_set_sink(rec, tr_sink, t, false);
}

int dev_rec_trace_note(struct dev_rec_trace *t, uint64_t off, const void *data, uint32_t len)
{
	struct dev_rec_entry w = { .kind = DEV_REC_WRITE, .off = off, .len = len, .data = data,
				   .result = len };
	struct dev_rec_entry f = { .kind = DEV_REC_FLUSH };
	struct dev *rec;
	int err;

	if (!len || !data)
		return -EINVAL;
	rt_mutex_lock(&t->t_lock);
	rec = t->t_rec;
	if (!rec) {
		/* no recorder any more: the file's count is the log's */
		w.submit_seq = f.submit_seq = UINT64_MAX;
		tr_put(t, &w, t->t_n);
		tr_put(t, &f, t->t_n);
		err = t->t_err;
		rt_mutex_unlock(&t->t_lock);
		return err;
	}
	rt_mutex_unlock(&t->t_lock);
	/* through the recorder: its log and the file stay one sequence */
	w.submit_seq = f.submit_seq = UINT64_MAX;
	err = dev_rec_inject(rec, &w, DEV_REC_NOW);
	if (!err)
		err = dev_rec_inject(rec, &f, DEV_REC_NOW);
	return err ? err : dev_rec_trace_error(t);
}

int dev_rec_trace_error(const struct dev_rec_trace *t)
{
	struct dev_rec_trace *m = (struct dev_rec_trace *)t;
	int err;

	rt_mutex_lock(&m->t_lock);
	err = m->t_err;
	rt_mutex_unlock(&m->t_lock);
	return err;
}

int dev_rec_trace_close(struct dev_rec_trace *t)
{
	int err;

	if (!t)
		return 0;
	err = t->t_err;
	if (t->t_rec)
		dev_rec_set_sink(t->t_rec, NULL, NULL, false);
	if (fsync(t->t_fd) && !err)
		err = -errno;
	if (close(t->t_fd) && !err)
		err = -errno;
	rt_mutex_release(&t->t_lock);
	free(t);
	return err;
}

/* ---- loading ---------------------------------------------------------- */

/* Exactly len bytes at the file's position; 0, 1 at a clean end of file
 * (nothing read), 2 at a torn end (some read), -errno. */
static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return got ? 2 : 1;
		got += (size_t)n;
	}
	return 0;
}

static int tr_load(int fd, struct dev *rec, struct dev_rec_trace_info *info)
{
	uint8_t head[TR_HEAD], r[TR_REC];
	uint64_t pos = TR_HEAD;
	size_t cap = 0;
	void *data = NULL;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	info->file_bytes = (uint64_t)st.st_size;
	err = read_all(fd, head, sizeof(head));
	if (err)
		return err < 0 ? err : -EINVAL;
	if (memcmp(head, TR_MAGIC, 8))
		return -EINVAL;
	info->size = get64(head + 8);
	info->block_size = (uint32_t)get64(head + 16);
	if (!rec)
		return 0;
	if (dev_rec_count(rec) || dev_size(rec) < info->size)
		return -EINVAL;
	for (;;) {
		struct dev_rec_entry e = { 0 };
		uint64_t kf, dlen, done_before;
		uint64_t *end;

		err = read_all(fd, r, sizeof(r));
		if (err == 1)
			break;
		if (err == 2) {
			info->torn_tail = true;
			break;
		}
		if (err)
			goto out;
		kf = get64(r);
		dlen = get64(r + 16);
		e.kind = (enum dev_rec_kind)(uint32_t)kf;
		e.flags = (uint32_t)(kf >> 32);
		e.off = get64(r + 8);
		e.result = (int64_t)get64(r + 24);
		e.submit_seq = get64(r + 32);
		done_before = get64(r + 40);
		if ((e.kind != DEV_REC_WRITE && e.kind != DEV_REC_FLUSH) ||
		    (e.kind == DEV_REC_FLUSH && dlen) || dlen > UINT32_MAX ||
		    done_before > info->entries) {
			err = -EINVAL;
			goto out;
		}
		if (dlen) {
			uint8_t *nd = realloc(data, dlen);

			if (!nd) {
				err = -ENOMEM;
				goto out;
			}
			data = nd;
			err = read_all(fd, data, dlen);
			if (err == 1 || err == 2) {
				info->torn_tail = true;
				break;
			}
			if (err)
				goto out;
		}
		e.len = (uint32_t)dlen;
		e.data = data;
		err = dev_rec_inject(rec, &e, done_before);
		if (err)
			goto out;
		if (info->entries == cap) {
			cap = cap ? cap * 2 : 1024;
			end = realloc(info->end, cap * sizeof(*end));
			if (!end) {
				err = -ENOMEM;
				goto out;
			}
			info->end = end;
		}
		pos += TR_REC + dlen;
		info->end[info->entries++] = pos;
	}
	err = 0;
out:
	free(data);
	return err;
}

int dev_rec_trace_load(const char *path, struct dev *rec, struct dev_rec_trace_info *info)
{
	int fd, err;

	memset(info, 0, sizeof(*info));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = tr_load(fd, rec, info);
	close(fd);
	if (err) {
		free(info->end);
		info->end = NULL;
	}
	return err;
}

size_t dev_rec_trace_index(const struct dev_rec_trace_info *info, uint64_t bytes)
{
	size_t lo = 0, hi = info->entries;

	/* the first record that ends past bytes */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (info->end[mid] <= bytes)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

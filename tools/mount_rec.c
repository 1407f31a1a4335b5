/*
 * mount_rec.c: `ujbd mount -o record=TRACE`, for the crash-state tests
 * (tests/mount/crashstates.sh, docs/mount.md): the recorder (dev_rec)
 * under the image, its log streamed to TRACE as it is logged.
 *
 * The one idea: the recorder goes where ujbd_open_path opens the image
 * (target_set_wrap), below the block layer, the journal and libext2fs's
 * io_manager, so TRACE holds every write and flush the daemon makes to
 * the image through its device: replay at open, the log, ordered data,
 * checkpoints, the journal superblock. The only writes that bypass that
 * device are ext4's needs_recovery flag, set after the journal opens and
 * cleared once it closes clean, by path and fsync'd (ext4_update_super):
 * each is noted in TRACE as what the superblock then holds, a write and a
 * flush, at the point of the sequence where it happened.
 *
 * Built without libfuse3 too (needs only the library).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "mount.h"
#include "priv/dev_rec.h"
#include "target/target.h"

#define REC_SB_OFF 1024u
#define REC_SB_LEN 1024u

static const char *rec_path;
static struct dev_rec_trace *rec_trace;

static int rec_wrap(void *arg, const char *path, struct dev *inner, struct dev **out)
{
	int rc;

	if (rec_trace)
		return -EOPNOTSUPP; /* one device: an internal journal's image */
	rc = dev_rec_trace_create(rec_path, dev_size(inner), dev_block_size(inner), &rec_trace);
	if (rc)
		return rc;
	rc = dev_rec_new(inner, out);
	if (rc) {
		dev_rec_trace_close(rec_trace);
		rec_trace = NULL;
		return rc;
	}
	dev_rec_trace_attach(rec_trace, *out);
	return 0;
}

void mount_rec_start(const char *trace)
{
	rec_path = trace;
	target_set_wrap(rec_wrap, NULL);
}

/* The ext4 superblock of image as it is now, into the trace. */
static int rec_note_super(const char *image)
{
	unsigned char sb[REC_SB_LEN];
	int fd = open(image, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, sb, sizeof(sb), REC_SB_OFF) != (ssize_t)sizeof(sb))
		rc = -EIO;
	close(fd);
	return rc ? rc : dev_rec_trace_note(rec_trace, REC_SB_OFF, sb, sizeof(sb));
}

int mount_rec_opened(const char *image)
{
	target_set_wrap(NULL, NULL);
	if (!rec_trace)
		return -ENODEV; /* the open never reached the image */
	return rec_note_super(image);
}

int mount_rec_end(const char *image, bool clean)
{
	int rc = 0, rc2;

	target_set_wrap(NULL, NULL);
	if (!rec_trace)
		return 0;
	if (clean)
		rc = rec_note_super(image);
	rc2 = dev_rec_trace_close(rec_trace);
	rec_trace = NULL;
	return rc ? rc : rc2;
}

/*
 * libFuzzer target: superblock parsing, log scan (what `ujbd dump` shows)
 * and recovery of an in-memory journal.
 *
 * Input: one mode byte, then the journal from journal block 0 (its jbd2
 * superblock) on. Only a prefix need be given: the journal device is
 * s_maxlen blocks (capped) of zeros with the input laid over its start,
 * so a seed of a dozen blocks stands for a 1024-block journal.
 *
 * Mode byte:
 *   bit 0  fix checksums first: recompute the superblock checksum and, for
 *          every log block the walk from s_start reaches, the descriptor and
 *          revoke tails, the data tag checksums and the commit checksum
 *          (crc32c for v2/v3, the running crc32_be for COMPAT_CHECKSUM), so
 *          that mutations get past the checksums into the parsers;
 *   bit 1  map the journal through two extents, in reverse device order
 *          (as an internal journal split in an ext4 image), not the identity;
 *   bit 2  recover with dry_run.
 *
 * Beyond "no crash, no sanitizer report", the target checks two properties
 * of recovery and aborts if they fail: a failed recovery wrote nothing to
 * the data device, and after a successful (non-dry) recovery the journal
 * loads again and is empty (s_start 0).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ujbd/dev.h"
#include "ujbd/format.h"
#include "ujbd/jbd_log.h"

#define FZ_MAX_JOURNAL_BYTES (4u << 20) /* journal device cap */
#define FZ_DATA_BYTES (8u << 20)        /* data device (seeds: 8 MiB images) */
#define FZ_MODE_FIXCSUM 0x1u
#define FZ_MODE_SPLIT 0x2u
#define FZ_MODE_DRYRUN 0x4u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t fz_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void fz_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void fz_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v;
}

/* ---- checksum fixing ------------------------------------------------------ */

struct fz_img {
	uint8_t *buf;     /* the whole journal, flat */
	uint32_t bs;
	uint32_t nblocks; /* journal length */
	struct jbd_fmt fmt;
	uint32_t first, last;
};

static uint8_t *fz_block(struct fz_img *im, uint32_t b)
{
	return im->buf + (size_t)b * im->bs;
}

static uint32_t fz_next(const struct fz_img *im, uint32_t b)
{
	b++;
	return b >= im->last ? im->first : b;
}

/* Set the tag checksums of a descriptor at blk for tid (data blocks follow
 * it) and its tail; returns the block after its last data block, and folds
 * the descriptor and data into *v1 for COMPAT_CHECKSUM. */
static uint32_t fz_fix_desc(struct fz_img *im, uint32_t blk, uint32_t tid, uint32_t *v1)
{
	const struct jbd_fmt *f = &im->fmt;
	uint8_t *d = fz_block(im, blk);
	uint32_t size = im->bs - f->f_tail_bytes, p = 12, next = fz_next(im, blk);
	uint32_t datablk[4096];
	size_t n = 0;

	while (p + f->f_tag_bytes <= size && n < 4096) {
		uint8_t *tag = d + p;
		uint32_t flags = (uint32_t)tag[6] << 8 | tag[7];
		uint8_t *data = fz_block(im, next);

		datablk[n++] = next;
		if (f->f_v3)
			fz_put_be32(tag + 12, jbd_tag_csum(f, tid, data));
		else if (f->f_csum_v23)
			fz_put_be16(tag + 4, (uint16_t)jbd_tag_csum(f, tid, data));
		next = fz_next(im, next);
		p += f->f_tag_bytes + ((flags & JBD2_FLAG_SAME_UUID) ? 0 : 16);
		if (flags & JBD2_FLAG_LAST_TAG)
			break;
	}
	if (f->f_csum_v23)
		jbd_tail_csum_set(f, d);
	if (f->f_csum_v1) {
		*v1 = jbd_crc32_be(*v1, d, im->bs);
		for (size_t i = 0; i < n; i++)
			*v1 = jbd_crc32_be(*v1, fz_block(im, datablk[i]), im->bs);
	}
	return next;
}

static void fz_fix_commit(struct fz_img *im, uint8_t *c, uint32_t v1)
{
	const struct jbd_fmt *f = &im->fmt;

	if (f->f_csum_v23) {
		fz_put_be32(c + 16, 0);
		fz_put_be32(c + 16, jbd_commit_csum(f, c));
	} else if (f->f_csum_v1) {
		c[12] = JBD2_CRC32_CHKSUM;
		c[13] = JBD2_CRC32_CHKSUM_SIZE;
		fz_put_be32(c + 16, v1);
	}
}

/* Walk the log from s_start as a scan would (one lap at most), fixing every
 * checksum on the way, then the superblock's. */
static void fz_fix_checksums(struct fz_img *im)
{
	struct jbd2_sb *sb = (struct jbd2_sb *)im->buf;
	uint32_t blk = fz_be32(im->buf + 0x1C), tid = fz_be32(im->buf + 0x18);
	uint32_t v1 = 0xFFFFFFFFu, steps = 0;

	jbd_fmt_from_sb(sb, &im->fmt);
	im->first = fz_be32(im->buf + 0x14);
	im->last = fz_be32(im->buf + 0x10);
	if (im->last > im->nblocks)
		im->last = im->nblocks;
	if (im->fmt.f_blocksize != im->bs || im->fmt.f_tag_bytes == 0 || im->first == 0 ||
	    im->first >= im->last || blk < im->first || blk >= im->last)
		goto sb;
	while (steps++ < im->last - im->first) {
		uint8_t *b = fz_block(im, blk);
		uint32_t type, seq;

		if (!jbd_hdr_decode(b, &type, &seq) || seq != tid)
			break;
		if (type == JBD2_DESCRIPTOR_BLOCK) {
			blk = fz_fix_desc(im, blk, tid, &v1);
			continue;
		}
		if (type == JBD2_REVOKE_BLOCK && im->fmt.f_csum_v23)
			jbd_tail_csum_set(&im->fmt, b);
		else if (type == JBD2_COMMIT_BLOCK) {
			fz_fix_commit(im, b, v1);
			v1 = 0xFFFFFFFFu;
			tid++;
		} else if (type != JBD2_REVOKE_BLOCK)
			break;
		blk = fz_next(im, blk);
	}
sb:
	jbd_sb_csum_set(sb);
}

/* ---- the in-memory journal ------------------------------------------------ */

struct fz_rig {
	struct dev *jdev, *ddev;
	struct jbd_extent map[2];
	struct jbd_loc loc;
};

static int fz_rig_open(struct fz_rig *r, const struct fz_img *im, bool split)
{
	uint64_t jbytes = (uint64_t)im->nblocks * im->bs;
	uint32_t h = im->nblocks / 2;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = dev_mem_new(jbytes, 512, &r->jdev);
	if (!rc)
		rc = dev_mem_new(FZ_DATA_BYTES, 512, &r->ddev);
	if (rc)
		return rc;
	if (split && h > 0) {
		/* journal [0, h) at the end of the device, [h, n) at its start */
		r->map[0] = (struct jbd_extent){ .lblk = 0, .pblk = im->nblocks - h, .len = h };
		r->map[1] = (struct jbd_extent){ .lblk = h, .pblk = 0, .len = im->nblocks - h };
		rc = dev_pwrite(r->jdev, im->buf, h * im->bs, (uint64_t)(im->nblocks - h) * im->bs, 0);
		if (!rc)
			rc = dev_pwrite(r->jdev, im->buf + (size_t)h * im->bs,
					(im->nblocks - h) * im->bs, 0, 0);
	} else {
		split = false;
		r->map[0] = (struct jbd_extent){ .lblk = 0, .pblk = 0, .len = im->nblocks };
		rc = dev_pwrite(r->jdev, im->buf, (uint32_t)jbytes, 0, 0);
	}
	r->loc = (struct jbd_loc){ .j_dev = r->jdev, .j_blocksize = im->bs, .j_map = r->map,
				   .j_nmap = split ? 2 : 1, .j_len = im->nblocks, .j_sb_block = 0,
				   .j_data = r->ddev, .j_data_blocks = FZ_DATA_BYTES / im->bs };
	return rc;
}

static void fz_rig_close(struct fz_rig *r)
{
	if (r->jdev)
		dev_close(r->jdev);
	if (r->ddev)
		dev_close(r->ddev);
}

/* Whether the data device is still all zeros where tags could point: we
 * only look at the blocks the scan listed (a full 32 MiB compare per input
 * would dominate the run time). */
static bool fz_data_untouched(struct fz_rig *r, const struct jbd_scan *sc, uint32_t bs)
{
	static uint8_t buf[65536], zero[65536];

	for (size_t t = 0; t < sc->sc_ntrans; t++)
		for (size_t i = 0; i < sc->sc_trans[t].ntags; i++) {
			uint64_t tg = sc->sc_trans[t].tags[i].target;

			if (tg >= FZ_DATA_BYTES / bs)
				continue;
			if (dev_pread(r->ddev, buf, bs, tg * bs) || memcmp(buf, zero, bs))
				return false;
		}
	return true;
}

static void fz_run(struct fz_rig *r, const struct fz_img *im, unsigned mode)
{
	struct jbd_recover_opts ro = { .dry_run = (mode & FZ_MODE_DRYRUN) != 0 };
	struct jbd_recover_result res;
	struct jbd_journal j, j2;
	struct jbd_scan sc;
	struct jbd_err err;
	int rc;

	memset(&err, 0, sizeof(err));
	if (jbd_journal_load(&r->loc, &j, &err))
		return;
	memset(&sc, 0, sizeof(sc));
	(void)jbd_scan_log(&j, &sc, &err);
	(void)jbd_scan_stop_name(sc.sc_stop);
	memset(&res, 0, sizeof(res));
	rc = jbd_recover(&j, &ro, &res, &err);
	if (((rc && rc != -EBADMSG) || ro.dry_run) && !fz_data_untouched(r, &sc, im->bs)) {
		fprintf(stderr, "recovery (%d: %s, dry run %d) wrote the data device\n", rc,
			err.msg, ro.dry_run);
		abort();
	}
	jbd_scan_release(&sc);
	if ((rc == 0 || rc == -EBADMSG) && !ro.dry_run) {
		if (jbd_journal_load(&r->loc, &j2, &err) != 0) {
			fprintf(stderr, "journal does not load after recovery: %s\n", err.msg);
			abort();
		}
		if (fz_be32((const uint8_t *)&j2.j_sb + 0x1C) != 0) {
			fprintf(stderr, "s_start not 0 after recovery\n");
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_img im = { 0 };
	struct fz_rig rig;
	unsigned mode;
	uint64_t maxlen, need;

	if (size < 1 + JBD2_SB_SIZE)
		return 0;
	mode = data[0];
	data++, size--;
	im.bs = fz_be32(data + 0x0C);
	if (im.bs < JBD2_MIN_BLOCKSIZE || im.bs > JBD2_MAX_BLOCKSIZE || (im.bs & (im.bs - 1)))
		im.bs = JBD2_MIN_BLOCKSIZE; /* load will reject the sb; still parse */
	maxlen = fz_be32(data + 0x10);
	need = (size + im.bs - 1) / im.bs;
	if (maxlen < need)
		maxlen = need;
	if (maxlen * im.bs > FZ_MAX_JOURNAL_BYTES)
		maxlen = FZ_MAX_JOURNAL_BYTES / im.bs;
	if (maxlen < need)
		return 0; /* input larger than the cap */
	im.nblocks = (uint32_t)maxlen;
	im.buf = calloc(im.nblocks, im.bs);
	if (!im.buf)
		return 0;
	memcpy(im.buf, data, size);
	if (mode & FZ_MODE_FIXCSUM)
		fz_fix_checksums(&im);
	if (fz_rig_open(&rig, &im, (mode & FZ_MODE_SPLIT) != 0) == 0)
		fz_run(&rig, &im, mode);
	fz_rig_close(&rig);
	free(im.buf);
	return 0;
}

/*
 * Recovery writes each block once, its last replayable copy, in block
 * order (src/jbd/replay.c); replaying every copy in log order, as e2fsck
 * and the kernel do, must give the same bytes. Here the oracle is that
 * rule itself, kept by the test from what it wrote: random journals
 * (seeded) in every tag format and checksum kind, with and without async
 * commit, scattered over their device in small extents (reads split at
 * every extent), with blocks written many times, revoked and written
 * again, escaped blocks, bad data checksums, runs of consecutive blocks
 * (written straight from the log's memory) and scattered ones (gathered),
 * several rounds so that the log wraps, and hold budgets from none (every
 * copy read again) to the whole log. After each recovery the data device
 * must hold, block for block, what the oracle says, with the same counts.
 */
#include <errno.h>

#include "t.h"
#include "ujbd/jbd_log.h"
#include "ujbd/rt.h"

#define DATA_BLOCKS 300u
#define MAX_TXN 700u
#define MAX_REV 12u
#define JDEV_SLACK 320u /* device blocks the scattered map leaves unused (gaps) */

struct copy {
	uint64_t target;
	uint32_t id;           /* contents: gen(id, esc); 0 = zeros */
	bool esc;              /* starts with the jbd2 magic: escaped in the log */
	bool bad;              /* its log copy was damaged */
};

struct txn_model {
	struct copy c[MAX_TXN];
	size_t n;
	uint64_t rev[MAX_REV];
	size_t nrev;
};

struct rig {
	struct rt_prng prng;
	struct dev *jdev, *ddev;
	struct jbd_extent map[256];
	struct jbd_loc loc;
	struct jbd_journal j;
	uint32_t bs, len;
	bool csum_data, async;    /* v2/v3: data checksums; async commit */
	uint32_t data_id[DATA_BLOCKS];  /* the oracle's data device */
	bool data_esc[DATA_BLOCKS];
	uint32_t next_id;
	struct txn_model t[8];
	size_t nt;
	uint8_t *buf;
};

static uint64_t rnd(struct rig *r, uint64_t n) { return rt_prng_below(&r->prng, n); }

/* The contents of copy id: pseudo-random bytes, the magic first if esc. */
static void gen(uint32_t id, bool esc, uint8_t *buf, uint32_t bs)
{
	uint64_t x = id * 0x9E3779B97F4A7C15ull;

	if (!id) {
		memset(buf, 0, bs);
		return;
	}
	for (uint32_t i = 0; i < bs; i += 8) {
		x ^= x >> 29;
		x *= 0xBF58476D1CE4E5B9ull;
		x ^= x >> 32;
		memcpy(buf + i, &x, 8);
	}
	if (esc) { /* the magic, big-endian */
		buf[0] = JBD2_MAGIC >> 24;
		buf[1] = (JBD2_MAGIC >> 16) & 0xFF;
		buf[2] = (JBD2_MAGIC >> 8) & 0xFF;
		buf[3] = JBD2_MAGIC & 0xFF;
	}
}

/* A journal of len blocks laid over jdev in extents of 1..40 blocks, in
 * shuffled order, so that no two neighbours in the log are neighbours on
 * the device more than by chance. The count of extents. */
static size_t scatter(struct rig *r)
{
	uint64_t slots = r->len + JDEV_SLACK, lblk = 0;
	size_t n = 0;

	while (lblk < r->len && n < 255) {
		uint64_t len = 1 + rnd(r, 40);
		if (len > r->len - lblk || n == 254)
			len = r->len - lblk;
		r->map[n++] = (struct jbd_extent){ lblk, 0, len };
		lblk += len;
	}
	/* place the extents on the device in a random order, gaps between */
	uint64_t order[256], pblk = rnd(r, JDEV_SLACK / 2);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t k = (size_t)rnd(r, i), tmp = order[i - 1];
		order[i - 1] = order[k];
		order[k] = tmp;
	}
	for (size_t i = 0; i < n; i++) {
		r->map[order[i]].pblk = pblk;
		pblk += r->map[order[i]].len + (rnd(r, 8) == 0);
	}
	return pblk <= slots ? n : 0; /* 0: the device is too small */
}

static int rig_open(struct rig *r, uint64_t seed, uint32_t bs, enum jbd_csum_kind csum,
		    bool is64, bool async)
{
	/* jbd_format refuses async commit without checksums (nothing would
	 * catch a torn transaction), but such a journal, another tool's, is
	 * replayed all the same: the feature is set by hand after the format */
	bool async_by_hand = async && csum == JBD_CSUM_KIND_NONE;
	struct jbd_format_opts o = { .blocksize = bs, .csum = csum, .is64 = is64,
				     .async_commit = async && !async_by_hand,
				     .sequence = 0xFFFFFFF0u };
	struct jbd_err err = { 0 };
	struct dev *scratch = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	rt_prng_init(&r->prng, seed);
	r->bs = bs;
	r->len = 600 + (uint32_t)rnd(r, 1400);
	r->csum_data = csum == JBD_CSUM_KIND_V2 || csum == JBD_CSUM_KIND_V3;
	r->async = async;
	r->next_id = 1;
	o.blocks = r->len;
	for (int i = 0; i < 16; i++)
		o.uuid[i] = (uint8_t)(seed + 7 * i);
	r->buf = malloc(bs);
	size_t nmap = scatter(r);
	rc = nmap ? 0 : -ENOSPC;
	if (!rc)
		rc = dev_mem_new((uint64_t)(r->len + JDEV_SLACK) * bs, 512, &r->jdev);
	if (!rc)
		rc = dev_mem_new((uint64_t)DATA_BLOCKS * bs, 512, &r->ddev);
	if (!rc)
		rc = dev_mem_new((uint64_t)r->len * bs, 512, &scratch);
	if (!rc)
		rc = jbd_format(scratch, &o, &err);
	r->loc = (struct jbd_loc){ .j_dev = r->jdev, .j_blocksize = bs, .j_map = r->map,
				   .j_nmap = nmap, .j_len = r->len, .j_data = r->ddev,
				   .j_data_blocks = DATA_BLOCKS };
	r->j.j_loc = r->loc;
	/* copy the formatted journal through the map, an extent at a time */
	uint8_t *img = malloc((size_t)r->len * bs);
	if (!rc)
		rc = img ? dev_pread(scratch, img, r->len * bs, 0) : -ENOMEM;
	for (size_t i = 0; !rc && i < nmap; i++)
		rc = dev_pwrite(r->jdev, img + r->map[i].lblk * bs, (uint32_t)(r->map[i].len * bs),
				r->map[i].pblk * bs, 0);
	free(img);
	if (scratch)
		dev_close(scratch);
	if (!rc)
		rc = jbd_journal_load(&r->loc, &r->j, &err);
	if (!rc && async_by_hand) {
		jbd_put_be32(&r->j.j_sb.s_feature_incompat,
			     jbd_sb_incompat(&r->j.j_sb) | JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT);
		rc = jbd_journal_write_sb(&r->j, &err);
		if (!rc)
			rc = jbd_journal_load(&r->loc, &r->j, &err);
	}
	if (rc)
		fprintf(stderr, "rig: %d %s\n", rc, err.msg);
	return rc;
}

static void rig_close(struct rig *r)
{
	if (r->jdev)
		dev_close(r->jdev);
	if (r->ddev)
		dev_close(r->ddev);
	free(r->buf);
}

/* A random transaction: runs of consecutive blocks, scattered blocks,
 * blocks again; some escaped; a few revokes. */
static void txn_make(struct rig *r, struct txn_model *t, uint32_t room)
{
	uint32_t want = (uint32_t)rnd(r, room / 4 + 1);

	t->n = 0;
	if (want > MAX_TXN)
		want = MAX_TXN;
	while (t->n < want) {
		uint64_t start = rnd(r, DATA_BLOCKS);
		uint64_t len = rnd(r, 3) ? 1 + rnd(r, 80) : 1;
		for (uint64_t k = 0; k < len && t->n < want; k++) {
			struct copy *c = &t->c[t->n++];
			c->target = (start + k) % DATA_BLOCKS;
			c->id = r->next_id++;
			c->esc = rnd(r, 8) == 0;
			c->bad = false;
		}
	}
	t->nrev = rnd(r, 3) ? 0 : 1 + rnd(r, MAX_REV);
	for (size_t i = 0; i < t->nrev; i++)
		t->rev[i] = rnd(r, DATA_BLOCKS);
}

static int txn_write(struct rig *r, struct txn_model *t, uint64_t sec)
{
	static struct jbd_write_block wb[MAX_TXN];
	static uint8_t data[MAX_TXN][4096];
	struct jbd_txn_desc d = { .blocks = wb, .nblocks = t->n, .revokes = t->rev,
				  .nrevokes = t->nrev, .commit_sec = sec };
	struct jbd_write_result w;
	struct jbd_err err = { 0 };

	for (size_t i = 0; i < t->n; i++) {
		gen(t->c[i].id, t->c[i].esc, data[i], r->bs);
		wb[i] = (struct jbd_write_block){ t->c[i].target, data[i] };
	}
	if (!t->n && !t->nrev)
		return -ENODATA;
	int rc = jbd_write_txn(&r->j, &d, &w, &err);
	if (rc && rc != -ENOSPC)
		fprintf(stderr, "  txn: %s\n", err.msg);
	return rc;
}

/* Damage the log copies of a few tags (v2/v3 without async: the copy is
 * skipped, the rest replayed). The scan says where each copy lies. */
static int damage(struct rig *r)
{
	struct jbd_scan sc;
	struct jbd_err err;
	int rc = jbd_scan_log(&r->j, &sc, &err);

	if (rc)
		return rc;
	for (size_t i = 0; i < r->nt && i < sc.sc_ntrans && !rc; i++) {
		struct txn_model *t = &r->t[i];
		if (sc.sc_trans[i].ntags != t->n)
			rc = -EPROTO;
		for (size_t k = 0; k < t->n && !rc; k++) {
			const struct jbd_scan_tag *tag = &sc.sc_trans[i].tags[k];
			if (tag->target != t->c[k].target)
				rc = -EPROTO;
			else if (rnd(r, 40) == 0 && !rc) {
				t->c[k].bad = true;
				rc = jbd_journal_read(&r->j, tag->journal_block, r->buf);
				r->buf[r->bs / 2] ^= 0x5A;
				if (!rc)
					rc = jbd_journal_write(&r->j, tag->journal_block, r->buf);
			}
		}
	}
	jbd_scan_release(&sc);
	return rc;
}

struct expect {
	uint64_t replayed, revoked, bad, written;
};

/* Replay every copy in log order, as e2fsck does: a copy is skipped when
 * revoked by its own or a later transaction, or damaged. */
static void oracle(struct rig *r, struct expect *e)
{
	bool written[DATA_BLOCKS] = { false };

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < r->nt; i++) {
		const struct txn_model *t = &r->t[i];
		for (size_t k = 0; k < t->n; k++) {
			const struct copy *c = &t->c[k];
			bool revoked = false;
			for (size_t l = i; l < r->nt && !revoked; l++)
				for (size_t v = 0; v < r->t[l].nrev; v++)
					revoked |= r->t[l].rev[v] == c->target;
			if (revoked) {
				e->revoked++;
			} else if (c->bad) {
				e->bad++;
			} else {
				e->replayed++;
				r->data_id[c->target] = c->id;
				r->data_esc[c->target] = c->esc;
				e->written += !written[c->target];
				written[c->target] = true;
			}
		}
	}
}

/* The data device holds what the oracle says; index of the first block
 * that does not, or -1. */
static int64_t first_wrong(struct rig *r)
{
	static uint8_t want[4096], have[DATA_BLOCKS * 4096];

	if (dev_pread(r->ddev, have, DATA_BLOCKS * r->bs, 0))
		return 0;
	for (uint64_t b = 0; b < DATA_BLOCKS; b++) {
		gen(r->data_id[b], r->data_esc[b], want, r->bs);
		if (memcmp(want, have + b * r->bs, r->bs))
			return (int64_t)b;
	}
	return -1;
}

/* Transactions until the log is about full (or 8). */
static int round_write(struct rig *r, uint64_t sec)
{
	r->nt = 0;
	while (r->nt < 8) {
		struct txn_model *t = &r->t[r->nt];
		txn_make(r, t, r->len);
		int rc = txn_write(r, t, sec + r->nt);
		if (rc == -ENOSPC || rc == -ENODATA)
			return r->nt ? 0 : rc == -ENODATA ? 0 : rc;
		if (rc)
			return rc;
		r->nt++;
		if (jbd_journal_load(&r->loc, &r->j, NULL))
			return -EIO;
	}
	return 0;
}

/* The hold budget of round k: the whole log, nothing, or a few chunks. */
static uint64_t budget(struct rig *r)
{
	switch (rnd(r, 3)) {
	case 0: return 0;
	case 1: return 1;
	default: return (1 + rnd(r, 3)) * r->bs * (64 + rnd(r, 512));
	}
}

/* The progress callback's calls: never backwards, within the total, and
 * the last with done == total == the blocks written. */
struct prog {
	uint64_t calls, last, total;
	bool bad;
};

static void prog_fn(void *arg, uint64_t done, uint64_t total)
{
	struct prog *p = arg;

	if (done < p->last || done > total || (p->calls && total != p->total))
		p->bad = true;
	p->calls++;
	p->last = done;
	p->total = total;
}

static void check_config(uint64_t seed, uint32_t bs, enum jbd_csum_kind csum, bool is64,
			 bool async)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };
	struct expect e;

	T_EQ(rig_open(&r, seed, bs, csum, is64, async), 0);
	for (int round = 0; round < 4; round++) {
		T_EQ(round_write(&r, 100 * (uint64_t)(round + 1)), 0);
		if (r.csum_data && !r.async)
			T_EQ(damage(&r), 0);
		oracle(&r, &e);
		struct prog pg = { 0 };
		struct jbd_recover_opts o = { .hold_max = budget(&r), .progress = prog_fn,
					      .progress_arg = &pg };
		int rc = jbd_recover(&r.j, &o, &res, &err);
		T_EQ(rc, e.bad ? -EBADMSG : 0);
		T_CHECK(!pg.bad && pg.calls >= 2);
		T_EQ(pg.last, res.written_blocks);
		T_EQ(pg.total, res.written_blocks);
		T_EQ(res.replayed_transactions, r.nt);
		T_EQ(res.replayed_blocks, e.replayed);
		T_EQ(res.revoked_blocks, e.revoked);
		T_EQ(res.bad_csum_blocks, e.bad);
		T_EQ(res.written_blocks, e.written);
		int64_t wrong = first_wrong(&r);
		if (wrong >= 0)
			T_FAILF("seed %" PRIu64 " bs %u csum %d 64bit %d async %d round %d hold %" PRIu64
				": block %" PRId64 " is not the oracle's",
				seed, bs, (int)csum, is64, async, round, o.hold_max, wrong);
		T_CHECK(wrong < 0);
		T_EQ(jbd_journal_load(&r.loc, &r.j, &err), 0);
		T_EQ(jbd_get_be32(r.j.j_sb.s_start), 0);
		if (e.bad) { /* as e2fsck: replayed, s_errno set; clear it for the next round */
			jbd_put_be32(&r.j.j_sb.s_errno, 0);
			T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
		}
	}
	rig_close(&r);
}

static void test_every_format(void)
{
	static const enum jbd_csum_kind kinds[] = { JBD_CSUM_KIND_NONE, JBD_CSUM_KIND_V1,
						    JBD_CSUM_KIND_V2, JBD_CSUM_KIND_V3 };
	uint64_t seed = 1;

	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 4; k++)
			for (int is64 = 0; is64 < 2; is64++)
				for (int async = 0; async < 2; async++)
				{
					check_config(seed++, b ? 4096 : 1024, kinds[k], is64, async);
					if (t_cur_failed)
						return;
				}
}

/* The journal device of r, behind fault injection from here on. */
static int wrap_faults(struct rig *r, const struct dev_fault_opts *fo)
{
	struct dev *f;
	int rc = dev_fault_new(r->jdev, fo, &f);

	if (rc)
		return rc;
	r->jdev = r->loc.j_dev = f;
	return jbd_journal_load(&r->loc, &r->j, NULL);
}

/*
 * Read errors meet the scan where it needs the block, as when it read one
 * block at a time: a chunk that fails is read again block by block (a
 * one-off error costs nothing), a block that cannot be read stops the scan
 * before anything is written, and an error in what was read ahead past the
 * end of the log is no error at all.
 */
static void test_read_errors(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };
	struct expect e;
	struct dev_fault_opts once = { .fail_read_nth = 2 };  /* 1: the superblock */
	struct dev_fault_opts always = { .fail_read_nth = 3, .sticky = true };

	/* a one-off error in the first chunk: read again, all replayed */
	T_EQ(rig_open(&r, 77, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	T_EQ(round_write(&r, 100), 0);
	T_CHECK(r.nt >= 2);
	oracle(&r, &e);
	T_EQ(wrap_faults(&r, &once), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), 0);
	T_EQ(res.written_blocks, e.written);
	T_EQ(first_wrong(&r), -1);
	struct dev_fault_counts fc;
	dev_fault_counts(r.jdev, &fc);
	T_EQ(fc.read_errors, 1);
	rig_close(&r);

	/* every read after the first chunk fails: the scan stops at the first
	 * block it cannot read, nothing written */
	T_EQ(rig_open(&r, 78, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	T_EQ(round_write(&r, 100), 0);
	T_EQ(wrap_faults(&r, &always), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot read journal block"));
	memset(r.data_id, 0, sizeof(r.data_id));
	T_EQ(first_wrong(&r), -1);
	rig_close(&r);

	/* a log that ends in the first chunk: what fails past it is unread */
	T_EQ(rig_open(&r, 79, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	uint32_t want = 20;
	r.nt = 1;
	txn_make(&r, &r.t[0], 4 * want);
	r.t[0].n = r.t[0].n > want ? want : r.t[0].n;
	T_EQ(txn_write(&r, &r.t[0], 100), 0);
	oracle(&r, &e);
	T_EQ(wrap_faults(&r, &always), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), 0);
	T_CHECK(res.log_reads > 1); /* it did read ahead */
	T_EQ(res.written_blocks, e.written);
	T_EQ(first_wrong(&r), -1);
	rig_close(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_every_format);
	T_RUN(test_read_errors);
	return t_done(argv[0]);
}

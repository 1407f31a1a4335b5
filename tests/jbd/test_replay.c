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
#include "priv/rt.h"

#include "alloc_fault.h"
#include "log_async.h"

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

/* A journal laid flat: one extent from device block 0, `len` blocks of
 * log (s_maxlen) in a file of `file_len` >= len (a standalone journal
 * shorter than its file). */
struct shape {
	uint32_t len, file_len;
};

static size_t flat(struct rig *r, const struct shape *sh)
{
	r->map[0] = (struct jbd_extent){ 0, 0, sh->file_len };
	return 1;
}

/* The rig's journal: scattered over its device, or flat as sh says. */
static int rig_open_as(struct rig *r, uint64_t seed, uint32_t bs, enum jbd_csum_kind csum,
		       bool is64, bool async, const struct shape *sh)
{
	bool async_by_hand = log_async_needs_hand(async, csum); /* log_async.h */
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
	if (sh)
		r->len = sh->len;
	uint32_t file_len = sh ? sh->file_len : r->len;
	o.blocks = r->len;
	for (int i = 0; i < 16; i++)
		o.uuid[i] = (uint8_t)(seed + 7 * i);
	r->buf = malloc(bs);
	size_t nmap = sh ? flat(r, sh) : scatter(r);
	rc = nmap ? 0 : -ENOSPC;
	if (!rc)
		rc = dev_mem_new((uint64_t)(file_len + JDEV_SLACK) * bs, 512, &r->jdev);
	if (!rc)
		rc = dev_mem_new((uint64_t)DATA_BLOCKS * bs, 512, &r->ddev);
	if (!rc)
		rc = dev_mem_new((uint64_t)r->len * bs, 512, &scratch);
	if (!rc)
		rc = jbd_format(scratch, &o, &err);
	r->loc = (struct jbd_loc){ .j_dev = r->jdev, .j_blocksize = bs, .j_map = r->map,
				   .j_nmap = nmap, .j_len = file_len, .j_data = r->ddev,
				   .j_data_blocks = DATA_BLOCKS };
	r->j.j_loc = r->loc;
	/* copy the formatted journal through the map, an extent at a time */
	uint8_t *img = calloc(file_len, bs);
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
	if (!rc && async_by_hand)
		rc = log_async_by_hand(&r->loc, &r->j, &err);
	if (rc)
		fprintf(stderr, "rig: %d %s\n", rc, err.msg);
	return rc;
}

static int rig_open(struct rig *r, uint64_t seed, uint32_t bs, enum jbd_csum_kind csum,
		    bool is64, bool async)
{
	return rig_open_as(r, seed, bs, csum, is64, async, NULL);
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

static void check_shape(uint64_t seed, uint32_t bs, enum jbd_csum_kind csum, bool is64,
			bool async, const struct shape *sh)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };
	struct expect e;

	T_EQ(rig_open_as(&r, seed, bs, csum, is64, async, sh), 0);
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

static void check_config(uint64_t seed, uint32_t bs, enum jbd_csum_kind csum, bool is64,
			 bool async)
{
	check_shape(seed, bs, csum, is64, async, NULL);
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

/*
 * The log reader's chunks where the journal's shape cuts them: a log
 * shorter than its file (s_maxlen below the extent), so that the read
 * ahead that reaches the end of the log stops there although the extent
 * goes on, in every round as the log wraps; and a journal of 20 MiB, whose
 * read ahead fills the first window (16 MiB) with reads grown to full
 * chunks (2 MiB) before the scan has finished one.
 */
static void test_journal_shapes(void)
{
	static const struct shape shorter = { 700, 900 }, large = { 20480, 20480 };

	check_shape(101, 1024, JBD_CSUM_KIND_V3, true, false, &shorter);
	check_shape(102, 4096, JBD_CSUM_KIND_NONE, false, false, &shorter);
	check_shape(103, 1024, JBD_CSUM_KIND_V3, true, false, &large);
}

/* One transaction writing targets[0..n) (distinct contents, none escaped),
 * the oracle's only one. */
static int txn_of(struct rig *r, const uint64_t *targets, size_t n)
{
	struct txn_model *t = &r->t[0];

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++)
		t->c[t->n++] = (struct copy){ .target = targets[i], .id = r->next_id++ };
	r->nt = 1;
	return txn_write(r, t, 100);
}

/* A flat rig (log blocks lie one after the other in memory when held)
 * holding one transaction of targets[0..n); e gets its oracle. */
static int rig_txn(struct rig *r, uint64_t seed, const uint64_t *targets, size_t n,
		   struct expect *e)
{
	static const struct shape sh = { 700, 700 };
	int rc = rig_open_as(r, seed, 1024, JBD_CSUM_KIND_V3, true, false, &sh);

	if (!rc)
		rc = txn_of(r, targets, n);
	if (!rc)
		rc = jbd_journal_load(&r->loc, &r->j, NULL);
	oracle(r, e);
	return rc;
}

/* The data device of r: `blocks` long (fewer than DATA_BLOCKS: a data
 * device shorter than the file system says, whose writes past its end fail
 * when sent), behind faults fo. */
static int data_faults(struct rig *r, uint64_t blocks, const struct dev_fault_opts *fo)
{
	struct dev *m, *f;
	int rc = dev_mem_new(blocks * r->bs, 512, &m);

	if (rc)
		return rc;
	rc = dev_fault_new(m, fo, &f);
	if (rc) {
		dev_close(m);
		return rc;
	}
	dev_close(r->ddev);
	r->ddev = r->loc.j_data = f;
	return jbd_journal_load(&r->loc, &r->j, NULL);
}

/* After a failed recovery: the journal still holds its log, and a recovery
 * onto a sound data device gives the faultless result. */
static void recover_again(struct rig *r, const struct expect *e)
{
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };
	struct dev_fault_opts none = { 0 };

	T_EQ(data_faults(r, DATA_BLOCKS, &none), 0);
	T_CHECK(jbd_get_be32(r->j.j_sb.s_start) != 0);
	T_EQ(jbd_recover(&r->j, NULL, &res, &err), 0);
	T_EQ(res.written_blocks, e->written);
	T_EQ(first_wrong(r), -1);
}

/*
 * Home writes that fail (replay.c): the first failure is the one reported,
 * by block, whatever fails after it (a write reaped when its slot comes
 * round again, the writes still in flight, a write that cannot even be
 * sent because the data device is shorter than the file system says, a
 * write cut short), and the journal keeps its log: recovering onto a sound
 * device afterwards gives the faultless result.
 *
 * Sixteen scattered blocks fill the JBD_REPLAY_DEPTH slots with one
 * gathered write each; what comes next reuses the first slot.
 */
static void test_write_errors(void)
{
	uint64_t t[80];
	size_t n = 0;
	struct rig r;
	struct expect e;
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };

	for (uint64_t b = 1; b < 33; b += 2)
		t[n++] = b;
	size_t scattered = n;

	/* every write fails: the 17th gather reaps the first one's error,
	 * and the rest fail after it */
	struct dev_fault_opts all = { .fail_write_nth = 1, .sticky = true };
	t[n++] = 100;
	T_EQ(rig_txn(&r, 201, t, n, &e), 0);
	T_EQ(data_faults(&r, DATA_BLOCKS, &all), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot write data block 1:") != NULL);
	recover_again(&r, &e);
	rig_close(&r);

	/* the first write fails; its slot comes round for a direct write
	 * (40 consecutive blocks held) past the device's end, which cannot be
	 * sent: still the first error is reported */
	struct dev_fault_opts first = { .fail_write_nth = 1 };
	n = scattered;
	for (uint64_t b = 220; b < 260; b++)
		t[n++] = b;
	T_EQ(rig_txn(&r, 202, t, n, &e), 0);
	T_EQ(data_faults(&r, 150, &first), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot write data block 1:") != NULL);
	recover_again(&r, &e);
	rig_close(&r);

	/* a gathered write past the device's end, sent when a direct write
	 * follows: -EINVAL from the submission, the direct write not sent */
	struct dev_fault_opts none = { 0 };
	n = scattered;
	t[n++] = 200;
	for (uint64_t b = 220; b < 260; b++)
		t[n++] = b;
	T_EQ(rig_txn(&r, 203, t, n, &e), 0);
	T_EQ(data_faults(&r, 150, &none), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "cannot write data block 200:") != NULL);
	recover_again(&r, &e);
	rig_close(&r);

	/* the same, sent when the next gather starts */
	n = scattered;
	t[n++] = 200;
	t[n++] = 202;
	T_EQ(rig_txn(&r, 204, t, n, &e), 0);
	T_EQ(data_faults(&r, 150, &none), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EINVAL);
	T_CHECK(strstr(err.msg, "cannot write data block 200:") != NULL);
	recover_again(&r, &e);
	rig_close(&r);

	/* the first write (blocks 1..5, gathered) is cut short: -EIO */
	struct dev_fault_opts cut = { .short_write_nth = 1 };
	n = 0;
	for (uint64_t b = 1; b <= 5; b++)
		t[n++] = b;
	t[n++] = 40;
	T_EQ(rig_txn(&r, 205, t, n, &e), 0);
	T_EQ(data_faults(&r, DATA_BLOCKS, &cut), 0);
	T_EQ(jbd_recover(&r.j, NULL, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot write data block 1: Input/output error") != NULL);
	recover_again(&r, &e);
	rig_close(&r);
}

/* The journal's reads so far, at the first call of progress (the home
 * writes are about to start); or, with corrupt, every log block damaged
 * there instead (the journal changes under recovery). */
struct at_writes {
	struct rig *r;
	bool corrupt, seen;
	uint64_t reads;
};

static void at_writes_fn(void *arg, uint64_t done, uint64_t total)
{
	struct at_writes *a = arg;
	struct dev_fault_counts fc;

	(void)done;
	(void)total;
	if (a->seen)
		return;
	a->seen = true;
	if (!a->corrupt) {
		dev_fault_counts(a->r->jdev, &fc);
		a->reads = fc.reads;
		return;
	}
	for (uint32_t b = a->r->j.j_first; b < a->r->j.j_last; b++)
		if (!jbd_journal_read(&a->r->j, b, a->r->buf)) {
			a->r->buf[a->r->bs / 2] ^= 0x5A;
			(void)jbd_journal_write(&a->r->j, b, a->r->buf);
		}
}

/*
 * A copy the log reader did not keep (a budget of one byte: none) is read
 * again for its write, and checked again. Its read failing, or its bytes
 * no longer those the scan checked, stops recovery before any write.
 */
static void test_read_again_errors(void)
{
	struct rig r;
	struct expect e;
	struct jbd_recover_result res;
	struct jbd_err err = { 0 };
	struct dev_fault_opts none = { 0 };
	struct at_writes a = { .r = &r };
	struct jbd_recover_opts o = { .hold_max = 1, .progress = at_writes_fn,
				      .progress_arg = &a };

	/* count the reads before the writes... */
	T_EQ(rig_open(&r, 301, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	T_EQ(round_write(&r, 100), 0);
	oracle(&r, &e);
	T_EQ(wrap_faults(&r, &none), 0);
	T_EQ(jbd_recover(&r.j, &o, &res, &err), 0);
	T_EQ(first_wrong(&r), -1);
	T_CHECK(a.seen && a.reads > 0);
	rig_close(&r);

	/* ...and fail every one after them: the first read again */
	struct dev_fault_opts after = { .fail_read_nth = a.reads + 1, .sticky = true };
	a = (struct at_writes){ .r = &r };
	T_EQ(rig_open(&r, 301, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	T_EQ(round_write(&r, 100), 0);
	T_EQ(wrap_faults(&r, &after), 0);
	T_EQ(jbd_recover(&r.j, &o, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "cannot read journal block") != NULL);
	memset(r.data_id, 0, sizeof(r.data_id));
	T_EQ(first_wrong(&r), -1);
	rig_close(&r);

	/* the log damaged between the scan and the writes */
	a = (struct at_writes){ .r = &r, .corrupt = true };
	T_EQ(rig_open(&r, 302, 1024, JBD_CSUM_KIND_V3, true, false), 0);
	T_EQ(round_write(&r, 100), 0);
	T_EQ(jbd_recover(&r.j, &o, &res, &err), -EIO);
	T_CHECK(strstr(err.msg, "changed since it was checked") != NULL);
	T_EQ(first_wrong(&r), -1);
	rig_close(&r);
}

/*
 * Memory running out during a recovery whose log is longer than the
 * reader's first chunk: the Nth allocation fails, for every N until none
 * does; once alone, then with every later one; and then the same counting
 * only the large ones (the reader's chunks, the staging buffers), so that
 * the scan's own small allocations go on. A failure is -ENOMEM with a
 * message and leaves a journal whose recovery gives the faultless result,
 * except a failed read ahead while an earlier chunk is still ahead, which
 * is no error (the reader tries again as the scan goes; when every later
 * chunk fails too, the scan meets the error where it has used up what was
 * read). Skipped under a sanitizer, which owns the allocator.
 */
static void test_alloc_failures(void)
{
	static const struct { bool sticky; size_t min_bytes; } modes[] = {
		{ false, 0 }, { true, 0 }, { true, 64u << 10 },
	};
	uint64_t t[200];
	struct rig r;
	struct expect e;
	struct jbd_recover_result res;
	struct jbd_err err;
	long tolerated = 0, failed = 0;

	if (!HAVE_ALLOC_FAULTS)
		T_SKIP("a sanitizer owns the allocator");
	for (size_t i = 0; i < 200; i++)
		t[i] = (7 * i) % DATA_BLOCKS;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (long nth = 1; nth < 1000; nth++) {
			T_EQ(rig_txn(&r, 401, t, 200, &e), 0);
			memset(&err, 0, sizeof(err));
			alloc_fault_arm_from(nth, modes[m].sticky, modes[m].min_bytes);
			int rc = jbd_recover(&r.j, NULL, &res, &err);
			long fired = alloc_fault_disarm();
			if (!fired) {
				T_EQ(rc, 0);
				T_EQ(first_wrong(&r), -1);
				rig_close(&r);
				break;
			}
			if (rc == 0) {
				tolerated++;
				T_EQ(first_wrong(&r), -1);
			} else {
				failed++;
				T_EQ(rc, -ENOMEM);
				T_CHECK(err.msg[0] != 0);
				recover_again(&r, &e);
			}
			rig_close(&r);
			if (t_cur_failed)
				return;
		}
	}
	fprintf(stderr, "    %ld allocation failures reported, %ld tolerated\n", failed,
		tolerated);
	T_CHECK(tolerated > 0 && failed > 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_every_format);
	T_RUN(test_read_errors);
	T_RUN(test_journal_shapes);
	T_RUN(test_write_errors);
	T_RUN(test_read_again_errors);
	T_RUN(test_alloc_failures);
	return t_done(argv[0]);
}

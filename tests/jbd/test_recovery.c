/*
 * Recovery of in-memory journals (dev_mem) built by the writer: several
 * transactions, revoke ordering, the wrap of the log, the wrap of tids,
 * torn and corrupt transactions, async commit, data checksums, dry run,
 * every tag format.
 */
#include <errno.h>

#include "t.h"
#include "ujbd/jbd_log.h"
#include "ujbd/ujbd.h"

#define DATA_BLOCKS 64u

struct rig {
	struct dev *jdev, *ddev;
	struct jbd_extent ext;
	struct jbd_loc loc;
	struct jbd_journal j;
	uint32_t bs;
};

static int rig_open(struct rig *r, uint32_t bs, uint32_t blocks, enum jbd_csum_kind csum,
		    bool is64, bool async, uint32_t seq)
{
	struct jbd_format_opts o = { .blocksize = bs, .blocks = blocks, .csum = csum,
				     .is64 = is64, .async_commit = async, .sequence = seq };
	struct jbd_err err;
	int rc;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 16; i++)
		o.uuid[i] = (uint8_t)(0x11 * (i / 4 + 1));
	r->bs = bs;
	rc = dev_mem_new((uint64_t)blocks * bs, 512, &r->jdev);
	if (!rc)
		rc = dev_mem_new((uint64_t)DATA_BLOCKS * bs, 512, &r->ddev);
	if (!rc)
		rc = jbd_format(r->jdev, &o, &err);
	r->ext = (struct jbd_extent){ 0, 0, blocks };
	r->loc = (struct jbd_loc){ .j_dev = r->jdev, .j_blocksize = bs, .j_map = &r->ext,
				   .j_nmap = 1, .j_len = blocks, .j_sb_block = 0,
				   .j_data = r->ddev, .j_data_blocks = DATA_BLOCKS };
	if (!rc)
		rc = jbd_journal_load(&r->loc, &r->j, &err);
	if (rc)
		fprintf(stderr, "rig: %s\n", err.msg);
	return rc;
}

static void rig_close(struct rig *r)
{
	if (r->jdev)
		dev_close(r->jdev);
	if (r->ddev)
		dev_close(r->ddev);
}

static int reload(struct rig *r)
{
	struct jbd_err err;
	int rc = jbd_journal_load(&r->loc, &r->j, &err);
	if (rc)
		fprintf(stderr, "reload: %s\n", err.msg);
	return rc;
}

/* Append a transaction writing blocks targets[i] filled with fill[i] (a
 * fill of 0xC0 makes a block that starts with the jbd2 magic). */
static int txn(struct rig *r, const uint64_t *targets, const uint8_t *fill, size_t n,
	       const uint64_t *revokes, size_t nrev, uint64_t sec, struct jbd_write_result *res)
{
	struct jbd_write_block wb[64];
	static uint8_t bufs[64][4096];
	struct jbd_err err;
	struct jbd_txn_desc d = { .blocks = wb, .nblocks = n, .revokes = revokes,
				  .nrevokes = nrev, .commit_sec = sec, .commit_nsec = 7 };
	struct jbd_write_result tmp;

	for (size_t i = 0; i < n; i++) {
		memset(bufs[i], fill[i], r->bs);
		if (fill[i] == 0xC0)
			jbd_unescape(bufs[i]);
		wb[i] = (struct jbd_write_block){ targets[i], bufs[i] };
	}
	int rc = jbd_write_txn(&r->j, &d, res ? res : &tmp, &err);
	if (rc)
		fprintf(stderr, "  txn: %s\n", err.msg);
	return rc;
}

/* First byte of data block b, and whether the rest matches. */
static int data_byte(struct rig *r, uint64_t b)
{
	static uint8_t buf[4096];
	if (dev_pread(r->ddev, buf, r->bs, b * r->bs))
		return -1;
	for (uint32_t i = 5; i < r->bs; i++)
		if (buf[i] != buf[4])
			return -2;
	if (jbd_block_needs_escape(buf))
		return 0x1C0; /* the magic restored */
	return buf[0];
}

static int recover(struct rig *r, bool dry, struct jbd_recover_result *res, struct jbd_err *err)
{
	struct jbd_recover_opts o = { .dry_run = dry };
	return jbd_recover(&r->j, &o, res, err);
}

/* Flip one byte of journal block blk at offset off. */
static int corrupt(struct rig *r, uint32_t blk, uint32_t off)
{
	static uint8_t buf[4096];
	int rc = jbd_journal_read(&r->j, blk, buf);
	buf[off] ^= 0x5A;
	return rc ? rc : jbd_journal_write(&r->j, blk, buf);
}

static uint64_t hash_dev(struct dev *d)
{
	static uint8_t buf[65536];
	uint64_t h = 1469598103934665603ull, size = dev_size(d);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		uint32_t n = size - off < sizeof(buf) ? (uint32_t)(size - off) : sizeof(buf);
		if (dev_pread(d, buf, n, off))
			return 0;
		for (uint32_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	}
	return h;
}

/* The transactions the debugfs interop tests write (tests/interop/), in
 * every format: T1 A,B; T2 escaped C, D; T3 revokes B. */
static void check_recipe(uint32_t bs, enum jbd_csum_kind csum, bool is64)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t t1[] = { 10, 11 }, t2[] = { 12, 13 }, rev[] = { 11 };
	uint8_t f1[] = { 'A', 'B' }, f2[] = { 0xC0, 'D' };

	T_EQ(rig_open(&r, bs, 256, csum, is64, false, 1), 0);
	T_EQ(txn(&r, t1, f1, 2, NULL, 0, 100, NULL), 0);
	T_EQ(txn(&r, t2, f2, 2, NULL, 0, 101, NULL), 0);
	T_EQ(txn(&r, NULL, NULL, 0, rev, 1, 102, NULL), 0);
	T_EQ(reload(&r), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_start), 1);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 3);
	T_EQ(res.replayed_blocks, 3);
	T_EQ(res.revoked_blocks, 1);
	T_EQ(res.revoke_records, 1);
	T_EQ(data_byte(&r, 10), 'A');
	T_EQ(data_byte(&r, 11), 0);
	T_EQ(data_byte(&r, 12), 0x1C0);
	T_EQ(data_byte(&r, 13), 'D');
	T_EQ(reload(&r), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_start), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_sequence), 5);
	/* T1: desc + 2, commit; T2: desc + 2, commit; T3: revoke, commit -> 10 */
	T_EQ(jbd_get_be32(r.j.j_sb.s_head), 11);
	rig_close(&r);
}

static void test_every_format(void)
{
	static const enum jbd_csum_kind kinds[] = { JBD_CSUM_KIND_NONE, JBD_CSUM_KIND_V1,
						     JBD_CSUM_KIND_V2, JBD_CSUM_KIND_V3 };
	for (size_t k = 0; k < 4; k++)
		for (int is64 = 0; is64 < 2; is64++)
			for (uint32_t bs = 1024; bs <= 4096; bs *= 4) {
				int before = t_cur_failed;
				check_recipe(bs, kinds[k], is64);
				if (t_cur_failed && !before) {
					T_FAILF("format csum %d 64bit %d bs %u", (int)kinds[k], is64, bs);
					return;
				}
			}
}

/* A revoke in T applies to copies in tids <= T only. */
static void test_revoke_ordering(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t a[] = { 5, 6 }, rev[] = { 5, 6 }, b[] = { 5 };
	uint8_t fa[] = { 'X', 'X' }, fb[] = { 'Y' };

	T_EQ(rig_open(&r, 1024, 128, JBD_CSUM_KIND_V3, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, NULL), 0);
	T_EQ(txn(&r, NULL, NULL, 0, rev, 2, 2, NULL), 0);
	T_EQ(txn(&r, b, fb, 1, NULL, 0, 3, NULL), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(data_byte(&r, 5), 'Y');
	T_EQ(data_byte(&r, 6), 0);
	T_EQ(res.revoked_blocks, 2);
	T_EQ(res.replayed_blocks, 1);
	rig_close(&r);
}

/* Transactions cross the end of the log: recover records s_head, the next
 * writes continue there and wrap to s_first. */
static void test_log_wrap(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w;
	struct jbd_err err;
	bool wrapped = false;

	T_EQ(rig_open(&r, 1024, 24, JBD_CSUM_KIND_V3, false, false, 1), 0);
	for (int round = 0; round < 12; round++) {
		uint64_t t[] = { (uint64_t)round, (uint64_t)round + 20, (uint64_t)round + 40 };
		uint8_t f[] = { (uint8_t)('a' + round), (uint8_t)('A' + round), 0xC0 };
		T_EQ(txn(&r, t, f, 3, NULL, 0, 10 + (uint64_t)round, &w), 0);
		if (w.commit_block < w.start_block)
			wrapped = true;
		T_EQ(reload(&r), 0);
		T_EQ(recover(&r, false, &res, &err), 0);
		T_EQ(res.replayed_blocks, 3);
		T_EQ(data_byte(&r, (uint64_t)round), 'a' + round);
		T_EQ(data_byte(&r, (uint64_t)round + 20), 'A' + round);
		T_EQ(data_byte(&r, (uint64_t)round + 40), 0x1C0);
		T_EQ(reload(&r), 0);
	}
	T_CHECK(wrapped);
	/* Several unreplayed transactions across the wrap, then one recovery. */
	for (int i = 0; i < 3; i++) {
		uint64_t t[] = { 60, 61 };
		uint8_t f[] = { (uint8_t)('p' + i), (uint8_t)('P' + i) };
		T_EQ(txn(&r, t, f, 2, NULL, 0, 50 + (uint64_t)i, &w), 0);
		T_EQ(reload(&r), 0);
	}
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 3);
	T_EQ(data_byte(&r, 60), 'r');
	T_EQ(data_byte(&r, 61), 'R');
	rig_close(&r);
}

/* The log fills up: the writer refuses with ENOSPC and writes nothing. */
static void test_log_full(void)
{
	struct rig r;
	struct jbd_write_result w;
	uint64_t t[] = { 1, 2, 3, 4, 5, 6 };
	uint8_t f[] = { 1, 2, 3, 4, 5, 6 };
	int rc = 0, n = 0;

	T_EQ(rig_open(&r, 1024, 40, JBD_CSUM_KIND_V3, false, false, 1), 0);
	while (!(rc = txn(&r, t, f, 6, NULL, 0, 1, &w)))
		n++;
	T_EQ(rc, -ENOSPC);
	T_EQ(n, 4); /* 39 log blocks, 8 per transaction, one kept free */
	uint64_t h = hash_dev(r.jdev);
	T_EQ(txn(&r, t, f, 1, NULL, 0, 1, &w), 0); /* 3 blocks still fit */
	T_CHECK(hash_dev(r.jdev) != h);
	rig_close(&r);
}

/* s_sequence 0xFFFFFFFE: tids FFFFFFFE, FFFFFFFF, 0, 1; revokes across it. */
static void test_tid_wrap(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t a[] = { 7, 8 }, rev[] = { 7, 8 }, b[] = { 8 }, c[] = { 9 };
	uint8_t fa[] = { 'a', 'a' }, fb[] = { 'b' }, fc[] = { 'c' };
	struct jbd_write_result w;

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, false, 0xFFFFFFFEu), 0);
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, &w), 0);
	T_EQ_U64(w.tid, 0xFFFFFFFEu);
	T_EQ(txn(&r, NULL, NULL, 0, rev, 2, 2, &w), 0);
	T_EQ_U64(w.tid, 0xFFFFFFFFu);
	T_EQ(txn(&r, b, fb, 1, NULL, 0, 3, &w), 0);
	T_EQ(w.tid, 0);
	T_EQ(txn(&r, c, fc, 1, NULL, 0, 4, &w), 0);
	T_EQ(w.tid, 1);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 4);
	T_EQ(data_byte(&r, 7), 0);
	T_EQ(data_byte(&r, 8), 'b');
	T_EQ(data_byte(&r, 9), 'c');
	T_EQ(res.end_tid, 2);
	T_EQ(reload(&r), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_sequence), 3);
	rig_close(&r);
}

/* A last transaction without its commit block is not replayed. */
static void test_torn_last(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w1, w2;
	struct jbd_err err;
	uint64_t a[] = { 1 }, b[] = { 2 };
	uint8_t fa[] = { 'a' }, fb[] = { 'b' };
	static uint8_t zero[4096];

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 1, NULL, 0, 1, &w1), 0);
	T_EQ(txn(&r, b, fb, 1, NULL, 0, 2, &w2), 0);
	T_EQ(jbd_journal_write(&r.j, w2.commit_block, zero), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 1), 'a');
	T_EQ(data_byte(&r, 2), 0);
	T_EQ(res.next_tid, 3);
	rig_close(&r);
}

/* A bad commit checksum in T2: with ASYNC_COMMIT, T2 is just uncommitted
 * (T1 replayed, success); without, the journal is corrupt and nothing at
 * all is written. */
static void test_async_commit(void)
{
	for (int async = 0; async < 2; async++) {
		struct rig r;
		struct jbd_recover_result res;
		struct jbd_write_result w2;
		struct jbd_err err;
		uint64_t a[] = { 1 }, b[] = { 2 }, c[] = { 3 };
		uint8_t fa[] = { 'a' }, fb[] = { 'b' }, fc[] = { 'c' };

		T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, async, 1), 0);
		T_EQ(txn(&r, a, fa, 1, NULL, 0, 1, NULL), 0);
		T_EQ(txn(&r, b, fb, 1, NULL, 0, 2, &w2), 0);
		T_EQ(txn(&r, c, fc, 1, NULL, 0, 3, NULL), 0);
		T_EQ(corrupt(&r, w2.commit_block, 100), 0);
		T_EQ(reload(&r), 0);
		uint64_t hd = hash_dev(r.ddev), hj = hash_dev(r.jdev);
		int rc = recover(&r, false, &res, &err);
		if (async) {
			T_EQ(rc, 0);
			T_EQ(res.replayed_transactions, 1);
			T_EQ(data_byte(&r, 1), 'a');
			T_EQ(data_byte(&r, 2), 0);
			T_EQ(data_byte(&r, 3), 0);
		} else {
			T_EQ(rc, -EUCLEAN);
			T_CHECK(strstr(err.msg, "transaction 2"));
			T_CHECK(strstr(err.msg, "commit"));
			T_EQ_U64(hash_dev(r.ddev), hd);
			T_EQ_U64(hash_dev(r.jdev), hj);
		}
		rig_close(&r);
	}
}

/* A bad data checksum skips that block only; the failure is reported. */
static void test_bad_tag_csum(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w;
	struct jbd_err err;
	uint64_t a[] = { 1, 2, 3 };
	uint8_t fa[] = { 'a', 'b', 'c' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V2, true, false, 1), 0);
	T_EQ(txn(&r, a, fa, 3, NULL, 0, 1, &w), 0);
	T_EQ(corrupt(&r, w.start_block + 2, 500), 0); /* block 2's copy */
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, true, &res, &err), -EBADMSG); /* dry run predicts it */
	T_EQ(data_byte(&r, 1), 0);
	T_EQ(recover(&r, false, &res, &err), -EBADMSG);
	T_CHECK(strstr(err.msg, "bad checksum"));
	T_EQ(res.bad_csum_blocks, 1);
	T_EQ(res.replayed_blocks, 2);
	T_EQ(data_byte(&r, 1), 'a');
	T_EQ(data_byte(&r, 2), 0);
	T_EQ(data_byte(&r, 3), 'c');
	T_EQ(reload(&r), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_start), 0);
	T_EQ((int32_t)jbd_get_be32(r.j.j_sb.s_errno), -EIO);
	rig_close(&r);
}

/* ASYNC_COMMIT: a block of T2 that never reached the disk (bad checksum)
 * means T2 was never acknowledged: replay ends before T2, T2's good blocks
 * and T3 included, so T2 stays atomic; T3's revoke of block 1 no longer
 * hides T1's copy. Without ASYNC_COMMIT the same damage replays the other
 * blocks and reports -EBADMSG (test_bad_tag_csum). */
static void test_async_torn_transaction(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w2;
	struct jbd_err err;
	uint64_t a[] = { 1 }, b[] = { 2, 3 }, c[] = { 4 }, rv[] = { 1 };
	uint8_t fa[] = { 'a' }, fb[] = { 'b', 'B' }, fc[] = { 'c' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, true, 1), 0);
	T_EQ(txn(&r, a, fa, 1, NULL, 0, 1, NULL), 0);
	T_EQ(txn(&r, b, fb, 2, NULL, 0, 2, &w2), 0);
	T_EQ(txn(&r, c, fc, 1, rv, 1, 3, NULL), 0);
	T_EQ(corrupt(&r, w2.start_block + 2, 300), 0); /* block 3's copy */
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(res.torn_transactions, 2);
	T_EQ(res.bad_csum_blocks, 0);
	T_EQ(data_byte(&r, 1), 'a');
	T_EQ(data_byte(&r, 2), 0);
	T_EQ(data_byte(&r, 3), 0);
	T_EQ(data_byte(&r, 4), 0);
	T_EQ(res.next_tid, 3); /* past T2: its commit record is stale now */
	T_EQ(reload(&r), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_start), 0);
	T_EQ(jbd_get_be32(r.j.j_sb.s_errno), 0);
	rig_close(&r);
}

/* A corrupt descriptor in T2 (committed, same commit time): nothing at all
 * is written, not even T1. */
static void test_bad_t2_nothing_written(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w2;
	struct jbd_err err;
	uint64_t a[] = { 1 }, b[] = { 2 };
	uint8_t fa[] = { 'a' }, fb[] = { 'b' };

	T_EQ(rig_open(&r, 4096, 64, JBD_CSUM_KIND_V3, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 1, NULL, 0, 5, NULL), 0);
	T_EQ(txn(&r, b, fb, 1, NULL, 0, 5, &w2), 0);
	T_EQ(corrupt(&r, w2.start_block, 3000), 0);
	T_EQ(reload(&r), 0);
	uint64_t hd = hash_dev(r.ddev), hj = hash_dev(r.jdev);
	T_EQ(recover(&r, false, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "transaction 2"));
	T_EQ_U64(hash_dev(r.ddev), hd);
	T_EQ_U64(hash_dev(r.jdev), hj);
	T_EQ(data_byte(&r, 1), 0);
	rig_close(&r);
}

/* A bad checksum with an older commit time is a stale leftover: the log
 * ends quietly before it. */
static void test_stale_commit_time(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w2;
	struct jbd_err err;
	uint64_t a[] = { 1 }, b[] = { 2 };
	uint8_t fa[] = { 'a' }, fb[] = { 'b' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 1, NULL, 0, 100, NULL), 0);
	T_EQ(txn(&r, b, fb, 1, NULL, 0, 50, &w2), 0);
	T_EQ(corrupt(&r, w2.start_block, 200), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_transactions, 1);
	T_EQ(data_byte(&r, 1), 'a');
	T_EQ(data_byte(&r, 2), 0);
	rig_close(&r);
}

/* COMPAT_CHECKSUM: the crc covers descriptors and data (not revoke blocks,
 * the kernel's rule); a changed data block breaks the commit. */
static void test_v1_checksum(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_write_result w;
	struct jbd_err err;
	uint64_t a[] = { 1, 2 }, rev[] = { 9 };
	uint8_t fa[] = { 'a', 'b' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V1, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 2, rev, 1, 1, &w), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, true, &res, &err), 0);
	T_EQ(res.replayed_blocks, 2);
	T_EQ(corrupt(&r, w.start_block + 3, 10), 0); /* revoke, desc, data, data */
	T_EQ(recover(&r, true, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "commit"));
	rig_close(&r);
}

/* Dry run: counts, writes nothing. */
static void test_dry_run(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t a[] = { 1, 2 };
	uint8_t fa[] = { 'a', 'b' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_NONE, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, NULL), 0);
	T_EQ(reload(&r), 0);
	uint64_t hd = hash_dev(r.ddev), hj = hash_dev(r.jdev);
	T_EQ(recover(&r, true, &res, &err), 0);
	T_EQ(res.replayed_blocks, 2);
	T_EQ_U64(hash_dev(r.ddev), hd);
	T_EQ_U64(hash_dev(r.jdev), hj);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_CHECK(res.nothing_to_do);
	rig_close(&r);
}

/* Many tags: several descriptors per transaction (1 KiB, v3: 62 per
 * descriptor) and several revoke blocks. */
static void test_big_transaction(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	struct jbd_scan sc;
	uint64_t t[64], rev[300];
	uint8_t f[64];

	T_EQ(rig_open(&r, 1024, 400, JBD_CSUM_KIND_V3, false, false, 1), 0);
	for (int i = 0; i < 64; i++) {
		t[i] = (uint64_t)i;
		f[i] = (uint8_t)(i + 1);
	}
	for (int i = 0; i < 300; i++)
		rev[i] = 1000 + (uint64_t)i;
	r.loc.j_data_blocks = 2000; /* revokes may name any block */
	r.j.j_loc.j_data_blocks = 2000;
	T_EQ(txn(&r, t, f, 64, rev, 300, 1, NULL), 0);
	r.j.j_loc.j_data_blocks = DATA_BLOCKS;
	T_EQ(reload(&r), 0);
	T_EQ(jbd_scan_log(&r.j, &sc, &err), 0);
	T_EQ(sc.sc_ntrans, 1);
	T_EQ(sc.sc_trans[0].ntags, 64);
	T_EQ(sc.sc_trans[0].nrevoked, 300);
	T_EQ(sc.sc_trans[0].nblocks, 2 + 2); /* 251 records per revoke block, 62 tags per descriptor */
	jbd_scan_release(&sc);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_blocks, 64);
	for (int i = 0; i < 64; i++)
		T_EQ(data_byte(&r, (uint64_t)i), i + 1);
	rig_close(&r);
}

/* A tag naming a block beyond the data device: refused, nothing written. */
static void test_target_beyond(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t a[] = { 1, 63 };
	uint8_t fa[] = { 'a', 'b' };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_V3, false, false, 1), 0);
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, NULL), 0);
	a[1] = DATA_BLOCKS;
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, NULL), -EINVAL); /* the writer checks too */
	r.j.j_loc.j_data_blocks = 32;
	T_EQ(recover(&r, false, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "beyond the data device"));
	T_EQ(data_byte(&r, 1), 0);
	rig_close(&r);
}

/* A v1 superblock (blocktype 3): no feature words, 8-byte tags. */
static void test_v1_superblock(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	uint64_t a[] = { 4, 5 }, rev[] = { 4 };
	uint8_t fa[] = { 'a', 0xC0 };

	T_EQ(rig_open(&r, 1024, 64, JBD_CSUM_KIND_NONE, false, false, 1), 0);
	jbd_put_be32(&r.j.j_sb.s_header.h_blocktype, JBD2_SUPERBLOCK_V1);
	memset((uint8_t *)&r.j.j_sb + 0x24, 0, sizeof(r.j.j_sb) - 0x24);
	T_EQ(jbd_journal_write_sb(&r.j, &err), 0);
	T_EQ(reload(&r), 0);
	T_CHECK(!jbd_sb_is_v2(&r.j.j_sb));
	T_EQ(r.j.j_fmt.f_tag_bytes, 8);
	T_EQ(txn(&r, NULL, NULL, 0, rev, 1, 1, NULL), -EOPNOTSUPP); /* no REVOKE in v1 */
	T_EQ(txn(&r, a, fa, 2, NULL, 0, 1, NULL), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(data_byte(&r, 4), 'a');
	T_EQ(data_byte(&r, 5), 0x1C0);
	rig_close(&r);
}

/* A journal scattered over its device in three extents, as inode 8 of an
 * ext4 image can be; the data device is the same device. */
static void test_extent_map(void)
{
	struct rig r;
	struct jbd_recover_result res;
	struct jbd_err err;
	struct jbd_format_opts o = { .blocksize = 1024, .blocks = 40, .csum = JBD_CSUM_KIND_V3 };
	struct jbd_extent map[3] = { { 0, 100, 10 }, { 10, 50, 5 }, { 15, 200, 25 } };
	struct dev *scratch;
	static uint8_t buf[1024];
	uint64_t off;

	memset(&r, 0, sizeof(r));
	r.bs = 1024;
	T_EQ(dev_mem_new(256 * 1024, 512, &r.ddev), 0);
	r.loc = (struct jbd_loc){ .j_dev = r.ddev, .j_blocksize = 1024, .j_map = map, .j_nmap = 3,
				  .j_len = 40, .j_data = r.ddev, .j_data_blocks = 256 };
	T_EQ(jbd_loc_offset(&r.loc, 0, &off), 0);
	T_EQ_U64(off, 100 * 1024);
	T_EQ(jbd_loc_offset(&r.loc, 12, &off), 0);
	T_EQ_U64(off, 52 * 1024);
	T_EQ(jbd_loc_offset(&r.loc, 39, &off), 0);
	T_EQ_U64(off, 224 * 1024);
	T_EQ(jbd_loc_offset(&r.loc, 40, &off), -EINVAL);
	/* format a scratch image, then copy it block by block through the map */
	T_EQ(dev_mem_new(40 * 1024, 512, &scratch), 0);
	T_EQ(jbd_format(scratch, &o, &err), 0);
	r.j.j_loc = r.loc;
	for (uint64_t b = 0; b < 40; b++) {
		T_EQ(dev_pread(scratch, buf, 1024, b * 1024), 0);
		T_EQ(jbd_journal_write(&r.j, b, buf), 0);
	}
	dev_close(scratch);
	T_EQ(reload(&r), 0);
	uint64_t t[] = { 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31 };
	uint8_t f[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	struct jbd_write_result w;
	T_EQ(txn(&r, t, f, 12, NULL, 0, 1, NULL), 0);     /* log blocks 1-14 */
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(reload(&r), 0);
	T_EQ(txn(&r, t, f, 12, NULL, 0, 1, &w), 0);       /* 15-28 (from s_head) */
	T_EQ(w.start_block, 15);
	T_EQ(txn(&r, t, f, 12, NULL, 0, 1, &w), 0);       /* 29-39, then 1-3 */
	T_EQ(w.commit_block, 3);
	T_EQ(txn(&r, t, f, 12, NULL, 0, 1, NULL), -ENOSPC);
	uint64_t bad[] = { 52 };                          /* journal block 12 */
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_blocks, 24);
	for (int i = 0; i < 12; i++)
		T_EQ(data_byte(&r, t[i]), f[i]);
	/* a tag naming a block of the journal itself: the writer refuses it
	 * (nothing written), and recovery refuses a log that holds one
	 * (written here by a writer that takes the data to be elsewhere) */
	T_EQ(txn(&r, bad, f, 1, NULL, 0, 1, NULL), -UJBD_EINJOURNAL);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), 0);
	T_EQ(res.replayed_blocks, 0);
	r.j.j_loc.j_data = NULL;
	T_EQ(txn(&r, bad, f, 1, NULL, 0, 1, NULL), 0);
	T_EQ(reload(&r), 0);
	T_EQ(recover(&r, false, &res, &err), -EUCLEAN);
	T_CHECK(strstr(err.msg, "inside the journal"));
	rig_close(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_every_format);
	T_RUN(test_revoke_ordering);
	T_RUN(test_log_wrap);
	T_RUN(test_log_full);
	T_RUN(test_tid_wrap);
	T_RUN(test_torn_last);
	T_RUN(test_async_commit);
	T_RUN(test_bad_tag_csum);
	T_RUN(test_async_torn_transaction);
	T_RUN(test_bad_t2_nothing_written);
	T_RUN(test_stale_commit_time);
	T_RUN(test_v1_checksum);
	T_RUN(test_dry_run);
	T_RUN(test_big_transaction);
	T_RUN(test_target_beyond);
	T_RUN(test_v1_superblock);
	T_RUN(test_extent_map);
	return t_done(argv[0]);
}

/*
 * The offline log engine (superblock.c, scan.c, logread.c, recovery.c,
 * replay.c, logwrite.c) when its devices fail or memory runs out: every
 * read, write and flush of a recovery, of an append and of a format fails
 * in turn (the Nth, for every N up to the count of that kind, on the
 * journal and on the data device), and so does every allocation. Each
 * failure returns a negative errno with a message, never 0 (except a read
 * ahead that the log reader reads again: see sweep); a clean recovery
 * afterwards gives exactly the blocks of the faultless run (an interrupted
 * append: the log with or without its transaction, never a part of it).
 * Prints the counts.
 * In-memory devices behind the fault device (dev_fault_new); the
 * allocation faults replace malloc/calloc/realloc in this program and are
 * skipped under ASan/TSan, which own the allocator.
 */
#include <errno.h>

#include "t.h"
#include "ujbd/jbd_log.h"

#define BS 1024u
#define JBLOCKS 64u
#define DBLOCKS 32u

#include "alloc_fault.h"

/* ---- images --------------------------------------------------------------- */

/* The contents of a journal device and a data device. */
struct image {
	uint8_t j[JBLOCKS * BS], d[DBLOCKS * BS];
};

static int mem_from(const uint8_t *buf, size_t len, struct dev **out)
{
	int rc = dev_mem_new(len, 512, out);

	return rc ? rc : dev_pwrite(*out, buf, (uint32_t)len, 0, 0);
}

/* A journal on the two devices: identity map, data device beside it. */
static struct jbd_loc loc_of(struct dev *jd, struct dev *dd, struct jbd_extent *ext)
{
	*ext = (struct jbd_extent){ 0, 0, JBLOCKS };
	return (struct jbd_loc){ .j_dev = jd, .j_blocksize = BS, .j_map = ext, .j_nmap = 1,
				 .j_len = JBLOCKS, .j_data = dd, .j_data_blocks = DBLOCKS };
}

/* Append one transaction: blocks[i] gets fill[i]; the revokes first. */
static int append(struct jbd_journal *j, const uint64_t *blocks, const char *fill, size_t n,
		  const uint64_t *revokes, size_t nrev, uint64_t sec, struct jbd_err *err)
{
	static uint8_t bufs[8][BS];
	struct jbd_write_block wb[8];
	struct jbd_write_result r;
	struct jbd_txn_desc d = { .blocks = wb, .nblocks = n, .revokes = revokes,
				  .nrevokes = nrev, .commit_sec = sec };

	for (size_t i = 0; i < n; i++) {
		memset(bufs[i], fill[i], BS);
		wb[i] = (struct jbd_write_block){ blocks[i], bufs[i] };
	}
	return jbd_write_txn(j, &d, &r, err);
}

static const uint64_t t3_blocks[] = { 4, 5, 1 };
static const char t3_fill[] = "DEF";

/* A formatted journal (csum v3) holding T1 {1: A, 2: B}, T2 {3: C,
 * revoke 1} and, with t3, T3 {4: D, 5: E, 1: F}; the data device zero. */
static int make_image(struct image *im, bool t3)
{
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = JBLOCKS,
				      .csum = JBD_CSUM_KIND_V3, .uuid = { 7, 7, 7 } };
	static const uint64_t b1[] = { 1, 2 }, b2[] = { 3 }, r2[] = { 1 };
	struct jbd_extent ext;
	struct jbd_journal j;
	struct jbd_err err;
	struct dev *jd = NULL, *dd = NULL;
	int rc = dev_mem_new(sizeof(im->j), 512, &jd);

	if (!rc)
		rc = dev_mem_new(sizeof(im->d), 512, &dd);
	struct jbd_loc loc = loc_of(jd, dd, &ext);
	if (!rc)
		rc = jbd_format(jd, &fo, &err);
	if (!rc)
		rc = jbd_journal_load(&loc, &j, &err);
	if (!rc)
		rc = append(&j, b1, "AB", 2, NULL, 0, 10, &err);
	if (!rc)
		rc = append(&j, b2, "C", 1, r2, 1, 11, &err);
	if (!rc && t3)
		rc = append(&j, t3_blocks, t3_fill, 3, NULL, 0, 12, &err);
	if (!rc)
		rc = dev_pread(jd, im->j, sizeof(im->j), 0);
	if (!rc)
		rc = dev_pread(dd, im->d, sizeof(im->d), 0);
	if (rc)
		fprintf(stderr, "  make_image: %d %s\n", rc, err.msg);
	if (jd)
		dev_close(jd);
	if (dd)
		dev_close(dd);
	return rc;
}

/* ---- one operation over fault devices --------------------------------- */

enum op { OP_RECOVER, OP_APPEND, OP_SCAN, OP_FORMAT };

struct run {
	struct dev_fault_opts fj, fd;        /* the faults of each device */
	long alloc_nth;                      /* fail that allocation (0: none) */
	struct dev_fault_counts cj, cd;      /* what the devices saw */
	long alloc_failed;
	struct image after;                  /* the devices afterwards */
	struct jbd_err err;
	int rc;
};

static int op_run(enum op op, struct jbd_loc *loc, struct run *r)
{
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = JBLOCKS,
				      .csum = JBD_CSUM_KIND_V3 };
	struct jbd_recover_result res;
	struct jbd_journal j;
	struct jbd_scan sc;
	int rc;

	if (op == OP_FORMAT)
		return jbd_format(loc->j_dev, &fo, &r->err);
	rc = jbd_journal_load(loc, &j, &r->err);
	if (rc)
		return rc;
	if (op == OP_APPEND)
		return append(&j, t3_blocks, t3_fill, 3, NULL, 0, 12, &r->err);
	if (op == OP_RECOVER)
		return jbd_recover(&j, NULL, &res, &r->err);
	rc = jbd_scan_log(&j, &sc, &r->err);
	if (rc && sc.sc_stop != JBD_STOP_IO && rc != -ENOMEM)
		rc = -EPROTO; /* a failed read must end the scan as an I/O stop */
	jbd_scan_release(&sc);
	return rc;
}

/* Run op on devices holding im, behind fault devices; r says how it went
 * and what the devices hold afterwards. */
static int run_op(enum op op, const struct image *im, struct run *r)
{
	struct dev *jm = NULL, *dm = NULL, *jd = NULL, *dd = NULL, *jin, *din;
	struct jbd_extent ext;
	int rc;

	memset(&r->err, 0, sizeof(r->err));
	rc = mem_from(im->j, sizeof(im->j), &jm);
	if (!rc)
		rc = mem_from(im->d, sizeof(im->d), &dm);
	jin = jm;
	din = dm;
	if (!rc && !(rc = dev_fault_new(jm, &r->fj, &jd)))
		jm = NULL;
	if (!rc && !(rc = dev_fault_new(dm, &r->fd, &dd)))
		dm = NULL;
	if (rc)
		goto out;
	struct jbd_loc loc = loc_of(jd, dd, &ext);
	alloc_fault_arm(r->alloc_nth);
	r->rc = op_run(op, &loc, r);
	r->alloc_failed = alloc_fault_disarm();
	dev_fault_counts(jd, &r->cj);
	dev_fault_counts(dd, &r->cd);
	/* read back under the fault devices (they own them now), which would
	 * count the reads and might fail one */
	rc = dev_pread(jin, r->after.j, sizeof(r->after.j), 0);
	if (!rc)
		rc = dev_pread(din, r->after.d, sizeof(r->after.d), 0);
out:
	for (struct dev **d = (struct dev *[]){ jm, dm, jd, dd }, **e = d + 4; d < e; d++)
		if (*d)
			dev_close(*d);
	return rc;
}

/* The data a faultless recovery of im gives (journal marked empty). */
static int recovered(const struct image *im, struct image *out)
{
	static struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = run_op(OP_RECOVER, im, &r);
	if (!rc)
		rc = r.rc;
	if (!rc)
		*out = r.after;
	return rc;
}

/* Did the fault fire? */
static bool fired(const struct run *r)
{
	return r->cj.read_errors + r->cj.write_errors + r->cj.flush_errors +
	       r->cd.read_errors + r->cd.write_errors + r->cd.flush_errors +
	       (uint64_t)r->alloc_failed > 0;
}

/* ---- the sweeps ----------------------------------------------------------- */

/* K_READS: the Nth read and every later one fail (sticky), so that a read
 * the log reader tries again block by block fails again. */
enum kind { K_READ, K_READS, K_WRITE, K_FLUSH, K_ALLOC };
static const char *const kind_name[] = { "read", "sticky read", "write", "flush",
					 "allocation" };

static void arm(struct run *r, enum kind k, bool on_data, long n)
{
	struct dev_fault_opts *o = on_data ? &r->fd : &r->fj;

	memset(r, 0, offsetof(struct run, cj));
	o->sticky = k == K_READS;
	if (k == K_READ || k == K_READS)
		o->fail_read_nth = (uint64_t)n;
	else if (k == K_WRITE)
		o->fail_write_nth = (uint64_t)n;
	else if (k == K_FLUSH)
		o->fail_flush_nth = (uint64_t)n;
	else
		r->alloc_nth = n;
}

/*
 * Fail the Nth operation of kind k (on the data device or the journal's)
 * for N = 1, 2, ... until a run sees no fault: that run must succeed, and
 * every earlier one fail with a negative errno and a message, leaving
 * devices whose clean recovery is `want` (or `want_alt`). One exception: a
 * single failed read of the journal, or a failed allocation, may end in
 * success when it was the log reader's read ahead (the read, or the
 * request that would send it), which the scan reads again block by block
 * (logread.c); the result must then be the faultless one. Returns how many
 * failures were injected, or -1 (a check failed, already reported).
 */
static long sweep(enum op op, const struct image *im, enum kind k, bool on_data,
		  const struct image *want, const struct image *want_alt)
{
	static struct run r;
	static struct image got;
	long n;

	for (n = 1; n < 100000; n++) {
		arm(&r, k, on_data, n);
		int rc = run_op(op, im, &r);
		if (rc) {
			fprintf(stderr, "    cannot set up the devices: %s\n", strerror(-rc));
			return -1;
		}
		if (!fired(&r)) {
			if (r.rc) {
				fprintf(stderr, "    no fault, yet %d: %s\n", r.rc, r.err.msg);
				return -1;
			}
			return n - 1;
		}
		bool retried = r.rc == 0 && ((k == K_READ && !on_data) || k == K_ALLOC);
		if (!retried && (r.rc >= 0 || !r.err.msg[0])) {
			fprintf(stderr, "    %s %ld of %s: rc %d, message '%s'\n", kind_name[k], n,
				on_data ? "data" : "journal", r.rc, r.err.msg);
			return -1;
		}
		if (!want)
			continue;
		if (recovered(&r.after, &got) ||
		    (memcmp(got.d, want->d, sizeof(got.d)) &&
		     (!want_alt || memcmp(got.d, want_alt->d, sizeof(got.d))))) {
			fprintf(stderr, "    %s %ld of %s: the recovery afterwards differs\n",
				kind_name[k], n, on_data ? "data" : "journal");
			return -1;
		}
	}
	return -1;
}

/* Every kind on both devices; *total gets the I/O failures injected (the
 * allocation faults are counted apart: a sanitizer turns them off). */
static void sweep_all(enum op op, const char *name, const struct image *im,
		      const struct image *want, const struct image *want_alt, long *total)
{
	for (int k = K_READ; k <= K_ALLOC; k++)
		for (int on_data = 0; on_data < 2; on_data++) {
			if (k == K_ALLOC && (on_data || !HAVE_ALLOC_FAULTS))
				continue;
			if (k == K_READS && on_data)
				continue;
			long n = sweep(op, im, (enum kind)k, on_data, want, want_alt);
			if (n < 0) {
				T_FAILF("%s: %s faults on the %s device", name, kind_name[k],
					on_data ? "data" : "journal");
				return;
			}
			fprintf(stderr, "    %s: %ld %s faults on the %s\n", name, n,
				kind_name[k], k == K_ALLOC ? "calling thread" : on_data ? "data device" : "journal device");
			if (k != K_ALLOC)
				*total += n;
		}
}

static struct image base, full, want_base, want_full;

/* The least I/O faults each sweep must inject: that it reached in. On
 * 2026-12-04 (the log read ahead in chunks, main's logread.c): recover 8,
 * append 11, scan 4, format 4. */

static void t_recover(void)
{
	long total = 0;

	sweep_all(OP_RECOVER, "recover", &full, &want_full, NULL, &total);
	T_CHECK(total >= 6);
}

/* An interrupted append leaves T1, T2 and either all of T3 or none. */
static void t_append(void)
{
	long total = 0;

	sweep_all(OP_APPEND, "append", &base, &want_base, &want_full, &total);
	T_CHECK(total >= 8);
}

static void t_scan(void)
{
	long total = 0;

	sweep_all(OP_SCAN, "scan", &full, NULL, NULL, &total);
	T_CHECK(total >= 4);
}

static void t_format(void)
{
	long total = 0;

	sweep_all(OP_FORMAT, "format", &full, NULL, NULL, &total);
	T_CHECK(total >= 3);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (make_image(&base, false) || make_image(&full, true) ||
	    recovered(&base, &want_base) || recovered(&full, &want_full)) {
		fprintf(stderr, "cannot build the images\n");
		return 1;
	}
	if (!memcmp(want_base.d, want_full.d, sizeof(want_base.d))) {
		fprintf(stderr, "T3 changes nothing: the append oracle would be blind\n");
		return 1;
	}
	if (!HAVE_ALLOC_FAULTS)
		fprintf(stderr, "  (allocation faults skipped: a sanitizer owns malloc)\n");
	T_RUN(t_recover);
	T_RUN(t_append);
	T_RUN(t_scan);
	T_RUN(t_format);
	return t_done(argv[0]);
}

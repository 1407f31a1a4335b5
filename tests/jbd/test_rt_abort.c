/*
 * Abort: a failed journal write aborts the journal. The transaction whose
 * write failed is never acknowledged (its sync stop and wait_tid fail with
 * -EIO), earlier commits stay acknowledged, new handles get -EROFS, close
 * reports the error, the superblock records it, and the next open refuses
 * the journal (-EUCLEAN) until clear_error; the failed transaction is not
 * replayed. Real world, RAM devices behind the fault injector.
 */
#include "rt_rig.h"

#define BS 1024u
#define JB 512u
#define DB 256u

struct run {
	uint64_t writes_after_t1;
	int t1, t2, start_after, wait_t1, wait_t2, close_rc;
};

static int fault_rig(struct rig *r, const struct dev_fault_opts *fo, struct dev **mem_out)
{
	struct jbd_format_opts f = { .blocksize = BS, .blocks = JB, .csum = JBD_CSUM_KIND_V3 };
	struct jbd_err err;
	struct dev *mem, *fd;
	int rc = dev_mem_new((uint64_t)JB * BS, 512, &mem);

	if (!rc)
		rc = jbd_format(mem, &f, &err);
	if (!rc)
		rc = dev_fault_new(mem, fo, &fd);
	if (!rc)
		rc = rig_devs(r, BS, JB, DB, fd, NULL);
	*mem_out = mem;
	return rc;
}

static int sequence(struct rig *r, struct run *o)
{
	struct ujbd_opts opt;
	struct dev_fault_counts fc;
	ujbd_tid_t t1 = 0, t2 = 0;
	int rc;

	rig_opts(&opt, false);
	if ((rc = rig_open(r, &opt)))
		return rc;
	o->t1 = rig_write(r->j, 10, 2, 1, true, &t1);
	dev_fault_counts(r->jd, &fc);
	o->writes_after_t1 = fc.writes;
	o->t2 = rig_write(r->j, 20, 2, 2, true, &t2);
	struct ujbd_handle *h;
	o->start_after = ujbd_start(r->j, 1, &h);
	if (o->start_after == 0)
		ujbd_stop(h);
	o->wait_t1 = ujbd_wait_tid(r->j, t1);
	o->wait_t2 = ujbd_wait_tid(r->j, t2);
	o->close_rc = ujbd_close(r->j);
	r->j = NULL;
	return 0;
}

static void t_write_error_aborts(void)
{
	struct dev_fault_opts fo = { .seed = 1 };
	struct rig r;
	struct run dry = { 0 }, run = { 0 };
	struct ujbd_opts opt;
	struct dev *mem;
	struct jbd2_sb sb;

	/* A dry run counts the writes of the first commit. */
	T_EQ(fault_rig(&r, &fo, &mem), 0);
	T_EQ(sequence(&r, &dry), 0);
	T_EQ(dry.t1, 0);
	T_EQ(dry.t2, 0);
	rig_free(&r);
	/* Now the first write of the second commit fails. */
	fo.fail_write_nth = dry.writes_after_t1 + 1;
	T_EQ(fault_rig(&r, &fo, &mem), 0);
	T_EQ(sequence(&r, &run), 0);
	T_EQ(run.t1, 0);
	T_EQ(run.t2, -EIO);
	T_EQ(run.start_after, -EROFS);
	T_EQ(run.wait_t1, 0);       /* committed before the error */
	T_EQ(run.wait_t2, -EIO);
	T_EQ(run.close_rc, -EIO);
	T_EQ(dev_pread(mem, &sb, sizeof(sb), 0), 0);
	T_CHECK(jbd_get_be32(sb.s_errno) != 0);
	/* The next open reports the earlier error ... */
	rig_opts(&opt, false);
	T_EQ(ujbd_open(&r.loc, &opt, &r.j, &r.err), -EUCLEAN);
	T_CHECK(strstr(r.err.msg, "aborted") != NULL);
	/* ... until told the data was checked; then recovery replays T1 only. */
	opt.clear_error = true;
	T_EQ(rig_open(&r, &opt), 0);
	T_CHECK(rig_has(&r, 10, 1) && rig_has(&r, 11, 1));
	T_CHECK(!rig_has(&r, 20, 2));
	T_EQ(rig_write(r.j, 30, 1, 3, true, NULL), 0);
	T_EQ(ujbd_close(r.j), 0);
	r.j = NULL;
	T_EQ(dev_pread(mem, &sb, sizeof(sb), 0), 0);
	T_EQ(jbd_get_be32(sb.s_errno), 0);
	rig_free(&r);
}

static void t_sticky_errors_no_hang(void)
{
	struct dev_fault_opts fo = { .seed = 2, .fail_write_nth = 1, .sticky = true };
	struct rig r;
	struct run run = { 0 };
	struct dev *mem;

	T_EQ(fault_rig(&r, &fo, &mem), 0);
	T_EQ(sequence(&r, &run), 0);
	T_EQ(run.t1, -EIO);
	T_EQ(run.t2, -EROFS);
	T_EQ(run.wait_t1, -EIO);
	T_EQ(run.close_rc, -EIO);
	rig_free(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_write_error_aborts);
	T_RUN(t_sticky_errors_no_hang);
	return t_done(argv[0]);
}

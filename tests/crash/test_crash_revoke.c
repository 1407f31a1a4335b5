/*
 * Reproducer kept from the crash suite (seed 1 of test_crash_ordered hit it
 * on block 49): revoking a block that ANOTHER handle of the same running
 * transaction journaled. ujbd.h allows it (-EINVAL is only for "a block this
 * very handle journaled"), and jbd2 does it all the time (ext4 frees a block
 * it modified earlier in the same transaction: forget, then revoke). The
 * outcome that must survive a crash: the block's copy in that transaction
 * and every older copy are not replayed, so after recovery the block holds
 * what was home before (here: its original contents).
 *
 * Sim world, one standalone journal and a data device on RAM; the crash is
 * ujbd_close_hard after the commit, then recovery with jbd_recover.
 */
#include <errno.h>
#include <string.h>

#include "t.h"
#include "ujbd/dev.h"
#include "ujbd/jbd_log.h"
#include "priv/rt.h"
#include "ujbd/ujbd.h"

#define BS 1024u
#define JLEN 128u
#define NDATA 64u
#define BLK 7u

struct rv {
	bool older;          /* B was also journaled in an earlier committed tid */
	int revoke_err, line;
	ujbd_tid_t t_meta, t_revoke;
	uint8_t after[BS];   /* B after recovery */
};

static int journal_block(struct ujbd *j, uint8_t fill, ujbd_tid_t *tid)
{
	struct ujbd_handle *h;
	struct ujbd_buf *b;
	int err = ujbd_start(j, 1, &h);

	if (err < 0)
		return err;
	*tid = ujbd_handle_tid(h);
	err = ujbd_get_write_access(h, BLK, &b);
	if (err == 0) {
		memset(ujbd_buf_data(b), fill, BS);
		err = ujbd_dirty_metadata(h, b);
		ujbd_buf_put(b);
	}
	int err2 = ujbd_stop(h);
	return err < 0 ? err : err2;
}

static void rv_main(void *arg)
{
	struct rv *r = arg;
	struct jbd_format_opts fo = { .blocksize = BS, .blocks = JLEN,
				      .csum = JBD_CSUM_KIND_V3, .uuid = { 9 } };
	struct jbd_extent ext = { 0, 0, JLEN };
	struct dev *jd = NULL, *dd = NULL;
	struct jbd_loc loc;
	struct ujbd_opts o;
	struct ujbd *j = NULL;
	struct ujbd_handle *h;
	struct jbd_journal jj;
	struct jbd_recover_opts ro = { 0 };
	struct jbd_recover_result res;
	ujbd_tid_t t0;

	if (dev_mem_new((uint64_t)JLEN * BS, 512, &jd) < 0 ||
	    dev_mem_new((uint64_t)NDATA * BS, 512, &dd) < 0 ||
	    jbd_format(jd, &fo, NULL) < 0) {
		r->line = __LINE__;
		goto out;
	}
	loc = (struct jbd_loc){ .j_dev = jd, .j_blocksize = BS, .j_map = &ext,
		.j_nmap = 1, .j_len = JLEN, .j_data = dd, .j_data_blocks = NDATA };
	ujbd_opts_default(&o);
	if (ujbd_open(&loc, &o, &j, NULL) < 0) {
		r->line = __LINE__;
		goto out;
	}
	if (r->older && (journal_block(j, 0x11, &t0) < 0 || ujbd_sync(j) < 0)) {
		r->line = __LINE__;
		goto out;
	}
	/* handle 1 journals B; handle 2, same transaction, revokes it */
	if (journal_block(j, 0x22, &r->t_meta) < 0 || ujbd_start(j, 1, &h) < 0) {
		r->line = __LINE__;
		goto out;
	}
	r->t_revoke = ujbd_handle_tid(h);
	r->revoke_err = ujbd_revoke(h, BLK);
	ujbd_stop(h);
	if (ujbd_sync(j) < 0) {
		r->line = __LINE__;
		goto out;
	}
	ujbd_close_hard(j);   /* crash: committed, not checkpointed */
	j = NULL;
	if (jbd_journal_load(&loc, &jj, NULL) < 0 || jbd_recover(&jj, &ro, &res, NULL) < 0 ||
	    dev_pread(dd, r->after, BS, (uint64_t)BLK * BS) < 0)
		r->line = __LINE__;
out:
	if (j)
		ujbd_close_hard(j);
	if (jd)
		dev_close(jd);
	if (dd)
		dev_close(dd);
}

static void run(struct rv *r)
{
	struct rt_world_opts wo = { .kind = RT_WORLD_SIM, .seed = 1 };
	rt_world *w;

	if (rt_world_new(&wo, &w) < 0) {
		r->line = __LINE__;
		return;
	}
	rt_world_run(w, "revoke", rv_main, r);
	rt_world_free(w);
}

static bool all(const uint8_t *p, uint8_t v)
{
	for (unsigned i = 0; i < BS; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* B journaled by handle 1 of T, revoked by handle 2 of T. */
static void test_revoke_after_other_handle_journaled(void)
{
	struct rv r = { 0 };

	run(&r);
	T_EQ(r.line, 0);
	T_CHECK(r.t_meta == r.t_revoke);   /* the same transaction */
	T_EQ(r.revoke_err, 0);
	T_CHECK(all(r.after, 0x00));        /* T's copy not replayed */
}

/* The same, with an older committed copy of B in the log as well. */
static void test_revoke_after_other_handle_journaled_older_copy(void)
{
	struct rv r = { .older = true };

	run(&r);
	T_EQ(r.line, 0);
	T_CHECK(r.t_meta == r.t_revoke);
	T_EQ(r.revoke_err, 0);
	T_CHECK(all(r.after, 0x00));        /* neither T's nor the older copy */
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(test_revoke_after_other_handle_journaled);
	T_RUN(test_revoke_after_other_handle_journaled_older_copy);
	return t_done(argv[0]);
}

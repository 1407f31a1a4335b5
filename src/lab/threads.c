/*
 * The mailing-list threads the lab's scenarios replay: subject, list, date
 * and author as each thread gives them, and the claim with its figure, for
 * the report's opening table (report.html, the text summary) and --list.
 *
 * The one idea: a thread is cited, never read at run time; its words live
 * here and in docs/lab.md, so the repository carries what the report says.
 * Where a thread's text does not name something (the list of the 2007
 * thread, the day of Ted Ts'o's reply) the field says where it comes from.
 */
#include "lab/lab.h"

const struct lab_thread lab_thread_000 = {
	.t_id = "000",
	.t_subject = "Give kjournald a IOPRIO_CLASS_RT io priority",
	.t_list = "linux-kernel",
	.t_date = "14-15 Oct 2007",
	.t_author = "Arjan van de Ven",
	.t_claim = "atime updates during a kernel build stall 600 ms or more; kjournald at RT "
		   "priority cuts them 3-4x",
};

const struct lab_thread lab_thread_000_morton = {
	.t_id = "000",
	.t_subject = "Give kjournald a IOPRIO_CLASS_RT io priority (Andrew Morton's reply)",
	.t_list = "linux-kernel",
	.t_date = "15 Oct 2007",
	.t_author = "Andrew Morton",
	.t_claim = "an RT kjournald may cost a linear read, a tree read and O_DIRECT beside a "
		   "tree-copy loop (no figure: a test plan)",
};

const struct lab_thread lab_thread_002 = {
	.t_id = "002",
	.t_subject = "Re: [PATCH RFC] jbd: don't wake kjournald unnecessarily",
	.t_list = "linux-ext4",
	.t_date = "11 Jan 2013",
	.t_author = "Jan Kara (the patch: Eric Sandeen)",
	.t_claim = "needless commit-thread wakeups cost AIM7 about 10 %",
};

const struct lab_thread lab_thread_003 = {
	.t_id = "003",
	.t_subject = "[patch/rft] jbd2: tag journal writes as metadata I/O",
	.t_list = "linux-ext4",
	.t_date = "1 Apr 2010",
	.t_author = "Jeff Moyer",
	.t_claim = "iozone 7 MB/s on cfq vs 35 on deadline, fs_mark 5x; META tagging cures it",
};

const struct lab_thread lab_thread_004 = {
	.t_id = "004",
	.t_subject = "Re: [GIT PULL] Ext3 latency fixes",
	.t_list = "linux-kernel",
	.t_date = "Apr 2009 (replying to 4 Apr 2009)",
	.t_author = "Theodore Ts'o",
	.t_claim = "1000 x fopen/write/fsync/fclose: 1687 ms stock, 13722 ms with every journal "
		   "write SYNC",
};

const struct lab_thread lab_thread_writeout = {
	.t_id = "kara-2009",
	.t_subject = "jbd: Refine commit writeout logic",
	.t_list = "linux-ext4",
	.t_date = "2009",
	.t_author = "Jan Kara",
	.t_claim = "journal writes SYNC only when waited on: a 1 MB read beside a writer 619 -> "
		   "82 ms avg, 2.13 -> 0.70 s max; fsyncs beside a reader unchanged (~6/s)",
};

/* A paper, not a thread: "list" names where it appeared; the figure is its
 * abstract's. */
const struct lab_thread lab_thread_checkpoint = {
	.t_id = "kim-2017",
	.t_subject = "Enlightening the I/O Path: A Holistic Approach for Application Performance",
	.t_list = "USENIX FAST '17 (a paper)",
	.t_date = "27 Feb - 2 Mar 2017",
	.t_author = "Sangwook Kim, Hwanju Kim, Joonwon Lee, Jinkyu Jeong",
	.t_claim = "request-centric I/O prioritization beside background checkpointing "
		   "(PostgreSQL, MongoDB, Redis): p99 request latency 3581 -> 84 ms (42x) against "
		   "Linux's default",
};

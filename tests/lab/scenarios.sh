#!/bin/sh
# ujbd lab: every scenario of the seeds runs with --quick, is deterministic
# (the same seed gives the same JSON, byte for byte; another seed another
# document where the seed moves something), reports every variant and every metric it promises, and its
# figures are finite (throughputs and times positive). The conclusions
# (ratios, goals) are not asserted: they are the lab's findings, not tests.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
"$UJBD" lab --list >/dev/null 2>&1 || skip "ujbd has no lab verb"
case "${SAN:-}" in
*sanitize*) echo "SKIP: a sanitizer build (SAN=$SAN): three whole --quick labs take minutes there and check figures, not memory (lab.sh runs the whole lab under the sanitizer; the plain build runs this test)"
	exit 77 ;;
esac
scratch scen

# a JSON number after "KEY": in FILE (first match; files are spaceless)
json_num() { sed -n "s/.*\"$1\":\([-0-9.e+][-0-9.e+]*\).*/\1/p" "$2" | head -n 1; }
positive() { awk -v v="$1" 'BEGIN { exit !(v > 0) }'; }

# The whole --quick lab three times (seed 1 twice, seed 2), every variant at
# once (--jobs); each scenario's part of the documents is checked below.
for run in 1 1b 2; do
	seed=${run%b}
	"$UJBD" lab --quick --json --seed="$seed" >"$tmp/all.$run" 2>"$tmp/all.$run.err" \
		|| bad "the lab, seed $seed: exit $?: $(tail -n 3 "$tmp/all.$run.err")"
done

# scenario | variants | metrics | metrics that must be > 0 | "seeded" when
# the seed moves its figures (its trees' sizes, its threads' interleaving;
# a single-threaded loop over fixed sizes gives the same figures)
check() {
	name=$1 variants=$2 metrics=$3 pos=$4 seeded=${5:-}
	for run in 1 1b 2; do
		jq -c --arg s "$name" '.scenarios[$s] | del(.thread)' "$tmp/all.$run" >"$tmp/$name.$run" 2>/dev/null \
			|| { bad "$name: not in the seed ${run%b} document"; return; }
	done
	tr -d ' \n' <"$tmp/$name.1" >"$tmp/$name.1s"
	cmp -s "$tmp/$name.1" "$tmp/$name.1b" || bad "$name: seed 1 twice: documents differ"
	[ -n "$seeded" ] && cmp -s "$tmp/$name.1" "$tmp/$name.2" \
		&& bad "$name: seeds 1 and 2 give the same document"
	grep -Eiq '[:,[](nan|-?inf|null)[],}]' "$tmp/$name.1s" \
		&& bad "$name: a non-finite figure: $(grep -Eio '"[a-z0-9_]*":(nan|-?inf|null)' "$tmp/$name.1s" | head -n 3)"
	grep -q '^{"variants":{' "$tmp/$name.1s" || bad "$name: no variants object"
	for v in $variants; do
		# the variant's object, up to the next variant
		sed -n "s/.*\"$v\":{\([^}]*\)}.*/\1/p" "$tmp/$name.1s" >"$tmp/v"
		[ -s "$tmp/v" ] || { bad "$name: variant $v missing"; continue; }
		for m in $metrics; do
			grep -q "\"$m\":" "$tmp/v" || bad "$name $v: no $m"
		done
		for m in $pos; do
			x=$(json_num "$m" "$tmp/v")
			positive "${x:-0}" || bad "$name $v: $m=${x:-absent}, want > 0"
		done
	done
}

check atime "be:4 rt:4 inherit" \
	"fg_latency_ms_avg fg_latency_ms_p99 fg_latency_ms_max copy_mb_s commits commit_ms_avg
	 fg_wait_transaction_ms_max fg_wait_buffer_ms_max fg_wait_log_space_ms_max fg_other_ms_max" \
	"fg_latency_ms_max copy_mb_s fg_ops" seeded
check morton "be:4 rt:4 inherit" \
	"linear_read_mb_s tree_read_s odirect_ops_s copy_mb_s seeks_s" \
	"linear_read_mb_s tree_read_s odirect_ops_s copy_mb_s seeks_s" seeded
check flush "wait-io copy" "flush_ms fg_latency_ms_max fg_journal_ms_max_0" \
	"fg_latency_ms_max_0 fg_latency_ms_max_1" seeded
check aim7 "needed always" \
	"jobs_per_min wakeups useless_wakeups transactions handles_per_transaction
	 blocks_per_transaction commit_us_avg waiting_ms_avg running_ms_avg locked_ms_avg
	 logging_ms_avg" \
	"jobs_per_min transactions" seeded
check smallfile "deadline cfq cfq+meta cfq+caller" "iozone_mb_s fsmark_files_s cfq_idles cfq_idle_ms_total" \
	"iozone_mb_s fsmark_files_s"
check fsync-loop "stock sync-implicit sync-explicit sync-noidle" \
	"total_ms ms_per_iteration cfq_idles cfq_idle_ms_total" "total_ms ms_per_iteration"

check writeout "sync-all sync-waited" \
	"read_latency_ms_avg read_latency_ms_max fsyncs_s writer_mb_s stream_read_mb_s" \
	"read_latency_ms_avg read_latency_ms_max fsyncs_s writer_mb_s stream_read_mb_s"

check checkpoint "be:4 rt:4 inherit" \
	"fg_latency_ms_p99 fg_latency_ms_max fg_txn_s bg_mb_s fg_tail_ops fg_tail_commit_ms
	 fg_tail_transaction_ms fg_tail_buffer_ms fg_tail_other_ms fg_tail_write_ms commits
	 commit_ms_avg logging_ms_avg flush_ms_avg inherit_boosts" \
	"fg_latency_ms_p99 fg_latency_ms_max fg_ops fg_txn_s bg_mb_s commits checkpoints"

# the blktrace excerpt of fsync-loop is in blkparse's format and names the
# commit thread and the program (fsync writes the file's data itself); it
# goes to --out only, never to the terminal's tables
"$UJBD" lab --scenario=fsync-loop --variant=stock --quick --out="$tmp/fl" >"$tmp/fl.txt" 2>&1 \
	|| bad "fsync-loop text exit $?"
for who in kjournald sqlite-fsync-te; do
	for f in "$tmp/fl/fsync-loop_stock_blktrace.txt" "$tmp/fl/report.txt"; do
		grep -Eq "^254,0 +0 +[0-9]+ +[0-9]+\.[0-9]{9} +[0-9]+ +Q +[A-Z]+ [0-9]+ \+ [0-9]+ \[$who\]\$" \
			"$f" || bad "fsync-loop: no blkparse line of [$who] in $f"
	done
done
grep -q '\[kjournald\]' "$tmp/fl.txt" && bad "fsync-loop: blktrace lines on stdout"

[ $fail -eq 0 ] && echo "PASS: lab scenarios"
exit $fail

#!/bin/sh
# ujbd devbench through the block layer: --elevator, --threads, --ioprio,
# --trace. The claim: two random readers on the sim HDD under
# cfq, one rt:4 and one be:4 -> the RT one is served first and the BE one
# waits (noop shares the disk evenly); the trace reads as blkparse output.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
"$UJBD" devbench --help 2>/dev/null | grep -q -- "--elevator" \
	|| skip "this ujbd devbench has no --elevator"
scratch devbench_blk

# thread_num N KEY FILE: KEY of the threads-list entry benchN
thread_num() {
	sed -n "s/.*\"name\":\"bench$1\",\([^}]*\)}.*/\1/p" "$3" |
		sed -n "s/.*\"$2\":\([-0-9.e]*\).*/\1/p"
}
awk_true() { awk "BEGIN { exit !($1) }"; }

# ---- bad arguments: exit 2, one line -----------------------------------------
for args in "--elevator=as" "--threads=0" "--threads=65" "--ioprio=rt:9" \
	"--ioprio=none" "--ioprio=rt:4,be:4 --threads=3" "--ioprio=" "--trace"; do
	# shellcheck disable=SC2086
	"$UJBD" devbench $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$args': exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$args': stderr is not one line"
	grep -q '^ujbd devbench: ' "$tmp/err" || bad "'$args': message: $(cat "$tmp/err")"
done
"$UJBD" devbench --ops=10 --trace="$tmp/nodir/t" >/dev/null 2>"$tmp/err"
rc=$?
# a trace file in a missing directory: the path is invalid input (ujbd(1)),
# and the message names it
[ $rc -eq 1 ] || bad "trace in a missing directory: exit $rc, want 1"
grep -q "'$tmp/nodir/t'" "$tmp/err" || bad "trace error does not name the trace: $(cat "$tmp/err")"

# ---- cfq: rt:4 served first, be:4 waits ---------------------------------------
"$UJBD" devbench --disk=hdd --pattern=rand --ops=600 --elevator=cfq \
	--ioprio=rt:4,be:4 --json >"$tmp/cfq" || bad "cfq run exit $?"
cat "$tmp/cfq"
grep -q '"elevator":"cfq","threads":\[{"name":"bench0","ioprio":"rt:4"' "$tmp/cfq" \
	|| bad "threads list / rt:4 entry missing"
grep -q '{"name":"bench1","ioprio":"be:4"' "$tmp/cfq" || bad "be:4 entry missing"
rt_iops=$(thread_num 0 iops "$tmp/cfq"); be_iops=$(thread_num 1 iops "$tmp/cfq")
rt_p50=$(thread_num 0 p50 "$tmp/cfq"); be_p50=$(thread_num 1 p50 "$tmp/cfq")
rt_ops=$(thread_num 0 ops "$tmp/cfq"); be_ops=$(thread_num 1 ops "$tmp/cfq")
echo "cfq: rt $rt_iops iops p50 $rt_p50 us; be $be_iops iops p50 $be_p50 us"
[ -n "$rt_iops" ] && [ -n "$be_iops" ] && [ -n "$rt_p50" ] && [ -n "$be_p50" ] \
	|| bad "per-thread numbers missing"
awk_true "$rt_ops + $be_ops == 600" || bad "ops $rt_ops + $be_ops != 600"
awk_true "$be_ops > 0" || bad "be reader never served"
awk_true "$rt_iops > 5 * $be_iops" || bad "rt iops $rt_iops not >> be $be_iops"
awk_true "$rt_p50 * 4 < $be_p50" || bad "rt p50 $rt_p50 not << be p50 $be_p50"
awk_true "$rt_iops > 60" || bad "rt reader $rt_iops iops: should have the disk nearly to itself"

# ---- noop: priorities ignored, the disk is shared ------------------------------
"$UJBD" devbench --disk=hdd --pattern=rand --ops=600 --elevator=noop \
	--ioprio=rt:4,be:4 --json >"$tmp/noop" || bad "noop run exit $?"
a=$(thread_num 0 iops "$tmp/noop"); b=$(thread_num 1 iops "$tmp/noop")
echo "noop: rt $a iops, be $b iops"
awk_true "$a < 1.4 * $b && $b < 1.4 * $a" || bad "noop not even: $a vs $b"

# ---- same seed, same bytes ------------------------------------------------------
"$UJBD" devbench --disk=hdd --pattern=rand --ops=600 --elevator=cfq \
	--ioprio=rt:4,be:4 --json >"$tmp/cfq2"
cmp -s "$tmp/cfq" "$tmp/cfq2" || bad "same seed, different output"

# ---- human output and the trace -------------------------------------------------
"$UJBD" devbench --ops=40 --threads=2 --elevator=deadline --trace="$tmp/trace" \
	>"$tmp/human" || bad "trace run exit $?"
grep -q 'elevator  deadline' "$tmp/human" || bad "human output lacks the elevator"
grep -q '^  bench1 ' "$tmp/human" || bad "human output lacks bench1"
lines=$(grep -c -E '^[ 0-9]{3},[0-9][ 0-9]{2} [ 0-9]{2} [ 0-9]{7}[0-9] [ 0-9]{4}[0-9]\.[0-9]{9} [ 0-9]{4}[0-9] [ A-Z][A-Z] [ A-Z]{0,2}[A-Z]+ ' "$tmp/trace")
[ "$lines" -ge 160 ] || bad "trace has $lines blkparse lines, want >= 160 (Q G I D C x 40)"
for a in Q G I D C; do
	n=$(awk -v a="$a" '$6 == a' "$tmp/trace" | wc -l)
	[ "$n" -eq 40 ] || bad "trace: $n '$a' events, want 40"
done
grep -q -E ' Q +R [0-9]+ \+ 8 \[bench0\]$' "$tmp/trace" || bad "trace lacks bench0's Q lines"
grep -q -E ' C +R [0-9]+ \+ 8 \[0\]$' "$tmp/trace" || bad "trace lacks C lines"
grep -q '^process ' "$tmp/trace" && grep -q '^class ' "$tmp/trace" \
	|| bad "trace lacks the per-process / per-class summary"

exit $fail

#!/bin/sh
# ujbd lab: usage errors (exit 2, one line "ujbd lab: ..."), lab fsck's exit
# statuses, --params lists the groups with the given values, and with the
# registered scenarios: --quick --json twice with one seed is byte-identical,
# two seeds differ, every metric is a finite number, and --out writes
# report.html, the JSON, the CSVs and the PNGs.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
command -v jq >/dev/null || skip "jq is missing (scripts/install-deps)"
scratch lab

# ---- help and bad arguments: exit 2, exactly one line ----------------------
"$UJBD" lab --help >"$tmp/help" 2>&1 || bad "--help exit $?"
grep -q -- "--scenario" "$tmp/help" || bad "--help does not list --scenario"
for args in "--bogus" "--jobs=0" "--jobs=x" "--seed=-1" "--seed=abc" "--disk=floppy" "--world=moon" \
	"--scenario=nosuch" "--variant=nosuch" "--nosuchgroup=a=1" "--hdd=novalue" \
	"--disk=file:$tmp/f" "extra" "--out=" "--hdd=seek_avg_ms=100" "--fs=nosuch=1" "--jbd=nosuch=1" "--jbd=wake=sometimes" "--cfq=slice_idle_ms*=x"; do
	# shellcheck disable=SC2086
	"$UJBD" lab $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$args': exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$args': stderr is not one line: $(cat "$tmp/err")"
	grep -q '^ujbd lab: ' "$tmp/err" || bad "'$args': message format: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && bad "'$args': wrote to stdout"
done

# ---- lab fsck: an image of zeros is no file system (exit 1, one line) --------
truncate -s 16M "$tmp/zero.img"
"$UJBD" lab fsck "$tmp/zero.img" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || bad "fsck of zeros: want exit 1"
grep -q "^ujbd lab: fsck: '$tmp/zero.img': " "$tmp/err" || bad "fsck message: $(cat "$tmp/err")"
"$UJBD" lab fsck "$tmp/missing.img" >/dev/null 2>&1
[ $? -eq 1 ] || bad "fsck of a missing file: want exit 1 (invalid input)"
"$UJBD" lab fsck >/dev/null 2>&1
[ $? -eq 2 ] || bad "fsck without IMAGE: want exit 2"

# ---- --params: every group, text and JSON -----------------------------------
"$UJBD" lab --params >"$tmp/params" || bad "--params exit $?"
"$UJBD" lab --params --json >"$tmp/params.json" || bad "--params --json exit $?"
jq -e . "$tmp/params.json" >/dev/null || bad "--params --json is not JSON"
for g in hdd ssd cfq deadline noop queue file fs jbd; do
	grep -q "^\[$g\]" "$tmp/params" || bad "--params lacks group $g"
	jq -e --arg g "$g" 'has($g)' "$tmp/params.json" >/dev/null || bad "--params --json lacks $g"
done
# a value set on the command line is the value printed
"$UJBD" lab --params --json --hdd=seek_avg_ms=9.5,rpm=5400 --fs=dirty_ratio=20 >"$tmp/p2.json" \
	|| bad "--params with lists exit $?"
jq -e '.hdd.seek_avg_ms.value == 9.5 and .hdd.rpm.value == 5400 and .fs.dirty_ratio.value == 20' \
	"$tmp/p2.json" >/dev/null || bad "--params does not show the given values"
# NAME*=F scales the value in force; the jbd group has its table
"$UJBD" lab --params --json --cfq='slice_idle_ms*=1.5' --jbd=commit_interval_ms=1000,wake=always \
	>"$tmp/p3.json" || bad "--params with *= exit $?"
jq -e '.cfq.slice_idle_ms.value == 12 and .jbd.commit_interval_ms.value == 1000 and
	.jbd.wake.value == "always"' "$tmp/p3.json" >/dev/null \
	|| bad "--params does not show the scaled and jbd values: $(jq -c '.cfq.slice_idle_ms, .jbd.wake' "$tmp/p3.json")"

# ---- the scenarios ------------------------------------------------------------
"$UJBD" lab --list >"$tmp/list" || bad "--list exit $?"
if [ ! -s "$tmp/list" ]; then
	[ $fail -eq 0 ] || exit 1
	echo "SKIP: no scenario registered yet (ujbd lab --list is empty); usage and --params checked"
	exit 77
fi

# Every scenario once (all present, finite, none failed); the byte-for-byte
# checks and --out on one scenario, run three more times (the whole --quick
# lab takes minutes on a loaded 2-core machine). LAB_TEST_SCENARIO picks it;
# default the last one listed.
one=${LAB_TEST_SCENARIO:-$(sed -n 's/^\([^ :][^ :]*\).*/\1/p' "$tmp/list" | tail -n 1)}
want=$(sed -n 's/^\([^ :][^ :]*\).*/\1/p' "$tmp/list")
sel=""
# Under ThreadSanitizer (make tsan) the whole --quick lab alone outlasts the
# suite's 900 s per test; every scenario runs the same runner, sim world and
# journal threads, so the three cheapest stand for all there.
case "${SAN:-}" in
*thread*) want="fsync-loop smallfile aim7" sel="--scenario=fsync-loop,smallfile,aim7" ;;
esac
# shellcheck disable=SC2086 # $sel is empty or one option
"$UJBD" lab --quick --json --seed=3 $sel >"$tmp/all.json" 2>"$tmp/all.err" \
	|| bad "the whole lab exit $?: $(tail -n 3 "$tmp/all.err")"
jq -e '.seed == 3 and (.params | type == "object") and (.scenarios | type == "object")' \
	"$tmp/all.json" >/dev/null || bad "document shape: $(head -c 300 "$tmp/all.json")"
for s in $want; do
	jq -e --arg s "$s" '.scenarios[$s].variants | length > 0' "$tmp/all.json" >/dev/null \
		|| bad "scenario $s has no variant in the document"
done
# every metric is a finite number (arrays: every element); JSON has no NaN
jq -e '[.scenarios[].variants[][] | if type == "array" then .[] else . end
	| select(type != "number")] | length == 0' "$tmp/all.json" >/dev/null \
	|| bad "a metric is not a number"
jq -e '[.scenarios[].failed | length] | add // 0 | . == 0' "$tmp/all.json" >/dev/null \
	|| bad "variants failed: $(jq -c '[.scenarios[] | .failed]' "$tmp/all.json")"

"$UJBD" lab --quick --json --seed=3 --scenario="$one" --out="$tmp/out.d" >"$tmp/a.json" \
	2>/dev/null || bad "$one --out exit $?"
"$UJBD" lab --quick --json --seed=3 --scenario="$one" --jobs=1 >"$tmp/b.json" 2>/dev/null \
	|| bad "$one run 2 exit $?"
"$UJBD" lab --quick --json --seed=4 --scenario="$one" >"$tmp/c.json" 2>/dev/null \
	|| bad "$one seed 4 exit $?"
cmp -s "$tmp/a.json" "$tmp/b.json" || bad "$one: the same seed gave different JSON (--jobs default vs 1)"
cmp -s "$tmp/a.json" "$tmp/c.json" && bad "$one: seeds 3 and 4 gave the same JSON"
cmp -s "$tmp/a.json" "$tmp/out.d/lab.json" || bad "$one: --out's lab.json is not the printed one"

# ---- --out ------------------------------------------------------------------
# an unwritable --out is said before anything runs: exit 3, one line, no report
mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
if [ ! -w "$tmp/ro" ]; then
	"$UJBD" lab --scenario="$one" --out="$tmp/ro/x" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 3 ] || bad "--out unwritable: exit $rc, want 3"
	[ -s "$tmp/out" ] && bad "--out unwritable: a report was printed (the run ran)"
	grep -q "^ujbd lab: --out: cannot create '$tmp/ro/x'" "$tmp/err" || bad "--out message: $(cat "$tmp/err")"
fi
jq -e '(.version | type == "string") and (.params_changed | type == "object")
	and ([.scenarios[].summary[] | .thread_figure == .seed_figure] | all)' "$tmp/a.json" \
	>/dev/null || bad "the document lacks version, params_changed or thread_figure"
tail -n 1 "$tmp/out.d/report.txt" | grep -q "^ujbd lab .*, seed 3: QUICK run" \
	|| bad "report.txt does not end with the closing line: $(tail -n 1 "$tmp/out.d/report.txt")"
grep -q "^== $one" "$tmp/out.d/report.txt" || bad "report.txt lacks '== $one'"
for f in report.html lab.json report.txt; do
	[ -s "$tmp/out.d/$f" ] || bad "--out did not write $f"
done
ls "$tmp/out.d"/*_metrics.csv >/dev/null 2>&1 || bad "--out wrote no metrics CSV"
if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
	ls "$tmp/out.d"/*.png >/dev/null 2>&1 || bad "--out wrote no PNG (gnuplot is there)"
	for p in $(sed -n 's/.*<img src="\([^"]*\)".*/\1/p' "$tmp/out.d/report.html"); do
		[ -s "$tmp/out.d/$p" ] || bad "report.html links a missing $p"
	done
else
	echo "SKIP (part): gnuplot missing, PNGs not checked"
fi
[ $fail -eq 0 ] && echo "lab.sh: ok"
exit $fail

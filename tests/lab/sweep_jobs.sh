#!/bin/sh
# scripts/lab-sweep's jobs: one small sweep (aim7 --quick, seeds 1 and 2,
# the jbd group moved +-20 %) gives the same table byte for byte run here
# through GNU parallel (SKIP, saying why, without it), run one job at a
# time (-j 1), run through xargs -P when parallel is not to be had (said
# once on stderr), and written with --joblist, run line by line from
# another directory as a Slurm array would (last line first) and merged.
# The job list: a self-contained sh command a line, as many as the
# manifest's jobs; --joblist again clears a DIR's old results. The merge:
# a job not run, one without a document, one with a variant failed and a
# document that is not JSON are each named on stderr, exit 4, the table made
# of the rest; a DIR with no job list exits 3.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
command -v jq >/dev/null || skip "jq is missing (scripts/install-deps)"
# The runner is shell and jq around `ujbd lab` runs that lab.sh checks under
# a sanitizer already; its 88 lab runs take minutes there.
case "${SAN:-}" in *sanitize*) skip "a sanitizer build (SAN=$SAN); the plain build runs this test" ;; esac
UJBD=$(cd "$(dirname "$UJBD")" && pwd)/$(basename "$UJBD")
export UJBD
sweep=$(cd "$SRCDIR" && pwd)/scripts/lab-sweep
scratch sweep_jobs
set -- --seeds=1,2 --vary=jbd --scenario=aim7 --quick
moved=$("$UJBD" lab --params --json |
	jq '[.jbd | to_entries[] | select(.value.value | type == "number" and . != 0)] | length')
n=$((2 + 2 * moved))

# ---- the job list, run as a Slurm array would, and merged -------------------
"$sweep" "$@" --joblist="$tmp/list" >"$tmp/list.out" 2>"$tmp/list.err" || bad "--joblist exit $?: $(cat "$tmp/list.err")"
[ -s "$tmp/list.out" ] && bad "--joblist printed on stdout: $(cat "$tmp/list.out")"
[ "$(wc -l <"$tmp/list/jobs")" -eq $n ] || bad "jobs: $(wc -l <"$tmp/list/jobs"), want $n"
[ "$(wc -l <"$tmp/list/manifest")" -eq $n ] || bad "manifest: $(cat "$tmp/list/manifest")"
[ "$(grep -c "^(cd $tmp/list || exit 3; .* $UJBD lab --json --jobs=1 --quick --scenario=aim7 " "$tmp/list/jobs")" -eq $n ] ||
	bad "job lines: $(cat "$tmp/list/jobs")"
grep -q "sbatch --array=1-$n .*SLURM_ARRAY_TASK_ID.*$tmp/list/jobs" "$tmp/list.err" || bad "no sbatch line: $(cat "$tmp/list.err")"
grep -q -- "--merge=$tmp/list" "$tmp/list.err" || bad "no merge line: $(cat "$tmp/list.err")"
# nothing ran yet: every job is missing
"$sweep" --merge="$tmp/list" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 4 ] || bad "merge before the jobs: exit $rc, want 4"
[ "$(grep -c '^lab-sweep: job aim7 .*: missing' "$tmp/err")" -eq $n ] || bad "merge before the jobs: $(cat "$tmp/err")"
start=$(date +%s)
i=$n
while [ $i -ge 1 ]; do
	(cd / && SLURM_ARRAY_TASK_ID=$i && sed -n "${SLURM_ARRAY_TASK_ID}p" "$tmp/list/jobs" | sh) 2>>"$tmp/jobs.err" ||
		bad "job $i exit $?: $(sed -n "${i}p" "$tmp/list/jobs")"
	i=$((i - 1))
done
echo "the list's $n jobs one at a time: $(($(date +%s) - start)) s"
"$sweep" --merge="$tmp/list" >"$tmp/list.table" 2>"$tmp/err" || bad "merge exit $?: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && bad "merge said: $(cat "$tmp/err")"
[ "$(grep -c '^aim7 ' "$tmp/list.table")" -ge 1 ] || bad "merged table: $(cat "$tmp/list.table")"
grep -q "of $((2 * moved)) flip" "$tmp/list.table" || bad "moves not counted: $(cat "$tmp/list.table")"

# ---- the same table from every runner ----------------------------------------
same() { # NAME: the run's table is the list's, and it said how it ran
	cmp -s "$tmp/list.table" "$tmp/$1.out" || bad "$1: the table differs: $(diff "$tmp/list.table" "$tmp/$1.out")"
}
start=$(date +%s)
"$sweep" "$@" -j 1 --out="$tmp/serial" >"$tmp/serial.out" 2>"$tmp/serial.err" || bad "-j 1 exit $?: $(tail -3 "$tmp/serial.err")"
echo "a run here, -j 1: $(($(date +%s) - start)) s"
same serial
grep -q "one at a time" "$tmp/serial.err" || bad "-j 1: $(cat "$tmp/serial.err")"
cmp -s "$tmp/list/manifest" "$tmp/serial/manifest" || bad "the manifests differ"

if parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
	start=$(date +%s)
	"$sweep" "$@" -j 2 >"$tmp/parallel.out" 2>"$tmp/parallel.err" || bad "-j 2 exit $?: $(tail -3 "$tmp/parallel.err")"
	echo "a run here, -j 2 through GNU parallel: $(($(date +%s) - start)) s"
	same parallel
	grep -q "2 at a time through GNU parallel" "$tmp/parallel.err" || bad "parallel: $(cat "$tmp/parallel.err")"
else
	echo "SKIP (part): GNU parallel is not installed (scripts/install-deps): its run is not compared"
fi

LAB_SWEEP_PARALLEL='' "$sweep" "$@" --jobs=2 >"$tmp/xargs.out" 2>"$tmp/xargs.err" || bad "xargs exit $?: $(tail -3 "$tmp/xargs.err")"
same xargs
[ "$(grep -c 'no GNU parallel' "$tmp/xargs.err")" -eq 1 ] || bad "xargs: not said once: $(cat "$tmp/xargs.err")"

# ---- the merge's failures --------------------------------------------------------
cp -R "$tmp/list" "$tmp/f"
merge_fails() { # WHAT PATTERN: exit 4, the table of the rest, PATTERN on stderr
	"$sweep" --merge="$tmp/f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 4 ] || bad "$1: exit $rc, want 4"
	{ grep -q '^scenario ' "$tmp/out" && grep -q '^aim7 ' "$tmp/out"; } || bad "$1: no table: $(cat "$tmp/out")"
	grep -q "$2" "$tmp/err" || bad "$1: not named: $(cat "$tmp/err")"
}
rm "$tmp/f/aim7/seed2.json" "$tmp/f/aim7/seed2.rc"
merge_fails "a job not run" '^lab-sweep: job aim7 seed2: missing'
grep -q ' [01]/1 ' "$tmp/out" || bad "a job not run: seeds not 1 of 1: $(cat "$tmp/out")"
echo 3 >"$tmp/f/aim7/seed2.rc"
merge_fails "a failed job" "^lab-sweep: job aim7 seed2: no document (exit 3): see $tmp/f/aim7/seed2.err"
j=$(sed -n 3p "$tmp/f/manifest" | cut -f1)
echo 1 >"$tmp/f/aim7/$j.rc"
merge_fails "a variant failed" "^lab-sweep: job aim7 $j: a variant failed (exit 1"
echo '{"scenarios": ' >"$tmp/f/aim7/$j.json"
merge_fails "a broken document" "^lab-sweep: job aim7 $j: .* is not a lab document"
grep -q "3 of $n jobs missing or failed" "$tmp/err" || bad "no count: $(cat "$tmp/err")"
"$sweep" --merge="$tmp" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] || bad "--merge of a directory without a job list: exit $rc, want 3"
# a job list written again over old results clears them
"$sweep" "$@" --joblist="$tmp/f" 2>/dev/null || bad "--joblist again: exit $?"
[ -e "$tmp/f/aim7/seed1.json" ] && bad "--joblist again left seed1.json"
"$sweep" --merge="$tmp/f" >/dev/null 2>"$tmp/err"
[ "$(grep -c ': missing' "$tmp/err")" -eq $n ] || bad "--joblist again: $(cat "$tmp/err")"

[ $fail -eq 0 ] && echo "lab-sweep jobs: ok"
exit $fail

#!/bin/sh
# Reproducing one crash point by hand, as docs/crash.md tells: every
# documented command line that names a CRASH_POINT must run and pass, and a
# point the run does not have must fail, listing the points it has (one of
# which then runs). The documented reproducer once named a point that did
# not exist and "failed" with 0 images checked.
. "${SRCDIR:-.}/tests/lib.sh"
DOC=$SRCDIR/docs/crash.md
T=$BUILD/tests/crash/test_crash_ordered
[ -x "$T" ] || skip "no test binary at $T"
[ -r "$DOC" ] || skip "no $DOC"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The documented reproducers: indented lines "CRASH_... build/tests/crash/x".
n=0
grep -E '^    CRASH_[A-Z_]+=.*CRASH_POINT=[0-9]+ build/tests/crash/test_crash_' "$DOC" |
	sed -e 's/#.*//' -e "s|build/|$BUILD/|" >"$out.cmds"
while read -r line; do
	n=$((n + 1))
	env $line >"$out" 2>&1 || { bad "documented '$line' fails:"; tail -n 5 "$out"; }
	grep -q ' [1-9][0-9]* images checked' "$out" || bad "documented '$line' checked no image"
done <"$out.cmds"
rm -f "$out.cmds"
[ "$n" -ge 1 ] || bad "$DOC documents no CRASH_POINT reproducer"

# A point this run does not have: a failure that lists the valid points.
CRASH_TEST=ordered_csum_v3 CRASH_SEED=1 CRASH_POINT=999999 "$T" >"$out" 2>&1 &&
	bad "CRASH_POINT=999999 passed"
grep -q 'CRASH_POINT=999999 is not a crash point of ordered_csum_v3 seed 1; its [0-9]* points are:' "$out" ||
	{ bad "no list of the valid points:"; cat "$out"; }
p=$(sed -n 's/.*points are: \([0-9]*\) \([0-9]*\) .*/\2/p' "$out" | head -n 1)
[ -n "$p" ] || bad "cannot read a valid point from the list"
if [ -n "$p" ]; then
	CRASH_TEST=ordered_csum_v3 CRASH_SEED=1 CRASH_POINT=$p "$T" >"$out" 2>&1 ||
		{ bad "listed point $p fails:"; tail -n 5 "$out"; }
	grep -q '1 crash points' "$out" || bad "listed point $p: not exactly one crash point checked"
fi
[ $fail -eq 0 ] && echo "ok: $n documented reproducer(s) run; a wrong point lists the valid ones"
exit $fail

#!/bin/sh
# tests/run -j N runs N tests at once, each with its own log, and prints
# the same lines as a serial run, in the order given, with the same
# closing line; a failing test's log is shown under its line.
set -u
SRCDIR=${SRCDIR:-.}
RUN="$SRCDIR/tests/run"
T=$(mktemp -d /tmp/ujbd-runj.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*"; exit 1; }
for i in 1 2 3 4; do printf 'sleep 2; echo out%s\n' $i > "$T/p$i.sh"; done
printf 'echo broken-here; exit 3\n' > "$T/f.sh"
printf 'echo "SKIP: nothing"; exit 77\n' > "$T/s.sh"
start=$(date +%s)
sh "$RUN" -j 4 "$T/p1.sh" "$T/f.sh" "$T/p2.sh" "$T/s.sh" "$T/p3.sh" "$T/p4.sh" > "$T/out" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
[ $rc -ne 0 ] || die "a failing test, exit 0"
tail -n 1 "$T/out" | grep -qx "4 passed, 1 failed, 1 skipped" || die "closing line: $(tail -n 1 "$T/out")"
grep -E '^(PASS|FAIL|SKIP)' "$T/out" | sed -E 's/ .*//; s/:$//' | tr '\n' ' ' > "$T/order"
grep -q "PASS FAIL PASS SKIP PASS PASS" "$T/order" || die "order: $(cat "$T/order")"
grep -q "^PASS $T/p1.sh (" "$T/out" || die "line shape: $(cat "$T/out")"
grep -A1 "^FAIL $T/f.sh" "$T/out" | grep -q "    broken-here" || die "the failing log: $(cat "$T/out")"
[ $secs -lt 7 ] || die "4 tests of 2 s with -j 4 took ${secs}s: not in parallel"
sh "$RUN" "$T/p1.sh" "$T/s.sh" > "$T/out1" 2>&1 || die "serial run"
tail -n 1 "$T/out1" | grep -qx "1 passed, 0 failed, 1 skipped" || die "serial closing line"
echo "PASS: tests/run -j"

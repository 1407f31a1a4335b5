#!/bin/sh
# bench/replay, a smoke run (QUICK=1: a 256 MiB image, 3 x 200 blocks, one
# repetition, the page cache left alone): it builds both images, runs
# e2fsck, ujbd recover and recovery at open on fresh copies, and exits 0
# only if every result equals e2fsck's outside the superblocks; the table
# has a row per journal and system. Speed is not judged here.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
for c in bash mke2fs e2fsck dumpe2fs debugfs cmp cc; do
	command -v $c >/dev/null 2>&1 || skip "$c not installed"
done
scratch replaysh
UJBD=$UJBD QUICK=1 WARM=1 BENCH_DIR=$tmp bash "$SRCDIR/bench/replay" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; echo "FAIL: bench/replay exited $rc"; exit 1; }
for kind in distinct same; do
	for sys in e2fsck ujbd open; do
		grep -Eq "^$kind +$sys +[0-9.]+ " "$tmp/out" || { echo "FAIL: no row for $kind $sys"; fail=1; }
	done
done
grep -q "page cache is not dropped" "$tmp/out" || { echo "FAIL: the header does not say warm"; fail=1; }
grep -q "every result equals e2fsck's" "$tmp/out" || { echo "FAIL: no comparison line"; fail=1; }
[ $fail -eq 0 ] || { cat "$tmp/out"; exit 1; }
echo "PASS: bench/replay smoke run"

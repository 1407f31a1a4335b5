#!/bin/sh
# bench/lab-real.sh's pieces, small: bench/labload.c builds warning-free,
# each load prints its JSON object with the lab's metric names and sane
# values on a temporary directory, usage errors exit 2, an I/O error exits 1
# naming the file; and the script without root says so, exits 0 and makes
# nothing. The loop device, ext4 and the schedulers are bench/lab-real.sh's
# own business (a benchmark: it measures, it is not a test).
. "${SRCDIR:-.}/tests/lib.sh"
command -v cc >/dev/null || skip "no C compiler"
command -v jq >/dev/null || skip "jq is missing (scripts/install-deps)"
scratch labload
# ok FILE EXPR: jq -e EXPR on FILE
ok() { jq -e "$2" "$1" >/dev/null 2>&1 || bad "$1: not $2: $(cat "$1")"; }

L=$tmp/labload
cc -std=c11 -O2 -Wall -Wextra -Werror -o "$L" "$SRCDIR/bench/labload.c" || { echo "FAIL: labload does not build"; exit 1; }

# ---- each load -----------------------------------------------------------------
"$L" tree "$tmp/src" 60 1 >"$tmp/t1" || bad "tree exit $?"
ok "$tmp/t1" '.files == 60 and .bytes >= 60 * 4096 and .bytes <= 60 * 65536'
"$L" tree "$tmp/src2" 60 1 >"$tmp/t2" || bad "tree again exit $?"
cmp -s "$tmp/t1" "$tmp/t2" || bad "the same seed gave other sizes"
[ -f "$tmp/src/d001/f0059" ] || bad "tree: no d001/f0059 (50 files a directory)"
"$L" copy "$tmp/src" "$tmp/copy" 0.3 >"$tmp/c" || bad "copy exit $?"
ok "$tmp/c" '.copy_mb_s > 0 and .loops >= 1'
[ -d "$tmp/copy0" ] && [ -d "$tmp/copy1" ] && bad "copy: both copies left (rm -rf of the previous one)"
"$L" read "$tmp/src" 60 0.2 5 >"$tmp/r" || bad "read exit $?"
ok "$tmp/r" '.fg_ops >= 10 and .fg_ops <= 60 and .fg_latency_ms_avg > 0
	and .fg_latency_ms_p50 <= .fg_latency_ms_p99 and .fg_latency_ms_p99 <= .fg_latency_ms_max'
mkdir "$tmp/sf"
"$L" smallfile "$tmp/sf" 3 5 >"$tmp/s" || bad "smallfile exit $?"
ok "$tmp/s" '.iozone_mb_s > 0 and .fsmark_files_s > 0'
[ "$(stat -c %s "$tmp/sf/iozone.tmp")" = 65536 ] || bad "smallfile: iozone's file is not 64 KiB"
[ "$(ls "$tmp/sf" | grep -c '^fsm')" = 5 ] || bad "smallfile: not 5 fs_mark files"
"$L" fsync-loop "$tmp/sf" 5 >"$tmp/f" || bad "fsync-loop exit $?"
ok "$tmp/f" '.total_ms > 0 and (.ms_per_iteration * 5 - .total_ms | fabs) < 0.001'

# ---- errors ------------------------------------------------------------------------
for args in "" "bogus" "tree $tmp/x" "copy a b 0" "read $tmp/src 0 1 5" "smallfile $tmp x 1" \
	"fsync-loop $tmp -1"; do
	# shellcheck disable=SC2086
	"$L" $args >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] || bad "'$args': want exit 2"
	grep -q '^usage: labload' "$tmp/err" || bad "'$args': no usage line"
done
"$L" read "$tmp/nosuch" 5 0.1 5 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || bad "read of a missing tree: want exit 1"
grep -q "^labload: cannot stat '$tmp/nosuch/d000/f0000': " "$tmp/err" || bad "message: $(cat "$tmp/err")"

# ---- the script without root: says so, exits 0, makes nothing ---------------------
if [ "$(id -u)" -ne 0 ]; then
	sh "$SRCDIR/bench/lab-real.sh" >"$tmp/out" 2>&1 || bad "without root: exit $?"
	grep -q "needs root" "$tmp/out" || bad "without root: $(cat "$tmp/out")"
elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups \
	test -r "$SRCDIR/bench/lab-real.sh"; then
	before=$(losetup -a | wc -l)
	TMPDIR=$tmp setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash "$SRCDIR/bench/lab-real.sh" >"$tmp/out" 2>&1 || bad "as nobody: exit $?"
	grep -q "^bench/lab-real.sh: needs root .*did nothing$" "$tmp/out" || bad "as nobody: $(cat "$tmp/out")"
	[ "$(losetup -a | wc -l)" = "$before" ] || bad "as nobody: a loop device appeared"
	ls "$tmp" | grep -q ujbd-labreal && bad "as nobody: it made a work directory"
else
	echo "SKIP (part): cannot run the script as another user here"
fi

[ $fail -eq 0 ] && echo "lab_real.sh: ok"
exit $fail

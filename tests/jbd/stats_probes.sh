#!/bin/sh
# USDT probes: every trace event of src/jbd/jtrace.h is a stapsdt note of
# provider "ujbd" (what perf and bpftrace attach to). test_stats fires each
# of the 15 events once, so its binary must carry all 15; once the journal
# runtime is linked into the ujbd binary (ujbd_open defined), the runtime
# fires every one of them too, so the ujbd binary must carry all 15.
set -u
BUILD=${BUILD:-build}
UJBD=${UJBD:-$BUILD/ujbd}
T=$BUILD/tests/jbd/test_stats
command -v readelf >/dev/null 2>&1 || { echo "SKIP: no readelf (binutils)"; exit 77; }
[ -x "$T" ] || { echo "SKIP: no test binary at $T"; exit 77; }
# The Makefile's own test: without sys/sdt.h the build has no probes.
printf '#include <sys/sdt.h>\n' | ${CC:-cc} -E -x c - >/dev/null 2>&1 ||
	{ echo "SKIP: no sys/sdt.h (systemtap-sdt-dev): built without USDT probes"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

EVENTS="jbd2_start_commit jbd2_commit_locking jbd2_commit_flushing
jbd2_commit_logging jbd2_end_commit jbd2_drop_transaction jbd2_run_stats
jbd2_checkpoint jbd2_checkpoint_stats jbd2_update_log_tail
jbd2_write_superblock jbd2_handle_start jbd2_handle_extend jbd2_handle_stats
jbd2_lock_buffer_stall"

# probes BINARY: "provider name" per stapsdt note
probes() {
	readelf -n "$1" 2>/dev/null | awk '/Provider:/ { p = $2 } /Name:/ { print p, $2 }' | sort -u
}

probes "$T" >"${TMPDIR:-/tmp}/probes.$$"
for e in $EVENTS; do
	grep -qx "ujbd $e" "${TMPDIR:-/tmp}/probes.$$" || bad "no USDT probe ujbd:$e in $T"
done
n=$(grep -c '^ujbd ' "${TMPDIR:-/tmp}/probes.$$")
[ "$n" -eq 15 ] || bad "$T has $n distinct ujbd probes, want 15"
readelf -n "$T" | grep -q 'NT_STAPSDT' || bad "no NT_STAPSDT notes in $T"
rm -f "${TMPDIR:-/tmp}/probes.$$"

if [ -x "$UJBD" ] && nm "$UJBD" 2>/dev/null | grep -q ' T ujbd_open$'; then
	p=$(probes "$UJBD")
	for e in $EVENTS; do
		echo "$p" | grep -qx "ujbd $e" || bad "no USDT probe ujbd:$e in $UJBD"
	done
else
	echo "note: $UJBD has no journal runtime yet; checked $T only"
fi
[ $fail -eq 0 ] && echo "ok: USDT probes present"
exit $fail

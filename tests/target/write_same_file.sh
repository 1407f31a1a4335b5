#!/bin/sh
# A standalone journal whose data device is its own file (issue 12, item
# 2): the journal is the file's first s_maxlen blocks, the blocks after it
# are data. `ujbd write` refuses a block inside the journal (exit 1, one
# line, nothing written) and writes one after it, which `ujbd recover`
# then replays (it used to refuse the journal: every block of the file
# counted as the journal's).
set -u
[ -n "${UJBD:-}" ] && [ -x "$UJBD" ] || { echo "SKIP: UJBD not set"; exit 77; }
T=$(mktemp -d /tmp/ujbd-samefile.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

J=$T/j.img
"$UJBD" format "$J" --size=64k --block-size=1024 >/dev/null || die "format"
truncate -s 128k "$J" || die "truncate"
head -c 1024 /dev/zero | tr '\0' a > "$T/a"
before=$(sha256sum < "$J")

"$UJBD" write "$J" --data="$J" --block=3:"$T/a" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 1 ] || die "write of journal block 3: exit $rc, want 1"
[ "$(wc -l < "$T/err")" -eq 1 ] || die "write of journal block 3: not one line: $(cat "$T/err")"
grep -q "block 3 is inside the journal" "$T/err" || die "message: $(cat "$T/err")"
[ "$(sha256sum < "$J")" = "$before" ] || die "a refused write changed the file"

"$UJBD" write "$J" --data="$J" --block=100:"$T/a" > /dev/null 2> "$T/err" \
	|| die "write of block 100 (after the journal): $(cat "$T/err")"
"$UJBD" recover "$J" --data="$J" > /dev/null 2> "$T/err" || die "recover: $(cat "$T/err")"
cmp -s -i 0:$((100 * 1024)) -n 1024 "$T/a" "$J" || die "block 100 does not hold what was written"
echo "ok: same-file journal: block 3 refused, block 100 written and replayed"

#!/bin/sh
# A truncated ext4 image (shorter than its superblock says) is invalid
# input for every journal verb: exit 1, one line naming the image, where it
# ends and the blocks missing, and nothing written. Before the check,
# `recover` said "short read" with exit 3 when the cut fell before the
# journal, and replayed (growing the file) when it fell after it.
set -u
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ -n "${UJBD:-}" ] && [ -x "$UJBD" ] || skip "UJBD not set or not executable"
for t in mke2fs debugfs sha256sum; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed"
done
T=$(mktemp -d /tmp/ujbd-trunc.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

# verb_refuses VERB IMG MISSING [ARGS...]: exit 1, one stderr line, the file
# unchanged.
verb_refuses() {
	verb=$1 img=$2 missing=$3
	shift 3
	before=$(sha256sum < "$img")
	"$UJBD" "$verb" "$img" "$@" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/err" >&2; die "$verb: exit $rc, want 1"; }
	[ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err" >&2; die "$verb: not one line"; }
	grep -q "^ujbd $verb: truncated image: '$img': it ends at byte [0-9]*, .*($missing missing)\$" \
		"$T/err" || { cat "$T/err" >&2; die "$verb: message"; }
	[ "$(sha256sum < "$img")" = "$before" ] || die "$verb wrote to the truncated image"
}

img=$T/fs.img
mke2fs -q -F -t ext4 -b 4096 "$img" 32M >/dev/null 2>&1 || die "mke2fs"
head -c 4096 /dev/zero | tr '\0' A > "$T/a.blk"
"$UJBD" write "$img" --block=8000:"$T/a.blk" > /dev/null || die "ujbd write"
cp "$img" "$T/full.img"
# cut inside the metadata (before the journal), then inside the data
for cut in 65536 31M; do
	cp "$T/full.img" "$img"
	truncate -s $cut "$img"
	case $cut in
	65536) missing="blocks 16-8191" ;;
	31M) missing="blocks 7936-8191" ;;
	esac
	verb_refuses recover "$img" "$missing"
	verb_refuses write "$img" "$missing" --block=7000:"$T/a.blk"
	verb_refuses info "$img" "$missing"
	verb_refuses dump "$img" "$missing"
done
# the whole image recovers
"$UJBD" recover "$T/full.img" > /dev/null || die "recover of the whole image"
echo "ok: truncated images refused with exit 1, nothing written"

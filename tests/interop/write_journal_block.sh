#!/bin/sh
# `ujbd write` on an ext4 image refuses a block of the journal inode (issue
# 12, item 2): exit 1, one line naming the block, the image unchanged. It
# used to write it, and the next recovery (ujbd's, like the kernel's)
# refused the whole journal, losing every transaction still in the log.
. "$SRCDIR/tests/interop/interop.lib"
need

img=$T/j.img
mkimg "$img" 1024 "" 8M
jb=$(debugfs -R "bmap <8> 5" "$img" 2>/dev/null | tr -dc '0-9')
[ -n "$jb" ] || die "no block 5 in the journal inode"
fill "$T/a" 1024 A
before=$(sha256sum < "$img")
"$UJBD" write "$img" --block=$jb:"$T/a" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 1 ] || die "write of journal block $jb: exit $rc, want 1"
[ "$(wc -l < "$T/err")" -eq 1 ] || die "not one line: $(cat "$T/err")"
grep -q "block $jb is inside the journal" "$T/err" || die "message: $(cat "$T/err")"
[ "$(sha256sum < "$img")" = "$before" ] || die "a refused write changed the image"
has_feature "$img" needs_recovery && die "a refused write set needs_recovery"
echo "ok: journal block $jb refused, image unchanged"

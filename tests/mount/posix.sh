#!/bin/sh
# POSIX behaviour of ujbd mount (tests/mount/posix.py: errno of refused
# cases, times, link counts, rename rules, symlinks, xattrs), then the
# image clean after unmount.
. "${SRCDIR:-.}/tests/mount/mount.lib"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
img=$T/fs.img
mke2fs -q -F -t ext4 -b 4096 "$img" 64M >/dev/null 2>&1 || die "mke2fs"
mnt "$img" "$T/m"
python3 "${SRCDIR:-.}/tests/mount/posix.py" "$T/m" > "$T/out" 2>&1; prc=$?
umnt "$T/m"
[ $prc -eq 0 ] || { cat "$T/out" >&2; die "POSIX checks"; }
fsck_clean "$img"
echo "ok: $(tail -1 "$T/out") of the POSIX checks; e2fsck clean"

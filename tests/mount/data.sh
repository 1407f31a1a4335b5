#!/bin/sh
# File data through a mounted image: a fallocate alone, over block groups
# nothing else touches, leaves their bitmaps journaled (e2fsck clean).
. "${SRCDIR:-.}/tests/mount/mount.lib"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
img=$T/fs.img
mke2fs -q -F -t ext4 -b 4096 "$img" 512M >/dev/null 2>&1 || die "mke2fs"
# libext2fs 1.47.0 does not say which groups its fallocate took
mnt "$img" "$T/m"
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.posix_fallocate(fd, 0, 150 << 20)
os.close(fd)' "$T/m/big" || die "fallocate 150 MiB"
umnt "$T/m"
fsck_clean "$img"
echo "ok: a 150 MiB fallocate alone: e2fsck clean"

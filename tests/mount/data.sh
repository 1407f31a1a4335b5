#!/bin/sh
# File data through a mounted image: a fallocate alone, over block groups
# nothing else touches, leaves their bitmaps journaled (e2fsck clean); then
# data read back as written (tests/mount/data.py: blocks newer in the
# journal than at home, partial overwrites, holes, unwritten extents,
# random writes against a model), the image clean after unmount, the same
# bytes after a remount and, as root, through the kernel (a loop mount).
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
mnt "$img" "$T/m"
python3 "${SRCDIR:-.}/tests/mount/data.py" "$T/m" "${SEED:-1}" > "$T/out" 2>&1; prc=$?
(cd "$T/m" && sha256sum j o h t u x r1 r2) > "$T/sums" || die "sha256sum"
umnt "$T/m"
[ $prc -eq 0 ] || { cat "$T/out" >&2; die "data checks"; }
fsck_clean "$img"
mnt "$img" "$T/m"
(cd "$T/m" && sha256sum -c --quiet "$T/sums") || die "after a remount, the files differ"
umnt "$T/m"
how="remount"
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	LOOPMNT=$T/k
	mkdir -p "$LOOPMNT"
	if mount -o loop,ro "$img" "$LOOPMNT" 2>/dev/null; then
		(cd "$LOOPMNT" && sha256sum -c --quiet "$T/sums") || die "through the kernel, the files differ"
		umount "$LOOPMNT"
		how="remount and kernel ext4"
	fi
fi
fsck_clean "$img"
echo "ok: $(tail -1 "$T/out"); e2fsck clean; the same bytes after a $how"

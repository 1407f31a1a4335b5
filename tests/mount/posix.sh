#!/bin/sh
# POSIX behaviour of ujbd mount (tests/mount/posix.py: errno of refused
# cases, times, link counts, rename rules, symlinks, xattrs), then the
# image clean after unmount. Twice: once with no file given a second name
# (the kernel caches attributes all the way), once with hard links (the
# daemon stops that cache at the first); then an image that holds hard
# links before the mount.
. "${SRCDIR:-.}/tests/mount/mount.lib"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
for mode in nolinks links; do
	img=$T/fs-$mode.img
	mke2fs -q -F -t ext4 -b 4096 "$img" 64M >/dev/null 2>&1 || die "mke2fs"
	mnt "$img" "$T/m"
	python3 "${SRCDIR:-.}/tests/mount/posix.py" "$T/m" $mode > "$T/out" 2>&1; prc=$?
	umnt "$T/m"
	[ $prc -eq 0 ] || { cat "$T/out" >&2; die "POSIX checks ($mode)"; }
	fsck_clean "$img"
	echo "ok ($mode): $(tail -1 "$T/out") of the POSIX checks; e2fsck clean"
done

# Two names of one file made offline: the kernel's first sight of it is
# already a file of two names.
img=$T/fs-pre.img
mke2fs -q -F -t ext4 -b 4096 "$img" 64M >/dev/null 2>&1 || die "mke2fs"
printf abc > "$T/abc"
debugfs -w -R "write $T/abc pa" "$img" >/dev/null 2>&1 || die "debugfs write"
debugfs -w -R "ln pa pb" "$img" >/dev/null 2>&1 || die "debugfs ln"
debugfs -w -R "sif pa links_count 2" "$img" >/dev/null 2>&1 || die "debugfs sif"
fsck_clean "$img"
mnt "$img" "$T/m"
python3 - "$T/m" > "$T/out" 2>&1 <<'PY'; prc=$?
import os, stat, sys
m = sys.argv[1]
a, b = os.path.join(m, "pa"), os.path.join(m, "pb")
bad = []
if os.stat(b).st_nlink != 2 or os.stat(a).st_size != 3:
    bad.append("two names made offline: nlink %d size %d" % (os.stat(b).st_nlink, os.stat(a).st_size))
with open(a, "ab") as f:
    f.write(b"defg")
if os.stat(b).st_size != 7:
    bad.append("size written through pa, seen through pb: %d" % os.stat(b).st_size)
os.chmod(b, 0o640)
if stat.S_IMODE(os.stat(a).st_mode) != 0o640:
    bad.append("mode set through pb, seen through pa: %o" % stat.S_IMODE(os.stat(a).st_mode))
os.unlink(a)
if os.stat(b).st_nlink != 1:
    bad.append("nlink through pb after pa went: %d" % os.stat(b).st_nlink)
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
PY
umnt "$T/m"
[ $prc -eq 0 ] || { cat "$T/out" >&2; die "a file of two names made offline"; }
fsck_clean "$img"
echo "ok: a file of two names made offline reads the same through both"

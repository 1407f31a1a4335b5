#!/bin/sh
# ujbd mount: a tree written through FUSE, unmounted: the journal empty,
# needs_recovery clear, e2fsck clean, the same files after a second mount
# (and through the kernel's own ext4 when root can loop-mount). Then the
# refusals, one line each, exit 1, the image unchanged.
. "${SRCDIR:-.}/tests/mount/mount.lib"
img=$T/fs.img
mke2fs -q -F -t ext4 -b 4096 "$img" 64M >/dev/null 2>&1 || die "mke2fs"
M=$T/m
mnt "$img" "$M"
needs_recovery "$img" || die "needs_recovery not set while mounted"
mkdir -p "$M/a/b/c" || die mkdir
echo hello > "$M/a/f" || die create
head -c 3000000 /dev/urandom > "$T/big"
cp "$T/big" "$M/a/b/big" || die "cp big"
ln -s ../f "$M/a/b/l" || die symlink
ln "$M/a/f" "$M/a/b/c/hard" || die link
mv "$M/a/b/c" "$M/c2" || die rename
for i in $(seq 1 300); do echo "$i" > "$M/a/n$i"; done
rm "$M/a/n1"* || die unlink
truncate -s 1000 "$M/a/b/big" || die truncate
setfattr -n user.k -v v "$M/a/f" 2>/dev/null || true
(cd "$M" && find . | sort > "$T/tree1" && find . -type f | sort | xargs md5sum > "$T/sums1")
umnt "$M"
fsck_clean "$img"
needs_recovery "$img" && die "needs_recovery left set after unmount"
"$UJBD" info "$img" > "$T/info" || die "ujbd info"
grep -qi "needs recovery: *no\|empty" "$T/info" || { cat "$T/info"; die "journal not empty"; }
mnt "$img" "$M"
(cd "$M" && find . | sort > "$T/tree2" && find . -type f | sort | xargs md5sum > "$T/sums2")
cmp -s "$T/tree1" "$T/tree2" || die "tree differs after remount"
cmp -s "$T/sums1" "$T/sums2" || die "contents differ after remount"
[ "$(readlink "$M/a/b/l")" = ../f ] || die readlink
[ "$(stat -c %h "$M/a/f")" = 2 ] || die "link count"
# refusals while mounted: a second ujbd mount, ujbd recover
mkdir -p "$T/m2"
"$UJBD" mount -f "$img" "$T/m2" > /dev/null 2> "$T/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; die "second mount: exit $rc"; }
grep -q "EBUSY\|in use\|held\|open" "$T/err" || { cat "$T/err"; die "second mount: message"; }
umnt "$M"
fsck_clean "$img"
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null; then
	LOOPMNT=$T/k
	mkdir -p "$LOOPMNT"
	if mount -o loop,ro "$img" "$LOOPMNT" 2>/dev/null; then
		(cd "$LOOPMNT" && find . | sort > "$T/tree3" && find . -type f | sort | xargs md5sum > "$T/sums3")
		umount "$LOOPMNT"
		cmp -s "$T/tree1" "$T/tree3" || die "the kernel sees another tree"
		cmp -s "$T/sums1" "$T/sums3" || die "the kernel sees other contents"
	fi
fi

# refuse IMG WHAT [OPTS]: exit 1, one line matching WHAT, image unchanged
refuse() {
	before=$(md5sum < "$1")
	"$UJBD" mount -f ${3:-} "$1" "$M" > /dev/null 2> "$T/err"; rc=$?
	[ $rc -eq 1 ] || { cat "$T/err"; die "$2: exit $rc, want 1"; }
	[ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; die "$2: not one line"; }
	grep -q "$2" "$T/err" || { cat "$T/err"; die "$2: message"; }
	[ "$(md5sum < "$1")" = "$before" ] || die "$2: image written"
	mountpoint -q "$M" && die "$2: mounted anyway"
}
mke2fs -q -F -t ext4 -O fast_commit "$T/fc.img" 64M >/dev/null 2>&1 && refuse "$T/fc.img" "fast_commit"
mke2fs -q -F -t ext4 -O ^has_journal "$T/nj.img" 64M >/dev/null 2>&1 && refuse "$T/nj.img" "no journal"
mke2fs -q -F -t ext4 -O inline_data "$T/id.img" 64M >/dev/null 2>&1 && refuse "$T/id.img" "inline_data"
head -c 1048576 /dev/zero > "$T/zero.img"
refuse "$T/zero.img" "not an ext2/3/4 image"
# a journal that needs recovery: refused read-only, replayed read-write
head -c 4096 /dev/urandom > "$T/blk"
"$UJBD" write "$img" --block=15000:"$T/blk" > /dev/null || die "ujbd write"
refuse "$img" "needs recovery" "-o ro"
mnt "$img" "$M"
grep -q "needed recovery: replayed" "$T/mount.err" || die "no word of the replay"
umnt "$M"
fsck_clean "$img"
echo "ok: mount, unmount clean, remount, kernel, refusals"

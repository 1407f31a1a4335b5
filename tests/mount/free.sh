#!/bin/sh
# ujbd mount reuses no block before the free of it commits (ext4's
# free-after-commit): a file written right after another was deleted,
# with no commit in between, gets other blocks; once the delete has
# committed (an fsync), its blocks are reused. statfs counts a freed block
# free at once. A full file system still takes a file as large as the one
# just deleted (the write, the fallocate wait for the commit of the free),
# and a file that took the last free blocks is deleted (libext2fs 1.46.6
# to 1.47.3 cannot punch the last block: it is never handed out).
# A kill -9 right after the delete and the write leaves an image that
# `ujbd recover` and e2fsck find clean, the deleted file whole.
. "${SRCDIR:-.}/tests/mount/mount.lib"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
img=$T/fs.img
M=$T/m
mke2fs -q -F -t ext4 -b 4096 "$img" 64M >/dev/null 2>&1 || die "mke2fs"
head -c 4194304 /dev/urandom > "$T/a"
head -c 4194304 /dev/urandom > "$T/b"
head -c 8388608 /dev/urandom > "$T/c"

# blocks IMG PATH: the file's data blocks, one a line, sorted
blocks() {
	debugfs -R "blocks $2" "$1" 2>/dev/null | tr ' ' '\n' | grep . | sort -n
}
# common A B: how many blocks both lists name
common() { comm -12 "$1" "$2" | wc -l; }

# 1. a's blocks, on a clean image
mnt "$img" "$M"
cp "$T/a" "$M/a" || die "cp a"
umnt "$M"
blocks "$img" /a > "$T/a.blk"
[ "$(wc -l < "$T/a.blk")" -eq 1024 ] || die "a: $(wc -l < "$T/a.blk") blocks, want 1024"

# 2. a deleted, b written at once: no commit in between (the delete's
# transaction is 5 s from its timer), so none of a's blocks for b
mnt "$img" "$M"
f1=$(stat -f -c %f "$M")
rm "$M/a" || die "rm a"
f2=$(stat -f -c %f "$M")
[ "$f2" -ge $((f1 + 1024)) ] || die "statfs: $f1 free blocks before rm, $f2 after (want +1024)"
cp "$T/b" "$M/b" || die "cp b"
umnt "$M"
fsck_clean "$img"
blocks "$img" /b > "$T/b.blk"
[ "$(wc -l < "$T/b.blk")" -eq 1024 ] || die "b: $(wc -l < "$T/b.blk") blocks, want 1024"
n=$(common "$T/a.blk" "$T/b.blk")
[ "$n" -eq 0 ] || die "b got $n of a's blocks before a's delete committed"

# 3. b deleted and the delete committed (fsync of the directory): its
# blocks are for the next file (c covers a's blocks and b's)
mnt "$img" "$M"
rm "$M/b" || die "rm b"
sync "$M" || die "fsync of the directory"
cp "$T/c" "$M/c" || die "cp c"
umnt "$M"
fsck_clean "$img"
blocks "$img" /c > "$T/c.blk"
n=$(common "$T/b.blk" "$T/c.blk")
[ "$n" -gt 0 ] || die "c got none of b's blocks, after b's delete committed"
debugfs -R "dump /c $T/c.out" "$img" >/dev/null 2>&1
cmp -s "$T/c" "$T/c.out" || die "c's contents"

# 4. nearly full: a file of all the free space but 2048 blocks, fsynced,
# deleted, and at once another as large (once the 2048 are used, the
# operations wait for the commit of the delete), deleted too, then a
# fallocate of all the free space (one allocation: it waits for the commit
# once it finds no other free block); none fails with ENOSPC
mnt "$img" "$M"
rm "$M/c" && sync "$M" || die "rm c"
free=$(stat -f -c %f "$M")
python3 - "$M" "$(( (free - 2048) * 4096 ))" "$(( (free - 64) * 4096 ))" <<'EOF' || { cat "$T/mount.err"; die "the full file system"; }
import os, sys
d, size, most = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chunk = os.urandom(1 << 20)
def fill(path):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    left = size
    while left:
        left -= os.write(fd, chunk[:min(left, len(chunk))])
    return fd
fd = fill(d + "/full")
os.fsync(fd)
os.close(fd)
os.unlink(d + "/full")
os.close(fill(d + "/again"))  # no commit since the unlink
os.unlink(d + "/again")
fd = os.open(d + "/falloc", os.O_CREAT | os.O_WRONLY, 0o644)
os.posix_fallocate(fd, 0, most)
os.close(fd)
if os.stat(d + "/falloc").st_size != most:
    sys.exit("falloc: size")
EOF
rm "$M/falloc" || die "rm falloc"
umnt "$M"
fsck_clean "$img"

# 5. kill -9 right after a delete and a write (no commit in between):
# the image recovers clean, with the deleted file whole (its delete lost)
mnt "$img" "$M"
cp "$T/a" "$M/a" && sync "$M/a" && sync "$M" || die "cp a"
rm "$M/a" && cp "$T/b" "$M/b" || die "rm a, cp b"
kill -9 $MPID
wait $MPID 2>/dev/null
fusermount3 -uz "$M" 2>/dev/null
"$UJBD" recover "$img" > "$T/rec.out" 2>&1 || { cat "$T/rec.out"; die "ujbd recover"; }
fsck_clean "$img"
debugfs -R "dump /a $T/a.out" "$img" >/dev/null 2>&1
if [ -s "$T/a.out" ]; then
	cmp -s "$T/a" "$T/a.out" || die "the deleted file (its delete lost) holds other bytes"
	what="the deleted file whole"
else
	what="the delete committed before the kill"
fi
echo "ok: no block reused before its free committed (b: 0 of a's 1024), reused after ($n of b's for c); statfs at once; a full file system waits for the free; kill -9: clean, $what"

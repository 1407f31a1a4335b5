#!/bin/sh
# ujbd mount keeps ext4's orphan list: a file unlinked (or renamed over)
# while open loses its name on disk at once (no .fuse_hiddenN), stays
# readable, writable and fstat-able, and is freed at its last close. After
# a kill -9 with such a file open: `ujbd recover` leaves the orphan list
# (e2fsck -fn reports the inode; e2fsck -p clears it); `ujbd mount` and,
# as root, the kernel's mount free it; no .fuse_hidden name anywhere. A
# daemon stopped by SIGTERM with the file still open frees it too.
. "${SRCDIR:-.}/tests/mount/mount.lib"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
base=$T/base.img
img=$T/fs.img
M=$T/m
mke2fs -q -F -t ext4 -b 4096 "$base" 64M >/dev/null 2>&1 || die "mke2fs"
free_of() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Free blocks:/ { print $2 + 0 }'; }
orphan_of() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^First orphan inode:/ { print $2 + 0 }'; }
free0=$(free_of "$base")
hidden_on() { debugfs -R "ls -l $2" "$1" 2>/dev/null | grep -c fuse_hidden; }

# 1. while mounted: unlinked open files, a rename over an open file
cp "$base" "$img"
mnt "$img" "$M"
python3 - "$M" <<'EOF' || die "open unlinked files"
import os, sys
d = sys.argv[1]
def check(c, what):
    if not c:
        sys.exit("FAIL: " + what)
f0 = os.statvfs(d).f_bfree
fd = os.open(d + "/f", os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, os.urandom(1 << 20))
os.unlink(d + "/f")
check(not os.path.exists(d + "/f"), "f still there")
check(not [n for n in os.listdir(d) if "hidden" in n], "a hidden name: %s" % os.listdir(d))
st = os.fstat(fd)
check(st.st_nlink == 0 and st.st_size == 1 << 20, "fstat of unlinked f: %s" % (st,))
os.write(fd, b"tail")
os.lseek(fd, 0, 0)
check(len(os.read(fd, 2 << 20)) == (1 << 20) + 4, "read back")
os.ftruncate(fd, 4096)
os.fchmod(fd, 0o600)
st = os.fstat(fd)
check(st.st_size == 4096 and st.st_mode & 0o777 == 0o600, "ftruncate, fchmod: %s" % (st,))
os.fsync(fd)
# two names, one unlinked while open: the other stays, nlink 1
g = os.open(d + "/g", os.O_CREAT | os.O_RDWR, 0o644)
os.write(g, b"g" * 10000)
os.link(d + "/g", d + "/g2")
os.unlink(d + "/g")
check(os.fstat(g).st_nlink == 1 and os.stat(d + "/g2").st_nlink == 1, "g: nlink")
os.close(g)
check(open(d + "/g2", "rb").read() == b"g" * 10000, "g2")
# a rename over an open file
h = os.open(d + "/h", os.O_CREAT | os.O_RDWR, 0o644)
os.write(h, b"h" * 50000)
open(d + "/x", "w").write("x")
os.rename(d + "/x", d + "/h")
check(os.fstat(h).st_nlink == 0, "h: nlink after a rename over it")
os.lseek(h, 0, 0)
check(os.read(h, 100000) == b"h" * 50000, "h: contents after a rename over it")
check(open(d + "/h").read() == "x", "the new h")
check(sorted(os.listdir(d)) == ["g2", "h", "lost+found"], "names: %s" % os.listdir(d))
os.close(h)
os.close(fd)
os.unlink(d + "/g2")
os.unlink(d + "/h")
check(os.statvfs(d).f_bfree == f0, "free blocks: %d, %d before" % (os.statvfs(d).f_bfree, f0))
print("ok")
EOF
umnt "$M"
fsck_clean "$img"
[ "$(orphan_of "$img")" = "" ] || die "an orphan list after a clean unmount"
[ "$(free_of "$img")" -eq "$free0" ] || die "free blocks $(free_of "$img"), $free0 before"

# opened_then_kill SIG [dir]: an open file unlinked, written, fsynced (the
# unlink committed) -- or dir: an open directory removed, its parent
# fsynced (the rmdir committed) -- then the daemon gets SIG while the
# file or the directory is open
opened_then_kill() {
	cp "$base" "$img"
	mnt "$img" "$M"
	rm -f "$T/ready"
	python3 - "$M" "$T/ready" "${2:-file}" <<'EOF' &
import os, sys, time
d, ready, kind = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "dir":
    os.mkdir(d + "/dd")
    open(d + "/dd/x", "w").write("x" * 100000)
    os.unlink(d + "/dd/x")
    fd = os.open(d + "/dd", os.O_RDONLY | os.O_DIRECTORY)
    os.rmdir(d + "/dd")
    root = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(root)  # fsyncdir: the rmdir committed
    os.close(root)
else:
    fd = os.open(d + "/f", os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, os.urandom(1 << 20))
    os.unlink(d + "/f")
    os.write(fd, os.urandom(1 << 20))
    os.fsync(fd)
open(ready, "w").close()
time.sleep(60)
EOF
	PY=$!
	n=0
	while [ ! -e "$T/ready" ]; do
		n=$((n + 1))
		[ $n -lt 200 ] || { kill $PY; die "the writer did not get ready"; }
		sleep 0.05
	done
	kill "-$1" $MPID
	wait $MPID 2>/dev/null
	kill $PY 2>/dev/null
	wait $PY 2>/dev/null
	fusermount3 -uz "$M" 2>/dev/null
}

# freed_after_kill TAG: the image a kill -9 left with an orphan (an open
# file or directory): ujbd recover leaves the list (e2fsck -fn reports the
# inode) and e2fsck -p clears it; on copies, ujbd mount and, as root, the
# kernel free it; TAG prefixes the failures, $what says who freed it
freed_after_kill() {
	cp "$img" "$T/mnt.img"
	cp "$img" "$T/kern.img"
	"$UJBD" recover "$img" > "$T/rec.out" 2>&1 || { cat "$T/rec.out"; die "$1ujbd recover"; }
	ino=$(orphan_of "$img")
	[ -n "$ino" ] && [ "$ino" -gt 0 ] || die "$1no orphan list after ujbd recover"
	[ "$(hidden_on "$img" /)" -eq 0 ] || die "$1a .fuse_hidden name on disk"
	# e2fsck -n does not process the list (read-only): it reports the inode
	e2fsck -fn "$img" > "$T/fsck.out" 2>&1 && die "$1e2fsck -fn found the pending orphan list clean"
	grep -q "inode $ino" "$T/fsck.out" || { cat "$T/fsck.out"; die "$1e2fsck -fn: not about inode $ino"; }
	e2fsck -fp "$img" > "$T/fsck.out" 2>&1; rc=$?
	[ $rc -le 1 ] || { cat "$T/fsck.out"; die "$1e2fsck -fp: exit $rc"; }
	grep -q "Clearing orphaned inode $ino" "$T/fsck.out" || { cat "$T/fsck.out"; die "$1e2fsck -fp: no orphan cleared"; }
	fsck_clean "$img"
	[ "$(free_of "$img")" -eq "$free0" ] || die "$1after e2fsck -p: free blocks $(free_of "$img"), $free0 before"
	# ujbd mount replays the journal and frees the orphan before serving
	mnt "$T/mnt.img" "$M"
	grep -q "orphan list processed.*1 freed" "$T/mount.err" || { cat "$T/mount.err"; die "$1ujbd mount: no word of the orphan"; }
	[ "$(ls -A "$M")" = "lost+found" ] || die "$1ujbd mount: names: $(ls -A "$M")"
	umnt "$M"
	fsck_clean "$T/mnt.img"
	[ "$(orphan_of "$T/mnt.img")" = "" ] || die "$1ujbd mount: the orphan list left"
	[ "$(free_of "$T/mnt.img")" -eq "$free0" ] || die "$1ujbd mount: free blocks $(free_of "$T/mnt.img"), $free0 before"
	what="ujbd recover + e2fsck -p, ujbd mount"
	# the kernel: journal replay, then its own orphan processing
	if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null; then
		LOOPMNT=$T/k
		mkdir -p "$LOOPMNT"
		if mount -o loop "$T/kern.img" "$LOOPMNT"; then
			names=$(ls -A "$LOOPMNT")
			umount "$LOOPMNT"
			n=0
			while [ -n "$(losetup -j "$T/kern.img" 2>/dev/null)" ] && [ $n -lt 100 ]; do
				n=$((n + 1)); sleep 0.1
			done
			[ "$names" = "lost+found" ] || die "$1the kernel: names: $names"
			fsck_clean "$T/kern.img"
			[ "$(orphan_of "$T/kern.img")" = "" ] || die "$1the kernel left the orphan list"
			[ "$(free_of "$T/kern.img")" -eq "$free0" ] || die "$1the kernel: free blocks $(free_of "$T/kern.img"), $free0 before"
			what="$what, the kernel"
		fi
	fi
}

# 2. kill -9 with the unlinked file open
opened_then_kill KILL
freed_after_kill ""

# 3. SIGTERM with the unlinked file open: the daemon frees it on its way out
opened_then_kill TERM
needs_recovery "$img" && die "SIGTERM: needs_recovery left set"
fsck_clean "$img"
[ "$(orphan_of "$img")" = "" ] || die "SIGTERM: the orphan list left"
[ "$(free_of "$img")" -eq "$free0" ] || die "SIGTERM: free blocks $(free_of "$img"), $free0 before"
# 4. directories: one removed while open stays until its last close
cp "$base" "$img"
mnt "$img" "$M"
python3 - "$M" <<'EOF' || die "a directory removed while open"
import os, sys
d = sys.argv[1]
def check(c, what):
    if not c:
        sys.exit("FAIL: " + what)
f0, i0 = os.statvfs(d).f_bfree, os.statvfs(d).f_ffree
os.mkdir(d + "/dd")
for i in range(200):  # a directory of more than one block
    open("%s/dd/%03d-%s" % (d, i, "n" * 40), "w").close()
for n in os.listdir(d + "/dd"):
    os.unlink(d + "/dd/" + n)
fd = os.open(d + "/dd", os.O_RDONLY | os.O_DIRECTORY)
os.rmdir(d + "/dd")
check(not os.path.exists(d + "/dd"), "dd still there")
# readdir by the handle: ENOENT, as Linux gives for a removed directory
# (glibc's readdir reads it as the end). Not fstat, nor so opendir(3) on
# the descriptor: libfuse's high-level API has no path for the node of a
# directory removed while open and answers ESTALE (ext4: nlink 0).
def getdents(f):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(65536)
    n = libc.syscall(217, f, buf, len(buf))  # getdents64 (x86-64)
    return n, ctypes.get_errno()
import platform
if platform.machine() == "x86_64":
    n, e = getdents(fd)
    check(n == -1 and e == 2, "getdents64 of a removed directory: %d, errno %d" % (n, e))
os.fsync(fd)  # fsyncdir by the handle
check(os.statvfs(d).f_bfree < f0, "dd's blocks freed while it is open")
os.mkdir(d + "/dd")  # the name is free again
check(os.listdir(d + "/dd") == [], "the new dd")
os.rmdir(d + "/dd")
os.close(fd)
def freed():  # the kernel sends the release after close returns
    import time
    for _ in range(100):
        if os.statvfs(d).f_bfree == f0 and os.statvfs(d).f_ffree == i0:
            return True
        time.sleep(0.05)
    return False
check(freed(),
      "after the last close: free blocks %d (%d before), inodes %d (%d before)" %
      (os.statvfs(d).f_bfree, f0, os.statvfs(d).f_ffree, i0))
# a rename over an empty directory that is open
os.mkdir(d + "/a")
os.mkdir(d + "/b")
fb = os.open(d + "/b", os.O_RDONLY | os.O_DIRECTORY)
os.rename(d + "/a", d + "/b")
check(os.listdir(d + "/b") == [], "b after a rename over it")
if platform.machine() == "x86_64":
    n, e = getdents(fb)
    check(n == -1 and e == 2, "getdents64 of the directory renamed over: %d, errno %d" % (n, e))
os.close(fb)
os.rmdir(d + "/b")
check(freed(), "after the renames")
print("ok")
EOF
umnt "$M"
fsck_clean "$img"
[ "$(orphan_of "$img")" = "" ] || die "dirs: an orphan list after a clean unmount"
[ "$(free_of "$img")" -eq "$free0" ] || die "dirs: free blocks $(free_of "$img"), $free0 before"
# kill -9 with the removed directory open: its inode on the orphan list,
# which e2fsck -p, ujbd mount and the kernel free
opened_then_kill KILL dir
freed_after_kill "dirs: "

echo "ok: unlinked open files (no hidden name, fstat, read, write, ftruncate), freed at close; after kill -9, the orphan freed by $what; SIGTERM frees it; a directory removed while open: kept to its last close, after kill -9 freed by the same"

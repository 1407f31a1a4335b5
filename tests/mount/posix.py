# POSIX behaviour of a mounted directory (tests/mount/posix.sh): errno of
# every refused case, times, link counts, rename rules. Prints one line per
# failed check and exits 1 if any failed.
import errno, os, stat, sys, time

D = sys.argv[1]
# With "nolinks" no file is given a second name: the daemon keeps the
# kernel's attribute cache on for the whole run (names_seen).
LINKS = len(sys.argv) < 3 or sys.argv[2] != "nolinks"
fails = []

def p(*a):
    return os.path.join(D, *a)

def want_err(e, fn, *a, **k):
    try:
        fn(*a, **k)
    except OSError as x:
        if x.errno != e:
            fails.append("%s%r: errno %s, want %s" % (fn.__name__, a, errno.errorcode.get(x.errno), errno.errorcode[e]))
        return
    fails.append("%s%r: succeeded, want %s" % (fn.__name__, a, errno.errorcode[e]))

def check(cond, what):
    if not cond:
        fails.append(what)

def touch(path, data=b"x"):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)

# --- attributes through every name of a file. The kernel keeps a file's
# attributes for a while until the daemon is first told of a file with two
# names; from then on every name must show what any name did.
if LINKS:
    touch(p("h1"), b"12345")
    check(os.stat(p("h1")).st_size == 5 and os.stat(p("h1")).st_nlink == 1, "h1 before its link")
    os.link(p("h1"), p("h2"))
    check(os.stat(p("h1")).st_nlink == 2 and os.stat(p("h2")).st_nlink == 2, "hard link: nlink through both names")
    with open(p("h2"), "ab") as f:
        f.write(b"678")
    check(os.stat(p("h1")).st_size == 8, "hard link: a size written through the other name")
    os.chmod(p("h1"), 0o600)
    check(stat.S_IMODE(os.stat(p("h2")).st_mode) == 0o600, "hard link: a mode set through the other name")
    os.unlink(p("h2"))
    check(os.stat(p("h1")).st_nlink == 1, "hard link: nlink after the other name went")
    os.unlink(p("h1"))

# --- creation and its errors
os.mkdir(p("d"))
touch(p("f"))
want_err(errno.EEXIST, os.mkdir, p("d"))
want_err(errno.EEXIST, os.mkdir, p("f"))
want_err(errno.EEXIST, os.open, p("f"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
want_err(errno.ENOENT, os.mkdir, p("nope", "x"))
want_err(errno.ENOTDIR, os.mkdir, p("f", "x"))
want_err(errno.ENOENT, os.open, p("nope"), os.O_RDONLY)
want_err(errno.ENAMETOOLONG, os.mkdir, p("n" * 256))
want_err(errno.EEXIST, os.symlink, "t", p("f"))
want_err(errno.EEXIST, os.link, p("f"), p("d"))
want_err(errno.EPERM, os.link, p("d"), p("dl"))
want_err(errno.ENOENT, os.link, p("nope"), p("x"))
want_err(errno.EISDIR, os.open, p("d"), os.O_WRONLY)
os.mkdir(p("nm" + "n" * 253))  # 255 bytes is fine
os.rmdir(p("nm" + "n" * 253))

# --- removal and its errors
os.mkdir(p("d", "sub"))
want_err(errno.ENOTEMPTY, os.rmdir, p("d"))
want_err(errno.ENOTDIR, os.rmdir, p("f"))
want_err(errno.EISDIR, os.unlink, p("d"))
want_err(errno.ENOENT, os.unlink, p("nope"))
want_err(errno.ENOENT, os.rmdir, p("nope"))
want_err(errno.EINVAL, os.rmdir, p("d", "sub", "."))

# --- link counts
st = os.stat(p("d"))
check(st.st_nlink == 3, "dir with one subdir: nlink %d, want 3" % st.st_nlink)
os.rmdir(p("d", "sub"))
check(os.stat(p("d")).st_nlink == 2, "empty dir: nlink %d, want 2" % os.stat(p("d")).st_nlink)
root0 = os.stat(D).st_nlink
os.mkdir(p("e"))
check(os.stat(D).st_nlink == root0 + 1, "mkdir: parent nlink not +1")
os.rmdir(p("e"))
check(os.stat(D).st_nlink == root0, "rmdir: parent nlink not back")
if LINKS:
    os.link(p("f"), p("d", "f2"))
    check(os.stat(p("f")).st_nlink == 2, "link: nlink %d, want 2" % os.stat(p("f")).st_nlink)
    check(os.stat(p("f")).st_ino == os.stat(p("d", "f2")).st_ino, "link: another inode")
    os.unlink(p("d", "f2"))
    check(os.stat(p("f")).st_nlink == 1, "unlink: nlink %d, want 1" % os.stat(p("f")).st_nlink)

# --- an open file unlinked stays readable
touch(p("open"), b"still here")
fd = os.open(p("open"), os.O_RDONLY)
os.unlink(p("open"))
check(os.read(fd, 100) == b"still here", "unlinked open file unreadable")
os.close(fd)
check(not os.path.exists(p("open")), "unlinked file still visible")

# --- times
touch(p("t"))
s0 = os.stat(p("t"))
time.sleep(1.1)
fd = os.open(p("t"), os.O_WRONLY)
os.write(fd, b"more")
os.close(fd)
s1 = os.stat(p("t"))
check(s1.st_mtime_ns > s0.st_mtime_ns, "write: mtime not updated")
check(s1.st_ctime_ns > s0.st_ctime_ns, "write: ctime not updated")
time.sleep(1.1)
os.chmod(p("t"), 0o600)
s2 = os.stat(p("t"))
check(s2.st_ctime_ns > s1.st_ctime_ns, "chmod: ctime not updated")
check(s2.st_mtime_ns == s1.st_mtime_ns, "chmod: mtime changed")
check(s2.st_mode & 0o7777 == 0o600, "chmod: mode %o" % (s2.st_mode & 0o7777))
os.utime(p("t"), ns=(1000000000123456789, 1200000000987654321))
s3 = os.stat(p("t"))
check(s3.st_atime_ns == 1000000000123456789, "utimens: atime %d" % s3.st_atime_ns)
check(s3.st_mtime_ns == 1200000000987654321, "utimens: mtime %d (nanoseconds kept?)" % s3.st_mtime_ns)
os.utime(p("t"), ns=(5000000000000000000, 5000000000000000001))  # past 2038
check(os.stat(p("t")).st_mtime_ns == 5000000000000000001, "a time past 2038 not kept")
d0 = os.stat(p("d"))
time.sleep(1.1)
touch(p("d", "new"))
d1 = os.stat(p("d"))
check(d1.st_mtime_ns > d0.st_mtime_ns and d1.st_ctime_ns > d0.st_ctime_ns, "create: parent times not updated")
os.chown(p("t"), 1234, 5678)
check((os.stat(p("t")).st_uid, os.stat(p("t")).st_gid) == (1234, 5678), "chown")
os.chown(p("t"), 70000, -1)
check(os.stat(p("t")).st_uid == 70000 and os.stat(p("t")).st_gid == 5678, "chown: 32-bit uid, gid kept")

# --- sizes
fd = os.open(p("sz"), os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"a" * 10000)
os.ftruncate(fd, 5000)
os.ftruncate(fd, 20000)
data = os.pread(fd, 20000, 0)
check(data == b"a" * 5000 + b"\0" * 15000, "truncate down then up: the tail is not zeros")
os.pwrite(fd, b"z", 1 << 30)
check(os.fstat(fd).st_size == (1 << 30) + 1, "sparse write: size")
check(os.fstat(fd).st_blocks < 100, "sparse write: %d blocks" % os.fstat(fd).st_blocks)
check(os.pread(fd, 4, (1 << 29)) == b"\0" * 4, "hole: not zeros")
try:
    os.posix_fallocate(fd, 0, 1 << 20)
    check(os.fstat(fd).st_blocks >= 2048, "fallocate: blocks %d" % os.fstat(fd).st_blocks)
    check(os.pread(fd, 4, 900000) == b"\0" * 4, "fallocated: not zeros")
    os.pwrite(fd, b"q", 900000)
    check(os.pread(fd, 3, 899999) == b"\0q\0", "write into a fallocated range")
except OSError as x:
    fails.append("fallocate: %s" % x)
os.close(fd)

# --- rename rules
touch(p("r1"), b"one")
touch(p("r2"), b"two")
os.rename(p("r1"), p("r2"))
check(open(p("r2"), "rb").read() == b"one" and not os.path.exists(p("r1")), "rename over a file")
os.mkdir(p("rd1"))
os.mkdir(p("rd2"))
touch(p("rd2", "x"))
want_err(errno.ENOTEMPTY, os.rename, p("rd1"), p("rd2"))
want_err(errno.ENOTDIR, os.rename, p("rd1"), p("r2"))
want_err(errno.EISDIR, os.rename, p("r2"), p("rd1"))
want_err(errno.EINVAL, os.rename, p("rd1"), p("rd1", "in"))
want_err(errno.ENOENT, os.rename, p("nope"), p("x"))
os.unlink(p("rd2", "x"))
n0 = os.stat(D).st_nlink
os.rename(p("rd1"), p("rd2"))  # over an empty dir
check(os.stat(D).st_nlink == n0 - 1, "rename dir over empty dir: parent nlink")
os.mkdir(p("a"))
os.rename(p("rd2"), p("a", "moved"))
check(os.stat(p("a")).st_nlink == 3, "dir moved in: new parent nlink %d" % os.stat(p("a")).st_nlink)
check(os.stat(p("a", "moved", "..")).st_ino == os.stat(p("a")).st_ino, "moved dir: '..' not updated")
os.rename(p("r2"), p("r2"))  # to itself: nothing
check(os.path.exists(p("r2")), "rename to itself lost the file")
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def renameat2(a, b, flags):
    r = libc.renameat2(-100, a.encode(), -100, b.encode(), flags)
    if r:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
touch(p("x1"), b"x1")
touch(p("x2"), b"x2")
want_err(errno.EEXIST, renameat2, p("x1"), p("x2"), 1)  # RENAME_NOREPLACE
renameat2(p("x1"), p("x3"), 1)
check(os.path.exists(p("x3")) and not os.path.exists(p("x1")), "RENAME_NOREPLACE to a new name")
renameat2(p("x2"), p("x3"), 2)  # RENAME_EXCHANGE
check(open(p("x3"), "rb").read() == b"x2" and open(p("x2"), "rb").read() == b"x1", "RENAME_EXCHANGE")
want_err(errno.ENOENT, renameat2, p("x2"), p("x9"), 2)
renameat2(p("a", "moved"), p("x2"), 2)  # exchange a dir and a file across dirs
check(os.path.isdir(p("x2")) and os.path.isfile(p("a", "moved")), "RENAME_EXCHANGE dir/file")
check(os.stat(p("x2", "..")).st_ino == os.stat(D).st_ino, "exchanged dir: '..'")

# --- a path names what it names now (the daemon keeps the paths it resolved)
def rd(path):
    with open(path, "rb") as f:
        return f.read()
os.mkdir(p("pc1"))
touch(p("pc1", "f"), b"A")
check(rd(p("pc1", "f")) == b"A", "path cache: first read")
os.rename(p("pc1"), p("pc2"))
os.mkdir(p("pc1"))
touch(p("pc1", "f"), b"B")
check(rd(p("pc1", "f")) == b"B" and rd(p("pc2", "f")) == b"A", "path cache: a directory renamed, its name made again")
os.mkdir(p("pc3"))
touch(p("pc3", "g"), b"C")
check(rd(p("pc3", "g")) == b"C", "path cache: pc3/g")
os.unlink(p("pc3", "g"))
os.rmdir(p("pc3"))
want_err(errno.ENOENT, os.stat, p("pc3", "g"))
os.mkdir(p("pc3"))
want_err(errno.ENOENT, os.stat, p("pc3", "g"))
touch(p("u1"), b"old")
if LINKS:
    os.link(p("u1"), p("u1keep"))  # the old inode lives on: a new u1 is another
else:
    u1fd = os.open(p("u1"), os.O_RDONLY)  # so does an open one
check(rd(p("u1")) == b"old", "path cache: u1")
os.unlink(p("u1"))
touch(p("u1"), b"new")
check(rd(p("u1")) == b"new", "path cache: a name unlinked and made again")
if LINKS:
    check(rd(p("u1keep")) == b"old", "path cache: the old inode's other name")
else:
    check(os.pread(u1fd, 3, 0) == b"old", "path cache: the old inode, open")
    os.close(u1fd)
os.mkdir(p("e1")); os.mkdir(p("e2"))
touch(p("e1", "f"), b"1"); touch(p("e2", "f"), b"2")
check(rd(p("e1", "f")) == b"1" and rd(p("e2", "f")) == b"2", "path cache: e1/f, e2/f")
renameat2(p("e1"), p("e2"), 2)
check(rd(p("e1", "f")) == b"2" and rd(p("e2", "f")) == b"1", "path cache: two directories exchanged")
touch(p("o1"), b"o1"); touch(p("o2"), b"o2")
check(rd(p("o2")) == b"o2", "path cache: o2")
os.rename(p("o1"), p("o2"))
check(rd(p("o2")) == b"o1", "path cache: a file renamed over another")

# --- symlinks, xattrs, statfs
os.symlink("a/target/" + "s" * 100, p("sl"))
check(os.readlink(p("sl")) == "a/target/" + "s" * 100, "readlink of a slow symlink")
os.symlink("short", p("sl2"))
check(os.readlink(p("sl2")) == "short", "readlink of a fast symlink")
want_err(errno.EINVAL, os.readlink, p("f"))
try:
    os.setxattr(p("f"), "user.a", b"1")
    check(os.getxattr(p("f"), "user.a") == b"1", "getxattr")
    want_err(errno.EEXIST, os.setxattr, p("f"), "user.a", b"2", os.XATTR_CREATE)
    want_err(errno.ENODATA, os.setxattr, p("f"), "user.b", b"2", os.XATTR_REPLACE)
    check("user.a" in os.listxattr(p("f")), "listxattr")
    os.removexattr(p("f"), "user.a")
    want_err(errno.ENODATA, os.getxattr, p("f"), "user.a")
    want_err(errno.ENODATA, os.removexattr, p("f"), "user.a")
except OSError as x:
    fails.append("xattr: %s" % x)
sv = os.statvfs(D)
check(sv.f_bsize > 0 and sv.f_blocks > sv.f_bfree > 0 and sv.f_files > sv.f_ffree > 0, "statfs")

for f in fails:
    print("FAIL:", f)
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)

# File data through a mounted image (tests/mount/data.sh): what is read
# back is what was written, whatever way the blocks took: journaled and not
# yet written home, written home past the journal's cache, holes,
# unwritten (fallocated) extents, the zeros of a block's unwritten part.
# Every read goes to the daemon: the file is reopened (FUSE drops its page
# cache at open) and its pages are dropped (POSIX_FADV_DONTNEED).
# Prints one line per failed check, then "N checks", and exits 1 if any
# failed. data.py DIR [SEED]
import os, random, sys

D = sys.argv[1]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
BS = 4096
fails = []
checks = 0

def p(name):
    return os.path.join(D, name)

def pat(n, tag):  # tag: what it is for, in the reader's eye
    return rng.randbytes(n)

def fresh_read(name, off=0, n=None):
    fd = os.open(p(name), os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        if n is None:
            n = os.fstat(fd).st_size - off
        out = bytearray()
        while len(out) < n:
            b = os.pread(fd, min(n - len(out), 1 << 20), off + len(out))
            if not b:
                break
            out += b
        return bytes(out)
    finally:
        os.close(fd)

def check(name, model, what):
    global checks
    checks += 1
    got = fresh_read(name)
    if got == bytes(model):
        return
    if len(got) != len(model):
        fails.append("%s: %s: %d bytes, want %d" % (name, what, len(got), len(model)))
        return
    i = next(k for k in range(len(got)) if got[k] != model[k])
    fails.append("%s: %s: byte %d (block %d) is %d, want %d" % (name, what, i, i // BS, got[i], model[i]))

def pwrite(name, data, off, model, sync=False):
    fd = os.open(p(name), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, off)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if len(model) < off:
        model.extend(b"\0" * (off - len(model)))
    model[off:off + len(data)] = data

def truncate(name, size, model):
    os.truncate(p(name), size)
    if size < len(model):
        del model[size:]
    else:
        model.extend(b"\0" * (size - len(model)))

# --- a block newer in the journal than at home: 1 MiB written and fsynced
# (home), then single blocks rewritten (a small transaction journals them),
# read back before any checkpoint, with and without an fsync
m = bytearray()
pwrite("j", pat(1 << 20, "j"), 0, m, sync=True)
check("j", m, "1 MiB written")
pwrite("j", pat(BS, "j1"), 37 * BS, m, sync=True)
check("j", m, "a block rewritten, fsynced (journaled)")
pwrite("j", pat(BS, "j2"), 38 * BS, m)
check("j", m, "a block rewritten, not fsynced")
pwrite("j", pat(100, "j3"), 37 * BS + 4000, m)
check("j", m, "a journaled block rewritten in part")
pwrite("j", pat(3 * BS + 10, "j4"), 36 * BS - 5, m)
check("j", m, "across journaled and home blocks")
pwrite("j", pat(512 << 10, "j5"), 100 * BS + 1, m)
check("j", m, "512 KiB over journaled blocks, unaligned")

# --- partial overwrites across block boundaries
m = bytearray()
pwrite("o", pat(3 * BS + 123, "o"), 0, m)
for off, n in ((1, 1), (BS - 1, 2), (2 * BS - 7, BS + 14), (3 * BS + 100, 50), (10, 3 * BS)):
    pwrite("o", pat(n, "o%d" % off), off, m)
    check("o", m, "overwrite %d+%d" % (off, n))

# --- holes, and a hole's block written in part: zeros around
m = bytearray()
pwrite("h", pat(5000, "h"), 0, m)
pwrite("h", pat(7000, "h2"), 10 << 20, m)
check("h", m, "two runs, a hole between")
pwrite("h", pat(100, "h3"), (5 << 20) + 1000, m)
check("h", m, "100 bytes in the hole's middle")
pwrite("h", pat(3 * BS, "h4"), (6 << 20) - 50, m)
check("h", m, "unaligned blocks in the hole")
# a new file's first block written in part, the next in part, then far on
m = bytearray()
pwrite("t", pat(100, "t"), 4000, m)
pwrite("t", pat(1, "t2"), 20000, m)
check("t", m, "a block's unwritten bytes read as zeros")
truncate("t", 4050, m)
truncate("t", 9000, m)
check("t", m, "truncate down in a block, then up")

# --- unwritten extents (fallocate): zeros, then written in part
m = bytearray()
fd = os.open(p("u"), os.O_WRONLY | os.O_CREAT, 0o644)
os.posix_fallocate(fd, 0, 2 << 20)
os.close(fd)
m.extend(b"\0" * (2 << 20))
check("u", m, "fallocated: zeros")
pwrite("u", pat(10000, "u1"), 5000, m)
check("u", m, "unaligned write in an unwritten extent")
pwrite("u", pat(300 << 10, "u2"), (1 << 20) + 7, m)
check("u", m, "300 KiB in an unwritten extent")
pwrite("u", pat(200 << 10, "u3"), (2 << 20) - (100 << 10), m)
check("u", m, "from an unwritten extent past its end")

# --- a file whose extents need index blocks (one block in two written:
# an extent each, a tree of depth 1 or 2): holes filled between extents,
# across leaves, and past the last extent (where libext2fs 1.47 finds no
# end to the hole: its NEXT_LEAF comes round to the first extent)
m = bytearray()
fd = os.open(p("x"), os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(1200):
    b = pat(BS, "x")
    os.pwrite(fd, b, 2 * i * BS)
    m[len(m):] = b + (b"\0" * BS if i < 1199 else b"")
os.close(fd)
check("x", m, "1200 extents")
pwrite("x", pat(300 << 10, "x2"), len(m) + 5 * BS + 9, m)
check("x", m, "300 KiB past the last extent of a deep tree")
for i in range(60):
    off = rng.randrange(0, len(m) + (64 << 10))
    n = rng.choice((1, BS, 2 * BS, 7 * BS, 100 << 10, 1 << 20))
    pwrite("x", pat(n, "x3"), off, m)
    if i % 20 == 19:
        check("x", m, "holes of a deep tree filled, %d" % i)

# --- two files written in turn (fragmented extents), random writes,
# truncates and fallocates against a model
models = {"r1": bytearray(), "r2": bytearray()}
for i in range(300):
    name = rng.choice(("r1", "r2"))
    m = models[name]
    op = rng.random()
    if op < 0.7:
        off = rng.randrange(0, 8 << 20)
        if rng.random() < 0.5:
            off -= off % BS
        n = rng.choice((1, 100, BS, 3 * BS, 64 << 10, 128 << 10, rng.randrange(1, 3 << 20)))
        pwrite(name, pat(n, "r"), off, m, sync=rng.random() < 0.2)
    elif op < 0.85:
        truncate(name, rng.randrange(0, 9 << 20), m)
    else:
        off = rng.randrange(0, 8 << 20)
        n = rng.randrange(1, 2 << 20)
        fd = os.open(p(name), os.O_WRONLY | os.O_CREAT, 0o644)
        os.posix_fallocate(fd, off, n)
        os.close(fd)
        if len(m) < off + n:
            m.extend(b"\0" * (off + n - len(m)))
    if i % 10 == 9 or rng.random() < 0.1:
        check(name, m, "random op %d" % i)
for name, m in models.items():
    check(name, m, "random ops, at the end")

for f in fails:
    print(f)
print("%d checks" % checks)
sys.exit(1 if fails else 0)

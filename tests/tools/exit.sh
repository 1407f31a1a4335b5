#!/bin/sh
# One mapping of exit statuses for every verb (ujbd(1)): 1 for input that is
# missing, a directory, a character device, too short or corrupt; 2 usage;
# 3 I/O. Each error one line "ujbd VERB: ...". dump of a log whose
# journaled block fails its data checksum exits 1, as its help says, and
# with --json prints one document saying how many.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
"$UJBD" format j.jnl --size=1M > /dev/null || die "format"
truncate -s 4M data.img
mkdir dir

# ---- a missing file, a directory, /dev/null: exit 1 -------------------------
expect_err 1 info info missing.jnl
expect_err 1 dump dump missing.jnl
expect_err 1 recover recover missing.jnl --data=data.img
expect_err 1 recover recover j.jnl --data=missing.img
expect_err 1 write write missing.jnl --revoke=3
expect_err 1 format format nodir/j.jnl --size=1M
expect_err 1 info info dir
expect_err 1 dump dump dir
expect_err 1 recover recover j.jnl --data=dir
expect_err 1 recover recover j.jnl --data=/dev/null
grep -q "'/dev/null': not a regular file or a block device" "$T/err" \
	|| die "/dev/null as --data: $(cat "$T/err")"
expect_err 1 write write j.jnl --data=/dev/null --revoke=3
expect_err 1 write write j.jnl --data=data.img --block=3:missing.blk
head -c 100 /dev/zero > short.blk
expect_err 1 write write j.jnl --data=data.img --block=3:short.blk
expect_err 1 devbench devbench --disk=file:nodir/f --ops=1
expect_err 1 bench bench fsync-loop --iterations=1 --dir=nodir
expect_err 1 lab lab fsck missing.img
# an empty or short file is no lab file system (exit 1), as a random one is
: > empty.img
head -c 100 /dev/zero > short.img
for f in empty.img short.img; do
	expect_err 1 lab lab fsck $f
	grep -q "not a valid lab file system" "$T/err" || die "lab fsck $f: $(cat "$T/err")"
	# the file's size as it is, not its device's (whole sectors: 0 for 100 bytes)
	grep -q "(0 bytes" "$T/err" && [ "$f" = short.img ] && die "lab fsck $f: $(cat "$T/err")"
done
# an unknown option is named as such, not taken for a missing IMAGE
"$UJBD" lab fsck --json short.img > /dev/null 2> "$T/err"
[ $? -eq 2 ] || die "lab fsck --json: not exit 2"
grep -q "unknown option '--json'" "$T/err" || die "lab fsck --json: $(cat "$T/err")"
expect_err 1 info info /dev/null
# the same error with --json: one object with the status
"$UJBD" info missing.jnl --json > out.json 2> /dev/null
[ $? -eq 1 ] || die "info missing --json: exit"
jq -e '.exit_status == 1 and (.error | test("missing.jnl"))' out.json > /dev/null \
	|| die "info missing --json: $(cat out.json)"

# ---- dump: a bad data checksum is a corrupt log (exit 1) --------------------
head -c 4096 /dev/zero | tr '\0' A > a.blk
"$UJBD" write j.jnl --data=data.img --block=10:a.blk > /dev/null || die "write"
"$UJBD" dump j.jnl > /dev/null 2>&1 || die "dump of a good log: exit $?"
jb=$("$UJBD" dump j.jnl --json | jq '.transactions[0].blocks[0].journal_block')
[ -n "$jb" ] && [ "$jb" -gt 0 ] || die "no journal block for block 10"
printf 'B' | dd of=j.jnl bs=1 seek=$((jb * 4096 + 7)) conv=notrunc status=none
"$UJBD" dump j.jnl > out.txt 2> err.txt
rc=$?
[ $rc -eq 1 ] || die "dump with a bad data checksum: exit $rc, want 1"
grep -q "checksum bad" out.txt || die "dump does not show the bad checksum: $(cat out.txt)"
[ "$(wc -l < err.txt)" -eq 1 ] && grep -q "^ujbd dump: corrupt log: .*bad data checksum" err.txt \
	|| die "dump message: $(cat err.txt)"
"$UJBD" dump j.jnl --json > out.json 2> /dev/null
[ $? -eq 1 ] || die "dump --json with a bad data checksum: exit"
jq -s -e 'length == 1 and .[0].end.bad_data_checksums == 1' out.json > /dev/null \
	|| die "dump --json: not one document with bad_data_checksums 1: $(cat out.json)"
# recover agrees: exit 1, the block skipped
"$UJBD" recover j.jnl --data=data.img --dry-run > /dev/null 2>&1
[ $? -eq 1 ] || die "recover --dry-run of the same log: not exit 1"
echo "PASS: one mapping of exit statuses"

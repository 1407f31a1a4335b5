#!/bin/sh
# mke2fs's rule: `ujbd format` and `ujbd devbench --pattern=write-flush` on
# a file overwrite nothing that holds data (a copy of /etc/passwd, a journal
# with or without unreplayed transactions, an ext4 image, a non-zero byte
# where they write) unless given --force: exit 1, one line naming what the
# file holds, the file unchanged. A missing, empty or all-zero file is fine.
# devbench's read patterns never create, grow or write a file.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
sum() { sha256sum < "$1"; }
# refused STATUS VERB FILE WORDS ARGS...: exit STATUS, the message names
# WORDS, FILE unchanged.
refused() {
	_st=$1 _verb=$2 _f=$3 _w=$4
	shift 4
	_h=$(sum "$_f"); _s=$(stat -c %s "$_f")
	expect_err "$_st" "$_verb" "$@"
	grep -q "$_w" "$T/err" || die "ujbd $_verb $*: message lacks '$_w': $(cat "$T/err")"
	[ "$(sum "$_f")" = "$_h" ] && [ "$(stat -c %s "$_f")" = "$_s" ] \
		|| die "ujbd $_verb $*: changed $_f"
}

# ---- format -------------------------------------------------------------------
cp /etc/passwd passwd
refused 1 format passwd "refusing to overwrite 'passwd': it holds data (a non-zero byte at offset 0) (--force" \
	format passwd --size=1M
head -c 4096 /dev/zero > lead; printf x >> lead        # zeros, then data at 4096
refused 1 format lead "non-zero byte at offset 4096" format lead --size=1M
"$UJBD" format j.jnl --size=1M > /dev/null || die "format of a new file"
refused 1 format j.jnl "it holds a jbd2 journal (--force" format j.jnl --size=1M
truncate -s 4M data.img
head -c 4096 /dev/zero | tr '\0' A > a.blk
"$UJBD" write j.jnl --data=data.img --block=5:a.blk > /dev/null || die "write"
refused 1 format j.jnl "a jbd2 journal with unreplayed transactions" format j.jnl --size=1M
refused 1 format j.jnl "unreplayed" format j.jnl --size=2M --block-size=1024 --csum=none
"$UJBD" format j.jnl --size=1M --force > /dev/null || die "format --force over a journal"
"$UJBD" info j.jnl --json | jq -e '.start == 0 and .sequence == 1' > /dev/null \
	|| die "format --force did not make an empty journal"
: > empty
"$UJBD" format empty --size=1M > /dev/null || die "format of an empty file"
truncate -s 8M zeros
"$UJBD" format zeros --size=4M > /dev/null || die "format of a sparse all-zero file"
head -c 2M /dev/zero > written
"$UJBD" format written --size=1M > /dev/null || die "format of an all-zero file"
"$UJBD" format passwd --size=1M --force > /dev/null || die "format --force"
if command -v mke2fs > /dev/null 2>&1; then
	mke2fs -q -F -t ext4 fs.img 8M > /dev/null 2>&1 || die "mke2fs"
	refused 1 format fs.img "an ext2/3/4 file system" format fs.img --size=1M
fi

# ---- devbench: read patterns leave a file alone ---------------------------------
# the first byte is not zero: the refusal below names offset 0 (random, it
# was zero once in 256 runs, and the message said offset 1)
{ printf 'x'; head -c 2999 /dev/urandom; } > small
h=$(sum small)
for p in seq rand; do
	"$UJBD" devbench --disk=file:small --pattern=$p --bs=512 --ops=5 > /dev/null 2>&1 \
		|| die "devbench $p of a 3000-byte file: exit $?"
	[ "$(sum small)" = "$h" ] && [ "$(stat -c %s small)" = 3000 ] || die "devbench $p changed small"
done
expect_err 2 devbench devbench --disk=file:small --ops=5              # 4k blocks do not fit
[ "$(stat -c %s small)" = 3000 ] || die "devbench grew small"
expect_err 2 devbench devbench --disk=file:small --size=8M --ops=5
expect_err 1 devbench devbench --disk=file:absent --pattern=rand --ops=5
[ -e absent ] && die "devbench rand created a file"

# ---- devbench write-flush: mke2fs's rule ------------------------------------------
"$UJBD" write j.jnl --data=data.img --block=5:a.blk > /dev/null || die "write"
refused 1 devbench j.jnl "unreplayed" devbench --disk=file:j.jnl --pattern=write-flush --ops=5
refused 1 devbench small "non-zero byte at offset 0" devbench --disk=file:small \
	--pattern=write-flush --bs=512 --ops=1
"$UJBD" devbench --disk=file:small --pattern=write-flush --bs=512 --ops=1 --force > /dev/null \
	|| die "devbench write-flush --force"
[ "$(sum small)" = "$h" ] && die "devbench write-flush --force did not write"
"$UJBD" devbench --disk=file:new.img --size=1M --pattern=write-flush --ops=5 > /dev/null \
	|| die "devbench write-flush of a new file"
[ "$(stat -c %s new.img)" = 1048576 ] || die "new.img: $(stat -c %s new.img) bytes"
truncate -s 1M zero.img
"$UJBD" devbench --disk=file:zero.img --pattern=write-flush --ops=5 > /dev/null \
	|| die "devbench write-flush of an all-zero file"
echo "PASS: format and devbench overwrite nothing without --force"

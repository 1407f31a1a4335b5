#!/bin/sh
# Long operations show progress on a terminal and nowhere else: `ujbd
# format` of a 64 MiB journal under a pseudo-terminal (script(1)) draws
# "zeroing the log N%" up to 100%, and `ujbd recover` of 400 scattered
# blocks "replaying N%"; in a pipe their stderr stays empty.
. "$SRCDIR/tests/tools/tools.lib"
command -v script > /dev/null 2>&1 || skip "script (util-linux) not installed"

cd "$T" || exit 1
script -qec "\"$UJBD\" format tty.jnl --size=64M" /dev/null > tty.out 2>&1 \
	|| die "format under a terminal: exit $?: $(cat tty.out)"
tr '\r' '\n' < tty.out > lines.txt
grep -q '^ujbd format: zeroing the log 100%' lines.txt || die "no 100% line: $(head -c 300 tty.out)"
n=$(grep -c '^ujbd format: zeroing the log  *[0-9]*%' lines.txt)
[ "$n" -ge 10 ] || die "only $n progress lines"
grep -q "^formatted 'tty.jnl'" lines.txt || die "no result line"
"$UJBD" format pipe.jnl --size=64M > out.txt 2> err.txt || die "format in a pipe"
[ -s err.txt ] && die "progress written to a pipe: $(head -c 200 err.txt)"
grep -q "^formatted 'pipe.jnl'" out.txt || die "format in a pipe: $(cat out.txt)"

# recover: 400 scattered blocks (each its own write), twice the same journal
"$UJBD" format rec.jnl --size=16M > /dev/null || die "format rec.jnl"
dd if=/dev/zero of=rec.data bs=4096 count=1024 status=none || die "data file"
head -c 4096 /dev/urandom > blk || die "block file"
args=""
i=0
while [ $i -lt 400 ]; do args="$args --block=$((2 * i + 1)):blk"; i=$((i + 1)); done
# shellcheck disable=SC2086 # the block options are words
"$UJBD" write rec.jnl --data=rec.data $args > /dev/null || die "write 400 blocks"
cp rec.jnl rec2.jnl
script -qec "\"$UJBD\" recover rec.jnl --data=rec.data" /dev/null > rtty.out 2>&1 \
	|| die "recover under a terminal: exit $?: $(cat rtty.out)"
tr '\r' '\n' < rtty.out > rlines.txt
grep -q '^ujbd recover: replaying 100%' rlines.txt || die "recover: no 100% line: $(head -c 300 rtty.out)"
n=$(grep -c '^ujbd recover: replaying  *[0-9]*%' rlines.txt)
[ "$n" -ge 10 ] || die "recover: only $n progress lines"
"$UJBD" recover rec2.jnl --data=rec.data > out.txt 2> err.txt || die "recover in a pipe"
[ -s err.txt ] && die "recover: progress written to a pipe: $(head -c 200 err.txt)"
echo "PASS: progress on a terminal only"

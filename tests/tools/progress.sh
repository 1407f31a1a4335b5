#!/bin/sh
# Long operations show progress on a terminal and nowhere else: `ujbd
# format` of a 64 MiB journal under a pseudo-terminal (script(1)) draws
# "zeroing the log N%" up to 100%; in a pipe its stderr stays empty.
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
echo "PASS: progress on a terminal only"

#!/bin/sh
# Long operations show progress on a terminal and nowhere else: `ujbd
# format` of a 64 MiB journal under a pseudo-terminal (script(1)) draws
# "zeroing the log N%" up to 100%, and `ujbd recover` of 400 scattered
# blocks "replaying N%"; in a pipe their stderr stays empty.
. "$SRCDIR/tests/tools/tools.lib"
command -v script > /dev/null 2>&1 || skip "script (util-linux) not installed"

cd "$T" || exit 1

# on_tty NAME LINE ARGS...: `ujbd ARGS` under a pseudo-terminal draws LINE
# N% at least 10 times, up to 100%; its output is left in NAME.lines
on_tty() {
	name=$1 line=$2
	shift 2
	script -qec "\"$UJBD\" $*" /dev/null > "$name.out" 2>&1 \
		|| die "$name under a terminal: exit $?: $(cat "$name.out")"
	tr '\r' '\n' < "$name.out" > "$name.lines"
	grep -q "^$line 100%" "$name.lines" || die "$name: no 100% line: $(head -c 300 "$name.out")"
	n=$(grep -c "^$line  *[0-9]*%" "$name.lines")
	[ "$n" -ge 10 ] || die "$name: only $n progress lines"
}

# in_pipe NAME ARGS...: `ujbd ARGS` with stderr in a file writes nothing there
in_pipe() {
	name=$1
	shift
	"$UJBD" "$@" > "$name.out" 2> "$name.err" || die "$name in a pipe: exit $?"
	[ -s "$name.err" ] && die "$name: progress written to a pipe: $(head -c 200 "$name.err")"
}

on_tty format "ujbd format: zeroing the log" format tty.jnl --size=64M
grep -q "^formatted 'tty.jnl'" format.lines || die "format: no result line"
in_pipe pformat format pipe.jnl --size=64M
grep -q "^formatted 'pipe.jnl'" pformat.out || die "format in a pipe: $(cat pformat.out)"

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
on_tty recover "ujbd recover: replaying" recover rec.jnl --data=rec.data
in_pipe precover recover rec2.jnl --data=rec.data
echo "PASS: progress on a terminal only"

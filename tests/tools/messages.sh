#!/bin/sh
# Messages in one shape: the subject of an error is what is wrong (a size
# too small names the size and the minimum in bytes); a number out of range
# says so, with its range, in one style for every verb; counts agree with
# their nouns ("1 block", "2 blocks"); --version --json is one object.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
# ---- the subject is the size ------------------------------------------------
expect_err 2 format format a.jnl --size=1k
grep -q "bad --size: '1k': " err && grep -q "at least 65536 bytes" err \
	|| die "format --size=1k: $(cat err)"
[ -e a.jnl ] && die "format --size=1k created a.jnl"

# ---- out of range, one style --------------------------------------------------
"$UJBD" format j.jnl --size=1M > /dev/null || die "format"
expect_err 2 dump dump j.jnl --tid=4294967296
grep -q "bad --tid: '4294967296': out of range (0 to 4294967295)" err || die "dump --tid: $(cat err)"
expect_err 2 dump dump j.jnl --tid=abc
grep -q "bad --tid: 'abc': not a number (0 to 4294967295)" err || die "dump --tid=abc: $(cat err)"
expect_err 2 devbench devbench --disk=mem --ops=0
grep -q "bad --ops: '0': out of range (1 to " err || die "devbench --ops=0: $(cat err)"
expect_err 2 bench bench fsync-loop --threads=100000
grep -q "bad --threads: '100000': out of range (1 to " err || die "bench --threads: $(cat err)"
# the lab's own numbers, sizes and every parameter group's values: the same
# shape, "bad --OPTION: 'VALUE': reason (range unit)", on lab and devbench
want() { # VERB LINE ARGS...: exit 2 and exactly LINE after "ujbd VERB: "
	_v=$1 _line=$2
	shift 2
	expect_err 2 "$_v" "$_v" "$@"
	[ "$(cat err)" = "ujbd $_v: $_line" ] || die "$_v $*: $(cat err)"
}
want lab "bad --seed: 'x': not a number (0 to 18446744073709551615)" --seed=x
want lab "bad --seed: '-1': not a number (0 to 18446744073709551615)" --seed=-1
want lab "bad --jobs: '0': out of range (1 to 64)" --jobs=0
want lab "bad --jobs: 'x': not a number (1 to 64)" --jobs=x
want lab "bad --hdd=rpm: 'fast': not a number (3600 to 15000 rpm)" --hdd=rpm=fast
want lab "bad --hdd=seek_avg_ms: '100': out of range (0.5 to 40 ms)" --hdd=seek_avg_ms=100
want lab "bad --jbd=commit_interval_ms: '0': out of range (1 to 3600000 ms)" \
	--jbd=commit_interval_ms=0
want lab "bad --cfq=quantum: '2.5': not an integer (1 to 1024 rq)" --cfq=quantum=2.5
want lab "bad --hdd=seek_avg_ms*: '10': gives 85, out of range (0.5 to 40 ms)" \
	--hdd=seek_avg_ms*=10
want lab "bad --queue=plug: 'sometimes': unknown value (explicit or implicit-sync)" \
	--queue=plug=sometimes
want lab "bad --hdd: 'warp': unknown parameter (see --params)" --hdd=warp=9
want lab "bad --hdd: 'rpm': expected name=value" --hdd=rpm
want devbench "bad --hdd=seek_avg_ms: '100': out of range (0.5 to 40 ms)" --hdd=seek_avg_ms=100
want devbench "bad --bs: '1000': not a multiple of 512 (512 to 16777216 bytes)" --disk=mem --bs=1000
want devbench "bad --bs: '32M': out of range (512 to 16777216 bytes, a multiple of 512)" \
	--disk=mem --bs=32M
want devbench "bad --bs: 'x': not a size (512 to 16777216 bytes, a multiple of 512)" \
	--disk=mem --bs=x
want devbench "bad --size: '0': out of range (at least 1 byte)" --disk=mem --size=0
want devbench "bad --size: '1q': not a size (at least 1 byte)" --disk=mem --size=1q

# ---- a block beyond the data device: the data file is the subject ------------
truncate -s 64k small.img
head -c 4096 /dev/zero > blk
expect_err 1 write write j.jnl --data=small.img --block=100:blk
grep -q "cannot write: 'small.img': block 100 is beyond the data device (16 blocks)" err \
	|| die "write beyond: $(cat err)"

# ---- singular and plural ------------------------------------------------------
truncate -s 1M d.img
head -c 4096 /dev/zero > b
"$UJBD" write j.jnl --data=d.img --block=3:b > out || die "write"
grep -q "1 block, 0 revokes" out || die "write: $(cat out)"
grep -q "1 blocks" out && die "write: $(cat out)"
"$UJBD" recover j.jnl --data=d.img > out || die "recover"
grep -q "replayed 1 transaction (1-1), 1 block, 0 revoked" out || die "recover: $(cat out)"
"$UJBD" format k.jnl --size=1M > /dev/null || die "format k"
"$UJBD" write k.jnl --data=d.img --block=3:b > /dev/null || die "write k"
"$UJBD" dump k.jnl --tid=1 > out || die "dump --tid=1"
grep -q "shown: 1 of 1 transaction$" out || die "dump --tid: $(cat out)"
grep -q "replay would cover sequence 1; " out || die "dump: $(cat out)"
grep -q "descriptor block 1: 1 tag, " out || die "dump: $(cat out)"
want devbench "--ioprio has 2 entries for 1 thread (give one, or one per thread)" \
	--disk=mem --threads=1 --ioprio=be:0,be:1

# ---- --version --json ---------------------------------------------------------
v=$("$UJBD" --version | sed 's/^ujbd //')
"$UJBD" --version --json > out.json || die "--version --json: exit $?"
jq -e --arg v "$v" '.version == $v and .library_version == $v' out.json > /dev/null \
	|| die "--version --json: $(cat out.json)"
echo "PASS: messages in one shape"

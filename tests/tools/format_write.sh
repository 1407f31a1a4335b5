#!/bin/sh
# format: --block-size takes the set jbd2 takes (1024 to 65536, powers of
# two, k suffix too), and the help, the error and ujbd(1) name that one set;
# --json says what was written, as info reads it back. write: a block named
# twice in one transaction (--block twice, or --block and --revoke) is a
# usage error and nothing is written.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
SET="1024, 2048, 4096, 8192, 16384, 32768 or 65536"
for bs in 1024 2048 4096 8192 16384 32768 65536 64k; do
	rm -f b.jnl
	"$UJBD" format b.jnl --size=1M --block-size=$bs > /dev/null || die "--block-size=$bs refused"
	want=$bs; [ $bs = 64k ] && want=65536
	[ "$("$UJBD" info b.jnl --json | jq .blocksize)" = $want ] || die "--block-size=$bs: not $want"
done
for bs in 512 3000 131072 3k 0 -4096; do
	expect_err 2 format format c.jnl --size=1M --block-size=$bs
	grep -q "expected $SET" "$T/err" || die "--block-size=$bs: message does not name the set: $(cat "$T/err")"
done
[ -e c.jnl ] && die "a refused format created its file"
"$UJBD" format --help | tr -s ' \n' ' ' | grep -q "one of $SET" || die "format --help does not name the set"
MAN="$SRCDIR/man/ujbd.1"
sed 's/\\-/-/g; s/\\f[BIR]//g' "$MAN" | tr -s ' \n' ' ' | grep -q "$SET" \
	|| die "ujbd(1) does not name the set of block sizes"

# ---- format --json: what info reads back ----------------------------------------
"$UJBD" format f.jnl --size=2M --block-size=1024 --csum=v2 --64bit \
	--uuid=11111111-2222-3333-4444-555555555555 --json > f.json || die "format --json"
[ "$(wc -l < f.json)" -eq 1 ] || die "format --json: not one line"
"$UJBD" info f.jnl --json > i.json || die "info"
jq -e --slurpfile i i.json '.journal == "f.jnl" and .blocksize == 1024 and .maxlen == 2048 and
	.first == $i[0].first and .last == $i[0].last and .checksum == "v2" and
	.uuid == "11111111-2222-3333-4444-555555555555" and .features == $i[0].features' f.json \
	> /dev/null || die "format --json: $(cat f.json) vs info: $(cat i.json)"

# ---- write: a block once per transaction -----------------------------------------
truncate -s 4M data.img
head -c 1024 /dev/zero | tr '\0' A > a.blk
head -c 1024 /dev/zero | tr '\0' B > b.blk
h=$(sha256sum < f.jnl)
expect_err 2 write write f.jnl --data=data.img --block=5:a.blk --block=5:b.blk
grep -q "block 5 given twice" "$T/err" || die "write duplicate: $(cat "$T/err")"
expect_err 2 write write f.jnl --data=data.img --block=7:a.blk --revoke=7
expect_err 2 write write f.jnl --data=data.img --revoke=9 --block=8:a.blk --revoke=9
[ "$(sha256sum < f.jnl)" = "$h" ] || die "a refused write changed the journal"
"$UJBD" write f.jnl --data=data.img --block=5:a.blk --block=6:b.blk --revoke=7 > /dev/null \
	|| die "write of distinct blocks"
echo "PASS: format's block sizes and --json; write names a block once"

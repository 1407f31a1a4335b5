#!/bin/sh
# Interop of standalone journal files: journals made by `ujbd format` and
# filled by `ujbd write --data=` are read by `debugfs logdump -f` (which
# takes a bare journal file, superblock in block 0) with the same sequences,
# target blocks, journal blocks and revokes as `ujbd dump`; `ujbd recover
# --data=` then gives the expected blocks and marks the journal empty.
# Matrix: 1 KiB and 4 KiB blocks x checksum none, v2, v3 x 64bit on/off.
#   T1 10=A 11=B; T2 12=magic+C (escaped), revokes 11; T3 13=D.
#   Expected: 10=A 11=0 (never written: T1's copy revoked) 12=c03b3998 C.. 13=D.
. "$SRCDIR/tests/interop/interop.lib"
need

run_case() { # BS CSUM 64BIT-FLAG NAME
	bs=$1 name=$4
	jnl=$T/$name.jnl data=$T/$name.data
	note "$name: ujbd format --block-size=$bs --csum=$2 $3"
	rm -f "$jnl" "$data"
	ujbd_ok format "$jnl" --size=$((1024 * bs)) --block-size="$bs" --csum="$2" $3
	truncate -s $((4096 * bs)) "$data"
	fill "$T/a" "$bs" A; fill "$T/b" "$bs" B; fill "$T/c" "$bs" C magic; fill "$T/d" "$bs" D
	ujbd_ok write "$jnl" --data="$data" --block=10:"$T/a" --block=11:"$T/b"
	ujbd_ok write "$jnl" --data="$data" --block=12:"$T/c" --revoke=11
	ujbd_ok write "$jnl" --data="$data" --block=13:"$T/d"
	logdump_list "$data" "$jnl" > "$T/ld.txt"
	dump_list "$jnl" > "$T/ud.txt"
	diff "$T/ld.txt" "$T/ud.txt" >&2 || die "$name: ujbd dump and debugfs logdump -f disagree"
	grep -q "^3 13 " "$T/ld.txt" || die "$name: logdump does not list transaction 3"
	ujbd_ok recover "$jnl" --data="$data"
	[ "$(blkhex "$data" "$bs" 10)" = 4141414141414141 ] || die "$name: block 10"
	[ "$(blkhex "$data" "$bs" 11)" = 0000000000000000 ] || die "$name: block 11 (revoked)"
	[ "$(blkhex "$data" "$bs" 12)" = c03b399843434343 ] || die "$name: block 12 (escape)"
	[ "$(blkhex "$data" "$bs" 13)" = 4444444444444444 ] || die "$name: block 13"
	[ "$(be32 "$jnl" 28)" = 0 ] || die "$name: s_start not 0 after recover"
	[ "$(be32 "$jnl" 24)" = 5 ] || die "$name: s_sequence $(be32 "$jnl" 24) after recover, want 5"
	h=$(sha256sum < "$data")
	ujbd_ok recover "$jnl" --data="$data"
	[ "$(sha256sum < "$data")" = "$h" ] || die "$name: a second recover changed the data"
	rm -f "$jnl" "$data"
}

for bs in 1024 4096; do
	for c in none v2 v3; do
		run_case $bs $c "" "s$bs-32-$c"
		run_case $bs $c --64bit "s$bs-64-$c"
	done
done
echo "PASS: standalone journals written by ujbd read alike by debugfs logdump"

#!/bin/sh
# Interop (c) + (d): transactions written by `ujbd write` are listed by
# `debugfs logdump -a` (sequences, FS blocks, journal blocks, revokes: the
# same as `ujbd dump --json`), replayed by `e2fsck -fy` into the expected
# block contents, and replayed identically by `ujbd recover`.
#
# Matrix: 1 KiB and 4 KiB blocks x metadata_csum on/off x 64bit on/off x
# journal checksum (v3 and v2 with metadata_csum; v1 and none without). The
# journal format is chosen first with `debugfs journal_open [-c [-v 2]]`
# (then closed, empty), so ujbd writes in the format debugfs set up - the
# v1 case with revokes here is the kernel rule (revoke blocks outside the
# commit crc32) that debugfs itself gets wrong.
#   T1 b0=A b1=B; T2 b2=magic+C (escaped) b3=D; T3 b4=F, revokes b1 and b3;
#   T4 b1=E.   Expected: b0=A b1=E b2=c03b3998 C.. b3=o b4=F.
. "$SRCDIR/tests/interop/interop.lib"
need

run_case() { # BS MKFS_OPTS JOURNAL_OPEN_ARGS NAME
	bs=$1 opts=$2 jopen=$3 name=$4
	img=$T/$name.img
	note "$name: -b $bs $opts, journal_open $jopen"
	mkimg "$img" "$bs" "$opts" 16M
	set -- $(mkfile "$img" "$bs" 5)
	[ $# -eq 5 ] || die "$name: file f has $# blocks, not 5"
	b0=$1 b1=$2 b2=$3 b3=$4 b4=$5
	dfs "$img" "$jopen" ""
	journal_features_are "$img" "$name"
	has_feature "$img" needs_recovery && die "$name: needs_recovery set before any write"
	jsb=$(($(jsb_pblk "$img") * bs))
	seq0=$(be32 "$img" $((jsb + 24)))
	fill "$T/a" "$bs" A; fill "$T/b" "$bs" B; fill "$T/c" "$bs" C magic
	fill "$T/d" "$bs" D; fill "$T/e" "$bs" E; fill "$T/f" "$bs" F

	ujbd_ok write "$img" --block=$b0:"$T/a" --block=$b1:"$T/b"
	has_feature "$img" needs_recovery || die "$name: ujbd write left needs_recovery clear"
	ujbd_ok write "$img" --block=$b2:"$T/c" --block=$b3:"$T/d"
	ujbd_ok write "$img" --block=$b4:"$T/f" --revoke=$b1 --revoke=$b3
	ujbd_ok write "$img" --block=$b1:"$T/e"
	journal_features_are "$img" "$name"

	# logdump lists exactly our four transactions, blocks and revokes
	logdump_list "$img" > "$T/ld.txt"
	{ echo "$seq0 $b0"; echo "$seq0 $b1"; echo "$((seq0 + 1)) $b2"; echo "$((seq0 + 1)) $b3"
	  echo "$((seq0 + 2)) $b4"; echo "$((seq0 + 2)) R $b1"; echo "$((seq0 + 2)) R $b3"
	  echo "$((seq0 + 3)) $b1"; } | sort > "$T/want.txt"
	awk '$2 == "R" { print; next } { print $1, $2 }' "$T/ld.txt" | sort > "$T/got.txt"
	diff "$T/want.txt" "$T/got.txt" >&2 || die "$name: debugfs logdump does not list what ujbd wrote"
	debugfs -R "logdump" "$img" 2>/dev/null | grep -q "Found expected sequence $((seq0 + 3)), type 2 (commit block)" \
		|| die "$name: logdump does not see the commit of the last transaction"
	# the escaped block is stored with its magic zeroed
	jb=$(awk -v s=$((seq0 + 1)) -v t=$b2 '$1 == s && $2 == t { print $3 }' "$T/ld.txt")
	pb=$(debugfs -R "bmap <8> $jb" "$img" 2>/dev/null | tr -dc '0-9')
	[ "$(blkhex "$img" "$bs" "$pb")" = 0000000043434343 ] || die "$name: block $b2 not escaped in the log"
	dump_agrees "$img"

	cp --sparse=always "$img" "$T/e.img"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$T/e.img"
	fsck_clean "$T/e.img"
	ujbd_ok recover "$T/u.img"
	for f in e u; do
		[ "$(blkhex "$T/$f.img" "$bs" "$b0")" = 4141414141414141 ] || die "$name/$f: b0 $(blkhex "$T/$f.img" "$bs" "$b0")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b1")" = 4545454545454545 ] || die "$name/$f: b1 $(blkhex "$T/$f.img" "$bs" "$b1")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b2")" = c03b399843434343 ] || die "$name/$f: b2 (escape) $(blkhex "$T/$f.img" "$bs" "$b2")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b3")" = 6f6f6f6f6f6f6f6f ] || die "$name/$f: b3 (revoked) $(blkhex "$T/$f.img" "$bs" "$b3")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b4")" = 4646464646464646 ] || die "$name/$f: b4 $(blkhex "$T/$f.img" "$bs" "$b4")"
		[ "$(blksha "$T/$f.img" "$bs" "$b1")" = "$(sha256sum < "$T/e" | cut -d' ' -f1)" ] || die "$name/$f: b1 not E throughout"
	done
	same_except "$T/e.img" "$T/u.img" "$bs" "$jsb"
	[ "$(be32 "$T/e.img" $((jsb + 24)))" = $((seq0 + 5)) ] || die "$name: e2fsck s_sequence $(be32 "$T/e.img" $((jsb + 24))), want $((seq0 + 5))"
	[ "$(be32 "$T/u.img" $((jsb + 24)))" = $((seq0 + 5)) ] || die "$name: ujbd s_sequence $(be32 "$T/u.img" $((jsb + 24))), want $((seq0 + 5))"
	fsck_clean "$T/u.img"
	rm -f "$img" "$T/e.img" "$T/u.img"
}

each_config run_case
echo "PASS: ujbd write transactions replayed by e2fsck and listed by debugfs in 16 configs"

#!/bin/sh
# Interop (a) + (d): journals written by debugfs are replayed by
# `ujbd recover` exactly as `e2fsck -fy` replays them, and `ujbd dump`
# lists what `debugfs logdump -a` lists.
#
# Matrix: 1 KiB and 4 KiB blocks x metadata_csum on/off x 64bit on/off x
# journal checksum (v3 and v2 with metadata_csum; v1 = COMPAT_CHECKSUM and
# none without). Each journal holds, one debugfs invocation per transaction:
#   T1 b0=A b1=B; T2 b2=magic+C (escaped) b3=D; T3 revokes b1 and b3;
#   T4 b1=E; T5 b0=X without a commit block (torn, never replayed).
# Expected after replay: b0=A b1=E b2=c03b3998 C.. b3=o (untouched; D with
# v1, where T3 is left out: debugfs 1.47.0's v1 commit checksum also covers
# the revoke blocks, which recovery leaves out) - on both copies, which
# must also be identical outside the two superblocks, with the same
# journal s_sequence/s_start.
. "$SRCDIR/tests/interop/interop.lib"
need

run_case() { # BS MKFS_OPTS JOURNAL_OPEN_ARGS NAME
	bs=$1 opts=$2 jopen=$3 name=$4
	img=$T/$name.img
	note "$name: -b $bs $opts, journal_open $jopen"
	mkimg "$img" "$bs" "$opts" 16M
	set -- $(mkfile "$img" "$bs" 4)
	[ $# -eq 4 ] || die "$name: file f has $# blocks, not 4"
	b0=$1 b1=$2 b2=$3 b3=$4
	fill "$T/a" "$bs" A; fill "$T/b" "$bs" B; fill "$T/c" "$bs" C magic
	fill "$T/d" "$bs" D; fill "$T/e" "$bs" E; fill "$T/x" "$bs" X
	cat "$T/a" "$T/b" > "$T/ab"; cat "$T/c" "$T/d" > "$T/cd"
	dfs "$img" "$jopen" "journal_write -b $b0,$b1 $T/ab"
	dfs "$img" "$jopen" "journal_write -b $b2,$b3 $T/cd"
	ntx=3 want3=6f6f6f6f6f6f6f6f
	case $name in
	*v1*) want3=4444444444444444 ;;
	*) dfs "$img" "$jopen" "journal_write -r $b1,$b3"; ntx=4 ;;
	esac
	dfs "$img" "$jopen" "journal_write -b $b1 $T/e"
	dfs "$img" "$jopen" "journal_write -c -b $b0 $T/x"
	has_feature "$img" needs_recovery || die "$name: debugfs left needs_recovery clear"
	journal_features_are "$img" "$name"

	# ujbd info reads the superblock dumpe2fs reads
	ujbd_ok info --json "$img"
	dseq=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Journal sequence:/ { print $3 }')
	dstart=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Journal start:/ { print $3 }')
	jq -e ".sequence == $((dseq)) and .start == $dstart and .needs_recovery == true" \
		"$T/ujbd.out" >/dev/null \
		|| { cat "$T/ujbd.out" >&2; die "$name: ujbd info disagrees with dumpe2fs (sequence $dseq, start $dstart)"; }

	# (d) the listing, before anything is replayed
	dump_agrees "$img"
	jq -e "[.transactions[] | select(.committed)] | length == $ntx" "$T/dump.json" >/dev/null \
		|| die "$name: ujbd dump does not show $ntx committed transactions"
	jq -e '[.transactions[] | select(.committed | not)] | length == 1' "$T/dump.json" >/dev/null \
		|| die "$name: ujbd dump does not show the torn transaction as uncommitted"

	# --dry-run writes nothing
	h0=$(sha256sum < "$img")
	ujbd_ok recover --dry-run "$img"
	[ "$(sha256sum < "$img")" = "$h0" ] || die "$name: recover --dry-run changed the image"

	cp --sparse=always "$img" "$T/e.img"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$T/e.img"
	ujbd_ok recover --json "$T/u.img"
	jq -e ".replayed_transactions == $ntx and (.replayed_blocks | type == \"number\")
		and (.revoked_blocks | type == \"number\")" "$T/ujbd.out" >/dev/null \
		|| { cat "$T/ujbd.out" >&2; die "$name: recover --json: expected replayed_transactions $ntx"; }

	for f in e u; do
		[ "$(blkhex "$T/$f.img" "$bs" "$b0")" = 4141414141414141 ] || die "$name/$f: b0 $(blkhex "$T/$f.img" "$bs" "$b0")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b1")" = 4545454545454545 ] || die "$name/$f: b1 $(blkhex "$T/$f.img" "$bs" "$b1")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b2")" = c03b399843434343 ] || die "$name/$f: b2 (escape) $(blkhex "$T/$f.img" "$bs" "$b2")"
		[ "$(blkhex "$T/$f.img" "$bs" "$b3")" = $want3 ] || die "$name/$f: b3 $(blkhex "$T/$f.img" "$bs" "$b3")"
	done
	jsb=$(($(jsb_pblk "$img") * bs))
	same_except "$T/e.img" "$T/u.img" "$bs" "$jsb"
	for off in 24 28; do # s_sequence, s_start
		[ "$(be32 "$T/e.img" $((jsb + off)))" = "$(be32 "$T/u.img" $((jsb + off)))" ] \
			|| die "$name: journal sb field @$off: e2fsck $(be32 "$T/e.img" $((jsb + off))) ujbd $(be32 "$T/u.img" $((jsb + off)))"
	done
	[ "$(be32 "$T/u.img" $((jsb + 28)))" = 0 ] || die "$name: s_start not 0 after recover"
	has_feature "$T/u.img" needs_recovery && die "$name: ujbd recover left needs_recovery set"
	fsck_clean "$T/u.img"

	# again: nothing to do, nothing written
	h1=$(sha256sum < "$T/u.img")
	ujbd_ok recover "$T/u.img"
	[ "$(sha256sum < "$T/u.img")" = "$h1" ] || die "$name: a second recover changed the image"
	rm -f "$img" "$T/e.img" "$T/u.img"
}

each_config run_case
echo "PASS: 16 debugfs-written journals replayed identically by ujbd and e2fsck"

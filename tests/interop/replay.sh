#!/bin/sh
# Interop: recovery writes each block once, its last replayed copy, in
# block order, from the log it read in large chunks (src/jbd/recovery.c,
# replay.c, logread.c); e2fsck replays every copy in log order. Both must
# leave the same image. The journals here are what that engine finds hard:
# transactions larger than one 2 MiB read of the log, the same blocks
# logged again and again (up to 7 copies), blocks revoked and written again
# after the revoke, escaped blocks (in place in the held log), blocks logged
# out of order (gathered, not written straight from the log), and a second
# round that wraps around the end of the log. Every journal checksum kind,
# at 4 KiB, and one 1 KiB image.
#
# File f has N blocks (indexes 0..N-1). Round 1: t1 = 0..599 (every 50th
# escaped), t2 = 600..N-1, t3 = 0..599 again; `ujbd recover`. Round 2, from
# s_head, past the end of the log: t1 = 0..399, t2 = 300 blocks in a
# scattered order (7i mod N) and revokes 0..19, t3 = 10..59 (every 5th
# escaped), t4..t8 = 100..109 five times. Then `e2fsck -fy` and
# `ujbd recover` on copies: identical outside the superblocks, e2fsck -fn
# clean, and a few blocks checked by hand.
. "$SRCDIR/tests/interop/interop.lib"
need

N=1200

# mkblocks BS: the block file of every (round, transaction, index) used,
# $T/blk/rRtTbI, in one awk process; ESC lists "r t every" triples whose
# indexes divisible by `every` (plus 7 for every 50) start with the magic.
mkblocks() {
	rm -rf "$T/blk"; mkdir "$T/blk"
	LC_ALL=C awk -v bs="$1" -v dir="$T/blk" -v n=$N 'BEGIN {
		nt[1] = 3; nt[2] = 8
		for (r = 1; r <= 2; r++) for (t = 1; t <= nt[r]; t++) for (b = 0; b < n; b++) {
			if (!want(r, t, b)) continue
			s = sprintf("round %d transaction %d block %d\n", r, t, b); buf = s
			while (length(buf) < bs) buf = buf buf
			buf = substr(buf, 1, bs)
			if ((r == 1 && t == 1 && b % 50 == 7) || (r == 2 && t == 3 && b % 5 == 0))
				buf = "\300\073\071\230" substr(buf, 5)
			f = sprintf("%s/r%dt%db%d", dir, r, t, b)
			printf "%s", buf > f; close(f) } }
		function want(r, t, b) {
			if (r == 1) return t == 2 ? b >= 600 : b < 600
			if (t == 1) return b < 400
			if (t == 2) return 1
			if (t == 3) return b >= 10 && b < 60
			return b >= 100 && b < 110 }'
}

# write_tx IMG R T INDEXES [REVOKE_FIRST REVOKE_LAST]: the blocks of f at
# INDEXES (a list, in that order) get round R transaction T's contents, and
# the indexes REVOKE_FIRST..LAST that T does not write are revoked (ujbd
# write refuses a block both written and revoked in one transaction).
write_tx() {
	_args=$(echo "$4" | tr ' ' '\n' | awk -v r="$2" -v t="$3" -v dir="$T/blk" \
		-v ra="${5:--1}" -v rb="${6:--2}" '
		NR == FNR { blk[FNR - 1] = $1; next }
		$1 != "" { printf " --block=%s:%s/r%dt%db%d", blk[$1], dir, r, t, $1; w[$1] = 1 }
		END { for (i = ra; i <= rb; i++) if (!(i in w)) printf " --revoke=%s", blk[i] }' "$T/blocks" -)
	ujbd_ok write "$1" $_args
}

seqs() { awk -v a="$1" -v b="$2" 'BEGIN { for (i = a; i <= b; i++) printf "%d ", i }'; }

# check_block IMG BS INDEX FILE: block INDEX of f holds FILE
check_block() {
	_b=$(sed -n "$(($3 + 1))p" "$T/blocks")
	[ "$(blksha "$1" "$2" "$_b")" = "$(sha256sum < "$4" | cut -d' ' -f1)" ] \
		|| die "$name: block $3 of f ($_b) is not $(basename "$4")"
}

run_case() { # BS MKFS_OPTS JOURNAL_SIZE_MB JOURNAL_OPEN_ARGS NAME
	bs=$1 opts=$2 jmb=$3 jopen=$4 name=$5
	img=$T/$name.img
	note "$name: -b $bs $opts -J size=$jmb, journal_open $jopen"
	mkimg "$img" "$bs" "$opts -J size=$jmb" $((bs / 1024 * 16))M
	mkblocks "$bs"
	mkfile "$img" "$bs" $N > "$T/blocks"
	[ "$(wc -l < "$T/blocks")" -eq $N ] || die "$name: file f has not $N blocks"
	dfs "$img" "$jopen" ""
	journal_features_are "$img" "$name"
	jsb=$(($(jsb_pblk "$img") * bs))
	maxlen=$(be32 "$img" $((jsb + 16)))

	write_tx "$img" 1 1 "$(seqs 0 599)"
	write_tx "$img" 1 2 "$(seqs 600 $((N - 1)))"
	write_tx "$img" 1 3 "$(seqs 0 599)"
	ujbd_ok recover "$img"
	fsck_clean "$img"
	head=$(be32 "$img" $((jsb + 0x58)))

	write_tx "$img" 2 1 "$(seqs 0 399)"
	write_tx "$img" 2 2 "$(awk -v n=$N 'BEGIN { for (i = 0; i < 300; i++) printf "%d ", (7 * i) % n }')" 0 19
	write_tx "$img" 2 3 "$(seqs 10 59)"
	for t in 4 5 6 7 8; do
		write_tx "$img" 2 $t "$(seqs 100 109)"
	done
	dump_agrees "$img"
	minjb=$(awk '$2 != "R" { print $3 }' "$T/ld.txt" | sort -n | head -1)
	[ "$minjb" -lt "$head" ] || die "$name: round 2 did not wrap (from $head, lowest $minjb)"
	note "$name: round 2 starts at $head of $maxlen and wraps to $minjb"

	cp --sparse=always "$img" "$T/e.img"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$T/e.img"
	ujbd_ok recover --json "$T/u.img"
	jq -e '.replayed_transactions == 8' "$T/ujbd.out" >/dev/null \
		|| die "$name: ujbd recover: $(cat "$T/ujbd.out")"
	same_except "$T/e.img" "$T/u.img" "$bs" "$jsb"
	for off in 24 28; do
		[ "$(be32 "$T/e.img" $((jsb + off)))" = "$(be32 "$T/u.img" $((jsb + off)))" ] \
			|| die "$name: journal sb field @$off differs between e2fsck and ujbd"
	done
	fsck_clean "$T/u.img"
	check_block "$T/u.img" "$bs" 105 "$T/blk/r2t8b105"     # the last of 7 copies
	check_block "$T/u.img" "$bs" 15 "$T/blk/r2t3b15"       # escaped, after its revoke
	check_block "$T/u.img" "$bs" 5 "$T/blk/r1t3b5"         # r2t1's copy revoked
	check_block "$T/u.img" "$bs" 700 "$T/blk/r2t2b700"     # logged out of order
	check_block "$T/u.img" "$bs" 350 "$T/blk/r2t2b350"
	check_block "$T/u.img" "$bs" 351 "$T/blk/r2t1b351"
	check_block "$T/u.img" "$bs" 957 "$T/blk/r1t2b957"
	rm -f "$img" "$T/e.img" "$T/u.img"
}

run_case 4096 "-O metadata_csum,64bit" 8 "-c" k4096-64-v3
run_case 4096 "-O metadata_csum,^64bit" 8 "-c -v 2" k4096-32-v2
run_case 4096 "-O ^metadata_csum,64bit" 8 "-c" k4096-64-v1
run_case 4096 "-O ^metadata_csum,^64bit" 8 "" k4096-32-none
run_case 1024 "-O metadata_csum,64bit" 2 "-c" k1024-64-v3
echo "PASS: write-once recovery gives e2fsck's image (big, repeated, revoked, escaped, scattered, wrapped)"

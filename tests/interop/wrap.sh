#!/bin/sh
# Interop (b) + (d): a log that WRAPS. debugfs never wraps, so ujbd makes
# one: round 1 = three `ujbd write` transactions of 300 blocks that fill
# most of a 1024-block journal, then `ujbd recover` (which records the end
# of the log in s_head); round 2 = three more transactions that start there
# and run past the end of the log area back to s_first. The wrapped log is
# then replayed by `e2fsck -fy` on one copy and `ujbd recover` on another:
# identical outside the superblocks, expected contents in every block, and
# `ujbd dump` lists what `debugfs logdump -a` lists.
#
# Round 2: t1 writes blocks 0-199, t2 writes 100-299 and revokes 0-9, t3
# writes 50-249. Expected: 0-9 keep round 1's last copy (t1's is revoked),
# 10-49 t1, 50-249 t3, 250-299 t2.
. "$SRCDIR/tests/interop/interop.lib"
need

N=300

# mkblocks BS: every block file round R transaction T block index B could
# need ($T/blk/rRtTbB), in one awk process (forks are slow on a busy box).
mkblocks() {
	rm -rf "$T/blk"; mkdir "$T/blk"
	awk -v bs="$1" -v dir="$T/blk" -v n=$N 'BEGIN {
		for (r = 1; r <= 2; r++) for (t = 1; t <= 3; t++) for (b = 0; b < n; b++) {
			s = sprintf("round %d transaction %d block %d\n", r, t, b); buf = s
			while (length(buf) < bs) buf = buf buf
			f = sprintf("%s/r%dt%db%d", dir, r, t, b)
			printf "%s", substr(buf, 1, bs) > f; close(f) } }'
}

# write_tx IMG R T FIRST LAST [REVOKE_FIRST REVOKE_LAST]: block indexes
# FIRST..LAST of file f get round R transaction T's contents.
write_tx() {
	_args=$(awk -v r="$2" -v t="$3" -v a="$4" -v b="$5" -v ra="${6:--1}" -v rb="${7:--2}" \
		-v dir="$T/blk" '{ i = NR - 1
		  if (i >= a && i <= b) printf " --block=%s:%s/r%dt%db%d", $1, dir, r, t, i
		  if (i >= ra && i <= rb) printf " --revoke=%s", $1 }' "$T/blocks")
	ujbd_ok write "$1" $_args
}

# expected: the content file f must have after round 2, block by block.
expected() {
	awk -v dir="$T/blk" '{ i = NR - 1
		if (i < 10) f = "r1t3"; else if (i < 50) f = "r2t1"
		else if (i < 250) f = "r2t3"; else f = "r2t2"
		print dir "/" f "b" i }' "$T/blocks" | xargs cat
}

run_case() { # BS MKFS_OPTS JOURNAL_SIZE_MB JOURNAL_OPEN_ARGS NAME
	bs=$1 opts=$2 jmb=$3 jopen=$4 name=$5
	img=$T/$name.img
	note "$name: -b $bs $opts -J size=$jmb, journal_open $jopen"
	mkimg "$img" "$bs" "$opts -J size=$jmb" 32M
	mkblocks "$bs"
	mkfile "$img" "$bs" $N > "$T/blocks"
	[ "$(wc -l < "$T/blocks")" -eq $N ] || die "$name: file f has not $N blocks"
	expected > "$T/expected"
	dfs "$img" "$jopen" ""
	journal_features_are "$img" "$name"
	jsb=$(($(jsb_pblk "$img") * bs))
	maxlen=$(be32 "$img" $((jsb + 16)))
	[ "$maxlen" -eq 1024 ] || die "$name: journal has $maxlen blocks, want 1024"

	# round 1: fill most of the log, then let ujbd recover it
	write_tx "$img" 1 1 0 299
	write_tx "$img" 1 2 0 299
	write_tx "$img" 1 3 0 299
	ujbd_ok recover "$img"
	fsck_clean "$img"
	head=$(be32 "$img" $((jsb + 0x58)))
	[ "$head" -gt 600 ] && [ "$head" -lt "$maxlen" ] \
		|| die "$name: after round 1 ujbd recover left s_head = $head (want the log end, > 600)"

	# round 2: starts at s_head and wraps
	write_tx "$img" 2 1 0 199
	write_tx "$img" 2 2 100 299 0 9
	write_tx "$img" 2 3 50 249
	start=$(be32 "$img" $((jsb + 28)))
	[ "$start" -eq "$head" ] || die "$name: round 2 starts at $start, not at s_head $head"
	dump_agrees "$img"
	jq -e "[.transactions[] | select(.committed)] | length == 3" "$T/dump.json" >/dev/null \
		|| die "$name: ujbd dump does not show 3 committed transactions"
	minjb=$(awk '$2 != "R" { print $3 }' "$T/ld.txt" | sort -n | head -1)
	maxjb=$(awk '$2 != "R" { print $3 }' "$T/ld.txt" | sort -n | tail -1)
	[ "$minjb" -lt "$start" ] && [ "$maxjb" -ge $((maxlen - 2)) ] \
		|| die "$name: the log did not wrap (journal blocks $minjb..$maxjb, start $start)"
	note "$name: round 2 starts at s_head $start, its blocks span journal blocks $minjb..$maxjb"

	cp --sparse=always "$img" "$T/e.img"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$T/e.img"
	ujbd_ok recover "$T/u.img"
	same_except "$T/e.img" "$T/u.img" "$bs" "$jsb"
	for off in 24 28; do
		[ "$(be32 "$T/e.img" $((jsb + off)))" = "$(be32 "$T/u.img" $((jsb + off)))" ] \
			|| die "$name: journal sb field @$off differs between e2fsck and ujbd"
	done
	for f in e u; do
		debugfs -R "dump f $T/$f.out" "$T/$f.img" >/dev/null 2>&1
		cmp "$T/expected" "$T/$f.out" >&2 || die "$name: file f after the $f replay is not as expected"
	done
	fsck_clean "$T/u.img"
	rm -f "$img" "$T/e.img" "$T/u.img"
}

run_case 1024 "-O metadata_csum,64bit" 1 "-c" k1024-64-v3
run_case 1024 "-O ^metadata_csum,^64bit" 1 "-c" k1024-32-v1
run_case 4096 "-O metadata_csum,64bit" 4 "-c -v 2" k4096-64-v2
run_case 4096 "-O ^metadata_csum,^64bit" 4 "" k4096-32-none
echo "PASS: wrapped logs replayed identically by ujbd and e2fsck"

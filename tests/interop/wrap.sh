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

# blockfile R T B BS: the content round R, transaction T gives block index B.
blockfile() {
	_f=$T/blk/r$1t$2b$3
	[ -f "$_f" ] || yes "round $1 transaction $2 block $3" | head -c "$4" > "$_f"
	echo "$_f"
}

# write_tx IMG BS R T FIRST LAST [REVOKE_FIRST REVOKE_LAST]
write_tx() {
	_args=""
	_i=$5
	while [ "$_i" -le "$6" ]; do
		_args="$_args --block=$(eval echo \$B$_i):$(blockfile "$3" "$4" "$_i" "$2")"
		_i=$((_i + 1))
	done
	if [ $# -ge 8 ]; then
		_i=$7
		while [ "$_i" -le "$8" ]; do
			_args="$_args --revoke=$(eval echo \$B$_i)"
			_i=$((_i + 1))
		done
	fi
	ujbd_ok write "$1" $_args
}

run_case() { # BS MKFS_OPTS JOURNAL_SIZE_MB JOURNAL_OPEN_ARGS NAME
	bs=$1 opts=$2 jmb=$3 jopen=$4 name=$5
	img=$T/$name.img
	note "$name: -b $bs $opts -J size=$jmb, journal_open $jopen"
	mkimg "$img" "$bs" "$opts -J size=$jmb" 32M
	rm -rf "$T/blk"; mkdir "$T/blk"
	i=0
	for b in $(mkfile "$img" "$bs" $N); do eval B$i=$b; i=$((i + 1)); done
	[ $i -eq $N ] || die "$name: file f has $i blocks"
	dfs "$img" "$jopen" ""
	journal_features_are "$img" "$name"
	jsb=$(($(jsb_pblk "$img") * bs))
	maxlen=$(be32 "$img" $((jsb + 16)))
	[ "$maxlen" -eq 1024 ] || die "$name: journal has $maxlen blocks, want 1024"

	# round 1: fill most of the log, then let ujbd recover it
	write_tx "$img" "$bs" 1 1 0 299
	write_tx "$img" "$bs" 1 2 0 299
	write_tx "$img" "$bs" 1 3 0 299
	ujbd_ok recover "$img"
	fsck_clean "$img"
	head=$(be32 "$img" $((jsb + 0x58)))
	[ "$head" -gt 600 ] && [ "$head" -lt "$maxlen" ] \
		|| die "$name: after round 1 ujbd recover left s_head = $head (want the log end, > 600)"

	# round 2: starts at s_head and wraps
	write_tx "$img" "$bs" 2 1 0 199
	write_tx "$img" "$bs" 2 2 100 299 0 9
	write_tx "$img" "$bs" 2 3 50 249
	start=$(be32 "$img" $((jsb + 28)))
	[ "$start" -eq "$head" ] || die "$name: round 2 starts at $start, not at s_head $head"
	dump_agrees "$img"
	jq -e "[.transactions[] | select(.committed)] | length == 3" "$T/dump.json" >/dev/null \
		|| die "$name: ujbd dump does not show 3 committed transactions"
	minjb=$(awk '$2 != "R" { print $3 }' "$T/ld.txt" | sort -n | head -1)
	maxjb=$(awk '$2 != "R" { print $3 }' "$T/ld.txt" | sort -n | tail -1)
	[ "$minjb" -lt "$start" ] && [ "$maxjb" -ge $((maxlen - 2)) ] \
		|| die "$name: the log did not wrap (journal blocks $minjb..$maxjb, start $start)"

	cp --sparse=always "$img" "$T/e.img"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$T/e.img"
	ujbd_ok recover "$T/u.img"
	same_except "$T/e.img" "$T/u.img" "$bs" "$jsb"
	for off in 24 28; do
		[ "$(be32 "$T/e.img" $((jsb + off)))" = "$(be32 "$T/u.img" $((jsb + off)))" ] \
			|| die "$name: journal sb field @$off differs between e2fsck and ujbd"
	done
	i=0
	while [ $i -lt $N ]; do
		if [ $i -lt 10 ]; then r=1 t=3
		elif [ $i -lt 50 ]; then r=2 t=1
		elif [ $i -lt 250 ]; then r=2 t=3
		else r=2 t=2
		fi
		[ "$(blksha "$T/u.img" "$bs" "$(eval echo \$B$i)")" = \
		  "$(sha256sum < "$(blockfile $r $t $i "$bs")" | cut -d' ' -f1)" ] \
			|| die "$name: block index $i ($(eval echo \$B$i)) is not round $r transaction $t"
		i=$((i + 1))
	done
	fsck_clean "$T/u.img"
	rm -f "$img" "$T/e.img" "$T/u.img"
}

run_case 1024 "-O metadata_csum,64bit" 1 "-c" k1024-64-v3
run_case 1024 "-O ^metadata_csum,^64bit" 1 "-c" k1024-32-v1
run_case 4096 "-O metadata_csum,64bit" 4 "-c -v 2" k4096-64-v2
run_case 4096 "-O ^metadata_csum,^64bit" 4 "" k4096-32-none
echo "PASS: wrapped logs replayed identically by ujbd and e2fsck"

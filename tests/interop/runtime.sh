#!/bin/sh
# Interop of the journal RUNTIME with e2fsprogs: the driver
# tests/interop/test_runtime_ext4 (UJBD_RT_IMAGE mode) opens an ext4 image
# with ujbd_open_path, commits four transactions on the blocks of a file
# written by debugfs (metadata, an escaped block, a revoke, ordered data,
# the revoked block journaled again) and stops hard (ujbd_close_hard) after
# the commits, before any checkpoint. Then:
#   - `debugfs logdump -a` lists exactly those transactions, blocks and the
#     revoke record (and not the ordered data block),
#   - `e2fsck -fy` replays them: every block holds what ujbd committed,
#   - `e2fsck -fn` is clean afterwards, and `ujbd recover` on a copy of the
#     stopped image gives the same blocks.
# Matrix: 1 KiB and 4 KiB blocks x metadata_csum on and off.
. "$SRCDIR/tests/interop/interop.lib"
need
DRV=${BUILD:-build}/tests/interop/test_runtime_ext4
[ -x "$DRV" ] || skip "driver $DRV not built"

run_case() { # BS MKFS_OPTS NAME
	bs=$1 opts=$2 name=$3
	img=$T/$name.img
	note "$name: -b $bs $opts"
	mkimg "$img" "$bs" "$opts" 16M
	set -- $(mkfile "$img" "$bs" 6)
	[ $# -eq 6 ] || die "$name: file f has $# blocks, not 6"
	blocks="$1,$2,$3,$4,$5,$6" b1=$2 b5=$6
	UJBD_RT_IMAGE=$img UJBD_RT_BLOCKS=$blocks "$DRV" > "$T/drv.out" 2> "$T/drv.err" \
		|| { cat "$T/drv.err" >&2; die "$name: the driver failed"; }
	has_feature "$img" needs_recovery || die "$name: needs_recovery clear after a hard stop"
	set -- $(awk '$1 == "tid" { print $2 }' "$T/drv.out")
	[ $# -eq 4 ] || die "$name: driver printed $# tids"
	t1=$1 t2=$2 t3=$3 t4=$4
	# logdump: our transactions, their blocks, the revoke
	logdump_list "$img" > "$T/ld.txt"
	set -- $(echo "$blocks" | tr ',' ' ')
	{ echo "$t1 $1"; echo "$t1 $2"; echo "$t2 $3"; echo "$t2 $4"; echo "$t3 $5"
	  echo "$t3 R $2"; echo "$t4 $2"; } | sort > "$T/want.txt"
	awk '$2 == "R" { print; next } { print $1, $2 }' "$T/ld.txt" | sort > "$T/got.txt"
	diff "$T/want.txt" "$T/got.txt" >&2 || die "$name: logdump does not list what ujbd committed"
	cp --sparse=always "$img" "$T/u.img"
	e2fsck_replay "$img"
	fsck_clean "$img"
	ujbd_ok recover "$T/u.img"
	for f in "$img" "$T/u.img"; do
		while read -r w1 blk w3 c m; do
			[ "$w1" = block ] && [ "$w3" = fill ] || continue
			want=$(printf '%s' "$c" | od -An -tx1 | tr -d ' \n')
			want=$want$want$want$want$want$want$want$want
			[ "$m" = magic ] && want=c03b3998$(echo "$want" | cut -c9-16)
			[ "$(blkhex "$f" "$bs" "$blk")" = "$want" ] \
				|| die "$name: block $blk of $(basename "$f") is $(blkhex "$f" "$bs" "$blk"), want $want"
		done < "$T/drv.out"
	done
	rm -f "$img" "$T/u.img"
}

for bs in 1024 4096; do
	run_case $bs "-O metadata_csum" k$bs-csum
	run_case $bs "-O ^metadata_csum" k$bs-nocsum
done
echo "runtime interop: 4 images, ujbd commits replayed by e2fsck and ujbd recover"

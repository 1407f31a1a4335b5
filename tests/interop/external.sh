#!/bin/sh
# Interop (e): an external journal device (mke2fs -O journal_dev, attached
# with mke2fs -J device=..., which needs a loop device; without one the
# attachment is made by hand: fs s_journal_uuid + has_journal, journal
# s_nr_users = 1 + s_users[0] = fs uuid).
#   1. `ujbd write --journal=ext.jnl` transactions are listed by
#      `debugfs logdump -f` like `ujbd dump --journal=`, and replayed by
#      `e2fsck -fy -j ext.jnl` into the expected blocks;
#   2. a debugfs-written external journal (journal_open -f) is replayed by
#      `ujbd recover --journal=` exactly as by `e2fsck -fy -j`.
# T1 b0=A b1=B; T2 b2=magic+C, revokes b1; T3 b3=D.
# Expected: b0=A b1=o b2=c03b3998 C.. b3=D.
. "$SRCDIR/tests/interop/interop.lib"
need
L=""
trap '[ -n "$L" ] && losetup -d "$L" 2>/dev/null; rm -rf "$T"' EXIT

# attach FS JNL BS MKFS_OPTS: make FS using the journal device JNL.
attach() {
	if command -v losetup >/dev/null 2>&1 && L=$(losetup -f --show "$2" 2>/dev/null); then
		mke2fs -q -F -t ext4 -b "$3" $4 -U $UUID -E lazy_itable_init=0 \
			-J device="$L" "$1" 32M >/dev/null 2>&1
		rc=$?
		losetup -d "$L"
		L=""
		[ $rc -eq 0 ] || die "mke2fs -J device=$L"
		return 0
	fi
	note "no loop device: attaching the journal by hand"
	mkimg "$1" "$3" "$4 -O ^has_journal" 32M
	ju=$(dumpe2fs -h "$2" 2>/dev/null | awk '/^Filesystem UUID:/ { print $3 }')
	printf 'feature has_journal\nssv journal_uuid %s\nssv journal_inum 0\n' "$ju" \
		| debugfs -w -f - "$1" >/dev/null 2>&1 || die "debugfs ssv"
	js=$(($(jsb_start "$3") * $3))
	printf '\000\000\000\001' | dd of="$2" bs=1 seek=$((js + 0x40)) conv=notrunc status=none
	printf '\021\021\021\021\042\042\063\063\104\104\125\125\125\125\125\125' \
		| dd of="$2" bs=1 seek=$((js + 0x100)) conv=notrunc status=none
	# debugfs changed the primary sb only; let e2fsck bring the backups in
	# line now, so that the replays compared later do not differ there.
	e2fsck -fy -j "$2" "$1" >/dev/null 2>&1
	fsck_clean "$1" -j "$2"
}

# jsb_start BS: device block of the jbd2 superblock on a journal device.
jsb_start() { [ "$1" -eq 1024 ] && echo 2 || echo 1; }

setup() { # BS MKFS_OPTS NAME
	bs=$1 name=$3
	fs=$T/$name.img jnl=$T/$name.jnl
	truncate -s 16M "$jnl"
	mke2fs -q -F -O journal_dev -b "$bs" "$jnl" >/dev/null 2>&1 || die "mke2fs -O journal_dev"
	attach "$fs" "$jnl" "$bs" "$2"
	dumpe2fs -h "$fs" 2>/dev/null | grep -q '^Journal UUID:' || die "$name: fs has no journal uuid"
	set -- $(mkfile "$fs" "$bs" 4)
	[ $# -eq 4 ] || die "$name: file f has $# blocks"
	b0=$1 b1=$2 b2=$3 b3=$4
	fill "$T/a" "$bs" A; fill "$T/b" "$bs" B; fill "$T/c" "$bs" C magic; fill "$T/d" "$bs" D
	jsb=$(($(jsb_start "$bs") * bs))
	fsize=$(stat -c %s "$fs")
}

# replay_both: e2fsck -fy -j on one copy, ujbd recover --journal on another;
# both get the expected blocks, identical fs images outside the ext4 sb,
# the same s_sequence/s_start in the journals.
replay_both() {
	for f in e u; do
		cp --sparse=always "$fs" "$T/$f.img"; cp --sparse=always "$jnl" "$T/$f.jnl"
	done
	e2fsck_replay "$T/e.img" -j "$T/e.jnl"
	ujbd_ok recover "$T/u.img" --journal="$T/u.jnl"
	for f in e u; do
		[ "$(blkhex "$T/$f.img" "$bs" "$b0")" = 4141414141414141 ] || die "$name/$f: b0"
		[ "$(blkhex "$T/$f.img" "$bs" "$b1")" = 6f6f6f6f6f6f6f6f ] || die "$name/$f: b1 (revoked)"
		[ "$(blkhex "$T/$f.img" "$bs" "$b2")" = c03b399843434343 ] || die "$name/$f: b2 (escape)"
		[ "$(blkhex "$T/$f.img" "$bs" "$b3")" = 4444444444444444 ] || die "$name/$f: b3"
	done
	same_except "$T/e.img" "$T/u.img" "$bs" "$fsize"
	for off in 24 28; do
		[ "$(be32 "$T/e.jnl" $((jsb + off)))" = "$(be32 "$T/u.jnl" $((jsb + off)))" ] \
			|| die "$name: journal sb field @$off: e2fsck $(be32 "$T/e.jnl" $((jsb + off))) ujbd $(be32 "$T/u.jnl" $((jsb + off)))"
	done
	has_feature "$T/u.img" needs_recovery && die "$name: ujbd recover left needs_recovery set"
	fsck_clean "$T/u.img" -j "$T/u.jnl"
	rm -f "$T/e.img" "$T/u.img" "$T/e.jnl" "$T/u.jnl"
}

ujbd_case() { # BS MKFS_OPTS NAME
	setup "$@"
	note "$name: ujbd write --journal, replayed by e2fsck -j"
	ujbd_ok write "$fs" --journal="$jnl" --block=$b0:"$T/a" --block=$b1:"$T/b"
	has_feature "$fs" needs_recovery || die "$name: ujbd write left needs_recovery clear"
	ujbd_ok write "$fs" --journal="$jnl" --block=$b2:"$T/c" --revoke=$b1
	ujbd_ok write "$fs" --journal="$jnl" --block=$b3:"$T/d"
	dump_agrees "$fs" "$jnl"
	replay_both
}

debugfs_case() { # BS MKFS_OPTS NAME JOURNAL_OPEN_ARGS
	setup "$1" "$2" "$3"
	note "$name: debugfs journal_open $4 -f, replayed by ujbd and e2fsck"
	cat "$T/a" "$T/b" > "$T/ab"
	dfs "$fs" "$4 -f $jnl" "journal_write -b $b0,$b1 $T/ab"
	dfs "$fs" "$4 -f $jnl" "journal_write -b $b2 -r $b1 $T/c"
	dfs "$fs" "$4 -f $jnl" "journal_write -b $b3 $T/d"
	logdump_list "$fs" "$jnl" | grep -q " $b3 " || die "$name: debugfs did not write the external journal"
	dump_agrees "$fs" "$jnl"
	replay_both
}

ujbd_case 4096 "-O metadata_csum" x4k-csum
ujbd_case 1024 "-O ^metadata_csum,^64bit" x1k-nocsum
debugfs_case 4096 "-O metadata_csum" x4k-csum-dfs "-c"
debugfs_case 1024 "-O ^metadata_csum,^64bit" x1k-nocsum-dfs ""
echo "PASS: external journal devices written and replayed like e2fsprogs"

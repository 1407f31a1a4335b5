#!/bin/bash
# bench/lab-real.sh: the lab's era scenarios, "then" beside "now" (docs/lab.md,
# "The real machine").
#
#   then  `ujbd lab --json` on the sim HDD (atime, smallfile, fsync-loop): the
#         lab's reproduction of 2007-2010, read at run time.
#   now   the same loads (bench/labload.c, built here) on today's kernel ext4,
#         over a loop device of this script's own (direct I/O onto a file in
#         BENCH_DIR), under each I/O scheduler the kernel offers for it (bfq,
#         mq-deadline, none); for atime the jbd2 thread at be:4 and at rt:4
#         (ionice); the loop device's bdi limited to the dirty memory of the
#         lab's 2007 machine (fs ram_bytes x dirty_ratio, strict_limit), so
#         that writeback reaches the device as a small RAM made it.
#
#   bench/lab-real.sh            a few minutes
#   QUICK=1 bench/lab-real.sh    a smoke run: the lab's --quick, small loads, one repetition
#   REPS=N                       repetitions of each "now" cell (default 3)
#   BENCH_DIR=DIR                where the loop device's file goes (default $TMPDIR or /tmp)
#   UJBD=path                    the binary (default build/ujbd, made if missing)
#
# Each "now" cell is the median over the repetitions with min..max; the
# variants of one repetition run one after the other, so the ratios (per
# repetition, then median and min..max) compare neighbours in time.
# Needs root (losetup, mkfs, mount, ionice of a kernel thread, the loop
# device's sysfs); without it, it says so and exits 0 having done nothing.
# It cleans up every mount and loop device it made and puts back the loop
# device's scheduler, rotational flag and bdi limits (trap); it touches
# nothing else. A benchmark never fails: exit 0 unless it could not run at
# all (2: no binary, no compiler).
set -u
cd "$(dirname "$0")/.." || exit 2
ME=bench/lab-real.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "$ME: needs root (losetup, mkfs.ext4, mount, ionice of jbd2, the loop device's sysfs): did nothing"
	exit 0
fi
for t in losetup mkfs.ext4 mount umount ionice pgrep jq cc; do
	command -v "$t" >/dev/null || { echo "$ME: '$t' is missing (scripts/install-deps): did nothing"; exit 0; }
done
UJBD=${UJBD:-build/ujbd}
REPS=${REPS:-3}
BASE=${BENCH_DIR:-${TMPDIR:-/tmp}}
if [ "${QUICK:-0}" = 1 ]; then
	REPS=1; LABQ=--quick; TREE_N=200; ATIME_S=2; IOZ_N=20; FSM_N=50; FL_N=50
else
	LABQ=""; TREE_N=2000; ATIME_S=8; IOZ_N=200; FSM_N=1000; FL_N=1000
fi
if [ ! -x "$UJBD" ]; then
	make -j2 all >/dev/null || { echo "$ME: cannot build $UJBD"; exit 2; }
fi
WORK=$(mktemp -d "$BASE/ujbd-labreal.XXXXXX") || exit 2
LOAD=$WORK/labload
cc -std=c11 -O2 -Wall -Wextra -Werror -o "$LOAD" bench/labload.c || { rm -rf "$WORK"; echo "$ME: cannot build labload"; exit 2; }

LOOP="" L="" MNT=$WORK/mnt BG="" SAVED=""
mkdir -p "$MNT" "$WORK/res"

# ---- cleanup: everything this script made, in reverse ----------------------------

cleanup() {
	[ -n "$BG" ] && kill "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" 2>/dev/null || umount -l "$MNT"; fi
	[ -n "$SAVED" ] && restore_dev
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The loop device's own settings this script changes: saved once, put back.
Q="" BDI=""
save_dev() {
	SAVED="$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$Q/scheduler") $(cat "$Q/rotational")"
	SAVED="$SAVED $(cat "$BDI/strict_limit" 2>/dev/null || echo -) $(cat "$BDI/max_ratio_fine" 2>/dev/null || echo -)"
	SAVED="$SAVED $(cat "$BDI/max_ratio")"
}
restore_dev() {
	# shellcheck disable=SC2086
	set -- $SAVED
	echo "$1" >"$Q/scheduler" 2>/dev/null
	echo "$2" >"$Q/rotational" 2>/dev/null
	[ "$3" != - ] && echo "$3" >"$BDI/strict_limit" 2>/dev/null
	if [ "$4" != - ]; then echo "$4" >"$BDI/max_ratio_fine" 2>/dev/null; else echo "$5" >"$BDI/max_ratio" 2>/dev/null; fi
}

# ---- then: the lab, read at run time ------------------------------------------------

echo "$ME: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r)," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "then: $UJBD lab $LABQ --json --scenario=atime,smallfile,fsync-loop ..." >&2
# shellcheck disable=SC2086
"$UJBD" lab $LABQ --json --scenario=atime,smallfile,fsync-loop >"$WORK/then.json" 2>"$WORK/then.err" \
	|| echo "$ME: the lab failed ($(tail -n 1 "$WORK/then.err")): 'then' is missing" >&2
"$UJBD" lab --params --json >"$WORK/params.json" 2>/dev/null || echo '{}' >"$WORK/params.json"

# ---- now: a loop device of our own --------------------------------------------------

truncate -s 2G "$WORK/disk.img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/disk.img" 2>"$WORK/err") \
	|| { echo "$ME: losetup failed: $(cat "$WORK/err")"; LOOP=""; exit 0; }
L=${LOOP#/dev/}
Q=/sys/block/$L/queue
BDI=/sys/class/bdi/$(cat "/sys/block/$L/dev")
save_dev
SCHEDS=""
for s in bfq mq-deadline none; do
	if grep -qw -- "$s" "$Q/scheduler"; then SCHEDS="$SCHEDS $s"; else echo "note: the kernel offers no $s for $L" >&2; fi
done
# a 2007 disk seeks: the schedulers idle and plug on a rotational queue
echo 1 >"$Q/rotational"
# the 2007 machine's dirty memory for this device (the lab's fs model: RAM x dirty_ratio)
RAM=$(jq -r '.fs.ram_bytes.value // 1024' "$WORK/params.json")      # MiB
RATIO=$(jq -r '.fs.dirty_ratio.value // 10' "$WORK/params.json")    # %
DIRTY=$((RAM * 1048576 * RATIO / 100))
echo 1 >"$BDI/strict_limit" 2>/dev/null
if [ -e "$BDI/max_bytes" ]; then
	echo "$DIRTY" >"$BDI/max_bytes"; LIMIT="max_bytes=$DIRTY ($RAM MiB x $RATIO %)"
else
	echo 1 >"$BDI/max_ratio"; LIMIT="max_ratio=1 % (no max_bytes in this kernel)"
fi
echo "now: ext4 on $L (direct-io $(cat "/sys/block/$L/loop/dio" 2>/dev/null || echo ?)) over" \
	"$WORK/disk.img ($(df -T "$BASE" | awk 'NR == 2 { print $2 " on " $1 }')), schedulers:$SCHEDS," \
	"rotational 1, bdi $LIMIT, strict_limit $(cat "$BDI/strict_limit" 2>/dev/null || echo -); $REPS repetitions"

# fresh_fs SCHED MOUNT_OPTS: a new file system on the loop device, mounted
fresh_fs() {
	if mountpoint -q "$MNT"; then umount "$MNT" || return 1; fi
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" || return 1
	echo "$1" >"$Q/scheduler" || return 1
	mount -o "$2" "$LOOP" "$MNT"
}
# the journal thread of our mount: jbd2/<loop>-8
jbd2_ionice() {
	local pid
	pid=$(pgrep -x "jbd2/$L-8") || return 1
	case $1 in
	be:*) ionice -c 2 -n "${1#be:}" -p "$pid" ;;
	rt:*) ionice -c 1 -n "${1#rt:}" -p "$pid" ;;
	esac
}
# one "now" result: save NAME (stdin: JSON objects, merged)
save() { jq -s 'add' >"$WORK/res/$1.json"; }

run_atime() {  # SCHED PRIO REP
	local out=$WORK/res/tmp
	fresh_fs "$1" strictatime || return 1
	"$LOAD" tree "$MNT/src" "$TREE_N" 1 >/dev/null && "$LOAD" tree "$MNT/build" "$TREE_N" 2 >/dev/null || return 1
	sync
	jbd2_ionice "$2" || return 1
	"$LOAD" copy "$MNT/src" "$MNT/copy" "$ATIME_S" >"$out.copy" & BG=$!
	ionice -c 2 -n 0 "$LOAD" read "$MNT/build" "$TREE_N" "$ATIME_S" 5 >"$out.read"
	wait "$BG"; BG=""
	cat "$out.read" "$out.copy" | save "atime.$1.$2.$3"
}
run_smallfile() {  # SCHED REP
	fresh_fs "$1" defaults || return 1
	"$LOAD" smallfile "$MNT" "$IOZ_N" "$FSM_N" | save "smallfile.$1.$2"
}
run_fsync_loop() {  # SCHED REP
	fresh_fs "$1" defaults || return 1
	"$LOAD" fsync-loop "$MNT" "$FL_N" | save "fsync-loop.$1.$2"
}

for r in $(seq 1 "$REPS"); do
	for s in $SCHEDS; do
		echo "now: repetition $r/$REPS, $s" >&2
		for p in be:4 rt:4; do run_atime "$s" "$p" "$r" || echo "  atime $s $p failed" >&2; done
		run_smallfile "$s" "$r" || echo "  smallfile $s failed" >&2
		run_fsync_loop "$s" "$r" || echo "  fsync-loop $s failed" >&2
	done
done
umount "$MNT"

# ---- the tables ----------------------------------------------------------------------

# then SCEN VARIANT METRIC: the lab's figure (%.3g), or "-"
then_v() {
	jq -r --arg s "$1" --arg v "$2" --arg m "$3" '.scenarios[$s].variants[$v][$m] // "-"' \
		"$WORK/then.json" 2>/dev/null | awk "$FMT"'$1 == "-" || $1 == "" { print "-"; next } { print fmt($1) }'
}
# values NAME METRIC: one per repetition
values() { for f in "$WORK/res/$1".*.json; do [ -e "$f" ] && jq -r --arg m "$2" '.[$m] // empty' "$f"; done; }
# numbers as the tables print them: 3 significant digits, no exponent
FMT='function fmt(v) { return v >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v) } '
# "median (min..max)" of numbers on stdin
med() { sort -g | awk "$FMT"'{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	if (NR == 1) print fmt(m); else print fmt(m) " (" fmt(v[1]) ".." fmt(v[NR]) ")" }'; }
# per-repetition ratios A / B of two names' METRIC, then med
ratio() { paste <(values "$1" "$3") <(values "$2" "$3") | awk '$2 > 0 { print $1 / $2 }' | med; }
then_ratio() {
	jq -r --arg s "$1" --arg a "$2" --arg b "$3" --arg m "$4" \
		'.scenarios[$s].variants as $v | if ($v[$a][$m] // 0) > 0 and ($v[$b][$m] // 0) > 0
		 then $v[$a][$m] / $v[$b][$m] else "-" end' "$WORK/then.json" 2>/dev/null |
		awk "$FMT"'$1 == "-" || $1 == "" { print "-"; next } { print fmt($1) }'
}
# then_variants SCEN: the lab's variants of SCEN, in its order (none if it failed)
then_variants() { jq -r --arg s "$1" '.scenarios[$s].variants // {} | keys_unsorted[]' "$WORK/then.json" 2>/dev/null; }
# line LABEL CELL...
line() { printf '%-22s' "$1"; shift; for c in "$@"; do printf ' %-22s' "$c"; done; echo; }

echo "then: $(jq -r '"ujbd lab, seed \(.seed), disk \(.disk)\(if .quick then ", --quick" else "" end)"' \
	"$WORK/then.json" 2>/dev/null || echo "-"); now: median (min..max) of $REPS"
echo
echo "== atime (seed 000): a strictatime reader (stat, open, read 4 KiB every 5 ms) beside a tree-copy loop, $ATIME_S s"
line "" "fg max ms" "fg p99 ms" "fg avg ms" "copy MB/s"
for v in $(then_variants atime); do
	line "then cfq $v" "$(then_v atime "$v" fg_latency_ms_max)" "$(then_v atime "$v" fg_latency_ms_p99)" \
		"$(then_v atime "$v" fg_latency_ms_avg)" "$(then_v atime "$v" copy_mb_s)"
done
for s in $SCHEDS; do for p in be:4 rt:4; do
	n=atime.$s.$p
	line "now $s $p" "$(values "$n" fg_latency_ms_max | med)" "$(values "$n" fg_latency_ms_p99 | med)" \
		"$(values "$n" fg_latency_ms_avg | med)" "$(values "$n" copy_mb_s | med)"
done; done
echo "max fg latency be:4 / rt:4 (the seed: 3-4x): then $(then_ratio atime be:4 rt:4 fg_latency_ms_max);" \
	"now$(for s in $SCHEDS; do printf ' %s %s;' "$s" "$(ratio "atime.$s.be:4" "atime.$s.rt:4" fg_latency_ms_max)"; done)"

echo
echo "== smallfile (seed 003): iozone $IOZ_N x 64 KiB with fsync, fs_mark $FSM_N x 64 KiB with fsync"
line "" "iozone MB/s" "fs_mark files/s"
for v in $(then_variants smallfile); do
	line "then $v" "$(then_v smallfile "$v" iozone_mb_s)" "$(then_v smallfile "$v" fsmark_files_s)"
done
for s in $SCHEDS; do
	line "now $s" "$(values "smallfile.$s" iozone_mb_s | med)" "$(values "smallfile.$s" fsmark_files_s | med)"
done
echo "cfq / deadline (the seed: 7/35 MB/s, fs_mark 1/5): then iozone $(then_ratio smallfile cfq deadline iozone_mb_s)," \
	"fs_mark $(then_ratio smallfile cfq deadline fsmark_files_s)"
for s in $SCHEDS; do
	[ "$s" = mq-deadline ] && continue
	echo "$s / mq-deadline: now iozone $(ratio "smallfile.$s" smallfile.mq-deadline iozone_mb_s)," \
		"fs_mark $(ratio "smallfile.$s" smallfile.mq-deadline fsmark_files_s)"
done

echo
echo "== fsync-loop (seed 004): fopen, write 4 KiB, fsync, fclose, $FL_N times"
line "" "total ms" "ms / iteration"
for v in $(then_variants fsync-loop); do
	line "then $v" "$(then_v fsync-loop "$v" total_ms)" "$(then_v fsync-loop "$v" ms_per_iteration)"
done
for s in $SCHEDS; do
	line "now $s" "$(values "fsync-loop.$s" total_ms | med)" "$(values "fsync-loop.$s" ms_per_iteration | med)"
done
echo "the seed: 1687 ms (stock) vs 13722 ms (sync-implicit); then sync-implicit / stock" \
	"$(then_ratio fsync-loop sync-implicit stock total_ms)"
for s in $SCHEDS; do
	[ "$s" = mq-deadline ] && continue
	echo "$s / mq-deadline: now $(ratio "fsync-loop.$s" fsync-loop.mq-deadline total_ms)"
done
exit 0

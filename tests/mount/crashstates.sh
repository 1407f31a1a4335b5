#!/bin/sh
# Crash states of ujbd mount's own writes: a writer on an image mounted
# with -o record=TRACE (the recorder under the image), a clean unmount,
# then tests/mount/crashcheck rebuilds from TRACE the image a power cut
# would leave at every flush point (just before and after each flush),
# with subsets of the writes no flush covered (some torn), replays each
# as `ujbd recover` does and checks it: the replay succeeds, needs_recovery
# is set whenever the journal holds transactions, libext2fs opens it with
# checksums verified, every fsync that had returned holds its bytes, and
# every K-th state passes e2fsck -fn. The trace's last state must be the
# image the daemon left (the recorder saw every write).
# The short form (make check): ITER=14 writer rounds, STATES=300, JOBS=2
# checking processes. The full one (docs/mount.md): ITER=150 STATES=10000
# FSCK_EVERY=5. KEEP_RUN=DIR keeps the base image, the trace, the list of
# fsyncs and their copies for a rerun of crashcheck.
. "${SRCDIR:-.}/tests/mount/mount.lib"
ITER=${ITER:-14}
STATES=${STATES:-300}
FSCK_EVERY=${FSCK_EVERY:-10}
SEED=${SEED:-1}
JOBS=${JOBS:-2}
CHECK=${BUILD:-build}/tests/mount/crashcheck
[ -x "$CHECK" ] || skip "$CHECK not built (make tests)"
# the states are written over and over: on tmpfs when there is one
W=$T
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	W=$(mktemp -d /dev/shm/ujbd-crashstates.XXXXXX) || die "mktemp"
	trap 'cleanup; rm -rf "$W"' EXIT
fi
base=$T/base.img img=$T/img tr=$T/trace rec=$T/fsyncs h=$T/host
mke2fs -q -F -t ext4 -b 4096 -J size=4 "$base" 32M >/dev/null 2>&1 || die "mke2fs"
cp "$base" "$img"
M=$T/m
mkdir -p "$M" "$h"
: > "$rec"
: > "$h/log"
mkdir -p "$M"
"$UJBD" mount -f -o record="$tr" "$img" "$M" 2> "$T/mount.err" &
MPID=$!
MOUNTS="$MOUNTS $M"
n=0
while ! mountpoint -q "$M"; do
	kill -0 $MPID 2>/dev/null || { cat "$T/mount.err" >&2; die "ujbd mount -o record exited"; }
	n=$((n + 1))
	[ $n -lt 200 ] || die "mount did not appear"
	sleep 0.05
done
# note P LEN COPY: the fsync of P returned; its first LEN bytes are COPY's,
# and the trace was this long then
note() { echo "$1 $2 $3 $(stat -c %s "$tr")" >> "$rec"; }
d=$M
mkdir -p "$d/w" "$d/s" || die "mkdir"
k=0
while [ $k -lt "$ITER" ]; do
	k=$((k + 1))
	dir=w/d$((k % 7))
	mkdir -p "$d/$dir" || die "mkdir $dir"
	f=$dir/f$k
	head -c $(( (k * 7919) % 70000 + 1 )) /dev/urandom > "$h/c$k"
	dd if="$h/c$k" of="$d/$f" conv=fsync status=none || die "write $f"
	note "$f" "$(stat -c %s "$h/c$k")" "$h/c$k"
	echo "line $k $(date +%s%N)" >> "$h/log"
	cp "$h/log" "$h/l$k"
	tail -n 1 "$h/log" >> "$d/w/log" || die "append"
	if [ $((k % 2)) -eq 0 ]; then sync "$d/w/log"; else sync -d "$d/w/log"; fi || die "fsync log"
	note w/log "$(stat -c %s "$h/l$k")" "$h/l$k"
	cp "$h/c$k" "$d/s/tmp$k" && mv "$d/s/tmp$k" "$d/s/r$k" || die "rename"
	[ $k -gt 3 ] && { rm -f "$d/s/r$((k - 3))" || die "unlink"; }
	head -c 5000 /dev/urandom | dd of="$d/s/over" bs=1000 seek=$((k % 9)) conv=notrunc status=none ||
		die "overwrite"
	# directory blocks freed every round, so that the next rounds' data
	# reuses blocks the log holds as metadata (the revoke case)
	[ $k -gt 2 ] && { rm -rf "$d/s/x$((k - 2))" || die "rm -r"; }
	mkdir -p "$d/s/x$k/y" || die "mkdir x"
	[ $((k % 11)) -eq 0 ] && { sync "$d/s" || die "fsync dir"; }
	[ $((k % 13)) -eq 0 ] && { truncate -s $(( (k * 31) % 9000 )) "$d/s/over" || die "truncate"; }
done
umnt "$M"
[ -n "${KEEP_RUN:-}" ] && cp "$base" "$img" "$tr" "$rec" "$KEEP_RUN"/ && cp -r "$h" "$KEEP_RUN"/
[ -s "$tr" ] || die "no trace"
fsck_clean "$img"
"$CHECK" --base="$base" --trace="$tr" --fsyncs="$rec" --work="$W" --final="$img" \
	--states="$STATES" --seed="$SEED" --fsck-every="$FSCK_EVERY" --jobs="$JOBS" > "$T/check.out" 2> "$T/check.err"
rc=$?
cat "$T/check.out"
[ $rc -eq 0 ] || { head -40 "$T/check.err" >&2; die "crashcheck: exit $rc"; }
states=$(sed -n 's/^crashcheck: \([0-9]*\) states.*/\1/p' "$T/check.out")
[ -n "$states" ] && [ "$states" -ge "$STATES" ] || die "only ${states:-no} states checked, want $STATES"
grep -q " 0 failures" "$T/check.out" || die "failures reported"
# checks that cannot fail prove nothing: claim one byte more of the last
# fsync of the log than it made durable, and the base image as the one the
# daemon left; the checker must report both
last=$(grep '^w/log ' "$rec" | tail -n 1)
set -- $last
head -c "$2" "$3" > "$T/bad.copy"
printf 'X' >> "$T/bad.copy"
echo "w/log $(($2 + 1)) $T/bad.copy $4" > "$T/bad.fsyncs"
"$CHECK" --base="$base" --trace="$tr" --fsyncs="$T/bad.fsyncs" --work="$W" --final="$base" \
	--states=1 --fsck-every=0 --keep=0 --jobs="$JOBS" > /dev/null 2> "$T/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q "fsync lost" "$T/bad.err" ||
	{ cat "$T/bad.err" >&2; die "crashcheck did not catch a lost fsync (exit $rc)"; }
grep -q "the recorder missed a write" "$T/bad.err" ||
	{ cat "$T/bad.err" >&2; die "crashcheck did not catch a trace short of the final image"; }
echo "ok: $states crash states of ujbd mount's writes checked"

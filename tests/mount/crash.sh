#!/bin/sh
# Crash safety of ujbd mount: ITER (default 10) times, a writer on the
# mounted image, kill -9 of the daemon at a random moment, a lazy unmount;
# then on copies of the image: `ujbd recover` and `e2fsck -fn` clean,
# every fsynced byte present; e2fsck's own replay (journal_only) gives the
# same blocks; as root, the kernel's replay (a loop mount) the same tree.
# CRASH_FS=fuse2fs runs the loop on fuse2fs and reports instead of failing.
. "${SRCDIR:-.}/tests/mount/mount.lib"
. "${SRCDIR:-.}/tests/mount/crash.lib"
ITER=${ITER:-10}
FS=${CRASH_FS:-ujbd}
[ "$FS" = ujbd ] || command -v fuse2fs >/dev/null 2>&1 || skip "fuse2fs not installed"
base=$T/base.img
mke2fs -q -F -t ext4 -b 4096 "$base" 96M >/dev/null 2>&1 || die "mke2fs"
KERNEL=0
if [ "$(id -u)" -eq 0 ] && [ "$FS" = ujbd ]; then
	LOOPMNT=$T/k
	mkdir -p "$LOOPMNT"
	mount -o loop,ro "$base" "$LOOPMNT" 2>/dev/null && umount "$LOOPMNT" && KERNEL=1
fi
M=$T/m
mkdir -p "$M"
mount_fail=0 fsck_bad=0 lost_total=0 recs=0 kern_diff=0 e2_diff=0
i=0
while [ $i -lt "$ITER" ]; do
	i=$((i + 1))
	img=$T/img
	# the last iteration's loop mounts detach their loop devices lazily
	n=0
	while [ -n "$(losetup -j "$img" 2>/dev/null)$(losetup -j "$T/kern.img" 2>/dev/null)" ] && [ $n -lt 100 ]; do
		n=$((n + 1)); sleep 0.1
	done
	cp "$base" "$img"
	rm -rf "$T/rec" "$T/rec.u" "$T/rec.host"
	if [ "$FS" = ujbd ]; then
		mnt "$img" "$M"
	else
		fuse2fs -f "$img" "$M" > "$T/f2.err" 2>&1 &
		MPID=$!
		MOUNTS="$MOUNTS $M"
		n=0
		while ! mountpoint -q "$M"; do
			n=$((n + 1))
			kill -0 $MPID 2>/dev/null && [ $n -lt 600 ] || break
			sleep 0.05
		done
		if ! mountpoint -q "$M"; then
			kill -9 $MPID 2>/dev/null
			wait $MPID 2>/dev/null
			mount_fail=$((mount_fail + 1))
			echo "iteration $i: fuse2fs did not mount: $(head -c 300 "$T/f2.err" | tr '\n' ' ')"
			continue
		fi
	fi
	( writer "$M" "$T/rec" ) > /dev/null 2>&1 &
	WPID=$!
	# a random moment: 0.2 to 2.2 s into the writer's run
	sleep "$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() * 2 }')"
	kill -9 $MPID
	wait $MPID 2>/dev/null
	# the writer goes before the lazy unmount: after it, its writes would
	# land in the empty directory under the mount
	kill -9 $WPID 2>/dev/null
	wait $WPID 2>/dev/null
	fusermount3 -uz "$M" 2>/dev/null
	rm -rf "$M" && mkdir -p "$M"
	recs=$((recs + $(sort -u "$T/rec" 2>/dev/null | wc -l)))
	if [ "$FS" != ujbd ]; then
		e2fsck -fn "$img" > "$T/fsck.out" 2>&1 || fsck_bad=$((fsck_bad + 1))
		lost_total=$((lost_total + $(check_durable "$img" "$T/rec")))
		continue
	fi
	cp "$img" "$T/e2.img"
	cp "$img" "$T/kern.img"
	"$UJBD" recover "$img" > "$T/rec.out" 2>&1 || { cat "$T/rec.out"; die "iteration $i: ujbd recover"; }
	e2fsck -fn "$img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; cp "$T/e2.img" /tmp/ujbd-crash-failed.img; die "iteration $i: e2fsck -fn after ujbd recover (image kept in /tmp/ujbd-crash-failed.img)"; }
	lost=$(check_durable "$img" "$T/rec")
	[ "$lost" -eq 0 ] || die "iteration $i: $lost fsynced files lost or wrong"
	e2fsck -fy -E journal_only "$T/e2.img" > /dev/null 2>&1
	# the same blocks, but for the two superblocks each replay stamps its own
	# way (ext4: check and write times, kbytes written; the journal's)
	jsb=$(debugfs -R "bmap <8> 0" "$img" 2>/dev/null)
	other=$(cmp -l "$img" "$T/e2.img" | awk -v j="$jsb" \
		'!(($1 > 1024 && $1 <= 2048) || int(($1 - 1) / 4096) == j) { n++ } END { print n + 0 }')
	[ "$other" -eq 0 ] || e2_diff=$((e2_diff + 1))
	if [ $KERNEL -eq 1 ]; then
		mount -o loop "$T/kern.img" "$LOOPMNT" || die "iteration $i: the kernel would not mount it"
		tree_of "$LOOPMNT" "$T/tree.k"
		umount "$LOOPMNT"
		mount -o loop,ro "$img" "$LOOPMNT" || die "iteration $i: loop mount after ujbd recover"
		tree_of "$LOOPMNT" "$T/tree.u"
		umount "$LOOPMNT"
		cmp -s "$T/tree.k" "$T/tree.u" || { diff "$T/tree.k" "$T/tree.u" | head; die "iteration $i: the kernel's replay gives another tree"; }
		e2fsck -fn "$T/kern.img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; die "iteration $i: e2fsck after the kernel's replay"; }
	fi
done
if [ "$FS" = ujbd ]; then
	[ $e2_diff -eq 0 ] || die "e2fsck's replay gave other blocks in $e2_diff of $ITER"
	echo "ok: $ITER kills of ujbd mount: e2fsck clean after ujbd recover, $recs fsyncs all durable, e2fsck's replay the same blocks$([ $KERNEL -eq 1 ] && echo ", the kernel's the same tree")"
else
	echo "fuse2fs: $((ITER - mount_fail)) kills ($mount_fail mounts failed): e2fsck -fn found damage in $fsck_bad; $lost_total of $recs fsynced files lost or wrong"
fi

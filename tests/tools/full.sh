#!/bin/sh
# A full file system under ujbd recover (issue: "nothing written" when it
# had written): the data file on a 1 MiB tmpfs, a journal of 400 blocks to
# replay. recover exits 3 (an I/O error, not invalid input), one line that
# says what the host said and that the replay had begun, the journal still
# needing recovery; once space is freed, recover again replays everything.
. "$SRCDIR/tests/tools/tools.lib"

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
mkdir "$T/mnt"
mount -t tmpfs -o size=1m tmpfs "$T/mnt" 2> /dev/null || skip "cannot mount a tmpfs"
trap 'umount "$T/mnt" 2> /dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1

"$UJBD" format j.jnl --size=4M > /dev/null || die "format"
truncate -s 16M mnt/data.img
for t in 0 1 2 3; do
	args=""
	for i in $(seq 0 99); do
		b=$((t * 100 + i))
		head -c 4096 /dev/zero | tr '\0' "$(printf "\\$(printf %o $((65 + i % 26)))")" > b$b
		args="$args --block=$((100 + b)):b$b"
	done
	# shellcheck disable=SC2086
	"$UJBD" write j.jnl --data=mnt/data.img $args > /dev/null || die "write $t"
done
expect_err 3 recover recover j.jnl --data=mnt/data.img
grep -q "No space left on device" err || die "recover: not the host's words: $(cat err)"
grep -q "nothing written" err && die "recover: says nothing written: $(cat err)"
grep -q "still needs recovery" err || die "recover: does not say the journal needs recovery: $(cat err)"
[ "$(stat -c %b mnt/data.img)" -gt 0 ] || die "the test wrote nothing: no space check"
"$UJBD" info j.jnl --json | jq -e '.needs_recovery == true' > /dev/null \
	|| die "journal marked empty after a failed replay"

mount -o remount,size=8m "$T/mnt" || die "remount"
"$UJBD" recover j.jnl --data=mnt/data.img > out 2> err || die "recover after freeing space: $(cat err)"
for b in 0 137 399; do
	dd if=mnt/data.img bs=4096 skip=$((100 + b)) count=1 status=none | cmp -s - "b$b" \
		|| die "block $((100 + b)) not replayed"
done
echo "PASS: a full data file system under recover"

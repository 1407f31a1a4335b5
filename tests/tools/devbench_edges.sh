#!/bin/sh
# devbench at its edges: a disk that takes no time (mem) has no IOPS to
# report (n/a; JSON null), not 0; write-flush growing an existing smaller
# file to its 256 MiB default says so on stderr.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
"$UJBD" devbench --disk=mem --ops=10 > out 2> err || die "devbench mem: $(cat err)"
if grep -q "in 0.000 s" out; then
	grep -Eq "^  iops +n/a" out || die "mem: zero time, iops not n/a: $(cat out)"
	"$UJBD" devbench --disk=mem --ops=10 --json > out.json || die "mem --json"
	jq -e '.iops == null and .mb_s == null' out.json > /dev/null || die "mem --json: $(cat out.json)"
fi
head -c 1048576 /dev/zero > f.img
"$UJBD" devbench --disk=file:f.img --pattern=write-flush --ops=4 > out 2> err || die "write-flush: $(cat err)"
[ "$(stat -c %s f.img)" -eq 268435456 ] || die "write-flush: f.img not 256 MiB: $(stat -c %s f.img)"
grep -q "note: .*'f.img'.* 1048576 .* 268435456 bytes" err || die "write-flush grew f.img without a word: $(cat err)"
echo "PASS: devbench edges"

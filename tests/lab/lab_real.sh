#!/bin/sh
# ujbd lab on a real disk (--world=real --disk=file:PATH): the whole --quick
# lab on a temporary file runs every scenario and variant with none failed,
# every metric a finite number, flush one point (the disk's own), the
# document's shape (world, disk, "machine", each scenario's "real_world"),
# the file created at the lab's size; a file too small for the file system
# and journal is a failed variant (exit 1) that says so. The figures are
# real-time measurements of this machine: only their sanity is asserted.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
command -v jq >/dev/null || skip "jq is missing (scripts/install-deps)"
scratch labreal

# The lab opens the file O_DIRECT; a file system without it (an old tmpfs)
# gets the page cache instead, and the test says so.
direct=""
if ! dd if=/dev/zero of="$tmp/probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
	echo "note: no O_DIRECT in $tmp: running with --file=direct=0"
	direct="--file=direct=0"
fi
rm -f "$tmp/probe"

# ---- the whole --quick lab --------------------------------------------------
img=$tmp/disk.img
# shellcheck disable=SC2086
"$UJBD" lab --world=real --disk="file:$img" --quick --json $direct >"$tmp/all.json" \
	2>"$tmp/all.err" || bad "the real lab exit $?: $(tail -n 3 "$tmp/all.err")"
jq -e . "$tmp/all.json" >/dev/null || bad "not JSON: $(head -c 300 "$tmp/all.json")"
jq -e --arg d "file:$img" '.world == "real" and .disk == $d and .quick == true' \
	"$tmp/all.json" >/dev/null || bad "world/disk/quick: $(head -c 200 "$tmp/all.json")"
jq -e '.machine | (.device | type == "string") and (.scheduler | type == "string")
	and (.rotational | type == "boolean" or type == "null") and (.direct | type == "boolean")
	and (.cpus | type == "number" and . > 0)' "$tmp/all.json" >/dev/null \
	|| bad "machine: $(jq -c .machine "$tmp/all.json")"
[ "$(stat -c %s "$img")" = $((4 << 30)) ] || bad "the file was not created at 4 GiB: $(stat -c %s "$img")"

# every scenario of --list with every one of its variants, none failed
"$UJBD" lab --list >"$tmp/list" || bad "--list exit $?"
awk '/^[^ ]/ { s = $1; sub(/:$/, "", s) } /^  variants:/ { for (i = 2; i <= NF; i++) print s, $i }' \
	"$tmp/list" >"$tmp/pairs"
[ -s "$tmp/pairs" ] || bad "--list gave no scenario"
while read -r s v; do
	jq -e --arg s "$s" --arg v "$v" '.scenarios[$s].variants | has($v)' "$tmp/all.json" \
		>/dev/null || bad "$s $v: missing"
	jq -e --arg s "$s" '.scenarios[$s].real_world | type == "string" and length > 0' \
		"$tmp/all.json" >/dev/null || bad "$s: no real_world line"
done <"$tmp/pairs"
jq -e '[.scenarios[].failed | length] | add // 0 | . == 0' "$tmp/all.json" >/dev/null \
	|| bad "variants failed: $(jq -c '[.scenarios[] | .failed]' "$tmp/all.json")"
jq -e '[.scenarios[].variants[][] | if type == "array" then .[] else . end
	| select(type != "number")] | length == 0' "$tmp/all.json" >/dev/null \
	|| bad "a metric is not a finite number"

# something happened in each: work done and time taken are positive
for sm in atime:fg_ops atime:copy_mb_s morton:linear_read_mb_s morton:odirect_ops_s \
	aim7:jobs_per_min smallfile:iozone_mb_s smallfile:fsmark_files_s fsync-loop:total_ms \
	fsync-loop:commits flush:fg_latency_ms_max_0; do
	s=${sm%%:*} m=${sm#*:}
	jq -e --arg s "$s" --arg m "$m" '[.scenarios[$s].variants[][$m]] | length > 0
		and all(type == "number" and . > 0)' "$tmp/all.json" >/dev/null \
		|| bad "$s: $m not > 0 in every variant: $(jq -c --arg s "$s" --arg m "$m" \
			'[.scenarios[$s].variants[][$m]]' "$tmp/all.json")"
done
# flush on a real disk is one point, its own flush, and gives no verdict
jq -e '[.scenarios.flush.variants[].flush_ms | length == 1] | all' "$tmp/all.json" >/dev/null \
	|| bad "flush: not one point: $(jq -c '.scenarios.flush.variants' "$tmp/all.json")"
jq -e '[.scenarios.flush.summary[].met] | all | not' "$tmp/all.json" >/dev/null \
	|| bad "flush: a verdict from one point"

# ---- the text report and report.html say what is underneath ---------------------
# shellcheck disable=SC2086
"$UJBD" lab --world=real --disk="file:$img" --quick --scenario=fsync-loop --variant=stock \
	--out="$tmp/out.d" $direct >"$tmp/text" 2>/dev/null || bad "text run exit $?"
head -n 1 "$tmp/text" | grep -q "^ujbd lab .*, real world, disk file:$img;" ||
	bad "text: first line: $(head -n 1 "$tmp/text")"
sed -n 2p "$tmp/text" | grep -q "^real disk: $img on " || bad "text: second line: $(sed -n 2p "$tmp/text")"
grep -q "^on a real disk: " "$tmp/text" || bad "text: no 'on a real disk:' line"
grep -q "<p>on a real disk: " "$tmp/out.d/report.html" || bad "report.html: no 'on a real disk:'"

# ---- a file too small: the variant fails and says why -------------------------
truncate -s 64M "$tmp/small.img"
# shellcheck disable=SC2086
"$UJBD" lab --world=real --disk="file:$tmp/small.img" --quick --scenario=fsync-loop \
	--variant=stock -v $direct >"$tmp/small.out" 2>"$tmp/small.err"
[ $? -eq 1 ] || bad "a 64 MiB file: want exit 1"
grep -q "no room for the file system and its journal" "$tmp/small.err" \
	|| bad "a 64 MiB file: no reason: $(cat "$tmp/small.err")"
grep -q "^variant stock failed: .*no room for the file system and its journal.* (" "$tmp/small.out" \
	|| bad "a 64 MiB file: the report does not say why: $(cat "$tmp/small.out")"
[ "$(stat -c %s "$tmp/small.img")" = $((64 << 20)) ] || bad "the small file was resized"

[ $fail -eq 0 ] && echo "lab_real.sh: ok"
exit $fail

#!/bin/sh
# ujbd devbench parameters: --MODEL=LIST, --ELEVATOR=LIST, --queue=LIST set
# parameters through the registries' tables (a change moves the result),
# bad values fail with one line naming the parameter (exit 2), and --params
# lists every row of every table with its unit, default and source.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
"$UJBD" devbench --help 2>/dev/null | grep -q -- "--params" \
	|| skip "this ujbd devbench has no --params"
scratch params

json_num() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# ---- bad values: exit 2, one line that names group and parameter -----------
check_err() { # ARGS WANT
	# shellcheck disable=SC2086
	"$UJBD" devbench $1 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$1': exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$1': stderr is not one line"
	[ "$(cat "$tmp/err")" = "ujbd devbench: $2" ] || bad "'$1': got '$(cat "$tmp/err")'"
	[ -s "$tmp/out" ] && bad "'$1': wrote to stdout"
}
check_err "--hdd=seek_avg_ms=100" "bad --hdd=seek_avg_ms: '100': out of range (0.5 to 40 ms)"
check_err "--hdd=rpm=fast" "bad --hdd=rpm: 'fast': not a number (3600 to 15000 rpm)"
check_err "--hdd=warp=9" "bad --hdd: 'warp': unknown parameter (see --params)"
check_err "--hdd=rpm" "bad --hdd: 'rpm': expected name=value"
check_err "--disk=ssd --hdd=rpm=5400" "--hdd: no disk or queue of this stack uses it"
check_err "--disk=ssd --ssd=channels=0" "bad --ssd=channels: '0': out of range (1 to 64)"
check_err "--cfq=slice_idle_ms=-1" "bad --cfq=slice_idle_ms: '-1': out of range (0 to 1000 ms)"
check_err "--elevator=noop --cfq=quantum=2" "--cfq: no disk or queue of this stack uses it"
check_err "--noop=x=1" "bad --noop: 'x=1': no parameters (see --params)"
check_err "--deadline=fifo_batch=0" "bad --deadline=fifo_batch: '0': out of range (1 to 1024 rq)"
check_err "--queue=plug=sometimes" \
	"bad --queue=plug: 'sometimes': unknown value (explicit or implicit-sync)"
check_err "--queue=nr_requests=0" "bad --queue=nr_requests: '0': out of range (1 to 65536 rq)"
check_err "--file=direct=maybe" "bad --file=direct: 'maybe': not a boolean (true or false)"

# ---- a parameter moves the result -----------------------------------------
run() { "$UJBD" devbench --ops=400 --json "$@" >"$tmp/r" || bad "'$*': exit $?"; json_num iops "$tmp/r"; }
base=$(run --disk=hdd)
slow=$(run --disk=hdd --hdd=rpm=5400,seek_avg_ms=12)
fast=$(run --disk=hdd --hdd=seek_avg_ms=4)
lt "$slow" "$base" || bad "5400 rpm, 12 ms seeks not slower: $slow vs $base IOPS"
lt "$base" "$fast" || bad "4 ms seeks not faster: $fast vs $base IOPS"
[ "$(run --disk=hdd --hdd=seek_avg_ms=8.5)" = "$base" ] \
	|| bad "the default seek_avg_ms given explicitly changes the result"
ssd=$(run --disk=ssd --pattern=write-flush)
ssd_slow=$(run --disk=ssd --pattern=write-flush --ssd=flush_us=1000)
lt "$ssd_slow" "$ssd" || bad "ssd flush_us=1000 not slower: $ssd_slow vs $ssd"
hdd_wf=$(run --disk=hdd --pattern=write-flush)
hdd_wf_slow=$(run --disk=hdd --pattern=write-flush --hdd=flush_ms=20)
lt "$hdd_wf_slow" "$hdd_wf" || bad "hdd flush_ms=20 not slower: $hdd_wf_slow vs $hdd_wf"
# an elevator group selects that elevator and the block layer
"$UJBD" devbench --ops=200 --threads=2 --deadline=fifo_batch=4 --json >"$tmp/d" \
	|| bad "--deadline=fifo_batch=4 exit $?"
grep -q '"elevator":"deadline"' "$tmp/d" || bad "--deadline=... did not select deadline"
a=$("$UJBD" devbench --ops=300 --threads=2 --json | md5sum)
b=$("$UJBD" devbench --ops=300 --threads=2 --cfq=slice_idle_ms=0 --json | md5sum)
[ "$a" != "$b" ] || bad "cfq slice_idle_ms=0 changes nothing"
c=$("$UJBD" devbench --ops=300 --threads=2 --cfq=slice_idle_ms=8 --json | md5sum)
[ "$a" = "$c" ] || bad "the default slice_idle_ms given explicitly changes the result"

# ---- --params: every group, every row, with unit, default and source -------
"$UJBD" devbench --params >"$tmp/p" || bad "--params exit $?"
for g in hdd ssd mem file noop deadline cfq queue; do
	grep -q "^\[$g\] " "$tmp/p" || bad "--params lacks [$g]"
done
for r in seek_avg_ms rpm cache_mib flush_ms destage_window channels program_us flush_us \
	fifo_batch read_expire_ms slice_idle_ms quantum slice_scale nr_requests plug; do
	grep -q "^  $r " "$tmp/p" || bad "--params lacks $r"
done
grep -q '^  seek_avg_ms  *8.5 ms  *8.5 0.5..40  *[^ ].*data sheets' "$tmp/p" \
	|| bad "seek_avg_ms row: $(grep seek_avg_ms "$tmp/p")"
"$UJBD" devbench --params --json >"$tmp/pj" || bad "--params --json exit $?"
[ "$(wc -l <"$tmp/pj")" -eq 1 ] || bad "--params --json is not one line"
grep -q '"slice_idle_ms": {"value": 8, "unit": "ms", "default": 8, "min": 0, "max": 1000, "source": "2.6.29' \
	"$tmp/pj" || bad "--params --json lacks cfq slice_idle_ms"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["hdd"]["seek_avg_ms"]["default"] == 8.5' \
		"$tmp/pj" || bad "--params --json is not valid JSON with the hdd table"
fi
[ $fail -eq 0 ] && echo "params.sh: ok"
exit $fail

#!/bin/sh
# ujbd devbench: exit codes, one-line errors, JSON keys, determinism, and
# the simulated HDD's physics (random 4 KiB reads at 75-120 IOPS,
# sequential reads near the 120 MB/s outer-zone media rate).
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
scratch devbench

# a JSON number: json_num KEY FILE (KEY unique in the object)
json_num() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"; }
# awk comparison: between VALUE LO HI
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

# ---- help and bad arguments: exit 2, exactly one line ----------------------
"$UJBD" devbench --help >"$tmp/help" 2>&1 || bad "--help exit $?"
grep -q -- "--pattern" "$tmp/help" || bad "--help does not list --pattern"
for args in "--bogus" "--disk=floppy" "--pattern=zigzag" "--bs=3" "--bs=17M" \
	"--ops=0" "--ops=abc" "--seed=-1" "--world=moon" "--ops" "extra" \
	"--disk=file:$tmp/f --world=sim" "--disk=hdd --direct" "--size=0"; do
	# shellcheck disable=SC2086
	"$UJBD" devbench $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$args': exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$args': stderr is not one line"
	grep -q '^ujbd devbench: ' "$tmp/err" || bad "'$args': message format: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && bad "'$args': wrote to stdout"
done

# ---- JSON keys ------------------------------------------------------------
"$UJBD" devbench --disk=hdd --pattern=rand --ops=1000 --seed=1 --json >"$tmp/j1" \
	|| bad "hdd rand exit $?"
[ "$(wc -l <"$tmp/j1")" -eq 1 ] || bad "JSON is not one line"
for k in iops mb_s avg p50 p99 max; do
	[ -n "$(json_num $k "$tmp/j1")" ] || bad "JSON lacks $k: $(cat "$tmp/j1")"
done
grep -q '"latency_us":{"avg":[0-9.]*,"p50":[0-9.]*,"p99":[0-9.]*,"max":[0-9.]*}' "$tmp/j1" \
	|| bad "latency_us object: $(cat "$tmp/j1")"

# ---- determinism: same seed, same bytes; another seed, other bytes ---------
"$UJBD" devbench --disk=hdd --pattern=rand --ops=1000 --seed=1 --json >"$tmp/j2"
cmp -s "$tmp/j1" "$tmp/j2" || bad "same seed, different output"
"$UJBD" devbench --disk=hdd --pattern=rand --ops=1000 --seed=2 --json >"$tmp/j3"
cmp -s "$tmp/j1" "$tmp/j3" && bad "seeds 1 and 2 gave the same output"

# ---- the HDD's physics -----------------------------------------------------
for f in "$tmp/j1" "$tmp/j3"; do
	iops=$(json_num iops "$f")
	between "$iops" 75 120 || bad "hdd random 4k read IOPS $iops not in 75-120"
done
"$UJBD" devbench --disk=hdd --pattern=seq --ops=4000 --json >"$tmp/seq" || bad "seq exit $?"
mbs=$(json_num mb_s "$tmp/seq")
between "$mbs" 100 121 || bad "hdd sequential 4k read $mbs MB/s, want near 120"
"$UJBD" devbench --disk=hdd --pattern=write-flush --ops=100 --json >"$tmp/wf" || bad "write-flush exit $?"
iops=$(json_num iops "$tmp/wf")
# a flush per write: each waits for the platter (one revolution at most)
between "$iops" 60 200 || bad "hdd write-flush $iops ops/s"

# ---- SSD: much faster than the HDD -----------------------------------------
"$UJBD" devbench --disk=ssd --pattern=rand --ops=500 --json >"$tmp/ssd" || bad "ssd exit $?"
iops=$(json_num iops "$tmp/ssd")
between "$iops" 2000 20000 || bad "ssd random 4k read IOPS $iops"

# ---- real world: a sim disk really sleeps; a file does real I/O -------------
"$UJBD" devbench --disk=ssd --world=real --ops=20 --json >"$tmp/real" || bad "real world exit $?"
grep -q '"world":"real"' "$tmp/real" || bad "real world not reported"
# virtual time is labelled as such, real time is not
grep -q '"time":"real"' "$tmp/real" || bad "real world: no \"time\":\"real\""
grep -q '"world":"sim","seed":1,"time":"virtual"' "$tmp/j1" || bad "sim world: no \"time\":\"virtual\""
"$UJBD" devbench --disk=hdd --ops=20 >"$tmp/simtxt" || bad "sim text exit $?"
grep -q '^  ops .* s of virtual time$' "$tmp/simtxt" && grep -q '^  latency .* (virtual)$' "$tmp/simtxt" ||
	bad "sim world text does not say virtual: $(cat "$tmp/simtxt")"
"$UJBD" devbench --disk=ssd --world=real --ops=5 >"$tmp/realtxt" || bad "real text exit $?"
grep -q virtual "$tmp/realtxt" && bad "real world text says virtual"
"$UJBD" devbench --disk="file:$tmp/f" --size=8M --pattern=write-flush --ops=20 >"$tmp/file2" \
	|| bad "file write-flush exit $?"
[ "$(stat -c %s "$tmp/f")" -eq 8388608 ] || bad "file not created at 8M"
grep -q 'iops' "$tmp/file2" || bad "human output lacks iops"
"$UJBD" devbench --disk="file:$tmp/f" --ops=200 --json >"$tmp/file" || bad "file exit $?"
"$UJBD" devbench --disk="file:$tmp/nodir/f" --pattern=write-flush --ops=1 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || bad "file in a missing directory: exit $rc, want 1 (invalid input)"

[ $fail -eq 0 ] && echo "devbench: all checks passed"
exit $fail

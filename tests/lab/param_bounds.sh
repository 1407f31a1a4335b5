#!/bin/sh
# Every numeric parameter the fsync-loop scenario reads (groups hdd, cfq,
# deadline, queue, fs, jbd), set alone to the minimum and to the maximum
# that `ujbd lab --params --json` publishes, on a --quick run of two of its
# variants (stock, and sync-noidle, the one min_tt_ms=0 aborted): the lab runs
# (exit 0) or says which variant it could not build and why (exit 1, every
# failure with its reason); it never refuses a value it published as in
# range (exit 2), never crashes or hangs. Every second parameter (about
# 80 runs), under a sanitizer every sixth from the fifth: the same ones
# each time, min_tt_ms in both. Found: min_tt_ms=0 aborting in cfq's idle
# timer; maxima printed as 1.099511628e+12, past the range.
set -u
UJBD=${UJBD:-build/ujbd}
command -v jq >/dev/null 2>&1 || { echo "SKIP: no jq (scripts/install-deps)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$UJBD" lab --params --json >"$tmp/params.json" || { echo "FAIL: lab --params --json"; exit 1; }
jq -r 'to_entries[] | select(.key | test("^(hdd|cfq|deadline|queue|fs|jbd)$")) | .key as $g
	| .value | to_entries[] | select((.value.value | type) == "number")
	| "\($g) \(.key) \(.value.min) \(.value.max)"' "$tmp/params.json" >"$tmp/rows"
n=$(wc -l <"$tmp/rows")
[ "$n" -ge 40 ] || { echo "FAIL: only $n numeric parameters found"; exit 1; }
every=2 from=0
[ -n "${SAN:-}" ] && every=6 from=4
awk -v e="$every" -v f="$from" '(NR - 1) % e == f { print $1, $2, $3; print $1, $2, $4 }' \
	"$tmp/rows" >"$tmp/runs"

# one GROUP NAME VALUE: a line "STATUS GROUP NAME VALUE", the output kept
cat >"$tmp/one.sh" <<EOF
#!/bin/sh
o="$tmp/\$1.\$2.\$3"
timeout 300 "$UJBD" lab --scenario=fsync-loop --variant=stock,sync-noidle --quick --jobs=1 "--\$1=\$2=\$3" >"\$o.out" 2>"\$o.err"
echo "\$? \$1 \$2 \$3"
EOF
xargs -n 3 -P 2 sh "$tmp/one.sh" <"$tmp/runs" >"$tmp/status"
fail=0
runs=$(wc -l <"$tmp/status")
[ "$runs" -eq "$(wc -l <"$tmp/runs")" ] || { echo "FAIL: $runs of $(wc -l <"$tmp/runs") runs reported"; fail=1; }
while read -r rc g p v; do
	o="$tmp/$g.$p.$v"
	case $rc in
	0) ;;
	1)	# each failed variant says why, and the closing line counts them
		nf=$(grep -c '^variant .* failed: ..*' "$o.out")
		if [ "$nf" -eq 0 ] || ! grep -q "variants\? failed" "$o.err"; then
			echo "FAIL: --$g=$p=$v: exit 1 without a reason per variant"; sed 's/^/    /' "$o.err" | tail -3; fail=1
		fi ;;
	*)	echo "FAIL: --$g=$p=$v: exit $rc"; sed 's/^/    /' "$o.err" | tail -3; fail=1 ;;
	esac
done <"$tmp/status"
ok=$(awk '$1 == 0' "$tmp/status" | wc -l)
echo "$runs runs at the published bounds of $n parameters (every $every): $ok ran, $((runs - ok)) refused with a reason"
[ $fail -eq 0 ] && echo "PASS: every published bound runs or is refused with a reason"
exit $fail

#!/bin/sh
# The README's table of the lab's results holds what seed 1's run of this
# code gives: scripts/lab-results --check runs the whole lab at seed 1 and
# compares every row's seed-1 ratio and verdict with the README. Then its
# failure: a README whose verdict was changed is named row by row (exit 1),
# a README without the table markers and bad options are refused.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
command -v python3 >/dev/null || skip "python3 is missing"
# The README's figures are the plain build's: a whole lab under a sanitizer
# takes minutes and checks no memory; the plain build runs this test.
case "${SAN:-}" in *sanitize*)
	echo "SKIP: a sanitizer build (SAN=$SAN); the plain build runs this test"; exit 77 ;;
esac
UJBD=$(cd "$(dirname "$UJBD")" && pwd)/$(basename "$UJBD")
export UJBD
res=$SRCDIR/scripts/lab-results
scratch results

# the README as it is, against seed 1's run (kept for the cases below)
"$res" --check="$SRCDIR/README.md" --keep="$tmp/runs" 2>"$tmp/err" ||
	bad "README.md's results table does not match seed 1's run (regenerate it with" \
	    "scripts/lab-results --update=README.md): $(cat "$tmp/err")"
[ -s "$tmp/runs/seed1.json" ] || bad "no seed-1 document kept"

# a verdict changed in a copy: named, exit 1
awk 'BEGIN { n = 0 }
	/<!-- lab-results: begin -->/ { t = 1 }
	t && /^\| `/ && !n { sub(/\| not met \|/, "| MET |") || sub(/\| met \|/, "| not met |"); sub(/\| MET \|/, "| met |"); n = 1 }
	{ print }' "$SRCDIR/README.md" >"$tmp/README.md"
cmp -s "$SRCDIR/README.md" "$tmp/README.md" && bad "the copy's verdict was not changed"
"$res" --check="$tmp/README.md" --from="$tmp/runs" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || bad "changed verdict: exit $rc, want 1"
[ "$(grep -c '^lab-results: .*seed 1 gives' "$tmp/err")" -eq 1 ] ||
	bad "changed verdict: want one row named: $(cat "$tmp/err")"

# --update regenerates what --check accepts
sed 's/^| `fsync-loop`.*$//' "$SRCDIR/README.md" >"$tmp/README2.md"
"$res" --update="$tmp/README2.md" --seeds=1 --from="$tmp/runs" 2>"$tmp/err" || bad "update: $(cat "$tmp/err")"
"$res" --check="$tmp/README2.md" --from="$tmp/runs" 2>"$tmp/err" || bad "updated copy: $(cat "$tmp/err")"

# no markers; bad options
printf '# nothing\n' >"$tmp/none.md"
"$res" --check="$tmp/none.md" --from="$tmp/runs" 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] || bad "no markers: exit $rc, want 3"
grep -q '^lab-results: .*no table' "$tmp/err" || bad "no markers: $(cat "$tmp/err")"
for args in --bogus --seeds=x "--update=a --check=b"; do
	# shellcheck disable=SC2086
	"$res" $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$args': exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$args': not one line: $(cat "$tmp/err")"
done
exit $fail

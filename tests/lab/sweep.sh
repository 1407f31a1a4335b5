#!/bin/sh
# scripts/lab-sweep: usage errors exit 2; a small sweep (two seeds, the
# queue group moved +-20 %, fsync-loop --quick) prints one row per summary
# row of the scenario with both seeds counted and every move counted, and
# names the moves it skipped (a parameter at 0 cannot move). Merging its
# kept jobs again gives the same table; --json the same rows as JSON.
# (tests/lab/sweep_jobs.sh: the runners, the job list, the merge's failures.)
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd
command -v jq >/dev/null || skip "jq is missing (scripts/install-deps)"
UJBD=$(cd "$(dirname "$UJBD")" && pwd)/$(basename "$UJBD")
export UJBD
sweep=$SRCDIR/scripts/lab-sweep
scratch sweep

for args in --bogus --share=x --jobs=0 -j -jx --seeds=1,,2 --seeds=a --scenario=nope --vary=nope \
	"--merge=$tmp --seeds=1" "--joblist=$tmp/l --out=$tmp/o" "--joblist=$tmp/l -j2" "--joblist=$tmp/l --merge=$tmp"; do
	# shellcheck disable=SC2086 # some are two words
	"$sweep" $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "'$args': exit $rc, want 2"
	if ! { [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^lab-sweep: ' "$tmp/err"; }; then
		bad "'$args': message: $(cat "$tmp/err")"
	fi
done

"$sweep" --seeds=1,2 --vary=queue --scenario=fsync-loop --quick --jobs=2 --out="$tmp/runs" \
	>"$tmp/out" 2>"$tmp/err" || bad "sweep exit $?: $(tail -3 "$tmp/err")"
# the report: a header and one row per summary row of the scenario
nsum=$(jq '.scenarios["fsync-loop"].summary | length' "$tmp/runs/fsync-loop/seed1.json")
[ "$nsum" -ge 3 ] || bad "seed 1's document has $nsum summary rows"
[ "$(grep -c '^fsync-loop ' "$tmp/out")" -eq "$nsum" ] || bad "rows: $(cat "$tmp/out")"
# every moved parameter ran twice (down and up); queue_depth is 0 and is skipped
moved=$("$UJBD" lab --params --json |
	jq '[.queue | to_entries[] | select(.value.value | type == "number" and . != 0)] | length')
[ "${moved:-0}" -ge 1 ] || bad "the queue group has no parameter to move"
grep '^fsync-loop ' "$tmp/out" | grep -q "2/2\|1/2\|0/2" || bad "seeds not counted: $(cat "$tmp/out")"
grep '^fsync-loop ' "$tmp/out" | grep -vq "of $((2 * moved)) flip" && bad "moves not counted ($((2 * moved)) expected): $(cat "$tmp/out")"
grep -q 'not moved: queue queue_depth=0' "$tmp/err" || bad "the skipped move is not named: $(cat "$tmp/err")"
# the jobs' documents are kept with --out: two seeds and the moves
set -- "$tmp/runs"/fsync-loop/*.json
[ $# -eq $((2 + 2 * moved)) ] || bad "documents: $*"
# merged again: the same bytes; as JSON: the same rows
"$sweep" --merge="$tmp/runs" >"$tmp/merged" 2>"$tmp/err" || bad "--merge exit $?: $(cat "$tmp/err")"
cmp -s "$tmp/out" "$tmp/merged" || bad "--merge differs: $(diff "$tmp/out" "$tmp/merged")"
"$sweep" --merge="$tmp/runs" --json >"$tmp/json" 2>"$tmp/err" || bad "--merge --json exit $?: $(cat "$tmp/err")"
[ "$(jq 'map(select(.scenario == "fsync-loop" and .seeds.n == 2 and .moves.n == 2 * '"$moved"' and (.moves.flips | type) == "array")) | length' "$tmp/json")" = "$nsum" ] ||
	bad "--json: $(cat "$tmp/json")"

[ $fail -eq 0 ] && echo "lab-sweep: ok"
exit $fail

#!/bin/sh
# The tool's manners on bad input, every verb alike: a bad option, a
# missing value, a missing or extra operand, `ujbd help VERB` and `help
# nosuch`, and --json's error object. Every error is exactly one line on
# stderr, "ujbd VERB: reason", nothing on stdout (but the JSON object), and
# the exit status of ujbd(1): 2 for usage.
. "$SRCDIR/tests/tools/tools.lib"

# ---- bad arguments: exit 2, one line "ujbd VERB: ..." ----------------------
while read -r verb args; do
	# shellcheck disable=SC2086
	expect_err 2 "$verb" $verb $args
done <<EOF2
format --bogus j.jnl
format --size
format -x
format j.jnl
format --size=4M
format --size=4M a b
format --size=4M --json=1 j.jnl
info
info --bogus j.jnl
info a b
info --journal
info --j x
dump --bogus j.jnl
dump
dump --data
recover
recover --nosuch x
recover --dry-run=yes x
write
write x
write --block x
devbench --bogus
devbench --ops
devbench extra
bench
bench fsync-loop --bogus
bench fsync-loop --dir
lab --bogus
lab --seed
lab extra
EOF2
"$UJBD" info --nosuch x 2>"$T/err"
grep -qx "ujbd info: unknown option '--nosuch' (see ujbd info --help)" "$T/err" \
	|| die "unknown option message: $(cat "$T/err")"
"$UJBD" format --size 2>"$T/err"
grep -qx "ujbd format: option '--size' needs a value" "$T/err" \
	|| die "missing value message: $(cat "$T/err")"
"$UJBD" info 2>"$T/err"
grep -qx "ujbd info: missing TARGET (see ujbd info --help)" "$T/err" \
	|| die "missing operand message: $(cat "$T/err")"

# ---- help: the top level, and every verb's own ------------------------------
"$UJBD" help > "$T/out" 2>&1 || die "ujbd help: exit $?"
grep -q '^verbs:' "$T/out" || die "ujbd help: no verb list"
for verb in $VERBS; do
	"$UJBD" help "$verb" > "$T/help" 2> "$T/err" || die "ujbd help $verb: exit $?"
	"$UJBD" "$verb" --help > "$T/own" 2>&1 || die "ujbd $verb --help: exit $?"
	[ -s "$T/help" ] && cmp -s "$T/help" "$T/own" || die "ujbd help $verb is not ujbd $verb --help"
	[ -s "$T/err" ] && die "ujbd help $verb wrote to stderr"
	grep -q "^usage: ujbd $verb" "$T/help" || die "ujbd help $verb: $(head -1 "$T/help")"
done
expect_err 2 help help nosuch
grep -q "unknown verb 'nosuch'" "$T/err" || die "help nosuch: $(cat "$T/err")"
expect_err 2 help help info extra
"$UJBD" nosuch > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || die "ujbd nosuch: not exit 2"
[ "$(wc -l < "$T/err")" -eq 1 ] || die "ujbd nosuch: $(cat "$T/err")"

# ---- --json: an error is also one JSON object on stdout ---------------------
"$UJBD" info --json --bogus j.jnl > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || die "info --json --bogus: exit $rc"
jq -e '.verb == "info" and .exit_status == 2 and (.error | test("unknown option"))' \
	"$T/out" > /dev/null || die "info --json --bogus: $(cat "$T/out")"
[ "$(wc -l < "$T/out")" -eq 1 ] || die "info --json --bogus: not one line"
grep -q "^ujbd info: unknown option" "$T/err" || die "info --json: no stderr line"
"$UJBD" bench fsync-loop --bogus --json > "$T/out" 2>/dev/null
jq -e '.verb == "bench" and .exit_status == 2' "$T/out" > /dev/null \
	|| die "bench --bogus --json: $(cat "$T/out")"
# without --json, stdout stays empty
"$UJBD" info --bogus j.jnl > "$T/out" 2>/dev/null
[ -s "$T/out" ] && die "info --bogus without --json wrote to stdout"
echo "PASS: usage errors are one line, help VERB, --json error objects"

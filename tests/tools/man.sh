#!/bin/sh
# ujbd(1) and the verbs' --help never drift apart: for every verb `ujbd
# help` lists, its section of ujbd(1) names exactly the long options its
# --help names (--help itself aside), and ujbd(1) has no section for a verb
# that does not exist. The page renders without groff warnings.
. "$SRCDIR/tests/tools/tools.lib"

MAN="$SRCDIR/man/ujbd.1"
[ -r "$MAN" ] || die "no $MAN"
# the page as text: \- is -, font changes dropped
cd "$T" || exit 1
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN" > man.txt
opts() { grep -o -- '--[a-z0-9][a-z0-9-]*' | grep -vx -- '--help' | sort -u; }

verbs=$("$UJBD" help | awk '/^verbs:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
[ -n "$verbs" ] || die "ujbd help lists no verb"
# the verbs that have a section (".SS "VERB ...")
sections=$(awk '/^\.SS/ { s = $2; gsub(/"/, "", s); print s }' man.txt | sort -u)
for s in $sections; do
	echo "$verbs" | grep -qx "$s" || die "ujbd(1) has a section for '$s', which is no verb"
done
for v in $verbs; do
	echo "$sections" | grep -qx "$v" || die "ujbd(1) has no section for the verb '$v'"
	"$UJBD" "$v" --help | opts > help.$v
	awk -v v="$v" '/^\.S[HS]/ { cur = "" } /^\.SS/ { s = $2; gsub(/"/, "", s); cur = s }
		cur == v' man.txt | opts > man.$v
	[ -s help.$v ] || [ "$v" = lab ] || die "ujbd $v --help names no option"
	if ! diff help.$v man.$v > diff.$v; then
		sed 's/^</  only in --help:/; s/^>/  only in ujbd(1):/' diff.$v | grep only >&2
		die "ujbd $v: --help and ujbd(1) name different options"
	fi
done
if command -v groff > /dev/null 2>&1; then
	groff -man -ww -z "$MAN" 2> warn.txt
	[ -s warn.txt ] && die "groff warns about ujbd(1): $(head -5 warn.txt)"
fi
echo "PASS: ujbd(1) names the options every verb's --help names"

#!/bin/sh
# The bash completion (tools/ujbd.bash, installed with the tool) completes
# the verbs, `help VERB`, each verb's long options (from its --help, so
# every option of ujbd(1) too), bench's workloads, and paths after
# --data=; and `make install` installs it.
. "$SRCDIR/tests/tools/tools.lib"
command -v bash > /dev/null 2>&1 || skip "bash not installed"

COMP="$SRCDIR/tools/ujbd.bash"
# comp WORDS...: the completions of the last word, sorted, on one line
comp() {
	PATH="$(dirname "$UJBD"):$PATH" bash -c '
		. "$0"
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_ujbd
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' "$COMP" "$@"
}
want() { # WANT WORDS...
	_w=$1
	shift
	_got=$(comp "$@")
	[ "$_got" = "$_w " ] || die "completing '$*': got '$_got', want '$_w'"
}
[ "$(basename "$UJBD")" = ujbd ] || skip "the binary is not named ujbd"
want "dump" ujbd du
want "help" ujbd hel
want "devbench" ujbd help dev
want "--block= --data= --hex --journal= --json --limit= --tid=" ujbd dump --
want "--force" ujbd format --f
want "fsync-loop" ujbd bench fs
want "--caller-commit --clean-fsyncs=" ujbd bench fsync-loop --c
mkdir "$T/dir" && : > "$T/dir/data.img"
want "$T/dir/data.img" ujbd recover j.jnl --data = "$T/dir/da"
# every verb's options complete, one per option of its --help
for v in $VERBS; do
	n=$("$UJBD" "$v" --help | grep -o -- '--[a-z0-9][a-z0-9-]*' | grep -vx -- --help | sort -u | wc -l)
	m=$(comp ujbd "$v" -- | wc -w)
	[ "$m" -eq "$n" ] || die "ujbd $v --: $m completions for $n options"
done

# make install puts it where bash-completion looks
if command -v make > /dev/null 2>&1 && [ -n "${BUILD:-}" ] && [ -x "$BUILD/ujbd" ]; then
	(unset MAKEFLAGS MFLAGS MAKELEVEL
	 make -s -C "$SRCDIR" BUILD="$BUILD" DESTDIR="$T/inst" PREFIX=/usr install-completion) \
		> "$T/make.out" 2>&1 || die "make install-completion: $(cat "$T/make.out")"
	cmp -s "$COMP" "$T/inst/usr/share/bash-completion/completions/ujbd" \
		|| die "the completion is not installed as share/bash-completion/completions/ujbd"
fi
echo "PASS: bash completion from the tool's own help"

#!/bin/sh
# The programs of examples/ (built by `make` against the public headers):
# each must succeed (they check their own outcome: the blocks in the data
# file, a whole record after a crash, every thread's last fsync, the
# statistics) and leave nothing behind, in its TMPDIR or where it runs.
. "${SRCDIR:-.}/tests/lib.sh"
n=0
for src in "$SRCDIR"/examples/*.c; do
	name=$(basename "$src" .c)
	prog=$BUILD/examples/$name
	[ -x "$prog" ] || { bad "$name: not built ($prog)"; continue; }
	dir=$(mktemp -d)
	mkdir "$dir/tmp" "$dir/cwd"
	if (cd "$dir/cwd" && TMPDIR="$dir/tmp" "$prog") >"$dir/out" 2>&1; then
		n=$((n + 1))
		sed "s/^/  /" "$dir/out" | tail -n 3
	else
		bad "$name exits $?:"; sed "s/^/    /" "$dir/out"
	fi
	left=$(ls -A "$dir/tmp" "$dir/cwd" | grep -v ':$' | grep -v '^$')
	[ -z "$left" ] || bad "$name left behind: $left"
	rm -rf "$dir"
done
[ "$n" -ge 4 ] || bad "only $n examples ran (quickstart, atomic_update, fsync_threads, stats at least)"
[ $fail -eq 0 ] && echo "ok: $n examples ran and left nothing behind"
exit $fail

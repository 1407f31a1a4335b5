#!/bin/sh
# The man pages read from the build, before any install: `make` leaves
# them in build/man/man1 and build/man/man3 with the version filled in,
# and `man -M build/man PAGE` shows a page and follows a ".so" link page.
. "${SRCDIR:-.}/tests/lib.sh"
command -v man >/dev/null 2>&1 || skip "man not installed"
v=$(sed -n 's/^VERSION *:*= *//p' "$SRCDIR/Makefile" | head -1)
for p in man1/ujbd.1 man3/ujbd_open.3 man3/ujbd_open_path.3; do
	[ -f "$BUILD/man/$p" ] || { bad "make left no $BUILD/man/$p"; continue; }
	grep -q '@VERSION@' "$BUILD/man/$p" && bad "$BUILD/man/$p still says @VERSION@"
done
out=$(MANWIDTH=80 man -M "$BUILD/man" ujbd 2>&1) || bad "man -M $BUILD/man ujbd fails: $out"
echo "$out" | grep -q "$v" || bad "man ujbd from the build does not show version $v"
out=$(MANWIDTH=80 man -M "$BUILD/man" 3 ujbd_open_path 2>&1) || bad "man ujbd_open_path: $out"
echo "$out" | grep -q "ujbd_open_path" || bad "the .so page ujbd_open_path does not resolve: $out"
grep -qF 'man -M build/man' "$SRCDIR/README.md" || bad "README does not say how to read the pages from the build"
[ $fail -eq 0 ] && echo "ok: man pages readable from the build"
exit $fail

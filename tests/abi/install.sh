#!/bin/sh
# make install, then make uninstall, into a DESTDIR, as a user of the
# library would meet them: the installed headers are exactly the public
# ones (no internal header), pkg-config reports the Makefile's VERSION, a C
# and a C++ program built with `pkg-config --cflags --libs ujbd` run
# against the installed libujbd.so with the same version at compile and run
# time, `man 3` finds a function's page and a family member's link; then
# uninstall leaves no file and no include/ujbd behind.
. "${SRCDIR:-.}/tests/lib.sh"
CC=${CC:-cc}
SAN=${SAN:-}
for t in make pkg-config "$CC"; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed"
done
[ -e "$BUILD/libujbd.so" ] && [ -x "$BUILD/ujbd" ] || skip "$BUILD not built (make all)"
scratch install
missing=""
DEST=$tmp/dest PREFIX=/usr/local D=$tmp/dest/usr/local
v=$(sed -n 's/^VERSION *:= *//p' "$SRCDIR/Makefile")
# The Makefile of the tree under test, with its build directory, from
# inside make check: a make of our own, not a job of the caller's.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$SRCDIR" \
	BUILD="$BUILD" SAN="$SAN" DESTDIR="$DEST" PREFIX="$PREFIX" "$@"; }

mk install >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: make install"; exit 1; }

# ---- what was installed -------------------------------------------------------
( cd "$SRCDIR/include/ujbd" && ls ./*.h | sed 's#^\./##'; echo version.h ) | sort >"$tmp/want_h"
ls "$D/include/ujbd" | sort >"$tmp/got_h"
cmp -s "$tmp/want_h" "$tmp/got_h" \
	|| bad "installed headers differ from include/ujbd/ + version.h: $(diff "$tmp/want_h" "$tmp/got_h" | grep '^[<>]' | tr '\n' ' ')"
for h in rt.h blk.h stack.h param.h hist.h dev_req.h dev_sim.h; do
	[ -e "$D/include/ujbd/$h" ] && bad "internal header $h was installed"
done
[ -x "$D/bin/ujbd" ] || bad "no bin/ujbd"
[ "$("$D/bin/ujbd" --version)" = "ujbd $v" ] || bad "installed ujbd --version is not 'ujbd $v'"

# ---- pkg-config and a program ------------------------------------------------
export PKG_CONFIG_PATH="$D/lib/pkgconfig" PKG_CONFIG_LIBDIR="$D/lib/pkgconfig"
pc() { pkg-config --define-variable=prefix="$D" "$@" ujbd; }
[ "$(pc --modversion)" = "$v" ] || bad "pkg-config --modversion ujbd is '$(pc --modversion)', want $v"

# A program built against the installed headers and library, in C and in
# C++ (the headers' extern "C" must reach the library's symbols), sees one
# version: UJBD_VERSION of the header it was compiled with is what
# ujbd_version() of the library it runs against returns. (Building and
# running examples/quickstart.c, shared and static, is
# tests/examples/install.sh.)
for h in "$D"/include/ujbd/*.h; do echo "#include <ujbd/$(basename "$h")>"; done >"$tmp/prog.c"
cat >>"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <string.h>
int main(void)
{
	printf("%s %s %d.%d.%d\n", UJBD_VERSION, ujbd_version(), UJBD_VERSION_MAJOR,
	       UJBD_VERSION_MINOR, UJBD_VERSION_PATCH);
	return strcmp(UJBD_VERSION, ujbd_version()) != 0;
}
PROG
want="$v $v $v"
cp "$tmp/prog.c" "$tmp/prog.cc"
for lang in c c++; do
	if [ $lang = c ]; then cc=$CC src=$tmp/prog.c std=-std=c11; else cc=c++ src=$tmp/prog.cc std=; fi
	command -v $cc >/dev/null 2>&1 || { missing="$missing $cc"; continue; }
	# shellcheck disable=SC2046,SC2086
	if $cc $std -Wall -Wextra -Werror $SAN -o "$tmp/prog" "$src" $(pc --cflags --libs) \
		2>"$tmp/err"; then
		LD_LIBRARY_PATH="$D/lib" ldd "$tmp/prog" | grep -q "$D/lib/libujbd.so.0" \
			|| bad "$lang: the program does not load the installed libujbd.so.0"
		out=$(LD_LIBRARY_PATH="$D/lib" "$tmp/prog" 2>&1)
		[ "$out" = "$want" ] || bad "$lang: header and library versions: '$out', want '$want'"
	else
		bad "$lang: a program does not build with pkg-config --cflags --libs ujbd: $(head -n 5 "$tmp/err")"
	fi
done

# ---- man ----------------------------------------------------------------------
if command -v man >/dev/null 2>&1; then
	man -M "$D/share/man" 3 ujbd_start 2>/dev/null | grep -q "ujbd_start, ujbd_extend" \
		|| bad "man 3 ujbd_start does not show its page"
	man -M "$D/share/man" 3 ujbd_wait_tid 2>/dev/null | grep -q "ujbd_commit_tid" \
		|| bad "man 3 ujbd_wait_tid does not reach its family's page"
	man -M "$D/share/man" 3 ujbd_start 2>/dev/null | grep -q "ujbd $v" \
		|| bad "the installed man page's footer does not carry ujbd $v"
else
	missing="$missing man"
fi

# ---- uninstall -----------------------------------------------------------------
mk uninstall >"$tmp/log" 2>&1 || { cat "$tmp/log"; bad "make uninstall"; }
left=$(find "$DEST" ! -type d)
[ -z "$left" ] || bad "uninstall left: $(echo "$left" | head -n 10 | tr '\n' ' ')"
[ -d "$D/include/ujbd" ] && bad "uninstall left include/ujbd"

[ $fail -eq 0 ] || exit 1
[ -n "$missing" ] && skip "not installed:$missing (the rest passed)"
echo "install: $v installed, used from C and C++, uninstalled"

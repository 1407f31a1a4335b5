#!/bin/sh
# `make install` into a scratch root, then examples/quickstart.c built as
# the README says a user builds against the installed library: shared
# through `pkg-config --cflags --libs ujbd`, static through libujbd.a and
# the libraries `pkg-config --static` lists (the README's static line must
# list the same ones). Each binary must run and succeed.
. "${SRCDIR:-.}/tests/lib.sh"
command -v pkg-config >/dev/null 2>&1 || skip "no pkg-config"
[ -f "$BUILD/libujbd.a" ] || skip "no $BUILD/libujbd.a"
# A sanitizer build's library needs its runtime in every program: this test
# is for the plain build, where a user's compiler line works as it is.
nm "$BUILD/libujbd.a" 2>/dev/null | grep -q -E ' U __(asan|tsan|ubsan)_' &&
	skip "$BUILD is a sanitizer build (the plain build runs this test)"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
CC=${CC:-cc}

unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$SRCDIR" --no-print-directory BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr install \
	>"$root/make.log" 2>&1 || { tail -n 20 "$root/make.log"; bad "make install failed"; exit 1; }
for f in usr/include/ujbd/ujbd.h usr/lib/libujbd.a usr/lib/pkgconfig/ujbd.pc; do
	[ -f "$root/$f" ] || bad "make install left no $f"
done

export PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
cflags=$(pkg-config --cflags ujbd) && libs=$(pkg-config --libs ujbd) || bad "pkg-config ujbd fails"
static=$(pkg-config --static --libs-only-l ujbd | sed -e 's/-lujbd *//' -e 's/ *$//')
mkdir "$root/tmp"

# shared
$CC "$SRCDIR/examples/quickstart.c" $cflags $libs -o "$root/qs-shared" 2>"$root/cc.log" ||
	{ cat "$root/cc.log"; bad "shared link with pkg-config's flags fails"; }
[ -x "$root/qs-shared" ] && { LD_LIBRARY_PATH="$root/usr/lib" TMPDIR="$root/tmp" "$root/qs-shared" ||
	bad "quickstart linked shared fails"; }

# static
$CC "$SRCDIR/examples/quickstart.c" $cflags "$root/usr/lib/libujbd.a" $static -o "$root/qs-static" \
	2>"$root/cc.log" || { cat "$root/cc.log"; bad "static link with '$static' fails"; }
[ -x "$root/qs-static" ] && { TMPDIR="$root/tmp" "$root/qs-static" || bad "quickstart linked static fails"; }
ldd "$root/qs-static" 2>/dev/null | grep -q libujbd && bad "the static binary still loads libujbd.so"

# a PREFIX the loader does not search: the README's rpath line starts with
# no LD_LIBRARY_PATH, where the plain shared link does not start at all
make -C "$SRCDIR" --no-print-directory BUILD="$BUILD" PREFIX="$root/opt" install \
	>"$root/make.log" 2>&1 || { tail -n 20 "$root/make.log"; bad "make install PREFIX=$root/opt failed"; }
rpath_line='cc app.c $(pkg-config --cflags --libs ujbd) -Wl,-rpath,$(pkg-config --variable=libdir ujbd) -o app'
grep -qF "$rpath_line" "$SRCDIR/README.md" || bad "README.md has no rpath line '$rpath_line'"
(
	export PKG_CONFIG_LIBDIR="$root/opt/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR=
	unset LD_LIBRARY_PATH
	src=$(cd "$SRCDIR/examples" && pwd)
	cd "$root" && cp "$src/quickstart.c" app.c && cp "$src"/*.h . || exit 1
	eval "$(echo "$rpath_line" | sed "s/^cc /$CC /")" 2>"$root/cc.log" ||
		{ cat "$root/cc.log"; echo "FAIL: the README's rpath line does not build"; exit 1; }
	TMPDIR="$root/tmp" ./app || { echo "FAIL: built with the rpath line, app does not run"; exit 1; }
	$CC app.c $(pkg-config --cflags --libs ujbd) -o app-norpath 2>"$root/cc.log" || exit 1
	TMPDIR="$root/tmp" ./app-norpath >/dev/null 2>&1 &&
		{ echo "FAIL: without rpath the loader found libujbd.so: the test proves nothing"; exit 1; }
	exit 0
) || bad "an install under a PREFIX the loader does not search"

# the README's static line lists what pkg-config --static lists
grep -qF "libujbd.a $static" "$SRCDIR/README.md" ||
	bad "README.md has no static link line 'libujbd.a $static'"
[ -z "$(ls -A "$root/tmp")" ] || bad "quickstart left files behind"
[ $fail -eq 0 ] && echo "ok: installed; quickstart built shared and static ($static) and ran"
exit $fail

#!/bin/sh
# Every installed header (include/ujbd/*.h and the generated version.h)
# compiles alone, and twice in a row, as C11 with -Wall -Wextra -pedantic
# (gcc and clang) and as C++ (g++ and clang++), with only the installed
# include directories on the path: a public header that leans on an
# internal one (src/include), on _GNU_SOURCE or on C-only syntax fails here.
. "${SRCDIR:-.}/tests/lib.sh"
[ -f "$BUILD/include/ujbd/version.h" ] || skip "no $BUILD/include/ujbd/version.h (build first)"
scratch headers
missing="" n=0

# compiler, language flags, source suffix
check() {
	cc=$1 flags=$2 suf=$3
	command -v "$cc" >/dev/null 2>&1 || { missing="$missing $cc"; return; }
	for h in "$SRCDIR"/include/ujbd/*.h "$BUILD/include/ujbd/version.h"; do
		name=$(basename "$h")
		printf '#include <ujbd/%s>\n#include <ujbd/%s>\nint ujbd_header_test;\n' \
			"$name" "$name" >"$tmp/t.$suf"
		# shellcheck disable=SC2086
		if ! $cc $flags -Wall -Wextra -pedantic -Werror -fsyntax-only \
			-I"$SRCDIR/include" -I"$BUILD/include" "$tmp/t.$suf" >"$tmp/err" 2>&1; then
			echo "FAIL: $cc $flags: <ujbd/$name>:"
			sed 's/^/    /' "$tmp/err" | head -n 20
			fail=1
		fi
		n=$((n + 1))
	done
}
check gcc "-std=c11" c
check clang "-std=c11" c
check g++ "-std=c++11" cc
check clang++ "-std=c++11" cc
check g++ "" cc

[ $fail -eq 0 ] || exit 1
[ -n "$missing" ] && skip "not installed:$missing ($n compiles passed)"
echo "headers: $n compiles passed"
exit 0

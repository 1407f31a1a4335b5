#!/bin/sh
# One version everywhere: the Makefile's VERSION (the one source) is what
# the generated <ujbd/version.h> defines, part by part, and what
# `ujbd --version` prints (through ujbd_version(), the library's own).
# ujbd.pc and a program linked against the installed library are checked
# by install.sh.
. "${SRCDIR:-.}/tests/lib.sh"
need_ujbd

v=$(sed -n 's/^VERSION *:= *//p' "$SRCDIR/Makefile")
echo "$v" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || bad "Makefile VERSION '$v' is not MAJOR.MINOR.PATCH"
h="$BUILD/include/ujbd/version.h"
[ -f "$h" ] || { echo "FAIL: no $h"; exit 1; }
def() { sed -n "s/^#define $1 //p" "$h"; }
[ "$(def UJBD_VERSION)" = "\"$v\"" ] || bad "UJBD_VERSION is $(def UJBD_VERSION), want \"$v\""
[ "$(def UJBD_VERSION_MAJOR).$(def UJBD_VERSION_MINOR).$(def UJBD_VERSION_PATCH)" = "$v" ] \
	|| bad "UJBD_VERSION_MAJOR.MINOR.PATCH disagree with $v"

out=$("$UJBD" --version); rc=$?
[ $rc -eq 0 ] || bad "ujbd --version: exit $rc"
[ "$out" = "ujbd $v" ] || bad "ujbd --version printed '$out', want 'ujbd $v'"
[ "$("$UJBD" -V)" = "ujbd $v" ] || bad "ujbd -V differs from --version"
grep -q "^## $v\b" "$SRCDIR/CHANGELOG.md" || bad "CHANGELOG.md has no '## $v' entry"
# The man pages take the version at install (@VERSION@), never a copy of it.
for p in "$SRCDIR"/man/*.[0-9]; do
	head -n 1 "$p" | grep -q '^\.so ' && continue
	head -n 1 "$p" | grep -q '"ujbd @VERSION@"' || bad "$(basename "$p"): .TH does not say \"ujbd @VERSION@\""
done

[ $fail -eq 0 ] && echo "version: $v everywhere"
exit $fail

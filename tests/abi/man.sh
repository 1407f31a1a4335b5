#!/bin/sh
# The man pages and the API do not drift apart: every public function (each
# function the installed headers declare, static inline ones included) has
# man/NAME.3, a page or a one-line ".so man3/PAGE.3" link to the page of its
# family; every page's NAME line lists only public functions, each with its
# file and each in its SYNOPSIS; every function a page refers to,
# "name()" or "name(3)", exists; every page has the sections a reader looks
# for, is listed in libujbd(3), and passes man --warnings (groff's -ww
# when man is missing) with no warning.
. "${SRCDIR:-.}/tests/lib.sh"
command -v gcc >/dev/null 2>&1 || skip "gcc not installed (needed for -aux-info)"
[ -f "$BUILD/include/ujbd/version.h" ] || skip "no $BUILD/include/ujbd/version.h (build first)"
scratch man
M="$SRCDIR/man"
PREFIX_RE='(ujbd|jbd|dev|ext4)_[a-z0-9_]+'

# ---- the public functions ---------------------------------------------------
inc=$(cd "$SRCDIR/include" && pwd)
for h in "$inc"/ujbd/*.h; do echo "#include <ujbd/$(basename "$h")>"; done >"$tmp/all.c"
gcc -std=c11 -I"$inc" -I"$BUILD/include" -fsyntax-only -aux-info "$tmp/aux" "$tmp/all.c" \
	|| { echo "FAIL: the installed headers do not compile together"; exit 1; }
grep -F "$inc/ujbd/" "$tmp/aux" | grep -E ' (extern|static) ' \
	| sed -E 's/ \(.*//; s/.*[ *]([A-Za-z_][A-Za-z0-9_]*)$/\1/' | sort -u >"$tmp/public"
[ "$(wc -l <"$tmp/public")" -gt 50 ] || { echo "FAIL: too few public functions found"; exit 1; }

is_stub() { head -n 1 "$1" | grep -q '^\.so '; }
# The functions a page's NAME line lists.
names() { sed -n '/^\.SH NAME/{n;p;q}' "$1" | sed 's/ \\-.*//' | tr ',' '\n' | tr -d ' '; }
section() { grep -q "^\.SH \"*$2\"*\$" "$1"; }

# ---- every public function has its file -----------------------------------------
while read -r f; do
	[ -f "$M/$f.3" ] || bad "public function $f has no man page (man/$f.3)"
done <"$tmp/public"

# ---- every file ------------------------------------------------------------------
pages=""
for p in "$M"/*.3; do
	base=$(basename "$p" .3)
	if is_stub "$p"; then
		[ "$(wc -l <"$p")" -eq 1 ] || bad "$base.3: a link page holds more than its .so line"
		target=$(sed -n 's#^\.so man3/\(.*\)\.3$#\1#p' "$p")
		if [ -z "$target" ] || [ ! -f "$M/$target.3" ] || is_stub "$M/$target.3"; then
			bad "$base.3: links to '$(cat "$p")', not to a page in man/"
		elif ! names "$M/$target.3" | grep -qx "$base"; then
			bad "$base.3: links to $target.3, whose NAME does not list $base"
		fi
		grep -qx "$base" "$tmp/public" || bad "$base.3: $base is no public function"
		continue
	fi
	[ "$base" = libujbd ] || pages="$pages $base"
	th=$(head -n 1 "$p")
	echo "$th" | grep -q "^\.TH $(echo "$base" | tr a-z A-Z) 3 [0-9-]* \"ujbd @VERSION@\" \"libujbd Manual\"\$" \
		|| bad "$base.3: first line '$th' is not .TH $(echo "$base" | tr a-z A-Z) 3 DATE \"ujbd @VERSION@\" \"libujbd Manual\""
	for s in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" "THREAD SAFETY" "SEE ALSO"; do
		section "$p" "$s" || bad "$base.3: no $s section"
	done
	if sed -n '/^\.SH "RETURN VALUE"/,/^\.SH/p' "$p" | grep -q 'negative errno'; then
		section "$p" ERRORS || bad "$base.3: returns errors but has no ERRORS section"
	fi
	[ "$base" = libujbd ] && continue
	names "$p" >"$tmp/names"
	grep -qx "$base" "$tmp/names" || bad "$base.3: its NAME line does not list $base"
	sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$p" | sed 's/"//g' >"$tmp/synopsis"
	while read -r f; do
		grep -qx "$f" "$tmp/public" || bad "$base.3: NAME lists $f, no public function"
		[ -f "$M/$f.3" ] || bad "$base.3: NAME lists $f, which has no man/$f.3 link"
		grep -Eq "(^|[ *])$f\(" "$tmp/synopsis" || bad "$base.3: $f is not in its SYNOPSIS"
	done <"$tmp/names"
done

# ---- references: "name (3)", "name ()" and "name(" name real functions -----------
for p in "$M"/*.3 "$M"/*.1; do
	is_stub "$p" && continue
	sed 's/\\f[BIRP]//g; s/"//g' "$p" | grep -oE "\\b$PREFIX_RE ?\\((3)?\\)?" \
		| sed -E 's/ ?\(.*//' | sort -u >"$tmp/refs"
	while read -r f; do
		grep -qx "$f" "$tmp/public" || bad "$(basename "$p"): refers to $f(), no public function"
	done <"$tmp/refs"
	sed 's/\\f[BIRP]//g; s/"//g' "$p" | grep -oE "\\b$PREFIX_RE \\(3\\)" | sed 's/ (3)//' \
		| sort -u | while read -r f; do
		[ -f "$M/$f.3" ] || echo "$(basename "$p"): refers to $f(3), which has no page"
	done >"$tmp/x"
	[ -s "$tmp/x" ] && bad "$(cat "$tmp/x")"
done

# ---- libujbd(3) lists every page --------------------------------------------
for b in $pages; do
	grep -q "^\.BR $b (3)" "$M/libujbd.3" || bad "libujbd.3 does not list $b(3)"
done

# ---- lint ----------------------------------------------------------------------
lint=""
if command -v man >/dev/null 2>&1 && man --help 2>&1 | grep -q -- --warnings; then
	lint=man
elif command -v groff >/dev/null 2>&1; then
	lint=groff
fi
if [ -n "$lint" ]; then
	for p in "$M"/*.3 "$M"/*.1; do
		is_stub "$p" && continue
		if [ $lint = man ]; then
			LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
				man --warnings -E UTF-8 -l -Tutf8 -Z "$p" >/dev/null 2>"$tmp/w"
		else
			groff -man -ww -z "$p" 2>"$tmp/w"
		fi
		[ -s "$tmp/w" ] && bad "$(basename "$p"): $lint warns: $(head -n 3 "$tmp/w")"
	done
fi

[ $fail -eq 0 ] || exit 1
[ -z "$lint" ] && skip "neither man (man-db) nor groff installed: pages not linted"
echo "man: $(wc -l <"$tmp/public") public functions, $(echo $pages | wc -w) pages, linted with $lint"
exit 0

#!/bin/sh
# libujbd.so exports exactly the documented API: the functions the
# installed headers (include/ujbd/) declare, each listed by name in the
# version script (ujbd.map) and exported at version UJBD_*, and nothing
# else: no internal layer (rt_, blk_, buf_, stack_, the journal's own
# jbd_ internals), no USDT semaphore. The declared set comes from gcc's
# -aux-info over every installed header (static inline helpers are not
# symbols and are left out).
. "${SRCDIR:-.}/tests/lib.sh"
so="$BUILD/libujbd.so"
[ -e "$so" ] || skip "no $so (make all)"
for t in gcc nm readelf; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed"
done
scratch exports

inc=$(cd "$SRCDIR/include" && pwd)
for h in "$inc"/ujbd/*.h; do echo "#include <ujbd/$(basename "$h")>"; done >"$tmp/all.c"
gcc -std=c11 -I"$inc" -I"$BUILD/include" -fsyntax-only -aux-info "$tmp/aux" "$tmp/all.c" \
	|| { echo "FAIL: the installed headers do not compile together"; exit 1; }
# "/* PATH:LINE:NC */ extern TYPE NAME (ARGS);" for declarations in our headers.
grep -F "$inc/ujbd/" "$tmp/aux" | grep ' extern ' \
	| sed -E 's/ \(.*//; s/.*[ *]([A-Za-z_][A-Za-z0-9_]*)$/\1/' | sort -u >"$tmp/declared"
# Variables declared extern in the installed headers (none today).
cat "$inc"/ujbd/*.h | sed -nE 's/^extern [^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?;.*/\1/p' \
	| sort -u >>"$tmp/declared"
sort -u -o "$tmp/declared" "$tmp/declared"

# The global names of the version script (comments removed).
sed -e 's#/\*.*\*/##' "$SRCDIR/ujbd.map" | tr -d ' \t' \
	| sed -n '/^global:/,/^local:/p' | grep -E '^[A-Za-z_][A-Za-z0-9_]*;$' \
	| tr -d ';' | sort -u >"$tmp/mapped"

# What the shared library really exports (defined, dynamic), with versions.
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' >"$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | sort -u >"$tmp/exported"

n=$(wc -l <"$tmp/declared")
[ "$n" -gt 50 ] || bad "only $n declarations found in the installed headers: the parse is broken"
comm -23 "$tmp/exported" "$tmp/declared" >"$tmp/x"
[ -s "$tmp/x" ] && bad "exported but declared in no installed header: $(tr '\n' ' ' <"$tmp/x")"
comm -13 "$tmp/exported" "$tmp/declared" >"$tmp/x"
[ -s "$tmp/x" ] && bad "declared in an installed header but not exported: $(tr '\n' ' ' <"$tmp/x")"
comm -3 "$tmp/mapped" "$tmp/declared" >"$tmp/x"
[ -s "$tmp/x" ] && bad "ujbd.map and the headers disagree on: $(tr -d '\t' <"$tmp/x" | tr '\n' ' ')"
grep -q '_semaphore' "$tmp/exported" && bad "a USDT semaphore is exported"
grep -v '@@UJBD_' "$tmp/versioned" >"$tmp/x"
[ -s "$tmp/x" ] && bad "exported without a UJBD_ version: $(tr '\n' ' ' <"$tmp/x")"
sov=$(sed -n 's/^SOVERSION *:= *//p' "$SRCDIR/Makefile")
readelf -d "$so" | grep -q "Library soname: \[libujbd.so.$sov\]" \
	|| bad "soname is not libujbd.so.$sov"

[ $fail -eq 0 ] && echo "exports: $n functions, declared = listed = exported"
exit $fail

#!/bin/sh
# The README's two quick starts, as a reader would use them: the command
# lines run as written where a reader runs them after `make`, the checkout
# (here a directory whose build/ is the build under test; PATH as the
# reader's, no ujbd on it), and do what their comments say; the library
# excerpt is word for word a part of examples/quickstart.c (which
# examples.sh runs).
. "${SRCDIR:-.}/tests/lib.sh"
README=$SRCDIR/README.md
BUILDDIR=$(cd "$(dirname "$UJBD")" && pwd)
UJBD=$BUILDDIR/$(basename "$UJBD")
PATH=$PATH:/sbin:/usr/sbin
export PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# block MARKER: the fenced block that follows the line holding MARKER
block() {
	awk -v m="$1" 'index($0, m) { on = 1; next }
		on == 1 && /^```/ { on = 2; next }
		on == 2 && /^```/ { exit }
		on == 2 { print }' "$README"
}

# ---- the library excerpt is in the example ----------------------------------
block "checks that this block is in examples/quickstart.c" >"$tmp/excerpt"
[ -s "$tmp/excerpt" ] || bad "README: no library excerpt after its marker"
awk 'NR == FNR { want[n++] = $0; next }
	{ line[m++] = $0 }
	END { for (i = 0; i + n <= m; i++) { for (k = 0; k < n && line[i + k] == want[k]; k++);
		if (k == n) exit 0 }
	      exit 1 }' "$tmp/excerpt" "$SRCDIR/examples/quickstart.c" ||
	bad "README's library excerpt is not a part of examples/quickstart.c as it stands"

# ---- the six command lines -------------------------------------------------
for t in mke2fs e2fsck; do
	command -v $t >/dev/null 2>&1 || skip "no $t (e2fsprogs)"
done
block "runs this block as written" >"$tmp/cli.sh"
[ "$(grep -c . "$tmp/cli.sh")" -eq 7 ] || bad "README: the command-line quick start is not seven lines"
mkdir "$tmp/run"
ln -s "$BUILDDIR" "$tmp/run/build" # the checkout after make, as far as the block can tell
(cd "$tmp/run" && command -v ujbd >/dev/null 2>&1) && bad "ujbd already on PATH: the test proves nothing"
(cd "$tmp/run" && sh -e -x "$tmp/cli.sh") >"$tmp/out" 2>&1 ||
	{ sed 's/^/    /' "$tmp/out"; bad "the command-line quick start fails as written"; }
grep -q 'block 10000 logged' "$tmp/out" || bad "ujbd dump does not show block 10000 in the log"
# (sh -e: e2fsck -fn exiting 0 is its verdict "no errors")
grep -q '^+ e2fsck -fn disk.img' "$tmp/out" || bad "the quick start did not reach e2fsck"
cd "$tmp/run" 2>/dev/null && [ -f block ] && [ -f disk.img ] &&
	{ dd if=disk.img bs=4096 skip=10000 count=1 status=none | cmp -s - block ||
		bad "after ujbd recover, block 10000 of disk.img is not the block written"; }
"$UJBD" info disk.img 2>/dev/null | grep -q 'needs recovery: *no' ||
	bad "after ujbd recover, ujbd info still says the journal needs recovery"
[ $fail -eq 0 ] && echo "ok: the README's quick starts work as written"
exit $fail

#!/bin/sh
# format without --uuid draws the journal's uuid from the kernel (a
# version-4 uuid, a new one each time); where the kernel gives no random
# bytes (getrandom failing, made so here by a preloaded shim), format
# refuses with one line naming --uuid and creates nothing: a fixed uuid
# would seed the checksums of every such journal alike. --uuid still works.
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
"$UJBD" format a.jnl --size=1M > /dev/null || die "format a.jnl"
"$UJBD" format b.jnl --size=1M > /dev/null || die "format b.jnl"
ua=$("$UJBD" info a.jnl --json | jq -r .uuid)
ub=$("$UJBD" info b.jnl --json | jq -r .uuid)
[ "$ua" != "$ub" ] || die "two formats drew the same uuid $ua"
echo "$ua" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
	|| die "not a version-4 uuid: $ua"

# ASan wants its runtime first among the loaded libraries; the shim comes first
# here, which is harmless (it defines getrandom alone)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
cat > nornd.c <<'EOC'
#include <errno.h>
#include <sys/types.h>
ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	(void)buf; (void)len; (void)flags;
	errno = ENOSYS;
	return -1;
}
EOC
${CC:-cc} -shared -fPIC -o nornd.so nornd.c 2> cc.err || skip "cannot build the shim: $(head -1 cc.err)"
LD_PRELOAD=$T/nornd.so expect_err 3 format format c.jnl --size=1M
grep -q "no random uuid" "$T/err" && grep -q -- "--uuid" "$T/err" \
	|| die "message does not say why or name --uuid: $(cat "$T/err")"
[ -e c.jnl ] && die "a refused format created its file"
LD_PRELOAD=$T/nornd.so "$UJBD" format d.jnl --size=1M \
	--uuid=11111111-2222-4333-8444-555555555555 > /dev/null || die "--uuid without randomness refused"
[ "$("$UJBD" info d.jnl --json | jq -r .uuid)" = 11111111-2222-4333-8444-555555555555 ] \
	|| die "--uuid not written"
exit 0

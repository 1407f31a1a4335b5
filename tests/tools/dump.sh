#!/bin/sh
# ujbd dump's filters against debugfs logdump (the oracle): --block=N lists
# what `logdump -b N` lists (the tags of N with their sequence and journal
# block, and N's revoke records); --tid, --limit; --hex gives the block as
# recovery writes it (an escaped block restored) in hexdump -C's layout;
# "nothing to replay" for an empty log; --data is never opened; bad filter
# values are usage errors.
. "$SRCDIR/tests/tools/tools.lib"
for t in mke2fs debugfs od; do
	command -v $t > /dev/null 2>&1 || skip "$t not installed"
done

cd "$T" || exit 1
mke2fs -q -F -t ext4 -b 4096 fs.img 32M > /dev/null 2>&1 || die "mke2fs"
head -c 4096 /dev/zero | tr '\0' A > a.blk
head -c 4096 /dev/zero | tr '\0' B > b.blk
{ printf '\300\073\071\230'; head -c 4092 /dev/zero | tr '\0' C; } > m.blk  # needs escaping
"$UJBD" write fs.img --block=3000:a.blk --block=3001:b.blk > /dev/null || die "write 1"
"$UJBD" write fs.img --block=3001:a.blk --revoke=3000 > /dev/null || die "write 2"
"$UJBD" write fs.img --block=3002:b.blk > /dev/null || die "write 3"
"$UJBD" write fs.img --block=3003:m.blk --block=3000:b.blk > /dev/null || die "write 4"

# ---- --block against debugfs logdump -b -----------------------------------------
for b in 3000 3001 3002 3003 3999; do
	debugfs -R "logdump -b $b" fs.img 2> /dev/null | awk '
		/FS block .* logged at sequence/ { s = $7; sub(",", "", s); print s, $3, $10 }
		/^ *Revoke FS block/ { print $9, "R", $4 }' | sort > ld.txt
	"$UJBD" dump fs.img --block=$b --json > d.json || die "dump --block=$b: exit $?"
	jq -r '.transactions[] | .sequence as $s |
		(.blocks[] | "\($s) \(.target) \(.journal_block)"), (.revoked[] | "\($s) R \(.)")' \
		d.json | sort > ud.txt
	diff ld.txt ud.txt >&2 || die "dump --block=$b and debugfs logdump -b $b disagree"
	[ $b != 3000 ] || [ "$(wc -l < ld.txt)" -eq 3 ] || die "logdump -b 3000: $(cat ld.txt)"
done
[ "$(wc -l < ld.txt)" -eq 0 ] || die "block 3999 is in no transaction"
"$UJBD" dump fs.img --block=3000 > d.txt || die "dump --block text"
[ "$(grep -c '^transaction ' d.txt)" -eq 3 ] || die "--block=3000: not 3 transactions: $(cat d.txt)"
grep -q '^    revoke block 3000$' d.txt || die "--block=3000: no revoke line"
grep -q 'block 3001' d.txt && die "--block=3000 shows block 3001"
grep -q '^shown: 3 of 4 transactions$' d.txt || die "--block: no 'shown' line: $(cat d.txt)"

# ---- --tid, --limit ------------------------------------------------------------------
"$UJBD" dump fs.img --tid=2 --json | jq -e '[.transactions[].sequence] == [2] and
	.transactions_total == 4' > /dev/null || die "--tid=2"
"$UJBD" dump fs.img --limit=2 --json | jq -e '[.transactions[].sequence] == [1, 2]' > /dev/null \
	|| die "--limit=2"
"$UJBD" dump fs.img --block=3000 --limit=2 --json | jq -e '[.transactions[].sequence] == [1, 2]' \
	> /dev/null || die "--block=3000 --limit=2 (the limit applies after the filter)"
"$UJBD" dump fs.img --tid=9 > d.txt || die "--tid=9: exit $?"
grep -q '^transaction' d.txt && die "--tid=9 shows a transaction"
grep -q '^shown: 0 of 4 transactions$' d.txt || die "--tid=9: $(cat d.txt)"

# ---- --hex: the block recovery writes ----------------------------------------------
hexof() { od -An -v -tx1 "$1" | tr -d ' \n'; }
"$UJBD" dump fs.img --tid=4 --hex --json > d.json || die "--hex --json"
[ "$(jq -r '.transactions[0].blocks[] | select(.target == 3003) | .data' d.json)" = "$(hexof m.blk)" ] \
	|| die "--hex: the escaped block 3003 is not restored"
[ "$(jq -r '.transactions[0].blocks[] | select(.target == 3000) | .data' d.json)" = "$(hexof b.blk)" ] \
	|| die "--hex: block 3000 of transaction 4"
"$UJBD" dump fs.img --tid=4 --block=3003 --hex > d.txt || die "--hex text"
grep '^      ' d.txt | sed 's/^      //' > hex.txt
if command -v hexdump > /dev/null 2>&1; then
	hexdump -C m.blk | diff - hex.txt >&2 || die "--hex is not hexdump -C's layout"
else
	grep -qx '00000000  c0 3b 39 98 43 43 43 43  43 43 43 43 43 43 43 43  |.;9.CCCCCCCCCCCC|' \
		hex.txt || die "--hex first line: $(head -1 hex.txt)"
fi

# ---- bad filter values ---------------------------------------------------------------
for a in --block=x --block=-1 --tid=4294967296 --limit=0 --limit --hex=1; do
	expect_err 2 dump dump fs.img $a
done

# ---- an empty log: nothing to replay; --data is never opened ------------------------
"$UJBD" format j.jnl --size=1M > /dev/null || die "format"
"$UJBD" dump j.jnl > d.txt || die "dump of an empty journal"
grep -qx 'nothing to replay: the journal is empty' d.txt || die "empty: $(cat d.txt)"
grep -q 'sequences 1 to 0' d.txt && die "empty journal: 'sequences 1 to 0'"
"$UJBD" dump j.jnl --json | jq -e '.end.nothing_to_replay == true' > /dev/null || die "nothing_to_replay"
"$UJBD" dump fs.img --json | jq -e '.end.nothing_to_replay == false' > /dev/null || die "nothing_to_replay false"
"$UJBD" dump j.jnl --data=missing.img > /dev/null || die "dump --data=missing: exit $?"
"$UJBD" info j.jnl --data=missing.img > /dev/null || die "info --data=missing: exit $?"
[ -e missing.img ] && die "--data was created"
# ---- the commit time, as seconds and as a UTC date ---------------------------
cd "$T" || exit 1
"$UJBD" format tm.jnl --size=1M > /dev/null || die "format tm"
truncate -s 1M tm.img
head -c 4096 /dev/zero > tm.blk
"$UJBD" write tm.jnl --data=tm.img --block=3:tm.blk > /dev/null || die "write tm"
"$UJBD" dump tm.jnl > tm.txt || die "dump tm"
grep -Eq "commit block [0-9]+: time [0-9]+\.[0-9]{9} \($(date -u +%Y)-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC\), checksum" tm.txt \
	|| die "dump: commit time without its date: $(grep 'commit block' tm.txt)"
echo "PASS: dump filters agree with debugfs logdump"

#!/bin/sh
# ujbd info: feature and checksum names (not numbers), aligned labels, one
# inclusive convention for the log range in text and JSON, the needs_recovery
# lines, and an external journal device given alone (with its users' UUIDs
# when a file system is attached, checked over a loop device as root).
. "$SRCDIR/tests/tools/tools.lib"

cd "$T" || exit 1
# aligned SRC: every line is "label:" then spaces, the value at column 22
aligned() {
	awk '{ i = index($0, ":"); v = substr($0, i + 1); match(v, /^ +/)
	       if (i == 0 || i + RLENGTH + 1 != 22) { print "misaligned: " $0; bad = 1 } }
	     END { exit bad }' "$1" || die "info $2: labels not aligned: $(cat "$1")"
}

for c in none v1 v2 v3; do
	"$UJBD" format j$c.jnl --size=1M --csum=$c > /dev/null || die "format --csum=$c"
	"$UJBD" info j$c.jnl > i.txt || die "info $c: exit $?"
	"$UJBD" info j$c.jnl --json > i.json || die "info --json $c"
	aligned i.txt $c
	case $c in
	none) want="none" alg=none ;;
	v1) want="v1 (crc32)" alg=crc32 ;;
	*) want="$c (crc32c)" alg=crc32c ;;
	esac
	grep -qx "checksum: *$want" i.txt || die "info $c: checksum line: $(grep checksum i.txt)"
	jq -e --arg c $c --arg a $alg '.checksum == $c and .checksum_algorithm == $a' i.json > /dev/null \
		|| die "info --json $c: checksum keys"
	# one convention: the log's first and last blocks, inclusive
	first=$(jq .first i.json); last=$(jq .last i.json)
	[ "$first" = 1 ] && [ "$last" = 255 ] || die "$c: JSON log $first..$last, want 1..255"
	grep -qx "log: *blocks $first-$last" i.txt || die "$c: text log: $(grep '^log' i.txt)"
done
grep -qx 'features: *revoke csum_v3' i.txt || die "features: $(grep features i.txt)"
jq -e '.features == ["revoke", "csum_v3"]' i.json > /dev/null || die "features JSON"
grep -q 'checksum type' i.txt && die "a checksum type number is printed"

# ---- ext4: the needs_recovery lines, aligned too --------------------------------
if command -v mke2fs > /dev/null 2>&1; then
	mke2fs -q -F -t ext4 -b 4096 fs.img 32M > /dev/null 2>&1 || die "mke2fs"
	head -c 4096 /dev/zero | tr '\0' A > a.blk
	"$UJBD" write fs.img --block=3000:a.blk > /dev/null || die "write"
	"$UJBD" info fs.img > i.txt || die "info fs.img"
	aligned i.txt ext4
	grep -qx 'ext4 needs_recovery: yes' i.txt || die "ext4 needs_recovery line: $(cat i.txt)"
	grep -qx 'needs recovery: *yes (the log is not empty)' i.txt || die "needs recovery line"
	last=$("$UJBD" info fs.img --json | jq .last)
	maxlen=$("$UJBD" info fs.img --json | jq .maxlen)
	[ "$last" -eq $((maxlen - 1)) ] || die "ext4: last $last, maxlen $maxlen"

	# an external journal device, alone
	mke2fs -q -F -O journal_dev -b 4096 jdev.img 8M > /dev/null 2>&1 || die "mke2fs -O journal_dev"
	"$UJBD" info jdev.img > i.txt || die "info of a journal device: exit $?"
	aligned i.txt journal-device
	grep -qx "journal: *'jdev.img' (journal-device)" i.txt || die "journal device: $(head -1 i.txt)"
	"$UJBD" info jdev.img --json | jq -e '.kind == "journal-device" and .first == 2' > /dev/null \
		|| die "journal device JSON"
	if [ "$(id -u)" = 0 ] && L=$(losetup -f --show jdev.img 2> /dev/null); then
		mke2fs -q -F -t ext4 -b 4096 -J device="$L" fs2.img 16M > /dev/null 2>&1
		rc=$?
		losetup -d "$L"
		[ $rc -eq 0 ] || die "mke2fs -J device=$L"
		uuid=$(dumpe2fs -h fs2.img 2> /dev/null | awk '/^Filesystem UUID:/ { print $3 }')
		"$UJBD" info jdev.img > i.txt || die "info of an attached journal device"
		grep -qx "users: *1 ($uuid)" i.txt || die "users line: $(grep users i.txt), want $uuid"
		"$UJBD" info jdev.img --json | jq -e --arg u "$uuid" '.users == [$u]' > /dev/null \
			|| die "users JSON"
		"$UJBD" info fs2.img --journal=jdev.img --json | jq -e '.kind == "ext4-external"' \
			> /dev/null || die "info fs2.img --journal=jdev.img"
	else
		echo "note: no loop device: the users of a journal device not checked"
	fi
fi
echo "PASS: info names features and checksums, aligns labels, one range convention"

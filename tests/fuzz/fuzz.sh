#!/bin/sh
# The fuzz step of `make check`: build fuzz_journal with clang's libFuzzer
# (ASan + UBSan; the library through the Makefile's object rules into
# $BUILD/fuzz-lib, warnings not fatal so other layers' clang warnings
# cannot stop it), replay every input of tests/fuzz/corpus once, then fuzz for
# FUZZ_SECONDS (default 30, at most 60) from that corpus. New inputs go to a
# temp dir, never into the repository; a crash leaves its input under
# $BUILD/fuzz-artifacts/ (keep it in the corpus as a regression once fixed).
# SKIP (77) when clang or its libFuzzer runtime is missing.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRCDIR/build}
secs=${FUZZ_SECONDS:-30}
[ "$secs" -le 60 ] || secs=60

command -v clang >/dev/null 2>&1 || { echo "SKIP: clang not installed"; exit 77; }
out=$BUILD/fuzz-sh
mkdir -p "$out" || exit 1
T=$(mktemp -d /tmp/ujbd-fuzz.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n'\
'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$T/probe.c"
clang -fsanitize=fuzzer,address,undefined -o "$T/probe" "$T/probe.c" >/dev/null 2>&1 \
	|| { echo "SKIP: clang cannot link -fsanitize=fuzzer (libclang-rt-dev missing?)"; exit 77; }

bin=$out/fuzz_journal
lib=$BUILD/fuzz-lib/libujbd.a
# The library, instrumented, through the Makefile's own object rules (so
# rebuilds are incremental and follow header dependencies) into a build dir
# of our own; only the library target, never check: no recursion.
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$SRCDIR" --no-print-directory -j2 BUILD="$BUILD/fuzz-lib" CC=clang \
	CFLAGS="-O1 -g -Wno-error" SAN="-fsanitize=fuzzer-no-link,address,undefined" \
	"$lib" > "$T/make.log" 2>&1 \
	|| { tail -n 30 "$T/make.log"; echo "FAIL: cannot build libujbd with clang"; exit 1; }
if [ ! -x "$bin" ] || [ "$lib" -nt "$bin" ] || [ "$SRCDIR/tests/fuzz/fuzz_journal.c" -nt "$bin" ]; then
	echo "building $bin"
	clang -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -Wall -Wextra -Wno-unused-parameter \
		-I"$SRCDIR/include" -I"$BUILD/fuzz-lib/include" -I"$SRCDIR/src/include" \
		-I"$SRCDIR/src" -I"$SRCDIR/tests" \
		-o "$bin.tmp" "$SRCDIR/tests/fuzz/fuzz_journal.c" "$lib" \
		-luring -lext2fs -lcom_err -lpthread -lm > "$T/cc.log" 2>&1 \
		|| { cat "$T/cc.log"; echo "FAIL: cannot build the fuzzer"; exit 1; }
	mv "$bin.tmp" "$bin"
fi

corpus=$SRCDIR/tests/fuzz/corpus
n=$(ls "$corpus" | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: empty corpus $corpus"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$BUILD/fuzz-artifacts"

echo "replaying $n corpus inputs"
"$bin" -timeout=20 -rss_limit_mb=2048 "$corpus"/* > "$T/replay.log" 2>&1 \
	|| { tail -n 40 "$T/replay.log"; echo "FAIL: a corpus input crashes fuzz_journal"; exit 1; }

echo "fuzzing for ${secs}s"
mkdir "$T/new"
"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$BUILD/fuzz-artifacts/" "$T/new" "$corpus" > "$T/fuzz.log" 2>&1
rc=$?
grep -E '^#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added' "$T/fuzz.log"
if [ $rc -ne 0 ]; then
	tail -n 60 "$T/fuzz.log"
	echo "FAIL: fuzz_journal found a crash (input saved under $BUILD/fuzz-artifacts/)"
	exit 1
fi
echo "PASS: corpus replayed, ${secs}s of fuzzing without a finding"

# The preamble the shell tests share (sourced, not run: tests/run runs
# tests/*/*.sh only, so this file is never taken for a test). Source it as
#     . "${SRCDIR:-.}/tests/lib.sh"
# Environment (set by tests/run via the Makefile): UJBD = the ujbd binary,
# BUILD = the build directory, SRCDIR = the checkout; by hand from the top
# of the checkout the defaults below are the same ones.
set -u
UJBD=${UJBD:-build/ujbd}
BUILD=${BUILD:-build}
SRCDIR=${SRCDIR:-.}

# A test counts its failures in fail and exits with it (exit $fail).
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# SKIP, with the reason: the runner's status 77.
skip() { echo "SKIP: $*"; exit 77; }

# need_ujbd: SKIP unless $UJBD is an executable.
need_ujbd() {
	[ -x "$UJBD" ] || skip "no ujbd binary at $UJBD"
}

# scratch NAME: a fresh directory ${TMPDIR:-/tmp}/NAME.XXXXXX in $tmp,
# removed with all it holds when the test exits.
scratch() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
}

#!/bin/sh
# `ujbd bench` stopped by SIGINT (^C), SIGTERM or SIGHUP removes its run
# directory and files (a 4 MiB journal image here; 32 MiB by default) and
# dies of the signal; a signal the caller ignores stays ignored.
. "$SRCDIR/tests/tools/tools.lib"

env --default-signal=INT true 2> /dev/null || skip "env --default-signal not supported"

# start DIR [ENV ARGS]: an endless bench in $T/DIR, once its files exist.
start() {
	_d=$1
	shift
	mkdir "$T/$_d"
	"$@" "$UJBD" bench fsync-loop --iterations=100000000 \
		--journal-mb=4 --dir="$T/$_d" > /dev/null 2> "$T/$_d.err" &
	pid=$!
	i=0
	until ls "$T/$_d"/ujbd-bench.*/image > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || { kill -9 $pid; die "$_d: no run file after 30 s: $(cat "$T/$_d.err")"; }
		sleep 0.1
	done
	sleep 0.3 # into the timed loop
}

# stop DIR SIG NUMBER: send SIG; the bench dies of it, leaving nothing.
stop() {
	kill -s "$2" $pid
	wait $pid
	rc=$?
	[ $rc -eq $((128 + $3)) ] || die "$1: SIG$2: exit $rc, want $((128 + $3)) (killed by it)"
	[ -z "$(ls -A "$T/$1")" ] || die "$1: SIG$2 left files: $(ls -R "$T/$1")"
}

# A background job of a script has SIGINT ignored: reset, as a terminal's
# ^C finds it.
start int env --default-signal=INT
stop int INT 2
start term
stop term TERM 15
start hup
stop hup HUP 1
# ... and not reset: SIGINT stays ignored, the run goes on
start ignored
kill -s INT $pid
sleep 0.5
kill -0 $pid 2> /dev/null || die "an ignored SIGINT stopped the bench"
ls "$T/ignored"/ujbd-bench.*/image > /dev/null 2>&1 || die "an ignored SIGINT removed the files"
stop ignored TERM 15
echo "PASS: bench removes its files on SIGINT, SIGTERM and SIGHUP"

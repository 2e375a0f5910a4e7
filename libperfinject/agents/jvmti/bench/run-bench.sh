#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What the agent costs a JVM: run bench/Bench.java without the agent and
# with it for each backend, interleaved, and print the medians of: wall
# time, CPU time (user + system, all threads) and each as a ratio to the
# runs without the agent; the CPU time spent in the agent's callbacks as
# its "stats" option reports it, the callbacks, and the time per callback.
# The backends that carry line tables (jitdump and the kernel's) run
# with them, as by default, and without them ("nolines"): the difference
# is what the lines cost.
#
#   bench/run-bench.sh [-n RUNS] [-r ROUNDS] [-p PERF] [-- JVM-OPTION...]
#
# RUNS (default 7) runs of each configuration; ROUNDS (default 20) is
# Bench's argument. JVM options after "--" go to every run, e.g.
# "-- -Xcomp" to have every method executed compiled. The kernel backend
# is measured only where the running kernel has PR_PERF_JIT_CODE; with
# -p, also under PERF record (the series' perf, which asks for the line
# tables: the kernel then checks and writes them), whose time then
# counts in the wall and CPU time.

set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
agent=$here/build/libperfinject-jvmti.so
classes=$here/build/classes
: "${JAVA_HOME:=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
java=$JAVA_HOME/bin/java
runs=7 rounds=20 perf=
while getopts n:r:p: o; do
	case $o in
	n) runs=$OPTARG ;;
	r) rounds=$OPTARG ;;
	p) perf=$OPTARG ;;
	*) sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
jvmopts=("$@")

tmp=$(mktemp -d /tmp/perfinject-jvmti-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

names=("no agent" "registry only" "perfmap" "jitdump" "jitdump nolines")
opts=("" "backends=none" "backends=perfmap,dir=$tmp" "backends=jitdump,dir=$tmp"
	"backends=jitdump,dir=$tmp,nolines")
# With "perf" in $under[I], configuration I runs under perf record.
under=()
# The kernel backend is there if a strict start says so.
if "$java" -agentpath:"$agent"=backends=kernel,strict -version \
	>/dev/null 2>&1; then
	names+=("kernel" "kernel nolines")
	opts+=("backends=kernel" "backends=kernel,nolines")
	if [ -n "$perf" ]; then
		names+=("kernel+perf" "kernel+perf nolines")
		opts+=("backends=kernel" "backends=kernel,nolines")
		under[${#names[@]} - 2]=perf
		under[${#names[@]} - 1]=perf
	fi
elif [ -n "$perf" ]; then
	echo "run-bench.sh: -p: this kernel has no PR_PERF_JIT_CODE" >&2
	exit 2
fi

# run I: one run of configuration I; appends "WALL_US CPU_S AGENT_MS
# CALLBACKS" to $tmp/I. A JVM that fails is run again, twice at most,
# and said: in an emulated guest a JVM dies now and then in its own
# compiled code (SIGILL or SIGSEGV), with the agent or without it.
run() {
	local i=$1 s e agentopt=() agent_ms=0 calls=0 wrap=() try

	[ -n "${opts[$i]}" ] &&
		agentopt=(-agentpath:"$agent=${opts[$i]},quiet,stats")
	[ "${under[$i]:-}" = perf ] &&
		wrap=("$perf" record -q -o "$tmp/perf.data" --)
	for try in 1 2 3; do
		rm -f "$tmp"/perf-*.map "$tmp"/jit-*.dump "$tmp/perf.data"
		s=$(date +%s%N)
		/usr/bin/time -o "$tmp/time" -f '%U %S' "${wrap[@]}" "$java" \
			"${agentopt[@]}" "${jvmopts[@]}" -cp "$classes" Bench \
			"$rounds" >/dev/null 2>"$tmp/err" && break
		echo "run-bench.sh: ${names[$i]}: $(head -n 1 "$tmp/time")" >&2
		grep -m 2 -E '^# +(SIG|Problematic|J )' "$tmp/err" >&2 || true
		[ "$try" = 3 ] && { cat "$tmp/err" >&2; exit 1; }
		retries=$((retries + 1))
	done
	e=$(date +%s%N)
	if [ -n "${opts[$i]}" ]; then
		read -r calls agent_ms < <(sed -n \
			's/.*; \([0-9]*\) callbacks, \([0-9.]*\) ms CPU$/\1 \2/p' \
			"$tmp/err")
	fi
	echo "$(((e - s) / 1000)) $(awk '{ print $1 + $2 }' "$tmp/time")" \
		"${agent_ms:-0} ${calls:-0}" >>"$tmp/$i"
}

retries=0
echo "Bench $rounds, ${jvmopts[*]:-default JVM options}, $runs runs each," \
	"interleaved; $(nproc) CPUs, $(uname -r)"
for ((r = 0; r < runs; r++)); do
	for i in "${!names[@]}"; do run "$i"; done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { awk -v c="$2" '{ print $c }' "$tmp/$1" | median; }
w0=$(col 0 1)
c0=$(col 0 2)
printf '%-19s %8s %6s %8s %6s %10s %9s %8s\n' backend "wall ms" ratio \
	"cpu ms" ratio "agent ms" callbacks "us/call"
for i in "${!names[@]}"; do
	awk -v n="${names[$i]}" -v w="$(col "$i" 1)" -v c="$(col "$i" 2)" \
		-v a="$(col "$i" 3)" -v k="$(col "$i" 4)" -v w0="$w0" \
		-v c0="$c0" 'BEGIN {
		printf "%-19s %8.0f %6.3f %8.0f %6.3f %10.2f %9d %8.2f\n",
			n, w / 1000, w / w0, c * 1000, c / c0, a, k,
			k ? a * 1000 / k : 0 }'
done
[ "$retries" = 0 ] || echo "($retries runs failed and were run again)"

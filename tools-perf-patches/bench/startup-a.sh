#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# startup-a.sh: what the JIT code replay adds to the start-up of a
# system-wide perf record, which looks at every process for a registry.
# Run it in the patched kernel, e.g.
#
#   scripts/vm-run -- tools-perf-patches/bench/startup-a.sh build/perf-build/perf
#
# It starts 40 sleeping shells and 10 Python interpreters that have loaded
# a few C extensions (about 100 processes in all in the test guest), then
# times 'perf record -a -- true' with and without --no-jit-code, three
# times each, interleaved: wall, user and system seconds. The first run
# reads every mapped ELF file cold.

set -u
perf=${1:?usage: startup-a.sh PERF [ROUNDS]}
rounds=${2:-3}
pids=()
for _ in $(seq 40); do
	sleep 600 &
	pids+=($!)
done
for _ in $(seq 10); do
	python3 -c 'import json, ssl, sqlite3, time; time.sleep(600)' &
	pids+=($!)
done
sleep 10
echo "processes: $(ls -d /proc/[0-9]* | wc -l)"
TIMEFORMAT='%R %U %S'
for ((round = 1; round <= rounds; round++)); do
	for mode in replay no-jit-code; do
		args=()
		[ $mode = no-jit-code ] && args=(--no-jit-code)
		t=$({ time "$perf" record -q -a "${args[@]}" -e cpu-clock \
			-o /tmp/startup-a.data -- true >/dev/null 2>&1; } 2>&1)
		echo "round $round, $mode: wall/user/sys s: $t"
	done
done
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
rm -f /tmp/startup-a.data

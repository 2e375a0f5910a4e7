#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The "threads" section of bench/bench.c for the default build and the
# URCU=1 build side by side: both are built (each in its own OBJDIR),
# then run alternately, one round each in turn (the order swapped every
# round), so that a drift of the machine weighs on both alike. Prints
# ratios only: each build's cost per operation over its own 1 thread,
# and URCU=1's over the default's at the same thread count.
#
# Usage: bench/compare-urcu.sh [ROUNDS]   (default 3)
# BENCH_ARGS adds options to bench, e.g. BENCH_ARGS="-n 50000".

set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS]" >&2; exit 2; }
declare -A objdir=([default]=build [urcu]=build-urcu)
declare -A urcu=([default]=0 [urcu]=1)

for v in default urcu; do
	make -s OBJDIR="${objdir[$v]}" URCU="${urcu[$v]}" bench >/dev/null
done

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
load_before=$(uptime)
for ((r = 1; r <= rounds; r++)); do
	order="default urcu"
	((r % 2)) || order="urcu default"
	for v in $order; do
		echo "round $r/$rounds: $v" >&2
		# shellcheck disable=SC2086
		"${objdir[$v]}/bench" -s threads -r 1 -p ${BENCH_ARGS:-} |
			awk -v v="$v" -v r="$r" '$1 == "raw" && $2 == "threads" {
				print v, r, $3, $4, $5 }' >>"$raw"
	done
done
load_after=$(uptime)

echo "bench -s threads, default build and URCU=1, median of $rounds rounds run alternately"
echo "machine: $(nproc) CPUs (nproc); load before: ${load_before##*load average: };" \
	"after: ${load_after##*load average: }"
awk -v rounds="$rounds" -v cpus="$(nproc)" '
function median(key,    n, i, j, t, v) {
	n = 0
	for (i = 1; i <= rounds; i++)
		if ((key, i) in val)
			v[++n] = val[key, i]
	for (i = 2; i <= n; i++)	# insertion sort
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	if (!n)
		return -1
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	# variant round set threads ns-per-op
	x[$1, $2, $3, $4] = $5
	if (!($3 in seen)) { seen[$3] = 1; sets[++nsets] = $3 }
	if (!($4 in seenn)) { seenn[$4] = 1; counts[++ncounts] = $4 }
}
END {
	label["shared"] = "(a) one handle, load+unload"
	label["own"] = "(b) a handle each, load+unload"
	label["finds"] = "(c) finds, 1 thread writing"
	one = counts[1]; last = counts[ncounts]
	for (s = 1; s <= nsets; s++) {
		set = sets[s]
		for (c = 1; c <= ncounts; c++) {
			n = counts[c]
			for (r = 1; r <= rounds; r++) {
				if (!(("default", r, set, n) in x) ||
				    !(("urcu", r, set, n) in x))
					continue
				val["default" SUBSEP set SUBSEP n, r] = \
					x["default", r, set, n] / x["default", r, set, one]
				val["urcu" SUBSEP set SUBSEP n, r] = \
					x["urcu", r, set, n] / x["urcu", r, set, one]
				val["cross" SUBSEP set SUBSEP n, r] = \
					x["urcu", r, set, n] / x["default", r, set, n]
			}
		}
	}
	printf "\nper operation, over 1 thread of the same build (lower is better)\n"
	printf "%-31s %-15s", "", ""
	for (c = 1; c <= ncounts; c++)
		printf " %3d thr", counts[c]
	printf "  %d thr <= 2x 1\n", last
	rows = "default urcu cross"
	split(rows, row, " ")
	rowname["default"] = "default"
	rowname["urcu"] = "URCU=1"
	rowname["cross"] = "URCU=1/default"
	for (s = 1; s <= nsets; s++) {
		set = sets[s]
		for (k = 1; k <= 3; k++) {
			printf "%-31s %-15s", k == 1 ? label[set] : "", rowname[row[k]]
			for (c = 1; c <= ncounts; c++)
				printf " %7.2f", median(row[k] SUBSEP set SUBSEP counts[c])
			if (k < 3) {
				m = median(row[k] SUBSEP set SUBSEP last)
				printf "  %s", m <= 2 ? "met" : "MISSED"
			}
			printf "\n"
		}
	}
	printf "\nURCU=1/default: URCU=1 over the default build at the same thread count, per\n"
	printf "operation (below 1: URCU=1 is faster). With %d CPUs, threads that never wait\n", cpus
	printf "for each other read 1/%d from %d threads on; past %d threads this measures\n", cpus, cpus, cpus
	printf "contention, not parallelism.\n"
}' "$raw"

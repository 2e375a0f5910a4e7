#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# run.sh MAPLINES BRIDGE [ROUNDS]: what the bridge adds to a JIT's perf
# map and jitdump writes. Each figure is the median of ROUNDS (default
# 5) runs of maplines, without and with the bridge preloaded, taken in
# turn so that both see the same machine; the ratio is with / without.
# The bridge's libperfinject sends to the kernel where the kernel has the
# JIT code records (then the figure includes the prctl), else it keeps
# the registry only.

maplines=$1 bridge=$2 rounds=${3:-5}
[ -x "$maplines" ] && [ -r "$bridge" ] ||
	{ echo "usage: $0 MAPLINES BRIDGE [ROUNDS]" >&2; exit 2; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-44s %10s %10s %7s\n' "ns per entry, median of $rounds" without with ratio
row() {
	local what=$1 i a b
	shift
	a=() b=()
	for i in $(seq "$rounds"); do
		a+=("$("$maplines" "$@")") || exit 1
		b+=("$(LD_PRELOAD=$bridge "$maplines" "$@" 2>/dev/null)") || exit 1
	done
	a=$(printf '%s\n' "${a[@]}" | median)
	b=$(printf '%s\n' "${b[@]}" | median)
	printf '%-44s %10s %10s %6.2fx\n' "$what" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
}
row "perf map, 200,000 lines, 1,000 places" -n 200000 -s 1000
row "perf map, 200,000 lines, all live" -n 200000 -s 200000
row "jitdump, 200,000 records, 1,000 places" -j -n 200000 -s 1000
row "jitdump, 200,000 records, all live" -j -n 200000 -s 200000

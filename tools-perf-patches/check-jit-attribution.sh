#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-jit-attribution.sh LOG PERF_DATA [PERF [FROM]]
#
# Compare every sample in JIT code in PERF_DATA with the ground-truth LOG
# of libperfinject's jitdemo (-l LOG: "tid start_ns end_ns 0xaddr len name"
# on CLOCK_MONOTONIC), and print the fraction named after the function
# that ran there at the time. PERF_DATA must be recorded with -k mono, so
# that the sample times are on the log's clock. Exits 0 when at least 90%
# of the checked samples are right, as the perf test
# tools/perf/tests/shell/record_jit_code.sh does. FROM (seconds, as perf
# script prints times) leaves out the samples before it.

[ $# -ge 2 ] || { sed -n '3,13s/^# \{0,1\}//p' "$0" >&2; exit 2; }
log=$1
data=$2
perf=${3:-perf}
from=${4:-0}

"$perf" script -i "$data" -F tid,time,ip,sym --ns 2>/dev/null |
awk -v from="$from" '
BEGIN {
	split(from, f, ".")
	from_ns = f[1] * 1000000000 + f[2]
}
function hex(s,    i, n) {
	s = tolower(s)
	sub(/^0x/, "", s)
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}
FNR == NR {
	if ($1 ~ /^#/)
		next
	n++
	tid[n] = $1; start[n] = $2; end[n] = $3
	addr[n] = hex($4); len[n] = $5; name[n] = $6
	next
}
{
	split($2, t, /[.:]/)
	ns = t[1] * 1000000000 + t[2]
	if (ns < from_ns)
		next
	samples++
	ip = hex($3)
	injit = 0
	for (i = 1; i <= n; i++) {
		if ($1 != tid[i] || ip < addr[i] || ip >= addr[i] + len[i])
			continue
		injit = 1
		if (ns < start[i] || ns > end[i])
			continue
		checked++
		if ($4 == name[i])
			right++
		else if (wrong++ < 10)
			print "wrong: " $0 " expected " name[i]
	}
	jit += injit
}
END {
	printf "samples: %d, in JIT code: %d, in a logged interval: %d, named right: %d (%.2f%%)\n",
	       samples, jit, checked, right, checked ? 100 * right / checked : 0
	exit !(checked > 0 && right >= checked * 0.9)
}' "$log" -

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-jit-insn.sh LOG PERF_DATA [PERF]
#
# LOG is the log of libperfinject's jitdemo (-l), whose "# code TID NAME
# HEX" lines give the bytes of each function a thread compiled, and
# PERF_DATA a recording of it made with --jit-code-bytes. perf script -F
# insn must show, for every sample in a logged function, the bytes of the
# instruction at the sample's address in that function: the code that
# ran there then, also where the address held other code before or
# after.
#
# Prints up to 5 wrong samples, then "samples in logged functions: N,
# with the right instruction bytes: R, without any: M". Exits 0 when all
# N are right and N is 50 or more.

[ $# -ge 2 ] || { sed -n '3,16s/^# \{0,1\}//p' "$0" >&2; exit 2; }
log=$1 data=$2 perf=${3:-perf}

"$perf" script -i "$data" -G -F tid,ip,sym,symoff,insn 2>/dev/null | awk '
function hex(s,    i, n) {
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}
FNR == NR {
	if ($1 == "#" && $2 == "code")
		code[$3 " " $4] = $5
	next
}
{
	for (i = 2; i <= NF; i++)
		if ($i ~ /\+0x[0-9a-f]+$/)
			break
	if (i > NF)
		next
	at = index($i, "+0x")
	key = $1 " " substr($i, 1, at - 1)
	if (!(key in code))
		next
	n++
	off = hex(substr($i, at + 3))
	got = ""
	for (j = i + 1; j <= NF; j++)
		if ($j == "insn:")
			break
	for (j++; j <= NF; j++)
		got = got $j
	if (got == "") {
		missing++
		if (shown++ < 5)
			print "no instruction bytes: " $0
		next
	}
	if (got == substr(code[key], 2 * off + 1, length(got)))
		right++
	else if (shown++ < 5)
		print "wrong bytes: " $0 " (the code there: " \
		      substr(code[key], 2 * off + 1, length(got)) ")"
}
END {
	printf "samples in logged functions: %d, with the right instruction bytes: %d, without any: %d\n",
	       n, right, missing
	exit !(n >= 50 && right == n)
}' "$log" -

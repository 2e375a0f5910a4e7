#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-jit-callchains.sh LOG PERF_DATA [PERF [MIN]]
#
# Check the call chains of PERF_DATA, a recording of libperfinject's
# jitdemo -s with -g (frame pointers) and -k mono, against its ground-
# truth LOG (-l). In jitdemo -s, the thread's jit:run calls the function
# of the moment (jit:alpha, ...), which calls jit:mix; the functions
# reuse a few code slots. Two checks:
#
#   - every frame of every chain whose address is in a logged range at
#     the sample's time is named after that range's function (a caller's
#     return address is looked up one byte back, in its call);
#   - every sample whose leaf is in JIT code, outside the instructions
#     where a frame-pointer walk cannot see the caller (before
#     "mov rbp, rsp" and after "pop rbp"), has the whole chain: jit:mix,
#     then the logged function, then jit:run, and worker_main below.
#
# The same holds for a DWARF-unwound recording (--call-graph dwarf) of
# jitdemo -s -o, whose frames have no frame pointer but CFI.
#
# Prints one summary line; exits 0 when every checked frame is right,
# every checked chain whole, and there are at least MIN (100) of each.

[ $# -ge 2 ] || { sed -n '3,23s/^# \{0,1\}//p' "$0" >&2; exit 2; }
log=$1
data=$2
perf=${3:-perf}
min=${4:-100}

"$perf" script -i "$data" -F tid,time,ip,sym --ns 2>/dev/null |
awk -v min="$min" '
function hex(s,    i, n) {
	s = tolower(s)
	sub(/^0x/, "", s)
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}
# The logged interval of thread @t holding @ip at @ns: its index, or 0.
function lookup(t, ip, ns,    i) {
	for (i = 1; i <= n; i++)
		if (t == tid[i] && ip >= addr[i] && ip < addr[i] + len[i] &&
		    ns >= start[i] && ns <= end[i])
			return i
	return 0
}
function check(    j, iv, ip, off, want) {
	if (!nf)
		return
	samples++
	for (j = 1; j <= nf; j++) {
		ip = fip[j] - (j > 1)
		iv = lookup(stid, ip, sns)
		if (!iv)
			continue
		frames++
		if (fsym[j] == name[iv])
			right++
		else if (wrong++ < 10)
			print "wrong frame " j ": " fsym[j] " at " sprintf("%#x", fip[j]) \
			      " (tid " stid ", " sprintf("%.0f", sns) " ns), expected " name[iv]
	}
	iv = lookup(stid, fip[1], sns)
	if (!iv)
		return
	off = fip[1] - addr[iv]
	if (off < 4 || off >= len[iv] - 1)
		return
	chains++
	# What the chain must hold, from the leaf down.
	j = 1
	if (name[iv] == "jit:mix") {
		iv = lookup(stid, fip[2] - 1, sns)
		if (!iv || name[iv] == "jit:run" || name[iv] == "jit:mix" ||
		    fsym[2] != name[iv]) {
			broken("no function calling jit:mix")
			return
		}
		j = 2
	}
	if (name[iv] != "jit:run") {
		j++
		if (fsym[j] != "jit:run") {
			broken("no jit:run calling " name[iv])
			return
		}
	}
	for (j++; j <= nf; j++)
		if (fsym[j] == "worker_main") {
			whole++
			return
		}
	broken("no worker_main below jit:run")
}
function broken(why,    j, s) {
	if (bad++ >= 10)
		return
	s = ""
	for (j = 1; j <= nf; j++)
		s = s " " fsym[j]
	print "broken chain (" why "), tid " stid " at " sprintf("%.0f", sns) " ns:" s
}
FNR == NR {
	if ($1 ~ /^#/)
		next
	n++
	tid[n] = $1; start[n] = $2; end[n] = $3
	addr[n] = hex($4); len[n] = $5; name[n] = $6
	next
}
/^ *[0-9]+ +[0-9]+\.[0-9]+: *$/ {
	check()
	stid = $1
	split($2, t, /[.:]/)
	sns = t[1] * 1000000000 + t[2]
	nf = 0
	next
}
NF >= 2 && $1 ~ /^[0-9a-f]+$/ {
	if ($NF == "(inlined)")
		next
	nf++
	fip[nf] = hex($1)
	fsym[nf] = $2
}
END {
	check()
	printf "samples: %d, JIT frames in a logged interval: %d, named right: %d; chains from a JIT leaf: %d, whole: %d\n",
	       samples, frames, right, chains, whole
	exit !(frames >= min && right == frames && chains >= min && whole == chains)
}' "$log" -

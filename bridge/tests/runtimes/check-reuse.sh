#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-reuse.sh LOG MAP PERF_DATA PERF
#
# Judges the names perf gave the samples of reuse.js.
#
#   LOG        reuse.js's log: "TID START_NS END_NS gen_<n>" per interval
#   MAP        the perf map reuse.js's node wrote (/tmp/perf-PID.map, saved)
#   PERF_DATA  a `perf record -k mono` of that run
#   PERF       the perf binary to run `script` with
#
# A sample counts as checked when its time lies in a logged interval of its
# own tid, and its ip inside one of the ranges MAP gives for that
# interval's function gen_<n> (any tier: JS:*, JS:^, JS:+, JS:~). It is
# right when its symbol holds the token gen_<n> exactly (gen_1, not gen_10),
# unnamed when perf gave it no symbol, and wrong otherwise. The last line
# printed is
#
#   checked: N, right: N (P%), wrong: N, unnamed: N
#
# preceded by the first 10 wrong samples. The exit status is 0 whatever the
# figures (the caller judges them), 2 when the input is unusable.

set -u

if [ $# -ne 4 ]; then
	echo "usage: $0 LOG MAP PERF_DATA PERF" >&2
	exit 2
fi
log=$1 map=$2 data=$3 perf=$4

for f in "$log" "$map" "$data"; do
	if [ ! -r "$f" ] || [ ! -s "$f" ]; then
		echo "check-reuse: $f: missing or empty" >&2
		exit 2
	fi
done

err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT

# sym is everything after ip, spaces included. -G: one line per sample
# even when the recording has call chains.
"$perf" script -i "$data" -F tid,time,ip,sym --ns -G 2>"$err" |
awk -v LOG="$log" -v MAP="$map" '
function hex(s,    i, c, v, d) {
	s = tolower(s)
	sub(/^0x/, "", s)
	if (s == "" || s ~ /[^0-9a-f]/)
		return -1
	v = 0
	for (i = 1; i <= length(s); i++) {
		d = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + d
	}
	return v
}

# Nanoseconds relative to base seconds, exact in a double: SEC and NS
# (nine digits) are strings.
function rel(sec, ns) {
	return (sec - base) * 1000000000 + ns
}

# The gen_<n> token of a name, or "".
function gentoken(name,    t) {
	if (!match(name, /(^|[^A-Za-z0-9_$])gen_[0-9]+([^A-Za-z0-9_$]|$)/))
		return ""
	t = substr(name, RSTART, RLENGTH)
	sub(/^[^g]*/, "", t)
	sub(/[^0-9]$/, "", t)
	return t
}

function hastoken(name, tok,    rest, p, before, after) {
	rest = name
	while ((p = index(rest, tok)) > 0) {
		before = p > 1 ? substr(rest, p - 1, 1) : ""
		after = substr(rest, p + length(tok), 1)
		if (before !~ /[A-Za-z0-9_$]/ && after !~ /[A-Za-z0-9_$]/)
			return 1
		rest = substr(rest, p + 1)
	}
	return 0
}

BEGIN {
	# The log: intervals per tid, in start order.
	nlog = 0
	while ((r = (getline line < LOG)) > 0) {
		nf = split(line, f, " ")
		if (nf != 4 || f[1] !~ /^[0-9]+$/ || f[2] !~ /^[0-9]+$/ ||
		    f[3] !~ /^[0-9]+$/ || f[4] !~ /^gen_[0-9]+$/ ||
		    length(f[2]) < 10 || length(f[3]) < 10)
			continue
		if (nlog == 0)
			base = substr(f[2], 1, length(f[2]) - 9) + 0
		s = rel(substr(f[2], 1, length(f[2]) - 9), substr(f[2], length(f[2]) - 8))
		e = rel(substr(f[3], 1, length(f[3]) - 9), substr(f[3], length(f[3]) - 8))
		if (e < s)
			continue
		k = ++icount[f[1]]
		istart[f[1], k] = s
		iend[f[1], k] = e
		iname[f[1], k] = f[4]
		nlog++
	}
	if (r < 0 || nlog == 0) {
		print "check-reuse: " LOG ": no intervals" > "/dev/stderr"
		bad = 1
		exit 2
	}
	# Logged in order; sort each tid by start anyway (insertion sort,
	# a few hundred intervals).
	for (t in icount)
		for (i = 2; i <= icount[t]; i++)
			for (j = i; j > 1 && istart[t, j - 1] > istart[t, j]; j--) {
				x = istart[t, j]; istart[t, j] = istart[t, j - 1]; istart[t, j - 1] = x
				x = iend[t, j]; iend[t, j] = iend[t, j - 1]; iend[t, j - 1] = x
				x = iname[t, j]; iname[t, j] = iname[t, j - 1]; iname[t, j - 1] = x
			}

	# The map: every range of every gen_<n>, whatever the tier.
	nmap = 0
	while ((r = (getline line < MAP)) > 0) {
		if (!match(line, /^[0-9A-Fa-fxX]+ [0-9A-Fa-fxX]+ /))
			continue
		split(line, f, " ")
		name = substr(line, RLENGTH + 1)
		tok = gentoken(name)
		if (tok == "")
			continue
		a = hex(f[1]); l = hex(f[2])
		if (a < 0 || l <= 0)
			continue
		k = ++rcount[tok]
		rstart[tok, k] = a
		rend[tok, k] = a + l
		nmap++
	}
	if (r < 0 || nmap == 0) {
		print "check-reuse: " MAP ": no gen_<n> ranges" > "/dev/stderr"
		bad = 1
		exit 2
	}
}

# "  TID SEC.NSEC:  IP SYM"
{
	line = $0
	if (!match(line, /^[ \t]*[0-9]+[ \t]+[0-9]+\.[0-9]+:[ \t]+[0-9a-fA-F]+/))
		next
	nsamples++
	head = substr(line, 1, RLENGTH)
	sym = substr(line, RLENGTH + 1)
	sub(/^[ \t]+/, "", sym)
	sub(/[ \t]+$/, "", sym)
	split(head, f, /[ \t]+/)
	if (f[1] == "") { tid = f[2]; tm = f[3]; ip = f[4] } else { tid = f[1]; tm = f[2]; ip = f[3] }
	if (!(tid in icount))
		next
	sub(/:$/, "", tm)
	split(tm, p, ".")
	ns = p[2]
	while (length(ns) < 9)
		ns = ns "0"
	t = rel(p[1], substr(ns, 1, 9))

	# The interval that contains t: the last one starting at or before t.
	lo = 1; hi = icount[tid]; k = 0
	while (lo <= hi) {
		mid = int((lo + hi) / 2)
		if (istart[tid, mid] <= t) { k = mid; lo = mid + 1 } else hi = mid - 1
	}
	if (k == 0 || t > iend[tid, k])
		next
	want = iname[tid, k]
	a = hex(ip)
	inside = 0
	for (i = 1; i <= rcount[want]; i++)
		if (a >= rstart[want, i] && a < rend[want, i]) { inside = 1; break }
	if (!inside)
		next

	checked++
	if (hastoken(sym, want))
		right++
	else if (sym == "" || sym == "[unknown]")
		unnamed++
	else {
		wrong++
		if (wrong <= 10)
			printf "wrong: tid %s time %s ip %s expected %s got %s\n", tid, tm, ip, want, sym
	}
}

END {
	if (bad)
		exit 2
	if (nsamples == 0) {
		print "check-reuse: perf script gave no samples" > "/dev/stderr"
		exit 2
	}
	printf "checked: %d, right: %d (%.1f%%), wrong: %d, unnamed: %d\n", checked, right,
	       checked ? 100 * right / checked : 0, wrong, unnamed
}
'
st=("${PIPESTATUS[@]}")
if [ "${st[0]}" -ne 0 ]; then
	echo "check-reuse: $perf script failed:" >&2
	cat "$err" >&2
	exit 2
fi
[ "${st[1]}" -eq 0 ] || exit 2
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-tests.sh [PERF]: robustness and cross-endian tests of how perf reads
# PERF_RECORD_JIT_CODE records.
#
# Builds gen-jit-cases, writes every case in the host's byte order and in
# the other one, and runs each file through
#
#   perf report --stdio -n --sort sym
#   perf script -F ip,sym
#   perf script --show-jit-code-events -F ip,sym
#   perf script -F ip,dso               (cases that say a sample's dso)
#   perf annotate --stdio [SYM]         (cases with JIT samples)
#
# each under timeout. Checks: no crash (signal) or hang, exit status 0,
# the expected warnings on stderr and no unexpected ones, every sample
# named as expected (perf script), in the expected dso, and the symbol
# counts (perf report), perf annotate's reason why it cannot disassemble
# JIT code once a process, the expected lines of
# --show-jit-code-events, the source lines of samples in JIT code with a
# line table, no control bytes and
# only valid UTF-8 in any output, and the same outputs from both byte
# orders. Prints PASS:/FAIL: per check and a summary; exits 1 if any
# check failed.
#
# PERF defaults to build/perf-build/perf; a copy is used, as it may be
# rebuilt meanwhile. Environment: UAPI, a dir with the patched
# linux/perf_event.h (found in build/ by default); TIMEOUT, seconds per
# perf run (60); CASES, the cases to run (all, see gen-jit-cases -l);
# KEEP=1 keeps the work dir with the files and outputs.

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
perf_src=${1:-$top/build/perf-build/perf}
timeout_s=${TIMEOUT:-60}

die() { echo "run-tests: $*" >&2; exit 2; }

[ -x "$perf_src" ] || die "no perf at $perf_src"
uapi=${UAPI:-}
if [ -z "$uapi" ]; then
	for d in "$top/build/linux-tools/tools/include/uapi" \
		 "$top/build/headers/usr/include"; do
		if grep -qs PERF_RECORD_JIT_CODE "$d/linux/perf_event.h"; then
			uapi=$d
			break
		fi
	done
	[ -n "$uapi" ] || die "no patched linux/perf_event.h found, set UAPI"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/jit-tests.XXXXXX")
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then
		echo "run-tests: files and outputs kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

perf=$work/perf
cp "$perf_src" "$perf" || die "cannot copy $perf_src"
cc -O2 -Wall -Wextra -Werror -I"$uapi" -o "$work/gen-jit-cases" \
	"$here/gen-jit-cases.c" || die "cannot build gen-jit-cases"

# A pid that no process has and no perf map names: a /tmp/perf-PID.map
# would name the samples in the anonymous code heap.
pid=4242
while [ -e /proc/$pid ] || [ -e /tmp/perf-$pid.map ]; do
	pid=$((pid + 1))
done

cases=${CASES:-$("$work/gen-jit-cases" -l)}
mkdir -p "$work/data" "$work/home"
# shellcheck disable=SC2086
"$work/gen-jit-cases" -p "$pid" "$work/data" $cases || die "gen-jit-cases failed"

export PERF_CONFIG=/dev/null HOME=$work/home PAGER=cat
export LC_ALL=C.UTF-8 2>/dev/null || export LC_ALL=C

npass=0
nfail=0
pass() { echo "PASS: $*"; npass=$((npass + 1)); }
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# run NAME ARGS...: perf ARGS into $res/NAME.{out,err,rc,time}
run() {
	local name=$1 start end
	shift
	start=$(date +%s%N)
	timeout -k 5 "$timeout_s" "$perf" "$@" >"$res/$name.out" 2>"$res/$name.err"
	echo $? >"$res/$name.rc"
	end=$(date +%s%N)
	echo $(((end - start) / 1000000)) >"$res/$name.time"
}

check_exit() {
	local what=$1 name=$2 rc ms
	rc=$(cat "$res/$name.rc")
	ms=$(cat "$res/$name.time")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "$what: hang, killed after ${timeout_s}s"
	elif [ "$rc" -ge 128 ]; then
		fail "$what: crash, signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
	elif [ "$rc" != 0 ]; then
		fail "$what: exit status $rc: $(head -c 300 "$res/$name.err" | tr '\n' ' ')"
	else
		pass "$what: exit 0, no crash or hang (${ms} ms)"
	fi
}

check_warnings() {
	local what=$1 name=$2 kind text
	while IFS=$'\t' read -r kind text; do
		case $kind in
		warn)
			if grep -qF -- "$text" "$res/$name.err"; then
				pass "$what: warns '$text'"
			else
				fail "$what: no warning '$text' on stderr, got: $(head -c 300 "$res/$name.err" | tr '\n' ' ')"
			fi ;;
		nowarn)
			if grep -qF -- "$text" "$res/$name.err"; then
				fail "$what: unexpected '$text' on stderr: $(grep -F -- "$text" "$res/$name.err" | head -c 300)"
			else
				pass "$what: nothing about '$text' on stderr"
			fi ;;
		esac
	done <"$expect"
}

# Raw control bytes (but newline) or invalid UTF-8 from a name would act
# on the terminal.
check_printable() {
	local what=$1 name=$2 f bad=
	for f in "$res/$name.out" "$res/$name.err"; do
		if LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$f"; then
			bad="$bad $(basename "$f"): control bytes, e.g. $(LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$f" | head -1 | head -c 120 | od -An -c | tr -s ' \n' ' ');"
		fi
		if ! iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1; then
			bad="$bad $(basename "$f"): not valid UTF-8;"
		fi
	done
	if [ -z "$bad" ]; then
		pass "$what: output printable"
	else
		fail "$what: output not sanitised:$bad"
	fi
}

# Each sample, in time order, named as expected ("-": anything).
check_samples() {
	local what=$1 name=$2 msg
	msg=$(awk -F'\t' '
	FNR == NR {
		if ($1 == "sample") { n++; ip[n] = $2; sym[n] = $3 }
		next
	}
	{
		sub(/^ +/, "")
		i = index($0, " ")
		m++
		gip = i ? substr($0, 1, i - 1) : $0
		gsym = i ? substr($0, i + 1) : ""
		if (m > n) { extra++; next }
		if (gip != ip[m] || (sym[m] != "-" && gsym != sym[m])) {
			if (!bad++)
				first = "sample " m ": got \"" substr(gip " " gsym, 1, 100) \
					"\", expected \"" substr(ip[m] " " sym[m], 1, 100) "\""
		}
	}
	END {
		if (m < n) printf "%d samples, expected %d; ", m, n
		if (extra) printf "%d samples more than expected; ", extra
		if (bad) printf "%d named wrong, first %s", bad, first
	}' "$expect" "$res/$name.out")
	if [ -z "$msg" ]; then
		pass "$what: all $(grep -c '^sample' "$expect") samples named right"
	else
		fail "$what: $msg"
	fi
}

# The dso of each sample that the case gives one: "jit" is the process's
# "[JIT] tid N", "heap" the code heap's anonymous mapping (perf calls it
# //anon, or /tmp/perf-N.map when the pid exists here).
check_dsos() {
	local what=$1 name=$2 msg
	msg=$(awk -F'\t' '
	FNR == NR {
		if ($1 == "sample") { n++; dso[n] = $4 }
		next
	}
	{
		sub(/^ +/, "")
		m++
		if (dso[m] == "") next
		checked++
		i = index($0, " (")
		gip = i ? substr($0, 1, i - 1) : $0
		got = i ? substr($0, i + 2) : ""
		sub(/\)$/, "", got)
		want = dso[m]
		if (want == "jit") ok = got ~ /^\[JIT\] tid [0-9]+$/
		else if (want == "heap") ok = got == "//anon" || got ~ /^\/tmp\/perf-[0-9]+\.map$/
		else ok = got == want
		if (!ok && !bad++)
			first = "sample " m " at " gip ": dso \"" substr(got, 1, 80) \
				"\", expected " want
	}
	END {
		if (m < n) printf "%d samples, expected %d; ", m, n
		if (bad) printf "%d in the wrong dso, first %s", bad, first
		else if (!checked) printf "no sample checked"
	}' "$expect" "$res/$name.out")
	if [ -z "$msg" ]; then
		pass "$what: every sample in the expected dso"
	else
		fail "$what: $msg"
	fi
}

# The source line of each sample that has one expected (perf script -F
# ip,srcline prints the ip, then the line under it).
check_srclines() {
	local what=$1 name=$2 msg
	msg=$(awk -F'\t' '
	FNR == NR {
		if ($1 == "srcline") { n++; ip[n] = $2; want[n] = $3 }
		next
	}
	/^ *[0-9a-f]+ *$/ { at = $0; gsub(/ /, "", at); next }
	at != "" { gsub(/^ +| +$/, ""); got[at] = $0; at = "" }
	END {
		for (i = 1; i <= n; i++)
			if (got[ip[i]] != want[i])
				printf "%s: \"%s\", expected \"%s\"; ", ip[i],
					substr(got[ip[i]], 1, 60), want[i]
	}' "$expect" "$res/$name.out")
	if [ -z "$msg" ]; then
		pass "$what: every sample at its line ($(grep -c '^srcline' "$expect"))"
	else
		fail "$what: $msg"
	fi
}

# The sample count of each symbol; perf report may list a name twice,
# for two places, so add them up.
check_report() {
	local what=$1 name=$2 msg
	msg=$(awk -F'\t' '
	FNR == NR {
		if ($1 != "sample") next
		if ($3 == "-") any = 1
		else if ($3 != "[unknown]") want[$3]++
		next
	}
	/^ +[0-9.]+% +[0-9]+ +\[.\] / {
		line = $0
		sub(/^ +[0-9.]+% +/, "", line)
		cnt = line + 0
		sub(/^[0-9]+ +\[.\] /, "", line)
		sub(/ +$/, "", line)
		got[line] += cnt
	}
	END {
		for (s in want)
			if (got[s] != want[s])
				msg = msg sprintf("%s: %d samples, expected %d; ",
						  substr(s, 1, 60), got[s], want[s])
		for (s in got)
			if (!(s in want) && s !~ /^0x[0-9a-f]+$/ && !any)
				msg = msg sprintf("unexpected symbol %s (%d samples); ",
						  substr(s, 1, 60), got[s])
		printf "%s", msg
	}' "$expect" "$res/$name.out")
	if [ -z "$msg" ]; then
		pass "$what: symbol counts right"
	else
		fail "$what: $msg"
	fi
}

check_show() {
	local what=$1 name=$2 kind text
	while IFS=$'\t' read -r kind text; do
		[ "$kind" = show ] || continue
		if grep -qF -- "$text" "$res/$name.out"; then
			pass "$what: shows '${text:0:100}'"
		else
			fail "$what: no '${text:0:100}' in the output"
		fi
	done <"$expect"
}

# same WHAT FILE1 FILE2
same() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1: $(diff "$2" "$3" | head -4 | cut -c1-120 | tr '\n' ' ')"
	fi
}

for c in $cases; do
	expect=$work/data/$c.expect
	for order in native swapped; do
		if [ $order = native ]; then
			file=$work/data/$c.data
		else
			file=$work/data/$c.swapped.data
		fi
		res=$work/out/$c.$order
		mkdir -p "$res"

		run report report -i "$file" --stdio -n --sort sym
		run script script -i "$file" -F ip,sym
		run show script -i "$file" --show-jit-code-events -F ip,sym

		for r in report script show; do
			what="$c ($order) $r"
			check_exit "$what" $r
			check_warnings "$what" $r
			check_printable "$what" $r
		done
		check_samples "$c ($order) script" script
		# perf annotate of a JIT function that samples hit (it filters
		# the others out, and must leave their symbols alone): the
		# reason it cannot disassemble it (no bytes recorded), once.
		sym=$(awk -F'\t' '$1 == "sample" && $3 ~ /^jit::/ { print $3; exit }' "$expect")
		if [ -n "$sym" ]; then
			run annotate annotate -i "$file" --stdio "$sym"
			check_exit "$c ($order) annotate $sym" annotate
			n=$(grep -c 'is JIT code whose bytes were not recorded' "$res/annotate.out" "$res/annotate.err" |
				awk -F: '{ n += $NF } END { print n }')
			if [ "$n" = 1 ]; then
				pass "$c ($order) annotate $sym: says once why it cannot"
			else
				fail "$c ($order) annotate $sym: the reason $n times, want once"
			fi
			# and of all of them: once a process (the fork case has
			# two), not once a function
			run annotate-all annotate -i "$file" --stdio
			check_exit "$c ($order) annotate" annotate-all
			n=$(grep -c 'is JIT code whose bytes were not recorded' \
				"$res/annotate-all.out" "$res/annotate-all.err" |
				awk -F: '{ n += $NF } END { print n }')
			if [ "$n" -ge 1 ] && [ "$n" -le 2 ]; then
				pass "$c ($order) annotate: says why it cannot once a process ($n)"
			else
				fail "$c ($order) annotate: the reason $n times, want once a process"
			fi
		fi
		if awk -F'\t' '$1 == "sample" && $4 != "" { f = 1 } END { exit !f }' "$expect"; then
			run dso script -i "$file" -F ip,dso
			check_exit "$c ($order) script -F ip,dso" dso
			check_dsos "$c ($order) script -F ip,dso" dso
		fi
		if grep -q '^srcline' "$expect"; then
			run srcline script -i "$file" -F ip,srcline
			check_exit "$c ($order) script -F ip,srcline" srcline
			check_srclines "$c ($order) script -F ip,srcline" srcline
		fi
		check_report "$c ($order) report" report
		check_show "$c ($order) show" show
	done

	# The other byte order must make no difference.
	n=$work/out/$c.native
	s=$work/out/$c.swapped
	same "$c: report same in both byte orders" "$n/report.out" "$s/report.out"
	same "$c: script same in both byte orders" "$n/script.out" "$s/script.out"
	same "$c: JIT code events same in both byte orders" "$n/show.out" "$s/show.out"
	same "$c: warnings same in both byte orders" "$n/script.err" "$s/script.err"
done

# Every field of the samples and of the header, for the well formed file.
# shellcheck disable=SC2086
if printf '%s\n' $cases | grep -qx valid; then
	n=$work/out/valid.native
	s=$work/out/valid.swapped
	res=$n
	run fields script -i "$work/data/valid.data" -F pid,tid,time,ip,sym,period --ns
	run header report -i "$work/data/valid.data" --header-only
	res=$s
	run fields script -i "$work/data/valid.swapped.data" -F pid,tid,time,ip,sym,period --ns
	run header report -i "$work/data/valid.swapped.data" --header-only
	check_exit "valid (swapped) script -F pid,tid,time,.." fields
	res=$n
	check_exit "valid (native) script -F pid,tid,time,.." fields
	if grep -q "^ *$pid/$((pid + 1)) " "$n/fields.out"; then
		pass "valid (native): samples of pid/tid $pid/$((pid + 1))"
	else
		fail "valid (native): no samples of pid/tid $pid/$((pid + 1))"
	fi
	same "valid: sample pid, tid, time, ip, period same in both byte orders" \
		"$n/fields.out" "$s/fields.out"
	grep -v "captured on" "$n/header.out" >"$n/header.cmp"
	grep -v "captured on" "$s/header.out" >"$s/header.cmp"
	same "valid: header (attr, features) same in both byte orders" \
		"$n/header.cmp" "$s/header.cmp"
fi

echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]

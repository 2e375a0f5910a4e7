#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How long perf's replay of code loaded before it attached takes, with
# and without the data that comes with it. Run in the patched kernel by
# replay-time.sh:
#
#   replay-time-guest.sh PERF OUTDIR FUNCTIONS [profile]
#
# Two jitdemos, each with FUNCTIONS cold functions live, are recorded
# late by perf record -p (the first) and -a (both), for 1 s, in four
# ways:
#
#   names     jitdemo -c: the registry holds names only
#   data      jitdemo -s -c: each entry with its line table and unwind
#             information, which perf replays after its load
#   bytes     names, and --jit-code-bytes: the kernel copies each
#             function's bytes from its process
#   all       data and bytes
#
# each twice, interleaved, the recordings on the guest's tmpfs (not the
# shared folder, whose writes are slow). Prints a Markdown table: for
# each way and target, perf record's "Replayed ... in N ms" of both runs,
# the perf.data size, and the time against names' (the ratio of the
# sums). Times in an emulated guest are not real time: read the ratios.
# With "profile", one more -a recording with everything runs under
# perf record -a -g (it is not in the table), and the share of the
# replay's work in its samples is printed after the table.

set -u
[ $# -eq 3 ] || [ $# -eq 4 ] || { sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
perf=$(readlink -f "$1") out=$2 n=$3 profile=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
demo=$top/libperfinject/examples/jitdemo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# start FLAGS: two jitdemos with their cold code live; their pids in pids[].
pids=()
start() {
	local i j
	for i in 0 1; do
		"$demo" $1 -t 1 -r 10 -f 2 -d 30000 -c "$n" -l "$tmp/demo$i.log" \
			>"$tmp/demo$i.out" 2>&1 &
		pids[$i]=$!
	done
	for i in 0 1; do
		for ((j = 0; j < 6000; j++)); do
			grep -q 'cold functions live' "$tmp/demo$i.out" && break
			kill -0 "${pids[$i]}" 2>/dev/null || break
			sleep 0.1
		done
		grep -q 'cold functions live' "$tmp/demo$i.out" ||
			{ cat "$tmp/demo$i.out" >&2; echo "replay-time: jitdemo did not start" >&2; exit 1; }
	done
	sleep 1
}

stop() {
	kill -TERM "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}

# run WAY TARGET ROUND PERF-ARGS...: one recording; "ms KiB" to stdout.
run() {
	local way=$1 target=$2 round=$3 ms
	local f=$tmp/$way-$target-$round
	shift 3
	local -a outer=()
	[ "$round" = profile ] &&
		outer=("$perf" record -q --no-jit-code -e cpu-clock -a -g -o "$tmp/profile.data" --)
	"${outer[@]}" "$perf" record -e cpu-clock "$@" -o "$f.data" -- sleep 1 >"$f.out" 2>&1 ||
		{ cat "$f.out" >&2; echo "replay-time: perf record failed" >&2; exit 1; }
	ms=$(sed -n 's/^Replayed [0-9]* JIT code records .* in \([0-9]*\) ms$/\1/p' "$f.out")
	cp "$f.out" "$out/"
	echo "${ms:-?} $(du -k "$f.data" | cut -f1)"
	rm -f "$f.data"
}

declare -A ms1 ms2 kib
for way in names data bytes all; do
	flags=
	case $way in data|all) flags=-s ;; esac
	bytes=()
	case $way in bytes|all) bytes=(--jit-code-bytes) ;; esac
	start "$flags"
	for round in 1 2; do
		for target in p a; do
			if [ "$target" = p ]; then
				args=(-p "${pids[0]}")
			else
				args=(-a)
			fi
			read -r ms k < <(run "$way" "$target" "$round" "${bytes[@]}" "${args[@]}")
			if [ "$round" = 1 ]; then
				ms1[$way,$target]=$ms
			else
				ms2[$way,$target]=$ms
			fi
			kib[$way,$target]=$k
		done
	done
	[ "$way" = all ] && [ "$profile" = profile ] &&
		run all a profile "${bytes[@]}" -a >/dev/null
	stop
done

echo "| recording ($n functions in each of 2 processes) | target | replay (ms), two runs | perf.data (KiB) | time against names |"
echo "|---|---|---:|---:|---:|"
for way in names data bytes all; do
	for target in p a; do
		a=${ms1[$way,$target]} b=${ms2[$way,$target]}
		na=${ms1[names,$target]} nb=${ms2[names,$target]}
		ratio=$(awk -v a="$a" -v b="$b" -v na="$na" -v nb="$nb" \
			'BEGIN { if (na + nb > 0 && a != "?" && b != "?") printf "%.1fx", (a + b) / (na + nb); else print "?" }')
		desc=$way
		case $way in
		names) desc="names only (jitdemo -c)" ;;
		data) desc="with line tables and CFI (jitdemo -s -c)" ;;
		bytes) desc="names, --jit-code-bytes" ;;
		all) desc="line tables, CFI and --jit-code-bytes" ;;
		esac
		tgt="-p (1 process)"
		[ "$target" = a ] && tgt="-a (2 processes)"
		echo "| $desc | $tgt | $a, $b | ${kib[$way,$target]} | $ratio |"
	done
done

[ "$profile" = profile ] || exit 0
# The replaying perf's samples, with their callers: the ioctl and what
# takes its time.
echo
echo "Profile of perf record -a, line tables, CFI and --jit-code-bytes (share of perf's samples, with callees):"
"$perf" report -i "$tmp/profile.data" --children --comm perf --sort sym --stdio -g none \
	--percent-limit 0.1 2>/dev/null |
	grep -E ' (jit_registry__replay_pid|perf_event_jit_code_ioctl|perf_jit_code_replay|__access_remote_vm|ptrace_may_access|perf_jit_code_data_begin|perf_jit_code_output_one|process_vm_readv|record__pushfn)'

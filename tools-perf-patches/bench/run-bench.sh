#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-bench.sh: perf report over a generated perf.data of a JIT workload,
# side by side with the same workload through a perf map and through a
# jitdump + perf inject --jit. See README.md.
#
#   run-bench.sh [--quick] [--real] [-n FUNCTIONS] [-s SAMPLES]
#                [-r REUSE_PCT] [-o OUTDIR] [--perf PERF] [--uapi DIR]
#                [--pid PID] [--keep]
#
#   -n, -s        functions and samples (200000 and 1000000; --quick: 2000
#                 and 10000)
#   -r PCT        also run the three variants with PCT% of the loads at the
#                 address of an unloaded function (default 10; 0: don't)
#   --real        the shape of a real runtime and session: 8 threads on 4
#                 CPUs (records in time order per CPU only), two events of
#                 different sample_type, call chains up to 16 deep
#                 through a call tree of JIT code (perf report builds
#                 the call graph), an MMAP2 of the code heap every
#                 64 loads (W^X), gaps between functions, and reuse with
#                 other lengths
#   -o OUTDIR     work directory (default: a new one under ${TMPDIR:-/tmp}),
#                 about 1.1 GB at full size for the jitdump variant
#   --perf PERF   the patched perf (default: a copy of build/perf-build/perf)
#   --uapi DIR    include dir with the patched linux/perf_event.h
#   --keep        keep the generated data and perf script output (default:
#                 removed after each variant; times, reports and logs stay)
#
# Runs one step at a time: wall time and peak RSS are from /usr/bin/time -v
# (Debian package 'time'). Every perf command gets a private HOME and
# PERF_BUILDID_DIR, so nothing goes into ~/.debug or reads ~/.perfconfig.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

functions=200000
samples=1000000
reuse=10
out=
perf_src=$top/build/perf-build/perf
uapi=
pid=4242
keep=0
shape=()

usage() { sed -n '3,32s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--quick) functions=2000; samples=10000 ;;
	--real) shape=(-T 8 -C 4 -E 2 -g 16 --mmap-every 64 --gap 256 --reuse-len) ;;
	-n) functions=$2; shift ;;
	-s) samples=$2; shift ;;
	-r) reuse=$2; shift ;;
	-o) out=$2; shift ;;
	--perf) perf_src=$2; shift ;;
	--uapi) uapi=$2; shift ;;
	--pid) pid=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) usage ;;
	*) usage ;;
	esac
	shift
done

die() { echo "run-bench: $*" >&2; exit 1; }

[ -x /usr/bin/time ] && /usr/bin/time -v true 2>&1 | grep 'Maximum resident' >/dev/null ||
	die "needs GNU time as /usr/bin/time (apt-get install time)"
[ -x "$perf_src" ] || die "no perf at $perf_src (build it: scripts/build-perf)"

if [ -z "$uapi" ]; then
	for d in "$top/build/linux-tools/tools/include/uapi" \
		 "$top/build/headers/usr/include"; do
		if grep -qs PERF_RECORD_JIT_CODE "$d/linux/perf_event.h"; then
			uapi=$d
			break
		fi
	done
	[ -n "$uapi" ] || die "no patched linux/perf_event.h found, use --uapi"
fi

# A pid that no process has and no perf map file names.
while [ -e /proc/$pid ] || [ -e /tmp/perf-$pid.map ]; do
	pid=$((pid + 1))
done
perf_map=/tmp/perf-$pid.map

if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/jit-bench.XXXXXX")
else
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
fi
trap 'rm -f "$perf_map"' EXIT

# The perf under test may be rebuilt meanwhile: use a copy.
perf=$out/perf
cp "$perf_src" "$perf"
gen=$out/gen-perf-data
cc -O2 -Wall -Wextra -Werror -I"$uapi" -o "$gen" "$here/gen-perf-data.c"

# time_field FILE FIELD: from /usr/bin/time -v output
elapsed() {
	awk -F': ' '/Elapsed \(wall clock\)/ {
		n = split($2, a, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + a[i]
		printf "%.2f", s }' "$1"
}
rss_mib() {
	awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"
}

# timed NAME DIR CMD...: run CMD in DIR with a private HOME, its stdout to
# DIR/NAME.out, stderr to DIR/NAME.err, wall time and RSS to DIR/NAME.time
timed() {
	local name=$1 dir=$2
	shift 2
	(cd "$dir" && HOME=$dir/home PERF_BUILDID_DIR=$dir/home/.debug \
		/usr/bin/time -v -o "$dir/$name.time" "$@" \
		> "$dir/$name.out" 2> "$dir/$name.err") ||
		{ cat "$dir/$name.err" >&2; die "$name failed in $dir"; }
	if grep -q . "$dir/$name.err"; then
		echo "run-bench: $name in $dir said:" >&2
		head -20 "$dir/$name.err" >&2
	fi
}

# check TRUTH SCRIPT_OUTPUT: correct/total, comparing line by line (both in
# time order), the IPs must match for the lines to be the same sample.
check() {
	paste -d' ' "$1" "$2" | awk '
	{
		n++
		if ($1 != $3) { misaligned++; next }
		if ($2 == $4) ok++
		else if ($4 == "[unknown]" || $4 == "") unknown++
		else wrong++
	}
	END {
		printf "%d %d %d %d %d\n", ok, n, wrong, unknown, misaligned
	}'
}

results=$out/results.md
: > "$results"

# run VARIANT REUSE
run() {
	local v=$1 r=$2 dir=$out/$v-r$2 input files disk wall_i=- rss_i=- \
	      wall_r rss_r res ok n wrong unknown mis
	local -a gen_args=(--mode "$v" -n "$functions" -s "$samples" -r "$r"
			   --pid "$pid" -t "$dir/truth" -o "$dir/data/perf.data"
			   "${shape[@]}")

	rm -rf "$dir" "$perf_map"
	mkdir -p "$dir/data" "$dir/home"
	echo "run-bench: $v, reuse $r%: generating" >&2
	"$gen" "${gen_args[@]}" 2> "$dir/gen.err"
	input=$dir/data/perf.data

	if [ "$v" = jitdump ]; then
		echo "run-bench: $v, reuse $r%: perf inject --jit" >&2
		timed inject "$dir" "$perf" inject --jit -i "$input" \
			-o "$dir/data/injected.data"
		input=$dir/data/injected.data
		wall_i=$(elapsed "$dir/inject.time")
		rss_i=$(rss_mib "$dir/inject.time")
	fi

	echo "run-bench: $v, reuse $r%: perf report" >&2
	timed report "$dir" "$perf" report -i "$input" --stdio --sort sym
	wall_r=$(elapsed "$dir/report.time")
	rss_r=$(rss_mib "$dir/report.time")

	echo "run-bench: $v, reuse $r%: perf script, to check each sample" >&2
	timed script "$dir" "$perf" script -G -i "$input" -F ip,sym
	read -r ok n wrong unknown mis < <(check "$dir/truth" "$dir/script.out")
	[ "$mis" = 0 ] || echo "run-bench: $v: $mis samples out of step with the truth" >&2

	# Files the runtime (perf.data, perf map or jitdump) and the perf tools
	# (perf inject's output and ELF images, anything in HOME) created.
	files=$(find "$dir/data" "$dir/home" -type f | wc -l)
	disk=$(du -sb "$dir/data" | cut -f1)
	if [ "$v" = perfmap ]; then
		files=$((files + 1))
		disk=$((disk + $(stat -c %s "$perf_map")))
	fi
	disk=$(awk -v b="$disk" 'BEGIN { printf "%.0f", b / 1048576 }')

	res=$(awk -v ok="$ok" -v n="$n" \
		'BEGIN { printf "%.4f%% (%d / %d)", 100 * ok / n, ok, n }')
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$v" "$r%" "$wall_i" "$wall_r" \
		"$(awk -v a="$wall_i" -v b="$wall_r" 'BEGIN { printf "%.2f", a + b }')" \
		"$rss_i" "$rss_r" "$files ($disk MiB)" "$res" >> "$results"
	echo "run-bench: $v, reuse $r%: $ok of $n samples right, $wrong wrong," \
		"$unknown unresolved" >&2
	[ $keep = 1 ] || rm -rf "$dir/data" "$dir/script.out" "$dir/truth"
	rm -f "$perf_map"
}

{
	echo "| variant | reuse | inject wall s | report wall s | total wall s | inject peak RSS MiB | report peak RSS MiB | files created (apparent MiB) | JIT samples resolved correctly |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$results"

reuses=0
[ "$reuse" = 0 ] || reuses="0 $reuse"
for r in $reuses; do
	for v in jit perfmap jitdump; do
		run "$v" "$r"
	done
done

echo
echo "$functions functions, $samples samples${shape[*]:+, shape: ${shape[*]}}; $(nproc) CPUs; perf $("$perf" version | cut -d' ' -f3)"
echo
cat "$results"
echo
echo "run-bench: details in $out" >&2

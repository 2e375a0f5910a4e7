#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# run-fuzz.sh FUZZER SECONDS WHAT [SEEDS]: run a libFuzzer target for
# SECONDS from the seeds in the folder SEEDS, if given (this library's
# API fuzzer, tests/fuzz_api.c, needs none; the bridge's parser fuzzer
# brings its own). FUZZ_CORPUS, if set, is a folder that keeps what the
# fuzzer finds, for a longer run to go on from. FUZZ_FLAGS, if set, are
# more libFuzzer flags, given after these (of a flag given twice, the
# last counts). Prints "fuzz: N runs in S s of WHAT, 0 failures"; exits
# non-zero on a crash, a broken property, a leak, a timeout or memory
# past 1 GiB, and copies the input that did it beside FUZZER, in
# fuzz-artifacts/.

fuzzer=$1 seconds=$2 what=${3:-} seeds=${4:-}
[ -x "$fuzzer" ] && [ "$seconds" -gt 0 ] 2>/dev/null && [ -n "$what" ] ||
	{ echo "usage: $0 FUZZER SECONDS WHAT [SEEDS]" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/perfinject-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
corpus=${FUZZ_CORPUS:-$work/corpus}
mkdir -p "$corpus"

"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
	-max_len=8192 -print_final_stats=1 -artifact_prefix="$work/" \
	${FUZZ_FLAGS:-} "$corpus" ${seeds:+"$seeds"} >"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ $rc -ne 0 ]; then
	grep -vE '^(#|INFO|stat::)' "$work/log" | tail -n 40
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$a" ] || continue
		keep=$(dirname "$fuzzer")/fuzz-artifacts
		mkdir -p "$keep" && cp "$a" "$keep/" &&
			echo "fuzz: the input is in $keep/$(basename "$a")"
	done
	echo "fuzz: FAILED after ${runs:-?} runs"
	exit 1
fi
echo "fuzz: ${runs:-?} runs in $seconds s of $what, 0 failures"

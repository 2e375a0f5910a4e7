#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How long perf's late replay takes with the data that comes with the
# code (line tables and CFI from the registry, the code's bytes from the
# kernel) against names alone, in the patched kernel
# (replay-time-guest.sh says what it records). From the top of the
# repository:
#
#   tools-perf-patches/bench/replay-time.sh [--profile] [FUNCTIONS]
#
# FUNCTIONS (default 25000) is how many cold functions each of two
# jitdemos has live. Prints a Markdown table; perf record's output of
# each run stays in build/replay-time. With --profile, one run is
# profiled too, and the share of the replay's kernel work printed.
# Takes about 7 minutes under emulation.

. "$(dirname "$0")/../../scripts/lib.sh"
. "$(dirname "$0")/guest-bench.sh"

profile=
[ "${1:-}" = --profile ] && { profile=profile; shift; }
bench_prepare "${1:-}" 25000
out=$BUILD/replay-time
msg "recording in the patched kernel"
bench_run "$out" 3000 replay-time-guest.sh "$n" $profile
[ -z "$profile" ] || sed -n '/^Profile of/,$p' "$out/vm.log" | grep -v '^vm-run:'

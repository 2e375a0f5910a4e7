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

profile=
[ "${1:-}" = --profile ] && { profile=profile; shift; }
n=${1:-25000}
case $n in ''|*[!0-9]*|0) die "FUNCTIONS must be a positive number, not '$n'" ;; esac
kernel=$("$TOP/scripts/build-kernel" debug)
perf=$("$TOP/scripts/build-perf")
msg "building libperfinject and jitdemo"
make -s -C "$TOP/libperfinject" lib examples >/dev/null
out=$BUILD/replay-time
rm -rf "$out"
mkdir -p "$out"
msg "recording in the patched kernel"
"$TOP/scripts/vm-run" --kernel "$kernel" --timeout 3000 --share "$out" -- \
	"$TOP/tools-perf-patches/bench/replay-time-guest.sh" "$perf" "$out/run" \
	"$n" $profile >"$out/vm.log" 2>&1 ||
	{ tail -n 30 "$out/vm.log"; die "the run failed"; }
grep -E '^\|' "$out/vm.log" || { tail -n 30 "$out/vm.log"; die "no table"; }
[ -z "$profile" ] || sed -n '/^Profile of/,$p' "$out/vm.log" | grep -v '^vm-run:'

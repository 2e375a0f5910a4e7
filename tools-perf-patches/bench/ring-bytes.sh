#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ring-buffer bytes per load, with and without the code's bytes, in the
# patched kernel (ring-bytes-guest.sh says what it records). From the top
# of the repository:
#
#   tools-perf-patches/bench/ring-bytes.sh [FUNCTIONS]
#
# FUNCTIONS (default 10000) is how many cold functions jitdemo loads.
# With a JDK (javac), a JVM with the JVMTI agent is recorded too. Prints
# a Markdown table; the recordings stay in build/ring-bytes. Takes a few
# minutes under emulation.

. "$(dirname "$0")/../../scripts/lib.sh"
. "$(dirname "$0")/guest-bench.sh"

bench_prepare "${1:-}" 10000
agent=() jvm=
if command -v javac >/dev/null; then
	msg "building the JVMTI agent"
	make -s -C "$TOP/libperfinject/agents/jvmti" >/dev/null
	agent=("$TOP/libperfinject/agents/jvmti/build/libperfinject-jvmti.so"
	       "$TOP/libperfinject/agents/jvmti/build/classes")
else
	jvm=" (no JDK: the JVM row is left out)"
fi
msg "recording in the patched kernel$jvm"
bench_run "$BUILD/ring-bytes" 1800 ring-bytes-guest.sh "$n" "${agent[@]}"

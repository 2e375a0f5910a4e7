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

n=${1:-10000}
case $n in ''|*[!0-9]*|0) die "FUNCTIONS must be a positive number, not '$n'" ;; esac
kernel=$("$TOP/scripts/build-kernel" debug)
perf=$("$TOP/scripts/build-perf")
msg "building libperfinject and jitdemo"
make -s -C "$TOP/libperfinject" lib examples >/dev/null
agent=() jvm=
if command -v javac >/dev/null; then
	msg "building the JVMTI agent"
	make -s -C "$TOP/libperfinject/agents/jvmti" >/dev/null
	agent=("$TOP/libperfinject/agents/jvmti/build/libperfinject-jvmti.so"
	       "$TOP/libperfinject/agents/jvmti/build/classes")
else
	jvm=" (no JDK: the JVM row is left out)"
fi
out=$BUILD/ring-bytes
rm -rf "$out"
mkdir -p "$out"
msg "recording in the patched kernel$jvm"
"$TOP/scripts/vm-run" --kernel "$kernel" --timeout 1800 --share "$out" -- \
	"$TOP/tools-perf-patches/bench/ring-bytes-guest.sh" "$perf" "$out/run" \
	"$n" "${agent[@]}" >"$out/vm.log" 2>&1 ||
	{ tail -n 30 "$out/vm.log"; die "the run failed"; }
grep -E '^\|' "$out/vm.log" || { tail -n 30 "$out/vm.log"; die "no table"; }

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The agent's Java path side by side with perf's own libperf-jvmti.so
# (jitdump, perf record -k mono, perf inject --jit), both built from the
# same tree as the patched perf, on the same JVM workload in the patched
# kernel. From the top of the repository:
#
#   libperfinject/agents/jvmti/bench/compare.sh [ROUNDS]
#
# Prints the Markdown table of bench/compare-guest.sh (the measures are
# described there); the recordings stay in build/jvmti-compare. Needs a
# JDK (javac); takes about 3 minutes under emulation.

. "$(dirname "$0")/../../../../scripts/lib.sh"

rounds=${1:-300}
command -v javac >/dev/null || die "no JDK: install openjdk-17-jdk-headless"
kernel=$("$TOP/scripts/build-kernel" debug)
perf=$("$TOP/scripts/build-perf")
msg "building the agent"
make -s -C "$TOP/libperfinject" lib >/dev/null
make -s -C "$TOP/libperfinject/agents/jvmti" >/dev/null
# perf's libperf-jvmti.so, as tools/perf/jvmti/Build makes it.
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
tools=$BUILD/linux-tools/tools
out=$BUILD/jvmti-compare
mkdir -p "$out"
msg "building perf's libperf-jvmti.so from $tools/perf/jvmti"
gcc -O2 -fPIC -DPIC -shared -DHAVE_JVMTI_CMLR \
	-I"$jdk/include" -I"$jdk/include/linux" -I"$tools/perf/jvmti" \
	-I"$tools/include" -I"$tools/perf" -DETC_PERFCONFIG='"etc/perfconfig"' \
	"$tools/perf/jvmti/libjvmti.c" "$tools/perf/jvmti/jvmti_agent.c" \
	"$tools/lib/string.c" "$tools/lib/ctype.c" -lrt \
	-o "$out/libperf-jvmti.so" || die "building libperf-jvmti.so failed"
msg "recording Hot both ways in the patched kernel"
"$TOP/scripts/vm-run" --kernel "$kernel" --timeout 1800 --share "$out" -- \
	"$TOP/libperfinject/agents/jvmti/bench/compare-guest.sh" "$perf" \
	"$out/libperf-jvmti.so" "$out/run" "$rounds" >"$out/vm.log" 2>&1 ||
	{ tail -n 30 "$out/vm.log"; die "the run failed"; }
grep -E '^\|' "$out/vm.log" || { tail -n 30 "$out/vm.log"; die "no table"; }

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The jitdump backend's file is read by today's perf: examples/jitdemo
# runs under 'perf record -k mono' with PERFINJECT_BACKENDS=jitdump, then
# 'perf inject --jit' and 'perf report' must name every function the
# demo's log says ran, and attribute most samples to them; and the
# jitdump three writers share (test_two_writers) must give perf inject
# every function. Skips (77) when perf is missing or cannot record here.

set -u
cd "$(dirname "$0")/.." || exit 1
demo=${JITDEMO:-examples/jitdemo}
command -v perf >/dev/null || { echo "SKIP: no perf"; exit 77; }
[ -x "$demo" ] || { echo "FAIL: $demo not built"; exit 1; }

work=$(mktemp -d)
pid=
cleanup() {
	rm -rf "$work"
	[ -n "$pid" ] && rm -f "/tmp/jit-$pid.dump"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# perf inject writes one ELF file per function under $HOME/.debug.
export HOME=$work
if ! PERFINJECT_BACKENDS=jitdump perf record -q -k mono -e cpu-clock \
	-o "$work/perf.data" "$demo" -t 2 -r 2 -f 4 -d 40 -l "$work/log" \
	>"$work/record.out" 2>&1; then
	grep -qiE 'permission|not supported|No such device' "$work/record.out" &&
		{ echo "SKIP: perf record cannot run here"; exit 77; }
	cat "$work/record.out"
	fail "perf record"
fi
pid=$(sed -n 's/^# jitdemo pid=\([0-9]*\).*/\1/p' "$work/log" | head -n1)
[ -n "$pid" ] || fail "no pid in the demo's log"
[ -s "/tmp/jit-$pid.dump" ] || fail "no /tmp/jit-$pid.dump"

perf inject --jit -i "$work/perf.data" -o "$work/perf.jit.data" \
	>"$work/inject.out" 2>&1 || { cat "$work/inject.out"; fail "perf inject --jit"; }
perf report -i "$work/perf.jit.data" --stdio --sort sym --percent-limit 0 \
	2>/dev/null | grep -v '^#' >"$work/report"

missing=0
for name in $(awk '!/^#/ {print $6}' "$work/log" | sort -u); do
	grep -qF "] $name" "$work/report" || { echo "not in the report: $name"; missing=1; }
done
[ $missing -eq 0 ] || fail "functions the demo ran are missing from perf report"

share=$(awk '/\[\.\] jit:/ { sub("%", "", $1); s += $1 } END { printf "%d", s }' "$work/report")
[ "$share" -ge 80 ] || fail "only $share% of the samples are in jit: functions"
echo "perf inject --jit names all $(awk '!/^#/ {print $6}' "$work/log" | sort -u | wc -l) functions; $share% of samples in them"

# Three writers of one jitdump (two handles, a second copy of the
# library): perf inject reads it whole and writes one ELF file per LOAD.
two=build/tests/shared/test_two_writers
[ -x "$two" ] || fail "$two not built"
mkdir -p "$work/two"
perf record -q -k mono -e cpu-clock -o "$work/two.data" \
	"$two" -k "$work/two" -n 400 >"$work/two.out" 2>&1 ||
	{ cat "$work/two.out"; fail "perf record $two"; }
perf inject --jit -i "$work/two.data" -o "$work/two.jit.data" \
	>"$work/two-inject.out" 2>&1 ||
	{ cat "$work/two-inject.out"; fail "perf inject --jit of the shared jitdump"; }
nr_so=$(find "$work/two" -name 'jitted-*.so' | wc -l)
[ "$nr_so" -eq 1200 ] ||
	fail "perf inject wrote $nr_so ELF files for the shared jitdump, want 1200"
echo "perf inject --jit reads the jitdump of three writers: $nr_so functions"

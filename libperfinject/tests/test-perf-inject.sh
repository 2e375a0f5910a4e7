#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The jitdump backend's file is read by today's perf: examples/jitdemo
# runs under 'perf record -k mono' with PERFINJECT_BACKENDS=jitdump, then
# 'perf inject --jit' and 'perf report' must name every function the
# demo's log says ran, and attribute most samples to them; and the
# jitdump three writers share (test_two_writers) must give perf inject
# every function; and a JIT's line table and unwind information
# (lines_workload) reach perf report --sort srcline and the ELF files
# perf inject writes. Skips (77) when perf is missing or cannot record
# here.

set -u
cd "$(dirname "$0")/.." || exit 1
demo=${JITDEMO:-examples/jitdemo}
# The build to test (make check passes its own: the URCU=1 build's).
obj=${OBJDIR:-build}
command -v perf >/dev/null || { echo "SKIP: no perf"; exit 77; }
[ -x "$demo" ] || { echo "FAIL: $demo not built"; exit 1; }

work=$(mktemp -d)
pid=
pids=()
cleanup() {
	rm -rf "$work"
	for p in $pid "${pids[@]}"; do
		rm -f "/tmp/jit-$p.dump" /tmp/jitted-"$p"-*.so
	done
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
two=$obj/tests/shared/test_two_writers
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

# A line table and unwind information through the jitdump: perf inject
# puts them into the ELF files it writes, perf report --sort srcline
# shows the lines the JIT gave, readelf decodes the CFI.
lines=$obj/tests/lines_workload
[ -x "$lines" ] || fail "$lines not built"
PERFINJECT_BACKENDS=jitdump perf record -q -k mono -e cpu-clock \
	-o "$work/lines.data" "$lines" -s 1 >"$work/lines.out" 2>&1 ||
	{ cat "$work/lines.out"; fail "perf record $lines"; }
lpid=$(awk '$1 == "pid" {print $2}' "$work/lines.out")
[ -n "$lpid" ] || fail "no pid from $lines"
pids+=("$lpid")
perf inject --jit -i "$work/lines.data" -o "$work/lines.jit.data" \
	>"$work/lines-inject.out" 2>&1 ||
	{ cat "$work/lines-inject.out"; fail "perf inject --jit (lines)"; }
perf report -i "$work/lines.jit.data" --stdio --sort srcline \
	--percent-limit 0 2>/dev/null | grep -v '^#' >"$work/srcline"
# The loop runs the add, the xor (inlined: inline.js:5) and dec/jnz.
for want in inline.js:5 workload.js:13 workload.js:23; do
	grep -qE "%[[:space:]]+$want\$" "$work/srcline" ||
		{ head -20 "$work/srcline"; fail "perf report --sort srcline has no $want"; }
done
share=$(awk '/(workload|inline)\.js:[0-9]+$/ { sub("%", "", $1); s += $1 }
	END { printf "%d", s }' "$work/srcline")
[ "$share" -ge 80 ] || fail "only $share% of the samples on the JIT's lines"
nr_elf=0
for so in /tmp/jitted-"$lpid"-*.so; do
	[ -e "$so" ] || fail "perf inject wrote no ELF file for $lines"
	readelf -wf "$so" 2>&1 | grep -q 'FDE cie=00000000 pc=0*80\.\.0*90' ||
		{ readelf -wf "$so"; fail "no CFI for the code in $so"; }
	readelf -S -W "$so" | grep -q '\.eh_frame_hdr' ||
		fail "no .eh_frame_hdr in $so"
	nr_elf=$((nr_elf + 1))
done
[ "$nr_elf" -eq 2 ] || fail "$nr_elf ELF files for the 2 functions"
echo "perf report --sort srcline: $share% of the samples on the JIT's lines; CFI in both ELF files"

# A writer killed in the middle of a record leaves its jitdump cut
# anywhere. perf inject must neither crash nor hang, and past the header
# read every whole record before the cut: the demo's jitdump, cut in its
# header, after it, and at 12 places through its last records.
dump=/tmp/jit-$pid.dump
whole=$work/whole.dump
cp "$dump" "$whole" 2>/dev/null || fail "the demo's jitdump is gone"
len=$(stat -c %s "$whole")
# Complete JIT_CODE_LOAD records in the first @1 bytes of the dump.
loads_before() {
	python3 - "$whole" "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()[:int(sys.argv[2])]
if len(data) < 40:
    print(0); sys.exit()
at, n = struct.unpack_from('<I', data, 8)[0], 0
while at + 16 <= len(data):
    rid, size = struct.unpack_from('<II', data, at)
    if size < 16 or at + size > len(data):
        break
    n += rid == 0
    at += size
print(n)
PY
}
cuts="20 40"
for k in $(seq 1 12); do
	cuts+=" $((len - k * 23))"
done
bad=
for cut in $cuts; do
	[ "$cut" -gt 0 ] || continue
	head -c "$cut" "$whole" >"$dump"
	rm -f /tmp/jitted-"$pid"-*.so
	timeout 120 perf inject --jit -i "$work/perf.data" \
		-o "$work/cut.jit.data" >"$work/cut.out" 2>&1
	rc=$?
	got=$(find /tmp -maxdepth 1 -name "jitted-$pid-*.so" | wc -l)
	want=$(loads_before "$cut")
	# A cut header: perf may refuse the file (perf inject exits 255),
	# but must not hang (124) or die of a signal (128 + its number).
	if [ $rc -eq 124 ] || { [ $rc -gt 128 ] && [ $rc -le 192 ]; } ||
	   { [ "$cut" -ge 40 ] && { [ $rc -ne 0 ] || [ "$got" -ne "$want" ]; }; }; then
		bad+=" $cut (exit $rc, $got ELF files for $want whole loads)"
	fi
done
cp "$whole" "$dump"
[ -z "$bad" ] || { tail -n 5 "$work/cut.out"; fail "perf inject on a jitdump cut at:$bad"; }
echo "perf inject --jit reads a jitdump cut at any of $(wc -w <<<"$cuts") places: the whole records before the cut, no crash, no hang"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ring-buffer bytes per load: what the JIT code records, their data and
# the code's bytes take in perf.data, for each load. Run in the patched
# kernel by ring-bytes.sh:
#
#   ring-bytes-guest.sh PERF OUTDIR FUNCTIONS [AGENT CLASSES]
#
# Records, one at a time, with perf record -e cpu-clock:
#
#   plain     jitdemo -c FUNCTIONS: names only (no line tables, no CFI)
#   data      jitdemo -s -c FUNCTIONS: each load with a line table and
#             unwind information, as perf record asks for by default
#   bytes     the same with --jit-code-bytes
#   java      with AGENT and CLASSES: a JVM running Hot with the JVMTI
#             agent (lines on), with --jit-code-bytes
#
# and prints a Markdown table: per LOAD record, the bytes of the
# PERF_RECORD_JIT_CODE records (loads, unloads, moves) and of each kind
# of PERF_RECORD_JIT_CODE_DATA, each record with its header and sample_id,
# as perf report -D gives their sizes. Sizes do not depend on timing, so
# the debug kernel serves.

set -u
[ $# -eq 3 ] || [ $# -eq 5 ] || { sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
perf=$(readlink -f "$1") out=$2 n=$3 agent=${4:-} classes=${5:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
demo=$top/libperfinject/examples/jitdemo
mkdir -p "$out"

# record NAME PERF-ARGS -- COMMAND...
record() {
	local name=$1
	shift
	"$perf" record -q -e cpu-clock -m 1024 -o "$out/$name.data" "$@" \
		>"$out/$name.out" 2>"$out/$name.err" ||
		{ tail -n 5 "$out/$name.err"; echo "ring-bytes: $name: perf record failed" >&2; exit 1; }
}

# sizes NAME: "LOADS CODE BYTES LINES UNWIND" summed over perf.data's
# records, from perf report -D's "[0xSIZE]: PERF_RECORD_..." lines.
sizes() {
	"$perf" report -D -i "$out/$1.data" 2>/dev/null | awk '
	function hex(s,    i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	match($0, /\[0x[0-9a-f]+\]: PERF_RECORD_JIT_CODE/) {
		s = substr($0, RSTART + 3); sub(/\].*/, "", s)
		size = hex(s)
		if ($0 ~ /PERF_RECORD_JIT_CODE_DATA .*: BYTES of /)
			bytes += size
		else if ($0 ~ /PERF_RECORD_JIT_CODE_DATA .*: LINES of /)
			lines += size
		else if ($0 ~ /PERF_RECORD_JIT_CODE_DATA .*: UNWIND of /)
			unwind += size
		else if ($0 ~ /PERF_RECORD_JIT_CODE [0-9]+\/[0-9]+: /) {
			code += size
			if ($0 ~ /: LOAD \[/)
				loads++
		}
	}
	END { print loads + 0, code + 0, bytes + 0, lines + 0, unwind + 0 }'
}

per() { [ "$2" -gt 0 ] && echo $(( ($1 + $2 / 2) / $2 )) || echo "-"; }

row() {
	local name=$1 what=$2 loads code bytes lines unwind
	read -r loads code bytes lines unwind < <(sizes "$name")
	[ "$loads" -gt 0 ] || { echo "ring-bytes: $name: no LOAD record" >&2; exit 1; }
	echo "| $what | $loads | $(per "$code" "$loads") | $(per "$bytes" "$loads") | $(per "$lines" "$loads") | $(per "$unwind" "$loads") | $(per $((code + bytes + lines + unwind)) "$loads") |"
}

demo_args=(-t 1 -r 1 -f 2 -d 100 -c "$n")
record plain -- "$demo" "${demo_args[@]}"
record data -- "$demo" -s "${demo_args[@]}"
record bytes --jit-code-bytes -- "$demo" -s "${demo_args[@]}"
if [ -n "$agent" ]; then
	record java --jit-code-bytes -- java -agentpath:"$agent"=backends=kernel \
		-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m -cp "$classes" Hot 0 200
fi

echo "| recording | LOAD records | JIT code records | code bytes | line table | unwind | all |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row plain "jitdemo, $n functions of 64 bytes, names only"
row data "the same with a line table and CFI each (perf record's default)"
row bytes "the same, --jit-code-bytes"
[ -n "$agent" ] && row java "JVM, Hot with the JVMTI agent, --jit-code-bytes"
exit 0

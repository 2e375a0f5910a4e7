#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# This project's Java path side by side with perf's own, on the same JVM
# workload; run in the patched kernel by bench/compare.sh, which builds
# perf's libperf-jvmti.so from the same tree:
#
#   compare-guest.sh PERF LIBPERF_JVMTI OUTDIR [ROUNDS]
#
#   records:  perf record -g --jit-code-bytes, this project's agent with
#             the kernel backend: the records are in perf.data;
#   jitdump:  perf record -g -k mono --no-jit-code, perf's
#             libperf-jvmti.so writing a jitdump, then perf inject --jit.
#
# Hot runs ROUNDS (default 300) rounds of its three methods, compiled on
# their own, with -XX:+PreserveFramePointer. For each path it measures
# the share of samples named in Hot's methods, the share of those with a
# Hot.java line, whether perf annotate disassembles Hot.beta, the share
# of Hot's samples whose call stack reaches JavaMain, the files written
# besides perf.data, the bytes needed to report, and the time to record
# (and inject) and to report, as a ratio of the two paths. Prints a
# Markdown table; times in an emulated guest are only comparable as
# ratios of one run.

set -u
[ $# -ge 3 ] || { sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
perf=$1 pjvmti=$2 out=$3 rounds=${4:-300}
here=$(cd "$(dirname "$0")/.." && pwd)
agent=$here/build/libperfinject-jvmti.so
classes=$here/build/classes
: "${JAVA_HOME:=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
java=$JAVA_HOME/bin/java
jvmopts=(-XX:+PreserveFramePointer -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
	 -Xmx128m -XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,Hot::*"
	 -cp "$classes")

rm -rf "$out"
mkdir -p "$out/records" "$out/jitdump" || exit 1
for f in "$perf" "$pjvmti" "$agent" "$classes/Hot.class" "$java"; do
	[ -e "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# this project: the records in perf.data, nothing else written.
cd "$out/records" || exit 1
t0=$(now)
"$perf" record -q -g --jit-code-bytes -e cpu-clock -o perf.data "$java" \
	-agentpath:"$agent"=backends=kernel "${jvmopts[@]}" Hot 0 "$rounds" \
	>java.log 2>&1 || { tail java.log; echo "FAIL: records: perf record"; exit 1; }
t1=$(now)
rec_a=$(secs "$t0" "$t1")
data_a=perf.data

# perf's own path: jitdump, -k mono, perf inject --jit.
cd "$out/jitdump" || exit 1
t0=$(now)
JITDUMPDIR=$out/jitdump "$perf" record -q -g -k mono --no-jit-code -e cpu-clock \
	-o perf.data "$java" -agentpath:"$pjvmti" "${jvmopts[@]}" Hot 0 "$rounds" \
	>java.log 2>&1 || { tail java.log; echo "FAIL: jitdump: perf record"; exit 1; }
t1=$(now)
"$perf" inject --jit -i perf.data -o perf.jit.data >inject.log 2>&1 ||
	{ tail inject.log; echo "FAIL: jitdump: perf inject --jit"; exit 1; }
t2=$(now)
rec_b=$(secs "$t0" "$t1")
inj_b=$(secs "$t1" "$t2")
data_b=perf.jit.data

# Hot's methods as each agent names them: Hot.beta(I)D, or perf's
# libperf-jvmti.so's LHot;beta(I)D, which perf shows as Hot.beta(int).
export hot_re='^(Hot\.|LHot;)(alpha|beta|gamma)\('

# measure DIR DATA BETA: "samples hot lines stacks insns report_s" of one
# path; BETA is Hot.beta's name there.
measure() {
	local dir=$1 data=$2 beta=$3 t0 t1
	cd "$dir" || return 1
	t0=$(now)
	"$perf" report -i "$data" --stdio --no-children -g none --sort sym -n \
		>report.txt 2>/dev/null
	t1=$(now)
	"$perf" report -i "$data" --stdio --no-children -g none \
		--sort sym,srcline -n >srcline.txt 2>/dev/null
	"$perf" script -i "$data" -F ip,sym >script.txt 2>/dev/null
	"$perf" annotate -i "$data" --stdio -s "$beta" >annotate.txt 2>/dev/null
	local total hot lines stacks insns
	total=$(awk '$2 ~ /^[0-9]+$/ && $3 ~ /^\[/ { n += $2 } END { print n + 0 }' report.txt)
	hot=$(awk 'BEGIN { re = ENVIRON["hot_re"] } $3 ~ /^\[/ && $4 ~ re { n += $2 } END { print n + 0 }' report.txt)
	lines=$(awk 'BEGIN { re = ENVIRON["hot_re"] } $3 ~ /^\[/ && $4 ~ re && $5 ~ /^Hot\.java:[0-9]+$/ { n += $2 }
		     END { print n + 0 }' srcline.txt)
	stacks=$(awk 'BEGIN { re = ENVIRON["hot_re"] } function check(    i) {
			if (nf && f[1] ~ re) {
				hot++
				for (i = 2; i <= nf; i++)
					if (f[i] == "JavaMain") { whole++; break }
			}
			nf = 0
		}
		/^$/ { check(); next }
		{ sub(/^[ \t]*[0-9a-f]+ /, ""); sub(/ \([^()]*\)$/, ""); f[++nf] = $0 }
		END { check(); printf "%d\n", hot ? 100 * whole / hot : 0 }' script.txt)
	insns=$(grep -cE '^ +[0-9.]+ +: +[0-9a-f]+: ' annotate.txt)
	echo "$total $hot $lines $stacks $insns $(secs "$t0" "$t1")"
}

read -r tot_a hot_a lines_a stacks_a insns_a rep_a < <(measure "$out/records" "$data_a" 'Hot.beta(I)D')
read -r tot_b hot_b lines_b stacks_b insns_b rep_b < <(measure "$out/jitdump" "$data_b" 'Hot.beta(int)')

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", b ? 100 * a / b : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a ? b / a : 0 }'; }
# Files each path wrote besides perf.data, and the bytes a report needs.
files_a=$(find "$out/records" -type f ! -name '*.txt' ! -name '*.log' ! -name perf.data | wc -l)
files_b=$(find "$out/jitdump" -type f ! -name '*.txt' ! -name '*.log' ! -name 'perf*.data' | wc -l)
bytes_a=$(stat -c %s "$out/records/perf.data")
bytes_b=$(( $(stat -c %s "$out/jitdump/perf.jit.data") +
	    $(find "$out/jitdump" -name 'jitted-*.so' -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }') ))
dump_b=$(find "$out/jitdump" -name 'jit-*.dump' -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }')

cat <<EOF
| Hot $rounds rounds, C1, -XX:+PreserveFramePointer, perf record -g | this project (records) | perf's libperf-jvmti.so (jitdump, perf inject --jit) |
|---|---:|---:|
| samples | $tot_a | $tot_b |
| samples named in Hot's methods | $hot_a ($(pct "$hot_a" "$tot_a")) | $hot_b ($(pct "$hot_b" "$tot_b")) |
| of those, with a Hot.java line | $(pct "$lines_a" "$hot_a") | $(pct "$lines_b" "$hot_b") |
| of those, call stack down to JavaMain | $stacks_a% | $stacks_b% |
| perf annotate Hot.beta: instructions | $insns_a | $insns_b |
| files written besides perf.data | $files_a | $files_b (jitdump, one ELF file per method) |
| bytes a report needs | $bytes_a | $bytes_b (perf.jit.data and the ELF files; the jitdump: $dump_b) |
| perf record, s (ratio) | $rec_a (1.00x) | $rec_b ($(ratio "$rec_a" "$rec_b")) |
| perf inject --jit, s | none | $inj_b |
| perf report, s (ratio) | $rep_a (1.00x) | $rep_b ($(ratio "$rep_a" "$rep_b")) |
EOF

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The agent end to end with the kernel backend, the patched kernel and
# the patched perf; run inside the guest, after make on the host:
#
#   java-e2e-guest.sh PERF OUTDIR
#
# e.g. from the top of the repository, OUTDIR shared read-write:
#
#   scripts/vm-run --timeout 1800 --share $PWD/libperfinject/agents/jvmti/build \
#       -- libperfinject/agents/jvmti/tests/java-e2e-guest.sh \
#       $PWD/libperfinject/agents/jvmti/build/perf \
#       $PWD/libperfinject/agents/jvmti/build/e2e
#
# 1. perf record runs Hot with the agent: the samples in JIT code (code
#    no file backs, "[JIT] tid N" in perf report) must mostly be in
#    Hot's three methods, by name.
# 2. The same with --no-jit-code: perf asks for no records, and the
#    samples in JIT code have no names.
# 3. Late attach: perf record -p on a JVM running without the agent,
#    then jcmd JVMTI.agent_load: the replayed code gets names.
# 4. A profiler later than the agent: perf record -p on a JVM that has
#    run with the agent from its start. perf reads the agent's registry
#    of live code and replays it (PERF_EVENT_IOC_JIT_CODE): the code
#    compiled before perf started gets names, with no help from the JVM.
#    The JVM runs with -Xcomp, which compiles every method it runs, and
#    goes through much of the JDK first, so that thousands of methods are
#    live at the attach, as in a warmed-up server: the replay must bring
#    them all, with no record lost.
# 5. Source lines and call stacks: perf record -g of Hot with
#    -XX:+PreserveFramePointer; the lines of Hot's methods must be the
#    ones javac wrote, their stacks must reach main and JavaMain.
#
# Prints "PASS:"/"FAIL:" lines with the measured shares; exits 1 if any
# check failed. JAVA_HOME picks the JDK; E2E_ROUNDS (default 600) is how
# many rounds of its three methods Hot runs in 1 (a tenth in 2): a fixed
# amount of work, so that the share of compiled code does not depend on
# how fast the guest is. The JVM runs C1 only (TieredStopAtLevel=1): an emulated
# guest compiles too slowly for C2 to matter in seconds.

set -u
[ $# -eq 2 ] || { sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
perf=$(realpath "$1")
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
agent=$here/build/libperfinject-jvmti.so
classes=$here/build/classes
: "${JAVA_HOME:=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
java=$JAVA_HOME/bin/java
jcmd=$JAVA_HOME/bin/jcmd
rounds=${E2E_ROUNDS:-600}
jvmopts=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m -cp "$classes")
hot_re='^Hot\.(alpha|beta|gamma)\('

rc=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; rc=1; }
note() { echo "  $*"; }

mkdir -p "$out" || exit 1
for f in "$perf" "$agent" "$classes/Hot.class" "$java" "$jcmd"; do
	[ -e "$f" ] || { fail "$f missing"; exit 1; }
done
if ! "$java" -agentpath:"$agent"=backends=kernel,strict -version \
	>"$out/probe.log" 2>&1; then
	cat "$out/probe.log"
	fail "the kernel has no PR_PERF_JIT_CODE: not the patched kernel"
	exit 1
fi
pass "the agent's kernel backend is available"

# shares NAME: from perf report of $out/NAME.data, print "JIT HOT NAMED
# STUBS": samples in JIT code, those in Hot's methods, those with a name
# at all (not a bare address) and those in "[stub] ..." code (mostly the
# interpreter); perf report goes to NAME.txt.
shares() {
	"$perf" report -i "$out/$1.data" --stdio --sort dso,sym -n \
		2>"$out/$1.err" >"$out/$1.txt"
	local line n dso sym jit=0 hot=0 named=0 stubs=0
	local re='^ *[0-9.]+% +([0-9]+) +(.*[^ ]) +\[[.k]\] (.*)$'
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		n=${BASH_REMATCH[1]} dso=${BASH_REMATCH[2]} sym=${BASH_REMATCH[3]}
		[[ $dso == "[JIT] tid "* ]] || continue
		jit=$((jit + n))
		[[ $sym =~ ^0x[0-9a-f]+$ ]] || named=$((named + n))
		[[ $sym =~ $hot_re ]] && hot=$((hot + n))
		[[ $sym == "[stub] "* ]] && stubs=$((stubs + n))
	done <"$out/$1.txt"
	echo "$jit $hot $named $stubs"
}

pct() { echo $(($1 * 100 / ($2 > 0 ? $2 : 1))); }

# jit_records NAME: LOAD records in NAME.data.
jit_records() {
	"$perf" script -i "$out/$1.data" --show-jit-code-events 2>/dev/null |
		grep -cE 'PERF_RECORD_JIT_CODE .*LOAD'
}

# wait_compiled PID: until Compiler.codelist lists Hot's three methods,
# asked again as soon as jcmd answers; 1 if the JVM ends first.
wait_compiled() {
	local m ok
	while kill -0 "$1" 2>/dev/null; do
		"$jcmd" "$1" Compiler.codelist >"$out/codelist" 2>/dev/null
		ok=1
		for m in alpha beta gamma; do
			grep -q " Hot\.$m(" "$out/codelist" || ok=0
		done
		[ $ok = 1 ] && return 0
	done
	return 1
}

# 1. The agent from the start.
if "$perf" record -q -e cpu-clock -o "$out/java.data" "$java" \
	-agentpath:"$agent"=backends=kernel "${jvmopts[@]}" Hot 0 "$rounds" \
	>"$out/java.log" 2>&1 && grep -q ^done "$out/java.log"; then
	read -r jit hot named stubs < <(shares java)
	loads=$(jit_records java)
	methods=$((named - stubs))
	note "with records: $jit samples in JIT code, $hot in Hot's methods ($(pct "$hot" "$jit")%), $named named ($(pct "$named" "$jit")%), $stubs in stubs and the interpreter, $loads LOAD records"
	sed -n '/^#/d; /\[JIT\]/p' "$out/java.txt" | head -n 8 | sed 's/^/    /'
	[ "$jit" -ge 100 ] && [ $((hot * 10)) -ge $((jit * 3)) ] &&
		pass "agent: $(pct "$hot" "$jit")% of $jit JIT samples are in Hot.alpha/beta/gamma (want >= 30%; the rest is mostly the interpreter)" ||
		fail "agent: $hot of $jit JIT samples in Hot's methods (want >= 30% of >= 100)"
	[ "$methods" -gt 0 ] && [ $((hot * 10)) -ge $((methods * 8)) ] &&
		pass "agent: $(pct "$hot" "$methods")% of $methods samples in compiled methods are in Hot.alpha/beta/gamma (want >= 80%)" ||
		fail "agent: $hot of $methods samples in compiled methods in Hot's methods (want >= 80%)"
	[ $((named * 100)) -ge $((jit * 95)) ] &&
		pass "agent: $(pct "$named" "$jit")% of JIT samples have a name (want >= 95%)" ||
		fail "agent: $named of $jit JIT samples have a name (want >= 95%)"
	[ "$loads" -ge 200 ] && pass "agent: perf recorded $loads LOAD records (stubs and methods)" ||
		fail "agent: perf recorded $loads LOAD records, want >= 200"
else
	tail -n 20 "$out/java.log"
	fail "agent: perf record java Hot failed"
fi

# 2. The same without records, a tenth as long (no fewer than 100
# rounds): thousands of JIT samples, none of which may have a name.
nojit_rounds=$((rounds / 10))
[ "$nojit_rounds" -ge 100 ] || nojit_rounds=$((rounds < 100 ? rounds : 100))
if "$perf" record -q --no-jit-code -e cpu-clock -o "$out/nojit.data" \
	"$java" -agentpath:"$agent"=backends=kernel "${jvmopts[@]}" Hot \
	0 "$nojit_rounds" >"$out/nojit.log" 2>&1 && grep -q ^done "$out/nojit.log"; then
	read -r jit hot named stubs < <(shares nojit)
	loads=$(jit_records nojit)
	note "--no-jit-code: $jit samples in JIT code, $hot in Hot's methods, $named named, $loads LOAD records"
	[ "$jit" -ge 100 ] && [ "$hot" -eq 0 ] && [ "$named" -eq 0 ] &&
		[ "$loads" -eq 0 ] &&
		pass "--no-jit-code: all $jit JIT samples are anonymous, no records" ||
		fail "--no-jit-code: $named of $jit JIT samples named, $loads records (want 0 of >= 100, 0)"
else
	tail -n 20 "$out/nojit.log"
	fail "--no-jit-code: perf record java Hot failed"
fi

# late_run NAME AGENT-AT-START [JCMD-ARGS]: Hot runs (with the JVM
# options in $late_opts and Hot's arguments after SECONDS in $late_args,
# if any) until its standard input ends; once it says its pid (after its
# warm-up) and its methods are compiled, perf record -p starts; once it
# records, 3 s later jcmd JCMD-ARGS (if any); 4 s later perf stops, then
# Hot. perf takes seconds to start in an emulated guest, more on a loaded
# host: it starts with its events disabled (-D -1), and the times count
# from when it says, on its control fifo, that it enabled them. (A
# disabled perf waits on its fifo; one busy with samples may read it much
# later.) timeout(1) ends a JVM that is never stopped.
late_opts=() late_args=()
# late_stop: perf, if started, then the JVM, and the fifos (late_run's).
late_stop() {
	if [ -n "$ppid" ]; then
		kill -INT "$ppid"
		wait "$ppid"
	fi
	exec {hin}>&-
	cat <&"$hout" >>"$out/$name.log"
	exec {hout}<&-
	wait "$tpid" 2>/dev/null
	[ -z "$ctl" ] || exec {ctl}>&- {ack}>&-
	rm -rf "$fifos"
}
late_run() {
	local name=$1 start=$2 tpid hin hout line reply fifos jpid='' ppid='' ctl='' ack=''
	shift 2
	if ! fifos=$(mktemp -d) || ! mkfifo "$fifos/in" "$fifos/ctl" "$fifos/ack"; then
		fail "$name: cannot make the fifos of Hot's input and perf's control"
		return 1
	fi
	exec {hout}< <(exec timeout 600 "$java" ${start:+"-agentpath:$agent=$start"} \
		"${late_opts[@]}" "${jvmopts[@]}" Hot - "${late_args[@]}" \
		<"$fifos/in" 2>&1)
	tpid=$!
	exec {hin}>"$fifos/in"
	# Its output into the log as it comes, to its "pid" line.
	: >"$out/$name.log"
	while IFS= read -r -u "$hout" line; do
		printf '%s\n' "$line" >>"$out/$name.log"
		[[ $line =~ ^pid\ ([0-9]+)$ ]] && { jpid=${BASH_REMATCH[1]}; break; }
	done
	if [ -z "$jpid" ] || ! wait_compiled "$jpid"; then
		late_stop
		tail -n 5 "$out/$name.log"
		if [ -z "$jpid" ]; then
			fail "$name: Hot ended before it said its pid (timeout 600 s?)"
		else
			fail "$name: Hot ended before Compiler.codelist listed its methods compiled (timeout 600 s?)"
		fi
		return 1
	fi
	exec {ctl}<>"$fifos/ctl" {ack}<>"$fifos/ack"
	"$perf" record -e cpu-clock -p "$jpid" -o "$out/$name.data" -D -1 \
		--control "fifo:$fifos/ctl,$fifos/ack" >"$out/$name.record" 2>&1 &
	ppid=$!
	echo enable >&"$ctl"
	if ! read -r -t 300 -u "$ack" reply || [ "$reply" != ack ]; then
		late_stop
		tail -n 5 "$out/$name.record"
		fail "$name: perf record -p did not start recording in 300 s"
		return 1
	fi
	sleep 3
	if [ $# -gt 0 ]; then
		"$jcmd" "$jpid" JVMTI.agent_load "$agent" "$@" >"$out/$name.jcmd" 2>&1
	else
		echo "return code: 0" >"$out/$name.jcmd"
	fi
	sleep 4
	late_stop
	grep -q "perf record: Captured and wrote" "$out/$name.record" || {
		tail -n 5 "$out/$name.record"
		fail "$name: perf record -p wrote no data"
		return 1
	}
	grep -q "return code: 0" "$out/$name.jcmd" || {
		cat "$out/$name.jcmd"
		fail "$name: jcmd JVMTI.agent_load failed"
		return 1
	}
}

# 3. Late attach of the agent, perf already recording.
if late_run attach "" '"backends=kernel"'; then
	read -r jit hot named stubs < <(shares attach)
	loads=$(jit_records attach)
	note "late attach: $jit samples in JIT code, $hot in Hot's methods ($(pct "$hot" "$jit")%), $loads LOAD records (replayed)"
	[ "$jit" -ge 100 ] && [ $((hot * 4)) -ge "$jit" ] && [ "$loads" -ge 100 ] &&
		pass "late attach: $(pct "$hot" "$jit")% of $jit JIT samples named Hot.alpha/beta/gamma after GenerateEvents (want >= 25%; the first 3 s are before the attach)" ||
		{
			tail -n 5 "$out/attach.record" "$out/attach.err"
			fail "late attach: $hot of $jit JIT samples in Hot's methods, $loads records (want >= 25% of >= 100, >= 100 records)"
		}
fi

# hot_lines NAME: the samples of Hot.alpha, beta and gamma in
# $out/NAME.data, by srcline: each with a line must be at a line javac
# wrote into Hot.class for that method (javap -l, in $out/Hot.javap), and
# 95% must have one. Prints "method samples at-its-lines elsewhere" for
# each, after up to a few wrong rows; fails when they do not hold.
hot_lines() {
	"$perf" report -i "$out/$1.data" -n --stdio --no-children -g none \
		--sort sym,srcline 2>/dev/null >"$out/$1-srcline.txt"
	awk '
	# javap -l output first: the lines of each method of Hot.
	FNR == NR {
		if ($0 ~ /^  [a-z].*\(.*\);$/) {
			m = $0
			sub(/\(.*/, "", m)
			n = split(m, w, " ")
			m = w[n]
		} else if ($1 == "line" && m != "") {
			l = $2
			sub(/:$/, "", l)
			table[m, l] = 1
		}
		next
	}
	$3 == "[.]" && $4 ~ /^Hot\.(alpha|beta|gamma)\(/ {
		m = $4
		sub(/^Hot\./, "", m)
		sub(/\(.*/, "", m)
		total[m] += $2
		if ($5 ~ /^Hot\.java:[0-9]+$/) {
			split($5, s, ":")
			if ((m, s[2]) in table)
				right[m] += $2
			else {
				wrong[m] += $2
				print "not a line of " m " in Hot.class: " $4 " " $5
			}
		}
	}
	END {
		ok = 1
		for (i = 1; i <= 3; i++) {
			m = i == 1 ? "alpha" : i == 2 ? "beta" : "gamma"
			printf "%s %d %d %d\n", m, total[m], right[m], wrong[m]
			if (total[m] < 10 || wrong[m] || right[m] * 100 < total[m] * 95)
				ok = 0
		}
		exit !ok
	}' "$out/Hot.javap" "$out/$1-srcline.txt"
}
"$JAVA_HOME/bin/javap" -l -cp "$classes" Hot >"$out/Hot.javap" 2>&1

# 4. The agent from the start, perf later: perf replays the registry of
# a JVM that compiled all it ran (-Xcomp), a round of Bench included:
# about 2,400 methods. Hot's three are kept out of main, their caller.
late_opts=(-Xcomp -XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,Hot::*")
late_args=(0 warm)
if late_run registry backends=kernel; then
	read -r jit hot named stubs < <(shares registry)
	# The replayed loads, and the records lost before the first sample.
	read -r synth lost < <("$perf" script -i "$out/registry.data" --show-jit-code-events \
		--show-lost-events -F event 2>/dev/null |
		awk '/PERF_RECORD_LOST/ && !sampled { lost++ }
		     /PERF_RECORD_JIT_CODE .*LOAD .* flags 0x1: / { synth++ }
		     !/PERF_RECORD_/ && /cpu-clock/ { sampled = 1 }
		     END { print synth + 0, lost + 0 }')
	ms=$(sed -n 's/^Replayed [0-9]* JIT code records .* in \([0-9]*\) ms$/\1/p' "$out/registry.record")
	note "perf attached later: $jit samples in JIT code, $hot in Hot's methods ($(pct "$hot" "$jit")%), $named named ($(pct "$named" "$jit")%), $synth LOAD records replayed from the registry in ${ms:-?} ms, $lost records lost before the first sample"
	[ "$jit" -ge 100 ] && [ $((hot * 2)) -ge "$jit" ] && [ "$synth" -ge 2000 ] &&
		pass "perf attached later: $(pct "$hot" "$jit")% of $jit JIT samples named Hot.alpha/beta/gamma through $synth replayed loads (want >= 50%, >= 2000 loads)" ||
		fail "perf attached later: $hot of $jit JIT samples in Hot's methods, $synth replayed loads (want >= 50% of >= 100, >= 2000 loads)"
	[ "$jit" -ge 100 ] && [ $((named * 100)) -ge $((jit * 95)) ] &&
		pass "perf attached later: $(pct "$named" "$jit")% of $jit JIT samples have a name (want >= 95%)" ||
		fail "perf attached later: $named of $jit JIT samples have a name (want >= 95% of >= 100)"
	[ "$lost" = 0 ] && pass "perf attached later: no record lost before the first sample" ||
		fail "perf attached later: $lost LOST records before the first sample"
	# The registry keeps each method's line table (the agent's default),
	# and perf replays it after the load.
	if lines=$(hot_lines registry); then
		pass "perf attached later: Hot's methods, compiled before it came, at the lines javac wrote for them, from the replayed line tables (method, samples, at its lines, elsewhere): $(echo $lines)"
	else
		echo "$lines" | head -n 8
		fail "perf attached later: Hot's methods not at javac's lines, or too few with a line: $(echo "$lines" | tail -n 3)"
	fi
fi
# 5. Source lines and call stacks, as perf gives them for native code:
# Hot's methods compiled on their own (not inlined into main), the JVM
# keeping frame pointers (-XX:+PreserveFramePointer), perf record -g.
# Every sample of Hot.alpha, beta and gamma with a line must be at a line
# javac wrote into Hot.class for that method (javap -l), and 95% must
# have one; 90% of their call chains must go through main's frame (the
# interpreter's, or main compiled) down to the launcher's JavaMain.
if "$perf" record -q -g -e cpu-clock -o "$out/stacks.data" "$java" \
	-agentpath:"$agent"=backends=kernel -XX:+PreserveFramePointer \
	-XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,Hot::*" \
	"${jvmopts[@]}" Hot 0 "$rounds" >"$out/stacks.log" 2>&1 &&
   grep -q ^done "$out/stacks.log"; then
	if lines=$(hot_lines stacks); then
		pass "lines: Hot's methods at the lines javac wrote for them (method, samples, at its lines, elsewhere): $(echo $lines)"
	else
		echo "$lines" | head -n 8
		fail "lines: Hot's methods not at javac's lines, or too few with a line: $(echo "$lines" | tail -n 3)"
	fi
	read -r hot whole < <("$perf" script -i "$out/stacks.data" -F ip,sym 2>/dev/null |
		awk '
		# A sample is its frames, then a blank line.
		function check(    i, ok) {
			if (nf && f[1] ~ /^Hot\.(alpha|beta|gamma)\(/) {
				hot++
				if (f[2] == "[stub] Interpreter" || f[2] ~ /^Hot\.main\(/)
					for (i = 3; i <= nf; i++)
						if (f[i] == "JavaMain")
							ok = 1
				whole += ok
			}
			nf = 0
		}
		/^$/ { check(); next }
		{
			sub(/^[ \t]*[0-9a-f]+ /, "")
			sub(/ \([^()]*\)$/, "")
			f[++nf] = $0
		}
		END { check(); print hot + 0, whole + 0 }')
	note "-g: $hot samples in Hot's methods, $whole with main's frame and JavaMain below"
	[ "$hot" -ge 100 ] && [ $((whole * 100)) -ge $((hot * 90)) ] &&
		pass "-g with -XX:+PreserveFramePointer: $(pct "$whole" "$hot")% of $hot samples in Hot's methods have main's frame, then the call stub and the JVM down to JavaMain (want >= 90%)" ||
		fail "-g with -XX:+PreserveFramePointer: $whole of $hot samples in Hot's methods reach JavaMain through main's frame (want >= 90% of >= 100)"
else
	tail -n 20 "$out/stacks.log"
	fail "lines and stacks: perf record -g java Hot failed"
fi
exit $rc

#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The agent's tests, on the host: no kernel support needed, the agent
# writes perf-PID.map files into a temporary directory and the registry
# is read from outside with build/read-registry.
#
#   tests/run-tests.sh        (after make; "make check" does both)
#
# JAVA_HOME picks the JDK (default: the one javac on PATH belongs to).
# Prints a "PASS: ..." or "FAIL: ..." line a check, then "N passed, N
# failed"; exits 1 if any check failed.

set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
agent=$build/libperfinject-jvmti.so
reader=$build/read-registry
classes=$build/classes
: "${JAVA_HOME:=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
java=$JAVA_HOME/bin/java
jcmd=$JAVA_HOME/bin/jcmd

npass=0 nfail=0
pass() { echo "PASS: $*"; npass=$((npass + 1)); }
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

for f in "$agent" "$reader" "$classes/Hot.class" "$java" "$jcmd"; do
	if [ ! -e "$f" ]; then
		echo "FAIL: $f missing (run make first)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

tmp=$(mktemp -d /tmp/perfinject-jvmti.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# Hexadecimal to number, for any awk (mawk has no strtonum).
awk_hex='function hex(s, i, n) {
	s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}'

hot_methods=("Hot.alpha(J)J" "Hot.beta(I)D" "Hot.gamma([II)I")

# map_has FILE NAME: a line "ADDR SIZE NAME" with a plausible address
# (user space, not in the first page) and size (1 byte to 1 MiB).
map_has() {
	awk -v name="$2" "$awk_hex"'
		{ n = $0; sub(/^[^ ]+ [^ ]+ /, "", n) }
		n == name {
			a = hex($1); s = hex($2)
			if (a >= 4096 && a < 2^47 && s > 0 && s <= 1048576)
				ok = 1
		}
		END { exit !ok }' "$1"
}

# reg_has FILE NAME: read-registry output names NAME with a length > 0.
reg_has() {
	awk -v name="$2" '{ n = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", n) }
		n == name && $2 > 0 { ok = 1 } END { exit !ok }' "$1"
}

# --- the shared object -------------------------------------------------

exports=$(nm -D --defined-only "$agent" | awk '{print $3}' | sort | xargs)
want="Agent_OnAttach Agent_OnLoad Agent_OnUnload perfinject_registry_descriptor"
check "agent exports exactly: $want (got: $exports)" [ "$exports" = "$want" ]
needed=$(readelf -d "$agent" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | xargs)
check "agent needs no libperfinject.so (needs: $needed)" \
	eval '! grep -q libperfinject <<<"$needed"'

# --- options -----------------------------------------------------------

out=$tmp/bad.out
"$java" -agentpath:"$agent"=backends=perfmap,colour=blue -cp "$classes" \
	Hot 0 >"$out" 2>&1
rc=$?
check "an unknown option stops the JVM with a message (rc $rc)" \
	eval '[ $rc -ne 0 ] && grep -q "perfinject-jvmti: unknown option .colour" "$out"'
"$java" -agentpath:"$agent"=backends=kernel+bogus -cp "$classes" \
	Hot 0 >"$out" 2>&1
rc=$?
check "an unknown backend stops the JVM with a message (rc $rc)" \
	eval '[ $rc -ne 0 ] && grep -q "unknown backend .bogus" "$out"'
"$java" -agentpath:"$agent"=help -cp "$classes" Hot 0 >"$out" 2>&1
rc=$?
check "help prints the options and the program runs (rc $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "backends=LIST" "$out" && grep -q "^done" "$out"'

# --- agent loaded at start-up ------------------------------------------

d=$tmp/startup
mkdir -p "$d"
"$java" -agentpath:"$agent"=backends=perfmap,dir="$d" -cp "$classes" \
	Hot 1.5 >"$d/out" 2>"$d/err"
rc=$?
pid=$(sed -n 's/^pid //p' "$d/out")
map=$d/perf-$pid.map
check "start-up: Hot ran (rc $rc) and wrote $(basename "$map")" \
	eval '[ $rc -eq 0 ] && grep -q ^done "$d/out" && [ -s "$map" ]'
check "start-up: the agent printed nothing ($(wc -l <"$d/err") lines)" \
	eval '! grep -q perfinject-jvmti "$d/err"'
for m in "${hot_methods[@]}"; do
	check "start-up: perf map names $m" map_has "$map" "$m"
done
check "start-up: perf map names [stub] Interpreter" \
	map_has "$map" "[stub] Interpreter"
n=$(wc -l <"$map")
check "start-up: perf map has $n lines (want over 200: stubs and JDK methods)" \
	[ "$n" -gt 200 ]
check "start-up: names are pkg.Class.method(signature)" \
	map_has "$map" "java.lang.String.hashCode()I"

d=$tmp/jitdump
mkdir -p "$d"
"$java" -agentpath:"$agent"=backends=jitdump+perfmap,dir="$d" \
	-cp "$classes" Hot 0.5 >"$d/out" 2>"$d/err"
pid=$(sed -n 's/^pid //p' "$d/out")
size=$(stat -c %s "$d/jit-$pid.dump" 2>/dev/null || echo 0)
check "jitdump: jit-$pid.dump holds the code ($size bytes, want > 100000)" \
	[ "$size" -gt 100000 ]

# --- source lines through the jitdump -----------------------------------
# perf's own path: perf record -k mono, perf inject --jit. The lines
# perf report gives Hot.alpha's samples must be lines javac wrote into
# Hot.class for alpha (javap -l), and its loop body must be the hottest.
# A sample in code HotSpot gives no line (a method's entry, before its
# first PC description) has none ("??:0"): that is no line, not a wrong
# one, but 90% of alpha's samples must have one.
javap=$JAVA_HOME/bin/javap
if ! command -v perf >/dev/null || ! perf record -q -o /dev/null true \
	>/dev/null 2>&1; then
	echo "SKIP: lines: perf cannot record here"
elif [ ! -x "$javap" ]; then
	echo "SKIP: lines: no javap"
else
	d=$tmp/lines
	mkdir -p "$d"
	HOME=$d perf record -q -k mono -e cpu-clock -o "$d/perf.data" \
		"$java" -agentpath:"$agent"=backends=jitdump,dir="$d" \
		-cp "$classes" Hot 2 >"$d/out" 2>"$d/err"
	HOME=$d perf inject --jit -i "$d/perf.data" -o "$d/jit.data" \
		>"$d/inject.err" 2>&1
	HOME=$d perf report -i "$d/jit.data" --stdio --sort sym,srcline \
		--percent-limit 0 2>/dev/null |
		awk '/Hot\.alpha\(J\)J/ { print $1, $NF }' >"$d/alpha"
	# alpha's LineNumberTable: "line 17: 5" lines after its header.
	"$javap" -l -cp "$classes" Hot | awk '
		/static long alpha\(long\)/ { on = 1; next }
		on && /^  [a-z].*\(/ { on = 0 }
		on && /line [0-9]+:/ { sub(":", "", $2); print $2 }' \
		| sort -u >"$d/javac"
	got=$(awk '{ split($2, a, ":"); print a[2] }' "$d/alpha" | sort -u |
		tr '\n' ' ')
	want=$(tr '\n' ' ' <"$d/javac")
	bad=$(awk '$2 != "??:0" { split($2, a, ":"); print a[1] ":" a[2] }' "$d/alpha" |
		while IFS=: read -r f l; do
			[ "$f" = Hot.java ] && grep -qx "$l" "$d/javac" ||
				echo "$f:$l"
		done | tr '\n' ' ')
	# The share of alpha's samples with a line, in percent.
	lined=$(awk '{ sub("%", "", $1); all += $1; if ($2 != "??:0") with += $1 }
		     END { printf "%d\n", (all > 0 ? 100 * with / all : 0) }' "$d/alpha")
	hottest=$(sort -rn "$d/alpha" | awk 'NR == 1 { print $2 }')
	check "lines: Hot.alpha's samples are on lines javac gave it (got: ${got:-none}; javac: $want; not javac's: ${bad:-none}; with a line: $lined%)" \
		eval '[ -n "$got" ] && [ -z "$bad" ] && [ "$lined" -ge 90 ]'
	check "lines: alpha's hottest line is its loop body, Hot.java:17 (got ${hottest:-none})" \
		[ "$hottest" = Hot.java:17 ]
fi

# --- deoptimisation and unloading --------------------------------------

d=$tmp/deopt
mkdir -p "$d"
# Deopt goes from one phase to the next when told, a line on its
# standard input, once the JVM has said that the phase's code was
# compiled or unloaded: in the agent's lines and -XX:+PrintCompilation's,
# which come with the program's own through one pipe, in order. They go
# into the log as they are read; a line of the JVM may be cut by one of
# the program's ("phase ...", "done ..."): look for those anywhere in a
# line. timeout(1) ends a JVM that never gets there.
#   square: the agent reported Deopt.work compiled;
#   circle: the JVM made it not entrant, and the agent reported it again;
#   gone:   the agent reported Gone.spin compiled;
#   unload: the agent reported unloaded every Gone.spin it reported.
# Then Deopt says "done" and waits for its input to end, for the
# registry to be read.
mkfifo "$d/in"
exec {dout}< <(exec timeout 300 "$java" \
	-agentpath:"$agent"=backends=perfmap,dir="$d",verbose \
	-XX:+PrintCompilation -cp "$classes" Deopt <"$d/in" 2>&1)
jpid=$!
pids+=("$jpid")
exec {din}>"$d/in"
load_re='perfinject-jvmti: load +(0x[0-9a-f]+) [0-9]+ [0-9]+ '
unload_re='perfinject-jvmti: unload (0x[0-9a-f]+)'
told=0 notentrant=0 reloaded=0 dpid='' phase=''
declare -A gone=()
: >"$d/log"
while IFS= read -r -u "$dout" line; do
	printf '%s\n' "$line" >>"$d/log"
	[[ $line =~ ^pid\ ([0-9]+)$ ]] && dpid=${BASH_REMATCH[1]}
	[[ $line =~ phase\ (square|circle|gone|unload) ]] && phase=${BASH_REMATCH[1]}
	[[ $line =~ done\ -?[0-9]+$ ]] && break
	if [[ $line =~ ${load_re}Gone\.spin\( ]]; then
		gone[${BASH_REMATCH[1]}]=1
	elif [[ $line =~ $unload_re ]]; then
		unset "gone[${BASH_REMATCH[1]}]"
	fi
	case $phase in
	square) [[ $line =~ ${load_re}Deopt\.work\( ]] && next=1 ;;
	circle)
		[[ $line == *'Deopt::work'*'made not entrant'* ]] && notentrant=1
		[[ $line =~ ${load_re}Deopt\.work\( ]] && reloaded=1
		[ $notentrant = 1 ] && [ $reloaded = 1 ] && next=2 ;;
	gone) [ ${#gone[@]} -gt 0 ] && next=3 ;;
	unload) [ ${#gone[@]} = 0 ] && next=4 ;;
	*) next=0 ;;
	esac
	while [ "$told" -lt "${next:-0}" ]; do
		echo >&"$din"
		told=$((told + 1))
	done
done
if [[ $line =~ done\ -?[0-9]+$ ]] && [ -n "$dpid" ]; then
	"$reader" "$dpid" >"$d/registry" 2>"$d/registry.err"
	rrc=$?
else
	echo "deopt: Deopt ended in phase '${phase:-none}', before 'done' (timeout 300 s?); its log ends:"
	tail -n 5 "$d/log" | sed 's/^/  /'
	: >"$d/registry"
	rrc=1
fi
exec {din}>&-
cat <&"$dout" >>"$d/log"
exec {dout}<&-
wait "$jpid"
rc=$?
check "deopt: Deopt ran (rc $rc), the registry read (rc $rrc)" \
	eval '[ $rc -eq 0 ] && [ $rrc -eq 0 ]'
# One log, in order: the agent's lines, the program's "phase" lines and
# the JVM's -XX:+PrintCompilation lines.
deopted() {
	sed -n '/^phase circle/,$p' "$d/log" |
		grep -q 'Deopt::work .*made not entrant'
}
check "deopt: the JVM made the compiled Deopt.work not entrant after Circle" \
	deopted
work='Deopt.work(LDeopt$Shape;I)I'
awk -v w="$work" '
	/^phase / { phase = $2 }
	$2 == "load" && $6 == w {
		if (phase == "square")
			before++
		else if (phase != "" && !($3 in live))
			after[$3] = 1
		live[$3] = 1
	}
	$2 == "unload" { delete live[$3] }
	END {
		for (a in after) print a
		printf "%d\n", before > "/dev/stderr"
	}' "$d/log" >"$d/work-after" 2>"$d/work-before"
before=$(cat "$d/work-before")
after=$(wc -l <"$d/work-after")
check "deopt: the agent reported Deopt.work compiled before Circle ($before times)" \
	[ "${before:-0}" -gt 0 ]
check "deopt: ... and again, at new addresses, after ($after times)" \
	[ "${after:-0}" -gt 0 ]
n=$(awk -v w="$work" 'NR == FNR { after[$1] = 1; next }
	$4 == w && ($1 in after) { n++ } END { print n + 0 }' \
	"$d/work-after" "$d/registry")
check "deopt: the registry holds $n of the recompiled Deopt.work at the end" \
	[ "$n" -gt 0 ]
# Every Gone.spin code the JVM reported loaded it also reported unloaded.
awk '
	$2 == "load" && $6 == "Gone.spin(I)I" { loaded[$3] = 1; n++ }
	$2 == "unload" && ($3 in loaded) { delete loaded[$3]; u++ }
	END { left = 0; for (a in loaded) left++
	      printf "%d %d %d\n", n, u, left }' "$d/log" >"$d/gone"
read -r gl gu gleft <"$d/gone"
check "deopt: Gone.spin compiled $gl times, unloaded $gu times with its class" \
	eval '[ "${gl:-0}" -gt 0 ] && [ "$gu" = "$gl" ] && [ "$gleft" = 0 ]'
check "deopt: the registry no longer holds Gone.spin" \
	eval '! grep -q "Gone.spin" "$d/registry" && grep -q "Hot\|Deopt" "$d/registry"'
check "deopt: the agent's exit summary counts the unloads" \
	eval 'grep -qE "perfinject-jvmti: exit: .* [1-9][0-9]* unloads" "$d/log"'

# --- late attach -------------------------------------------------------

d=$tmp/attach
mkdir -p "$d"
# Hot runs until its standard input ends, when the checks are done;
# timeout(1) ends one they never get to. Its first line gives its pid.
mkfifo "$d/in"
exec {hout}< <(exec timeout 300 "$java" -cp "$classes" Hot - <"$d/in" 2>"$d/err")
tpid=$!
pids+=("$tpid")
exec {hin}>"$d/in"
read -r -u "$hout" line
jpid=${line#pid }
# Until C2 has compiled all three (tier 4, in use), as Compiler.codelist
# says, asked again as soon as it answers, while Hot runs.
compiled() {
	"$jcmd" "$jpid" Compiler.codelist >"$d/codelist" 2>/dev/null || return 1
	for m in "${hot_methods[@]}"; do
		awk -v m="$m" '$2 == 4 && $3 == 0 && $4 == m { ok = 1 }
			END { exit !ok }' "$d/codelist" || return 1
	done
}
until compiled; do
	kill -0 "$jpid" 2>/dev/null || break
done
check "attach: C2 compiled Hot's methods before the agent came (Hot: '$line', asked while it ran)" compiled
"$reader" "$jpid" >"$d/before" 2>&1
check "attach: no registry before the agent is loaded" \
	eval 'grep -q "no registry" "$d/before"'
# jcmd parses NAME=VALUE itself: the agent's options go in quotes.
"$jcmd" "$jpid" JVMTI.agent_load "$agent" \
	"\"backends=perfmap,dir=$d,verbose\"" >"$d/jcmd" 2>&1
check "attach: jcmd JVMTI.agent_load succeeded" \
	grep -q "return code: 0" "$d/jcmd"
"$jcmd" "$jpid" Compiler.codelist >"$d/codelist" 2>/dev/null
"$reader" "$jpid" >"$d/registry" 2>"$d/registry.err"
check "attach: read-registry read $(sed -n 's/entries: //p' "$d/registry.err") entries" \
	grep -q "entries: [1-9]" "$d/registry.err"
for m in "${hot_methods[@]}"; do
	check "attach: the registry names $m (replayed)" reg_has "$d/registry" "$m"
	check "attach: the perf map names $m" \
		map_has "$d/perf-$jpid.map" "$m"
done
check "attach: the registry names [stub] Interpreter (replayed)" \
	reg_has "$d/registry" "[stub] Interpreter"
# Each of Hot's methods in use per Compiler.codelist ("ID TIER STATE NAME
# [BLOB, CODE - END]") is in the registry at CODE with length END - CODE.
awk "$awk_hex"'NR == FNR {
		if ($4 ~ /^Hot\./ && $3 == 0) {
			code = $6; end = $8; sub(/\]$/, "", end)
			a = code; sub(/^0x0*/, "0x", a)
			want[a " " (hex(end) - hex(code)) " " $4] = 1
		}
		next
	}
	{ have[$1 " " $2 " " $4] = 1 }
	END {
		for (w in want) { n++; if (w in have) ok++ }
		printf "%d %d\n", n, ok
	}' "$d/codelist" "$d/registry" >"$d/cmp"
read -r n ok <"$d/cmp"
check "attach: $ok of $n of Hot's compiled methods in use are in the registry at the JVM's address and size" \
	eval '[ "${n:-0}" -ge 3 ] && [ "$ok" = "$n" ]'
# jcmd answers once Agent_OnAttach has returned: what the agent wrote
# then is in its files.
"$jcmd" "$jpid" JVMTI.agent_load "$agent" >"$d/jcmd2" 2>&1
check "attach: a second load succeeds and says the agent is already active" \
	eval 'grep -q "return code: 0" "$d/jcmd2" && grep -q "already active" "$d/err"'
lines=$(wc -l <"$d/perf-$jpid.map")
"$jcmd" "$jpid" JVMTI.agent_load "$agent" rundown >"$d/jcmd3" 2>&1
n=$(sed -n 's/.*rundown: \([0-9]*\) entries reported again/\1/p' "$d/err")
lines2=$(wc -l <"$d/perf-$jpid.map")
check "attach: rundown reported ${n:-no} entries again (perf map $lines to $lines2 lines)" \
	eval '[ "${n:-0}" -ge 3 ] && [ "$lines2" -ge $((lines + n)) ]'
exec {hin}>&-
cat <&"$hout" >"$d/out"
exec {hout}<&-
wait "$tpid"
rc=$?
check "attach: Hot ended when its input did (rc $rc)" [ "$rc" -eq 0 ]

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]

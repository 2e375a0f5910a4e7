#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# test-launcher.sh PERFINJECT BRIDGE FAKE_RUNTIME
#
# The perfinject command on this machine: what 'run' refuses and why,
# what it sets for each runtime (stand-in runtimes that print what they
# were given), that a real Node.js runs under it when one is installed,
# and 'list' and 'status'. One line per test; exits non-zero if any
# failed.

pi=$1 bridge=$2 fake=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/perfinject-launcher.XXXXXX") || exit 1
bin=$work/bin
mkdir -p "$bin"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
pass=0 fail=0

result() {
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
		printf '  PASS  launcher/%s\n' "$1"
	else
		fail=$((fail + 1))
		printf '  FAIL  launcher/%s\n' "$1"
		[ -n "$3" ] && sed 's/^/        /' <<<"$3"
	fi
}

# expect NAME STATUS PATTERN -- ARGS...: perfinject ARGS exits STATUS
# and says something matching PATTERN (extended regex) on stderr.
expect() {
	local name=$1 want=$2 pat=$3 rc out
	shift 4
	out=$(PATH=$bin:$PATH "$pi" "$@" 2>&1 >"$work/stdout")
	rc=$?
	[ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$out"
	result "$name" $? "exit $rc (want $want); said: $out"
}

# A stand-in runtime: answers its version query as @version does, and
# otherwise prints the variables the launcher sets.
standin() {
	local name=$1 query=$2
	cat >"$bin/$name" <<-EOF
	#!/bin/sh
	$query
	echo "LD_PRELOAD=\$LD_PRELOAD"
	echo "NODE_OPTIONS=\$NODE_OPTIONS"
	echo "MONO_ENV_OPTIONS=\$MONO_ENV_OPTIONS"
	echo "ERL_AFLAGS=\$ERL_AFLAGS"
	echo "NO_FILES=\$PERFINJECT_BRIDGE_NO_FILES"
	EOF
	chmod +x "$bin/$name"
}

# What a stand-in printed, for variable @1.
got() { sed -n "s/^$1=//p" "$work/stdout"; }

if "$pi" status | grep -q 'PR_PERF_JIT_CODE): yes'; then
	records=1
else
	records=0
fi

# Usage and commands that cannot be run.
expect usage-no-command 2 'no command given' -- run
expect usage-unknown-runtime 2 "unknown runtime 'perl'" -- run -r perl -- true
expect usage-unknown-command 2 "unknown command 'frobnicate'" -- frobnicate
expect not-found 127 'nosuch-cmd: command not found' -- run -- nosuch-cmd
expect bridge-missing 2 'cannot find /nonexistent/b.so' -- \
	run --bridge=/nonexistent/b.so -- true
printf '#!/bin/sh\necho java ran\n' >"$bin/java"
chmod +x "$bin/java"
expect java-refused 2 'use the JVMTI agent' -- run -- java -version

# A static program has no loader to preload anything.
if printf 'int main(void){return 0;}\n' |
	${CC:-gcc} -static -x c - -o "$work/static" 2>/dev/null; then
	expect static-refused 2 'linked statically' -- run -- "$work/static"
else
	result static-refused 1 "could not build a static program to try"
fi

# Set-user-ID to someone else: the loader ignores LD_PRELOAD.
cp /bin/true "$work/suid"
if [ "$(id -u)" -eq 0 ] && chown nobody "$work/suid" && chmod 4755 "$work/suid"; then
	expect setuid-refused 2 'set-user-ID' -- run -- "$work/suid"
else
	result setuid-refused 1 "needs root to make a set-user-ID program of another user"
fi

# Node: the version query carries the option; an old Node refuses it.
standin node 'case "$1" in --version) case "$NODE_OPTIONS" in *--perf-*) echo "node: $NODE_OPTIONS is not allowed in NODE_OPTIONS" >&2; exit 9;; esac; echo v10.24.0; exit 0;; esac'
expect node-old-refused 2 'Node.js 12 or later' -- run -- node app.js
standin node '[ "$1" = --version ] && { echo v20.20.2; exit 0; }'
expect node-plan 0 'Node.js v20.20.2 with NODE_OPTIONS="--perf-basic-prof"' -- \
	run -- node app.js
result node-options "$([ "$(got NODE_OPTIONS)" = --perf-basic-prof ]; echo $?)" \
	"NODE_OPTIONS=$(got NODE_OPTIONS)"
result node-preload "$([ "$(got LD_PRELOAD)" = "$bridge" ]; echo $?)" \
	"LD_PRELOAD=$(got LD_PRELOAD), want $bridge"
libc=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
NODE_OPTIONS=--max-old-space-size=64 LD_PRELOAD=$libc \
	expect node-jitdump 0 'NODE_OPTIONS="--max-old-space-size=64 --perf-prof"' -- \
	run --jitdump -- node app.js
result node-keeps-preload "$([ "$(got LD_PRELOAD)" = "$libc:$bridge" ]; echo $?)" \
	"LD_PRELOAD=$(got LD_PRELOAD)"
NODE_OPTIONS=--perf-prof expect node-option-once 0 'NODE_OPTIONS="--perf-prof"' -- \
	run -- node app.js
# A script run by node through env(1) is Node too.
printf '#!/usr/bin/env node\n' >"$work/app"
chmod +x "$work/app"
expect node-script 0 'Node.js v20.20.2' -- run -- "$work/app"

# Mono.
# Like Mono, the stand-in opens its (empty) perf map even for --version.
standin mono '[ "$1" = --version ] && { case "$MONO_ENV_OPTIONS" in --jitmap) : >/tmp/perf-$$.map; echo $$ >'"$work"'/mono-pid; echo "Mono JIT compiler version 6.8.0.105 (Debian 6.8.0.105+dfsg-3.3)"; exit 0;; esac; exit 1; }'
expect mono-plan 0 'Mono 6.8.0.105 with MONO_ENV_OPTIONS="--jitmap"' -- \
	run -- mono app.exe
mpid=$(cat "$work/mono-pid" 2>/dev/null)
result mono-probe-leaves-no-map "$([ -n "$mpid" ] && [ ! -e "/tmp/perf-$mpid.map" ]; echo $?)" \
	"/tmp/perf-$mpid.map is left behind"
rm -f "/tmp/perf-$mpid.map"
result mono-options "$([ "$(got MONO_ENV_OPTIONS)" = --jitmap ]; echo $?)" \
	"MONO_ENV_OPTIONS=$(got MONO_ENV_OPTIONS)"
expect mono-no-jitdump 2 'no jitdump option of Mono' -- run -j -- mono app.exe
standin mono '[ "$1" = --version ] && { echo "Unknown option --jitmap" >&2; exit 1; }'
expect mono-refuses-option 2 'MONO_ENV_OPTIONS=--jitmap failed' -- run -- mono app.exe

# Erlang: OTP 25 with the JIT, asked of erl beside the command.
erl_says() { standin erl "[ \"\$1\" = -noshell ] && { echo '$1'; exit 0; }"; }
erl_says "24 jit"
expect erlang-24-refused 2 'Erlang/OTP 24 has no' -- run -- erl -s app
erl_says "25 emu"
expect erlang-interpreter-refused 2 'runs the emu emulator, not the JIT' -- \
	run -- erl -s app
erl_says "25 jit"
expect erlang-plan 0 'Erlang/OTP 25 with ERL_AFLAGS="\+JPperf map"' -- \
	run -- erl -s app
cp "$bin/erl" "$bin/escript"
ERL_AFLAGS="+JPperf true" expect erlang-keeps-choice 0 'ERL_AFLAGS="\+JPperf true"' -- \
	run -- escript app.escript

# A command the launcher does not know: the bridge, and nothing else.
standin tool ''
expect unknown-runtime 0 'no runtime this command knows' -- run -- tool
result unknown-runtime-env "$([ -z "$(got NODE_OPTIONS)$(got ERL_AFLAGS)$(got MONO_ENV_OPTIONS)" ] &&
	[ "$(got LD_PRELOAD)" = "$bridge" ]; echo $?)" "$(cat "$work/stdout")"

# --no-files needs the kernel's records.
if [ $records = 1 ]; then
	expect no-files 0 'kept in memory' -- run --no-files -- node app.js
	result no-files-env "$([ "$(got NO_FILES)" = 1 ]; echo $?)" "$(cat "$work/stdout")"
else
	expect no-files-refused 2 '--no-files refused' -- run --no-files -- node app.js
fi

# The fake runtime, preloaded by the launcher, finds the bridge in it.
out=$("$pi" run -q -r none -- "$fake" seq "$work/seq" bridge 2>&1)
rc=$?
result preloads-the-bridge "$([ $rc -eq 0 ] && grep -q '^  PASS  seq/' <<<"$out" &&
	! grep -q '^  FAIL  ' <<<"$out"; echo $?)" "exit $rc; $(grep -v '^  PASS' <<<"$out" | head -n 20)"

# list: a process without a registry; then a real Node.js under run,
# whose registry must be its perf map, line for line.
sleep infinity &
pids+=($!)
expect list-no-registry 1 "process $! has no libperfinject registry" -- list $!
kill $! 2>/dev/null
expect list-bad-pid 2 "'12x' is no process id" -- list 12x

if command -v node >/dev/null; then
	# Until the stop file is there; its 300 s only bound a run whose
	# test was killed before it could stop it.
	cat >"$work/hot.js" <<-'EOF'
	function hotAlpha(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
	let x = 0;
	const end = Date.now() + 300000;
	while (Date.now() < end && !require('fs').existsSync(process.argv[2])) x += hotAlpha(20000);
	console.log(x);
	EOF
	(cd "$work" && exec "$pi" run -q -- node hot.js "$work/stop" \
		>"$work/node.out" 2>"$work/node.err") &
	npid=$!
	pids+=($npid)
	# Until hotAlpha is in its perf map (tail -F follows the file as node
	# writes it, from before it exists), or node ends.
	if grep -q -m1 hotAlpha < <(tail -c +1 -F --pid=$npid "/tmp/perf-$npid.map" 2>/dev/null); then
		# The list is taken with node stopped, so that the perf map (only
		# ever appended to) holds still. The bridge takes a line in after
		# node's write() put it into the map: if node stopped between the
		# two, the list lacks that line; then node goes on and is stopped
		# again, a few times.
		for _ in 1 2 3; do
			kill -STOP $npid
			size=$(stat -c %s "/tmp/perf-$npid.map")
			"$pi" list $npid >"$work/list" 2>"$work/list.err"
			lrc=$?
			kill -CONT $npid
			# What is live after each line: a range replaces those it overlaps.
			head -c "$size" "/tmp/perf-$npid.map" | awk 'function hex(s,    i, n) {
				n = 0
				for (i = 1; i <= length(s); i++)
					n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return n
			}
			{
				a = hex($1); e = a + hex($2)
				for (k in lo)
					if (lo[k] < e && a < hi[k])
						delete lo[k]
				lo[NR] = a; hi[NR] = e; line[NR] = $0
			}
			END { for (k in lo) print line[k] }' 2>/dev/null |
				sort -u >"$work/map"
			sort -u "$work/list" >"$work/list.sorted"
			d=$(diff "$work/map" "$work/list.sorted" | head -n 10)
			[ -z "$d" ] && break
		done
		result node-list-equals-map "$([ $lrc -eq 0 ] && [ -s "$work/map" ] &&
			grep -q hotAlpha "$work/list" && [ -z "$d" ]; echo $?)" \
			"list exit $lrc $(cat "$work/list.err"); $(wc -l <"$work/map") map lines, $(wc -l <"$work/list") listed; $d"
	else
		result node-list-equals-map 1 \
			"node ended before hotAlpha was in its perf map: $(tail -n 5 "$work/node.err")"
	fi
	touch "$work/stop"
	wait $npid
	result node-ran "$(grep -q '^[0-9]' "$work/node.out"; echo $?)" \
		"$(cat "$work/node.err")"
	rm -f "/tmp/perf-$npid.map" "$work"/isolate-*-v8.log
else
	result node-list-equals-map 1 "no node installed (scripts/deps installs it)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

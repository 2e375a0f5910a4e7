#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of perf-flamegraph and check-flamegraph: fold the fixtures and
# compare with the hand-counted stacks, build the HTML, and check it in
# headless chromium, including checks that must fail.
#
# Usage: flamegraph/tests/run-tests.sh
# Output goes to $FLAMEGRAPH_TEST_DIR (default build/flamegraph-test).

set -u
tests=$(cd "$(dirname "$0")" && pwd)
fg=$(dirname "$tests")
out=${FLAMEGRAPH_TEST_DIR:-$(dirname "$fg")/build/flamegraph-test}
mkdir -p "$out" || exit 1

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# Folded stacks, sorted the same way on both sides.
folded() { "$fg/perf-flamegraph" --folded "$@" | LC_ALL=C sort; }

for f in fixture fixture-callchain; do
	if diff -u <(grep -v '^#' "$tests/$f.folded" | LC_ALL=C sort) <(folded "$tests/$f.txt") \
		>"$out/$f.diff"; then
		pass "$f.txt folds to $f.folded"
	else
		fail "$f.txt does not fold to $f.folded:"; cat "$out/$f.diff"
	fi
	# Every sample line (the one with the time stamp) counts once.
	want=$(grep -cE '^ *[^ ].* [0-9]+\.[0-9]+:' "$tests/$f.txt")
	got=$(folded "$tests/$f.txt" | awk '{ n += $NF } END { print n + 0 }')
	if [ "$want" = "$got" ]; then
		pass "$f.txt: $got samples, as many as sample lines"
	else
		fail "$f.txt: $got samples folded, $want sample lines"
	fi
done

if cmp -s <(folded <"$tests/fixture-callchain.txt") <(folded "$tests/fixture-callchain.txt"); then
	pass "standard input reads as a file does"
else
	fail "standard input and file give different stacks"
fi

if ! msg=$("$fg/perf-flamegraph" --folded </dev/null 2>&1) && [[ $msg == *"no samples"* ]]; then
	pass "empty input is an error: $msg"
else
	fail "empty input was accepted"
fi

# The HTML page: npm packages installed once, then reused.
html=$out/fixture.html
cat "$tests/fixture.txt" "$tests/fixture-callchain.txt" >"$out/both.txt"
if "$fg/perf-flamegraph" -t 'perfinject <self-test>' -o "$html" "$out/both.txt" 2>"$out/build.log"; then
	pass "perf-flamegraph wrote $html ($(wc -c <"$html") bytes)"
else
	fail "perf-flamegraph failed:"; cat "$out/build.log"
	finish
fi
if "$fg/perf-flamegraph" -o "$out/again.html" "$out/both.txt" 2>"$out/again.log" &&
   [ ! -s "$out/again.log" ]; then
	pass "a second run reuses the installed packages"
else
	fail "a second run printed:"; cat "$out/again.log"
fi
if grep -qF '<title>perfinject &lt;self-test&gt;</title>' "$html"; then
	pass "the title is set and escaped"
else
	fail "no escaped title in $html"
fi
if grep -qiE '<script[^>]* src=|<link[^>]* href=' "$html"; then
	fail "$html loads scripts or styles from elsewhere"
else
	pass "$html has its scripts and styles inline"
fi
total=$(sed -n 's|.*<script type="application/json" id="flamegraph-data">\(.*\)</script>.*|\1|p' "$html" |
	node -e 'let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => console.log(JSON.parse(s).value))')
if [ "$total" = "$(grep -cE '^ *[^ ].* [0-9]+\.[0-9]+:' "$out/both.txt")" ]; then
	pass "the embedded data holds all $total samples"
else
	fail "the embedded data holds $total samples"
fi

# must_fail NAME WANT PAGE NAME...: check-flamegraph must reject PAGE,
# with WANT (a grep pattern) in its message; NAME says what it rejects.
must_fail() {
	local what=$1 want=$2 page=$3 log
	shift 3
	log=${page%.html}.log
	if "$chk" "$page" "${page%.html}.png" "$@" >"$log" 2>&1; then
		fail "check-flamegraph accepted $what"
	elif grep -q -- "$want" "$log"; then
		pass "check-flamegraph rejects $what"
	else
		fail "check-flamegraph failed for another reason on $page:"; cat "$log"
	fi
}

# In the browser.
chk=$fg/check-flamegraph
names=(jitdemo run_jit jit_alpha jit_beta '[unknown]' '[perf-71.map]' 'JIT worker')
if "$chk" --dom "$out/fixture.dom.html" "$html" "$out/fixture.png" "${names[@]}" >"$out/check.log" 2>&1; then
	pass "chromium draws ${names[*]}"
	sed 's/^/      /' "$out/check.log"
else
	fail "check-flamegraph on $html:"; cat "$out/check.log"
fi

# Must fail: a name the profile does not have.
cp "$html" "$out/absent.html"
must_fail "jit_gamma, which is not in the profile" \
	"'jit_gamma' is neither drawn nor in the embedded data" \
	"$out/absent.html" jit_alpha jit_gamma

# Must fail: the names are in the embedded data, but the page's script is
# broken, so nothing is drawn.
sed 's/flamegraph\.default()/flamegraph.broken()/' "$html" >"$out/broken.html"
must_fail "a page whose data has jit_alpha but that draws nothing" \
	"'jit_alpha' is in the embedded data but not drawn" "$out/broken.html" jit_alpha

# A JVM-sized profile (flamegraph/tests/jvm-like.js: 10,000 samples whose
# compiler and VM threads spread over some 30,000 distinct frames, a page
# of 2.7 MB unpruned, the size of the demo's JVM) drawn the default way:
# the narrow frames merged, a page of a few hundred kilobytes.
node "$tests/jvm-like.js" 10000 >"$out/jvm.txt"
jvm=$out/jvm.html
if "$fg/perf-flamegraph" -t 'JVM-sized' -o "$jvm" "$out/jvm.txt" 2>"$out/jvm-build.log"; then
	size=$(wc -c <"$jvm")
	frames=$(sed -n 's/.*data-flamegraph-frames="\([0-9]*\)".*/\1/p' "$jvm" | head -n 1)
	if [ "$size" -le 600000 ] && [ "${frames:-0}" -gt 0 ] && [ "$frames" -le 3000 ]; then
		pass "a JVM-sized profile makes a page of $size bytes and $frames frames"
	else
		fail "a JVM-sized profile makes a page of $size bytes and ${frames:-no} frames (want <= 600,000 and <= 3,000)"
	fi
else
	fail "perf-flamegraph on the JVM-sized profile:"; cat "$out/jvm-build.log"
fi
note=$(grep -o '[0-9,]* samples ([0-9.]*%) in [0-9,]* frames narrower than 0.1% merged' "$jvm")
if [ -n "$note" ]; then
	pass "the page says what was merged: $note"
else
	fail "the JVM-sized page does not say how many samples were merged"
fi
# Merging moves samples, it loses none: the root still holds them all.
total=$(sed -n 's|.*<script type="application/json" id="flamegraph-data">\(.*\)</script>.*|\1|p' "$jvm" |
	node -e 'let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => console.log(JSON.parse(s).value))')
if [ "$total" = 10000 ]; then
	pass "the merged page still holds all 10000 samples"
else
	fail "the merged page holds $total samples, not 10000"
fi
jnames=('Hot.alpha(J)J' 'Hot.beta(I)D' 'Hot.gamma(J)J' 'C1 CompilerThre')
if "$chk" "$jvm" "$out/jvm.png" "${jnames[@]}" >"$out/jvm-check.log" 2>&1; then
	pass "chromium draws ${jnames[*]} in the merged JVM-sized page"
	sed 's/^/      /' "$out/jvm-check.log"
else
	fail "check-flamegraph on $jvm:"; cat "$out/jvm-check.log"
fi
# A frame of 0.33% (33 samples, some 4 px) is drawn, but too narrow for
# its label: the check finds it by its frame, and says so.
narrow='C1Phase4::step1_0_0_2(Node*, int)'
if "$chk" "$jvm" "$out/jvm-narrow.png" "$narrow" >"$out/jvm-narrow.log" 2>&1 &&
   grep -qF "ok: '$narrow' is drawn as a frame" "$out/jvm-narrow.log" &&
   grep -q 'too narrow for its label' "$out/jvm-narrow.log"; then
	pass "a frame too narrow for its label is found drawn: $(grep -F "'$narrow'" "$out/jvm-narrow.log")"
else
	fail "check-flamegraph on a frame too narrow for its label:"; cat "$out/jvm-narrow.log"
fi

# The same profile with every frame kept (--minwidth 0): 30,000 frames
# that d3 takes seconds to draw. The check waits for the page's own word
# that it has drawn, however long that takes within a limit that grows
# with the frames; a check that waited for the DOM to stop changing
# failed here.
full=$out/jvm-full.html
if "$fg/perf-flamegraph" --minwidth 0 -o "$full" "$out/jvm.txt" 2>"$out/jvm-full-build.log" &&
   ! grep -q 'narrower than' "$full"; then
	pass "--minwidth 0 keeps every frame ($(wc -c <"$full") bytes)"
else
	fail "perf-flamegraph --minwidth 0 merged frames or failed:"; cat "$out/jvm-full-build.log"
fi
if "$chk" "$full" "$out/jvm-full.png" 'Hot.alpha(J)J' >"$out/jvm-full-check.log" 2>&1; then
	pass "chromium draws Hot.alpha(J)J in the unmerged JVM-sized page"
	sed 's/^/      /' "$out/jvm-full-check.log"
else
	fail "check-flamegraph on the unmerged $full:"; cat "$out/jvm-full-check.log"
fi

if ! msg=$("$fg/perf-flamegraph" --minwidth 1x "$out/both.txt" 2>&1 >/dev/null) &&
   [[ $msg == *"--minwidth wants a percentage"* ]]; then
	pass "a bad --minwidth is an error: $msg"
else
	fail "--minwidth 1x was accepted"
fi

# Must fail: a page that never says it has drawn (as an older
# perf-flamegraph made them), with the name of what was waited for.
sed 's/window\.flamegraphDrawn = /window.flamegraphSilent = /' "$html" >"$out/silent.html"
must_fail "a page that does not say it has drawn" 'no window.flamegraphDrawn' \
	"$out/silent.html" jit_alpha

finish

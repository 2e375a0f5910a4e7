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
if "$chk" "$html" "$out/absent.png" jit_alpha jit_gamma >"$out/absent.log" 2>&1; then
	fail "check-flamegraph accepted jit_gamma, which is not in the profile"
elif grep -q "'jit_gamma' is neither drawn nor in the embedded data" "$out/absent.log"; then
	pass "check-flamegraph rejects jit_gamma, which is not in the profile"
else
	fail "check-flamegraph failed for another reason:"; cat "$out/absent.log"
fi

# Must fail: the names are in the embedded data, but the page's script is
# broken, so nothing is drawn.
sed 's/flamegraph\.default()/flamegraph.broken()/' "$html" >"$out/broken.html"
if "$chk" "$out/broken.html" "$out/broken.png" jit_alpha >"$out/broken.log" 2>&1; then
	fail "check-flamegraph accepted a page that draws nothing"
elif grep -q "'jit_alpha' is in the embedded data but not drawn" "$out/broken.log"; then
	pass "check-flamegraph rejects a page whose data has jit_alpha but that draws nothing"
else
	fail "check-flamegraph failed for another reason on broken.html:"; cat "$out/broken.log"
fi

finish

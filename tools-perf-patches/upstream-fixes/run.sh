#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the reproducers of the upstream fixes on perf.
#
#   tools-perf-patches/upstream-fixes/run.sh           perf with the fixes
#   tools-perf-patches/upstream-fixes/run.sh --before  perf without them
#   tools-perf-patches/upstream-fixes/run.sh --export  write the series
#
# --export writes the commits of branch upstream-fixes in the worktree
# build/linux-upstream-fixes (made by the first form) back into this
# folder, as patch files and 'series': how a fix is added or changed
# (commit it there, export, and run the first form and --before).
#
# The first applies the series (git am) onto the pristine tree in the
# worktree build/linux-upstream-fixes and builds perf there into
# build/perf-upstream-fixes; the second builds the pristine tree's perf
# (worktree build/linux-upstream-pristine) into build/perf-upstream-pristine.
# Both with AddressSanitizer, so that a read or write out of bounds is an
# error and not luck, and otherwise with the options of scripts/build-perf.
# The builds are incremental on reruns.
#
# Then each reproducer, written by reproducers/gen-reproducers.c, is read
# with 'perf report -i FILE --stdio', and one line is printed for each:
#
#   PASS: 4-cmdline: perf reads it
#   FAIL: 4-cmdline: SUMMARY: AddressSanitizer: heap-buffer-overflow ...
#
# With --before the verdicts turn round: a reproducer passes if the
# pristine perf fails on it (a signal, an AddressSanitizer report, stack
# smashing), which shows that the test fails without the fix. The first
# form also checks that the patch files equal their regeneration
# (--export). The script exits 1 if a check failed, 2 if it could not run.

. "$(dirname "$0")/../../scripts/lib.sh"

HERE=$TOP/tools-perf-patches/upstream-fixes
PERF_OPTS=(NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JVMTI=1
	   EXTRA_CFLAGS="-fsanitize=address -fno-omit-frame-pointer"
	   LDFLAGS=-fsanitize=address)

before= export=
case ${1:-} in
--before) before=1; shift ;;
--export) export=1; shift ;;
esac
[ $# -eq 0 ] || { echo "usage: $0 [--before|--export]" >&2; exit 2; }

"$TOP/scripts/kernel-tree" prepare >&2 || exit 2

g() { git -C "$tree" "$@"; }

series_key() {
	cat "$HERE/series" "$HERE"/*.patch | sha256sum | cut -c1-16
}

# The worktree with the series applied, made again only when the series
# changes; commits made there and not exported stop it (PERFINJECT_FORCE=1
# drops them).
apply_series() {
	local key stamp=$tree/.upstream-fixes-series

	key=$(series_key)
	if [ -d "$tree" ] && [ -f "$stamp" ] &&
	   [ "$(cat "$stamp")" = "$key $(g rev-parse HEAD)" ]; then
		return 0
	fi
	if [ -d "$tree" ] && [ -f "$stamp" ] && [ -z "${PERFINJECT_FORCE:-}" ] &&
	   [ "${key}" != "$(cut -d' ' -f1 "$stamp")" ] &&
	   [ "$(cut -d' ' -f2 "$stamp")" != "$(g rev-parse HEAD)" ]; then
		die "$tree has commits that are not in $HERE (export them, or PERFINJECT_FORCE=1)"
	fi
	if [ ! -d "$tree" ]; then
		git -C "$LINUX" worktree add -q -f -B upstream-fixes "$tree" "$PRISTINE_TAG"
	fi
	msg "applying the upstream fixes onto $PRISTINE_TAG in $tree"
	g am --abort >/dev/null 2>&1 || true
	g checkout -q -f -B upstream-fixes "$PRISTINE_TAG"
	(cd "$HERE" && sed -e '/^#/d' -e '/^$/d' series | sed "s|^|$HERE/|" |
		xargs git -C "$tree" am -q) || die "the series does not apply"
	echo "$key $(g rev-parse HEAD)" >"$stamp"
}

if [ -n "$export" ]; then
	tree=$BUILD/linux-upstream-fixes
	[ -d "$tree" ] || die "no $tree to export from: '$0' makes it"
	n=$(g rev-list --count "$PRISTINE_TAG..upstream-fixes")
	[ "$n" -gt 0 ] || die "branch upstream-fixes has no commits on $PRISTINE_TAG"
	rm -f "$HERE"/[0-9][0-9][0-9][0-9]-*.patch
	g format-patch -q --zero-commit --no-signature -o "$HERE" \
		"$PRISTINE_TAG..upstream-fixes" || die "git format-patch failed"
	{
		echo "# SPDX-License-Identifier: GPL-2.0"
		(cd "$HERE" && ls [0-9][0-9][0-9][0-9]-*.patch)
	} >"$HERE/series"
	# The worktree now holds what the folder says.
	echo "$(series_key) $(g rev-parse HEAD)" >"$tree/.upstream-fixes-series"
	msg "wrote $n patches and series into $HERE"
	exit 0
elif [ -n "$before" ]; then
	tree=$BUILD/linux-upstream-pristine
	out=$BUILD/perf-upstream-pristine
	if [ ! -d "$tree" ]; then
		git -C "$LINUX" worktree add -q -f --detach "$tree" "$PRISTINE_TAG"
	fi
	[ "$(g rev-parse HEAD)" = "$(git -C "$LINUX" rev-parse "$PRISTINE_TAG^{commit}")" ] ||
		g checkout -q -f --detach "$PRISTINE_TAG"
	what="perf without the fixes"
else
	tree=$BUILD/linux-upstream-fixes
	out=$BUILD/perf-upstream-fixes
	apply_series
	what="perf with the fixes"
fi

mkdir -p "$out"
msg "building $what with AddressSanitizer into $out (about 4 minutes the first time)"
if ! nice -n 19 make -C "$tree/tools/perf" O="$out" -j"$(nproc)" \
		"${PERF_OPTS[@]}" >"$out/build.log" 2>&1; then
	grep -E 'error' "$out/build.log" | head -n 20 >&2
	echo "error: building $what failed (see $out/build.log)" >&2
	exit 2
fi
perf=$out/perf

# The patch files are what --export writes from the commits that git am
# made of them: none was edited by hand.
if [ -z "$before" ]; then
	regen=$(mktemp -d)
	g format-patch -q --zero-commit --no-signature -o "$regen" \
		"$PRISTINE_TAG..upstream-fixes" || exit 2
	same=1
	for f in "$regen"/*.patch; do
		cmp -s "$f" "$HERE/${f##*/}" || same=0
	done
	[ "$(find "$regen" -name '*.patch' | wc -l)" = \
	  "$(find "$HERE" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' | wc -l)" ] || same=0
	rm -rf "$regen"
	if [ $same = 1 ]; then
		echo "PASS: series: the patches equal their regeneration ($0 --export)"
	else
		echo "FAIL: series: the patches differ from their regeneration: run $0 --export"
		series_failed=1
	fi
fi

cc -O2 -Wall -Wextra -o "$out/gen-reproducers" "$HERE/reproducers/gen-reproducers.c" || exit 2
rm -rf "$out/reproducers"
mkdir -p "$out/reproducers"
"$out/gen-reproducers" "$out/reproducers" || exit 2

# What went wrong in a run, or nothing: a sanitizer's summary, stack
# smashing or the signal that ended perf.
failure() {
	local rc=$1 log=$2 what

	what=$(grep -m1 -E '^SUMMARY: AddressSanitizer|^==[0-9]+==ERROR: AddressSanitizer|stack smashing detected' "$log" || true)
	if [ -n "$what" ]; then
		echo "$what" | cut -c1-150
	elif [ "$rc" -eq $((128 + 24)) ]; then
		echo "perf spent $cpu_limit s of CPU time on it (SIGXCPU): a loop"
	elif [ "$rc" -gt 128 ]; then
		echo "perf was killed by SIG$(kill -l $((rc - 128)))"
	fi
}

# A reproducer is a few hundred bytes, which perf reads in well under a
# second of CPU. perf is bounded by the CPU time it spends, not by the
# clock: beside make check's guests, at nice 19, it may wait for a CPU
# for long without spending any, and only a loop spends this much.
cpu_limit=60
failed=${series_failed:-0}
for file in "$out"/reproducers/*.data; do
	name=$(basename "$file" .data)
	log=$out/reproducers/$name.log
	rc=0
	(ulimit -S -t "$cpu_limit" &&
	 ASAN_OPTIONS=detect_leaks=0 exec "$perf" report -i "$file" --stdio) \
		>"$log" 2>&1 </dev/null || rc=$?
	why=$(failure $rc "$log")
	if [ -z "$before" ]; then
		if [ -z "$why" ]; then
			echo "PASS: $name: perf reads it (exit $rc)"
		else
			echo "FAIL: $name: $why; see $log"
			failed=1
		fi
	elif [ -n "$why" ]; then
		echo "PASS: $name: $what fails: $why"
	else
		echo "FAIL: $name: $what reads it (exit $rc); the bug is not reproduced; see $log"
		failed=1
	fi
done
exit $failed

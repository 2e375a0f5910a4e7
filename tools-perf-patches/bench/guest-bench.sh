# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the wrappers that run a benchmark in the patched kernel
# (replay-time.sh, ring-bytes.sh) after scripts/lib.sh.

# bench_prepare FUNCTIONS DEFAULT: check FUNCTIONS (DEFAULT when empty),
# build what the guest runs (the debug kernel, perf, libperfinject and
# jitdemo) and set n, kernel and perf.
bench_prepare() {
	n=${1:-$2}
	case $n in
	''|*[!0-9]*|0) die "FUNCTIONS must be a positive number, not '$n'" ;;
	esac
	kernel=$("$TOP/scripts/build-kernel" debug)
	perf=$("$TOP/scripts/build-perf")
	msg "building libperfinject and jitdemo"
	make -s -C "$TOP/libperfinject" lib examples >/dev/null
}

# bench_run OUT TIMEOUT GUEST-SCRIPT ARGS...: run the guest script of this
# folder in the patched kernel with perf, OUT/run and ARGS, its output in
# OUT/vm.log (OUT is emptied first), and print the table it writes.
bench_run() {
	local out=$1 timeout=$2 script=$3
	shift 3
	rm -rf "$out"
	mkdir -p "$out"
	"$TOP/scripts/vm-run" --kernel "$kernel" --timeout "$timeout" --share "$out" -- \
		"$TOP/tools-perf-patches/bench/$script" "$perf" "$out/run" "$@" \
		>"$out/vm.log" 2>&1 ||
		{ tail -n 30 "$out/vm.log"; die "the run failed"; }
	grep -E '^\|' "$out/vm.log" || { tail -n 30 "$out/vm.log"; die "no table"; }
}

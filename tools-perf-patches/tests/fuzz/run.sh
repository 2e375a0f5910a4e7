#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh SECONDS: fuzz perf's readers of PERF_RECORD_JIT_CODE records and
# of JIT code registries with libFuzzer, AddressSanitizer and UBSan, for
# SECONDS each:
#
#   perf.data  fuzz-session: a perf.data file, read as perf report reads
#              it (the JIT records applied, samples resolved and sorted)
#   registry   fuzz-registry: a registry in a process's memory, changed
#              while perf reads it, read as perf record -p reads it
#   unwind     fuzz-unwind: the unwind information and line table of JIT
#              code, and a sample's user stack through it, read as perf
#              report -g --sort srcline reads them (libdw's CFI
#              interpreter on an ELF file made of the unwind information)
#
# It builds tools/perf of PERF_TREE (build/linux-tools, the kernel tree
# with the tools series) with clang and the sanitizers into FUZZ_BUILD
# (build/perf-fuzz), again only when the series, the tree or this folder
# changed, links the fuzzers against perf's objects (not its main nor its
# commands), makes the seeds, and runs each fuzzer with
# libperfinject/tests/run-fuzz.sh. Prints, for each,
#
#   PASS: WHAT: N inputs in S s, 0 crashes
#   FAIL: WHAT: ... (and the input that did it, kept in FUZZ_BUILD/fuzz-artifacts)
#
# and exits 1 if one failed, 2 if it could not run.
#
# Environment: PERF_TREE and FUZZ_BUILD, as above; TARGETS (perf.data
# registry unwind), the fuzzers to run; REPLAY_TARGETS, those of them that only
# read each of their seeds once (make check does so for perf.data, whose
# fuzzing finds upstream perf's own bugs within minutes: README.md);
# FUZZ_CORPUS_DIR, a folder where each fuzzer keeps what it found for the
# next run (by default each run starts from the seeds alone); PERF_E2E,
# the real recordings to seed from (build/perf-e2e, made by
# scripts/perf-e2e; without them only crafted files seed); PERF, a perf to
# write pipe-mode seeds with (build/perf-build/perf, if there).

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tree=${PERF_TREE:-$top/build/linux-tools}
out=${FUZZ_BUILD:-$top/build/perf-fuzz}
e2e=${PERF_E2E:-$top/build/perf-e2e}
perf_bin=${PERF:-$top/build/perf-build/perf}
seconds=${1:-}
targets=${TARGETS:-perf.data registry unwind}

die() { echo "run.sh: $*" >&2; exit 2; }
step() { echo "==> $*"; }

[ "$seconds" -gt 0 ] 2>/dev/null || { echo "usage: $0 SECONDS" >&2; exit 2; }
[ -f "$tree/tools/perf/util/jit-code.c" ] ||
	die "no perf with the tools series in $tree: make it with 'scripts/kernel-tree --tools apply' (make check does), or set PERF_TREE"
for tool in clang make objcopy cc sha256sum flock; do
	command -v $tool >/dev/null || die "$tool is missing ('scripts/deps all' installs what the project needs)"
done
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null ||
	die "clang cannot build a libFuzzer program (-fsanitize=fuzzer): install clang and its runtime (libclang-rt-dev)"
runner=$top/libperfinject/tests/run-fuzz.sh
[ -x "$runner" ] || die "no $runner"

mkdir -p "$out" || die "cannot make $out"
O=$out/perf
# One make at a time in the folder: two runs would build over each other.
exec 9>"$out/.lock"
flock 9

# perf's objects, as the normal build makes them (scripts/build-perf) but
# with clang, the sanitizers and coverage for libFuzzer, at -O1 with debug
# information (DEBUG=1) and, as in perf's release builds, without
# assertions (NDEBUG: upstream's BUG_ON() on malformed records is an
# assert), and without what the readers do not use: libpython, libperl,
# the JVMTI agent, the PMU event tables (NO_JEVENTS), libllvm, the BPF
# skeletons. Two checks of
# UBSan are off, for what upstream perf does everywhere and is harmless
# on the machines it runs on: reading a record wherever the one before
# it ends, unaligned after an odd size (alignment), and bsearch() or
# memcpy() of 0 elements at NULL (nonnull-attribute).
sanitize="-fsanitize=address,undefined,fuzzer-no-link"
sanitize+=" -fno-sanitize=alignment,nonnull-attribute -fno-sanitize-recover=all"
perf_make=(make -C "$tree/tools/perf" -f Makefile.perf O="$O" -j2
	CC=clang CXX=clang++ DEBUG=1 WERROR=0 NO_LIBPYTHON=1 NO_LIBPERL=1
	NO_JVMTI=1 NO_JEVENTS=1 NO_LIBLLVM=1 BUILD_BPF_SKEL=0
	EXTRA_CFLAGS="-O1 -DNDEBUG -fno-omit-frame-pointer $sanitize")
perf_libs=("$O/libperf-util.a" "$O/libperf-ui.a" "$O/libpmu-events.a"
	"$O/libapi/libapi.a" "$O/libperf/libperf.a" "$O/libsubcmd/libsubcmd.a"
	"$O/libsymbol/libsymbol.a")

# What perf's objects are made of: the series, the tree it is applied
# to (a tree that is not a git tree is made again, make tells what
# changed), and how they are built.
if [ "$(git -C "$tree" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$tree" && pwd -P)" ]; then
	tree_id=$(git -C "$tree" rev-parse 'HEAD^{tree}')
else
	tree_id="not a git tree, $(date +%s%N)"
fi
perf_key=$({
	cat "$top"/tools-perf-patches/*.patch
	echo "$tree_id"
	GIT_OPTIONAL_LOCKS=0 git -C "$tree" status --porcelain -- tools 2>/dev/null
	printf '%s\n' "${perf_make[@]}"
} | sha256sum | cut -d' ' -f1)

if [ "$(cat "$O/.fuzz-key" 2>/dev/null)" = "$perf_key" ] && [ -f "$O/.fuzz-libs" ]; then
	step "perf's objects with ASan and UBSan: up to date ($O)"
else
	step "building perf's objects with clang, ASan and UBSan into $O (2 to 4 minutes the first time)"
	mkdir -p "$O"
	rm -f "$O/.fuzz-key"
	start=$(date +%s)
	if ! nice -n 19 "${perf_make[@]}" "${perf_libs[@]}" >"$out/perf-build.log" 2>&1; then
		grep -E 'error|Error' "$out/perf-build.log" | head -n 20
		die "building perf failed (see $out/perf-build.log)"
	fi
	# The libraries perf links with (EXTLIBS), from its own Makefile
	# shellcheck disable=SC2016
	printf 'print-extlibs:\n\t@echo $(EXTLIBS) $(if $(LIBBPF_STATIC),$(LIBBPF))\n' >"$out/extlibs.mk"
	libs=$(nice -n 19 "${perf_make[@]}" -s -f "$out/extlibs.mk" FIXDEP=1 print-extlibs 2>/dev/null |
	       tail -n 1)
	case $libs in
	*-l*) echo "$libs" >"$O/.fuzz-libs" ;;
	*) die "cannot find the libraries perf links with (make print-extlibs said '$libs')" ;;
	esac
	echo "$perf_key" >"$O/.fuzz-key"
	step "perf's objects built in $(($(date +%s) - start)) s"
fi
read -r -a extlibs <"$O/.fuzz-libs"

# The fuzzers: compiled as perf compiles util/session.c (its flags are in
# the .cmd file fixdep leaves), linked with perf's libraries and stubs.c.
# fuzz-registry links a copy of perf's util objects in which
# process_vm_readv, usleep and clock_gettime are its own.
fuzz_key=$({
	stat -c '%n %s %Y' "${perf_libs[@]}" "$O/perf-util-in.o"
	cat "$here"/*.c "$here"/*.h "$here/../gen-jit-cases.c" "$0"
} | sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/.fuzz-key" 2>/dev/null)" = "$fuzz_key" ] &&
   [ -x "$out/fuzz-session" ] && [ -x "$out/fuzz-registry" ] && [ -x "$out/fuzz-unwind" ]; then
	step "the fuzzers: up to date"
else
	step "building the fuzzers"
	rm -f "$out/.fuzz-key"
	# shellcheck disable=SC2016
	cflags=$(sed -n '1s/^cmd_[^ ]* := //p' "$O/util/.session.o.cmd" |
		 sed 's/^[^ ]* //; s/ -Wp,-M[DT],[^ ]*//g; s/ -D"BUILD_STR(s)=$(pound)s"//; s/ -c -o .*$//')
	[ -n "$cflags" ] || die "no compiler flags in $O/util/.session.o.cmd"
	mkdir -p "$out/obj"
	for src in fuzz-session fuzz-registry fuzz-unwind stubs; do
		# shellcheck disable=SC2086
		(cd "$tree/tools/perf" &&
		 nice -n 19 clang $cflags -c "$here/$src.c" -o "$out/obj/$src.o") ||
			die "cannot compile $src.c"
	done
	nice -n 19 objcopy --redefine-sym process_vm_readv=fuzz_process_vm_readv \
		--redefine-sym usleep=fuzz_usleep --redefine-sym clock_gettime=fuzz_clock_gettime \
		"$O/perf-util-in.o" "$out/obj/perf-util-registry.o" ||
		die "cannot make the registry fuzzer's copy of perf-util-in.o"
	link=(nice -n 19 clang "-fsanitize=fuzzer,address,undefined")
	"${link[@]}" "$out/obj/fuzz-session.o" "$out/obj/stubs.o" -o "$out/fuzz-session" \
		-Wl,--start-group "${perf_libs[@]}" -Wl,--end-group "${extlibs[@]}" ||
		die "cannot link fuzz-session"
	"${link[@]}" "$out/obj/fuzz-unwind.o" "$out/obj/stubs.o" -o "$out/fuzz-unwind" \
		-Wl,--start-group "${perf_libs[@]}" -Wl,--end-group "${extlibs[@]}" ||
		die "cannot link fuzz-unwind"
	"${link[@]}" "$out/obj/fuzz-registry.o" "$out/obj/stubs.o" "$out/obj/perf-util-registry.o" \
		-o "$out/fuzz-registry" -Wl,--start-group "${perf_libs[@]:1}" -Wl,--end-group \
		"${extlibs[@]}" || die "cannot link fuzz-registry"
	for tool in gen-registry-seeds gen-unwind-seeds thin-perf-data; do
		cc -O2 -Wall -Wextra -Werror -o "$out/$tool" "$here/$tool.c" ||
			die "cannot build $tool"
	done
	cc -O2 -Wall -Wextra -Werror -I"$tree/tools/include/uapi" -o "$out/gen-jit-cases" \
		"$here/../gen-jit-cases.c" || die "cannot build gen-jit-cases"
	echo "$fuzz_key" >"$out/.fuzz-key"
fi

# Seeds. perf.data: every crafted case of gen-jit-cases in both byte
# orders; real recordings of scripts/perf-e2e, thinned to 32 KiB; a few
# cases in pipe mode. Registries: gen-registry-seeds.
session_max=131072
registry_max=65536
unwind_max=65536
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds/perf.data" "$seeds/registry" "$seeds/unwind" "$seeds/tmp"
"$out/gen-jit-cases" "$seeds/tmp" >/dev/null || die "gen-jit-cases failed"
for f in "$seeds"/tmp/*.data; do
	[ "$(stat -c %s "$f")" -le $session_max ] && mv "$f" "$seeds/perf.data/"
done
nreal=0
for f in "$e2e"/*.data; do
	[ -f "$f" ] || continue
	"$out/thin-perf-data" "$f" "$seeds/tmp/real" 32768 2>/dev/null || continue
	[ "$(stat -c %s "$seeds/tmp/real")" -le $session_max ] || continue
	mv "$seeds/tmp/real" "$seeds/perf.data/real-$(basename "$f")"
	nreal=$((nreal + 1))
done
npipe=0
if [ -x "$perf_bin" ]; then
	for c in valid fork escapes; do
		[ -f "$seeds/perf.data/$c.data" ] || continue
		HOME=$seeds/tmp PERF_CONFIG=/dev/null "$perf_bin" inject \
			-i "$seeds/perf.data/$c.data" -o - >"$seeds/perf.data/$c.pipe.data" 2>/dev/null &&
			npipe=$((npipe + 1))
	done
fi
"$out/gen-registry-seeds" "$seeds/registry" || die "gen-registry-seeds failed"
"$out/gen-unwind-seeds" "$seeds/unwind" || die "gen-unwind-seeds failed"
rm -rf "$seeds/tmp"
ncrafted=$(($(find "$seeds/perf.data" -type f | wc -l) - nreal - npipe))
nreal_msg="$nreal real recordings"
[ "$nreal" -gt 0 ] || nreal_msg="no real recordings (none in $e2e: scripts/perf-e2e makes them)"
step "seeds: $ncrafted crafted perf.data files, $nreal_msg, $npipe in pipe mode; $(find "$seeds/registry" -type f | wc -l) registries; $(find "$seeds/unwind" -type f | wc -l) unwind inputs"

# run TARGET FUZZER WHAT FLAGS [ASAN_OPTIONS]: one fuzzer, judged by
# run-fuzz.sh's last line
nfail=0
run() {
	local target=$1 fuzzer=$2 what=$3 flags=$4 asan=${5:-} log line runs artifact
	log=$out/$target.log
	case " ${REPLAY_TARGETS:-} " in
	*" $target "*)
		# Each seed once, no mutation: a regression run.
		flags+=" -runs=0"
		what+=", its seeds only"
		step "reading the seeds of $what" ;;
	*) step "fuzzing $what for $seconds s" ;;
	esac
	FUZZ_FLAGS=$flags FUZZ_CORPUS=${FUZZ_CORPUS_DIR:+$FUZZ_CORPUS_DIR/$target} \
		ASAN_OPTIONS=$asan UBSAN_OPTIONS=print_stacktrace=1 \
		nice -n 19 "$runner" "$out/$fuzzer" "$seconds" "$what" "$seeds/$target" \
		</dev/null >"$log" 2>&1
	line=$(grep '^fuzz: ' "$log" | grep -v 'the input is in' | tail -n 1)
	runs=$(sed -n 's/^fuzz: \([0-9]*\) runs in .*, 0 failures$/\1/p' <<<"$line")
	if [ -n "$runs" ]; then
		case $flags in
		*-runs=0*) echo "PASS: $what: $runs inputs, 0 crashes" ;;
		*) echo "PASS: $what: $runs inputs in $seconds s, 0 crashes" ;;
		esac
		return
	fi
	nfail=$((nfail + 1))
	artifact=$(sed -n 's/^fuzz: the input is in //p' "$log" | head -n 1)
	grep -vE '^fuzz: ' "$log" | tail -n 40
	echo "FAIL: $what: $(grep -m1 -E '^SUMMARY: |^fuzz-registry: |^fuzz: FAILED' "$log" |
		cut -c1-200)${artifact:+; the input: $artifact; again: ${asan:+ASAN_OPTIONS=$asan }$out/$fuzzer $artifact}"
}

# The unwind fuzzer's seeds reach what it fuzzes: a sample in A, called
# from B, unwinds to B through the CFI of both (and only with it), and
# gets its source line from A's line table.
check_unwind_seeds() {
	local seed want got
	# SEED:CHAIN, innermost first: "inlined" is the frame that A's line
	# table says is inlined into A where the sample is. (libFuzzer may
	# run an input twice, the second time to look for a leak.)
	for seed in 'sound:inlined fuzz_jit_a fuzz_jit_b' \
		    'pushed-rbp:inlined fuzz_jit_a fuzz_jit_b' \
		    'no-lines:fuzz_jit_a fuzz_jit_b' 'no-cfi:'; do
		want=${seed#*:} seed=${seed%%:*}
		got=$(FUZZ_VERBOSE=1 "$out/fuzz-unwind" "$seeds/unwind/$seed" 2>&1 |
		      sed -n 's/^chain: *//p' | head -n 1)
		if [ "$got" = "$want" ]; then
			echo "PASS: perf unwinds the fuzzer's seed $seed: ${want:-no chain without CFI}"
		else
			nfail=$((nfail + 1))
			echo "FAIL: perf unwinds the fuzzer's seed $seed: want the chain '$want', got '${got:-nothing}'"
		fi
	done
	want='srcline: Fuzz.java:20|frame: inlined Fuzz.java:20|frame: fuzz_jit_a Fuzz.java:10'
	got=$(FUZZ_VERBOSE=1 "$out/fuzz-unwind" "$seeds/unwind/sound" 2>&1 |
	      grep -E '^(srcline|frame): ' | head -n 3 | paste -sd'|')
	if [ "$got" = "$want" ]; then
		echo "PASS: perf gives the fuzzer's seed its source lines from the line table: $want"
	else
		nfail=$((nfail + 1))
		echo "FAIL: perf gives the fuzzer's seed its source lines from the line table: want '$want', got '${got:-nothing}'"
	fi
}

for target in $targets; do
	case $target in
	perf.data)
		# perf's header reader asks for what any size in the file says
		# before it reads that much: an allocation past 2 GiB fails, as
		# on a machine without the memory, rather than stop the run
		# (ASan would also touch a shadow of an eighth of it).
		run perf.data fuzz-session "perf's perf.data reader with JIT records" \
			"-max_len=$session_max -rss_limit_mb=2048 -malloc_limit_mb=2048 -close_fd_mask=3" \
			allocator_may_return_null=1:max_allocation_size_mb=2048 ;;
	registry)
		run registry fuzz-registry "perf's JIT code registry reader" \
			"-max_len=$registry_max -rss_limit_mb=2048 -malloc_limit_mb=320" ;;
	unwind)
		check_unwind_seeds
		run unwind fuzz-unwind "perf's DWARF unwinder and source lines on JIT code data" \
			"-max_len=$unwind_max -rss_limit_mb=2048 -malloc_limit_mb=320" ;;
	*)
		die "unknown target $target (perf.data, registry, unwind)" ;;
	esac
done
[ "$nfail" = 0 ]

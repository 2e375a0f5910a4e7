# SPDX-License-Identifier: GPL-2.0
#
# perfinject: JIT code records for perf.
#
#   make check     build what is needed and run every test (as root)
#   make demo      boot the patched kernel and show perf naming JIT code
#
# Other targets: deps, tree, kernel, bench-kernel, perf-test,
# perf-test-baseline, fuzz, bisect, upstream-fixes, deb, vm-shell,
# series-apply, series-export, clean, distclean. 'make help' lists them.

SHELL := /bin/bash
S := scripts

.PHONY: all help check demo bench deps tree kernel bench-kernel perf-test \
	perf-test-baseline fuzz bisect upstream-fixes deb series-apply series-export vm-shell clean distclean

# The long runs of every fuzzer: FUZZ_SECONDS each for libFuzzer's,
# KERNEL_FUZZ_CALLS calls for the kernel's (doc/hardening.md).
FUZZ_SECONDS ?= 3600
KERNEL_FUZZ_CALLS ?= 1000000

all: kernel

help:
	@sed -n '3,11p' Makefile | sed 's/^# \{0,1\}//'
	@echo
	@echo '  deps           install missing Debian packages'
	@echo '  tree           unpack the pinned kernel source into build/linux'
	@echo '  kernel         build the debug kernel the tests boot (cached)'
	@echo '  bench-kernel   build the kernel without debugging, for timings'
	@echo '  bench          libperfinject cost per call in the bench kernel'
	@echo '  perf-test      perf test with the tools series, against the baseline'
	@echo '  perf-test-baseline  perf test without the series: write the baseline'
	@echo '  fuzz           the long fuzzing runs (FUZZ_SECONDS, KERNEL_FUZZ_CALLS)'
	@echo '  bisect         build (and link) the kernel at every patch of the series'
	@echo '  upstream-fixes upstream perf without, then with, the fixes on their reproducers'
	@echo '  deb            build the Debian packages (debian/) into build/deb/'
	@echo '  series-apply   make build/linux branch perfinject = pristine + kernel/patches'
	@echo '  series-export  regenerate kernel/patches and selftests/ from that branch'
	@echo '  vm-shell       run CMD="..." in the debug kernel under QEMU'

check:
	$(S)/check

demo:
	$(S)/demo

bench:
	$(S)/bench $(BENCH_ARGS)

perf-test: deps
	$(S)/perf-test-run

perf-test-baseline: deps
	$(S)/perf-test-run --base

# The full form of the check make check runs as 'build-each --quick'.
bisect: deps
	$(S)/build-each

# The reproducers of tools-perf-patches/upstream-fixes: each must fail
# upstream perf without the fixes and pass with them (make check runs
# the second).
upstream-fixes: deps
	tools-perf-patches/upstream-fixes/run.sh --before
	tools-perf-patches/upstream-fixes/run.sh

fuzz: deps
	$(S)/kernel-fuzz $(KERNEL_FUZZ_CALLS)
	$(MAKE) -C libperfinject fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)
	$(MAKE) -C bridge fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)
	PERF=$$($(S)/build-perf) tools-perf-patches/tests/fuzz/run.sh $(FUZZ_SECONDS)

# The packages land beside the .changes whose path it prints.
deb:
	$(S)/build-deb

deps:
	$(S)/deps all

tree: deps
	$(S)/kernel-tree prepare

kernel: deps
	$(S)/build-kernel debug

bench-kernel: deps
	$(S)/build-kernel bench

series-apply: deps
	$(S)/kernel-tree apply

series-export:
	$(S)/kernel-tree export

vm-shell:
	$(S)/vm-run -- $(or $(CMD),sh -c 'uname -a; nproc')

clean:
	rm -rf build/kbuild-* build/headers build/vm build/patches.*

distclean:
	rm -rf build

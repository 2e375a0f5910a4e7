#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-jitdemo-srclines.sh SRC REPORT [MIN]
#
# REPORT is what `perf report --stdio --no-children --sort sym,srcline -g
# none` printed for a recording of libperfinject's jitdemo -s, whose line
# tables point into SRC, its examples/jitdemo.src. Every row of JIT code
# must be at a line of its own function's definition in SRC: jit:run in
# run, jit:mix in mix, every other jit: function in NAME (the template
# each is compiled from) or in the step() inlined into it. The check
# reads SRC, so a drift between jitdemo.c's line numbers and the file
# fails it.
#
# Prints up to 5 wrong rows, then "ROWS RIGHT STEPS": the rows of JIT
# code, those at their own function's lines, those in step(). Exits 0
# when every row is right, there are MIN (20) or more, and one is in
# step().

[ $# -eq 2 ] || [ $# -eq 3 ] || { sed -n '3,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }

awk -v min="${3:-20}" '
	FNR == NR {
		if ($1 == "def" || $2 == "def")
			def = $1 == "def" ? $2 : $3
		sub(/\(.*/, "", def)
		block[FNR] = def
		next
	}
	$2 == "[.]" && $3 ~ /^jit:/ {
		rows++
		want = $3 == "jit:run" ? "run" : $3 == "jit:mix" ? "mix" : "NAME"
		split($4, s, ":")
		b = s[1] == "jitdemo.src" ? block[s[2] + 0] : ""
		if (b == want || (want == "NAME" && b == "step")) {
			right++
			if (b == "step")
				steps++
		} else if (wrong++ < 5) {
			print "wrong line: " $0 " (in " (b ? b : "none") ", want " want ")"
		}
	}
	END {
		printf "%d %d %d\n", rows, right, steps
		exit !(rows >= min && right == rows && steps >= 1)
	}' "$1" "$2"

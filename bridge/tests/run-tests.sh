#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# run-tests.sh BRIDGE FAKE_RUNTIME TEST_OBJDIR
#
# Check that the fake runtime's units import the names they are built to
# test, run it in every mode with the bridge preloaded and without it,
# and compare the files it wrote. One line per test; exits non-zero if
# any failed. TIMEOUT (seconds) bounds each run.

bridge=$1 fake=$2 objdir=$3
NM=${NM:-nm}
work=$(mktemp -d "${TMPDIR:-/tmp}/perfinject-bridge.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# result NAME STATUS [DETAIL]
result() {
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
		printf '  PASS  %s\n' "$1"
	else
		fail=$((fail + 1))
		printf '  FAIL  %s\n' "$1"
		[ -n "$3" ] && sed 's/^/        /' <<<"$3"
	fi
}

# exit_says STATUS: what the fake runtime's exit status says. It gives
# itself 120 s (alarm(), SIGALRM), and timeout(1) TIMEOUT s, for the
# hooked calls of a mode: past them, one hung.
exit_says() {
	case $1 in
	124) echo "no end within ${TIMEOUT:-120} s (timeout): a hooked call hung?" ;;
	142) echo "no end within its 120 s (SIGALRM): a hooked call hung?" ;;
	*) echo "exit status $1" ;;
	esac
}

imports() {
	"$NM" -u "$objdir/$1.o" | awk '{ print $2 }' | sed 's/@.*//' | sort -u
}

# A unit built fortified or for large files calls the names it must.
check_imports() {
	local unit=$1 have missing=
	shift
	have=$(imports "$unit")
	for name in "$@"; do
		grep -qx -- "$name" <<<"$have" || missing+=" $name"
	done
	result "imports/$unit" "$([ -z "$missing" ]; echo $?)" \
		"${missing:+not imported:$missing}"
}

check_imports writers_fortify __fprintf_chk __vfprintf_chk __dprintf_chk \
	__vdprintf_chk __open_2 __openat_2
check_imports writers_lfs open64 openat64 __open64_2 __openat64_2 creat64 \
	fopen64 freopen64 pwrite64 pwritev64

# The optimised unit writes where no hook looks: nothing to import.
have=$(imports writers_inline)
result "imports/writers_inline" \
	"$(! grep -qxE 'putc_unlocked|fwrite_unlocked' <<<"$have"; echo $?)" \
	"still calls: $(grep -xE 'putc_unlocked|fwrite_unlocked' <<<"$have")"

# Every name the bridge hooks is called by some unit.
hooked=$("$NM" -D --defined-only "$bridge" | awk '$2 == "T" { print $3 }' |
	sed 's/@.*//' | sort -u)
called=$(for u in fake_runtime writers_plain writers_fortify writers_lfs \
	writers_inline; do imports $u; done | sort -u)
untested=$(comm -23 <(echo "$hooked") <(echo "$called") | tr '\n' ' ')
result "imports/every-hooked-name-called" "$([ -z "$untested" ]; echo $?)" \
	"never called: $untested"

# A digest and the permissions per file, names without pids; files of
# many threads in an order of their own (lines sorted, records sorted).
digests() {
	local dir=$1 mode=$2 f rel
	(cd "$dir" && find . -type f ! -name 'stderr-*' | sort) | while read -r f; do
		rel=$(sed -E 's/-[0-9]+(\.|$)/-N\1/' <<<"$f")
		case $mode:$f in
		threads:*.map) sort "$dir/$f" | sha256sum ;;
		threads:*.dump) "$fake" canon "$dir/$f" | sort | sha256sum ;;
		*) sha256sum <"$dir/$f" ;;
		esac | sed "s|-\$|$(stat -c %a "$dir/$f") $rel|"
	done | sort -k2
}

for mode in seq threads reentry selfcheck hostile inert; do
	with=$work/with/$mode without=$work/without/$mode
	mkdir -p "$with" "$without"
	LD_PRELOAD=$bridge timeout "${TIMEOUT:-120}" "$fake" $mode "$with/files" \
		bridge >"$with/out" 2>"$with/err"
	rc=$?
	grep -E '^  (PASS|FAIL)  ' "$with/out" | grep -v '/bridge-present$'
	pass=$((pass + $(grep -c '^  PASS  ' "$with/out")))
	fail=$((fail + $(grep -c '^  FAIL  ' "$with/out")))
	grep -q '^  FAIL  ' "$with/out" && grep -v '^  PASS  ' "$with/out" |
		grep -v '^  FAIL  ' | grep -v '^warming' | head -n 30
	if [ $rc -ne 0 ] && ! grep -q '^  FAIL  ' "$with/out"; then
		result "$mode/exit" 1 "$(exit_says $rc); $(tail -n 5 "$with/err")"
	fi

	# What the bridge said: only that the kernel lacks the feature.
	# Where it must say more, the fake runtime counts it itself.
	case $mode in
	selfcheck|hostile) ;;
	*)
		said=$(grep -v 'libperfinject: kernel backend off' "$with/err")
		result "stderr/$mode-quiet" "$([ -z "$said" ]; echo $?)" "$said"
		;;
	esac

	timeout "${TIMEOUT:-120}" "$fake" $mode "$without/files" \
		>"$without/out" 2>"$without/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		result "$mode/without-bridge" 1 \
			"$(exit_says $rc); $(grep -v '^  PASS  ' "$without/out" | head -n 20)"
		continue
	fi
	if [ $mode = inert ]; then
		i1=$(sed -n 's/^inert //p' "$with/out")
		i0=$(sed -n 's/^inert //p' "$without/out")
		a1=$(sed -n 's/^active //p' "$with/out")
		a0=$(sed -n 's/^active //p' "$without/out")
		result "inert/no-allocation-without-a-map" \
			"$([ -n "$i1" ] && [ "$i1" = "$i0" ]; echo $?)" \
			"heap grew by $i1 bytes with the bridge, $i0 without"
		result "inert/allocation-with-a-map" \
			"$([ -n "$a1" ] && [ "$a1" -gt "$a0" ]; echo $?)" \
			"heap grew by $a1 bytes with the bridge, $a0 without"
	fi
	d=$(diff <(digests "$with/files" $mode) <(digests "$without/files" $mode))
	result "files/$mode-identical-without-bridge" "$([ -z "$d" ]; echo $?)" \
		"$(head -n 20 <<<"$d")"
done

# No-files mode: the same files in memory, and nothing on disk.
nf=$work/nofiles
mkdir -p "$nf"
PERFINJECT_BRIDGE_NO_FILES=1 LD_PRELOAD=$bridge timeout "${TIMEOUT:-120}" \
	"$fake" nofiles "$nf/files" bridge >"$nf/out" 2>"$nf/err"
rc=$?
grep -E '^  (PASS|FAIL)  ' "$nf/out" | grep -v '/bridge-present$'
pass=$((pass + $(grep -c '^  PASS  ' "$nf/out")))
fail=$((fail + $(grep -c '^  FAIL  ' "$nf/out")))
grep -q '^  FAIL  ' "$nf/out" && grep -vE '^  (PASS|FAIL)  ' "$nf/out" | head -n 30
[ $rc -ne 0 ] && ! grep -q '^  FAIL  ' "$nf/out" &&
	result "nofiles/exit" 1 "$(exit_says $rc); $(tail -n 5 "$nf/err")"
said=$(grep -v 'libperfinject: kernel backend off' "$nf/err")
result "nofiles/stderr-quiet" "$([ -z "$said" ]; echo $?)" "$said"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

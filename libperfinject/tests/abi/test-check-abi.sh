#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# check-abi.sh must pass what keeps the ABI and fail what changes it
# without a version. Each case edits a copy of the library's sources,
# builds it and runs the check on it.
#
# Usage: test-check-abi.sh [SRCDIR]

set -euo pipefail

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$src/tests/abi/check-abi.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# A fresh copy of what the library is built from.
copy() {
	rm -rf "$tmp/lib"
	mkdir -p "$tmp/lib/tests/abi"
	cp -r "$src"/{src,include,abi,Makefile,libperfinject.map,libperfinject.pc.template,CHANGELOG.md} \
		"$tmp/lib/"
	cp "$check" "$tmp/lib/tests/abi/"
}

build() {
	MAKEFLAGS= make -s -j"$(nproc)" -C "$tmp/lib" OBJDIR=build lib >"$tmp/build.log" 2>&1 || {
		cat "$tmp/build.log"
		echo "FAIL: $1: the edited library does not build"
		failed=1
		return 1
	}
	ls "$tmp"/lib/build/libperfinject.so.*.*.* | head -n1
}

# expect pass|fail WHAT MESSAGE-PATTERN [--dump]
expect() {
	local want=$1 what=$2 pattern=$3 lib rc=0
	shift 3
	lib=$(build "$what") || return 0
	bash "$tmp/lib/tests/abi/check-abi.sh" "$@" "$lib" "$tmp/lib" \
		>"$tmp/out" 2>&1 || rc=$?
	if [ "$want" = pass ] && [ $rc -eq 0 ]; then
		echo "PASS: $what: accepted"
	elif [ "$want" = fail ] && [ $rc -ne 0 ] && grep -q -- "$pattern" "$tmp/out"; then
		echo "PASS: $what: refused ($(grep -- "$pattern" "$tmp/out" | head -n1 | cut -c1-100))"
	else
		tail -n 20 "$tmp/out"
		echo "FAIL: $what: check-abi exited $rc, wanted $want${pattern:+ with '$pattern'}"
		failed=1
	fi
}

copy
expect pass "the library as it is" ""

copy
sed -i 's/^\(\tuint64_t\t\tdump_index;.*\)$/\1\n\tuint64_t\t\tunused_field;/' \
	"$tmp/lib/src/internal.h"
grep -q unused_field "$tmp/lib/src/internal.h" || { echo "FAIL: no internal field added"; exit 1; }
expect pass "a field added to an internal structure" ""

copy
sed -i 's/^\(\tuint32_t tier;\t\t\/\* the runtime.*\)$/\tuint32_t new_field;\n\1/' \
	"$tmp/lib/include/perfinject/perfinject.h"
grep -q new_field "$tmp/lib/include/perfinject/perfinject.h" || { echo "FAIL: no public field added"; exit 1; }
expect fail "a field added to a public structure, same version" "the ABI differs"

copy
sed -i '/^\t\tperfinject__unload_range;$/d' "$tmp/lib/libperfinject.map"
expect fail "an exported symbol dropped, same version" "the ABI differs"

copy
cat >>"$tmp/lib/src/perfinject.c" <<'EOF'

PERFINJECT_API int perfinject__new_call(void);
PERFINJECT_API int perfinject__new_call(void)
{
	return 0;
}
EOF
sed -i 's/^\t\tperfinject__unload_index;$/&\n\t\tperfinject__new_call;/' \
	"$tmp/lib/libperfinject.map"
expect fail "a symbol added to an old node, same version" "the ABI differs"

# The same symbol in a new version, but in the old node: its record is
# written, and the step from the previous version refuses it.
sed -i 's/^\(#define PERFINJECT_MINOR_VERSION\t\)[0-9]*/\199/' \
	"$tmp/lib/include/perfinject/perfinject.h"
printf '\n## 0.99\n\nA test.\n' >>"$tmp/lib/CHANGELOG.md"
expect fail "a new version with a symbol in an old node" "outside node" --dump

copy
sed -i 's/^\(#define PERFINJECT_MINOR_VERSION\t\)[0-9]*/\199/' \
	"$tmp/lib/include/perfinject/perfinject.h"
expect fail "a new version with no CHANGELOG entry" "CHANGELOG.md has no entry"

copy
sed -i 's/^\(#define PERFINJECT_MINOR_VERSION\t\)[0-9]*/\199/' \
	"$tmp/lib/include/perfinject/perfinject.h"
printf '\n## 0.99\n\nA test.\n' >>"$tmp/lib/CHANGELOG.md"
expect fail "a new version with no ABI record" "no ABI record"

copy
sed -i 's/^\(#define PERFINJECT_MINOR_VERSION\t\)[0-9]*/\199/' \
	"$tmp/lib/include/perfinject/perfinject.h"
printf '\n## 0.99\n\nA test.\n' >>"$tmp/lib/CHANGELOG.md"
sed -i '/^\t\tperfinject__unload_range;$/d' "$tmp/lib/libperfinject.map"
expect fail "a new version without a symbol of the previous one" "breaks the ABI" --dump

exit $failed

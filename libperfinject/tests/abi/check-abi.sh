#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The library's ABI against the one recorded for its version.
#
# Usage: check-abi.sh [--dump] LIB [SRCDIR]
#
# SRCDIR (default: the libperfinject directory this script is in) holds
# include/perfinject/perfinject.h, whose PERFINJECT_{MAJOR,MINOR}_VERSION
# name the version, and abi/libperfinject-MAJOR.MINOR.abi, the ABI that
# version published: the exported symbols with their version nodes and
# every type the public header declares, as abidw(1) writes them.
#
# It fails when:
#  - LIB's ABI differs from its version's record in any way: an exported
#    symbol or a public structure changed without a new version;
#  - the record of this version, against the previous version's, removes
#    or changes anything incompatibly within one major version, or adds a
#    symbol outside this version's node, LIBPERFINJECT_MAJOR.MINOR.0;
#  - CHANGELOG.md has no entry for this version.
# abi/libperfinject-MAJOR.MINOR.suppr, where it exists, lists changes of
# that version against the previous one that were reviewed and are not
# breaks, each with its reason (abidiff's suppression format).
#
# --dump writes LIB's ABI as this version's record instead, for a new
# version, after the checks above that do not need it.
#
# The records describe x86_64, where they are made; on other
# architectures the comparison of types is not made (sizes differ).

set -euo pipefail

dump=0
if [ "${1:-}" = --dump ]; then
	dump=1
	shift
fi
[ $# -ge 1 ] || { echo "usage: $0 [--dump] LIB [SRCDIR]" >&2; exit 2; }
lib=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
hdr=$src/include/perfinject/perfinject.h

die() { echo "check-abi: $*" >&2; exit 1; }

[ -f "$lib" ] || die "no library at $lib"
for t in abidw abidiff; do
	command -v $t >/dev/null ||
		die "$t is missing: install abigail-tools (scripts/deps lib)"
done

getver() {
	sed -n "s/^#define PERFINJECT_$1_VERSION[[:space:]]*\([0-9]*\)/\1/p" "$hdr"
}
major=$(getver MAJOR)
minor=$(getver MINOR)
[ -n "$major" ] && [ -n "$minor" ] || die "no version in $hdr"
ver=$major.$minor
node=LIBPERFINJECT_$ver.0
record=$src/abi/libperfinject-$ver.abi

grep -q "^## $ver\b" "$src/CHANGELOG.md" 2>/dev/null ||
	die "CHANGELOG.md has no entry '## $ver' for this version"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dw() {
	abidw --headers-dir "$src/include/perfinject" --drop-private-types \
		--no-corpus-path --no-comp-dir-path --short-locs "$1"
}

# A record as abidiff reads it: without the comment lines it starts with.
plain() {
	sed '/^<!--.*-->$/d' "$1" >"$tmp/$2"
	echo "$tmp/$2"
}

# name@version of every exported symbol in an ABI record.
symbols() {
	sed -n "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)'.*is-defined='yes'.*/\1@\2/p" \
		"$1" | sort -u
}

# The record before this version's: the highest lower version.
previous() {
	local f v
	for f in "$src"/abi/libperfinject-*.abi; do
		[ -e "$f" ] || continue
		v=${f##*/libperfinject-}
		v=${v%.abi}
		[ "$v" = "$ver" ] && continue
		# Lower than this version?
		[ "$(printf '%s\n%s\n' "$v" "$ver" | sort -V | head -n1)" = "$v" ] ||
			continue
		echo "$v $f"
	done | sort -V | tail -n1 | cut -d' ' -f2
}

arch=$(uname -m)
dw "$lib" >"$tmp/lib.abi" || die "abidw failed on $lib"

if [ $dump = 1 ]; then
	[ "$arch" = x86_64 ] || die "records are made on x86_64, not $arch"
	mkdir -p "$src/abi"
	{
		echo "<!-- SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) -->"
		echo "<!-- libperfinject $ver: written by tests/abi/check-abi.sh --dump -->"
		cat "$tmp/lib.abi"
	} >"$record"
	echo "check-abi: wrote ${record#"$src"/}"
fi

[ -f "$record" ] ||
	die "no ABI record for version $ver (abi/libperfinject-$ver.abi): review 'abidiff' against the previous version, then run 'make abi-dump'"

# 1. The library is what its version published.
if [ "$arch" = x86_64 ]; then
	rc=0
	abidiff "$(plain "$record" record.xml)" "$tmp/lib.abi" >"$tmp/diff" || rc=$?
	# Bit 0: abidiff's own error; bit 1: usage.
	[ $((rc & 3)) -eq 0 ] || die "abidiff failed ($rc) on abi/libperfinject-$ver.abi"
	if [ $rc -ne 0 ]; then
		cat "$tmp/diff" >&2
		die "the ABI differs from abi/libperfinject-$ver.abi (abidiff status $rc) while the version is still $ver: an exported symbol or a public structure changed. If that is meant, raise PERFINJECT_MINOR_VERSION, put new symbols in a new node of libperfinject.map, say it in CHANGELOG.md and run 'make abi-dump'"
	fi
else
	echo "check-abi: the records describe x86_64; types are not compared on $arch"
fi
symbols "$tmp/lib.abi" >"$tmp/lib.syms"
symbols "$record" >"$tmp/record.syms"
if ! cmp -s "$tmp/lib.syms" "$tmp/record.syms"; then
	diff "$tmp/record.syms" "$tmp/lib.syms" >&2 || true
	die "the exported symbols differ from abi/libperfinject-$ver.abi ('<' recorded, '>' built)"
fi

# 2. This version against the previous one.
prev=$(previous)
if [ -n "$prev" ]; then
	pver=${prev##*/libperfinject-}
	pver=${pver%.abi}
	rc=0
	suppr=()
	[ -f "$src/abi/libperfinject-$ver.suppr" ] &&
		suppr=(--suppressions "$src/abi/libperfinject-$ver.suppr")
	abidiff "${suppr[@]}" "$(plain "$prev" prev.xml)" \
		"$(plain "$record" record.xml)" >"$tmp/diff" || rc=$?
	[ $((rc & 3)) -eq 0 ] || die "abidiff failed ($rc) on $pver against $ver"
	# Bit 3: an incompatible change (a symbol removed, a type broken).
	if [ $((rc & 8)) -ne 0 ] && [ "${pver%%.*}" = "$major" ]; then
		cat "$tmp/diff" >&2
		die "$ver breaks the ABI of $pver (abidiff status $rc) within major version $major"
	fi
	symbols "$prev" >"$tmp/prev.syms"
	comm -13 "$tmp/prev.syms" "$tmp/record.syms" >"$tmp/added"
	bad=$(grep -v "@$node\$" "$tmp/added" || true)
	[ -z "$bad" ] ||
		die "symbols new in $ver outside node $node: $(echo $bad)"
	removed=$(comm -23 "$tmp/prev.syms" "$tmp/record.syms")
	[ -z "$removed" ] || [ "${pver%%.*}" != "$major" ] ||
		die "symbols of $pver gone in $ver: $(echo $removed)"
fi
echo "check-abi: the ABI is that of libperfinject $ver ($(wc -l <"$tmp/lib.syms") symbols${prev:+, compatible with $pver})"

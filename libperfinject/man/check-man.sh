#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Check the man pages against the public header:
#  - every PERFINJECT_API function and every function-like PERFINJECT_*
#    macro of the header has a page NAME.3;
#  - every section 3 page names something the header declares;
#  - every page starts with the SPDX line, and a full page's .TH names it;
#  - every page renders without warnings (man --warnings), .so links
#    included, from a man3/man7 tree as they are installed.
#
# Usage: man/check-man.sh [header]   (CC, MAN_WARNINGS may be set)
# Exit: 0 all good, 1 a check failed, 77 man or a C preprocessor missing.

set -u

mandir=$(cd "$(dirname "$0")" && pwd)
header=${1:-$mandir/../include/perfinject/perfinject.h}
spdx='.\" SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause'
cc=${CC:-cc}
fail=0

err()
{
	echo "check-man: $*" >&2
	fail=1
}

for tool in man "$cc"; do
	if ! command -v "$tool" >/dev/null; then
		echo "check-man: SKIP: $tool not found (apt-get install man-db groff gcc)" >&2
		exit 77
	fi
done
if [ ! -r "$header" ]; then
	echo "check-man: cannot read $header" >&2
	exit 1
fi

# Let the preprocessor drop comments and mark the exports: the header
# only defines PERFINJECT_API when it is not defined already.
funcs=$("$cc" -E -P -DPERFINJECT_API=__perfinject_export__ "$header" |
	tr '\n' ' ' | grep -oE '__perfinject_export__[^(;]*\(' |
	sed -E 's/[[:space:]]*\($//; s/.*[^A-Za-z0-9_]//' | sort -u)
if [ -z "$funcs" ]; then
	err "no PERFINJECT_API function found in $header"
fi
macros=$(sed -nE 's/^#[[:space:]]*define[[:space:]]+(PERFINJECT_[A-Za-z0-9_]*)\(.*/\1/p' \
	"$header" | sort -u)

for name in $funcs $macros; do
	[ -e "$mandir/$name.3" ] || err "$name has no page $name.3"
done

for page in "$mandir"/*.[37]; do
	base=$(basename "$page")
	name=${base%.*}
	section=${base##*.}

	if [ "$(head -n1 "$page")" != "$spdx" ]; then
		err "$base: first line is not the SPDX line"
	fi
	if ! grep -q '^\.so ' "$page"; then
		th=$(sed -nE 's/^\.TH[[:space:]]+"?([^ "]+)"?[[:space:]]+([0-9]).*/\1 \2/p' "$page")
		[ "$th" = "$name $section" ] ||
			err "$base: .TH says '$th', want '$name $section'"
	fi
	if [ "$section" = 3 ] && ! grep -qw -- "$name" "$header"; then
		err "$base: $name is not in $header (stale page?)"
	fi
done

# Render from an installed-like tree, so that ".so man3/X.3" resolves.
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/man3" "$tree/man7"
cp "$mandir"/*.3 "$tree/man3/" 2>/dev/null
cp "$mandir"/*.7 "$tree/man7/" 2>/dev/null
for page in "$tree"/man3/* "$tree"/man7/*; do
	[ -e "$page" ] || continue
	rel=${page#"$tree"/}
	out=$(cd "$tree" && LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings${MAN_WARNINGS:+=$MAN_WARNINGS} -l "$rel" 2>&1 >/dev/null)
	if [ -n "$out" ]; then
		err "$(basename "$rel") does not render cleanly:"
		echo "$out" | sed 's/^/    /' >&2
	fi
done

[ $fail = 0 ] && echo "check-man: $(ls "$mandir"/*.[37] | wc -l) pages OK"
exit $fail

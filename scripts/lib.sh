# SPDX-License-Identifier: GPL-2.0
# Common settings for the project's scripts; sourced, not run.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PERFINJECT_BUILD:-$TOP/build}
# Kernel images survive fresh clones of the repository on the same machine.
CACHE=${PERFINJECT_CACHE:-/var/cache/perfinject}
LINUX=$BUILD/linux

# shellcheck source=../kernel/VERSION
. "$TOP/kernel/VERSION"

# The pristine tree is committed with a fixed identity and date, so its
# commit id, and with it the series' base-commit line, is the same everywhere.
PRISTINE_TAG=pristine-$(printf '%s' "$LINUX_SOURCE_VERSION" | tr '~:' '-.')
SERIES_BRANCH=perfinject

msg() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# timed WHAT COMMAND...: run COMMAND, then say how long WHAT took (on
# stderr, so that a command whose output is captured can be timed too).
# A failing COMMAND ends the script (set -e), so call it outside of
# conditions.
timed() {
	local what=$1 t0=$SECONDS
	shift
	"$@"
	msg "$what took $((SECONDS - t0)) s"
}

# What of the kernel series a kernel build reads: each patch's changes to
# files outside Documentation/, tools/testing/ and MAINTAINERS, without
# the commit messages, one block per patch that has any. A series whose
# commit messages, documentation or selftests change builds the same
# kernels.
series_build_input() {
	local p
	for p in "$TOP"/kernel/patches/*.patch; do
		[ -e "$p" ] || continue
		awk '
		/^diff --git / {
			keep = $3 !~ /^a\/(MAINTAINERS$|Documentation\/|tools\/testing\/)/
			if (keep && !started) { print "== patch"; started = 1 }
		}
		/^-- $/ && keep { keep = 0 }
		keep' "$p"
	done
}

# The config fragments of a kernel flavour, one path a line: base.config,
# the flavour it extends ('# extends: NAME' in its fragment), its own.
kernel_fragments() {
	local f=$TOP/kernel/config/$1.config ext
	echo "$TOP/kernel/config/base.config"
	ext=$(sed -n 's/^# extends: //p' "$f")
	[ -z "$ext" ] || echo "$TOP/kernel/config/$ext.config"
	echo "$f"
}

# A key over everything that goes into a kernel image.
kernel_key() {
	local flavour=$1
	{
		printf '%s\n' "$LINUX_SOURCE_VERSION" "$flavour"
		series_build_input
		kernel_fragments "$flavour" | xargs cat
	} | sha256sum | cut -c1-16
}

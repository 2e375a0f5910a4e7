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

# A key over everything that goes into a kernel image.
kernel_key() {
	local flavour=$1
	{
		printf '%s\n' "$LINUX_SOURCE_VERSION" "$flavour"
		cat "$TOP"/kernel/patches/*.patch 2>/dev/null || true
		cat "$TOP"/kernel/config/base.config
		cat "$TOP/kernel/config/$flavour.config"
	} | sha256sum | cut -c1-16
}

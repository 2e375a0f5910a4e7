#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# 'make install DESTDIR=...' into a staging folder, then pkg-config finds
# the library there and the examples build against that copy, shared and
# static, and run; the archive exports the API only; 'make uninstall'
# removes it all. Exit 0 pass, 1 fail, 77 skip.

set -u
cd "$(dirname "$0")/.." || exit 1
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The build make check runs for: URCU=1 links liburcu, which a static
# link of the archive needs too (Requires.private).
urcu=${URCU:-0}
make -s install PREFIX=/usr DESTDIR="$stage" OBJDIR="$stage/obj" URCU="$urcu" \
	>"$stage/install.log" 2>&1 ||
	{ cat "$stage/install.log"; fail "make install"; }
for f in usr/include/perfinject/perfinject.h usr/lib/libperfinject.a \
	 usr/lib/libperfinject.so usr/lib/pkgconfig/libperfinject.pc \
	 usr/share/man/man7/libperfinject.7 usr/share/man/man3/perfinject__new.3; do
	[ -e "$stage/$f" ] || fail "$f not installed"
done
soname=$(readlink "$stage/usr/lib/libperfinject.so")
[ "$soname" = libperfinject.so.0 ] || fail "libperfinject.so -> $soname"

pc=$stage/usr/lib/pkgconfig/libperfinject.pc
if [ "$urcu" = 1 ]; then
	grep -qx 'Requires.private: liburcu-bp liburcu-cds' "$pc" ||
		fail "URCU=1: libperfinject.pc has no Requires.private for liburcu"
	# Where the system keeps liburcu's .pc files, which it requires.
	urcu_pc=$(pkg-config --variable=pcfiledir liburcu-bp) ||
		fail "pkg-config finds no liburcu-bp"
else
	! grep -q 'Requires' "$pc" || fail "libperfinject.pc requires: $(grep Requires "$pc")"
	urcu_pc=
fi

export PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_LIBDIR=$stage/usr/lib/pkgconfig${urcu_pc:+:$urcu_pc}
flags=$(pkg-config --cflags --libs libperfinject) || fail "pkg-config"
case $flags in
*"-I$stage/usr/include"*"-L$stage/usr/lib"*"-lperfinject"*) ;;
*) fail "pkg-config says: $flags" ;;
esac

for static in 0 1; do
	mkdir -p "$stage/ex$static"
	cp examples/*.c examples/Makefile "$stage/ex$static/"
	make -s -C "$stage/ex$static" PKG_CONFIG=1 STATIC=$static \
		>"$stage/ex.log" 2>&1 || { cat "$stage/ex.log"; fail "examples (STATIC=$static)"; }
	LD_LIBRARY_PATH=$stage/usr/lib "$stage/ex$static/minimal" >/dev/null ||
		fail "minimal (STATIC=$static) does not run"
done

# The archive shows a program the API and nothing else.
internal=$(nm -g --defined-only "$stage/usr/lib/libperfinject.a" 2>/dev/null |
	awk 'NF == 3 && $3 !~ /^perfinject/ { print $3 }')
[ -z "$internal" ] || fail "libperfinject.a exports internal symbols: $internal"

# uninstall removes every file install put there.
make -s uninstall PREFIX=/usr DESTDIR="$stage" OBJDIR="$stage/obj" \
	>"$stage/uninstall.log" 2>&1 || { cat "$stage/uninstall.log"; fail "make uninstall"; }
left=$(find "$stage/usr" -type f -o -type l | head -5)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install, pkg-config, examples shared and static, uninstall: all fine"

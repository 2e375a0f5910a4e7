#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# run-fuzz.sh FUZZER SECONDS: run the bridge's parser fuzzer
# (tests/fuzz_parse.c) for SECONDS, with libperfinject's runner
# (PI_RUN_FUZZ, else ../libperfinject/tests/run-fuzz.sh: its messages,
# limits and FUZZ_CORPUS), from seeds made here: perf-map lines and jitdump records,
# and the first 4 KiB of a real perf map and jitdump of Node.js when node
# is installed.

fuzzer=$1 seconds=$2
[ -x "$fuzzer" ] && [ "$seconds" -gt 0 ] 2>/dev/null ||
	{ echo "usage: $0 FUZZER SECONDS" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/perfinject-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/seeds"

# Byte 0 of an input: bit 0 the format (0 perf map, 1 jitdump).
{ printf '\x00'; printf '%s\n' \
	'7f0000001000 100 JS:*foo /srv/a.js:1:2' \
	'7f0000001000 100 JS:*bar /srv/a.js:3:2' \
	'0x00007f0000002000 0x0000000000000040 $m:f/1 name with spaces' \
	'7f0000001080 200 Builtin:over-two'; printf '7f0000003000 10 cut'; } \
	>"$work/seeds/map"
python3 - "$work/seeds/jitdump" <<'PY'
import struct, sys
pid = 4242
out = b'\x01' + struct.pack('<IIIIIIQQ', 0x4A695444, 1, 40, 62, 0, pid, 1, 0)
def rec(id_, body):
    return struct.pack('<IIQ', id_, 16 + len(body), 2) + body
def load(addr, size, idx, name, code=b'\x55\x48\x89\xe5\xc3'):
    return rec(0, struct.pack('<IIQQQQ', pid, pid, addr, addr, size, idx) + name + b'\0' + code)
# Lines and unwind information before their LOAD, as V8 writes them.
out += rec(2, struct.pack('<QQ', 0x7f0000001000, 2) +
           struct.pack('<QII', 0x7f0000001040, 3, 7) + b'/srv/a.js\0' +
           struct.pack('<QII', 0x7f0000001050, 4, 1) + b'\xff\0' + b'\0' * 4)
out += rec(4, struct.pack('<QQQ', 36, 12, 36) + b'\x14' + b'\0' * 35 + b'\0' * 4)
out += load(0x7f0000001000, 0x100, 1, b'JS:*foo /srv/a.js:1:2')
out += rec(4, struct.pack('<QQQ', 16, 16, 0) + b'\0' * 16)
out += rec(2, struct.pack('<QQ', 0x7f0000001000, 1) + struct.pack('<QII', 0x7f0000001000, 3, 7) + b'a.js\0')
out += load(0x7f0000001080, 0x100, 2, b'JS:*over')
out += rec(1, struct.pack('<IIQQQQQ', pid, pid, 0x7f0000002000, 0x7f0000001080, 0x7f0000002000, 0x100, 2))
out += rec(3, b'')
open(sys.argv[1], 'wb').write(out)
PY
if command -v node >/dev/null; then
	(cd "$work" && node --perf-basic-prof -e 'function f(){}; f()' &&
		node --perf-prof -e 'function f(){}; f()') >/dev/null 2>&1
	for f in /tmp/perf-*.map "$work"/jit-*.dump; do
		[ -f "$f" ] && [ "$f" -nt "$work/seeds/map" ] || continue
		case $f in
		*.map) { printf '\x00'; head -c 4096 "$f"; } >"$work/seeds/node-map" ;;
		*.dump) { printf '\x01'; head -c 4096 "$f"; } >"$work/seeds/node-jitdump" ;;
		esac
		[ "${f#/tmp/perf-}" != "$f" ] && rm -f "$f"
	done
fi

# The run itself, as libperfinject's fuzzer runs.
"${PI_RUN_FUZZ:-$(dirname "$0")/../../libperfinject/tests/run-fuzz.sh}" "$fuzzer" \
	"$seconds" "the parsers, whole and cut ($(ls "$work/seeds" | wc -l) seeds)" \
	"$work/seeds"

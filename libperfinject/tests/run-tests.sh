#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Run test programs (exit 0 pass, 77 skip, else fail); print a summary
# and exit non-zero if any failed. TIMEOUT (seconds) bounds each one.

pass=0 fail=0 skip=0
failed=()
for t in "$@"; do
	name=${t#*/tests/}
	start=$SECONDS
	out=$(timeout "${TIMEOUT:-180}" "$t" 2>&1)
	rc=$?
	secs=$((SECONDS - start))
	case $rc in
	0)  pass=$((pass + 1)); printf '  PASS  %-36s %3ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf '  SKIP  %-36s %s\n' "$name" \
		"$(grep -m1 SKIP <<<"$out")" ;;
	124) fail=$((fail + 1)); failed+=("$name")
	    printf '  FAIL  %-36s no end within %s s (TIMEOUT)\n' "$name" "${TIMEOUT:-180}"
	    sed 's/^/        /' <<<"$out" | tail -n 30 ;;
	*)  fail=$((fail + 1)); failed+=("$name")
	    printf '  FAIL  %-36s rc=%s\n' "$name" "$rc"
	    sed 's/^/        /' <<<"$out" | tail -n 30 ;;
	esac
done
echo "$skip skipped${failed:+; failed: ${failed[*]}}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

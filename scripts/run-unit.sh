#!/bin/sh
# Run the cmocka unit test binaries given as arguments; stop at none,
# report every failure, exit non-zero if any binary failed.
failed=0
for t in "$@"; do
	echo "== $t"
	if ! "$t"; then
		echo "FAILED: $t" >&2
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ] || { echo "$failed unit test program(s) failed" >&2; exit 1; }

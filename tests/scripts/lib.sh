# lib.sh - what the script tests of tests/scripts/ share (sourced;
# POSIX sh).  check NAME COMMAND... counts and prints one check; finish
# prints "N passed, N failed" and is the script's exit status.

passed=0
failed=0

check() {	# NAME COMMAND...: passes if COMMAND succeeds
	check_name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		echo "ok: $check_name"
	else
		failed=$((failed + 1))
		echo "FAILED: $check_name"
		return 1
	fi
}

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

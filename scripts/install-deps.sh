#!/bin/sh
# install-deps.sh - install what ckspool needs from Debian, by package name.
#
#	scripts/install-deps.sh build        to build and run
#	scripts/install-deps.sh build test   also to run "make check"
#	scripts/install-deps.sh build bench  also to run "make bench"
#
# Idempotent: packages already installed are not touched, and apt is not
# called at all when nothing is missing.  Needs root (or sudo).
set -eu

build="gcc make libc6-dev pkg-config libyaml-dev"
# hwloc: ckworker chooses cores from the machine's topology (libhwloc-dev to
# build, hwloc for lstopo when looking at a node by hand)
build="$build libhwloc-dev hwloc"
# procps: pgrep in the tests; clang: the suite also builds with clang
test="libcmocka-dev procps clang"
# the benchmark's peers (make bench): Dask, task-spooler, GNU parallel,
# CCTools Work Queue (its manager library and zlib to link it)
bench="python3 python3-distributed task-spooler parallel coop-computing-tools"
bench="$bench coop-computing-tools-dev zlib1g-dev"

want=""
for set in "$@"; do
	case $set in
	build) want="$want $build" ;;
	test) want="$want $test" ;;
	bench) want="$want $bench" ;;
	*) echo "usage: $0 build [test] [bench]" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
	    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
	as_root=""
elif command -v sudo >/dev/null 2>&1; then
	as_root="sudo"
else
	echo "install-deps: need root or sudo to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
$as_root apt-get install -y -q --no-install-recommends $missing </dev/null ||
{
	$as_root apt-get update -q </dev/null
	# shellcheck disable=SC2086
	$as_root apt-get install -y -q --no-install-recommends $missing </dev/null
}

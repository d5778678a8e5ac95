#!/bin/sh
# install-deps.sh - install what ckspool needs from Debian, by package name.
#
#	scripts/install-deps.sh build        to build and run
#	scripts/install-deps.sh build test   also to run "make check"
#	scripts/install-deps.sh build bench  also to run "make bench"
#	scripts/install-deps.sh slurm        a single-node Slurm (slurm-up.sh)
#	scripts/install-deps.sh torque       Slurm's PBS-style qsub/qdel/qstat
#	scripts/install-deps.sh sge          Grid Engine (sge-up.sh preseeds
#	                                     its debconf questions first)
#
# torque and sge cannot be installed together (both own /usr/bin/qsub):
# scripts/batch-check.sh, run by "make check", swaps them in turn.
#
# Idempotent: packages already installed are not touched, and apt is not
# called at all when nothing is missing.  Needs root (or sudo).
set -eu

build="gcc make libc6-dev pkg-config libyaml-dev"
# hwloc: ckworker chooses cores from the machine's topology (libhwloc-dev to
# build, hwloc for lstopo when looking at a node by hand)
build="$build libhwloc-dev hwloc"
# spoolfs: libfuse3 to build it, fuse3 for fusermount3 (mounting as a
# user, unmounting)
build="$build libfuse3-dev fuse3"
# musl-tools: spool, the command line, is linked with musl, whose start
# does not probe the CPU's caches as glibc's does (Makefile)
build="$build musl-tools"
# python3-cloudpickle: the notebook client (python/ckspool.py) sends a
# function defined in a notebook by value with it (make demo does)
build="$build python3-cloudpickle"
# procps: pgrep in the tests; clang: the suite also builds with clang
test="libcmocka-dev procps clang"
# libclang-rt-14-dev: libFuzzer and clang's sanitizer runtimes ("make
# fuzz"); only a Recommends of clang, so --no-install-recommends skips it
test="$test libclang-rt-14-dev"
# chromium: the report test renders "spool report" in a real browser
# (headless); bsdutils: script(1) gives "spool wait" a terminal
test="$test chromium bsdutils"
# spoolfs's tests: the Python client and the poll helper (python3), and
# rsync of a finished task through the mount
test="$test python3 rsync"
# t_hosts.sh: simulated hosts sharing the spool through sshfs
# (scripts/hosts.sh: a private sshd, sshfs mounts, ip netns)
test="$test openssh-server openssh-client sshfs iproute2"
# t_install.sh: systemd-analyze and systemd-escape (systemd) check the
# installed unit; logrotate rotates a spool's logs by the installed file
test="$test systemd logrotate"
# the benchmark's peers (make bench): Dask, task-spooler, GNU parallel,
# CCTools Work Queue (its manager library and zlib to link it)
bench="python3 python3-distributed task-spooler parallel coop-computing-tools"
bench="$bench coop-computing-tools-dev zlib1g-dev"
# hyperfine: the latency scenarios' second opinion; the shared-storage
# scenario's simulated hosts (scripts/hosts.sh): sshd, sshfs, namespaces
bench="$bench hyperfine openssh-server openssh-client sshfs iproute2 util-linux"
# the batch systems the suite runs worker jobs on (scripts/batch-check.sh)
slurm="slurmctld slurmd slurm-client munge"
torque="slurm-wlm-torque"
sge="gridengine-master gridengine-exec gridengine-client"

want=""
for set in "$@"; do
	case $set in
	build) want="$want $build" ;;
	test) want="$want $test" ;;
	bench) want="$want $bench" ;;
	slurm) want="$want $slurm" ;;
	torque) want="$want $torque" ;;
	sge) want="$want $sge" ;;
	*) echo "usage: $0 build [test] [bench] | slurm [torque] | sge" >&2
	   exit 2 ;;
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

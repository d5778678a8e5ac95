#!/bin/sh
# gpu-check.sh - the checks that need a machine with an NVIDIA GPU (not
# part of "make check": CI machines have none).
#
#	make && scripts/gpu-check.sh
#
# Prints what the machine offers (GPUs, cgroups, what ckworker finds),
# then runs t_gpu.sh (CKSPOOL_BATCH=gpu: NVML discovery, a task's own GPU
# as CUDA sees it, gpu_util and gpu_memory_peak, tasks taking turns) and
# the limits tests of t_limits.sh that depend on the machine's cgroups
# (memory, walltime, leftovers, CPU binding), which on a machine with the
# memory controller on cgroup v2 exercise the v2 method.  Ends with the
# runner's "N passed, N failed" for each of the two runs.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
export BIN
echo "== machine"
uname -r
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total \
    --format=csv,noheader || echo "gpu-check: nvidia-smi failed"
grep -E '^(cgroup|cgroup2) ' /proc/mounts
echo "== ckworker --print-resources"
"$BIN/ckworker" --print-resources
echo "== t_gpu.sh"
CKSPOOL_BATCH=gpu tests/integration/run.sh
gpu=$?
echo "== limits that depend on the machine"
tests/integration/run.sh \
    'memory_hog|short_task_has|leftover_of_ended|walltime_kills|spinners|spare_process|after_waiting'
limits=$?
[ $gpu -eq 0 ] && [ $limits -eq 0 ]

#!/usr/bin/env bash
# ckspool worker job, kind "pbs", backend pbs
#PBS -N ck-worker
#PBS -q workq
#PBS -A proj42
#PBS -l select=1:ncpus=8:mem=30518mb:ngpus=1
#PBS -l walltime=04:00:00
#PBS -o /home/me/logs/
#PBS -j oe
#PBS -V
#PBS -m n

ckspool_t0=$(date +%s)
module load gcc/12
source /opt/venv/bin/activate
export PYTHONPATH=/opt/lib:/opt/more
export X509_USER_PROXY=/home/me/.proxy
export TMPDIR=/scratch/me
mkdir -p "$TMPDIR" || exit 1
job=${PBS_JOBID:-$SLURM_JOB_ID}
job=${job%%.*}${PBS_ARRAY_INDEX:+.$PBS_ARRAY_INDEX}
job=$(printf %s "$job" | tr -c 'A-Za-z0-9_.:+-' .)
exec /opt/ckspool/bin/ckworker -S SPOOL --name pbs@"$job" --job "$job" --cores 8 --processes 2 --memory 31250000K --gpus 1 --cpu-limit cpuset --walltime $((14400 - ($(date +%s) - ckspool_t0))) --death-timeout 90000ms --idle-timeout 600000ms

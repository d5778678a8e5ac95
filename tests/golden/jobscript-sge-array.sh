#!/usr/bin/env bash
# ckspool worker job, kind "sge", backend sge
#$ -N ck-worker
#$ -q 256G-batch
#$ -P proj42
#$ -pe smp 8
#$ -l h_vmem=4G
#$ -l h_rt=100:40:39
#$ -o /home/me/logs/
#$ -j y
#$ -cwd
#$ -V
#$ -t 1-5
#$ -R y

ckspool_t0=$(date +%s)
module load gcc/12
source /opt/venv/bin/activate
export PYTHONPATH=/opt/lib:/opt/more
export X509_USER_PROXY=/home/me/.proxy
export TMPDIR=/scratch/me
mkdir -p "$TMPDIR" || exit 1
job=$JOB_ID
case ${SGE_TASK_ID:-undefined} in undefined) ;; *) job=$JOB_ID.$SGE_TASK_ID ;; esac
job=$(printf %s "$job" | tr -c 'A-Za-z0-9_.:+-' .)
exec /opt/ckspool/bin/ckworker -S SPOOL --name sge@"$job" --job "$job" --cores 8 --processes 2 --memory 31250000K --cpu-limit cpuset --walltime $((362439 - ($(date +%s) - ckspool_t0))) --death-timeout 90000ms --idle-timeout 600000ms

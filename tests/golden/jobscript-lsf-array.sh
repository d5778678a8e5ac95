#!/usr/bin/env bash
# ckspool worker job, kind "lsf", backend lsf
#BSUB -J "ck-worker[1-5]"
#BSUB -q long
#BSUB -P proj42
#BSUB -o /home/me/logs/ck-worker-%J.%I.out
#BSUB -e /home/me/logs/ck-worker-%J.%I.err
#BSUB -n 8
#BSUB -R "span[hosts=1]"
#BSUB -M 30518
#BSUB -R "rusage[mem=30518]"
#BSUB -W 01:30
#BSUB -gpu "num=1"
#BSUB -env "none"

ckspool_t0=$(date +%s)
module load gcc/12
source /opt/venv/bin/activate
export PYTHONPATH=/opt/lib:/opt/more
export X509_USER_PROXY=/home/me/.proxy
export TMPDIR=/scratch/me
mkdir -p "$TMPDIR" || exit 1
job=$LSB_JOBID
case ${LSB_JOBINDEX:-0} in 0) ;; *) job=$LSB_JOBID.$LSB_JOBINDEX ;; esac
job=$(printf %s "$job" | tr -c 'A-Za-z0-9_.:+-' .)
exec /opt/ckspool/bin/ckworker -S SPOOL --name lsf@"$job" --job "$job" --cores 8 --processes 2 --memory 31250000K --gpus 1 --cpu-limit auto --walltime $((5400 - ($(date +%s) - ckspool_t0))) --death-timeout 90000ms --idle-timeout 600000ms

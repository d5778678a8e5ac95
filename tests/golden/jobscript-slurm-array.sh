#!/usr/bin/env bash
# ckspool worker job, kind "slurm", backend slurm
#SBATCH -J ck-worker
#SBATCH -p normal
#SBATCH -A proj42
#SBATCH -o /home/me/logs/ck-worker-%A_%a.out
#SBATCH -e /home/me/logs/ck-worker-%A_%a.err
#SBATCH -n 1
#SBATCH --cpus-per-task=8
#SBATCH -t 04:00:00
#SBATCH --gres=gpu:2
#SBATCH --export=NONE
#SBATCH --array=1-5
#SBATCH --qos=high
#SBATCH --constraint=haswell

ckspool_t0=$(date +%s)
module load gcc/12
source /opt/venv/bin/activate
export PYTHONPATH=/opt/lib:/opt/more
export X509_USER_PROXY=/home/me/.proxy
export TMPDIR=/scratch/me
mkdir -p "$TMPDIR" || exit 1
job=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}}
job=${job:-$SLURM_JOB_ID}
job=$(printf %s "$job" | tr -c 'A-Za-z0-9_.:+-' .)
exec /opt/ckspool/bin/ckworker -S SPOOL --name slurm@"$job" --job "$job" --cores 8 --processes 2 --memory 31250000K --gpus 2 --memory-limit cgroup --cpu-limit cpuset --gpu-limit devices --walltime $((14400 - ($(date +%s) - ckspool_t0))) --death-timeout 90000ms --idle-timeout 600000ms

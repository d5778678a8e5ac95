/*
 * jobscript.h - the batch job script that runs one ckworker.
 *
 * One function writes it for every backend, so "spool job-script"
 * prints exactly what spoold submits (like dask-jobqueue's
 * cluster.job_script()):
 *
 *	#!/usr/bin/env bash                     (shebang)
 *	#SBATCH -J ckworker                     (the backend's directives,
 *	#SBATCH --cpus-per-task=8                minus job-directives-skip,
 *	...                                      then job-extra-directives)
 *	ckspool_t0=$(date +%s)                  (when the job started)
 *	module load gcc                         (job-script-prologue)
 *	export PYTHONPATH='/opt/lib'            (env)
 *	job=...                                 (the job's ID, from the
 *	                                         batch system's environment)
 *	exec /path/ckworker -S /spool --name default@$job --job $job
 *	    --cores 8 ... --walltime $((14400 - ($(date +%s) - ckspool_t0)))
 *
 * The worker is named KIND@JOBID so that spoold knows, from its
 * registration alone, which job and which kind it belongs to; it gets
 * the job's cores, task slots (processes), memory, GPUs, the walltime
 * the job has left once the prologue has run (so it drains before the
 * batch system's end, however long "conda activate" took), and the
 * kind's death and idle timeouts.
 *
 * Directives per backend (dask-jobqueue's choices where they exist):
 *   slurm  -J -p -A -o -e -n 1 --cpus-per-task --mem (MiB, rounded up)
 *          -t --gres=gpu:N --export=ALL|NONE; arrays --array=1-N
 *   sge    -N -q -P -o -j y -cwd -l h_rt -pe PE CORES (with
 *          parallel-environment) -l RESOURCE-SPEC -V; arrays -t 1-N
 *   pbs    -N -q -A -o -j oe -l select=1:ncpus=C:mem=M[:ngpus=G]
 *          (or -l RESOURCE-SPEC) -l walltime -V; arrays -J 1-N
 *   lsf    -J -q -P -o -e -n -R "span[hosts=1]" -M/-R rusage[mem]
 *          (MiB) -W (minutes) -gpu num=N -env none; arrays
 *          -J NAME[1-N]
 */
#ifndef JOBSCRIPT_H
#define JOBSCRIPT_H

#include <stddef.h>

#include "buf.h"
#include "config.h"

/*
 * The script for one job (array_n <= 1) or an array of array_n jobs of
 * kind k, whose worker is the program worker_path and whose spool is
 * spool_path (both absolute).  0, or -1 with why (e.g. a value that
 * cannot be written as a directive).
 */
int	jobscript_render(struct buf *out, const struct kind *k,
	    const char *spool_path, const char *worker_path, unsigned array_n,
	    char *why, size_t size);

/* The directory a kind's jobs write their output to (out is reset). */
void	jobscript_log_dir(const struct kind *k, const char *spool_path,
	    struct buf *out);

/*
 * The file job id of kind k writes its output to: which 0 is the
 * standard error (or the one joined file), 1 the standard output where
 * it is separate.  -1 if there is no such file for the backend:
 *
 *   slurm, lsf  LOGDIR/NAME-ID.err, LOGDIR/NAME-ID.out
 *   sge         LOGDIR/NAME.oID                       (-j y)
 *   pbs         LOGDIR/NAME.eID, LOGDIR/NAME.oID      (joined on a real
 *               server; separate under Slurm's PBS wrappers, which
 *               spoold runs in LOGDIR with -N NAME)
 *   local       LOGDIR/NAME-ID.log
 */
int	jobscript_log_file(const struct kind *k, const char *spool_path,
	    const char *id, int which, char *out, size_t size);

/* Quote s for a POSIX shell: 'it'\''s'. */
void	shell_quote(struct buf *out, const char *s);

#endif

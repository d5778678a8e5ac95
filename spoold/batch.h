/*
 * batch.h - spoold's words with a batch system: submit, cancel, list.
 *
 *            submit                    cancel         list (this user's jobs)
 *   slurm    sbatch --parsable FILE    scancel ID...  squeue -h -r -u USER
 *                                                       -o "%i %T %r"
 *                                                     (-n NAME -o "%i %o":
 *                                                       scripts)
 *   sge      qsub -terse FILE          qdel ID...     qstat -g d -u USER
 *                                      (qdel J -t T)  (qstat -j NAME: scripts)
 *   pbs      qsub -N NAME FILE         qdel ID...     qstat
 *   lsf      bsub < FILE               bkill ID...    bjobs -noheader -a
 *                                      (bkill J[I])     -o "jobid jobindex stat"
 *
 * Commands run in the directory given (the kind's log directory: PBS
 * wrappers and some sites write job output to the submission
 * directory) through command_run() with BATCH_LIMIT_MS (meanwhile the
 * function of batch_while_waiting is called); a failure comes back in
 * the command's own words, for "spool workers" to show.  A stop gives
 * them a deadline (batch_stop_by): none runs past it.
 *
 * Job IDs are spelled the way the job script names its worker
 * (KIND@JOBID, jobscript.h): an array element is FIRST_N on Slurm and
 * FIRST.N elsewhere.  A listing becomes (id, state, reason) with state
 * "pending", "running" (also while being ended: Slurm COMPLETING, Grid
 * Engine "dr"; its processes may still be there), "done" (listed but
 * finished: PBS "C", LSF "DONE"/"EXIT") or "error" (listed but never
 * going to run: Grid Engine "Eqw", Slurm states such as FAILED or
 * BOOT_FAIL); a job that is not listed has left the queue.  Cancelling
 * a job the batch system no longer knows (already ended) is a success.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "jobrec.h"

#define BATCH_LIMIT_MS	30000
#define BATCH_TICK_MS	20
#define BATCH_ID_MAX	80
#define BATCH_SCRIPT_MAX	JOBREC_SCRIPT_MAX	/* a job script's name in jobs/ */

struct batch_state {
	char	id[BATCH_ID_MAX];
	char	state[16];	/* pending, running, done, error */
	char	reason[64];	/* why pending, where the system says */
};

struct batch_script {
	char	id[BATCH_ID_MAX];
	char	name[BATCH_SCRIPT_MAX];
};

/*
 * Submit; -1 with why when it failed, and then *doubt says whether the
 * batch system may have taken the job all the same (jobs.c, doubts):
 * BD_UNREAD, the command was started and did not end on its own
 * (killed at its limit, or by a signal), so its answer was never read;
 * BD_SAID_FAILED, it said it failed, or answered no job ID (an sbatch
 * that gave up waiting for slurmctld's answer says so, and slurmctld
 * takes the job afterwards); BD_NONE, it sent nothing (it was not
 * started, or an sbatch could not connect: "connect failure").
 */
enum batch_doubt { BD_NONE, BD_SAID_FAILED, BD_UNREAD };

int	batch_submit(enum backend b, const char *script_path,
	    const char *script, const char *name, const char *cwd, char *id,
	    size_t idsize, char *why, size_t size, enum batch_doubt *doubt);
/*
 * Cancel n jobs in one command: 0 when it exited 0 (or, for one job,
 * answered that the job is gone); -1 with why otherwise: a command for
 * several that failed does not say which of them are cancelled.  Only
 * jobs batch_cancel_together() allows go with others (not a Grid
 * Engine array task).
 */
int	batch_cancel(enum backend b, const char *const *ids, size_t n,
	    char *why, size_t size);
int	batch_cancel_together(enum backend b, const char *id);
int	batch_list(enum backend b, struct batch_state **v, size_t *n,
	    char *why, size_t size);

/*
 * Which of this user's jobs were submitted from a script in dir (an
 * absolute path): their IDs (an array's elements one by one) and the
 * scripts' names.  Only where a job's script can be listed
 * (batch_finds_scripts), among the jobs named name (the job name, so
 * that a user's thousands of other jobs stay out of it): Slurm, "squeue
 * -h -r -u USER -n NAME -o '%i %o'"; Grid Engine, "qstat -j NAME" (the
 * blocks of the jobs of that name, with their script_file), then its
 * listing for the tasks of those jobs.  -1 with why (ENOTSUP
 * elsewhere).  Finds the job of a submission whose answer was never
 * read, or that said it failed (jobs.c, doubts).
 */
int	batch_finds_scripts(enum backend b);
int	batch_list_scripts(enum backend b, const char *dir, const char *name,
	    struct batch_script **v, size_t *n, char *why, size_t size);

/*
 * fn is called every BATCH_TICK_MS while a batch command runs: a
 * command may take BATCH_LIMIT_MS, a pass several, and meanwhile
 * spoold beats its lease and keeps its tasks going (main.c,
 * while_batch).  As often as its loop rescans after activity.
 */
void	batch_while_waiting(void (*fn)(void));

/*
 * From a stop on: no batch command runs past ms (now_ms()), its limit
 * cut to what is left, and none starts after it (it fails at once with
 * ETIMEDOUT); batch_out_of_time() says when that has come.
 */
void	batch_stop_by(uint64_t ms);
int	batch_out_of_time(void);

/* The pure parts, for the unit tests. */
int	batch_parse_submit(enum backend b, const char *answer, char *id,
	    size_t idsize);
void	batch_parse_list(enum backend b, const char *text,
	    struct batch_state **v, size_t *n);
void	batch_parse_scripts(enum backend b, const char *text,
	    const char *dir, struct batch_script **v, size_t *n);
const char *batch_state_word(enum backend b, const char *s);
int	batch_gone_answer(enum backend b, const char *text);
/* The cancel command's argv, in one block to free(); NULL: errno. */
char	**batch_cancel_argv(enum backend b, const char *const *ids,
	    size_t n);

#endif

/*
 * command.h - run an outside command (sbatch, squeue, qstat, srun ...)
 * with a time limit and capture what it says.
 *
 *	struct command c = COMMAND_INIT;
 *	c.argv = argv; c.limit_ms = 30000;
 *	if (command_run(&c, &out, &err, why, sizeof why) < 0) ...  not run
 *	else if (!command_ok(&c)) ...  it ran and failed: command_why()
 *
 * The command runs in its own process group with every signal
 * unblocked and at its default disposition (the caller may block
 * signals for a signalfd and ignore SIGPIPE), stdin from the given text
 * or /dev/null, in the given directory (or the caller's), with the
 * given environment (or the caller's).  Its stdout and stderr are
 * captured, each bounded by COMMAND_OUTPUT_MAX (the rest is read and
 * dropped, so the command never blocks on a full pipe); err NULL sends
 * stderr to /dev/null.  If it runs past limit_ms its whole process
 * group is killed (SIGKILL) and command_run fails with ETIMEDOUT: a
 * hung qstat costs its caller at most the limit and a few seconds.
 * Meanwhile tick, if set, is called every tick_ms (the first time
 * tick_ms after the start), so that a daemon keeps up what must not
 * wait that long.
 *
 * The child is waited for by its pid, so a caller that reaps other
 * children with waitpid(-1) must not run concurrently with this (the
 * daemons block SIGCHLD and read a signalfd, so they never do).
 *
 * Used by spoold (batch.c) and the CLI ("spool start-workers"); the
 * worker's own bounded queries (ckworker/batch.c: batch_run) do the
 * same and can move here.
 */
#ifndef COMMAND_H
#define COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define COMMAND_OUTPUT_MAX	(4u << 20)
#define COMMAND_KILL_WAIT_MS	5000	/* after SIGKILL, for the pipes */

struct command {
	char	*const *argv;	/* argv[0] is looked up in PATH */
	const char *input;	/* stdin text, NULL: /dev/null */
	const char *cwd;	/* NULL: the caller's */
	char	*const *envp;	/* NULL: the caller's environment */
	uint64_t limit_ms;	/* 0: no limit */
	void	(*tick)(void);	/* NULL, or called every tick_ms while it
				 * runs (spoold beats its lease) */
	uint64_t tick_ms;
	int	status;		/* wait status, after command_run */
};

#define COMMAND_INIT { NULL, NULL, NULL, NULL, 0, NULL, 0, 0 }

/*
 * Run it; out and err (either may be NULL) receive its output.  0 when
 * it ran to its end (whatever its status), -1 with why (and errno) when
 * it could not be started or was killed at its limit.
 */
int	command_run(struct command *c, struct buf *out, struct buf *err,
	    char *why, size_t whysize);

/* It exited with status 0. */
int	command_ok(const struct command *c);

/*
 * Why it failed, in its own words: "NAME: " then the first line of err
 * (or of out when err is empty), its control bytes escaped as
 * buf_put_printable() does (\t, \xHH: an escape sequence of a batch
 * command's output reaches no log or terminal raw), else "exit status
 * N" / "killed by signal N" (127: "command not found").
 */
void	command_why(const struct command *c, const struct buf *out,
	    const struct buf *err, char *why, size_t whysize);

/*
 * Make sure descriptors 0, 1 and 2 are open: each one the process was
 * started without is opened on /dev/null, read-only, so that it reads
 * end of file and a write to it fails (EBADF) as it did.  Else the first
 * files and pipes the process opens take their numbers: a message to
 * stderr or a line to stdout is written into whatever file got 2 or 1
 * (a spool file), a file read as standard input, and a pipe dup2'ed
 * onto its own number stays close-on-exec in the child.  Called first
 * thing by every program (as Postfix's do); fatal if /dev/null cannot
 * be opened.
 */
void	command_std_fds(void);

/*
 * Mark every descriptor from 3 up close-on-exec: what this process
 * inherited (a pipe of the shell or batch system that started it, say)
 * stays its own and is not passed on to the processes it runs (workers,
 * tasks, outside commands).  Its own descriptors are all opened
 * close-on-exec already.  Called once at the start of spoold and
 * ckworker; a kernel without close_range's CLOSE_RANGE_CLOEXEC (before
 * Linux 5.11) is said once (whose: "spoold", "this worker").
 */
void	command_private_fds(const char *whose);

/*
 * Raise the soft limit on open files (RLIMIT_NOFILE) to the hard limit,
 * for a process whose descriptors grow with what it serves (spoold
 * holds eight for each worker: at the usual soft limit of 1024 it ran
 * out at about 125 workers).  A failure is said once and the limit
 * stays.  command_child_fds() in a child, before exec, gives it back
 * the soft limit this process was started with, so that what it runs
 * (workers, their tasks, batch commands) is not given more than its
 * user asked for.
 */
void	command_more_fds(void);
void	command_child_fds(void);

#endif

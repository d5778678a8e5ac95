/*
 * identity.h - whom a task runs as.
 *
 * In a private spool (the default) every task is its owner's and runs
 * as the worker runs.  In a shared spool ("daemon: shared: true",
 * spool-layout(5), SHARED SPOOLS) a task runs as its submitter, the
 * uid in its spec (spoold took it from the owner of the submitted
 * file), and nothing else:
 *
 *  - a task of the worker's own uid runs as the worker does;
 *  - a task of another uid runs only if the worker is root, which
 *    becomes that user before exec (initgroups, setgid, setuid, checked
 *    to be irreversible), then enters the task's cwd as that user;
 *  - a task of root runs only in a spool that root owns;
 *  - a uid without an account on the worker's host does not run.
 *
 * A task refused here fails to start (reason spawn) with the rule that
 * refused it; it is never run as someone else.
 */
#ifndef IDENTITY_H
#define IDENTITY_H

#include <signal.h>
#include <sys/types.h>

#include "task.h"

struct identity {
	int	change;		/* 0: run as the worker runs */
	uid_t	uid;
	gid_t	gid;
	char	name[64];	/* login name, for initgroups */
	char	home[256];
};

/* Whom t runs as: 0, or -1 with why (it must not run). */
int	identity_of(const struct task_spec *t, struct identity *id, char *why,
	    size_t size);

/*
 * Give the task's work directory dfd/name (and its script, if any) to
 * id, so that the task can write there, and its stdout and stderr
 * (out, err): the owner of a directory can rename what is in it, and
 * a file of the worker's (root's) holding what the task wrote, moved
 * into incoming/ or control/, would be a submission or a request of
 * root's.  0, or -1 with errno.
 */
int	identity_give(const struct identity *id, int dfd, const char *name,
	    int out, int err);

/*
 * Start p's program as id (forked: becoming id takes lookups that a
 * process sharing the worker's memory may not make), as spawn_task
 * starts it: its own process group, no blocked signals, the signals in
 * p->dfl at their defaults, moved into its cgroup (p->cgroup_fd) and
 * bound to its CPUs (p->cpus) first, stdin from /dev/null, stdout and
 * stderr from p->out and p->err, in p->cwd (entered as id), p->env
 * with USER, LOGNAME and HOME of id.  A p->exe without "/" is looked
 * up in the PATH of p->env by the child, as id, in its cwd (the worker
 * never looks: its answer would tell the user what is in directories
 * the user cannot search).  0 and *pid, or an errno value (the child's,
 * if it could not set up, become id, find its program or exec) with
 * what: "cgroup", "cpus", "cwd" or "command" (ENOENT: not found) for
 * those steps, else "", and in found (size bytes) where the child found
 * the program it could not exec, or "".
 */
struct spawn_plan;
int	identity_spawn(pid_t *pid, const struct identity *id,
	    const struct spawn_plan *p, const char **what, char *found,
	    size_t size);

#endif

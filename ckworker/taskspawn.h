/*
 * taskspawn.h - a task's process started without copying the worker.
 * See taskspawn.c.
 */
#ifndef TASKSPAWN_H
#define TASKSPAWN_H

#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* What the child sets up before it execs exe. */
struct spawn_plan {
	const char	*exe;
	char *const	*argv;
	char *const	*env;
	const char	*cwd;
	int		out, err;	/* its stdout and stderr */
	int		cgroup_fd;	/* cgroup.procs it moves itself into, or -1 */
	int		cpuset_fd;	/* and that of its cpuset (cpuset.c), or -1 */
	int		devices_fd;	/* and of its devices cgroup (devices.c) */
	int		extra;		/* onto its descriptor 3, or -1 */
	const cpu_set_t	*cpus;		/* its CPUs, or NULL */
	size_t		cpus_size;
	const sigset_t	*dfl;		/* signals to set to SIG_DFL */
	int32_t		*listed;	/* its pid is stored here once it
					 * leads its session (the guard's
					 * table, guard.c), or NULL */
	pid_t		lister;		/* with listed: the process that
					 * spawns it; if that has died by
					 * then, the child exits */
};

/*
 * In the child, once it leads its session: its pid into p->listed (the
 * guard's table, guard.c), before anything of the task runs; a child
 * whose spawner died meanwhile exits, its guard come and gone.  Only a
 * store and a system call: for the children of spawn_task and of
 * identity_spawn alike.
 */
static inline void
spawn_list_self(const struct spawn_plan *p)
{
	if (p->listed == NULL)
		return;
	__atomic_store_n(p->listed, (int32_t)getpid(), __ATOMIC_RELEASE);
	if (getppid() != p->lister)
		_exit(127);
}

/*
 * Start it as *pid, in its own session and process group (without a
 * controlling terminal), with every signal
 * unblocked and stdin /dev/null.  0, or an errno with what (the step
 * that failed, in the child or here: "clone", "cgroup", "exec", ...).
 */
int	spawn_task(pid_t *pid, const struct spawn_plan *p, const char **what);

/* Where a task's program is looked up when its environment has no PATH. */
#define SPAWN_PATH_DEFAULT	"/usr/local/bin:/usr/bin:/bin"

/*
 * Find cmd (a name without "/") in path as execvp would: in the first
 * entry (an empty one is the current directory) that holds a regular
 * file this process may execute, judged with this process's rights.
 * A relative entry is looked at from cwd, the directory the task will
 * exec in (NULL: this process's own, where it already is).
 * No allocation, so that a forked child may call it (identity.c).
 * 0 and the file's path in out (relative for a relative entry: exec
 * from cwd), or -1 (out "") if there is none whose path fits in size.
 */
int	spawn_search(const char *cmd, const char *path, const char *cwd,
	    char *out, size_t size);

#endif

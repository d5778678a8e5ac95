/*
 * ptree.h - a task's process tree, followed through /proc.  See ptree.c.
 */
#ifndef PTREE_H
#define PTREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PTREE_MAX	4096	/* processes followed per task */

struct pent {
	pid_t	pid;
	unsigned long long start;	/* clock ticks since boot */
};

struct ptree {
	struct pent *p;		/* seen in the last scan */
	size_t	n;
	uint64_t rss;		/* bytes, sum at the last scan */
	uint64_t peak;		/* bytes, largest sum seen */
	int	truncated;	/* more than PTREE_MAX processes */
};

struct pstat {
	pid_t	ppid, pgid, sid;
	char	state;
	unsigned long long start;
	uint64_t rss;		/* bytes */
};

/* Fields of /proc/PID/stat; -1 if the process is gone. */
int	ptree_stat(pid_t pid, struct pstat *st);

/*
 * Rescan: the processes below root (the task's main process), below
 * the processes seen last time that still live, and below the extra
 * pids (orphans the caller attributed to the task).  Updates the list,
 * the RSS sum and its peak.
 */
void	ptree_scan(struct ptree *t, pid_t root, const pid_t *extra,
	    size_t nextra);
int	ptree_has(const struct ptree *t, pid_t pid);

/*
 * Send sig to the process group pgid and to every process of the tree.
 * With SIGKILL, processes are first stopped (SIGSTOP) and the tree is
 * scanned again until nothing new appears, so that a process cannot
 * fork its way out while it is being killed.  Returns how many
 * processes were signalled.
 */
int	ptree_signal(struct ptree *t, pid_t pgid, int sig);

/* The direct children of this process (the worker), into *out. */
size_t	ptree_children(pid_t pid, pid_t **out);

/* SPOOL_TASK_ID and SPOOL_ATTEMPT from /proc/PID/environ; -1 if absent. */
int	ptree_task_of(pid_t pid, uint64_t *id, uint32_t *attempt);

void	ptree_free(struct ptree *t);

#endif

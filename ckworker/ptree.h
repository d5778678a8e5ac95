/*
 * ptree.h - a task's process tree, followed through /proc.  See ptree.c.
 */
#ifndef PTREE_H
#define PTREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PTREE_MAX	4096	/* pids of a cgroup's list kept (ptree_set) */
#define PSNAP_MAX	(1u << 20)	/* processes read from /proc */

/* One process as /proc/PID/stat shows it. */
struct pproc {
	pid_t	pid, ppid, pgid, sid;
	char	state;
	unsigned long long start;	/* clock ticks since boot */
	uint64_t rss;			/* bytes */
};

/* Every process of the host at one moment. */
struct psnap {
	struct pproc *p;	/* sorted by pid */
	size_t	n;
	uint32_t *by_ppid;	/* indices into p, sorted by parent */
};

struct pent {
	pid_t	pid;
	unsigned long long start;
};

struct ptree {
	struct pent *p;		/* members at the last scan, by pid */
	size_t	n;
	uint64_t rss;		/* bytes, sum at the last scan */
	uint64_t peak;		/* bytes, largest sum seen */
};

/* Read every process; -1 with errno if /proc cannot be listed. */
int	psnap_take(struct psnap *s);
/* Sort p by pid and make by_ppid (psnap_take; a test's own snapshot). */
void	psnap_index(struct psnap *s);
void	psnap_free(struct psnap *s);

/*
 * The members now: root (the task's main process) and its descendants,
 * the members of the last scan that still live (same start time) and
 * theirs, and the extra pids (orphans the caller attributed to the
 * task) and theirs.  Updates the RSS sum and its peak.
 */
void	ptree_scan(struct ptree *t, const struct psnap *s, pid_t root,
	    const pid_t *extra, size_t nextra);
int	ptree_has(const struct ptree *t, pid_t pid);
/*
 * Replace the members by a list of pids (a task's main process, or its
 * cgroup's), with their start times if starts is set.  Start times are
 * compared only by ptree_scan, which a task held by a cgroup never
 * uses: it has no need of them (a read of /proc/PID/stat each).
 */
void	ptree_set(struct ptree *t, const pid_t *pids, size_t n, int starts);

/*
 * Send sig to the process group pgid (0: none) and to every member.
 * With SIGKILL the members are first stopped (SIGSTOP) and the tree
 * scanned again until nothing new appears, so that nothing forks its
 * way out while it is being killed.  Returns how many were signalled.
 */
int	ptree_signal(struct ptree *t, pid_t pgid, int sig);

/*
 * 1 if nothing of a task whose main process (and process group leader)
 * pgid has been reaped can still live, proved without a snapshot;
 * 0 if not proved (take one).  The caller must be a child subreaper;
 * mains are the main processes of its other tasks.
 */
int	ptree_none_left(pid_t pgid, const pid_t *mains, size_t nmains);

/*
 * Whether something of task (id, attempt), whose main process pgid has
 * been reaped, may still live, on the same grounds: 0 if its process
 * group is empty and every child of the worker but mains is a live
 * process whose environment names another task; 1 if not; -1 if the
 * worker's children cannot be listed.  The caller must be a child
 * subreaper.
 */
int	ptree_task_left(pid_t pgid, uint64_t id, uint32_t attempt,
	    const pid_t *mains, size_t nmains);

/* How pid waits, for a message: "state D, wchan NAME" (/proc/PID/stat,
 * /proc/PID/wchan where the kernel shows it), or why it is unknown.
 * Returns its state (0: unknown). */
char	ptree_kernel_wait(pid_t pid, char *how, size_t size);

/*
 * What wait4 would say of pid, a live process: CPU times, its own and
 * its reaped children's (/proc/PID/stat), maxrss its peak resident
 * memory (VmHWM, in KiB as ru_maxrss; 0 if not shown); 0, or -1 with
 * errno.
 */
struct rusage;
int	ptree_usage(pid_t pid, struct rusage *ru);

/* SPOOL_TASK_ID and SPOOL_ATTEMPT from /proc/PID/environ; -1 if absent. */
int	ptree_task_of(pid_t pid, uint64_t *id, uint32_t *attempt);
/* Whether /proc/PID/environ holds entry ("NAME=VALUE") as it is: 1 or
 * 0; -1 with errno if it cannot be read (a zombie's, one gone, another
 * user's). */
int	ptree_env_has(pid_t pid, const char *entry);

void	ptree_free(struct ptree *t);

#endif

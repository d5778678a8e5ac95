/*
 * cgroup.h - a memory cgroup per task, with cgroup v2 or v1.  See cgroup.c.
 */
#ifndef CGROUP_H
#define CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cg_stats {
	uint64_t current;	/* bytes now */
	uint64_t peak;		/* bytes, 0 if the kernel does not say */
	uint64_t oom_kills;	/* processes the OOM killer killed in it */
	int	has_oom_kills;	/* the kernel reports oom_kills */
	uint64_t failcnt;	/* v1 without oom_kills: times the limit was hit */
	double	user, sys;	/* v2: CPU seconds of everything in it */
	int	has_cpu;
};

/*
 * Set up the worker's cgroup of the given version (1 or 2): find its
 * own cgroup, remove cgroups left by dead workers, create
 * BASE/ckworker.PID.START and (v2) move the worker into a leaf of it.
 * dry: only check that it would work (for --print-resources), and
 * leave nothing behind.  0, or -1 with the reason in why.  where gets
 * the directory the task cgroups go into (or would).
 */
int	cgroup_setup(int version, int dry, char *where, size_t wsize,
	    char *why, size_t whysize);

/* Create the task's cgroup NAME with a memory limit (0: none). */
int	cgroup_task_create(const char *name, uint64_t limit, char *why,
	    size_t whysize);
/* Set the memory limit of an existing one (0: none: nothing to do),
 * whose limit is had (0: none; the same: nothing to do). */
int	cgroup_task_limit(const char *name, uint64_t limit, uint64_t had,
	    char *why, size_t whysize);
/* The spare's cgroup NAME: a kept one of a large enough limit, or a new
 * one without; *limit gets the limit it has (0: none). */
int	cgroup_spare_create(const char *name, uint64_t *limit, char *why,
	    size_t whysize);
/* Rename one (cgroup v1 only; processes in it stay); -1 with errno. */
int	cgroup_task_rename(const char *from, const char *to);
/* NAME's cgroup.procs, for a child to move itself in by writing "0"
 * (taskspawn.c, identity.c, the spare); -1 with errno. */
int	cgroup_procs_open(const char *name);
/* with_current 0: not memory now (a task that ended): one read less */
int	cgroup_task_stats(const char *name, int with_current,
	    struct cg_stats *st);
/* SIGKILL everything in it; returns how many processes were still in
 * it (0: empty), -1 if it cannot be read. */
int	cgroup_task_kill(const char *name);
/* Send sig to every process in it (SIGKILL: cgroup_task_kill). */
int	cgroup_task_signal(const char *name, int sig);
/* Its processes (up to max) into pids; how many, or -1. */
int	cgroup_task_pids(const char *name, pid_t *pids, size_t max);
/* cgroup v1: keep an ended task's cgroup for a next task with the same
 * limit (cgroup_task_create takes it), if the task left nothing in it;
 * 0 if kept, -1 if not (remove it then). */
int	cgroup_task_recycle(const char *name, uint64_t limit);
/* Remove it; -1 with errno (EBUSY while dying processes remain). */
int	cgroup_task_remove(const char *name);
/* Leaving: kill what is left in the task cgroups, put the worker back
 * where it was, remove our cgroups, waiting a little for killed
 * processes to go, unless some were killed before and are still there
 * (their SIGKILL pending: nothing ends them).  Returns how many of
 * those keep the cgroups (for the caller to say), else 0. */
int	cgroup_cleanup(void);

/* ROOT, the worker's cgroup (base/ckworker.PID.START), or NULL when
 * no cgroup method is in force. */
const char *cgroup_root(void);
/* SIGKILL every process in dir (absolute) and in the cgroups below it,
 * but the caller; how many there were.  For the guard (guard.c), in a
 * process where cgroup_setup was not called. */
int	cgroup_kill_tree(const char *dir);

/* Look in ROOT for the swap limit file; if the kernel has none and
 * the host has swap (bytes; UINT64_MAX: unknown), warn once that tasks
 * may swap past their limits.  Returns 1 if it warned, else 0.  Called
 * by cgroup_setup. */
int	cgroup_swap_check(uint64_t swap);

/* Unit tests: use dir, a directory of plain files standing in for
 * cgroupfs, as ROOT of the given version (the pool emptied); 0, or -1
 * with errno. */
int	cgroup_fake_root(const char *dir, int version);

/* Helpers shared with the discovery, cpuset.c (and unit tests). */
/* Path of the cgroup for version 1 (the hierarchy of controller ctl) or
 * 2, from /proc/self/cgroup text; NULL if absent. */
const char *cgroup_path_of(const char *proc_cgroup, int version,
	    const char *ctl, char *out, size_t size);
/* This process's cgroup directory in the v2 hierarchy or in v1's of
 * ctl, where it is mounted; 0, or -1 with why. */
int	cgroup_own_dir(int version, const char *ctl, char *dir, size_t size,
	    char *why, size_t whysize);
/* Remove the ckworker.PID.START cgroups of dead workers under base
 * (absolute), killing what is left in them. */
void	cgroup_sweep_dead(const char *base);
/*
 * At a worker's start: cgroup_sweep_dead in this process's own cgroup
 * of each hierarchy a worker makes cgroups in (v2; v1's memory, cpuset,
 * devices) that it may write, whatever methods it takes itself.
 */
void	cgroup_sweep_host(void);
/* Kill what is in dir (absolute) and below, and remove them; how many
 * processes that did not end on an earlier SIGKILL keep it (0: gone). */
int	cgroup_remove_dir(const char *dir);
/* The memory limit of our cgroup and its ancestors (the smallest), 0
 * if none or unknown. */
uint64_t cgroup_memory_limit(char *from, size_t fsize);

#endif

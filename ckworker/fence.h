/*
 * fence.h - tasks fenced to what they were given by cgroup v1
 * controllers that keep a set: cpuset (their CPUs, cpuset.c) and
 * devices (their GPUs, devices.c).  See fence.c.
 */
#ifndef FENCE_H
#define FENCE_H

#include <limits.h>
#include <stddef.h>

#define FENCE_MAX	64	/* sets kept */

struct fence {
	/* the controller's: set by cpuset.c or devices.c */
	const char *ctl;	/* "cpuset", "devices" */
	const char *prefix;	/* of its sets' names: "cpus", "gpus" */
	/* Give dir (under ROOT; ROOT itself for "") the set key; fresh:
	 * just made.  0, or -1 with why. */
	int	(*apply)(struct fence *f, const char *dir, const char *key,
		    int fresh, char *why, size_t whysize);

	/* fence.c's */
	char	base[PATH_MAX - 512];	/* the worker's cgroup */
	char	root[PATH_MAX - 256];	/* base/ckworker.PID.START */
	int	rootfd;			/* ROOT; sets' names are relative */
	struct fence_set {
		char	name[32];	/* PREFIX.N under ROOT */
		char	*key;		/* what it holds ("0-3,8"; "0,2") */
		int	procs;		/* its cgroup.procs, open for writing */
		int	spare;		/* the spare's: no task is put in it */
	} set[FENCE_MAX];
	size_t	nset;
	unsigned long seq;
	char	*last;			/* key of the last task started */
};

/*
 * Find the worker's own cgroup of f->ctl (cgroup v1), remove those of
 * dead workers, create ROOT there and give it key (f->apply).  dry:
 * only check that it would work and leave nothing.  0 with ROOT in
 * where, or -1 with the reason in why.
 */
int	fence_setup(struct fence *f, const char *key, int dry, char *where,
	    size_t wsize, char *why, size_t whysize);

/* The cgroup.procs of the set key, made the first time and kept open
 * (the caller does not close it); -1 with why. */
int	fence_procs(struct fence *f, const char *key, char *why,
	    size_t whysize);

/*
 * The spare's set: made ahead with the key of the last task started,
 * its cgroup.procs path into path; taken by a task of key (rewritten
 * if it differs; from then on it is that key's); forgotten when the
 * spare goes.  0, or -1 with why.
 */
int	fence_spare(struct fence *f, char *path, size_t size, char *why,
	    size_t whysize);
int	fence_spare_take(struct fence *f, const char *key, char *why,
	    size_t whysize);
void	fence_spare_forget(struct fence *f);

/* The path of ROOT-relative file name in the messages: ROOT/name. */
const char *fence_path(const struct fence *f, const char *name, char *buf,
	    size_t size);

/* Leaving: kill what is left in its sets and remove them and ROOT. */
void	fence_cleanup(struct fence *f);

#endif

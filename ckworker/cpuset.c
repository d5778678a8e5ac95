/*
 * cpuset.c - tasks fenced to their CPUs by cpuset cgroups (cgroup v1).
 *
 * A task's first process binds itself to the task's CPUs
 * (sched_setaffinity, limits.c), but a task may call sched_setaffinity
 * as well and widen its mask to every CPU of its cpuset: the machine's,
 * or the batch job's, where it would run on the cores of the worker's
 * other tasks.  In a cpuset cgroup of its CPUs it cannot: the kernel
 * cuts any mask asked to the cpuset's CPUs (and refuses one outside
 * them with EINVAL), and what the task starts inherits the cpuset.
 *
 * The worker's cpuset cgroup, BASE, is the one /proc/self/cgroup names
 * for the "cpuset" controller, under the v1 cpuset mount
 * (cgroup_own_dir).  The worker creates
 *
 *	BASE/ckworker.PID.START/	ROOT, with the worker's CPUs
 *	BASE/ckworker.PID.START/cpus.N/	one per CPU set of its tasks
 *
 * A set's cpuset is made the first time a task of those CPUs starts,
 * and kept: tasks of the same CPUs share it, so a start costs no mkdir
 * and no write of cpuset.cpus (0.3 ms), only the move of the task's
 * first process into it (a write of "0" to its cgroup.procs, through
 * a descriptor kept open: taskspawn.c, identity.c).  Right after the
 * move into its memory cgroup that costs about 0.2 ms: the RCU grace
 * period a move after a pause waits for (spare.c) is not waited for
 * twice.  Without a memory cgroup (the watchdog), this move is the one
 * that waits.  At most CPUSET_MAX sets are kept; one more takes the
 * place of one that holds no process.
 *
 * The spare (spare.c) moves itself ahead into a set of its own, made
 * with the CPUs of the last task that started, the likeliest of the
 * next on a worker that idles between tasks.  A task of other CPUs that
 * takes it has the set's cpuset.cpus rewritten (the kernel moves the
 * spare onto them; no move between cgroups, so no grace period), and
 * from then on the set is one of those CPUs like any other.
 *
 * Each cpuset needs memory nodes too: BASE's (cpuset.effective_mems).
 *
 * Only cgroup v1's cpuset hierarchy.  With cgroup v2 a process is in
 * one cgroup for every controller, so a task's cpuset would be its
 * memory cgroup's cpuset.cpus; no machine here has the v2 cpuset
 * controller to verify that on, so it is not done, and the worker says
 * that its tasks' CPUs are bound by affinity only.
 *
 * Leaving (limits.c's at_exit), the worker kills what is left in ROOT
 * and removes it; those of dead workers are removed at start
 * (cgroup_sweep_dead).  Kernel files, not the spool: plain system
 * calls, not fsop.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgfiles.h"
#include "cgroup.h"
#include "cpuset.h"
#include "hostinfo.h"
#include "msg.h"
#include "buf.h"

#define CPUSET_MAX	64	/* sets kept */
#define MEMS_MAX	4096	/* the text of cpuset.effective_mems */

static struct cset {
	char	name[32];	/* cpus.N under ROOT */
	char	*cpus;		/* its CPU list, as the tasks' ("0-3,8") */
	int	procs;		/* its cgroup.procs, open for writing */
	int	spare;		/* the spare's: no task is put in it */
} set[CPUSET_MAX];
static size_t nset;
static unsigned long seq;

static struct {
	char	base[PATH_MAX - 512];
	char	root[PATH_MAX - 256];
	int	rootfd;			/* ROOT; names below are relative */
	char	mems[MEMS_MAX];
	char	*last;			/* CPUs of the last task started */
} c = { .rootfd = -1 };

/* ROOT-relative (or absolute) paths: cgfiles.c's, one write */
static int
write_at(const char *path, const char *s)
{
	return cgfiles_write_at(c.rootfd, path, s);
}

static int
read_at(const char *path, char *buf, size_t size)
{
	return cgfiles_read_at(c.rootfd, path, buf, size);
}

/*
 * Give dir (ROOT-relative, or absolute) its memory nodes and cpus, in
 * that order (v1 takes no process into a cpuset without both).
 * 0, or -1 with why.
 */
static int
set_cpus(const char *dir, const char *cpus, int with_mems, char *why,
    size_t whysize)
{
	char path[PATH_MAX + 32];
	const char *file = "cpuset.mems";

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (with_mems && write_at(path, c.mems) < 0)
		goto fail;
	file = "cpuset.cpus";
	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (write_at(path, cpus) < 0)
		goto fail;
	return 0;
fail:
	snprintf(why, whysize, "write: %s%s%s: \"%s\": %s", *path == '/' ?
	    "" : c.root, *path == '/' ? "" : "/", path, strcmp(file,
	    "cpuset.mems") == 0 ? c.mems : cpus, strerror(errno));
	return -1;
}

static void
forget(size_t i)
{
	if (set[i].procs >= 0)
		(void)close(set[i].procs);
	free(set[i].cpus);
	if (unlinkat(c.rootfd, set[i].name, AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		msg_warn("rmdir: %s/%s: %m", c.root, set[i].name);
	set[i] = set[--nset];
}

/* Does set i hold no process? */
static int
is_empty(size_t i)
{
	char path[PATH_MAX], text[16];

	snprintf(path, sizeof path, "%s/cgroup.procs", set[i].name);
	return read_at(path, text, sizeof text) == 0;
}

/*
 * A new set of cpus (spare: the spare's); its index, or -1 with why.
 * When CPUSET_MAX are kept, one that holds no process goes first.
 */
static int
add(const char *cpus, int spare, char *why, size_t whysize)
{
	char path[PATH_MAX];
	struct cset *s;
	size_t i;
	int e;

	for (i = 0; nset == CPUSET_MAX && i < nset; i++)
		if (!set[i].spare && is_empty(i))
			forget(i);
	if (nset == CPUSET_MAX) {
		snprintf(why, whysize, "all %d cpusets of %s hold processes",
		    CPUSET_MAX, c.root);
		return -1;
	}
	s = &set[nset];
	s->procs = -1;
	snprintf(s->name, sizeof s->name, "cpus.%lu", seq++);
	if (mkdirat(c.rootfd, s->name, 0755) < 0) {
		snprintf(why, whysize, "mkdir: %s/%s: %s", c.root, s->name,
		    strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", s->name);
	if (set_cpus(s->name, cpus, 1, why, whysize) < 0 ||
	    (s->procs = openat(c.rootfd, path, O_WRONLY | O_CLOEXEC)) < 0) {
		e = errno;
		if (*why == 0)
			snprintf(why, whysize, "open: %s/%s: %s", c.root, path,
			    strerror(e));
		(void)unlinkat(c.rootfd, s->name, AT_REMOVEDIR);
		return -1;
	}
	s->cpus = xstrdup(cpus);
	s->spare = spare;
	return (int)nset++;
}

static void
remember(const char *cpus)
{
	if (c.last && strcmp(c.last, cpus) == 0)
		return;
	free(c.last);
	c.last = xstrdup(cpus);
}

int
cpuset_procs(const char *cpus, char *why, size_t whysize)
{
	size_t i;
	int k;

	*why = 0;
	for (i = 0; i < nset; i++)
		if (!set[i].spare && strcmp(set[i].cpus, cpus) == 0)
			break;
	if (i == nset) {
		if ((k = add(cpus, 0, why, whysize)) < 0)
			return -1;
		i = (size_t)k;
	}
	remember(cpus);
	return set[i].procs;
}

static int
spare_index(void)
{
	size_t i;

	for (i = 0; i < nset; i++)
		if (set[i].spare)
			return (int)i;
	return -1;
}

int
cpuset_spare(char *path, size_t size, char *why, size_t whysize)
{
	int k;

	*why = 0;
	if ((k = spare_index()) < 0 &&
	    (k = add(c.last, 1, why, whysize)) < 0)
		return -1;
	if ((size_t)snprintf(path, size, "%s/%s/cgroup.procs", c.root,
	    set[k].name) >= size) {
		snprintf(why, whysize, "%s/%s/cgroup.procs: path too long",
		    c.root, set[k].name);
		return -1;
	}
	return 0;
}

int
cpuset_spare_take(const char *cpus, char *why, size_t whysize)
{
	int k = spare_index();

	*why = 0;
	if (k < 0) {
		snprintf(why, whysize, "the spare has no cpuset");
		return -1;
	}
	if (strcmp(set[k].cpus, cpus) != 0) {
		if (set_cpus(set[k].name, cpus, 0, why, whysize) < 0)
			return -1;
		free(set[k].cpus);
		set[k].cpus = xstrdup(cpus);
	}
	set[k].spare = 0;
	remember(cpus);
	return 0;
}

void
cpuset_spare_forget(void)
{
	int k = spare_index();

	if (k >= 0)
		set[k].spare = 0;	/* a set of its CPUs, like another */
}

int
cpuset_setup(const char *cpus, int dry, char *where, size_t wsize,
    char *why, size_t whysize)
{
	char path[PATH_MAX + 32];

	*why = 0;
	if (cgroup_own_dir(1, "cpuset", c.base, sizeof c.base, why,
	    whysize) < 0)
		return -1;
	if ((size_t)snprintf(c.root, sizeof c.root, "%s/ckworker.%ld.%llu",
	    c.base, (long)getpid(), host_pid_start((long)getpid())) >=
	    sizeof c.root) {
		snprintf(why, whysize, "cgroup path too long");
		return -1;
	}
	snprintf(where, wsize, "%s", c.root);
	snprintf(path, sizeof path, "%s/cpuset.effective_mems", c.base);
	if (read_at(path, c.mems, sizeof c.mems) <= 0) {
		snprintf(why, whysize, "read: %s: %s", path, errno ?
		    strerror(errno) : "empty");
		return -1;
	}
	c.mems[strcspn(c.mems, "\n")] = 0;
	if (!dry)
		cgroup_sweep_dead(c.base);
	if (mkdir(c.root, 0755) < 0) {
		snprintf(why, whysize, "cannot create a child cgroup: mkdir: "
		    "%s: %s", c.root, strerror(errno));
		return -1;
	}
	if (set_cpus(c.root, cpus, 1, why, whysize) < 0 || dry) {
		(void)rmdir(c.root);
		c.root[0] = 0;
		return *why ? -1 : 0;
	}
	if ((c.rootfd = open(c.root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(why, whysize, "open: %s: %s", c.root,
		    strerror(errno));
		(void)rmdir(c.root);
		c.root[0] = 0;
		return -1;
	}
	c.last = xstrdup(cpus);
	return 0;
}

void
cpuset_cleanup(void)
{
	int stuck;

	while (nset > 0) {
		(void)close(set[nset - 1].procs);
		free(set[--nset].cpus);
	}
	if (c.rootfd >= 0)
		(void)close(c.rootfd);
	c.rootfd = -1;
	if (c.root[0] == 0)
		return;
	if ((stuck = cgroup_remove_dir(c.root)) > 0)
		msg_warn("the cpusets %s stay: %d process%s in them did not "
		    "end on an earlier SIGKILL; the next worker on this host "
		    "tries again", c.root, stuck, stuck == 1 ? "" : "es");
	c.root[0] = 0;
}

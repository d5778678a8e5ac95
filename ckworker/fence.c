/*
 * fence.c - tasks fenced to what they were given by cgroup v1
 * controllers that keep a set: cpuset (a task's CPUs, cpuset.c) and
 * devices (its GPUs, devices.c).
 *
 * The worker's cgroup of the controller, BASE, is the one
 * /proc/self/cgroup names for it, under its v1 mount (cgroup_own_dir).
 * The worker creates
 *
 *	BASE/ckworker.PID.START/	ROOT, with all that the worker has
 *	BASE/ckworker.PID.START/PREFIX.N/	one per set its tasks have had
 *
 * A set's cgroup is made the first time a task of that set starts, and
 * kept: tasks of the same set share it, so a start makes no cgroup and
 * writes no rule, only moves the task's first process in (a write of
 * "0" to its cgroup.procs, through a descriptor kept open: taskspawn.c,
 * identity.c).  Right after the move into its memory cgroup that costs
 * little: the RCU grace period a move after a pause waits for (spare.c)
 * is not waited for twice.  Without a memory cgroup (the watchdog),
 * the first such move is the one that waits.  At most FENCE_MAX sets
 * are kept; one more takes the place of one that holds no process.
 *
 * The spare (spare.c) moves itself ahead into a set of its own, made
 * with the set of the last task that started, the likeliest of the
 * next on a worker that idles between tasks.  A task of another set
 * that takes it has the set's files rewritten (the kernel applies them
 * to the spare in place: no move between cgroups, so no grace period),
 * and from then on it is a set like any other.
 *
 * Only cgroup v1.  With cgroup v2 a process is in one cgroup for every
 * controller, so a task's set would be written into its memory cgroup
 * (cpuset.cpus; a device BPF program); no machine here has those v2
 * controllers to verify that on, so it is not done, and the worker says
 * what is not fenced (limits.c).
 *
 * Leaving (limits.c's at_exit), the worker kills what is left in ROOT
 * and removes it; those of dead workers are removed by the next worker
 * on the host at its start, whatever its own methods
 * (cgroup_sweep_host).  Kernel files, not the spool: plain system
 * calls, not fsop.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cgfiles.h"
#include "cgroup.h"
#include "fence.h"
#include "hostinfo.h"
#include "msg.h"

const char *
fence_path(const struct fence *f, const char *name, char *buf, size_t size)
{
	int n = *name == '/' ? snprintf(buf, size, "%s", name) :
	    snprintf(buf, size, "%s/%s", f->root, name);

	return n >= 0 ? buf : name;	/* (cut to size: for messages) */
}

static void
forget(struct fence *f, size_t i)
{
	char shown[PATH_MAX + 64];

	if (f->set[i].procs >= 0)
		(void)close(f->set[i].procs);
	free(f->set[i].key);
	if (unlinkat(f->rootfd, f->set[i].name, AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		msg_warn("rmdir: %s: %m", fence_path(f, f->set[i].name, shown,
		    sizeof shown));
	f->set[i] = f->set[--f->nset];
}

/* Does set i hold no process? */
static int
is_empty(struct fence *f, size_t i)
{
	char path[PATH_MAX], text[16];

	snprintf(path, sizeof path, "%s/cgroup.procs", f->set[i].name);
	return cgfiles_read_at(f->rootfd, path, text, sizeof text) == 0;
}

/*
 * A new set of key (spare: the spare's); its index, or -1 with why.
 * When FENCE_MAX are kept, one that holds no process goes first.
 */
static int
add(struct fence *f, const char *key, int spare, char *why, size_t whysize)
{
	char path[PATH_MAX], shown[PATH_MAX + 64];
	struct fence_set *s;
	size_t i;

	for (i = 0; f->nset == FENCE_MAX && i < f->nset; i++)
		if (!f->set[i].spare && is_empty(f, i))
			forget(f, i);
	if (f->nset == FENCE_MAX) {
		snprintf(why, whysize, "all %d %s cgroups of %s hold processes",
		    FENCE_MAX, f->ctl, f->root);
		return -1;
	}
	s = &f->set[f->nset];
	snprintf(s->name, sizeof s->name, "%s.%lu", f->prefix, f->seq++);
	if (mkdirat(f->rootfd, s->name, 0755) < 0) {
		snprintf(why, whysize, "mkdir: %s: %s", fence_path(f, s->name,
		    shown, sizeof shown), strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", s->name);
	if (f->apply(f, s->name, key, 1, why, whysize) < 0) {
		(void)unlinkat(f->rootfd, s->name, AT_REMOVEDIR);
		return -1;
	}
	if ((s->procs = openat(f->rootfd, path, O_WRONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whysize, "open: %s: %s", fence_path(f, path,
		    shown, sizeof shown), strerror(errno));
		(void)unlinkat(f->rootfd, s->name, AT_REMOVEDIR);
		return -1;
	}
	s->key = xstrdup(key);
	s->spare = spare;
	return (int)f->nset++;
}

static void
remember(struct fence *f, const char *key)
{
	if (f->last && strcmp(f->last, key) == 0)
		return;
	free(f->last);
	f->last = xstrdup(key);
}

int
fence_procs(struct fence *f, const char *key, char *why, size_t whysize)
{
	size_t i;
	int k;

	*why = 0;
	for (i = 0; i < f->nset; i++)
		if (!f->set[i].spare && strcmp(f->set[i].key, key) == 0)
			break;
	if (i == f->nset) {
		if ((k = add(f, key, 0, why, whysize)) < 0)
			return -1;
		i = (size_t)k;
	}
	remember(f, key);
	return f->set[i].procs;
}

static int
spare_index(const struct fence *f)
{
	size_t i;

	for (i = 0; i < f->nset; i++)
		if (f->set[i].spare)
			return (int)i;
	return -1;
}

int
fence_spare(struct fence *f, char *path, size_t size, char *why,
    size_t whysize)
{
	int k;

	*why = 0;
	if ((k = spare_index(f)) < 0 &&
	    (k = add(f, f->last, 1, why, whysize)) < 0)
		return -1;
	if ((size_t)snprintf(path, size, "%s/%s/cgroup.procs", f->root,
	    f->set[k].name) >= size) {
		snprintf(why, whysize, "%s/%s/cgroup.procs: path too long",
		    f->root, f->set[k].name);
		return -1;
	}
	return 0;
}

int
fence_spare_take(struct fence *f, const char *key, char *why,
    size_t whysize)
{
	int k = spare_index(f);

	*why = 0;
	if (k < 0) {
		snprintf(why, whysize, "the spare has no %s cgroup", f->ctl);
		return -1;
	}
	if (strcmp(f->set[k].key, key) != 0) {
		if (f->apply(f, f->set[k].name, key, 0, why, whysize) < 0)
			return -1;
		free(f->set[k].key);
		f->set[k].key = xstrdup(key);
	}
	f->set[k].spare = 0;
	remember(f, key);
	return 0;
}

void
fence_spare_forget(struct fence *f)
{
	int k = spare_index(f);

	if (k >= 0)
		f->set[k].spare = 0;	/* a set of its key, like another */
}

int
fence_setup(struct fence *f, const char *key, int dry, char *where,
    size_t wsize, char *why, size_t whysize)
{
	*why = 0;
	f->rootfd = -1;
	if (cgroup_own_dir(1, f->ctl, f->base, sizeof f->base, why,
	    whysize) < 0)
		return -1;
	if ((size_t)snprintf(f->root, sizeof f->root, "%s/ckworker.%ld.%llu",
	    f->base, (long)getpid(), host_pid_start((long)getpid())) >=
	    sizeof f->root) {
		snprintf(why, whysize, "cgroup path too long");
		return -1;
	}
	snprintf(where, wsize, "%s", f->root);
	if (mkdir(f->root, 0755) < 0) {
		snprintf(why, whysize, "cannot create a child cgroup: mkdir: "
		    "%s: %s", f->root, strerror(errno));
		return -1;
	}
	if (f->apply(f, f->root, key, 1, why, whysize) < 0 || dry) {
		(void)rmdir(f->root);
		f->root[0] = 0;
		return *why ? -1 : 0;
	}
	if ((f->rootfd = open(f->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(why, whysize, "open: %s: %s", f->root,
		    strerror(errno));
		(void)rmdir(f->root);
		f->root[0] = 0;
		return -1;
	}
	f->last = xstrdup(key);
	return 0;
}

void
fence_cleanup(struct fence *f)
{
	int stuck;

	while (f->nset > 0) {
		(void)close(f->set[f->nset - 1].procs);
		free(f->set[--f->nset].key);
	}
	if (f->rootfd >= 0)
		(void)close(f->rootfd);
	f->rootfd = -1;
	if (f->root[0] == 0)
		return;
	if ((stuck = cgroup_remove_dir(f->root)) > 0)
		msg_warn("the %s cgroups %s stay: %d process%s in them did not "
		    "end on an earlier SIGKILL; the next worker on this host "
		    "tries again", f->ctl, f->root, stuck, stuck == 1 ? "" :
		    "es");
	f->root[0] = 0;
}

/*
 * cgroup.c - a memory cgroup per task, with cgroup v2 or v1.
 *
 * The worker's own cgroup, BASE, comes from /proc/self/cgroup ("0::/p"
 * for v2, the line naming "memory" for v1) under the mount point found
 * in /proc/self/mountinfo.  The worker creates
 *
 *	BASE/ckworker.PID.START/		ROOT, its cgroups
 *	BASE/ckworker.PID.START/worker/		v2 only: the worker itself
 *	BASE/ckworker.PID.START/ID.ATT/		one per running task
 *	BASE/ckworker.PID.START/free.N/		v1: an ended task's, kept
 *						for the next (see pool_take)
 *
 * cgroup v2 allows controllers to be handed down only from a cgroup
 * with no processes of its own ("no internal processes"), so there the
 * worker first moves itself into ROOT/worker, then enables the memory
 * controller in BASE's and ROOT's cgroup.subtree_control.  If BASE
 * holds other processes (the job script's shell, spoold and its other
 * workers), that fails with EBUSY: the worker moves back, removes what
 * it made and reports why (the caller falls back to cgroup v1 or the
 * watchdog).  The worker never moves processes that are not its own.
 *
 * A task's cgroup gets memory.max (v2) or memory.limit_in_bytes (v1)
 * and, where the files exist, no swap beyond it (memory.swap.max 0,
 * memory.memsw.limit_in_bytes = the limit) and, v2, memory.oom.group 1
 * so that the OOM killer takes the whole task at once.  A task's first
 * process moves itself in before it execs (a write of "0" to
 * cgroup.procs, through a descriptor the worker opened:
 * cgroup_procs_open; taskspawn.c, or identity.c for a task forked to
 * run as its submitter), so no process of the task ever runs outside
 * it.  The worker itself never enters a task's cgroup: there it could
 * be the process the kernel's OOM killer takes.
 *
 * Everything a task forks stays in its cgroup, including processes
 * that call setsid() or double-fork, so killing the cgroup's processes
 * (cgroup.kill where the kernel has it, else SIGKILL to every pid in
 * cgroup.procs, repeated until it is empty) stops the whole tree.
 *
 * At start, cgroups of dead workers (ckworker.PID.START whose process
 * is gone) under BASE are emptied and removed: their tasks are
 * orphans that spoold has already requeued elsewhere.
 *
 * These are kernel interfaces, not the spool: they are accessed with
 * plain system calls, not through fsop.h (whose counts are the spool's
 * operations per task).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cgfiles.h"
#include "cgroup.h"
#include "hostinfo.h"
#include "mountinfo.h"
#include "msg.h"

#define KILL_ROUNDS	16
#define PROCS_MAX	65536	/* pids read from one cgroup.procs */
#define PROCS_TEXT_MAX	(PROCS_MAX * 8)

/*
 * Buffers for reading cgroup.procs, kept for the worker's life: every
 * task's end reads it (768 KiB allocated and freed per task cost an
 * mmap, a munmap and page faults each time).  One thread, and no
 * caller nests: pids_of fills procs_text, signal_all uses procs_pid.
 */
static char procs_text[PROCS_TEXT_MAX];
static pid_t procs_pid[PROCS_MAX];
#define RMDIR_WAIT_MS	2000	/* for killed processes to leave */
#define STUCK_WAIT_MS	1000	/* for a SIGKILL sent to end its process
				 * (stuck_after) */

static struct {
	int	version;
	char	base[PATH_MAX - 512];
	char	root[PATH_MAX - 256];	/* base/ckworker.PID.START */
	char	leaf[PATH_MAX - 128];	/* v2: where the worker lives */
	int	has_kill;		/* cgroup.kill exists (v2, 5.14+) */
	int	base_enabled;		/* v2: we enabled memory below base */
	int	swap_knob;		/* memory.swap.max / memsw: 1, 0, -1 */
	int	oom_group;		/* v2 memory.oom.group: 1, 0, -1 */
	int	rootfd;			/* ROOT: the tasks' paths are relative */
} cg = { .rootfd = -1 };

static uint64_t keyed(const char *text, const char *key, int *found);

/*
 * Paths are absolute, or relative to ROOT: a task's cgroup is its name
 * ("ID.ATT", "free.N", "spare"), its files "ID.ATT/memory.peak".  Every
 * *at call is given cg.rootfd, which an absolute path ignores, so a
 * task's files are reached without walking the six or more components
 * above ROOT each time (eight times per task: doc/performance-history.md).
 */
static int
read_small(const char *path, char *buf, size_t size)
{
	return cgfiles_read_at(cg.rootfd, path, buf, size);
}

/* A cgroup file takes a value in one write. */
static int
write_str(const char *path, const char *s)
{
	return cgfiles_write_at(cg.rootfd, path, s);
}

static int
exists(const char *path)
{
	return faccessat(cg.rootfd, path, F_OK, 0) == 0;
}

/* Is word in a space/comma separated list? */
static int
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == 0 || p[n] == ' ' || p[n] == ',' || p[n] == '\n'))
			return 1;
	return 0;
}

const char *
cgroup_path_of(const char *text, int version, const char *ctl, char *out,
    size_t size)
{
	const char *line, *end, *c1, *c2;
	size_t n;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		if ((c1 = memchr(line, ':', (size_t)(end - line))) == NULL ||
		    (c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1))) == NULL)
			continue;
		if (version == 2) {
			if (!(c1 - line == 1 && line[0] == '0' && c2 == c1 + 1))
				continue;
		} else {
			char have[256];

			n = (size_t)(c2 - c1 - 1);
			if (n >= sizeof have)
				continue;
			memcpy(have, c1 + 1, n);
			have[n] = 0;
			if (!has_word(have, ctl))
				continue;
		}
		n = (size_t)(end - c2 - 1);
		if (n == 0 || n >= size)
			return NULL;
		memcpy(out, c2 + 1, n);
		out[n] = 0;
		return out;
	}
	return NULL;
}

struct hierarchy {
	int	version;
	const char *ctl;
	char	*mnt, *mroot;
	size_t	msize, rsize;
};

static int
is_hierarchy(void *arg, const struct mountinfo *m)
{
	struct hierarchy *h = arg;

	if (h->version == 2 ? strcmp(m->fstype, "cgroup2") != 0 :
	    strcmp(m->fstype, "cgroup") != 0 || !has_word(m->superopts,
	    h->ctl))
		return 0;
	return (size_t)snprintf(h->mnt, h->msize, "%s", m->point) < h->msize &&
	    (size_t)snprintf(h->mroot, h->rsize, "%s", m->root) < h->rsize ?
	    1 : -1;
}

/* Mount point (and root) of the v2 hierarchy or of v1's of ctl. */
static int
mount_of(int version, const char *ctl, char *mnt, size_t msize, char *mroot,
    size_t rsize)
{
	struct hierarchy h = { version, ctl, mnt, mroot, msize, rsize };

	return mountinfo_each(is_hierarchy, &h) == 1 ? 0 : -1;
}

int
cgroup_own_dir(int version, const char *ctl, char *dir, size_t size,
    char *why, size_t whysize)
{
	char text[8192], path[PATH_MAX], mnt[PATH_MAX], mroot[PATH_MAX];
	const char *rel;
	size_t rl;

	if (read_small("/proc/self/cgroup", text, sizeof text) < 0) {
		snprintf(why, whysize, "read: /proc/self/cgroup: %s",
		    strerror(errno));
		return -1;
	}
	if (cgroup_path_of(text, version, ctl, path, sizeof path) == NULL) {
		snprintf(why, whysize, "no cgroup v%d%s%s%s in /proc/self/cgroup",
		    version, version == 1 ? " " : "", version == 1 ? ctl : "",
		    version == 1 ? " hierarchy" : "");
		return -1;
	}
	if (mount_of(version, ctl, mnt, sizeof mnt, mroot, sizeof mroot) < 0) {
		snprintf(why, whysize, "no cgroup v%d%s%s%s mounted", version,
		    version == 1 ? " " : "", version == 1 ? ctl : "",
		    version == 1 ? " hierarchy" : "");
		return -1;
	}
	rel = path;
	rl = strlen(mroot);
	if (strcmp(mroot, "/") != 0 && strncmp(path, mroot, rl) == 0)
		rel = path + rl;
	if ((size_t)snprintf(dir, size, "%s%s", mnt, strcmp(rel, "/") == 0 ?
	    "" : rel) >= size) {
		snprintf(why, whysize, "cgroup path too long");
		return -1;
	}
	return 0;
}

static uint64_t
parse_limit(const char *s)
{
	char *end;
	unsigned long long v;

	if (strncmp(s, "max", 3) == 0)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || v >= (1ULL << 62))	/* v1's "unlimited" */
		return 0;
	return (uint64_t)v;
}

uint64_t
cgroup_memory_limit(char *from, size_t fsize)
{
	char dir[PATH_MAX], mnt[PATH_MAX], mroot[PATH_MAX], why[256];
	char path[PATH_MAX + 32], val[64], *slash;
	uint64_t best = 0, v;
	int version;

	for (version = 2; version >= 1; version--) {
		if (cgroup_own_dir(version, "memory", dir, sizeof dir, why,
		    sizeof why) < 0 || mount_of(version, "memory", mnt,
		    sizeof mnt, mroot, sizeof mroot) < 0)
			continue;
		for (;;) {
			snprintf(path, sizeof path, "%s/%s", dir, version == 2 ?
			    "memory.max" : "memory.limit_in_bytes");
			if (read_small(path, val, sizeof val) > 0 &&
			    (v = parse_limit(val)) != 0 && (best == 0 || v < best)) {
				best = v;
				snprintf(from, fsize, "%s", path);
			}
			if (strlen(dir) <= strlen(mnt) ||
			    (slash = strrchr(dir, '/')) == NULL)
				break;
			*slash = 0;
		}
		if (best)
			return best;
	}
	return 0;
}

static int
move_pid(const char *dir, pid_t who)
{
	char path[PATH_MAX + 32], pid[32];

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	snprintf(pid, sizeof pid, "%ld", (long)who);
	return write_str(path, pid);
}

static int
move_to(const char *dir)
{
	return move_pid(dir, getpid());
}

/* The pids in dir's cgroup.procs, up to max; -1 if it cannot be read. */
static int
pids_of(const char *dir, pid_t *out, size_t max)
{
	char path[PATH_MAX + 32], *text, *p, *end;
	size_t n = 0;
	long pid;

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	text = procs_text;
	if (read_small(path, text, PROCS_TEXT_MAX) < 0)
		return -1;
	for (p = text; n < max && (pid = strtol(p, &end, 10)) > 0 && end != p;
	    p = end)
		out[n++] = (pid_t)pid;
	return (int)n;
}

/*
 * Send sig to everything in dir (never to the worker itself); for
 * SIGKILL, cgroup.kill where the kernel has it, and rounds until
 * nothing is left, so that nothing forks its way out.  Returns how many
 * processes were there at first (0: empty), or -1.
 */
static int
signal_all(const char *dir, int sig)
{
	char path[PATH_MAX + 32];
	pid_t *pids = procs_pid;
	int n = 0, round, got, i, seen;

	if (sig == SIGKILL && cg.has_kill) {
		snprintf(path, sizeof path, "%s/cgroup.kill", dir);
		if (write_str(path, "1") < 0 && errno != ENOENT)
			msg_once("cgroup.kill", "write: %s%s%s: %m",
			    *path == '/' ? "" : cg.root, *path == '/' ? "" :
			    "/", path);
	}
	for (round = 0; round < (sig == SIGKILL ? KILL_ROUNDS : 1); round++) {
		if ((got = pids_of(dir, pids, PROCS_MAX)) < 0) {
			n = errno == ENOENT ? n : -1;
			break;
		}
		for (i = seen = 0; i < got; i++)
			if (pids[i] != getpid()) {
				(void)kill(pids[i], sig);
				seen++;
			}
		if (round == 0)
			n = seen;
		if (seen == 0)
			break;
	}
	return n;
}

/* SIGKILL everything in dir; how many were there, or -1. */
static int
kill_all(const char *dir)
{
	return signal_all(dir, SIGKILL);
}

/*
 * 0 while a tree that holds processes an earlier SIGKILL did not end
 * is removed (remove_all): no rmdir waits for anything to go, and one
 * that fails for them (EBUSY) is the caller's to report, once.
 */
static int rmdir_patient = 1;

/* rmdir, waiting up to RMDIR_WAIT_MS for killed processes to go. */
static int
rmdir_wait(const char *dir)
{
	uint64_t until = now_ms() + (rmdir_patient ? RMDIR_WAIT_MS : 0);
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (rmdir(dir) < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY || now_ms() >= until)
			return -1;
		(void)kill_all(dir);
		(void)nanosleep(&ts, NULL);
	}
	return 0;
}

/* fn(D) summed over each cgroup D directly below dir but one named skip */
static int
sum_below(const char *dir, const char *skip, int (*fn)(const char *))
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    (skip && strcmp(e->d_name, skip) == 0))
			continue;
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir,
		    e->d_name) < sizeof sub)
			n += fn(sub);
	}
	closedir(d);
	return n;
}

/* Empty and remove a cgroup directory and the ones in it. */
static int
remove_tree(const char *dir)
{
	int killed = sum_below(dir, NULL, remove_tree), k;

	if ((k = kill_all(dir)) > 0)
		killed += k;
	if (rmdir_wait(dir) < 0 && (rmdir_patient || errno != EBUSY))
		msg_warn("rmdir: %s: %m", dir);
	return killed;
}

int
cgroup_kill_tree(const char *dir)
{
	int n = sum_below(dir, NULL, cgroup_kill_tree), k = kill_all(dir);

	return n + (k > 0 ? k : 0);
}

const char *
cgroup_root(void)
{
	return cg.version ? cg.root : NULL;
}

/*
 * Has pid a SIGKILL pending?  Either it was sent a moment ago, and the
 * process has not run since or is still exiting, or it did not end the
 * process: that sits in the kernel (a hung filesystem's or driver's
 * call) until the call returns.  stuck_after tells them apart.
 */
static int
kill_pending(pid_t pid)
{
	static const char *const keys[] = { "\nSigPnd:", "\nShdPnd:" };
	char path[64], text[4096], *p;
	unsigned long long mask;
	size_t i;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if (read_small(path, text, sizeof text) < 0)
		return 0;
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if ((p = strstr(text, keys[i])) != NULL &&
		    sscanf(p + strlen(keys[i]), "%llx", &mask) == 1 &&
		    (mask & (1ULL << (SIGKILL - 1))))
			return 1;
	return 0;
}

/* How many processes in dir and the cgroups below it have a SIGKILL
 * pending (kill_pending). */
static int
stuck_in(const char *dir)
{
	int n = 0, got, i;

	if ((got = pids_of(dir, procs_pid, PROCS_MAX)) > 0)
		for (i = 0; i < got; i++)
			n += kill_pending(procs_pid[i]);
	return n + sum_below(dir, NULL, stuck_in);
}

/*
 * How many processes in dir and below a SIGKILL did not end: those
 * whose SIGKILL is still pending at until (STUCK_WAIT_MS after a look
 * made before the SIGKILLs were sent, or at the first look).
 * One sent a moment ago (by this worker as it abandons its tasks, by a
 * batch system that ends the job, by spoold's kill_orphans) is pending
 * too until its process has run and exited, which takes a while for
 * one that frees much memory, or that was in a short uninterruptible
 * wait (a disk read): taken for stuck at once, such a process had its
 * cgroups left behind with a false "did not end on an earlier
 * SIGKILL".  The wait ends as soon as none is pending.
 */
static int
stuck_after(const char *dir, uint64_t until)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int n;

	while ((n = stuck_in(dir)) > 0 && now_ms() < until)
		(void)nanosleep(&ts, NULL);
	return n;
}

/*
 * Empty and remove dir and the cgroups below it, as remove_tree, but
 * without waiting for anything to leave if some of its processes were
 * killed before and that did not end them (stuck_after, until: waiting
 * would only delay a worker's start or its exit, 2 s a level, and not
 * beating meanwhile gets a leaving worker declared lost).  Returns how
 * many it killed; *stuck: how many of those had been killed before.
 */
static int
remove_all(const char *dir, int *stuck, uint64_t until)
{
	int killed;

	*stuck = stuck_after(dir, until);
	rmdir_patient = *stuck == 0;
	killed = remove_tree(dir);
	rmdir_patient = 1;
	return killed;
}

int
cgroup_remove_dir(const char *dir)
{
	int stuck;

	(void)remove_all(dir, &stuck, now_ms() + STUCK_WAIT_MS);
	return exists(dir) ? stuck : 0;
}

/*
 * Remove ckworker.PID.START cgroups of dead workers under base.  What
 * killed their processes (their worker, spoold's kill_orphans, the
 * batch system) did so before the sweep began, so one STUCK_WAIT_MS
 * from its start serves them all: a host with several dead workers'
 * stuck processes delays a start by one wait, not one each.
 */
void
cgroup_sweep_dead(const char *base)
{
	uint64_t until = now_ms() + STUCK_WAIT_MS;
	char dir[PATH_MAX];
	unsigned long long start;
	struct dirent *e;
	long pid;
	DIR *d;
	int killed, stuck;

	if ((d = opendir(base)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR ||
		    sscanf(e->d_name, "ckworker.%ld.%llu", &pid, &start) != 2)
			continue;
		if (host_pid_alive(host_name(), host_boot_id(), pid, start) != 0)
			continue;
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", base,
		    e->d_name) >= sizeof dir)
			continue;
		killed = remove_all(dir, &stuck, until);
		if (!exists(dir))
			msg_info("removed the cgroups of dead worker %ld (%s)%s",
			    pid, dir, killed ? ", killing its orphaned task "
			    "processes" : "");
		else if (stuck)		/* (else remove_tree said why) */
			msg_warn("the cgroups of dead worker %ld (%s) stay: %d "
			    "process%s in them did not end on an earlier SIGKILL "
			    "(stuck in the kernel: a hung filesystem or device?); "
			    "the next worker on this host tries again", pid, dir,
			    stuck, stuck == 1 ? "" : "es");
	}
	closedir(d);
}

void
cgroup_sweep_host(void)
{
	static const struct {
		int	version;
		const char *ctl;
	} h[] = {
		{ 2, "memory" }, { 1, "memory" }, { 1, "cpuset" },
		{ 1, "devices" },
	};
	char base[PATH_MAX], why[512];
	size_t i;

	for (i = 0; i < sizeof h / sizeof *h; i++)
		if (cgroup_own_dir(h[i].version, h[i].ctl, base, sizeof base,
		    why, sizeof why) == 0 && access(base, W_OK) == 0)
			cgroup_sweep_dead(base);
}

/*
 * --print-resources: ROOT could be made (and is removed again); would
 * the memory controller reach it?  Changes nothing else.
 */
static int
dry_v2(char *why, size_t whysize)
{
	char path[PATH_MAX + 32], text[65536], *p, *end;
	long pid;
	int others = 0;

	(void)rmdir(cg.root);
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg.base);
	if (read_small(path, text, sizeof text) >= 0 && has_word(text, "memory"))
		return 0;
	snprintf(path, sizeof path, "%s/cgroup.procs", cg.base);
	if (read_small(path, text, sizeof text) < 0) {
		snprintf(why, whysize, "read: %s: %s", path, strerror(errno));
		return -1;
	}
	for (p = text; (pid = strtol(p, &end, 10)) > 0 && end != p; p = end)
		others += pid != (long)getpid();
	if (others) {
		snprintf(why, whysize, "%s holds %d other process%s, so the "
		    "memory controller cannot be handed down to task cgroups "
		    "(cgroup v2's no-internal-processes rule)", cg.base, others,
		    others == 1 ? "" : "es");
		return -1;
	}
	return 0;
}

/*
 * v2: back into BASE.  A cgroup that hands a controller down to its
 * children cannot hold processes (unless it is the root), so what we
 * enabled in BASE's subtree_control is disabled first (ROOT's first:
 * a controller a child hands down cannot be taken from it).
 */
static int
move_back(void)
{
	char path[PATH_MAX + 32];

	if (cg.base_enabled) {
		/* a child that hands it down keeps its parent's on */
		snprintf(path, sizeof path, "%s/cgroup.subtree_control",
		    cg.root);
		(void)write_str(path, "-memory");
		snprintf(path, sizeof path, "%s/cgroup.subtree_control",
		    cg.base);
		if (write_str(path, "-memory") < 0)
			msg_warn("write: %s: -memory: %m", path);
		else
			cg.base_enabled = 0;
	}
	return move_to(cg.base);
}

static int
setup_v2(int dry, char *why, size_t whysize)
{
	char path[PATH_MAX + 32], text[4096];
	int e;

	snprintf(path, sizeof path, "%s/cgroup.controllers", cg.base);
	if (read_small(path, text, sizeof text) < 0) {
		snprintf(why, whysize, "read: %s: %s", path, strerror(errno));
		return -1;
	}
	if (!has_word(text, "memory")) {
		snprintf(why, whysize, "the memory controller is not available "
		    "in %s (not delegated: cgroup.controllers has \"%.*s\")",
		    cg.base, (int)strcspn(text, "\n"), text);
		return -1;
	}
	if (mkdir(cg.root, 0755) < 0) {
		snprintf(why, whysize, "cannot create a child cgroup: mkdir: "
		    "%s: %s", cg.root, strerror(errno));
		return -1;
	}
	if (dry)
		return dry_v2(why, whysize);
	snprintf(cg.leaf, sizeof cg.leaf, "%s/worker", cg.root);
	if (mkdir(cg.leaf, 0755) < 0 || move_to(cg.leaf) < 0) {
		e = errno;
		snprintf(why, whysize, "cannot move the worker into %s: %s",
		    cg.leaf, strerror(e));
		goto undo;
	}
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg.base);
	if (read_small(path, text, sizeof text) < 0 ||
	    (!has_word(text, "memory") && (cg.base_enabled =
	    write_str(path, "+memory") == 0) == 0)) {
		e = errno;
		if (e == EBUSY)
			snprintf(why, whysize, "cannot enable the memory "
			    "controller for the children of %s: it holds other "
			    "processes (cgroup v2 allows controllers only below "
			    "a cgroup without processes; run ckworker alone in "
			    "a delegated cgroup, e.g. systemd-run --user "
			    "--scope -p Delegate=yes)", cg.base);
		else
			snprintf(why, whysize, "write: %s: +memory: %s", path,
			    strerror(e));
		goto undo_move;
	}
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg.root);
	if (write_str(path, "+memory") < 0) {
		snprintf(why, whysize, "write: %s: +memory: %s", path,
		    strerror(errno));
		goto undo_move;
	}
	snprintf(path, sizeof path, "%s/cgroup.kill", cg.leaf);
	cg.has_kill = exists(path);
	return 0;
undo_move:
	if (move_back() < 0)
		msg_fatal("cannot move the worker back to %s: %m", cg.base);
undo:
	(void)rmdir(cg.leaf);
	(void)rmdir(cg.root);
	cg.leaf[0] = 0;
	return -1;
}

static int
setup_v1(int dry, char *why, size_t whysize)
{
	char path[PATH_MAX + 32];

	if (mkdir(cg.root, 0755) < 0) {
		snprintf(why, whysize, "cannot create a child cgroup: mkdir: "
		    "%s: %s", cg.root, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/memory.limit_in_bytes", cg.root);
	if (!exists(path)) {
		snprintf(why, whysize, "%s: no memory.limit_in_bytes", cg.root);
		(void)rmdir(cg.root);
		return -1;
	}
	if (dry)
		(void)rmdir(cg.root);
	return 0;
}

/*
 * The host's swap, from SwapTotal in /proc/meminfo: 0 if none, and
 * UINT64_MAX if it cannot be read (then the worker assumes there may
 * be some and says so rather than stay silent).
 */
static uint64_t
swap_total(void)
{
	char text[8192];
	uint64_t kb;
	int found = 0;

	if (read_small("/proc/meminfo", text, sizeof text) < 0) {
		msg_warn("read: /proc/meminfo: %m");
		return UINT64_MAX;
	}
	kb = keyed(text, "SwapTotal:", &found);
	return found ? kb << 10 : UINT64_MAX;
}

int
cgroup_swap_check(uint64_t swap)
{
	const char *knob = cg.version == 2 ? "memory.swap.max" :
	    "memory.memsw.limit_in_bytes";

	/*
	 * ROOT has the memory files its tasks' cgroups will have, so the
	 * knob is looked for once, here.  Without it (swap not accounted:
	 * v1 without swapaccount, v2 without CONFIG_MEMCG_SWAP) a task on
	 * a host with swap can swap past its limit: that limit cannot be
	 * enforced, which is said once, at start.  A host without swap
	 * has nothing to limit and is left quiet.
	 */
	cg.swap_knob = exists(knob);
	if (cg.swap_knob || swap == 0)
		return 0;
	return msg_once("cgroup-swap-knob", "memory limits: %s: no %s (swap not "
	    "accounted): tasks may use swap beyond their memory limit",
	    cg.root, knob);
}

int
cgroup_setup(int version, int dry, char *where, size_t wsize, char *why,
    size_t whysize)
{
	int rc;

	cgfiles_reset(-1, 0);
	if (cg.rootfd >= 0)
		(void)close(cg.rootfd);
	memset(&cg, 0, sizeof cg);
	cg.rootfd = -1;
	cg.swap_knob = cg.oom_group = -1;	/* not looked for yet */
	if (cgroup_own_dir(version, "memory", cg.base, sizeof cg.base, why,
	    whysize) < 0)
		return -1;
	if ((size_t)snprintf(cg.root, sizeof cg.root, "%s/ckworker.%ld.%llu",
	    cg.base, (long)getpid(), host_pid_start((long)getpid())) >=
	    sizeof cg.root) {
		snprintf(why, whysize, "cgroup path too long");
		return -1;
	}
	snprintf(where, wsize, "%s", cg.root);
	rc = version == 2 ? setup_v2(dry, why, whysize) :
	    setup_v1(dry, why, whysize);
	if (rc != 0 || dry) {
		cg.root[0] = cg.leaf[0] = 0;
		return rc;
	}
	cg.version = version;
	if ((cg.rootfd = open(cg.root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(why, whysize, "open: %s: %s", cg.root,
		    strerror(errno));
		(void)cgroup_cleanup();
		return -1;
	}
	cgfiles_reset(cg.rootfd, version);
	(void)cgroup_swap_check(swap_total());
	return 0;
}

/*
 * cgroup v1: the memory cgroups of ended tasks, kept for the next ones.
 * Making and removing a memory cgroup costs the kernel some 150 us of
 * CPU (a mem_cgroup with its per-CPU counters made, then taken offline);
 * a rename some tens.  A task's cgroup joins the pool only when the
 * task left nothing in it: no process, no OOM kill (before Linux 4.13,
 * whose oom_control has no oom_kill: no hit of its limit), and at most
 * POOL_USAGE_MAX bytes still charged (kernel objects and
 * the per-CPU charge batches a task leaves behind, which the kernel
 * frees or reuses itself).  Its peak is reset as it joins, so the next
 * task's peak is its own plus at most that much.  A pooled cgroup
 * keeps its limit and is taken only by a task with the same limit.
 * cgroup v2 renames cgroups too, but reports the peak as a maximum
 * since the cgroup was made (memory.peak can be reset only per open
 * file, since Linux 6.12): there every task gets a new cgroup.
 */
#define POOL_MAX	8
#define POOL_USAGE_MAX	(1024 * 1024)

static struct pooled {
	char	name[32];	/* free.N under ROOT */
	uint64_t limit;
} pool[POOL_MAX];
static size_t npool;
static unsigned long pool_seq;

/*
 * Take a pooled cgroup whose limit is from lo to hi as NAME, the newest
 * first: 0 with its limit in *limit, or -1 if none.
 */
static int
pool_take(const char *name, uint64_t lo, uint64_t hi, uint64_t *limit)
{
	const char *a;
	size_t i;
	int rc;

	for (i = npool; i-- > 0;) {
		if (pool[i].limit < lo || pool[i].limit > hi)
			continue;
		*limit = pool[i].limit;
		a = pool[i].name;
		if ((rc = renameat(cg.rootfd, a, cg.rootfd, name)) == 0)
			cgfiles_rename(a, name);
		else {
			msg_warn("rename: %s/%s to %s: %m (not used again)",
			    cg.root, a, name);
			cgfiles_drop(a);
			if (unlinkat(cg.rootfd, a, AT_REMOVEDIR) < 0 &&
			    errno != ENOENT)
				msg_warn("rmdir: %s/%s: %m", cg.root, a);
		}
		pool[i] = pool[--npool];
		return rc;
	}
	return -1;
}

/* Why the cgroup name does not join the pool (-v), and -1. */
static int
not_kept(const char *name, const char *why)
{
	msg_debug("cgroup %s/%s: not kept for a next task (%s)", cg.root, name,
	    why);
	return -1;
}

int
cgroup_fake_root(const char *dir, int version)
{
	if (cg.rootfd >= 0)
		(void)close(cg.rootfd);
	npool = 0;
	snprintf(cg.root, sizeof cg.root, "%s", dir);
	if ((cg.rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	cg.version = version;
	cgfiles_reset(cg.rootfd, version);
	return 0;
}

int
cgroup_task_recycle(const char *name, uint64_t limit)
{
	char path[PATH_MAX + 64], text[64];
	struct pooled *p;
	uint64_t usage;
	int rc, found = 0;

	if (cg.version != 1)
		return -1;
	if (npool == POOL_MAX)
		return not_kept(name, "the pool is full");
	/* empty: cgroup.procs reads as nothing */
	snprintf(path, sizeof path, "%s/cgroup.procs", name);
	if ((rc = read_small(path, text, sizeof text)) != 0)
		return not_kept(name, rc > 0 ? "a process is still in it" :
		    "cgroup.procs unreadable");
	if (cgfiles_read(name, CGF_CURRENT, text, sizeof text) <= 0)
		return not_kept(name, "its usage unreadable");
	if ((usage = strtoull(text, NULL, 10)) > POOL_USAGE_MAX) {
		snprintf(text, sizeof text, "%" PRIu64 " bytes still charged",
		    usage);
		return not_kept(name, text);
	}
	/*
	 * An OOM kill is counted in it: limits_reaped read its count
	 * before the rest of the task's group was killed, and one of those
	 * may have hit the limit since.  Pooled, the count would be the
	 * next task's, killed at its first sample as over its memory.
	 */
	if (cgfiles_read(name, CGF_EVENTS, text, sizeof text) <= 0)
		return not_kept(name, "its oom_control unreadable");
	if (keyed(text, "oom_kill", &found) != 0)
		return not_kept(name, "an OOM kill is counted in it");
	snprintf(path, sizeof path, "%s/memory.failcnt", name);
	if (!found && (read_small(path, text, sizeof text) <= 0 ||
	    strtoull(text, NULL, 10) != 0))
		return not_kept(name, "its limit was hit (memory.failcnt)");
	if (cgfiles_write(name, CGF_PEAK, "0") < 0)
		return not_kept(name, "its peak could not be reset");
	p = &pool[npool];
	snprintf(p->name, sizeof p->name, "free.%lu", pool_seq++);
	if (renameat(cg.rootfd, name, cg.rootfd, p->name) < 0)
		return not_kept(name, strerror(errno));
	cgfiles_rename(name, p->name);
	p->limit = limit;
	npool++;
	return 0;
}

int
cgroup_task_create(const char *name, uint64_t limit, char *why,
    size_t whysize)
{
	uint64_t had;

	if (cg.version == 1 && pool_take(name, limit, limit, &had) == 0) {
		msg_debug("cgroup %s/%s: kept from an earlier task", cg.root,
		    name);
		return 0;
	}
	if (mkdirat(cg.rootfd, name, 0755) < 0 && errno != EEXIST) {
		snprintf(why, whysize, "mkdir: %s/%s: %s", cg.root, name,
		    strerror(errno));
		return -1;
	}
	msg_debug("cgroup %s/%s: made", cg.root, name);
	if (cgroup_task_limit(name, limit, 0, why, whysize) < 0) {
		(void)unlinkat(cg.rootfd, name, AT_REMOVEDIR);
		return -1;
	}
	cgfiles_add(name);
	return 0;
}

/*
 * The spare's cgroup (limits.c): a pooled one of any limit of at least
 * SPARE_LIMIT_MIN (the spare, a ckworker waiting on a socket, must fit;
 * the task that takes it is given its own limit then), else a new one
 * without a limit.  *limit: the limit it has, 0 for none.
 */
#define SPARE_LIMIT_MIN	(64ULL << 20)

int
cgroup_spare_create(const char *name, uint64_t *limit, char *why,
    size_t whysize)
{
	if (cg.version == 1 &&
	    pool_take(name, SPARE_LIMIT_MIN, UINT64_MAX, limit) == 0) {
		msg_debug("cgroup %s/%s: kept from an earlier task", cg.root,
		    name);
		return 0;
	}
	*limit = 0;
	return cgroup_task_create(name, 0, why, whysize);
}

int
cgroup_task_rename(const char *from, const char *to)
{
	if (renameat(cg.rootfd, from, cg.rootfd, to) < 0)
		return -1;
	cgfiles_rename(from, to);
	msg_debug("cgroup %s/%s: renamed from %s", cg.root, to, from);
	return 0;
}

int
cgroup_task_limit(const char *name, uint64_t limit, uint64_t had,
    char *why, size_t whysize)
{
	char path[PATH_MAX + 64], swap[PATH_MAX + 64], val[32];
	int swap_first;

	if (limit == 0 || limit == had)
		return 0;
	snprintf(val, sizeof val, "%" PRIu64, limit);
	snprintf(path, sizeof path, "%s/%s", name, cg.version == 2 ?
	    "memory.max" : "memory.limit_in_bytes");
	/*
	 * No swap beyond the limit, where the kernel offers the knob (the
	 * same in every task cgroup: looked for once).  cgroup v1 refuses
	 * a memory limit above the memory+swap one (EINVAL), so a limit
	 * raised from an earlier one (had) raises that one first.
	 */
	snprintf(swap, sizeof swap, "%s/%s", name, cg.version == 2 ?
	    "memory.swap.max" : "memory.memsw.limit_in_bytes");
	if (cg.swap_knob < 0)
		cg.swap_knob = exists(swap);
	swap_first = cg.swap_knob && cg.version == 1 && had && limit > had;
	if (swap_first && write_str(swap, val) < 0)
		msg_once("cgroup-swap", "write: %s/%s: %m (swap not limited)",
		    cg.root, swap);
	if (write_str(path, val) < 0) {
		snprintf(why, whysize, "write: %s/%s: %s", cg.root, path,
		    strerror(errno));
		return -1;
	}
	if (!swap_first && cg.swap_knob &&
	    write_str(swap, cg.version == 2 ? "0" : val) < 0)
		msg_once("cgroup-swap", "write: %s/%s: %m (swap not limited)",
		    cg.root, swap);
	if (cg.version == 2) {
		snprintf(path, sizeof path, "%s/memory.oom.group", name);
		if (cg.oom_group < 0)
			cg.oom_group = exists(path);
		if (cg.oom_group && write_str(path, "1") < 0)
			msg_once("cgroup-oom-group", "write: %s/%s: %m",
			    cg.root, path);
	}
	return 0;
}

int
cgroup_procs_open(const char *name)
{
	return cgfiles_dup(name, CGF_PROCS);
}

static uint64_t
keyed(const char *text, const char *key, int *found)
{
	size_t n = strlen(key);
	const char *p;

	for (p = text; (p = strstr(p, key)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ') {
			if (found)
				*found = 1;
			return strtoull(p + n + 1, NULL, 10);
		}
	return 0;
}

int
cgroup_task_stats(const char *name, int with_current, struct cg_stats *st)
{
	char path[PATH_MAX + 64], text[2048];
	int n;

	memset(st, 0, sizeof *st);
	if (with_current) {
		if (cgfiles_read(name, CGF_CURRENT, text, sizeof text) < 0)
			return -1;
		st->current = strtoull(text, NULL, 10);
	}
	if ((n = cgfiles_read(name, CGF_PEAK, text, sizeof text)) < 0 &&
	    (!with_current && (errno == ENOENT || errno == ENOTDIR)))
		return -1;	/* no such cgroup */
	if (n > 0)
		st->peak = strtoull(text, NULL, 10);
	if (cgfiles_read(name, CGF_EVENTS, text, sizeof text) > 0)
		st->oom_kills = keyed(text, "oom_kill", &st->has_oom_kills);
	if (cg.version == 1) {
		/* only where oom_control has no oom_kill (before Linux 4.13):
		 * the one other sign of a memory kill (limits_reaped) */
		snprintf(path, sizeof path, "%s/memory.failcnt", name);
		if (!st->has_oom_kills &&
		    read_small(path, text, sizeof text) > 0)
			st->failcnt = strtoull(text, NULL, 10);
	} else {
		snprintf(path, sizeof path, "%s/cpu.stat", name);
		if (read_small(path, text, sizeof text) > 0) {
			int f = 0;

			st->user = (double)keyed(text, "user_usec", &f) / 1e6;
			st->sys = (double)keyed(text, "system_usec", &f) / 1e6;
			st->has_cpu = f;
		}
	}
	return 0;
}

int
cgroup_task_kill(const char *name)
{
	return kill_all(name);
}

int
cgroup_task_signal(const char *name, int sig)
{
	return signal_all(name, sig);
}

int
cgroup_task_pids(const char *name, pid_t *pids, size_t max)
{
	return pids_of(name, pids, max);
}

int
cgroup_task_remove(const char *name)
{
	cgfiles_drop(name);
	if (unlinkat(cg.rootfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int
cgroup_cleanup(void)
{
	int stuck;

	cgfiles_reset(-1, 0);
	if (cg.rootfd >= 0) {
		(void)close(cg.rootfd);
		cg.rootfd = -1;
	}
	if (cg.root[0] == 0)
		return 0;
	/* as remove_all, with the worker moved back between */
	stuck = stuck_after(cg.root, now_ms() + STUCK_WAIT_MS);
	rmdir_patient = stuck == 0;
	/* the tasks first (the pooled ones too, not the worker's own
	 * leaf): disabling memory in BASE needs empty children */
	(void)sum_below(cg.root, "worker", remove_tree);
	npool = 0;
	if (cg.leaf[0] && move_back() < 0)
		msg_warn("cannot move back to %s: %m", cg.base);
	(void)remove_tree(cg.root);
	rmdir_patient = 1;
	if (!exists(cg.root))
		stuck = 0;
	cg.root[0] = cg.leaf[0] = 0;
	cg.version = 0;
	return stuck;
}

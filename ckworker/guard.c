/*
 * guard.c - a process that stops a worker's tasks when the worker dies.
 *
 * A worker killed outright (SIGKILL, the OOM killer, a crash) cannot
 * stop its tasks, and spoold can stop them only on its own host, where
 * it can prove the worker dead (kill_orphans).  On another node they
 * ran on until the batch job ended, beside the attempt spoold started
 * elsewhere once it declared the worker lost: the work done twice, and
 * a node's cores taken by tasks nobody waits for any more.
 *
 * So each worker starts a guard: "ckspool-guard --guard" (ckworker's
 * binary under another name, GUARD_NAME), a child started
 * as a task is (taskspawn.c: no fork; its own session, so that a
 * terminal's ^C reaches the worker alone) that waits for its parent's
 * death (PR_SET_PDEATHSIG) and nothing else.  The worker lists its
 * running tasks in a table they share (a memfd, the guard's descriptor
 * 3): a slot for each task as it starts (guard_slot), into which the
 * task's process itself stores its pid once it leads its own session,
 * before anything of the task runs (taskspawn.c, identity.c; a spare
 * is listed by the worker before it is told what to run), cleared as
 * its main process is reaped.  A child whose worker died before it
 * could store its pid finds another parent and exits instead.  The hot
 * path pays two stores into that memory and a getppid() a start, and
 * one store a reap.  When the worker dies, the guard sends SIGKILL to
 * each group listed and, with a cgroup method, to every process in the
 * worker's cgroups (which holds a task's processes that left its group
 * too) or, without one, to every process whose environment carries the
 * worker's SPOOL_WORKER (a process that left its task's group: a daemon
 * started with setsid, which the worker follows by its tree and its
 * environment while it lives, limits.c), says so, and exits.  A worker
 * that exits by itself has it do the same without a word (guard_stop,
 * as it leaves, before its cgroups are removed, where the guard lives
 * too with cgroup v2, or at exit: its tasks were stopped or handed back
 * already, or it exits on an error and they must not stay).
 *
 * What it cannot do: without a cgroup method, stop a process that left
 * its task's group and also dropped SPOOL_WORKER from its environment
 * (env -i, a setuid program whose environment /proc does not show to
 * the worker's user); nor anything if it was killed with the worker
 * (kill -9 of both, or of the job's every process, as a batch system
 * does, which ends the tasks too): the worker's cgroups are then
 * emptied by the next worker on the host, as before, and spoold still
 * kills the groups of a dead worker on its own host.  A guard that ends
 * while its worker lives is said once (guard_reaped).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cgroup.h"
#include "hostinfo.h"
#include "msg.h"
#include "ptree.h"
#include "taskspawn.h"
#include "worker.h"

/*
 * Its name and argv[0], without "ckworker" in them: "pkill -9 ckworker"
 * and "pkill -9 -f ckworker", which match a name or a command line
 * that contains it, leave the guard to stop the tasks (they took it
 * with the worker when it was named so).
 */
#define GUARD_NAME		"ckspool-guard"
#define GUARD_END_WAIT_MS	2000	/* at the worker's exit */
#define GUARD_NAMED		8	/* tasks named in its message */
#define GUARD_ENV_ROUNDS	8	/* looks for what left a task's group */
/* what a worker without a guard cannot do, said with why */
#define UNGUARDED	"if this worker is killed, its running tasks are " \
			"not stopped"

struct guard_slot {
	int32_t	pgid;		/* the task's, 0: none (yet) */
	uint32_t attempt;
	uint64_t id;
	int	taken;		/* the worker's only: reserved for a start */
};

struct guard_table {
	long	worker;		/* the worker's pid */
	char	wid[WDIR_ID_MAX];
	char	cgroot[PATH_MAX];	/* its cgroups, "" if none */
	uint32_t nslots;
	struct guard_slot slot[];
};

static struct guard_table *table;
static pid_t guard;		/* 0: none (not started, or ended) */

static size_t
size_for(uint32_t nslots)
{
	return sizeof(struct guard_table) +
	    (size_t)nslots * sizeof(struct guard_slot);
}

void
guard_start(void)
{
	static char *const argv[] = { (char *)GUARD_NAME, (char *)"--guard",
	    NULL };
	extern char **environ;
	struct spawn_plan plan;
	const char *what, *root;
	size_t table_size;
	sigset_t none;
	uint32_t n;
	int fd, e;

	/* a task may outlive its slot while its main process is given up
	 * (run.c): room for as many again */
	n = wk.info.slots * 2 + 8;
	table_size = size_for(n);
	if ((fd = memfd_create("ckworker-guard", MFD_CLOEXEC)) < 0 ||
	    ftruncate(fd, (off_t)table_size) < 0) {
		msg_warn("memfd_create: the guard's table: %m (" UNGUARDED
		    ")");
		if (fd >= 0)
			(void)close(fd);
		return;
	}
	table = mmap(NULL, table_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (table == MAP_FAILED) {
		msg_warn("mmap: the guard's table: %m (" UNGUARDED ")");
		table = NULL;
		(void)close(fd);
		return;
	}
	table->worker = (long)getpid();
	snprintf(table->wid, sizeof table->wid, "%s", wk.wid);
	if ((root = cgroup_root()) != NULL)
		snprintf(table->cgroot, sizeof table->cgroot, "%s", root);
	table->nslots = n;
	sigemptyset(&none);
	plan = (struct spawn_plan){ .exe = "/proc/self/exe", .argv = argv,
	    .env = environ, .cwd = "/", .out = STDERR_FILENO,
	    .err = STDERR_FILENO, .cgroup_fd = -1, .cpuset_fd = -1,
	    .devices_fd = -1, .extra = fd, .dfl = &none };
	if ((e = spawn_task(&guard, &plan, &what)) != 0) {
		msg_warn("%s: ckworker --guard: %s (" UNGUARDED ")", what,
		    strerror(e));
		guard = 0;
	} else if (atexit(guard_stop) != 0)
		msg_fatal("atexit: %m");
	(void)close(fd);
}

pid_t
guard_pid(void)
{
	return guard;
}

int32_t *
guard_slot(const struct job *j)
{
	uint32_t i;

	if (table == NULL)
		return NULL;
	for (i = 0; i < table->nslots; i++)
		if (table->slot[i].pgid == 0 && !table->slot[i].taken)
			break;
	if (i == table->nslots) {
		msg_once("guard-full", "the guard's table is full: task %"
		    PRIu64 " attempt %u is not stopped if this worker is "
		    "killed", j->id, j->attempt);
		return NULL;
	}
	table->slot[i].taken = 1;
	table->slot[i].id = j->id;
	table->slot[i].attempt = j->attempt;
	return &table->slot[i].pgid;
}

void
guard_listed(int32_t *slot, pid_t pid)
{
	if (slot)
		__atomic_store_n(slot, (int32_t)pid, __ATOMIC_RELEASE);
}

void
guard_unlist(int32_t *slot)
{
	struct guard_slot *g;

	if (slot == NULL)
		return;
	__atomic_store_n(slot, 0, __ATOMIC_RELEASE);
	g = (struct guard_slot *)(void *)((char *)slot -
	    offsetof(struct guard_slot, pgid));
	g->taken = 0;
}

void
guard_forget(pid_t pid)
{
	uint32_t i;

	if (table == NULL)
		return;
	for (i = 0; i < table->nslots; i++)
		if (table->slot[i].pgid == (int32_t)pid) {
			guard_unlist(&table->slot[i].pgid);
			return;
		}
}

int
guard_reaped(pid_t pid, int status)
{
	if (guard == 0 || pid != guard)
		return 0;
	guard = 0;
	if (WIFSIGNALED(status))
		msg_warn("the guard process %ld was killed by signal %d: "
		    UNGUARDED, (long)pid, WTERMSIG(status));
	else
		msg_warn("the guard process %ld exited with status %d: "
		    UNGUARDED, (long)pid, WEXITSTATUS(status));
	return 1;
}

void
guard_stop(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	uint64_t until;
	pid_t r;

	/* (a forked child that exits is not the worker) */
	if (guard == 0 || table == NULL || table->worker != (long)getpid())
		return;
	if (kill(guard, SIGUSR2) < 0) {
		guard = 0;	/* (it ended, and was reaped) */
		return;
	}
	until = now_ms() + GUARD_END_WAIT_MS;
	while ((r = waitpid(guard, NULL, WNOHANG)) == 0 && now_ms() < until)
		(void)nanosleep(&ts, NULL);
	if (r == 0)
		msg_warn("the guard process %ld did not end within %d ms of "
		    "being told that the worker leaves", (long)guard,
		    GUARD_END_WAIT_MS);
	guard = 0;
}

/* ---- ckworker --guard ---- */

/* SIGKILL what t lists; how many tasks had processes left, named in
 * named (as many as fit). */
static unsigned
stop_listed(const struct guard_table *t, struct buf *named)
{
	unsigned n = 0;
	uint32_t i;
	int32_t pgid;

	for (i = 0; i < t->nslots; i++) {
		pgid = __atomic_load_n(&t->slot[i].pgid, __ATOMIC_ACQUIRE);
		/*
		 * Listed until the worker reaped its main process: a group
		 * of the task's, or (its leader dead with the worker, not
		 * reaped by it) a pid that is not free before the rest of
		 * its session is gone.
		 */
		if (pgid <= 1 || kill(-(pid_t)pgid, SIGKILL) < 0)
			continue;
		if (n++ < GUARD_NAMED)
			buf_printf(named, "%stask %" PRIu64 " attempt %u",
			    n > 1 ? ", " : "", t->slot[i].id,
			    t->slot[i].attempt);
	}
	if (n > GUARD_NAMED)
		buf_printf(named, " and %u more", n - GUARD_NAMED);
	return n;
}

/* Whether pgid is one that t lists (stop_listed killed it). */
static int
listed(const struct guard_table *t, pid_t pgid)
{
	uint32_t i;

	for (i = 0; i < t->nslots; i++)
		if (__atomic_load_n(&t->slot[i].pgid, __ATOMIC_ACQUIRE) ==
		    (int32_t)pgid)
			return 1;
	return 0;
}

/*
 * Without a cgroup method: SIGKILL every process whose environment
 * carries the worker's SPOOL_WORKER, looking again while a look finds
 * one not killed before (a child forked meanwhile), GUARD_ENV_ROUNDS
 * times at most.  How many of them were outside the groups t lists:
 * the ones that left their task's group.
 */
static unsigned
stop_by_environment(const struct guard_table *t)
{
	char entry[sizeof "SPOOL_WORKER=" + WDIR_ID_MAX];
	pid_t self = getpid(), *killed = NULL;
	size_t i, k, nkilled = 0, before;
	unsigned outside = 0;
	struct psnap s;
	int round;

	snprintf(entry, sizeof entry, "SPOOL_WORKER=%s", t->wid);
	for (round = 0; round < GUARD_ENV_ROUNDS; round++) {
		if (psnap_take(&s) < 0) {
			msg_warn("guard: list: /proc: %m (processes of worker "
			    "%s's tasks that left their groups are not "
			    "stopped)", t->wid);
			break;
		}
		before = nkilled;
		for (i = 0; i < s.n; i++) {
			const struct pproc *p = &s.p[i];

			if (p->pid == self || p->state == 'Z' ||
			    p->state == 'X' || ptree_env_has(p->pid, entry) != 1 ||
			    kill(p->pid, SIGKILL) < 0)
				continue;
			for (k = 0; k < nkilled && killed[k] != p->pid; k++)
				;
			if (k < nkilled)
				continue;
			killed = xreallocarray(killed, nkilled + 1,
			    sizeof *killed);
			killed[nkilled++] = p->pid;
			outside += !listed(t, p->pgid);
		}
		psnap_free(&s);
		if (nkilled == before)
			break;
	}
	free(killed);
	return outside;
}

void
guard_main(void)
{
	struct buf named = BUF_INIT;
	struct guard_table *t;
	struct stat st;
	sigset_t set;
	int sig = 0, procs = 0, asked;
	unsigned n, left = 0;

	msg_init("ckworker");
	msg_timestamps(1);
	/* (exec'd as /proc/self/exe: "exe" to ps and pkill otherwise) */
	(void)prctl(PR_SET_NAME, GUARD_NAME, 0, 0, 0);
	if (fstat(3, &st) < 0)
		msg_fatal("guard: fstat: descriptor 3: %m");
	if ((size_t)st.st_size < sizeof *t)
		msg_fatal("guard: descriptor 3 is no guard's table");
	t = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, 3, 0);
	if (t == MAP_FAILED)
		msg_fatal("guard: mmap: descriptor 3: %m");
	if ((size_t)st.st_size < size_for(t->nslots))
		msg_fatal("guard: descriptor 3 is no guard's table");
	/* a batch system's SIGTERM, a terminal's SIGINT: the worker's */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);	/* the worker died */
	sigaddset(&set, SIGUSR2);	/* the worker exits */
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		msg_fatal("guard: sigprocmask: %m");
	if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) < 0)
		msg_fatal("guard: prctl: PR_SET_PDEATHSIG: %m");
	/* (if it died before the prctl, this process has another parent) */
	if ((long)getppid() == t->worker)
		while ((sig = sigwaitinfo(&set, NULL)) != SIGUSR1 &&
		    sig != SIGUSR2)
			if (sig < 0 && errno != EINTR)
				msg_fatal("guard: sigwaitinfo: %m");
	asked = sig == SIGUSR2;
	n = stop_listed(t, &named);
	if (t->cgroot[0])
		procs = cgroup_kill_tree(t->cgroot);
	else
		left = stop_by_environment(t);
	if (!asked && n > 0)
		msg_warn("worker %s (pid %ld) died with %u task%s running: "
		    "killed %s processes (%s)", t->wid, t->worker, n,
		    n == 1 ? "" : "s", n == 1 ? "its" : "their", named.p);
	else if (!asked && procs > 0)
		msg_warn("worker %s (pid %ld) died: killed %d process%s left "
		    "in its cgroups", t->wid, t->worker, procs,
		    procs == 1 ? "" : "es");
	if (!asked && left > 0)
		msg_warn("worker %s (pid %ld) died: killed %u process%s of "
		    "its tasks that had left their process groups", t->wid,
		    t->worker, left, left == 1 ? "" : "es");
	buf_free(&named);
	(void)fflush(stderr);
	_exit(0);
}

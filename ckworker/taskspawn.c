/*
 * taskspawn.c - a task's process started without copying the worker.
 *
 * fork() copies the worker's page tables and leaves both sides copy on
 * write: every page the worker writes afterwards faults and flushes the
 * TLB of the CPUs it ran on.  Where that is dear (on a VM whose every
 * address-space change exits to the hypervisor, the process forked
 * ahead for each task cost the worker 3 to 4 ms of CPU a task, three
 * times the rest of a task's handling; doc/performance-history.md) a task's
 * start must not fork.  posix_spawn does not, but it cannot put the
 * child into a cgroup, so the worker moved itself into the task's
 * cgroup around it and back: two moves a task, each of which can wait
 * for an RCU grace period on cgroup v1.
 *
 * So: clone(CLONE_VM | CLONE_VFORK) on a stack of ours, as posix_spawn
 * does it.  The child shares the worker's memory, and the worker waits
 * until the child has exec'd or exited.  The child makes only system
 * calls (no allocation, no locks, no stdio), on this file's stack:
 * its own session and process group (setsid: no controlling terminal,
 * see below), its pid into the guard's table (guard.c: listed before
 * anything of the task runs; a child whose worker died meanwhile exits
 * there), the given signals at their defaults, into its cgroup (a
 * write of "0" to cgroup.procs moves the writer), onto its CPUs, into
 * their cpuset and its GPUs' devices cgroup, stdout, stderr, a descriptor 3 if asked (the spare, spare.c),
 * stdin /dev/null, cwd, every signal unblocked, exec.  A step that
 * fails leaves its errno and name in memory the worker reads when it
 * resumes; the child exits and is reaped here.
 * Every signal is blocked around the clone so that no handler can run
 * in the child on the worker's memory (the worker has none but SIG_IGN
 * for SIGPIPE, which the child sets back to default if asked).
 *
 * A new session, not only a process group: a worker started from a
 * terminal (spoold --local at a shell prompt, ckworker by hand) had its
 * tasks in the terminal's session, with the terminal as theirs.  A task
 * that read it (a password or host key prompt: ssh, git, sudo) was
 * stopped by SIGTTIN, for good, and shown running; one that wrote to
 * it wrote onto the user's screen, past its stdout; and it could push
 * input into the user's shell (TIOCSTI), as another user's task in a
 * shared spool.  Without a controlling terminal, /dev/tty fails to open
 * (ENXIO), as in a batch job.
 *
 * Only from one thread at a time (the stack is static): the worker's
 * main thread.  Tasks run as their submitter (identity.c) fork instead:
 * becoming another user takes NSS lookups the child here may not make;
 * their child moves itself into the cgroup and onto the CPUs the same
 * way.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "taskspawn.h"

#define SPAWN_STACK	(64 * 1024)

static unsigned char stack[SPAWN_STACK] __attribute__((aligned(64)));

enum step { S_NONE, S_SESSION, S_SIGNALS, S_CGROUP, S_CPUS, S_CPUSET,
    S_DEVICES, S_STDOUT, S_STDERR, S_EXTRA, S_STDIN, S_CWD, S_SIGMASK,
    S_EXEC };
static const char *const step_name[] = { "", "setsid", "signals",
    "cgroup", "cpus", "cpuset", "devices", "stdout", "stderr", "descriptor 3", "stdin",
    "cwd", "sigmask", "exec" };

struct child {
	const struct spawn_plan *p;
	volatile int err;	/* the errno of the step that failed */
	volatile int step;	/* enum step */
};

/* fd onto target, close-on-exec cleared even if they are the same */
static int
onto(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target) < 0 ? -1 : 0;
}

static int
child_main(void *arg)
{
	struct child *c = arg;
	const struct spawn_plan *p = c->p;
	struct sigaction dfl;
	sigset_t none;
	int sig, fd;
	enum step s;

	s = S_SESSION;
	if (setsid() < 0)
		goto fail;
	spawn_list_self(p);
	s = S_SIGNALS;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(p->dfl, sig) == 1 &&
		    sigaction(sig, &dfl, NULL) < 0)
			goto fail;
	s = S_CGROUP;
	if (p->cgroup_fd >= 0 && write(p->cgroup_fd, "0", 1) != 1)
		goto fail;
	s = S_CPUS;
	if (p->cpus && sched_setaffinity(0, p->cpus_size, p->cpus) < 0)
		goto fail;
	s = S_CPUSET;	/* on its CPUs already: the cpuset moves it nowhere */
	if (p->cpuset_fd >= 0 && write(p->cpuset_fd, "0", 1) != 1)
		goto fail;
	s = S_DEVICES;
	if (p->devices_fd >= 0 && write(p->devices_fd, "0", 1) != 1)
		goto fail;
	s = S_STDOUT;
	if (onto(p->out, STDOUT_FILENO) < 0)
		goto fail;
	s = S_STDERR;
	if (onto(p->err, STDERR_FILENO) < 0)
		goto fail;
	s = S_EXTRA;	/* after 1 and 2, which may have been on 3 */
	if (p->extra >= 0 && onto(p->extra, 3) < 0)
		goto fail;
	s = S_STDIN;
	if ((fd = open("/dev/null", O_RDONLY)) < 0)
		goto fail;
	if (fd != STDIN_FILENO && (dup2(fd, STDIN_FILENO) < 0 ||
	    close(fd) < 0))
		goto fail;
	s = S_CWD;
	if (chdir(p->cwd) < 0)
		goto fail;
	s = S_SIGMASK;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	s = S_EXEC;
	execve(p->exe, p->argv, p->env);
fail:
	c->err = errno ? errno : EIO;
	c->step = s;
	_exit(127);
}

int
spawn_search(const char *cmd, const char *path, const char *cwd, char *out,
    size_t size)
{
	const char *p, *colon, *dir, *look;
	char full[PATH_MAX];
	size_t n, clen = strlen(cmd), wlen = cwd ? strlen(cwd) : 0;
	struct stat st;

	for (p = path;; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		dir = n ? p : ".";
		n = n ? n : 1;
		if (n + 1 + clen < size) {
			memcpy(out, dir, n);
			out[n] = '/';
			memcpy(out + n + 1, cmd, clen + 1);
			/* a relative entry from where the task will be, not
			 * from where this process is: the exec is there */
			look = out;
			if (cwd && out[0] != '/') {
				look = NULL;
				if (wlen + 1 + n + 1 + clen < sizeof full) {
					memcpy(full, cwd, wlen);
					full[wlen] = '/';
					memcpy(full + wlen + 1, out,
					    n + 1 + clen + 1);
					look = full;
				}
			}
			if (look && stat(look, &st) == 0 &&
			    S_ISREG(st.st_mode) && access(look, X_OK) == 0)
				return 0;
		}
		if (colon == NULL)
			break;
	}
	if (size)
		out[0] = 0;
	return -1;
}

int
spawn_task(pid_t *pid, const struct spawn_plan *p, const char **what)
{
	struct child c = { p, 0, S_NONE };
	sigset_t all, old;
	int e = 0, st;

	*what = "";
	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) < 0) {
		*what = "sigprocmask";
		return errno;
	}
	*pid = clone(child_main, stack + sizeof stack,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	if (*pid < 0)
		e = errno;
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (*pid < 0) {
		*pid = 0;
		*what = "clone";
		return e;
	}
	if (c.err) {	/* it exited: reaped here, not by the worker's loop */
		while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
			;
		*pid = 0;
		*what = step_name[c.step];
		return c.err;
	}
	return 0;
}

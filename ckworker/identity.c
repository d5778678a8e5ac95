/*
 * identity.c - whom a task runs as; see identity.h.
 *
 * The switch happens in a forked child, never in the worker: initgroups
 * (the user's supplementary groups), setgid, setuid, then a check that
 * the ids are the user's and that setuid(0) now fails.  The child then
 * enters the task's cwd with the user's rights, looks its program up
 * in PATH with them (spawn_search: the worker never looked, run.c),
 * and execs.  A failure of any step is sent to the parent through a
 * close-on-exec pipe: the parent reads either nothing (exec happened)
 * or the child's errno, step (and where it found its program).
 *
 * Before anything else the child moves itself into the task's cgroup
 * and binds itself to the task's CPUs, as a spawned task's process does
 * (taskspawn.c), so that nothing of the task runs outside them.  The
 * worker never enters the task's cgroup for the fork: with a limit
 * smaller than what the fork and the child's first pages charge there,
 * the kernel's OOM killer would take the largest process in the cgroup,
 * the worker itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsop.h"
#include "identity.h"
#include "taskenv.h"
#include "taskspawn.h"
#include "worker.h"

int
identity_of(const struct task_spec *t, struct identity *id, char *why,
    size_t size)
{
	struct passwd *pw;
	uid_t me = geteuid();

	memset(id, 0, sizeof *id);
	if (!wk.sp.cfg.shared)
		return 0;	/* private: every task is the owner's */
	if (t->uid == 0 && wk.sp.uid != 0) {
		snprintf(why, size, "submitted by root into a shared spool "
		    "that root does not own (uid %u owns it): not run as root",
		    (unsigned)wk.sp.uid);
		return -1;
	}
	if ((uid_t)t->uid == me)
		return 0;
	if (me != 0) {
		snprintf(why, size, "submitted by uid %u; this worker runs as "
		    "uid %u and cannot run it as its submitter (in a shared "
		    "spool, run ckworker as root)", (unsigned)t->uid,
		    (unsigned)me);
		return -1;
	}
	errno = 0;
	if ((pw = getpwuid((uid_t)t->uid)) == NULL) {
		snprintf(why, size, "submitted by uid %u, which has no account "
		    "on this host%s%s", (unsigned)t->uid, errno ? ": " : "",
		    errno ? strerror(errno) : "");
		return -1;
	}
	if (strlen(pw->pw_name) >= sizeof id->name ||
	    strlen(pw->pw_dir) >= sizeof id->home) {
		snprintf(why, size, "uid %u: login name or home too long",
		    (unsigned)t->uid);
		return -1;
	}
	id->change = 1;
	id->uid = pw->pw_uid;
	id->gid = pw->pw_gid;
	snprintf(id->name, sizeof id->name, "%s", pw->pw_name);
	snprintf(id->home, sizeof id->home, "%s", pw->pw_dir);
	return 0;
}

int
identity_give(const struct identity *id, int dfd, const char *name, int out,
    int err)
{
	int wfd, sfd, rc = 0, saved;

	if (!id->change)
		return 0;
	/* the outputs first: the directory is not the task's before them */
	if (fchown(out, id->uid, id->gid) < 0 ||
	    fchown(err, id->uid, id->gid) < 0)
		return -1;
	if ((wfd = fsop_opendir(dfd, name)) < 0)
		return -1;
	if (fchown(wfd, id->uid, id->gid) < 0)
		rc = -1;
	sfd = rc == 0 ? fsop_openfile(wfd, "script", O_RDONLY, 0) : -1;
	if (sfd >= 0) {
		if (fchown(sfd, id->uid, id->gid) < 0)
			rc = -1;
		saved = errno;
		(void)close(sfd);
		errno = saved;
	} else if (rc == 0 && errno != ENOENT)
		rc = -1;
	saved = errno;
	(void)close(wfd);
	errno = saved;
	return rc;
}

/* What the child says when a step fails (the parent reads nothing if
 * it exec'd), in one write of at most PIPE_BUF bytes: never split. */
struct report {
	int	err;
	int	step;	/* 0, or 1: its cgroup, 2: its CPUs, 3: its cwd,
			 * 4: its program, not found in PATH, 5: its
			 * cpuset, 6: its devices cgroup */
	char	exe[PIPE_BUF - 2 * sizeof(int)];	/* where it was found */
};
_Static_assert(sizeof(struct report) <= PIPE_BUF, "report in one write");

static const char *const report_step[] = { "", "cgroup", "cpus", "cwd",
    "command", "cpuset", "devices" };

/* The child: into its cgroup and cpuset and onto its CPUs, become id,
 * set up, find its program in path, exec; on failure report errno and
 * the step. */
static void __attribute__((noreturn))
child(int report, const struct identity *id, const struct spawn_plan *p,
    char *const env[], const char *path)
{
	struct report r;
	const char *exe = p->exe;
	sigset_t none;
	int sig, nul;

	memset(&r, 0, sizeof r);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(p->dfl, sig) == 1)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	/* its own session, without the worker's terminal, listed in the
	 * guard's table (taskspawn.c) */
	if (setsid() < 0)
		goto fail;
	spawn_list_self(p);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	r.step = 1;	/* (a write of "0" moves the writer) */
	if (p->cgroup_fd >= 0 && write(p->cgroup_fd, "0", 1) != 1)
		goto fail;
	r.step = 2;
	if (p->cpus && sched_setaffinity(0, p->cpus_size, p->cpus) < 0)
		goto fail;
	r.step = 5;	/* on its CPUs already: the cpuset moves it nowhere */
	if (p->cpuset_fd >= 0 && write(p->cpuset_fd, "0", 1) != 1)
		goto fail;
	r.step = 6;
	if (p->devices_fd >= 0 && write(p->devices_fd, "0", 1) != 1)
		goto fail;
	r.step = 0;
	if (dup2(p->out, STDOUT_FILENO) < 0 || dup2(p->err, STDERR_FILENO) < 0)
		goto fail;
	if ((nul = open("/dev/null", O_RDONLY)) < 0 ||
	    dup2(nul, STDIN_FILENO) < 0)
		goto fail;
	if (nul != STDIN_FILENO)
		(void)close(nul);
	if (initgroups(id->name, id->gid) < 0 || setgid(id->gid) < 0 ||
	    setuid(id->uid) < 0)
		goto fail;
	if (getuid() != id->uid || geteuid() != id->uid ||
	    getgid() != id->gid || getegid() != id->gid) {
		errno = EPERM;
		goto fail;
	}
	if (id->uid != 0 && setuid(0) == 0) {
		errno = EPERM;	/* the switch could be undone */
		goto fail;
	}
	r.step = 3;	/* as the user: the worker never looked at it */
	if (chdir(p->cwd) < 0)
		goto fail;
	/* its program, likewise (run.c), from its cwd as exec would */
	r.step = 4;
	if (strchr(exe, '/') == NULL) {
		if (spawn_search(exe, path, NULL, r.exe, sizeof r.exe) < 0) {
			errno = ENOENT;
			goto fail;
		}
		exe = r.exe;
	}
	r.step = 0;
	execve(exe, p->argv, env);
fail:
	r.err = errno ? errno : EIO;
	(void)!write(report, &r, sizeof r);
	_exit(127);
}

int
identity_spawn(pid_t *pid, const struct identity *id,
    const struct spawn_plan *p, const char **what, char *found, size_t size)
{
	struct report r;
	const char *path = taskenv_get(p->env, "PATH");
	char **e = NULL, *kv;
	int fds[2], st, err;
	ssize_t n;
	size_t i;

	*what = "";
	if (size)
		found[0] = 0;
	if (path == NULL)
		path = SPAWN_PATH_DEFAULT;
	/* the submitter's USER, LOGNAME and HOME, not the worker's */
	for (i = 0; p->env && p->env[i]; i++)
		if (strncmp(p->env[i], "USER=", 5) != 0 &&
		    strncmp(p->env[i], "LOGNAME=", 8) != 0 &&
		    strncmp(p->env[i], "HOME=", 5) != 0)
			e = strv_push(e, p->env[i]);
	kv = xasprintf("USER=%s", id->name);
	e = strv_push(e, kv);
	free(kv);
	kv = xasprintf("LOGNAME=%s", id->name);
	e = strv_push(e, kv);
	free(kv);
	kv = xasprintf("HOME=%s", id->home);
	e = strv_push(e, kv);
	free(kv);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		err = errno;
		strv_free(e);
		return err;
	}
	*pid = fork();
	if (*pid < 0) {
		err = errno;
		(void)close(fds[0]);
		(void)close(fds[1]);
		strv_free(e);
		*pid = 0;
		return err;
	}
	if (*pid == 0) {
		(void)close(fds[0]);
		child(fds[1], id, p, e, path);
	}
	(void)close(fds[1]);
	/*
	 * (No setpgid of the child here: made first, it would fail the
	 * child's setsid with EPERM.  Nothing signals -pid before the read
	 * below returns, by which time the child has made its session.)
	 */
	strv_free(e);
	memset(&r, 0, sizeof r);
	do
		n = read(fds[0], &r, sizeof r);
	while (n < 0 && errno == EINTR);
	(void)close(fds[0]);
	if (n == (ssize_t)sizeof r) {
		while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
			;
		*pid = 0;
		if (r.step > 0 && r.step < 7)
			*what = report_step[r.step];
		r.exe[sizeof r.exe - 1] = 0;
		if (r.step == 0 && size)
			snprintf(found, size, "%s", r.exe);
		return r.err ? r.err : EPERM;
	}
	return 0;
}

/*
 * identity.c - whom a task runs as; see identity.h.
 *
 * The switch happens in a forked child, never in the worker: initgroups
 * (the user's supplementary groups), setgid, setuid, then a check that
 * the ids are the user's and that setuid(0) now fails.  The child then
 * enters the task's cwd with the user's rights and execs.  A failure
 * of any step is sent to the parent through a close-on-exec pipe: the
 * parent reads either nothing (exec happened) or the child's errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsop.h"
#include "identity.h"
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
identity_give(const struct identity *id, int dfd, const char *name)
{
	int wfd, sfd, rc = 0, saved;

	if (!id->change)
		return 0;
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

/* The child: become id, set up, exec; on failure report errno. */
static void __attribute__((noreturn))
child(int report, const struct identity *id, const char *exe,
    char *const argv[], char *const env[], int out, int err,
    const char *cwd, const sigset_t *dfl)
{
	sigset_t none;
	int e, sig, nul;

	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(dfl, sig) == 1)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	if (setpgid(0, 0) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
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
	if (chdir(cwd) < 0)
		goto fail;
	execve(exe, argv, env);
fail:
	e = errno;
	(void)!write(report, &e, sizeof e);
	_exit(127);
}

int
identity_spawn(pid_t *pid, const struct identity *id, const char *exe,
    char *const argv[], char *const env[], int out, int err,
    const char *cwd, const sigset_t *dfl)
{
	char **e = NULL, *kv;
	int p[2], child_errno = 0, st;
	ssize_t n;
	size_t i;

	/* the submitter's USER, LOGNAME and HOME, not the worker's */
	for (i = 0; env && env[i]; i++)
		if (strncmp(env[i], "USER=", 5) != 0 &&
		    strncmp(env[i], "LOGNAME=", 8) != 0 &&
		    strncmp(env[i], "HOME=", 5) != 0)
			e = strv_push(e, env[i]);
	kv = xasprintf("USER=%s", id->name);
	e = strv_push(e, kv);
	free(kv);
	kv = xasprintf("LOGNAME=%s", id->name);
	e = strv_push(e, kv);
	free(kv);
	kv = xasprintf("HOME=%s", id->home);
	e = strv_push(e, kv);
	free(kv);
	if (pipe2(p, O_CLOEXEC) < 0) {
		child_errno = errno;
		strv_free(e);
		return child_errno;
	}
	*pid = fork();
	if (*pid < 0) {
		child_errno = errno;
		(void)close(p[0]);
		(void)close(p[1]);
		strv_free(e);
		return child_errno;
	}
	if (*pid == 0) {
		(void)close(p[0]);
		child(p[1], id, exe, argv, e, out, err, cwd, dfl);
	}
	(void)close(p[1]);
	(void)setpgid(*pid, *pid);	/* also here: no race with kill(-pid) */
	strv_free(e);
	do
		n = read(p[0], &child_errno, sizeof child_errno);
	while (n < 0 && errno == EINTR);
	(void)close(p[0]);
	if (n == (ssize_t)sizeof child_errno) {
		while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
			;
		*pid = 0;
		return child_errno ? child_errno : EPERM;
	}
	return 0;
}

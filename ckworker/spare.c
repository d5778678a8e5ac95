/*
 * spare.c - an idle worker's process for its next task, made ahead.
 *
 * On cgroup v1, moving a process into a cgroup waits for an RCU grace
 * period in the kernel once no process has moved for a while: 7.7 ms a
 * move on the test machine after 100 ms without one, 0.1 ms right after
 * another (doc/performance-history.md).  A task started after a pause paid that
 * on its way (the worker enters the task's cgroup around the spawn), so
 * a lone task submitted after a pause took 18 ms instead of 6.
 *
 * So a worker that has been idle SPARE_IDLE_MS keeps one spare: a child
 * that sets itself up as a task's process does (its own session,
 * default signals, stdin /dev/null), moves itself into a cgroup of its
 * own, one kept from an ended task or a new one (cgroup_spare_create;
 * the grace period is then its wait, not the worker's), says so, and
 * waits on a socket.  It is started as a task is (taskspawn.c: no
 * fork) and execs the worker's own program, "ckworker --spare", which
 * does the rest (spare_main): a forked spare left the worker's pages
 * shared copy-on-write, and on the test VM the worker's first writes to
 * them after each fork cost it 1-3 ms between its wake-up and the next
 * task's start (doc/performance-history.md).  Its socket comes as its stdout,
 * the pipe for its readiness as its stderr (it prints nothing), the
 * cgroup.procs it moves into as descriptor 3, and where tasks are
 * fenced by cpusets or devices cgroups, the sets of its own it moves
 * into next (fences.c), as arguments.
 *
 * The next task started (run_start) takes it: the cgroup is renamed to
 * the task's and given its memory limit, its sets given the task's
 * CPUs and GPUs, the process bound to them and sent what to run
 * (program, arguments, environment, working directory; stdout and
 * stderr as descriptors), and execs.
 * Nothing moves between cgroups on the way.
 * An exec that fails says its errno through the close-on-exec pipe the
 * readiness came through (j->fail_fd).
 *
 * Only with cgroup v1 memory limits (cgroup v2 would start the task in
 * its cgroup with clone3's CLONE_INTO_CGROUP; not done: no machine here
 * delegates the v2 memory controller), and not for tasks that run as
 * their submitter (identity.h) or whose cgroup was made ahead.  The
 * spare goes when the worker drains or leaves; a worker killed with -9
 * leaves it waiting on a socket whose other end is gone: it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "taskspawn.h"
#include "worker.h"

#define SPARE_IDLE_MS	20	/* idle this long before a spare is made */
#define SPARE_RETRY_MS	10000	/* after a spare could not be made */
#define PLAN_MAX	(64u << 20)	/* bytes of strings in a plan */

/* what is sent first; the strings and the descriptors come with it */
struct plan_head {
	uint32_t len;		/* bytes of strings that follow */
	uint32_t argc, envc;	/* exe, cwd, argv..., env..., NUL ended */
};

static struct {
	pid_t	pid;		/* 0: none */
	int	sock;		/* the plan goes through it */
	int	st;		/* its readiness (an int, 0), then errno */
	int	ready;		/* it said it is in its cgroup */
	int	err;		/* it said it could not enter it */
	uint64_t retry_ms;
} sp = { 0, -1, -1, 0, 0, 0 };

static void child_fail(int st) __attribute__((noreturn));

static void
child_fail(int st)
{
	int e = errno;

	(void)!write(st, &e, sizeof e);
	_exit(127);
}

static int
read_full(int fd, void *p, size_t n)
{
	char *c = p;
	ssize_t r;

	while (n) {
		if ((r = read(fd, c, n)) < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EPIPE;
			return -1;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The spare's side, after "ckworker --spare [FENCE...]": the socket on
 * 1, the readiness pipe on 2, its cgroup's cgroup.procs on 3, and the
 * paths of the cgroup.procs of its sets (its cpuset, its devices
 * cgroup: fences.c), fences, NULL-ended.  Never returns.
 */
void
spare_main(char **fences)
{
	struct plan_head h;
	struct msghdr m;
	struct iovec iov = { &h, sizeof h };
	union { struct cmsghdr c; char b[CMSG_SPACE(2 * sizeof(int))]; } u;
	struct cmsghdr *c;
	char *s, *p, *cwd, **argv, **env;
	int fds[2], sock, st, zero = 0;
	struct stat ss;
	uint32_t i;
	ssize_t r;

	if (fstat(STDOUT_FILENO, &ss) < 0 || !S_ISSOCK(ss.st_mode)) {
		fputs("ckworker: --spare is the worker's own (spare.c), not "
		    "to be run by hand\n", stderr);
		_exit(EXIT_USAGE);
	}
	if ((sock = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 4)) < 0 ||
	    (st = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 4)) < 0)
		_exit(127);
	run_child_defaults();
	if (write(3, "0", 1) != 1)	/* into its cgroup */
		child_fail(st);
	(void)close(3);
	for (; *fences; fences++) {	/* right after: no second wait */
		int fd = open(*fences, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			child_fail(st);
		(void)close(fd);
	}
	if (write(st, &zero, sizeof zero) != (ssize_t)sizeof zero)
		_exit(127);
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = sizeof u.b;
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof h)
		_exit(127);	/* not to run after all */
	c = CMSG_FIRSTHDR(&m);
	if (c == NULL || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(2 * sizeof(int)) || h.len > PLAN_MAX ||
	    h.argc == 0) {
		errno = EPROTO;
		child_fail(st);
	}
	memcpy(fds, CMSG_DATA(c), sizeof fds);
	if ((s = malloc((size_t)h.len + 1)) == NULL ||
	    (argv = calloc((size_t)h.argc + 1, sizeof *argv)) == NULL ||
	    (env = calloc((size_t)h.envc + 1, sizeof *env)) == NULL ||
	    read_full(sock, s, h.len) < 0)
		child_fail(st);
	s[h.len] = 0;
	cwd = s + strlen(s) + 1;	/* (s is the program) */
	if (cwd >= s + h.len) {
		errno = EPROTO;
		child_fail(st);
	}
	p = cwd + strlen(cwd) + 1;
	for (i = 0; i < h.argc + h.envc; i++) {
		if (p >= s + h.len) {
			errno = EPROTO;
			child_fail(st);
		}
		if (i < h.argc)
			argv[i] = p;
		else
			env[i - h.argc] = p;
		p += strlen(p) + 1;
	}
	if (dup2(fds[0], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0 ||
	    chdir(cwd) < 0)
		child_fail(st);
	run_child_unblock();
	execve(s, argv, env);
	child_fail(st);
}

/*
 * It said it is in its cgroup (an int, 0) or why it could not (an
 * errno), without waiting for it.
 */
static int
is_ready(void)
{
	int e;

	if (!sp.ready && !sp.err &&
	    read(sp.st, &e, sizeof e) == (ssize_t)sizeof e) {
		if (e == 0)
			sp.ready = 1;
		else
			sp.err = e;
	}
	return sp.ready;
}

static void
forget(void)
{
	if (sp.sock >= 0)
		(void)close(sp.sock);
	if (sp.st >= 0)
		(void)close(sp.st);
	sp.sock = sp.st = -1;
	sp.pid = 0;
	sp.ready = sp.err = 0;
}

void
spare_drop(void)
{
	if (sp.pid > 0) {
		run_kill_reap(sp.pid);
		limits_spare_forget();
	}
	forget();
}

static void
make(void)
{
	char *argv[] = { (char *)"ckworker", (char *)"--spare", NULL, NULL,
	    NULL };
	const char *fences[2];
	size_t nf, i;
	extern char **environ;
	struct spawn_plan plan;
	const char *what;
	char why[512];
	int s[2] = { -1, -1 }, p[2] = { -1, -1 }, procs = -1, e;
	sigset_t none;
	pid_t pid;

	if (limits_spare_prepare(why, sizeof why) < 0) {
		msg_once("spare", "cannot make a cgroup for the next task "
		    "ahead: %s (tasks are spawned at their start)", why);
		sp.retry_ms = wk.now + SPARE_RETRY_MS;
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0) {
		msg_once("spare", "socketpair or pipe: %m (tasks are spawned "
		    "at their start)");
		goto fail;
	}
	nf = fences_spare_paths(fences);
	for (i = 0; i < nf; i++)
		argv[2 + i] = (char *)fences[i];
	if ((procs = limits_spare_procs()) < 0) {
		msg_once("spare", "open: the cgroup.procs of the cgroup made "
		    "ahead: %m (tasks are spawned at their start)");
		goto fail;
	}
	sigemptyset(&none);
	plan = (struct spawn_plan){ .exe = "/proc/self/exe", .argv = argv,
	    .env = environ, .cwd = "/", .out = s[1], .err = p[1],
	    .cgroup_fd = -1, .cpuset_fd = -1, .devices_fd = -1,
	    .extra = procs, .dfl = &none };
	if ((e = spawn_task(&pid, &plan, &what)) != 0) {
		msg_once("spare", "%s: ckworker --spare: %s (tasks are "
		    "spawned at their start)", what, strerror(e));
		goto fail;
	}
	(void)close(procs);
	(void)close(s[1]);
	(void)close(p[1]);
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
		msg_fatal("fcntl: O_NONBLOCK: a pipe: %m");
	sp.pid = pid;
	sp.sock = s[0];
	sp.st = p[0];
	return;
fail:
	if (procs >= 0)
		(void)close(procs);
	if (s[0] >= 0) {
		(void)close(s[0]);
		(void)close(s[1]);
	}
	if (p[0] >= 0) {
		(void)close(p[0]);
		(void)close(p[1]);
	}
	limits_spare_forget();
	sp.retry_ms = wk.now + SPARE_RETRY_MS;
}

static int
idle(void)
{
	return wk.njobs == 0 && !wk.draining && !wk.stopping &&
	    limits_spare_possible();
}

void
spare_tick(void)
{
	if (sp.pid > 0 && (wk.draining || wk.stopping))
		spare_drop();
	else if (sp.pid == 0 && idle() && wk.now >= sp.retry_ms &&
	    wk.now - wk.idle_since >= SPARE_IDLE_MS)
		make();
}

uint64_t
spare_next(void)
{
	uint64_t at = wk.idle_since + SPARE_IDLE_MS;

	if (sp.pid > 0 || !idle())
		return UINT64_MAX;
	return at > sp.retry_ms ? at : sp.retry_ms;
}

int
spare_reaped(pid_t pid)
{
	if (sp.pid == 0 || pid != sp.pid)
		return 0;
	/* killed from outside, or it could not enter its cgroup */
	(void)is_ready();
	if (sp.err)
		msg_once("spare", "the next task's process made ahead could "
		    "not enter its cgroup: %s (tasks are spawned at their "
		    "start)", strerror(sp.err));
	limits_spare_forget();
	forget();
	sp.retry_ms = wk.now + SPARE_RETRY_MS;
	return 1;
}

static int
send_plan(int fd, const char *exe, char **argv, char **env,
    const char *cwd, int out, int err)
{
	struct buf b = BUF_INIT;
	struct plan_head h = { 0, 0, 0 };
	union { struct cmsghdr c; char b[CMSG_SPACE(2 * sizeof(int))]; } u;
	struct iovec iov;
	struct msghdr m;
	struct cmsghdr *c;
	int fds[2] = { out, err }, rc = -1;
	size_t off;
	ssize_t n;

	buf_append(&b, exe, strlen(exe) + 1);
	buf_append(&b, cwd, strlen(cwd) + 1);
	for (; argv[h.argc]; h.argc++)
		buf_append(&b, argv[h.argc], strlen(argv[h.argc]) + 1);
	for (; env[h.envc]; h.envc++)
		buf_append(&b, env[h.envc], strlen(env[h.envc]) + 1);
	if (b.len > PLAN_MAX) {
		errno = E2BIG;
		goto out;
	}
	h.len = (uint32_t)b.len;
	memset(&m, 0, sizeof m);
	memset(&u, 0, sizeof u);
	iov.iov_base = &h;
	iov.iov_len = sizeof h;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = sizeof u.b;
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(c), fds, sizeof fds);
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof h)
		goto out;
	for (off = 0; off < b.len; off += (size_t)n) {
		do
			n = send(fd, b.p + off, b.len - off, MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			goto out;
	}
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

int
spare_start(struct job *j, const char *exe, char **argv, char **env,
    const char *cwd, int out, int err)
{
	char why[512];
	int32_t *slot;

	if (sp.pid == 0 || j->cg || !is_ready())
		return -1;
	if (limits_spare_take(j, sp.pid, why, sizeof why) < 0) {
		msg_warn("task %" PRIu64 " attempt %u: %s (spawning it instead)",
		    j->id, j->attempt, why);
		spare_drop();
		limits_forget(j);
		return -1;
	}
	/* listed for the guard (guard.c) before it is told what to run */
	slot = guard_slot(j);
	guard_listed(slot, sp.pid);
	if (send_plan(sp.sock, exe, argv, env, cwd, out, err) < 0) {
		msg_warn("task %" PRIu64 " attempt %u: to the process made "
		    "ahead for it: %m (spawning it instead)", j->id, j->attempt);
		guard_unlist(slot);
		run_kill_reap(sp.pid);
		forget();
		limits_forget(j);
		return -1;
	}
	j->pid = sp.pid;
	j->fail_fd = sp.st;
	j->exe = xstrdup(exe);
	sp.st = -1;
	(void)close(sp.sock);
	sp.sock = -1;
	sp.pid = 0;
	sp.ready = 0;
	limits_spare_started(j);
	return 0;
}

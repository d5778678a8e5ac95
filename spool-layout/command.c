/*
 * command.c - see command.h.
 *
 * fork, then in the child: own process group, signals reset, stdin,
 * stdout, stderr, chdir, exec.  A failure before exec is sent to the
 * parent over a close-on-exec pipe (stage and errno), so "not found"
 * and "no such directory" are start failures with their reason, not an
 * exit status to guess from.  The parent writes the input and reads
 * both outputs with poll() until both pipes close, then waits for the
 * child by pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)	/* linux/close_range.h */
#endif

extern char **environ;

enum { ST_SETUP, ST_CHDIR, ST_EXEC };
static const char *const stage_name[] = { "setting up", "chdir", "exec" };

struct fail {
	int	stage;
	int	err;
};

static void
child(const struct command *c, int in, int out, int err, int report)
{
	struct fail f = { ST_SETUP, 0 };
	struct sigaction sa;
	sigset_t none;
	int sig, null;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0);
	command_child_fds();
	if ((null = open("/dev/null", O_RDWR)) < 0)
		goto fail;
	if (dup2(in >= 0 ? in : null, STDIN_FILENO) < 0 ||
	    dup2(out >= 0 ? out : null, STDOUT_FILENO) < 0 ||
	    dup2(err >= 0 ? err : null, STDERR_FILENO) < 0)
		goto fail;
	if (null > STDERR_FILENO)	/* (else one of the three itself) */
		(void)close(null);
	f.stage = ST_CHDIR;
	if (c->cwd && chdir(c->cwd) < 0)
		goto fail;
	f.stage = ST_EXEC;
	execvpe(c->argv[0], c->argv, c->envp ? c->envp : environ);
fail:
	f.err = errno;
	(void)!write(report, &f, sizeof f);
	_exit(127);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

int
command_run(struct command *c, struct buf *out, struct buf *err, char *why,
    size_t size)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	int rep[2] = { -1, -1 };
	size_t in_off = 0, in_len = c->input ? strlen(c->input) : 0;
	uint64_t deadline = c->limit_ms ? now_ms() + c->limit_ms : 0, now;
	uint64_t next_tick = c->tick && c->tick_ms ? now_ms() + c->tick_ms : 0;
	struct pollfd pfd[3];
	struct fail f;
	char chunk[8192], name[JOURNAL_VALUE_MAX + 1];
	int killed = 0, rc = -1, e, n, i, t;
	ssize_t r;
	pid_t pid;

	/* the command's name in messages: quoted if not a plain word */
	snprintf(name, sizeof name, "%s", journal_q(c->argv[0]));
	if (out)
		buf_reset(out);
	if (err)
		buf_reset(err);
	c->status = 0;
	if ((in_len && pipe2(pin, O_CLOEXEC) < 0) ||
	    pipe2(pout, O_CLOEXEC) < 0 ||
	    (err && pipe2(perr, O_CLOEXEC) < 0) ||
	    pipe2(rep, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(why, size, "%s: pipe: %s", name, strerror(e));
		goto out;
	}
	if ((pid = fork()) < 0) {
		e = errno;
		snprintf(why, size, "%s: fork: %s", name, strerror(e));
		goto out;
	}
	if (pid == 0)
		child(c, pin[0], pout[1], perr[1], rep[1]);
	close_fd(&pin[0]);
	close_fd(&pout[1]);
	close_fd(&perr[1]);
	close_fd(&rep[1]);
	if (pin[1] >= 0)
		(void)fcntl(pin[1], F_SETFL, O_NONBLOCK);
	for (;;) {
		n = 0;
		if (pout[0] >= 0) {
			pfd[n].fd = pout[0];
			pfd[n++].events = POLLIN;
		}
		if (perr[0] >= 0) {
			pfd[n].fd = perr[0];
			pfd[n++].events = POLLIN;
		}
		if (n == 0)
			break;
		if (pin[1] >= 0) {
			pfd[n].fd = pin[1];
			pfd[n++].events = POLLOUT;
		}
		t = -1;
		now = now_ms();
		if (next_tick && now >= next_tick) {
			c->tick();
			now = now_ms();
			next_tick = now + c->tick_ms;
		}
		if (deadline) {
			if (!killed && now >= deadline) {
				(void)kill(-pid, SIGKILL);
				(void)kill(pid, SIGKILL);
				killed = 1;
				deadline = now + COMMAND_KILL_WAIT_MS;
			} else if (killed && now >= deadline)
				break;	/* something of it holds the pipes */
			t = (int)(deadline - now);
		}
		if (next_tick && (t < 0 || next_tick - now < (uint64_t)t))
			t = (int)(next_tick - now);
		if (poll(pfd, (nfds_t)n, t) < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			(void)kill(-pid, SIGKILL);
			killed = 1;
			snprintf(why, size, "%s: poll: %s", name,
			    strerror(e));
			break;
		}
		for (i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (pfd[i].fd == pin[1]) {
				r = write(pin[1], c->input + in_off,
				    in_len - in_off);
				if (r > 0)
					in_off += (size_t)r;
				if ((r < 0 && errno != EAGAIN && errno != EINTR) ||
				    in_off == in_len)
					close_fd(&pin[1]);
				continue;
			}
			r = read(pfd[i].fd, chunk, sizeof chunk);
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				if (pfd[i].fd == pout[0])
					close_fd(&pout[0]);
				else
					close_fd(&perr[0]);
				continue;
			}
			if (pfd[i].fd == pout[0]) {
				if (out && out->len < COMMAND_OUTPUT_MAX)
					buf_append(out, chunk, (size_t)r);
			} else if (err && err->len < COMMAND_OUTPUT_MAX)
				buf_append(err, chunk, (size_t)r);
		}
	}
	while (waitpid(pid, &c->status, 0) < 0)
		if (errno != EINTR) {
			e = errno;
			snprintf(why, size, "%s: waitpid: %s", name,
			    strerror(e));
			goto out;
		}
	if (read(rep[0], &f, sizeof f) == (ssize_t)sizeof f &&
	    f.stage >= ST_SETUP && f.stage <= ST_EXEC) {
		if (f.stage == ST_CHDIR)
			snprintf(why, size, "%s: chdir: %s: %s", name,
			    journal_q(c->cwd), strerror(f.err));
		else
			snprintf(why, size, "%s: %s: %s", name,
			    stage_name[f.stage], strerror(f.err));
		e = f.err;
		goto out;
	}
	if (killed) {
		snprintf(why, size, "%s: no answer in %g s; killed",
		    name, (double)c->limit_ms / 1000);
		e = ETIMEDOUT;
		goto out;
	}
	rc = 0;
	e = 0;
out:
	close_fd(&pin[0]);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&pout[1]);
	close_fd(&perr[0]);
	close_fd(&perr[1]);
	close_fd(&rep[0]);
	close_fd(&rep[1]);
	errno = e;
	return rc;
}

int
command_ok(const struct command *c)
{
	return WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0;
}

void
command_why(const struct command *c, const struct buf *out,
    const struct buf *err, char *why, size_t size)
{
	const struct buf *b = err && err->len ? err : out;
	const char *p = b && b->p ? b->p : "", *name;
	const char *shown = journal_q(c->argv[0]);
	struct buf line = BUF_INIT;
	char raw[301];
	size_t n;

	/* the first line that says something */
	while (*p == '\n' || *p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, "\n");
	if (n > 300)
		n = 300;
	/* its control bytes escaped: it goes into messages and logs */
	memcpy(raw, p, n);
	raw[n] = 0;
	buf_put_printable(&line, raw);
	name = strrchr(c->argv[0], '/') ? strrchr(c->argv[0], '/') + 1 :
	    c->argv[0];
	if (n && strncmp(p, name, strlen(name)) == 0 && p[strlen(name)] == ':')
		snprintf(why, size, "%s", line.p);	/* it names itself */
	else if (n)
		snprintf(why, size, "%s: %s", shown, line.p);
	else if (WIFEXITED(c->status))
		snprintf(why, size, "%s: exit status %d", shown,
		    WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(why, size, "%s: killed by signal %d", shown,
		    WTERMSIG(c->status));
	else
		snprintf(why, size, "%s: failed", shown);
	buf_free(&line);
}

void
command_std_fds(void)
{
	int fd;

	do {
		if ((fd = open("/dev/null", O_RDONLY)) < 0)
			msg_fatal("open: /dev/null: %m");
	} while (fd <= STDERR_FILENO);
	(void)close(fd);
}

void
command_private_fds(const char *whose)
{
	/* from 3 up: to the end of the table (a bound above any fd); by
	 * syscall, as musl (spool's C library, Makefile) has no wrapper */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		msg_warn("close_range: descriptors 3 and up: %m: those %s "
		    "inherited are passed on to what it runs", whose);
}

/* The limit this process was started with, once command_more_fds
 * raised it (else rlim_cur 0: nothing to give back). */
static struct rlimit nofile_given;

void
command_more_fds(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		msg_warn("getrlimit: open files: %m");
		return;
	}
	if (rl.rlim_cur >= rl.rlim_max)
		return;
	nofile_given = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		msg_warn("setrlimit: open files: %llu: %m (it stays at %llu)",
		    (unsigned long long)rl.rlim_max,
		    (unsigned long long)nofile_given.rlim_cur);
		nofile_given.rlim_cur = 0;
	}
}

void
command_child_fds(void)
{
	/* lowering a soft limit cannot fail; a child has no log to say
	 * so in anyway */
	if (nofile_given.rlim_cur != 0)
		(void)setrlimit(RLIMIT_NOFILE, &nofile_given);
}

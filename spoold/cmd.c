/*
 * cmd.c - run a batch system's command (sbatch, squeue, qdel, ...).
 *
 * The command gets /dev/null or the given text on stdin; its stdout and
 * stderr are captured (bounded); it is killed if it runs longer than
 * the time limit, so a hung qstat cannot stop spoold for long.  SIGCHLD
 * is blocked in spoold (signalfd), so the child is waited for here by
 * pid; local workers' exits are reaped by local_reap as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostinfo.h"
#include "msg.h"
#include "spoold.h"

#define CMD_OUTPUT_MAX (4u << 20)

int
cmd_run(char *const argv[], const char *input, struct buf *out,
    struct buf *err, uint64_t limit_ms, int *status)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	uint64_t deadline = now_ms() + limit_ms;
	struct pollfd pfd[3];
	size_t in_off = 0, in_len = input ? strlen(input) : 0;
	char chunk[8192];
	pid_t pid;
	int open_fds, i, rc = -1, killed = 0;

	buf_reset(out);
	buf_reset(err);
	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 ||
	    pipe2(perr, O_CLOEXEC) < 0) {
		msg_warn("pipe: %s: %m", argv[0]);
		goto out;
	}
	if ((pid = fork()) < 0) {
		msg_warn("fork: %s: %m", argv[0]);
		goto out;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		dup2(pin[0], STDIN_FILENO);
		dup2(pout[1], STDOUT_FILENO);
		dup2(perr[1], STDERR_FILENO);
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "exec: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	pin[0] = pout[1] = perr[1] = -1;
	if (in_len == 0) {
		close(pin[1]);
		pin[1] = -1;
	} else
		(void)fcntl(pin[1], F_SETFL, O_NONBLOCK);
	for (;;) {
		int n = 0, t;

		open_fds = 0;
		if (pout[0] >= 0) {
			pfd[n].fd = pout[0];
			pfd[n++].events = POLLIN;
			open_fds++;
		}
		if (perr[0] >= 0) {
			pfd[n].fd = perr[0];
			pfd[n++].events = POLLIN;
			open_fds++;
		}
		if (pin[1] >= 0) {
			pfd[n].fd = pin[1];
			pfd[n++].events = POLLOUT;
		}
		if (open_fds == 0)
			break;
		t = now_ms() >= deadline ? 0 : (int)(deadline - now_ms());
		if (t == 0 && !killed) {
			msg_warn("%s: no answer after %llu ms; killing it", argv[0],
			    (unsigned long long)limit_ms);
			kill(pid, SIGKILL);
			killed = 1;
		}
		if (poll(pfd, (nfds_t)n, killed ? 1000 : t) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			ssize_t r;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].fd == pin[1]) {
				r = write(pin[1], input + in_off, in_len - in_off);
				if (r > 0)
					in_off += (size_t)r;
				if (r < 0 || in_off == in_len) {
					close(pin[1]);
					pin[1] = -1;
				}
				continue;
			}
			r = read(pfd[i].fd, chunk, sizeof chunk);
			if (r <= 0) {
				if (pfd[i].fd == pout[0]) {
					close(pout[0]);
					pout[0] = -1;
				} else {
					close(perr[0]);
					perr[0] = -1;
				}
				continue;
			}
			if (pfd[i].fd == pout[0] && out->len < CMD_OUTPUT_MAX)
				buf_append(out, chunk, (size_t)r);
			else if (pfd[i].fd == perr[0] && err->len < CMD_OUTPUT_MAX)
				buf_append(err, chunk, (size_t)r);
		}
		if (killed && now_ms() > deadline + 5000)
			break;
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			msg_warn("waitpid: %s: %m", argv[0]);
			goto out;
		}
	rc = killed ? -1 : 0;
	if (killed)
		errno = ETIMEDOUT;
out:
	for (i = 0; i < 2; i++) {
		if (pin[i] >= 0)
			close(pin[i]);
		if (pout[i] >= 0)
			close(pout[i]);
		if (perr[i] >= 0)
			close(perr[i]);
	}
	return rc;
}

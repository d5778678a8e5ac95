/*
 * local.c - the local backend: spoold starts its own ckworker processes
 * ("spoold --local N"), as Dask's LocalCluster starts its workers.
 *
 * Each worker runs "ckworker -S SPOOL --name local-K --cores C
 * [--memory M]" in its own process group (a Ctrl-C in spoold's terminal
 * reaches spoold only, which then stops the workers in order), with its
 * output appended to log/local-K.log, and with the parent-death signal
 * set to SIGTERM: if spoold is killed, its workers hand back their
 * tasks and leave instead of running on unowned.
 *
 * A worker that exits while spoold runs is declared lost at once (no
 * need to wait for its heartbeat to stop) and restarted after a delay
 * that doubles on each quick failure, up to LOCAL_BACKOFF_MAX_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "fsop.h"
#include "msg.h"
#include "spoold.h"
#include "units.h"

#define LOCAL_BACKOFF_MIN_MS	500
#define LOCAL_BACKOFF_MAX_MS	30000

struct local_slot {
	pid_t	pid;
	char	name[32];
	uint64_t started;
	uint64_t restart_at;	/* 0: not waiting to restart */
	uint64_t backoff;
};

static void
spawn(unsigned i)
{
	struct local_slot *s = &sd.local[i];
	char cores[16], mem[32], logname[64], death[32];
	char *argv[16];
	int argc = 0, fd;
	pid_t pid;

	snprintf(s->name, sizeof s->name, "local-%u", i + 1);
	snprintf(cores, sizeof cores, "%u", sd.local_cores);
	snprintf(logname, sizeof logname, "%s.log", s->name);
	snprintf(death, sizeof death, "%" PRIu64 "ms",
	    sd.sp.cfg.death_timeout_ms);
	argv[argc++] = (char *)"ckworker";
	argv[argc++] = (char *)"-S";
	argv[argc++] = sd.sp.root;
	argv[argc++] = (char *)"--name";
	argv[argc++] = s->name;
	argv[argc++] = (char *)"--cores";
	argv[argc++] = cores;
	if (sd.local_memory) {
		argv[argc++] = (char *)"--memory";
		argv[argc++] = units_format_size(sd.local_memory, mem,
		    sizeof mem);
	}
	argv[argc++] = (char *)"--death-timeout";
	argv[argc++] = death;
	argv[argc] = NULL;

	fd = fsop_openfile(sd.sp.fd[SD_LOG], logname,
	    O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		msg_warn("open: log/%s: %m (worker output discarded)", logname);
	pid = fork();
	if (pid < 0) {
		msg_warn("fork: %s: %m", s->name);
		if (fd >= 0)
			close(fd);
		s->restart_at = sd.now + LOCAL_BACKOFF_MAX_MS;
		return;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		command_child_fds();
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(EXIT_TEMPFAIL);	/* spoold died already */
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {	/* (above 2: spoold ran command_std_fds) */
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		execv(sd.worker_path, argv);
		msg_warn("exec: %s: %m", sd.worker_path);
		_exit(127);
	}
	if (fd >= 0)
		close(fd);
	s->pid = pid;
	s->started = sd.now;
	s->restart_at = 0;
	msg_info("started local worker %s (pid %ld)", s->name, (long)pid);
}

void
local_start(void)
{
	unsigned i;

	if (sd.local_n == 0)
		return;
	sd.local = xcalloc(sd.local_n, sizeof *sd.local);
	for (i = 0; i < sd.local_n; i++) {
		sd.local[i].backoff = LOCAL_BACKOFF_MIN_MS;
		spawn(i);
	}
}

static struct worker *
worker_of_pid(pid_t pid)
{
	size_t i;

	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && !sd.workers[i]->gone &&
		    sd.workers[i]->info.pid == (long)pid &&
		    strcmp(sd.workers[i]->info.host, host_name()) == 0)
			return sd.workers[i];
	return NULL;
}

void
local_reap(void)
{
	struct local_slot *s;
	struct worker *w;
	char why[96];
	unsigned i;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < sd.local_n; i++)
			if (sd.local[i].pid == pid)
				break;
		if (i == sd.local_n)
			continue;
		s = &sd.local[i];
		s->pid = 0;
		if (WIFSIGNALED(status))
			snprintf(why, sizeof why, "its process was killed by "
			    "signal %d", WTERMSIG(status));
		else
			snprintf(why, sizeof why, "its process exited with "
			    "status %d", WEXITSTATUS(status));
		if (sd.shutting_down) {
			msg_info("local worker %s stopped", s->name);
			continue;
		}
		/* one that wrote its "exited" marker left by itself (a
		 * SIGTERM, a failed flush): not a loss */
		if ((w = worker_of_pid(pid)) != NULL &&
		    worker_process_ended(w, why))
			msg_info("local worker %s: %s", s->name, why);
		else
			msg_warn("local worker %s: %s", s->name, why);
		if (w != NULL)
			sd.workers_dirty = 1;
		if (sd.now - s->started > LOCAL_BACKOFF_MAX_MS)
			s->backoff = LOCAL_BACKOFF_MIN_MS;
		s->restart_at = sd.now + s->backoff;
		if (s->backoff < LOCAL_BACKOFF_MAX_MS)
			s->backoff *= 2;
	}
}

void
local_tick(void)
{
	unsigned i;

	for (i = 0; i < sd.local_n; i++)
		if (!sd.shutting_down && sd.local[i].pid == 0 &&
		    sd.local[i].restart_at && sd.now >= sd.local[i].restart_at)
			spawn(i);
}

/* Earliest restart due, or UINT64_MAX. */
uint64_t
local_next(void)
{
	uint64_t next = UINT64_MAX;
	unsigned i;

	for (i = 0; i < sd.local_n; i++)
		if (sd.local[i].pid == 0 && sd.local[i].restart_at &&
		    sd.local[i].restart_at < next)
			next = sd.local[i].restart_at;
	return next;
}

void
local_stop(void)
{
	unsigned i;

	for (i = 0; i < sd.local_n; i++)
		if (sd.local[i].pid > 0 && kill(sd.local[i].pid, SIGTERM) < 0 &&
		    errno != ESRCH)
			msg_warn("kill: local worker %s: %m", sd.local[i].name);
}

void
local_kill(void)
{
	unsigned i;

	for (i = 0; i < sd.local_n; i++)
		if (sd.local[i].pid > 0) {
			msg_warn("local worker %s did not stop; killing it",
			    sd.local[i].name);
			(void)kill(-sd.local[i].pid, SIGKILL);
			(void)kill(sd.local[i].pid, SIGKILL);
		}
}

int
local_running(void)
{
	unsigned i;
	int n = 0;

	for (i = 0; i < sd.local_n; i++)
		n += sd.local[i].pid > 0;
	return n;
}

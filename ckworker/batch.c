/*
 * batch.c - what the batch system says about the job this worker runs in.
 *
 * Detection is by environment, first match wins:
 *
 *   slurm  SLURM_JOB_ID   CPUs: SLURM_CPUS_ON_NODE; memory:
 *			   SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU x CPUs
 *			   (MiB); end: SLURM_JOB_END_TIME (unix time) where
 *			   set, else "squeue -h -j ID -o %L" (time left)
 *   pbs    PBS_JOBID      CPUs: NCPUS, PBS_NUM_PPN or PBS_NP; end:
 *			   "qstat -f ID": Resource_List.walltime counted
 *			   from the job's start (below), or from
 *			   resources_used.walltime, whichever ends first
 *   lsf    LSB_JOBID      CPUs: this host's entry in LSB_MCPU_HOSTS, else
 *			   LSB_DJOB_NUMPROC; end: "bjobs -noheader -o
 *			   time_left ID"
 *   sge    JOB_ID with SGE_ROOT or NSLOTS   CPUs: NSLOTS; end: h_rt of
 *			   "qstat -j ID" counted from the job's start
 *
 * The job's start, where the batch system gives only a limit, is the
 * start of the oldest process of this user above the worker (the job
 * script's shell): it can be a little late, never early, so the end
 * estimate errs by at most the time the job spent before its script
 * ran.
 *
 * Queries run through batch_run(): bounded in time (a hanging qstat is
 * killed), never fatal.  A missing or failing command leaves the end
 * unknown and says why in ends_from; the caller logs it once.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "buf.h"
#include "hostinfo.h"
#include "units.h"

extern char **environ;

#define OUT_MAX		65536

int
batch_run(char *const argv[], uint64_t timeout_ms, struct buf *out,
    char *why, size_t whysize)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct pollfd pfd;
	char chunk[4096];
	uint64_t deadline = now_ms() + timeout_ms, now;
	int p[2], rc, status, timed_out = 0;
	ssize_t n;
	pid_t pid;

	buf_reset(out);
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(why, whysize, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
	    O_WRONLY, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		snprintf(why, whysize, "%s: %s", argv[0], strerror(rc));
		return -1;
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		now = now_ms();
		if (now >= deadline) {
			timed_out = 1;
			break;
		}
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		n = read(p[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len < OUT_MAX)
			buf_append(out, chunk, (size_t)n);
	}
	close(p[0]);
	if (timed_out)
		(void)kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, whysize, "%s: waitpid: %s", argv[0],
			    strerror(errno));
			return -1;
		}
	if (timed_out) {
		snprintf(why, whysize, "%s: timed out after %.1f s (killed)",
		    argv[0], (double)timeout_ms / 1000);
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(why, whysize, "%s: command not found", argv[0]);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, whysize, "%s: %s %d", argv[0],
		    WIFEXITED(status) ? "exit" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	return 0;
}

/* Copy a trimmed s into out; returns out. */
static char *
trim(const char *s, char *out, size_t size)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(out, s, n);
	out[n] = 0;
	return out;
}

int
batch_slurm_left(const char *squeue_L, uint64_t *seconds)
{
	char v[64];
	const char *why;

	trim(squeue_L, v, sizeof v);
	if (strcasecmp(v, "UNLIMITED") == 0 || strcasecmp(v, "NOT_SET") == 0)
		return 0;
	return units_parse_duration(v, seconds, &why) == 0 ? 1 : -1;
}

int
batch_lsf_left(const char *out, uint64_t *seconds)
{
	char v[64], *sp;
	uint64_t h, m;
	const char *why;

	trim(out, v, sizeof v);
	if (strcmp(v, "-") == 0 || v[0] == 0)
		return 0;
	if ((sp = strchr(v, ' ')) != NULL)	/* "0:59 L": the state */
		*sp = 0;
	sp = strchr(v, ':');
	if (sp == NULL || sp[1] == 0)
		return -1;
	*sp = 0;
	if (units_parse_uint(v, 1000000, &h, &why) < 0 ||
	    units_parse_uint(sp + 1, 59, &m, &why) < 0)
		return -1;
	*seconds = h * 3600 + m * 60;
	return 1;
}

/* The value after "key=" in a comma/space separated list, or NULL. */
static const char *
list_value(const char *s, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key), n;
	const char *p;

	for (p = s; (p = strstr(p, key)) != NULL; p += kl) {
		if ((p != s && p[-1] != ',' && !isspace((unsigned char)p[-1])) ||
		    p[kl] != '=')
			continue;
		p += kl + 1;
		n = strcspn(p, ", \t\n");
		if (n >= size)
			return NULL;
		memcpy(out, p, n);
		out[n] = 0;
		return out;
	}
	return NULL;
}

int
batch_sge_h_rt(const char *qstat_j, uint64_t *seconds)
{
	const char *line = qstat_j, *end, *why;
	char l[1024], v[64];
	size_t n;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		n = (size_t)(end - line) < sizeof l ? (size_t)(end - line) :
		    sizeof l - 1;
		memcpy(l, line, n);
		l[n] = 0;
		if (strncmp(l, "hard resource_list:", 19) != 0)
			continue;
		if (list_value(l + 19, "h_rt", v, sizeof v) == NULL)
			return 0;
		return units_parse_duration(v, seconds, &why) == 0 ? 1 : -1;
	}
	return 0;
}

/* "    key = value" in qstat -f output: the value, trimmed, or NULL. */
static const char *
pbs_attr(const char *s, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key), n;
	const char *line, *end, *p;

	for (line = s; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		for (p = line; p < end && isspace((unsigned char)*p); p++)
			;
		if ((size_t)(end - p) <= kl || strncmp(p, key, kl) != 0)
			continue;
		for (p += kl; p < end && *p == ' '; p++)
			;
		if (p == end || *p != '=')
			continue;
		for (p++; p < end && *p == ' '; p++)
			;
		n = (size_t)(end - p);
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (n == 0 || n >= size)
			return NULL;
		memcpy(out, p, n);
		out[n] = 0;
		return out;
	}
	return NULL;
}

int
batch_pbs_walltime(const char *qstat_f, uint64_t *limit, uint64_t *used)
{
	char v[256];
	const char *why;

	*used = 0;
	if (pbs_attr(qstat_f, "Resource_List.walltime", v, sizeof v) == NULL)
		return 0;
	if (units_parse_duration(v, limit, &why) < 0)
		return -1;
	if (pbs_attr(qstat_f, "resources_used.walltime", v, sizeof v) &&
	    units_parse_duration(v, used, &why) < 0)
		*used = 0;
	return 1;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static uint32_t
env_u32(const char *name)
{
	const char *v = env(name), *why;
	uint64_t n;

	if (v == NULL || units_parse_uint(v, 1u << 20, &n, &why) < 0)
		return 0;
	return (uint32_t)n;
}

/* Unix time of boot, from /proc/stat. */
static double
boot_time(void)
{
	char line[256];
	double bt = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "btime ", 6) == 0) {
			bt = strtod(line + 6, NULL);
			break;
		}
	fclose(f);
	return bt;
}

/* Parent pid from /proc/PID/stat, 0 on failure. */
static long
parent_of(long pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;
	long ppid = 0;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if ((rp = strrchr(buf, ')')) == NULL || sscanf(rp + 2, "%*c %ld",
	    &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * Unix start time of the oldest process of ours above this one (the job
 * script), or now when it cannot be told.
 */
static double
job_start(void)
{
	long pid = (long)getpid(), up, top = pid;
	char path[64];
	struct stat st;
	double bt = boot_time();
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;
	int depth;

	for (depth = 0; depth < 64; depth++) {
		up = parent_of(pid);
		if (up <= 1)
			break;
		snprintf(path, sizeof path, "/proc/%ld", up);
		if (stat(path, &st) < 0 || st.st_uid != getuid())
			break;
		top = pid = up;
	}
	ticks = host_pid_start(top);
	if (bt <= 0 || hz <= 0 || ticks == 0)
		return now_unix();
	return bt + (double)ticks / (double)hz;
}

static void
ask(struct batch *b, char *const argv[], uint64_t timeout_ms, struct buf *out,
    int *ok)
{
	char why[128];

	*ok = batch_run(argv, timeout_ms, out, why, sizeof why) == 0;
	if (!*ok)
		snprintf(b->ends_from, sizeof b->ends_from, "unknown (%s)", why);
}

static void
end_slurm(struct batch *b, uint64_t timeout_ms)
{
	char *argv[] = { (char *)"squeue", (char *)"-h", (char *)"-j", b->job,
	    (char *)"-o", (char *)"%L", NULL };
	struct buf out = BUF_INIT;
	const char *v = env("SLURM_JOB_END_TIME");
	uint64_t left;
	int ok, rc;

	if (v && atof(v) > 0) {
		b->ends = atof(v);
		snprintf(b->ends_from, sizeof b->ends_from, "SLURM_JOB_END_TIME");
		return;
	}
	ask(b, argv, timeout_ms, &out, &ok);
	if (ok) {
		rc = batch_slurm_left(out.p, &left);
		if (rc > 0)
			b->ends = now_unix() + (double)left;
		snprintf(b->ends_from, sizeof b->ends_from, "%s",
		    rc > 0 ? "squeue -o %L (time left)" : rc == 0 ?
		    "none (squeue: no time limit)" :
		    "unknown (squeue -o %L: unexpected answer)");
	}
	buf_free(&out);
}

static void
end_sge(struct batch *b, uint64_t timeout_ms)
{
	char *argv[] = { (char *)"qstat", (char *)"-j", b->job, NULL };
	struct buf out = BUF_INIT;
	uint64_t rt;
	int ok, rc;

	ask(b, argv, timeout_ms, &out, &ok);
	if (ok) {
		rc = batch_sge_h_rt(out.p, &rt);
		if (rc > 0)
			b->ends = job_start() + (double)rt;
		snprintf(b->ends_from, sizeof b->ends_from, "%s",
		    rc > 0 ? "qstat -j: h_rt from the job script's start" :
		    rc == 0 ? "none (qstat -j: no h_rt)" :
		    "unknown (qstat -j: bad h_rt)");
	}
	buf_free(&out);
}

static void
end_pbs(struct batch *b, uint64_t timeout_ms)
{
	char *argv[] = { (char *)"qstat", (char *)"-f", b->job, NULL };
	struct buf out = BUF_INIT;
	uint64_t limit, used;
	double by_used;
	int ok, rc;

	ask(b, argv, timeout_ms, &out, &ok);
	if (ok) {
		rc = batch_pbs_walltime(out.p, &limit, &used);
		if (rc > 0) {
			b->ends = job_start() + (double)limit;
			by_used = now_unix() + (double)limit - (double)used;
			if (used && by_used < b->ends)
				b->ends = by_used;
		}
		snprintf(b->ends_from, sizeof b->ends_from, "%s",
		    rc > 0 ? "qstat -f: Resource_List.walltime" :
		    rc == 0 ? "none (qstat -f: no walltime)" :
		    "unknown (qstat -f: bad walltime)");
	}
	buf_free(&out);
}

static void
end_lsf(struct batch *b, uint64_t timeout_ms)
{
	char *argv[] = { (char *)"bjobs", (char *)"-noheader", (char *)"-o",
	    (char *)"time_left", b->job, NULL };
	struct buf out = BUF_INIT;
	uint64_t left;
	int ok, rc;

	ask(b, argv, timeout_ms, &out, &ok);
	if (ok) {
		rc = batch_lsf_left(out.p, &left);
		if (rc > 0)
			b->ends = now_unix() + (double)left;
		snprintf(b->ends_from, sizeof b->ends_from, "%s",
		    rc > 0 ? "bjobs -o time_left" : rc == 0 ?
		    "none (bjobs: no run limit)" :
		    "unknown (bjobs -o time_left: unexpected answer)");
	}
	buf_free(&out);
}

/* LSB_MCPU_HOSTS="hostA 4 hostB 2": the count for this host. */
static uint32_t
lsf_cpus_here(void)
{
	const char *v = env("LSB_MCPU_HOSTS"), *why;
	char *copy, *tok, *save = NULL, *host = NULL;
	uint64_t n;
	uint32_t found = 0;

	if (v == NULL)
		return 0;
	copy = xstrdup(v);
	for (tok = strtok_r(copy, " ", &save); tok;
	    tok = strtok_r(NULL, " ", &save)) {
		if (host == NULL) {
			host = tok;
			continue;
		}
		if (strncmp(host, host_name(), strlen(host_name())) == 0 &&
		    (host[strlen(host_name())] == 0 ||
		    host[strlen(host_name())] == '.') &&
		    units_parse_uint(tok, 1u << 20, &n, &why) == 0)
			found = (uint32_t)n;
		host = NULL;
	}
	free(copy);
	return found;
}

static void
cpus_from(struct batch *b, const char *const *names)
{
	for (; *names; names++)
		if ((b->cpus = env_u32(*names)) != 0) {
			snprintf(b->cpus_from, sizeof b->cpus_from, "%s", *names);
			return;
		}
}

void
batch_detect(const char *kind, int want_end, uint64_t timeout_ms,
    struct batch *b)
{
	static const char *const slurm_cpus[] = { "SLURM_CPUS_ON_NODE", NULL };
	static const char *const pbs_cpus[] = { "NCPUS", "PBS_NUM_PPN",
	    "PBS_NP", NULL };
	static const char *const lsf_cpus[] = { "LSB_DJOB_NUMPROC", NULL };
	static const char *const sge_cpus[] = { "NSLOTS", NULL };
	const char *id = NULL;
	uint64_t mb;

	memset(b, 0, sizeof *b);
	if (kind && strcmp(kind, "none") == 0)
		return;
	if (kind == NULL || strcmp(kind, "auto") == 0) {
		kind = env("SLURM_JOB_ID") ? "slurm" : env("PBS_JOBID") ? "pbs" :
		    env("LSB_JOBID") ? "lsf" : env("JOB_ID") &&
		    (env("SGE_ROOT") || env("NSLOTS")) ? "sge" : NULL;
		if (kind == NULL)
			return;
	}
	snprintf(b->kind, sizeof b->kind, "%s", kind);
	id = strcmp(kind, "slurm") == 0 ? env("SLURM_JOB_ID") :
	    strcmp(kind, "pbs") == 0 ? env("PBS_JOBID") :
	    strcmp(kind, "lsf") == 0 ? env("LSB_JOBID") : env("JOB_ID");
	snprintf(b->job, sizeof b->job, "%s", id ? id : "");
	if (strcmp(kind, "slurm") == 0) {
		cpus_from(b, slurm_cpus);
		if ((mb = env_u32("SLURM_MEM_PER_NODE")) != 0) {
			b->memory = mb << 20;
			snprintf(b->memory_from, sizeof b->memory_from,
			    "SLURM_MEM_PER_NODE");
		} else if ((mb = env_u32("SLURM_MEM_PER_CPU")) != 0 && b->cpus) {
			b->memory = (mb << 20) * b->cpus;
			snprintf(b->memory_from, sizeof b->memory_from,
			    "SLURM_MEM_PER_CPU x CPUs");
		}
	} else if (strcmp(kind, "pbs") == 0)
		cpus_from(b, pbs_cpus);
	else if (strcmp(kind, "lsf") == 0) {
		if ((b->cpus = lsf_cpus_here()) != 0)
			snprintf(b->cpus_from, sizeof b->cpus_from,
			    "LSB_MCPU_HOSTS");
		else
			cpus_from(b, lsf_cpus);
	} else
		cpus_from(b, sge_cpus);
	if (!want_end)
		return;
	if (b->job[0] == 0) {
		snprintf(b->ends_from, sizeof b->ends_from,
		    "unknown (no job ID in the environment)");
		return;
	}
	if (strcmp(kind, "slurm") == 0)
		end_slurm(b, timeout_ms);
	else if (strcmp(kind, "pbs") == 0)
		end_pbs(b, timeout_ms);
	else if (strcmp(kind, "lsf") == 0)
		end_lsf(b, timeout_ms);
	else
		end_sge(b, timeout_ms);
}

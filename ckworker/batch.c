/*
 * batch.c - what the batch system says about the job this worker runs in.
 *
 * Detection is by environment, first match wins:
 *
 *   slurm  SLURM_JOB_ID   job: SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID
 *			   for an array element, else SLURM_JOB_ID; CPUs:
 *			   SLURM_CPUS_ON_NODE; memory: SLURM_MEM_PER_NODE,
 *			   or SLURM_MEM_PER_CPU x CPUs (MiB); end:
 *			   SLURM_JOB_END_TIME (unix time) where set, or,
 *			   if earlier, SLURM_JOB_END_TIME -
 *			   SLURM_JOB_START_TIME counted from the job
 *			   script's start (no clocks compared), else
 *			   "squeue -h -j ID -o %L" (time left)
 *   pbs    PBS_JOBID      job: PBS_JOBID up to its first ".", then
 *			   ".PBS_ARRAY_INDEX" for an array element; CPUs:
 *			   NCPUS, PBS_NUM_PPN or PBS_NP; end: "qstat -f ID":
 *			   Resource_List.walltime counted from the job's
 *			   start (below), or from resources_used.walltime,
 *			   whichever ends first
 *   lsf    LSB_JOBID      job: LSB_JOBID, ".LSB_JOBINDEX" for an array
 *			   element; CPUs: this host's entry in
 *			   LSB_MCPU_HOSTS, else LSB_DJOB_NUMPROC; end:
 *			   "bjobs -noheader -o time_left ID"
 *   sge    JOB_ID with SGE_ROOT or NSLOTS   job: JOB_ID, ".SGE_TASK_ID"
 *			   for an array task; CPUs: NSLOTS; end: h_rt of
 *			   "qstat -j ID" counted from the job's start
 *
 * Job IDs are written as the job scripts name their workers
 * (jobscript.c), with characters outside [A-Za-z0-9_.:+-] made ".".
 * Memory limits that are not in the environment are read from the
 * job's cgroup by the caller (cgroup.h).  GPUs come from
 * CUDA_VISIBLE_DEVICES (gpu.c).
 *
 * The job's start, where the batch system gives only a limit, is the
 * start of the job script: the oldest ancestor of the worker in its
 * session, owned by the same user.  It can be a little late, never
 * early, so the end estimate errs by at most the time the job spent
 * before its script ran.
 *
 * Queries run through command_run() (command.h): bounded in time (a
 * hanging qstat is killed), never fatal.  A missing or failing command
 * leaves the end unknown and says why in ends_from; the caller logs it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "batch.h"
#include "buf.h"
#include "command.h"
#include "hostinfo.h"
#include "units.h"

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

static uint64_t
env_uint(const char *name, uint64_t max)
{
	const char *v = env(name), *why;
	uint64_t n;

	if (v == NULL || units_parse_uint(v, max, &n, &why) < 0)
		return 0;
	return n;
}

static uint32_t
env_u32(const char *name)
{
	return (uint32_t)env_uint(name, 1u << 20);
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

/* Parent, session and owner of a process; -1 on failure. */
static int
proc_of(long pid, long *ppid, long *sid, uid_t *uid)
{
	char buf[512];
	const char *rp = host_proc_stat(pid, buf, sizeof buf, uid);

	return rp && sscanf(rp, "%*c %ld %*d %ld", ppid, sid) == 2 ? 0 : -1;
}

/*
 * Unix start time of the job script: the oldest ancestor of ours in
 * our session, owned by us (batch systems start the job script as a
 * session leader; with "exec ckworker" it is this very process), or
 * now when it cannot be told.  The session, not only the owner, stops
 * the walk: as root, the owner alone would climb to the batch daemon.
 */
static double
job_start(void)
{
	long pid = (long)getpid(), up, sid, psid, top = pid, dummy;
	double bt = boot_time();
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;
	uid_t uid, puid;
	int depth;

	if (proc_of(pid, &up, &sid, &uid) == 0)
		for (depth = 0; depth < 64 && up > 1; depth++) {
			if (proc_of(up, &dummy, &psid, &puid) < 0 ||
			    psid != sid || puid != uid)
				break;
			top = up;
			up = dummy;
		}
	ticks = host_pid_start(top);
	if (bt <= 0 || hz <= 0 || ticks == 0)
		return now_unix();
	return bt + (double)ticks / (double)hz;
}

/* Run a query (bounded by timeout_ms); *ok when it answered. */
static void
ask(struct batch *b, char *const argv[], uint64_t timeout_ms, struct buf *out,
    int *ok)
{
	struct command c = COMMAND_INIT;
	struct buf err = BUF_INIT;
	char why[140];

	c.argv = argv;
	c.limit_ms = timeout_ms;
	*ok = 0;
	if (command_run(&c, out, &err, why, sizeof why) == 0) {
		if (command_ok(&c))
			*ok = 1;
		else
			command_why(&c, out, &err, why, sizeof why);
	}
	if (!*ok)
		snprintf(b->ends_from, sizeof b->ends_from, "unknown (%.140s)", why);
	buf_free(&err);
}

static void
end_slurm(struct batch *b, uint64_t timeout_ms)
{
	char *argv[] = { (char *)"squeue", (char *)"-h", (char *)"-j", b->qid,
	    (char *)"-o", (char *)"%L", NULL };
	struct buf out = BUF_INIT;
	const char *v = env("SLURM_JOB_END_TIME");
	const char *s = env("SLURM_JOB_START_TIME");
	double by_limit;
	uint64_t left;
	int ok, rc;

	if (v && atof(v) > 0) {
		b->ends = atof(v);
		snprintf(b->ends_from, sizeof b->ends_from, "SLURM_JOB_END_TIME");
		/*
		 * Both are times in the controller's clock: on a node whose
		 * clock is behind, END alone is later than the real end and
		 * Slurm kills the job before the worker drains.  END - START
		 * is the job's limit, in no clock; counted from the job
		 * script's start in ours it needs no clocks to agree (it
		 * errs late by the time before the script ran, or more for
		 * a worker started in a later step: hence the earlier of
		 * the two).
		 */
		if (s && atof(s) > 0 && atof(v) > atof(s)) {
			by_limit = job_start() + (atof(v) - atof(s));
			if (by_limit < b->ends) {
				b->ends = by_limit;
				snprintf(b->ends_from, sizeof b->ends_from,
				    "SLURM_JOB_END_TIME - SLURM_JOB_START_TIME "
				    "from the job script's start");
			}
		}
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
	char *argv[] = { (char *)"qstat", (char *)"-j", b->qid, NULL };
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
	char *argv[] = { (char *)"qstat", (char *)"-f", b->qid, NULL };
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
	    (char *)"time_left", b->qid, NULL };
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

/* Keep a job ID to what every record and name accepts. */
static void
job_set(char *out, size_t size, const char *a, const char *sep,
    const char *b)
{
	char *p;

	snprintf(out, size, "%s%s%s", a ? a : "", b ? sep : "", b ? b : "");
	for (p = out; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.:+-", *p))
			*p = '.';
}

/*
 * The job's ID as the batch system shows it to people (and as the job
 * scripts name their workers, jobscript.c), and the one to query it by.
 */
static void
job_ids(struct batch *b)
{
	const char *id, *idx;
	char base[64];

	if (strcmp(b->kind, "slurm") == 0) {
		id = env("SLURM_JOB_ID");
		if (env("SLURM_ARRAY_JOB_ID") && env("SLURM_ARRAY_TASK_ID"))
			job_set(b->job, sizeof b->job, env("SLURM_ARRAY_JOB_ID"),
			    "_", env("SLURM_ARRAY_TASK_ID"));
		else
			job_set(b->job, sizeof b->job, id, "", NULL);
		snprintf(b->qid, sizeof b->qid, "%s", id ? id : "");
	} else if (strcmp(b->kind, "pbs") == 0) {
		id = env("PBS_JOBID");
		snprintf(base, sizeof base, "%.*s", id ? (int)strcspn(id, ".") :
		    0, id ? id : "");
		job_set(b->job, sizeof b->job, base, ".",
		    env("PBS_ARRAY_INDEX"));
		snprintf(b->qid, sizeof b->qid, "%s", id ? id : "");
	} else if (strcmp(b->kind, "lsf") == 0) {
		id = env("LSB_JOBID");
		idx = env("LSB_JOBINDEX");
		if (idx && strcmp(idx, "0") == 0)
			idx = NULL;
		job_set(b->job, sizeof b->job, id, ".", idx);
		if (idx)
			snprintf(b->qid, sizeof b->qid, "%s[%s]", id ? id : "",
			    idx);
		else
			snprintf(b->qid, sizeof b->qid, "%s", id ? id : "");
	} else {
		id = env("JOB_ID");
		idx = env("SGE_TASK_ID");
		if (idx && strcmp(idx, "undefined") == 0)
			idx = NULL;
		job_set(b->job, sizeof b->job, id, ".", idx);
		snprintf(b->qid, sizeof b->qid, "%s", id ? id : "");
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
	job_ids(b);
	if (strcmp(kind, "slurm") == 0) {
		cpus_from(b, slurm_cpus);
		if ((mb = env_uint("SLURM_MEM_PER_NODE", 1ULL << 40)) != 0) {
			b->memory = mb << 20;
			snprintf(b->memory_from, sizeof b->memory_from,
			    "SLURM_MEM_PER_NODE");
		} else if ((mb = env_uint("SLURM_MEM_PER_CPU", 1ULL << 40)) !=
		    0 && b->cpus) {
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
	if (b->qid[0] == 0) {
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

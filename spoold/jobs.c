/*
 * jobs.c - worker jobs: records, submission, cancellation, following
 * them in the queue.  See jobs.h.
 *
 * Submitting: the job script (jobscript_render, the same text "spool
 * job-script" prints) is published as jobs/script.TMP@KIND.sh,
 * submitted from the kind's log directory (created if missing: a batch
 * system that cannot open a job's output file fails the job silently),
 * and kept as jobs/BASE.sh for people to read.  One record per job (per
 * array element) is published before anything else depends on it.  A
 * submission whose answer was never read leaves a doubt (below).
 *
 * The local backend's "jobs" are detached processes running the job
 * script (ID local.PID), with their output in LOGDIR/NAME-local.PID.log
 * and, with export-env false, only HOME, USER, LOGNAME, SHELL and a
 * plain PATH in their environment (as a batch job would start).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "batch.h"
#include "command.h"
#include "fsop.h"
#include "jobs.h"
#include "jobscript.h"
#include "journal.h"
#include "msg.h"
#include "rec.h"
#include "spoold.h"

#define SUBMIT_ARRAY_MAX	1000	/* elements in one array job */
#define LOG_TAIL_BYTES		4096
#define CANCEL_TOGETHER_MAX	200	/* jobs in one cancel command */

struct job **jobs;
size_t njobs;
static int submitting = -1;	/* the kind a submission command runs for */

/*
 * Doubts: unconfirmed submissions, which may have left a job that no
 * record names.  A submission that failed may have been taken all the
 * same: an sbatch that gives up waiting for a busy slurmctld ("Socket
 * timed out on send/recv operation", after its own MessageTimeout)
 * exits 1, and slurmctld then takes the job it had been sent; so may
 * one whose command was killed at its limit or by a signal (its answer
 * never read), or whose spoold died while it ran.  A job of theirs
 * that starts is recorded when its worker registers (jobs_adopt), but
 * one that never starts would stay queued after a stop.  Where the
 * batch system shows each job's script (batch_finds_scripts), the
 * script of every such submission (every failed one but those that
 * sent nothing: batch_submit's doubt) stays under its submission name,
 * jobs/script.TMP@KIND.sh, as the doubt (the next spoold finds it
 * there); the first listing asked JOBS_LIST_GRACE_MS after the doubt
 * (at once in a stop) finds the jobs submitted from it, records them
 * and keeps the script as BASE.sh, or finds none; then a second
 * listing, JOBS_DOUBT_RECHECK_MS later, looks again, and the script is
 * removed only if that one finds none either (doubts_resolve): a
 * controller that was too busy to answer the submission may answer
 * the first listing before it has taken the job it was sent.  A doubt
 * counts as outstanding, so that a stop waits for those listings and
 * cancels what they found.  A job found
 * takes its submission's failure back: the failed.* record naming its
 * script is removed (a doubt left by the spoold before too), and where
 * this spoold counted it, the kind's count of failures in a row is
 * lowered (scale_submission_taken), unless that count started again
 * since (a new size, a job that came up): it holds others then.
 */
struct doubt {
	char	name[BATCH_SCRIPT_MAX];
	int	k;
	uint64_t since;		/* now_ms() */
	int	counted;	/* as a failure, by this spoold */
	uint32_t run;		/* the count of failures it was counted in */
	uint64_t again;		/* a listing found no job: look again then */
};
static struct doubt *doubts;
static size_t ndoubts;

static const struct kind *
kind_at(int i)
{
	return i >= 0 && (size_t)i < sd.sp.cfg.nkinds ? &sd.sp.cfg.kinds[i] :
	    NULL;
}

static int
kind_index(const char *name)
{
	size_t i;

	for (i = 0; i < sd.sp.cfg.nkinds; i++)
		if (strcmp(sd.sp.cfg.kinds[i].name, name) == 0)
			return (int)i;
	return -1;
}

void
jobs_save(const struct job *j)
{
	struct buf b = BUF_INIT;

	jobrec_encode(&b, &j->r);
	if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_JOBS], j->r.id, b.p,
	    b.len, 0600, 0) < 0)
		msg_once("writing job records", "write: jobs/%s: %m", j->r.id);
	else
		msg_clear("writing job records");
	buf_free(&b);
}

static struct job *
job_add(const char *id, int k, enum backend b, double submitted)
{
	struct job *j = xcalloc(1, sizeof *j);
	const struct kind *kd = kind_at(k);

	snprintf(j->r.id, sizeof j->r.id, "%s", id);
	snprintf(j->r.kind, sizeof j->r.kind, "%s", kd ? kd->name : "?");
	snprintf(j->r.backend, sizeof j->r.backend, "%s", backend_name[b]);
	j->r.submitted = submitted;
	j->r.state = JS_PENDING;
	j->kind = k;
	j->backend = b;
	j->seen_ms = sd.now;
	jobs = xreallocarray(jobs, njobs + 1, sizeof *jobs);
	jobs[njobs++] = j;
	return j;
}

struct job *
jobs_find(const char *id)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (strcmp(jobs[i]->r.id, id) == 0)
			return jobs[i];
	return NULL;
}

static void
job_forget(size_t i)
{
	char base[JOBREC_ID_MAX], other[JOBREC_ID_MAX], script[JOBREC_ID_MAX + 8];
	struct job *j = jobs[i];
	size_t k;

	if (fsop_unlink(sd.sp.fd[SD_JOBS], j->r.id) < 0 && errno != ENOENT)
		msg_warn("unlink: jobs/%s: %m", j->r.id);
	jobrec_base(j->r.id, base, sizeof base);
	/* keep the order of submission: scaling down cancels newest first */
	memmove(&jobs[i], &jobs[i + 1], (njobs - i - 1) * sizeof *jobs);
	njobs--;
	free(j);
	for (k = 0; k < njobs; k++) {
		jobrec_base(jobs[k]->r.id, other, sizeof other);
		if (strcmp(base, other) == 0)
			return;		/* its script is still someone's */
	}
	snprintf(script, sizeof script, "%s.sh", base);
	if (fsop_unlink(sd.sp.fd[SD_JOBS], script) < 0 && errno != ENOENT)
		msg_warn("unlink: jobs/%s: %m", script);
}

/* ---- doubts ---- */

/* Record a job found in the queue (journal "adopted"). */
static struct job *
job_record_found(const char *id, int k)
{
	const struct kind *kd = kind_at(k);
	struct job *j;

	j = job_add(id, k, kd->backend, now_unix());
	journal_job(id, "adopted", "kind=%s backend=%s", journal_q(kd->name),
	    backend_name[kd->backend]);
	jobs_save(j);
	return j;
}

/* The kind of a script named script.TMP@KIND.sh; -1 if none. */
static int
script_kind(const char *name)
{
	const char *at = strrchr(name, '@');
	char kind[KIND_NAME_MAX];
	size_t n;

	if (at == NULL || (n = strlen(at + 1)) <= 3 || n - 3 >= sizeof kind)
		return -1;
	snprintf(kind, sizeof kind, "%.*s", (int)(n - 3), at + 1);
	return kind_index(kind);
}

/* A doubt; counted: as a failure by this spoold (scale_up). */
static void
doubt_add(const char *name, int k, int counted)
{
	struct doubt *d;

	doubts = xreallocarray(doubts, ndoubts + 1, sizeof *doubts);
	d = &doubts[ndoubts++];
	snprintf(d->name, sizeof d->name, "%s", name);
	d->k = k;
	d->since = now_ms();
	d->counted = counted;
	d->run = scale_failure_run(k);
	d->again = 0;
}

/* The submission of doubt d took jobs: its failure was none. */
static void
doubt_taken(const struct doubt *d)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->r.state == JS_FAILED &&
		    strcmp(jobs[i]->r.script, d->name) == 0) {
			job_forget(i);
			break;
		}
	if (d->counted)
		scale_submission_taken(d->k, d->run);
}

/* A doubt that a listing asked at `asked` may settle. */
static int
doubt_due(const struct doubt *d, int k, uint64_t asked)
{
	if (d->k != k)
		return 0;
	if (d->again)
		return d->again <= asked;
	return sd.shutting_down || d->since + JOBS_LIST_GRACE_MS <= asked;
}

/*
 * Settle the doubts of kind k that are due with one listing of the
 * jobs' scripts (by the kind's job name, which Grid Engine's needs):
 * each job submitted from a doubt's script is recorded (unless it
 * already is: its worker registered), the script kept as the job's
 * BASE.sh; a script no job was submitted from is looked for again
 * JOBS_DOUBT_RECHECK_MS later, and removed if that listing finds none
 * either.  A listing that fails leaves them to the next.
 */
static void
doubts_resolve(int k)
{
	const struct kind *kd = kind_at(k);
	enum backend b = kd->backend;
	struct batch_script *v = NULL;
	char why[300], dir[PATH_MAX], what[80], base[BATCH_ID_MAX + 8];
	char ids[200];
	uint64_t asked = now_ms();
	size_t i, m, n = 0, found;
	struct doubt d;
	int due = 0;

	for (i = 0; i < ndoubts; i++)
		due |= doubt_due(&doubts[i], k, asked);
	if (!due || batch_out_of_time())
		return;
	snprintf(what, sizeof what, "finding the %s jobs of unconfirmed "
	    "submissions", backend_name[b]);
	if (snprintf(dir, sizeof dir, "%s/jobs", sd.root_abs) >=
	    (int)sizeof dir) {
		msg_once(what, "%s: spool path too long", what);
		return;
	}
	if (batch_list_scripts(b, dir, kd->job_name ? kd->job_name :
	    "ckworker", &v, &n, why, sizeof why) < 0) {
		msg_once(what, "%s: %s (tried again at the next listing)",
		    what, why);
		return;
	}
	msg_clear(what);
	for (i = 0; i < ndoubts; i++) {
		if (!doubt_due(&doubts[i], k, asked))
			continue;
		found = 0;
		ids[0] = 0;
		for (m = 0; m < n; m++) {
			if (strcmp(v[m].name, doubts[i].name) != 0 ||
			    !jobrec_id_ok(v[m].id))
				continue;
			if (found++ < 8)
				snprintf(ids + strlen(ids), sizeof ids -
				    strlen(ids), "%s%s", found > 1 ? " " : "",
				    v[m].id);
			if (jobs_find(v[m].id) == NULL)
				job_record_found(v[m].id, doubts[i].k);
			jobrec_base(v[m].id, base, sizeof base - 3);
		}
		if (found == 0 && doubts[i].again == 0) {
			/* none yet: taken, but not listed yet? */
			doubts[i].again = asked + JOBS_DOUBT_RECHECK_MS;
			continue;
		}
		d = doubts[i];
		memmove(&doubts[i], &doubts[i + 1],
		    (ndoubts - i - 1) * sizeof *doubts);
		ndoubts--;
		i--;
		if (found == 0) {
			msg_info("kind %s: the unconfirmed submission "
			    "jobs/%s left no job in the %s queue",
			    kind_at(d.k)->name, d.name, backend_name[b]);
			if (fsop_unlink(sd.sp.fd[SD_JOBS], d.name) < 0 &&
			    errno != ENOENT)
				msg_warn("unlink: jobs/%s: %m", d.name);
			continue;
		}
		msg_warn("kind %s: the unconfirmed submission jobs/%s left "
		    "%zu job%s in the %s queue: %s%s; recorded now",
		    kind_at(d.k)->name, d.name, found, found == 1 ? "" : "s",
		    backend_name[b], ids, found > 8 ? " ..." : "");
		doubt_taken(&d);
		strcat(base, ".sh");
		if (fsop_rename(sd.sp.fd[SD_JOBS], d.name, sd.sp.fd[SD_JOBS],
		    base) < 0)
			msg_warn("rename: jobs/%s: %m", d.name);
	}
	free(v);
}

/* ---- recovery ---- */

static int
job_load(void *arg, const char *name, unsigned char type)
{
	struct jobrec r;
	struct job *j;
	enum backend b;
	size_t n = strlen(name);

	(void)arg;
	(void)type;
	if (strncmp(name, "script.", 7) == 0 && n > 3 &&
	    strcmp(name + n - 3, ".sh") == 0) {
		/*
		 * A script being submitted when the last spoold died, or
		 * a doubt it left: where its job can be looked for, a
		 * doubt; else nobody's any more (the batch system keeps
		 * its own copy).
		 */
		int k = script_kind(name);

		if (k >= 0 && batch_finds_scripts(kind_at(k)->backend)) {
			doubt_add(name, k, 0);
			msg_info("kind %s: jobs/%s: a submission whose answer "
			    "no spoold read: its job, if %s took one, is "
			    "looked for in the queue", kind_at(k)->name, name,
			    backend_name[kind_at(k)->backend]);
		} else if (fsop_unlink(sd.sp.fd[SD_JOBS], name) < 0 &&
		    errno != ENOENT)
			msg_warn("unlink: jobs/%s: %m", name);
		return 0;
	}
	if (name[0] == '.' || (n > 3 && strcmp(name + n - 3, ".sh") == 0))
		return 0;
	if (jobrec_read(sd.sp.fd[SD_JOBS], name, &r) < 0) {
		msg_warn("jobs/%s: unreadable job record (%m); ignored", name);
		return 0;
	}
	if (strcmp(r.id, name) != 0 || backend_parse(r.backend, &b) < 0) {
		msg_warn("jobs/%s: not a job record of this spool; ignored",
		    name);
		return 0;
	}
	j = job_add(r.id, kind_index(r.kind), b, r.submitted);
	j->r = r;
	return 0;
}

static int
by_submitted(const void *a, const void *b)
{
	double x = (*(struct job *const *)a)->r.submitted;
	double y = (*(struct job *const *)b)->r.submitted;

	return x < y ? -1 : x > y;
}

void
jobs_recover(void)
{
	size_t i, out = 0;

	if (fsop_list(sd.sp.fd[SD_JOBS], ".", job_load, NULL) < 0)
		msg_warn("list: jobs: %m");
	if (njobs > 1)	/* in the order of submission, as they were */
		qsort(jobs, njobs, sizeof *jobs, by_submitted);
	for (i = 0; i < njobs; i++)
		out += jobs[i]->r.state < JS_GONE;
	if (njobs)
		msg_info("recovered %zu job record%s, %zu job%s still out",
		    njobs, njobs == 1 ? "" : "s", out, out == 1 ? "" : "s");
}

/* ---- output files ---- */

static void
tail_line(const char *path, char *out, size_t size)
{
	char buf[LOG_TAIL_BYTES + 1], *end, *start;
	struct stat st;
	ssize_t n;
	off_t off;
	int fd;

	out[0] = 0;
	if ((fd = fsop_open_regular(AT_FDCWD, path, &st)) < 0)
		return;
	off = st.st_size > LOG_TAIL_BYTES ? st.st_size - LOG_TAIL_BYTES : 0;
	n = fsop_pread(fd, buf, LOG_TAIL_BYTES, off);
	(void)close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (end = buf + n; end > buf && (end[-1] == '\n' || end[-1] == ' ' ||
	    end[-1] == '\r'); end--)
		;
	*end = 0;
	start = strrchr(buf, '\n');
	start = start ? start + 1 : buf;
	for (char *p = start; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	snprintf(out, size, "%.200s", start);
}

/* "left the queue ...": add the last words of its output. */
static void
why_with_log(struct job *j, const char *what)
{
	const struct kind *kd = kind_at(j->kind);
	char path[PATH_MAX], line[256] = "";
	int which;

	snprintf(j->r.why, sizeof j->r.why, "%s", what);
	if (kd == NULL)
		return;
	for (which = 0; which < 2 && line[0] == 0; which++)
		if (jobscript_log_file(kd, sd.root_abs, j->r.id, which, path,
		    sizeof path) == 0)
			tail_line(path, line, sizeof line);
	if (line[0])
		snprintf(j->r.why + strlen(j->r.why), sizeof j->r.why -
		    strlen(j->r.why), "; its output ends: %s", line);
	else if (jobscript_log_file(kd, sd.root_abs, j->r.id, 0, path,
	    sizeof path) == 0)
		snprintf(j->r.why + strlen(j->r.why), sizeof j->r.why -
		    strlen(j->r.why), "; no output in %.200s", path);
}

/* ---- submitting ---- */

static int
dir_make(const char *path, char *why, size_t size)
{
	char p[PATH_MAX], *s, c;

	if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
		snprintf(why, size, "log directory name too long");
		return -1;
	}
	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != 0)
			continue;
		c = *s;
		*s = 0;
		if (fsop_mkdir(AT_FDCWD, p, 0700) < 0 && errno != EEXIST) {
			snprintf(why, size, "mkdir: %.200s: %s", p,
			    strerror(errno));
			return -1;
		}
		*s = c;
		if (c == 0)
			return 0;
	}
}

/* The environment of a local job with export-env false. */
static char **
clean_env(void)
{
	struct passwd *pw = getpwuid(getuid());
	char **v = NULL, *s;

	if (pw) {
		s = xasprintf("HOME=%s", pw->pw_dir);
		v = strv_push(v, s);
		free(s);
		s = xasprintf("USER=%s", pw->pw_name);
		v = strv_push(v, s);
		free(s);
		s = xasprintf("LOGNAME=%s", pw->pw_name);
		v = strv_push(v, s);
		free(s);
		s = xasprintf("SHELL=%s", pw->pw_shell[0] ? pw->pw_shell :
		    "/bin/sh");
		v = strv_push(v, s);
		free(s);
	}
	return strv_push(v, "PATH=/usr/local/bin:/usr/bin:/bin");
}

/*
 * Run the script jobs/NAME as a detached process.  Its ID is local.PID,
 * and its script is kept as jobs/local.PID.sh: the child waits on a
 * pipe until the parent has renamed the script, then runs it under
 * whichever name it has.
 */
static int
submit_local(const struct kind *kd, const char *name, const char *logdir,
    char *id, size_t size, char *why, size_t whysize)
{
	char tmp[PATH_MAX], log[PATH_MAX], tname[FSOP_TMPNAME_MAX];
	char keep[BATCH_ID_MAX + 8], script[PATH_MAX];
	const char *jn = kd->job_name ? kd->job_name : "ckworker";
	char **env = kd->export_env ? NULL : clean_env();
	extern char **environ;
	int fd = -1, null = -1, go[2] = { -1, -1 };
	char renamed = 'n';
	pid_t pid;

	fsop_tmpname(tname, sizeof tname, NULL);
	if (snprintf(tmp, sizeof tmp, "%s/.%s-%s.log", logdir, jn, tname) >=
	    (int)sizeof tmp) {
		snprintf(why, whysize, "log directory name too long");
		goto fail;
	}
	if ((fd = fsop_openfile(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_APPEND,
	    0600)) < 0 || (null = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ||
	    pipe2(go, O_CLOEXEC) < 0) {
		snprintf(why, whysize, "%s: %.200s: %s", fd < 0 ? "open" :
		    null < 0 ? "open" : "pipe", fd < 0 ? tmp : "/dev/null",
		    strerror(errno));
		goto fail;
	}
	if ((pid = fork()) < 0) {
		snprintf(why, whysize, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;
		char *argv[2] = { script, NULL };

		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		(void)signal(SIGPIPE, SIG_DFL);
		(void)setsid();
		command_child_fds();
		if (dup2(null, STDIN_FILENO) < 0 ||
		    dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		(void)close(go[1]);
		if (read(go[0], &renamed, 1) != 1)
			renamed = 'n';
		if (renamed == 'r')
			snprintf(script, sizeof script, "%s/jobs/local.%ld.sh",
			    sd.root_abs, (long)getpid());
		else
			snprintf(script, sizeof script, "%s/jobs/%s",
			    sd.root_abs, name);
		if (chdir(logdir) < 0)
			dprintf(STDERR_FILENO, "chdir: %s: %s\n", logdir,
			    strerror(errno));
		execve(script, argv, env ? env : environ);
		dprintf(STDERR_FILENO, "exec: %s: %s\n", script,
		    strerror(errno));
		_exit(127);
	}
	snprintf(id, size, "local.%ld", (long)pid);
	snprintf(keep, sizeof keep, "%s.sh", id);
	if (fsop_rename(sd.sp.fd[SD_JOBS], name, sd.sp.fd[SD_JOBS], keep) == 0)
		renamed = 'r';
	else
		msg_warn("rename: jobs/%s: %m", name);
	if (write(go[1], &renamed, 1) != 1)
		msg_warn("write: pipe to job %s: %m", id);
	if (jobscript_log_file(kd, sd.root_abs, id, 0, log, sizeof log) < 0 ||
	    fsop_rename(AT_FDCWD, tmp, AT_FDCWD, log) < 0)
		msg_warn("rename: %s: %m (the job's output stays there)", tmp);
	(void)close(fd);
	(void)close(null);
	(void)close(go[0]);
	(void)close(go[1]);
	strv_free(env);
	return 0;
fail:
	if (fd >= 0) {
		(void)close(fd);
		(void)fsop_unlink(AT_FDCWD, tmp);
	}
	if (null >= 0)
		(void)close(null);
	if (go[0] >= 0) {
		(void)close(go[0]);
		(void)close(go[1]);
	}
	strv_free(env);
	return -1;
}

/*
 * Say why, and keep a record of it, failed.MS, so that "spool workers"
 * shows it (none if another failure of the same millisecond has that
 * name); script: the doubt's script name (a job found by it removes
 * the record: doubt_taken), or NULL.
 */
static void
submit_failed(int k, const char *why, const char *script)
{
	const struct kind *kd = kind_at(k);
	char fid[64];
	struct job *j;

	snprintf(fid, sizeof fid, "failed.%llu",
	    (unsigned long long)(now_unix() * 1000));
	if (jobs_find(fid) == NULL) {	/* the record before the word */
		j = job_add(fid, k, kd->backend, now_unix());
		j->r.state = JS_FAILED;
		snprintf(j->r.why, sizeof j->r.why, "submission failed: %s",
		    why);
		snprintf(j->r.script, sizeof j->r.script, "%s", script ?
		    script : "");
		jobs_save(j);
	}
	msg_warn("kind %s: submitting a worker job failed: %s", kd->name, why);
}

/* The PID of a local job: its ID is "local.PID" (submit_local). */
static long
local_pid(const char *id)
{
	return strtol(id + 6, NULL, 10);
}

int
jobs_submit(int k, unsigned n)
{
	const struct kind *kd = kind_at(k);
	char why[JOBREC_WHY_MAX - 32], id[BATCH_ID_MAX], eid[BATCH_ID_MAX + 16];
	char name[BATCH_SCRIPT_MAX], path[PATH_MAX];
	char keep[BATCH_ID_MAX + 8], tmp[FSOP_TMPNAME_MAX];
	struct buf script = BUF_INIT, logdir = BUF_INIT;
	const char *doubted = NULL;
	unsigned done = 0, count, i;
	struct job *j;
	enum batch_doubt doubt;
	int rc;

	jobscript_log_dir(kd, sd.root_abs, &logdir);
	if (dir_make(logdir.p, why, sizeof why) < 0)
		goto fail;
	/* a stop asked during a submission (while_batch): none after it */
	while (done < n && !sd.shutting_down) {
		count = 1;
		if (kd->job_array && (kd->backend == BK_SLURM ||
		    kd->backend == BK_SGE || kd->backend == BK_LSF))
			count = n - done > SUBMIT_ARRAY_MAX ? SUBMIT_ARRAY_MAX :
			    n - done;
		buf_reset(&script);
		if (jobscript_render(&script, kd, sd.root_abs, sd.worker_path,
		    count, why, sizeof why) < 0)
			goto fail;
		/* its kind in its name: a doubt's, found at recovery */
		fsop_tmpname(tmp, sizeof tmp, NULL);
		if (snprintf(name, sizeof name, "script.%s@%s.sh", tmp,
		    kd->name) >= (int)sizeof name) {
			snprintf(why, sizeof why, "job script name too long");
			goto fail;
		}
		if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_JOBS], name,
		    script.p, script.len, 0700, FSOP_DURABLE) < 0) {
			snprintf(why, sizeof why, "write: jobs/%s: %s", name,
			    strerror(errno));
			goto fail;
		}
		if (snprintf(path, sizeof path, "%s/jobs/%s", sd.root_abs,
		    name) >= (int)sizeof path) {
			snprintf(why, sizeof why, "spool path too long");
			(void)fsop_unlink(sd.sp.fd[SD_JOBS], name);
			goto fail;
		}
		submitting = k;
		doubt = BD_NONE;
		rc = kd->backend == BK_LOCAL ?
		    submit_local(kd, name, logdir.p, id, sizeof id, why,
		    sizeof why) :
		    batch_submit(kd->backend, path, script.p, kd->job_name ?
		    kd->job_name : "ckworker", logdir.p, id, sizeof id, why,
		    sizeof why, &doubt);
		submitting = -1;
		if (rc < 0 && doubt != BD_NONE &&
		    batch_finds_scripts(kd->backend)) {
			doubted = name;	/* failed: but taken? (doubts) */
			if (doubt == BD_UNREAD)
				msg_warn("kind %s: %s may have taken the job "
				    "all the same: it is looked for in the "
				    "queue by its script, jobs/%s", kd->name,
				    backend_name[kd->backend], name);
			goto fail;
		}
		if (rc < 0 || !jobrec_id_ok(id)) {
			if (rc == 0)
				snprintf(why, sizeof why, "unusable job ID "
				    "\"%.40s\"", id);
			else if (doubt == BD_UNREAD)
				msg_warn("kind %s: %s may have taken the job all "
				    "the same: it is recorded if its worker "
				    "registers", kd->name,
				    backend_name[kd->backend]);
			(void)fsop_unlink(sd.sp.fd[SD_JOBS], name);
			goto fail;
		}
		for (i = 1; i <= count; i++) {
			if (count > 1)
				snprintf(eid, sizeof eid, "%s%c%u", id,
				    kd->backend == BK_SLURM ? '_' : '.', i);
			else
				snprintf(eid, sizeof eid, "%s", id);
			/*
			 * Its worker may have registered while the command
			 * ran (main.c, while_batch) and its job been
			 * recorded then (jobs_adopt): one record a job.
			 */
			if (jobs_find(eid) != NULL)
				continue;
			j = job_add(eid, k, kd->backend, now_unix());
			if (kd->backend == BK_LOCAL) {	/* see local_alive */
				snprintf(j->r.host, sizeof j->r.host, "%s",
				    host_name());
				snprintf(j->r.boot, sizeof j->r.boot, "%s",
				    host_boot_id());
				j->r.pstart = host_pid_start(local_pid(eid));
			}
			jobs_save(j);
		}
		snprintf(keep, sizeof keep, "%s.sh", id);
		if (kd->backend != BK_LOCAL && fsop_rename(sd.sp.fd[SD_JOBS],
		    name, sd.sp.fd[SD_JOBS], keep) < 0)
			msg_warn("rename: jobs/%s: %m", name);
		scale_poll_soon();	/* see it listed, and why it pends */
		msg_info("kind %s: submitted %s %s %s (%u worker%s)", kd->name,
		    backend_name[kd->backend], count > 1 ? "array" : "job", id,
		    count, count == 1 ? "" : "s");
		journal_job(id, "submitted", "kind=%s backend=%s workers=%u",
		    journal_q(kd->name), backend_name[kd->backend], count);
		done += count;
	}
	buf_free(&script);
	buf_free(&logdir);
	return 0;
fail:
	buf_free(&script);
	buf_free(&logdir);
	submit_failed(k, why, doubted);
	if (doubted != NULL)
		doubt_add(doubted, k, 1);
	return -1;
}

/*
 * A worker registered naming a job of batch kind k that has no record:
 * the batch system took the job, but spoold died before it wrote the
 * record, or the submission command timed out after the job was taken
 * (a failed submission then), or has not answered yet (the worker
 * registered while it ran: main.c, while_batch; jobs_submit then finds
 * the record).  Record it now, so that it is followed, counted and
 * cancelled like the others.  Not a local job: its record needs its
 * process's host, boot and start time, which only the spoold that
 * started it knew.
 */
struct job *
jobs_adopt(const char *id, int k)
{
	const struct kind *kd = kind_at(k);
	struct job *j;

	if (kd == NULL || kd->backend == BK_LOCAL || !jobrec_id_ok(id) ||
	    strncmp(id, "failed.", 7) == 0)
		return NULL;
	j = job_record_found(id, k);
	if (submitting == k)
		msg_info("kind %s: worker job %s registered while a submission "
		    "command of its kind runs; recorded now", kd->name, id);
	else
		msg_warn("kind %s: worker job %s has no record (spoold "
		    "stopped, or its submission command timed out, after %s "
		    "took it); recorded now", kd->name, id,
		    backend_name[kd->backend]);
	return j;
}

/* ---- cancelling ---- */

/*
 * A local job started by a spoold on another host (spoold moved), or
 * recorded before records said where: no PID of it means anything
 * here, and nothing here can signal it.
 */
static int
local_elsewhere(const struct job *j)
{
	return strcmp(j->r.host, host_name()) != 0;
}

/* A local job of this host (see local_elsewhere) is alive. */
static int
local_alive(const struct job *j)
{
	long pid = local_pid(j->r.id);

	/*
	 * Once spoold or the host restarted, the PID may name another
	 * process: the job is its process only while the boot id and the
	 * start time recorded match.  A record without them (written
	 * before they were) cannot tell its process from a stranger: it
	 * counts as gone, and nothing is signalled for it.
	 */
	if (j->r.boot[0] == 0 || j->r.pstart == 0)
		return 0;
	return pid > 1 && host_pid_alive(host_name(), j->r.boot, pid,
	    j->r.pstart) == 1;
}

static int
pidfd_open_(long pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int
pidfd_send_signal_(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
	(void)pidfd;
	(void)sig;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * SIGTERM to local job j of this host: 1 signalled, 0 it had ended
 * (nothing signalled), -1 failed (said).  Its PID is pinned by a pidfd
 * before local_alive checks that it is still the job's process (boot
 * id, start time): a PID reused between the check and a kill(2) would
 * have had a stranger signalled.  Without pidfds (Linux < 5.3: said
 * once) it is signalled by PID, that race open.
 */
static int
local_signal(const struct job *j, long pid)
{
	int fd, rc;

	if (pid <= 1)
		return 0;
	if ((fd = pidfd_open_(pid)) < 0) {
		if (errno == ESRCH)
			return 0;
		if (errno != ENOSYS) {
			msg_warn("pidfd_open: job %s (pid %ld): %m", j->r.id,
			    pid);
			return -1;
		}
		msg_once("pidfd", "pidfd_open: job %s (pid %ld): %m: local "
		    "jobs are signalled by PID, which may have been reused "
		    "since it was checked (Linux >= 5.3 closes that race)",
		    j->r.id, pid);
		if (!local_alive(j))
			return 0;
		if (kill((pid_t)pid, SIGTERM) == 0)
			return 1;
		if (errno == ESRCH)
			return 0;
		msg_warn("kill: job %s (pid %ld): %m", j->r.id, pid);
		return -1;
	}
	rc = 0;
	if (local_alive(j)) {
		if (pidfd_send_signal_(fd, SIGTERM) == 0)
			rc = 1;
		else if (errno != ESRCH) {
			msg_warn("pidfd_send_signal: job %s (pid %ld): %m",
			    j->r.id, pid);
			rc = -1;
		}
	}
	if (close(fd) < 0)
		msg_warn("close: pidfd of job %s: %m", j->r.id);
	return rc;
}

/* j's cancel was sent (or, signalled 0, it had ended): say so, once. */
static void
cancel_sent(struct job *j, const char *why, int signalled)
{
	/* one that had ended is what a cancel would have made it: gone */
	if (signalled)
		msg_info("kind %s: cancelled job %s (%s)", j->r.kind, j->r.id,
		    why);
	else
		msg_info("kind %s: job %s had already ended: nothing to "
		    "cancel (%s)", j->r.kind, j->r.id, why);
	journal_job(j->r.id, "cancelled", "why=%s", journal_q(why));
	j->cancelled = 1;
	snprintf(j->cancel_why, sizeof j->cancel_why, "%s", why);
	if (!j->r.why[0]) {
		snprintf(j->r.why, sizeof j->r.why, "cancelled by spoold (%s)",
		    why);
		jobs_save(j);
	}
	scale_poll_soon();	/* see it leave the queue */
}

void
jobs_cancel(struct job *j, const char *why)
{
	const char *id = j->r.id;
	char err[300];
	int signalled = 1;

	if (j->cancelled || j->r.state >= JS_GONE)
		return;
	if (j->backend == BK_LOCAL) {
		if (local_elsewhere(j)) {
			/* once: this is asked again at every poll */
			if (!j->unstoppable)
				msg_warn("job %s runs on %s; it cannot be "
				    "stopped from here (it ends with its "
				    "worker)", j->r.id, j->r.host[0] ?
				    j->r.host : "another host");
			j->unstoppable = 1;
			return;
		}
		if ((signalled = local_signal(j, local_pid(j->r.id))) < 0)
			return;
	} else if (batch_out_of_time()) {
		return;		/* a stop that gives up names it */
	} else if (batch_cancel(j->backend, &id, 1, err, sizeof err) < 0) {
		msg_warn("kind %s: cancel job %s: %s", j->r.kind, j->r.id, err);
		return;
	}
	cancel_sent(j, why, signalled);
}

/*
 * Each batch system's jobs that may go together, in one command per
 * CANCEL_TOGETHER_MAX: a stop or a scale-down of a hundred jobs waits
 * for one command, not for a hundred in a row (on a busy slurmctld, a
 * second or more each).  A command that failed does not say which of
 * its jobs it cancelled: those are then cancelled one at a time, as
 * the rest are (local jobs, Grid Engine array tasks).
 */
void
jobs_cancel_these(struct job *const *v, size_t nv, const char *why)
{
	const char **ids;
	struct job **of;
	char err[300];
	size_t i, n, from, m;
	int b;

	if (nv == 0)
		return;
	ids = xcalloc(nv, sizeof *ids);
	of = xcalloc(nv, sizeof *of);
	for (b = 0; b < BK_NBACKENDS; b++) {
		if (b == BK_LOCAL)
			continue;
		for (i = n = 0; i < nv; i++)
			if (v[i]->backend == (enum backend)b &&
			    !v[i]->cancelled && v[i]->r.state < JS_GONE &&
			    batch_cancel_together((enum backend)b, v[i]->r.id)) {
				of[n] = v[i];
				ids[n++] = v[i]->r.id;
			}
		for (from = 0; n > 1 && from < n && !batch_out_of_time();
		    from += m) {
			m = n - from < CANCEL_TOGETHER_MAX ? n - from :
			    CANCEL_TOGETHER_MAX;
			if (batch_cancel((enum backend)b, ids + from, m, err,
			    sizeof err) < 0) {
				msg_info("cancelling %zu %s jobs in one "
				    "command: %s; %s", m, backend_name[b], err,
				    batch_out_of_time() ? "no time left to "
				    "cancel them one at a time" :
				    "one at a time instead");
				continue;
			}
			for (i = from; i < from + m; i++)
				cancel_sent(of[i], why, 1);
		}
	}
	free(ids);
	free(of);
	for (i = 0; i < nv; i++)
		jobs_cancel(v[i], why);
}

/*
 * A copy of the list: a worker registering while a cancel command runs
 * may record its job (jobs_adopt), which moves the list.
 */
void
jobs_cancel_all(const char *why)
{
	struct job **v;

	if (njobs == 0)
		return;
	v = xreallocarray(NULL, njobs, sizeof *v);
	memcpy(v, jobs, njobs * sizeof *v);
	jobs_cancel_these(v, njobs, why);
	free(v);
}

/* ---- following them ---- */

static void
job_left(struct job *j)
{
	char what[JOBREC_WHY_MAX];

	journal_job(j->r.id, "ended", "kind=%s had_worker=%d cancelled=%d",
	    journal_q(j->r.kind), j->r.had_worker, j->cancelled);
	if (j->error) {
		j->r.state = JS_FAILED;
		j->r.reason[0] = 0;
		journal_job(j->r.id, "failed", "why=%s", journal_q(j->r.why));
		jobs_save(j);
		return;
	}
	if (j->r.had_worker || j->cancelled) {
		j->r.state = JS_GONE;
		j->r.reason[0] = 0;
		jobs_save(j);
		return;
	}
	j->r.state = JS_FAILED;
	snprintf(what, sizeof what, "%s", j->r.why[0] ? j->r.why :
	    "it left the queue before its worker registered");
	why_with_log(j, what);
	j->r.reason[0] = 0;
	msg_warn("kind %s: job %s failed: %s", j->r.kind, j->r.id, j->r.why);
	journal_job(j->r.id, "failed", "why=%s", journal_q(j->r.why));
	jobs_save(j);
	if (j->kind >= 0)
		scale_job_failed(j->kind);
}

static void
job_listed(struct job *j, const struct batch_state *s)
{
	enum jstate st = strcmp(s->state, "running") == 0 ? JS_RUNNING :
	    JS_PENDING;
	int changed = 0;

	j->seen_ms = sd.now;
	j->listed = 1;
	if (strcmp(s->state, "error") == 0 && !j->error) {
		/* a failure now (it will never run), gone when it leaves */
		j->error = 1;
		snprintf(j->r.why, sizeof j->r.why, "the batch system put it in "
		    "an error state (%s); cancelled", s->reason[0] ? s->reason :
		    "its listing says so");
		msg_warn("kind %s: job %s failed: %s", j->r.kind, j->r.id,
		    j->r.why);
		if (j->kind >= 0)
			scale_job_failed(j->kind);
	}
	/* and again at each listing while the cancel has not gone through */
	if (j->error)
		jobs_cancel(j, "error state");
	if (j->r.had_worker && st == JS_PENDING)
		st = JS_RUNNING;
	if (st != j->r.state) {
		j->r.state = st;
		journal_job(j->r.id, st == JS_RUNNING ? "started" : "pending",
		    NULL);
		changed = 1;
	}
	if (strcmp(j->r.reason, st == JS_PENDING ? s->reason : "") != 0) {
		snprintf(j->r.reason, sizeof j->r.reason, "%s",
		    st == JS_PENDING ? s->reason : "");
		changed = 1;
	}
	if (changed)
		jobs_save(j);
}

/*
 * A local job on another host (local_elsewhere) is judged by its
 * worker, as the job script execs it: while the worker is registered
 * the job runs; once it has gone (exited, lost) the job has ended.  One
 * whose worker has not registered is given JOBS_LIST_GRACE_MS from
 * spoold's start to show one, then counts as ended (a failure) rather
 * than alive for ever; a worker that registers later still links to
 * the record and makes it running again.
 */
static void
poll_elsewhere(struct job *j)
{
	struct batch_state s = { "", "running", "" };

	if (j->w && !j->w->gone) {
		job_listed(j, &s);
		return;
	}
	if (!j->r.had_worker && !j->cancelled &&
	    sd.now - j->seen_ms < JOBS_LIST_GRACE_MS)
		return;
	if (!j->r.had_worker && !j->r.why[0])
		snprintf(j->r.why, sizeof j->r.why, "it was started on %s, "
		    "where this spoold cannot follow it, and no worker of it "
		    "registered", j->r.host[0] ? j->r.host : "another host");
	job_left(j);
}

static int
by_id(const void *a, const void *b)
{
	return strcmp(((const struct batch_state *)a)->id,
	    ((const struct batch_state *)b)->id);
}

static void
poll_backend(enum backend b)
{
	struct batch_state *v = NULL, key, *found;
	char why[300], what[64];
	uint64_t asked = sd.now;	/* sd.now moves on while it runs */
	size_t i, n = 0;
	struct job *j;

	if (b != BK_LOCAL && batch_out_of_time())
		return;		/* a stop that gives up names the jobs */
	if (b != BK_LOCAL) {
		snprintf(what, sizeof what, "listing the %s queue",
		    backend_name[b]);
		if (batch_list(b, &v, &n, why, sizeof why) < 0) {
			msg_once(what, "%s: %s (job states are not updated until "
			    "it answers)", what, why);
			return;
		}
		msg_clear(what);
		if (n > 1)
			qsort(v, n, sizeof *v, by_id);
	}
	for (i = 0; i < njobs; i++) {
		j = jobs[i];
		if (j->r.state >= JS_GONE || j->backend != b)
			continue;
		if (b == BK_LOCAL && local_elsewhere(j)) {
			poll_elsewhere(j);
			continue;
		}
		if (b == BK_LOCAL) {
			if (local_alive(j)) {
				struct batch_state s = { "", "running", "" };

				job_listed(j, &s);
			} else
				job_left(j);
			continue;
		}
		/*
		 * Recorded while the command ran (a worker registered
		 * naming it: jobs_adopt, main.c while_batch): a listing
		 * asked before may not show it; the next one will.
		 */
		if (!j->listed && j->seen_ms > asked)
			continue;
		snprintf(key.id, sizeof key.id, "%s", j->r.id);
		found = n ? bsearch(&key, v, n, sizeof *v, by_id) : NULL;
		if (found && strcmp(found->state, "done") != 0) {
			job_listed(j, found);
			continue;
		}
		/* (the grace counted to when the listing was asked for) */
		if (!j->listed && j->seen_ms + JOBS_LIST_GRACE_MS > asked &&
		    j->r.state == JS_PENDING && !j->cancelled)
			continue;	/* maybe not listed yet */
		job_left(j);
	}
	free(v);
}

void
jobs_poll(void)
{
	int used[BK_NBACKENDS] = { 0 }, b;
	size_t i, k;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->r.state < JS_GONE)
			used[jobs[i]->backend] = 1;
	for (b = 0; b < BK_NBACKENDS; b++)
		if (used[b])
			poll_backend((enum backend)b);
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		for (i = 0; i < ndoubts; i++)
			if (doubts[i].k == (int)k) {
				doubts_resolve((int)k);
				break;
			}
}

void
jobs_forget_old(void)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->r.state >= JS_GONE && jobs[i]->w == NULL &&
		    now_unix() - jobs[i]->r.submitted > JOBREC_KEEP_S &&
		    !scale_job_released(jobs[i]))
			job_forget(i--);
}

size_t
jobs_outstanding(void)
{
	size_t i, n = ndoubts;	/* a stop waits for their listing */

	for (i = 0; i < njobs; i++)
		if (sd.shutting_down && jobs[i]->unstoppable)
			continue;	/* a stop cannot wait for it */
		else if (jobs[i]->r.state < JS_GONE ||
		    (jobs[i]->w && !jobs[i]->w->gone))
			n++;
	return n;
}

void
jobs_report_outstanding(void)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->r.state < JS_GONE)
			msg_warn("job %s (%s) is still in the queue; cancel it "
			    "by hand if it stays there", jobs[i]->r.id,
			    jobs[i]->r.backend);
		else if (jobs[i]->w && !jobs[i]->w->gone)
			msg_warn("worker %s of job %s has not exited yet",
			    jobs[i]->w->wid, jobs[i]->r.id);
	for (i = 0; i < ndoubts; i++)
		msg_warn("kind %s: the unconfirmed submission may have left "
		    "a job in the %s queue, not found yet: its script is "
		    "%s/jobs/%s; cancel it by hand if so",
		    kind_at(doubts[i].k)->name,
		    backend_name[kind_at(doubts[i].k)->backend], sd.root_abs,
		    doubts[i].name);
}

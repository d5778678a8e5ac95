/*
 * run.c - running one task attempt and committing its outcome.
 *
 * Start:  its cores, memory and GPUs are taken (resources.c); mkdir
 *	   work/ID.ATT; stdout and stderr are files in it; the process
 *	   is spawned (taskspawn.c; from the spare: spare.c; as its
 *	   submitter: identity.c) in a new session and process group
 *	   (no controlling terminal: taskspawn.c) with default
 *	   signal handling, stdin from /dev/null, in the task's cwd
 *	   (default: its work directory), with the worker's environment
 *	   plus the task's env, the SPOOL_* variables, thread counts and
 *	   CUDA_VISIBLE_DEVICES, bound to its CPUs and in its memory
 *	   cgroup where there is one (limits.c).
 * Stop:   at its walltime, or when cancelled, the whole task (process
 *	   group, and its cgroup or followed tree: limits.c) gets
 *	   SIGTERM, then SIGKILL after the grace period; over its memory
 *	   limit, SIGKILL at once.  When the task's main process exits,
 *	   whatever is left of the task is killed: its background
 *	   processes do not outlive it.
 * Commit: work/ID.ATT/result is written in place (nobody reads the
 *	   directory before the commit: fsop_write_whole), all results
 *	   waiting are flushed with one syncfs (in the flusher's thread,
 *	   flusher.c: the loop goes on meanwhile), then each running/ID.ATT
 *	   is renamed to done/ID.ATT.  If that rename finds nothing, spoold
 *	   revoked the attempt meanwhile: the result is not ours to give.
 *	   A flush that fails hands back what it covered, and the worker
 *	   drains (flush_failed).
 *	   Group commit: a task's cores are free when it is reaped, and
 *	   its outcome waits (invisible: still in running/) until no task
 *	   runs or WORKER_COMMIT_WINDOW_MS after the first outcome waiting.
 *
 * A running/ID.ATT that disappears while the task runs means spoold
 * revoked it (this worker was declared lost): the task is killed at
 * once and nothing is committed.
 *
 * Given up: a main process that SIGKILL has not ended --unkillable-
 * timeout after it (stuck in the kernel: a hung NFS or FUSE server, a
 * dead device) is not waited for: its outcome is the kill's (give_up).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flusher.h"
#include "fsop.h"
#include "identity.h"
#include "journal.h"
#include "msg.h"
#include "taskenv.h"
#include "taskspawn.h"
#include "units.h"
#include "worker.h"

extern char **environ;

/*
 * Outcomes waiting for the group commit, and when it is due: outcomes
 * are committed together, at once when no task of this worker runs any
 * more (an idle worker adds no delay), else once the oldest has waited
 * WORKER_COMMIT_WINDOW_MS, so that a busy worker pays one syncfs for all the
 * tasks that end in that window instead of one per task.  An outcome
 * whose commit the filesystem refused (its result's write, its rename:
 * full, EIO, ESTALE) is tried again at the spool's rescan interval
 * (daemon: rescan), not sooner, even on an idle worker: "at once when
 * nothing runs" is for fresh outcomes only, or a worker left with one
 * refused rename started a syncfs at every pass of its loop.
 */
#define COMMIT_BATCH_MAX	256
static struct job **to_commit, **flushing;
static size_t ncommit, nflushing;
static uint64_t commit_due_ms;

/* The decimal text of v in buf (FMT_UINT_SIZE bytes): buf. */
static const char *
dec(char *buf, uint64_t v)
{
	fmt_uint(buf, v);
	return buf;
}

static void
build_env(struct taskenv *env, const struct job *j, const char *workdir)
{
	static const char *const not_passed[] = { "SPOOL_TASK_NAME",
	    "SPOOL_CPUS", "SPOOL_DEPS", "SPOOL_DEP_DIRS",
	    "CKSPOOL_NO_INOTIFY" };
	char buf[FMT_UINT_SIZE], path[SPOOL_PATH_MAX];
	struct buf deps = BUF_INIT, dirs = BUF_INIT, uuids = BUF_INIT;
	size_t i;

	taskenv_init(env, environ);
	/*
	 * The variables set below only for some tasks are not the worker's
	 * to pass on: a worker started from a task (of another spool, or
	 * by a workflow that starts its own) has that task's in its
	 * environment, and a task of it without a name or dependencies
	 * would take them for its own (spool path $SPOOL_DEPS reading
	 * another spool's tasks).  Nor is CKSPOOL_NO_INOTIFY: it is how
	 * the worker notices changes in its own directories (--no-inotify
	 * sets it, and spoold's for its local workers, as the tests run
	 * everything on rescans with it), no choice of the task's for the
	 * spool commands it runs, on this spool or another, which inotify
	 * only hurries (they rescan anyway).  The task's own env may still
	 * set them.
	 */
	for (i = 0; i < sizeof not_passed / sizeof not_passed[0]; i++)
		taskenv_unset(env, not_passed[i]);
	for (i = 0; j->spec.env && j->spec.env[i]; i++)
		taskenv_put(env, j->spec.env[i]);
	taskenv_set(env, "SPOOL", wk.root, 1);
	taskenv_set(env, "SPOOL_TASK_ID", dec(buf, j->id), 1);
	taskenv_set(env, "SPOOL_ATTEMPT", dec(buf, j->attempt), 1);
	taskenv_set(env, "SPOOL_TASK_DIR", workdir, 1);
	taskenv_set(env, "SPOOL_WORKER", wk.wid, 1);
	if (j->spec.name)
		taskenv_set(env, "SPOOL_TASK_NAME", j->spec.name, 1);
	taskenv_set(env, "SPOOL_CORES", dec(buf, j->ncores), 1);
	/* threaded libraries: one thread per core given, unless told */
	taskenv_set(env, "OMP_NUM_THREADS", buf, 0);
	taskenv_set(env, "MKL_NUM_THREADS", buf, 0);
	taskenv_set(env, "OPENBLAS_NUM_THREADS", buf, 0);
	if (j->cpus)
		taskenv_set(env, "SPOOL_CPUS", j->cpus, 1);
	/* its GPUs only, once the worker hands GPUs out (or was given
	 * some); by UUID in a devices cgroup, where CUDA numbers only the
	 * GPUs the task may open (fences.c) */
	if (wk.gpus.n > 0 || getenv("CUDA_VISIBLE_DEVICES")) {
		for (i = 0; wk.gpu_method == GM_DEVICES && i < j->ngpu; i++)
			buf_printf(&uuids, "%s%s", i ? "," : "",
			    wk.gpus.uuid[j->gpu[i]]);
		taskenv_set(env, "CUDA_VISIBLE_DEVICES", wk.gpu_method ==
		    GM_DEVICES ? (uuids.p ? uuids.p : "") : j->gpu_ids ?
		    j->gpu_ids : "", 1);
		taskenv_set(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	}
	for (i = 0; i < j->spec.nafter; i++) {
		spool_task_path(j->spec.after[i], path, sizeof path);
		buf_printf(&deps, "%s%" PRIu64, i ? " " : "", j->spec.after[i]);
		buf_printf(&dirs, "%s%s/tasks/%s", i ? ":" : "", wk.root, path);
	}
	if (j->spec.nafter) {
		taskenv_set(env, "SPOOL_DEPS", deps.p, 1);
		/*
		 * One environment string longer than MAX_ARG_STRLEN fails
		 * execve with E2BIG: the task could never start.  Many
		 * dependencies under a long spool path make this one so
		 * long; it is left out then (spool(1): spool path
		 * $SPOOL_DEPS gives the same), SPOOL_DEPS (at most 1024
		 * IDs) always fits.
		 */
		if (sizeof "SPOOL_DEP_DIRS=" + dirs.len <= TASK_STRING_MAX)
			taskenv_set(env, "SPOOL_DEP_DIRS", dirs.p, 1);
		else
			msg_info("task %" PRIu64 " attempt %u: SPOOL_DEP_DIRS "
			    "(%zu bytes) is longer than an environment string "
			    "may be (%u); not set", j->id, j->attempt,
			    dirs.len, TASK_STRING_MAX);
	}
	buf_free(&deps);
	buf_free(&dirs);
	buf_free(&uuids);
}

static int
is_exec(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * Where commands were found, by command and PATH, as a shell's hash
 * table keeps them: many tasks run the same command, and the search
 * costs a failed stat per directory of PATH before the right one.  A
 * remembered place is used while it still holds an executable (one
 * stat); else PATH is searched again.  Only a PATH of absolute entries
 * is kept: with a relative one (an empty one is ".") what is found
 * depends on the task's cwd, which is not part of the key.
 */
#define EXEC_CACHE	8
static struct { char *cmd, *path, *exe; } exec_cache[EXEC_CACHE];
static unsigned exec_next;

/* Whether path has a relative entry (an empty one is "."). */
static int
path_relative(const char *path)
{
	const char *p = path;

	for (;;) {
		if (*p != '/')
			return 1;
		if ((p = strchr(p, ':')) == NULL)
			return 0;
		p++;
	}
}

/*
 * Find a command in PATH the way execvp would from cwd, where the task
 * will exec it (a relative entry is cwd's, not the worker's); NULL if
 * not found.
 */
static char *
find_exec(const char *cmd, char **env, const char *cwd)
{
	const char *path = taskenv_get(env, "PATH");
	char cand[PATH_MAX];
	size_t i;
	int cached;

	if (strchr(cmd, '/'))
		return xstrdup(cmd);
	if (path == NULL)
		path = SPAWN_PATH_DEFAULT;
	cached = !path_relative(path);
	for (i = 0; cached && i < EXEC_CACHE; i++)
		if (exec_cache[i].cmd && strcmp(exec_cache[i].cmd, cmd) == 0 &&
		    strcmp(exec_cache[i].path, path) == 0) {
			if (is_exec(exec_cache[i].exe))
				return xstrdup(exec_cache[i].exe);
			break;
		}
	if (spawn_search(cmd, path, cwd, cand, sizeof cand) < 0)
		return NULL;
	if (cached) {
		if (i == EXEC_CACHE)
			i = exec_next++ % EXEC_CACHE;
		free(exec_cache[i].cmd);
		free(exec_cache[i].path);
		free(exec_cache[i].exe);
		exec_cache[i].cmd = xstrdup(cmd);
		exec_cache[i].path = xstrdup(path);
		exec_cache[i].exe = xstrdup(cand);
	}
	return xstrdup(cand);
}

static int
open_out(int wfd, const char *name)
{
	return fsop_openfile(wfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
}

/* Queue the commit of j with its result (commit_start writes it). */
static void
finish(struct job *j, const struct result *r)
{
	j->pid = 0;	/* reaped: nothing to signal while it waits */
	j->deadline_ms = j->kill_at_ms = 0;
	journal_result("finished", r);
	buf_reset(&j->result);
	result_encode(&j->result, r);
	j->written = 0;
	/* nothing of it runs any more: the next task may have its cores
	 * while its outcome waits for the group commit */
	res_release(j);
	j->refused = 0;
	/* (retries waiting: it does not wait for their time) */
	if (ncommit == 0 || commit_due_ms > wk.now + WORKER_COMMIT_WINDOW_MS)
		commit_due_ms = wk.now + WORKER_COMMIT_WINDOW_MS;
	to_commit = xreallocarray(to_commit, ncommit + 1, sizeof *to_commit);
	to_commit[ncommit++] = j;
}

/* j's commit was refused with err: again at the rescan interval
 * (to_commit). */
static void
commit_again(struct job *j, int err)
{
	j->refused = err;
	if (ncommit == 0)
		commit_due_ms = wk.now + wk.sp.cfg.rescan_ms;
	to_commit = xreallocarray(to_commit, ncommit + 1, sizeof *to_commit);
	to_commit[ncommit++] = j;
}

/*
 * j's work directory is its task's SPOOL_TASK_DIR (and, by default, its
 * cwd), which the task may have removed (rm -rf "$SPOOL_TASK_DIR"),
 * replaced by a file, or left without its owner's rights (chmod 000,
 * chmod -R a-w): its result could then never be written there, and its
 * commit would be tried again for ever, the task never end and the
 * worker never drain.  err is the errno of what failed; for those
 * cases the directory is made the worker's again (0700; made anew,
 * without the outputs, when it was gone) and 0 returned, for the write
 * to be tried once more; else -1, errno err.
 */
static int
workdir_restore(const struct job *j, int err)
{
	int dfd = wk.subfd[WS_WORK];
	struct stat st;

	if (err != ENOENT && err != ENOTDIR && err != EACCES)
		goto no;
	if (fsop_stat(dfd, j->name, &st) < 0) {
		if (errno != ENOENT)
			goto no;
	} else if (S_ISDIR(st.st_mode)) {
		if (err != EACCES || (st.st_mode & 0700) == 0700 ||
		    fsop_chmod_dir(dfd, j->name, 0700) < 0)
			goto no;
		msg_warn("task %" PRIu64 " attempt %u took its own rights from "
		    "its directory (mode %03o): workers/%s/work/%s made 0700 "
		    "again for its result", j->id, j->attempt,
		    (unsigned)(st.st_mode & 07777), wk.wid, j->name);
		return 0;
	} else if (fsop_unlink(dfd, j->name) < 0 && errno != ENOENT)
		goto no;
	if (fsop_mkdir(dfd, j->name, 0700) < 0 && errno != EEXIST)
		goto no;
	msg_warn("task %" PRIu64 " attempt %u removed its own directory: "
	    "workers/%s/work/%s made again for its result (without its "
	    "outputs)", j->id, j->attempt, wk.wid, j->name);
	return 0;
no:
	errno = err;
	return -1;
}

/* a write of this worker refused for want of space since the disk's
 * last look (run_disk_check: see disk_full) */
static int space_refused;

/* err is a write refused for want of space: the disk's or a quota's */
static int
disk_err(int err)
{
	return err == ENOSPC || err == EDQUOT;
}

/* work/ as messages name it (fsop_write_whole's warning): made once,
 * not at each task's result, as the worker's ID is set at its start */
static const char *
work_shown(void)
{
	static char s[WDIR_ID_MAX + 16];

	if (s[0] == 0)
		snprintf(s, sizeof s, "workers/%s/work", wk.wid);
	return s;
}

/*
 * Write j's result into its work directory; 0, or -1 (kept for later).
 * A directory given to its submitter (identity_give) is taken back
 * first, now that nothing of the task runs: it becomes tasks/SHARD/ID,
 * and its owner could otherwise replace, remove or rename (into
 * incoming/, control/) the result and spec written into it, for every
 * reader after (root's "spool status", "spool wait" on a FIFO).
 */
static int
result_write(struct job *j)
{
	char path[WDIR_ANAME_MAX + 16];
	int dfd = wk.subfd[WS_WORK];

	if (j->given) {
		if (fchownat(dfd, j->name, geteuid(), (gid_t)-1,
		    AT_SYMLINK_NOFOLLOW) < 0 && (errno != ENOENT ||
		    workdir_restore(j, errno) < 0)) {
			msg_once("result", "chown: workers/%s/work/%s: %m (the "
			    "outcome is kept; trying again)", wk.wid, j->name);
			return -1;
		}
		j->given = 0;
	}
	snprintf(path, sizeof path, "%s/result", j->name);
	if (fsop_write_whole(dfd, work_shown(), path, j->result.p,
	    j->result.len, 0600, 0) < 0 && (workdir_restore(j, errno) < 0 ||
	    fsop_write_whole(dfd, work_shown(), path, j->result.p,
	    j->result.len, 0600, 0) < 0)) {
		/* a full or failing filesystem: the outcome is kept in
		 * memory and written when it can be, not run again; a
		 * full one (or quota) is a task's to free (run_disk_check) */
		if (disk_err(errno))
			space_refused = 1;
		msg_once("result", "write: workers/%s/work/%s: %m (the "
		    "outcome is kept; trying again)", wk.wid, path);
		return -1;
	}
	msg_clear("result");
	/* (the record is kept: a flush that fails rewrites it,
	 * flush_failed) */
	j->written = 1;
	return 0;
}

/* A result of j that failed before its task ran (reason spawn). */
static void
spawn_failure(struct job *j, struct result *r, char *message)
{
	result_init(r);
	r->id = j->id;
	r->attempt = j->attempt;
	r->state = RS_FAILED;
	r->reason = RR_SPAWN;
	r->message = message;
	r->worker = xstrdup(wk.wid);
	r->host = xstrdup(wk.info.host);
	r->end = now_unix();
}

/*
 * A and B may be the task's (its program, its cwd): their control
 * bytes are written as \xHH, so that the message, shown by "spool
 * wait" and "spool status -l" and logged here, cannot send escape
 * sequences to whoever reads it (root's terminal, in a shared spool).
 */
static void
fail_start(struct job *j, const char *fmt, const char *a, const char *b)
{
	struct buf m = BUF_INIT;
	struct result r;
	char *raw = xasprintf(fmt, a, b);

	buf_put_printable(&m, raw);
	free(raw);
	spawn_failure(j, &r, buf_steal(&m));
	r.exit_code = 127;
	r.start = r.end;
	r.cores = j->ncores;
	if (j->cpus)
		r.cpus = xstrdup(j->cpus);
	msg_info("task %" PRIu64 " attempt %u did not start: %s", j->id,
	    j->attempt, r.message);
	finish(j, &r);
	result_free(&r);
}

void
run_not_run(struct job *j, const char *why)
{
	struct result r;

	spawn_failure(j, &r, xasprintf("bad assignment: %s", why));
	finish(j, &r);
	result_free(&r);
}

/*
 * Before the claim: open its stdout and stderr (and write its script),
 * so that a filesystem that cannot (full, EIO, ESTALE) leaves the task
 * in inbox/ to be tried again.  0, or -1 with why.
 */
int
run_prepare(struct job *j, char *why, size_t size)
{
	int wfd, sfd = -1;
	const char *what = "stdout";

	if (j->prepared)
		return 0;
	if ((wfd = fsop_opendir(wk.subfd[WS_WORK], j->name)) < 0) {
		snprintf(why, size, "open: workers/%s/work/%s: %s", wk.wid,
		    j->name, strerror(errno));
		return -1;
	}
	j->out = j->err = -1;
	if ((j->out = open_out(wfd, "stdout")) < 0 ||
	    (what = "stderr", j->err = open_out(wfd, "stderr")) < 0)
		goto fail;
	if (!j->spec.argv && !j->spec.shell) {
		what = "script";
		if ((sfd = fsop_openfile(wfd, "script", O_WRONLY | O_CREAT |
		    O_TRUNC, 0700)) < 0 || fsop_write(sfd, j->spec.script,
		    strlen(j->spec.script)) < 0 || fsop_close(sfd) < 0) {
			if (sfd >= 0)
				(void)close(sfd);
			goto fail;
		}
	}
	(void)close(wfd);
	j->prepared = 1;
	return 0;
fail:
	snprintf(why, size, "open: workers/%s/work/%s/%s: %s", wk.wid,
	    j->name, what, strerror(errno));
	if (j->out >= 0)
		(void)close(j->out);
	if (j->err >= 0)
		(void)close(j->err);
	(void)close(wfd);
	return -1;
}

void
run_unprepare(struct job *j)
{
	if (!j->prepared)
		return;
	(void)close(j->out);
	(void)close(j->err);
	j->prepared = 0;
}

/* What a task gets with default dispositions (the worker's are not). */
static const int dfl_sigs[] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP,
    SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM };
#define NDFL	(sizeof dfl_sigs / sizeof dfl_sigs[0])

void
run_child_defaults(void)
{
	size_t i;

	/* (the spare is the leader of its own session already, made so
	 * by spawn_task: this fails then, harmlessly) */
	(void)setsid();
	for (i = 0; i < NDFL; i++)
		(void)signal(dfl_sigs[i], SIG_DFL);
}

void
run_child_unblock(void)
{
	sigset_t none;

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* j's command line: its argv, sh -c, or its script (into script). */
static char **
task_argv(struct job *j, const char *workdir, char *script, size_t size,
    char *sh[4])
{
	if (j->spec.argv)
		return j->spec.argv;
	if (j->spec.shell) {
		sh[0] = (char *)"/bin/sh";
		sh[1] = (char *)"-c";
		sh[2] = j->spec.shell;
		sh[3] = NULL;
		return sh;
	}
	snprintf(script, size, "%s/script", workdir);
	sh[0] = script;
	sh[1] = NULL;
	return sh;
}

/* A child that never became a task (a spare): killed, reaped. */
void
run_kill_reap(pid_t pid)
{
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* What is left of j's start from the spare (spare.c). */
void
run_forget(struct job *j)
{
	if (j->fail_fd >= 0)
		(void)close(j->fail_fd);
	j->fail_fd = -1;
	free(j->exe);
	j->exe = NULL;
}

int
run_start(struct job *j)
{
	char workdir[sizeof wk.root + WDIR_ID_MAX + WDIR_ANAME_MAX + 32];
	char script[sizeof workdir + 8];
	struct spawn_plan plan;
	struct taskenv env = { 0 };
	char **argv = NULL, *exe = NULL, *sh[4], why[768], found[PATH_MAX];
	const char *cwd, *what;
	sigset_t dfl;
	struct stat cst;
	struct identity who;
	int out = -1, err = -1, rc, ok = -1;
	size_t i;

	j->state = J_RUNNING;	/* counted from here, even if it fails */
	res_take(j);
	/*
	 * Its start, as its result's wall counts from it, and the clock
	 * its walltime is counted on read just after: not the loop's
	 * wk.now, read before the tasks started ahead of it in this pass,
	 * which killed it up to their time short of its walltime.
	 */
	j->start = now_unix();
	j->start_ms = now_ms();
	snprintf(workdir, sizeof workdir, "%s/workers/%s/work/%s", wk.root,
	    wk.wid, j->name);
	/* its work directory and files were made before it was claimed
	 * (inbox.c, run_prepare) */
	if (!j->prepared) {
		fail_start(j, "%s: %s", workdir, "its output files were not "
		    "opened before it was claimed");
		goto out;
	}
	out = j->out;
	err = j->err;
	j->prepared = 0;
	build_env(&env, j, workdir);
	argv = task_argv(j, workdir, script, sizeof script, sh);
	cwd = j->spec.cwd ? j->spec.cwd : workdir;
	/* a shared spool's task runs as its submitter (identity.h) */
	if (identity_of(&j->spec, &who, why, sizeof why) < 0) {
		fail_start(j, "%s%s", why, "");
		goto out;
	}
	/*
	 * Its cwd, looked at with the worker's rights: not for a task
	 * that becomes its submitter, which enters it with the user's
	 * (identity.c); root's answer would tell a user what is in
	 * directories the user cannot search.  Before its program: a
	 * relative entry of PATH is looked up from it.
	 */
	if (!who.change &&
	    ((rc = stat(cwd, &cst)) < 0 || !S_ISDIR(cst.st_mode))) {
		fail_start(j, "cwd: %s: %s", cwd,
		    strerror(rc < 0 ? errno : ENOTDIR));
		goto out;
	}
	/*
	 * Its program, looked up in PATH with the worker's rights: not for
	 * a task that becomes its submitter, whose process looks it up once
	 * it is the submitter (identity.c); root's answer (not found, or
	 * found and then not executable by the user) would tell a user
	 * what is in directories the user cannot search.  From its cwd,
	 * where it starts (find_exec).
	 */
	if (who.change)
		exe = xstrdup(argv[0]);
	else if ((exe = find_exec(argv[0], env.v, cwd)) == NULL) {
		fail_start(j, "command not found: %s%s", argv[0],
		    taskenv_get(env.v, "PATH") ? "" : " (no PATH)");
		goto out;
	}
	j->given = who.change;	/* (taken back even if given in part) */
	if (identity_give(&who, wk.subfd[WS_WORK], j->name, out, err) < 0) {
		fail_start(j, "chown: %s: %s", workdir, strerror(errno));
		goto out;
	}
	/* started from the process made while the worker idled */
	if (!who.change && spare_start(j, exe, argv, env.v, cwd, out, err) == 0) {
		ok = 0;
		goto started;
	}
	sigemptyset(&dfl);
	for (i = 0; i < NDFL; i++)
		sigaddset(&dfl, dfl_sigs[i]);
	plan = (struct spawn_plan){ .exe = exe, .argv = argv, .env = env.v,
	    .cwd = cwd, .out = out, .err = err, .cgroup_fd = -1,
	    .cpuset_fd = -1, .devices_fd = -1, .extra = -1,
	    .dfl = &dfl };
	if (limits_plan(j, &plan, why, sizeof why) < 0) {
		fail_start(j, "cannot enforce its limits: %s%s", why, "");
		goto out;
	}
	/* listed for the guard by its process itself (guard.c) */
	plan.listed = guard_slot(j);
	plan.lister = (pid_t)wk.info.pid;	/* (no getpid a start) */
	if (who.change)		/* forked: see identity.c */
		rc = identity_spawn(&j->pid, &who, &plan, &what, found,
		    sizeof found);
	else
		rc = spawn_task(&j->pid, &plan, &what);
	limits_spawned(j, &plan);
	if (rc != 0) {
		guard_unlist(plan.listed);	/* (reaped by the spawn) */
		if (who.change && found[0]) {	/* where its child found it */
			free(exe);
			exe = xstrdup(found);
		}
		if (limits_step_why(j, what, rc, why, sizeof why))
			fail_start(j, "cannot enforce its limits: %s%s", why,
			    "");
		else if (strcmp(what, "command") == 0)
			fail_start(j, "command not found: %s%s", argv[0],
			    taskenv_get(env.v, "PATH") ? "" : " (no PATH)");
		else if (strcmp(what, "cwd") == 0)
			fail_start(j, "cwd: %s: %s", cwd, strerror(rc));
		else if (what[0] && strcmp(what, "exec") != 0) {
			snprintf(why, sizeof why, "%s: %s", what, strerror(rc));
			fail_start(j, "cannot start %s: %s", exe, why);
		} else
			fail_start(j, "cannot start %s: %s", exe, strerror(rc));
		goto out;
	}
	ok = 0;
started:
	/* (+ 1: start_ms is the millisecond its start fell in) */
	if (j->spec.walltime)
		j->deadline_ms = j->start_ms + j->spec.walltime * 1000 + 1;
	msg_debug("task %" PRIu64 " attempt %u started, pid %ld", j->id,
	    j->attempt, (long)j->pid);
	journal_task(j->id, "started", "att=%u worker=%s pid=%ld cores=%u",
	    j->attempt, wk.wid, (long)j->pid, task_cores(&j->spec));
out:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	taskenv_free(&env);
	free(exe);
	return ok;
}

/*
 * A full spool filesystem (doc/guarantees.md, "A full disk").  When the
 * filesystem holding the spool has less than DISK_LOW bytes free, or
 * refused a write of this worker for want of space since the last look
 * (space_refused), the task whose stdout and stderr together are the
 * largest, and larger than DISK_CUT, is judged to have filled it: it is
 * killed (if it still runs) and fails with reason "disk", each of its
 * outputs cut to its first DISK_CUT bytes, so that its neighbours can
 * write theirs and every result can be committed.
 *
 * A quota (EDQUOT) is full like the disk (ENOSPC), but statvfs shows
 * the filesystem's free space, not what is left of a user's quota (nor
 * of its inodes): without the refusals, a task that filled its user's
 * quota was never judged, and the results refused after it were tried
 * again for ever.  A task that failed with more than DISK_CUT of output
 * while the filesystem looks free is judged by a write of DISK_PROBE
 * bytes (disk_refuses).
 */
#define DISK_LOW	(256 * 1024)
#define DISK_CUT	(64 * 1024)
#define DISK_PROBE	4096

static int
disk_full(void)
{
	struct statvfs v;

	return space_refused || (fstatvfs(wk.sp.rootfd, &v) == 0 &&
	    (uint64_t)v.f_bavail * v.f_frsize < DISK_LOW);
}

/* 1 if a write of DISK_PROBE bytes into work/ is refused for want of
 * space (a quota that statvfs does not show) */
static int
disk_refuses(void)
{
	static const char zero[DISK_PROBE];
	int fd, dfd = wk.subfd[WS_WORK], err = 0;

	/* (one a dead worker left is replaced) */
	if ((fd = fsop_create_replacing(dfd, WDIR_DISK_PROBE, 0600)) < 0 ||
	    fsop_write(fd, zero, sizeof zero) < 0)
		err = errno;
	/* removed before its close: on sshfs a file removed just after
	 * its close may stay as .fuse_hiddenNNN (libfuse issue 746) */
	if (fd >= 0 && fsop_unlink(dfd, WDIR_DISK_PROBE) < 0 &&
	    errno != ENOENT)
		msg_warn("unlink: workers/%s/work/%s: %m", wk.wid,
		    WDIR_DISK_PROBE);
	if (fd >= 0 && fsop_close(fd) < 0 && err == 0)
		err = errno;
	if (err == 0)
		return 0;
	if (disk_err(err))
		return 1;
	errno = err;
	msg_warn("write: workers/%s/work/%s: %m", wk.wid, WDIR_DISK_PROBE);
	return 0;
}

/* Bytes of j's stdout and stderr. */
static uint64_t
disk_output(const struct job *j)
{
	char path[WDIR_ANAME_MAX + 16];
	struct stat st;
	uint64_t n = 0;

	snprintf(path, sizeof path, "%s/stdout", j->name);
	if (fsop_stat(wk.subfd[WS_WORK], path, &st) == 0)
		n += (uint64_t)st.st_size;
	snprintf(path, sizeof path, "%s/stderr", j->name);
	if (fsop_stat(wk.subfd[WS_WORK], path, &st) == 0)
		n += (uint64_t)st.st_size;
	return n;
}

/*
 * Cut j's outputs to DISK_CUT bytes; what was cut, for its message.
 * Each is opened without blocking and judged by what was opened: the
 * task's user owns its attempt directory (a member of a shared spool,
 * its task run by a root worker) and can make an output a FIFO after
 * any look at it by name, and an open to write a FIFO waits for a
 * reader, for good.  Such an output is left as it is.
 */
static void
disk_cut(const struct job *j, char *what, size_t size)
{
	static const char *const outs[] = { "stdout", "stderr" };
	char path[WDIR_ANAME_MAX + 16];
	size_t i, len = 0;
	off_t was;
	int fd;

	what[0] = 0;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", j->name, outs[i]);
		if ((fd = fsop_open_overwrite(wk.subfd[WS_WORK], path,
		    &was)) < 0) {
			/* (a FIFO without a reader: ENXIO; a link: ELOOP) */
			if (errno == EINVAL || errno == ENXIO || errno == ELOOP)
				msg_warn("truncate: workers/%s/work/%s: not a "
				    "regular file", wk.wid, path);
			else if (errno != ENOENT)
				msg_warn("open: workers/%s/work/%s: %m", wk.wid,
				    path);
			continue;
		}
		if (was <= DISK_CUT) {
			(void)close(fd);
			continue;
		}
		if (fsop_truncate(fd, DISK_CUT) < 0)
			msg_warn("truncate: workers/%s/work/%s: %m", wk.wid,
			    path);
		else if (len < size)
			len += (size_t)snprintf(what + len, size - len,
			    "%s%s cut from %jd bytes to its first %d",
			    len ? ", " : "", outs[i], (intmax_t)was, DISK_CUT);
		(void)close(fd);
	}
}

/* From the heartbeat: a running task that fills the disk is stopped. */
void
run_disk_check(void)
{
	struct job *j, *big = NULL;
	uint64_t n, most = DISK_CUT;
	size_t i;
	int full = disk_full();

	space_refused = 0;	/* a refusal again sets it again */
	if (!full)
		return;
	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		/* (pid 0: it ended, its outcome waits for the commit) */
		if (j->state == J_RUNNING && j->pid > 0 &&
		    (n = disk_output(j)) > most) {
			most = n;
			big = j;
		}
	}
	if (big == NULL)
		return;
	msg_warn("task %" PRIu64 " attempt %u: its output (%" PRIu64 " bytes) "
	    "filled the spool's filesystem; stopping it", big->id,
	    big->attempt, most);
	run_kill(big, RR_DISK, 1);
}

static const char *
sig_name(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

/*
 * The hold.  A batch system that ends a job (scancel, preemption, qdel,
 * bkill, its walltime) signals every process of it, the worker and its
 * tasks alike, in an order of its own.  A task it terminated is the
 * worker's to hand back, not a failure of the task; but its SIGCHLD
 * may reach the worker before the worker's own SIGTERM does.  So a task
 * that died of SIGTERM or SIGINT, or exited 143 or 130 (a shell or a
 * wrapper passing such a death on), when this worker had not stopped
 * it, has its outcome held for --signal-wait: if SIGTERM or SIGINT
 * reaches the worker meanwhile, the task is handed back (run again
 * elsewhere, its attempt not spent); else its outcome is committed as
 * it is.  Its cores are free while it waits.
 */
static int
terminated(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT;
	return WIFEXITED(status) && (WEXITSTATUS(status) == 128 + SIGTERM ||
	    WEXITSTATUS(status) == 128 + SIGINT);
}

static void
hand_back_terminated(struct job *j, struct result *r)
{
	msg_info("task %" PRIu64 " attempt %u was terminated with this "
	    "worker: handing it back", j->id, j->attempt);
	r->reason = RR_WORKER_LOST;
	r->state = RS_FAILED;
	free(r->message);
	r->message = xstrdup("stopped with its worker");
	j->handback = 1;
	finish(j, r);
	result_free(r);
}

/* SIGTERM or SIGINT reached the worker: what is held goes back. */
void
run_signalled(void)
{
	size_t i;

	wk.signalled = 1;
	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->hold_until_ms) {
			wk.jobs[i]->hold_until_ms = 0;
			hand_back_terminated(wk.jobs[i], &wk.jobs[i]->held);
		}
}

/* Holds that ran out: those outcomes are the tasks' own. */
static void
release_holds(void)
{
	struct job *j;
	size_t i;

	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		if (j->hold_until_ms && wk.now >= j->hold_until_ms) {
			j->hold_until_ms = 0;
			finish(j, &j->held);
			result_free(&j->held);
		}
	}
}

/* j's main process ended with status (or was given up: gave_up says
 * how, for its result's message; else NULL) */
static void
reaped(struct job *j, int status, const struct rusage *ru,
    const char *gave_up)
{
	struct result r;
	char wall[32];
	int e;

	result_init(&r);
	r.utime = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
	r.stime = (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
	if (WIFEXITED(status))
		r.exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r.signal = WTERMSIG(status);
	r.maxrss = (uint64_t)ru->ru_maxrss * 1024;
	/* how long tasks run here, lately (inbox_prepare_next) */
	wk.run_mean_us = (wk.run_mean_us * 7 +
	    (now_ms() - j->start_ms) * 1000) / 8;
	if (j->fail_fd >= 0) {		/* (an exec from the spare) */
		if (read(j->fail_fd, &e, sizeof e) == (ssize_t)sizeof e)
			j->exec_errno = e;
		(void)close(j->fail_fd);
		j->fail_fd = -1;
	}
	/* nothing of the task outlives it; its accounting */
	limits_reaped(j, &r);
	if (j->revoked) {
		result_free(&r);
		res_release(j);
		job_remove(j);
		return;
	}
	r.id = j->id;
	r.attempt = j->attempt;
	r.worker = xstrdup(wk.wid);
	r.host = xstrdup(wk.info.host);
	if (wk.info.job[0])
		r.job = xstrdup(wk.info.job);
	r.start = j->start;
	r.end = j->end;
	/* it failed by itself (a write failed), the disk or its user's
	 * quota full by it; (a task that succeeded costs no look at the
	 * filesystem, and a small output no write) */
	if (j->why_killed == RR_EXIT && status != 0 &&
	    disk_output(j) > DISK_CUT && (disk_full() || disk_refuses()))
		j->why_killed = RR_DISK;
	if (j->exec_errno) {
		r.reason = RR_SPAWN;
		r.state = RS_FAILED;
		r.message = xasprintf("cannot start %s: %s", j->exe,
		    strerror(j->exec_errno));
		msg_info("task %" PRIu64 " attempt %u did not start: %s",
		    j->id, j->attempt, r.message);
	} else if (j->why_killed == RR_DISK) {
		char cut[256];
		uint64_t n = disk_output(j);

		disk_cut(j, cut, sizeof cut);
		r.reason = RR_DISK;
		r.state = RS_FAILED;
		r.message = xasprintf("its output (%" PRIu64 " bytes) filled "
		    "the spool's filesystem%s%s", n, cut[0] ? "; " : "", cut);
		msg_info("task %" PRIu64 " attempt %u: %s", j->id, j->attempt,
		    r.message);
	} else if (j->why_killed != RR_EXIT) {
		r.reason = j->why_killed;
		r.state = j->why_killed == RR_CANCELLED ? RS_CANCELLED :
		    RS_FAILED;
		if (j->why_killed == RR_WALLTIME)
			r.message = xasprintf("walltime of %s (%" PRIu64
			    " s) exceeded; stopped",
			    units_format_duration(j->spec.walltime, wall,
			    sizeof wall), j->spec.walltime);
		else if (j->why_killed == RR_MEMORY)
			r.message = xstrdup(j->mem_why ? j->mem_why :
			    "memory limit exceeded");
		else
			r.message = xstrdup(j->why_killed == RR_CANCELLED ?
			    "cancelled by request" : "stopped");
	} else if (WIFEXITED(status)) {
		r.reason = RR_EXIT;
		r.state = r.exit_code == 0 ? RS_DONE : RS_FAILED;
		if (r.exit_code)
			r.message = xasprintf("exited with status %d",
			    r.exit_code);
	} else {
		r.reason = RR_SIGNAL;
		r.state = RS_FAILED;
		/* where its core went is the kernel's core_pattern's, under
		 * the RLIMIT_CORE the task inherited: say that there is one */
		r.message = xasprintf("killed by signal %d (SIG%s)%s", r.signal,
		    sig_name(r.signal), WCOREDUMP(status) ? ", core dumped" :
		    "");
	}
	if (gave_up) {
		char *m = xasprintf("%s%s%s", r.message ? r.message : "",
		    r.message ? "; " : "", gave_up);

		free(r.message);
		r.message = m;
	}
	msg_debug("task %" PRIu64 " attempt %u %s", j->id, j->attempt,
	    result_state_name[r.state]);
	if (j->why_killed == RR_EXIT && !j->exec_errno &&
	    terminated(status)) {
		if (wk.signalled) {
			hand_back_terminated(j, &r);
			return;
		}
		if (wk.signal_wait_ms) {
			/* (see hold) */
			msg_debug("task %" PRIu64 " attempt %u was terminated, "
			    "not by this worker: its outcome waits %" PRIu64
			    " ms for a signal to the worker", j->id, j->attempt,
			    wk.signal_wait_ms);
			j->pid = 0;
			j->deadline_ms = j->kill_at_ms = 0;
			res_release(j);
			j->held = r;
			j->hold_until_ms = wk.now + wk.signal_wait_ms;
			return;
		}
	}
	finish(j, &r);
	result_free(&r);
}

/*
 * The second half of a commit, once the flush is over: each outcome
 * whose result it covered goes from running/ to done/ (or returned/).
 * What the filesystem refuses (full, EIO, ESTALE) waits for the next
 * commit.
 */
static void
commit_finish(void)
{
	struct job *j;
	size_t i;

	for (i = 0; i < nflushing; i++) {
		j = flushing[i];
		if (fsop_rename(wk.subfd[WS_RUNNING], j->name,
		    wk.subfd[j->handback ? WS_RETURNED : WS_DONE], j->name) < 0) {
			if (errno != ENOENT) {
				if (disk_err(errno))
					space_refused = 1;
				msg_once("commit", "commit: workers/%s/running/"
				    "%s: %m (trying again)", wk.wid, j->name);
				commit_again(j, errno);
				continue;
			}
			msg_warn("task %" PRIu64 " attempt %u was revoked by "
			    "spoold; its result is dropped", j->id, j->attempt);
		} else
			msg_clear("commit");
		res_release(j);
		job_remove(j);
	}
	nflushing = 0;
	wk.idle_since = wk.now;
}

/*
 * The flush of the outcomes in flushing[] failed with err.  What it
 * covered (their results, and the stdout and stderr their tasks wrote
 * themselves) may be lost, and no later flush would say so: since
 * Linux 5.8 syncfs reports a writeback error once per open file, so
 * the next one returns 0 over the lost data; and the worker cannot
 * write a task's outputs again.  So none of them is committed as done:
 * each is handed back (returned/, spoold runs the task again) with a
 * result that says why.  A hand-back needs no flush of its own: lost
 * in a crash, the attempt stays in running/ and is requeued as a lost
 * worker's.  Then the worker drains, so that a broken filesystem does
 * not take task after task: those still running end, and are
 * committed with flushes of their own, which report errors of their
 * own.  A result that cannot be written waits for the next commit.
 */
static void
flush_failed(int err)
{
	static char why[128];
	struct result r;
	struct job *j;
	const char *bad;
	size_t i, k;

	msg_warn("syncfs: %s: %s: %zu result%s handed back (their outputs "
	    "may be lost); draining", wk.root, strerror(err), nflushing,
	    nflushing == 1 ? "" : "s");
	if (!wk.draining) {
		snprintf(why, sizeof why, "results could not be flushed: "
		    "syncfs: %s", strerror(err));
		start_drain(why, 0);	/* first: spoold reads why */
	}
	wk.exit_status = EXIT_TEMPFAIL;	/* it did not leave cleanly */
	for (i = k = 0; i < nflushing; i++) {
		j = flushing[i];
		/* (one handed back already says why: stopped with its
		 * worker) */
		if (!j->handback) {
			result_init(&r);
			if (result_decode(j->result.p, j->result.len, &r,
			    &bad) == 0) {
				r.state = RS_FAILED;
				r.reason = RR_WORKER_LOST;
				free(r.message);
				r.message = xasprintf("its outputs could not be "
				    "flushed: syncfs: %s", strerror(err));
				buf_reset(&j->result);
				result_encode(&j->result, &r);
			}
			result_free(&r);
			j->handback = 1;
			j->written = 0;
		}
		if (!j->written && result_write(j) < 0)
			commit_again(j, errno);
		else
			flushing[k++] = j;
	}
	nflushing = k;
	commit_finish();
}

/*
 * The first half: write the queued results and start one flush for
 * them all; those whose result could not be written stay queued for
 * the next pass.
 */
static void
commit_start(void)
{
	struct job *j;
	size_t i, k;

	limits_settle();	/* nothing of them is left when committed */
	flushing = xreallocarray(flushing, ncommit, sizeof *flushing);
	for (i = k = 0; i < ncommit; i++) {
		j = to_commit[i];
		if (!j->written && result_write(j) < 0) {
			j->refused = errno;	/* result not written yet */
			to_commit[k++] = j;
		} else
			flushing[nflushing++] = j;
	}
	ncommit = k;
	/* what the filesystem refused: again at the rescan interval */
	commit_due_ms = wk.now + wk.sp.cfg.rescan_ms;
	if (nflushing == 0)
		return;
	switch (flusher_begin()) {
	case 1:
		return;		/* run_flush_done finishes it */
	case -1:
		flush_failed(errno);
		return;
	}
	commit_finish();
}

void
run_flush_done(void)
{
	if (flusher_end() < 0)
		flush_failed(errno);
	else
		commit_finish();
}

static struct job *
job_of_pid(pid_t pid)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->pid == pid && wk.jobs[i]->state != J_PENDING)
			return wk.jobs[i];
	return NULL;
}

/* Tasks reaped, their results not made yet (run_reap, run_settle). */
static struct reaped {
	struct job *j;
	int	status;
	struct rusage ru;
} *unsettled;
static size_t nunsettled;

/*
 * Given up.  SIGKILL ends a process only when it leaves the kernel: one
 * stuck in a call that waits uninterruptibly (state D: a hung NFS or
 * FUSE server, a dead device) keeps it pending, maybe for ever, and a
 * worker that waited to reap it kept its task running for ever, its
 * walltime, cancel and revocation without effect, and never left when
 * told to (in a batch job: until the batch system's SIGKILL, then found
 * lost).  So a main process not reaped wk.unkillable_ms after the
 * task's first SIGKILL (as Slurm's UnkillableStepTimeout) is given up:
 * the attempt ends as the kill would have ended it (its reason; signal
 * 9; handed back or dropped where that was the kill's end), its result
 * saying so, while the process is left as the stuck leftover of an
 * ended task: its GPUs kept (limits.c, gpu_hold), its cgroup removed
 * once it is empty, named as the worker leaves, swept by the next
 * worker.  Its SIGKILL is delivered before it runs any user code, so
 * the task may run again elsewhere.  Unreaped, its pid cannot be reused:
 * when it ends at last it is reaped here, given_up_reaped, and is no
 * task's.
 */
static struct given_up {
	pid_t	pid;
	uint64_t id;
	uint32_t attempt;
} *given_up;
static size_t ngiven_up;

/* SIGKILL to all of j; the first one starts the count to giving up */
static void
sigkill(struct job *j)
{
	limits_signal(j, SIGKILL);
	j->kill_at_ms = 0;
	if (j->killed_ms == 0)
		j->killed_ms = wk.now;
}

/* when j's main process is given up: UINT64_MAX never */
static uint64_t
unkillable_at(const struct job *j)
{
	if (!job_live(j) || j->killed_ms == 0 || wk.unkillable_ms == 0)
		return UINT64_MAX;
	return j->killed_ms + wk.unkillable_ms;
}

static void
give_up(struct job *j)
{
	struct rusage ru;
	char after[32], how[128], *why, state;

	if (wk.unkillable_ms % 1000)
		snprintf(after, sizeof after, "%" PRIu64 " ms",
		    wk.unkillable_ms);
	else
		snprintf(after, sizeof after, "%" PRIu64 " s",
		    wk.unkillable_ms / 1000);
	state = ptree_kernel_wait(j->pid, how, sizeof how);
	if (state == 'Z' || state == 'X')
		return;	/* it ended just now: reaped in this pass (SIGCHLD) */
	why = xasprintf("its process %ld did not end %s after SIGKILL (stuck "
	    "in the kernel: %s); given up", (long)j->pid, after, how);
	msg_warn("task %" PRIu64 " attempt %u: its process %ld did not end %s "
	    "after SIGKILL (stuck in the kernel: %s); giving it up: the "
	    "attempt ends as killed (%s), the process is left as an ended "
	    "task's", j->id, j->attempt, (long)j->pid, after, how,
	    j->revoked ? "revoked: nothing committed" : j->handback ?
	    "handed back" : "committed");
	/* (its times and peak so far, as wait4 would give them) */
	if (ptree_usage(j->pid, &ru) < 0)
		msg_warn("read: /proc/%ld: %m (task %" PRIu64 " attempt %u: "
		    "its CPU times and maxrss are not known: 0)", (long)j->pid,
		    j->id, j->attempt);
	given_up = xreallocarray(given_up, ngiven_up + 1, sizeof *given_up);
	given_up[ngiven_up++] = (struct given_up){ j->pid, j->id, j->attempt };
	j->end = now_unix();
	res_release_slot(j);
	reaped(j, W_EXITCODE(0, SIGKILL), &ru, why);
	free(why);
}

/* pid's index in given_up[], ngiven_up if none */
static size_t
given_up_at(pid_t pid)
{
	size_t i;

	for (i = 0; i < ngiven_up && given_up[i].pid != pid; i++)
		;
	return i;
}

int
run_given_up(pid_t pid)
{
	return given_up_at(pid) < ngiven_up;
}

size_t
run_given_up_count(void)
{
	return ngiven_up;
}

/* pid, reaped, was given up: it is no task's any more */
static int
given_up_reaped(pid_t pid)
{
	size_t i = given_up_at(pid);

	if (i == ngiven_up)
		return 0;
	msg_info("task %" PRIu64 " attempt %u: its process %ld, given up, "
	    "ended at last", given_up[i].id, given_up[i].attempt, (long)pid);
	given_up[i] = given_up[--ngiven_up];
	return 1;
}

/*
 * Reap everything that ended.  Orphans of tasks (we are a subreaper)
 * are counted to their task first, so that a tree that died at once
 * has its CPU time in the result written for its main process.  A
 * task's cores, memory and slot are free from here: the next task may
 * start before its result is made (its cgroup's reads, the kill of what
 * is left of it, the record), which run_settle does, in the same pass
 * of the loop; a slot waits between two tasks only for what the next
 * one's start needs.  Its GPUs are free once nothing of it is left
 * (limits_reaped).
 */
void
run_reap(void)
{
	struct job *j;
	pid_t pid;
	int status;
	struct rusage ru;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (guard_reaped(pid, status))
			continue;
		guard_forget(pid);
		if (given_up_reaped(pid))
			continue;
		if ((j = job_of_pid(pid)) == NULL) {
			if (!spare_reaped(pid))
				limits_orphan_reaped(pid, &ru);
			continue;
		}
		j->end = now_unix();
		res_release_slot(j);	/* its GPUs: limits_reaped */
		unsettled = xreallocarray(unsettled, nunsettled + 1,
		    sizeof *unsettled);
		unsettled[nunsettled++] = (struct reaped){ j, status, ru };
	}
}

void
run_settle(void)
{
	size_t i;

	for (i = 0; i < nunsettled; i++)
		reaped(unsettled[i].j, unsettled[i].status, &unsettled[i].ru,
		    NULL);
	nunsettled = 0;
}

/*
 * The group commit of what ended (also what fail_start queued), when it
 * is due: the window is over; or, for fresh outcomes, nothing runs any
 * more, the worker leaves, or the batch is large.  Outcomes refused
 * before wait for their time whatever else.  The loop starts the next
 * tasks first.
 */
void
run_commit_pending(void)
{
	size_t i;

	if (ncommit == 0 || flusher_busy())
		return;
	if (wk.now < commit_due_ms) {
		for (i = 0; i < ncommit && to_commit[i]->refused; i++)
			;	/* (without retries: stops at the first) */
		if (i == ncommit)
			return;	/* only refused ones: at their time */
		if (!wk.draining && !wk.stopping && ncommit < COMMIT_BATCH_MAX)
			for (i = 0; i < wk.njobs; i++)
				if (job_live(wk.jobs[i]))
					return;	/* another task still runs */
	}
	commit_start();
}

/*
 * Leaving.  A worker told to leave (SIGTERM or SIGINT, past --grace;
 * its walltime ending) must be gone before the batch system's SIGKILL
 * (Slurm's KillWait, 30 s by default), whatever its filesystem does:
 * waiting for a commit the filesystem keeps refusing, it stayed until
 * that SIGKILL, and spoold found it lost a lost-timeout later, the
 * attempt counted against max-requeues.  So what is refused is tried
 * once more at once, and what is refused again is left in running/:
 * the worker says so, marks itself exited, and spoold takes those
 * attempts back at once as an exited worker's, keeps their work
 * directories in attempts/ as a hand-back's, and runs them again
 * (workers.c: worker_exited, keep_revoked).
 */
void
run_leaving(void)
{
	size_t i;

	for (i = 0; i < ncommit; i++)
		to_commit[i]->refused = 0;	/* fresh: committed at once */
	commit_due_ms = wk.now;
}

size_t
run_left_behind(void)
{
	size_t i, n = 0;

	if (!wk.leaving || flusher_busy())
		return 0;
	for (i = 0; i < ncommit; i++)
		n += to_commit[i]->refused != 0;
	return n;
}

size_t
run_leave_behind(void)
{
	struct buf b = BUF_INIT;
	struct job *j;
	size_t i, n = run_left_behind();

	if (n == 0)
		return 0;
	for (i = 0; i < ncommit; i++) {
		j = to_commit[i];
		if (j->refused)
			buf_printf(&b, "%stask %" PRIu64 " attempt %u (%s)",
			    b.len ? ", " : "", j->id, j->attempt,
			    strerror(j->refused));
	}
	msg_warn("leaving %zu outcome%s uncommitted, refused by the "
	    "filesystem: %s; spoold takes %s back from workers/%s/running/ "
	    "and runs %s again", n, n == 1 ? "" : "s", b.p, n == 1 ? "it" :
	    "them", wk.wid, n == 1 ? "it" : "them");
	buf_free(&b);
	wk.exit_status = EXIT_TEMPFAIL;	/* it did not leave cleanly */
	return n;
}

void
run_kill(struct job *j, enum result_reason why, int immediately)
{
	if (j->state == J_PENDING || j->pid <= 0)
		return;
	if (j->why_killed == RR_EXIT)
		j->why_killed = why;
	if (immediately || wk.grace_ms == 0)
		sigkill(j);
	else if (j->state == J_RUNNING) {
		/*
		 * SIGCONT after it, as systemd does: a stopped process
		 * (kill -STOP, a debugger's pause, SIGTSTP) only holds
		 * SIGTERM pending, and would meet the SIGKILL without
		 * having run its handler (a checkpoint, a clean exit).
		 */
		limits_signal(j, SIGTERM);
		limits_signal(j, SIGCONT);
		j->kill_at_ms = wk.now + wk.grace_ms;
	}
	j->state = J_ENDING;
}

void
run_deadlines(void)
{
	struct job *j;
	size_t i;

	release_holds();
	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		if (j->state == J_RUNNING && j->deadline_ms &&
		    wk.now >= j->deadline_ms) {
			msg_info("task %" PRIu64 " attempt %u: walltime reached",
			    j->id, j->attempt);
			run_kill(j, RR_WALLTIME, 0);
		} else if (j->state == J_ENDING && j->kill_at_ms &&
		    wk.now >= j->kill_at_ms)
			sigkill(j);
	}
	/* (from the end: the outcome of a revoked one is dropped, and the
	 * job removed, at once) */
	for (i = wk.njobs; i-- > 0;)
		if (unkillable_at(wk.jobs[i]) <= wk.now)
			give_up(wk.jobs[i]);
}

uint64_t
run_next_deadline(void)
{
	uint64_t next = limits_next();
	struct job *j;
	size_t i;

	/* (while a flush runs, its end wakes the loop: flusher_fd) */
	if (ncommit && !flusher_busy() && commit_due_ms < next)
		next = commit_due_ms;
	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		if (j->state == J_RUNNING && j->deadline_ms &&
		    j->deadline_ms < next)
			next = j->deadline_ms;
		if (j->state == J_ENDING && j->kill_at_ms && j->kill_at_ms < next)
			next = j->kill_at_ms;
		if (j->hold_until_ms && j->hold_until_ms < next)
			next = j->hold_until_ms;
		if (unkillable_at(j) < next)
			next = unkillable_at(j);
	}
	return next;
}

void
run_check_revoked(void)
{
	struct stat st;
	struct job *j;
	size_t i;

	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		/* (one that ended finds out when its commit finds nothing) */
		if (j->state == J_PENDING || j->revoked || j->pid <= 0)
			continue;
		if (fsop_stat(wk.subfd[WS_RUNNING], j->name, &st) < 0 &&
		    errno == ENOENT) {
			msg_warn("task %" PRIu64 " attempt %u was revoked by "
			    "spoold; stopping it", j->id, j->attempt);
			j->revoked = 1;
			sigkill(j);
		}
	}
}

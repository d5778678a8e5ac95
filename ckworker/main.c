/*
 * ckworker - run the tasks spoold places on this worker.  See ckworker(1).
 *
 * One event loop: poll(signalfd, the flusher, inotify) with a deadline.
 *
 *   start       find what the worker may use (resources.c: options,
 *               then the batch job, then the machine), set up the
 *               memory method (limits.c), register
 *   heartbeat   publish status (beat counter, load); check that the
 *               spool and our directory still exist, that spoold did
 *               not declare us lost, and that spoold itself beats
 *   inbox       read new assignments; start what fits, bound to its
 *               cores and limited (limits.c)
 *   cancel      stop tasks spoold asks us to stop
 *   running     a running/ID.ATT that vanished was revoked: kill it
 *   watch       every sample interval: memory of each task, its
 *               process tree, GPU load (limits.c)
 *   SIGCHLD     reap, write results, group commit (its syncfs in the
 *               flusher's thread: flusher.c)
 *
 * Leaving:
 *   SIGTERM/SIGINT  drain: unstarted tasks are handed back at once;
 *                   running ones may go on for --grace (default 0),
 *                   then are stopped and handed back; then exit 0
 *                   (111 if outcomes whose commit the filesystem
 *                   refused are left: run.c, run_leaving).
 *   idle            nothing to do for --idle-timeout: exit 0.
 *   our walltime    --walltime, or the batch job's end: spoold places
 *                   nothing that cannot end WORKER_END_MARGIN_S before
 *                   it, the worker starts nothing that cannot (inbox.c);
 *                   at that margin, it drains and hands back what
 *                   still runs.
 *   spoold gone     its lease did not beat for --death-timeout: drain
 *                   as on SIGTERM, but let running tasks finish.
 *   lost / gone     spoold declared us lost, or our directory or the
 *                   spool vanished: kill everything, commit nothing,
 *                   exit 111.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "beatfile.h"
#include "command.h"
#include "flusher.h"
#include "fsop.h"
#include "journal.h"
#include "lease.h"
#include "msg.h"
#include "units.h"
#include "version.h"
#include "worker.h"

struct ckworker wk;

#define RESCAN_MIN_MS		10
#define UNSET			UINT64_MAX	/* option not given */
#define DRAIN_MARGIN_MS		(WORKER_END_MARGIN_S * 1000)
#define BATCH_QUERY_MS		10000	/* squeue, qstat, bjobs */
#define SIGNAL_WAIT_MS		1000	/* --signal-wait (run.c, the hold) */
#define UNKILLABLE_MS		60000	/* --unkillable-timeout (run.c,
					 * give_up), as Slurm's default */

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: ckworker [-S SPOOL] [--cores N] [--cpus LIST] [--processes P]\n"
	    "                [--memory SIZE] [--gpus N] [--gpu-ids LIST]\n"
	    "                [--memory-limit METHOD] [--cpu-limit METHOD]\n"
	    "                [--gpu-limit METHOD] [--walltime D]\n"
	    "                [--batch KIND] [--job ID] [--name NAME]\n"
	    "                [--idle-timeout D] [--death-timeout D] [--grace D]\n"
	    "                [--kill-grace D] [--unkillable-timeout D]\n"
	    "                [--signal-wait D] [--sample-interval D]\n"
	    "                [--no-inotify] [-v]\n"
	    "       ckworker --print-resources [options]\n"
	    "       ckworker --version\n"
	    "Register as a worker of SPOOL (default $SPOOL) and run the tasks\n"
	    "spoold places here.  See ckworker(1).\n");
	exit(status);
}

static uint64_t
opt_ms(const char *opt, const char *arg)
{
	const char *why;
	uint64_t ms;

	if (units_parse_ms(arg, &ms, &why) < 0)
		msg_fatal_status(EXIT_USAGE, "%s %s: %s", opt, arg, why);
	return ms;
}

/* --memory-limit, --cpu-limit, --gpu-limit */
static void
limit_opt(struct res_opts *o, enum limit_kind k, const char *arg)
{
	char why[128];

	if ((o->limit[k] = config_limit_method(k, arg, why, sizeof why)) ==
	    NULL)
		msg_fatal_status(EXIT_USAGE, "--%s %s: %s", limit_key[k],
		    journal_q(arg), why);
	snprintf(o->limit_said[k], sizeof o->limit_said[k], "--%s %s",
	    limit_key[k], o->limit[k]);
}

/*
 * The limit methods not given as options from the spool's spool.yaml
 * (worker:), so that an administrator sets them once for every worker
 * of the spool, however it is started (spoold --local, a batch job, by
 * hand).
 */
static void
limits_of_spool(struct res_opts *o, const struct config *c)
{
	int k;

	for (k = 0; k < LIMIT_N; k++)
		if (o->limit[k] == NULL && c->worker_limit[k]) {
			o->limit[k] = c->worker_limit[k];
			snprintf(o->limit_said[k], sizeof o->limit_said[k],
			    "%s worker: %s: %s", CONFIG_FILE, limit_key[k],
			    o->limit[k]);
		}
}

static void
parse_args(int argc, char **argv, const char **spool, struct res_opts *o,
    int *print)
{
	static const struct option opts[] = {
		{ "spool", required_argument, NULL, 'S' },
		{ "cores", required_argument, NULL, 'c' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "processes", required_argument, NULL, 'p' },
		{ "memory", required_argument, NULL, 'm' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "gpu-ids", required_argument, NULL, 'U' },
		{ "memory-limit", required_argument, NULL, 'M' },
		{ "cpu-limit", required_argument, NULL, 'L' },
		{ "gpu-limit", required_argument, NULL, 'Y' },
		{ "walltime", required_argument, NULL, 'w' },
		{ "batch", required_argument, NULL, 'B' },
		{ "job", required_argument, NULL, 'J' },
		{ "name", required_argument, NULL, 'n' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "death-timeout", required_argument, NULL, 'd' },
		{ "grace", required_argument, NULL, 'G' },
		{ "kill-grace", required_argument, NULL, 'K' },
		{ "unkillable-timeout", required_argument, NULL, 'u' },
		{ "signal-wait", required_argument, NULL, 'W' },
		{ "sample-interval", required_argument, NULL, 's' },
		{ "print-resources", no_argument, NULL, 'P' },
		{ "no-inotify", no_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const kinds[] = { "auto", "none", "slurm", "sge",
	    "pbs", "lsf", NULL };
	const char *why;
	uint64_t v;
	int c, k;

	while ((c = getopt_long(argc, argv, "S:c:m:g:w:n:vhV", opts,
	    NULL)) != -1) {
		switch (c) {
		case 'S':
			*spool = optarg;
			break;
		case 'c':
		case 'p':
			if (units_parse_uint(optarg, TASK_CORES_MAX, &v, &why) < 0 ||
			    v == 0)
				msg_fatal_status(EXIT_USAGE, "--%s %s: %s",
				    c == 'c' ? "cores" : "processes",
				    journal_q(optarg),
				    v == 0 ? "at least 1" : why);
			if (c == 'c')
				o->cores = (long)v;
			else
				o->processes = (long)v;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'm':
			if (units_parse_size(optarg, &o->memory, &why) < 0 ||
			    o->memory == 0)
				msg_fatal_status(EXIT_USAGE, "--memory %s: %s",
				    journal_q(optarg),
				    o->memory == 0 ? "more than 0" : why);
			break;
		case 'g':
			if (units_parse_uint(optarg, TASK_GPUS_MAX, &v, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--gpus %s: %s",
				    journal_q(optarg), why);
			o->gpus = (long)v;
			break;
		case 'U':
			o->gpu_ids = optarg;
			break;
		case 'M':
			limit_opt(o, LIMIT_MEMORY, optarg);
			break;
		case 'L':
			limit_opt(o, LIMIT_CPU, optarg);
			break;
		case 'Y':
			limit_opt(o, LIMIT_GPU, optarg);
			break;
		case 'w':
			if (units_parse_duration(optarg, &o->walltime_s, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--walltime %s: %s",
				    journal_q(optarg), why);
			break;
		case 'B':
			for (k = 0; kinds[k] && strcmp(kinds[k], optarg); k++)
				;
			if (kinds[k] == NULL)
				msg_fatal_status(EXIT_USAGE, "--batch %s: use auto, "
				    "none, slurm, sge, pbs or lsf",
				    journal_q(optarg));
			o->batch = optarg;
			break;
		case 'J':
			if (!task_name_ok(optarg))
				msg_fatal_status(EXIT_USAGE, "--job %s: use "
				    "[A-Za-z0-9_.+@:-]", journal_q(optarg));
			o->job = optarg;
			break;
		case 'n':
			if (!task_name_ok(optarg))
				msg_fatal_status(EXIT_USAGE, "--name %s: use "
				    "[A-Za-z0-9_.+@:-], at most %d characters",
				    journal_q(optarg), TASK_NAME_MAX);
			snprintf(wk.info.name, sizeof wk.info.name, "%s", optarg);
			break;
		case 'i':
			wk.idle_timeout_ms = opt_ms("--idle-timeout", optarg);
			break;
		case 'd':
			wk.death_timeout_ms = opt_ms("--death-timeout", optarg);
			wk.death_timeout_given = 1;
			break;
		case 'G':
			wk.drain_grace_ms = opt_ms("--grace", optarg);
			break;
		case 'K':
			wk.grace_ms = opt_ms("--kill-grace", optarg);
			break;
		case 'u':
			wk.unkillable_ms = opt_ms("--unkillable-timeout", optarg);
			break;
		case 'W':
			wk.signal_wait_ms = opt_ms("--signal-wait", optarg);
			break;
		case 's':
			if ((o->sample_ms = opt_ms("--sample-interval",
			    optarg)) < 10 || o->sample_ms > 60000)
				msg_fatal_status(EXIT_USAGE, "--sample-interval "
				    "%s: between 10ms and 60s",
				    journal_q(optarg));
			break;
		case 'P':
			*print = 1;
			break;
		case 'I':
			setenv("CKSPOOL_NO_INOTIFY", "1", 1);
			break;
		case 'v':
			msg_verbose(1);
			break;
		case 'h':
			usage(0);
			break;
		case 'V':
			printf("ckspool %s\n", CKSPOOL_VERSION);
			exit(0);
		default:
			usage(EXIT_USAGE);
		}
	}
	if (optind != argc)
		usage(EXIT_USAGE);
}

void
status_write(void)
{
	static struct worker_status st;	/* large: not on the stack */
	struct buf b = BUF_INIT;
	struct job *j;
	size_t i;

	memset(&st, 0, sizeof st);
	/* so that spoold can stop them if this process dies (run.c) */
	for (i = 0; i < wk.njobs && st.npgroups < WDIR_PGROUPS_MAX; i++) {
		j = wk.jobs[i];
		if (j->state == J_PENDING || j->pid <= 0)
			continue;
		if (j->pstart == 0)
			j->pstart = host_pid_start((long)j->pid);
		st.pgroup[st.npgroups][0] = (uint64_t)j->pid;
		st.pgroup[st.npgroups++][1] = j->pstart;
	}
	for (i = 0; i < wk.njobs && st.nmem < WDIR_TASKMEM_MAX; i++) {
		j = wk.jobs[i];
		if (j->state == J_PENDING || j->mem_now == 0)
			continue;
		st.mem[st.nmem][0] = j->id;
		st.mem[st.nmem][1] = j->attempt;
		st.mem[st.nmem++][2] = j->mem_now;
	}
	st.beat = ++wk.beat;
	st.time = now_unix();
	for (i = 0; i < wk.njobs; i++)
		st.running += wk.jobs[i]->state != J_PENDING;
	st.cores_used = wk.cores_used;
	st.memory_used = wk.mem_used;
	st.gpus_used = wk.gpus_used;
	st.gpus_held = wk.gpus_held;
	st.draining = wk.draining;
	st.late = wk.late;
	wstatus_encode(&b, &st);
	if (beatfile_write(wk.sp.fd[SD_TMP], wk.dirfd, "status", &b) < 0)
		msg_once("status", "write: workers/%s/status: %m", wk.wid);
	else
		msg_clear("status");
	buf_free(&b);
}

void
start_drain(const char *why, int stop_running)
{
	size_t i;

	if (!wk.draining) {
		msg_info("draining (%s): handing back what has not started",
		    why);
		wk.draining = 1;
		wk.drain_why = why;
		journal_worker(wk.wid, "drain", "why=%s", journal_q(why));
		status_write();	/* first: it tells spoold why (finish.c) */
		inbox_hand_back_pending();
	}
	if (stop_running) {
		wk.leaving = 1;
		run_leaving();
		/* (not one that ended: its outcome is committed as it is) */
		for (i = 0; i < wk.njobs; i++)
			if (wk.jobs[i]->state == J_RUNNING &&
			    wk.jobs[i]->pid > 0) {
				wk.jobs[i]->handback = 1;
				run_kill(wk.jobs[i], RR_WORKER_LOST, 0);
			}
	}
	wk.stopping = 1;
}

/* Spoold declared us lost, or the spool went away: leave now. */
static void
abandon(const char *why)
{
	size_t i, n = 0;

	/* (those that still run: not the pending, nor the ended ones
	 * waiting for their commit) */
	for (i = 0; i < wk.njobs; i++)
		n += job_live(wk.jobs[i]);
	msg_warn("%s: killing %zu task%s and leaving without committing",
	    why, n, n == 1 ? "" : "s");
	journal_worker(wk.wid, "abandon", "why=%s", journal_q(why));
	limits_kill_all();
	spare_drop();
	guard_stop();
	limits_leave();
	exit(EXIT_TEMPFAIL);
}

static int
has(int dfd, const char *name)
{
	struct stat st;

	return fsop_stat(dfd, name, &st) == 0;
}

/*
 * Proven absent: only ENOENT or ENOTDIR prove it.  ESTALE, EIO or
 * EINTR from a network filesystem prove nothing: asked again at the
 * next beat.
 */
static int
gone(int dfd, const char *name)
{
	struct stat st;

	return fsop_stat(dfd, name, &st) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR);
}

/*
 * The lease names the daemon: keys of spool.yaml that only a restart of
 * spoold applies, as its holder runs with them.  Where this worker has
 * others (a reload spoold refused, a file changed since spoold started,
 * a spoold restarted with a new one), it follows spoold's: its beats
 * must come within spoold's lost-timeout, its death timeout measure
 * spoold's beats, and its results be flushed as spoold's records are.
 * Said once a holder; shared, which set the modes of what it made
 * since its start, is said but not followed.
 */
static void
follow_spoold(const struct owner_info *o)
{
	struct buf b = BUF_INIT;

	if (strcmp(o->nonce, wk.followed) == 0)
		return;
	snprintf(wk.followed, sizeof wk.followed, "%s", o->nonce);
	if (owner_config_diff(o, &wk.sp.cfg, "this worker", &b) == 0) {
		buf_free(&b);
		return;
	}
	msg_warn("spoold (pid %ld on %s) runs with %s, which only its "
	    "restart applies: following spoold's%s%s", o->pid, o->host, b.p,
	    wk.death_timeout_given && o->death_timeout_ms !=
	    wk.sp.cfg.death_timeout_ms ? " (the death timeout of "
	    "--death-timeout stays)" : "", o->shared != wk.sp.cfg.shared ?
	    "; not daemon: shared, which a running worker cannot change: "
	    "restart spoold, or put spool.yaml back" : "");
	buf_free(&b);
	wk.sp.cfg.heartbeat_ms = o->heartbeat_ms;
	wk.sp.cfg.lost_timeout_ms = o->lost_timeout_ms;
	wk.sp.cfg.death_timeout_ms = o->death_timeout_ms;
	if (!wk.death_timeout_given)
		wk.death_timeout_ms = o->death_timeout_ms;
	wk.sp.cfg.fsync = o->fsync;
	fsop_set_sync(o->fsync);
}

static void
heartbeat(void)
{
	static char gone_why[192];	/* kept: start_drain keeps it */
	char cause[128];
	struct owner_info o;
	uint64_t beat;
	int i, local, rc;

	if (!spool_alive(&wk.sp))
		abandon("the spool is gone");
	if (gone(wk.sp.fd[SD_WORKERS], wk.wid)) {
		/*
		 * Was the whole spool removed?  A network filesystem may
		 * still show its entries from its cache for a second or so
		 * (sshfs entry_timeout, NFS actimeo): look again for a
		 * moment before naming the cause.
		 */
		for (i = 0; i < 15 && spool_alive(&wk.sp); i++)
			(void)poll(NULL, 0, 100);
		if (!spool_alive(&wk.sp))
			abandon("the spool is gone");
		if (gone(wk.sp.fd[SD_WORKERS], wk.wid))
			abandon("my worker directory is gone");
		msg_info("my worker directory was missing for a moment "
		    "(a cached lookup?); it is there: going on");
	}
	if (has(wk.dirfd, "lost")) {
		wk.lost = 1;
		abandon("spoold declared this worker lost");
	}
	status_write();
	run_disk_check();
	local = 0;
	rc = lease_holder(&wk.sp, &o, &beat);
	if (rc == 2) {
		/* each a beat not seen: enough of them are spoold gone
		 * (--death-timeout) */
		if (beatfile_failed(&wk.beat_fails, errno, 0))
			msg_warn("read: lock/spoold/beat: %s; spoold's beats "
			    "are not seen", beatfile_strerror(errno));
	} else if (rc >= 0) {	/* read, or no lease: a new count */
		if (beatfile_read_again(&wk.beat_fails) && rc == 1)
			msg_info("lock/spoold/beat: read again");
	}
	if (rc > 0) {
		/*
		 * A new spoold counts its beats from 0 again: a count that
		 * meets the last one read is still a beat when the holder
		 * changed (its nonce), or a restart costs a read interval
		 * (across hosts a second or more) of the death timeout.
		 */
		follow_spoold(&o);
		if (beat != wk.spoold_beat ||
		    strcmp(o.nonce, wk.spoold_nonce) != 0) {
			if (wk.spoold_nonce[0] &&
			    strcmp(o.nonce, wk.spoold_nonce) != 0)
				msg_info("spoold changed: now pid %ld on %s",
				    o.pid, o.host);
			snprintf(wk.spoold_nonce, sizeof wk.spoold_nonce, "%s",
			    o.nonce);
			wk.spoold_beat = beat;
			wk.spoold_seen = wk.now;
		}
		local = strcmp(o.host, wk.info.host) == 0 &&
		    strcmp(o.boot, wk.info.boot) == 0;
	}
	if (local != wk.spoold_local) {
		msg_debug("spoold runs %s", local ? "on this host" :
		    "elsewhere (or is not known)");
		wk.spoold_local = local;
		wk.rescan_ms = RESCAN_MIN_MS;	/* (see loop) */
		wk.next_rescan = wk.now;
	}
	/* --death-timeout 0: never leave because spoold is gone */
	if (wk.death_timeout_ms &&
	    wk.now - wk.spoold_seen > wk.death_timeout_ms && !wk.draining) {
		snprintf(gone_why, sizeof gone_why, "spoold has not beaten for "
		    "the death timeout%s", beatfile_cause(&wk.beat_fails,
		    "beat", cause, sizeof cause));
		start_drain(gone_why, 0);
	}
	if (wk.ends_ms && wk.now + DRAIN_MARGIN_MS >= wk.ends_ms &&
	    !wk.draining)
		start_drain("the worker's walltime is ending", 1);
}

static void
read_signals(void)
{
	struct signalfd_siginfo si;

	while (read(wk.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			/* the next tasks first, then the results of those
			 * that ended (run_reap), then their cgroups: into
			 * the pool for the task after (limits_settle).  A
			 * burst of short tasks stays in this loop, so this
			 * is the only settling it gets until it is over. */
			run_reap();
			wk.now = now_ms();
			inbox_start_ready();
			run_settle();
			limits_settle();
			break;
		case SIGTERM:
		case SIGINT:
			run_signalled();
			if (wk.drain_grace_ms) {
				start_drain("signal", 0);
				if (!wk.drain_deadline)
					wk.drain_deadline = wk.now +
					    wk.drain_grace_ms;
			} else
				start_drain("signal", 1);
			break;
		}
	}
}

static void
on_event(void *arg, void *cookie, const char *name, uint32_t mask)
{
	(void)arg;
	(void)name;
	(void)mask;
	if (cookie == NULL)
		wk.inbox_dirty = wk.cancel_dirty = wk.running_dirty = 1;
	else
		*(int *)cookie = 1;
}

/*
 * A death timeout that a beat seen late can pass drains the worker
 * while spoold is well (config_death_timeout_least).  Said once, at the
 * start; 0 (never leave) is not short.
 */
static void
death_timeout_check(void)
{
	uint64_t least = config_death_timeout_least(&wk.sp.cfg);

	if (wk.death_timeout_ms == 0 || wk.death_timeout_ms >= least)
		return;
	msg_warn("death timeout %" PRIu64 " ms is under twice spoold's "
	    "heartbeat plus %d ms for a beat seen late on shared storage "
	    "(%" PRIu64 " ms): a slow or remote filesystem, or a spoold "
	    "restart, will make this worker leave while spoold is well",
	    wk.death_timeout_ms, BEAT_LATE_MS, least);
}

/* the spool, and the limit methods its spool.yaml gives o */
static void
open_spool(const char *spool, struct res_opts *o)
{
	char why[512];

	if (spool_open(&wk.sp, spool, why, sizeof why) < 0)
		msg_fatal("%s", why);
	if (realpath(wk.sp.root, wk.root) == NULL)
		msg_fatal("realpath: %s: %m", wk.sp.shown);
	limits_of_spool(o, &wk.sp.cfg);
}

static void
setup(const struct res_opts *o)
{
	struct owner_info lo;
	uint64_t beat;
	char why[512], ends[32];
	sigset_t set;
	int i;

	if (wk.info.name[0] == 0)
		snprintf(wk.info.name, sizeof wk.info.name, "%s", host_name());
	if (wk.death_timeout_ms == UNSET)
		wk.death_timeout_ms = wk.sp.cfg.death_timeout_ms;
	if (lease_holder(&wk.sp, &lo, &beat) > 0)
		follow_spoold(&lo);
	if (wk.grace_ms == UNSET)
		wk.grace_ms = 5000;
	if (wk.signal_wait_ms == UNSET)
		wk.signal_wait_ms = SIGNAL_WAIT_MS;
	if (wk.unkillable_ms == UNSET)
		wk.unkillable_ms = UNKILLABLE_MS;
	death_timeout_check();

	/*
	 * Blocked before the resources are found: NVML and the CUDA runtime
	 * start threads of their own when gpu.c loads them, and a thread
	 * that does not block these signals takes them from the signalfd
	 * (a SIGCHLD lost: a task's end never seen; a SIGTERM: the worker
	 * killed instead of handing back).  Threads inherit the mask of the
	 * thread that makes them.  The batch queries reap by pid, so a
	 * blocked SIGCHLD does not disturb them.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		msg_fatal("sigprocmask: %m");
	signal(SIGPIPE, SIG_IGN);
	res_setup(o, 0);
	if (wk.method == LM_WATCHDOG)
		msg_warn("memory limits are enforced by a watchdog sampling "
		    "every %" PRIu64 " ms: a task can exceed its limit by what "
		    "it allocates in that time", wk.sample_ms);
	else if (wk.method == LM_NONE)
		msg_warn("memory limits are not enforced (%s)",
		    o->limit_said[LIMIT_MEMORY]);
	snprintf(wk.info.host, sizeof wk.info.host, "%s", host_name());
	snprintf(wk.info.boot, sizeof wk.info.boot, "%s", host_boot_id());
	wk.info.pid = (long)getpid();
	wk.info.pstart = host_pid_start(wk.info.pid);
	fsop_tmpname(wk.info.nonce, sizeof wk.info.nonce, NULL);

	if ((wk.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		msg_fatal("signalfd: %m");
	if (flusher_start(wk.sp.rootfd, why, sizeof why) < 0)
		msg_fatal("%s", why);

	if ((wk.dirfd = wdir_create(&wk.sp, &wk.info, wk.wid,
	    sizeof wk.wid)) < 0)
		msg_fatal("register: workers/%s-*: %m", wk.info.name);
	guard_start();
	for (i = 0; i < WS_NSUB; i++)
		if ((wk.subfd[i] = fsop_opendir(wk.dirfd, wdir_sub_name[i])) < 0)
			msg_fatal("open: workers/%s/%s: %m", wk.wid,
			    wdir_sub_name[i]);
	if (watch_open(&wk.watch, -1) < 0)
		msg_warn("inotify_init: %m (rescans only)");
	if (watch_add(&wk.watch, wk.dirfd, "inbox", IN_MOVED_TO,
	    &wk.inbox_dirty) < 0 ||
	    watch_add(&wk.watch, wk.dirfd, "cancel", IN_CREATE | IN_MOVED_TO,
	    &wk.cancel_dirty) < 0 ||
	    watch_add(&wk.watch, wk.dirfd, "running", IN_MOVED_FROM |
	    IN_DELETE, &wk.running_dirty) < 0)
		msg_warn("inotify_add_watch: %m (rescans only)");
	else
		wk.watching = watch_enabled(&wk.watch);
	wk.now = now_ms();
	wk.spoold_seen = wk.idle_since = wk.now;
	status_write();
	msg_info("registered as %s: %u cores (CPUs %s), %" PRIu64 " MiB, %u "
	    "GPUs, %u slots, memory limits by %s, CPUs by %s%s%s%s%s%s%s, "
	    "ckspool %s", wk.wid, wk.info.cores, wk.info.cpus,
	    wk.info.memory >> 20, wk.info.gpus, wk.info.slots,
	    limit_method_name[wk.method], cpu_method_name[wk.cpu_method],
	    wk.gpus.n ? ", GPUs by " : "", wk.gpus.n ?
	    gpu_method_name[wk.gpu_method] : "", wk.info.job[0] ?
	    ", batch job " : "", wk.info.job, wk.ends_ms ? ", ends in " : "",
	    wk.ends_ms ? units_format_duration((wk.ends_ms - wk.now) / 1000,
	    ends, sizeof ends) : "", CKSPOOL_VERSION);
	if (journal_open(&wk.sp, "ckworker") < 0)
		msg_warn("journal: %s/journal: %m (no event journal)",
		    wk.sp.shown);
}

/* Jobs left, but those a leaving worker leaves (run_left_behind). */
static int
busy(void)
{
	return wk.njobs > run_left_behind();
}

static void
leave(void)
{
	struct buf why = BUF_INIT;
	char left[40] = "";
	size_t n;

	spare_drop();
	guard_stop();
	limits_leave();
	if ((n = run_leave_behind()) > 0)
		snprintf(left, sizeof left, " uncommitted=%zu", n);
	wk.draining = 1;
	status_write();	/* before the hand-backs (finish.c in spoold) */
	inbox_hand_back_pending();
	/* why, for spoold: a fixed pool does not replace an idle leaver */
	if (wk.left_idle)
		rec_put_word(&why, "why", WDIR_EXITED_IDLE);
	if (fsop_publish(wk.sp.fd[SD_TMP], wk.dirfd, "exited", why.p, why.len,
	    0600, 0) < 0)
		msg_warn("write: workers/%s/exited: %m", wk.wid);
	buf_free(&why);
	(void)fsop_barrier(wk.sp.rootfd);
	msg_info("exiting%s%s", wk.drain_why ? ": " : "",
	    wk.drain_why ? wk.drain_why : "");
	journal_worker(wk.wid, "exit", "why=%s%s", journal_q(wk.drain_why ?
	    wk.drain_why : "stopped"), left);
	exit(wk.exit_status);
}

static void
loop(void)
{
	struct pollfd pfd[3];
	uint64_t deadline, next;
	size_t done_before;
	int timeout, active = 0;	/* a task started or ended since the last rescan */

	wk.rescan_ms = RESCAN_MIN_MS;
	wk.next_beat = wk.next_rescan = wk.now;
	for (;;) {
		wk.now = now_ms();
		if (wk.now >= wk.next_beat) {
			heartbeat();
			wk.next_beat = wk.now + wk.sp.cfg.heartbeat_ms;
		}
		wk.rescan_due = wk.now >= wk.next_rescan;
		done_before = wk.njobs;
		if (wk.rescan_due || wk.running_dirty) {
			wk.running_dirty = 0;
			run_check_revoked();
		}
		cancel_scan();
		inbox_scan();
		inbox_start_ready();
		run_commit_pending();
		if (limits_tick())
			inbox_start_ready();
		inbox_prepare_next();
		spare_tick();
		run_deadlines();
		if (wk.drain_deadline && wk.now >= wk.drain_deadline) {
			wk.drain_deadline = 0;
			start_drain("grace period over", 1);
		}
		if (busy())
			wk.idle_since = wk.now;
		if (wk.njobs != done_before)
			active = 1;
		if (wk.stopping && !busy())
			leave();
		if (wk.idle_timeout_ms && !busy() &&
		    wk.now - wk.idle_since >= wk.idle_timeout_ms) {
			wk.drain_why = "idle timeout";
			wk.left_idle = 1;
			leave();
		}
		/*
		 * Rescans soon after activity, for changes inotify does not
		 * report: those made by a spoold on another host.  With
		 * spoold on this host and the watches in place, every change
		 * to inbox/, cancel/ and running/ is an event, and the
		 * rescan is the slow safety net (daemon: rescan).
		 */
		if (wk.rescan_due) {
			if ((active || busy()) &&
			    !(wk.watching && wk.spoold_local))
				wk.rescan_ms = RESCAN_MIN_MS;
			else if (wk.rescan_ms < wk.sp.cfg.rescan_ms)
				wk.rescan_ms *= 2;
			if (wk.rescan_ms > wk.sp.cfg.rescan_ms)
				wk.rescan_ms = wk.sp.cfg.rescan_ms;
			wk.next_rescan = wk.now + wk.rescan_ms;
			active = 0;
		}
		journal_flush(0);
		deadline = wk.next_beat < wk.next_rescan ? wk.next_beat :
		    wk.next_rescan;
		if ((next = run_next_deadline()) < deadline)
			deadline = next;
		if ((next = spare_next()) < deadline)
			deadline = next;
		if (wk.drain_deadline && wk.drain_deadline < deadline)
			deadline = wk.drain_deadline;
		timeout = wk.inbox_dirty || wk.cancel_dirty || wk.running_dirty ?
		    0 : deadline <= wk.now ? 0 : (int)(deadline - wk.now);
		pfd[0].fd = wk.sigfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = flusher_fd();
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		pfd[2].fd = wk.watch.fd;
		pfd[2].events = POLLIN;
		if (poll(pfd, wk.watch.fd >= 0 ? 3 : 2, timeout) < 0 &&
		    errno != EINTR)
			msg_fatal("poll: %m");
		if (pfd[1].revents & POLLIN) {
			wk.now = now_ms();
			run_flush_done();
		}
		read_signals();
		if (watch_read(&wk.watch, on_event, NULL) < 0)
			msg_warn("read: inotify: %m");
	}
}

int
main(int argc, char **argv)
{
	struct res_opts o;
	const char *spool = NULL;
	int print = 0;

	/* the process made ahead for the next task (spare.c): before
	 * anything else, as it must print nothing */
	if (argc >= 2 && argc <= 4 && strcmp(argv[1], "--spare") == 0)
		spare_main(argv + 2);
	/* the process that stops the tasks if the worker dies (guard.c) */
	if (argc == 2 && strcmp(argv[1], "--guard") == 0)
		guard_main();
	msg_init("ckworker");
	command_std_fds();
	command_private_fds("this worker");
	memset(&o, 0, sizeof o);
	o.gpus = -1;
	o.batch_timeout_ms = BATCH_QUERY_MS;
	wk.death_timeout_ms = wk.grace_ms = wk.signal_wait_ms =
	    wk.unkillable_ms = UNSET;
	parse_args(argc, argv, &spool, &o, &print);
	spool = spool_locate(spool);
	if (print) {
		/* what a worker of the spool would use; without a spool,
		 * the options alone */
		if (spool)
			open_spool(spool, &o);
		res_setup(&o, 1);	/* does not return */
	}
	msg_timestamps(1);
	fsop_stats_at_exit("ckworker");
	if (spool == NULL)
		msg_fatal_status(EXIT_USAGE, "no spool: give -S DIR or set $SPOOL");
	open_spool(spool, &o);
	setup(&o);
	loop();
	return 0;
}

/*
 * spoold - the ckspool scheduler daemon.  See spoold(8).
 *
 * One process per spool (the lease, lease.h), one event loop:
 *
 *	poll(signalfd, inotify) with a deadline
 *	  -> signals: SIGCHLD reaps local workers; SIGTERM/SIGINT start a
 *	     clean stop; SIGHUP reads spool.yaml again (reload.c)
 *	  -> settle(): what a stop or a signal left for the loop
 *	  -> inotify events mark directories dirty (a hint)
 *	  -> heartbeat: beat the lease (exit at once if it was lost),
 *	     check workers' beats
 *	  -> rescan: directories whose stamp moved are listed (the truth)
 *	  -> accept, control, worker news, placement
 *	  -> group commit (one syncfs; at most every BARRIER_EVERY_MS
 *	     while busy), then cleanups that may follow it
 *	  -> publish state/summary
 *
 * The rescan interval adapts: 20 ms after activity, doubling while
 * nothing happens, up to daemon: rescan from spool.yaml.  While a batch
 * command runs (scale_tick, up to 30 s), the lease beats, the tasks
 * go on, and a stop asked meanwhile begins: while_batch().
 *
 * A clean stop (SIGTERM, SIGINT, "spool shutdown"): no new placements;
 * local workers get SIGTERM and hand back their tasks; every worker job
 * spoold submitted is cancelled (a batch system's in one command:
 * jobs_cancel_all), and spoold waits until the batch systems no longer
 * list them and their workers are gone, up to STOP_GRACE_MS from the
 * stop (from the signal or request, a batch command running or not),
 * its batch commands included (batch_stop_by), then says what is
 * left; the workers' reports are taken in; the lease is released.
 * Exit status 0 after a clean stop, 111 (temporary failure) on a fatal
 * error such as a lost lease.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "batch.h"
#include "command.h"
#include "fsop.h"
#include "jobs.h"
#include "journal.h"
#include "msg.h"
#include "observe.h"
#include "shutmark.h"
#include "spoold.h"
#include "units.h"
#include "version.h"

struct spoold sd;

#define RESCAN_MIN_MS		20
/*
 * Group commit: while tasks stream through, spoold's own syncfs comes
 * at most every BARRIER_EVERY_MS.  What it covers never needs it
 * sooner: results are flushed by their workers before they are
 * committed, assignments are not flushed at all, and the few writes
 * that replace something's only copy are fsync'ed one by one
 * (FSOP_DURABLE).  Removals that must follow a flush wait for one:
 * sources in accepting/ (the barrier comes in the same pass) and the
 * directories of exited workers (barrier_settle() before workers_gc).
 */
#define BARRIER_EVERY_MS	50
#define STOP_GRACE_MS		30000	/* for workers and jobs to end */
#define STOP_KILL_WAIT_MS	2000	/* then for SIGKILLed local workers */
#define HOLES_EVERY_MS		60000

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: spoold [-S SPOOL] [--local N] [--local-cores C]\n"
	    "              [--local-memory SIZE] [--no-inotify] [-v]\n"
	    "       spoold --version\n"
	    "Run the scheduler of SPOOL (default $SPOOL).  See spoold(8).\n");
	exit(status);
}

static void
self_dir_worker(const char *argv0)
{
	char self[PATH_MAX], *slash;
	const char *env = getenv("CKWORKER");
	ssize_t n;

	if (env && *env) {
		sd.worker_path = xstrdup(env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 16);
	if (n <= 0) {
		snprintf(self, sizeof self, "%s", argv0);
		n = (ssize_t)strlen(self);
	}
	self[n] = 0;
	if ((slash = strrchr(self, '/')) != NULL)
		strcpy(slash + 1, "ckworker");
	else
		strcpy(self, "ckworker");
	sd.worker_path = xstrdup(self);
}

static long
ncpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

static void
parse_args(int argc, char **argv, const char **spool)
{
	static const struct option opts[] = {
		{ "spool", required_argument, NULL, 'S' },
		{ "local", required_argument, NULL, 'L' },
		{ "local-cores", required_argument, NULL, 'C' },
		{ "local-memory", required_argument, NULL, 'M' },
		{ "no-inotify", no_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *why;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "S:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			*spool = optarg;
			break;
		case 'L':
			if (units_parse_uint(optarg, 1024, &v, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--local %s: %s",
				    journal_q(optarg), why);
			sd.local_n = (unsigned)v;
			break;
		case 'C':
			if (units_parse_uint(optarg, TASK_CORES_MAX, &v, &why) < 0 ||
			    v == 0)
				msg_fatal_status(EXIT_USAGE, "--local-cores %s: %s",
				    journal_q(optarg),
				    v == 0 ? "must be at least 1" : why);
			sd.local_cores = (uint32_t)v;
			break;
		case 'M':
			if (units_parse_size(optarg, &sd.local_memory, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--local-memory %s: %s",
				    journal_q(optarg), why);
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
	if (sd.local_n && sd.local_cores == 0) {
		long n = ncpus() / (long)sd.local_n;

		sd.local_cores = n > 0 ? (uint32_t)n : 1;
	}
}

static void
setup_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		msg_fatal("sigprocmask: %m");
	sd.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sd.sigfd < 0)
		msg_fatal("signalfd: %m");
}

static uint64_t stop_deadline;	/* now_ms() when a stop gives up */
static int in_batch;		/* in while_batch() */
static int cancels_owed;	/* a stop's scale_stop(): 1 + clear_sizes */
static int reap_owed;		/* a SIGCHLD read, local_reap() not run */
static int reload_owed;		/* a SIGHUP read, spoold_reload() not run */

/* "spool shutdown" also unmounts the spool's mounts (shutmark.h). */
static void
mark_shutdown(void)
{
	char who[96];
	uint64_t gen;

	host_self(who, sizeof who);
	if (shutmark_write(&sd.sp, who, &gen) < 0)
		msg_warn("update: %s/state/shutdown: %m (the spool's mounts "
		    "are not told to unmount)", sd.sp.shown);
	else
		msg_info("stopping: the spool's mounts unmount within %d s "
		    "(state/shutdown, generation %" PRIu64 ")",
		    SHUTMARK_SEEN_MS / 1000, gen);
}

/*
 * A stop begins where it is asked, while a batch command runs too
 * (while_batch reads signals and control/): nothing more is placed or
 * submitted (jobs_submit), the local workers are told, and the grace
 * counts from here.  Its cancels are batch commands, so they wait for
 * settle(), in the loop: never inside a running command, nor inside
 * control_scan, which while_batch runs.
 */
void
spoold_stop(const char *why, int clear_sizes)
{
	if (sd.shutting_down)
		return;
	msg_info("stopping (%s): cancelling worker jobs, stopping local "
	    "workers", why);
	if (in_batch)
		msg_info("stopping: the worker jobs are cancelled once the "
		    "batch command running has ended (within %d s)",
		    STOP_GRACE_MS / 1000);
	sd.shutting_down = 1;
	sd.summary_dirty = 1;
	/* the grace counts from here, cancels included: batch.h */
	stop_deadline = now_ms() + STOP_GRACE_MS;
	batch_stop_by(stop_deadline);
	local_stop();
	if (clear_sizes)	/* "spool shutdown" */
		mark_shutdown();
	cancels_owed = 1 + clear_sizes;
}

/* What a stop or a signal left for the loop, outside batch commands. */
static void
settle(void)
{
	int clear_sizes;

	if (reap_owed) {
		reap_owed = 0;
		local_reap();
	}
	if (reload_owed) {
		reload_owed = 0;
		spoold_reload();
	}
	if (cancels_owed) {
		clear_sizes = cancels_owed - 1;
		cancels_owed = 0;
		scale_stop(clear_sizes);
	}
}

static void
read_signals(void)
{
	struct signalfd_siginfo si;

	while (read(sd.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			/* in settle(): local_reap() takes any child, and
			 * command_run() waits for its own */
			reap_owed = 1;
			break;
		case SIGTERM:
			spoold_stop("SIGTERM", 0);
			break;
		case SIGINT:
			spoold_stop("SIGINT", 0);
			break;
		case SIGHUP:
			/* in settle(): a batch command running holds a
			 * kind of the configuration a reload replaces */
			reload_owed = 1;
			break;
		}
	}
}

static void
on_event(void *arg, void *cookie, const char *name, uint32_t mask)
{
	size_t i;

	(void)arg;
	if (cookie == NULL) {		/* queue overflow: look everywhere */
		sd.incoming_dirty = sd.control_dirty = sd.workers_dirty = 1;
		for (i = 0; i < sd.nworkers; i++)
			if (sd.workers[i])
				sd.workers[i]->dirty = NEWS_ALL;
		return;
	}
	if (cookie == &sd.incoming_dirty)
		accept_note(name, mask);
	else if (cookie == &sd.control_dirty)
		sd.control_dirty = 1;
	else if (cookie == &sd.workers_dirty)
		sd.workers_dirty = 1;
	else if (cookie == (void *)scale_note)
		scale_note();
	else
		workers_note(cookie, mask);
}

static void
setup_watches(void)
{
	if (watch_open(&sd.watch, -1) < 0) {
		msg_warn("inotify_init: %m (rescans only)");
		return;
	}
	if (!watch_enabled(&sd.watch)) {
		msg_info("inotify disabled: noticing changes by rescans only");
		return;
	}
	if (watch_add(&sd.watch, sd.sp.rootfd, "incoming",
	    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE, &sd.incoming_dirty) < 0 ||
	    watch_add(&sd.watch, sd.sp.rootfd, "control",
	    IN_MOVED_TO | IN_CLOSE_WRITE, &sd.control_dirty) < 0 ||
	    watch_add(&sd.watch, sd.sp.rootfd, "workers",
	    IN_MOVED_TO | IN_CREATE | IN_MOVED_FROM | IN_DELETE,
	    &sd.workers_dirty) < 0 ||
	    watch_add(&sd.watch, sd.sp.rootfd, "scale",
	    IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE, (void *)scale_note) < 0)
		msg_warn("inotify_add_watch: %m (rescans only)");
}

static int
something_dirty(void)
{
	size_t i;

	if (sd.incoming_dirty || sd.control_dirty || sd.workers_dirty ||
	    sd.place_dirty)
		return 1;
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && sd.workers[i]->dirty)
			return 1;
	return 0;
}

static uint64_t next_barrier;
static int barrier_owed, barrier_failed;

/*
 * The group commit, now; 0, or -1 if the flush failed.  What it covered
 * may then be lost, and a later syncfs would not say so (Linux reports
 * a writeback error once per open file): so what waits for a flush (the
 * sources in accepting/, the directories of exited workers) is not
 * removed after one that failed, and stays until one succeeds; spoold
 * goes on.  Said once until a flush succeeds again.  The specs a
 * failed flush covered are written again from their sources before
 * those go (accept_flush_failed), so the flush that then succeeds
 * covers them.
 */
static int
barrier_now(void)
{
	barrier_failed = fsop_barrier(sd.sp.rootfd) < 0;
	if (barrier_failed) {
		msg_once("sync", "syncfs: %s: %m (what waits for a flush "
		    "is kept: sources in accepting/, exited workers' "
		    "directories)", sd.sp.shown);
		accept_flush_failed();
	} else
		msg_clear("sync");
	barrier_owed = 0;
	next_barrier = sd.now + BARRIER_EVERY_MS;
	return barrier_failed ? -1 : 0;
}

/* Whatever was changed before is on the disk (see BARRIER_EVERY_MS):
 * 0, or -1 if that flush failed. */
static int
barrier_settle(void)
{
	if (barrier_owed || barrier_failed)
		return barrier_now();
	return 0;
}

/*
 * Moves only forward: a sum of the per-state gauges would stay the same
 * when a result is taken in (placed - 1, done + 1) and the next task is
 * placed (queued - 1, placed + 1), so a spoold streaming tasks through
 * its workers looked idle and its rescans backed off to daemon: rescan
 * (without inotify: workers on other hosts).
 */
static uint64_t
activity(void)
{
	return sd.c.changes + sd.c.rejected + sd.c.requeued + sd.c.retried;
}

/*
 * Whether rescans soon after activity can see something inotify does
 * not report: without inotify everything, and with it the changes of a
 * worker on another host (another name or boot ID).  With every worker
 * on this host and the watches in place, what a rescan would find an
 * event has already named, and the rescan stays the slow safety net
 * (daemon: rescan), as in ckworker.
 */
static int
fast_rescans_help(void)
{
	const struct worker *w;
	size_t i;

	if (!watch_enabled(&sd.watch))
		return 1;
	for (i = 0; i < sd.nworkers; i++)
		if ((w = sd.workers[i]) != NULL && !w->gone &&
		    worker_unwatched(w))
			return 1;
	return 0;
}

/* Beat the lease (also while recovering: recover_beat); exit if lost. */
void
spoold_lease_beat(void)
{
	char why[256];

	switch (lease_beat(&sd.sp, &sd.lease, why, sizeof why)) {
	case -1:
		/*
		 * A spool being removed may lose lock/ before FORMAT: say
		 * that it is gone, not that another spoold took it over.
		 */
		if (!spool_alive(&sd.sp))
			msg_fatal("the spool %s is gone; exiting", sd.sp.shown);
		/* someone else runs the spool now: touch nothing more */
		msg_fatal("%s; exiting", why);
	case 1:
		msg_once("beat", "%s", why);
		break;
	default:
		msg_clear("beat");
	}
	sd.lease_beaten = now_ms();
}

static int looping;	/* in run()'s loop: see while_batch() */

/*
 * While spoold waits for a batch command (batch.c: up to BATCH_LIMIT_MS
 * each, and a pass may run several; a busy slurmctld answers sbatch or
 * squeue in seconds), called every BATCH_TICK_MS.  The lease beats when
 * a heartbeat has passed since its last beat, or every worker left
 * after its death timeout and a spoold on another host broke the lease.
 * And the tasks go on: what was dropped into incoming/ is accepted,
 * the workers' results are taken in, tasks are placed on the workers
 * there are, and what changed is flushed (the group commit), as the
 * loop would; a slow squeue no longer holds up placement.
 *
 * And a stop asked meanwhile begins: signals are read (SIGTERM,
 * SIGINT; a SIGCHLD is left to settle()) and so are control/ requests
 * ("spool shutdown", cancels), so that a stop asked during a hung
 * sbatch no longer waits for it before its own 30 s: spoold_stop()
 * leaves the cancels to the loop, and no job is submitted after it.
 *
 * And the workers come and go: a worker that registers is taken in
 * (and tasks placed on it), and one that exited or stopped beating is
 * found at the loop's heartbeat interval, its tasks requeued, so that
 * a busy slurmctld's slow sbatch or squeue no longer holds up the
 * workers of the jobs that started.
 *
 * What must not happen here: the command runs inside scale_tick() or a
 * stop's cancels (settle), which may be walking the jobs and the
 * workers.  So nothing is removed: no worker freed (workers_gc waits
 * for the loop's heartbeat) and no job record forgotten; what is added
 * is appended (worker_register fills a free slot of sd.workers, and
 * jobs_adopt appends to the jobs, whose list the walks read afresh at
 * each step: jobs_cancel_all cancels from a copy), a job adopted while
 * its own submission command runs is found by jobs_submit, not recorded
 * twice, and one adopted while a listing runs is judged by the next
 * listing (poll_backend).  None of what runs here runs a batch
 * command, so it never nests.  sd.now moves on: the pass around the
 * command sees the time after it (a listing's grace for a job not yet
 * listed counts to when it was asked for: jobs.c, poll_backend).
 */
static void
while_batch(void)
{
	static uint64_t next_rescan, next_beat_check;
	uint64_t before;
	int rescan_due;
	size_t i;

	if (now_ms() - sd.lease_beaten >= sd.sp.cfg.heartbeat_ms)
		spoold_lease_beat();
	if (!looping)
		return;
	in_batch = 1;
	sd.now = now_ms();
	before = activity();
	read_signals();
	if (watch_read(&sd.watch, on_event, NULL) < 0)
		msg_warn("read: inotify: %m");
	rescan_due = sd.rescan_due;	/* the loop's, in the pass it is in */
	/* rescans as the loop's are due, at the loop's interval */
	sd.rescan_due = sd.now >= sd.next_rescan && sd.now >= next_rescan;
	if (sd.rescan_due) {
		sd.place_dirty = 1;
		next_rescan = sd.now + sd.rescan_ms;
	}
	accept_scan();
	control_scan();
	workers_scan();
	/* the beats as the loop's heartbeat checks them, as often */
	if (sd.now >= sd.next_beat && sd.now >= next_beat_check) {
		workers_beat_check();
		next_beat_check = sd.now + sd.sp.cfg.heartbeat_ms;
	}
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i])
			finish_worker_news(sd.workers[i]);
	place_all();
	if (activity() != before && barrier_now() == 0)
		accept_cleanup();
	sd.rescan_due = rescan_due;
	in_batch = 0;
}

static void
heartbeat(void)
{
	static uint64_t next_holes, next_sweep;

	spoold_lease_beat();
	workers_beat_check();
	if (barrier_settle() == 0)	/* before a worker's directory goes */
		workers_gc();
	deps_retry();
	finish_retry();
	if (sd.now >= next_holes) {
		deps_check_holes();
		next_holes = sd.now + HOLES_EVERY_MS;
	}
	if (sd.now >= next_sweep) {
		if (next_sweep)
			recover_sweep();
		next_sweep = sd.now + HOLES_EVERY_MS;
	}
	if (!spool_alive(&sd.sp))
		msg_fatal("the spool %s is gone; exiting", sd.sp.shown);
}

static void
run(void)
{
	struct pollfd pfd[2];
	uint64_t deadline, before, kill_deadline = 0;
	size_t i;
	int timeout, n;

	sd.rescan_ms = RESCAN_MIN_MS;
	sd.next_rescan = sd.next_beat = now_ms();
	looping = 1;
	for (;;) {
		sd.now = now_ms();
		before = activity();
		if (sd.now >= sd.next_beat) {
			heartbeat();
			sd.next_beat = sd.now + sd.sp.cfg.heartbeat_ms;
		}
		sd.rescan_due = sd.now >= sd.next_rescan;
		if (sd.rescan_due)
			sd.place_dirty = 1;
		local_tick();
		accept_scan();
		control_scan();
		settle();
		workers_scan();
		for (i = 0; i < sd.nworkers; i++)
			if (sd.workers[i])
				finish_worker_news(sd.workers[i]);
		place_all();
		scale_tick();
		settle();
		/* at once when idle, accepting or stopping; else grouped */
		if (activity() == before || sd.now >= next_barrier ||
		    accept_cleanup_pending() || sd.shutting_down) {
			if (barrier_now() == 0)
				accept_cleanup();	/* what it covered */
		} else
			barrier_owed = 1;
		publish_summary(0);
		observe_tick();
		if (sd.rescan_due) {
			bundle_removals(0);
			if (activity() != before && fast_rescans_help())
				sd.rescan_ms = RESCAN_MIN_MS;
			else if (sd.rescan_ms < sd.sp.cfg.rescan_ms)
				sd.rescan_ms *= 2;
			if (sd.rescan_ms > sd.sp.cfg.rescan_ms)
				sd.rescan_ms = sd.sp.cfg.rescan_ms;
			sd.next_rescan = sd.now + sd.rescan_ms;
			sd.rescan_due = 0;
		} else if (activity() != before &&
		    sd.rescan_ms > RESCAN_MIN_MS && fast_rescans_help()) {
			sd.rescan_ms = RESCAN_MIN_MS;
			sd.next_rescan = sd.now + sd.rescan_ms;
		}
		if (sd.shutting_down) {
			if (local_running() == 0 && scale_active() == 0)
				break;
			if (kill_deadline && sd.now >= kill_deadline)
				break;
			if (!kill_deadline && sd.now >= stop_deadline) {
				/* say what is left, then stop anyway */
				msg_warn("stopping: still waiting after %d s; "
				    "giving up", STOP_GRACE_MS / 1000);
				jobs_report_outstanding();
				local_kill();
				kill_deadline = sd.now + STOP_KILL_WAIT_MS;
			}
		}

		deadline = sd.next_beat < sd.next_rescan ? sd.next_beat :
		    sd.next_rescan;
		if (sd.summary_dirty && sd.next_publish < deadline)
			deadline = sd.next_publish;
		if (local_next() < deadline)
			deadline = local_next();
		if (scale_next() < deadline)
			deadline = scale_next();
		if (barrier_owed && next_barrier < deadline)
			deadline = next_barrier;
		if (sd.incoming_due && sd.incoming_due < deadline)
			deadline = sd.incoming_due;	/* a drop settles */
		timeout = something_dirty() ? 0 : deadline <= sd.now ? 0 :
		    (int)(deadline - sd.now);
		if (sd.shutting_down && timeout > 100)
			timeout = 100;
		pfd[0].fd = sd.sigfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sd.watch.fd;
		pfd[1].events = POLLIN;
		n = poll(pfd, sd.watch.fd >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR)
			msg_fatal("poll: %m");
		read_signals();
		settle();
		if (watch_read(&sd.watch, on_event, NULL) < 0)
			msg_warn("read: inotify: %m");
		if (sd.watch.overflow) {
			sd.watch.overflow = 0;
			sd.next_rescan = 0;
		}
	}
	looping = 0;
	/*
	 * Still ours?  A stop can outlast lost-timeout (a slow flush, a
	 * hung file server), and another host's spoold may have taken the
	 * spool over meanwhile: then touch nothing more.
	 */
	spoold_lease_beat();
	/* the workers' last reports */
	sd.now = now_ms();
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i]) {
			sd.workers[i]->dirty = NEWS_ALL;
			finish_worker_news(sd.workers[i]);
		}
	workers_beat_check();
	if (barrier_now() == 0) {
		accept_cleanup();	/* else the next start does */
		/*
		 * The workers that exited in the stop: their directories
		 * would else stay (listed, "exited") until a spoold runs
		 * again.  After the barrier, as in heartbeat().
		 */
		workers_gc();
	}
	bundle_removals(1);
	control_removals();
	publish_summary(1);
}

int
main(int argc, char **argv)
{
	const char *spool = NULL;
	char why[512];

	msg_init("spoold");
	command_std_fds();
	msg_timestamps(1);
	command_private_fds("spoold");
	command_more_fds();	/* eight descriptors a worker */
	fsop_stats_at_exit("spoold");
	parse_args(argc, argv, &spool);
	if ((spool = spool_locate(spool)) == NULL)
		msg_fatal_status(EXIT_USAGE, "no spool: give -S DIR or set $SPOOL");
	self_dir_worker(argv[0]);
	setup_signals();
	if (spool_open(&sd.sp, spool, why, sizeof why) < 0)
		msg_fatal("%s", why);
	if (lease_acquire(&sd.sp, &sd.lease, sd.sp.cfg.lost_timeout_ms, why,
	    sizeof why) < 0)
		msg_fatal("%s", why);
	sd.lease_beaten = now_ms();
	batch_while_waiting(while_batch);
	if ((sd.root_abs = realpath(sd.sp.root, NULL)) == NULL)
		msg_fatal("realpath: %s: %m", sd.sp.shown);
	msg_info("started on %s (pid %ld), spool %s, ckspool %s", host_name(),
	    (long)getpid(), sd.sp.shown, CKSPOOL_VERSION);
	config_warn_death_timeouts(&sd.sp.cfg);
	observe_start();
	sd.now = now_ms();
	/*
	 * Until spoold publishes, state/summary is the last spoold's, which
	 * named itself and said "stopping", and "spool status", "spool top"
	 * and spoolfs show it: one before recovery (which can take seconds
	 * on a large spool), one with what it recovered, even if nothing.
	 */
	sd.recovering = 1;
	publish_summary(1);
	setup_watches();
	recover_all();
	scale_recover();
	local_start();
	sd.recovering = 0;
	sd.now = now_ms();	/* recovery took time: the summary's pacing */
	publish_summary(1);
	run();
	observe_stop();
	spoold_lease_beat();	/* (the last reports' flush can be slow) */
	lease_release(&sd.sp, &sd.lease);
	msg_info("stopped");
	return 0;
}

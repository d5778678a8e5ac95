/*
 * worker.h - ckworker's state.
 *
 * ckworker registers a directory under workers/ (wdir.h), beats in it,
 * runs the assignments spoold puts in its inbox, and commits each
 * outcome by renaming running/ID.ATT to done/ID.ATT after writing
 * work/ID.ATT/result.  It never reads the spool's queue.
 *
 * Resources (resources.c) are found once at start; each task gets its
 * own cores, GPUs and memory limit when it starts (resources.c) and is
 * bound, watched and stopped by the method in force (limits.c).
 */
#ifndef WORKER_H
#define WORKER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "beatfile.h"
#include "cores.h"
#include "gpu.h"
#include "hostinfo.h"
#include "ptree.h"
#include "result.h"
#include "spool.h"
#include "task.h"
#include "watch.h"
#include "wdir.h"

enum job_state {
	J_PENDING,	/* read from inbox/, not started */
	J_RUNNING,	/* process running */
	J_ENDING,	/* signalled, waiting for it to exit */
};

/* How memory limits are enforced and task trees are found (limits.c). */
enum limit_method { LM_NONE, LM_WATCHDOG, LM_CGROUP1, LM_CGROUP2, LM_N };
extern const char *const limit_method_name[LM_N];
/* how a task is kept on its CPUs: its affinity, or a cpuset as well;
 * to its GPUs: CUDA_VISIBLE_DEVICES, or a devices cgroup as well
 * (fences.c) */
enum cpu_method { CM_AFFINITY, CM_CPUSET, CM_N };
extern const char *const cpu_method_name[CM_N];
enum gpu_method { GM_ENV, GM_DEVICES, GM_N };
extern const char *const gpu_method_name[GM_N];

/*
 * The next task is prepared while the slots are busy (inbox.c,
 * inbox_prepare_next: its work directory, output files and cgroup)
 * only while tasks run this long or longer (an exponential mean of the
 * last ones): shorter tasks leave no time to do it while they run, and
 * for them the worker's CPU or its filesystem's round trips are what
 * limits (doc/performance-history.md).
 */
#define AHEAD_MIN_RUN_MS	5

struct job {
	char	name[WDIR_ANAME_MAX];	/* ID.ATTEMPT */
	uint64_t id;
	uint32_t attempt;
	struct task_spec spec;
	enum job_state state;
	pid_t	pid;
	uint64_t pstart;	/* its start time, for spoold (hostinfo.h) */
	double	start;		/* unix time */
	double	end;		/* unix time it was reaped (run_reap) */
	uint64_t start_ms;
	uint64_t deadline_ms;	/* walltime, 0 none */
	uint64_t kill_at_ms;	/* SIGKILL after the grace, 0 none */
	uint64_t killed_ms;	/* its first SIGKILL, 0 none (run.c: a main
				 * process not reaped wk.unkillable_ms
				 * after it is given up) */
	enum result_reason why_killed;	/* RR_EXIT when not killed */
	int	handback;	/* when it exits, hand it back */
	int	revoked;	/* spoold took it back: drop silently */
	int	prepared;	/* out, err open (run_prepare, before the claim) */
	int	out, err;	/* its stdout and stderr files */
	int	fail_fd;	/* started from the spare: its exec's errno */
	char	*exe;		/* what the spare execs */
	int	exec_errno;	/* the spare's exec failed so */
	struct buf result;	/* its result record (run.c) */
	int	written;	/* result is in work/ID.ATT/result (run.c) */
	int	given;		/* work/ID.ATT is its submitter's (run.c) */
	int	refused;	/* errno its commit was last refused with
				 * (0: none): paced, and said if the worker
				 * leaves it (run.c) */
	struct result held;	/* terminated: its outcome, held (run.c) */
	uint64_t hold_until_ms;	/* 0: not held */

	/* resources: sized when read, held while it runs (resources.c) */
	uint32_t ncores;	/* cores it gets */
	uint64_t mem_res;	/* memory reserved, bytes */
	uint64_t mem_limit;	/* bytes enforced, 0 none */
	uint32_t ngpu;
	uint32_t *unit;		/* its cores: indices in wk.unit */
	char	*cpus;		/* their CPUs, as a list */
	uint32_t gpu[TASK_GPUS_MAX];	/* indices in wk.gpus */
	char	*gpu_ids;	/* their IDs, as CUDA_VISIBLE_DEVICES */
	int	taken;		/* cores, memory and slot are held */
	int	gpus_taken;	/* its GPUs are held (by it: limits.c may
				 * keep them after it, gpu_hold) */

	/* watching it (limits.c) */
	int	cg;		/* it has a cgroup */
	struct ptree tree;	/* its processes */
	uint64_t mem_peak;	/* bytes, whole task */
	uint64_t mem_now;	/* bytes in use at the last sample */
	char	*mem_why;	/* how memory was exceeded, for the result */
	double	orphan_utime, orphan_stime;	/* its orphans the worker reaped */
	uint64_t orphan_maxrss;	/* bytes, the largest of those orphans */
	double	gpu_util_sum;
	uint64_t gpu_samples;
	uint64_t gpu_mem_peak;
};

struct ckworker {
	struct spool sp;
	char	root[4096];	/* absolute spool path */
	struct worker_info info;
	char	wid[WDIR_ID_MAX];
	int	dirfd;
	int	subfd[WS_NSUB];
	struct watch watch;
	int	sigfd;

	struct job **jobs;
	size_t	njobs;

	uint32_t cores_used;
	uint64_t mem_used;	/* bytes reserved by running tasks */
	uint32_t gpus_used;
	uint32_t gpus_held;	/* of gpus_used: kept past GPU_HOLD_WARN_MS
				 * by processes SIGKILL did not end */
	int	refit;		/* gpus_held grew: look at every pending job */
	uint32_t late;		/* tasks handed back for want of time
				 * before the drain (its status: spoold
				 * keeps placing on it) */
	uint32_t slots_used;

	/* resources (resources.c) */
	struct cores_unit *unit;	/* info.cores units, topology order */
	unsigned char *unit_busy;
	size_t	nunit;
	uint32_t task_cores;		/* at least, per task (--processes) */
	struct gpus gpus;
	enum limit_method method;
	enum cpu_method cpu_method;
	enum gpu_method gpu_method;
	uint64_t sample_ms;		/* watching interval */
	uint64_t next_sample;

	uint64_t beat;
	uint64_t now;
	uint64_t run_mean_us;		/* tasks' run, lately (AHEAD_MIN_RUN_MS) */
	uint64_t next_beat, next_rescan, rescan_ms;
	int	rescan_due;
	int	inbox_dirty, cancel_dirty, running_dirty;
	struct dirstamp st_inbox, st_cancel;
	int	watching;	/* inotify watches inbox/, cancel/, running/ */
	int	spoold_local;	/* the lease's holder runs on this host */

	uint64_t idle_timeout_ms;	/* 0: never */
	uint64_t idle_since;
	uint64_t death_timeout_ms;
	int	death_timeout_given;	/* by --death-timeout, not the file */
	char	followed[96];	/* nonce of the spoold follow_spoold read */
	uint64_t spoold_beat, spoold_seen;
	char	spoold_nonce[96];	/* the lease holder's, "" not known */
	struct beatfile_fails beat_fails;	/* reads of spoold's beat */
	uint64_t grace_ms;		/* SIGTERM to SIGKILL */
	uint64_t unkillable_ms;		/* SIGKILL to giving a main process
					 * up (run.c), 0 never */
	uint64_t drain_grace_ms;	/* on SIGTERM, let tasks run this long */
	uint64_t drain_deadline;
	uint64_t signal_wait_ms;	/* a task terminated waits for ours */
	int	signalled;	/* SIGTERM or SIGINT came */
	uint64_t ends_ms;		/* monotonic end of our walltime, 0 */

	int	draining;
	const char *drain_why;
	int	left_idle;	/* leaving after --idle-timeout: its marker says */
	int	exit_status;	/* of leave(): EXIT_TEMPFAIL once a flush
				 * failed (run.c), else 0 */
	int	stopping;	/* leave as soon as nothing runs */
	int	leaving;	/* a drain that stops running tasks: leave
				 * them, and outcomes whose commit is refused
				 * again (run_leaving) */
	int	lost;
};

extern struct ckworker wk;

/* Options that say what the worker may use (resources.c). */
struct res_opts {
	long	cores;		/* --cores, 0 unset */
	const char *cpus;	/* --cpus LIST */
	long	processes;	/* --processes, 0 unset */
	uint64_t memory;	/* --memory, 0 unset */
	long	gpus;		/* --gpus, -1 unset */
	const char *gpu_ids;	/* --gpu-ids */
	/* --memory-limit, --cpu-limit, --gpu-limit, else spool.yaml's
	 * worker: section (config.h); NULL: auto.  said: where it was
	 * given, for messages ("--cpu-limit affinity") */
	const char *limit[LIMIT_N];
	char	limit_said[LIMIT_N][64];
	const char *batch;	/* --batch */
	const char *job;	/* --job */
	uint64_t walltime_s;	/* --walltime, 0 unset */
	uint64_t batch_timeout_ms;
	uint64_t sample_ms;	/* --sample-interval, 0 default */
};

/* resources.c */
/* Find what the worker may use; print: say it on stdout and exit. */
void	res_setup(const struct res_opts *o, int print);
void	res_job_size(struct job *j);
int	res_fits(const struct job *j);
/* Why it cannot run here (more than the worker has, or more GPUs than
 * those not stuck, limits.c), or NULL. */
const char *res_never_fits(const struct job *j, char *why, size_t size);
void	res_take(struct job *j);
/* Everything j holds; res_release_slot: all but its GPUs, which its
 * end gives back by res_release_gpus (or limits.c keeps, gpu_hold). */
void	res_release(struct job *j);
void	res_release_slot(struct job *j);
void	res_release_gpus(struct job *j);
/* GPUs by index, kept after their task (limits.c), free again. */
void	res_gpus_free(const uint32_t *gpu, uint32_t n);

/* limits.c */
/*
 * Choose the memory method (auto cgroup cgroup2 cgroup1 watchdog none,
 * one of config_limit_method's; NULL is auto) and set it up; said:
 * where it was given ("--memory-limit none"); dry: only see what would
 * work.  desc gets what is in force and why the others are not.
 */
void	limits_init(const char *method, const char *said, int dry, char *desc,
	    size_t descsize);

/* fences.c */
/*
 * Then choose how tasks are kept on their CPUs (auto cpuset affinity;
 * NULL is auto) and to their GPUs (auto devices env), and set it up,
 * the same way.
 */
void	limits_cpu_init(const char *method, const char *said, int dry,
	    char *desc, size_t descsize);
void	limits_gpu_init(const char *method, const char *said, int dry,
	    char *desc, size_t descsize);
/* The descriptors of j's sets' cgroup.procs into p (-1 for none); 0, or
 * -1 with why. */
struct spawn_plan;
int	fences_plan(const struct job *j, struct spawn_plan *p, char *why,
	    size_t whysize);
/* The spare's sets, made ahead: their cgroup.procs paths (how many
 * into out), taken by j (given its sets), forgotten. */
int	fences_spare_prepare(char *why, size_t whysize);
size_t	fences_spare_paths(const char *out[2]);
int	fences_spare_take(const struct job *j, char *why, size_t whysize);
void	fences_spare_forget(void);
/* What j's process sets up for its limits as it starts (taskspawn.c,
 * identity.c), and after the spawn (its cgroup's descriptor closed,
 * its tree followed, or its cgroup removed if it did not start). */
struct spawn_plan;
int	limits_plan(struct job *j, struct spawn_plan *p, char *why,
	    size_t whysize);
void	limits_spawned(struct job *j, struct spawn_plan *p);
/* Why j's limits could not be set up when the step of its start named
 * step ("cpus", "cgroup": taskspawn.c, identity.c) failed with e: 1
 * with why; 0 for a step that is not about its limits. */
int	limits_step_why(const struct job *j, const char *step, int e,
	    char *why, size_t whysize);
/* Ahead of j's start (its cgroup); j will not start here after all. */
int	limits_prepare(struct job *j, char *why, size_t whysize);
void	limits_forget(struct job *j);
/* The spare (spare.c): possible; its cgroup; its cgroup.procs, open
 * for writing (the spare writes "0" to it to move in); taken by j
 * (renamed to j's, j's limit, pid bound to j's CPUs). */
int	limits_spare_possible(void);
int	limits_spare_prepare(char *why, size_t whysize);
int	limits_spare_procs(void);
int	limits_spare_take(struct job *j, pid_t pid, char *why, size_t whysize);
void	limits_spare_forget(void);
/* The spare exec'd as j->pid: its tree is followed from it. */
void	limits_spare_started(struct job *j);
/* Remove the cgroups of the tasks reaped (after the next start). */
void	limits_settle(void);
/* Signal its whole tree (process group, cgroup or followed tree). */
void	limits_signal(struct job *j, int sig);
/* SIGKILL every task that runs, orphans of theirs that came to the
 * worker since the last sample included (the worker abandons them). */
void	limits_kill_all(void);
/* Sample memory (and GPUs), stop tasks over their limit; 1 if GPUs
 * kept after their task became free or were found stuck (start what
 * waited for them, hand back what cannot have them). */
int	limits_tick(void);
uint64_t limits_next(void);
/* Its main process was reaped: stop what is left, fill the result. */
void	limits_reaped(struct job *j, struct result *r);
/* Some other child was reaped: count its CPU time to its task. */
void	limits_orphan_reaped(pid_t pid, const struct rusage *ru);
void	limits_leave(void);

/* main.c: write workers/WID/status now (it is also the heartbeat) */
void	status_write(void);
/* main.c: take no new task, hand back those not started, leave once
 * nothing runs (why is kept: a constant or static); stop_running: stop
 * and hand back those running too. */
void	start_drain(const char *why, int stop_running);

/* inbox.c */
void	inbox_scan(void);
void	inbox_start_ready(void);
void	inbox_prepare_next(void);
void	inbox_hand_back_pending(void);
void	cancel_scan(void);
struct job *job_find(uint64_t id, uint32_t attempt);
void	job_remove(struct job *j);

/* j has a process: started and not reaped yet */
static inline int
job_live(const struct job *j)
{
	return j->state != J_PENDING && j->pid > 0;
}

/* run.c */
int	run_prepare(struct job *j, char *why, size_t size);
void	run_unprepare(struct job *j);
int	run_start(struct job *j);
/* j, claimed but not to be run (a bad assignment, inbox.c): commit it
 * as failed (reason spawn, "bad assignment: why"). */
void	run_not_run(struct job *j, const char *why);
/* What is left of j's start from the spare: its descriptor, exe. */
void	run_forget(struct job *j);
void	run_kill_reap(pid_t pid);
/* pid is a task's main process that was given up (run.c): SIGKILL is
 * pending for it already */
int	run_given_up(pid_t pid);
size_t	run_given_up_count(void);	/* ... not reaped yet */
/* In a child that will be a task: process group, default signals; and
 * right before the exec, no signal blocked. */
void	run_child_defaults(void);
void	run_child_unblock(void);
/* Reap what ended and free its resources; run_settle then makes its
 * result (main.c starts the next tasks in between). */
void	run_reap(void);
void	run_settle(void);
void	run_kill(struct job *j, enum result_reason why, int now);
void	run_deadlines(void);
void	run_disk_check(void);
void	run_check_revoked(void);
void	run_signalled(void);
void	run_commit_pending(void);
/* The worker must leave (start_drain stopping its tasks): outcomes
 * whose commit was refused are tried again at once, and left when
 * refused again. */
void	run_leaving(void);
/* Outcomes left, refused since run_leaving: once nothing else is left
 * of the worker's jobs, it leaves them (0 while a flush runs). */
size_t	run_left_behind(void);
/* Say what run_left_behind leaves, once, as the worker leaves: exit
 * status EXIT_TEMPFAIL.  Returns how many. */
size_t	run_leave_behind(void);
/* The flush in flight is over (flusher_fd readable): commit what it
 * covered. */
void	run_flush_done(void);
uint64_t run_next_deadline(void);

/* guard.c: a process that stops the running tasks if the worker dies */
/* after limits_init: the worker's exit has the guard stop what is
 * listed before cgroup_cleanup runs (atexit, in reverse order) */
void	guard_start(void);
/* The worker leaves: the guard stops what is still listed, quietly,
 * and ends (before limits_leave removes the cgroups it is in). */
void	guard_stop(void);
pid_t	guard_pid(void);	/* 0: none */
/* A slot of the table for j, its pid to be stored in it (by its
 * process, struct spawn_plan's listed, or guard_listed), or NULL;
 * guard_unlist: the start failed, the slot is free again. */
int32_t	*guard_slot(const struct job *j);
void	guard_listed(int32_t *slot, pid_t pid);
void	guard_unlist(int32_t *slot);
void	guard_forget(pid_t pid);	/* a task's main process, reaped */
int	guard_reaped(pid_t pid, int status);	/* 1: it was the guard */
/* ckworker --guard (guard.c): the guard's side, after its exec */
void	guard_main(void) __attribute__((noreturn));
/* spare.c: a process for the next task, made while the worker idles */
void	spare_tick(void);
uint64_t spare_next(void);
int	spare_start(struct job *j, const char *exe, char **argv, char **env,
	    const char *cwd, int out, int err);
int	spare_reaped(pid_t pid);
void	spare_drop(void);
/* ckworker --spare (spare.c): the spare's side, after its exec */
void	spare_main(char **fences) __attribute__((noreturn));

#endif

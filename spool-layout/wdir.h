/*
 * wdir.h - a worker's directory, workers/WID/, and the assignments in it.
 *
 *   info        static record: name, host, boot id, pid and its start
 *               time, nonce, resources (and the CPUs, GPUs and memory
 *               method behind them), end time, batch job
 *   status      published every heartbeat: beat counter, load, draining,
 *               and the process groups of the tasks it runs
 *   inbox/      ID.ATTEMPT  assignments spoold placed here
 *   running/    ID.ATTEMPT  claimed by the worker, being run
 *   done/       ID.ATTEMPT  finished; work/ID.ATTEMPT/result says how
 *   returned/   ID.ATTEMPT  handed back unfinished (drain, shutdown)
 *   revoked/    ID.ATTEMPT  taken back by spoold (worker lost, cancel)
 *   cancel/     ID.ATTEMPT  spoold asks the worker to stop the task
 *   work/       ID.ATTEMPT/ stdout, stderr, result (and script) of runs;
 *               .space, the worker's disk probe (WDIR_DISK_PROBE)
 *   drain       spoold drains the worker (to scale down, or its GPUs
 *               held): no task is placed on it, and its batch job is
 *               cancelled once it has none; empty.  The worker itself
 *               does nothing different ("spool workers" says draining)
 *   lost        spoold declared the worker lost: it must stop
 *   exited      the worker left cleanly; a record, "why: idle" when it
 *               left after --idle-timeout with nothing to do (spoold
 *               does not replace it in a fixed pool while no work
 *               waits for its kind), else empty
 *
 * An assignment file moves inbox -> running -> done, or to returned or
 * revoked.  The worker renames into running, done and returned; spoold
 * renames into revoked.  The worker's commit (running -> done) and
 * spoold's revoke (running -> revoked) rename the same file, so exactly
 * one of them happens: this is the fence that keeps a result of a
 * revoked attempt from being accepted.
 *
 * A worker directory is built in tmp/ and renamed into workers/ whole,
 * so spoold never sees a half-registered worker.
 */
#ifndef WDIR_H
#define WDIR_H

#include <stdint.h>

#include "buf.h"
#include "rec.h"
#include "spool.h"
#include "task.h"

enum wsub {
	WS_INBOX, WS_RUNNING, WS_DONE, WS_RETURNED, WS_REVOKED, WS_CANCEL,
	WS_WORK, WS_NSUB
};

extern const char *const wdir_sub_name[WS_NSUB];

#define WDIR_ID_MAX	(TASK_NAME_MAX + 16)
#define WDIR_ANAME_MAX	40
#define WDIR_PGROUPS_MAX 4096
#define WDIR_TASKMEM_MAX 256	/* running tasks whose memory a status names */
#define WINFO_LIST_MAX	512	/* a CPU or GPU list in info (cut at this) */
/*
 * In work/, 4 KiB the worker writes and removes at once to tell a full
 * quota from a free disk (ckworker/run.c: disk_refuses); left behind
 * only by a worker that stopped in between, it goes with the worker's
 * directory.  No attempt's name (ID.ATTEMPT): nothing takes it for one.
 */
#define WDIR_DISK_PROBE	".space"
#define WDIR_DRAIN	"drain"	/* spoold's marker: it drains the worker */

/* The "why" of an exited marker of a worker that left idle. */
#define WDIR_EXITED_IDLE "idle"
#define WDIR_EXITED_MAX	4096	/* bytes of an exited marker */

/*
 * The most a status record can take, and what its readers accept: its
 * lists at their longest with every number at 20 digits (UINT64_MAX)
 * and ", " between them, and 4 KiB for the other fields, its pad line
 * and its check line.  About 200 KiB; a worker running thousands of
 * tasks at once writes tens of KiB (22 bytes a task).
 */
#define WSTATUS_NUM_BYTES 22	/* "18446744073709551615, " */
#define WSTATUS_BYTES_MAX (256 * 1024)
_Static_assert(2 * WDIR_PGROUPS_MAX * WSTATUS_NUM_BYTES +
    3 * WDIR_TASKMEM_MAX * WSTATUS_NUM_BYTES + 4096 <= WSTATUS_BYTES_MAX,
    "a worker's status at its longest is read whole");

/*
 * A worker with an end time (its batch job's walltime) drains this long
 * before it, and spoold places there only tasks whose walltime ends
 * before that point: both sides use the same margin.
 */
#define WORKER_END_MARGIN_S 60

/*
 * A busy worker commits the outcomes of its tasks in groups: one syncfs
 * for every outcome of this window (ckworker/run.c).  spoold gives a
 * worker whose tasks are shorter than it more work ahead, so that the
 * worker does not run dry while its outcomes wait (spoold/place.c).
 * 30 ms: on the 2-core VM of 2026-11-26, 2,000 `true` tasks took about
 * 1,750 us of spoold's and the workers' CPU a task with 10 ms (and
 * spoold's barrier every 10 ms), about 1,300 with 30 (and 50); 60 (and
 * 100) saved little more (doc/performance-history.md, "Wider commit
 * windows"; 100 again on 2026-11-30 and 2026-12-01: doc/performance.md,
 * "What did not help").
 */
#define WORKER_COMMIT_WINDOW_MS 30

struct worker_info {
	char	name[TASK_NAME_MAX + 1];
	char	host[64];
	char	boot[48];
	long	pid;
	uint64_t pstart;	/* process start time (hostinfo.h) */
	char	nonce[96];
	uint32_t cores;
	uint64_t memory;
	uint32_t gpus;
	uint32_t slots;		/* task slots (processes) */
	uint32_t task_cores;	/* cores a task gets at least (cores/slots) */
	char	cpus[WINFO_LIST_MAX];	/* its CPUs, "0-3"; "" unknown */
	char	gpu_ids[WINFO_LIST_MAX];	/* its GPUs, "0,1" */
	char	memory_method[16];	/* cgroup2 cgroup1 watchdog none */
	char	cpu_method[16];		/* cpuset affinity; "" not said */
	char	gpu_method[16];		/* devices env; "" no GPUs */
	double	started;
	double	ends;		/* unix time the worker must be gone; 0 none */
	char	job[64];	/* batch job id, "" when local */
	char	backend[16];	/* local, slurm, ... */
};

struct worker_status {
	uint64_t beat;
	uint32_t running;
	uint32_t cores_used;
	uint64_t memory_used;
	uint32_t gpus_used;
	uint32_t gpus_held;	/* of gpus_used: kept by processes of ended
				 * tasks that SIGKILL has not ended (for
				 * over 10 s); not given to tasks */
	int	draining;
	uint32_t late;		/* tasks handed back so far because they
				 * could not end before the worker drains */
	double	time;
	/* process groups of running tasks: leader pid and its start time */
	size_t	npgroups;
	uint64_t pgroup[WDIR_PGROUPS_MAX][2];
	/* memory in use by running tasks: ID, attempt, bytes (last sample) */
	size_t	nmem;
	uint64_t mem[WDIR_TASKMEM_MAX][3];
};

void	winfo_encode(struct buf *b, const struct worker_info *w);
int	winfo_read(int dfd, const char *name, struct worker_info *w);
void	wstatus_encode(struct buf *b, const struct worker_status *s);
int	wstatus_read(int dfd, const char *name, struct worker_status *s);

/*
 * A worker's state as its directory shows it, for "spool workers",
 * "spool top", "spool wait-workers" and spoolfs's workers/WID/state
 * alike: exited or lost (spoold's markers), else no-status (its status
 * cannot be read), draining (its status says so, or spoold's drain
 * marker), gpus-held (GPUs kept by processes of ended tasks: it runs
 * what needs none of them), up.  wstate_read reads workers/WID/status
 * into st (zeroed when it cannot be read) from the descriptor of
 * workers/.
 */
enum wstate {
	WST_UP, WST_GPUS_HELD, WST_DRAINING, WST_NO_STATUS, WST_LOST,
	WST_EXITED, WST_NSTATES
};
extern const char *const wstate_name[WST_NSTATES];

enum wstate wstate_read(int wfd, const char *wid, struct worker_status *st);

void	wdir_aname(uint64_t id, uint32_t attempt, char *out, size_t size);
int	wdir_aname_parse(const char *name, uint64_t *id, uint32_t *attempt);

/*
 * Register: build the directory in tmp/ and rename it to
 * workers/NAME-XXXXXX (random suffix).  Returns an open descriptor of
 * the new directory and its WID in wid, or -1 with errno.
 */
int	wdir_create(struct spool *sp, const struct worker_info *w, char *wid,
	    size_t widsize);

/* An assignment: the task's spec plus attempt and placement. */
void	assign_encode(struct buf *b, const struct task_spec *t,
	    uint32_t attempt, const char *wid);
int	assign_decode(const char *data, size_t len, struct task_spec *t,
	    uint32_t *attempt, const char **why);
/*
 * A final task's record, tasks/SHARD/ID/spec: its final assignment, or
 * for a task that never ran the spec read from its bundle (no attempt:
 * *attempt 0).  A key of neither is refused.  0, or -1 with *why and
 * the line in *line (t is then freed).  Not validated (task_validate).
 */
int	final_spec_decode(const char *data, size_t len, struct task_spec *t,
	    uint32_t *attempt, const char **why, int *line);

#endif

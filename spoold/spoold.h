/*
 * spoold.h - the scheduler daemon's in-memory model.
 *
 * The files are the truth; this is an index of them, rebuilt at start
 * (recover.c) and kept in step with every rename spoold makes or sees.
 *
 *  - tasks: a table paged by ID (4096 tasks a page), 48 bytes a task,
 *    holding what scheduling needs; the spec itself stays on disk in
 *    its bundle (specs/FIRST) and is read once, when the task is placed.
 *    A page is freed when all its tasks are final.
 *  - ready queues: one min-heap per resource shape (cores, memory, GPUs,
 *    walltime), keyed by (priority, ID), so placement looks at one head
 *    per shape: a big task waiting for a big worker never blocks small
 *    ones behind it, and the cost of a placement does not grow with the
 *    number of queued tasks.
 *  - workers: registered workers, their resources and what spoold has
 *    committed to them.
 *  - deps: dependents of not-yet-final tasks (deps.c).
 */
#ifndef SPOOLD_H
#define SPOOLD_H

#include <stdint.h>
#include <sys/types.h>

#include "beatfile.h"
#include "buf.h"
#include "hostinfo.h"
#include "lease.h"
#include "result.h"
#include "spool.h"
#include "task.h"
#include "wdir.h"
#include "watch.h"

#define RESULT_MAX	(64u << 10)	/* the largest result file read */
/*
 * How long after spoold closed a file it read it waits before removing
 * it: on a FUSE mount (sshfs) the release of a closed file reaches the
 * filesystem after close(2) returns, and a high-level libfuse asked to
 * remove the file while that release is on its way hides it as
 * .fuse_hiddenNNN, and before 3.15 may keep it for good (libfuse issue
 * 746; Debian 12 has 3.14).  Bundles in specs/ (table.c) and requests
 * in control/ (control.c) are removed at a rescan at least this late.
 */
#define RELEASE_DELAY_MS 100

enum tstate {
	T_NONE,		/* no task with this ID in memory */
	T_WAITING,	/* dependencies not finished */
	T_QUEUED,	/* ready, in a shape heap */
	T_PLACED,	/* assignment in a worker's inbox (or running) */
	T_FINAL,	/* result accepted; kept until its page is freed */
};

#define TF_CANCEL	0x01	/* cancel requested */
#define TF_FAILED	0x02	/* final and not done (for dependents) */
#define TF_DEPS		0x04	/* has dependencies */
#define TF_CLAIMED	0x08	/* its worker claimed it: not moved (place.c) */
#define TF_REQUEUED	0x10	/* requeued/ID written: removed when final */
#define TF_REQUEUE_OWED	0x20	/* its requeued/ID could not be written */
#define TF_CANCEL_OWED	0x40	/* its cancel could not be written (its
				 * result, or its worker's cancel/ID.ATT):
				 * control.c asks again */

struct task {
	/*
	 * Bytes of memory asked (0: none), exact: rounded up to a MiB
	 * each, two tasks of "8GB" (7630 MiB) made more than the 15259
	 * MiB of a worker of "16GB", which runs both (it counts bytes).
	 */
	uint64_t memory;
	uint32_t bundle;	/* index in sd.bundles */
	uint32_t offset;	/* of its record in the bundle file */
	uint32_t len;		/* of its record */
	uint32_t attempt;	/* current (or last) attempt, 0: never placed */
	uint32_t walltime;	/* seconds */
	int32_t	worker;		/* index in sd.workers when placed, else -1 */
	uint32_t ndeps;		/* unfinished dependencies */
	int16_t	prio;
	uint16_t cores;
	uint16_t tries;		/* failed attempts so far */
	uint16_t retries;	/* failed attempts allowed to be retried */
	uint8_t	gpus;
	uint8_t	lost;		/* requeues after worker loss */
	uint8_t	state;		/* enum tstate */
	uint8_t	flags;
};

#define PAGE_BITS	12
#define PAGE_SIZE	(1u << PAGE_BITS)

struct page {
	struct task t[PAGE_SIZE];
	uint32_t live;		/* tasks not T_NONE and not T_FINAL */
	uint32_t used;		/* tasks not T_NONE */
};

struct shape {
	uint16_t cores;
	uint8_t	gpus;
	uint64_t memory;	/* bytes */
	uint32_t walltime;
	uint64_t *heap;		/* ((1000 - prio) << 40) | id */
	size_t	n, cap;
	uint64_t live;		/* tasks of this shape that are T_QUEUED */
};

struct bundle {
	uint64_t first;
	uint32_t count;
	uint32_t live;		/* tasks not yet final */
	int	fd;		/* cached, -1 */
};

/* what of a worker's reports spoold has to list (struct worker dirty) */
#define NEWS_DONE	1
#define NEWS_RETURNED	2
#define NEWS_ALL	(NEWS_DONE | NEWS_RETURNED)

struct worker {
	char	wid[WDIR_ID_MAX];
	struct worker_info info;
	int	dirfd;
	int	subfd[WS_NSUB];
	uint64_t beat;
	uint64_t beat_seen_ms;	/* our clock when beat last moved */
	/*
	 * Its wall clock minus ours, from the time in its last new beat
	 * (short by how late we read it: a beat and a cache time); its
	 * end (info.ends) is in its own clock (place.c).  clock_known: a
	 * beat with a time was read.
	 */
	double	clock_off;
	int	clock_known;
	struct beatfile_fails status_fails;	/* reads of its status */
	uint32_t cores_used;	/* committed: placed or running */
	uint64_t mem_used;	/* bytes */
	uint32_t gpus_used;
	uint32_t gpus_held;	/* its status: GPUs stuck with processes of
				 * ended tasks, not to be counted on */
	uint32_t ntasks;
	uint64_t *tasks;	/* IDs assigned to it */
	size_t	tasks_cap;
	int	draining;
	int	gone;		/* lost or exited: no more placements */
	int	exited;
	int	dirty;		/* NEWS_*: done/, returned/ may have news */
	int	half;		/* an acceptance whose final rename failed */
	int	held;		/* a hand-back whose requeued/ID failed */
	uint32_t late;		/* its status: tasks it handed back for
				 * want of time before its drain */
	uint32_t late_taken;	/* ... of them, hand-backs taken in */
	int	late_known;	/* its status was read once */
	struct news_watch { struct worker *w; int bit; } watch_done,
		watch_ret;	/* their inotify cookies */
	struct dirstamp st_done, st_ret, st_run;
	uint64_t finished;	/* tasks finished on it */
	uint64_t (*pgroups)[2];	/* its tasks' process groups, last beat */
	size_t	npgroups;
	int	kind;		/* index in cfg.kinds if started by scaling, else -1 */
	char	job[80];	/* its batch job ("" if none known) */
	uint64_t registered_ms;
	double	run_ms;		/* mean wall time of its tasks */
	uint64_t runs;		/* how many run_ms counts (0: none yet) */
};

struct counts {
	uint64_t waiting, queued, placed;
	uint64_t done, failed, cancelled, rejected;	/* since start */
	uint64_t requeued, retried;
	uint64_t workers_lost;	/* since start: lost, not gone as expected */
	uint64_t changes;	/* task state changes since start */
};

struct spoold {
	struct spool sp;
	char	*root_abs;	/* the spool's absolute path (job scripts) */
	struct lease lease;
	struct watch watch;
	int	sigfd;

	struct page **pages;
	size_t	npages;
	uint64_t low_id;	/* IDs below this are all final or absent */

	struct shape **shapes;	/* those with queued tasks, or not yet
				 * found empty (table.c) */
	size_t	nshapes;
	struct shape **shape_index;	/* open addressing by shape */
	size_t	shape_index_cap;	/* 0, or a power of two */

	struct bundle *bundles;
	size_t	nbundles, bundles_cap;

	struct worker **workers;
	size_t	nworkers;

	struct counts c;
	uint64_t finished_window[60];	/* finished per second, ring */
	uint64_t window_sec;

	/* pacing */
	uint64_t now;			/* now_ms() at the top of the loop */
	uint64_t next_rescan, rescan_ms;
	uint64_t next_beat;
	uint64_t lease_beaten;		/* now_ms() of the lease's last beat */
	uint64_t next_publish;
	int	incoming_dirty, control_dirty, workers_dirty, place_dirty;
	int	summary_dirty;
	int	rescan_due;	/* this pass also checks directory stamps */
	uint64_t incoming_due;	/* a dropped file may have settled (0) */
	struct dirstamp st_incoming, st_control, st_workers;
	int	recovering;	/* from the lease to the end of recovery */
	int	shutting_down;
	int	once;		/* --once: exit when idle (tests) */

	/* local backend */
	unsigned local_n;
	uint32_t local_cores;
	uint64_t local_memory;
	char	*worker_path;
	struct local_slot *local;
};

extern struct spoold sd;

/* table.c */
struct task *task_get(uint64_t id);
struct task *task_add(uint64_t id);
void	task_set_state(struct task *t, enum tstate s);
void	task_release(uint64_t id);
void	shape_push(uint64_t id, struct task *t);
/* The first task of the best shape that fits w (ahead: beyond its
 * free capacity, as far as its prefetch allows). */
int	shape_pop_best(struct worker *w, int ahead, uint64_t *id);
/* A task of shape s (no ID, no bundle), for what asks about tasks. */
void	shape_probe(const struct shape *s, struct task *probe);
/* Queued tasks no worker or kind could run (publish.c): how many, and
 * the shapes of them, up to max, in v (*nv of them). */
uint64_t shapes_unfit(const struct shape **v, size_t max, size_t *nv);
uint32_t bundle_add_mem(uint64_t first, uint32_t count);
void	bundle_task_final(struct task *t);
void	bundle_release(uint32_t idx);
int	bundle_live(uint64_t first);
void	bundle_removals(int all);
/* 0; -1 the spec can never be read (gone, damaged); -2 not now (ESTALE,
 * EIO: reported once, try later) */
int	bundle_read_spec(struct task *t, uint64_t id, struct task_spec *spec);

/* accept.c */
void	accept_scan(void);
void	accept_note(const char *name, uint32_t mask);
void	accept_recover(void);
void	accept_cleanup(void);
int	accept_cleanup_pending(void);
/* a flush failed: the specs of the sources waiting are written again */
void	accept_flush_failed(void);
int	accept_index(uint32_t bidx, int fd, uint32_t *done);

/* place.c */
void	place_all(void);
int	worker_fits(const struct worker *w, const struct task *t, int ahead);
int	worker_could_run(const struct worker *w, const struct task *t);
/* w's GPUs but those its status says are stuck (read in workers.c) */
uint32_t worker_gpus_usable(const struct worker *w);
void	worker_note_run(struct worker *w, const struct result *r);

/* finish.c */
/* 0: tasks/SHARD/ID is there (made now, or found); -1: not written
 * (said once), the task left as it was */
int	finish_final(uint64_t id, struct task *t, const struct result *r,
	    const struct task_spec *spec_or_null);
void	finish_worker_news(struct worker *w);
/* how a task came back to spoold's queue (finish_requeue) */
enum requeue_how {
	RQ_RETURNED,	/* handed back, or moved to another worker */
	RQ_LOST,	/* its lost worker had taken it: a loss, counted */
	RQ_UNCLAIMED	/* still in its lost worker's inbox/: not counted */
};
void	finish_requeue(uint64_t id, struct task *t, const struct worker *w,
	    enum requeue_how how, const char *why);
/* requeued/ID counting one loss more than t->lost (before the revoke
 * of a lost worker's assignment): 0, or -1 (said once) */
int	finish_loss_record(uint64_t id, struct task *t);
/* t was lost more than max-requeues times: worker-lost (w may be NULL) */
void	finish_gave_up(uint64_t id, struct task *t, const struct worker *w,
	    const char *why);
/* 0: cancelled, or its worker asked to; -1: neither could be written
 * (the task left as it was: ask again later) */
int	finish_cancel(uint64_t id, struct task *t, const char *why,
	    enum result_reason reason);
int	finish_final_exists(uint64_t id, struct result *r);
/* r (of a task left T_WAITING) could not be written: write it at a
 * later heartbeat (finish_retry) */
void	finish_final_later(uint64_t id, const struct result *r);
/* write the final results that could not be written before */
void	finish_retry(void);
void	finish_recover(void);
int	requeued_write(uint64_t id, struct task *t);
/* keep w's attempt ANAME in attempts/ (its work directory, then its
 * assignment FROM_SUB/ANAME as the spec): a retry, a hand-back, a
 * revoke from a worker that exited */
void	finish_archive(struct worker *w, int from_sub, const char *aname);

/* deps.c */
void	deps_add(uint64_t id, struct task *t, const struct task_spec *spec);
void	deps_final(uint64_t id, int ok, const char *why);
void	deps_check_holes(void);
/* cancel again the dependents whose cancel could not be written */
void	deps_retry(void);

/* workers.c */
void	workers_scan(void);
void	workers_beat_check(void);
/* Read its status (beat, draining, process groups, GPUs held). */
int	worker_read_status(struct worker *w);
struct worker *worker_by_index(int32_t i);
void	worker_assign(struct worker *w, uint64_t id, struct task *t);
void	worker_unassign(struct worker *w, uint64_t id, struct task *t);
/* inbox/X -> revoked/X: 1 revoked, 0 claimed or gone, -1 error (said). */
int	worker_revoke_unclaimed(struct worker *w, uint64_t id, uint32_t att);
void	workers_note(struct news_watch *n, uint32_t mask);
void	worker_lost(struct worker *w, const char *why);
/* spoold drains it (why: a word for the journal); marked in its dir */
void	worker_drain(struct worker *w, const char *why);
int	worker_process_ended(struct worker *w, const char *why);
void	worker_job_ended(struct worker *w, int cancelled);
void	workers_gc(void);
int	worker_index(const struct worker *w);
/*
 * spoold hears of w's changes (results, hand-backs) only by its rescans,
 * and w of spoold's (its next tasks) only by its own: w runs on another
 * host (another name or boot ID), or spoold has no inotify.
 */
int	worker_unwatched(const struct worker *w);

/* control.c */
void	control_scan(void);
void	control_removals(void);	/* spoold stopping */

void	recover_all(void);

/* main.c */
void	spoold_stop(const char *why, int clear_sizes);
void	spoold_lease_beat(void);

/* reload.c: SIGHUP */
void	spoold_reload(void);

/* local.c */
void	local_start(void);
void	local_reap(void);
void	local_stop(void);
void	local_tick(void);
uint64_t local_next(void);
void	local_kill(void);
int	local_running(void);

/* recover.c (also: periodic sweep of tmp/ and gc/) */
void	recover_sweep(void);
void	recover_beat(void);
/* A read recovery depends on failed: wait a rescan, then try it again. */
void	recover_wait(void);
/* err is of an entry gone or damaged, which waiting does not change */
int	recover_damage(int err);
/* Damage that recovery cannot go past: spoold stops (111), naming it. */
void	recover_stop_damaged(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
/* fsop_list, made again after recover_wait until it succeeds */
void	recover_list(int dfd, const char *name,
	    int (*fn)(void *, const char *, unsigned char), void *arg,
	    const char *what);

/* scale.c: how many worker jobs (jobs.c, jobs.h: the jobs themselves) */
void	scale_recover(void);
void	scale_tick(void);
void	scale_note(void);
void	scale_poll_soon(void);
void	scale_job_failed(int kind);
/*
 * A submission counted as failed had its job taken (jobs.c, doubts).
 * run: scale_failure_run() when the failure was counted; a failure of
 * a count since started again (a new size, a job that came up) is not
 * taken back from the new count.
 */
uint32_t scale_failure_run(int kind);
void	scale_submission_taken(int kind, uint32_t run);
void	scale_worker_registered(struct worker *w);
void	scale_worker_gone(struct worker *w);
void	scale_worker_left_idle(const struct worker *w);
/* A worker job not yet registered could run t (place.c). */
int	scale_worker_coming(const struct task *t);
/* Some kind has a size asked, or some job is out (table.c). */
int	scale_asked(void);
/* A kind with a size asked, or a job on its way, could run t. */
int	scale_could_start(const struct task *t);
void	scale_stop(int clear_sizes);
size_t	scale_active(void);
uint64_t scale_next(void);

/* publish.c */
void	publish_summary(int force);
void	count_finished(enum result_state st);

#endif

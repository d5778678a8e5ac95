/*
 * worker.h - ckworker's state.
 *
 * ckworker registers a directory under workers/ (wdir.h), beats in it,
 * runs the assignments spoold puts in its inbox, and commits each
 * outcome by renaming running/ID.ATT to done/ID.ATT after writing
 * work/ID.ATT/result.  It never reads the spool's queue.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "hostinfo.h"
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

struct job {
	char	name[WDIR_ANAME_MAX];	/* ID.ATTEMPT */
	uint64_t id;
	uint32_t attempt;
	struct task_spec spec;
	enum job_state state;
	pid_t	pid;
	uint64_t pstart;	/* its start time, for spoold (hostinfo.h) */
	double	start;		/* unix time */
	uint64_t start_ms;
	uint64_t deadline_ms;	/* walltime, 0 none */
	uint64_t kill_at_ms;	/* SIGKILL after the grace, 0 none */
	enum result_reason why_killed;	/* RR_EXIT when not killed */
	int	handback;	/* when it exits, hand it back */
	int	revoked;	/* spoold took it back: drop silently */
	uint32_t mem_mb;
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
	uint64_t mem_used_mb;
	uint32_t gpus_used;
	uint32_t slots_used;

	uint64_t beat;
	uint64_t now;
	uint64_t next_beat, next_rescan, rescan_ms;
	int	rescan_due;
	int	inbox_dirty, cancel_dirty, running_dirty;
	struct dirstamp st_inbox, st_cancel;

	uint64_t idle_timeout_ms;	/* 0: never */
	uint64_t idle_since;
	uint64_t death_timeout_ms;
	uint64_t spoold_beat, spoold_seen;
	uint64_t grace_ms;		/* SIGTERM to SIGKILL */
	uint64_t drain_grace_ms;	/* on SIGTERM, let tasks run this long */
	uint64_t drain_deadline;
	uint64_t ends_ms;		/* monotonic end of our walltime, 0 */

	int	draining;
	const char *drain_why;
	int	stopping;	/* leave as soon as nothing runs */
	int	lost;
};

extern struct ckworker wk;

/* inbox.c */
void	inbox_scan(void);
void	inbox_start_ready(void);
void	inbox_hand_back_pending(void);
void	cancel_scan(void);
struct job *job_find(uint64_t id, uint32_t attempt);
void	job_remove(struct job *j);

/* run.c */
int	run_start(struct job *j);
void	run_reap(void);
void	run_kill(struct job *j, enum result_reason why, int now);
void	run_deadlines(void);
void	run_check_revoked(void);
void	run_commit_pending(void);
uint64_t run_next_deadline(void);

#endif

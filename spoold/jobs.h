/*
 * jobs.h - the worker jobs spoold submitted, and what the batch system
 * says about them (jobs.c).  scale.c decides how many there should be.
 *
 * Each job is a record in jobs/ (jobrec.h), kept in step with what
 * spoold learns: submitted -> pending -> running (its worker
 * registered, or the queue says so) -> gone (it left the queue after
 * its worker ran, or after spoold cancelled it) or failed (it left the
 * queue before its worker ever registered, or the batch system put it
 * in an error state, or the submission itself failed).  A failed job's
 * record says why, with the last line of its output file where there
 * is one.  A job not yet seen in any listing (just submitted, or
 * recovered at start) is given JOBS_LIST_GRACE_MS to appear in one.
 */
#ifndef JOBS_H
#define JOBS_H

#include <stdint.h>

#include "jobrec.h"

struct worker;

#define JOBS_LIST_GRACE_MS	10000
#define JOBS_DOUBT_RECHECK_MS	1000	/* a doubt's second look (jobs.c) */

struct job {
	struct jobrec r;	/* as saved in jobs/ID */
	int	kind;		/* index in cfg.kinds, -1: a kind no longer
				   configured (still followed and cancelled) */
	enum backend backend;
	uint64_t seen_ms;	/* our clock: submitted, or last listed */
	int	listed;		/* seen in a listing since spoold started */
	struct worker *w;	/* its worker, while registered */
	int	cancelled;	/* spoold cancelled it */
	int	error;		/* listed in an error state: a failure */
	int	unstoppable;	/* a local job of another host: a cancel
				   cannot reach it (jobs.c, local_elsewhere) */
	char	cancel_why[64];
};

extern struct job **jobs;
extern size_t njobs;

void	jobs_recover(void);
/* Submit n worker jobs of kind k (as arrays where the kind may); 0 or -1. */
int	jobs_submit(int k, unsigned n);
void	jobs_cancel(struct job *j, const char *why);
/*
 * Cancel the n jobs of v (each once: no job twice), a batch system's in
 * one command where it can; jobs_cancel_all: every job out (a stop).
 */
void	jobs_cancel_these(struct job *const *v, size_t n, const char *why);
void	jobs_cancel_all(const char *why);
/* Record a job of batch kind k known only by its worker; NULL if not. */
struct job *jobs_adopt(const char *id, int k);
/* Publish j's record (after a change). */
void	jobs_save(const struct job *j);
/* Ask each batch system in use about our jobs; update their states. */
void	jobs_poll(void);
void	jobs_forget_old(void);
struct job *jobs_find(const char *id);
/*
 * Jobs still in a queue or with a live worker (a clean stop waits), less,
 * while stopping, those no cancel can reach (local jobs of another host).
 */
size_t	jobs_outstanding(void);
/* Say which jobs are still out (a stop that gives up waiting). */
void	jobs_report_outstanding(void);
/*
 * (scale.c) j's worker left idle and its fixed pool has not replaced
 * it: its record is kept until then.
 */
int	scale_job_released(const struct job *j);

#endif

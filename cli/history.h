/*
 * history.h - what the journal says happened: tasks, attempts, workers
 * and the queue over time, built from the events of a jlog (journal.h)
 * for "spool report" (and its tests).
 *
 * The model is built in one pass over the events in time order:
 *
 *  - a task: its name (submitted), times of submission and outcome,
 *    outcome (final: state, reason, exit, message, run time, peak
 *    memory), attempts;
 *  - an attempt (task, attempt number): worker, start and end, outcome.
 *    From the worker's started/finished events; when those are missing
 *    (a segment removed, a worker that could not write), from spoold's
 *    final event, which carries start, end and worker; an attempt whose
 *    worker was lost ends at its requeued event;
 *  - a worker: host and resources (registered), when it was up, how
 *    long its slots and cores were busy;
 *  - counts over time: every task is in one state (waiting, queued,
 *    placed, running, final); a checkpoint (state events) sets the
 *    state of tasks whose earlier events were rotated away.
 */
#ifndef HISTORY_H
#define HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "journal.h"

enum h_outcome { HO_DONE, HO_FAILED, HO_CANCELLED, HO_LOST, HO_RUNNING,
	HO_N };

extern const char *const h_outcome_name[HO_N];

/* states of a task over time (for the curves) */
enum h_state { HS_UNKNOWN, HS_WAITING, HS_QUEUED, HS_PLACED, HS_RUNNING,
	HS_FINISHING, HS_FINAL, HS_N };

struct h_attempt {
	uint64_t id;
	uint32_t att;
	int32_t	worker;		/* index in workers, -1 unknown */
	uint32_t cores;
	uint8_t	outcome;	/* enum h_outcome */
	double	start, end;	/* end 0: no end seen */
	uint64_t peak;		/* bytes, 0 unknown */
	uint32_t row;		/* slot row in the task stream */
};

struct h_task {
	uint64_t id;
	char	*name;
	double	submitted;	/* 0 unknown */
	double	final_t;	/* 0: not final */
	int8_t	state;		/* result_state of the outcome, -1 none */
	int8_t	reason;		/* result_reason, -1 none */
	int8_t	hs;		/* enum h_state now */
	int	exit_code;	/* -1 none */
	int	signal;
	char	*msg;
	double	wall;		/* of the final attempt, -1 unknown */
	uint64_t peak;		/* of the final attempt, bytes, 0 unknown */
	uint32_t att;
	int32_t	worker;
};

struct h_worker {
	char	*wid;
	char	host[64];
	uint32_t cores, slots, gpus;
	uint64_t memory;
	double	up, down;	/* registered, and lost/exited (0: not) */
	double	busy_slot_s;	/* sum of attempt durations */
	double	busy_core_s;	/* the same times their cores */
	uint32_t rows;		/* slots used in the task stream */
	uint32_t row0;		/* its first row */
	uint64_t done, failed;
	int	lost;
};

#define H_BUCKETS	400

struct history {
	struct h_task *tasks;	/* in ID order after history_build */
	size_t	ntasks;
	struct h_attempt *att;
	size_t	natt;
	struct h_worker *workers;
	size_t	nworkers;
	double	t0, t1;		/* first and last event */
	uint64_t count[RS_NSTATES];	/* final outcomes */
	uint64_t rejected_files;	/* refused files without an ID */
	uint64_t requeued, retried;
	size_t	events;
	/* time-weighted means per bucket of [t0, t1] */
	double	queued[H_BUCKETS], running[H_BUCKETS], waiting[H_BUCKETS];
	double	peak_queued, peak_running;
	uint32_t rows;		/* task stream rows (all workers' slots) */
	/* private: lookups */
	uint64_t *task_ix, *att_ix, *wk_ix;
	size_t	task_cap, att_cap, wk_cap;
	uint64_t hs_count[HS_N];
};

void	history_build(struct history *h, const struct jlog *log);
void	history_free(struct history *h);
/* The task with this ID, or NULL. */
const struct h_task *history_task(const struct history *h, uint64_t id);

#endif

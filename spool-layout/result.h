/*
 * result.h - the result record of a task attempt, tasks/SHARD/ID/result.
 *
 * One "key: value" line per field (rec.h), so it reads with grep, awk,
 * or yaml.safe_load:
 *
 *	id: 1042
 *	attempt: 1
 *	state: failed          done | failed | cancelled | rejected
 *	reason: memory         exit signal memory walltime cancelled
 *	                       worker-lost dependency rejected spawn
 *	exit: 137              exit status, when the task exited
 *	signal: 9              signal that ended it, when it was killed
 *	message: "..."         what happened, in words
 *	worker: node7-3fa2     host: node7   job: 123456
 *	start: 1700000000.125  end: ...      wall: 1.503 (seconds)
 *	utime: 1.2  stime: 0.1 maxrss: 104857600 (bytes)
 *	memory_peak: 209715200 memory_limit: 268435456 (bytes)
 *	memory_method: cgroup1  cgroup2 | cgroup1 | watchdog | none
 *	cores: 2  cpus: "4-5"  cpu_method: cpuset | affinity
 *	gpus: 1  gpu_ids: "0"  gpu_method: devices | env (a GPU worker's)
 *	gpu_util: 87.5 (mean %)  gpu_memory_peak: 1073741824 (bytes)
 *
 * maxrss is the largest process (wait4); memory_peak is the whole
 * task: its cgroup's peak, or the largest sum of its processes' RSS
 * the watchdog saw.  utime and stime cover the whole task as far as
 * the method can tell (ckworker(1)).  gpu_util and gpu_memory_peak
 * appear only where NVML could be asked.
 *
 * Readers ignore keys they do not know, so records can grow.
 */
#ifndef RESULT_H
#define RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum result_state { RS_DONE, RS_FAILED, RS_CANCELLED, RS_REJECTED, RS_NSTATES };

enum result_reason {
	RR_EXIT, RR_SIGNAL, RR_MEMORY, RR_WALLTIME, RR_CANCELLED,
	RR_WORKER_LOST, RR_DEPENDENCY, RR_REJECTED, RR_SPAWN, RR_DISK,
	RR_NREASONS
};

extern const char *const result_state_name[RS_NSTATES];
extern const char *const result_reason_name[RR_NREASONS];

struct result {
	uint64_t id;
	uint32_t attempt;
	enum result_state state;
	enum result_reason reason;
	int	exit_code;	/* -1 if it did not exit */
	int	signal;		/* 0 if none */
	char	*message;
	char	*worker;
	char	*host;
	char	*job;
	double	start;
	double	end;
	double	utime;
	double	stime;
	uint64_t maxrss;	/* bytes */
	uint64_t memory_peak;	/* bytes, 0 unknown */
	uint64_t memory_limit;	/* bytes, 0 none */
	char	*memory_method;
	char	*cpu_method;	/* cpuset, affinity; NULL: not said */
	char	*gpu_method;	/* devices, env; NULL: not said */
	uint32_t cores;
	char	*cpus;
	uint32_t gpus;
	char	*gpu_ids;
	double	gpu_util;	/* mean %, < 0 unknown */
	uint64_t gpu_memory_peak;	/* bytes */
};

void	result_init(struct result *r);
void	result_free(struct result *r);
void	result_encode(struct buf *b, const struct result *r);
/* 0, or -1 with a static reason in *why. */
int	result_decode(const char *data, size_t len, struct result *r,
	    const char **why);

/* How it ended, in words: "done (exit)", "failed (exit 1)". */
void	result_how(const struct result *r, char *how, size_t size);

/*
 * The exit status "spool wait" reports for a result: 0 for done, the
 * task's exit status, 128+signal, 124 walltime, 137 memory, 130
 * cancelled, 75 worker lost or dependency, 65 rejected.
 */
int	result_exit_status(const struct result *r);

#endif

/*
 * batch.h - what the batch system says about the job this worker runs
 * in: its kind and ID, the CPUs and memory it was given on this node,
 * and when it ends.  See batch.c.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>
#include <stdint.h>

struct batch {
	char	kind[16];	/* slurm sge pbs lsf, "" outside a job */
	char	job[64];	/* its job ID, as people see it */
	char	qid[64];	/* the ID to query it by */
	uint32_t cpus;		/* CPUs on this node, 0 unknown */
	char	cpus_from[64];
	uint64_t memory;	/* bytes, 0 unknown */
	char	memory_from[64];
	double	ends;		/* unix time, 0 unknown or none */
	char	ends_from[160];	/* where it came from, or why unknown */
};

/*
 * Look at the environment (and, if want_end, ask the batch system for
 * the end time, each query bounded by timeout_ms).  kind: NULL or
 * "auto" to detect, "none" to ignore the batch system, or one of the
 * kinds to force it.  Never fails: what cannot be learnt stays 0 and
 * *_from says why.
 */
void	batch_detect(const char *kind, int want_end, uint64_t timeout_ms,
	    struct batch *b);

/*
 * Parsers of the batch systems' answers (tests/unit/test_batch.c).
 * Each returns 1 with the value, 0 when the answer says there is no
 * limit, -1 when it cannot be understood.
 */
int	batch_slurm_left(const char *squeue_L, uint64_t *seconds);
int	batch_sge_h_rt(const char *qstat_j, uint64_t *seconds);
int	batch_lsf_left(const char *bjobs_time_left, uint64_t *seconds);
/* qstat -f: the limit, and the elapsed time (resources_used) if shown */
int	batch_pbs_walltime(const char *qstat_f, uint64_t *limit,
	    uint64_t *used);

#endif

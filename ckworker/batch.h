/*
 * batch.h - what the batch system says about the job this worker runs
 * in: its kind and ID, the CPUs and memory it was given on this node,
 * and when it ends.  See batch.c.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>
#include <stdint.h>

struct buf;

struct batch {
	char	kind[16];	/* slurm sge pbs lsf, "" outside a job */
	char	job[64];	/* its job ID */
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
 * Run argv (looked up in PATH) with stdin and stderr on /dev/null and
 * capture up to 64 KiB of its standard output; kill its process group
 * if it runs longer than timeout_ms.  0 if it exited 0, else -1 with a
 * reason in why ("timed out after 10 s", "not found", "exit 1").
 */
int	batch_run(char *const argv[], uint64_t timeout_ms, struct buf *out,
	    char *why, size_t whysize);

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

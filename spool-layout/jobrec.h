/*
 * jobrec.h - the record of one batch job spoold submitted, jobs/ID.
 *
 *	id: 4211_2             the batch system's ID (array element: _N
 *	kind: gpu               on Slurm, .N elsewhere; local.PID locally)
 *	backend: slurm
 *	submitted: 1763822222.125
 *	state: pending          pending | running | gone | failed
 *	reason: Resources       why the batch system keeps it pending
 *	worker: 1               its worker registered (once, ever)
 *	host: login1            local jobs: the host they run on,
 *	boot: 4f1c...           its boot id (hostinfo.h),
 *	pstart: 123456          and the process's start time: a PID alone
 *	                        may name another process after spoold or
 *	                        the host restarted
 *	idle: 1763822522.500    when spoold saw its worker leave idle
 *	                        (after --idle-timeout, its exited marker
 *	                        says so): a fixed pool does not replace it
 *	                        while no work waits for its kind
 *	why: "..."              how it ended, when that is worth saying
 *	script: "script.T@K.sh" a failed submission that may have taken a
 *	                        job all the same: the script it is looked
 *	                        for by (spoold/jobs.c, doubts); a job found
 *	                        removes this record
 *
 * Only spoold writes these (fsop_publish, so readers never see half a
 * record); "spool workers" reads them to show pending jobs and why
 * jobs failed.  Records of ended jobs are kept JOBREC_KEEP_S, then
 * removed with the job's script (jobs/BASE.sh, one per submission).
 */
#ifndef JOBREC_H
#define JOBREC_H

#include <stdint.h>

#include "buf.h"
#include "config.h"

#define JOBREC_ID_MAX	80
#define JOBREC_WHY_MAX	400
#define JOBREC_KEEP_S	3600
#define JOBREC_SCRIPT_MAX 192	/* a job script's name in jobs/ */

enum jstate { JS_PENDING, JS_RUNNING, JS_GONE, JS_FAILED, JS_NSTATES };

extern const char *const jstate_name[JS_NSTATES];

struct jobrec {
	char	id[JOBREC_ID_MAX];
	char	kind[KIND_NAME_MAX];
	char	backend[16];
	double	submitted;
	enum jstate state;
	char	reason[64];
	int	had_worker;
	char	host[64];
	char	boot[48];	/* local jobs: host_boot_id() */
	uint64_t pstart;	/* local jobs: host_pid_start(); 0 unknown */
	double	idle;		/* its worker left idle then; 0 it did not */
	char	why[JOBREC_WHY_MAX];
	char	script[JOBREC_SCRIPT_MAX];	/* failed: its doubt's, or "" */
};

void	jobrec_encode(struct buf *b, const struct jobrec *j);
/* 0, or -1 if the record lacks id, kind or state. */
int	jobrec_decode(const char *data, size_t len, struct jobrec *j);
/* Read jobs/NAME (dfd is the jobs/ directory); 0 or -1 with errno. */
int	jobrec_read(int dfd, const char *name, struct jobrec *j);

/* The part of an ID before an array index ("4211" of "4211_2"). */
void	jobrec_base(const char *id, char *out, size_t size);
/* An ID is 1-79 characters of [A-Za-z0-9_.-] (a file name in jobs/). */
int	jobrec_id_ok(const char *id);

#endif

/*
 * submit.h - submitting tasks: what "spool submit", "spool map" and the
 * FUSE filesystem share.
 *
 * submit_tasks() validates every task (unless the caller did:
 * SUBMIT_VALIDATED), checks that each dependency names
 * an ID already claimed, or a task before it in t (after_item: a list's
 * task that names them), claims the tasks' IDs (ids.h), makes the
 * latter IDs (task_after_items), writes one
 * bundle (bundle.h) through tmp/, flushes it, renames it to
 * incoming/FIRST.bundle and flushes incoming/.  When it returns 0 the
 * tasks' id fields are set and the submission survives a crash of this
 * host; spoold has not necessarily seen it yet.  A refused submission
 * claims no ID and leaves nothing behind.
 */
#ifndef SUBMIT_H
#define SUBMIT_H

#include <stddef.h>

#include "spool.h"
#include "task.h"

#define SUBMIT_INVALID	(-1)	/* a task is not acceptable: why says which */
#define SUBMIT_ERROR	(-2)	/* the spool could not be written: why, errno */

#define SUBMIT_VALIDATED 0x1	/* flags: every task passed task_validate */

int	submit_tasks(struct spool *sp, struct task_spec *t, size_t n,
	    unsigned flags, char *why, size_t size);

#endif

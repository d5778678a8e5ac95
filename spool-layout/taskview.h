/*
 * taskview.h - where every task of a spool is, read from the files
 * alone and kept fresh by cheap rescans.
 *
 * This is the index behind the FUSE filesystem (spoolfs(1)); it derives
 * a task's state exactly as "spool status" does (cli/query.c), in the
 * order a task moves:
 *
 *   incoming/FIRST.bundle, accepting/FIRST, accepting/ID.drop  submitted
 *   specs/FIRST                  queued, or waiting while one of its
 *                                dependencies has no result yet
 *   workers/W/inbox/ID.ATT       placed
 *   workers/W/running/ID.ATT     running
 *   workers/W/done/ID.ATT        finishing
 *   tasks/SHARD/ID/result        done, failed, cancelled or rejected
 *   (an ID claimed but in none of these: unknown)
 *
 * taskview_refresh() stats each of these directories and lists only
 * those whose stamp moved (watch.h), earliest stage first, so that a
 * task moving forward while the view is refreshed is seen at least
 * once (twice at worst, and then the later place wins), never lost.
 * What cannot change is cached: bundle headers (a bundle is written
 * once and renamed, never rewritten), the record offsets and the
 * dependencies of a bundle (read once, the first time they are asked
 * for), and final states (a result never changes once it appears).
 *
 * Nothing here writes to the spool.  Calls must be serialised by the
 * caller (spoolfs holds one mutex around every call).
 */
#ifndef TASKVIEW_H
#define TASKVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "spool.h"
#include "wdir.h"

enum tv_state {
	TV_UNKNOWN, TV_SUBMITTED, TV_QUEUED, TV_WAITING, TV_PLACED,
	TV_RUNNING, TV_FINISHING, TV_DONE, TV_FAILED, TV_CANCELLED,
	TV_REJECTED, TV_NSTATES
};

/* The words "spool status" prints: "unknown", "submitted", ... */
extern const char *const tv_state_name[TV_NSTATES];

/* A final state: done, failed, cancelled or rejected. */
#define TV_FINAL(s)	((s) >= TV_DONE && (s) < TV_NSTATES)

struct tv_task {
	enum tv_state state;
	uint32_t attempt;		/* placed, running, finishing */
	char	wid[WDIR_ID_MAX];	/* the worker holding it, or "" */
};

struct taskview;

struct taskview *taskview_new(struct spool *sp);
void	taskview_free(struct taskview *tv);

/*
 * Stat the directories, list those that changed; 1 if anything did.
 * Failures to list are not fatal (the next refresh tries again); they
 * are reported with msg_once.
 */
int	taskview_refresh(struct taskview *tv);
/* Forget every directory stamp: the next refresh lists everything. */
void	taskview_touch(struct taskview *tv);

/* The next ID that would be claimed: IDs below it exist. */
uint64_t taskview_end(struct taskview *tv);

/* 1 and *t if the task exists (its ID was claimed), else 0. */
int	taskview_get(struct taskview *tv, uint64_t id, struct tv_task *t);

/*
 * 1 and *st (a final state) if the task is finished, read from its
 * result (cached from then on); 0 if it is not finished.
 */
int	taskview_final(struct taskview *tv, uint64_t id, enum tv_state *st);

/*
 * The IDs of the tasks in state st, in increasing order (malloc'ed into
 * *ids); st == TV_NSTATES: every task the spool holds (finished or not;
 * claimed IDs never submitted are not included).  TV_UNKNOWN lists
 * nothing.
 */
size_t	taskview_list(struct taskview *tv, enum tv_state st, uint64_t **ids);

/*
 * The task's record from the latest file that holds it: tasks/SHARD/ID/
 * spec when finished, the assignment in its worker's directory when
 * placed, else its record in the bundle.  0, or -1 with errno (ENOENT:
 * no such record, for example a dropped file not yet accepted).
 */
int	taskview_spec(struct taskview *tv, uint64_t id, struct buf *out);

/* The worker directories (WIDs) in workers/, sorted; *wids malloc'ed. */
size_t	taskview_workers(struct taskview *tv, char ***wids);

#endif

/*
 * taskview.h - where every task of a spool is, read from the files
 * alone and kept fresh by cheap rescans.
 *
 * This is the index behind the FUSE filesystem (spoolfs(1)); it derives
 * a task's state as "spool status" does (cli/query.c), in the order a
 * task moves:
 *
 *   incoming/FIRST.bundle, accepting/FIRST, accepting/ID.drop  submitted
 *   accepting/FIRST.rejected     submitted, shown as rejected (owed:
 *                                a refused bundle's IDs, whose results
 *                                spoold owes and has not written yet)
 *   specs/FIRST                  queued, or waiting while one of its
 *                                dependencies is not final yet
 *   workers/W/inbox/ID.ATT       placed
 *   workers/W/running/ID.ATT     running
 *   workers/W/done/ID.ATT        finishing
 *   tasks/SHARD/ID/result        done, failed, cancelled or rejected
 *   (an ID claimed but in none of these: unknown)
 *
 * A later stage wins over an earlier one (a task seen in specs/ and in
 * a worker's running/ is running; a final task is final even while a
 * stale done/ entry is left behind it), and of several placements the
 * highest attempt wins.
 *
 * taskview_refresh() stats each directory it reads and lists only those
 * whose stamp moved (watch.h: dirstamp_changed, which also lists every
 * directory at least every DIRSTAMP_FORCE rescans).  The directories
 * are incoming/, accepting/, specs/, workers/ and each worker's inbox/,
 * running/ and done/, ids/ (one readlink past the end of the claim
 * chain), tasks/ (for new shards) and the shards tasks/SHARD that still
 * hold a claimed ID not known to be final.  A shard whose every claimed
 * ID is final is never looked at again: a result never changes once it
 * appears, and the final state read from it is cached.  Cached for as
 * long as their file is listed: a bundle's header, and (read the first
 * time they are asked for) the offsets of its records and the
 * dependencies of its tasks; a bundle is written once and renamed,
 * never rewritten.  So a refresh costs one stat per directory plus one
 * listing per directory that changed, and nothing per task.
 *
 * inotify (when enabled, see watch.h) only tells the caller when to
 * refresh: taskview_fd() is readable when a watched directory changed
 * on this host.  Changes made by other hosts are found by the next
 * refresh whatever inotify says.
 *
 * Nothing here writes to the spool.  The view is not thread-safe: one
 * thread uses it (spoolfs runs a single-threaded event loop).
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
	/*
	 * An ID of a refused bundle whose "rejected" result spoold owes
	 * (accepting/FIRST.rejected): its outcome is decided, but state
	 * stays TV_SUBMITTED, not final, until the result is written, for
	 * what reads tasks/SHARD/ID (it is not there yet).
	 */
	int	owed;
};

/* The state to show for t: an owed rejection shows as rejected. */
#define TV_SHOWN(t)	((t)->owed ? TV_REJECTED : (t)->state)

struct taskview;

/*
 * A view of sp (which must stay open while the view lives).  inotify:
 * 1 use it as a hint, 0 rescans only, -1 as $CKSPOOL_NO_INOTIFY says.
 * The first refresh lists everything.
 */
struct taskview *taskview_new(struct spool *sp, int inotify);
void	taskview_free(struct taskview *tv);

/*
 * Stat the directories, list those that changed, drain inotify; 1 if
 * anything the view holds changed, else 0.  Failures to list are not
 * fatal (the next refresh tries again); they are reported once with
 * msg_once.
 */
int	taskview_refresh(struct taskview *tv);
/* Forget every directory stamp: the next refresh lists everything. */
void	taskview_touch(struct taskview *tv);
/* The inotify descriptor (readable: refresh soon), or -1. */
int	taskview_fd(const struct taskview *tv);

/* The next ID that would be claimed: every ID below it was claimed. */
uint64_t taskview_end(const struct taskview *tv);

/*
 * 1 and *t if the ID was claimed (t->state may be TV_UNKNOWN: claimed
 * but not seen anywhere yet), 0 if it was not.  The final state is
 * read from the task's result the first time it is asked for.
 */
int	taskview_get(struct taskview *tv, uint64_t id, struct tv_task *t);

/*
 * The IDs of the tasks in state st (as TV_SHOWN shows it), in
 * increasing order, malloc'ed into *ids (free it even when 0 is
 * returned).  st == TV_NSTATES: every task
 * the spool holds, finished or not (claimed IDs not seen anywhere are
 * not included).  TV_UNKNOWN lists nothing.
 */
size_t	taskview_list(struct taskview *tv, enum tv_state st, uint64_t **ids);

/*
 * The task's record from the latest file that holds it: tasks/SHARD/ID/
 * spec when final, the assignment in its worker's directory when
 * placed, else its record in its bundle.  0, or -1 with errno (ENOENT:
 * no record, for example a dropped file not yet accepted, or a task
 * that moved on between the refresh and the read).
 */
int	taskview_spec(struct taskview *tv, uint64_t id, struct buf *out);

/*
 * Which of the n claimed IDs (ids sorted, ascending) are gone for good:
 * removed by "spool purge", or claimed by a submitter that never wrote
 * its submission?  Looked at on disk, in the order a task moves, so
 * that none moving on meanwhile is taken for gone: incoming/,
 * accepting/ and specs/ each listed once, each bundle's header read
 * once (the ID in no bundle of them), then the task's directory in
 * tasks/ (not final; a stat each).  None while accepting/ holds an owed
 * refusal (FIRST.rejected: those IDs are in no bundle until their
 * results are written) or a bundle whose header cannot be read: which
 * IDs it holds is not known.  An ID whose submission is being written
 * (claimed, its bundle not yet renamed into incoming/) cannot be told
 * from one never written; whoever was given an ID was given it after
 * its submission was written.  gone[i] is set to 1 for each one gone,
 * 0 otherwise; returns how many are gone.
 */
size_t	spool_tasks_gone(struct spool *sp, const uint64_t *ids, size_t n,
	    unsigned char *gone);

/*
 * Is id, claimed and in no state the view holds (TV_UNKNOWN), gone for
 * good (spool_tasks_gone)?  1 gone, 0 not (or not known to be).  The
 * view itself is left as it was.
 */
int	taskview_gone(struct taskview *tv, uint64_t id);

/* The worker directories (WIDs) in workers/, sorted; *wids malloc'ed,
 * each string too (free with strv_free). */
size_t	taskview_workers(struct taskview *tv, char ***wids);

#endif

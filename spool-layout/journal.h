/*
 * journal.h - the event journal: the history of every state change of
 * tasks, workers and batch jobs, in SPOOL/journal/, one line per event.
 *
 * The spool directories are the truth; the journal is history.  Nothing
 * reads it to decide anything, so it is never flushed to disk (no
 * fsync), a crash may lose its last tenth of a second, and removing old
 * segments never loses state.  spool top, spool report and spool
 * journal read it; so can grep, awk and Python (spool-layout(5)).
 *
 * Line format:
 *
 *	TIME HOST SUBJECT ID EVENT [KEY=VALUE]...
 *	1795309223.158 node7 task 42 started att=1 worker=node7-3fa2c1
 *
 *   TIME     Unix seconds with milliseconds, the writer's wall clock
 *            (worker events: the worker host's clock)
 *   HOST     the writer's short host name
 *   SUBJECT  task, worker, job or spoold
 *   ID       task ID (or FIRST-LAST in a checkpoint), WID, job ID, "-"
 *   VALUE    a bare word [A-Za-z0-9_.:/@+,%-]+, or a double-quoted
 *            string with the escapes of rec.h (\\ \" \n \t \r \xHH)
 *
 * Python: t, host, subject, ident, event, *kv = shlex.split(line).
 *
 * Files (segments): journal/START.PROG.HOST.PID.RAND, START being the
 * Unix time in milliseconds (13 digits) at which the segment was begun.
 * Everything after the first dot names the writer: one process.  Each
 * segment has exactly one writer, which appends whole lines with
 * write(2), so lines from different hosts never interleave, also on
 * NFS, and no lock is needed.  A reader merges all segments by time
 * and ignores a last line without a newline (being written, or torn by
 * a failed write; after a failed write the writer starts a new
 * segment, so a torn line is always the last of its file).
 *
 * Writing costs no system call per event: events are formatted into a
 * buffer and written by journal_flush(), which the event loops call
 * once per pass and which writes at most every JOURNAL_FLUSH_MS (or
 * when JOURNAL_PENDING_MAX bytes wait), and at exit.
 *
 * Bounds: a writer starts a new segment after JOURNAL_SEGMENT_BYTES
 * (or daemon: journal-size / 16, if smaller) or JOURNAL_SEGMENT_AGE_S.
 * spoold keeps the whole journal under daemon: journal-size: it first
 * writes a checkpoint (the state of every live task and worker, so the
 * journal that remains is complete from there on), then removes the
 * oldest closed segments (journal_rotate).
 */
#ifndef JOURNAL_H
#define JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "result.h"
#include "spool.h"

#define JOURNAL_DIR		"journal"
#define JOURNAL_LINE_MAX	2048	/* longer lines are cut (cut=1) */
#define JOURNAL_VALUE_MAX	400	/* a quoted value is cut at this */
#define JOURNAL_FLUSH_MS	100
#define JOURNAL_PENDING_MAX	(64u << 10)
#define JOURNAL_SEGMENT_BYTES	(8u << 20)
#define JOURNAL_SEGMENT_MIN	(64u << 10)
#define JOURNAL_SEGMENT_AGE_S	3600
/* a segment not written for this long is closed even if newest */
#define JOURNAL_IDLE_S		(2 * JOURNAL_SEGMENT_AGE_S)
#define JOURNAL_SEGMENTS_KEEP	10000	/* rotation keeps at most this many */
#define JOURNAL_NAME_MAX	128

/* ---- writing (one writer per process) ---- */

/*
 * Start writing events of program prog (spoold, ckworker) into sp's
 * journal.  No file is made until there is something to write.  The
 * pending events are written at exit (by this process, not a forked
 * child).  Returns 0, or -1 if the spool has no journal directory.
 * sp must stay valid while the journal is open: a failure to write is
 * reported once, but not when the spool itself is gone (spool_alive).
 */
int	journal_open(const struct spool *sp, const char *prog);
/* Write what is pending and stop writing; events after it are dropped. */
void	journal_close(void);
int	journal_is_open(void);

/*
 * One event.  fmt (may be NULL) gives the KEY=VALUE fields; a value
 * that may hold spaces or quotes goes through journal_q().
 */
void	journal_event(const char *subject, const char *id, const char *event,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	journal_task(uint64_t id, const char *event, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	journal_worker(const char *wid, const char *event, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));
void	journal_job(const char *job, const char *event, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/*
 * A task attempt's outcome: "task ID EVENT att= worker= host= state=
 * reason= exit= signal= start= end= wall= utime= stime= maxrss= peak=
 * cores= gpus= msg=" from a result record (fields it has).
 */
void	journal_result(const char *event, const struct result *r);

/*
 * s as a journal value: itself if a bare word, else quoted and cut at
 * JOURNAL_VALUE_MAX.  The result lives in one of 8 rotating static
 * buffers: use it in the call that formats the event.
 */
const char *journal_q(const char *s);

/* Write pending events if JOURNAL_FLUSH_MS passed (or force). */
void	journal_flush(int force);
/* Begin a new segment with the next write (checkpoints start one). */
void	journal_new_segment(void);
/* The current segment's name, "" before the first write (tests). */
const char *journal_segment_name(void);

/* ---- reading ---- */

struct jevent {
	double	t;
	uint32_t seq;		/* order of reading, for a stable sort */
	const char *host;
	const char *subject;
	const char *id;
	const char *event;
	const char *kv;		/* "KEY=VALUE ..." or "" */
};

struct jlog {
	struct jevent *ev;
	size_t	n, cap;
	char	**texts;	/* segment contents, parsed in place */
	size_t	ntexts, tcap;
	size_t	segments;	/* segment files read */
	uint64_t bytes;		/* bytes read */
	size_t	torn;		/* last lines without a newline, skipped */
	size_t	bad;		/* malformed lines, skipped */
};

#define JLOG_INIT { NULL, 0, 0, NULL, 0, 0, 0, 0, 0, 0 }

/*
 * Parse one line (without its newline) in place: 0, or -1 if malformed
 * (the line is then unchanged).
 */
int	journal_parse_line(char *line, struct jevent *e);

/*
 * Read every segment of the journal directory dfd into log, sorted by
 * time (stable: lines of one segment keep their order).  0 or -1 with
 * errno (a segment that disappears while read is skipped).
 */
int	journal_load(int dfd, struct jlog *log);
/* Add the complete lines of text (taken over by log) and count torn. */
void	jlog_add_text(struct jlog *log, char *text, size_t len);
void	jlog_sort(struct jlog *log);
void	jlog_free(struct jlog *log);

/*
 * A field of an event: 1 and its decoded value in out (cut to size),
 * or 0 if the event has no such key.
 */
int	jev_get(const struct jevent *e, const char *key, char *out,
	    size_t size);
/* A numeric field: 1 with *out, 0 if absent or not a number. */
int	jev_num(const struct jevent *e, const char *key, double *out);

/*
 * Following the journal (spool journal -f, spool top): each call reads
 * what was appended to each segment since the previous call, complete
 * lines only.  On the first call at most tail_bytes of each segment
 * (its end) are read.  A call costs a stat of the directory and one of
 * each open segment (a writer's newest, written in the last
 * JOURNAL_IDLE_S), and a listing only when the directory changed; the
 * first call and every JTAIL_FULL_EVERY-th list and stat every segment
 * (NFS attribute caches).  -1 with errno if the directory's stat or
 * listing failed (nothing is forgotten then), or if a segment could not
 * be stat'd, opened or read (unread names the first such; the others
 * are read, and what it was not read of is read again by the next
 * call).  A segment whose first read failed is read by a later call
 * as the first would have: its last tail_bytes (of the first call) as
 * they are then; where late is set, its events go there, not to log
 * (spool journal -n prints only the last N of them).
 */
#define JTAIL_FULL_EVERY	20
#define JTAIL_SETTLE_S		2	/* a directory mtime's tick, at most */

struct jtail_seg;
struct jtail {
	struct jtail_seg *segs;
	size_t	n;
	int	started;
	unsigned passes;
	int	listed;		/* the listing is as of dir_mtime */
	double	dir_mtime;
	char	unread[JOURNAL_NAME_MAX];	/* "", or a segment not read */
	struct jlog *late;	/* NULL, or for the late first reads */
};

#define JTAIL_INIT { NULL, 0, 0, 0, 0, 0, "", NULL }

int	jtail_read(int dfd, struct jtail *t, struct jlog *log,
	    size_t tail_bytes);
/*
 * After a first read that took only the end of some segments: the time
 * up to which events may have been left unread, the latest of those
 * segments' first events read (+HUGE_VAL where such a segment gave no
 * event).  Events after it are all in the log, in their place; -HUGE_VAL
 * when every segment was read whole.  A segment whose read failed before
 * it took a line is none of those: jtail_read said it failed.  (A
 * writer's events are in time order in its segment, but for a step back
 * of its clock.)
 */
double	jtail_cut(const struct jtail *t);
/* For a message after jtail_read failed: "/SEGMENT" (journal_q), or ""
 * when the directory itself was not read.  A rotating buffer. */
const char *jtail_unread(const struct jtail *t);
void	jtail_free(struct jtail *t);

/* ---- bounding (spoold) ---- */

struct jseg_info {
	char	name[JOURNAL_NAME_MAX];
	uint64_t start_ms;	/* from the name */
	uint64_t bytes;
	double	mtime;
	int	closed;		/* its writer will not write to it again */
};

/*
 * The segments of the journal, oldest first (by START), with their
 * sizes and whether each is closed: not its writer's newest, or not
 * written for JOURNAL_IDLE_S (judged by now, the caller's clock).
 * Returns the count (array in *out, free it), or -1 with errno.
 */
ssize_t	journal_segments(int dfd, double now, struct jseg_info **out);

/*
 * Remove the oldest closed segments last written before the time
 * before (a checkpoint holds the state as of then) until the journal is
 * at most keep_bytes.  Fills what was removed and the total left.
 * 0, or -1 with errno.
 */
int	journal_rotate(int dfd, uint64_t keep_bytes, double before,
	    size_t *removed, uint64_t *left);

#endif

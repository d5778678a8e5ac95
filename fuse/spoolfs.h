/*
 * spoolfs.h - the parts of spoolfs(1) and what they share.
 *
 *   main.c     options, mount, the event loop, shutdown
 *   ops.c      the FUSE low-level operations: dispatch on the node kind
 *   tree.c     the fixed tree: attributes, lookups, listings and the
 *              content of /, /tasks/ID/..., the state directories,
 *              /workers/WID/... and /summary
 *   pass.c     the other files of a finished task (nodes with a lookup
 *              count, backed by the files under tasks/SHARD/ID/)
 *   subarea.c  /submit: submission by writing a file
 *   waits.c    reads blocked on a result, and poll handles
 *   subform.c  what a submitted text is (pure; unit tested)
 *   ino.c      inode numbers (pure; unit tested)
 *
 * One thread runs everything (main.c's loop), so nothing is locked:
 * a read of an unfinished result is not answered until the task is
 * final (waits.c keeps the request), and the loop goes on serving
 * other requests meanwhile.  The low-level API is what makes that
 * possible; doc/design.md section 13 says why it was chosen.
 */
#ifndef SPOOLFS_H
#define SPOOLFS_H

#define FUSE_USE_VERSION 31

#include <fuse_lowlevel.h>
#include <stdint.h>
#include <sys/stat.h>

#include "buf.h"
#include "ino.h"
#include "shutmark.h"
#include "spool.h"
#include "taskview.h"

/* Attribute and entry timeouts (seconds) given to the kernel. */
#define FS_TTL_LIVE	0.0	/* anything that can change */
#define FS_TTL_FINAL	60.0	/* files of a finished task */
#define FS_TTL_FIXED	3600.0	/* the fixed directories (/, tasks/, ...) */

#define FS_FRESH_MS	20	/* a view older than this is refreshed first */
#define FS_RESCAN_MIN_MS 10	/* rescan interval right after a change */
#define FS_ALIVE_MS	SHUTMARK_SEEN_MS /* how often to check the spool still
					 * exists and is not shut down */

struct fh;

struct fs {
	struct spool sp;
	struct taskview *tv;
	struct fuse_session *se;
	uid_t	uid;
	gid_t	gid;
	struct timespec mounted;	/* the times of nodes with no file */
	uint64_t fresh_at;		/* now_ms() of the last refresh */
	int	stale;			/* refresh before the next answer */
	char	**wids;			/* workers seen, by number (ino.h) */
	size_t	nwids;
};

extern struct fs fs;

/* Refresh the view if it is stale; wake what waits on a change. */
void	fs_fresh(int force);

/* ---- file handles (fi->fh) ---- */

struct dent {
	char	*name;
	uint64_t ino;
	mode_t	type;	/* S_IFDIR, S_IFREG, S_IFLNK */
};

struct fh {
	struct node nd;
	uint64_t ino;
	int	fd;		/* the underlying file, -1 none (yet) */
	int	lazy;		/* a finished task's file: fd opened by the
				 * first read that reaches spoolfs */
	struct buf snap;	/* generated content */
	int	snapped;
	enum tv_state seen;	/* state files: the state last read */
	struct fuse_pollhandle *ph;
	struct fh *pnext, *pprev;	/* in waits.c's list while ph is set */
	struct subent *ent;	/* submission entries */
	pid_t	opener;		/* thread group of the process that opened */
	int	writer;		/* opened for writing */
	int	flags;		/* open flags */
	struct dent *d;		/* directories: the listing */
	size_t	ndent;
	struct fh *anext, *aprev;	/* every open handle (fh_free_all) */
};

struct fh *fh_new(uint64_t ino, struct node nd);
void	fh_free(struct fh *h);
/* Free every handle still open (at exit, after the unmount). */
void	fh_free_all(void);
/* Answer a read with up to size bytes of h's file at off (ops.c); a
 * read that fails is answered with its errno and reported. */
void	reply_fd(fuse_req_t req, const struct fh *h, size_t size, off_t off);

/* ---- tree.c ---- */

/* Attributes of a node of the fixed tree; 0 or an errno. */
int	tree_getattr(uint64_t ino, struct node nd, struct stat *st,
	    double *ttl);
/* Look name up in a directory of the fixed tree; 0 and *st, or errno. */
int	tree_lookup(struct node parent, const char *name, struct stat *st,
	    double *ttl);
/* The entries of a directory of the fixed tree; 0 or an errno. */
int	tree_list(struct node dir, struct dent **d, size_t *n);
/* Generate the content of a virtual file into b; 0 or an errno. */
int	tree_content(struct node nd, struct buf *b);
/* The target of a state directory's link. */
void	tree_link(uint64_t id, char *out, size_t size);
/* Open the file that backs nd now ("SHARD/ID/stdout" and the like), or
 * -1 with errno (ENOENT: none yet). */
int	tree_backing_open(struct node nd);
/* For a message: the file that backs nd now, under the spool
 * ("tasks/SHARD/ID/stdout" and the like), or "?" if none. */
void	tree_backing_name(struct node nd, char *out, size_t size);
/* The worker number of a WID (assigned on first sight). */
uint64_t tree_worker_num(const char *wid);
/* Fill st for a regular file / directory / link of ours. */
void	tree_stat_fill(struct stat *st, uint64_t ino, mode_t mode, off_t size,
	    const struct timespec *t);
/* A task's record (taskview_spec), tried again after a refresh when
 * the view, which may be a moment old, does not find it: 0, or -1 and
 * errno. */
int	tree_spec(uint64_t id, struct buf *b);
/* 1 if name is the canonical decimal form of a task ID, *id set. */
int	tree_id_name(const char *name, uint64_t *id);

/* ---- pass.c ---- */

int	pass_lookup(uint64_t task, const char *rel, const char *name,
	    struct stat *st);
int	pass_getattr(uint64_t n, struct stat *st);
void	pass_forget(uint64_t n, uint64_t nlookup);
int	pass_list(uint64_t task, const char *rel, struct dent **d, size_t *nd);
int	pass_open(uint64_t n);
int	pass_readlink(uint64_t n, char *out, size_t size);
/* The task ID and relative path ("" for the task directory itself) of a
 * directory node: a finished task's directory or a passthrough one. */
int	pass_dir(struct node nd, uint64_t *task, const char **rel);
void	pass_free_all(void);

/* ---- subarea.c ---- */

struct subent;

int	sub_lookup(const char *name, struct stat *st);
int	sub_getattr(uint64_t n, struct stat *st);
int	sub_list(struct dent **d, size_t *n);
int	sub_create(fuse_req_t req, const char *name, int flags, struct fh **hp,
	    struct stat *st);
int	sub_open(fuse_req_t req, uint64_t n, int flags, struct fh **hp);
/* pid: the thread that writes (FUSE's request context) */
int	sub_write(struct fh *h, const char *data, size_t size, off_t off,
	    pid_t pid);
int	sub_read(struct fh *h, size_t size, off_t off, struct buf *out);
int	sub_truncate(uint64_t n, off_t size, struct fh *h);
int	sub_flush(fuse_req_t req, struct fh *h);
void	sub_release(struct fh *h);
int	sub_unlink(const char *name);
int	sub_rename(const char *from, const char *to, pid_t pid);
void	sub_free_all(void);

/* ---- waits.c ---- */

/* Read of an unfinished result: answer now, or keep req until final. */
void	wait_read(fuse_req_t req, struct fh *h, size_t size, off_t off);
/* poll(2) on a state or result file. */
void	wait_poll(fuse_req_t req, struct fh *h, struct fuse_pollhandle *ph);
/* Something may have changed: answer what can be answered now. */
void	wait_wake(void);
/* Is anything waiting (reads or poll handles)? */
int	wait_any(void);
/* A handle goes away: drop its poll handle. */
void	wait_forget_fh(struct fh *h);
/* Shutting down: answer every waiting read with err. */
void	wait_cancel_all(int err);
/*
 * Serve a read of a final task's file through h, opening the spool's
 * file behind it first if h has none yet: one gone since its lookup is
 * EIO (the spool changed behind spoolfs's back).
 */
void	wait_serve(fuse_req_t req, struct fh *h, size_t size, off_t off);

/* The task's state now (final: its files are in tasks/). */
enum tv_state fs_task_state(uint64_t id);
/* The state its state file shows: as fs_task_state, but rejected for
 * an ID whose rejected result spoold owes and has not written yet
 * (TV_SHOWN): decided, though its result is still to come. */
enum tv_state fs_task_shown(uint64_t id);

extern const struct fuse_lowlevel_ops spoolfs_ops;

#endif

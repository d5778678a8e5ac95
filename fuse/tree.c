/*
 * tree.c - the fixed tree of spoolfs: everything but /submit's entries
 * and the other files of finished tasks.
 *
 *	/submit/            write a task here (subarea.c)
 *	/tasks/ID/          every task the spool holds:
 *	    spec            its record (bundle, assignment, or final spec)
 *	    state           one word and a newline: "running"
 *	    result          its result record; reading blocks until final
 *	    stdout, stderr  its output so far (the worker's files while it
 *	                    runs, its final files after)
 *	    control         write "cancel" (unfinished tasks only)
 *	    ...             a finished task also shows every other file of
 *	                    tasks/SHARD/ID/ (script, attempt.N/, its own
 *	                    files) read-only (pass.c)
 *	/STATE/ID           -> ../tasks/ID, for STATE in submitted queued
 *	                    waiting placed running finishing done failed
 *	                    cancelled rejected
 *	/workers/WID/       info, status (the worker's records), state
 *	                    (as "spool workers" says: wstate_read)
 *	/summary            spoold's state/summary
 *
 * Modes are those of the spool's own files (directories 0700, files
 * 0600; control 0200); what cannot be changed answers EROFS (ops.c).
 * Times are those of the backing file where there is one, else the
 * time of the mount.  Sizes are those of the content a read returns
 * now; an unfinished result has none yet (size 0, and reading waits).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsop.h"
#include "ids.h"
#include "msg.h"
#include "spoolfs.h"
#include "wdir.h"

#define RECORD_MAX	(TASK_FILE_MAX + REC_LINE_MAX)

static const char *const task_file[] = {
	/* NK_SPEC .. NK_CONTROL */
	"spec", "state", "result", "stdout", "stderr", "control",
};
#define NTASKFILES ((int)(sizeof task_file / sizeof task_file[0]))

static const char *const worker_file[] = { "info", "status", "state" };

void
tree_stat_fill(struct stat *st, uint64_t ino, mode_t mode, off_t size,
    const struct timespec *t)
{
	memset(st, 0, sizeof *st);
	st->st_ino = ino;
	st->st_mode = mode;
	st->st_nlink = 1;	/* directories too: "not counted" (as btrfs) */
	st->st_uid = fs.uid;
	st->st_gid = fs.gid;
	st->st_size = size;
	st->st_blksize = 4096;
	st->st_blocks = (size + 511) / 512;
	st->st_atim = st->st_mtim = st->st_ctim = t ? *t : fs.mounted;
}

/* Our inode number and type on a real file's attributes. */
static void
stat_adopt(struct stat *st, uint64_t ino)
{
	st->st_ino = ino;
	st->st_nlink = S_ISDIR(st->st_mode) ? 1 : st->st_nlink;
}

/*
 * The view is up to FS_FRESH_MS old: a task that moved on since (its
 * bundle renamed into the next stage's directory, its assignment
 * taken back) is not where the view says, and its record reads ENOENT
 * for a moment though the task is there.  So ENOENT is looked at again
 * once, after a refresh; still ENOENT, it is.
 */
int
tree_spec(uint64_t id, struct buf *b)
{
	if (taskview_spec(fs.tv, id, b) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	fs_fresh(1);
	return taskview_spec(fs.tv, id, b);
}

int
tree_id_name(const char *name, uint64_t *id)
{
	char back[32];

	if (ids_parse(name, id) < 0)
		return 0;
	snprintf(back, sizeof back, "%" PRIu64, *id);
	return strcmp(back, name) == 0;
}

void
tree_link(uint64_t id, char *out, size_t size)
{
	snprintf(out, size, "../tasks/%" PRIu64, id);
}

enum tv_state
fs_task_state(uint64_t id)
{
	struct tv_task t;

	if (taskview_get(fs.tv, id, &t) <= 0)
		return TV_UNKNOWN;
	return t.state;
}

enum tv_state
fs_task_shown(uint64_t id)
{
	struct tv_task t;

	if (taskview_get(fs.tv, id, &t) <= 0)
		return TV_UNKNOWN;
	return TV_SHOWN(&t);
}

/* ---- workers ---- */

uint64_t
tree_worker_num(const char *wid)
{
	size_t i;

	for (i = 0; i < fs.nwids; i++)
		if (strcmp(fs.wids[i], wid) == 0)
			return i;
	fs.wids = xreallocarray(fs.wids, fs.nwids + 1, sizeof *fs.wids);
	fs.wids[fs.nwids] = xstrdup(wid);
	return fs.nwids++;
}

static const char *
worker_wid(uint64_t n)
{
	return n < fs.nwids ? fs.wids[n] : NULL;
}

static int
worker_exists(const char *wid)
{
	struct stat st;

	return wid && fsop_stat(fs.sp.fd[SD_WORKERS], wid, &st) == 0 &&
	    S_ISDIR(st.st_mode);
}

/* Its state, as "spool workers" says (wstate_read). */
static const char *
worker_state(const char *wid)
{
	struct worker_status *ws = xmalloc(sizeof *ws);
	enum wstate st = wstate_read(fs.sp.fd[SD_WORKERS], wid, ws);

	free(ws);
	return wstate_name[st];
}

/* ---- backing files ---- */

/* Where nd's content lives now: directory descriptor and path. */
static int
backing_path(struct node nd, int *dfd, char *path, size_t size)
{
	char an[WDIR_ANAME_MAX];
	struct tv_task t;
	const char *wid;

	switch (nd.kind) {
	case NK_WINFO:
	case NK_WSTATUS:
		if ((wid = worker_wid(nd.n)) == NULL)
			return -1;
		*dfd = fs.sp.fd[SD_WORKERS];
		snprintf(path, size, "%s/%s", wid,
		    worker_file[nd.kind - NK_WINFO]);
		return 0;
	case NK_SPEC:
	case NK_RESULT:
	case NK_STDOUT:
	case NK_STDERR:
		if (taskview_get(fs.tv, nd.n, &t) <= 0)
			return -1;
		if (TV_FINAL(t.state)) {
			*dfd = fs.sp.fd[SD_TASKS];
			spool_task_path(nd.n, path, size);
			snprintf(path + strlen(path), size - strlen(path), "/%s",
			    task_file[nd.kind - NK_SPEC]);
			return 0;
		}
		if ((nd.kind == NK_STDOUT || nd.kind == NK_STDERR) &&
		    t.wid[0] && t.state != TV_PLACED) {
			wdir_aname(nd.n, t.attempt, an, sizeof an);
			*dfd = fs.sp.fd[SD_WORKERS];
			snprintf(path, size, "%s/%s/%s/%s", t.wid,
			    wdir_sub_name[WS_WORK], an,
			    task_file[nd.kind - NK_SPEC]);
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}

int
tree_backing_open(struct node nd)
{
	char path[SPOOL_PATH_MAX + WDIR_ID_MAX + 64];
	int dfd;

	if (backing_path(nd, &dfd, path, sizeof path) < 0) {
		errno = ENOENT;
		return -1;
	}
	return fsop_open_regular(dfd, path, NULL);
}

void
tree_backing_name(struct node nd, char *out, size_t size)
{
	char path[SPOOL_PATH_MAX + WDIR_ID_MAX + 64];
	int dfd;

	if (backing_path(nd, &dfd, path, sizeof path) < 0)
		snprintf(out, size, "?");
	else
		snprintf(out, size, "%s/%s", spool_dir_name[dfd ==
		    fs.sp.fd[SD_TASKS] ? SD_TASKS : SD_WORKERS], path);
}

static int
backing_stat(struct node nd, struct stat *st)
{
	char path[SPOOL_PATH_MAX + WDIR_ID_MAX + 64];
	int dfd;

	if (backing_path(nd, &dfd, path, sizeof path) < 0) {
		errno = ENOENT;
		return -1;
	}
	if (fsop_stat(dfd, path, st) < 0)
		return -1;
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ---- content ---- */

int
tree_content(struct node nd, struct buf *b)
{
	const char *wid;
	int rc;

	buf_reset(b);
	switch (nd.kind) {
	case NK_SUMMARY:
		rc = fsop_read_file(fs.sp.fd[SD_STATE], "summary",
		    SPOOL_SUMMARY_MAX, b, NULL);
		if (rc < 0 && errno != ENOENT)
			return errno;
		if (rc < 0)
			buf_reset(b);	/* spoold never ran: empty */
		return 0;
	case NK_STATE:
		buf_printf(b, "%s\n", tv_state_name[fs_task_shown(nd.n)]);
		return 0;
	case NK_SPEC:
		if (tree_spec(nd.n, b) < 0)
			return errno;
		return 0;
	case NK_WSTATE:
		if ((wid = worker_wid(nd.n)) == NULL || !worker_exists(wid))
			return ENOENT;
		buf_printf(b, "%s\n", worker_state(wid));
		return 0;
	default:
		return EINVAL;
	}
}

/* ---- attributes ---- */

static int
task_dir_stat(uint64_t id, struct stat *st, double *ttl, uint64_t ino)
{
	char path[SPOOL_PATH_MAX];
	struct tv_task t;

	if (taskview_get(fs.tv, id, &t) <= 0)
		return ENOENT;
	if (TV_FINAL(t.state)) {
		spool_task_path(id, path, sizeof path);
		if (fsop_stat(fs.sp.fd[SD_TASKS], path, st) < 0)
			return errno == ENOENT ? ENOENT : errno;
		stat_adopt(st, ino);
		*ttl = FS_TTL_FINAL;
		return 0;
	}
	tree_stat_fill(st, ino, S_IFDIR | 0700, 0, NULL);
	*ttl = FS_TTL_LIVE;
	return 0;
}

int
tree_getattr(uint64_t ino, struct node nd, struct stat *st, double *ttl)
{
	struct buf b = BUF_INIT;
	struct tv_task t;
	struct stat real;
	const char *wid;
	int rc, final;

	*ttl = FS_TTL_LIVE;
	switch (nd.kind) {
	case NK_ROOT:
	case NK_SUBMIT:
	case NK_TASKS:
	case NK_WORKERS:
	case NK_STATEDIR:
		tree_stat_fill(st, ino, S_IFDIR | 0700, 0, NULL);
		*ttl = FS_TTL_FIXED;	/* nothing of these ever changes */
		return 0;
	case NK_SUMMARY:
		if ((rc = tree_content(nd, &b)) != 0) {
			buf_free(&b);
			return rc;
		}
		tree_stat_fill(st, ino, S_IFREG | 0600, (off_t)b.len, NULL);
		if (fsop_stat(fs.sp.fd[SD_STATE], "summary", &real) == 0)
			st->st_mtim = st->st_ctim = real.st_mtim;
		buf_free(&b);
		return 0;
	case NK_TASK:
		return task_dir_stat(nd.n, st, ttl, ino);
	case NK_LINK:
		if (taskview_get(fs.tv, nd.n, &t) <= 0)
			return ENOENT;
		{
			char target[48];

			tree_link(nd.n, target, sizeof target);
			tree_stat_fill(st, ino, S_IFLNK | 0777,
			    (off_t)strlen(target), NULL);
		}
		return 0;
	case NK_SPEC:
	case NK_STATE:
	case NK_RESULT:
	case NK_STDOUT:
	case NK_STDERR:
	case NK_CONTROL:
		if (taskview_get(fs.tv, nd.n, &t) <= 0)
			return ENOENT;
		final = TV_FINAL(t.state);
		if (nd.kind == NK_CONTROL) {
			if (final)
				return ENOENT;
			tree_stat_fill(st, ino, S_IFREG | 0200, 0, NULL);
			return 0;
		}
		if (nd.kind == NK_STATE) {
			tree_stat_fill(st, ino, S_IFREG | 0600,
			    (off_t)strlen(tv_state_name[TV_SHOWN(&t)]) + 1,
			    NULL);
			if (final && backing_stat((struct node){ NK_RESULT, nd.n },
			    &real) == 0)
				st->st_mtim = st->st_ctim = real.st_mtim;
			*ttl = final ? FS_TTL_FINAL : FS_TTL_LIVE;
			return 0;
		}
		if (nd.kind == NK_SPEC && !final) {
			if (tree_spec(nd.n, &b) < 0) {
				rc = errno;
				buf_free(&b);
				return rc;
			}
			tree_stat_fill(st, ino, S_IFREG | 0600, (off_t)b.len,
			    NULL);
			buf_free(&b);
			return 0;
		}
		if (backing_stat(nd, st) == 0) {
			stat_adopt(st, ino);
			*ttl = final ? FS_TTL_FINAL : FS_TTL_LIVE;
			return 0;
		}
		if (final)
			return ENOENT;	/* e.g. no stdout: it never ran */
		/* an unfinished result, output not started: empty for now */
		tree_stat_fill(st, ino, S_IFREG | 0600, 0, NULL);
		return 0;
	case NK_WORKER:
		if ((wid = worker_wid(nd.n)) == NULL)
			return ENOENT;
		if (fsop_stat(fs.sp.fd[SD_WORKERS], wid, st) < 0 ||
		    !S_ISDIR(st->st_mode))
			return ENOENT;
		stat_adopt(st, ino);
		return 0;
	case NK_WINFO:
	case NK_WSTATUS:
		if (backing_stat(nd, st) < 0)
			return ENOENT;
		stat_adopt(st, ino);
		return 0;
	case NK_WSTATE:
		if ((rc = tree_content(nd, &b)) != 0) {
			buf_free(&b);
			return rc;
		}
		tree_stat_fill(st, ino, S_IFREG | 0600, (off_t)b.len, NULL);
		buf_free(&b);
		return 0;
	default:
		return ENOENT;
	}
}

/* ---- lookups ---- */

static int
reply_node(enum nkind kind, uint64_t n, struct stat *st, double *ttl)
{
	uint64_t ino = ino_of(kind, n);

	if (ino == 0)
		return ENOENT;
	return tree_getattr(ino, (struct node){ kind, n }, st, ttl);
}

static int
lookup_root(const char *name, struct stat *st, double *ttl)
{
	static const struct { const char *name; enum nkind kind; } top[] = {
		{ "submit", NK_SUBMIT }, { "tasks", NK_TASKS },
		{ "workers", NK_WORKERS }, { "summary", NK_SUMMARY },
	};
	size_t i;
	int s;

	for (i = 0; i < sizeof top / sizeof top[0]; i++)
		if (strcmp(name, top[i].name) == 0)
			return reply_node(top[i].kind, 0, st, ttl);
	for (s = TV_SUBMITTED; s < TV_NSTATES; s++)
		if (strcmp(name, tv_state_name[s]) == 0)
			return reply_node(NK_STATEDIR, (uint64_t)s, st, ttl);
	return ENOENT;
}

static int
lookup_task_file(uint64_t id, const char *name, struct stat *st, double *ttl)
{
	struct tv_task t;
	int k;

	if (taskview_get(fs.tv, id, &t) <= 0)
		return ENOENT;
	for (k = 0; k < NTASKFILES; k++)
		if (strcmp(name, task_file[k]) == 0)
			return reply_node((enum nkind)(NK_SPEC + k), id, st, ttl);
	if (!TV_FINAL(t.state))
		return ENOENT;
	*ttl = FS_TTL_FINAL;
	return pass_lookup(id, "", name, st);
}

/* Has a claim been made past the view's end (or cannot that be told)? */
static int
chain_moved(void)
{
	struct ids_claim c;

	return ids_read(&fs.sp, taskview_end(fs.tv), &c) != 0;
}

int
tree_lookup(struct node parent, const char *name, struct stat *st,
    double *ttl)
{
	const char *wid;
	uint64_t id;
	int k;

	*ttl = FS_TTL_LIVE;
	switch (parent.kind) {
	case NK_ROOT:
		return lookup_root(name, st, ttl);
	case NK_TASKS:
		if (!tree_id_name(name, &id))
			return ENOENT;
		/*
		 * An ID past the view's end may have been claimed since the
		 * view was made, up to FS_FRESH_MS ago: a submitter printed
		 * it, and its control is written at once.  The claim chain is
		 * read again before such an ID is ENOENT (an ID the view has
		 * costs nothing more), so that the cancel is not lost.  The
		 * view is refreshed only if it moved: a claim starts where
		 * the view's chain ends.  Without one no ID past the end
		 * exists, and an ID that never will (tasks/99999999 looked
		 * up again and again) costs one readlink, not a refresh.
		 */
		if (id >= taskview_end(fs.tv) && chain_moved())
			fs_fresh(1);
		return reply_node(NK_TASK, id, st, ttl);
	case NK_STATEDIR:
		if (!tree_id_name(name, &id) ||
		    fs_task_state(id) != (enum tv_state)parent.n)
			return ENOENT;
		return reply_node(NK_LINK, id, st, ttl);
	case NK_TASK:
		return lookup_task_file(parent.n, name, st, ttl);
	case NK_WORKERS:
		if (name[0] == '.' || strlen(name) >= WDIR_ID_MAX ||
		    !worker_exists(name))
			return ENOENT;
		return reply_node(NK_WORKER, tree_worker_num(name), st, ttl);
	case NK_WORKER:
		if ((wid = worker_wid(parent.n)) == NULL || !worker_exists(wid))
			return ENOENT;
		for (k = 0; k < 3; k++)
			if (strcmp(name, worker_file[k]) == 0)
				return reply_node((enum nkind)(NK_WINFO + k),
				    parent.n, st, ttl);
		return ENOENT;
	default:
		return ENOTDIR;
	}
}

/* ---- listings ---- */

static void
dent_add(struct dent **d, size_t *n, const char *name, uint64_t ino,
    mode_t type)
{
	*d = xreallocarray(*d, *n + 1, sizeof **d);
	(*d)[*n].name = xstrdup(name);
	(*d)[*n].ino = ino;
	(*d)[*n].type = type;
	(*n)++;
}

static void
dent_ids(struct dent **d, size_t *n, const uint64_t *ids, size_t nids,
    enum nkind kind, mode_t type)
{
	char name[32];
	size_t i;

	*d = xreallocarray(*d, *n + nids + 1, sizeof **d);
	for (i = 0; i < nids; i++) {
		snprintf(name, sizeof name, "%" PRIu64, ids[i]);
		(*d)[*n].name = xstrdup(name);
		(*d)[*n].ino = ino_of(kind, ids[i]);
		(*d)[*n].type = type;
		(*n)++;
	}
}

static int
list_task(uint64_t id, struct dent **d, size_t *n)
{
	struct buf b = BUF_INIT;
	struct tv_task t;
	int k;

	if (taskview_get(fs.tv, id, &t) <= 0)
		return ENOENT;
	if (TV_FINAL(t.state)) {
		dent_add(d, n, "state", ino_of(NK_STATE, id), S_IFREG);
		return pass_list(id, "", d, n);
	}
	for (k = 0; k < NTASKFILES; k++) {
		if (k == 0 && tree_spec(id, &b) < 0)
			continue;	/* no record yet (a dropped file) */
		dent_add(d, n, task_file[k], ino_of((enum nkind)(NK_SPEC + k),
		    id), S_IFREG);
	}
	buf_free(&b);
	return 0;
}

int
tree_list(struct node dir, struct dent **d, size_t *n)
{
	uint64_t *ids;
	char **wids;
	size_t nids, i;
	int s, k;

	*d = NULL;
	*n = 0;
	switch (dir.kind) {
	case NK_ROOT:
		dent_add(d, n, "submit", ino_of(NK_SUBMIT, 0), S_IFDIR);
		dent_add(d, n, "tasks", ino_of(NK_TASKS, 0), S_IFDIR);
		dent_add(d, n, "workers", ino_of(NK_WORKERS, 0), S_IFDIR);
		dent_add(d, n, "summary", ino_of(NK_SUMMARY, 0), S_IFREG);
		for (s = TV_SUBMITTED; s < TV_NSTATES; s++)
			dent_add(d, n, tv_state_name[s],
			    ino_of(NK_STATEDIR, (uint64_t)s), S_IFDIR);
		return 0;
	case NK_TASKS:
	case NK_STATEDIR:
		nids = taskview_list(fs.tv, dir.kind == NK_TASKS ? TV_NSTATES :
		    (enum tv_state)dir.n, &ids);
		dent_ids(d, n, ids, nids, dir.kind == NK_TASKS ? NK_TASK :
		    NK_LINK, dir.kind == NK_TASKS ? S_IFDIR : S_IFLNK);
		free(ids);
		return 0;
	case NK_TASK:
		return list_task(dir.n, d, n);
	case NK_WORKERS:
		nids = taskview_workers(fs.tv, &wids);
		for (i = 0; i < nids; i++)
			dent_add(d, n, wids[i], ino_of(NK_WORKER,
			    tree_worker_num(wids[i])), S_IFDIR);
		strv_free(wids);
		return 0;
	case NK_WORKER:
		if (worker_wid(dir.n) == NULL || !worker_exists(worker_wid(dir.n)))
			return ENOENT;
		for (k = 0; k < 3; k++)
			dent_add(d, n, worker_file[k], ino_of((enum nkind)
			    (NK_WINFO + k), dir.n), S_IFREG);
		return 0;
	default:
		return ENOTDIR;
	}
}

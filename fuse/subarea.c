/*
 * subarea.c - /submit: submitting a task by writing a file.
 *
 *	echo "sleep 1" > MNT/submit/x        submits at close(2)
 *	cat MNT/submit/x                     42  (the new task's ID)
 *	cat MNT/submit/x.why                 (only when refused) the reason
 *
 * A file written here is kept in memory while it is open.  The first
 * close, after data was written, by the process that opened it (FUSE's
 * flush from that thread group; a child that inherited the descriptor
 * and exits first does not count, nor does a close before anything was
 * written, such as the shell's own after it dup2()s the file onto
 * stdout) submits it: the text is parsed (subform.h: a #! script, a YAML
 * task, or shell commands), validated, and handed to submit_tasks()
 * (submit.h), the same path as "spool submit": IDs claimed, one bundle
 * written through tmp/, flushed, renamed into incoming/.  When close(2)
 * returns 0 the task exists on disk; the file now reads as the task's
 * ID and a newline (a receipt, mode 0600).  When the task is refused,
 * close(2) fails (EINVAL for a task that is not acceptable, the
 * spool's errno, such as ENOSPC or EIO, when it could not be written),
 * the file disappears, nothing is submitted, and NAME.why holds
 * "NAME: reason" on one line.  If no such close came (closed from
 * another thread; nothing written: touch), the last close submits it,
 * and then the only report of a failure is NAME.why.  A task written in
 * pieces through several descriptors, with closes in between, should
 * be written under a "." name and renamed.  A process killed by a
 * signal has its files closed by the kernel as it dies, a close like
 * any other: when the opener or the last writer is dying of a signal
 * (its /proc/PID/stat, subform_killed()), what it wrote may be cut
 * anywhere and is refused, not submitted (a "." name's, when it is
 * renamed).
 *
 * Names starting with "." are not submitted at close (as in incoming/,
 * for tools that write a temporary name and rename it into place:
 * rsync, editors): they are held until renamed to a name that does not
 * start with ".", which submits them (rename(2) then fails as close(2)
 * would), or removed.
 *
 * The defaults are those of "spool submit" run by the writer: its
 * working directory (/proc/PID/cwd of the closing process; at a last
 * close, which names no process, that of the opener when it opened the
 * file) unless the task names one, the file name without extension as
 * the task's name unless it gives one, the spool owner as submitter.
 *
 * Rules: writing to a name that is being written by another open file
 * is EBUSY; opening a receipt for writing needs O_TRUNC (it then starts
 * a new submission under that name), else EACCES; writes
 * after the submission are EROFS; a write past TASK_FILE_MAX is EFBIG,
 * and so is the close (nothing is submitted); names ending in ".why" are
 * EINVAL at create and rename, and a reason is not renamed (EINVAL);
 * names longer than SUB_NAME_MAX (NAME_MAX less ".why", so
 * that NAME.why is a name) ENAMETOOLONG; mkdir, links and special
 * files are EPERM.  At most SUB_OPEN_MAX files are being written or
 * held at once (ENOSPC beyond); the oldest receipts and reasons are
 * forgotten beyond SUB_KEEP_MAX of them or SUB_KEEP_BYTES of their text
 * (the tasks are not affected): those submitted or refused longest ago.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsop.h"
#include "hostinfo.h"
#include "msg.h"
#include "spoolfs.h"
#include "subform.h"
#include "submit.h"

#define SUB_OPEN_MAX	64
#define SUB_KEEP_MAX	1024
#define SUB_KEEP_BYTES	(1u << 20)	/* and at most so much of their text */
#define WHY_SUFFIX	".why"
/* the longest name: its NAME.why must be a name too */
#define SUB_NAME_MAX	(NAME_MAX - (sizeof WHY_SUFFIX - 1))

enum sekind { SE_WRITING, SE_HELD, SE_RECEIPT, SE_WHY };

struct subent {
	char	*name;
	uint64_t serial;
	enum sekind kind;
	struct buf data;
	struct fh *writer;	/* SE_WRITING: the handle that writes */
	pid_t	opener;		/* and the thread group that opened it */
	pid_t	wpid;		/* the thread that wrote last */
	char	*cwd;		/* the opener's working directory, or NULL */
	int	killed;		/* the signal that killed a writer, or 0 */
	int	written;	/* data written since it was opened */
	int	toobig;		/* a write went past TASK_FILE_MAX */
	int	linked;		/* has a name in /submit */
	unsigned refs;		/* open handles */
	struct timespec mtime;
	struct subent *next;	/* in creation or submission order */
};

static struct subent *ents;
static uint64_t next_serial = 1;

static void
now_ts(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static struct subent *
ent_by_name(const char *name)
{
	struct subent *e;

	for (e = ents; e; e = e->next)
		if (e->linked && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static struct subent *
ent_by_serial(uint64_t n)
{
	struct subent *e;

	for (e = ents; e; e = e->next)
		if (e->serial == n)
			return e;
	return NULL;
}

static void
ent_free_if_unused(struct subent *e)
{
	struct subent **p;

	if (e->linked || e->refs)
		return;
	for (p = &ents; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
	free(e->name);
	free(e->cwd);
	buf_free(&e->data);
	free(e);
}

static void
ent_unlink(struct subent *e)
{
	e->linked = 0;
	ent_free_if_unused(e);
}

static struct subent *
ent_new(const char *name, enum sekind kind)
{
	struct subent *e = xcalloc(1, sizeof *e), **p;

	e->name = xstrdup(name);
	e->serial = next_serial++;
	e->kind = kind;
	e->linked = 1;
	now_ts(&e->mtime);
	for (p = &ents; *p; p = &(*p)->next)
		;
	*p = e;
	return e;
}

/* Make e the newest (the last that ents_trim() forgets). */
static void
ent_to_tail(struct subent *e)
{
	struct subent **p;

	for (p = &ents; *p != e; p = &(*p)->next)
		;
	*p = e->next;
	for (; *p; p = &(*p)->next)
		;
	*p = e;
	e->next = NULL;
}

/*
 * Forget the oldest receipts and reasons beyond SUB_KEEP_MAX of them or
 * SUB_KEEP_BYTES of their text (a list's receipt holds up to
 * TASKFILE_LIST_MAX IDs).  The newest is kept whatever its size.
 */
static void
ents_trim(void)
{
	struct subent *e, *next, *newest = NULL;
	size_t kept = 0, bytes = 0;

	for (e = ents; e; e = e->next)
		if (e->linked && (e->kind == SE_RECEIPT || e->kind == SE_WHY)) {
			kept++;
			bytes += e->data.len;
			newest = e;
		}
	for (e = ents; e && e != newest && (kept > SUB_KEEP_MAX ||
	    bytes > SUB_KEEP_BYTES); e = next) {
		next = e->next;
		if (e->linked && (e->kind == SE_RECEIPT || e->kind == SE_WHY)) {
			kept--;
			bytes -= e->data.len;
			ent_unlink(e);
		}
	}
}

static size_t
ents_pending(void)
{
	struct subent *e;
	size_t n = 0;

	for (e = ents; e; e = e->next)
		if (e->kind == SE_WRITING || e->kind == SE_HELD)
			n++;
	return n;
}

static void
ent_stat(const struct subent *e, struct stat *st)
{
	tree_stat_fill(st, ino_of(NK_SUBENT, e->serial), S_IFREG | 0600,
	    (off_t)e->data.len, &e->mtime);
}

/* The thread group of a thread (FUSE gives the caller's thread id). */
static pid_t
tgid_of(pid_t tid)
{
	char path[64];
	struct buf b = BUF_INIT;
	char *v;
	pid_t tgid = tid;

	if (tid <= 0)
		return tid;
	snprintf(path, sizeof path, "/proc/%ld/status", (long)tid);
	if (fsop_read_file(AT_FDCWD, path, 65536, &b, NULL) == 0) {
		v = strstr(b.p, "\nTgid:");
		if (v)
			tgid = (pid_t)strtol(v + 6, NULL, 10);
	}
	buf_free(&b);
	return tgid;
}

/*
 * The working directory of the writer.  Only read with readlink: a
 * stat could land in this very mount, which no one would answer.
 */
static char *
writer_cwd(pid_t pid)
{
	char path[64], cwd[TASK_PATH_MAX];
	ssize_t n;

	if (pid <= 0)
		return NULL;
	snprintf(path, sizeof path, "/proc/%ld/cwd", (long)pid);
	n = readlink(path, cwd, sizeof cwd - 1);
	if (n <= 0 || cwd[0] != '/')
		return NULL;
	cwd[n] = 0;
	return xstrdup(cwd);
}

/*
 * The signal that killed pid, when its close is the one the kernel
 * makes as it dies (subform_killed); 0 when it was not killed, or /proc
 * cannot say (then what it wrote is taken, as from any close).
 */
static int
writer_killed(pid_t pid)
{
	char path[64];
	struct buf b = BUF_INIT;
	int sig = 0;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (fsop_read_file(AT_FDCWD, path, 65536, &b, NULL) == 0)
		sig = subform_killed(b.p);
	else if (errno != ENOENT && errno != ESRCH)
		msg_once("proc-stat", "read: %s: %m (a writer killed before "
		    "it closed its file cannot be told from one that closed "
		    "it)", path);
	buf_free(&b);
	return sig;
}

/*
 * Record why name was refused in NAME.why; the name itself goes, and e
 * is freed unless an open handle still holds it: not to be used after.
 */
static void
refuse(struct subent *e, const char *why)
{
	char whyname[NAME_MAX + 8];
	struct subent *w;

	snprintf(whyname, sizeof whyname, "%s%s", e->name, WHY_SUFFIX);
	if ((w = ent_by_name(whyname)) != NULL)
		ent_unlink(w);
	w = ent_new(whyname, SE_WHY);
	buf_printf(&w->data, "%s: %s\n", e->name, why);
	ent_unlink(e);
	ents_trim();
}

/* Refuse e: its writer was killed (e->killed) before it closed it. */
static void
refuse_killed(struct subent *e)
{
	char why[128];

	snprintf(why, sizeof why, "its writer was killed by signal %d (%s) "
	    "before it closed the file", e->killed, strsignal(e->killed));
	e->writer = NULL;
	refuse(e, why);
}

/*
 * Submit the text of e under its name; 0 or an errno (e refused).  e
 * may be freed (refused, or trimmed, while no handle holds it, as after
 * a rename): the caller must not use it afterwards unless it holds a
 * handle on it.
 */
static int
submit_ent(struct subent *e, pid_t pid)
{
	char why[512], whyname[NAME_MAX + 8], *cwd;
	struct task_spec *t;
	struct subent *old;
	double now;
	size_t i, n;
	int rc, err;

	e->writer = NULL;
	if (e->toobig) {
		snprintf(why, sizeof why, "task file larger than %u bytes",
		    TASK_FILE_MAX);
		refuse(e, why);
		return EFBIG;
	}
	if (subform_parse(e->data.p ? e->data.p : "", e->data.len, &t, &n, why,
	    sizeof why) < 0) {
		refuse(e, why);
		return EINVAL;
	}
	cwd = writer_cwd(pid);
	if (cwd == NULL && e->cwd)	/* at the last close: no process */
		cwd = xstrdup(e->cwd);
	now = now_unix();
	for (i = 0; i < n; i++) {
		if (t[i].cwd == NULL && cwd)
			t[i].cwd = xstrdup(cwd);
		task_default_name(&t[i], e->name);
		t[i].source = xstrdup(e->name);
		t[i].uid = (uint32_t)fs.uid;
		t[i].submitted = now;
	}
	free(cwd);
	rc = submit_tasks(&fs.sp, t, n, 0, why, sizeof why);
	err = errno;
	if (rc < 0) {
		task_free_array(t, n);
		if (rc != SUBMIT_INVALID)
			msg_warn("submit/%s: %s", e->name, why);
		refuse(e, why);	/* frees e when no handle holds it (rename) */
		if (rc == SUBMIT_INVALID)
			return EINVAL;
		return err ? err : EIO;
	}
	/* a name rewritten keeps its place from its first creation: the
	 * trim below would forget this receipt first if it were oldest */
	ent_to_tail(e);
	e->kind = SE_RECEIPT;
	buf_reset(&e->data);
	for (i = 0; i < n; i++)
		buf_printf(&e->data, "%" PRIu64 "\n", t[i].id);
	now_ts(&e->mtime);
	task_free_array(t, n);
	snprintf(whyname, sizeof whyname, "%s%s", e->name, WHY_SUFFIX);
	if ((old = ent_by_name(whyname)) != NULL)
		ent_unlink(old);
	ents_trim();
	fs.stale = 1;	/* show the new tasks at the next request */
	return 0;
}

static void
start_writing(struct subent *e, struct fh *h, fuse_req_t req, int trunc)
{
	e->kind = SE_WRITING;
	if (trunc)
		buf_reset(&e->data);
	e->writer = h;
	e->written = 0;
	e->wpid = 0;
	e->killed = 0;
	e->toobig = 0;
	e->opener = tgid_of(fuse_req_ctx(req)->pid);
	free(e->cwd);
	e->cwd = writer_cwd(fuse_req_ctx(req)->pid);
	now_ts(&e->mtime);
}

/* ---- operations ---- */

int
sub_lookup(const char *name, struct stat *st)
{
	struct subent *e = ent_by_name(name);

	if (e == NULL)
		return ENOENT;
	ent_stat(e, st);
	return 0;
}

int
sub_getattr(uint64_t n, struct stat *st)
{
	struct subent *e = ent_by_serial(n);

	if (e == NULL)
		return ENOENT;
	ent_stat(e, st);
	return 0;
}

int
sub_list(struct dent **d, size_t *n)
{
	struct subent *e;

	*d = NULL;
	*n = 0;
	for (e = ents; e; e = e->next) {
		if (!e->linked)
			continue;
		*d = xreallocarray(*d, *n + 1, sizeof **d);
		(*d)[*n].name = xstrdup(e->name);
		(*d)[*n].ino = ino_of(NK_SUBENT, e->serial);
		(*d)[*n].type = S_IFREG;
		(*n)++;
	}
	return 0;
}

int
sub_create(fuse_req_t req, const char *name, int flags, struct fh **hp,
    struct stat *st)
{
	struct subent *e = ent_by_name(name);
	struct fh *h;

	if (ends_with(name, WHY_SUFFIX))
		return EINVAL;	/* reserved for reasons */
	if (strlen(name) > SUB_NAME_MAX)
		return ENAMETOOLONG;
	if (e && e->kind == SE_WRITING)
		return EBUSY;
	if (e == NULL || e->kind != SE_HELD) {
		if (ents_pending() >= SUB_OPEN_MAX) {
			msg_once("submit-full", "submit/: %d files being written "
			    "or held; refusing more (ENOSPC)", SUB_OPEN_MAX);
			return ENOSPC;
		}
	}
	if (e == NULL)
		e = ent_new(name, SE_WRITING);
	h = fh_new(ino_of(NK_SUBENT, e->serial),
	    (struct node){ NK_SUBENT, e->serial });
	h->ent = e;
	h->writer = 1;
	h->flags = flags;
	e->refs++;
	start_writing(e, h, req, 1);
	ent_stat(e, st);
	*hp = h;
	return 0;
}

int
sub_open(fuse_req_t req, uint64_t n, int flags, struct fh **hp)
{
	struct subent *e = ent_by_serial(n);
	int write = (flags & O_ACCMODE) != O_RDONLY;
	struct fh *h;

	if (e == NULL || !e->linked)
		return ENOENT;
	if (write) {
		if (ends_with(e->name, WHY_SUFFIX))
			return EINVAL;	/* a reason: never submitted */
		if (e->kind == SE_WRITING)
			return EBUSY;
		if (!(flags & O_TRUNC) && e->kind != SE_HELD)
			return EACCES;	/* a receipt or a reason */
		if (e->kind != SE_HELD && ents_pending() >= SUB_OPEN_MAX)
			return ENOSPC;
	}
	h = fh_new(ino_of(NK_SUBENT, e->serial), (struct node){ NK_SUBENT, n });
	h->ent = e;
	h->flags = flags;
	e->refs++;
	if (write) {
		h->writer = 1;
		start_writing(e, h, req, (flags & O_TRUNC) != 0);
	}
	*hp = h;
	return 0;
}

int
sub_write(struct fh *h, const char *data, size_t size, off_t off, pid_t pid)
{
	struct subent *e = h->ent;
	size_t end;

	if (!h->writer)
		return EBADF;
	if (e->writer != h || e->kind != SE_WRITING)
		return EROFS;	/* submitted at an earlier close */
	e->wpid = pid;
	if (off < 0 || (uint64_t)off + size > TASK_FILE_MAX) {
		e->toobig = e->written = 1;	/* refused at close: EFBIG */
		return EFBIG;
	}
	end = (size_t)off + size;
	if (end > e->data.len) {
		buf_reserve(&e->data, end - e->data.len);
		memset(e->data.p + e->data.len, 0, end - e->data.len);
		e->data.len = end;
		e->data.p[end] = 0;
	}
	if (size)
		memcpy(e->data.p + off, data, size);
	e->written = 1;
	now_ts(&e->mtime);
	return 0;
}

int
sub_read(struct fh *h, size_t size, off_t off, struct buf *out)
{
	const struct buf *d = &h->ent->data;

	buf_reset(out);
	if (off >= 0 && (size_t)off < d->len)
		buf_append(out, d->p + off, size < d->len - (size_t)off ? size :
		    d->len - (size_t)off);
	return 0;
}

int
sub_truncate(uint64_t n, off_t size, struct fh *h)
{
	struct subent *e = h ? h->ent : ent_by_serial(n);

	if (e == NULL)
		return ENOENT;
	if (e->kind != SE_WRITING && e->kind != SE_HELD)
		return (size_t)size == e->data.len ? 0 : EACCES;
	if (size < 0 || (uint64_t)size > TASK_FILE_MAX)
		return EFBIG;
	if ((size_t)size > e->data.len) {
		buf_reserve(&e->data, (size_t)size - e->data.len);
		memset(e->data.p + e->data.len, 0, (size_t)size - e->data.len);
	}
	e->data.len = (size_t)size;
	if (e->data.p)
		e->data.p[e->data.len] = 0;
	now_ts(&e->mtime);
	return 0;
}

int
sub_flush(fuse_req_t req, struct fh *h)
{
	struct subent *e = h->ent;
	pid_t pid = fuse_req_ctx(req)->pid, tgid;
	int sig;

	if (!h->writer || e->writer != h || e->kind != SE_WRITING)
		return 0;
	if (!e->linked)
		return 0;	/* removed meanwhile */
	if (!e->written)
		return 0;	/* a copy closed before writing: "> x" in sh */
	/*
	 * The kernel closes the files of a process that dies, and that
	 * looks like its close: if the opener, or the process that wrote
	 * last, is being killed by a signal, what it wrote may be cut
	 * anywhere (kill -9, Ctrl-C, the OOM killer, a crash), and is not
	 * submitted, now or at the last close (whose RELEASE names no
	 * process).
	 */
	tgid = tgid_of(pid);	/* (pid itself where /proc cannot say) */
	if ((sig = writer_killed(pid)) != 0 && (pid == e->wpid ||
	    tgid == e->opener || tgid == tgid_of(e->wpid)))
		e->killed = sig;
	if (e->name[0] == '.')
		return 0;	/* held until renamed (refused then if killed) */
	if (e->opener > 0 && pid > 0 && tgid != e->opener)
		return 0;	/* a child's copy of the descriptor */
	if (e->killed) {
		refuse_killed(e);
		return EINVAL;	/* to no one: it is dying */
	}
	return submit_ent(e, pid);
}

void
sub_release(struct fh *h)
{
	struct subent *e = h->ent;

	if (e->writer == h && e->kind == SE_WRITING) {
		e->writer = NULL;
		if (e->name[0] == '.')
			e->kind = SE_HELD;
		else if (e->linked && e->killed)
			refuse_killed(e);
		else if (e->linked)
			(void)submit_ent(e, 0);	/* never closed by its opener */
	}
	e->refs--;
	ent_free_if_unused(e);
}

int
sub_unlink(const char *name)
{
	struct subent *e = ent_by_name(name);

	if (e == NULL)
		return ENOENT;
	ent_unlink(e);
	return 0;
}

int
sub_rename(const char *from, const char *to, pid_t pid)
{
	struct subent *e = ent_by_name(from), *d;
	int rc;

	if (e == NULL)
		return ENOENT;
	/*
	 * A reason stays beside the name it was refused under: renamed to
	 * a plain name it would read as that name's receipt, and to another
	 * .why as another name's reason.  Read and removed only, as every
	 * other write to it is refused.
	 */
	if (e->kind == SE_WHY || ends_with(to, WHY_SUFFIX))
		return EINVAL;
	if (strlen(to) > SUB_NAME_MAX)
		return ENAMETOOLONG;
	if (e->kind == SE_WRITING)
		return EBUSY;
	if ((d = ent_by_name(to)) != NULL && d != e) {
		if (d->kind == SE_WRITING)
			return EBUSY;
		ent_unlink(d);
	}
	free(e->name);
	e->name = xstrdup(to);
	if (e->kind == SE_HELD && to[0] != '.') {
		if (e->killed) {	/* what it holds may be cut anywhere */
			refuse_killed(e);
			return EINVAL;
		}
		rc = submit_ent(e, pid);
		return rc;
	}
	return 0;
}

void
sub_free_all(void)
{
	struct subent *e, *next;

	for (e = ents; e; e = next) {
		next = e->next;
		free(e->name);
		free(e->cwd);
		buf_free(&e->data);
		free(e);
	}
	ents = NULL;
}

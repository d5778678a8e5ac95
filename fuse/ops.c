/*
 * ops.c - the FUSE low-level operations of spoolfs.
 *
 * Every operation decodes its inode number (ino.h) and hands the work
 * to tree.c, pass.c, subarea.c or waits.c; every error path answers
 * with an errno (fuse_reply_err), never a crash.  The errors, as
 * spoolfs(1) lists them:
 *
 *   EROFS    any change outside /submit and the control files (create,
 *            mkdir, unlink, rename, link, symlink, mknod, chmod,
 *            truncate, write access to a read-only file)
 *   EPERM    mkdir, mknod, link, symlink inside /submit
 *   EACCES   reading a control file; rewriting a receipt without O_TRUNC
 *   ENOENT   no such task, state, worker or file
 *   ENOTDIR  a path through a file; EISDIR: data operations on a
 *            directory (mostly the kernel's own answer)
 *   EINVAL   a refused submission (at close or rename), an unknown
 *            control word, readlink of something that is not a link
 *   EAGAIN   an unfinished result read with O_NONBLOCK
 *   EINTR    a waiting read interrupted by a signal
 *   EBUSY    a /submit name that another open file is writing
 *   EIO      reading a finished task's file removed from the spool
 *            behind spoolfs's back
 *
 * Files whose content can change are opened with direct I/O (no page
 * cache: every read asks spoolfs), and their attributes and entries
 * are given to the kernel with a timeout of 0.  The files of finished
 * tasks never change again: their attributes and entries are cached
 * for FS_TTL_FINAL, their content in the page cache (open_cached), and
 * the file behind one is opened only by a read that reaches spoolfs
 * (wait_serve); a finished task's state, made by spoolfs, is cached
 * the same way; the fixed directories for FS_TTL_FIXED.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "rec.h"
#include "spoolfs.h"

#define CONTROL_WRITE_MAX 4096

static struct fh *all_fh;

struct fh *
fh_new(uint64_t ino, struct node nd)
{
	struct fh *h = xcalloc(1, sizeof *h);

	h->ino = ino;
	h->nd = nd;
	h->fd = -1;
	h->anext = all_fh;
	if (all_fh)
		all_fh->aprev = h;
	all_fh = h;
	return h;
}

static void
dents_free(struct fh *h)
{
	size_t i;

	for (i = 0; i < h->ndent; i++)
		free(h->d[i].name);
	free(h->d);
	h->d = NULL;
	h->ndent = 0;
}

void
fh_free(struct fh *h)
{
	if (h == NULL)
		return;
	wait_forget_fh(h);
	if (h->fd >= 0)
		close(h->fd);
	buf_free(&h->snap);
	dents_free(h);
	if (h->aprev)
		h->aprev->anext = h->anext;
	else
		all_fh = h->anext;
	if (h->anext)
		h->anext->aprev = h->aprev;
	free(h);
}

void
fh_free_all(void)
{
	while (all_fh)
		fh_free(all_fh);
}

static struct fh *
fh_of(const struct fuse_file_info *fi)
{
	return fi ? (struct fh *)(uintptr_t)fi->fh : NULL;
}

/* ---- attributes and names ---- */

static int
node_getattr(uint64_t ino, struct stat *st, double *ttl)
{
	struct node nd = ino_node(ino);

	*ttl = FS_TTL_LIVE;
	switch (nd.kind) {
	case NK_NONE:
		return ENOENT;
	case NK_SUBENT:
		return sub_getattr(nd.n, st);
	case NK_PASS:
		*ttl = FS_TTL_FINAL;
		return pass_getattr(nd.n, st);
	default:
		return tree_getattr(ino, nd, st, ttl);
	}
}

static void
op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_WRITE;
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_MOVE;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->time_gran = 1;
}

static void
op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct node pn = ino_node(parent);
	const char *rel;
	uint64_t task;
	double ttl = FS_TTL_LIVE;
	int rc;

	memset(&e, 0, sizeof e);
	if (strlen(name) > NAME_MAX)
		rc = ENAMETOOLONG;
	else if (pn.kind == NK_SUBMIT)
		rc = sub_lookup(name, &e.attr);
	else if (pn.kind == NK_PASS) {
		rc = pass_dir(pn, &task, &rel);
		if (rc == 0 && (rc = pass_getattr(pn.n, &e.attr)) == 0 &&
		    !S_ISDIR(e.attr.st_mode))
			rc = ENOTDIR;
		if (rc == 0)
			rc = pass_lookup(task, rel, name, &e.attr);
		ttl = FS_TTL_FINAL;
	} else if (pn.kind == NK_NONE)
		rc = ENOENT;
	else
		rc = tree_lookup(pn, name, &e.attr, &ttl);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	e.ino = e.attr.st_ino;
	e.attr_timeout = ttl;
	e.entry_timeout = ttl;
	if (fuse_reply_entry(req, &e) != 0 && ino_node(e.ino).kind == NK_PASS)
		pass_forget(ino_node(e.ino).n, 1);	/* the kernel never saw it */
}

static void
op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct node nd = ino_node(ino);

	if (nd.kind == NK_PASS)
		pass_forget(nd.n, nlookup);
	fuse_reply_none(req);
}

static void
op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *fv)
{
	struct node nd;
	size_t i;

	for (i = 0; i < count; i++) {
		nd = ino_node(fv[i].ino);
		if (nd.kind == NK_PASS)
			pass_forget(nd.n, fv[i].nlookup);
	}
	fuse_reply_none(req);
}

static void
op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);
	struct stat st;
	double ttl;
	int rc;

	/* an output being followed (tail -f): the size of the open file */
	if (h && h->fd >= 0 && (h->nd.kind == NK_STDOUT ||
	    h->nd.kind == NK_STDERR) && fstat(h->fd, &st) == 0) {
		st.st_ino = ino;
		fuse_reply_attr(req, &st, FS_TTL_LIVE);
		return;
	}
	if ((rc = node_getattr(ino, &st, &ttl)) != 0) {
		fuse_reply_err(req, rc);
		return;
	}
	fuse_reply_attr(req, &st, ttl);
}

static void
op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
    struct fuse_file_info *fi)
{
	struct node nd = ino_node(ino);
	struct stat st;
	double ttl;
	int rc = 0;

	if (nd.kind == NK_SUBENT) {
		/* size matters; mode, owner and times are accepted and kept
		 * as they are (shutil.copy chmods after the close) */
		if (to_set & FUSE_SET_ATTR_SIZE)
			rc = sub_truncate(nd.n, attr->st_size, fh_of(fi));
	} else if (nd.kind == NK_CONTROL && to_set == FUSE_SET_ATTR_SIZE &&
	    attr->st_size == 0) {
		rc = 0;		/* "> control" truncates: nothing to do */
	} else
		rc = EROFS;
	if (rc == 0)
		rc = node_getattr(ino, &st, &ttl);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	fuse_reply_attr(req, &st, ttl);
}

static void
op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct node nd = ino_node(ino);
	char target[PATH_MAX];

	if (nd.kind == NK_LINK) {
		if (fs_task_state(nd.n) == TV_UNKNOWN &&
		    nd.n >= taskview_end(fs.tv)) {
			fuse_reply_err(req, ENOENT);
			return;
		}
		tree_link(nd.n, target, sizeof target);
	} else if (nd.kind == NK_PASS) {
		if (pass_readlink(nd.n, target, sizeof target) < 0) {
			fuse_reply_err(req, errno);
			return;
		}
	} else {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_readlink(req, target);
}

/* mkdir, mknod, symlink, link: nowhere. */
static int
no_new_node(fuse_ino_t parent)
{
	return ino_node(parent).kind == NK_SUBMIT ? EPERM : EROFS;
}

static void
op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
    dev_t rdev)
{
	(void)name;
	(void)mode;
	(void)rdev;
	fuse_reply_err(req, no_new_node(parent));
}

static void
op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)name;
	(void)mode;
	fuse_reply_err(req, no_new_node(parent));
}

static void
op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
    const char *name)
{
	(void)link;
	(void)name;
	fuse_reply_err(req, no_new_node(parent));
}

static void
op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
    const char *newname)
{
	(void)ino;
	(void)newname;
	fuse_reply_err(req, no_new_node(newparent));
}

static void
op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, ino_node(parent).kind == NK_SUBMIT ?
	    sub_unlink(name) : EROFS);
}

static void
op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)name;
	fuse_reply_err(req, ino_node(parent).kind == NK_SUBMIT ? ENOENT :
	    EROFS);
}

static void
op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
    fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	int rc;

	if (ino_node(parent).kind != NK_SUBMIT ||
	    ino_node(newparent).kind != NK_SUBMIT)
		rc = EROFS;
	else if (flags)
		rc = EINVAL;	/* RENAME_EXCHANGE, RENAME_NOREPLACE */
	else
		rc = sub_rename(name, newname, fuse_req_ctx(req)->pid);
	fuse_reply_err(req, rc);
}

/* ---- files ---- */

static void
reply_open(fuse_req_t req, struct fuse_file_info *fi, struct fh *h)
{
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi) != 0) {
		/* the open was interrupted: no release will come */
		if (h->nd.kind == NK_SUBENT)
			sub_release(h);
		fh_free(h);
	}
}

/*
 * A file whose content never changes again (of a finished task): read
 * through the page cache, which the next open keeps, and closed without
 * a FLUSH round trip, so a second read of a result asks spoolfs only
 * for the open.
 */
static void
open_cached(struct fuse_file_info *fi)
{
	fi->direct_io = 0;
	fi->keep_cache = 1;
	fi->noflush = 1;
}

/*
 * Open a task's file into h.  *fixed is set when h reads the backing
 * file of a finished task, whose content never changes again; that file
 * is opened by the first read that reaches spoolfs (wait_serve), not
 * here: the lookup found it, and a read served from the page cache
 * needs nothing behind it.
 */
static int
open_task_file(struct fh *h, int write, int *fixed)
{
	enum tv_state st = fs_task_state(h->nd.n);
	struct tv_task t;

	if (taskview_get(fs.tv, h->nd.n, &t) <= 0)
		return ENOENT;
	if (h->nd.kind == NK_CONTROL)
		return !write ? EACCES : TV_FINAL(st) ? ENOENT : 0;
	if (write)
		return EROFS;
	switch (h->nd.kind) {
	case NK_STATE:
		h->seen = TV_SHOWN(&t);
		return 0;
	case NK_RESULT:
		break;	/* unfinished: its reads wait for the end (waits.c) */
	case NK_SPEC:
		if (TV_FINAL(st))
			break;
		if (tree_spec(h->nd.n, &h->snap) < 0)
			return errno;
		h->snapped = 1;
		return 0;
	case NK_STDOUT:
	case NK_STDERR:
		if (!TV_FINAL(st))	/* -1 if not started: empty until it is */
			h->fd = tree_backing_open(h->nd);
		break;
	default:
		return EINVAL;
	}
	*fixed = TV_FINAL(st);
	return 0;
}

static void
op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node nd = ino_node(ino);
	int write = (fi->flags & O_ACCMODE) != O_RDONLY;
	struct fh *h;
	int rc = 0, fixed = 0;

	if (nd.kind == NK_SUBENT) {
		if ((rc = sub_open(req, nd.n, fi->flags, &h)) != 0) {
			fuse_reply_err(req, rc);
			return;
		}
		fi->direct_io = 1;
		reply_open(req, fi, h);
		return;
	}
	h = fh_new(ino, nd);
	h->flags = fi->flags;
	switch (nd.kind) {
	case NK_SPEC: case NK_STATE: case NK_RESULT: case NK_STDOUT:
	case NK_STDERR: case NK_CONTROL:
		rc = open_task_file(h, write, &fixed);
		if (fixed) {
			open_cached(fi);
			h->lazy = 1;
		} else if (rc == 0 && nd.kind == NK_STATE &&
		    TV_FINAL(h->seen))
			open_cached(fi);	/* made here, but final */
		else
			fi->direct_io = 1;
		break;
	case NK_SUMMARY:
	case NK_WSTATE:
		if (write)
			rc = EROFS;
		else if ((rc = tree_content(nd, &h->snap)) == 0)
			h->snapped = 1;
		fi->direct_io = 1;
		break;
	case NK_WINFO:
	case NK_WSTATUS:
		if (write)
			rc = EROFS;
		else if ((h->fd = tree_backing_open(nd)) < 0)
			rc = errno;
		fi->direct_io = 1;
		break;
	case NK_PASS:
		if (write)
			rc = EROFS;
		else if ((h->fd = pass_open(nd.n)) < 0)
			rc = errno;
		open_cached(fi);
		break;
	case NK_NONE:
		rc = ENOENT;
		break;
	default:
		rc = write ? EISDIR : EINVAL;
		break;
	}
	if (rc) {
		fh_free(h);
		fuse_reply_err(req, rc);
		return;
	}
	reply_open(req, fi, h);
}

static void
op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
    struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct fh *h;
	int rc;

	(void)mode;
	if (ino_node(parent).kind != NK_SUBMIT) {
		fuse_reply_err(req, EROFS);
		return;
	}
	memset(&e, 0, sizeof e);
	if (strlen(name) > NAME_MAX)
		rc = ENAMETOOLONG;
	else
		rc = sub_create(req, name, fi->flags, &h, &e.attr);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	e.ino = e.attr.st_ino;
	e.attr_timeout = e.entry_timeout = FS_TTL_LIVE;
	fi->direct_io = 1;
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_create(req, &e, fi) != 0) {
		sub_release(h);
		fh_free(h);
	}
}

/* Serve [off, off+size) of a generated snapshot. */
static void
reply_snap(fuse_req_t req, const struct buf *b, size_t size, off_t off)
{
	if (off < 0 || (size_t)off >= b->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, b->p + off, size < b->len - (size_t)off ?
		    size : b->len - (size_t)off);
}

void
reply_fd(fuse_req_t req, const struct fh *h, size_t size, off_t off)
{
	char *buf = xmalloc(size ? size : 1), name[SPOOL_PATH_MAX + 256];
	ssize_t n;
	int err;

	n = fsop_pread(h->fd, buf, size, off);
	if (n < 0) {
		/* the reader is told (EIO, as from any file); the log says
		 * which file, once until a read works again */
		err = errno;
		tree_backing_name(h->nd, name, sizeof name);
		errno = err;
		msg_once("fs:read", "read: %s/%s: %m", fs.sp.shown,
		    journal_q(name));
		fuse_reply_err(req, err);
	} else {
		msg_clear("fs:read");
		fuse_reply_buf(req, buf, (size_t)n);
	}
	free(buf);
}

static void
op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);
	struct buf b = BUF_INIT;
	int rc;

	(void)ino;
	h->flags = fi->flags;	/* O_NONBLOCK may have been set since */
	if (h->lazy) {
		wait_serve(req, h, size, off);	/* opens the file behind */
		return;
	}
	switch (h->nd.kind) {
	case NK_SUBENT:
		sub_read(h, size, off, &b);
		fuse_reply_buf(req, b.p, b.len);
		buf_free(&b);
		return;
	case NK_RESULT:
		wait_read(req, h, size, off);
		return;
	case NK_STATE:
		if (off == 0 || !h->snapped) {
			h->seen = fs_task_shown(h->nd.n);
			buf_reset(&h->snap);
			buf_printf(&h->snap, "%s\n", tv_state_name[h->seen]);
			h->snapped = 1;
		}
		reply_snap(req, &h->snap, size, off);
		return;
	case NK_SUMMARY:
	case NK_WSTATE:
	case NK_SPEC:
		if (h->fd >= 0)
			break;
		if (off == 0 && h->snapped) {
			/* reading again from the start: fresh content */
			rc = h->nd.kind == NK_SPEC ? (tree_spec(h->nd.n,
			    &b) < 0 ? errno : 0) : tree_content(h->nd, &b);
			if (rc == 0) {
				buf_free(&h->snap);
				h->snap = b;
			} else
				buf_free(&b);
		}
		reply_snap(req, &h->snap, size, off);
		return;
	case NK_STDOUT:
	case NK_STDERR:
		if (h->fd < 0)
			h->fd = tree_backing_open(h->nd);
		if (h->fd < 0) {
			fuse_reply_buf(req, NULL, 0);	/* not started yet */
			return;
		}
		break;
	default:
		break;
	}
	if (h->fd < 0) {
		fuse_reply_err(req, EBADF);
		return;
	}
	reply_fd(req, h, size, off);
}

/* A write to a task's control file: "cancel". */
static int
control_write(uint64_t id, const char *data, size_t size)
{
	char word[CONTROL_WRITE_MAX + 1], name[FSOP_TMPNAME_MAX + 8];
	struct buf b = BUF_INIT;
	size_t n = size, skip = 0;

	if (size > CONTROL_WRITE_MAX)
		return EINVAL;
	if (size)
		memcpy(word, data, size);
	/* blanks around the word do not matter, before it as after it
	 * (spoolfs(1)): echo " cancel" is a cancel */
	while (n > 0 && (word[n - 1] == '\n' || word[n - 1] == ' ' ||
	    word[n - 1] == '\t' || word[n - 1] == '\r'))
		n--;
	while (skip < n && (word[skip] == '\n' || word[skip] == ' ' ||
	    word[skip] == '\t' || word[skip] == '\r'))
		skip++;
	word[n] = 0;
	if (n == skip)
		return 0;
	if (strcmp(word + skip, "cancel") != 0)
		return EINVAL;
	if (TV_FINAL(fs_task_state(id)))
		return 0;	/* finished meanwhile: nothing to cancel */
	/* what "spool cancel" writes (cli/status.c): spoold reads it */
	rec_put_idv(&b, "cancel", &id, 1);
	snprintf(name, sizeof name, "cancel.");
	fsop_tmpname(name + 7, sizeof name - 7, NULL);
	if (fsop_publish(fs.sp.fd[SD_TMP], fs.sp.fd[SD_CONTROL], name, b.p,
	    b.len, 0600, FSOP_DURABLE) < 0) {
		int err = errno;

		msg_warn("write: %s/control/%s: %m", fs.sp.shown, name);
		buf_free(&b);
		return err;
	}
	buf_free(&b);
	fs.stale = 1;
	return 0;
}

static void
op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
    off_t off, struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);
	int rc;

	(void)ino;
	if (h->nd.kind == NK_SUBENT)
		rc = sub_write(h, buf, size, off, fuse_req_ctx(req)->pid);
	else if (h->nd.kind == NK_CONTROL)
		rc = control_write(h->nd.n, buf, size);
	else
		rc = EROFS;
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_write(req, size);
}

static void
op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);

	(void)ino;
	fuse_reply_err(req, h->nd.kind == NK_SUBENT ? sub_flush(req, h) : 0);
}

static void
op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);

	(void)ino;
	if (h->nd.kind == NK_SUBENT)
		sub_release(h);
	fh_free(h);
	fuse_reply_err(req, 0);
}

static void
op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
    struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);	/* a submission is durable when closed */
}

static void
op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
    struct fuse_pollhandle *ph)
{
	struct fh *h = fh_of(fi);

	(void)ino;
	if (h->nd.kind == NK_STATE || h->nd.kind == NK_RESULT) {
		wait_poll(req, h, ph);
		return;
	}
	if (ph)
		fuse_pollhandle_destroy(ph);
	/* never ENOSYS: that would turn poll off for the whole mount */
	fuse_reply_poll(req, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM);
}

/* ---- directories ---- */

static int
dir_list(struct fh *h)
{
	const char *rel;
	uint64_t task;
	int rc;

	dents_free(h);
	switch (h->nd.kind) {
	case NK_SUBMIT:
		return sub_list(&h->d, &h->ndent);
	case NK_PASS:
		if ((rc = pass_dir(h->nd, &task, &rel)) != 0)
			return rc;
		return pass_list(task, rel, &h->d, &h->ndent);
	default:
		return tree_list(h->nd, &h->d, &h->ndent);
	}
}

static void
op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fh *h = fh_new(ino, ino_node(ino));
	int rc;

	if (h->nd.kind == NK_NONE)
		rc = ENOENT;
	else
		rc = dir_list(h);
	if (rc) {
		fh_free(h);
		fuse_reply_err(req, rc);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi) != 0)
		fh_free(h);
}

static void
op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	struct fh *h = fh_of(fi);
	struct stat st;
	char *buf;
	size_t used = 0, n, total;
	off_t i;
	int rc;

	(void)ino;
	if (off == 0 && h->snapped && (rc = dir_list(h)) != 0) {
		fuse_reply_err(req, rc);	/* rewinddir: list again */
		return;
	}
	h->snapped = 1;
	total = h->ndent + 2;
	buf = xmalloc(size ? size : 1);
	memset(&st, 0, sizeof st);
	for (i = off; i >= 0 && (size_t)i < total; i++) {
		const char *name;

		if (i == 0) {
			name = ".";
			st.st_ino = h->ino;
			st.st_mode = S_IFDIR;
		} else if (i == 1) {
			name = "..";
			st.st_ino = FUSE_ROOT_ID;
			st.st_mode = S_IFDIR;
		} else {
			name = h->d[i - 2].name;
			st.st_ino = h->d[i - 2].ino;
			st.st_mode = h->d[i - 2].type;
		}
		n = fuse_add_direntry(req, buf + used, size - used, name, &st,
		    i + 1);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void
op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fh_free(fh_of(fi));
	fuse_reply_err(req, 0);
}

static void
op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	if (fstatvfs(fs.sp.rootfd, &sv) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops spoolfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.statfs = op_statfs,
	.create = op_create,
	.poll = op_poll,
};

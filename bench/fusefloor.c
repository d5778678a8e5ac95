/*
 * fusefloor.c - the least a FUSE filesystem costs a read on this
 * machine: a read-only passthrough of a directory that does nothing but
 * answer the kernel, to set beside spoolfs in scenario 6.
 *
 *	fusefloor [-n [-f]] DIR MOUNTPOINT
 *
 * Runs in the foreground until the mount is unmounted (fusermount3 -u)
 * or it gets SIGTERM or SIGINT.  Under MOUNTPOINT, DIR's directories
 * and regular files, read-only: LOOKUP stats the name (no symbolic
 * links followed, "." and ".." refused), OPEN opens the file and keeps
 * the kernel's page cache (as spoolfs does for a finished task's
 * files), READ is a pread.  Its loop is spoolfs's: poll, then receive,
 * then process one request.  It mounts with spoolfs's option
 * default_permissions.  Every LOOKUP makes a node that is kept until
 * the unmount (no FORGET, no table of names: a name looked up again
 * after the kernel dropped it gets a new inode number): it serves a
 * benchmark's few thousand files, each looked up once, not a machine.
 *
 * The difference between a read through this mount and a direct read
 * is what FUSE itself costs (the OPEN and RELEASE that reach a
 * process, and their wake-ups); spoolfs's own share is what it costs
 * beyond this.
 *
 * -n: no OPEN.  The first OPEN is answered ENOSYS, which tells the
 * kernel (FUSE "no open support", Linux 4.19 and later) to take every
 * later open and close of the mount's files as done without asking,
 * and to keep their page cache; a READ (only for what the cache lacks)
 * opens the file for itself.  That is the one way a read of a cached
 * file reaches no process at all, and what it costs is the least any
 * FUSE mount can cost such a read.  It holds for the whole mount: a
 * filesystem that keeps anything per open (spoolfs: the submission
 * written to a file, a state seen, a read waiting for a task's end)
 * cannot use it.
 *
 * -f (with -n): FLUSH answered, as a filesystem without OPEN that must
 * see a file's close would answer it (spoolfs submits a file written
 * into submit/ at its close).  Without an OPEN no open can say
 * FOPEN_NOFLUSH, so the kernel then sends a FLUSH at every close of
 * every file of the mount, a read-only one's too; without -f the first
 * FLUSH is answered ENOSYS, and the kernel sends none again.
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"

#define TTL	3600.0	/* nothing here changes while it is mounted */

struct node {
	int	fd;	/* O_PATH descriptor of the directory or file */
	int	isdir;
};

static struct node *nodes;	/* by inode number; 1 is DIR itself */
static int no_open;		/* -n */
static int flushes;		/* -f */
static size_t nnodes, cap;

static struct node *
node_of(fuse_ino_t ino)
{
	return ino >= 1 && ino < nnodes && nodes[ino].fd >= 0 ? &nodes[ino] :
	    NULL;
}

static fuse_ino_t
node_add(int fd, int isdir)
{
	if (nnodes == cap) {
		struct node *n;

		cap = cap ? 2 * cap : 1024;
		if ((n = realloc(nodes, cap * sizeof *nodes)) == NULL)
			return 0;
		nodes = n;
	}
	nodes[nnodes].fd = fd;
	nodes[nnodes].isdir = isdir;
	return (fuse_ino_t)nnodes++;
}

static int
attr_of(fuse_ino_t ino, struct stat *st)
{
	struct node *n = node_of(ino);

	if (n == NULL)
		return ENOENT;
	if (fstat(n->fd, st) < 0)
		return errno;
	st->st_ino = ino;
	return 0;
}

static void
ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct node *p = node_of(parent);
	struct stat st;
	fuse_ino_t ino;
	int fd;

	if (p == NULL || !p->isdir) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strchr(name, '/') != NULL) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if ((fd = openat(p->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if (fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) ||
	    S_ISREG(st.st_mode))) {
		close(fd);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if ((ino = node_add(fd, S_ISDIR(st.st_mode))) == 0) {
		close(fd);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&e, 0, sizeof e);
	e.ino = ino;
	e.attr = st;
	e.attr.st_ino = ino;
	e.attr_timeout = e.entry_timeout = TTL;
	fuse_reply_entry(req, &e);
}

static void
ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int rc;

	(void)fi;
	if ((rc = attr_of(ino, &st)) != 0)
		fuse_reply_err(req, rc);
	else
		fuse_reply_attr(req, &st, TTL);
}

/*
 * A descriptor to read the file of inode ino (an O_PATH one cannot be
 * read); -1 with errno (ENOENT: no such node, EISDIR: a directory).
 */
static int
open_node(fuse_ino_t ino)
{
	struct node *n = node_of(ino);
	char path[32];

	if (n == NULL || n->isdir) {
		errno = n == NULL ? ENOENT : EISDIR;
		return -1;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", n->fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void
ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd;

	if (no_open) {
		fuse_reply_err(req, ENOSYS);	/* -n: and never again */
		return;
	}
	if ((fd = open_node(ino)) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		close(fd);
		fuse_reply_err(req, EROFS);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) != 0)
		close(fd);	/* interrupted: no RELEASE will come */
}

static void
ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	char *buf;
	ssize_t got;
	int fd = (int)fi->fh;

	/* no OPEN came: open the file for this read */
	if (no_open && (fd = open_node(ino)) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if ((buf = malloc(size ? size : 1)) == NULL)
		fuse_reply_err(req, ENOMEM);
	else if ((got = pread(fd, buf, size, off)) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_buf(req, buf, (size_t)got);
	free(buf);
	if (no_open)
		close(fd);
}

static void
ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (no_open)	/* the open answered ENOSYS, if any: no descriptor */
		fuse_reply_err(req, 0);
	else
		fuse_reply_err(req, close((int)fi->fh) < 0 ? errno : 0);
}

/* -f: a close seen, and nothing to do for it here */
static void
ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, flushes ? 0 : ENOSYS);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = ll_lookup,
	.getattr = ll_getattr,
	.open = ll_open,
	.read = ll_read,
	.release = ll_release,
	.flush = ll_flush,
};

int
main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_buf fbuf = { .mem = NULL };
	struct fuse_session *se;
	struct pollfd p[2];
	sigset_t set;
	int fd, res;

	if (argc >= 4 && strcmp(argv[1], "-n") == 0) {
		no_open = 1;
		argv[1] = argv[0];	/* libfuse's program name */
		argv++;
		argc--;
		if (argc == 4 && strcmp(argv[1], "-f") == 0) {
			flushes = 1;
			argv[1] = argv[0];
			argv++;
			argc--;
		}
	}
	if (argc != 3) {
		fprintf(stderr, "usage: fusefloor [-n [-f]] DIR MOUNTPOINT\n");
		return 2;
	}
	if ((fd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("open", argv[1]);
	if (node_add(-1, 0) != 0 || node_add(fd, 1) != 1) {
		fprintf(stderr, "fusefloor: out of memory\n");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		die("sigprocmask", "SIGTERM");
	if ((p[1].fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		die("signalfd", "SIGTERM");
	if (fuse_opt_add_arg(&args, argv[0]) < 0 ||
	    fuse_opt_add_arg(&args, "-o") < 0 ||
	    fuse_opt_add_arg(&args, "default_permissions,subtype=fusefloor") < 0) {
		fprintf(stderr, "fusefloor: out of memory\n");
		return 1;
	}
	if ((se = fuse_session_new(&args, &ops, sizeof ops, NULL)) == NULL) {
		fprintf(stderr, "fusefloor: cannot make a FUSE session\n");
		return 1;
	}
	if (fuse_session_mount(se, argv[2]) != 0) {
		fprintf(stderr, "fusefloor: cannot mount on %s\n", argv[2]);
		return 1;
	}
	p[0].fd = fuse_session_fd(se);
	p[0].events = p[1].events = POLLIN;
	while (!fuse_session_exited(se)) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll", "/dev/fuse");
		}
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) {
			if (res < 0 && res != -ENODEV)
				fprintf(stderr, "fusefloor: read: /dev/fuse: "
				    "%s\n", strerror(-res));
			break;	/* ENODEV: unmounted */
		}
		fuse_session_process_buf(se, &fbuf);
	}
	free(fbuf.mem);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	return 0;
}

/*
 * fsop.c - the filesystem layer; see fsop.h for the contract.
 *
 * NFS notes.  A client retransmits a request whose reply was lost; the
 * server may then answer the retransmission with ENOENT for a rename or
 * EEXIST for a mkdir that in fact succeeded.  fsop_rename() resolves
 * the rename case as Postfix's sane_rename() does: if the old name is
 * gone and the new name is present, the rename happened.  This is only
 * sound because every destination name in the spool is written by one
 * party (see doc/design.md, "who renames what"), so a present new name
 * cannot be someone else's.  (The one exception, ids/hint, is only a
 * hint: whichever rename wins, the hint is valid.)  Exclusive creates
 * (mkdir, symlink) carry a nonce that their callers check after EEXIST.
 *
 * SFTP (sshfs).  The protocol has no code for "exists" or "not empty":
 * OpenSSH's server sends SSH_FX_FAILURE, which sshfs reports as EPERM.
 * The kernel answers EEXIST itself when its lookup finds the name, but
 * not when another host created it meanwhile; and a directory renamed
 * onto a non-empty one always comes back EPERM.  sftp_errno() turns an
 * EPERM into the errno a local filesystem gives (EEXIST, ENOTEMPTY)
 * when the destination is there, so that the exclusive creates and the
 * lease work across hosts on sshfs as on NFS.
 *
 * Retries.  EINTR (an interruptible mount) is retried up to
 * FSOP_EINTR_TRIES times, ESTALE (a stale file handle: another host
 * removed or replaced an object this client had cached) up to
 * FSOP_ESTALE_TRIES times; each try is a fresh call by name, so the
 * client looks the name up again.  What still fails is returned to the
 * caller, which treats it as a temporary failure.
 *
 * Fault injection.  $CKSPOOL_FAULT (fault.c's grammar, see fsop.h) is
 * read at the first counted operation and removed from the environment,
 * so it applies to the process that read it and not to the processes it
 * starts.  It is compiled into every build: the programs tested are the
 * programs shipped, and an unset variable costs one test per operation.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "fsop.h"
#include "msg.h"

unsigned long fsop_count[FSOP_NKINDS];
const char *const fsop_kind_name[FSOP_NKINDS] = {
	"create", "write", "rename", "unlink", "mkdir", "rmdir", "symlink",
	"fsync", "syncfs", "open", "list", "stat", "readlink", "watch",
};

int (*fsop_fault_hook)(enum fsop_kind, const char *);

static int sync_on = 1;
static int dirty;

void
fsop_set_sync(int on)
{
	sync_on = on;
}

int
fsop_sync_enabled(void)
{
	return sync_on;
}

static int shared_modes;

void
fsop_set_shared(int on)
{
	shared_modes = on;
}

/* The mode a new file or directory gets (fsop_set_shared). */
static mode_t
new_mode(mode_t mode)
{
	return shared_modes ? mode | ((mode >> 3) & 0050) : mode;
}

/* Count an operation and give fault injection its chance. */
static int
fsop_pre(enum fsop_kind kind, const char *name)
{
	int err;

	fsop_count[kind]++;
	if (fsop_fault_hook)
		err = fsop_fault_hook(kind, name);
	else
		err = fault_before(kind, name);
	if (err != 0) {
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * After a failed try: 1 to try again (EINTR, ESTALE, within bounds).
 * errno is kept.
 */
static int
fsop_again(int *tries)
{
	int limit;

	if (errno == EINTR)
		limit = FSOP_EINTR_TRIES;
	else if (errno == ESTALE)
		limit = FSOP_ESTALE_TRIES;
	else
		return 0;
	return ++*tries < limit;
}

/*
 * After an exclusive create (mkdir, symlink, O_EXCL open) or a rename
 * failed with EPERM: EEXIST (ENOTEMPTY for a directory renamed onto a
 * directory) if dfd/name exists, as a local filesystem would say; else
 * errno is kept.  See "SFTP" above.
 */
static void
sftp_errno(int dfd, const char *name, int renamed_dir)
{
	struct stat st;

	if (errno != EPERM)
		return;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		errno = EPERM;
		return;
	}
	errno = renamed_dir && S_ISDIR(st.st_mode) ? ENOTEMPTY : EEXIST;
}

void
fsop_dirty(void)
{
	dirty = 1;
}

void
fsop_tmpname(char *out, size_t size, const char *prefix)
{
	static unsigned long counter;
	static char host[32];
	static long pid;
	unsigned int rnd = 0;
	size_t i;

	if (pid != (long)getpid()) {	/* first call, or after fork */
		pid = (long)getpid();
		if (gethostname(host, sizeof host - 1) != 0)
			strcpy(host, "host");
		host[sizeof host - 1] = 0;
		for (i = 0; host[i]; i++)
			if (host[i] == '.') {
				host[i] = 0;
				break;
			} else if (!(host[i] >= 'a' && host[i] <= 'z') &&
			    !(host[i] >= 'A' && host[i] <= 'Z') &&
			    !(host[i] >= '0' && host[i] <= '9') && host[i] != '-')
				host[i] = '_';
		counter = 0;
	}
	if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
		rnd = (unsigned int)(counter * 2654435761u) ^ (unsigned int)pid;
	snprintf(out, size, "%s%s.%ld.%lu.%08x", prefix ? prefix : "", host,
	    pid, ++counter, rnd);
}

int
fsop_mkdir(int dfd, const char *name, mode_t mode)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_MKDIR, name) < 0 ? -1 :
		    fault_after(FSOP_MKDIR, mkdirat(dfd, name, new_mode(mode)));
	while (rc < 0 && fsop_again(&tries));
	if (rc < 0)
		sftp_errno(dfd, name, 0);
	return rc;
}

int
fsop_rename(int odfd, const char *oname, int ndfd, const char *nname)
{
	struct stat st;
	int rc, saved, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_RENAME, oname) < 0 ? -1 :
		    fault_after(FSOP_RENAME, renameat(odfd, oname, ndfd, nname));
	while (rc < 0 && fsop_again(&tries));
	if (rc == 0)
		return 0;
	if (errno == EPERM) {	/* a directory onto a non-empty one? */
		if (fstatat(odfd, oname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode)) {
			errno = EPERM;
			sftp_errno(ndfd, nname, 1);
		} else
			errno = EPERM;
		return -1;
	}
	saved = errno;
	if (saved == ENOENT &&
	    fstatat(odfd, oname, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT &&
	    fstatat(ndfd, nname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;	/* retransmitted rename that did happen */
	errno = saved;
	return -1;
}

int
fsop_unlink(int dfd, const char *name)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_UNLINK, name) < 0 ? -1 :
		    fault_after(FSOP_UNLINK, fault_unlink(name) ? -1 :
		    unlinkat(dfd, name, 0));
	while (rc < 0 && fsop_again(&tries));
	return rc;
}

int
fsop_rmdir(int dfd, const char *name)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_RMDIR, name) < 0 ? -1 :
		    fault_after(FSOP_RMDIR, unlinkat(dfd, name, AT_REMOVEDIR));
	while (rc < 0 && fsop_again(&tries));
	return rc;
}

int
fsop_symlink(const char *target, int dfd, const char *name)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_SYMLINK, name) < 0 ? -1 :
		    fault_after(FSOP_SYMLINK, symlinkat(target, dfd, name));
	while (rc < 0 && fsop_again(&tries));
	if (rc < 0)
		sftp_errno(dfd, name, 0);
	return rc;
}

int
fsop_readlink(int dfd, const char *name, char *out, size_t size)
{
	ssize_t n;
	int tries = 0;

	do
		n = fsop_pre(FSOP_READLINK, name) < 0 ? -1 :
		    readlinkat(dfd, name, out, size - 1);
	while (n < 0 && fsop_again(&tries));
	if (n < 0)
		return -1;
	if ((size_t)n >= size - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out[n] = 0;
	return (int)n;
}

/* close(2) fd, errno as it was before */
static void
close_keeping_errno(int fd)
{
	int saved = errno;

	(void)close(fd);
	errno = saved;
}

int
fsop_chmod_dir(int dfd, const char *name, mode_t mode)
{
	int fd, rc, tries = 0;

	dirty = 1;
	do	/* counted as the mkdir it completes (ids.c) */
		fd = fsop_pre(FSOP_MKDIR, name) < 0 ? -1 : openat(dfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd < 0 && fsop_again(&tries));
	/* one its owner may not read (mode 000) cannot be opened, but
	 * its owner may still set its mode: by name, not followed */
	if (fd < 0 && errno == EACCES)
		return fchmodat(dfd, name, mode, AT_SYMLINK_NOFOLLOW);
	if (fd < 0)
		return -1;
	rc = fchmod(fd, mode);
	close_keeping_errno(fd);
	return rc;
}

int
fsop_create(int dfd, const char *name, mode_t mode)
{
	int fd, tries = 0;

	dirty = 1;
	do
		fd = fsop_pre(FSOP_CREATE, name) < 0 ? -1 : openat(dfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    new_mode(mode));
	while (fd < 0 && fsop_again(&tries));
	if (fd < 0)
		sftp_errno(dfd, name, 0);
	return fd;
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * A write is not retried after ESTALE: part of it may have reached the
 * file.  (write_all itself resumes after EINTR.)
 */
int
fsop_write(int fd, const void *data, size_t len)
{
	dirty = 1;
	if (fsop_pre(FSOP_WRITE, NULL) < 0)
		return -1;
	return write_all(fd, data, len);
}

int
fsop_append(int fd, const void *data, size_t len)
{
	if (fsop_pre(FSOP_WRITE, NULL) < 0)
		return -1;
	return write_all(fd, data, len);
}

ssize_t
fsop_pread(int fd, void *p, size_t len, off_t off)
{
	ssize_t n;
	int err;

	if ((err = fault_read_fails(fd)) != 0) {
		errno = err;
		return -1;
	}
	do
		n = pread(fd, p, len, off);
	while (n < 0 && errno == EINTR);
	return n;
}

int
fsop_truncate(int fd, off_t len)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_WRITE, NULL) < 0 ? -1 : ftruncate(fd, len);
	while (rc < 0 && errno == EINTR && fsop_again(&tries));
	return rc;
}

int
fsop_touch(int fd)
{
	int rc, tries = 0;

	dirty = 1;
	do
		rc = fsop_pre(FSOP_WRITE, NULL) < 0 ? -1 : futimens(fd, NULL);
	while (rc < 0 && errno == EINTR && fsop_again(&tries));
	return rc;
}

/* fsync fd; name (NULL: none) is what fault injection matches. */
static int
fsync_named(int fd, const char *name)
{
	int rc, tries = 0;

	if (!sync_on)
		return 0;
	do
		rc = fsop_pre(FSOP_FSYNC, name) < 0 ? -1 : fsync(fd);
	while (rc < 0 && errno == EINTR && fsop_again(&tries));
	return rc;
}

int
fsop_fsync(int fd)
{
	return fsync_named(fd, NULL);
}

int
fsop_fsync_dir(int dfd, int parentfd, const char *name)
{
	int rc, fd, tries = 0;

	if ((rc = fsync_named(dfd, name)) == 0 || errno != ESTALE ||
	    parentfd == -1)
		return rc;
	while (fsop_again(&tries)) {
		if ((fd = fsop_opendir(parentfd, name)) < 0)
			return -1;
		rc = fsync_named(fd, name);
		close_keeping_errno(fd);
		if (rc == 0 || errno != ESTALE)
			return rc;
	}
	return -1;
}

int
fsop_close(int fd)
{
	/* Linux closes the descriptor even when close() fails: no retry. */
	if (close(fd) < 0 && errno != EINTR)
		return -1;
	return 0;
}

int
fsop_stat(int dfd, const char *name, struct stat *st)
{
	int rc, tries = 0;

	do
		rc = fsop_pre(FSOP_STAT, name) < 0 ? -1 :
		    fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW);
	while (rc < 0 && fsop_again(&tries));
	return rc;
}

int
fsop_opendir(int dfd, const char *name)
{
	int fd, tries = 0;

	do
		fd = fsop_pre(FSOP_OPEN, name) < 0 ? -1 : openat(dfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd < 0 && fsop_again(&tries));
	return fd;
}

int
fsop_openfile(int dfd, const char *name, int flags, mode_t mode)
{
	enum fsop_kind kind = (flags & O_CREAT) ? FSOP_CREATE : FSOP_OPEN;
	int fd, tries = 0;

	if (flags & (O_CREAT | O_TRUNC | O_WRONLY | O_RDWR))
		dirty = 1;
	do {
		fd = -1;
		if (fsop_pre(kind, name) < 0)
			continue;
		if (kind == FSOP_OPEN)
			fault_open(dfd, name);
		fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC,
		    new_mode(mode));
	} while (fd < 0 && fsop_again(&tries));
	if (fd < 0 && (flags & O_EXCL))
		sftp_errno(dfd, name, 0);
	return fd;
}

int
fsop_open_overwrite(int dfd, const char *name, off_t *size)
{
	struct stat st;
	int fd;

	if ((fd = fsop_openfile(dfd, name, O_WRONLY | O_NONBLOCK, 0)) < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	*size = st.st_size;
	return fd;
fail:
	close_keeping_errno(fd);
	return -1;
}

/* Write data to fd, fsync it if asked (and syncing is on); left open. */
static int
fill(int fd, const void *data, size_t len, unsigned flags)
{
	if (fsop_write(fd, data, len) < 0 ||
	    ((flags & FSOP_DURABLE) && fsop_fsync(fd) < 0))
		return -1;
	return 0;
}

int
fsop_create_replacing(int dfd, const char *name, mode_t mode)
{
	int fd;

	if ((fd = fsop_create(dfd, name, mode)) < 0 && errno == EEXIST &&
	    (fsop_unlink(dfd, name) == 0 || errno == ENOENT ||
	    (errno == EISDIR && fsop_rmtree(dfd, name) == 0)))
		fd = fsop_create(dfd, name, mode);
	return fd;
}

/*
 * Remove the file a failed try of put_once made: its temporary file tmp
 * in tmpdfd (the spool's tmp/: fsop.h) or, in_place, dfd/name itself
 * (dfd named dir in the message, as its caller names it).  Where it is
 * still open, before its close: on sshfs a file removed just after its
 * close may stay for good as .fuse_hiddenNNN (libfuse issue 746), one
 * removed while open goes with the close.
 * A removal that fails leaves it, and says so: a temporary file is
 * removed by spoold's sweep of tmp/ (recover.c: once its writer has
 * exited, or after a day); a file in place is read by no one before a
 * write of it succeeds (fsop.h), which replaces it.  errno is kept.
 */
static void
put_undo(int in_place, int tmpdfd, const char *tmp, int dfd,
    const char *dir, const char *name)
{
	int saved = errno;

	if (in_place) {
		if (fsop_unlink(dfd, name) < 0 && errno != ENOENT)
			msg_warn("unlink: %s/%s: %m (a partial file left "
			    "behind; its next write replaces it)", dir, name);
	} else if (fsop_unlink(tmpdfd, tmp) < 0 && errno != ENOENT)
		msg_warn("unlink: tmp/%s: %m (left behind for spoold's sweep "
		    "of tmp/)", tmp);
	errno = saved;
}

/* One try of fsop_publish (tmpdfd) or, in_place, of fsop_write_whole
 * (dir: dfd as messages name it). */
static int
put_once(int in_place, int tmpdfd, int dfd, const char *dir,
    const char *name, const void *data, size_t len, mode_t mode,
    unsigned flags)
{
	char tmp[FSOP_TMPNAME_MAX];
	int fd;

	if (in_place)
		fd = fsop_create_replacing(dfd, name, mode);
	else {
		fsop_tmpname(tmp, sizeof tmp, NULL);
		fd = fsop_create(tmpdfd, tmp, mode);
	}
	if (fd < 0)
		return -1;
	/* a failed write's file is removed before its close (put_undo) */
	if (fill(fd, data, len, flags) < 0) {
		put_undo(in_place, tmpdfd, tmp, dfd, dir, name);
		close_keeping_errno(fd);
		return -1;
	}
	if (fsop_close(fd) < 0 ||
	    (!in_place && fsop_rename(tmpdfd, tmp, dfd, name) < 0)) {
		put_undo(in_place, tmpdfd, tmp, dfd, dir, name);
		return -1;
	}
	return 0;
}

/*
 * A write, fsync or close that meets a stale handle is not retried on
 * its own (part of the write may have landed), but the file is this
 * call's alone (its temporary file, or the new file in place): it is
 * removed and the whole file written again, under a new temporary
 * name, FSOP_ESTALE_TRIES times in all.
 */
static int
put(int in_place, int tmpdfd, int dfd, const char *dir, const char *name,
    const void *data, size_t len, mode_t mode, unsigned flags)
{
	int rc, tries = 0;

	do
		rc = put_once(in_place, tmpdfd, dfd, dir, name, data, len,
		    mode, flags);
	while (rc < 0 && errno == ESTALE && fsop_again(&tries));
	return rc;
}

int
fsop_publish(int tmpdfd, int dfd, const char *name, const void *data,
    size_t len, mode_t mode, unsigned flags)
{
	return put(0, tmpdfd, dfd, NULL, name, data, len, mode, flags);
}

int
fsop_write_whole(int dfd, const char *dir, const char *name,
    const void *data, size_t len, mode_t mode, unsigned flags)
{
	return put(1, -1, dfd, dir, name, data, len, mode, flags);
}

/* Both halves below, with the syncfs(2) between them, in this thread. */
int
fsop_barrier(int anyfd)
{
	int rc, tries = 0;

	if ((rc = fsop_barrier_begin()) <= 0)
		return rc;
	fault_sync_delay(fault_sync_delay_ms(), fault_sync_hold());
	while ((rc = syncfs(anyfd)) < 0 && errno == EINTR &&
	    fsop_again(&tries))
		;
	return fsop_barrier_end(rc < 0 ? errno : fault_sync_loses(anyfd));
}

int
fsop_barrier_begin(void)
{
	if (!dirty || !sync_on)
		return 0;
	if (fsop_pre(FSOP_SYNCFS, NULL) < 0)
		return -1;
	dirty = 0;
	return 1;
}

int
fsop_barrier_end(int err)
{
	if ((err = fault_sync_result(err)) == 0)
		return 0;
	dirty = 1;
	errno = err;
	return -1;
}

int
fsop_open_regular(int dfd, const char *name, struct stat *stp)
{
	struct stat st;
	int fd, saved;

	if ((fd = fsop_openfile(dfd, name, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		saved = errno;
	else if (!S_ISREG(st.st_mode))
		saved = EINVAL;
	else {
		if (stp)
			*stp = st;
		return fd;
	}
	(void)close(fd);
	errno = saved;
	return -1;
}

int
fsop_read_file(int dfd, const char *name, size_t max, struct buf *out,
    struct stat *stp)
{
	struct stat st;
	ssize_t n;
	size_t want;
	int fd, saved;

	buf_reset(out);
	if ((fd = fsop_open_regular(dfd, name, &st)) < 0)
		return -1;
	if ((size_t)st.st_size > max) {
		errno = EFBIG;
		goto fail;
	}
	buf_reserve(out, (size_t)st.st_size + 1);
	for (;;) {
		if (out->len > max) {
			errno = EFBIG;
			goto fail;
		}
		buf_reserve(out, 4096);
		want = out->cap - out->len - 1;
		n = fsop_pread(fd, out->p + out->len, want, (off_t)out->len);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		out->len += (size_t)n;
		/* a short read of a regular file is its end once it holds
		 * all fstat saw (no second read to be told so); one that
		 * grew meanwhile is read on, as is one that says size 0
		 * (/proc, some FUSE filesystems) */
		if ((size_t)n < want && st.st_size > 0 &&
		    out->len >= (size_t)st.st_size)
			break;
	}
	out->p[out->len] = 0;
	if (out->len > max) {
		errno = EFBIG;
		goto fail;
	}
	if (stp)
		*stp = st;
	(void)close(fd);
	return 0;
fail:
	saved = errno;
	(void)close(fd);
	buf_reset(out);
	errno = saved;
	return -1;
}

int
fsop_list(int dfd, const char *name, fsop_list_fn fn, void *arg)
{
	struct dirent *de;
	DIR *dir;
	char dname[256];
	/* (for list-fails, "." is the directory's own name) */
	const char *fname = fsop_fault_hook ? name :
	    fault_list_name(dfd, name, dname, sizeof dname);
	int fd, rc = 0, saved, tries = 0;

	do
		fd = fsop_pre(FSOP_LIST, fname) < 0 ? -1 : openat(dfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd < 0 && fsop_again(&tries));
	if (fd < 0)
		return -1;
	if ((dir = fdopendir(fd)) == NULL) {
		saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(dir)) == NULL)
			break;
		if (de->d_name[0] == '.' && (de->d_name[1] == 0 ||
		    (de->d_name[1] == '.' && de->d_name[2] == 0)))
			continue;
		if ((rc = fn(arg, de->d_name, de->d_type)) != 0)
			break;
	}
	saved = errno;
	if (de == NULL && saved == 0 && !fsop_fault_hook)
		saved = fault_list_breaks(fname);
	(void)closedir(dir);
	if (de == NULL && saved != 0) {
		errno = saved;
		return -1;
	}
	return rc;
}

struct names_ctx {
	struct fsop_names *ns;
	int	(*keep)(const char *);
};

static int
names_add(void *arg, const char *name, unsigned char type)
{
	struct names_ctx *c = arg;
	struct fsop_names *ns = c->ns;

	(void)type;
	if (c->keep && !c->keep(name))
		return 0;
	/* doubling: a journal may have 10,000 segments */
	ns->v = xgrowarray(ns->v, ns->n, sizeof *ns->v);
	ns->v[ns->n++] = xstrdup(name);
	return 0;
}

static int
names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
fsop_list_names(int dfd, const char *name, int (*keep)(const char *),
    int (*cmp)(const void *, const void *), struct fsop_names *ns)
{
	struct names_ctx c = { ns, keep };
	int saved;

	ns->v = NULL;
	ns->n = 0;
	if (fsop_list(dfd, name, names_add, &c) < 0) {
		saved = errno;
		fsop_names_free(ns);
		errno = saved;
		return -1;
	}
	if (ns->n > 1)
		qsort(ns->v, ns->n, sizeof *ns->v, cmp ? cmp : names_cmp);
	return 0;
}

void
fsop_names_free(struct fsop_names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}

struct rmtree_ctx {
	int	dfd;
	int	depth;
	int	failed;
	int	err;
};

static int rmtree_at(int dfd, const char *name, int depth);

static int
rmtree_entry(void *arg, const char *name, unsigned char type)
{
	struct rmtree_ctx *c = arg;
	struct stat st;

	if (type == DT_UNKNOWN) {
		if (fstatat(c->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT) {
				c->failed = 1;
				c->err = errno;
			}
			return 0;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
	}
	if (type == DT_DIR) {
		if (rmtree_at(c->dfd, name, c->depth + 1) < 0) {
			c->failed = 1;
			c->err = errno;
		}
	} else if (fsop_unlink(c->dfd, name) < 0 && errno != ENOENT) {
		c->failed = 1;
		c->err = errno;
	}
	return 0;
}

/* Empty the directory name and remove it. */
static int
rmtree_dir(int dfd, const char *name, int depth)
{
	struct rmtree_ctx c;
	int fd;

	if ((fd = fsop_opendir(dfd, name)) < 0)
		return errno == ENOENT ? 0 : -1;
	c.dfd = fd;
	c.depth = depth;
	c.failed = 0;
	c.err = 0;
	if (fsop_list(fd, ".", rmtree_entry, &c) < 0 && errno != ENOENT) {
		c.failed = 1;
		c.err = errno;
	}
	(void)close(fd);
	if (c.failed) {
		errno = c.err;
		return -1;
	}
	if (fsop_rmdir(dfd, name) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

static int
rmtree_at(int dfd, const char *name, int depth)
{
	if (depth > 64) {
		errno = ELOOP;
		return -1;
	}
	if (fsop_unlink(dfd, name) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if (rmtree_dir(dfd, name, depth) == 0)
		return 0;
	/*
	 * A directory its owner took the rights from (a task's outputs
	 * after chmod -R a-w, a Go module cache) can be neither listed nor
	 * emptied, and rm -rf fails on it too; it is ours (else the mode
	 * cannot be set either): given them back, then once more.
	 */
	if (errno != EACCES)
		return -1;
	if (fsop_chmod_dir(dfd, name, 0700) < 0) {
		errno = EACCES;		/* (the emptying's, said) */
		return -1;
	}
	return rmtree_dir(dfd, name, depth);
}

int
fsop_rmtree(int dfd, const char *name)
{
	return rmtree_at(dfd, name, 0);
}

static char stats_path[4096];

static void
stats_dump(void)
{
	int fd = open(stats_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);

	if (fd >= 0) {
		fsop_stats_write(fd);
		(void)close(fd);
	}
}

void
fsop_stats_at_exit(const char *prog)
{
	const char *base = getenv("CKSPOOL_FSOP_STATS");

	if (base == NULL || *base == 0)
		return;
	snprintf(stats_path, sizeof stats_path, "%s.%s.%ld", base, prog,
	    (long)getpid());
	atexit(stats_dump);
}

void
fsop_stats_write(int fd)
{
	char line[64];
	int i, n;

	for (i = 0; i < FSOP_NKINDS; i++) {
		n = snprintf(line, sizeof line, "%s %lu\n", fsop_kind_name[i],
		    fsop_count[i]);
		(void)!write(fd, line, (size_t)n);
	}
}

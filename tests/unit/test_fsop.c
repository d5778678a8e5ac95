/*
 * test_fsop.c - fsop.c, the filesystem layer: fsop_publish (the file
 * appears complete with its mode, replaces the old one, and leaves no
 * temporary file behind, also when a step fails), fsop_write_whole
 * (the file itself, what had the name replaced and never opened, no file
 * left by a failure, a stale handle survived), fsop_read_file
 * refusing symlinks (ELOOP), FIFOs (EINVAL, without blocking),
 * directories and files over the limit (EFBIG), fsop_rename's NFS rule
 * (old name gone and new name present after ENOENT is success) through
 * fsop_fault_hook, injected failures, fsop_rmtree on a nested tree with
 * a symlink that must not be followed, fsop_list, fsop_list_names
 * (kept names, sorted; nothing kept from a listing that failed),
 * fsop_tmpname and the
 * fsop_count counters; fsop_truncate and spool_init's making of the
 * spool directory, both counted and reached by fault injection; the
 * removal of what a failed fsop_publish or fsop_write_whole made, its
 * own failure said and the file left (CKSPOOL_FAULT).
 */
#include "unit.h"
#include "fault.h"
#include "fsop.h"
#include "spool.h"

struct fx {
	char	*dir;
	int	dfd, tmpfd, dstfd;
};

static int
fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);

	umask(022);
	if ((f->dir = unit_tmpdir()) == NULL)
		return -1;
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dfd < 0 || mkdirat(f->dfd, "tmp", 0700) < 0 ||
	    mkdirat(f->dfd, "dst", 0700) < 0)
		return -1;
	f->tmpfd = openat(f->dfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f->dstfd = openat(f->dfd, "dst", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->tmpfd < 0 || f->dstfd < 0)
		return -1;
	fsop_set_sync(1);
	fsop_fault_hook = NULL;
	*state = f;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;

	fsop_fault_hook = NULL;
	unsetenv(FAULT_ENV);
	fault_reload();
	fsop_set_sync(1);
	close(f->tmpfd);
	close(f->dstfd);
	close(f->dfd);
	unit_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static int
entries(int dfd, const char *name)
{
	int n = 0;

	if (fsop_list(dfd, name, unit_count_listed, &n) < 0)
		return -1;
	return n;
}

static void
test_publish(void **state)
{
	static const char data[] = "id: 1\nstate: done\n";
	static const char data2[] = "replaced\n";
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	struct stat st;

	assert_int_equal(fsop_publish(f->tmpfd, f->dstfd, "result", data,
	    strlen(data), 0640, FSOP_DURABLE), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "result", 4096, &b, &st), 0);
	assert_int_equal(b.len, strlen(data));
	assert_string_equal(b.p, data);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(entries(f->dfd, "tmp"), 0);

	/* Publishing again replaces it whole. */
	assert_int_equal(fsop_publish(f->tmpfd, f->dstfd, "result", data2,
	    strlen(data2), 0600, 0), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "result", 4096, &b, &st), 0);
	assert_string_equal(b.p, data2);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(entries(f->dfd, "tmp"), 0);
	assert_int_equal(entries(f->dfd, "dst"), 1);

	/* Empty content is a file too. */
	assert_int_equal(fsop_publish(f->tmpfd, f->dstfd, "empty", "", 0, 0600,
	    0), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "empty", 10, &b, NULL), 0);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

/* A failing step leaves neither a temporary nor a destination file. */
static enum fsop_kind fail_kind;
static int fail_errno;

/* The steps failed in turn (fsop_write_whole makes no rename). */
static const struct {
	enum fsop_kind kind;
	int err;
	unsigned flags;
} fail_rows[] = {
	{ FSOP_CREATE,	EACCES,	0 },
	{ FSOP_WRITE,	ENOSPC,	0 },
	{ FSOP_FSYNC,	EIO,	FSOP_DURABLE },
	{ FSOP_RENAME,	EXDEV,	0 },
};

static int
fail_hook(enum fsop_kind kind, const char *name)
{
	(void)name;
	return kind == fail_kind ? fail_errno : 0;
}

static void
test_publish_failures(void **state)
{
	struct fx *f = *state;
	struct stat st;
	size_t i;
	int rc;

	for (i = 0; i < NELEM(fail_rows); i++) {
		fail_kind = fail_rows[i].kind;
		fail_errno = fail_rows[i].err;
		fsop_fault_hook = fail_hook;
		errno = 0;
		rc = fsop_publish(f->tmpfd, f->dstfd, "x", "data\n", 5, 0600,
		    fail_rows[i].flags);
		fsop_fault_hook = NULL;
		TCHECK(rc == -1 && errno == fail_rows[i].err, "%s: rc %d errno %d",
		    fsop_kind_name[fail_rows[i].kind], rc, errno);
		TCHECK(entries(f->dfd, "tmp") == 0, "%s: temporary file left",
		    fsop_kind_name[fail_rows[i].kind]);
		TCHECK(fstatat(f->dstfd, "x", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT, "%s: destination created",
		    fsop_kind_name[fail_rows[i].kind]);
	}
}

/*
 * CKSPOOL_FAULT=spec armed, fsop_publish (in_place 0) or fsop_write_whole
 * of "x" in dst/, its stderr in *err: its result, errno kept in *errp.
 */
static int
put_with_fault(struct fx *f, const char *spec, int in_place, struct buf *err,
    int *errp)
{
	char path[4200];
	int fd, saved, rc;

	snprintf(path, sizeof path, "%s/stderr", f->dir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) >= 0);
	assert_true((saved = dup(STDERR_FILENO)) >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	setenv(FAULT_ENV, spec, 1);
	fault_reload();
	errno = 0;
	rc = in_place ? fsop_write_whole(f->dstfd, "dst", "x", "data\n", 5,
	    0600, 0) : fsop_publish(f->tmpfd, f->dstfd, "x", "data\n", 5, 0600,
	    0);
	*errp = errno;
	unsetenv(FAULT_ENV);
	fault_reload();
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fd);
	assert_int_equal(fsop_read_file(f->dfd, "stderr", 65536, err, NULL), 0);
	return rc;
}

/*
 * A failed publish removes its temporary file, and a removal that fails
 * too is said, naming the file left behind (spoold's sweep of tmp/
 * takes it); the same for a failed fsop_write_whole and the file in
 * place (its next write replaces it), named with the directory its
 * caller gave (it was named as in that directory: "x", not "dst/x",
 * which no reader of the log could place).  Mutations: create 1, write 2,
 * unlink 3.  The removal was an unlinkat of its own, outside the layer
 * (neither counted nor reached by fault injection) and unchecked.
 */
static void
test_a_failed_removal_after_a_failed_write_is_said(void **state)
{
	struct fx *f = *state;
	struct buf err = BUF_INIT, b = BUF_INIT;
	char want[512], left[256];
	struct dirent *de;
	DIR *d;
	int e;

	assert_int_equal(put_with_fault(f, "fail-at=2:ENOSPC,fail-at=3:EIO", 0,
	    &err, &e), -1);
	assert_int_equal(e, ENOSPC);	/* the write's, not the unlink's */
	TCHECK(entries(f->dfd, "tmp") == 1, "tmp/ holds %d files, not the one "
	    "left behind; stderr: %s", entries(f->dfd, "tmp"), err.p);
	assert_true((d = fdopendir(dup(f->tmpfd))) != NULL);
	left[0] = 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			snprintf(left, sizeof left, "%s", de->d_name);
	closedir(d);
	snprintf(want, sizeof want, "warning: unlink: tmp/%s: %s (left behind "
	    "for spoold's sweep of tmp/)\n", left, strerror(EIO));
	TCHECK(strstr(err.p, want) != NULL, "no \"%s\" in: %s", want, err.p);

	/* the file in place: left, said, replaced by the next write */
	assert_int_equal(put_with_fault(f, "fail-at=2:ENOSPC,fail-at=3:EIO", 1,
	    &err, &e), -1);
	assert_int_equal(e, ENOSPC);
	snprintf(want, sizeof want, "warning: unlink: dst/x: %s (a partial "
	    "file left behind; its next write replaces it)\n", strerror(EIO));
	TCHECK(strstr(err.p, want) != NULL, "no \"%s\" in: %s", want, err.p);
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "x", "new\n", 4,
	    0600, 0), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "x", 64, &b, NULL), 0);
	assert_string_equal(b.p, "new\n");

	/* a removal that works says nothing */
	assert_int_equal(put_with_fault(f, "fail-at=2:ENOSPC", 0, &err, &e),
	    -1);
	assert_int_equal(e, ENOSPC);
	assert_null(strstr(err.p, "unlink"));
	assert_int_equal(entries(f->dfd, "tmp"), 1);	/* the first one */
	buf_free(&err);
	buf_free(&b);
}

/*
 * fsop_write_whole: the file itself, no temporary anywhere; what had the
 * name (a link, a FIFO, a directory tree, a longer file) is replaced,
 * never opened; a failing step leaves no file; a stale handle writes it
 * again whole.
 */
static int stale_writes;

static int
stale_once_hook(enum fsop_kind kind, const char *name)
{
	(void)name;
	return kind == FSOP_WRITE && stale_writes-- > 0 ? ESTALE : 0;
}

static void
test_write_whole(void **state)
{
	static const char data[] = "id: 1\nstate: done\n";
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	struct stat st;
	size_t i;
	int fd;

	assert_int_equal(mkdirat(f->dstfd, "sub", 0700), 0);
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/result", data,
	    strlen(data), 0640, FSOP_DURABLE), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "sub/result", 4096, &b, &st),
	    0);
	assert_string_equal(b.p, data);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(entries(f->dstfd, "sub"), 1);
	assert_int_equal(entries(f->dfd, "tmp"), 0);

	/* a longer file of that name: replaced whole, not written over */
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/result",
	    "x\n", 2, 0600, 0), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "sub/result", 4096, &b, &st),
	    0);
	assert_string_equal(b.p, "x\n");

	/* a link of that name: replaced, its target untouched */
	fd = openat(f->dfd, "victim", O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "victim\n", 7), 7);
	assert_int_equal(close(fd), 0);
	assert_int_equal(symlinkat("../../victim", f->dstfd, "sub/link"), 0);
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/link", data,
	    strlen(data), 0600, 0), 0);
	assert_int_equal(fsop_read_file(f->dfd, "victim", 64, &b, NULL), 0);
	assert_string_equal(b.p, "victim\n");
	assert_int_equal(fsop_read_file(f->dstfd, "sub/link", 64, &b, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(b.p, data);

	/* a FIFO of that name: replaced, not opened (which would block:
	 * the alarm ends the test instead of hanging it) */
	assert_int_equal(mkfifoat(f->dstfd, "sub/fifo", 0600), 0);
	alarm(10);
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/fifo", data,
	    strlen(data), 0600, 0), 0);
	alarm(0);
	assert_int_equal(fsop_read_file(f->dstfd, "sub/fifo", 64, &b, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	/* a directory tree of that name: removed, and the file made */
	assert_int_equal(mkdirat(f->dstfd, "sub/tree", 0700), 0);
	assert_int_equal(mkdirat(f->dstfd, "sub/tree/deeper", 0700), 0);
	fd = openat(f->dstfd, "sub/tree/deeper/x", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/tree", data,
	    strlen(data), 0600, 0), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "sub/tree", 64, &b, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(b.p, data);

	/* a stale handle during the write: written again, whole */
	stale_writes = 1;
	fsop_fault_hook = stale_once_hook;
	assert_int_equal(fsop_write_whole(f->dstfd, "dst", "sub/stale", data,
	    strlen(data), 0600, 0), 0);
	fsop_fault_hook = NULL;
	assert_int_equal(stale_writes, -1);
	assert_int_equal(fsop_read_file(f->dstfd, "sub/stale", 64, &b, NULL),
	    0);
	assert_string_equal(b.p, data);

	/* a failing step leaves no file */
	for (i = 0; i < NELEM(fail_rows); i++) {
		if (fail_rows[i].kind == FSOP_RENAME)
			continue;
		fail_kind = fail_rows[i].kind;
		fail_errno = fail_rows[i].err;
		fsop_fault_hook = fail_hook;
		errno = 0;
		TCHECK(fsop_write_whole(f->dstfd, "dst", "sub/x", "data\n", 5,
		    0600, fail_rows[i].flags) == -1 &&
		    errno == fail_rows[i].err,
		    "%s: errno %d", fsop_kind_name[fail_rows[i].kind], errno);
		fsop_fault_hook = NULL;
		TCHECK(fstatat(f->dstfd, "sub/x", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT, "%s: sub/x left",
		    fsop_kind_name[fail_rows[i].kind]);
	}
	/* result, link, fifo, tree and stale */
	assert_int_equal(entries(f->dstfd, "sub"), 5);
	assert_int_equal(entries(f->dfd, "tmp"), 0);
	buf_free(&b);
}

static void
test_fault_hook_fails_operations(void **state)
{
	struct fx *f = *state;
	struct stat st;

	fail_kind = FSOP_MKDIR;
	fail_errno = EROFS;
	fsop_fault_hook = fail_hook;
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "d", 0700), -1);
	assert_int_equal(errno, EROFS);
	/* Other kinds go through. */
	assert_int_equal(fsop_symlink("t", f->dfd, "l"), 0);
	fsop_fault_hook = NULL;
	assert_int_equal(fstatat(f->dfd, "d", &st, 0), -1);
	assert_int_equal(fsop_mkdir(f->dfd, "d", 0700), 0);
}

/*
 * fsop_read_file reads a file whole at every size around its buffer's
 * steps, and one that says size 0 but has content (/proc) to its end.
 */
static void
test_read_file_whole(void **state)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 8191, 8192,
	    8193, 65536, 100001 };
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	char *data, *ref;
	size_t i, j, n;
	ssize_t got;
	FILE *fp;
	int fd;

	data = xmalloc(100001);
	for (j = 0; j < 100001; j++)
		data[j] = (char)('a' + j % 26);
	for (i = 0; i < NELEM(sizes); i++) {
		fd = openat(f->dstfd, "f", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		got = write(fd, data, sizes[i]);
		assert_int_equal(got, (ssize_t)sizes[i]);
		assert_int_equal(close(fd), 0);
		TCHECK(fsop_read_file(f->dstfd, "f", 200000, &b, NULL) == 0 &&
		    b.len == sizes[i] && memcmp(b.p, data, sizes[i]) == 0 &&
		    b.p[b.len] == 0, "size %zu: read %zu bytes", sizes[i], b.len);
	}
	free(data);

	/* size 0 by fstat, over 4 KiB of content that a read gives a page
	 * of at a time: the kernel's list of ciphers, read again by stdio
	 * to compare */
	assert_int_equal(fsop_read_file(AT_FDCWD, "/proc/crypto", 1 << 22,
	    &b, NULL), 0);
	ref = xmalloc(1 << 22);
	fp = fopen("/proc/crypto", "r");
	assert_non_null(fp);
	n = fread(ref, 1, 1 << 22, fp);
	assert_int_equal(fclose(fp), 0);
	TCHECK(n > 8192 && b.len == n && memcmp(b.p, ref, n) == 0,
	    "/proc/crypto: %zu bytes read, %zu by stdio", b.len, n);
	free(ref);
	buf_free(&b);
}

static void
test_read_file_refusals(void **state)
{
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	char path[4200];
	int fd;

	snprintf(path, sizeof path, "%s/dst/file", f->dir);
	assert_int_equal(unit_write_file(path, "0123456789", 10), 0);
	assert_int_equal(symlinkat("file", f->dstfd, "link"), 0);
	assert_int_equal(mkfifoat(f->dstfd, "fifo", 0600), 0);
	assert_int_equal(mkdirat(f->dstfd, "dir", 0700), 0);

	/* The file itself, at and under the limit. */
	assert_int_equal(fsop_read_file(f->dstfd, "file", 10, &b, NULL), 0);
	assert_string_equal(b.p, "0123456789");

	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "file", 9, &b, NULL), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(b.len, 0);

	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "link", 100, &b, NULL), -1);
	assert_int_equal(errno, ELOOP);

	/* A FIFO with no writer: refused at once, not waited on. */
	alarm(10);
	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "fifo", 100, &b, NULL), -1);
	assert_int_equal(errno, EINVAL);
	/* And with a writer holding it open, still refused. */
	fd = openat(f->dstfd, "fifo", O_RDWR | O_NONBLOCK);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "fifo", 100, &b, NULL), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
	alarm(0);

	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "dir", 100, &b, NULL), -1);
	assert_int_equal(errno, EINVAL);

	errno = 0;
	assert_int_equal(fsop_read_file(f->dstfd, "missing", 100, &b, NULL), -1);
	assert_int_equal(errno, ENOENT);
	buf_free(&b);
}

/* ---- NFS: a retransmitted rename that did happen ---- */

static struct {
	int odfd, ndfd;
	const char *oname, *nname;
	int also_remove_new;
	int fired;
} rh;

static int
rename_hook(enum fsop_kind kind, const char *name)
{
	if (kind != FSOP_RENAME || rh.fired)
		return 0;
	(void)name;
	/* The first transmission does the rename; its reply is lost. */
	rh.fired = 1;
	if (renameat(rh.odfd, rh.oname, rh.ndfd, rh.nname) < 0)
		return errno;
	if (rh.also_remove_new)
		(void)unlinkat(rh.ndfd, rh.nname, 0);
	return 0;	/* the retransmission is the real call: ENOENT */
}

static void
test_rename_nfs_rule(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char path[4200];

	snprintf(path, sizeof path, "%s/tmp/a", f->dir);
	assert_int_equal(unit_write_file(path, "a", 1), 0);

	/* Old gone, new present: success. */
	memset(&rh, 0, sizeof rh);
	rh.odfd = f->tmpfd;
	rh.ndfd = f->dstfd;
	rh.oname = "a";
	rh.nname = "b";
	fsop_fault_hook = rename_hook;
	assert_int_equal(fsop_rename(f->tmpfd, "a", f->dstfd, "b"), 0);
	fsop_fault_hook = NULL;
	assert_int_equal(rh.fired, 1);
	assert_int_equal(fstatat(f->dstfd, "b", &st, 0), 0);

	/* Old gone and new gone too: the ENOENT stands. */
	assert_int_equal(unit_write_file(path, "a", 1), 0);
	memset(&rh, 0, sizeof rh);
	rh.odfd = f->tmpfd;
	rh.ndfd = f->dstfd;
	rh.oname = "a";
	rh.nname = "c";
	rh.also_remove_new = 1;
	fsop_fault_hook = rename_hook;
	errno = 0;
	assert_int_equal(fsop_rename(f->tmpfd, "a", f->dstfd, "c"), -1);
	assert_int_equal(errno, ENOENT);
	fsop_fault_hook = NULL;

	/* A source that never existed, and no target: ENOENT. */
	errno = 0;
	assert_int_equal(fsop_rename(f->tmpfd, "never", f->dstfd, "none"), -1);
	assert_int_equal(errno, ENOENT);
}

static void
test_rename_plain(void **state)
{
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	char path[4200];

	snprintf(path, sizeof path, "%s/tmp/a", f->dir);
	assert_int_equal(unit_write_file(path, "new", 3), 0);
	snprintf(path, sizeof path, "%s/dst/b", f->dir);
	assert_int_equal(unit_write_file(path, "old", 3), 0);
	assert_int_equal(fsop_rename(f->tmpfd, "a", f->dstfd, "b"), 0);
	assert_int_equal(fsop_read_file(f->dstfd, "b", 10, &b, NULL), 0);
	assert_string_equal(b.p, "new");
	/* A directory onto a non-empty directory fails (the lease relies on
	 * it), and the source stays. */
	assert_int_equal(mkdirat(f->tmpfd, "d1", 0700), 0);
	assert_int_equal(mkdirat(f->dstfd, "d2", 0700), 0);
	snprintf(path, sizeof path, "%s/dst/d2/x", f->dir);
	assert_int_equal(unit_write_file(path, "x", 1), 0);
	errno = 0;
	assert_int_equal(fsop_rename(f->tmpfd, "d1", f->dstfd, "d2"), -1);
	assert_true(errno == ENOTEMPTY || errno == EEXIST);
	assert_int_equal(entries(f->tmpfd, "d1"), 0);
	buf_free(&b);
}

static void
test_rmtree(void **state)
{
	static const char *const dirs[] = {
		"t", "t/a", "t/a/b", "t/a/b/c", "t/a/b/c/d", "t/e", "t/e/empty",
	};
	static const char *const files[] = {
		"t/f1", "t/a/f2", "t/a/b/f3", "t/a/b/c/d/f4", "t/e/.hidden",
	};
	struct fx *f = *state;
	char path[4200];
	struct stat st;
	size_t i;

	for (i = 0; i < NELEM(dirs); i++)
		assert_int_equal(mkdirat(f->dstfd, dirs[i], 0700), 0);
	for (i = 0; i < NELEM(files); i++) {
		snprintf(path, sizeof path, "%s/dst/%s", f->dir, files[i]);
		assert_int_equal(unit_write_file(path, "x", 1), 0);
	}
	/* A symlink to a directory outside: removed, not followed. */
	assert_int_equal(mkdirat(f->dfd, "outside", 0700), 0);
	snprintf(path, sizeof path, "%s/outside/keep", f->dir);
	assert_int_equal(unit_write_file(path, "k", 1), 0);
	snprintf(path, sizeof path, "%s/outside", f->dir);
	assert_int_equal(symlinkat(path, f->dstfd, "t/a/b/out"), 0);
	assert_int_equal(symlinkat("/nonexistent", f->dstfd, "t/dangling"), 0);
	assert_int_equal(mkfifoat(f->dstfd, "t/e/fifo", 0600), 0);

	assert_int_equal(fsop_rmtree(f->dstfd, "t"), 0);
	assert_int_equal(fstatat(f->dstfd, "t", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(fstatat(f->dfd, "outside/keep", &st, 0), 0);
	assert_int_equal(entries(f->dfd, "dst"), 0);

	/* Missing is success; a plain file and a symlink are removed. */
	assert_int_equal(fsop_rmtree(f->dstfd, "t"), 0);
	snprintf(path, sizeof path, "%s/dst/plain", f->dir);
	assert_int_equal(unit_write_file(path, "x", 1), 0);
	assert_int_equal(fsop_rmtree(f->dstfd, "plain"), 0);
	snprintf(path, sizeof path, "%s/outside", f->dir);
	assert_int_equal(symlinkat(path, f->dstfd, "dirlink"), 0);
	assert_int_equal(fsop_rmtree(f->dstfd, "dirlink"), 0);
	assert_int_equal(fstatat(f->dfd, "outside/keep", &st, 0), 0);
	assert_int_equal(entries(f->dfd, "dst"), 0);
}

struct seen {
	int	n;
	int	dots;
	char	names[8][32];
};

static int
collect(void *arg, const char *name, unsigned char type)
{
	struct seen *s = arg;

	(void)type;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		s->dots++;
	if (s->n < 8)
		snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
	s->n++;
	return strcmp(name, "stop") == 0 ? 42 : 0;
}

static void
test_list(void **state)
{
	struct fx *f = *state;
	struct seen s;
	char path[4200];

	memset(&s, 0, sizeof s);
	assert_int_equal(fsop_list(f->dstfd, ".", collect, &s), 0);
	assert_int_equal(s.n, 0);
	snprintf(path, sizeof path, "%s/dst/a", f->dir);
	assert_int_equal(unit_write_file(path, "", 0), 0);
	snprintf(path, sizeof path, "%s/dst/.b", f->dir);
	assert_int_equal(unit_write_file(path, "", 0), 0);
	memset(&s, 0, sizeof s);
	assert_int_equal(fsop_list(f->dfd, "dst", collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.dots, 0);

	/* The callback's nonzero value stops the walk and is returned. */
	snprintf(path, sizeof path, "%s/dst/stop", f->dir);
	assert_int_equal(unit_write_file(path, "", 0), 0);
	memset(&s, 0, sizeof s);
	assert_int_equal(fsop_list(f->dstfd, ".", collect, &s), 42);

	/* A symlinked directory is not listed through. */
	assert_int_equal(symlinkat("dst", f->dfd, "dstlink"), 0);
	memset(&s, 0, sizeof s);
	assert_int_equal(fsop_list(f->dfd, "dstlink", collect, &s), -1);
	assert_int_equal(s.n, 0);
}

static int
not_dotted(const char *name)
{
	return name[0] != '.';
}

/* longer names after shorter ones, as spoold takes bundles */
static int
by_length(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? -1 : x > y;
}

/*
 * fsop_list_names: every name in strcmp order, those kept, another
 * order, and a listing that fails at its end keeps nothing (errno
 * said).
 */
static void
test_list_names(void **state)
{
	static const char *const made[] = { "b", "a", ".c", "ddd" };
	struct fx *f = *state;
	struct fsop_names ns;
	char path[4200];
	size_t i;

	for (i = 0; i < sizeof made / sizeof made[0]; i++) {
		snprintf(path, sizeof path, "%s/dst/%s", f->dir, made[i]);
		assert_int_equal(unit_write_file(path, "", 0), 0);
	}
	assert_int_equal(fsop_list_names(f->dfd, "dst", NULL, NULL, &ns), 0);
	assert_int_equal(ns.n, 4);
	assert_string_equal(ns.v[0], ".c");
	assert_string_equal(ns.v[1], "a");
	assert_string_equal(ns.v[2], "b");
	assert_string_equal(ns.v[3], "ddd");
	fsop_names_free(&ns);
	assert_null(ns.v);
	assert_int_equal(ns.n, 0);

	assert_int_equal(fsop_list_names(f->dstfd, ".", not_dotted, by_length,
	    &ns), 0);
	assert_int_equal(ns.n, 3);
	assert_string_equal(ns.v[2], "ddd");
	fsop_names_free(&ns);

	setenv(FAULT_ENV, "list-breaks=dst:EIO", 1);
	fault_reload();
	errno = 0;
	assert_int_equal(fsop_list_names(f->dfd, "dst", NULL, NULL, &ns), -1);
	assert_int_equal(errno, EIO);
	assert_null(ns.v);
	assert_int_equal(ns.n, 0);
}

static void
test_tmpname_unique(void **state)
{
	enum { N = 2000 };
	char (*names)[FSOP_TMPNAME_MAX] = xcalloc(N, FSOP_TMPNAME_MAX);
	size_t i, j;

	(void)state;
	for (i = 0; i < N; i++) {
		fsop_tmpname(names[i], FSOP_TMPNAME_MAX, i % 2 ? "pre." : NULL);
		TCHECK(strlen(names[i]) > 0 && !strchr(names[i], '/'),
		    "bad name \"%s\"", names[i]);
		if (i % 2)
			TCHECK(strncmp(names[i], "pre.", 4) == 0, "\"%s\"",
			    names[i]);
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			TCHECK(strcmp(names[i], names[j]) != 0, "duplicate \"%s\"",
			    names[i]);
	free(names);
}

static void
test_counters(void **state)
{
	struct fx *f = *state;
	unsigned long before[FSOP_NKINDS];
	struct buf b = BUF_INIT;
	struct stat st;
	char target[16];
	int fd, k;

	/* One operation of each kind, and the counter of each moves by 1. */
	static const struct {
		enum fsop_kind kind;
	} order[] = {
		{ FSOP_MKDIR }, { FSOP_RMDIR }, { FSOP_SYMLINK },
		{ FSOP_READLINK }, { FSOP_UNLINK }, { FSOP_STAT }, { FSOP_OPEN },
		{ FSOP_LIST },
	};
	size_t i;

	for (i = 0; i < NELEM(order); i++) {
		enum fsop_kind kd = order[i].kind;

		memcpy(before, fsop_count, sizeof before);
		switch (kd) {
		case FSOP_MKDIR: (void)fsop_mkdir(f->dstfd, "d", 0700); break;
		case FSOP_RMDIR: (void)fsop_rmdir(f->dstfd, "d"); break;
		case FSOP_SYMLINK: (void)fsop_symlink("x", f->dstfd, "l"); break;
		case FSOP_READLINK:
			(void)fsop_readlink(f->dstfd, "l", target, sizeof target);
			break;
		case FSOP_UNLINK: (void)fsop_unlink(f->dstfd, "l"); break;
		case FSOP_STAT: (void)fsop_stat(f->dstfd, ".", &st); break;
		case FSOP_OPEN:
			fd = fsop_opendir(f->dstfd, ".");
			if (fd >= 0)
				close(fd);
			break;
		case FSOP_LIST: (void)entries(f->dstfd, "."); break;
		default: break;
		}
		for (k = 0; k < FSOP_NKINDS; k++)
			TCHECK(fsop_count[k] == before[k] + (k == (int)kd),
			    "after a %s, %s moved by %lu", fsop_kind_name[kd],
			    fsop_kind_name[k], fsop_count[k] - before[k]);
	}

	/* A durable publish: create, write, fsync, rename. */
	memcpy(before, fsop_count, sizeof before);
	assert_int_equal(fsop_publish(f->tmpfd, f->dstfd, "p", "x", 1, 0600,
	    FSOP_DURABLE), 0);
	assert_int_equal(fsop_count[FSOP_CREATE] - before[FSOP_CREATE], 1);
	assert_int_equal(fsop_count[FSOP_WRITE] - before[FSOP_WRITE], 1);
	assert_int_equal(fsop_count[FSOP_FSYNC] - before[FSOP_FSYNC], 1);
	assert_int_equal(fsop_count[FSOP_RENAME] - before[FSOP_RENAME], 1);

	/* With syncing off, no fsync is made (or counted). */
	fsop_set_sync(0);
	assert_int_equal(fsop_sync_enabled(), 0);
	memcpy(before, fsop_count, sizeof before);
	assert_int_equal(fsop_publish(f->tmpfd, f->dstfd, "p", "y", 1, 0600,
	    FSOP_DURABLE), 0);
	assert_int_equal(fsop_count[FSOP_FSYNC] - before[FSOP_FSYNC], 0);
	assert_int_equal(fsop_count[FSOP_RENAME] - before[FSOP_RENAME], 1);
	fsop_set_sync(1);

	/* A read is one open. */
	memcpy(before, fsop_count, sizeof before);
	assert_int_equal(fsop_read_file(f->dstfd, "p", 10, &b, NULL), 0);
	assert_int_equal(fsop_count[FSOP_OPEN] - before[FSOP_OPEN], 1);
	buf_free(&b);

	/* The stats are one "kind count" line per kind. */
	{
		char path[4200], *p;
		int n = 0;

		snprintf(path, sizeof path, "%s/stats", f->dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		fsop_stats_write(fd);
		close(fd);
		assert_int_equal(fsop_read_file(f->dfd, "stats", 4096, &b,
		    NULL), 0);
		for (p = b.p; (p = strchr(p, '\n')) != NULL; p++)
			n++;
		assert_int_equal(n, FSOP_NKINDS);
		assert_true(strncmp(b.p, "create ", 7) == 0);
		buf_free(&b);
	}
}

/* The two mutations that once bypassed the layer go through it now. */
static void
test_truncate_and_init_are_counted(void **state)
{
	struct fx *f = *state;
	unsigned long before;
	char path[4200], why[4400];
	struct stat st;
	int fd;

	fd = fsop_create(f->dstfd, "out", 0600);
	assert_true(fd >= 0);
	assert_int_equal(fsop_write(fd, "0123456789", 10), 0);
	before = fsop_count[FSOP_WRITE];
	assert_int_equal(fsop_truncate(fd, 4), 0);
	assert_int_equal(fsop_count[FSOP_WRITE] - before, 1);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4);
	fail_kind = FSOP_WRITE;
	fail_errno = EIO;
	fsop_fault_hook = fail_hook;
	errno = 0;
	assert_int_equal(fsop_truncate(fd, 1), -1);
	assert_int_equal(errno, EIO);
	fsop_fault_hook = NULL;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4);
	close(fd);

	/* spool_init: the spool directory itself is an fsop_mkdir */
	snprintf(path, sizeof path, "%s/spool", f->dir);
	fail_kind = FSOP_MKDIR;
	fail_errno = EACCES;
	fsop_fault_hook = fail_hook;
	assert_int_equal(spool_init(path, why, sizeof why), -1);
	fsop_fault_hook = NULL;
	TCHECK(strstr(why, "mkdir: ") == why && strstr(why, path) != NULL &&
	    strstr(why, strerror(EACCES)) != NULL, "why: %s", why);
	assert_int_equal(stat(path, &st), -1);
	before = fsop_count[FSOP_MKDIR];
	assert_int_equal(spool_init(path, why, sizeof why), 0);
	assert_int_equal(fsop_count[FSOP_MKDIR] - before, SD_NDIRS + 1);
}

/*
 * What spool_init and spool_open found on disk and name in their
 * refusal (a stray entry's name, the text of a FORMAT file not ours)
 * is quoted and escaped: an escape in it reaches no terminal raw.
 */
static void
test_spool_quotes_what_it_read(void **state)
{
	struct fx *f = *state;
	char path[4200], name[4300], why[4400];
	struct spool sp;

	snprintf(path, sizeof path, "%s/notaspool", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(name, sizeof name, "%s/a\033[2Jb", path);
	assert_int_equal(unit_write_file(name, "x", 1), 0);
	assert_int_equal(spool_init(path, why, sizeof why), -1);
	TCHECK(strstr(why, "(\"a\\x1b[2Jb\" is no part of one)") != NULL &&
	    strchr(why, '\033') == NULL, "why: %s", why);

	snprintf(path, sizeof path, "%s/spool", f->dir);
	assert_int_equal(spool_init(path, why, sizeof why), 0);
	snprintf(name, sizeof name, "%s/FORMAT", path);
	assert_int_equal(unit_write_file(name, "x\033]0;y\n", 7), 0);
	assert_int_equal(spool_open(&sp, path, why, sizeof why), -1);
	TCHECK(strstr(why, ": unknown spool format \"x\\x1b]0;y\\n\"") !=
	    NULL && strchr(why, '\033') == NULL, "why: %s", why);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_publish),
		T(test_publish_failures),
		T(test_a_failed_removal_after_a_failed_write_is_said),
		T(test_write_whole),
		T(test_fault_hook_fails_operations),
		T(test_read_file_whole),
		T(test_read_file_refusals),
		T(test_rename_nfs_rule),
		T(test_rename_plain),
		T(test_rmtree),
		T(test_list),
		T(test_list_names),
		cmocka_unit_test(test_tmpname_unique),
		T(test_counters),
		T(test_truncate_and_init_are_counted),
		T(test_spool_quotes_what_it_read),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}

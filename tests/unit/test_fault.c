/*
 * test_fault.c - fault.c, $CKSPOOL_FAULT: which operation fails or
 * crashes, that EINTR and ESTALE are retried by fsop.c within bounds,
 * that a phantom rename is absorbed by fsop_rename's NFS rule and a
 * phantom mkdir leaves the directory made, busy .nfs files, a file
 * made a FIFO before its open, a listing failed by the directory's
 * name, a read failed by the file's name, a flush that loses a
 * directory's files, a flush held while a file exists, counting every
 * operation, the variable leaving the environment,
 * and usage errors.
 */
#include <sys/wait.h>
#include <time.h>

#include "unit.h"
#include "fault.h"
#include "fsop.h"
#include "msg.h"

static int
fx_setup(void **state)
{
	fsop_fault_hook = NULL;
	return unit_dir_setup(state);
}

static int
fx_teardown(void **state)
{
	unsetenv(FAULT_ENV);
	fault_reload();
	return unit_dir_teardown(state);
}

static void
arm(const char *spec)
{
	setenv(FAULT_ENV, spec, 1);
	fault_reload();
}

static int
exists(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* An empty file through fsop (one counted create). */
static void
make_file(int dfd, const char *name)
{
	int fd;

	assert_true((fd = fsop_create(dfd, name, 0600)) >= 0);
	close(fd);
}

static void
test_unset_is_inert(void **state)
{
	struct unit_dir *f = *state;

	unsetenv(FAULT_ENV);
	fault_reload();
	assert_int_equal(fsop_mkdir(f->dfd, "a", 0700), 0);
	assert_int_equal(fsop_rmdir(f->dfd, "a"), 0);
	assert_int_equal(fault_count(), 0);
}

static void
test_fail_at_counts_mutations(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;

	arm("fail-at=3:EIO");
	assert_int_equal(fsop_mkdir(f->dfd, "a", 0700), 0);	/* 1 */
	assert_int_equal(fsop_stat(f->dfd, "a", &st), 0);	/* not counted */
	assert_int_equal(fsop_mkdir(f->dfd, "b", 0700), 0);	/* 2 */
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "c", 0700), -1);	/* 3 */
	assert_int_equal(errno, EIO);
	assert_false(exists(f->dfd, "c"));
	assert_int_equal(fsop_mkdir(f->dfd, "c", 0700), 0);	/* 4 */
	assert_int_equal(fault_count(), 4);
	/* read once, then gone from the environment: children are clean */
	assert_null(getenv(FAULT_ENV));
}

static void
test_fail_range_and_several_rules(void **state)
{
	struct unit_dir *f = *state;
	int i, rc[6];

	arm("fail-at=2:ENOSPC*2,fail-at=5:EDQUOT");
	for (i = 0; i < 6; i++) {
		char name[8];

		snprintf(name, sizeof name, "d%d", i);
		errno = 0;
		rc[i] = fsop_mkdir(f->dfd, name, 0700) == 0 ? 0 : errno;
	}
	assert_int_equal(rc[0], 0);
	assert_int_equal(rc[1], ENOSPC);
	assert_int_equal(rc[2], ENOSPC);
	assert_int_equal(rc[3], 0);
	assert_int_equal(rc[4], EDQUOT);
	assert_int_equal(rc[5], 0);
}

static void
test_eintr_and_estale_are_retried(void **state)
{
	struct unit_dir *f = *state;

	/* within the bounds: the caller never sees them */
	arm("fail-at=1:EINTR*3");
	assert_int_equal(fsop_mkdir(f->dfd, "a", 0700), 0);
	assert_int_equal(fault_count(), 4);
	arm("fail-at=1:ESTALE*3");
	assert_int_equal(fsop_rename(f->dfd, "a", f->dfd, "b"), 0);
	assert_true(exists(f->dfd, "b"));
	/* beyond them: the error reaches the caller, nothing was done */
	arm("fail-at=1:ESTALE*" "9");
	errno = 0;
	assert_int_equal(fsop_rename(f->dfd, "b", f->dfd, "c"), -1);
	assert_int_equal(errno, ESTALE);
	assert_int_equal(fault_count(), FSOP_ESTALE_TRIES);
	assert_true(exists(f->dfd, "b"));
	/* other errors are not retried */
	arm("fail-at=1:EIO*2");
	errno = 0;
	assert_int_equal(fsop_rmdir(f->dfd, "b"), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fault_count(), 1);
}

/*
 * A write is not retried (part of it may have landed), but a publish
 * whose write meets a stale handle starts again with a new temporary
 * file: the record arrives whole and no temporary file is left (the
 * failed try's is removed, its unlink retried past the stale handles).
 */
static void
test_publish_starts_again_after_a_stale_write(void **state)
{
	struct unit_dir *f = *state;
	struct buf b = BUF_INIT;
	int tmpfd;

	assert_int_equal(mkdirat(f->dfd, "tmp", 0700), 0);
	assert_true((tmpfd = openat(f->dfd, "tmp", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) >= 0);
	/* operation 1 is the temporary file's create, 2 its write */
	arm("fail-at=2:ESTALE*3");
	assert_int_equal(fsop_publish(tmpfd, f->dfd, "rec", "key: value\n",
	    11, 0600, FSOP_DURABLE), 0);
	assert_int_equal(fsop_read_file(f->dfd, "rec", 1024, &b, NULL), 0);
	assert_int_equal(b.len, 11);
	assert_memory_equal(b.p, "key: value\n", 11);
	assert_int_equal(unit_count_entries(tmpfd), 0);
	/* for good: it fails; the removal of its first temporary file,
	 * stale too, fails (said, the file left to spoold's sweep of
	 * tmp/), and the creates of the later tries fail */
	arm("fail-at=2:ESTALE*100");
	errno = 0;
	assert_int_equal(fsop_publish(tmpfd, f->dfd, "rec2", "x\n", 2, 0600,
	    0), -1);
	assert_int_equal(errno, ESTALE);
	assert_int_equal(unit_count_entries(tmpfd), 1);
	assert_false(exists(f->dfd, "rec2"));
	buf_free(&b);
	close(tmpfd);
}

/*
 * A directory's fsync that meets a stale handle opens the directory
 * again by name and flushes that (a submission's incoming/); without a
 * name to open, or stale for good, the error reaches the caller.
 */
static void
test_fsync_dir_opens_again_after_a_stale_handle(void **state)
{
	struct unit_dir *f = *state;
	int dfd;

	fsop_set_sync(1);
	assert_int_equal(mkdirat(f->dfd, "d", 0700), 0);
	assert_true((dfd = openat(f->dfd, "d", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) >= 0);
	/* its fsync (1), then through the directory opened again by
	 * name each time (2, 3: stale again; 4) */
	arm("fail-at=1:ESTALE*3");
	assert_int_equal(fsop_fsync_dir(dfd, f->dfd, "d"), 0);
	assert_int_equal(fault_count(), 4);
	arm("fail-at=1:ESTALE");
	errno = 0;
	assert_int_equal(fsop_fsync_dir(dfd, -1, NULL), -1);
	assert_int_equal(errno, ESTALE);
	arm("fail-at=1:ESTALE*100");
	errno = 0;
	assert_int_equal(fsop_fsync_dir(dfd, f->dfd, "d"), -1);
	assert_int_equal(errno, ESTALE);
	close(dfd);
}

static void
test_phantoms(void **state)
{
	struct unit_dir *f = *state;

	/* a rename that happened but answers ENOENT: fsop_rename sees
	 * the old name gone and the new one there, and says success */
	arm("phantom-at=1");
	make_file(f->dfd, "x");	/* 1 */
	assert_int_equal(fsop_rename(f->dfd, "x", f->dfd, "y"), 0);	/* 2 */
	assert_false(exists(f->dfd, "x"));
	assert_true(exists(f->dfd, "y"));
	/* only once */
	assert_int_equal(fsop_rename(f->dfd, "y", f->dfd, "z"), 0);

	/* a mkdir that happened but answers EEXIST */
	arm("phantom-at=1");
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "d", 0700), -1);
	assert_int_equal(errno, EEXIST);
	assert_true(exists(f->dfd, "d"));

	/* an unlink that happened but answers ENOENT */
	arm("phantom-at=1");
	errno = 0;
	assert_int_equal(fsop_unlink(f->dfd, "z"), -1);
	assert_int_equal(errno, ENOENT);
	assert_false(exists(f->dfd, "z"));

	/* one that fails for real keeps its own error and leaves the
	 * phantom to the next (design.md section 12, item 10) */
	arm("phantom-at=1");
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "d", 0700), -1);	/* exists */
	assert_int_equal(errno, EEXIST);
	errno = 0;
	assert_int_equal(fsop_unlink(f->dfd, "nothing"), -1);	/* absent */
	assert_int_equal(errno, ENOENT);
	make_file(f->dfd, "w");
	errno = 0;
	assert_int_equal(fsop_unlink(f->dfd, "w"), -1);		/* phantom */
	assert_int_equal(errno, ENOENT);
	assert_false(exists(f->dfd, "w"));
	make_file(f->dfd, "w");
	assert_int_equal(fsop_unlink(f->dfd, "w"), 0);		/* spent */
}

static void
test_busy_nfs_and_count_all(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;

	arm("busy-nfs,count=all");
	make_file(f->dfd, ".nfs000000001234");
	make_file(f->dfd, "plain");
	errno = 0;
	assert_int_equal(fsop_unlink(f->dfd, ".nfs000000001234"), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(fsop_unlink(f->dfd, "plain"), 0);
	assert_int_equal(fsop_stat(f->dfd, ".nfs000000001234", &st), 0);
	/* 2 creates, 1 refused unlink (not retried), 1 unlink, 1 stat */
	assert_int_equal(fault_count(), 5);
}

/*
 * slow-sync: its delay, read once; and the barrier's two halves (the
 * worker's flush in a thread of its own): begin says whether a flush
 * is due and counts it, a failed flush leaves it due, a done one not.
 */
static void
test_slow_sync_and_the_barrier_in_halves(void **state)
{
	struct unit_dir *f = *state;

	unsetenv(FAULT_ENV);
	fault_reload();
	assert_int_equal(fault_sync_delay_ms(), 0);
	arm("slow-sync=25");
	assert_int_equal(fault_sync_delay_ms(), 25);
	assert_null(getenv(FAULT_ENV));		/* read once, then gone */
	assert_int_equal(fault_sync_delay_ms(), 25);

	make_file(f->dfd, "x");			/* something to flush */
	assert_int_equal(fsop_barrier_begin(), 1);
	assert_int_equal(fsop_barrier_begin(), 0);	/* nothing since */
	errno = 0;
	assert_int_equal(fsop_barrier_end(EIO), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_barrier_begin(), 1);	/* still due */
	assert_int_equal(fsop_barrier_end(0), 0);
	assert_int_equal(fsop_barrier_begin(), 0);

	/* an injected failure of the flush: -1 at begin, still due */
	make_file(f->dfd, "y");
	arm("fail-at=1:EIO");
	errno = 0;
	assert_int_equal(fsop_barrier_begin(), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_barrier_begin(), 1);
	assert_int_equal(fsop_barrier_end(0), 0);
}

/*
 * sync-holds: its file, read once; a syncfs's wait does not wait for a
 * file that is not there, and waits while one is (a child removes it a
 * moment later: the wait ends after the removal, whenever it comes).
 */
static void
test_sync_holds_waits_while_its_file_exists(void **state)
{
	struct unit_dir *f = *state;
	const struct timespec moment = { 0, 50 * 1000000L };
	char path[4200], spec[4300];
	pid_t pid;
	int status;

	unsetenv(FAULT_ENV);
	fault_reload();
	assert_null(fault_sync_hold());
	snprintf(path, sizeof path, "%s/hold", f->dir);
	snprintf(spec, sizeof spec, "sync-holds=%s", path);
	arm(spec);
	assert_string_equal(fault_sync_hold(), path);
	fault_sync_delay(0, path);
	make_file(f->dfd, "hold");
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		(void)nanosleep(&moment, NULL);
		_exit(unlinkat(f->dfd, "hold", 0) < 0);
	}
	fault_sync_delay(0, path);
	assert_false(exists(f->dfd, "hold"));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
}

/*
 * The barrier in one call (spoold's): a flush when something changed,
 * none when nothing did; a failed one (injected) returns -1 with its
 * errno and leaves the flush due.
 */
static void
test_barrier_flushes_what_changed_and_keeps_a_failed_one_due(void **state)
{
	struct unit_dir *f = *state;
	unsigned long before;

	unsetenv(FAULT_ENV);
	fault_reload();
	make_file(f->dfd, "x");
	before = fsop_count[FSOP_SYNCFS];
	assert_int_equal(fsop_barrier(f->dfd), 0);
	assert_int_equal(fsop_count[FSOP_SYNCFS], before + 1);
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* nothing since */
	assert_int_equal(fsop_count[FSOP_SYNCFS], before + 1);

	make_file(f->dfd, "y");
	arm("fail-at=1:EIO");
	errno = 0;
	assert_int_equal(fsop_barrier(f->dfd), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_count[FSOP_SYNCFS], before + 2);
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* still due: flushed */
	assert_int_equal(fsop_count[FSOP_SYNCFS], before + 3);
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* nothing since */
	assert_int_equal(fsop_count[FSOP_SYNCFS], before + 3);
}

/*
 * sync-fails: the syncfs N to N+K-1 that ran report ERR when their
 * outcome is taken (fsop_barrier_end, both barriers): the flush stays
 * due.  Only the syncfs are counted.
 */
static void
test_sync_fails_by_count(void **state)
{
	struct unit_dir *f = *state;

	arm("sync-fails=2:EIO*2");
	make_file(f->dfd, "x");
	assert_int_equal(fsop_barrier(f->dfd), 0);		/* 1 */
	make_file(f->dfd, "y");
	errno = 0;
	assert_int_equal(fsop_barrier(f->dfd), -1);		/* 2 */
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_barrier_begin(), 1);		/* still due */
	errno = 0;
	assert_int_equal(fsop_barrier_end(0), -1);		/* 3 */
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_barrier_begin(), 1);
	assert_int_equal(fsop_barrier_end(0), 0);		/* 4 */
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* nothing since */
	make_file(f->dfd, "z");
	assert_int_equal(fsop_barrier(f->dfd), 0);		/* 5 */
}

/*
 * sync-loses: the first K flushes of fsop_barrier that run while the
 * directory holds files remove them and report EIO; the flush stays
 * due, and one with the directory empty is not counted.
 */
static void
test_sync_loses_a_directory(void **state)
{
	struct unit_dir *f = *state;
	int dfd;

	assert_int_equal(mkdirat(f->dfd, "d", 0700), 0);
	assert_true((dfd = openat(f->dfd, "d", O_RDONLY | O_DIRECTORY)) >= 0);
	arm("sync-loses=d");
	make_file(f->dfd, "x");
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* d empty */
	make_file(dfd, "a");
	make_file(dfd, ".hidden");
	errno = 0;
	assert_int_equal(fsop_barrier(f->dfd), -1);
	assert_int_equal(errno, EIO);
	assert_false(exists(dfd, "a"));
	assert_true(exists(dfd, ".hidden"));
	make_file(dfd, "b");
	assert_int_equal(fsop_barrier(f->dfd), 0);	/* K was 1 */
	assert_true(exists(dfd, "b"));
	close(dfd);
}

/* stat-fails: only stats, only of names with the prefix, K of them. */
static void
test_stat_fails_by_name(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;

	arm("count=all,stat-fails=w2-:EIO*2");
	make_file(f->dfd, "w2-abc");
	make_file(f->dfd, "w1-abc");
	assert_int_equal(fsop_stat(f->dfd, "w1-abc", &st), 0);
	errno = 0;
	assert_int_equal(fsop_stat(f->dfd, "w2-abc", &st), -1);
	assert_int_equal(errno, EIO);
	assert_true(exists(f->dfd, "w1-abc"));
	errno = 0;
	assert_int_equal(fsop_stat(f->dfd, "w2-abc", &st), -1);
	assert_int_equal(errno, EIO);
	/* spent */
	assert_int_equal(fsop_stat(f->dfd, "w2-abc", &st), 0);
	assert_int_equal(fsop_rename(f->dfd, "w2-abc", f->dfd, "w2-def"), 0);
}

/* open-fails: only opens that create nothing (a read), of names with
 * the prefix, K of them. */
static void
test_open_fails_by_name(void **state)
{
	struct unit_dir *f = *state;
	struct buf b = BUF_INIT;
	struct stat st;

	arm("count=all,open-fails=c-:EIO");
	make_file(f->dfd, "c-1");		/* a create: not failed */
	make_file(f->dfd, "d-1");
	assert_int_equal(fsop_read_file(f->dfd, "d-1", 16, &b, NULL), 0);
	assert_int_equal(fsop_stat(f->dfd, "c-1", &st), 0);	/* a stat */
	errno = 0;
	assert_int_equal(fsop_read_file(f->dfd, "c-1", 16, &b, NULL), -1);
	assert_int_equal(errno, EIO);
	/* spent */
	assert_int_equal(fsop_read_file(f->dfd, "c-1", 16, &b, NULL), 0);
	buf_free(&b);
}

static int
list_none(void *arg, const char *name, unsigned char type)
{
	(void)arg;
	(void)name;
	(void)type;
	return 0;
}

/* list-fails: listings of a directory by its name, also of "." through
 * its descriptor, K of them; others are left. */
static void
test_list_fails_by_name(void **state)
{
	struct unit_dir *f = *state;
	int fd;

	arm("count=all,list-fails=inc:EIO*2");
	assert_int_equal(mkdirat(f->dfd, "incoming", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "control", 0700), 0);
	assert_true((fd = openat(f->dfd, "incoming", O_RDONLY |
	    O_DIRECTORY)) >= 0);
	assert_int_equal(fsop_list(f->dfd, "control", list_none, NULL), 0);
	errno = 0;
	assert_int_equal(fsop_list(fd, ".", list_none, NULL), -1);
	assert_int_equal(errno, EIO);
	errno = 0;
	assert_int_equal(fsop_list(f->dfd, "incoming", list_none, NULL), -1);
	assert_int_equal(errno, EIO);
	/* spent */
	assert_int_equal(fsop_list(fd, ".", list_none, NULL), 0);
	close(fd);
}

/* @S: the first S listings of such a name are let by, the K after them
 * fail (a recovery's listings by, the main loop's failing) */
static void
test_list_fails_after_letting_some_by(void **state)
{
	struct unit_dir *f = *state;
	int i;

	arm("count=all,list-fails=done:EIO*2@3");
	assert_int_equal(mkdirat(f->dfd, "done", 0700), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(fsop_list(f->dfd, "done", list_none, NULL), 0);
	for (i = 0; i < 2; i++) {
		errno = 0;
		assert_int_equal(fsop_list(f->dfd, "done", list_none, NULL),
		    -1);
		assert_int_equal(errno, EIO);
	}
	assert_int_equal(fsop_list(f->dfd, "done", list_none, NULL), 0);
}

/* The fault layer's messages show a name that is not a plain word
 * quoted and escaped, as every message does (it was printed raw). */
static void
test_messages_quote_names(void **state)
{
	struct unit_dir *f = *state;
	char said[512];
	ssize_t n;
	int saved, log;

	arm("fail-on=odd:EIO");
	assert_true((log = openat(f->dfd, "log", O_RDWR | O_CREAT, 0600)) >=
	    0);
	assert_true((saved = dup(STDERR_FILENO)) >= 0);
	assert_int_equal(dup2(log, STDERR_FILENO), STDERR_FILENO);
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "odd\033[2Jx", 0700), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	assert_true((n = pread(log, said, sizeof said - 1, 0)) > 0);
	said[n] = 0;
	close(log);
	assert_non_null(strstr(said, "(mkdir \"odd\\x1b[2Jx\") fails: "));
	assert_null(strchr(said, '\033'));
}

/* list-breaks: a listing by name (of "." through its descriptor too)
 * hands out every entry, then fails; K of them after S let by, with or
 * without count=all and not counted; others are left */
static void
test_list_breaks_after_every_entry(void **state)
{
	struct unit_dir *f = *state;
	int fd, n;

	arm("list-breaks=specs:EIO*1@1");
	assert_int_equal(mkdirat(f->dfd, "specs", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "specs/a", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "specs/b", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "other", 0700), 0);
	assert_true((fd = openat(f->dfd, "specs", O_RDONLY |
	    O_DIRECTORY)) >= 0);
	n = 0;
	assert_int_equal(fsop_list(f->dfd, "other", unit_count_listed, &n), 0);
	assert_int_equal(fsop_list(fd, ".", unit_count_listed, &n), 0);
	assert_int_equal(n, 2);		/* "other" is empty; this one let by */
	n = 0;
	errno = 0;
	assert_int_equal(fsop_list(fd, ".", unit_count_listed, &n), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(n, 2);		/* every entry, then the failure */
	assert_int_equal(fsop_list(f->dfd, "specs", unit_count_listed, &n), 0);
	assert_int_equal(n, 4);		/* spent */
	assert_int_equal(fault_count(), 0);
	close(fd);
}

/* read-fails: reads of an open file by its name (the last component of
 * its path), K of them after S let by, with or without count=all and
 * not counted; other files are left */
static void
test_read_fails_by_name(void **state)
{
	struct unit_dir *f = *state;
	char c;
	int fd, other;

	arm("read-fails=12:EIO*2@1");
	assert_int_equal(mkdirat(f->dfd, "specs", 0700), 0);
	assert_true((fd = openat(f->dfd, "specs/12", O_RDWR | O_CREAT,
	    0600)) >= 0);
	assert_true((other = openat(f->dfd, "specs/3", O_RDWR | O_CREAT,
	    0600)) >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(fsop_pread(fd, &c, 1, 0), 1);		/* let by */
	assert_int_equal(fsop_pread(other, &c, 1, 0), 0);
	errno = 0;
	assert_int_equal(fsop_pread(fd, &c, 1, 0), -1);
	assert_int_equal(errno, EIO);
	errno = 0;
	assert_int_equal(fsop_pread(fd, &c, 1, 0), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(fsop_pread(fd, &c, 1, 0), 1);		/* spent */
	assert_int_equal(c, 'x');
	assert_int_equal(fault_count(), 0);
	close(fd);
	close(other);
}

/* fifo-on-open: a file of a name with the prefix is a FIFO by the time
 * an open that creates nothing opens it, K times; creates are left. */
static void
test_fifo_on_open(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;
	off_t size;
	int fd;

	arm("fifo-on-open=c-");
	make_file(f->dfd, "c-1");		/* a create: not swapped */
	assert_int_equal(fstatat(f->dfd, "c-1", &st, 0), 0);
	assert_true(S_ISREG(st.st_mode));
	errno = 0;
	assert_int_equal(fsop_open_overwrite(f->dfd, "c-1", &size), -1);
	assert_int_equal(errno, ENXIO);		/* no reader, not waited for */
	assert_int_equal(fstatat(f->dfd, "c-1", &st, 0), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* spent */
	make_file(f->dfd, "c-2");
	assert_true((fd = fsop_open_overwrite(f->dfd, "c-2", &size)) >= 0);
	close(fd);
}

/* fail-on: only mutations (not stats), of names with the prefix, K. */
static void
test_fail_on_a_name(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;

	arm("count=all,fail-on=a/:ENOSPC*2");
	assert_int_equal(fsop_mkdir(f->dfd, "a", 0700), 0);	/* not a/ */
	make_file(f->dfd, "b");
	assert_int_equal(fsop_stat(f->dfd, "a/x", &st), -1);	/* a stat */
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(fsop_write_whole(f->dfd, "dir", "a/x", "1", 1, 0600,
	    0), -1);
	assert_int_equal(errno, ENOSPC);
	errno = 0;
	assert_int_equal(fsop_mkdir(f->dfd, "a/y", 0700), -1);
	assert_int_equal(errno, ENOSPC);
	assert_false(exists(f->dfd, "a/y"));
	/* spent */
	assert_int_equal(fsop_write_whole(f->dfd, "dir", "a/x", "1", 1, 0600,
	    0), 0);
	assert_true(exists(f->dfd, "a/x"));
}

/* Run fn in a child with spec armed; its exit status. */
static int
child_status(const char *spec, int dfd)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		arm(spec);
		(void)fsop_mkdir(dfd, "one", 0700);
		(void)fsop_mkdir(dfd, "two", 0700);
		(void)fsop_mkdir(dfd, "three", 0700);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void
test_crash_and_usage(void **state)
{
	struct unit_dir *f = *state;

	assert_int_equal(child_status("crash-at=2", f->dfd), FAULT_CRASH_STATUS);
	assert_true(exists(f->dfd, "one"));
	assert_false(exists(f->dfd, "two"));	/* crashed before it */
	assert_int_equal(child_status("crash-at=9", f->dfd), 0);
	assert_true(exists(f->dfd, "three"));

	static const char *const bad[] = {
		"crash-at=0", "crash-at=x", "fail-at=3", "fail-at=3:EWHAT",
		"fail-at=3:EIO*0", "phantom-at=", "explode", "crash-at=1x",
		"stat-fails=:EIO", "stat-fails=w2", "stat-fails=w2:EWHAT",
		"stat-fails=w2:EIO*0", "slow-sync=", "slow-sync=0",
		"slow-sync=5ms", "crash-on=", "crash-on=t*0", "crash-on=t*x",
		"crash-on=*2", "sync-fails=0:EIO", "sync-fails=1",
		"sync-fails=1:EWHAT", "fail-on=:EIO", "fail-on=a/",
		"fail-on=a/:EWHAT", "fail-on=a/:EIO*0", "open-fails=c-",
		"open-fails=:EIO", "open-fails=c-:EIO*0", "sync-fails=1:EIO*0", "sync-fails=x:EIO",
		"sync-loses=", "sync-loses=d*0", "list-fails=d:EIO@0",
		"list-fails=d:EIO*2@x", "list-fails=d:EIO@", "fail-at=3:EIO@2",
		"read-fails=12", "read-fails=:EIO", "read-fails=12:EIO*0",
		"sync-holds=", "sync-holds=a,sync-holds=b",
	};
	size_t i;

	for (i = 0; i < NELEM(bad); i++)
		TCHECK(child_status(bad[i], f->dfd) == EXIT_USAGE,
		    "\"%s\" accepted", bad[i]);
}

/* crash-on: before the Kth mutation of a name with the prefix */
static void
test_crash_on_a_name(void **state)
{
	struct unit_dir *f = *state;

	assert_int_equal(child_status("crash-on=t*2", f->dfd),
	    FAULT_CRASH_STATUS);
	assert_true(exists(f->dfd, "one"));
	assert_true(exists(f->dfd, "two"));	/* the first "t" */
	assert_false(exists(f->dfd, "three"));	/* crashed before it */
	assert_int_equal(child_status("crash-on=one", f->dfd),
	    FAULT_CRASH_STATUS);	/* the mkdir of "one" is tried again */
	assert_false(exists(f->dfd, "three"));
	assert_int_equal(child_status("crash-on=t*3", f->dfd), 0);
	assert_true(exists(f->dfd, "three"));
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_unset_is_inert),
		T(test_fail_at_counts_mutations),
		T(test_fail_range_and_several_rules),
		T(test_eintr_and_estale_are_retried),
		T(test_publish_starts_again_after_a_stale_write),
		T(test_fsync_dir_opens_again_after_a_stale_handle),
		T(test_phantoms),
		T(test_busy_nfs_and_count_all),
		T(test_stat_fails_by_name),
		T(test_sync_fails_by_count),
		T(test_sync_loses_a_directory),
		T(test_open_fails_by_name),
		T(test_fifo_on_open),
		T(test_list_fails_by_name),
		T(test_list_fails_after_letting_some_by),
		T(test_list_breaks_after_every_entry),
		T(test_read_fails_by_name),
		T(test_messages_quote_names),
		T(test_fail_on_a_name),
		T(test_crash_on_a_name),
		T(test_slow_sync_and_the_barrier_in_halves),
		T(test_sync_holds_waits_while_its_file_exists),
		T(test_barrier_flushes_what_changed_and_keeps_a_failed_one_due),
		T(test_crash_and_usage),
	};

	msg_init("test_fault");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

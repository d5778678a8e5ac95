/*
 * test_beatfile.c - the heartbeat records (beatfile.c,
 * fsop_open_overwrite):
 *   - the first write creates the file, later ones overwrite it in place
 *     (same inode, no temporary file) and never cut it: a shorter record
 *     is padded to the file's length, a longer one makes it longer;
 *   - a record reads back without its check line;
 *   - a record half overwritten (the new one's start over the old one's
 *     end, or cut short), any byte changed, or no check line is refused
 *     with EAGAIN;
 *   - a reader racing a writer that overwrites two records of different
 *     lengths gets one of the two whole, never a mix;
 *   - only a regular file is overwritten: no symlink is followed, no
 *     FIFO opened for writing.
 */
#include <signal.h>
#include <sys/wait.h>

#include "unit.h"
#include "beatfile.h"
#include "fsop.h"

static int
write_text(struct unit_dir *f, const char *name, const char *text)
{
	struct buf b = BUF_INIT;
	int rc;

	buf_puts(&b, text);
	rc = beatfile_write(f->dfd, f->dfd, name, &b);
	buf_free(&b);
	return rc;
}

/* the file as it is on disk, check line and all */
static char *
raw(struct unit_dir *f, const char *name)
{
	struct buf b = BUF_INIT;

	assert_int_equal(fsop_read_file(f->dfd, name, 65536, &b, NULL), 0);
	return buf_steal(&b);
}

static void
test_created_then_overwritten_in_place(void **state)
{
	struct unit_dir *f = *state;
	struct buf r = BUF_INIT;
	struct stat st1, st2;

	assert_int_equal(write_text(f, "beat", "beat: 1\ntime: 1700000000.500\n"),
	    0);
	assert_int_equal(fstatat(f->dfd, "beat", &st1, 0), 0);
	assert_int_equal(beatfile_read(f->dfd, "beat", 65536, &r), 0);
	assert_string_equal(r.p, "beat: 1\ntime: 1700000000.500\n");
	assert_int_equal(write_text(f, "beat", "beat: 2\n"), 0);
	assert_int_equal(fstatat(f->dfd, "beat", &st2, 0), 0);
	/* no rename, no temporary file, no cut */
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_int_equal(unit_count_entries(f->dfd), 1);
	assert_int_equal(st2.st_size, st1.st_size);
	assert_int_equal(beatfile_read(f->dfd, "beat", 65536, &r), 0);
	/* the rest of the old record's length is a pad line, not its tail */
	assert_string_equal(r.p, "beat: 2\npad: ...............\n");
	/* a record just shorter than the file: the pad line's least */
	assert_int_equal(write_text(f, "beat", "beat: 3\ntime: 1700000000.5\n"),
	    0);
	assert_int_equal(beatfile_read(f->dfd, "beat", 65536, &r), 0);
	assert_string_equal(r.p, "beat: 3\ntime: 1700000000.5\npad: .\n");
	assert_int_equal(fstatat(f->dfd, "beat", &st2, 0), 0);
	assert_int_equal(st2.st_size, st1.st_size + 5);
	/* a longer one: the file grows */
	assert_int_equal(write_text(f, "beat", "beat: 4\ntime: 1700000000.500\n"
	    "running: 1\n"), 0);
	assert_int_equal(beatfile_read(f->dfd, "beat", 65536, &r), 0);
	assert_string_equal(r.p, "beat: 4\ntime: 1700000000.500\nrunning: 1\n");
	assert_int_equal(fstatat(f->dfd, "beat", &st2, 0), 0);
	assert_int_equal(st2.st_ino, st1.st_ino);
	buf_free(&r);
}

static void
test_torn_and_changed_records_refused(void **state)
{
	struct unit_dir *f = *state;
	struct buf r = BUF_INIT;
	char *old, *new, *mix, *path;
	size_t i, n, k;

	assert_int_equal(write_text(f, "a", "beat: 41\nrunning: 12\n"
	    "memory_in_use: [1, 2, 3]\n"), 0);
	assert_int_equal(write_text(f, "b", "beat: 42\nrunning: 3\n"), 0);
	old = raw(f, "a");
	new = raw(f, "b");
	assert_int_equal(beatfile_check(old, strlen(old)), 0);
	assert_int_equal(beatfile_check(new, strlen(new)), 0);
	/* the new record's first k bytes over the old one, at every k */
	n = strlen(old);
	mix = xmalloc(n + 1);
	for (k = 1; k < strlen(new); k++) {
		memcpy(mix, old, n + 1);
		memcpy(mix, new, k);
		if (memcmp(mix, old, n) == 0)
			continue;	/* both begin so: nothing torn yet */
		TCHECK(beatfile_check(mix, n) < 0, "a record torn after %zu "
		    "bytes was taken: %s", k, mix);
	}
	/* the whole new record before the old one's tail: not yet cut */
	memcpy(mix, old, n + 1);
	memcpy(mix, new, strlen(new));
	assert_true(beatfile_check(mix, n) < 0);
	/* any byte changed, or the record cut short */
	for (i = 0; i < n; i++) {
		memcpy(mix, old, n + 1);
		mix[i] ^= 0x01;
		TCHECK(beatfile_check(mix, n) < 0, "byte %zu changed, taken", i);
	}
	for (i = 0; i < n; i++)
		TCHECK(beatfile_check(old, i) < 0, "cut to %zu bytes, taken", i);
	/* and on disk: refused after the reads it tries */
	memcpy(mix, old, n + 1);
	memcpy(mix, new, 8);	/* "beat: 42" over "beat: 41" */
	path = xasprintf("%s/torn", f->dir);
	assert_int_equal(unit_write_file(path, mix, n), 0);
	free(path);
	errno = 0;
	assert_int_equal(beatfile_read(f->dfd, "torn", 65536, &r), -1);
	assert_int_equal(errno, EAGAIN);
	path = xasprintf("%s/plain", f->dir);
	assert_int_equal(unit_write_file(path, "beat: 7\n", 8), 0);
	free(path);
	errno = 0;
	assert_int_equal(beatfile_read(f->dfd, "plain", 65536, &r), -1);
	assert_int_equal(errno, EAGAIN);
	free(mix);
	free(old);
	free(new);
	buf_free(&r);
}

/*
 * A child overwrites the record again and again, a long one and a short
 * one in turn; every read that succeeds gives one of them whole.  A
 * read may fail (EAGAIN) if it met a write in each of its tries; it may
 * never return a mix.
 */
static void
test_reader_racing_writer_gets_whole_records(void **state)
{
	struct unit_dir *f = *state;
	struct buf r = BUF_INIT, big = BUF_INIT;
	const char *rec[2];
	int i, whole = 0, again = 0, status;
	char *pad;
	pid_t pid;

	/* a long record (most of a page: a long copy to tear) and a short
	 * one */
	buf_puts(&big, "beat: 1\nrunning: 100\nmemory_in_use: [");
	for (i = 0; i < 200; i++)
		buf_printf(&big, "%s%d, 1, %d", i ? ", " : "", i, 1048576 + i);
	buf_puts(&big, "]\n");
	assert_true(big.len > 3000 && big.len < 4000);
	rec[0] = big.p;
	rec[1] = "beat: 2\nrunning: 0\n";
	assert_int_equal(write_text(f, "status", rec[0]), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (i = 0;; i++)
			if (write_text(f, "status", rec[i & 1]) < 0)
				_exit(1);
	}
	for (i = 0; i < 20000; i++) {
		if (beatfile_read(f->dfd, "status", 65536, &r) < 0) {
			TCHECK(errno == EAGAIN, "read %d: %s", i, strerror(errno));
			again++;
			continue;
		}
		/* the short one is padded to the long one's length */
		if ((pad = strstr(r.p, "pad: ")) != NULL &&
		    strspn(pad + 5, ".") + 6 == strlen(pad))
			*pad = 0;
		TCHECK(strcmp(r.p, rec[0]) == 0 || strcmp(r.p, rec[1]) == 0,
		    "read %d gave a record that was never written: %s", i, r.p);
		whole++;
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));	/* it wrote until killed */
	print_message("    %d reads whole, %d gave up (EAGAIN)\n", whole, again);
	assert_true(whole > 0);
	buf_free(&r);
	buf_free(&big);
}

static void
test_only_regular_files_overwritten(void **state)
{
	struct unit_dir *f = *state;
	char *target = xasprintf("%s/target", f->dir);
	char *link = xasprintf("%s/link", f->dir);
	char *fifo = xasprintf("%s/fifo", f->dir);
	char *text;
	off_t size;
	int rfd;

	assert_int_equal(unit_write_file(target, "kept\n", 5), 0);
	assert_int_equal(symlink(target, link), 0);
	errno = 0;
	assert_int_equal(fsop_open_overwrite(f->dfd, "link", &size), -1);
	assert_int_equal(errno, ELOOP);
	text = raw(f, "target");
	assert_string_equal(text, "kept\n");
	free(text);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	errno = 0;
	/* O_NONBLOCK: with no reader the open itself fails (ENXIO) */
	assert_int_equal(fsop_open_overwrite(f->dfd, "fifo", &size), -1);
	assert_int_equal(errno, ENXIO);
	/* with one, it opens, and is refused as no regular file */
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	errno = 0;
	assert_int_equal(fsop_open_overwrite(f->dfd, "fifo", &size), -1);
	assert_int_equal(errno, EINVAL);
	close(rfd);
	errno = 0;
	assert_int_equal(fsop_open_overwrite(f->dfd, "missing", &size), -1);
	assert_int_equal(errno, ENOENT);
	free(target);
	free(link);
	free(fifo);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, unit_dir_setup, \
    unit_dir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_created_then_overwritten_in_place),
		T(test_torn_and_changed_records_refused),
		T(test_reader_racing_writer_gets_whole_records),
		T(test_only_regular_files_overwritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

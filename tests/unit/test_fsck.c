/*
 * test_fsck.c - "spool fsck" (cli/fsck.c) run while spoold collects a
 * worker directory: spoold moves an exited or lost worker's directory
 * to gc/ and removes it whenever it likes, also in the middle of an
 * fsck that runs beside it.  What fsck opens is intercepted
 * (-Wl,--wrap=fsop_opendir) to do that removal at a chosen point:
 *
 *   - the directory is collected after fsck opened it and before it
 *     opens its cancel/ (the race a CI run hit): no problem, a note,
 *     the worker not counted;
 *   - it is collected between the listing of workers/ and its open:
 *     the same;
 *   - only its cancel/ is removed, the directory stays: a real problem
 *     (exit 1, "cannot open", the worker counted), so holding problems
 *     back does not hide them;
 *   - a status without its check line is a problem that says why;
 *   - a bundle or an assignment gone between the listing and its read
 *     (fsop_read_file and fsop_open_regular, which opens a bundle,
 *     wrapped too): a note, no problem;
 *   - a problem that one read of the spool sees and the next does not
 *     (fsop_stat wrapped too: a committed attempt's work/ID.ATT looks
 *     gone once, as when spoold accepts it between fsck's read of
 *     tasks/ and of the worker's done/): not counted, a note says so;
 *     seen by both reads: counted, with the problems that stay.
 *
 * Each fsck runs in a child whose stdout goes to a file (fsck keeps
 * its state in statics and prints to stdout).
 */
#include <getopt.h>
#include <sys/wait.h>

#include "unit.h"
#include "../../cli/cli.h"
#include "fsop.h"
#include "wdir.h"

int	__real_fsop_opendir(int dfd, const char *name);
int	__wrap_fsop_opendir(int dfd, const char *name);
int	__real_fsop_stat(int dfd, const char *name, struct stat *st);
int	__wrap_fsop_stat(int dfd, const char *name, struct stat *st);
int	__real_fsop_read_file(int dfd, const char *name, size_t max,
	    struct buf *out, struct stat *stp);
int	__wrap_fsop_read_file(int dfd, const char *name, size_t max,
	    struct buf *out, struct stat *stp);
int	__real_fsop_open_regular(int dfd, const char *name, struct stat *st);
int	__wrap_fsop_open_regular(int dfd, const char *name, struct stat *st);

struct spool cli_sp;
const char *cli_spool_path;

static const char *spool_path;	/* what cli_open opens */

void
cli_open(void)
{
	char why[512];

	if (spool_open(&cli_sp, spool_path, why, sizeof why) < 0) {
		fprintf(stderr, "test_fsck: open: %s: %s\n", spool_path, why);
		_exit(111);
	}
}

/* What the wrappers do, and when. */
static enum { RM_NONE, RM_WORKER, RM_CANCEL, RM_FILE } rm_what;
static const char *rm_at;	/* the name whose open triggers it */
static struct spool *rm_sp;
static char rm_wid[WDIR_ID_MAX];

static void
remove_worker(void)
{
	char gcname[WDIR_ID_MAX + 8];

	snprintf(gcname, sizeof gcname, "%s.gc", rm_wid);
	if (fsop_rename(rm_sp->fd[SD_WORKERS], rm_wid, rm_sp->fd[SD_GC],
	    gcname) < 0 || fsop_rmtree(rm_sp->fd[SD_GC], gcname) < 0) {
		fprintf(stderr, "test_fsck: collect %s: %s\n", rm_wid,
		    strerror(errno));
		_exit(112);
	}
}

int
__wrap_fsop_opendir(int dfd, const char *name)
{
	char sub[WDIR_ID_MAX + 16];

	if (rm_what != RM_NONE && strcmp(name, rm_at) == 0) {
		if (rm_what == RM_WORKER)
			remove_worker();
		else {
			snprintf(sub, sizeof sub, "%s/cancel", rm_wid);
			if (unlinkat(rm_sp->fd[SD_WORKERS], sub,
			    AT_REMOVEDIR) < 0) {
				fprintf(stderr, "test_fsck: rmdir %s: %s\n",
				    sub, strerror(errno));
				_exit(112);
			}
		}
		rm_what = RM_NONE;
	}
	return __real_fsop_opendir(dfd, name);
}

/* RM_FILE: the file is removed just before fsck reads or opens it. */
static void
remove_file(int dfd, const char *name)
{
	if (rm_what == RM_FILE && strcmp(name, rm_at) == 0) {
		if (unlinkat(dfd, name, 0) < 0) {
			fprintf(stderr, "test_fsck: unlink %s: %s\n", name,
			    strerror(errno));
			_exit(112);
		}
		rm_what = RM_NONE;
	}
}

int
__wrap_fsop_read_file(int dfd, const char *name, size_t max,
    struct buf *out, struct stat *stp)
{
	remove_file(dfd, name);
	return __real_fsop_read_file(dfd, name, max, out, stp);
}

int
__wrap_fsop_open_regular(int dfd, const char *name, struct stat *st)
{
	remove_file(dfd, name);
	return __real_fsop_open_regular(dfd, name, st);
}

/* A stat of stat_gone fails with ENOENT stat_gone_times times (< 0:
 * always). */
static const char *stat_gone;
static int stat_gone_times;

int
__wrap_fsop_stat(int dfd, const char *name, struct stat *st)
{
	if (stat_gone && strcmp(name, stat_gone) == 0 && stat_gone_times != 0) {
		if (stat_gone_times > 0)
			stat_gone_times--;
		errno = ENOENT;
		return -1;
	}
	return __real_fsop_stat(dfd, name, st);
}

/* Run fsck in a child: its exit status, its stdout in out. */
static int
run_fsck(void **state, char *out, size_t size)
{
	struct unit_spool *u = *state;
	char *file = xasprintf("%s/fsck.out", u->dir);
	char *argv[] = { (char *)"fsck", NULL };
	int fd, st;
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(113);
		spool_path = u->path;
		rm_sp = &u->sp;
		optind = 0;
		st = cmd_fsck(1, argv);
		fflush(stdout);
		_exit(st);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	fd = open(file, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, out, size - 1);
	assert_true(n >= 0);
	out[n] = 0;
	close(fd);
	free(file);
	return WEXITSTATUS(st);
}

static void
add_worker(void **state)
{
	struct unit_spool *u = *state;
	struct worker_info wi = { .pid = 1, .cores = 1, .slots = 1,
	    .task_cores = 1 };
	int fd;

	snprintf(wi.name, sizeof wi.name, "w");
	snprintf(wi.host, sizeof wi.host, "h");
	fd = wdir_create(&u->sp, &wi, rm_wid, sizeof rm_wid);
	assert_true(fd >= 0);
	close(fd);
}

static void
test_nothing_removed_counts_the_worker(void **state)
{
	char out[4096];

	add_worker(state);
	rm_what = RM_NONE;
	assert_int_equal(run_fsck(state, out, sizeof out), 0);
	assert_contains(out, "1 workers");
	assert_contains(out, "; 0 problems");
}

/* The worker is collected when fsck opens the name at: not counted. */
static void
expect_collected(void **state, int at_cancel)
{
	char out[4096];

	add_worker(state);
	rm_what = RM_WORKER;
	rm_at = at_cancel ? "cancel" : rm_wid;
	assert_int_equal(run_fsck(state, out, sizeof out), 0);
	assert_contains(out, "collected by spoold as fsck read it");
	assert_contains(out, "0 workers");
	assert_contains(out, "; 0 problems");
	assert_true(strstr(out, "cannot open") == NULL);
}

static void
test_collected_while_read(void **state)
{
	expect_collected(state, 1);
}

static void
test_collected_before_its_open(void **state)
{
	expect_collected(state, 0);
}

static void
test_missing_subdirectory_is_a_problem(void **state)
{
	char out[4096];

	add_worker(state);
	rm_what = RM_CANCEL;
	rm_at = "cancel";
	assert_int_equal(run_fsck(state, out, sizeof out), 1);
	assert_contains(out, "/cancel: cannot open: No such file or directory");
	assert_contains(out, "1 workers");
	assert_contains(out, "; 1 problem\n");
}

/* A status without its check line (a ckworker of another version). */
static void
test_unchecked_status_is_a_problem_that_says_why(void **state)
{
	static const char old[] = "beat: 3\ntime: 1.000\nrunning: 0\n";
	struct unit_spool *u = *state;
	char out[4096], *path;

	add_worker(state);
	path = xasprintf("%s/workers/%s/status", u->path, rm_wid);
	assert_int_equal(unit_write_file(path, old, strlen(old)), 0);
	free(path);
	rm_what = RM_NONE;
	assert_int_equal(run_fsck(state, out, sizeof out), 1);
	assert_contains(out, "/status: never read whole with a check line "
	    "that matches (written by a ckspool of another version?)");
	assert_contains(out, "; 1 problem\n");
}

/*
 * A bundle spoold retires from specs/ (its tasks all final), and an
 * assignment a worker claims out of inbox/, between fsck's listing and
 * its read: a note each, no problem (a CI run's fsck right after a
 * "spool wait" met the first).
 */
static void
test_records_gone_as_read_are_notes(void **state)
{
	struct unit_spool *u = *state;
	char out[4096], *path;

	add_worker(state);
	path = xasprintf("%s/specs/7", u->path);
	assert_int_equal(unit_write_file(path, "bundle: 1\n", 10), 0);
	free(path);
	rm_what = RM_FILE;
	rm_at = "7";
	assert_int_equal(run_fsck(state, out, sizeof out), 0);
	assert_contains(out, "specs/7: gone as fsck read it (moved on by "
	    "spoold or a worker)");
	assert_contains(out, "; 0 problems");

	path = xasprintf("%s/workers/%s/inbox/9.1", u->path, rm_wid);
	assert_int_equal(unit_write_file(path, "id: 9\n", 6), 0);
	free(path);
	rm_what = RM_FILE;
	rm_at = "9.1";
	assert_int_equal(run_fsck(state, out, sizeof out), 0);
	assert_contains(out, "/inbox/9.1: gone as fsck read it");
	assert_contains(out, "1 workers");
	assert_contains(out, "; 0 problems");
}

/*
 * Worker w committed attempt 1 of task 9 (done/9.1, work/9.1/result);
 * task 9 was never claimed, a problem that stays.  A stat of "9.1"
 * fails `gone` times (< 0: always): once is the first read's stat of
 * work/9.1, the first fsck makes.
 */
static int
fsck_with_work_gone(void **state, int gone, char *out, size_t size)
{
	struct unit_spool *u = *state;
	struct task_spec t;
	struct result r;
	struct buf b = BUF_INIT;
	char *path;

	add_worker(state);
	task_init(&t);
	t.id = 9;
	t.argv = strv_push(NULL, "true");
	assign_encode(&b, &t, 1, rm_wid);
	task_free(&t);
	path = xasprintf("%s/workers/%s/done/9.1", u->path, rm_wid);
	assert_int_equal(unit_write_file(path, b.p, b.len), 0);
	free(path);
	path = xasprintf("%s/workers/%s/work/9.1", u->path, rm_wid);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
	buf_reset(&b);
	result_init(&r);
	r.id = 9;
	r.attempt = 1;
	r.state = RS_DONE;
	r.exit_code = 0;
	result_encode(&b, &r);
	result_free(&r);
	path = xasprintf("%s/workers/%s/work/9.1/result", u->path, rm_wid);
	assert_int_equal(unit_write_file(path, b.p, b.len), 0);
	free(path);
	buf_free(&b);
	rm_what = RM_NONE;
	stat_gone = "9.1";
	stat_gone_times = gone;
	return run_fsck(state, out, size);
}

static void
test_a_problem_one_read_saw_is_not_counted(void **state)
{
	char out[8192];

	assert_int_equal(fsck_with_work_gone(state, 1, out, sizeof out), 1);
	assert_true(strstr(out, "committed, but") == NULL);
	assert_contains(out, "/done/9.1: task 9 was never claimed\n");
	assert_contains(out, "fsck: note: 1 problem seen by one of two reads "
	    "of the spool and not by the other: files moved as fsck read "
	    "them\n");
	/* never claimed, never accepted */
	assert_contains(out, "; 2 problems\n");
}

static void
test_a_problem_both_reads_saw_is_counted(void **state)
{
	char out[8192];

	assert_int_equal(fsck_with_work_gone(state, -1, out, sizeof out), 1);
	assert_contains(out, "/done/9.1: committed, but its work/9.1 is gone\n");
	assert_contains(out, "/done/9.1: task 9 was never claimed\n");
	assert_true(strstr(out, "seen by one of two reads") == NULL);
	assert_contains(out, "; 3 problems\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_nothing_removed_counts_the_worker,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_collected_while_read,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_collected_before_its_open,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_missing_subdirectory_is_a_problem,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_unchecked_status_is_a_problem_that_says_why,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_records_gone_as_read_are_notes,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_problem_one_read_saw_is_not_counted,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_problem_both_reads_saw_is_counted,
		    unit_spool_setup, unit_spool_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * wq_manager.c - CCTools Work Queue, run the way the benchmark runs
 * every peer: N tasks of CMD, 2 local single-core workers, at most W
 * tasks in flight (the window).
 *
 *	wq_manager -n N -w W -- CMD
 *
 * Task I (from 1) runs the command line "CMD I", the line the other
 * systems run for input I (the benchmark's inputs are 1..N).  Work
 * Queue runs it with "sh -c": CMD should be a program's path, so that
 * the program runs and not a builtin of the shell of the same name.
 *
 * It starts the two work_queue_worker processes itself, waits until
 * both are connected, then times from the first submission until the
 * last result is back, and prints the seconds.  Every task must come
 * back done with exit status 0, or the run fails (exit 1).  The
 * workers are stopped at the end.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cctools/work_queue.h>

#include "benchutil.h"

#define NWORKERS 2

extern char **environ;

static pid_t
start_worker(int port)
{
	char portstr[16];
	char *argv[] = { "work_queue_worker", "--cores=1", "--single-shot",
		"--timeout=60", "localhost", portstr, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	snprintf(portstr, sizeof portstr, "%d", port);
	/* its chatter goes to our stderr, never into the printed time */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "wq_manager: posix_spawnp: %s: %s\n", argv[0],
		    strerror(rc));
		exit(1);
	}
	return pid;
}

int
main(int argc, char **argv)
{
	struct work_queue *q;
	struct work_queue_stats st;
	struct work_queue_task *t;
	long n = 0, window = 16, submitted = 0, done = 0;
	pid_t workers[NWORKERS];
	double t0, waited;
	char line[4096];
	int c, i, bad = 0;

	while ((c = getopt(argc, argv, "+n:w:")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'w': window = atol(optarg); break;
		default: goto usage;
		}
	}
	if (n < 1 || window < 1 || optind != argc - 1)
		goto usage;
	q = work_queue_create(0);
	if (q == NULL) {
		fprintf(stderr, "wq_manager: work_queue_create: %s\n",
		    strerror(errno));
		return 1;
	}
	for (i = 0; i < NWORKERS; i++)
		workers[i] = start_worker(work_queue_port(q));
	t0 = now_s();
	for (;;) {
		work_queue_get_stats(q, &st);
		if (st.workers_connected >= NWORKERS)
			break;
		if (now_s() - t0 > 30) {
			fprintf(stderr, "wq_manager: workers did not connect\n");
			return 1;
		}
		work_queue_wait(q, 1);	/* lets the workers in */
	}
	waited = now_s() - t0;
	(void)waited;
	t0 = now_s();
	while (done < n) {
		while (submitted < n && submitted - done < window) {
			if ((size_t)snprintf(line, sizeof line, "%s %ld",
			    argv[optind], submitted + 1) >= sizeof line) {
				fprintf(stderr, "wq_manager: command too long\n");
				return 1;
			}
			t = work_queue_task_create(line);
			work_queue_task_specify_cores(t, 1);
			work_queue_submit(q, t);
			submitted++;
		}
		t = work_queue_wait(q, 5);
		if (t == NULL)
			continue;
		if (t->result != WORK_QUEUE_RESULT_SUCCESS ||
		    t->return_status != 0)
			bad++;
		work_queue_task_delete(t);
		done++;
	}
	printf("%.4f\n", now_s() - t0);
	work_queue_delete(q);
	for (i = 0; i < NWORKERS; i++) {
		kill(workers[i], SIGTERM);
		waitpid(workers[i], NULL, 0);
	}
	if (bad) {
		fprintf(stderr, "wq_manager: %d task(s) failed\n", bad);
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: wq_manager -n N [-w WINDOW] -- CMD\n");
	return 2;
}

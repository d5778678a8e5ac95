/*
 * spool - the ckspool command line.  See spool(1).
 *
 *	spool [-S SPOOL] COMMAND [ARGS]
 *
 * Every subcommand works on the files of the spool directly; none needs
 * spoold to be reachable (it only needs to be running for tasks to
 * move).  Exit status: 0 success, 2 usage, 1 or the task's status for
 * wait/gather, 111 for a problem with the spool itself.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "command.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "version.h"

struct spool cli_sp;
const char *cli_spool_path;

static const struct cmd {
	const char *name;
	int	(*fn)(int, char **);
	const char *help;
} cmds[] = {
	{ "init", cmd_init, "create a spool" },
	{ "submit", cmd_submit, "submit a command or a task file" },
	{ "map", cmd_map, "submit one task per input line" },
	{ "wait", cmd_wait, "wait for tasks; exit with the first failure" },
	{ "gather", cmd_gather, "wait for tasks and print their output" },
	{ "status", cmd_status, "show tasks and the spool" },
	{ "cancel", cmd_cancel, "cancel tasks" },
	{ "retry", cmd_retry, "submit failed and cancelled tasks again" },
	{ "workers", cmd_workers, "list workers" },
	{ "path", cmd_path, "print a task's directory" },
	{ "job-script", cmd_job_script, "print the batch script of a worker job" },
	{ "scale", cmd_scale, "ask for N workers (or --jobs N)" },
	{ "adapt", cmd_adapt, "size the workers to the queue, within bounds" },
	{ "wait-workers", cmd_wait_workers, "wait until N workers are up" },
	{ "shutdown", cmd_shutdown, "cancel worker jobs and stop spoold" },
	{ "config", cmd_config, "show spool.yaml, or import a jobqueue.yaml" },
	{ "fsck", cmd_fsck, "check the spool's invariants" },
	{ "purge", cmd_purge, "remove final tasks nothing needs any more" },
	{ "start-workers", cmd_start_workers,
	    "start a worker per node of this allocation" },
	{ "top", cmd_top, "live view: counts, workers, running, failures" },
	{ "report", cmd_report, "write a performance report (HTML)" },
	{ "journal", cmd_journal, "print the event journal, merged by time" },
	{ "metrics", cmd_metrics, "the spool's counts for Prometheus" },
	{ NULL, NULL, NULL }
};

static void
usage(int status)
{
	FILE *f = status ? stderr : stdout;
	int i;

	fprintf(f, "usage: spool [-S SPOOL] COMMAND [ARGS]\n\n"
	    "SPOOL defaults to $SPOOL.  Commands:\n");
	for (i = 0; cmds[i].name; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n\"spool COMMAND -h\" for its options; spool(1) for all.\n");
	exit(status);
}

void
cli_open(void)
{
	const char *path = spool_locate(cli_spool_path);
	char why[512];

	if (path == NULL)
		msg_fatal_status(EXIT_USAGE, "no spool: give -S DIR or set "
		    "$SPOOL");
	if (spool_open(&cli_sp, path, why, sizeof why) < 0)
		msg_fatal("%s", why);
}

void
cli_spool_realpath(char out[PATH_MAX])
{
	if (realpath(cli_sp.root, out) == NULL)
		msg_fatal("realpath: %s: %m", cli_sp.shown);
}

uint64_t *
cli_read_ids(int argc, char **argv, size_t *n)
{
	uint64_t *v = NULL, id;
	char word[64];
	int i, c;
	size_t k;

	*n = 0;
	if (argc == 1 && strcmp(argv[0], "-") == 0)
		argc = 0;
	for (i = 0; i < argc; i++) {
		if (ids_parse(argv[i], &id) < 0)
			msg_fatal_status(EXIT_USAGE, "not a task ID: %s",
			    journal_q(argv[i]));
		v = xreallocarray(v, *n + 1, sizeof *v);
		v[(*n)++] = id;
	}
	if (argc > 0)
		return v;
	for (;;) {
		k = 0;
		while ((c = getchar()) != EOF && (c == ' ' || c == '\n' ||
		    c == '\t' || c == '\r'))
			;
		if (c == EOF)
			break;
		do {
			if (k + 1 >= sizeof word)
				msg_fatal_status(EXIT_USAGE, "not a task ID on "
				    "stdin: %.20s...", word);
			word[k++] = (char)c;
		} while ((c = getchar()) != EOF && c != ' ' && c != '\n' &&
		    c != '\t' && c != '\r');
		word[k] = 0;
		if (ids_parse(word, &id) < 0)
			msg_fatal_status(EXIT_USAGE, "not a task ID on stdin: %s",
			    word);
		v = xreallocarray(v, *n + 1, sizeof *v);
		v[(*n)++] = id;
	}
	return v;
}

int
cmd_init(int argc, char **argv)
{
	const char *path;
	char why[512];

	if (argc > 2 || (argc == 2 && argv[1][0] == '-'))
		msg_fatal_status(EXIT_USAGE, "usage: spool [-S SPOOL] init [DIR]");
	path = argc == 2 ? argv[1] : spool_locate(cli_spool_path);
	if (path == NULL)
		msg_fatal_status(EXIT_USAGE, "no spool: give -S DIR or set "
		    "$SPOOL");
	if (spool_init(path, why, sizeof why) < 0)
		msg_fatal("%s", why);
	printf("%s\n", path);
	return 0;
}

/*
 * At exit: what went to stdout reached it.  IDs a submission printed
 * into a full disk or a closed descriptor are lost; that is said, and
 * the status is 111, not 0.  (Registered first, so run last.)
 */
static void
stdout_written(void)
{
	int earlier = ferror(stdout);

	if (fflush(stdout) == 0) {
		if (!earlier)
			return;
		msg_warn("write: stdout: an earlier write failed");
	} else
		msg_warn("write: stdout: %m");
	_exit(EXIT_TEMPFAIL);
}

int
main(int argc, char **argv)
{
	static const struct option top_opts[] = {
		{ "spool", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c, i;

	msg_init("spool");
	command_std_fds();
	/*
	 * Output to a file or a pipe is buffered whole, in either C
	 * library: musl flushes at the first newline until its first write
	 * has told it stdout is no terminal, and a write that fails there
	 * leaves only the stream's error flag, not its errno, for the end.
	 */
	if (!isatty(STDOUT_FILENO) && setvbuf(stdout, NULL, _IOFBF, BUFSIZ) != 0)
		msg_warn("setvbuf: stdout: %m");
	atexit(stdout_written);
	fsop_stats_at_exit("spool");
	while ((c = getopt_long(argc, argv, "+S:hV", top_opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			cli_spool_path = optarg;
			break;
		case 'h':
			usage(0);
			break;
		case 'V':
			printf("ckspool %s\n", CKSPOOL_VERSION);
			return 0;
		default:
			usage(EXIT_USAGE);
		}
	}
	if (optind >= argc)
		usage(EXIT_USAGE);
	for (i = 0; cmds[i].name; i++)
		if (strcmp(cmds[i].name, argv[optind]) == 0) {
			argc -= optind;
			argv += optind;
			optind = 0;	/* a fresh getopt: the "+" above is sticky */
			/* getopt names argv[0] in its messages: "spool submit:
			 * ...", as msg.c names the program */
			argv[0] = xasprintf("spool %s", cmds[i].name);
			return cmds[i].fn(argc, argv);
		}
	if (strcmp(argv[optind], "help") == 0)
		usage(0);
	msg_warn("unknown command: %s", journal_q(argv[optind]));
	usage(EXIT_USAGE);
}

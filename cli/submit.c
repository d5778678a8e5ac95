/*
 * submit.c - "spool submit" and "spool map".
 *
 *	spool submit [options] -- CMD [ARG...]
 *	spool submit [options] FILE	(YAML or a #SPOOL script; - is stdin)
 *					(a YAML list of tasks: an ID a line)
 *	spool map [options] -- CMD ... {} ... [::: ARG...]
 *
 * The CLI claims the task IDs itself and writes one bundle with every
 * task of the invocation (submit.h): the IDs it prints exist on disk
 * before the command returns, before spoold has seen them.
 *
 * Options given on the command line override those in a task file
 * (as sbatch's do #SBATCH lines).  The default working directory is
 * the one spool was run in.  "spool map" replaces {} in the command
 * words (and --name) by each input and {#} by its 1-based number; with
 * no {} the input is appended as the last argument.  Inputs are read
 * one per line from stdin, or are the words after ":::".  IDs are
 * printed in input order, one per line, as each chunk is committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"
#include "submit.h"
#include "taskfile.h"

#define MAP_CHUNK 4096

static const struct option task_opts[] = {
	{ "cores", required_argument, NULL, 'c' },
	{ "memory", required_argument, NULL, 'm' },
	{ "gpus", required_argument, NULL, 'g' },
	{ "walltime", required_argument, NULL, 't' },
	{ "after", required_argument, NULL, 'a' },
	{ "priority", required_argument, NULL, 'p' },
	{ "retries", required_argument, NULL, 'r' },
	{ "name", required_argument, NULL, 'n' },
	{ "env", required_argument, NULL, 'e' },
	{ "cwd", required_argument, NULL, 'C' },
	{ "shell", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

const struct option *cli_task_options = task_opts;
const char cli_task_optstring[] = "+c:m:g:t:a:p:r:n:e:C:s:h";

static const char *
opt_key(int opt)
{
	switch (opt) {
	case 'c': return "cores";
	case 'm': return "memory";
	case 'g': return "gpus";
	case 't': return "walltime";
	case 'a': return "after";
	case 'p': return "priority";
	case 'r': return "retries";
	case 'n': return "name";
	case 'e': return "env";
	case 'C': return "cwd";
	default: return NULL;
	}
}

int
cli_task_option(struct task_spec *t, int opt, const char *arg)
{
	const char *key = opt_key(opt), *why;

	if (key == NULL)
		return -1;
	/*
	 * The value is shown up to 64 bytes: an error message is cut at
	 * 2 KiB (msg.c), and a long one (an --after list, an --env value)
	 * left no room for the reason.  It is quoted if it is not a plain
	 * word (journal_q): a newline in it split the message.
	 */
	if (task_set(t, key, arg, &why) < 0) {
		char head[65];

		snprintf(head, strlen(arg) > 64 ? 61 : sizeof head, "%s", arg);
		msg_fatal_status(EXIT_USAGE, "--%s %s%s: %s", key,
		    journal_q(head), strlen(arg) > 64 ? "..." : "", why);
	}
	return 0;
}

/* Options as given, to re-apply over a task file's directives. */
struct optlist {
	int	*opt;
	char	**arg;
	size_t	n;
};

static void
optlist_add(struct optlist *l, int opt, const char *arg)
{
	l->opt = xreallocarray(l->opt, l->n + 1, sizeof *l->opt);
	l->arg = xreallocarray(l->arg, l->n + 1, sizeof *l->arg);
	l->opt[l->n] = opt;
	l->arg[l->n++] = xstrdup(arg);
}

static void
optlist_apply(const struct optlist *l, struct task_spec *t)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		(void)cli_task_option(t, l->opt[i], l->arg[i]);
}

static void
optlist_free(struct optlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->arg[i]);
	free(l->opt);
	free(l->arg);
}

static void
submit_usage(const char *cmd, int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: spool submit [options] -- CMD [ARG...]\n"
	    "       spool submit [options] FILE\n"
	    "       spool map [options] -- CMD ... {} ... [::: ARG...]\n"
	    "options: --cores N  --memory SIZE  --gpus N  --walltime D\n"
	    "         --after ID[,ID...]  --priority N  --retries N\n"
	    "         --name NAME  --env VAR=VAL  --cwd DIR\n"
	    "         --shell 'CMD STRING' (submit: run with /bin/sh -c)\n");
	(void)cmd;
	exit(status);
}

/*
 * The directory spool was run in, by getcwd, or by $PWD where getcwd
 * cannot name it but $PWD is that directory (as "pwd -L" takes it):
 * a process that entered a mount namespace without its root (nsenter
 * -m) is in a directory getcwd calls unreachable.  None (a removed
 * directory) refuses the submission: the task is not to run, unsaid,
 * in its task directory instead.
 */
static char *
run_dir(void)
{
	char cwd[TASK_PATH_MAX];
	const char *pwd = getenv("PWD");
	struct stat here, there;
	int saved;

	if (getcwd(cwd, sizeof cwd) != NULL)
		return xstrdup(cwd);
	saved = errno;
	if (pwd && pwd[0] == '/' && strlen(pwd) < TASK_PATH_MAX &&
	    stat(".", &here) == 0 && stat(pwd, &there) == 0 &&
	    here.st_dev == there.st_dev && here.st_ino == there.st_ino)
		return xstrdup(pwd);
	errno = saved;
	msg_fatal_status(EXIT_USAGE, "getcwd: %m (the task's working "
	    "directory: give --cwd)");
}

/* The n tasks of t: the directory spool was run in (looked up once)
 * where none is given, the caller and now (read once). */
static void
set_defaults(struct task_spec *t, size_t n)
{
	char *dir = NULL;
	double now = now_unix();
	uint32_t uid = (uint32_t)getuid();
	size_t i;

	for (i = 0; i < n; i++) {
		if (t[i].cwd == NULL) {
			if (dir == NULL)
				dir = run_dir();
			t[i].cwd = xstrdup(dir);
		}
		t[i].uid = uid;
		t[i].submitted = now;
	}
	free(dir);
}

void
cli_submit_tasks(struct task_spec *t, size_t n, unsigned flags)
{
	char why[512];

	switch (submit_tasks(&cli_sp, t, n, flags, why, sizeof why)) {
	case 0:
		return;
	case SUBMIT_INVALID:
		msg_fatal_status(EXIT_USAGE, "%s", why);
	default:
		msg_fatal("%s", why);
	}
}

static int
read_task_file(const char *path, struct task_spec **t, size_t *nt)
{
	struct taskfile_err te;
	struct buf b = BUF_INIT;
	char why[320], *real;
	int fd, rc;

	if (strcmp(path, "-") == 0) {
		char chunk[65536];
		ssize_t n;

		while ((n = read(STDIN_FILENO, chunk, sizeof chunk)) > 0) {
			buf_append(&b, chunk, (size_t)n);
			if (b.len > TASK_FILE_MAX)
				msg_fatal_status(EXIT_USAGE, "stdin: task file "
				    "larger than %u bytes", TASK_FILE_MAX);
		}
		if (n < 0)
			msg_fatal("read: stdin: %m");
	} else {
		/*
		 * The caller's own file, read with the caller's rights: a
		 * symbolic link to it is followed (spoold, which may read
		 * for others, refuses links in incoming/).
		 */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			msg_fatal_status(EXIT_USAGE, "open: %s: %m",
			    journal_q(path));
		close(fd);
		if ((real = realpath(path, NULL)) == NULL)
			msg_fatal_status(EXIT_USAGE, "open: %s: %m",
			    journal_q(path));
		if (fsop_read_file(AT_FDCWD, real, TASK_FILE_MAX, &b, NULL) < 0) {
			if (errno == EFBIG)
				msg_fatal_status(EXIT_USAGE, "%s: file larger than "
				    "%u bytes", journal_q(path), TASK_FILE_MAX);
			if (errno == EINVAL)
				msg_fatal_status(EXIT_USAGE, "%s: not a regular "
				    "file", journal_q(path));
			msg_fatal_status(EXIT_USAGE, "read: %s: %m",
			    journal_q(path));
		}
		free(real);
	}
	rc = taskfile_parse_list(b.p ? b.p : "", b.len, t, nt, &te);
	if (rc < 0) {
		taskfile_err_format(&te, why, sizeof why);
		msg_fatal_status(EXIT_USAGE, "%s: %s", journal_q(path), why);
	}
	buf_free(&b);
	return 0;
}

static int
is_file(const char *path)
{
	struct stat st;

	return strcmp(path, "-") == 0 ||
	    (stat(path, &st) == 0 && S_ISREG(st.st_mode));
}

int
cmd_submit(int argc, char **argv)
{
	struct optlist ol = { NULL, NULL, 0 };
	struct task_spec t, *ts = NULL;
	char *shell = NULL;
	size_t i, n = 1;
	int c, dashdash;

	task_init(&t);
	while ((c = getopt_long(argc, argv, cli_task_optstring, task_opts,
	    NULL)) != -1) {
		if (c == 'h')
			submit_usage("submit", 0);
		else if (c == 's')
			shell = optarg;
		else if (opt_key(c))
			optlist_add(&ol, c, optarg);
		else
			submit_usage("submit", EXIT_USAGE);
	}
	dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	cli_open();
	if (shell) {
		if (optind != argc)
			msg_fatal_status(EXIT_USAGE, "--shell takes the whole "
			    "command; no more arguments");
		t.shell = xstrdup(shell);
	} else if (optind == argc) {
		submit_usage("submit", EXIT_USAGE);
	} else if (!dashdash && optind + 1 == argc && is_file(argv[optind])) {
		read_task_file(argv[optind], &ts, &n);
	} else {
		t.argv = strv_dup(argv + optind);
	}
	if (ts == NULL) {
		ts = xmalloc(sizeof *ts);
		*ts = t;
	}
	/* a file's tasks: a list of them too, in one bundle, the options
	 * given here over each one's own */
	for (i = 0; i < n; i++)
		optlist_apply(&ol, &ts[i]);
	set_defaults(ts, n);
	cli_submit_tasks(ts, n, 0);
	for (i = 0; i < n; i++)
		printf("%" PRIu64 "\n", ts[i].id);
	task_free_array(ts, n);
	optlist_free(&ol);
	return 0;
}

/* Replace {} by arg and {#} by seq in s. */
static char *
substitute(const char *s, const char *arg, uint64_t seq, int *used)
{
	struct buf b = BUF_INIT;
	const char *p;

	for (p = s; *p; p++) {
		if (p[0] == '{' && p[1] == '}') {
			buf_puts(&b, arg);
			*used = 1;
			p++;
		} else if (p[0] == '{' && p[1] == '#' && p[2] == '}') {
			buf_printf(&b, "%" PRIu64, seq);
			p += 2;
		} else
			buf_putc(&b, *p);
	}
	return buf_steal(&b);
}

struct mapper {
	struct task_spec tmpl;
	char	**cmd;
	const char *name_tmpl;
	struct task_spec *batch;
	size_t	n;
	uint64_t seq;
	struct buf ids;		/* the chunk's IDs, a line each */
};

static void
map_add(struct mapper *m, const char *arg)
{
	struct task_spec *t = &m->batch[m->n];
	size_t i, k = strv_len(m->cmd);
	char *name;
	int used = 0;
	const char *why;

	m->seq++;
	task_copy(t, &m->tmpl);
	t->argv = xcalloc(k + 2, sizeof *t->argv);
	for (i = 0; i < k; i++)
		t->argv[i] = substitute(m->cmd[i], arg, m->seq, &used);
	if (!used)
		t->argv[k] = xstrdup(arg);
	if (m->name_tmpl) {
		name = substitute(m->name_tmpl, arg, m->seq, &used);
		if (task_set(t, "name", name, &why) < 0)
			msg_fatal_status(EXIT_USAGE, "input %" PRIu64 ": name "
			    "%s: %s", m->seq, msg_q(name), why);
		free(name);
	}
	/*
	 * Checked here, where its number in the input is known:
	 * submit_tasks would name it by its place in the chunk (and does
	 * not check it again: SUBMIT_VALIDATED).
	 */
	if (task_validate(t, &why) < 0)
		msg_fatal_status(EXIT_USAGE, "input %" PRIu64 ": %s", m->seq,
		    why);
	m->n++;
}

static void
map_flush(struct mapper *m)
{
	size_t i;

	if (m->n == 0)
		return;
	cli_submit_tasks(m->batch, m->n, SUBMIT_VALIDATED);	/* map_add */
	buf_reset(&m->ids);
	for (i = 0; i < m->n; i++) {
		buf_put_uint(&m->ids, m->batch[i].id);
		buf_putc(&m->ids, '\n');
		task_free(&m->batch[i]);
	}
	if (fwrite(m->ids.p, 1, m->ids.len, stdout) != m->ids.len ||
	    fflush(stdout) == EOF)
		msg_fatal("write: stdout: %m");
	m->n = 0;
}

int
cmd_map(int argc, char **argv)
{
	struct mapper m;
	char *line = NULL;
	size_t cap = 0, i;
	ssize_t len;
	int c, sep = -1;

	memset(&m, 0, sizeof m);
	task_init(&m.tmpl);
	while ((c = getopt_long(argc, argv, cli_task_optstring, task_opts,
	    NULL)) != -1) {
		if (c == 'h')
			submit_usage("map", 0);
		else if (c == 'n')
			m.name_tmpl = optarg;
		else if (c == 's')	/* its input goes into the command */
			msg_fatal_status(EXIT_USAGE, "--shell: submit only: "
			    "give map the command sh -c 'STRING' sh {}");
		else if (opt_key(c))
			(void)cli_task_option(&m.tmpl, c, optarg);
		else
			submit_usage("map", EXIT_USAGE);
	}
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (strcmp(argv[i], ":::") == 0) {
			sep = (int)i;
			break;
		}
	if ((sep < 0 ? argc : sep) - optind < 1)
		submit_usage("map", EXIT_USAGE);
	m.cmd = xcalloc((size_t)((sep < 0 ? argc : sep) - optind) + 1,
	    sizeof *m.cmd);
	for (i = 0; (int)i < (sep < 0 ? argc : sep) - optind; i++)
		m.cmd[i] = argv[optind + (int)i];
	cli_open();
	set_defaults(&m.tmpl, 1);
	m.batch = xcalloc(MAP_CHUNK, sizeof *m.batch);
	if (sep >= 0) {
		for (i = (size_t)sep + 1; i < (size_t)argc; i++) {
			map_add(&m, argv[i]);
			if (m.n == MAP_CHUNK)
				map_flush(&m);
		}
	} else {
		while ((len = getline(&line, &cap, stdin)) >= 0) {
			if (len > 0 && line[len - 1] == '\n')
				line[--len] = 0;
			if (memchr(line, 0, (size_t)len))
				msg_fatal_status(EXIT_USAGE, "input %" PRIu64
				    ": NUL byte", m.seq + 1);
			map_add(&m, line);
			if (m.n == MAP_CHUNK)
				map_flush(&m);
		}
		if (ferror(stdin))
			msg_fatal("read: stdin: %m");
	}
	map_flush(&m);
	free(line);
	buf_free(&m.ids);
	free(m.batch);
	free(m.cmd);
	task_free(&m.tmpl);
	return 0;
}

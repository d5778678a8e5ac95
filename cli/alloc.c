/*
 * alloc.c - "spool start-workers": one ckworker per node of the
 * allocation this command runs in (PyUNICORE's allocation mode,
 * disBatch): a user who holds 4 nodes for 2 hours runs the spool's
 * tasks on them without queueing again.
 *
 *	spool start-workers [--cores N] [--memory SIZE] [--gpus N]
 *	    [--idle-timeout D] [--name NAME] [--dry-run] [-- CKWORKER-ARGS]
 *
 * Slurm (SLURM_JOB_ID set: inside sbatch or salloc): execs
 *
 *	srun --nodes=N --ntasks-per-node=1 --cpus-per-task=C --kill-on-bad-exit=0
 *	    CKWORKER -S SPOOL --name alloc-JOBID --cores C [--memory M]
 *	    [--walltime LEFT] ...
 *
 * N is SLURM_JOB_NUM_NODES, C the smallest CPU count per node of the
 * allocation (SLURM_JOB_CPUS_PER_NODE, e.g. "16(x3),8") unless --cores
 * says, M the allocation's memory per node (SLURM_MEM_PER_NODE, or
 * SLURM_MEM_PER_CPU times C) unless --memory says, LEFT the time the
 * allocation has left ("squeue -h -j JOBID -o %L"), so the workers
 * drain before it ends.  --dry-run prints the command instead of
 * running it, without asking squeue (so without --walltime).
 *
 * Grid Engine (PE_HOSTFILE set: inside a parallel job): one ckworker
 * per line of the host file, with that host's slot count as cores:
 * directly on this host, through "qrsh -inherit -nostdin HOST" on the
 * others (the parallel environment needs control_slaves TRUE for
 * that).  This command waits for them, passing SIGTERM and SIGINT on.
 *
 * The workers register as alloc-JOBID (no "@": they are no worker kind
 * of spool.yaml, and spoold never scales or cancels them); they leave
 * at --idle-timeout (default: never, as the user holds the allocation),
 * when the allocation ends (having drained), or on SIGTERM.  Exit
 * status: srun's, or 0 when every worker exited 0.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "command.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"
#include "units.h"

#define HOSTS_MAX	4096
#define ARGS_MAX	64

struct opts {
	uint64_t cores, memory, gpus;
	const char *idle, *name;
	int	dry;
	char	**extra;	/* after "--" */
	int	nextra;
};

/* The smallest count in SLURM_JOB_CPUS_PER_NODE ("16(x3),8"). */
static uint64_t
slurm_min_cpus(const char *s)
{
	uint64_t min = 0, v;
	char *end;

	while (s && *s) {
		v = strtoull(s, &end, 10);
		if (end == s)
			break;
		if (v && (min == 0 || v < min))
			min = v;
		s = end + strcspn(end, ",");
		if (*s == ',')
			s++;
	}
	return min;
}

/* Seconds the allocation has left; 0 if unknown or unlimited. */
static uint64_t
slurm_left(const char *jobid)
{
	char *argv[] = { (char *)"squeue", (char *)"-h", (char *)"-j",
	    (char *)jobid, (char *)"-o", (char *)"%L", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT, err = BUF_INIT;
	char why[300];
	const char *w;
	uint64_t s = 0;
	int rc;

	c.argv = argv;
	c.limit_ms = 30000;
	rc = command_run(&c, &out, &err, why, sizeof why);
	if (rc == 0 && command_ok(&c) && out.p) {
		out.p[strcspn(out.p, " \n")] = 0;
		if (units_parse_duration(out.p, &s, &w) < 0)
			s = 0;	/* UNLIMITED, NOT_SET */
	} else {
		if (rc == 0 && !command_ok(&c))
			command_why(&c, &out, &err, why, sizeof why);
		else if (rc == 0)
			snprintf(why, sizeof why, "squeue said nothing");
		fprintf(stderr, "spool: time left of job %s unknown (%s); the "
		    "workers will not drain before it ends\n", jobid, why);
	}
	buf_free(&out);
	buf_free(&err);
	return s;
}

static void
add(char **argv, int *n, const char *s)
{
	if (*n >= ARGS_MAX - 1)
		msg_fatal_status(EXIT_USAGE, "too many arguments");
	argv[(*n)++] = xstrdup(s);
	argv[*n] = NULL;
}

/* The ckworker part of the command line, cores given. */
static void
worker_args(char **argv, int *n, const struct opts *o, const char *name,
    uint64_t cores, uint64_t memory, uint64_t walltime)
{
	char root[PATH_MAX], wpath[PATH_MAX], v[64];
	int i;

	cli_spool_realpath(root);
	cli_worker_path(wpath, sizeof wpath);
	add(argv, n, wpath);
	add(argv, n, "-S");
	add(argv, n, root);
	add(argv, n, "--name");
	add(argv, n, name);
	add(argv, n, "--cores");
	snprintf(v, sizeof v, "%" PRIu64, cores);
	add(argv, n, v);
	if (memory) {
		add(argv, n, "--memory");
		add(argv, n, units_format_size(memory, v, sizeof v));
	}
	if (o->gpus) {
		add(argv, n, "--gpus");
		snprintf(v, sizeof v, "%" PRIu64, o->gpus);
		add(argv, n, v);
	}
	if (walltime) {
		add(argv, n, "--walltime");
		add(argv, n, units_format_duration(walltime, v, sizeof v));
	}
	if (o->idle) {
		add(argv, n, "--idle-timeout");
		add(argv, n, o->idle);
	}
	for (i = 0; i < o->nextra; i++)
		add(argv, n, o->extra[i]);
}

static void
print_argv(char **argv)
{
	int i;

	for (i = 0; argv[i]; i++)
		printf("%s%s", i ? " " : "", argv[i]);
	printf("\n");
}

static void
free_argv(char **argv, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(argv[i]);
}

static int
start_slurm(const struct opts *o, const char *jobid)
{
	const char *nodes = getenv("SLURM_JOB_NUM_NODES");
	const char *mpn = getenv("SLURM_MEM_PER_NODE");
	const char *mpc = getenv("SLURM_MEM_PER_CPU");
	char *argv[ARGS_MAX], name[128], v[64];
	uint64_t cores = o->cores, memory = o->memory, left;
	int n = 0;

	if (nodes == NULL)
		nodes = getenv("SLURM_NNODES");
	if (nodes == NULL || atoi(nodes) < 1)
		msg_fatal_status(EXIT_USAGE, "SLURM_JOB_NUM_NODES is not set: "
		    "run this inside an allocation (sbatch or salloc)");
	if (cores == 0)
		cores = slurm_min_cpus(getenv("SLURM_JOB_CPUS_PER_NODE"));
	if (cores == 0)
		msg_fatal_status(EXIT_USAGE, "SLURM_JOB_CPUS_PER_NODE gives no "
		    "CPU count: give --cores");
	if (memory == 0 && mpn)
		memory = strtoull(mpn, NULL, 10) << 20;
	else if (memory == 0 && mpc)
		memory = (strtoull(mpc, NULL, 10) << 20) * cores;
	left = o->dry ? 0 : slurm_left(jobid);
	if (o->name)
		snprintf(name, sizeof name, "%s", o->name);
	else
		snprintf(name, sizeof name, "alloc-%s", jobid);
	add(argv, &n, "srun");
	snprintf(v, sizeof v, "--nodes=%s", nodes);
	add(argv, &n, v);
	add(argv, &n, "--ntasks-per-node=1");
	snprintf(v, sizeof v, "--cpus-per-task=%" PRIu64, cores);
	add(argv, &n, v);
	add(argv, &n, "--kill-on-bad-exit=0");
	worker_args(argv, &n, o, name, cores, memory, left);
	if (o->dry) {
		print_argv(argv);
		free_argv(argv, n);
		return 0;
	}
	fprintf(stderr, "spool: starting a worker on each of %s node%s of "
	    "job %s (%" PRIu64 " cores each)\n", nodes, atoi(nodes) == 1 ?
	    "" : "s", jobid, cores);
	fflush(stderr);
	execvp(argv[0], argv);
	msg_fatal_status(EXIT_TEMPFAIL, "exec: srun: %m");
}

/* HOST is this host: its short name, or that followed by a domain. */
static int
is_this_host(const char *host)
{
	size_t n = strlen(host_name());

	return strncmp(host, host_name(), n) == 0 &&
	    (host[n] == 0 || host[n] == '.');
}

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
}

static int
start_sge(const struct opts *o, const char *hostfile, const char *jobid)
{
	struct buf hf = BUF_INIT;
	char *line, *save = NULL, host[256], name[128];
	char *argv[ARGS_MAX];
	pid_t pids[HOSTS_MAX];
	unsigned long slots;
	int n, np = 0, i, status, rc = 0, sent = 0;
	struct sigaction sa;
	sigset_t block, old;
	FILE *f;

	if ((f = fopen(hostfile, "re")) == NULL)
		msg_fatal("open: %s: %m", hostfile);
	for (;;) {
		char chunk[4096];
		size_t r = fread(chunk, 1, sizeof chunk, f);

		if (r == 0)
			break;
		if (hf.len + r > (1u << 20))
			msg_fatal("%s: too large", hostfile);
		buf_append(&hf, chunk, r);
	}
	if (ferror(f))
		msg_fatal("read: %s: %m", hostfile);
	fclose(f);
	if (o->name)
		snprintf(name, sizeof name, "%s", o->name);
	else
		snprintf(name, sizeof name, "alloc-%s", jobid);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	for (line = strtok_r(hf.p ? hf.p : (char *)"", "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%255s %lu", host, &slots) != 2 || slots == 0)
			continue;
		if (np == HOSTS_MAX)
			msg_fatal("%s: more than %d hosts", hostfile, HOSTS_MAX);
		n = 0;
		if (!is_this_host(host)) {
			add(argv, &n, "qrsh");
			add(argv, &n, "-inherit");
			add(argv, &n, "-nostdin");
			add(argv, &n, host);
		}
		worker_args(argv, &n, o, name, o->cores ? o->cores : slots,
		    o->memory, 0);
		if (o->dry) {
			print_argv(argv);
			np++;	/* counted: a dry run refuses no host too */
		} else {
			fflush(NULL);
			sigprocmask(SIG_BLOCK, &block, &old);
			if ((pids[np] = fork()) < 0)
				msg_fatal("fork: %m");
			if (pids[np] == 0) {
				sigaction(SIGTERM, &(struct sigaction){
				    .sa_handler = SIG_DFL }, NULL);
				sigaction(SIGINT, &(struct sigaction){
				    .sa_handler = SIG_DFL }, NULL);
				sigprocmask(SIG_SETMASK, &old, NULL);
				execvp(argv[0], argv);
				msg_fatal_status(127, "exec: %s: %m",
				    journal_q(argv[0]));
			}
			sigprocmask(SIG_SETMASK, &old, NULL);
			fprintf(stderr, "spool: worker on %s (%lu slots), pid "
			    "%ld\n", host, slots, (long)pids[np]);
			np++;
		}
		free_argv(argv, n);
	}
	buf_free(&hf);
	if (np == 0)
		msg_fatal_status(EXIT_USAGE, "%s lists no host", hostfile);
	if (o->dry)
		return 0;
	for (i = 0; i < np;) {
		if (got_signal && !sent) {
			int k;

			for (k = 0; k < np; k++)
				if (pids[k] > 0)
					(void)kill(pids[k], got_signal);
			sent = 1;
		}
		if (pids[i] <= 0) {
			i++;
			continue;
		}
		if (waitpid(pids[i], &status, 0) < 0) {
			if (errno == EINTR)
				continue;
			msg_fatal("waitpid: %m");
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = 1;
		pids[i++] = 0;
	}
	return rc;
}

int
cmd_start_workers(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "cores", required_argument, NULL, 'c' },
		{ "memory", required_argument, NULL, 'm' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *jobid, *hostfile, *why;
	struct opts o;
	uint64_t ms;
	int c;

	memset(&o, 0, sizeof o);
	while ((c = getopt_long(argc, argv, "c:m:g:i:n:Dh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (units_parse_uint(optarg, TASK_CORES_MAX, &o.cores,
			    &why) < 0 || o.cores == 0)
				msg_fatal_status(EXIT_USAGE, "--cores %s: %s",
				    journal_q(optarg),
				    o.cores == 0 ? "at least 1" : why);
			break;
		case 'm':
			if (units_parse_size(optarg, &o.memory, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--memory %s: %s",
				    journal_q(optarg), why);
			break;
		case 'g':
			if (units_parse_uint(optarg, TASK_GPUS_MAX, &o.gpus,
			    &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--gpus %s: %s",
				    journal_q(optarg), why);
			break;
		case 'i':
			if (units_parse_ms(optarg, &ms, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--idle-timeout %s: "
				    "%s", journal_q(optarg), why);
			o.idle = optarg;
			break;
		case 'n':
			if (!task_name_ok(optarg) || strchr(optarg, '@'))
				msg_fatal_status(EXIT_USAGE, "--name %s: use "
				    "[A-Za-z0-9_.+:-]", journal_q(optarg));
			o.name = optarg;
			break;
		case 'D': o.dry = 1; break;
		case 'h':
			printf("usage: spool start-workers [--cores N] "
			    "[--memory SIZE] [--gpus N]\n"
			    "           [--idle-timeout D] [--name NAME] "
			    "[--dry-run] [-- CKWORKER-ARGS]\n"
			    "One ckworker per node of the Slurm allocation or "
			    "SGE parallel job this runs in.\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	o.extra = argv + optind;
	o.nextra = argc - optind;
	cli_open();
	if ((jobid = getenv("SLURM_JOB_ID")) != NULL && *jobid)
		return start_slurm(&o, jobid);
	hostfile = getenv("PE_HOSTFILE");
	jobid = getenv("JOB_ID");
	if (hostfile && *hostfile && jobid && *jobid)
		return start_sge(&o, hostfile, jobid);
	msg_fatal_status(EXIT_USAGE, "not inside a Slurm allocation "
	    "(SLURM_JOB_ID) or a Grid Engine parallel job (PE_HOSTFILE, "
	    "JOB_ID): get one with salloc, sbatch or qsub -pe, and run this "
	    "in it");
}

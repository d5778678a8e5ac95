/*
 * batch.c - talking to a batch system: submit, cancel, list.
 *
 *            submit                  cancel    list (one line per job)
 *   slurm    sbatch --parsable FILE  scancel   squeue -h -r -o '%i %T'
 *   sge      qsub -terse FILE        qdel      qstat -g d
 *   pbs      qsub FILE               qdel      qstat
 *   lsf      bsub < FILE             bkill     bjobs -noheader -o ...
 *
 * Job IDs are written the way the job script names its worker
 * (KIND@JOBID, jobscript.h): an array element is FIRST_N on Slurm and
 * FIRST.N elsewhere.  batch_list() turns the queue listing into
 * (id, state) pairs with state "pending", "running" or "error"; a job
 * that is not listed has left the queue.  Every command runs through
 * cmd_run() with a time limit; a failure is returned with the
 * command's own words, for "spool workers" to show.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "msg.h"
#include "spoold.h"

#define BATCH_LIMIT_MS 30000

/* The first line of a command's error output, for messages. */
static void
why_from(const struct buf *out, const struct buf *err, int status,
    char *why, size_t size)
{
	const struct buf *b = err->len ? err : out;
	size_t n = 0;

	while (n < b->len && b->p[n] != '\n')
		n++;
	if (n)
		snprintf(why, size, "%.*s", (int)(n > 200 ? 200 : n), b->p);
	else if (WIFEXITED(status))
		snprintf(why, size, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(why, size, "killed by signal %d", WTERMSIG(status));
}

static int
run(char *const argv[], const char *input, struct buf *out, char *why,
    size_t size)
{
	struct buf err = BUF_INIT;
	int status = 0, rc;

	rc = cmd_run(argv, input, out, &err, BATCH_LIMIT_MS, &status);
	if (rc < 0) {
		snprintf(why, size, "%s: %s", argv[0], errno == ETIMEDOUT ?
		    "no answer in 30 s" : strerror(errno));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char w[240];

		why_from(out, &err, status, w, sizeof w);
		snprintf(why, size, "%s: %s", argv[0], w);
		rc = -1;
	}
	buf_free(&err);
	return rc;
}

/* The leading job number in text like "Job <123> is submitted". */
static int
first_number(const char *s, char *id, size_t size)
{
	const char *p = s;
	size_t n;

	while (*p && !isdigit((unsigned char)*p))
		p++;
	n = strspn(p, "0123456789");
	if (n == 0 || n >= size)
		return -1;
	memcpy(id, p, n);
	id[n] = 0;
	return 0;
}

int
batch_submit(enum backend b, const char *script_path, const char *script,
    char *id, size_t idsize, char *why, size_t size)
{
	struct buf out = BUF_INIT;
	char *argv[4];
	const char *input = NULL;
	int rc;

	switch (b) {
	case BK_SLURM:
		argv[0] = (char *)"sbatch";
		argv[1] = (char *)"--parsable";
		argv[2] = (char *)script_path;
		argv[3] = NULL;
		break;
	case BK_SGE:
		argv[0] = (char *)"qsub";
		argv[1] = (char *)"-terse";
		argv[2] = (char *)script_path;
		argv[3] = NULL;
		break;
	case BK_PBS:
		argv[0] = (char *)"qsub";
		argv[1] = (char *)script_path;
		argv[2] = NULL;
		break;
	case BK_LSF:
		argv[0] = (char *)"bsub";
		argv[1] = NULL;
		input = script;
		break;
	default:
		snprintf(why, size, "no batch system for backend %s",
		    backend_name[b]);
		return -1;
	}
	rc = run(argv, input, &out, why, size);
	if (rc == 0 && first_number(out.p ? out.p : "", id, idsize) < 0) {
		snprintf(why, size, "%s: no job ID in its answer \"%.80s\"",
		    argv[0], out.p ? out.p : "");
		rc = -1;
	}
	buf_free(&out);
	return rc;
}

int
batch_cancel(enum backend b, const char *id, char *why, size_t size)
{
	struct buf out = BUF_INIT;
	char arg[80], *argv[5];
	const char *dot;
	int rc;

	snprintf(arg, sizeof arg, "%s", id);
	argv[1] = arg;
	argv[2] = NULL;
	switch (b) {
	case BK_SLURM:
		argv[0] = (char *)"scancel";
		break;
	case BK_SGE:
		argv[0] = (char *)"qdel";
		if ((dot = strchr(id, '.')) != NULL) {
			/* an array task: qdel JOB -t TASK */
			snprintf(arg, sizeof arg, "%.*s", (int)(dot - id), id);
			argv[2] = (char *)"-t";
			argv[3] = (char *)dot + 1;
			argv[4] = NULL;
		}
		break;
	case BK_PBS:
		argv[0] = (char *)"qdel";
		break;
	case BK_LSF:
		argv[0] = (char *)"bkill";
		if ((dot = strchr(id, '.')) != NULL)
			snprintf(arg, sizeof arg, "%.*s[%s]", (int)(dot - id), id,
			    dot + 1);
		break;
	default:
		snprintf(why, size, "no batch system for backend %s",
		    backend_name[b]);
		return -1;
	}
	rc = run(argv, NULL, &out, why, size);
	buf_free(&out);
	return rc;
}

static void
add(struct batch_state **v, size_t *n, const char *id, const char *state)
{
	*v = xreallocarray(*v, *n + 1, sizeof **v);
	snprintf((*v)[*n].id, sizeof (*v)[*n].id, "%s", id);
	snprintf((*v)[*n].state, sizeof (*v)[*n].state, "%s", state);
	(*n)++;
}

/* Normalise a backend's state word. */
static const char *
norm(enum backend b, const char *s)
{
	switch (b) {
	case BK_SLURM:
		if (!strcmp(s, "PENDING") || !strcmp(s, "CONFIGURING") ||
		    !strcmp(s, "REQUEUED") || !strcmp(s, "RESIZING"))
			return "pending";
		if (!strcmp(s, "RUNNING") || !strcmp(s, "COMPLETING") ||
		    !strcmp(s, "SUSPENDED") || !strcmp(s, "STOPPED"))
			return "running";
		return "error";		/* FAILED, BOOT_FAIL, ... still listed */
	case BK_SGE:
		if (strchr(s, 'E'))
			return "error";	/* Eqw: will never run */
		if (strchr(s, 'q') || strchr(s, 'h'))
			return "pending";
		return "running";
	case BK_PBS:
		if (!strcmp(s, "Q") || !strcmp(s, "H") || !strcmp(s, "W"))
			return "pending";
		if (!strcmp(s, "C") || !strcmp(s, "F"))
			return "done";
		return "running";
	case BK_LSF:
		if (!strcmp(s, "PEND") || !strcmp(s, "PSUSP"))
			return "pending";
		if (!strcmp(s, "DONE") || !strcmp(s, "EXIT"))
			return "done";
		return "running";
	default:
		return "error";
	}
}

int
batch_list(enum backend b, struct batch_state **v, size_t *n, char *why,
    size_t size)
{
	struct buf out = BUF_INIT;
	char *argv[8], *line, *save = NULL, *f[12], id[80];
	int nf, rc;

	*v = NULL;
	*n = 0;
	switch (b) {
	case BK_SLURM:
		argv[0] = (char *)"squeue";
		argv[1] = (char *)"-h";
		argv[2] = (char *)"-r";
		argv[3] = (char *)"-o";
		argv[4] = (char *)"%i %T";
		argv[5] = NULL;
		break;
	case BK_SGE:
		argv[0] = (char *)"qstat";
		argv[1] = (char *)"-g";
		argv[2] = (char *)"d";
		argv[3] = NULL;
		break;
	case BK_PBS:
		argv[0] = (char *)"qstat";
		argv[1] = NULL;
		break;
	case BK_LSF:
		argv[0] = (char *)"bjobs";
		argv[1] = (char *)"-noheader";
		argv[2] = (char *)"-a";
		argv[3] = (char *)"-o";
		argv[4] = (char *)"jobid jobindex stat";
		argv[5] = NULL;
		break;
	default:
		return 0;
	}
	if ((rc = run(argv, NULL, &out, why, size)) < 0) {
		buf_free(&out);
		return -1;
	}
	for (line = strtok_r(out.p ? out.p : (char *)"", "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;

		for (nf = 0, tok = strtok_r(line, " \t", &s2); tok && nf < 12;
		    tok = strtok_r(NULL, " \t", &s2))
			f[nf++] = tok;
		switch (b) {
		case BK_SLURM:
			if (nf >= 2)
				add(v, n, f[0], norm(b, f[1]));
			break;
		case BK_SGE:
			/* job-ID prior name user state date time [queue] slots [task] */
			if (nf < 8 || !isdigit((unsigned char)f[0][0]))
				break;
			if (isdigit((unsigned char)f[nf - 1][0]) && nf >= 9 &&
			    strchr(f[nf - 1], '-') == NULL &&
			    strcmp(f[nf - 1], f[nf - 2]) != 0 &&
			    (nf == 10 || (nf == 9 && strchr(f[4], 'q')))) {
				snprintf(id, sizeof id, "%s.%s", f[0], f[nf - 1]);
				add(v, n, id, norm(b, f[4]));
			} else
				add(v, n, f[0], norm(b, f[4]));
			break;
		case BK_PBS:
			/* Job id  Name  User  Time Use  S  Queue */
			if (nf >= 6 && isdigit((unsigned char)f[0][0])) {
				snprintf(id, sizeof id, "%.*s",
				    (int)strcspn(f[0], "."), f[0]);
				add(v, n, id, norm(b, f[4]));
			}
			break;
		case BK_LSF:
			if (nf >= 3) {
				if (strcmp(f[1], "0") != 0)
					snprintf(id, sizeof id, "%s.%s", f[0], f[1]);
				else
					snprintf(id, sizeof id, "%s", f[0]);
				add(v, n, id, norm(b, f[2]));
			}
			break;
		default:
			break;
		}
	}
	buf_free(&out);
	return 0;
}

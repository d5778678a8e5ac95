/*
 * batch.c - talking to a batch system; see batch.h.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "buf.h"
#include "command.h"
#include "hostinfo.h"
#include "jobrec.h"
#include "msg.h"

static void (*waiting)(void);
static uint64_t stop_by;	/* no command runs past it: batch_stop_by() */

void
batch_while_waiting(void (*fn)(void))
{
	waiting = fn;
}

void
batch_stop_by(uint64_t ms)
{
	stop_by = ms;
}

int
batch_out_of_time(void)
{
	return stop_by && now_ms() >= stop_by;
}

/*
 * Run argv; 0 if it exited 0, else -1 with why (and the output kept).
 * *ran (if given): -1 it was not started, 1 it was started and did not
 * end on its own (killed at its limit, or by a signal), 0 it ended.
 */
static int
run(char *const argv[], const char *input, const char *cwd, struct buf *out,
    struct buf *err, char *why, size_t size, int *ran)
{
	struct command c = COMMAND_INIT;
	uint64_t now = now_ms();

	if (ran)
		*ran = -1;
	c.argv = argv;
	c.input = input;
	c.cwd = cwd;
	c.limit_ms = BATCH_LIMIT_MS;
	if (stop_by) {
		if (now >= stop_by) {
			snprintf(why, size, "%s: not run: spoold's stop has "
			    "no time left", argv[0]);
			errno = ETIMEDOUT;
			return -1;
		}
		if (stop_by - now < c.limit_ms)
			c.limit_ms = stop_by - now;
	}
	c.tick = waiting;
	c.tick_ms = BATCH_TICK_MS;
	if (command_run(&c, out, err, why, size) < 0) {
		if (ran && errno == ETIMEDOUT)
			*ran = 1;
		return -1;
	}
	if (ran)
		*ran = WIFSIGNALED(c.status) ? 1 : 0;
	if (!command_ok(&c)) {
		command_why(&c, out, err, why, size);
		return -1;
	}
	return 0;
}

static const char *
user_name(void)
{
	static char name[64];
	struct passwd *pw;

	if (name[0] == 0) {
		if ((pw = getpwuid(getuid())) != NULL)
			snprintf(name, sizeof name, "%s", pw->pw_name);
		else
			snprintf(name, sizeof name, "%ld", (long)getuid());
	}
	return name;
}

/* The leading job number in text like "Job <123> is submitted". */
int
batch_parse_submit(enum backend b, const char *s, char *id, size_t size)
{
	const char *p = s;
	size_t n;

	(void)b;
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
    const char *name, const char *cwd, char *id, size_t idsize, char *why,
    size_t size, enum batch_doubt *doubt)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *argv[5];
	const char *input = NULL;
	int rc, ran;

	*doubt = BD_NONE;
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
		/* -N here too: Slurm's wrappers name the output files by it */
		argv[0] = (char *)"qsub";
		argv[1] = (char *)"-N";
		argv[2] = (char *)name;
		argv[3] = (char *)script_path;
		argv[4] = NULL;
		break;
	case BK_LSF:
		argv[0] = (char *)"bsub";
		argv[1] = NULL;
		input = script;	/* bsub reads #BSUB lines only from stdin */
		break;
	default:
		snprintf(why, size, "no batch system for backend %s",
		    backend_name[b]);
		return -1;
	}
	rc = run(argv, input, cwd, &out, &err, why, size, &ran);
	if (rc == 0 && batch_parse_submit(b, out.p ? out.p : "", id,
	    idsize) < 0) {
		snprintf(why, size, "%s: no job ID in its answer %s",
		    argv[0], msg_q(out.p ? out.p : ""));
		rc = -1;
	}
	/*
	 * A command that was not started, or an sbatch that could not
	 * even connect, sent nothing; any other failure may have.
	 */
	if (rc < 0 && ran > 0)
		*doubt = BD_UNREAD;
	else if (rc < 0 && ran == 0 && !(b == BK_SLURM &&
	    strstr(err.p ? err.p : "", "(connect failure)")))
		*doubt = BD_SAID_FAILED;
	buf_free(&out);
	buf_free(&err);
	return rc;
}

/* The answer of a cancel command for a job that is already gone. */
int
batch_gone_answer(enum backend b, const char *text)
{
	static const char *const words[BK_NBACKENDS][4] = {
		[BK_SLURM] = { "Invalid job id", "already completing or "
		    "completed", NULL },
		[BK_SGE] = { "does not exist", NULL },
		[BK_PBS] = { "Unknown Job Id", "Invalid job id",
		    "already completing or completed", NULL },
		[BK_LSF] = { "has already finished", "No matching job found",
		    "Illegal job ID", NULL },
	};
	int i;

	for (i = 0; words[b][i]; i++)
		if (strstr(text, words[b][i]))
			return 1;
	return 0;
}

/* A job that may go in one cancel command with others: batch_cancel. */
int
batch_cancel_together(enum backend b, const char *id)
{
	return !(b == BK_SGE && strchr(id, '.'));
}

char **
batch_cancel_argv(enum backend b, const char *const *ids, size_t n)
{
	const size_t room = BATCH_ID_MAX + 8;
	char **argv, *s;
	const char *dot;
	size_t i, a = 1;

	if (n == 0 || (b != BK_SLURM && b != BK_SGE && b != BK_PBS &&
	    b != BK_LSF)) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; n > 1 && i < n; i++)
		if (!batch_cancel_together(b, ids[i])) {
			errno = EINVAL;
			return NULL;
		}
	if ((argv = malloc((n + 4) * sizeof *argv + n * room)) == NULL)
		return NULL;
	s = (char *)(argv + n + 4);
	argv[0] = (char *)(b == BK_SLURM ? "scancel" : b == BK_LSF ?
	    "bkill" : "qdel");
	for (i = 0; i < n; i++, s += room) {
		argv[a++] = s;
		dot = strchr(ids[i], '.');
		if (b == BK_SGE && dot) {
			/* an array task: qdel JOB -t TASK (alone) */
			snprintf(s, room, "%.*s", (int)(dot - ids[i]), ids[i]);
			argv[a++] = (char *)"-t";
			argv[a++] = (char *)dot + 1;
		} else if (b == BK_LSF && dot)
			snprintf(s, room, "%.*s[%s]", (int)(dot - ids[i]),
			    ids[i], dot + 1);
		else
			snprintf(s, room, "%s", ids[i]);
	}
	argv[a] = NULL;
	return argv;
}

int
batch_cancel(enum backend b, const char *const *ids, size_t n, char *why,
    size_t size)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	char **argv;
	int rc;

	if ((argv = batch_cancel_argv(b, ids, n)) == NULL) {
		if (errno == ENOMEM)
			msg_fatal("malloc: %m");
		snprintf(why, size, "no way to cancel %s with backend %s",
		    n > 1 ? "these jobs together" : "a job", backend_name[b]);
		return -1;
	}
	rc = run(argv, NULL, NULL, &out, &err, why, size, NULL);
	/* one job the system no longer knows ended by itself meanwhile */
	if (rc < 0 && n == 1 && errno != ETIMEDOUT &&
	    (batch_gone_answer(b, err.p ? err.p : "") ||
	    batch_gone_answer(b, out.p ? out.p : "")))
		rc = 0;
	free(argv);
	buf_free(&out);
	buf_free(&err);
	return rc;
}

/* Normalise a backend's state word. */
const char *
batch_state_word(enum backend b, const char *s)
{
	switch (b) {
	case BK_SLURM:
		if (!strcmp(s, "PENDING") || !strcmp(s, "CONFIGURING") ||
		    !strcmp(s, "REQUEUED") || !strcmp(s, "REQUEUE_HOLD") ||
		    !strcmp(s, "REQUEUE_FED") || !strcmp(s, "RESIZING"))
			return "pending";
		if (!strcmp(s, "RUNNING") || !strcmp(s, "COMPLETING") ||
		    !strcmp(s, "SUSPENDED") || !strcmp(s, "STOPPED") ||
		    !strcmp(s, "SIGNALING") || !strcmp(s, "STAGE_OUT"))
			return "running";
		if (!strcmp(s, "COMPLETED") || !strcmp(s, "CANCELLED") ||
		    !strcmp(s, "TIMEOUT"))
			return "done";
		return "error";		/* FAILED, BOOT_FAIL, NODE_FAIL ... */
	case BK_SGE:
		if (strchr(s, 'E'))
			return "error";	/* Eqw: will never run */
		if (strchr(s, 'd'))
			return "running";	/* being deleted: not gone yet */
		if (strchr(s, 'q') || strchr(s, 'h'))
			return "pending";
		return "running";
	case BK_PBS:
		if (!strcmp(s, "Q") || !strcmp(s, "H") || !strcmp(s, "W") ||
		    !strcmp(s, "T"))
			return "pending";
		if (!strcmp(s, "C") || !strcmp(s, "F") || !strcmp(s, "X"))
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

static void
add(struct batch_state **v, size_t *n, const char *id, const char *state,
    const char *reason)
{
	struct batch_state *s;

	*v = xreallocarray(*v, *n + 1, sizeof **v);
	s = &(*v)[(*n)++];
	snprintf(s->id, sizeof s->id, "%s", id);
	snprintf(s->state, sizeof s->state, "%s", state);
	snprintf(s->reason, sizeof s->reason, "%s", reason ? reason : "");
}

static int
numeric(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

void
batch_parse_list(enum backend b, const char *text, struct batch_state **v,
    size_t *n)
{
	char *copy = xstrdup(text), *line, *save = NULL, *f[16], id[96];
	int nf, q;

	*v = NULL;
	*n = 0;
	for (line = strtok_r(copy, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;

		for (nf = 0, tok = strtok_r(line, " \t\r", &s2); tok && nf < 16;
		    tok = strtok_r(NULL, " \t\r", &s2))
			f[nf++] = tok;
		switch (b) {
		case BK_SLURM:
			/* "%i %T %r": 123 or 123_4, STATE, reason */
			if (nf >= 2 && isdigit((unsigned char)f[0][0]))
				add(v, n, f[0], batch_state_word(b, f[1]),
				    nf >= 3 && strcmp(f[2], "None") ? f[2] : "");
			break;
		case BK_SGE:
			/*
			 * job-ID prior name user state date time [queue]
			 * slots [ja-task-ID]: a running job has a queue
			 * (QUEUE@HOST), a pending one not.
			 */
			if (nf < 8 || !numeric(f[0]))
				break;
			q = strchr(f[7], '@') != NULL;
			if (nf >= 9 + q && numeric(f[8 + q])) {
				snprintf(id, sizeof id, "%s.%s", f[0], f[8 + q]);
				add(v, n, id, batch_state_word(b, f[4]), "");
			} else
				add(v, n, f[0], batch_state_word(b, f[4]), "");
			break;
		case BK_PBS:
			/* Job id  Name  User  Time Use  S  Queue */
			if (nf >= 6 && isdigit((unsigned char)f[0][0])) {
				snprintf(id, sizeof id, "%.*s",
				    (int)strcspn(f[0], ".["), f[0]);
				add(v, n, id, batch_state_word(b, f[4]), "");
			}
			break;
		case BK_LSF:
			/* jobid jobindex stat */
			if (nf >= 3 && numeric(f[0])) {
				if (strcmp(f[1], "0") != 0)
					snprintf(id, sizeof id, "%s.%s", f[0],
					    f[1]);
				else
					snprintf(id, sizeof id, "%s", f[0]);
				add(v, n, id, batch_state_word(b, f[2]), "");
			}
			break;
		default:
			break;
		}
	}
	free(copy);
}

/*
 * squeue for this user's jobs (of that name, unless NULL), an array's
 * elements one a line, in fmt; argv has room for 10.
 */
static void
squeue_argv(char **argv, char *user, const char *name, const char *fmt)
{
	int i = 0;

	argv[i++] = (char *)"squeue";
	argv[i++] = (char *)"-h";
	argv[i++] = (char *)"-r";
	argv[i++] = (char *)"-u";
	argv[i++] = user;
	if (name) {
		argv[i++] = (char *)"-n";
		argv[i++] = (char *)name;
	}
	argv[i++] = (char *)"-o";
	argv[i++] = (char *)fmt;
	argv[i] = NULL;
}

int
batch_list(enum backend b, struct batch_state **v, size_t *n, char *why,
    size_t size)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	char user[80], *argv[10];

	*v = NULL;
	*n = 0;
	snprintf(user, sizeof user, "%s", user_name());
	switch (b) {
	case BK_SLURM:
		squeue_argv(argv, user, NULL, "%i %T %r");
		break;
	case BK_SGE:
		argv[0] = (char *)"qstat";
		argv[1] = (char *)"-g";
		argv[2] = (char *)"d";
		argv[3] = (char *)"-u";
		argv[4] = user;
		argv[5] = NULL;
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
	if (run(argv, NULL, NULL, &out, &err, why, size, NULL) < 0) {
		/* LSF says "No job found" with a failure status */
		if (errno == ETIMEDOUT || b != BK_LSF ||
		    (!strstr(err.p ? err.p : "", "No job found") &&
		    !strstr(err.p ? err.p : "", "No unfinished job found"))) {
			buf_free(&out);
			buf_free(&err);
			return -1;
		}
	}
	batch_parse_list(b, out.p ? out.p : "", v, n);
	buf_free(&out);
	buf_free(&err);
	return 0;
}

int
batch_finds_scripts(enum backend b)
{
	return b == BK_SLURM || b == BK_SGE;
}

/* A new entry at the end of *v (*n used). */
static struct batch_script *
script_new(struct batch_script **v, size_t *n)
{
	*v = xgrowarray(*v, *n, sizeof **v);
	return &(*v)[(*n)++];
}

/* Add (id, the name of the script path p of length len in dir). */
static void
add_script(struct batch_script **v, size_t *n, const char *id, size_t il,
    const char *p, size_t len, const char *dir)
{
	size_t dl = strlen(dir);
	struct batch_script *s;

	if (len > 0 && p[len - 1] == '\r')
		len--;
	if (il == 0 || il >= BATCH_ID_MAX || len <= dl + 1 ||
	    strncmp(p, dir, dl) != 0 || p[dl] != '/' ||
	    len - dl - 1 >= BATCH_SCRIPT_MAX || memchr(p + dl + 1, '/',
	    len - dl - 1))
		return;
	s = script_new(v, n);
	snprintf(s->id, sizeof s->id, "%.*s", (int)il, id);
	snprintf(s->name, sizeof s->name, "%.*s", (int)(len - dl - 1),
	    p + dl + 1);
}

/*
 * Slurm: lines "ID COMMAND" (squeue's "%i %o": an array element's own
 * ID, the script's path as sbatch was given it, spaces and all).
 * Grid Engine: the blocks of "qstat -j NAME", each with its
 * "job_number:" and "script_file:" (the job's number only: an array's
 * tasks are taken from the listing, batch_list_scripts).  Those whose
 * script is a plain name in dir.
 */
void
batch_parse_scripts(enum backend b, const char *text, const char *dir,
    struct batch_script **v, size_t *n)
{
	const char *line, *end, *val, *num = NULL;
	size_t il, nl = 0;

	*v = NULL;
	*n = 0;
	for (line = text; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (b == BK_SLURM) {
			il = strcspn(line, " \n");
			if (line[il] == ' ')
				add_script(v, n, line, il, line + il + 1,
				    (size_t)(end - line - il - 1), dir);
			continue;
		}
		if (b != BK_SGE)
			break;
		if (*line == '=') {
			num = NULL;	/* the next job's block */
			continue;
		}
		il = strcspn(line, ":\n");
		if (line[il] != ':')
			continue;
		val = line + il + 1;
		val += strspn(val, " \t");
		if (il == 10 && strncmp(line, "job_number", 10) == 0) {
			num = val;
			nl = strspn(val, "0123456789");
		} else if (il == 11 && strncmp(line, "script_file", 11) == 0 &&
		    num)
			add_script(v, n, num, nl, val,
			    (size_t)(end - val), dir);
	}
}

/* Grid Engine: the tasks listed of the jobs numbered in *v, by script. */
static int
sge_tasks(struct batch_script **v, size_t *n, char *why, size_t size)
{
	struct batch_state *l;
	struct batch_script *out = NULL, *s;
	size_t ln, i, j, m = 0;
	char base[BATCH_ID_MAX];

	if (batch_list(BK_SGE, &l, &ln, why, size) < 0)
		return -1;
	for (i = 0; i < ln; i++) {
		jobrec_base(l[i].id, base, sizeof base);
		for (j = 0; j < *n; j++)
			if (strcmp((*v)[j].id, base) == 0)
				break;
		if (j == *n)
			continue;
		s = script_new(&out, &m);
		snprintf(s->id, sizeof s->id, "%s", l[i].id);
		snprintf(s->name, sizeof s->name, "%s", (*v)[j].name);
	}
	free(l);
	free(*v);
	*v = out;
	*n = m;
	return 0;
}

int
batch_list_scripts(enum backend b, const char *dir, const char *name,
    struct batch_script **v, size_t *n, char *why, size_t size)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	char user[80], *argv[10];
	int rc;

	*v = NULL;
	*n = 0;
	snprintf(user, sizeof user, "%s", user_name());
	switch (b) {
	case BK_SLURM:
		squeue_argv(argv, user, name, "%i %o");
		break;
	case BK_SGE:
		argv[0] = (char *)"qstat";
		argv[1] = (char *)"-j";
		argv[2] = (char *)name;
		argv[3] = NULL;
		break;
	default:
		snprintf(why, size, "%s lists no job's script",
		    backend_name[b]);
		errno = ENOTSUP;
		return -1;
	}
	rc = run(argv, NULL, NULL, &out, &err, why, size, NULL);
	/* no job of that name: "Following jobs do not exist" */
	if (rc < 0 && b == BK_SGE && errno != ETIMEDOUT &&
	    strstr(err.p ? err.p : "", "do not exist"))
		rc = 0;
	else if (rc == 0)
		batch_parse_scripts(b, out.p ? out.p : "", dir, v, n);
	buf_free(&out);
	buf_free(&err);
	if (rc == 0 && b == BK_SGE && *n > 0 && sge_tasks(v, n, why,
	    size) < 0) {
		free(*v);
		*v = NULL;
		*n = 0;
		return -1;
	}
	return rc;
}

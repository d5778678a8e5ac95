/*
 * jobscript.c - see jobscript.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jobscript.h"
#include "units.h"

/*
 * The characters a word may hold as it is, in a shell line as in a
 * directive's argument; anything else (a space: a spool under
 * "/home/me/my spool") would split it, or start a comment (the shell's
 * and Slurm's "#"): such a word is quoted, in single quotes for the
 * shell (shell_quote), in double quotes in a directive (directive_path),
 * which sbatch, both qsubs and bsub read as one argument.
 */
#define PLAIN_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789_-+=/.,:@%"

/* shell_quote of the n bytes at s */
static void
quote_n(struct buf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] && strchr(PLAIN_CHARS, s[i]); i++)
		;
	if (n && i == n) {
		buf_append(out, s, n);
		return;
	}
	buf_putc(out, '\'');
	for (i = 0; i < n; i++)
		if (s[i] == '\'')
			buf_puts(out, "'\\''");
		else
			buf_putc(out, s[i]);
	buf_putc(out, '\'');
}

void
shell_quote(struct buf *out, const char *s)
{
	quote_n(out, s, strlen(s));
}

/*
 * The length of the variable reference "$NAME" or "${NAME}" at s (0 if
 * there is none), its name's start and length in *name and *len.
 */
static size_t
var_at(const char *s, const char **name, size_t *len)
{
	const char *p = s + 1 + (s[1] == '{');
	size_t n = 0;

	if (s[0] != '$' || !(p[0] == '_' || (p[0] >= 'A' && p[0] <= 'Z') ||
	    (p[0] >= 'a' && p[0] <= 'z')))
		return 0;
	while (p[n] == '_' || (p[n] >= 'A' && p[n] <= 'Z') ||
	    (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9'))
		n++;
	if (s[1] == '{' && p[n] != '}')
		return 0;
	*name = p;
	*len = n;
	return (size_t)(p - s) + n + (s[1] == '{');
}

/*
 * A path as dask-jobqueue users write local-directory ("$TMPDIR",
 * "/scratch/$USER"): dask puts it unquoted on the worker's command
 * line, so the job's shell expands it on the node.  Here $NAME, ${NAME}
 * and a leading "~" are expanded there, and nothing else is: no $(...),
 * backquotes, globs or splitting.  A variable unset or empty there
 * fails the job, with its name, before the worker starts.  Returns
 * whether anything is expanded.
 */
static int
shell_expand_vars(struct buf *out, const char *s)
{
	const char *lit, *name;
	size_t n, len;
	int any = 0;

	if (s[0] == '~' && (s[1] == '/' || s[1] == '\0')) {
		buf_puts(out, "\"${HOME:?not set on this node, needed by "
		    "local-directory}\"");
		s++;
		any = 1;
	}
	for (lit = s; *s; )
		if ((n = var_at(s, &name, &len)) == 0)
			s++;
		else {
			if (s > lit)
				quote_n(out, lit, (size_t)(s - lit));
			buf_printf(out, "\"${%.*s:?not set on this node, "
			    "needed by local-directory}\"", (int)len, name);
			s += n;
			lit = s;
			any = 1;
		}
	if (s > lit || !any)
		quote_n(out, lit, (size_t)(s - lit));
	return any;
}

static void
hms(char *out, size_t size, uint64_t s)
{
	snprintf(out, size, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, s / 3600,
	    s / 60 % 60, s % 60);
}

/*
 * A directive line has at most DIRECTIVE_MAX - 1 characters before
 * its newline.  A longer one
 * is refused (jobscript_render fails), never cut: a cut "-p QUEUE" or
 * "-o PATH" is another request, and a job-extra line cut before its
 * newline would run into the next line.
 */
#define DIRECTIVE_MAX	1024

struct hdr {
	struct buf lines;
	const struct kind *k;
	const char *prefix;	/* "#SBATCH" ... */
	char too_long[64];	/* the start of the first one too long */
	size_t too_long_n;	/* and its length */
};

static void
note_too_long(struct hdr *h, const char *line, size_t n)
{
	if (h->too_long_n == 0) {
		snprintf(h->too_long, sizeof h->too_long, "%.60s", line);
		h->too_long_n = n;
	}
}

static int
skipped(const struct kind *k, const char *line)
{
	size_t i;

	for (i = 0; k->skip && k->skip[i]; i++)
		if (k->skip[i][0] && strstr(line, k->skip[i]))
			return 1;
	return 0;
}

/* A generated directive: dropped if it matches job-directives-skip. */
static void
directive(struct hdr *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
directive(struct hdr *h, const char *fmt, ...)
{
	char line[DIRECTIVE_MAX];
	va_list ap;
	int n, m;

	n = snprintf(line, sizeof line, "%s ", h->prefix);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)n + (size_t)m >= sizeof line) {
		note_too_long(h, line, (size_t)n + (size_t)(m < 0 ? 0 : m));
		return;
	}
	if (!skipped(h->k, line))
		buf_printf(&h->lines, "%s\n", line);
}

/* OPT DIR/NAMETAIL as a directive, the path quoted where it must be. */
static void
directive_path(struct hdr *h, const char *opt, const char *dir,
    const char *name, const char *tail)
{
	struct buf p = BUF_INIT;

	buf_printf(&p, "%s/%s%s", dir, name, tail);
	if (strspn(p.p, PLAIN_CHARS) == p.len)
		directive(h, "%s %s", opt, p.p);
	else
		directive(h, "%s \"%s\"", opt, p.p);
	buf_free(&p);
}

/*
 * What no quoting carries through every batch system's reading of its
 * directives (Slurm takes a backslash as an escape, Grid Engine does
 * not; a line break ends the directive and makes the rest shell code).
 */
static int
path_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' ||
		    *s == '\\')
			return 0;
	return 1;
}

static void
slurm_header(struct hdr *h, const struct kind *k, const char *logdir,
    unsigned array_n)
{
	const char *name = k->job_name ? k->job_name : "ckworker";
	char t[32];

	directive(h, "-J %s", name);
	if (k->queue)
		directive(h, "-p %s", k->queue);
	if (k->account)
		directive(h, "-A %s", k->account);
	directive_path(h, "-o", logdir, name, array_n > 1 ? "-%A_%a.out" :
	    "-%j.out");
	directive_path(h, "-e", logdir, name, array_n > 1 ? "-%A_%a.err" :
	    "-%j.err");
	directive(h, "-n 1");
	directive(h, "--cpus-per-task=%u", k->cores);
	if (k->memory)
		directive(h, "--mem=%" PRIu64 "M", units_mib_up(k->memory));
	if (k->walltime) {
		hms(t, sizeof t, k->walltime);
		directive(h, "-t %s", t);
	}
	if (k->gpus)
		directive(h, "--gres=gpu:%u", k->gpus);
	directive(h, "--export=%s", k->export_env ? "ALL" : "NONE");
	if (array_n > 1)
		directive(h, "--array=1-%u", array_n);
}

static void
sge_header(struct hdr *h, const struct kind *k, const char *logdir,
    unsigned array_n)
{
	char t[32];

	directive(h, "-N %s", k->job_name ? k->job_name : "ckworker");
	if (k->queue)
		directive(h, "-q %s", k->queue);
	if (k->account)
		directive(h, "-P %s", k->account);
	if (k->pe)
		directive(h, "-pe %s %u", k->pe, k->cores);
	if (k->resource_spec)
		directive(h, "-l %s", k->resource_spec);
	if (k->walltime) {
		hms(t, sizeof t, k->walltime);
		directive(h, "-l h_rt=%s", t);
	}
	directive_path(h, "-o", logdir, "", "");
	directive(h, "-j y");
	directive(h, "-cwd");
	if (k->export_env)
		directive(h, "-V");
	if (array_n > 1)
		directive(h, "-t 1-%u", array_n);
}

static void
pbs_header(struct hdr *h, const struct kind *k, const char *logdir,
    unsigned array_n)
{
	char t[32];

	directive(h, "-N %s", k->job_name ? k->job_name : "ckworker");
	if (k->queue)
		directive(h, "-q %s", k->queue);
	if (k->account)
		directive(h, "-A %s", k->account);
	if (k->resource_spec)
		directive(h, "-l %s", k->resource_spec);
	else {
		struct buf sel = BUF_INIT;

		buf_printf(&sel, "select=1:ncpus=%u", k->cores);
		if (k->memory)
			buf_printf(&sel, ":mem=%" PRIu64 "mb",
			    units_mib_up(k->memory));
		if (k->gpus)
			buf_printf(&sel, ":ngpus=%u", k->gpus);
		directive(h, "-l %s", sel.p);
		buf_free(&sel);
	}
	if (k->walltime) {
		hms(t, sizeof t, k->walltime);
		directive(h, "-l walltime=%s", t);
	}
	directive_path(h, "-o", logdir, "", "");
	directive(h, "-j oe");
	if (k->export_env)
		directive(h, "-V");
	if (array_n > 1)
		directive(h, "-J 1-%u", array_n);
}

static void
lsf_header(struct hdr *h, const struct kind *k, const char *logdir,
    unsigned array_n)
{
	const char *name = k->job_name ? k->job_name : "ckworker";

	if (array_n > 1)
		directive(h, "-J \"%s[1-%u]\"", name, array_n);
	else
		directive(h, "-J %s", name);
	if (k->queue)
		directive(h, "-q %s", k->queue);
	if (k->account)
		directive(h, "-P %s", k->account);
	directive_path(h, "-o", logdir, name, array_n > 1 ? "-%J.%I.out" :
	    "-%J.out");
	directive_path(h, "-e", logdir, name, array_n > 1 ? "-%J.%I.err" :
	    "-%J.err");
	directive(h, "-n %u", k->cores);
	directive(h, "-R \"span[hosts=1]\"");
	if (k->memory) {
		directive(h, "-M %" PRIu64, units_mib_up(k->memory));
		directive(h, "-R \"rusage[mem=%" PRIu64 "]\"",
		    units_mib_up(k->memory));
	}
	if (k->resource_spec)
		directive(h, "-R \"%s\"", k->resource_spec);
	if (k->walltime)
		directive(h, "-W %02" PRIu64 ":%02" PRIu64,
		    (k->walltime + 59) / 3600, (k->walltime + 59) / 60 % 60);
	if (k->gpus)
		directive(h, "-gpu \"num=%u\"", k->gpus);
	if (!k->export_env)
		directive(h, "-env \"none\"");
}

/* Shell code setting $job to this job's ID, from the batch system. */
static const char *const job_id_code[BK_NBACKENDS] = {
	[BK_LOCAL] = "job=local.$$",
	[BK_SLURM] = "job=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_"
	    "${SLURM_ARRAY_TASK_ID}}\njob=${job:-$SLURM_JOB_ID}",
	[BK_SGE] = "job=$JOB_ID\ncase ${SGE_TASK_ID:-undefined} in "
	    "undefined) ;; *) job=$JOB_ID.$SGE_TASK_ID ;; esac",
	/* Debian's PBS wrappers over Slurm set only SLURM_* variables */
	[BK_PBS] = "job=${PBS_JOBID:-$SLURM_JOB_ID}\n"
	    "job=${job%%.*}${PBS_ARRAY_INDEX:+.$PBS_ARRAY_INDEX}",
	[BK_LSF] = "job=$LSB_JOBID\ncase ${LSB_JOBINDEX:-0} in 0) ;; "
	    "*) job=$LSB_JOBID.$LSB_JOBINDEX ;; esac",
};

int
jobscript_render(struct buf *out, const struct kind *k, const char *spool,
    const char *worker, unsigned array_n, char *why, size_t size)
{
	static const char *const prefix[BK_NBACKENDS] = {
		"#", "#SBATCH", "#$", "#PBS", "#BSUB"
	};
	struct buf logdir = BUF_INIT;
	struct hdr h;
	char v[64];
	size_t i;

	if (k->backend == BK_LOCAL && array_n > 1) {
		snprintf(why, size, "the local backend has no job arrays");
		return -1;
	}
	memset(&h, 0, sizeof h);
	h.k = k;
	h.prefix = prefix[k->backend];
	jobscript_log_dir(k, spool, &logdir);
	if (k->backend != BK_LOCAL && !path_ok(logdir.p)) {
		snprintf(why, size, "the log directory \"%.200s\" has a "
		    "double quote, a backslash or a control character, which "
		    "a %s directive cannot hold (set log-directory)",
		    logdir.p, backend_name[k->backend]);
		buf_free(&logdir);
		return -1;
	}
	switch (k->backend) {
	case BK_SLURM: slurm_header(&h, k, logdir.p, array_n); break;
	case BK_SGE: sge_header(&h, k, logdir.p, array_n); break;
	case BK_PBS: pbs_header(&h, k, logdir.p, array_n); break;
	case BK_LSF: lsf_header(&h, k, logdir.p, array_n); break;
	default: break;
	}
	for (i = 0; k->extra && k->extra[i]; i++)
		if (strlen(h.prefix) + 1 + strlen(k->extra[i]) >=
		    DIRECTIVE_MAX) {
			char line[64];

			snprintf(line, sizeof line, "%s %s", h.prefix,
			    k->extra[i]);
			note_too_long(&h, line, strlen(h.prefix) + 1 +
			    strlen(k->extra[i]));
		}
	if (h.too_long_n) {
		snprintf(why, size, "the directive \"%.40s...\" would be %zu "
		    "characters, more than the %d a directive line may have "
		    "(shorten the value in spool.yaml)", h.too_long,
		    h.too_long_n, DIRECTIVE_MAX - 1);
		buf_free(&h.lines);
		buf_free(&logdir);
		return -1;
	}
	buf_printf(out, "%s\n", k->shebang ? k->shebang : "#!/usr/bin/env bash");
	buf_printf(out, "# ckspool worker job, kind \"%s\", backend %s\n",
	    k->name, backend_name[k->backend]);
	if (h.lines.len)
		buf_append(out, h.lines.p, h.lines.len);
	for (i = 0; k->extra && k->extra[i]; i++) {
		char line[DIRECTIVE_MAX + 1];	/* it fits: see above */

		/* the same line twice is noise ("-cwd" from dask's job-extra) */
		snprintf(line, sizeof line, "%s %s\n", h.prefix, k->extra[i]);
		if (h.lines.p == NULL || strstr(h.lines.p, line) == NULL)
			buf_puts(out, line);
	}
	buf_putc(out, '\n');
	if (k->walltime)
		buf_puts(out, "ckspool_t0=$(date +%s)\n");
	for (i = 0; k->prologue && k->prologue[i]; i++)
		buf_printf(out, "%s\n", k->prologue[i]);
	for (i = 0; k->env && k->env[i]; i++) {
		const char *eq = strchr(k->env[i], '=');

		buf_printf(out, "export %.*s=", (int)(eq - k->env[i]), k->env[i]);
		shell_quote(out, eq + 1);
		buf_putc(out, '\n');
	}
	if (k->local_dir) {
		/* a job with no usable local directory fails, loudly (its log) */
		buf_puts(out, "export TMPDIR=");
		if (shell_expand_vars(out, k->local_dir)) {
			buf_puts(out, "\ncase $TMPDIR in /*) ;; *) printf "
			    "'local-directory %s is \"%s\" here, not an absolute "
			    "path\\n' ");
			shell_quote(out, k->local_dir);
			buf_puts(out, " \"$TMPDIR\" >&2; exit 1;; esac");
		}
		buf_puts(out, "\nmkdir -p \"$TMPDIR\" || exit 1\n");
	}
	buf_printf(out, "%s\n", job_id_code[k->backend]);
	buf_puts(out, "job=$(printf %s \"$job\" | tr -c 'A-Za-z0-9_.:+-' .)\n");
	buf_puts(out, "exec ");
	shell_quote(out, worker);
	buf_puts(out, " -S ");
	shell_quote(out, spool);
	buf_printf(out, " --name %s@\"$job\" --job \"$job\" --cores %u",
	    k->name, k->cores);
	if (k->processes > 1)
		buf_printf(out, " --processes %u", k->processes);
	if (k->memory)
		buf_printf(out, " --memory %s", units_format_size(k->memory, v,
		    sizeof v));
	if (k->gpus)
		buf_printf(out, " --gpus %u", k->gpus);
	for (i = 0; i < LIMIT_N; i++)
		if (k->limit[i])
			buf_printf(out, " --%s %s", limit_key[i], k->limit[i]);
	if (k->walltime)	/* what is left of it after the prologue */
		buf_printf(out, " --walltime $((%" PRIu64 " - ($(date +%%s) - "
		    "ckspool_t0)))", k->walltime);
	buf_printf(out, " --death-timeout %" PRIu64 "ms --idle-timeout %"
	    PRIu64 "ms\n", k->death_timeout_ms, k->idle_timeout_ms);
	buf_free(&h.lines);
	buf_free(&logdir);
	return 0;
}

void
jobscript_log_dir(const struct kind *k, const char *spool, struct buf *out)
{
	buf_reset(out);
	if (k->log_dir)
		buf_puts(out, k->log_dir);
	else
		buf_printf(out, "%s/log", spool);
}

int
jobscript_log_file(const struct kind *k, const char *spool, const char *id,
    int which, char *out, size_t size)
{
	const char *name = k->job_name ? k->job_name : "ckworker";
	struct buf dir = BUF_INIT;
	int n = -1;

	jobscript_log_dir(k, spool, &dir);
	switch (k->backend) {
	case BK_SLURM:
	case BK_LSF:
		n = snprintf(out, size, "%s/%s-%s.%s", dir.p, name, id,
		    which == 0 ? "err" : "out");
		break;
	case BK_SGE:	/* -j y: one file */
		if (which == 0)
			n = snprintf(out, size, "%s/%s.o%s", dir.p, name, id);
		break;
	case BK_PBS:	/* joined (-j oe) on a real server, not by wrappers */
		n = snprintf(out, size, "%s/%s.%c%s", dir.p, name,
		    which == 0 ? 'e' : 'o', id);
		break;
	case BK_LOCAL:
		if (which == 0)
			n = snprintf(out, size, "%s/%s-%s.log", dir.p, name, id);
		break;
	default:
		break;
	}
	buf_free(&dir);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

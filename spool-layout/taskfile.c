/*
 * taskfile.c - YAML and #SPOOL task files; see taskfile.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "journal.h"
#include "msg.h"
#include "taskfile.h"
#include "yamlx.h"

static int
terr(struct taskfile_err *e, int line, int col, const char *fmt, ...)
{
	va_list ap;

	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

void
taskfile_err_format(const struct taskfile_err *e, char *out, size_t size)
{
	if (e->line && e->col)
		snprintf(out, size, "line %d, column %d: %s", e->line, e->col,
		    e->msg);
	else if (e->line)
		snprintf(out, size, "line %d: %s", e->line, e->msg);
	else
		snprintf(out, size, "%s", e->msg);
}

/* ---- #SPOOL scripts ---- */

#define WORD_LEN	4095	/* characters of a word, at most */
#define WORD_MAX	(WORD_LEN + 1)
#define STR_(x)		#x
#define STR(x)		STR_(x)

/* next_word's two failures, each with its own reason (word_why) */
#define WORD_QUOTE	(-1)
#define WORD_LONG	(-2)

/*
 * Next shell-like word from *pp into w; 1 if a word, 0 at end, or
 * WORD_QUOTE (a quote not closed on the line) or WORD_LONG (longer
 * than size - 1 characters), with what was read of it in w.
 */
static int
next_word(const char **pp, char *w, size_t size)
{
	const char *p = *pp;
	size_t n = 0;
	char q = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == 0 || *p == '\n')
		return 0;
	for (; *p && *p != '\n'; p++) {
		if (q) {
			if (*p == q) {
				q = 0;
				continue;
			}
			if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
			continue;
		} else if (*p == ' ' || *p == '\t') {
			break;
		} else if (*p == '\\' && p[1] && p[1] != '\n') {
			p++;
		}
		if (n + 1 >= size) {
			w[n] = 0;
			return WORD_LONG;
		}
		w[n++] = *p;
	}
	w[n] = 0;
	if (q)
		return WORD_QUOTE;
	*pp = p;
	return 1;
}

/*
 * Why next_word failed.  A long --after list is the word that meets
 * the bound: the option may be given again, and the lists add up.
 */
static const char *
word_why(int rc)
{
	return rc == WORD_LONG ? "word too long (at most " STR(WORD_LEN)
	    " characters; an option such as --after may be given more than "
	    "once)" : "unbalanced quote";
}

/*
 * Names the refused word in badword: the first optlen bytes of opt, and
 * val after "=" if there is one.  One longer than badsize is cut and
 * ends in "...", so that a message does not pass a part for the whole.
 */
static void
name_word(char *badword, size_t badsize, size_t optlen, const char *opt,
    const char *val)
{
	int n = snprintf(badword, badsize, "%.*s%s%s", (int)optlen, opt,
	    val ? "=" : "", val ? val : "");

	if (n >= 0 && (size_t)n >= badsize && badsize > 3)
		memcpy(badword + badsize - 4, "...", 4);
}

int
taskfile_apply_words(struct task_spec *t, const char *line, const char **why,
    char *badword, size_t badsize)
{
	char *w = xmalloc(WORD_MAX), *v = xmalloc(WORD_MAX), *eq;
	const char *p = line;
	int rc, ret = -1;

	badword[0] = 0;
	while ((rc = next_word(&p, w, WORD_MAX)) > 0) {
		name_word(badword, badsize, strlen(w), w, NULL);
		if (strncmp(w, "--", 2) != 0 || w[2] == 0) {
			*why = "expected an option like --cores=4";
			goto out;
		}
		if ((eq = strchr(w, '=')) != NULL) {
			*eq = 0;
			snprintf(v, WORD_MAX, "%s", eq + 1);
		} else {
			if (!task_is_option(w + 2)) {
				*why = "unknown option";
				goto out;
			}
			if ((rc = next_word(&p, v, WORD_MAX)) <= 0) {
				*why = rc < 0 ? word_why(rc) :
				    "option needs a value";
				goto out;
			}
			/* its value named too, as "--opt=value" names it */
			name_word(badword, badsize, strlen(w), w, v);
		}
		if (!task_is_option(w + 2)) {
			*why = "unknown option";
			goto out;
		}
		if (task_set(t, w + 2, v, why) < 0)
			goto out;
	}
	if (rc < 0) {
		/* the word that failed is named, not the one before it:
		 * its option, what it has up to "=" */
		name_word(badword, badsize, strcspn(w, "="), w, NULL);
		*why = word_why(rc);
		goto out;
	}
	badword[0] = 0;
	ret = 0;
out:
	free(w);
	free(v);
	return ret;
}

static int
blank(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/*
 * The refusal of a #SPOOL line, naming the word it failed at (if any).
 * The word is the user's: its option and its value are each shown as
 * journal_q() shows a value, bare if a plain word, else quoted and
 * escaped, so that a newline or a terminal escape in it reaches no log
 * or terminal raw (--cores=-1, "--\x1b[31mx", --env="A=x y").
 */
static int
bad_word(struct taskfile_err *e, int lineno, char *bad, const char *why)
{
	char *eq = strchr(bad, '=');

	if (bad[0] == 0)
		return terr(e, lineno, 0, "#SPOOL: %s", why);
	if (eq == NULL)
		return terr(e, lineno, 0, "#SPOOL %s: %s", journal_q(bad), why);
	*eq = 0;
	return terr(e, lineno, 0, "#SPOOL %s=%s: %s", journal_q(bad),
	    journal_q(eq + 1), why);
}

static int
parse_script(const char *data, size_t len, struct task_spec *t,
    struct taskfile_err *e)
{
	const char *p = data, *end = data + len, *nl;
	char *line, bad[128];
	const char *why;
	int lineno = 0;

	for (; p < end; p = nl + 1) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		n = (size_t)(nl - p);
		lineno++;
		if (lineno == 1)
			continue;	/* the shebang */
		if (n == 0 || blank(p, n))
			continue;
		if (*p != '#')
			break;		/* directives end at the first command */
		if (n < 6 || strncmp(p, "#SPOOL", 6) != 0)
			continue;
		if (n > 6 && p[6] != ' ' && p[6] != '\t')
			continue;	/* "#SPOOLX": a comment */
		line = xstrndup(p + 6, n - 6);
		if (taskfile_apply_words(t, line, &why, bad, sizeof bad) < 0) {
			free(line);
			return bad_word(e, lineno, bad, why);
		}
		free(line);
	}
	t->script = xstrndup(data, len);
	return 0;
}

/* ---- YAML ---- */

static int
want_scalar(const struct ynode *n, const char *key, struct taskfile_err *e)
{
	if (n->type != Y_SCALAR || yamlx_is_null(n))
		return terr(e, n->line, n->col, "%s must be a single value, "
		    "not %s", key, yamlx_is_null(n) ? "empty" :
		    yamlx_type_name(n->type));
	return 0;
}

static int
set_scalar(struct task_spec *t, const char *key, const struct ynode *n,
    struct taskfile_err *e)
{
	const char *why;

	if (want_scalar(n, key, e) < 0)
		return -1;
	if (task_set(t, key, n->str, &why) < 0)
		return terr(e, n->line, n->col, "%s: %s: %s", key, why,
		    msg_q(n->str));
	return 0;
}

static int
set_command(struct task_spec *t, const struct ynode *n, struct taskfile_err *e)
{
	size_t i;

	if (n->type == Y_SCALAR && !yamlx_is_null(n)) {
		t->shell = xstrdup(n->str);
		return 0;
	}
	if (n->type != Y_SEQ || n->n == 0)
		return terr(e, n->line, n->col, "command must be a list of "
		    "words or a shell string");
	if (n->n > TASK_ARGV_MAX)
		return terr(e, n->line, n->col, "command has more than %d "
		    "words", TASK_ARGV_MAX);
	t->argv = xcalloc(n->n + 1, sizeof *t->argv);
	for (i = 0; i < n->n; i++) {
		const struct ynode *w = n->kids[i];

		if (w->type != Y_SCALAR)
			return terr(e, w->line, w->col, "command words must be "
			    "strings, not %s", yamlx_type_name(w->type));
		t->argv[i] = xstrdup(w->str);
	}
	return 0;
}

static int
set_env(struct task_spec *t, const struct ynode *n, struct taskfile_err *e)
{
	const char *why;
	size_t i;
	char *kv;
	int rc;

	if (n->type == Y_MAP) {
		for (i = 0; i < n->n; i++) {
			const struct ynode *k = n->kids[2 * i];
			const struct ynode *v = n->kids[2 * i + 1];

			if (v->type != Y_SCALAR)
				return terr(e, v->line, v->col, "env value of %s "
				    "must be a string", journal_q(k->str));
			kv = xasprintf("%s=%s", k->str,
			    yamlx_is_null(v) ? "" : v->str);
			rc = task_set(t, "env", kv, &why);
			free(kv);
			if (rc < 0)
				return terr(e, k->line, k->col, "env %s: %s",
				    journal_q(k->str), why);
		}
		return 0;
	}
	if (n->type == Y_SEQ) {
		for (i = 0; i < n->n; i++) {
			const struct ynode *v = n->kids[i];

			if (v->type != Y_SCALAR)
				return terr(e, v->line, v->col, "env items must "
				    "be NAME=VALUE strings");
			if (task_set(t, "env", v->str, &why) < 0)
				return terr(e, v->line, v->col, "env: %s", why);
		}
		return 0;
	}
	return terr(e, n->line, n->col, "env must be a mapping of NAME: value");
}

/*
 * The tasks before the one being parsed in a list (NULL: a file of
 * one), and an index of their names, so that a word of after costs
 * one lookup, not a walk of the list: a list of 10,000 tasks each
 * after the one before took 0.33 s more than one without after.
 */
struct before {
	const struct task_spec *t;
	size_t	n;		/* tasks before */
	uint32_t *slot;		/* by name hash: 1 + the last task of a name */
	uint32_t *prev;		/* [j]: 1 + the task before j of its name */
	uint32_t *used;		/* [last of a name]: 1 + the task it is after */
	size_t	mask;
};

static void
before_init(struct before *b, const struct task_spec *t, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	b->t = t;
	b->n = 0;
	b->slot = xcalloc(cap, sizeof *b->slot);
	b->prev = xcalloc(n, sizeof *b->prev);
	b->used = xcalloc(n, sizeof *b->used);
	b->mask = cap - 1;
}

static void
before_free(struct before *b)
{
	free(b->slot);
	free(b->prev);
	free(b->used);
}

/* the slot of name: the one that holds it, or the empty one it goes in */
static size_t
name_slot(const struct before *b, const char *name)
{
	size_t k;

	for (k = fnv1a32(name, strlen(name)) & b->mask; b->slot[k] &&
	    strcmp(b->t[b->slot[k] - 1].name, name) != 0; k = (k + 1) & b->mask)
		;
	return k;
}

/* the task just parsed (b->n) is before the next ones */
static void
before_add(struct before *b)
{
	size_t k;

	if (b->t[b->n].name) {
		k = name_slot(b, b->t[b->n].name);
		b->prev[b->n] = b->slot[k];
		b->slot[k] = (uint32_t)b->n + 1;
	}
	b->n++;
}

/* a word of after that is IDs ("12" or "12,13"), not a task's name */
static int
is_ids(const char *s)
{
	return s[0] != 0 && strspn(s, "0123456789, ") == strlen(s);
}

/*
 * One word of after: IDs, or in a list the name of the tasks before
 * this one that are named so, each a dependency (their indexes in
 * t->after_item, in the list's order, until the list's IDs are
 * claimed).  A name said again adds nothing: the tasks of one name are
 * added together, and no task has two names.
 */
static int
after_word(struct task_spec *t, const struct ynode *v, struct before *b,
    struct taskfile_err *e)
{
	uint32_t found[TASK_AFTER_MAX], j, last;
	const char *why;
	size_t n = 0;

	if (want_scalar(v, "after", e) < 0)
		return -1;
	if (yamlx_is_null(v) || is_ids(v->str))
		return set_scalar(t, "after", v, e);
	if (b == NULL)
		return terr(e, v->line, v->col, "after: %s is not a task ID "
		    "(the tasks of a list may name the tasks before them; a "
		    "file of one task gives IDs)", msg_q(v->str));
	last = b->slot[name_slot(b, v->str)];
	if (last == 0)
		return terr(e, v->line, v->col, "after: no task before this one "
		    "in the list is named %s (a task may depend on the tasks "
		    "before it, by name, or on IDs)", msg_q(v->str));
	if (b->used[last - 1] == b->n + 1)
		return 0;
	b->used[last - 1] = (uint32_t)b->n + 1;
	for (j = last; j; j = b->prev[j - 1]) {
		if (n == TASK_AFTER_MAX)
			return terr(e, v->line, v->col, "after: too many "
			    "dependencies (at most 1024)");
		found[n++] = j - 1;
	}
	while (n > 0)
		if (task_add_item(t, found[--n], &why) < 0)
			return terr(e, v->line, v->col, "after: %s", why);
	return 0;
}

static int
set_after(struct task_spec *t, const struct ynode *n, struct before *b,
    struct taskfile_err *e)
{
	size_t i;

	if (n->type == Y_SCALAR)
		return after_word(t, n, b, e);
	if (n->type != Y_SEQ)
		return terr(e, n->line, n->col, "after must be a list of "
		    "task IDs%s", b ? " or of names of the tasks before" : "");
	for (i = 0; i < n->n; i++)
		if (after_word(t, n->kids[i], b, e) < 0)
			return -1;
	return 0;
}

static const char *const resource_keys[] = {
	"cores", "memory", "gpus", "walltime", NULL
};

/* k's index in resource_keys, or -1 */
static int
resource_index(const char *k)
{
	int i;

	for (i = 0; resource_keys[i]; i++)
		if (strcmp(resource_keys[i], k) == 0)
			return i;
	return -1;
}

/*
 * A resource given at the top and again under "resources" (or the
 * other way round) is refused: which one holds would be the file's
 * order, unsaid.  seen[] holds where each was given.
 */
static int
set_resource(struct task_spec *t, const struct ynode *k, const struct ynode *v,
    const struct ynode **seen, struct taskfile_err *e)
{
	int r = resource_index(k->str);

	if (seen[r])
		return terr(e, k->line, k->col, "%s given twice (line %d and "
		    "here)", k->str, seen[r]->line);
	seen[r] = k;
	return set_scalar(t, k->str, v, e);
}

/* The keys of one task's mapping into t (b: the tasks before it in a list). */
static int
task_of_map(const struct ynode *root, struct task_spec *t,
    struct before *b, struct taskfile_err *e)
{
	const struct ynode *seen[sizeof resource_keys / sizeof *resource_keys];
	size_t i, j;

	memset(seen, 0, sizeof seen);
	for (i = 0; i < root->n; i++) {
		const struct ynode *k = root->kids[2 * i];
		const struct ynode *v = root->kids[2 * i + 1];
		const char *key = k->str;

		if (strcmp(key, "command") == 0) {
			if (set_command(t, v, e) < 0)
				return -1;
		} else if (strcmp(key, "script") == 0) {
			if (want_scalar(v, key, e) < 0)
				return -1;
			t->script = xstrdup(v->str);
		} else if (strcmp(key, "env") == 0) {
			if (set_env(t, v, e) < 0)
				return -1;
		} else if (strcmp(key, "after") == 0) {
			if (set_after(t, v, b, e) < 0)
				return -1;
		} else if (strcmp(key, "resources") == 0) {
			if (v->type != Y_MAP)
				return terr(e, v->line, v->col, "resources must "
				    "be a mapping (cores, memory, gpus, "
				    "walltime)");
			for (j = 0; j < v->n; j++) {
				const struct ynode *rk = v->kids[2 * j];

				if (resource_index(rk->str) < 0)
					return terr(e, rk->line, rk->col,
					    "unknown resource %s (known: "
					    "cores, memory, gpus, walltime)",
					    msg_q(rk->str));
				if (set_resource(t, rk, v->kids[2 * j + 1],
				    seen, e) < 0)
					return -1;
			}
		} else if (resource_index(key) >= 0) {
			if (set_resource(t, k, v, seen, e) < 0)
				return -1;
		} else if (task_is_option(key)) {
			if (set_scalar(t, key, v, e) < 0)
				return -1;
		} else {
			return terr(e, k->line, k->col, "unknown key %s (known: "
			    "command, script, name, cwd, env, cores, memory, "
			    "gpus, walltime, resources, after, priority, "
			    "retries)", msg_q(key));
		}
	}
	return 0;
}

/* The one task of a parsed YAML file (root: NULL for an empty one). */
static int
task_of_root(const struct ynode *root, struct task_spec *t,
    struct taskfile_err *e)
{
	if (root == NULL)
		return terr(e, 0, 0, "empty task file");
	if (root->type == Y_SCALAR)
		return terr(e, root->line, root->col, "not a task: expected a "
		    "YAML mapping (command: ...) or a script starting with #!");
	if (root->type == Y_SEQ)
		return terr(e, root->line, root->col, "a list of tasks is "
		    "taken by spool submit and a spoolfs mount's submit/, not "
		    "here: one task file a task");
	if (root->type != Y_MAP)
		return terr(e, root->line, root->col, "a task file must be a "
		    "YAML mapping, not %s", yamlx_type_name(root->type));
	return task_of_map(root, t, NULL, e);
}

/* "#!": a script, with #SPOOL lines. */
static int
is_script(const char *data, size_t len)
{
	return len >= 2 && data[0] == '#' && data[1] == '!';
}

/* A "#!" script's task, its #SPOOL lines read. */
static int
task_of_script(const char *data, size_t len, struct task_spec *t,
    struct taskfile_err *e)
{
	/*
	 * A script with DOS line breaks names an interpreter ending in a
	 * carriage return, which no exec finds, and its #SPOOL values
	 * would end in one, unseen in an error message: refused, as
	 * sbatch does, by what it is.  (YAML may have them: libyaml reads
	 * them.)
	 */
	const char *cr = memmem(data, len, "\r\n", 2), *p;
	int line = 1;

	if (cr) {
		for (p = data; p < cr; p++)
			line += *p == '\n';
		return terr(e, line, 0, "a DOS line break (carriage return "
		    "before the newline): convert the file with dos2unix");
	}
	return parse_script(data, len, t, e);
}

/*
 * What every task file must be before it is parsed at all, then its
 * YAML parsed unless it is a script: 0 with *root (NULL for a script
 * or a file with no YAML content), or -1.
 */
static int
file_open(const char *data, size_t len, struct ynode **root,
    struct taskfile_err *e)
{
	struct yamlx_err ye;

	*root = NULL;
	memset(e, 0, sizeof *e);
	if (len > TASK_FILE_MAX)
		return terr(e, 0, 0, "file larger than %u bytes", TASK_FILE_MAX);
	if (memchr(data, 0, len))
		return terr(e, 0, 0, "binary file (contains NUL bytes)");
	if (!is_script(data, len) && yamlx_parse(data, len, root, &ye) < 0)
		return terr(e, ye.line, ye.col, "%s", ye.msg);
	return 0;
}

/* The one task of a file that file_open() gave root for, validated. */
static int
task_of_file(const char *data, size_t len, const struct ynode *root,
    struct task_spec *t, struct taskfile_err *e)
{
	const char *why;

	if ((is_script(data, len) ? task_of_script(data, len, t, e) :
	    task_of_root(root, t, e)) < 0)
		return -1;
	if (task_validate(t, &why) < 0)
		return terr(e, 0, 0, "%s", why);
	return 0;
}

int
taskfile_parse(const char *data, size_t len, struct task_spec *t,
    struct taskfile_err *e)
{
	struct ynode *root;
	int rc;

	if (file_open(data, len, &root, e) < 0)
		return -1;
	rc = task_of_file(data, len, root, t, e);
	yamlx_free(root);
	return rc;
}

/* "task N of the list: " before err's message (its end cut to fit) */
static void
item_prefix(struct taskfile_err *e, size_t n)
{
	char pre[48];
	size_t k, len = strlen(e->msg);

	k = (size_t)snprintf(pre, sizeof pre, "task %zu of the list: ", n);
	if (len > sizeof e->msg - 1 - k)
		len = sizeof e->msg - 1 - k;
	memmove(e->msg + k, e->msg, len);
	memcpy(e->msg, pre, k);
	e->msg[k + len] = 0;
}

int
taskfile_parse_list(const char *data, size_t len, struct task_spec **out,
    size_t *n, struct taskfile_err *e)
{
	struct ynode *root;
	struct task_spec *ts;
	struct before b;
	const char *why;
	size_t i, deps = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (file_open(data, len, &root, e) < 0)
		return -1;
	if (root == NULL || root->type != Y_SEQ) {
		/* a file of one task, as taskfile_parse() takes it */
		ts = xcalloc(1, sizeof *ts);
		task_init(ts);
		rc = task_of_file(data, len, root, ts, e);
		yamlx_free(root);
		if (rc < 0) {
			task_free_array(ts, 1);
			return -1;
		}
		*out = ts;
		*n = 1;
		return 0;
	}
	if (root->n == 0 || root->n > TASKFILE_LIST_MAX) {
		terr(e, root->line, root->col, "a list of %zu tasks (1 to %u)",
		    root->n, TASKFILE_LIST_MAX);
		yamlx_free(root);
		return -1;
	}
	ts = xcalloc(root->n, sizeof *ts);
	before_init(&b, ts, root->n);
	for (i = 0; i < root->n; i++) {
		const struct ynode *k = root->kids[i];

		task_init(&ts[i]);
		if (k->type != Y_MAP)
			rc = terr(e, k->line, k->col, "a task must be a YAML "
			    "mapping (command: ...), not %s",
			    yamlx_type_name(k->type));
		else if ((rc = task_of_map(k, &ts[i], &b, e)) == 0 &&
		    task_validate(&ts[i], &why) < 0)
			rc = terr(e, k->line, k->col, "%s", why);
		else if (rc == 0 && (deps += ts[i].nafter +
		    ts[i].nafter_item) > TASKFILE_AFTER_MAX)
			rc = terr(e, k->line, k->col, "after: the tasks of the "
			    "list up to this one have %zu dependencies in all "
			    "(at most %u a list)", deps, TASKFILE_AFTER_MAX);
		if (rc < 0) {
			item_prefix(e, i + 1);
			task_free_array(ts, i + 1);
			before_free(&b);
			yamlx_free(root);
			return -1;
		}
		before_add(&b);
	}
	before_free(&b);
	*n = root->n;
	*out = ts;
	yamlx_free(root);
	return 0;
}

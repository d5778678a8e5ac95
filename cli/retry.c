/*
 * retry.c - "spool retry": submit failed and cancelled tasks again, as
 * Dask's client.retry(futures) runs erred futures again.
 *
 *	spool retry [-n] [-v] [ID...]     (IDs from stdin if none)
 *
 * A result never changes once it is written (spool-layout(5)), so a
 * task is not run again under its own ID: each named task that failed
 * or was cancelled is submitted again as a new task, from the spec its
 * task directory keeps (command or script, working directory,
 * environment, resources, name, priority, retries, --after).  So is,
 * first, every dependency of a task submitted again that failed or was
 * cancelled, named or not (a task cancelled because a dependency failed
 * could not run otherwise), and the new task waits for the new
 * dependency.  A task that is done, or not final yet, is kept.
 *
 * stdout has one line per named ID, in the order given: the ID whose
 * result now stands for it, the new one or the same.  So
 *
 *	spool retry < ids > ids2 && spool gather < ids2
 *
 * gathers every task's output, as a notebook gathers its futures after
 * client.retry.  stderr says how many were submitted again (-v: which,
 * as what, and why), and -n says it without submitting anything.
 *
 * Nothing is submitted if a named ID, or a dependency of a task to be
 * submitted again, was never claimed (exit 2, as for wait), is found
 * nowhere (purged: a done dependency too, which the new task could not
 * wait for) or was rejected (its spec was refused: it would be again),
 * nor if a spec cannot be read or is another user's (exit 1).
 *
 * The tasks go in the order of their old IDs (a task's dependencies
 * have lower IDs than it: an --after names an ID already claimed), in
 * as few bundles as possible (submit.h): a new bundle starts where a
 * task depends on one in the bundle being built, whose new ID is
 * claimed only when that bundle is written.  A crash between two
 * bundles leaves the first ones submitted and no IDs printed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "ids.h"
#include "msg.h"
#include "submit.h"
#include "wdir.h"

#define RETRY_SPEC_MAX	(4u << 20)	/* a spec record: command and env */

struct again {
	uint64_t old, id;	/* id: the new task's, once submitted */
	struct task_spec t;
	const char *state;	/* "failed" or "cancelled" */
	char	reason[32];
	uint64_t for_id;	/* a dependency of this task; 0: named */
};

struct retry {
	struct again *v;	/* sorted by old ID once complete */
	size_t	n, cap;
	int	verbose, dry;
};

static int
again_cmp(const void *a, const void *b)
{
	const struct again *x = a, *y = b;

	return x->old < y->old ? -1 : x->old > y->old;
}

/* The entry of task old among v[lo, hi), sorted by old ID, or NULL. */
static struct again *
sorted_find(const struct retry *rt, size_t lo, size_t hi, uint64_t old)
{
	struct again key = { .old = old };

	if (lo == hi)
		return NULL;
	return bsearch(&key, rt->v + lo, hi - lo, sizeof *rt->v, again_cmp);
}

/* The same among v[0, sorted), sorted, and v[sorted, n), not yet. */
static struct again *
find(const struct retry *rt, size_t sorted, uint64_t old)
{
	struct again *a = sorted_find(rt, 0, sorted, old);
	size_t i;

	for (i = sorted; a == NULL && i < rt->n; i++)
		if (rt->v[i].old == old)
			a = &rt->v[i];
	return a;
}

/* " (a dependency of task N)" for need N, "" for 0, into out */
static const char *
dependency_of(uint64_t need, char *out, size_t size)
{
	*out = 0;
	if (need)
		snprintf(out, size, " (a dependency of task %" PRIu64 ")",
		    need);
	return out;
}

/*
 * Is task id to be submitted again?  1 (failed or cancelled: *v says
 * how), 0 (done, or not final yet), or exits with the reason it cannot
 * be (need names the task that needs it, or is 0 for a named one).
 */
static int
needs_again(uint64_t id, uint64_t need, struct tview *v)
{
	char as[64];

	query_task(id, v);
	dependency_of(need, as, sizeof as);
	if (strcmp(v->state, "no-such-task") == 0)
		msg_fatal_status(EXIT_USAGE, "task %" PRIu64 "%s: no such task: "
		    "nothing submitted again", id, as);
	if (strcmp(v->state, "unknown") == 0)
		msg_fatal_status(1, "task %" PRIu64 "%s: found nowhere "
		    "(purged, or its submission was not written): nothing "
		    "submitted again", id, as);
	if (!v->has_result || v->r.state == RS_DONE)
		return 0;
	if (v->r.state == RS_REJECTED)
		msg_fatal_status(1, "task %" PRIu64 "%s was rejected: its spec "
		    "was refused (spool status -l %" PRIu64 "), and would be "
		    "again: nothing submitted again", id, as, id);
	return 1;
}

/*
 * Read task id's spec into a->t, ready to submit again, or exit: also
 * if another user submitted it.  The new task would run as whoever runs
 * this, root too: an owner who retries every failed task of a shared
 * spool must not run a member's command as root.
 */
static void
spec_load(uint64_t id, struct again *a)
{
	char path[SPOOL_PATH_MAX + 16];
	struct buf b = BUF_INIT;
	const char *why;
	uint32_t attempt;
	char as[64];
	int line;

	spool_task_path(id, path, sizeof path);
	strcat(path, "/spec");
	if (fsop_read_file(cli_sp.fd[SD_TASKS], path, RETRY_SPEC_MAX, &b,
	    NULL) < 0)
		msg_fatal("read: %s/tasks/%s: %m (nothing submitted again)",
		    cli_sp.shown, path);
	if (final_spec_decode(b.p, b.len, &a->t, &attempt, &why, &line) < 0)
		msg_fatal("%s/tasks/%s: line %d: %s (nothing submitted again)",
		    cli_sp.shown, path, line, why);
	buf_free(&b);
	if (a->t.id != id)
		msg_fatal("%s/tasks/%s: is the spec of task %" PRIu64
		    " (nothing submitted again)", cli_sp.shown, path, a->t.id);
	if (task_validate(&a->t, &why) < 0)
		msg_fatal("%s/tasks/%s: %s (nothing submitted again)",
		    cli_sp.shown, path, why);
	if (a->t.uid != (uint32_t)getuid())
		msg_fatal_status(1, "task %" PRIu64 "%s was submitted by uid %"
		    PRIu32 ", not by this user (uid %ld): only its submitter "
		    "can submit it again (it would run as this user): nothing "
		    "submitted again", id, dependency_of(a->for_id, as,
		    sizeof as), a->t.uid, (long)getuid());
	a->t.id = 0;
	free(a->t.source);
	a->t.source = NULL;
	a->t.uid = (uint32_t)getuid();
	a->t.submitted = now_unix();
}

/* Task id, named (for_id 0) or a dependency of task for_id. */
static void
add(struct retry *rt, uint64_t id, const struct tview *v, uint64_t for_id)
{
	struct again *a;

	if (rt->n == rt->cap) {
		rt->cap = rt->cap ? 2 * rt->cap : 64;
		rt->v = xreallocarray(rt->v, rt->cap, sizeof *rt->v);
	}
	a = &rt->v[rt->n++];
	memset(a, 0, sizeof *a);
	a->old = id;
	a->state = result_state_name[v->r.state];
	snprintf(a->reason, sizeof a->reason, "%s",
	    result_reason_name[v->r.reason]);
	a->for_id = for_id;
	spec_load(id, a);
}

/*
 * Add the failed and cancelled dependencies of the tasks in v (sorted),
 * and theirs, until none is left: each round looks at the dependencies
 * of the tasks the round before added.  v is sorted when it returns.
 */
static void
add_dependencies(struct retry *rt)
{
	uint64_t *todo, *next = NULL, d, id;
	const uint64_t *after;
	size_t ntodo = rt->n, nnext, sorted = rt->n, i, k, nafter;
	struct again *a;
	struct tview v;

	todo = xreallocarray(NULL, ntodo ? ntodo : 1, sizeof *todo);
	for (i = 0; i < ntodo; i++)
		todo[i] = rt->v[i].old;
	while (ntodo > 0) {
		nnext = 0;
		for (i = 0; i < ntodo; i++) {
			id = todo[i];
			a = find(rt, sorted, id);
			/* add() may move v; the after array stays */
			after = a->t.after;
			nafter = a->t.nafter;
			for (k = 0; k < nafter; k++) {
				d = after[k];
				if (find(rt, sorted, d) != NULL)
					continue;
				if (needs_again(d, id, &v)) {
					add(rt, d, &v, id);
					next = xreallocarray(next, nnext + 1,
					    sizeof *next);
					next[nnext++] = d;
				}
				query_free(&v);
			}
		}
		qsort(rt->v, rt->n, sizeof *rt->v, again_cmp);
		sorted = rt->n;
		free(todo);
		todo = next;
		ntodo = nnext;
		next = NULL;
	}
	free(todo);
}

/* Submit v[from, to) as one bundle, their --after lists mapped to the
 * new IDs of what was submitted before them. */
static void
submit_run(struct retry *rt, size_t from, size_t to)
{
	struct task_spec *t;
	struct again *dep;
	size_t i, k;

	if (from == to)
		return;
	t = xreallocarray(NULL, to - from, sizeof *t);
	for (i = from; i < to; i++) {
		for (k = 0; k < rt->v[i].t.nafter; k++) {
			dep = sorted_find(rt, 0, from, rt->v[i].t.after[k]);
			if (dep != NULL)
				rt->v[i].t.after[k] = dep->id;
		}
		t[i - from] = rt->v[i].t;
	}
	cli_submit_tasks(t, to - from, SUBMIT_VALIDATED);
	for (i = from; i < to; i++)
		rt->v[i].id = t[i - from].id;
	free(t);
}

/* 1 if task i depends on one of v[from, i), not submitted yet. */
static int
depends_within(const struct retry *rt, size_t from, size_t i)
{
	size_t k;

	for (k = 0; k < rt->v[i].t.nafter; k++)
		if (sorted_find(rt, from, i, rt->v[i].t.after[k]) != NULL)
			return 1;
	return 0;
}

static void
submit_all(struct retry *rt)
{
	size_t from = 0, i;

	for (i = 0; i < rt->n; i++)
		if (i - from == IDS_CLAIM_MAX || depends_within(rt, from, i)) {
			submit_run(rt, from, i);
			from = i;
		}
	submit_run(rt, from, rt->n);
}

static void
say(const struct retry *rt, size_t kept)
{
	const struct again *a;
	size_t i, deps = 0;
	char as[40];

	for (i = 0; i < rt->n; i++) {
		a = &rt->v[i];
		deps += a->for_id != 0;
		if (!rt->verbose)
			continue;
		if (rt->dry)
			snprintf(as, sizeof as, "would be submitted again");
		else
			snprintf(as, sizeof as, "submitted again as %" PRIu64,
			    a->id);
		if (a->for_id == 0)
			fprintf(stderr, "spool: task %" PRIu64 " (%s: %s) %s\n",
			    a->old, a->state, a->reason, as);
		else
			fprintf(stderr, "spool: task %" PRIu64 " (%s: %s), a "
			    "dependency of task %" PRIu64 ", %s\n", a->old,
			    a->state, a->reason, a->for_id, as);
	}
	if (rt->n == 0) {
		fprintf(stderr, "spool: nothing to submit again: %zu task%s "
		    "kept (done, or not ended)\n", kept, kept == 1 ? "" : "s");
		return;
	}
	fprintf(stderr, "spool: %zu task%s %ssubmitted again", rt->n,
	    rt->n == 1 ? "" : "s", rt->dry ? "would be " : "");
	if (deps)
		fprintf(stderr, " (%zu of them failed or cancelled "
		    "dependencies not named)", deps);
	fprintf(stderr, "; %zu kept (done, or not ended)\n", kept);
}

static void
retry_usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: spool retry [-n] [-v] [ID...]   (IDs from stdin if none)\n"
	    "  submits each failed or cancelled task again as a new task,\n"
	    "  with its failed or cancelled dependencies; prints, for each\n"
	    "  ID, the ID that now stands for it\n"
	    "  -n  say what would be submitted again; submit nothing\n"
	    "  -v  one line per task submitted again\n");
	exit(status);
}

int
cmd_retry(int argc, char **argv)
{
	struct retry rt = { 0 };
	struct tview v;
	struct again *a;
	uint64_t *ids, *uniq;
	size_t n, nuniq = 0, i, kept = 0;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "+nvh")) != -1) {
		switch (c) {
		case 'n':
			rt.dry = 1;
			break;
		case 'v':
			rt.verbose = 1;
			break;
		case 'h':
			retry_usage(0);
			break;
		default:
			retry_usage(EXIT_USAGE);
		}
	}
	cli_open();
	query_init();
	ids = cli_read_ids(argc - optind, argv + optind, &n);
	if (n == 0)
		msg_fatal_status(EXIT_USAGE, "no task IDs to retry");
	/* each ID once, in ascending order: v comes out sorted */
	uniq = xreallocarray(NULL, n, sizeof *uniq);
	memcpy(uniq, ids, n * sizeof *uniq);
	qsort(uniq, n, sizeof *uniq, ids_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || uniq[i] != uniq[i - 1])
			uniq[nuniq++] = uniq[i];
	for (i = 0; i < nuniq; i++) {
		if (needs_again(uniq[i], 0, &v))
			add(&rt, uniq[i], &v, 0);
		else
			kept++;
		query_free(&v);
	}
	free(uniq);
	add_dependencies(&rt);
	if (!rt.dry)
		submit_all(&rt);
	say(&rt, kept);
	if (!rt.dry)
		for (i = 0; i < n; i++) {
			a = sorted_find(&rt, 0, rt.n, ids[i]);
			printf("%" PRIu64 "\n", a ? a->id : ids[i]);
		}
	for (i = 0; i < rt.n; i++)
		task_free(&rt.v[i].t);
	free(rt.v);
	free(ids);
	if (fflush(stdout) != 0)
		msg_fatal("write: standard output: %m");
	return 0;
}

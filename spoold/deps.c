/*
 * deps.c - dependencies between tasks ("--after ID").
 *
 * A task may only depend on IDs below its own (IDs are claimed in
 * order, so this also rules out cycles), and only runs once all of them
 * are done.  When a dependency ends in any other way (failed,
 * cancelled, rejected) the dependent is cancelled with a reason naming
 * it, and so on down the graph.
 *
 * Kept here: for every unfinished dependency, the IDs waiting on it (an
 * open-addressing hash map, only for tasks that have dependents).  A
 * dependency not yet known to spoold (claimed but its submission not
 * yet accepted) is waited for; if it is still unknown after
 * DEPS_HOLE_MS, it was never submitted (its submitter died after
 * claiming the ID) and its dependents are cancelled.
 *
 * Finishing a task may cancel a long chain; that is done with a work
 * list, not recursion, so a chain of a million tasks cannot overflow
 * the stack.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "msg.h"
#include "spoold.h"

#define DEPS_HOLE_MS (5 * 60 * 1000)

struct dent {
	uint64_t key;		/* 0: empty slot */
	uint64_t since;		/* when a dependent first waited on it */
	uint64_t *v;
	uint32_t n, cap;
};

static struct dent *tab;
static size_t tcap, tcount;

static size_t
slot_of(uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 17) & (tcap - 1);
}

static struct dent *
dent_find(uint64_t key)
{
	size_t i;

	if (tcap == 0)
		return NULL;
	for (i = slot_of(key); tab[i].key; i = (i + 1) & (tcap - 1))
		if (tab[i].key == key)
			return &tab[i];
	return NULL;
}

static void
grow(void)
{
	struct dent *old = tab;
	size_t oldcap = tcap, i, j;

	tcap = tcap ? tcap * 2 : 256;
	tab = xcalloc(tcap, sizeof *tab);
	for (i = 0; i < oldcap; i++)
		if (old[i].key) {
			for (j = slot_of(old[i].key); tab[j].key;
			    j = (j + 1) & (tcap - 1))
				;
			tab[j] = old[i];
		}
	free(old);
}

static struct dent *
dent_get(uint64_t key)
{
	struct dent *d = dent_find(key);
	size_t i;

	if (d)
		return d;
	if ((tcount + 1) * 2 > tcap)
		grow();
	for (i = slot_of(key); tab[i].key; i = (i + 1) & (tcap - 1))
		;
	tab[i].key = key;
	tab[i].since = sd.now;
	tcount++;
	return &tab[i];
}

/* Remove an entry keeping linear probing intact (backward shift). */
static void
dent_del(struct dent *d)
{
	size_t i = (size_t)(d - tab), j, k;

	free(d->v);
	memset(d, 0, sizeof *d);
	tcount--;
	for (j = (i + 1) & (tcap - 1); tab[j].key; j = (j + 1) & (tcap - 1)) {
		k = slot_of(tab[j].key);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			tab[i] = tab[j];
			memset(&tab[j], 0, sizeof tab[j]);
			i = j;
		}
	}
}

static void
dent_push(struct dent *d, uint64_t id)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4;
		d->v = xreallocarray(d->v, d->cap, sizeof *d->v);
	}
	d->v[d->n++] = id;
}

/*
 * Dependents whose cancel could not be written (finish_final: a full
 * disk, an I/O error): they stay T_WAITING, and deps_retry cancels them
 * at a later heartbeat, else nothing would (their dependency is final).
 */
struct again {
	uint64_t id;
	char	why[200];
};

static struct again *again;
static size_t nagain;

static void
cancel_dependent(uint64_t id, struct task *t, const char *why)
{
	if (finish_cancel(id, t, why, RR_DEPENDENCY) == 0)
		return;
	again = xreallocarray(again, nagain + 1, sizeof *again);
	again[nagain].id = id;
	snprintf(again[nagain].why, sizeof again[nagain].why, "%s", why);
	nagain++;
}

void
deps_retry(void)
{
	struct again *v = again;
	struct task *t;
	size_t i, n = nagain;

	/* (taken out first: a cancel that fails again is put back) */
	again = NULL;
	nagain = 0;
	for (i = 0; i < n; i++)
		if ((t = task_get(v[i].id)) != NULL && t->state == T_WAITING)
			cancel_dependent(v[i].id, t, v[i].why);
	free(v);
}

void
deps_add(uint64_t id, struct task *t, const struct task_spec *spec)
{
	struct result r;
	struct task *dt;
	char why[200], how[160];
	uint64_t fail = 0;
	size_t i, j;

	t->ndeps = 0;
	why[0] = 0;
	for (i = 0; i < spec->nafter; i++) {
		uint64_t d = spec->after[i];

		for (j = 0; j < i; j++)
			if (spec->after[j] == d)
				break;
		if (j < i)
			continue;	/* listed twice */
		t->flags |= TF_DEPS;
		if ((dt = task_get(d)) != NULL && dt->state != T_FINAL) {
			dent_push(dent_get(d), id);
			t->ndeps++;
		} else if (dt != NULL) {
			/* final: done, or failed in some way */
			if (!(dt->flags & TF_FAILED) || fail)
				continue;
			fail = d;
			if (finish_final_exists(d, &r)) {
				result_how(&r, how, sizeof how);
				result_free(&r);
			} else
				snprintf(how, sizeof how, "did not succeed");
			snprintf(why, sizeof why, "dependency %" PRIu64 " %s", d,
			    how);
		} else if (finish_final_exists(d, &r)) {
			/* the same words as when it fails while we wait */
			if (r.state != RS_DONE && !fail) {
				fail = d;
				result_how(&r, how, sizeof how);
				snprintf(why, sizeof why, "dependency %" PRIu64
				    " %s", d, how);
			}
			result_free(&r);
		} else {
			/* not accepted yet: wait for it */
			dent_push(dent_get(d), id);
			t->ndeps++;
		}
	}
	if (fail)
		cancel_dependent(id, t, why);
	else if (t->ndeps == 0)
		shape_push(id, t);
	/* else it stays T_WAITING */
}

struct work {
	uint64_t id;
	int	ok;
	char	why[160];
};

static struct work *wl;
static size_t wl_n, wl_cap;
static int draining;

void
deps_final(uint64_t id, int ok, const char *how)
{
	struct dent *d;
	struct task *t;
	struct work w;
	char why[200];
	uint32_t i;

	if (wl_n == wl_cap) {
		wl_cap = wl_cap ? wl_cap * 2 : 64;
		wl = xreallocarray(wl, wl_cap, sizeof *wl);
	}
	wl[wl_n].id = id;
	wl[wl_n].ok = ok;
	snprintf(wl[wl_n].why, sizeof wl[wl_n].why, "%s", how ? how : "");
	wl_n++;
	if (draining)
		return;		/* the outer call works through the list */
	draining = 1;
	while (wl_n > 0) {
		w = wl[--wl_n];
		if ((d = dent_find(w.id)) == NULL)
			continue;
		for (i = 0; i < d->n; i++) {
			t = task_get(d->v[i]);
			if (t == NULL || t->state != T_WAITING)
				continue;
			if (w.ok) {
				if (--t->ndeps == 0) {
					shape_push(d->v[i], t);
					journal_task(d->v[i], "queued", NULL);
				}
				continue;
			}
			snprintf(why, sizeof why, "dependency %" PRIu64 " %s",
			    w.id, w.why);
			cancel_dependent(d->v[i], t, why);
			/* finish_cancel may grow tab: look d up again */
			if ((d = dent_find(w.id)) == NULL)
				break;
		}
		if (d != NULL)
			dent_del(d);
	}
	draining = 0;
}

void
deps_check_holes(void)
{
	uint64_t *late = NULL;
	size_t i, n = 0;

	for (i = 0; i < tcap; i++)
		if (tab[i].key && task_get(tab[i].key) == NULL &&
		    sd.now - tab[i].since > DEPS_HOLE_MS) {
			late = xreallocarray(late, n + 1, sizeof *late);
			late[n++] = tab[i].key;
		}
	for (i = 0; i < n; i++) {
		struct result r;

		if (finish_final_exists(late[i], &r)) {
			char how[160];

			result_how(&r, how, sizeof how);
			deps_final(late[i], r.state == RS_DONE, how);
			result_free(&r);
		} else {
			msg_warn("task %" PRIu64 " was claimed but never "
			    "submitted; cancelling its dependents", late[i]);
			deps_final(late[i], 0, "was never submitted");
		}
	}
	free(late);
}

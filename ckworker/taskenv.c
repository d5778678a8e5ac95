/*
 * taskenv.c - a task's environment, made once for every task a worker
 * starts: the worker's own variables, pointed to rather than copied,
 * with the task's env and the worker's SPOOL_* and thread counts set
 * over them.  Only the strings made for the task are allocated, one
 * each, and no printf: copying the whole environment and formatting
 * each variable were a twentieth of the worker's CPU for a stream of
 * short tasks.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "taskenv.h"

/* room for the variables a worker sets (ckworker/run.c) before a realloc */
#define TASKENV_ROOM	16

void
taskenv_init(struct taskenv *e, char *const *base)
{
	size_t n = strv_len(base);

	e->cap = n + 1 + TASKENV_ROOM;
	e->v = xreallocarray(NULL, e->cap, sizeof *e->v);
	if (n > 0)
		memcpy(e->v, base, n * sizeof *e->v);
	e->v[n] = NULL;
	e->n = n;
	e->madecap = TASKENV_ROOM;
	e->made = xreallocarray(NULL, e->madecap, sizeof *e->made);
	e->nmade = 0;
}

/* The index of NAME (nlen bytes) in v, or n. */
static size_t
find(char *const *v, size_t n, const char *name, size_t nlen)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i][0] == name[0] && strncmp(v[i], name, nlen) == 0 &&
		    v[i][nlen] == '=')
			break;
	return i;
}

/* kv at v[i]: where its NAME was (find), or at the end (i == n) */
static void
place(struct taskenv *e, size_t i, char *kv)
{
	if (i < e->n) {
		e->v[i] = kv;
		return;
	}
	if (e->n + 2 > e->cap) {
		e->cap = 2 * e->cap;
		e->v = xreallocarray(e->v, e->cap, sizeof *e->v);
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
}

void
taskenv_set(struct taskenv *e, const char *name, const char *value,
    int replace)
{
	size_t nlen = strlen(name), vlen = strlen(value);
	size_t i = find(e->v, e->n, name, nlen);
	char *kv;

	if (!replace && i < e->n)
		return;
	kv = xmalloc(nlen + vlen + 2);
	memcpy(kv, name, nlen);
	kv[nlen] = '=';
	memcpy(kv + nlen + 1, value, vlen + 1);
	if (e->nmade == e->madecap) {
		e->madecap = 2 * e->madecap;
		e->made = xreallocarray(e->made, e->madecap, sizeof *e->made);
	}
	e->made[e->nmade++] = kv;
	place(e, i, kv);
}

void
taskenv_unset(struct taskenv *e, const char *name)
{
	size_t i = find(e->v, e->n, name, strlen(name));

	if (i == e->n)
		return;
	memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof *e->v);
	e->n--;
}

void
taskenv_put(struct taskenv *e, const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (eq == NULL || eq == kv)
		return;
	place(e, find(e->v, e->n, kv, (size_t)(eq - kv)), (char *)kv);
}

const char *
taskenv_get(char *const *v, const char *name)
{
	size_t i, n = strv_len(v), nlen = strlen(name);

	i = find(v, n, name, nlen);
	return i < n ? v[i] + nlen + 1 : NULL;
}

void
taskenv_free(struct taskenv *e)
{
	size_t i;

	for (i = 0; i < e->nmade; i++)
		free(e->made[i]);
	free(e->made);
	free(e->v);
	e->v = e->made = NULL;
	e->n = e->cap = e->nmade = e->madecap = 0;
}

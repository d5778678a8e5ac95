/*
 * taskenv.h - a task's environment: the worker's own, with the names
 * the task and the worker set over it.  See taskenv.c.
 */
#ifndef TASKENV_H
#define TASKENV_H

#include <stddef.h>

struct taskenv {
	char	**v;		/* NULL-terminated, for execve */
	size_t	n, cap;
	char	**made;		/* the strings made here (freed with it) */
	size_t	nmade, madecap;
};

/* base's strings are pointed to, not copied: they must outlive e. */
void	taskenv_init(struct taskenv *e, char *const *base);
/* NAME=value: over a NAME already there if replace, else only if none */
void	taskenv_set(struct taskenv *e, const char *name, const char *value,
	    int replace);
/* NAME no more, wherever it was (the rest keep their order) */
void	taskenv_unset(struct taskenv *e, const char *name);
/* kv is "NAME=value" (NAME non-empty), set as is, pointed to */
void	taskenv_put(struct taskenv *e, const char *kv);
const char *taskenv_get(char *const *v, const char *name);
void	taskenv_free(struct taskenv *e);

#endif

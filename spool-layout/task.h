/*
 * task.h - a task specification: what to run and with what resources.
 *
 * The same struct comes from every way of submitting (spool submit
 * options, #SPOOL directives, YAML keys, the canonical record) and the
 * same function, task_set(), applies an option to it, so a key means
 * the same thing everywhere.  task_validate() enforces the bounds that
 * make a spec safe to schedule; every parser calls it before a task is
 * accepted.
 *
 * Exactly one of argv (run directly), shell (run with /bin/sh -c) or
 * script (written to a file and executed; it must start with "#!")
 * is set.
 */
#ifndef TASK_H
#define TASK_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "rec.h"

#define TASK_NAME_MAX		128
#define TASK_ARGV_MAX		4096
#define TASK_CMD_BYTES_MAX	(1u << 20)	/* argv, shell or script */
/* one argument, command string or NAME=VALUE, with its NUL: what
 * execve(2) takes (Linux's MAX_ARG_STRLEN), or E2BIG */
#define TASK_STRING_MAX		(128u << 10)
#define TASK_ENV_MAX		1024
#define TASK_ENV_BYTES_MAX	(1u << 20)	/* NAME=VALUE\0 in all */
#define TASK_PATH_MAX		4096
#define TASK_CORES_MAX		4096
#define TASK_MEMORY_MAX		(1ULL << 50)	/* 1 PiB */
#define TASK_GPUS_MAX		64
#define TASK_WALLTIME_MAX	(366ULL * 86400)
#define TASK_AFTER_MAX		1024
#define TASK_PRIORITY_MIN	(-1000)
#define TASK_PRIORITY_MAX	1000
#define TASK_RETRIES_MAX	100
#define TASK_ID_MAX		((1ULL << 40) - 1)
#define TASK_FILE_MAX		(1u << 20)	/* a submitted file */

/* a task of the same list that a task comes after */
struct after_item {
	uint32_t item;		/* its index in the list: below the task's */
	uint32_t at;		/* how many of after came before it */
};

struct task_spec {
	uint64_t id;		/* 0 until an ID is claimed */
	char	*name;
	char	**argv;
	char	*shell;
	char	*script;
	char	*cwd;
	char	**env;		/* "NAME=value" */
	uint32_t cores;		/* 0: not given (1 core) */
	uint64_t memory;	/* bytes; 0: no request */
	uint32_t gpus;
	uint64_t walltime;	/* seconds; 0: none */
	uint64_t *after;
	size_t	nafter;
	/*
	 * The tasks of the same list this one comes after: a list's task
	 * that names tasks before it (taskfile_parse_list).  They have no
	 * ID until the list's IDs are claimed; submit_tasks() then puts
	 * theirs into after (task_after_items).  Never in a record.
	 */
	struct after_item *after_item;
	size_t	nafter_item;
	int32_t	priority;
	uint32_t retries;
	char	*source;	/* file name a dropped task came from */
	double	submitted;	/* unix time */
	uint32_t uid;		/* submitter */
};

void	task_init(struct task_spec *t);
void	task_free(struct task_spec *t);
/* task_free() each of the n of t, then free(t) */
void	task_free_array(struct task_spec *t, size_t n);
void	task_copy(struct task_spec *dst, const struct task_spec *src);

/*
 * Apply one option, by its long name without dashes ("cores", "memory",
 * "gpus", "walltime", "after", "priority", "retries", "name", "env",
 * "cwd").  "after" takes a comma-separated list and adds to it; "env"
 * takes NAME=VALUE and adds or replaces.  Returns 0, or -1 with a
 * static reason in *why (the caller adds where).
 */
int	task_set(struct task_spec *t, const char *key, const char *value,
	    const char **why);
int	task_is_option(const char *key);

/*
 * Add item (the index of a task before t in its list, not added
 * before: the caller sees to it) to t's after_item: 0, or -1 with *why
 * when t would have more than TASK_AFTER_MAX dependencies in all.
 */
int	task_add_item(struct task_spec *t, uint32_t item, const char **why);
/*
 * The list's IDs claimed from first on: put the ID of each of t's
 * after_item (first + item) into after, among the IDs given there in
 * the order they were given (a word's place in the file is kept for
 * $SPOOL_DEPS), and empty after_item.  (The IDs after held are below
 * first: a submission refuses the others.)
 */
void	task_after_items(struct task_spec *t, uint64_t first);

/* 0 if the spec may be accepted, else -1 and *why. */
int	task_validate(const struct task_spec *t, const char **why);

/* Canonical record (see rec.h) of the spec, without a separator. */
void	task_encode(struct buf *b, const struct task_spec *t);
/*
 * Decode one field into t: 1 if it was a task field, 0 if the key is
 * not a task key (the caller may know it), -1 on a bad value.
 */
int	task_decode_field(struct rec_reader *r, const struct rec_field *f,
	    struct task_spec *t);
/* Decode a whole record; unknown keys are errors.  0 / -1 (r->why). */
int	task_decode(struct rec_reader *r, struct task_spec *t);

/* Effective core count (at least 1). */
uint32_t task_cores(const struct task_spec *t);

/*
 * What a task asks, as spoold groups queued tasks (its shapes) and its
 * summary lists those no worker can run (unfit_shapes: spoold writes,
 * "spool status" and "spool wait" read): cores at least 1, memory in
 * bytes and walltime in seconds, 0 for none asked.
 */
struct task_shape {
	uint32_t cores, gpus;
	uint64_t memory, walltime;
};
void	task_shape_of(const struct task_spec *t, struct task_shape *s);
/* "cores=C gpus=G memory=BYTES walltime=SECONDS tasks=N" in out. */
void	task_shape_format(const struct task_shape *s, uint64_t tasks,
	    char *out, size_t size);
/* The shape of such a text (its tasks not read); 0, or -1 if not one. */
int	task_shape_parse(const char *text, struct task_shape *s);
/*
 * What it asks in words, as spoold's log, "spool wait" and
 * "spool status -l" say it: "1 core, 2 GPUs, memory 900G, walltime
 * 1:00:00", "-" for what is not asked.  Returns out.
 */
const char *task_shape_words(const struct task_shape *s, char *out,
	    size_t size);

/* True if name is a valid task or worker name. */
int	task_name_ok(const char *name);

/*
 * A task dropped as a file (incoming/, a mount's submit/) without a name
 * is named after the file, without its extension, where that is a name.
 */
void	task_default_name(struct task_spec *t, const char *file);

#endif

/*
 * taskfile.h - parse a task file as users write it.
 *
 * Two formats, told apart by the first two bytes:
 *
 *  - "#!": a script.  Lines after the shebang that start with
 *    "#SPOOL" carry options exactly as "spool submit" takes them
 *    ("#SPOOL --cores=4 --memory=2G", "#SPOOL --after 12,13"), in the
 *    style of #SBATCH; they are read up to the first line that is not a
 *    comment or blank.  The whole file is the task's script.
 *
 *  - anything else: a YAML mapping (or, for taskfile_parse_list, a
 *    list of them) with the keys command (a list: argv;
 *    a string: run by /bin/sh -c), script, name, cwd, env (mapping or
 *    list of NAME=VALUE), cores, memory, gpus, walltime (also inside a
 *    "resources" mapping), after (list or comma string of IDs; in
 *    a list, also the names of tasks before, see below), priority,
 *    retries.
 *
 * Input is untrusted: it is bounded (TASK_FILE_MAX, YAML limits), NUL
 * bytes are refused, and every error names the line (and column) and
 * what was wrong.  The result is validated with task_validate().
 */
#ifndef TASKFILE_H
#define TASKFILE_H

#include <stddef.h>

#include "task.h"

struct taskfile_err {
	int	line;
	int	col;
	char	msg[256];
};

int	taskfile_parse(const char *data, size_t len, struct task_spec *t,
	    struct taskfile_err *err);

/*
 * A task file that may also be a list of tasks: a YAML sequence (1 to
 * TASKFILE_LIST_MAX items, the file within TASK_FILE_MAX), each item a
 * task's mapping as above, parsed and validated as one file's.  Any
 * other file is one task, as taskfile_parse() takes it.  0 with *tasks
 * (*n of them, allocated; the caller task_free()s each and frees the
 * array), or -1 with nothing kept and err naming the item ("task 3 of
 * the list: ...", its line and column).  "spool submit FILE" and
 * spoolfs's submit/ take lists, as one submission (one bundle);
 * incoming/ takes one task a file.
 *
 * A word of an item's after that is not IDs (digits and commas) names
 * the tasks before it in the list whose name key is that word, every
 * one so named: their indexes go into the task's after_item, and
 * submit_tasks() makes them IDs once it has claimed the list's.  A word
 * that names no task before is refused: the tasks of a list form no
 * cycle.  A file of one task takes IDs only.  A list's tasks have at
 * most TASKFILE_AFTER_MAX dependencies in all, as many as a file of IDs
 * alone could give (two bytes an ID at the least): a name stands for
 * every task so named, and without the bound a file of 300 KB named
 * nine million.
 */
#define TASKFILE_LIST_MAX	10000
#define TASKFILE_AFTER_MAX	(TASK_FILE_MAX / 2)
int	taskfile_parse_list(const char *data, size_t len,
	    struct task_spec **tasks, size_t *n, struct taskfile_err *err);

/* "line 3, column 5: reason" or "reason" into out. */
void	taskfile_err_format(const struct taskfile_err *e, char *out,
	    size_t size);

/*
 * Split a #SPOOL line (without the "#SPOOL") into words with shell-like
 * quoting ('...' and "..." and backslash) and apply them as options.
 * 0, or -1 with the reason in *why and the word it failed at in
 * badword (cut to badsize): "--opt=value" for an option refused with
 * its value, given as "--opt=value" or "--opt value".
 */
int	taskfile_apply_words(struct task_spec *t, const char *line,
	    const char **why, char *badword, size_t badsize);

#endif

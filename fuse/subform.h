/*
 * subform.h - what a file written into spoolfs's submit/ asks for.
 *
 * The formats of incoming/ (taskfile.h) and one more:
 *
 *   SUBFORM_SCRIPT  the text starts with "#!": a script, with #SPOOL
 *                   directives, exactly as a file dropped in incoming/;
 *   SUBFORM_YAML    the first line that is neither blank nor a comment
 *                   starts with "---", "{", "- " (an item of a list),
 *                   or a key ("word:" followed by a blank or the end of
 *                   the line): a YAML task, or a list of them
 *                   (taskfile_parse_list);
 *   SUBFORM_SHELL   any other text: shell commands, so that
 *                   `echo "sleep 1" > MNT/submit/x` submits "sleep 1".
 *                   It is submitted as a script that begins with
 *                   "#!/bin/sh" and then the text, so #SPOOL lines at
 *                   its top count as in a script.
 *
 * subform_parse() applies the rule and parses (taskfile_parse_list); on
 * failure why holds one line a person can read ("line 2, column 7:
 * ..."; line numbers are those of the text as written).
 */
#ifndef SUBFORM_H
#define SUBFORM_H

#include <stddef.h>

#include "task.h"

enum subform { SUBFORM_SCRIPT, SUBFORM_YAML, SUBFORM_SHELL };

extern const char *const subform_name[3];

enum subform subform_kind(const char *data, size_t len);

/*
 * 0 and *t, *n tasks (allocated here: the caller task_free()s each and
 * frees the array), or -1 and why, with nothing kept.
 */
int	subform_parse(const char *data, size_t len, struct task_spec **t,
	    size_t *n, char *why, size_t size);

/*
 * Whether the text's writer died of a signal before it closed the file
 * (it may be cut anywhere), from its /proc/PID/stat as read while it
 * exits (the kernel closes a dying process's files, and spoolfs sees
 * that as its close): the signal when the flags (field 9) have
 * PF_EXITING and the exit code (field 52) is a signal's, else 0 (alive,
 * exiting by exit(2), or a line it cannot read: no guess).  The fields
 * are counted from the last ')', the command name may hold any.
 */
int	subform_killed(const char *stat);

#endif

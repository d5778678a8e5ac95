/*
 * subform.h - what a file written into spoolfs's submit/ asks for.
 *
 * The formats of incoming/ (taskfile.h) and one more:
 *
 *   SUBFORM_SCRIPT  the text starts with "#!": a script, with #SPOOL
 *                   directives, exactly as a file dropped in incoming/;
 *   SUBFORM_YAML    the first line that is neither blank nor a comment
 *                   starts with "---", "{", or a key ("word:" followed
 *                   by a blank or the end of the line): a YAML task;
 *   SUBFORM_SHELL   any other text: shell commands, so that
 *                   `echo "sleep 1" > MNT/submit/x` submits "sleep 1".
 *                   It is submitted as a script that begins with
 *                   "#!/bin/sh" and then the text, so #SPOOL lines at
 *                   its top count as in a script.
 *
 * subform_parse() applies the rule and parses (taskfile_parse); on
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

/* 0 and *t (task_init'ed here, the caller frees), or -1 and why. */
int	subform_parse(const char *data, size_t len, struct task_spec *t,
	    char *why, size_t size);

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

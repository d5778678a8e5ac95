/*
 * subform.c - see subform.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "subform.h"
#include "taskfile.h"

#define SHELL_SHEBANG "#!/bin/sh\n"

const char *const subform_name[3] = { "script", "YAML", "shell" };

/* Does the line [p, end) start like YAML: "---", "{", "- " or "key:"? */
static int
yaml_line(const char *p, const char *end)
{
	const char *q = p;

	if (end - p >= 3 && memcmp(p, "---", 3) == 0)
		return 1;
	if (*p == '{')
		return 1;
	if (*p == '-' && (p + 1 == end || p[1] == ' ' || p[1] == '\t' ||
	    p[1] == '\r'))
		return 1;	/* "- command: ...": a list of tasks */
	if (!isalpha((unsigned char)*q) && *q != '_')
		return 0;
	while (q < end && (isalnum((unsigned char)*q) || *q == '_' ||
	    *q == '-'))
		q++;
	return q < end && *q == ':' &&
	    (q + 1 == end || q[1] == ' ' || q[1] == '\t' || q[1] == '\r');
}

enum subform
subform_kind(const char *data, size_t len)
{
	const char *p = data, *end = data + len, *nl;

	if (len >= 2 && data[0] == '#' && data[1] == '!')
		return SUBFORM_SCRIPT;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		while (p < nl && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p == nl || *p == '#')
			continue;
		return yaml_line(p, nl) ? SUBFORM_YAML : SUBFORM_SHELL;
	}
	/* nothing but blanks and comments: let the YAML parser say so */
	return SUBFORM_YAML;
}

int
subform_parse(const char *data, size_t len, struct task_spec **t, size_t *n,
    char *why, size_t size)
{
	struct taskfile_err te;
	struct buf b = BUF_INIT;
	int rc;

	*t = NULL;
	*n = 0;
	if (len > TASK_FILE_MAX) {
		snprintf(why, size, "task file larger than %u bytes",
		    TASK_FILE_MAX);
		return -1;
	}
	if (subform_kind(data, len) != SUBFORM_SHELL) {
		rc = taskfile_parse_list(data, len, t, n, &te);
	} else {
		buf_puts(&b, SHELL_SHEBANG);
		buf_append(&b, data, len);
		rc = taskfile_parse_list(b.p, b.len, t, n, &te);
		buf_free(&b);
		if (te.line > 1)
			te.line--;	/* count the lines as written */
	}
	if (rc < 0) {
		taskfile_err_format(&te, why, size);
		return -1;
	}
	return 0;
}

#define PF_EXITING	0x4	/* linux/sched.h: getting shut down */
#define STAT_FLAGS	9	/* the fields of /proc/PID/stat, from 1 */
#define STAT_EXIT_CODE	52

int
subform_killed(const char *stat)
{
	const char *p = strrchr(stat, ')');
	unsigned long long v, flags = 0;
	char *end;
	int field;

	if (p == NULL)
		return 0;
	p++;
	for (field = 3; field <= STAT_EXIT_CODE; field++) {
		while (*p == ' ')
			p++;
		if (field == 3) {	/* the state: one letter */
			if (*p == 0 || *p == ' ' || *p == '\n')
				return 0;
			p++;
			continue;
		}
		if (!isdigit((unsigned char)*p) && *p != '-')
			return 0;	/* short (an old kernel) or not stat */
		v = strtoull(p, &end, 10);
		p = end;
		if (field == STAT_FLAGS)
			flags = v;
		else if (field == STAT_EXIT_CODE)
			return (flags & PF_EXITING) && (v & 0x7f) ?
			    (int)(v & 0x7f) : 0;
	}
	return 0;
}

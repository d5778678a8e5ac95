/*
 * mountinfo.c - /proc/self/mountinfo, line by line.  See mountinfo.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"

/* The next field of *p (up to a space or the end), NUL-ended; NULL at
 * the end of the line. */
static char *
field(char **p)
{
	char *s = *p, *e;

	if (*s == '\0' || *s == '\n')
		return NULL;
	e = s + strcspn(s, " \n");
	if (*e != '\0')
		*e++ = '\0';
	*p = e;
	return s;
}

/* Undo the kernel's octal escapes, in place. */
static void
unoctal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 3;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

int
mountinfo_parse(char *line, struct mountinfo *m)
{
	char *dash, *p, *f[5], *end;
	int i;

	/* spaces in the fields are escaped: " - " is the separator */
	if ((dash = strstr(line, " - ")) == NULL)
		return -1;
	*dash = '\0';
	p = line;
	for (i = 0; i < 5; i++)
		if ((f[i] = field(&p)) == NULL)
			return -1;
	if (field(&p) == NULL)		/* OPTIONS; tags may follow */
		return -1;
	p = dash + 3;
	if ((m->fstype = field(&p)) == NULL || (m->source = field(&p)) ==
	    NULL)
		return -1;
	m->superopts = (end = field(&p)) != NULL ? end : "";
	errno = 0;
	m->id = strtoul(f[0], &end, 10);
	if (errno != 0 || end == f[0] || *end != '\0')
		return -1;
	unoctal(f[3]);
	unoctal(f[4]);
	unoctal((char *)m->source);
	m->root = f[3];
	m->point = f[4];
	return 0;
}

int
mountinfo_each(int (*fn)(void *arg, const struct mountinfo *m), void *arg)
{
	struct mountinfo m;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0, e;
	FILE *fp;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	for (;;) {
		errno = 0;
		if (rc != 0 || getline(&line, &cap, fp) <= 0)
			break;
		if (mountinfo_parse(line, &m) == 0)
			rc = fn(arg, &m);
	}
	e = ferror(fp) ? (errno != 0 ? errno : EIO) : 0;
	free(line);
	fclose(fp);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return rc;
}

/*
 * mounts.c - this host's spoolfs mounts of the spool, for "spool
 * shutdown" to wait for.
 *
 * spoolfs(1) names its mounts after the spool's real path (fsname=,
 * the "source" of /proc/self/mountinfo) with type fuse.spoolfs, so the
 * mounts of this spool that this process can see are the lines of
 * /proc/self/mountinfo with that type and source: those of this host's
 * mount namespace.  Mounts on other hosts, or in other namespaces of
 * this one, are not seen here; they leave at their own check of
 * state/shutdown (shutmark.h).
 *
 * A mount is known by its mount ID (the first field) and its mount
 * point; the kernel may give the ID of an unmounted mount to a new
 * one, so both must match for a mount to be the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli.h"

/* Undo mountinfo's octal escapes (space, tab, newline, backslash). */
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

ssize_t
spool_mounts_here(const char *real, struct spool_mount **out)
{
	struct spool_mount *v = NULL;
	char *line = NULL, *dash, *save, *f[5], *fstype, *source;
	size_t cap = 0, n = 0;
	int i, e;
	FILE *fp;

	*out = NULL;
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (getline(&line, &cap, fp) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - TYPE SOURCE OPTS */
		if ((dash = strstr(line, " - ")) == NULL)
			continue;
		*dash = '\0';
		fstype = strtok_r(dash + 3, " \n", &save);
		source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
		if (source == NULL || strcmp(fstype, "fuse.spoolfs") != 0)
			continue;
		unoctal(source);
		if (strcmp(source, real) != 0)
			continue;
		for (i = 0; i < 5; i++)
			if ((f[i] = strtok_r(i ? NULL : line, " ", &save)) == NULL)
				break;
		if (i < 5)
			continue;
		unoctal(f[4]);
		v = xgrowarray(v, n, sizeof *v);
		v[n].id = strtoul(f[0], NULL, 10);
		v[n].path = xstrdup(f[4]);
		n++;
	}
	e = ferror(fp) ? EIO : 0;
	free(line);
	fclose(fp);
	if (e) {
		spool_mounts_free(v, n);
		errno = e;
		return -1;
	}
	*out = v;
	return (ssize_t)n;
}

int
spool_mount_in(const struct spool_mount *m, const struct spool_mount *v,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].id == m->id && strcmp(v[i].path, m->path) == 0)
			return 1;
	return 0;
}

void
spool_mounts_free(struct spool_mount *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

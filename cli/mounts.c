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
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli.h"
#include "mountinfo.h"

struct found {
	const char *real;
	struct spool_mount *v;
	size_t n;
};

static int
found_one(void *arg, const struct mountinfo *m)
{
	struct found *f = arg;

	if (strcmp(m->fstype, "fuse.spoolfs") != 0 ||
	    strcmp(m->source, f->real) != 0)
		return 0;
	f->v = xgrowarray(f->v, f->n, sizeof *f->v);
	f->v[f->n].id = m->id;
	f->v[f->n].path = xstrdup(m->point);
	f->n++;
	return 0;
}

ssize_t
spool_mounts_here(const char *real, struct spool_mount **out)
{
	struct found f = { real, NULL, 0 };
	int e;

	*out = NULL;
	if (mountinfo_each(found_one, &f) < 0) {
		e = errno;
		spool_mounts_free(f.v, f.n);
		errno = e;
		return -1;
	}
	*out = f.v;
	return (ssize_t)f.n;
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

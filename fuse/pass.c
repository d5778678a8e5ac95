/*
 * pass.c - the other files of a finished task: everything in
 * tasks/SHARD/ID/ besides spec, result, stdout and stderr (which tree.c
 * serves under fixed inode numbers), shown read-only as it is.
 *
 * A finished task's directory no longer changes (only spoold adds its
 * spec and earlier attempts right after it appears), so these nodes
 * take their inode number from the underlying file's (ino.h: 2^60 + the
 * file's inode number): a listing and a lookup agree without a table
 * entry per listed file.  A table, keyed by that number, remembers the
 * task and the path under its directory of every node the kernel has
 * looked up, until the kernel forgets it (nlookup back to 0).  Two
 * paths to one underlying inode are hard links, so one node is right.
 *
 * Paths are walked one component at a time with O_NOFOLLOW (fsop.h),
 * so a symbolic link a task left in its directory is shown as a link,
 * never followed by spoolfs.  Names "." and ".." and paths deeper than
 * PASS_DEPTH_MAX are refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsop.h"
#include "spoolfs.h"

#define PASS_DEPTH_MAX	64
#define PASS_PATH_MAX	4096

struct pnode {
	uint64_t n;
	uint64_t task;
	char	*rel;
	uint64_t nlookup;
	struct pnode *next;
};

#define PASS_BUCKETS 4096
static struct pnode *table[PASS_BUCKETS];

static struct pnode **
slot(uint64_t n)
{
	struct pnode **p = &table[(n * 0x9e3779b97f4a7c15ULL) >> 52];

	while (*p && (*p)->n != n)
		p = &(*p)->next;
	return p;
}

/* Open tasks/SHARD/ID/rel (a directory), one component at a time. */
static int
walk(uint64_t task, const char *rel)
{
	char path[SPOOL_PATH_MAX], comp[PASS_PATH_MAX];
	const char *p = rel, *slash;
	int fd, next, depth = 0;
	size_t len;

	spool_task_path(task, path, sizeof path);
	if ((fd = fsop_opendir(fs.sp.fd[SD_TASKS], path)) < 0)
		return -1;
	while (*p) {
		slash = strchr(p, '/');
		len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || len >= sizeof comp || ++depth > PASS_DEPTH_MAX) {
			close(fd);
			errno = ENOENT;
			return -1;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		next = fsop_opendir(fd, comp);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p += len + (slash != NULL);
	}
	return fd;
}

/* Split rel into its directory (walked open) and its last name. */
static int
walk_parent(uint64_t task, const char *rel, const char **last)
{
	char dir[PASS_PATH_MAX];
	const char *slash = strrchr(rel, '/');

	if (slash == NULL) {
		*last = rel;
		return walk(task, "");
	}
	if ((size_t)(slash - rel) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = 0;
	*last = slash + 1;
	return walk(task, dir);
}

static int
stat_rel(uint64_t task, const char *rel, struct stat *st)
{
	const char *last;
	int fd, rc, saved;

	if ((fd = walk_parent(task, rel, &last)) < 0)
		return -1;
	rc = fsop_stat(fd, last, st);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

static void
adopt(struct stat *st, uint64_t n)
{
	st->st_ino = ino_of(NK_PASS, n);
	if (S_ISDIR(st->st_mode))
		st->st_nlink = 1;
}

int
pass_lookup(uint64_t task, const char *rel, const char *name, struct stat *st)
{
	char child[PASS_PATH_MAX];
	struct pnode **p, *nd;
	uint64_t n;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strchr(name, '/'))
		return ENOENT;
	if (snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "",
	    name) >= (int)sizeof child)
		return ENAMETOOLONG;
	if (!TV_FINAL(fs_task_state(task)))
		return ENOENT;
	if (stat_rel(task, child, st) < 0)
		return errno == ENOTDIR || errno == ELOOP ? ENOENT : errno;
	n = (uint64_t)st->st_ino & INO_PASS_MASK;
	p = slot(n);
	if ((nd = *p) == NULL) {
		nd = xcalloc(1, sizeof *nd);
		nd->n = n;
		nd->task = task;
		nd->rel = xstrdup(child);
		*p = nd;
	}
	nd->nlookup++;
	adopt(st, n);
	return 0;
}

int
pass_getattr(uint64_t n, struct stat *st)
{
	struct pnode *nd = *slot(n);

	if (nd == NULL)
		return ESTALE;
	if (stat_rel(nd->task, nd->rel, st) < 0)
		return errno;
	adopt(st, n);
	return 0;
}

void
pass_forget(uint64_t n, uint64_t nlookup)
{
	struct pnode **p = slot(n), *nd = *p;

	if (nd == NULL)
		return;
	nd->nlookup = nlookup >= nd->nlookup ? 0 : nd->nlookup - nlookup;
	if (nd->nlookup)
		return;
	*p = nd->next;
	free(nd->rel);
	free(nd);
}

int
pass_dir(struct node nd, uint64_t *task, const char **rel)
{
	struct pnode *p;

	if (nd.kind == NK_TASK) {
		if (!TV_FINAL(fs_task_state(nd.n)))
			return ENOENT;
		*task = nd.n;
		*rel = "";
		return 0;
	}
	if (nd.kind != NK_PASS || (p = *slot(nd.n)) == NULL)
		return ENOENT;
	*task = p->task;
	*rel = p->rel;
	return 0;
}

/* The fixed files of a task directory: tree.c's, not ours. */
static int
fixed_name(const char *name, enum nkind *kind)
{
	static const struct { const char *name; enum nkind kind; } f[] = {
		{ "spec", NK_SPEC }, { "result", NK_RESULT },
		{ "stdout", NK_STDOUT }, { "stderr", NK_STDERR },
		{ "state", NK_STATE }, { "control", NK_CONTROL },
	};
	size_t i;

	for (i = 0; i < sizeof f / sizeof f[0]; i++)
		if (strcmp(name, f[i].name) == 0) {
			*kind = f[i].kind;
			return 1;
		}
	return 0;
}

int
pass_list(uint64_t task, const char *rel, struct dent **d, size_t *nd)
{
	struct dirent *de;
	enum nkind kind;
	DIR *dir;
	mode_t type;
	int fd;

	if ((fd = walk(task, rel)) < 0)
		return errno;
	if ((dir = fdopendir(fd)) == NULL) {
		int saved = errno;

		close(fd);
		return saved;
	}
	while ((errno = 0, de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		type = de->d_type == DT_DIR ? S_IFDIR : de->d_type == DT_LNK ?
		    S_IFLNK : S_IFREG;
		*d = xreallocarray(*d, *nd + 1, sizeof **d);
		if (*rel == 0 && fixed_name(de->d_name, &kind)) {
			if (kind == NK_STATE || kind == NK_CONTROL)
				continue;	/* ours shadow the task's own */
			(*d)[*nd].ino = ino_of(kind, task);
		} else
			(*d)[*nd].ino = ino_of(NK_PASS, (uint64_t)de->d_ino &
			    INO_PASS_MASK);
		(*d)[*nd].name = xstrdup(de->d_name);
		(*d)[*nd].type = type;
		(*nd)++;
	}
	if (errno) {
		int saved = errno;

		closedir(dir);
		return saved;
	}
	closedir(dir);
	return 0;
}

int
pass_open(uint64_t n)
{
	struct pnode *nd = *slot(n);
	const char *last;
	struct stat st;
	int dfd, fd, saved;

	if (nd == NULL) {
		errno = ESTALE;
		return -1;
	}
	if ((dfd = walk_parent(nd->task, nd->rel, &last)) < 0)
		return -1;
	fd = fsop_openfile(dfd, last, O_RDONLY | O_NONBLOCK, 0);
	saved = errno;
	close(dfd);
	errno = saved;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	return fd;
}

int
pass_readlink(uint64_t n, char *out, size_t size)
{
	struct pnode *nd = *slot(n);
	const char *last;
	int dfd, rc, saved;

	if (nd == NULL) {
		errno = ESTALE;
		return -1;
	}
	if ((dfd = walk_parent(nd->task, nd->rel, &last)) < 0)
		return -1;
	rc = fsop_readlink(dfd, last, out, size);
	saved = errno;
	close(dfd);
	errno = saved;
	return rc;
}

void
pass_free_all(void)
{
	struct pnode *nd, *next;
	size_t i;

	for (i = 0; i < PASS_BUCKETS; i++) {
		for (nd = table[i]; nd; nd = next) {
			next = nd->next;
			free(nd->rel);
			free(nd);
		}
		table[i] = NULL;
	}
}

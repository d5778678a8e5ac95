/*
 * unit.h - helpers shared by the cmocka unit tests (not a test itself):
 * the includes in the order cmocka needs them, assertions for table
 * rows that say which row failed, temporary directories and spools.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "spool.h"

#define NELEM(a)	(sizeof (a) / sizeof (a)[0])

/* Fail the test with a message naming the table row. */
#define TFAIL(...) do {							\
	print_error("%s:%d: ", __FILE__, __LINE__);			\
	print_error(__VA_ARGS__);					\
	print_error("\n");						\
	fail();								\
} while (0)

#define TCHECK(cond, ...) do {						\
	if (!(cond)) {							\
		print_error("%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #cond);					\
		TFAIL(__VA_ARGS__);					\
	}								\
} while (0)

/* Report a failed row and count it; the test fails at the end. */
#define TEXPECT(nfail, cond, ...) do {					\
	if (!(cond)) {							\
		print_error("%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #cond);					\
		print_error("%s:%d: ", __FILE__, __LINE__);		\
		print_error(__VA_ARGS__);				\
		print_error("\n");					\
		(nfail)++;						\
	}								\
} while (0)

/* Haystack (may be NULL) contains needle. */
static inline int
unit_contains(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

#define assert_contains(hay, needle) do {				\
	const char *h_ = (hay), *n_ = (needle);				\
	if (!unit_contains(h_, n_))					\
		TFAIL("\"%s\" does not contain \"%s\"",			\
		    h_ ? h_ : "(null)", n_);				\
} while (0)

static inline int
unit_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void
unit_rmrf(const char *path)
{
	if (path)
		(void)nftw(path, unit_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh private directory; the caller frees and removes it. */
static inline char *
unit_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *p = xasprintf("%s/ckspool-unit.XXXXXX",
	    base && *base ? base : "/tmp");

	if (mkdtemp(p) == NULL) {
		print_error("mkdtemp %s: %s\n", p, strerror(errno));
		free(p);
		return NULL;
	}
	return p;
}

/* A fresh mkdtemp() directory, open: a fixture (setup, teardown). */
struct unit_dir {
	char	*dir;
	int	dfd;
};

static inline int
unit_dir_setup(void **state)
{
	struct unit_dir *f = xcalloc(1, sizeof *f);

	*state = f;
	f->dfd = -1;
	if ((f->dir = unit_tmpdir()) == NULL)
		return -1;
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return f->dfd < 0 ? -1 : 0;
}

static inline int
unit_dir_teardown(void **state)
{
	struct unit_dir *f = *state;

	if (f->dfd >= 0)
		close(f->dfd);
	unit_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* An fsop_list callback counting the entries listed in *(int *)arg. */
static inline int
unit_count_listed(void *arg, const char *name, unsigned char type)
{
	(void)name;
	(void)type;
	(*(int *)arg)++;
	return 0;
}

/* Entries of a directory (. and .. aside). */
static inline int
unit_count_entries(int dfd)
{
	struct dirent *e;
	DIR *d;
	int n = 0, fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_non_null(d = fdopendir(fd));
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* Write a whole file (test setup, not the code under test). */
static inline int
unit_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = 0;

	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

/* A spool made with spool_init() in a mkdtemp() directory, opened. */
struct unit_spool {
	char	*dir;		/* the mkdtemp() directory */
	char	*path;		/* dir/spool */
	struct spool sp;
};

static inline int
unit_spool_setup(void **state)
{
	struct unit_spool *u = xcalloc(1, sizeof *u);
	char why[512];

	if ((u->dir = unit_tmpdir()) == NULL)
		goto fail;
	u->path = xasprintf("%s/spool", u->dir);
	if (spool_init(u->path, why, sizeof why) < 0 ||
	    spool_open(&u->sp, u->path, why, sizeof why) < 0) {
		print_error("spool %s: %s\n", u->path, why);
		goto fail;
	}
	*state = u;
	return 0;
fail:
	unit_rmrf(u->dir);
	free(u->dir);
	free(u->path);
	free(u);
	return -1;
}

static inline int
unit_spool_teardown(void **state)
{
	struct unit_spool *u = *state;

	if (u == NULL)
		return 0;
	spool_close(&u->sp);
	unit_rmrf(u->dir);
	free(u->dir);
	free(u->path);
	free(u);
	*state = NULL;
	return 0;
}

#endif

/*
 * spool.c - create and open a spool; see spool.h.
 *
 * spool_init() is idempotent for the directories (EEXIST is fine) but
 * refuses a non-empty directory that is not a spool, nor one left by an
 * interrupted init (halfmade below).  The FORMAT file is written last,
 * so a crash during init leaves something spool_open refuses and
 * spool_init completes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "spool.h"

const char *const spool_dir_name[SD_NDIRS] = {
	"tmp", "incoming", "accepting", "rejected", "specs", "tasks",
	"workers", "ids", "control", "requeued", "state", "lock", "gc", "log",
	"attempts", "jobs", "scale", "journal",
};

const char *
spool_locate(const char *opt)
{
	const char *env;

	if (opt && *opt)
		return opt;
	env = getenv("SPOOL");
	return env && *env ? env : NULL;
}

static int
why_errno(char *why, size_t size, const char *op, const char *obj)
{
	int saved = errno;

	snprintf(why, size, "%s: %s: %s", op, obj, strerror(saved));
	errno = saved;
	return -1;
}

/*
 * Is what a directory without FORMAT holds a spool whose init was
 * interrupted, and nothing else?  Init makes only our directories,
 * empty, and writes FORMAT through tmp/, so a crash can leave in tmp/
 * a file holding the start of FORMAT's text; spool.yaml may have been
 * written first.  Anything else is someone's data, which a spool would
 * take for its own (spoold sweeps tmp/, reads incoming/): the
 * directory is refused, and offending names the first such entry.
 */
struct halfmade {
	int		 dfd;		/* the directory being looked at */
	int		 in_tmp;	/* dfd is tmp/ */
	const char	*in_dir;	/* offending is in this directory */
	char		 offending[256];
	int		 err;		/* errno of a failure, not a finding */
};

static int
offends(struct halfmade *h, const char *name)
{
	snprintf(h->offending, sizeof h->offending, "%s", name);
	return 1;
}

static int
check_leftover(void *arg, const char *name, unsigned char type)
{
	struct halfmade *h = arg;
	struct buf b = BUF_INIT;
	int rc, err, ours;

	(void)type;
	if (!h->in_tmp)
		return offends(h, name);
	rc = fsop_read_file(h->dfd, name, strlen(SPOOL_FORMAT), &b, NULL);
	err = errno;
	ours = rc == 0 && memcmp(b.p, SPOOL_FORMAT, b.len) == 0;
	buf_free(&b);
	if (rc < 0 && err == ENOENT)
		return 0;
	if (rc < 0 && err != EFBIG && err != EINVAL && err != ELOOP) {
		h->err = err;
		return -1;
	}
	return ours ? 0 : offends(h, name);	/* too big, not a file */
}

static int
check_root_entry(void *arg, const char *name, unsigned char type)
{
	struct halfmade *h = arg, sub = { .err = 0 };
	int i, rc;

	(void)type;
	if (strcmp(name, "spool.yaml") == 0)
		return 0;
	for (i = 0; i < SD_NDIRS; i++)
		if (strcmp(name, spool_dir_name[i]) == 0)
			break;
	if (i == SD_NDIRS)
		return offends(h, name);
	if ((sub.dfd = fsop_opendir(h->dfd, name)) < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno != ENOTDIR && errno != ELOOP) {
			h->err = errno;
			return -1;
		}
		return offends(h, name);	/* not a directory */
	}
	sub.in_tmp = i == SD_TMP;
	rc = fsop_list(sub.dfd, ".", check_leftover, &sub);
	if (rc < 0 && sub.err == 0)
		sub.err = errno;
	(void)close(sub.dfd);
	if (sub.err) {
		h->err = sub.err;
		return -1;
	}
	if (rc == 0)
		return 0;
	h->in_dir = spool_dir_name[i];
	return offends(h, sub.offending);
}

int
spool_init(const char *path, char *why, size_t size)
{
	struct halfmade h = { .err = 0 };
	struct stat st;
	int fd, tmpfd = -1, i, rc = -1;

	if (fsop_mkdir(AT_FDCWD, path, 0700) < 0 && errno != EEXIST)
		return why_errno(why, size, "mkdir", journal_q(path));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return why_errno(why, size, "open", journal_q(path));
	if (fstat(fd, &st) < 0) {
		why_errno(why, size, "stat", journal_q(path));
		goto out;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, size, "%s: owned by uid %u, not by you",
		    journal_q(path),
		    (unsigned)st.st_uid);
		goto out;
	}
	if (fsop_stat(fd, "FORMAT", &st) < 0) {
		h.dfd = fd;
		if (fsop_list(fd, ".", check_root_entry, &h) < 0) {
			if (h.err)
				errno = h.err;
			why_errno(why, size, "list", journal_q(path));
			goto out;
		}
		if (h.offending[0]) {
			char what[sizeof h.offending + 16];

			/* someone's name: quoted if not a plain word */
			snprintf(what, sizeof what, "%s%s%s",
			    h.in_dir ? h.in_dir : "", h.in_dir ? "/" : "",
			    h.offending);
			snprintf(why, size, "%s: directory is not empty and is "
			    "not a spool (%s is no part of one)", journal_q(path),
			    journal_q(what));
			goto out;
		}
	}
	for (i = 0; i < SD_NDIRS; i++)
		if (fsop_mkdir(fd, spool_dir_name[i], 0700) < 0 &&
		    errno != EEXIST) {
			why_errno(why, size, "mkdir", spool_dir_name[i]);
			goto out;
		}
	if (fsop_stat(fd, "FORMAT", &st) < 0) {
		/*
		 * Written in tmp/, as every file is: a crash before the
		 * rename leaves it where spoold's recovery sweeps and
		 * "spool fsck --settled" looks, not in the spool's root.
		 */
		if ((tmpfd = fsop_opendir(fd, spool_dir_name[SD_TMP])) < 0) {
			why_errno(why, size, "open", spool_dir_name[SD_TMP]);
			goto out;
		}
		if (fsop_publish(tmpfd, fd, "FORMAT", SPOOL_FORMAT,
		    strlen(SPOOL_FORMAT), 0600, FSOP_DURABLE) < 0) {
			why_errno(why, size, "write", "FORMAT");
			goto out;
		}
	}
	if (fsop_fsync_dir(fd, AT_FDCWD, path) < 0) {
		why_errno(why, size, "fsync", journal_q(path));
		goto out;
	}
	rc = 0;
out:
	if (tmpfd >= 0)
		close(tmpfd);
	close(fd);
	return rc;
}

int
spool_check_owner(const struct spool *sp, const struct stat *st,
    const char **why)
{
	if (st->st_uid != sp->uid) {
		*why = "owned by another user";
		return -1;
	}
	if (st->st_mode & S_IWOTH) {
		*why = "writable by everyone (a shared spool is shared with "
		    "a group: chmod o-w)";
		return -1;
	}
	if ((st->st_mode & S_IWGRP) && !sp->cfg.shared) {
		*why = "writable by others (set daemon: shared: true in "
		    "spool.yaml if this spool is shared)";
		return -1;
	}
	return 0;
}

int
spool_check_submission(const struct spool *sp, const struct stat *st,
    const char **why)
{
	if (!sp->cfg.shared)
		return spool_check_owner(sp, st, why);
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		*why = "writable by others than its owner, who could have "
		    "changed it (chmod go-w)";
		return -1;
	}
	return 0;
}

/*
 * The config is its owner's alone, shared spool or not: it says what
 * runs in every worker job (cluster: job-script-prologue).  Judged by
 * the file that was read (cst, its fstat; st_nlink 0: none), not by a
 * second look at its name, which may find another file by then.
 */
static int
config_owner_check(const struct spool *sp, const struct stat *cst, char *why,
    size_t size)
{
	if (cst->st_nlink == 0 || (cst->st_uid == sp->uid &&
	    (cst->st_mode & (S_IWGRP | S_IWOTH)) == 0))
		return 0;
	snprintf(why, size, "%s/%s: %s", sp->shown, CONFIG_FILE,
	    cst->st_uid != sp->uid ? "owned by another user than the "
	    "spool's owner" : "writable by others than the spool's owner "
	    "(chmod go-w)");
	return -1;
}

int
spool_config_read(const struct spool *sp, struct config *c, char *why,
    size_t size)
{
	struct stat cst;

	if (config_load(c, sp->rootfd, &cst, why, size) < 0)
		return -1;
	if (config_owner_check(sp, &cst, why, size) < 0) {
		config_free(c);
		return -1;
	}
	return 0;
}

int
spool_open(struct spool *sp, const char *path, char *why, size_t size)
{
	struct buf b = BUF_INIT;
	const char *reason;
	struct stat st, cst;
	int i;

	memset(sp, 0, sizeof *sp);
	sp->rootfd = -1;
	for (i = 0; i < SD_NDIRS; i++)
		sp->fd[i] = -1;
	sp->root = xstrdup(path);
	sp->shown = xstrdup(journal_q(path));
	sp->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sp->rootfd < 0) {
		why_errno(why, size, "open spool", sp->shown);
		goto fail;
	}
	if (fsop_read_file(sp->rootfd, "FORMAT", 64, &b, NULL) < 0) {
		if (errno == ENOENT)
			snprintf(why, size, "%s: not a spool (no FORMAT file; "
			    "create one with: spool -S %s init)", sp->shown,
			    sp->shown);
		else
			why_errno(why, size, "read", "FORMAT");
		goto fail;
	}
	if (strcmp(b.p, SPOOL_FORMAT) != 0) {
		snprintf(why, size, "%s: unknown spool format %s", sp->shown,
		    msg_q(b.p));
		goto fail;
	}
	if (fstat(sp->rootfd, &st) < 0) {
		why_errno(why, size, "stat", sp->shown);
		goto fail;
	}
	sp->uid = st.st_uid;
	if (config_load(&sp->cfg, sp->rootfd, &cst, why, size) < 0)
		goto fail;
	fsop_set_sync(sp->cfg.fsync);
	fsop_set_shared(sp->cfg.shared);
	if (spool_check_owner(sp, &st, &reason) < 0) {
		snprintf(why, size, "%s: %s", sp->shown, reason);
		goto fail;
	}
	if (config_owner_check(sp, &cst, why, size) < 0)
		goto fail;
	for (i = 0; i < SD_NDIRS; i++) {
		sp->fd[i] = fsop_opendir(sp->rootfd, spool_dir_name[i]);
		/* directories added after format 1 was fixed: made on open,
		 * where missing (not tried first: every command opens) */
		if (sp->fd[i] < 0 && errno == ENOENT && i >= SD_JOBS) {
			if (fsop_mkdir(sp->rootfd, spool_dir_name[i],
			    0700) < 0 && errno != EEXIST) {
				why_errno(why, size, "mkdir",
				    spool_dir_name[i]);
				goto fail;
			}
			sp->fd[i] = fsop_opendir(sp->rootfd, spool_dir_name[i]);
		}
		if (sp->fd[i] < 0) {
			if (errno == ENOTDIR || errno == ELOOP)
				snprintf(why, size, "%s/%s: not a directory (a "
				    "symlink?)", sp->shown, spool_dir_name[i]);
			else
				why_errno(why, size, "open", spool_dir_name[i]);
			goto fail;
		}
		if (fstat(sp->fd[i], &st) < 0) {
			why_errno(why, size, "stat", spool_dir_name[i]);
			goto fail;
		}
		if (spool_check_owner(sp, &st, &reason) < 0) {
			snprintf(why, size, "%s/%s: %s", sp->shown,
			    spool_dir_name[i], reason);
			goto fail;
		}
	}
	buf_free(&b);
	return 0;
fail:
	buf_free(&b);
	spool_close(sp);
	return -1;
}

void
spool_close(struct spool *sp)
{
	int i;

	for (i = 0; i < SD_NDIRS; i++)
		if (sp->fd[i] >= 0) {
			close(sp->fd[i]);
			sp->fd[i] = -1;
		}
	if (sp->rootfd >= 0)
		close(sp->rootfd);
	sp->rootfd = -1;
	config_free(&sp->cfg);
	free(sp->root);
	free(sp->shown);
	sp->root = sp->shown = NULL;
}

void
spool_task_shard(uint64_t id, char *out, size_t size)
{
	snprintf(out, size, "%" PRIu64, id / SPOOL_SHARD_SIZE);
}

void
spool_task_path(uint64_t id, char *out, size_t size)
{
	snprintf(out, size, "%" PRIu64 "/%" PRIu64, id / SPOOL_SHARD_SIZE, id);
}

int
spool_alive(const struct spool *sp)
{
	struct stat st;
	char *path;
	int rc;

	if (fsop_stat(sp->rootfd, "FORMAT", &st) == 0)
		return 1;
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	if (errno != ESTALE)
		return 1;	/* EIO, EINTR...: not a proof; ask again later */
	/*
	 * A stale handle: our descriptor of the spool may name a directory
	 * that another host removed (NFS), or the server had a hiccup.  A
	 * fresh lookup by path tells them apart.
	 */
	path = xasprintf("%s/FORMAT", sp->root);
	rc = stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
	free(path);
	return rc;
}

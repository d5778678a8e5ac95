/*
 * fault.c - fault injection driven by $CKSPOOL_FAULT; see fault.h.
 *
 * The state is a handful of numbers read once from the environment;
 * with the variable unset, fault_before() costs one test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "journal.h"
#include "msg.h"

#define FAULT_RULES	8

static struct {
	int	read;		/* the environment was looked at */
	int	on;
	int	count_all;
	int	busy_nfs;
	int	lists;		/* a list-fails or list-breaks rule:
				 * name what "." is */
	int	reads;		/* a read-fails rule: name what fd is */
	unsigned long sync_delay_ms;	/* slow-sync */
	char	*sync_hold;	/* sync-holds: the file (NULL: none) */
	unsigned long stat_delay_ms;	/* slow-stat: how long */
	char	stat_prefix[64];	/* ... for names that start so */
	char	fifo_prefix[64];	/* fifo-on-open: names that start so */
	unsigned long fifo_left;	/* ... how many more */
	unsigned long nsyncs;	/* syncfs outcomes taken so far */
	unsigned long sync_from, sync_to;	/* sync-fails: inclusive */
	int	sync_err;
	char	lose_dir[64];	/* sync-loses: the directory */
	unsigned long lose_left;	/* ... how many more */
	unsigned long seq;	/* operations counted so far */
	unsigned long crash_at;
	char	crash_prefix[64];	/* crash-on: names that start so */
	unsigned long crash_left;	/* crash-on: at the Kth of them */
	unsigned long phantom_at;
	int	phantom_armed;	/* the current operation gets it */
	int	phantom_done;
	size_t	nrules;
	struct {
		unsigned long from, to;	/* inclusive */
		int	err;
		char	prefix[64];	/* stat-fails, open-fails, fail-on:
					 * whose name starts so */
		unsigned long left;	/* ... how many more */
		unsigned long skip;	/* ... after letting this many by */
		int	kind;		/* stat-fails, open-fails: of stats
					 * (opens), not mutations (-1);
					 * read-fails: FAULT_READ;
					 * list-breaks: FAULT_LIST_BREAK */
	} rule[FAULT_RULES];
} f;

/* A rule's kind for read-fails: no fsop kind (fsop_pread is not
 * counted); for list-breaks, the end of a listing (not counted). */
#define FAULT_READ	FSOP_NKINDS
#define FAULT_LIST_BREAK	(FSOP_NKINDS + 1)

static const struct {
	const char *name;
	int	err;
} errs[] = {
	{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
	{ "ESTALE", ESTALE }, { "EINTR", EINTR }, { "EACCES", EACCES },
	{ "EPERM", EPERM }, { "EROFS", EROFS }, { "EBUSY", EBUSY },
	{ "ENOENT", ENOENT }, { "EEXIST", EEXIST }, { "ENOMEM", ENOMEM },
	{ "EAGAIN", EAGAIN },
};

static void
fault_bad(const char *spec, const char *item)
{
	msg_fatal_status(EXIT_USAGE, "%s=%s: cannot use \"%s\" (see fault.h: "
	    "crash-at=N, crash-on=PREFIX[*K], fail-at=N:ERR[*K], "
	    "fail-on=PREFIX:ERR[*K][@S], stat-fails=PREFIX:ERR[*K][@S], "
	    "open-fails=PREFIX:ERR[*K][@S], list-fails=PREFIX:ERR[*K][@S], "
	    "list-breaks=PREFIX:ERR[*K][@S], "
	    "read-fails=PREFIX:ERR[*K][@S], "
	    "readlink-fails=PREFIX:ERR[*K][@S], "
	    "sync-fails=N:ERR[*K], sync-loses=DIR[*K], "
	    "phantom-at=N, busy-nfs, count=all, slow-sync=MS, "
	    "sync-holds=PATH, "
	    "slow-stat=PREFIX:MS, fifo-on-open=PREFIX[*K])", FAULT_ENV,
	    spec, item);
}

static unsigned long
fault_number(const char *s, char **end)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoul(s, end, 10);
	return errno ? 0 : v;
}

/* The errno named name (errs[]), or 0. */
static int
fault_errno(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (strcmp(name, errs[i].name) == 0)
			return errs[i].err;
	return 0;
}

/* PREFIX[*K] of val (K: 1 if not given) into prefix (size) and *left. */
static void
fault_prefix(const char *spec, const char *arg, char *val, char *prefix,
    size_t size, unsigned long *left)
{
	unsigned long n = 1;
	char *star, *end;

	if ((star = strchr(val, '*')) != NULL) {
		*star = 0;
		if ((n = fault_number(star + 1, &end)) == 0 || *end)
			fault_bad(spec, arg);
	}
	if (val[0] == 0 || strlen(val) >= size)
		fault_bad(spec, arg);
	memcpy(prefix, val, strlen(val) + 1);
	*left = n;
}

static void
fault_item(const char *spec, const char *arg)
{
	unsigned long n, k = 1;
	char *end, *colon, orig[128], *item = orig;
	int by_name;

	snprintf(orig, sizeof orig, "%s", arg);
	if (strcmp(item, "busy-nfs") == 0) {
		f.busy_nfs = 1;
	} else if (strcmp(item, "count=all") == 0) {
		f.count_all = 1;
	} else if (strncmp(item, "crash-at=", 9) == 0) {
		if ((n = fault_number(item + 9, &end)) == 0 || *end)
			fault_bad(spec, arg);
		f.crash_at = n;
	} else if (strncmp(item, "crash-on=", 9) == 0) {
		fault_prefix(spec, arg, item + 9, f.crash_prefix,
		    sizeof f.crash_prefix, &f.crash_left);
	} else if (strncmp(item, "fifo-on-open=", 13) == 0) {
		fault_prefix(spec, arg, item + 13, f.fifo_prefix,
		    sizeof f.fifo_prefix, &f.fifo_left);
	} else if (strncmp(item, "slow-sync=", 10) == 0) {
		if ((n = fault_number(item + 10, &end)) == 0 || *end)
			fault_bad(spec, arg);
		f.sync_delay_ms = n;
	} else if (strncmp(item, "sync-holds=", 11) == 0) {
		if (item[11] == 0 || f.sync_hold)
			fault_bad(spec, arg);
		f.sync_hold = xstrdup(item + 11);
	} else if (strncmp(item, "slow-stat=", 10) == 0) {
		if ((colon = strchr(item + 10, ':')) == NULL ||
		    colon == item + 10 ||
		    (size_t)(colon - item - 10) >= sizeof f.stat_prefix)
			fault_bad(spec, arg);
		if ((n = fault_number(colon + 1, &end)) == 0 || *end)
			fault_bad(spec, arg);
		memcpy(f.stat_prefix, item + 10, (size_t)(colon - item - 10));
		f.stat_prefix[colon - item - 10] = 0;
		f.stat_delay_ms = n;
	} else if (strncmp(item, "sync-fails=", 11) == 0) {
		if ((n = fault_number(item + 11, &end)) == 0 || *end != ':')
			fault_bad(spec, arg);
		colon = end + 1;
		if ((end = strchr(colon, '*')) != NULL) {
			*end = 0;
			if ((k = fault_number(end + 1, &end)) == 0 || *end)
				fault_bad(spec, arg);
		}
		if ((f.sync_err = fault_errno(colon)) == 0)
			fault_bad(spec, arg);
		f.sync_from = n;
		f.sync_to = n + k - 1;
	} else if (strncmp(item, "sync-loses=", 11) == 0) {
		fault_prefix(spec, arg, item + 11, f.lose_dir,
		    sizeof f.lose_dir, &f.lose_left);
	} else if (strncmp(item, "phantom-at=", 11) == 0) {
		if ((n = fault_number(item + 11, &end)) == 0 || *end)
			fault_bad(spec, arg);
		f.phantom_at = n;
	} else if ((by_name = strncmp(item, "stat-fails=", 11) == 0 ||
	    strncmp(item, "open-fails=", 11) == 0 ||
	    strncmp(item, "list-fails=", 11) == 0 ||
	    strncmp(item, "read-fails=", 11) == 0 ? 11 :
	    strncmp(item, "list-breaks=", 12) == 0 ? 12 :
	    strncmp(item, "readlink-fails=", 15) == 0 ? 15 :
	    strncmp(item, "fail-on=", 8) == 0 ? 8 : 0) ||
	    strncmp(item, "fail-at=", 8) == 0) {
		if (f.nrules == FAULT_RULES)
			fault_bad(spec, arg);
		if (by_name) {
			n = 0;
			if ((end = strchr(item + by_name, ':')) == NULL ||
			    end == item + by_name ||
			    (size_t)(end - item - by_name) >=
			    sizeof f.rule[0].prefix)
				fault_bad(spec, arg);
			memcpy(f.rule[f.nrules].prefix, item + by_name,
			    (size_t)(end - item - by_name));
			f.rule[f.nrules].kind = by_name == 8 ? -1 :
			    by_name == 15 ? FSOP_READLINK :
			    by_name == 12 ? FAULT_LIST_BREAK :
			    item[0] == 's' ? FSOP_STAT : item[0] == 'l' ?
			    FSOP_LIST : item[0] == 'r' ? FAULT_READ : FSOP_OPEN;
			f.lists |= item[0] == 'l';
			f.reads |= f.rule[f.nrules].kind == FAULT_READ;
		} else if ((n = fault_number(item + 8, &end)) == 0 ||
		    *end != ':')
			fault_bad(spec, arg);
		colon = end + 1;
		/* (by name: @S lets the first S of them by) */
		if (by_name && (end = strchr(colon, '@')) != NULL) {
			*end = 0;
			if ((f.rule[f.nrules].skip = fault_number(end + 1,
			    &end)) == 0 || *end)
				fault_bad(spec, arg);
		}
		if ((end = strchr(colon, '*')) != NULL) {
			*end = 0;
			if ((k = fault_number(end + 1, &end)) == 0 || *end)
				fault_bad(spec, arg);
		}
		if ((f.rule[f.nrules].err = fault_errno(colon)) == 0)
			fault_bad(spec, arg);
		f.rule[f.nrules].from = n;
		f.rule[f.nrules].to = by_name ? 0 : n + k - 1;
		f.rule[f.nrules].left = by_name ? k : 0;
		f.nrules++;
	} else {
		fault_bad(spec, arg);
	}
}

static void
fault_read(void)
{
	const char *env = getenv(FAULT_ENV);
	char *spec, *item, *save = NULL;

	f.read = 1;
	if (env == NULL || *env == 0)
		return;
	spec = xstrdup(env);
	for (item = strtok_r(spec, ",", &save); item;
	    item = strtok_r(NULL, ",", &save))
		fault_item(env, item);
	msg_warn("fault injection is on: %s=%s", FAULT_ENV, env);
	free(spec);
	(void)unsetenv(FAULT_ENV);
	f.on = 1;
}

/*
 * Rule i, one by name, fails this operation of kind (an fsop kind, or
 * FAULT_READ) on name: 1, counted; 0 (one of the S let by, counted).
 */
static int
rule_takes(size_t i, int kind, const char *name)
{
	return f.rule[i].left && (f.rule[i].kind < 0 ? kind < FSOP_OPEN :
	    kind == f.rule[i].kind) && name && strncmp(name,
	    f.rule[i].prefix, strlen(f.rule[i].prefix)) == 0 &&
	    (f.rule[i].skip ? (f.rule[i].skip--, 0) : f.rule[i].left--);
}

int
fault_before(enum fsop_kind kind, const char *name)
{
	size_t i;

	if (!f.read)
		fault_read();
	if (!f.on || (kind >= FSOP_OPEN && !f.count_all))
		return 0;
	f.seq++;
	if (kind == FSOP_STAT && f.stat_delay_ms && name &&
	    strncmp(name, f.stat_prefix, strlen(f.stat_prefix)) == 0)
		fault_sync_delay(f.stat_delay_ms, NULL);
	if (f.seq == f.crash_at || (f.crash_left && kind < FSOP_OPEN &&
	    name && strncmp(name, f.crash_prefix,
	    strlen(f.crash_prefix)) == 0 && --f.crash_left == 0)) {
		msg_warn("fault injection: crash before operation %lu (%s %s)",
		    f.seq, fsop_kind_name[kind], name ? journal_q(name) : "-");
		_exit(FAULT_CRASH_STATUS);
	}
	if (f.phantom_at && f.seq >= f.phantom_at && !f.phantom_done &&
	    (kind == FSOP_RENAME || kind == FSOP_MKDIR ||
	    kind == FSOP_SYMLINK || kind == FSOP_UNLINK || kind == FSOP_RMDIR))
		f.phantom_armed = 1;
	for (i = 0; i < f.nrules; i++)
		if ((f.rule[i].from && f.seq >= f.rule[i].from &&
		    f.seq <= f.rule[i].to) || rule_takes(i, (int)kind, name)) {
			msg_warn("fault injection: operation %lu (%s %s) fails: "
			    "%s", f.seq, fsop_kind_name[kind], name ?
			    journal_q(name) : "-",
			    strerror(f.rule[i].err));
			f.phantom_armed = 0;
			return f.rule[i].err;
		}
	return 0;
}

int
fault_after(enum fsop_kind kind, int rc)
{
	if (!f.phantom_armed)
		return rc;
	f.phantom_armed = 0;
	if (rc < 0)	/* not done: the next such operation gets it */
		return rc;
	f.phantom_done = 1;
	errno = (kind == FSOP_MKDIR || kind == FSOP_SYMLINK) ? EEXIST : ENOENT;
	msg_warn("fault injection: operation %lu (%s) was done but reports: %s",
	    f.seq, fsop_kind_name[kind], strerror(errno));
	return -1;
}

/* The last component of the path of what fd is open on, in buf: 1, or
 * 0 if it cannot be known. */
static int
fd_name(int fd, char *buf, size_t size)
{
	char link[32], path[4096];
	const char *slash;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof path - 1)) < 0)
		return 0;
	path[n] = 0;
	slash = strrchr(path, '/');
	snprintf(buf, size, "%s", slash ? slash + 1 : path);
	return 1;
}

const char *
fault_list_name(int dfd, const char *name, char *buf, size_t size)
{
	if (!f.read)
		fault_read();
	if (!f.on || !f.lists || strcmp(name, ".") != 0)
		return name;
	return fd_name(dfd, buf, size) ? buf : name;
}

int
fault_list_breaks(const char *name)
{
	size_t i;

	if (!f.read)
		fault_read();
	if (!f.on || !f.lists)
		return 0;
	for (i = 0; i < f.nrules; i++)
		if (rule_takes(i, FAULT_LIST_BREAK, name)) {
			msg_warn("fault injection: a listing of %s fails after "
			    "its last entry: %s", journal_q(name),
			    strerror(f.rule[i].err));
			return f.rule[i].err;
		}
	return 0;
}

int
fault_read_fails(int fd)
{
	char buf[256];
	size_t i;

	if (!f.read)
		fault_read();
	if (!f.on || !f.reads || !fd_name(fd, buf, sizeof buf))
		return 0;
	for (i = 0; i < f.nrules; i++)
		if (rule_takes(i, FAULT_READ, buf)) {
			msg_warn("fault injection: a read of %s fails: %s",
			    journal_q(buf),
			    strerror(f.rule[i].err));
			return f.rule[i].err;
		}
	return 0;
}

void
fault_open(int dfd, const char *name)
{
	if (!f.on || f.fifo_left == 0 || strncmp(name, f.fifo_prefix,
	    strlen(f.fifo_prefix)) != 0)
		return;
	f.fifo_left--;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		msg_warn("fault injection: unlink: %s: %m", journal_q(name));
	else if (mkfifoat(dfd, name, 0600) < 0)
		msg_warn("fault injection: mkfifo: %s: %m", journal_q(name));
	else
		msg_warn("fault injection: %s is a FIFO now, before its open",
		    journal_q(name));
}

int
fault_unlink(const char *name)
{
	if (!f.busy_nfs || (strncmp(name, ".nfs", 4) != 0 &&
	    strncmp(name, ".fuse_hidden", 12) != 0))
		return 0;
	errno = EBUSY;
	return 1;
}

int
fault_sync_result(int err)
{
	if (!f.read)
		fault_read();
	if (!f.on || f.sync_from == 0)
		return err;
	f.nsyncs++;
	if (err == 0 && f.nsyncs >= f.sync_from && f.nsyncs <= f.sync_to) {
		msg_warn("fault injection: syncfs %lu reports: %s", f.nsyncs,
		    strerror(f.sync_err));
		return f.sync_err;
	}
	return err;
}

int
fault_sync_loses(int anyfd)
{
	struct dirent *de;
	DIR *d;
	int dfd, n = 0;

	if (!f.read)
		fault_read();
	if (!f.on || f.lose_left == 0)
		return 0;
	if ((dfd = openat(anyfd, f.lose_dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    (d = fdopendir(dfd)) == NULL) {
		msg_warn("fault injection: open: %s: %m", f.lose_dir);
		if (dfd >= 0)
			(void)close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			if (unlinkat(dfd, de->d_name, 0) < 0)
				msg_warn("fault injection: unlink: %s/%s: %m",
				    f.lose_dir, journal_q(de->d_name));
			else {
				msg_warn("fault injection: syncfs loses %s/%s",
				    f.lose_dir, journal_q(de->d_name));
				n++;
			}
		}
	(void)closedir(d);
	if (n == 0)
		return 0;
	f.lose_left--;
	msg_warn("fault injection: syncfs reports: %s", strerror(EIO));
	return EIO;
}

unsigned long
fault_count(void)
{
	return f.seq;
}

void
fault_reload(void)
{
	free(f.sync_hold);
	memset(&f, 0, sizeof f);
}

unsigned long
fault_sync_delay_ms(void)
{
	if (!f.read)
		fault_read();
	return f.sync_delay_ms;
}

const char *
fault_sync_hold(void)
{
	if (!f.read)
		fault_read();
	return f.sync_hold;
}

void
fault_sync_delay(unsigned long ms, const char *hold)
{
	struct timespec ts = { (time_t)(ms / 1000),
	    (long)(ms % 1000) * 1000000L };
	const struct timespec tick = { 0, 10 * 1000000L };

	while (ms && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	if (hold == NULL)
		return;
	while (access(hold, F_OK) == 0)
		(void)nanosleep(&tick, NULL);
	if (errno != ENOENT)
		msg_warn("fault injection: sync-holds: access: %s: %m", hold);
}

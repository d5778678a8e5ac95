/*
 * ptree.c - a task's process tree, followed through /proc.
 *
 * Where no cgroup holds a task (the watchdog method), the worker finds
 * the task's processes by walking /proc/PID/task/TID/children from the
 * task's main process, plus the processes it saw in the previous scan
 * that still live (checked by start time, so a reused pid is not
 * mistaken for one of them), plus orphans the caller attributed to the
 * task.  The worker is a child subreaper (PR_SET_CHILD_SUBREAPER), so
 * a process whose parent died is re-parented to the worker, not to
 * init, and the caller can attribute it (limits.c).
 *
 * The memory of the tree is the sum of the resident set sizes (field
 * 24 of /proc/PID/stat).  Pages shared between processes of the tree
 * are counted once per process, so the sum can overstate the memory
 * the tree really uses; it is also only as fresh as the last scan.
 *
 * /proc is a kernel interface, not the spool: plain system calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "ptree.h"

#define STOP_ROUNDS	8
#define ENVIRON_MAX	(256 * 1024)

static long page_size;

static ssize_t
read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	buf[got] = 0;
	close(fd);
	return (ssize_t)got;
}

int
ptree_stat(pid_t pid, struct pstat *st)
{
	char path[64], buf[1024], *rp;
	long rss;
	int ppid, pgid, sid;

	if (page_size == 0)
		page_size = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_file(path, buf, sizeof buf) <= 0 ||
	    (rp = strrchr(buf, ')')) == NULL)
		return -1;
	if (sscanf(rp + 2, "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
	    "%*d %*d %*d %*d %*d %*d %llu %*u %ld", &st->state, &ppid, &pgid,
	    &sid, &st->start, &rss) != 6)
		return -1;
	st->ppid = (pid_t)ppid;
	st->pgid = (pid_t)pgid;
	st->sid = (pid_t)sid;
	st->rss = rss > 0 && page_size > 0 ? (uint64_t)rss * (uint64_t)page_size :
	    0;
	return 0;
}

/* Append the children of pid (all its threads') to *q. */
static void
children_of(pid_t pid, pid_t **q, size_t *nq)
{
	char path[96], buf[8192], *p, *end;
	struct dirent *e;
	DIR *d;
	long c;

	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%ld/task/%.20s/children",
		    (long)pid, e->d_name);
		if (read_file(path, buf, sizeof buf) <= 0)
			continue;
		for (p = buf; (c = strtol(p, &end, 10)) > 0 && end != p; p = end) {
			*q = xreallocarray(*q, *nq + 1, sizeof **q);
			(*q)[(*nq)++] = (pid_t)c;
		}
	}
	closedir(d);
}

size_t
ptree_children(pid_t pid, pid_t **out)
{
	size_t n = 0;

	*out = NULL;
	children_of(pid, out, &n);
	return n;
}

static const struct pent *
find(const struct pent *p, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i].pid == pid)
			return &p[i];
	return NULL;
}

int
ptree_has(const struct ptree *t, pid_t pid)
{
	return find(t->p, t->n, pid) != NULL;
}

void
ptree_scan(struct ptree *t, pid_t root, const pid_t *extra, size_t nextra)
{
	struct pent *seen = NULL;
	const struct pent *old;
	struct pstat st;
	pid_t *q = NULL, pid;
	size_t nq = 0, head = 0, n = 0, i;
	uint64_t rss = 0;

	if (root > 0) {
		q = xreallocarray(q, nq + 1, sizeof *q);
		q[nq++] = root;
	}
	for (i = 0; i < t->n; i++) {
		q = xreallocarray(q, nq + 1, sizeof *q);
		q[nq++] = t->p[i].pid;
	}
	for (i = 0; i < nextra; i++) {
		q = xreallocarray(q, nq + 1, sizeof *q);
		q[nq++] = extra[i];
	}
	t->truncated = 0;
	while (head < nq) {
		pid = q[head++];
		if (find(seen, n, pid) || ptree_stat(pid, &st) < 0)
			continue;
		/* a pid seen before must still be the same process */
		if ((old = find(t->p, t->n, pid)) != NULL && old->start != st.start)
			continue;
		if (n == PTREE_MAX) {
			t->truncated = 1;
			break;
		}
		seen = xreallocarray(seen, n + 1, sizeof *seen);
		seen[n].pid = pid;
		seen[n++].start = st.start;
		rss += st.rss;
		if (st.state != 'Z')
			children_of(pid, &q, &nq);
	}
	free(q);
	free(t->p);
	t->p = seen;
	t->n = n;
	t->rss = rss;
	if (rss > t->peak)
		t->peak = rss;
}

int
ptree_signal(struct ptree *t, pid_t pgid, int sig)
{
	size_t i, before;
	int round, n = 0;

	if (sig == SIGKILL) {
		/* freeze the tree so that nothing forks out of it */
		if (pgid > 0)
			(void)kill(-pgid, SIGSTOP);
		for (round = 0; round < STOP_ROUNDS; round++) {
			before = t->n;
			for (i = 0; i < t->n; i++)
				(void)kill(t->p[i].pid, SIGSTOP);
			ptree_scan(t, 0, NULL, 0);
			if (t->n <= before && round > 0)
				break;
		}
	} else
		ptree_scan(t, 0, NULL, 0);
	if (pgid > 0)
		(void)kill(-pgid, sig);
	for (i = 0; i < t->n; i++)
		if (kill(t->p[i].pid, sig) == 0)
			n++;
	return n;	/* SIGKILL ends stopped processes too */
}

int
ptree_task_of(pid_t pid, uint64_t *id, uint32_t *attempt)
{
	char path[64], *buf, *p, *end;
	ssize_t n;
	int have = 0;

	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	buf = xmalloc(ENVIRON_MAX);
	if ((n = read_file(path, buf, ENVIRON_MAX)) <= 0) {
		free(buf);
		return -1;
	}
	for (p = buf; p < buf + n; p += strlen(p) + 1) {
		if (strncmp(p, "SPOOL_TASK_ID=", 14) == 0) {
			*id = strtoull(p + 14, &end, 10);
			have |= *end == 0 && end != p + 14;
		} else if (strncmp(p, "SPOOL_ATTEMPT=", 14) == 0) {
			*attempt = (uint32_t)strtoul(p + 14, &end, 10);
			have |= (*end == 0 && end != p + 14) << 1;
		}
	}
	free(buf);
	return have == 3 ? 0 : -1;
}

void
ptree_free(struct ptree *t)
{
	free(t->p);
	memset(t, 0, sizeof *t);
}

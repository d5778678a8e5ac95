/*
 * ptree.c - a task's process tree, followed through /proc.
 *
 * Where no cgroup holds a task (the watchdog method), the worker finds
 * the task's processes in a snapshot of every process of the host
 * (psnap_take: /proc/PID/stat of each; one snapshot per watch tick
 * serves all tasks): the descendants of the task's main process, plus
 * the processes seen in the previous scan that still live (same start
 * time, so a reused pid is not mistaken for one of them) and their
 * descendants, plus orphans the caller attributed to the task.  A
 * process that calls setsid() or double-forks stays a member once it
 * has been seen.  The worker is a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so a process whose parent died is
 * re-parented to the worker, not to init, and the caller attributes it
 * by its environment (ptree_task_of; limits.c).
 *
 * The snapshot is used rather than /proc/PID/task/TID/children because
 * that file exists only on kernels built with CONFIG_PROC_CHILDREN.
 *
 * The memory of the tree is the sum of the resident set sizes (field
 * 24 of /proc/PID/stat).  Pages shared between processes of the tree
 * are counted once per process, so the sum can overstate the memory
 * the tree really uses; it is also only as fresh as the last scan.
 *
 * /proc is a kernel interface, not the spool: plain system calls.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "hostinfo.h"
#include "ptree.h"

#define STOP_ROUNDS	8
#define ENVIRON_MAX	(256 * 1024)
#define ENVIRON_TRIES	50	/* reads of an empty environ, 200 us apart */

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

/* Fields of /proc/PID/stat; -1 if the process is gone. */
static int
ptree_stat(pid_t pid, struct pproc *st)
{
	char buf[1024];
	const char *rp;
	long rss;
	int ppid, pgid, sid;

	if (page_size == 0)
		page_size = sysconf(_SC_PAGESIZE);
	if ((rp = host_proc_stat(pid, buf, sizeof buf, NULL)) == NULL)
		return -1;
	if (sscanf(rp, "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
	    "%*d %*d %*d %*d %*d %*d %llu %*u %ld", &st->state, &ppid, &pgid,
	    &sid, &st->start, &rss) != 6) {
		errno = EPROTO;
		return -1;
	}
	st->pid = pid;
	st->ppid = (pid_t)ppid;
	st->pgid = (pid_t)pgid;
	st->sid = (pid_t)sid;
	st->rss = rss > 0 && page_size > 0 ? (uint64_t)rss * (uint64_t)page_size :
	    0;
	return 0;
}

static int
pid_cmp(const void *a, const void *b)
{
	const struct pproc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* qsort has no context argument: the snapshot being sorted. */
static const struct psnap *sorting;

static int
ppid_cmp(const void *a, const void *b)
{
	const struct pproc *x = &sorting->p[*(const uint32_t *)a];
	const struct pproc *y = &sorting->p[*(const uint32_t *)b];

	if (x->ppid != y->ppid)
		return x->ppid < y->ppid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int
psnap_take(struct psnap *s)
{
	struct dirent *e;
	struct pproc st;
	size_t cap = 0;
	char *end;
	long pid;
	DIR *d;

	memset(s, 0, sizeof *s);
	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && s->n < PSNAP_MAX) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || ptree_stat((pid_t)pid, &st) < 0)
			continue;	/* gone meanwhile */
		if (s->n == cap) {
			cap = cap ? 2 * cap : 256;
			s->p = xreallocarray(s->p, cap, sizeof *s->p);
		}
		s->p[s->n++] = st;
	}
	closedir(d);
	psnap_index(s);
	return 0;
}

void
psnap_index(struct psnap *s)
{
	size_t i;

	if (s->n)
		qsort(s->p, s->n, sizeof *s->p, pid_cmp);
	free(s->by_ppid);
	s->by_ppid = xreallocarray(NULL, s->n ? s->n : 1, sizeof *s->by_ppid);
	for (i = 0; i < s->n; i++)
		s->by_ppid[i] = (uint32_t)i;
	sorting = s;
	if (s->n)
		qsort(s->by_ppid, s->n, sizeof *s->by_ppid, ppid_cmp);
	sorting = NULL;
}

static const struct pproc *
psnap_find(const struct psnap *s, pid_t pid)
{
	size_t lo = 0, hi = s->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->p[mid].pid == pid)
			return &s->p[mid];
		if (s->p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Index in by_ppid of the first child of pid (or where it would be). */
static size_t
first_child(const struct psnap *s, pid_t pid)
{
	size_t lo = 0, hi = s->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->p[s->by_ppid[mid]].ppid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
psnap_free(struct psnap *s)
{
	free(s->p);
	free(s->by_ppid);
	memset(s, 0, sizeof *s);
}

static int
pent_cmp(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A member by pid (t->p is sorted by pid: ptree_scan, ptree_set). */
static const struct pent *
find(const struct pent *p, size_t n, pid_t pid)
{
	const struct pent key = { pid, 0 };

	return n ? bsearch(&key, p, n, sizeof *p, pent_cmp) : NULL;
}

int
ptree_has(const struct ptree *t, pid_t pid)
{
	return find(t->p, t->n, pid) != NULL;
}

static void
push(pid_t **q, size_t *nq, pid_t pid)
{
	*q = xreallocarray(*q, *nq + 1, sizeof **q);
	(*q)[(*nq)++] = pid;
}

void
ptree_scan(struct ptree *t, const struct psnap *s, pid_t root,
    const pid_t *extra, size_t nextra)
{
	struct pent *seen = NULL;
	const struct pent *old;
	const struct pproc *e;
	unsigned char *taken = xcalloc(s->n ? s->n : 1, 1);	/* by s->p index */
	pid_t *q = NULL, pid;
	size_t nq = 0, head = 0, n = 0, cap = 0, i, k;
	uint64_t rss = 0;

	if (root > 0)
		push(&q, &nq, root);
	for (i = 0; i < t->n; i++)
		push(&q, &nq, t->p[i].pid);
	for (i = 0; i < nextra; i++)
		push(&q, &nq, extra[i]);
	/*
	 * Every member, however many: a tree cut short at some count
	 * would leave the processes past it out of the memory sum and
	 * alive after the task (ptree_signal kills the members).
	 */
	while (head < nq) {
		pid = q[head++];
		if ((e = psnap_find(s, pid)) == NULL || taken[e - s->p])
			continue;
		/* a pid seen before must still be the same process */
		if ((old = find(t->p, t->n, pid)) != NULL && old->start != e->start)
			continue;
		taken[e - s->p] = 1;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			seen = xreallocarray(seen, cap, sizeof *seen);
		}
		seen[n].pid = pid;
		seen[n++].start = e->start;
		rss += e->rss;
		if (e->state == 'Z')
			continue;
		for (k = first_child(s, pid); k < s->n &&
		    s->p[s->by_ppid[k]].ppid == pid; k++)
			push(&q, &nq, s->p[s->by_ppid[k]].pid);
	}
	free(q);
	free(taken);
	if (n > 1)
		qsort(seen, n, sizeof *seen, pent_cmp);
	free(t->p);
	t->p = seen;
	t->n = n;
	t->rss = rss;
	if (rss > t->peak)
		t->peak = rss;
}

void
ptree_set(struct ptree *t, const pid_t *pids, size_t n, int starts)
{
	struct pproc st;
	size_t i, k = 0;

	free(t->p);
	t->p = xreallocarray(NULL, n ? n : 1, sizeof *t->p);
	for (i = 0; i < n && k < PTREE_MAX; i++) {
		t->p[k].pid = pids[i];
		t->p[k++].start = starts && ptree_stat(pids[i], &st) == 0 ?
		    st.start : 0;
	}
	t->n = k;
	if (k > 1)
		qsort(t->p, k, sizeof *t->p, pent_cmp);
}

static void
rescan(struct ptree *t)
{
	struct psnap s;

	if (psnap_take(&s) < 0)
		return;		/* keep the members known */
	ptree_scan(t, &s, 0, NULL, 0);
	psnap_free(&s);
}

#define KIDS_MAX	512

static int	task_of(pid_t pid, uint64_t *id, uint32_t *attempt, int tries);

/* The worker's children (of its main thread, which re-parenting picks
 * first) into kids; how many, or -1 (no such file, an error, or more
 * than KIDS_MAX). */
static int
own_children(pid_t *kids)
{
	char path[64], buf[KIDS_MAX * 8], *p, *end;
	ssize_t n;
	long pid;
	int k = 0;

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children",
	    (long)getpid(), (long)getpid());
	if ((n = read_file(path, buf, sizeof buf)) < 0)
		return -1;
	if ((size_t)n + 1 >= sizeof buf) {
		errno = EOVERFLOW;
		return -1;
	}
	for (p = buf; *p; p = end) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (*p == 0)
			break;
		pid = strtol(p, &end, 10);
		if (end == p || pid <= 0 || k == KIDS_MAX) {
			errno = end == p || pid <= 0 ? EINVAL : EOVERFLOW;
			return -1;
		}
		kids[k++] = (pid_t)pid;
	}
	return k;
}

static int
is_main(pid_t pid, const pid_t *mains, size_t nmains)
{
	size_t i;

	for (i = 0; i < nmains; i++)
		if (mains[i] == pid)
			return 1;
	return 0;
}

/*
 * A snapshot reads /proc/PID/stat of every process of the host, which
 * costs more than a short task itself; at a task's end it is usually
 * not needed.  The worker is a child subreaper, so once the main
 * process is gone every surviving process of the task either is still
 * in its process group or descends from a process that was re-parented
 * to the worker.  If the group is empty and the worker's children
 * (/proc/PID/task/PID/children, the thread that re-parenting picks
 * first) are all main processes of other tasks, nothing is left.
 * Without that file (kernels without CONFIG_PROC_CHILDREN), with any
 * other child, or on any error, it proves nothing.
 */
int
ptree_none_left(pid_t pgid, const pid_t *mains, size_t nmains)
{
	pid_t kids[KIDS_MAX];
	int n, i;

	if (kill(-pgid, 0) == 0 || errno != ESRCH)
		return 0;
	if ((n = own_children(kids)) < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_main(kids[i], mains, nmains))
			return 0;
	return 1;
}

int
ptree_task_left(pid_t pgid, uint64_t id, uint32_t attempt,
    const pid_t *mains, size_t nmains)
{
	pid_t kids[KIDS_MAX];
	struct pproc st;
	uint64_t kid_id;
	uint32_t kid_att;
	int n, i;

	if (kill(-pgid, 0) == 0 || errno != ESRCH)
		return 1;
	if ((n = own_children(kids)) < 0)
		return -1;
	/*
	 * Only a child proved another task's is passed over.  A zombie
	 * counts until the worker reaps it: it may be one of the task's
	 * that was still exiting when the list was read, and whose own
	 * children came to the worker after it.
	 */
	for (i = 0; i < n; i++) {
		if (is_main(kids[i], mains, nmains))
			continue;
		if (ptree_stat(kids[i], &st) < 0)
			continue;	/* reaped since */
		if (st.state == 'Z' || st.state == 'X')
			return 1;
		/* (an empty environment, a process inside execve or
		 * exiting, is not waited for: it counts, and the next
		 * look, 10 ms on, sees it again) */
		if (task_of(kids[i], &kid_id, &kid_att, 0) < 0 ||
		    (kid_id == id && kid_att == attempt))
			return 1;
	}
	return 0;
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
			rescan(t);
			if (t->n <= before && round > 0)
				break;
		}
	} else
		rescan(t);
	if (pgid > 0)
		(void)kill(-pgid, sig);
	for (i = 0; i < t->n; i++)
		if (kill(t->p[i].pid, sig) == 0)
			n++;
	return n;	/* SIGKILL ends stopped processes too */
}

/*
 * /proc/PID/environ into *env (one buffer of ENVIRON_MAX bytes, made
 * at the first call and kept: the guard reads every process's at a
 * worker's end, and only the worker's main thread reads them), reading
 * an empty one up to tries times more: its length, 0, or -1 with
 * errno.  Empty while the process is inside execve(), between the
 * switch to its new memory and the setup of the new stack: asked
 * again, for a bounded time (an orphan found just as it execs, such as
 * a setsid "sh -c '...; exec sleep'", is still a task's).
 */
static ssize_t
read_environ(pid_t pid, int tries, const char **env)
{
	static char *buf;
	char path[64];
	ssize_t n;

	if (buf == NULL)
		buf = xmalloc(ENVIRON_MAX);
	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	while ((n = read_file(path, buf, ENVIRON_MAX)) == 0 && tries-- > 0)
		(void)nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	*env = buf;
	return n;
}

int
ptree_env_has(pid_t pid, const char *entry)
{
	const char *env, *p;
	ssize_t n;

	if ((n = read_environ(pid, 0, &env)) < 0)
		return -1;
	for (p = env; p < env + n; p += strlen(p) + 1)
		if (strcmp(p, entry) == 0)
			return 1;
	return 0;
}

/* ptree_task_of, reading an empty environment up to tries times more */
static int
task_of(pid_t pid, uint64_t *id, uint32_t *attempt, int tries)
{
	const char *env, *p;
	char *end;
	ssize_t n;
	int have = 0;

	if ((n = read_environ(pid, tries, &env)) <= 0)
		return -1;
	for (p = env; p < env + n; p += strlen(p) + 1) {
		if (strncmp(p, "SPOOL_TASK_ID=", 14) == 0) {
			*id = strtoull(p + 14, &end, 10);
			have |= *end == 0 && end != p + 14;
		} else if (strncmp(p, "SPOOL_ATTEMPT=", 14) == 0) {
			*attempt = (uint32_t)strtoul(p + 14, &end, 10);
			have |= (*end == 0 && end != p + 14) << 1;
		}
	}
	return have == 3 ? 0 : -1;
}

char
ptree_kernel_wait(pid_t pid, char *how, size_t size)
{
	char path[64], wchan[128];
	struct pproc st;
	ssize_t n;

	if (ptree_stat(pid, &st) < 0) {
		snprintf(how, size, "state unknown: /proc/%ld/stat: %s",
		    (long)pid, strerror(errno));
		return 0;
	}
	snprintf(path, sizeof path, "/proc/%ld/wchan", (long)pid);
	if ((n = read_file(path, wchan, sizeof wchan)) < 0)
		snprintf(how, size, "state %c; wchan: %s", st.state,
		    strerror(errno));
	else if (n == 0 || strcmp(wchan, "0") == 0)	/* (not shown) */
		snprintf(how, size, "state %c", st.state);
	else
		snprintf(how, size, "state %c, wchan %s", st.state, wchan);
	return st.state;
}

/* clock ticks as a timeval */
static struct timeval
ticks_tv(unsigned long long t, long hz)
{
	return (struct timeval){ (time_t)(t / (unsigned long long)hz),
	    (suseconds_t)(t % (unsigned long long)hz * 1000000 /
	    (unsigned long long)hz) };
}

int
ptree_usage(pid_t pid, struct rusage *ru)
{
	char path[64], buf[4096];
	const char *p;
	unsigned long long ut, st, cut, cst, hwm;
	long hz = sysconf(_SC_CLK_TCK);

	memset(ru, 0, sizeof *ru);
	if ((p = host_proc_stat(pid, buf, sizeof buf, NULL)) == NULL)
		return -1;
	if (hz <= 0 || sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
	    "%*u %llu %llu %llu %llu", &ut, &st, &cut, &cst) != 4) {
		errno = EPROTO;
		return -1;
	}
	ru->ru_utime = ticks_tv(ut + cut, hz);
	ru->ru_stime = ticks_tv(st + cst, hz);
	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if (read_file(path, buf, sizeof buf) < 0)
		return -1;
	if ((p = strstr(buf, "\nVmHWM:")) != NULL &&
	    sscanf(p + 7, "%llu", &hwm) == 1)
		ru->ru_maxrss = (long)hwm;
	return 0;
}

int
ptree_task_of(pid_t pid, uint64_t *id, uint32_t *attempt)
{
	return task_of(pid, id, attempt, ENVIRON_TRIES);
}

void
ptree_free(struct ptree *t)
{
	free(t->p);
	memset(t, 0, sizeof *t);
}

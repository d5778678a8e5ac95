/*
 * recover.c - spoold's start: rebuild memory from the files.
 *
 * Recovery is not a special mode (Postfix): it is what every start
 * does, and it is correct whatever moment the previous spoold died at.
 *
 *  1. tmp/: remove temporary files whose writer is gone (this host,
 *     dead pid) or that are older than a day, after moving a final
 *     directory's earlier attempts back to attempts/ (finish.c moves
 *     them in before its rename); gc/: finish removals.
 *     workers/WID/work/: acceptances a crash interrupted between their
 *     two renames are completed (finish_recover).
 *  2. specs/: every bundle is read; tasks without tasks/SHARD/ID are
 *     live again (queued, or waiting for dependencies); a bundle with
 *     no live task left is removed.
 *  3. requeued/ and attempts/: the highest attempt number of each task,
 *     so that no attempt number is ever used twice.
 *  4. accepting/: acceptances a crash interrupted are completed.
 *  5. workers/: each worker is registered again and its inbox/,
 *     running/, done/ and returned/ tell which tasks are placed where,
 *     and with which attempt; the reports in done/ and returned/ are
 *     then accepted by the main loop as they would have been.  A
 *     worker that is not beating is found lost after lost-timeout,
 *     counted from now.  An exited worker's revoke whose keeping in
 *     attempts/ a crash interrupted is completed.
 *
 * A read in steps 1 (workers/WID/work/), 2, 3 and 5 that fails is made
 * again until it succeeds (recover_wait): recovery does not go on
 * without it.  Damage (recover_damage; a bundle that does not decode)
 * is not waited for.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "observe.h"
#include "spoold.h"

#define TMP_MAX_AGE_S	86400

/*
 * Called for each entry recovery walks (every task of a live bundle
 * costs a stat): beat the lease when a beat is due.  Only at the start
 * (sd.recovering): the same walks later (the periodic tmp/ sweep, an
 * acceptance finished again) run inside the main loop, whose heartbeat
 * beats.  On a large spool on a network filesystem recovery takes
 * longer than lost-timeout (50,000 queued tasks over sshfs: 12 s);
 * without beats every worker left once its death timeout passed, and a
 * spoold started on another host broke the lease of this one while it
 * still recovered.
 */
void
recover_beat(void)
{
	uint64_t now;

	if (!sd.recovering || (now = now_ms()) < sd.next_beat)
		return;
	spoold_lease_beat();
	sd.next_beat = now + sd.sp.cfg.heartbeat_ms;
}

/*
 * A read that recovery depends on failed (an I/O error, a stale handle
 * past fsop's retries): what it would have found (a task placed on a
 * worker, a report committed while no spoold ran, a task's highest
 * attempt and its tries) cannot be known, and recovery that went on
 * without it forgot it: the task was queued, placed and run again under
 * the same attempt number, and the first run's result discarded as a
 * stale report (or retried more often than allowed).  So recovery does
 * not go on: it waits a rescan interval, beating the lease (the workers
 * stay, their tasks run on) and still "recovering" in state/summary,
 * and the caller makes the same read again, until it succeeds.  Nothing
 * is started before recovery ends (local workers, worker jobs), so a
 * SIGTERM or SIGINT meanwhile stops spoold at once.
 */
void
recover_wait(void)
{
	struct signalfd_siginfo si;
	struct pollfd pfd;
	uint64_t now, until = now_ms() + sd.sp.cfg.rescan_ms;

	while ((now = now_ms()) < until) {
		recover_beat();
		pfd.fd = sd.sigfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)((sd.next_beat < until ? sd.next_beat :
		    until) - now)) < 0 && errno != EINTR)
			msg_fatal("poll: %m");
		while (read(sd.sigfd, &si, sizeof si) == (ssize_t)sizeof si)
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
				msg_info("stopping (%s) while recovering",
				    si.ssi_signo == SIGTERM ? "SIGTERM" :
				    "SIGINT");
				observe_stop();
				lease_release(&sd.sp, &sd.lease);
				msg_info("stopped");
				exit(0);
			}
	}
}

/*
 * err is of an entry gone or damaged (not a directory or not a regular
 * file, too large, a symbolic link), not of a read that failed: waiting
 * would not change it, and recovery goes on without it, as before.
 */
int
recover_damage(int err)
{
	return err == ENOENT || err == ENOTDIR || err == EINVAL ||
	    err == EFBIG || err == ELOOP || err == ENXIO;
}

/*
 * A file recovery needs that is damaged (a bundle of specs/ that is not
 * a regular file, whose header or one of whose records does not decode,
 * or whose first ID is not its name): waiting would not mend it, and
 * going on without it would lose its tasks.  spoold stops (exit 111),
 * saying what is damaged and what to do.
 */
void
recover_stop_damaged(const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	msg_fatal("%s (a damaged spool: move the file aside to start)", what);
}

/* fsop_list, made again after recover_wait until it succeeds. */
void
recover_list(int dfd, const char *name, fsop_list_fn fn, void *arg,
    const char *what)
{
	while (fsop_list(dfd, name, fn, arg) < 0) {
		msg_once("recovery-list", "list: %s: %m (recovery waits "
		    "until it can be listed)", what);
		recover_wait();
	}
	msg_clear("recovery-list");
}

/* "[prefix.]host.pid.counter.rand": host and pid, or -1. */
static int
tmp_owner(const char *name, char *host, size_t size, long *pid)
{
	const char *dots[64];
	const char *p;
	int n = 0;
	char *end;

	for (p = name; *p; p++)
		if (*p == '.' && n < 64)
			dots[n++] = p;
	if (n < 3)
		return -1;
	/* host is between dots[n-4] (or start) and dots[n-3] */
	{
		const char *hs = n >= 4 ? dots[n - 4] + 1 : name;
		size_t hl = (size_t)(dots[n - 3] - hs);

		if (hl == 0 || hl >= size)
			return -1;
		memcpy(host, hs, hl);
		host[hl] = 0;
	}
	*pid = strtol(dots[n - 3] + 1, &end, 10);
	if (end != dots[n - 2] || *pid <= 0)
		return -1;
	return 0;
}

struct rescue {
	const char *dir;
	uint64_t id;
	int	failed;
};

static int
rescue_one(void *arg, const char *name, unsigned char type)
{
	struct rescue *rc = arg;
	char from[FSOP_TMPNAME_MAX + 48], to[48];
	unsigned long a;
	char *end;

	(void)type;
	if (strncmp(name, "attempt.", 8) != 0 || !isdigit((unsigned char)name[8]))
		return 0;
	errno = 0;
	a = strtoul(name + 8, &end, 10);
	if (*end || errno || a == 0 || a > UINT32_MAX)
		return 0;
	snprintf(from, sizeof from, "%s/%s", rc->dir, name);
	snprintf(to, sizeof to, "%" PRIu64 ".%lu", rc->id, a);
	if (fsop_rename(sd.sp.fd[SD_TMP], from, sd.sp.fd[SD_ATTEMPTS], to) < 0) {
		msg_warn("rename: tmp/%s to attempts/%s: %m", from, to);
		rc->failed = 1;
	}
	return 0;
}

/*
 * tmp/final.X, a task's final directory that was never renamed in: its
 * earlier attempts (there once its result is) go back to attempts/,
 * where the task's next finishing takes them.  0, or -1 if one could
 * not be moved (the directory is then kept for a later sweep).
 *
 * Only a directory spoold made is one: the members of a shared spool
 * write tmp/ too, and a final.X a member made (with a result naming
 * someone else's task) would have its attempt.N entries, whatever they
 * are, moved into that task's directory.  Anything else is removed.
 */
static int
rescue_attempts(const char *name)
{
	char path[FSOP_TMPNAME_MAX + 32];
	struct buf b = BUF_INIT;
	struct rescue rc = { name, 0, 0 };
	struct result r;
	struct stat st;
	const char *why;

	if (strncmp(name, "final.", 6) != 0)
		return 0;
	if (fsop_stat(sd.sp.fd[SD_TMP], name, &st) < 0)
		return 0;	/* gone: nothing to move */
	if (!S_ISDIR(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != sd.sp.uid)) {
		msg_warn("tmp/%s: owned by uid %u, not made by spoold; "
		    "removed, nothing in it moved", name, (unsigned)st.st_uid);
		return 0;
	}
	snprintf(path, sizeof path, "%s/result", name);
	if (fsop_read_file(sd.sp.fd[SD_TMP], path, RESULT_MAX, &b, NULL) < 0 ||
	    result_decode(b.p, b.len, &r, &why) < 0) {
		buf_free(&b);
		return 0;	/* not written yet: no attempt moved in */
	}
	rc.id = r.id;
	result_free(&r);
	buf_free(&b);
	if (fsop_list(sd.sp.fd[SD_TMP], name, rescue_one, &rc) < 0) {
		msg_warn("list: tmp/%s: %m", name);
		return -1;
	}
	return rc.failed ? -1 : 0;
}

static int
clean_tmp_one(void *arg, const char *name, unsigned char type)
{
	const char *myhost = arg;
	char host[64];
	struct stat st;
	long pid;
	int stale = 0;

	(void)type;
	recover_beat();
	if (tmp_owner(name, host, sizeof host, &pid) == 0 &&
	    strcmp(host, myhost) == 0 && pid != (long)getpid() &&
	    host_pid_alive(host_name(), host_boot_id(), pid, 0) == 0)
		stale = 1;	/* its writer is dead (or a zombie) */
	else if (fsop_stat(sd.sp.fd[SD_TMP], name, &st) == 0 &&
	    time(NULL) - st.st_mtime > TMP_MAX_AGE_S)
		stale = 1;
	if (stale && rescue_attempts(name) == 0 &&
	    fsop_rmtree(sd.sp.fd[SD_TMP], name) < 0)
		msg_warn("remove: tmp/%s: %m", name);
	return 0;
}

static int
gc_one(void *arg, const char *name, unsigned char type)
{
	(void)arg;
	(void)type;
	if (fsop_rmtree(sd.sp.fd[SD_GC], name) < 0)
		msg_once("gc", "remove: gc/%s: %m (will retry)", name);
	return 0;
}

void
recover_sweep(void)
{
	char host[FSOP_TMPNAME_MAX];

	fsop_tmpname(host, sizeof host, NULL);
	*strchr(host, '.') = 0;	/* the host part, as temp names spell it */
	if (fsop_list(sd.sp.fd[SD_TMP], ".", clean_tmp_one, host) < 0)
		msg_warn("list: tmp: %m");
	if (fsop_list(sd.sp.fd[SD_GC], ".", gc_one, NULL) < 0)
		msg_warn("list: gc: %m");
}

struct names {
	uint64_t *v;
	size_t	n;
	char	**odd;		/* names not of a bundle, warned of */
};

/*
 * An ID of specs/ into ns; another name is warned of once, not at each
 * listing: a listing made again after one that failed half way
 * (load_specs) names again what that one did.
 */
static int
collect_ids(void *arg, const char *name, unsigned char type)
{
	struct names *ns = arg;
	uint64_t id;
	size_t i;

	(void)type;
	if (ids_parse(name, &id) < 0) {
		if (name[0] == '.')
			return 0;
		for (i = 0; ns->odd && ns->odd[i]; i++)
			if (strcmp(ns->odd[i], name) == 0)
				return 0;
		msg_warn("specs/%s: unexpected file; ignored", journal_q(name));
		ns->odd = strv_push(ns->odd, name);
		return 0;
	}
	ns->v = xreallocarray(ns->v, ns->n + 1, sizeof *ns->v);
	ns->v[ns->n++] = id;
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Read specs/NAME, the bundle of first ID first: its header (once: the
 * bundle's slot, *bidx, is made then), then its tasks, those past the
 * *done an earlier try indexed (accept_index).  0, or -1 (errno) for a
 * read that failed, to be made again.  A file that cannot be opened
 * for damage (recover_damage) or whose header or a record of which does
 * not decode (accept_index) stops spoold (recover_stop_damaged).
 */
static int
load_spec(const char *name, uint64_t first, uint32_t *bidx, uint32_t *done)
{
	struct bundle_file bf;
	int fd, rc = -1, err;

	if ((fd = fsop_open_regular(sd.sp.fd[SD_SPECS], name, NULL)) < 0) {
		if (recover_damage(errno))
			recover_stop_damaged("read: specs/%s: %m", name);
		return -1;
	}
	if (*bidx == UINT32_MAX) {
		if ((rc = bundle_file_open(&bf, fd)) == 0 &&
		    bf.br.hdr.first == first)
			*bidx = bundle_add_mem(first, bf.br.hdr.count);
		else if (rc != -2)
			recover_stop_damaged("specs/%s: line %d: %s", name,
			    bf.br.r.errline, rc < 0 ? bf.br.r.why :
			    "wrong first ID");
		err = errno;
		bundle_file_close(&bf);
		errno = err;
	}
	/* (a bundle whose tasks are all final is released in it) */
	if (*bidx != UINT32_MAX)
		rc = accept_index(*bidx, fd, done);
	err = errno;
	(void)close(fd);
	errno = err;
	return rc;
}

/*
 * Every bundle of specs/, read a record at a time (accept_index), not
 * the file whole.  A listing or read that fails (not damage) is made
 * again until it succeeds (recover_wait): a task left out would never
 * run, its bundle never removed.
 */
static void
load_specs(void)
{
	struct names ns = { NULL, 0, NULL };
	char name[32];
	uint32_t bidx, done;
	size_t i, k;

	recover_list(sd.sp.fd[SD_SPECS], ".", collect_ids, &ns, "specs");
	strv_free(ns.odd);
	if (ns.n)
		qsort(ns.v, ns.n, sizeof *ns.v, cmp_u64);
	/* a listing made again after one that failed half way names some
	 * twice: once each */
	for (i = k = 0; i < ns.n; i++)
		if (k == 0 || ns.v[i] != ns.v[k - 1])
			ns.v[k++] = ns.v[i];
	ns.n = k;
	for (i = 0; i < ns.n; i++) {
		recover_beat();
		snprintf(name, sizeof name, "%" PRIu64, ns.v[i]);
		bidx = UINT32_MAX;
		done = 0;
		while (load_spec(name, ns.v[i], &bidx, &done) < 0) {
			msg_once("recovery-read", "read: specs/%s: %m "
			    "(recovery waits until it can be read)", name);
			recover_wait();
		}
		msg_clear("recovery-read");
	}
	msg_info("recovered %zu bundle%s: %" PRIu64 " queued, %" PRIu64
	    " waiting", ns.n, ns.n == 1 ? "" : "s", sd.c.queued, sd.c.waiting);
	free(ns.v);
}

static void
raise_attempt(uint64_t id, uint32_t att)
{
	struct task *t = task_get(id);

	if (t && t->state != T_FINAL && att > t->attempt)
		t->attempt = att;
}

/*
 * Tasks whose requeued/ID leaves a loss to settle once the workers are
 * known (losses_settle): it counts more losses than max-requeues (given
 * up on, their worker-lost result not written: finish_gave_up), or it
 * names the attempt lost last (lost_attempt, 0 if it does not).
 */
static struct loss {
	uint64_t id;
	uint32_t att;
} *losses;
static size_t nlosses;

static int
requeued_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	struct task *t;
	uint64_t id, v;
	uint32_t lost_att = 0;

	(void)arg;
	(void)type;
	recover_beat();
	if (ids_parse(name, &id) < 0 || (t = task_get(id)) == NULL ||
	    t->state == T_FINAL) {
		(void)fsop_unlink(sd.sp.fd[SD_REQUEUED], name);
		return 0;
	}
	t->flags |= TF_REQUEUED;	/* removed when it is final */
	/* its attempt, tries and losses: read again until it can be */
	while (fsop_read_file(sd.sp.fd[SD_REQUEUED], name, 4096, &b,
	    NULL) < 0) {
		if (recover_damage(errno)) {
			if (errno != ENOENT)
				msg_warn("read: requeued/%s: %m", name);
			return 0;
		}
		msg_once("recovery-read", "read: requeued/%s: %m (recovery "
		    "waits until it can be read)", name);
		recover_wait();
	}
	msg_clear("recovery-read");
	rec_reader_init(&r, b.p, b.len);
	while (rec_next(&r, &f) > 0) {
		if (rec_get_uint(&r, &f, UINT32_MAX, &v) < 0)
			continue;
		if (rec_key_is(&f, "attempt"))
			raise_attempt(id, (uint32_t)v);
		else if (rec_key_is(&f, "tries"))
			t->tries = (uint16_t)v;
		else if (rec_key_is(&f, "lost"))
			t->lost = (uint8_t)(v > 255 ? 255 : v);
		else if (rec_key_is(&f, "lost_attempt"))
			lost_att = (uint32_t)v;
	}
	buf_free(&b);
	if ((lost_att && t->lost) || t->lost > sd.sp.cfg.max_requeues) {
		losses = xreallocarray(losses, nlosses + 1, sizeof *losses);
		losses[nlosses++] = (struct loss){ id, t->lost ? lost_att : 0 };
	}
	return 0;
}

/*
 * Once the workers are known.  A loss is recorded in requeued/ID before
 * the lost worker's assignment is revoked (finish_loss_record): a task
 * still placed under the attempt the record names was not revoked, and
 * its loss is not in yet; its lost worker's revoke takes it in, as the
 * last spoold would have (counted here too, it was counted twice: a
 * task given up on after fewer losses than max-requeues allows), or the
 * worker's report ends the attempt.  A task queued with a lost count
 * past max-requeues gets its worker-lost result; not one placed
 * (max-requeues lowered since): it ends as its attempt does.
 */
static void
losses_settle(void)
{
	struct task *t;
	size_t i;

	for (i = 0; i < nlosses; i++) {
		if ((t = task_get(losses[i].id)) == NULL)
			continue;
		if (t->state == T_PLACED && t->attempt == losses[i].att) {
			t->lost--;
			msg_info("task %" PRIu64 " attempt %u: its loss, "
			    "recorded, is counted when its revoke is made",
			    losses[i].id, losses[i].att);
		} else if (t->state == T_QUEUED &&
		    t->lost > sd.sp.cfg.max_requeues)
			finish_gave_up(losses[i].id, t, NULL,
			    "its worker was lost");
	}
	free(losses);
	losses = NULL;
	nlosses = 0;
}

static int
attempts_one(void *arg, const char *name, unsigned char type)
{
	char to[SPOOL_PATH_MAX + 32];
	struct task *t;
	uint64_t id;
	uint32_t att;

	(void)arg;
	(void)type;
	recover_beat();
	if (wdir_aname_parse(name, &id, &att) < 0)
		return 0;
	t = task_get(id);
	if ((t && t->state == T_FINAL) ||
	    (t == NULL && finish_final_exists(id, NULL))) {
		/* the task is final without this earlier attempt: its
		 * move failed (finish.c: attempts_move), or a spoold of
		 * before 2026-11-28, which moved them in after the final
		 * rename, stopped in between */
		spool_task_path(id, to, sizeof to);
		snprintf(to + strlen(to), sizeof to - strlen(to),
		    "/attempt.%u", att);
		if (fsop_rename(sd.sp.fd[SD_ATTEMPTS], name, sd.sp.fd[SD_TASKS],
		    to) < 0 && errno != ENOENT)
			msg_warn("rename: attempts/%s: %m", name);
		return 0;
	}
	raise_attempt(id, att);
	return 0;
}

struct assign_ctx {
	struct worker *w;
	int	sub;
};

static int
assignment_one(void *arg, const char *name, unsigned char type)
{
	struct assign_ctx *c = arg;
	struct worker *other;
	struct task *t;
	uint64_t id;
	uint32_t att;

	(void)type;
	recover_beat();
	if (wdir_aname_parse(name, &id, &att) < 0)
		return 0;
	t = task_get(id);
	if (c->sub == WS_REVOKED) {
		raise_attempt(id, att);
		/*
		 * A worker that exited (not lost) whose attempt, the task's
		 * latest, was revoked and not yet kept in attempts/: the
		 * last spoold stopped in between (workers.c, keep_revoked).
		 * Kept now, before the worker's directory goes.
		 */
		if (c->w->exited && !c->w->gone && t != NULL &&
		    t->state != T_FINAL && t->attempt == att)
			finish_archive(c->w, WS_REVOKED, name);
		return 0;
	}
	if (t == NULL || t->state == T_FINAL ||
	    (t->state == T_PLACED && t->attempt > att) ||
	    (t->state != T_PLACED && t->attempt > att)) {
		/*
		 * A stale report is the news pass's (finish.c: discard),
		 * which also moves in the spec that an older spoold's
		 * crash between acceptance's two renames left in done/.
		 */
		if (c->sub == WS_DONE || c->sub == WS_RETURNED)
			return 0;
		/* a stale assignment: fence it off */
		if (fsop_rename(c->w->subfd[c->sub], name,
		    c->w->subfd[WS_REVOKED], name) < 0 && errno != ENOENT)
			msg_warn("revoke: workers/%s/%s/%s: %m", c->w->wid,
			    wdir_sub_name[c->sub], name);
		return 0;
	}
	if (t->state == T_PLACED) {
		/* same task placed twice with a lower attempt elsewhere */
		other = worker_by_index(t->worker);
		if (other && other != c->w) {
			char oname[WDIR_ANAME_MAX];

			wdir_aname(id, t->attempt, oname, sizeof oname);
			(void)fsop_rename(other->subfd[WS_INBOX], oname,
			    other->subfd[WS_REVOKED], oname);
			(void)fsop_rename(other->subfd[WS_RUNNING], oname,
			    other->subfd[WS_REVOKED], oname);
			worker_unassign(other, id, t);
		} else if (other == c->w)
			return 0;
	}
	/* a queued task's heap entry is skipped when popped */
	t->attempt = att;
	worker_assign(c->w, id, t);
	return 0;
}

static void
recover_worker(struct worker *w)
{
	/* done/ and returned/ hold reports for placed tasks, too */
	static const int subs[] = { WS_REVOKED, WS_INBOX, WS_RUNNING, WS_DONE,
	    WS_RETURNED };
	char what[WDIR_ID_MAX + 24];
	struct assign_ctx c;
	size_t i;

	c.w = w;
	for (i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		c.sub = subs[i];
		snprintf(what, sizeof what, "workers/%s/%s", w->wid,
		    wdir_sub_name[c.sub]);
		recover_list(w->subfd[c.sub], ".", assignment_one, &c, what);
	}
	w->dirty = NEWS_ALL;
}

/*
 * Could workers/WID not be registered for a read that failed, rather
 * than for damage (recover_damage; a bad info: never registered, said
 * by worker_register, as before)?
 * What worker_register reads, read again for its errno.
 */
static int
worker_unreadable(const char *wid)
{
	struct worker_info wi;
	int dfd, fd, k, err = 0;

	if ((dfd = fsop_opendir(sd.sp.fd[SD_WORKERS], wid)) < 0)
		err = errno;
	else {
		if (winfo_read(dfd, "info", &wi) < 0)
			err = errno;
		for (k = 0; err == 0 && k < WS_NSUB; k++)
			if ((fd = fsop_opendir(dfd, wdir_sub_name[k])) < 0)
				err = errno;
			else
				(void)close(fd);
		(void)close(dfd);
	}
	return !recover_damage(err);
}

/* A worker directory that workers_scan could not register (said). */
static int
unregistered_one(void *arg, const char *name, unsigned char type)
{
	size_t i;

	(void)type;
	if (name[0] == '.')
		return 0;
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && strcmp(sd.workers[i]->wid, name) == 0)
			return 0;
	if (worker_unreadable(name))
		*(int *)arg = 1;
	return 0;
}

/*
 * Every worker directory registered: one left out for a read that
 * failed would be registered later, in the main loop, without its
 * inbox/, running/ and done/ looked at, its tasks queued and run again
 * (recover_wait).  A directory gone meanwhile is not listed again.
 */
static void
recover_workers(void)
{
	int missing;

	sd.workers_dirty = 1;
	workers_scan();		/* says what it could not register */
	for (;;) {
		missing = 0;
		recover_list(sd.sp.fd[SD_WORKERS], ".", unregistered_one,
		    &missing, "workers");
		if (!missing)
			return;
		recover_wait();
		sd.workers_dirty = 1;
		workers_scan();
	}
}

void
recover_all(void)
{
	uint64_t end;
	size_t i;

	recover_sweep();
	finish_recover();
	load_specs();
	/* no attempt number used twice: both are needed (recover_wait) */
	recover_list(sd.sp.fd[SD_REQUEUED], ".", requeued_one, NULL,
	    "requeued");
	recover_list(sd.sp.fd[SD_ATTEMPTS], ".", attempts_one, NULL,
	    "attempts");
	accept_recover();
	/* the shard of the next claim is spoold's, not a member's (accept.c) */
	if (sd.sp.cfg.shared) {
		if (ids_end(&sd.sp, 0, &end) < 0)
			msg_warn("read: ids/ (the claim chain): %m");
		else if (ids_shard_make(&sd.sp, end) < 0)
			msg_warn("mkdir: ids/%" PRIu64 ": %m", end / IDS_SHARD);
	}
	recover_workers();
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i])
			recover_worker(sd.workers[i]);
	losses_settle();
	msg_info("recovered %zu worker%s, %" PRIu64 " task%s placed",
	    sd.nworkers, sd.nworkers == 1 ? "" : "s", sd.c.placed,
	    sd.c.placed == 1 ? "" : "s");
}

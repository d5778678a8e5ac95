/*
 * test_lease.c - lease.c, one spoold per spool, in fresh spools:
 * acquiring; a second contender (a forked process) refused with a
 * message naming the holder's pid; a holder that exits without
 * releasing (dead pid on this host) replaced at once; release;
 * lease_beat writing the counter and detecting a lease broken or taken
 * over (lock/spoold renamed away) with -1, but not one put back; and
 * a holder on this host name but another boot id, which hostinfo.h says cannot be judged by
 * its pid (so with no wait the lease is not broken); stale handles
 * (NFS: ESTALE, injected) at any step of taking it, three in a row,
 * survived with nothing left in tmp/.
 */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "unit.h"
#include "beatfile.h"
#include "fault.h"
#include "fsop.h"
#include "hostinfo.h"
#include "lease.h"

static struct spool *
SP(void **state)
{
	return &((struct unit_spool *)*state)->sp;
}

static int
entries(int dfd)
{
	int n = 0;

	return fsop_list(dfd, ".", unit_count_listed, &n) < 0 ? -1 : n;
}

/*
 * Run lease_acquire in a child; return its result and message.
 * keep: the child exits without releasing (like a crash).
 */
static int
acquire_in_child(struct spool *sp, int keep, char *why, size_t size,
    pid_t *child)
{
	char buf[512];
	ssize_t n;
	size_t got = 0;
	int p[2], st;
	pid_t pid;

	if (pipe(p) < 0)
		return -2;
	pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		struct lease l;
		char w[512] = "";
		int rc;

		close(p[0]);
		rc = lease_acquire(sp, &l, 0, w, sizeof w);
		if (rc == 0)
			snprintf(w, sizeof w, "acquired");
		(void)!write(p[1], w, strlen(w));
		if (rc == 0 && !keep)
			lease_release(sp, &l);
		_exit(rc == 0 ? 0 : 1);
	}
	close(p[1]);
	while (got < sizeof buf - 1 &&
	    (n = read(p[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -2;
	snprintf(why, size, "%s", buf);
	if (child)
		*child = pid;
	return WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void
test_acquire_and_contend(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat = 99;
	char why[512], want[64];

	assert_int_equal(lease_holder(sp, &o, &beat), 0);
	TCHECK(lease_acquire(sp, &l, 0, why, sizeof why) == 0, "%s", why);
	assert_true(l.dirfd >= 0);

	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.pid, getpid());
	assert_string_equal(o.host, host_name());
	assert_string_equal(o.nonce, l.me.nonce);
	assert_int_equal(beat, 0);

	/* A second spoold is refused and told who holds the spool. */
	assert_int_equal(acquire_in_child(sp, 0, why, sizeof why, NULL), -1);
	snprintf(want, sizeof want, "pid %ld ", (long)getpid());
	assert_contains(why, want);
	assert_contains(why, host_name());

	/* Our own second attempt is refused as well (we are alive). */
	{
		struct lease l2;

		assert_int_equal(lease_acquire(sp, &l2, 0, why, sizeof why), -1);
		assert_contains(why, want);
	}

	/* Still ours. */
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
	lease_release(sp, &l);
	assert_int_equal(lease_holder(sp, &o, &beat), 0);
	assert_int_equal(l.dirfd, -1);
	/* Released: the next contender gets it at once. */
	assert_int_equal(acquire_in_child(sp, 0, why, sizeof why, NULL), 0);
	assert_string_equal(why, "acquired");
}

static void
test_dead_holder_replaced(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	pid_t child = 0;
	char why[512];

	/* The child takes the lease and exits without releasing it. */
	assert_int_equal(acquire_in_child(sp, 1, why, sizeof why, &child), 0);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.pid, child);
	/* It is dead and reaped: we take over with no wait at all. */
	TCHECK(lease_acquire(sp, &l, 0, why, sizeof why) == 0,
	    "lease of dead pid %ld not broken: %s", (long)child, why);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.pid, getpid());
	/* The broken lease went through gc/ and is gone; tmp/ is clean. */
	assert_int_equal(entries(sp->fd[SD_GC]), 0);
	assert_int_equal(entries(sp->fd[SD_TMP]), 0);
	lease_release(sp, &l);
	assert_int_equal(entries(sp->fd[SD_LOCK]), 0);
}

static void
test_beat(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char why[512];
	int i;

	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), 0);
	for (i = 1; i <= 3; i++) {
		assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
		assert_int_equal(lease_holder(sp, &o, &beat), 1);
		assert_int_equal(beat, i);
		assert_int_equal(beat_read(sp->fd[SD_LOCK], "spoold/beat",
		    &beat), 0);
		assert_int_equal(beat, i);
	}
	/*
	 * A beat without its check line (a spoold of another version):
	 * held, but the beat not read (2, EAGAIN), until the next beat
	 * writes it over.
	 */
	{
		static const char old[] = "beat: 9\ntime: 1.000\n";
		char *path = xasprintf("%s/lock/spoold/beat", sp->root);

		assert_int_equal(unlink(path), 0);
		assert_int_equal(unit_write_file(path, old, strlen(old)), 0);
		free(path);
	}
	beat = 7;
	errno = 0;
	assert_int_equal(lease_holder(sp, &o, &beat), 2);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(beat, 0);
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(beat, 4);
	lease_release(sp, &l);
}

/*
 * ESTALE three times in a row from the Nth operation on, for every N
 * that taking the lease reaches: fsop retries most operations itself,
 * not a write (part of it may have landed), so an attempt spoiled there
 * is undone and made again (before, spoold died of it at its start).
 */
static void
test_stale_handles_while_taking(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char spec[64], why[512];
	unsigned long n;

	for (n = 1; n <= 24; n++) {
		snprintf(spec, sizeof spec, "fail-at=%lu:ESTALE*3", n);
		setenv(FAULT_ENV, spec, 1);
		fault_reload();
		why[0] = 0;
		if (lease_acquire(sp, &l, 0, why, sizeof why) != 0)
			fail_msg("%s: %s", spec, why);
		unsetenv(FAULT_ENV);
		fault_reload();
		assert_int_equal(lease_holder(sp, &o, &beat), 1);
		assert_string_equal(o.nonce, l.me.nonce);
		assert_int_equal(entries(sp->fd[SD_TMP]), 0);
		lease_release(sp, &l);
	}
	/* Stale for good: it gives up, and says why. */
	setenv(FAULT_ENV, "fail-at=1:ESTALE*100000", 1);
	fault_reload();
	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), -1);
	unsetenv(FAULT_ENV);
	fault_reload();
	assert_contains(why, "Stale file handle (16 attempts)");
	assert_int_equal(lease_holder(sp, &o, &beat), 0);
}

static void
test_beat_detects_broken_lease(void **state)
{
	struct spool *sp = SP(state);
	struct lease l;
	char why[512];

	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), 0);
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
	/* Someone breaks it: lock/spoold renamed into gc/. */
	assert_int_equal(renameat(sp->fd[SD_LOCK], "spoold", sp->fd[SD_GC],
	    "broken"), 0);
	why[0] = 0;
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), -1);
	assert_contains(why, "lost the spool lease");
	/* It keeps saying so. */
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), -1);
	lease_release(sp, &l);	/* must not remove what is not ours */
	assert_int_equal(fsop_rmtree(sp->fd[SD_GC], "broken"), 0);
}

/*
 * A beat that finds lock/spoold gone and then our own lease there again:
 * a contender that broke what it judged a dead holder's lease, found
 * ours moved instead and put it back (break_check), the beat falling
 * between its two renames.  The lease is still ours: it beats on
 * (lease_beat said "lost the spool lease to" our own pid).  The gap is
 * a stat of lock/spoold that says ENOENT (injected).
 */
static void
test_beat_keeps_a_lease_put_back(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char why[512];

	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), 0);
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
	setenv(FAULT_ENV, "count=all,stat-fails=spoold:ENOENT*1", 1);
	fault_reload();
	why[0] = 0;
	if (lease_beat(sp, &l, why, sizeof why) != 0)
		fail_msg("a beat while the lease was away: %s", why);
	unsetenv(FAULT_ENV);
	fault_reload();
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_string_equal(o.nonce, l.me.nonce);
	assert_int_equal(beat, 2);
	assert_int_equal(lease_beat(sp, &l, why, sizeof why), 0);
	lease_release(sp, &l);
	assert_int_equal(lease_holder(sp, &o, &beat), 0);
}

/* o: a spoold's owner record as (host, boot, pid) would write it */
static void
owner_of(struct owner_info *o, const char *host, const char *boot, long pid)
{
	memset(o, 0, sizeof *o);
	snprintf(o->host, sizeof o->host, "%s", host);
	snprintf(o->boot, sizeof o->boot, "%s", boot);
	o->pid = pid;
	snprintf(o->nonce, sizeof o->nonce, "%s.%ld.1.0", host, pid);
}

static void
test_beat_detects_takeover(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info fake;
	struct lease l;
	struct buf b = BUF_INIT;
	struct stat st;
	char why[512];
	int dfd;

	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), 0);
	assert_int_equal(renameat(sp->fd[SD_LOCK], "spoold", sp->fd[SD_GC],
	    "broken"), 0);
	/* Another spoold (pid 4242 on host other) now holds the spool. */
	owner_of(&fake, "otherhost", "other-boot", 4242);
	owner_encode(&b, &fake);
	assert_int_equal(mkdirat(sp->fd[SD_LOCK], "spoold", 0700), 0);
	dfd = openat(sp->fd[SD_LOCK], "spoold", O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(fsop_publish(sp->fd[SD_TMP], dfd, "owner", b.p, b.len,
	    0600, 0), 0);
	close(dfd);
	buf_free(&b);

	assert_int_equal(lease_beat(sp, &l, why, sizeof why), -1);
	assert_contains(why, "pid 4242");
	assert_contains(why, "otherhost");
	/* Releasing must leave the new holder's lease alone. */
	lease_release(sp, &l);
	assert_int_equal(fstatat(sp->fd[SD_LOCK], "spoold/owner", &st, 0), 0);
	assert_int_equal(fsop_rmtree(sp->fd[SD_GC], "broken"), 0);
}

/*
 * As sshfs shows a lease another spoold broke and retook: the same inode
 * (numbered by path), another nonce in its owner.  A spoold whose stop
 * outlasted lost-timeout released it: removed the new holder's lease.
 */
static void
test_release_leaves_a_retaken_lease_of_the_same_inode(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info fake, o;
	struct lease l;
	struct buf b = BUF_INIT;
	uint64_t beat;
	char why[512];

	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), 0);
	owner_of(&fake, "otherhost", "other-boot", 4242);
	owner_encode(&b, &fake);
	assert_int_equal(fsop_publish(sp->fd[SD_TMP], l.dirfd, "owner", b.p,
	    b.len, 0600, 0), 0);
	buf_free(&b);
	lease_release(sp, &l);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_string_equal(o.nonce, fake.nonce);
}

/* Plant a lease held by (host, boot, pid) with a beat of 5. */
static void
plant_lease(struct spool *sp, const char *host, const char *boot, long pid,
    uint64_t pstart)
{
	struct owner_info o;
	struct buf b = BUF_INIT;
	int dfd;

	owner_of(&o, host, boot, pid);
	o.pstart = pstart;
	o.started = 1700000000;
	owner_encode(&b, &o);
	assert_int_equal(mkdirat(sp->fd[SD_LOCK], "spoold", 0700), 0);
	dfd = openat(sp->fd[SD_LOCK], "spoold", O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(fsop_publish(sp->fd[SD_TMP], dfd, "owner", b.p, b.len,
	    0600, 0), 0);
	buf_reset(&b);
	buf_puts(&b, "beat: 5\n");
	assert_int_equal(beatfile_write(sp->fd[SD_TMP], dfd, "beat", &b), 0);
	close(dfd);
	buf_free(&b);
}

/* A holder on another host cannot be judged by pid: no wait, no break. */
static void
test_other_host_not_broken(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char why[512];

	plant_lease(sp, "some-other-host", host_boot_id(), 1, 0);
	assert_int_equal(lease_acquire(sp, &l, 0, why, sizeof why), -1);
	assert_contains(why, "pid 1 on host some-other-host");
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_string_equal(o.host, "some-other-host");
	assert_int_equal(beat, 5);
}

/*
 * A holder on another host whose beat record this version cannot read
 * (no check line: a spoold of another version, which renames a new
 * beat file into place at each beat): the file changing shows it
 * beats, and the lease is not broken; once it stops changing, the
 * lease is broken after the wait, as that of any holder whose beat
 * does not move.
 */
static void
test_other_host_unreadable_beat_judged_by_its_file(void **state)
{
	static const char old[] = "beat: 5\ntime: 1.000\n";
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char why[512], *path, *tmp;
	pid_t pid;
	int st;

	plant_lease(sp, "some-other-host", host_boot_id(), 1, 0);
	path = xasprintf("%s/lock/spoold/beat", sp->root);
	tmp = xasprintf("%s/tmp/old-beat", sp->root);
	assert_int_equal(unit_write_file(path, old, strlen(old)), 0);
	assert_int_equal(lease_holder(sp, &o, &beat), 2);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {	/* the other spoold: a new file every 50 ms */
		for (;;) {
			if (unit_write_file(tmp, old, strlen(old)) < 0 ||
			    rename(tmp, path) < 0)
				_exit(1);
			(void)poll(NULL, 0, 50);
		}
	}
	st = lease_acquire(sp, &l, 500, why, sizeof why);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	if (st == 0)
		lease_release(sp, &l);
	TCHECK(st == -1, "the lease of a holder whose beat file changes was "
	    "broken: %s", why);
	assert_contains(why, "pid 1 on host some-other-host");
	/* it stopped: broken after the wait */
	TCHECK(lease_acquire(sp, &l, 500, why, sizeof why) == 0,
	    "the lease of a holder whose beat file stopped was kept: %s", why);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.pid, getpid());
	lease_release(sp, &l);
	free(path);
	free(tmp);
}

/*
 * hostinfo.h: "A process on this host is judged dead only when its host
 * name AND boot id match ours ...; anything else (other host, other
 * boot) has to be judged by its heartbeat instead."  Host names are not
 * unique (containers, clusters sharing a filesystem): a live spoold on
 * a machine with our short name but another boot id must not lose its
 * lease to a contender that does not wait for its beat.
 */
static void
test_same_name_other_boot_not_broken(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o;
	struct lease l;
	uint64_t beat;
	char why[512];
	int rc;

	plant_lease(sp, host_name(), "another-boot-id", 4242, 0);
	rc = lease_acquire(sp, &l, 0, why, sizeof why);
	if (rc == 0)
		lease_release(sp, &l);
	TCHECK(rc == -1, "a lease held on host \"%s\" with another boot id "
	    "was broken without watching its beat", host_name());
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.pid, 4242);
	rc = host_pid_alive(host_name(), "another-boot-id", (long)getpid(), 0);
	TCHECK(rc == -1, "host_pid_alive(our name, other boot, a live pid) = "
	    "%d, want -1 (cannot tell)", rc);
}

static void
test_host_pid_alive(void **state)
{
	struct {
		const char *host;
		const char *boot;
		long pid;
		int want;
	} rows[] = {
		{ NULL, NULL, 0, 1 },		/* ourselves */
		{ "elsewhere", NULL, 0, -1 },	/* other host */
		{ NULL, NULL, 0x7ffffff0, 0 },	/* no such pid */
	};
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		got = host_pid_alive(rows[i].host ? rows[i].host : host_name(),
		    rows[i].boot ? rows[i].boot : host_boot_id(),
		    rows[i].pid ? rows[i].pid : (long)getpid(), 0);
		TCHECK(got == rows[i].want, "row %zu: %d, want %d", i, got,
		    rows[i].want);
	}
	/* Our own start time matches; another one means pid reuse. */
	assert_int_equal(host_pid_alive(host_name(), host_boot_id(),
	    (long)getpid(), host_pid_start((long)getpid())), 1);
	assert_int_equal(host_pid_alive(host_name(), host_boot_id(),
	    (long)getpid(), host_pid_start((long)getpid()) + 1), 0);
}

/*
 * host_pid_runs: a process runs when it is there with the start time
 * asked and is no zombie; an unknown start (0) proves nothing.
 */
static void
test_host_pid_runs(void **state)
{
	unsigned long long start;
	siginfo_t si;
	pid_t pid;
	int st;

	(void)state;
	start = host_pid_start((long)getpid());
	assert_true(start != 0);
	assert_int_equal(host_pid_runs((long)getpid(), start), 1);
	assert_int_equal(host_pid_runs((long)getpid(), start + 1), 0);
	assert_int_equal(host_pid_runs((long)getpid(), 0), 0);
	assert_int_equal(host_pid_runs(0x7ffffff0, start), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	memset(&si, 0, sizeof si);
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	start = host_pid_start((long)pid);
	TCHECK(start != 0, "no start time for the zombie %ld", (long)pid);
	TCHECK(host_pid_runs((long)pid, start) == 0,
	    "the zombie %ld judged running", (long)pid);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/* A zombie (exited, not yet reaped) holder is dead. */
static void
test_zombie_holder_replaced(void **state)
{
	struct spool *sp = SP(state);
	struct lease l;
	char why[512];
	int p[2], st;
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lease cl;

		close(p[0]);
		c = lease_acquire(sp, &cl, 0, why, sizeof why) == 0 ? 'y' : 'n';
		(void)!write(p[1], &c, 1);
		_exit(0);	/* no release */
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	/* EOF on the pipe: the child has exited (a zombie until reaped). */
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	{
		siginfo_t si;

		memset(&si, 0, sizeof si);
		assert_int_equal(waitid(P_PID, (id_t)pid, &si,
		    WEXITED | WNOWAIT), 0);
		assert_int_equal(si.si_pid, pid);
	}
	TCHECK(lease_acquire(sp, &l, 0, why, sizeof why) == 0,
	    "zombie holder not judged dead: %s", why);
	lease_release(sp, &l);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/*
 * The owner record carries the daemon: keys only a restart applies, as
 * the holder took them; a record without them (a worker's, an older
 * spoold's) says none, and owner_config_diff names each key that
 * differs from a configuration, and only those.
 */
static void
test_owner_carries_the_restart_keys(void **state)
{
	struct spool *sp = SP(state);
	struct owner_info o, plain;
	struct config c = sp->cfg;
	struct buf b = BUF_INIT;
	struct lease l;
	uint64_t beat;
	char why[512];

	sp->cfg.heartbeat_ms = 700;
	sp->cfg.lost_timeout_ms = 9000;
	sp->cfg.death_timeout_ms = 20000;
	sp->cfg.fsync = 0;
	sp->cfg.shared = 1;
	TCHECK(lease_acquire(sp, &l, 0, why, sizeof why) == 0, "%s", why);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.heartbeat_ms, 700);
	assert_int_equal(o.lost_timeout_ms, 9000);
	assert_int_equal(o.death_timeout_ms, 20000);
	assert_int_equal(o.fsync, 0);
	assert_int_equal(o.shared, 1);
	/* the same as the holder's: nothing said */
	assert_int_equal(owner_config_diff(&o, &sp->cfg, "x", &b), 0);
	assert_int_equal(b.len, 0);
	/* c: the spool's own configuration (200 ms, 2 s, 5 s, flushes) */
	c.heartbeat_ms = 200;
	c.lost_timeout_ms = 9000;
	c.death_timeout_ms = 5000;
	c.fsync = 1;
	c.shared = 1;
	assert_int_equal(owner_config_diff(&o, &c, "this file", &b), 3);
	assert_string_equal(b.p, "daemon: heartbeat 700 ms (this file: 200 "
	    "ms), daemon: death-timeout 20000 ms (this file: 5000 ms), "
	    "daemon: fsync false (this file: true)");
	lease_release(sp, &l);

	/* a record with none of them: unknown, nothing compared */
	owner_of(&plain, "otherhost", "other-boot", 4242);
	buf_reset(&b);
	owner_encode(&b, &plain);
	assert_null(strstr(b.p, "heartbeat"));
	plant_lease(sp, "otherhost", "other-boot", 4242, 0);
	assert_int_equal(lease_holder(sp, &o, &beat), 1);
	assert_int_equal(o.heartbeat_ms, 0);
	assert_int_equal(o.fsync, -1);
	assert_int_equal(o.shared, -1);
	buf_reset(&b);
	assert_int_equal(owner_config_diff(&o, &c, "this file", &b), 0);

	/* one of them under its bound, not 0 or 1, or missing: none */
	plain.heartbeat_ms = 700;
	plain.lost_timeout_ms = 9000;
	plain.death_timeout_ms = 20000;
	plain.fsync = 1;
	plain.shared = 0;
	for (int bad = 0; bad < 3; bad++) {
		struct owner_info got;
		int dfd;

		plain.heartbeat_ms = bad == 0 ? 5 : 700;
		plain.shared = bad == 1 ? 2 : 0;
		buf_reset(&b);
		owner_encode(&b, &plain);
		if (bad == 2)	/* the record of one that wrote no fsync */
			*strstr(b.p, "fsync") = 'x';
		dfd = openat(sp->fd[SD_LOCK], "spoold", O_RDONLY | O_DIRECTORY);
		assert_true(dfd >= 0);
		assert_int_equal(fsop_publish(sp->fd[SD_TMP], dfd, "owner", b.p,
		    b.len, 0600, 0), 0);
		assert_int_equal(owner_read(dfd, "owner", &got), 0);
		close(dfd);
		TCHECK(got.heartbeat_ms == 0 && got.lost_timeout_ms == 0 &&
		    got.death_timeout_ms == 0 && got.fsync == -1 &&
		    got.shared == -1, "case %d", bad);
		assert_int_equal(got.pid, 4242);
	}
	buf_free(&b);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, unit_spool_setup, \
	    unit_spool_teardown)
	const struct CMUnitTest tests[] = {
		T(test_acquire_and_contend),
		T(test_dead_holder_replaced),
		T(test_zombie_holder_replaced),
		T(test_beat),
		T(test_stale_handles_while_taking),
		T(test_beat_detects_broken_lease),
		T(test_beat_keeps_a_lease_put_back),
		T(test_beat_detects_takeover),
		T(test_release_leaves_a_retaken_lease_of_the_same_inode),
		T(test_other_host_not_broken),
		T(test_other_host_unreadable_beat_judged_by_its_file),
		T(test_same_name_other_boot_not_broken),
		T(test_owner_carries_the_restart_keys),
		cmocka_unit_test(test_host_pid_alive),
		cmocka_unit_test(test_host_pid_runs),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}

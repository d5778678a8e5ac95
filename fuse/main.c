/*
 * main.c - spoolfs: a FUSE view of a spool.
 *
 *	spoolfs SPOOL MOUNTPOINT [-f] [-d] [-o OPT[,OPT...]] [--no-inotify]
 *
 * Mounts the spool at MOUNTPOINT (spoolfs(1) describes the tree) and
 * serves it until it is unmounted (fusermount3 -u MOUNTPOINT) or gets
 * SIGTERM, SIGINT or SIGHUP.  It runs as the spool's owner and refuses
 * to run as anyone else (what it submits would be refused as foreign);
 * it always passes default_permissions, so the kernel checks modes, and
 * never allow_other unless -o allow_other is given.  Without -f it
 * detaches once mounted and appends its messages, with timestamps, to
 * SPOOL/log/spoolfs.HOST.log; with -f it stays in the foreground and
 * its messages go to stderr.
 *
 * The event loop (one thread) polls four descriptors: /dev/fuse, the
 * view's inotify descriptor (a hint that something changed on this
 * host), a signalfd, and an inotify descriptor of its own on state/
 * (state/shutdown replaced on this host: read it at once).  The view
 * is refreshed
 *   - before a request is served if it is older than FS_FRESH_MS, or
 *     after spoolfs itself changed the spool (a submission, a cancel);
 *   - when inotify reports a change;
 *   - while reads wait for results or poll handles are held, every
 *     rescan interval: FS_RESCAN_MIN_MS after a change, doubling while
 *     nothing changes, up to the spool's "daemon: rescan" (1 s by
 *     default).  That rescan is what notices work done by other hosts,
 *     with or without inotify.
 * Nothing runs when nobody asks: an idle mount does no rescans; it
 * only checks every FS_ALIVE_MS that the spool still exists (its FORMAT
 * file, as spoold and the workers do) and that no "spool shutdown" came
 * since it mounted (state/shutdown: shutmark.h; at once when inotify
 * says the mark was replaced on this host), and unmounts itself and
 * leaves when the spool was removed or shut down (DESIGN.md invariant
 * 7).  It does not leave when spoold merely stops (a SIGTERM, a crash):
 * the results it shows stay valid without spoold.
 *
 * On unmount or a signal, reads still waiting are answered ENOTCONN,
 * the mount is removed (lazily, as libfuse does) and everything is
 * freed; exit status 0, or 111 when the spool or the mount failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "fsop.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"
#include "shutmark.h"
#include "spoolfs.h"
#include "version.h"
#include "watch.h"

struct fs fs;

static uint64_t rescan_ms = FS_RESCAN_MIN_MS;
static uint64_t next_rescan;
static uint64_t shut_gen;	/* state/shutdown's generation at the mount */
static int shut_known;		/* shut_gen read (a read may fail) */
static struct watch shut_watch;	/* state/: a shutdown asked on this host */
static int shut_hint;		/* read state/shutdown now */

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: spoolfs SPOOL MOUNTPOINT [-f] [-d] [-o OPT[,OPT...]] "
	    "[--no-inotify]\n"
	    "  -f            stay in the foreground, messages on stderr\n"
	    "  -d            also print every FUSE request (implies -f)\n"
	    "  -o OPT        mount options (allow_other, ro, ...);\n"
	    "                default_permissions is always on\n"
	    "  --no-inotify  notice changes by rescans alone\n"
	    "       spoolfs --version\n");
	exit(status);
}

/* Refresh now; wake waiters if something changed; 1 if it did. */
static int
refresh_now(void)
{
	int changed = taskview_refresh(fs.tv);

	fs.fresh_at = now_ms();
	fs.stale = 0;
	if (changed) {
		wait_wake();
		rescan_ms = FS_RESCAN_MIN_MS;
	} else if ((rescan_ms *= 2) > fs.sp.cfg.rescan_ms)
		rescan_ms = fs.sp.cfg.rescan_ms;
	next_rescan = fs.fresh_at + rescan_ms;
	return changed;
}

void
fs_fresh(int force)
{
	if (force || fs.stale || now_ms() - fs.fresh_at >= FS_FRESH_MS)
		(void)refresh_now();
}

/*
 * Whether a "spool shutdown" came since the mount: state/shutdown's
 * generation moved past shut_gen, the first one read (at the mount).
 * A file that is not such a record is generation 0; one that cannot be
 * read (EIO, ESTALE) is said once and read again at the next check:
 * taken as generation 0, a failed first read would make the next one
 * look like a shutdown.
 */
static int
shut_down(uint64_t *gen)
{
	int e;

	if (shutmark_read(&fs.sp, gen) < 0) {
		e = errno;
		msg_once("shutmark", "read: %s/state/shutdown: %m (%s)",
		    fs.sp.shown, e == EINVAL ? "taken as generation 0" :
		    "read again at the next check");
		if (e != EINVAL)
			return 0;
	} else
		msg_clear("shutmark");
	if (!shut_known) {
		shut_known = 1;
		shut_gen = *gen;
		return 0;
	}
	return *gen > shut_gen;
}

/* Append OPT to the -o list, escaping what fuse_opt would split on. */
static void
opt_escaped(struct buf *b, const char *key, const char *val)
{
	const char *p;

	if (b->len)
		buf_putc(b, ',');
	buf_puts(b, key);
	for (p = val; *p; p++) {
		if (*p == ',' || *p == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *p);
	}
}

/* inotify on state/: state/shutdown replaced, or events lost */
static void
shut_event(void *arg, void *cookie, const char *name, uint32_t mask)
{
	(void)arg;
	(void)cookie;
	(void)mask;
	if (*name == '\0' || strcmp(name, SHUTMARK_NAME) == 0)
		shut_hint = 1;
}

/*
 * Watch state/ for the mark a "spool shutdown" writes, so that a
 * shutdown asked on this host unmounts at once ("spool shutdown" waits
 * for this host's mounts); other hosts' are seen at the FS_ALIVE_MS
 * check.  Without inotify, that check alone.
 */
static void
shut_watch_open(int inotify)
{
	if (watch_open(&shut_watch, inotify) < 0) {
		msg_warn("inotify: %m; state/shutdown is read every %d s",
		    FS_ALIVE_MS / 1000);
		(void)watch_open(&shut_watch, 0);
	} else if (watch_enabled(&shut_watch) &&
	    watch_add(&shut_watch, fs.sp.rootfd, spool_dir_name[SD_STATE],
	    IN_MOVED_TO | IN_CLOSE_WRITE, &shut_watch) < 0)
		msg_warn("inotify: watch %s/%s: %m; state/shutdown is read "
		    "every %d s", fs.sp.shown, spool_dir_name[SD_STATE],
		    FS_ALIVE_MS / 1000);
}

static void
loop(int sigfd)
{
	struct fuse_buf fbuf = { .mem = NULL };
	struct signalfd_siginfo si;
	struct pollfd p[4];
	uint64_t now, alive_at = now_ms(), gen;
	int timeout, res;

	while (!fuse_session_exited(fs.se)) {
		now = now_ms();
		if (now - alive_at >= FS_ALIVE_MS) {
			alive_at = now;
			if (!spool_alive(&fs.sp)) {
				msg_warn("%s/FORMAT: %m: the spool is gone; "
				    "unmounting", fs.sp.shown);
				break;
			}
			shut_hint = 1;
		}
		if (shut_hint) {
			shut_hint = 0;
			if (shut_down(&gen)) {
				msg_info("%s was shut down (spool shutdown: "
				    "state/shutdown, generation %" PRIu64 "); "
				    "unmounting", fs.sp.shown, gen);
				break;
			}
		}
		timeout = (int)(alive_at + FS_ALIVE_MS - now);
		if (wait_any() && next_rescan < alive_at + FS_ALIVE_MS)
			timeout = next_rescan > now ? (int)(next_rescan - now) : 0;
		p[0].fd = fuse_session_fd(fs.se);
		p[1].fd = taskview_fd(fs.tv);
		p[2].fd = sigfd;
		p[3].fd = shut_watch.fd;	/* -1 without inotify: ignored */
		p[0].events = p[1].events = p[2].events = p[3].events = POLLIN;
		p[0].revents = p[1].revents = p[2].revents = p[3].revents = 0;
		if (poll(p, 4, timeout) < 0) {
			if (errno == EINTR)
				continue;
			msg_fatal("poll: %m");
		}
		if (p[2].revents) {
			if (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
				msg_info("signal %u: unmounting", si.ssi_signo);
			break;
		}
		if (p[3].revents && watch_read(&shut_watch, shut_event,
		    NULL) < 0) {
			msg_warn("inotify: read: %m; state/shutdown is read "
			    "every %d s", FS_ALIVE_MS / 1000);
			watch_close(&shut_watch);
		}
		if (p[1].revents)
			fs.stale = 1;	/* inotify: something changed here */
		if (fs.stale || (wait_any() && now_ms() >= next_rescan))
			(void)refresh_now();
		if (p[0].revents == 0)
			continue;
		res = fuse_session_receive_buf(fs.se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) {
			if (res < 0 && res != -ENODEV)
				msg_warn("read: /dev/fuse: %s", strerror(-res));
			break;	/* ENODEV: unmounted */
		}
		fs_fresh(0);
		fuse_session_process_buf(fs.se, &fbuf);
	}
	free(fbuf.mem);
}

static int
signals_take(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		msg_fatal("sigprocmask: %m");
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		msg_fatal("signalfd: %m");
	return fd;
}

/*
 * A detached spoolfs has no terminal: its messages go to
 * log/spoolfs.HOST.log in the spool (appended, one write per line, so
 * mounts of several processes on one host do not tear each other's
 * lines).  Opened before detaching, so a failure is said where it can
 * be seen.  Returns the descriptor, or -1.
 */
static int
log_open(void)
{
	char name[128];
	int fd;

	snprintf(name, sizeof name, "spoolfs.%s.log", host_name());
	fd = fsop_openfile(fs.sp.fd[SD_LOG], name, O_WRONLY | O_CREAT |
	    O_APPEND, 0600);
	if (fd < 0)
		msg_warn("open: %s/log/%s: %m (the messages of the detached "
		    "spoolfs are lost; -f keeps them on stderr)", fs.sp.shown,
		    name);
	return fd;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-inotify", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct buf o = BUF_INIT;
	const char *spool;
	char why[512], real[PATH_MAX], mnt[PATH_MAX];
	int c, foreground = 0, debug = 0, inotify = -1, sigfd, logfd = -1;
	uint64_t gen;
	size_t k;

	msg_init("spoolfs");
	command_std_fds();
	while ((c = getopt_long(argc, argv, "fdo:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'f': foreground = 1; break;
		case 'd': debug = foreground = 1; break;
		case 'o':
			if (o.len)
				buf_putc(&o, ',');
			buf_puts(&o, optarg);
			break;
		case 'I': inotify = 0; break;
		case 'h': usage(0); break;
		case 'V':
			printf("ckspool %s\n", CKSPOOL_VERSION);
			exit(0);
		default: usage(EXIT_USAGE);
		}
	}
	if (argc - optind != 2)
		usage(EXIT_USAGE);
	spool = argv[optind];
	/*
	 * The path as spoolfs will unmount it: fuse_daemonize() makes /
	 * the working directory (also with -f), so a relative one would
	 * name something else by then, and the mount would stay, dead.
	 */
	if (realpath(argv[optind + 1], mnt) == NULL)
		msg_fatal("realpath: %s: %m", journal_q(argv[optind + 1]));
	if (spool_open(&fs.sp, spool, why, sizeof why) < 0)
		msg_fatal("%s", why);
	if (getuid() != fs.sp.uid)
		msg_fatal_status(EXIT_USAGE, "%s belongs to uid %u; spoolfs must "
		    "run as the spool's owner (it runs as uid %u)", fs.sp.shown,
		    (unsigned)fs.sp.uid, (unsigned)getuid());
	fs.uid = fs.sp.uid;
	fs.gid = getgid();
	clock_gettime(CLOCK_REALTIME, &fs.mounted);
	(void)shut_down(&gen);	/* the generation of a shutdown before */
	fs.tv = taskview_new(&fs.sp, inotify);
	shut_watch_open(inotify);
	(void)refresh_now();

	if (fuse_opt_add_arg(&args, argv[0]) < 0 ||
	    (debug && fuse_opt_add_arg(&args, "-d") < 0))
		msg_fatal("fuse_opt_add_arg: out of memory");
	{
		struct buf all = BUF_INIT;

		buf_puts(&all, "default_permissions,subtype=spoolfs");
		opt_escaped(&all, "fsname=", realpath(spool, real) ? real : spool);
		if (o.len) {
			buf_putc(&all, ',');
			buf_puts(&all, o.p);
		}
		if (fuse_opt_add_arg(&args, "-o") < 0 ||
		    fuse_opt_add_arg(&args, all.p) < 0)
			msg_fatal("fuse_opt_add_arg: out of memory");
		buf_free(&all);
	}
	buf_free(&o);
	fs.se = fuse_session_new(&args, &spoolfs_ops, sizeof spoolfs_ops, NULL);
	fuse_opt_free_args(&args);
	if (fs.se == NULL)
		msg_fatal_status(EXIT_USAGE, "cannot start a FUSE session (bad "
		    "-o option?)");
	if (fuse_session_mount(fs.se, mnt) != 0)
		msg_fatal("mount: %s: cannot mount the spool there",
		    journal_q(mnt));
	if (!foreground)
		logfd = log_open();
	if (fuse_daemonize(foreground) != 0)
		msg_fatal("daemonize: %m");
	if (logfd >= 0) {
		/* stderr is /dev/null now: nowhere to report a failure */
		(void)dup2(logfd, STDERR_FILENO);
		close(logfd);
		msg_timestamps(1);
	}
	sigfd = signals_take();
	fsop_stats_at_exit("spoolfs");	/* after daemonize: its pid */
	if (foreground || logfd >= 0)
		msg_info("%s mounted on %s (pid %ld)", fs.sp.shown, journal_q(mnt),
		    (long)getpid());

	loop(sigfd);

	wait_cancel_all(ENOTCONN);
	msg_info("%s: unmounted; leaving", journal_q(mnt));
	fuse_session_unmount(fs.se);
	fuse_session_destroy(fs.se);
	close(sigfd);
	fh_free_all();
	sub_free_all();
	pass_free_all();
	taskview_free(fs.tv);
	watch_close(&shut_watch);
	for (k = 0; k < fs.nwids; k++)
		free(fs.wids[k]);
	free(fs.wids);
	spool_close(&fs.sp);
	return 0;
}

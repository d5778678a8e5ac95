/*
 * purge.c - "spool purge": remove final tasks that nothing needs any
 * more.  See spool(1).
 *
 *	spool purge [--older-than D] [--state S[,S...]] [-n] [-v]
 *
 * Nothing else removes a final task (tasks/SHARD/ID), so a spool that
 * runs for weeks keeps a directory for every task it ever ran.  A
 * final task is removed when all of these hold:
 *
 *   - it is at least D old: the time since its directory was last
 *     modified (spoold moves its spec in, or builds it, just before
 *     the rename that makes it final), on the filesystem's own clock
 *     (the mtime of a file made in tmp/ now), so that a file server
 *     whose clock differs from this host's makes no task younger or
 *     older than it is;
 *   - no bundle in incoming/, accepting/ or specs/ holds it (nor an
 *     owed refusal, accepting/FIRST.rejected, any of its IDs): until its
 *     bundle is retired (all its tasks final), a spoold that starts
 *     reads the bundle and would take a task found nowhere for one not
 *     run yet, and run it again;
 *   - no task of those bundles names it in its after list, nor a task
 *     file dropped into incoming/ (or in accepting/ as ID.drop[.NAME],
 *     which spoold parses again after a crash): a spoold that starts
 *     looks such a dependency up again, and one it finds nowhere it
 *     waits for and, after 5 minutes, takes for never submitted
 *     (spoold/deps.c), cancelling the dependent.
 *
 * The bundles are listed in the order a submission moves (incoming/,
 * accepting/, specs/), so one that moves on while they are read is met
 * again further on, not missed; what is submitted after that is the
 * submitter's to order after the purge.
 *
 * A removal is a rename of tasks/SHARD/ID into gc/ (readers see the
 * task whole or not at all, as they see it appear), then its removal
 * there; what cannot be removed there spoold removes, at start and
 * every minute (recover.c).  Nothing is flushed: a rename lost in a
 * crash brings back a task that was to go, and the next purge takes
 * it.  At the end tasks/ gets a new mtime: a spoolfs mount, which
 * takes a final task for final for good, then reads every shard again
 * (taskview.c), and a "spool wait" looks whether its IDs are gone
 * (wait.c, check_gone).
 *
 * A shard emptied so is removed too when every one of its IDs is below
 * the end of the claim chain (read before the bundles) and below every
 * bundle listed: all of them claimed, none waiting to be accepted, so
 * no task is renamed into it again.  (A submission claimed before and
 * written after the listing could still be; spoold makes the shard
 * again then: finish.c, rename_final.)
 *
 * Cost: one listing of each of those three directories and a read of
 * each bundle and task file there (the unfinished tasks), one listing
 * of tasks/ and of each shard, and a stat of each final task's
 * directory (with --older-than; not of the files in it), a read of its
 * result (with --state), then a rename and the removal of each task
 * removed.
 *
 * The shards and what is in them are the spool owner's: in a shared
 * spool only the owner and root may purge (a member may not rename
 * anything there), and a member is refused, exit 1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "taskfile.h"
#include "units.h"

struct span {
	uint64_t first, end;	/* [first, end) */
};

static struct {
	uint64_t age_s;		/* --older-than */
	unsigned states;	/* --state: bits of enum result_state, 0 all */
	int	dry, verbose;
	struct timespec now;	/* the filesystem's clock */
	struct span *spans;	/* IDs of the bundles not retired */
	size_t	nspans;
	uint64_t *deps;		/* IDs their tasks depend on */
	size_t	ndeps;
	uint64_t low;		/* no task below it is still to come */
	unsigned long removed, young, bundled, needed, other, failed;
} pg;

static int
span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static void
span_add(uint64_t first, uint64_t count)
{
	pg.spans = xgrowarray(pg.spans, pg.nspans, sizeof *pg.spans);
	pg.spans[pg.nspans].first = first;
	pg.spans[pg.nspans++].end = first + count;
	if (first < pg.low)
		pg.low = first;
}

static void
deps_add(const struct task_spec *t)
{
	size_t i;

	for (i = 0; i < t->nafter; i++) {
		pg.deps = xgrowarray(pg.deps, pg.ndeps, sizeof *pg.deps);
		pg.deps[pg.ndeps++] = t->after[i];
	}
}

/*
 * A task file a user dropped, d/name (incoming/NAME, or accepting/
 * ID.drop[.NAME] while spoold accepts it): the IDs its after list
 * names, read as spoold reads it (at most TASK_FILE_MAX, not through a
 * symlink, the same parser).  One gone since the listing moved on, and
 * one spoold refuses whatever it holds (a symlink, FIFO, directory, a
 * file too large), names none.  One that cannot be read or parsed
 * otherwise may still be being written (cp writes in place), and its
 * dependencies cannot be told: the purge removes nothing then, rather
 * than guess, until spoold has taken or refused it.
 */
static void
drop_one(enum spool_dir d, const char *name)
{
	struct taskfile_err te;
	struct buf b = BUF_INIT;
	struct task_spec t;
	char why[300];

	if (fsop_read_file(cli_sp.fd[d], name, TASK_FILE_MAX, &b, NULL) < 0) {
		buf_free(&b);
		if (errno == ENOENT || errno == ELOOP || errno == EINVAL ||
		    errno == EISDIR || errno == EFBIG)
			return;
		msg_fatal("read: %s/%s/%s: %m (a task file not yet accepted, "
		    "whose dependencies cannot be told: nothing purged)",
		    cli_sp.shown, spool_dir_name[d], journal_q(name));
	}
	task_init(&t);
	if (taskfile_parse(b.p, b.len, &t, &te) < 0) {
		taskfile_err_format(&te, why, sizeof why);
		msg_fatal("%s/%s/%s: %s (a task file not yet accepted, whose "
		    "dependencies cannot be told: nothing purged until spoold "
		    "has taken or refused it)", cli_sp.shown,
		    spool_dir_name[d], journal_q(name), why);
	}
	deps_add(&t);
	task_free(&t);
	buf_free(&b);
}

/*
 * A bundle of dir d (or a dropped task file of incoming/ or accepting/):
 * its IDs and the IDs its tasks depend on.  One gone since the listing
 * moved on (accepted, retired) and is met further on, or left.
 */
static int
bundle_one(void *arg, const char *name, unsigned char type)
{
	enum spool_dir d = *(enum spool_dir *)arg;
	struct bundle_file bf;
	struct task_spec t;
	char idbuf[24];
	uint64_t id;
	size_t k, len = strlen(name);
	int rc, fd;

	(void)type;
	if (name[0] == '.')
		return 0;
	if (d == SD_ACCEPTING && bundle_owed_name(name)) {
		struct bundle_hdr h;
		char *why;

		/* FIRST.rejected: spoold owes (and writes again) the
		 * results of every ID of the refused bundle while it is
		 * there, not only FIRST's; one not spoold's it refuses,
		 * writing none (spoold/accept.c, owed_pay) */
		if ((rc = bundle_owed_read(cli_sp.fd[d], name, cli_sp.uid, &h,
		    &why)) > 0) {
			span_add(h.first, h.count);
			free(why);
		} else if (rc < 0 && errno != ENOENT)
			msg_fatal("read: %s/%s/%s: %m", cli_sp.shown,
			    spool_dir_name[d], journal_q(name));
		return 0;
	}
	if (d == SD_ACCEPTING && (k = strcspn(name, ".")) < len) {
		/* ID.drop[.NAME]: a dropped file being accepted, its
		 * dependencies in the file as the user wrote it (spoold
		 * parses it again if it restarts before the accepted
		 * spec is written) */
		if (k < sizeof idbuf) {
			memcpy(idbuf, name, k);
			idbuf[k] = 0;
			if (ids_parse(idbuf, &id) == 0)
				span_add(id, 1);
		}
		if (bundle_drop_name(name, &id, NULL) != 0)
			drop_one(d, name);
		return 0;
	}
	if (d == SD_INCOMING && !bundle_suffixed(name)) {
		drop_one(d, name);	/* a dropped file: no ID yet */
		return 0;
	}
	/* a record at a time (bundle_file): a bundle may be 4 GiB */
	if ((fd = fsop_open_regular(cli_sp.fd[d], name, NULL)) < 0) {
		/* gone on; or in incoming/, a file spoold will refuse */
		if (errno != ENOENT && d != SD_INCOMING)
			msg_fatal("read: %s/%s/%s: %m", cli_sp.shown,
			    spool_dir_name[d], journal_q(name));
		return 0;
	}
	if ((rc = bundle_file_open(&bf, fd)) == 0) {
		span_add(bf.br.hdr.first, bf.br.hdr.count);
		while ((rc = bundle_file_next(&bf, &t)) > 0) {
			deps_add(&t);
			task_free(&t);
		}
	}
	/*
	 * In incoming/ a bad one is spoold's to refuse (its IDs kept by the
	 * header, if it was read); elsewhere damage, which keeps
	 * everything from the purge rather than guess.
	 */
	if (rc == -2 && d != SD_INCOMING)
		msg_fatal("read: %s/%s/%s: %m", cli_sp.shown,
		    spool_dir_name[d], journal_q(name));
	if (rc == -1 && d != SD_INCOMING)
		msg_fatal("%s/%s/%s: line %d: %s (spool fsck)", cli_sp.shown,
		    spool_dir_name[d], journal_q(name), bf.br.r.errline,
		    bf.br.r.why);
	bundle_file_close(&bf);
	(void)close(fd);
	return 0;
}

/* Is id in a bundle not retired? */
static int
bundled(uint64_t id)
{
	size_t lo = 0, hi = pg.nspans, mid;

	/* spans sorted by first and merged: the last one starting at or
	 * before id is the only one that can hold it */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pg.spans[mid].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && id < pg.spans[lo - 1].end;
}

static void
spans_merge(void)
{
	size_t i, n = 0;

	if (pg.nspans == 0)
		return;
	qsort(pg.spans, pg.nspans, sizeof *pg.spans, span_cmp);
	for (i = 1; i < pg.nspans; i++)
		if (pg.spans[i].first <= pg.spans[n].end) {
			if (pg.spans[i].end > pg.spans[n].end)
				pg.spans[n].end = pg.spans[i].end;
		} else
			pg.spans[++n] = pg.spans[i];
	pg.nspans = n + 1;
}

/*
 * Now, on the clock the filesystem stamps its files with: a file made
 * in tmp/ and removed again.  On NFS that is the server's, which also
 * stamped the tasks' directories; this host's may differ.
 */
static void
fs_now(void)
{
	char name[FSOP_TMPNAME_MAX];
	struct stat st;
	int fd;

	fsop_tmpname(name, sizeof name, "purge.");
	if ((fd = fsop_create(cli_sp.fd[SD_TMP], name, 0600)) < 0)
		msg_fatal("create: %s/tmp/%s: %m", cli_sp.shown, name);
	if (fstat(fd, &st) < 0)
		msg_fatal("stat: %s/tmp/%s: %m", cli_sp.shown, name);
	/* removed before its close: on sshfs one removed just after its
	 * close may stay as .fuse_hiddenNNN (libfuse issue 746) */
	if (fsop_unlink(cli_sp.fd[SD_TMP], name) < 0)
		msg_warn("unlink: %s/tmp/%s: %m (spoold removes it)",
		    cli_sp.shown, name);
	close(fd);
	pg.now = st.st_mtim;
}

/* Is shard/name, a final task, at least --older-than old: 1 or 0; -1
 * when it is gone (another purge took it), -2 when it cannot be told
 * (said). */
static int
old_enough(int shardfd, const char *shard, const char *name)
{
	struct stat st;
	int64_t age;

	if (pg.age_s == 0)
		return 1;
	if (fsop_stat(shardfd, name, &st) < 0) {
		if (errno == ENOENT)
			return -1;	/* gone meanwhile: another purge */
		msg_warn("stat: %s/tasks/%s/%s: %m", cli_sp.shown, shard, name);
		pg.failed++;
		return -2;
	}
	age = (int64_t)pg.now.tv_sec - (int64_t)st.st_mtim.tv_sec;
	if (pg.now.tv_nsec < st.st_mtim.tv_nsec)
		age--;
	return age >= (int64_t)pg.age_s;
}

/* Is the task's state one --state asked for?  Also -1. */
static int
state_wanted(uint64_t id)
{
	struct result r;
	int rc;

	if (pg.states == 0)
		return 1;
	if ((rc = cli_read_result(id, &r)) <= 0) {
		if (rc < 0)
			pg.failed++;	/* said */
		return -1;
	}
	rc = (pg.states & 1u << r.state) != 0;
	result_free(&r);
	return rc;
}

struct shard_ctx {
	int	fd;
	const char *name;
	unsigned long left;	/* entries kept in it */
	uint64_t *ids;		/* the tasks in it */
	size_t	n;
};

static int
id_seen(void *arg, const char *name, unsigned char type)
{
	struct shard_ctx *c = arg;
	char canon[24];
	uint64_t id;

	(void)type;
	if (ids_parse(name, &id) == 0) {
		snprintf(canon, sizeof canon, "%" PRIu64, id);
		if (strcmp(canon, name) == 0) {
			c->ids = xgrowarray(c->ids, c->n, sizeof *c->ids);
			c->ids[c->n++] = id;
			return 0;
		}
	}
	c->left++;	/* not a task's (spoold names them so): left alone */
	return 0;
}

static void
task_one(struct shard_ctx *c, uint64_t id)
{
	char gcname[FSOP_TMPNAME_MAX + 32], name[24];
	int rc;

	snprintf(name, sizeof name, "%" PRIu64, id);
	if (bundled(id)) {
		pg.bundled++;
		c->left++;
		return;
	}
	if (pg.ndeps > 0 &&	/* (pg.deps is NULL then) */
	    bsearch(&id, pg.deps, pg.ndeps, sizeof *pg.deps, ids_cmp)) {
		pg.needed++;
		c->left++;
		return;
	}
	if ((rc = old_enough(c->fd, c->name, name)) <= 0) {
		if (rc == 0)
			pg.young++;
		c->left += rc != -1;
		return;
	}
	if ((rc = state_wanted(id)) <= 0) {
		if (rc == 0)
			pg.other++;
		c->left++;
		return;
	}
	if (!pg.dry) {
		snprintf(gcname, sizeof gcname, "task.%" PRIu64 ".", id);
		fsop_tmpname(gcname + strlen(gcname),
		    sizeof gcname - strlen(gcname), NULL);
		if (fsop_rename(c->fd, name, cli_sp.fd[SD_GC], gcname) < 0) {
			if (errno == ENOENT)
				return;	/* another purge took it */
			msg_warn("rename: %s/tasks/%s/%s to gc/%s: %m",
			    cli_sp.shown, c->name, name, gcname);
			pg.failed++;
			c->left++;
			return;
		}
		if (fsop_rmtree(cli_sp.fd[SD_GC], gcname) < 0)
			msg_warn("remove: %s/gc/%s: %m (spoold removes it)",
			    cli_sp.shown, gcname);
	}
	pg.removed++;
	if (pg.verbose)
		printf("%" PRIu64 "\n", id);
}

/* A shard's number, from its name in tasks/ */
static int
shard_seen(void *arg, const char *name, unsigned char type)
{
	struct shard_ctx *all = arg;
	const char *why;
	uint64_t num;

	(void)type;
	if (units_parse_uint(name, UINT64_MAX / SPOOL_SHARD_SIZE - 1, &num,
	    &why) < 0)
		return 0;	/* not a shard: left alone */
	all->ids = xgrowarray(all->ids, all->n, sizeof *all->ids);
	all->ids[all->n++] = num;
	return 0;
}

/* tasks/NUM: its tasks, then the shard itself if it is empty and
 * nothing is to come into it (see the top). */
static void
shard_one(uint64_t num)
{
	struct shard_ctx c;
	char name[24];
	size_t i;

	snprintf(name, sizeof name, "%" PRIu64, num);
	c.name = name;
	c.left = 0;
	if ((c.fd = fsop_opendir(cli_sp.fd[SD_TASKS], name)) < 0) {
		if (errno != ENOENT) {
			msg_warn("open: %s/tasks/%s: %m", cli_sp.shown, name);
			pg.failed++;
		}
		return;
	}
	c.ids = NULL;
	c.n = 0;
	if (fsop_list(c.fd, ".", id_seen, &c) < 0) {
		msg_warn("list: %s/tasks/%s: %m", cli_sp.shown, name);
		pg.failed++;
		c.left++;
	}
	/* in ID order: what -v prints is in that order too */
	if (c.n > 1)
		qsort(c.ids, c.n, sizeof *c.ids, ids_cmp);
	for (i = 0; i < c.n; i++)
		task_one(&c, c.ids[i]);
	free(c.ids);
	close(c.fd);
	if (c.left == 0 && !pg.dry && (num + 1) * SPOOL_SHARD_SIZE <= pg.low &&
	    fsop_rmdir(cli_sp.fd[SD_TASKS], name) < 0 && errno != ENOENT &&
	    errno != ENOTEMPTY && errno != EEXIST) {
		msg_warn("rmdir: %s/tasks/%s: %m", cli_sp.shown, name);
		pg.failed++;
	}
}

/* --state done,failed,...: the bits of those states */
static unsigned
states_parse(const char *arg)
{
	char *copy = xstrdup(arg), *word, *save = NULL;
	unsigned bits = 0;
	int s;

	for (word = strtok_r(copy, ",", &save); word;
	    word = strtok_r(NULL, ",", &save)) {
		for (s = 0; s < RS_NSTATES; s++)
			if (strcmp(word, result_state_name[s]) == 0)
				break;
		if (s == RS_NSTATES)
			msg_fatal_status(EXIT_USAGE, "--state %s: not a final "
			    "state (done, failed, cancelled, rejected)",
			    journal_q(word));
		bits |= 1u << s;
	}
	free(copy);
	if (bits == 0)
		msg_fatal_status(EXIT_USAGE, "--state: no state given");
	return bits;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: spool purge [--older-than D] [--state S[,S...]] "
	    "[-n] [-v]\n"
	    "  remove final tasks at least D old (default 0) whose bundle is "
	    "retired\n  and that no unfinished task depends on; -n: only say "
	    "what would go,\n  -v: print each ID\n");
}

int
cmd_purge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const enum spool_dir flow[] = { SD_INCOMING, SD_ACCEPTING,
	    SD_SPECS };
	struct shard_ctx shards;	/* (only its list of numbers) */
	enum spool_dir d;
	const char *why;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "+o:s:nvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (units_parse_duration(optarg, &pg.age_s, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--older-than %s: "
				    "%s", journal_q(optarg), why);
			break;
		case 's':
			pg.states = states_parse(optarg);
			break;
		case 'n':
			pg.dry = 1;
			break;
		case 'v':
			pg.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		msg_fatal_status(EXIT_USAGE, "purge takes no arguments: %s",
		    journal_q(argv[optind]));
	cli_open();
	/* tasks/ and its shards are the owner's (spool-layout(5), SHARED
	 * SPOOLS): a member could rename nothing there */
	if (geteuid() != cli_sp.uid && geteuid() != 0)
		msg_fatal_status(1, "only the spool's owner (uid %u) or root "
		    "may purge %s; uid %u may not", (unsigned)cli_sp.uid,
		    cli_sp.shown, (unsigned)geteuid());
	if (pg.age_s > 0)
		fs_now();
	/* before the bundles: a claim made after it is above it */
	if (ids_end(&cli_sp, 0, &pg.low) < 0)
		msg_fatal("read: %s/ids: %m", cli_sp.shown);
	for (i = 0; i < sizeof flow / sizeof flow[0]; i++) {
		d = flow[i];
		if (fsop_list(cli_sp.fd[d], ".", bundle_one, &d) < 0)
			msg_fatal("list: %s/%s: %m", cli_sp.shown,
			    spool_dir_name[d]);
	}
	spans_merge();
	if (pg.ndeps > 1)
		qsort(pg.deps, pg.ndeps, sizeof *pg.deps, ids_cmp);
	shards.ids = NULL;
	shards.n = 0;
	if (fsop_list(cli_sp.fd[SD_TASKS], ".", shard_seen, &shards) < 0)
		msg_fatal("list: %s/tasks: %m", cli_sp.shown);
	if (shards.n > 1)
		qsort(shards.ids, shards.n, sizeof *shards.ids, ids_cmp);
	for (i = 0; i < shards.n; i++)
		shard_one(shards.ids[i]);
	free(shards.ids);
	/* tells spoolfs mounts to look at every shard again (taskview.c) */
	if (pg.removed > 0 && !pg.dry && fsop_touch(cli_sp.fd[SD_TASKS]) < 0) {
		msg_warn("touch: %s/tasks: %m (spoolfs mounts keep listing the "
		    "tasks removed until mounted again)", cli_sp.shown);
		pg.failed++;
	}
	printf("%s %lu task%s; kept %lu younger, %lu of unfinished bundles, "
	    "%lu needed by unfinished tasks", pg.dry ? "would remove" :
	    "removed", pg.removed, pg.removed == 1 ? "" : "s", pg.young,
	    pg.bundled, pg.needed);
	if (pg.states)
		printf(", %lu of other states", pg.other);
	printf("\n");
	free(pg.spans);
	free(pg.deps);
	return pg.failed ? EXIT_TEMPFAIL : 0;
}

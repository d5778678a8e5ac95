/*
 * fsck.c - "spool fsck": check a spool's invariants.  See spool(1).
 *
 *	spool fsck [--settled] [-q]
 *
 * Reads every directory of the spool and checks what must hold at any
 * instant, also just after any process crashed at any point:
 *
 *   - no partial file outside the temporary areas: every record file
 *     spoold, a worker or the CLI wrote (bundles in incoming/ and
 *     specs/, a final task's spec and result, assignments, a committed
 *     attempt's result, worker info, requeue counters, the lease) is
 *     complete: it parses to its end, ends with a newline, and names
 *     the task, attempt or worker its file name says;
 *   - the ID claims in ids/ form one chain without overlaps, and every
 *     accepted or final task lies in a claim (an accepted bundle in
 *     exactly the claim it was made under); in a shared spool ids/ and
 *     its claim shards keep members from each other's claims (sticky
 *     where the group writes, a shard the owner's or root's:
 *     claim_dir_check);
 *   - every submitted task is in exactly one state: no ID in two
 *     bundles (apart from the one bundle an interrupted acceptance
 *     leaves in both accepting/ and specs/), no final task without a
 *     bundle or claim, at most one live assignment of a task across all
 *     workers, none of a task that is final once reports are in;
 *   - every final task has exactly one accepted result:
 *     tasks/SHARD/ID/result, for that ID, in its shard.
 *
 * With --settled it also checks what must hold once recovery ran and
 * nothing is in flight (spoold stopped after taking everything in, as
 * the crash tests leave a spool): tmp/, accepting/ and gc/ are empty,
 * incoming/ holds no bundle, no worker holds a report (done/,
 * returned/), an assignment of a final task or an acceptance spoold
 * has not completed (work/ID.ATT with its spec in it), no requeue
 * counter or archived attempt of a final task is left, no bundle in
 * specs/ is all final, and every file in rejected/ has its reason.
 *
 * Names starting with "." (files being written by hand, NFS and FUSE
 * silly-renamed files) are reported as notes, never as problems.
 *
 * Prints one line per problem, "fsck: PATH: what is wrong", and a
 * summary.  Exit status 0 when nothing is wrong, 1 when something is,
 * 111 when the spool cannot be read.  Files move while spoold and
 * workers run.  A worker directory spoold collects while fsck reads it
 * (worker_check) and a record gone between its listing and its read
 * (record_read, record_unread) are notes; a move between two reads of one check is
 * caught by reading the spool twice when the first read found a
 * problem, and counting only what both found (fsck_confirm).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beatfile.h"
#include "bundle.h"
#include "cli.h"
#include "fsop.h"
#include "ids.h"
#include "lease.h"
#include "msg.h"
#include "rec.h"
#include "result.h"
#include "wdir.h"

#define FSCK_RECORD_MAX	(64u << 20)	/* a record file we read whole */
#define FSCK_PATH_MAX	512

enum where { W_INCOMING, W_ACCEPTING, W_SPECS, W_NWHERE };
static const char *const where_name[W_NWHERE] = {
	"incoming", "accepting", "specs"
};

struct range {
	uint64_t first;
	uint32_t count;
	enum where where;
	char	nonce[IDS_NONCE_MAX];
	char	*name;
	uint32_t final;		/* how many of its IDs are final */
};

struct final {			/* tasks/SHARD/ID */
	uint64_t id;
	uint32_t attempt;	/* of its result */
	int	nospec;		/* no spec yet: its done/ID.ATT is not moved in */
};

struct outline {		/* a line of output, "fsck: ..." */
	char	*text;
	int	problem;	/* else a note */
};

struct live {			/* an assignment in a worker directory */
	uint64_t id;
	uint32_t attempt;
	enum wsub sub;
	int	nowork;		/* done/, but work/ID.ATT/ is gone */
	char	*wid;
};

static struct {
	int	settled;
	int	quiet;
	unsigned long problems;
	struct ids_claim *claims;
	size_t	nclaims;
	struct range *ranges;
	size_t	nranges;
	struct final *finals;
	size_t	nfinals;
	struct live *lives;
	size_t	nlives;
	struct live *revoked;	/* revoked/ entries (wid NULL) */
	size_t	nrevoked;
	unsigned long workers;
	unsigned long rejected;
	struct outline *out;	/* this read's lines, in order */
	size_t	nout;
	int	holding;	/* problems wait in held: see worker_check */
	struct outline *held;
	size_t	nheld;
} fk;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
outline_add(struct outline **v, size_t *n, const char *prefix, int isproblem,
    const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT, line = BUF_INIT;

	/*
	 * A line names entries anyone who may write the spool named (in
	 * ids/, incoming/, control/): a newline or an escape in one is
	 * escaped here, for every line, so that it cannot make a line of
	 * its own or drive the terminal.
	 */
	buf_vprintf(&line, fmt, ap);
	buf_puts(&b, prefix);
	buf_put_printable(&b, line.p ? line.p : "");
	buf_free(&line);
	*v = xgrowarray(*v, *n, sizeof **v);
	(*v)[*n].text = b.p;
	(*v)[(*n)++].problem = isproblem;
}

/*
 * Lines are kept, not printed, until the spool was read (twice when
 * the first read found a problem: see fsck_confirm).
 */
static void
problem(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (fk.holding)
		outline_add(&fk.held, &fk.nheld, "fsck: ", 1, fmt, ap);
	else
		outline_add(&fk.out, &fk.nout, "fsck: ", 1, fmt, ap);
	va_end(ap);
}

static void
note(const char *fmt, ...)
{
	va_list ap;

	if (fk.quiet)
		return;
	va_start(ap, fmt);
	outline_add(&fk.out, &fk.nout, "fsck: note: ", 0, fmt, ap);
	va_end(ap);
}

/* ---- listing helpers ---- */

/* The entries of dfd/name, sorted; 0, or -1 (reported unless ENOENT). */
static int
names_list(int dfd, const char *name, const char *path,
    struct fsop_names *ns)
{
	if (fsop_list_names(dfd, name, NULL, NULL, ns) < 0) {
		if (errno != ENOENT)
			problem("%s: cannot list: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A name starting with ".": a note, and the caller skips it. */
static int
dotted(const char *dir, const char *name)
{
	if (name[0] != '.')
		return 0;
	note("%s/%s: hidden file left alone (being written by hand, or a "
	    "silly-renamed file of NFS or FUSE)", dir, name);
	return 1;
}

/*
 * Read a record file whole: 0 and b, or -1 after reporting why.  A
 * record file we wrote is never empty and ends with a newline.  One
 * that moves on while the spool runs (moves: a bundle, an assignment)
 * and is gone since it was listed is a note: a live spoold retired or
 * took it, or a worker claimed or committed it, as fsck read.
 */
static void
record_unread(const char *path, int moves)
{
	if (moves && errno == ENOENT)
		note("%s: gone as fsck read it (moved on by spoold or a "
		    "worker)", path);
	else
		problem("%s: cannot read: %s", path, errno == EINVAL ?
		    "not a regular file" : strerror(errno));
}

static void
record_partial(const char *path, int empty)
{
	problem("%s: partial file (%s)", path, empty ? "empty" :
	    "no newline at the end");
}

static int
record_read(int dfd, const char *name, const char *path, struct buf *b,
    int moves)
{
	if (fsop_read_file(dfd, name, FSCK_RECORD_MAX, b, NULL) < 0) {
		record_unread(path, moves);
		return -1;
	}
	if (b->len == 0 || b->p[b->len - 1] != '\n') {
		record_partial(path, b->len == 0);
		buf_free(b);
		return -1;
	}
	return 0;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* ---- ids/ ---- */

static int
claim_cmp(const void *a, const void *b)
{
	const struct ids_claim *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A claim directory of a shared spool, ids/ or a shard ids/N/ (path):
 * members claim there, so one the group may write must be sticky, and
 * a shard must be the spool owner's or root's (ids/ is: spool_open
 * checks it), or a member can remove or rename another's claim, to
 * make its own in its place and take those IDs (spool-layout(5),
 * SHARED SPOOLS).  A spool from before shards were made sticky has
 * them 2770.  One the group cannot write and search (2750, as the
 * set-up's "find ... chmod 2750" run again over a spool in use leaves
 * the shards) keeps every member from claiming there, so from
 * submitting.  Each such directory is a problem that says what mends
 * it.
 */
static void
claim_dir_check(int fd, const char *path, int shard)
{
	struct stat st;

	if (!cli_sp.cfg.shared)
		return;
	if (fstat(fd, &st) < 0) {
		problem("%s: cannot stat: %s", path, strerror(errno));
		return;
	}
	if ((st.st_mode & S_IWGRP) && !(st.st_mode & S_ISVTX))
		problem("%s: group-writable but not sticky: a member can "
		    "remove or rename another's claims (chmod 3770 %s/%s)",
		    path, cli_sp.shown, path);
	if ((st.st_mode & (S_IWGRP | S_IXGRP)) != (S_IWGRP | S_IXGRP))
		problem("%s: not writable by the group: members cannot claim "
		    "IDs in it (chmod 3770 %s/%s)", path, cli_sp.shown, path);
	if (shard && st.st_uid != cli_sp.uid && st.st_uid != 0)
		problem("%s: owned by uid %u, not by the spool's owner: that "
		    "user can remove or rename anyone's claims in it (chown "
		    "%u %s/%s)", path, (unsigned)st.st_uid,
		    (unsigned)cli_sp.uid, cli_sp.shown, path);
}

static void
scan_ids(void)
{
	struct fsop_names shards, ns;
	struct ids_claim c;
	char path[64];
	uint64_t shard, start;
	size_t i, k;
	int fd, rc;

	claim_dir_check(cli_sp.fd[SD_IDS], "ids", 0);
	if (names_list(cli_sp.fd[SD_IDS], ".", "ids", &shards) < 0)
		return;
	for (i = 0; i < shards.n; i++) {
		if (strcmp(shards.v[i], "hint") == 0 || dotted("ids",
		    shards.v[i]))
			continue;
		if (parse_u64(shards.v[i], &shard) < 0) {
			problem("ids/%s: not a claim shard", shards.v[i]);
			continue;
		}
		snprintf(path, sizeof path, "ids/%s", shards.v[i]);
		if ((fd = fsop_opendir(cli_sp.fd[SD_IDS], shards.v[i])) < 0) {
			problem("%s: cannot open: %s", path, strerror(errno));
			continue;
		}
		claim_dir_check(fd, path, 1);
		close(fd);
		if (names_list(cli_sp.fd[SD_IDS], shards.v[i], path, &ns) < 0)
			continue;
		for (k = 0; k < ns.n; k++) {
			if (dotted(path, ns.v[k]))
				continue;
			if (parse_u64(ns.v[k], &start) < 0 || start == 0 ||
			    start / IDS_SHARD != shard) {
				problem("%s/%s: not a claim name", path, ns.v[k]);
				continue;
			}
			rc = ids_read(&cli_sp, start, &c);
			if (rc <= 0) {
				problem("%s/%s: not a claim: %s", path, ns.v[k],
				    rc == 0 ? "gone" : strerror(errno));
				continue;
			}
			fk.claims = xgrowarray(fk.claims, fk.nclaims,
			    sizeof *fk.claims);
			fk.claims[fk.nclaims++] = c;
		}
		fsop_names_free(&ns);
	}
	fsop_names_free(&shards);
	if (fk.nclaims > 1)
		qsort(fk.claims, fk.nclaims, sizeof *fk.claims, claim_cmp);
	for (i = 0; i < fk.nclaims; i++) {
		uint64_t expect = i == 0 ? 1 : fk.claims[i - 1].start +
		    fk.claims[i - 1].count;

		if (fk.claims[i].start < expect)
			problem("ids: claim %" PRIu64 " (%u IDs) overlaps the "
			    "claim before it, which ends at %" PRIu64 ": two "
			    "tasks may share an ID", fk.claims[i].start,
			    fk.claims[i].count, expect - 1);
		else if (fk.claims[i].start > expect)
			problem("ids: claims are not one chain: nothing claims "
			    "%" PRIu64 " to %" PRIu64, expect,
			    fk.claims[i].start - 1);
	}
}

/* The claim holding id, or NULL. */
static const struct ids_claim *
claim_of(uint64_t id)
{
	size_t lo = 0, hi = fk.nclaims;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fk.claims[mid].start > id)
			hi = mid;
		else if (fk.claims[mid].start + fk.claims[mid].count <= id)
			lo = mid + 1;
		else
			return &fk.claims[mid];
	}
	return NULL;
}

/* ---- bundles: incoming/, accepting/, specs/ ---- */

static void
bundle_check(enum where w, const char *name, const char *path)
{
	struct bundle_file bf;
	struct bundle_reader *br = &bf.br;
	struct task_spec t;
	struct range *r;
	struct stat st;
	uint64_t first;
	ssize_t n;
	char last;
	int fd, rc;

	if (w == W_SPECS) {
		if (parse_u64(name, &first) < 0 || first == 0) {
			problem("%s: not a bundle name", path);
			return;
		}
	} else {
		if (w == W_INCOMING && !bundle_suffixed(name))
			return;		/* a dropped file: the user's */
		if (w == W_ACCEPTING && strchr(name, '.') != NULL)
			return;	/* ID.drop, FIRST.rejected: not bundles */
	}
	/*
	 * Read a record at a time (bundle_file), as spoold does: a bundle
	 * may be 4 GiB, more than fsck reads of a record file whole.
	 */
	if ((fd = fsop_open_regular(cli_sp.fd[w == W_INCOMING ? SD_INCOMING :
	    w == W_ACCEPTING ? SD_ACCEPTING : SD_SPECS], name, &st)) < 0) {
		record_unread(path, 1);
		return;
	}
	n = st.st_size ? fsop_pread(fd, &last, 1, st.st_size - 1) : 0;
	if (n < 0)
		record_unread(path, 1);
	else if (n == 0 || last != '\n')
		record_partial(path, st.st_size == 0);
	if (n != 1 || last != '\n') {
		(void)close(fd);
		return;
	}
	if ((rc = bundle_file_open(&bf, fd)) == 0) {
		while ((rc = bundle_file_next(&bf, &t)) > 0)
			task_free(&t);
	}
	bundle_file_close(&bf);
	(void)close(fd);
	if (rc == -2) {
		record_unread(path, 1);
		return;
	}
	if (rc < 0) {
		/* incoming/ is the CLI's: a forged or tampered bundle is
		 * spoold's to reject, not a broken spool */
		if (w == W_INCOMING)
			note("%s: line %d: %s (spoold will reject it)", path,
			    br->r.errline, br->r.why);
		else
			problem("%s: line %d: %s", path, br->r.errline,
			    br->r.why);
		return;
	}
	if (w != W_INCOMING && br->hdr.first != strtoull(name, NULL, 10)) {
		problem("%s: holds tasks from %" PRIu64 ", its name says "
		    "otherwise", path, br->hdr.first);
		return;
	}
	fk.ranges = xgrowarray(fk.ranges, fk.nranges, sizeof *fk.ranges);
	r = &fk.ranges[fk.nranges++];
	memset(r, 0, sizeof *r);
	r->first = br->hdr.first;
	r->count = br->hdr.count;
	r->where = w;
	snprintf(r->nonce, sizeof r->nonce, "%s", br->hdr.nonce);
	r->name = xstrdup(path);
}

static void
scan_bundles(enum where w, enum spool_dir d)
{
	struct fsop_names ns;
	char path[FSOP_TMPNAME_MAX + 32];
	size_t i;

	if (names_list(cli_sp.fd[d], ".", spool_dir_name[d], &ns) < 0)
		return;
	for (i = 0; i < ns.n; i++) {
		if (dotted(spool_dir_name[d], ns.v[i]))
			continue;
		snprintf(path, sizeof path, "%s/%s", where_name[w], ns.v[i]);
		bundle_check(w, ns.v[i], path);
	}
	fsop_names_free(&ns);
}

/* ---- tasks/: final tasks ---- */

/*
 * A final task's spec: a task record, maybe with its assignment keys.
 * 1 if there is none (yet: see cross_check), else 0.
 */
static int
spec_check(int dfd, const char *path, uint64_t id)
{
	struct buf b = BUF_INIT;
	struct task_spec t;
	char file[FSCK_PATH_MAX + 16];
	const char *why;
	uint32_t attempt;
	int line;

	snprintf(file, sizeof file, "%s/spec", path);
	if (fsop_read_file(dfd, "spec", FSCK_RECORD_MAX, &b, NULL) < 0 &&
	    errno == ENOENT)
		return 1;
	buf_free(&b);
	if (record_read(dfd, "spec", file, &b, 0) < 0)
		return 0;
	if (final_spec_decode(b.p, b.len, &t, &attempt, &why, &line) < 0) {
		problem("%s: line %d: %s", file, line, why);
		buf_free(&b);
		return 0;
	}
	if (t.id != id)
		problem("%s: is the spec of task %" PRIu64, file, t.id);
	task_free(&t);
	buf_free(&b);
	return 0;
}

/*
 * 0 and the result's attempt in *got and its state in *state (each if
 * not NULL), or -1.
 */
static int
result_check(int dfd, const char *name, const char *path, uint64_t id,
    uint32_t attempt, uint32_t *got, enum result_state *state)
{
	struct buf b = BUF_INIT;
	struct result res;
	const char *why;
	int rc = -1;

	if (record_read(dfd, name, path, &b, 0) < 0)
		return -1;
	result_init(&res);
	if (result_decode(b.p, b.len, &res, &why) < 0)
		problem("%s: %s", path, why);
	else if (res.id != id)
		problem("%s: is the result of task %" PRIu64, path, res.id);
	else if (attempt && res.attempt != attempt)
		problem("%s: is the result of attempt %u", path, res.attempt);
	else
		rc = 0;
	if (rc == 0 && got)
		*got = res.attempt;
	if (rc == 0 && state)
		*state = res.state;
	result_free(&res);
	buf_free(&b);
	return rc;
}

static void
final_check(int shardfd, const char *shard, uint64_t shardno, const char *name)
{
	char path[FSCK_PATH_MAX], file[FSCK_PATH_MAX + 16];
	enum result_state state;
	struct final *fin;
	struct stat st;
	uint64_t id;
	int fd;

	snprintf(path, sizeof path, "tasks/%s/%s", shard, name);
	if (parse_u64(name, &id) < 0 || id == 0) {
		problem("%s: not a task ID", path);
		return;
	}
	if (id / SPOOL_SHARD_SIZE != shardno) {
		problem("%s: task %" PRIu64 " in the wrong shard (its own is "
		    "tasks/%" PRIu64 ")", path, id, id / SPOOL_SHARD_SIZE);
		return;
	}
	if (fsop_stat(shardfd, name, &st) < 0 || !S_ISDIR(st.st_mode)) {
		problem("%s: not a directory", path);
		return;
	}
	if ((fd = fsop_opendir(shardfd, name)) < 0) {
		problem("%s: cannot open: %s", path, strerror(errno));
		return;
	}
	fk.finals = xgrowarray(fk.finals, fk.nfinals, sizeof *fk.finals);
	fin = &fk.finals[fk.nfinals++];
	fin->id = id;
	fin->attempt = 0;
	snprintf(file, sizeof file, "%s/result", path);
	state = RS_FAILED;
	(void)result_check(fd, "result", file, id, 0, &fin->attempt, &state);
	fin->nospec = spec_check(fd, path, id);
	/* the IDs of a refused bundle have a result and no spec */
	if (state == RS_REJECTED)
		fin->nospec = 0;
	close(fd);
}

static int
final_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct final *)a)->id;
	uint64_t y = ((const struct final *)b)->id;

	return x < y ? -1 : x > y;
}

static struct final *
final_of(uint64_t id)
{
	struct final key = { .id = id };

	if (fk.nfinals == 0)	/* fk.finals is NULL then */
		return NULL;
	return bsearch(&key, fk.finals, fk.nfinals, sizeof *fk.finals,
	    final_cmp);
}

static int
is_final(uint64_t id)
{
	return final_of(id) != NULL;
}

static void
scan_tasks(void)
{
	struct fsop_names shards, ns;
	char path[64];
	uint64_t shardno;
	size_t i, k;
	int fd;

	if (names_list(cli_sp.fd[SD_TASKS], ".", "tasks", &shards) < 0)
		return;
	for (i = 0; i < shards.n; i++) {
		if (dotted("tasks", shards.v[i]))
			continue;
		snprintf(path, sizeof path, "tasks/%s", shards.v[i]);
		if (parse_u64(shards.v[i], &shardno) < 0) {
			problem("%s: not a shard", path);
			continue;
		}
		if ((fd = fsop_opendir(cli_sp.fd[SD_TASKS], shards.v[i])) < 0) {
			problem("%s: cannot open: %s", path, strerror(errno));
			continue;
		}
		if (names_list(fd, ".", path, &ns) == 0) {
			for (k = 0; k < ns.n; k++)
				if (!dotted(path, ns.v[k]))
					final_check(fd, shards.v[i], shardno,
					    ns.v[k]);
			fsop_names_free(&ns);
		}
		close(fd);
	}
	fsop_names_free(&shards);
	if (fk.nfinals > 1)
		qsort(fk.finals, fk.nfinals, sizeof *fk.finals, final_cmp);
}

/* ---- workers/ ---- */

static void
assignment_check(int subfd, int workfd, const char *wid, enum wsub sub,
    const char *name)
{
	char path[FSCK_PATH_MAX], file[FSCK_PATH_MAX + 64];
	struct buf b = BUF_INIT;
	struct task_spec t;
	const char *why = NULL;
	uint64_t id;
	uint32_t att, fatt;
	struct live *l;
	int nowork = 0;
	struct stat st;

	snprintf(path, sizeof path, "workers/%s/%s/%s", wid, wdir_sub_name[sub],
	    name);
	if (wdir_aname_parse(name, &id, &att) < 0) {
		problem("%s: not an assignment name (ID.ATTEMPT)", path);
		return;
	}
	if (sub != WS_CANCEL) {
		if (record_read(subfd, name, path, &b, 1) < 0)
			return;
		if (assign_decode(b.p, b.len, &t, &fatt, &why) < 0) {
			problem("%s: %s", path, why ? why : "not an assignment");
			buf_free(&b);
			return;
		}
		if (t.id != id || fatt != att)
			problem("%s: holds task %" PRIu64 " attempt %u", path,
			    t.id, fatt);
		task_free(&t);
		buf_free(&b);
	}
	if (sub == WS_DONE) {
		snprintf(file, sizeof file, "workers/%s/work/%s/result", wid, name);
		if (workfd < 0)
			problem("%s: committed, but workers/%s/work/ is missing",
			    path, wid);
		else if (fsop_stat(workfd, name, &st) < 0 && errno == ENOENT)
			nowork = 1;	/* moved to tasks/ already? (cross_check) */
		else {
			char rname[WDIR_ANAME_MAX + 8];

			snprintf(rname, sizeof rname, "%s/result", name);
			(void)result_check(workfd, rname, file, id, att, NULL,
			    NULL);
		}
	}
	if (claim_of(id) == NULL)
		problem("%s: task %" PRIu64 " was never claimed", path, id);
	if (sub == WS_REVOKED) {
		fk.revoked = xgrowarray(fk.revoked, fk.nrevoked,
		    sizeof *fk.revoked);
		fk.revoked[fk.nrevoked++] = (struct live){ id, att, sub, 0,
		    NULL };
	}
	if (sub == WS_REVOKED || sub == WS_CANCEL)
		return;
	fk.lives = xgrowarray(fk.lives, fk.nlives, sizeof *fk.lives);
	l = &fk.lives[fk.nlives++];
	l->id = id;
	l->attempt = att;
	l->sub = sub;
	l->nowork = nowork;
	l->wid = xstrdup(wid);
}

/*
 * A work/ID.ATT with its spec in it: an acceptance that spoold stopped
 * between its two renames (spoold/finish.c), which its next start
 * completes.  Anything else in work/ is the worker's.
 */
static void
work_check(int workfd, const char *wid, const char *name)
{
	char path[FSCK_PATH_MAX], file[FSCK_PATH_MAX + 16];
	uint64_t id;
	uint32_t att;
	int dfd;

	if (wdir_aname_parse(name, &id, &att) < 0 ||
	    (dfd = fsop_opendir(workfd, name)) < 0)
		return;
	snprintf(path, sizeof path, "workers/%s/work/%s", wid, name);
	if (spec_check(dfd, path, id) == 0) {
		snprintf(file, sizeof file, "%s/result", path);
		(void)result_check(dfd, "result", file, id, att, NULL, NULL);
		if (fk.settled)
			problem("%s: accepted (its spec is in it), but not "
			    "renamed to tasks/", path);
		else
			note("%s: accepted, its rename to tasks/%" PRIu64 "/%"
			    PRIu64 " to come", path, id / SPOOL_SHARD_SIZE, id);
	}
	close(dfd);
}

/*
 * workers/WID is gone: spoold collected it (moved it to gc/ and removed
 * it) while we read it.  Opened again by name, not looked at with a
 * stat: on a network filesystem (sshfs, NFS) a stat may answer from an
 * attribute cache for a while, an open asks the server.  WIDs are never
 * reused (a random suffix), so a directory there is still this worker's.
 */
static int
worker_collected(const char *wid)
{
	int fd;

	if ((fd = fsop_opendir(cli_sp.fd[SD_WORKERS], wid)) >= 0) {
		(void)close(fd);
		return 0;
	}
	return errno == ENOENT;
}

#define COLLECTED	"%s: collected by spoold as fsck read it"

/*
 * A worker directory spoold collects (an exited or lost worker with no
 * task left) vanishes from under a live fsck, and its files with it.
 * Its problems are held until the scan ends: printed if the directory
 * is still there, dropped with its assignments if it was collected.
 * One read in full counts as it was read, collected since or not.
 */
static void
worker_check(const char *wid)
{
	struct worker_info wi;
	struct worker_status ws;
	struct fsop_names ns;
	char path[FSCK_PATH_MAX];
	int wfd, subfd, workfd, lost, exited;
	struct stat st;
	size_t k, nlives = fk.nlives, nrevoked = fk.nrevoked;
	enum wsub s;

	snprintf(path, sizeof path, "workers/%s", wid);
	if ((wfd = fsop_opendir(cli_sp.fd[SD_WORKERS], wid)) < 0) {
		if (errno == ENOENT)
			note(COLLECTED, path);
		else
			problem("%s: cannot open: %s", path, strerror(errno));
		return;
	}
	fk.holding = 1;
	if (winfo_read(wfd, "info", &wi) < 0)
		problem("%s/info: %s", path, errno == ENOENT ? "missing" :
		    "not a complete worker record");
	if (fsop_stat(wfd, "status", &st) == 0 &&
	    wstatus_read(wfd, "status", &ws) < 0)
		problem("%s/status: %s", path, beatfile_strerror(errno));
	lost = fsop_stat(wfd, "lost", &st) == 0;
	exited = fsop_stat(wfd, "exited", &st) == 0;
	workfd = fsop_opendir(wfd, wdir_sub_name[WS_WORK]);
	for (s = 0; s < WS_NSUB; s++) {
		char sp[FSCK_PATH_MAX + 16];

		if (s == WS_WORK)
			continue;
		snprintf(sp, sizeof sp, "%s/%s", path, wdir_sub_name[s]);
		if ((subfd = fsop_opendir(wfd, wdir_sub_name[s])) < 0) {
			problem("%s: cannot open: %s", sp, strerror(errno));
			continue;
		}
		if (names_list(subfd, ".", sp, &ns) == 0) {
			for (k = 0; k < ns.n; k++)
				if (!dotted(sp, ns.v[k]))
					assignment_check(subfd, workfd, wid, s,
					    ns.v[k]);
			fsop_names_free(&ns);
		}
		close(subfd);
	}
	if (workfd >= 0) {
		char wp[FSCK_PATH_MAX + 8];

		snprintf(wp, sizeof wp, "%s/work", path);
		if (names_list(workfd, ".", wp, &ns) == 0) {
			for (k = 0; k < ns.n; k++)
				if (strcmp(ns.v[k], WDIR_DISK_PROBE) == 0)
					note("%s/%s: the worker's disk probe "
					    "(being written, or left by a "
					    "worker that stopped; it goes with "
					    "the worker's directory)", wp,
					    WDIR_DISK_PROBE);
				else if (!dotted(wp, ns.v[k]))
					work_check(workfd, wid, ns.v[k]);
			fsop_names_free(&ns);
		}
		close(workfd);
	}
	fk.holding = 0;
	/* (only a directory with problems is asked again: one open less
	 * a worker where nothing was wrong) */
	if (fk.nheld && worker_collected(wid)) {
		while (fk.nlives > nlives)
			free(fk.lives[--fk.nlives].wid);
		fk.nrevoked = nrevoked;
		for (k = 0; k < fk.nheld; k++)
			free(fk.held[k].text);
		note(COLLECTED, path);
	} else {
		fk.workers++;
		/* one at a time: fk.out grows only by xgrowarray */
		for (k = 0; k < fk.nheld; k++) {
			fk.out = xgrowarray(fk.out, fk.nout, sizeof *fk.out);
			fk.out[fk.nout++] = fk.held[k];
		}
		if (!fk.quiet && (lost || exited))
			note("%s: %s", path, lost ? "declared lost" : "exited");
	}
	fk.nheld = 0;
	close(wfd);
}

static void
scan_workers(void)
{
	struct fsop_names ns;
	size_t i;

	if (names_list(cli_sp.fd[SD_WORKERS], ".", "workers", &ns) < 0)
		return;
	for (i = 0; i < ns.n; i++)
		if (!dotted("workers", ns.v[i]))
			worker_check(ns.v[i]);
	fsop_names_free(&ns);
}

/* ---- cross checks ---- */

static int
range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (int)x->where - (int)y->where;
}

static int
live_cmp(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->attempt < y->attempt ? -1 : x->attempt > y->attempt;
}

/* attempts/ID.ATT is there without its spec: 1. */
static int
archived_without_spec(uint64_t id, uint32_t att)
{
	char name[WDIR_ANAME_MAX + 8];
	struct stat st;

	wdir_aname(id, att, name, sizeof name);
	if (fsop_stat(cli_sp.fd[SD_ATTEMPTS], name, &st) < 0)
		return 0;
	strcat(name, "/spec");
	return fsop_stat(cli_sp.fd[SD_ATTEMPTS], name, &st) < 0;
}

/*
 * A worker holds the report done/ID.ATT or returned/ID.ATT, or the
 * revoked/ID.ATT of a worker that exited (its attempt's spec, which
 * spoold moves in after its work directory: spoold/finish.c,
 * finish_archive): 1.
 */
static int
reported(uint64_t id, uint32_t att)
{
	size_t i;

	for (i = 0; i < fk.nlives; i++)
		if (fk.lives[i].id == id && fk.lives[i].attempt == att &&
		    (fk.lives[i].sub == WS_DONE || fk.lives[i].sub == WS_RETURNED))
			return 1;
	for (i = 0; i < fk.nrevoked; i++)
		if (fk.revoked[i].id == id && fk.revoked[i].attempt == att)
			return 1;
	return 0;
}

/* The bundle holding id in specs/ (or accepting/), or NULL. */
static struct range *
accepted_range(uint64_t id)
{
	size_t i;

	/* ranges are sorted by first; few enough for a linear look back */
	for (i = fk.nranges; i-- > 0;)
		if (fk.ranges[i].first <= id &&
		    id < fk.ranges[i].first + fk.ranges[i].count &&
		    fk.ranges[i].where != W_INCOMING)
			return &fk.ranges[i];
	return NULL;
}

static void
cross_check(void)
{
	const struct ids_claim *c;
	struct range *r, *prev = NULL;
	size_t i, j;

	if (fk.nranges > 1)
		qsort(fk.ranges, fk.nranges, sizeof *fk.ranges, range_cmp);
	for (i = 0; i < fk.nranges; i++) {
		r = &fk.ranges[i];
		c = claim_of(r->first);
		if (r->where != W_INCOMING && (c == NULL ||
		    c->start != r->first || c->count != r->count ||
		    (r->nonce[0] && strcmp(c->nonce, r->nonce) != 0)))
			problem("%s: tasks %" PRIu64 "-%" PRIu64 " are not the "
			    "claim they were accepted under", r->name,
			    r->first, r->first + r->count - 1);
		if (prev && r->first < prev->first + prev->count &&
		    !(r->first == prev->first && r->count == prev->count &&
		    prev->where == W_ACCEPTING && r->where == W_SPECS &&
		    !fk.settled))
			problem("%s: tasks %" PRIu64 "-%" PRIu64 " are also in "
			    "%s: submitted twice", r->name, r->first,
			    r->first + r->count - 1, prev->name);
		prev = r;
	}
	for (i = 0; i < fk.nfinals; i++) {
		uint64_t id = fk.finals[i].id;

		if (i > 0 && fk.finals[i - 1].id == id)
			problem("tasks: task %" PRIu64 " is final twice", id);
		if (claim_of(id) == NULL)
			problem("tasks/%" PRIu64 "/%" PRIu64 ": task was never "
			    "claimed", id / SPOOL_SHARD_SIZE, id);
		for (j = 0; j < fk.nranges; j++)
			if (fk.ranges[j].where == W_INCOMING &&
			    fk.ranges[j].first <= id &&
			    id < fk.ranges[j].first + fk.ranges[j].count)
				problem("%s: task %" PRIu64 " is already final",
				    fk.ranges[j].name, id);
		if ((r = accepted_range(id)) != NULL)
			r->final++;
	}
	if (fk.nlives > 1)
		qsort(fk.lives, fk.nlives, sizeof *fk.lives, live_cmp);
	for (i = 0; i < fk.nlives; i++) {
		struct live *l = &fk.lives[i];
		struct final *fin = final_of(l->id);

		/*
		 * A spoold from before the spec joined first renamed
		 * work/ID.ATT to tasks/SHARD/ID, then done/ID.ATT into it
		 * as its spec: between the two, both halves point at each
		 * other.
		 */
		if (l->sub == WS_DONE && fin && fin->nospec &&
		    fin->attempt == l->attempt) {
			fin->nospec = 0;
			if (!fk.settled) {
				note("tasks/%" PRIu64 "/%" PRIu64 ": accepted, its "
				    "spec still at workers/%s/done/%" PRIu64 ".%u",
				    l->id / SPOOL_SHARD_SIZE, l->id, l->wid, l->id,
				    l->attempt);
				continue;
			}
		} else if (l->nowork && archived_without_spec(l->id,
		    l->attempt)) {
			/* retried: finish_archive renames work/ID.ATT to
			 * attempts/, then done/ID.ATT into it as its spec */
			if (!fk.settled)
				note("attempts/%" PRIu64 ".%u: archived, its spec "
				    "still at workers/%s/done/%" PRIu64 ".%u",
				    l->id, l->attempt, l->wid, l->id,
				    l->attempt);
		} else if (l->nowork) {
			problem("workers/%s/done/%" PRIu64 ".%u: committed, but "
			    "its work/%" PRIu64 ".%u is gone", l->wid, l->id,
			    l->attempt, l->id, l->attempt);
		}

		if (i > 0 && fk.lives[i - 1].id == l->id)
			problem("workers/%s/%s/%" PRIu64 ".%u: task %" PRIu64
			    " is also at workers/%s/%s/%" PRIu64 ".%u: two "
			    "live attempts", l->wid, wdir_sub_name[l->sub],
			    l->id, l->attempt, l->id, fk.lives[i - 1].wid,
			    wdir_sub_name[fk.lives[i - 1].sub], l->id,
			    fk.lives[i - 1].attempt);
		if (accepted_range(l->id) == NULL && !is_final(l->id))
			problem("workers/%s/%s/%" PRIu64 ".%u: task %" PRIu64
			    " was never accepted", l->wid,
			    wdir_sub_name[l->sub], l->id, l->attempt, l->id);
		if (fk.settled && (l->sub == WS_DONE || l->sub == WS_RETURNED))
			problem("workers/%s/%s/%" PRIu64 ".%u: a report spoold "
			    "has not taken in", l->wid, wdir_sub_name[l->sub],
			    l->id, l->attempt);
		else if (fk.settled && is_final(l->id))
			problem("workers/%s/%s/%" PRIu64 ".%u: an assignment of "
			    "a final task", l->wid, wdir_sub_name[l->sub],
			    l->id, l->attempt);
	}
	for (i = 0; i < fk.nfinals; i++)
		if (fk.finals[i].nospec)
			problem("tasks/%" PRIu64 "/%" PRIu64 "/spec: missing",
			    fk.finals[i].id / SPOOL_SHARD_SIZE, fk.finals[i].id);
	if (fk.settled)
		for (i = 0; i < fk.nranges; i++) {
			r = &fk.ranges[i];
			if (r->where == W_INCOMING)
				problem("%s: not taken in", r->name);
			else if (r->where == W_SPECS && r->final == r->count)
				problem("%s: every task of it is final, but it "
				    "is still there", r->name);
		}
}

/* ---- settled: what must be gone ---- */

static void
empty_check(enum spool_dir d)
{
	struct fsop_names ns;
	size_t i;

	if (names_list(cli_sp.fd[d], ".", spool_dir_name[d], &ns) < 0)
		return;
	for (i = 0; i < ns.n; i++)
		if (!dotted(spool_dir_name[d], ns.v[i]))
			problem("%s/%s: left in a temporary area",
			    spool_dir_name[d], ns.v[i]);
	fsop_names_free(&ns);
}

/* requeued/ID and attempts/ID.ATT: counters and archives of live tasks */
static void
leftover_check(enum spool_dir d)
{
	struct fsop_names ns;
	uint64_t id;
	uint32_t att;
	size_t i;
	int ok;

	if (names_list(cli_sp.fd[d], ".", spool_dir_name[d], &ns) < 0)
		return;
	for (i = 0; i < ns.n; i++) {
		if (dotted(spool_dir_name[d], ns.v[i]))
			continue;
		ok = d == SD_REQUEUED ? parse_u64(ns.v[i], &id) == 0 :
		    wdir_aname_parse(ns.v[i], &id, &att) == 0;
		if (!ok)
			problem("%s/%s: not a task's", spool_dir_name[d], ns.v[i]);
		else if (fk.settled && is_final(id))
			problem("%s/%s: left behind by final task %" PRIu64,
			    spool_dir_name[d], ns.v[i], id);
		else if (d == SD_ATTEMPTS && archived_without_spec(id, att) &&
		    (fk.settled || !reported(id, att)))
			problem("attempts/%s: archived attempt without its spec",
			    ns.v[i]);
	}
	fsop_names_free(&ns);
}

static void
rejected_check(void)
{
	struct fsop_names ns;
	struct stat st;
	char why[FSOP_TMPNAME_MAX + 300];
	size_t i, len;

	if (names_list(cli_sp.fd[SD_REJECTED], ".", "rejected", &ns) < 0)
		return;
	for (i = 0; i < ns.n; i++) {
		len = strlen(ns.v[i]);
		if (len > 4 && strcmp(ns.v[i] + len - 4, ".why") == 0)
			continue;
		fk.rejected++;
		snprintf(why, sizeof why, "%s.why", ns.v[i]);
		if (fk.settled && fsop_stat(cli_sp.fd[SD_REJECTED], why, &st) < 0)
			problem("rejected/%s: no reason (rejected/%s)", ns.v[i],
			    why);
	}
	fsop_names_free(&ns);
}

static void
lease_check(void)
{
	struct owner_info o;
	uint64_t beat;
	int rc = lease_holder(&cli_sp, &o, &beat);

	if (rc < 0)
		problem("lock/spoold: not a complete lease (%s)", strerror(errno));
	else if (rc > 0)
		note("lock/spoold: held by spoold pid %ld on host %s (beat "
		    "%" PRIu64 "); if it runs, files move while fsck reads",
		    o.pid, o.host, beat);
}

/* What a read of the spool found, gone; the options stay. */
static void
fsck_free(void)
{
	int settled = fk.settled, quiet = fk.quiet;
	size_t i;

	for (i = 0; i < fk.nranges; i++)
		free(fk.ranges[i].name);
	for (i = 0; i < fk.nlives; i++)
		free(fk.lives[i].wid);
	for (i = 0; i < fk.nout; i++)
		free(fk.out[i].text);
	free(fk.ranges);
	free(fk.lives);
	free(fk.revoked);
	free(fk.claims);
	free(fk.finals);
	free(fk.out);
	free(fk.held);
	memset(&fk, 0, sizeof fk);
	fk.settled = settled;
	fk.quiet = quiet;
}

/* One read of the whole spool. */
static void
fsck_read(void)
{
	lease_check();
	scan_ids();
	scan_bundles(W_INCOMING, SD_INCOMING);
	scan_bundles(W_ACCEPTING, SD_ACCEPTING);
	scan_bundles(W_SPECS, SD_SPECS);
	scan_tasks();
	scan_workers();
	cross_check();
	leftover_check(SD_REQUEUED);
	leftover_check(SD_ATTEMPTS);
	rejected_check();
	if (fk.settled) {
		empty_check(SD_TMP);
		empty_check(SD_ACCEPTING);
		empty_check(SD_GC);
	}
}

struct seen {			/* a problem of the first read */
	char	*text;
	int	matched;	/* by one of the second */
};

static int
seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct seen *)a)->text,
	    ((const struct seen *)b)->text);
}

/* Is text one of the first read's problems not matched yet?  Marks it. */
static int
seen_match(struct seen *v, size_t n, const char *text)
{
	struct seen key = { (char *)text, 0 }, *p;

	if (n == 0 || (p = bsearch(&key, v, n, sizeof *v, seen_cmp)) == NULL)
		return 0;
	while (p > v && strcmp(p[-1].text, text) == 0)
		p--;
	for (; p < v + n && strcmp(p->text, text) == 0; p++)
		if (!p->matched)
			return p->matched = 1;
	return 0;
}

/*
 * A problem counts when two reads of the spool in a row find it.
 * Files move while spoold and workers run, and a move between two
 * reads of one check (an acceptance renames work/ID.ATT to tasks/ as
 * fsck goes from tasks/ to the worker's done/) looks like damage to
 * one read; damage stays.  So a first read with problems is followed
 * by a second, and what only one of them saw is counted in a note.
 * Returns how many were seen once.
 */
static unsigned long
fsck_confirm(void)
{
	struct seen *seen = NULL;
	unsigned long once = 0;
	size_t nseen = 0, i, k;

	for (i = 0; i < fk.nout; i++)
		if (fk.out[i].problem) {
			seen = xgrowarray(seen, nseen, sizeof *seen);
			seen[nseen].text = fk.out[i].text;
			seen[nseen++].matched = 0;
			fk.out[i].text = NULL;
		}
	if (nseen == 0)
		return 0;
	qsort(seen, nseen, sizeof *seen, seen_cmp);
	fsck_free();
	fsck_read();
	for (i = k = 0; i < fk.nout; i++) {
		if (fk.out[i].problem &&
		    !seen_match(seen, nseen, fk.out[i].text)) {
			once++;
			free(fk.out[i].text);
			continue;
		}
		fk.out[k++] = fk.out[i];
	}
	fk.nout = k;
	for (i = 0; i < nseen; i++) {
		once += !seen[i].matched;
		free(seen[i].text);
	}
	free(seen);
	return once;
}

int
cmd_fsck(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "settled", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long live = 0, once;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			fk.settled = 1;
			break;
		case 'q':
			fk.quiet = 1;
			break;
		case 'h':
			printf("usage: spool fsck [--settled] [-q]\n"
			    "Check the spool's invariants; see spool(1).\n");
			return 0;
		default:
			msg_fatal_status(EXIT_USAGE, "usage: spool fsck "
			    "[--settled] [-q]");
		}
	}
	if (optind != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool fsck [--settled] [-q]");
	cli_open();
	fsck_read();
	if ((once = fsck_confirm()) > 0)
		note("%lu problem%s seen by one of two reads of the spool and "
		    "not by the other: files moved as fsck read them", once,
		    once == 1 ? "" : "s");
	for (i = 0; i < fk.nout; i++) {
		fk.problems += fk.out[i].problem;
		puts(fk.out[i].text);
	}
	for (i = 0; i < fk.nranges; i++)
		if (fk.ranges[i].where == W_SPECS)
			live += fk.ranges[i].count - fk.ranges[i].final;
	printf("fsck: %zu final tasks, %lu live, %zu claims, %lu workers, "
	    "%lu rejected files; %lu problem%s\n", fk.nfinals, live,
	    fk.nclaims, fk.workers, fk.rejected, fk.problems,
	    fk.problems == 1 ? "" : "s");
	c = fk.problems ? 1 : 0;
	fsck_free();
	spool_close(&cli_sp);
	return c;
}

/*
 * test_ids.c - ids.c, task IDs claimed without a daemon, in fresh
 * spools made with spool_init() in mkdtemp() directories: the first
 * claim starts at 1, claims are contiguous, claims cross IDS_SHARD
 * boundaries into new shard directories, ids_read/ids_end/ids_parse,
 * a claim that loses the race to another process's symlink, the NFS
 * case of a spurious EEXIST for our own symlink (fsop_fault_hook), and
 * 8 processes claiming ranges of random sizes at once: the ranges are
 * disjoint and cover 1..end with no gap.
 */
#include <sys/wait.h>

#include "unit.h"
#include "fsop.h"
#include "ids.h"

static struct spool *
SP(void **state)
{
	return &((struct unit_spool *)*state)->sp;
}

static int
link_target(struct spool *sp, const char *name, char *out, size_t size)
{
	ssize_t n = readlinkat(sp->fd[SD_IDS], name, out, size - 1);

	if (n < 0)
		return -1;
	out[n] = 0;
	return 0;
}

static void
test_first_claims(void **state)
{
	static const struct {
		uint32_t count;
		uint64_t start;
	} rows[] = {
		{ 1,	1 },
		{ 10,	2 },
		{ 5,	12 },
		{ 1,	17 },
		{ 1000,	18 },
	};
	struct spool *sp = SP(state);
	struct ids_claim c[NELEM(rows)], rd;
	char target[200], want[200];
	uint64_t end;
	size_t i;

	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(ids_claim(sp, rows[i].count, &c[i]) == 0, "claim %zu: %s",
		    i, strerror(errno));
		TCHECK(c[i].start == rows[i].start && c[i].count ==
		    rows[i].count, "claim %zu: %llu+%u, want %llu+%u", i,
		    (unsigned long long)c[i].start, c[i].count,
		    (unsigned long long)rows[i].start, rows[i].count);
	}
	/* Nonces are unique. */
	for (i = 1; i < NELEM(rows); i++)
		assert_string_not_equal(c[i].nonce, c[i - 1].nonce);

	/* On disk: ids/0/START -> "COUNT NONCE". */
	assert_int_equal(link_target(sp, "0/2", target, sizeof target), 0);
	snprintf(want, sizeof want, "10 %s", c[1].nonce);
	assert_string_equal(target, want);

	/* ids_read at claim starts, and not inside a claim. */
	assert_int_equal(ids_read(sp, 2, &rd), 1);
	assert_int_equal(rd.start, 2);
	assert_int_equal(rd.count, 10);
	assert_string_equal(rd.nonce, c[1].nonce);
	assert_int_equal(ids_read(sp, 3, &rd), 0);
	assert_int_equal(ids_read(sp, 1018, &rd), 0);

	/* ids_end from the hint and from the start of the chain. */
	assert_int_equal(ids_end(sp, 0, &end), 0);
	assert_int_equal(end, 1018);
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, 1018);
	assert_int_equal(ids_end(sp, 12, &end), 0);
	assert_int_equal(end, 1018);
}

static void
test_bad_counts(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c;
	uint64_t end;

	errno = 0;
	assert_int_equal(ids_claim(sp, 0, &c), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ids_claim(sp, IDS_CLAIM_MAX + 1, &c), -1);
	assert_int_equal(errno, EINVAL);
	/* Nothing was claimed. */
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, 1);
	assert_int_equal(ids_claim(sp, 1, &c), 0);
	assert_int_equal(c.start, 1);
}

static void
test_shard_boundary(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c;
	struct stat st;
	uint64_t end;
	char target[200];

	assert_int_equal(ids_claim(sp, IDS_SHARD - 6, &c), 0);
	assert_int_equal(c.start, 1);
	/* 65531..65540 crosses into shard 1; its link is in shard 0. */
	assert_int_equal(ids_claim(sp, 10, &c), 0);
	assert_int_equal(c.start, IDS_SHARD - 5);
	assert_int_equal(link_target(sp, "0/65531", target, sizeof target), 0);
	/* The next claim starts in shard 1. */
	assert_int_equal(ids_claim(sp, 1, &c), 0);
	assert_int_equal(c.start, IDS_SHARD + 5);
	assert_int_equal(fstatat(sp->fd[SD_IDS], "1", &st, AT_SYMLINK_NOFOLLOW),
	    0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(link_target(sp, "1/65541", target, sizeof target), 0);
	assert_int_equal(ids_read(sp, IDS_SHARD + 5, &c), 1);

	/* The largest claim spans 16 shards; the next starts in shard 17. */
	assert_int_equal(ids_claim(sp, IDS_CLAIM_MAX, &c), 0);
	assert_int_equal(c.start, IDS_SHARD + 6);
	assert_int_equal(ids_claim(sp, 3, &c), 0);
	assert_int_equal(c.start, IDS_SHARD + 6 + IDS_CLAIM_MAX);
	assert_int_equal(c.start / IDS_SHARD, 17);
	assert_int_equal(link_target(sp, "17/1114118", target, sizeof target),
	    0);
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, IDS_SHARD + 6 + IDS_CLAIM_MAX + 3);
}

/* The hint only speeds up the walk: without it, claims stay correct. */
static void
test_hint_lost(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c;

	assert_int_equal(ids_claim(sp, 7, &c), 0);
	assert_int_equal(ids_claim(sp, 7, &c), 0);
	assert_int_equal(c.start, 8);
	(void)unlinkat(sp->fd[SD_IDS], "hint", 0);
	assert_int_equal(ids_claim(sp, 2, &c), 0);
	assert_int_equal(c.start, 15);
}

static void
set_hint(struct spool *sp, const char *target)
{
	(void)unlinkat(sp->fd[SD_IDS], "hint", 0);
	assert_int_equal(symlinkat(target, sp->fd[SD_IDS], "hint"), 0);
}

/*
 * A hint that names no claim start (anyone who may submit to a shared
 * spool can move it) is not where a claim is made: inside a claim, the
 * claim would overlap it; past the end, the walk from 1 would never
 * see it.  The walk starts from 1 instead, and the hint is put right.
 */
static void
test_hint_wrong(void **state)
{
	static const char *const wrong[] = { "3", "1000", "2", "4" };
	struct spool *sp = SP(state);
	struct ids_claim c;
	char target[32];
	uint64_t end, want = 6;
	size_t i;

	assert_int_equal(ids_claim(sp, 5, &c), 0);
	assert_int_equal(c.start, 1);
	/* "4" names a link that is not a claim: not ours to follow */
	assert_int_equal(symlinkat("garbage", sp->fd[SD_IDS], "0/4"), 0);
	for (i = 0; i < NELEM(wrong); i++) {
		set_hint(sp, wrong[i]);
		assert_int_equal(ids_end(sp, 0, &end), 0);
		TCHECK(end == want, "hint %s: end %llu, want %llu", wrong[i],
		    (unsigned long long)end, (unsigned long long)want);
		assert_int_equal(ids_claim(sp, 1, &c), 0);
		TCHECK(c.start == want, "hint %s: claimed %llu, want %llu",
		    wrong[i], (unsigned long long)c.start,
		    (unsigned long long)want);
		assert_int_equal(link_target(sp, "hint", target,
		    sizeof target), 0);
		TCHECK(strtoull(target, NULL, 10) == want, "hint %s: now %s",
		    wrong[i], target);
		want++;
	}
}

/* A claim link we did not write is an error, not a length. */
static void
test_foreign_link(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c;

	assert_int_equal(mkdirat(sp->fd[SD_IDS], "0", 0700), 0);
	assert_int_equal(symlinkat("garbage", sp->fd[SD_IDS], "0/1"), 0);
	errno = 0;
	assert_int_equal(ids_read(sp, 1, &c), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(symlinkat("0 x", sp->fd[SD_IDS], "0/2"), 0);
	assert_int_equal(ids_read(sp, 2, &c), -1);
}

static void
test_parse(void **state)
{
	static const struct {
		const char *in;
		int ok;
		uint64_t want;
	} rows[] = {
		{ "1",			1, 1 },
		{ "42",			1, 42 },
		{ "1099511627775",	1, 1099511627775ULL },
		{ "1099511627776",	0, 0 },
		{ "0",			0, 0 },
		{ "",			0, 0 },
		{ "-1",			0, 0 },
		{ "12a",		0, 0 },
		{ " 1",			0, 0 },
		{ "1 ",			0, 0 },
		{ "0x10",		0, 0 },
		{ "99999999999999999999999", 0, 0 },
	};
	uint64_t id;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		id = 777;
		rc = ids_parse(rows[i].in, &id);
		TCHECK(rc == (rows[i].ok ? 0 : -1), "\"%s\": rc %d", rows[i].in,
		    rc);
		if (rows[i].ok)
			TCHECK(id == rows[i].want, "\"%s\" = %llu", rows[i].in,
			    (unsigned long long)id);
	}
}

/* ---- fault injection ---- */

static struct {
	struct spool *sp;
	struct ids_claim *claim;	/* ids_claim fills its nonce first */
	uint32_t count;
	int mode;		/* 1: spurious EEXIST; 2: lose the race */
	int fired;
} hk;

static int
ids_hook(enum fsop_kind kind, const char *name)
{
	char target[IDS_NONCE_MAX + 32];

	if (kind != FSOP_SYMLINK || hk.fired || name == NULL ||
	    strncmp(name, "hint.", 5) == 0)
		return 0;
	if (hk.mode == 1) {
		/* The create happens, but its reply says EEXIST. */
		snprintf(target, sizeof target, "%u %s", hk.count,
		    hk.claim->nonce);
		if (symlinkat(target, hk.sp->fd[SD_IDS], name) < 0)
			return errno;	/* e.g. ENOENT: no shard yet */
		hk.fired = 1;
		return EEXIST;
	}
	/* Another process's claim of 3 IDs lands first. */
	if (symlinkat("3 other.1.1.deadbeef", hk.sp->fd[SD_IDS], name) < 0)
		return 0;	/* let the real call fail the same way */
	hk.fired = 1;
	return 0;
}

static void
test_spurious_eexist_is_ours(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c, next, rd;
	uint64_t end;
	int links = 0;

	memset(&hk, 0, sizeof hk);
	hk.sp = sp;
	hk.claim = &c;
	hk.count = 5;
	hk.mode = 1;
	fsop_fault_hook = ids_hook;
	assert_int_equal(ids_claim(sp, 5, &c), 0);
	fsop_fault_hook = NULL;
	assert_int_equal(hk.fired, 1);
	/* Our claim, once: IDs 1..5, and only one link for it. */
	assert_int_equal(c.start, 1);
	assert_int_equal(c.count, 5);
	assert_int_equal(ids_read(sp, 1, &rd), 1);
	assert_string_equal(rd.nonce, c.nonce);
	assert_int_equal(fsop_list(sp->fd[SD_IDS], "0", unit_count_listed, &links), 0);
	assert_int_equal(links, 1);
	assert_int_equal(ids_claim(sp, 2, &next), 0);
	assert_int_equal(next.start, 6);
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, 8);
}

static void
test_lost_race_moves_past(void **state)
{
	struct spool *sp = SP(state);
	struct ids_claim c, rd;
	uint64_t end;

	memset(&hk, 0, sizeof hk);
	hk.sp = sp;
	hk.claim = &c;
	hk.mode = 2;
	fsop_fault_hook = ids_hook;
	assert_int_equal(ids_claim(sp, 4, &c), 0);
	fsop_fault_hook = NULL;
	assert_int_equal(hk.fired, 1);
	assert_int_equal(ids_read(sp, 1, &rd), 1);
	assert_int_equal(rd.count, 3);
	assert_string_equal(rd.nonce, "other.1.1.deadbeef");
	assert_int_equal(c.start, 4);
	assert_int_equal(ids_read(sp, 4, &rd), 1);
	assert_string_equal(rd.nonce, c.nonce);
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, 8);
}

/* ---- many processes at once ---- */

#define NPROC	8
#define NCLAIM	150
#define MAXCNT	3000

struct got {
	uint64_t start;
	uint32_t count;
	uint32_t proc;
};

static void
child(struct spool *sp, int wfd, uint32_t proc)
{
	unsigned seed = (unsigned)getpid() * 2654435761u + proc;
	struct ids_claim c;
	struct got g;
	int i;

	for (i = 0; i < NCLAIM; i++) {
		uint32_t n = 1 + (uint32_t)(rand_r(&seed) % MAXCNT);

		if (ids_claim(sp, n, &c) < 0 || c.count != n)
			_exit(10);
		g.start = c.start;
		g.count = c.count;
		g.proc = proc;
		if (write(wfd, &g, sizeof g) != (ssize_t)sizeof g)
			_exit(11);
	}
	_exit(0);
}

static int
by_start(const void *a, const void *b)
{
	const struct got *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void
test_concurrent_claims(void **state)
{
	struct spool *sp = SP(state);
	struct got *all = xcalloc(NPROC * NCLAIM + 1, sizeof *all);
	size_t n = 0, i;
	uint64_t end, total = 0;
	pid_t pids[NPROC];
	int p[2], st, k;
	ssize_t r;

	assert_int_equal(pipe(p), 0);
	for (k = 0; k < NPROC; k++) {
		pids[k] = fork();
		assert_true(pids[k] >= 0);
		if (pids[k] == 0) {
			close(p[0]);
			child(sp, p[1], (uint32_t)k);
		}
	}
	close(p[1]);
	/* Writes of one record are atomic (< PIPE_BUF). */
	while ((r = read(p[0], &all[n], sizeof *all)) > 0) {
		assert_int_equal(r, sizeof *all);
		if (++n > NPROC * NCLAIM)
			break;
	}
	close(p[0]);
	for (k = 0; k < NPROC; k++) {
		assert_int_equal(waitpid(pids[k], &st, 0), pids[k]);
		TCHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "claimer %d: status 0x%x", k, st);
	}
	assert_int_equal(n, NPROC * NCLAIM);

	qsort(all, n, sizeof *all, by_start);
	TCHECK(all[0].start == 1, "first range starts at %llu",
	    (unsigned long long)all[0].start);
	for (i = 0; i < n; i++) {
		total += all[i].count;
		if (i > 0)
			TCHECK(all[i].start == all[i - 1].start + all[i - 1].count,
			    "range %llu+%u (proc %u) follows %llu+%u (proc %u): "
			    "%s", (unsigned long long)all[i].start, all[i].count,
			    all[i].proc, (unsigned long long)all[i - 1].start,
			    all[i - 1].count, all[i - 1].proc,
			    all[i].start < all[i - 1].start + all[i - 1].count ?
			    "overlap" : "gap");
	}
	assert_int_equal(ids_end(sp, 1, &end), 0);
	assert_int_equal(end, 1 + total);
	assert_int_equal(ids_end(sp, 0, &end), 0);
	assert_int_equal(end, 1 + total);
	/* Enough IDs were claimed to cross many shard boundaries. */
	assert_true(total > 4 * IDS_SHARD);
	free(all);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, unit_spool_setup, \
	    unit_spool_teardown)
	const struct CMUnitTest tests[] = {
		T(test_first_claims),
		T(test_bad_counts),
		T(test_shard_boundary),
		T(test_hint_lost),
		T(test_hint_wrong),
		T(test_foreign_link),
		cmocka_unit_test(test_parse),
		T(test_spurious_eexist_is_ours),
		T(test_lost_race_moves_past),
		T(test_concurrent_claims),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * ids.c - the ID claim chain; see ids.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsop.h"
#include "ids.h"
#include "task.h"
#include "units.h"

static void
claim_name(uint64_t start, char *out, size_t size)
{
	snprintf(out, size, "%" PRIu64 "/%" PRIu64, start / IDS_SHARD, start);
}

/* c->where: ids/ and name under it ("" for ids/ itself) */
static void
claim_failed(struct ids_claim *c, const char *name)
{
	snprintf(c->where, sizeof c->where, "ids%s%s", *name ? "/" : "",
	    name);
}

int
ids_parse(const char *s, uint64_t *id)
{
	const char *why;

	if (units_parse_uint(s, TASK_ID_MAX, id, &why) < 0 || *id == 0)
		return -1;
	return 0;
}

int
ids_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
ids_read(struct spool *sp, uint64_t start, struct ids_claim *c)
{
	char name[48], target[IDS_NONCE_MAX + 32], *sp_at, *end;
	unsigned long long count;

	claim_name(start, name, sizeof name);
	if (fsop_readlink(sp->fd[SD_IDS], name, target, sizeof target) < 0)
		return errno == ENOENT ? 0 : -1;
	errno = 0;
	count = strtoull(target, &end, 10);
	sp_at = end;
	if (errno || end == target || *sp_at != ' ' || count == 0 ||
	    count > IDS_CLAIM_MAX || strlen(sp_at + 1) >= IDS_NONCE_MAX) {
		errno = EINVAL;	/* not a claim we wrote */
		return -1;
	}
	c->start = start;
	c->count = (uint32_t)count;
	snprintf(c->nonce, sizeof c->nonce, "%s", sp_at + 1);
	return 1;
}

int
ids_owner(struct spool *sp, uint64_t start, uid_t *uid)
{
	char name[48];
	struct stat st;

	claim_name(start, name, sizeof name);
	if (fsop_stat(sp->fd[SD_IDS], name, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	*uid = st.st_uid;
	return 1;
}

static uint64_t
read_hint(struct spool *sp)
{
	char target[32];
	uint64_t h;

	if (fsop_readlink(sp->fd[SD_IDS], "hint", target, sizeof target) < 0 ||
	    ids_parse(target, &h) < 0)
		return 1;
	return h;
}

/* stale: the hint named no claim, so move it even if it is higher */
static void
write_hint(struct spool *sp, uint64_t start, int stale)
{
	char tmp[FSOP_TMPNAME_MAX], target[32];

	if (!stale && read_hint(sp) >= start)
		return;
	snprintf(target, sizeof target, "%" PRIu64, start);
	fsop_tmpname(tmp, sizeof tmp, "hint.");
	if (fsop_symlink(target, sp->fd[SD_TMP], tmp) < 0)
		return;		/* only a hint */
	if (fsop_rename(sp->fd[SD_TMP], tmp, sp->fd[SD_IDS], "hint") < 0)
		(void)fsop_unlink(sp->fd[SD_TMP], tmp);
}

int
ids_shard_make(struct spool *sp, uint64_t id)
{
	char shard[24];

	snprintf(shard, sizeof shard, "%" PRIu64, id / IDS_SHARD);
	if (fsop_mkdir(sp->fd[SD_IDS], shard, 0700) < 0)
		return errno == EEXIST ? 0 : -1;
	/*
	 * every submitter claims in it: as ids/, and sticky, so that no
	 * member removes another's claim to make one of its own under
	 * the same name (claims are never removed: a crash leaves unused
	 * IDs)
	 */
	if (sp->cfg.shared && fsop_chmod_dir(sp->fd[SD_IDS], shard,
	    03770) < 0)
		return -1;
	return 0;
}

void
ids_hint(struct spool *sp, uint64_t start)
{
	write_hint(sp, start, 0);
}

/*
 * The hint is trusted only where a claim starts: in a shared spool any
 * submitter can move it (ids/ is group-writable), and a claim made at a
 * hint that points inside or past the chain would overlap an earlier
 * claim, or leave a gap whose IDs look like never-claimed ones.  One
 * that names no claim (no link, or not one of ours) is a wrong starting
 * point: the walk starts again from 1, and the claim moves the hint.
 * A hint of 1 with no claim there is an empty chain.
 */
int
ids_end(struct spool *sp, uint64_t from, uint64_t *end)
{
	struct ids_claim c;
	uint64_t s = from ? from : read_hint(sp);
	int rc, from_hint = !from && s > 1;

	for (;;) {
		if ((rc = ids_read(sp, s, &c)) > 0)
			s += c.count;
		else if (from_hint && (rc == 0 || errno == EINVAL))
			s = 1;
		else
			break;
		from_hint = 0;
	}
	if (rc < 0)
		return -1;
	*end = s;
	return 0;
}

int
ids_claim(struct spool *sp, uint32_t count, struct ids_claim *out)
{
	char name[48], target[IDS_NONCE_MAX + 32];
	struct ids_claim c;
	uint64_t s;
	int rc, from_hint, stale = 0, tries = 0;

	claim_failed(out, "");
	if (count == 0 || count > IDS_CLAIM_MAX) {
		errno = EINVAL;
		return -1;
	}
	fsop_tmpname(out->nonce, sizeof out->nonce, NULL);
	snprintf(target, sizeof target, "%u %s", count, out->nonce);
	s = read_hint(sp);
	from_hint = s > 1;
	for (;;) {
		claim_name(s, name, sizeof name);
		rc = ids_read(sp, s, &c);
		if (rc < 0 && !(from_hint && errno == EINVAL)) {
			claim_failed(out, name);
			return -1;
		}
		if (rc > 0) {
			s += c.count;
			from_hint = 0;
			continue;
		}
		if (from_hint) {	/* it names no claim: see ids_end */
			s = 1;
			from_hint = 0;
			stale = 1;
			continue;
		}
		if (s + count - 1 > TASK_ID_MAX) {
			errno = ENOSPC;
			return -1;
		}
		if (fsop_symlink(target, sp->fd[SD_IDS], name) == 0)
			break;
		claim_failed(out, name);
		if (errno == ENOENT && tries++ < 8) {
			/* First claim in this shard: make the shard. */
			if (ids_shard_make(sp, s) < 0) {
				snprintf(out->where, sizeof out->where,
				    "ids/%" PRIu64, s / IDS_SHARD);
				return -1;
			}
			continue;
		}
		if (errno != EEXIST)
			return -1;
		/* Lost the race, or our own retransmitted create. */
		if ((rc = ids_read(sp, s, &c)) < 0)
			return -1;
		if (rc > 0 && strcmp(c.nonce, out->nonce) == 0)
			break;
	}
	out->start = s;
	out->count = count;
	write_hint(sp, s, stale);
	return 0;
}

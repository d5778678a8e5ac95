/*
 * ids.h - task IDs: short decimal numbers, claimed without a daemon.
 *
 * IDs are handed out in ranges.  A claim of COUNT IDs starting at START
 * is a symlink ids/SHARD/START (SHARD = START / 65536) whose target is
 * "COUNT NONCE".
 * The claims form a chain: the next claim starts where the last one
 * ends.  To claim, a process walks the chain from a hint (ids/hint, a
 * symlink to the start of a recent claim; from 1 if it names no claim)
 * to its end and creates the symlink there.  symlink(2) is atomic and
 * exclusive, also on NFS, so of two processes racing for the same
 * START exactly one wins; the loser reads the winner's claim and moves
 * past it.  The target carries the count, so a claim and its size
 * appear in one step, and the nonce, so a retransmitted symlink that
 * answers EEXIST is recognised as ours.
 *
 * Nothing else is needed: no lock, no counter file to rewrite, and a
 * crashed claimer leaves at worst a range of IDs that is never used.
 */
#ifndef IDS_H
#define IDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spool.h"

#define IDS_SHARD	65536
#define IDS_CLAIM_MAX	(1u << 20)
#define IDS_NONCE_MAX	96

struct ids_claim {
	uint64_t start;
	uint32_t count;
	char	nonce[IDS_NONCE_MAX];
	/* ids_claim failed: the path that did, relative to the spool
	 * ("ids/0/12": a claim, "ids/0": its shard, or "ids") */
	char	where[64];
};

/* Claim count consecutive IDs; 0 and *c, or -1 with errno and
 * c->where. */
int	ids_claim(struct spool *sp, uint32_t count, struct ids_claim *c);

/* Read the claim starting at start: 1 found, 0 none, -1 error. */
int	ids_read(struct spool *sp, uint64_t start, struct ids_claim *c);

/*
 * Who made the claim starting at start (the owner of its link): 1 and
 * *uid, 0 none, -1 error.
 */
int	ids_owner(struct spool *sp, uint64_t start, uid_t *uid);

/*
 * Make the claim shard of id (ids/N/) if it is not there; 0, or -1
 * with errno.  Its maker owns it, and the owner of a directory may
 * remove what is in it: spoold makes the shard where the next claim
 * will be, so that in a shared spool it is not a member's.
 */
int	ids_shard_make(struct spool *sp, uint64_t id);

/*
 * Move ids/hint forward to the claim starting at start, if it points
 * lower (a hint only: a failure is not reported).  spoold calls it for
 * every bundle it accepts in a shared spool, whose ids/ is sticky: a
 * member cannot replace another's hint there.
 */
void	ids_hint(struct spool *sp, uint64_t start);

/* Where the chain ends (the next ID that would be claimed). */
int	ids_end(struct spool *sp, uint64_t from, uint64_t *end);

/* Parse a task ID as the user types it; 0 or -1. */
int	ids_parse(const char *s, uint64_t *id);

/* Order two task IDs (uint64_t), for qsort(3) and bsearch(3). */
int	ids_cmp(const void *a, const void *b);

#endif

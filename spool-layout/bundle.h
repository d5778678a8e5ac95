/*
 * bundle.h - files holding the specs of consecutive task IDs.
 *
 * "spool submit" and "spool map" write one bundle per submission into
 * incoming/ (named FIRST.bundle), and spoold writes accepted specs as
 * bundles into specs/ (named FIRST).  A bundle is a header record and
 * one task record per ID, in the canonical record format:
 *
 *	bundle: 1
 *	first: 1000
 *	count: 2
 *	nonce: host.123.1.9f3a0c1e     (the ID claim's nonce, if any)
 *	---
 *	id: 1000
 *	argv: ["echo", "a"]
 *	...
 *	---
 *	id: 1001
 *	...
 *
 * The reader checks that the IDs are first, first+1, ... and that there
 * are exactly count records.
 */
#ifndef BUNDLE_H
#define BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "rec.h"
#include "task.h"

#define BUNDLE_COUNT_MAX	(1u << 20)
#define BUNDLE_BYTES_MAX	(1ULL << 32)
#define BUNDLE_SUFFIX		".bundle"

struct bundle_hdr {
	uint64_t first;
	uint32_t count;
	char	nonce[96];
};

void	bundle_begin(struct buf *b, uint64_t first, uint32_t count,
	    const char *nonce);
void	bundle_add(struct buf *b, const struct task_spec *t);

struct bundle_reader {
	struct rec_reader r;
	struct bundle_hdr hdr;
	uint32_t seen;
	size_t	rec_off;	/* the record bundle_next returned: offset */
	size_t	rec_len;	/* and length, without the separator */
	const char *data;
};

/* Read the header; 0 or -1 (why in br->r.why). */
int	bundle_open(struct bundle_reader *br, const char *data, size_t len);
/* 1 and *t (which the caller frees), 0 at the end, -1 on error. */
int	bundle_next(struct bundle_reader *br, struct task_spec *t);

#endif

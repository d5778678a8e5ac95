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
 * are exactly count records.  A file is read a piece at a time
 * (bundle_file), so that judging one takes memory for a record or two
 * (BUNDLE_RECORD_MAX), not for the file (up to BUNDLE_BYTES_MAX).
 */
#ifndef BUNDLE_H
#define BUNDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "rec.h"
#include "task.h"

#define BUNDLE_COUNT_MAX	(1u << 20)
#define BUNDLE_BYTES_MAX	(1ULL << 32)
#define BUNDLE_SUFFIX		".bundle"
/*
 * accepting/FIRST.rejected: the "rejected" results spoold owes the IDs
 * of a refused bundle until it has written them (spoold/accept.c,
 * owed_write), three fields: first, count and why (their message).
 */
#define BUNDLE_OWED_SUFFIX	".rejected"
#define BUNDLE_OWED_MAX		4096	/* its size: the reason is short */
/*
 * The longest record (header or task) a bundle may hold.  A valid
 * task's record, as task_encode writes it, is its command's line, its
 * environment's and its source's (each at most REC_LINE_MAX; task.h
 * bounds the first two, rec.c the third) and well under 1 MiB of the
 * other fields, so only a record padded past that (a key given again
 * and again) is refused for its length.
 */
#define BUNDLE_RECORD_MAX	(3 * REC_LINE_MAX + (1u << 20))
/* what a bundle_file reads at a time, when its records are short (the
 * fuzz build sets a few bytes: tests/fuzz/fuzz_bundle.c) */
#ifndef BUNDLE_READ_CHUNK
#define BUNDLE_READ_CHUNK	(1u << 20)
#endif

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

/*
 * A bundle read from an open file with pread(2), whole records at a
 * time: at most BUNDLE_RECORD_MAX + BUNDLE_READ_CHUNK bytes of it are
 * in memory at once, whatever the file's size.  A record longer than
 * BUNDLE_RECORD_MAX, or a file that grows past BUNDLE_BYTES_MAX, is
 * refused as bundle_next refuses a bad record.
 */
struct bundle_file {
	struct bundle_reader br;	/* hdr, and why/errline of an error */
	int	fd;
	struct buf win;		/* the file from winoff on */
	uint64_t winoff;
	int	eof;		/* win holds the file's end */
	size_t	hdr_len;	/* the header's bytes, separator included */
	uint64_t end;		/* the file's length, once at its end */
	/* the record bundle_file_next returned: its text (valid until the
	 * next call), its length without the separator, its offset */
	const char *rec;
	size_t	rec_len;
	uint64_t rec_off;
};

/*
 * Read the header of the bundle in fd (from its start, whatever the
 * descriptor's offset): 0; -1, why in bf->br.r.why; -2, a read failed
 * (errno).  bundle_file_close frees it, whatever was returned.
 */
int	bundle_file_open(struct bundle_file *bf, int fd);
/* As bundle_next, and -2 when a read failed (errno). */
int	bundle_file_next(struct bundle_file *bf, struct task_spec *t);
void	bundle_file_close(struct bundle_file *bf);

/*
 * 1 if name is that of a marker of owed results, FIRST.rejected (not
 * ID.drop.NAME.rejected: a dropped file being accepted), else 0.
 */
int	bundle_owed_name(const char *name);

/*
 * Is name accepting/'s entry of a dropped file being accepted: ID.drop,
 * or ID.drop.NAME when the file's name fits (spoold/accept.c)?  1 and
 * *id, and *orig (if not NULL) NAME or NULL for ID.drop; -1 for such a
 * name whose ID does not parse; 0 for any other name.
 */
int	bundle_drop_name(const char *name, uint64_t *id, const char **orig);

/*
 * 1 if incoming/'s name is a CLI's bundle (it ends in BUNDLE_SUFFIX,
 * after at least one character), 0 for a dropped file (no ID yet).
 */
int	bundle_suffixed(const char *name);
/*
 * Read the marker of owed results dfd/name (BUNDLE_OWED_SUFFIX): 1 and
 * its range in *h and its reason in *why (malloc'ed), if it is one that
 * spoold, running as owner, wrote; 0 if it is not (another's file, one
 * with more than one link, or not those three fields: in a shared
 * spool a member's could name IDs of others); -1 with errno if it
 * cannot be read (ENOENT: gone, its results written).
 */
int	bundle_owed_read(int dfd, const char *name, uid_t owner,
	    struct bundle_hdr *h, char **why);
/*
 * Read the header of the bundle dfd/name (its first BUNDLE_HEAD_MAX
 * bytes hold it), opened only if it is a regular file and without
 * blocking (anyone who may submit can leave a FIFO in incoming/): 0 and
 * *h, or -1 with errno: ENOENT gone, EINVAL not a regular file or not a
 * bundle, another if it could not be opened or read (EIO, ESTALE); *op,
 * when op is not NULL, then says which ("open" or "read").
 */
#define BUNDLE_HEAD_MAX	512
int	bundle_head_read(int dfd, const char *name, struct bundle_hdr *h,
	    const char **op);

#endif

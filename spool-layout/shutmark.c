/*
 * shutmark.c - state/shutdown, read by spoolfs, written by spoold at a
 * "spool shutdown" (shutmark.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "buf.h"
#include "fsop.h"
#include "hostinfo.h"
#include "rec.h"
#include "shutmark.h"

#define SHUTMARK_MAX	4096

int
shutmark_read(const struct spool *sp, uint64_t *gen)
{
	struct buf b = BUF_INIT;
	char *s, *end;
	int rc = 0, e;

	*gen = 0;
	if (fsop_read_file(sp->fd[SD_STATE], SHUTMARK_NAME, SHUTMARK_MAX, &b,
	    NULL) < 0) {
		e = errno;
		buf_free(&b);
		errno = e;
		return e == ENOENT ? 0 : -1;
	}
	s = rec_lookup(b.p, b.len, "generation");
	buf_free(&b);
	errno = 0;
	if (s == NULL || *s < '0' || *s > '9' ||
	    (*gen = strtoull(s, &end, 10), errno != 0) || *end != 0) {
		*gen = 0;
		errno = EINVAL;
		rc = -1;
	}
	free(s);
	return rc;
}

int
shutmark_write(struct spool *sp, const char *who, uint64_t *gen)
{
	struct buf b = BUF_INIT;
	int rc;

	/* one it cannot read (EIO): 1 could take the count back below a
	 * mount's, which would never leave */
	if (shutmark_read(sp, gen) < 0 && errno != EINVAL)
		return -1;
	(*gen)++;
	rec_put_uint(&b, "generation", *gen);
	rec_put_double(&b, "time", now_unix(), 3);
	rec_put_word(&b, "spoold", who);
	rc = fsop_publish(sp->fd[SD_TMP], sp->fd[SD_STATE], SHUTMARK_NAME,
	    b.p, b.len, 0600, FSOP_DURABLE);
	buf_free(&b);
	return rc;
}

/*
 * beatfile.c - heartbeat records, overwritten in place with a check
 * line (beatfile.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "beatfile.h"
#include "fnv.h"
#include "fsop.h"

#define CHECK_KEY	"check: "
#define CHECK_LINE	(sizeof CHECK_KEY - 1 + 8 + 1)	/* key, 8 hex, \n */
#define PAD_KEY		"pad: "
#define PAD_LINE_MIN	(sizeof PAD_KEY - 1 + 1 + 1)	/* key, ".", \n */

/* the check line, last: a hash of everything before it */
static void
put_check(struct buf *b)
{
	buf_printf(b, CHECK_KEY "%08x\n", fnv1a32(b->p, b->len));
}

/*
 * One write(2) over the old record, never a cut: a writer killed at any
 * point leaves the old record or the new one, not the new one's start
 * over the old one's tail (a record within one page: a longer write can
 * stop between pages for a fatal signal, which the check line shows).
 * A new record shorter than the file is padded to its length with a
 * line "pad: ....", which readers ignore; one too short for that line
 * makes the file a little longer.
 */
int
beatfile_write(int tmpdfd, int dfd, const char *name, struct buf *b)
{
	off_t size;
	size_t want;
	int fd, rc;

	if ((fd = fsop_open_overwrite(dfd, name, &size)) < 0) {
		if (errno != ENOENT)
			return -1;
		put_check(b);
		return fsop_publish(tmpdfd, dfd, name, b->p, b->len, 0600, 0);
	}
	want = b->len + CHECK_LINE;
	if ((off_t)want < size) {
		want = (size_t)size - want;
		if (want < PAD_LINE_MIN)
			want = PAD_LINE_MIN;
		buf_puts(b, PAD_KEY);
		for (want -= sizeof PAD_KEY; want > 0; want--)
			buf_putc(b, '.');
		buf_putc(b, '\n');
	}
	put_check(b);
	rc = fsop_write(fd, b->p, b->len);
	if (fsop_close(fd) < 0)
		rc = -1;
	return rc;
}

int
beatfile_check(const char *p, size_t len)
{
	char hex[9];
	const char *line;

	if (len < CHECK_LINE || p[len - 1] != '\n')
		return -1;
	line = p + len - CHECK_LINE;
	if ((line > p && line[-1] != '\n') ||
	    memcmp(line, CHECK_KEY, sizeof CHECK_KEY - 1) != 0)
		return -1;
	snprintf(hex, sizeof hex, "%08x", fnv1a32(p, (size_t)(line - p)));
	return memcmp(line + sizeof CHECK_KEY - 1, hex, 8) == 0 ? 0 : -1;
}

int
beatfile_read(int dfd, const char *name, size_t max, struct buf *out)
{
	int i, saved = EAGAIN;

	for (i = 0; i < BEATFILE_TRIES; i++) {
		if (fsop_read_file(dfd, name, max, out, NULL) < 0) {
			saved = errno;
			break;
		}
		if (beatfile_check(out->p, out->len) == 0) {
			out->len -= CHECK_LINE;
			out->p[out->len] = 0;
			return 0;
		}
	}
	buf_free(out);
	errno = saved;
	return -1;
}

const char *
beatfile_strerror(int err)
{
	if (err == EAGAIN)
		return "never read whole with a check line that matches "
		    "(written by a ckspool of another version?)";
	if (err == EINVAL)
		return "not a complete record";
	return strerror(err);
}

int
beatfile_failed(struct beatfile_fails *f, int err, int quiet)
{
	if (++f->n < 2 || f->err || quiet)
		return 0;
	f->err = err;
	return 1;
}

int
beatfile_read_again(struct beatfile_fails *f)
{
	int was = f->err != 0;

	f->n = f->err = 0;
	return was;
}

const char *
beatfile_cause(const struct beatfile_fails *f, const char *what, char *out,
    size_t size)
{
	if (f->err)
		snprintf(out, size, " (its %s: %s)", what,
		    beatfile_strerror(f->err));
	else if (size)
		out[0] = 0;
	return out;
}

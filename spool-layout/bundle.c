/*
 * bundle.c - see bundle.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "fsop.h"
#include "ids.h"

void
bundle_begin(struct buf *b, uint64_t first, uint32_t count, const char *nonce)
{
	rec_put_uint(b, "bundle", 1);
	rec_put_uint(b, "first", first);
	rec_put_uint(b, "count", count);
	if (nonce && *nonce)
		rec_put_word(b, "nonce", nonce);
}

void
bundle_add(struct buf *b, const struct task_spec *t)
{
	rec_put_sep(b);
	task_encode(b, t);
}

static int
bad(struct bundle_reader *br, int line, const char *why)
{
	br->r.why = why;
	br->r.errline = line;
	return -1;
}

int
bundle_open(struct bundle_reader *br, const char *data, size_t len)
{
	struct rec_field f;
	uint64_t v;
	char *s;
	int rc, have = 0;

	memset(br, 0, sizeof *br);
	rec_reader_init(&br->r, data, len);
	while ((rc = rec_next(&br->r, &f)) > 0) {
		if (rec_key_is(&f, "bundle")) {
			if (rec_get_uint(&br->r, &f, 1, &v) < 0 || v != 1)
				return bad(br, f.line, "unknown bundle version");
			have |= 1;
		} else if (rec_key_is(&f, "first")) {
			if (rec_get_uint(&br->r, &f, TASK_ID_MAX,
			    &br->hdr.first) < 0)
				return -1;
			have |= 2;
		} else if (rec_key_is(&f, "count")) {
			if (rec_get_uint(&br->r, &f, BUNDLE_COUNT_MAX, &v) < 0)
				return -1;
			br->hdr.count = (uint32_t)v;
			have |= 4;
		} else if (rec_key_is(&f, "nonce")) {
			if (rec_get_str(&br->r, &f, &s) < 0)
				return -1;
			if (strlen(s) >= sizeof br->hdr.nonce) {
				free(s);
				return bad(br, f.line, "nonce too long");
			}
			strcpy(br->hdr.nonce, s);
			free(s);
		} else
			return bad(br, f.line, "unknown key in bundle header");
	}
	if (rc < 0)
		return -1;
	if (have != 7 || br->hdr.first == 0 || br->hdr.count == 0)
		return bad(br, br->r.line, "bundle header incomplete");
	if (br->hdr.first + br->hdr.count - 1 > TASK_ID_MAX)
		return bad(br, br->r.line, "bundle IDs out of range");
	br->data = data;
	return 0;
}

int
bundle_next(struct bundle_reader *br, struct task_spec *t)
{
	const char *start = br->r.p;
	int line;

	task_init(t);
	if (rec_eof(&br->r)) {
		if (br->seen != br->hdr.count)
			return bad(br, br->r.line, "bundle has fewer tasks "
			    "than its count");
		return 0;
	}
	if (br->seen >= br->hdr.count)
		return bad(br, br->r.line, "bundle has more tasks than its count");
	line = br->r.line + 1;
	if (task_decode(&br->r, t) < 0) {
		task_free(t);
		return -1;
	}
	if (t->id != br->hdr.first + br->seen) {
		task_free(t);
		return bad(br, line, "task ID out of sequence in bundle");
	}
	br->seen++;
	br->rec_off = (size_t)(start - br->data);
	br->rec_len = (size_t)(br->r.p - start);
	if (br->r.at_sep)
		br->rec_len -= 4;	/* the separator is not part of it */
	return 1;
}

/*
 * Where the last whole record of p[0..len) ends: after its last line
 * "---".  Only separators ending past from are looked for (the bytes up
 * to from were looked at before).  0 if none.
 */
static size_t
last_sep_end(const char *p, size_t len, size_t from)
{
	size_t i;

	for (i = len; i >= 4 && i > from; i--)
		if (p[i - 1] == '\n' && p[i - 2] == '-' && p[i - 3] == '-' &&
		    p[i - 4] == '-' && (i == 4 || p[i - 5] == '\n'))
			return i;
	return 0;
}

/* what the message below says */
_Static_assert(BUNDLE_RECORD_MAX == 13u << 20, "BUNDLE_RECORD_MAX");

/* Read a piece more of the file: 0, -1 (why), -2 (errno). */
static int
read_chunk(struct bundle_file *bf)
{
	ssize_t n;

	buf_reserve(&bf->win, BUNDLE_READ_CHUNK);
	if ((n = fsop_pread(bf->fd, bf->win.p + bf->win.len,
	    BUNDLE_READ_CHUNK, (off_t)(bf->winoff + bf->win.len))) < 0)
		return -2;
	if (n == 0)
		bf->eof = 1;
	bf->win.len += (size_t)n;
	bf->win.p[bf->win.len] = 0;
	if (bf->winoff + bf->win.len > BUNDLE_BYTES_MAX)
		return bad(&bf->br, bf->br.r.line + 1, "bundle larger than "
		    "4 GiB");
	return 0;
}

/*
 * Drop what the reader is done with, read on until the window holds a
 * whole record past it (or the file's end), and point the reader at
 * the whole records: 0, -1 (why), -2 (errno).  The bytes kept are part
 * of a record, so the window stays under a record and a piece.
 */
static int
fill(struct bundle_file *bf)
{
	struct rec_reader *r = &bf->br.r;
	size_t used = r->p ? (size_t)(r->p - bf->win.p) : 0, cut, from;
	int rc;

	if (used) {
		bf->winoff += used;
		bf->win.len -= used;
		memmove(bf->win.p, bf->win.p + used, bf->win.len);
	}
	/* (what is kept holds no separator: the cut was after the last) */
	from = bf->win.len;
	for (;;) {
		if ((rc = read_chunk(bf)) < 0)
			return rc;
		if (bf->eof) {
			cut = bf->win.len;
			break;
		}
		if ((cut = last_sep_end(bf->win.p, bf->win.len, from)) > 0)
			break;
		if (bf->win.len > BUNDLE_RECORD_MAX + 4)
			return bad(&bf->br, r->line + 1, "record longer than "
			    "13 MiB (no task record is)");
		from = bf->win.len;
	}
	r->p = bf->win.p;
	r->end = bf->win.p + cut;
	bf->br.data = bf->win.p;
	return 0;
}

int
bundle_file_open(struct bundle_file *bf, int fd)
{
	int rc;

	memset(bf, 0, sizeof *bf);
	bf->fd = fd;
	if ((rc = fill(bf)) < 0)
		return rc;
	if (bundle_open(&bf->br, bf->win.p,
	    (size_t)(bf->br.r.end - bf->win.p)) < 0)
		return -1;
	bf->hdr_len = (size_t)(bf->br.r.p - bf->win.p);
	return 0;
}

int
bundle_file_next(struct bundle_file *bf, struct task_spec *t)
{
	int rc;

	if (rec_eof(&bf->br.r) && !bf->eof && (rc = fill(bf)) < 0) {
		task_init(t);
		return rc;
	}
	rc = bundle_next(&bf->br, t);
	if (rc == 1) {
		bf->rec = bf->win.p + bf->br.rec_off;
		bf->rec_len = bf->br.rec_len;
		bf->rec_off = bf->winoff + bf->br.rec_off;
	} else if (rc == 0)
		bf->end = bf->winoff + bf->win.len;
	return rc;
}

void
bundle_file_close(struct bundle_file *bf)
{
	buf_free(&bf->win);
}

int
bundle_owed_name(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name && strcmp(dot, BUNDLE_OWED_SUFFIX) == 0;
}

int
bundle_suffixed(const char *name)
{
	size_t n = strlen(name), sl = strlen(BUNDLE_SUFFIX);

	return n > sl && strcmp(name + n - sl, BUNDLE_SUFFIX) == 0;
}

int
bundle_drop_name(const char *name, uint64_t *id, const char **orig)
{
	const char *dot = strchr(name, '.');
	char num[32];
	size_t k;

	if (dot == NULL || strncmp(dot, ".drop", 5) != 0 ||
	    (dot[5] != 0 && dot[5] != '.'))
		return 0;
	if ((k = (size_t)(dot - name)) >= sizeof num)
		return -1;
	memcpy(num, name, k);
	num[k] = 0;
	if (ids_parse(num, id) < 0)
		return -1;
	if (orig != NULL)
		*orig = dot[5] == '.' && dot[6] ? dot + 6 : NULL;
	return 1;
}

int
bundle_owed_read(int dfd, const char *name, uid_t owner,
    struct bundle_hdr *h, char **why)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	struct stat st;
	uint64_t v;
	int rc;

	memset(h, 0, sizeof *h);
	*why = NULL;
	if (fsop_read_file(dfd, name, BUNDLE_OWED_MAX, &b, &st) < 0) {
		buf_free(&b);
		return -1;
	}
	rc = st.st_uid == owner && st.st_nlink == 1 ? 0 : -1;
	rec_reader_init(&r, b.p, b.len);
	while (rc == 0 && (rc = rec_next(&r, &f)) > 0) {
		rc = -1;
		if (rec_key_is(&f, "first")) {
			if (rec_get_uint(&r, &f, UINT64_MAX - BUNDLE_COUNT_MAX,
			    &v) == 0) {
				h->first = v;
				rc = 0;
			}
		} else if (rec_key_is(&f, "count")) {
			if (rec_get_uint(&r, &f, BUNDLE_COUNT_MAX, &v) == 0) {
				h->count = (uint32_t)v;
				rc = 0;
			}
		} else if (rec_key_is(&f, "why") && *why == NULL)
			rc = rec_get_str(&r, &f, why);
	}
	buf_free(&b);
	if (rc < 0 || h->first == 0 || h->count == 0 || *why == NULL) {
		free(*why);
		*why = NULL;
		memset(h, 0, sizeof *h);
		return 0;
	}
	return 1;
}

int
bundle_head_read(int dfd, const char *name, struct bundle_hdr *h,
    const char **op)
{
	struct bundle_reader br;
	char head[BUNDLE_HEAD_MAX + 1], *sep;
	ssize_t n;
	int fd, saved;

	if (op != NULL)
		*op = "open";
	if ((fd = fsop_open_regular(dfd, name, NULL)) < 0)
		return -1;
	if (op != NULL)
		*op = "read";
	n = fsop_pread(fd, head, BUNDLE_HEAD_MAX, 0);
	saved = errno;
	(void)close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	head[n] = 0;
	if ((sep = strstr(head, "---\n")) != NULL)
		sep[4] = 0;	/* the header alone */
	if (sep == NULL ||
	    bundle_open(&br, head, (size_t)(sep + 4 - head)) < 0) {
		errno = EINVAL;
		return -1;
	}
	*h = br.hdr;
	return 0;
}

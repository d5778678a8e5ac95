/*
 * bundle.c - see bundle.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

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

/*
 * buf.c - see buf.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "msg.h"

/*
 * Most of what is appended is short: a key, a number's digits, a
 * separator.  Copies of up to 16 bytes are made here with fixed-size
 * memcpy()s, which the compiler turns into a load and a store; a call
 * to the C library's memcpy() for each was half of "spool map"'s CPU
 * when spool was linked with musl, whose memcpy() starts every copy
 * with string instructions.
 */
static inline void
copy_short(char *d, const char *s, size_t n)
{
	if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n > 0) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

static inline void
copy_bytes(char *d, const char *s, size_t n)
{
	if (n <= 16)
		copy_short(d, s, n);
	else
		memcpy(d, s, n);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		msg_fatal("malloc: %zu bytes: %m", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		msg_fatal("calloc: %zu x %zu bytes: %m", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		msg_fatal("realloc: %zu bytes: %m", n);
	return q;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	void *q = reallocarray(p, n ? n : 1, size ? size : 1);

	if (q == NULL)
		msg_fatal("reallocarray: %zu x %zu bytes: %m", n, size);
	return q;
}

void *
xgrowarray(void *p, size_t n, size_t size)
{
	if (n & (n - 1))
		return p;	/* not a power of two: room left */
	return xreallocarray(p, n ? 2 * n : 1, size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	copy_bytes(p, s, n);
	p[n] = 0;
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	buf_reserve(&b, 63);	/* a message fits: one formatting */
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return b.p;
}

void
buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap);
}

void
buf_append(struct buf *b, const void *data, size_t n)
{
	buf_reserve(b, n);
	copy_bytes(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_put_printable(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\t')
			buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else
			buf_putc(b, (char)c);
	}
}

void
buf_putc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

/*
 * Records are mostly numbers (IDs, counts, limits, times): written
 * digit by digit here, not through printf's format interpreter, which
 * was the largest part of spoold's own code in a profile of a stream
 * of tasks.
 */
size_t
fmt_uint(char out[FMT_UINT_SIZE], uint64_t v)
{
	char t[FMT_UINT_SIZE - 1], *p = t + sizeof t;
	size_t n;

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	n = (size_t)(t + sizeof t - p);
	copy_bytes(out, p, n);
	out[n] = 0;
	return n;
}

void
buf_put_uint(struct buf *b, uint64_t v)
{
	char t[FMT_UINT_SIZE];

	buf_append(b, t, fmt_uint(t, v));
}

void
buf_put_int(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		/* -(v + 1) + 1: no overflow for INT64_MIN */
		buf_put_uint(b, (uint64_t)-(v + 1) + 1);
	} else
		buf_put_uint(b, (uint64_t)v);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/*
 * Formats into the room the buffer has; only what does not fit is
 * formatted a second time, into the room made for it (a record's line
 * or a message is formatted once, where it was measured and then
 * formatted before: printf's work was a tenth of spoold's CPU a task).
 */
void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	size_t room = b->cap - b->len;	/* cap counts the NUL: 0 or more */
	int n;

	va_copy(aq, ap);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, aq);
	va_end(aq);
	if (n < 0)
		msg_panic("buf_vprintf: bad format");
	if ((size_t)n >= room) {
		buf_reserve(b, (size_t)n);
		(void)vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	}
	b->len += (size_t)n;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *
buf_steal(struct buf *b)
{
	char *p;

	buf_reserve(b, 0);
	p = b->p;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

size_t
strv_len(char *const *v)
{
	size_t n = 0;

	if (v)
		while (v[n])
			n++;
	return n;
}

char **
strv_push(char **v, const char *s)
{
	size_t n = strv_len(v);

	v = xreallocarray(v, n + 2, sizeof *v);
	v[n] = xstrdup(s);
	v[n + 1] = NULL;
	return v;
}

char **
strv_dup(char *const *v)
{
	size_t i, n = strv_len(v);
	char **d;

	if (v == NULL)
		return NULL;
	d = xreallocarray(NULL, n + 1, sizeof *d);
	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	d[n] = NULL;
	return d;
}

void
strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

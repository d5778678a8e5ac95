/*
 * rec.c - canonical record format; see rec.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

static int
is_word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
	    c == '/' || c == '@' || c == '+' || c == '-';
}

static int
is_word(const char *s)
{
	if (*s == 0 || *s == '-' || *s == ':')
		return 0;	/* "-x" or ":x" could read as YAML syntax */
	for (; *s; s++)
		if (!is_word_char((unsigned char)*s))
			return 0;
	return 1;
}

void
rec_quote(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *run;

	buf_putc(b, '"');
	while (*p) {
		for (run = p; *p >= 0x20 && *p != 0x7f && *p != '"' &&
		    *p != '\\'; p++)
			;
		if (p > run)
			buf_append(b, run, (size_t)(p - run));
		if (*p == 0)
			break;
		switch (*p) {
		case '"': buf_puts(b, "\\\""); break;
		case '\\': buf_puts(b, "\\\\"); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\t': buf_puts(b, "\\t"); break;
		case '\r': buf_puts(b, "\\r"); break;
		default:
			buf_puts(b, "\\x");
			buf_putc(b, hex[*p >> 4]);
			buf_putc(b, hex[*p & 15]);
		}
		p++;
	}
	buf_putc(b, '"');
}

size_t
rec_quoted_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 2;

	for (; *p; p++)
		if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\t' ||
		    *p == '\r')
			n += 2;
		else if (*p < 0x20 || *p == 0x7f)
			n += 4;
		else
			n++;
	return n;
}

size_t
rec_strv_line_len(const char *key, char *const *v)
{
	size_t i, n = strlen(key) + 4;		/* ": [" and "]" */

	for (i = 0; v && v[i]; i++)
		n += rec_quoted_len(v[i]) + (i ? 2 : 0);
	return n;
}

static void
put_key(struct buf *b, const char *key)
{
	buf_puts(b, key);
	buf_puts(b, ": ");
}

void
rec_put_int(struct buf *b, const char *key, int64_t v)
{
	put_key(b, key);
	buf_put_int(b, v);
	buf_putc(b, '\n');
}

void
rec_put_uint(struct buf *b, const char *key, uint64_t v)
{
	put_key(b, key);
	buf_put_uint(b, v);
	buf_putc(b, '\n');
}

/*
 * v with `decimals` digits after the point, the text printf's "%.*f"
 * writes (the exact binary value, rounded), made with integers: glibc
 * prints a double through multi-precision arithmetic, about 30% of the
 * CPU of "spool map" when every task carried its submission time so.
 * x = |v| x 10^decimals is rounded once (by at most half a unit in its
 * last place), so its fraction decides the last digit as the exact
 * value's does unless it lies within that of one half: that case, what
 * the integers cannot hold and an out of fewer than 32 bytes go to
 * printf.  The digits are written one by one (fmt_uint), since even
 * printf's "%llu" was most of the worker's own formatting of a result.
 * 0 or -1 (use printf).
 */
static int
fixed(char *out, size_t size, double v, int decimals)
{
	static const double pow10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6,
	    1e7, 1e8, 1e9 };
	static const unsigned long long scale[] = { 1, 10, 100, 1000,
	    10000, 100000, 1000000, 10000000, 100000000, 1000000000 };
	double x, f;
	unsigned long long n, frac;
	int i;

	/* a sign, 16 digits (x < 2^53), a point, 9 decimals and a NUL */
	if (decimals < 0 || decimals > 9 || size < 32)
		return -1;
	x = fabs(v) * pow10[decimals];
	if (!(x < 9007199254740992.0))		/* 2^53 */
		return -1;
	n = (unsigned long long)x;		/* floor */
	f = x - (double)n;			/* exact */
	/* (a unit in the last place of x is at most x / 2^52) */
	if (fabs(f - 0.5) <= x * 0x1p-50)
		return -1;
	n += f > 0.5;
	if (signbit(v))
		*out++ = '-';
	out += fmt_uint(out, n / scale[decimals]);
	if (decimals > 0) {
		*out++ = '.';
		frac = n % scale[decimals];
		for (i = decimals; i-- > 0; frac /= 10)
			out[i] = (char)('0' + frac % 10);
		out[decimals] = 0;
	}
	return 0;
}

void
rec_format_double(char *out, size_t size, double v, int decimals)
{
	if (fixed(out, size, v, decimals) < 0)
		snprintf(out, size, "%.*f", decimals, v);
}

double
rec_double_read_back(double v, int decimals)
{
	char t[64];

	if (!isfinite(v) || fabs(v) >= REC_DOUBLE_MAX)
		v = 0;
	rec_format_double(t, sizeof t, v, decimals);
	return strtod(t, NULL);
}

void
rec_put_double(struct buf *b, const char *key, double v, int decimals)
{
	char t[64];

	if (!isfinite(v) || fabs(v) >= REC_DOUBLE_MAX)
		v = 0;
	rec_format_double(t, sizeof t, v, decimals);
	put_key(b, key);
	buf_puts(b, t);
	buf_putc(b, '\n');
}

void
rec_put_word(struct buf *b, const char *key, const char *word)
{
	if (!is_word(word)) {
		rec_put_str(b, key, word);
		return;
	}
	put_key(b, key);
	buf_puts(b, word);
	buf_putc(b, '\n');
}

void
rec_put_str(struct buf *b, const char *key, const char *s)
{
	put_key(b, key);
	rec_quote(b, s);
	buf_putc(b, '\n');
}

void
rec_put_strv(struct buf *b, const char *key, char *const *v)
{
	size_t i;

	put_key(b, key);
	buf_putc(b, '[');
	for (i = 0; v && v[i]; i++) {
		if (i)
			buf_puts(b, ", ");
		rec_quote(b, v[i]);
	}
	buf_puts(b, "]\n");
}

void
rec_put_idv(struct buf *b, const char *key, const uint64_t *v, size_t n)
{
	size_t i;

	put_key(b, key);
	buf_putc(b, '[');
	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, ", ");
		buf_put_uint(b, v[i]);
	}
	buf_puts(b, "]\n");
}

void
rec_put_sep(struct buf *b)
{
	buf_puts(b, "---\n");
}

void
rec_reader_init(struct rec_reader *r, const char *data, size_t len)
{
	r->p = data;
	r->end = data + len;
	r->line = 0;
	r->why = NULL;
	r->errline = 0;
	r->at_sep = 0;
}

int
rec_eof(const struct rec_reader *r)
{
	return r->p >= r->end;
}

static int
fail(struct rec_reader *r, int line, const char *why)
{
	r->why = why;
	r->errline = line;
	return -1;
}

int
rec_next(struct rec_reader *r, struct rec_field *f)
{
	const char *line, *nl, *k;
	size_t len;

	r->at_sep = 0;
	if (r->p >= r->end)
		return 0;
	line = r->p;
	nl = memchr(line, '\n', (size_t)(r->end - line));
	if (nl == NULL)
		return fail(r, r->line + 1, "last line has no newline");
	len = (size_t)(nl - line);
	r->line++;
	if (len > REC_LINE_MAX)
		return fail(r, r->line, "line too long");
	r->p = nl + 1;
	if (len == 3 && memcmp(line, "---", 3) == 0) {
		r->at_sep = 1;
		return 0;
	}
	for (k = line; k < nl && ((*k >= 'a' && *k <= 'z') ||
	    (*k >= '0' && *k <= '9') || *k == '_' || *k == '-'); k++)
		;
	if (k == line || !(line[0] >= 'a' && line[0] <= 'z'))
		return fail(r, r->line, "line does not start with a key");
	if ((size_t)(k - line) > REC_KEY_MAX)
		return fail(r, r->line, "key too long");
	if (nl - k < 2 || k[0] != ':' || k[1] != ' ')
		return fail(r, r->line, "expected \"key: value\"");
	f->key = line;
	f->keylen = (size_t)(k - line);
	f->val = k + 2;
	f->vallen = (size_t)(nl - (k + 2));
	f->line = r->line;
	if (f->vallen == 0)
		return fail(r, r->line, "empty value");
	return 1;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode the quoted string starting at *pp (at the opening quote) and
 * ending before end; leave *pp after the closing quote.
 */
static int
decode_quoted(struct rec_reader *r, int line, const char **pp,
    const char *end, struct buf *out)
{
	const char *p = *pp + 1, *run;
	int h, l;

	for (;;) {
		for (run = p; p < end && *p != '"' && *p != '\\'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return fail(r, line, "raw control byte in string");
		buf_append(out, run, (size_t)(p - run));
		if (p >= end)
			return fail(r, line, "unterminated string");
		if (*p == '"')
			break;
		if (++p >= end)
			return fail(r, line, "unterminated escape");
		switch (*p) {
		case '\\': buf_putc(out, '\\'); break;
		case '"': buf_putc(out, '"'); break;
		case 'n': buf_putc(out, '\n'); break;
		case 't': buf_putc(out, '\t'); break;
		case 'r': buf_putc(out, '\r'); break;
		case 'x':
			if (end - p < 3 || (h = hexval(p[1])) < 0 ||
			    (l = hexval(p[2])) < 0)
				return fail(r, line, "bad \\x escape");
			if (h == 0 && l == 0)
				return fail(r, line, "NUL byte in string");
			buf_putc(out, (char)(h * 16 + l));
			p += 2;
			break;
		default:
			return fail(r, line, "unknown escape in string");
		}
		p++;
	}
	*pp = p + 1;
	return 0;
}

int
rec_get_str(struct rec_reader *r, const struct rec_field *f, char **out)
{
	struct buf b = BUF_INIT;
	const char *p = f->val, *end = f->val + f->vallen;
	size_t i;

	if (*p != '"') {
		for (i = 0; i < f->vallen; i++)
			if (!is_word_char((unsigned char)p[i]))
				return fail(r, f->line, "bad character in word");
		*out = xstrndup(p, f->vallen);
		return 0;
	}
	if (decode_quoted(r, f->line, &p, end, &b) < 0) {
		buf_free(&b);
		return -1;
	}
	if (p != end) {
		buf_free(&b);
		return fail(r, f->line, "garbage after string");
	}
	*out = buf_steal(&b);
	return 0;
}

static int
parse_i64(const char *p, size_t n, int64_t *v)
{
	char tmp[32];
	char *e;

	if (n == 0 || n >= sizeof tmp)
		return -1;
	memcpy(tmp, p, n);
	tmp[n] = 0;
	if (!((tmp[0] >= '0' && tmp[0] <= '9') || tmp[0] == '-'))
		return -1;
	errno = 0;
	*v = strtoll(tmp, &e, 10);
	if (errno || *e)
		return -1;
	return 0;
}

static int
parse_u64(const char *p, size_t n, uint64_t *v)
{
	char tmp[32];
	char *e;

	if (n == 0 || n >= sizeof tmp || !(p[0] >= '0' && p[0] <= '9'))
		return -1;
	memcpy(tmp, p, n);
	tmp[n] = 0;
	errno = 0;
	*v = strtoull(tmp, &e, 10);
	if (errno || *e)
		return -1;
	return 0;
}

int
rec_get_int(struct rec_reader *r, const struct rec_field *f, int64_t min,
    int64_t max, int64_t *out)
{
	int64_t v;

	if (parse_i64(f->val, f->vallen, &v) < 0)
		return fail(r, f->line, "not an integer");
	if (v < min || v > max)
		return fail(r, f->line, "integer out of range");
	*out = v;
	return 0;
}

int
rec_get_uint(struct rec_reader *r, const struct rec_field *f, uint64_t max,
    uint64_t *out)
{
	uint64_t v;

	if (parse_u64(f->val, f->vallen, &v) < 0)
		return fail(r, f->line, "not an unsigned integer");
	if (v > max)
		return fail(r, f->line, "integer out of range");
	*out = v;
	return 0;
}

int
rec_get_double(struct rec_reader *r, const struct rec_field *f, double *out)
{
	char tmp[64];
	char *e;
	size_t i;

	if (f->vallen >= sizeof tmp)
		return fail(r, f->line, "number too long");
	for (i = 0; i < f->vallen; i++)
		if (!((f->val[i] >= '0' && f->val[i] <= '9') ||
		    f->val[i] == '.' || f->val[i] == '-' || f->val[i] == 'e' ||
		    f->val[i] == '+'))
			return fail(r, f->line, "not a number");
	memcpy(tmp, f->val, f->vallen);
	tmp[f->vallen] = 0;
	errno = 0;
	*out = strtod(tmp, &e);
	if (errno || *e || !isfinite(*out))
		return fail(r, f->line, "not a number");
	if (fabs(*out) >= REC_DOUBLE_MAX)
		return fail(r, f->line, "number out of range");
	return 0;
}

/* Iterate "[a, b, c]": calls item(p, end) with p at the item start. */
static int
list_open(struct rec_reader *r, const struct rec_field *f, const char **pp)
{
	if (f->vallen < 2 || f->val[0] != '[' || f->val[f->vallen - 1] != ']')
		return fail(r, f->line, "expected a [list]");
	*pp = f->val + 1;
	return 0;
}

int
rec_get_strv(struct rec_reader *r, const struct rec_field *f, char ***out)
{
	const char *p, *end = f->val + f->vallen - 1;
	struct buf b = BUF_INIT;
	char **v = NULL;
	size_t n = 0;

	if (list_open(r, f, &p) < 0)
		return -1;
	size_t cap = 8;

	v = xcalloc(cap, sizeof *v);
	while (p < end) {
		if (n >= REC_LIST_MAX) {
			fail(r, f->line, "list too long");
			goto bad;
		}
		if (*p != '"') {
			fail(r, f->line, "list item is not a quoted string");
			goto bad;
		}
		buf_reset(&b);
		if (decode_quoted(r, f->line, &p, end, &b) < 0)
			goto bad;
		if (n + 2 > cap) {
			cap *= 2;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n++] = xstrndup(b.p ? b.p : "", b.len);
		v[n] = NULL;
		if (p < end) {
			if (end - p < 3 || p[0] != ',' || p[1] != ' ') {
				fail(r, f->line, "expected \", \" in list");
				goto bad;
			}
			p += 2;
		}
	}
	buf_free(&b);
	*out = v;
	return 0;
bad:
	buf_free(&b);
	strv_free(v);
	return -1;
}

int
rec_get_idv(struct rec_reader *r, const struct rec_field *f, uint64_t **out,
    size_t *np)
{
	const char *p, *end = f->val + f->vallen - 1, *s;
	uint64_t *v = NULL, x;
	size_t n = 0, cap = 0;

	if (list_open(r, f, &p) < 0)
		return -1;
	while (p < end) {
		if (n >= REC_LIST_MAX) {
			free(v);
			return fail(r, f->line, "list too long");
		}
		for (s = p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (parse_u64(s, (size_t)(p - s), &x) < 0) {
			free(v);
			return fail(r, f->line, "list item is not a number");
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n++] = x;
		if (p < end) {
			if (end - p < 3 || p[0] != ',' || p[1] != ' ') {
				free(v);
				return fail(r, f->line, "expected \", \" in list");
			}
			p += 2;
		}
	}
	*out = v;
	*np = n;
	return 0;
}

char *
rec_lookup(const char *data, size_t len, const char *key)
{
	struct rec_reader r;
	struct rec_field f;
	char *s;

	rec_reader_init(&r, data, len);
	while (rec_next(&r, &f) > 0)
		if (rec_key_is(&f, key))
			return rec_get_str(&r, &f, &s) < 0 ? NULL : s;
	return NULL;
}

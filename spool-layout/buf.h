/*
 * buf.h - growable byte buffers and small allocation helpers.
 *
 * A buf always keeps a terminating NUL after len bytes so that text can
 * be handed to string functions.  Allocation failure is fatal
 * (xmalloc): every ckspool program is small and single-purpose, and
 * continuing without memory would only corrupt state.
 */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char	*p;
	size_t	len;
	size_t	cap;
};

#define BUF_INIT { NULL, 0, 0 }

void	*xmalloc(size_t n);
void	*xcalloc(size_t n, size_t size);
void	*xrealloc(void *p, size_t n);
void	*xreallocarray(void *p, size_t n, size_t size);
/*
 * p, an array of n elements of size bytes grown only by this, with
 * room for one more: reallocated to twice n when n is a power of two
 * (or 0), so that n additions one at a time copy O(n) elements, not
 * O(n^2), and no capacity is kept beside n.  An array shrunk meanwhile
 * (n lowered) must not be grown by it again.
 */
void	*xgrowarray(void *p, size_t n, size_t size);
char	*xstrdup(const char *s);
char	*xstrndup(const char *s, size_t n);
char	*xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void	buf_reserve(struct buf *b, size_t extra);
void	buf_append(struct buf *b, const void *data, size_t n);
void	buf_puts(struct buf *b, const char *s);
void	buf_putc(struct buf *b, char c);
/* s with control bytes written as \n, \t, \xHH: one printable line. */
void	buf_put_printable(struct buf *b, const char *s);
/*
 * v in decimal, as "%" PRIu64 / PRId64 writes it, without printf;
 * fmt_uint writes it and a NUL into out and returns its length.
 */
#define FMT_UINT_SIZE	21	/* UINT64_MAX has 20 digits */
size_t	fmt_uint(char out[FMT_UINT_SIZE], uint64_t v);
void	buf_put_uint(struct buf *b, uint64_t v);
void	buf_put_int(struct buf *b, int64_t v);
void	buf_printf(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	    __attribute__((format(printf, 2, 0)));
void	buf_reset(struct buf *b);
void	buf_free(struct buf *b);
/* Detach the contents (NUL-terminated, never NULL). */
char	*buf_steal(struct buf *b);

/* NULL-terminated string vectors. */
size_t	strv_len(char *const *v);
char	**strv_push(char **v, const char *s);
char	**strv_dup(char *const *v);
void	strv_free(char **v);

#endif

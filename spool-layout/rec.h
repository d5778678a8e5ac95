/*
 * rec.h - the canonical record format of every file ckspool writes
 * itself (task specs, assignments, results, worker status, summaries).
 *
 * A record is a sequence of lines "key: value"; records in one file are
 * separated by a line "---".  It is a strict subset of YAML (flow
 * style), so Python's yaml.safe_load_all() reads it, and it is one
 * field per line, so grep and awk read it:
 *
 *	id: 1042
 *	state: done
 *	argv: ["sh", "-c", "echo \"hi\"\n"]
 *	after: [1040, 1041]
 *	wall: 0.004
 *
 * Values: an integer, a decimal number, a bare word ([A-Za-z0-9_.:/@+-],
 * not starting with a quote or bracket), a double-quoted string, or a
 * flow list of integers or of quoted strings.  In quoted strings \\ \"
 * \n \t \r and \xHH (for other control bytes) are the only escapes; NUL
 * is refused; bytes >= 0x80 are kept as they are.
 *
 * The reader is written for speed and for hostile input: every length
 * is bounded (REC_LINE_MAX, REC_LIST_MAX), nothing is allocated until a
 * value is asked for, and errors carry the line number.
 */
#ifndef REC_H
#define REC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

#define REC_KEY_MAX	32
#define REC_LINE_MAX	(4u << 20)	/* a script is one quoted line */
#define REC_LIST_MAX	65536

void	rec_put_int(struct buf *b, const char *key, int64_t v);
void	rec_put_uint(struct buf *b, const char *key, uint64_t v);
void	rec_put_double(struct buf *b, const char *key, double v, int decimals);
/* v with that many decimals (0-9 made with integers), as "%.*f" writes
 * it: the text rec_put_double puts after the key */
void	rec_format_double(char *out, size_t size, double v, int decimals);
/* v as it reads back from a record that rec_put_double wrote it to with
 * that many decimals: what to judge a value written only when not 0 by
 * (a time under half a millisecond, written with 3, reads back as 0) */
double	rec_double_read_back(double v, int decimals);
void	rec_put_word(struct buf *b, const char *key, const char *word);
void	rec_put_str(struct buf *b, const char *key, const char *s);
void	rec_put_strv(struct buf *b, const char *key, char *const *v);
void	rec_put_idv(struct buf *b, const char *key, const uint64_t *v,
	    size_t n);
void	rec_put_sep(struct buf *b);
/* Append s as a quoted string (no key, no newline). */
void	rec_quote(struct buf *b, const char *s);
/* What rec_quote and rec_put_strv write, in bytes (no newline): the
 * bounds on a record line are checked before anything is written. */
size_t	rec_quoted_len(const char *s);
size_t	rec_strv_line_len(const char *key, char *const *v);

struct rec_field {
	const char *key;
	size_t	keylen;
	const char *val;
	size_t	vallen;
	int	line;
};

struct rec_reader {
	const char *p;
	const char *end;
	int	line;
	const char *why;	/* reason of the last error */
	int	errline;
	int	at_sep;		/* the last record ended at a "---" line */
};

void	rec_reader_init(struct rec_reader *r, const char *data, size_t len);
/* 1: a field; 0: end of this record ("---" or end of data); -1: error. */
int	rec_next(struct rec_reader *r, struct rec_field *f);
/* True when no data is left (no further record). */
int	rec_eof(const struct rec_reader *r);
/*
 * Is f's key key?  Inline, so that the length of a literal key (every
 * decoder's chain of "if (rec_key_is(&f, "state"))") is known when
 * compiled, not measured for every field against every key.
 */
static inline int
rec_key_is(const struct rec_field *f, const char *key)
{
	return strlen(key) == f->keylen && memcmp(f->key, key, f->keylen) == 0;
}

/* Decoders: 0 on success, -1 with r->why set. */
int	rec_get_str(struct rec_reader *r, const struct rec_field *f, char **out);
int	rec_get_int(struct rec_reader *r, const struct rec_field *f,
	    int64_t min, int64_t max, int64_t *out);
int	rec_get_uint(struct rec_reader *r, const struct rec_field *f,
	    uint64_t max, uint64_t *out);
/*
 * Numbers with decimals are times and durations in seconds: a value of
 * REC_DOUBLE_MAX or more (in magnitude) is refused on reading and
 * written as 0, so that every number written reads back and fits the
 * reader's bound on a number's length.
 */
#define REC_DOUBLE_MAX	1e15
int	rec_get_double(struct rec_reader *r, const struct rec_field *f,
	    double *out);
int	rec_get_strv(struct rec_reader *r, const struct rec_field *f,
	    char ***out);
int	rec_get_idv(struct rec_reader *r, const struct rec_field *f,
	    uint64_t **out, size_t *n);

/*
 * Convenience for small flat records read by the CLI: find key in data
 * and return its decoded string value (malloc'ed) or NULL.
 */
char	*rec_lookup(const char *data, size_t len, const char *key);

#endif

/*
 * test_buf.c - buf.c: buf_printf formats into the room a buffer has and
 * formats again only what does not fit, so every length around the
 * room's end must come out whole, after the text already there, with
 * its NUL; xasprintf of short and long messages; buf_put_uint and
 * buf_put_int write what printf's PRIu64 and PRId64 write; buf_append,
 * buf_puts, buf_putc and xstrndup copy every length whole, short ones
 * (up to 16 bytes, copied by hand) as well as long ones, at every
 * offset of the buffer's end; xgrowarray doubles an array only at
 * powers of two.
 */
#include <inttypes.h>
#include <malloc.h>

#include "unit.h"

#define DIGITS_MAX	200

/* "0123456789..." cut to n characters (n < DIGITS_MAX), into s */
static const char *
digits(char *s, size_t n)
{
	size_t i;

	assert_true(n < DIGITS_MAX);
	for (i = 0; i < n; i++)
		s[i] = (char)('0' + i % 10);
	s[n] = 0;
	return s;
}

static void
test_printf_at_every_length_around_the_room(void **state)
{
	size_t before, room, n;

	(void)state;
	/* text already there: none (an empty buffer), or some */
	for (before = 0; before < 70; before += 23)
		for (n = 0; n < 150; n++) {
			struct buf b = BUF_INIT;
			char d1[DIGITS_MAX], d2[DIGITS_MAX];
			char want[2 * DIGITS_MAX + 8];

			digits(d1, before);
			if (before)	/* else no room at all: cap 0 */
				buf_append(&b, d1, before);
			room = b.cap - b.len;
			buf_printf(&b, "<%s>", digits(d2, n));
			snprintf(want, sizeof want, "%s<%s>", d1, d2);
			if (strcmp(b.p, want) != 0 || b.len != strlen(want))
				fail_msg("%zu before, room %zu, %zu formatted: "
				    "\"%s\" (len %zu), want \"%s\"", before,
				    room, n + 2, b.p, b.len, want);
			assert_true(b.cap > b.len);
			assert_int_equal(0, b.p[b.len]);
			buf_free(&b);
		}
}

static void
test_printf_after_printf_keeps_what_is_there(void **state)
{
	struct buf b = BUF_INIT;
	char d[DIGITS_MAX], want[4096] = "";
	size_t i;

	(void)state;
	for (i = 0; i < 40; i++) {
		buf_printf(&b, "%zu: %s\n", i, digits(d, i * 3));
		snprintf(want + strlen(want), sizeof want - strlen(want),
		    "%zu: %s\n", i, d);
		assert_string_equal(want, b.p);
		assert_int_equal(strlen(want), b.len);
	}
	buf_free(&b);
}

static void
test_xasprintf_short_and_long(void **state)
{
	char d[DIGITS_MAX], *s;
	size_t n;

	(void)state;
	s = xasprintf("%s", "");
	assert_string_equal("", s);
	free(s);
	for (n = 60; n < 70; n++) {	/* around the first room, 64 */
		s = xasprintf("%s", digits(d, n));
		assert_string_equal(d, s);
		free(s);
	}
	s = xasprintf("task %d attempt %u: %s", 42, 7u, digits(d, 150));
	assert_int_equal(strlen("task 42 attempt 7: ") + 150, strlen(s));
	assert_int_equal(0, strncmp(s, "task 42 attempt 7: 0123", 23));
	free(s);
}

/* b holds want, and its length says so; b is freed */
static void
expect(struct buf *b, const char *want)
{
	assert_string_equal(b->p, want);
	assert_int_equal(b->len, strlen(want));
	buf_free(b);
}

/*
 * v both ways, after some text, as the records put it: "key: v"; and
 * unsigned into a char array, with the NUL after it.
 */
static void
check_uint(uint64_t v)
{
	struct buf b = BUF_INIT;
	char want[64], got[FMT_UINT_SIZE + 1];

	snprintf(want, sizeof want, "key: %" PRIu64, v);
	buf_puts(&b, "key: ");
	buf_put_uint(&b, v);
	expect(&b, want);
	memset(got, 'x', sizeof got);
	assert_int_equal(fmt_uint(got, v), strlen(want + 5));
	assert_string_equal(got, want + 5);
	assert_int_equal(got[FMT_UINT_SIZE], 'x');	/* nothing past it */
}

static void
check_int(int64_t v)
{
	struct buf b = BUF_INIT;
	char want[64];

	snprintf(want, sizeof want, "key: %" PRId64, v);
	buf_puts(&b, "key: ");
	buf_put_int(&b, v);
	expect(&b, want);
}

static void
test_put_numbers_as_printf_does(void **state)
{
	uint64_t p;
	int i;

	(void)state;
	check_uint(0);
	check_uint(UINT64_MAX);
	check_int(0);
	check_int(INT64_MAX);
	check_int(INT64_MIN);
	check_int(INT64_MIN + 1);
	/* every power of ten and its neighbours, both signs */
	for (i = 0, p = 1; i < 20; i++, p *= 10) {
		check_uint(p - 1);
		check_uint(p);
		check_uint(p + 1);
		if (p < (uint64_t)INT64_MAX) {
			check_int((int64_t)p);
			check_int(-(int64_t)p);
			check_int((int64_t)p - 1);
			check_int(-(int64_t)p + 1);
		}
	}
}

static void
test_append_every_length_at_every_offset(void **state)
{
	char src[DIGITS_MAX], want[2 * DIGITS_MAX], *dup;
	size_t before, n;

	(void)state;
	for (before = 0; before < 20; before++)
		for (n = 0; n < 40; n++) {
			struct buf b = BUF_INIT;

			digits(src, n);
			memset(want, 'a', before);
			strcpy(want + before, src);
			buf_append(&b, want, before);
			buf_append(&b, src, n);
			expect(&b, want);
			buf_append(&b, want, before);
			buf_puts(&b, src);
			buf_putc(&b, '!');
			strcat(want, "!");
			expect(&b, want);
			dup = xstrndup(src + 1, n > 0 ? n - 1 : 0);
			assert_string_equal(dup, n > 0 ? src + 1 : "");
			free(dup);
		}
}

static void
test_put_printable_escapes_control_bytes(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	buf_put_printable(&b, "a\nb\tc\033]0;x\007\177 \xc3\xa9~");
	assert_string_equal(b.p, "a\\nb\\tc\\x1b]0;x\\x07\\x7f \xc3\xa9~");
	buf_free(&b);
}

/*
 * xgrowarray: an array grown one element at a time holds every one, is
 * reallocated only when its length is a power of two (else the same
 * pointer comes back), and then to twice that length, so that the
 * reallocations, and the elements they copy, grow geometrically.
 */
static void
test_growarray_doubles_at_powers_of_two(void **state)
{
	uint64_t *v = NULL, *was;
	size_t n, i, reallocs = 0;

	(void)state;
	for (n = 0; n < 5000; n++) {
		was = v;
		v = xgrowarray(v, n, sizeof *v);
		if (n & (n - 1))
			TCHECK(v == was, "%zu elements: reallocated", n);
		else {
			reallocs++;
			TCHECK(malloc_usable_size(v) >= (n ? 2 * n : 1) *
			    sizeof *v, "%zu elements: room for %zu bytes", n,
			    malloc_usable_size(v));
		}
		v[n] = n * 7 + 1;
	}
	for (i = 0; i < n; i++)
		TCHECK(v[i] == i * 7 + 1, "element %zu", i);
	/* 0, 1, 2, 4, ..., 4096 */
	assert_int_equal(14, reallocs);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printf_at_every_length_around_the_room),
		cmocka_unit_test(test_printf_after_printf_keeps_what_is_there),
		cmocka_unit_test(test_xasprintf_short_and_long),
		cmocka_unit_test(test_put_numbers_as_printf_does),
		cmocka_unit_test(test_append_every_length_at_every_offset),
		cmocka_unit_test(test_put_printable_escapes_control_bytes),
		cmocka_unit_test(test_growarray_doubles_at_powers_of_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

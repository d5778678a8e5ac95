/*
 * test_buf.c - buf.c: buf_printf formats into the room a buffer has and
 * formats again only what does not fit, so every length around the
 * room's end must come out whole, after the text already there, with
 * its NUL; xasprintf of short and long messages.
 */
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printf_at_every_length_around_the_room),
		cmocka_unit_test(test_printf_after_printf_keeps_what_is_there),
		cmocka_unit_test(test_xasprintf_short_and_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

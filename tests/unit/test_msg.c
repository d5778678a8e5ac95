/*
 * test_msg.c - msg.c's exits.  The leak case proves something only in
 * the sanitized run of the unit tests ("make check"'s step "unit tests
 * (ASan+UBSan)", detect_leaks=1): there LeakSanitizer would end a
 * fatal exit that still holds a block with its own status.
 */
#include "unit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msg.h"

/* the status a child that runs fn ends with */
static int
child_status(void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(99);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* a block held through a pointer no scan of the stack can read */
static volatile uintptr_t hidden;

static void
fatal_holding_a_block(void)
{
	char *p = malloc(64);

	if (p == NULL)
		_exit(98);
	hidden = ~(uintptr_t)p;
	p = NULL;
	msg_fatal_status(7, "gave up holding a block");
}

static void
fatal_plain(void)
{
	msg_fatal("gave up");
}

static void
test_fatal_exit_keeps_its_status(void **state)
{
	(void)state;
	assert_int_equal(child_status(fatal_plain), EXIT_TEMPFAIL);
	assert_int_equal(child_status(fatal_holding_a_block), 7);
}

/*
 * A condition is said once per key until it is cleared, whatever the
 * key's length: keys of more than 47 bytes (a kind's name in them) were
 * cut when stored and never matched again, so their condition was said
 * at every try.
 */
static void
test_once_per_key_of_any_length(void **state)
{
	char a[300], b[300];

	(void)state;
	memset(a, 'a', sizeof a - 1);
	a[sizeof a - 1] = 0;
	memcpy(a, "finding the slurm jobs of unconfirmed submissions", 49);
	snprintf(b, sizeof b, "%.60s", a);
	b[55] = 'b';		/* differs from a only after 48 bytes */
	assert_int_equal(msg_once(a, "first"), 1);
	assert_int_equal(msg_once(a, "again"), 0);
	assert_int_equal(msg_once(b, "another"), 1);
	assert_int_equal(msg_once(b, "again"), 0);
	msg_clear(a);
	assert_int_equal(msg_once(a, "back"), 1);
	assert_int_equal(msg_once(b, "still"), 0);
	msg_clear(a);
	msg_clear(b);
	assert_int_equal(msg_once("short", "short"), 1);
	assert_int_equal(msg_once("short", "short"), 0);
	msg_clear("short");
}

/*
 * Past 32 conditions not cleared, a new one takes the slot of the one
 * stored longest ago, and is said once (it was said at every try).
 */
static void
test_once_when_every_slot_is_taken(void **state)
{
	char key[32];
	int i;

	(void)state;
	for (i = 0; i < 40; i++) {
		snprintf(key, sizeof key, "condition %d", i);
		assert_int_equal(msg_once(key, "%s", key), 1);
		assert_int_equal(msg_once(key, "%s again", key), 0);
	}
	/* the last 32 are still known; the first ones made room */
	assert_int_equal(msg_once("condition 39", "again"), 0);
	assert_int_equal(msg_once("condition 8", "again"), 0);
	assert_int_equal(msg_once("condition 0", "said again"), 1);
	for (i = 0; i < 40; i++) {
		snprintf(key, sizeof key, "condition %d", i);
		msg_clear(key);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fatal_exit_keeps_its_status),
		cmocka_unit_test(test_once_per_key_of_any_length),
		cmocka_unit_test(test_once_when_every_slot_is_taken),
	};

	msg_init("test_msg");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

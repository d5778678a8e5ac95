/*
 * test_msg.c - msg.c's exits.  The leak case proves something only in
 * the sanitized run of the unit tests ("make check"'s step "unit tests
 * (ASan+UBSan)", detect_leaks=1): there LeakSanitizer would end a
 * fatal exit that still holds a block with its own status.
 */
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fatal_exit_keeps_its_status),
	};

	msg_init("test_msg");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

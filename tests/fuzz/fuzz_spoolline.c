/*
 * fuzz_spoolline.c - taskfile_apply_words(): one "#SPOOL" line, or the
 * options of "spool submit" given in one string, split with shell-like
 * quoting and applied to a spec with task_set().
 *
 * Invariant: a refusal names a reason; whatever was applied leaves a
 * spec whose record reads back (task_validate is not asked: a line
 * alone has no command).
 */
#include "fuzz.h"
#include "rec.h"
#include "task.h"
#include "taskfile.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_spec t, back;
	struct buf enc = BUF_INIT, enc2 = BUF_INIT;
	struct rec_reader r;
	const char *why = NULL;
	char *line, bad[128];

	if (memchr(data, 0, size))
		return 0;	/* a line never holds NUL (taskfile refuses) */
	line = xstrndup((const char *)data, size);
	task_init(&t);
	if (taskfile_apply_words(&t, line, &why, bad, sizeof bad) < 0)
		fuzz_check(why != NULL && why[0], "a refusal without a reason");
	task_encode(&enc, &t);
	task_init(&back);
	rec_reader_init(&r, enc.p, enc.len);
	fuzz_check(task_decode(&r, &back) == 0, "own record unreadable");
	task_encode(&enc2, &back);
	fuzz_same(&enc, &enc2, "record round trip");
	task_free(&back);
	task_free(&t);
	buf_free(&enc);
	buf_free(&enc2);
	free(line);
	return 0;
}

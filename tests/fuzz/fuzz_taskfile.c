/*
 * fuzz_taskfile.c - taskfile_parse(): a task file as users drop it into
 * incoming/, YAML (through yamlx) or a "#!" script with #SPOOL lines.
 *
 * Invariant: a file that parses gives a spec that task_validate()
 * accepts, whose canonical record (task_encode) reads back with
 * task_decode() and encodes to the same bytes, as spoold's bundles are
 * written and read.
 */
#include "fuzz.h"
#include "rec.h"
#include "task.h"
#include "taskfile.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_spec t, back;
	struct taskfile_err e;
	struct buf enc = BUF_INIT, enc2 = BUF_INIT;
	struct rec_reader r;
	const char *why;
	char msg[400];

	task_init(&t);
	if (taskfile_parse((const char *)data, size, &t, &e) < 0) {
		taskfile_err_format(&e, msg, sizeof msg);
		fuzz_check(msg[0] != 0, "a refusal without a reason");
		task_free(&t);
		return 0;
	}
	fuzz_check(task_validate(&t, &why) == 0, "parsed but invalid");
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
	return 0;
}

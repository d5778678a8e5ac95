/*
 * fuzz_taskfile.c - taskfile_parse(): a task file as users drop it into
 * incoming/, YAML (through yamlx) or a "#!" script with #SPOOL lines;
 * and taskfile_parse_list(), the same file as spool submit and spoolfs
 * take it, a YAML list of tasks too.
 *
 * Invariant: a file that parses gives specs that task_validate()
 * accepts, whose canonical record (task_encode) reads back with
 * task_decode() and encodes to the same bytes, as spoold's bundles are
 * written and read; a list's task depends by name only on tasks before
 * it.
 */
#include "fuzz.h"
#include "rec.h"
#include "task.h"
#include "taskfile.h"

/* t validates, and its record reads back to the same bytes */
static void
round_trip(const struct task_spec *t)
{
	struct buf enc = BUF_INIT, enc2 = BUF_INIT;
	struct rec_reader r;
	struct task_spec back;
	const char *why;

	fuzz_check(task_validate(t, &why) == 0, "parsed but invalid");
	task_encode(&enc, t);
	task_init(&back);
	rec_reader_init(&r, enc.p, enc.len);
	fuzz_check(task_decode(&r, &back) == 0, "own record unreadable");
	task_encode(&enc2, &back);
	fuzz_same(&enc, &enc2, "record round trip");
	task_free(&back);
	buf_free(&enc);
	buf_free(&enc2);
}

/*
 * The tasks before t (the list's task i) that it names are before it,
 * and once the list's IDs are claimed (from 1 here, as submit_tasks
 * does) they are IDs below its own, within TASK_AFTER_MAX in all.
 */
static void
items(struct task_spec *t, size_t i)
{
	size_t k, j, p, had = t->nafter, n = t->nafter_item;
	struct after_item *it;
	uint64_t *ids;

	for (k = 0; k < n; k++)
		fuzz_check(t->after_item[k].item < i &&
		    t->after_item[k].at <= had &&
		    (k == 0 || t->after_item[k - 1].at <= t->after_item[k].at),
		    "after a task not before");
	it = xreallocarray(NULL, n + 1, sizeof *it);
	if (n)
		memcpy(it, t->after_item, n * sizeof *it);
	ids = xreallocarray(NULL, had + 1, sizeof *ids);
	if (had)
		memcpy(ids, t->after, had * sizeof *ids);
	task_after_items(t, 1);
	fuzz_check(t->nafter == had + n && t->nafter <= TASK_AFTER_MAX &&
	    t->nafter_item == 0, "the list's dependencies as IDs");
	/* the j-th named task comes after it[j].at IDs and j named tasks */
	for (p = 0, j = 0, k = 0; p < t->nafter; p++)
		if (j < n && p == it[j].at + j) {
			fuzz_check(t->after[p] == 1 + it[j].item,
			    "a named task's ID out of its place");
			j++;
		} else
			fuzz_check(t->after[p] == ids[k++], "an ID moved");
	free(it);
	free(ids);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_spec t, *ts;
	struct taskfile_err e;
	char msg[400];
	size_t i, n, deps;
	int one, many;

	task_init(&t);
	one = taskfile_parse((const char *)data, size, &t, &e);
	if (one < 0) {
		taskfile_err_format(&e, msg, sizeof msg);
		fuzz_check(msg[0] != 0, "a refusal without a reason");
	} else {
		round_trip(&t);
		fuzz_check(t.nafter_item == 0, "one task after a list's");
	}
	/*
	 * The same file as a list may be: what taskfile_parse takes is a
	 * list of that one task; a list is 1 to TASKFILE_LIST_MAX tasks,
	 * each as a file of its own would be.
	 */
	many = taskfile_parse_list((const char *)data, size, &ts, &n, &e);
	if (many < 0) {
		taskfile_err_format(&e, msg, sizeof msg);
		fuzz_check(msg[0] != 0, "a list refused without a reason");
		fuzz_check(ts == NULL && n == 0, "a refused list kept tasks");
		fuzz_check(one < 0, "one task, refused as a list");
	} else {
		fuzz_check(n >= 1 && n <= TASKFILE_LIST_MAX, "list size");
		fuzz_check(one < 0 || n == 1, "one task, a list of more");
		for (i = deps = 0; i < n; i++) {
			deps += ts[i].nafter + ts[i].nafter_item;
			round_trip(&ts[i]);
			items(&ts[i], i);
		}
		fuzz_check(deps <= TASKFILE_AFTER_MAX,
		    "a list's dependencies past the bound");
		task_free_array(ts, n);
	}
	task_free(&t);
	return 0;
}

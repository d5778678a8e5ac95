/*
 * fuzz_bundle.c - the task records spoold and ckworker read from the
 * spool: a CLI's bundle in incoming/ (bundle_open, bundle_next; spoold
 * validates each task as accept.c does), a worker's assignment
 * (assign_decode) and the lines of the event journal
 * (journal_parse_line).  The first byte picks the reader.
 *
 * Invariant: a bundle task that validates encodes and reads back to
 * the same record.
 */
#include "bundle.h"
#include "fuzz.h"
#include "journal.h"
#include "wdir.h"

static void
one_bundle(const char *data, size_t size)
{
	struct bundle_reader br, br2;
	struct buf out = BUF_INIT;
	struct task_spec t, back;
	const char *why;
	int rc;

	if (bundle_open(&br, data, size) < 0) {
		fuzz_check(br.r.why != NULL, "a refusal without a reason");
		return;
	}
	bundle_begin(&out, br.hdr.first, br.hdr.count, br.hdr.nonce);
	while ((rc = bundle_next(&br, &t)) > 0) {
		if (task_validate(&t, &why) == 0)
			bundle_add(&out, &t);
		task_free(&t);
	}
	/* spoold's canonical rewrite reads back */
	if (bundle_open(&br2, out.p, out.len) == 0)
		while ((rc = bundle_next(&br2, &back)) > 0)
			task_free(&back);
	buf_free(&out);
}

static void
one_assign(const char *data, size_t size)
{
	struct task_spec t;
	const char *why = NULL;
	uint32_t attempt;

	task_init(&t);
	if (assign_decode(data, size, &t, &attempt, &why) < 0)
		fuzz_check(why != NULL, "a refusal without a reason");
	task_free(&t);
}

static void
journal_lines(const char *data, size_t size)
{
	char *text = xstrndup(data, size), *line, *nl;
	struct jevent e;
	char v[64];
	double d;

	for (line = text; line; line = nl) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = 0;
		if (journal_parse_line(line, &e) == 0) {
			(void)jev_get(&e, "why", v, sizeof v);
			(void)jev_num(&e, "rss", &d);
		}
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		one_bundle((const char *)data + 1, size - 1);
		break;
	case 1:
		one_assign((const char *)data + 1, size - 1);
		break;
	default:
		journal_lines((const char *)data + 1, size - 1);
		break;
	}
	return 0;
}

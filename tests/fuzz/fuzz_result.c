/*
 * fuzz_result.c - the records spoold and the CLI read back from the
 * spool, which anyone who can write there may have forged: a task's
 * result (result_decode) and a batch job's record (jobrec_decode).
 * The first byte picks the reader; the rest is the file.
 *
 * Invariant: a record that reads encodes and reads back to the same
 * bytes.
 */
#include "fuzz.h"
#include "jobrec.h"
#include "result.h"

static void
one_result(const char *data, size_t size)
{
	struct result r, back;
	struct buf enc = BUF_INIT, enc2 = BUF_INIT;
	const char *why = NULL;
	char how[200];

	result_init(&r);
	if (result_decode(data, size, &r, &why) < 0) {
		fuzz_check(why != NULL, "a refusal without a reason");
		result_free(&r);
		return;
	}
	result_how(&r, how, sizeof how);
	(void)result_exit_status(&r);
	result_encode(&enc, &r);
	result_init(&back);
	fuzz_check(result_decode(enc.p, enc.len, &back, &why) == 0,
	    "own result unreadable");
	result_encode(&enc2, &back);
	fuzz_same(&enc, &enc2, "result round trip");
	result_free(&back);
	result_free(&r);
	buf_free(&enc);
	buf_free(&enc2);
}

static void
one_jobrec(const char *data, size_t size)
{
	struct jobrec j, back;
	struct buf enc = BUF_INIT, enc2 = BUF_INIT;

	if (jobrec_decode(data, size, &j) < 0)
		return;
	fuzz_check(jobrec_id_ok(j.id), "a job ID that names a path");
	jobrec_encode(&enc, &j);
	fuzz_check(jobrec_decode(enc.p, enc.len, &back) == 0,
	    "own job record unreadable");
	jobrec_encode(&enc2, &back);
	fuzz_same(&enc, &enc2, "job record round trip");
	buf_free(&enc);
	buf_free(&enc2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		one_jobrec((const char *)data + 1, size - 1);
	else
		one_result((const char *)data + 1, size - 1);
	return 0;
}

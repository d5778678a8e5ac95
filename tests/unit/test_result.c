/*
 * test_result.c - result.c: encode/decode round trip of every field,
 * every state and reason name, the grep-able text, unknown keys being
 * ignored (records can grow), records without id or state and bad
 * values refused, and result_exit_status's mapping (done 0, exit code,
 * 128+signal, walltime 124, memory 137, cancelled 130, rejected 65,
 * spawn 127, worker-lost and dependency 75).
 */
#include "unit.h"
#include "result.h"

static void
fill_full(struct result *r)
{
	result_init(r);
	r->id = 1042;
	r->attempt = 3;
	r->state = RS_FAILED;
	r->reason = RR_MEMORY;
	r->exit_code = 137;
	r->signal = 9;
	r->message = xstrdup("killed: used 4.2G of 4G\n\"oom\" \\ \x01 caf\xc3\xa9");
	r->worker = xstrdup("node7-3fa2");
	r->host = xstrdup("node7");
	r->job = xstrdup("123456.sched01");
	r->start = 1700000000.125;
	r->end = 1700000001.625;
	r->utime = 1.25;
	r->stime = 0.5;
	r->maxrss = 104857600;
	r->cores = 2;
	r->cpus = xstrdup("0-1");
	r->gpus = 1;
	r->gpu_ids = xstrdup("GPU-1234,3");
	r->memory_peak = 4509715660ULL;
	r->memory_limit = 4294967296ULL;
	r->memory_method = xstrdup("cgroup1");
	r->cpu_method = xstrdup("cpuset");
	r->gpu_method = xstrdup("devices");
	r->gpu_util = 87.5;
	r->gpu_memory_peak = 1073741824;
}

static void
assert_str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		TCHECK(a == b, "\"%s\" vs \"%s\"", a ? a : "(null)",
		    b ? b : "(null)");
	else
		assert_string_equal(a, b);
}

static void
assert_result_eq(const struct result *a, const struct result *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->attempt, b->attempt);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->reason, b->reason);
	assert_int_equal(a->exit_code, b->exit_code);
	assert_int_equal(a->signal, b->signal);
	assert_str_same(a->message, b->message);
	assert_str_same(a->worker, b->worker);
	assert_str_same(a->host, b->host);
	assert_str_same(a->job, b->job);
	assert_float_equal(a->start, b->start, 1e-6);
	assert_float_equal(a->end, b->end, 1e-6);
	assert_float_equal(a->utime, b->utime, 1e-6);
	assert_float_equal(a->stime, b->stime, 1e-6);
	assert_int_equal(a->maxrss, b->maxrss);
	assert_int_equal(a->cores, b->cores);
	assert_str_same(a->cpus, b->cpus);
	assert_int_equal(a->gpus, b->gpus);
	assert_str_same(a->gpu_ids, b->gpu_ids);
	assert_int_equal(a->memory_peak, b->memory_peak);
	assert_int_equal(a->memory_limit, b->memory_limit);
	assert_str_same(a->memory_method, b->memory_method);
	assert_str_same(a->cpu_method, b->cpu_method);
	assert_str_same(a->gpu_method, b->gpu_method);
	assert_float_equal(a->gpu_util, b->gpu_util, 1e-6);
	assert_int_equal(a->gpu_memory_peak, b->gpu_memory_peak);
}

static void
round_trip(const struct result *r)
{
	struct buf b = BUF_INIT;
	struct result back;
	const char *why = NULL;

	result_encode(&b, r);
	TCHECK(result_decode(b.p, b.len, &back, &why) == 0, "%s\n%s",
	    why ? why : "", b.p);
	assert_result_eq(r, &back);
	result_free(&back);
	buf_free(&b);
}

static void
test_round_trip_every_field(void **state)
{
	struct result r;

	(void)state;
	fill_full(&r);
	round_trip(&r);
	result_free(&r);

	/* The minimum: no optional field. */
	result_init(&r);
	r.id = 1;
	r.state = RS_DONE;
	r.reason = RR_EXIT;
	round_trip(&r);
	assert_int_equal(r.exit_code, -1);
	result_free(&r);

	/* Never started: an end time without a start. */
	result_init(&r);
	r.id = 2;
	r.state = RS_CANCELLED;
	r.reason = RR_DEPENDENCY;
	r.message = xstrdup("dependency 1 failed (exit 3)");
	r.end = 1700000002.5;
	round_trip(&r);
	result_free(&r);
}

/*
 * A record read and written again says the same, also where a time is
 * under half a millisecond (it is written with 3 decimals, as 0.000,
 * which reads back as no time at all): found by fuzz_result.
 */
static void
test_times_under_half_a_millisecond_write_back_the_same(void **state)
{
	static const char *const in[] = {
		"id: 1\nstate: done\nstart: .0004\nend: 0.0004\nwall: 0.012\n",
		"id: 1\nstate: done\nend: 0.0004\n",
		"id: 1\nstate: done\nstart: 0.0004\nend: 2.5\n",
	};
	struct buf b1, b2;
	struct result r;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof in / sizeof *in; i++) {
		b1 = (struct buf)BUF_INIT;
		b2 = (struct buf)BUF_INIT;
		why = NULL;
		result_init(&r);
		TCHECK(result_decode(in[i], strlen(in[i]), &r, &why) == 0,
		    "%s: %s", in[i], why ? why : "");
		result_encode(&b1, &r);
		result_free(&r);
		result_init(&r);
		TCHECK(result_decode(b1.p, b1.len, &r, &why) == 0, "%s: %s",
		    b1.p, why ? why : "");
		result_encode(&b2, &r);
		result_free(&r);
		TCHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0,
		    "from %s\nwritten:\n%s\nwritten again:\n%s", in[i], b1.p,
		    b2.p);
		TCHECK(strstr(b1.p, "start:") == NULL, "%s", b1.p);
		buf_free(&b1);
		buf_free(&b2);
	}
}

static void
test_every_state_and_reason(void **state)
{
	struct result r;
	int s, k;

	(void)state;
	for (s = 0; s < RS_NSTATES; s++)
		for (k = 0; k < RR_NREASONS; k++) {
			result_init(&r);
			r.id = 1099511627775ULL;
			r.attempt = UINT32_MAX;
			r.state = (enum result_state)s;
			r.reason = (enum result_reason)k;
			r.exit_code = 255;
			r.signal = 128;
			round_trip(&r);
			result_free(&r);
		}
}

static void
test_text_is_greppable(void **state)
{
	struct result r;
	struct buf b = BUF_INIT;

	(void)state;
	fill_full(&r);
	result_encode(&b, &r);
	assert_contains(b.p, "id: 1042\n");
	assert_contains(b.p, "attempt: 3\n");
	assert_contains(b.p, "state: failed\n");
	assert_contains(b.p, "reason: memory\n");
	assert_contains(b.p, "exit: 137\n");
	assert_contains(b.p, "signal: 9\n");
	assert_contains(b.p, "worker: node7-3fa2\n");
	assert_contains(b.p, "wall: 1.500\n");
	assert_contains(b.p, "maxrss: 104857600\n");
	assert_contains(b.p, "cpus: \"0-1\"\n");
	assert_contains(b.p, "memory_peak: 4509715660\n");
	assert_contains(b.p, "memory_limit: 4294967296\n");
	assert_contains(b.p, "memory_method: cgroup1\n");
	assert_contains(b.p, "gpu_util: 87.5\n");
	assert_contains(b.p, "gpu_memory_peak: 1073741824\n");
	assert_int_equal(strncmp(b.p, "id: 1042\n", 9), 0);
	result_free(&r);
	buf_free(&b);

	result_init(&r);
	r.id = 5;
	r.state = RS_FAILED;
	r.reason = RR_WORKER_LOST;
	result_encode(&b, &r);
	assert_string_equal(b.p, "id: 5\nattempt: 0\nstate: failed\n"
	    "reason: worker-lost\n");
	buf_free(&b);
}

static void
test_unknown_keys_ignored(void **state)
{
	static const char text[] =
	    "id: 9\n"
	    "future_field: [1, 2]\n"
	    "attempt: 2\n"
	    "new_flag: yes\n"
	    "state: done\n"
	    "reason: exit\n"
	    "exit: 0\n"
	    "a_quoted_thing: \"x\\ty\"\n"
	    "wall: 12.5\n"
	    "host: n1\n";
	struct result r;
	const char *why = NULL;

	(void)state;
	TCHECK(result_decode(text, strlen(text), &r, &why) == 0, "%s",
	    why ? why : "");
	assert_int_equal(r.id, 9);
	assert_int_equal(r.attempt, 2);
	assert_int_equal(r.state, RS_DONE);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.host, "n1");
	result_free(&r);
}

static void
test_decode_refusals(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} rows[] = {
		{ "state: done\nreason: exit\n",	"without id or state" },
		{ "id: 1\nreason: exit\n",		"without id or state" },
		{ "",					"without id or state" },
		{ "id: 1\nstate: exploded\n",		"unknown state" },
		{ "id: 1\nstate: done\nreason: bored\n", "unknown reason" },
		{ "id: 1\nstate: \"done\\x00\"\n",	"NUL" },
		{ "id: x\nstate: done\n",		"not an unsigned" },
		{ "id: 1099511627776\nstate: done\n",	"out of range" },
		{ "id: 1\nstate: done\nexit: 256\n",	"out of range" },
		{ "id: 1\nstate: done\nexit: -1\n",	"out of range" },
		{ "id: 1\nstate: done\nsignal: 0\n",	"out of range" },
		{ "id: 1\nstate: done\nsignal: 129\n",	"out of range" },
		{ "id: 1\nstate: done\nstart: soon\n",	"not a number" },
		{ "id: 1\nstate: done\nmessage: \"x\n",	"unterminated" },
		{ "id: 1\nstate: done\nhost: a b\n",	"bad character" },
		{ "id: 1\nstate: done",			"no newline" },
		{ "id: 1\nBAD\nstate: done\n",		"does not start" },
	};
	struct result r;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		why = NULL;
		TCHECK(result_decode(rows[i].text, strlen(rows[i].text), &r,
		    &why) == -1, "row %zu accepted", i);
		TCHECK(unit_contains(why, rows[i].why),
		    "row %zu: \"%s\", want \"%s\"", i, why ? why : "",
		    rows[i].why);
		/* A refused record leaves nothing to free. */
		TCHECK(r.message == NULL && r.host == NULL, "row %zu", i);
	}
}

static void
test_exit_status(void **state)
{
	static const struct {
		enum result_state st;
		enum result_reason why;
		int exit_code, sig;
		int want;
	} rows[] = {
		{ RS_DONE,	RR_EXIT,	0,	0,	0 },
		{ RS_DONE,	RR_EXIT,	-1,	0,	0 },
		{ RS_FAILED,	RR_EXIT,	3,	0,	3 },
		{ RS_FAILED,	RR_EXIT,	1,	0,	1 },
		{ RS_FAILED,	RR_EXIT,	255,	0,	255 },
		{ RS_FAILED,	RR_SIGNAL,	-1,	9,	137 },
		{ RS_FAILED,	RR_SIGNAL,	-1,	15,	143 },
		{ RS_FAILED,	RR_SIGNAL,	-1,	11,	139 },
		{ RS_FAILED,	RR_WALLTIME,	-1,	15,	124 },
		{ RS_FAILED,	RR_MEMORY,	-1,	9,	137 },
		{ RS_FAILED,	RR_MEMORY,	137,	0,	137 },
		{ RS_CANCELLED,	RR_CANCELLED,	-1,	15,	130 },
		{ RS_REJECTED,	RR_REJECTED,	-1,	0,	65 },
		{ RS_FAILED,	RR_SPAWN,	-1,	0,	127 },
		{ RS_FAILED,	RR_WORKER_LOST,	-1,	0,	75 },
		{ RS_CANCELLED,	RR_DEPENDENCY,	-1,	0,	75 },
	};
	struct result r;
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		result_init(&r);
		r.state = rows[i].st;
		r.reason = rows[i].why;
		r.exit_code = rows[i].exit_code;
		r.signal = rows[i].sig;
		got = result_exit_status(&r);
		TCHECK(got == rows[i].want, "%s/%s exit %d signal %d: %d, "
		    "want %d", result_state_name[rows[i].st],
		    result_reason_name[rows[i].why], rows[i].exit_code,
		    rows[i].sig, got, rows[i].want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_field),
		cmocka_unit_test(test_times_under_half_a_millisecond_write_back_the_same),
		cmocka_unit_test(test_every_state_and_reason),
		cmocka_unit_test(test_text_is_greppable),
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_decode_refusals),
		cmocka_unit_test(test_exit_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_gpu.c - ckworker/gpu.c: CUDA_VISIBLE_DEVICES-style lists
 * (indices, UUIDs, MIG names, blanks, "-1" and "NoDevFiles" for none,
 * IDs too long), and discovery in order: --gpu-ids, then the batch
 * system's CUDA_VISIBLE_DEVICES, then the driver libraries; --gpus N
 * takes the first N, refuses more than were found, and hands out
 * 0..N-1 when nothing could be found (no NVML, no driver: the case of
 * this test machine, and of any machine without a GPU); a list that
 * names one GPU twice is refused.
 */
#include "unit.h"
#include "../../ckworker/gpu.h"

static char *
joined(const struct gpus *g)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < g->n; i++)
		buf_printf(&b, "%s%s", i ? "," : "", g->id[i]);
	return b.p ? buf_steal(&b) : xstrdup("");
}

static void
test_list_parse(void **state)
{
	static const struct {
		const char *in;
		int rc;
		const char *want;
	} rows[] = {
		{ "0", 0, "0" },
		{ "0,1,2", 0, "0,1,2" },
		{ " 2 , 3 ", 0, "2,3" },
		{ "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,1", 0,
		  "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,1" },
		{ "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0", 0,
		  "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0" },
		{ "", 0, "" },
		{ "-1", 0, "" },
		{ "NoDevFiles", 0, "" },
		{ "0,,1", 0, "0,1" },
		{ "0123456789012345678901234567890123456789012345678901234567890"
		  "1234567890123456789012345678901234567890", -1, "" },
	};
	struct gpus g;
	size_t i;
	char *got;
	int rc, nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		memset(&g, 0, sizeof g);
		rc = gpu_list_parse(rows[i].in, &g);
		TEXPECT(nfail, rc == rows[i].rc, "\"%s\": rc %d, want %d",
		    rows[i].in, rc, rows[i].rc);
		got = joined(&g);
		if (rc == 0)
			TEXPECT(nfail, strcmp(got, rows[i].want) == 0,
			    "\"%s\" -> \"%s\", want \"%s\"", rows[i].in, got,
			    rows[i].want);
		free(got);
		gpus_free(&g);
	}
	memset(&g, 0, sizeof g);
	assert_int_equal(gpu_list_parse(NULL, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(nfail, 0);
}

static void
test_discover_order(void **state)
{
	static const struct {
		const char *ids;	/* --gpu-ids */
		long count;		/* --gpus, -1 unset */
		const char *cvd;	/* CUDA_VISIBLE_DEVICES, NULL unset */
		int rc;
		const char *want;
		const char *source;	/* part of the source */
	} rows[] = {
		/* no GPU, no driver here: nothing found, none offered */
		{ NULL, -1, NULL, 0, "", "none found" },
		{ NULL, 0, "0,1", 0, "", "--gpus 0" },
		/* told: indices 0..N-1 */
		{ NULL, 2, NULL, 0, "0,1", "handing out indices 0..1" },
		{ NULL, 3, "", 0, "0,1,2", "handing out" },
		/* the batch system's view wins over discovery */
		{ NULL, -1, "3,5", 0, "3,5", "CUDA_VISIBLE_DEVICES=3,5" },
		{ NULL, 1, "3,5", 0, "3", "CUDA_VISIBLE_DEVICES" },
		{ NULL, 3, "3,5", -1, "", "" },
		{ NULL, -1, "-1", 0, "", "CUDA_VISIBLE_DEVICES" },
		/* --gpu-ids over everything */
		{ "7,GPU-abc", -1, "3,5", 0, "7,GPU-abc", "--gpu-ids" },
		{ "7,8,9", 2, NULL, 0, "7,8", "--gpu-ids" },
		{ "7", 2, NULL, -1, "", "" },
		/* one GPU named twice would go to two tasks at once */
		{ "0,0", -1, NULL, -1, "", "" },
		{ "1,GPU-abc,01", -1, NULL, -1, "", "" },
		{ "GPU-abc,GPU-abc", 1, NULL, -1, "", "" },
		{ NULL, -1, "3,3", -1, "", "" },
		{ NULL, 1, "2,5,002", -1, "", "" },
		{ "0,1,10", -1, NULL, 0, "0,1,10", "--gpu-ids" },
	};
	struct gpus g;
	char why[512], *got;
	size_t i;
	int rc, nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		if (rows[i].cvd)
			setenv("CUDA_VISIBLE_DEVICES", rows[i].cvd, 1);
		else
			unsetenv("CUDA_VISIBLE_DEVICES");
		why[0] = 0;
		rc = gpu_discover(rows[i].ids, rows[i].count, &g, why,
		    sizeof why);
		TEXPECT(nfail, rc == rows[i].rc, "row %zu: rc %d, want %d (%s)",
		    i, rc, rows[i].rc, why);
		if (rc < 0) {
			TEXPECT(nfail, why[0] != 0, "row %zu: no reason", i);
			TEXPECT(nfail, rows[i].rc < 0, "row %zu: %s", i, why);
			gpus_free(&g);
			continue;
		}
		got = joined(&g);
		TEXPECT(nfail, strcmp(got, rows[i].want) == 0,
		    "row %zu: GPUs \"%s\", want \"%s\"", i, got, rows[i].want);
		TEXPECT(nfail, strstr(g.source, rows[i].source) != NULL,
		    "row %zu: source \"%s\" lacks \"%s\"", i, g.source,
		    rows[i].source);
		TEXPECT(nfail, g.n == 0 || (g.busy && g.dev),
		    "row %zu: no busy/dev arrays", i);
		free(got);
		gpus_free(&g);
	}
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_int_equal(nfail, 0);
}

/* Without NVML there is nothing to sample, and it says so. */
static void
test_sample_without_nvml(void **state)
{
	unsigned util = 7;
	uint64_t mem = 7;

	(void)state;
	assert_int_equal(gpu_sample(NULL, &util, &mem), -1);
	assert_int_equal(util, 7);
	assert_int_equal(mem, 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_parse),
		cmocka_unit_test(test_discover_order),
		cmocka_unit_test(test_sample_without_nvml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

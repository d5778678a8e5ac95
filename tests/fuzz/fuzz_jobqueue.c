/*
 * fuzz_jobqueue.c - config_import_jobqueue(): a dask-jobqueue
 * jobqueue.yaml converted into a spool.yaml ("spool config import").
 * The first byte picks the backend asked for (or none: the file's only
 * section); the rest is the file.
 *
 * Invariant: a refusal says why; what an import writes is YAML that
 * config_parse() reads without crashing (it may refuse a value that
 * the user's file already had wrong).
 */
#include "buf.h"
#include "config.h"
#include "fuzz.h"

static const char *const backends[] = {
	NULL, "slurm", "sge", "pbs", "lsf", "local", "htcondor",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = BUF_INIT;
	struct config c;
	const char *backend;
	char why[512];

	if (size == 0)
		return 0;
	backend = backends[data[0] % (sizeof backends / sizeof *backends)];
	why[0] = 0;
	if (config_import_jobqueue((const char *)data + 1, size - 1, backend,
	    &out, why, sizeof why) < 0) {
		fuzz_check(why[0] != 0, "a refusal without a reason");
		buf_free(&out);
		return 0;
	}
	if (config_parse(&c, out.p, out.len, why, sizeof why) == 0)
		config_free(&c);
	buf_free(&out);
	return 0;
}

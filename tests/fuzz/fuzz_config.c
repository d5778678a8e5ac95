/*
 * fuzz_config.c - config_parse(): SPOOL/spool.yaml, the daemon and
 * cluster sections (kinds inheriting from the cluster section).
 *
 * Invariant: a refusal says why, and starts with the file's name; an
 * accepted config has at least one worker kind and a lost-timeout of
 * at least twice the heartbeat.
 */
#include "config.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char why[512];

	why[0] = 0;
	if (config_parse(&c, (const char *)data, size, why, sizeof why) < 0) {
		fuzz_check(why[0] != 0, "a refusal without a reason");
		return 0;	/* config_parse freed c */
	}
	fuzz_check(c.nkinds >= 1 && c.kinds != NULL, "no worker kind");
	fuzz_check(c.lost_timeout_ms >= 2 * c.heartbeat_ms, "timeouts");
	fuzz_check(config_kind(&c, c.kinds[0].name) == &c.kinds[0],
	    "first kind not found by its name");
	config_free(&c);
	return 0;
}

/*
 * config.h - the spool's configuration, SPOOL/spool.yaml.
 *
 * Optional; every key has a default.  Read with yamlx (untrusted YAML
 * rules) and checked strictly: an unknown key or a bad value is an
 * error naming the file, line, column and key, and the program that
 * reads it refuses to start rather than guess.
 *
 *   daemon:
 *     fsync: true          # flush before a state change is published
 *     heartbeat: 2s        # how often workers and spoold beat
 *     lost-timeout: 30s    # no worker beat this long: worker lost
 *     death-timeout: 60s   # no spoold beat this long: workers leave
 *     rescan: 1s           # longest interval between directory rescans
 *     settle: 2s           # a dropped file must be quiet this long
 *     max-requeues: 3      # worker-lost requeues before a task fails
 *     shared: false        # allow group-writable spool directories
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct config {
	int	fsync;
	uint64_t heartbeat_ms;
	uint64_t lost_timeout_ms;
	uint64_t death_timeout_ms;
	uint64_t rescan_ms;
	uint64_t settle_ms;
	uint32_t max_requeues;
	int	shared;
};

#define CONFIG_FILE "spool.yaml"

void	config_defaults(struct config *c);
/*
 * Read dfd/spool.yaml into c (defaults first).  A missing file is not
 * an error.  On error fills why ("spool.yaml: line 3, column 5: ...").
 */
int	config_load(struct config *c, int dfd, char *why, size_t whysize);
/* Parse YAML text (for tests and the fuzzer). */
int	config_parse(struct config *c, const char *data, size_t len,
	    char *why, size_t whysize);

#endif

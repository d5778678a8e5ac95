/*
 * reload.c - SIGHUP: spool.yaml read again and, when the running spoold
 * can take every change in it, put in force (spoold(8), "Reloading
 * spool.yaml").
 *
 * All or nothing.  A file that does not parse or is not the spool
 * owner's alone, or that changes a key only a restart applies
 * (config_diff: daemon: heartbeat, lost-timeout, death-timeout, fsync,
 * shared, and the kinds' number, names, order and backends), leaves the
 * configuration in force as it was, and spoold says why.  What it takes
 * applies from the next pass: the jobs submitted from then on are made
 * from the new kinds (a job already submitted keeps its script), and
 * daemon: rescan, settle, max-requeues, journal-size and cluster:
 * poll-interval, max-submit-failures and scale-down-delay are read
 * where they are used.  Called from the loop's settle() only, never
 * inside a batch command, which holds a kind of the configuration
 * replaced here.
 */
#include "buf.h"
#include "msg.h"
#include "spoold.h"

void
spoold_reload(void)
{
	struct buf changed = BUF_INIT;
	struct config c;
	const char *fixed;
	char why[512];

	if (spool_config_read(&sd.sp, &c, why, sizeof why) < 0) {
		msg_warn("reload: %s: the configuration in force stays", why);
		return;
	}
	if ((fixed = config_diff(&sd.sp.cfg, &c, &changed)) != NULL) {
		msg_warn("reload: %s/%s changes %s, which only a restart of "
		    "spoold applies: nothing of it taken", sd.sp.shown,
		    CONFIG_FILE, fixed);
		config_free(&c);
		buf_free(&changed);
		return;
	}
	config_free(&sd.sp.cfg);
	sd.sp.cfg = c;
	if (changed.len == 0) {
		msg_info("reload: %s/%s read: nothing changed", sd.sp.shown,
		    CONFIG_FILE);
	} else {
		msg_info("reload: %s/%s read: %s changed, in force from now "
		    "on", sd.sp.shown, CONFIG_FILE, changed.p);
		config_warn_death_timeouts(&sd.sp.cfg);
		scale_poll_soon();	/* then at the new poll-interval */
	}
	buf_free(&changed);
}

/*
 * submit.c - see submit.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "fsop.h"
#include "ids.h"
#include "submit.h"

static int
fail(char *why, size_t size, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
fail(char *why, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	errno = saved;
	return rc;
}

int
submit_tasks(struct spool *sp, struct task_spec *t, size_t n,
    unsigned flags, char *why, size_t size)
{
	struct buf b = BUF_INIT;
	struct ids_claim c;
	const char *reason;
	char name[48];
	uint64_t end = 0;
	size_t i, k;
	int have_end = 0;

	if (n == 0 || n > IDS_CLAIM_MAX)
		return fail(why, size, SUBMIT_INVALID, "%zu tasks in one "
		    "submission (1 to %u)", n, IDS_CLAIM_MAX);
	/* refuse before claiming, so a refused submission uses no ID */
	for (i = 0; i < n; i++) {
		t[i].id = 0;
		if (!(flags & SUBMIT_VALIDATED) &&
		    task_validate(&t[i], &reason) < 0)
			return fail(why, size, SUBMIT_INVALID, "task %zu: %s",
			    i + 1, reason);
		if (t[i].nafter && !have_end) {
			if (ids_end(sp, 0, &end) < 0)
				return fail(why, size, SUBMIT_ERROR, "read: "
				    "%s/ids: %s", sp->shown, strerror(errno));
			have_end = 1;
		}
		for (k = 0; k < t[i].nafter; k++)
			if (t[i].after[k] >= end)
				return fail(why, size, SUBMIT_INVALID, "after: no "
				    "such task: %" PRIu64, t[i].after[k]);
		for (k = 0; k < t[i].nafter_item; k++)
			if (t[i].after_item[k].item >= i)
				return fail(why, size, SUBMIT_INVALID, "task %zu: "
				    "after: task %zu of the submission is not "
				    "before it", i + 1,
				    (size_t)t[i].after_item[k].item + 1);
	}
	if (ids_claim(sp, (uint32_t)n, &c) < 0)
		return fail(why, size, SUBMIT_ERROR, "claim %zu task IDs: %s/%s: "
		    "%s", n, sp->shown, c.where, strerror(errno));
	bundle_begin(&b, c.start, (uint32_t)n, c.nonce);
	for (i = 0; i < n; i++) {
		t[i].id = c.start + i;
		task_after_items(&t[i], c.start);
		bundle_add(&b, &t[i]);
	}
	snprintf(name, sizeof name, "%" PRIu64 "%s", c.start, BUNDLE_SUFFIX);
	if (fsop_publish(sp->fd[SD_TMP], sp->fd[SD_INCOMING], name, b.p, b.len,
	    0600, FSOP_DURABLE) < 0) {
		buf_free(&b);
		return fail(why, size, SUBMIT_ERROR, "write: %s/incoming/%s: %s",
		    sp->shown, name, strerror(errno));
	}
	buf_free(&b);
	if (fsop_fsync_dir(sp->fd[SD_INCOMING], sp->rootfd,
	    spool_dir_name[SD_INCOMING]) < 0)
		return fail(why, size, SUBMIT_ERROR, "fsync: %s/incoming: %s "
		    "(tasks %" PRIu64 "-%" PRIu64 " are there, not flushed: "
		    "they may run all the same)", sp->shown, strerror(errno),
		    c.start, c.start + n - 1);
	return 0;
}

/*
 * jobrec.c - see jobrec.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsop.h"
#include "jobrec.h"
#include "rec.h"

#define JOBREC_MAX	8192

const char *const jstate_name[JS_NSTATES] = {
	"pending", "running", "gone", "failed",
};

void
jobrec_encode(struct buf *b, const struct jobrec *j)
{
	rec_put_word(b, "id", j->id);
	rec_put_word(b, "kind", j->kind);
	rec_put_word(b, "backend", j->backend);
	rec_put_double(b, "submitted", j->submitted, 3);
	rec_put_word(b, "state", jstate_name[j->state]);
	if (j->reason[0])
		rec_put_str(b, "reason", j->reason);
	if (j->had_worker)
		rec_put_uint(b, "worker", 1);
	if (j->host[0])
		rec_put_word(b, "host", j->host);
	if (j->boot[0])
		rec_put_word(b, "boot", j->boot);
	if (j->pstart)
		rec_put_uint(b, "pstart", j->pstart);
	/* (as written: an idle time under half a millisecond reads back as
	 * 0, no idle time, and must be left out here as it will be then) */
	if (rec_double_read_back(j->idle, 3) > 0)
		rec_put_double(b, "idle", j->idle, 3);
	if (j->why[0])
		rec_put_str(b, "why", j->why);
	if (j->script[0])
		rec_put_str(b, "script", j->script);
}

static void
copy(char *dst, size_t size, const char *data, size_t len, const char *key)
{
	char *v = rec_lookup(data, len, key);

	if (v) {
		snprintf(dst, size, "%s", v);
		free(v);
	}
}

/*
 * A time (submitted, idle) is seconds since the epoch with at most a few
 * decimals: anything else (trailing bytes, an exponent that makes it
 * huge, a negative time) is a forged or damaged record, refused rather
 * than read as something that would not encode back to itself.
 */
static int
time_parse(const char *num, double *out)
{
	char *e;

	errno = 0;
	*out = strtod(num, &e);
	if (errno || e == num || *e || !(*out >= 0 && *out < 1e11))
		return -1;
	return 0;
}

/* A process start time is a plain decimal number, as written. */
static int
pstart_parse(const char *num, uint64_t *out)
{
	char *e;

	if (!isdigit((unsigned char)num[0]))
		return -1;
	errno = 0;
	*out = strtoull(num, &e, 10);
	return errno || *e ? -1 : 0;
}

int
jobrec_decode(const char *data, size_t len, struct jobrec *j)
{
	char state[16] = "", num[64] = "";
	int i;

	memset(j, 0, sizeof *j);
	copy(j->id, sizeof j->id, data, len, "id");
	copy(j->kind, sizeof j->kind, data, len, "kind");
	copy(j->backend, sizeof j->backend, data, len, "backend");
	copy(state, sizeof state, data, len, "state");
	copy(j->reason, sizeof j->reason, data, len, "reason");
	copy(j->host, sizeof j->host, data, len, "host");
	copy(j->why, sizeof j->why, data, len, "why");
	copy(j->script, sizeof j->script, data, len, "script");
	copy(num, sizeof num, data, len, "submitted");
	if (num[0] && time_parse(num, &j->submitted) < 0)
		return -1;
	num[0] = 0;
	copy(num, sizeof num, data, len, "idle");
	if (num[0] && time_parse(num, &j->idle) < 0)
		return -1;
	num[0] = 0;
	copy(num, sizeof num, data, len, "worker");
	j->had_worker = num[0] != 0;
	copy(j->boot, sizeof j->boot, data, len, "boot");
	num[0] = 0;
	copy(num, sizeof num, data, len, "pstart");
	if (num[0] && pstart_parse(num, &j->pstart) < 0)
		return -1;
	if (!jobrec_id_ok(j->id) || j->kind[0] == 0)
		return -1;
	for (i = 0; i < JS_NSTATES; i++)
		if (strcmp(state, jstate_name[i]) == 0) {
			j->state = (enum jstate)i;
			return 0;
		}
	return -1;
}

int
jobrec_read(int dfd, const char *name, struct jobrec *j)
{
	struct buf b = BUF_INIT;
	int rc;

	if (fsop_read_file(dfd, name, JOBREC_MAX, &b, NULL) < 0) {
		buf_free(&b);
		return -1;
	}
	rc = jobrec_decode(b.p ? b.p : "", b.len, j);
	buf_free(&b);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

void
jobrec_base(const char *id, char *out, size_t size)
{
	size_t n = strlen(id);

	if (isdigit((unsigned char)id[0]))
		n = strcspn(id, "_.[");
	snprintf(out, size, "%.*s", (int)n, id);
}

int
jobrec_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n >= JOBREC_ID_MAX || id[0] == '.' || id[0] == '-')
		return 0;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-") == n;
}

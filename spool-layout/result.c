/*
 * result.c - see result.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "result.h"
#include "task.h"

const char *const result_state_name[RS_NSTATES] = {
	"done", "failed", "cancelled", "rejected",
};

const char *const result_reason_name[RR_NREASONS] = {
	"exit", "signal", "memory", "walltime", "cancelled", "worker-lost",
	"dependency", "rejected", "spawn", "disk",
};

void
result_init(struct result *r)
{
	memset(r, 0, sizeof *r);
	r->exit_code = -1;
	r->gpu_util = -1;
}

void
result_free(struct result *r)
{
	free(r->message);
	free(r->worker);
	free(r->host);
	free(r->job);
	free(r->cpus);
	free(r->gpu_ids);
	free(r->memory_method);
	free(r->cpu_method);
	free(r->gpu_method);
	result_init(r);
}

void
result_encode(struct buf *b, const struct result *r)
{
	/*
	 * The times as they read back: the wall time is the difference of
	 * the start and end written, so that a record read and written again
	 * says the same (rounding the difference of the unrounded times could
	 * differ from it by a millisecond).
	 */
	double start = rec_double_read_back(r->start, 3),
	    end = rec_double_read_back(r->end, 3);

	rec_put_uint(b, "id", r->id);
	rec_put_uint(b, "attempt", r->attempt);
	rec_put_word(b, "state", result_state_name[r->state]);
	rec_put_word(b, "reason", result_reason_name[r->reason]);
	if (r->exit_code >= 0)
		rec_put_int(b, "exit", r->exit_code);
	if (r->signal)
		rec_put_int(b, "signal", r->signal);
	if (r->message)
		rec_put_str(b, "message", r->message);
	if (r->worker)
		rec_put_word(b, "worker", r->worker);
	if (r->host)
		rec_put_word(b, "host", r->host);
	if (r->job)
		rec_put_word(b, "job", r->job);
	/* (as written: a start or end under half a millisecond reads back
	 * as 0, and must be left out here as it will be then) */
	if (start > 0) {
		rec_put_double(b, "start", r->start, 3);
		rec_put_double(b, "end", r->end, 3);
		rec_put_double(b, "wall", end - start, 3);
		rec_put_double(b, "utime", r->utime, 3);
		rec_put_double(b, "stime", r->stime, 3);
		rec_put_uint(b, "maxrss", r->maxrss);
	} else if (end > 0)
		rec_put_double(b, "end", r->end, 3);
	if (r->memory_peak)
		rec_put_uint(b, "memory_peak", r->memory_peak);
	if (r->memory_limit)
		rec_put_uint(b, "memory_limit", r->memory_limit);
	if (r->memory_method)
		rec_put_word(b, "memory_method", r->memory_method);
	if (r->cores)
		rec_put_uint(b, "cores", r->cores);
	if (r->cpus)
		rec_put_str(b, "cpus", r->cpus);
	if (r->cpu_method)
		rec_put_word(b, "cpu_method", r->cpu_method);
	if (r->gpu_method)
		rec_put_word(b, "gpu_method", r->gpu_method);
	if (r->gpus) {
		rec_put_uint(b, "gpus", r->gpus);
		if (r->gpu_ids)
			rec_put_str(b, "gpu_ids", r->gpu_ids);
		if (r->gpu_util >= 0) {
			rec_put_double(b, "gpu_util", r->gpu_util, 1);
			rec_put_uint(b, "gpu_memory_peak", r->gpu_memory_peak);
		}
	}
}

static int
lookup(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

int
result_decode(const char *data, size_t len, struct result *r, const char **why)
{
	struct rec_reader rd;
	struct rec_field f;
	uint64_t u;
	int64_t s;
	char *str;
	int rc, k, have = 0;

	result_init(r);
	rec_reader_init(&rd, data, len);
	while ((rc = rec_next(&rd, &f)) > 0) {
		if (rec_key_is(&f, "id")) {
			if (rec_get_uint(&rd, &f, TASK_ID_MAX, &r->id) < 0)
				goto fail;
			have |= 1;
		} else if (rec_key_is(&f, "attempt")) {
			if (rec_get_uint(&rd, &f, UINT32_MAX, &u) < 0)
				goto fail;
			r->attempt = (uint32_t)u;
		} else if (rec_key_is(&f, "state") || rec_key_is(&f, "reason")) {
			int is_state = rec_key_is(&f, "state");

			if (rec_get_str(&rd, &f, &str) < 0)
				goto fail;
			k = is_state ? lookup(result_state_name, RS_NSTATES, str) :
			    lookup(result_reason_name, RR_NREASONS, str);
			free(str);
			if (k < 0) {
				rd.why = is_state ? "unknown state" :
				    "unknown reason";
				goto fail;
			}
			if (is_state) {
				r->state = (enum result_state)k;
				have |= 2;
			} else
				r->reason = (enum result_reason)k;
		} else if (rec_key_is(&f, "exit")) {
			if (rec_get_int(&rd, &f, 0, 255, &s) < 0)
				goto fail;
			r->exit_code = (int)s;
		} else if (rec_key_is(&f, "signal")) {
			if (rec_get_int(&rd, &f, 1, 128, &s) < 0)
				goto fail;
			r->signal = (int)s;
		} else if (rec_key_is(&f, "cores") || rec_key_is(&f, "gpus")) {
			if (rec_get_uint(&rd, &f, 1u << 20, &u) < 0)
				goto fail;
			if (rec_key_is(&f, "cores"))
				r->cores = (uint32_t)u;
			else
				r->gpus = (uint32_t)u;
		} else if (rec_key_is(&f, "maxrss") ||
		    rec_key_is(&f, "memory_peak") ||
		    rec_key_is(&f, "memory_limit") ||
		    rec_key_is(&f, "gpu_memory_peak")) {
			uint64_t *v = rec_key_is(&f, "maxrss") ? &r->maxrss :
			    rec_key_is(&f, "memory_peak") ? &r->memory_peak :
			    rec_key_is(&f, "memory_limit") ? &r->memory_limit :
			    &r->gpu_memory_peak;

			if (rec_get_uint(&rd, &f, UINT64_MAX, v) < 0)
				goto fail;
		} else if (rec_key_is(&f, "start") || rec_key_is(&f, "end") ||
		    rec_key_is(&f, "utime") || rec_key_is(&f, "stime") ||
		    rec_key_is(&f, "gpu_util")) {
			double *d = rec_key_is(&f, "start") ? &r->start :
			    rec_key_is(&f, "end") ? &r->end :
			    rec_key_is(&f, "utime") ? &r->utime :
			    rec_key_is(&f, "stime") ? &r->stime : &r->gpu_util;

			if (rec_get_double(&rd, &f, d) < 0)
				goto fail;
		} else {
			char **dst = rec_key_is(&f, "message") ? &r->message :
			    rec_key_is(&f, "worker") ? &r->worker :
			    rec_key_is(&f, "host") ? &r->host :
			    rec_key_is(&f, "job") ? &r->job :
			    rec_key_is(&f, "cpus") ? &r->cpus :
			    rec_key_is(&f, "gpu_ids") ? &r->gpu_ids :
			    rec_key_is(&f, "memory_method") ? &r->memory_method :
			    rec_key_is(&f, "cpu_method") ? &r->cpu_method :
			    rec_key_is(&f, "gpu_method") ? &r->gpu_method :
			    NULL;

			if (dst == NULL)
				continue;	/* a newer field */
			free(*dst);
			*dst = NULL;
			if (rec_get_str(&rd, &f, dst) < 0)
				goto fail;
		}
	}
	if (rc < 0)
		goto fail;
	if (have != 3) {
		rd.why = "result without id or state";
		goto fail;
	}
	return 0;
fail:
	*why = rd.why ? rd.why : "bad result record";
	result_free(r);
	return -1;
}

void
result_how(const struct result *r, char *how, size_t size)
{
	if (r->state == RS_FAILED && r->reason == RR_EXIT)
		snprintf(how, size, "failed (exit %d)", r->exit_code);
	else
		snprintf(how, size, "%s (%s)", result_state_name[r->state],
		    result_reason_name[r->reason]);
}

int
result_exit_status(const struct result *r)
{
	if (r->state == RS_DONE)
		return 0;
	switch (r->reason) {
	case RR_EXIT:
		return r->exit_code > 0 ? r->exit_code : 1;
	case RR_SIGNAL:
		return 128 + r->signal;
	case RR_WALLTIME:
		return 124;
	case RR_MEMORY:
		return 137;
	case RR_CANCELLED:
		return 130;
	case RR_REJECTED:
		return 65;
	case RR_SPAWN:
		return 127;
	default:
		return 75;
	}
}

/*
 * wdir.c - see wdir.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beatfile.h"
#include "fsop.h"
#include "hostinfo.h"
#include "wdir.h"

const char *const wdir_sub_name[WS_NSUB] = {
	"inbox", "running", "done", "returned", "revoked", "cancel", "work",
};

void
winfo_encode(struct buf *b, const struct worker_info *w)
{
	rec_put_str(b, "name", w->name);
	rec_put_word(b, "host", w->host);
	rec_put_word(b, "boot", w->boot);
	rec_put_int(b, "pid", w->pid);
	rec_put_uint(b, "pstart", w->pstart);
	rec_put_word(b, "nonce", w->nonce);
	rec_put_uint(b, "cores", w->cores);
	rec_put_uint(b, "memory", w->memory);
	rec_put_uint(b, "gpus", w->gpus);
	rec_put_uint(b, "slots", w->slots);
	if (w->task_cores)
		rec_put_uint(b, "task_cores", w->task_cores);
	if (w->cpus[0])
		rec_put_str(b, "cpus", w->cpus);
	if (w->gpu_ids[0])
		rec_put_str(b, "gpu_ids", w->gpu_ids);
	if (w->memory_method[0])
		rec_put_word(b, "memory_method", w->memory_method);
	if (w->cpu_method[0])
		rec_put_word(b, "cpu_method", w->cpu_method);
	if (w->gpu_method[0])
		rec_put_word(b, "gpu_method", w->gpu_method);
	rec_put_double(b, "started", w->started, 3);
	rec_put_double(b, "ends", w->ends, 3);
	if (w->job[0])
		rec_put_word(b, "job", w->job);
	rec_put_word(b, "backend", w->backend[0] ? w->backend : "local");
}

static void
copy_str(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s);
}

int
winfo_read(int dfd, const char *name, struct worker_info *w)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	uint64_t u;
	int64_t s;
	char *str;
	int rc;

	memset(w, 0, sizeof *w);
	if (fsop_read_file(dfd, name, 65536, &b, NULL) < 0)
		return -1;
	rec_reader_init(&r, b.p, b.len);
	while ((rc = rec_next(&r, &f)) > 0) {
		if (rec_key_is(&f, "pid")) {
			if (rec_get_int(&r, &f, 0, INT32_MAX, &s) == 0)
				w->pid = (long)s;
		} else if (rec_key_is(&f, "cores") || rec_key_is(&f, "gpus") ||
		    rec_key_is(&f, "slots") || rec_key_is(&f, "task_cores")) {
			if (rec_get_uint(&r, &f, 1u << 20, &u) < 0)
				break;
			if (rec_key_is(&f, "cores"))
				w->cores = (uint32_t)u;
			else if (rec_key_is(&f, "gpus"))
				w->gpus = (uint32_t)u;
			else if (rec_key_is(&f, "slots"))
				w->slots = (uint32_t)u;
			else
				w->task_cores = (uint32_t)u;
		} else if (rec_key_is(&f, "memory")) {
			(void)rec_get_uint(&r, &f, UINT64_MAX, &w->memory);
		} else if (rec_key_is(&f, "pstart")) {
			(void)rec_get_uint(&r, &f, UINT64_MAX, &w->pstart);
		} else if (rec_key_is(&f, "started")) {
			(void)rec_get_double(&r, &f, &w->started);
		} else if (rec_key_is(&f, "ends")) {
			(void)rec_get_double(&r, &f, &w->ends);
		} else if (rec_get_str(&r, &f, &str) == 0) {
			if (rec_key_is(&f, "name"))
				copy_str(w->name, sizeof w->name, str);
			else if (rec_key_is(&f, "host"))
				copy_str(w->host, sizeof w->host, str);
			else if (rec_key_is(&f, "boot"))
				copy_str(w->boot, sizeof w->boot, str);
			else if (rec_key_is(&f, "nonce"))
				copy_str(w->nonce, sizeof w->nonce, str);
			else if (rec_key_is(&f, "job"))
				copy_str(w->job, sizeof w->job, str);
			else if (rec_key_is(&f, "backend"))
				copy_str(w->backend, sizeof w->backend, str);
			else if (rec_key_is(&f, "cpus"))
				copy_str(w->cpus, sizeof w->cpus, str);
			else if (rec_key_is(&f, "gpu_ids"))
				copy_str(w->gpu_ids, sizeof w->gpu_ids, str);
			else if (rec_key_is(&f, "memory_method"))
				copy_str(w->memory_method,
				    sizeof w->memory_method, str);
			else if (rec_key_is(&f, "cpu_method"))
				copy_str(w->cpu_method, sizeof w->cpu_method,
				    str);
			else if (rec_key_is(&f, "gpu_method"))
				copy_str(w->gpu_method, sizeof w->gpu_method,
				    str);
			free(str);
		}
	}
	buf_free(&b);
	if (rc < 0 || w->host[0] == 0 || w->cores == 0) {
		errno = EINVAL;
		return -1;
	}
	if (w->slots == 0)
		w->slots = w->cores;
	return 0;
}

void
wstatus_encode(struct buf *b, const struct worker_status *s)
{
	rec_put_uint(b, "beat", s->beat);
	rec_put_double(b, "time", s->time, 3);
	rec_put_uint(b, "running", s->running);
	rec_put_uint(b, "cores_used", s->cores_used);
	rec_put_uint(b, "memory_used", s->memory_used);
	rec_put_uint(b, "gpus_used", s->gpus_used);
	if (s->gpus_held)
		rec_put_uint(b, "gpus_held", s->gpus_held);
	rec_put_uint(b, "draining", (uint64_t)s->draining);
	if (s->late)
		rec_put_uint(b, "late", s->late);
	if (s->npgroups) {
		uint64_t flat[2 * WDIR_PGROUPS_MAX];
		size_t i;

		for (i = 0; i < s->npgroups; i++) {
			flat[2 * i] = s->pgroup[i][0];
			flat[2 * i + 1] = s->pgroup[i][1];
		}
		rec_put_idv(b, "pgroups", flat, 2 * s->npgroups);
	}
	if (s->nmem) {
		uint64_t flat[3 * WDIR_TASKMEM_MAX];
		size_t i;

		for (i = 0; i < s->nmem; i++) {
			flat[3 * i] = s->mem[i][0];
			flat[3 * i + 1] = s->mem[i][1];
			flat[3 * i + 2] = s->mem[i][2];
		}
		rec_put_idv(b, "memory_in_use", flat, 3 * s->nmem);
	}
}

int
wstatus_read(int dfd, const char *name, struct worker_status *s)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	uint64_t u;
	int rc;

	memset(s, 0, sizeof *s);
	if (beatfile_read(dfd, name, WSTATUS_BYTES_MAX, &b) < 0)
		return -1;
	rec_reader_init(&r, b.p, b.len);
	while ((rc = rec_next(&r, &f)) > 0) {
		if (rec_key_is(&f, "time")) {
			(void)rec_get_double(&r, &f, &s->time);
			continue;
		}
		if (rec_key_is(&f, "pgroups")) {
			uint64_t *v = NULL;
			size_t n = 0, i;

			if (rec_get_idv(&r, &f, &v, &n) == 0)
				for (i = 0; i + 1 < n &&
				    s->npgroups < WDIR_PGROUPS_MAX; i += 2) {
					s->pgroup[s->npgroups][0] = v[i];
					s->pgroup[s->npgroups++][1] = v[i + 1];
				}
			free(v);
			continue;
		}
		if (rec_key_is(&f, "memory_in_use")) {
			uint64_t *v = NULL;
			size_t n = 0, i;

			if (rec_get_idv(&r, &f, &v, &n) == 0)
				for (i = 0; i + 2 < n &&
				    s->nmem < WDIR_TASKMEM_MAX; i += 3) {
					s->mem[s->nmem][0] = v[i];
					s->mem[s->nmem][1] = v[i + 1];
					s->mem[s->nmem++][2] = v[i + 2];
				}
			free(v);
			continue;
		}
		if (rec_get_uint(&r, &f, UINT64_MAX, &u) < 0)
			continue;
		if (rec_key_is(&f, "beat"))
			s->beat = u;
		else if (rec_key_is(&f, "running"))
			s->running = (uint32_t)u;
		else if (rec_key_is(&f, "cores_used"))
			s->cores_used = (uint32_t)u;
		else if (rec_key_is(&f, "memory_used"))
			s->memory_used = u;
		else if (rec_key_is(&f, "gpus_used"))
			s->gpus_used = (uint32_t)u;
		else if (rec_key_is(&f, "gpus_held"))
			s->gpus_held = (uint32_t)u;
		else if (rec_key_is(&f, "draining"))
			s->draining = u != 0;
		else if (rec_key_is(&f, "late"))
			s->late = (uint32_t)u;
	}
	buf_free(&b);
	if (rc < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

const char *const wstate_name[WST_NSTATES] = {
	"up", "gpus-held", "draining", "no-status", "lost", "exited",
};

/* 1 if workers/WID/FILE exists */
static int
wdir_has(int wfd, const char *wid, const char *file)
{
	char path[WDIR_ID_MAX + 16];
	struct stat sb;

	snprintf(path, sizeof path, "%s/%s", wid, file);
	return fsop_stat(wfd, path, &sb) == 0;
}

enum wstate
wstate_read(int wfd, const char *wid, struct worker_status *st)
{
	char path[WDIR_ID_MAX + 16];
	int readable;

	snprintf(path, sizeof path, "%s/status", wid);
	readable = wstatus_read(wfd, path, st) == 0;
	if (!readable)
		memset(st, 0, sizeof *st);
	if (wdir_has(wfd, wid, "exited"))
		return WST_EXITED;
	if (wdir_has(wfd, wid, "lost"))
		return WST_LOST;
	if (!readable)
		return WST_NO_STATUS;
	if (st->draining || wdir_has(wfd, wid, WDIR_DRAIN))
		return WST_DRAINING;
	return st->gpus_held ? WST_GPUS_HELD : WST_UP;
}

void
wdir_aname(uint64_t id, uint32_t attempt, char *out, size_t size)
{
	snprintf(out, size, "%" PRIu64 ".%u", id, attempt);
}

int
wdir_aname_parse(const char *name, uint64_t *id, uint32_t *attempt)
{
	unsigned long long a, b;
	char *end;

	if (name[0] < '1' || name[0] > '9')
		return -1;
	errno = 0;
	a = strtoull(name, &end, 10);
	if (errno || *end != '.' || end[1] < '1' || end[1] > '9')
		return -1;
	b = strtoull(end + 1, &end, 10);
	if (errno || *end || a > TASK_ID_MAX || b > UINT32_MAX)
		return -1;
	*id = a;
	*attempt = (uint32_t)b;
	return 0;
}

int
wdir_create(struct spool *sp, const struct worker_info *w, char *wid,
    size_t widsize)
{
	char tmpname[FSOP_TMPNAME_MAX + 8];
	struct buf b = BUF_INIT;
	unsigned int rnd;
	int dfd = -1, i, saved, tries;

	snprintf(tmpname, sizeof tmpname, "worker.%s", w->nonce);
	if (fsop_mkdir(sp->fd[SD_TMP], tmpname, 0700) < 0)
		return -1;
	if ((dfd = fsop_opendir(sp->fd[SD_TMP], tmpname)) < 0)
		goto fail;
	for (i = 0; i < WS_NSUB; i++)
		if (fsop_mkdir(dfd, wdir_sub_name[i], 0700) < 0)
			goto fail;
	winfo_encode(&b, w);
	if (fsop_publish(sp->fd[SD_TMP], dfd, "info", b.p, b.len, 0600, 0) < 0)
		goto fail;
	for (tries = 0;; tries++) {
		if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
			rnd = (unsigned int)now_ms() ^ (unsigned int)getpid();
		snprintf(wid, widsize, "%s-%06x", w->name, rnd & 0xffffff);
		if (fsop_rename(sp->fd[SD_TMP], tmpname, sp->fd[SD_WORKERS],
		    wid) == 0)
			break;
		if ((errno != EEXIST && errno != ENOTEMPTY) || tries > 16)
			goto fail;
	}
	buf_free(&b);
	return dfd;
fail:
	saved = errno;
	buf_free(&b);
	if (dfd >= 0)
		close(dfd);
	(void)fsop_rmtree(sp->fd[SD_TMP], tmpname);
	errno = saved;
	return -1;
}

/*
 * A spec with an assignment's keys (attempt; worker and placed, which
 * say where it went): a key of neither is refused if strict, else
 * passed over (an assignment of a later version).  0, or -1 with *why
 * and *line (t freed).
 */
static int
spec_decode(const char *data, size_t len, struct task_spec *t,
    uint32_t *attempt, const char **why, int *line, int strict)
{
	struct rec_reader r;
	struct rec_field f;
	uint64_t u;
	int rc;

	task_init(t);
	*attempt = 0;
	rec_reader_init(&r, data, len);
	while ((rc = rec_next(&r, &f)) > 0) {
		rc = task_decode_field(&r, &f, t);
		if (rc < 0)
			break;
		if (rc > 0 || rec_key_is(&f, "worker") ||
		    rec_key_is(&f, "placed"))
			continue;
		if (rec_key_is(&f, "attempt")) {
			if ((rc = rec_get_uint(&r, &f, UINT32_MAX, &u)) < 0)
				break;
			*attempt = (uint32_t)u;
		} else if (strict) {
			r.why = "unknown key";
			r.errline = f.line;
			rc = -1;
			break;
		}
	}
	if (rc == 0)
		return 0;
	*why = r.why ? r.why : "bad record";
	*line = r.errline;
	task_free(t);
	return -1;
}

int
final_spec_decode(const char *data, size_t len, struct task_spec *t,
    uint32_t *attempt, const char **why, int *line)
{
	return spec_decode(data, len, t, attempt, why, line, 1);
}

void
assign_encode(struct buf *b, const struct task_spec *t, uint32_t attempt,
    const char *wid)
{
	task_encode(b, t);
	rec_put_uint(b, "attempt", attempt);
	rec_put_word(b, "worker", wid);
	rec_put_double(b, "placed", now_unix(), 3);
}

int
assign_decode(const char *data, size_t len, struct task_spec *t,
    uint32_t *attempt, const char **why)
{
	int line;

	if (spec_decode(data, len, t, attempt, why, &line, 0) < 0)
		return -1;
	if (*attempt == 0 || t->id == 0) {
		*why = "assignment without id or attempt";
		task_free(t);
		return -1;
	}
	if (task_validate(t, why) < 0) {
		task_free(t);
		return -1;
	}
	return 0;
}

/*
 * config.c - spool.yaml; see config.h.  Keys are tables: name, kind of
 * value, where it goes.  The cluster section is parsed into a base kind;
 * each entry under "kinds" starts as a copy of it and overrides keys.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "fsop.h"
#include "msg.h"
#include "rec.h"
#include "task.h"
#include "units.h"
#include "wdir.h"
#include "yamlx.h"

#define CONFIG_MAX (256u << 10)

const char *const backend_name[BK_NBACKENDS] = {
	"local", "slurm", "sge", "pbs", "lsf",
};

int
backend_parse(const char *s, enum backend *b)
{
	int i;

	for (i = 0; i < BK_NBACKENDS; i++)
		if (strcmp(s, backend_name[i]) == 0) {
			*b = (enum backend)i;
			return 0;
		}
	return -1;
}

const char *const limit_key[LIMIT_N] = {
	"memory-limit", "cpu-limit", "gpu-limit",
};

/* each kind's methods, "auto" first: ckworker(1) says what they do */
static const char *const limit_methods[LIMIT_N][7] = {
	{ "auto", "cgroup", "cgroup2", "cgroup1", "watchdog", "none", NULL },
	{ "auto", "cpuset", "affinity", NULL },
	{ "auto", "devices", "env", NULL },
};

const char *
config_limit_method(enum limit_kind k, const char *v, char *why,
    size_t whysize)
{
	const char *const *m = limit_methods[k];
	size_t i, len;

	for (i = 0; m[i]; i++)
		if (strcmp(m[i], v) == 0)
			return m[i];
	snprintf(why, whysize, "use");
	for (i = 0; m[i]; i++) {
		len = strlen(why);
		snprintf(why + len, whysize - len, "%s %s", i == 0 ? "" :
		    m[i + 1] ? "," : " or", m[i]);
	}
	return NULL;
}

static void
kind_defaults(struct kind *k)
{
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "default");
	k->backend = BK_LOCAL;
	k->cores = 1;
	k->processes = 1;
	k->walltime = 3600;
	k->death_timeout_ms = 60000;
	k->idle_timeout_ms = 300000;
	k->job_array = 1;
	k->export_env = 1;	/* as sbatch does; SGE users need -V */
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void
kind_copy(struct kind *d, const struct kind *s)
{
	*d = *s;
	d->job_name = dup_or_null(s->job_name);
	d->queue = dup_or_null(s->queue);
	d->account = dup_or_null(s->account);
	d->resource_spec = dup_or_null(s->resource_spec);
	d->pe = dup_or_null(s->pe);
	d->extra = strv_dup(s->extra);
	d->skip = strv_dup(s->skip);
	d->prologue = strv_dup(s->prologue);
	d->local_dir = dup_or_null(s->local_dir);
	d->log_dir = dup_or_null(s->log_dir);
	d->env = strv_dup(s->env);
	d->shebang = dup_or_null(s->shebang);
}

static void
kind_free(struct kind *k)
{
	free(k->job_name);
	free(k->queue);
	free(k->account);
	free(k->resource_spec);
	free(k->pe);
	strv_free(k->extra);
	strv_free(k->skip);
	strv_free(k->prologue);
	free(k->local_dir);
	free(k->log_dir);
	strv_free(k->env);
	free(k->shebang);
	memset(k, 0, sizeof *k);
}

void
config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	c->fsync = 1;
	c->heartbeat_ms = 2000;
	c->lost_timeout_ms = 30000;
	c->death_timeout_ms = 60000;
	c->rescan_ms = 1000;
	c->settle_ms = 2000;
	c->max_requeues = 3;
	c->journal_bytes = 256ull << 20;
	c->poll_ms = 10000;
	c->max_submit_failures = 5;
	c->scale_down_ms = 60000;
}

void
config_free(struct config *c)
{
	size_t i;

	for (i = 0; i < c->nkinds; i++)
		kind_free(&c->kinds[i]);
	free(c->kinds);
	c->kinds = NULL;
	c->nkinds = 0;
}

const struct kind *
config_kind(const struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nkinds; i++)
		if (name == NULL || strcmp(c->kinds[i].name, name) == 0)
			return &c->kinds[i];
	return NULL;
}

uint64_t
config_death_timeout_least(const struct config *c)
{
	return 2 * c->heartbeat_ms + BEAT_LATE_MS;
}

void
config_warn_death_timeouts(const struct config *c)
{
	uint64_t least = config_death_timeout_least(c);
	size_t i;

	if (c->death_timeout_ms && c->death_timeout_ms < least)
		msg_warn("spool.yaml: daemon: death-timeout %" PRIu64 " ms is "
		    "under twice the heartbeat plus %d ms (%" PRIu64 " ms): "
		    "workers given it will leave while spoold is well",
		    c->death_timeout_ms, BEAT_LATE_MS, least);
	for (i = 0; c->have_cluster && i < c->nkinds; i++)
		if (c->kinds[i].death_timeout_ms &&
		    c->kinds[i].death_timeout_ms < least)
			msg_warn("spool.yaml: cluster kind %s: death-timeout "
			    "%" PRIu64 " ms is under twice the heartbeat plus "
			    "%d ms (%" PRIu64 " ms): its workers will leave "
			    "while spoold is well", c->kinds[i].name,
			    c->kinds[i].death_timeout_ms, BEAT_LATE_MS, least);
}

/* ---- values ---- */

enum vkind { V_BOOL, V_MS, V_UINT, V_SIZE, V_SECONDS, V_STR, V_STRV, V_ENV,
	V_BACKEND, V_CORES, V_LIMIT };

struct key {
	const char *name;
	enum vkind kind;
	size_t	off;
	uint64_t min, max;	/* V_LIMIT: min is the enum limit_kind */
	const char *alias_of;	/* documentation: the dask-jobqueue name */
};

static int
cerr(char *why, size_t size, const struct ynode *n, const char *key,
    const char *msg)
{
	if (key)
		snprintf(why, size, "%s: line %d, column %d: key \"%s\": %s",
		    CONFIG_FILE, n ? n->line : 0, n ? n->col : 0, key, msg);
	else
		snprintf(why, size, "%s: line %d, column %d: %s", CONFIG_FILE,
		    n ? n->line : 0, n ? n->col : 0, msg);
	return -1;
}

static int
parse_bool(const char *s, int *v)
{
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")) {
		*v = 1;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")) {
		*v = 0;
		return 0;
	}
	return -1;
}

static int
text_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t')
			return 0;
	return 1;
}

/* A list of strings; a single string counts as a list of one. */
static int
get_strv(const struct ynode *v, char ***out, const char *key, char *why,
    size_t size)
{
	char **l = NULL;
	size_t i;

	if (v->type == Y_SCALAR) {
		if (yamlx_is_null(v)) {
			*out = NULL;
			return 0;
		}
		if (!text_ok(v->str))
			return cerr(why, size, v, key, "control characters in "
			    "value");
		l = strv_push(NULL, v->str);
	} else if (v->type == Y_SEQ) {
		l = xcalloc(1, sizeof *l);
		for (i = 0; i < v->n; i++) {
			if (v->kids[i]->type != Y_SCALAR ||
			    !text_ok(v->kids[i]->str)) {
				strv_free(l);
				return cerr(why, size, v->kids[i], key, "list "
				    "items must be single-line strings");
			}
			l = strv_push(l, v->kids[i]->str);
		}
	} else
		return cerr(why, size, v, key, "expected a list of strings");
	*out = l;
	return 0;
}

static int
get_env(const struct ynode *v, char ***out, const char *key, char *why,
    size_t size)
{
	struct task_spec t;
	const char *reason;
	size_t i;
	char *kv;

	task_init(&t);
	if (v->type == Y_MAP) {
		for (i = 0; i < v->n; i++) {
			const struct ynode *k = v->kids[2 * i], *x = v->kids[2 * i + 1];

			if (x->type != Y_SCALAR) {
				task_free(&t);
				return cerr(why, size, x, key, "values must be "
				    "strings");
			}
			kv = xasprintf("%s=%s", k->str, yamlx_is_null(x) ? "" :
			    x->str);
			if (task_set(&t, "env", kv, &reason) < 0) {
				free(kv);
				task_free(&t);
				return cerr(why, size, k, key, reason);
			}
			free(kv);
		}
	} else {
		char **l = NULL;

		if (get_strv(v, &l, key, why, size) < 0)
			return -1;
		/* the same checks as a mapping's: each NAME goes into
		 * the job script as "export NAME=" */
		for (i = 0; l && l[i]; i++)
			if (task_set(&t, "env", l[i], &reason) < 0) {
				cerr(why, size, v->type == Y_SEQ ?
				    v->kids[i] : v, key, reason);
				strv_free(l);
				task_free(&t);
				return -1;
			}
		strv_free(l);
	}
	*out = t.env;
	t.env = NULL;
	task_free(&t);
	return 0;
}

/* A bound as the file may write it: "10ms", "1h", "1M", "4096". */
static void
bound_text(const struct key *k, uint64_t v, char *out, size_t size)
{
	static const struct {
		uint64_t ms;
		const char *unit;
	} u[] = {
		{ 86400000, "d" }, { 3600000, "h" }, { 60000, "m" },
		{ 1000, "s" },
	};
	size_t i;

	if (k->kind == V_SIZE) {
		units_format_size(v, out, size);
		return;
	}
	if (k->kind == V_SECONDS)
		v *= 1000;
	else if (k->kind != V_MS) {
		snprintf(out, size, "%" PRIu64, v);
		return;
	}
	for (i = 0; i < sizeof u / sizeof u[0]; i++)
		if (v != 0 && v % u[i].ms == 0) {
			snprintf(out, size, "%" PRIu64 "%s", v / u[i].ms,
			    u[i].unit);
			return;
		}
	snprintf(out, size, v ? "%" PRIu64 "ms" : "%" PRIu64, v);
}

static int
set_value(void *base, const struct key *k, const struct ynode *v, char *why,
    size_t size)
{
	void *p = (char *)base + k->off;
	const char *reason;
	char msg[128];
	uint64_t u;
	int b;

	switch (k->kind) {
	case V_STRV:
		strv_free(*(char ***)p);
		*(char ***)p = NULL;
		return get_strv(v, (char ***)p, k->name, why, size);
	case V_ENV:
		strv_free(*(char ***)p);
		*(char ***)p = NULL;
		return get_env(v, (char ***)p, k->name, why, size);
	default:
		break;
	}
	if (v->type != Y_SCALAR)
		return cerr(why, size, v, k->name, "expected a single value");
	if (yamlx_is_null(v)) {
		if (k->kind == V_STR) {
			free(*(char **)p);
			*(char **)p = NULL;
			return 0;
		}
		return cerr(why, size, v, k->name, "expected a single value");
	}
	switch (k->kind) {
	case V_BOOL:
		if (parse_bool(v->str, &b) < 0)
			return cerr(why, size, v, k->name, "expected true or false");
		*(int *)p = b;
		return 0;
	case V_STR:
		if (!text_ok(v->str) || strlen(v->str) > 4096)
			return cerr(why, size, v, k->name, "expected one line of "
			    "text");
		free(*(char **)p);
		*(char **)p = xstrdup(v->str);
		return 0;
	case V_LIMIT:
		if ((*(const char **)p = config_limit_method(
		    (enum limit_kind)k->min, v->str, msg, sizeof msg)) == NULL)
			return cerr(why, size, v, k->name, msg);
		return 0;
	case V_BACKEND:
		if (backend_parse(v->str, (enum backend *)p) < 0)
			return cerr(why, size, v, k->name, "unknown backend (use "
			    "local, slurm, sge, pbs or lsf)");
		return 0;
	case V_MS:
		if (units_parse_ms(v->str, &u, &reason) < 0)
			return cerr(why, size, v, k->name, reason);
		break;
	case V_SECONDS:
		if (units_parse_duration(v->str, &u, &reason) < 0)
			return cerr(why, size, v, k->name, reason);
		break;
	case V_SIZE:
		if (units_parse_size(v->str, &u, &reason) < 0)
			return cerr(why, size, v, k->name, reason);
		break;
	case V_UINT:
	case V_CORES:
		/* (above max: out of range, with the range, below) */
		if (units_parse_uint(v->str, UINT64_MAX, &u, &reason) < 0)
			return cerr(why, size, v, k->name, reason);
		break;
	default:
		return cerr(why, size, v, k->name, "internal: bad key kind");
	}
	if (u < k->min || u > k->max) {
		char lo[32], hi[32];

		bound_text(k, k->min, lo, sizeof lo);
		bound_text(k, k->max, hi, sizeof hi);
		snprintf(msg, sizeof msg, "value out of range (%s to %s)", lo,
		    hi);
		return cerr(why, size, v, k->name, msg);
	}
	if (k->kind == V_UINT || k->kind == V_CORES)
		*(uint32_t *)p = (uint32_t)u;
	else
		*(uint64_t *)p = u;
	return 0;
}

static const struct key daemon_keys[] = {
	{ "fsync", V_BOOL, offsetof(struct config, fsync), 0, 1, NULL },
	{ "heartbeat", V_MS, offsetof(struct config, heartbeat_ms), 10,
	    3600000, NULL },
	{ "lost-timeout", V_MS, offsetof(struct config, lost_timeout_ms), 100,
	    86400000, NULL },
	{ "death-timeout", V_MS, offsetof(struct config, death_timeout_ms),
	    100, 86400000, NULL },
	{ "rescan", V_MS, offsetof(struct config, rescan_ms), 10, 600000, NULL },
	{ "settle", V_MS, offsetof(struct config, settle_ms), 0, 600000, NULL },
	{ "max-requeues", V_UINT, offsetof(struct config, max_requeues), 0,
	    100, NULL },
	{ "shared", V_BOOL, offsetof(struct config, shared), 0, 1, NULL },
	{ "journal-size", V_SIZE, offsetof(struct config, journal_bytes),
	    1ull << 20, 1ull << 40, NULL },
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};

/* the limit methods, array a of type t: worker: and each kind */
#define LIMIT_KEYS(t, a) \
	{ "memory-limit", V_LIMIT, offsetof(t, a[LIMIT_MEMORY]), \
	    LIMIT_MEMORY, 0, NULL }, \
	{ "cpu-limit", V_LIMIT, offsetof(t, a[LIMIT_CPU]), LIMIT_CPU, 0, \
	    NULL }, \
	{ "gpu-limit", V_LIMIT, offsetof(t, a[LIMIT_GPU]), LIMIT_GPU, 0, NULL }

static const struct key worker_keys[] = {
	LIMIT_KEYS(struct config, worker_limit),
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};

#define KO(f) offsetof(struct kind, f)
static const struct key kind_keys[] = {
	{ "backend", V_BACKEND, KO(backend), 0, 0, NULL },
	{ "name", V_STR, KO(job_name), 0, 0, NULL },
	{ "cores", V_CORES, KO(cores), 1, TASK_CORES_MAX, NULL },
	{ "processes", V_CORES, KO(processes), 1, TASK_CORES_MAX, NULL },
	{ "memory", V_SIZE, KO(memory), 0, TASK_MEMORY_MAX, NULL },
	{ "gpus", V_UINT, KO(gpus), 0, TASK_GPUS_MAX, NULL },
	{ "walltime", V_SECONDS, KO(walltime), 0, TASK_WALLTIME_MAX, NULL },
	{ "queue", V_STR, KO(queue), 0, 0, NULL },
	{ "account", V_STR, KO(account), 0, 0, NULL },
	{ "project", V_STR, KO(account), 0, 0, "account" },
	{ "resource-spec", V_STR, KO(resource_spec), 0, 0, NULL },
	{ "parallel-environment", V_STR, KO(pe), 0, 0, NULL },
	{ "job-extra-directives", V_STRV, KO(extra), 0, 0, NULL },
	{ "job-extra", V_STRV, KO(extra), 0, 0, "job-extra-directives" },
	{ "job-directives-skip", V_STRV, KO(skip), 0, 0, NULL },
	{ "job-script-prologue", V_STRV, KO(prologue), 0, 0, NULL },
	{ "env-extra", V_STRV, KO(prologue), 0, 0, "job-script-prologue" },
	{ "local-directory", V_STR, KO(local_dir), 0, 0, NULL },
	{ "log-directory", V_STR, KO(log_dir), 0, 0, NULL },
	{ "env", V_ENV, KO(env), 0, 0, NULL },
	{ "export-env", V_BOOL, KO(export_env), 0, 1, NULL },
	{ "death-timeout", V_MS, KO(death_timeout_ms), 0, 86400000, NULL },
	{ "idle-timeout", V_MS, KO(idle_timeout_ms), 0, 86400000ULL * 365,
	    NULL },
	{ "job-array", V_BOOL, KO(job_array), 0, 1, NULL },
	{ "shebang", V_STR, KO(shebang), 0, 0, NULL },
	LIMIT_KEYS(struct kind, limit),
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};
#undef KO
#undef LIMIT_KEYS

static const struct key cluster_keys[] = {
	{ "poll-interval", V_MS, offsetof(struct config, poll_ms), 100,
	    3600000, NULL },
	{ "max-submit-failures", V_UINT,
	    offsetof(struct config, max_submit_failures), 1, 1000, NULL },
	{ "scale-down-delay", V_MS, offsetof(struct config, scale_down_ms), 0,
	    86400000, NULL },
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};

/*
 * ---- what a reload changes ----
 *
 * config_diff compares the keys of the tables above, so a key added to
 * one is compared too: taken by a reload and named, unless it is added
 * to restart_keys here (or is a kind's backend).
 */

static const char *const restart_keys[] = {
	"heartbeat", "lost-timeout", "death-timeout", "fsync", "shared", NULL
};

static int
str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int
strv_same(char *const *a, char *const *b)
{
	size_t i;

	if (strv_len(a) != strv_len(b))
		return 0;
	for (i = 0; a && a[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

/* k's value the same in the structures at a and b */
static int
same_value(const struct key *k, const void *a, const void *b)
{
	const void *p = (const char *)a + k->off, *q = (const char *)b + k->off;

	switch (k->kind) {
	case V_BOOL:
		return *(const int *)p == *(const int *)q;
	case V_UINT:
	case V_CORES:
		return *(const uint32_t *)p == *(const uint32_t *)q;
	case V_MS:
	case V_SECONDS:
	case V_SIZE:
		return *(const uint64_t *)p == *(const uint64_t *)q;
	case V_STR:
		return str_same(*(char *const *)p, *(char *const *)q);
	case V_LIMIT:
		return str_same(*(const char *const *)p,
		    *(const char *const *)q);
	case V_STRV:
	case V_ENV:
		return strv_same(*(char **const *)p, *(char **const *)q);
	case V_BACKEND:
		return *(const enum backend *)p == *(const enum backend *)q;
	}
	return 0;
}

static int
is_restart_key(const char *name)
{
	size_t i;

	for (i = 0; restart_keys[i]; i++)
		if (strcmp(restart_keys[i], name) == 0)
			return 1;
	return 0;
}

static void
changed_key(struct buf *out, const char *section, const char *key)
{
	if (out->len)
		buf_puts(out, ", ");
	buf_printf(out, "%s: %s", section, key);
}

/* every key of t the same in the structures at a and b */
static int
all_same(const struct key *t, const void *a, const void *b)
{
	for (; t->name; t++)
		if (!same_value(t, a, b))
			return 0;
	return 1;
}

const char *
config_diff(const struct config *a, const struct config *b,
    struct buf *changed)
{
	const struct key *k;
	size_t i;

	buf_reset(changed);
	for (k = daemon_keys; k->name; k++)
		if (is_restart_key(k->name) && !same_value(k, a, b)) {
			changed_key(changed, "daemon", k->name);
			return changed->p;
		}
	if (a->have_cluster != b->have_cluster || a->nkinds != b->nkinds)
		return "cluster: its kinds";
	for (i = 0; i < a->nkinds; i++)
		if (strcmp(a->kinds[i].name, b->kinds[i].name) != 0 ||
		    a->kinds[i].backend != b->kinds[i].backend)
			return "cluster: its kinds";
	for (k = daemon_keys; k->name; k++)
		if (!is_restart_key(k->name) && !same_value(k, a, b))
			changed_key(changed, "daemon", k->name);
	for (k = cluster_keys; k->name; k++)
		if (!same_value(k, a, b))
			changed_key(changed, "cluster", k->name);
	for (i = 0; i < a->nkinds; i++)
		if (!all_same(kind_keys, &a->kinds[i], &b->kinds[i])) {
			if (changed->len)
				buf_puts(changed, ", ");
			buf_printf(changed, "kind %s", a->kinds[i].name);
		}
	for (k = worker_keys; k->name; k++)
		if (!same_value(k, a, b))
			changed_key(changed, "worker", k->name);
	return NULL;
}

static const struct key *
find_key(const struct key *t, const char *name)
{
	for (; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

int
config_daemon_in_bounds(const char *key, uint64_t v)
{
	const struct key *k = find_key(daemon_keys, key);

	return k && v >= k->min && v <= k->max;
}

/*
 * Key i of map is table's k, one setting under two names ("account"
 * and "project", "job-extra" and "job-extra-directives"): if the map
 * gave it before under its other name, which one holds would be the
 * file's order, unsaid (dask-jobqueue files carry the old names).
 */
static int
other_name_given(const struct key *table, const struct key *k,
    const struct ynode *map, size_t i, char *why, size_t size)
{
	const struct key *o;
	char msg[160];
	size_t j;

	for (j = 0; j < i; j++) {
		o = find_key(table, map->kids[2 * j]->str);
		if (o == NULL || o == k || o->off != k->off)
			continue;
		snprintf(msg, sizeof msg, "another name of \"%s\", given too "
		    "(line %d): give one of them", o->name,
		    map->kids[2 * j]->line);
		return cerr(why, size, map->kids[2 * i], k->name, msg);
	}
	return 0;
}

static int
apply_map(void *base, const struct key *table, const struct ynode *map,
    const char *section, char *why, size_t size, const char *skip1,
    const char *skip2, const char *skip3)
{
	const struct key *k;
	char msg[160];
	size_t i;

	if (yamlx_is_null(map))
		return 0;	/* "section:" with every key commented out */
	if (map->type != Y_MAP) {
		snprintf(msg, sizeof msg, "\"%s\" must be a mapping", section);
		return cerr(why, size, map, NULL, msg);
	}
	for (i = 0; i < map->n; i++) {
		const char *name = map->kids[2 * i]->str;

		if ((skip1 && !strcmp(name, skip1)) ||
		    (skip2 && !strcmp(name, skip2)) ||
		    (skip3 && !strcmp(name, skip3)))
			continue;
		if ((k = find_key(table, name)) == NULL) {
			snprintf(msg, sizeof msg, "unknown key \"%s\" in "
			    "\"%s\" (see spool-layout(5))", name, section);
			return cerr(why, size, map->kids[2 * i], NULL, msg);
		}
		if (other_name_given(table, k, map, i, why, size) < 0 ||
		    set_value(base, k, map->kids[2 * i + 1], why, size) < 0)
			return -1;
	}
	return 0;
}

/*
 * What goes bare into a job directive is 1 to max characters of chars,
 * the first none of not_first.  A blank would split the directive,
 * Slurm ends the line at a "#", a quote or a backslash is read
 * differently by each batch system, a leading "-" reads as an option.
 */
#define WORD_ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789"

static int
bare_ok(const char *s, size_t max, const char *chars, const char *not_first)
{
	size_t n = strlen(s);

	return n > 0 && n <= max && strchr(not_first, s[0]) == NULL &&
	    strspn(s, chars) == n;
}

static int
kind_check(const struct kind *k, const struct ynode *at, char *why,
    size_t size)
{
	const struct {
		const char *key, *value;
	} bare[] = {
		{ "queue", k->queue },
		{ "account", k->account },
		{ "parallel-environment", k->pe },
	};
	char msg[320];
	size_t i;

	if (k->processes > k->cores) {
		snprintf(msg, sizeof msg, "kind \"%s\": processes (%u) is more "
		    "than cores (%u): each process needs a core", k->name,
		    k->processes, k->cores);
		return cerr(why, size, at, NULL, msg);
	}
	/*
	 * A job name goes into -J/-N directives and into the output file
	 * names too, where a "/" names a directory that does not exist
	 * (the job fails without output).
	 */
	if (k->job_name &&
	    !bare_ok(k->job_name, 128, WORD_ALNUM "_.+-", ".-")) {
		snprintf(msg, sizeof msg, "kind \"%s\": name \"%.60s\": a job "
		    "name is 1-128 characters of [A-Za-z0-9_.+-], not starting "
		    "with \".\" or \"-\"", k->name, k->job_name);
		return cerr(why, size, at, NULL, msg);
	}
	/*
	 * A queue, account or parallel environment ("#SBATCH -p QUEUE")
	 * keeps lists ("a,b"), hosts ("all.q@node1") and wildcards ("mpi*").
	 */
	for (i = 0; i < sizeof bare / sizeof bare[0]; i++)
		if (bare[i].value && !bare_ok(bare[i].value, 256,
		    WORD_ALNUM "_.+-,@*:%=/", "-")) {
			snprintf(msg, sizeof msg, "kind \"%s\": %s \"%.60s\": "
			    "it goes bare into a job directive, so it is 1-256 "
			    "characters of [A-Za-z0-9_.+,@*:%%=/-], not starting "
			    "with \"-\"", k->name, bare[i].key, bare[i].value);
			return cerr(why, size, at, NULL, msg);
		}
	/*
	 * spoold submits from the log directory and the directives name
	 * it again, so a relative one is taken twice over (LOG/LOG/...,
	 * which does not exist: Slurm fails every job without a word).
	 */
	if (k->log_dir && k->log_dir[0] != '/') {
		snprintf(msg, sizeof msg, "kind \"%s\": log-directory \"%.80s\" "
		    "must be an absolute path", k->name, k->log_dir);
		return cerr(why, size, at, NULL, msg);
	}
	/*
	 * The job's shell expands local-directory's "~" and variables
	 * (jobscript.c): what it starts with must make it absolute there,
	 * not relative to the directory the job happens to start in.
	 */
	if (k->local_dir && !(k->local_dir[0] == '/' ||
	    (k->local_dir[0] == '~' && (k->local_dir[1] == '/' ||
	    k->local_dir[1] == '\0')) || (k->local_dir[0] == '$' &&
	    (k->local_dir[1] == '{' || k->local_dir[1] == '_' ||
	    isalpha((unsigned char)k->local_dir[1]))))) {
		snprintf(msg, sizeof msg, "kind \"%s\": local-directory "
		    "\"%.80s\" must be an absolute path, or start with \"~\" or "
		    "a variable such as $TMPDIR", k->name, k->local_dir);
		return cerr(why, size, at, NULL, msg);
	}
	/*
	 * A worker takes no work in the last WORKER_END_MARGIN_S of its
	 * walltime: with no more than that, it drains as it registers,
	 * its job ends at once, and spoold submits the next one, every
	 * poll-interval without end.
	 */
	if (k->walltime && k->walltime <= WORKER_END_MARGIN_S) {
		snprintf(msg, sizeof msg, "kind \"%s\": walltime (%" PRIu64
		    "s) must be more than %ds: a worker takes no work in the "
		    "last %ds of its walltime", k->name, k->walltime,
		    WORKER_END_MARGIN_S, WORKER_END_MARGIN_S);
		return cerr(why, size, at, NULL, msg);
	}
	return 0;
}

static int
kind_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= KIND_NAME_MAX || s[0] == '.' || s[0] == '-')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		    *s == '.'))
			return 0;
	return 1;
}

static int
parse_cluster(struct config *c, const struct ynode *map, char *why,
    size_t size)
{
	const struct ynode *kinds = NULL;
	const struct key *k;
	struct kind base;
	char msg[160];
	size_t i;

	kind_defaults(&base);
	c->have_cluster = 1;
	if (yamlx_is_null(map))
		goto single;
	if (map->type != Y_MAP) {
		cerr(why, size, map, NULL, "\"cluster\" must be a mapping");
		goto fail;
	}
	/* cluster-wide keys into c, worker keys into the base kind */
	for (i = 0; i < map->n; i++) {
		const char *name = map->kids[2 * i]->str;
		const struct ynode *v = map->kids[2 * i + 1];

		if (strcmp(name, "kinds") == 0) {
			kinds = v;
			continue;
		}
		if ((k = find_key(cluster_keys, name)) != NULL) {
			if (set_value(c, k, v, why, size) < 0)
				goto fail;
		} else if ((k = find_key(kind_keys, name)) != NULL) {
			if (other_name_given(kind_keys, k, map, i, why,
			    size) < 0 || set_value(&base, k, v, why, size) < 0)
				goto fail;
		} else {
			snprintf(msg, sizeof msg, "unknown key \"%s\" in "
			    "\"cluster\" (see spool-layout(5); \"spool config "
			    "import\" converts a dask-jobqueue file)", name);
			cerr(why, size, map->kids[2 * i], NULL, msg);
			goto fail;
		}
	}
	if (kinds == NULL || yamlx_is_null(kinds)) {
single:
		if (kind_check(&base, map, why, size) < 0)
			goto fail;
		c->kinds = xcalloc(1, sizeof *c->kinds);
		c->kinds[0] = base;
		c->nkinds = 1;
		return 0;
	}
	if (kinds->type != Y_MAP || kinds->n == 0) {
		cerr(why, size, kinds, "kinds", "expected a mapping of kind "
		    "names to their settings");
		goto fail;
	}
	if (kinds->n > KINDS_MAX) {
		cerr(why, size, kinds, "kinds", "too many kinds");
		goto fail;
	}
	c->kinds = xcalloc(kinds->n, sizeof *c->kinds);
	for (i = 0; i < kinds->n; i++) {
		const struct ynode *kn = kinds->kids[2 * i];
		struct kind *kd = &c->kinds[c->nkinds];

		if (!kind_name_ok(kn->str)) {
			cerr(why, size, kn, "kinds", "kind names are 1-63 "
			    "characters of [A-Za-z0-9_.-]");
			goto fail;
		}
		kind_copy(kd, &base);
		c->nkinds++;
		snprintf(kd->name, sizeof kd->name, "%s", kn->str);
		if (apply_map(kd, kind_keys, kinds->kids[2 * i + 1], kn->str,
		    why, size, NULL, NULL, NULL) < 0 ||
		    kind_check(kd, kn, why, size) < 0)
			goto fail;
	}
	kind_free(&base);
	return 0;
fail:
	kind_free(&base);
	return -1;
}

/*
 * lost-timeout below twice the heartbeat: a rule between two keys, named
 * at the value of whichever of them daemon gives last (the one written
 * against the other), or of the only one it gives, not at the top of
 * the file.  The defaults keep the rule, so one of them is given.
 */
static int
lost_rule_err(const struct ynode *daemon, char *why, size_t size)
{
	const struct ynode *at = NULL;
	const char *key = NULL;
	size_t i;

	for (i = 0; daemon && daemon->type == Y_MAP && i < daemon->n; i++) {
		const char *name = daemon->kids[2 * i]->str;

		if (strcmp(name, "lost-timeout") == 0 ||
		    strcmp(name, "heartbeat") == 0) {
			key = name;
			at = daemon->kids[2 * i + 1];
		}
	}
	if (key == NULL)
		return cerr(why, size, daemon, NULL, "lost-timeout must be at "
		    "least twice the heartbeat");
	return cerr(why, size, at, key, strcmp(key, "heartbeat") == 0 ?
	    "must be at most half the lost-timeout" :
	    "must be at least twice the heartbeat");
}

int
config_parse(struct config *c, const char *data, size_t len, char *why,
    size_t size)
{
	struct yamlx_err ye;
	struct ynode *root;
	size_t i;
	int rc = 0;

	config_defaults(c);
	if (yamlx_parse(data, len, &root, &ye) < 0) {
		snprintf(why, size, "%s: line %d, column %d: %s", CONFIG_FILE,
		    ye.line, ye.col, ye.msg);
		return -1;
	}
	if (root == NULL)
		goto out;
	if (root->type != Y_MAP) {
		rc = cerr(why, size, root, NULL, "the file must be a mapping");
		goto out;
	}
	for (i = 0; i < root->n && rc == 0; i++) {
		const struct ynode *k = root->kids[2 * i];

		if (strcmp(k->str, "daemon") == 0)
			rc = apply_map(c, daemon_keys, root->kids[2 * i + 1],
			    "daemon", why, size, NULL, NULL, NULL);
		else if (strcmp(k->str, "cluster") == 0)
			rc = parse_cluster(c, root->kids[2 * i + 1], why, size);
		else if (strcmp(k->str, "worker") == 0)
			rc = apply_map(c, worker_keys, root->kids[2 * i + 1],
			    "worker", why, size, NULL, NULL, NULL);
		else {
			char msg[160];

			snprintf(msg, sizeof msg, "unknown key \"%s\" (known: "
			    "daemon, cluster, worker)", k->str);
			rc = cerr(why, size, k, NULL, msg);
		}
	}
	if (rc == 0 && c->lost_timeout_ms < 2 * c->heartbeat_ms)
		rc = lost_rule_err(yamlx_get(root, "daemon"), why, size);
out:
	if (rc == 0 && c->nkinds == 0) {
		/* no cluster section: one local kind */
		c->kinds = xcalloc(1, sizeof *c->kinds);
		kind_defaults(&c->kinds[0]);
		c->nkinds = 1;
	}
	if (rc < 0)
		config_free(c);
	yamlx_free(root);
	return rc;
}

int
config_load(struct config *c, int dfd, struct stat *st, char *why,
    size_t size)
{
	struct buf b = BUF_INIT;
	struct stat none;
	int rc;

	if (st == NULL)
		st = &none;
	memset(st, 0, sizeof *st);
	if (fsop_read_file(dfd, CONFIG_FILE, CONFIG_MAX, &b, st) < 0) {
		memset(st, 0, sizeof *st);
		if (errno == ENOENT) {
			buf_free(&b);
			return config_parse(c, "", 0, why, size);
		}
		/*
		 * fsop_open_regular refuses a symbolic link (ELOOP) and
		 * anything not a regular file (EINVAL): said as such, not
		 * as "Invalid argument" or a link loop there is none of.
		 */
		if (errno == ELOOP || errno == EINVAL)
			snprintf(why, size, "%s: not a regular file (a "
			    "symbolic link, a directory?): it must be the "
			    "spool owner's own file", CONFIG_FILE);
		else if (errno == EFBIG)
			snprintf(why, size, "%s: larger than %u KiB",
			    CONFIG_FILE, CONFIG_MAX >> 10);
		else
			snprintf(why, size, "read: %s: %s", CONFIG_FILE,
			    strerror(errno));
		buf_free(&b);
		config_defaults(c);
		return -1;
	}
	rc = config_parse(c, b.p, b.len, why, size);
	buf_free(&b);
	return rc;
}

/* ---- dask-jobqueue's jobqueue.yaml ---- */

#define JQ_ONLY(b)	(1u << (b))
#define JQ_SIZE		1	/* the job's own request: cores or memory */

static const struct jq {
	const char *dask;	/* their key, spelled with "-" */
	const char *ours;	/* our key, or NULL: no meaning here */
	const char *note;	/* why not, or what differs */
	unsigned only;		/* backends whose section has it; 0: all */
	int	role;		/* JQ_SIZE, or 0 */
} jq_keys[] = {
	{ "name", "name", NULL, 0, 0 },
	{ "cores", "cores", NULL, 0, 0 },
	{ "processes", "processes", "above 1: task slots of the job's one "
	    "ckworker, each task getting at least cores/processes cores (1: "
	    "a slot per core); \"spool scale N\" asks N / processes jobs",
	    0, 0 },
	{ "memory", "memory", NULL, 0, 0 },
	{ "walltime", "walltime", NULL, 0, 0 },
	{ "queue", "queue", NULL, 0, 0 },
	{ "account", "account", NULL, 0, 0 },
	{ "project", "account", NULL, 0, 0 },
	{ "resource-spec", "resource-spec", NULL, 0, 0 },
	{ "job-extra-directives", "job-extra-directives", NULL, 0, 0 },
	{ "job-extra", "job-extra-directives", NULL, 0, 0 },
	{ "job-directives-skip", "job-directives-skip", NULL, 0, 0 },
	{ "job-script-prologue", "job-script-prologue", NULL, 0, 0 },
	{ "env-extra", "job-script-prologue", NULL, 0, 0 },
	{ "local-directory", "local-directory", NULL, 0, 0 },
	{ "log-directory", "log-directory", NULL, 0, 0 },
	{ "death-timeout", "death-timeout", NULL, 0, 0 },
	{ "shebang", "shebang", NULL, 0, 0 },
	{ "job-cpu", "cores", "the job's CPU request", JQ_ONLY(BK_SLURM) |
	    JQ_ONLY(BK_PBS), JQ_SIZE },
	{ "job-mem", "memory", "the job's memory request", JQ_ONLY(BK_SLURM) |
	    JQ_ONLY(BK_PBS), JQ_SIZE },
	{ "ncpus", "cores", "the job's CPU request (-n)", JQ_ONLY(BK_LSF),
	    JQ_SIZE },
	{ "mem", "memory", "the job's memory request (-M), in bytes",
	    JQ_ONLY(BK_LSF), JQ_SIZE },
	{ "lsf-units", NULL, "ckspool writes -M and rusage[mem] in MiB, "
	    "LSF's default unit (LSF_UNIT_FOR_LIMITS=MB); for another unit, "
	    "job-directives-skip: [\"-M\", \"rusage\"] and your own "
	    "job-extra-directives", JQ_ONLY(BK_LSF), 0 },
	{ "use-stdin", NULL, "ckspool always submits with \"bsub < FILE\" "
	    "(use-stdin: true), the way bsub reads the #BSUB lines",
	    JQ_ONLY(BK_LSF), 0 },
	{ "interface", NULL, "workers and spoold talk through the spool "
	    "directory; no network interface is chosen", 0, 0 },
	{ "protocol", NULL, "no network protocol: the filesystem is the "
	    "transport", 0, 0 },
	{ "security", NULL, "no network connection to secure; the spool's "
	    "file permissions protect it", 0, 0 },
	{ "scheduler-options", NULL, "spoold is not a network service", 0, 0 },
	{ "nanny", NULL, "ckworker restarts nothing; spoold requeues the "
	    "tasks of a worker that dies", 0, 0 },
	{ "python", NULL, "the worker is the ckworker program, not Python",
	    0, 0 },
	{ "worker-command", NULL, "the worker is always ckworker", 0, 0 },
	{ "worker-extra-args", NULL, "use the cluster keys instead; see "
	    "doc/backends.md", 0, 0 },
	{ "extra", NULL, "dask worker arguments have no meaning for "
	    "ckworker", 0, 0 },
	{ "shared-temp-directory", NULL, "the spool itself is the shared "
	    "directory", 0, 0 },
	{ "job-name", "name", NULL, 0, 0 },
	{ "scheduler-cls", NULL, "spoold is the scheduler", 0, 0 },
	{ "submit-command-extra", NULL, "put options in "
	    "job-extra-directives", 0, 0 },
	{ "cancel-command-extra", NULL, "not supported", 0, 0 },
	{ NULL, NULL, NULL, 0, 0 }
};

/* dask reads "_" in a key as "-": job_extra_directives, local_directory */
static int
jq_same(const char *theirs, const char *ours)
{
	for (; *theirs && *ours; theirs++, ours++)
		if ((*theirs == '_' ? '-' : *theirs) != *ours)
			return 0;
	return *theirs == *ours;
}

static const struct jq *
jq_find(const char *theirs)
{
	const struct jq *m;

	for (m = jq_keys; m->dask; m++)
		if (jq_same(theirs, m->dask))
			return m;
	return NULL;
}

static int
jq_unset(const struct ynode *v)
{
	return yamlx_is_null(v) || (v->type == Y_SEQ && v->n == 0) ||
	    (v->type == Y_MAP && v->n == 0);
}

/*
 * The value converted for our key "ours" among the keys that are not the
 * job's own request: that of the first such key in the file (dask's
 * "project" and "account", "job_extra" and "job-extra-directives" are
 * one key here).  NULL if none; its key in *kn.
 */
static const struct ynode *
jq_first(const struct ynode *sect, enum backend b, const char *ours,
    int role, const struct ynode **kn)
{
	const struct jq *m;
	size_t i;

	for (i = 0; sect->type == Y_MAP && i < sect->n; i++) {
		const struct ynode *v = sect->kids[2 * i + 1];

		m = jq_find(sect->kids[2 * i]->str);
		if (m == NULL || m->ours == NULL || m->role != role ||
		    strcmp(m->ours, ours) != 0 || jq_unset(v) ||
		    v->type == Y_MAP || (m->only && !(m->only & JQ_ONLY(b))))
			continue;
		if (kn)
			*kn = sect->kids[2 * i];
		return v;
	}
	return NULL;
}

static void
emit_scalar(struct buf *out, const struct ynode *v)
{
	if (v->plain && strspn(v->str, "0123456789:.-abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(v->str) && v->str[0])
		buf_puts(out, v->str);
	else
		rec_quote(out, v->str);
}

static void
emit_value(struct buf *out, const char *ours, const struct ynode *v)
{
	size_t i;

	if (strcmp(ours, "death-timeout") == 0 && v->type == Y_SCALAR &&
	    strspn(v->str, "0123456789") == strlen(v->str)) {
		buf_printf(out, "%ss", v->str);	/* dask: seconds */
		return;
	}
	if (v->type == Y_SCALAR) {
		emit_scalar(out, v);
		return;
	}
	buf_putc(out, '[');
	for (i = 0; v->type == Y_SEQ && i < v->n; i++) {
		if (i)
			buf_puts(out, ", ");
		if (v->kids[i]->type == Y_SCALAR)
			rec_quote(out, v->kids[i]->str);
	}
	buf_putc(out, ']');
}

/*
 * Their walltime as ours (we read HH:MM:SS, MM:SS and seconds): LSF's -W
 * is [HH:]MM, and Slurm reads a bare number as minutes.  1 with the
 * converted text in out; 0: it means the same here.
 */
static int
jq_walltime(enum backend b, const char *s, char *out, size_t size)
{
	unsigned long long h = 0, m;
	size_t d = strspn(s, "0123456789");

	if ((b != BK_LSF && b != BK_SLURM) || d == 0 || d > 9)
		return 0;
	m = strtoull(s, NULL, 10);
	if (b == BK_LSF && s[d] == ':') {
		const char *t = s + d + 1;
		size_t e = strspn(t, "0123456789");

		if (e == 0 || e > 9 || t[e] != 0)
			return 0;
		h = m;
		m = strtoull(t, NULL, 10);
	} else if (s[d] != 0) {
		return 0;
	}
	m += h * 60;
	snprintf(out, size, "%02llu:%02llu:00", m / 60, m % 60);
	return 1;
}

/* Grid Engine's "-pe NAME N" inside a directive line. */
struct jq_pe {
	const struct ynode *node;	/* the scalar that holds it; NULL: none */
	const struct ynode *in;		/* the value of the key that holds it */
	size_t	from, to;		/* its span, trailing blanks included */
	char	name[128];
	unsigned long slots;		/* 0: not a count (a range): kept */
};

static int
find_pe(const struct ynode *v, struct jq_pe *pe)
{
	const char *s = v->str, *t = s;

	for (;;) {
		size_t len, al, cl;
		const char *a, *c;

		t += strspn(t, " \t");
		if (*t == 0)
			return -1;
		len = strcspn(t, " \t");
		if (len != 3 || strncmp(t, "-pe", 3) != 0) {
			t += len;
			continue;
		}
		a = t + 3 + strspn(t + 3, " \t");
		al = strcspn(a, " \t");
		c = a + al + strspn(a + al, " \t");
		cl = strcspn(c, " \t");
		if (al == 0 || cl == 0 || al >= sizeof pe->name)
			return -1;
		memcpy(pe->name, a, al);
		pe->name[al] = 0;
		pe->slots = cl <= 6 && strspn(c, "0123456789") == cl ?
		    strtoul(c, NULL, 10) : 0;
		pe->node = v;
		pe->from = (size_t)(t - s);
		pe->to = (size_t)(c + cl - s);
		pe->to += strspn(s + pe->to, " \t");
		return 0;
	}
}

/* v's text without the -pe span (pe->node is v), trailing blanks cut. */
static char *
cut_pe(const struct ynode *v, const struct jq_pe *pe)
{
	struct buf b = BUF_INIT;

	buf_append(&b, v->str, pe->from);
	buf_puts(&b, v->str + pe->to);
	while (b.len && (b.p[b.len - 1] == ' ' || b.p[b.len - 1] == '\t'))
		b.len--;
	b.p[b.len] = 0;
	return buf_steal(&b);
}

/*
 * SGE's job-extra often carries "-pe NAME N" (dask-jobqueue adds none):
 * it becomes parallel-environment, and N becomes "cores" (done by the
 * caller), since the N slots are what the job gets.
 */
static void
emit_sge_extra(struct buf *out, const struct ynode *v, const struct jq_pe *pe)
{
	size_t i, kept = 0;

	if (pe->in == v && pe->slots)
		buf_printf(out, "  parallel-environment: %s\n", pe->name);
	for (i = 0; i < v->n; i++) {
		const struct ynode *s = v->kids[i];
		char *rest = NULL;

		if (s->type != Y_SCALAR)
			continue;
		if (s == pe->node && pe->slots) {
			rest = cut_pe(s, pe);
			if (rest[0] == 0) {
				free(rest);
				continue;
			}
		}
		buf_puts(out, kept++ ? ", " : "  job-extra-directives: [");
		rec_quote(out, rest ? rest : s->str);
		free(rest);
	}
	if (kept)
		buf_puts(out, "]\n");
}

/* What the file said of cores or memory, for a note. */
static const char *
said(const struct ynode *v)
{
	return v && v->type == Y_SCALAR ? v->str : "(none)";
}

int
config_import_jobqueue(const char *data, size_t len, const char *backend,
    struct buf *out, char *why, size_t size)
{
	const struct ynode *jq, *sect = NULL, *extra = NULL, *rs = NULL;
	const struct ynode *cores_v, *mem_v, *jcpu_v, *jmem_v;
	const struct ynode *jcpu_k = NULL, *jmem_k = NULL;
	struct jq_pe pe;
	struct buf notes = BUF_INIT;
	struct yamlx_err ye;
	struct ynode *root;
	const struct jq *m;
	const char *bname = NULL;
	char cores[32] = "";
	int cores_done = 0, mem_done = 0;
	enum backend b;
	size_t i;
	int rc = -1;

	if (yamlx_parse(data, len, &root, &ye) < 0) {
		snprintf(why, size, "line %d, column %d: %s", ye.line, ye.col,
		    ye.msg);
		return -1;
	}
	jq = yamlx_get(root, "jobqueue");
	if (jq == NULL || jq->type != Y_MAP) {
		snprintf(why, size, "no \"jobqueue:\" mapping (is this a "
		    "dask-jobqueue configuration file?)");
		goto out;
	}
	for (i = 0; i < jq->n; i++) {
		const char *name = jq->kids[2 * i]->str;

		if (backend ? strcmp(name, backend) == 0 :
		    backend_parse(name, &b) == 0) {
			if (sect && !backend) {
				snprintf(why, size, "several backends (%s, %s): "
				    "choose one with --backend", bname, name);
				goto out;
			}
			sect = jq->kids[2 * i + 1];
			bname = name;
		}
	}
	if (sect == NULL || backend_parse(bname, &b) < 0) {
		snprintf(why, size, backend ? "no supported section \"%s\" "
		    "under jobqueue:" : "no slurm, sge, pbs, lsf or local "
		    "section under jobqueue:", backend ? backend : "");
		goto out;
	}

	/*
	 * The job's size.  Here "cores" and "memory" are both what the job
	 * asks for and what its worker runs; dask's cores and memory are
	 * the worker's, and the request can differ (LSF's ncpus and mem,
	 * Slurm's and PBS's job-cpu and job-mem, a -pe in SGE's job-extra):
	 * the request wins, since it is what the job gets.
	 */
	cores_v = jq_first(sect, b, "cores", 0, NULL);
	mem_v = jq_first(sect, b, "memory", 0, NULL);
	jcpu_v = jq_first(sect, b, "cores", JQ_SIZE, &jcpu_k);
	jmem_v = jq_first(sect, b, "memory", JQ_SIZE, &jmem_k);
	memset(&pe, 0, sizeof pe);
	if (b == BK_SGE) {
		extra = jq_first(sect, b, "job-extra-directives", 0, NULL);
		rs = jq_first(sect, b, "resource-spec", 0, NULL);
		for (i = 0; extra && extra->type == Y_SEQ && i < extra->n; i++)
			if (extra->kids[i]->type == Y_SCALAR &&
			    find_pe(extra->kids[i], &pe) == 0) {
				pe.in = extra;
				break;
			}
		if (pe.node == NULL && rs && rs->type == Y_SCALAR &&
		    find_pe(rs, &pe) == 0)
			pe.in = rs;
	}
	if (pe.node && pe.slots)	/* SGE has no job-cpu */
		snprintf(cores, sizeof cores, "%lu", pe.slots);

	buf_printf(out, "# spool.yaml converted from a dask-jobqueue file "
	    "(section jobqueue.%s)\ncluster:\n  backend: %s\n", bname, bname);
	for (i = 0; sect->type == Y_MAP && i < sect->n; i++) {
		const struct ynode *k = sect->kids[2 * i], *v = sect->kids[2 * i + 1];
		const struct ynode *fk = NULL;
		char wt[48];

		if (jq_unset(v))
			continue;	/* unset in their file */
		m = jq_find(k->str);
		if (m == NULL) {
			buf_printf(&notes, "#   %s (line %d): not a key ckspool "
			    "knows\n", k->str, k->line);
			continue;
		}
		if (m->only && !(m->only & JQ_ONLY(b))) {
			buf_printf(&notes, "#   %s (line %d): not a key of "
			    "dask-jobqueue's %s section; ignored\n", k->str,
			    k->line, bname);
			continue;
		}
		if (m->ours == NULL) {
			buf_printf(&notes, "#   %s (line %d): %s\n", k->str,
			    k->line, m->note);
			continue;
		}
		if (v->type == Y_MAP) {
			buf_printf(&notes, "#   %s (line %d): a mapping; "
			    "expected a value or a list; not converted\n",
			    k->str, k->line);
			continue;
		}
		if (strcmp(m->ours, "cores") == 0 ||
		    strcmp(m->ours, "memory") == 0) {
			int c = m->ours[0] == 'c';
			const struct ynode *use = c ? (jcpu_v ? jcpu_v : cores_v) :
			    (jmem_v ? jmem_v : mem_v);

			if (m->role == JQ_SIZE && v != (c ? jcpu_v : jmem_v)) {
				buf_printf(&notes, "#   %s (line %d): also given "
				    "as %s (line %d); only that one is converted\n",
				    k->str, k->line, (c ? jcpu_k : jmem_k)->str,
				    (c ? jcpu_k : jmem_k)->line);
				continue;
			}
			if (m->role == JQ_SIZE && v->type == Y_SCALAR) {
				const struct ynode *w = c ? cores_v : mem_v;

				if (w && w->type == Y_SCALAR &&
				    strcmp(w->str, v->str) == 0)
					buf_printf(&notes, "#   %s: %s: the same as "
					    "%s here\n", k->str, m->note, m->ours);
				else if (w == NULL)
					buf_printf(&notes, "#   %s: %s: became %s: "
					    "%s\n", k->str, m->note, m->ours,
					    v->str);
				else
					buf_printf(&notes, "#   %s: %s: became %s: "
					    "%s (the file said %s: %s, dask's "
					    "worker; here %s is both the job's "
					    "request and what its worker runs)\n",
					    k->str, m->note, m->ours, v->str,
					    m->ours, said(w), m->ours);
			}
			if (c ? cores_done : mem_done)
				continue;
			buf_printf(out, "  %s: ", m->ours);
			if (c && cores[0])
				buf_puts(out, cores);
			else
				emit_value(out, m->ours, use ? use : v);
			buf_putc(out, '\n');
			*(c ? &cores_done : &mem_done) = 1;
			continue;
		}
		if (jq_first(sect, b, m->ours, 0, &fk) != v) {
			buf_printf(&notes, "#   %s (line %d): also given as %s "
			    "(line %d); only that one is converted\n", k->str,
			    k->line, fk->str, fk->line);
			continue;
		}
		if (v == extra && b == BK_SGE && v->type == Y_SEQ) {
			emit_sge_extra(out, v, &pe);
		} else if (v == rs && pe.node == rs && pe.slots) {
			char *rest = cut_pe(rs, &pe);

			buf_printf(out, "  parallel-environment: %s\n", pe.name);
			if (rest[0]) {
				buf_puts(out, "  resource-spec: ");
				rec_quote(out, rest);
				buf_putc(out, '\n');
			}
			free(rest);
		} else if (strcmp(m->ours, "walltime") == 0 &&
		    v->type == Y_SCALAR && jq_walltime(b, v->str, wt, sizeof wt)) {
			buf_puts(out, "  walltime: ");
			rec_quote(out, wt);
			buf_putc(out, '\n');
			if (b == BK_LSF)
				buf_printf(&notes, "#   %s \"%s\": LSF's -W is "
				    "[HH:]MM (here two fields are MM:SS): became "
				    "\"%s\", which the job script writes as -W "
				    "%.*s\n", k->str, v->str, wt,
				    (int)(strlen(wt) - 3), wt);
			else
				buf_printf(&notes, "#   %s \"%s\": Slurm reads a "
				    "bare number as minutes (here: seconds): "
				    "became \"%s\"\n", k->str, v->str, wt);
		} else {
			buf_printf(out, "  %s: ", m->ours);
			emit_value(out, m->ours, v);
			buf_putc(out, '\n');
			if (strcmp(m->ours, "walltime") == 0 && b == BK_LSF)
				buf_printf(&notes, "#   %s \"%s\": not LSF's "
				    "[HH:]MM; kept as ckspool reads it (HH:MM:SS, "
				    "or 90m, 2h)\n", k->str, said(v));
		}
		if (m->note)
			buf_printf(&notes, "#   %s: %s\n", k->str, m->note);
		if (pe.node && v == pe.in) {
			const char *src = pe.node->str;

			if (pe.slots == 0)
				buf_printf(&notes, "#   %s \"%s\": the slots are "
				    "not a count; kept as written, and the worker "
				    "runs cores: %s whatever the job gets\n",
				    k->str, src, said(cores_v));
			else if (cores_v && cores_v->type == Y_SCALAR &&
			    strtoul(cores_v->str, NULL, 10) == pe.slots)
				buf_printf(&notes, "#   %s \"%s\": became "
				    "parallel-environment: %s (slots = cores)\n",
				    k->str, src, pe.name);
			else
				buf_printf(&notes, "#   %s \"%s\": became "
				    "parallel-environment: %s and cores: %lu, since "
				    "the job gets %lu slots%s%s%s\n", k->str, src,
				    pe.name, pe.slots, pe.slots, cores_v ?
				    " (the file said cores: " : "", cores_v ?
				    said(cores_v) : "", cores_v ? ", what dask's "
				    "worker uses; here cores is both the job's "
				    "slots and what its worker runs)" : "");
		}
	}
	if (!cores_done && cores[0])
		buf_printf(out, "  cores: %s\n", cores);
	if (b == BK_SGE && rs && rs->type == Y_SCALAR &&
	    strstr(rs->str, "h_vmem=")) {
		unsigned long n = cores[0] ? strtoul(cores, NULL, 10) :
		    cores_v && cores_v->type == Y_SCALAR ?
		    strtoul(cores_v->str, NULL, 10) : 1;

		if (n > 1)
			buf_printf(&notes, "#   resource-spec \"%s\": Grid "
			    "Engine counts h_vmem per slot: with %lu slots the "
			    "job asks for %lu times that\n", rs->str, n, n);
	}
	if (notes.len)
		buf_printf(out, "# dask-jobqueue keys of that file with no "
		    "meaning (or another meaning) here:\n%s", notes.p);
	rc = 0;
out:
	buf_free(&notes);
	yamlx_free(root);
	return rc;
}

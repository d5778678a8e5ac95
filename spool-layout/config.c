/*
 * config.c - spool.yaml; see config.h.  Keys are tables: name, kind of
 * value, where it goes.  The cluster section is parsed into a base kind;
 * each entry under "kinds" starts as a copy of it and overrides keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "fsop.h"
#include "rec.h"
#include "task.h"
#include "units.h"
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

/* ---- values ---- */

enum vkind { V_BOOL, V_MS, V_UINT, V_SIZE, V_SECONDS, V_STR, V_STRV, V_ENV,
	V_BACKEND, V_CORES };

struct key {
	const char *name;
	enum vkind kind;
	size_t	off;
	uint64_t min, max;
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
	} else if (get_strv(v, &t.env, key, why, size) < 0) {
		return -1;
	} else {
		for (i = 0; t.env && t.env[i]; i++)
			if (strchr(t.env[i], '=') == NULL) {
				task_free(&t);
				return cerr(why, size, v, key, "items must be "
				    "NAME=VALUE");
			}
	}
	*out = t.env;
	t.env = NULL;
	task_free(&t);
	return 0;
}

static int
set_value(void *base, const struct key *k, const struct ynode *v, char *why,
    size_t size)
{
	void *p = (char *)base + k->off;
	const char *reason;
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
		if (units_parse_uint(v->str, k->max, &u, &reason) < 0)
			return cerr(why, size, v, k->name, reason);
		break;
	default:
		return cerr(why, size, v, k->name, "internal: bad key kind");
	}
	if (u < k->min || u > k->max)
		return cerr(why, size, v, k->name, "value out of range");
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
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};
#undef KO

static const struct key cluster_keys[] = {
	{ "poll-interval", V_MS, offsetof(struct config, poll_ms), 100,
	    3600000, NULL },
	{ "max-submit-failures", V_UINT,
	    offsetof(struct config, max_submit_failures), 1, 1000, NULL },
	{ "scale-down-delay", V_MS, offsetof(struct config, scale_down_ms), 0,
	    86400000, NULL },
	{ NULL, V_BOOL, 0, 0, 0, NULL }
};

static const struct key *
find_key(const struct key *t, const char *name)
{
	for (; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
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
		if (set_value(base, k, map->kids[2 * i + 1], why, size) < 0)
			return -1;
	}
	return 0;
}

static int
kind_check(const struct kind *k, const struct ynode *at, char *why,
    size_t size)
{
	char msg[200];

	if (k->processes > k->cores) {
		snprintf(msg, sizeof msg, "kind \"%s\": processes (%u) is more "
		    "than cores (%u): each process needs a core", k->name,
		    k->processes, k->cores);
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
			if (set_value(&base, k, v, why, size) < 0)
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
		else {
			char msg[160];

			snprintf(msg, sizeof msg, "unknown key \"%s\" (known: "
			    "daemon, cluster)", k->str);
			rc = cerr(why, size, k, NULL, msg);
		}
	}
	if (rc == 0 && c->lost_timeout_ms < 2 * c->heartbeat_ms)
		rc = cerr(why, size, root, NULL, "lost-timeout must be at least "
		    "twice the heartbeat");
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
config_load(struct config *c, int dfd, char *why, size_t size)
{
	struct buf b = BUF_INIT;
	int rc;

	if (fsop_read_file(dfd, CONFIG_FILE, CONFIG_MAX, &b, NULL) < 0) {
		if (errno == ENOENT) {
			buf_free(&b);
			return config_parse(c, "", 0, why, size);
		}
		snprintf(why, size, "read: %s: %s", CONFIG_FILE, strerror(errno));
		buf_free(&b);
		config_defaults(c);
		return -1;
	}
	rc = config_parse(c, b.p, b.len, why, size);
	buf_free(&b);
	return rc;
}

/* ---- dask-jobqueue's jobqueue.yaml ---- */

static const struct jq {
	const char *dask;	/* their key */
	const char *ours;	/* our key, or NULL: no meaning here */
	const char *note;	/* why not, or what differs */
} jq_keys[] = {
	{ "name", "name", NULL },
	{ "cores", "cores", NULL },
	{ "processes", "processes", "above 1: task slots of the job's one "
	    "ckworker, each task getting at least cores/processes cores (1: "
	    "a slot per core); \"spool scale N\" asks N / processes jobs" },
	{ "memory", "memory", NULL },
	{ "walltime", "walltime", NULL },
	{ "queue", "queue", NULL },
	{ "account", "account", NULL },
	{ "project", "account", NULL },
	{ "resource-spec", "resource-spec", NULL },
	{ "job-extra-directives", "job-extra-directives", NULL },
	{ "job-extra", "job-extra-directives", NULL },
	{ "job-directives-skip", "job-directives-skip", NULL },
	{ "job-script-prologue", "job-script-prologue", NULL },
	{ "env-extra", "job-script-prologue", NULL },
	{ "local-directory", "local-directory", NULL },
	{ "log-directory", "log-directory", NULL },
	{ "death-timeout", "death-timeout", NULL },
	{ "shebang", "shebang", NULL },
	{ "interface", NULL, "workers and spoold talk through the spool "
	    "directory; no network interface is chosen" },
	{ "protocol", NULL, "no network protocol: the filesystem is the "
	    "transport" },
	{ "security", NULL, "no network connection to secure; the spool's "
	    "file permissions protect it" },
	{ "scheduler-options", NULL, "spoold is not a network service" },
	{ "nanny", NULL, "ckworker restarts nothing; spoold requeues the "
	    "tasks of a worker that dies" },
	{ "python", NULL, "the worker is the ckworker program, not Python" },
	{ "worker-command", NULL, "the worker is always ckworker" },
	{ "worker-extra-args", NULL, "use the cluster keys instead; see "
	    "doc/backends.md" },
	{ "extra", NULL, "dask worker arguments have no meaning for "
	    "ckworker" },
	{ "shared-temp-directory", NULL, "the spool itself is the shared "
	    "directory" },
	{ "job-cpu", NULL, "the job asks for exactly \"cores\"" },
	{ "job-mem", NULL, "the job asks for exactly \"memory\"" },
	{ "job-name", "name", NULL },
	{ "scheduler-cls", NULL, "spoold is the scheduler" },
	{ "submit-command-extra", NULL, "put options in "
	    "job-extra-directives" },
	{ "cancel-command-extra", NULL, "not supported" },
	{ "use-stdin", NULL, "ckspool always submits a script file" },
	{ NULL, NULL, NULL }
};

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
 * SGE's job-extra often carries "-pe NAME N" (dask-jobqueue adds none):
 * make it parallel-environment, so the slot count follows "cores".
 */
static void
emit_sge_extra(struct buf *out, struct buf *notes, const struct ynode *v)
{
	char pe[128];
	size_t i, kept = 0;

	for (i = 0; i < v->n; i++) {
		const char *s = v->kids[i]->type == Y_SCALAR ? v->kids[i]->str : "";
		int n = 0;

		if (sscanf(s, "-pe %127s %*u%n", pe, &n) == 1 && n > 0 &&
		    s[n] == 0) {
			buf_printf(out, "  parallel-environment: %s\n", pe);
			buf_printf(notes, "#   job-extra \"%s\": became "
			    "parallel-environment: %s (slots = cores)\n", s, pe);
		}
	}
	buf_puts(out, "  job-extra-directives: [");
	for (i = 0; i < v->n; i++) {
		const char *s = v->kids[i]->type == Y_SCALAR ? v->kids[i]->str : "";
		int n = 0;

		if (sscanf(s, "-pe %127s %*u%n", pe, &n) == 1 && n > 0 &&
		    s[n] == 0)
			continue;
		buf_puts(out, kept++ ? ", " : "");
		rec_quote(out, s);
	}
	buf_puts(out, "]\n");
}

int
config_import_jobqueue(const char *data, size_t len, const char *backend,
    struct buf *out, char *why, size_t size)
{
	const struct ynode *jq, *sect = NULL;
	struct buf notes = BUF_INIT;
	struct yamlx_err ye;
	struct ynode *root;
	const struct jq *m;
	const char *bname = NULL;
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
	buf_printf(out, "# spool.yaml converted from a dask-jobqueue file "
	    "(section jobqueue.%s)\ncluster:\n  backend: %s\n", bname, bname);
	for (i = 0; sect->type == Y_MAP && i < sect->n; i++) {
		const struct ynode *k = sect->kids[2 * i], *v = sect->kids[2 * i + 1];

		if (yamlx_is_null(v) || (v->type == Y_SEQ && v->n == 0) ||
		    (v->type == Y_MAP && v->n == 0))
			continue;	/* unset in their file */
		for (m = jq_keys; m->dask; m++)
			if (strcmp(m->dask, k->str) == 0)
				break;
		if (m->dask && strcmp(m->ours ? m->ours : "",
		    "job-extra-directives") == 0 && b == BK_SGE &&
		    v->type == Y_SEQ) {
			emit_sge_extra(out, &notes, v);
		} else if (m->dask && m->ours && v->type != Y_MAP) {
			buf_printf(out, "  %s: ", m->ours);
			emit_value(out, m->ours, v);
			buf_putc(out, '\n');
			if (m->note)
				buf_printf(&notes, "#   %s: %s\n", k->str, m->note);
		} else {
			buf_printf(&notes, "#   %s (line %d): %s\n", k->str,
			    k->line, m->dask ? m->note :
			    "not a key ckspool knows");
		}
	}
	{
		const struct ynode *rs = yamlx_get(sect, "resource-spec");
		const struct ynode *co = yamlx_get(sect, "cores");
		unsigned long cores = co && co->type == Y_SCALAR ?
		    strtoul(co->str, NULL, 10) : 1;

		if (b == BK_SGE && rs && rs->type == Y_SCALAR &&
		    strstr(rs->str, "h_vmem=") && cores > 1)
			buf_printf(&notes, "#   resource-spec \"%s\": Grid "
			    "Engine counts h_vmem per slot: with %lu slots the "
			    "job asks for %lu times that\n", rs->str, cores,
			    cores);
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

/*
 * task.c - task specs: options, validation, canonical form.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "units.h"

void
task_init(struct task_spec *t)
{
	memset(t, 0, sizeof *t);
}

void
task_free(struct task_spec *t)
{
	free(t->name);
	strv_free(t->argv);
	free(t->shell);
	free(t->script);
	free(t->cwd);
	strv_free(t->env);
	free(t->after);
	free(t->after_item);
	free(t->source);
	task_init(t);
}

void
task_free_array(struct task_spec *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		task_free(&t[i]);
	free(t);
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
task_copy(struct task_spec *d, const struct task_spec *s)
{
	*d = *s;
	d->name = dup_or_null(s->name);
	d->argv = strv_dup(s->argv);
	d->shell = dup_or_null(s->shell);
	d->script = dup_or_null(s->script);
	d->cwd = dup_or_null(s->cwd);
	d->env = strv_dup(s->env);
	d->source = dup_or_null(s->source);
	d->after = NULL;
	if (s->nafter) {
		d->after = xreallocarray(NULL, s->nafter, sizeof *d->after);
		memcpy(d->after, s->after, s->nafter * sizeof *d->after);
	}
	d->after_item = NULL;
	if (s->nafter_item) {
		d->after_item = xreallocarray(NULL, s->nafter_item,
		    sizeof *d->after_item);
		memcpy(d->after_item, s->after_item,
		    s->nafter_item * sizeof *d->after_item);
	}
}

uint32_t
task_cores(const struct task_spec *t)
{
	return t->cores ? t->cores : 1;
}

void
task_shape_of(const struct task_spec *t, struct task_shape *s)
{
	s->cores = task_cores(t);
	s->gpus = t->gpus;
	s->memory = t->memory;
	s->walltime = t->walltime;
}

void
task_shape_format(const struct task_shape *s, uint64_t tasks, char *out,
    size_t size)
{
	snprintf(out, size, "cores=%" PRIu32 " gpus=%" PRIu32 " memory=%"
	    PRIu64 " walltime=%" PRIu64 " tasks=%" PRIu64, s->cores, s->gpus,
	    s->memory, s->walltime, tasks);
}

int
task_shape_parse(const char *text, struct task_shape *s)
{
	return sscanf(text, "cores=%" SCNu32 " gpus=%" SCNu32 " memory=%"
	    SCNu64 " walltime=%" SCNu64, &s->cores, &s->gpus, &s->memory,
	    &s->walltime) == 4 ? 0 : -1;
}

const char *
task_shape_words(const struct task_shape *s, char *out, size_t size)
{
	char mem[32], wall[32];

	snprintf(out, size, "%" PRIu32 " core%s, %" PRIu32 " GPU%s, memory %s, "
	    "walltime %s", s->cores, s->cores == 1 ? "" : "s", s->gpus,
	    s->gpus == 1 ? "" : "s", s->memory ? units_format_size(s->memory,
	    mem, sizeof mem) : "-", s->walltime ?
	    units_format_duration(s->walltime, wall, sizeof wall) : "-");
	return out;
}

void
task_default_name(struct task_spec *t, const char *file)
{
	char base[TASK_NAME_MAX + 1], *dot;

	if (t->name)
		return;
	snprintf(base, sizeof base, "%s", file);
	if ((dot = strrchr(base, '.')) != NULL && dot != base)
		*dot = 0;
	if (task_name_ok(base))
		t->name = xstrdup(base);
}

int
task_name_ok(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (*p == 0 || *p == '.' || *p == '-' || strlen(name) > TASK_NAME_MAX)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
		    *p == '.' || *p == '+' || *p == '@' || *p == ':'))
			return 0;
	return 1;
}

static int
env_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int
set_env(struct task_spec *t, const char *value, const char **why)
{
	const char *eq = strchr(value, '=');
	size_t i, n;

	if (eq == NULL || !env_name_ok(value, (size_t)(eq - value))) {
		*why = "env must be NAME=VALUE with NAME made of [A-Za-z0-9_]";
		return -1;
	}
	n = (size_t)(eq - value) + 1;
	for (i = 0; t->env && t->env[i]; i++)
		if (strncmp(t->env[i], value, n) == 0) {
			free(t->env[i]);
			t->env[i] = xstrdup(value);
			return 0;
		}
	if (strv_len(t->env) >= TASK_ENV_MAX) {
		*why = "too many env variables";
		return -1;
	}
	t->env = strv_push(t->env, value);
	return 0;
}

/* (the refusals name the bound) */
_Static_assert(TASK_AFTER_MAX == 1024,
    "the refusals say \"at most 1024\"");

/* t holds TASK_AFTER_MAX dependencies, IDs and named tasks together */
static int
after_full(const struct task_spec *t, const char **why)
{
	if (t->nafter + t->nafter_item < TASK_AFTER_MAX)
		return 0;
	*why = "too many dependencies (at most 1024)";
	return 1;
}

static int
add_after(struct task_spec *t, const char *value, const char **why)
{
	const char *p = value, *comma;
	char item[32];
	uint64_t id;
	size_t n;

	for (;;) {
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n >= sizeof item) {
			*why = "after must be a comma-separated list of task IDs";
			return -1;
		}
		memcpy(item, p, n);
		item[n] = 0;
		if (units_parse_uint(item, TASK_ID_MAX, &id, why) < 0 || id == 0) {
			*why = "after must be a comma-separated list of task IDs";
			return -1;
		}
		if (after_full(t, why))
			return -1;
		t->after = xreallocarray(t->after, t->nafter + 1,
		    sizeof *t->after);
		t->after[t->nafter++] = id;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

int
task_add_item(struct task_spec *t, uint32_t item, const char **why)
{
	if (after_full(t, why))
		return -1;
	t->after_item = xreallocarray(t->after_item, t->nafter_item + 1,
	    sizeof *t->after_item);
	t->after_item[t->nafter_item].item = item;
	t->after_item[t->nafter_item++].at = (uint32_t)t->nafter;
	return 0;
}

void
task_after_items(struct task_spec *t, uint64_t first)
{
	uint64_t *a;
	size_t i, k = 0, n = 0;

	if (t->nafter_item == 0)
		return;
	a = xreallocarray(NULL, t->nafter + t->nafter_item, sizeof *a);
	for (i = 0; i < t->nafter_item; i++) {
		while (k < t->after_item[i].at && k < t->nafter)
			a[n++] = t->after[k++];
		a[n++] = first + t->after_item[i].item;
	}
	while (k < t->nafter)
		a[n++] = t->after[k++];
	free(t->after);
	t->after = a;
	t->nafter = n;
	free(t->after_item);
	t->after_item = NULL;
	t->nafter_item = 0;
}

static const char *const option_names[] = {
	"cores", "memory", "gpus", "walltime", "after", "priority", "retries",
	"name", "env", "cwd", NULL
};

int
task_is_option(const char *key)
{
	int i;

	for (i = 0; option_names[i]; i++)
		if (strcmp(option_names[i], key) == 0)
			return 1;
	return 0;
}

int
task_set(struct task_spec *t, const char *key, const char *value,
    const char **why)
{
	uint64_t u;
	int64_t s;

	if (strcmp(key, "cores") == 0) {
		if (units_parse_uint(value, TASK_CORES_MAX, &u, why) < 0)
			return -1;
		if (u == 0) {
			*why = "cores must be at least 1";
			return -1;
		}
		t->cores = (uint32_t)u;
	} else if (strcmp(key, "memory") == 0) {
		if (units_parse_size(value, &u, why) < 0)
			return -1;
		if (u > TASK_MEMORY_MAX) {
			*why = "memory larger than 1 PiB";
			return -1;
		}
		t->memory = u;
	} else if (strcmp(key, "gpus") == 0) {
		if (units_parse_uint(value, TASK_GPUS_MAX, &u, why) < 0)
			return -1;
		t->gpus = (uint32_t)u;
	} else if (strcmp(key, "walltime") == 0) {
		if (units_parse_duration(value, &u, why) < 0)
			return -1;
		if (u > TASK_WALLTIME_MAX) {
			*why = "walltime longer than a year";
			return -1;
		}
		t->walltime = u;
	} else if (strcmp(key, "after") == 0) {
		return add_after(t, value, why);
	} else if (strcmp(key, "priority") == 0) {
		if (units_parse_int(value, TASK_PRIORITY_MIN, TASK_PRIORITY_MAX,
		    &s, why) < 0) {
			*why = "priority must be an integer from -1000 to 1000";
			return -1;
		}
		t->priority = (int32_t)s;
	} else if (strcmp(key, "retries") == 0) {
		if (units_parse_uint(value, TASK_RETRIES_MAX, &u, why) < 0) {
			*why = "retries must be an integer from 0 to 100";
			return -1;
		}
		t->retries = (uint32_t)u;
	} else if (strcmp(key, "name") == 0) {
		if (!task_name_ok(value)) {
			*why = "name must be 1-128 characters of [A-Za-z0-9_.+@:-]";
			return -1;
		}
		free(t->name);
		t->name = xstrdup(value);
	} else if (strcmp(key, "env") == 0) {
		return set_env(t, value, why);
	} else if (strcmp(key, "cwd") == 0) {
		if (value[0] != '/' || strlen(value) >= TASK_PATH_MAX ||
		    strpbrk(value, "\n\r")) {
			*why = "cwd must be an absolute path";
			return -1;
		}
		free(t->cwd);
		t->cwd = xstrdup(value);
	} else {
		*why = "unknown option";
		return -1;
	}
	return 0;
}

static int
has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
			return 1;
	return 0;
}

/*
 * The bound on a task's command is on what was given; what task_encode
 * makes of it must also fit a record line, or spoold would refuse the
 * bundle after the submitter was given its ID: a command of 1 MiB of
 * control characters is recorded in a line a few bytes over 4 MiB.
 */
static int
line_fits(const char *key, const char *s, char *const *v)
{
	return (s ? strlen(key) + 2 + rec_quoted_len(s) :
	    rec_strv_line_len(key, v)) <= REC_LINE_MAX;
}

int
task_validate(const struct task_spec *t, const char **why)
{
	size_t i, bytes = 0;
	int forms = (t->argv != NULL) + (t->shell != NULL) + (t->script != NULL);

	if (forms == 0) {
		*why = "no command (give command, or a script)";
		return -1;
	}
	if (forms > 1) {
		*why = "more than one of command list, command string, script";
		return -1;
	}
	if (t->argv) {
		if (t->argv[0] == NULL || t->argv[0][0] == 0) {
			*why = "empty command";
			return -1;
		}
		if (strv_len(t->argv) > TASK_ARGV_MAX) {
			*why = "too many command arguments";
			return -1;
		}
		for (i = 0; t->argv[i]; i++)
			bytes += strlen(t->argv[i]) + 1;
	}
	if (t->shell) {
		bytes = strlen(t->shell);
		if (strspn(t->shell, " \t\n") == bytes) {
			*why = "empty command";
			return -1;
		}
	}
	if (t->script) {
		bytes = strlen(t->script);
		if (strncmp(t->script, "#!", 2) != 0) {
			*why = "script does not start with #!";
			return -1;
		}
	}
	if (bytes > TASK_CMD_BYTES_MAX) {
		*why = "command larger than 1 MiB";
		return -1;
	}
	if (!(t->argv ? line_fits("argv", NULL, t->argv) :
	    line_fits(t->shell ? "shell" : "script", t->shell ? t->shell :
	    t->script, NULL))) {
		*why = "command larger than 4 MiB as recorded (a control "
		    "character takes 4 bytes)";
		return -1;
	}
	/* (the rest runs: a script is a file, not an argument) */
	for (i = 0; t->argv && t->argv[i]; i++)
		if (strlen(t->argv[i]) >= TASK_STRING_MAX) {
			*why = "a command argument longer than 128 KiB (more "
			    "than execve takes: it could never start)";
			return -1;
		}
	if (t->shell && strlen(t->shell) >= TASK_STRING_MAX) {
		*why = "command string longer than 128 KiB (more than execve "
		    "takes: it could never start; give it as a script)";
		return -1;
	}
	if (t->name && !task_name_ok(t->name)) {
		*why = "bad name";
		return -1;
	}
	if (t->cwd && (t->cwd[0] != '/' || strlen(t->cwd) >= TASK_PATH_MAX ||
	    has_ctl(t->cwd) || strchr(t->cwd, '\n'))) {
		*why = "cwd must be an absolute path";
		return -1;
	}
	for (i = 0, bytes = 0; t->env && t->env[i]; i++) {
		const char *eq = strchr(t->env[i], '=');

		if (eq == NULL || !env_name_ok(t->env[i],
		    (size_t)(eq - t->env[i]))) {
			*why = "bad env entry";
			return -1;
		}
		bytes += strlen(t->env[i]) + 1;
	}
	if (strv_len(t->env) > TASK_ENV_MAX) {
		*why = "too many env variables";
		return -1;
	}
	/*
	 * Recorded, each variable takes at most 4 bytes a byte, less 2 for
	 * its "NAME=" (at least 2 bytes written as they are, and the NUL
	 * counted here is not written): 1 MiB fits a 4 MiB record line.
	 */
	if (bytes > TASK_ENV_BYTES_MAX) {
		*why = "environment larger than 1 MiB";
		return -1;
	}
	for (i = 0; t->env && t->env[i]; i++)
		if (strlen(t->env[i]) >= TASK_STRING_MAX) {
			*why = "an env variable longer than 128 KiB (more than "
			    "execve takes: it could never start)";
			return -1;
		}
	if (t->cores > TASK_CORES_MAX || t->gpus > TASK_GPUS_MAX ||
	    t->memory > TASK_MEMORY_MAX || t->walltime > TASK_WALLTIME_MAX) {
		*why = "resource request out of range";
		return -1;
	}
	if (t->nafter + t->nafter_item > TASK_AFTER_MAX) {
		*why = "too many dependencies (at most 1024)";
		return -1;
	}
	for (i = 0; i < t->nafter; i++) {
		if (t->after[i] == 0 || t->after[i] > TASK_ID_MAX) {
			*why = "bad dependency ID";
			return -1;
		}
		if (t->id && t->after[i] >= t->id) {
			*why = "dependency on a task that was not submitted "
			    "before this one (a cycle, or no such task)";
			return -1;
		}
	}
	if (t->priority < TASK_PRIORITY_MIN || t->priority > TASK_PRIORITY_MAX) {
		*why = "priority out of range";
		return -1;
	}
	if (t->retries > TASK_RETRIES_MAX) {
		*why = "retries out of range";
		return -1;
	}
	if (t->id > TASK_ID_MAX) {
		*why = "task ID out of range";
		return -1;
	}
	return 0;
}

void
task_encode(struct buf *b, const struct task_spec *t)
{
	rec_put_uint(b, "id", t->id);
	if (t->name)
		rec_put_str(b, "name", t->name);
	if (t->argv)
		rec_put_strv(b, "argv", t->argv);
	if (t->shell)
		rec_put_str(b, "shell", t->shell);
	if (t->script)
		rec_put_str(b, "script", t->script);
	if (t->cwd)
		rec_put_str(b, "cwd", t->cwd);
	if (t->env)
		rec_put_strv(b, "env", t->env);
	rec_put_uint(b, "cores", task_cores(t));
	if (t->memory)
		rec_put_uint(b, "memory", t->memory);
	if (t->gpus)
		rec_put_uint(b, "gpus", t->gpus);
	if (t->walltime)
		rec_put_uint(b, "walltime", t->walltime);
	if (t->nafter)
		rec_put_idv(b, "after", t->after, t->nafter);
	if (t->priority)
		rec_put_int(b, "priority", t->priority);
	if (t->retries)
		rec_put_uint(b, "retries", t->retries);
	if (t->source)
		rec_put_str(b, "source", t->source);
	rec_put_double(b, "submitted", t->submitted, 3);
	rec_put_uint(b, "uid", t->uid);
}

int
task_decode_field(struct rec_reader *r, const struct rec_field *f,
    struct task_spec *t)
{
	uint64_t u;
	int64_t s;

#define STR(k, field) if (rec_key_is(f, k)) { \
		free(t->field); t->field = NULL; \
		return rec_get_str(r, f, &t->field) < 0 ? -1 : 1; }
#define STRV(k, field) if (rec_key_is(f, k)) { \
		strv_free(t->field); t->field = NULL; \
		return rec_get_strv(r, f, &t->field) < 0 ? -1 : 1; }
	if (rec_key_is(f, "id")) {
		if (rec_get_uint(r, f, TASK_ID_MAX, &t->id) < 0)
			return -1;
		return 1;
	}
	STR("name", name)
	STRV("argv", argv)
	STR("shell", shell)
	STR("script", script)
	STR("cwd", cwd)
	STRV("env", env)
	STR("source", source)
#undef STR
#undef STRV
	if (rec_key_is(f, "cores")) {
		if (rec_get_uint(r, f, TASK_CORES_MAX, &u) < 0)
			return -1;
		t->cores = (uint32_t)u;
		return 1;
	}
	if (rec_key_is(f, "memory"))
		return rec_get_uint(r, f, TASK_MEMORY_MAX, &t->memory) < 0 ? -1 : 1;
	if (rec_key_is(f, "gpus")) {
		if (rec_get_uint(r, f, TASK_GPUS_MAX, &u) < 0)
			return -1;
		t->gpus = (uint32_t)u;
		return 1;
	}
	if (rec_key_is(f, "walltime"))
		return rec_get_uint(r, f, TASK_WALLTIME_MAX, &t->walltime) < 0 ?
		    -1 : 1;
	if (rec_key_is(f, "after")) {
		free(t->after);
		t->after = NULL;
		t->nafter = 0;
		if (rec_get_idv(r, f, &t->after, &t->nafter) < 0)
			return -1;
		return 1;
	}
	if (rec_key_is(f, "priority")) {
		if (rec_get_int(r, f, TASK_PRIORITY_MIN, TASK_PRIORITY_MAX, &s) < 0)
			return -1;
		t->priority = (int32_t)s;
		return 1;
	}
	if (rec_key_is(f, "retries")) {
		if (rec_get_uint(r, f, TASK_RETRIES_MAX, &u) < 0)
			return -1;
		t->retries = (uint32_t)u;
		return 1;
	}
	if (rec_key_is(f, "submitted"))
		return rec_get_double(r, f, &t->submitted) < 0 ? -1 : 1;
	if (rec_key_is(f, "uid")) {
		if (rec_get_uint(r, f, UINT32_MAX, &u) < 0)
			return -1;
		t->uid = (uint32_t)u;
		return 1;
	}
	return 0;
}

int
task_decode(struct rec_reader *r, struct task_spec *t)
{
	struct rec_field f;
	int rc;

	while ((rc = rec_next(r, &f)) > 0) {
		rc = task_decode_field(r, &f, t);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			r->why = "unknown key in task record";
			r->errline = f.line;
			return -1;
		}
	}
	return rc;
}

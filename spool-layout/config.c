/*
 * config.c - spool.yaml; see config.h.  Keys are a table: name, kind,
 * where the value goes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "fsop.h"
#include "units.h"
#include "yamlx.h"

#define CONFIG_MAX (256u << 10)

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
}

enum kind { K_BOOL, K_MS, K_UINT };

static const struct key {
	const char *name;
	enum kind kind;
	size_t	off;
	uint64_t min, max;
} daemon_keys[] = {
	{ "fsync", K_BOOL, offsetof(struct config, fsync), 0, 1 },
	{ "heartbeat", K_MS, offsetof(struct config, heartbeat_ms), 10,
	    3600000 },
	{ "lost-timeout", K_MS, offsetof(struct config, lost_timeout_ms), 100,
	    86400000 },
	{ "death-timeout", K_MS, offsetof(struct config, death_timeout_ms),
	    100, 86400000 },
	{ "rescan", K_MS, offsetof(struct config, rescan_ms), 10, 600000 },
	{ "settle", K_MS, offsetof(struct config, settle_ms), 0, 600000 },
	{ "max-requeues", K_UINT, offsetof(struct config, max_requeues), 0,
	    100 },
	{ "shared", K_BOOL, offsetof(struct config, shared), 0, 1 },
};

static int
cerr(char *why, size_t size, const struct ynode *n, const char *fmt,
    const char *a, const char *b)
{
	int k;

	k = snprintf(why, size, "%s: line %d, column %d: ", CONFIG_FILE,
	    n ? n->line : 0, n ? n->col : 0);
	if (k > 0 && (size_t)k < size)
		snprintf(why + k, size - (size_t)k, fmt, a, b);
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
set_key(struct config *c, const struct key *k, const struct ynode *v,
    char *why, size_t size)
{
	const char *reason;
	uint64_t u;
	int b;

	if (v->type != Y_SCALAR || yamlx_is_null(v))
		return cerr(why, size, v, "key \"%s\": %s", k->name,
		    "expected a single value");
	switch (k->kind) {
	case K_BOOL:
		if (parse_bool(v->str, &b) < 0)
			return cerr(why, size, v, "key \"%s\": %s", k->name,
			    "expected true or false");
		*(int *)((char *)c + k->off) = b;
		return 0;
	case K_MS:
		if (units_parse_ms(v->str, &u, &reason) < 0)
			return cerr(why, size, v, "key \"%s\": %s", k->name,
			    reason);
		break;
	case K_UINT:
		if (units_parse_uint(v->str, k->max, &u, &reason) < 0)
			return cerr(why, size, v, "key \"%s\": %s", k->name,
			    reason);
		break;
	}
	if (u < k->min || u > k->max)
		return cerr(why, size, v, "key \"%s\": %s", k->name,
		    "value out of range");
	if (k->kind == K_UINT)
		*(uint32_t *)((char *)c + k->off) = (uint32_t)u;
	else
		*(uint64_t *)((char *)c + k->off) = u;
	return 0;
}

static int
parse_daemon(struct config *c, const struct ynode *map, char *why, size_t size)
{
	size_t i, j;

	if (yamlx_is_null(map))
		return 0;	/* "daemon:" with every key commented out */
	if (map->type != Y_MAP)
		return cerr(why, size, map, "%s%s", "\"daemon\" must be a mapping",
		    "");
	for (i = 0; i < map->n; i++) {
		const struct ynode *k = map->kids[2 * i];

		for (j = 0; j < sizeof daemon_keys / sizeof daemon_keys[0]; j++)
			if (strcmp(daemon_keys[j].name, k->str) == 0)
				break;
		if (j == sizeof daemon_keys / sizeof daemon_keys[0])
			return cerr(why, size, k, "unknown key \"%s\" in "
			    "\"daemon\"%s", k->str, "");
		if (set_key(c, &daemon_keys[j], map->kids[2 * i + 1], why,
		    size) < 0)
			return -1;
	}
	return 0;
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
		return 0;
	if (root->type != Y_MAP) {
		rc = cerr(why, size, root, "%s%s", "the file must be a mapping",
		    "");
		goto out;
	}
	for (i = 0; i < root->n && rc == 0; i++) {
		const struct ynode *k = root->kids[2 * i];

		if (strcmp(k->str, "daemon") == 0)
			rc = parse_daemon(c, root->kids[2 * i + 1], why, size);
		else
			rc = cerr(why, size, k, "unknown key \"%s\"%s", k->str,
			    " (known: daemon)");
	}
	if (rc == 0 && c->lost_timeout_ms < 2 * c->heartbeat_ms)
		rc = cerr(why, size, root, "%s%s", "lost-timeout must be at "
		    "least twice the heartbeat", "");
out:
	yamlx_free(root);
	return rc;
}

int
config_load(struct config *c, int dfd, char *why, size_t size)
{
	struct buf b = BUF_INIT;
	int rc;

	config_defaults(c);
	if (fsop_read_file(dfd, CONFIG_FILE, CONFIG_MAX, &b, NULL) < 0) {
		if (errno == ENOENT) {
			buf_free(&b);
			return 0;
		}
		snprintf(why, size, "read: %s: %s", CONFIG_FILE, strerror(errno));
		buf_free(&b);
		return -1;
	}
	rc = config_parse(c, b.p, b.len, why, size);
	buf_free(&b);
	return rc;
}

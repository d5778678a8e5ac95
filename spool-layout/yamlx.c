/*
 * yamlx.c - see yamlx.h.  A stack of open collections receives the
 * nodes that libyaml's events describe.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "buf.h"
#include "yamlx.h"

struct builder {
	struct ynode *stack[YAMLX_DEPTH_MAX + 1];
	int	depth;
	size_t	nodes;
	struct ynode *root;
	struct yamlx_err *err;
};

static int
yerr(struct yamlx_err *err, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;

	err->line = m ? (int)m->line + 1 : 0;
	err->col = m ? (int)m->column + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

void
yamlx_free(struct ynode *n)
{
	size_t i, k;

	if (n == NULL)
		return;
	k = n->type == Y_MAP ? n->n * 2 + (size_t)n->half : n->n;
	for (i = 0; i < k; i++)
		yamlx_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static struct ynode *
node_new(enum ynode_type type, const yaml_mark_t *m)
{
	struct ynode *n = xcalloc(1, sizeof *n);

	n->type = type;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return n;
}

static int
map_has_key(const struct ynode *map, const char *key)
{
	size_t i;

	for (i = 0; i < map->n; i++)
		if (map->kids[2 * i]->type == Y_SCALAR &&
		    strcmp(map->kids[2 * i]->str, key) == 0)
			return 1;
	return 0;
}

static void
kids_reserve(struct ynode *top, size_t need)
{
	if (need <= top->cap)
		return;
	top->cap = top->cap ? top->cap * 2 : 8;
	while (top->cap < need)
		top->cap *= 2;
	top->kids = xreallocarray(top->kids, top->cap, sizeof *top->kids);
}

/* Attach n to the innermost open collection (or make it the root). */
static int
attach(struct builder *b, struct ynode *n, const yaml_mark_t *m)
{
	struct ynode *top;
	size_t slots;

	if (++b->nodes > YAMLX_NODES_MAX) {
		yamlx_free(n);
		return yerr(b->err, m, "more than %d YAML nodes",
		    YAMLX_NODES_MAX);
	}
	if (b->depth == 0) {
		if (b->root) {
			yamlx_free(n);
			return yerr(b->err, m, "more than one YAML document");
		}
		b->root = n;
		return 0;
	}
	top = b->stack[b->depth - 1];
	if (top->type == Y_SEQ) {
		kids_reserve(top, top->n + 1);
		top->kids[top->n++] = n;
		return 0;
	}
	/* A map alternates keys and values; n->n counts complete pairs. */
	slots = top->n * 2 + (size_t)top->half;
	if (slots % 2 == 0) {
		if (n->type != Y_SCALAR) {
			yamlx_free(n);
			return yerr(b->err, m, "mapping keys must be scalars");
		}
		if (top->n >= YAMLX_KEYS_MAX) {
			yamlx_free(n);
			return yerr(b->err, m, "more than %d keys in one mapping",
			    YAMLX_KEYS_MAX);
		}
		if (map_has_key(top, n->str)) {
			int rc = yerr(b->err, m, "duplicate key \"%s\"", n->str);

			yamlx_free(n);
			return rc;
		}
		kids_reserve(top, slots + 2);
		top->kids[slots] = n;
		top->half = 1;
	} else {
		top->kids[slots] = n;
		top->half = 0;
		top->n++;
	}
	return 0;
}

static int
handle(struct builder *b, yaml_event_t *ev)
{
	const yaml_mark_t *m = &ev->start_mark;
	struct ynode *n;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return yerr(b->err, m, "YAML aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor)
			return yerr(b->err, m, "YAML anchors are not allowed");
		if (ev->data.scalar.tag && !ev->data.scalar.plain_implicit &&
		    !ev->data.scalar.quoted_implicit)
			return yerr(b->err, m, "YAML tags are not allowed");
		if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length))
			return yerr(b->err, m, "NUL byte in a YAML scalar");
		n = node_new(Y_SCALAR, m);
		n->str = xstrndup((const char *)ev->data.scalar.value,
		    ev->data.scalar.length);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		return attach(b, n, m);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if ((ev->type == YAML_SEQUENCE_START_EVENT ?
		    ev->data.sequence_start.anchor :
		    ev->data.mapping_start.anchor) != NULL)
			return yerr(b->err, m, "YAML anchors are not allowed");
		if ((ev->type == YAML_SEQUENCE_START_EVENT ?
		    !ev->data.sequence_start.implicit :
		    !ev->data.mapping_start.implicit))
			return yerr(b->err, m, "YAML tags are not allowed");
		if (b->depth >= YAMLX_DEPTH_MAX)
			return yerr(b->err, m, "YAML nested deeper than %d",
			    YAMLX_DEPTH_MAX);
		n = node_new(ev->type == YAML_SEQUENCE_START_EVENT ? Y_SEQ :
		    Y_MAP, m);
		if (attach(b, n, m) < 0)
			return -1;
		b->stack[b->depth++] = n;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		b->depth--;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->root)
			return yerr(b->err, m, "more than one YAML document");
		return 0;
	default:
		return 0;
	}
}

/* The 0-based line and column (in bytes) of offset off of data. */
static void
reader_mark(const char *data, size_t len, size_t off, yaml_mark_t *m)
{
	size_t i, bol = 0, line = 0;

	if (off > len)
		off = len;
	for (i = 0; i < off; i++)
		if (data[i] == '\n') {
			line++;
			bol = i + 1;
		}
	m->index = off;
	m->line = line;
	m->column = off - bol;
}

int
yamlx_parse(const char *data, size_t len, struct ynode **root,
    struct yamlx_err *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b;
	int rc = 0, done = 0;

	memset(&b, 0, sizeof b);
	b.err = err;
	memset(err, 0, sizeof *err);
	*root = NULL;
	if (!yaml_parser_initialize(&parser))
		return yerr(err, NULL, "cannot initialise the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			yaml_mark_t at = parser.problem_mark;

			/*
			 * The reader (a byte that is not UTF-8, a control
			 * character) gives the offset of the byte, and no
			 * mark: its line and column, not 1:1.
			 */
			if (parser.error == YAML_READER_ERROR)
				reader_mark(data, len, parser.problem_offset,
				    &at);
			rc = yerr(err, &at, "%s%s%s",
			    parser.problem ? parser.problem : "YAML syntax error",
			    parser.context ? " " : "",
			    parser.context ? parser.context : "");
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = handle(&b, &ev);
		yaml_event_delete(&ev);
		if (rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (rc < 0) {
		/* Unfinished collections are reachable from the root. */
		yamlx_free(b.root);
		return -1;
	}
	if (b.root && yamlx_is_null(b.root)) {
		/* "", "---", a document of comments: nothing */
		yamlx_free(b.root);
		b.root = NULL;
	}
	*root = b.root;
	return 0;
}

struct ynode *
yamlx_get(const struct ynode *map, const char *key)
{
	size_t i;

	if (map == NULL || map->type != Y_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (strcmp(map->kids[2 * i]->str, key) == 0)
			return map->kids[2 * i + 1];
	return NULL;
}

int
yamlx_is_null(const struct ynode *n)
{
	return n->type == Y_SCALAR && n->plain && (n->str[0] == 0 ||
	    strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	    strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

const char *
yamlx_type_name(enum ynode_type t)
{
	return t == Y_SCALAR ? "a scalar" : t == Y_MAP ? "a mapping" :
	    "a list";
}

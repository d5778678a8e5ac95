/*
 * yamlx.h - untrusted YAML into a small bounded tree.
 *
 * Built on libyaml's event API.  Refused, with line and column: aliases
 * and anchors (no alias bombs), tags, more than one document, nesting
 * deeper than YAMLX_DEPTH_MAX, more than YAMLX_NODES_MAX nodes, more
 * than YAMLX_KEYS_MAX keys in one mapping, and duplicate keys.  An
 * empty document ("", "---", only comments) gives a NULL root.  Only the tree is kept, so callers walk
 * plain structs and report errors at the node's position.
 */
#ifndef YAMLX_H
#define YAMLX_H

#include <stddef.h>

#define YAMLX_DEPTH_MAX	16
#define YAMLX_NODES_MAX	100000
#define YAMLX_KEYS_MAX	1024	/* keys in one mapping */

enum ynode_type { Y_SCALAR, Y_MAP, Y_SEQ };

struct ynode {
	enum ynode_type type;
	int	line;		/* 1-based */
	int	col;		/* 1-based */
	int	plain;		/* scalar written without quotes */
	char	*str;		/* scalar text */
	size_t	n;		/* seq: items; map: pairs */
	size_t	cap;		/* allocated slots in kids */
	struct ynode **kids;	/* seq: items; map: key0 val0 key1 val1 ... */
	int	half;		/* map being built: a key waits for its value */
};

struct yamlx_err {
	int	line;
	int	col;
	char	msg[200];
};

/* 0 and *root (NULL for an empty document), or -1 and err. */
int	yamlx_parse(const char *data, size_t len, struct ynode **root,
	    struct yamlx_err *err);
void	yamlx_free(struct ynode *n);

/* Map lookup by key; NULL if absent or n is not a map. */
struct ynode *yamlx_get(const struct ynode *map, const char *key);
/* A plain scalar that YAML reads as null: "", "~", "null". */
int	yamlx_is_null(const struct ynode *n);
const char *yamlx_type_name(enum ynode_type t);

#endif

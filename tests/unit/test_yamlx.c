/*
 * test_yamlx.c - yamlx.c directly: the tree built from YAML (types,
 * scalar text, plain flag, line and column of every node), yamlx_get,
 * yamlx_is_null, yamlx_type_name, empty documents, and every refusal
 * with its message and position: aliases, anchors, tags, several
 * documents, non-scalar keys, duplicate keys, nesting exactly at and
 * beyond YAMLX_DEPTH_MAX, node counts at and beyond YAMLX_NODES_MAX
 * (a flat list of that many is in test_taskfile.c),
 * an alias bomb, and libyaml's own syntax errors.
 */
#include "unit.h"
#include "yamlx.h"

static struct ynode *
parse_ok(const char *text)
{
	struct yamlx_err err;
	struct ynode *root = (struct ynode *)1;

	TCHECK(yamlx_parse(text, strlen(text), &root, &err) == 0,
	    "\"%s\": line %d, column %d: %s", text, err.line, err.col, err.msg);
	return root;
}

static void
assert_scalar(const struct ynode *n, const char *str, int plain, int line,
    int col)
{
	TCHECK(n != NULL, "missing node for \"%s\"", str);
	TCHECK(n->type == Y_SCALAR, "\"%s\": type %d", str, n->type);
	TCHECK(strcmp(n->str, str) == 0, "scalar \"%s\", want \"%s\"", n->str,
	    str);
	TCHECK(n->plain == plain, "\"%s\": plain %d", str, n->plain);
	TCHECK(n->line == line && n->col == col,
	    "\"%s\" at %d:%d, want %d:%d", str, n->line, n->col, line, col);
}

static void
test_tree_shape(void **state)
{
	static const char text[] =
	    "a: 1\n"
	    "b: [x, 'y', \"z\"]\n"
	    "c:\n"
	    "  d: ~\n"
	    "  e:\n"
	    "    - one\n"
	    "    - two words\n"
	    "f: |\n"
	    "  line1\n"
	    "  line2\n";
	struct ynode *root, *b, *c, *e;

	(void)state;
	root = parse_ok(text);
	assert_non_null(root);
	assert_int_equal(root->type, Y_MAP);
	assert_int_equal(root->n, 4);
	assert_int_equal(root->half, 0);
	assert_scalar(root->kids[0], "a", 1, 1, 1);
	assert_scalar(root->kids[1], "1", 1, 1, 4);
	assert_scalar(root->kids[2], "b", 1, 2, 1);
	b = root->kids[3];
	assert_int_equal(b->type, Y_SEQ);
	assert_int_equal(b->n, 3);
	assert_int_equal(b->line, 2);
	assert_int_equal(b->col, 4);
	assert_scalar(b->kids[0], "x", 1, 2, 5);
	assert_scalar(b->kids[1], "y", 0, 2, 8);
	assert_scalar(b->kids[2], "z", 0, 2, 13);
	c = root->kids[5];
	assert_int_equal(c->type, Y_MAP);
	assert_int_equal(c->n, 2);
	assert_scalar(c->kids[0], "d", 1, 4, 3);
	assert_scalar(c->kids[1], "~", 1, 4, 6);
	e = c->kids[3];
	assert_int_equal(e->type, Y_SEQ);
	assert_int_equal(e->n, 2);
	assert_scalar(e->kids[0], "one", 1, 6, 7);
	assert_scalar(e->kids[1], "two words", 1, 7, 7);
	assert_scalar(root->kids[7], "line1\nline2\n", 0, 8, 4);

	/* yamlx_get */
	assert_ptr_equal(yamlx_get(root, "a"), root->kids[1]);
	assert_ptr_equal(yamlx_get(root, "c"), c);
	assert_ptr_equal(yamlx_get(c, "e"), e);
	assert_null(yamlx_get(root, "d"));	/* not at this level */
	assert_null(yamlx_get(root, "A"));
	assert_null(yamlx_get(root, ""));
	assert_null(yamlx_get(b, "x"));		/* not a map */
	assert_null(yamlx_get(root->kids[1], "a"));
	assert_null(yamlx_get(NULL, "a"));
	yamlx_free(root);
}

static void
test_is_null(void **state)
{
	static const struct {
		const char *text;	/* "k: VALUE" */
		int null;
	} rows[] = {
		{ "k:\n",		1 },
		{ "k: ~\n",		1 },
		{ "k: null\n",		1 },
		{ "k: Null\n",		1 },
		{ "k: NULL\n",		1 },
		{ "k: ''\n",		0 },	/* quoted: a string */
		{ "k: \"null\"\n",	0 },
		{ "k: 'null'\n",	0 },
		{ "k: nil\n",		0 },
		{ "k: nULL\n",		0 },
		{ "k: 0\n",		0 },
		{ "k: []\n",		0 },
		{ "k: {}\n",		0 },
	};
	struct ynode *root, *v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		root = parse_ok(rows[i].text);
		v = yamlx_get(root, "k");
		TCHECK(v != NULL, "\"%s\": no value", rows[i].text);
		TCHECK(yamlx_is_null(v) == rows[i].null, "\"%s\": is_null %d",
		    rows[i].text, yamlx_is_null(v));
		yamlx_free(root);
	}
	assert_string_equal(yamlx_type_name(Y_SCALAR), "a scalar");
	assert_string_equal(yamlx_type_name(Y_MAP), "a mapping");
	assert_string_equal(yamlx_type_name(Y_SEQ), "a list");
}

static void
test_empty_documents(void **state)
{
	static const char *const rows[] = {
		"", "\n", "   \n\n", "# only a comment\n", "---\n", "--- \n...\n",
	};
	struct yamlx_err err;
	struct ynode *root;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		root = (struct ynode *)1;
		TCHECK(yamlx_parse(rows[i], strlen(rows[i]), &root, &err) == 0,
		    "row %zu: %s", i, err.msg);
		if (root != NULL) {
			struct ynode *r = root;

			root = NULL;
			print_error("%s:%d: empty document \"%s\" gave a root "
			    "node: %s \"%s\" (yamlx.h: NULL for an empty "
			    "document)\n", __FILE__, __LINE__, rows[i],
			    yamlx_type_name(r->type), r->str ? r->str : "");
			yamlx_free(r);
			fail();
		}
	}
}

static void
test_refusals(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
		int line, col;
	} rows[] = {
		{ "a: &x 1\nb: *x\n",		"anchors are not allowed", 1, 4 },
		{ "a: &x {b: 1}\n",		"anchors are not allowed", 1, 4 },
		{ "a: &x [1]\n",		"anchors are not allowed", 1, 4 },
		{ "command: *x\n",		"aliases are not allowed", 1, 10 },
		{ "- 1\n- *x\n",		"aliases are not allowed", 2, 3 },
		{ "command: !!str echo\n",	"tags are not allowed", 1, 10 },
		{ "command: !foo [a]\n",	"tags are not allowed", 1, 10 },
		{ "command: !!map {a: b}\n",	"tags are not allowed", 1, 10 },
		{ "!!map\na: 1\n",		"tags are not allowed", 1, 1 },
		{ "a: 1\n---\nb: 2\n",		"more than one YAML document", 2, 1 },
		{ "a: [1]\n---\n",		"more than one YAML document", 2, 1 },
		{ "? [a]\n: 1\n",		"mapping keys must be scalars", 1, 3 },
		{ "? {a: 1}\n: 1\n",		"mapping keys must be scalars", 1, 3 },
		{ "a: 1\nb: 2\na: 3\n",		"duplicate key \"a\"", 3, 1 },
		{ "m:\n  x: 1\n  x: 2\n",	"duplicate key \"x\"", 3, 3 },
		{ "{a: 1, a: 2}\n",		"duplicate key \"a\"", 1, 8 },
		{ "a: [1\n",			"did not find expected", 2, 1 },
		{ "a: 1\n  b: 2\n",		"", 2, 4 },
		{ "\t- a\n",			"cannot start any token", 1, 1 },
		{ "a: \"unterminated\n",	"", 2, 1 },
		/* the reader's refusals, at the byte (Latin-1, a control) */
		{ "a: 1\nb: 2\nc: \"caf\xe9\"\n", "UTF-8 octet", 3, 9 },
		{ "a: 1\nb: 2\n\x01\n",	"control characters", 3, 1 },
		{ "\xff: 1\n",			"UTF-8 octet", 1, 1 },
	};
	struct yamlx_err err;
	struct ynode *root;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		root = (struct ynode *)1;
		TCHECK(yamlx_parse(rows[i].text, strlen(rows[i].text), &root,
		    &err) == -1, "row %zu (\"%s\") accepted", i, rows[i].text);
		TCHECK(root == NULL, "row %zu: root left set", i);
		TCHECK(err.msg[0] && unit_contains(err.msg, rows[i].msg),
		    "row %zu: \"%s\", want \"%s\"", i, err.msg, rows[i].msg);
		TCHECK(err.line == rows[i].line && err.col == rows[i].col,
		    "row %zu: at %d:%d, want %d:%d", i, err.line, err.col,
		    rows[i].line, rows[i].col);
	}
}

static char *
nested(int depth, const char *open, const char *close)
{
	struct buf b = BUF_INIT;
	int i;

	for (i = 0; i < depth; i++)
		buf_puts(&b, open);
	for (i = 0; i < depth; i++)
		buf_puts(&b, close);
	buf_putc(&b, '\n');
	return buf_steal(&b);
}

static void
test_depth_limit(void **state)
{
	struct yamlx_err err;
	struct ynode *root, *n;
	char *text;
	int d;

	(void)state;
	/* Exactly YAMLX_DEPTH_MAX nested lists: fine, and all there. */
	text = nested(YAMLX_DEPTH_MAX, "[", "]");
	root = parse_ok(text);
	free(text);
	for (n = root, d = 1; n->n == 1; n = n->kids[0], d++)
		assert_int_equal(n->type, Y_SEQ);
	assert_int_equal(d, YAMLX_DEPTH_MAX);
	yamlx_free(root);

	/* One more: refused at the column of the 17th bracket. */
	text = nested(YAMLX_DEPTH_MAX + 1, "[", "]");
	assert_int_equal(yamlx_parse(text, strlen(text), &root, &err), -1);
	free(text);
	assert_contains(err.msg, "nested deeper than 16");
	assert_int_equal(err.line, 1);
	assert_int_equal(err.col, YAMLX_DEPTH_MAX + 1);

	/* Mappings count too; and deep block nesting, by lines. */
	text = nested(YAMLX_DEPTH_MAX + 1, "{a: ", "}");
	assert_int_equal(yamlx_parse(text, strlen(text), &root, &err), -1);
	free(text);
	assert_contains(err.msg, "nested deeper");

	/* A thousand levels: refused, not a stack overflow. */
	text = nested(1000, "[", "]");
	assert_int_equal(yamlx_parse(text, strlen(text), &root, &err), -1);
	free(text);
	assert_contains(err.msg, "nested deeper");
}

/*
 * A flow structure of exactly `total` nodes: a list of 100 lists of
 * 100 lists of scalars (so no single list is long; the limit counts
 * every node in the document).
 */
static char *
nodes_doc(size_t total)
{
	const size_t outer = 100, mid = 100, lists = 1 + outer + outer * mid;
	size_t scalars = total - lists, i, j, k, n, cell = 0;
	struct buf b = BUF_INIT;

	buf_putc(&b, '[');
	for (i = 0; i < outer; i++) {
		buf_puts(&b, i ? ", [" : "[");
		for (j = 0; j < mid; j++, cell++) {
			/* Spread the scalars evenly over the inner lists. */
			n = scalars / (outer * mid) +
			    (cell < scalars % (outer * mid));
			buf_puts(&b, j ? ", [" : "[");
			for (k = 0; k < n; k++)
				buf_puts(&b, k ? ", a" : "a");
			buf_putc(&b, ']');
		}
		buf_putc(&b, ']');
	}
	buf_puts(&b, "]\n");
	return buf_steal(&b);
}

static size_t
count_nodes(const struct ynode *n)
{
	size_t i, c = 1, k = n->type == Y_MAP ? 2 * n->n : n->n;

	for (i = 0; n->type != Y_SCALAR && i < k; i++)
		c += count_nodes(n->kids[i]);
	return c;
}

static void
test_node_limit(void **state)
{
	struct yamlx_err err;
	struct ynode *root;
	char *text;

	(void)state;
	/* Exactly YAMLX_NODES_MAX nodes: fine, and all of them kept. */
	text = nodes_doc(YAMLX_NODES_MAX);
	root = parse_ok(text);
	free(text);
	assert_non_null(root);
	assert_int_equal(root->n, 100);
	assert_int_equal(count_nodes(root), YAMLX_NODES_MAX);
	yamlx_free(root);

	/* One more node: refused. */
	text = nodes_doc(YAMLX_NODES_MAX + 1);
	assert_int_equal(yamlx_parse(text, strlen(text), &root, &err), -1);
	free(text);
	assert_null(root);
	assert_contains(err.msg, "more than 100000 YAML nodes");
	assert_int_equal(err.line, 1);
	assert_true(err.col > 1);
}

/* The classic "billion laughs": refused at its first anchor. */
static void
test_alias_bomb(void **state)
{
	static const char bomb[] =
	    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
	    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
	    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
	    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
	    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
	struct yamlx_err err;
	struct ynode *root;

	(void)state;
	assert_int_equal(yamlx_parse(bomb, strlen(bomb), &root, &err), -1);
	assert_null(root);
	assert_contains(err.msg, "anchors are not allowed");
	assert_int_equal(err.line, 1);
}

/* NUL bytes and invalid UTF-8 never reach the tree. */
static void
test_binary_input(void **state)
{
	static const struct {
		const char *data;
		size_t len;
	} rows[] = {
		{ "a: b\0c\n",		7 },
		{ "a: \"b\\0c\"\n",	10 },	/* escaped NUL */
		{ "\xff\xfe\x80",	3 },
		{ "a: \xc3\x28\n",	6 },	/* bad UTF-8 */
		{ "\x00\x01\x02\x03",	4 },
	};
	struct yamlx_err err;
	struct ynode *root;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		root = (struct ynode *)1;
		TCHECK(yamlx_parse(rows[i].data, rows[i].len, &root, &err) == -1,
		    "row %zu accepted", i);
		TCHECK(root == NULL && err.msg[0], "row %zu: no message", i);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_shape),
		cmocka_unit_test(test_is_null),
		cmocka_unit_test(test_empty_documents),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_node_limit),
		cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_binary_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

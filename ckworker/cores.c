/*
 * cores.c - see cores.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cores.h"

struct grp {
	uint32_t id;
	uint32_t first;		/* lowest unit index in the group */
	uint32_t nfree;
};

static int
grp_cmp(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The groups of one level, sorted by ID; returns how many. */
static size_t
groups_of(const struct cores_unit *u, size_t nu, const unsigned char *busy,
    int level, struct grp *g)
{
	size_t i, k = 0;

	for (i = 0; i < nu; i++) {
		g[i].id = u[i].group[level];
		g[i].first = (uint32_t)i;
		g[i].nfree = busy[i] ? 0 : 1;
	}
	qsort(g, nu, sizeof *g, grp_cmp);
	for (i = 0; i < nu; i++) {
		if (k > 0 && g[k - 1].id == g[i].id) {
			g[k - 1].nfree += g[i].nfree;
			continue;
		}
		g[k++] = g[i];
	}
	return k;
}

static const struct grp *
grp_find(const struct grp *g, size_t ng, uint32_t id)
{
	size_t lo = 0, hi = ng, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g[mid].id == id)
			return &g[mid];
		if (g[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Free units of the group at level l that contains unit i. */
static uint32_t
enclosing_free(const struct cores_unit *u, struct grp *const *gl,
    const size_t *ngl, int l, uint32_t i)
{
	const struct grp *g = grp_find(gl[l], ngl[l], u[i].group[l]);

	return g ? g->nfree : 0;
}

/* -1 if group a (level l) fits better than b, 1 if worse. */
static int
better(const struct cores_unit *u, struct grp *const *gl, const size_t *ngl,
    int l, const struct grp *a, const struct grp *b)
{
	uint32_t fa, fb;
	int k;

	if (a->nfree != b->nfree)
		return a->nfree < b->nfree ? -1 : 1;
	for (k = l - 1; k >= 0; k--) {
		fa = enclosing_free(u, gl, ngl, k, a->first);
		fb = enclosing_free(u, gl, ngl, k, b->first);
		if (fa != fb)
			return fa < fb ? -1 : 1;
	}
	return a->first < b->first ? -1 : 1;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Packages by free units, most first, then by position. */
static int
spread_cmp(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;

	if (x->nfree != y->nfree)
		return x->nfree > y->nfree ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

int
cores_pick(const struct cores_unit *u, size_t nu, const unsigned char *busy,
    uint32_t n, uint32_t *out)
{
	struct grp *gl[CORES_LEVELS], *best;
	size_t ngl[CORES_LEVELS], i, g, nfree = 0;
	uint32_t got = 0;
	int l, rc = 0;

	for (i = 0; i < nu; i++)
		nfree += busy[i] == 0;
	if (n == 0)
		return 0;
	if (nfree < n)
		return -1;
	for (l = 0; l < CORES_LEVELS; l++) {
		gl[l] = xreallocarray(NULL, nu, sizeof *gl[l]);
		ngl[l] = groups_of(u, nu, busy, l, gl[l]);
	}
	for (l = CORES_LEVELS - 1; l >= 0; l--) {
		best = NULL;
		for (g = 0; g < ngl[l]; g++)
			if (gl[l][g].nfree >= n && (best == NULL ||
			    better(u, gl, ngl, l, &gl[l][g], best) < 0))
				best = &gl[l][g];
		if (best == NULL)
			continue;
		for (i = best->first; i < nu && got < n; i++)
			if (!busy[i] && u[i].group[l] == best->id)
				out[got++] = (uint32_t)i;
		goto done;
	}
	/* no package holds n: the fullest-free packages first */
	qsort(gl[0], ngl[0], sizeof *gl[0], spread_cmp);
	for (g = 0; g < ngl[0] && got < n; g++)
		for (i = gl[0][g].first; i < nu && got < n; i++)
			if (!busy[i] && u[i].group[0] == gl[0][g].id)
				out[got++] = (uint32_t)i;
	qsort(out, got, sizeof *out, u32_cmp);
done:
	if (got < n)	/* cannot happen: n free units exist */
		rc = -1;
	for (l = 0; l < CORES_LEVELS; l++)
		free(gl[l]);
	return rc;
}

int
cpulist_parse(const char *s, int **cpus, const char **why)
{
	unsigned char *seen;
	unsigned long a, b;
	char *end;
	int n = 0, i;

	seen = xcalloc(CORES_CPU_MAX, 1);
	*why = "bad CPU list (use e.g. 0-3,8,10-11)";
	while (isspace((unsigned char)*s))
		s++;
	for (;;) {
		if (!isdigit((unsigned char)*s))
			goto fail;
		a = strtoul(s, &end, 10);
		b = a;
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)s[1]))
				goto fail;
			b = strtoul(s + 1, &end, 10);
			s = end;
		}
		if (a > b || b >= CORES_CPU_MAX) {
			*why = a > b ? "bad CPU range" : "CPU number too large";
			goto fail;
		}
		for (; a <= b; a++)
			seen[a] = 1;
		if (*s != ',')
			break;
		s++;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s != 0)
		goto fail;
	for (i = 0; i < CORES_CPU_MAX; i++)
		n += seen[i];
	*cpus = xreallocarray(NULL, (size_t)n, sizeof **cpus);
	for (i = 0, n = 0; i < CORES_CPU_MAX; i++)
		if (seen[i])
			(*cpus)[n++] = i;
	free(seen);
	return n;
fail:
	free(seen);
	return -1;
}

char *
cpulist_format(const int *cpus, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i, j;

	if (n == 0)
		return xstrdup("");
	for (i = 0; i < n; i = j + 1) {
		for (j = i; j + 1 < n && cpus[j + 1] == cpus[j] + 1; j++)
			;
		if (b.len)
			buf_putc(&b, ',');
		buf_put_int(&b, cpus[i]);
		if (j > i) {
			buf_putc(&b, '-');
			buf_put_int(&b, cpus[j]);
		}
	}
	return buf_steal(&b);
}

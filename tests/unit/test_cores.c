/*
 * test_cores.c - ckworker/cores.c: choosing cores for a task on made-up
 * topologies (cores_pick: best fit in the narrowest group that holds
 * the task, big free groups kept whole, spreading over packages only
 * when no package holds it, never a busy core, refusal when too few are
 * free) and the kernel's CPU list format (cpulist_parse, cpulist_format
 * and their round trip).
 */
#include "unit.h"
#include "../../ckworker/cores.h"

/*
 * A machine of np packages, each of nn NUMA nodes, each of nl3 L3
 * caches, each of nc cores with their own L2; unit i is core i, PU i.
 */
static struct cores_unit *
machine(uint32_t np, uint32_t nn, uint32_t nl3, uint32_t nc, size_t *nu)
{
	struct cores_unit *u;
	uint32_t p, n, l, c, i = 0;

	*nu = (size_t)np * nn * nl3 * nc;
	u = xcalloc(*nu, sizeof *u);
	for (p = 0; p < np; p++)
		for (n = 0; n < nn; n++)
			for (l = 0; l < nl3; l++)
				for (c = 0; c < nc; c++, i++) {
					u[i].group[0] = p;
					u[i].group[1] = p * nn + n;
					u[i].group[2] = (p * nn + n) * nl3 + l;
					u[i].group[3] = i;
					u[i].npu = 1;
					u[i].pu[0] = (uint16_t)i;
				}
	return u;
}

/* busy from a string: '1' busy, anything else free */
static unsigned char *
busy_of(const char *s, size_t nu)
{
	unsigned char *b = xcalloc(nu, 1);
	size_t i;

	for (i = 0; i < nu && s[i]; i++)
		b[i] = s[i] == '1';
	return b;
}

/* the picked indices as "0,1,5" */
static char *
picked(const uint32_t *out, uint32_t n)
{
	struct buf b = BUF_INIT;
	uint32_t i;

	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%u", i ? "," : "", out[i]);
	return b.p ? buf_steal(&b) : xstrdup("");
}

static void
test_pick_table(void **state)
{
	/* 2 packages x 2 NUMA nodes x 1 L3 x 4 cores = 16 cores */
	static const struct {
		const char *busy;	/* 16 chars */
		uint32_t n;
		const char *want;
		const char *why;
	} rows[] = {
		{ "0000000000000000", 1, "0", "empty: the first core" },
		{ "0000000000000000", 4, "0,1,2,3", "a whole NUMA node" },
		{ "0000000000000000", 8, "0,1,2,3,4,5,6,7", "a whole package" },
		{ "0000000000000000", 16, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
		    "the whole machine" },
		{ "1000000000000000", 1, "1", "packs next to the busy core" },
		{ "1000000000000000", 4, "4,5,6,7",
		    "a free NUMA node, not 3 + 1 across nodes" },
		{ "1110000000000000", 1, "3",
		    "fills the fullest node, keeps free nodes whole" },
		{ "1110111100000000", 2, "8,9",
		    "node 0 and 1 lack 2: a node of the emptiest package" },
		{ "1110111000000000", 2, "8,9",
		    "a node that holds both, not the leftovers 3 and 7" },
		{ "0000111111111111", 4, "0,1,2,3", "the only free node" },
		{ "1111111111110000", 3, "12,13,14", "first free cores of node 3" },
		{ "1111111011111110", 2, "7,15",
		    "no package holds 2: one from each" },
		{ "1100110011001100", 8, "2,3,6,7,10,11,14,15",
		    "8 over two packages" },
		{ "0111111101111111", 2, "0,8", "spread: fullest-free first" },
	};
	struct cores_unit *u;
	unsigned char *b;
	uint32_t out[16];
	size_t nu, i;
	char *got;
	int nfail = 0;

	(void)state;
	u = machine(2, 2, 1, 4, &nu);
	assert_int_equal(nu, 16);
	for (i = 0; i < NELEM(rows); i++) {
		b = busy_of(rows[i].busy, nu);
		memset(out, 0xff, sizeof out);
		TEXPECT(nfail, cores_pick(u, nu, b, rows[i].n, out) == 0,
		    "row %zu (%s): refused", i, rows[i].why);
		got = picked(out, rows[i].n);
		TEXPECT(nfail, strcmp(got, rows[i].want) == 0,
		    "row %zu (%s): busy %s, %u cores: got %s, want %s", i,
		    rows[i].why, rows[i].busy, rows[i].n, got, rows[i].want);
		free(got);
		free(b);
	}
	free(u);
	assert_int_equal(nfail, 0);
}

/* Whatever the busy pattern, the picks are free, distinct, ascending. */
static void
test_pick_never_busy(void **state)
{
	struct cores_unit *u;
	unsigned char *b;
	uint32_t out[24], n, k;
	size_t nu, i, nfree;
	unsigned seed = 12345;
	int round;

	(void)state;
	u = machine(2, 1, 3, 4, &nu);	/* 24 cores, 3 L3 per package */
	b = xcalloc(nu, 1);
	for (round = 0; round < 2000; round++) {
		for (i = 0, nfree = 0; i < nu; i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = (seed >> 16) % 3 == 0;
			nfree += !b[i];
		}
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 24;
		if (n > nfree) {
			assert_int_equal(cores_pick(u, nu, b, n, out), -1);
			continue;
		}
		assert_int_equal(cores_pick(u, nu, b, n, out), 0);
		for (k = 0; k < n; k++) {
			TCHECK(out[k] < nu, "index %u out of range", out[k]);
			TCHECK(!b[out[k]], "round %d: busy core %u picked",
			    round, out[k]);
			TCHECK(k == 0 || out[k] > out[k - 1],
			    "round %d: not ascending/distinct", round);
		}
	}
	free(b);
	free(u);
}

static void
test_pick_refuses_and_edge_cases(void **state)
{
	struct cores_unit *u;
	unsigned char *b;
	uint32_t out[4] = { 7, 7, 7, 7 };
	size_t nu;

	(void)state;
	u = machine(1, 1, 1, 4, &nu);
	b = busy_of("1101", nu);
	assert_int_equal(cores_pick(u, nu, b, 2, out), -1);
	assert_int_equal(out[0], 7);	/* untouched */
	assert_int_equal(cores_pick(u, nu, b, 1, out), 0);
	assert_int_equal(out[0], 2);
	assert_int_equal(cores_pick(u, nu, b, 0, out), 0);
	free(b);
	b = busy_of("1111", nu);
	assert_int_equal(cores_pick(u, nu, b, 1, out), -1);
	free(b);
	free(u);
	assert_int_equal(cores_pick(NULL, 0, NULL, 1, out), -1);
}

/* Hyperthreads: a unit with two PUs is one core. */
static void
test_pick_smt_units(void **state)
{
	struct cores_unit u[4];
	unsigned char b[4] = { 0, 1, 0, 0 };
	uint32_t out[2];
	int i;

	(void)state;
	memset(u, 0, sizeof u);
	for (i = 0; i < 4; i++) {
		u[i].group[0] = 0;
		u[i].group[1] = 0;
		u[i].group[2] = 0;
		u[i].group[3] = (uint32_t)i / 2;	/* 2 cores share an L2 */
		u[i].npu = 2;
		u[i].pu[0] = (uint16_t)i;
		u[i].pu[1] = (uint16_t)(i + 4);
	}
	/* 2 cores: the L2 pair that is whole (2,3), not 0 + 2 */
	assert_int_equal(cores_pick(u, 4, b, 2, out), 0);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 3);
	/* 1 core: best fit, the half-used L2 */
	assert_int_equal(cores_pick(u, 4, b, 1, out), 0);
	assert_int_equal(out[0], 0);
}

static void
test_cpulist_parse(void **state)
{
	static const struct {
		const char *in;
		const char *want;	/* formatted back */
		int n;
	} ok[] = {
		{ "0", "0", 1 },
		{ "0-3", "0-3", 4 },
		{ "0-3,8,10-11", "0-3,8,10-11", 7 },
		{ "3,1,2", "1-3", 3 },
		{ "1,1,1-2", "1-2", 2 },
		{ " 4-5 ", "4-5", 2 },
		{ "0,2,4,6", "0,2,4,6", 4 },
		{ "8191", "8191", 1 },
	};
	static const char *const bad[] = {
		"", "-", "a", "1-", "-1", "3-1", "0,,1", "0,", "1 2", "8192",
		"0-8192", "99999999999999999999", "1.5", "0x1",
	};
	const char *why;
	int *cpus, n, nfail = 0;
	char *s;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(ok); i++) {
		why = NULL;
		n = cpulist_parse(ok[i].in, &cpus, &why);
		TEXPECT(nfail, n == ok[i].n, "\"%s\": %d CPUs, want %d (%s)",
		    ok[i].in, n, ok[i].n, why ? why : "");
		if (n < 0)
			continue;
		s = cpulist_format(cpus, (size_t)n);
		TEXPECT(nfail, strcmp(s, ok[i].want) == 0,
		    "\"%s\" formats as \"%s\", want \"%s\"", ok[i].in, s,
		    ok[i].want);
		free(s);
		free(cpus);
	}
	for (i = 0; i < NELEM(bad); i++) {
		why = NULL;
		cpus = NULL;
		n = cpulist_parse(bad[i], &cpus, &why);
		TEXPECT(nfail, n == -1 && why && *why,
		    "\"%s\" accepted (%d)", bad[i], n);
		if (n >= 0)
			free(cpus);
	}
	s = cpulist_format(NULL, 0);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(nfail, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_table),
		cmocka_unit_test(test_pick_never_busy),
		cmocka_unit_test(test_pick_refuses_and_edge_cases),
		cmocka_unit_test(test_pick_smt_units),
		cmocka_unit_test(test_cpulist_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_jobscript.c - jobscript.c and jobrec.c: shell quoting, the
 * directives each backend writes (and job-directives-skip, duplicates
 * of job-extra-directives, export-env), what cannot be written (arrays
 * of the local backend), the files a job's output lands in, and job
 * records: encode, decode, refusal of bad records, array bases.  The
 * whole scripts are compared with golden files by t_jobscript.sh.
 */
#include "unit.h"
#include "config.h"
#include "jobrec.h"
#include "jobscript.h"

static char *
quote(const char *s)
{
	struct buf b = BUF_INIT;

	shell_quote(&b, s);
	return buf_steal(&b);
}

static void
test_shell_quote(void **state)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{ "plain/path-1.2", "plain/path-1.2" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "", "''" },
		{ "$HOME", "'$HOME'" },
		{ "a;rm -rf /", "'a;rm -rf /'" },
		{ "x=y,z:w@h%", "x=y,z:w@h%" },
	};
	size_t i;
	char *q;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		q = quote(rows[i].in);
		TCHECK(strcmp(q, rows[i].want) == 0, "row %zu: got %s", i, q);
		free(q);
	}
}

/* A kind from YAML text (cluster section), and its script. */
static char *
script_of(const char *yaml, unsigned array, int *rc, char *why, size_t size)
{
	struct config c;
	struct buf b = BUF_INIT;

	if (config_parse(&c, yaml, strlen(yaml), why, size) < 0) {
		*rc = -2;
		return NULL;
	}
	*rc = jobscript_render(&b, &c.kinds[0], "/sp", "/bin/ckworker",
	    array, why, size);
	config_free(&c);
	return buf_steal(&b);
}

static void
test_directives(void **state)
{
	static const struct {
		const char *yaml;
		unsigned array;
		const char *has;	/* a line the script has */
		const char *hasnot;	/* and one it has not */
	} rows[] = {
		{ "cluster: {backend: slurm, memory: 1000000}\n", 1,
		    "#SBATCH --mem=1M\n", "--array" },
		/* dask's rule: a line containing the text is dropped */
		{ "cluster: {backend: slurm, job-directives-skip: [--mem, "
		    "\"-t \"], memory: 1G}\n", 1, "#SBATCH --cpus-per-task=1\n",
		    "#SBATCH -t " },
		{ "cluster: {backend: slurm, job-directives-skip: [--mem, "
		    "\"-t \"], memory: 1G}\n", 1, "#SBATCH -n 1\n",
		    "#SBATCH --mem" },
		{ "cluster: {backend: slurm, export-env: false}\n", 3,
		    "#SBATCH --export=NONE\n#SBATCH --array=1-3\n", "ALL" },
		{ "cluster: {backend: slurm, job-extra-directives: [-n 1]}\n",
		    1, "#SBATCH -n 1\n#SBATCH --cpus", "#SBATCH -n 1\n#SBATCH -n 1" },
		{ "cluster: {backend: sge, cores: 4, parallel-environment: mpi}"
		    "\n", 1, "#$ -pe mpi 4\n", "-t 1-" },
		{ "cluster: {backend: sge, export-env: false}\n", 2,
		    "#$ -t 1-2\n", "#$ -V" },
		{ "cluster: {backend: pbs, cores: 2, gpus: 1, memory: 2MiB}\n",
		    1, "#PBS -l select=1:ncpus=2:mem=2mb:ngpus=1\n", "-J" },
		{ "cluster: {backend: pbs, resource-spec: \"nodes=1:ppn=4\"}\n",
		    1, "#PBS -l nodes=1:ppn=4\n", "select=" },
		{ "cluster: {backend: lsf, walltime: \"00:01:30\"}\n", 1,
		    "#BSUB -W 00:02\n", "-env" },
		{ "cluster: {backend: lsf, export-env: false, name: w}\n", 4,
		    "#BSUB -J \"w[1-4]\"\n", "#BSUB -J w\n" },
		{ "cluster: {backend: lsf, export-env: false}\n", 1,
		    "#BSUB -env \"none\"\n", "[1-" },
		{ "cluster: {backend: local, env: {A: \"it's\"}}\n", 1,
		    "export A='it'\\''s'\n", "#SBATCH" },
		/* local-directory: variables and "~" expanded on the node,
		 * nothing else */
		{ "cluster: {backend: slurm, local-directory: /scr/$USER}\n", 1,
		    "export TMPDIR=/scr/\"${USER:?not set on this node, needed "
		    "by local-directory}\"\n", "--array" },
		{ "cluster: {backend: slurm, local-directory: \"${TMPDIR}\"}\n",
		    1, "export TMPDIR=\"${TMPDIR:?", "export TMPDIR='" },
		{ "cluster: {backend: slurm, local-directory: \"~/t x\"}\n", 1,
		    "export TMPDIR=\"${HOME:?not set on this node, needed by "
		    "local-directory}\"'/t x'\n", "TMPDIR=~" },
		{ "cluster: {backend: slurm, local-directory: \"/a/$(id)/$1\"}\n",
		    1, "export TMPDIR='/a/$(id)/$1'\nmkdir -p \"$TMPDIR\" || "
		    "exit 1\n", "case" },
		{ "cluster: {backend: slurm, walltime: \"01:00:00\", gpus: 1}\n",
		    1, "--gpus 1 --walltime $((3600 - ($(date +%s) - ckspool_t0)))"
		    " ", "--processes" },
		{ "cluster: {backend: slurm, cores: 4, processes: 2, "
		    "walltime: 0}\n", 1,
		    "--cores 4 --processes 2 ", "ckspool_t0=$(date +%s)\n" },
		/* a log directory (a spool) whose path has a space or a
		 * "#" is one argument, in double quotes */
		{ "cluster: {backend: slurm, log-directory: \"/my logs/#1\"}\n",
		    2, "#SBATCH -o \"/my logs/#1/ckworker-%A_%a.out\"\n"
		    "#SBATCH -e \"/my logs/#1/ckworker-%A_%a.err\"\n",
		    "-o /my" },
		{ "cluster: {backend: sge, log-directory: \"/my logs\"}\n", 1,
		    "#$ -o \"/my logs/\"\n", "-o /my" },
		{ "cluster: {backend: pbs, log-directory: \"/my logs\"}\n", 1,
		    "#PBS -o \"/my logs/\"\n", "-o /my" },
		{ "cluster: {backend: lsf, log-directory: \"/my logs\"}\n", 1,
		    "#BSUB -o \"/my logs/ckworker-%J.out\"\n"
		    "#BSUB -e \"/my logs/ckworker-%J.err\"\n", "-o /my" },
		{ "cluster: {backend: slurm, log-directory: /logs}\n", 1,
		    "#SBATCH -o /logs/ckworker-%j.out\n", "\"/logs" },
	};
	char why[300], *s;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		s = script_of(rows[i].yaml, rows[i].array, &rc, why, sizeof why);
		TCHECK(rc == 0, "row %zu: %s", i, why);
		TCHECK(s != NULL, "row %zu: no script", i);
		TCHECK(unit_contains(s, rows[i].has), "row %zu lacks \"%s\":\n%s",
		    i, rows[i].has, s ? s : "");
		TCHECK(!unit_contains(s, rows[i].hasnot), "row %zu has \"%s\":"
		    "\n%s", i, rows[i].hasnot, s ? s : "");
		free(s);
	}
	s = script_of("cluster: {backend: local}\n", 2, &rc, why, sizeof why);
	assert_int_equal(rc, -1);
	assert_string_equal(why, "the local backend has no job arrays");
	free(s);
	/* what no directive's quoting carries is refused, saying why */
	s = script_of("cluster: {backend: sge, log-directory: \"/a\\\"b\"}\n",
	    1, &rc, why, sizeof why);
	assert_int_equal(rc, -1);
	TCHECK(unit_contains(why, "the log directory \"/a\"b\" has a double "
	    "quote"), "why: %s", why);
	free(s);
	/*
	 * a directive longer than a line holds is refused, not cut (a
	 * cut job-extra line would lose its newline as well)
	 */
	{
		static const char *const tails[] = {
			"resource-spec: ", "job-extra-directives: [",
			"log-directory: /",
		};
		struct buf y = BUF_INIT;
		size_t t;

		for (t = 0; t < NELEM(tails); t++) {
			buf_reset(&y);
			buf_printf(&y, "cluster: {backend: pbs, %s", tails[t]);
			for (i = 0; i < 1100; i++)
				buf_putc(&y, 'x');
			buf_puts(&y, t == 1 ? "]}\n" : "}\n");
			s = script_of(y.p, 1, &rc, why, sizeof why);
			TCHECK(rc == -1, "tail %zu: accepted:\n%s", t,
			    s ? s : "");
			TCHECK(unit_contains(why, "more than the 1023 a directive "
			    "line may have"), "tail %zu: why: %s", t, why);
			free(s);
		}
		buf_free(&y);
	}
}

static void
test_log_files(void **state)
{
	static const struct {
		enum backend b;
		const char *id;
		int which;
		const char *want;	/* NULL: none */
	} rows[] = {
		{ BK_SLURM, "12_3", 0, "/logs/w-12_3.err" },
		{ BK_SLURM, "12", 1, "/logs/w-12.out" },
		{ BK_SGE, "7.2", 0, "/logs/w.o7.2" },
		{ BK_SGE, "7", 1, NULL },
		{ BK_PBS, "5", 0, "/logs/w.e5" },
		{ BK_PBS, "5", 1, "/logs/w.o5" },
		{ BK_LSF, "9.4", 0, "/logs/w-9.4.err" },
		{ BK_LOCAL, "local.99", 0, "/logs/w-local.99.log" },
		{ BK_LOCAL, "local.99", 1, NULL },
	};
	struct kind k;
	struct buf d = BUF_INIT;
	char path[256];
	size_t i;
	int rc;

	(void)state;
	memset(&k, 0, sizeof k);
	k.job_name = "w";
	k.log_dir = "/logs";
	for (i = 0; i < NELEM(rows); i++) {
		k.backend = rows[i].b;
		rc = jobscript_log_file(&k, "/sp", rows[i].id, rows[i].which,
		    path, sizeof path);
		if (rows[i].want == NULL)
			TCHECK(rc == -1, "row %zu: %s", i, path);
		else
			TCHECK(rc == 0 && strcmp(path, rows[i].want) == 0,
			    "row %zu: got %s", i, path);
	}
	/* without a log directory: the spool's log/ */
	k.log_dir = NULL;
	jobscript_log_dir(&k, "/sp", &d);
	assert_string_equal(d.p, "/sp/log");
	buf_free(&d);
}

static void
test_job_records(void **state)
{
	struct jobrec j, back;
	struct buf b = BUF_INIT;
	char base[JOBREC_ID_MAX];
	const char *old;

	(void)state;
	memset(&j, 0, sizeof j);
	snprintf(j.id, sizeof j.id, "4211_2");
	snprintf(j.kind, sizeof j.kind, "gpu");
	snprintf(j.backend, sizeof j.backend, "slurm");
	j.submitted = 1763822222.125;
	j.state = JS_FAILED;
	snprintf(j.reason, sizeof j.reason, "Resources");
	j.had_worker = 1;
	snprintf(j.why, sizeof j.why, "it said: \"no\"\nand more");
	snprintf(j.boot, sizeof j.boot, "4f1c0a2e-8d3b-4c2a-9e1f-0a1b2c3d4e5f");
	j.pstart = 18446744073709551615ULL;
	j.idle = 1763822522.5;
	snprintf(j.script, sizeof j.script, "script.h.1.2.ab@gpu.sh");
	jobrec_encode(&b, &j);
	assert_int_equal(jobrec_decode(b.p, b.len, &back), 0);
	assert_string_equal(back.id, "4211_2");
	assert_string_equal(back.kind, "gpu");
	assert_string_equal(back.backend, "slurm");
	assert_true(back.submitted > 1763822222.1 &&
	    back.submitted < 1763822222.2);
	assert_int_equal(back.state, JS_FAILED);
	assert_string_equal(back.reason, "Resources");
	assert_int_equal(back.had_worker, 1);
	assert_string_equal(back.why, j.why);
	assert_string_equal(back.boot, j.boot);
	assert_true(back.pstart == j.pstart);
	assert_true(back.idle > 1763822522.4 && back.idle < 1763822522.6);
	assert_string_equal(back.script, j.script);
	buf_free(&b);
	/* an older record: no boot id, no start time (local_alive: gone) */
	old = "id: 1\nkind: k\nstate: gone\n";
	assert_int_equal(jobrec_decode(old, strlen(old), &back), 0);
	assert_string_equal(back.boot, "");
	assert_true(back.pstart == 0);
	assert_true(back.idle == 0);	/* its worker did not leave idle */
	assert_string_equal(back.script, "");	/* no doubt's script */
	/* an idle time under half a millisecond is written as it reads
	 * back, as none (the fuzzer's round trip: "idle: 0.0004" read,
	 * written "idle: 0.000", read back as none, not written) */
	j.idle = 0.0004;
	buf_free(&b);
	jobrec_encode(&b, &j);
	assert_null(memmem(b.p, b.len, "idle:", 5));
	assert_int_equal(jobrec_decode(b.p, b.len, &back), 0);
	assert_true(back.idle == 0);
	j.idle = 0.0006;	/* written "0.001": an idle time */
	buf_free(&b);
	jobrec_encode(&b, &j);
	assert_non_null(memmem(b.p, b.len, "idle: 0.001\n", 12));
	buf_free(&b);
	/* a start time that is not a plain number, an idle time with more */
	old = "id: 1\nkind: k\nstate: gone\nidle: 17e9x\n";
	assert_int_equal(jobrec_decode(old, strlen(old), &back), -1);
	old = "id: 1\nkind: k\nstate: gone\npstart: -1\n";
	assert_int_equal(jobrec_decode(old, strlen(old), &back), -1);
	/* refused: no state, a path in the ID, an unknown state */
	assert_int_equal(jobrec_decode("id: 1\nkind: k\n", 15, &back), -1);
	assert_int_equal(jobrec_decode("id: ../x\nkind: k\nstate: gone\n", 28,
	    &back), -1);
	assert_int_equal(jobrec_decode("id: 1\nkind: k\nstate: odd\n", 25,
	    &back), -1);
	assert_false(jobrec_id_ok("a/b"));
	assert_false(jobrec_id_ok(".hidden"));
	assert_false(jobrec_id_ok(""));
	assert_true(jobrec_id_ok("local.123"));
	jobrec_base("4211_2", base, sizeof base);
	assert_string_equal(base, "4211");
	jobrec_base("77.3", base, sizeof base);
	assert_string_equal(base, "77");
	jobrec_base("local.123", base, sizeof base);
	assert_string_equal(base, "local.123");
	jobrec_base("failed.1763", base, sizeof base);
	assert_string_equal(base, "failed.1763");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_directives),
		cmocka_unit_test(test_log_files),
		cmocka_unit_test(test_job_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

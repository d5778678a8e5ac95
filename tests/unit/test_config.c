/*
 * test_config.c - config.c, SPOOL/spool.yaml: the defaults, every
 * "daemon" key with its units and bounds, unknown keys (the message
 * names file, line, column and key), bad values with their position,
 * lost-timeout below twice the heartbeat, documents that hold no
 * settings, and config_load from a directory (missing file, a file, a
 * symlink planted in its place).  The cluster section: its keys and
 * defaults, dask-jobqueue's aliases, kinds inheriting and overriding,
 * env given as a mapping or a list, its errors; and the conversion of a
 * dask-jobqueue jobqueue.yaml with its notes: SGE's -pe slots, LSF's
 * HH:MM walltime, the job's own CPU and memory request, "_" spellings.
 * The worker section: the limit methods of every worker.
 */
#include "unit.h"
#include "config.h"

enum cfield {
	C_FSYNC, C_HEARTBEAT, C_LOST, C_DEATH, C_RESCAN, C_SETTLE, C_REQUEUES,
	C_SHARED,
};

static uint64_t
cfield(const struct config *c, enum cfield f)
{
	switch (f) {
	case C_FSYNC: return (uint64_t)c->fsync;
	case C_HEARTBEAT: return c->heartbeat_ms;
	case C_LOST: return c->lost_timeout_ms;
	case C_DEATH: return c->death_timeout_ms;
	case C_RESCAN: return c->rescan_ms;
	case C_SETTLE: return c->settle_ms;
	case C_REQUEUES: return c->max_requeues;
	case C_SHARED: return (uint64_t)c->shared;
	}
	return ~0ULL;
}

static void
assert_defaults(const struct config *c)
{
	assert_int_equal(c->fsync, 1);
	assert_int_equal(c->heartbeat_ms, 2000);
	assert_int_equal(c->lost_timeout_ms, 30000);
	assert_int_equal(c->death_timeout_ms, 60000);
	assert_int_equal(c->rescan_ms, 1000);
	assert_int_equal(c->settle_ms, 2000);
	assert_int_equal(c->max_requeues, 3);
	assert_int_equal(c->shared, 0);
}

static int
parse(struct config *c, const char *text, char *why, size_t size)
{
	why[0] = 0;
	return config_parse(c, text, strlen(text), why, size);
}

static void
test_defaults(void **state)
{
	static const char *const empty[] = {
		"", "\n", "# nothing\n", "daemon: {}\n",
	};
	struct config c;
	char why[300];
	size_t i;

	(void)state;
	memset(&c, 0xa5, sizeof c);
	config_defaults(&c);
	assert_defaults(&c);
	for (i = 0; i < NELEM(empty); i++) {
		memset(&c, 0xa5, sizeof c);
		TCHECK(parse(&c, empty[i], why, sizeof why) == 0, "row %zu: %s",
		    i, why);
		assert_defaults(&c);
		config_free(&c);
	}
}

/*
 * A file with a document marker and only comments holds no settings
 * (people keep commented-out examples): it means the defaults.
 */
static void
test_commented_out_document(void **state)
{
	static const char text[] =
	    "---\n"
	    "# daemon:\n"
	    "#   fsync: false\n";
	struct config c;
	char why[300];

	(void)state;
	TCHECK(parse(&c, text, why, sizeof why) == 0, "refused: %s", why);
	assert_defaults(&c);
	config_free(&c);
}

static void
test_every_key(void **state)
{
	static const struct {
		const char *key;
		const char *value;
		enum cfield f;
		uint64_t want;
	} rows[] = {
		{ "fsync",		"false",	C_FSYNC,	0 },
		{ "fsync",		"no",		C_FSYNC,	0 },
		{ "fsync",		"off",		C_FSYNC,	0 },
		{ "fsync",		"true",		C_FSYNC,	1 },
		{ "fsync",		"yes",		C_FSYNC,	1 },
		{ "fsync",		"on",		C_FSYNC,	1 },
		{ "heartbeat",		"500ms",	C_HEARTBEAT,	500 },
		{ "heartbeat",		"10ms",		C_HEARTBEAT,	10 },
		{ "heartbeat",		"1.5s",		C_HEARTBEAT,	1500 },
		{ "heartbeat",		"3",		C_HEARTBEAT,	3000 },
		{ "lost-timeout",	"1m",		C_LOST,		60000 },
		{ "lost-timeout",	"1-00:00:00",	C_LOST,		86400000 },
		{ "death-timeout",	"2m",		C_DEATH,	120000 },
		{ "death-timeout",	"1:30",		C_DEATH,	90000 },
		{ "death-timeout",	"100ms",	C_DEATH,	100 },
		{ "rescan",		"0.5s",		C_RESCAN,	500 },
		{ "rescan",		"10m",		C_RESCAN,	600000 },
		{ "settle",		"0",		C_SETTLE,	0 },
		{ "settle",		"250ms",	C_SETTLE,	250 },
		{ "max-requeues",	"0",		C_REQUEUES,	0 },
		{ "max-requeues",	"100",		C_REQUEUES,	100 },
		{ "shared",		"true",		C_SHARED,	1 },
		{ "shared",		"false",	C_SHARED,	0 },
	};
	struct config c;
	char text[200], why[300];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		snprintf(text, sizeof text, "daemon:\n  %s: %s\n", rows[i].key,
		    rows[i].value);
		TCHECK(parse(&c, text, why, sizeof why) == 0, "%s: %s: %s",
		    rows[i].key, rows[i].value, why);
		TCHECK(cfield(&c, rows[i].f) == rows[i].want,
		    "%s: %s gave %llu, want %llu", rows[i].key, rows[i].value,
		    (unsigned long long)cfield(&c, rows[i].f),
		    (unsigned long long)rows[i].want);
		config_free(&c);
	}
}

static void
test_all_keys_together(void **state)
{
	static const char text[] =
	    "daemon:\n"
	    "  fsync: false\n"
	    "  heartbeat: 1s\n"
	    "  lost-timeout: 10s\n"
	    "  death-timeout: 20s\n"
	    "  rescan: 200ms\n"
	    "  settle: 1s\n"
	    "  max-requeues: 7\n"
	    "  shared: yes\n";
	struct config c;
	char why[300];

	(void)state;
	TCHECK(parse(&c, text, why, sizeof why) == 0, "%s", why);
	assert_int_equal(c.fsync, 0);
	assert_int_equal(c.heartbeat_ms, 1000);
	assert_int_equal(c.lost_timeout_ms, 10000);
	assert_int_equal(c.death_timeout_ms, 20000);
	assert_int_equal(c.rescan_ms, 200);
	assert_int_equal(c.settle_ms, 1000);
	assert_int_equal(c.max_requeues, 7);
	assert_int_equal(c.shared, 1);
	config_free(&c);
}

/* Errors: the exact message a person sees. */
static void
test_errors(void **state)
{
	static const struct {
		const char *text;
		const char *want;	/* whole message, or its start */
		int prefix;
	} rows[] = {
		{ "daemon:\n  heartbeet: 2s\n",
		    "spool.yaml: line 2, column 3: unknown key \"heartbeet\" "
		    "in \"daemon\" (see spool-layout(5))", 0 },
		{ "deamon:\n  fsync: true\n",
		    "spool.yaml: line 1, column 1: unknown key \"deamon\" "
		    "(known: daemon, cluster, worker)", 0 },
		{ "daemon:\n  fsync: true\ncores: 4\n",
		    "spool.yaml: line 3, column 1: unknown key \"cores\" "
		    "(known: daemon, cluster, worker)", 0 },
		{ "daemon:\n  heartbeat: soon\n",
		    "spool.yaml: line 2, column 14: key \"heartbeat\": bad "
		    "duration", 1 },
		{ "daemon:\n  heartbeat: 5ms\n",
		    "spool.yaml: line 2, column 14: key \"heartbeat\": value "
		    "out of range (10ms to 1h)", 0 },
		{ "daemon:\n  rescan: 11m\n",
		    "spool.yaml: line 2, column 11: key \"rescan\": value out "
		    "of range (10ms to 10m)", 0 },
		{ "daemon:\n  lost-timeout: 50ms\n",
		    "spool.yaml: line 2, column 17: key \"lost-timeout\": value "
		    "out of range (100ms to 1d)", 0 },
		{ "daemon:\n  death-timeout: 2d\n",
		    "spool.yaml: line 2, column 18: key \"death-timeout\": value "
		    "out of range (100ms to 1d)", 0 },
		{ "daemon:\n  journal-size: 100K\n",
		    "spool.yaml: line 2, column 17: key \"journal-size\": "
		    "value out of range (1M to 1T)", 0 },
		{ "daemon:\n  max-requeues: 101\n",
		    "spool.yaml: line 2, column 17: key \"max-requeues\": "
		    "value out of range (0 to 100)", 0 },
		{ "daemon:\n  max-requeues: -1\n",
		    "spool.yaml: line 2, column 17: key \"max-requeues\": "
		    "negative value", 0 },
		{ "daemon:\n  fsync: maybe\n",
		    "spool.yaml: line 2, column 10: key \"fsync\": expected true "
		    "or false", 0 },
		{ "daemon:\n  fsync: 1\n",
		    "spool.yaml: line 2, column 10: key \"fsync\": expected true "
		    "or false", 0 },
		{ "daemon:\n  shared:\n",
		    "spool.yaml: line 2, column 10: key \"shared\": expected a "
		    "single value", 0 },
		{ "daemon:\n  settle: [1s]\n",
		    "spool.yaml: line 2, column 11: key \"settle\": expected a "
		    "single value", 0 },
		{ "daemon: 5\n",
		    "spool.yaml: line 1, column 9: \"daemon\" must be a mapping",
		    0 },
		{ "- daemon\n",
		    "spool.yaml: line 1, column 1: the file must be a mapping", 0 },
		{ "daemon:\n  fsync: true\n  fsync: false\n",
		    "spool.yaml: line 3, column 3: duplicate key \"fsync\"", 0 },
		{ "daemon:\n  heartbeat: &h 1s\n",
		    "spool.yaml: line 2, column 14: YAML anchors are not allowed",
		    0 },
		/* the rule between two keys: at the one given last, or
		 * at the only one given */
		{ "daemon:\n  heartbeat: 10s\n  lost-timeout: 15s\n",
		    "spool.yaml: line 3, column 17: key \"lost-timeout\": "
		    "must be at least twice the heartbeat", 0 },
		{ "daemon:\n  lost-timeout: 15s\n  heartbeat: 10s\n",
		    "spool.yaml: line 3, column 14: key \"heartbeat\": must be "
		    "at most half the lost-timeout", 0 },
		{ "daemon:\n  heartbeat: 20s\n",	/* default lost 30s */
		    "spool.yaml: line 2, column 14: key \"heartbeat\": must be "
		    "at most half the lost-timeout", 0 },
		{ "daemon:\n  rescan: 1s\n  lost-timeout: 3s\n",
		    "spool.yaml: line 3, column 17: key \"lost-timeout\": "
		    "must be at least twice the heartbeat", 0 },
		/* worker: the methods, each key's own */
		{ "worker:\n  memory-limit: cgroup3\n",
		    "spool.yaml: line 2, column 17: key \"memory-limit\": use "
		    "auto, cgroup, cgroup2, cgroup1, watchdog or none", 0 },
		{ "worker:\n  cpu-limit: devices\n",
		    "spool.yaml: line 2, column 14: key \"cpu-limit\": use "
		    "auto, cpuset or affinity", 0 },
		{ "worker:\n  gpu-limit: cpuset\n",
		    "spool.yaml: line 2, column 14: key \"gpu-limit\": use "
		    "auto, devices or env", 0 },
		{ "worker:\n  gpu-limit: Devices\n",
		    "spool.yaml: line 2, column 14: key \"gpu-limit\": use "
		    "auto, devices or env", 0 },
		{ "worker:\n  cpu-limit:\n",
		    "spool.yaml: line 2, column 13: key \"cpu-limit\": expected "
		    "a single value", 0 },
		{ "worker:\n  cpu-limit: [cpuset]\n",
		    "spool.yaml: line 2, column 14: key \"cpu-limit\": expected "
		    "a single value", 0 },
		{ "worker:\n  cores: 4\n",
		    "spool.yaml: line 2, column 3: unknown key \"cores\" in "
		    "\"worker\" (see spool-layout(5))", 0 },
		{ "worker: cpuset\n",
		    "spool.yaml: line 1, column 9: \"worker\" must be a mapping",
		    0 },
	};
	struct config c;
	char why[300];
	size_t i;
	int ok;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(&c, rows[i].text, why, sizeof why) == -1,
		    "row %zu accepted", i);
		if (rows[i].prefix == 0)
			ok = strcmp(why, rows[i].want) == 0;
		else if (rows[i].prefix == 1)
			ok = strncmp(why, rows[i].want, strlen(rows[i].want)) == 0;
		else
			ok = unit_contains(why, rows[i].want) &&
			    strncmp(why, "spool.yaml: ", 12) == 0;
		TCHECK(ok, "row %zu:\n  got  \"%s\"\n  want \"%s\"", i, why,
		    rows[i].want);
	}
}

/*
 * worker: each method of each key is taken, and is the table's own
 * string (config_limit_method); a key not given stays NULL (the
 * worker's auto), as in a file without the section.
 */
static void
test_worker_section(void **state)
{
	static const struct {
		enum limit_kind k;
		const char *methods[7];
	} rows[] = {
		{ LIMIT_MEMORY, { "auto", "cgroup", "cgroup2", "cgroup1",
		    "watchdog", "none", NULL } },
		{ LIMIT_CPU, { "auto", "cpuset", "affinity", NULL } },
		{ LIMIT_GPU, { "auto", "devices", "env", NULL } },
	};
	struct config c;
	char text[128], why[300];
	size_t i, j, l;

	(void)state;
	assert_int_equal(parse(&c, "daemon: {}\n", why, sizeof why), 0);
	for (l = 0; l < LIMIT_N; l++)
		assert_null(c.worker_limit[l]);
	config_free(&c);
	for (i = 0; i < NELEM(rows); i++)
		for (j = 0; rows[i].methods[j]; j++) {
			snprintf(text, sizeof text, "worker:\n  %s: %s\n",
			    limit_key[rows[i].k], rows[i].methods[j]);
			TCHECK(parse(&c, text, why, sizeof why) == 0,
			    "%s refused: %s", text, why);
			for (l = 0; l < LIMIT_N; l++)
				if (l == rows[i].k)
					assert_string_equal(c.worker_limit[l],
					    rows[i].methods[j]);
				else
					assert_null(c.worker_limit[l]);
			assert_ptr_equal(c.worker_limit[rows[i].k],
			    config_limit_method(rows[i].k, rows[i].methods[j],
			    why, sizeof why));
			config_free(&c);
		}
	assert_int_equal(parse(&c, "worker:\n  memory-limit: cgroup1\n"
	    "  cpu-limit: affinity\n  gpu-limit: env\n", why, sizeof why), 0);
	assert_string_equal(c.worker_limit[LIMIT_MEMORY], "cgroup1");
	assert_string_equal(c.worker_limit[LIMIT_CPU], "affinity");
	assert_string_equal(c.worker_limit[LIMIT_GPU], "env");
	config_free(&c);
	/* the message that ckworker's options give too */
	assert_null(config_limit_method(LIMIT_CPU, "", why, sizeof why));
	assert_string_equal(why, "use auto, cpuset or affinity");
	/* cut, not overrun, in a short buffer */
	assert_null(config_limit_method(LIMIT_MEMORY, "x", why, 12));
	assert_string_equal(why, "use auto, c");
}

/* The boundary of the lost-timeout rule is allowed. */
static void
test_lost_timeout_boundary(void **state)
{
	struct config c;
	char why[300];

	(void)state;
	assert_int_equal(parse(&c, "daemon:\n  heartbeat: 10s\n"
	    "  lost-timeout: 20s\n", why, sizeof why), 0);
	assert_int_equal(c.lost_timeout_ms, 20000);
	config_free(&c);
	assert_int_equal(parse(&c, "daemon:\n  heartbeat: 10s\n"
	    "  lost-timeout: 19999ms\n", why, sizeof why), -1);
	/* Order of keys does not matter. */
	assert_int_equal(parse(&c, "daemon:\n  lost-timeout: 20s\n"
	    "  heartbeat: 10s\n", why, sizeof why), 0);
	config_free(&c);
}

static void
test_load(void **state)
{
	static const char good[] = "daemon:\n  settle: 5s\n";
	static const char bad[] = "daemon:\n  settle: x\n";
	struct config c;
	char *dir, *path, why[300];
	int dfd;

	(void)state;
	dir = unit_tmpdir();
	assert_non_null(dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);

	/* No file: defaults. */
	memset(&c, 0, sizeof c);
	assert_int_equal(config_load(&c, dfd, NULL, why, sizeof why), 0);
	assert_defaults(&c);
	config_free(&c);

	/* A file. */
	path = xasprintf("%s/%s", dir, CONFIG_FILE);
	assert_int_equal(unit_write_file(path, good, strlen(good)), 0);
	assert_int_equal(config_load(&c, dfd, NULL, why, sizeof why), 0);
	assert_int_equal(c.settle_ms, 5000);
	assert_int_equal(c.heartbeat_ms, 2000);
	config_free(&c);

	/* A bad file names itself. */
	assert_int_equal(unit_write_file(path, bad, strlen(bad)), 0);
	assert_int_equal(config_load(&c, dfd, NULL, why, sizeof why), -1);
	assert_contains(why, "spool.yaml: line 2, column 11");

	/* A symlink in its place is refused, not followed. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	why[0] = 0;
	assert_int_equal(config_load(&c, dfd, NULL, why, sizeof why), -1);
	assert_contains(why, "spool.yaml: not a regular file");

	/* So is a directory, saying so (not "Invalid argument"). */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(config_load(&c, dfd, NULL, why, sizeof why), -1);
	assert_contains(why, "spool.yaml: not a regular file");
	assert_int_equal(rmdir(path), 0);

	/* And a file over 256 KiB, by its bound. */
	{
		size_t big = (256u << 10) + 1;
		char *text = xmalloc(big);

		memset(text, '#', big);
		assert_int_equal(unit_write_file(path, text, big), 0);
		free(text);
		assert_int_equal(config_load(&c, dfd, NULL, why,
		    sizeof why), -1);
		assert_contains(why, "spool.yaml: larger than 256 KiB");
	}

	close(dfd);
	unit_rmrf(dir);
	free(path);
	free(dir);
}

/* The cluster section: values, aliases, defaults of a kind. */
static void
test_cluster_section(void **state)
{
	static const char text[] =
	    "cluster:\n"
	    "  backend: sge\n"
	    "  name: ck\n"
	    "  cores: 8\n"
	    "  processes: 2\n"
	    "  memory: 16GiB\n"
	    "  walltime: \"02:30:00\"\n"
	    "  queue: all.q\n"
	    "  project: p1\n"			/* dask's alias of account */
	    "  resource-spec: h_vmem=2G\n"
	    "  parallel-environment: smp\n"
	    "  job-extra: [\"-R y\"]\n"		/* dask's old name */
	    "  job-directives-skip: -V\n"	/* a string is a list of one */
	    "  env-extra: [\"module load x\"]\n"	/* old job-script-prologue */
	    "  local-directory: /scratch\n"
	    "  log-directory: /logs\n"
	    "  env: {A: \"1 2\", B: ~}\n"
	    "  export-env: false\n"
	    "  death-timeout: 90s\n"
	    "  idle-timeout: 0\n"
	    "  job-array: no\n"
	    "  poll-interval: 2s\n"
	    "  max-submit-failures: 9\n"
	    "  scale-down-delay: 1m\n";
	const struct kind *k;
	struct config c;
	char why[300];

	(void)state;
	assert_int_equal(parse(&c, text, why, sizeof why), 0);
	assert_int_equal(c.have_cluster, 1);
	assert_int_equal(c.nkinds, 1);
	k = config_kind(&c, NULL);
	assert_string_equal(k->name, "default");
	assert_int_equal(k->backend, BK_SGE);
	assert_string_equal(k->job_name, "ck");
	assert_int_equal(k->cores, 8);
	assert_int_equal(k->processes, 2);
	assert_int_equal(k->memory, 16ULL << 30);
	assert_int_equal(k->walltime, 9000);
	assert_string_equal(k->queue, "all.q");
	assert_string_equal(k->account, "p1");
	assert_string_equal(k->resource_spec, "h_vmem=2G");
	assert_string_equal(k->pe, "smp");
	assert_int_equal(strv_len(k->extra), 1);
	assert_string_equal(k->extra[0], "-R y");
	assert_string_equal(k->skip[0], "-V");
	assert_string_equal(k->prologue[0], "module load x");
	assert_string_equal(k->local_dir, "/scratch");
	assert_string_equal(k->log_dir, "/logs");
	assert_int_equal(strv_len(k->env), 2);
	assert_string_equal(k->env[0], "A=1 2");
	assert_string_equal(k->env[1], "B=");
	assert_int_equal(k->export_env, 0);
	assert_int_equal(k->death_timeout_ms, 90000);
	assert_int_equal(k->idle_timeout_ms, 0);
	assert_int_equal(k->job_array, 0);
	assert_int_equal(c.poll_ms, 2000);
	assert_int_equal(c.max_submit_failures, 9);
	assert_int_equal(c.scale_down_ms, 60000);
	config_free(&c);

	/* no cluster section: one local kind with the defaults */
	assert_int_equal(parse(&c, "daemon: {}\n", why, sizeof why), 0);
	assert_int_equal(c.have_cluster, 0);
	assert_int_equal(c.nkinds, 1);
	k = config_kind(&c, "default");
	assert_non_null(k);
	assert_int_equal(k->backend, BK_LOCAL);
	assert_int_equal(k->cores, 1);
	assert_int_equal(k->processes, 1);
	assert_int_equal(k->walltime, 3600);
	assert_int_equal(k->export_env, 1);
	assert_int_equal(k->job_array, 1);
	assert_int_equal(k->idle_timeout_ms, 300000);
	assert_null(config_kind(&c, "gpu"));
	config_free(&c);
}

/* Kinds start as a copy of the cluster section and override keys. */
static void
test_cluster_kinds(void **state)
{
	static const char text[] =
	    "cluster:\n"
	    "  backend: slurm\n"
	    "  cores: 4\n"
	    "  queue: cpu\n"
	    "  job-extra-directives: [\"--qos=x\"]\n"
	    "  env: [\"P=1\"]\n"
	    "  cpu-limit: cpuset\n"
	    "  kinds:\n"
	    "    cpu: {}\n"
	    "    gpu:\n"
	    "      queue: gpu\n"
	    "      gpus: 2\n"
	    "      job-extra-directives: []\n"
	    "      env: {G: yes}\n"
	    "      cpu-limit: affinity\n"
	    "      gpu-limit: devices\n";
	const struct kind *cpu, *gpu;
	struct config c;
	char why[300];
	size_t i;

	(void)state;
	assert_int_equal(parse(&c, text, why, sizeof why), 0);
	assert_int_equal(c.nkinds, 2);
	cpu = config_kind(&c, "cpu");
	gpu = config_kind(&c, "gpu");
	assert_non_null(cpu);
	assert_non_null(gpu);
	assert_int_equal(cpu->backend, BK_SLURM);
	assert_int_equal(gpu->backend, BK_SLURM);
	assert_int_equal(cpu->cores, 4);
	assert_int_equal(gpu->cores, 4);
	assert_string_equal(cpu->queue, "cpu");
	assert_string_equal(gpu->queue, "gpu");
	assert_int_equal(cpu->gpus, 0);
	assert_int_equal(gpu->gpus, 2);
	assert_string_equal(cpu->extra[0], "--qos=x");
	assert_int_equal(strv_len(gpu->extra), 0);
	assert_string_equal(cpu->env[0], "P=1");
	assert_int_equal(strv_len(gpu->env), 1);
	assert_string_equal(gpu->env[0], "G=yes");
	/* the limit methods: inherited, overridden, not given */
	assert_string_equal(cpu->limit[LIMIT_CPU], "cpuset");
	assert_string_equal(gpu->limit[LIMIT_CPU], "affinity");
	assert_null(cpu->limit[LIMIT_GPU]);
	assert_string_equal(gpu->limit[LIMIT_GPU], "devices");
	assert_null(cpu->limit[LIMIT_MEMORY]);
	assert_null(gpu->limit[LIMIT_MEMORY]);
	for (i = 0; i < LIMIT_N; i++)	/* a kind's are not worker:'s */
		assert_null(c.worker_limit[i]);
	assert_null(config_kind(&c, "default"));
	config_free(&c);
}

/* config_diff: what a reload may take, and what only a restart */
static void
test_diff(void **state)
{
#define D_DAEMON "daemon:\n  heartbeat: 1s\n  lost-timeout: 10s\n"
#define D_KINDS "  kinds:\n    cpu: {env: [A=1]}\n    gpu: {gpus: 1}\n"
#define D_CLUSTER "cluster:\n  backend: slurm\n  cores: 4\n  " \
	    "job-extra-directives: [\"--qos=x\"]\n"
	static const char base[] = D_DAEMON D_CLUSTER D_KINDS;
	static const struct {
		const char *text, *fixed, *changed;
	} rows[] = {
		{ base, NULL, "" },
		/* comments and the order of keys are not changes */
		{ "# a comment\n" D_CLUSTER D_KINDS
		    "daemon:\n  lost-timeout: 10s\n  heartbeat: 1000ms\n",
		    NULL, "" },
		{ D_DAEMON "  settle: 5s\n  max-requeues: 1\n  rescan: 2s\n"
		    "  journal-size: 1G\n" D_CLUSTER "  poll-interval: 3s\n"
		    "  max-submit-failures: 2\n  scale-down-delay: 5m\n"
		    D_KINDS, NULL, "daemon: rescan, daemon: settle, daemon: "
		    "max-requeues, daemon: journal-size, cluster: "
		    "poll-interval, cluster: max-submit-failures, cluster: "
		    "scale-down-delay" },
		{ D_DAEMON D_CLUSTER "  kinds:\n    cpu: {env: [A=1]}\n"
		    "    gpu: {gpus: 1, queue: gpu}\n", NULL, "kind gpu" },
		{ D_DAEMON D_CLUSTER "  kinds:\n    cpu: {env: [A=2]}\n"
		    "    gpu: {gpus: 1}\n", NULL, "kind cpu" },
		{ D_DAEMON D_CLUSTER "  kinds:\n    cpu: {env: [A=1, B=1]}\n"
		    "    gpu: {gpus: 1}\n", NULL, "kind cpu" },
		{ D_DAEMON "cluster:\n  backend: slurm\n  cores: 8\n"
		    "  job-extra-directives: [\"--qos=x\"]\n" D_KINDS, NULL,
		    "kind cpu, kind gpu" },
		{ D_DAEMON "cluster:\n  backend: slurm\n  cores: 4\n"
		    "  job-extra-directives: [\"--qos=y\"]\n" D_KINDS, NULL,
		    "kind cpu, kind gpu" },
		/* a value of each kind a kind's key can have */
#define D_GPU(x) D_DAEMON D_CLUSTER "  kinds:\n    cpu: {env: [A=1]}\n" \
	    "    gpu: {gpus: 1, " x "}\n", NULL, "kind gpu"
		{ D_GPU("processes: 2") },
		{ D_GPU("memory: 8G") },
		{ D_GPU("walltime: \"02:30:00\"") },
		{ D_GPU("idle-timeout: 10m") },
		{ D_GPU("job-array: false") },
		{ D_GPU("shebang: \"#!/bin/sh\"") },
		{ D_GPU("name: w") },
		{ D_GPU("job-script-prologue: [\"module load x\"]") },
		{ D_GPU("memory-limit: watchdog") },
#undef D_GPU
		{ base, NULL, "worker: cpu-limit" },	/* worker: below */
		{ "daemon:\n  heartbeat: 2s\n  lost-timeout: 10s\n"
		    D_CLUSTER D_KINDS, "daemon: heartbeat", NULL },
		{ "daemon:\n  heartbeat: 1s\n  lost-timeout: 20s\n"
		    D_CLUSTER D_KINDS, "daemon: lost-timeout", NULL },
		{ D_DAEMON "  death-timeout: 2m\n" D_CLUSTER D_KINDS,
		    "daemon: death-timeout", NULL },
		{ D_DAEMON "  fsync: false\n  settle: 5s\n" D_CLUSTER D_KINDS,
		    "daemon: fsync", NULL },
		{ D_DAEMON "  shared: true\n" D_CLUSTER D_KINDS,
		    "daemon: shared", NULL },
		{ D_DAEMON D_CLUSTER "  kinds:\n    gpu: {gpus: 1}\n"
		    "    cpu: {env: [A=1]}\n", "cluster: its kinds", NULL },
		{ D_DAEMON D_CLUSTER D_KINDS "    big: {cores: 64}\n",
		    "cluster: its kinds", NULL },
		{ D_DAEMON D_CLUSTER "  kinds:\n    cpu: {env: [A=1]}\n"
		    "    gpu: {gpus: 1, backend: sge}\n", "cluster: its kinds",
		    NULL },
		{ D_DAEMON, "cluster: its kinds", NULL },
	};
	struct buf changed = BUF_INIT;
	struct config a, b;
	const char *fixed;
	char why[300];
	size_t i;

	(void)state;
	assert_int_equal(parse(&a, base, why, sizeof why), 0);
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(&b, rows[i].text, why, sizeof why) == 0,
		    "row %zu: %s", i, why);
		if (rows[i].changed && strstr(rows[i].changed, "worker:"))
			b.worker_limit[LIMIT_CPU] = "cpuset";
		buf_puts(&changed, "left from before");
		fixed = config_diff(&a, &b, &changed);
		if (rows[i].fixed) {
			TCHECK(fixed && strcmp(fixed, rows[i].fixed) == 0,
			    "row %zu: fixed %s", i, fixed ? fixed : "(none)");
		} else {
			TCHECK(fixed == NULL, "row %zu: fixed %s", i, fixed);
			TCHECK(strcmp(changed.p, rows[i].changed) == 0,
			    "row %zu: changed \"%s\"", i, changed.p);
		}
		config_free(&b);
	}
	/* either way round */
	assert_int_equal(parse(&b, D_DAEMON, why, sizeof why), 0);
	assert_string_equal(config_diff(&b, &a, &changed),
	    "cluster: its kinds");
	config_free(&b);
	config_free(&a);
	buf_free(&changed);
#undef D_DAEMON
#undef D_KINDS
#undef D_CLUSTER
}

static void
test_cluster_errors(void **state)
{
	static const struct {
		const char *text;
		const char *want;	/* a part of the message */
	} rows[] = {
		{ "cluster:\n  memroy: 8G\n",
		    "line 2, column 3: unknown key \"memroy\" in \"cluster\"" },
		{ "cluster:\n  backend: condor\n",
		    "line 2, column 12: key \"backend\": unknown backend" },
		{ "cluster:\n  kinds:\n    g: {gpu-limit: cuda}\n",
		    "line 3, column 20: key \"gpu-limit\": use auto, devices "
		    "or env" },
		{ "cluster:\n  cores: 0\n",
		    "key \"cores\": value out of range (1 to 4096)" },
		{ "cluster:\n  gpus: 65\n",
		    "key \"gpus\": value out of range (0 to 64)" },
		{ "cluster:\n  memory: 2P\n",
		    "key \"memory\": value out of range (0 to 1P)" },
		{ "cluster:\n  walltime: 367d\n",
		    "key \"walltime\": value out of range (0 to 366d)" },
		{ "cluster:\n  cores: 2\n  processes: 3\n",
		    "processes (3) is more than cores (2)" },
		{ "cluster:\n  gpus: many\n", "key \"gpus\"" },
		{ "cluster:\n  memory: 3 apples\n", "key \"memory\"" },
		{ "cluster:\n  walltime: soon\n",
		    "line 2, column 13: key \"walltime\": bad duration" },
		/* a worker would drain as it registers, and spoold
		 * submit another job every poll without end ("00:30" by
		 * hand, LSF's 30 minutes, is 30 s here) */
		{ "cluster:\n  walltime: \"00:30\"\n",
		    "kind \"default\": walltime (30s) must be more than 60s" },
		{ "cluster:\n  kinds:\n    short: {walltime: 60s}\n",
		    "kind \"short\": walltime (60s) must be more than 60s" },
		/* a job name goes bare into directives and file names */
		{ "cluster:\n  name: \"my job\"\n",
		    "kind \"default\": name \"my job\": a job name is" },
		{ "cluster:\n  kinds:\n    g: {name: a/b}\n",
		    "kind \"g\": name \"a/b\": a job name is" },
		{ "cluster:\n  name: -x\n", "name \"-x\": a job name is" },
		/* jobs are submitted from it: relative, it would be taken
		 * twice over */
		{ "cluster:\n  log-directory: ck-logs\n",
		    "kind \"default\": log-directory \"ck-logs\" must be an "
		    "absolute path" },
		/* the job's shell expands it: it must be absolute there */
		{ "cluster:\n  local-directory: tmp/$USER\n",
		    "kind \"default\": local-directory \"tmp/$USER\" must be an "
		    "absolute path, or start with \"~\" or a variable" },
		{ "cluster:\n  local-directory: ~me/t\n",
		    "local-directory \"~me/t\" must be an absolute path" },
		{ "cluster:\n  local-directory: $1/t\n",
		    "local-directory \"$1/t\" must be an absolute path" },
		/* queue, account and parallel-environment go bare into
		 * directives: a blank splits one, Slurm cuts it at "#" */
		{ "cluster:\n  queue: \"gpu #x\"\n",
		    "kind \"default\": queue \"gpu #x\": it goes bare into a "
		    "job directive" },
		{ "cluster:\n  kinds:\n    g: {account: \"a b\"}\n",
		    "kind \"g\": account \"a b\": it goes bare" },
		{ "cluster:\n  project: \"x'y\"\n",
		    "kind \"default\": account \"x'y\": it goes bare" },
		{ "cluster:\n  parallel-environment: \"smp -l x\"\n",
		    "parallel-environment \"smp -l x\": it goes bare" },
		{ "cluster:\n  queue: -q\n", "queue \"-q\": it goes bare" },
		/* one setting under both of its names: which one holds
		 * would be the file's order, unsaid */
		{ "cluster:\n  account: a\n  cores: 2\n  project: b\n",
		    "line 4, column 3: key \"project\": another name of "
		    "\"account\", given too (line 2)" },
		{ "cluster:\n  kinds:\n    g: {job-extra: [x], "
		    "job-extra-directives: [y]}\n",
		    "line 3, column 25: key \"job-extra-directives\": another "
		    "name of \"job-extra\", given too (line 3)" },
		{ "cluster:\n  env-extra: [a]\n  job-script-prologue: [b]\n",
		    "key \"job-script-prologue\": another name of "
		    "\"env-extra\", given too (line 2)" },
		{ "cluster:\n  queue: [a, b]\n",
		    "key \"queue\": expected a single value" },
		{ "cluster:\n  queue: \"a\\nb\"\n",
		    "key \"queue\": expected one line of text" },
		{ "cluster:\n  job-extra-directives: [[1]]\n",
		    "list items must be single-line strings" },
		{ "cluster:\n  env: [\"NOEQUALS\"]\n",
		    "line 2, column 9: key \"env\": env must be NAME=VALUE" },
		/* a list's NAMEs are checked as a mapping's: each becomes
		 * "export NAME=" in the job script */
		{ "cluster:\n  env: [\"BAD NAME=1\"]\n",
		    "line 2, column 9: key \"env\": env must be NAME=VALUE" },
		{ "cluster:\n  env: [\"A=1\", \"X;touch /tmp/x;Y=2\"]\n",
		    "line 2, column 16: key \"env\": env must be NAME=VALUE" },
		{ "cluster:\n  env: \"=v\"\n",
		    "line 2, column 8: key \"env\": env must be NAME=VALUE" },
		{ "cluster:\n  env: {A: [1]}\n", "values must be strings" },
		{ "cluster:\n  export-env: sometimes\n",
		    "key \"export-env\": expected true or false" },
		{ "cluster:\n  poll-interval: 1ms\n",
		    "key \"poll-interval\": value out of range (100ms to 1h)" },
		{ "cluster:\n  kinds: []\n",
		    "key \"kinds\": expected a mapping of kind names" },
		{ "cluster:\n  kinds:\n    \"a/b\": {}\n", "kind names are" },
		{ "cluster:\n  kinds:\n    g: {colour: red}\n",
		    "unknown key \"colour\" in \"g\"" },
		{ "cluster:\n  kinds:\n    g: {poll-interval: 2s}\n",
		    "unknown key \"poll-interval\" in \"g\"" },
		{ "cluster: 3\n", "\"cluster\" must be a mapping" },
	};
	struct config c;
	char why[300];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(&c, rows[i].text, why, sizeof why) == -1,
		    "row %zu accepted", i);
		TCHECK(unit_contains(why, rows[i].want) &&
		    strncmp(why, "spool.yaml: line ", 17) == 0,
		    "row %zu:\n  got  \"%s\"\n  want \"%s\"", i, why,
		    rows[i].want);
	}
}

static char *
import(const char *text, const char *backend, int *rc)
{
	struct buf out = BUF_INIT;
	char why[300];

	why[0] = 0;
	*rc = config_import_jobqueue(text, strlen(text), backend, &out, why,
	    sizeof why);
	if (*rc < 0) {
		buf_free(&out);
		return xstrdup(why);
	}
	return buf_steal(&out);
}

/* A dask-jobqueue file becomes a spool.yaml that parses, with notes. */
static void
test_import_jobqueue(void **state)
{
	static const char sge[] =
	    "jobqueue:\n"
	    "  sge:\n"
	    "    name: dask-worker\n"
	    "    cores: 4\n"
	    "    processes: 1\n"
	    "    memory: 8GB\n"
	    "    walltime: '01:00:00'\n"
	    "    resource-spec: h_vmem=2G\n"
	    "    job-extra: ['-pe smp 4', '-cwd']\n"
	    "    interface: ib0\n"
	    "    death-timeout: 60\n"
	    "    worker-extra-args: []\n"
	    "    nanny: true\n"
	    "    frobnicate: 1\n";
	struct config c;
	char *out, why[300];
	int rc;

	(void)state;
	out = import(sge, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  backend: sge\n");
	assert_contains(out, "  parallel-environment: smp\n");
	assert_contains(out, "  job-extra-directives: [\"-cwd\"]\n");
	assert_contains(out, "  death-timeout: 60s\n");
	assert_contains(out, "#   interface (line 10): workers and spoold "
	    "talk through the spool directory");
	assert_contains(out, "#   nanny (line 13): ");
	assert_contains(out, "#   frobnicate (line 14): not a key ckspool knows");
	assert_contains(out, "Grid Engine counts h_vmem per slot: with 4 "
	    "slots the job asks for 4 times that");
	/* an empty list in their file is no setting */
	assert_true(strstr(out, "worker-extra-args") == NULL);
	/* the result means the same */
	assert_int_equal(parse(&c, out, why, sizeof why), 0);
	assert_int_equal(c.kinds[0].backend, BK_SGE);
	assert_int_equal(c.kinds[0].cores, 4);
	assert_int_equal(c.kinds[0].memory, 8000000000ULL);
	assert_int_equal(c.kinds[0].death_timeout_ms, 60000);
	assert_string_equal(c.kinds[0].pe, "smp");
	config_free(&c);
	free(out);

	out = import("jobqueue:\n  slurm: {cores: 2}\n  pbs: {cores: 4}\n",
	    NULL, &rc);
	assert_int_equal(rc, -1);
	assert_contains(out, "several backends (slurm, pbs): choose one");
	free(out);
	out = import("jobqueue:\n  slurm: {cores: 2}\n  pbs: {cores: 4}\n",
	    "pbs", &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  cores: 4\n");
	free(out);
	out = import("distributed: {}\n", NULL, &rc);
	assert_int_equal(rc, -1);
	assert_contains(out, "no \"jobqueue:\" mapping");
	free(out);
	out = import("jobqueue:\n  htcondor: {cores: 1}\n", NULL, &rc);
	assert_int_equal(rc, -1);
	assert_contains(out, "no slurm, sge, pbs, lsf or local section");
	free(out);
}

/*
 * The seed's lab notes (SGE): "cores: 1" with "-pe threaded 10" in
 * job_extra.  The job gets 10 slots, so cores is 10, with a note.
 */
static void
test_import_sge_pe_slots(void **state)
{
	static const char seed[] =
	    "jobqueue:\n"
	    "  sge:\n"
	    "    walltime: '99:99:99'\n"
	    "    resource_spec: h_vmem=64G\n"
	    "    queue: 256G-batch\n"
	    "    job_extra: ['-cwd', '-V', '-pe threaded 10']\n"
	    "    cores: 1\n"
	    "    processes: 1\n"
	    "    memory: 1GB\n";
	struct config c;
	char *out, why[300];
	int rc;

	(void)state;
	out = import(seed, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  parallel-environment: threaded\n"
	    "  job-extra-directives: [\"-cwd\", \"-V\"]\n");
	assert_contains(out, "  cores: 10\n");
	assert_true(strstr(out, "  cores: 1\n") == NULL);
	assert_contains(out, "#   job_extra \"-pe threaded 10\": became "
	    "parallel-environment: threaded and cores: 10, since the job gets "
	    "10 slots (the file said cores: 1,");
	assert_contains(out, "with 10 slots the job asks for 10 times that");
	assert_int_equal(parse(&c, out, why, sizeof why), 0);
	assert_int_equal(c.kinds[0].cores, 10);
	assert_string_equal(c.kinds[0].pe, "threaded");
	assert_string_equal(c.kinds[0].resource_spec, "h_vmem=64G");
	assert_int_equal(strv_len(c.kinds[0].extra), 2);
	config_free(&c);
	free(out);

	/* inside a longer line, or in resource-spec; no cores key at all */
	out = import("jobqueue:\n  sge:\n    job-extra: ['-cwd -pe smp 6 -R y']"
	    "\n", NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  parallel-environment: smp\n"
	    "  job-extra-directives: [\"-cwd -R y\"]\n");
	assert_contains(out, "  cores: 6\n");
	assert_int_equal(parse(&c, out, why, sizeof why), 0);
	assert_int_equal(c.kinds[0].cores, 6);
	config_free(&c);
	free(out);
	out = import("jobqueue:\n  sge:\n    cores: 8\n    resource-spec: "
	    "'h_vmem=2G -pe smp 8'\n", NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  cores: 8\n  parallel-environment: smp\n"
	    "  resource-spec: \"h_vmem=2G\"\n");
	assert_contains(out, "became parallel-environment: smp (slots = cores)");
	free(out);
	/* a range of slots is not a count: kept as written, cores kept */
	out = import("jobqueue:\n  sge:\n    cores: 4\n    job-extra: "
	    "['-pe mpi 4-8']\n", NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  cores: 4\n  job-extra-directives: "
	    "[\"-pe mpi 4-8\"]\n");
	assert_true(strstr(out, "parallel-environment:") == NULL);
	assert_contains(out, "the slots are not a count; kept as written");
	free(out);
}

/*
 * LSF's walltime is [HH:]MM (dask-jobqueue: "Walltime for each worker
 * job in HH:MM", passed to #BSUB -W): dask's default "00:30" is 30
 * minutes, not 30 seconds.  Slurm reads a bare number as minutes.
 */
static void
test_import_walltime_units(void **state)
{
	static const struct {
		const char *backend, *theirs, *ours;
		uint64_t seconds;
	} rows[] = {
		{ "lsf", "'00:30'", "00:30:00", 1800 },
		{ "lsf", "'1:30'", "01:30:00", 5400 },
		{ "lsf", "90", "01:30:00", 5400 },
		{ "lsf", "'99:99'", "100:39:00", 362340 },
		{ "lsf", "'01:00:00'", "01:00:00", 3600 },
		{ "slurm", "30", "00:30:00", 1800 },
		{ "slurm", "'30:00'", "30:00", 1800 },
		{ "slurm", "'1-02:00:00'", "1-02:00:00", 93600 },
		/* (a walltime of 60 s or less is refused: kind_check) */
		{ "sge", "90", "90", 90 },
		{ "sge", "'01:30'", "01:30", 90 },
		{ "pbs", "'00:30:00'", "00:30:00", 1800 },
	};
	struct config c;
	char in[200], want[80], *out, why[300];
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		snprintf(in, sizeof in, "jobqueue:\n  %s:\n    walltime: %s\n",
		    rows[i].backend, rows[i].theirs);
		out = import(in, NULL, &rc);
		assert_int_equal(rc, 0);
		snprintf(want, sizeof want, "  walltime: %s%s%s\n",
		    strchr(rows[i].ours, ':') ? "\"" : "", rows[i].ours,
		    strchr(rows[i].ours, ':') ? "\"" : "");
		TCHECK(strstr(out, want) != NULL, "row %zu: want \"%s\" in:\n%s",
		    i, want, out);
		assert_int_equal(parse(&c, out, why, sizeof why), 0);
		TCHECK(c.kinds[0].walltime == rows[i].seconds, "row %zu: %llu s",
		    i, (unsigned long long)c.kinds[0].walltime);
		config_free(&c);
		free(out);
	}
	out = import("jobqueue:\n  lsf:\n    walltime: '00:30'\n", NULL, &rc);
	assert_contains(out, "#   walltime \"00:30\": LSF's -W is [HH:]MM "
	    "(here two fields are MM:SS): became \"00:30:00\", which the job "
	    "script writes as -W 00:30\n");
	free(out);
	out = import("jobqueue:\n  lsf:\n    walltime: '01:00:00'\n", NULL, &rc);
	assert_contains(out, "#   walltime \"01:00:00\": not LSF's [HH:]MM");
	free(out);
	out = import("jobqueue:\n  sge:\n    walltime: '01:00:00'\n", NULL, &rc);
	assert_true(strstr(out, "#   walltime") == NULL);
	free(out);
}

/* LSF's ncpus and mem are the job's request: they win over cores, memory. */
static void
test_import_job_request(void **state)
{
	static const char lsf[] =
	    "jobqueue:\n"
	    "  lsf:\n"
	    "    cores: 4\n"
	    "    memory: 8GB\n"
	    "    ncpus: 8\n"
	    "    mem: 16000000000\n"
	    "    lsf-units: gb\n"
	    "    use-stdin: true\n"
	    "    job-cpu: 2\n";
	struct config c;
	char *out, why[300];
	int rc;

	(void)state;
	out = import(lsf, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  cores: 8\n  memory: 16000000000\n");
	assert_contains(out, "#   ncpus: the job's CPU request (-n): became "
	    "cores: 8 (the file said cores: 4,");
	assert_contains(out, "#   mem: the job's memory request (-M), in "
	    "bytes: became memory: 16000000000 (the file said memory: 8GB,");
	assert_contains(out, "#   lsf-units (line 7): ckspool writes -M and "
	    "rusage[mem] in MiB");
	assert_contains(out, "#   use-stdin (line 8): ckspool always submits "
	    "with \"bsub < FILE\"");
	assert_contains(out, "#   job-cpu (line 9): not a key of "
	    "dask-jobqueue's lsf section; ignored\n");
	assert_int_equal(parse(&c, out, why, sizeof why), 0);
	assert_int_equal(c.kinds[0].cores, 8);
	assert_int_equal(c.kinds[0].memory, 16000000000ULL);
	config_free(&c);
	free(out);
	/* Slurm's job_cpu and job_mem; the same value is only noted */
	out = import("jobqueue:\n  slurm:\n    cores: 2\n    job_cpu: 2\n"
	    "    job_mem: 10GB\n", NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  cores: 2\n  memory: 10GB\n");
	assert_contains(out, "#   job_cpu: the job's CPU request: the same as "
	    "cores here\n");
	assert_contains(out, "#   job_mem: the job's memory request: became "
	    "memory: 10GB\n");
	free(out);
}

/* dask reads "_" in a key as "-"; two spellings of one key: the first. */
static void
test_import_underscore_keys(void **state)
{
	static const char pbs[] =
	    "jobqueue:\n"
	    "  pbs:\n"
	    "    cores: 2\n"
	    "    job_extra_directives: ['-l place=excl']\n"
	    "    job_script_prologue: ['module load x']\n"
	    "    local_directory: /scratch/me\n"
	    "    log_directory: /home/me/logs\n"
	    "    death_timeout: 90\n"
	    "    resource_spec: select=1:ncpus=2\n"
	    "    job_directives_skip: ['-j oe']\n"
	    "    worker_extra_args: ['--lifetime', '1h']\n"
	    "    job-extra: ['-V']\n"
	    "    account: a1\n"
	    "    project: p1\n";
	struct config c;
	char *out, why[300];
	int rc;

	(void)state;
	out = import(pbs, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_contains(out, "  job-extra-directives: [\"-l place=excl\"]\n");
	assert_contains(out, "  job-script-prologue: [\"module load x\"]\n");
	assert_contains(out, "  local-directory: \"/scratch/me\"\n");
	assert_contains(out, "  log-directory: \"/home/me/logs\"\n");
	assert_contains(out, "  death-timeout: 90s\n");
	assert_contains(out, "  resource-spec: \"select=1:ncpus=2\"\n");
	assert_contains(out, "  job-directives-skip: [\"-j oe\"]\n");
	assert_contains(out, "#   worker_extra_args (line 11): use the cluster "
	    "keys instead");
	assert_contains(out, "#   job-extra (line 12): also given as "
	    "job_extra_directives (line 4); only that one is converted\n");
	assert_contains(out, "#   project (line 14): also given as account "
	    "(line 13); only that one is converted\n");
	assert_true(strstr(out, "not a key ckspool knows") == NULL);
	assert_int_equal(parse(&c, out, why, sizeof why), 0);
	assert_string_equal(c.kinds[0].local_dir, "/scratch/me");
	assert_string_equal(c.kinds[0].extra[0], "-l place=excl");
	assert_null(c.kinds[0].extra[1]);
	assert_string_equal(c.kinds[0].prologue[0], "module load x");
	assert_string_equal(c.kinds[0].account, "a1");
	assert_int_equal(c.kinds[0].death_timeout_ms, 90000);
	config_free(&c);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_commented_out_document),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_all_keys_together),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_worker_section),
		cmocka_unit_test(test_lost_timeout_boundary),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_cluster_section),
		cmocka_unit_test(test_cluster_kinds),
		cmocka_unit_test(test_cluster_errors),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_import_jobqueue),
		cmocka_unit_test(test_import_sge_pe_slots),
		cmocka_unit_test(test_import_walltime_units),
		cmocka_unit_test(test_import_job_request),
		cmocka_unit_test(test_import_underscore_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

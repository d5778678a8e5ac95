/*
 * config.h - the spool's configuration, SPOOL/spool.yaml.
 *
 * Optional; every key has a default.  Read with yamlx (untrusted YAML
 * rules) and checked strictly: an unknown key or a bad value is an
 * error naming the file, line, column and key, and the program that
 * reads it refuses to start rather than guess.
 *
 *   daemon:
 *     fsync: true          # flush before a state change is published
 *     heartbeat: 2s        # how often workers and spoold beat
 *     lost-timeout: 30s    # no worker beat this long: worker lost
 *     death-timeout: 60s   # no spoold beat this long: workers leave
 *     rescan: 1s           # longest interval between directory rescans
 *     settle: 2s           # a dropped file must be quiet this long
 *     max-requeues: 3      # worker-lost requeues before a task fails
 *     shared: false        # shared with its group: members submit, each
 *                          # task runs as its submitter (spool-layout(5))
 *     journal-size: 256M   # the event journal is kept under this
 *
 *   cluster:               # the workers, described once (dask-jobqueue
 *     backend: slurm       # keys and meanings; see doc/backends.md)
 *     cores: 8             # per job
 *     processes: 2         # above 1: task slots of the job's ckworker,
 *                          # each task at least cores/processes cores
 *                          # (1: a slot per core); "spool scale N" asks
 *                          # N / processes jobs
 *     memory: 32GB         # per job
 *     gpus: 0
 *     walltime: "04:00:00"
 *     queue: normal
 *     account: proj42      # also "project"
 *     resource-spec: "h_vmem=4G"
 *     parallel-environment: smp   # SGE: #$ -pe smp CORES
 *     job-extra-directives: ["--qos=high"]
 *     job-directives-skip: ["--mem"]
 *     job-script-prologue: ["module load gcc", "source env/bin/activate"]
 *     local-directory: /scratch/$USER
 *     log-directory: /home/me/logs
 *     death-timeout: 60s
 *     idle-timeout: 5m
 *     env: {PYTHONPATH: /opt/lib}
 *     export-env: true     # pass spoold's environment (-V, --export=ALL)
 *     name: ckworker
 *     job-array: true
 *     poll-interval: 10s   # how often spoold asks the batch system
 *     max-submit-failures: 5
 *     scale-down-delay: 60s   # no worker stopped younger than a quarter
 *                          # of this; adapt shrinks after wanting less
 *                          # for this long
 *     cpu-limit: cpuset    # also memory-limit, gpu-limit: given on the
 *                          # job's ckworker line, over worker: below
 *     kinds:               # more worker pools, each inheriting the above
 *       gpu: {queue: gpu, gpus: 1, cores: 4}
 *
 *   worker:                # how every worker of the spool keeps its
 *     memory-limit: cgroup # tasks to their resources, read by ckworker
 *     cpu-limit: cpuset    # at its start, however it was started; its
 *     gpu-limit: devices   # --memory-limit, --cpu-limit, --gpu-limit
 *                          # override them.  Not given: auto
 *
 * With no "kinds", the cluster section itself is the one kind, named
 * "default".  Each kind is scaled on its own ("spool scale --kind").
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum backend { BK_LOCAL, BK_SLURM, BK_SGE, BK_PBS, BK_LSF, BK_NBACKENDS };

extern const char *const backend_name[BK_NBACKENDS];

/*
 * The methods a worker keeps its tasks to their memory, CPUs and GPUs
 * by: the keys of worker: in spool.yaml and ckworker's options
 * --memory-limit, --cpu-limit and --gpu-limit (ckworker(1)).
 */
enum limit_kind { LIMIT_MEMORY, LIMIT_CPU, LIMIT_GPU, LIMIT_N };

extern const char *const limit_key[LIMIT_N];	/* "memory-limit", ... */

/*
 * v if it names one of k's methods ("auto" first; the pointer is the
 * table's own, static), else NULL with "use auto, ... or ..." in why.
 */
const char *config_limit_method(enum limit_kind k, const char *v, char *why,
	    size_t whysize);

#define KIND_NAME_MAX 64
#define KINDS_MAX 32

struct kind {
	char	name[KIND_NAME_MAX];	/* "default", or its key under kinds */
	enum backend backend;
	char	*job_name;		/* "name": the batch job's name */
	uint32_t cores;			/* per job */
	uint32_t processes;		/* task slots of its ckworker */
	uint64_t memory;		/* per job, bytes; 0: not asked */
	uint32_t gpus;
	uint64_t walltime;		/* seconds; 0: the site's default */
	char	*queue;
	char	*account;
	char	*resource_spec;
	char	*pe;			/* SGE parallel environment */
	char	**extra;		/* job-extra-directives */
	char	**skip;			/* job-directives-skip */
	char	**prologue;		/* job-script-prologue */
	char	*local_dir;
	char	*log_dir;
	char	**env;			/* NAME=VALUE for the worker and tasks */
	int	export_env;		/* pass the submitter's environment */
	uint64_t death_timeout_ms;
	uint64_t idle_timeout_ms;	/* 0: never */
	int	job_array;
	char	*shebang;
	/* memory-limit, cpu-limit, gpu-limit: options of its ckworker
	 * (config_limit_method's); NULL: not given (worker: decides) */
	const char *limit[LIMIT_N];
};

struct config {
	/* daemon: */
	int	fsync;
	uint64_t heartbeat_ms;
	uint64_t lost_timeout_ms;
	uint64_t death_timeout_ms;
	uint64_t rescan_ms;
	uint64_t settle_ms;
	uint32_t max_requeues;
	int	shared;
	uint64_t journal_bytes;	/* journal-size (journal.h) */
	/* cluster: */
	int	have_cluster;		/* a cluster section was given */
	uint64_t poll_ms;
	uint32_t max_submit_failures;
	uint64_t scale_down_ms;	/* adapt: want fewer this long first */
	struct kind *kinds;
	size_t	nkinds;
	/* worker: each a method of config_limit_method, NULL: not given */
	const char *worker_limit[LIMIT_N];
};

#define CONFIG_FILE "spool.yaml"

void	config_defaults(struct config *c);
void	config_free(struct config *c);
/*
 * Read dfd/spool.yaml into c (defaults first).  A missing file is not
 * an error.  On error fills why ("spool.yaml: line 3, column 5: ...").
 * st (may be NULL): the file read, its owner and mode to be judged;
 * st_nlink 0 when there was none.
 */
int	config_load(struct config *c, int dfd, struct stat *st, char *why,
	    size_t whysize);
/* Parse YAML text (for tests and the fuzzer). */
int	config_parse(struct config *c, const char *data, size_t len,
	    char *why, size_t whysize);

const struct kind *config_kind(const struct config *c, const char *name);

/*
 * What a newly read configuration b changes from the one in force a,
 * for spoold's reload (SIGHUP): NULL, with the changed keys a running
 * spoold takes in changed ("daemon: settle, kind gpu, worker:
 * cpu-limit"; empty: none); or the first key that only a restart
 * applies: daemon: heartbeat, lost-timeout, death-timeout, fsync and
 * shared (its workers and its lease were started with them), and the
 * kinds' number, names, order and backends ("cluster: its kinds": the
 * jobs and the sizes asked refer to them).  It compares every key of
 * the parser's tables, so a key added there is compared too.  The
 * text returned may be changed's: use it before changed is reset.
 */
const char *config_diff(const struct config *a, const struct config *b,
	    struct buf *changed);

/*
 * How late another host may see spoold's beat: across the test hosts'
 * sshfs a worker saw a new beat every 1.0 to 1.2 s while spoold beat
 * every 0.2 s, later on a loaded host (ckworker(1), "spoold gone").
 */
#define BEAT_LATE_MS	2000
/*
 * The least death timeout that a beat seen late cannot pass: spoold
 * beats every heartbeat and a worker looks every heartbeat, so two
 * beats seen can be two heartbeats apart, each up to BEAT_LATE_MS late.
 * A shorter one (but 0, never leave) drains workers while spoold is
 * well; ckworker and spoold say so.
 */
uint64_t config_death_timeout_least(const struct config *c);
/* Whether v is within the bounds of daemon: KEY, a key of V_MS or V_UINT
 * (a value read back from elsewhere, as spoold's lease); 0 if no such
 * key. */
int	config_daemon_in_bounds(const char *key, uint64_t v);
/*
 * Warn (msg_warn) of each death timeout in spool.yaml under that
 * least, the daemon's and each kind's: spoold at its start, and
 * "spool config show", where the one who wrote spool.yaml looks.
 */
void	config_warn_death_timeouts(const struct config *c);

int	backend_parse(const char *s, enum backend *b);

/*
 * Convert a dask-jobqueue jobqueue.yaml into spool.yaml text, with a
 * comment for each key that has no meaning here.  backend NULL: the
 * only backend section in the file.  0, or -1 with why.
 */
int	config_import_jobqueue(const char *data, size_t len,
	    const char *backend, struct buf *out, char *why, size_t size);

#endif

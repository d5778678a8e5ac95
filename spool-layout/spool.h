/*
 * spool.h - the on-disk layout of a spool, opened once per program.
 *
 * A spool is a directory with these subdirectories (spool-layout(5) is
 * the full description; the enum names are the directory names):
 *
 *   tmp/        temporary files of every writer; renamed out when done
 *   incoming/   submissions: CLI bundles and files users drop with cp
 *   accepting/  spoold's claim on a submission while it is accepted
 *   rejected/   refused submissions, each with NAME.why
 *   specs/      accepted task specs, in bundles named by first ID
 *   tasks/      finished tasks: tasks/SHARD/ID/{spec,result,stdout,stderr}
 *   workers/    one directory per registered worker (see wdir.h)
 *   ids/        the ID claim chain (see ids.h)
 *   control/    requests to spoold (cancel)
 *   requeued/   attempt counters of tasks that ran more than once
 *   state/      what spoold publishes: summary
 *   lock/       spoold's lease (see lease.h)
 *   gc/         directories renamed here to be removed lazily
 *   log/        logs of processes spoold starts
 *   attempts/   ID.ATTEMPT/ of attempts retried or handed back, until
 *               the task is final and they move into tasks/SHARD/ID/
 *   jobs/       one record per batch job spoold submitted (scale.c)
 *   scale/      KIND: the size asked for each worker kind ("spool scale")
 *   journal/    the event journal: history, one file per writer (journal.h)
 *
 * Every directory is opened once with O_NOFOLLOW and kept open; all
 * later access is relative to these descriptors.  spool_open() refuses
 * a spool whose directories are symlinks, belong to another user, are
 * writable by everyone, or are writable by their group (unless the
 * config says the spool is shared: "daemon: shared: true"; then the
 * members of the directories' group may submit, and each task runs as
 * the user who submitted it, spool-layout(5), SHARED SPOOLS).
 */
#ifndef SPOOL_H
#define SPOOL_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"

enum spool_dir {
	SD_TMP, SD_INCOMING, SD_ACCEPTING, SD_REJECTED, SD_SPECS, SD_TASKS,
	SD_WORKERS, SD_IDS, SD_CONTROL, SD_REQUEUED, SD_STATE, SD_LOCK, SD_GC,
	SD_LOG, SD_ATTEMPTS, SD_JOBS, SD_SCALE, SD_JOURNAL, SD_NDIRS
};

extern const char *const spool_dir_name[SD_NDIRS];

#define SPOOL_FORMAT		"ckspool 1\n"
#define SPOOL_SHARD_SIZE	1000	/* tasks per tasks/SHARD directory */
#define SPOOL_PATH_MAX		64	/* "SHARD/ID" and similar names */
#define SPOOL_SUMMARY_MAX	65536	/* state/summary, as its readers take it */

struct spool {
	char	*root;
	char	*shown;		/* root as messages show it: bare if a
				 * plain path, else quoted (journal_q) */
	int	rootfd;
	int	fd[SD_NDIRS];
	uid_t	uid;		/* owner of the spool */
	struct config cfg;
};

/* Where the spool is: -S DIR, else $SPOOL.  NULL if neither. */
const char *spool_locate(const char *opt);

/* Create a spool (the directory may exist and be empty). 0 / -1. */
int	spool_init(const char *path, char *why, size_t whysize);

/* Open an existing spool; on failure fills why and returns -1. */
int	spool_open(struct spool *sp, const char *path, char *why,
	    size_t whysize);
void	spool_close(struct spool *sp);
/*
 * Read the spool's spool.yaml again into c (spoold's reload), with the
 * checks of spool_open: 0, or -1 with why and nothing kept in c.
 */
int	spool_config_read(const struct spool *sp, struct config *c,
	    char *why, size_t whysize);

/* "SHARD/ID" of a task under tasks/, and "SHARD" alone. */
void	spool_task_path(uint64_t id, char *out, size_t size);
void	spool_task_shard(uint64_t id, char *out, size_t size);

/* Does the spool still exist?  0 only when its FORMAT file is proven
 * gone (ENOENT; ESTALE confirmed by a lookup by path); 1 otherwise. */
int	spool_alive(const struct spool *sp);

/*
 * Check a file or directory we are about to trust: owned by the spool
 * owner, not writable by others unless shared.  0, or -1 with why.
 */
int	spool_check_owner(const struct spool *sp, const struct stat *st,
	    const char **why);

/*
 * Check a submitted file (incoming/): in a private spool as
 * spool_check_owner; in a shared one any owner (the submitter, whom its
 * tasks run as) but writable by nobody else.  0, or -1 with why.
 */
int	spool_check_submission(const struct spool *sp, const struct stat *st,
	    const char **why);

#endif

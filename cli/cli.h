/*
 * cli.h - the "spool" command: shared pieces of its subcommands.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "result.h"
#include "spool.h"
#include "task.h"
#include "wdir.h"

extern struct spool cli_sp;
extern const char *cli_spool_path;

/* Open the spool named by -S / $SPOOL, or exit with a message. */
void	cli_open(void);
/* The open spool's real path (realpath) into out, or exit. */
void	cli_spool_realpath(char out[PATH_MAX]);

/*
 * IDs from argv, or from stdin (whitespace separated) if argv is empty
 * or is the single word "-".
 */
uint64_t *cli_read_ids(int argc, char **argv, size_t *n);

/* Submit tasks as one bundle; fills their IDs.  0 or exits. */
void	cli_submit_tasks(struct task_spec *t, size_t n, unsigned flags);

/* Apply a submit option from getopt; 0 or exits with a message. */
int	cli_task_option(struct task_spec *t, int opt, const char *arg);
extern const struct option *cli_task_options;
extern const char cli_task_optstring[];

/* Read tasks/SHARD/ID/result; 1 found, 0 not finished, -1 error. */
int	cli_read_result(uint64_t id, struct result *r);

/* This host's spoolfs mounts of a spool (mounts.c). */
struct spool_mount {
	unsigned long id;	/* mountinfo's mount ID */
	char	*path;		/* the mount point */
};
/*
 * The mounts of the spool whose real path is real that this process's
 * mount namespace holds, into *v (spool_mounts_free); their count, or
 * -1 with errno when /proc/self/mountinfo cannot be read.
 */
ssize_t	spool_mounts_here(const char *real, struct spool_mount **v);
/* 1 if m (the same ID and mount point) is among v's n. */
int	spool_mount_in(const struct spool_mount *m, const struct spool_mount *v,
	    size_t n);
void	spool_mounts_free(struct spool_mount *v, size_t n);

/* Task state as the files tell it (query.c). */
struct tview {
	uint64_t id;
	const char *state;	/* submitted queued waiting placed running
				   finishing done failed cancelled rejected
				   unknown */
	uint32_t attempt;
	char	worker[WDIR_ID_MAX];
	char	*name;
	int	has_result;
	struct result r;
	/* what it asks, from its spec (has_ask: read), and whether it is
	 * queued with a shape that spoold's summary lists as one no
	 * worker or kind can run (unfit_shapes: spoold(8), "Placement") */
	int	has_ask;
	struct task_shape ask;
	int	unfit;
	/* its dependencies (--after), for a task read from its bundle */
	uint64_t *after;
	size_t	nafter;
};

void	query_init(void);
/* Forget what query_init read, for a later query_task to read anew
 * (but the unfit shapes: query_unfit_reload). */
void	query_reset(void);
/* Read the unfit shapes of spoold's summary anew: 1 if it lists some,
 * not those read before, else 0. */
int	query_unfit_reload(void);
void	query_task(uint64_t id, struct tview *v);
void	query_free(struct tview *v);
/* Running/placed tasks across all workers, for "spool status". */
size_t	query_active(uint64_t **ids);
/* state/summary, spoold's counts, into b: 0, or -1 with errno. */
struct buf;
int	cli_read_summary(struct buf *b);

/*
 * What the summary sum (state/summary, len bytes) says of o, the lease's
 * holder, for "spool status" and "spool top": "" when it is o's own,
 * ", recovering" or ", stopping" when o says so, or ", left by spoold
 * HOST.PID" when it is another spoold's (o has not published yet).  In
 * out (size bytes), which is returned.
 */
struct owner_info;
const char *query_summary_note(const char *sum, size_t len,
	    const struct owner_info *o, char *out, size_t size);
/*
 * The workers the summary sum counts: "N (D draining, G gpus-held, L
 * lost)", lost since spoold started; "N" alone from a spoold that does
 * not count them, "?" with no count at all.  In out, which is returned.
 */
const char *query_summary_workers(const char *sum, size_t len, char *out,
	    size_t size);

int	cmd_init(int argc, char **argv);
int	cmd_submit(int argc, char **argv);
int	cmd_map(int argc, char **argv);
int	cmd_wait(int argc, char **argv);
int	cmd_gather(int argc, char **argv);
int	cmd_status(int argc, char **argv);
int	cmd_cancel(int argc, char **argv);
int	cmd_retry(int argc, char **argv);
int	cmd_workers(int argc, char **argv);
int	cmd_metrics(int argc, char **argv);
int	cmd_path(int argc, char **argv);
int	cmd_job_script(int argc, char **argv);
int	cmd_scale(int argc, char **argv);
int	cmd_adapt(int argc, char **argv);
int	cmd_wait_workers(int argc, char **argv);
int	cmd_shutdown(int argc, char **argv);
int	cmd_config(int argc, char **argv);
int	cmd_start_workers(int argc, char **argv);
int	cmd_top(int argc, char **argv);	/* top.c, report.c, journal.c */
int	cmd_report(int argc, char **argv);
int	cmd_journal(int argc, char **argv);
int	cmd_fsck(int argc, char **argv);
int	cmd_purge(int argc, char **argv);
/* ckworker beside this program, or $CKWORKER. */
void	cli_worker_path(char *out, size_t size);
/* The worker jobs spoold submitted (jobs/), for "spool workers". */
void	cluster_print_jobs(void);

#endif

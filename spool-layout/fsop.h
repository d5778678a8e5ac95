/*
 * fsop.h - the one layer through which ckspool touches the filesystem.
 *
 * Every mutation (create, write, rename, unlink, mkdir, rmdir, symlink,
 * fsync, syncfs) and every directory listing, stat and file read goes
 * through these functions.  They:
 *
 *  - use *at() calls relative to directory descriptors, with O_NOFOLLOW
 *    and O_CLOEXEC, so no path component is ever resolved twice;
 *  - retry EINTR and ESTALE (a bounded number of times, by name again),
 *    and treat NFS retransmission artefacts as success where the
 *    outcome proves it (see fsop_rename);
 *  - count each operation by kind (fsop_count[]), which the benchmark
 *    reports as operations per task, and which is where fault injection
 *    hooks in ($CKSPOOL_FAULT, fault.h; or fsop_fault_hook);
 *  - implement the commit protocol: write to a unique temporary name in
 *    the same filesystem, flush, rename into place (fsop_publish), with
 *    group commit through fsop_barrier() (one syncfs for many files).
 *
 * All functions return 0 (or a descriptor) on success and -1 with errno
 * set on failure; callers say what failed.  None of them logs, but for
 * the clean-up after a failed write (fsop_publish, fsop_write_whole),
 * which says what it could not remove, since the caller hears only of
 * the write's failure.
 */
#ifndef FSOP_H
#define FSOP_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "buf.h"

enum fsop_kind {
	FSOP_CREATE, FSOP_WRITE, FSOP_RENAME, FSOP_UNLINK, FSOP_MKDIR,
	FSOP_RMDIR, FSOP_SYMLINK, FSOP_FSYNC, FSOP_SYNCFS, FSOP_OPEN,
	FSOP_LIST, FSOP_STAT, FSOP_READLINK, FSOP_WATCH, FSOP_NKINDS
};

extern unsigned long fsop_count[FSOP_NKINDS];
extern const char *const fsop_kind_name[FSOP_NKINDS];

/* Durability: when off (tmpfs tests, "fsync: false"), fsync is skipped. */
void	fsop_set_sync(int on);
int	fsop_sync_enabled(void);

/*
 * Shared spools ("daemon: shared: true"): files and directories created
 * from then on give the group what the mode gives the owner to read and
 * search (0600 -> 0640, 0700 -> 0750), never write, so that the members
 * of the spool's group read results and outputs.  Off by default.
 */
void	fsop_set_shared(int on);
/* Set a directory's mode whatever the umask was (one others write
 * into), also one its owner may not read; a symbolic link is not
 * followed (ELOOP/ENOTDIR, or EOPNOTSUPP for one its owner may not
 * read). */
int	fsop_chmod_dir(int dfd, const char *name, mode_t mode);

/*
 * Fault injection (unit tests): called before every counted operation
 * (every try of it) with its kind; returns 0 to proceed, or an errno
 * value to fail the operation with.  It may also _exit() the process.
 * NULL by default; while set, $CKSPOOL_FAULT (fault.h) is not used.
 */
extern int (*fsop_fault_hook)(enum fsop_kind kind, const char *name);

/* Tries of one operation after EINTR and after ESTALE (stale handle). */
#define FSOP_EINTR_TRIES	8
#define FSOP_ESTALE_TRIES	4

/* Unique temporary file name: host.pid.counter.random, NUL-terminated. */
#define FSOP_TMPNAME_MAX 96
void	fsop_tmpname(char *out, size_t size, const char *prefix);

int	fsop_mkdir(int dfd, const char *name, mode_t mode);
int	fsop_rename(int odfd, const char *oname, int ndfd, const char *nname);
int	fsop_unlink(int dfd, const char *name);
int	fsop_rmdir(int dfd, const char *name);
int	fsop_symlink(const char *target, int dfd, const char *name);
int	fsop_readlink(int dfd, const char *name, char *out, size_t size);
int	fsop_create(int dfd, const char *name, mode_t mode);
/*
 * dfd/name made new (as fsop_create), whatever had the name removed
 * first and never opened: a task's own file of that name (it runs in
 * the directory) may be a link, a FIFO or a directory.
 */
int	fsop_create_replacing(int dfd, const char *name, mode_t mode);
int	fsop_write(int fd, const void *data, size_t len);
/*
 * fsop_write for files that are history and never flushed (the
 * journal): counted as a write, but it does not make the pass dirty,
 * so it costs no syncfs at the next barrier.
 */
int	fsop_append(int fd, const void *data, size_t len);
int	fsop_fsync(int fd);
/*
 * Cut an open file to len bytes (ftruncate): counted as a write, so
 * that fault injection reaches it; not retried after ESTALE (the file
 * is open, its handle is what went stale).
 */
int	fsop_truncate(int fd, off_t len);
/*
 * pread(2), made again after EINTR; not counted (a read of a file
 * already open), but fault injection reaches it (read-fails, fault.h).
 * Bytes read, or -1 with errno.
 */
ssize_t	fsop_pread(int fd, void *p, size_t len, off_t off);
/*
 * Set the modification time of the open file or directory fd to now
 * (futimens), so that those who compare its stamp (watch.h: dirstamp)
 * look again: "spool purge" does so to tasks/ (taskview.c).  Counted as
 * a write; not retried after ESTALE (the handle is what went stale).
 */
int	fsop_touch(int fd);
int	fsop_close(int fd);
int	fsop_stat(int dfd, const char *name, struct stat *st);
int	fsop_opendir(int dfd, const char *name);
int	fsop_openfile(int dfd, const char *name, int flags, mode_t mode);

/*
 * Write data to a new temporary file in tmpdfd, fsync it if durable and
 * syncing is on, and rename it to dfd/name (replacing what is there).
 * A stale handle on the way makes it start again with a new temporary
 * file (FSOP_ESTALE_TRIES times in all).  tmpdfd is the spool's tmp/:
 * a failure removes the temporary file, and a removal that fails too
 * is warned of as "unlink: tmp/NAME: ..." and left to spoold's sweep.
 */
#define FSOP_DURABLE	0x1	/* fsync the file before the rename */
int	fsop_publish(int tmpdfd, int dfd, const char *name, const void *data,
	    size_t len, mode_t mode, unsigned flags);
/*
 * Write data as a new file dfd/name itself, no temporary name and no
 * rename; fsync it if FSOP_DURABLE and syncing is on.  Whatever had the
 * name is removed first, never opened (in a worker's attempt directory,
 * the task's own file of that name, which may be a link, a FIFO or a
 * directory tree).
 * Only for a directory that nobody reads before a later rename makes it
 * visible (an attempt directory, read once its assignment is
 * committed): there the commit publishes the file, and a rename of its
 * own would cost one more directory update for nothing.  A failure
 * removes the file (a removal that fails is warned of, "unlink:
 * DIR/NAME: ...", DIR being dfd as messages name it, such as
 * "workers/WID/work", and the file left for the next write to
 * replace); a stale handle on the way makes it start again
 * (FSOP_ESTALE_TRIES times in all).
 */
int	fsop_write_whole(int dfd, const char *dir, const char *name,
	    const void *data, size_t len, mode_t mode, unsigned flags);
/*
 * Open the existing regular file dfd/name to write over it from its
 * start (no new name, no rename; a reader may see it half written:
 * beatfile.h says who does this and how readers cope), and give its
 * size.  A descriptor, or -1 with errno (EINVAL: not a regular file).
 */
int	fsop_open_overwrite(int dfd, const char *name, off_t *size);

/* Group commit: note that something changed; flush it all at once. */
void	fsop_dirty(void);
int	fsop_barrier(int anyfd);
/*
 * The barrier in two halves, for a caller that runs the syncfs(2)
 * elsewhere (ckworker's flusher thread): begin counts it, lets fault
 * injection fail it (-1 with errno) and says whether a flush is due
 * (1) or not (0: nothing changed since the last one, or syncing is
 * off); end takes the flush's outcome (0, or an errno: -1 with errno
 * set).  What changes after begin is for the next barrier; a flush
 * that failed leaves everything for the next one.
 */
int	fsop_barrier_begin(void);
int	fsop_barrier_end(int err);
/*
 * fsync the directory dfd, which is parentfd/name: on a stale handle it
 * is opened again by that name and flushed through the new descriptor
 * (FSOP_ESTALE_TRIES times in all; parentfd -1: not opened again).
 * Fault injection's fail-on and crash-on take name as the fsync's.
 */
int	fsop_fsync_dir(int dfd, int parentfd, const char *name);

/*
 * Open a regular file to read (never a FIFO, device or symlink: not
 * blocking, and EINVAL for what fstat says is not a regular file); st
 * is filled from the descriptor when not NULL.  The descriptor, or -1.
 */
int	fsop_open_regular(int dfd, const char *name, struct stat *st);

/*
 * Read a regular file (never a FIFO, device or symlink) of at most max
 * bytes.  EFBIG if larger, EINVAL if not a regular file.  st is filled
 * from the open descriptor when not NULL.  A short read that brings the
 * content to the size fstat gave (not 0) is taken as the end; a file
 * that grew meanwhile is read to its end.  Its reads are fsop_pread's
 * (fault injection's read-fails reaches them).
 */
int	fsop_read_file(int dfd, const char *name, size_t max, struct buf *out,
	    struct stat *st);

/*
 * Call fn for every entry of dfd/name (name may be "." ), skipping "."
 * and "..".  fn returns 0 to go on, nonzero to stop (that value is
 * returned).  d_type is DT_UNKNOWN on filesystems that do not say.
 */
typedef int (*fsop_list_fn)(void *arg, const char *name, unsigned char d_type);
int	fsop_list(int dfd, const char *name, fsop_list_fn fn, void *arg);

/*
 * The names of dfd/name's entries (fsop_list's) that keep accepts
 * (NULL: every one), copied and sorted by cmp, a qsort(3) comparison
 * of two elements of v (NULL: strcmp(3) order).  0, or -1 with errno
 * and ns empty (a listing that failed half way keeps nothing).  A
 * directory that changed while listed may name an entry twice.
 */
struct fsop_names {
	char	**v;
	size_t	n;
};
int	fsop_list_names(int dfd, const char *name, int (*keep)(const char *),
	    int (*cmp)(const void *, const void *), struct fsop_names *ns);
/* Free the names and empty ns. */
void	fsop_names_free(struct fsop_names *ns);

/* Remove dfd/name and everything under it; ENOENT counts as success. */
int	fsop_rmtree(int dfd, const char *name);

/* Print the counters as "kind count" lines (for the benchmark). */
void	fsop_stats_write(int fd);
/*
 * If $CKSPOOL_FSOP_STATS is set, write the counters at exit to
 * $CKSPOOL_FSOP_STATS.PROG.PID (tests and the benchmark count
 * operations per task from them).
 */
void	fsop_stats_at_exit(const char *prog);

#endif

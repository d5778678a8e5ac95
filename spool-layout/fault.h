/*
 * fault.h - fault injection into the filesystem layer (fsop.c), for the
 * crash and error tests.
 *
 * Driven by the environment variable CKSPOOL_FAULT, read once at the
 * first counted filesystem operation and then removed from the
 * environment (it applies to the process that read it, not to the
 * processes that one starts).  Unset, nothing happens.  Set, the
 * process says so on stderr once, and then, counting its mutations
 * (create, write, rename, unlink, mkdir, rmdir, symlink, fsync, syncfs:
 * every try of one, from 1):
 *
 *	crash-at=N       _exit(FAULT_CRASH_STATUS) just before mutation N,
 *	                 after saying so on stderr; nothing is flushed, as
 *	                 after kill -9
 *	crash-on=PREFIX*K
 *	                 the same just before the Kth mutation (K: 1 if
 *	                 not given) of a name that starts with PREFIX (for
 *	                 a rename, its old name)
 *	fail-at=N:ERR    mutation N fails with ERR without being done
 *	fail-at=N:ERR*K  mutations N to N+K-1 fail so (several fail-at
 *	                 items may be given)
 *	fail-on=PREFIX:ERR*K
 *	                 the first K mutations (K: 1 if not given) of a
 *	                 name that starts with PREFIX (for a rename, its
 *	                 old name; a name relative to the directory it is
 *	                 in: "12.1/result"; for a directory's fsync, the
 *	                 directory's name: "requeued") fail with ERR
 *	                 without being done
 *	stat-fails=PREFIX:ERR*K
 *	                 the first K stats of a name that starts with PREFIX
 *	                 fail with ERR (stats are looked at only with
 *	                 count=all)
 *	open-fails=PREFIX:ERR*K
 *	                 the same for opens that create nothing (a read of
 *	                 a file, an opendir)
 *	readlink-fails=PREFIX:ERR*K
 *	                 the same for reads of a symbolic link (an ID
 *	                 claim: "0/12", relative to ids/; only with
 *	                 count=all, as stat-fails)
 *	list-fails=PREFIX:ERR*K
 *	                 the same for listings of a directory whose name
 *	                 starts with PREFIX (for a listing of "." through a
 *	                 directory's descriptor, the last component of its
 *	                 path: "incoming")
 *	list-breaks=PREFIX:ERR*K
 *	                 the same listings, but each fails with ERR after it
 *	                 has handed out every entry, as a readdir that
 *	                 fails at the end of a directory does: a listing
 *	                 made again after it names those entries twice;
 *	                 with or without count=all, and not counted
 *	read-fails=PREFIX:ERR*K
 *	                 the same for reads of an open file (fsop_pread: a
 *	                 bundle read a piece at a time) whose name, the
 *	                 last component of its path, starts with PREFIX
 *	                 ("12": specs/12); with or without count=all, and
 *	                 not counted
 *	PREFIX:ERR*K@S   (fail-on, stat-fails, open-fails, readlink-fails,
 *	                 list-fails, list-breaks, read-fails) the K after
 *	                 letting the first S of them by: spoold's
 *	                 recovery, which lists until it succeeds, lets its
 *	                 own listings by, and its main loop's fail
 *	sync-fails=N:ERR*K
 *	                 syncfs N to N+K-1 (counting the syncfs that ran,
 *	                 from 1; K: 1 if not given) report ERR after they
 *	                 ran, as a writeback error that syncfs reports: the
 *	                 data it covered may be lost.  Injected where the
 *	                 outcome is taken (fsop_barrier_end, in the thread
 *	                 that asked for the flush: ckworker's flusher
 *	                 thread itself is left alone)
 *	sync-loses=DIR*K
 *	                 the first K syncfs (K: 1 if not given) of spoold
 *	                 (fsop_barrier) that run while DIR, relative to the
 *	                 spool, holds files (names not starting with ".")
 *	                 remove them and report EIO: what that flush was to
 *	                 make durable never reached the disk.  For a test
 *	                 that knows DIR holds only what the pass wrote
 *	                 (DIR "specs": a submission accepted in it)
 *	phantom-at=N     the first rename, mkdir, symlink, unlink or rmdir
 *	                 from mutation N on that succeeds is done, but
 *	                 reports what an NFS retransmission of it reports:
 *	                 ENOENT for rename, unlink and rmdir, EEXIST for
 *	                 mkdir and symlink (one that fails for real reports
 *	                 its own error and leaves the phantom to the next)
 *	busy-nfs         unlinking a name that starts with ".nfs" or
 *	                 ".fuse_hidden" fails with EBUSY, as on NFS (and
 *	                 sshfs) while the silly-renamed file is still open
 *	count=all        count every operation (also open, list, stat and
 *	                 readlink), not only mutations
 *	slow-sync=MS     every syncfs waits MS milliseconds first (a slow
 *	                 disk: what goes on while a worker's flush runs)
 *	sync-holds=PATH  every syncfs waits first (after slow-sync's MS)
 *	                 while the file PATH exists, looking every 10 ms:
 *	                 a flush that lasts until a test removes PATH,
 *	                 however slow the machine (PATH holds no comma)
 *	slow-stat=PREFIX:MS
 *	                 every stat of a name that starts with PREFIX waits
 *	                 MS milliseconds first (a slow file server; only
 *	                 with count=all, as stat-fails)
 *	fifo-on-open=PREFIX*K
 *	                 just before each of the first K opens that create
 *	                 nothing (K: 1 if not given) of a name that starts
 *	                 with PREFIX, the file of that name is replaced by
 *	                 a FIFO: a member of a shared spool swapping a
 *	                 task's file between a look at it and its open
 *
 * Items are separated by commas: "fail-at=3:EIO,crash-at=40".  ERR is
 * one of EIO ENOSPC EDQUOT ESTALE EINTR EACCES EPERM EROFS EBUSY ENOENT
 * EEXIST ENOMEM EAGAIN.  A malformed value is a usage error (exit 2).
 * fsop.c retries EINTR and ESTALE (fsop.h), so "fail-at=N:ESTALE*2" is
 * absorbed there and "fail-at=N:ESTALE*9" reaches the caller.
 */
#ifndef FAULT_H
#define FAULT_H

#include "fsop.h"

#define FAULT_ENV		"CKSPOOL_FAULT"
#define FAULT_CRASH_STATUS	86	/* exit status of an injected crash */

/* Before an operation: 0 to go on, or the errno to fail it with. */
int	fault_before(enum fsop_kind kind, const char *name);
/* After it ran with result rc: rc, or -1 and errno for a phantom. */
int	fault_after(enum fsop_kind kind, int rc);
/* The name a listing of dfd/name is known by to list-fails: name, or
 * for "." the last component of dfd's path, in buf. */
const char *fault_list_name(int dfd, const char *name, char *buf,
	    size_t size);
/* At the end of a listing of name (fault_list_name's): 0, or the errno
 * to fail it with after all its entries (list-breaks). */
int	fault_list_breaks(const char *name);
/* Before a read of the open file fd (fsop_pread): 0 to go on, or the
 * errno to fail it with (read-fails). */
int	fault_read_fails(int fd);
/* Before an open of dfd/name that creates nothing (fifo-on-open). */
void	fault_open(int dfd, const char *name);
/* Before an unlink of name: 1 and errno EBUSY if it must fail so. */
int	fault_unlink(const char *name);
/* A syncfs ran with outcome err (0: it worked): err, or the errno
 * sync-fails gives it. */
int	fault_sync_result(int err);
/* After a syncfs of fsop_barrier that worked, anyfd its file: 0, or
 * the errno sync-loses gives it (having removed what it loses). */
int	fault_sync_loses(int anyfd);
/* Operations counted so far in this process. */
unsigned long fault_count(void);
/* slow-sync: its milliseconds (0: not set); sync-holds: its file
 * (NULL: not set).  Each reads the environment if nothing did yet, so
 * call them before a thread uses fault_sync_delay. */
unsigned long fault_sync_delay_ms(void);
const char *fault_sync_hold(void);
/* Wait ms milliseconds (0: not at all), then while the file hold (NULL:
 * none) exists; safe in any thread.  A look at hold that fails (not
 * ENOENT) is said and ends the wait. */
void	fault_sync_delay(unsigned long ms, const char *hold);
/* Forget the state and read the environment again (unit tests). */
void	fault_reload(void);

#endif

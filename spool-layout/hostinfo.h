/*
 * hostinfo.h - who and where we are: host name, boot id, liveness of a
 * local process, clocks.
 *
 * A process on this host is judged dead only when its host name AND
 * boot id match ours and kill(pid, 0) says ESRCH; anything else (other
 * host, other boot) has to be judged by its heartbeat instead.
 */
#ifndef HOSTINFO_H
#define HOSTINFO_H

#include <stdint.h>
#include <sys/types.h>

const char *host_name(void);		/* short host name */
const char *host_boot_id(void);		/* /proc/sys/kernel/random/boot_id */
/* This process as HOST.PID, the writer a record names, into out. */
void	host_self(char *out, size_t size);
/*
 * 1 alive, 0 dead, -1 cannot tell (not this host or boot: a host that
 * rebooted and another host with the same short name look alike, so
 * the caller must judge by a heartbeat).  A zombie is
 * dead, and so is a process whose start time (pstart, in clock ticks
 * since boot; 0: unknown) differs: its pid was reused.
 */
int	host_pid_alive(const char *host, const char *boot, long pid,
	    unsigned long long pstart);
/*
 * /proc/PID/stat from its state field on (past the command's ") ": the
 * command may hold blanks and parentheses), read into buf (size bytes);
 * the process's owner into *uid unless uid is NULL.  NULL with errno
 * (ENOENT or ESRCH: no such process; EPROTO: not such a text).
 */
const char *host_proc_stat(long pid, char *buf, size_t size, uid_t *uid);
/* Start time of a process (field 22 of /proc/PID/stat); 0 if unknown. */
unsigned long long host_pid_start(long pid);
/* 1 if pid, on this host, runs (is no zombie) and started at start. */
int	host_pid_runs(long pid, unsigned long long start);

uint64_t now_ms(void);			/* CLOCK_MONOTONIC, milliseconds */
uint64_t now_us(void);			/* CLOCK_MONOTONIC, microseconds */
double	now_unix(void);			/* CLOCK_REALTIME, seconds */
void	sleep_ms(uint64_t ms);		/* less if a signal comes */

#endif

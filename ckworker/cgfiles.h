/*
 * cgfiles.h - the files of the task cgroups, kept open while they live.
 * See cgfiles.c.
 */
#ifndef CGFILES_H
#define CGFILES_H

#include <stddef.h>

enum cg_file {
	CGF_PROCS,	/* cgroup.procs, for writing: a write moves the writer */
	CGF_CURRENT,	/* memory.current (v2), memory.usage_in_bytes (v1) */
	CGF_PEAK,	/* memory.peak, memory.max_usage_in_bytes (v1: "0"
			 * written resets it) */
	CGF_EVENTS,	/* memory.events, memory.oom_control */
	CGF_N
};

/* Forget every cgroup (closing what was open); names are relative to
 * rootfd from now on, in the files of cgroup version 1 or 2. */
void	cgfiles_reset(int rootfd, int version);
/* A cgroup NAME was made, was renamed, is about to be removed. */
void	cgfiles_add(const char *name);
void	cgfiles_rename(const char *from, const char *to);
void	cgfiles_drop(const char *name);
/* Read the whole file (NUL-terminated, at most size - 1 bytes): its
 * length, or -1 with errno (ENOENT for a cgroup gone). */
int	cgfiles_read(const char *name, enum cg_file which, char *buf,
	    size_t size);
/* Write s in one write: 0, or -1 with errno. */
int	cgfiles_write(const char *name, enum cg_file which, const char *s);
/* The same on any open cgroup (or /proc) file: the whole file from
 * offset 0, and one write. */
int	cgfiles_read_fd(int fd, char *buf, size_t size);
int	cgfiles_write_fd(int fd, const char *s);
/* The same on a file opened for the call: path relative to dirfd (or
 * absolute), closed again; -1 with errno. */
int	cgfiles_read_at(int dirfd, const char *path, char *buf, size_t size);
int	cgfiles_write_at(int dirfd, const char *path, const char *s);
/* A descriptor of the file for the caller to close; -1 with errno. */
int	cgfiles_dup(const char *name, enum cg_file which);

#endif

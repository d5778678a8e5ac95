/*
 * flusher.h - the group commit's flush, in a thread of its own.  See
 * flusher.c.
 */
#ifndef FLUSHER_H
#define FLUSHER_H

#include <stddef.h>

/* Start the thread that flushes the filesystem of fd: 0, or -1 with
 * the reason in why. */
int	flusher_start(int fd, char *why, size_t whysize);
/* Readable when the flush in flight has ended (-1 before the start). */
int	flusher_fd(void);
/* A flush is in flight. */
int	flusher_busy(void);
/*
 * Ask for a flush of everything changed so far (fsop_barrier_begin):
 * 1 started, 0 nothing to flush, -1 with errno (it failed at once).
 * Not while one is in flight.
 */
int	flusher_begin(void);
/* Collect the outcome of the flush in flight, waiting for it if need
 * be: 0, or -1 with errno. */
int	flusher_end(void);

#endif

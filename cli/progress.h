/*
 * progress.h - the progress bar of "spool wait" and "spool gather"
 * (progress.c): on standard error when it is a terminal, else nothing.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct progress {
	int	on;		/* stderr is a terminal */
	int	drawn;		/* a bar is on the screen now */
	size_t	total;
	size_t	running;
	uint64_t start_ms, last_ms, running_ms;
	int	(*pending)(void *arg, uint64_t id);	/* awaited, not done */
	void	*arg;
};

void	progress_init(struct progress *p, size_t total,
	    int (*pending)(void *, uint64_t), void *arg);
/* Redraw (at most every 200 ms) with these counts of awaited tasks. */
void	progress_draw(struct progress *p, size_t done, size_t failed);
/* Erase the bar before writing anything else to the terminal. */
void	progress_clear(struct progress *p);

#endif

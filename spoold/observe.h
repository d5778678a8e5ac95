/*
 * observe.h - spoold's side of the event journal (journal.h): opening
 * it, the events that need spoold's model, and keeping it bounded.
 */
#ifndef OBSERVE_H
#define OBSERVE_H

#include "task.h"

/* After the lease is taken: open the journal, say we started. */
void	observe_start(void);
/* Once per loop pass: write what is pending; bound the journal. */
void	observe_tick(void);
/* At a clean stop: say so, write the rest. */
void	observe_stop(void);
/* A task accepted (not recovered): "submitted" and "accepted". */
void	observe_accepted(const struct task_spec *t);

#endif

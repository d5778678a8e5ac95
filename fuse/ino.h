/*
 * ino.h - the inode numbers of spoolfs: what each node of the mount is,
 * encoded in its number, so that nothing needs a table except the
 * nodes that have no fixed place (submission entries and the files a
 * finished task holds beyond the fixed ones).
 *
 *	1			/
 *	2			/submit
 *	3			/tasks
 *	4			/workers
 *	5			/summary
 *	16 + S			/STATE (S: enum tv_state, submitted..rejected)
 *	256 + ID*16 + K		/tasks/ID (K = NK_DIR) and its fixed files
 *				spec state result stdout stderr control, and
 *				the link ID -> ../tasks/ID in a state directory
 *	2^48 + W*4 + K		/workers/WID (W: the worker's number in this
 *				mount) and its files info status state
 *	2^56 + N		a submission entry (N: a serial number)
 *	2^60 + I		another file of a finished task (I: the
 *				underlying file's inode number, below 2^59)
 *
 * IDs go up to 2^40-1 (task.h), so task numbers stay below 2^45.
 */
#ifndef INO_H
#define INO_H

#include <stdint.h>

enum nkind {
	NK_NONE,
	NK_ROOT, NK_SUBMIT, NK_TASKS, NK_WORKERS, NK_SUMMARY, NK_STATEDIR,
	/* a task's directory and fixed files, in this order */
	NK_TASK, NK_SPEC, NK_STATE, NK_RESULT, NK_STDOUT, NK_STDERR,
	NK_CONTROL, NK_LINK,
	/* a worker's directory and files, in this order */
	NK_WORKER, NK_WINFO, NK_WSTATUS, NK_WSTATE,
	NK_SUBENT, NK_PASS
};

struct node {
	enum nkind kind;
	uint64_t n;	/* task ID, state, worker number, serial, inode */
};

#define INO_ROOT	1
#define INO_TASK_BASE	256ULL
#define INO_WORKER_BASE	(1ULL << 48)
#define INO_SUBENT_BASE	(1ULL << 56)
#define INO_PASS_BASE	(1ULL << 60)
#define INO_PASS_MASK	((1ULL << 59) - 1)
#define INO_WORKERS_MAX	((INO_SUBENT_BASE - INO_WORKER_BASE) / 4)

/* The inode number of a node; 0 if the node cannot have one. */
uint64_t ino_of(enum nkind kind, uint64_t n);
/* The node an inode number stands for; kind NK_NONE if none. */
struct node ino_node(uint64_t ino);

#endif

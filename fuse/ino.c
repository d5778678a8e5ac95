/*
 * ino.c - see ino.h.
 */
#include "ino.h"
#include "task.h"
#include "taskview.h"

uint64_t
ino_of(enum nkind kind, uint64_t n)
{
	switch (kind) {
	case NK_ROOT: return INO_ROOT;
	case NK_SUBMIT: return 2;
	case NK_TASKS: return 3;
	case NK_WORKERS: return 4;
	case NK_SUMMARY: return 5;
	case NK_STATEDIR:
		return n > TV_UNKNOWN && n < TV_NSTATES ? 16 + n : 0;
	case NK_TASK: case NK_SPEC: case NK_STATE: case NK_RESULT:
	case NK_STDOUT: case NK_STDERR: case NK_CONTROL: case NK_LINK:
		if (n == 0 || n > TASK_ID_MAX)
			return 0;
		return INO_TASK_BASE + n * 16 + (uint64_t)(kind - NK_TASK);
	case NK_WORKER: case NK_WINFO: case NK_WSTATUS: case NK_WSTATE:
		if (n >= INO_WORKERS_MAX)
			return 0;
		return INO_WORKER_BASE + n * 4 + (uint64_t)(kind - NK_WORKER);
	case NK_SUBENT:
		return n < INO_PASS_BASE - INO_SUBENT_BASE ? INO_SUBENT_BASE + n : 0;
	case NK_PASS:
		return n <= INO_PASS_MASK ? INO_PASS_BASE + n : 0;
	default:
		return 0;
	}
}

struct node
ino_node(uint64_t ino)
{
	struct node nd = { NK_NONE, 0 };
	uint64_t k;

	if (ino >= INO_PASS_BASE) {
		if (ino - INO_PASS_BASE <= INO_PASS_MASK) {
			nd.kind = NK_PASS;
			nd.n = ino - INO_PASS_BASE;
		}
	} else if (ino >= INO_SUBENT_BASE) {
		nd.kind = NK_SUBENT;
		nd.n = ino - INO_SUBENT_BASE;
	} else if (ino >= INO_WORKER_BASE) {
		nd.kind = (enum nkind)(NK_WORKER + (ino - INO_WORKER_BASE) % 4);
		nd.n = (ino - INO_WORKER_BASE) / 4;
	} else if (ino >= INO_TASK_BASE) {
		k = (ino - INO_TASK_BASE) % 16;
		nd.n = (ino - INO_TASK_BASE) / 16;
		if (k <= (uint64_t)(NK_LINK - NK_TASK) && nd.n > 0 &&
		    nd.n <= TASK_ID_MAX)
			nd.kind = (enum nkind)(NK_TASK + k);
		else
			nd.n = 0;
	} else if (ino >= 16 + TV_SUBMITTED && ino < 16 + TV_NSTATES) {
		nd.kind = NK_STATEDIR;
		nd.n = ino - 16;
	} else if (ino >= 1 && ino <= 5) {
		static const enum nkind fixed[] = { NK_ROOT, NK_SUBMIT,
		    NK_TASKS, NK_WORKERS, NK_SUMMARY };

		nd.kind = fixed[ino - 1];
	}
	return nd;
}

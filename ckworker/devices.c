/*
 * devices.c - tasks fenced to their GPUs by devices cgroups (cgroup
 * v1), one per set of GPUs (fence.c).
 *
 * A task is given its GPUs in CUDA_VISIBLE_DEVICES, which CUDA obeys,
 * but a task may unset it (or use the driver's files itself) and reach
 * the GPUs of the worker's other tasks.  In a devices cgroup that
 * denies the others' device files (/dev/nvidiaN, character 195:N) it
 * cannot: opening one fails with EPERM, and CUDA sees only the task's
 * own.  The driver's shared files (nvidiactl, nvidia-uvm) stay open
 * to it.
 *
 * A set is the task's GPUs by their index in the worker's list; its
 * cgroup denies "c 195:N rwm" for each of the worker's other GPUs.  A
 * new cgroup inherits ROOT's rules (BASE's), so only the denials are
 * written; the spare's, rewritten for a task, also allows again those
 * of the task's it denied.  Each GPU's minor number comes from NVML
 * (gpu.c); without it the worker cannot name the device, and the fence
 * is not made (limits.c says so).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cgfiles.h"
#include "devices.h"

static int *minors;		/* of the worker's GPUs, by index */
static size_t nminor;

void
devices_key(const uint32_t *gpu, size_t n, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = 0;
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%u",
		    i ? "," : "", gpu[i]);
}

/* Is GPU i in key? */
static int
in_key(const char *key, size_t i)
{
	const char *p = key;
	char *end;

	while (*p) {
		if (strtoul(p, &end, 10) == i && end != p)
			return 1;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return 0;
}

static int
apply(struct fence *f, const char *dir, const char *key, int fresh,
    char *why, size_t whysize)
{
	char path[PATH_MAX + 32], shown[PATH_MAX + 64], rule[64];
	const char *file;
	size_t i;
	int in;

	for (i = 0; i < nminor; i++) {
		in = in_key(key, i);
		if (in && fresh)
			continue;	/* inherited */
		file = in ? "devices.allow" : "devices.deny";
		snprintf(path, sizeof path, "%s/%s", dir, file);
		snprintf(rule, sizeof rule, "c %d:%d rwm", NVIDIA_MAJOR,
		    minors[i]);
		if (cgfiles_write_at(f->rootfd, path, rule) < 0) {
			snprintf(why, whysize, "write: %s: \"%s\": %s",
			    fence_path(f, path, shown, sizeof shown), rule,
			    strerror(errno));
			return -1;
		}
	}
	return 0;
}

struct fence devices_fence = { .ctl = "devices", .prefix = "gpus",
	.apply = apply, .rootfd = -1 };

int
devices_setup(const int *minor, size_t n, int dry, char *where,
    size_t wsize, char *why, size_t whysize)
{
	struct buf all = BUF_INIT;
	size_t i;
	int rc;

	free(minors);
	minors = xreallocarray(NULL, n ? n : 1, sizeof *minors);
	memcpy(minors, minor, n * sizeof *minors);
	nminor = n;
	for (i = 0; i < n; i++)
		buf_printf(&all, "%s%zu", i ? "," : "", i);
	rc = fence_setup(&devices_fence, all.p ? all.p : "", dry, where,
	    wsize, why, whysize);
	buf_free(&all);
	return rc;
}

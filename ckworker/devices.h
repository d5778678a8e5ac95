/*
 * devices.h - tasks fenced to their GPUs by devices cgroups (cgroup
 * v1).  See devices.c.
 */
#ifndef DEVICES_H
#define DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "fence.h"

#define NVIDIA_MAJOR	195	/* /dev/nvidiaN: character 195:N */

/* Its sets' keys are lists of the worker's GPUs by index ("0,2"; "":
 * none). */
extern struct fence devices_fence;

/*
 * fence_setup for the worker's n GPUs, whose /dev/nvidiaN minors are
 * minor[0..n-1] (each known: 0 or more); where gets ROOT.  0, or -1
 * with why.
 */
int	devices_setup(const int *minor, size_t n, int dry, char *where,
	    size_t wsize, char *why, size_t whysize);

/* The key of GPUs gpu[0..n-1] (indices) into out. */
void	devices_key(const uint32_t *gpu, size_t n, char *out, size_t size);

#endif

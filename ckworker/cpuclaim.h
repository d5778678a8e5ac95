/*
 * cpuclaim.h - workers on one host take disjoint cores.  See cpuclaim.c.
 */
#ifndef CPUCLAIM_H
#define CPUCLAIM_H

#include <stddef.h>
#include <stdint.h>

#include "cores.h"

/*
 * Choose n of the units u[0..nu-1] (n <= nu) for this worker and hold
 * them for its lifetime; their indices go to out[0..n-1].  Returns how
 * many were free of other workers' claims (n when all were), or -1 when
 * no claim could be made at all; in both shortfall cases out is still
 * filled (shared units) and why says what happened.
 */
int	cpuclaim_take(const struct cores_unit *u, size_t nu, uint32_t n,
	    uint32_t *out, char *why, size_t whysize);

#endif

/*
 * gpu.h - the worker's GPUs: discovery without linking CUDA, and their
 * load.  See gpu.c.
 */
#ifndef GPU_H
#define GPU_H

#include <stddef.h>
#include <stdint.h>

#define GPU_ID_MAX	96	/* an index, or a GPU-/MIG- UUID */

struct gpus {
	size_t	n;
	char	(*id)[GPU_ID_MAX];	/* what CUDA_VISIBLE_DEVICES names */
	void	**dev;			/* NVML handle per GPU, or NULL */
	int	*minor;			/* its /dev/nvidiaN's N (NVML), or -1 */
	char	(*uuid)[GPU_ID_MAX];	/* its UUID (NVML), or "" */
	unsigned char *busy;		/* held by a running task */
	char	source[320];		/* where they came from, in words */
	char	probe[320];		/* what the driver libraries said */
};

/*
 * Find the GPUs.  ids: --gpu-ids (comma-separated), or NULL; count:
 * --gpus N, or -1 when not given.  Order: the options, then the
 * batch system's CUDA_VISIBLE_DEVICES, then NVML, then the CUDA runtime
 * (both dlopen()ed: nothing is linked, so this runs where there is no
 * driver).  With --gpus N and nothing discovered, the worker hands out
 * indices 0..N-1.  Returns 0, or -1 with why (--gpus asks for more
 * than were found).
 */
int	gpu_discover(const char *ids, long count, struct gpus *g, char *why,
	    size_t whysize);

/* Load of one GPU: utilisation (%) and memory used (bytes); -1 if
 * NVML is not there. */
int	gpu_sample(void *dev, unsigned *util, uint64_t *mem_used);

/* Parse a CUDA_VISIBLE_DEVICES-style list into g (tests use it). */
int	gpu_list_parse(const char *s, struct gpus *g);
void	gpus_free(struct gpus *g);

#endif

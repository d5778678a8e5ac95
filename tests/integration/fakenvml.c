/*
 * fakenvml.c - a stand-in for NVIDIA's libnvidia-ml.so.1 for the tests
 * that need no GPU: one device (FAKE_NVML_GPUS: up to 8), each 50%
 * busy, 1 GiB in use, /dev/nvidiaN's minor N, UUID GPU-fake-N.  Like the real
 * library, nvmlInit starts a thread of its own; a thread that does not
 * block the signals the worker takes through its signalfd receives them
 * in its place (a SIGCHLD is lost, a SIGTERM kills the worker), which is
 * what t_limits.sh's test_nvml_threads_take_no_signal_of_the_worker
 * proves does not happen.  Only what ckworker/gpu.c loads is here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nvml_util { unsigned gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };

/* exported: the names and shapes ckworker/gpu.c looks up with dlsym */
int nvmlInit_v2(void);
int nvmlDeviceGetCount_v2(unsigned *);
int nvmlDeviceGetHandleByIndex_v2(unsigned, void **);
int nvmlDeviceGetHandleByUUID(const char *, void **);
int nvmlDeviceGetUtilizationRates(void *, struct nvml_util *);
int nvmlDeviceGetMemoryInfo(void *, struct nvml_mem *);
int nvmlDeviceGetMinorNumber(void *, unsigned *);
int nvmlDeviceGetUUID(void *, char *, unsigned);
const char *nvmlErrorString(int);

static int device[8];

static unsigned
count(void)
{
	const char *s = getenv("FAKE_NVML_GPUS");
	int n = s ? atoi(s) : 1;

	return n >= 1 && n <= 8 ? (unsigned)n : 1;
}

static void *
idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int
nvmlInit_v2(void)
{
	pthread_t t;

	return pthread_create(&t, NULL, idle, NULL) == 0 ? 0 : 999;
}

int
nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = count();
	return 0;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
	if (i >= count())
		return 2;	/* NVML_ERROR_INVALID_ARGUMENT */
	*d = &device[i];
	return 0;
}

int
nvmlDeviceGetHandleByUUID(const char *uuid, void **d)
{
	(void)uuid;
	*d = &device[0];
	return 0;
}

int
nvmlDeviceGetUtilizationRates(void *d, struct nvml_util *u)
{
	(void)d;
	u->gpu = 50;
	u->memory = 10;
	return 0;
}

int
nvmlDeviceGetMemoryInfo(void *d, struct nvml_mem *m)
{
	(void)d;
	m->total = 16ULL << 30;
	m->used = 1ULL << 30;
	m->free = m->total - m->used;
	return 0;
}

int
nvmlDeviceGetMinorNumber(void *d, unsigned *minor)
{
	*minor = (unsigned)((int *)d - device);
	return 0;
}

int
nvmlDeviceGetUUID(void *d, char *uuid, unsigned size)
{
	return snprintf(uuid, size, "GPU-fake-%d", (int)((int *)d - device)) <
	    (int)size ? 0 : 7;	/* NVML_ERROR_INSUFFICIENT_SIZE */
}

const char *
nvmlErrorString(int rc)
{
	return rc ? "fake NVML error" : "success";
}

/*
 * cuprobe.c - a task for t_gpu.sh that uses a real GPU the way a CUDA
 * program does: through the driver (libcuda.so.1), loaded with
 * dlopen() so that it builds where there is no toolkit and no GPU.
 *
 *	cuprobe count
 *		prints how many devices CUDA lets this process see (0 when
 *		CUDA_VISIBLE_DEVICES hides them all), then their UUIDs
 *	cuprobe burn SECONDS MIB
 *		takes MIB MiB of device 0's memory and keeps the device
 *		busy with memsets for SECONDS, so that NVML sees both
 *
 * Exit status 0, or 1 with "cuprobe: what failed: CUDA error N (text)".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int curesult;
typedef int cudev;
typedef struct cuctx *cuctx;
typedef unsigned long long cuptr;

static struct {
	curesult (*init)(unsigned);
	curesult (*count)(int *);
	curesult (*get)(cudev *, int);
	curesult (*uuid)(unsigned char *, cudev);
	curesult (*ctx_create)(cuctx *, unsigned, cudev);
	curesult (*alloc)(cuptr *, size_t);
	curesult (*memset8)(cuptr, unsigned char, size_t);
	curesult (*sync)(void);
	curesult (*errname)(curesult, const char **);
} cu;

static void
load(void *lib, const char *name, void *fp, size_t size)
{
	void *s = dlsym(lib, name);

	if (s == NULL) {
		fprintf(stderr, "cuprobe: dlsym: %s: %s\n", name, dlerror());
		exit(1);
	}
	memcpy(fp, &s, size);
}

static void
check(curesult rc, const char *what)
{
	const char *text = "?";

	if (rc == 0)
		return;
	if (cu.errname)
		cu.errname(rc, &text);
	fprintf(stderr, "cuprobe: %s: CUDA error %d (%s)\n", what, rc, text);
	exit(1);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
count(void)
{
	unsigned char u[16];
	cudev d;
	int n = 0, i, k;

	check(cu.count(&n), "cuDeviceGetCount");
	printf("%d\n", n);
	for (i = 0; i < n; i++) {
		check(cu.get(&d, i), "cuDeviceGet");
		check(cu.uuid(u, d), "cuDeviceGetUuid");
		printf("GPU-");
		for (k = 0; k < 16; k++)
			printf("%02x%s", u[k],
			    k == 3 || k == 5 || k == 7 || k == 9 ? "-" : "");
		printf("\n");
	}
	return 0;
}

static int
burn(double seconds, size_t mib)
{
	cudev d;
	cuctx c;
	cuptr p;
	double end;
	unsigned long rounds = 0;

	check(cu.get(&d, 0), "cuDeviceGet");
	check(cu.ctx_create(&c, 0, d), "cuCtxCreate");
	check(cu.alloc(&p, mib << 20), "cuMemAlloc");
	end = now() + seconds;
	while (now() < end) {
		check(cu.memset8(p, (unsigned char)rounds, mib << 20),
		    "cuMemsetD8");
		check(cu.sync(), "cuCtxSynchronize");
		rounds++;
	}
	printf("burned %zu MiB for %.1f s (%lu rounds)\n", mib, seconds,
	    rounds);
	return 0;
}

int
main(int argc, char **argv)
{
	void *lib;
	curesult rc;

	if (argc < 2 || (strcmp(argv[1], "count") != 0 &&
	    (strcmp(argv[1], "burn") != 0 || argc != 4))) {
		fprintf(stderr, "usage: cuprobe count | burn SECONDS MIB\n");
		return 2;
	}
	if ((lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "cuprobe: dlopen: %s\n", dlerror());
		return 1;
	}
	load(lib, "cuGetErrorName", &cu.errname, sizeof cu.errname);
	load(lib, "cuInit", &cu.init, sizeof cu.init);
	load(lib, "cuDeviceGetCount", &cu.count, sizeof cu.count);
	load(lib, "cuDeviceGet", &cu.get, sizeof cu.get);
	load(lib, "cuDeviceGetUuid", &cu.uuid, sizeof cu.uuid);
	load(lib, "cuCtxCreate_v2", &cu.ctx_create, sizeof cu.ctx_create);
	load(lib, "cuMemAlloc_v2", &cu.alloc, sizeof cu.alloc);
	load(lib, "cuMemsetD8_v2", &cu.memset8, sizeof cu.memset8);
	load(lib, "cuCtxSynchronize", &cu.sync, sizeof cu.sync);
	/* CUDA_VISIBLE_DEVICES naming no device: cuInit says so */
	if ((rc = cu.init(0)) == 100 /* CUDA_ERROR_NO_DEVICE */ &&
	    strcmp(argv[1], "count") == 0) {
		printf("0\n");
		return 0;
	}
	check(rc, "cuInit");
	if (strcmp(argv[1], "count") == 0)
		return count();
	return burn(atof(argv[2]), strtoul(argv[3], NULL, 10));
}

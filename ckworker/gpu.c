/*
 * gpu.c - the worker's GPUs: discovery without linking CUDA, and their
 * load.
 *
 * Nothing of CUDA is linked: NVML (libnvidia-ml.so.1) and, failing
 * that, the CUDA runtime (libcudart.so) are loaded with dlopen() when
 * the worker starts, so ckworker builds and runs on machines without a
 * GPU, a driver or a toolkit.  What each library said goes into
 * g->probe for --print-resources and the log.
 *
 * Order of sources (the first that gives GPUs wins):
 *   1. --gpu-ids LIST: exactly those (indices or UUIDs);
 *   2. CUDA_VISIBLE_DEVICES in the worker's environment: the batch
 *	system's allocation (Slurm, PBS and LSF set it for GPU jobs);
 *	empty, "-1" or "NoDevFiles" mean none;
 *   3. NVML's device count: indices 0..N-1 (PCI bus order);
 *   4. the CUDA runtime's cudaGetDeviceCount (it fails without a
 *	driver, e.g. with error 35, and leaves the count untouched: it
 *	is initialised to 0).
 * A list that names one GPU twice is refused: that GPU would be given
 * to two tasks at once.
 * --gpus N then takes the first N of them, and is an error if fewer
 * were found, unless none were found at all: then the worker hands out
 * indices 0..N-1 as it is told (useful where the batch system already
 * narrowed the view and nothing can be queried).
 *
 * Tasks get their GPUs as CUDA_VISIBLE_DEVICES (run.c), with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID so that an index means to CUDA what it
 * means to NVML.  When NVML is there, each GPU's NVML handle (by index,
 * or by UUID) is kept for gpu_sample().
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gpu.h"

typedef int nvml_ret;
typedef struct nvml_dev *nvml_dev;
struct nvml_util { unsigned gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };

static struct {
	int	tried, ok;
	nvml_ret (*init)(void);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*by_index)(unsigned, nvml_dev *);
	nvml_ret (*by_uuid)(const char *, nvml_dev *);
	nvml_ret (*util)(nvml_dev, struct nvml_util *);
	nvml_ret (*mem)(nvml_dev, struct nvml_mem *);
	nvml_ret (*minor)(nvml_dev, unsigned *);	/* NULL: none */
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);	/* NULL: none */
	const char *(*err)(nvml_ret);
} nv;

/* dlsym into a function pointer without a cast between the two kinds. */
static int
sym(void *lib, const char *name, void *fp, size_t size)
{
	void *s = dlsym(lib, name);

	if (s == NULL)
		return -1;
	memcpy(fp, &s, size);
	return 0;
}

static void
note(struct gpus *g, const char *fmt, const char *a, const char *b)
{
	size_t len = strlen(g->probe);

	a = a ? a : "?";	/* dlerror() may have nothing to say */
	b = b ? b : "?";

	snprintf(g->probe + len, sizeof g->probe - len, "%s", len ? "; " : "");
	len = strlen(g->probe);
	snprintf(g->probe + len, sizeof g->probe - len, fmt, a, b);
}

static int
nvml_open(struct gpus *g)
{
	void *lib;
	nvml_ret rc;

	if (nv.tried)
		return nv.ok ? 0 : -1;
	nv.tried = 1;
	if ((lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		note(g, "NVML: %s%s", dlerror(), "");
		return -1;
	}
	if (sym(lib, "nvmlInit_v2", &nv.init, sizeof nv.init) < 0 ||
	    sym(lib, "nvmlDeviceGetCount_v2", &nv.count, sizeof nv.count) < 0 ||
	    sym(lib, "nvmlDeviceGetHandleByIndex_v2", &nv.by_index,
	    sizeof nv.by_index) < 0 ||
	    sym(lib, "nvmlDeviceGetHandleByUUID", &nv.by_uuid,
	    sizeof nv.by_uuid) < 0 ||
	    sym(lib, "nvmlDeviceGetUtilizationRates", &nv.util,
	    sizeof nv.util) < 0 ||
	    sym(lib, "nvmlDeviceGetMemoryInfo", &nv.mem, sizeof nv.mem) < 0 ||
	    sym(lib, "nvmlErrorString", &nv.err, sizeof nv.err) < 0) {
		note(g, "NVML: missing symbols (%s)%s", dlerror(), "");
		return -1;
	}
	/* (only for devices.c) */
	if (sym(lib, "nvmlDeviceGetMinorNumber", &nv.minor,
	    sizeof nv.minor) < 0)
		nv.minor = NULL;
	if (sym(lib, "nvmlDeviceGetUUID", &nv.uuid, sizeof nv.uuid) < 0)
		nv.uuid = NULL;
	if ((rc = nv.init()) != 0) {
		note(g, "NVML: nvmlInit: %s%s", nv.err(rc), "");
		return -1;
	}
	nv.ok = 1;
	return 0;
}

static long
nvml_count(struct gpus *g)
{
	unsigned n = 0;
	nvml_ret rc;

	if (nvml_open(g) < 0)
		return -1;
	if ((rc = nv.count(&n)) != 0) {
		note(g, "NVML: nvmlDeviceGetCount: %s%s", nv.err(rc), "");
		return -1;
	}
	return (long)n;
}

static long
cudart_count(struct gpus *g)
{
	static const char *const names[] = { "libcudart.so", "libcudart.so.13",
	    "libcudart.so.12", "libcudart.so.11.0", NULL };
	int (*count)(int *);
	const char *(*err)(int);
	void *lib = NULL;
	int i, n = 0, rc;
	char num[16];

	for (i = 0; names[i] && lib == NULL; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		note(g, "CUDA runtime: %s%s", dlerror(), "");
		return -1;
	}
	/* not closed: the runtime registers exit handlers */
	if (sym(lib, "cudaGetDeviceCount", &count, sizeof count) < 0 ||
	    sym(lib, "cudaGetErrorString", &err, sizeof err) < 0) {
		note(g, "CUDA runtime: missing symbols%s%s", "", "");
		return -1;
	}
	if ((rc = count(&n)) != 0) {
		snprintf(num, sizeof num, "%d", rc);
		note(g, "CUDA runtime: cudaGetDeviceCount: error %s (%s)", num,
		    err(rc));
		return -1;
	}
	return n;
}

static void
add(struct gpus *g, const char *id, size_t len)
{
	g->id = xreallocarray(g->id, g->n + 1, sizeof *g->id);
	snprintf(g->id[g->n], sizeof g->id[g->n], "%.*s", (int)len, id);
	g->n++;
}

int
gpu_list_parse(const char *s, struct gpus *g)
{
	const char *p = s, *end;
	size_t n;

	if (s == NULL || strcmp(s, "-1") == 0 || strcmp(s, "NoDevFiles") == 0)
		return 0;
	while (*p) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		while (n && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		if (n >= GPU_ID_MAX)
			return -1;
		if (n)
			add(g, p, n);
		if (end == NULL)
			break;
		p = end + 1;
	}
	return 0;
}

/*
 * The first ID of g named twice (the same text, or the same index
 * written with leading zeros), or NULL.  Two entries for one GPU
 * would give it to two tasks at once, each as its own.
 */
static const char *
named_twice(const struct gpus *g)
{
	size_t i, k;
	char *ei, *ek;
	unsigned long a, b;

	for (i = 0; i < g->n; i++)
		for (k = i + 1; k < g->n; k++) {
			if (strcmp(g->id[i], g->id[k]) == 0)
				return g->id[i];
			if (!isdigit((unsigned char)g->id[i][0]) ||
			    !isdigit((unsigned char)g->id[k][0]))
				continue;
			a = strtoul(g->id[i], &ei, 10);
			b = strtoul(g->id[k], &ek, 10);
			if (*ei == 0 && *ek == 0 && a == b)
				return g->id[i];
		}
	return NULL;
}

int
gpu_discover(const char *ids, long count, struct gpus *g, char *why,
    size_t whysize)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES"), *twice;
	long found = -1, i;
	char num[24];
	size_t k;

	memset(g, 0, sizeof *g);
	if (ids) {
		if (gpu_list_parse(ids, g) < 0) {
			snprintf(why, whysize, "--gpu-ids %s: an ID is too long",
			    ids);
			return -1;
		}
		if ((twice = named_twice(g)) != NULL) {
			snprintf(why, whysize, "--gpu-ids %s: GPU %s is named "
			    "twice", ids, twice);
			return -1;
		}
		snprintf(g->source, sizeof g->source, "--gpu-ids");
	} else if (count == 0) {
		snprintf(g->source, sizeof g->source, "--gpus 0");
		return 0;
	} else if (cvd != NULL) {
		if (gpu_list_parse(cvd, g) < 0) {
			snprintf(why, whysize, "CUDA_VISIBLE_DEVICES: an ID is "
			    "too long");
			return -1;
		}
		if ((twice = named_twice(g)) != NULL) {
			snprintf(why, whysize, "CUDA_VISIBLE_DEVICES=%.200s: "
			    "GPU %s is named twice", cvd, twice);
			return -1;
		}
		snprintf(g->source, sizeof g->source,
		    "CUDA_VISIBLE_DEVICES=%.200s (the batch system's)", cvd);
	} else {
		if ((found = nvml_count(g)) >= 0)
			snprintf(g->source, sizeof g->source, "NVML");
		else if ((found = cudart_count(g)) >= 0)
			snprintf(g->source, sizeof g->source, "CUDA runtime");
		for (i = 0; i < found; i++) {
			snprintf(num, sizeof num, "%ld", i);
			add(g, num, strlen(num));
		}
		if (found < 0)
			snprintf(g->source, sizeof g->source, "none found");
	}
	if (count > 0 && g->n == 0) {
		for (i = 0; i < count; i++) {
			snprintf(num, sizeof num, "%ld", i);
			add(g, num, strlen(num));
		}
		snprintf(g->source, sizeof g->source, "--gpus %ld: none "
		    "discovered, handing out indices 0..%ld as told", count,
		    count - 1);
	} else if (count > 0 && (size_t)count > g->n) {
		snprintf(why, whysize, "--gpus %ld, but only %zu GPU%s found "
		    "(%s)", count, g->n, g->n == 1 ? "" : "s", g->source);
		return -1;
	} else if (count > 0)
		g->n = (size_t)count;
	g->dev = xcalloc(g->n ? g->n : 1, sizeof *g->dev);
	g->minor = xreallocarray(NULL, g->n ? g->n : 1, sizeof *g->minor);
	g->uuid = xcalloc(g->n ? g->n : 1, sizeof *g->uuid);
	for (k = 0; k < g->n; k++)
		g->minor[k] = -1;
	g->busy = xcalloc(g->n ? g->n : 1, 1);
	/* handles for monitoring, where NVML is there */
	if (g->n && nvml_open(g) == 0)
		for (k = 0; k < g->n; k++) {
			nvml_dev d = NULL;
			char *end;
			unsigned long idx = strtoul(g->id[k], &end, 10);

			if (*end == 0 && end != g->id[k] ?
			    nv.by_index((unsigned)idx, &d) == 0 :
			    nv.by_uuid(g->id[k], &d) == 0) {
				unsigned m;

				g->dev[k] = d;
				if (nv.minor && nv.minor(d, &m) == 0 &&
				    m <= 0xfffff)
					g->minor[k] = (int)m;
				if (nv.uuid && nv.uuid(d, g->uuid[k],
				    GPU_ID_MAX) != 0)
					g->uuid[k][0] = 0;
				g->uuid[k][GPU_ID_MAX - 1] = 0;
			}
		}
	return 0;
}

int
gpu_sample(void *dev, unsigned *util, uint64_t *mem_used)
{
	struct nvml_util u;
	struct nvml_mem m;

	if (!nv.ok || dev == NULL || nv.util((nvml_dev)dev, &u) != 0 ||
	    nv.mem((nvml_dev)dev, &m) != 0)
		return -1;
	*util = u.gpu;
	*mem_used = m.used;
	return 0;
}

void
gpus_free(struct gpus *g)
{
	free(g->id);
	free(g->dev);
	free(g->minor);
	free(g->uuid);
	free(g->busy);
	memset(g, 0, sizeof *g);
}

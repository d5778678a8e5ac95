/*
 * query.c - a task's state, read from the files alone.
 *
 * In the order a task moves:
 *   incoming/FIRST.bundle or accepting/ holding it   submitted
 *   accepting/FIRST.rejected naming it               rejected (its
 *                                                    result is owed)
 *   specs/ bundle holding it                         queued or waiting
 *   workers/W/inbox/ID.ATT                           placed (on W)
 *   workers/W/running/ID.ATT                         running (on W)
 *   workers/W/done/ID.ATT                            finishing
 *   tasks/SHARD/ID/result                            its final state
 *
 * The worker directories and the bundle headers are read once per
 * command and cached, so asking about many tasks costs one listing of
 * each, not one per task.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "lease.h"
#include "msg.h"
#include "rec.h"

struct placed {
	uint64_t id;
	uint32_t attempt;
	int	sub;		/* WS_INBOX, WS_RUNNING, WS_DONE */
	char	wid[WDIR_ID_MAX];
};

struct range {
	uint64_t first;
	uint32_t count;
	int	where;		/* SD_INCOMING, SD_ACCEPTING or SD_SPECS */
	char	name[48];
};

/* accepting/FIRST.rejected: a refused bundle's IDs, results owed */
struct owed {
	uint64_t first;
	uint32_t count;
	char	*why;
};

static struct placed *placed;
static size_t nplaced;
static struct range *ranges;
static size_t nranges;
static struct owed *oweds;
static size_t nowed;
/* the shapes spoold's summary lists in unfit_shapes */
static struct task_shape *unfits;
static size_t nunfit;
static int unfit_loaded;
static int loaded;

struct wctx {
	const char *wid;
	int	sub;
};

static int
assign_one(void *arg, const char *name, unsigned char type)
{
	struct wctx *c = arg;
	uint64_t id;
	uint32_t att;

	(void)type;
	if (wdir_aname_parse(name, &id, &att) < 0)
		return 0;
	placed = xreallocarray(placed, nplaced + 1, sizeof *placed);
	placed[nplaced].id = id;
	placed[nplaced].attempt = att;
	placed[nplaced].sub = c->sub;
	snprintf(placed[nplaced].wid, sizeof placed[nplaced].wid, "%s", c->wid);
	nplaced++;
	return 0;
}

static int
worker_one(void *arg, const char *wid, unsigned char type)
{
	static const int subs[] = { WS_INBOX, WS_RUNNING, WS_DONE };
	char path[WDIR_ID_MAX + 16];
	struct wctx c;
	size_t i;

	(void)arg;
	(void)type;
	if (wid[0] == '.')
		return 0;
	c.wid = wid;
	for (i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		c.sub = subs[i];
		snprintf(path, sizeof path, "%s/%s", wid, wdir_sub_name[c.sub]);
		(void)fsop_list(cli_sp.fd[SD_WORKERS], path, assign_one, &c);
	}
	return 0;
}

static int
range_one(void *arg, const char *name, unsigned char type)
{
	int where = *(int *)arg;
	struct bundle_hdr h;
	const char *op;
	uint64_t id;
	int drop;

	(void)type;
	if (name[0] == '.')
		return 0;
	if (where == SD_ACCEPTING && bundle_owed_name(name)) {
		char *why;

		/* only spoold's own: a member's could name others' IDs */
		if (bundle_owed_read(cli_sp.fd[where], name, cli_sp.uid, &h,
		    &why) > 0) {
			oweds = xreallocarray(oweds, nowed + 1, sizeof *oweds);
			oweds[nowed].first = h.first;
			oweds[nowed].count = h.count;
			oweds[nowed].why = why;
			nowed++;
		}
		return 0;
	}
	if (where == SD_ACCEPTING && (drop = bundle_drop_name(name, &id,
	    NULL)) != 0) {
		/* a dropped file being accepted (ID.drop[.NAME]): its ID
		 * is in the name; one whose ID does not parse is no task's */
		if (drop > 0) {
			ranges = xreallocarray(ranges, nranges + 1,
			    sizeof *ranges);
			ranges[nranges].first = id;
			ranges[nranges].count = 1;
			ranges[nranges].where = where;
			snprintf(ranges[nranges].name, sizeof ranges[0].name, "%s",
			    name);
			nranges++;
		}
		return 0;
	}
	if (bundle_head_read(cli_sp.fd[where], name, &h, &op) < 0) {
		/* gone (accepted meanwhile), not a regular file (a FIFO
		 * anyone who may submit can leave in incoming/) or not a
		 * bundle; else said, and its tasks are told unknown, as
		 * when not listed */
		if (errno != ENOENT && errno != EINVAL)
			msg_warn("%s: %s/%s/%s: %m", op, cli_sp.shown,
			    spool_dir_name[where], journal_q(name));
		return 0;
	}
	ranges = xreallocarray(ranges, nranges + 1, sizeof *ranges);
	ranges[nranges].first = h.first;
	ranges[nranges].count = h.count;
	ranges[nranges].where = where;
	snprintf(ranges[nranges].name, sizeof ranges[0].name, "%s", name);
	nranges++;
	return 0;
}

/*
 * The shapes of the queued tasks that no worker or kind can run, as
 * spoold's summary lists them (task_shape_parse); none when it lists
 * none, or cannot be read (a task is then not told unfit: the summary
 * is a view, not the state).
 */
static void
unfit_load(void)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	struct task_shape a;
	char **v = NULL;
	size_t i;

	unfit_loaded = 1;
	if (cli_read_summary(&b) < 0) {
		buf_free(&b);
		return;
	}
	rec_reader_init(&r, b.p, b.len);
	while (rec_next(&r, &f) > 0)
		if (rec_key_is(&f, "unfit_shapes")) {
			if (rec_get_strv(&r, &f, &v) < 0)
				v = NULL;
			break;
		}
	for (i = 0; v && v[i]; i++) {
		if (task_shape_parse(v[i], &a) == 0) {
			unfits = xreallocarray(unfits, nunfit + 1,
			    sizeof *unfits);
			unfits[nunfit++] = a;
		}
		free(v[i]);
	}
	free(v);
	buf_free(&b);
}

void
query_init(void)
{
	static const int dirs[] = { SD_SPECS, SD_ACCEPTING, SD_INCOMING };
	size_t i;
	int where;

	if (loaded)
		return;
	loaded = 1;
	if (fsop_list(cli_sp.fd[SD_WORKERS], ".", worker_one, NULL) < 0)
		msg_warn("list: %s/workers: %m", cli_sp.shown);
	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		where = dirs[i];
		if (fsop_list(cli_sp.fd[where], ".", range_one, &where) < 0)
			msg_warn("list: %s/%s: %m", cli_sp.shown,
			    spool_dir_name[where]);
	}
}

/*
 * The tasks of the bundle last read, decoded: a status of many queued
 * tasks asks one bundle for thousands of them in a row, and reading
 * and decoding the whole bundle for each (4,096 tasks a bundle of
 * "spool map") made "spool status" of 20,000 IDs take 13 s.
 */
static const struct range *cached;
static struct task_spec *ctasks;
static size_t nctasks;

static void
bundle_load(const struct range *rg)
{
	struct bundle_file bf;
	struct task_spec t;
	int fd;

	if (cached == rg)
		return;
	while (nctasks > 0)
		task_free(&ctasks[--nctasks]);
	cached = rg;
	/* a record at a time: one in incoming/ is anyone's, up to 4 GiB */
	if ((fd = fsop_open_regular(cli_sp.fd[rg->where], rg->name,
	    NULL)) < 0)
		return;
	if (bundle_file_open(&bf, fd) == 0)
		while (bundle_file_next(&bf, &t) > 0) {
			ctasks = xreallocarray(ctasks, nctasks + 1,
			    sizeof *ctasks);
			ctasks[nctasks++] = t;
		}
	bundle_file_close(&bf);
	(void)close(fd);
}

void
query_reset(void)
{
	size_t i;

	while (nctasks > 0)
		task_free(&ctasks[--nctasks]);
	cached = NULL;
	for (i = 0; i < nowed; i++)
		free(oweds[i].why);
	free(oweds);
	free(placed);
	free(ranges);
	oweds = NULL;
	placed = NULL;
	ranges = NULL;
	nowed = nplaced = nranges = 0;
	loaded = 0;
}

static int
shape_eq(const struct task_shape *a, const struct task_shape *b)
{
	return a->cores == b->cores && a->gpus == b->gpus &&
	    a->memory == b->memory && a->walltime == b->walltime;
}

int
query_unfit_reload(void)
{
	struct task_shape *old = unfits;
	size_t nold = nunfit, i;
	int changed;

	unfits = NULL;
	nunfit = 0;
	unfit_load();
	changed = nunfit != nold;
	for (i = 0; i < nunfit && !changed; i++)
		changed = !shape_eq(&unfits[i], &old[i]);
	free(old);
	return changed && nunfit > 0;
}

/* Name, dependencies and asks of a queued task, from its bundle. */
static void
from_bundle(const struct range *rg, uint64_t id, struct tview *v)
{
	const struct task_spec *t = NULL;
	size_t i;

	bundle_load(rg);
	/* a bundle's tasks are its range in order; anything else is looked
	 * for in full */
	if (id - rg->first < nctasks && ctasks[id - rg->first].id == id)
		t = &ctasks[id - rg->first];
	for (i = 0; t == NULL && i < nctasks; i++)
		if (ctasks[i].id == id)
			t = &ctasks[i];
	if (t == NULL)
		return;
	if (t->name)
		v->name = xstrdup(t->name);
	v->has_ask = 1;
	task_shape_of(t, &v->ask);
	if (t->nafter) {
		v->after = xreallocarray(NULL, t->nafter, sizeof *v->after);
		memcpy(v->after, t->after, t->nafter * sizeof *v->after);
		v->nafter = t->nafter;
	}
	for (i = 0; i < t->nafter && rg->where == SD_SPECS; i++) {
		struct result r;

		if (cli_read_result(t->after[i], &r) > 0) {
			result_free(&r);
			continue;
		}
		v->state = "waiting";
		break;
	}
}

static char *
spec_name(uint64_t id)
{
	char path[SPOOL_PATH_MAX + 16];
	struct buf b = BUF_INIT;
	char *name;

	spool_task_path(id, path, sizeof path);
	strcat(path, "/spec");
	if (fsop_read_file(cli_sp.fd[SD_TASKS], path, 4u << 20, &b, NULL) < 0) {
		buf_free(&b);
		return NULL;
	}
	name = rec_lookup(b.p, b.len, "name");
	buf_free(&b);
	return name;
}

/* v is queued, of a shape the summary lists as unfit (read at the first
 * queued task: a command that meets none does not read it). */
static int
is_unfit(const struct tview *v)
{
	size_t i;

	if (!v->has_ask || strcmp(v->state, "queued") != 0)
		return 0;
	if (!unfit_loaded)
		unfit_load();
	for (i = 0; i < nunfit; i++)
		if (shape_eq(&unfits[i], &v->ask))
			return 1;
	return 0;
}

void
query_task(uint64_t id, struct tview *v)
{
	uint64_t end;
	size_t i;
	int best = -1;

	memset(v, 0, sizeof *v);
	v->id = id;
	v->state = "unknown";
	if (cli_read_result(id, &v->r) > 0) {
		v->has_result = 1;
		v->state = result_state_name[v->r.state];
		v->attempt = v->r.attempt;
		if (v->r.worker)
			snprintf(v->worker, sizeof v->worker, "%s", v->r.worker);
		v->name = spec_name(id);
		return;
	}
	query_init();
	/*
	 * A refused bundle's ID whose result spoold owes and has not
	 * written yet: its outcome is decided (the marker is durable, and
	 * is removed only once the result is), so it shows as that result
	 * will, though "spool wait" still waits for the result itself.
	 */
	for (i = 0; i < nowed; i++)
		if (id >= oweds[i].first &&
		    id - oweds[i].first < oweds[i].count) {
			result_init(&v->r);
			v->r.id = id;
			v->r.state = RS_REJECTED;
			v->r.reason = RR_REJECTED;
			v->r.message = xstrdup(oweds[i].why);
			v->has_result = 1;
			v->state = result_state_name[RS_REJECTED];
			return;
		}
	for (i = 0; i < nplaced; i++)
		if (placed[i].id == id && (best < 0 ||
		    placed[i].attempt > placed[best].attempt))
			best = (int)i;
	if (best >= 0) {
		v->state = placed[best].sub == WS_INBOX ? "placed" :
		    placed[best].sub == WS_RUNNING ? "running" : "finishing";
		v->attempt = placed[best].attempt;
		snprintf(v->worker, sizeof v->worker, "%s", placed[best].wid);
	}
	for (i = 0; i < nranges; i++)
		if (id >= ranges[i].first &&
		    id < ranges[i].first + ranges[i].count) {
			if (best < 0)
				v->state = ranges[i].where == SD_SPECS ?
				    "queued" : "submitted";
			from_bundle(&ranges[i], id, v);
			if (best >= 0 && strcmp(v->state, "waiting") == 0)
				v->state = placed[best].sub == WS_INBOX ?
				    "placed" : "running";
			v->unfit = is_unfit(v);
			return;
		}
	if (best >= 0)
		return;
	if (ids_end(&cli_sp, 0, &end) == 0 && id >= end)
		v->state = "no-such-task";
}

void
query_free(struct tview *v)
{
	free(v->name);
	free(v->after);
	if (v->has_result)
		result_free(&v->r);
	memset(v, 0, sizeof *v);
}

size_t
query_active(uint64_t **ids)
{
	size_t i, n = 0;

	query_init();
	*ids = xreallocarray(NULL, nplaced ? nplaced : 1, sizeof **ids);
	for (i = 0; i < nplaced; i++)
		(*ids)[n++] = placed[i].id;
	return n;
}

int
cli_read_summary(struct buf *b)
{
	return fsop_read_file(cli_sp.fd[SD_STATE], "summary",
	    SPOOL_SUMMARY_MAX, b, NULL);
}

const char *
query_summary_note(const char *sum, size_t len, const struct owner_info *o,
    char *out, size_t size)
{
	static const char *const phases[] = { "recovering", "stopping" };
	char who[sizeof o->host + 24];
	char *by = len ? rec_lookup(sum, len, "spoold") : NULL;
	char *flag;
	size_t i;

	*out = 0;
	if (by == NULL)
		return out;
	snprintf(who, sizeof who, "%s.%ld", o->host, o->pid);
	if (strcmp(by, who) != 0)
		snprintf(out, size, ", left by spoold %s", by);
	else
		for (i = 0; i < sizeof phases / sizeof *phases; i++)
			if ((flag = rec_lookup(sum, len, phases[i])) != NULL) {
				snprintf(out, size, ", %s", phases[i]);
				free(flag);
				break;
			}
	free(by);
	return out;
}

const char *
query_summary_workers(const char *sum, size_t len, char *out, size_t size)
{
	static const struct {
		const char *key, *word;
	} part[] = {
		{ "workers_draining", "draining" },
		{ "workers_gpus_held", "gpus-held" },
		{ "workers_lost", "lost" },
	};
	char *v = len ? rec_lookup(sum, len, "workers") : NULL;
	size_t i, n;

	snprintf(out, size, "%s", v ? v : "?");
	free(v);
	for (i = 0; i < sizeof part / sizeof *part; i++) {
		if ((v = len ? rec_lookup(sum, len, part[i].key) : NULL) ==
		    NULL)
			break;
		n = strlen(out);
		snprintf(out + n, size - n, "%s%s %s", i ? ", " : " (", v,
		    part[i].word);
		free(v);
	}
	if (i) {
		n = strlen(out);
		snprintf(out + n, size - n, ")");
	}
	return out;
}

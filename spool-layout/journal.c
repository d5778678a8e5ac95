/*
 * journal.c - the event journal; see journal.h for the format and the
 * contract.
 *
 * Writer.  One per process, in static storage: the event calls are
 * one-liners in spoold and ckworker, and a program has one journal.
 * journal_event() formats the line into a stack buffer (time from
 * CLOCK_REALTIME, no system call) and appends it to a pending buffer;
 * journal_flush() writes the pending lines with one write(2) (through
 * fsop_append: counted, and not a reason for a syncfs).  A segment is
 * created, O_EXCL, on the first write; a new one after
 * JOURNAL_SEGMENT_BYTES, after JOURNAL_SEGMENT_AGE_S, after a failed
 * write (so that a torn line stays the last line of its file), and
 * when asked (journal_new_segment, for checkpoints).  A failure to
 * write is reported once and the pending events are dropped: the
 * journal is history, never the truth.
 *
 * Reader.  Segments are read whole (journal_load) or followed
 * (jtail_read), lines are split in place, a last line without a newline
 * is skipped and counted as torn, malformed lines are counted as bad.
 * Events are sorted by time, stably, so the lines of one writer keep
 * their order when two share a millisecond.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsop.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"
#include "rec.h"

#define SEGMENT_READ_MAX	(256u << 20)	/* a larger segment is skipped */

static struct {
	int	dfd;		/* journal/, our own descriptor; -1: closed */
	int	fd;		/* the current segment; -1: none yet */
	pid_t	pid;		/* the opener: forked children never write */
	char	writer[96];	/* PROG.HOST.PID.RAND */
	char	seg[JOURNAL_NAME_MAX];
	uint64_t start_ms;	/* START of the current (or last) segment */
	uint64_t seg_bytes, seg_max;
	uint64_t opened_ms;	/* monotonic */
	uint64_t written_ms;	/* monotonic, last write */
	int	new_seg;
	int	atexit_set;
	struct buf pend;
	const struct spool *sp;	/* the opener's, to tell if it is gone */
} jw = { -1, -1, 0, "", "", 0, 0, 0, 0, 0, 0, 0, BUF_INIT, NULL };

/* Host name as a file name part: [A-Za-z0-9-], others become '_'. */
static void
name_part(char *out, size_t size, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		out[i] = (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ? s[i] : '_';
	out[i] = 0;
}

static void
journal_atexit(void)
{
	if (jw.pid == getpid())
		journal_close();
}

int
journal_open(const struct spool *sp, const char *prog)
{
	char host[40], p[16];
	uint32_t rnd = 0;
	uint64_t max;

	if (jw.dfd >= 0)
		return 0;
	if (sp->fd[SD_JOURNAL] < 0) {
		errno = EBADF;
		return -1;
	}
	if ((jw.dfd = fcntl(sp->fd[SD_JOURNAL], F_DUPFD_CLOEXEC, 3)) < 0)
		return -1;
	if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
		rnd = (uint32_t)now_ms() ^ (uint32_t)getpid() * 2654435761u;
	name_part(host, sizeof host, host_name());
	name_part(p, sizeof p, prog);
	snprintf(jw.writer, sizeof jw.writer, "%s.%s.%ld.%08x", p, host,
	    (long)getpid(), rnd);
	jw.pid = getpid();
	jw.sp = sp;
	jw.fd = -1;
	jw.seg[0] = 0;
	max = sp->cfg.journal_bytes / 16;
	jw.seg_max = max > JOURNAL_SEGMENT_BYTES ? JOURNAL_SEGMENT_BYTES :
	    max < JOURNAL_SEGMENT_MIN ? JOURNAL_SEGMENT_MIN : max;
	if (!jw.atexit_set) {
		atexit(journal_atexit);
		jw.atexit_set = 1;
	}
	return 0;
}

int
journal_is_open(void)
{
	return jw.dfd >= 0;
}

const char *
journal_segment_name(void)
{
	return jw.seg;
}

static void
segment_close(void)
{
	if (jw.fd >= 0 && fsop_close(jw.fd) < 0)
		msg_once("journal-close", "journal: close: %s/%s: %m",
		    JOURNAL_DIR, jw.seg);
	jw.fd = -1;
	jw.new_seg = 0;
}

void
journal_close(void)
{
	if (jw.dfd < 0)
		return;
	journal_flush(1);
	segment_close();
	(void)close(jw.dfd);
	jw.dfd = -1;
	buf_free(&jw.pend);
}

void
journal_new_segment(void)
{
	jw.new_seg = 1;
}

static int
segment_open(void)
{
	uint64_t start = (uint64_t)(now_unix() * 1000.0);
	int tries;

	for (tries = 0; tries < 8; tries++) {
		if (start <= jw.start_ms)
			start = jw.start_ms + 1;
		snprintf(jw.seg, sizeof jw.seg, "%013" PRIu64 ".%s", start,
		    jw.writer);
		jw.start_ms = start;
		jw.fd = fsop_openfile(jw.dfd, jw.seg, O_WRONLY | O_CREAT |
		    O_EXCL | O_APPEND, 0600);
		if (jw.fd >= 0) {
			jw.seg_bytes = 0;
			jw.opened_ms = now_ms();
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * A failed create or write of a segment: reported once, the pending
 * events dropped.  Not when the spool itself is gone: its owner says so
 * and exits, and the journal, gone with it, is no news.
 */
static void
write_failed(const char *what)
{
	int saved = errno;

	buf_reset(&jw.pend);
	if (jw.sp && !spool_alive(jw.sp))
		return;
	errno = saved;
	msg_once("journal", "journal: %s: %s/%s: %m (events dropped)", what,
	    JOURNAL_DIR, jw.seg);
}

void
journal_flush(int force)
{
	uint64_t now;

	if (jw.dfd < 0 || jw.pend.len == 0 || jw.pid != getpid())
		return;
	now = now_ms();
	if (!force && now - jw.written_ms < JOURNAL_FLUSH_MS &&
	    jw.pend.len < JOURNAL_PENDING_MAX)
		return;
	if (jw.fd >= 0 && (jw.new_seg || jw.seg_bytes >= jw.seg_max ||
	    now - jw.opened_ms >= JOURNAL_SEGMENT_AGE_S * 1000ull))
		segment_close();
	jw.new_seg = 0;
	if (jw.fd < 0 && segment_open() < 0) {
		write_failed("create");
		return;
	}
	if (fsop_append(jw.fd, jw.pend.p, jw.pend.len) < 0) {
		write_failed("write");
		segment_close();	/* a torn line stays last in its file */
		return;
	}
	msg_clear("journal");
	jw.seg_bytes += jw.pend.len;
	jw.written_ms = now;
	buf_reset(&jw.pend);
}

static int
is_bare(const char *s)
{
	if (*s == 0)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_.:/@+,%-", *s)))
			return 0;
	return 1;
}

const char *
journal_q(const char *s)
{
	static char ring[8][JOURNAL_VALUE_MAX + 1];
	static unsigned next;
	char *out = ring[next++ % 8];

	if (s == NULL)
		s = "";
	if (is_bare(s) && strlen(s) <= JOURNAL_VALUE_MAX) {
		memcpy(out, s, strlen(s) + 1);
		return out;
	}
	(void)msg_quote(out, sizeof ring[0], s);
	return out;
}

/*
 * Cut a line that did not fit at the last field boundary (a space
 * outside quotes) that leaves room for " cut=1".
 */
static size_t
line_cut(char *line, size_t len)
{
	size_t i, last = 0;
	int inq = 0;

	for (i = 0; i < len && i + 8 < JOURNAL_LINE_MAX; i++) {
		if (inq && line[i] == '\\' && i + 1 < len)
			i++;
		else if (line[i] == '"')
			inq = !inq;
		else if (line[i] == ' ' && !inq)
			last = i;
	}
	memcpy(line + last, " cut=1", 7);
	return last + 6;
}

/*
 * A line's beginning, "SECONDS.MMM HOST SUBJECT ID EVENT", without
 * printf (3-4 lines a task in spoold and in the worker): its length,
 * or 0 where it does not fit.
 */
static size_t
line_prefix(char line[JOURNAL_LINE_MAX], const char *subject,
    const char *id, const char *event)
{
	const char *word[] = { host_name(), subject, id && *id ? id : "-",
	    event };
	struct timespec ts;
	size_t len, i, n;
	long ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	len = fmt_uint(line, ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0);
	ms = ts.tv_nsec / 1000000;
	line[len++] = '.';
	line[len++] = (char)('0' + ms / 100);
	line[len++] = (char)('0' + ms / 10 % 10);
	line[len++] = (char)('0' + ms % 10);
	for (i = 0; i < sizeof word / sizeof word[0]; i++) {
		n = strlen(word[i]);
		if (len + 1 + n >= JOURNAL_LINE_MAX)
			return 0;
		line[len++] = ' ';
		memcpy(line + len, word[i], n);
		len += n;
	}
	line[len] = 0;
	return len;
}

static void
vevent(const char *subject, const char *id, const char *event,
    const char *fmt, va_list ap)
{
	char line[JOURNAL_LINE_MAX];
	size_t len, i;
	int m;

	if (jw.dfd < 0 || jw.pid != getpid())
		return;
	if ((len = line_prefix(line, subject, id, event)) == 0)
		return;
	if (fmt && *fmt) {
		line[len++] = ' ';
		m = vsnprintf(line + len, sizeof line - len, fmt, ap);
		if (m < 0)
			return;
		if ((size_t)m >= sizeof line - len)
			len = line_cut(line, sizeof line - 1);
		else
			len += (size_t)m;
	}
	/* a raw control byte would break the one-line format */
	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[len++] = '\n';
	buf_append(&jw.pend, line, len);
	if (jw.pend.len >= 16 * JOURNAL_PENDING_MAX)
		journal_flush(1);	/* a burst: bound the memory */
}

void
journal_event(const char *subject, const char *id, const char *event,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vevent(subject, id, event, fmt, ap);
	va_end(ap);
}

void
journal_task(uint64_t id, const char *event, const char *fmt, ...)
{
	char ids[FMT_UINT_SIZE];
	va_list ap;

	if (jw.dfd < 0)
		return;
	fmt_uint(ids, id);
	va_start(ap, fmt);
	vevent("task", ids, event, fmt, ap);
	va_end(ap);
}

void
journal_worker(const char *wid, const char *event, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vevent("worker", journal_q(wid), event, fmt, ap);
	va_end(ap);
}

void
journal_job(const char *job, const char *event, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vevent("job", journal_q(job), event, fmt, ap);
	va_end(ap);
}

/* " key=" into b, for the value after it */
static void
put_k(struct buf *b, const char *key)
{
	buf_putc(b, ' ');
	buf_puts(b, key);
	buf_putc(b, '=');
}

/* " key=v", v a word or quoted (journal_q) */
static void
put_kv(struct buf *b, const char *key, const char *v)
{
	put_k(b, key);
	buf_puts(b, v);
}

static void
put_ki(struct buf *b, const char *key, int64_t v)
{
	put_k(b, key);
	buf_put_int(b, v);
}

static void
put_ku(struct buf *b, const char *key, uint64_t v)
{
	put_k(b, key);
	buf_put_uint(b, v);
}

/* A task's outcome, a line for every task: its fields put without printf */
void
journal_result(const char *event, const struct result *r)
{
	struct buf b = BUF_INIT;

	if (jw.dfd < 0)
		return;
	buf_puts(&b, "att=");
	buf_put_uint(&b, r->attempt);
	put_kv(&b, "state", result_state_name[r->state]);
	put_kv(&b, "reason", result_reason_name[r->reason]);
	if (r->worker)
		put_kv(&b, "worker", journal_q(r->worker));
	if (r->host)
		put_kv(&b, "host", journal_q(r->host));
	if (r->exit_code >= 0)
		put_ki(&b, "exit", r->exit_code);
	if (r->signal)
		put_ki(&b, "signal", r->signal);
	if (r->start > 0) {
		static const char *const key[] = { "start", "end", "wall",
		    "utime", "stime" };
		double v[] = { r->start, r->end, r->end - r->start,
		    r->utime, r->stime };
		char num[64];

		for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
			rec_format_double(num, sizeof num, v[i], 3);
			put_kv(&b, key[i], num);
		}
	}
	if (r->maxrss)
		put_ku(&b, "maxrss", r->maxrss);
	if (r->memory_peak)
		put_ku(&b, "peak", r->memory_peak);
	if (r->cores)
		put_ku(&b, "cores", r->cores);
	if (r->gpus)
		put_ku(&b, "gpus", r->gpus);
	if (r->message)
		put_kv(&b, "msg", journal_q(r->message));
	journal_task(r->id, event, "%s", b.p);
	buf_free(&b);
}

/* ---- reading ---- */

static int
is_word(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == '"' || *s == '=')
			return 0;
	return 1;
}

int
journal_parse_line(char *line, struct jevent *e)
{
	char *f[5], *p = line, *end;
	size_t k;

	for (k = 0; k < 5; k++) {
		f[k] = p;
		if ((p = strchr(p, ' ')) == NULL) {
			if (k < 4)
				goto bad;
			p = f[k] + strlen(f[k]);	/* no fields */
			break;
		}
		p++;
	}
	e->kv = p;	/* after the space that ends EVENT, or "" */
	for (k = 0; k < 4; k++)
		f[k + 1][-1] = 0;
	if (*e->kv)
		((char *)e->kv)[-1] = 0;
	e->t = strtod(f[0], &end);
	if (end == f[0] || *end || e->t < 0)
		goto undo;
	for (k = 1; k < 5; k++)
		if (*f[k] == 0 || !is_word(f[k]))
			goto undo;
	e->host = f[1];
	e->subject = f[2];
	e->id = f[3];
	e->event = f[4];
	return 0;
undo:
	for (k = 0; k < 4; k++)
		f[k + 1][-1] = ' ';
	if (*e->kv)
		((char *)e->kv)[-1] = ' ';
bad:
	return -1;
}

void
jlog_add_text(struct jlog *log, char *text, size_t len)
{
	char *p = text, *end = text + len, *nl;
	struct jevent e;

	/* doubling: one text per segment, and there may be 10,000 */
	if (log->ntexts == log->tcap) {
		log->tcap = log->tcap ? 2 * log->tcap : 64;
		log->texts = xreallocarray(log->texts, log->tcap,
		    sizeof *log->texts);
	}
	log->texts[log->ntexts++] = text;
	log->bytes += len;
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL) {
			log->torn++;	/* being written, or a failed write */
			break;
		}
		*nl = 0;
		if (nl > p && journal_parse_line(p, &e) == 0) {
			if (log->n == log->cap) {
				log->cap = log->cap ? 2 * log->cap : 1024;
				log->ev = xreallocarray(log->ev, log->cap,
				    sizeof *log->ev);
			}
			e.seq = (uint32_t)log->n;
			log->ev[log->n++] = e;
		} else if (nl > p)
			log->bad++;
		p = nl + 1;
	}
}

static int
ev_cmp(const void *a, const void *b)
{
	const struct jevent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
jlog_sort(struct jlog *log)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		log->ev[i].seq = (uint32_t)i;
	if (log->n > 1)
		qsort(log->ev, log->n, sizeof *log->ev, ev_cmp);
}

void
jlog_free(struct jlog *log)
{
	size_t i;

	for (i = 0; i < log->ntexts; i++)
		free(log->texts[i]);
	free(log->texts);
	free(log->ev);
	memset(log, 0, sizeof *log);
}

static int
seg_name_ok(const char *name, uint64_t *start, const char **writer)
{
	const char *p = name;
	uint64_t v = 0;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (digits != 13 || *p != '.' || p[1] == 0)
		return 0;
	*start = v;
	*writer = p + 1;
	return strlen(name) < JOURNAL_NAME_MAX;
}

/* A segment's name (fsop_list_names' keep) */
static int
seg_name(const char *name)
{
	const char *writer;
	uint64_t start;

	return seg_name_ok(name, &start, &writer);
}

int
journal_load(int dfd, struct jlog *log)
{
	struct fsop_names c;
	struct buf b = BUF_INIT;
	size_t i, len;
	int err = 0;

	/* by START, so that a writer's segments are read in its order */
	if (fsop_list_names(dfd, ".", seg_name, NULL, &c) < 0)
		return -1;
	for (i = 0; i < c.n; i++) {
		if (fsop_read_file(dfd, c.v[i], SEGMENT_READ_MAX, &b,
		    NULL) < 0) {
			if (errno != ENOENT)	/* removed by rotation: fine */
				err = errno;
		} else {
			log->segments++;
			len = b.len;
			jlog_add_text(log, buf_steal(&b), len);
		}
	}
	fsop_names_free(&c);
	buf_free(&b);
	jlog_sort(log);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Position of key=VALUE in kv, or NULL; *val at VALUE. */
static const char *
kv_find(const char *kv, const char *key, const char **val)
{
	size_t klen = strlen(key);
	const char *p = kv;

	while (*p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			*val = p + klen + 1;
			return p;
		}
		/* skip this token: up to a space outside quotes */
		while (*p && *p != ' ') {
			if (*p == '"') {
				for (p++; *p && *p != '"'; p++)
					if (*p == '\\' && p[1])
						p++;
				if (*p)
					p++;
			} else
				p++;
		}
		while (*p == ' ')
			p++;
	}
	return NULL;
}

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int
jev_get(const struct jevent *e, const char *key, char *out, size_t size)
{
	const char *v;
	size_t n = 0;

	if (size == 0 || kv_find(e->kv, key, &v) == NULL)
		return 0;
	if (*v != '"') {
		while (*v && *v != ' ' && n + 1 < size)
			out[n++] = *v++;
		out[n] = 0;
		return 1;
	}
	for (v++; *v && *v != '"' && n + 1 < size; v++) {
		char c = *v;

		if (c == '\\' && v[1]) {
			v++;
			switch (*v) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'x':
				if (hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
					c = (char)(hexval(v[1]) * 16 +
					    hexval(v[2]));
					v += 2;
				}
				break;
			default: c = *v;
			}
		}
		out[n++] = c;
	}
	out[n] = 0;
	return 1;
}

int
jev_num(const struct jevent *e, const char *key, double *out)
{
	const char *v;
	char *end;
	double d;

	if (kv_find(e->kv, key, &v) == NULL)
		return 0;
	d = strtod(v, &end);
	if (end == v || (*end && *end != ' '))
		return 0;
	*out = d;
	return 1;
}

/* ---- following ---- */

struct jtail_seg {
	char	name[JOURNAL_NAME_MAX];
	off_t	off;
	int	partial;	/* the first read began past its start */
	double	first_t;	/* (partial) time of its first event read */
	int	from_end;	/* listed at the first pass, whole lines not
				 * yet read from its end: read end_bytes */
	size_t	end_bytes;	/* ... the first pass's tail_bytes */
	double	mtime;		/* as last stat'd */
	int	newest;		/* its writer's newest segment listed */
	int	closed;		/* not newest, or idle: not stat'd each pass */
	int	failed;		/* its stat, open or read failed: read next
				 * pass */
};

struct tail_ctx {
	int	dfd;
	struct jtail *t;
	struct jlog *log;
	size_t	tail_bytes;
};

/*
 * Read what was appended to segment s since the last pass, complete
 * lines only (on the first pass only its last tail_bytes).  0, or -1
 * with errno if it could not be stat'd, opened or read: what was read
 * before the failure is taken, the rest is read again the next pass.
 * A segment of the first pass whose end could not be read (or held no
 * whole line) is read the next pass as at the first: its last
 * end_bytes as they are then, from the first whole line (it was read
 * whole, and -n or top printed a whole segment's old events); the
 * events of such a later read go to t->late where the caller set it.
 */
static int
tail_one(struct tail_ctx *c, struct jtail_seg *s)
{
	const char *name = s->name;
	struct stat st;
	struct jlog *to;
	size_t want, got = 0, keep, had;
	char *text, *nl;
	ssize_t n = 0;
	int fd, skip_first = 0, err;

	if (!c->t->started) {
		s->from_end = 1;
		s->end_bytes = c->tail_bytes;
	}
	if (fsop_stat(c->dfd, name, &st) < 0)	/* ENOENT: removed (bounded) */
		return errno == ENOENT ? 0 : -1;
	if (!S_ISREG(st.st_mode))
		return 0;
	s->mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	if (s->from_end && (size_t)st.st_size > s->end_bytes) {
		s->off = st.st_size - (off_t)s->end_bytes;
		skip_first = 1;
	} else if (s->from_end) {
		s->off = 0;		/* whole, as any later read */
		s->from_end = 0;
	}
	if (st.st_size <= s->off)
		return 0;
	want = (size_t)(st.st_size - s->off);
	if (want > SEGMENT_READ_MAX)
		want = SEGMENT_READ_MAX;
	if ((fd = fsop_openfile(c->dfd, name, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return errno == ENOENT ? 0 : -1;
	text = xmalloc(want + 1);
	while (got < want && (n = fsop_pread(fd, text + got, want - got,
	    s->off + (off_t)got)) > 0)
		got += (size_t)n;
	err = errno;
	(void)close(fd);
	/* complete lines only; the rest is read when it is complete */
	while (got > 0 && text[got - 1] != '\n')
		got--;
	keep = got;
	text[keep] = 0;
	/* an end read only in part (jtail_cut) unless it failed at once */
	if (skip_first && (keep > 0 || n >= 0)) {
		s->partial = 1;
		s->first_t = HUGE_VAL;	/* until an event of it is read */
	}
	if (keep == 0) {	/* from_end: the next pass reads the end */
		free(text);
		goto out;
	}
	to = c->t->late && c->t->started && s->from_end ? c->t->late :
	    c->log;
	s->from_end = 0;
	s->off += (off_t)keep;
	if (skip_first && (nl = memchr(text, '\n', keep)) != NULL) {
		size_t drop = (size_t)(nl + 1 - text);

		memmove(text, nl + 1, keep - drop + 1);
		keep -= drop;
	}
	had = to->n;
	jlog_add_text(to, text, keep);
	if (skip_first && to->n > had)
		s->first_t = to->ev[had].t;
out:
	errno = err;
	return n < 0 ? -1 : 0;
}

/* A writer's segments together, oldest first (START has 13 digits). */
static int
seg_by_writer(const void *a, const void *b)
{
	const struct jtail_seg *x = *(struct jtail_seg *const *)a;
	const struct jtail_seg *y = *(struct jtail_seg *const *)b;
	int c = strcmp(strchr(x->name, '.'), strchr(y->name, '.'));

	return c ? c : strcmp(x->name, y->name);
}

/*
 * Mark the newest segment of each writer: a writer appends only to its
 * newest (journal_flush closes a segment before it begins the next), so
 * the others are closed once read after their successor was listed.
 */
static void
mark_newest(struct jtail_seg *segs, size_t n)
{
	struct jtail_seg **by;
	size_t i;

	if (n == 0)
		return;
	by = xreallocarray(NULL, n, sizeof *by);
	for (i = 0; i < n; i++)
		by[i] = &segs[i];
	qsort(by, n, sizeof *by, seg_by_writer);
	for (i = 0; i < n; i++)
		by[i]->newest = i + 1 == n ||
		    strcmp(strchr(by[i]->name, '.'),
		    strchr(by[i + 1]->name, '.')) != 0;
	free(by);
}

/*
 * List the directory, sort the names and merge them with t->segs (kept
 * sorted by name) in one walk: what is listed and known keeps its
 * offset, what is new is added, what is no longer listed (removed by
 * rotation) is forgotten.  (A search of t->segs for every name made a
 * pass quadratic: with 10,000 segments, seconds of CPU per pass.)  A
 * listing that fails changes nothing: the next pass lists again.
 */
static int
tail_list(int dfd, struct jtail *t)
{
	struct fsop_names ls;
	struct jtail_seg *segs;
	size_t i, j = 0, n = 0;

	if (fsop_list_names(dfd, ".", seg_name, NULL, &ls) < 0)
		return -1;
	segs = xreallocarray(NULL, ls.n ? ls.n : 1, sizeof *segs);
	for (i = 0; i < ls.n; i++) {
		/* listed twice: a directory that changed while listed */
		if (n > 0 && strcmp(segs[n - 1].name, ls.v[i]) == 0)
			continue;
		while (j < t->n && strcmp(t->segs[j].name, ls.v[i]) < 0)
			j++;	/* gone */
		if (j < t->n && strcmp(t->segs[j].name, ls.v[i]) == 0)
			segs[n] = t->segs[j++];
		else {
			memset(&segs[n], 0, sizeof segs[n]);
			snprintf(segs[n].name, sizeof segs[n].name, "%s",
			    ls.v[i]);
		}
		n++;
	}
	fsop_names_free(&ls);
	free(t->segs);
	t->segs = segs;
	t->n = n;
	mark_newest(segs, n);
	return 0;
}

/*
 * A pass costs what changed, not what the journal holds (10,000
 * segments made 20,000 stats a second at two passes a second).  The
 * directory is listed only when its mtime changed (a segment begun or
 * removed); a listing counts for an mtime only once the clock is
 * JTAIL_SETTLE_S past it, as a segment begun in the same tick as the
 * listing leaves the mtime as it was.  Only open segments are stat'd:
 * a writer's newest not written for JOURNAL_IDLE_S (journal_segments'
 * rule), read one last time after its successor is listed.  Every
 * JTAIL_FULL_EVERY passes, and the first, lists and stats everything:
 * an NFS client's attribute cache may show a directory or a segment
 * as it was (a last append seen late, a new segment listed late), and
 * a segment appended against these rules is read all the same.
 */
int
jtail_read(int dfd, struct jtail *t, struct jlog *log, size_t tail_bytes)
{
	struct tail_ctx c = { dfd, t, log, tail_bytes };
	struct jtail_seg *s;
	struct stat dst;
	double now = now_unix(), dm;
	size_t i;
	int full, err = 0;

	t->unread[0] = 0;
	if (fsop_stat(dfd, ".", &dst) < 0)
		return -1;
	dm = (double)dst.st_mtim.tv_sec + dst.st_mtim.tv_nsec / 1e9;
	full = !t->started || ++t->passes % JTAIL_FULL_EVERY == 0;
	if (full || !t->listed || dm != t->dir_mtime) {
		if (tail_list(dfd, t) < 0)
			return -1;
		t->listed = now - dm >= JTAIL_SETTLE_S;
		t->dir_mtime = dm;
	}
	for (i = 0; i < t->n; i++) {
		s = &t->segs[i];
		if (!full && s->closed && !s->failed)
			continue;
		if ((s->failed = tail_one(&c, s) < 0) && !err) {
			err = errno;
			snprintf(t->unread, sizeof t->unread, "%s", s->name);
		}
		/* idle only by a stat that worked: one that failed (NFS:
		 * EIO, ESTALE) is tried again the next pass */
		s->closed = !s->newest || (s->mtime > 0 &&
		    now - s->mtime > JOURNAL_IDLE_S);
	}
	t->started = 1;
	jlog_sort(log);
	if (t->late)
		jlog_sort(t->late);
	errno = err;
	return err ? -1 : 0;
}

double
jtail_cut(const struct jtail *t)
{
	double cut = -HUGE_VAL;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->segs[i].partial && t->segs[i].first_t > cut)
			cut = t->segs[i].first_t;
	return cut;
}

const char *
jtail_unread(const struct jtail *t)
{
	static char ring[4][JOURNAL_VALUE_MAX + 2];
	static unsigned next;
	char *out = ring[next++ % 4];

	if (t->unread[0] == 0)
		return "";
	snprintf(out, sizeof ring[0], "/%s", journal_q(t->unread));
	return out;
}

void
jtail_free(struct jtail *t)
{
	free(t->segs);
	memset(t, 0, sizeof *t);
}

/* ---- bounding ---- */

struct segs_ctx {
	int	dfd;
	struct jseg_info *v;
	size_t	n, cap;
};

static int
seg_info_one(void *arg, const char *name, unsigned char type)
{
	struct segs_ctx *c = arg;
	struct jseg_info *s;
	const char *writer;
	uint64_t start;
	struct stat st;

	(void)type;
	if (!seg_name_ok(name, &start, &writer))
		return 0;
	if (fsop_stat(c->dfd, name, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	/*
	 * Doubling: there may be 10,000 segments and more, and growing by
	 * one copies the whole array each time where realloc cannot extend
	 * it in place.
	 */
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->v = xreallocarray(c->v, c->cap, sizeof *c->v);
	}
	s = &c->v[c->n++];
	snprintf(s->name, sizeof s->name, "%s", name);
	s->start_ms = start;
	s->bytes = (uint64_t)st.st_size;
	s->mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	s->closed = 0;
	return 0;
}

static int
by_writer(const void *a, const void *b)
{
	const struct jseg_info *x = a, *y = b;
	int c = strcmp(strchr(x->name, '.'), strchr(y->name, '.'));

	if (c)
		return c;
	return x->start_ms < y->start_ms ? -1 : x->start_ms > y->start_ms;
}

static int
by_start(const void *a, const void *b)
{
	const struct jseg_info *x = a, *y = b;

	if (x->start_ms != y->start_ms)
		return x->start_ms < y->start_ms ? -1 : 1;
	return strcmp(x->name, y->name);
}

ssize_t
journal_segments(int dfd, double now, struct jseg_info **out)
{
	struct segs_ctx c = { dfd, NULL, 0, 0 };
	size_t i;

	if (fsop_list(dfd, ".", seg_info_one, &c) < 0) {
		free(c.v);
		return -1;
	}
	if (c.n > 1)
		qsort(c.v, c.n, sizeof *c.v, by_writer);
	for (i = 0; i < c.n; i++) {
		int newest = i + 1 == c.n || strcmp(strchr(c.v[i].name, '.'),
		    strchr(c.v[i + 1].name, '.')) != 0;

		c.v[i].closed = !newest || now - c.v[i].mtime > JOURNAL_IDLE_S;
	}
	if (c.n > 1)
		qsort(c.v, c.n, sizeof *c.v, by_start);
	*out = c.v;
	return (ssize_t)c.n;
}

int
journal_rotate(int dfd, uint64_t keep_bytes, double before,
    size_t *removed, uint64_t *left)
{
	struct jseg_info *v;
	uint64_t total = 0;
	ssize_t n, i, count;

	*removed = 0;
	*left = 0;
	if ((n = journal_segments(dfd, now_unix(), &v)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	count = n;
	for (i = 0; i < n && (total > keep_bytes ||
	    count > JOURNAL_SEGMENTS_KEEP); i++) {
		if (!v[i].closed || v[i].mtime > before)
			continue;
		if (fsop_unlink(dfd, v[i].name) < 0 && errno != ENOENT) {
			int saved = errno;

			free(v);
			*left = total;
			errno = saved;
			return -1;
		}
		total -= v[i].bytes;
		count--;
		(*removed)++;
	}
	free(v);
	*left = total;
	return 0;
}

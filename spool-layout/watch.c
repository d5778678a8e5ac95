/*
 * watch.c - inotify hints and directory stamps; see watch.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "buf.h"
#include "fsop.h"
#include "hostinfo.h"
#include "msg.h"
#include "watch.h"

struct watch_entry {
	int	wd;
	void	*cookie;
};

void
dirstamp_reset(struct dirstamp *s)
{
	memset(s, 0, sizeof *s);
}

void
dirstamp_listed(struct dirstamp *s, int rc, const char *path, ...)
{
	char name[PATH_MAX];
	va_list ap;
	int saved = errno, was = s->failing;

	if (rc == 0 && !was)
		return;
	va_start(ap, path);
	vsnprintf(name, sizeof name, path, ap);
	va_end(ap);
	if (rc == 0) {
		s->failing = 0;
		msg_info("recovered: list-%s", name);
		return;
	}
	dirstamp_reset(s);
	s->failing = 1;
	if (!was)
		msg_warn("list: %s: %s (tried again at the next rescan)", name,
		    strerror(saved));
	errno = saved;
}

int
dirstamp_changed(int dfd, const char *name, struct dirstamp *s)
{
	struct stat st;
	int changed;

	if (fsop_stat(dfd, name, &st) < 0) {
		s->valid = 0;
		return 1;
	}
	changed = !s->valid || st.st_mtim.tv_sec != s->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != s->mtime.tv_nsec ||
	    st.st_ctim.tv_sec != s->ctime.tv_sec ||
	    st.st_ctim.tv_nsec != s->ctime.tv_nsec ||
	    st.st_size != s->size || st.st_nlink != s->nlink ||
	    st.st_ino != s->ino;
	s->mtime = st.st_mtim;
	s->ctime = st.st_ctim;
	s->size = st.st_size;
	s->nlink = st.st_nlink;
	s->ino = st.st_ino;
	s->valid = 1;
	if (changed && st.st_mtim.tv_nsec == 0 && st.st_ctim.tv_nsec == 0)
		s->hot_until = now_ms() + DIRSTAMP_COARSE_MS;
	if (s->hot_until != 0 && !changed && now_ms() >= s->hot_until) {
		s->hot_until = 0;	/* the listing after the second ended */
		changed = 1;
	}
	if (changed || s->again || s->hot_until != 0 ||
	    ++s->rounds >= DIRSTAMP_FORCE) {
		s->again = changed;
		s->rounds = 0;
		return 1;
	}
	return 0;
}

int
watch_open(struct watch *w, int enabled)
{
	const char *env;

	memset(w, 0, sizeof *w);
	w->fd = -1;
	if (enabled < 0) {
		env = getenv("CKSPOOL_NO_INOTIFY");
		enabled = !(env && *env && strcmp(env, "0") != 0);
	}
	if (!enabled)
		return 0;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return w->fd < 0 ? -1 : 0;
}

void
watch_close(struct watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->e);
	memset(w, 0, sizeof *w);
	w->fd = -1;
}

int
watch_enabled(const struct watch *w)
{
	return w->fd >= 0;
}

int
watch_add(struct watch *w, int dfd, const char *name, uint32_t mask,
    void *cookie)
{
	char path[64 + NAME_MAX];
	size_t i;
	int wd;

	if (w->fd < 0)
		return 0;
	fsop_count[FSOP_WATCH]++;	/* a lookup of the path, as a stat */
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dfd, name);
	wd = inotify_add_watch(w->fd, path, mask | IN_ONLYDIR |
	    IN_DONT_FOLLOW | IN_DELETE_SELF | IN_MOVE_SELF);
	if (wd < 0)
		return -1;
	for (i = 0; i < w->n; i++)
		if (w->e[i].wd == wd) {
			w->e[i].cookie = cookie;
			return 0;
		}
	w->e = xreallocarray(w->e, w->n + 1, sizeof *w->e);
	w->e[w->n].wd = wd;
	w->e[w->n].cookie = cookie;
	w->n++;
	return 0;
}

void
watch_remove(struct watch *w, void *cookie)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->e[i].cookie == cookie) {
			(void)inotify_rm_watch(w->fd, w->e[i].wd);
			w->e[i--] = w->e[--w->n];
		}
}

static void *
cookie_of(struct watch *w, int wd, int drop)
{
	size_t i;
	void *c;

	for (i = 0; i < w->n; i++)
		if (w->e[i].wd == wd) {
			c = w->e[i].cookie;
			if (drop)
				w->e[i] = w->e[--w->n];
			return c;
		}
	return NULL;
}

int
watch_read(struct watch *w, watch_fn fn, void *arg)
{
	char evbuf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;
	void *c;

	if (w->fd < 0)
		return 0;
	for (;;) {
		n = read(w->fd, evbuf, sizeof evbuf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		for (p = evbuf; p < evbuf + n;
		    p += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				w->overflow = 1;
				fn(arg, NULL, "", ev->mask);
				continue;
			}
			c = cookie_of(w, ev->wd, (ev->mask & IN_IGNORED) != 0);
			if (c == NULL || (ev->mask & IN_IGNORED))
				continue;
			fn(arg, c, ev->len ? ev->name : "", ev->mask);
		}
	}
}

/*
 * msg.c - see msg.h.  errno is preserved across every call so that a
 * caller may log and then still inspect or return errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"

static const char *progname = "ckspool";
static int stamps;
static int verbose;

/*
 * The keys of msg_once: a key longer than a slot is known by its first
 * ONCE_KEY_MAX - 1 bytes.  (Slots of 48 bytes once cut longer keys, a
 * kind's or a worker's name in them, which then never matched: their
 * condition was said at every try.)  When every slot is taken, the
 * key stored longest ago makes room: before, a key that found no slot
 * was said at every try, so a long-running spoolfs that had met 32
 * conditions never cleared (a task file unreadable each) said every
 * new one at every try.
 */
#define ONCE_MAX	32
#define ONCE_KEY_MAX	256
static char once_keys[ONCE_MAX][ONCE_KEY_MAX];
static unsigned once_oldest;	/* the slot to take when none is free */

void
msg_init(const char *name)
{
	const char *slash = strrchr(name, '/');

	progname = slash ? slash + 1 : name;
}

const char *
msg_progname(void)
{
	return progname;
}

void
msg_timestamps(int on)
{
	stamps = on;
}

void
msg_verbose(int level)
{
	verbose = level;
}

int
msg_is_verbose(int level)
{
	return verbose >= level;
}

static void
msg_vprint(const char *tag, const char *fmt, va_list ap)
{
	char line[2048];
	size_t n = 0;
	int saved = errno;

	if (stamps) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof line - n, ".%03ld ",
		    ts.tv_nsec / 1000000);
	}
	n += (size_t)snprintf(line + n, sizeof line - n, "%s: %s", progname,
	    tag);
	if (n < sizeof line) {
		errno = saved;
		n += (size_t)vsnprintf(line + n, sizeof line - n, fmt, ap);
	}
	if (n >= sizeof line - 1)
		n = sizeof line - 2;
	line[n++] = '\n';
	/* One write: lines from concurrent processes do not interleave. */
	(void)!write(STDERR_FILENO, line, n);
	errno = saved;
}

void
msg_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vprint("", fmt, ap);
	va_end(ap);
}

void
msg_debug(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 1)
		return;
	va_start(ap, fmt);
	msg_vprint("debug: ", fmt, ap);
	va_end(ap);
}

void
msg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vprint("warning: ", fmt, ap);
	va_end(ap);
}

/*
 * A fatal exit is not a leak check.  Under LeakSanitizer (the
 * sanitized builds of "make check", detect_leaks=1), a block that the
 * program still held when it gave up is reported as leaked when the
 * compiler, knowing that msg_fatal() does not return, kept its pointer
 * nowhere LSan looks: whether it did depends on the build, so a
 * refusal that frees nothing before its exit failed one CI run of
 * four (exit 134 for "spool wait"'s 2) and passed the next.  Such a
 * block is held, not lost, as every block of a program that exits is.
 * So a fatal exit of a sanitized build ends in _exit() with its own
 * status once the programs' atexit handlers have run: the handler
 * below is registered by a constructor, after LSan registered its
 * check (at the sanitizer's own start, before constructors) and before
 * main() registers the programs' handlers, so it runs after theirs and
 * before LSan's.  An exit() that is not a fatal message keeps LSan's
 * check, and a plain build has no handler.
 */
#if defined(__SANITIZE_ADDRESS__)
#define MSG_FATAL_UNCHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSG_FATAL_UNCHECKED 1
#endif
#endif

#ifdef MSG_FATAL_UNCHECKED
static int fatal_status = -1;

static void
fatal_exit(void)
{
	if (fatal_status < 0)
		return;
	(void)fflush(NULL);	/* as exit() does next, result unused */
	_exit(fatal_status);
}

__attribute__((constructor)) static void
fatal_exit_register(void)
{
	if (atexit(fatal_exit) != 0) {
		fputs("ckspool: atexit: cannot register the fatal exit\n",
		    stderr);
		_exit(EXIT_TEMPFAIL);
	}
}
#endif

static void __attribute__((noreturn))
fatal_exit_with(int status)
{
#ifdef MSG_FATAL_UNCHECKED
	fatal_status = status;
#endif
	exit(status);
}

void
msg_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vprint("fatal: ", fmt, ap);
	va_end(ap);
	fatal_exit_with(EXIT_TEMPFAIL);
}

void
msg_fatal_status(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vprint("fatal: ", fmt, ap);
	va_end(ap);
	fatal_exit_with(status);
}

void
msg_panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vprint("panic: ", fmt, ap);
	va_end(ap);
	abort();
}

int
msg_quote(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;
	char esc[4];
	size_t n = 0, k;
	int cut = 0;

	out[n++] = '"';
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\') {
			esc[0] = (char)*p;
			k = 1;
		} else if (*p == '"' || *p == '\\' || *p == '\n' ||
		    *p == '\t' || *p == '\r') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' :
			    *p == '\r' ? 'r' : (char)*p;
			k = 2;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 15];
			k = 4;
		}
		if (n + k + 2 > size) {		/* the quote and the NUL */
			cut = 1;
			break;
		}
		memcpy(out + n, esc, k);
		n += k;
	}
	out[n++] = '"';
	out[n] = 0;
	return cut;
}

const char *
msg_q(const char *s)
{
	static char ring[8][MSG_Q_MAX + 4];
	static unsigned next;
	char *out = ring[next++ % 8];

	if (msg_quote(out, MSG_Q_MAX + 1, s ? s : ""))
		strcat(out, "...");
	return out;
}

int
msg_once(const char *key, const char *fmt, ...)
{
	va_list ap;
	int i, free_slot = -1;

	for (i = 0; i < ONCE_MAX; i++) {
		if (once_keys[i][0] == 0) {
			if (free_slot < 0)
				free_slot = i;
		} else if (strncmp(once_keys[i], key, ONCE_KEY_MAX - 1) == 0)
			return 0;
	}
	if (free_slot < 0)
		free_slot = (int)(once_oldest++ % ONCE_MAX);
	snprintf(once_keys[free_slot], sizeof once_keys[0], "%s", key);
	va_start(ap, fmt);
	msg_vprint("warning: ", fmt, ap);
	va_end(ap);
	return 1;
}

void
msg_clear(const char *key)
{
	int i;

	for (i = 0; i < ONCE_MAX; i++)
		if (once_keys[i][0] &&
		    strncmp(once_keys[i], key, ONCE_KEY_MAX - 1) == 0) {
			once_keys[i][0] = 0;
			msg_info("recovered: %s", key);
		}
}

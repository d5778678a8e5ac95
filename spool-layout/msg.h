/*
 * msg.h - diagnostics for every ckspool program.
 *
 * One line per message on stderr, "program: text".  Callers put the
 * failing operation and object in the text and end with "%m" (glibc's
 * strerror(errno)), giving the project's required form:
 *
 *	spoold: rename: incoming/a.yaml: No such file or directory
 *
 * Daemons turn on timestamps.  msg_fatal() exits 111 (temporary
 * failure, as in s6/qmail); msg_panic() aborts on impossible states.
 * msg_once() reports a condition once until msg_clear() says it ended,
 * so a full disk is not logged in a loop.
 */
#ifndef MSG_H
#define MSG_H

#include <stdarg.h>
#include <stddef.h>

#define EXIT_TEMPFAIL	111	/* try again later */
#define EXIT_PERMFAIL	100	/* do not try again */
#define EXIT_USAGE	2

void	msg_init(const char *progname);
const char *msg_progname(void);
void	msg_timestamps(int on);
void	msg_verbose(int level);
int	msg_is_verbose(int level);

void	msg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	msg_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	msg_fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	msg_fatal_status(int status, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3), noreturn));
void	msg_panic(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/*
 * Text from users (a task name, a key of a task file, an argument, a
 * file name) goes in a message quoted: a newline or an escape in it
 * would split the line or drive the terminal.  msg_quote writes s in
 * double quotes with the escapes of rec_quote() (\" \\ \n \t \r,
 * \xHH for other control bytes) into out of size (at least 3) bytes,
 * cut where the closing quote still fits; it returns 1 if it cut.
 * msg_q is s so quoted, cut at MSG_Q_MAX bytes with "..." after the
 * quote, in one of 8 rotating static buffers: use it in the call that
 * prints.  Where a message shows the text bare (a path, an option's
 * value), journal_q() shows it so if it is a plain word, else quoted.
 */
#define MSG_Q_MAX	128
int	msg_quote(char *out, size_t size, const char *s);
const char *msg_q(const char *s);

/* Report once per key until msg_clear(key); returns 1 if it printed. */
int	msg_once(const char *key, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	msg_clear(const char *key);

#endif

/*
 * fuzz_bundle.c - the task records spoold and ckworker read from the
 * spool: a CLI's bundle in incoming/ (bundle_open, bundle_next; spoold
 * validates each task as accept.c does), a worker's assignment
 * (assign_decode), the lines of the event journal
 * (journal_parse_line), and a bundle read from a file a piece at a time
 * (bundle_file, as spoold, fsck, status and purge read one).  The
 * first byte picks the reader: 0 bundle, 1 assignment, 2 journal, 3
 * bundle file.
 *
 * Invariants: a bundle task that validates encodes and reads back to
 * the same record; a bundle read from a file gives what the same bytes
 * give in memory: the same header, the same records at the same
 * offsets, the same tasks, and the same end or the same refusal at the
 * same line.  (The fuzz build reads the file BUNDLE_READ_CHUNK = 61
 * bytes at a time, see the Makefile, so that inputs of a few hundred
 * bytes already cross pieces within and between records.)
 */
#include <sys/mman.h>
#include <unistd.h>

#include "bundle.h"
#include "fuzz.h"
#include "journal.h"
#include "wdir.h"

static void
one_bundle(const char *data, size_t size)
{
	struct bundle_reader br, br2;
	struct buf out = BUF_INIT;
	struct task_spec t, back;
	const char *why;
	int rc;

	if (bundle_open(&br, data, size) < 0) {
		fuzz_check(br.r.why != NULL, "a refusal without a reason");
		return;
	}
	bundle_begin(&out, br.hdr.first, br.hdr.count, br.hdr.nonce);
	while ((rc = bundle_next(&br, &t)) > 0) {
		if (task_validate(&t, &why) == 0)
			bundle_add(&out, &t);
		task_free(&t);
	}
	/* spoold's canonical rewrite reads back */
	if (bundle_open(&br2, out.p, out.len) == 0)
		while ((rc = bundle_next(&br2, &back)) > 0)
			task_free(&back);
	buf_free(&out);
}

/* t encoded, as bundle_add writes it */
static void
encoded(const struct task_spec *t, struct buf *b)
{
	buf_reset(b);
	task_encode(b, t);
}

static void
one_bundle_file(const char *data, size_t size)
{
	struct bundle_reader br;
	struct bundle_file bf;
	struct task_spec t, u;
	struct buf a = BUF_INIT, b = BUF_INIT;
	size_t done;
	ssize_t n;
	int fd, rc, frc;

	if ((fd = memfd_create("fuzz_bundle", 0)) < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	for (done = 0; done < size; done += (size_t)n)
		if ((n = write(fd, data + done, size - done)) <= 0) {
			perror("fuzz: write: memfd");
			abort();
		}
	rc = bundle_open(&br, data, size);
	frc = bundle_file_open(&bf, fd);
	fuzz_check(rc == frc, "bundle_file_open and bundle_open differ");
	if (rc == 0) {
		fuzz_check(bf.br.hdr.first == br.hdr.first &&
		    bf.br.hdr.count == br.hdr.count &&
		    strcmp(bf.br.hdr.nonce, br.hdr.nonce) == 0,
		    "another header");
		fuzz_check(bf.hdr_len == (size_t)(br.r.p - data),
		    "another header length");
		do {
			rc = bundle_next(&br, &t);
			frc = bundle_file_next(&bf, &u);
			fuzz_check(rc == frc, "bundle_file_next and bundle_next "
			    "differ");
			if (rc == 1) {
				fuzz_check(bf.rec_off == br.rec_off &&
				    bf.rec_len == br.rec_len &&
				    memcmp(bf.rec, data + br.rec_off,
				    br.rec_len) == 0, "another record");
				encoded(&t, &a);
				encoded(&u, &b);
				fuzz_same(&a, &b, "another task");
			}
			task_free(&t);
			task_free(&u);
		} while (rc == 1);
		if (rc == 0)
			fuzz_check(bf.end == size, "another end");
	}
	if (rc == -1)
		fuzz_check(bf.br.r.why && br.r.why &&
		    strcmp(bf.br.r.why, br.r.why) == 0 &&
		    bf.br.r.errline == br.r.errline, "another refusal");
	bundle_file_close(&bf);
	buf_free(&a);
	buf_free(&b);
	close(fd);
}

static void
one_assign(const char *data, size_t size)
{
	struct task_spec t;
	const char *why = NULL;
	uint32_t attempt;

	task_init(&t);
	if (assign_decode(data, size, &t, &attempt, &why) < 0)
		fuzz_check(why != NULL, "a refusal without a reason");
	task_free(&t);
}

static void
journal_lines(const char *data, size_t size)
{
	char *text = xstrndup(data, size), *line, *nl;
	struct jevent e;
	char v[64];
	double d;

	for (line = text; line; line = nl) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = 0;
		if (journal_parse_line(line, &e) == 0) {
			(void)jev_get(&e, "why", v, sizeof v);
			(void)jev_num(&e, "rss", &d);
		}
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		one_bundle((const char *)data + 1, size - 1);
		break;
	case 1:
		one_assign((const char *)data + 1, size - 1);
		break;
	case 2:
		journal_lines((const char *)data + 1, size - 1);
		break;
	default:
		one_bundle_file((const char *)data + 1, size - 1);
		break;
	}
	return 0;
}

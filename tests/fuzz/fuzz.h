/*
 * fuzz.h - what every libFuzzer target in tests/fuzz/ shares.
 *
 * Each fuzz_NAME.c defines LLVMFuzzerTestOneInput for one parser of
 * untrusted input; "make fuzz" builds them with clang and
 * -fsanitize=fuzzer,address,undefined and scripts/fuzz.sh runs each on
 * its seed corpus tests/fuzz/corpus/NAME/ (see tests/fuzz/README).
 * A target fails by crashing: a sanitizer report, a leak, or
 * fuzz_check() on an invariant of the parser (a value that is read
 * back must encode and read back to the same bytes).
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond, what) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: invariant broken: %s (%s:%d)\n",	\
		    (what), __FILE__, __LINE__);			\
		abort();						\
	}								\
} while (0)

/* Two encodings must be the same bytes. */
#define fuzz_same(a, b, what) fuzz_check((a)->len == (b)->len &&	\
	memcmp((a)->p, (b)->p, (a)->len) == 0, (what))

#endif

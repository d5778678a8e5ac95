/*
 * fnv.h - FNV-1a, 32 bits: a quick hash of bytes, for a table's slots
 * or a torn record's check, not against an adversary.
 */
#ifndef FNV_H
#define FNV_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t
fnv1a32(const char *p, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 16777619u;
	}
	return h;
}

#endif

/*
 * units.c - see units.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "units.h"

#define TASK_SECONDS_MAX (100ULL * 366 * 86400)

int
units_parse_uint(const char *s, uint64_t max, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	if (s == NULL || *s == 0) {
		*why = "empty number";
		return -1;
	}
	if (*s == '-') {
		*why = "negative value";
		return -1;
	}
	if (*s == '+')
		s++;
	if (!isdigit((unsigned char)*s)) {
		*why = "not a number";
		return -1;
	}
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10) {
			*why = "number too large";
			return -1;
		}
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s != 0) {
		*why = "trailing garbage after number";
		return -1;
	}
	if (v > max) {
		*why = "number too large";
		return -1;
	}
	*out = v;
	return 0;
}

int
units_parse_int(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why)
{
	uint64_t v;
	int neg = 0;

	if (s && *s == '-') {
		neg = 1;
		s++;
		if (*s == '-' || *s == '+') {
			*why = "not a number";
			return -1;
		}
	}
	if (units_parse_uint(s, (uint64_t)INT64_MAX, &v, why) < 0)
		return -1;
	if ((neg && -(int64_t)v < min) || (!neg && (int64_t)v > max)) {
		*why = "number out of range";
		return -1;
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static const struct unit {
	const char *name;
	uint64_t mult;
} size_units[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1ULL << 10 }, { "kib", 1ULL << 10 }, { "kb", 1000ULL },
	{ "m", 1ULL << 20 }, { "mib", 1ULL << 20 }, { "mb", 1000000ULL },
	{ "g", 1ULL << 30 }, { "gib", 1ULL << 30 }, { "gb", 1000000000ULL },
	{ "t", 1ULL << 40 }, { "tib", 1ULL << 40 }, { "tb", 1000000000000ULL },
	{ "p", 1ULL << 50 }, { "pib", 1ULL << 50 },
	{ "pb", 1000000000000000ULL },
};

int
units_parse_size(const char *s, uint64_t *bytes, const char **why)
{
	uint64_t ip = 0, frac = 0, fdiv = 1, mult = 0;
	const char *p = s;
	size_t i;

	if (s == NULL || *s == 0) {
		*why = "empty size";
		return -1;
	}
	if (*p == '-') {
		*why = "negative size";
		return -1;
	}
	if (!isdigit((unsigned char)*p)) {
		*why = "size must start with a number";
		return -1;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (ip > (UINT64_MAX - 9) / 10) {
			*why = "size too large";
			return -1;
		}
		ip = ip * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p)) {
			*why = "bad decimal in size";
			return -1;
		}
		for (; isdigit((unsigned char)*p); p++)
			if (fdiv < 1000000000ULL) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fdiv *= 10;
			}
	}
	if (*p == ' ') {
		/* spool(1): a blank may stand between number and unit */
		while (*p == ' ')
			p++;
		if (*p == 0) {
			*why = "blank after size with no unit";
			return -1;
		}
	}
	for (i = 0; i < sizeof size_units / sizeof size_units[0]; i++)
		if (strcasecmp(p, size_units[i].name) == 0) {
			mult = size_units[i].mult;
			break;
		}
	if (mult == 0) {
		*why = "unknown size unit (use K, M, G, T, KiB..., KB...)";
		return -1;
	}
	if (ip > UINT64_MAX / mult) {
		*why = "size too large";
		return -1;
	}
	if (frac != 0 && mult == 1) {
		*why = "fractional number of bytes";
		return -1;
	}
	/* mult <= 2^50 and fdiv <= 10^9: compute frac*mult/fdiv safely. */
	*bytes = ip * mult + (uint64_t)((long double)frac * mult / fdiv);
	if (*bytes < ip * mult) {
		*why = "size too large";
		return -1;
	}
	return 0;
}

static int
parse_digits(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (x > 1000000000ULL)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*v = x;
	return 0;
}

/* "1h30m", "90m", "2d", "45s" */
static int
parse_suffixed(const char *p, uint64_t *seconds)
{
	uint64_t total = 0, v, m;

	while (*p) {
		if (parse_digits(&p, &v) < 0)
			return -1;
		switch (*p) {
		case 's': m = 1; break;
		case 'm': m = 60; break;
		case 'h': m = 3600; break;
		case 'd': m = 86400; break;
		default: return -1;
		}
		p++;
		if (v * m > UINT64_MAX / 2 - total)
			return -1;	/* overflow */
		total += v * m;
	}
	*seconds = total;
	return 0;
}

int
units_parse_duration(const char *s, uint64_t *seconds, const char **why)
{
	uint64_t f[4], days = 0;
	const char *p = s;
	int n = 0, have_days = 0;

	*why = "bad duration (use SS, MM:SS, HH:MM:SS, D-HH:MM:SS or 90m, 2h)";
	if (s == NULL || *s == 0 || *s == '-')
		return -1;
	if (strpbrk(s, "smhd"))
		return parse_suffixed(s, seconds) < 0 ? -1 : 0;
	if (strchr(s, '-')) {
		if (parse_digits(&p, &days) < 0 || *p != '-')
			return -1;
		p++;
		have_days = 1;
	}
	for (;;) {
		if (n == 3 || parse_digits(&p, &f[n]) < 0)
			return -1;
		n++;
		if (*p == 0)
			break;
		if (*p != ':')
			return -1;
		p++;
	}
	if (have_days) {
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		uint64_t h = f[0], m = n > 1 ? f[1] : 0, sec = n > 2 ? f[2] : 0;

		if (m >= 60 || sec >= 60)
			return -1;
		*seconds = days * 86400 + h * 3600 + m * 60 + sec;
		return 0;
	}
	switch (n) {
	case 1:
		*seconds = f[0];
		return 0;
	case 2:
		if (f[1] >= 60)
			return -1;
		*seconds = f[0] * 60 + f[1];
		return 0;
	default:
		/* dask-jobqueue users write "99:99:99" on SGE: accept it. */
		*seconds = f[0] * 3600 + f[1] * 60 + f[2];
		return 0;
	}
}

int
units_parse_ms(const char *s, uint64_t *ms, const char **why)
{
	uint64_t sec, whole = 0, frac = 0, div = 1;
	const char *p = s;
	size_t n;

	if (s == NULL || *s == 0 || *s == '-') {
		*why = "bad duration";
		return -1;
	}
	n = strlen(s);
	if (n > 2 && strcmp(s + n - 2, "ms") == 0) {
		char tmp[24];

		if (n - 2 >= sizeof tmp) {
			*why = "bad duration";
			return -1;
		}
		memcpy(tmp, s, n - 2);
		tmp[n - 2] = 0;
		return units_parse_uint(tmp, 1000ULL * TASK_SECONDS_MAX, ms, why);
	}
	if (strchr(s, '.')) {
		/* "1.5" or "1.5s" */
		if (parse_digits(&p, &whole) < 0 || *p++ != '.')
			goto bad;
		while (*p >= '0' && *p <= '9') {
			if (div < 1000) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				div *= 10;
			}
			p++;
		}
		if (*p == 's')
			p++;
		if (*p != 0)
			goto bad;
		*ms = whole * 1000 + frac * 1000 / div;
		return 0;
	}
	if (units_parse_duration(s, &sec, why) < 0)
		return -1;
	if (sec > TASK_SECONDS_MAX)
		goto bad;
	*ms = sec * 1000;
	return 0;
bad:
	*why = "bad duration (use 250ms, 1.5s, 30s, 2m, HH:MM:SS)";
	return -1;
}

uint64_t
units_mib_up(uint64_t bytes)
{
	return (bytes >> 20) + ((bytes & ((1u << 20) - 1)) != 0);
}

char *
units_format_size(uint64_t bytes, char *out, size_t size)
{
	static const char *const u[] = { "", "K", "M", "G", "T", "P" };
	int i = 0;

	while (i < 5 && bytes != 0 && (bytes & 1023) == 0) {
		bytes >>= 10;
		i++;
	}
	snprintf(out, size, "%llu%s", (unsigned long long)bytes,
	    i ? u[i] : "");
	return out;
}

char *
units_format_human(uint64_t bytes, char *out, size_t size)
{
	static const char *const u[] = { "B", "K", "M", "G", "T", "P" };
	double v = (double)bytes;
	int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (i == 0 || v >= 100 || v == (double)(uint64_t)v)
		snprintf(out, size, "%.0f%s", v, u[i]);
	else
		snprintf(out, size, "%.1f%s", v, u[i]);
	return out;
}

char *
units_format_duration(uint64_t s, char *out, size_t size)
{
	unsigned long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60,
	    sec = s % 60;

	if (d)
		snprintf(out, size, "%llu-%02llu:%02llu:%02llu", d, h, m, sec);
	else if (h)
		snprintf(out, size, "%llu:%02llu:%02llu", h, m, sec);
	else if (m)
		snprintf(out, size, "%llu:%02llu", m, sec);
	else
		snprintf(out, size, "%llu", sec);
	return out;
}
